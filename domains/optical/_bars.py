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


def clearance_3d(steps, closed: bool) -> float:
    """Smallest distance between the prisms of two bars that do not meet (in a closed loop the last bar meets the
    first), units. Pure Python: n <= 8 bars, called for every candidate the sampler draws."""
    p = joints(steps)
    n = len(steps)
    lo = [tuple(min(a, b) for a, b in zip(p[i], p[i + 1])) for i in range(n)]
    hi = [tuple(max(a, b) for a, b in zip(p[i], p[i + 1])) for i in range(n)]
    best = math.inf
    for i in range(n):
        for j in range(i + 2, n):
            if closed and i == 0 and j == n - 1:
                continue
            g2 = 0.0
            for a in range(3):   # gap between the axis segments' boxes, less the two half widths
                g = max(0.0, lo[j][a] - hi[i][a] - 2 * HALF / 10, lo[i][a] - hi[j][a] - 2 * HALF / 10)
                g2 += g * g
            best = min(best, g2)
    return math.sqrt(best)


def centreline_distance(steps) -> float:
    """Smallest screen distance (s = 1) between the centrelines of two bars that do not meet on screen. The
    footprints are the centrelines grown by the image of the section cube, a regular hexagon of inradius
    0.3 sqrt 3 and circumradius 0.6, so their clearance lies between this minus 1.2 and this minus 0.3 sqrt 12."""
    q = [(c30 * (y - x), 0.5 * (x + y) - z) for x, y, z in joints(steps)]
    n = len(steps)
    best = math.inf
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue
            best = min(best, _segments(q[i], q[i + 1], q[j], q[j + 1]))
    return best


c30 = math.cos(math.radians(30))


def _point_seg(p, a, b) -> float:
    abx, aby = b[0] - a[0], b[1] - a[1]
    t = ((p[0] - a[0]) * abx + (p[1] - a[1]) * aby) / (abx * abx + aby * aby)
    t = min(1.0, max(0.0, t))
    return math.hypot(p[0] - a[0] - t * abx, p[1] - a[1] - t * aby)


def _segments(a, b, c, d) -> float:
    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    if o1 * o2 < 0 and o3 * o4 < 0:
        return 0.0
    return min(_point_seg(a, c, d), _point_seg(b, c, d), _point_seg(c, a, b), _point_seg(d, a, b))


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


def _next(p: np.ndarray) -> np.ndarray:
    return np.concatenate([p[:, 1:], p[:, :1]], axis=1)


def _pt_seg2(px, py, ax, ay, abx, aby, abab):
    """Squared distances from points (px, py) to segments a + [0, 1] ab, abab = |ab|^2: x and y as separate arrays
    that broadcast together, the pair index last (long inner loops; the same arithmetic as on (x, y) rows)."""
    apx, apy = px - ax, py - ay
    t = np.clip((apx * abx + apy * aby) / abab, 0.0, 1.0)
    dx, dy = apx - t * abx, apy - t * aby
    return dx * dx + dy * dy


