"""Folding bookkeeping for fold_punch: the paper as layers (convex polygon in the current coordinates, affine map
back to the flat sheet, lineage), the quarter-cell masks that test folds quickly, and the punches' images and
clearances. Fold lines are (kind, c, flap side) with kind x = c, y = c, y = x + c ("d") or y = -x + c ("a")."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from shapely.geometry import Polygon
from shapely.ops import unary_union

from grip.geometry import area, clip_convex, reflection_matrix

SIZE = 8                                   # the sheet is [0, 8] x [0, 8] units, x right, y down
LINES = {"x": (1, 0), "y": (0, 1), "d": (-1, 1), "a": (1, 1)}   # a x + b y = c: x = c, y = c, y = x + c, y = -x + c

Cell = tuple[int, int]                     # (column, row), 0-based from the top-left


@dataclass(frozen=True)
class Layer:
    verts: tuple[tuple[float, float], ...]   # convex polygon, current coordinates
    to_sheet: tuple[tuple[float, ...], ...]  # 3 x 3 affine map, current coordinates -> flat sheet
    flipped: bool                            # came over with the flap of the fold that made this stage
    parent: int                              # index of the layer it was cut from, one stage earlier (-1 at stage 0)


def fold_line(fold) -> tuple[float, float, float]:
    a, b = LINES[fold[0]]
    return a, b, fold[1]


def fold_once(layers: tuple[Layer, ...], fold) -> tuple[Layer, ...]:
    """Cut every layer by the fold line; base pieces stay in place, flap pieces are reflected and laid on top in
    reverse order (the flap turns over)."""
    a, b, c = fold_line(fold)
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = reflection_matrix(a, b, c).tolist()
    base, flap = [], []
    for i, ly in enumerate(layers):
        keep = clip_convex(ly.verts, a, b, c, -fold[2])
        if len(keep) >= 3 and area(keep) > 1e-9:
            base.append(Layer(tuple(keep), ly.to_sheet, False, i))
        move = clip_convex(ly.verts, a, b, c, fold[2])
        if len(move) >= 3 and area(move) > 1e-9:
            pts = tuple((float(u), float(v)) for u, v in (_reflect(fold[0], c, x, y) for x, y in move[::-1]))
            # integer entries: the product is exact in any order (so it equals `to_sheet @ r`); each entry is
            # summed from 0.0 as sum() does (so a zero keeps its sign)
            m = tuple((0.0 + p * r00 + q * r10 + s * r20, 0.0 + p * r01 + q * r11 + s * r21,
                       0.0 + p * r02 + q * r12 + s * r22) for p, q, s in ly.to_sheet)
            flap.append(Layer(pts, m, True, i))
    return tuple(base + flap[::-1])


@lru_cache(maxsize=1024)
def stages(folds: tuple) -> tuple[tuple[Layer, ...], ...]:
    """Layers after 0, 1, ..., len(folds) folds (built on the cached stages of the folds before the last, so that
    `outline(folds[:k])` finds stage k already made)."""
    if not folds:
        return ((Layer(((0.0, 0.0), (SIZE, 0.0), (SIZE, SIZE), (0.0, SIZE)), tuple(map(tuple, np.eye(3).tolist())),
                       False, -1),),)
    before = stages(folds[:-1])
    return (*before, fold_once(before[-1], folds[-1]))


def region(layers) -> Polygon:
    return unary_union([Polygon(ly.verts) for ly in layers])


@lru_cache(maxsize=256)
def outline(folds: tuple) -> Polygon:
    """The folded paper's outline after `folds` (keyed by the folds made so far: the flat sheet's is shared)."""
    return region(stages(folds)[-1])


def extent(layers) -> tuple[float, float, float, float]:
    """`region(layers).bounds` without the union: the outline's extremes are layer vertices."""
    xs = [x for ly in layers for x, _ in ly.verts]
    ys = [y for ly in layers for _, y in ly.verts]
    return min(xs), min(ys), max(xs), max(ys)


# Every fold line is x = c, y = c, y = x + c or y = -x + c with c an integer: together they cut each unit cell into
# four triangles by its diagonals, so every folded outline is a union of those quarter cells and a reflection across
# a fold line maps quarter cells onto quarter cells. The sampler tests folds on them: centroids in sixths of a unit,
# integers, never on a fold line (their offsets from any fold line are 1 or 2 sixths modulo 6).
_QX = np.array([6 * i + dx for j in range(SIZE) for i in range(SIZE) for dx, _ in ((3, 1), (5, 3), (3, 5), (1, 3))])
_QY = np.array([6 * j + dy for j in range(SIZE) for i in range(SIZE) for _, dy in ((3, 1), (5, 3), (3, 5), (1, 3))])
_QINDEX = np.full((6 * SIZE + 1, 6 * SIZE + 1), -1)
_QINDEX[_QX, _QY] = np.arange(len(_QX))


