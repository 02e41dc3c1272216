"""Overlapping circles: three to five circle outlines A-E in distinct colours (letters beside their tops) and four
probe points P, Q, R, S. The ladder walks crossing points -> circles containing P -> enclosed regions -> the pair
with the largest overlap -> regions left once circle C is deleted; the open question asks what share of circle A's
area lies inside circle B.

Rules: two circles cross at two points iff |r1 - r2| < d < r1 + r2. With no triple points the outlines form a plane
graph: V = crossing points plus one vertex per circle without crossings, E = arcs (a circle with m crossings has m,
one without has 1), C = connected components of the outlines, and the enclosed regions number E - V + C. The
overlap of two circles is the lens area (pi min(r)^2 when one holds the other, 0 when they are apart).
Ambiguity boundaries: near-tangency (|d - (r1 + r2)| and |d - |r1 - r2|| at least `TANGENT_PX[level]`), crossing
points closer than `CROSS_GAP_PX` or within `TRIPLE_PX` of a third outline (near-triple points hide sliver regions),
probe points within `PROBE_PX` of an outline, and the largest overlap within `RATIO[level]` of the second.
Every answer is checked against its declared space: the pair answer is always one of the pair tokens, and a scene
whose circles do not overlap at all has no largest pair and is rejected (`no_overlap`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations, starmap

import numpy as np

from grip.answers import Choice, Count, Number, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, LABEL, OKABE_ITO, Style
from grip.renderers.text import any_meets, draw_text_px, place_label_screened

LETTERS = "ABCDE"
PROBES = "PQRS"
K_BY_LEVEL = {1: 3, 2: 4, 3: 5}
R_MIN, R_MAX = 70.0, 210.0
X_LO, X_HI, Y_LO, Y_HI = 24.0, 744.0, 56.0, 744.0   # every whole circle inside; 32 px above each top for its letter
TANGENT_PX = {1: 10.0, 2: 10.0, 3: 6.0}
CROSS_GAP_PX = 12.0
TRIPLE_PX = 8.0
PROBE_PX = 10.0
PROBE_GAP_PX = 40.0
RATIO = {1: 1.20, 2: 1.20, 3: 1.12}
NO_BOUNDARY_PX = 768.0                            # recorded where a margin has no boundary to measure
RATIO_CAP = 99.0                                  # recorded when the second-largest overlap is 0
COLOURS = tuple(OKABE_ITO[k] for k in ("orange", "sky", "green", "blue", "vermillion"))
PERCENT_TOL = 4.0


@dataclass(frozen=True)
class Scene:
    level: int                                          # 1..3: circle count, thresholds
    letters: tuple[str, ...]                            # per circle, a subset of "ABCDE" (letters survive deletion)
    circles: tuple[tuple[float, float, float], ...]     # per circle (cx, cy, r), px, y down
    probes: tuple[tuple[float, float], ...]             # P, Q, R, S, px


# --- geometry (pure) ---------------------------------------------------------------------------------------------

def lens_area(r1: float, r2: float, d: float) -> float:
    """Area shared by two circles of radii r1, r2 whose centres are d apart."""
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2
    a1 = r1 * r1 * math.acos((d * d + r1 * r1 - r2 * r2) / (2 * d * r1))
    a2 = r2 * r2 * math.acos((d * d + r2 * r2 - r1 * r1) / (2 * d * r2))
    return a1 + a2 - 0.5 * math.sqrt((-d + r1 + r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2))


def crosses(c1, c2) -> bool:
    d = math.dist(c1[:2], c2[:2])
    return abs(c1[2] - c2[2]) < d < c1[2] + c2[2]


def crossing_points(c1, c2) -> list[tuple[float, float]]:
    (x1, y1, r1), (x2, y2, r2) = c1, c2
    d = math.dist((x1, y1), (x2, y2))
    if not abs(r1 - r2) < d < r1 + r2:               # `crosses`
        return []
    a = (d * d + r1 * r1 - r2 * r2) / (2 * d)
    h = math.sqrt(max(r1 * r1 - a * a, 0.0))
    mx, my = x1 + a * (x2 - x1) / d, y1 + a * (y2 - y1) / d
    ux, uy = -(y2 - y1) / d, (x2 - x1) / d
    return [(mx + h * ux, my + h * uy), (mx - h * ux, my - h * uy)]


def pairs(scene: Scene) -> list[tuple[int, int]]:
    return list(combinations(range(len(scene.circles)), 2))


def token(scene: Scene, i: int, j: int) -> str:
    a, b = sorted((scene.letters[i], scene.letters[j]))
    return f"{a}-{b}"


def index_of(scene: Scene, letter: str) -> int:
    return scene.letters.index(letter)


def overlap(scene: Scene, i: int, j: int) -> float:
    (x1, y1, r1), (x2, y2, r2) = scene.circles[i], scene.circles[j]
    return lens_area(r1, r2, math.dist((x1, y1), (x2, y2)))


def region_count(scene: Scene) -> int:
    """Enclosed regions E - V + C of the outlines (no triple points: the margins keep them apart)."""
    n = len(scene.circles)
    m = [0] * n
    parent = list(range(n))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for i, j in pairs(scene):
        if crosses(scene.circles[i], scene.circles[j]):
            m[i] += 2
            m[j] += 2
            parent[root(i)] = root(j)
    v = sum(m) // 2 + sum(1 for x in m if x == 0)
    e = sum(max(x, 1) for x in m)
    c = len({root(i) for i in range(n)})
    return e - v + c


# --- margins -----------------------------------------------------------------------------------------------------

def tangency_px(scene: Scene) -> float:
    """Smallest |d - (r1 + r2)| or |d - |r1 - r2|| over all pairs (`NO_BOUNDARY_PX` for one circle)."""
    return _tangency(scene.circles)


@lru_cache(maxsize=256)
def _tangency(circles) -> float:
    out = NO_BOUNDARY_PX
    for (x1, y1, r1), (x2, y2, r2) in combinations(circles, 2):
        d = math.dist((x1, y1), (x2, y2))
        out = min(out, abs(d - (r1 + r2)), abs(d - abs(r1 - r2)))
    return out


def crossing_clearance_px(scene: Scene) -> float:
    """min(gap between two crossing points - CROSS_GAP_PX + TRIPLE_PX, distance from a crossing point to a third
    outline): one number with the near-triple threshold, the two rules folded into it (`NO_BOUNDARY_PX` without
    crossings)."""
    return _crossing_clearance(scene.circles)


@lru_cache(maxsize=256)
def _crossing_clearance(circles) -> float:
    pts = []
    for i, j in combinations(range(len(circles)), 2):
        for p in crossing_points(circles[i], circles[j]):
            pts.append((p, i, j))
    out = math.inf
    if len(pts) > 1:
        # gap - CROSS_GAP_PX + TRIPLE_PX is non-decreasing in the gap (so in floating point too): only the
        # smallest gap can give the smallest value
        out = min(starmap(math.dist, combinations([p for p, _, _ in pts], 2))) - CROSS_GAP_PX + TRIPLE_PX
    for p, i, j in pts:
        for k, (x, y, r) in enumerate(circles):
            if k != i and k != j:
                g = abs(math.dist(p, (x, y)) - r)
                if g < out:
                    out = g
    return min(out, NO_BOUNDARY_PX)


def probe_clearance_px(scene: Scene) -> float:
    return min(abs(math.dist(p, (x, y)) - r) for p in scene.probes for x, y, r in scene.circles)


def overlap_ratio(scene: Scene) -> tuple[tuple[int, int], float]:
    """The pair with the largest overlap and its overlap over the second largest (RATIO_CAP when that is 0)."""
    ranked, areas = _ranked_overlaps(scene.circles)
    top, second = areas[0], areas[1] if len(ranked) > 1 else 0.0
    if top <= 0:
        raise Reject("no_overlap")
    return ranked[0], min(top / second, RATIO_CAP) if second > 0 else RATIO_CAP


@lru_cache(maxsize=256)
def _ranked_overlaps(circles) -> tuple[tuple[tuple[int, int], ...], tuple[float, ...]]:
    """Every pair, largest overlap first (a stable sort: ties keep pair order), and their overlaps, once per set of
    circles (sample, ladder, the Q4 wording and the minimal pair all ask)."""
    area = {}
    for i, j in combinations(range(len(circles)), 2):
        (x1, y1, r1), (x2, y2, r2) = circles[i], circles[j]
        area[i, j] = lens_area(r1, r2, math.dist((x1, y1), (x2, y2)))
    ranked = tuple(sorted(area, key=lambda p: -area[p]))
    return ranked, tuple(area[p] for p in ranked)


def label_room_px(scene: Scene) -> float:
    return min(y - r for _, y, r in scene.circles) - 24.0


# --- sampling ----------------------------------------------------------------------------------------------------

def _circle(d: Draws, r_lo: float = R_MIN, r_hi: float = R_MAX) -> tuple[float, float, float]:
    r = d.uniform(r_lo, r_hi)
    return (d.uniform(X_LO + r, X_HI - r), d.uniform(Y_LO + r, Y_HI - r), r)


def _inside(dr: Draws, host, gap: float):
    """A circle wholly inside `host`, its outline at least `gap` from the host's."""
    hx, hy, hr = host
    r = dr.uniform(R_MIN, hr - 2 * gap - 10)
    d = dr.uniform(0.0, hr - r - gap)
    a = dr.uniform(0, 2 * math.pi)
    return (hx + d * math.cos(a), hy + d * math.sin(a), r)


