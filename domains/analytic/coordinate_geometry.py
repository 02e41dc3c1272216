"""Coordinate geometry: points A, B, C, D on a square grid with x and y axes (16 x 16 units at 40 px per unit).
Segments AB, BC, CA form a triangle; D is a separate dot. Tick numbers run along the bottom and left of the grid,
every 1, 2 or 4 units by level; at level 3 the origin sits off-centre and B, C, D may lie on half units (A is always
on whole units). The ladder walks A's coordinates -> D against line AB -> |AB| -> the triangle's class -> its area
with C reflected across the x-axis; the open question asks for the area itself.

Every answer is exact: coordinates are multiples of 1/2, so sides, dot products and areas are computed in integers (half units).
Ambiguity boundaries: (1) D's distance to line AB below `Q2_GAP_UNITS` (unless exactly 0, the "on" class, built by
putting D on a lattice point of the line); measured square to the line, which is never more than the sheet's
vertical distance, so steep lines keep D visibly off them; (2) the largest angle inside 90 +- `ANGLE_GAP_DEG` (unless
exactly 90, built from integer perpendicular vectors); (3) triangles, original or reflected, smaller than
`MIN_AREA` square units. Legibility: points keep half a unit clear of each other (px) and of segments they are not
on, and AB is at least two units long, so the line through A and B is well defined when extended.

Minimal pair: C moved by the shortest whole-unit step (one unit along an axis first, then diagonally, then farther,
up to three units each way) that changes the class with every margin holding; A, B and D stay, so Q1 and Q2 keep
their answers. Since AC and BC are redrawn, a triangle whose box (with C's new place) passes the sheet's 25% of
the canvas (0.7) has no pair, nor have some very obtuse ones: about 3 items in 10 reject; one unit suffices in
about 60% of the rest.
The Q4 rephrase compares the largest angle with 90 degrees; its options are Q4's (acute = less, right = equal,
obtuse = greater, with those words as aliases), so its map is the identity.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import shapely

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY, LABEL, OKABE_ITO, TEXT, Style
from grip.renderers.text import draw_text, draw_text_px, text_size

UNIT_PX = 40.0                         # the sheet's 40 px per unit
GRID_UNITS = 16                        # the drawn grid is 16 x 16 units
FRAME_PX = 64.0                        # left/top edge of the grid in px: (768 - 640) / 2
LABEL_STEP = {1: 1, 2: 2, 3: 4}        # tick numbers every 1, 2, 4 units
LATTICE = {1: 1, 2: 1, 3: 2}           # lattice points per unit (level 3: half units)
GAP_MAX_UNITS = {1: 16.0, 2: 4.0, 3: 2.5}   # D's vertical distance from line AB, harder levels nearer the line
Q2_GAP_UNITS = 0.5                     # |y_D - l_AB(x_D)| unless exactly 0
ANGLE_GAP_DEG = 6.0                    # largest angle outside (84, 96) unless exactly 90
MIN_AREA = 1.0                         # square units, original and reflected triangle
AREA_DIFF = 0.5                        # reflected area differs from the area by at least this (no copy-through)
CLEAR_PX = 20.0                        # half the gap between two points; a point's distance to other segments
AB_MIN_PX = 2 * UNIT_PX                # segment AB at least two units long
DOT_PX = 6.0                           # radius of the point dots
OWN_MARGIN_PX = 8.0                    # a label's box is this much nearer its own dot than any other
NAMES = "ABCD"
SIDES = ("above", "below", "on")
CLASSES = ("acute", "right", "obtuse")
CLASS_ALIASES = (("right-angled", "right"), ("right angled", "right"), ("right triangle", "right"),
                 ("acute-angled", "acute"), ("acute angled", "acute"), ("obtuse-angled", "obtuse"),
                 ("obtuse angled", "obtuse"))
SIDE_ALIASES = (("exactly on", "on"), ("on the line", "on"), ("above the line", "above"),
                ("below the line", "below"))
SEGMENT = Style(stroke=OKABE_ITO["blue"], width_px=2.5)
AXIS = Style(stroke=BLACK, width_px=3.0)
TICK_TEXT = TEXT.with_(font_px=15.0)
TRIES = 300


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3: tick spacing, window offset, half units
    window: tuple[int, int]                      # lower-left corner of the drawn grid, units; (-8, -8) at L1-L2
    points: tuple[tuple[float, float], ...]      # A, B, C, D in units, multiples of 1/2, inside [-8, 8]^2


# --- exact geometry (pure) -------------------------------------------------------------------------------------

def _halves(scene: Scene) -> list[tuple[int, int]]:
    """The four points in half units: exact integers, so the exact geometry below needs no Fractions."""
    return [(int(2 * x), int(2 * y)) for x, y in scene.points]


def _gap_halves(h) -> tuple[int, int]:
    """`vertical_gap` as an integer numerator and denominator, from the points in half units."""
    (xa, ya), (xb, yb), _, (xd, yd) = h
    return (yd - ya) * (xb - xa) - (yb - ya) * (xd - xa), 2 * (xb - xa)


def vertical_gap(scene: Scene) -> Fraction:
    """y_D minus the height of line AB at x_D, in units (x_A != x_B, so the line is a graph over x)."""
    return Fraction(*_gap_halves(_halves(scene)))


def line_distance(scene: Scene) -> float:
    """Perpendicular distance from D to line AB, units: |vertical gap| * cos(slope angle)."""
    (xa, ya), (xb, yb) = scene.points[:2]
    num, den = _gap_halves(_halves(scene))
    # int / int is correctly rounded, as float() of the same Fraction is
    return abs(num) / abs(den) * abs(xb - xa) / math.hypot(xb - xa, yb - ya)


def _dots_quarters(h) -> tuple[int, int, int]:
    """`dots` in quarter square units (points in half units): same signs, exact integers."""
    out = []
    for k in range(3):
        (x0, y0), (x1, y1), (x2, y2) = h[k], h[(k + 1) % 3], h[(k + 2) % 3]
        out.append((x1 - x0) * (x2 - x0) + (y1 - y0) * (y2 - y0))
    return tuple(out)


def dots(scene: Scene) -> tuple[Fraction, Fraction, Fraction]:
    """Dot product of the two edge vectors leaving A, B and C: its sign is the sign of that angle's cosine."""
    return tuple(Fraction(d, 4) for d in _dots_quarters(_halves(scene)))


