"""`grip audit DIR`: shortcuts a model could score with instead of looking, measured on a built item store.

Per question id (one per domain x rung):
- balance: the majority answer's share against 1/k (k = the answer space size where finite: a choice's options, the
  observed support of a count or list) and, for the domain's balance keys, against the cap it declares
  (`Domain.balance_caps`, else the conformance defaults 1/k + 0.10 for choices and 0.35 otherwise), with the
  sampling allowance of grip.conformance; the constant-answer baseline is that share.
- option index: for choice questions, whether the correct option's position in the option list is uniform
  (Pearson's chi-square, as scipy.stats.chisquare computes it).
- nuisance: bias-corrected Cramér's V (Bergsma 2013) between each answer and each *nuisance* feature of the scene.
  Features are the scalar leaves of the scene JSON that every item has (numbers in quantile bins, strings and
  booleans as categories; list elements by index, up to MAX_LIST_INDEX) whose field name says they place, colour or
  size what is drawn (NUISANCE_WORDS: center, x, offset, colour, tint, radius, width, ...). Such a feature is a
  nuisance for a question when replacing it by another item's value leaves that question's answer unchanged on
  every trial item (the domain's own `ladder` recomputed on the edited scene): a position, colour or size the
  answer never reads that still predicts it is a shortcut. (Fields the answer does not read but that restate
  what it does read, such as a generator's target label, are not nuisances, hence the names.)
- text: the same V between a question's template-filled words (the words and word pairs of its text that vary
  across items, each as present/absent) and every *other* rung's answer: a text that gives another answer away is
  a leak.
- blind baseline: accuracy of the best constant answer per question template (its exact text), each item scored by
  the other items of its template (leave one out), against the constant-answer baseline.

Both V tests are taken within level (the mean over levels weighted by their items): what a level fixes by design, a
count range or a wording variant, is no shortcut.

Every finding is one line; `FAIL` lines are above the thresholds below and make `grip audit` exit 1. numpy and
scipy load only when an audit runs: `grip list` imports this module for its command.
"""
from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import click

# Thresholds, set on n = 300 builds of all 34 domains (the largest values a domain reaches without a leak one can
# name: nuisance 0.49, text 0.77, blind gain 0.25, majority excess 0.22) and on planted leaks (0.83 and up).
# A FAIL line is meant to name something worth changing; notes (half the threshold and up) are for a person to judge.
V_NUISANCE = 0.6        # nuisance feature -> answer
V_TEXT = 0.9            # a question's varying words -> another rung's answer: the text all but decides it
BLIND_GAIN = 0.3        # blind baseline above the constant-answer baseline
MAJORITY_EXCESS = 0.45  # majority share above 1/k, for a question the domain declares no cap for
INDEX_P = 1e-9          # chi-square p of the correct option's index (three or more options), FAIL only when the
                        # commonest index also exceeds 1/k + 0.10 (+ allowance): significant and large
MIN_ITEMS = 30          # fewer items: nothing to test
MIN_STRATUM = 20        # a level with fewer items is left out of a within-level V (all levels pooled if none has)
TOP_CATEGORIES = 8      # categories kept per variable (the rest pooled as "other")
QUANTILE_BINS = 5
MAX_LIST_INDEX = 6
PERTURB_TRIALS = 16     # items a feature is swapped on to decide whether an answer reads it
MAX_ROWS = 3_000        # the build's summary audits at most this many leading items (memory flat in n)


@dataclass
class Finding:
    level: str          # "FAIL" or "note"
    qid: str
    kind: str
    message: str

    def line(self, domain: str) -> str:
        return f"{self.level:<4} {domain} {self.qid} [{self.kind}]: {self.message}"


@dataclass
class AuditResult:
    domain: str
    items: int
    findings: list = field(default_factory=list)

    @property
    def failed(self) -> list:
        return [f for f in self.findings if f.level == "FAIL"]


# --- statistics --------------------------------------------------------------------------------------------------

