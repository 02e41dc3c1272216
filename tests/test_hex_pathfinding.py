"""Domain-specific tests for hex_pathfinding. The module searches in axial coordinates (Dijkstra, a DP over tight
moves); here the board is rebuilt from the drawn cell centres (two cells are neighbours when their centres lie one
cell-width apart), costs come from Bellman-Ford relaxation, and cheapest routes are enumerated one by one by a
depth-first search, so a route count is a list of explicit routes."""
from dataclasses import replace
from functools import lru_cache
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.topological import hex_pathfinding as hp

SEEDS = st.integers(0, 29)          # a pool of scenes, each sampled once (see `accepted`)
LEVELS = st.sampled_from([1, 2, 3])


class Board:
    """The board as drawn: cells by pixel centre, neighbours by centre distance."""

    def __init__(self, s: hp.Scene):
        self.cells = hp.board(s.radius)
        self.xy = np.array([hp.centre_px(s, c) for c in self.cells])
        gap = math.sqrt(3) * hp.CELL_PX[s.radius]
        d = np.hypot(*(self.xy[:, None, :] - self.xy[None, :, :]).transpose(2, 0, 1))
        self.nbr = [[j for j in np.nonzero(np.abs(d[i] - gap) < 1e-6)[0]] for i in range(len(self.cells))]
        self.index = {c: i for i, c in enumerate(self.cells)}
        self.cost = [2 if c in s.mud else 1 for c in self.cells]
        self.open = [c not in s.walls for c in self.cells]

    def bellman_ford(self, src: int, open_=None) -> list[float]:
        ok = self.open if open_ is None else open_
        dist = [math.inf] * len(self.cells)
        dist[src] = 0
        for _ in range(len(self.cells)):
            changed = False
            for i in range(len(self.cells)):
                if dist[i] < math.inf:
                    for j in self.nbr[i]:
                        if ok[j] and dist[i] + self.cost[j] < dist[j]:
                            dist[j], changed = dist[i] + self.cost[j], True
            if not changed:
                break
        return dist

    def cheapest_routes(self, s: int, g: int) -> list[tuple[int, ...]]:
        """Every route s -> g of the cheapest cost, by depth-first search pruned with the exact cost-to-go."""
        best = self.bellman_ford(s)[g]
        back = self.bellman_ford(g)                    # cost g -> x, entering x; x -> g costs back[x] - c(x) + c(g)
        out = []

        def go(path, spent):
            x = path[-1]
            if x == g:
                out.append(tuple(path))
                return
            for j in self.nbr[x]:
                if self.open[j] and j not in path:
                    left = back[j] - self.cost[j] + self.cost[g]
                    if spent + self.cost[j] + left <= best:
                        go(path + [j], spent + self.cost[j])
        go([s], 0)
        return out


@lru_cache(maxsize=None)
def accepted(seed: int, level: int) -> hp.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        try:
            s = hp.sample(rng, level)
        except Reject:
            continue
        if not hp.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


def answers(s: hp.Scene):
    return [q.answer.reference_text() for q in hp.ladder(s).questions]


# --- examples worked on paper ------------------------------------------------------------------------------------

def test_two_routes_one_walled_by_hand():
    # S = (0, 0), G = (1, 1): hex distance max(1, 1, 2) = 2. The cells next to both are (1, 0) and (0, 1); W = (1, 0)
    # is a wall, so one route of 2 steps is left, and removing W gives 2 steps again. Within 3 steps of S: every one of
    # the 36 floor cells (a radius-3 board, all within 3 of the centre) except (3, 0), whose 3-step path needs (1, 0).
    s = hp.Scene(1, 3, ((1, 0),), (), (0, 0), (1, 1), (1, 0))
    assert answers(s) == ["1", "2", "2", "1", "2", "cells=35"]
    assert hp.route_count(hp.edit(s)) == 2


