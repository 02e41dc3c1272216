"""Geometry of a town map for `route_puzzles`: road polylines (straight, one of a bowed parallel pair, or a loop),
the angles at which roads leave a junction, clearances, and overpass crossings. Pure functions of plain values:
`points` are junction centres in px, a road is (u, v, side) with u < v (side 0 straight, +1/-1 bowed to the left /
right of u -> v), a loop is (junction, direction in degrees, y down)."""
from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations

import numpy as np

JUNCTION_R_PX = 20.0
ROAD_W_PX = 5.0
BULGE_PX = 18.0            # mid-arc offset of each road of a parallel pair: the pair is 36 px apart at mid-arc
LOOP_REACH_PX = 112.0      # control-point distance of a loop's cubic curve: the loop reaches ~75 px out
LOOP_SPREAD_DEG = 30.0


_T2, _T3 = np.linspace(0.0, 1.0, 17)[:, None], np.linspace(0.0, 1.0, 25)[:, None]
# Bezier weights of the samples, computed once: a curve point is the sum of weight * control point, term by term in
# the order of the textbook formula (the bits of evaluating the formula in full).
_BEZ2 = ((1 - _T2) ** 2, 2 * (1 - _T2) * _T2, _T2 ** 2)
_BEZ3 = ((1 - _T3) ** 3, 3 * (1 - _T3) ** 2 * _T3, 3 * (1 - _T3) * _T3 ** 2, _T3 ** 3)


def _bezier2(p0, c, p1) -> np.ndarray:
    w0, w1, w2 = _BEZ2
    return w0 * p0 + w1 * c + w2 * p1


def _bezier3(p0, c0, c1, p1) -> np.ndarray:
    w0, w1, w2, w3 = _BEZ3
    return w0 * p0 + w1 * c0 + w2 * c1 + w3 * p1


# Polylines and their end angles are cached per (points, road): sampling, the measures, the minimal pair and the
# drawing all ask for the same roads of one layout. `points` must be a tuple; the arrays are read-only.

@lru_cache(maxsize=1024)
def road_polyline(points, road) -> np.ndarray:
    u, v, side = road
    if side == 0:
        out = np.array([points[u], points[v]], float)
    else:
        a, b = np.asarray(points[u], float), np.asarray(points[v], float)
        d = b - a
        nrm = np.array([d[1], -d[0]]) / np.linalg.norm(d)       # left of u -> v on a y-down page
        out = _bezier2(a, (a + b) / 2 + nrm * 2 * BULGE_PX * side, b)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=256)
def loop_polyline(points, loop) -> np.ndarray:
    j, deg = loop
    p = np.asarray(points[j], float)
    c0 = p + LOOP_REACH_PX * np.array([math.cos(math.radians(deg - LOOP_SPREAD_DEG)),
                                       math.sin(math.radians(deg - LOOP_SPREAD_DEG))])
    c1 = p + LOOP_REACH_PX * np.array([math.cos(math.radians(deg + LOOP_SPREAD_DEG)),
                                       math.sin(math.radians(deg + LOOP_SPREAD_DEG))])
    out = _bezier3(p, c0, c1, p)
    out.flags.writeable = False
    return out


def polylines(points, roads, loops) -> list[tuple[tuple[int, ...], np.ndarray, bool]]:
    """(incident junctions, polyline, straight) for every road and loop, roads first: computed once per scene and
    passed to the measures below."""
    out = [((r[0], r[1]), road_polyline(points, r), r[2] == 0) for r in roads]
    return out + [((lp[0],), loop_polyline(points, lp), False) for lp in loops]


def _exit_angle(poly: np.ndarray, centre) -> float:
    """Direction (deg, y down) from the junction centre to where the road crosses the junction circle."""
    cx, cy = centre
    d = np.hypot(poly[:, 0] - cx, poly[:, 1] - cy)
    k = int(np.argmax(d >= JUNCTION_R_PX))
    (ax, ay), (bx, by) = poly[k - 1].tolist(), poly[k].tolist()
    da, db = float(d[k - 1]), float(d[k])
    # the interpolation per coordinate in plain floats: the arithmetic of the vector form
    qx = ax + (bx - ax) * (JUNCTION_R_PX - da) / (db - da) - cx
    qy = ay + (by - ay) * (JUNCTION_R_PX - da) / (db - da) - cy
    return math.degrees(math.atan2(qy, qx)) % 360.0


