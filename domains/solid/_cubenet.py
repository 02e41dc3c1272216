"""Cube-net bookkeeping for `cube_nets`: the 11 hexomino nets, folding by rolling a cube across the page, the 24
views of the folded cube, and glyphs drawn onto the faces of an ISO cube.

Page frame: page right = +x, page up = +y, the reader at +z; a cell (col, row) counts rows downward, so its centre
is (col + 1/2, -(row + 1/2)). The cube folds away from the reader (printed sides outside), i.e. it lies under the
page. Folding a net is the same as rolling that cube under the page from square to square: rolling toward a page
step s turns the cube by +90 deg about s x e_z (its side facing s comes up against the page). With M the cube's
orientation (body -> world) while it lies under square k, square k's face has body normal M^T e_z and its glyph,
printed with page up-vector u, has body up-vector M^T u. All integer arithmetic; the tests fold the same nets by
explicit hinge rotations of every square about its shared edge and compare.

Glyph turns on a cube face are clockwise as seen from outside the face (a clockwise quarter turn maps r to r x n),
measured from world +z on a side face and from -x on the top face (0.8 of the sheet's conventions: the -x direction
is drawn toward the upper right in ISO)."""
from __future__ import annotations

from collections import deque
from functools import lru_cache

import cairo

from grip.renderers import projection as pj

# The 11 nets as (col, row) cells, rows downward, in one fixed order with a level family tag.
NETS: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = (
    *(("1-4-1", tuple(sorted({(0, 1), (1, 1), (2, 1), (3, 1), (a, 0), (b, 2)})))
      for a, b in ((0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2))),
    *(("2-3-1", tuple(sorted({(0, 0), (1, 0), (1, 1), (2, 1), (3, 1), (b, 2)}))) for b in (1, 2, 3)),
    ("2-2-2", ((0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 2))),
    ("3-3", ((0, 0), (1, 0), (2, 0), (2, 1), (3, 1), (4, 1))),
)
CROSS = 4                          # index of the Latin cross (the only net with a square of degree 4)
LETTERS = ("F", "G", "J", "L", "P", "R")
TURNS = (0, 90, 180, 270)
E = {"+x": (1, 0, 0), "+y": (0, 1, 0), "+z": (0, 0, 1)}
VIEW_FACES = ("+z", "+x", "+y")    # a view lists (letter, turn) for top, left-front, right-front
D4 = tuple((k, m) for m in (False, True) for k in range(4))   # k quarter turns after an optional mirror


def place(cells, g: tuple[int, bool]) -> tuple[tuple[int, int], ...]:
    """Cells transformed by g = (quarter turns, mirror) and shifted to start at (0, 0), sorted."""
    k, mirror = g
    pts = [(-c if mirror else c, r) for c, r in cells]
    for _ in range(k):
        pts = [(-r, c) for c, r in pts]
    c0, r0 = min(c for c, _ in pts), min(r for _, r in pts)
    return tuple(sorted((c - c0, r - r0) for c, r in pts))


def neighbours(cells, i: int) -> list[int]:
    return list(_adjacency(tuple(cells))[i])


@lru_cache(maxsize=4096)
def _adjacency(cells) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(j for j, (c2, r2) in enumerate(cells) if abs(c - c2) + abs(r - r2) == 1) for c, r in cells)


def degree(cells, i: int) -> int:
    return len(neighbours(cells, i))


def page_step(a, b) -> tuple[int, int, int]:
    """Page vector from cell a's centre to cell b's centre (rows count downward)."""
    return (b[0] - a[0], a[1] - b[1], 0)


def page_up(turn: int) -> tuple[int, int, int]:
    """Glyph up-vector on the page for a clockwise turn: 0 -> +y, 90 -> +x, 180 -> -y, 270 -> -x."""
    return {0: (0, 1, 0), 90: (1, 0, 0), 180: (0, -1, 0), 270: (-1, 0, 0)}[turn]


