"""Nested hexagons: H1 is a regular hexagon (random rotation, stated side); each next hexagon has its corners a
fraction t_i = k_i/n_i of the way along the sides of the one around it (all six in the same rotational sense), so
it shrinks by sqrt(a_i), a_i = 1 - t_i + t_i^2, and turns counter-clockwise by delta_i = arg((1 - t_i) + t_i w),
w = exp(i pi/3). Tick marks divide the parents' sides (level 3: only H1, H3, H5, ...). The ladder walks count ->
is the innermost parallel to H1 -> H2's side -> H5's side vs two thirds of H1's -> turn direction after H2 is moved
to the midpoints; the open question asks for the innermost hexagon's turn.

Exactness: parallelism (the summed turn a multiple of 60 degrees) and the 30-degree ties are decided on the product
of the Eisenstein integers (n_i - k_i) + k_i w (`grip.geometry.eisenstein_turn_class`), never on a float sum.
Ambiguity boundaries: a turn within `TURN_GAP_DEG` of parallel that is not exactly parallel (Q2); the innermost side
ratio within `RATIO_GAP` of h (Q4); the edited turn within `TURN_GAP_DEG` of 0, 30 or 60 degrees (Q5).
Q4 asks about H5, four inscriptions in, which every count has (H5 is the innermost at N = 5), against one fixed
h = 2/3: its ratio spans [0.573, 0.742] whatever N, so both answers occur at every count and the wording is the same
for all of them (an h that followed N, as the innermost's ratio would need, would state the count in words).
Q3 names no length: H1's side is read off the figure, where it is printed (stated in the text, it and the few
first fractions would all but fix Q3's answer).
Legibility: the open question's turn is computed from the ticks at levels 1-2 (+-2 deg); at level 3 half the
fractions must be judged by eye, so its tolerance is widened to +-4 deg (`TURN_TOL_DEG`). The innermost hexagon is
not labelled with its number (that label would state Q1's answer). Crowding: every corner triangle has inradius
>= `OUTLINE_CLEAR_PX` and non-consecutive outlines stay that far apart (Q1's margin); ticks are drawn in their
hexagon's own colour, 10 px, each half shortened where it would come within `TICK_CLEAR_PX` of another hexagon's
outline, and a scene whose shortened tick falls below `TICK_MIN_PX`, or whose ticks of two hexagons come within
`TICK_CLEAR_PX`, is rejected (the open question's margin). The legibility test runs before a scene is returned, so
the balance targets are still drawn first.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

import numpy as np
from scipy.special import gammaln
import shapely
from shapely.geometry import Polygon

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.geometry import (corner_triangles, eisenstein, eisenstein_mul, eisenstein_turn_class,
                           fitted_ticks, nest, outline_clearance, regular_polygon, regular_ratio_sq, regular_turn_deg,
                           tick_stats, triangle_inradius)
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY_DARK, LABEL, OKABE_ITO, TEXT, Style
from grip.renderers.text import draw_text_px, place_label, text_box_px, text_size

SIDES_CM = (6, 8, 10, 12)
COUNTS = (5, 7, 9)
Q4_DEPTH = 4                                 # Q4 asks about H5: the hexagon after four inscriptions
H = Fraction(2, 3)                           # Q4's stated fraction of H1's side
H_WORDS = ("two thirds", 3, 2)               # words, q, p (h = p/q)
DIVISIONS = {1: (2, 3, 4, 6), 2: (2, 3, 4, 5, 6), 3: (2, 3, 4, 5, 6)}
TURN_GAP_DEG, RATIO_GAP = 4.0, 0.02
TURN_TOL_DEG = {1: 2.0, 2: 2.0, 3: 4.0}
INNER_MIN_PX, TICK_GAP_PX, TICK_PX = 100.0, 14.0, 10.0
OUTLINE_CLEAR_PX = 8.0                       # corner-triangle inradius and gap between non-consecutive outlines
TICK_CLEAR_PX = 3.0                          # every tick point keeps this far from other outlines and their ticks
TICK_MIN_PX = 6.0                            # a tick shortened near another outline keeps at least this length
CENTER = (384.0, 384.0)
TRIES = 300                                  # tries per target before the sampler rejects
LEADER_CLEAR_PX = 18.0                       # H2's leader dot and crossing keep this far from H1
HALF = Fraction(1, 2)
YES, NO, LONGER, SHORTER, CW, CCW = "yes", "no", "longer", "shorter", "clockwise", "counterclockwise"
DIR_ALIASES = (("cw", CW), ("ccw", CCW), ("anticlockwise", CCW), ("anti-clockwise", CCW),
               ("counter-clockwise", CCW))
COLOURS = (BLACK, OKABE_ITO["blue"])
H5_WORDS = "H5 (the fifth hexagon, counting H1 as the first and going inwards)"


@dataclass(frozen=True)
class Scene:
    level: int                      # 1..3: divisions, ticks (level 3: odd hexagons only), tolerances
    side_cm: int                    # H1's stated side, one of SIDES_CM
    radius_px: float                # H1's circumradius (= side), 320..340 px
    rotation_deg: float             # angle of H1's first vertex, 0..60 degrees counter-clockwise from +x
    divisions: tuple[int, ...]      # n_i for H_{i+1} inside H_i, i = 1..N-1
    ticks: tuple[int, ...]          # k_i, 1..n_i - 1: H_{i+1}'s corners at t_i = k_i/n_i; t_1 != 1/2


# --- exact quantities --------------------------------------------------------------------------------------------

def fractions_t(scene: Scene) -> list[Fraction]:
    return list(_fractions(scene))


@lru_cache(maxsize=256)   # every answer, margin and legibility rule starts from them
def _fractions(scene: Scene) -> tuple[Fraction, ...]:
    return tuple(Fraction(k, n) for k, n in zip(scene.ticks, scene.divisions))


def side_ratio(ts) -> float:
    """Innermost side / outer side: prod sqrt(a_i)."""
    return math.sqrt(float(math.prod(regular_ratio_sq(6, t) for t in ts)))


@lru_cache(maxsize=None)   # a few dozen fractions per level, asked thousands of times by the sampler
def _per_fraction(t: Fraction) -> tuple[tuple[int, int], float]:
    """(Eisenstein integer, turn in degrees) of one fraction."""
    return eisenstein(t), regular_turn_deg(6, t)


@lru_cache(maxsize=None)
def _a_float(t: Fraction) -> float:
    """a = 1 - t + t^2 as a float (the sampler's quick filter; answers use `side_ratio`)."""
    return float(regular_ratio_sq(6, t))


def h5_ratio(ts) -> float:
    """H5's side / H1's side."""
    return _h5_ratio(tuple(ts)[:Q4_DEPTH])


@lru_cache(maxsize=256)   # the ladder, Q4's rephrasing and the minimal pair's candidates ask it again and again
def _h5_ratio(ts: tuple[Fraction, ...]) -> float:
    return side_ratio(ts)


def turn_mod60(ts) -> float:
    """Summed turn modulo 60 degrees, with the exact classes 0 and 30 returned exactly (the product and the sum
    taken in the order of `ts`, as `eisenstein_product` and a plain sum do)."""
    per = [_per_fraction(t) for t in ts]
    z = (1, 0)
    for e, _ in per:
        z = eisenstein_mul(z, e)
    cls = eisenstein_turn_class(z)
    if cls == "0":
        return 0.0
    if cls == "30":
        return 30.0
    return sum(d for _, d in per) % 60.0


def parallel_gap_deg(ts) -> float:
    """Distance of the summed turn from the nearest multiple of 60 degrees (0 when exactly parallel)."""
    m = turn_mod60(ts)
    return min(m, 60.0 - m)


def direction_gap_deg(ts) -> float:
    """Distance of the summed turn (mod 60) from 0, 30 and 60 degrees: how clearly it is cw or ccw."""
    m = turn_mod60(ts)
    return min(m, abs(m - 30.0), 60.0 - m)


@lru_cache(maxsize=64)   # every legibility rule, margin and the renderer start from it
def _layout(scene: Scene) -> tuple[tuple[tuple[float, float], ...], ...]:
    outer = regular_polygon(CENTER, scene.radius_px, 6, scene.rotation_deg)
    return tuple(nest(outer, [float(t) for t in fractions_t(scene)]))


def layout(scene: Scene) -> list[tuple[tuple[float, float], ...]]:
    return list(_layout(scene))


def ticked(scene: Scene) -> list[int]:
    """Indices (0-based) of the parent hexagons whose sides carry ticks."""
    return [i for i in range(len(scene.ticks)) if scene.level < 3 or i % 2 == 0]


def sides_px(scene: Scene) -> list[float]:
    return list(_sides_px(scene))


@lru_cache(maxsize=64)
def _sides_px(scene: Scene) -> tuple[float, ...]:
    return tuple(math.dist(h[0], h[1]) for h in _layout(scene))


def min_inradius_px(scene: Scene) -> float:
    hx = _layout(scene)
    return min(triangle_inradius(*tri) for i in range(len(hx) - 1) for tri in corner_triangles(hx[i], hx[i + 1]))


@lru_cache(maxsize=64)   # asked by the sampler's legibility test and the margins
def outline_clearance_px(scene: Scene) -> float:
    """How far apart the outlines stay where they do not touch by construction: the smallest corner-triangle
    inradius between consecutive hexagons and the smallest gap between non-consecutive ones (px)."""
    return min(min_inradius_px(scene), outline_clearance(_layout(scene)))


@lru_cache(maxsize=64)   # asked by the sampler's legibility test, the margins and the renderer alike
def drawn_ticks(scene: Scene) -> tuple:
    """The tick marks as drawn: `TICK_PX` long, each half shortened where it would come within `TICK_CLEAR_PX` of
    another hexagon's outline ((end, end, hexagon index) in px)."""
    return tuple(fitted_ticks(_layout(scene), scene.divisions, ticked(scene), fractions_t(scene), TICK_PX,
                              TICK_CLEAR_PX))


@lru_cache(maxsize=64)
def tick_legibility_px(scene: Scene) -> float:
    """The tick rule as one margin against `TICK_CLEAR_PX`: the smallest distance between ticks of different
    hexagons, and the shortest tick's excess over `TICK_MIN_PX` added to the clearance (a tick shorter than
    `TICK_MIN_PX` fails)."""
    shortest, apart = tick_stats(drawn_ticks(scene))
    return min(apart, TICK_CLEAR_PX + shortest - TICK_MIN_PX)


def min_tick_gap_px(scene: Scene) -> float:
    s = sides_px(scene)
    return min(s[i] / scene.divisions[i] for i in ticked(scene))


def legible(scene: Scene) -> bool:
    return (sides_px(scene)[-1] >= INNER_MIN_PX and min_tick_gap_px(scene) >= TICK_GAP_PX
            and outline_clearance_px(scene) >= OUTLINE_CLEAR_PX and tick_legibility_px(scene) >= TICK_CLEAR_PX)


# --- sampling ----------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)   # read-only: every try of the sampler spells its fractions from it
def _values(level: int) -> dict[Fraction, list[tuple[int, int]]]:
    """Reduced fraction -> its (n, k) spellings on the level's tick grids."""
    out: dict[Fraction, list[tuple[int, int]]] = {}
    for n in DIVISIONS[level]:
        for k in range(1, n):
            out.setdefault(Fraction(k, n), []).append((n, k))
    return out


def _sorted_rows(v: int, m: int) -> np.ndarray:
    """`itertools.combinations_with_replacement(range(v), m)` as an int64 array (the same rows, the same order):
    each row of length j - 1, in order, followed by every value from its last one up."""
    rows = np.arange(v, dtype=np.int64)[:, None]
    for _ in range(m - 1):
        reps = v - rows[:, -1]
        start = np.cumsum(reps) - reps
        new = np.repeat(rows[:, -1], reps) + np.arange(reps.sum()) - np.repeat(start, reps)
        rows = np.column_stack([np.repeat(rows, reps, axis=0), new])
    return rows


@lru_cache(maxsize=None)
def multisets(level: int, m: int):
    """Every multiset of m fractions of the level, as (values, index rows, side ratio, distance of the turn from
    parallel in degrees (exactly 0 when parallel), probability under independent uniform draws of n_i then k_i).
    Sampling rows by probability within a target's rows draws the fractions from their distribution given the
    targets. Float sums only pick the near-parallel candidates; the Eisenstein test decides them."""
    spell = _values(level)
    vals = sorted(spell)
    divs = DIVISIONS[level]
    p_one = np.array([sum(1 / len(divs) / (n - 1) for n, _ in spell[t]) for t in vals])
    rows = _sorted_rows(len(vals), m)
    log_a = np.log([float(regular_ratio_sq(6, t)) for t in vals])
    ratio = np.exp(0.5 * log_a[rows].sum(axis=1))
    turn = np.array([regular_turn_deg(6, t) for t in vals])[rows].sum(axis=1) % 60.0
    gap = np.minimum(turn, 60.0 - turn)
    eis = [eisenstein(t) for t in vals]
    for r in np.flatnonzero(gap < 1e-6):
        z = (1, 0)
        for i in rows[r].tolist():
            z = eisenstein_mul(z, eis[i])
        if eisenstein_turn_class(z) == "0":
            gap[r] = 0.0
    # counts[r, i]: how often value i occurs in row r; gammaln of the counts + 1 looked up (the same elementwise)
    counts = np.bincount((np.arange(len(rows))[:, None] * len(vals) + rows).ravel(),
                         minlength=len(rows) * len(vals)).reshape(len(rows), len(vals))
    perms = np.exp(gammaln(m + 1) - gammaln(np.arange(1, m + 2))[counts].sum(axis=1))   # orderings of each multiset
    prob = perms * np.prod(p_one[rows], axis=1)
    return vals, rows, ratio, gap, prob


def parallel_sets(level: int, m: int) -> list[tuple[Fraction, ...]]:
    """The multisets of m fractions whose innermost hexagon is exactly parallel to H1."""
    vals, rows, _, gap, _ = multisets(level, m)
    return [tuple(vals[i] for i in rows[r]) for r in np.flatnonzero(gap == 0.0)]


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"nested_hexagons: level must be 1..3, got {level}")
    # Targets first: N uniform, Q4 uniform within N, (Q2, Q5) uniform within (N, Q4).
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    n_hex = d.pick(COUNTS)
    q4 = (LONGER, SHORTER)[d.integers(2)]
    q2 = (YES, NO)[d.integers(2)]
    q5 = (CW, CCW)[d.integers(2)]
    for _ in range(TRIES):
        s = build(rng, d, level, n_hex, q2, q4, q5)
        if s is not None:
            return s
    raise Reject("no_scene_for_cell")


