"""Occluded patterns: an R x C grid of coloured symbols whose shape and colour follow modular rules, partly covered
by opaque grey rectangles (A, and B at level 3) aligned to whole cells. The ladder walks hidden-cell count -> row
period of the shapes -> one hidden cell -> how many hidden cells hold a given kind -> that count under A moved one
column; the open question asks for the colour period down a column.

Rules: shape(r, c) = names_s[(alpha r + beta c) mod m_s], colour(r, c) = names_k[(gamma r + delta c) mod m_k], with
0-based r, c (printed row/column minus one). Level 3 adds a size distractor, large/small by (eps r + zeta c) mod 2,
that no question depends on.
Ambiguity boundary: the viewer's hypotheses are every rule (m, a, b), m in {2, 3, 4}, a, b < m (29 per attribute),
each with an unknown injective naming. A scene is used only if every rule consistent with the visible cells
determines every hidden cell and all predict the same (`identified`). The witness margin per attribute is the least
number of visible cells showing any value the true rule takes (>= 2, level 3 >= 1; unit cells).
Legibility: colour is never the only cue: every symbol carries its colour's initial (R, B, G, O) in bold.
Deviation: the sheet's Q4 rephrase ("how many hidden cells do NOT contain ...", = Q1 - Q4) is a complement to Q1,
which is not one fixed total across scenes, so the contract's `complement` map cannot hold: the rephrase asks the
count again in other words (identity).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from math import gcd

import numpy as np

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.projective import _occlusion as oc
from grip.domains.projective._occlusion import COLOURS, SHAPES, SIZE_PX, SIZES, identified, witness
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import GREY, GREY_LIGHT, LABEL, TEXT, Style
from grip.renderers.text import check_font, draw_text_px

CELL_PX = 64.0
WITNESS_MIN = {1: 2, 2: 2, 3: 1}           # visible cells per value of the true rule
SYMBOL_CLEAR_PX = (CELL_PX - SIZE_PX["large"]) / 2   # symbol edge to cell edge (= occluder edge)
TRIES = 12
# Level 1's rules run along one axis each, so a kind's count in A is (A's rows of its colour) x (A's columns of its
# shape), and moving A one column keeps the first factor: these Q5 values are reachable for each Q4.
# Level 3's B takes 4-6 of the 12 hidden cells, so A (at most 8 cells) moved one column, overlapping itself, almost
# never holds three of one kind: Q5 is drawn from 0-2 there.
# Level 1's Q4 = 0 and level 2's skip Q5 = 0 partly, to even out the many zeros elsewhere (every Q5 value stays
# below 35% of the default mix).
Q5_BY_Q4 = {1: {0: (1, 2, 3), 1: (0, 1, 2), 2: (0, 1, 2), 3: (0, 3)},
            2: {0: (1, 2, 3), 1: (0, 1, 2, 3), 2: (0, 1, 2, 3), 3: (1, 2, 3)},
            3: {q: (0, 1, 2) for q in range(4)}}
B_SIZES = ((2, 2), (2, 3), (3, 2))


@dataclass(frozen=True)
class Scene:
    level: int                                  # 1..3
    rows: int                                   # R, 5..8
    cols: int                                   # C, 5..8
    shape_rule: tuple[int, int, int]            # (m_s, alpha, beta): residue (alpha r + beta c) mod m_s
    shape_names: tuple[str, ...]                # m_s distinct names from SHAPES, indexed by residue
    colour_rule: tuple[int, int, int]           # (m_k, gamma, delta)
    colour_names: tuple[str, ...]               # m_k distinct names from COLOURS
    size_rule: tuple[int, int]                  # (eps, zeta): size residue (eps r + zeta c) mod 2; (0, 0) below L3
    size_names: tuple[str, str]                 # names of residues 0 and 1
    occluders: tuple[tuple[int, int, int, int], ...]   # A (then B): (row0, col0, height, width), 0-based cells
    target: tuple[str, str]                     # (colour, shape) counted by Q4 and Q5
    probe: tuple[int, int]                      # Q3's hidden cell (r, c), 0-based


# --- the pattern -------------------------------------------------------------------------------------------------

def shape_at(scene: Scene, r: int, c: int) -> str:
    m, a, b = scene.shape_rule
    return scene.shape_names[(a * r + b * c) % m]


def colour_at(scene: Scene, r: int, c: int) -> str:
    m, a, b = scene.colour_rule
    return scene.colour_names[(a * r + b * c) % m]


def size_at(scene: Scene, r: int, c: int) -> str:
    e, z = scene.size_rule
    return scene.size_names[(e * r + z * c) % 2]


def cells_of(rect) -> list[tuple[int, int]]:
    r0, c0, h, w = rect
    return [(r, c) for r in range(r0, r0 + h) for c in range(c0, c0 + w)]


def hidden_cells(scene: Scene) -> list[tuple[int, int]]:
    return sorted({cell for rect in scene.occluders for cell in cells_of(rect)})


def _mask(scene: Scene) -> np.ndarray:
    hid = np.zeros(scene.rows * scene.cols, dtype=bool)
    for r, c in hidden_cells(scene):
        hid[r * scene.cols + c] = True
    return hid


@lru_cache(maxsize=128)
def pattern_margin(scene: Scene) -> tuple[bool, int, int]:
    """(identified for both attributes, shape witness, colour witness). The names being distinct, a cell's name
    index is its residue under the true rule."""
    hid = _mask(scene)
    R, C = scene.rows, scene.cols
    ok = (identified(oc.grid(scene.shape_rule, R, C), hid, R, C)
          and identified(oc.grid(scene.colour_rule, R, C), hid, R, C))
    return ok, witness(scene.shape_rule, hid, R, C), witness(scene.colour_rule, hid, R, C)


# --- occluders ---------------------------------------------------------------------------------------------------

def _apart(p, q) -> bool:
    """At least one free cell between two rectangles (in rows or in columns)."""
    gr = max(q[0] - (p[0] + p[2]), p[0] - (q[0] + q[2]))
    gc = max(q[1] - (p[1] + p[3]), p[1] - (q[1] + q[3]))
    return max(gr, gc) >= 1


def _fits(scene: Scene, rect) -> bool:
    r0, c0, h, w = rect
    return (0 <= r0 and r0 + h <= scene.rows and 0 <= c0 and c0 + w <= scene.cols
            and all(_apart(rect, o) for o in scene.occluders[1:]))


def move_step(scene: Scene) -> int:
    """Q5's move of A in columns: +1 (right) unless A touches the right border or the move would leave no free cell
    between A and B; then -1 (left). 0: neither works."""
    r0, c0, h, w = scene.occluders[0]
    for step in (1, -1):
        if _fits(scene, (r0, c0 + step, h, w)):
            return step
    return 0


def moved_a(scene: Scene) -> tuple[int, int, int, int]:
    r0, c0, h, w = scene.occluders[0]
    return (r0, c0 + move_step(scene), h, w)


def _pair_rect(scene: Scene):
    """The minimal pair's A: one row down, or up when A touches the bottom or down would crowd B (None: neither)."""
    r0, c0, h, w = scene.occluders[0]
    down = (r0 + 1, c0, h, w)
    rect = down if _fits(scene, down) else (r0 - 1, c0, h, w)
    return rect if _fits(scene, rect) else None


