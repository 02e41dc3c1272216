"""Geometry of a town map for `route_puzzles`: road polylines (straight, one of a bowed parallel pair, or a loop),
the angles at which roads leave a junction, clearances, and overpass crossings. Pure functions of plain values:
`points` are junction centres in px, a road is (u, v, side) with u < v (side 0 straight, +1/-1 bowed to the left /
right of u -> v), a loop is (junction, direction in degrees, y down)."""
from __future__ import annotations

import math

import numpy as np

from grip.geometry import point_segment_distances

JUNCTION_R_PX = 20.0
ROAD_W_PX = 5.0
BULGE_PX = 18.0            # mid-arc offset of each road of a parallel pair: the pair is 36 px apart at mid-arc
LOOP_REACH_PX = 112.0      # control-point distance of a loop's cubic curve: the loop reaches ~75 px out
LOOP_SPREAD_DEG = 30.0


def _bezier2(p0, c, p1, k: int = 17) -> np.ndarray:
    t = np.linspace(0.0, 1.0, k)[:, None]
    return (1 - t) ** 2 * np.asarray(p0) + 2 * (1 - t) * t * np.asarray(c) + t ** 2 * np.asarray(p1)


def _bezier3(p0, c0, c1, p1, k: int = 25) -> np.ndarray:
    t = np.linspace(0.0, 1.0, k)[:, None]
    return ((1 - t) ** 3 * np.asarray(p0) + 3 * (1 - t) ** 2 * t * np.asarray(c0)
            + 3 * (1 - t) * t ** 2 * np.asarray(c1) + t ** 3 * np.asarray(p1))


def road_polyline(points, road) -> np.ndarray:
    u, v, side = road
    a, b = np.asarray(points[u], float), np.asarray(points[v], float)
    if side == 0:
        return np.vstack([a, b])
    d = b - a
    nrm = np.array([d[1], -d[0]]) / np.linalg.norm(d)       # left of u -> v on a y-down page
    return _bezier2(a, (a + b) / 2 + nrm * 2 * BULGE_PX * side, b)


def loop_polyline(points, loop) -> np.ndarray:
    j, deg = loop
    p = np.asarray(points[j], float)
    c0 = p + LOOP_REACH_PX * np.array([math.cos(math.radians(deg - LOOP_SPREAD_DEG)),
                                       math.sin(math.radians(deg - LOOP_SPREAD_DEG))])
    c1 = p + LOOP_REACH_PX * np.array([math.cos(math.radians(deg + LOOP_SPREAD_DEG)),
                                       math.sin(math.radians(deg + LOOP_SPREAD_DEG))])
    return _bezier3(p, c0, c1, p)


def polylines(points, roads, loops) -> list[tuple[tuple[int, ...], np.ndarray, bool]]:
    """(incident junctions, polyline, straight) for every road and loop, roads first: computed once per scene and
    passed to the measures below."""
    out = [((r[0], r[1]), road_polyline(points, r), r[2] == 0) for r in roads]
    return out + [((lp[0],), loop_polyline(points, lp), False) for lp in loops]


def _exit_angle(poly: np.ndarray, centre) -> float:
    """Direction (deg, y down) from the junction centre to where the road crosses the junction circle."""
    c = np.asarray(centre, float)
    d = np.hypot(*(poly - c).T)
    k = int(np.argmax(d >= JUNCTION_R_PX))
    a, b, da, db = poly[k - 1], poly[k], d[k - 1], d[k]
    q = a + (b - a) * (JUNCTION_R_PX - da) / (db - da) - c
    return math.degrees(math.atan2(q[1], q[0])) % 360.0


def departure_angles(points, polys) -> list[list[float]]:
    """Per junction, the angles at which its road ends meet its circle (a loop has two ends there)."""
    out: list[list[float]] = [[] for _ in points]
    for ends, poly, straight in polys:
        if straight:        # a straight road meets the circle along its own direction
            (x0, y0), (x1, y1) = poly[0], poly[-1]
            a = math.degrees(math.atan2(y1 - y0, x1 - x0)) % 360.0
            out[ends[0]].append(a)
            out[ends[-1]].append((a + 180.0) % 360.0)
            continue
        out[ends[0]].append(_exit_angle(poly, points[ends[0]]))
        out[ends[-1]].append(_exit_angle(poly[::-1], points[ends[-1]]))
    return out