def _codes(values):
    """A sequence as integer codes 0..m-1 (equal values, equal codes)."""
    import numpy as np
    arr = np.asarray(values)
    if arr.dtype.kind not in "biu":
        table: dict = {}
        arr = np.fromiter((table.setdefault(str(v), len(table)) for v in values), np.int64, len(values))
    return np.unique(arr, return_inverse=True)[1].ravel()


def cramers_v(x, y) -> float:
    """Bias-corrected Cramér's V (Bergsma 2013) of two categorical sequences; 0 where either is constant."""
    import numpy as np
    n = len(x)
    if n < 2:
        return 0.0
    xi, yi = _codes(x), _codes(y)
    table = np.zeros((xi.max() + 1, yi.max() + 1))
    np.add.at(table, (xi, yi), 1)
    r, k = table.shape
    if r < 2 or k < 2:
        return 0.0
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    phi2 = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    rc, kc = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    d = min(rc - 1, kc - 1)
    return float(math.sqrt(phi2 / d)) if d > 0 else 0.0


def chisquare_p(counts: list) -> float:
    """p of Pearson's chi-square test that counts are uniform over their cells (scipy.stats.chisquare's value,
    computed with scipy.special, which loads in a fraction of scipy.stats' time)."""
    from scipy.special import chdtrc
    import numpy as np
    f = np.asarray(counts, float)
    e = f.sum() / len(f)
    return float(chdtrc(len(f) - 1, ((f - e) ** 2 / e).sum()))


def stratified_v(x, y, strata) -> float:
    """Cramér's V within each stratum (the item's level), averaged with the strata's sizes as weights: what a
    level fixes by design (a count range, a wording variant) is no association here."""
    import numpy as np
    x, y, strata = _codes(x), _codes(y), np.asarray(strata)
    total = wsum = 0.0
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        if len(idx) < MIN_STRATUM:
            continue
        total += len(idx) * cramers_v(x[idx], y[idx])
        wsum += len(idx)
    return total / wsum if wsum else cramers_v(x, y)


def _top(values: list) -> list:
    keep = {v for v, _ in Counter(values).most_common(TOP_CATEGORIES)}
    return [v if v in keep else "(other)" for v in values]


def _bins(values: list) -> list:
    import numpy as np
    v = np.asarray(values, float)
    edges = np.unique(np.quantile(v, np.linspace(0, 1, QUANTILE_BINS + 1)[1:-1]))
    return [int(b) for b in np.searchsorted(edges, v, side="right")]


def _categorical(values: list) -> list:
    """A variable as categories: numbers with many values in quantile bins, anything else by value (top ones)."""
    nums = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if nums and len(set(values)) > TOP_CATEGORIES:
        return _bins(values)
    return _top([_JSON.encode(v) if not isinstance(v, str) else v for v in values])


# json.dumps(v, sort_keys=True) makes an encoder per call; one made once writes the same text.
_JSON = json.JSONEncoder(sort_keys=True)


def _keys(values: list) -> list[str]:
    """Each value as its JSON text (sort_keys), the text of a repeated string or integer looked up, not rewritten
    (keyed by type as well: 1, 1.0 and True are equal as keys but not as JSON; floats are always written, -0.0 being
    equal to 0.0)."""
    memo: dict = {}
    out = []
    for v in values:
        t = type(v)
        if t is str or t is int or t is bool:
            k = (t, v)
            text = memo.get(k)
            if text is None:
                text = memo[k] = _JSON.encode(v)
        else:
            text = _JSON.encode(v)
        out.append(text)
    return out


# --- reading a store ----------------------------------------------------------------------------------------------

def _answer_value(a: dict):
    """A typed answer JSON as one comparable value (numbers as numbers, so they can be binned)."""
    if a["type"] in ("number", "count", "choice"):
        return a["value"]
    return _JSON.encode(a.get("value", a.get("fields")))


