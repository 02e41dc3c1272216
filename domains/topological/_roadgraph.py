"""Sampling the road graph of `route_puzzles`: junction placement, the admissible straight roads (a skeleton), and
road multiplicities with a target number of odd junctions."""
from __future__ import annotations

import math
from collections import deque
from itertools import combinations

import numpy as np

from grip.domain import Reject
from grip.domains.topological import _roadmap as rm
from grip.draws import Draws

M_RANGE = {1: (6, 14), 2: (7, 14), 3: (9, 16)}
PLACE_SEP_PX = 125.0
BOX = (64.0, 112.0, 704.0, 704.0)          # junction centres; the caption sits above y = 80
MAX_ROAD_PX = 600.0
ANGLE_MIN_DEG = 15.0
CLEAR_PX = 18.0
GAP_MIN_PX = 12.0
SKELETON_ANGLE_DEG = 25.0


def place(d: Draws, n: int) -> list[tuple[float, float]]:
    pts: list[tuple[float, float]] = []
    for _ in range(400):
        c = (d.uniform(BOX[0], BOX[2]), d.uniform(BOX[1], BOX[3]))
        if all(math.dist(c, q) >= PLACE_SEP_PX for q in pts):
            pts.append((round(c[0], 1), round(c[1], 1)))
            if len(pts) == n:
                return pts
    raise Reject("no_layout")


def skeleton(rng: np.random.Generator, draws: Draws, pts, level: int) -> list[tuple[int, int]]:
    """Straight roads that keep clear of every other junction; non-crossing (greedy, shorter first) below level 3,
    plus up to three crossing ones at level 3. `draws`: `rng`'s scalar draws (`grip.draws`)."""
    allp = list(combinations(range(len(pts)), 2))
    x, y = np.array(pts, float).T
    iu, iv = np.array(allp).T
    d = rm.point_segment_xy(x[:, None], y[:, None], x[iu], y[iu], x[iv], y[iv])     # (junctions, pairs)
    cols = np.arange(len(allp))
    d[iu, cols] = np.inf
    d[iv, cols] = np.inf
    near = d.min(axis=0).tolist()
    cands = []
    for k, (u, v) in enumerate(allp):
        length = math.dist(pts[u], pts[v])
        jitter = draws.uniform(0.8, 1.25)
        if length <= MAX_ROAD_PX and near[k] >= rm.JUNCTION_R_PX + rm.ROAD_W_PX / 2 + CLEAR_PX + 6:
            cands.append((length * jitter, (u, v)))
    cands.sort()
    cu, cv = np.array([e for _, e in cands], int).reshape(-1, 2).T
    ux, uy, vx, vy = x[cu, None], y[cu, None], x[cv, None], y[cv, None]
    seg_gap = rm.segment_distances_xy(ux, uy, vx, vy, ux.T, uy.T, vx.T, vy.T).tolist()    # plain floats
    planar: list[tuple[int, int]] = []
    taken: list[int] = []
    crossing: list[tuple[int, int]] = []
    dirs: list[list[float]] = [[] for _ in pts]
    for k, (_, (u, v)) in enumerate(cands):
        du, dv = rm.direction_deg(pts, u, v), rm.direction_deg(pts, v, u)
        if any(rm.angle_apart(du, a) < SKELETON_ANGLE_DEG for a in dirs[u]) or \
                any(rm.angle_apart(dv, a) < SKELETON_ANGLE_DEG for a in dirs[v]):
            continue
        gaps = seg_gap[k]
        hit = any(gaps[m] < GAP_MIN_PX + rm.ROAD_W_PX for m in taken if u not in cands[m][1] and v not in cands[m][1])
        if hit:
            crossing.append((u, v))
        else:
            planar.append((u, v))
            taken.append(k)
        dirs[u].append(du)
        dirs[v].append(dv)
    if level == 3:
        order = rng.permutation(len(crossing))
        planar += [crossing[k] for k in order[:3]]
    return planar


