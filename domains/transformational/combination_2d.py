"""2-D combination: a target shape on a unit grid (one cell marked with a dot) and a bank of six numbered pieces,
each drawn turned by a quarter-turn multiple. Three pieces (four at level 3) tile the target with turns only. The
ladder walks target area -> largest piece -> area-matching sets -> the tiling set -> flips allowed; the open question
asks which piece covers the dotted cell.

The bank: the solution pieces; Q', a neighbour of solution piece Q after Q and P swapped one boundary cell each (so
{P, Q', ...} has the right area and misses one cell); a flip decoy made from a chiral solution piece X: its mirror
image M (Q5 = yes: with flips the set {M, ...} tiles) or X with one cell moved, N (Q5 = no); and at levels 1-2 a
free decoy D of 2-7 cells. Every answer comes from exhaustive search over placements (`_polyomino`).
Ambiguity boundary (discrete): a set of pieces that almost tiles. For every area-matching set that does not tile,
u(S) = cells left uncovered by the best overlap-allowed placement, >= 1; the swap-partner set has u = 1.
Legibility: target cells 40 px, bank cells 32 px; levels 1-2 draw the bank pieces' cell lines, level 3 does not.
Q4 rephrase: the sheet's "which pieces are NOT needed" is the complement within 1-6, which the contract's
complement map (two-way choices and numbers) cannot state; the rephrasing asks for the same set in other words.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations

import numpy as np
import shapely

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.domains.transformational import _polyomino as pm
from grip.geometry import ROTATION_OPS
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY_DARK, GREY_PALE, LABEL, PASTELS, TEXT, Style
from grip.renderers.text import draw_text_px

AREA = {1: 12, 2: 16, 3: 20}
K = {1: 3, 2: 3, 3: 4}
# Q3 targets, met where the bank's areas allow (X and D's size are chosen for it), else the nearest count they allow
# after 10 tries: without a free decoy (L3) the areas give 3 sets (X = Q) or 4 plus chance coincidences.
WANT_SETS = {1: (3, 4, 5, 5), 2: (3, 4, 5, 5), 3: (3, 4, 5)}
NUMBERS = ("1", "2", "3", "4", "5", "6")
YES, NO = "yes", "no"
TARGET_CELL, BANK_CELL = 40.0, 32.0
TARGET_TOP = 64.0
SLOTS = tuple((24.0 + 240.0 * (i % 3), 318.0 + 213.0 * (i // 3)) for i in range(6))   # bank slot top-left, px
SLOT_W, SLOT_H = 240.0, 213.0
CELL_LINES, SHAPE_OUTLINE = Style(stroke=GREY_DARK, width_px=1.5), Style(stroke=BLACK, width_px=3.0)
TITLE = TEXT.with_(bold=True)
DOT, SLOT_FRAME = Style(stroke=None, fill=BLACK), Style(stroke=(0.80, 0.80, 0.80), width_px=2.0)

Cells = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Scene:
    level: int                       # 1..3: target area, pieces per tiling, bank grid lines
    target: Cells                    # (x, y) cells of the 6 x 6 board, sorted
    bank: tuple[Cells, ...]          # six pieces as drawn (turned, normalised to x, y >= 0), numbered 1-6
    dot: tuple[int, int]             # the marked target cell
    twin_slot: int                   # minimal pair: bank index of piece P ...
    twin_piece: Cells                # ... and P' (P with its swapped cell), turned as P is drawn
    flips: bool = False              # pieces may be flipped over (only the Q5 edit sets it)


# --- sampling ----------------------------------------------------------------------------------------------------

def _swap(d: Draws, pieces: list[Cells]):
    """(p, q, P', Q'): two adjacent pieces that trade one boundary cell each, both still connected, P' matching no
    turn or mirror of P and Q' none of Q; None if no pair works."""
    masks = [pm.mask_of(c) for c in pieces]
    connected = {}                                   # mask -> connected: (q, p) tries the masks (p, q) tried
    pairs = _pairs(len(pieces))
    for p, q in [pairs[i] for i in d.permutation(len(pairs))]:     # rng.permutation of the pairs' array
        pm_, qm = masks[p], masks[q]
        cs = pm.cell_bits(pm_ & pm.expand(qm))          # cells of P next to Q, and of Q next to P
        ds = pm.cell_bits(qm & pm.expand(pm_))
        p_orbit = q_orbit = None
        for ci in d.permutation(len(cs)):
            cb = cs[ci]
            p_rest = pm_ & ~cb
            for di in d.permutation(len(ds)):
                db = ds[di]
                p2m, q2m = p_rest | db, qm & ~db | cb
                ok = connected.get(p2m)
                if ok is None:
                    ok = connected[p2m] = pm.connected(p2m)
                if not ok:
                    continue
                ok = connected.get(q2m)
                if ok is None:
                    ok = connected[q2m] = pm.connected(q2m)
                if not ok:
                    continue
                # congruence is symmetric: candidates are tested against the original's orbit
                if p_orbit is None:
                    p_orbit, q_orbit = pm.orbit_keys(pm.shape_key(pm_)), pm.orbit_keys(pm.shape_key(qm))
                if pm.shape_key(p2m) not in p_orbit and pm.shape_key(q2m) not in q_orbit:
                    return p, q, pm.cells_of(p2m), pm.cells_of(q2m)
    return None