def angles_deg(scene: Scene) -> tuple[float, float, float]:
    p = [(float(x), float(y)) for x, y in scene.points[:3]]
    out = []
    for k in range(3):
        (x0, y0), (x1, y1), (x2, y2) = p[k], p[(k + 1) % 3], p[(k + 2) % 3]
        out.append(math.degrees(math.atan2(abs((x1 - x0) * (y2 - y0) - (y1 - y0) * (x2 - x0)),
                                           (x1 - x0) * (x2 - x0) + (y1 - y0) * (y2 - y0))))
    return tuple(out)


def _area_eighths(scene: Scene) -> int:
    """`area` in eighths of a square unit: the shoelace cross product of the points in half units."""
    (xa, ya), (xb, yb), (xc, yc), _ = _halves(scene)
    return abs((xb - xa) * (yc - ya) - (xc - xa) * (yb - ya))


def area(scene: Scene) -> Fraction:
    """Shoelace formula on A, B, C, square units."""
    return Fraction(_area_eighths(scene), 8)


def _seg_dist(p, a, b) -> float:
    """Distance from point p to segment ab (floats, units)."""
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def clearance_px(scene: Scene) -> float:
    """Half the smallest distance between two points, or the smallest distance of a point to a triangle side it is
    not an end of (D to AB is left out when D lies on line AB: that is the "on" answer, drawn as such)."""
    p = scene.points
    on_line = _gap_halves(_halves(scene))[0] == 0
    gaps = [math.dist(p[i], p[j]) / 2 for i in range(4) for j in range(i + 1, 4)]
    for i in range(4):
        for j, k in ((0, 1), (1, 2), (2, 0)):
            if i in (j, k) or (i == 3 and (j, k) == (0, 1) and on_line):
                continue
            gaps.append(_seg_dist(p[i], p[j], p[k]))
    return min(gaps) * UNIT_PX


