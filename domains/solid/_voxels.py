"""Unit-cube sets shared by `orthographic` and `combination_3d`: connectivity, rotations and canonical forms,
binary view grids, and the visibility fractions their margins need (rays from sample points on a face toward the
TRI viewer, slab-tested against every cube: exact up to the 1/25 sampling step).

A voxel set is a collection of integer (x, y, z) triples; cube c fills c .. c + (1, 1, 1). A view grid is a tuple of
strings, top row first, '#' filled and '-' empty, cropped to its filled cells."""
from __future__ import annotations

import functools
import itertools
from typing import Iterable, Sequence

import numpy as np

from grip.renderers import projection as pj

Cube = tuple[int, int, int]
FILLED, EMPTY = "#", "-"


def neighbours(c: Sequence[int]) -> list[Cube]:
    x, y, z = c
    return [(x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1), (x, y, z - 1)]


def connected(cubes: Iterable[Sequence[int]]) -> bool:
    """Face-connected (an empty set is not)."""
    s = None
    if isinstance(cubes, (set, frozenset, list, tuple)):
        try:
            s = set(cubes)              # tuples as they are (tuple(c) of a tuple is c)
        except TypeError:               # unhashable cubes (lists, arrays): as tuples below
            s = None
    if s is None:
        s = {tuple(c) for c in cubes}
    if not s:
        return False
    start = s.pop()                     # any start gives the same answer; s keeps the cubes not reached yet
    todo = [start]
    while todo:
        x, y, z = todo.pop()
        found = s.intersection(((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1),
                                (x, y, z - 1)))
        if found:
            s -= found
            todo += found
    return not s


def cut_cubes(cubes: Iterable[Sequence[int]]) -> set[Cube] | None:
    """The cubes whose removal leaves the rest not face-connected (the articulation points, found in one
    depth-first walk), so that `c in cut_cubes(s)` is `not connected(s - {c})` for every c of s; a lone cube is
    its own cut (nothing is left). None when the set itself is not connected (or empty)."""
    s = {tuple(c) for c in cubes}
    if len(s) <= 1:
        return set(s) if s else None
    # Each cube's neighbours inside the set, found once (the walk below then tests no membership).
    adj = {}
    for v in s:
        x, y, z = v
        adj[v] = s.intersection(((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1),
                                 (x, y, z - 1)))
    root = next(iter(s))
    disc, low, cut, children = {root: 0}, {root: 0}, set(), 0
    stack = [(root, None, iter(adj[root]))]
    while stack:
        v, parent, todo = stack[-1]
        for w in todo:
            if w not in disc:
                disc[w] = low[w] = len(disc)
                stack.append((w, v, iter(adj[w])))
                break
            if w != parent and disc[w] < low[v]:
                low[v] = disc[w]
        else:
            stack.pop()
            if parent is None:
                continue
            if low[v] < low[parent]:
                low[parent] = low[v]
            if parent == root:
                children += 1
            elif low[v] >= disc[parent]:
                cut.add(parent)
    if len(disc) != len(s):
        return None
    if children > 1:
        cut.add(root)
    return cut


def normalise(cubes: Iterable[Sequence[int]]) -> tuple[Cube, ...]:
    """Translated so that the minimum corner is at the origin, sorted."""
    if isinstance(cubes, np.ndarray):
        s = set(map(tuple, cubes.reshape(-1, 3).astype(np.int64).tolist()))
    else:
        s = {(int(c[0]), int(c[1]), int(c[2])) for c in cubes}
    xs, ys, zs = zip(*s)
    x0, y0, z0 = min(xs), min(ys), min(zs)
    if x0 == y0 == z0 == 0:                 # already at the origin (most calls)
        return tuple(sorted(s))
    return tuple(sorted((x - x0, y - y0, z - z0) for x, y, z in s))


def rotations(cubes: Iterable[Sequence[int]]) -> list[tuple[Cube, ...]]:
    """The normalised images under the 24 proper rotations, in `pj.CUBE_ROTATIONS` order."""
    a = np.asarray(sorted({tuple(c) for c in cubes}), dtype=int).reshape(-1, 3)
    return [normalise(a @ m.T) for m in pj.CUBE_ROTATIONS]