_Q4_ABOVE, _Q4_BELOW = float(H) + RATIO_GAP + 1e-9, float(H) - RATIO_GAP - 1e-9


def _q4_ok(ratio, q4: str):
    """H5's side ratio(s) on the target side of h, with the margin."""
    return ratio > _Q4_ABOVE if q4 == LONGER else ratio < _Q4_BELOW


@lru_cache(maxsize=None)
def _pool(level: int, n_hex: int, q2: str, q4: str) -> tuple[np.ndarray, np.ndarray, float]:
    """The multisets (rows of `multisets`) that meet the Q2 target with its margin (and Q4's where H5 is the
    innermost, N = 5) and hold some fraction other than 1/2, with the running sum of their probabilities and its
    total (fixed per target)."""
    vals, rows, ratio, gap, prob = multisets(level, n_hex - 1)
    half = vals.index(HALF)
    side = _q4_ok(ratio, q4) if n_hex - 1 == Q4_DEPTH else np.ones(len(rows), bool)
    turn = gap == 0.0 if q2 == YES else gap >= TURN_GAP_DEG
    pool = np.flatnonzero(side & turn & (rows != half).any(axis=1))
    w = prob[pool]
    return pool, np.cumsum(w), w.sum()


@lru_cache(maxsize=None)
def _per_value(level: int) -> tuple[list[list[tuple[int, int]]], list[tuple[int, int]], list[float], list[float], int]:
    """Per value of `multisets(level, .)` (by index): its (n, k) spellings, Eisenstein integer, turn in degrees and
    a as a float, and the index of 1/2: the sampler's tries work on indices, not on Fractions."""
    spell = _values(level)
    vals = sorted(spell)
    return ([spell[t] for t in vals], [_per_fraction(t)[0] for t in vals], [_per_fraction(t)[1] for t in vals],
            [_a_float(t) for t in vals], vals.index(HALF))


