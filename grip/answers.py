"""Typed answers: the one place that says what an answer is, how a model must write it, how it is read back
and how it is compared.

Every type offers `instruction()` (verbatim format text appended to prompts), `parse(response)` (reads the last
`ANSWER:` line; returns a value or an `Unparsed`), `parse_value(text)` (the same on a bare value), `matches(parsed)`
(comparison honouring the tolerance), `format_value(value)` / `reference_text()` (the canonical way to write a
value), `to_json()` / `answer_from_json()`, `plausible_wrong(rng)` (a near-miss wrong value of the same type),
`in_space()` (the stored value lies in its declared answer space) and `key()` (a hashable canonical value used for
answer distributions and constant-answer baselines).
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "Answer", "Count", "Number", "Choice", "Ordered", "Record", "Unparsed", "answer_from_json",
    "extract_answer_line", "normalise",
]


@dataclass(frozen=True)
class Unparsed:
    """A response we could not read. Counted as its own outcome, never as wrong or right."""
    reason: str

    def __bool__(self) -> bool:  # so `if parsed:` reads naturally
        return False


_ANSWER_LINE = re.compile(r"^[\s>*_`#-]*answer[\s*_`]*[:：]\s*(.*?)\s*$", re.IGNORECASE)


def extract_answer_line(response: str) -> str | Unparsed:
    """The text after the last line that starts with `ANSWER:` (markdown emphasis around the keyword allowed). The
    value must be on that line: an empty `ANSWER:` line is unparsed, never the line below it (say, the confidence)."""
    if not isinstance(response, str):
        return Unparsed("response is not text")
    hits = [m.group(1) for m in map(_ANSWER_LINE.match, response.splitlines()) if m]
    if not hits:
        return Unparsed("no ANSWER: line")
    text = hits[-1].strip().strip("*_`").strip()
    if not text:
        return Unparsed("empty ANSWER: line")
    return text


# Characters read as a minus sign: the hyphen-minus, U+2212 and the dashes people and models type for it (hyphen,
# non-breaking hyphen, figure dash, en and em dash, horizontal bar, modifier minus, heavy minus, small and
# full-width hyphen-minus). Any other dash (Unicode category Pd) next to a number makes its sign ambiguous.
MINUS_SIGNS = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u02d7\u2796\ufe58\ufe63\uff0d"
PLUS_SIGNS = "+\u2795\ufe62\uff0b"
_TO_ASCII_SIGN = str.maketrans({**{c: "-" for c in MINUS_SIGNS}, **{c: "+" for c in PLUS_SIGNS}})


def normalise(text: str) -> str:
    """Case, whitespace, dashes and surrounding punctuation folded away."""
    t = str(text).strip().lower().translate(_TO_ASCII_SIGN)
    t = re.sub(r"\s+", " ", t)
    t = t.strip(" .;:!\"'`*_()[]")
    return t


# An unsigned decimal (thousands commas allowed, exponent allowed); its sign is read from what precedes it.
_NUMBER = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?")
_SIGN_WORDS = ("minus", "negative")
_NEGATION = re.compile(r"(?<![^\W\d_])(?:minus|negative|below zero)(?![^\W\d_])", re.IGNORECASE)
_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}


def _is_dash(ch: str) -> bool:
    return unicodedata.category(ch) == "Pd" or ch in "\u2212\u2796"


def _is_letter(ch: str) -> bool:
    return ch.isalpha() or ch == "_"


def _signs_before(before: str) -> tuple[list[str], int]:
    """The signs written right before a number (`-`, `+`, `minus`, `negative`, spaces between), read backwards
    from its first digit, and where they start. A plain scan, not a regex search: a long run of signs must not
    cost quadratic time."""
    tokens: list[str] = []
    start = len(before)
    while True:
        j = start
        while j > 0 and before[j - 1].isspace():
            j -= 1
        if j > 0 and before[j - 1] in "+-":
            tokens.append(before[j - 1])
            start = j - 1
            continue
        word = next((w for w in _SIGN_WORDS if before[max(0, j - len(w)):j].lower() == w
                     and (j - len(w) == 0 or not _is_letter(before[j - len(w) - 1]))), None)
        if word is None or (j < len(before) and _is_letter(before[j])):
            return tokens, start
        tokens.append(word)
        start = j - len(word)


def _unit_pattern(unit: str | None) -> re.Pattern | None:
    """The stated unit as written in an answer: case and spacing free, `×` also typed as x or *, and not inside a
    word (so the unit `m` is not cut out of `minus`)."""
    u = (unit or "").strip()
    if not u:
        return None
    body = []
    for ch in u:
        if ch.isspace():
            if body and body[-1] != r"\s*":
                body.append(r"\s*")
        elif ch in "\u00d7\u2715\u2a2f":
            body.append(r"[\u00d7\u2715\u2a2fxX*]\s*")
        else:
            body.append(re.escape(ch))
    return re.compile(r"(?<![^\W\d_])" + "".join(body) + r"(?![^\W\d_])", re.IGNORECASE)


def read_number(text: str, unit: str | None = None) -> float | Unparsed:
    """The one number in `text`, with its sign, after the stated `unit` is cut out (`8.25 ×1000 rpm` is 8.25, not
    two numbers). Every minus form (`-`, U+2212, the dashes, `minus`, `negative`) makes it negative; a sign that
    could be read two ways (`--5`, `±5`, `minus -5`, `5-`, a sign word away from the number, a dash of another
    kind) gives Unparsed: a sign is never dropped or flipped by a guess."""
    t = str(text)
    pat = _unit_pattern(unit)
    if pat is not None:
        t = pat.sub(" ", t)
    t = t.translate(_TO_ASCII_SIGN)
    found = list(_NUMBER.finditer(t))
    if len(found) != 1:
        return Unparsed("expected exactly one number")
    m = found[0]
    if "\u00b1" in t or "\u2213" in t:
        return Unparsed("ambiguous sign (±)")
    before = t[:m.start()]
    tokens, start = _signs_before(before)
    if len(tokens) > 1:
        return Unparsed("ambiguous sign (more than one sign before the number)")
    rest = before[:start]
    lead = rest.rstrip()
    if lead and _is_dash(lead[-1]):
        return Unparsed("ambiguous sign (a dash of another kind before the number)")
    if tokens == ["-"] and rest and (rest[-1].isalnum() or rest[-1] == "_"):
        return Unparsed("ambiguous sign (a hyphen joined to a word)")
    after = t[m.end():]
    if after[:1] and _is_dash(after[0]) and not after[1:2].isalnum():
        return Unparsed("ambiguous sign (a dash after the number)")
    negative = bool(tokens) and tokens[0] != "+"
    x = float(m.group(0).replace(",", ""))
    if not math.isfinite(x):
        return Unparsed("not a finite number")
    # `5 below zero`, `5 (negative)`: the sign may have been meant but is not where it is read; zero has none.
    if not negative and x != 0 and _NEGATION.search(rest + " " + after):
        return Unparsed("ambiguous sign (a negation away from the number)")
    return -x if negative else x


class Answer:
    """Base of the typed answers. Subclasses are frozen dataclasses with a `value` field."""
    kind: ClassVar[str] = ""

    def instruction(self) -> str:
        raise NotImplementedError

    def parse_value(self, text: str) -> Any:
        raise NotImplementedError

    def parse(self, response: str) -> Any:
        line = extract_answer_line(response)
        if isinstance(line, Unparsed):
            return line
        return self.parse_value(line)

    def matches(self, parsed: Any) -> bool:
        raise NotImplementedError

    def format_value(self, value: Any) -> str:
        return str(value)

    def reference_text(self) -> str:
        return self.format_value(self.value)  # type: ignore[attr-defined]

    def in_space(self) -> bool:
        raise NotImplementedError

    def key(self) -> Any:
        return self.value  # type: ignore[attr-defined]

    def plausible_wrong(self, rng: np.random.Generator) -> Any:
        raise NotImplementedError

    def to_json(self) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class Count(Answer):
    """A whole number, compared exactly. `low`/`high` bound the declared space (inclusive)."""
    value: int
    low: int = 0
    high: int | None = None
    kind: ClassVar[str] = "count"

    def instruction(self) -> str:
        return "Answer with a whole number."

    def parse_value(self, text: str) -> int | Unparsed:
        t = normalise(text)
        if t in _WORDS:
            return _WORDS[t]
        x = read_number(text)
        if isinstance(x, Unparsed):
            return x
        if x != int(x):
            return Unparsed("not a whole number")
        return int(x)

    def matches(self, parsed: Any) -> bool:
        return not isinstance(parsed, Unparsed) and isinstance(parsed, int) and parsed == self.value

    def in_space(self) -> bool:
        return (isinstance(self.value, int) and not isinstance(self.value, bool) and self.value >= self.low
                and (self.high is None or self.value <= self.high))

    def plausible_wrong(self, rng: np.random.Generator) -> int:
        cands = [self.value + d for d in (-2, -1, 1, 2)
                 if self.value + d >= self.low and (self.high is None or self.value + d <= self.high)]
        if not cands:
            cands = [self.value + 1]
        return int(cands[int(rng.integers(len(cands)))])

    def to_json(self) -> dict:
        return {"type": self.kind, "value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Number(Answer):
    """A real number with a tolerance. `tol_kind` is "abs" (same unit as the value) or "rel" (a fraction of the
    value). `period` makes the difference circular (angles, bearings). `decimals` is how the value is written."""
    value: float
    tol: float
    unit: str
    decimals: int = 0
    tol_kind: str = "abs"
    period: float | None = None
    low: float | None = None
    high: float | None = None
    kind: ClassVar[str] = "number"

    def tol_abs(self) -> float:
        return self.tol * abs(self.value) if self.tol_kind == "rel" else self.tol

    def _tol_text(self) -> str:
        if self.tol == 0:
            return "only the exact value is accepted"
        if self.tol_kind == "rel":
            return f"within {self.tol * 100:g}% is accepted"
        return f"±{self.tol:g} {self.unit} is accepted"

    def instruction(self) -> str:
        rounding = "a whole number" if self.decimals == 0 else f"{self.decimals} decimal place" + (
            "s" if self.decimals > 1 else "")
        return f"Answer with a number in {self.unit}, rounded to {rounding}; {self._tol_text()}."

    def parse_value(self, text: str) -> float | Unparsed:
        return read_number(text, self.unit)

    def difference(self, x: float) -> float:
        d = abs(float(x) - float(self.value))
        if self.period:
            d = d % self.period
            d = min(d, self.period - d)
        return d

    def matches(self, parsed: Any) -> bool:
        if isinstance(parsed, Unparsed) or isinstance(parsed, bool) or not isinstance(parsed, (int, float)):
            return False
        # A hair of slack so that a value printed at the stated rounding at the very edge still counts.
        return self.difference(parsed) <= self.tol_abs() * (1 + 1e-9) + 1e-9

    def format_value(self, value: Any) -> str:
        return f"{float(value):.{self.decimals}f}"

    def in_space(self) -> bool:
        v = self.value
        return (isinstance(v, (int, float)) and math.isfinite(v) and self.tol >= 0
                and (self.low is None or v >= self.low) and (self.high is None or v <= self.high)
                and (self.period is None or 0 <= v < self.period))

    def key(self) -> float:
        return round(float(self.value), self.decimals)

    def plausible_wrong(self, rng: np.random.Generator) -> float:
        step = max(self.tol_abs(), 10.0 ** -self.decimals)
        for _ in range(16):
            x = self.value + float(rng.choice([-1, 1])) * step * float(rng.uniform(2.0, 4.0))
            if self.period:
                x %= self.period
            if self.low is not None and x < self.low:
                x = self.value + abs(x - self.value)
            x = round(x, self.decimals)
            if not self.matches(x):
                return x
        return round(self.value + 10 * step, self.decimals)

    def to_json(self) -> dict:
        return {"type": self.kind, "value": self.value, "tol": self.tol, "tol_kind": self.tol_kind,
                "unit": self.unit, "decimals": self.decimals, "period": self.period, "low": self.low,
                "high": self.high}


def _fold(text: str) -> str:
    return re.sub(r"[\s-]+", "", text)


@dataclass(frozen=True)
class Choice(Answer):
    """One option from a fixed list. `aliases` is a small reviewed synonym table: (alias, option) pairs, fixed per
    question in code and never grown from model outputs."""
    value: str
    options: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...] = ()
    kind: ClassVar[str] = "choice"

    def instruction(self) -> str:
        return "Answer with one of: " + ", ".join(self.options) + "."

    def parse_value(self, text: str) -> str | Unparsed:
        t = normalise(text)
        table = {normalise(o): o for o in self.options}
        table.update({normalise(a): o for a, o in self.aliases})
        if t in table:
            return table[t]
        # `counter clockwise`, `counter-clockwise` and `counterclockwise` are one word written three ways: compare
        # with spaces and hyphens left out, unless that would make two options (or aliases of two) the same.
        folded: dict[str, set[str]] = {}
        for k, o in table.items():
            folded.setdefault(_fold(k), set()).add(o)
        hit = folded.get(_fold(t), set())
        if len(hit) == 1:
            return next(iter(hit))
        return Unparsed("not one of the options")

    def matches(self, parsed: Any) -> bool:
        return isinstance(parsed, str) and normalise(parsed) == normalise(self.value)

    def in_space(self) -> bool:
        return self.value in self.options and len(set(self.options)) == len(self.options)

    def plausible_wrong(self, rng: np.random.Generator) -> str:
        others = [o for o in self.options if o != self.value]
        return others[int(rng.integers(len(others)))]

    def to_json(self) -> dict:
        return {"type": self.kind, "value": self.value, "options": list(self.options),
                "aliases": [list(p) for p in self.aliases]}


@dataclass(frozen=True)
class Ordered(Answer):
    """A list of items written comma-separated. With `as_set`, the list is asked in a stated canonical order
    (`order`, e.g. "alphabetical order") and compared as a set; otherwise element-wise. An empty list is written
    `empty` ("none"). `options` is the universe items come from (None: any text)."""
    value: tuple[str, ...]
    order: str
    options: tuple[str, ...] | None = None
    as_set: bool = False
    empty: str = "none"
    kind: ClassVar[str] = "ordered"

    def instruction(self) -> str:
        return (f"Answer with a comma-separated list in {self.order}, or '{self.empty}' if there are none.")

    def parse_value(self, text: str) -> tuple[str, ...] | Unparsed:
        t = normalise(text)
        if t in (normalise(self.empty), "empty") or re.fullmatch(r"[\s*_`]*\[\s*\][\s*_`.]*", str(text)):
            return ()
        parts = [normalise(p) for p in re.split(r"[,;]|\band\b", t)]
        parts = [p for p in parts if p]
        if not parts:
            return Unparsed("empty list")
        if self.options is not None:
            table = {normalise(o): o for o in self.options}
            if any(p not in table for p in parts):
                return Unparsed("item outside the options")
            return tuple(table[p] for p in parts)
        return tuple(parts)

    def matches(self, parsed: Any) -> bool:
        if isinstance(parsed, Unparsed) or not isinstance(parsed, (tuple, list)):
            return False
        got = [normalise(p) for p in parsed]
        want = [normalise(v) for v in self.value]
        if self.as_set:
            return len(got) == len(set(got)) and set(got) == set(want)
        return got == want

    def format_value(self, value: Any) -> str:
        return ", ".join(value) if len(value) else self.empty

    def in_space(self) -> bool:
        ok = isinstance(self.value, tuple) and len(set(self.value)) == len(self.value)
        if self.options is not None:
            ok = ok and all(v in self.options for v in self.value)
            if self.as_set:  # canonical order = the order of `options`
                idx = [self.options.index(v) for v in self.value]
                ok = ok and idx == sorted(idx)
        return ok

    def key(self) -> tuple:
        return tuple(self.value)

    def plausible_wrong(self, rng: np.random.Generator) -> tuple[str, ...]:
        if self.options:
            pick = self.options[int(rng.integers(len(self.options)))]
            items = set(self.value) ^ {pick}
            return tuple(o for o in self.options if o in items)
        if len(self.value) > 1:
            return tuple(self.value[1:])
        return tuple(self.value) + ("x",)

    def to_json(self) -> dict:
        return {"type": self.kind, "value": list(self.value), "order": self.order,
                "options": None if self.options is None else list(self.options), "as_set": self.as_set,
                "empty": self.empty}


@dataclass(frozen=True)
class Record(Answer):
    """Named fields, each a typed answer, written `name=value; name=value`. Correct only if every field is; a missing
    field is wrong, not unparsed. The `value` is the tuple of (name, field answer) pairs."""
    value: tuple[tuple[str, Answer], ...]
    kind: ClassVar[str] = "record"
    _sep: ClassVar[str] = "; "

    @property
    def fields(self) -> dict[str, Answer]:
        return dict(self.value)

    def instruction(self) -> str:
        shape = "; ".join(f"{n}=<{n}>" for n, _ in self.value)
        parts = " ".join(f"For {n}: {a.instruction()[0].lower()}{a.instruction()[1:]}" for n, a in self.value)
        return f"Answer in the form `{shape}`. {parts}"

    def parse_value(self, text: str) -> dict | Unparsed:
        """`name=value` pairs separated by `;`, `,` or new lines (`name: value` too), or a JSON object. A field
        named twice is unparsed (neither value is preferred); a field whose value does not read is left out (so
        the record is wrong, not unparsed); names that are not fields are ignored."""
        fields = self.fields
        pairs = _json_pairs(text)
        if pairs is None:
            starts = list(_FIELD.finditer(text))
            pairs = [(m.group(1), text[m.end():nxt.start() if nxt else len(text)])
                     for m, nxt in zip(starts, starts[1:] + [None])]
        got: dict[str, Any] = {}
        named: set[str] = set()
        for raw_name, raw_value in pairs:
            name = normalise(raw_name).replace(" ", "_")
            if name not in fields:
                continue
            if name in named:
                return Unparsed(f"field {name} given twice")
            named.add(name)
            if raw_value is None:
                continue
            v = fields[name].parse_value(raw_value.strip().rstrip(",;}").strip())
            if not isinstance(v, Unparsed):
                got[name] = v
        if not got:
            return Unparsed("no name=value field that reads")
        return got

    def matches(self, parsed: Any) -> bool:
        if not isinstance(parsed, dict):
            return False
        return all(n in parsed and a.matches(parsed[n]) for n, a in self.value)

    def field_matches(self, parsed: Any) -> dict[str, bool]:
        p = parsed if isinstance(parsed, dict) else {}
        return {n: (n in p and a.matches(p[n])) for n, a in self.value}

    def format_value(self, value: Any) -> str:
        fields = self.fields
        return self._sep.join(f"{n}={fields[n].format_value(v)}" for n, v in value.items())

    def reference_text(self) -> str:
        return self._sep.join(f"{n}={a.reference_text()}" for n, a in self.value)

    def in_space(self) -> bool:
        names = [n for n, _ in self.value]
        return (1 <= len(names) and len(set(names)) == len(names)
                and all(isinstance(a, Answer) and not isinstance(a, Record) and a.in_space() for _, a in self.value))

    def key(self) -> tuple:
        return tuple((n, a.key()) for n, a in self.value)

    def reference_value(self) -> dict:
        return {n: a.value for n, a in self.value}

    def plausible_wrong(self, rng: np.random.Generator) -> dict:
        out = self.reference_value()
        name, ans = self.value[int(rng.integers(len(self.value)))]
        out[name] = ans.plausible_wrong(rng)
        return out

    def to_json(self) -> dict:
        return {"type": self.kind, "fields": [[n, a.to_json()] for n, a in self.value]}


# A field starts a record, or follows a separator: `name=` / `name:` (emphasis or quotes around the name allowed).
_FIELD = re.compile(r"(?:^|(?<=[;,\n{]))[^\S\n]*[*_`\"']*([A-Za-z_][A-Za-z0-9_ ]*?)[*_`\"']*[^\S\n]*[=:]")


def _json_pairs(text: str) -> list[tuple[str, str | None]] | None:
    """(name, value text) pairs of a record written as a JSON object, in order, repeats kept; None if the text is
    not one. A value that is not text, a number or a list of those is None (the field does not read)."""
    t = text.strip().strip("`").strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    objects: list[list[tuple[str, str | None]]] = []

    def keep(items):   # called innermost first: the record is the last (outermost) object
        objects.append([(str(k), _json_value_text(v)) for k, v in items])
        return {}
    try:
        json.loads(t, object_pairs_hook=keep)
    except (ValueError, RecursionError):
        return None
    return objects[-1] if objects else None


def _json_value_text(v) -> str | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (str, int, float)):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return "[]" if not v else ", ".join(map(str, v))
    return None


def answer_from_json(d: dict) -> Answer:
    t = d.get("type")
    if t == "count":
        return Count(int(d["value"]), low=d.get("low", 0), high=d.get("high"))
    if t == "number":
        return Number(d["value"], d["tol"], d["unit"], decimals=d.get("decimals", 0),
                      tol_kind=d.get("tol_kind", "abs"), period=d.get("period"), low=d.get("low"),
                      high=d.get("high"))
    if t == "choice":
        return Choice(d["value"], tuple(d["options"]), tuple(tuple(p) for p in d.get("aliases", ())))
    if t == "ordered":
        opts = d.get("options")
        return Ordered(tuple(d["value"]), d["order"], None if opts is None else tuple(opts),
                       as_set=d.get("as_set", False), empty=d.get("empty", "none"))
    if t == "record":
        return Record(tuple((n, answer_from_json(a)) for n, a in d["fields"]))
    raise ValueError(f"unknown answer type {t!r}")