def _reflect(kind: str, c, x, y):
    """(x, y) reflected across the fold line of `kind` through c: `apply_affine(reflection_matrix(...))` term by
    term (its linear part only swaps and negates, so the one rounding is the same addition)."""
    if kind == "x":
        return 2 * c - x, y
    if kind == "y":
        return x, 2 * c - y
    if kind == "d":
        return y - c, x + c
    return c - y, c - x


@lru_cache(maxsize=512)
def _fold_table(fold) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per quarter cell, for `fold`: on the flap side, on the other side, reflected inside the sheet, and the index
    of its reflection (meaningful where inside). The sampler tries the same few hundred folds over and over."""
    a, b = LINES[fold[0]]
    side = np.sign(a * _QX + b * _QY - 6 * fold[1])
    x, y = _reflect(fold[0], 6 * fold[1], _QX, _QY)
    inside = (x >= 0) & (y >= 0) & (x <= 6 * SIZE) & (y <= 6 * SIZE)
    return side == fold[2], side == -fold[2], inside, _QINDEX[np.clip(x, 0, 6 * SIZE), np.clip(y, 0, 6 * SIZE)]


def fold_mask(mask: np.ndarray, fold) -> np.ndarray | None:
    """The quarter cells covered after `fold` (the part that stays), or None when the fold is not allowed: a part
    is empty, or the reflected flap does not land inside the part that stays."""
    on_flap, on_base, inside, target = _fold_table(fold)
    flap, base = mask & on_flap, mask & on_base
    if not flap.any() or not base.any():
        return None
    if not inside[flap].all():
        return None
    if not base[target[flap]].all():
        return None
    return base


def mask_bounds(mask: np.ndarray) -> tuple[int, int, int, int]:
    x, y = _QX[mask], _QY[mask]
    return int(x.min() // 6), int(y.min() // 6), int(-(-x.max() // 6)), int(-(-y.max() // 6))


@lru_cache(maxsize=512)
def _half_planes(folds: tuple, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stage k's layers as stacked half-planes n . p <= off (outward normals, every edge of every layer) and the
    index of each layer's first edge. Every layer keeps the sheet's vertex order (`fold_once` reverses a reflected
    piece), so the outward normal of edge v -> w is (w_y - v_y, v_x - w_x) for all of them."""
    rows, starts = [], []
    for ly in stages(folds)[k]:
        starts.append(len(rows))
        v = ly.verts
        for j, (vx, vy) in enumerate(v):
            wx, wy = v[(j + 1) % len(v)]
            nx, ny = wy - vy, vx - wx
            rows.append((nx, ny, nx * vx + ny * vy))
    r = np.array(rows, float)
    return r[:, :2], r[:, 2], np.array(starts)


def membership(folds: tuple, k: int, pts) -> np.ndarray:
    """(points, layers) booleans: which layers of stage k contain each point (boundary included, 1e-9 slack)."""
    n, off, starts = _half_planes(folds, k)
    p = np.asarray(pts, float).reshape(-1, 2)
    return np.logical_and.reduceat(p @ n.T - off <= 1e-9, starts, axis=1)


def layers_at(folds: tuple, k: int, p) -> list[int]:
    """Indices of stage k's layers that contain the spot p."""
    return [int(i) for i in np.flatnonzero(membership(folds, k, [p])[0])]


@lru_cache(maxsize=256)
def _lineage(folds: tuple) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """Per stage: (flipped flags, parent indices, maps to the flat sheet (layers, 3, 3))."""
    return tuple((np.array([ly.flipped for ly in layers]), np.array([ly.parent for ly in layers]),
                  np.array([ly.to_sheet for ly in layers], float)) for layers in stages(folds))


