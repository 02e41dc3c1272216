"""Route puzzles: a town map of lettered junctions (white discs) joined by grey roads, parallel roads drawn as two
bowed arcs. Level 3 adds overpasses (a road passing over another with a gap in the lower one: not a junction) and
loops (a road leaving a junction and coming back to it, counted twice there). The ladder walks C's road count -> its
parity -> the number of odd junctions -> whether one trip can walk every road exactly once (Euler: connected and 0
or 2 odd junctions) -> the same after a new road X-Y; the open question asks for the fewest repeated road-walks of a
closed tour (Chinese postman on unit lengths).

Every answer is exact (counts on the road graph), so the margins are legibility limits: road ends at a junction at
least `ANGLE_MIN_DEG` apart, roads `CLEAR_PX` clear of junctions they do not serve and `GAP_MIN_PX` clear of each
other, overpasses crossing at `CROSS_ANGLE_MIN_DEG` or more and `OVERPASS_CLEAR_PX` from junctions and from each
other. Junctions sit >= `_roadgraph.PLACE_SEP_PX` (> 60 px) apart; the two roads of a parallel pair are 36 px apart
at mid-arc.

Sampling (target-first): the route class (Q4) uniform, C's parity (Q2) 50/50 (C is even in every closed
circuit, odd in 60% of open routes and 90% of impossible ones), and whether a new road changes the class (Q5 differs
from Q4 in about 73% of items: always from a closed circuit, in 60% of the others; a changed open route becomes
closed or impossible 50/50); the X-Y pair is uniform among the road-less pairs that give that. The graph
(`_roadgraph`) is a random spanning tree of the admissible straight roads plus extra roads, then a join that
evens or odds the right junctions.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations

import numpy as np

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.topological import _roadmap as rm
from grip.domains.topological._roadgraph import ANGLE_MIN_DEG, CLEAR_PX, GAP_MIN_PX, graph, place, skeleton
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY_DARK, LABEL, TEXT, WHITE, Style
from grip.renderers.text import draw_text_px

LETTERS = "ABCDEFGHI"
CLOSED, OPEN, IMPOSSIBLE = "closed circuit", "open route", "impossible"
CLASSES = (CLOSED, OPEN, IMPOSSIBLE)
ROUTE_ALIASES = (("closed", CLOSED), ("circuit", CLOSED), ("euler circuit", CLOSED), ("open", OPEN),
                 ("euler path", OPEN), ("not possible", IMPOSSIBLE), ("no", IMPOSSIBLE))
N_RANGE = {1: (5, 6), 2: (5, 7), 3: (7, 9)}
JUNCTION_GAP_MIN_PX = 60.0
CAPTION_BOTTOM_PX = 80.0
CROSS_ANGLE_MIN_DEG = 35.0
OVERPASS_CLEAR_PX = 30.0
Q5_DIFFERS = 0.6
LOOP_ROOM_DEG = 100.0
DEGREE_MAX = 24
TRIES = 60
PAPER = (0.96, 0.96, 0.93)
ROAD = Style(stroke=GREY_DARK, width_px=rm.ROAD_W_PX)


@dataclass(frozen=True)
class Scene:
    level: int                                  # 1..3
    points: tuple[tuple[float, float], ...]     # junction centres, px (y down); junction i carries LETTERS[i]
    roads: tuple[tuple[int, int, int], ...]     # (u, v, side), u < v; side 0 straight, +1/-1 one of a bowed pair
    loops: tuple[tuple[int, float], ...]        # (junction, direction deg): a road from the junction back to it
    new_road: tuple[int, int]                   # Q5: junctions X < Y with no road between them


def letters(scene: Scene) -> tuple[str, ...]:
    return tuple(LETTERS[: len(scene.points)])


# --- the road graph (pure) ---------------------------------------------------------------------------------------

def degrees(scene: Scene) -> list[int]:
    deg = [0] * len(scene.points)
    for u, v, _ in scene.roads:
        deg[u] += 1
        deg[v] += 1
    for j, _ in scene.loops:
        deg[j] += 2
    return deg


def odd_junctions(scene: Scene) -> list[int]:
    return [k for k, d in enumerate(degrees(scene)) if d % 2]


def _adjacency(n: int, roads) -> list[set[int]]:
    adj: list[set[int]] = [set() for _ in range(n)]
    for u, v, _ in roads:
        adj[u].add(v)
        adj[v].add(u)
    return adj


def distances_from(scene: Scene, src: int) -> list[int | None]:
    adj, dist = _adjacency(len(scene.points), scene.roads), [None] * len(scene.points)
    dist[src], todo = 0, deque([src])
    while todo:
        u = todo.popleft()
        for w in sorted(adj[u]):
            if dist[w] is None:
                dist[w] = dist[u] + 1
                todo.append(w)
    return dist


def connected(scene: Scene) -> bool:
    return all(d is not None for d in distances_from(scene, 0))


def roadless_pairs(scene: Scene) -> list[tuple[int, int]]:
    have = {(u, v) for u, v, _ in scene.roads}
    return [p for p in combinations(range(len(scene.points)), 2) if p not in have]


def route_class(scene: Scene) -> tuple[str, tuple[int, ...]]:
    odd = odd_junctions(scene)
    if not connected(scene) or len(odd) > 2:
        return IMPOSSIBLE, ()
    return (CLOSED, ()) if not odd else (OPEN, tuple(odd))


def repeat_count(scene: Scene) -> int:
    """Chinese postman on unit lengths: the cheapest pairing of the odd junctions by shortest road distance."""
    odd = odd_junctions(scene)
    dist = {u: distances_from(scene, u) for u in odd}

    def best(rest: tuple[int, ...]) -> int:
        if not rest:
            return 0
        a = rest[0]
        return min(dist[a][b] + best(rest[1:k] + rest[k + 1:]) for k, b in enumerate(rest) if k > 0)
    return best(tuple(odd))


# --- geometry (shared by margins, sampling and drawing) -----------------------------------------------------------

def legibility(scene: Scene) -> dict[str, float]:
    return dict(_legibility(scene)[1])


@lru_cache(maxsize=64)   # the sampler, the ladder (twice, with the Q4 rephrasing) and the drawing ask for it
def _legibility(scene: Scene):
    """(the overpasses of `rm.crossings`, the measures of `legibility` as (name, value) pairs)."""
    p = scene.points
    polys = rm.polylines(p, scene.roads, scene.loops)
    cross, gap = rm.crossings(polys)
    if scene.level < 3 and cross:
        gap = 0.0                                   # no overpasses below level 3
    # A loop must stay inside the safe area and below the caption.
    inside = min((min(float(q[:, 0].min()) - SAFE_BORDER_PX, float(q[:, 1].min()) - CAPTION_BOTTOM_PX,
                      768.0 - SAFE_BORDER_PX - float(q.max())) - rm.ROAD_W_PX
                  for _, q, _ in polys[len(scene.roads):]), default=768.0)
    return cross, (("angle", rm.min_angle_deg(p, scene.roads, scene.loops)),
                   ("clear", min(rm.road_clearance_px(p, polys), inside + CLEAR_PX)),
                   ("gap", gap if math.isfinite(gap) else 768.0),
                   ("cross_angle", min((a for *_, a in cross), default=90.0)),
                   ("overpass", min(rm.overpass_clearance_px(p, cross), 768.0)),
                   ("junction_gap", rm.min_junction_gap_px(p)))


LIMITS = {"angle": ANGLE_MIN_DEG, "clear": CLEAR_PX, "gap": GAP_MIN_PX, "cross_angle": CROSS_ANGLE_MIN_DEG,
          "overpass": OVERPASS_CLEAR_PX, "junction_gap": JUNCTION_GAP_MIN_PX}


def _legible(scene: Scene) -> str | None:
    leg = legibility(scene)
    return next((k for k, lim in LIMITS.items() if leg[k] < lim), None)


# --- sampling ----------------------------------------------------------------------------------------------------

def _q5_ok(target: str, differs: bool | str, odd: list[int], pair: tuple[int, int]) -> bool:
    """Whether a new road on `pair` gives the drawn Q5 outcome: `differs` is False (same class), True, or for an
    open route the class it must turn into."""
    both_odd = pair[0] in odd and pair[1] in odd
    both_even = pair[0] not in odd and pair[1] not in odd
    if target == CLOSED:
        return True
    if target == OPEN:
        return both_odd if differs == CLOSED else both_even if differs == IMPOSSIBLE else not (both_odd or both_even)
    return (len(odd) == 4 and both_odd) == differs


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"route_puzzles: level must be 1..3, got {level}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper (its shuffles stay: cheaper still)
    target = CLASSES[d.integers(3)]
    # A closed circuit has no odd junction, so C is odd in 60% of open routes and 90% of impossible ones: 1/2
    # overall, and C is an open route's endpoint in only 60% of them.
    c_odd = target != CLOSED and d.random() < (0.6 if target == OPEN else 0.9)
    differs = True if target == CLOSED else d.random() < Q5_DIFFERS
    # An open route that a new road changes becomes closed (the road joins its two ends) or impossible, 50/50.
    differs = (CLOSED if d.random() < 0.5 else IMPOSSIBLE) if differs and target == OPEN else differs
    reasons: dict[str, int] = {}
    for _ in range(TRIES):
        try:
            return _build(rng, d, level, target, c_odd, differs)
        except Reject as r:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
    raise Reject(max(sorted(reasons), key=lambda k: reasons[k]))


def _build(rng: np.random.Generator, d: Draws, level: int, target: str, c_odd: bool, differs: bool | str) -> Scene:
    """One attempt at a scene with the drawn targets; Reject(reason) when the attempt fails. `d`: `rng`'s Draws."""
    n = d.integers(N_RANGE[level][0], N_RANGE[level][1] + 1)
    if target == IMPOSSIBLE:
        n_odd = 4 if differs is True or n < 6 else d.pick((4, 6))
    else:
        n_odd = 0 if target == CLOSED else 2
    pts = place(d, n)
    skel = skeleton(rng, d, pts, level)
    mult = graph(rng, n, skel, level, n_odd, pts)
    if mult is None:
        raise Reject("no_graph_for_target")
    deg = [0] * n
    for (u, v), c in mult.items():
        deg[u] += c
        deg[v] += c
    roads = [r for (u, v), c in sorted(mult.items()) if c
             for r in ([(u, v, 1), (u, v, -1)] if c == 2 else [(u, v, 0)])]
    # Letters: C gets the target parity, the rest at random.
    cands = [k for k in range(n) if deg[k] % 2 == int(c_odd)]
    if not cands:
        raise Reject("no_junction_with_parity")
    c = cands[d.integers(len(cands))]
    rest = [int(k) for k in rng.permutation([k for k in range(n) if k != c])]
    order = rest[:2] + [c] + rest[2:]                    # order[new index] = old index
    new = {old: i for i, old in enumerate(order)}
    s = Scene(level, tuple(pts[k] for k in order),
              tuple(sorted((min(new[u], new[v]), max(new[u], new[v]), side if new[u] < new[v] else -side)
                           for u, v, side in roads)), (), (0, 1))
    if level == 3:
        loops: list[tuple[int, float]] = []
        for j in rng.permutation(n)[: d.integers(0, 3)]:
            if rm.widest_gap_deg(s.points, s.roads, tuple(loops), int(j)) >= LOOP_ROOM_DEG:
                loops.append((int(j), rm.loop_direction(s.points, s.roads, tuple(loops), int(j))))
        s = replace(s, loops=tuple(sorted(loops)))
    odd = odd_junctions(s)
    pairs = [p for p in roadless_pairs(s) if _q5_ok(target, differs, odd, p)]
    if not pairs:
        raise Reject("no_roadless_pair")
    s = replace(s, new_road=pairs[d.integers(len(pairs))])
    bad = _legible(s)
    if bad:
        raise Reject(f"illegible_{bad}")
    return s


