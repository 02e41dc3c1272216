"""Statistics of the probes (grip.eval.probes) over scored rows. Definitions (the report repeats them):

- **swap probe**, per model x variant (domains pooled, x domain, x family), over the items whose `base` answer and
  probe answer were both answered (not failed; an unparsed answer counts as not correct): Acc_base = share of base
  answers right (the twin's Q4 asked on the twin image alone), Acc_probe = share of probe answers right (the twin's
  Q4 asked after the item's Q4 on the item image, in the same conversation), delta = Acc_probe - Acc_base, paired
  within item. Both are scored against the twin's answer. Also the first turn's accuracy on the item image and the
  repeat rate (probe answers that parse to the same value as the first answer, over pairs where both parsed).
- **consistency**, per model x domain (rung 4; and all domains pooled, and per family), over the items whose Q4 and
  rephrased-Q4 answers were both answered: consistency = share of pairs both right or both not right, robust
  accuracy = share both right.
- **CIs**: the cluster bootstrap of grip.eval.stats (clusters = items, strata = domains), percentile intervals.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from grip.eval.stats import _delta, _domain_order, _ratio, estimate
from grip.seeding import bootstrap_seed

PROBE_VARIANTS = ("multi-turn", "continuation")


def _cells(vecs: list[tuple[dict, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-item sums (clusters = items) and each item's stratum (its domain)."""
    acc: dict[tuple[str, str], np.ndarray] = {}
    for r, v in vecs:
        key = (r["domain"], r["item_id"])
        acc[key] = acc[key] + v if key in acc else v
    keys = sorted(acc)
    X = np.stack([acc[key] for key in keys]) if keys else np.zeros((0, k))
    return X, np.array([key[0] for key in keys])


def _share(X: np.ndarray, num: int, den: int) -> float | None:
    d = X[:, den].sum() if len(X) else 0
    return float(X[:, num].sum() / d) if d else None


def _scopes(rows: list[dict]) -> tuple[list[str], dict[str, str], list[str]]:
    domains = sorted({r["domain"] for r in rows}, key=_domain_order)
    fam_of = {r["domain"]: r["family"] for r in rows}
    return domains, fam_of, sorted(set(fam_of.values()))


# --- swap probe --------------------------------------------------------------------------------------------------

def swap_cell(pairs: list[tuple[dict, dict, dict | None]], resamples: int, seed: int, tag: tuple) -> dict:
    """Acc_base, Acc_probe and delta [CI] over (probe row, base row, first row or None) pairs, both answered."""
    vecs = []
    for p, b, f in pairs:
        first_ok = f is not None and f["outcome"] != "failed"
        parsed = first_ok and f["outcome"] in ("correct", "wrong") and p["outcome"] in ("correct", "wrong")
        vecs.append((p, np.array([p["outcome"] == "correct", b["outcome"] == "correct", 1.0,
                                  first_ok and f["outcome"] == "correct", first_ok,
                                  parsed and p.get("parsed") == f.get("parsed"), parsed], float)))
    X, strata = _cells(vecs, 7)
    return {"pairs": len(pairs), "items": len(X),
            "base_correct": int(X[:, 1].sum()) if len(X) else 0,
            "probe_correct": int(X[:, 0].sum()) if len(X) else 0,
            "acc_base": estimate(X[:, [1, 2]] if len(X) else X, strata, _ratio, resamples,
                                 bootstrap_seed(seed, "swap_base", *tag)).as_dict(),
            "acc_probe": estimate(X[:, [0, 2]] if len(X) else X, strata, _ratio, resamples,
                                  bootstrap_seed(seed, "swap_probe", *tag)).as_dict(),
            "delta": estimate(X[:, :3] if len(X) else X, strata, _delta, resamples,
                              bootstrap_seed(seed, "swap_delta", *tag)).as_dict(),
            "acc_first": _share(X, 3, 4), "repeats": int(X[:, 5].sum()) if len(X) else 0,
            "repeat_rate": _share(X, 5, 6)}


