"""3-D to screen: the cameras of the Solid family and of impossible objects (DOMAINS.md 0.8).

World: right-handed, z up, unit cubes at integer coordinates (a cube `c` fills c .. c + (1, 1, 1)). Screen: u goes
right, v goes down (pixels). A camera is correct only if screen-right x screen-up = w, the unit vector from the scene
toward the viewer; a camera that fails this draws a mirror world and every chirality-dependent answer is wrong.
`OrthoCamera.handedness()` returns that triple product (+1 for a correct camera) and the tests check it.

* ISO (true isometric): u = s (y - x) cos 30, v = s ((x + y) sin 30 - z); w = (1, 1, 1)/sqrt 3. The +x face is on the
  left, the +y face on the right, +z on top. Its kernel is (1, 1, 1).
* TRI (default for voxel scenes): azimuth 29.5, elevation 31.5; u = s (y sin a - x cos a),
  v = s ((x sin a + y cos a) sin e - z cos e); w = (sin a cos e, cos a cos e, sin e). No nonzero integer vector of
  [-5, 5]^3 projects shorter than 0.315 edge (`min_lattice_image`).
* Painter's order for unit-cube sets: ascending w . c, exact for disjoint lattice cubes when every component of w is
  positive (an occluder a of b has b - a <= 0 componentwise, not all 0, so w . (b - a) < 0).
* Convex polyhedra: a face is visible iff n . w > 0; an edge is hidden iff both its faces face away.
* `PinholeCamera`: perspective with a horizontal optical axis (depth_height).

A face-id buffer (`face_id_buffer`) exists to verify visibility margins; answers never come from pixels."""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import cairo
import numpy as np

SHADE = {"+z": 0.92, "+y": 0.70, "+x": 0.50}  # grey level (or tint factor) of a visible cube face
EDGE_PX = 2.0


@dataclass(frozen=True)
class OrthoCamera:
    """Parallel projection: (u, v) = s * (u_row . p, v_row . p); `w` points toward the viewer."""
    name: str
    u_row: tuple[float, float, float]
    v_row: tuple[float, float, float]
    w: tuple[float, float, float]

    @functools.cached_property
    def _m_t(self) -> np.ndarray:
        """[u_row, v_row].T, the (3, 2) transposed view project() multiplies by, built once per camera."""
        return np.array([self.u_row, self.v_row], dtype=float).T

    def project(self, pts, s: float = 1.0, origin=(0.0, 0.0)) -> np.ndarray:
        """Screen (u, v) in pixels of points (..., 3): u = origin_u + s u_row.p, v = origin_v + s v_row.p."""
        return np.asarray(pts, dtype=float) @ self._m_t * s + np.asarray(origin, dtype=float)

    def depth(self, pts) -> np.ndarray:
        """w . p: larger is nearer the viewer."""
        return np.asarray(pts, dtype=float) @ np.asarray(self.w, dtype=float)

    def screen_right(self) -> np.ndarray:
        r = np.asarray(self.u_row, dtype=float)
        return r / np.linalg.norm(r)

    def screen_up(self) -> np.ndarray:
        up = -np.asarray(self.v_row, dtype=float)  # v grows downward
        return up / np.linalg.norm(up)

    def handedness(self) -> float:
        """(screen-right x screen-up) . w: +1 for a correct camera, -1 for one that draws a mirror world."""
        return float(np.dot(np.cross(self.screen_right(), self.screen_up()), np.asarray(self.w, dtype=float)))


def iso_camera() -> OrthoCamera:
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    r3 = 1 / math.sqrt(3)
    return OrthoCamera("ISO", (-c, c, 0.0), (s, s, -1.0), (r3, r3, r3))


def tri_camera(azimuth_deg: float = 29.5, elevation_deg: float = 31.5) -> OrthoCamera:
    a, e = math.radians(azimuth_deg), math.radians(elevation_deg)
    return OrthoCamera("TRI", (-math.cos(a), math.sin(a), 0.0),
                       (math.sin(a) * math.sin(e), math.cos(a) * math.sin(e), -math.cos(e)),
                       (math.sin(a) * math.cos(e), math.cos(a) * math.cos(e), math.sin(e)))


ISO = iso_camera()
TRI = tri_camera()


def min_lattice_image(cam: OrthoCamera, extent: int = 5) -> tuple[float, tuple[int, int, int]]:
    """Shortest screen image (in cube edges, s = 1) of a nonzero integer vector n in [-extent, extent]^3, and that n
    (the first such in lexicographic order). Two lattice features of a scene whose extents stay within `extent` can
    never land closer than this on screen."""
    r = np.arange(-extent, extent + 1)
    n = np.array(list(itertools.product(r, r, r)), dtype=float)
    n = n[np.any(n != 0, axis=1)]
    lens = np.linalg.norm(cam.project(n), axis=1)
    i = int(np.argmin(lens))
    return float(lens[i]), tuple(int(x) for x in n[i])