def _valid(scene: Scene) -> bool:
    lv = scene.level
    if tangency_px(scene) < TANGENT_PX[lv] or crossing_clearance_px(scene) < TRIPLE_PX:
        return False
    try:
        _, ratio = overlap_ratio(scene)
    except Reject:
        return False
    return ratio >= RATIO[lv]


def _probes(rng: np.random.Generator, circles, want: int):
    c = np.asarray(circles, float)
    pts = rng.uniform(48.0, 720.0, size=(400, 2))
    d = np.hypot(pts[:, None, 0] - c[None, :, 0], pts[:, None, 1] - c[None, :, 1])
    clear = np.abs(d - c[None, :, 2]).min(axis=1) >= PROBE_PX + 2.0
    inside = (d < c[None, :, 2]).sum(axis=1)
    p_ok = np.flatnonzero(clear & (inside == want))
    if not len(p_ok):
        return None
    # plain floats (the same values), converted only for the few points the walk reaches
    chosen = [pts[p_ok[0]].tolist()]
    for i in np.flatnonzero(clear).tolist():
        if len(chosen) == len(PROBES):
            break
        row = pts[i].tolist()
        if all(math.dist(row, q) >= PROBE_GAP_PX for q in chosen):
            chosen.append(row)
    if len(chosen) < len(PROBES):
        return None
    return tuple((round(float(x), 2), round(float(y), 2)) for x, y in chosen)


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"overlapping_circles: level must be 1..3, got {level}")
    k = K_BY_LEVEL[level]
    d = Draws(rng)   # the Generator's own draws, cheaper
    want_pair = [tuple(p) for p in combinations(LETTERS[:k], 2)][d.integers(k * (k - 1) // 2)]  # Q4 target
    want_p = d.integers(0, 4)                          # Q2 target: P inside 0-3 circles
    for _ in range(80):
        circles = [_circle(d) for _ in range(k)]
        if level == 2:            # one circle holds another
            host = max(range(k - 1), key=lambda i: circles[i][2])
            if circles[host][2] < R_MIN + 3 * TANGENT_PX[level] + 10:
                continue
            circles[k - 1] = _inside(d, circles[host], TANGENT_PX[level] + 2)
        circles = [tuple(round(v, 2) for v in c) for c in circles]
        s = Scene(level, LETTERS[:k], tuple(circles), ())
        if not _valid(s):
            continue
        (gi, gj), _ = overlap_ratio(s)
        # Letters: the largest pair gets the target letters; the rest at random, preferring an A that overlaps B.
        for _ in range(6):
            rest = [x for x in LETTERS[:k] if x not in want_pair]
            rng.shuffle(rest)
            first = [want_pair[0], want_pair[1]] if d.random() < 0.5 else [want_pair[1], want_pair[0]]
            others = [i for i in range(k) if i not in (gi, gj)]
            letters = [""] * k
            letters[gi], letters[gj] = first
            for i, x in zip(others, rest):
                letters[i] = x
            s = replace(s, letters=tuple(letters))
            if overlap(s, index_of(s, "A"), index_of(s, "B")) > 0:
                break
        probes = _probes(rng, s.circles, min(want_p, k))
        if probes is None:
            continue
        s = replace(s, probes=probes)
        if letter_spots(s) is None:
            raise Reject("label_clash")
        return s
    raise Reject("no_layout")


# --- answers -----------------------------------------------------------------------------------------------------

def _letters(scene: Scene) -> tuple[str, ...]:
    return tuple(sorted(scene.letters))


def crossing_count(scene: Scene) -> Count:
    n = sum(2 for i, j in pairs(scene) if crosses(scene.circles[i], scene.circles[j]))
    return Count(n, low=0, high=len(scene.circles) * (len(scene.circles) - 1))


def circles_containing(scene: Scene, probe: str) -> Ordered:
    p = scene.probes[PROBES.index(probe)]
    got = tuple(sorted(scene.letters[i] for i, (x, y, r) in enumerate(scene.circles) if math.dist(p, (x, y)) < r))
    return Ordered(got, "alphabetical order", _letters(scene), as_set=True)


def enclosed_regions(scene: Scene) -> Count:
    return Count(region_count(scene), low=1, high=2 * len(scene.circles) ** 2)


def pair_options(scene: Scene) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Pair tokens "A-B" (alphabetical within and between), and aliases: the reversed order and "A and B"."""
    opts = tuple(f"{a}-{b}" for a, b in combinations(_letters(scene), 2))
    aliases = tuple(alias for o in opts for alias in ((f"{o[2]}-{o[0]}", o), (f"{o[0]} and {o[2]}", o),
                                                      (f"{o[2]} and {o[0]}", o)))
    return opts, aliases


def largest_overlap(scene: Scene) -> Choice:
    (i, j), _ = overlap_ratio(scene)
    opts, aliases = pair_options(scene)
    return Choice(token(scene, i, j), opts, aliases)


def edit(scene: Scene) -> Scene:
    """Delete circle C; the others stay where they are, letters unchanged."""
    c = index_of(scene, "C")
    return replace(scene, letters=tuple(x for i, x in enumerate(scene.letters) if i != c),
                   circles=tuple(x for i, x in enumerate(scene.circles) if i != c))


counterfactual = enclosed_regions


def share_of_a_in_b(scene: Scene) -> Number:
    a, b = index_of(scene, "A"), index_of(scene, "B")
    v = 100.0 * overlap(scene, a, b) / (math.pi * scene.circles[a][2] ** 2)
    return Number(round(v), PERCENT_TOL, "%", decimals=0, low=0.0, high=100.0)


# --- ladder ------------------------------------------------------------------------------------------------------

def ladder(scene: Scene) -> Ladder:
    lv = scene.level
    tangent = Margin(tangency_px(scene), "px", TANGENT_PX[lv], "two circles nearly tangent")
    edited = edit(scene)
    rungs = (
        Question(1, "crossing_points", "How many points are there where two circle outlines cross each other?",
                 crossing_count(scene), tangent),
        Question(2, "circles_containing_p", "Which circles contain the point P?", circles_containing(scene, "P"),
                 Margin(probe_clearance_px(scene), "px", PROBE_PX, "a probe point near an outline")),
        Question(3, "enclosed_regions", "Into how many separate enclosed regions do the circle outlines divide the "
                 "picture? (Count every bounded area that no outline crosses; the outside does not count.)",
                 enclosed_regions(scene), Margin(crossing_clearance_px(scene), "px", TRIPLE_PX,
                                                 "crossing points nearly meeting or nearly on a third outline")),
        _q4(scene),
        Question(5, "regions_without_c", "If circle C were deleted (nothing else moves), how many separate enclosed "
                 "regions would the remaining outlines make?", counterfactual(edited),
                 Margin(tangency_px(edited) if len(edited.circles) > 1 else TANGENT_PX[lv], "px", TANGENT_PX[lv],
                        "two remaining circles nearly tangent"), edit="delete circle C"),
    )
    open_q = Question(6, "percent_of_a_in_b", "About what percentage of circle A's area lies inside circle B? "
                      "Explain how you estimated it.", Record((("percent", share_of_a_in_b(scene)),)),
                      Margin(label_room_px(scene), "px", 32.0, "no room above a circle for its letter"))
    return Ladder(rungs, open_q)


def _q4(scene: Scene) -> Question:
    _, ratio = overlap_ratio(scene)
    return Question(4, "largest_overlap_pair", "Which two circles share the largest overlapping area?",
                    largest_overlap(scene), Margin(ratio, "overlap ratio", RATIO[scene.level],
                                                   "two pairs with about equal overlaps"))


def rephrase_q4(scene: Scene) -> Question:
    """The removable area equals the lens, so the pair is the same (identity)."""
    q4 = _q4(scene)
    return Question(4, "most_area_to_separate", "For which pair of circles would you have to remove the most area "
                    "to make the two circles stop overlapping?", q4.answer, q4.margin)


EDIT_STEPS_PX = tuple(range(4, 161, 4))           # minimal-pair steps (slide or radius change), smallest first


def _moves(scene: Scene) -> list[tuple[int, float | None, float]]:
    """The candidate edits of one circle, as (circle, ux, uy): a slide along the unit vector (ux, uy), or, with ux
    None, a radius change of sign uy. Each circle of a pair other than the largest slides toward its partner along
    their line of centres, each circle of the largest pair away from its partner; then each circle of a competing
    pair grows and each circle of the largest pair shrinks. Competing pairs with the larger overlap first."""
    top, _ = overlap_ratio(scene)
    ranked = [p for p in _ranked_overlaps(scene.circles)[0] if p != top]
    order = [(p, 1.0) for p in ranked] + [(top, -1.0)]
    out = []
    for (i, j), sign in order:
        for m, o in ((i, j), (j, i)):
            (x, y, _), (ox, oy, _) = scene.circles[m], scene.circles[o]
            d = math.dist((x, y), (ox, oy))
            if d > 0:
                out.append((m, (ox - x) / d * sign, (oy - y) / d * sign))
    for (i, j), sign in order:
        out += [(i, None, sign), (j, None, sign)]
    return out


def minimal_pair(scene: Scene) -> Scene:
    """The smallest edit of one circle after which another pair overlaps most, Q1 (the crossing points) is kept and
    every margin holds: a slide
    along the line of centres of a pair (toward the partner for a pair other than the largest, away from it for the
    largest pair) or a radius change (a competing pair's circle grows, a largest pair's circle shrinks), by the
    smallest step of `EDIT_STEPS_PX` that works; among equal steps, in `_moves` order. The sheet's 15-30 px slide
    alone seldom works (a few scenes in a hundred): the largest overlap already leads the second by the level's
    ratio, and the new leader must lead by it again."""
    q1, q4 = crossing_count(scene), largest_overlap(scene).value
    moves = _moves(scene)
    for step in EDIT_STEPS_PX:
        for k, ux, uy in moves:
            x, y, r = scene.circles[k]
            moved = (x, y, round(r + step * uy, 2)) if ux is None else \
                (round(x + step * ux, 2), round(y + step * uy, 2), r)
            x, y, r = moved
            if not (R_MIN <= r <= R_MAX and X_LO <= x - r and x + r <= X_HI and Y_LO <= y - r and y + r <= Y_HI):
                continue
            twin = replace(scene, circles=tuple(moved if i == k else c for i, c in enumerate(scene.circles)))
            try:
                if (largest_overlap(twin).value != q4 and crossing_count(twin) == q1
                        and not ladder(twin).failing_margins() and letter_spots(twin) is not None):
                    return twin
            except Reject:
                continue
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

LETTER_ANGLES = (90, 65, 115, 40, 140, 15, 165)      # degrees, counter-clockwise from +x: above the top point first
LETTER_NEAREST_PX = 6.0                            # a letter is this much nearer its own outline than any other
LETTER_BOX_PX = {"A": (22.0, 20.0), "B": (19.0, 20.0), "C": (19.0, 20.0), "D": (21.0, 20.0), "E": (18.0, 20.0)}
# ink boxes of the letters in LABEL style (bold 20 px, 3 px halo); a test measures them
OWN_GAP_PX = 3.0                                   # letter box to its own 3 px outline (others: 8 px, sheet 0.2)


def _outline_gap(box, circle) -> float:
    """Distance from a label box (x0, y0, x1, y1) to a circle's outline (0 when the box straddles it)."""
    x, y, r = circle
    x0, y0, x1, y1 = box
    dx0, dx1, dy0, dy1 = x0 - x, x1 - x, y0 - y, y1 - y       # x - x1 is -dx1 exactly
    near = math.hypot(dx0 if dx0 > 0 else (-dx1 if dx1 < 0 else 0.0),
                      dy0 if dy0 > 0 else (-dy1 if dy1 < 0 else 0.0))      # nearest box point to the centre
    if near > r:
        return near - r            # the box lies outside: its farthest corner is farther (by >= half its size)
    far = max(math.hypot(dx0, dy0), math.hypot(dx1, dy0), math.hypot(dx0, dy1), math.hypot(dx1, dy1))
    return 0.0 if r <= far else abs(far - r)


# letter offsets from a circle's topmost point, in `letter_spots` order: (radius * cos, radius * sin) per spot
_LETTER_OFFSETS = tuple((rad * math.cos(math.radians(ang)), rad * math.sin(math.radians(ang)))
                        for rad in (20.0, 30.0, 42.0) for ang in LETTER_ANGLES)


@lru_cache(maxsize=256)
def letter_spots(scene: Scene) -> tuple[tuple[float, float], ...] | None:
    """Centres of the circles' letters (in circle order), each outside its circle near its topmost point: the first
    spot (radii 20, 30, 42 px; angles `LETTER_ANGLES`; letters placed alphabetically) whose box (`LETTER_BOX_PX`)
    lies in the safe area, overlaps no letter placed before, keeps 8 px from every other outline and probe dot and
    `OWN_GAP_PX` from its own outline, and lies nearer its own outline than any other by `LETTER_NEAREST_PX`.
    None when a letter has no such spot: the sampler then rejects the scene (`label_clash`) before drawing.
    Cached: the sampler's check and `draw` ask for the same scene."""
    placed: dict[int, tuple[float, float]] = {}
    boxes = []
    for k in sorted(range(len(scene.circles)), key=lambda i: scene.letters[i]):
        x, y, r = scene.circles[k]
        w, h = LETTER_BOX_PX[scene.letters[k]]
        others = [c for j, c in enumerate(scene.circles) if j != k]
        spot = None
        for du, dv in _LETTER_OFFSETS:
            u, v = x + du, y - r - dv
            bx = (u - w / 2, v - h / 2, u + w / 2, v + h / 2)
            if bx[0] < 24 or bx[1] < 24 or bx[2] > 744 or bx[3] > 744:
                continue
            if any(bx[0] <= o[2] and o[0] <= bx[2] and bx[1] <= o[3] and o[1] <= bx[3] for o in boxes):
                continue
            own = _outline_gap(bx, scene.circles[k])
            if own < OWN_GAP_PX + 1.5 or math.dist((u, v), (x, y)) < r:
                continue
            lim = max(8.0 + 1.5, own + LETTER_NEAREST_PX)     # a gap below either bound fails
            if any(_outline_gap(bx, c) < lim for c in others):
                continue
            if any(_box_point(bx, p) < 8.0 + 3.5 for p in scene.probes):
                continue
            spot = (u, v)
            break
        if spot is None:
            return None
        placed[k] = spot
        boxes.append((spot[0] - w / 2, spot[1] - h / 2, spot[0] + w / 2, spot[1] + h / 2))
    return tuple(placed[k] for k in range(len(scene.circles)))


def _box_point(bx, p) -> float:
    return math.hypot(max(bx[0] - p[0], 0, p[0] - bx[2]), max(bx[1] - p[1], 0, p[1] - bx[3]))


def draw(scene: Scene, canvas: Canvas) -> None:
    for (x, y, r), letter in zip(scene.circles, scene.letters):
        if x - r < X_LO or x + r > X_HI or y - r < Y_LO or y + r > Y_HI:
            raise Reject("circle_clipped")
        shapes.circle(canvas, (x, y), r, Style(stroke=COLOURS[LETTERS.index(letter)], width_px=3.0), owner=letter)
    for p, name in zip(scene.probes, PROBES):
        shapes.circle(canvas, p, 3.5, Style(stroke=None, fill=BLACK), owner=name)
    spots = letter_spots(scene)
    if spots is None:
        raise Reject("label_clash")
    for k, (u, v) in enumerate(spots):
        canvas.labels.append(draw_text_px(canvas, scene.letters[k], (u, v), LABEL))
    # the strokes as shapes.circle registers them: pixel centre, and the 3 px outline or the 3.5 px dot
    rings = [(letter, *canvas.px(x, y), canvas.len_px(r) - 1.5, canvas.len_px(r) + 1.5)
             for (x, y, r), letter in zip(scene.circles, scene.letters)]
    rings += [(name, *canvas.px(x, y), 0.0, canvas.len_px(3.5)) for (x, y), name in zip(scene.probes, PROBES)]
    placed = [o.bounds for o in canvas.labels]
    for p, name in zip(scene.probes, PROBES):
        placed.append(_place_probe_label(canvas, name, p, rings, placed))


PROBE_STYLE = LABEL.with_(font_px=18.0)
PROBE_RADII_PX = (14.0, 24.0)
CLEARANCE_PX = 8.0                                 # place_label's clearance from strokes
SAGITTA = 0.002                                    # > 1 - cos(pi / 64), the sagitta of a 64-gon over its radius


def _place_probe_label(canvas: Canvas, name: str, p, rings, placed) -> tuple[float, float, float, float]:
    """`place_label(canvas, name, p, name, PROBE_STYLE, radii_px=PROBE_RADII_PX)`, each stroke test first decided on
    the exact circles (`_ring_meets`; see `place_label_screened`): building the buffered outlines is the bulk of
    place_label's cost. `rings`: (owner, cx, cy, inner, outer radius) of every stroke on the canvas, outlines and
    dots; `placed`: the bounds of `canvas.labels`. Returns the bounds of the label's box."""
    others = [ring for owner, *ring in rings if owner != name]
    return place_label_screened(canvas, name, p, name, PROBE_STYLE, PROBE_RADII_PX, CLEARANCE_PX, placed,
                                lambda box: any_meets(_ring_meets(box, *ring) for ring in others))


def _ring_meets(box, cx: float, cy: float, inner: float, outer: float) -> bool | None:
    """Whether the box (x0, y0, x1, y1) buffered by CLEARANCE_PX meets the stroke inner <= |q - c| <= outer as
    shapely's polygons have it, or None where their approximations could decide either way: a box's buffer lies
    between 7.99 and 8 px of the box, a point's buffer of radius rho (a regular 64-gon) between rho (1 - SAGITTA)
    and rho of the point. The points of the buffered box lie at every distance from c between its nearest (less
    the buffer) and its farthest (plus the buffer)."""
    x0, y0, x1, y1 = box
    near = math.hypot(max(x0 - cx, 0.0, cx - x1), max(y0 - cy, 0.0, cy - y1))
    far = math.hypot(max(cx - x0, x1 - cx), max(cy - y0, y1 - cy))
    eps = 1e-6
    if near - CLEARANCE_PX > outer + eps or far + CLEARANCE_PX < inner * (1 - SAGITTA) - eps:
        return False
    if near - (CLEARANCE_PX - 0.1) < outer * (1 - SAGITTA) - eps and far + (CLEARANCE_PX - 0.1) > inner + eps:
        return True
    return None


DOMAIN = Domain(
    id="overlapping_circles", family="transformational", title="Overlapping circles",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="Three to five circle outlines and four probe points: crossing points, circles containing P, "
                "enclosed regions, the pair with the largest overlap, and the regions left once circle C is deleted.",
    balance_keys=("crossing_points", "circles_containing_p", "enclosed_regions", "largest_overlap_pair"),
)