# --- answers ----------------------------------------------------------------------------------------------------

def coordinates_of_a(scene: Scene) -> Record:
    x, y = scene.points[0]
    return Record((("x", Count(int(x), low=-8, high=8)), ("y", Count(int(y), low=-8, high=8))))


def side_of_line(scene: Scene) -> Choice:
    num, den = _gap_halves(_halves(scene))
    return Choice("on" if num == 0 else "above" if (num > 0) == (den > 0) else "below", SIDES, SIDE_ALIASES)


def length_ab(scene: Scene) -> Number:
    (xa, ya), (xb, yb) = scene.points[:2]
    return Number(round(math.hypot(xb - xa, yb - ya), 2), 0.02, "units", decimals=2, low=0.0)


def triangle_class(scene: Scene) -> Choice:
    d = _dots_quarters(_halves(scene))
    value = "right" if 0 in d else "obtuse" if min(d) < 0 else "acute"
    return Choice(value, CLASSES, CLASS_ALIASES)


def area_answer(scene: Scene) -> Number:
    # Areas are multiples of 1/2 (1/8 at level 3); two decimals are within the tolerance either way.
    return Number(_area_eighths(scene) / 8, 0.01, "square units", decimals=2, low=0.0)


def edit(scene: Scene) -> Scene:
    """Q5's edit: reflect C across the x-axis, (x, y) -> (x, -y); A, B and D stay."""
    (x, y) = scene.points[2]
    return replace(scene, points=scene.points[:2] + ((x, -y if y else 0.0),) + scene.points[3:])


counterfactual = area_answer


def angle_margin_deg(scene: Scene) -> float:
    """Distance of the largest angle from 90 deg; an exact right angle reports the gap it keeps by construction."""
    if triangle_class(scene).value == "right":
        return ANGLE_GAP_DEG
    return abs(max(angles_deg(scene)) - 90.0)


# --- sampling ---------------------------------------------------------------------------------------------------

def _box(window: tuple[int, int], m: int) -> tuple[int, int, int, int]:
    """Lattice-index bounds (x lo, x hi, y lo, y hi) for points: one unit inside the grid and within [-8, 8]."""
    wx, wy = window
    return (m * max(-8, wx + 1), m * min(8, wx + GRID_UNITS - 1), m * max(-8, wy + 1),
            m * min(8, wy + GRID_UNITS - 1))


def _inside(p, box) -> bool:
    return box[0] <= p[0] <= box[1] and box[2] <= p[1] <= box[3]


