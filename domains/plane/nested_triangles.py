"""Nested triangles: triangle ABC (T1) with tick marks that cut each side into n_1 equal parts; T2's corners sit on
ticks of AB, BC, CA, T3's corners on the sides of T2, and so on down to T_N. The image prints ABC's area in cm².
The ladder walks count every triangle -> which end of AB T2's corner is nearer -> the corner triangle at A as a
fraction of ABC -> T2 against the three corner triangles together -> the same after T2's corner on AB is moved to a
stated point; the open question asks for the innermost triangle's area.

Fractions p_i, q_i, r_i are measured along the directed sides V1->V2, V2->V3, V3->V1 of T_i (A->B, B->C, C->A for
T1). Corner fractions c_A = p(1-r), c_B = q(1-p), c_C = r(1-q), so rho_i = Area(T_{i+1})/Area(T_i) =
(1-q)(1-r) - p(1-q-r) (Routh-type, affine-invariant). All answers use exact Fractions.

Ambiguity boundaries (DOMAINS.md 1.2): T2's corner on AB at the midpoint (Q2, |p_1 - 1/2| >= 1/8), T2 and the
corners equally large (Q4 and Q5, |rho - 1/2| >= 0.03). Legibility limits are margins in px: no drawn vertex within
10 px of a side it does not lie on (Q1; the sheet says 6, which leaves no white between two 3 px strokes), tick
spacing on ABC >= 14 px (Q3), every fraction the open question needs readable at >= 24 px (open: the tick spacing of
every ticked triangle, and at level 3 each unticked corner's distance to where the other fractions of the set would
put it); vertices >= 10 px apart and an innermost inradius >= 16 px are rejection rules. Tolerances: Q3 +-0.01 of
ABC and the open question 3% are exact reads of ticks.

Enlarged beyond the sheet so that every fraction reads at 768 px without magnifying: inner ticks are 14 px long
and 2.5 px wide (ABC's: 14 px, 2 px; a tick under an inner triangle's corner still shows 5 px on either side of
the corner's strokes); tick spacing on inner triangles >= 24 px (sheet: 14), so n_i <= shortest side / 24; the
innermost inradius >= 16 px (sheet: 12; 18 already leaves level 3 with N = 5 unreachable where T2 is the smaller
part). Deeper levels are drawn one at a time, each redrawn until it fits, so deep nestings stay reachable in every
balance cell. The "T2" pointer ends 4 px short of T2's side, at a point >= 12 px along the side from every tick
and corner on it, its head >= 6 px from every tick and vertex (checked on the latent
geometry; where no corner triangle allows that, the scene is rejected, reason t2_pointer_clash), so it never
reads as a tick or hides one.

Deviations from the sheet. (1) Level 3 draws ticks on T1 only, and an unticked fraction k/n with n up to 8 cannot be
read by eye to the 3% the open question needs, so the deeper fractions at level 3 come from a set the question
states (a third or two thirds: half is left out, as telling it from a third needs a sixth of a side, 144 px sides
at 24 px, which no deep nesting reaches) and each corner lies >= 24 px from where the other fraction would put it.
(2) The Q4 rephrase asks which part covers less than half of ABC (options T2 | corners, map: inversion): the
conformance maps compare answers over one option set, which the sheet's yes/no wording would not share.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import shapely
from shapely.geometry import LineString, MultiLineString, MultiPoint, Polygon

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import LABEL, OKABE_ITO, TEXT, Style
from grip.renderers.text import _first_free_spot, draw_text_px, text_size

HALF = Fraction(1, 2)
DIV1 = (6, 7, 8)                          # n_1: with n_1 <= 5 every tick triple has rho_1 <= 0.52
N_SET = {1: (2, 3, 4), 2: (2, 3, 4, 5), 3: (3, 4, 5)}
DEEP_MAX = {1: 6, 2: 8}                   # deeper n_i where they are ticked
UNTICKED_DEN, UNTICKED_NUM = 3, (1, 2)        # level 3 deeper fractions: 1/3, 2/3 (a third of a side apart)
UNTICKED_WORDS = "a third or two thirds"
LEVEL_TRIES = 12                          # draws of one deeper level before the whole nesting is redrawn
P_EDIT = ((1, 8), (1, 6), (1, 5), (1, 4), (1, 3), (2, 3), (3, 4), (4, 5), (5, 6), (7, 8))
P_WORDS = {(1, 8): "one eighth", (1, 6): "one sixth", (1, 5): "one fifth", (1, 4): "one quarter",
           (1, 3): "one third", (2, 3): "two thirds", (3, 4): "three quarters", (4, 5): "four fifths",
           (5, 6): "five sixths", (7, 8): "seven eighths"}
AREAS_CM2 = (24, 36, 48, 60, 72, 96)
Q2_GAP = Fraction(1, 8)                   # |p_1 - 1/2|, fraction of AB
RHO_GAP = Fraction(3, 100)                # |rho - 1/2|, fraction of ABC's area
GUARD_PX = 10.0                           # vertex to a side it is not on (sheet: 6; 10 leaves white between strokes)
READ_PX = 14.0                            # tick spacing of ABC (Q3)
DEEP_READ_PX = 24.0                       # every fraction the open question reads: tick spacing, or the clearance
                                          # of an unticked corner from its alternatives
VERTEX_GAP_PX = 10.0
INRADIUS_PX = 16.0                        # innermost triangle (sheet: 12; 18 leaves level 3, N = 5 unreachable
                                          # where T2 is the smaller part, which would skew Q1 and Q4)
TICK_PX = ((14.0, 2.0), (14.0, 2.5))      # (length, width) of ABC's ticks / of inner triangles' ticks
POINTER_CLEAR_PX = 12.0                   # the T2 pointer's foot on T2's side, along it, from every tick and corner
POINTER_GAP_PX = 4.0                      # the pointer's tip stops this far short of the side's centre line
HEAD_CLEAR_PX = 6.0                       # the pointer's head from every tick and drawn vertex
HEAD_PX = 10.0
SURE_PX = 1e-6                            # far above the rounding of a distance in px
SLIVER_DEG = 15.0                         # every inner triangle's smallest angle: corners of slivers are unreadable
BOX = (60.0, 708.0)                       # T1's vertices; room for the labels outside
MIN_AREA_PX2 = 147456.0                   # 25% of the canvas
T1_TRIES = 200
DEEP_TRIES = 60
MIN_PAIR_STEPS = 6                        # the minimal pair searches moves of up to this many tick steps
CORNER_TOL = 0.01
OPEN_TOL = 0.03
COLOURS = (OKABE_ITO["blue"], OKABE_ITO["vermillion"])   # T1, T3, T5 / T2, T4
NEXT = [1, 2, 0]                          # corner k -> corner k + 1
T_OPTIONS = ("T2", "corners")
T_ALIASES = (("t2", "T2"), ("triangle t2", "T2"), ("the corners", "corners"), ("corner triangles", "corners"),
             ("the three corner triangles", "corners"), ("the corner triangles", "corners"))


@dataclass(frozen=True)
class Scene:
    level: int                                    # 1..3
    vertices: tuple[tuple[float, float], ...]     # A, B, C of T1, px (y down), in BOX^2
    divisions: tuple[int, ...]                    # n_i for T_i -> T_{i+1}, i = 1..N-1 (3 where unticked, level 3)
    ticks: tuple[tuple[int, int, int], ...]       # numerators of (p_i, q_i, r_i) over n_i, each in 1..n_i-1
    p_edit: tuple[int, int]                       # Q5: T2's corner on AB moved to num/den of the way from A, P_EDIT
    area_cm2: int                                 # printed area of ABC, AREAS_CM2


# --- exact geometry (answers) ----------------------------------------------------------------------------------

def fractions_of(scene: Scene, i: int) -> tuple[Fraction, Fraction, Fraction]:
    """(p, q, r) of T_{i+2}'s corners on the sides of T_{i+1}; i is 0-based (0 = T2 on ABC)."""
    n = scene.divisions[i]
    return tuple(Fraction(k, n) for k in scene.ticks[i])  # type: ignore[return-value]


