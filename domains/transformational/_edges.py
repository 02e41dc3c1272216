"""Unit edges on a square lattice of points (x, y), y down, for embedded_figures: shapes as edge sets, their
placements (translations, optionally quarter turns) as bitmasks over the lattice's edges, maximal straight segments,
and the one-diagonal-per-cell rule."""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

from grip.geometry import D4_OPS

SIZE = 7                                    # lattice points per side
Edge = tuple                                # ((x0, y0), (x1, y1)) with the smaller point first


def edge(p, q) -> Edge:
    if type(p) is not tuple or type(q) is not tuple:
        p, q = tuple(p), tuple(q)
    return (p, q) if p <= q else (q, p)


def is_unit(e: Edge) -> bool:
    (x0, y0), (x1, y1) = e
    return max(abs(x1 - x0), abs(y1 - y0)) == 1 and (x0, y0) != (x1, y1)


def is_diagonal(e: Edge) -> bool:
    (x0, y0), (x1, y1) = e
    return x0 != x1 and y0 != y1


def cell_of(e: Edge) -> tuple[int, int]:
    (x0, y0), (x1, y1) = e
    return (min(x0, x1), min(y0, y1))


@lru_cache(maxsize=None)
def all_edges(size: int = SIZE) -> tuple[Edge, ...]:
    out = []
    for y in range(size):
        for x in range(size):
            for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)):
                if 0 <= x + dx < size and 0 <= y + dy < size:
                    out.append(edge((x, y), (x + dx, y + dy)))
    return tuple(sorted(out))


@lru_cache(maxsize=None)
def edge_index(size: int = SIZE) -> dict:
    return {e: i for i, e in enumerate(all_edges(size))}


def mask(edges, size: int = SIZE) -> int:
    idx = edge_index(size)
    m = 0
    for e in edges:
        i = idx.get(e) if type(e) is tuple else None      # a normalised edge, the usual case, looked up as it is
        m |= 1 << (idx[edge(*e)] if i is None else i)
    return m


def diagonals_ok(edges) -> bool:
    """At most one diagonal per lattice cell, so diagonals never cross."""
    cells = [cell_of(e) for e in edges if is_diagonal(e)]
    return len(cells) == len(set(cells))


def normalise(edges) -> tuple[Edge, ...]:
    pts = [p for e in edges for p in e]
    x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
    out = set()
    for a, b in edges:
        p, q = (a[0] - x0, a[1] - y0), (b[0] - x0, b[1] - y0)
        out.add((p, q) if p <= q else (q, p))                  # `edge(p, q)`
    return tuple(sorted(out))


def turned(edges, quarter_turns: int) -> tuple[Edge, ...]:
    """The edge set turned clockwise by quarter turns, normalised."""
    a, b, c, d = D4_OPS[("id", "r90", "r180", "r270")[quarter_turns % 4]]     # as `lattice_apply`
    return normalise([((a * p[0] + b * p[1], c * p[0] + d * p[1]), (a * q[0] + b * q[1], c * q[0] + d * q[1]))
                      for p, q in edges])


def extent(edges) -> tuple[int, int]:
    pts = [p for e in edges for p in e]
    return max(p[0] for p in pts) - min(p[0] for p in pts), max(p[1] for p in pts) - min(p[1] for p in pts)


# An edge's padded index: 4 (x0 size + y0) + the slot of its direction. all_edges lists the edges by first point
# and then by these slots (the second point's order), so the padded index grows with the `all_edges` index, and
# translating by (dx, dy) adds 4 (dx size + dy) to it.
SLOT = {(0, 1): 0, (1, -1): 1, (1, 0): 2, (1, 1): 3}


def _padded(e: Edge, size: int = SIZE) -> int:
    (x0, y0), (x1, y1) = e
    return 4 * (x0 * size + y0) + SLOT[(x1 - x0, y1 - y0)]


@lru_cache(maxsize=None)
def _index_of_padded(size: int = SIZE):
    """The `all_edges` index of each padded index (-1 where no unit edge)."""
    import numpy as np
    g = np.full(4 * size * size, -1, dtype=np.int64)
    for i, e in enumerate(all_edges(size)):
        g[_padded(e, size)] = i
    return g