def swap_tables(rows: list[dict], by_key: dict[str, dict], resamples: int, seed: int) -> dict:
    base = {(r["model"], r["domain"], r["item_id"]): r for r in rows if r["condition"] == "base"}
    probes = [r for r in rows if r["condition"] != "base"]
    models = sorted({r["model"] for r in rows})
    domains, fam_of, families = _scopes(rows)
    variants = [v for v in PROBE_VARIANTS if any(r["condition"] == v for r in probes)]
    variants += sorted({r["condition"] for r in probes} - set(variants))
    pairs: dict[tuple, list] = defaultdict(list)
    left: dict[tuple, dict] = defaultdict(lambda: {"probe_failed": 0, "base_failed": 0, "base_missing": 0})
    for p in probes:
        b = base.get((p["model"], p["domain"], p["item_id"]))
        why = ("base_missing" if b is None else "probe_failed" if p["outcome"] == "failed"
               else "base_failed" if b["outcome"] == "failed" else None)
        if why:
            left[(p["model"], p["condition"])][why] += 1
            continue
        pairs[(p["model"], p["condition"], p["domain"])].append((p, b, by_key.get(p.get("first_key"))))
    out = {"models": models, "domains": domains, "families": families, "variants": variants, "table": [],
           "domains_table": [], "families_table": [], "base": []}
    for m in models:
        for v in variants:
            def pick(doms):
                return [x for d in doms for x in pairs.get((m, v, d), [])]
            if any(pairs.get((m, v, d)) for d in domains) or left.get((m, v)):
                out["table"].append(dict(model=m, variant=v, **left[(m, v)],
                                         **swap_cell(pick(domains), resamples, seed, ("swap", m, v, "all"))))
            for d in domains:
                if pairs.get((m, v, d)):
                    out["domains_table"].append(dict(model=m, variant=v, domain=d, **swap_cell(
                        pick([d]), resamples, seed, ("swap", m, v, "domain", d))))
            for f in families:
                sel = pick([d for d in domains if fam_of[d] == f])
                if sel:
                    out["families_table"].append(dict(model=m, variant=v, family=f, **swap_cell(
                        sel, resamples, seed, ("swap", m, v, "family", f))))
        mine = [r for r in base.values() if r["model"] == m]
        out["base"].append({"model": m, "answers": len(mine), "right": sum(r["outcome"] == "correct" for r in mine),
                            "failed": sum(r["outcome"] == "failed" for r in mine)})
    return out


# --- consistency -------------------------------------------------------------------------------------------------

def consistency_cell(pairs: list[tuple[dict, dict]], resamples: int, seed: int, tag: tuple) -> dict:
    """consistency and robust accuracy [CI] over (rephrase row, Q4 row) pairs, both answered."""
    vecs = []
    for r, q in pairs:
        a, b = q["outcome"] == "correct", r["outcome"] == "correct"
        vecs.append((r, np.array([a == b, a and b, 1.0, a, b], float)))
    X, strata = _cells(vecs, 5)
    return {"pairs": len(pairs), "items": len(X),
            "both_right": int(X[:, 1].sum()) if len(X) else 0,
            "consistent": int(X[:, 0].sum()) if len(X) else 0,
            "consistency": estimate(X[:, [0, 2]] if len(X) else X, strata, _ratio, resamples,
                                    bootstrap_seed(seed, "consistency", *tag)).as_dict(),
            "robust_accuracy": estimate(X[:, [1, 2]] if len(X) else X, strata, _ratio, resamples,
                                        bootstrap_seed(seed, "robust_accuracy", *tag)).as_dict(),
            "acc_q4": _share(X, 3, 2), "acc_rephrase": _share(X, 4, 2)}


def consistency_tables(rows: list[dict], by_key: dict[str, dict], resamples: int, seed: int) -> dict:
    models = sorted({r["model"] for r in rows})
    domains, fam_of, families = _scopes(rows)
    pairs: dict[tuple, list] = defaultdict(list)
    left: dict[str, dict] = defaultdict(lambda: {"q4_missing": 0, "failed": 0})
    for r in rows:
        q = by_key.get(r.get("first_key"))
        if q is None:
            left[r["model"]]["q4_missing"] += 1
        elif r["outcome"] == "failed" or q["outcome"] == "failed":
            left[r["model"]]["failed"] += 1
        else:
            pairs[(r["model"], r["domain"])].append((r, q))
    out = {"models": models, "domains": domains, "families": families, "table": [], "families_table": []}
    for m in models:
        for d in domains + (["all"] if len(domains) > 1 else []):
            sel = [x for dd in (domains if d == "all" else [d]) for x in pairs.get((m, dd), [])]
            if sel or d == "all" or len(domains) == 1:
                out["table"].append(dict(model=m, domain=d, rung=4, **consistency_cell(
                    sel, resamples, seed, ("consistency", m, d))))
        for f in families:
            sel = [x for d in domains if fam_of[d] == f for x in pairs.get((m, d), [])]
            if sel:
                out["families_table"].append(dict(model=m, family=f, rung=4, **consistency_cell(
                    sel, resamples, seed, ("consistency", m, "family", f))))
        out.setdefault("left_out", []).append(dict(model=m, **left[m]))
    return out


def probe_tables(experiment: str, rows: list[dict], by_key: dict[str, dict], resamples: int, seed: int) -> dict:
    """The tables of one probe experiment (`stats.compute` calls this for swap and consistency)."""
    if experiment == "swap":
        return swap_tables(rows, by_key, resamples, seed)
    return consistency_tables(rows, by_key, resamples, seed)