# --- unit-cube sets -------------------------------------------------------------------------------------------

_FACE_CORNERS = {  # offsets of a cube's visible faces, counter-clockwise seen from outside
    "+x": ((1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)),
    "+y": ((1, 1, 0), (0, 1, 0), (0, 1, 1), (1, 1, 1)),
    "+z": ((0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)),
}
_FACE_STEP = {"+x": (1, 0, 0), "+y": (0, 1, 0), "+z": (0, 0, 1)}
_STEPS = tuple(_FACE_STEP.items())
_AXIS_INDEX = {"+x": 0, "+y": 1, "+z": 2}
_CORNER_OFFSETS = np.array([_FACE_CORNERS[axis] for axis in ("+x", "+y", "+z")], dtype=float)  # (3, 4, 3)


@dataclass(frozen=True)
class CubeFace:
    cube: tuple[int, int, int]
    axis: str                       # "+x" | "+y" | "+z"
    corners: tuple[tuple[int, int, int], ...]  # four world corners, counter-clockwise seen from outside


def painter_order(cubes: Iterable[Sequence[int]], cam: OrthoCamera) -> list[tuple[int, int, int]]:
    """Cubes far to near (ascending w . c; ties, which never overlap on screen, by coordinates)."""
    w = cam.w       # the key orders distinct cubes totally, so the set's own order does not matter
    return sorted({(int(x), int(y), int(z)) for x, y, z in cubes},
                  key=lambda c: (c[0] * w[0] + c[1] * w[1] + c[2] * w[2], c))


def cube_faces(cubes: Iterable[Sequence[int]], cam: OrthoCamera) -> list[CubeFace]:
    """The +x, +y, +z faces of a unit-cube set in painter's order, leaving out faces glued to a neighbour (never
    visible). Needs every component of cam.w positive (both ISO and TRI have that)."""
    if min(cam.w) <= 0:
        raise ValueError("painter's order for cube sets needs a camera with w > 0 in every component")
    order = painter_order(cubes, cam)
    present = set(order)
    out = []
    for c in order:
        x, y, z = c
        for axis, (sx, sy, sz) in _STEPS:
            if (x + sx, y + sy, z + sz) not in present:
                out.append(_cube_face(c, axis))
    return out


@functools.lru_cache(maxsize=4096)   # scenes reuse the same few lattice cells; a CubeFace is immutable
def _cube_face(c: tuple[int, int, int], axis: str) -> CubeFace:
    return CubeFace(c, axis, tuple((c[0] + dx, c[1] + dy, c[2] + dz) for dx, dy, dz in _FACE_CORNERS[axis]))


def fit(cam: OrthoCamera, pts, box: tuple[float, float, float, float], s_max: float = math.inf,
        s: float | None = None) -> tuple[float, tuple[float, float]]:
    """Scale and origin that centre the projection of `pts` in the pixel box (u0, v0, u1, v1): the largest scale up
    to `s_max` that fits, or the given `s`."""
    # In plain floats: min, max and the elementwise steps round as numpy's arrays did.
    us, vs = zip(*cam.project(pts).tolist())
    lo_u, hi_u, lo_v, hi_v = min(us), max(us), min(vs), max(vs)
    if s is None:
        s = float(min((box[2] - box[0]) / max(hi_u - lo_u, 1e-9), (box[3] - box[1]) / max(hi_v - lo_v, 1e-9), s_max))
    return s, (float((box[0] + box[2]) / 2 - s * (lo_u + hi_u) / 2),
               float((box[1] + box[3]) / 2 - s * (lo_v + hi_v) / 2))


def _path(ctx: cairo.Context, pts: np.ndarray) -> None:
    pts = pts.tolist()          # Python floats: the same values, without a numpy scalar per coordinate
    ctx.move_to(*pts[0])
    for u, v in pts[1:]:
        ctx.line_to(u, v)
    ctx.close_path()