@lru_cache(maxsize=4096)
def _placement_rows(shape: tuple, turns: bool, size: int = SIZE):
    """`placement_indices` as an array, one row per placement."""
    import numpy as np
    parts = []
    for s in _turns_of(shape, turns):
        w, h = extent(s)
        # One row per translation (dx, dy), dx in 0..size-w-1, dy in 0..size-h-1, in that order: the rows of one
        # turn are sorted, and in lexicographic order (their first entries grow).
        shifts = [4 * (dx * size + dy) for dx in range(size - w) for dy in range(size - h)]
        parts.append(np.add.outer(shifts, sorted(_padded(e, size) for e in s)))
    rows = parts[0]
    if len(parts) > 1:                                                      # several turns
        rows = np.concatenate(parts)
        rows = rows[np.lexsort(rows.T[::-1])]                               # lexicographic order
        rows = rows[np.r_[True, (rows[1:] != rows[:-1]).any(axis=1)]]       # each edge set once
    return _index_of_padded(size)[rows]


@lru_cache(maxsize=4096)
def placement_indices(shape: tuple, turns: bool, size: int = SIZE) -> tuple[tuple[int, ...], ...]:
    """Every distinct edge set of the shape inside the lattice, as sorted `all_edges` indices: translations, and
    quarter turns if `turns`. A square's four turns are one placement."""
    return tuple(map(tuple, _placement_rows(shape, turns, size).tolist()))


@lru_cache(maxsize=4096)
def placements(shape: tuple, turns: bool, size: int = SIZE) -> tuple[int, ...]:
    """The placements as bitmasks over `all_edges`."""
    import numpy as np
    bits = np.packbits(placement_matrix(shape, turns, size).astype(np.uint8), axis=1, bitorder="little")
    return tuple(int.from_bytes(row.tobytes(), "little") for row in bits)


