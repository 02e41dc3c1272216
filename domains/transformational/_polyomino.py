"""Polyomino tiling for combination_2d: cells as (x, y) on a 6 x 6 board, sets of cells as bitmasks (bit x + 6 y),
placements of a piece inside a region, exact-cover search and the overlap-allowed coverage that measures how far a
set of pieces is from tiling. Orientations come from `grip.geometry` (the square's symmetries on cell sets)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from grip.geometry import D4_OPS, ROTATION_OPS

BOARD = 6
Cells = tuple[tuple[int, int], ...]


def mask_of(cells) -> int:
    m = 0
    for x, y in cells:
        m |= 1 << (x + BOARD * y)
    return m


def cells_of(mask: int) -> Cells:
    out = []
    while mask:
        low = mask & -mask
        i = low.bit_length() - 1
        out.append((i % BOARD, i // BOARD))
        mask ^= low
    out.sort()
    return tuple(out)


def cell_bits(mask: int) -> list[int]:
    """The one-cell masks of the mask's cells, in the order of `cells_of`."""
    return [1 << (x + BOARD * y) for x, y in cells_of(mask)]


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
    ox, oy = min(a, 0) + min(b, 0), min(c, 0) + min(d, 0)
    return normalise([(a * x + b * y + ox, c * x + d * y + oy) for x, y in cells])


@lru_cache(maxsize=4096)
def orientations(piece: Cells, flips: bool) -> tuple[Cells, ...]:
    """The distinct normalised images of a piece under the quarter turns (and the mirrors, with `flips`)."""
    ops = tuple(D4_OPS) if flips else ROTATION_OPS
    out: list[Cells] = []
    for op in ops:
        img = apply(op, piece)
        if img not in out:
            out.append(img)
    return tuple(out)


def congruent(a: Cells, b: Cells, flips: bool = True) -> bool:
    return normalise(b) in orientations(normalise(a), flips)


def chiral(piece: Cells) -> bool:
    """Its mirror image is not a turn of it."""
    return apply("flip_x", piece) not in orientations(normalise(piece), False)


@lru_cache(maxsize=8192)
def placements(piece: Cells, region: int, flips: bool) -> tuple[int, ...]:
    """Bitmasks of every placement of the piece (turned, and mirrored with `flips`) lying inside `region`."""
    out = []
    for o in orientations(piece, flips):
        w, h = max(x for x, _ in o) + 1, max(y for _, y in o) + 1
        base = mask_of(o)
        for dy in range(BOARD - h + 1):
            for dx in range(BOARD - w + 1):
                m = base << (dx + BOARD * dy)
                if m & region == m:
                    out.append(m)
    return tuple(sorted(set(out)))


def tilings(pieces: tuple[Cells, ...], region: int, flips: bool, limit: int = 64) -> tuple[list[tuple[int, ...]], int]:
    """Exact covers of `region` by all the pieces, each used once: (placement masks per piece for up to `limit`
    tilings, search nodes visited). Branching on the lowest uncovered cell visits each tiling once."""
    if sum(len(p) for p in pieces) != bin(region).count("1"):
        return [], 0
    places = [placements(p, region, flips) for p in pieces]
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
            for m in pl:
                if m & low and m & left == m:
                    chosen[i] = m
                    go(left & ~m, used | 1 << i)
    go(region, 0)
    return found, nodes


def uncovered(pieces: tuple[Cells, ...], region: int, flips: bool) -> int:
    """|region| minus the most cells the pieces can cover when each is placed inside it (overlaps allowed; a piece
    with no placement is left out): 0 exactly when the areas fit and the pieces tile it."""
    reach = np.zeros(1, dtype=np.uint64)
    for p in pieces:
        pl = placements(p, region, flips)
        if not pl:
            continue
        reach = np.unique((reach[:, None] | np.array(pl, dtype=np.uint64)[None, :]).ravel())
    return int(bin(region).count("1") - np.bitwise_count(reach).max())


FULL = (1 << BOARD * BOARD) - 1
_NOT_LEFT = sum(1 << (x + BOARD * y) for x in range(1, BOARD) for y in range(BOARD))      # cells with x >= 1
_NOT_RIGHT = sum(1 << (x + BOARD * y) for x in range(BOARD - 1) for y in range(BOARD))   # cells with x <= 4
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
        nxt = expand(seen) & within
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


def _pick(rng: np.random.Generator, m: int) -> int:
    """One set bit of m, uniformly."""
    for _ in range(int(rng.integers(m.bit_count()))):
        m &= m - 1
    return m & -m


def grow(rng: np.random.Generator, n: int, start=None) -> Cells | None:
    """A random connected set of n cells grown one neighbour at a time (None if it gets stuck)."""
    m = mask_of([start]) if start is not None else 1 << int(rng.integers(BOARD * BOARD))
    for _ in range(n - 1):
        front = expand(m) & ~m
        if not front:
            return None
        m |= _pick(rng, front)
    return cells_of(m)


def partition(rng: np.random.Generator, region: Cells, k: int, min_size: int = 3) -> list[Cells] | None:
    """`region` split into k connected pieces of at least `min_size` cells by growing k seeds, the smallest piece
    that can still grow first (ties at random)."""
    free = mask_of(region)
    parts = []
    for i in rng.choice(len(region), size=k, replace=False):
        b = mask_of([region[int(i)]])
        parts.append(b)
        free &= ~b
    sizes = [1] * k
    fronts = [expand(p) & free for p in parts]       # kept up to date: only the grown part's front is recomputed
    while free:
        able = [i for i in range(k) if fronts[i]]
        if not able:
            return None
        least = min(sizes[i] for i in able)
        pick = [i for i in able if sizes[i] == least]
        i = pick[int(rng.integers(len(pick)))]
        b = _pick(rng, fronts[i])
        parts[i] |= b
        sizes[i] += 1
        free &= ~b
        fronts = [f & ~b for f in fronts]
        fronts[i] = expand(parts[i]) & free
    return [cells_of(p) for p in parts] if min(sizes) >= min_size else None


def compact_region(rng: np.random.Generator, n: int) -> Cells | None:
    """A random hole-free polyomino of n cells on the board: grown cell by cell, holes filled, then trimmed back
    to n by removing boundary cells that keep it connected and hole-free."""
    start = grow(rng, n)
    if start is None:
        return None
    m = mask_of(start)
    empty = FULL & ~m
    m = FULL & ~_flood(empty & _BORDER, empty)          # holes filled
    while bin(m).count("1") > n:
        edge = m & (expand(FULL & ~m) | _BORDER)
        for b in [(_bits(edge))[int(i)] for i in rng.permutation(bin(edge).count("1"))]:
            rest = m & ~b
            if connected(rest) and not has_hole(rest):
                m = rest
                break
        else:
            return None
    return cells_of(m)