def _firsts(ts: list[int], eis, turn, half: int, q5: str) -> list[int]:
    """Positions i (value indices `ts`, as in `build`) whose value can be H2's: with H2 at the midpoints instead,
    the turn of [1/2] + the other values is clearly (`TURN_GAP_DEG`) on the q5 side of 30 degrees. The same test
    as `direction_gap_deg` and `_direction` of those fractions: the Eisenstein products come from prefix and
    suffix products (exact integers, so any order gives the same class), the float sums are taken in order."""
    pre = [eis[half]]                         # pre[i]: 1/2 and ts[:i]
    for t in ts:
        pre.append(eisenstein_mul(pre[-1], eis[t]))
    suf = [(1, 0)]                            # reversed: suf[j]: ts[m - j:]
    for t in reversed(ts):
        suf.append(eisenstein_mul(eis[t], suf[-1]))
    m = len(ts)
    head, out = turn[half], []                # head: the turns of 1/2 and ts[:i] summed in order, as `sum` does
    for i, t in enumerate(ts):
        # classes 0 and 30 give a gap of 0: never a first
        if t != half and eisenstein_turn_class(eisenstein_mul(pre[i], suf[m - 1 - i])) == "other":
            s = head
            for j in ts[i + 1:]:
                s += turn[j]
            mod = s % 60.0
            if min(mod, abs(mod - 30.0), 60.0 - mod) >= TURN_GAP_DEG and (CCW if mod < 30.0 else CW) == q5:
                out.append(i)
        head += turn[t]
    return out


