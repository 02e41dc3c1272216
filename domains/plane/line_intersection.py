"""Line intersection: K straight segments (5-8) labelled A, B, C, ..., each letter 14 px beyond one end of its
segment; segment A carries a filled dot at its start. The ladder walks all crossings -> do B and C cross -> the
most-crossed segment -> the segments met travelling along A from its dot -> how many segments D's infinite line
would cross; the open question asks which two segments make the highest crossing.

Endpoints are integers (page px, y down), so every crossing test is exact (`grip.geometry.segment_meet`): the
line-line parameters u, v are Fractions of integers and two segments cross iff 0 < u < 1 and 0 < v < 1. Q5's edit
stretches D 10 segment lengths beyond each end (integer endpoints again), far past the canvas, so "crosses the
extended D" is the same exact test.

Ambiguity boundaries, kept apart by rules checked on the latent geometry (px unless stated): a line meeting point
on the canvas near a segment end (`END_ALONG_PX` along either segment, Q1's margin); an endpoint near another
segment (`NEAR_MISS_PX`, B-C's value is Q2's margin); a shallow crossing (`ANGLE_DEG[level]`); two crossings
close enough to read as one (`SPACING_PX[level]`); crossings on A too close to order (`ALONG_A_PX`, Q4); a tie for
the most-crossed segment (Q3); an endpoint near D's line (`LINE_D_PX`, Q5); two crossings at nearly the same
height (`HIGHEST_GAP_PX`, open). The last four are margins; the first four are rules every accepted scene (and
every minimal pair) passes, counted as rejection reasons when a candidate fails them.

Deviations from DOMAINS.md 1.4:
- Segment D carries no extra "x" mark (it would read as a crossing point); its letter names it like every other
  segment.
- Legibility margins tightened so that whether two segments cross is seen at once, without zooming: a line meeting
  point is >= 28 px (sheet: 12) from each end of both segments, an endpoint >= 18 px (sheet: 10) from any other
  segment, and crossings >= 18 px apart at levels 1-2 (sheet: 14) and >= 16 px at level 3 (sheet: 10), so three
  crossings of three segments never bunch into what looks like one point.
- Minimal pair: the moved end stops `END_ALONG_PX` + 3 px short of / past A along X, or farther where X meets A
  at a shallow angle, so that it also stays `NEAR_MISS_PX` + 3 px from A.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

import numpy as np
import shapely
from shapely.geometry import Point

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.geometry import point_segment_distances, segment_meet, segment_meets
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY_DARK, LABEL, OKABE_ITO, Style
from grip.renderers.text import draw_text_px

LETTERS = "ABCDEFGH"
SIZE = 768
LO, HI = 60, 708                       # endpoint box, px
MIN_LEN_PX = 220.0
END_ALONG_PX = 28.0                    # line meeting point to any segment end, along the segment
NEAR_MISS_PX = 18.0                    # endpoint to any other segment
ANGLE_DEG = {1: 20.0, 2: 12.0, 3: 8.0}  # acute angle of a crossing
SPACING_PX = {1: 18.0, 2: 18.0, 3: 16.0}  # between crossing points
ALONG_A_PX = 20.0                      # consecutive crossings along A
LINE_D_PX = 10.0                       # every other endpoint to D's line
HIGHEST_GAP_PX = 12.0                  # highest crossing above the next
STRETCH = 10                           # Q5: D stretched this many lengths beyond each end
LABEL_OFF_PX = 25.0                    # label centre beyond its end: a 22 px box starts 14 px out
LABEL_HALF_PX = 11.0
LABEL_CLEAR_PX = 8.0
LABEL_GAP_PX = 14.0                    # between two letters
LABEL_OWN_PX = 48.0                    # letter centre to any other segment's end (its own end is 25 px away)
DOT_PX = 7.0
COLOURS = (BLACK, OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["green"], (0.55, 0.25, 0.50),
           OKABE_ITO["sky"], GREY_DARK, (0.15, 0.45, 0.65))   # F sky: clear of C; level 3 is all black
YES, NO = "yes", "no"


@dataclass(frozen=True)
class Scene:
    level: int                                     # 1..3
    segments: tuple[tuple[int, int, int, int], ...]  # per letter A, B, ...: (x0, y0, x1, y1), integer px in
    #                                                  [60, 708], length >= 220; A's (x0, y0) carries the dot
    label_end: tuple[int, ...]                     # per segment: 0/1, the end its letter sits beyond


# --- geometry ----------------------------------------------------------------------------------------------------

def meet(a, b) -> tuple[Fraction, Fraction] | None:
    """Line-line parameters (u along a, v along b) of the meeting point, exact; None for parallel lines."""
    p = segment_meet(a, b)
    return None if p is None else (Fraction(p[0], p[2]), Fraction(p[1], p[2]))


def cross(a, b) -> bool:
    p = segment_meet(a, b)
    return p is not None and 0 < p[0] < p[2] and 0 < p[1] < p[2]


def length(s) -> float:
    return math.hypot(s[2] - s[0], s[3] - s[1])


def point_at(s, u) -> tuple[float, float]:
    return (s[0] + float(u) * (s[2] - s[0]), s[1] + float(u) * (s[3] - s[1]))


def crossings(scene: Scene) -> list[tuple[int, int, Fraction, Fraction]]:
    """Every crossing pair (i < j) with its exact parameters along i and along j."""
    return list(_crossings(scene))


@lru_cache(maxsize=256)
def _crossings(scene: Scene) -> tuple:
    # The ladder, its margins and draw's checks ask for the same scene's crossings many times: computed once.
    out = []
    for (i, a), (j, b) in combinations(enumerate(scene.segments), 2):
        p = segment_meet(a, b)
        if p is not None and 0 < p[0] < p[2] and 0 < p[1] < p[2]:
            out.append((i, j, Fraction(p[0], p[2]), Fraction(p[1], p[2])))
    return tuple(out)


def degrees(scene: Scene) -> list[int]:
    deg = [0] * len(scene.segments)
    for i, j, _, _ in crossings(scene):
        deg[i] += 1
        deg[j] += 1
    return deg


def _hit(nu, nv, den):
    return (nu > 0) & (nu < den) & (nv > 0) & (nv < den)


def _pairs(c: np.ndarray, s: np.ndarray):
    """Every row of c (n, 4) against every row of s (m, 4), arrays (n, m): endpoint-to-other-segment distance, the
    meeting point's distance to the nearest end along either segment (inf off the canvas or parallel), the acute
    crossing angle (inf unless they cross), whether they cross (exact on integers), the meeting points (n, m, 2)."""
    nu, nv, den = segment_meets(c, s)
    hit = _hit(nu, nv, den)
    safe = np.where(den > 0, den, 1.0)           # parallel pairs: neither on the canvas nor crossing
    u, v = nu / safe, nv / safe
    (cx, cy), (sx, sy) = (c[:, 2:] - c[:, :2]).T, (s[:, 2:] - s[:, :2]).T
    pts = np.stack([c[:, 0, None] + u * cx[:, None], c[:, 1, None] + u * cy[:, None]], -1)
    on = (den > 0) & (pts >= 0).all(-1) & (pts <= SIZE).all(-1)
    along = np.minimum(np.minimum(abs(u), abs(1 - u)) * np.hypot(cx, cy)[:, None],
                       np.minimum(abs(v), abs(1 - v)) * np.hypot(sx, sy)[None])
    ang = np.degrees(abs(np.arctan2(cy, cx)[:, None] - np.arctan2(sy, sx)[None])) % 180.0
    n, m = len(c), len(s)
    miss = np.minimum(point_segment_distances(c.reshape(-1, 2), s).reshape(n, 2, m).min(1),
                      point_segment_distances(s.reshape(-1, 2), c).reshape(m, 2, n).min(1).T)
    return miss, np.where(on, along, np.inf), np.where(hit, np.minimum(ang, 180.0 - ang), np.inf), hit, pts


RULE_MIN = {"near_miss": lambda lv: NEAR_MISS_PX, "end_along": lambda lv: END_ALONG_PX,
            "angle": lambda lv: ANGLE_DEG[lv], "spacing": lambda lv: SPACING_PX[lv]}


def rules(scene: Scene) -> dict[str, float]:
    """The smallest value of every scene-wide legibility rule (a rule with no instance reads as the canvas size)."""
    return dict(_rules(scene))


@lru_cache(maxsize=256)
def _pair_table(scene: Scene) -> tuple:
    """`_pairs` of the scene's segments against themselves: the rules and Q2's margin (entry [1, 2], as `_pairs` of
    B against C alone gives it: every value is worked out pair by pair) read it."""
    segs = np.asarray(scene.segments, float)
    return _pairs(segs, segs)


@lru_cache(maxsize=256)
def _rules(scene: Scene) -> dict[str, float]:
    miss, along, ang, hit, pts = _pair_table(scene)
    iu = np.triu_indices(len(scene.segments), 1)
    p = pts[iu][hit[iu]]
    return {"near_miss": float(miss[iu].min()), "end_along": float(np.min(along[iu], initial=SIZE)),
            "angle": float(np.min(ang[iu], initial=SIZE)),
            "spacing": float(np.min(_pair_distances(p), initial=SIZE)) if len(p) > 1 else float(SIZE)}


def _pair_distances(p: np.ndarray) -> np.ndarray:
    """Distances between every two rows of p (n, 2), as scipy's euclidean pdist computes them (the square root
    of dx * dx + dy * dy), without loading scipy.spatial (a good part of a worker's start-up)."""
    i, j = np.triu_indices(len(p), 1)
    d = p[i] - p[j]
    return np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])