def poly_distance(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """Distances between convex polygons pa[k] and pb[k] ((K, m, 2), (K, m', 2)); 0 where they overlap (separating
    axis test over both polygons' edge normals, exact for convex polygons; otherwise the nearest vertex-edge pair)."""
    ea, eb = _next(pa) - pa, _next(pb) - pb
    e = np.concatenate([ea, eb], axis=1)
    axes = np.stack([-e[..., 1], e[..., 0]], axis=-1)                                # edge normals
    # Both polygons' vertices on every normal in one matmul (as two would round it), reduced with K last.
    r = np.matmul(np.concatenate([pa, pb], axis=1), axes.transpose(0, 2, 1))
    r = np.ascontiguousarray(r.transpose(1, 2, 0))                                   # (m + m', axes, K)
    ra, rb = r[:pa.shape[1]], r[pa.shape[1]:]
    separated = ((ra.max(0) < rb.min(0)) | (rb.max(0) < ra.min(0))).any(0)
    (xa, ya), (xb, yb), (exa, eya), (exb, eyb) = (np.ascontiguousarray(q.transpose(2, 1, 0)) for q in (pa, pb, ea, eb))
    d1 = _pt_seg2(xa[:, None], ya[:, None], xb, yb, exb, eyb, np.maximum(exb * exb + eyb * eyb, 1e-12))   # (m, m', K)
    d2 = _pt_seg2(xb[:, None], yb[:, None], xa, ya, exa, eya, np.maximum(exa * exa + eya * eya, 1e-12))
    return np.where(separated, np.sqrt(np.minimum(d1.min((0, 1)), d2.min((0, 1)))), 0.0)


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


def joint_group(steps, j: int, p=None):
    """Pieces around joint j (0-based: the joint where bar j ends and bar j + 1 starts, cyclically), far to near:
    (painter key, faces, edges to stroke). Bar j + 1 is lifted locally so that it starts at bar j's end. `p`: the
    joints of `steps`, when the caller has them."""
    n = len(steps)
    p = p or joints(steps)
    dj, dk = steps[j], steps[(j + 1) % n]
    jp = tuple(10 * v for v in p[j + 1])
    aj, ak, sj, sk = axis_of(dj), axis_of(dk), sign_of(dj), sign_of(dk)
    lj, lk = 10 * abs(dj[aj]), 10 * abs(dk[ak])

    def piece(axis, sign, near, far):   # box from jp + near*u to jp + far*u across the bar's section
        lo, hi = [v - HALF for v in jp], [v + HALF for v in jp]
        a, b = jp[axis] + sign * near, jp[axis] + sign * far
        lo[axis], hi[axis] = min(a, b), max(a, b)
        return tuple(lo), tuple(hi)

    end_half = piece(aj, -sj, HALF, lj // 2)   # 10 L / 2 = 5 L tenths: exact
    start_half = piece(ak, sk, HALF, lk // 2)
    cube = (tuple(v - HALF for v in jp), tuple(v + HALF for v in jp))
    skip_cube = ({aj} if sj < 0 else set()) | ({ak} if sk > 0 else set())
    pieces = [(-sj, end_half, _faces(*end_half, {aj}), (aj, jp[aj] - sj * (lj // 2))),
              (0, cube, _faces(*cube, skip_cube), None),
              (sk, start_half, _faces(*start_half, {ak}), (ak, jp[ak] + sk * (lk // 2)))]
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
    """Every joint group, far to near inside each group: faces shaded per pj.SHADE, bending edges in black."""
    p = joints(steps)
    groups = [joint_group(steps, j, p) for j in range(len(steps))]
    # Every face corner and edge end of the object in one projection (a batch of rows rounds each row as a batch
    # of four or two does), then plain floats for cairo.
    corners = [q for group in groups for _, _, faces, edges in group
               for pts in [quad for _, quad in faces] + edges for q in pts]
    it = iter(pj.ISO.project(np.array(corners, float) / 10, s, origin).tolist())
    ctx.save()
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.set_line_cap(cairo.LINE_CAP_ROUND)
    ctx.set_line_width(edge_px)
    for group in groups:
        for _, _, faces, edges in group:
            for a, _ in faces:
                ctx.move_to(*next(it))
                for _ in range(3):
                    ctx.line_to(*next(it))
                ctx.close_path()
                g = SHADE["+" + AXES[a]]
                ctx.set_source_rgb(g, g, g)
                ctx.fill_preserve()
                ctx.set_line_width(1.0)        # close the antialiasing seam between coplanar neighbours
                ctx.stroke()
                ctx.set_line_width(edge_px)
            ctx.set_source_rgb(0, 0, 0)
            for _ in edges:
                ctx.move_to(*next(it))
                ctx.line_to(*next(it))
            ctx.stroke()
    ctx.restore()


def tick_points(steps) -> list[list[np.ndarray]]:
    """Per bar, the 3-D points (units) of its ticks: one at every whole unit between its joint centres (L - 1 of
    them), on the ridge where its two visible side faces meet. That edge is never hidden by the bar it joins (a ray
    toward the viewer leaves the other bar's section at once), and a whole unit from the joint keeps every tick
    clear of the joint's cube and of the other bar's ticks."""
    p = joints(steps)
    out = []
    for i, d in enumerate(steps):
        a = axis_of(d)
        u = np.array(d, float) / abs(d[a])
        ridge = np.full(3, HALF / 10)
        ridge[a] = 0.0
        out.append([np.array(p[i], float) + m * u + ridge for m in range(1, abs(d[a]))])
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
        e = (b - a) / np.linalg.norm(b - a)
        nrm = np.array([-e[1], e[0]])
        for q in pj.ISO.project(np.asarray(pts).reshape(-1, 3), s, origin):
            ctx.move_to(*(q - nrm * half_px))
            ctx.line_to(*(q + nrm * half_px))
    ctx.stroke()
    ctx.restore()


# --- bar numbers ---------------------------------------------------------------------------------------------

def _strip(a, b, r: float) -> np.ndarray:
    e = (b - a) / np.linalg.norm(b - a)
    n = np.array([-e[1], e[0]]) * r
    return np.array([a - e * r - n, b + e * r - n, b + e * r + n, a - e * r + n])


def _bbox(q: np.ndarray) -> tuple[float, float, float, float]:
    return (float(q[:, 0].min()), float(q[:, 1].min()), float(q[:, 0].max()), float(q[:, 1].max()))


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
        for along in (0.0, -0.25, 0.25, -0.4, 0.4):
            for side in (outward, -outward):
                for gap in (6.0, 14.0, 24.0):
                    off = 0.52 * s + gap + 0.5 * abs(w * nx) + 0.5 * abs(h * ny)
                    cx = mx + side * nx * off + ex * along * (length - 2 * s)
                    cy = my + side * ny * off + ey * along * (length - 2 * s)
                    x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
                    shapes_ = [[(x0, y0), (x1, y0), (x1, y1), (x0, y1)]]
                    boxes = [(x0, y0, x1, y1)]
                    if i == 0:
                        k = 0.5 * max(w, h) + 12.0
                        tail = np.array((cx + side * nx * k - ex * arrow_px / 2,
                                         cy + side * ny * k - ey * arrow_px / 2))
                        shapes_.append(_strip(tail, tail + e * arrow_px, 7.0))
                        boxes.append(_bbox(shapes_[1]))
                    if any(bx[0] < area[0] or bx[1] < area[1] or bx[2] > area[2] or bx[3] > area[3]
                           for bx in boxes):
                        continue
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

    # The first few candidates of every bar in one numpy call (the first usually fits); later ones, four at a
    # time, only where those fail. Which candidates are free of `taken` is known only bar by bar.
    gens = [candidates(i) for i in range(n)]
    heads = [list(islice(g, 4)) for g in gens]
    flat = distances([c for h in heads for c in h])
    head_dist, k = [], 0
    for h in heads:
        head_dist.append(flat[k:k + len(h)])
        k += len(h)

    def stream(i):
        yield from zip(heads[i], head_dist[i])
        while chunk := list(islice(gens[i], 4)):
            yield from zip(chunk, distances(chunk))

    out, arrow = [], None
    for i in range(n):
        for (c, shapes_, boxes), dd in stream(i):
            if any(_hits(bx, taken) for bx in boxes):
                continue
            own, rest = dd[i], dd[:i] + dd[i + 1:]
            if own >= 3.0 and (not rest or min(rest) >= max(8.0, own + 10.0)):
                break
        else:
            return None
        out.append(c)
        taken += boxes
        if i == 0:
            e = dirs[0]
            tail = (shapes_[1][0] + shapes_[1][2]) / 2 - e * arrow_px / 2
            arrow = ((float(tail[0]), float(tail[1])), (float(tail[0] + e[0] * arrow_px),
                                                        float(tail[1] + e[1] * arrow_px)))
    return tuple(out), arrow