# Each rotation matrix as (column, sign) per row: it has one nonzero entry, +-1, per row and column.
_SIGNED_PERMS = tuple(tuple((int(np.flatnonzero(row)[0]), int(row[np.flatnonzero(row)[0]])) for row in m)
                      for m in pj.CUBE_ROTATIONS)


def rotated(cubes: Iterable[Sequence[int]], k: int) -> tuple[Cube, ...]:
    """normalise(cubes @ pj.CUBE_ROTATIONS[k].T), in integers without the matrix product."""
    (i, a), (j, b), (l, c) = _SIGNED_PERMS[k]
    return normalise([(a * p[i], b * p[j], c * p[l]) for p in cubes])


def canonical(cubes: Iterable[Sequence[int]]) -> tuple[Cube, ...]:
    """The smallest normalised rotation: two sets are rotations of each other iff their canonical forms agree."""
    if type(cubes) is tuple:            # drawn candidates and gaps, asked about again and again
        try:
            return _canonical_of_tuple(cubes)
        except TypeError:               # unhashable cubes (lists, arrays)
            pass
    return _canonical(normalise(cubes))


@functools.lru_cache(maxsize=16384)
def _canonical_of_tuple(cubes: tuple) -> tuple[Cube, ...]:
    return _canonical(normalise(cubes))


_ROT = np.stack(pj.CUBE_ROTATIONS)             # (24, 3, 3)


