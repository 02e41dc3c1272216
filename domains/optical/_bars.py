"""Square bars along lattice axes: their prisms, clearances and a locally exact ISO painter (impossible_objects).

A bar runs between two joint points of a loop; its prism is the axis segment swept by the cube [-0.3, 0.3]^3.
Coordinates are kept in tenths of a unit (integers), so faces, edges and ticks are exact.

Painting. Each bar is cut at its midpoint into two halves; joint j gets the group (end half of bar j, the joint
cube, start half of bar j + 1), lifted locally so that the two bars share the cube. Inside a group, the three
disjoint boxes are painted far to near: a half on the + side of the cube (along its axis) is in front of the cube,
one on the - side behind it, and the two halves never overlap each other on screen when they lie on the same side.
Two bars that meet overlap on screen only within 0.9 unit of their joint (a point of one bar at distance r from
the joint can be hidden by the other only if r <= 0.9), which the halves' 1-unit minimum keeps inside one group;
bars that do not meet have disjoint footprints (checked by the sampler). So groups never overlap and the painting
is the exact hidden-surface image of every joint, for a real loop the exact image of the object. Edges are stroked
only where the surface bends: an edge shared by two coplanar faces of one group, or a half's cut, is not drawn.
"""
from __future__ import annotations

import math
from functools import lru_cache
from itertools import islice
from typing import Sequence

import cairo
import numpy as np

from grip.renderers import projection as pj

HALF = 3                      # bar half width, tenths of a unit
SHADE = pj.SHADE              # +z 0.92, +y 0.70, +x 0.50
AXES = "xyz"