def draw_cubes(ctx: cairo.Context, cubes: Iterable[Sequence[int]], cam: OrthoCamera, s: float, origin,
               tint: dict | None = None, edge_px: float = EDGE_PX, edge_rgb=(0.0, 0.0, 0.0)) -> list[CubeFace]:
    """Draw a unit-cube set (pixel space of `ctx`): painter's order, faces shaded top 0.92 / +y 0.70 / +x 0.50 of
    white or of the cube's colour in `tint` (cube -> RGB), black edges. Returns the faces drawn, in order."""
    faces = cube_faces(cubes, cam)
    if not faces:
        return faces
    # All quads in one (n, 4, 3) projection: numpy's matmul runs the same 4 x 3 product per quad as one project()
    # call per quad, so the floats are the same. The corners are small integers: cube + offset is exact.
    corners = np.asarray([f.cube for f in faces], dtype=float)[:, None, :] + \
        _CORNER_OFFSETS[[_AXIS_INDEX[f.axis] for f in faces]]
    quads = cam.project(np.ascontiguousarray(corners), s, origin).tolist()
    tint = tint or {}
    ctx.save()
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.set_line_width(edge_px)
    for f, ((u0, v0), (u1, v1), (u2, v2), (u3, v3)) in zip(faces, quads):
        base = tint.get(f.cube, (1.0, 1.0, 1.0))
        k = SHADE[f.axis]
        ctx.set_source_rgb(base[0] * k, base[1] * k, base[2] * k)
        ctx.move_to(u0, v0)
        ctx.line_to(u1, v1)
        ctx.line_to(u2, v2)
        ctx.line_to(u3, v3)
        ctx.close_path()
        ctx.fill_preserve()
        ctx.set_source_rgb(*edge_rgb)
        ctx.stroke()
    ctx.restore()
    return faces


# --- rotations --------------------------------------------------------------------------------------------------

def _all_cube_rotations() -> tuple[np.ndarray, ...]:
    mats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3), dtype=int)
            for row, (col, sg) in enumerate(zip(perm, signs)):
                m[row, col] = sg
            if round(np.linalg.det(m)) == 1:
                mats.append(m)
    mats.sort(key=lambda m: tuple(m.ravel()))
    return tuple(mats)


CUBE_ROTATIONS: tuple[np.ndarray, ...] = _all_cube_rotations()  # the 24 proper rotations of the cube, fixed order


def rotation(axis: str, angle_deg: float) -> np.ndarray:
    """Right-handed rotation about a world axis ("x", "y" or "z") by angle_deg (counter-clockwise seen from +axis)."""
    t = math.radians(angle_deg)
    c, s = math.cos(t), math.sin(t)
    i = "xyz".index(axis)
    j, k = (i + 1) % 3, (i + 2) % 3
    m = np.eye(3)
    m[j, j], m[j, k], m[k, j], m[k, k] = c, -s, s, c
    return m


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random proper rotation (unit quaternion from four normal draws)."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    a, b, c, d = q
    return np.array([[a*a + b*b - c*c - d*d, 2*(b*c - a*d), 2*(b*d + a*c)],
                     [2*(b*c + a*d), a*a - b*b + c*c - d*d, 2*(c*d - a*b)],
                     [2*(b*d - a*c), 2*(c*d + a*b), a*a - b*b - c*c + d*d]])


# --- convex polyhedra -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PolyView:
    vertices: np.ndarray                        # (n, 3) world positions (already rotated)
    faces: tuple[tuple[int, ...], ...]          # vertex indices, counter-clockwise seen from outside
    normals: np.ndarray                         # (m, 3) outward unit normals
    facing: np.ndarray                          # (m,) n . w
    visible_faces: tuple[int, ...]
    visible_edges: tuple[tuple[int, int], ...]
    hidden_edges: tuple[tuple[int, int], ...]

    @property
    def facing_margin(self) -> float:
        """Smallest |n . w| over faces (0.8: reject a view below 0.08)."""
        return float(np.min(np.abs(self.facing)))


def convex_faces_outward(vertices, faces: Sequence[Sequence[int]]) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    """Faces reordered counter-clockwise seen from outside, and their outward unit normals (Newell's method; the
    outside is the side away from the vertex centroid, exact for a convex solid)."""
    v = np.asarray(vertices, dtype=float)
    centre = v.mean(axis=0)
    out, normals = [], []
    for f in faces:
        p = v[list(f)]
        n = np.zeros(3)
        for a, b in zip(p, np.roll(p, -1, axis=0)):
            n += np.cross(a, b)
        if np.dot(n, p.mean(axis=0) - centre) < 0:
            f, n = tuple(reversed(f)), -n
        out.append(tuple(int(i) for i in f))
        normals.append(n / np.linalg.norm(n))
    return tuple(out), np.array(normals)


def polyhedron_view(vertices, faces: Sequence[Sequence[int]], cam: OrthoCamera) -> PolyView:
    """Visibility of a convex polyhedron under an orthographic camera: faces with n . w > 0 are visible, an edge is
    hidden iff both its faces face away."""
    v = np.asarray(vertices, dtype=float)
    faces, normals = convex_faces_outward(v, faces)
    facing = normals @ np.asarray(cam.w, dtype=float)
    edge_faces: dict[tuple[int, int], list[int]] = {}
    for fi, f in enumerate(faces):
        for a, b in zip(f, f[1:] + f[:1]):
            edge_faces.setdefault((min(a, b), max(a, b)), []).append(fi)
    visible, hidden = [], []
    for e, fs in sorted(edge_faces.items()):
        if len(fs) != 2:
            raise ValueError(f"edge {e} belongs to {len(fs)} faces; not a closed polyhedron")
        (hidden if all(facing[i] <= 0 for i in fs) else visible).append(e)
    return PolyView(v, faces, normals, facing, tuple(i for i in range(len(faces)) if facing[i] > 0),
                    tuple(visible), tuple(hidden))


