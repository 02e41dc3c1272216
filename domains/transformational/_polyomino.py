"""Polyomino tiling for combination_2d: cells as (x, y) on a 6 x 6 board, sets of cells as bitmasks (bit x + 6 y),
placements of a piece inside a region, exact-cover search and the overlap-allowed coverage that measures how far a
set of pieces is from tiling. Orientations come from `grip.geometry` (the square's symmetries on cell sets)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from grip.draws import Draws
from grip.geometry import D4_OPS, ROTATION_OPS

BOARD = 6
Cells = tuple[tuple[int, int], ...]


def mask_of(cells) -> int:
    m = 0
    for x, y in cells:
        m |= 1 << (x + BOARD * y)
    return m


# Column x of a mask, shifted down by x, is a subset of _COLUMN_0; per column, a table from that subset to its
# cells (or their one-cell masks) in y order, so a mask's cells in (x, y) order are six lookups.
_COLUMN_0 = sum(1 << BOARD * y for y in range(BOARD))
_YS = {sum(1 << BOARD * y for y in ys): ys
       for ys in (tuple(y for y in range(BOARD) if c >> y & 1) for c in range(1 << BOARD))}
_C0, _C1, _C2, _C3, _C4, _C5 = ({col: tuple((x, y) for y in ys) for col, ys in _YS.items()} for x in range(BOARD))
_B0, _B1, _B2, _B3, _B4, _B5 = ({col: tuple(1 << (x + BOARD * y) for y in ys) for col, ys in _YS.items()}
                                for x in range(BOARD))


def cells_of(mask: int) -> Cells:
    """The mask's cells, sorted."""
    c = _COLUMN_0
    return _C0[mask & c] + _C1[mask >> 1 & c] + _C2[mask >> 2 & c] + _C3[mask >> 3 & c] + _C4[mask >> 4 & c] + \
        _C5[mask >> 5 & c]


def cell_bits(mask: int) -> tuple[int, ...]:
    """The one-cell masks of the mask's cells, in the order of `cells_of`."""
    c = _COLUMN_0
    return _B0[mask & c] + _B1[mask >> 1 & c] + _B2[mask >> 2 & c] + _B3[mask >> 3 & c] + _B4[mask >> 4 & c] + \
        _B5[mask >> 5 & c]