def broken_rule(scene: Scene) -> str | None:
    if any(length(s) < MIN_LEN_PX or not all(LO <= c <= HI for c in s) for s in scene.segments):
        return "segment_box"
    return next((k for k, v in rules(scene).items() if v < RULE_MIN[k](scene.level)), None)


def along_a(scene: Scene) -> list[tuple[Fraction, int]]:
    """(u along A, other segment) for every crossing on A, in travel order from the dot."""
    return list(_along_a(scene))


@lru_cache(maxsize=256)
def _along_a(scene: Scene) -> tuple:
    return tuple(sorted((u if i == 0 else v, j if i == 0 else i) for i, j, u, v in crossings(scene) if 0 in (i, j)))


def along_a_gap_px(scene: Scene) -> float:
    us = [u for u, _ in along_a(scene)]
    return min((float(b - a) * length(scene.segments[0]) for a, b in zip(us, us[1:])), default=float(SIZE))


def _split(lines, segs) -> tuple[np.ndarray, np.ndarray]:
    """Per line (rows x0, y0, x1, y1): the smallest distance from it to an end of `segs`, and how many of `segs`
    have their ends strictly on opposite sides of it (exact on integers)."""
    s = np.asarray(lines, float).reshape(-1, 4)
    return _split_xy(s[:, 0], s[:, 1], s[:, 2], s[:, 3], segs)


def _split_xy(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray, segs) -> tuple[np.ndarray, np.ndarray]:
    """`_split` for the lines through (x0, y0) and (x1, y1), given as coordinate arrays: `line_offsets`'
    arithmetic with the ends along the first axis, so that both reductions run over whole rows, and the division
    by each line's length after the minimum (rounding is monotone, so the minimum is the same)."""
    e = np.asarray(segs, float).reshape(-1, 4)
    rx, ry = x1 - x0, y1 - y0
    c0 = rx * (e[:, 1, None] - y0) - ry * (e[:, 0, None] - x0)
    c1 = rx * (e[:, 3, None] - y0) - ry * (e[:, 2, None] - x0)
    return np.minimum(abs(c0), abs(c1)).min(0, initial=np.inf) / np.hypot(rx, ry), (c0 * c1 < 0).sum(0)


def _others_of_d(scene: Scene) -> list:
    return [s for k, s in enumerate(scene.segments) if k != 3]


def line_d_gap_px(scene: Scene) -> float:
    # `_split`'s value in plain floats: exact integer offsets, their minimum, then one division by np.hypot.
    x0, y0, x1, y1 = scene.segments[3]
    rx, ry = x1 - x0, y1 - y0
    near = min(min(abs(rx * (e[1] - y0) - ry * (e[0] - x0)), abs(rx * (e[3] - y0) - ry * (e[2] - x0)))
               for e in _others_of_d(scene))
    return float(near / np.hypot(float(rx), float(ry)))


def highest_gap_px(scene: Scene) -> float:
    ys = sorted(_heights(scene))
    return ys[1] - ys[0] if len(ys) >= 2 else 0.0