@functools.lru_cache(maxsize=16384)
def _canonical(cubes: tuple[Cube, ...]) -> tuple[Cube, ...]:
    """All 24 rotations at once: rotate, move each to the origin, sort the cubes by (x, y, z) code, keep the
    smallest sequence (the same choice as min(rotations(cubes)))."""
    a = np.asarray(cubes, dtype=np.int64)
    r = np.einsum("kij,nj->kni", _ROT, a)
    r = r - r.min(axis=1, keepdims=True)
    codes = np.sort((r[..., 0] * 64 + r[..., 1]) * 64 + r[..., 2], axis=1)
    best = min(codes.tolist())                 # rows as lists of ints compare like the tuples they were
    return tuple((c // 4096, (c // 64) % 64, c % 64) for c in best)


def mirror(cubes: Iterable[Sequence[int]]) -> tuple[Cube, ...]:
    """Reflection in the plane x = 0, normalised."""
    return normalise((-c[0], c[1], c[2]) for c in cubes)


def achiral(cubes: Iterable[Sequence[int]]) -> bool:
    return canonical(mirror(cubes)) == canonical(cubes)


def box_size(cubes: Iterable[Sequence[int]]) -> tuple[int, int, int]:
    xs, ys, zs = zip(*cubes)
    return (int(max(xs)) - int(min(xs)) + 1, int(max(ys)) - int(min(ys)) + 1, int(max(zs)) - int(min(zs)) + 1)


def occupancy(cubes: Iterable[Sequence[int]]) -> np.ndarray:
    """Normalised cube set as a boolean array over its bounding box."""
    a = np.asarray(normalise(cubes), dtype=int).reshape(-1, 3)
    occ = np.zeros(tuple(a.max(axis=0) + 1), dtype=np.int32)
    occ[a[:, 0], a[:, 1], a[:, 2]] = 1
    return occ


def best_overlap_difference(a: Iterable[Sequence[int]], b: Iterable[Sequence[int]]) -> int:
    """Smallest symmetric difference (cubes) between set a and any rotation + translation of set b."""
    A = occupancy(a)
    best = 0
    for rb in set(rotations(b)):
        B = occupancy(rb)
        pad = np.pad(A, [(n, n) for n in B.shape])
        win = np.lib.stride_tricks.sliding_window_view(pad, B.shape)
        best = max(best, int(np.einsum("ijklmn,lmn->ijk", win, B).max()))
    return int(A.sum() + len(normalise(b)) - 2 * best)


# --- view grids -------------------------------------------------------------------------------------------------

def grid_of(cells: Iterable[tuple[int, int]]) -> tuple[str, ...]:
    """(row, col) cells, row growing downward, cropped to their bounding box."""
    cs = cells if isinstance(cells, (set, frozenset)) else set(cells)
    if not cs:
        return ()
    rs, cols = zip(*cs)
    r0, c0, c1 = min(rs), min(cols), max(cols)
    w = c1 - c0 + 1
    if w > 8:
        rows = [[EMPTY] * w for _ in range(max(rs) - r0 + 1)]
        for r, c in cs:
            rows[r - r0][c - c0] = FILLED
        return tuple("".join(row) for row in rows)
    masks = [0] * (max(rs) - r0 + 1)          # bit k: column c0 + k filled
    for r, c in cs:
        masks[r - r0] |= 1 << (c - c0)
    table = _ROW_STRINGS[w]
    return tuple(table[m] for m in masks)


# _ROW_STRINGS[w][m]: the row of width w whose column k is filled iff bit k of m is set.
_ROW_STRINGS = [[] if w == 0 else ["".join(FILLED if (m >> k) & 1 else EMPTY for k in range(w)) for m in range(1 << w)]
                for w in range(9)]


def cells_of(grid: Sequence[str]) -> set[tuple[int, int]]:
    return {(r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch == FILLED}


def flip(grid: Sequence[str]) -> tuple[str, ...]:
    """Left-right mirror image."""
    return tuple(row[::-1] for row in grid)


@functools.lru_cache(maxsize=4096)
def grid_distance(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """Cells filled in exactly one of two grids at the relative shift that minimises that number."""
    # Each grid as one integer, row r's bit mask (bit k: column k filled) at bits r * w..: with w wide enough that
    # no shift of b carries a row into the next, one & and one popcount count the overlap at a shift (b's row k
    # on a's row k + dr, its column l on a's column l + dc). The best overlap over every shift (0 when none
    # overlaps).
    ma, mb = [_row_mask(row) for row in a], [_row_mask(row) for row in b]
    ha, hb = len(ma), len(mb)
    wa, wb = max((len(row) for row in a), default=0), max((len(row) for row in b), default=0)
    w = wa + 2 * wb
    big_a = sum(m << (r * w) for r, m in enumerate(ma)) << ((hb - 1) * w + wb - 1) if hb and wb else 0
    big_b = sum(m << (r * w) for r, m in enumerate(mb))
    best = max(((big_a & (big_b << (i * w + j))).bit_count() for i in range(ha + hb - 1) for j in range(wa + wb - 1)),
               default=0)
    return sum(m.bit_count() for m in ma) + sum(m.bit_count() for m in mb) - 2 * best


@functools.lru_cache(maxsize=None)
def _row_mask(row: str) -> int:
    return sum(1 << k for k, ch in enumerate(row) if ch == FILLED)


def grid_connected(grid: Sequence[str]) -> bool:
    cs = cells_of(grid)
    if not cs:
        return False
    start = min(cs)
    seen, todo = {start}, [start]
    while todo:
        r, c = todo.pop()
        for n in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if n in cs and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(cs)


# --- visibility in TRI ------------------------------------------------------------------------------------------

_CAM = pj.TRI
AXES = ("+x", "+y", "+z")
_STEP = {"+x": (1, 0, 0), "+y": (0, 1, 0), "+z": (0, 0, 1)}
SAMPLES = 5                      # a face is sampled at SAMPLES x SAMPLES cell centres: fractions in 1/25 steps
_T = (np.arange(SAMPLES) + 0.5) / SAMPLES
_UV = np.array([(a, b) for a in _T for b in _T])
_FACE_POINTS = {}
for _ax in AXES:
    _k = "xyz".index(_ax[1])
    _p = np.zeros((len(_UV), 3))
    _p[:, _k] = 1.0
    _p[:, [i for i in range(3) if i != _k]] = _UV
    _FACE_POINTS[_ax] = _p


_TEMPLATES = np.stack([_FACE_POINTS[ax] for ax in AXES])        # (3, S^2, 3)
_AXIS_INDEX = {ax: i for i, ax in enumerate(AXES)}


def face_visibility(cubes: Iterable[Sequence[int]], faces: Sequence[tuple[Sequence[int], str]],
                    cam: pj.OrthoCamera = _CAM) -> np.ndarray:
    """Visible fraction of each (cube, axis) face: the share of its sample points whose ray toward the viewer
    (direction cam.w) meets no cube of the set (slab test against every cube). The face's own cube may or may not
    be in the set; a face glued to a cube of the set is hidden (its rays start inside that cube)."""
    if not faces:
        return np.zeros(0)
    if not isinstance(cubes, (np.ndarray, list, tuple, set, frozenset)):
        cubes = list(cubes)
    tri = cam is _CAM or cam == _CAM
    if tri:
        vis = _box_visibility(cubes)
        if vis is not None:
            rows = [_BOX_FACES.get((tuple(c), ax)) for c, ax in faces]
            if None not in rows:
                return vis[rows]
    # The set's cubes, in any order and repeats allowed: a ray is blocked when any of them blocks it.
    occ = np.asarray(cubes if isinstance(cubes, np.ndarray) else list(cubes), dtype=np.int64).reshape(-1, 3)
    if not tri:
        return _face_visibility_dense(occ, faces, cam)
    # Each (face, cube) pair's 25 slab tests stand alone: they are remembered as a bit mask of the sample points
    # that cube blocks (computed by `_slab_hits`, the same float operations as the dense test), and a face's
    # blocked points are the union of its cubes' masks.
    occs = set(map(tuple, occ.tolist()))
    keys = [(tuple(c), ax) for c, ax in faces]
    memo = _HIT_MEMO
    if len(memo) > 100_000:
        memo.clear()
    missing = []
    entries = []
    for k in keys:
        e = memo.get(k)
        if e is None:
            e = memo[k] = (set(), {})        # (cubes tested against this face, the nonzero masks among them)
        if not occs <= e[0]:
            missing += [(k, o) for o in occs - e[0]]
        entries.append(e)
    if missing:
        for (k, o), m in zip(missing, _slab_hits(missing)):
            e = memo[k]
            e[0].add(o)
            if m:
                e[1][o] = m
    out = []
    for known, nz in entries:
        m = 0
        for o in occs.intersection(nz):
            m |= nz[o]
        out.append(1.0 - m.bit_count() / (SAMPLES * SAMPLES))
    return np.array(out, dtype=float)


_HIT_MEMO: dict = {}
_INV = 1.0 / np.asarray(_CAM.w, dtype=float)
_BITS = (1 << np.arange(SAMPLES * SAMPLES, dtype=np.int64))


def _slab_hits(pairs) -> list[int]:
    """Per ((face cube, axis), cube) pair: the bit mask of the face's sample points whose ray toward the TRI viewer
    the cube blocks (the dense test's operations, one row per pair)."""
    inv = _INV
    base = np.asarray([k[0] for k, _ in pairs], dtype=float)                                # (M, 3)
    kind = np.fromiter((_AXIS_INDEX[k[1]] for k, _ in pairs), dtype=np.intp, count=len(pairs))
    occ = np.asarray([o for _, o in pairs], dtype=np.int64).astype(float)                  # (M, 3)
    pts = base[:, None, :] + _TEMPLATES[kind]                                              # (M, S^2, 3)
    lo = [(occ[:, None, i] - pts[:, :, i]) * inv[i] for i in range(3)]                     # 3 x (M, S^2)
    t_in = np.maximum(np.maximum(lo[0], lo[1]), lo[2])
    t_out = np.minimum(np.minimum(lo[0] + inv[0], lo[1] + inv[1]), lo[2] + inv[2])
    hit = t_out > np.maximum(t_in, 1e-9)
    return (hit.astype(np.int64) * _BITS).sum(axis=1).tolist()


# Sets and faces inside the box [0, 3)^3 (every drawing of combination_3d) take a precomputed path: cell (x, y, z)
# is bit 9 x + 3 y + z of a set's occupancy word, and per face (row 3 cell + axis) and 9-bit chunk k of that word,
# _CHUNKS[k][row, v] is the union of the `_slab_hits` masks of the cells in chunk value v.
_BOX_CELLS = {c: 9 * c[0] + 3 * c[1] + c[2] for c in itertools.product(range(3), repeat=3)}
_BOX_FACES = {(c, ax): 3 * i + k for c, i in _BOX_CELLS.items() for k, ax in enumerate(AXES)}
_CHUNKS: list = []


def _box_visibility(cubes: np.ndarray | Sequence[Sequence[int]]) -> np.ndarray | None:
    """The visible fraction of all 81 faces of the box (rows as in _BOX_FACES) for a set inside it, else None.
    Cubes as given: coordinates that are not integers find no cell (the caller's general path converts them)."""
    word = 0
    for o in (cubes.reshape(-1, 3).tolist() if isinstance(cubes, np.ndarray) else cubes):
        i = _BOX_CELLS.get(tuple(o))
        if i is None:
            return None
        word |= 1 << i
    return _box_word_visibility(word)


@functools.lru_cache(maxsize=4096)
def _box_word_visibility(word: int) -> np.ndarray:
    if not _CHUNKS:
        keys = list(_BOX_FACES)
        hits = np.asarray(_slab_hits([(k, o) for k in keys for o in _BOX_CELLS]), dtype=np.int64).reshape(-1, 3, 9)
        bits = ((np.arange(512)[:, None] >> np.arange(9)) & 1).astype(bool)                    # (512, 9)
        _CHUNKS.extend(np.bitwise_or.reduce(np.where(bits, hits[:, k, None, :], 0), axis=2) for k in range(3))
    blocked = _CHUNKS[0][:, word & 511] | _CHUNKS[1][:, (word >> 9) & 511] | _CHUNKS[2][:, word >> 18]
    # count / 25 as the float division of two exact integers: the same float as int.bit_count() / 25
    vis = 1.0 - np.bitwise_count(blocked).astype(float) / (SAMPLES * SAMPLES)
    vis.flags.writeable = False         # shared by every call with this set
    return vis


def _face_visibility_dense(occ: np.ndarray, faces, cam: pj.OrthoCamera) -> np.ndarray:
    occ = occ.astype(float)
    inv = 1.0 / np.asarray(cam.w, dtype=float)
    base = np.asarray([c for c, _ in faces], dtype=float)                                     # (F, 3)
    kind = np.fromiter((_AXIS_INDEX[ax] for _, ax in faces), dtype=np.intp, count=len(faces))
    pts = (base[:, None, :] + _TEMPLATES[kind]).reshape(-1, 3)                                 # (F * S^2, 3)
    lo = [(occ[None, :, i] - pts[:, i, None]) * inv[i] for i in range(3)]                    # 3 x (P, C)
    t_in = np.maximum(np.maximum(lo[0], lo[1]), lo[2])
    t_out = np.minimum(np.minimum(lo[0] + inv[0], lo[1] + inv[1]), lo[2] + inv[2])
    hit = (t_out > np.maximum(t_in, 1e-9)).any(axis=1)
    # The mean of 25 booleans per face, as count / 25 (the same float).
    return 1.0 - np.count_nonzero(hit.reshape(len(faces), -1), axis=1) / (SAMPLES * SAMPLES)


def best_face_visibility(cubes: Iterable[Sequence[int]], probes: Sequence[Sequence[int]]) -> np.ndarray:
    """Per probe cube (in the set or not): the best visible fraction among its +x, +y, +z faces."""
    if not len(probes):
        return np.zeros(0)
    if not isinstance(cubes, (np.ndarray, list, tuple, set, frozenset)):
        cubes = list(cubes)
    vis = _box_visibility(cubes)
    if vis is not None:
        cells = [_BOX_CELLS.get(tuple(c)) for c in probes]
        if None not in cells:
            return vis.reshape(-1, 3).max(axis=1)[cells]
    faces = [(c, ax) for c in probes for ax in AXES]
    return face_visibility(cubes, faces).reshape(len(probes), 3).max(axis=1)