def rho(p: Fraction, q: Fraction, r: Fraction) -> Fraction:
    return (1 - q) * (1 - r) - p * (1 - q - r)


@functools.lru_cache(maxsize=256)
def ratios(scene: Scene) -> tuple[Fraction, ...]:
    return tuple(rho(*fractions_of(scene, i)) for i in range(len(scene.divisions)))


def triangle_count(scene: Scene) -> int:
    return len(scene.divisions) + 1


def nested_exact(scene: Scene) -> list[tuple]:
    """Barycentric coordinates (w.r.t. ABC) of every triangle's vertices, as integer vectors: triangle i + 1 is
    scaled by n_1 * ... * n_i (exact; a common positive scale per point does not change a collinearity test)."""
    tris = [((1, 0, 0), (0, 1, 0), (0, 0, 1))]
    for n, nums in zip(scene.divisions, scene.ticks):
        t = tris[-1]
        tris.append(tuple(tuple((n - a) * x + a * y for x, y in zip(t[k], t[(k + 1) % 3]))
                          for k, a in enumerate(nums)))
    return tris


def _side_members(n_tri: int) -> list[set[int]]:
    """Vertex ids (3i + k = corner k of T_{i+1}) on each drawn side: its two ends and the next triangle's corner."""
    return [{3 * i + k, 3 * i + (k + 1) % 3} | ({3 * (i + 1) + k} if i + 1 < n_tri else set())
            for i in range(n_tri) for k in range(3)]


def enumerated_triangles(scene: Scene) -> int:
    """Every non-collinear triple of drawn vertices pairwise joined along a drawn side."""
    tris = nested_exact(scene)
    pts = [v for t in tris for v in t]
    nb: list[set[int]] = [set() for _ in pts]
    for on in _side_members(len(tris)):
        for a, b in itertools.permutations(on, 2):
            nb[a].add(b)
    count = 0
    for a in range(len(pts)):
        for b in (x for x in nb[a] if x > a):
            for c in (x for x in nb[a] & nb[b] if x > b):
                m = (pts[a], pts[b], pts[c])
                det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                       - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                       + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
                count += det != 0
    return count


# --- pixel geometry (margins and drawing) ----------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def triangles_px(scene: Scene) -> tuple[np.ndarray, ...]:
    """Vertices of T1..T_N in px (read-only arrays; cached, as margins and drawing all need them). Built on the
    cached triangles of the nesting one level shorter, as sampling grows a nesting one level at a time."""
    if not scene.divisions:
        t = np.asarray(scene.vertices, float)
        t.setflags(write=False)
        return (t,)
    head = triangles_px(replace(scene, divisions=scene.divisions[:-1], ticks=scene.ticks[:-1]))
    last = _inner(head[-1], scene.divisions[-1], scene.ticks[-1])
    last.setflags(write=False)
    return head + (last,)