# Small integer linear algebra on tuples: the fold runs thousands of times per item, where numpy's per-call cost
# would dominate.
def cross(a, b) -> tuple[int, int, int]:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a, b) -> int:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def apply(m, v) -> tuple[int, int, int]:
    return (dot(m[0], v), dot(m[1], v), dot(m[2], v))


def apply_t(m, v) -> tuple[int, int, int]:
    """m^T v."""
    (a, b, c), (d, e, f), (g, h, i) = m
    return (a * v[0] + d * v[1] + g * v[2], b * v[0] + e * v[1] + h * v[2], c * v[0] + f * v[1] + i * v[2])


def matmul(a, b):
    bt = tuple(zip(*b))
    return tuple(tuple(dot(row, col) for col in bt) for row in a)


IDENTITY = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


@lru_cache(maxsize=None)
def roll(step) -> tuple:
    """+90 deg about a = step x e_z, v -> a (a . v) + a x v: the cube's side facing `step` comes up."""
    a = cross(step, (0, 0, 1))
    cols = [tuple(a[k] * dot(a, e) + cross(a, e)[k] for k in range(3)) for e in IDENTITY]
    return tuple(tuple(cols[j][i] for j in range(3)) for i in range(3))


@lru_cache(maxsize=4096)
def orientations(cells, root: int = 0) -> tuple:
    """Per square, the cube's orientation M (body -> world) while it lies under that square (BFS from root)."""
    m: list = [None] * len(cells)
    m[root] = IDENTITY
    todo = deque([root])
    while todo:
        i = todo.popleft()
        for j in neighbours(cells, i):
            if m[j] is None:
                m[j] = matmul(roll(page_step(cells[i], cells[j])), m[i])
                todo.append(j)
    if any(x is None for x in m):
        raise ValueError("cube_nets: the cells are not edge-connected")
    return tuple(m)