def _connected_multi(n: int, mult: dict) -> bool:
    adj: list[list[int]] = [[] for _ in range(n)]
    for (u, v), m in mult.items():
        if m:
            adj[u].append(v)
            adj[v].append(u)
    seen, todo = {0}, [0]
    while todo:
        for w in adj[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return len(seen) == n


def _skeleton_path(rng: np.random.Generator, n: int, skel, a: int, b: int) -> list[tuple[int, int]]:
    """A shortest path a -> b over the admissible roads (random tie-breaks), as sorted pairs."""
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in skel:
        adj[u].append(v)
        adj[v].append(u)
    prev: dict[int, int] = {a: a}
    todo = deque([a])
    while todo and b not in prev:
        u = todo.popleft()
        for k in rng.permutation(len(adj[u])):
            w = adj[u][k]
            if w not in prev:
                prev[w] = u
                todo.append(w)
    path, x = [], b
    while x != a:
        path.append((min(x, prev[x]), max(x, prev[x])))
        x = prev[x]
    return path


def _room_deg(pts, adj: list[list[int]], e: tuple[int, int]) -> float:
    """Smallest angle, at either end of road e, to another road there (`adj`: the junctions a road joins to each)."""
    u, v = e
    room = 360.0
    for a, b in ((u, v), (v, u)):
        d = rm.direction_deg(pts, a, b)
        for w in adj[a]:
            if w != b:
                room = min(room, rm.angle_apart(d, rm.direction_deg(pts, a, w)))
    return room


def graph(rng: np.random.Generator, n: int, skel, level: int, n_odd: int, pts) -> dict | None:
    """Road multiplicities: a random spanning tree of the admissible roads, random extra roads, then a join: the
    odd junctions that must turn even (or the even ones that must turn odd) are paired and every admissible road on a
    shortest path between a pair is toggled (added, doubled at level 2+, or removed), which flips exactly the
    parities of the paired junctions. None when the result is disconnected or outside the road-count range."""
    mult: dict[tuple[int, int], int] = {}
    comp = list(range(n))
    for k in rng.permutation(len(skel)):               # random spanning tree (Kruskal on a shuffled order)
        u, v = skel[k]
        if comp[u] != comp[v]:
            old = comp[v]
            comp = [comp[u] if c == old else c for c in comp]
            mult[(u, v)] = 1
    if len(set(comp)) > 1:
        return None
    lo, hi = M_RANGE[level]
    if level == 1:
        hi = min(hi, n * (n - 1) // 2 - 1)
    m = int(rng.integers(lo, hi + 1))
    rest = [e for e in skel if e not in mult]
    for k in rng.permutation(len(rest))[: max(0, m - 1 - len(mult))]:
        mult[rest[k]] = 1
    if level >= 2:                                       # one or two parallel pairs, where the bowed ends fit
        adj: list[list[int]] = [[] for _ in range(n)]
        for u, v in mult:
            adj[u].append(v)
            adj[v].append(u)
        roomy = [e for e in sorted(mult)
                 if _room_deg(pts, adj, e) >= rm.bow_angle_deg(pts, e) + 2 * ANGLE_MIN_DEG]
        for k in rng.permutation(len(roomy))[: int(rng.integers(1, 3))]:
            mult[roomy[k]] = 2
    deg = [0] * n
    for (u, v), c in mult.items():
        deg[u] += c
        deg[v] += c
    odd = [k for k in range(n) if deg[k] % 2]
    even = [k for k in range(n) if not deg[k] % 2]
    if len(odd) >= n_odd:
        keep = [odd[k] for k in rng.permutation(len(odd))[:n_odd]]
    else:
        keep = odd + [even[k] for k in rng.permutation(len(even))[: n_odd - len(odd)]]
    flip = [k for k in range(n) if (k in keep) != (k in odd)]
    flip = [flip[k] for k in rng.permutation(len(flip))]
    toggles: dict[tuple[int, int], int] = {}
    for a, b in zip(flip[::2], flip[1::2]):
        for e in _skeleton_path(rng, n, skel, a, b):
            toggles[e] = toggles.get(e, 0) ^ 1
    for e in sorted(e for e, t in toggles.items() if t):
        c = mult.get(e, 0)
        mult[e] = c + 1 if c == 0 or (level >= 2 and c == 1 and rng.random() < 0.5) else c - 1
    if not lo <= sum(mult.values()) <= hi or not _connected_multi(n, mult):
        return None
    return mult