# --- sampling ----------------------------------------------------------------------------------------------------

def _rule(d: Draws, level: int, period: int) -> tuple[int, int, int]:
    """(m, along, across): `along` is the coefficient of the direction whose period is the target (1 <- 0;
    2 <- m = 2 odd or m = 4 with 2; 3 <- m = 3; 4 <- m = 4 odd); `across` is 0 at level 1 when `along` is not."""
    if period == 1:
        m = d.pick((2, 3, 4))
        return m, 0, d.integers(1, m)
    m, along = {2: ((2, 1), (4, 2)), 3: ((3, 1), (3, 2)), 4: ((4, 1), (4, 3))}[period][d.integers(2)]
    across = 0 if level == 1 else d.integers(1, m)
    return m, along, across


def _axes(d: Draws, level: int) -> tuple[int, int]:
    """(Q2, open) targets. Level 1 runs the shape and colour rules along different axes: on one axis every kind
    fills whole rows (or columns) of A, so Q4 = 1 is unreachable and, along rows, Q5 = Q4 by construction."""
    if level > 1:
        return d.integers(1, 5), d.integers(1, 5)
    combos = [(1, 1)] + [(p, q) for p in (2, 3, 4) for q in (2, 3, 4)]
    return combos[d.integers(len(combos))]


