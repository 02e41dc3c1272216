"""Scoring: offline, deterministic and re-runnable over the response store. Each stored response gets one outcome:

    correct    the last `ANSWER:` line parses as the question's answer type and the typed comparator accepts it
    wrong      it parses, and the comparator rejects it
    unparsed   no `ANSWER:` line, or one that does not read as the answer type (its own outcome, never "wrong")
    failed     the request never produced an answer (a typed failure record of the runner): not the model's fault,
               never counted as wrong

Ground truth is read here (and in stats) only: from the item store, by (item_id, question_id).
"""
from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from grip import GripError
from grip.answers import Answer, Record, Unparsed, answer_from_json
from grip.eval.prompts import read_confidence

OUTCOMES = ("correct", "wrong", "unparsed", "failed")
SAMPLING_KEYS = ("temperature", "max_tokens", "top_p", "seed")


class ScoringError(GripError):
    pass


def _jsonable(v):
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    return v


def score_response(answer: Answer, content: str | None, status: str = "ok") -> dict:
    """Outcome of one response against one typed answer: {outcome, parsed, reason, fields?}."""
    if status != "ok":
        return {"outcome": "failed", "parsed": None, "reason": "request failed"}
    if not isinstance(content, str) or not content.strip():
        return {"outcome": "unparsed", "parsed": None, "reason": "empty response"}
    try:
        parsed = answer.parse(content)
        ok = answer.matches(parsed)
    except Exception as e:  # a parser bug must not lose the run; it shows up as its own reason
        return {"outcome": "unparsed", "parsed": None, "reason": f"parser error {type(e).__name__}: {e}"}
    if isinstance(parsed, Unparsed):
        return {"outcome": "unparsed", "parsed": None, "reason": parsed.reason}
    out = {"outcome": "correct" if ok else "wrong", "parsed": _jsonable(parsed), "reason": None}
    if isinstance(answer, Record):
        out["fields"] = answer.field_matches(parsed)
    return out


def answer_of(row: dict, q: dict, where: str) -> Answer:
    """The typed answer of question `q` of item store row `row`. The item store's own validation should already
    have refused a broken answer; this is the last guard, so that no odd value reaches the comparators as a
    traceback: a one-line error naming the row and the question."""
    rid = row.get("id") if isinstance(row, dict) else None
    qid = q.get("id") if isinstance(q, dict) else None
    try:
        a = q["answer"]
        if not isinstance(a, dict):
            raise TypeError("not a JSON object")
        answer = answer_from_json(a)
        answer.reference_text()
        ok = answer.in_space()
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as e:
        detail = f"missing {e}" if isinstance(e, KeyError) else str(e)
        raise ScoringError(f"{where}: item {rid} question {qid}: the answer is not a valid typed answer "
                           f"({detail}); the item store is corrupt") from None
    if not ok:
        raise ScoringError(f"{where}: item {rid} question {qid}: the answer lies outside its declared space; the "
                           f"item store is corrupt")
    return answer


def _is_text(v) -> bool:
    return isinstance(v, str) and bool(v)


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# Response store columns the scorer reads, with the types `grip eval run` writes (None: may be NULL).
_RESPONSE_TYPES = {
    "key": _is_text, "experiment": _is_text, "condition": _is_text, "model": _is_text, "item_id": _is_text,
    "domain": _is_text, "question_id": _is_text, "position": _is_count,
    "status": lambda v: v in ("ok", "failed"),
    "content": lambda v: v is None or isinstance(v, str),
    "image_sha256": lambda v: v is None or isinstance(v, str),
    "sampling": lambda v: isinstance(v, dict),
    "base_url": lambda v: v is None or isinstance(v, str),
    "template_version": lambda v: v is None or isinstance(v, str),
    "response_model": lambda v: v is None or isinstance(v, str),
    "error_class": lambda v: v is None or isinstance(v, str),
    "http_status": lambda v: v is None or _is_count(v),
    "attempts": lambda v: v is None or _is_count(v),
}


def check_response(r) -> None:
    """A stored response row has the fields and types `grip eval run` writes, and a known experiment and
    condition; anything else (a hand-edited or damaged store) is a one-line error naming the row."""
    if not isinstance(r, dict):
        raise ScoringError("a stored response is not a row; the response store is corrupt")
    key = r.get("key") if _is_text(r.get("key")) else "?"
    bad = [f for f, ok in _RESPONSE_TYPES.items() if f not in r or not ok(r[f])]
    if bad:
        raise ScoringError(f"stored response {key[:12]}: {', '.join(bad)} missing or of the wrong type; the response "
                           f"store is corrupt")
    conditions = _conditions()
    if r["experiment"] not in conditions:
        raise ScoringError(f"stored response {key[:12]}: unknown experiment {r['experiment']!r}; the response store "
                           f"is corrupt")
    if r["condition"] not in conditions[r["experiment"]]:
        raise ScoringError(f"stored response {key[:12]}: condition {r['condition']!r} is not one of "
                           f"{r['experiment']}; the response store is corrupt")