def test_mud_by_hand():
    # S = (0, 0), G = (2, 0), mud on (1, 0), the only wall far away at (-4, 0). Straight through the mud costs
    # 2 + 1 = 3; the detours (1, -1), (2, -1) and (0, 1), (1, 1) cost 1 + 1 + 1 = 3: three cheapest routes of cost 3 (a detour
    # touching the mud costs 4). Within cost 3: the 37 cells within 3 steps of S except (3, 0) (straight through the
    # mud: 4).
    s = hp.Scene(3, 5, ((-4, 0),), ((1, 0),), (0, 0), (2, 0), (-4, 0))
    assert answers(s) == ["1", "2", "3", "3", "3", "cells=36"]
    b = Board(s)
    routes = {tuple(b.cells[i] for i in r) for r in b.cheapest_routes(b.index[(0, 0)], b.index[(2, 0)])}
    assert routes == {((0, 0), (1, 0), (2, 0)), ((0, 0), (1, -1), (2, -1), (2, 0)), ((0, 0), (0, 1), (1, 1), (2, 0))}


# --- properties --------------------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(SEEDS, LEVELS)
def test_ladder_matches_the_board_rebuilt_from_the_picture(seed, level):
    s = accepted(seed, level)
    b, lad = Board(s), hp.ladder(s)
    si, gi = b.index[s.start], b.index[s.goal]
    free = Board(replace(s, walls=(), mud=()))
    assert lad.rungs[0].answer.value == sum(not o for o in b.open)
    assert lad.rungs[1].answer.value == free.bellman_ford(si)[gi]
    cost = b.bellman_ford(si)
    assert lad.rungs[2].answer.value == cost[gi]
    routes = b.cheapest_routes(si, gi)
    assert lad.rungs[3].answer.value == len(routes) <= hp.MAX_ROUTES
    assert all(sum(b.cost[i] for i in r[1:]) == cost[gi] for r in routes)
    opened = list(b.open)
    opened[b.index[s.w]] = True
    assert lad.rungs[4].answer.value == b.bellman_ford(si, opened)[gi] == hp.counterfactual(hp.edit(s)).value
    assert lad.open.answer.fields["cells"].value == sum(1 for d in cost if d <= 3)
    assert scene_from_json(hp.Scene, scene_to_json(s)) == s


@settings(max_examples=30, deadline=None)
@given(SEEDS, LEVELS)
def test_scene_rules(seed, level):
    s = accepted(seed, level)
    cells = set(hp.board(s.radius))
    assert s.radius == hp.RADIUS[level] and len(cells) == {3: 37, 4: 61, 5: 91}[s.radius]
    assert hp.WALLS[level][0] <= len(s.walls) <= hp.WALLS[level][1]
    assert hp.MUD[level][0] <= len(s.mud) <= hp.MUD[level][1]
    assert set(s.walls) <= cells and set(s.mud) <= cells and not set(s.walls) & set(s.mud)
    assert s.start not in s.walls + s.mud and s.goal not in s.walls + s.mud
    assert s.w in s.walls and hp.hex_distance(s.start, s.goal) >= hp.MIN_APART[level]
    assert hp.CELL_PX[s.radius] >= hp.CELL_MIN_PX
    # every cell lies inside the safe area, below the caption
    xy = np.array([hp.hexagon_px(hp.centre_px(s, c), hp.CELL_PX[s.radius]) for c in cells]).reshape(-1, 2)
    assert xy.min() >= 24 and xy.max() <= 744 and xy[:, 1].min() >= 90