@lru_cache(maxsize=256)
def _absent(figure: int, size: int = SIZE):
    import numpy as np
    n = len(all_edges(size))
    bits = np.unpackbits(np.frombuffer(figure.to_bytes((n + 7) // 8, "little"), np.uint8), bitorder="little")
    return (1 - bits[:n]).astype(np.int16)


def missing_counts(shape: tuple, figure: int, turns: bool):
    """Missing edges of every placement (rows of `placement_matrix`) in the figure (bitmask)."""
    return placement_matrix(shape, turns) @ _absent(figure)


def missing(shape: tuple, figure: int, turns: bool) -> int:
    """Fewest unit edges of the shape absent from the figure (bitmask) over its placements: 0 = it is hidden there."""
    return int(missing_counts(shape, figure, turns).min())


def occurrences(shape: tuple, figure: int, turns: bool) -> list[int]:
    """The placements (bitmasks) lying wholly in the figure."""
    rows = placements(shape, turns)
    return [rows[int(i)] for i in (missing_counts(shape, figure, turns) == 0).nonzero()[0]]


def edges_of(m: int, size: int = SIZE) -> list[Edge]:
    es = all_edges(size)
    return [es[i] for i in range(len(es)) if m >> i & 1]


def segments(edges) -> list[Edge]:
    """Maximal straight segments: collinear unit edges sharing an end merged into one (endpoints, smaller first)."""
    es = {edge(*e) for e in edges}
    out = []
    # Each run is walked from its first edge, the one with no collinear edge before it. A normalised edge (a, b)
    # has b > a, so d = b - a steps forward in that order: (a - d, a) and (b, b + d) are normalised too.
    for a, b in es:
        dx, dy = b[0] - a[0], b[1] - a[1]
        if ((a[0] - dx, a[1] - dy), a) in es:
            continue
        nxt = (b[0] + dx, b[1] + dy)
        while (b, nxt) in es:
            b, nxt = nxt, (nxt[0] + dx, nxt[1] + dy)
        out.append((a, b))
    return sorted(out)


def length(seg: Edge) -> int:
    """The number of unit edges of a straight lattice segment."""
    (x0, y0), (x1, y1) = seg
    return max(abs(x1 - x0), abs(y1 - y0))


def unit_edges(seg: Edge) -> list[Edge]:
    """The unit edges of a straight lattice segment (horizontal, vertical or 45 degrees)."""
    (x0, y0), (x1, y1) = seg
    n = max(abs(x1 - x0), abs(y1 - y0))
    dx, dy = (x1 - x0) // n, (y1 - y0) // n
    return [edge((x0 + i * dx, y0 + i * dy), (x0 + (i + 1) * dx, y0 + (i + 1) * dy)) for i in range(n)]


def run_from(p, d, n: int) -> list[Edge]:
    """n unit edges from point p in direction d (a unit step)."""
    return [edge((p[0] + i * d[0], p[1] + i * d[1]), (p[0] + (i + 1) * d[0], p[1] + (i + 1) * d[1]))
            for i in range(n)]


def ends(run) -> tuple:
    """The two ends of a straight run of unit edges, smaller first."""
    return tuple(sorted(p for p, d in degrees(run).items() if d == 1))


def inside(e: Edge, size: int = SIZE) -> bool:
    return all(0 <= v < size for p in e for v in p)


def degrees(edges) -> dict:
    deg: dict = {}
    for a, b in edges:
        deg[a] = deg.get(a, 0) + 1
        deg[b] = deg.get(b, 0) + 1
    return deg


def is_closed(edges) -> bool:
    return all(d == 2 for d in degrees(edges).values())


def is_simple(edges) -> bool:
    """A connected simple path (two ends of degree 1, the rest 2) or simple cycle (all degree 2)."""
    deg = degrees(edges)
    if any(d > 2 for d in deg.values()) or sum(d == 1 for d in deg.values()) not in (0, 2):
        return False
    adj: dict = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    start = min(adj)
    seen, todo = set(), [start]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo += adj[p]
    return len(seen) == len(adj)


@lru_cache(maxsize=4096)
def placement_matrix(shape: tuple, turns: bool, size: int = SIZE):
    """Placements as rows of a 0/1 matrix over `all_edges` (for counting missing edges of every placement at once)."""
    import numpy as np
    rows = _placement_rows(shape, turns, size)
    m = np.zeros((len(rows), len(all_edges(size))), dtype=np.int16)
    m[np.arange(len(rows))[:, None], rows] = 1
    return m


def vector(edges, size: int = SIZE):
    import numpy as np
    v = np.zeros(len(all_edges(size)), dtype=np.int16)
    idx = edge_index(size)
    for e in edges:
        v[idx[edge(*e)]] = 1
    return v


@lru_cache(maxsize=8192)
def _turns_of(shape: tuple, turns: bool) -> tuple[tuple[Edge, ...], ...]:
    return tuple(dict.fromkeys(turned(shape, k) for k in (range(4) if turns else (0,))))


@lru_cache(maxsize=8192)
def _starts_by_direction(edges: tuple) -> dict:
    """Per direction of the edges: their first points, each as the int 1024 x + y, so that the difference of two is
    the translation between them, as one int (coordinates stay far below 512)."""
    by_dir: dict = {}
    for (b0, b1) in edges:
        by_dir.setdefault((b1[0] - b0[0], b1[1] - b0[1]), []).append(1024 * b0[0] + b0[1])
    return by_dir


def best_overlap(small: tuple, big: tuple, turns: bool) -> int:
    """max over quarter turns (if `turns`) and all translations t of |(small + t) ∩ big|: the most edges of `small`
    that `big` alone can supply (no lattice bounds). An edge is (first point, direction); two edges of the same
    direction coincide under exactly one translation, so the best t is the most common difference."""
    by_dir = _starts_by_direction(big)
    best = 0
    for s in _turns_of(small, turns):
        votes = Counter([b - a for d, starts in _starts_by_direction(s).items() for a in starts
                         for b in by_dir.get(d, ())])
        if votes:
            best = max(best, max(votes.values()))
    return best
