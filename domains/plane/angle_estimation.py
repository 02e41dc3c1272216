"""Angle estimation: four angles P, Q, R, S, one per quadrant cell of the canvas (P top left, Q top right, R bottom
left, S bottom right). Each angle is two black arms from a vertex and an arc of radius `ARC_PX` on the measured
side: the arc runs counter-clockwise from arm 1 to arm 2 and says which of the two angles between the arms is meant
(it may be reflex at levels 2-3). The ladder walks acute count -> class of Q -> size of Q -> ordering -> the rank of
Q once it is opened by a stated X degrees; the open question asks for the sum of P and R.

Directions are degrees counter-clockwise from page-right as seen on the page (y down): a point at distance d along
direction a from the vertex is (x + d cos a, y - d sin a). Arm 1 points along phi, arm 2 along phi + theta.
Ambiguity boundaries (deg): the class edges at 90 (|theta - 90| >= `RIGHT_GAP_DEG` unless theta is exactly 90, an
exact integer state) and 180 (`STRAIGHT_GAP_DEG`); two angles closer than g (`GAP_DEG[level]`) in the ordering, and
the opened Q closer than g to another angle (Q5).
Legibility: arms >= 80 px, the arc >= 14 px long, every angle (arms, arc, letter) inside its cell's drawable box.
Tolerance: Q3 accepts +-6 degrees at every level. DOMAINS.md 1.5 asks +-4 at level 3, tighter than a careful reader
can judge an unmarked angle by eye at 768 px, so the tolerance was widened (level 3 stays harder through its 8
degree ordering gaps and misleading arm lengths).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import shapely
from shapely.geometry import LineString

from grip.answers import Choice, Count, Number, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, LABEL, OKABE_ITO, Style
from grip.renderers.text import draw_text_px

NAMES = ("P", "Q", "R", "S")
CELLS = ((0, 0), (1, 0), (0, 1), (1, 1))      # (column, row) of each angle's 384 px cell
CELL_PX, SHARED_PAD_PX = 384, 8
ACUTE, RIGHT, OBTUSE, REFLEX = "acute", "right", "obtuse", "reflex"
CLASSES = (ACUTE, RIGHT, OBTUSE, REFLEX)
ARC_PX = 40.0
ARM_PX = (80.0, 170.0)
THETA = {1: (20, 160), 2: (20, 340), 3: (20, 340)}
GAP_DEG = {1: 20, 2: 12, 3: 8}
RIGHT_GAP_DEG, STRAIGHT_GAP_DEG, Q2_GAP_DEG = 8, 10, 10
EXTRA = (30, 40, 50, 60)
ESTIMATE_TOL, SUM_TOL = 6.0, 10.0
LABEL_HALF_PX = 13.0
LABEL_CLEAR_PX = 8.0
ARC = Style(stroke=OKABE_ITO["blue"], width_px=2.5)
ARM = Style(stroke=BLACK, width_px=3.0)
VERTEX = Style(stroke=BLACK, fill=BLACK, width_px=1.0)
LETTER = LABEL.with_(font_px=22.0)


@dataclass(frozen=True)
class Scene:
    level: int                                 # 1..3
    vertices: tuple[tuple[float, float], ...]  # per angle P, Q, R, S: vertex, page px
    base_deg: tuple[int, ...]                  # phi: arm 1 direction, degrees ccw from page-right, 0..359
    theta_deg: tuple[int, ...]                 # theta: the measured angle, ccw from arm 1 to arm 2, 20..340
    arms_px: tuple[tuple[float, float], ...]   # (arm 1, arm 2) lengths, 80..170 px
    extra_deg: int                             # X of Q5, one of EXTRA


# --- geometry (shared by margins, sampling and drawing) ----------------------------------------------------------

def along(v, a_deg: float, d: float) -> tuple[float, float]:
    a = math.radians(a_deg)
    return (v[0] + d * math.cos(a), v[1] - d * math.sin(a))


def cell_box(i: int) -> tuple[float, float, float, float]:
    """The drawable box of cell i: the cell less the safe border on canvas edges and 8 px on shared edges."""
    cx, cy = CELLS[i]
    pad = lambda inner: SHARED_PAD_PX if inner else SAFE_BORDER_PX   # noqa: E731
    return (cx * CELL_PX + pad(cx == 1), cy * CELL_PX + pad(cy == 1),
            (cx + 1) * CELL_PX - pad(cx == 0), (cy + 1) * CELL_PX - pad(cy == 0))


@lru_cache(maxsize=256)   # label_spot and extent ask for the same angle's points
def stroke_points(v, phi: float, theta: float, arms) -> tuple[tuple[tuple[float, float], ...], ...]:
    """The points of an angle's three strokes, as polylines in page px: arm 1, arm 2 (each from the vertex) and the
    arc."""
    return ((v, along(v, phi, arms[0])), (v, along(v, phi + theta, arms[1])),
            tuple(along(v, phi + theta * k / 24, ARC_PX) for k in range(25)))


def strokes(v, phi: float, theta: float, arms) -> tuple[LineString, ...]:
    """The three strokes as LineStrings, for GEOS."""
    return tuple(LineString(pts) for pts in stroke_points(v, phi, theta, arms))


LABEL_TRIES = [(64, 0), (90, 0), (34, 180), (50, 180)] + [(r, t) for r in (36, 60) for t in
                                                          (150, -150, 120, -120, 90, -90)]
LABEL_NEED_PX = LABEL_CLEAR_PX + 1.5   # a letter box's distance from every stroke, at least
NEAR_EPS_PX = 1e-6                     # plain-float distances within this of LABEL_NEED_PX go to GEOS


@lru_cache(maxsize=256)
def label_spot(v, phi: float, theta: float, arms) -> tuple[float, float] | None:
    """Centre of the letter: the first spot, along the bisector beyond the arc and then around the vertex, whose
    box keeps `LABEL_CLEAR_PX` from both arms and the arc (the box's distance from each at least
    `LABEL_NEED_PX`, as GEOS measures it). Decided in plain floats, which differ from GEOS's distances by far less
    than `NEAR_EPS_PX`; a spot that close to the bound is left to `_label_spot_geos`."""
    lines = [(pts, _bounds(pts)) for pts in stroke_points(v, phi, theta, arms)]
    bis = phi + theta / 2
    for r, turn in LABEL_TRIES:
        c = along(v, bis + turn, r)
        clear = _box_clear(c[0] - LABEL_HALF_PX, c[1] - LABEL_HALF_PX, c[0] + LABEL_HALF_PX, c[1] + LABEL_HALF_PX,
                           lines)
        if clear is None:
            return _label_spot_geos(v, phi, theta, arms)
        if clear:
            return c
    return None


def _bounds(pts) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def _box_clear(x0: float, y0: float, x1: float, y1: float, lines) -> bool | None:
    """Whether the box keeps `LABEL_NEED_PX` from every polyline of `lines` (each its points and bounds): True,
    False, or None where a distance lies within `NEAR_EPS_PX` of that bound. A polyline or segment whose bounds
    keep the bound (with the margin) is passed without measuring."""
    far = (LABEL_NEED_PX + NEAR_EPS_PX) ** 2
    undecided = False
    for pts, (u0, v0, u1, v1) in lines:
        dx, dy = max(u0 - x1, x0 - u1, 0.0), max(v0 - y1, y0 - v1, 0.0)
        if dx * dx + dy * dy >= far:
            continue
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            dx = max((ax if ax < bx else bx) - x1, x0 - (bx if ax < bx else ax), 0.0)
            dy = max((ay if ay < by else by) - y1, y0 - (by if ay < by else ay), 0.0)
            if dx * dx + dy * dy >= far:
                continue
            d = _box_segment_distance(x0, y0, x1, y1, ax, ay, bx, by)
            if d < LABEL_NEED_PX - NEAR_EPS_PX:
                return False
            undecided = undecided or d <= LABEL_NEED_PX + NEAR_EPS_PX
    return None if undecided else True


def _box_segment_distance(x0: float, y0: float, x1: float, y1: float, ax: float, ay: float, bx: float,
                          by: float) -> float:
    """Distance between the box (x0, y0, x1, y1) and the segment ab: 0 where they meet, else the least of the
    ends' distances from the box and the corners' distances from the segment."""
    # Liang-Barsky: the part of ab inside the box, if any
    dx, dy, t0, t1 = bx - ax, by - ay, 0.0, 1.0
    for p, q in ((-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)):
        if p == 0:
            if q < 0:
                break
        elif p < 0:
            t0 = max(t0, q / p)
        else:
            t1 = min(t1, q / p)
        if t0 > t1:
            break
    else:
        return 0.0
    d = min(math.hypot(max(x0 - x, 0.0, x - x1), max(y0 - y, 0.0, y - y1)) for x, y in ((ax, ay), (bx, by)))
    n2 = dx * dx + dy * dy
    for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)):
        t = min(max(((x - ax) * dx + (y - ay) * dy) / n2, 0.0), 1.0)   # the corner's nearest point on ab
        d = min(d, math.hypot(x - ax - t * dx, y - ay - t * dy))
    return d


def _label_spot_geos(v, phi: float, theta: float, arms) -> tuple[float, float] | None:
    """`label_spot` by GEOS: every spot's box against the three strokes in one call."""
    lines = np.array(strokes(v, phi, theta, arms), dtype=object)
    bis = phi + theta / 2
    spots = [along(v, bis + turn, r) for r, turn in LABEL_TRIES]
    c = np.array(spots)
    b = shapely.box(c[:, 0] - LABEL_HALF_PX, c[:, 1] - LABEL_HALF_PX, c[:, 0] + LABEL_HALF_PX,
                    c[:, 1] + LABEL_HALF_PX)
    clear = (shapely.distance(b[:, None], lines[None, :]) >= LABEL_NEED_PX).all(1)
    return next((p for p, ok in zip(spots, clear) if ok), None)


