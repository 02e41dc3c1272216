"""Symmetry patterns: an n x n grid of cells (n = 6, 7, 8 by level), each white or one of three colours, every colour
also carrying its own black symbol (dot, ring, cross), so that no answer rests on hue alone. A few cells carry a
thick black inner outline (the set S). The ladder walks coloured cells -> the vertical mirror -> all mirror lines ->
mirror lines and rotation order -> the same two numbers once S is painted white; the open question asks the fewest
recolourings that give the pattern all eight symmetries of the square.

The symmetry group G* is found by testing the eight operations of the square (identity, three turns, the vertical,
horizontal and two diagonal mirrors) on the colouring; the symbols and thick outlines are not part of the pattern.
Ambiguity boundary, in "cells to recolour": for an operation g outside G*, cost(g) = sum over the cycles of <g> of
(cycle length - count of the cycle's most common colour), the fewest recolourings that would make g a symmetry.
min cost over the missing operations >= 4 (L1), 2 (L2), 1 (L3); on the edited pattern (never drawn) >= 1.

Balance: the balancer draws the pair (G, G5) from the sheet's symmetric table (half "same", the other half split
evenly between "up" and "down" moves), builds the colouring for it and rejects unless both groups come out exactly.
Deviations from the sheet: the Q4 rephrase asks the same two numbers in other words (identity): the sheet's "group
order" (mirror lines + rotation order) is a sum no rephrase map the contract checks relates to a record. The minimal
pair first tries the sheet's single whitened cell; where that breaks a margin (a broken symmetry one recolouring away
fails tau = 4 or 2), it whitens up to 7 cells, chosen greedily in reading order, until every symmetry G* loses
is tau recolourings away.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.geometry import D4_OPS, grid_permutation
from grip.renderers import shapes
from grip.renderers.style import BLACK, GREY, OKABE_ITO, Style

N = {1: 6, 2: 7, 3: 8}
TAU = {1: 4, 2: 2, 3: 1}
CELL_PX = 64.0
OUTLINE_PX = 5.0
MAX_PAIR_CELLS = 7              # 7 cells of 64 px are 4.9% of the canvas (the minimal pair's pixel budget)
MIRRORS = ("flip_x", "flip_y", "diag", "anti")
TURNS = ("r90", "r180", "r270")
GROUPS: dict[str, frozenset] = {
    "C1": frozenset({"id"}), "C2": frozenset({"id", "r180"}), "C4": frozenset({"id", "r90", "r180", "r270"}),
    "D1(V)": frozenset({"id", "flip_x"}), "D1(H)": frozenset({"id", "flip_y"}),
    "D1(diag)": frozenset({"id", "diag"}), "D1(anti)": frozenset({"id", "anti"}),
    "D2(V,H)": frozenset({"id", "r180", "flip_x", "flip_y"}),
    "D2(diagonals)": frozenset({"id", "r180", "diag", "anti"}),
    "D4": frozenset(D4_OPS),
}
WEIGHT = {"C1": 10, "C2": 10, "C4": 10, "D1(V)": 9, "D1(H)": 5, "D1(diag)": 5, "D1(anti)": 5, "D2(V,H)": 14,
          "D2(diagonals)": 10, "D4": 22}
PAIRS = {("C4", "D4"): 3, ("C1", "C4"): 1, ("C2", "C4"): 1, ("C1", "C2"): 1, ("C2", "D2(V,H)"): 1.5,
         ("C2", "D2(diagonals)"): 1.5, ("D1(V)", "D2(V,H)"): 2, ("D1(V)", "D4"): 2, ("D2(V,H)", "D4"): 2,
         ("D1(H)", "D2(V,H)"): 1, ("D1(H)", "D4"): 1, ("D1(diag)", "D2(diagonals)"): 1, ("D1(diag)", "D4"): 1,
         ("D1(anti)", "D2(diagonals)"): 1, ("D1(anti)", "D4"): 1, ("D2(diagonals)", "D4"): 1,
         **{("C1", g): 0.5 for g in ("D1(V)", "D1(H)", "D1(diag)", "D1(anti)", "D2(V,H)", "D2(diagonals)")}}
# (G, G5, percent of items): the diagonal at W/2, each table pair once as an up move and once as a down move.
TABLE = tuple([(g, g, w / 2) for g, w in WEIGHT.items()] + [(a, b, w) for (a, b), w in PAIRS.items()]
              + [(b, a, w) for (a, b), w in PAIRS.items()])
# Colours 1..3 with their symbols. Level 3 uses three colours of similar lightness; the symbols still tell them apart.
# CIELAB Delta E >= 40 between any two of them and white (tested): L1-L2 spread in lightness by 25, L3 by 7.
COLOURS = {1: ("orange", "green", "blue"), 2: ("orange", "green", "blue"), 3: ("vermillion", "green", "purple")}
SYMBOLS = ("dot", "ring", "cross")
YES_NO = ("yes", "no")


@dataclass(frozen=True)
class Scene:
    level: int                               # 1..3; n = N[level]
    grid: tuple[tuple[int, ...], ...]        # n rows of n cells, 0 = white, 1..3 = colour (with its symbol)
    outlined: tuple[tuple[int, int], ...]    # S: (row, col) cells with the thick outline, reading order
    group: str                               # the intended G* (a GROUPS key), checked against the colouring
    group_after: str                         # the intended G5* once S is painted white


# --- symmetry (pure) ---------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def perms(n: int) -> dict[str, tuple[int, ...]]:
    return {op: grid_permutation(n, op) for op in D4_OPS}


@lru_cache(maxsize=None)
def cycles(n: int, op: str) -> tuple[tuple[int, ...], ...]:
    p, seen, out = perms(n)[op], set(), []
    for i in range(n * n):
        if i in seen:
            continue
        cyc, j = [], i
        while j not in seen:
            seen.add(j)
            cyc.append(j)
            j = p[j]
        out.append(tuple(cyc))
    return tuple(out)


@lru_cache(maxsize=None)
def orbits(n: int, ops: frozenset) -> tuple[tuple[int, ...], ...]:
    """The orbits of a set of operations (a group) on the cells, each in index order, in order of first cell."""
    out, seen = [], set()
    for i in range(n * n):
        if i not in seen:
            orb = sorted({perms(n)[op][i] for op in ops})
            seen.update(orb)
            out.append(tuple(orb))
    return tuple(out)


def orbit_of(n: int, ops: frozenset, i: int) -> tuple[int, ...]:
    return tuple(sorted({perms(n)[op][i] for op in ops}))


def flat(grid) -> tuple[int, ...]:
    return tuple(v for row in grid for v in row)


@lru_cache(maxsize=None)
def _cycle_blocks(n: int, op: str) -> tuple[np.ndarray, ...]:
    """The cycles of <op> grouped by length, one (k, length) index array per length."""
    by_len: dict[int, list] = {}
    for c in cycles(n, op):
        by_len.setdefault(len(c), []).append(c)
    return tuple(np.array(v, dtype=np.intp) for _, v in sorted(by_len.items()))


def cost(colours, n: int, op: str) -> int:
    """Fewest recolourings that make `op` a symmetry: per cycle of <op>, the cells off its most common colour."""
    col = np.asarray(colours)
    total = 0
    for block in _cycle_blocks(n, op):
        most = (col[block][:, :, None] == _COLOUR_VALUES).sum(axis=1).max(axis=1)   # per cycle, over colours 0..3
        total += int((block.shape[1] - most).sum())
    return total


_COLOUR_VALUES = np.arange(4)


@lru_cache(maxsize=4096)
def group_of(grid) -> frozenset:
    n, col = len(grid), np.asarray(flat(grid))
    return frozenset(op for op, p in perms(n).items() if np.array_equal(col[list(p)], col))


@lru_cache(maxsize=4096)
def missing_cost(grid) -> int:
    """min over operations outside G* of cost(g): the margin (n*n when G* is all of D4)."""
    n, colours, g = len(grid), flat(grid), group_of(grid)
    return min((cost(colours, n, op) for op in D4_OPS if op not in g), default=n * n)


def whitened(grid, cells) -> tuple[tuple[int, ...], ...]:
    cells = set(map(tuple, cells))
    return tuple(tuple(0 if (r, c) in cells else v for c, v in enumerate(row)) for r, row in enumerate(grid))


@lru_cache(maxsize=None)
def generic_cells(n: int) -> tuple[int, ...]:
    """Cells that no operation but the identity fixes (off both centre lines and both diagonals)."""
    return tuple(i for i in range(n * n) if sum(perms(n)[op][i] == i for op in D4_OPS) == 1)


# --- sampling ----------------------------------------------------------------------------------------------------

def _colour_orbits(rng: np.random.Generator, n: int, ops: frozenset) -> list[int]:
    colours = [0] * (n * n)
    for orb in orbits(n, ops):
        v = 0 if rng.random() < 0.45 else int(rng.integers(1, 4))
        for i in orb:
            colours[i] = v
    return colours


def _grid(colours, n: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(colours[r * n:(r + 1) * n]) for r in range(n))


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"symmetry_patterns: level must be 1..3, got {level}")
    n, tau = N[level], TAU[level]
    w = np.array([t[2] for t in TABLE], float)
    g_name, g5_name, _ = TABLE[int(rng.choice(len(TABLE), p=w / w.sum()))]
    g, g5 = GROUPS[g_name], GROUPS[g5_name]
    generic = generic_cells(n)
    for _ in range(30):
        if g5 >= g:                                   # same or up: colour the G5-orbits first (pattern B)
            colours = _colour_orbits(rng, n, g5)
            if g5 == g:
                coloured = [o for o in orbits(n, g) if colours[o[0]] and len(o) <= 8]
                if not coloured:
                    continue
                s_cells = list(coloured[int(rng.integers(len(coloured)))])
            else:                                     # up: paint G-orbits of generic white cells of B
                white = [i for i in generic if colours[i] == 0]
                s_cells = []
                for i in rng.permutation(white):
                    orb = orbit_of(n, g, int(i))
                    if len(s_cells) + len(orb) > 8 or set(orb) & set(s_cells):
                        continue
                    s_cells += orb
                    v = int(rng.integers(1, 4))
                    for j in orb:
                        colours[j] = v
                    if len(s_cells) >= max(tau, 1) and rng.random() < 0.6:
                        break
                if len(s_cells) < tau:
                    continue
        else:                                         # down: S is the G5-orbit of a generic coloured cell
            colours = _colour_orbits(rng, n, g)
            cand = [i for i in generic if colours[i]]
            if not cand:
                continue
            x = int(cand[int(rng.integers(len(cand)))])
            s_cells = sorted({perms(n)[op][x] for op in g5})
        grid = _grid(colours, n)
        outlined = tuple(sorted((i // n, i % n) for i in s_cells))
        after = whitened(grid, outlined)
        if group_of(grid) != g or group_of(after) != g5:
            continue
        if missing_cost(grid) < tau or missing_cost(after) < 1 or not any(flat(grid)):
            continue
        return Scene(level, grid, outlined, g_name, g5_name)
    raise Reject("group_mismatch")


# --- answers -----------------------------------------------------------------------------------------------------

def coloured_count(scene: Scene) -> Count:
    return Count(sum(v > 0 for v in flat(scene.grid)), low=0, high=len(scene.grid) ** 2)


def vertical_mirror(scene: Scene) -> Choice:
    return Choice("yes" if "flip_x" in group_of(scene.grid) else "no", YES_NO)


def mirror_lines(scene: Scene) -> Count:
    return Count(sum(op in group_of(scene.grid) for op in MIRRORS), low=0, high=4)


def rotation_order(scene: Scene) -> Count:
    return Count(1 + sum(op in group_of(scene.grid) for op in TURNS), low=1, high=4)


def symmetry_record(scene: Scene) -> Record:
    return Record((("mirror_lines", mirror_lines(scene)), ("rotation_order", rotation_order(scene))))


def edit(scene: Scene) -> Scene:
    """Paint the outlined cells white (the outlines stay)."""
    return replace(scene, grid=whitened(scene.grid, scene.outlined))


counterfactual = symmetry_record


def recolour_to_full(scene: Scene) -> Count:
    """Sum over D4-orbits of (orbit size - count of its most common colour, white included)."""
    n, colours = len(scene.grid), flat(scene.grid)
    total = sum(len(o) - max(sum(colours[i] == v for i in o) for v in set(colours[i] for i in o))
                for o in orbits(n, GROUPS["D4"]))
    return Count(total, low=0, high=n * n)


# --- ladder ------------------------------------------------------------------------------------------------------

NOTE = "Colours (each with its own symbol) count; the thick outlines do not."


def _margin(scene: Scene) -> Margin:
    return Margin(missing_cost(scene.grid), "cells to recolour", TAU[scene.level],
                  "a missing symmetry a few recolourings away")


def ladder(scene: Scene) -> Ladder:
    margin = _margin(scene)
    edited = edit(scene)
    legible = Margin(CELL_PX, "px", 12.0, "cells too small to read")
    rungs = (
        Question(1, "coloured_cells", "How many cells are coloured (not white)?", coloured_count(scene), legible),
        Question(2, "vertical_mirror", f"Is the pattern mirror-symmetric about its vertical centre line? {NOTE}",
                 vertical_mirror(scene), margin),
        Question(3, "mirror_lines", "How many lines of mirror symmetry does the pattern have? Only the vertical and "
                 f"horizontal centre lines and the two diagonals can be mirror lines. {NOTE}", mirror_lines(scene),
                 margin),
        Question(4, "mirrors_and_turns", "Give the number of mirror lines of the pattern and the order of its "
                 "rotational symmetry (1 = none, 2 = half-turn only, 4 = quarter-turn). " + NOTE,
                 symmetry_record(scene), margin),
        Question(5, "after_whitening", "If the outlined cells were painted white, what would the number of mirror "
                 "lines and the order of rotational symmetry (1, 2 or 4) be?", counterfactual(edited),
                 Margin(missing_cost(edited.grid), "cells to recolour", 1.0,
                        "a missing symmetry of the edited pattern"), edit="paint the outlined cells white"),
    )
    open_q = Question(6, "recolour_to_full", "What is the smallest number of cells you would have to recolour so that "
                      "the pattern has all 8 symmetries of the square (4 mirror lines and quarter-turn symmetry)? "
                      "Explain.", Record((("cells", recolour_to_full(scene)),)), margin)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4's answer and margin (`ladder`) in other words."""
    return Question(4, "folds_and_positions", "Along how many straight lines could the pattern be folded so that the "
                    "two halves match, and in how many positions during one full turn (counting the start) does it "
                    f"look exactly as it does now? Give mirror_lines and rotation_order. {NOTE}",
                    symmetry_record(scene), _margin(scene))