# --- answers -----------------------------------------------------------------------------------------------------

def degree_of_c(scene: Scene) -> Count:
    return Count(degrees(scene)[2], low=0, high=DEGREE_MAX)


def parity_of_c(scene: Scene) -> Choice:
    return Choice("odd" if degrees(scene)[2] % 2 else "even", ("even", "odd"))


def odd_count(scene: Scene) -> Count:
    return Count(len(odd_junctions(scene)), low=0, high=len(scene.points))


def route(scene: Scene) -> Record:
    cls, ends = route_class(scene)
    names = letters(scene)
    return Record((("route", Choice(cls, CLASSES, ROUTE_ALIASES)),
                   ("endpoints", Ordered(tuple(names[k] for k in ends), "alphabetical order", names, as_set=True))))


def edit(scene: Scene) -> Scene:
    """A new straight road between X and Y (never drawn: only the question names it)."""
    x, y = scene.new_road
    return replace(scene, roads=tuple(sorted(scene.roads + ((x, y, 0),))))


counterfactual = route


def repeats(scene: Scene) -> Record:
    return Record((("repeated_roads", Count(repeat_count(scene), low=0, high=len(scene.roads))),))


# --- ladder ------------------------------------------------------------------------------------------------------

def _loop_rule(scene: Scene) -> str:
    return " A road that leaves a junction and comes back to it counts twice there." if scene.level == 3 else ""