@settings(max_examples=30, deadline=None)
@given(SEEDS, LEVELS)
def test_minimal_pair_adds_or_removes_one_wall_and_changes_the_count(seed, level):
    s = accepted(seed, level)
    try:
        twin = hp.minimal_pair(s)
    except Reject:
        return
    added, removed = set(twin.walls) - set(s.walls), set(s.walls) - set(twin.walls)
    assert len(added) + len(removed) == 1 and twin.mud == s.mud and twin.w == s.w in twin.walls
    for c in added:
        assert c not in (s.start, s.goal) and c not in s.mud
        b = Board(s)
        routes = b.cheapest_routes(b.index[s.start], b.index[s.goal])
        on = [r for r in routes if b.index[c] in r]
        assert 0 < len(on) < len(routes)            # on some but not all cheapest routes
        assert hp.cheapest_cost(twin) == hp.cheapest_cost(s)
    assert hp.route_count(twin) != hp.route_count(s)
    assert not hp.ladder(twin).failing_margins()


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_rephrase_counts_the_reversed_routes(seed, level):
    s = accepted(seed, level)
    r, q4 = hp.rephrase_q4(s), hp.ladder(s).rungs[3]
    back = replace(s, start=s.goal, goal=s.start)
    assert r.answer == q4.answer and hp.route_count(back) == q4.answer.value and r.text != q4.text


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_removing_any_wall_never_costs_more_and_removing_w_matches_the_fast_check(seed, level):
    s = accepted(seed, level)
    base = hp.cheapest_cost(s)
    ds, dg = hp.costs_from(s, s.start), hp.costs_from(s, s.goal)
    for w in s.walls[:8] + (s.w,):
        opened = replace(s, walls=tuple(c for c in s.walls if c != w))
        assert hp.cheapest_cost(opened) <= base
        assert hp.cheapest_cost(opened) == min(base, hp._through_wall(s, ds, dg, w))


def test_search_matches_bellman_ford_on_random_boards():
    # The bucket-queue search and the route DP against Bellman-Ford costs and a DP over its tight moves, on boards
    # with any walls and mud (S or G may be walled off).
    rng = np.random.default_rng(7)
    for k in range(45):
        radius = 3 + k % 3
        cells = hp.board(radius)
        pick = rng.permutation(len(cells))
        walls = tuple(sorted(cells[i] for i in pick[:int(rng.integers(0, 30))]))
        mud = tuple(sorted(c for c in (cells[i] for i in pick[30:30 + int(rng.integers(0, 12))]) if c not in walls))
        s = hp.Scene(3, radius, walls, mud, cells[pick[-1]], cells[pick[-2]], cells[0])
        b = Board(s)
        cost = b.bellman_ford(b.index[s.start])
        assert hp.costs_from(s, s.start) == {c: d for c, d in zip(b.cells, cost) if d < math.inf}
        ways = [0] * len(b.cells)
        ways[b.index[s.start]] = 1
        for i in sorted(range(len(b.cells)), key=lambda i: cost[i]):
            if cost[i] < math.inf and i != b.index[s.start]:
                ways[i] = sum(ways[j] for j in b.nbr[i] if cost[j] + b.cost[i] == cost[i])
        assert hp.route_count(s) == ways[b.index[s.goal]]
        assert hp.cheapest_cost(s) == (None if cost[b.index[s.goal]] == math.inf else cost[b.index[s.goal]])


def test_balance_flags_show_up():
    scenes = [accepted(seed, 1 + seed % 3) for seed in range(30, 100)]      # flags drawn independently per seed
    lad = [hp.ladder(s) for s in scenes]
    q2, q3, q4, q5 = ([q.rungs[k].answer.value for q in lad] for k in (1, 2, 3, 4))
    straight = sum(a == b for a, b in zip(q2, q3)) / len(q2)
    cheaper = sum(b < a for a, b in zip(q3, q5)) / len(q3)
    one = sum(x == 1 for x in q4) / len(q4)
    assert 0.08 <= straight <= 0.42 and 0.32 <= cheaper <= 0.68 and 0.08 <= one <= 0.42


def test_minimal_pair_changes_one_cell_of_pixels():
    """The sheet's QA (0.7): changed pixels <= 5% of the canvas, their bounding box <= 25% (here: one cell)."""
    from grip.renderers.canvas import Canvas
    for seed in (2, 5):
        s = accepted(seed, 1 + seed % 3)
        imgs = []
        for scene in (s, hp.minimal_pair(s)):
            c = Canvas(768)
            hp.draw(scene, c)
            imgs.append(c.array())
        diff = np.argwhere((imgs[0] != imgs[1]).any(axis=2))
        (y0, x0), (y1, x1) = diff.min(axis=0), diff.max(axis=0)
        assert 0 < len(diff) <= 0.05 * 768 * 768 and (y1 - y0 + 1) * (x1 - x0 + 1) <= 0.25 * 768 * 768
        assert max(y1 - y0, x1 - x0) <= 2 * hp.CELL_PX[s.radius] + 4
