"""Row rules of RAVEN-style progressive matrices, and the rule margin.

An attribute's values in the 3x3 matrix are read in rows; the bottom-right value is missing. A hypothesis is a rule
with its parameter: ("constant", 0), ("progression", d) for d in +-1, +-2, ("arithmetic", s) for s = +1 (col3 = col1
+ col2) or -1 (col3 = col1 - col2), and ("distribute-three", S) for a set S of three distinct values. It fits the
eight visible values when every full row obeys it and row 3's two visible values can start a row that obeys it with
the missing value inside the attribute's domain 1..M; a hypothesis whose prediction falls outside 1..M never fits.

Rule margin (unit "panel values"): the fewest of the eight visible values that must change before a hypothesis other
than the one that fits would fit. Rows are independent given a hypothesis, so the count is a sum of per-row minima,
each found by enumerating the rows the hypothesis allows.
"""
from __future__ import annotations

import functools
from itertools import combinations

import numpy as np

from grip.draws import Draws

ATTRS = ("number", "type", "size", "colour")
RULES = ("constant", "progression", "arithmetic", "distribute-three")
CONST, PROG, ARITH, DIST = RULES
STEPS = (1, -1, 2, -2)


def admits(attr: str) -> tuple[str, ...]:
    """Arithmetic applies to the quantities that add up: number and colour (grey level) only."""
    return RULES if attr in ("number", "colour") else (CONST, PROG, DIST)


def domain_size(attr: str, grid: int) -> int:
    return {"number": grid * grid, "type": 5, "size": 5, "colour": 6}[attr]


@functools.lru_cache(maxsize=None)
def allowed_rows(rule: str, param, m: int) -> tuple[tuple[int, int, int], ...]:
    """Every full row (v1, v2, v3) within 1..m that the hypothesis allows."""
    vals = range(1, m + 1)
    if rule == CONST:
        return tuple((v, v, v) for v in vals)
    if rule == PROG:
        return tuple((v, v + param, v + 2 * param) for v in vals if 1 <= v + 2 * param <= m)
    if rule == ARITH:
        return tuple((x, y, x + param * y) for x in vals for y in vals if 1 <= x + param * y <= m)
    a, b, c = param
    return ((a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a))


@functools.lru_cache(maxsize=None)
def hypotheses(attr: str, grid: int) -> tuple[tuple[str, object], ...]:
    """Every hypothesis the attribute admits that some row can obey (a step of 2 needs five values)."""
    m = domain_size(attr, grid)
    out: list[tuple[str, object]] = [(CONST, 0)] + [(PROG, d) for d in STEPS]
    if ARITH in admits(attr):
        out += [(ARITH, 1), (ARITH, -1)]
    out += [(DIST, s) for s in combinations(range(1, m + 1), 3)]
    return tuple(h for h in out if allowed_rows(h[0], h[1], m))


@functools.lru_cache(maxsize=None)
def _table(attr: str, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """All allowed rows of all hypotheses stacked (N x 3), and where each hypothesis' rows start."""
    m = domain_size(attr, grid)
    blocks = [allowed_rows(h[0], h[1], m) for h in hypotheses(attr, grid)]
    starts = np.cumsum([0] + [len(b) for b in blocks[:-1]])
    return np.array([r for b in blocks for r in b], dtype=np.int16), starts


def split(values8) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    v = tuple(int(x) for x in values8)
    return v[0:3], v[3:6], v[6:8]


@functools.lru_cache(maxsize=None)
def _row_changes(attr: str, grid: int, row: tuple[int, ...]) -> np.ndarray:
    """Per hypothesis: the fewest changes that turn `row` (a full row, or row 3's two visible values) into one that
    the hypothesis allows (into its first two values). Cached per row: a build's matrices share few distinct rows."""
    table, starts = _table(attr, grid)
    out = np.minimum.reduceat((table[:, :len(row)] != np.array(row)).sum(1), starts)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=8192)
def changes_needed(attr: str, grid: int, values8: tuple[int, ...]) -> tuple[int, ...]:
    """Per hypothesis (order of `hypotheses`): the fewest visible values to change so that it fits. Rows are
    independent, so this is the sum over rows of the fewest changes to one of the rows it allows (row 3: to the
    first two values of one)."""
    r1, r2, r3 = (_row_changes(attr, grid, r) for r in split(values8))
    return tuple((r1 + r2 + r3).tolist())


