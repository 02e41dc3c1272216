"""Laser & mirrors: an n x n board of double-sided 45-degree mirrors ('/' or '\\'), numbered 1..m, and (from level 2)
black absorber squares. A laser (orange box with a short beam stub) fires inward through one boundary cell edge; the
beam itself is not drawn. Lettered exits sit outside 8-12 boundary edges. The ladder walks mirror count -> first
turn -> reflections -> where the beam ends -> where it ends with mirror k turned the other way; the open question
asks for the numbered mirrors in the order the beam reflects from them.

Rules (y up, direction (dx, dy)): '/' maps (dx, dy) -> (dy, dx), '\\' maps (dx, dy) -> (-dy, -dx); an absorber stops
the beam. The map from (cell, direction) to its successor is a bijection, so a beam entering from the boundary
cannot loop and never leaves through the edge it came in by (its reversed path would be itself, which needs a
180-degree turn). Cells: row 1 = top, column 1 = left.

Ambiguity boundaries are structural, not metric: the beam must meet a mirror (Q2); the cell where it leaves must
carry a letter set apart from every other letter (Q4, and Q5 on the edited board); mirror bars, mirror numbers and
the cell lines must stay apart in px so that each bar is counted once and each number belongs to one bar.

Version 2: the laser box is drawn in Okabe-Ito vermillion, which reads as orange, so every text now calls it the
orange box (version 1 said red). Minimal pair: the first mirror on the beam's path whose flip changes where the beam
ends with every margin holding (a single-cell change; Q1 kept). The Q4 rephrase asks where a detector should go.

Choices the sheet leaves open: level 3 takes the "n = 8, m <= 10" branch (no free-angle mirrors), and the sampler
never lets the beam strike a mirror twice, because the open answer is an `Ordered` list, which cannot repeat an item
(`mirrors_in_order` rejects such a scene; a flipped board in Q5 may still strike one twice).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import cairo
import numpy as np

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY, GREY_DARK, LABEL, OKABE_ITO, TEXT, Style
from grip.renderers.text import FONT_FAMILY, check_font, text_size

SLASH, BACKSLASH = "/", "\\"
SIDES = ("top", "right", "bottom", "left")
INWARD = {"top": (0, -1), "bottom": (0, 1), "left": (1, 0), "right": (-1, 0)}   # y-up (dx, dy) into the board
LEFT, RIGHT, ABSORBED = "left", "right", "absorbed"
LETTERS = "ABCDEFGHIJKL"

# Difficulty (the sheet's L1: n = 5, m <= 4; L2: n <= 7, absorbers; L3: n = 8, m <= 10). `refl` is the target
# reflection count, drawn first so that Q3 spreads over 1-6.
LEVEL = {1: {"n": (5, 5), "m": (3, 4), "absorbers": (0, 0), "refl": (1, 4)},
         2: {"n": (6, 7), "m": (4, 7), "absorbers": (1, 2), "refl": (1, 6)},
         3: {"n": (8, 8), "m": (6, 10), "absorbers": (1, 3), "refl": (1, 6)}}
ABSORBED_SHARE = 0.15          # of Q4 answers at L >= 2 (the sheet's balance line)
ON_PATH_SHARE = 0.75           # Q5's mirror k lies on the beam's path
LABEL_COUNT = (8, 12)
PATH_TRIES = 60

# Geometry, px on the 768 canvas.
CELL_PX = {5: 96, 6: 86, 7: 76, 8: 68}     # >= 64 px per cell
CAPTION_PX = 66                            # caption strip below the top safe border
SHIFT_PX = 8                               # nuisance jitter of the board
BAR_INSET_PX, BAR_WIDTH_PX = 8.0, 5.0      # mirror bar: inset from the cell corners, width
ABSORBER_INSET_PX = 12.0
LETTER_OUT_PX = 24.0                       # exit letter centre, outside the board edge
EMITTER_PX, STUB_PX = 26.0, 20.0           # laser box side, beam stub length
NUMBER_STYLE = LABEL.with_(font_px=18.0)
NUMBER_INSET_PX = 4.0                      # number box from the cell lines
NUMBER_BOX_PX = {1: (19.0, 20.0), 2: (31.0, 20.0)}   # ink box incl. halo of a 1- or 2-digit number (DejaVu Bold 18)

BAR_GAP_MIN_PX = 8.0           # two bars closer than this read as one
LABEL_GAP_MIN_PX = 28.0        # the sheet: labels >= 28 px apart
ENDPOINT_CLEAR_MIN_PX = 8.0    # the sheet: the beam passes >= 8 px from every mirror endpoint
NUMBER_CLEAR_MIN_PX = 3.0      # a number's box from its own bar


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3
    n: int                                       # board size, 5..8 cells a side
    mirrors: tuple[tuple[int, int, str], ...]    # mirror k+1 = (row, col, "/" or "\\"); rows/cols 1..n, distinct cells
    absorbers: tuple[tuple[int, int], ...]       # (row, col), cells without a mirror; none at level 1
    entry: tuple[str, int]                       # (side, index) of the boundary edge the laser fires through
    exits: tuple[tuple[str, str, int], ...]      # (letter, side, index): 8-12 lettered boundary edges, not the entry
    flip: int                                    # the mirror number Q5 turns the other way, 1..m
    shift_px: tuple[float, float]                # nuisance offset of the whole board, px, within +-SHIFT_PX


# --- tracing (pure) ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Trace:
    hits: tuple[int, ...]                        # mirror numbers in reflection order
    turns: tuple[str, ...]                       # LEFT / RIGHT per reflection
    cells: tuple[tuple[int, int], ...]           # cells the beam enters, in order
    end: tuple                                   # ("exit", side, index) or ("absorbed", row, col)


def entry_cell(n: int, side: str, idx: int) -> tuple[int, int]:
    return {"top": (1, idx), "bottom": (n, idx), "left": (idx, 1), "right": (idx, n)}[side]


def reflect(kind: str, d: tuple[int, int]) -> tuple[int, int]:
    return (d[1], d[0]) if kind == SLASH else (-d[1], -d[0])


def turn_of(old: tuple[int, int], new: tuple[int, int]) -> str:
    """Left for a counterclockwise turn (positive z of old x new, y up)."""
    return LEFT if old[0] * new[1] - old[1] * new[0] > 0 else RIGHT


def boundary_of(n: int, row: int, col: int) -> tuple[str, int]:
    """The boundary edge a beam crosses to reach the outside cell (row, col)."""
    if row < 1:
        return ("top", col)
    if row > n:
        return ("bottom", col)
    return ("left", row) if col < 1 else ("right", row)


@functools.lru_cache(maxsize=256)
def trace(scene: Scene) -> Trace:
    """The beam's path (cached: the sampler, the ladder, its edit and the rephrased Q4 each ask for it)."""
    at = {(r, c): (k + 1, kind) for k, (r, c, kind) in enumerate(scene.mirrors)}
    absorbers = set(map(tuple, scene.absorbers))
    (r, c), d = entry_cell(scene.n, *scene.entry), INWARD[scene.entry[0]]
    hits, turns, cells = [], [], []
    for _ in range(4 * scene.n * scene.n + 1):   # each (cell, direction) at most once
        cells.append((r, c))
        if (r, c) in absorbers:
            return Trace(tuple(hits), tuple(turns), tuple(cells), ("absorbed", r, c))
        if (r, c) in at:
            k, kind = at[(r, c)]
            new = reflect(kind, d)
            hits.append(k)
            turns.append(turn_of(d, new))
            d = new
        r, c = r - d[1], c + d[0]
        if not (1 <= r <= scene.n and 1 <= c <= scene.n):
            return Trace(tuple(hits), tuple(turns), tuple(cells), ("exit", *boundary_of(scene.n, r, c)))
    raise ValueError(f"laser_mirrors: beam does not leave the board (entry {scene.entry})")