def face_frames(cells, turns) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Per square, (body outward normal, body glyph-up) as integer tuples."""
    return _face_frames(tuple(cells), tuple(turns))


@lru_cache(maxsize=4096)
def _face_frames(cells, turns):
    return tuple((apply_t(m, (0, 0, 1)), apply_t(m, page_up(t))) for m, t in zip(orientations(cells), turns))


@lru_cache(maxsize=4096)
def normals(cells) -> tuple[tuple[int, int, int], ...]:
    """Per square, its body outward normal (`face_frames`' first half, which no turn changes)."""
    return tuple(apply_t(m, (0, 0, 1)) for m in orientations(tuple(cells)))


def folds(cells) -> bool:
    """Whether the six squares land on six different faces."""
    return len(set(normals(tuple(cells)))) == len(cells) == 6


def corner_vertex(cells, i: int, corner: int) -> tuple[int, int, int]:
    """Body vertex (coordinates in {-1, 1}, twice the true half-edge) of corner 0..3 (top-left, top-right,
    bottom-right, bottom-left on the page) of square i."""
    d = ((-1, 1, 1), (1, 1, 1), (1, -1, 1), (-1, -1, 1))[corner]
    return apply_t(orientations(tuple(cells))[i], d)


def _reference(face: str) -> tuple[int, int, int]:
    return (-1, 0, 0) if face == "+z" else (0, 0, 1)


def up_of(face: str, turn: int) -> tuple[int, int, int]:
    """The world glyph-up vector of a glyph with this turn on a visible face: each clockwise quarter turn seen
    from outside maps r to r x n."""
    r = _reference(face)
    for _ in range(turn // 90):
        r = cross(r, E[face])
    return r


_TURN = {(face, up_of(face, t)): t for face in VIEW_FACES for t in TURNS}


def turn_of(face: str, up) -> int:
    """Clockwise turn (seen from outside) from the face's reference direction to the glyph-up vector `up`."""
    try:
        return _TURN[(face, tuple(up))]
    except KeyError:
        raise ValueError(f"cube_nets: glyph-up {tuple(up)} does not lie in face {face}") from None


_ROTATIONS = tuple(tuple(tuple(int(x) for x in row) for row in o) for o in pj.CUBE_ROTATIONS)


_UNITS = tuple(v for e in IDENTITY for v in (e, tuple(-x for x in e)))
# Per rotation O: the body normal shown on each visible face (row k of O is O^T e_k) and O applied to every unit
# vector, as lookups.
_SHOWN = tuple(tuple(apply_t(o, E[face]) for face in VIEW_FACES) for o in _ROTATIONS)
_IMAGE = tuple({u: apply(o, u) for u in _UNITS} for o in _ROTATIONS)
# Per rotation, per visible face: the body normal shown there and the turn there of each body glyph-up that lies
# in that face (`_TURN` of its image), so that a view is three lookups.
_VIEW_TABLE = tuple(tuple((n, {u: _TURN[face, image[u]] for u in _UNITS if (face, image[u]) in _TURN})
                          for face, n in zip(VIEW_FACES, shown)) for shown, image in zip(_SHOWN, _IMAGE))


@lru_cache(maxsize=4096)
def views(cells, letters, turns) -> tuple[tuple[tuple[str, int], ...], ...]:
    """The 24 views (one per pj.CUBE_ROTATIONS entry O, applied to the body): (letter, turn) on top, left-front,
    right-front."""
    by_normal = {n: (letters[i], u) for i, (n, u) in enumerate(face_frames(cells, turns))}
    out = []
    for (n0, t0), (n1, t1), (n2, t2) in _VIEW_TABLE:
        (l0, u0), (l1, u1), (l2, u2) = by_normal[n0], by_normal[n1], by_normal[n2]
        out.append(((l0, t0[u0]), (l1, t1[u1]), (l2, t2[u2])))
    return tuple(out)


def distance(cand, view) -> int:
    return (cand[0] != view[0]) + (cand[1] != view[1]) + (cand[2] != view[2])


def distance_to(cand, vs) -> int:
    """Faces (0-3) by which a candidate misses the nearest of the views `vs` (`distance`, written out: it runs
    for every candidate against 24 views)."""
    if cand in vs:
        return 0
    a, b, c = cand
    best = 3
    for v0, v1, v2 in vs:
        d = (a != v0) + (b != v1) + (c != v2)
        if d < best:
            if d == 1:
                return 1
            best = d
    return best


def opposite_letters(cells, letters) -> dict[str, str]:
    ns = normals(tuple(cells))
    by_normal = {n: letters[i] for i, n in enumerate(ns)}
    return {letters[i]: by_normal[(-n[0], -n[1], -n[2])] for i, n in enumerate(ns)}


# --- glyphs on an ISO cube ----------------------------------------------------------------------------------------

FACE_CENTRE = {"+z": (0.5, 0.5, 1.0), "+x": (1.0, 0.5, 0.5), "+y": (0.5, 1.0, 0.5)}


def glyph_matrix(face: str, turn: int, s: float, origin, glyph_px: float) -> cairo.Matrix:
    """Cairo matrix from glyph space (px of a glyph `glyph_px` tall; x right, y down, origin at the glyph centre) to
    the screen, for the unit cube at the origin drawn in ISO at scale s: the glyph's top runs along its up-vector u,
    its right along u x n, so it reads unmirrored from outside the face."""
    return cairo.Matrix(*_glyph_matrix(face, turn, s, tuple(origin), glyph_px))


@lru_cache(maxsize=1024)          # a handful of slots, faces and turns recur in every item
def _glyph_matrix(face: str, turn: int, s: float, origin, glyph_px: float) -> tuple[float, ...]:
    u = up_of(face, turn)
    r = cross(u, E[face])
    k = glyph_px / 0.6                                   # the glyph spans 60% of the face height
    pu = pj.ISO.project(u) * s / k
    pr = pj.ISO.project(r) * s / k
    c = pj.ISO.project(FACE_CENTRE[face], s, origin)
    return tuple(float(x) for x in (pr[0], pr[1], -pu[0], -pu[1], c[0], c[1]))