@lru_cache(maxsize=8)
def _pairs(k: int) -> tuple[tuple[int, int], ...]:
    """The ordered pairs of distinct piece indices."""
    return tuple((i, j) for i in range(k) for j in range(k) if i != j)


def _moved_one(d: Draws, piece: Cells) -> Cells | None:
    """The piece with one cell moved to another free edge-adjacent place: connected, matching no turn or mirror."""
    cells = set(piece)
    orbit = set(pm.orientations(pm.normalise(piece), True))     # congruence is symmetric
    for i in d.permutation(len(piece)):
        rest = cells - {piece[i]}
        if not pm.connected(rest):
            continue
        spots = sorted({(x + dx, y + dy) for x, y in rest for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))} - cells)
        for j in d.permutation(len(spots)):
            new = pm.normalise(rest | {spots[j]})
            if new not in orbit and max(max(x, y) for x, y in new) < pm.BOARD:
                return new
    return None


@lru_cache(maxsize=4096)   # asked for the same few area lists again and again
def _count_sets(areas: tuple[int, ...], total: int, k: int) -> int:
    return sum(sum(areas[i] for i in c) == total for c in combinations(range(len(areas)), k))


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"combination_2d: level must be 1..3, got {level}")
    draws = Draws(rng)                                # the Generator's own draws, cheaper
    flip_yes = draws.random() < 0.5                   # Q5 target, 50/50
    want_sets = draws.pick(WANT_SETS[level])          # Q3 target
    n, k = AREA[level], K[level]
    for tries in range(30):
        target = pm.compact_region(draws, n)
        pieces = None
        for _ in range(3 if target is not None else 0):
            pieces = pm.partition(draws, target, k)
            if pieces is not None:
                break
        swap = _swap(draws, pieces) if pieces is not None else None
        if swap is None:
            continue
        p, q, p2, q2 = swap
        # The bank's areas alone fix Q2 and Q3: choose X (and D's size) to hit the Q3 target with a unique largest.
        areas = [len(c) for c in pieces]
        options = []                                   # (|count - target|, x, D's size)
        for x in (i for i in range(k) if pm.chiral(pieces[i])):
            for d in (range(2, 8) if level < 3 else (None,)):
                bank_areas = areas + [areas[q], areas[x]] + ([d] if d else [])
                top = sorted(bank_areas, reverse=True)
                if top[0] > top[1]:
                    options.append((abs(_count_sets(tuple(top), n, k) - want_sets), x, d))
        if not options:
            continue
        # the target count where the areas allow it, else (from the 10th try on) the nearest count they allow
        best = min(o[0] for o in options)
        if best and tries < 10:
            continue
        choices = [(x, d) for gap, x, d in options if gap == best]
        x, d_size = choices[draws.integers(len(choices))]
        decoy = pm.apply("flip_x", pieces[x]) if flip_yes else _moved_one(draws, pm.normalise(pieces[x]))
        extra = [pm.grow(draws, d_size, start=(2, 2))] if d_size else []
        if decoy is None or None in extra:
            continue
        bank = [pm.normalise(c) for c in pieces + [q2, decoy] + extra]
        order = draws.permutation(6)
        turns = [ROTATION_OPS[draws.integers(4)] for _ in range(6)]
        drawn = tuple(pm.apply(turns[i], bank[order[i]]) for i in range(6))
        slot_p = order.index(p)
        s = Scene(level, target, drawn, target[0], slot_p, pm.apply(turns[slot_p], pm.normalise(p2)))
        sets = tiling_sets(s, False)[0]
        if len(sets) != 1 or other_set(edit(s)).value != (YES if flip_yes else NO):
            continue
        sol = sets[0]
        marked = sol[draws.integers(len(sol))]
        found = _turn_tilings(tuple(drawn[i] for i in sol), pm.mask_of(target))
        fixed = [c for c in target if all(pm.mask_of([c]) & t[sol.index(marked)] for t in found)]
        if not fixed:
            continue
        return replace(s, dot=fixed[draws.integers(len(fixed))])
    raise Reject("no_bank")