def _leaves(obj, path: str = "", depth: int = 0, out: dict | None = None) -> dict:
    """The scalar leaves of scene JSON `obj` by path (`a.b[2].c`), in the JSON's order: list elements up to
    MAX_LIST_INDEX, in lists nested at most three deep."""
    if out is None:
        out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            _leaves(v, f"{path}.{k}" if path else k, depth, out)
    elif isinstance(obj, list):
        if depth < 3:
            for i, v in enumerate(obj[:MAX_LIST_INDEX]):
                _leaves(v, f"{path}[{i}]", depth + 1, out)
    elif obj is not None:
        out[path] = obj
    return out


def _set_path(obj, path: str, value):
    """A copy of scene JSON `obj` with the leaf at `path` (as `_leaves` names it) replaced."""
    obj = json.loads(json.dumps(obj))
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    cur = obj
    for p in parts[:-1]:
        cur = cur[int(p[1:-1])] if p.startswith("[") else cur[p]
    last = parts[-1]
    if last.startswith("["):
        cur[int(last[1:-1])] = value
    else:
        cur[last] = value
    return obj


TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.'-][A-Za-z0-9]+)*")
# Names of scene fields that place, colour or size what is drawn (a word of the field's name, split at "_").
NUISANCE_WORDS = frozenset({
    "x", "y", "cx", "cy", "xy", "center", "centre", "centers", "centres", "pos", "position", "positions", "offset",
    "offsets", "origin", "shift", "anchor", "loc", "location", "colour", "color", "colours", "colors", "palette",
    "tint", "hue", "fill", "shade", "ink", "size", "sizes", "radius", "radii", "width", "widths", "height",
    "heights"})


def is_nuisance_name(path: str) -> bool:
    """Whether a scene leaf (`centers[2][0]`, `face_tint`) is named for a canvas position, a colour or a size."""
    names = re.sub(r"\[\d+\]", "", path).split(".")
    return any(w in NUISANCE_WORDS for name in names for w in name.lower().split("_"))


def _words(text: str) -> set:
    """A text's words and word pairs (a pair tells "on the left" from "left or right")."""
    t = TOKEN.findall(text)
    return set(t) | {f"{a} {b}" for a, b in zip(t, t[1:])}


def read_store(domain_dir: Path, limit: int | None = None, validate: bool = True) -> list[dict]:
    """The rows of a store, at most `limit` of them: validated (grip.manifest.load_store), or read as they are
    (`validate=False`, for a store the caller has just written)."""
    from grip.manifest import load_store
    if validate:
        rows = load_store(domain_dir)
        return rows if limit is None else rows[:limit]
    rows = []
    with open(Path(domain_dir) / "items.jsonl", "rb") as f:
        for line in f:
            if limit is not None and len(rows) >= limit:
                break
            rows.append(json.loads(line))
    return rows


# --- the audit ----------------------------------------------------------------------------------------------------

def _nuisance_features(dom, rows: list[dict], leaves: list[dict], questions: list[str]) -> dict[str, set]:
    """For each scene leaf path: the question ids whose answer it never changed when swapped (see module doc)."""
    paths = Counter(p for lv in leaves for p in lv)
    out: dict[str, set] = {}
    n = len(rows)
    for path, c in paths.items():
        if c < n or not is_nuisance_name(path):   # a leaf some rows lack stands for a list's length
            continue
        vals = _keys([lv[path] for lv in leaves])   # every row has the path; a scalar's JSON has no keys to sort
        if len(set(vals)) < 2:
            continue
        changed, tried = set(), 0
        for i, r in enumerate(rows[:PERTURB_TRIALS * 2]):
            j = next((j for j in range(i + 1, i + n) if vals[j % n] not in (vals[i], "null")), None)
            if j is None:
                continue
            try:
                scene = dom.scene_from_json(_set_path(r["scene"], path, json.loads(vals[j % n])))
                lad = dom.ladder(scene)
            except Exception:   # an edited scene the domain refuses: this trial says nothing
                continue
            tried += 1
            for q_new, q_old in zip(lad.questions, r["questions"]):
                if json.dumps(q_new.answer.to_json(), sort_keys=True) != json.dumps(q_old["answer"], sort_keys=True):
                    changed.add(q_old["id"])
            if tried >= PERTURB_TRIALS:
                break
        if tried >= PERTURB_TRIALS // 2:
            out[path] = {q for q in questions if q not in changed}
    return out


