"""The summary in build.json, accumulated row by row as the builder writes (or re-reads) items, so a build's memory
does not grow with n: answer distributions, constant-answer baselines per question and per rung, margins, levels,
attempts and rejections.

An answer distribution is a list of {"answer": <the answer's key as typed JSON>, "count": n}, most common first
(ties: the answer met first), at most DISTRIBUTION_TOP entries; `distinct_answers` counts them all. A constant is
the same typed JSON. What is held per question is one count per distinct answer key and, for numeric answers, two
floats per item (value and tolerance), which the exact numeric baseline needs.
"""
from __future__ import annotations

import json
from array import array
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

DISTRIBUTION_TOP = 40


def key_json(ans):
    """The comparison key of a typed answer (`Answer.key()`) as a JSON value: a count as an int, a number rounded
    as written (a float), a choice as its option, an ordered answer as a list, a record as {field: key}."""
    from grip.answers import Number, Ordered, Record
    if isinstance(ans, Record):
        return {n: key_json(a) for n, a in ans.value}
    if isinstance(ans, Ordered):
        return list(ans.value)
    if isinstance(ans, Number):
        return ans.key()
    return ans.value


def _canon(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _numeric_hits(v: np.ndarray, tol: np.ndarray, period, cands: np.ndarray) -> np.ndarray:
    """For each candidate constant, how many items accept it (|v - c| <= tol, circular when `period`): a sweep over
    the sorted interval ends, O(n log n), where testing every candidate against every item is O(n^2)."""
    lo, hi = np.sort(v - tol), np.sort(v + tol)

    def covering(x):
        return np.searchsorted(lo, x, side="right") - np.searchsorted(hi, x, side="left")

    if not period:
        return covering(cands)
    # Values lie in [0, period). An item whose tolerance spans half the circle accepts every constant; for the
    # others an interval [v - tol, v + tol] covers c, c + period or c - period, never two of them.
    wide = 2 * tol >= period
    n_wide = int(np.count_nonzero(wide))
    lo, hi = np.sort((v - tol)[~wide]), np.sort((v + tol)[~wide])
    c = cands % period
    return covering(c) + covering(c + period) + covering(c - period) + n_wide


class _Pool:
    """The answers of one question (or of one rung across its questions)."""

    def __init__(self):
        self.counts: dict[str, int] = {}     # canonical key JSON -> count, in the order first met
        self.first: dict[str, int] = {}      # canonical key JSON -> sequence number of the first item with it
        self.numeric = True
        self.period = None
        self.values, self.tols = array("d"), array("d")
        self.n = 0

    def add(self, ans, seq: int) -> None:
        from grip.answers import Number
        k = _canon(key_json(ans))
        if k in self.counts:
            self.counts[k] += 1
        else:
            self.counts[k] = 1
            self.first[k] = seq
        if self.n == 0:
            self.period = getattr(ans, "period", None)
        self.n += 1
        if self.numeric and isinstance(ans, Number):
            self.values.append(float(ans.value))
            self.tols.append(ans.tol_abs() * (1 + 1e-9) + 1e-9)   # the slack of Number.matches
        elif self.numeric:
            self.numeric = False
            self.values, self.tols = array("d"), array("d")

    def merge(self, other: "_Pool") -> None:
        if self.n == 0:
            self.period = other.period
        for k, c in other.counts.items():
            if k in self.counts:
                self.counts[k] += c
                self.first[k] = min(self.first[k], other.first[k])
            else:
                self.counts[k], self.first[k] = c, other.first[k]
        self.n += other.n
        self.numeric = self.numeric and other.numeric
        if self.numeric:
            self.values.extend(other.values)
            self.tols.extend(other.tols)
        else:
            self.values, self.tols = array("d"), array("d")

    def ranked(self) -> list[str]:
        return sorted(self.counts, key=lambda k: (-self.counts[k], self.first[k]))

    def baseline(self) -> dict:
        """Accuracy of the best single constant answer over these items (what a model that ignores the image could
        score). Exact for counts, choices, lists and records (the modal key); for numbers, the best constant among
        the observed values (the smallest on a tie), each item accepting it within its own tolerance."""
        if self.numeric and self.n:
            v = np.frombuffer(self.values, dtype=float)
            tol = np.frombuffer(self.tols, dtype=float)
            cands = np.unique(v)
            hits = _numeric_hits(v, tol, self.period, cands)
            best = int(np.argmax(hits))   # the first maximum: the smallest constant
            return {"share": int(hits[best]) / self.n, "constant": float(cands[best])}
        top = min(self.counts, key=lambda k: (-self.counts[k], self.first[k]))
        return {"share": self.counts[top] / self.n, "constant": json.loads(top)}

    def distribution(self) -> list[dict]:
        return [{"answer": json.loads(k), "count": self.counts[k]} for k in self.ranked()[:DISTRIBUTION_TOP]]


@dataclass
class _Question:
    position: int
    pool: _Pool = field(default_factory=_Pool)
    margin_ratio_min: float = float("inf")


class Summary:
    """`add(row)` for every row of a store in index order, then `result()`: the summary part of build.json.
    Twin statistics come from `grip.twins.TwinStats` where that module has it."""

    def __init__(self, dom):
        self.dom = dom
        self.items = 0
        self.attempts = 0
        self.rejections: Counter = Counter()
        self.levels: Counter = Counter()
        self.questions: dict[str, _Question] = {}
        self.positions: dict[int, list[str]] = {}   # position -> question ids, in the order first met
        self.twins = _twin_stats()

    def add(self, row: dict) -> None:
        from grip.answers import answer_from_json
        seq = self.items
        self.items += 1
        self.attempts += row["attempts"]
        self.rejections.update(row["rejections"])
        self.levels[row["level"]] += 1
        for q in row["questions"]:
            st = self.questions.get(q["id"])
            if st is None:
                st = self.questions[q["id"]] = _Question(q["position"])
                self.positions.setdefault(q["position"], []).append(q["id"])
            st.pool.add(answer_from_json(q["answer"]), seq)
            m = q["margin"]
            st.margin_ratio_min = min(st.margin_ratio_min,
                                      m["value"] / m["threshold"] if m["threshold"] else float("inf"))
        if self.twins is not None:
            self.twins.add(row)

    def _rung(self, qids: list[str]) -> dict:
        if len(qids) == 1:
            pool = self.questions[qids[0]].pool
        else:
            pool = _Pool()
            for qid in qids:   # in the order first met: the first answer of the rung sets a period
                pool.merge(self.questions[qid].pool)
        return {"question_ids": sorted(qids), "constant_baseline": pool.baseline()}

    def result(self) -> dict:
        dom = self.dom
        out = {
            "domain": dom.id, "version": dom.version, "family": dom.family, "title": dom.title, "items": self.items,
            "levels": {str(k): v for k, v in sorted(self.levels.items())},
            "single_level": len(self.levels) == 1,
            "rungs": {str(p): self._rung(qids) for p, qids in sorted(self.positions.items())},
            "attempts": {"total": self.attempts, "rejections_by_reason": dict(sorted(self.rejections.items()))},
            "questions": {qid: {"position": st.position, "distinct_answers": len(st.pool.counts),
                                "answer_distribution": st.pool.distribution(),
                                "constant_baseline": st.pool.baseline(),
                                "margin_ratio_min": st.margin_ratio_min}
                          for qid, st in sorted(self.questions.items(), key=lambda kv: kv[1].position)},
        }
        if self.twins is not None:
            twins = self.twins.result()
            if twins is not None:
                out["twins"] = twins
        return out


def _twin_stats():
    try:
        from grip.twins import TwinStats
    except ImportError:   # no grip.twins, or one without twin statistics
        return None
    return TwinStats()


def summarise(dom, rows) -> dict:
    """The summary of rows already in hand (an iterable: it is read once)."""
    s = Summary(dom)
    for r in rows:
        s.add(r)
    return s.result()


def constant_baseline(answers: list[dict]) -> dict:
    """The constant-answer baseline of answer JSONs (see `_Pool.baseline`)."""
    from grip.answers import answer_from_json
    pool = _Pool()
    for i, a in enumerate(answers):
        pool.add(answer_from_json(a), i)
    return pool.baseline()