def images(folds: tuple, k: int, pts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (spot, layer) pair of stage k with the spot inside the layer: spot indices, layer indices, and the
    spot's point on the flat sheet through that layer."""
    pts = np.asarray(pts, float).reshape(-1, 2)
    spot, layer = np.nonzero(membership(folds, k, pts))
    m = _lineage(folds)[k][2][layer]
    q = pts[spot]
    return spot, layer, np.einsum("kij,kj->ki", m[:, :2, :2], q) + m[:, :2, 2]


def unfolded(folds: tuple, k: int, p) -> list[Cell]:
    """Cells of the flat sheet that a punch at p after k folds goes through, one per layer."""
    return [(int(x), int(y)) for x, y in np.floor(images(folds, k, [p])[2])]


def pattern_of(folds: tuple, holes, stage: int | None = None) -> tuple[Cell, ...]:
    """The unfolded sheet's hole cells when `holes` are punched after `stage` folds (default: all of them)."""
    k = len(folds) if stage is None else stage
    cells = [(int(x), int(y)) for x, y in np.floor(images(folds, k, holes)[2])] if len(holes) else []
    if len(set(cells)) != len(cells):
        raise ValueError("fold_punch: two punches reach one cell of the sheet (distinct spots must not)")
    return tuple(sorted(cells))


@lru_cache(maxsize=256)
def _edges(folds: tuple) -> tuple[list[tuple[float, float, float, float]], ...]:
    """Per stage, the distinct edges (x0, y0, x1, y1) of its layers (stacked layers share many)."""
    return tuple(list(dict.fromkeys((*v, *ly.verts[(j + 1) % len(ly.verts)]) for ly in layers
                                    for j, v in enumerate(ly.verts))) for layers in stages(folds))


@lru_cache(maxsize=256)
def _clearance_frame(folds: tuple) -> tuple[np.ndarray, ...]:
    """What `clearances` measures against, stage len(folds) first and stage 0 last: per stage its distinct layer
    edges, padded to one count with copies of the first (a copy changes no minimum), as start x, start y,
    direction x, direction y and the clamped squared length of `point_segment_distances`, (stages, 1, edges)
    each; the a, b, c, hypot(a, b) of the next fold line of every stage but the last, (stages - 1, 1) each; and
    whether each final layer's ancestor came over with the flap at stage k (row len(folds) - k)."""
    st, edges = stages(folds), _edges(folds)[::-1]
    n = max(len(e) for e in edges)
    e = np.array([s + s[:1] * (n - len(s)) for s in edges], float)[:, None]
    dx, dy = e[..., 2] - e[..., 0], e[..., 3] - e[..., 1]
    lines = np.array([(*fold_line(f), math.hypot(*fold_line(f)[:2])) for f in folds[::-1]], float).reshape(-1, 4)
    anc, flips = list(range(len(st[-1]))), []
    for layers in st[:0:-1]:
        flips.append([layers[i].flipped for i in anc])
        anc = [layers[i].parent for i in anc]
    return (e[..., 0], e[..., 1], dx, dy, np.maximum(dx * dx + dy * dy, 1e-12), *lines.T[:, :, None],
            np.array(flips, bool).reshape(len(folds), len(st[-1])))


def clearances(folds: tuple, pts) -> np.ndarray:
    """Per final spot (k, 2): the smallest distance, over every stage, from an image of it to that stage's layer
    edges and to the next fold line (0 for a spot off the paper). Images are traced back through the layer
    lineage: a layer that came over with a flap undoes that fold's reflection."""
    pts = np.asarray(pts, float).reshape(-1, 2)
    spot, idx = np.nonzero(membership(folds, len(folds), pts))
    if not len(spot):
        return np.zeros(len(pts))
    ax, ay, dx, dy, dd, a, b, c, h, flips = _clearance_frame(folds)
    x, y = pts[spot, 0], pts[spot, 1]
    xs, ys = [x], [y]
    for f, fold in zip(flips[:, idx], folds[::-1]):
        rx, ry = _reflect(fold[0], fold[1], x, y)
        x, y = np.where(f, rx, x), np.where(f, ry, y)
        xs.append(x)
        ys.append(y)
    # Every stage at once, coordinate by coordinate the arithmetic of `point_segment_distances` and
    # `line_distances` (the same bits): (stages, images, edges) arrays.
    x, y = np.array(xs), np.array(ys)
    wx, wy = x[..., None] - ax, y[..., None] - ay
    u = np.clip((wx * dx + wy * dy) / dd, 0.0, 1.0)
    d = np.hypot(wx - u * dx, wy - u * dy).min(axis=(0, 2))
    if len(folds):
        d = np.minimum(d, (np.abs(a * x[1:] + b * y[1:] - c) / h).min(axis=0))
    best = np.full(len(pts), np.inf)
    np.minimum.at(best, spot, d)
    return np.where(np.isfinite(best), best, 0.0)


def flap_layers(folds: tuple, pts) -> np.ndarray:
    """Per final spot (k, 2): how many of its layers came over with the last fold's flap."""
    flipped = np.array([ly.flipped for ly in stages(folds)[-1]])
    return (membership(folds, len(folds), pts) & flipped[None]).sum(axis=1)
