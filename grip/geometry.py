"""Geometry shared by the nested-figure domains (nested squares, triangles, hexagons).

A nested figure is built by one rule: inside a polygon V_1..V_m (vertices in drawing order), the next polygon has
vertices P_j = (1 - t) V_j + t V_{j+1} (indices mod m), a fraction t of the way along each side. Every function here
is pure and works on floats or on `fractions.Fraction`s alike, so answers can be kept exact while drawing uses
floats. For a regular m-gon the rule scales the side by sqrt(a(t)) and turns the polygon by `regular_turn_deg`
toward V_{j+1} (counter-clockwise on the page when the vertices run counter-clockwise on the page).

Exact turn tests for hexagons use Eisenstein integers x + y*w, w = exp(i*pi/3), w^2 = w - 1: a fraction t = k/n
gives n * ((1 - t) + t*w) = (n - k) + k*w, and a product of such numbers has the summed turn. Never compare a float
sum of angles with 0 or 30 degrees; decide those ties with `eisenstein_turn_class`.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from itertools import chain
from typing import Sequence

import numpy as np

Point = tuple  # (x, y), floats or Fractions

# cos of the exterior angle 360/m of a regular m-gon, exact for the polygons the domains use
_COS_EXTERIOR = {3: Fraction(-1, 2), 4: Fraction(0), 6: Fraction(1, 2)}


def inscribed(vertices: Sequence[Point], t) -> tuple[Point, ...]:
    """The polygon P_j = (1 - t) V_j + t V_{j+1}, j = 1..m (indices mod m), same vertex order as `vertices`."""
    m = len(vertices)
    return tuple(((1 - t) * vertices[j][0] + t * vertices[(j + 1) % m][0],
                  (1 - t) * vertices[j][1] + t * vertices[(j + 1) % m][1]) for j in range(m))


def nest(vertices: Sequence[Point], ts: Sequence) -> list[tuple[Point, ...]]:
    """[outer, first inscribed, ...]: len(ts) + 1 polygons, the i-th inscribed at fraction ts[i] of its parent."""
    out = [tuple(tuple(v) for v in vertices)]
    for t in ts:
        out.append(inscribed(out[-1], t))
    return out


def area(vertices: Sequence[Point]):
    """Unsigned shoelace area (exact for Fraction coordinates)."""
    m = len(vertices)
    s = sum(vertices[j][0] * vertices[(j + 1) % m][1] - vertices[(j + 1) % m][0] * vertices[j][1] for j in range(m))
    return abs(s) / 2


def regular_polygon(center: Point, radius: float, m: int, start_deg: float) -> tuple[Point, ...]:
    """Regular m-gon, vertices counter-clockwise on the page (y down) from angle `start_deg` (0 = +x, 90 = up)."""
    return tuple((center[0] + radius * math.cos(math.radians(start_deg + 360.0 * j / m)),
                  center[1] - radius * math.sin(math.radians(start_deg + 360.0 * j / m))) for j in range(m))


def regular_ratio_sq(m: int, t) -> Fraction:
    """Area ratio a(t) = (inner side / outer side)^2 of a regular m-gon (m = 3, 4, 6) under `inscribed`:
    |(1 - t) + t e^{2 pi i/m}|^2 = 1 - 2 t (1 - t) (1 - cos(2 pi/m)). Squares: t^2 + (1-t)^2; hexagons: 1 - t + t^2."""
    t = Fraction(t)
    return 1 - 2 * t * (1 - t) * (1 - _COS_EXTERIOR[m])


def regular_turn_deg(m: int, t) -> float:
    """Turn of the inscribed regular m-gon relative to its parent, degrees toward V_{j+1}: arg((1-t) + t e^{2pi i/m})."""
    t, a = float(t), 2 * math.pi / m
    return math.degrees(math.atan2(t * math.sin(a), 1 - t + t * math.cos(a)))


def triangle_inradius(p: Point, q: Point, r: Point) -> float:
    """Inradius 2 * area / perimeter of a triangle (floats)."""
    per = math.dist(p, q) + math.dist(q, r) + math.dist(r, p)
    if not per:
        return 0.0
    (px, py), (qx, qy), (rx, ry) = p, q, r
    # `area`((p, q, r)), its shoelace sum written out term by term in the same order
    return 2 * float(abs(0 + (px * qy - qx * py) + (qx * ry - rx * qy) + (rx * py - px * ry)) / 2) / per


def corner_triangles(outer: Sequence[Point], inner: Sequence[Point]) -> list[tuple[Point, Point, Point]]:
    """The triangles between a polygon and the one inscribed in it: (P_{j-1}, V_j, P_j) for each vertex V_j."""
    m = len(outer)
    return [(inner[j - 1], outer[j], inner[j]) for j in range(m)]


# --- Eisenstein integers (hexagon turns) --------------------------------------------------------------------------

def eisenstein(t: Fraction) -> tuple[int, int]:
    """n * ((1 - t) + t w) = (n - k) + k w for t = k/n in lowest terms (same argument as (1 - t) + t w)."""
    t = Fraction(t)
    return (t.denominator - t.numerator, t.numerator)


def eisenstein_mul(x: tuple[int, int], y: tuple[int, int]) -> tuple[int, int]:
    """(a + b w)(c + d w) with w^2 = w - 1."""
    a, b = x
    c, d = y
    return (a * c - b * d, a * d + b * c + b * d)


def eisenstein_product(ts: Sequence) -> tuple[int, int]:
    z = (1, 0)
    for t in ts:
        z = eisenstein_mul(z, eisenstein(t))
    return z


def eisenstein_turn_class(z: tuple[int, int]) -> str:
    """Exact class of arg(z) modulo 60 degrees: "0" (a real multiple of a sixth root of unity: a*b*(a+b) = 0),
    "30" (a real multiple of 1 + w and its sixth-root turns: (a-b)(2a+b)(a+2b) = 0) or "other"."""
    a, b = z
    if a * b * (a + b) == 0:
        return "0"
    if (a - b) * (2 * a + b) * (a + 2 * b) == 0:
        return "30"
    return "other"


# --- legibility: clearances between outlines and tick marks (px) -------------------------------------------------

def tick_marks(polygon: Sequence[Point], n: int, length: float) -> list[tuple[Point, Point, float]]:
    """Tick marks dividing every side of `polygon` into n equal parts: (end, end, fraction k/n along the side)
    for k = 1..n-1, each `length` long, perpendicular to its side and centred on it (floats)."""
    m, out = len(polygon), []
    for j in range(m):
        (ax, ay), (bx, by) = polygon[j], polygon[(j + 1) % m]
        ln = math.hypot(bx - ax, by - ay)
        nx, ny = -(by - ay) / ln * length / 2, (bx - ax) / ln * length / 2
        for k in range(1, n):
            x, y = ax + (bx - ax) * k / n, ay + (by - ay) * k / n
            out.append(((x - nx, y - ny), (x + nx, y + ny), k / n))
    return out


def outline_gap(outer: Sequence[Point], inner: Sequence[Point]) -> float:
    """Smallest distance between the outlines of two convex polygons, `inner` inside `outer` (floats). Inside a
    convex set the distance to its boundary is concave, so the minimum over the inner outline is at a vertex."""
    return float(min(_point_segment(np.asarray(inner, float), np.asarray(outer, float),
                                    np.roll(np.asarray(outer, float), -1, axis=0)).min(axis=1)))


def outline_clearance(polygons: Sequence[Sequence[Point]]) -> float:
    """min(`outline_gap`(polygons[i], polygons[j]) for every j >= i + 2), each polygon inside the one before it,
    measured in one pass (the same values); inf when there is no such pair."""
    if len(polygons) < 3:
        return math.inf
    verts = _stacked(polygons)
    vi, e0i, e1i = _nonadjacent_pairs(tuple(map(len, polygons)))
    return float(_point_segment_each(verts[vi], verts[e0i], verts[e1i]).min())


def _stacked(polygons: Sequence[Sequence[Point]]) -> np.ndarray:
    """The vertices of all polygons, one after the other: a (k, 2) float array."""
    return np.array(list(chain.from_iterable(chain.from_iterable(polygons))), float).reshape(-1, 2)


@lru_cache(maxsize=256)
def _sides(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """For polygons of these vertex counts, `_stacked`: the row of the vertex after each one in its own polygon
    (side r runs from vertex r to vertex nxt[r]) and the index of each vertex's polygon."""
    nxt, owner, start = [], [], 0
    for i, m in enumerate(sizes):
        nxt += [*range(start + 1, start + m), start]
        owner += [i] * m
        start += m
    return _frozen(nxt), _frozen(owner)