def stored_responses(store, experiment: str | None = None) -> list[dict]:
    """Every row of a response store. A row SQLite or JSON cannot read back is a one-line error, not a traceback
    (`score_rows` checks each row's fields with `check_response`)."""
    import sqlite3
    from grip.eval.judge import JUDGE_EXPERIMENT
    try:   # the semantic validator's judge calls live in the same store, under their own experiment name
        rows = [r for r in store.rows(experiment=experiment) if r["experiment"] != JUDGE_EXPERIMENT]
    except (ValueError, RecursionError, sqlite3.Error) as e:
        raise ScoringError(f"{store.path}: a stored response cannot be read ({type(e).__name__}: {e}); the response "
                           f"store is corrupt") from None
    return rows


class AnswerKey:
    """Ground truth by (item_id, question_id), loaded lazily per domain from an item store."""

    def __init__(self, items_dir: Path):
        from grip.eval.experiments import discover_domains
        self.items_dir = Path(items_dir)
        self.domains = set(discover_domains(self.items_dir))
        self._rows: dict[str, dict[str, dict]] = {}
        self._grain: dict[tuple[str, str, int], str | None] = {}
        self._answers: dict[tuple[str, str, str], Answer] = {}

    def rows(self, domain: str) -> dict[str, dict]:
        if domain not in self._rows:
            if domain not in self.domains:
                raise ScoringError(f"{self.items_dir}: no items for domain {domain!r}, but the response store has "
                                   f"responses for it; score against the item store the run used")
            from grip.manifest import load_store
            self._rows[domain] = {r["id"]: r for r in load_store(self.items_dir / domain)}
        return self._rows[domain]

    def image_sha256(self, domain: str, row: dict, condition: str) -> str | None:
        """The sha256 of the image a request of `condition` sends for this item, from this item store: the item's
        image (items.jsonl) for sigma0; for sigmaN the grain copy's sha256 items.jsonl records (`grain_sha256`), or
        for a store from before grain hashes the grain copy's bytes (None when the store has no such copy)."""
        from grip.eval.experiments import grain_sha256, sigma_of
        try:
            sigma = sigma_of(condition)
        except ValueError:
            raise ScoringError(f"{row['id']}: unknown condition {condition!r} in the response store; the response "
                               f"store is inconsistent") from None
        if sigma == 0:
            return row["sha256"]
        recorded = row.get("grain_sha256")
        if isinstance(recorded, dict) and isinstance(recorded.get(str(sigma)), str):
            return recorded[str(sigma)]
        k = (domain, row["id"], sigma)
        if k not in self._grain:
            self._grain[k] = grain_sha256(self.items_dir / domain, row["id"], sigma)
        return self._grain[k]

    def question(self, domain: str, item_id: str, question_id: str) -> tuple[dict, dict]:
        row = self.rows(domain).get(item_id)
        if row is None:
            raise ScoringError(f"{self.items_dir}/{domain}: no item {item_id!r}; the response store was made from "
                               f"another item store")
        qs = row.get("questions")
        for q in qs if isinstance(qs, list) else ():
            if isinstance(q, dict) and q.get("id") == question_id:
                pos = q.get("position")
                if not _is_count(pos) or not 1 <= pos <= 6 or not isinstance(row.get("family"), str) \
                        or not _is_count(row.get("index")):
                    raise ScoringError(f"{self.items_dir}/{domain}: item {item_id} question {question_id}: "
                                       f"position, family or index of the wrong type; the item store is corrupt")
                return row, q
        raise ScoringError(f"{self.items_dir}/{domain}: item {item_id} has no question {question_id!r}; the "
                           f"response store was made from another item store")

    def answer_for(self, r: dict) -> tuple[dict, dict, Answer]:
        """(row, question, typed answer) a stored or scored response is scored against: its own question, or for
        a probe (swap: the twin's Q4; consistency: the rephrased Q4) the one `grip.eval.probes` names."""
        if r["experiment"] in ("swap", "consistency"):
            from grip.eval.probes import probe_answer
            return probe_answer(self, r)[:3]
        return self.answer(r["domain"], r["item_id"], r["question_id"])

    def answer(self, domain: str, item_id: str, question_id: str) -> tuple[dict, dict, Answer]:
        """(row, question, typed answer), the answer checked by `answer_of`."""
        row, q = self.question(domain, item_id, question_id)
        k = (domain, item_id, question_id)
        if k not in self._answers:
            self._answers[k] = answer_of(row, q, f"{self.items_dir}/{domain}")
        return row, q, self._answers[k]


