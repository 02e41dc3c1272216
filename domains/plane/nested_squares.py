"""Nested squares: S1 is an axis-aligned square of stated side; each next square has its corners a fraction
t_i = k_i/n_i of the way along the sides of the square around it (all four in the same rotational sense), so it is
turned counter-clockwise. Rings between consecutive squares and the centre square are shaded or not (grey with a
hatch). The ladder walks count -> where S2 touches S1's top side -> S2's side -> shaded vs unshaded area -> S2
redrawn at another fraction; the open question asks for the innermost square's share of S1.

Rules (exact, `fractions.Fraction`): a_i = t_i^2 + (1 - t_i)^2 scales the area, the shaded fraction is
F = sum_i sigma_i (A_i - A_{i+1}) / A_1 + sigma_N A_N / A_1. Vertex order: V1 top-left, V2 bottom-left,
V3 bottom-right, V4 top-right (counter-clockwise on the page), so S2's corner on the top side lies (1 - t_1) L from
the top-left corner.
Ambiguity boundaries: the middle of S1's top side (exact by construction, otherwise 0.1 of a side away); F and F'
(the shaded share after the edit) at 1/2 (`AREA_GAP`, fraction of S1's area).
Legibility: level 3 draws no ticks, so S2's side must be judged by eye: its tolerance is widened from 2% to 4% there
(`SIDE_TOL`). Level 3's fractions are also restricted to 1/6, 1/3, 1/2, 2/3, 5/6 (`UNTICKED`, n_i in {2, 3, 6},
still k_i/n_i with n_i <= 6): every two candidates are at least 1/6 of a side apart, so no untick-marked corner can
be taken for a neighbouring value (1/4 against 1/5 is 0.05 of a side and moves the innermost share by 8%, beyond its
3% tolerance). Outlines: every corner triangle has inradius >= `OUTLINE_CLEAR_PX` and non-consecutive outlines stay
that far apart (Q1's margin). Ticks (levels 1-2) are 10 px, each half shortened where it would come within
`TICK_CLEAR_PX` of another square's outline; a scene whose shortened tick falls below `TICK_MIN_PX`, or whose ticks of
two squares come within `TICK_CLEAR_PX`, is rejected (the open question's margin). The hatch is inset from every outline so that it never runs over a tick. The innermost square is not
labelled with its number (that label would state Q1's answer).
Q3 names no length: S1's side is read off the figure, where it is printed below S1 (stated in the text, it would
all but fix Q3's answer, since t_1 = 1/2 for every "middle" contact point and the other fractions are few).
Counts: N = 3 is never drawn (the sheet has it at L1-L2). With three squares no shading reaches a cell with
Q4 != Q5: F' - F = (a' - a_1)(G - sigma_1) needs G within 0.27 of sigma_1, and S2's two regions give G = 0, 1 - a_2
or a_2 (>= 0.28 from sigma_1 unless constant). N is L1 4-6, L2 4-7, L3 5-7 (no value above 31% of the default mix).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

import numpy as np
import shapely

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.geometry import (corner_triangles, fitted_ticks, nest, outline_clearance, regular_ratio_sq, tick_stats,
                           triangle_inradius)
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY_DARK, LABEL, TEXT, Style, hex_rgb
from grip.renderers.text import draw_text_px, text_size

SIDES_CM = (8, 10, 12, 15, 20)
N_BY_LEVEL = {1: (4, 5, 6), 2: (4, 5, 6, 7), 3: (5, 6, 7)}   # no N = 3: see the module docstring
N_MAX = {1: 4, 2: 6, 3: 6}                   # largest division count n_i
AREA_GAP = {1: 0.03, 2: 0.03, 3: 0.05}       # |F - 1/2|, fraction of S1's area
MIDDLE_GAP = Fraction(1, 10)                 # |f - 1/2| of a contact point that is not the middle
SIDE_TOL = {1: 0.02, 2: 0.02, 3: 0.04}       # relative tolerance of S2's side (ticks at L1-L2 only)
TRIES = 200                                  # tries per target before the sampler rejects
EDIT_TS = (Fraction(1, 6), Fraction(1, 5), Fraction(1, 4), Fraction(1, 3))
EDIT_WORDS = {Fraction(1, 6): "one sixth", Fraction(1, 5): "one fifth", Fraction(1, 4): "one quarter",
              Fraction(1, 3): "one third"}
INNER_MIN_PX, TICK_GAP_PX, TICK_PX = 60.0, 14.0, 10.0
OUTLINE_CLEAR_PX = 8.0                       # corner-triangle inradius and gap between non-consecutive outlines
TICK_CLEAR_PX = 3.0                          # every tick point keeps this far from other outlines and their ticks
TICK_MIN_PX = 6.0                            # a tick shortened near another outline keeps at least this length
# Level 3 draws no ticks: its fractions are sixths, thirds and halves only, pairwise >= 1/6 of a side apart
# (lowest terms, so n_i is 2, 3 or 6).
UNTICKED = ((2, 1), (3, 1), (3, 2), (6, 1), (6, 5))
CENTER = (384.0, 392.0)                      # a little low: room for the labels above S1
SHADE = hex_rgb("#c8c8c8")
HATCH = Style(stroke=(0.45, 0.45, 0.45), width_px=1.2)
SHADED, UNSHADED = "shaded", "unshaded"
LEFT, RIGHT, MIDDLE = "left", "right", "middle"
CELLS = ((SHADED, SHADED), (SHADED, UNSHADED), (UNSHADED, SHADED), (UNSHADED, UNSHADED))


@dataclass(frozen=True)
class Scene:
    level: int                      # 1..3: ranges, ticks (L1-L2), thresholds
    side_cm: int                    # S1's stated side, one of SIDES_CM
    side_px: float                  # S1's drawn side, 560..640 px
    divisions: tuple[int, ...]      # n_i for S_{i+1} inside S_i, i = 1..N-1, 2..6
    ticks: tuple[int, ...]          # k_i, 1..n_i - 1: S_{i+1}'s corners at t_i = k_i/n_i
    shaded: tuple[int, ...]         # sigma_1..sigma_N: ring R_i = S_i minus S_{i+1}, last = centre square; 0/1
    edit_t: tuple[int, int]         # Q5's fraction t' = (numerator, denominator), one of EDIT_TS


# --- exact quantities --------------------------------------------------------------------------------------------

def fractions_t(scene: Scene) -> list[Fraction]:
    return [Fraction(k, n) for k, n in zip(scene.ticks, scene.divisions)]


def area_shares(ts, shaded) -> list[Fraction]:
    """Area of each region (rings, then the centre square) as a fraction of S1's area."""
    return list(_area_shares(tuple(ts)))


