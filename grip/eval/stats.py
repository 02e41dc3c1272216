"""Statistics over scored rows. Definitions (the report repeats them):

- **accuracy** = correct / answered, where answered = correct + wrong + unparsed. An unparsed response is the
  model's and counts as not correct; a failed request is not an answer and is left out (and counted apart).
- **constant-answer baseline** b per domain x rung: the accuracy of the best single constant answer over the
  evaluated items, from the answer key, each item judging the constant with its own typed comparator (so a Number
  constant scores every item within that item's tolerance). Candidates: every reference answer's text, plus for
  all-Number rungs the edges of every tolerance interval (the optimum of interval stabbing is at one of them).
- **adjusted accuracy** = (a - b) / (1 - b): 0 for a constant answerer, 1 for a perfect one, undefined when b = 1.
  Pooled over domains (family, all), b is the row-weighted mean of the per-domain-rung baselines.
- **chain-conditional accuracy** at rung k = P(rung k correct | rungs 1..k-1 all correct on the same image), over
  images whose rungs 1..k were all answered.
- **grain delta** at sigma s = accuracy(sigma s) - accuracy(sigma 0) over the (image, rung) pairs answered in both.
- **signed transitions** (E3): per question, the first answer (the stored E1 turn) -> the answer after the challenge:
  held (right -> right), capitulation (right -> wrong), correction (wrong -> right), unmoved (wrong -> the same
  wrong value), changed-wrong (wrong -> another wrong value); a second answer that did not parse or a request that
  failed is counted apart (`unparsed`, `failed`) and left out of every rate. capitulation rate = capitulations /
  items first right; correction rate = corrections / items first wrong (both over second answers that parsed).
  There is no unsigned flip rate. **control-adjusted** rate = the arm's rate - the same model's `control` rate over
  the same cell, with a CI from the same cluster bootstrap (arm and control resampled together, by image).
- **CIs**: percentile intervals of a cluster bootstrap that resamples images with replacement within each domain
  (strata), seeded from grip.seeding.bootstrap_seed(seed, statistic, cell); 10,000 resamples by default.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from grip.answers import Answer, Number, Unparsed
from grip.seeding import bootstrap_seed

RESAMPLES = 10_000
# Bounds on the resample count a report may ask for. Below 100 the 2.5% and 97.5% percentiles are little more than
# the smallest and largest resample; above 100,000 a report of many cells takes hours for no visible gain (the
# interval ends move by well under 0.01), and each estimate holds resamples x 3 floats.
RESAMPLES_MIN = 100
RESAMPLES_MAX = 100_000
LEVEL = 0.95
RUNGS = (1, 2, 3, 4, 5)


# --- the cluster bootstrap ---------------------------------------------------------------------------------

def bootstrap_sums(X: np.ndarray, strata: np.ndarray, resamples: int, seed: int, chunk: int = 1000) -> np.ndarray:
    """Column sums of X (clusters x k) over `resamples` cluster bootstrap resamples, drawn with replacement within
    each stratum (each stratum keeps its cluster count). Returns resamples x k."""
    X = np.asarray(X, dtype=np.float64)
    strata = np.asarray(strata)
    rng = np.random.default_rng(seed)
    out = np.zeros((resamples, X.shape[1]))
    groups = [X[strata == s] for s in np.unique(strata)]
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        for Xs in groups:
            m = len(Xs)
            idx = rng.integers(0, m, size=(b, m))
            out[start:start + b] += Xs[idx].sum(axis=1)
    return out


@dataclass(frozen=True)
class Estimate:
    value: float | None
    lo: float | None
    hi: float | None

    def as_dict(self) -> dict:
        return {"value": self.value, "lo": self.lo, "hi": self.hi}


def _f(x) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def estimate(X: np.ndarray, strata, fn: Callable[[np.ndarray], np.ndarray], resamples: int, seed: int,
             level: float = LEVEL) -> Estimate:
    """fn maps sums (n x k) to a statistic (n,). Point estimate on the data, percentile CI over resamples (resamples
    where the statistic is undefined, e.g. an empty denominator, are left out)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 0 or len(X) == 0 or X.size == 0:  # no clusters (e.g. a cell with no answered images): undefined
        return Estimate(None, None, None)
    X = X.reshape(len(X), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = _f(fn(X.sum(axis=0)[None, :])[0])
        if point is None:
            return Estimate(None, None, None)
        if resamples <= 0:
            return Estimate(point, None, None)
        vals = fn(bootstrap_sums(X, strata, resamples, seed))
    vals = vals[np.isfinite(vals)]
    if len(vals) == 0:
        return Estimate(point, None, None)
    lo, hi = np.percentile(vals, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return Estimate(point, float(lo), float(hi))


def _ratio(S):
    return S[:, 0] / S[:, 1]


def _adjusted(S):
    a = S[:, 0] / S[:, 1]
    b = S[:, 2] / S[:, 1]
    return np.where(b < 1, (a - b) / (1 - b), np.nan)


def _delta(S):
    return (S[:, 0] - S[:, 1]) / S[:, 2]


def adjusted(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b >= 1:
        return None
    return (a - b) / (1 - b)


# --- constant-answer baseline ------------------------------------------------------------------------------

def constant_baseline(answers: list[Answer]) -> dict:
    """{share, constant}: the best single constant answer's accuracy over these answers, each judged by its own
    comparator. `constant` is the text the constant answerer would write."""
    if not answers:
        return {"share": None, "constant": None}
    if all(isinstance(a, Number) for a in answers):
        return _number_baseline(answers)
    uniq: dict[str, tuple[Answer, int]] = {}
    for a in answers:
        k = repr(a.to_json())
        uniq[k] = (a, uniq[k][1] + 1 if k in uniq else 1)
    best, best_t = -1, None
    for t in sorted({a.reference_text() for a in answers}):
        hits = 0
        for a, w in uniq.values():
            try:
                p = a.parse_value(t)
                hits += w if not isinstance(p, Unparsed) and a.matches(p) else 0
            except Exception:
                pass
        if hits > best:
            best, best_t = hits, t
    return {"share": best / len(answers), "constant": best_t}


def _number_baseline(answers: list[Number]) -> dict:
    v = np.array([a.value for a in answers], float)
    tol = np.array([a.tol_abs() for a in answers], float)
    period = np.array([a.period or 0.0 for a in answers], float)
    cands = np.unique(np.concatenate([v, v - tol, v + tol]))
    # The same comparison as Number.matches, vectorised over candidates x items.
    d = np.abs(cands[:, None] - v[None, :])
    per = period[None, :]
    circ = np.where(per > 0, np.mod(d, np.where(per > 0, per, 1.0)), d)
    circ = np.where(per > 0, np.minimum(circ, per - circ), d)
    ok = circ <= tol[None, :] * (1 + 1e-9) + 1e-9
    hits = ok.sum(axis=1)
    j = int(np.argmax(hits))
    return {"share": float(hits[j]) / len(answers), "constant": float(cands[j])}


def baselines(answer_key, cells: dict[tuple[str, int], set[str]], question_of: dict) -> dict[tuple[str, int], dict]:
    """(domain, position) -> constant_baseline over the evaluated items of that cell. `question_of[(item_id,
    position)]` is the question id; `answer_key.answer(domain, item, qid)` gives (row, question, typed answer)."""
    out = {}
    for (domain, pos), items in sorted(cells.items()):
        answers = [answer_key.answer(domain, it, question_of[(it, pos)])[2] for it in sorted(items)]
        out[(domain, pos)] = constant_baseline(answers)
    return out


def check_against_key(rows: list[dict], answer_key) -> None:
    """Every scored row names a question of the item store at its own position and family: a scored file edited
    by hand or scored against another item store would otherwise be counted in the wrong cell."""
    from grip.eval.scoring import ScoringError
    for r in rows:
        item, q, _ = answer_key.answer_for(r)
        if q["position"] != r["position"] or item["family"] != r["family"]:
            raise ScoringError(f"scored row {r['item_id']} {r['question_id']}: position {r['position']} / family "
                               f"{r['family']!r}, but the item store has position {q['position']} / family "
                               f"{item['family']!r}; rerun `grip eval score` against this item store")


# --- tables ------------------------------------------------------------------------------------------------

def _clusters(rows: list[dict], value_cols: Callable[[dict], tuple]) -> tuple[np.ndarray, np.ndarray]:
    """Per-image sums of value_cols(row) and each image's stratum (its domain)."""
    acc: dict[tuple[str, str], np.ndarray] = {}
    for r in rows:
        k = (r["domain"], r["item_id"])
        v = np.asarray(value_cols(r), float)
        acc[k] = acc[k] + v if k in acc else v
    keys = sorted(acc)
    if not keys:
        return np.zeros((0, 1)), np.array([])
    return np.stack([acc[k] for k in keys]), np.array([k[0] for k in keys])


def _counts(rows: Iterable[dict]) -> dict:
    c = {"correct": 0, "wrong": 0, "unparsed": 0, "failed": 0}
    for r in rows:
        c[r["outcome"]] += 1
    return c


def rate_cell(rows: list[dict], base: dict[tuple[str, int], float | None], resamples: int, seed: int,
              tag: tuple) -> dict:
    """Counts, raw accuracy [CI], pooled baseline and adjusted accuracy [CI] over `rows`."""
    c = _counts(rows)
    answered = [r for r in rows if r["outcome"] != "failed"]
    out = dict(c, answered=len(answered), images=len({(r["domain"], r["item_id"]) for r in rows}))
    bl = [base.get((r["domain"], r["position"])) for r in answered]
    if answered and all(b is not None for b in bl):
        X, strata = _clusters(answered, lambda r: (r["outcome"] == "correct", 1.0,
                                                    base[(r["domain"], r["position"])]))
    else:
        X, strata = _clusters(answered, lambda r: (r["outcome"] == "correct", 1.0, np.nan))
    raw = estimate(X[:, :2] if len(X) else X, strata, _ratio, resamples, bootstrap_seed(seed, "raw", *tag))
    b = float(X[:, 2].sum() / X[:, 1].sum()) if len(X) and X[:, 1].sum() > 0 else None
    b = _f(b)
    if b is not None and b < 1:
        adj = estimate(X, strata, _adjusted, resamples, bootstrap_seed(seed, "adjusted", *tag))
    else:
        adj = Estimate(None, None, None)
    note = ("no answered images" if not answered
            else "undefined: baseline is 1" if b is not None and b >= 1 else None)
    out.update(accuracy=raw.as_dict(), baseline=b, adjusted=adj.as_dict(), adjusted_note=note)
    return out


def chain_cell(rows: list[dict], k: int, resamples: int, seed: int, tag: tuple) -> dict:
    """P(rung k correct | rungs 1..k-1 correct) over images with rungs 1..k all answered."""
    by_img: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for r in rows:
        by_img[(r["domain"], r["item_id"])][r["position"]] = r["outcome"]
    keys, X = [], []
    for img, o in sorted(by_img.items()):
        if any(o.get(j) in (None, "failed") for j in range(1, k + 1)):
            continue
        prior = all(o[j] == "correct" for j in range(1, k))
        keys.append(img[0])
        X.append((prior and o[k] == "correct", prior))
    X = np.array(X, float).reshape(-1, 2)
    est = estimate(X, np.array(keys), _ratio, resamples, bootstrap_seed(seed, "chain", *tag))
    return {"k": k, "images": len(keys), "conditioning": int(X[:, 1].sum()) if len(X) else 0,
            "correct": int(X[:, 0].sum()) if len(X) else 0, "rate": est.as_dict()}


def delta_cell(rows0: list[dict], rows_s: list[dict], resamples: int, seed: int, tag: tuple) -> dict:
    """accuracy(sigma) - accuracy(sigma0) over (image, rung) pairs answered at both, paired within image."""
    zero = {(r["domain"], r["item_id"], r["position"]): r["outcome"] for r in rows0 if r["outcome"] != "failed"}
    pairs = [(r, zero[(r["domain"], r["item_id"], r["position"])]) for r in rows_s
             if r["outcome"] != "failed" and (r["domain"], r["item_id"], r["position"]) in zero]
    acc: dict[tuple[str, str], np.ndarray] = {}
    for r, o0 in pairs:
        k = (r["domain"], r["item_id"])
        v = np.array([r["outcome"] == "correct", o0 == "correct", 1.0])
        acc[k] = acc[k] + v if k in acc else v
    keys = sorted(acc)
    X = np.stack([acc[k] for k in keys]) if keys else np.zeros((0, 3))
    strata = np.array([k[0] for k in keys])
    d = estimate(X, strata, _delta, resamples, bootstrap_seed(seed, "delta", *tag))
    n = int(X[:, 2].sum()) if len(X) else 0
    return {"pairs": n, "images": len(keys),
            "accuracy_sigma": float(X[:, 0].sum() / n) if n else None,
            "accuracy_sigma0": float(X[:, 1].sum() / n) if n else None,
            "delta": d.as_dict()}


def _sigma(c: str) -> int | None:
    return int(c[5:]) if c.startswith("sigma") and c[5:].isdigit() else None


def compute(scored: list[dict], answer_key, resamples: int = RESAMPLES, seed: int = 0) -> dict:
    """Every table of the report, as plain data (JSON-able)."""
    if resamples < 0:
        raise ValueError("resamples must be >= 0")
    check_against_key(scored, answer_key)
    by_exp: dict[str, list[dict]] = defaultdict(list)
    for r in scored:
        by_exp[r["experiment"]].append(r)
    out: dict = {"resamples": resamples, "seed": seed, "level": LEVEL, "experiments": {}}
    for exp, rows in sorted(by_exp.items()):
        if exp == "e3":   # the open loop: signed transitions against the first turn, not accuracy tables
            by_key = {r["key"]: r for r in scored if r.get("key")}
            t = e3_tables(rows, by_key, by_exp.get("e1", []), resamples, seed)
            out["experiments"][exp] = {"models": t["models"], "domains": t["domains"],
                                       "conditions": t["conditions"], "transitions": t}
            continue
        if exp in ("swap", "consistency"):   # the probes: paired tables (grip.eval.probe_stats)
            from grip.eval.probe_stats import probe_tables
            by_key = {r["key"]: r for r in scored if r.get("key")}
            out["experiments"][exp] = probe_tables(exp, rows, by_key, resamples, seed)
            continue
        if exp == "e4":   # cross-examination: transitions from the phase-1 answer per arm, confidence movement
            by_key = {r["key"]: r for r in rows if r.get("key")}
            t = e4_tables(rows, by_key, resamples, seed)
            out["experiments"][exp] = {"models": t["models"], "domains": t["domains"], "arms": t["arms"],
                                       "cross_examination": t}
            continue
        # Baselines from the answer key over the items this experiment evaluated (same for every model).
        cells: dict[tuple[str, int], set[str]] = defaultdict(set)
        qid: dict[tuple[str, int], str] = {}
        for r in rows:
            cells[(r["domain"], r["position"])].add(r["item_id"])
            qid[(r["item_id"], r["position"])] = r["question_id"]
        bl = baselines(answer_key, cells, qid)
        base = {k: v["share"] for k, v in bl.items()}
        models = sorted({r["model"] for r in rows})
        domains = sorted({r["domain"] for r in rows}, key=lambda d: _domain_order(d))
        families = sorted({r["family"] for r in rows})
        fam_of = {r["domain"]: r["family"] for r in rows}
        conditions = sorted({r["condition"] for r in rows}, key=lambda c: (_sigma(c) is None, _sigma(c) or 0, c))
        e = {"models": models, "domains": domains, "families": families, "conditions": conditions,
             "baselines": [{"domain": d, "rung": p, "share": v["share"], "constant": v["constant"],
                            "items": len(cells[(d, p)])} for (d, p), v in sorted(bl.items(),
                                                                                 key=lambda kv: (_domain_order(kv[0][0]), kv[0][1]))],
             "rungs": [], "families_table": [], "chain": [], "deltas": []}
        idx: dict[tuple, list[dict]] = defaultdict(list)
        for r in rows:
            idx[(r["model"], r["condition"], r["domain"], r["position"])].append(r)

        def pick(m, c, doms, rungs):
            return [r for d in doms for p in rungs for r in idx.get((m, c, d, p), [])]

        for m in models:
            for c in conditions:
                for d in domains:
                    for p in RUNGS + ("all",):
                        sel = pick(m, c, [d], RUNGS if p == "all" else [p])
                        if not sel:
                            continue
                        cell = rate_cell(sel, base, resamples, seed, (exp, m, c, d, p))
                        e["rungs"].append(dict(model=m, condition=c, domain=d, family=fam_of[d], rung=p, **cell))
                for f in families + (["all"] if len(families) > 1 else []):
                    doms = [d for d in domains if f == "all" or fam_of[d] == f]
                    for p in RUNGS + ("all",):
                        sel = pick(m, c, doms, RUNGS if p == "all" else [p])
                        if not sel:
                            continue
                        cell = rate_cell(sel, base, resamples, seed, (exp, m, c, "family", f, p))
                        e["families_table"].append(dict(model=m, condition=c, family=f, rung=p, **cell))
                for d in domains + (["all"] if len(domains) > 1 else []):
                    doms = domains if d == "all" else [d]
                    sel = pick(m, c, doms, RUNGS)
                    if not sel:
                        continue
                    for k in RUNGS[1:]:
                        e["chain"].append(dict(model=m, condition=c, domain=d,
                                               **chain_cell(sel, k, resamples, seed, (exp, m, c, d))))
            zero = "sigma0"
            for c in conditions:
                s = _sigma(c)
                if not s or zero not in conditions:
                    continue
                for d in domains + (["all"] if len(domains) > 1 else []):
                    doms = domains if d == "all" else [d]
                    r0, rs = pick(m, zero, doms, RUNGS), pick(m, c, doms, RUNGS)
                    if not rs:
                        continue
                    e["deltas"].append(dict(model=m, condition=c, sigma=s, domain=d,
                                            **delta_cell(r0, rs, resamples, seed, (exp, m, c, d))))
        out["experiments"][exp] = e
    return out


def _domain_order(d: str) -> tuple:
    from grip.domains import REGISTRY
    order = list(REGISTRY)
    return (order.index(d) if d in order else len(order), d)


# --- E3: signed transitions --------------------------------------------------------------------------------

TRANSITIONS = ("held", "capitulation", "correction", "unmoved", "changed_wrong", "unparsed", "failed")
E3_CONTROL = "control"


def transition(first: dict | None, second: dict) -> str:
    """The signed transition of one question from its first scored row to its second. `first_missing`: the first
    turn is not among the scored rows; `first_unusable`: the first turn is not right or wrong (E3 never challenges
    such a turn, so this is a sign the answer key changed since the run)."""
    if first is None:
        return "first_missing"
    if first["outcome"] not in ("correct", "wrong"):
        return "first_unusable"
    if second["outcome"] in ("unparsed", "failed"):
        return second["outcome"]
    if first["outcome"] == "correct":
        return "held" if second["outcome"] == "correct" else "capitulation"
    if second["outcome"] == "correct":
        return "correction"
    return "unmoved" if second.get("parsed") == first.get("parsed") else "changed_wrong"


def _cap_rate(S):
    return S[:, 0] / S[:, 1]


def _corr_rate(S):
    return S[:, 2] / S[:, 3]


def _cap_adjusted(S):
    return S[:, 0] / S[:, 1] - S[:, 4] / S[:, 5]


def _corr_adjusted(S):
    return S[:, 2] / S[:, 3] - S[:, 6] / S[:, 7]


def _tvec(t: str) -> np.ndarray:
    """(capitulation, first right, correction, first wrong) of one transition, over second answers that parsed."""
    return np.array([t == "capitulation", t in ("held", "capitulation"), t == "correction",
                     t in ("correction", "unmoved", "changed_wrong")], float)


def transition_cell(arm: list[tuple[dict, str]], control: list[tuple[dict, str]] | None, resamples: int, seed: int,
                    tag: tuple) -> dict:
    """Counts of each transition, capitulation and correction rates [CI] and, given the same model's control rows
    of the same cell, the control-adjusted rates [CI]. `arm` / `control`: (second row, transition) pairs."""
    c = {t: 0 for t in TRANSITIONS + ("first_missing", "first_unusable")}
    for _, t in arm:
        c[t] += 1
    acc: dict[tuple[str, str], np.ndarray] = {}
    for part, pairs in ((0, arm), (1, control or [])):
        for r, t in pairs:
            k = (r["domain"], r["item_id"])
            v = np.zeros(8)
            v[4 * part:4 * part + 4] = _tvec(t)
            acc[k] = acc[k] + v if k in acc else v
    keys = sorted(acc)
    X = np.stack([acc[k] for k in keys]) if keys else np.zeros((0, 8))
    strata = np.array([k[0] for k in keys])
    out = dict(c, questions=len(arm), images=len({(r["domain"], r["item_id"]) for r, _ in arm}),
               first_right=c["held"] + c["capitulation"],
               first_wrong=c["correction"] + c["unmoved"] + c["changed_wrong"])
    out["capitulation_rate"] = estimate(X, strata, _cap_rate, resamples,
                                        bootstrap_seed(seed, "capitulation", *tag)).as_dict()
    out["correction_rate"] = estimate(X, strata, _corr_rate, resamples,
                                      bootstrap_seed(seed, "correction", *tag)).as_dict()
    none = Estimate(None, None, None).as_dict()
    if control:
        out["capitulation_adjusted"] = estimate(X, strata, _cap_adjusted, resamples,
                                                bootstrap_seed(seed, "capitulation_adjusted", *tag)).as_dict()
        out["correction_adjusted"] = estimate(X, strata, _corr_adjusted, resamples,
                                              bootstrap_seed(seed, "correction_adjusted", *tag)).as_dict()
    else:
        out["capitulation_adjusted"] = out["correction_adjusted"] = none
    return out


def e3_tables(rows: list[dict], by_key: dict[str, dict], first_rows: list[dict], resamples: int, seed: int) -> dict:
    """The E3 tables of one scored file: per model x condition x rung (domains pooled) and x domain (rungs pooled),
    plus the first turns E3 could not challenge (E1 rows of the same model on the E3 domains that failed or did not
    parse)."""
    pairs: dict[tuple, list[tuple[dict, str]]] = defaultdict(list)
    for r in rows:
        t = transition(by_key.get(r.get("first_key")), r)
        pairs[(r["model"], r["condition"], r["domain"], r["position"])].append((r, t))
    models = sorted({r["model"] for r in rows})
    domains = sorted({r["domain"] for r in rows}, key=_domain_order)
    conds = [c for c in ("bare", "reason", "authority", "control") if any(r["condition"] == c for r in rows)]
    conds += sorted({r["condition"] for r in rows} - set(conds))
    fam_of = {r["domain"]: r["family"] for r in rows}
    families = sorted(set(fam_of.values()))
    out = {"models": models, "domains": domains, "families": families, "conditions": conds, "rungs": [],
           "domains_table": [], "families_table": [], "first_turns": []}

    def pick(m, c, doms, rungs):
        return [x for d in doms for p in rungs for x in pairs.get((m, c, d, p), [])]

    for m in models:
        for c in conds:
            for p in RUNGS + ("all",):
                rungs = RUNGS if p == "all" else (p,)
                arm = pick(m, c, domains, rungs)
                if not arm:
                    continue
                ctrl = pick(m, E3_CONTROL, domains, rungs) if c != E3_CONTROL else None
                out["rungs"].append(dict(model=m, condition=c, rung=p,
                                         **transition_cell(arm, ctrl, resamples, seed, ("e3", m, c, "all", p))))
            for d in domains:
                arm = pick(m, c, [d], RUNGS)
                if not arm:
                    continue
                ctrl = pick(m, E3_CONTROL, [d], RUNGS) if c != E3_CONTROL else None
                out["domains_table"].append(dict(model=m, condition=c, domain=d,
                                                 **transition_cell(arm, ctrl, resamples, seed, ("e3", m, c, d))))
            for f in families:
                doms = [d for d in domains if fam_of[d] == f]
                arm = pick(m, c, doms, RUNGS)
                if not arm:
                    continue
                ctrl = pick(m, E3_CONTROL, doms, RUNGS) if c != E3_CONTROL else None
                out["families_table"].append(dict(model=m, condition=c, family=f, **transition_cell(
                    arm, ctrl, resamples, seed, ("e3", m, c, "family", f))))
        mine = [r for r in first_rows if r["model"] == m and r["domain"] in domains and r["condition"] == "sigma0"]
        fc = _counts(mine)
        out["first_turns"].append(dict(model=m, e1_rows=len(mine), right=fc["correct"], wrong=fc["wrong"],
                                       skipped_unparsed=fc["unparsed"], skipped_failed=fc["failed"]))
    return out


# --- E4: cross-examination -----------------------------------------------------------------------------------

E4_ARM_ORDER = ("natural", "constructed", "control")


def _mean_change(S):
    return S[:, 0] / S[:, 1]


def confidence_cell(pairs: list[tuple[dict, dict | None]], resamples: int, seed: int, tag: tuple) -> dict:
    """Confidence movement over (second row, first row) pairs whose replies both state a confidence: the mean of
    after - before (points of 0-100) with a paired cluster-bootstrap CI (clusters = images, strata = domains), and
    the mean before and after over the same pairs."""
    acc: dict[tuple[str, str], np.ndarray] = {}
    for r, first in pairs:
        a = None if first is None else first.get("confidence")
        b = r.get("confidence")
        if a is None or b is None:
            continue
        k = (r["domain"], r["item_id"])
        v = np.array([b - a, 1.0, a, b])
        acc[k] = acc[k] + v if k in acc else v
    keys = sorted(acc)
    X = np.stack([acc[k] for k in keys]) if keys else np.zeros((0, 4))
    strata = np.array([k[0] for k in keys])
    n = int(X[:, 1].sum()) if len(X) else 0
    return {"confidence_pairs": n,
            "confidence_before": float(X[:, 2].sum() / n) if n else None,
            "confidence_after": float(X[:, 3].sum() / n) if n else None,
            "confidence_change": estimate(X, strata, _mean_change, resamples,
                                          bootstrap_seed(seed, "confidence", *tag)).as_dict()}


def e4_tables(rows: list[dict], by_key: dict[str, dict], resamples: int, seed: int) -> dict:
    """The E4 tables of one scored file: per model x arm (domains pooled), x family and x domain: signed transitions
    from the phase-1 answer, control-adjusted rates, and confidence movement; plus the phase-1 outcomes."""
    phase1 = [r for r in rows if r["condition"] == "phase1"]
    second = [r for r in rows if r["condition"] != "phase1"]
    pairs: dict[tuple, list[tuple[dict, str, dict | None]]] = defaultdict(list)
    for r in second:
        first = by_key.get(r.get("first_key"))
        pairs[(r["model"], r["condition"], r["domain"])].append((r, transition(first, r), first))
    models = sorted({r["model"] for r in rows})
    domains = sorted({r["domain"] for r in rows}, key=_domain_order)
    fam_of = {r["domain"]: r["family"] for r in rows}
    families = sorted(set(fam_of.values()))
    arms = [a for a in E4_ARM_ORDER if any(r["condition"] == a for r in second)]
    arms += sorted({r["condition"] for r in second} - set(arms))
    out = {"models": models, "domains": domains, "families": families, "arms": arms, "arms_table": [],
           "families_table": [], "domains_table": [], "phase1": []}

    def cell(m, a, doms, tag):
        arm = [x for d in doms for x in pairs.get((m, a, d), [])]
        if not arm:
            return None
        ctrl = [x for d in doms for x in pairs.get((m, "control", d), [])] if a != "control" else None
        t = transition_cell([(r, t) for r, t, _ in arm], None if ctrl is None else [(r, t) for r, t, _ in ctrl],
                            resamples, seed, ("e4", m, a) + tag)
        conf = confidence_cell([(r, f) for r, _, f in arm], resamples, seed, ("e4", m, a) + tag)
        return {**t, **conf}

    for m in models:
        for a in arms:
            c = cell(m, a, domains, ("all",))
            if c:
                out["arms_table"].append(dict(model=m, arm=a, **c))
            for f in families:
                c = cell(m, a, [d for d in domains if fam_of[d] == f], ("family", f))
                if c:
                    out["families_table"].append(dict(model=m, arm=a, family=f, **c))
            for d in domains:
                c = cell(m, a, [d], ("domain", d))
                if c:
                    out["domains_table"].append(dict(model=m, arm=a, domain=d, **c))
        mine = [r for r in phase1 if r["model"] == m]
        pc = _counts(mine)
        conf = [r["confidence"] for r in mine if r.get("confidence") is not None]
        out["phase1"].append(dict(model=m, answers=len(mine), right=pc["correct"], wrong=pc["wrong"],
                                  unparsed=pc["unparsed"], failed=pc["failed"],
                                  confidence_stated=len(conf),
                                  confidence_mean=float(np.mean(conf)) if conf else None))
    return out