def min_angle_deg(points, polys) -> float:
    """Smallest angle between two road ends at one junction (360 where no junction has two)."""
    best = 360.0
    for angs in departure_angles(points, polys):
        a = sorted(angs)
        for x, y in zip(a, a[1:] + [a[0] + 360.0] if len(a) > 1 else []):
            best = min(best, y - x)
    return float(best)


def min_junction_gap_px(points) -> float:
    p = np.asarray(points, float)
    d = np.hypot(*(p[:, None, :] - p[None, :, :]).transpose(2, 0, 1))
    return float(d[np.triu_indices(len(p), 1)].min())


def _segments(polys) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    owner = np.concatenate([np.full(len(p) - 1, k) for k, (_, p, _) in enumerate(polys)])
    return owner, np.vstack([p[:-1] for _, p, _ in polys]), np.vstack([p[1:] for _, p, _ in polys])


def road_clearance_px(points, polys) -> float:
    """Smallest gap between a road (its stroke) and the circle of a junction it does not serve."""
    if not polys:
        return math.inf
    owner, a0, a1 = _segments(polys)
    d = point_segment_distances(np.asarray(points, float), np.hstack([a0, a1]))     # (junctions, segments)
    serves = np.zeros((len(points), len(polys)), bool)
    for k, (ends, _, _) in enumerate(polys):
        serves[list(ends), k] = True
    d = np.where(serves[:, owner], np.inf, d)
    return float(d.min() - JUNCTION_R_PX - ROAD_W_PX / 2)


def _point_segment_rows(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from p[k] to the segment a[k]-b[k] per row: the arithmetic of `grip.geometry.segment_distances`."""
    d = b - a
    w = p - a
    u = np.clip((w * d).sum(-1) / np.maximum((d * d).sum(-1), 1e-12), 0.0, 1.0)
    r = w - u[..., None] * d
    return np.hypot(r[..., 0], r[..., 1])


def segment_distances_rows(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Distance between segments a0[k]-a1[k] and b0[k]-b1[k] per row k, 0 where they cross: entry (x, y) of
    `grip.geometry.segment_distances(a0, a1, b0, b1)` for the row pairs asked only, with the same bits."""
    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])
    cross = (orient(a0, a1, b0) * orient(a0, a1, b1) < 0) & (orient(b0, b1, a0) * orient(b0, b1, a1) < 0)
    ends = np.minimum.reduce([_point_segment_rows(a0, b0, b1), _point_segment_rows(a1, b0, b1),
                              _point_segment_rows(b0, a0, a1), _point_segment_rows(b1, a0, a1)])
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
    # read below.
    apart = np.zeros((k, k), bool)
    for i in range(k):
        for j in range(i + 1, k):
            apart[i, j] = not set(polys[i][0]) & set(polys[j][0])
    x, y = np.nonzero(apart[owner[:, None], owner[None, :]])
    best = np.full((k, k), np.inf)
    np.minimum.at(best, (owner[x], owner[y]), segment_distances_rows(a0[x], a1[x], a0[y], a1[y]))
    out, gap = [], math.inf
    for i in range(k):
        ei, pi, si = polys[i]
        for j in range(i + 1, k):
            ej, pj, sj = polys[j]
            if not apart[i, j]:
                continue
            if best[i, j] == 0.0 and si and sj:
                (a, b), (c, e) = pi, pj
                r, s = b - a, e - c
                den = r[0] * s[1] - r[1] * s[0]
                t = ((c[0] - a[0]) * s[1] - (c[1] - a[1]) * s[0]) / den
                x = a + r * t
                cosang = abs(float(np.dot(r, s))) / (np.linalg.norm(r) * np.linalg.norm(s))
                out.append((i, j, (float(x[0]), float(x[1])), math.degrees(math.acos(min(1.0, cosang)))))
            else:
                gap = min(gap, float(best[i, j]) - ROAD_W_PX)
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
    angs = sorted(departure_angles(points, polylines(points, roads, loops))[j])
    return [((angs[(k + 1) % len(angs)] - a) % 360.0 or 360.0, a) for k, a in enumerate(angs)] or [(360.0, 0.0)]


def widest_gap_deg(points, roads, loops, j: int) -> float:
    return max(_gaps(points, roads, loops, j))[0]


def loop_direction(points, roads, loops, j: int) -> float:
    """Middle of the widest gap between the road ends at junction j (deg): where a new loop fits best."""
    width, start = max(_gaps(points, roads, loops, j))
    return float(round((start + width / 2) % 360.0))