def letter_at(scene: Scene, side: str, idx: int) -> str | None:
    return next((L for L, s, i in scene.exits if (s, i) == (side, idx)), None)


def mirrored_lr(scene: Scene) -> Scene:
    """The board reflected left to right: every turn swaps left <-> right, the hit sequence and exits follow."""
    n = scene.n

    def edge(side: str, idx: int) -> tuple[str, int]:
        return {"left": ("right", idx), "right": ("left", idx)}.get(side, (side, n + 1 - idx))

    return replace(scene, mirrors=tuple((r, n + 1 - c, SLASH if k == BACKSLASH else BACKSLASH)
                                        for r, c, k in scene.mirrors),
                   absorbers=tuple((r, n + 1 - c) for r, c in scene.absorbers), entry=edge(*scene.entry),
                   exits=tuple((L, *edge(s, i)) for L, s, i in scene.exits))


# --- sampling ----------------------------------------------------------------------------------------------------

def _run(n: int, cell: tuple[int, int], d: tuple[int, int], mirrors: dict) -> list[tuple[int, int]]:
    """Cells from `cell` straight along d up to the board edge, stopping before the first mirror cell."""
    out, (r, c) = [], cell
    while 1 <= r <= n and 1 <= c <= n and (r, c) not in mirrors:
        out.append((r, c))
        r, c = r - d[1], c + d[0]
    return out