# --- answers (exhaustive search) ---------------------------------------------------------------------------------

def size(scene: Scene) -> int:
    return K[scene.level]


def area_sets(scene: Scene) -> list[tuple[int, ...]]:
    """Bank index sets of the tiling size whose areas add up to the target's."""
    n = len(scene.target)
    return [s for s in combinations(range(6), size(scene)) if sum(len(scene.bank[i]) for i in s) == n]


def tiling_sets(scene: Scene, flips: bool) -> tuple[tuple[tuple[int, ...], ...], int]:
    """(area-matching sets that tile the target, search nodes visited)."""
    return _tiling_sets(scene.target, scene.bank, K[scene.level], flips)


@lru_cache(maxsize=512)   # the sampler, the ladder and the edited scene (same pieces) all ask for it
def _tiling_sets(target: Cells, bank: tuple[Cells, ...], k: int, flips: bool):
    region, out, nodes = pm.mask_of(target), [], 0
    for s in combinations(range(6), k):
        if sum(len(bank[i]) for i in s) != len(target):
            continue
        found, n = pm.tilings(tuple(bank[i] for i in s), region, flips, limit=1)
        nodes += n
        if found:
            out.append(s)
    return tuple(out), nodes


@lru_cache(maxsize=256)   # the sampler's dot and the ladder (asked again by the rephrasing) share it
def _turn_tilings(pieces: tuple[Cells, ...], region: int) -> tuple[tuple[int, ...], ...]:
    """Up to 64 turns-only tilings of the region by the pieces (`pm.tilings`)."""
    return tuple(pm.tilings(pieces, region, False)[0])


def target_area(scene: Scene) -> Count:
    return Count(len(scene.target), low=1, high=36)


def largest_piece(scene: Scene) -> Choice:
    areas = [len(p) for p in scene.bank]
    return Choice(NUMBERS[int(np.argmax(areas))], NUMBERS)


def matching_sets(scene: Scene) -> Count:
    return Count(len(area_sets(scene)), low=0, high=20)


def _numbers(s) -> Ordered:
    return Ordered(tuple(NUMBERS[i] for i in sorted(s)), "ascending order", NUMBERS, as_set=True)


def tiling_set(scene: Scene) -> Ordered:
    sets, _ = tiling_sets(scene, False)
    if len(sets) != 1:
        raise Reject("tiling_not_unique")
    return _numbers(sets[0])


def edit(scene: Scene) -> Scene:
    """Pieces may be flipped over as well as turned."""
    return replace(scene, flips=True)


def other_set(scene: Scene) -> Choice:
    """Whether a set other than the turns-only tiling set forms the target under the scene's rule (flips or not)."""
    q4 = tiling_sets(scene, False)[0]
    others = [s for s in tiling_sets(scene, scene.flips)[0] if s not in q4]
    return Choice(YES if others else NO, (YES, NO))


other_set_with_flips = other_set


counterfactual = other_set


def dot_piece(scene: Scene) -> tuple[Choice, bool]:
    """The bank number of the piece over the dotted cell, and whether every tiling by the Q4 set agrees."""
    sets = tiling_sets(scene, False)[0]
    if len(sets) != 1:
        raise Reject("tiling_not_unique")
    s = sets[0]
    found = _turn_tilings(tuple(scene.bank[i] for i in s), pm.mask_of(scene.target))
    bit = pm.mask_of([scene.dot])
    owners = {s[j] for t in found for j, m in enumerate(t) if m & bit}
    first = min(owners)
    return Choice(NUMBERS[first], NUMBERS), len(owners) == 1


def near_miss(scene: Scene, flips: bool, skip=()) -> float:
    """min u(S) over the area-matching sets that do not tile (inf when there are none). A set that does not tile
    has u >= 1, so the search stops at the first set with u = 1 (the swap-partner set has it by construction)."""
    return _near_miss(scene.target, scene.bank, K[scene.level], flips, tuple(skip))