def audit_rows(domain: str, rows: list[dict], dom=None) -> AuditResult:
    """Audit one domain's rows (index order). `dom` (the registered Domain) enables the nuisance test."""
    res = AuditResult(domain, len(rows))
    if len(rows) < MIN_ITEMS:
        res.findings.append(Finding("note", "-", "size", f"{len(rows)} items; the audit needs at least {MIN_ITEMS}"))
        return res
    n = len(rows)
    qids = [q["id"] for q in rows[0]["questions"]]
    by_pos = {}
    for r in rows:
        for q in r["questions"]:
            by_pos.setdefault(q["position"], []).append(q)
    slack = 2.5 * math.sqrt(0.25 / n)
    caps = dict(getattr(dom, "balance_caps", ()) or ())
    keys = set(getattr(dom, "balance_keys", ()) or ())
    answers: dict[int, list] = {}
    for pos, qs in sorted(by_pos.items()):
        qid = "/".join(dict.fromkeys(q["id"] for q in qs))
        if len(qs) != n:
            res.findings.append(Finding("note", qid, "size", f"asked on {len(qs)} of {n} items"))
            continue
        vals = [_answer_value(q["answer"]) for q in qs]
        answers[pos] = _codes(_categorical(vals))   # coded once: every V below reads them (the same codes again)
        texts = _keys(vals)
        _balance(res, qid, qs, texts, n, slack, caps, keys)
        _blind(res, qid, qs, texts)
    import numpy as np
    levels = np.asarray([r["level"] for r in rows])
    _text_leaks(res, by_pos, answers, n, levels)
    if dom is not None:
        leaves = [_leaves(r["scene"]) for r in rows]
        feats = _nuisance_features(dom, rows, leaves, qids)
        for path, irrelevant in feats.items():
            x = _categorical([lv.get(path) for lv in leaves])
            for pos, qs in sorted(by_pos.items()):
                if pos in answers and qs[0]["id"] in irrelevant:
                    v = stratified_v(x, answers[pos], levels)
                    if v > V_NUISANCE / 2:
                        res.findings.append(Finding("FAIL" if v > V_NUISANCE else "note", qs[0]["id"], "nuisance",
                                                    f"scene field {path}, which the answer never reads, predicts "
                                                    f"it: V = {v:.2f} (threshold {V_NUISANCE})"))
    return res


def _balance(res, qid, qs, texts, n, slack, caps, keys) -> None:
    """`texts`: each item's answer as JSON (`_keys`)."""
    a0 = qs[0]["answer"]
    counts = Counter(texts)
    top, hits = counts.most_common(1)[0]
    share = hits / n
    if a0["type"] == "choice":
        k = Counter(len(q["answer"]["options"]) for q in qs).most_common(1)[0][0]
    elif a0["type"] in ("count", "ordered"):
        k = len(counts)
    else:
        k = None
    if qid in keys or qid in caps:
        cap = caps.get(qid, 1 / k + 0.10 if a0["type"] == "choice" else 0.35)
        level = "FAIL" if share > cap + slack else "note"
        res.findings.append(Finding(level, qid, "balance", f"majority {top} has share {share:.2f} (declared cap "
                                                           f"{cap:.2f} + {slack:.2f} sampling allowance)"))
    elif k:
        level = "FAIL" if share > 1 / k + MAJORITY_EXCESS else "note"
        res.findings.append(Finding(level, qid, "balance", f"majority {top} has share {share:.2f}, 1/k = "
                                                           f"{1 / k:.2f} (k = {k})"))
    if a0["type"] == "choice":
        ks = {len(q["answer"]["options"]) for q in qs}
        if len(ks) == 1 and (k := ks.pop()) >= 2:
            idx = Counter(q["answer"]["options"].index(q["answer"]["value"]) for q in qs)
            p = chisquare_p([idx.get(i, 0) for i in range(k)])
            top_share = max(idx.values()) / len(qs)
            level = "FAIL" if p < INDEX_P and k >= 3 and top_share > 1 / k + 0.10 + slack else "note"
            if p < 0.01:
                res.findings.append(Finding(level, qid, "option_index", f"the correct option's index is not uniform "
                                                                         f"over {k} positions (chi-square p = {p:.1e}, "
                                                                         f"the commonest at {top_share:.2f})"))