@lru_cache(maxsize=256)   # the minimal pair asks it again for the same fractions
def _area_shares(ts: tuple) -> tuple[Fraction, ...]:
    sizes = [Fraction(1)]
    for t in ts:
        sizes.append(sizes[-1] * _ratio_sq(t))
    return tuple([sizes[i] - sizes[i + 1] for i in range(len(ts))] + [sizes[-1]])


@lru_cache(maxsize=None)   # one value per tick fraction: a few dozen in all
def _ratio_sq(t) -> Fraction:
    return regular_ratio_sq(4, t)


@lru_cache(maxsize=256)   # the sampler asks it for every candidate t' of every try, the answers and margins again
def _share_counts(divisions: tuple[int, ...], ticks: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """`area_shares` in integers: each region's share of S1's area times D = prod n_i^2, and D. S_i's area times D
    is an integer, S_{i+1}'s that times k_i^2 + (n_i - k_i)^2 over n_i^2 (a_i for t_i = k_i/n_i)."""
    den = 1
    for n in divisions:
        den *= n * n
    size, counts = den, []
    for k, n in zip(ticks, divisions):
        inner = size // (n * n) * (k * k + (n - k) * (n - k))
        counts.append(size - inner)
        size = inner
    return tuple(counts) + (size,), den


def _share_floats(divisions: tuple[int, ...], ticks: tuple[int, ...]) -> np.ndarray:
    """The floats of `area_shares` (integer true division rounds the exact share, as float(Fraction) does)."""
    counts, den = _share_counts(divisions, ticks)
    return np.array([x / den for x in counts])


@lru_cache(maxsize=64)
def shaded_fraction(scene: Scene) -> Fraction:
    counts, den = _share_counts(scene.divisions, scene.ticks)
    return Fraction(sum(s * x for s, x in zip(scene.shaded, counts)), den)


def contact_fraction(scene: Scene) -> Fraction:
    """f: distance of S2's corner on the top side from S1's top-left corner, as a fraction of the side."""
    return 1 - Fraction(scene.ticks[0], scene.divisions[0])


def _shape(scene: Scene) -> tuple:
    """What the squares and their ticks depend on. The caches below are keyed by it, so that the sampler's trial
    scene, the scene it returns (shading and t' chosen) and that scene's twins share one computation."""
    return scene.level, scene.side_px, scene.divisions, scene.ticks


def layout(scene: Scene) -> list[tuple[tuple[float, float], ...]]:
    """The N squares in px (y down), each V1..V4 counter-clockwise from its first vertex."""
    return list(_layout(_shape(scene)))


@lru_cache(maxsize=64)   # every legibility rule, margin and the renderer start from it
def _layout(shape: tuple) -> tuple[tuple[tuple[float, float], ...], ...]:
    _, side_px, divisions, ticks = shape
    h, (cx, cy) = side_px / 2, CENTER
    outer = ((cx - h, cy - h), (cx - h, cy + h), (cx + h, cy + h), (cx + h, cy - h))
    return tuple(nest(outer, [k / n for k, n in zip(ticks, divisions)]))   # k / n == float(Fraction(k, n))


def sides_px(scene: Scene) -> list[float]:
    return list(_sides_px(_shape(scene)))


@lru_cache(maxsize=64)
def _sides_px(shape: tuple) -> tuple[float, ...]:
    return tuple(float(np.hypot(sq[1][0] - sq[0][0], sq[1][1] - sq[0][1])) for sq in _layout(shape))


def min_inradius_px(scene: Scene) -> float:
    return _min_inradius_px(_layout(_shape(scene)))


def _min_inradius_px(sq) -> float:
    return min(triangle_inradius(*tri) for i in range(len(sq) - 1) for tri in corner_triangles(sq[i], sq[i + 1]))


def min_tick_gap_px(scene: Scene) -> float:
    return min(s / n for s, n in zip(sides_px(scene), scene.divisions))


def outline_clearance_px(scene: Scene) -> float:
    """How far apart the outlines stay where they do not touch by construction: the smallest corner-triangle
    inradius between consecutive squares and the smallest gap between non-consecutive ones (px)."""
    return _outline_clearance_px(_shape(scene))


@lru_cache(maxsize=64)   # asked by the sampler's legibility test and the margins
def _outline_clearance_px(shape: tuple) -> float:
    sq = _layout(shape)
    return min(_min_inradius_px(sq), outline_clearance(sq))


def drawn_ticks(scene: Scene) -> tuple:
    """The tick marks as drawn (levels 1-2; none at level 3): `TICK_PX` long, each half shortened where it would
    come within `TICK_CLEAR_PX` of another square's outline ((end, end, square index) in px)."""
    return _drawn_ticks(_shape(scene))


@lru_cache(maxsize=64)   # asked by the sampler's legibility test, the margins and the renderer alike
def _drawn_ticks(shape: tuple) -> tuple:
    level, _, divisions, ticks = shape
    if level == 3:
        return ()
    return tuple(fitted_ticks(_layout(shape), divisions, range(len(divisions)),
                              [k / n for k, n in zip(ticks, divisions)], TICK_PX, TICK_CLEAR_PX))


def tick_legibility_px(scene: Scene) -> float:
    """The tick rule as one margin against `TICK_CLEAR_PX`: the smallest distance between ticks of different
    squares, and the shortest tick's excess over `TICK_MIN_PX` added to the clearance (a tick shorter than
    `TICK_MIN_PX` fails). inf at level 3 (no ticks)."""
    return _tick_legibility_px(_shape(scene))


@lru_cache(maxsize=64)
def _tick_legibility_px(shape: tuple) -> float:
    shortest, apart = tick_stats(_drawn_ticks(shape))
    return min(apart, TICK_CLEAR_PX + shortest - TICK_MIN_PX)


# --- sampling ----------------------------------------------------------------------------------------------------

def _sigmas(n: int) -> np.ndarray:
    """Every non-constant shading vector of n regions."""
    rows = [[(m >> i) & 1 for i in range(n)] for m in range(1, 2 ** n - 1)]
    return np.array(rows, dtype=float)


SIGMAS = {n: _sigmas(n) for n in range(3, 8)}


@lru_cache(maxsize=None)
def _first_ticks(level: int, q2: str) -> dict[int, list[int]]:
    """n_1 -> every k_1 whose contact point lies in the target class: t_1 = 1/2 (middle), t_1 >= 0.6 (left) or
    <= 0.4 (right)."""
    by_n: dict[int, list[int]] = {}
    for n in range(2, N_MAX[level] + 1):
        for k in range(1, n):
            if level == 3 and (n, k) not in UNTICKED:
                continue
            f = 1 - Fraction(k, n)
            cls = MIDDLE if f == Fraction(1, 2) else LEFT if f <= Fraction(1, 2) - MIDDLE_GAP else \
                RIGHT if f >= Fraction(1, 2) + MIDDLE_GAP else None
            if cls == q2:
                by_n.setdefault(n, []).append(k)
    return by_n


def _first_tick(rng: np.random.Generator, level: int, q2: str) -> tuple[int, int]:
    """(n_1, k_1) of the target class (`_first_ticks`): n_1 uniform over those that have one, then k_1."""
    by_n = _first_ticks(level, q2)
    n = int(rng.choice(sorted(by_n)))
    return n, int(rng.choice(by_n[n]))


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"nested_squares: level must be 1..3, got {level}")
    # Targets first: (Q4, Q5) uniform over the four cells, Q2 uniform over its three options, N uniform.
    q4, q5 = CELLS[int(rng.integers(4))]
    q2 = (LEFT, RIGHT, MIDDLE)[int(rng.integers(3))]
    n_sq = int(rng.choice(N_BY_LEVEL[level]))
    for _ in range(TRIES):
        s = build(rng, level, n_sq, q2, q4, q5)
        if s is not None:
            return s
    raise Reject("no_scene_for_cell")