@lru_cache(maxsize=1024)
def _road_ends_deg(points, road) -> tuple[float, float]:
    """The angles at which road (u, v, side) meets the circles of u and of v."""
    u, v, side = road
    if side == 0:           # a straight road meets the circle along its own direction
        (x0, y0), (x1, y1) = points[u], points[v]
        a = math.degrees(math.atan2(y1 - y0, x1 - x0)) % 360.0
        return a, (a + 180.0) % 360.0
    poly = road_polyline(points, road)
    return _exit_angle(poly, points[u]), _exit_angle(poly[::-1], points[v])


@lru_cache(maxsize=256)
def _loop_ends_deg(points, loop) -> tuple[float, float]:
    poly = loop_polyline(points, loop)
    return _exit_angle(poly, points[loop[0]]), _exit_angle(poly[::-1], points[loop[0]])


def departure_angles(points, roads, loops) -> list[list[float]]:
    """Per junction, the angles at which its road ends meet its circle (a loop has two ends there)."""
    out: list[list[float]] = [[] for _ in points]
    for r in roads:
        a, b = _road_ends_deg(points, r)
        out[r[0]].append(a)
        out[r[1]].append(b)
    for lp in loops:
        out[lp[0]].extend(_loop_ends_deg(points, lp))
    return out


def min_angle_deg(points, roads, loops) -> float:
    """Smallest angle between two road ends at one junction (360 where no junction has two)."""
    best = 360.0
    for angs in departure_angles(points, roads, loops):
        a = sorted(angs)
        for x, y in zip(a, a[1:] + [a[0] + 360.0] if len(a) > 1 else []):
            best = min(best, y - x)
    return float(best)


def min_junction_gap_px(points) -> float:
    pairs = list(combinations(points, 2))
    return float(np.hypot([p[0] - q[0] for p, q in pairs], [p[1] - q[1] for p, q in pairs]).min())


def _segments(polys) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner, start, end) of every segment of the polylines, in order."""
    owner, first = [], []
    start = 0
    for k, (_, p, _) in enumerate(polys):
        owner += [k] * (len(p) - 1)
        first += range(start, start + len(p) - 1)
        start += len(p)
    first = np.array(first)
    v = np.concatenate([p for _, p, _ in polys])
    return np.array(owner), v[first], v[first + 1]


def road_clearance_px(points, polys) -> float:
    """Smallest gap between a road (its stroke) and the circle of a junction it does not serve."""
    if not polys:
        return math.inf
    owner, a0, a1 = _segments(polys)
    p = np.asarray(points, float)
    d = point_segment_xy(p[:, 0, None], p[:, 1, None], a0[:, 0], a0[:, 1], a1[:, 0], a1[:, 1])   # (junctions, segments)
    serves = np.zeros((len(points), len(polys)), bool)
    for k, (ends, _, _) in enumerate(polys):
        serves[list(ends), k] = True
    d = np.where(serves[:, owner], np.inf, d)
    return float(d.min() - JUNCTION_R_PX - ROAD_W_PX / 2)


# The distances below work on x and y arrays apart, with the arithmetic of `grip.geometry.segment_distances`
# (its sum of two products over the last axis is the same sum here; the clip to [0, 1] the same max and min), so
# they give its bits with fewer numpy calls.

def point_segment_xy(px, py, ax, ay, bx, by) -> np.ndarray:
    """Distance from (px, py) to the segment (ax, ay)-(bx, by), element by element (arrays broadcast): the bits of
    `grip.geometry.point_segment_distances`."""
    dx, dy, wx, wy = bx - ax, by - ay, px - ax, py - ay
    u = np.minimum(np.maximum((wx * dx + wy * dy) / np.maximum(dx * dx + dy * dy, 1e-12), 0.0), 1.0)
    return np.hypot(wx - u * dx, wy - u * dy)


def segment_distances_rows(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Distance between segments a0[k]-a1[k] and b0[k]-b1[k] per row k, 0 where they cross: entry (x, y) of
    `grip.geometry.segment_distances(a0, a1, b0, b1)` for the row pairs asked only, with the same bits."""
    return segment_distances_xy(*a0.T, *a1.T, *b0.T, *b1.T)