def _blind(res, qid, qs, keys) -> None:
    """Best constant per template (a question's exact text), each item predicted from the other items of its
    template (the overall mode for a text no other item has), against the best constant overall. `keys`: each
    item's answer as JSON (`_keys`)."""
    n = len(keys)
    const = Counter(keys).most_common(1)[0][1] / n
    groups: dict[str, Counter] = {}
    for q, k in zip(qs, keys):
        groups.setdefault(q["text"], Counter())[k] += 1
    if len(groups) < 2:
        return
    overall = Counter(keys)
    best_overall = max(overall.values())
    tops = {}   # per template: its item count and its two largest answer counts
    for text, g in groups.items():
        c = sorted(g.values(), reverse=True) + [0]
        tops[text] = (sum(c), c[0], c[1])
    hits = 0
    for q, k in zip(qs, keys):
        # the item's key is predicted from the other items of its template (the overall counts when it has none)
        total, first, second = tops[q["text"]]
        if total > 1:
            c = groups[q["text"]][k] - 1                    # its own count without the item
            other = second if c + 1 == first else first     # the largest count of another key
            hits += c >= other and c > 0                    # ties count as a hit: an upper bound
        else:
            hits += overall[k] == best_overall
    blind = hits / n
    level = "FAIL" if blind - const > BLIND_GAIN else "note"
    if blind - const > 0.05:
        res.findings.append(Finding(level, qid, "blind", f"best constant per template scores {blind:.2f} "
                                                         f"(constant answer {const:.2f}) over {len(groups)} templates"))


def _text_leaks(res, by_pos, answers, n, levels) -> None:
    """Each question's varying words (tokens in 5-95% of its texts; tokens that always occur together are one
    feature) against every other rung's answer, within level."""
    for pos, qs in sorted(by_pos.items()):
        if len(qs) != n:
            continue
        items_of: dict[str, list[int]] = {}   # each distinct text (texts repeat) -> the items asking it
        for i, q in enumerate(qs):
            items_of.setdefault(q["text"], []).append(i)
        toks = {text: _words(text) for text in items_of}
        support = Counter()
        for text, ix in items_of.items():
            for t in toks[text]:
                support[t] += len(ix)
        varying = {t for t, c in support.items() if 0.05 * n <= c <= 0.95 * n}
        where: dict[str, list[int]] = {t: [] for t in varying}   # token -> the items whose text has it
        for text, ix in items_of.items():
            for t in toks[text] & varying:
                where[t].extend(ix)
        patterns: dict[tuple, list] = {}       # the items a token occurs in, in order -> its tokens (one feature)
        for t in sorted(varying, key=lambda t: (-support[t], t)):   # a fixed order, whatever the hash
            patterns.setdefault(tuple(sorted(where[t])), []).append(t)
        import numpy as np
        features = []
        for ix, ws in list(patterns.items())[:60]:
            x = np.zeros(n, dtype=bool)
            x[list(ix)] = True
            features.append((x, ws))
        for other, ans in answers.items():
            if other == pos:
                continue
            best, words = 0.0, []
            for x, ws in features:
                v = stratified_v(x, ans, levels)
                if v > best:
                    best, words = v, ws
            if best > V_TEXT / 2:
                said = ", ".join(repr(w) for w in words[:4]) + (" ..." if len(words) > 4 else "")
                level = "FAIL" if best > V_TEXT else "note"
                verb = "give away" if level == "FAIL" else "are associated with"
                res.findings.append(Finding(level, qs[0]["id"], "text",
                                            f"the words {said} of its text {verb} rung {other} "
                                            f"({by_pos[other][0]['id']}): V = {best:.2f} (threshold {V_TEXT})"))