def joints(steps: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
    """P_0 = origin, P_i = d_1 + ... + d_i (units)."""
    out = [(0, 0, 0)]
    for d in steps:
        out.append(tuple(a + b for a, b in zip(out[-1], d)))
    return out


def axis_of(d: Sequence[int]) -> int:
    return next(i for i in range(3) if d[i] != 0)


def sign_of(d: Sequence[int]) -> int:
    return 1 if sum(d) > 0 else -1


def box10(p: Sequence[int], q: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Prism of the axis segment p..q (units), in tenths."""
    lo = tuple(10 * min(a, b) - HALF for a, b in zip(p, q))
    hi = tuple(10 * max(a, b) + HALF for a, b in zip(p, q))
    return lo, hi


def box_distance(a, b) -> float:
    """Euclidean distance between two axis-aligned boxes (tenths in, units out)."""
    gaps = [max(0, b[0][i] - a[1][i], a[0][i] - b[1][i]) for i in range(3)]
    return math.sqrt(sum(g * g for g in gaps)) / 10


def bar_boxes(steps) -> list:
    p = joints(steps)
    return [box10(p[i], p[i + 1]) for i in range(len(steps))]


@lru_cache(maxsize=256)
def clearance_3d(steps, closed: bool) -> float:
    """Smallest distance between the prisms of two bars that do not meet (in a closed loop the last bar meets the
    first), units. Pure Python: n <= 8 bars, called for every candidate the sampler draws (cached: the ladder asks
    again for the accepted one). `steps`: a tuple of 3-tuples."""
    p = joints(steps)
    n = len(steps)
    lo = [tuple(min(a, b) for a, b in zip(p[i], p[i + 1])) for i in range(n)]
    hi = [tuple(max(a, b) for a, b in zip(p[i], p[i + 1])) for i in range(n)]
    width = 2 * HALF / 10
    best = math.inf
    for i in range(n):
        (x0, y0, z0), (x1, y1, z1) = lo[i], hi[i]
        for j in range(i + 2, n - 1 if closed and i == 0 else n):
            (u0, v0, w0), (u1, v1, w1) = lo[j], hi[j]
            # Per axis the gap between the axis segments' boxes (whole units, D), less the two half widths:
            # D - width > 0 iff D >= 1, so this is max(0.0, D_ji - width, D_ij - width) as floats.
            dx, dy, dz = max(u0 - x1, x0 - u1), max(v0 - y1, y0 - v1), max(w0 - z1, z0 - w1)
            gx = dx - width if dx > 0 else 0.0
            gy = dy - width if dy > 0 else 0.0
            gz = dz - width if dz > 0 else 0.0
            g2 = gx * gx + gy * gy + gz * gz
            if g2 < best:
                best = g2
    return math.sqrt(best)


def centreline_distance(steps) -> float:
    """Smallest screen distance (s = 1) between the centrelines of two bars that do not meet on screen. The
    footprints are the centrelines grown by the image of the section cube, a regular hexagon of inradius
    0.3 sqrt 3 and circumradius 0.6, so their clearance lies between this minus 1.2 and this minus 0.3 sqrt 12."""
    q = [(c30 * (y - x), 0.5 * (x + y) - z) for x, y, z in joints(steps)]
    n = len(steps)
    best = math.inf
    for i in range(n):
        a, b = q[i], q[i + 1]
        for j in range(i + 2, n - 1 if i == 0 else n):
            d = _segments(*a, *b, *q[j], *q[j + 1])
            if d < best:
                best = d
    return best


c30 = math.cos(math.radians(30))


def _point_seg(px, py, ax, ay, bx, by) -> float:
    abx, aby = bx - ax, by - ay
    apx, apy = px - ax, py - ay
    t = (apx * abx + apy * aby) / (abx * abx + aby * aby)
    t = 0.0 if t <= 0.0 else 1.0 if t >= 1.0 else t
    return math.hypot(apx - t * abx, apy - t * aby)


def _segments(ax, ay, bx, by, cx, cy, dx, dy) -> float:
    """Distance between the segments ab and cd (0 where they cross), in plain floats."""
    o1 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)     # orientations of c, d to ab and of a, b to cd
    o2 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax)
    o3 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)
    o4 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx)
    if o1 * o2 < 0 and o3 * o4 < 0:
        return 0.0
    return min(_point_seg(ax, ay, cx, cy, dx, dy), _point_seg(bx, by, cx, cy, dx, dy),
               _point_seg(cx, cy, ax, ay, bx, by), _point_seg(dx, dy, ax, ay, bx, by))


_MIXED = np.array(((1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 1, 1), (0, 0, 1), (1, 0, 1)), bool)
_ISO_M = np.array([pj.ISO.u_row, pj.ISO.v_row], float).T          # (3, 2): p @ _ISO_M = ISO image at s = 1


def footprints(steps, s: float = 1.0, origin=(0.0, 0.0)) -> np.ndarray:
    """ISO images of the bars' prisms, (n, 6, 2) convex hexagons, px at scale s. The image of a box is the zonotope
    of its three edge images, whose vertices are the six corners that are neither the lowest nor the highest (the
    axis images sum to zero, so no direction favours all three), in cyclic order."""
    p = np.array(joints(steps), float)
    lo = np.minimum(p[:-1], p[1:]) - HALF / 10
    hi = np.maximum(p[:-1], p[1:]) + HALF / 10
    pts = np.where(_MIXED[None], hi[:, None, :], lo[:, None, :])               # (n, 6, 3)
    return pts @ _ISO_M * s + np.asarray(origin, float)


_PERP = np.array([-1.0, 1.0])   # (e_y, e_x) * _PERP = the edge normal (-e_y, e_x), exactly


def _seg2_min(px, py, ax, ay, abx, aby, abab):
    """Smallest squared distance from points (px, py) to segments a + [0, 1] ab, abab = |ab|^2, over the first two
    axes: x and y as separate arrays that broadcast together, the pair index last (long inner loops; the same
    arithmetic as on (x, y) rows; min/max ufuncs directly, as np.clip and ndarray.min wrap them in Python)."""
    apx, apy = px - ax, py - ay
    t = np.minimum(np.maximum((apx * abx + apy * aby) / abab, 0.0), 1.0)
    dx, dy = apx - t * abx, apy - t * aby
    return np.minimum.reduce(np.minimum.reduce(dx * dx + dy * dy))


def poly_distance(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Distances between convex polygons pa[k] and pb[k] ((K, m, 2), (K, m', 2)); 0 where they overlap (separating
    axis test over both polygons' edge normals, exact for convex polygons; otherwise the nearest vertex-edge pair)."""
    m = pa.shape[1]
    v = np.concatenate([pa, pb], axis=1)                                             # (K, m + m', 2)
    e = np.concatenate([v[:, 1:m], v[:, :1], v[:, m + 1:], v[:, m:m + 1]], axis=1) - v    # edges
    axes = np.ascontiguousarray(e[..., ::-1] * _PERP)                                # edge normals
    # Both polygons' vertices on every normal in one matmul (as two would round it; this operand layout), reduced
    # with K last.
    r = np.ascontiguousarray(np.matmul(v, axes.transpose(0, 2, 1)).transpose(1, 2, 0))   # (m + m', axes, K)
    ra, rb = r[:m], r[m:]
    separated = np.logical_or.reduce((np.maximum.reduce(ra) < np.minimum.reduce(rb)) |
                                     (np.maximum.reduce(rb) < np.minimum.reduce(ra)))
    x, y, ex, ey = np.ascontiguousarray(np.concatenate([v, e], axis=2).transpose(2, 1, 0))   # each (m + m', K)
    abab = np.maximum(ex * ex + ey * ey, 1e-12)
    a, b = slice(None, m), slice(m, None)
    d1 = _seg2_min(x[a, None], y[a, None], x[b], y[b], ex[b], ey[b], abab[b])     # pa's vertices, pb's edges
    d2 = _seg2_min(x[b, None], y[b, None], x[a], y[a], ex[a], ey[a], abab[a])
    return np.where(separated, np.sqrt(np.minimum(d1, d2)), 0.0)


def footprint_clearance(polys: np.ndarray) -> float:
    """Smallest screen distance between the footprints of two bars that do not meet (the loop is closed on
    screen, so the last bar meets the first)."""
    n = len(polys)
    pairs = [(i, j) for i in range(n) for j in range(i + 2, n) if not (i == 0 and j == n - 1)]
    if not pairs:
        return math.inf
    i, j = np.array(pairs).T
    return float(poly_distance(polys[i], polys[j]).min())


def box_clearance(polys: np.ndarray, rect) -> float:
    """Smallest distance from the footprints to a pixel rectangle (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = rect
    r = np.broadcast_to(np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], float), (len(polys), 4, 2))
    return float(poly_distance(polys, r).min())


# --- locally exact painting ----------------------------------------------------------------------------------

def _faces(lo, hi, skip: set[int]):
    """The +x, +y, +z faces of a box not in `skip` (axes): (axis, four corners in tenths). Face a has corners
    (lo_b, lo_c), (hi_b, lo_c), (hi_b, hi_c), (lo_b, hi_c) on its other axes b = a + 1, c = a + 2 (mod 3)."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    out = []
    if 0 not in skip:
        out.append((0, [(x1, y0, z0), (x1, y1, z0), (x1, y1, z1), (x1, y0, z1)]))
    if 1 not in skip:
        out.append((1, [(x0, y1, z0), (x0, y1, z1), (x1, y1, z1), (x1, y1, z0)]))
    if 2 not in skip:
        out.append((2, [(x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]))
    return out


@lru_cache(maxsize=None)
def joint_plan(dj, dk) -> tuple[np.ndarray, tuple]:
    """Pieces around a joint at the origin where a bar of step dj ends and one of step dk starts, far to near,
    flattened for `paint`: (the corners of every face and edge end in paint order, tenths (m, 3) ints; per piece,
    (grey of each face, number of edges to stroke)). Everything is translation-equivariant, so a joint at jp (tenths)
    has the same pieces moved by jp (cached per pair of steps: a scene has few distinct ones)."""
    plan, corners = [], []
    for _, _, faces, edges in _pieces(dj, dk):
        plan.append((tuple(SHADE["+" + AXES[a]] for a, _ in faces), len(edges)))
        corners += [q for _, quad in faces for q in quad] + [q for e in edges for q in e]
    return np.array(corners, np.int64).reshape(-1, 3), tuple(plan)


def _pieces(dj, dk):
    """The three pieces of a joint at the origin (end half of the bar dj, the joint cube, start half of the bar dk),
    far to near: (painter key, box, faces, edges to stroke)."""
    aj, ak, sj, sk = axis_of(dj), axis_of(dk), sign_of(dj), sign_of(dk)
    lj, lk = 10 * abs(dj[aj]), 10 * abs(dk[ak])

    def piece(axis, sign, near, far):   # box from near*u to far*u across the bar's section
        lo, hi = [-HALF] * 3, [HALF] * 3
        a, b = sign * near, sign * far
        lo[axis], hi[axis] = min(a, b), max(a, b)
        return tuple(lo), tuple(hi)

    end_half = piece(aj, -sj, HALF, lj // 2)   # 10 L / 2 = 5 L tenths: exact
    start_half = piece(ak, sk, HALF, lk // 2)
    cube = ((-HALF,) * 3, (HALF,) * 3)
    skip_cube = ({aj} if sj < 0 else set()) | ({ak} if sk > 0 else set())
    pieces = [(-sj, end_half, _faces(*end_half, {aj}), (aj, -sj * (lj // 2))),
              (0, cube, _faces(*cube, skip_cube), None),
              (sk, start_half, _faces(*start_half, {ak}), (ak, sk * (lk // 2)))]
    pieces.sort(key=lambda t: t[0])
    seen: dict = {}                            # (axis, edge as an ordered pair of corners): faces holding it
    for _, _, faces, _ in pieces:
        for a, quad in faces:
            for e in zip(quad, quad[1:] + quad[:1]):
                k = (a, min(e), max(e))
                seen[k] = seen.get(k, 0) + 1
    out = []
    for key, box, faces, cut in pieces:
        edges = []
        for a, quad in faces:
            for e in zip(quad, quad[1:] + quad[:1]):
                if seen[(a, min(e), max(e))] > 1:
                    continue                   # two coplanar faces of one surface: no edge
                if cut is not None and e[0][cut[0]] == cut[1] == e[1][cut[0]]:
                    continue                   # the half's cut continues into the other half
                edges.append(e)
        out.append((key, box, faces, edges))
    return out


def paint(ctx: cairo.Context, steps, s: float, origin, edge_px: float = 2.0) -> None:
    """Every joint group (joint j: bar j + 1 lifted locally to start at bar j's end), far to near inside each
    group: faces shaded per pj.SHADE, bending edges in black."""
    n = len(steps)
    p = joints(steps)
    plans = [joint_plan(steps[j], steps[(j + 1) % n]) for j in range(n)]
    # Every face corner and edge end of the object in one projection (a batch of rows rounds each row as a batch
    # of four or two does), then plain floats for cairo.
    corners = np.concatenate([rel + [10 * v for v in p[j + 1]] for j, (rel, _) in enumerate(plans)])
    xy = pj.ISO.project(corners.astype(float) / 10, s, origin).tolist()
    ctx.save()
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.set_line_cap(cairo.LINE_CAP_ROUND)
    ctx.set_line_width(1.0)                    # faces: closes the antialiasing seam between coplanar neighbours
    k = 0
    for _, pieces in plans:
        for greys, n_edges in pieces:
            for g in greys:
                ctx.move_to(*xy[k])
                ctx.line_to(*xy[k + 1])
                ctx.line_to(*xy[k + 2])
                ctx.line_to(*xy[k + 3])
                ctx.close_path()
                ctx.set_source_rgb(g, g, g)
                ctx.fill_preserve()
                ctx.stroke()
                k += 4
            if n_edges:
                ctx.set_source_rgb(0, 0, 0)
                for _ in range(n_edges):
                    ctx.move_to(*xy[k])
                    ctx.line_to(*xy[k + 1])
                    k += 2
                ctx.set_line_width(edge_px)
                ctx.stroke()
                ctx.set_line_width(1.0)
    ctx.restore()


def tick_points(steps) -> list[list[tuple[float, float, float]]]:
    """Per bar, the 3-D points (units) of its ticks: one at every whole unit between its joint centres (L - 1 of
    them), on the ridge where its two visible side faces meet. That edge is never hidden by the bar it joins (a ray
    toward the viewer leaves the other bar's section at once), and a whole unit from the joint keeps every tick
    clear of the joint's cube and of the other bar's ticks."""
    p = joints(steps)
    out = []
    for i, d in enumerate(steps):
        a = axis_of(d)
        u = [v / abs(d[a]) for v in d]
        ridge = [0.0 if b == a else HALF / 10 for b in range(3)]
        out.append([tuple(c + m * v + r for c, v, r in zip(p[i], u, ridge)) for m in range(1, abs(d[a]))])
    return out


def paint_ticks(ctx: cairo.Context, steps, s: float, origin, half_px: float) -> None:
    """Each tick as a 2 px black stroke across its bar's ridge, perpendicular to the bar on screen."""
    p = joints(steps)
    ctx.save()
    ctx.set_source_rgb(0, 0, 0)
    ctx.set_line_width(2.0)
    ctx.set_line_cap(cairo.LINE_CAP_ROUND)
    for i, pts in enumerate(tick_points(steps)):
        a, b = pj.ISO.project(np.array([p[i], p[i + 1]], float), s, origin)
        d = b - a
        ex, ey = (d / np.linalg.norm(d)).tolist()
        nx, ny = -ey * half_px, ex * half_px          # the unit normal (-e_y, e_x), times half_px
        for qx, qy in pj.ISO.project(np.asarray(pts).reshape(-1, 3), s, origin).tolist():
            ctx.move_to(qx - nx, qy - ny)
            ctx.line_to(qx + nx, qy + ny)
    ctx.stroke()
    ctx.restore()


# --- bar numbers ---------------------------------------------------------------------------------------------

def _strip(tx: float, ty: float, ex: float, ey: float, length: float, r: float) -> list[tuple[float, float]]:
    """Corners of the segment t .. t + length e (e: a unit vector) grown by r on every side, px, in plain floats
    (numpy rounds + - * / on each element exactly as Python does; the norm stays numpy's)."""
    bx, by = tx + ex * length, ty + ey * length
    d = np.array((bx - tx, by - ty))
    ux, uy = (d / np.linalg.norm(d)).tolist()
    nx, ny = -uy * r, ux * r
    return [(tx - ux * r - nx, ty - uy * r - ny), (bx + ux * r - nx, by + uy * r - ny),
            (bx + ux * r + nx, by + uy * r + ny), (tx - ux * r + nx, ty - uy * r + ny)]


def _hits(b, boxes) -> bool:
    return any(b[0] < x1 and x0 < b[2] and b[1] < y1 and y0 < b[3] for x0, y0, x1, y1 in boxes)


def number_spots(steps, s: float, origin, sizes, taken, area, arrow_px: float):
    """Centres of the bar numbers 1..n (sizes: (w, h) px of each number's text box), and bar 1's travel arrow
    (tail, head): each beside its bar's middle (outside the loop where it fits), off the bar by >= 3 px, nearer its
    own bar than any other by 10 px and >= 8 px from every other bar, inside `area` (x0, y0, x1, y1), its bounding
    box overlapping no box in `taken` nor another number's. None when some number has no spot (the sampler then
    draws another scene)."""
    polys = footprints(steps, s, origin)
    n = len(polys)
    p = joints(steps)
    centre = polys.reshape(-1, 2).mean(axis=0)
    taken = list(taken)
    ends = [pj.ISO.project(np.array(q, float), s, origin) for q in p]
    dirs = [(b - a) / np.linalg.norm(b - a) for a, b in zip(ends, ends[1:])]

    def candidates(i):   # bar i's spots inside `area`, best first: (centre, shapes, bounding boxes)
        a, b, e = ends[i], ends[i + 1], dirs[i]
        nrm = np.array([-e[1], e[0]])
        w, h = sizes[i]
        length = abs(sum(steps[i])) * s
        outward = 1.0 if np.dot((a + b) / 2 - centre, nrm) >= 0 else -1.0    # outside the loop first
        # Plain floats from here on: numpy rounds + - * / on each element exactly as Python does.
        (mx, my), (ex, ey), (nx, ny) = ((a + b) / 2).tolist(), e.tolist(), nrm.tolist()
        offs = [0.52 * s + gap + 0.5 * abs(w * nx) + 0.5 * abs(h * ny) for gap in (6.0, 14.0, 24.0)]
        span = length - 2 * s
        k = 0.5 * max(w, h) + 12.0
        for along in (0.0, -0.25, 0.25, -0.4, 0.4):
            for side in (outward, -outward):
                for off in offs:
                    cx = mx + side * nx * off + ex * along * span
                    cy = my + side * ny * off + ey * along * span
                    box = x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
                    if x0 < area[0] or y0 < area[1] or x1 > area[2] or y1 > area[3]:
                        continue
                    shapes_ = [[(x0, y0), (x1, y0), (x1, y1), (x0, y1)]]
                    boxes = [box]
                    if i == 0:
                        strip = _strip(cx + side * nx * k - ex * arrow_px / 2, cy + side * ny * k - ey * arrow_px / 2,
                                       ex, ey, arrow_px, 7.0)
                        xs, ys = [q[0] for q in strip], [q[1] for q in strip]
                        sx0, sy0, sx1, sy1 = min(xs), min(ys), max(xs), max(ys)
                        if sx0 < area[0] or sy0 < area[1] or sx1 > area[2] or sy1 > area[3]:
                            continue
                        shapes_.append(strip)
                        boxes.append((sx0, sy0, sx1, sy1))
                    yield (cx, cy), shapes_, boxes

    def distances(cands):   # per candidate, its distance to each bar (the nearest of its shapes)
        if not cands:
            return []
        sh = np.array([q for _, shapes_, _ in cands for q in shapes_])                 # (K, 4, 2)
        rows = poly_distance(np.repeat(sh, n, axis=0), np.tile(polys, (len(sh), 1, 1))).reshape(-1, n).tolist()
        out, k = [], 0
        for _, shapes_, _ in cands:
            out.append([min(col) for col in zip(*rows[k:k + len(shapes_)])])
            k += len(shapes_)
        return out

    def clear_of_bars(i, dd):   # bar i's own distance and the others': the test that does not need `taken`
        own, rest = dd[i], dd[:i] + dd[i + 1:]
        return own >= 3.0 and (not rest or min(rest) >= max(8.0, own + 10.0))

    # Distances in few numpy calls (each costs as much as a hundred pairs more; a pair's distance does not depend
    # on the batch): every bar's first candidate, which usually fits; then the next four of every bar whose first
    # is too near a bar; a bar's remaining candidates all at once where those fail too. Which candidates are free
    # of `taken` is known only bar by bar.
    gens = [candidates(i) for i in range(n)]

    def fetch(bars_, count):   # per bar in bars_, its next `count` candidates (None: all) with their distances
        chunks = [list(islice(gens[i], count)) for i in bars_]
        flat, k, out_ = distances([c for ch in chunks for c in ch]), 0, []
        for ch in chunks:
            out_.append(list(zip(ch, flat[k:k + len(ch)])))
            k += len(ch)
        return out_

    fetched = fetch(range(n), 1)
    again = [i for i in range(n) if not any(clear_of_bars(i, dd) for _, dd in fetched[i])]
    for i, more in zip(again, fetch(again, 4)):
        fetched[i] += more

    def stream(i):
        yield from fetched[i]
        yield from fetch([i], None)[0]

    out, arrow = [], None
    for i in range(n):
        for (c, shapes_, boxes), dd in stream(i):
            if not any(_hits(bx, taken) for bx in boxes) and clear_of_bars(i, dd):
                break
        else:
            return None
        out.append(c)
        taken += boxes
        if i == 0:
            (x0, y0), (x2, y2) = shapes_[1][0], shapes_[1][2]      # the strip's centre, less half the arrow
            ex, ey = dirs[0].tolist()
            tx, ty = (x0 + x2) / 2 - ex * arrow_px / 2, (y0 + y2) / 2 - ey * arrow_px / 2
            arrow = ((tx, ty), (tx + ex * arrow_px, ty + ey * arrow_px))
    return tuple(out), arrow