@lru_cache(maxsize=256)
def _nonadjacent_pairs(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For `outline_clearance`: (vertex, side start, side end) rows of `_stacked` for every vertex of a polygon j
    against every side of a polygon i <= j - 2, vertices in order, then sides in order."""
    nxt, owner = _sides(sizes)
    vi, ei = np.nonzero(owner[:, None] >= owner[None, :] + 2)
    return _frozen(vi), _frozen(ei), _frozen(nxt[ei])


def _frozen(values, dtype=np.intp) -> np.ndarray:
    """A read-only array (cached arrays are shared between calls)."""
    a = np.array(values, dtype=dtype)
    a.flags.writeable = False
    return a


def _point_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances from points p (k, 2) to segments a-b (s, 2 each): a (k, s) array."""
    return _point_segment_each(p[:, None, :], a[None, :, :], b[None, :, :])


def _point_segment_each(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from each point p to the segment a-b, arrays (..., 2) broadcast against each other: the same
    arithmetic, element by element, as `_point_segment` (so the same bits for the same point and segment)."""
    d = b - a
    w = p - a
    u = np.clip((w * d).sum(-1) / np.maximum((d * d).sum(-1), 1e-12), 0.0, 1.0)
    r = w - u[..., None] * d
    return np.hypot(r[..., 0], r[..., 1])


def fitted_ticks(polygons: Sequence[Sequence[Point]], divisions: Sequence[int], ticked: Sequence[int],
                 contacts: Sequence, length: float, clear: float, step: float = 0.5) -> list[tuple[Point, Point, int]]:
    """Tick marks on the sides of polygons[i] (i in `ticked`, dividing each side into divisions[i] parts), each
    half (inward, outward) as long as `length` / 2 allows while every point of it stays `clear` px from every other
    polygon's outline: (end, end, i). A tick's base on its own side is a half of length 0, so a tick whose base
    lies within `clear` of another outline comes back with length 0. The tick at the fraction contacts[i] marks
    where polygon i+1's corners lie and touches that outline by construction: it is fitted against the others.
    Float coordinates."""
    sizes = tuple(map(len, polygons))
    e0 = _stacked(polygons)
    nxt, edge_owner = _sides(sizes)
    base, normal, owner, skip = _tick_frames(e0, sizes, divisions, ticked, contacts, length)
    if not len(base):
        return []
    e1 = e0[nxt]
    # A foreign side farther than length / 2 + clear from a tick's base cannot come within `clear` of any point
    # of that tick: a tick with no nearer side keeps both halves whole, and only the near (tick, side) pairs are
    # measured point by point. Those are found among the pairs whose base lies in the side's bounding box widened
    # by that distance (and 1 px more, for rounding).
    reach = length / 2 + clear + 1.0
    lo, hi = np.minimum(e0, e1) - (reach + 1.0), np.maximum(e0, e1) + (reach + 1.0)
    bx, by = base[:, None, 0], base[:, None, 1]
    maybe = ((bx >= lo[:, 0]) & (bx <= hi[:, 0]) & (by >= lo[:, 1]) & (by <= hi[:, 1])
             & (edge_owner != owner[:, None]) & (edge_owner != skip[:, None]))
    pair_tick, pair_edge = np.nonzero(maybe)                       # pair_tick ascending: grouped by tick
    near = _point_segment_each(base[pair_tick], e0[pair_edge], e1[pair_edge]) < reach
    pair_tick, pair_edge = pair_tick[near], pair_edge[near]
    hs = np.arange(0.0, length / 2 + 1e-9, step)
    half = np.full((2, len(base)), hs[-1])                         # the halves along +normal and -normal
    if len(pair_tick):
        steps = np.stack([hs, -1.0 * hs])
        pts = base[pair_tick, None, :] + steps[:, None, :, None] * normal[pair_tick, None, :]   # (2, pairs, hs, 2)
        d = _point_segment_each(pts, e0[pair_edge, None, :], e1[pair_edge, None, :])           # (2, pairs, hs)
        first = np.flatnonzero(np.diff(pair_tick, prepend=-1))   # each near tick's first pair
        bad = np.logical_or.reduceat(d < clear, first, axis=1)   # (2, near ticks, hs)
        first_bad = np.where(bad.any(axis=2), bad.argmax(axis=2), len(hs))
        half[:, pair_tick[first]] = np.where(first_bad > 0, hs[np.maximum(first_bad - 1, 0)], -1.0)
    hi, lo = half
    gone = (hi < 0) | (lo < 0)               # the base itself is too close to another outline
    hi, lo = np.where(gone, 0.0, hi)[:, None], np.where(gone, 0.0, lo)[:, None]
    (x0, y0), (x1, y1) = (base - lo * normal).T.tolist(), (base + hi * normal).T.tolist()
    return list(zip(zip(x0, y0), zip(x1, y1), owner.tolist()))


def _tick_frames(verts: np.ndarray, sizes: tuple[int, ...], divisions: Sequence[int], ticked: Sequence[int],
                 contacts: Sequence, length: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For `fitted_ticks` (the polygons' vertices `_stacked`, their vertex counts `sizes`): every tick's base point
    and unit normal (k, 2 each), its polygon index and the index of the polygon it touches by construction (-1 for
    none), in the order and with the same float arithmetic as `tick_marks` (each tick's base is the midpoint of its
    ends, its normal their difference over `length`)."""
    ticked = tuple(ticked)
    plan = _tick_plan(sizes, ticked, tuple(divisions[i] for i in ticked))
    if plan is None:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int), np.zeros(0, int)
    rows, ends, rep, kn, nn, frac, owner, slot = plan
    a = verts[rows]
    d = verts[ends] - a
    ln = list(map(math.hypot, *d.T.tolist()))
    if 0.0 in ln:
        raise ZeroDivisionError("float division by zero")            # a side of length 0, as `tick_marks` raises
    offset = np.stack([-d[:, 1], d[:, 0]], axis=1) / np.array(ln)[:, None] * length / 2   # per side
    at = a[rep] + d[rep] * kn / nn
    off = offset[rep]
    p, q = at - off, at + off
    c = np.array([float(contacts[i]) for i in ticked])[slot]
    skip = np.where(np.abs(frac - c) < 1e-9, owner + 1, -1)
    return (p + q) / 2, (q - p) / length, owner, skip


@lru_cache(maxsize=1024)
def _tick_plan(sizes: tuple[int, ...], ticked: tuple[int, ...], divisions: tuple[int, ...]) -> tuple | None:
    """What `_tick_frames` needs beyond the coordinates, for the ticked polygons (vertex counts `sizes`, divisions
    n per ticked polygon): the `_stacked` rows of each ticked side's two ends; per tick its side, k and n as (t, 1)
    float columns, k / n, its polygon and that polygon's place in `ticked`. None when there is no tick."""
    starts = [0]
    for m in sizes:
        starts.append(starts[-1] + m)
    nxt, _ = _sides(sizes)
    rows, rep, kn, nn, owner, slot = [], [], [], [], [], []
    for s, (i, n) in enumerate(zip(ticked, divisions)):
        for r in range(starts[i], starts[i + 1]):
            rep += [len(rows)] * (n - 1)
            rows.append(r)
            kn += range(1, n)
            nn += [n] * (n - 1)
        owner += [i] * (sizes[i] * (n - 1))
        slot += [s] * (sizes[i] * (n - 1))
    if not rep:
        return None
    kn, nn = np.array(kn, float), np.array(nn, float)
    return (_frozen(rows), _frozen(nxt[rows]), _frozen(rep), _frozen(kn[:, None], float), _frozen(nn[:, None], float),
            _frozen(kn / nn, float), _frozen(owner), _frozen(slot))


def tick_stats(ticks: Sequence[tuple[Point, Point, int]]) -> tuple[float, float]:
    """(shortest tick length, smallest distance between ticks of different polygons) of `fitted_ticks`' output,
    px; (inf, inf) when there are no ticks."""
    if not ticks:
        return math.inf, math.inf
    p, q, owner = zip(*ticks)
    a0 = np.array(list(chain.from_iterable(p)), float).reshape(-1, 2)
    a1 = np.array(list(chain.from_iterable(q)), float).reshape(-1, 2)
    ln = np.hypot(*(a1 - a0).T)
    shortest = float(ln.min())
    if len(set(owner)) < 2:
        return shortest, math.inf
    # Only pairs that can be the nearest are measured exactly: a pair's distance lies between its midpoints'
    # distance less both half-lengths and its midpoints' distance, so a pair whose midpoints lie farther apart than
    # the smallest midpoint distance over all pairs plus the two longest half-lengths cannot be the minimum (squared
    # distances; 1e-3 px covers rounding). Each pair of ticks is taken once, the one of the smaller polygon index
    # first (the distance is symmetric, bit for bit).
    owner = np.array(owner)
    mx, my = ((a0 + a1) / 2).T
    d2 = np.subtract.outer(mx, mx)
    d2 *= d2
    dy = np.subtract.outer(my, my)
    d2 += dy * dy
    d2[owner[:, None] >= owner[None, :]] = np.inf
    reach = math.sqrt(d2.min()) + float(ln.max()) + 1e-3
    i, j = np.nonzero(d2 <= reach * reach)
    return shortest, _min_segment_distance(a0[i], a1[i], a0[j], a1[j])


def segment_distances(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Distances between segments a0-a1 (k, 2) and b0-b1 (s, 2): a (k, s) array, 0 where they cross."""
    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])
    p, q = a0[:, None, :], a1[:, None, :]
    r, s = b0[None, :, :], b1[None, :, :]
    cross = ((orient(p, q, r) * orient(p, q, s) < 0) & (orient(r, s, p) * orient(r, s, q) < 0))
    ends = np.minimum.reduce([_point_segment(a0, b0, b1), _point_segment(a1, b0, b1),
                              _point_segment(b0, a0, a1).T, _point_segment(b1, a0, a1).T])
    return np.where(cross, 0.0, ends)


def _min_segment_distance(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> float:
    """The smallest distance between segments a0[k]-a1[k] and b0[k]-b1[k] over the rows k (arrays (k, 2)): 0 when
    a pair crosses, else the smallest distance from an end to the other segment, each computed as
    `segment_distances` does (the four ends of every pair in one call)."""
    ends = np.concatenate([a0, a1, b0, b1])
    s0, s1 = np.concatenate([b0, b0, a0, a0]), np.concatenate([b1, b1, a1, a1])
    # orient(s0, s1, end): the turn of each end about the other segment, as in `segment_distances`
    o = ((s1[:, 0] - s0[:, 0]) * (ends[:, 1] - s0[:, 1]) - (s1[:, 1] - s0[:, 1]) * (ends[:, 0] - s0[:, 0]))
    o = o.reshape(4, -1)
    if ((o[2] * o[3] < 0) & (o[0] * o[1] < 0)).any():
        return 0.0
    return float(_point_segment_each(ends, s0, s1).min())


# --- straight segments, rows (x0, y0, x1, y1) ---------------------------------------------------------------------

def segment_meet(a: Sequence, b: Sequence) -> tuple | None:
    """Where the lines through segments a and b meet: a0 + u (a1 - a0) = b0 + v (b1 - b0) with u = nu / den and
    v = nv / den. Returns (nu, nv, den) with den > 0, exact integers for integer ends; None for parallel lines. The
    segments cross (interiors only, touching excluded) iff 0 < nu < den and 0 < nv < den."""
    rx, ry, sx, sy = a[2] - a[0], a[3] - a[1], b[2] - b[0], b[3] - b[1]
    den = rx * sy - ry * sx
    if den == 0:
        return None
    qx, qy = b[0] - a[0], b[1] - a[1]
    nu, nv = qx * sy - qy * sx, qx * ry - qy * rx
    return (nu, nv, den) if den > 0 else (-nu, -nv, -den)


def segment_meets(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`segment_meet` for every row of a (n, 4) against every row of b (m, 4): arrays nu, nv, den (n, m), den >= 0
    (0 for parallel lines). For integer-valued coordinates below 2**24 in size every product is an exact float, so
    the crossing test 0 < nu < den, 0 < nv < den is exact."""
    a, b = np.asarray(a, float).reshape(-1, 4), np.asarray(b, float).reshape(-1, 4)
    rx, ry = (a[:, 2] - a[:, 0])[:, None], (a[:, 3] - a[:, 1])[:, None]
    sx, sy = (b[:, 2] - b[:, 0])[None], (b[:, 3] - b[:, 1])[None]
    qx, qy = b[None, :, 0] - a[:, 0, None], b[None, :, 1] - a[:, 1, None]
    den = rx * sy - ry * sx
    sign = np.where(den < 0, -1.0, 1.0)
    return (qx * sy - qy * sx) * sign, (qx * ry - qy * rx) * sign, den * sign


def line_offsets(lines: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Signed distances (n, m) from points (m, 2) to the infinite lines through the rows (x0, y0, x1, y1) of
    `lines` (n, 4), with the sign of (x1 - x0)(y - y0) - (y1 - y0)(x - x0): exact (and 0 exactly on the line) for
    integer-valued coordinates."""
    s, p = np.asarray(lines, float).reshape(-1, 4), np.asarray(points, float).reshape(-1, 2)
    rx, ry = (s[:, 2] - s[:, 0])[:, None], (s[:, 3] - s[:, 1])[:, None]
    c = rx * (p[None, :, 1] - s[:, 1, None]) - ry * (p[None, :, 0] - s[:, 0, None])
    return c / np.hypot(rx, ry)


def point_segment_distances(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Distances (m, n) from points (m, 2) to the segments, rows (x0, y0, x1, y1) of `segments` (n, 4)."""
    s = np.asarray(segments, float).reshape(-1, 4)
    return _point_segment(np.asarray(points, float).reshape(-1, 2), s[:, :2], s[:, 2:])


# --- Transformations of point sets and polygons (transformational family) ---
# Lines are written a x + b y = c. Affine maps are 3 x 3 matrices acting on columns (x, y, 1). Every function keeps
# exact values for integer and half-integer input whenever the map's entries are exact (reflections across
# axis-parallel and 45-degree lines, quarter turns).

def reflection_matrix(a: float, b: float, c: float) -> np.ndarray:
    """Affine matrix of the reflection across the line a x + b y = c: p -> p - 2 (a.p - c) / (a^2 + b^2) (a, b)."""
    n2 = a * a + b * b
    if n2 == 0:
        raise ValueError("reflection_matrix: the line's normal (a, b) is zero")
    return np.array([[1 - 2 * a * a / n2, -2 * a * b / n2, 2 * a * c / n2],
                     [-2 * a * b / n2, 1 - 2 * b * b / n2, 2 * b * c / n2],
                     [0.0, 0.0, 1.0]])


def rotation_matrix(angle_deg: float, center: Point = (0.0, 0.0), clockwise_on_page: bool = True) -> np.ndarray:
    """Affine matrix of a turn by `angle_deg` about `center`. With `clockwise_on_page` the turn is clockwise as seen
    on a y-down page (the matrix of a counter-clockwise turn in y-up coordinates). Quarter turns are exact."""
    k = angle_deg / 90.0
    if k == int(k):
        cs, sn = ((1, 0), (0, 1), (-1, 0), (0, -1))[int(k) % 4]
    else:
        cs, sn = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    if not clockwise_on_page:
        sn = -sn
    cx, cy = center
    # y down: a clockwise turn on the page sends +x toward +y, i.e. (x, y) -> (x cos - y sin, x sin + y cos).
    return np.array([[cs, -sn, cx - cs * cx + sn * cy],
                     [sn, cs, cy - sn * cx - cs * cy],
                     [0.0, 0.0, 1.0]], float)


def apply_affine(m: np.ndarray, pts) -> np.ndarray:
    """Points (k, 2) mapped by the 3 x 3 affine matrix `m`."""
    p = np.asarray(pts, float).reshape(-1, 2)
    return p @ np.asarray(m, float)[:2, :2].T + np.asarray(m, float)[:2, 2]


def reflect_points(pts, a: float, b: float, c: float) -> np.ndarray:
    """Points (k, 2) reflected across the line a x + b y = c."""
    return apply_affine(reflection_matrix(a, b, c), pts)


def rotate_points(pts, angle_deg: float, center: Point = (0.0, 0.0), clockwise_on_page: bool = True) -> np.ndarray:
    """Points (k, 2) turned by `angle_deg` about `center` (clockwise on a y-down page by default)."""
    return apply_affine(rotation_matrix(angle_deg, center, clockwise_on_page), pts)


def line_side(pts, a: float, b: float, c: float) -> np.ndarray:
    """Sign (-1, 0, +1) of a x + b y - c for each point (k, 2)."""
    p = np.asarray(pts, float).reshape(-1, 2)
    return np.sign(a * p[:, 0] + b * p[:, 1] - c).astype(int)


def line_distances(pts, a: float, b: float, c: float) -> np.ndarray:
    """Unsigned distances from points (k, 2) to the line a x + b y = c."""
    p = np.asarray(pts, float).reshape(-1, 2)
    return np.abs(a * p[:, 0] + b * p[:, 1] - c) / math.hypot(a, b)


def clip_convex(vertices: Sequence[Point], a, b, c, side: int) -> list[Point]:
    """The convex polygon `vertices` clipped to the closed half-plane where the sign of a x + b y - c is `side` (+1 or
    -1), by Sutherland-Hodgman: exact for Fraction input, and for floats whose products are exact."""
    out: list[Point] = []
    m = len(vertices)
    f = [side * (a * v[0] + b * v[1] - c) for v in vertices]
    for j in range(m):
        p, q, fp, fq = vertices[j], vertices[(j + 1) % m], f[j], f[(j + 1) % m]
        if fp >= 0:
            out.append(tuple(p))
        if (fp > 0 and fq < 0) or (fp < 0 and fq > 0):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def half_plane(a: float, b: float, c: float, side: int, bounds: Sequence[float]):
    """The part of the box `bounds` = (x0, y0, x1, y1) where the sign of a x + b y - c is `side` (+1 or -1), as a
    shapely polygon (closed half-plane clipped to the box; empty when they do not meet)."""
    from shapely.geometry import Polygon as _Polygon
    x0, y0, x1, y1 = bounds
    pts = clip_convex([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], a, b, c, side)
    return _Polygon(pts) if len(pts) >= 3 else _Polygon()


def split_by_line(geom, a: float, b: float, c: float):
    """(part on the - side, part on the + side) of a shapely geometry cut by the line a x + b y = c (either may be
    empty)."""
    bounds = geom.bounds
    return (geom.intersection(half_plane(a, b, c, -1, bounds)), geom.intersection(half_plane(a, b, c, 1, bounds)))


def transform_geometry(geom, m: np.ndarray):
    """A shapely geometry mapped by the 3 x 3 affine matrix `m`."""
    from shapely.affinity import affine_transform
    m = np.asarray(m, float)
    return affine_transform(geom, [m[0, 0], m[0, 1], m[1, 0], m[1, 1], m[0, 2], m[1, 2]])


def polygon_parts(geom) -> list:
    """The polygons of a shapely geometry with positive area (a Polygon, MultiPolygon or collection), in order."""
    if geom.is_empty:
        return []
    if geom.geom_type == "Polygon":
        return [geom] if geom.area > 0 else []
    return [g for part in getattr(geom, "geoms", []) for g in polygon_parts(part)]


def boundary_segments(geoms) -> np.ndarray:
    """Rows (x0, y0, x1, y1) of every edge of the exteriors and interiors of the given shapely polygons."""
    rows = []
    for g in geoms:
        for poly in polygon_parts(g):
            for ring in (poly.exterior, *poly.interiors):
                xy = np.asarray(ring.coords, float)
                rows.append(np.hstack([xy[:-1], xy[1:]]))
    return np.vstack(rows) if rows else np.zeros((0, 4))


# Integer lattice point sets (cells, lattice points, unit edges) under the symmetries of the square. A cell (x, y)
# is the unit square [x, x + 1] x [y, y + 1] on a y-down page. Names: "r90" etc. are clockwise turns on the page,
# "flip_x" the left-right mirror (x -> -x), "flip_y" top-bottom, "diag" x <-> y (the top-left to bottom-right
# diagonal), "anti" (x, y) -> (-y, -x).
D4_OPS: dict[str, tuple[int, int, int, int]] = {   # (a, b, c, d): (x, y) -> (a x + b y, c x + d y)
    "id": (1, 0, 0, 1), "r90": (0, -1, 1, 0), "r180": (-1, 0, 0, -1), "r270": (0, 1, -1, 0),
    "flip_x": (-1, 0, 0, 1), "flip_y": (1, 0, 0, -1), "diag": (0, 1, 1, 0), "anti": (0, -1, -1, 0),
}
ROTATION_OPS = ("id", "r90", "r180", "r270")


def lattice_apply(op: str, pts) -> tuple[tuple[int, int], ...]:
    """Integer points mapped by one of `D4_OPS` about the origin (exact)."""
    a, b, c, d = D4_OPS[op]
    return tuple((a * x + b * y, c * x + d * y) for x, y in pts)


def cells_apply(op: str, cells) -> tuple[tuple[int, int], ...]:
    """Unit cells (x, y) mapped by one of `D4_OPS`: each cell's square is mapped and named by its new top-left
    corner, so that the result is again a set of cells (then normalised)."""
    a, b, c, d = D4_OPS[op]
    # The image square's top-left corner: the linear map of (x, y) plus the negative entries (the unit offsets that
    # move toward smaller coordinates).
    ox, oy = min(a, 0) + min(b, 0), min(c, 0) + min(d, 0)
    return normalise_lattice([(a * x + b * y + ox, c * x + d * y + oy) for x, y in cells])


def normalise_lattice(pts) -> tuple[tuple[int, int], ...]:
    """The point set translated so that its smallest x and smallest y are 0, sorted: equal for translates."""
    pts = [(int(x), int(y)) for x, y in pts]
    if not pts:
        return ()
    x0, y0 = min(x for x, _ in pts), min(y for _, y in pts)
    return tuple(sorted({(x - x0, y - y0) for x, y in pts}))


def cell_images(cells, ops=tuple(D4_OPS)) -> dict[str, tuple[tuple[int, int], ...]]:
    """The normalised images of a cell set under each named operation (all eight by default)."""
    return {op: cells_apply(op, cells) for op in ops}


def max_translation_overlap(a, b) -> int:
    """max over integer translations t of |a ∩ (b + t)| for two finite integer point sets."""
    # For sets without repeats, |a ∩ (b + t)| is the number of pairs (p, q) with p - q = t.
    from collections import Counter
    diffs = Counter((p[0] - q[0], p[1] - q[1]) for p in set(map(tuple, a)) for q in set(map(tuple, b)))
    return max(diffs.values(), default=0)


def cells_polygon(cells):
    """The union of the unit squares of `cells` as one shapely geometry (exact integer corners). The squares are
    `shapely.geometry.box(x, y, x + 1, y + 1)`, corner for corner, made in one vectorised call."""
    import shapely
    xy = np.array([(x, y) for x, y in cells], dtype=float).reshape(-1, 2)
    x, y = xy[:, 0], xy[:, 1]
    return shapely.union_all(shapely.box(x, y, x + 1, y + 1))


def grid_permutation(n: int, op: str) -> tuple[int, ...]:
    """The cells of an n x n grid (index row * n + col, row 0 at the top) permuted by one of `D4_OPS` about the grid's
    centre: entry i is the index of the image of cell i. "flip_x" is the mirror in the vertical centre line, "diag"
    the one in the top-left to bottom-right diagonal, "r90" a clockwise quarter turn."""
    m = n - 1
    out = []
    for r in range(n):
        for c in range(n):
            (x, y), = lattice_apply(op, [(2 * c - m, 2 * r - m)])   # doubled coordinates about the centre
            out.append(((y + m) // 2) * n + (x + m) // 2)
    return tuple(out)