def build(rng: np.random.Generator, level: int, n_sq: int, q2: str, q4: str, q5: str) -> Scene | None:
    """One try at a scene with the target answers: draw the fractions, then pick the shading and t' among all
    that meet the targets with their margins (None when no shading does)."""
    gap = AREA_GAP[level] + 1e-9
    n1, k1 = _first_tick(rng, level, q2)
    divs, ticks = [n1], [k1]
    for _ in range(n_sq - 2):
        if level == 3:
            n, k = UNTICKED[int(rng.integers(len(UNTICKED)))]
        else:
            n = int(rng.integers(2, N_MAX[level] + 1))
            k = int(rng.integers(1, n))
        divs.append(n)
        ticks.append(k)
    divs, ticks = tuple(divs), tuple(ticks)
    s = Scene(level, int(rng.choice(SIDES_CM)), float(rng.uniform(560, 640)), divs, ticks, (1,) + (0,) * (n_sq - 1),
              (1, 6))
    # The area targets first: they need no geometry, and the try fails alike whichever test rejects it.
    f_now = SIGMAS[n_sq] @ _share_floats(divs, ticks)
    ok_now = f_now > 0.5 + gap if q4 == SHADED else f_now < 0.5 - gap
    choices = []
    for tp in EDIT_TS:
        if tp.numerator * n1 in (k1 * tp.denominator, (n1 - k1) * tp.denominator):   # t' is t_1 or 1 - t_1
            continue
        f_edit = SIGMAS[n_sq] @ _share_floats((tp.denominator,) + divs[1:], (tp.numerator,) + ticks[1:])
        ok = ok_now & ((f_edit > 0.5 + gap) if q5 == SHADED else (f_edit < 0.5 - gap))
        choices += [(tp, int(r)) for r in np.flatnonzero(ok)]
    if not choices or not legible(s):
        return None
    tp, row = choices[int(rng.integers(len(choices)))]
    return replace(s, shaded=tuple(int(x) for x in SIGMAS[n_sq][row]), edit_t=(tp.numerator, tp.denominator))