def _passes(scene: Scene) -> bool:
    return not ladder(scene).failing_margins()


def minimal_pair(scene: Scene) -> Scene:
    """G* != C1: whiten one coloured cell of a non-trivial orbit (the first in reading order that changes Q4 and
    keeps every margin; level 3 only), else a few cells chosen greedily (below). G* = C1: recolour the cheapest
    missing operation's fix (at most MAX_PAIR_CELLS cells). Outlined cells are left alone (Q5 keeps its set)."""
    n, colours, g = len(scene.grid), list(flat(scene.grid)), group_of(scene.grid)
    q4 = symmetry_record(scene)
    keep = {r * n + c for r, c in scene.outlined}
    if g != GROUPS["C1"]:
        # One whitened cell leaves the symmetries it breaks one recolouring away: only level 3's tau = 1 allows it.
        orbs = [o for o in orbits(n, g) if len(o) > 1 and colours[o[0]]] if TAU[scene.level] == 1 else []
        for i in sorted(i for o in orbs for i in o if i not in keep):
            twin = replace(scene, grid=whitened(scene.grid, [(i // n, i % n)]))
            if symmetry_record(twin) != q4 and _passes(twin):
                return twin
        # Else whiten cells in reading order, keeping each one that raises the cheapest restoring cost of the
        # symmetries G* loses, until that cost reaches tau (at most MAX_PAIR_CELLS cells).
        lost = [op for op in g if op != "id"]
        picks: list[int] = []
        current = list(colours)
        best = 0
        for i in range(n * n):
            if not colours[i] or i in keep or len(picks) == MAX_PAIR_CELLS:
                continue
            trial = list(current)
            trial[i] = 0
            score = min(cost(trial, n, op) for op in lost)
            if score > best:
                picks.append(i)
                current, best = trial, score
            if best >= TAU[scene.level]:
                twin = replace(scene, grid=_grid(current, n))
                if symmetry_record(twin) != q4 and _passes(twin):
                    return twin
                break
        raise Reject("no_minimal_pair")
    for op in sorted((op for op in D4_OPS if op != "id"), key=lambda op: (cost(colours, n, op), op)):
        if cost(colours, n, op) > MAX_PAIR_CELLS:
            break
        new = list(colours)
        for cyc in cycles(n, op):
            vals = [colours[i] for i in cyc]
            best = max(sorted(set(vals)), key=vals.count)
            for i in cyc:
                new[i] = best
        if any(new[i] != colours[i] for i in keep):
            continue
        twin = replace(scene, grid=tuple(tuple(new[r * n:(r + 1) * n]) for r in range(n)))
        if symmetry_record(twin) != q4 and _passes(twin):
            return twin
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def origin(n: int) -> float:
    return (768 - n * CELL_PX) / 2


def draw(scene: Scene, canvas) -> None:
    n = len(scene.grid)
    x0 = origin(n)
    palette = [OKABE_ITO[c] for c in COLOURS[scene.level]]
    ctx = canvas.ctx
    for r, row in enumerate(scene.grid):
        for c, v in enumerate(row):
            if not v:
                continue
            x, y = x0 + c * CELL_PX, x0 + r * CELL_PX
            ctx.rectangle(x, y, CELL_PX, CELL_PX)
            ctx.set_source_rgb(*palette[v - 1])
            ctx.fill()
            cx, cy, q = x + CELL_PX / 2, y + CELL_PX / 2, CELL_PX * 0.16
            glyph = SYMBOLS[v - 1]
            if glyph == "dot":
                shapes.circle(canvas, (cx, cy), q, Style(stroke=None, fill=BLACK))
            elif glyph == "ring":
                shapes.circle(canvas, (cx, cy), q, Style(stroke=BLACK, width_px=3.0))
            else:
                shapes.segments(canvas, [((cx - q, cy - q), (cx + q, cy + q)), ((cx - q, cy + q), (cx + q, cy - q))],
                                Style(stroke=BLACK, width_px=3.0), register=False)
    lines = [((x0 + k * CELL_PX, x0), (x0 + k * CELL_PX, x0 + n * CELL_PX)) for k in range(n + 1)] + \
        [((x0, x0 + k * CELL_PX), (x0 + n * CELL_PX, x0 + k * CELL_PX)) for k in range(n + 1)]
    shapes.segments(canvas, lines, Style(stroke=GREY, width_px=2.0), register=False)
    inset = 1.0 + OUTLINE_PX / 2
    for r, c in scene.outlined:
        x, y = x0 + c * CELL_PX, x0 + r * CELL_PX
        ctx.rectangle(x + inset, y + inset, CELL_PX - 2 * inset, CELL_PX - 2 * inset)
        ctx.set_source_rgb(*BLACK)
        ctx.set_line_width(OUTLINE_PX)
        ctx.stroke()


DOMAIN = Domain(
    id="symmetry_patterns", family="transformational", title="Symmetry patterns",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, minimal_pair_keeps_q1=False, rephrase_q4=rephrase_q4, rephrase_map="identity",
    version=2,
    description="A coloured grid pattern with a few outlined cells: coloured count, vertical mirror, mirror lines, "
                "mirror lines with rotation order, the same once the outlined cells are whitened, and the fewest "
                "recolourings to full square symmetry.",
    balance_keys=("vertical_mirror", "mirror_lines", "mirrors_and_turns", "after_whitening"),
)