def extent(v, phi: float, theta: float, arms) -> tuple[float, float, float, float] | None:
    """Bounding box (x0, y0, x1, y1) of the whole angle: arms, arc and letter; None if the letter has no spot."""
    spot = label_spot(v, phi, theta, arms)
    if spot is None:
        return None
    xs, ys = [spot[0] - LABEL_HALF_PX, spot[0] + LABEL_HALF_PX], [spot[1] - LABEL_HALF_PX, spot[1] + LABEL_HALF_PX]
    for pts in stroke_points(v, phi, theta, arms):
        x0, y0, x1, y1 = _bounds(pts)   # the stroke's LineString's bounds
        xs += [x0 - 2, x1 + 2]
        ys += [y0 - 2, y1 + 2]
    return min(xs), min(ys), max(xs), max(ys)


def fits(scene: Scene, i: int) -> bool:
    e = extent(scene.vertices[i], scene.base_deg[i], scene.theta_deg[i], scene.arms_px[i])
    b = cell_box(i)
    return e is not None and b[0] <= e[0] and b[1] <= e[1] and e[2] <= b[2] and e[3] <= b[3]


# --- answers -----------------------------------------------------------------------------------------------------

def class_of(theta: int) -> str:
    return ACUTE if theta < 90 else RIGHT if theta == 90 else OBTUSE if theta < 180 else REFLEX