@lru_cache(maxsize=256)   # the ladder is built again for the Q4 rephrasing
def _near_miss(target: Cells, bank: tuple[Cells, ...], k: int, flips: bool, skip: tuple) -> float:
    tiles = _tiling_sets(target, bank, k, flips)[0]
    region = pm.mask_of(target)
    best = float("inf")
    for s in combinations(range(6), k):
        if sum(len(bank[i]) for i in s) == len(target) and s not in tiles and s not in skip:
            best = min(best, float(pm.uncovered(tuple(bank[i] for i in s), region, flips)))
            if best <= 1:
                break
    return best


# --- ladder ------------------------------------------------------------------------------------------------------

def _pieces_word(scene: Scene) -> str:
    return "four" if size(scene) == 4 else "three"


def ladder(scene: Scene) -> Ladder:
    areas = sorted((len(p) for p in scene.bank), reverse=True)
    word = _pieces_word(scene)
    sums = [sum(len(scene.bank[i]) for i in s) for s in combinations(range(6), size(scene))]
    off = min((abs(v - len(scene.target)) for v in sums if v != len(scene.target)), default=36)
    cf = counterfactual(edit(scene))
    open_answer, agreed = dot_piece(scene)
    grid = Margin(TARGET_CELL, "px", 40.0, "target cells too small to count")
    q5_margin = (Margin(1.0, "sets", 1.0, "no other set tiles with flips") if cf.value == YES else
                 Margin(min(near_miss(scene, True, tiling_sets(scene, False)[0]), 36.0), "cells", 1.0,
                        "another set tiles once flips are allowed"))
    rungs = (
        Question(1, "target_area", "How many unit squares make up the target shape at the top?", target_area(scene),
                 grid),
        Question(2, "largest_piece", "Which numbered piece has the largest area?", largest_piece(scene),
                 Margin(float(areas[0] - areas[1]), "cells", 1.0, "two pieces equally large")),
        Question(3, "area_matching_sets", f"How many different sets of {word} pieces have a total area equal to "
                 "the target's?", matching_sets(scene), Margin(float(off), "cells", 1.0, "a set one cell off")),
        Question(4, "tiling_pieces", f"Which {word} pieces (turning allowed, no flipping over) fit together to form "
                 "the target exactly?", tiling_set(scene),
                 Margin(min(near_miss(scene, False), 36.0), "cells", 1.0, "another set of pieces that almost tiles")),
        Question(5, "other_set_if_flipped", f"If the pieces could also be flipped over, could a different set of "
                 f"{word} pieces form the target?", cf, q5_margin, edit="flipping pieces over allowed"),
    )
    open_q = Question(6, "piece_on_dot", "In the arrangement that forms the target, which piece covers the cell "
                      "marked with a dot? Explain how the pieces fit.", Record((("piece", open_answer),)),
                      Margin(1.0 if agreed else 0.0, "tilings", 1.0, "another tiling puts another piece on the dot"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """The same set asked as a covering without gaps or overlaps (identity; see the module docstring)."""
    lad = ladder(scene)
    return Question(4, "covering_pieces", f"Turning pieces but never flipping them, which {_pieces_word(scene)} "
                    "pieces cover every square of the target with no gap and no overlap?", lad.rungs[3].answer,
                    lad.rungs[3].margin)


def minimal_pair(scene: Scene) -> Scene:
    """P replaced by P' in its bank place (one cell moved): the swap-partner set tiles, the solution set does not."""
    bank = list(scene.bank)
    bank[scene.twin_slot], twin_piece = scene.twin_piece, scene.bank[scene.twin_slot]
    twin = replace(scene, bank=tuple(bank), twin_piece=twin_piece)
    try:
        lad = ladder(twin)
    except Reject:
        raise Reject("no_minimal_pair") from None
    if lad.failing_margins():
        raise Reject("no_minimal_pair")
    return twin


# --- drawing -----------------------------------------------------------------------------------------------------

def cells_outline(cells: Cells):
    """`grip.geometry.cells_polygon` with the unit squares built in one vectorised call (the same polygons, ring
    order and start point included, so the same union)."""
    x = np.array([c[0] for c in cells], float)
    y = np.array([c[1] for c in cells], float)
    ring = [(x + 1, y), (x + 1, y + 1), (x, y + 1), (x, y), (x + 1, y)]    # shapely's box: anticlockwise, closed
    return shapely.union_all(shapely.polygons(np.stack([np.stack(p, axis=-1) for p in ring], axis=1)))


@lru_cache(maxsize=4096)   # bank pieces are drawn normalised, so shapes recur (and a twin redraws its scene's)
def _outline_rings(cells: Cells) -> tuple[tuple[tuple[float, float], ...], ...]:
    """The outline's rings (exterior first, then holes), each without its closing point, in cell units."""
    if len(cells) > 1 and pm.connected(cells) and not pm.has_hole(cells):
        return (_boundary_ring(cells),)
    outline = cells_outline(cells)
    return tuple(tuple(ring.coords[:-1]) for poly in getattr(outline, "geoms", [outline])
                 for ring in (poly.exterior, *poly.interiors))


def _boundary_ring(cells: Cells) -> tuple[tuple[float, float], ...]:
    """The one ring of a connected hole-free set of two or more cells, traced along its unit edges: the vertices of
    `cells_outline`'s exterior (every lattice point on it, clockwise with y up), from another start point. Such a
    set's boundary is a simple curve (a vertex where it touches itself would enclose a hole), so each vertex has one
    outgoing edge. Drawing a closed path does not depend on where it starts."""
    cs = set(cells)
    step = {}                                          # vertex -> next vertex, the cells on the right
    for x, y in cells:
        if (x - 1, y) not in cs:
            step[x, y] = (x, y + 1)
        if (x, y + 1) not in cs:
            step[x, y + 1] = (x + 1, y + 1)
        if (x + 1, y) not in cs:
            step[x + 1, y + 1] = (x + 1, y)
        if (x, y - 1) not in cs:
            step[x + 1, y] = (x, y)
    start = v = min(cells)                             # its (x, y) corner starts its left edge
    out = []
    while True:
        out.append((float(v[0]), float(v[1])))
        v = step[v]
        if v == start:
            return tuple(out)


def _cells_shape(canvas: Canvas, cells: Cells, origin, cell_px: float, fill, lines: bool, owner: str) -> None:
    """Filled cells, their inner cell lines (optional) and a 3 px outline of the whole shape."""
    ox, oy = origin
    rings = [[(ox + u * cell_px, oy + v * cell_px) for u, v in ring] for ring in _outline_rings(cells)]
    for pts in rings[:1]:
        shapes.polygon(canvas, pts, Style(stroke=None, fill=fill), owner=owner)
    if lines:
        cs = set(cells)
        segs = [((ox + (x + 1) * cell_px, oy + y * cell_px), (ox + (x + 1) * cell_px, oy + (y + 1) * cell_px))
                for x, y in cells if (x + 1, y) in cs]
        segs += [((ox + x * cell_px, oy + (y + 1) * cell_px), (ox + (x + 1) * cell_px, oy + (y + 1) * cell_px))
                 for x, y in cells if (x, y + 1) in cs]
        if segs:
            shapes.segments(canvas, segs, CELL_LINES, register=False)
    for pts in rings:
        shapes.polygon(canvas, pts, SHAPE_OUTLINE, owner=owner)


def draw(scene: Scene, canvas: Canvas) -> None:
    w = max(x for x, _ in scene.target) + 1
    h = max(y for _, y in scene.target) + 1
    ox, oy = 384.0 - w * TARGET_CELL / 2, TARGET_TOP + (pm.BOARD - h) * TARGET_CELL / 2
    draw_text_px(canvas, "Target", (384.0, 40.0), TITLE)
    _cells_shape(canvas, scene.target, (ox, oy), TARGET_CELL, GREY_PALE, True, "target")
    dx, dy = scene.dot
    shapes.circle(canvas, (ox + (dx + 0.5) * TARGET_CELL, oy + (dy + 0.5) * TARGET_CELL), 7.0,
                  DOT)
    for i, (piece, (sx, sy)) in enumerate(zip(scene.bank, SLOTS)):
        shapes.rect(canvas, sx + 3, sy + 3, sx + SLOT_W - 3, sy + SLOT_H - 3,
                    SLOT_FRAME)
        draw_text_px(canvas, NUMBERS[i], (sx + 18, sy + 22), LABEL)
        pw = max(x for x, _ in piece) + 1
        ph = max(y for _, y in piece) + 1
        px0 = sx + 34 + (SLOT_W - 40 - pw * BANK_CELL) / 2
        py0 = sy + (SLOT_H - ph * BANK_CELL) / 2
        _cells_shape(canvas, piece, (px0, py0), BANK_CELL, PASTELS[i % len(PASTELS)], scene.level < 3, NUMBERS[i])


DOMAIN = Domain(
    id="combination_2d", family="transformational", title="2-D combination",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="A target shape and six numbered pieces: the target's area, the largest piece, how many sets match "
                "its area, which set tiles it with turns only, and whether another set would with flips allowed.",
    balance_keys=("largest_piece", "area_matching_sets", "other_set_if_flipped"),
)