@lru_cache(maxsize=256)
def _heights(scene: Scene) -> tuple[float, ...]:
    """y of every crossing, in `crossings` order."""
    return tuple(point_at(scene.segments[i], u)[1] for i, _, u, _ in crossings(scene))


def _label_at(s, e: int) -> tuple[float, float]:
    """Centre of a letter `LABEL_OFF_PX` beyond end e of segment s, along the segment."""
    (ax, ay), (bx, by) = (s[2:], s[:2]) if e == 0 else (s[:2], s[2:])
    f = LABEL_OFF_PX / length(s)
    return (bx + (bx - ax) * f, by + (by - ay) * f)


def label_boxes(scene: Scene) -> list[tuple[float, float]]:
    return [_label_at(s, e) for s, e in zip(scene.segments, scene.label_end)]


def _box(c):
    # shapely.box builds the same ring as shapely.geometry.box, without its Python-level Polygon constructor.
    return shapely.box(c[0] - LABEL_HALF_PX, c[1] - LABEL_HALF_PX, c[0] + LABEL_HALF_PX, c[1] + LABEL_HALF_PX)


def label_ok(scene: Scene, k: int, centre, placed, lines, dot=None) -> bool:
    """The letter's box lies in the safe area, `LABEL_CLEAR_PX` from every other segment (and A's dot), apart
    from the letters placed before it, and its own end is plainly the nearest (`LABEL_OWN_PX`)."""
    x, y = centre
    lo, hi = SAFE_BORDER_PX + 1 + LABEL_HALF_PX, SIZE - SAFE_BORDER_PX - 1 - LABEL_HALF_PX
    if not (lo <= x <= hi and lo <= y <= hi):
        return False
    b = _box(centre)
    near = shapely.distance(b, lines) < LABEL_CLEAR_PX + 1.5
    near[k] = False
    if near.any() or (k != 0 and shapely.distance(b, Point(scene.segments[0][:2]) if dot is None else dot)
                      < LABEL_CLEAR_PX + DOT_PX):
        return False
    if any(math.dist(centre, p) < LABEL_OWN_PX for j, s in enumerate(scene.segments) if j != k
           for p in (s[:2], s[2:])):
        return False
    return not (placed and (shapely.distance(b, placed) < LABEL_GAP_PX).any())


def _lines(scene: Scene):
    return shapely.linestrings(np.asarray(scene.segments, float).reshape(-1, 2, 2))


_FITS: dict = {}            # scene -> labels_fit(scene), filled by _fix_labels and labels_fit


def _remember_fit(scene: Scene, fits: bool) -> bool:
    if len(_FITS) >= 512:
        _FITS.clear()
    _FITS[scene] = fits
    return fits


_SURE_PX = 1e-6             # far above the rounding of any distance here


def _below(lo: np.ndarray, hi: np.ndarray, lim: float, exact) -> np.ndarray:
    """Per element, whether a distance that lies in [lo, hi] (up to rounding) is below lim: settled by the bounds
    where they allow, else by exact(flat indices of the rest), the distance as `label_ok` computes it."""
    out = hi < lim - _SURE_PX
    doubt = np.flatnonzero(~out & (lo <= lim + _SURE_PX))
    if len(doubt):
        out.flat[doubt] = exact(doubt) < lim
    return out