def _inner(t: np.ndarray, n: int, nums: tuple[int, int, int]) -> np.ndarray:
    """The triangle whose corners lie nums[k] / n of the way along t's sides t[k] -> t[k + 1]."""
    f = np.array([k / n for k in nums])[:, None]     # == float(Fraction(k, n)): both correctly rounded
    return t + f * (t[NEXT] - t)


def _norm(v: np.ndarray, axis: int) -> np.ndarray:
    """np.linalg.norm(v, axis=axis) for real arrays, the same operations without its dispatch (hot in sampling)."""
    return np.sqrt(np.add.reduce(v * v, axis=axis))


def _sides(t: np.ndarray) -> np.ndarray:
    return _norm(t - t[NEXT], 1)


def ticked(scene: Scene, i: int) -> bool:
    """Whether the sides of T_{i+1} (0-based i: 0 = ABC) carry ticks: every triangle at levels 1-2, ABC at level 3."""
    return scene.level < 3 or i == 0


@functools.lru_cache(maxsize=None)
def _off_side(n_tri: int) -> tuple[np.ndarray, np.ndarray]:
    """(vertex, side) index pairs of guard_px's matrix where the vertex lies on the side (excluded)."""
    rows, cols = [], []
    for side, on in enumerate(_side_members(n_tri)):
        rows += sorted(on)
        cols += [side] * len(on)
    return np.array(rows), np.array(cols)


@functools.lru_cache(maxsize=None)
def _next_rows(n_tri: int) -> np.ndarray:
    """Row indices of every triangle's next corner (t[NEXT] of each) in the stacked vertex array."""
    return np.array([3 * i + k for i in range(n_tri) for k in NEXT])


@functools.lru_cache(maxsize=None)
def _pairs(n_pts: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n_pts, 1)


@functools.lru_cache(maxsize=1024)
def _stacked(scene: Scene) -> np.ndarray:
    """Every drawn vertex, T1's first (read-only)."""
    pts = np.concatenate(triangles_px(scene))
    pts.setflags(write=False)
    return pts


def guard_px(scene: Scene) -> float:
    """Smallest distance from a drawn vertex to a drawn side it does not lie on."""
    n_tri = len(scene.divisions) + 1
    a = pts = _stacked(scene)
    b = pts[_next_rows(n_tri)]
    ab, ap = b - a, pts[:, None, :] - a[None]
    t = np.clip((ap * ab).sum(axis=2) / (ab * ab).sum(axis=1), 0.0, 1.0)
    d = _norm(ap - t[:, :, None] * ab[None], 2)
    d[_off_side(n_tri)] = np.inf
    return float(d.min())


def vertex_gap_px(scene: Scene) -> float:
    pts = _stacked(scene)
    d = _norm(pts[:, None] - pts[None], 2)
    return float(d[_pairs(len(pts))].min())


def inradius_px(t: np.ndarray, sides: np.ndarray | None = None) -> float:
    """`sides`: _sides(t) where the caller has it already."""
    (x0, y0), (x1, y1), (x2, y2) = t
    return abs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)) / float((_sides(t) if sides is None else sides).sum())


def min_angle_deg(t: np.ndarray) -> float:
    a, b = t[NEXT] - t, t[[2, 0, 1]] - t
    cos = (a * b).sum(axis=1) / _norm(a, 1) / _norm(b, 1)
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))).min())


def reading_px(scene: Scene, i: int) -> float:
    """How well T_{i+1}'s corners can be read on T_i's sides: the tick spacing where ticks are drawn, else the px
    distance from each corner to where the nearest other fraction of the stated set would put it."""
    side = _sides(triangles_px(scene)[i])
    if ticked(scene, i):
        return float(side.min() / scene.divisions[i])
    alts = [Fraction(k, UNTICKED_DEN) for k in UNTICKED_NUM]
    return float(min(side[k] * min(abs(float(f - g)) for g in alts if g != f)
                     for k, f in enumerate(fractions_of(scene, i))))


# --- answers ----------------------------------------------------------------------------------------------------

def all_triangles(scene: Scene) -> Count:
    n = enumerated_triangles(scene)
    if n != 4 * triangle_count(scene) - 3:
        raise ValueError(f"nested_triangles: enumeration found {n} triangles, 4N - 3 = {4 * triangle_count(scene) - 3}")
    return Count(n, low=1, high=17)


def corner_on_ab(scene: Scene) -> Choice:
    return Choice("A" if fractions_of(scene, 0)[0] < HALF else "B", ("A", "B"))


def corner_at_a(scene: Scene) -> Number:
    p, _, r = fractions_of(scene, 0)
    return Number(round(float(p * (1 - r)), 4), CORNER_TOL, "units of ABC's area", decimals=3, low=0.0, high=1.0)


def larger_part(scene: Scene) -> Choice:
    return Choice("T2" if ratios(scene)[0] > HALF else "corners", T_OPTIONS, T_ALIASES)


def innermost_area(scene: Scene) -> Record:
    v = float(scene.area_cm2 * math.prod(ratios(scene)))
    d = 1 if v >= 10 else 2 if v >= 1 else 3
    return Record((("area", Number(round(v, d + 1), OPEN_TOL, "cm²", decimals=d, tol_kind="rel", low=0.0)),))