def legible(scene: Scene) -> bool:
    # The cheap tests first: the tick rule is the costly one.
    if sides_px(scene)[-1] < INNER_MIN_PX or (scene.level < 3 and min_tick_gap_px(scene) < TICK_GAP_PX):
        return False
    return outline_clearance_px(scene) >= OUTLINE_CLEAR_PX and (scene.level == 3 or
                                                                 tick_legibility_px(scene) >= TICK_CLEAR_PX)


# --- answers ----------------------------------------------------------------------------------------------------

def square_count(scene: Scene) -> Count:
    return Count(len(scene.shaded), low=1, high=12)


def contact_side(scene: Scene) -> Choice:
    f = contact_fraction(scene)
    return Choice(MIDDLE if f == Fraction(1, 2) else LEFT if f < Fraction(1, 2) else RIGHT, (LEFT, RIGHT, MIDDLE))


def s2_side_cm(scene: Scene) -> Number:
    v = scene.side_cm * float(_ratio_sq(Fraction(scene.ticks[0], scene.divisions[0]))) ** 0.5
    return Number(round(v, 2), SIDE_TOL[scene.level], "cm", decimals=2, tol_kind="rel", low=0.0)


def larger_part(scene: Scene) -> Choice:
    return Choice(SHADED if shaded_fraction(scene) > Fraction(1, 2) else UNSHADED, (SHADED, UNSHADED))