@lru_cache(maxsize=None)
def _triples(k: int) -> tuple[tuple[int, int, int], ...]:
    return tuple(combinations(range(k), Q4_DEPTH - 1))


def _fronts(a1: float, a: list[float], q4: str) -> list[tuple[int, int, int]]:
    """The triples c of positions in `a` (in `combinations` order) for which sqrt(a1 * prod(a[c])) meets Q4's
    target: the same products as `math.prod`, whose start 1 leaves the first factor as it is."""
    if q4 == LONGER:
        return [c for c in _triples(len(a)) if math.sqrt(a1 * (a[c[0]] * a[c[1]] * a[c[2]])) > _Q4_ABOVE]
    return [c for c in _triples(len(a)) if math.sqrt(a1 * (a[c[0]] * a[c[1]] * a[c[2]])) < _Q4_BELOW]


def build(rng: np.random.Generator, d: Draws, level: int, n_hex: int, q2: str, q4: str, q5: str) -> Scene | None:
    """One try at a scene with the target answers (None when the draw misses). A parallel innermost comes from
    the exact list `parallel_sets`; the order is then chosen so that H2's fraction gives the Q5 target and the
    first four fractions (H2 to H5) the Q4 target."""
    m = n_hex - 1
    rows = multisets(level, m)[1]
    spell, eis, turn, a_of, half = _per_value(level)
    pool, cum, total = _pool(level, n_hex, q2, q4)
    if not len(pool):
        return None
    row = rows[pool[int(cum.searchsorted(d.random() * total))]].tolist()
    ts = [row[i] for i in rng.permutation(m).tolist()]   # value indices from here on
    firsts = _firsts(ts, eis, turn, half, q5)
    if not firsts:
        return None
    i = firsts[d.integers(len(firsts))]
    rest = ts[:i] + ts[i + 1:]
    fronts = _fronts(a_of[ts[i]], [a_of[t] for t in rest], q4)
    if not fronts:
        return None
    c = fronts[d.integers(len(fronts))]
    ts = [ts[i]] + [rest[j] for j in c] + [t for j, t in enumerate(rest) if j not in c]
    spelled = [spell[t][d.integers(len(spell[t]))] for t in ts]
    s = Scene(level, d.pick(SIDES_CM), d.uniform(320, 340), d.uniform(0, 60),
              tuple(n for n, _ in spelled), tuple(k for _, k in spelled))
    return s if legible(s) else None