def _config(r: dict) -> dict:
    s = r.get("sampling") or {}
    cfg = {"base_url": r.get("base_url"), "template_version": r.get("template_version")}
    cfg.update({k: s.get(k) for k in SAMPLING_KEYS})
    extra = {k: v for k, v in s.items() if k not in SAMPLING_KEYS}
    if extra:
        cfg["extra"] = json.dumps(extra, sort_keys=True)
    return cfg


def model_labels(rows: list[dict]) -> dict[tuple[str, str], str]:
    """(model, config json) -> label. A model run with one configuration is labelled by its name; one run with
    several (another endpoint, temperature, template) gets the differing settings in brackets, so two runs are never
    pooled."""
    configs: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        cfg = _config(r)
        configs[r["model"]][json.dumps(cfg, sort_keys=True, default=str)] = cfg
    out = {}
    for model, cfgs in configs.items():
        if len(cfgs) == 1:
            out[(model, next(iter(cfgs)))] = model
            continue
        differ = sorted(k for k in set().union(*cfgs.values()) if len({str(c.get(k)) for c in cfgs.values()}) > 1)
        for cj, cfg in cfgs.items():
            out[(model, cj)] = f"{model} [" + ", ".join(f"{k}={cfg.get(k)}" for k in differ) + "]"
    return out


def _condition_order(c: str) -> tuple:
    return (0, int(c[5:])) if c.startswith("sigma") and c[5:].isdigit() else (1, c)


def _check_image(key: AnswerKey, domain: str, item: dict, r: dict, want: str | None = None) -> None:
    """The response must have been made on this item store's image: same item ids with another seed or level would
    otherwise be scored against the wrong answers. A failed request (e.g. BadInput) may carry no image hash.
    `want`: the hash expected (a probe's, from `grip.eval.probes.probe_answer`), else the condition's image."""
    sent = r.get("image_sha256")
    condition = "sigma0" if r.get("experiment") in ("e3", "e4") else r["condition"]   # E3, E4: the clean image
    if sent is None:
        if r.get("status") == "ok":
            raise ScoringError(f"{item['id']}: the response records no image sha256, so it cannot be checked "
                               f"against this item store; score against the item store the run used")
        return
    if sent != (want if want is not None else key.image_sha256(domain, item, condition)):
        raise ScoringError(f"{item['id']}: image sha256 differs from the one the response was made on; score "
                           f"against the item store the run used")


def score_rows(store_rows: Iterable[dict], items_dir: Path) -> list[dict]:
    """Scored rows for every stored response, in a fixed order. A pure function of the store and the item store."""
    rows = list(store_rows)
    for r in rows:
        check_response(r)
    key = AnswerKey(items_dir)
    items_path = str(Path(items_dir).resolve())
    labels = model_labels(rows)
    out = []
    seen: dict[tuple, str] = {}
    for r in rows:
        domain = r["domain"]
        want = None
        if r["experiment"] in ("swap", "consistency"):   # scored against the twin's or the rephrased Q4
            from grip.eval.probes import probe_answer
            item, q, answer, want = probe_answer(key, r)
        else:
            item, q, answer = key.answer(domain, r["item_id"], r["question_id"])
        if r["position"] != q["position"]:
            raise ScoringError(f"stored response {r['key'][:12]}: position {r['position']} but question "
                               f"{r['question_id']} of {r['item_id']} is at position {q['position']}; score against "
                               f"the item store the run used")
        _check_image(key, domain, item, r, want)
        s = score_response(answer, r.get("content"), r.get("status", "failed"))
        cj = json.dumps(_config(r), sort_keys=True, default=str)
        label = labels[(r["model"], cj)]
        ident = (r["experiment"], label, r["condition"], r["item_id"], r["question_id"])
        if ident in seen:
            raise ScoringError(f"two stored responses for {ident} (keys {seen[ident][:12]}, {r['key'][:12]}); the "
                               f"response store is inconsistent")
        seen[ident] = r["key"]
        rec = {
            "key": r["key"], "experiment": r["experiment"], "condition": r["condition"], "model": label,
            "items_dir": items_path,
            "model_name": r["model"], "base_url": r.get("base_url"), "sampling": r.get("sampling"),
            "template_version": r.get("template_version"), "response_model": r.get("response_model"),
            "item_id": r["item_id"], "domain": domain, "family": item["family"], "index": item["index"],
            "question_id": r["question_id"], "position": int(q["position"]), "rung": q["rung"],
            "answer_type": q["answer"]["type"], "reference": answer.reference_text(),
            "outcome": s["outcome"], "parsed": s["parsed"], "reason": s["reason"],
            "status": r.get("status"), "http_status": r.get("http_status"), "error_class": r.get("error_class"),
            "attempts": r.get("attempts"),
        }
        if s["outcome"] == "failed":
            rec["reason"] = r.get("error_class") or "request failed"
        if "fields" in s:
            rec["fields"] = s["fields"]
        if r["experiment"] == "e3" or (r["experiment"] == "e4" and r["condition"] != "phase1"):
            rec["first_key"] = _first_key(r)   # the first turn this answer follows, by its response key (stats joins)
        if r["experiment"] in ("swap", "consistency"):   # the item image's Q4 answer it pairs with (stats joins)
            from grip.eval.probes import probe_fields
            rec.update(probe_fields(r, item))
        if r["experiment"] == "e4":            # the confidence the reply states (phase 1: before; phase 2: after)
            rec["confidence"] = read_confidence(r.get("content")) if s["outcome"] != "failed" else None
        out.append(rec)
    out.sort(key=lambda x: (x["experiment"], x["model"], _condition_order(x["condition"]), x["domain"],
                            x["index"], x["position"]))
    return out