def _shuffled(d: Draws, names: tuple[str, ...]) -> tuple[str, ...]:
    """`rng.permutation(names)` as a tuple of str: the same swaps on a list."""
    out = list(names)
    d.shuffle(out)
    return tuple(out)


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"occluded_patterns: level must be 1..3, got {level}")
    # Targets first: Q2 and the open answer uniform over 1..4 (level 1: see `_axes`), Q4 uniform over 0..3, then
    # Q5 uniform over the values reachable with that Q4 at this level (`Q5_BY_Q4`).
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    p_shape, p_colour = _axes(d, level)
    q4 = d.integers(4)
    q5s = Q5_BY_Q4[level][q4]
    q5 = q5s[d.integers(len(q5s))]
    for _ in range(TRIES):
        m_s, beta, alpha = _rule(d, level, p_shape)          # shape: along a row (c), coefficient beta
        m_k, gamma, delta = _rule(d, level, p_colour)        # colour: down a column (r), coefficient gamma
        base = Scene(level, d.integers(5, 9), d.integers(5, 9), (m_s, alpha, beta),
                     _shuffled(d, SHAPES)[:m_s], (m_k, gamma, delta), _shuffled(d, COLOURS)[:m_k],
                     (d.integers(2), 1) if level == 3 else (0, 0),
                     _shuffled(d, SIZES) if level == 3 else ("large", "small"),
                     (), ("red", "circle"), (0, 0))
        b = None
        if level == 3:
            hb, wb = B_SIZES[d.integers(len(B_SIZES))]
            b = (d.integers(0, base.rows - hb + 1), d.integers(0, base.cols - wb + 1), hb, wb)
        found = _place(rng, d, base, b, q4, q5)
        if found is not None:
            return found
    raise Reject("no_scene_for_target")


def _kinds(scene: Scene) -> np.ndarray:
    """Kind index colour * 4 + shape per cell, row-major."""
    R, C = scene.rows, scene.cols
    s_idx = np.array([SHAPES.index(n) for n in scene.shape_names])[oc.grid(scene.shape_rule, R, C)]
    c_idx = np.array([COLOURS.index(n) for n in scene.colour_names])[oc.grid(scene.colour_rule, R, C)]
    return c_idx * 4 + s_idx


def _hits(base: Scene, b, q4: int, q5: int):
    """(placements, kinds, placement rows): every (kind, A) with `q4` cells of that kind hidden (under A and B) and
    `q5` under A moved, kind-major (kinds ascending, then `oc.candidates`'s order)."""
    pl, weights = oc.candidates(base.rows, base.cols, b)
    kinds = _kinds(base)
    present = np.flatnonzero(np.bincount(kinds, minlength=16))        # the kinds shown, ascending
    # One product of a 0/1 matrix and small integer weights: float32 sums below 2 ** 24 are exact.
    counts = (kinds == present[:, None]).astype(np.float32) @ weights.T   # (kinds, placements)
    ki, pj = np.nonzero(counts == q4 * (base.rows * base.cols + 1) + q5)
    return pl, present[ki], pj