def shape_key(mask: int) -> int:
    """The (non-empty) mask translated to touch the board's top and left edges: the mask of its `normalise`d cells,
    equal for translates."""
    mask >>= BOARD * (((mask & -mask).bit_length() - 1) // BOARD)
    while not mask & _LEFT_COLUMN:
        mask >>= 1           # column 0 is empty, so no cell moves into the row above
    return mask


@lru_cache(maxsize=4096)
def orbit_keys(key: int) -> frozenset[int]:
    """The `shape_key`s of a shape's turns and mirror images."""
    return frozenset(_image_keys(key))


def _image_keys(key: int) -> list[int]:
    """The `shape_key`s of the mask's images under `D4_OPS`, in its order."""
    r0, r1, r2, r3, r4, r5 = (key >> BOARD * y & _ROW_0 for y in range(BOARD))
    return [shape_key(t0[r0] | t1[r1] | t2[r2] | t3[r3] | t4[r4] | t5[r5]) for t0, t1, t2, t3, t4, t5 in _IMAGE_ROWS]


def _image_rows(a: int, b: int, c: int, d: int) -> tuple[tuple[int, ...], ...]:
    """Per board row y: its cells' mask (shifted down to row 0) -> the mask of their images under (x, y) ->
    (a x + b y, c x + d y), moved back onto the board (the op maps the board onto itself)."""
    top = BOARD - 1
    dx, dy = top * (a + b < 0), top * (c + d < 0)
    return tuple(tuple(mask_of([(a * x + b * y + dx, c * x + d * y + dy) for x in range(BOARD) if r >> x & 1])
                       for r in range(1 << BOARD)) for y in range(BOARD))


_ROW_0 = (1 << BOARD) - 1
_IMAGE_ROWS = tuple(_image_rows(*m) for m in D4_OPS.values())


def normalise(cells) -> Cells:
    """`grip.geometry.normalise_lattice` for integer cells (no int() conversion of each coordinate): translated to
    x, y >= 0 and sorted."""
    if not cells:
        return ()
    x0, y0 = min(x for x, _ in cells), min(y for _, y in cells)
    return tuple(sorted({(x - x0, y - y0) for x, y in cells}))


def apply(op: str, cells) -> Cells:
    """`grip.geometry.cells_apply` for integer cells: the cells mapped by one of `D4_OPS`, then normalised."""
    a, b, c, d = D4_OPS[op]
    # (the unit offsets of `cells_apply` move every cell alike, so normalising drops them)
    xs = [a * x + b * y for x, y in cells]
    ys = [c * x + d * y for x, y in cells]
    if not xs:
        return ()
    x0, y0 = min(xs), min(ys)
    return tuple(sorted({(x - x0, y - y0) for x, y in zip(xs, ys)}))


@lru_cache(maxsize=4096)
def orientations(piece: Cells, flips: bool) -> tuple[Cells, ...]:
    """The distinct normalised images of a piece (on the board) under the quarter turns (and the mirrors, with
    `flips`): the turns' images first, each in `D4_OPS` order."""
    keys = _image_keys(mask_of(piece))
    out: list[int] = []
    for i in _TURNS_THEN_MIRRORS if flips else _TURNS:
        if keys[i] not in out:
            out.append(keys[i])
    return tuple(cells_of(k) for k in out)


def congruent(a: Cells, b: Cells, flips: bool = True) -> bool:
    return normalise(b) in orientations(normalise(a), flips)


def chiral(piece: Cells) -> bool:
    """Its mirror image is not a turn of it."""
    return _chiral(shape_key(mask_of(piece)))


@lru_cache(maxsize=4096)
def _chiral(key: int) -> bool:
    images = _image_keys(key)
    return images[_FLIP_X] not in [images[i] for i in _TURNS]


_FLIP_X, _TURNS = list(D4_OPS).index("flip_x"), [list(D4_OPS).index(op) for op in ROTATION_OPS]
_TURNS_THEN_MIRRORS = _TURNS + [i for i in range(len(D4_OPS)) if i not in _TURNS]


@lru_cache(maxsize=8192)
def placements(piece: Cells, region: int, flips: bool) -> tuple[int, ...]:
    """Bitmasks of every placement of the piece (turned, and mirrored with `flips`) lying inside `region`."""
    out = []             # distinct orientations never give the same mask
    for base, offsets, shifts in _orientation_masks(piece, flips):
        # shift s puts every cell inside the region iff bit s is set in region >> (each cell's offset)
        for o in offsets:
            shifts &= region >> o
        while shifts:
            low = shifts & -shifts
            out.append(base << (low.bit_length() - 1))
            shifts ^= low
    out.sort()
    return tuple(out)


@lru_cache(maxsize=4096)
def _orientation_masks(piece: Cells, flips: bool) -> tuple[tuple[int, tuple[int, ...], int], ...]:
    """Per orientation: its mask at the board's corner, its cells' bit offsets, and the one-bit masks of the shifts
    (dx + BOARD dy) that keep it on the board."""
    out = []
    for o in orientations(piece, flips):
        offsets = tuple(x + BOARD * y for x, y in o)
        out.append((sum(1 << i for i in offsets), offsets, _SHIFTS[max(x for x, _ in o), max(y for _, y in o)]))
    return tuple(out)


_SHIFTS = {(w - 1, h - 1): sum(1 << (dx + BOARD * dy) for dy in range(BOARD - h + 1) for dx in range(BOARD - w + 1))
           for w in range(1, BOARD + 1) for h in range(1, BOARD + 1)}       # by the shape's (max x, max y)


def tilings(pieces: tuple[Cells, ...], region: int, flips: bool, limit: int = 64) -> tuple[list[tuple[int, ...]], int]:
    """Exact covers of `region` by all the pieces, each used once: (placement masks per piece for up to `limit`
    tilings, search nodes visited). Branching on the lowest uncovered cell visits each tiling once."""
    if sum(len(p) for p in pieces) != region.bit_count():
        return [], 0
    # A placement inside `left` that covers its lowest cell has that cell as its own lowest: each piece's
    # placements are grouped by their lowest cell (in their sorted order), so a node tries only those.
    places = [_by_lowest(p, region, flips) for p in pieces]
    found: list[tuple[int, ...]] = []
    nodes = 0
    chosen = [0] * len(pieces)

    def go(left: int, used: int) -> None:
        nonlocal nodes
        nodes += 1
        if len(found) >= limit:
            return
        if not left:
            found.append(tuple(chosen))
            return
        low = left & -left
        for i, pl in enumerate(places):
            if used >> i & 1:
                continue
            for m in pl.get(low, ()):
                if m & left == m:
                    chosen[i] = m
                    go(left & ~m, used | 1 << i)
    go(region, 0)
    return found, nodes


@lru_cache(maxsize=8192)
def _by_lowest(piece: Cells, region: int, flips: bool) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for m in placements(piece, region, flips):
        out.setdefault(m & -m, []).append(m)
    return out


def uncovered(pieces: tuple[Cells, ...], region: int, flips: bool) -> int:
    """|region| minus the most cells the pieces can cover when each is placed inside it (overlaps allowed; a piece
    with no placement is left out): 0 exactly when the areas fit and the pieces tile it."""
    places = [pl for pl in (placements(p, region, flips) for p in pieces) if pl]
    reach = np.zeros(1, dtype=np.uint64)
    for pl in places[:-1]:
        reach = np.unique((reach[:, None] | np.array(pl, dtype=np.uint64)[None, :]).ravel())
    if places:           # the last piece's unions are only counted, so they need no deduplication
        reach = reach[:, None] | np.array(places[-1], dtype=np.uint64)[None, :]
    return int(region.bit_count() - np.bitwise_count(reach).max())


FULL = (1 << BOARD * BOARD) - 1
_NOT_LEFT = sum(1 << (x + BOARD * y) for x in range(1, BOARD) for y in range(BOARD))      # cells with x >= 1
_NOT_RIGHT = sum(1 << (x + BOARD * y) for x in range(BOARD - 1) for y in range(BOARD))   # cells with x <= 4
_LEFT_COLUMN = mask_of([(0, y) for y in range(BOARD)])
_BORDER = mask_of([(x, y) for x in range(BOARD) for y in range(BOARD) if x in (0, BOARD - 1) or y in (0, BOARD - 1)])


def neighbours(cell) -> list[tuple[int, int]]:
    x, y = cell
    return [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= x + dx < BOARD and 0 <= y + dy < BOARD]


def expand(m: int) -> int:
    """The cells edge-adjacent to the mask's cells (the mask itself included)."""
    return (m | ((m << 1) & _NOT_LEFT) | ((m >> 1) & _NOT_RIGHT) | (m << BOARD) | (m >> BOARD)) & FULL


def _flood(seed: int, within: int) -> int:
    seen = seed & within
    while True:
        nxt = (seen | ((seen << 1) & _NOT_LEFT) | ((seen >> 1) & _NOT_RIGHT) | (seen << BOARD) | (seen >> BOARD)) \
            & within                                       # `expand`, inlined (within lies on the board)
        if nxt == seen:
            return seen
        seen = nxt


def connected(cells) -> bool:
    m = cells if isinstance(cells, int) else mask_of(cells)
    return bool(m) and _flood(m & -m, m) == m


def has_hole(cells) -> bool:
    """An empty cell of the board not joined to the board's edge through empty cells."""
    m = cells if isinstance(cells, int) else mask_of(cells)
    empty = FULL & ~m
    return _flood(empty & _BORDER, empty) != empty


def _bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low)
        m ^= low
    return out