def _grow_path(draws: Draws, n: int, refl: int, absorbed: bool):
    """Grow a beam with exactly `refl` reflections off distinct mirrors: each straight run places its mirror on a
    cell the beam has not crossed yet, and never runs into an earlier mirror. Returns (entry, path mirrors
    {cell: kind} in hit order, cells visited, absorber cell or None), or None when the walk gets stuck."""
    integers = draws.integers
    side = SIDES[integers(4)]
    entry = (side, integers(1, n + 1))
    cell, d = entry_cell(n, *entry), INWARD[side]
    mirrors: dict[tuple[int, int], str] = {}
    crossed: set[tuple[int, int]] = set()
    for _ in range(refl):
        run = _run(n, cell, d, mirrors)
        cands = [k for k, x in enumerate(run) if x not in crossed]
        if not cands:
            return None
        k = cands[integers(len(cands))]      # rng.choice(cands)'s draw, without its overhead
        crossed.update(run[:k])
        kind = (SLASH, BACKSLASH)[integers(2)]
        mirrors[run[k]] = kind
        d = reflect(kind, d)
        cell = (run[k][0] - d[1], run[k][1] + d[0])
        if not (1 <= cell[0] <= n and 1 <= cell[1] <= n):
            return None if len(mirrors) < refl else (entry, mirrors, crossed | set(mirrors), None)
    run = _run(n, cell, d, mirrors)
    edge_r, edge_c = (run[-1] if run else cell)
    if not absorbed:
        if run and (edge_r - d[1], edge_c + d[0]) in mirrors or (not run and cell in mirrors):
            return None   # the final run would strike an earlier mirror
        return entry, mirrors, crossed | set(mirrors) | set(run), None
    cands = [k for k, x in enumerate(run) if x not in crossed]
    if not cands:
        return None
    k = cands[integers(len(cands))]
    return entry, mirrors, crossed | set(mirrors) | set(run[:k + 1]), run[k]


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first: the first turn (Q2, 50/50), the reflection count (Q3, uniform over the level's range) and
    whether the beam is absorbed (Q4, 15% at L >= 2); the beam is grown to match, distractor mirrors and absorbers go
    on cells it never enters, and exit letters are shuffled over the chosen edges so the right letter is uniform."""
    if level not in LEVEL:
        raise ValueError(f"laser_mirrors: level must be 1, 2 or 3, got {level!r}")
    p = LEVEL[level]
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    n = d.integers(p["n"][0], p["n"][1] + 1)
    want_turn = (LEFT, RIGHT)[d.integers(2)]
    refl = d.integers(p["refl"][0], p["refl"][1] + 1)
    absorbed = level >= 2 and d.random() < ABSORBED_SHARE
    grown = None
    for _ in range(PATH_TRIES):
        grown = _grow_path(d, n, refl, absorbed)
        if grown is not None and (grown[3] is not None) == absorbed:
            break
    else:
        raise Reject("no_path")
    entry, path, visited, sink = grown
    m = d.integers(max(p["m"][0], refl), p["m"][1] + 1)
    n_abs = d.integers(p["absorbers"][0], p["absorbers"][1] + 1) - (sink is not None)
    free = [(r, c) for r in range(1, n + 1) for c in range(1, n + 1) if (r, c) not in visited]
    extra = max(n_abs, 0) + m - refl
    if extra > len(free):
        raise Reject("board_full")
    picks = [free[i] for i in d.subset(len(free), extra)]
    cells = list(path.items()) + [(x, (SLASH, BACKSLASH)[d.integers(2)]) for x in picks[:m - refl]]
    order = rng.permutation(m)                        # mirror number order[i] + 1 goes to cells[i]
    mirrors = [None] * m
    for i, (x, kind) in enumerate(cells):
        mirrors[int(order[i])] = (x[0], x[1], kind)
    absorbers = tuple(sorted(picks[m - refl:] + ([sink] if sink else [])))
    on_path = [int(order[i]) + 1 for i in range(refl)]
    off_path = [int(order[i]) + 1 for i in range(refl, m)]
    pool = on_path if d.random() < ON_PATH_SHARE or not off_path else off_path
    flip = pool[d.integers(len(pool))]
    shift = tuple(float(d.integers(-SHIFT_PX, SHIFT_PX + 1)) for _ in range(2))
    s = Scene(level, n, tuple(mirrors), absorbers, entry, (), flip, shift)
    ends = {t.end[1:] for t in (trace(s), trace(edit(s))) if t.end[0] == "exit"}
    edges = [(side, i) for side in SIDES for i in range(1, n + 1) if (side, i) != entry and (side, i) not in ends]
    k = d.integers(LABEL_COUNT[0], LABEL_COUNT[1] + 1)
    chosen = sorted(ends) + [edges[i] for i in d.subset(len(edges), k - len(ends))]
    letters = rng.permutation(k)
    s = replace(s, exits=tuple(sorted((LETTERS[int(letters[i])], *e) for i, e in enumerate(chosen))))
    return s if first_turn(s).value == want_turn else mirrored_lr(s)


# --- derived geometry (shared by margins and drawing) ------------------------------------------------------------

def grid_origin(scene: Scene) -> tuple[float, float, float]:
    """(x0, y0, cell): the board's top-left corner and cell size, px, y down."""
    cell = CELL_PX[scene.n]
    g = scene.n * cell
    top = SAFE_BORDER_PX + CAPTION_PX
    return (384 - g / 2 + scene.shift_px[0], (top + 768 - SAFE_BORDER_PX) / 2 - g / 2 + scene.shift_px[1], cell)


def bar_of(scene: Scene, row: int, col: int, kind: str) -> tuple[tuple[float, float], tuple[float, float]]:
    x0, y0, cell = grid_origin(scene)
    xl, yt, i = x0 + (col - 1) * cell, y0 + (row - 1) * cell, BAR_INSET_PX
    xr, yb = xl + cell, yt + cell
    return ((xl + i, yb - i), (xr - i, yt + i)) if kind == SLASH else ((xl + i, yt + i), (xr - i, yb - i))


def edge_point(scene: Scene, side: str, idx: int, out_px: float) -> tuple[float, float]:
    """A point `out_px` outside the midpoint of a boundary cell edge."""
    x0, y0, cell = grid_origin(scene)
    g, mid = scene.n * cell, (idx - 0.5) * cell
    return {"top": (x0 + mid, y0 - out_px), "bottom": (x0 + mid, y0 + g + out_px),
            "left": (x0 - out_px, y0 + mid), "right": (x0 + g + out_px, y0 + mid)}[side]


def number_boxes(scene: Scene) -> list[tuple[float, float, float, float]]:
    """Per mirror, the (x0, y0, x1, y1) box of its number: in one of the two corners its bar leaves free, the one
    farther from numbers already placed, so that neighbouring numbers do not pair up across a cell line."""
    x0, y0, cell = grid_origin(scene)
    out: list[tuple[float, float, float, float]] = []
    for k, (r, c, kind) in enumerate(scene.mirrors):
        w, h = NUMBER_BOX_PX[len(str(k + 1))]
        xl, yt, e = x0 + (c - 1) * cell, y0 + (r - 1) * cell, NUMBER_INSET_PX
        left, right = xl + e, xl + cell - e - w
        top, bottom = yt + e, yt + cell - e - h
        corners = [(left, top), (right, bottom)] if kind == SLASH else [(right, top), (left, bottom)]
        placed = [((a + p) / 2, (b + q) / 2) for a, b, p, q in out]
        room = [min((math.dist((x + w / 2, y + h / 2), o) for o in placed), default=math.inf) for x, y in corners]
        bx, by = corners[1 if room[1] > room[0] else 0]   # ties keep the top corner
        out.append((bx, by, bx + w, by + h))
    return out


def _seg_dist(p, q, a, b) -> float:
    """Distance between segments pq and ab (no crossings occur: bars sit in distinct cells)."""
    def point_seg(x, s0, s1):
        vx, vy = s1[0] - s0[0], s1[1] - s0[1]
        t = max(0.0, min(1.0, ((x[0] - s0[0]) * vx + (x[1] - s0[1]) * vy) / (vx * vx + vy * vy)))
        return math.dist(x, (s0[0] + t * vx, s0[1] + t * vy))
    return min(point_seg(p, a, b), point_seg(q, a, b), point_seg(a, p, q), point_seg(b, p, q))


def bar_gap_px(scene: Scene) -> float:
    bars = [bar_of(scene, *m) for m in scene.mirrors]
    gaps = [_seg_dist(*bars[i], *bars[j]) - BAR_WIDTH_PX for i in range(len(bars)) for j in range(i + 1, len(bars))]
    return float(min(gaps, default=768.0))


def number_clearance_px(scene: Scene) -> float:
    """Smallest gap between a number's box and its own bar (the nearest stroke it could be confused with)."""
    gaps = []
    for (r, c, kind), (a, b, p, q) in zip(scene.mirrors, number_boxes(scene)):
        (u0, v0), (u1, v1) = bar_of(scene, r, c, kind)
        nx, ny = (v1 - v0), -(u1 - u0)
        norm = math.hypot(nx, ny)
        gaps.append(min(abs((x - u0) * nx + (y - v0) * ny) / norm for x in (a, p) for y in (b, q)) - BAR_WIDTH_PX / 2)
    return float(min(gaps, default=768.0))


def end_label_gap_px(scene: Scene) -> float:
    """Q4/Q5 legibility: distance from the end's letter to the nearest other letter or the laser box (0 when the
    beam leaves through an unlettered edge); an absorbed beam ends on a square of this side instead."""
    t = trace(scene)
    if t.end[0] == "absorbed":
        return CELL_PX[scene.n] - 2 * ABSORBER_INSET_PX
    own = letter_at(scene, *t.end[1:])
    if own is None:
        return 0.0
    here = edge_point(scene, *t.end[1:], LETTER_OUT_PX)
    others = [edge_point(scene, s, i, LETTER_OUT_PX) for L, s, i in scene.exits if L != own]
    others.append(edge_point(scene, *scene.entry, STUB_PX + EMITTER_PX / 2))
    return float(min(math.dist(here, q) for q in others))


# --- answers -----------------------------------------------------------------------------------------------------

def mirror_count(scene: Scene) -> Count:
    return Count(len(scene.mirrors), low=1, high=LEVEL[3]["m"][1])


def first_turn(scene: Scene) -> Choice:
    t = trace(scene)
    if not t.turns:
        raise Reject("no_mirror_on_path")
    return Choice(t.turns[0], (LEFT, RIGHT), (("turns left", LEFT), ("turns right", RIGHT)))


def reflection_count(scene: Scene) -> Count:
    return Count(len(trace(scene).hits), low=0)


def beam_end(scene: Scene) -> Choice:
    """The lettered exit the beam leaves by, or 'absorbed'. An unlettered exit is not a valid scene."""
    t = trace(scene)
    options = tuple(sorted(L for L, _, _ in scene.exits)) + (ABSORBED,)
    aliases = tuple((f"exit {L}", L) for L in options[:-1]) + (("it is absorbed", ABSORBED), ("absorber", ABSORBED))
    if t.end[0] == "absorbed":
        return Choice(ABSORBED, options, aliases)
    letter = letter_at(scene, *t.end[1:])
    if letter is None:
        raise Reject("exit_unlettered")
    return Choice(letter, options, aliases)


def edit(scene: Scene) -> Scene:
    """Q5's edit: mirror `flip` turned the other way (/ <-> \\), everything else unchanged."""
    r, c, kind = scene.mirrors[scene.flip - 1]
    new = (r, c, SLASH if kind == BACKSLASH else BACKSLASH)
    return replace(scene, mirrors=scene.mirrors[:scene.flip - 1] + (new,) + scene.mirrors[scene.flip:])


counterfactual = beam_end


def mirrors_in_order(scene: Scene) -> Record:
    hits = tuple(str(k) for k in trace(scene).hits)
    if len(set(hits)) != len(hits):
        raise Reject("mirror_hit_twice")    # an Ordered answer cannot repeat an item (module notes)
    options = tuple(str(k) for k in range(1, len(scene.mirrors) + 1))
    return Record((("mirrors", Ordered(hits, "the order the beam reflects from them", options)),))


# --- ladder ------------------------------------------------------------------------------------------------------

ENDING = "at which lettered exit does it leave the board, or is it absorbed by a black square?"


def ladder(scene: Scene) -> Ladder:
    t = trace(scene)
    bar_gap = Margin(bar_gap_px(scene), "px", BAR_GAP_MIN_PX, "two mirror bars close enough to read as one")
    cell = CELL_PX[scene.n]
    endpoint = Margin((cell - 2 * BAR_INSET_PX) * math.sqrt(2) / 2, "px", ENDPOINT_CLEAR_MIN_PX,
                      "beam grazing a mirror endpoint")
    rungs = (
        Question(1, "mirror_count", "How many mirrors (slanted bars) are on the board?", mirror_count(scene), bar_gap),
        Question(2, "first_turn", "The orange box is a laser that fires a beam into the board along its short "
                 "stub; the beam is not drawn. When the beam reaches the first mirror in its path, does it turn left "
                 "or right (as seen by the beam, facing its direction of travel)?", first_turn(scene),
                 Margin(len(t.hits), "reflections", 1, "beam meets no mirror")),
        Question(3, "reflection_count", "The laser (orange box) fires its beam along its stub; every mirror reflects "
                 "on both faces. How many times does the beam reflect before it leaves the board or is absorbed?",
                 reflection_count(scene), endpoint),
        Question(4, "beam_end", "Follow the laser beam from the orange box through the mirrors: " + ENDING,
                 beam_end(scene), Margin(end_label_gap_px(scene), "px", LABEL_GAP_MIN_PX,
                                         "exit unlettered or its letter crowded by another")),
        Question(5, "beam_end_flipped", f"If mirror {scene.flip} were turned the other way (/ becomes \\, \\ becomes "
                 f"/) and nothing else changed, where would the laser beam end: " + ENDING,
                 counterfactual(edit(scene)), Margin(end_label_gap_px(edit(scene)), "px", LABEL_GAP_MIN_PX,
                                                     "edited exit unlettered or its letter crowded"),
                 edit=f"turn mirror {scene.flip} the other way (/ becomes \\, \\ becomes /)"),
    )
    open_q = Question(6, "mirrors_in_order", "Explain the laser beam's route, reflection by reflection, and list in "
                      "order the numbers of the mirrors it reflects from.", mirrors_in_order(scene),
                      Margin(number_clearance_px(scene), "px", NUMBER_CLEAR_MIN_PX,
                             "mirror number touching its bar"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked as where to place a detector (map: identity)."""
    return Question(4, "detector_position", "The orange box is a laser that fires along its stub; the beam is not "
                    "drawn and mirrors reflect on both faces. At which lettered position outside the board should a "
                    "detector be placed to catch the beam? Answer 'absorbed' if a black square stops it first.",
                    beam_end(scene), Margin(end_label_gap_px(scene), "px", LABEL_GAP_MIN_PX,
                                            "exit unlettered or its letter crowded by another"))


def minimal_pair(scene: Scene) -> Scene:
    """Flip the first mirror on the beam's path whose flip changes where the beam ends, every margin holding."""
    q4 = beam_end(scene).value
    for k in trace(scene).hits:
        r, c, kind = scene.mirrors[k - 1]
        twin = replace(scene, mirrors=scene.mirrors[:k - 1] + ((r, c, SLASH if kind == BACKSLASH else BACKSLASH),)
                       + scene.mirrors[k:])
        try:
            if beam_end(twin).value != q4 and not ladder(twin).failing_margins():
                return twin
        except Reject:   # unlettered exit, a mirror struck twice, ...
            continue
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

MIRROR = OKABE_ITO["blue"]
LASER = OKABE_ITO["vermillion"]


def _texts(canvas: Canvas, items, style: Style) -> None:
    """Centred text in the pinned font, without painting the halo: every text box here (halo included) keeps clear of
    all strokes -- numbers by `number_clearance_px` and the cell lines, letters and caption outside the board -- so
    the halo would be white on white. Skipping it halves the drawing time. Wish: a batch text helper in text.py."""
    check_font()
    ctx = canvas.ctx
    ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL,
                         cairo.FONT_WEIGHT_BOLD if style.bold else cairo.FONT_WEIGHT_NORMAL)
    ctx.set_font_size(style.font_px)
    ctx.set_source_rgb(*style.text)
    for text, (u, v) in items:
        ext = ctx.text_extents(text)
        ctx.move_to(u - ext.width / 2 - ext.x_bearing, v - ext.height / 2 - ext.y_bearing)
        ctx.show_text(text)
    ctx.new_path()


def draw(scene: Scene, canvas: Canvas) -> None:
    x0, y0, cell = grid_origin(scene)
    g, n = scene.n * cell, scene.n
    lines = [((x0 + k * cell, y0), (x0 + k * cell, y0 + g)) for k in range(1, n)]
    lines += [((x0, y0 + k * cell), (x0 + g, y0 + k * cell)) for k in range(1, n)]
    shapes.segments(canvas, lines, Style(stroke=GREY, width_px=1.5), register=False)   # no label is placed by search
    shapes.rect(canvas, x0, y0, x0 + g, y0 + g, Style(stroke=GREY_DARK, width_px=3.0), owner="grid")
    ctx = canvas.ctx
    ins = ABSORBER_INSET_PX
    for r, c in scene.absorbers:
        ctx.rectangle(x0 + (c - 1) * cell + ins, y0 + (r - 1) * cell + ins, cell - 2 * ins, cell - 2 * ins)
    ctx.set_source_rgb(*BLACK)
    ctx.fill()
    for mirror in scene.mirrors:
        (u0, v0), (u1, v1) = bar_of(scene, *mirror)
        ctx.move_to(u0, v0)
        ctx.line_to(u1, v1)
    ctx.set_source_rgb(*MIRROR)
    ctx.set_line_width(BAR_WIDTH_PX)
    ctx.set_line_cap(cairo.LINE_CAP_BUTT)      # the bar ends exactly 8 px from the cell corners
    ctx.stroke()
    _texts(canvas, [(str(k + 1), ((a + p) / 2, (b + q) / 2)) for k, (a, b, p, q) in enumerate(number_boxes(scene))],
           NUMBER_STYLE)
    _texts(canvas, [(L, edge_point(scene, side, idx, LETTER_OUT_PX)) for L, side, idx in scene.exits], LABEL)
    # The laser: an orange box with an outline, and a stub with a head pointing into the board.
    side, idx = scene.entry
    edge = np.array(edge_point(scene, side, idx, 0.0))
    inward = np.array(INWARD[side], float) * (1, -1)         # y down on the canvas
    box_c = edge - inward * (STUB_PX + EMITTER_PX / 2)
    h = EMITTER_PX / 2
    shapes.rect(canvas, box_c[0] - h, box_c[1] - h, box_c[0] + h, box_c[1] + h,
                Style(stroke=BLACK, fill=LASER, width_px=2.0), "laser")
    shapes.line(canvas, tuple(edge - inward * STUB_PX), tuple(edge - inward * 7), Style(stroke=LASER, width_px=5.0),
                "laser")
    shapes.arrowhead(canvas, edge, inward, Style(stroke=LASER), size_px=10.0, owner="laser")
    caption = ["The orange box is a laser; it fires along its stub. The beam is not drawn.",
               "Mirrors are the slanted bars and reflect on both faces."
               + (" Black squares absorb the beam." if scene.level >= 2 else "")]
    style = TEXT.with_(font_px=15.0)
    if max(text_size(canvas, line, style)[0] for line in caption) > 768 - 2 * SAFE_BORDER_PX - 8:
        raise Reject("caption_too_wide")
    _texts(canvas, [(line, (384, SAFE_BORDER_PX + 12 + 22 * i)) for i, line in enumerate(caption)], style)


DOMAIN = Domain(
    id="laser_mirrors", family="physical", title="Laser & Mirrors",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=3,
    description="A laser fires into a grid of numbered double-sided 45-degree mirrors (and absorbers): count the "
                "mirrors, the first turn, the reflections, the lettered exit, and the exit with one mirror flipped.",
    balance_keys=("mirror_count", "first_turn", "reflection_count", "beam_end"),
)