def _route_text(scene: Scene) -> str:
    return ("Say route=closed circuit if the trip can end where it started, route=open route if it must start and "
            "end at two different junctions (give them as endpoints), or route=impossible; endpoints=none unless "
            "the route is open.")


@lru_cache(maxsize=64)   # asked again by the Q4 rephrasing
def ladder(scene: Scene) -> Ladder:
    leg, names = legibility(scene), letters(scene)
    x, y = (names[k] for k in scene.new_road)
    rule = _loop_rule(scene)
    over = " Where one road passes over another (a gap in the lower road) there is no junction." \
        if scene.level == 3 else ""
    rungs = (
        Question(1, "roads_at_c", "How many roads meet at junction C?" + rule, degree_of_c(scene),
                 Margin(leg["angle"], "deg", ANGLE_MIN_DEG, "two road ends at a junction too close to count apart")),
        Question(2, "parity_at_c", "Is the number of roads that meet at junction C even or odd?" + rule,
                 parity_of_c(scene), Margin(leg["gap"], "px", GAP_MIN_PX, "two roads too close to tell apart")),
        Question(3, "odd_junctions", "How many junctions have an odd number of roads meeting at them?" + rule
                 + over, odd_count(scene),
                 Margin(leg["clear"], "px", CLEAR_PX, "a road passing too close to a junction it does not serve")),
        Question(4, "walk_every_road", "Can someone walk along every road exactly once in one trip (junctions may "
                 "be passed any number of times)?" + over + " " + _route_text(scene), route(scene),
                 Margin(leg["cross_angle"], "deg", CROSS_ANGLE_MIN_DEG, "an overpass crossing too flat to read")),
        Question(5, "walk_with_new_road", f"Suppose a new road were built between junctions {x} and {y} (there is "
                 "none yet). Could someone then walk along every road, the new one included, exactly once in one "
                 "trip?" + over + " " + _route_text(scene), counterfactual(edit(scene)),
                 Margin(float(len(roadless_pairs(scene))), "pairs", 1.0, "every pair of junctions already has a road"),
                 edit=f"a new road between {x} and {y}"),
    )
    open_q = Question(6, "repeated_roads", "A walker must walk along every road at least once and return to the "
                      "start. What is the smallest number of road-walks that must be repeated (a road walked twice "
                      "counts one repeat)? Explain." + over, repeats(scene),
                      Margin(leg["overpass"], "px", OVERPASS_CLEAR_PX, "an overpass too close to a junction or "
                             "another overpass"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words, same fields (identity): impossibility first, then where the trip must run."""
    q4 = ladder(scene).rungs[3]
    return Question(4, "one_trip_every_road", "Decide whether a single trip can use every road exactly once. If "
                    "it cannot, route=impossible. If it can and may return to its starting junction, route=closed "
                    "circuit; if it can only run between two different junctions, route=open route with those two "
                    "as endpoints. Give endpoints=none otherwise.", q4.answer, q4.margin)


def minimal_pair(scene: Scene) -> Scene:
    """One road removed, or one straight road added, away from C and the Q5 pair, that changes the route class with
    every margin kept: the shortest such road (ties: removals first, then road order / letter order), so that the
    picture changes as little as possible."""
    cls = route_class(scene)[0]
    p = scene.points

    def length(r) -> float:
        return float(np.sum(np.hypot(*np.diff(rm.road_polyline(p, r), axis=0).T)))
    tries = [(length(r), 0, k, replace(scene, roads=scene.roads[:k] + scene.roads[k + 1:]))
             for k, r in enumerate(scene.roads) if 2 not in r[:2]]
    tries += [(length((u, v, 0)), 1, k, replace(scene, roads=tuple(sorted(scene.roads + ((u, v, 0),)))))
              for k, (u, v) in enumerate(roadless_pairs(scene)) if 2 not in (u, v) and (u, v) != scene.new_road]
    for *_, t in sorted(tries, key=lambda x: x[:3]):
        if route_class(t)[0] != cls and connected(t) and min(degrees(t)) > 0 and _legible(t) is None:
            return t
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def _paper(canvas: Canvas) -> None:
    b = SAFE_BORDER_PX
    shapes.rect(canvas, b, b, canvas.size_px - b, canvas.size_px - b, Style(stroke=None, fill=PAPER))


def _caption_lines(canvas: Canvas, lines: tuple[str, ...]) -> None:
    for i, line in enumerate(lines):
        draw_text_px(canvas, line, (384.0, 44.0 + 22.0 * i), TEXT)


@lru_cache(maxsize=8)
def _caption_rows(size_px: int, world: tuple, lines: tuple[str, ...]) -> tuple[int, int, bytes, bytes]:
    """The caption drawn on bare paper: (start, end) of a band of whole surface rows, as byte offsets, and its bytes
    before and after. The band reaches 3 rows past every pixel the caption changes, beyond any it can touch."""
    canvas = Canvas(size_px, world)
    _paper(canvas)
    canvas.ctx.set_line_cap(1)                     # as every map leaves it (no glyph outline has caps anyway)
    s = canvas.surface
    s.flush()
    before = bytes(s.get_data())
    _caption_lines(canvas, lines)
    s.flush()
    after = bytes(s.get_data())
    w, h = s.get_stride(), s.get_height()
    changed = [r for r in range(h) if before[r * w:(r + 1) * w] != after[r * w:(r + 1) * w]]
    r0, r1 = max(0, changed[0] - 3) * w, min(h, changed[-1] + 4) * w
    return r0, r1, before[r0:r1], after[r0:r1]


def _caption(canvas: Canvas, lines: tuple[str, ...]) -> None:
    """Draw the caption. Its haloed text costs more than the rest of the map, and nothing else is drawn in its rows,
    so where those rows still hold bare paper the pixels of a caption drawn once are copied in (the same bytes:
    drawing depends only on the pixels it touches); where anything else lies in those rows, it is drawn."""
    r0, r1, before, after = _caption_rows(canvas.size_px, canvas.world, lines)
    s = canvas.surface
    s.flush()
    data = s.get_data()
    if bytes(data[r0:r1]) != before:
        _caption_lines(canvas, lines)
        return
    data[r0:r1] = after
    s.mark_dirty()


def draw(scene: Scene, canvas: Canvas) -> None:
    _paper(canvas)
    p = scene.points
    cross = _legibility(scene)[0]
    above = {}
    for lower, upper, x, _ in cross:
        above.setdefault(upper, []).append(x)
    for k, r in enumerate(scene.roads):
        poly = rm.road_polyline(p, r)
        for x in above.get(k, []):               # the upper road's casing cuts a gap in the lower one
            d = (poly[1] - poly[0]) / np.linalg.norm(poly[1] - poly[0])
            a, e = np.asarray(x) - d * 20.0, np.asarray(x) + d * 20.0
            shapes.line(canvas, tuple(a), tuple(e), Style(stroke=PAPER, width_px=rm.ROAD_W_PX + 12.0))
        shapes.polyline(canvas, poly, ROAD)
    for lp in scene.loops:
        shapes.polyline(canvas, rm.loop_polyline(p, lp), ROAD)
    for k, c in enumerate(p):
        shapes.circle(canvas, c, rm.JUNCTION_R_PX, Style(stroke=BLACK, fill=WHITE, width_px=3.0))
        draw_text_px(canvas, LETTERS[k], c, LABEL)
    lines = ("Grey lines are roads; lettered discs are junctions.",)
    if scene.level == 3:
        lines += ("A gap in a road marks an overpass (no junction there).",)
    _caption(canvas, lines)


DOMAIN = Domain(
    id="route_puzzles", family="topological", title="Route puzzles",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="A town map of junctions and roads: roads at C, their parity, odd junctions, whether one trip can "
                "walk every road exactly once (Euler), the same with a new road, and the fewest repeated roads of a "
                "closed tour. Level 2 adds parallel roads, level 3 overpasses and loops.",
    balance_keys=("roads_at_c", "parity_at_c", "walk_every_road", "walk_with_new_road"),
)