def _place(rng: np.random.Generator, d: Draws, base: Scene, b, q4: int, q5: int) -> Scene | None:
    """Choose A and the counted kind so that Q4 = q4 and Q5 = q5 and the minimal pair changes Q4; then Q3's cell;
    then check that every hypothesis is settled. The minimal pair is not required here (at level 1 a row move
    cannot change a count of 0, for instance); `minimal_pair` rejects where it fails."""
    pl, hit_kinds, hit_pl = _hits(base, b, q4, q5)
    if not len(hit_kinds):
        return None
    pr = pl[:, 5]
    need = WITNESS_MIN[base.level]
    for n in rng.permutation(len(hit_kinds))[:6]:   # up to hundreds of hits: numpy's shuffle is cheaper here
        k, j = hit_kinds[n], hit_pl[n]
        a = tuple(int(x) for x in pl[j, :4])
        s = replace(base, occluders=(a,) + (() if b is None else (b,)),
                    target=(COLOURS[k // 4], SHAPES[k % 4]))
        twin_a = (int(pr[j]), a[1], a[2], a[3])
        both = sorted(set(hidden_cells(s)) - set(cells_of(a)) | (set(cells_of(a)) & set(cells_of(twin_a))))
        if not both:
            continue
        s = replace(s, probe=both[d.integers(len(both))])
        okp, ws, wk = pattern_margin(s)
        if not (okp and ws >= need and wk >= need):
            continue
        return s
    return None


def _count(scene: Scene, kind, cells) -> int:
    return sum((colour_at(scene, r, c), shape_at(scene, r, c)) == kind for r, c in cells)


# --- answers ----------------------------------------------------------------------------------------------------

def hidden_count(scene: Scene) -> Count:
    return Count(len(hidden_cells(scene)), low=0, high=64)


def row_shape_period(scene: Scene) -> Count:
    m, _, beta = scene.shape_rule
    return Count(m // gcd(beta, m) if beta else 1, low=1, high=4)


def probe_contents(scene: Scene) -> Record:
    r, c = scene.probe
    return Record((("shape", Choice(shape_at(scene, r, c), SHAPES)), ("colour", Choice(colour_at(scene, r, c),
                                                                                          COLOURS))))


def hidden_kind_count(scene: Scene) -> Count:
    return Count(_count(scene, scene.target, hidden_cells(scene)), low=0, high=64)


def edit(scene: Scene) -> Scene:
    """Rectangle A moved one column (right, or left where right does not fit); B stays."""
    return replace(scene, occluders=(moved_a(scene),) + scene.occluders[1:])


def counterfactual(scene: Scene) -> Count:
    """Cells of the given kind under A (applied to the edited scene: under A moved)."""
    return Count(_count(scene, scene.target, cells_of(scene.occluders[0])), low=0, high=64)


def column_colour_period(scene: Scene) -> Record:
    m, gamma, _ = scene.colour_rule
    return Record((("period", Count(m // gcd(gamma, m) if gamma else 1, low=1, high=4)),))


def minimal_pair(scene: Scene) -> Scene:
    """A moved one row down (up where down does not fit); Q3's cell stays hidden, Q4 changes, every margin holds."""
    pr = _pair_rect(scene)
    if pr is None:
        raise Reject("no_minimal_pair")
    twin = replace(scene, occluders=(pr,) + scene.occluders[1:])
    if (scene.probe not in hidden_cells(twin) or hidden_kind_count(twin) == hidden_kind_count(scene)
            or move_step(twin) == 0 or ladder(twin).failing_margins()):
        raise Reject("no_minimal_pair")
    return twin


# --- ladder -----------------------------------------------------------------------------------------------------

def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _plural(kind) -> str:
    return f"{kind[0]} {kind[1]}s"


def _intro(scene: Scene) -> str:
    cover = "rectangles A and B hide" if len(scene.occluders) > 1 else "rectangle A hides"
    return (f"Each cell of the grid holds a symbol. Its shape follows a pattern that repeats regularly along the "
            f"rows and columns, and so does its colour (the letter on a symbol is its colour's initial: R red, "
            f"B blue, G green, O orange). The grey {cover} some cells. Rows are numbered down the left side, "
            f"columns along the top. ")


@lru_cache(maxsize=256)       # the builder and `rephrase_q4` ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    ok, ws, wk = pattern_margin(scene)
    need = WITNESS_MIN[scene.level]
    if not ok:
        raise Reject("not_identified")
    step = move_step(scene)
    if step == 0:
        raise Reject("no_move")
    both = Margin(min(ws, wk), "cells", need, "a value of the rule seen in too few visible cells")
    shape_m = Margin(ws, "cells", need, "a shape of the rule seen in too few visible cells")
    colour_m = Margin(wk, "cells", need, "a colour of the rule seen in too few visible cells")
    r, c = scene.probe
    side = "right" if step > 0 else "left"
    kind = _plural(scene.target)
    intro = _intro(scene)
    rungs = (
        Question(1, "hidden_cells", intro + "How many cells are completely hidden by the grey rectangle(s)?",
                 hidden_count(scene), Margin(SYMBOL_CLEAR_PX, "px", 8.0, "occluder edge off a cell boundary")),
        Question(2, "row_shape_period", intro + "Along a row, after how many cells does the sequence of shapes "
                 "repeat? Answer 1 if every cell of a row has the same shape.", row_shape_period(scene), shape_m),
        Question(3, "hidden_cell", intro + f"What shape and colour is the symbol hidden at row {r + 1}, column "
                 f"{c + 1}?", probe_contents(scene), both),
        Question(4, "hidden_kind_count", intro + f"How many of the hidden cells contain "
                 f"{_article(scene.target[0])} {scene.target[0]} {scene.target[1]}?", hidden_kind_count(scene), both),
        Question(5, "kind_under_moved_a", intro + f"If rectangle A were moved one column to the {side} (same size"
                 f"{', B left where it is' if len(scene.occluders) > 1 else ''}), how many {kind} would A then "
                 "cover?", counterfactual(edit(scene)), both,
                 edit=f"rectangle A moved one column to the {side}"),
    )
    open_q = Question(6, "column_colour_period", intro + "Down a column, after how many cells does the sequence of "
                      "colours repeat (1 if every cell of a column has the same colour)? Explain the colour rule.",
                      column_colour_period(scene), colour_m)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words (identity): see the module docstring for why not the sheet's complement."""
    q4 = ladder(scene).rungs[3]
    return Question(4, "kind_under_grey", _intro(scene) + f"Counting only the cells the grey covers, how many "
                    f"{_plural(scene.target)} are there?", q4.answer, q4.margin)


# --- drawing ----------------------------------------------------------------------------------------------------

def origin(scene: Scene) -> tuple[float, float]:
    """Top-left corner of the grid (px): the grid centred, a little right and down for the numbers."""
    return 384.0 + 16 - scene.cols * CELL_PX / 2, 384.0 + 16 - scene.rows * CELL_PX / 2


GRID_STYLE = Style(stroke=GREY_LIGHT, width_px=2.0)
# The row and column numbers stand on blank paper, where a white halo changes no pixel: drawn without one.
NUMBERS = TEXT.with_(font_px=18.0, halo_px=0.0)
OCCLUDER = Style(stroke=(0.3, 0.3, 0.3), fill=GREY, width_px=2.0)
OCCLUDER_LABEL = LABEL.with_(font_px=26.0)


def draw(scene: Scene, canvas: Canvas) -> None:
    x0, y0 = origin(scene)
    segs = [((x0 + j * CELL_PX, y0), (x0 + j * CELL_PX, y0 + scene.rows * CELL_PX)) for j in range(scene.cols + 1)]
    segs += [((x0, y0 + i * CELL_PX), (x0 + scene.cols * CELL_PX, y0 + i * CELL_PX)) for i in range(scene.rows + 1)]
    shapes.segments(canvas, segs, GRID_STYLE, register=False)
    hid = set(hidden_cells(scene))
    check_font()
    oc.symbols(canvas, [(shape_at(scene, r, c), colour_at(scene, r, c), size_at(scene, r, c),
                       x0 + (c + 0.5) * CELL_PX, y0 + (r + 0.5) * CELL_PX)
                      for r in range(scene.rows) for c in range(scene.cols) if (r, c) not in hid])
    for i in range(scene.rows):
        draw_text_px(canvas, str(i + 1), (x0 - 20, y0 + (i + 0.5) * CELL_PX), NUMBERS)
    for j in range(scene.cols):
        draw_text_px(canvas, str(j + 1), (x0 + (j + 0.5) * CELL_PX, y0 - 18), NUMBERS)
    for name, (r0, c0, h, w) in zip("AB", scene.occluders):
        shapes.rect(canvas, x0 + c0 * CELL_PX, y0 + r0 * CELL_PX, x0 + (c0 + w) * CELL_PX, y0 + (r0 + h) * CELL_PX,
                    OCCLUDER)
        draw_text_px(canvas, name, (x0 + (c0 + w / 2) * CELL_PX, y0 + (r0 + h / 2) * CELL_PX), OCCLUDER_LABEL)


DOMAIN = Domain(
    id="occluded_patterns", family="projective", title="Occluded patterns",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="A grid of symbols following modular shape and colour rules, partly hidden by grey rectangles: "
                "hidden cells, the row period, one hidden cell, a kind's hidden count, and the count under A moved.",
    balance_keys=("row_shape_period", "hidden_kind_count", "kind_under_moved_a", "column_colour_period"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
)