# --- answers ----------------------------------------------------------------------------------------------------

def _direction(ts) -> str:
    m = turn_mod60(ts)
    if m in (0.0, 30.0):
        raise Reject("turn_tie")
    return CCW if m < 30.0 else CW


def hexagon_count(scene: Scene) -> Count:
    return Count(len(scene.ticks) + 1, low=1, high=12)


def innermost_parallel(scene: Scene) -> Choice:
    return Choice(YES if turn_mod60(fractions_t(scene)) == 0.0 else NO, (YES, NO))


def h2_side_cm(scene: Scene) -> Number:
    v = scene.side_cm * math.sqrt(float(regular_ratio_sq(6, fractions_t(scene)[0])))
    return Number(round(v, 2), 0.02, "cm", decimals=2, tol_kind="rel", low=0.0)


def h5_vs_h(scene: Scene) -> Choice:
    return Choice(LONGER if h5_ratio(fractions_t(scene)) > float(H) else SHORTER, (LONGER, SHORTER))


def turn_direction(scene: Scene) -> Choice:
    """Which way the innermost hexagon is turned from H1 (the smaller turn, under 30 degrees)."""
    return Choice(_direction(fractions_t(scene)), (CW, CCW), DIR_ALIASES)


def innermost_turn(scene: Scene) -> Record:
    v = parallel_gap_deg(fractions_t(scene))
    return Record((("turn", Number(round(v), TURN_TOL_DEG[scene.level], "deg", decimals=0, low=0.0, high=30.0)),))