def select(rows: list[dict], models=(), experiments=(), what: str = "the response store") -> list[dict]:
    """The rows of the given models and experiments (empty: every one). A model is named by its name at the
    endpoint or by its report label (`name [setting=value]`, which picks one configuration of a model run with
    several); a name or experiment that matches no row is a one-line error listing what there is."""
    rows = list(rows)
    if experiments:
        have = sorted({r.get("experiment") for r in rows if isinstance(r.get("experiment"), str)})
        missing = [x for x in experiments if x not in have]
        if missing:
            raise ScoringError(f"{what} holds no {', '.join(missing)} responses (it holds "
                               f"{', '.join(have) or 'none'})")
        rows = [r for r in rows if r.get("experiment") in experiments]
    if models:
        if rows and "model_name" in rows[0]:   # scored rows: the label is already there
            name_label = [(r["model_name"], r["model"]) for r in rows]
        else:
            labels = model_labels(rows)
            name_label = [(r["model"], labels[(r["model"], json.dumps(_config(r), sort_keys=True, default=str))])
                          for r in rows]
        known = sorted({n for n, _ in name_label} | {lab for _, lab in name_label})
        missing = [m for m in models if m not in known]
        if missing:
            scope = f" for {', '.join(experiments)}" if experiments else ""
            raise ScoringError(f"{what} holds no responses of model {', '.join(map(repr, missing))}{scope} (it holds "
                               f"{', '.join(map(repr, known)) or 'none'})")
        rows = [r for r, (n, lab) in zip(rows, name_label) if n in models or lab in models]
    return rows


def items_dir_of(rows: list[dict], what: str) -> Path:
    """The one item folder scored rows were scored against (`grip eval report` defaults `--items` to it)."""
    dirs = {r.get("items_dir") for r in rows}
    if None in dirs or not all(isinstance(d, str) and d for d in dirs):
        raise ScoringError(f"{what}: the scored rows do not record their item folder (scored by an older grip); "
                           f"give --items")
    if len(dirs) != 1:
        raise ScoringError(f"{what}: the scored rows come from {len(dirs)} item folders ({', '.join(sorted(dirs))}); "
                           f"give --items")
    return Path(dirs.pop())


def runs_summary(scored: list[dict]) -> list[dict]:
    """One entry per model label and experiment: the settings it ran with (prompt template, endpoint, sampling)
    and how many responses, for the report's record of what was run."""
    out: dict[tuple, dict] = {}
    for r in scored:
        k = (r["model"], r["experiment"])
        e = out.setdefault(k, {"model": r["model"], "model_name": r.get("model_name", r["model"]),
                               "experiment": r["experiment"], "template_version": set(), "base_url": set(),
                               "sampling": set(), "responses": 0})
        e["responses"] += 1
        e["template_version"].add(str(r.get("template_version")))
        e["base_url"].add(str(r.get("base_url")))
        e["sampling"].add(json.dumps(r.get("sampling"), sort_keys=True))
    return [{**e, "template_version": ", ".join(sorted(e["template_version"])),
             "base_url": ", ".join(sorted(e["base_url"])), "sampling": ", ".join(sorted(e["sampling"]))}
            for _, e in sorted(out.items())]