def innermost_share(scene: Scene) -> Record:
    counts, den = _share_counts(scene.divisions, scene.ticks)
    v = counts[-1] / den                   # the float of the exact share (integer true division rounds it)
    return Record((("fraction", Number(round(v, 4), 0.03, "fraction of S1's area", decimals=4, tol_kind="rel",
                                       low=0.0, high=1.0)),))


def edit(scene: Scene) -> Scene:
    """Redraw S2 with its corners at t' along S1's sides; deeper squares keep their own fractions."""
    num, den = scene.edit_t
    return replace(scene, divisions=(den,) + scene.divisions[1:], ticks=(num,) + scene.ticks[1:])


counterfactual = larger_part


def minimal_pair(scene: Scene) -> Scene:
    """Toggle the shading of the fewest regions (ties: smallest total area, then lowest indices) so that Q4 flips
    while every rule still holds. Complementing all regions maps F to 1 - F, so a pair always exists."""
    n, q4 = len(scene.shaded), larger_part(scene).value
    shares = area_shares(fractions_t(scene), scene.shaded)
    for size in range(1, n + 1):
        subsets = sorted(combinations(range(n), size), key=lambda c: (sum(shares[i] for i in c), c))
        for c in subsets:
            sigma = tuple(1 - x if i in c else x for i, x in enumerate(scene.shaded))
            if len(set(sigma)) < 2:
                continue
            twin = replace(scene, shaded=sigma)
            if larger_part(twin).value != q4 and not ladder(twin).failing_margins():
                return twin
    raise Reject("no_minimal_pair")


# --- ladder -----------------------------------------------------------------------------------------------------

def _common(scene: Scene) -> str:
    if scene.level == 3:
        return ("The four corners of each square lie at one common fraction of the way along the four sides of the "
                "square around it, all four in the same rotational sense; that fraction can differ from one square "
                "to the next. ")
    return ("The tick marks divide each side of a square into equal parts, and the corners of the next square lie "
            "on ticks. ")


