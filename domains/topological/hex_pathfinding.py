"""Hex pathfinding: a pointy-top hex board (radius 3, 4 or 5) with dark wall cells, a start S and a goal G; one wall,
marked W with a red outline, is the Q5 wall. Level 3 adds ochre dotted mud cells: a move into a mud cell costs 2, any
other move 1 (S and G are never mud, so charging on leaving would give the same totals). The ladder walks walls ->
free distance S-G -> cheapest route -> number of cheapest routes -> W removed; the open question counts the cells
within cost 3 of S.

Every answer is exact (graph search on the board), so the margins are the route-count cap (Q4 <= `MAX_ROUTES`) and
legibility limits: cells of circumradius >= 26 px, S and G letters >= 16 px.

Sampling (target-first): the wall count uniform over the level's range; S uniform among the floor cells and G among
those at least `MIN_APART` from it; then three flags, each drawn first and met by rejection: the cheapest route is
as short as the free distance (25%; the sheet caps Q3 - Q2 = 0 at 30%), W's removal makes the route cheaper (50%,
only possible on a detour), and there is exactly one cheapest route (25%; cap 35%).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from grip.answers import Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import GREY, GREY_DARK, LABEL, OKABE_ITO, TEXT, WHITE, Style, tint
from grip.renderers.text import draw_text_px

Cell = tuple[int, int]
DIRS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
RADIUS = {1: 3, 2: 4, 3: 5}
CELL_PX = {3: 36.0, 4: 30.0, 5: 26.0}          # circumradius per board radius
CELL_MIN_PX = 26.0
WALLS = {1: (4, 8), 2: (12, 18), 3: (27, 36)}
MUD = {1: (0, 0), 2: (0, 0), 3: (8, 12)}
MIN_APART = {1: 3, 2: 4, 3: 5}                # hex distance S-G
MAX_ROUTES = 12
LETTER_PX = 20.0
LETTER_MIN_PX = 16.0
P_CHEAPER, P_STRAIGHT, P_ONE = 0.5, 0.25, 0.25
TRIES = 400
CENTER = (384.0, 410.0)
MUD_FILL = tint(OKABE_ITO["orange"], 0.45)
START_FILL = tint(OKABE_ITO["green"], 0.35)
GOAL_FILL = tint(OKABE_ITO["yellow"], 0.1)


@dataclass(frozen=True)
class Scene:
    level: int                     # 1..3 (3: mud, costs)
    radius: int                    # board radius: cells with max(|q|, |r|, |q + r|) <= radius
    walls: tuple[Cell, ...]        # axial (q, r), sorted; includes W
    mud: tuple[Cell, ...]          # axial, sorted; never S, G or a wall
    start: Cell
    goal: Cell
    w: Cell                        # the outlined wall of Q5


def hex_distance(a: Cell, b: Cell) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return max(abs(dq), abs(dr), abs(dq + dr))


@lru_cache(maxsize=None)
def board(radius: int) -> tuple[Cell, ...]:
    return tuple((q, r) for q in range(-radius, radius + 1) for r in range(-radius, radius + 1)
                 if hex_distance((q, r), (0, 0)) <= radius)


@lru_cache(maxsize=None)
def neighbours(radius: int) -> dict[Cell, tuple[Cell, ...]]:
    cells = set(board(radius))
    return {c: tuple(n for n in ((c[0] + dq, c[1] + dr) for dq, dr in DIRS) if n in cells) for c in board(radius)}


@lru_cache(maxsize=None)
def _indexed(radius: int) -> tuple[dict[Cell, int], tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """The board by cell index (`board` order, which is cell order): index of each cell, neighbour indices, hex
    distances between indices."""
    cells = board(radius)
    index = {c: i for i, c in enumerate(cells)}
    nbr = tuple(tuple(index[n] for n in neighbours(radius)[c]) for c in cells)
    apart = tuple(tuple(hex_distance(a, b) for b in cells) for a in cells)
    return index, nbr, apart


# --- search (pure) -----------------------------------------------------------------------------------------------

def cell_cost(scene: Scene, c: Cell) -> int:
    return 2 if c in scene.mud else 1


@lru_cache(maxsize=512)
def _search(radius: int, walls: tuple[Cell, ...], mud: tuple[Cell, ...], src: Cell) -> tuple:
    """Dijkstra from src over cell indices, a move costing the cell it enters: (cheapest cost per cell, inf where
    unreachable; cost of entering each cell, 0 for a wall). Moves cost 1 or 2, so the queue is three lists, the
    cells queued at cost d, d + 1 and d + 2 (Dial's buckets). Cached: sampling, the ladder, Q4's rephrasing and
    the twin ask for the same searches."""
    index, nbr, _ = _indexed(radius)
    step = [1] * len(index)
    for c in mud:
        step[index[c]] = 2
    for c in walls:
        step[index[c]] = 0
    dist = [math.inf] * len(index)
    s = index[src]
    dist[s], d, now, one, two = 0, 0, [s], [], []
    while now or one or two:
        for c in now:
            if dist[c] != d:
                continue                                # reached more cheaply since it was queued
            for n in nbr[c]:
                k = step[n]
                if k and d + k < dist[n]:
                    dist[n] = d + k
                    (one if k == 1 else two).append(n)
        d, now, one, two = d + 1, one, two, []
    return tuple(dist), tuple(step)


def _dist(scene: Scene, src: Cell) -> tuple:
    return _search(scene.radius, scene.walls, scene.mud, src)[0]


def costs_from(scene: Scene, src: Cell) -> dict[Cell, int]:
    """The cheapest cost of reaching each floor cell from src, a move costing the cell it enters."""
    return {c: d for c, d in zip(board(scene.radius), _dist(scene, src)) if d != math.inf}


def cheapest_cost(scene: Scene) -> int | None:
    d = _dist(scene, scene.start)[_indexed(scene.radius)[0][scene.goal]]
    return None if d == math.inf else d


@lru_cache(maxsize=512)
def _route_count(radius: int, walls: tuple[Cell, ...], mud: tuple[Cell, ...], start: Cell, goal: Cell) -> int:
    index, nbr, _ = _indexed(radius)
    dist, step = _search(radius, walls, mud, start)
    g = index[goal]
    if dist[g] == math.inf:
        return 0
    s = index[start]
    ways = [0] * len(index)
    ways[s] = 1
    for c in sorted(range(len(index)), key=dist.__getitem__):   # a tight move enters a costlier cell
        if dist[c] == math.inf:
            break
        if c != s:
            ways[c] = sum(ways[p] for p in nbr[c] if dist[p] + step[c] == dist[c])
    return ways[g]


def route_count(scene: Scene) -> int:
    """Number of cheapest routes S -> G: paths along tight moves (dist[a] + cost(b) = dist[b]), counted by DP in
    order of cost."""
    return _route_count(scene.radius, scene.walls, scene.mud, scene.start, scene.goal)


def reachable_within(scene: Scene, budget: int = 3) -> int:
    return sum(1 for d in _dist(scene, scene.start) if d <= budget)


# --- sampling ----------------------------------------------------------------------------------------------------

def _through_wall(scene: Scene, ds: dict, dg: dict, w: Cell) -> float:
    """Cheapest S -> G cost once wall w is floor: D_S(a) + 1 (enter w) + D_G(b) + 1 over floor neighbours a, b
    (the b -> G leg costs D_G(b) - cost(b) + 1, and entering b costs cost(b))."""
    nbrs = neighbours(scene.radius)[w]
    a = min((ds[n] for n in nbrs if n in ds), default=math.inf)
    b = min((dg[n] for n in nbrs if n in dg), default=math.inf)
    return a + b + 2


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"hex_pathfinding: level must be 1..3, got {level}")
    radius = RADIUS[level]
    cells = board(radius)
    apart = _indexed(radius)[2]
    d = Draws(rng)   # the Generator's own scalar draws, cheaper (its shuffles stay: numpy's win on whole boards)
    n_walls = d.integers(WALLS[level][0], WALLS[level][1] + 1)
    # A route as short as the free distance cannot get cheaper (it is the lower bound), so W's removal helps only
    # on detours: cheaper in 2/3 of the 75% detour items, 1/2 overall.
    straight = d.random() < P_STRAIGHT
    cheaper = not straight and d.random() < P_CHEAPER / (1 - P_STRAIGHT)
    one = d.random() < P_ONE
    for _ in range(TRIES):
        pick = rng.permutation(len(cells)).tolist()          # cell indices; index order is cell order
        walls = tuple(cells[k] for k in sorted(pick[:n_walls]))
        floor = pick[n_walls:]
        start = floor[d.integers(len(floor))]
        far = [k for k in floor if apart[k][start] >= MIN_APART[level]]
        if not far:
            continue
        goal = far[d.integers(len(far))]
        rest = [k for k in floor if k != start and k != goal]
        n_mud = d.integers(MUD[level][0], MUD[level][1] + 1)
        mud = ()
        if n_mud:
            mud = tuple(cells[k] for k in sorted(rest[j] for j in rng.permutation(len(rest))[:n_mud].tolist()))
        s = Scene(level, radius, walls, mud, cells[start], cells[goal], walls[0])
        dist = _dist(s, s.start)
        if dist[goal] == math.inf or (dist[goal] == apart[start][goal]) != straight:
            continue
        n_routes = route_count(s)
        if n_routes > MAX_ROUTES or (n_routes == 1) != one:
            continue
        ds, dg = costs_from(s, s.start), costs_from(s, s.goal)
        ws = [w for w in walls if (_through_wall(s, ds, dg, w) < ds[s.goal]) == cheaper]
        if not ws:
            continue
        return replace(s, w=ws[d.integers(len(ws))])
    raise Reject("no_board_for_targets")


# --- answers -----------------------------------------------------------------------------------------------------

def wall_count(scene: Scene) -> Count:
    return Count(len(scene.walls), low=0, high=len(board(scene.radius)))


def free_distance(scene: Scene) -> Count:
    return Count(hex_distance(scene.start, scene.goal), low=1, high=2 * scene.radius)


def _cost_answer(scene: Scene) -> Count:
    c = cheapest_cost(scene)
    if c is None:
        raise Reject("start_goal_apart")
    return Count(c, low=1, high=2 * len(board(scene.radius)))


def cheapest(scene: Scene) -> Count:
    return _cost_answer(scene)


def routes(scene: Scene) -> Count:
    return Count(route_count(scene), low=1, high=MAX_ROUTES)


def edit(scene: Scene) -> Scene:
    """Wall W removed: it becomes an ordinary floor cell."""
    return replace(scene, walls=tuple(c for c in scene.walls if c != scene.w))


counterfactual = _cost_answer


def within_three(scene: Scene) -> Record:
    return Record((("cells", Count(reachable_within(scene), low=1, high=len(board(scene.radius)))),))


# --- ladder ------------------------------------------------------------------------------------------------------

def _metric(scene: Scene) -> tuple[str, str]:
    """(what is minimised, the cost rule stated in every question that needs it)."""
    if scene.level == 3:
        return "total cost", " A move into a mud (ochre, dotted) cell costs 2, any other move costs 1."
    return "number of steps", " One step moves to a neighbouring cell (sharing an edge)."


def ladder(scene: Scene) -> Ladder:
    what, rule = _metric(scene)
    size = Margin(CELL_PX[scene.radius], "px", CELL_MIN_PX, "hex cells too small to read")
    n = route_count(scene)
    rungs = (
        Question(1, "wall_count", "How many wall (dark grey) cells are there? The cell marked W counts as a wall.",
                 wall_count(scene), size),
        Question(2, "free_distance", "Ignoring walls (and mud), what is the smallest number of steps from S to G? "
                 "One step moves to a neighbouring cell (sharing an edge).", free_distance(scene),
                 Margin(LETTER_PX, "px", LETTER_MIN_PX, "S and G letters too small to read")),
        Question(3, "cheapest_route", f"Moving only through cells that are not walls, what is the smallest {what} "
                 f"from S to G?{rule}", cheapest(scene),
                 Margin(1.0, "connected", 1.0, "S and G not connected")),
        Question(4, "route_count", f"How many different routes from S to G, avoiding walls, have the smallest "
                 f"possible {what}?{rule} Routes differ if they pass through different cells.", routes(scene),
                 Margin(float(MAX_ROUTES - n), "routes", 0.0, f"more than {MAX_ROUTES} cheapest routes")),
        Question(5, "cheapest_without_w", f"If the wall marked W were removed (it becomes an ordinary floor cell), "
                 f"what would the smallest {what} from S to G be?{rule}", counterfactual(edit(scene)),
                 Margin(float(scene.w in scene.walls and scene.w not in (scene.start, scene.goal)), "cells", 1.0,
                        "W is not a wall"), edit="wall W removed"),
    )
    within = "in at most 3 steps" if scene.level < 3 else "with a total cost of at most 3"
    open_q = Question(6, "cells_within_three", f"How many cells that are not walls (S included; mud cells count) "
                      f"can be reached from S {within}, avoiding walls?{rule} Explain.", within_three(scene), size)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 from the other end (identity): a reversed route costs the same, S and G never being mud."""
    what, rule = _metric(scene)
    return Question(4, "route_count_back", f"How many different routes lead from G back to S, avoiding walls, with "
                    f"the smallest possible {what}?{rule}", routes(scene), ladder(scene).rungs[3].margin)


def minimal_pair(scene: Scene) -> Scene:
    """A floor cell (not S, G or mud) on some but not all cheapest routes turned into a wall; where none exists,
    a wall other than W removed so that the route count changes. First in cell order; S and G stay connected."""
    best, n = cheapest_cost(scene), route_count(scene)
    dist_s, dist_g = costs_from(scene, scene.start), costs_from(scene, scene.goal)
    tight = sorted(c for c in dist_s if c not in (scene.start, scene.goal) and c not in scene.mud and c in dist_g
                   and dist_s[c] + dist_g[c] - cell_cost(scene, c) + 1 == best)
    for c in tight:
        twin = replace(scene, walls=tuple(sorted(scene.walls + (c,))))
        if cheapest_cost(twin) == best and 0 < route_count(twin) < n:
            return twin
    for c in scene.walls:
        if c == scene.w:
            continue
        twin = replace(scene, walls=tuple(x for x in scene.walls if x != c))
        m = route_count(twin)
        if m != n and m <= MAX_ROUTES:
            return twin
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def centre_px(scene: Scene, c: Cell) -> tuple[float, float]:
    s = CELL_PX[scene.radius]
    return (CENTER[0] + s * math.sqrt(3) * (c[0] + c[1] / 2), CENTER[1] + s * 1.5 * c[1])


_CORNERS = tuple((math.cos(math.radians(60 * k - 30)), math.sin(math.radians(60 * k - 30))) for k in range(6))


def hexagon_px(centre, size: float) -> list[tuple[float, float]]:
    """Pointy-top hexagon: corners at -30, 30, ..., 270 degrees (y down)."""
    return [(centre[0] + size * c, centre[1] + size * s) for c, s in _CORNERS]


def _fill_hexes(canvas: Canvas, centres, size: float, fill) -> None:
    """Cells of one fill in one cairo path, with grey borders (no label is placed by collision here, so the cells
    are not registered as strokes)."""
    if not centres:
        return
    ctx = canvas.ctx
    for p in centres:
        pts = hexagon_px(p, size)
        ctx.move_to(*pts[0])
        for q in pts[1:]:
            ctx.line_to(*q)
        ctx.close_path()
    ctx.set_source_rgb(*fill)
    ctx.fill_preserve()
    ctx.set_source_rgb(*GREY)
    ctx.set_line_width(2.0)
    ctx.set_line_join(1)
    ctx.stroke()


def draw(scene: Scene, canvas: Canvas) -> None:
    size = CELL_PX[scene.radius]
    walls, mud = set(scene.walls), set(scene.mud)
    groups: dict[tuple, list] = {}
    for c in board(scene.radius):
        fill = GREY_DARK if c in walls else MUD_FILL if c in mud else START_FILL if c == scene.start else \
            GOAL_FILL if c == scene.goal else WHITE
        groups.setdefault(fill, []).append(centre_px(scene, c))
    for fill, centres in groups.items():
        _fill_hexes(canvas, centres, size, fill)
    ctx = canvas.ctx
    for c in scene.mud:                               # dot stipple: mud is not told by colour alone
        p = centre_px(scene, c)
        for dx, dy in ((-0.35, -0.2), (0.35, -0.2), (0.0, 0.4), (-0.35, 0.45), (0.35, 0.45), (0.0, -0.55)):
            ctx.new_sub_path()
            ctx.arc(p[0] + dx * size * 0.8, p[1] + dy * size * 0.8, 2.2, 0, 2 * math.pi)
    ctx.set_source_rgb(0.35, 0.22, 0.05)
    ctx.fill()
    w = centre_px(scene, scene.w)
    shapes.polygon(canvas, hexagon_px(w, size - 3.5), Style(stroke=OKABE_ITO["vermillion"], width_px=4.0))
    for c, text in ((scene.start, "S"), (scene.goal, "G"), (scene.w, "W")):
        draw_text_px(canvas, text, centre_px(scene, c), LABEL.with_(font_px=LETTER_PX))
    lines = ["Dark cells are walls. S is the start, G the goal; W marks one wall (red outline)."]
    if scene.level == 3:
        lines.append("Ochre dotted cells are mud: a move into a mud cell costs 2, any other move 1.")
    for i, line in enumerate(lines):
        draw_text_px(canvas, line, (384.0, 44.0 + 22.0 * i), TEXT)


DOMAIN = Domain(
    id="hex_pathfinding", family="topological", title="Hex pathfinding",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, minimal_pair_keeps_q1=False, rephrase_q4=rephrase_q4, rephrase_map="identity",
    version=2,
    description="A hex board with walls, a start S and a goal G: walls, free distance, cheapest route, number of "
                "cheapest routes, and the cheapest route once wall W is removed. Level 3 adds mud cells costing 2.",
    balance_keys=("wall_count", "route_count", "cheapest_without_w"),
)