def grow(d: Draws, n: int, start=None) -> Cells | None:
    """A random connected set of n cells grown one neighbour at a time (None if it gets stuck)."""
    integers = d.integers
    m = mask_of([start]) if start is not None else 1 << integers(BOARD * BOARD)
    for _ in range(n - 1):
        front = ((m << 1) & _NOT_LEFT | (m >> 1) & _NOT_RIGHT | (m << BOARD) | (m >> BOARD)) & FULL & ~m   # `expand`
        if not front:
            return None
        # one cell of the front, uniformly: drop the c lowest; integers(1) draws nothing from the generator (it
        # returns 0 without reading its state), so a one-cell front skips it
        c = front.bit_count()
        if c != 1:
            for _ in range(integers(c)):
                front &= front - 1
        m |= front & -front
    return cells_of(m)


def partition(d: Draws, region: Cells, k: int, min_size: int = 3) -> list[Cells] | None:
    """`region` split into k connected pieces of at least `min_size` cells by growing k seeds, the smallest piece
    that can still grow first (ties at random)."""
    free = mask_of(region)
    parts = []
    for i in d.subset(len(region), k):
        x, y = region[i]
        b = 1 << (x + BOARD * y)
        parts.append(b)
        free &= ~b
    sizes = [1] * k
    grown = [expand(p) for p in parts]       # each part's `expand`, so its front is grown[i] & free
    integers = d.integers
    while free:
        pick, least = [], BOARD * BOARD                # the parts that can grow and are smallest, in index order
        for i in range(k):
            if grown[i] & free:
                s = sizes[i]
                if s < least:
                    pick, least = [i], s
                elif s == least:
                    pick.append(i)
        if not pick:
            return None
        i = pick[integers(len(pick))] if len(pick) > 1 else pick[0]    # integers(1) draws nothing
        front = grown[i] & free
        c = front.bit_count()                          # one cell of the front, uniformly (as in `grow`)
        if c != 1:
            for _ in range(integers(c)):
                front &= front - 1
        b = front & -front
        p = parts[i] | b
        parts[i] = p
        sizes[i] += 1
        free ^= b
        grown[i] = p | ((p << 1) & _NOT_LEFT) | ((p >> 1) & _NOT_RIGHT) | (p << BOARD) | (p >> BOARD)   # `expand`
    return [cells_of(p) for p in parts] if min(sizes) >= min_size else None


def compact_region(d: Draws, n: int) -> Cells | None:
    """A random hole-free polyomino of n cells on the board: grown cell by cell, holes filled, then trimmed back
    to n by removing boundary cells that keep it connected and hole-free."""
    start = grow(d, n)
    if start is None:
        return None
    m = mask_of(start)
    empty = FULL & ~m
    m = FULL & ~_flood(empty & _BORDER, empty)          # holes filled
    while m.bit_count() > n:
        edge = m & (expand(FULL & ~m) | _BORDER)
        bits = _bits(edge)
        for b in [bits[i] for i in d.permutation(len(bits))]:
            rest = m & ~b
            if connected(rest) and not has_hole(rest):
                m = rest
                break
        else:
            return None
    return cells_of(m)