def _area_margin(scene: Scene) -> Margin:
    return Margin(abs(float(shaded_fraction(scene)) - 0.5), "fraction of S1's area", AREA_GAP[scene.level],
                  "shaded and unshaded areas equal")


def ladder(scene: Scene) -> Ladder:
    lv, f = scene.level, contact_fraction(scene)
    words = EDIT_WORDS[Fraction(*scene.edit_t)]
    inner = Margin(outline_clearance_px(scene), "px", OUTLINE_CLEAR_PX, "outlines too close to tell apart")
    mid = (Margin(1 / scene.divisions[0], "fraction of side", float(MIDDLE_GAP), "neighbouring tick of the middle")
           if f == Fraction(1, 2) else
           Margin(float(abs(f - Fraction(1, 2))), "fraction of side", float(MIDDLE_GAP), "contact point at the middle"))
    size = (Margin(min_tick_gap_px(scene), "px", TICK_GAP_PX, "ticks too close to count") if lv < 3 else
            Margin(sides_px(scene)[-1], "px", INNER_MIN_PX, "innermost square too small to see"))
    rungs = (
        Question(1, "square_count", "How many squares are drawn (nested outlines, S1 included)?",
                 square_count(scene), inner),
        Question(2, "s2_contact_on_top", "On the top side of S1, is the corner of S2 that touches it nearer the "
                 "left end, nearer the right end, or exactly at the middle of that side?", contact_side(scene), mid),
        Question(3, "s2_side", _common(scene) + "S1's side length is printed below S1. How long is a side of S2, in "
                 "cm?",
                 s2_side_cm(scene), size),
        Question(4, "larger_part", _common(scene) + "Inside S1, which is larger in total: the shaded area or the "
                 "unshaded area?", larger_part(scene), _area_margin(scene)),
        Question(5, "larger_part_after_redraw", _common(scene) + f"Suppose S2 were redrawn with each of its corners "
                 f"{words} of the way along a side of S1 (all four corners in the same rotational sense), every "
                 "smaller square kept its corners at the same fractions along the sides of the square around it as "
                 "now, and each ring and the centre square kept its shading. Inside S1, which would then be larger "
                 "in total: the shaded area or the unshaded area?", counterfactual(edit(scene)),
                 _area_margin(edit(scene)), edit=f"S2's corners moved to {words} of the way along S1's sides"),
    )
    open_q = Question(6, "innermost_share", _common(scene) + "What fraction of S1's area does the innermost square "
                      "cover? Explain how each square's area relates to the area of the square around it.",
                      innermost_share(scene),
                      Margin(tick_legibility_px(scene), "px", TICK_CLEAR_PX,
                             "tick too short or too close to another square's tick") if lv < 3 else
                      Margin(sides_px(scene)[-1], "px", INNER_MIN_PX, "innermost square too small to see"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked from the other side: the part that covers less than half of S1 (map: inversion)."""
    return Question(4, "smaller_part", _common(scene) + "Inside S1, which covers less than half of S1's area in "
                    "total: the shaded area or the unshaded area?",
                    Choice(UNSHADED if larger_part(scene).value == SHADED else SHADED, (SHADED, UNSHADED)),
                    _area_margin(scene))


# --- drawing ----------------------------------------------------------------------------------------------------

def _path(canvas: Canvas, polys) -> None:
    for poly in polys:
        canvas.ctx.move_to(*poly[0])
        for p in poly[1:]:
            canvas.ctx.line_to(*p)
        canvas.ctx.close_path()


def _hatch(canvas: Canvas, region, spacing_px: float = 13.0) -> None:
    """45-degree hatch clipped to a shapely region (px), which is already inset from every outline."""
    if region.is_empty:
        return
    ctx = canvas.ctx
    rings = shapely.get_rings(shapely.get_parts(region))     # part by part, its exterior then its holes
    xy = shapely.get_coordinates(rings).tolist()
    ends = np.cumsum(shapely.get_num_coordinates(rings)).tolist()
    with canvas.layer():
        _path(canvas, [xy[i:j] for i, j in zip([0] + ends[:-1], ends)])
        ctx.set_fill_rule(1)  # even-odd: holes stay clear
        ctx.clip()
        x0, y0, x1, y1 = region.bounds
        u = x0 - (y1 - y0)
        while u < x1:
            ctx.move_to(u, y1)
            ctx.line_to(u + (y1 - y0), y0)
            u += spacing_px
        ctx.set_source_rgb(*HATCH.stroke)
        ctx.set_line_width(HATCH.width_px)
        ctx.stroke()


def draw(scene: Scene, canvas: Canvas) -> None:
    sq = layout(scene)
    n = len(sq)
    shaded = [i for i, sigma in enumerate(scene.shaded) if sigma]
    # Every shaded region (ring S_i minus S_{i+1}, or the centre square) inset from its outlines, in one vectorised
    # call each: the polygons of Polygon(sq[i]), their differences and buffers, as shapely's methods make them.
    squares = shapely.polygons(np.array(sq))
    rings = [i for i in shaded if i + 1 < n]
    regions = dict(zip(rings, shapely.difference(squares[rings], squares[[i + 1 for i in rings]])))
    regions.update((i, squares[i]) for i in shaded if i + 1 == n)
    insets = shapely.buffer([regions[i] for i in shaded], -9.0, quad_segs=16, join_style=2)
    for i, inset in zip(shaded, insets):
        with canvas.layer():
            _path(canvas, [sq[i]] + ([sq[i + 1]] if i + 1 < n else []))
            canvas.ctx.set_fill_rule(1)
            canvas.ctx.set_source_rgb(*SHADE)
            canvas.ctx.fill()
        _hatch(canvas, inset)
    outline = Style(stroke=BLACK, width_px=3.0)
    for poly in sq:
        shapes.polygon(canvas, poly, outline, owner="squares")
    if scene.level < 3:
        ticks = [(a, b) for a, b, _ in drawn_ticks(scene)]
        shapes.segments(canvas, ticks, Style(stroke=BLACK, width_px=2.0), register=False)
    (x0, y0), _, (x1, y1), _ = sq[0]
    top = sq[1][3]                                   # S2's corner on S1's top side (P_4)
    labels = (("S1", (x0 - 20, y0 - 20), LABEL), ("S2", (top[0] + 26, y0 - 34), LABEL),
              (f"{scene.side_cm} cm", ((x0 + x1) / 2, y1 + 18), TEXT))
    boxes = [_label_box(canvas, *label) for label in labels]
    (a0, b0, a1, b1), (c0, d0, c1, d1) = boxes[:2]
    if not all(canvas.box_inside_safe(*b) for b in boxes) or (a0 <= c1 and c0 <= a1 and b0 <= d1 and d0 <= b1):
        raise Reject("text_clipped")
    shapes.line(canvas, (top[0] + 3, y0 - 4), (top[0] + 17, y0 - 24), Style(stroke=GREY_DARK, width_px=1.5))
    for label in labels:
        draw_text_px(canvas, *label)


def _label_box(canvas: Canvas, text: str, center_px, style: Style) -> tuple[float, float, float, float]:
    """The corners (x0, y0, x1, y1) of `text_box_px`, without the polygon: the label tests are box against box
    (the safe area, and S1's label against S2's, touching counted as overlap)."""
    (u, v), (w, h) = center_px, text_size(canvas, text, style)
    return u - w / 2, v - h / 2, u + w / 2, v + h / 2


DOMAIN = Domain(
    id="nested_squares", family="plane", title="Nested squares",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="Squares inscribed in squares at tick fractions, rings shaded: count, where S2 touches S1, S2's "
                "side, shaded vs unshaded area, and the same after S2 is redrawn at another fraction.",
    balance_keys=("square_count", "s2_contact_on_top", "larger_part", "larger_part_after_redraw"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="inversion", version=3,
)