def _first_key(r: dict) -> str:
    """The response key of the first assistant turn of a stored multi-turn request."""
    msgs = (r.get("request") or {}).get("messages") if isinstance(r.get("request"), dict) else None
    for m in msgs if isinstance(msgs, list) else ():
        if isinstance(m, dict) and m.get("role") == "assistant" and _is_text(m.get("response_key")):
            return m["response_key"]
    raise ScoringError(f"stored response {r['key'][:12]}: a multi-turn request without the first turn's response key; the "
                       f"response store is corrupt")


def score_store(store_path: Path, items_dir: Path, experiment: str | None = None) -> list[dict]:
    from grip.eval.store import ResponseStore
    store_path = Path(store_path)
    if not store_path.is_file():
        raise ScoringError(f"{store_path}: no response store (run `grip eval run` first)")
    store = ResponseStore(store_path, readonly=True)
    try:
        return score_rows(stored_responses(store, experiment), items_dir)
    finally:
        close = getattr(store, "close", None)
        if close:
            close()


def write_scored(rows: list[dict], path: Path) -> None:
    from grip.manifest import atomic_write_bytes
    data = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)
    atomic_write_bytes(Path(path), data.encode())


def read_scored(path: Path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        raise ScoringError(f"{path}: no scored file (run `grip eval score` first)")
    out = []
    by_key: dict[str, int] = {}
    by_ident: dict[tuple, int] = {}
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ScoringError(f"{path}: not UTF-8 text, so not a scored file; rerun `grip eval score`") from None
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except (ValueError, RecursionError):
            raise ScoringError(f"{path}: line {k} is not valid JSON; rerun `grip eval score`") from None
        if not _is_scored_row(r):
            raise ScoringError(f"{path}: line {k} is not a scored row; rerun `grip eval score`")
        ident = (r["experiment"], r["model"], r["condition"], r["domain"], r["item_id"], r["position"])
        first = by_key.get(r["key"]) if "key" in r else None
        if first is None:
            first = by_ident.get(ident)
        if first is not None:
            raise ScoringError(f"{path}: line {k} repeats the scored row of line {first} (key {r.get('key')}); "
                               f"it would be counted twice; rerun `grip eval score`")
        if "key" in r:
            by_key[r["key"]] = k
        by_ident[ident] = k
        out.append(r)
    return out


@functools.lru_cache(maxsize=1)
def _conditions() -> dict[str, frozenset[str]]:
    from grip.eval.experiments import E2_SIGMAS, condition_name
    from grip.eval.prompts import E3_CONDITIONS, E4_CONDITIONS
    from grip.eval.probes import CONDITIONS as PROBE_CONDITIONS
    return {"e1": frozenset({condition_name(0)}), "e2": frozenset(condition_name(s) for s in E2_SIGMAS),
            "e3": frozenset(E3_CONDITIONS), "e4": frozenset(E4_CONDITIONS), **PROBE_CONDITIONS}


def _is_scored_row(r) -> bool:
    """The fields the report counts by, with the types and values `grip eval score` writes."""
    if not isinstance(r, dict):
        return False
    text = ("model", "item_id", "domain", "family", "question_id")
    if any(f not in r for f in text + ("experiment", "condition", "position", "outcome")):
        return False
    if any(not isinstance(r[f], str) or not r[f] for f in text):
        return False
    if "key" in r and (not isinstance(r["key"], str) or not r["key"]):
        return False
    conditions = _conditions()
    if not isinstance(r["experiment"], str) or r["experiment"] not in conditions:
        return False
    if not isinstance(r["condition"], str) or r["condition"] not in conditions[r["experiment"]]:
        return False
    p = r["position"]
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:  # a question position (the report uses 1-5)
        return False
    if not (isinstance(r["outcome"], str) and r["outcome"] in OUTCOMES):
        return False
    if "validated_outcome" in r:   # the validator only ever moves wrong or unparsed to correct
        v = r["validated_outcome"]
        return v == r["outcome"] or (v == "correct" and r["outcome"] in ("wrong", "unparsed"))
    return True


def counts(rows: Iterable[dict]) -> dict[str, int]:
    c = {o: 0 for o in OUTCOMES}
    for r in rows:
        c[r["outcome"]] += 1
    return c