def _triangle(rng: np.random.Generator, d: Draws, q4: str, box, m: int):
    """Three lattice points (lattice units) with A on whole units; right triangles from perpendicular pairs.
    `d`: `rng`'s own scalar draws, cheaper."""
    integers = d.integers

    def pt(mult: int = 1):
        return (mult * integers(-(-box[0] // mult), box[1] // mult + 1),
                mult * integers(-(-box[2] // mult), box[3] // mult + 1))
    if q4 == "right":
        p = pt()
        a, b = (int(v) for v in rng.integers(-6 * m, 6 * m + 1, size=2))
        if a == 0 and b == 0:
            return None
        g = math.gcd(a, b)
        kmax = max(1, int(10 * m * g / math.hypot(a, b)))
        k = integers(1, kmax + 1) * (1 if d.random() < 0.5 else -1)
        tri = [p, (p[0] + a, p[1] + b), (p[0] - k * b // g, p[1] + k * a // g)]
        tri = [tri[i] for i in d.permutation(3)]
    else:
        tri = [pt(m), pt(), pt()]
    if not all(_inside(q, box) for q in tri) or tri[0][0] % m or tri[0][1] % m:
        return None
    return tri


@functools.lru_cache(maxsize=16)
def _lattice(box, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lattice points of a box: x and y indices, as units (floats) and as index pairs; the same for every
    triangle of a scene, so built once (read-only)."""
    xs, ys = np.meshgrid(np.arange(box[0], box[1] + 1), np.arange(box[2], box[3] + 1))
    x, y = xs.ravel(), ys.ravel()
    out = (x, y, np.column_stack([x, y]).astype(float) / m, np.column_stack([x, y]))
    for a in out:
        a.setflags(write=False)
    return out


def _d_candidates(box, m: int, tri, sides, level: int):
    """For each side in `sides` in turn (a generator): the lattice points for D with that side of line AB, the gap
    margin and clearance from the triangle (its corners in the box, as `_triangle` makes them). The tests that do
    not depend on the side are done once for all."""
    x, y, pts, idx = _lattice(box, m)
    (xa, ya), (xb, yb) = tri[:2]
    cross = (xb - xa) * (y - ya) - (yb - ya) * (x - xa)           # exact integers
    gap = cross / (xb - xa) / m                                    # vertical gap in units
    corners = np.array(tri, float) / m

    def clear_of(j, k):
        a, b = corners[j], corners[k]
        t = np.clip(((pts - a) @ (b - a)) / ((b - a) @ (b - a)), 0, 1)
        return np.hypot(*(pts - a - t[:, None] * (b - a)).T) * UNIT_PX >= CLEAR_PX

    def side_blind():   # the tests every side shares
        perp = np.abs(cross) / math.hypot(xb - xa, yb - ya) / m    # distance square to the line, units
        keep = ((cross == 0) | (perp >= Q2_GAP_UNITS)) & (np.abs(gap) <= GAP_MAX_UNITS[level])
        for c in corners:
            keep &= np.hypot(*(pts - c).T) >= 2 * CLEAR_PX / UNIT_PX
        return keep & clear_of(1, 2) & clear_of(2, 0)

    common = ab = None   # computed when first needed; ab: the clearance from AB itself, needed only off the line
    for q2 in sides:
        if q2 == "on" and np.count_nonzero(cross == 0) <= 2:
            yield idx[:0]   # only A and B lie on the line, each inside its own clearance
            continue
        common = side_blind() if common is None else common
        keep = {"on": cross == 0, "above": gap > 0, "below": gap < 0}[q2] & common
        if q2 != "on":
            ab = clear_of(0, 1) if ab is None else ab
            keep &= ab
        yield idx[keep]


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first: the side of D (Q2) and the triangle's class (Q4), each uniform over its three options; then
    triangles are drawn until one has the class, and D is drawn among the lattice points with the side."""
    if level not in LABEL_STEP:
        raise ValueError(f"coordinate_geometry: level must be 1, 2 or 3, got {level!r}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    q2, q4 = SIDES[d.integers(3)], CLASSES[d.integers(3)]
    window = (-8, -8)
    while level == 3 and max(abs(window[0] + 8), abs(window[1] + 8)) < 2:   # origin off-centre
        window = (d.integers(-12, -3), d.integers(-12, -3))
    m = LATTICE[level]
    box = _box(window, m)
    for _ in range(TRIES):
        tri = _triangle(rng, d, q4, box, m)
        if tri is None:
            continue
        (xa, ya), (xb, yb), (xc, yc) = tri
        if xa == xb or yc == 0 or (xb - xa) * (yc - ya) == (xc - xa) * (yb - ya):
            continue
        # Line AB must carry a spare lattice point whatever the target, so "on" does not select the triangles.
        found = _d_candidates(box, m, tri, ("on", q2), level)
        if len(next(found)) == 0:
            continue
        cands = next(found)
        if len(cands) == 0:
            continue
        pd = cands[d.integers(len(cands))]
        scene = Scene(level, window, tuple((float(u) / m, float(v) / m) for u, v in (*tri, pd)))
        if triangle_class(scene).value != q4 or abs(_area_eighths(edit(scene)) - _area_eighths(scene)) < 8 * AREA_DIFF:
            continue
        if not ladder(scene).failing_margins():
            return scene
    raise Reject("no_scene_for_target")


# --- ladder -----------------------------------------------------------------------------------------------------

def ladder(scene: Scene) -> Ladder:
    gap = _gap_halves(_halves(scene))[0]
    reflected = edit(scene)
    clear = Margin(clearance_px(scene), "px", CLEAR_PX, "two points, or a point and a side, too close to tell apart")
    (xa, ya), (xb, yb) = scene.points[:2]
    rungs = (
        Question(1, "coordinates_of_a", "What are the coordinates of point A?", coordinates_of_a(scene), clear),
        Question(2, "d_side_of_line_ab", "Is point D above, below, or exactly on the straight line through points "
                 "A and B (extended beyond the segment where needed)?", side_of_line(scene),
                 # "on" is exact by construction; the other classes keep >= Q2_GAP_UNITS from it, measured
                 # square to the line (never more than the vertical gap), so a steep line leaves room to see it
                 Margin(line_distance(scene) if gap else Q2_GAP_UNITS, "units", Q2_GAP_UNITS,
                        "D on line AB (exact ties only by construction)")),
        Question(3, "length_ab", "What is the length of segment AB, in grid units?", length_ab(scene),
                 Margin(math.hypot(xb - xa, yb - ya) * UNIT_PX, "px", AB_MIN_PX,
                        "A and B too close to measure AB or extend the line")),
        Question(4, "triangle_class", "Is triangle ABC acute, right-angled, or obtuse?", triangle_class(scene),
                 Margin(angle_margin_deg(scene), "deg", ANGLE_GAP_DEG,
                        "largest angle near 90 deg (exact right angles only by construction)")),
        Question(5, "area_c_reflected", "Suppose point C were reflected across the x-axis, while A and B stay where "
                 "they are. What would the area of triangle ABC be then, in square units?",
                 counterfactual(reflected), Margin(_area_eighths(reflected) / 8, "square units", MIN_AREA,
                                                     "reflected C collinear with A and B"),
                 edit="reflect C across the x-axis"),
    )
    open_q = Question(6, "area_abc", "Explain how you find the area of triangle ABC from the coordinates of its "
                      "vertices, and give the area in square units.", Record((("area", area_answer(scene)),)),
                      Margin(_area_eighths(scene) / 8, "square units", MIN_AREA, "A, B and C collinear"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked about the largest angle against 90 degrees (map: identity, on Q4's own options)."""
    aliases = CLASS_ALIASES + (("less than 90°", "acute"), ("less", "acute"), ("equal to 90°", "right"),
                               ("equal", "right"), ("greater than 90°", "obtuse"), ("greater", "obtuse"))
    return Question(4, "largest_angle_vs_90", "Is the largest angle of triangle ABC less than, equal to, or greater "
                    "than 90°? Answer 'acute' if it is less than 90°, 'right' if it is exactly 90°, and 'obtuse' if "
                    "it is greater.", Choice(triangle_class(scene).value, CLASSES, aliases),
                    Margin(angle_margin_deg(scene), "deg", ANGLE_GAP_DEG,
                           "largest angle near 90 deg (exact right angles only by construction)"))


PAIR_BOX_MAX = 0.25   # DOMAINS.md 0.7: the edit's bounding box at most this share of the canvas
PAIR_PAD_PX = 20.0    # around the moved segments' end points: dots and labels


PAIR_STEPS = sorted(((dx, dy) for dx in range(-3, 4) for dy in range(-3, 4) if (dx, dy) != (0, 0)),
                    key=lambda v: (v[0] ** 2 + v[1] ** 2, v))   # C's moves in whole units, shortest first


def minimal_pair(scene: Scene) -> Scene:
    """C moved by the shortest whole-unit step (`PAIR_STEPS`) that changes the class, every margin holding."""
    q4, m = triangle_class(scene).value, LATTICE[scene.level]
    box = _box(scene.window, m)
    x, y = scene.points[2]
    for dx, dy in PAIR_STEPS:
        c = (x + dx, y + dy)
        twin = replace(scene, points=scene.points[:2] + (c,) + scene.points[3:])
        if not _inside((c[0] * m, c[1] * m), box) or c[1] == 0 or _area_eighths(twin) == 0:
            continue
        if triangle_class(twin).value == q4 or abs(_area_eighths(edit(twin)) - _area_eighths(twin)) < 8 * AREA_DIFF:
            continue
        # AC and BC are redrawn: the changed pixels span A, B and both places of C
        px = np.array([to_px(scene.window, *q) for q in scene.points[:3] + (c,)])
        if np.prod(np.ptp(px, axis=0) + 2 * PAIR_PAD_PX) > PAIR_BOX_MAX * 768 ** 2:
            continue
        if not ladder(twin).failing_margins():
            return twin
    raise Reject("no_minimal_pair")


# --- drawing ----------------------------------------------------------------------------------------------------

def to_px(window: tuple[int, int], x: float, y: float) -> tuple[float, float]:
    return (FRAME_PX + (x - window[0]) * UNIT_PX, FRAME_PX + (window[1] + GRID_UNITS - y) * UNIT_PX)


@functools.lru_cache(maxsize=128)
def _backdrop(size_px: int, window: tuple[int, int], step: int):
    """Grid, axes and tick numbers: the same for every scene with this window and step, so drawn once per process.
    Returns the surface, the tick-number boxes and the axis strokes (both for label collision checks)."""
    canvas = Canvas(size_px)
    wx, wy = window
    lo, hi = FRAME_PX, FRAME_PX + GRID_UNITS * UNIT_PX
    minor = range(GRID_UNITS + 1)
    for k in minor:   # numbered lines a shade darker, so counting from a number is easy
        numbered_x, numbered_y = (wx + k) % step == 0, (wy + k) % step == 0
        g = lo + k * UNIT_PX
        shapes.line(canvas, (g, lo), (g, hi), Style(stroke=(0.70,) * 3 if numbered_x else (0.86,) * 3,
                                                    width_px=2.0 if numbered_x else 1.5))
        gy = hi - k * UNIT_PX
        shapes.line(canvas, (lo, gy), (hi, gy), Style(stroke=(0.70,) * 3 if numbered_y else (0.86,) * 3,
                                                      width_px=2.0 if numbered_y else 1.5))
    shapes.rect(canvas, lo, lo, hi, hi, Style(stroke=GREY, width_px=2.0))
    ox, oy = to_px(window, 0, 0)
    axes = [shapes.arrow(canvas, (lo, oy), (hi + 18, oy), AXIS, head_px=14.0, owner="axes"),
            shapes.arrow(canvas, (ox, hi), (ox, lo - 18), AXIS, head_px=14.0, owner="axes")]
    canvas.labels.clear()
    draw_text(canvas, "x", (hi + 20, oy - 18), LABEL.with_(font_px=18.0))
    draw_text(canvas, "y", (ox + 18, lo - 20), LABEL.with_(font_px=18.0))
    for k in minor:
        if (wx + k) % step == 0:
            draw_text(canvas, _num(wx + k), (lo + k * UNIT_PX, hi + 17), TICK_TEXT)
        if (wy + k) % step == 0:
            draw_text(canvas, _num(wy + k), (lo - 22, hi - k * UNIT_PX), TICK_TEXT)
    canvas.surface.flush()
    return canvas.surface, tuple(canvas.labels), tuple(axes)


def _num(v: int) -> str:
    return str(v).replace("-", "\u2212")


def _box_point_px(box, p) -> float:
    """Distance from point p to the axis-aligned box (x0, y0, x1, y1); 0 inside."""
    x0, y0, x1, y1 = box
    return math.hypot(max(x0 - p[0], 0.0, p[0] - x1), max(y0 - p[1], 0.0, p[1] - y1))


def _box_segment_px(box, a, b) -> float:
    """Distance between the axis-aligned box (x0, y0, x1, y1) and segment ab (a == b: a point), plain floats."""
    if a == b:
        return _box_point_px(box, a)
    x0, y0, x1, y1 = box
    (ax, ay), (bx, by) = a, b
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    side = [(ay - by) * (u - ax) + (bx - ax) * (v - ay) for u, v in corners]   # across the segment's line
    if min(ax, bx) <= x1 and max(ax, bx) >= x0 and min(ay, by) <= y1 and max(ay, by) >= y0 and \
            min(side) <= 0.0 <= max(side):
        return 0.0   # no separating axis: they meet
    return min(_box_point_px(box, a), _box_point_px(box, b), *(_seg_dist(c, a, b) for c in corners))


STROKE_GAP_PX = 8.0   # a label's box keeps this far from strokes of other owners (its buffer must miss them)
BAND_PX = 0.05        # the distance shortcut decides only this far from STROKE_GAP_PX


def _stroke_clash(box, outlines, geoms, exact) -> bool:
    """Whether `box.buffer(STROKE_GAP_PX)` meets a stroke. The strokes are given as outlines (a, b, r): segment ab
    (a == b: a dot) stroked r px each side, and as shapely `geoms` ((bounds, geometry)). GEOS draws buffers with chords of circles, within
    a hundredth of a pixel of the true distance, so a plain distance clearly below or above the gap decides; only
    near it does `exact()` (the buffer itself against the strokes) answer."""
    x0, y0, x1, y1 = box
    far = STROKE_GAP_PX + BAND_PX
    d = math.inf
    for a, b, r in outlines:
        # the gap to the segment's bounding box is a lower bound of the distance: most strokes end here
        if max(min(a[0], b[0]) - x1, x0 - max(a[0], b[0]), min(a[1], b[1]) - y1, y0 - max(a[1], b[1])) - r > far:
            continue
        d = min(d, _box_segment_px(box, a, b) - r)
    near = [g for (u0, v0, u1, v1), g in geoms if max(u0 - x1, x0 - u1, v0 - y1, y0 - v1) <= far]
    if near:
        d = min(d, *shapely.distance(shapely.box(*box), near).tolist())
    if d < STROKE_GAP_PX - BAND_PX:
        return True
    return d <= far and exact()


def _place_point_label(canvas: Canvas, name: str, at_px, avoid_deg: list[float], others_px, outlines,
                       axes) -> None:
    """Like text.place_label, but directions are tried emptiest first: those furthest in angle from the segments
    (and line) leaving the point. Keeps clear of strokes of other owners by 8 px (`outlines`: (owner, a, b, r) as
    `_stroke_clash` takes them; `axes`: the axes' (bounds, geometry)), and sits clearly nearer its own dot than any other
    dot (`OWN_MARGIN_PX`), so no label reads as another point's; no spot: Reject."""
    w, h = text_size(canvas, name, LABEL)
    diag = math.hypot(w, h)
    dirs = sorted(range(0, 360, 30), key=lambda a: -min([180.0] + [abs((a - b + 180) % 360 - 180)
                                                                  for b in avoid_deg]))
    # Every placed label is an axis-aligned box, and two such boxes intersect exactly when their bounds overlap
    placed = shapely.bounds(canvas.labels).tolist()
    outlines = [(a, b, r) for own, a, b, r in outlines if own != name]
    for r in (0.75 * diag, 1.1 * diag, 1.6 * diag):
        for a in dirs:
            c = (at_px[0] + r * math.cos(math.radians(a)), at_px[1] - r * math.sin(math.radians(a)))
            box = c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2   # text_box_px's corners
            x0, y0, x1, y1 = box
            if not canvas.box_inside_safe(x0, y0, x1, y1) or \
                    any(u0 <= x1 and x0 <= u1 and v0 <= y1 and y0 <= v1 for u0, v0, u1, v1 in placed):
                continue
            # Nearer its own dot by OWN_MARGIN_PX: plain distances, GEOS's own where one is within a hair of a tie
            mine, dist = _box_point_px(box, at_px), [_box_point_px(box, q) for q in others_px]
            if any(abs(d - (mine + OWN_MARGIN_PX)) < 1e-6 for d in dist):
                mine, *dist = shapely.distance(shapely.box(*box), shapely.points([at_px, *others_px])).tolist()
            if any(d < mine + OWN_MARGIN_PX for d in dist):
                continue

            def exact():
                grown = shapely.box(*box).buffer(STROKE_GAP_PX)
                return any(own != name and grown.intersects(g) for own, g in canvas.strokes)
            if _stroke_clash(box, outlines, axes, exact):
                continue
            canvas.labels.append(draw_text_px(canvas, name, c, LABEL))
            return
    raise Reject("label_clash")


def draw(scene: Scene, canvas: Canvas) -> None:
    surface, ticks, axes = _backdrop(canvas.size_px, tuple(scene.window), LABEL_STEP[scene.level])
    with canvas.layer() as ctx:
        ctx.set_source_surface(surface, 0, 0)
        ctx.paint()
    canvas.labels.extend(ticks)
    for g in axes:
        canvas.register_stroke(g, "axes")
    px = [to_px(scene.window, x, y) for x, y in scene.points]
    lo, hi = FRAME_PX + 0.5 * UNIT_PX, FRAME_PX + (GRID_UNITS - 0.5) * UNIT_PX
    if not all(lo <= u <= hi and lo <= v <= hi for u, v in px):
        raise Reject("point_off_grid")
    outlines = []   # (owner, a, b, r) of the strokes below, for `_stroke_clash`
    for j, k in ((0, 1), (1, 2), (2, 0)):
        shapes.line(canvas, px[j], px[k], SEGMENT, owner=NAMES[j] + NAMES[k])
        outlines.append((NAMES[j] + NAMES[k], px[j], px[k], SEGMENT.width_px / 2))
    for i, p in enumerate(px):
        fill = OKABE_ITO["vermillion"] if i == 3 else BLACK
        shapes.circle(canvas, p, DOT_PX, Style(stroke=BLACK, fill=fill, width_px=1.5), owner=NAMES[i])
        outlines.append((NAMES[i], p, p, DOT_PX + 1.5 / 2))   # a filled disk to the stroke's outer edge
    axes_geoms = [(g.bounds, g.geometry) for g in axes]
    on_line = _gap_halves(_halves(scene))[0] == 0
    for i, p in enumerate(px):
        others = [j for j in range(3) if j != i] if i < 3 else ([0, 1] if on_line else [])
        avoid = [math.degrees(math.atan2(p[1] - px[j][1], px[j][0] - p[0])) for j in others]
        if i == 3 and on_line:   # D sits on the line: keep its label off both directions of it
            avoid += [a + 180 for a in avoid]
        avoid += [math.degrees(math.atan2(p[1] - q[1], q[0] - p[0])) for j, q in enumerate(px)
                  if j != i and math.dist(p, q) < 3 * UNIT_PX]          # and off nearby dots
        _place_point_label(canvas, NAMES[i], p, avoid, [q for j, q in enumerate(px) if j != i], outlines,
                           axes_geoms)


DOMAIN = Domain(
    id="coordinate_geometry", family="analytic", title="Coordinate geometry",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="Points on a coordinate grid: read A's coordinates, place D against line AB, measure AB, classify "
                "triangle ABC by its largest angle, and find its area with C reflected across the x-axis.",
    balance_keys=("d_side_of_line_ab", "triangle_class"),
)