def acute_count(scene: Scene) -> Count:
    return Count(sum(t < 90 for t in scene.theta_deg), 0, 4)


def class_of_q(scene: Scene) -> Choice:
    return Choice(class_of(scene.theta_deg[1]), CLASSES)


def size_of_q(scene: Scene) -> Number:
    return Number(float(scene.theta_deg[1]), ESTIMATE_TOL, "degrees", low=0.0, high=360.0)


def smallest_to_largest(scene: Scene, reverse: bool = False) -> Ordered:
    order = sorted(range(4), key=lambda i: scene.theta_deg[i], reverse=reverse)
    return Ordered(tuple(NAMES[i] for i in order), "order from largest to smallest" if reverse else
                   "order from smallest to largest", NAMES)


def rank_of_q(scene: Scene) -> Count:
    """Q's rank among the four angles, 1 = smallest."""
    return Count(1 + sum(t < scene.theta_deg[1] for t in scene.theta_deg), 1, 4)


def sum_p_r(scene: Scene) -> Record:
    return Record((("sum", Number(float(scene.theta_deg[0] + scene.theta_deg[2]), SUM_TOL, "degrees",
                                  low=0.0)),))


def edit(scene: Scene) -> Scene:
    """Q5's edit: angle Q opened by X degrees (arm 2 turns X further from arm 1, on the arc's side)."""
    t = list(scene.theta_deg)
    t[1] += scene.extra_deg
    return replace(scene, theta_deg=tuple(t))