def _label_table(scene: Scene):
    """`label_ok` for both ends of every segment at once, less the test against placed letters: whether the letter
    beyond end e of segment k passes (array (k, 2)), and whether two of those letter boxes are closer than
    `LABEL_GAP_PX` (2k, 2k), row and column 2 k + e. Each of `label_ok`'s distance tests is settled from plain
    distances to the box centre where they decide it with room to spare (a box holds the disc of radius
    `LABEL_HALF_PX` about its centre and lies in the disc of radius `LABEL_HALF_PX` sqrt 2), else with the same
    GEOS (or math.dist) distance as `label_ok`."""
    segs = scene.segments
    n = len(segs)
    centres = [_label_at(seg, e) for seg in segs for e in (0, 1)]
    xy, s = np.asarray(centres, float), np.asarray(segs, float)
    own = np.arange(2 * n)[:, None] // 2 == np.arange(n)[None, :]       # (2n, n): the letter's own segment
    inf = np.inf

    def boxes(r):
        return shapely.box(xy[r, 0] - LABEL_HALF_PX, xy[r, 1] - LABEL_HALF_PX, xy[r, 0] + LABEL_HALF_PX,
                           xy[r, 1] + LABEL_HALF_PX)

    dc = np.where(own, inf, point_segment_distances(xy, s))
    near = _below(dc - LABEL_HALF_PX * math.sqrt(2), np.maximum(dc - LABEL_HALF_PX, 0), LABEL_CLEAR_PX + 1.5,
                  lambda i: shapely.distance(boxes(i // n), _lines(scene)[i % n]))
    gx, gy = np.abs(xy[:, 0] - segs[0][0]), np.abs(xy[:, 1] - segs[0][1])
    dd = np.hypot(np.maximum(gx - LABEL_HALF_PX, 0), np.maximum(gy - LABEL_HALF_PX, 0))
    dd[:2] = inf                                                         # A's own letter
    dot = _below(dd, dd, LABEL_CLEAR_PX + DOT_PX, lambda i: shapely.distance(boxes(i), Point(segs[0][:2])))
    ends = s.reshape(-1, 2)
    de = np.where(np.repeat(own, 2, 1), inf, np.hypot(xy[:, None, 0] - ends[:, 0], xy[:, None, 1] - ends[:, 1]))
    mine = _below(de, de, LABEL_OWN_PX, lambda i: np.array([math.dist(centres[r], segs[q // 2][q % 2 * 2:][:2])
                                                             for r, q in zip(*divmod(i, 2 * n))]))
    bx, by = np.abs(xy[:, None, 0] - xy[:, 0]), np.abs(xy[:, None, 1] - xy[:, 1])
    db = np.hypot(np.maximum(bx - 2 * LABEL_HALF_PX, 0), np.maximum(by - 2 * LABEL_HALF_PX, 0))
    close = _below(db, db, LABEL_GAP_PX, lambda i: shapely.distance(boxes(i // (2 * n)), boxes(i % (2 * n))))
    lo, hi = SAFE_BORDER_PX + 1 + LABEL_HALF_PX, SIZE - SAFE_BORDER_PX - 1 - LABEL_HALF_PX
    inside = (xy >= lo).all(1) & (xy <= hi).all(1)
    ok = inside & ~near.any(1) & ~dot & ~mine.any(1)
    return ok.reshape(n, 2), close


def _fits_at(ok, close, k: int, e: int, placed: list[int]) -> bool:
    return bool(ok[k, e]) and not (placed and close[2 * k + e, placed].any())


def labels_fit(scene: Scene) -> bool:
    fits = _FITS.get(scene)
    if fits is None:
        ok, close = _label_table(scene)
        placed, fits = [], True
        for k, e in enumerate(scene.label_end):
            if not _fits_at(ok, close, k, e, placed):
                fits = False
                break
            placed.append(2 * k + e)
        _remember_fit(scene, fits)
    return fits


def _fix_labels(s: Scene) -> Scene:
    """Each letter at its drawn end if it fits there, else at the other end. Whether every letter fits is
    remembered for `labels_fit` (it walks the same letters in the same order against the same placed boxes)."""
    ok, close = _label_table(s)
    placed, ends, fits = [], list(s.label_end), True
    for k in range(len(s.segments)):
        e = next((e for e in (ends[k], 1 - ends[k]) if _fits_at(ok, close, k, e, placed)), None)
        if e is None:
            fits = False
        else:
            ends[k] = e
        placed.append(2 * k + ends[k])
    out = replace(s, label_end=tuple(ends))
    _remember_fit(out, fits)
    return out


# --- answers -----------------------------------------------------------------------------------------------------

def letters(scene: Scene) -> tuple[str, ...]:
    return tuple(LETTERS[:len(scene.segments)])


def crossing_count(scene: Scene) -> Count:
    return Count(len(crossings(scene)))


def b_crosses_c(scene: Scene) -> Choice:
    return Choice(YES if cross(scene.segments[1], scene.segments[2]) else NO, (YES, NO))


def most_crossed(scene: Scene) -> Choice:
    deg = degrees(scene)
    return Choice(letters(scene)[deg.index(max(deg))], letters(scene))          # the first most crossed


def top_gap(scene: Scene) -> int:
    deg = sorted(degrees(scene), reverse=True)
    return deg[0] - deg[1]


def crossed_along_a(scene: Scene, reverse: bool = False) -> Ordered:
    names = [letters(scene)[k] for _, k in along_a(scene)]
    return Ordered(tuple(reversed(names) if reverse else names), "the order you cross them", letters(scene)[1:])


def crossed_by_d(scene: Scene) -> Count:
    """How many other segments segment D crosses (Q5 asks it of the stretched D): `degrees(scene)[3]`, from D's
    own pairs (taken in `crossings`' order, lower index first)."""
    segs = scene.segments
    return Count(sum(cross(s, segs[3]) if k < 3 else cross(segs[3], s) for k, s in enumerate(segs) if k != 3),
                 0, len(segs) - 1)


def straddling_line_d(scene: Scene) -> int:
    """Independent route to Q5: segments whose ends lie strictly on opposite sides of D's line."""
    return int(_split([scene.segments[3]], _others_of_d(scene))[1][0])


def highest_pair(scene: Scene) -> Record:
    ys = _heights(scene)
    i, j, _, _ = crossings(scene)[ys.index(min(ys))]          # the first of the highest, as min(key=) takes it
    pair = (letters(scene)[i], letters(scene)[j])
    return Record((("pair", Ordered(pair, "alphabetical order", letters(scene), as_set=True)),))


def edit(scene: Scene) -> Scene:
    """Q5's edit: D stretched `STRETCH` lengths beyond each end, on its own line (integer endpoints)."""
    x0, y0, x1, y1 = scene.segments[3]
    dx, dy = x1 - x0, y1 - y0
    d = (x0 - STRETCH * dx, y0 - STRETCH * dy, x1 + STRETCH * dx, y1 + STRETCH * dy)
    return replace(scene, segments=scene.segments[:3] + (d,) + scene.segments[4:])


counterfactual = crossed_by_d


# --- ladder ------------------------------------------------------------------------------------------------------

Q4_TEXT = ("Travel along segment A from its dotted end to its other end. List the segments you cross, in the order "
           "you cross them.")


def ladder(scene: Scene) -> Ladder:
    vals = rules(scene)
    miss, along = _pair_table(scene)[:2]
    rungs = (
        Question(1, "crossing_count", "How many points are there where two of the drawn segments cross each other? "
                 "Count only where the drawn lines themselves cross; no three segments cross at one point.",
                 crossing_count(scene),
                 Margin(vals["end_along"], "px", END_ALONG_PX, "a line meeting point near a segment end")),
        Question(2, "b_crosses_c", "Do segments B and C cross each other?", b_crosses_c(scene),
                 Margin(float(min(miss[1, 2], along[1, 2], SIZE)), "px", NEAR_MISS_PX,
                        "B and C close to touching at an end")),
        Question(3, "most_crossed", "Which segment crosses the largest number of other segments?",
                 most_crossed(scene), Margin(float(top_gap(scene)), "crossings", 1.0,
                                             "two segments tied for the most crossings")),
        Question(4, "crossed_along_a", Q4_TEXT, crossed_along_a(scene),
                 Margin(along_a_gap_px(scene), "px", ALONG_A_PX, "two crossings on A too close to order")),
        Question(5, "crossed_by_line_d", "If segment D were extended in both directions into an infinite straight "
                 "line, how many of the other segments would it cross?", counterfactual(edit(scene)),
                 Margin(line_d_gap_px(scene), "px", LINE_D_PX, "an endpoint near D's line"),
                 edit="segment D extended into an infinite line"),
    )
    open_q = Question(6, "highest_crossing", "Which two segments cross at the highest crossing point in the picture "
                      "(the one nearest the top edge)? Explain how you found it.", highest_pair(scene),
                      Margin(highest_gap_px(scene), "px", HIGHEST_GAP_PX, "two crossings at nearly the same height"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    return Question(4, "crossed_along_a_reversed", "Travel along segment A from its undotted end toward the dot. "
                    "List the segments you cross, in the order you cross them.",
                    crossed_along_a(scene, reverse=True),
                    Margin(along_a_gap_px(scene), "px", ALONG_A_PX, "two crossings on A too close to order"))


# --- sampling ----------------------------------------------------------------------------------------------------

def _long_enough(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """Rows (x0, y0, x1, y1) from the coordinate arrays, of length >= MIN_LEN_PX with both ends in the endpoint
    box."""
    ok = np.hypot(x1 - x0, y1 - y0) >= MIN_LEN_PX
    out = np.empty((len(ok), 4))
    for k, v in enumerate((x0, y0, x1, y1)):
        ok &= (v >= LO) & (v <= HI)
        out[:, k] = v
    return out[ok]


def _candidates(rng: np.random.Generator, n: int, base: float, spread: float) -> np.ndarray:
    """n random segments (rows x0, y0, x1, y1, integer-valued) of length >= MIN_LEN_PX inside the endpoint box,
    directions within `spread` degrees of `base`. Every one fits (2 |hx| <= L < 560 < HI - LO) and stays long
    enough and in the box once rounded (L >= MIN_LEN_PX + 2; each end moves <= 0.5 px per axis; the box edges are
    integers), so none is dropped."""
    L = rng.uniform(MIN_LEN_PX + 2, 560.0, n)
    a = np.radians(base + rng.uniform(-spread, spread, n))
    hs = L / 2 * np.array([np.cos(a), np.sin(a)])       # half extents (x, y), signed
    h = np.abs(hs)
    mid = LO + h + np.array([rng.random(n), rng.random(n)]) * (HI - LO - 2 * h)
    out = np.empty((n, 4))
    out[:, :2], out[:, 2:] = (mid - hs).T, (mid + hs).T
    return np.rint(out, out=out)            # np.round, without its Python layers


_R2D = 180.0 / math.pi        # np.degrees' factor


def _hypot_below(dx: float, dy: float, lim: float) -> bool:
    """np.hypot(dx, dy) < lim: from the sum of squares wherever it leaves no doubt (np.hypot is within an ulp of
    the true length, the sum of squares within a few), else np.hypot itself."""
    q, lim2 = dx * dx + dy * dy, lim * lim
    if q < lim2 * (1 - 1e-9):
        return True
    if q > lim2 * (1 + 1e-9):
        return False
    return bool(np.hypot(dx, dy) < lim)


def _end_near(px, py, ax, ay, dx, dy, dd) -> bool:
    """Whether point p lies within `NEAR_MISS_PX` of the segment from a along d (dd = d . d): the arithmetic of
    `point_segment_distances`, in plain floats."""
    wx, wy = px - ax, py - ay
    u = (wx * dx + wy * dy) / (dd if dd > 1e-12 else 1e-12)
    u = 0.0 if u < 0.0 else 1.0 if u > 1.0 else u
    return _hypot_below(wx - u * dx, wy - u * dy, NEAR_MISS_PX)


def _lengths_directions(c: np.ndarray) -> tuple[list, list]:
    """Per row of c: its length and direction in radians, by `_pairs`' np.hypot and np.arctan2."""
    (cx, cy) = (c[:, 2:] - c[:, :2]).T
    return np.hypot(cx, cy).tolist(), np.arctan2(cy, cx).tolist()


_BOX_PX = NEAR_MISS_PX + 1.0   # an end this far outside a segment's bounding box is plainly clear of it


def _geometry_row(x0: float, y0: float, x1: float, y1: float, n: float, a: float) -> tuple:
    """(x0, y0, x1, y1, dx, dy, dx * dx + dy * dy, length n, direction a in radians, then the bounding box
    widened by `_BOX_PX`: x from, x to, y from, y to) in plain floats."""
    return (x0, y0, x1, y1, x1 - x0, y1 - y0, (x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0), n, a,
            min(x0, x1) - _BOX_PX, max(x0, x1) + _BOX_PX, min(y0, y1) - _BOX_PX, max(y0, y1) + _BOX_PX)


def _rule_points(g: tuple, meets, others: list, pts: list, level: int) -> list | None:
    """The crossing points (in segment order) of a candidate with `others`, if it passes every pair rule with them
    and keeps crossings `SPACING_PX` apart (from each other and from the drawn `pts`), else None. g and others:
    `_geometry_row`s; meets: per other segment (nu, nv, den) as `segment_meets` gives them. The values of
    `_pairs`, element by element, in plain floats; a spacing or an end clearance is worked out only where the
    plain coordinate differences (or the widened bounding box) leave it in doubt."""
    x0, y0, x1, y1, dx, dy, dd, lc, ac, bx0, bx1, by0, by1 = g
    ang_min, space = ANGLE_DEG[level], SPACING_PX[level]
    new = []
    for (a, b, d), o in zip(meets, others):
        safe = d if d > 0 else 1.0
        u, v = a / safe, b / safe
        px, py = x0 + u * dx, y0 + u * dy
        if d > 0 and 0 <= px <= SIZE and 0 <= py <= SIZE and \
                min(min(abs(u), abs(1 - u)) * lc, min(abs(v), abs(1 - v)) * o[7]) < END_ALONG_PX:
            return None
        if 0 < a < d and 0 < b < d:
            ang = abs(ac - o[8]) * _R2D % 180.0
            if min(ang, 180.0 - ang) < ang_min:
                return None
            new.append((px, py))
    for k, (px, py) in enumerate(new):
        for qx, qy in new[k + 1:] + pts:
            if -space < px - qx < space and -space < py - qy < space and _hypot_below(px - qx, py - qy, space):
                return None
    for ox0, oy0, ox1, oy1, sx, sy, sd, _, _, qx0, qx1, qy0, qy1 in others:
        if (qx0 < x0 < qx1 and qy0 < y0 < qy1 and _end_near(x0, y0, ox0, oy0, sx, sy, sd)) or \
                (qx0 < x1 < qx1 and qy0 < y1 < qy1 and _end_near(x1, y1, ox0, oy0, sx, sy, sd)) or \
                (bx0 < ox0 < bx1 and by0 < oy0 < by1 and _end_near(ox0, oy0, x0, y0, dx, dy, dd)) or \
                (bx0 < ox1 < bx1 and by0 < oy1 < by1 and _end_near(ox1, oy1, x0, y0, dx, dy, dd)):
            return None
    return new


def _first_row(c: np.ndarray, others: list, pts: list, level: int, must: list, never: list, below: int | None):
    """The first row of c that crosses each of `others` listed in `must` and none in `never`, fewer than `below`
    of them in all (None: any number), and passes every pair rule with them (`_rule_points`): (row, its crossing
    flags against `others`, its crossing points, its `_geometry_row`), or None. others: `_geometry_row`s. Row by
    row in plain floats with `segment_meets`' exact arithmetic on integers: most rows fall at their first `must`
    or `never` test and the first fit mostly comes within a few rows, so most of the batch is never looked at."""
    ld = None
    tests = [(*others[j][:2], *others[j][4:6], True) for j in must] + \
        [(*others[j][:2], *others[j][4:6], False) for j in never]
    for r in range(len(c)):
        x0, y0, x1, y1 = c[r].tolist()
        rx, ry = x1 - x0, y1 - y0
        for ox, oy, sx, sy, want in tests:        # `_meet` and `_crosses`, written out: the hot loop
            den, qx, qy = rx * sy - ry * sx, ox - x0, oy - y0
            nu, nv = qx * sy - qy * sx, qx * ry - qy * rx
            if (0 < nu < den and 0 < nv < den if den > 0 else den < nu < 0 and den < nv < 0) != want:
                break
        else:
            meets = [_meet(x0, y0, rx, ry, o) for o in others]
            hits = [_crosses(m) for m in meets]
            if below is not None and sum(hits) >= below:
                continue
            if ld is None:
                ld = _lengths_directions(c)
            g = _geometry_row(x0, y0, x1, y1, ld[0][r], ld[1][r])
            new = _rule_points(g, meets, others, pts, level)
            if new is not None:
                return r, hits, new, g
    return None


def _meet(x0: float, y0: float, rx: float, ry: float, o: tuple) -> tuple[float, float, float]:
    """`segment_meets` (nu, nv, den) of the segment from (x0, y0) along (rx, ry) against o, a `_geometry_row`."""
    den = rx * o[5] - ry * o[4]
    qx, qy = o[0] - x0, o[1] - y0
    nu, nv = qx * o[5] - qy * o[4], qx * ry - qy * rx
    return (-nu, -nv, -den) if den < 0 else (nu, nv, den)


def _crosses(m: tuple[float, float, float]) -> bool:
    return 0 < m[0] < m[2] and 0 < m[1] < m[2]


def _d_candidates(rng: np.random.Generator, segs: list, q5: int, n_lines: int = 300, per_line: int = 12):
    """Candidates for D: random lines first, kept when they split the ends of exactly q5 segments `LINE_D_PX`
    clear of every end (the line alone decides Q5), then random stretches of each kept line as segments."""
    p = rng.uniform(LO, HI, (n_lines, 2))
    a = rng.uniform(0, math.pi, n_lines)
    dx, dy = np.cos(a), np.sin(a)
    clear, n5 = _split_xy(p[:, 0], p[:, 1], p[:, 0] + dx, p[:, 1] + dy, segs)
    keep = np.flatnonzero((n5 == q5) & (clear >= LINE_D_PX + 2))[:40]
    if not len(keep):
        return np.zeros((0, 4))
    p, dx, dy = p[keep], dx[keep], dy[keep]
    # The stretch of each line inside the endpoint box: t in [t0, t1] from p along (dx, dy).
    with np.errstate(divide="ignore"):
        tx = np.sort(np.stack([(LO - p[:, 0]) / dx, (HI - p[:, 0]) / dx]), 0)
        ty = np.sort(np.stack([(LO - p[:, 1]) / dy, (HI - p[:, 1]) / dy]), 0)
    t0, t1 = np.maximum(tx[0], ty[0]) + 1, np.minimum(tx[1], ty[1]) - 1
    room = t1 - t0
    L = MIN_LEN_PX + 4 + rng.random((len(keep), per_line)) * np.clip(np.minimum(560.0, room) - MIN_LEN_PX - 4, 0,
                                                                     None)[:, None]
    st = t0[:, None] + rng.random((len(keep), per_line)) * np.clip(room[:, None] - L, 0, None)
    x, y = p[:, 0, None], p[:, 1, None]
    ex, ey = dx[:, None], dy[:, None]
    return _long_enough(*(np.rint(v).ravel() for v in (x + st * ex, y + st * ey, x + (st + L) * ex,
                                                       y + (st + L) * ey)))


def _d_mask(c: np.ndarray, segs: list, cmask: np.ndarray, q5: int, moved: bool | None) -> np.ndarray:
    """Candidates for D meeting Q5's targets: the line splits the ends of exactly q5 segments, every end
    `LINE_D_PX` clear of it, and q5 differs from the candidate's drawn crossings exactly when `moved`."""
    clear, n5 = _split(c, segs)
    return (clear >= LINE_D_PX) & (n5 == q5) & (True if moved is None else ((n5 != cmask.sum(1)) == moved))


def _offsets(d: tuple, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`line_offsets([d], points)[0]` for points given as coordinate arrays."""
    rx, ry = d[2] - d[0], d[3] - d[1]
    return (rx * (y - d[1]) - ry * (x - d[0])) / np.hypot(rx, ry)


def _first_d(c: np.ndarray, segs: list, others: list, pts: list, level: int, must: list, never: list, below: int,
             q5: int, moved: bool | None):
    """`_first_row` for D built last, which also meets Q5's targets (`_d_mask`): the plan and the targets on the
    whole batch at once (D's batches are large and few of their rows pass), then the pair rules row by row."""
    cmask = _hit(*segment_meets(c, np.asarray(segs, float)))
    rows = np.flatnonzero(cmask[:, must].all(1) & ~cmask[:, never].any(1) & (cmask.sum(1) < below))
    rows = rows[_d_mask(c[rows], segs, cmask[rows], q5, moved)]
    first = _first_row(c[rows], others, pts, level, [], [], None)
    return None if first is None else (int(rows[first[0]]), *first[1:])


def _plan(d: Draws, k: int, t: dict, hub: int, d_at: int, bc: tuple[int, int]):
    """Which pairs must (1) or must not (0) cross, -1 free: A crosses a chosen n_a, a middle hub a chosen h, the
    two consistent on the A-hub pair and on Q2's pair when the hub is B or C, and no other segment bound to h
    crossings or more."""
    n_a, h = t["n_a"], t["hub_deg"]
    # D's line splitting one segment that D does not cross leaves D crossing none, so not A either.
    pool_a = [x for x in range(1, k) if x != d_at] if t["moved"] and t["q5"] == 1 else range(1, k)
    keys = (0, 2) if t["t3"] in (1, 2) else (0,)          # the hub's pairs fixed by A's plan and by Q2
    pool = [x for x in range(k) if x != hub and x not in keys]
    # D crosses at most q5 segments (its line splits every one it crosses), fewer when Q5 must differ.
    d_room = t["q5"] - bool(t["moved"]) if d_at != hub else k
    if n_a > len(pool_a):
        return None
    for _ in range(20):
        want = [[-1] * k for _ in range(k)]
        want[0][1:] = [0] * (k - 1)
        for i in d.subset(len(pool_a), n_a):           # rng.choice(pool_a, n_a, replace=False)
            want[0][pool_a[i]] = 1
        if hub != 0:
            fixed = [want[0][hub], int(t["q2"])][:len(keys)]
            n_rest = h - sum(fixed)
            if not 0 <= n_rest <= len(pool):
                continue
            want[hub] = [0] * k
            for i in d.subset(len(pool), n_rest):
                want[hub][pool[i]] = 1
            for x, f in zip(keys, fixed):
                want[hub][x] = f
        # Made symmetric: only rows 0 and the hub are set (in full, and alike on their shared pair), the rest -1.
        rows = (0,) if hub == 0 else (0, hub)
        sym = [[-1] * k for _ in range(k)]
        for r in rows:
            for j, v in enumerate(want[r]):
                if j != r:
                    sym[r][j] = v
                    if j not in rows:
                        sym[j][r] = v
        want = sym
        low = [row.count(1) for row in want]           # crossings each segment is already bound to
        if t["q2"] and want[bc[0]][bc[1]] < 0:
            low[bc[0]] += 1
            low[bc[1]] += 1
        if all(v < h for i, v in enumerate(low) if i != hub) and low[d_at] <= d_room:
            return want
    return None


def _try(rng: np.random.Generator, d: Draws, level: int, k: int, t: dict):
    """One construction, segment by segment, each the first of a batch of candidates that passes every pair rule
    and the plan (`_plan`): A first; the hub (the segment meant to be the most crossed: A itself, or the second
    segment built, which takes letter t3) crosses exactly `hub_deg` segments and every other stays below that;
    D is built last from candidate lines that meet Q5's targets, unless D is the hub, whose line is then checked
    against each later segment. Returns a scene meeting every target and rule, or None. Scalar draws go through
    `d`, array draws through `rng` (one stream)."""
    base, spread = d.uniform(0, 180), d.pick((60.0, 90.0))
    t3, h, q2, q5 = t["t3"], t["hub_deg"], t["q2"], t["q5"]
    hub = 0 if t3 == 0 else 1
    b_at, c_at = {1: (1, 2), 2: (2, 1)}.get(t3, (2, 3) if hub == 1 else (1, 2))
    d_at = 1 if t3 == 3 else k - 1          # D is built last, with its Q5 targets, unless it is the hub
    want = _plan(d, k, t, hub, d_at, (b_at, c_at))
    if want is None:        # 20 random plans failing means the targets admit none: drawing again will not help
        raise Reject("no_plan_for_targets")
    segs, geo, pts, deg, n5_d = [], [], [], [], 0
    for idx in range(k):
        last_d = idx == k - 1 == d_at
        must = [j for j in range(idx) if want[idx][j] == 1]
        # Every segment but the hub stays below h crossings (each is below h already): those at h - 1 are not to
        # be crossed again.
        never = [j for j in range(idx) if want[idx][j] == 0 or (j != hub and deg[j] + 1 >= h)]
        if idx == max(b_at, c_at):
            (must if q2 else never).append(min(b_at, c_at))
        for _ in range(3 if last_d else 1):     # D, the most constrained, gets fresh candidates twice
            c = _d_candidates(rng, segs, q5) if last_d else _candidates(rng, 80, base, spread)
            if idx in (0, hub):
                c = c[np.hypot(c[:, 2] - c[:, 0], c[:, 3] - c[:, 1]) >= 380.0]
            n5 = None
            if last_d:
                first = _first_d(c, segs, geo, pts, level, must, never, h, q5, t["moved"])
            else:
                if d_at == 1 and idx == 1:         # D as the hub: its line clear of A's ends
                    clear, n5 = _split(c, segs)
                    keep = clear >= LINE_D_PX
                    c, n5 = c[keep], n5[keep]
                if d_at == 1 and idx > 1:          # ... and of every later segment's, adding up to Q5
                    o0, o1 = _offsets(segs[1], c[:, 0], c[:, 1]), _offsets(segs[1], c[:, 2], c[:, 3])
                    n5 = n5_d + (o0 * o1 < 0)
                    keep = (np.minimum(abs(o0), abs(o1)) >= LINE_D_PX) & (n5 <= q5) & ((n5 == q5) | (idx < k - 1))
                    c, n5 = c[keep], n5[keep]
                first = _first_row(c, geo, pts, level, must, never, None if idx == hub else h)
            if first is not None:
                break
        if first is None:
            return None
        i, row, new, g = first
        segs.append(tuple(int(v) for v in c[i].tolist()))
        geo.append(g)
        pts += new
        if n5 is not None:                     # segments whose ends D's line splits
            n5_d = int(n5[i])
        deg = [n + x for n, x in zip(deg, row)] + [sum(row)]
    rest = [x for x in range(1, k) if x not in (b_at, c_at, d_at)]
    rest = [rest[i] for i in d.permutation(len(rest))]
    if t3 >= 4:                        # the hub gets letter t3
        rest.remove(hub)
        rest.insert(t3 - 4, hub)
    order = [0, b_at, c_at, d_at] + rest
    ends = [int(e) for e in rng.integers(0, 2, size=k)]
    s = _fix_labels(Scene(level, tuple(segs[x] for x in order), tuple(ends)))
    if labels_fit(s) and highest_gap_px(s) >= HIGHEST_GAP_PX and along_a_gap_px(s) >= ALONG_A_PX and \
            broken_rule(s) is None:
        return s
    return None


def targets(rng: np.random.Generator, k: int) -> dict:
    """Q3's letter uniform over the K letters; |Q4| = n_a over what that letter allows; the hub's crossings h;
    B-C 50/50; Q5 over 1-4 and 'Q5 differs from D's drawn crossings' in 65% where both are possible. D as the hub:
    Q5 in 3-4 (D must outrun A's n_a = 2 crossings) and equal to D's drawn crossings or not, as the line falls."""
    t3 = int(rng.integers(k))
    q2 = bool(rng.random() < 0.5)
    if t3 == 3:
        return dict(t3=t3, q2=q2, q5=int(rng.integers(3, 5)), moved=None, hub_deg=3, n_a=2)
    # At K = 5 a segment other than A can outrun at most 3 crossings on A, so there the larger |Q4| are drawn more
    # often where they are possible, to even out |Q4| over the level mix.
    if t3 == 0:
        n_a = h = int(rng.choice([2, 3, 4], p=[0.15, 0.25, 0.6] if k == 5 else None))
    else:
        top = k - 1 - (t3 in (1, 2) and not q2)      # a hub B (or C) that must miss C (or B)
        n_a = min(int(rng.choice([2, 3], p=[0.3, 0.7])) if k == 5 else int(rng.integers(2, 5)), top - 1)
        h = int(rng.integers(n_a + 1, min(n_a + 2, top) + 1))
    # D stays below the hub's h crossings: Q5 = D's drawn crossings needs Q5 < h; Q5 = 1 above D's drawn
    # crossings leaves D crossing nothing, so A needs n_a crossers besides D. Q5 = 1 is the hardest to build and
    # drawn more often, so that accepted items come out near uniform.
    q5 = int(rng.choice([1, 2, 3, 4], p=[0.34, 0.26, 0.2, 0.2]))
    can = [m for m in (True, False) if (m or q5 < h) and not (m and q5 == 1 and n_a > k - 2)]
    moved = can[0] if len(can) == 1 else bool(rng.random() < 0.65)
    return dict(t3=t3, q2=q2, q5=q5, moved=moved, hub_deg=h, n_a=n_a)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first (`targets`), then scenes are built for them (`_try`) until one meets every target and rule."""
    if level not in (1, 2, 3):
        raise ValueError(f"line_intersection: level must be 1, 2 or 3, got {level!r}")
    k = {1: 5, 2: int(rng.integers(5, 7)), 3: int(rng.integers(6, 9))}[level]
    t = targets(rng, k)
    d = Draws(rng)          # the Generator's own scalar draws, cheaper
    for _ in range(20):
        s = _try(rng, d, level, k, t)
        if s is not None:
            return s
    raise Reject("no_layout_for_targets")


# --- minimal pair ------------------------------------------------------------------------------------------------

def _moved(scene: Scene, x: int, end: int, v: Fraction, past: bool) -> tuple[float, Scene]:
    """X's end `end` moved along X past (or short of) its meeting point with A at parameter v, to `END_ALONG_PX`
    + 3 px from it, or farther where X meets A at a shallow angle so the end stays `NEAR_MISS_PX` + 3 px from A.
    Returns (the distance moved, px, the moved scene)."""
    a, s = scene.segments[0], scene.segments[x]
    sin = abs((a[2] - a[0]) * (s[3] - s[1]) - (a[3] - a[1]) * (s[2] - s[0])) / (length(a) * length(s))
    step = max(END_ALONG_PX + 3, (NEAR_MISS_PX + 3) / sin) / length(s)
    t = float(v) + (step if (end == 1) == past else -step)
    p = point_at(s, t)
    new = (round(p[0]), round(p[1])) + s[2:] if end == 0 else s[:2] + (round(p[0]), round(p[1]))
    return abs(t - end) * length(s), replace(scene, segments=scene.segments[:x] + (new,) + scene.segments[x + 1:])


def minimal_pair(scene: Scene) -> Scene:
    """One endpoint of a segment X != A moved along X so that exactly one crossing on A appears or disappears:
    if |Q4| >= 3 the end of X's shorter part pulled back across A, if |Q4| <= 3 the nearer end of a segment whose
    line meets A's interior pushed across A. The smallest move whose scene passes every rule (ties: letter order)."""
    n, a = len(along_a(scene)), scene.segments[0]
    q1, q4 = len(crossings(scene)), crossed_along_a(scene)
    moves = []
    for x in range(1, len(scene.segments)):
        uv = meet(a, scene.segments[x])
        if uv is None or not 0 < uv[0] < 1:
            continue
        v = uv[1]
        if 0 < v < 1 and n >= 3:
            moves.append((*_moved(scene, x, 0 if v < Fraction(1, 2) else 1, v, past=False), x))
        elif not 0 < v < 1 and n <= 3:
            moves.append((*_moved(scene, x, 0 if v <= 0 else 1, v, past=True), x))
    for _, s, _ in sorted(moves, key=lambda m: (m[0], m[2])):
        if broken_rule(s) or not labels_fit(s) or abs(len(crossings(s)) - q1) != 1:
            continue
        lad = ladder(s)
        if lad.failing_margins() or lad.rungs[3].answer.key() == q4.key() or not 2 <= len(along_a(s)) <= 4:
            continue
        return s
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def draw(scene: Scene, canvas: Canvas) -> None:
    if broken_rule(scene) or not labels_fit(scene):
        raise Reject("layout")
    names = letters(scene)
    for k, s in enumerate(scene.segments):
        col = BLACK if scene.level == 3 else COLOURS[k]
        shapes.line(canvas, s[:2], s[2:], Style(stroke=col, width_px=3.0), owner=names[k])
    shapes.circle(canvas, scene.segments[0][:2], DOT_PX, Style(stroke=BLACK, fill=BLACK, width_px=1.0), owner="A")
    for k, c in enumerate(label_boxes(scene)):
        col = BLACK if scene.level == 3 else COLOURS[k]
        draw_text_px(canvas, names[k], c, LABEL.with_(font_px=20.0, text=col))


DOMAIN = Domain(
    id="line_intersection", family="plane", title="Line intersection",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="Lettered straight segments: count the crossings, whether B and C cross, the most-crossed segment, "
                "the segments met along A from its dot, and how many segments D's infinite line would cross.",
    balance_keys=("crossing_count", "b_crosses_c", "most_crossed", "crossed_by_line_d"),
    minimal_pair=minimal_pair, minimal_pair_keeps_q1=False, rephrase_q4=rephrase_q4, rephrase_map="reversal", version=2,
)
