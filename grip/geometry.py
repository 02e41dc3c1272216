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
    return 2 * float(area((p, q, r))) / per if per else 0.0


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


def _point_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distances from points p (k, 2) to segments a-b (s, 2 each): a (k, s) array."""
    d = b - a
    w = p[:, None, :] - a[None, :, :]
    u = np.clip((w * d).sum(-1) / np.maximum((d * d).sum(-1), 1e-12), 0.0, 1.0)
    return np.hypot(*(w - u[..., None] * d).transpose(2, 0, 1))


def fitted_ticks(polygons: Sequence[Sequence[Point]], divisions: Sequence[int], ticked: Sequence[int],
                 contacts: Sequence, length: float, clear: float, step: float = 0.5) -> list[tuple[Point, Point, int]]:
    """Tick marks on the sides of polygons[i] (i in `ticked`, dividing each side into divisions[i] parts), each
    half (inward, outward) as long as `length` / 2 allows while every point of it stays `clear` px from every other
    polygon's outline: (end, end, i). A tick's base on its own side is a half of length 0, so a tick whose base
    lies within `clear` of another outline comes back with length 0. The tick at the fraction contacts[i] marks
    where polygon i+1's corners lie and touches that outline by construction: it is fitted against the others."""
    base, normal, owner, skip = [], [], [], []
    for i in ticked:
        for a, b, f in tick_marks(polygons[i], divisions[i], length):
            base.append(((a[0] + b[0]) / 2, (a[1] + b[1]) / 2))
            normal.append(((b[0] - a[0]) / length, (b[1] - a[1]) / length))
            owner.append(i)
            skip.append(i + 1 if abs(f - float(contacts[i])) < 1e-9 else -1)
    if not base:
        return []
    base, normal = np.array(base, float), np.array(normal, float)
    owner, skip = np.array(owner), np.array(skip)
    e0 = np.concatenate([np.asarray(p, float) for p in polygons])
    e1 = np.concatenate([np.roll(np.asarray(p, float), -1, axis=0) for p in polygons])
    edge_owner = np.concatenate([[i] * len(p) for i, p in enumerate(polygons)])
    foreign = (edge_owner[None, :] != owner[:, None]) & (edge_owner[None, :] != skip[:, None])
    hs = np.arange(0.0, length / 2 + 1e-9, step)
    # A tick whose base is farther than length / 2 + clear from every foreign outline keeps both halves whole
    # (no point of it can come nearer than `clear`): only the others are fitted point by point.
    near = (np.where(foreign, _point_segment(base, e0, e1), np.inf) < length / 2 + clear + 1.0).any(axis=1)
    idx = np.flatnonzero(near)
    out, halves = [], []
    for sign in (1.0, -1.0):
        half = np.full(len(base), hs[-1])
        if len(idx):
            pts = base[idx, None, :] + sign * hs[None, :, None] * normal[idx, None, :]  # (near ticks, hs, 2)
            d = _point_segment(pts.reshape(-1, 2), e0, e1).reshape(len(idx), len(hs), -1)
            ok = np.where(foreign[idx, None, :], d, np.inf).min(axis=2) >= clear      # (near ticks, hs)
            first_bad = np.where(ok.all(axis=1), len(hs), np.argmin(ok, axis=1))
            half[idx] = np.where(first_bad > 0, hs[np.maximum(first_bad - 1, 0)], -1.0)
        halves.append(half)
    for k in range(len(base)):
        hi, lo = halves[0][k], halves[1][k]
        if hi < 0 or lo < 0:                 # the base itself is too close to another outline
            hi = lo = 0.0
        out.append(((float(base[k, 0] - lo * normal[k, 0]), float(base[k, 1] - lo * normal[k, 1])),
                    (float(base[k, 0] + hi * normal[k, 0]), float(base[k, 1] + hi * normal[k, 1])), int(owner[k])))
    return out


def tick_stats(ticks: Sequence[tuple[Point, Point, int]]) -> tuple[float, float]:
    """(shortest tick length, smallest distance between ticks of different polygons) of `fitted_ticks`' output,
    px; (inf, inf) when there are no ticks."""
    if not ticks:
        return math.inf, math.inf
    a0 = np.array([t[0] for t in ticks], float)
    a1 = np.array([t[1] for t in ticks], float)
    owner = np.array([t[2] for t in ticks])
    shortest = float(np.hypot(*(a1 - a0).T).min())
    d = segment_distances(a0, a1, a0, a1)
    d[owner[:, None] == owner[None, :]] = np.inf
    return shortest, float(d.min())


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