counterfactual = rank_of_q


# --- margins -----------------------------------------------------------------------------------------------------

def min_gap(values) -> float:
    v = sorted(values)
    return float(min(b - a for a, b in zip(v, v[1:])))


def right_gap(scene: Scene) -> float:
    return float(min((abs(t - 90) for t in scene.theta_deg if t != 90), default=90))


def q_class_gap(scene: Scene) -> float:
    t = scene.theta_deg[1]
    return float(min(abs(t - 180), abs(t - 90) if t != 90 else 90))


def straight_gap(scene: Scene) -> float:
    return float(min(abs(t - 180) for t in scene.theta_deg))


def opened_gap(scene: Scene) -> float:
    t = scene.theta_deg[1] + scene.extra_deg
    return float(min(abs(t - o) for i, o in enumerate(scene.theta_deg) if i != 1))


def arc_len_px(scene: Scene, i: int = 1) -> float:
    return ARC_PX * math.radians(scene.theta_deg[i])


def ladder(scene: Scene) -> Ladder:
    g, x = GAP_DEG[scene.level], scene.extra_deg
    note = "Each angle is the one its arc marks."
    rungs = (
        Question(1, "acute_count", f"How many of the four marked angles are acute (less than 90°)? {note}",
                 acute_count(scene), Margin(right_gap(scene), "deg", RIGHT_GAP_DEG, "an angle near 90°")),
        Question(2, "class_of_q", f"Classify angle Q: acute (less than 90°), right (exactly 90°), obtuse (more than "
                 f"90° and less than 180°) or reflex (more than 180°). {note}", class_of_q(scene),
                 Margin(q_class_gap(scene), "deg", Q2_GAP_DEG, "angle Q near 90° or 180°")),
        Question(3, "size_of_q", f"Estimate angle Q in degrees. {note}", size_of_q(scene),
                 Margin(arc_len_px(scene), "px", 12.0, "an arc too short to show its side")),
        Question(4, "smallest_to_largest", f"List the four angles P, Q, R, S from smallest to largest. {note}",
                 smallest_to_largest(scene), Margin(min_gap(scene.theta_deg), "deg", g, "two angles nearly equal")),
        Question(5, "rank_of_q_opened", f"If angle Q were opened by a further {x}° (its second arm turning {x}° "
                 "further from its first arm, on the side its arc marks), what would its rank be among the four "
                 "angles, 1 = smallest?", counterfactual(edit(scene)),
                 Margin(opened_gap(scene), "deg", g, "the opened Q nearly equal to another angle"),
                 edit=f"angle Q opened by {x} degrees"),
    )
    open_q = Question(6, "sum_p_r", f"Estimate the sum of angles P and R in degrees. Explain how you estimated each. "
                      f"{note}", sum_p_r(scene),
                      Margin(straight_gap(scene), "deg", STRAIGHT_GAP_DEG, "an angle near a straight angle"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    return Question(4, "largest_to_smallest", "List the four angles P, Q, R, S from largest to smallest. Each angle "
                    "is the one its arc marks.", smallest_to_largest(scene, reverse=True),
                    Margin(min_gap(scene.theta_deg), "deg", GAP_DEG[scene.level], "two angles nearly equal"))


# --- sampling ----------------------------------------------------------------------------------------------------

def _valid(theta: int, level: int) -> bool:
    lo, hi = THETA[level]
    return lo <= theta <= hi and (theta == 90 or abs(theta - 90) >= RIGHT_GAP_DEG) and \
        abs(theta - 180) >= STRAIGHT_GAP_DEG


Q_THETA = {ACUTE: (20, 82), RIGHT: (90, 90), OBTUSE: (98, 170), REFLEX: (190, 340)}   # Q's range per class


def _thetas(d: Draws, level: int, cls: str, r4: int, r5: int, n_acute: int, tries: int):
    """theta of P, Q, R, S and X with Q in class `cls`, Q's rank r4 now and r5 once opened by X, and n_acute acute
    angles; every gap at least g. The first of `tries` draws that succeeds; None if every one failed."""
    g, (lo, hi) = GAP_DEG[level], THETA[level]
    q_lo, q_hi = Q_THETA[cls][0], min(Q_THETA[cls][1], hi) + 1
    acute_hi, blunt_lo = 90 - RIGHT_GAP_DEG, 90 + RIGHT_GAP_DEG
    below, between = r4 - 1, r5 - 1
    integers = d.integers
    for _ in range(tries):
        tq = integers(q_lo, q_hi)
        x = EXTRA[integers(len(EXTRA))]      # the draw of rng.choice(EXTRA)
        if tq + x > 340:
            continue
        # Three slots for the other angles: r4 - 1 below Q, r5 - r4 between Q and the opened Q, 4 - r5 above it.
        # The acute ones are the smallest: the first n_acute - [Q acute] slots take acute values, the rest obtuse
        # or more, each drawn in ascending order at least g above the one before.
        k = n_acute - (tq < 90)
        others, prev = [], -g
        for n in range(3):
            a, b = (lo, tq - g) if n < below else (tq + g, tq + x - g) if n < between else (tq + x + g, hi)
            a = max(a, prev + g, blunt_lo) if n >= k else max(a, prev + g)
            if n < k and b > acute_hi:
                b = acute_hi
            if a > b:
                break
            prev = integers(a, b + 1)
            if abs(prev - 180) < STRAIGHT_GAP_DEG:
                break
            others.append(prev)
        else:
            thetas = [others[0], tq] + others[1:]
            if not all(_valid(t, level) for t in thetas) or sum(t < 90 for t in thetas) != n_acute or \
                    min_gap(thetas) < g or min(abs(tq + x - o) for o in others) < g:
                continue
            order = d.permutation(3)         # which of P, R, S takes which slot
            out = [0, tq, 0, 0]
            for slot, who in zip(others, order):
                out[(0, 2, 3)[who]] = slot
            return out, x
    return None


def _arms(d: Draws, level: int, thetas) -> list[tuple[float, float]]:
    if level < 3:
        return [(round(d.uniform(*ARM_PX), 1), round(d.uniform(*ARM_PX), 1)) for _ in thetas]
    # Level 3: the smaller the angle, the longer its arms, so arm length never hints at size.
    rank = {i: r for r, i in enumerate(sorted(range(4), key=lambda i: thetas[i]))}
    return [tuple(round(d.uniform(150 - 22 * rank[i], 170 - 22 * rank[i]), 1) for _ in range(2))
            for i in range(4)]


def _place(d: Draws, i: int, phi: int, theta: int, arms) -> tuple[float, float] | None:
    """A vertex for angle i such that the whole angle lies in its cell's drawable box."""
    e = extent((0.0, 0.0), phi, theta, arms)
    if e is None:
        return None
    b = cell_box(i)
    x_lo, x_hi, y_lo, y_hi = b[0] - e[0], b[2] - e[2], b[1] - e[1], b[3] - e[3]
    if x_lo > x_hi or y_lo > y_hi:
        return None
    return (round(d.uniform(x_lo, x_hi), 1), round(d.uniform(y_lo, y_hi), 1))


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first: Q's class (uniform; reflex only at levels 2-3), Q5's rank (uniform 1-4), Q's rank now, Q1
    uniform over what Q's class and rank allow; then angles are drawn to match."""
    if level not in (1, 2, 3):
        raise ValueError(f"angle_estimation: level must be 1, 2 or 3, got {level!r}")
    d = Draws(rng)       # the Generator's own draws, cheaper
    cls = CLASSES[d.integers(3 if level == 1 else 4)]
    r5 = d.integers(1, 5)
    # Q's rank moves in 2/3 of the items where it can, mostly by one place (a uniform drop would make Q the
    # smallest angle in over half the items).
    r4 = r5 if r5 == 1 or d.random() >= 2 / 3 else r5 - 1 if d.random() < 0.7 else d.integers(1, r5)
    # Angles below Q are acute if Q is; Q right: exactly those below it; Q obtuse or reflex: any below it.
    allowed = {ACUTE: range(r4, 5), RIGHT: range(r4 - 1, r4), OBTUSE: range(0, r4), REFLEX: range(0, r4)}[cls]
    n_acute = d.pick(allowed)
    got = _thetas(d, level, cls, r4, r5, n_acute, 300)
    if got is None:
        raise Reject("no_angles_for_targets")
    thetas, x = got
    arms = _arms(d, level, thetas)
    phis, verts = [], []
    for i in range(4):
        for _ in range(20):
            phi = d.integers(0, 360)
            v = _place(d, i, phi, thetas[i], arms[i])
            if v is not None:
                break
        else:
            raise Reject("angle_does_not_fit")
        phis.append(phi)
        verts.append(v)
    return Scene(level, tuple(verts), tuple(phis), tuple(thetas), tuple(arms), x)


# --- minimal pair ------------------------------------------------------------------------------------------------

def minimal_pair(scene: Scene) -> Scene:
    """One arm of one angle rotated so that the angle swaps rank with its neighbour (delta = gap + g), the other
    three untouched; the smallest such move that keeps Q1 and every margin and stays inside its box (ties: letter
    order, arm 2 before arm 1)."""
    g, t = GAP_DEG[scene.level], scene.theta_deg
    order = sorted(range(4), key=lambda i: t[i])
    q1, q4 = acute_count(scene), smallest_to_largest(scene)
    moves = []
    for lo_i, hi_i in zip(order, order[1:]):
        d = t[hi_i] - t[lo_i] + g
        moves += [(d, lo_i, +d), (d, hi_i, -d)]
    for d, i, delta in sorted(moves, key=lambda m: (m[0], NAMES[m[1]])):
        for arm in (2, 1):
            th = list(t)
            th[i] += delta
            ph = list(scene.base_deg)
            if arm == 1:                       # turning arm 1 the other way keeps arm 2 where it is
                ph[i] = (ph[i] - delta) % 360
            s = replace(scene, theta_deg=tuple(th), base_deg=tuple(ph))
            if not _valid(th[i], scene.level) or not fits(s, i):
                continue
            lad = ladder(s)
            if lad.failing_margins() or acute_count(s) != q1 or lad.rungs[3].answer.key() == q4.key():
                continue
            return s
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def draw(scene: Scene, canvas: Canvas) -> None:
    for i in range(4):
        if not fits(scene, i):
            raise Reject("angle_does_not_fit")
        v, phi, theta, arms = scene.vertices[i], scene.base_deg[i], scene.theta_deg[i], scene.arms_px[i]
        arc = [along(v, phi + theta * k / 48, ARC_PX) for k in range(49)]
        shapes.polyline(canvas, arc, ARC, owner=NAMES[i])
        for a, length in ((phi, arms[0]), (phi + theta, arms[1])):
            shapes.line(canvas, v, along(v, a, length), ARM, owner=NAMES[i])
        shapes.circle(canvas, v, 3.5, VERTEX, owner=NAMES[i])
        draw_text_px(canvas, NAMES[i], label_spot(v, phi, theta, arms), LETTER)


DOMAIN = Domain(
    id="angle_estimation", family="plane", title="Angle estimation",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="Four angles marked by arcs: how many are acute, the class and size of Q, the four in order of "
                "size, and Q's rank once it is opened by a stated amount.",
    balance_keys=("acute_count", "class_of_q", "rank_of_q_opened"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="reversal", version=2,
)
