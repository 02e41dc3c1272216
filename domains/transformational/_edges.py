"""Unit edges on a square lattice of points (x, y), y down, for embedded_figures: shapes as edge sets, their
placements (translations, optionally quarter turns) as bitmasks over the lattice's edges, maximal straight segments,
and the one-diagonal-per-cell rule."""
from __future__ import annotations

from functools import lru_cache

from grip.geometry import lattice_apply

SIZE = 7                                    # lattice points per side
Edge = tuple                                # ((x0, y0), (x1, y1)) with the smaller point first


def edge(p, q) -> Edge:
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
        m |= 1 << idx[edge(*e)]
    return m


def diagonals_ok(edges) -> bool:
    """At most one diagonal per lattice cell, so diagonals never cross."""
    cells = [cell_of(e) for e in edges if is_diagonal(e)]
    return len(cells) == len(set(cells))


def normalise(edges) -> tuple[Edge, ...]:
    pts = [p for e in edges for p in e]
    x0, y0 = min(p[0] for p in pts), min(p[1] for p in pts)
    return tuple(sorted({edge((a[0] - x0, a[1] - y0), (b[0] - x0, b[1] - y0)) for a, b in edges}))


def turned(edges, quarter_turns: int) -> tuple[Edge, ...]:
    """The edge set turned clockwise by quarter turns, normalised."""
    op = ("id", "r90", "r180", "r270")[quarter_turns % 4]
    return normalise([edge(*lattice_apply(op, e)) for e in edges])


def extent(edges) -> tuple[int, int]:
    pts = [p for e in edges for p in e]
    return max(p[0] for p in pts) - min(p[0] for p in pts), max(p[1] for p in pts) - min(p[1] for p in pts)


@lru_cache(maxsize=4096)
def placement_indices(shape: tuple, turns: bool, size: int = SIZE) -> tuple[tuple[int, ...], ...]:
    """Every distinct edge set of the shape inside the lattice, as sorted `all_edges` indices: translations, and
    quarter turns if `turns`. A square's four turns are one placement."""
    idx = edge_index(size)
    out = set()
    for k in (range(4) if turns else (0,)):
        s = turned(shape, k)
        w, h = extent(s)
        for dx in range(size - w):
            for dy in range(size - h):
                out.add(tuple(sorted(idx[edge((a[0] + dx, a[1] + dy), (b[0] + dx, b[1] + dy))] for a, b in s)))
    return tuple(sorted(out))


@lru_cache(maxsize=4096)
def placements(shape: tuple, turns: bool, size: int = SIZE) -> tuple[int, ...]:
    """The placements as bitmasks over `all_edges`."""
    return tuple(sum(1 << i for i in row) for row in placement_indices(shape, turns, size))


@lru_cache(maxsize=256)
def _absent(figure: int, size: int = SIZE):
    import numpy as np
    n = len(all_edges(size))
    return np.array([0 if figure >> i & 1 else 1 for i in range(n)], dtype=np.int16)


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
    out, seen = [], set()
    for e in sorted(es):
        if e in seen:
            continue
        (x0, y0), (x1, y1) = e
        d = (x1 - x0, y1 - y0)
        a, b = (x0, y0), (x1, y1)
        while edge((a[0] - d[0], a[1] - d[1]), a) in es:
            a = (a[0] - d[0], a[1] - d[1])
        while edge(b, (b[0] + d[0], b[1] + d[1])) in es:
            b = (b[0] + d[0], b[1] + d[1])
        run, p = [], a
        while p != b:
            q = (p[0] + d[0], p[1] + d[1])
            run.append(edge(p, q))
            p = q
        seen.update(run)
        out.append(edge(a, b))
    return sorted(set(out))


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
    rows = placement_indices(shape, turns, size)
    m = np.zeros((len(rows), len(all_edges(size))), dtype=np.int16)
    for r, row in enumerate(rows):
        m[r, list(row)] = 1
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


def best_overlap(small: tuple, big: tuple, turns: bool) -> int:
    """max over quarter turns (if `turns`) and all translations t of |(small + t) ∩ big|: the most edges of `small`
    that `big` alone can supply (no lattice bounds). An edge is (first point, direction); two edges of the same
    direction coincide under exactly one translation, so the best t is the most common difference."""
    from collections import Counter
    best = 0
    for s in _turns_of(small, turns):
        votes = Counter((b[0][0] - a[0][0], b[0][1] - a[0][1]) for a in s for b in big
                        if (a[1][0] - a[0][0], a[1][1] - a[0][1]) == (b[1][0] - b[0][0], b[1][1] - b[0][1]))
        best = max(best, max(votes.values(), default=0))
    return best