def edit(scene: Scene) -> Scene:
    """Move H2's corners to the midpoints of H1's sides; deeper hexagons keep their own fractions."""
    return replace(scene, divisions=(2,) + scene.divisions[1:], ticks=(1,) + scene.ticks[1:])


counterfactual = turn_direction


def _moves(n: int, left: int):
    """Every vector of n integer steps whose absolute values sum to at most `left`."""
    if n == 0:
        yield ()
        return
    for d in range(-left, left + 1):
        for rest in _moves(n - 1, left - abs(d)):
            yield (d,) + rest


def pair_candidates(scene: Scene):
    """The tick indices (same n_i) that flip Q4 in floats within 4 steps, in the minimal pair's order: fewest total
    steps, then the deepest first changed hexagon (fewest hexagons move), then the lowest indices."""
    q4, h = h5_vs_h(scene).value, H
    divs, ticks, m = scene.divisions, scene.ticks, len(scene.ticks)
    # log a for every reachable tick of every level: the flip test runs in floats, the full rules on survivors.
    log_a = [{k: math.log(float(regular_ratio_sq(6, Fraction(k, n)))) for k in range(1, n)} for n in divs]
    flipped = (lambda r: r < float(h)) if q4 == LONGER else (lambda r: r > float(h))
    # Only the first Q4_DEPTH ticks decide the flip (and the 1/2 rule): their moves are tested once each, the later
    # ticks' moves are only range-checked, and the candidates are ordered a total step count at a time.
    fronts = [[] for _ in range(5)]           # moves of the first Q4_DEPTH ticks, by total steps
    for d in _moves(Q4_DEPTH, 4):
        ks = [k + x for k, x in zip(ticks, d)]
        if (all(0 < k < n for k, n in zip(ks, divs)) and 2 * ks[0] != divs[0]
                and flipped(math.exp(0.5 * sum(la[k] for la, k in zip(log_a, ks))))):
            fronts[sum(map(abs, d))].append(d)
    backs = [[] for _ in range(5)]            # moves of the other ticks, by total steps
    for d in _moves(m - Q4_DEPTH, 4):
        if all(0 < k + x < n for k, x, n in zip(ticks[Q4_DEPTH:], d, divs[Q4_DEPTH:])):
            backs[sum(map(abs, d))].append(d)
    for steps in range(1, 5):
        cands = []
        for sf in range(steps + 1):
            for f in fronts[sf]:
                for b in backs[steps - sf]:
                    d = f + b
                    changed = [i for i, x in enumerate(d) if x]
                    cands.append(((-changed[0], changed, d), tuple(k + x for k, x in zip(ticks, d))))
        yield from (ks for _, ks in sorted(cands))


def minimal_pair(scene: Scene) -> Scene:
    """The first of `pair_candidates` for which every rule holds."""
    for ks in pair_candidates(scene):
        twin = replace(scene, ticks=ks)
        try:
            ok = legible(twin) and not ladder(twin).failing_margins()
        except Reject:
            continue
        if ok:
            return twin
    raise Reject("no_minimal_pair")


# --- ladder -----------------------------------------------------------------------------------------------------

def _common(scene: Scene) -> str:
    which = "each hexagon's sides" if scene.level < 3 else "the sides of H1, H3, H5, ..."
    return (f"Each hexagon's six corners lie at one common fraction of the way along the six sides of the hexagon "
            f"around it, all six in the same rotational sense (that fraction can differ from one hexagon to the "
            f"next); tick marks divide {which} into equal parts. ")