def segment_distances_xy(px, py, qx, qy, rx, ry, sx, sy) -> np.ndarray:
    """Distance between the segments (px, py)-(qx, qy) and (rx, ry)-(sx, sy), element by element (arrays
    broadcast), 0 where they cross: the bits of `grip.geometry.segment_distances`."""
    def orient(ax, ay, bx, by, cx, cy):
        return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    cross = ((orient(px, py, qx, qy, rx, ry) * orient(px, py, qx, qy, sx, sy) < 0)
             & (orient(rx, ry, sx, sy, px, py) * orient(rx, ry, sx, sy, qx, qy) < 0))
    ends = np.minimum(np.minimum(point_segment_xy(px, py, rx, ry, sx, sy), point_segment_xy(qx, qy, rx, ry, sx, sy)),
                      np.minimum(point_segment_xy(rx, ry, px, py, qx, qy), point_segment_xy(sx, sy, px, py, qx, qy)))
    return np.where(cross, 0.0, ends)


def crossings(polys) -> tuple[list[tuple[int, int, tuple[float, float], float]], float]:
    """Overpasses: (lower road, upper road, crossing point, crossing angle deg) for straight roads that cross with no
    shared junction (the later road passes over). Also the smallest gap between two roads that neither cross nor
    share a junction (inf if none): any touching pair of curves, or a curve crossing anything, gives <= 0."""
    if len(polys) < 2:
        return [], math.inf
    owner, a0, a1 = _segments(polys)
    k = len(polys)
    # Segment distances only between the segments of two roads i < j that share no junction: the only pairs
    # that count.
    ends = [set(e) for e, _, _ in polys]
    apart = np.array([[j > i and not ends[i] & ends[j] for j in range(k)] for i in range(k)], bool)
    x, y = np.nonzero(apart[owner[:, None], owner[None, :]])
    # A straight road is one segment: two straight roads at distance 0 make an overpass; every other pair counts
    # towards the gap (the smallest segment distance less the road width: rounding keeps the order of a min).
    straight = np.array([s for *_, s in polys], bool)
    d = segment_distances_rows(a0[x], a1[x], a0[y], a1[y])
    over = straight[owner[x]] & straight[owner[y]] & (d == 0.0)
    rest = d[~over]
    gap = float(rest.min()) - ROAD_W_PX if len(rest) else math.inf
    out = []
    for i, j in zip(owner[x[over]].tolist(), owner[y[over]].tolist()):      # in the order of (i, j)
        (a, b), (c, e) = polys[i][1], polys[j][1]
        r, s = b - a, e - c
        den = r[0] * s[1] - r[1] * s[0]
        t = ((c[0] - a[0]) * s[1] - (c[1] - a[1]) * s[0]) / den
        p = a + r * t
        cosang = abs(float(np.dot(r, s))) / (np.linalg.norm(r) * np.linalg.norm(s))
        out.append((i, j, (float(p[0]), float(p[1])), math.degrees(math.acos(min(1.0, cosang)))))
    return out, gap


def overpass_clearance_px(points, cross) -> float:
    """Smallest distance from an overpass to a junction circle or to another overpass (inf without overpasses)."""
    best = math.inf
    pts = np.asarray(points, float)
    for k, (_, _, x, _) in enumerate(cross):
        best = min(best, float(np.hypot(*(pts - np.asarray(x)).T).min()) - JUNCTION_R_PX)
        for _, _, y, _ in cross[k + 1:]:
            best = min(best, math.dist(x, y))
    return best


def bow_angle_deg(points, road) -> float:
    """How far each road of a parallel pair leaves the straight line at its ends (the tangent of the bowed
    curve)."""
    return math.degrees(math.atan2(2 * BULGE_PX, math.dist(points[road[0]], points[road[1]]) / 2))


def direction_deg(points, u: int, v: int) -> float:
    (x0, y0), (x1, y1) = points[u], points[v]
    return math.degrees(math.atan2(y1 - y0, x1 - x0)) % 360.0


def angle_apart(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _gaps(points, roads, loops, j: int) -> list[tuple[float, float]]:
    angs = sorted(departure_angles(points, roads, loops)[j])
    return [((angs[(k + 1) % len(angs)] - a) % 360.0 or 360.0, a) for k, a in enumerate(angs)] or [(360.0, 0.0)]


def widest_gap_deg(points, roads, loops, j: int) -> float:
    return max(_gaps(points, roads, loops, j))[0]


def loop_direction(points, roads, loops, j: int) -> float:
    """Middle of the widest gap between the road ends at junction j (deg): where a new loop fits best."""
    width, start = max(_gaps(points, roads, loops, j))
    return float(round((start + width / 2) % 360.0))