def draw_polyhedron(ctx: cairo.Context, view: PolyView, cam: OrthoCamera, s: float, origin,
                    fill_rgb=(0.85, 0.88, 0.95), edge_px: float = EDGE_PX, dash_px: float = 7.0,
                    shade: bool = True) -> None:
    """Visible faces filled (lit by their facing value when `shade`), visible edges solid, hidden edges dashed."""
    p = cam.project(view.vertices, s, origin)
    ctx.save()
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.set_line_cap(cairo.LINE_CAP_ROUND)
    for fi in view.visible_faces:
        k = 0.65 + 0.35 * float(view.facing[fi]) if shade else 1.0
        ctx.set_source_rgb(*(min(1.0, c * k) for c in fill_rgb))
        _path(ctx, p[list(view.faces[fi])])
        ctx.fill()
    ctx.set_source_rgb(0, 0, 0)
    ctx.set_line_width(edge_px * 0.75)
    ctx.set_dash([dash_px, dash_px * 0.8])
    for a, b in view.hidden_edges:
        ctx.move_to(*p[a])
        ctx.line_to(*p[b])
        ctx.stroke()
    ctx.set_dash([])
    ctx.set_line_width(edge_px)
    for a, b in view.visible_edges:
        ctx.move_to(*p[a])
        ctx.line_to(*p[b])
        ctx.stroke()
    ctx.restore()


# --- perspective ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PinholeCamera:
    """Pinhole camera at (0, 0, height) looking along +y with a horizontal optical axis (world z up, x to the right
    of the view). A point (x, y, z) with depth y > 0 lands at u = cu + f x / y, v = cv - f (z - height) / y: the
    horizon (every point at camera height) is the line v = cv. Screen-right = +x, screen-up = +z, toward the
    viewer = -y: right x up = x x z = -y, a correct (unmirrored) camera."""
    height: float
    f_px: float
    cu: float
    cv: float

    def project(self, pts) -> np.ndarray:
        # Elementwise, so plain floats round exactly as numpy's arrays would (and are faster on a few points).
        p = np.asarray(pts, dtype=float)
        cu, cv, f, h = self.cu, self.cv, self.f_px, self.height
        out = []
        for x, y, z in p.reshape(-1, 3).tolist():
            if y <= 0:
                raise ValueError("a point at or behind the camera plane has no image")
            out.append((cu + f * x / y, cv - f * (z - h) / y))
        return np.array(out, dtype=float).reshape(p.shape[:-1] + (2,))

    @property
    def w(self) -> tuple[float, float, float]:
        return (0.0, -1.0, 0.0)

    def handedness(self) -> float:
        return float(np.dot(np.cross((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), self.w))


# --- visibility QA ------------------------------------------------------------------------------------------------

def face_id_buffer(polygons_px: Sequence, size_px: int, scale: int = 2) -> np.ndarray:
    """Rasterise screen polygons in the given (painter's) order into an id buffer at `scale` x resolution, without
    antialiasing: (size*scale, size*scale) int array, -1 background, else the index of the last polygon covering the
    pixel. For checking visibility margins (how many pixels of a face remain visible) only, never for answers."""
    n = size_px * scale
    surf = cairo.ImageSurface(cairo.FORMAT_RGB24, n, n)
    ctx = cairo.Context(surf)
    ctx.set_antialias(cairo.ANTIALIAS_NONE)
    ctx.set_source_rgb(1, 1, 1)
    ctx.paint()
    ctx.scale(scale, scale)
    if len(polygons_px) >= 0xFFFFFF:
        raise ValueError("too many polygons for a 24-bit id buffer")
    for i, poly in enumerate(polygons_px):
        r, g, b = (i >> 16) & 255, (i >> 8) & 255, i & 255
        ctx.set_source_rgb(r / 255, g / 255, b / 255)
        _path(ctx, np.asarray(poly, dtype=float))
        ctx.fill()
    surf.flush()
    a = np.frombuffer(surf.get_data(), dtype=np.uint8).reshape(n, surf.get_stride() // 4, 4)[:, :n, :3].astype(np.int64)
    ids = (a[:, :, 2] << 16) | (a[:, :, 1] << 8) | a[:, :, 0]  # BGRX little-endian
    ids[ids == 0xFFFFFF] = -1
    return ids