def ladder(scene: Scene) -> Ladder:
    ts = fractions_t(scene)
    words = H_WORDS[0]
    ratio = h5_ratio(ts)
    edited = [HALF] + ts[1:]
    gap = parallel_gap_deg(ts)
    inner = Margin(outline_clearance_px(scene), "px", OUTLINE_CLEAR_PX, "outlines too close to tell apart")
    rungs = (
        Question(1, "hexagon_count", "How many hexagons are drawn (nested outlines, H1 included)?",
                 hexagon_count(scene), inner),
        Question(2, "innermost_parallel", _common(scene) + "Is every side of the innermost hexagon parallel to "
                 "some side of H1?", innermost_parallel(scene),
                 Margin(30.0 if gap == 0.0 else gap, "deg", TURN_GAP_DEG,
                        "turn near a multiple of 60 deg but not exactly parallel (exact ties by construction)")),
        Question(3, "h2_side", _common(scene) + "H1's side length is printed beside its lowest side. How long is a "
                 "side of H2, in cm?",
                 h2_side_cm(scene), Margin(sides_px(scene)[0] / scene.divisions[0], "px", TICK_GAP_PX,
                                           "ticks on H1 too close to count")),
        Question(4, "h5_vs_h", _common(scene) + f"Is a side of {H5_WORDS} longer or shorter than {words} of a side "
                 "of H1?", h5_vs_h(scene),
                 Margin(abs(ratio - float(H)), "fraction of H1's side", RATIO_GAP,
                        "H5's side equal to the stated fraction")),
        Question(5, "turn_after_midpoints", _common(scene) + "Suppose H2 were redrawn with its corners at the "
                 "midpoints of H1's sides, and every smaller hexagon kept its corners at the same fractions along "
                 "the sides of the hexagon around it as now. Which way would the innermost hexagon then be turned "
                 "from H1, clockwise or counterclockwise (take the smaller turn, which is under 30 degrees)?",
                 counterfactual(edit(scene)),
                 Margin(direction_gap_deg(edited), "deg", TURN_GAP_DEG, "edited turn near 0, 30 or 60 deg"),
                 edit="H2's corners moved to the midpoints of H1's sides"),
    )
    open_q = Question(6, "innermost_turn", _common(scene) + "By how many degrees is the innermost hexagon turned "
                      "relative to H1 (the smallest angle between their sides, 0 to 30 degrees)? Explain how the "
                      "turn builds up from hexagon to hexagon.", innermost_turn(scene),
                      Margin(tick_legibility_px(scene), "px", TICK_CLEAR_PX,
                             "tick too short or too close to another hexagon's tick"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 as lengths laid end to end: q sides of H5 against p sides of H1, h = p/q (map: identity)."""
    _, q, p = H_WORDS
    return Question(4, "sides_end_to_end", _common(scene) + f"Laid end to end, would {q} sides of {H5_WORDS} be "
                    f"longer or shorter than {p} side{'s' if p > 1 else ''} of H1?", h5_vs_h(scene),
                    Margin(abs(h5_ratio(fractions_t(scene)) - float(H)), "fraction of H1's side", RATIO_GAP,
                           "H5's side equal to the stated fraction"))


# --- drawing ----------------------------------------------------------------------------------------------------

def _h2_label(canvas: Canvas, scene: Scene, hexes) -> None:
    """"H2" outside H1 with a leader to a dot on an H2 side: the dot keeps `LEADER_CLEAR_PX` from H1's outline and
    from H3's corners, and the leader crosses H1's outline away from H1's corners, so it cannot point at either."""
    t2 = float(fractions_t(scene)[1])
    h1 = Polygon(hexes[0])
    ring = h1.exterior
    w, hh = text_size(canvas, "H2", LABEL)
    dots = []                                 # candidate dots in scan order (side, then u)
    for j in range(6):
        (ax, ay), (bx, by) = hexes[1][j], hexes[1][(j + 1) % 6]
        dots += [(ax + (bx - ax) * u, ay + (by - ay) * u) for u in (0.5, 0.4, 0.6, 0.3, 0.7) if abs(u - t2) >= 0.15]
    # One GEOS call per test for all dots (the same distances and crossings as one call per dot).
    gaps = shapely.distance(ring, shapely.points(np.reshape(dots, (-1, 2))))
    dots = [p for p, gap in zip(dots, gaps.tolist()) if gap >= LEADER_CLEAR_PX]
    normals = []
    for p in dots:
        n = (p[0] - CENTER[0], p[1] - CENTER[1])
        normals.append((n[0] / math.hypot(*n), n[1] / math.hypot(*n)))
    rays = [[p, (p[0] + n[0] * 2000, p[1] + n[1] * 2000)] for p, n in zip(dots, normals)]
    hits = shapely.intersection(shapely.linestrings(np.reshape(rays, (-1, 2, 2))), ring)
    coords, which = shapely.get_coordinates(hits, return_index=True)   # one call for every ray's points
    meets = [[] for _ in dots]
    for q, k in zip(coords.tolist(), which.tolist()):
        meets[k].append(q)
    spots = []                                # (distance, order, dot, label centre, direction)
    for p, n, qs in zip(dots, normals, meets):
        out = min(math.dist(p, q) for q in qs)                                      # where the ray leaves H1
        cross = (p[0] + n[0] * out, p[1] + n[1] * out)
        if min(math.dist(cross, v) for v in hexes[0]) < LEADER_CLEAR_PX:
            continue
        d = out + 10 + abs(n[0]) * w / 2 + abs(n[1]) * hh / 2
        spots.append((d, len(spots), p, (p[0] + n[0] * d, p[1] + n[1] * d), n))
    # The nearest spot whose label box fits (the first one in the scan order among equals): boxes are tested
    # nearest first, so most spots never need theirs.
    for _, _, p, c, n in sorted(spots, key=lambda x: x[:2]):
        b = text_box_px(canvas, "H2", c, LABEL)
        if (canvas.inside_safe(np.array(b.exterior.coords)) and b.distance(h1) >= 8.0
                and not any(b.intersects(o) for o in canvas.labels)):
            break
    else:
        raise Reject("label_clash")
    r = abs(n[0]) * w / 2 + abs(n[1]) * hh / 2 + 3
    shapes.line(canvas, p, (c[0] - n[0] * r, c[1] - n[1] * r), Style(stroke=GREY_DARK, width_px=1.5))
    shapes.circle(canvas, p, 4.0, Style(stroke=None, fill=GREY_DARK))
    draw_text_px(canvas, "H2", c, LABEL)
    canvas.labels.append(b)


def draw(scene: Scene, canvas: Canvas) -> None:
    hexes = layout(scene)
    for i, hx in enumerate(hexes):
        shapes.polygon(canvas, hx, Style(stroke=COLOURS[i % 2], width_px=3.0), owner="hexagons")
    ticks = drawn_ticks(scene)
    for c in (0, 1):                          # each hexagon's ticks in its own outline colour
        segs = [(a, b) for a, b, i in ticks if i % 2 == c]
        if segs:
            shapes.segments(canvas, segs, Style(stroke=COLOURS[c], width_px=2.0), register=False)
    # Side length under H1's lowest side, pushed out along that side's normal.
    j = max(range(6), key=lambda j: hexes[0][j][1] + hexes[0][(j + 1) % 6][1])
    (ax, ay), (bx, by) = hexes[0][j], hexes[0][(j + 1) % 6]
    mx, my = (ax + bx) / 2, (ay + by) / 2
    nx, ny = mx - CENTER[0], my - CENTER[1]
    ln = math.hypot(nx, ny)
    nx, ny = nx / ln, ny / ln
    text = f"{scene.side_cm} cm"
    w, hh = text_size(canvas, text, TEXT)
    c = (mx + nx * (10 + abs(nx) * w / 2 + abs(ny) * hh / 2), my + ny * (10 + abs(nx) * w / 2 + abs(ny) * hh / 2))
    b = text_box_px(canvas, text, c, TEXT)
    if not canvas.inside_safe(np.array(b.exterior.coords)):
        raise Reject("text_clipped")
    draw_text_px(canvas, text, c, TEXT)
    canvas.labels.append(b)
    top = min(hexes[0], key=lambda v: v[1])
    place_label(canvas, "H1", top, owner=None)
    _h2_label(canvas, scene, hexes)


DOMAIN = Domain(
    id="nested_hexagons", family="plane", title="Nested hexagons",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="Regular hexagons inscribed in hexagons at tick fractions: count, exact parallelism of the "
                "innermost, H2's side, H5's side against two thirds of H1's, and the turn direction after H2 "
                "moves to the midpoints.",
    balance_keys=("hexagon_count", "innermost_parallel", "h5_vs_h", "turn_after_midpoints"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=3,
)