def edit(scene: Scene) -> Scene:
    """Q5's edit: T2's corner on AB moved to p' of the way from A to B; deeper triangles follow T2."""
    num, den = scene.p_edit
    n = scene.divisions[0] * den // math.gcd(scene.divisions[0], den)
    _, b, c = scene.ticks[0]
    s = n // scene.divisions[0]
    return replace(scene, divisions=(n,) + scene.divisions[1:],
                   ticks=((num * n // den, b * s, c * s),) + scene.ticks[1:])


counterfactual = larger_part


# --- ladder -----------------------------------------------------------------------------------------------------

def _rho_margin(scene: Scene, what: str) -> Margin:
    return Margin(float(abs(ratios(scene)[0] - HALF)), "fraction of ABC's area", float(RHO_GAP),
                  f"{what} exactly half of ABC")


def ladder(scene: Scene) -> Ladder:
    p1 = fractions_of(scene, 0)[0]
    t1_ticks = reading_px(scene, 0)
    where = f"{P_WORDS[scene.p_edit]} of the way from A to B"
    # Worded for any N without stating it (Q1 counts the triangles): "any triangle drawn inside T2".
    deeper = (f" Only ABC's sides carry tick marks; every corner of a triangle inside T2 lies {UNTICKED_WORDS} of "
              "the way along a side of the triangle around it." if scene.level == 3 else
              " Where a side carries tick marks, they divide it into equal parts.")
    rungs = (
        Question(1, "triangle_count", "How many triangles of any size are in the figure? Count every triangle whose "
                 "three sides lie along the drawn triangle outlines (tick marks and the pointer of the T2 label are "
                 "not outlines).", all_triangles(scene),
                 Margin(guard_px(scene), "px", GUARD_PX, "a drawn vertex close enough to a side to seem on it")),
        Question(2, "corner_on_ab", "T2 is the triangle whose corners lie on the sides of ABC; tick marks divide "
                 "each side of ABC into equal parts. Is T2's corner on side AB closer to A or closer to B?",
                 corner_on_ab(scene),
                 Margin(float(abs(p1 - HALF)), "fraction of AB", float(Q2_GAP), "T2's corner at the midpoint of AB")),
        Question(3, "corner_triangle_a", "The corner triangle at A is the part of ABC that T2 cuts off next to "
                 "vertex A. What fraction of ABC's area is it (ABC = 1)? Tick marks divide each side of ABC into "
                 "equal parts.",
                 corner_at_a(scene), Margin(t1_ticks, "px", READ_PX, "ticks of ABC too close to count")),
        Question(4, "larger_part", "Which has the larger area: T2, or the three corner triangles of ABC (the parts "
                 "of ABC outside T2) together?", larger_part(scene), _rho_margin(scene, "T2")),
        Question(5, "larger_part_moved", f"Suppose T2's corner on side AB were moved to the point {where}, with its "
                 "other two corners staying where they are. Which would then have the larger area: T2, or the three "
                 "corner triangles of ABC together?", counterfactual(edit(scene)),
                 _rho_margin(edit(scene), "the moved T2"), edit=f"T2's corner on AB moved to {where}"),
    )
    open_q = Question(6, "innermost_area", "The area of ABC is printed on the figure. T2's corners lie on the sides "
                      "of ABC, and any triangle drawn inside T2 has its corners on the sides of the triangle around "
                      f"it.{deeper} What is the area of the innermost (smallest) triangle, in cm²? Explain how you "
                      "found it.", innermost_area(scene),
                      Margin(min(reading_px(scene, i) for i in range(len(scene.divisions))), "px", DEEP_READ_PX,
                             "a corner of an inner triangle too close to its neighbouring fraction to read"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    other = "corners" if larger_part(scene).value == "T2" else "T2"
    return Question(4, "smaller_part", "Which covers less than half of ABC's area: T2, or the three corner triangles "
                    "of ABC (the parts of ABC outside T2) together?", Choice(other, T_OPTIONS, T_ALIASES),
                    _rho_margin(scene, "T2"))


# --- sampling ---------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _cells(n1: int) -> dict[tuple[bool, bool, bool], tuple]:
    """(Q2 = A, Q4 = T2, Q5 = T2) -> every level-1 tick triple with its admissible p', all margins kept."""
    # Exact integer forms of rho and the margins: rho(p, q, r) = x / n1^2 and rho(num/den, q, r) = y / (den n1^2),
    # so |rho - 1/2| >= g  <=>  |2 rho_num - D| * g.den >= 2 g.num * D with D the denominator, and likewise for p.
    out: dict = {}
    n = n1
    gn, gd = RHO_GAP.numerator, RHO_GAP.denominator
    hn, hd = Q2_GAP.numerator, Q2_GAP.denominator
    for a, b, c in itertools.product(range(1, n1), repeat=3):
        x2 = 2 * ((n - b) * (n - c) - a * (n - b - c))
        if abs(2 * a - n) * hd < 2 * hn * n or abs(x2 - n * n) * gd < 2 * gn * n * n:
            continue
        by_cell: dict = {}
        for num, den in P_EDIT:
            y2, dd = 2 * (den * (n - b) * (n - c) - num * n * (n - b - c)), den * n * n
            if num * n != a * den and abs(y2 - dd) * gd >= 2 * gn * dd:
                by_cell.setdefault((2 * a < n, x2 > n * n, y2 > dd), []).append((num, den))
        for cell, pe in by_cell.items():
            out.setdefault(cell, []).append(((a, b, c), tuple(pe)))
    return {k: tuple(v) for k, v in out.items()}


_ROLLS = tuple(np.roll(np.arange(3), k) for k in range(3))


def _area_at_least(pts: np.ndarray, limit: float) -> bool:
    """abs(Polygon(pts).area) >= limit for a triangle: the plain shoelace decides unless it lies within a relative
    1e-9 of the limit (far beyond the rounding of either), where shapely's area does."""
    (x0, y0), (x1, y1), (x2, y2) = pts.tolist()
    a = abs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)) / 2
    if abs(a - limit) > 1e-9 * limit:
        return a >= limit
    return abs(Polygon(pts).area) >= limit


def _surely_small(x: float, y: float, ct: float, st: float, size: float) -> bool:
    """Whether `_t1`'s triangle (0, 0), (1, 0), (x, y), turned by the rotation (ct, st) and scaled so that its
    larger extent is `size`, has an area below MIN_AREA_PX2 by far more (0.1%) than the rounding of its corners to
    0.01 px could change: plain floats, so that most rejected shapes skip the arrays."""
    xs, ys = (0.0, ct, x * ct - y * st), (0.0, st, x * st + y * ct)
    scale = size / max(max(xs) - min(xs), max(ys) - min(ys))
    return abs(y) / 2 * scale * scale < MIN_AREA_PX2 * 0.999


def _t1(rng: np.random.Generator, d: Draws, level: int) -> tuple[tuple[float, float], ...]:
    """Angles >= 35 deg, largest <= 90 (<= 100 at level 3), area >= 25% of the canvas. Obtuse shapes cannot reach
    that area at a random turn, so their longest side is laid near a diagonal of the box. `d`: `rng`'s own scalar
    draws, cheaper."""
    lo, hi = BOX
    for _ in range(T1_TRIES):
        if level == 3 and d.random() < 0.5:
            gamma = d.uniform(91.0, 100.0)
            alpha = d.uniform(35.0, 145.0 - gamma)
            theta = d.pick((45.0, 135.0, 225.0, 315.0)) + d.uniform(-4.0, 4.0)
        else:
            alpha, beta = (float(x) for x in rng.uniform(35.0, 90.0, size=2))
            gamma = 180.0 - alpha - beta
            if not 35.0 <= gamma <= 90.0:
                continue
            theta = d.uniform(0.0, 360.0)
        beta = 180.0 - alpha - gamma
        ra, rb, rg = (math.radians(x) for x in (alpha, beta, gamma))
        side = math.sin(rb) / math.sin(rg)
        apex = (side * math.cos(ra), side * math.sin(ra))
        flip = d.random() < 0.5
        ct, st = math.cos(math.radians(theta)), math.sin(math.radians(theta))
        shrink = d.uniform(0.94, 1.0)
        if _surely_small(apex[0], -apex[1] if flip else apex[1], ct, st, shrink * (hi - lo)):
            rng.uniform(0.0, 1.0, size=2)           # the placement's draws, which cannot change the area
            d.integers(3)
            continue
        shape = np.array([(0.0, 0.0), (1.0, 0.0), apex])
        if flip:
            shape[:, 1] *= -1
        shape = shape @ np.array([[ct, st], [-st, ct]])
        ext = shape.max(axis=0) - shape.min(axis=0)
        scale = (hi - lo) / float(ext.max()) * shrink
        pts = (shape - shape.min(axis=0)) * scale
        slack = (hi - lo) - ext * scale
        pts = pts + lo + slack * rng.uniform(0.0, 1.0, size=2)
        pts = np.round(pts[_ROLLS[d.integers(3)]], 2)
        if pts.min() >= lo and pts.max() <= hi and _area_at_least(pts, MIN_AREA_PX2):
            return tuple((float(x), float(y)) for x, y in pts)
    raise Reject("t1_too_small")


def _legible(scene: Scene) -> None:
    """Legibility rules of drawn states (each also a margin or a rejection reason)."""
    if guard_px(scene) < GUARD_PX:
        raise Reject("vertex_near_side")
    if min(reading_px(scene, i) for i in range(len(scene.divisions))) < DEEP_READ_PX:
        raise Reject("fraction_unreadable")
    if vertex_gap_px(scene) < VERTEX_GAP_PX:
        raise Reject("vertices_too_close")
    if inradius_px(triangles_px(scene)[-1]) < INRADIUS_PX:
        raise Reject("innermost_too_small")
    if min(min_angle_deg(t) for t in triangles_px(scene)[1:]) < SLIVER_DEG:
        raise Reject("sliver")


def _fits(scene: Scene, grown: bool = False) -> bool:
    """Whether _legible passes, with the checks that fail most often during sampling (and cost least) first.
    grown: the scene is a nesting that passed _fits with one level appended whose triangle's inradius and angles
    were checked already; the smallest angle and reading of the older levels cannot change, so only the new level's
    reading and the checks over all vertices remain."""
    if grown:
        return (reading_px(scene, len(scene.divisions) - 1) >= DEEP_READ_PX
                and vertex_gap_px(scene) >= VERTEX_GAP_PX
                and guard_px(scene) >= GUARD_PX)
    tris = triangles_px(scene)
    return (inradius_px(tris[-1]) >= INRADIUS_PX
            and min(min_angle_deg(t) for t in tris[1:]) >= SLIVER_DEG
            and min(reading_px(scene, i) for i in range(len(scene.divisions))) >= DEEP_READ_PX
            and vertex_gap_px(scene) >= VERTEX_GAP_PX
            and guard_px(scene) >= GUARD_PX)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Target first: n_1 uniform, then (Q2, Q4, Q5) uniform over its 8 cells, then a tick triple and p' of that
    cell; deeper fractions are drawn freely."""
    if level not in (1, 2, 3):
        raise ValueError(f"nested_triangles: level must be 1, 2 or 3, got {level!r}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    n1 = d.pick(DIV1)
    cell = tuple(bool(x) for x in rng.integers(0, 2, size=3))
    options = _cells(n1)[cell]
    n_tri = d.pick(N_SET[level])
    area = d.pick(AREAS_CM2)
    # A failed nesting retries inside the same cell and N, so that rejections do not skew the balance targets.
    for _ in range(DEEP_TRIES):
        triple, p_edits = options[d.integers(len(options))]
        p_edit = p_edits[d.integers(len(p_edits))]
        scene = _deeper(rng, d, Scene(level, _t1(rng, d, level), (n1,), (triple,), p_edit, area), n_tri)
        if scene is not None:
            return scene
    raise Reject("no_legible_nesting")


def _new_fails(t: np.ndarray, n: int, nums: tuple[int, int, int], shortest: float) -> bool:
    """Whether the triangle `_inner(t, n, nums)` breaks a rule of its own: a side under `shortest`, an inradius
    under `INRADIUS_PX` or an angle under `SLIVER_DEG`. In plain floats, element by element the arithmetic of
    `_inner`, `_sides`, `inradius_px` and `min_angle_deg` (a corner's sides are two of the triangle's); an angle
    within 1e-9 deg of the limit is left to `min_angle_deg` itself."""
    (x0, y0), (x1, y1), (x2, y2) = t.tolist()
    f0, f1, f2 = nums[0] / n, nums[1] / n, nums[2] / n
    px, py = ((x0 + f0 * (x1 - x0), x1 + f1 * (x2 - x1), x2 + f2 * (x0 - x2)),
              (y0 + f0 * (y1 - y0), y1 + f1 * (y2 - y1), y2 + f2 * (y0 - y2)))
    dx = (px[0] - px[1], px[1] - px[2], px[2] - px[0])         # side k: corner k -> corner k + 1, reversed
    dy = (py[0] - py[1], py[1] - py[2], py[2] - py[0])
    side = [math.sqrt(dx[k] * dx[k] + dy[k] * dy[k]) for k in range(3)]
    if min(side) < shortest:
        return True
    area2 = abs((px[1] - px[0]) * (py[2] - py[0]) - (px[2] - px[0]) * (py[1] - py[0]))
    if area2 / (side[0] + side[1] + side[2]) < INRADIUS_PX:
        return True
    # angle at corner k between a = corner k+1 - corner k = -d_k and b = corner k-1 - corner k = d_{k-1}
    low = min(math.degrees(math.acos(min(max((-dx[k] * dx[k - 1] + -dy[k] * dy[k - 1]) / side[k] / side[k - 1],
                                                -1.0), 1.0))) for k in range(3))
    if abs(low - SLIVER_DEG) <= 1e-9:
        return min_angle_deg(_inner(t, n, nums)) < SLIVER_DEG
    return low < SLIVER_DEG


def _deeper(rng: np.random.Generator, d: Draws, scene: Scene, n_tri: int) -> Scene | None:
    """Append T3..T_N with free fractions, one level at a time: a level is redrawn (up to LEVEL_TRIES times) until
    the nesting so far keeps every legibility rule and, when more levels follow, its innermost triangle's sides are
    long enough for the next level's fractions (3 * DEEP_READ_PX: three tick gaps, or a third of a side). Both are
    necessary for the full nesting, so this only skips draws that would fail anyway. None when a level never fits."""
    checked = False
    while triangle_count(scene) < n_tri:
        last = triangles_px(scene)[-1]
        if scene.level != 3:
            top = min(DEEP_MAX[scene.level], int(_sides(last).min() // DEEP_READ_PX))
            if top < 3:
                return None
        for _ in range(LEVEL_TRIES):
            if scene.level == 3:
                n, nums = UNTICKED_DEN, tuple(rng.choice(UNTICKED_NUM, size=3).tolist())
            else:
                n = d.integers(3, top + 1)
                nums = tuple(rng.integers(1, n, size=3).tolist())
            # Any test failing redraws the level, so those on the new triangle alone (cheap, and the ones that
            # fail most often) go first; _fits then checks the whole nesting.
            if _new_fails(last, n, nums, 3 * DEEP_READ_PX if triangle_count(scene) + 1 < n_tri else 0.0):
                continue
            cand = replace(scene, divisions=scene.divisions + (n,), ticks=scene.ticks + (nums,))
            if not _fits(cand, grown=checked):
                continue
            scene = cand
            break
        else:
            return None
        checked = True
    # A nesting that grew has just passed _fits; one drawn whole with T2 still needs the check.
    return scene if checked or _fits(scene) else None


# --- minimal pair -----------------------------------------------------------------------------------------------

def minimal_pair(scene: Scene) -> Scene:
    """Move T2's ticks on ABC (same n_1) by the fewest tick steps that flip Q4 while every rule still holds; ties:
    fewest fractions changed, then p before q before r, then smaller numerators. Deeper triangles follow T2."""
    n = scene.divisions[0]
    base = scene.ticks[0]
    want = "corners" if larger_part(scene).value == "T2" else "T2"
    moves = []
    for d in itertools.product(range(-MIN_PAIR_STEPS, MIN_PAIR_STEPS + 1), repeat=3):
        new = tuple(b + x for b, x in zip(base, d))
        steps = sum(map(abs, d))
        if 0 < steps <= MIN_PAIR_STEPS and all(1 <= k < n for k in new):
            moves.append(((steps, sum(x != 0 for x in d), tuple(x == 0 for x in d), new), new))
    for _, new in sorted(moves):
        twin = replace(scene, ticks=(new,) + scene.ticks[1:])
        if larger_part(twin).value != want or Fraction(*scene.p_edit) == Fraction(new[0], n):
            continue
        if ladder(twin).failing_margins():
            continue
        try:
            _legible(twin)
            draw(twin, Canvas(768))
        except Reject:
            continue
        return twin
    raise Reject("no_minimal_pair")


# --- drawing ----------------------------------------------------------------------------------------------------

def _ticks(canvas: Canvas, t: np.ndarray, segs: list, length: float, style: Style, owner: str) -> None:
    """Ticks drawn as given (tick_segments); labels keep clear of the band they occupy."""
    shapes.segments(canvas, segs, style, owner=owner, register=False)
    # Labels keep clear of the whole band the ticks occupy: one buffer instead of one per tick.
    ring = np.vstack([t, t[:1]])
    canvas.register_stroke(LineString(canvas.pts_px(ring)).buffer(length / 2 + 1), owner)


def _vertex_labels(canvas: Canvas, t1: np.ndarray) -> None:
    centre = t1.mean(axis=0)
    for name, v in zip("ABC", t1):
        out = math.atan2(*(v - centre)[::-1])
        spots = [(v[0] + r * math.cos(out + math.radians(a)), v[1] + r * math.sin(out + math.radians(a)))
                 for r in (34.0, 44.0) for a in (0, 25, -25, 50, -50, 80, -80, 110, -110)]
        _first_free_spot(canvas, name, spots, "vertex_label", LABEL, 8.0, True)


def tick_segments(scene: Scene, i: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The drawn ticks of T_{i+1} (0-based i; None: of every triangle) as segments in px. Latent geometry: the
    drawing and the pointer rule both use it."""
    segs = []
    for m in range(len(scene.divisions)):
        if (i is None or m == i) and ticked(scene, m):
            segs += _triangle_ticks(scene, m)
    return segs


@functools.lru_cache(maxsize=256)   # drawn per triangle, then all together by the T2 pointer's rule
def _triangle_ticks(scene: Scene, m: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    t = triangles_px(scene)[m]
    n, half = scene.divisions[m], TICK_PX[min(m, 1)][0] / 2
    segs = []
    for k in range(3):
        a, b = t[k], t[NEXT[k]]
        u = (b - a) / np.linalg.norm(b - a)
        nrm = np.array([-u[1], u[0]]) * half
        base = a + (np.arange(1, n) / n)[:, None] * (b - a)       # a + j / n * (b - a), j = 1 .. n - 1
        segs += list(zip(base - nrm, base + nrm))
    return tuple(segs)


def _side_marks(scene: Scene, j: int) -> list[float]:
    """Where ticks and corners lie along T2's side j (t2[j] -> t2[j + 1]), as fractions of it."""
    marks = [0.0, 1.0]
    if len(scene.divisions) > 1:
        marks.append(float(fractions_of(scene, 1)[j]))
        if ticked(scene, 1):
            marks += [m / scene.divisions[1] for m in range(1, scene.divisions[1])]
    return marks


@functools.lru_cache(maxsize=256)
def _marks_geometry(scene: Scene) -> MultiLineString | MultiPoint:
    segs = tick_segments(scene)
    pts = MultiPoint([tuple(v) for t in triangles_px(scene) for v in t])
    return pts.union(MultiLineString([tuple(map(tuple, seg)) for seg in segs])) if segs else pts


@functools.lru_cache(maxsize=256)
def _marks_parts(scene: Scene) -> np.ndarray:
    """The ticks and drawn vertices of `_marks_geometry`, one geometry each, without the union."""
    segs = tick_segments(scene)
    pts = shapely.points(np.concatenate(triangles_px(scene)))
    return np.concatenate([shapely.linestrings(np.array(segs)), pts]) if segs else pts


def _head_clear(scene: Scene, head: Polygon) -> bool:
    """head.distance(_marks_geometry(scene)) >= HEAD_CLEAR_PX. The union costs more than the rest of the pointer:
    the nearest of its parts lies at the same distance up to rounding, so the union is built only where that
    distance is within `SURE_PX` of the limit."""
    d = float(shapely.distance(head, _marks_parts(scene)).min())
    if abs(d - HEAD_CLEAR_PX) > SURE_PX:
        return d >= HEAD_CLEAR_PX
    return head.distance(_marks_geometry(scene)) >= HEAD_CLEAR_PX


def arrowhead_px(tip: np.ndarray, tail: np.ndarray) -> Polygon:
    """The head shapes.arrow draws at `tip` for a stem from `tail` (same proportions)."""
    d = (tip - tail) / np.linalg.norm(tip - tail)
    n, base = np.array([-d[1], d[0]]), tip - d * HEAD_PX
    return Polygon([tip, base + n * HEAD_PX * 0.45, base - n * HEAD_PX * 0.45])


def pointer_tip(scene: Scene, k: int, centre: np.ndarray) -> np.ndarray | None:
    """Tip of the pointer from the label at `centre` (px, in ABC's corner triangle at V_k) to T2's side that bounds
    that corner triangle: POINTER_GAP_PX short of the side, at a point >= POINTER_CLEAR_PX along it from every tick
    and corner on it, with the head >= HEAD_CLEAR_PX from every tick and drawn vertex. Of those, the foot nearest
    the label's projection (the straightest pointer), preferring feet twice as clear (a pointer 12 px from a corner
    can still seem to point at the corner); None when there is none."""
    t1, t2 = triangles_px(scene)[:2]
    j = (k - 1) % 3
    a, e = t2[j], t2[NEXT[j]]
    length = float(np.linalg.norm(e - a))
    u = (e - a) / length
    out = np.array([-u[1], u[0]])
    if out @ (t1[k] - a) < 0:
        out = -out
    marks = np.array(_side_marks(scene, j)) * length
    along = np.arange(POINTER_CLEAR_PX, length - POINTER_CLEAR_PX + 1e-9, 2.0)
    clear = np.abs(along[:, None] - marks[None]).min(axis=1)
    keep = clear >= POINTER_CLEAR_PX
    along, clear = along[keep], clear[keep]
    want = float((centre - a) @ u)
    for x in along[np.lexsort((np.abs(along - want), clear < 2 * POINTER_CLEAR_PX))]:
        tip = a + x * u + out * POINTER_GAP_PX
        if np.linalg.norm(tip - centre) > HEAD_PX and _head_clear(scene, arrowhead_px(tip, centre)):
            return tip
    return None


def _t2_label(canvas: Canvas, scene: Scene, tris: list[np.ndarray]) -> None:
    """"T2" inside one of ABC's corner triangles, pointing at the side of T2 that bounds it, clear of its ticks and
    corners (pointer_tip)."""
    t1, t2 = tris[0], tris[1]
    corners = [np.array([t1[k], t2[k], t2[(k - 1) % 3]]) for k in range(3)]   # corner at V_k: V_k, P_k, previous
    order = sorted(range(3), key=lambda k: -inradius_px(corners[k]))
    reason = "label_clash"
    for k in order:
        c = corners[k]
        s = _sides(c)
        inc = (c * np.array([s[1], s[2], s[0]])[:, None]).sum(axis=0) / s.sum()
        spots = [inc + f * (c[0] - inc) for f in (0.0, 0.2, 0.35, 0.5)]
        try:
            b = _first_free_spot(canvas, "T2", spots, "t2_label", LABEL, 8.0, False)
        except Reject:
            continue
        centre = np.array(b.centroid.coords[0])
        tip = pointer_tip(scene, k, centre)
        stem = LineString([centre, tip]).difference(b.buffer(3)) if tip is not None else None
        if stem is None or stem.is_empty or stem.length < 12:
            canvas.labels.pop()
            reason = "t2_pointer_clash"
            continue
        start = np.array(stem.coords[0]) if stem.geom_type == "LineString" else centre
        shapes.arrow(canvas, tuple(start), tuple(tip), Style(stroke=COLOURS[1], width_px=2.0), head_px=HEAD_PX,
                     owner="t2_label")
        draw_text_px(canvas, "T2", tuple(centre), LABEL)
        return
    raise Reject(reason)


def draw(scene: Scene, canvas: Canvas) -> None:
    tris = triangles_px(scene)
    for i, t in enumerate(tris):
        shapes.polygon(canvas, t, Style(stroke=COLOURS[i % 2], width_px=3.0), owner=f"T{i + 1}")
    for i, t in enumerate(tris[:-1]):
        if ticked(scene, i):
            length, width = TICK_PX[min(i, 1)]
            _ticks(canvas, t, tick_segments(scene, i), length, Style(stroke=COLOURS[i % 2], width_px=width),
                   owner=f"T{i + 1}")
    _vertex_labels(canvas, tris[0])
    _t2_label(canvas, scene, tris)
    text = f"Area of ABC = {scene.area_cm2} cm²"
    w, _ = text_size(canvas, text, TEXT)
    spots = itertools.chain(((x, y) for y in (36.0, 732.0) for x in (30 + w / 2, 738 - w / 2, 384.0)),
                            ((x, y) for y in range(40, 740, 24) for x in range(int(30 + w / 2), int(739 - w / 2), 24)))
    _first_free_spot(canvas, text, spots, "caption", TEXT, 8.0, True)


DOMAIN = Domain(
    id="nested_triangles", family="plane", title="Nested triangles",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="inversion", version=2,
    description="Triangles nested corner-on-side with tick marks: count all triangles, locate T2's corner, the "
                "corner triangle's share, T2 against the corners, the same after moving a corner, and the "
                "innermost area.",
    balance_keys=("triangle_count", "corner_on_ab", "larger_part", "larger_part_moved"),
)