def audit_store(domain_dir: Path, limit: int | None = None, validate: bool = True) -> AuditResult:
    """Audit one `<out>/<domain>/` store (the registered domain, where there is one, for the nuisance test)."""
    from grip import domains as registry
    rows = read_store(domain_dir, limit, validate)
    domain = rows[0]["domain"] if rows else Path(domain_dir).name
    try:
        dom = registry.get(domain)
    except registry.UnknownDomain:
        dom = None
    return audit_rows(domain, rows, dom)


def store_dirs(path: Path) -> list[Path]:
    """`path` itself when it is a store, else the stores directly inside it."""
    from grip import GripError
    path = Path(path)
    if (path / "items.jsonl").is_file():
        return [path]
    found = sorted(p for p in path.iterdir() if (p / "items.jsonl").is_file()) if path.is_dir() else []
    if not found:
        raise GripError(f"{path}: no item store (no items.jsonl in it or in a folder inside it)")
    return found


def build_summary(domain_dir: Path) -> str:
    """The line `grip build` prints at its end: the audit of the first MAX_ROWS items of the store just built."""
    res = audit_store(domain_dir, MAX_ROWS, validate=False)
    bad = res.failed
    notes = len(res.findings) - len(bad)
    if not bad:
        return f"audit: no finding above the thresholds over {res.items} items ({notes} notes: grip audit --all)"
    first = bad[0]
    return (f"audit: {len(bad)} finding(s) above the thresholds over {res.items} items, first {first.qid} "
            f"[{first.kind}]; `grip audit {domain_dir}` lists them")


class SummariesBeside:
    """A release build's closing audits (`build_summary` of each domain's store), each run in a process of its own
    while the next domain builds, and given back in domain order: `submit(dir)` once a store is built (it is not
    written again), `take()` for the line of the one submitted last (waits for it; None if there is none), `close()`
    at the end. Where the side process cannot run, the audit runs here, as before."""

    def __init__(self, beside: bool = True):
        self._beside = beside  # False: every audit at take(), in this process
        self._pool = None
        self._pending = None   # (store folder, future or None)

    def submit(self, domain_dir: Path) -> None:
        future = None
        if self._beside:
            try:
                if self._pool is None:
                    from grip.executors import side_process
                    self._pool = side_process()
                future = self._pool.submit(build_summary, domain_dir)
            except (OSError, RuntimeError):   # no process to be had (or a broken pool): audit at take()
                self.close()
        self._pending = (domain_dir, future)

    def take(self) -> str | None:
        if self._pending is None:
            return None
        domain_dir, future = self._pending
        self._pending = None
        if future is not None:
            from concurrent.futures.process import BrokenProcessPool
            try:
                return future.result()
            except BrokenProcessPool:   # the side process died (killed, out of memory): audit here instead
                self.close()
        return build_summary(domain_dir)

    def close(self) -> None:
        """Stop the side process (an audit still running there is dropped)."""
        if self._pool is not None:
            from grip.executors import stop_pool
            stop_pool(self._pool)
            self._pool = None


@click.command("audit")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--all", "show_all", is_flag=True, help="Also the notes below the thresholds.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Audit only the first N items of each store.")
def audit_cmd(path, show_all, limit):
    """Shortcut audit of item stores (a `grip build` folder or one domain's store): one line per finding; exit 1
    when a finding is above the thresholds (see grip/audit.py)."""
    from grip.cli import friendly
    friendly(_audit)(path, show_all, limit)


def _audit(path, show_all, limit):
    failed = 0
    for d in store_dirs(path):
        res = audit_store(d, limit)
        failed += bool(res.failed)
        click.echo(f"{res.domain}: {res.items} items, {len(res.failed)} above thresholds")
        for f in res.findings:
            if show_all or f.level == "FAIL":
                click.echo("  " + f.line(res.domain))
    sys.exit(1 if failed else 0)