def prediction(h: tuple[str, object], values8) -> int:
    """The missing value a hypothesis that fits as drawn gives."""
    a, b = split(values8)[2]
    rule, p = h
    if rule == CONST:
        return a
    if rule == PROG:
        return b + p
    if rule == ARITH:
        return a + p * b
    return next(v for v in p if v not in (a, b))


@functools.lru_cache(maxsize=8192)
def fitting(attr: str, grid: int, values8: tuple[int, ...]) -> tuple[tuple[tuple[str, object], int], ...]:
    """(hypothesis, missing value) for every hypothesis that fits the visible values as drawn."""
    cost = changes_needed(attr, grid, values8)
    return tuple((h, prediction(h, values8)) for h, c in zip(hypotheses(attr, grid), cost) if c == 0)


@functools.lru_cache(maxsize=8192)
def rule_margin(attr: str, grid: int, values8: tuple[int, ...]) -> int:
    """0 unless exactly one hypothesis fits; then the fewest visible values to change before another one fits."""
    cost = sorted(changes_needed(attr, grid, values8))
    return 0 if cost[0] != 0 or cost[1] == 0 else cost[1]


# --- drawing rows for a rule (sampling only) ---------------------------------------------------------------------

def rows_for(rng: np.random.Generator, draws: Draws, attr: str, grid: int, rule: str,
             fixed: bool = False) -> tuple[int, ...]:
    """Nine values in reading order (the last one is the missing panel) that obey `rule`.
    `fixed`: one value over the whole matrix (the attributes that draw no rule at levels 1-2). `draws`: `rng`'s
    scalar draws (`grip.draws`); its array draws and shuffles go through `rng`."""
    m = domain_size(attr, grid)
    if rule == CONST:
        if fixed:
            return (draws.integers(1, m + 1),) * 9
        return tuple(v for v in rng.integers(1, m + 1, size=3).tolist() for _ in range(3))
    if rule == PROG:
        steps = [d for d in STEPS if m - 2 * abs(d) >= 2]    # at least two starting values, so rows can differ
        d = steps[draws.integers(len(steps))]
        starts = [v for v in range(1, m + 1) if 1 <= v + 2 * d <= m]
        s1, s2 = (starts[i] for i in draws.subset(len(starts), 2))
        s3 = starts[draws.integers(len(starts))]
        return tuple(v + i * d for v in (s1, s2, s3) for i in range(3))
    if rule == ARITH:
        sign = 1 if draws.random() < 0.5 else -1
        rows = allowed_rows(ARITH, sign, m)
        return tuple(v for i in draws.subset(len(rows), 3) for v in rows[i])
    # distribute-three: a Latin square over a random set S, rows cyclic shifts of one random permutation
    s = [int(v) + 1 for v in rng.permutation(m)[:3]]
    shift = 1 if draws.random() < 0.5 else -1
    return tuple(s[(c - shift * r) % 3] for r in range(3) for c in range(3))


def edit_for(draws: Draws, attr: str, grid: int, rule: str, values9) -> tuple[int, int] | None:
    """Q5's edit of row 3, column 2 for an arithmetic or distribute-three attribute: (its new value, the new missing
    value). Distribute-three: the old missing value, the only other one that keeps row 3 a permutation of S.
    Arithmetic: a value w != the old one, shown in another visible panel, with col1 +- w in range."""
    v = values9
    if rule == DIST:
        return v[8], v[7]
    m = domain_size(attr, grid)
    (_, sign), _ = fitting(attr, grid, tuple(v[:8]))[0]
    ws = [w for w in range(1, m + 1) if w != v[7] and 1 <= v[6] + sign * w <= m and w in v[:7]]
    if not ws:
        return None
    w = ws[draws.integers(len(ws))]
    return w, v[6] + sign * w


def alternative(draws: Draws, attr: str, m: int, correct: int, up: bool, avoid=()) -> int | None:
    """The tree's alternative value on the side `up` of the correct one, None if there is none. Size and grey
    alternatives lie two or more levels away (`far_enough`), so no candidate hinges on one step of either."""
    side = [v for v in range(1, m + 1) if (v > correct) == up and far_enough(attr, v, correct) and v not in avoid]
    return side[draws.integers(len(side))] if side else None


def far_enough(attr: str, value: int, correct: int) -> bool:
    return abs(value - correct) >= (2 if attr in ("size", "colour") else 1)
