"""Embedded figures: a complex line figure C on a faint 7x7 dot lattice (left) and four simple shapes A-D at the same
scale in a 2x2 block (right). The lattice spacing is 50 px (the sheet's 56 px leaves no clear gap between the figure,
its row numbers and two 3-unit shape boxes inside the 720 px safe area; 50 px is still four times the 12 px minimum).
Every line runs along unit edges between lattice points: horizontal, vertical or diagonal, at most one diagonal per
cell so that diagonals never cross; C is drawn as maximal straight segments, so a hidden shape's
edges are not set apart. Each shape is a simple open path or a simple closed outline of 4-8 unit edges in a 3x3
box. Exactly one shape occurs in C (its edges all lie on C's lines), at exactly one placement; placements are
translations (L1-L2) or translations and quarter turns (L3), never reflections. The ladder walks A's segments ->
B's type -> the edges B lacks -> the hidden shape -> the shapes hidden once the segment marked x is erased and P
is joined to Q; the open question asks where the hidden shape sits.

Ambiguity boundary, in unit edges: every distractor lacks at least 2 (L1) or 1 (L2-L3) edges at its best placement
(`missing`); on the edited figure every absent shape lacks >= 1 and present shapes are found exactly. Balance is
target-first: the hidden letter, A's segment count (2-6), B's type, B's missing count and the Q5 outcome (the hidden
shape survives the erasure: yes/no x the join completes a distractor: yes/no) are drawn before the figure is built
around them. The
join is 2-3 edges long at L1 and 1-2 at L3 (the sheet's 1-3 would let a 3-edge join, which can only complete a
distractor missing 3, give the outcome away at L3, where distractors miss 1-2); 1-3 at L2.
Row and column numbers are printed along the lattice so that the open answer can be read without counting dots.
"""
from __future__ import annotations

import math
from bisect import insort
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from itertools import combinations

import numpy as np
from shapely.geometry import LineString

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.domains.transformational import _edges as ed
from grip.renderers import shapes
from grip.renderers.canvas import Canvas, LazyGeometry
from grip.renderers.style import BLACK, GREY, LABEL, OKABE_ITO, TEXT, WHITE, Style
from grip.renderers.text import any_meets, draw_text_px, place_label_screened

LETTERS = ("A", "B", "C", "D")
SPACING_PX = 50.0
LAT_X0, LAT_Y0 = 52.0, 234.0                     # lattice point (0, 0), px: the figure on the left, centred
BOX_PX, STRIP_PX = 150.0, 28.0                   # shape boxes (3 units) in a 2x2 block, label strips above
BOX_X = (392.0, 566.0)
BOX_Y = (194.0 + STRIP_PX, 194.0 + 2 * STRIP_PX + BOX_PX + 24.0)
M_RANGE = {1: (2, 3), 2: (1, 3), 3: (1, 2)}       # a distractor's missing edges
M_MIN = {1: 2, 2: 1, 3: 1}
JOIN_LEN = {1: (2, 3), 2: (1, 3), 3: (1, 2)}
N_EDGES = {1: 30, 2: 45, 3: 60}
STRAIGHT = ((1, 0), (0, 1), (-1, 0), (0, -1))
DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))
CLOSED, OPEN = "closed", "open"
MARK = OKABE_ITO["vermillion"]
NUMBERS = TEXT.with_(font_px=14.0)               # the lattice's row and column numbers


@dataclass(frozen=True)
class Scene:
    level: int                                    # 1..3
    figure: tuple                                 # C: unit edges ((x0, y0), (x1, y1)), lattice points 0..6, y down
    shapes: tuple                                 # A-D: each a normalised tuple of unit edges in a 3x3 box
    erase: tuple                                  # the maximal segment of C marked x (endpoints)
    join: tuple                                   # (P, Q): lattice points whose straight join is to be drawn in


def turns_allowed(scene: Scene) -> bool:
    return scene.level == 3


def figure_mask(scene: Scene) -> int:
    return ed.mask(scene.figure)


# --- sampling ----------------------------------------------------------------------------------------------------

def _dirs(level: int):
    return STRAIGHT + (DIAG if level >= 2 else ())


@lru_cache(maxsize=None)
def _box_moves(level: int) -> tuple:
    """Per point of the 4x4 shape box (index 4x + y): the unit edges from it, each as (the point reached, the bits
    it takes, the bit of a diagonal's cell (0 for a straight edge), the step, the edge). One int keeps the walk's
    visited points (bit 4x + y) and used cells (bit 16 + 3x + y): an edge takes the bits of the point it reaches
    and of its cell, and may be walked iff neither is taken."""
    out = []
    for x in range(4):
        for y in range(4):
            ms = []
            for dx, dy in _dirs(level):
                if 0 <= x + dx <= 3 and 0 <= y + dy <= 3:
                    q = 4 * (x + dx) + y + dy
                    cell = 1 << 16 + 3 * min(x, x + dx) + min(y, y + dy) if dx and dy else 0
                    ms.append((q, 1 << q | cell, cell, (dx, dy), ed.edge((x, y), (x + dx, y + dy))))
            out.append(tuple(ms))
    return tuple(out)


@lru_cache(maxsize=None)
def _box_backs(level: int) -> list:
    """At 16 p + q, for points p, q (indices) of the shape box: the unit edge from p to q, as in `_box_moves`, or
    None."""
    out = [None] * 256
    for p, ms in enumerate(_box_moves(level)):
        for m in ms:
            out[16 * p + m[0]] = m
    return out


def _run_lengths(steps: list, closed: bool) -> list[int]:
    """The lengths of the maximal straight segments of a simple path or cycle given as its steps in order (those of
    `ed.segments`): a run of equal steps is one segment, and a cycle's last run joins its first when they point the
    same way."""
    runs, prev = [], None
    for d in steps:
        if d == prev:
            runs[-1] += 1
        else:
            runs.append(1)
            prev = d
    if closed and len(runs) > 1 and steps[0] == steps[-1]:
        runs[0] += runs.pop()
    return runs


def _random_shape(rng: Draws, level: int, closed: bool, run: int = 0, segs: int = 0):
    """A simple path or cycle of 4-8 unit edges inside a 3x3 box; with `run`, it has a straight run that long; with
    `segs`, it is made of that many maximal straight segments."""
    moves, backs = _box_moves(level), _box_backs(level)
    integers, random = rng.integers, rng.random
    for _ in range(300):
        p = start = 4 * integers(0, 4) + integers(0, 4)
        taken, edges, steps, target = 1 << start, [], [], integers(max(4, segs), 9)
        shut = False
        n = 0                                                   # len(edges)
        while n < target:
            if closed and n >= 3:
                back = backs[16 * p + start]
                if back is not None and not back[2] & taken and (random() < 0.6 or n == target - 1):
                    edges.append(back[4])
                    steps.append(back[3])
                    n += 1
                    shut = True
                    break
            opts = [m for m in moves[p] if not m[1] & taken]
            if not opts:
                break
            p, bits, _, step, e = opts[integers(len(opts))]
            taken |= bits
            edges.append(e)
            steps.append(step)
            n += 1
        # A self-avoiding walk is a simple path; one that steps back onto its start, a simple cycle.
        if not 4 <= n <= 8 or shut != closed:
            continue
        if run or segs:
            runs = _run_lengths(steps, closed)
            if run and max(runs) < run or segs and len(runs) != segs:
                continue
        return ed.normalise(edges)
    raise Reject("no_shape")


def _sub_shape(small, big, turns: bool) -> bool:
    return len(small) <= len(big) and ed.best_overlap(small, big, turns) == len(small)


@lru_cache(maxsize=4096)
def _turned(shape: tuple, quarter_turns: int):
    """The shape turned (normalised) and its extent: a sample places each shape many times."""
    s = ed.turned(shape, quarter_turns)
    return s, ed.extent(s)


@lru_cache(maxsize=None)
def _run(p, d, n: int):
    """`ed.run_from(p, d, n)` as a tuple, and whether all of it lies inside the lattice."""
    run = tuple(ed.run_from(p, d, n))
    return run, all(ed.inside(e) for e in run)


def _place(rng: Draws, shape, turns: bool):
    s, (w, h) = _turned(shape, rng.integers(4) if turns else 0)
    dx, dy = rng.integers(0, ed.SIZE - w), rng.integers(0, ed.SIZE - h)
    return [((a[0] + dx, a[1] + dy), (b[0] + dx, b[1] + dy)) for a, b in s]    # a translate of a normalised edge


def _skeleton(rng, shp, hidden, distractors, target, x, join_len, turns):
    """The hidden shape placed whole and each distractor placed with its target number of edges left out (for the
    completer, a straight run as long as the join). None when the placements clash."""
    fig, forbidden = set(_place(rng, shp[hidden], turns)), set()
    hidden_edges, x_edges, join = set(fig), set(), None
    # The cells of the diagonals in fig | forbidden, which never clash (each is part of a union checked below, and
    # a placed shape has one diagonal per cell at most): a placement keeps one diagonal per cell iff each of its
    # diagonals is drawn already or lies in a free cell.
    cells = {ed.cell_of(e) for e in fig if ed.is_diagonal(e)}
    for i in distractors:
        for _ in range(12):
            pl = _place(rng, shp[i], turns)
            if i == x:
                runs = [sg for sg in ed.segments(pl) if ed.length(sg) >= join_len]
                units = ed.unit_edges(runs[rng.integers(len(runs))])
                k = rng.integers(len(units) - join_len + 1)
                miss = units[k:k + join_len]
            else:
                free = [e for e in pl if e not in fig]
                if len(free) < target[i]:
                    continue
                miss = [free[j] for j in rng.subset(len(free), target[i])]
            if (not any(e in fig for e in miss) and not any(e in forbidden for e in pl if e not in miss)
                    and not any(ed.is_diagonal(e) and ed.cell_of(e) in cells and e not in fig and e not in forbidden
                                for e in pl)):
                break
        else:
            return None
        if i == x:
            join, x_edges = ed.ends(miss), set(pl)
        fig |= {e for e in pl if e not in miss}
        forbidden |= set(miss)
        cells |= {ed.cell_of(e) for e in pl if ed.is_diagonal(e)}
    return fig, forbidden, hidden_edges, x_edges, join


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"embedded_figures: level must be 1..3, got {level}")
    rng = Draws(rng)
    turns, (lo, hi) = level == 3, M_RANGE[level]
    hidden = rng.integers(4)
    b_closed = rng.random() < 0.5
    survive, complete = rng.random() < 0.5, rng.random() < 0.5
    join_len = rng.integers(JOIN_LEN[level][0], JOIN_LEN[level][1] + 1)
    distractors = [i for i in range(4) if i != hidden]
    target = {i: rng.integers(lo, hi + 1) for i in distractors}
    if 1 in target and lo + 1 == hi:
        # B's count: 2 is in the range of every level, so at L1 (2-3) and L3 (1-2) the other value gets 60%, which
        # keeps every value of Q3 under 30% on the default mix.
        target[1] = (hi if level == 1 else lo) if rng.random() < 0.6 else (lo if level == 1 else hi)
    others = [i for i in distractors if i != 1] or distractors
    x = rng.pick(others) if complete else -1                # the distractor the join completes
    if complete:
        target[x] = join_len
    if level == 3 and min(target.values()) > 1:
        target[rng.pick([i for i in others if i != x] or others)] = 1
    # Shapes: B's type fixed, the completer with a straight run as long as the join; no shape inside another, and no
    # distractor within the level's margin of fitting the hidden shape alone. Each distractor is redrawn on its own.
    # A's segment count (Q1) is drawn first too, uniform over 2-6 (left alone, squares would make 4 the answer of
    # over 40% of items).
    segs_a = rng.integers(2, 7)

    def closed_of(i: int) -> bool:
        # A closed outline has at least 3 sides; without diagonals, an even number of at least 4.
        can_close = segs_a >= 3 if level >= 2 else segs_a in (4, 6)
        return b_closed if i == 1 else (can_close and rng.random() < 0.5) if i == 0 else rng.random() < 0.5

    shp = [None] * 4
    shp[hidden] = _random_shape(rng, level, closed_of(hidden), segs=segs_a if hidden == 0 else 0)
    for i in distractors:
        for _ in range(30):
            cand = _random_shape(rng, level, closed_of(i), join_len if i == x else 0, segs_a if i == 0 else 0)
            if len(cand) - ed.best_overlap(cand, shp[hidden], turns) >= lo and not any(
                    o is not None and (_sub_shape(cand, o, turns) or _sub_shape(o, cand, turns)) for o in shp):
                shp[i] = cand
                break
        else:
            raise Reject("sub_shape")
    # Every shape's placement rows in one matrix (shape i's from starts[i]) and its columns as contiguous rows: the
    # missing counts of all placements are one vector, updated by one small sum per trial run.
    mats = [ed.placement_matrix(sh, turns) for sh in shp]
    starts = np.cumsum([0] + [len(m) for m in mats[:-1]])
    stack = np.concatenate(mats)
    columns = np.ascontiguousarray(stack.T)
    h0, h1 = starts[hidden], starts[hidden] + len(mats[hidden])

    def sound(miss) -> bool:
        """The hidden shape once; no distractor complete or closer than the level allows; B at its target."""
        if np.count_nonzero(miss[h0:h1] == 0) != 1:
            return False
        low = np.minimum.reduceat(miss, starts).tolist()
        return min(low[i] for i in distractors) >= lo and (hidden == 1 or low[1] == target[1])

    for _ in range(10):
        built = _skeleton(rng, shp, hidden, distractors, target, x, join_len, turns)
        if built is not None:
            miss = stack @ (1 - ed.vector(built[0]))
            if sound(miss):
                break
    else:
        raise Reject("overlap")
    fig, forbidden, hidden_edges, x_edges, join = built
    # Noise: straight runs of 1-3 edges grown from points already drawn, up to the level's edge count, each kept
    # only if the figure stays sound. Missing counts only fall, and a run's edges lie on no complete placement,
    # so from a sound figure a run keeps it sound iff no placement loses more edges than its slack: its missing
    # count less the fewest it may have (1 for the hidden shape's other placements, B's target for B, `lo` for
    # the other distractors, 0 for the hidden placement).
    floor = np.repeat([1 if i == hidden else target[1] if i == 1 else lo for i in range(4)],
                      [len(m) for m in mats])
    floor[h0 + int(np.flatnonzero(miss[h0:h1] == 0)[0])] = 0
    slack = miss - floor
    idx = ed.edge_index()
    diag_cells = {ed.cell_of(e) for e in fig | forbidden if ed.is_diagonal(e)}
    pt_set = {p for e in fig for p in e}
    pts = sorted(pt_set)
    dirs = _dirs(level)
    misses = 0
    for _ in range(400):
        if len(fig) >= N_EDGES[level] or misses >= 60:
            break
        misses += 1
        p = pts[rng.integers(len(pts))]
        d = dirs[rng.integers(len(dirs))]
        full, inside = _run(p, d, rng.integers(1, 4))
        # Edges outside the lattice are never in the figure: the run is inside iff all of `full` is.
        if not inside:
            continue
        run = [e for e in full if e not in fig]
        if not run or not forbidden.isdisjoint(run):
            continue
        cells = [ed.cell_of(e) for e in run] if d[0] and d[1] else ()
        if not diag_cells.isdisjoint(cells):
            continue
        lost = columns[idx[run[0]]]
        for e in run[1:]:
            lost = lost + columns[idx[e]]
        if not (lost > slack).any():
            misses = 0
            slack = slack - lost
            fig.update(run)
            diag_cells.update(cells)
            for e in run:
                for q in e:
                    if q not in pt_set:
                        pt_set.add(q)
                        insort(pts, q)
    fm = ed.mask(fig)
    if not complete:                                           # a join of new edges that completes nothing planned
        distractor_pls = [p for i in distractors for p in ed.placements(shp[i], turns)]
        # A run of new edges keeps one diagonal per cell with the figure iff the figure does, the run does and
        # no cell holds a diagonal of both.
        fig_cells = [ed.cell_of(e) for e in fig if ed.is_diagonal(e)]
        fig_ok, fig_cells = len(fig_cells) == len(set(fig_cells)), set(fig_cells)
        for _ in range(60):
            p = (rng.integers(ed.SIZE), rng.integers(ed.SIZE))
            d = _dirs(level)[rng.integers(len(_dirs(level)))]
            run, inside = _run(p, d, join_len)
            if inside and not set(run) & fig and fig_ok and ed.diagonals_ok(run) and not any(
                    ed.cell_of(e) in fig_cells for e in run if ed.is_diagonal(e)):
                absent = ~(fm | ed.mask(run))
                if not any(p & absent == 0 for p in distractor_pls):
                    join = ed.ends(run)
                    break
        else:
            raise Reject("no_join")
    segs = ed.segments(fig)
    units = [set(ed.unit_edges(s)) for s in segs]
    pick = [s for s, u in zip(segs, units) if not u & x_edges and bool(u & hidden_edges) != survive]
    if not pick:
        raise Reject("no_erase")
    erase = pick[rng.integers(len(pick))]
    s = Scene(level, tuple(sorted(fig)), tuple(shp), erase, join)
    _check(s, hidden, target, [LETTERS[i] for i in range(4) if (i == hidden and survive) or i == x])
    return s


def _check(s: Scene, hidden: int, target: dict, after: list) -> None:
    found = _found(s.figure, s.shapes, turns_allowed(s))
    occ = [len(o) for o, _ in found]
    if occ[hidden] != 1:
        raise Reject("hidden_twice")
    if sum(occ) != 1:
        raise Reject("distractor_present")
    miss = {i: found[i][1] for i in target}
    lo, hi = M_RANGE[s.level]
    if 1 in miss and miss[1] != target[1] or not all(lo <= m <= hi for m in miss.values()):
        raise Reject("distractor_distance")
    if s.level == 3 and min(miss.values()) != 1:
        raise Reject("distractor_distance")
    if list(present_after_edit(s)) != after:
        raise Reject("q5_target")


# --- answers -----------------------------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _found(figure: tuple, shapes: tuple, turns: bool) -> tuple:
    """Per shape: its placements lying wholly in the figure (`ed.occurrences`) and its fewest missing edges
    (`ed.missing`). The check in `sample`, the ladder and its edited figure ask for the same figures."""
    fm = ed.mask(figure)
    out = []
    for sh in shapes:
        counts = ed.missing_counts(sh, fm, turns)
        rows = ed.placements(sh, turns)
        out.append((tuple(rows[int(i)] for i in (counts == 0).nonzero()[0]), int(counts.min())))
    return tuple(out)


def segment_count(scene: Scene, letter: str) -> Count:
    return Count(len(ed.segments(scene.shapes[LETTERS.index(letter)])), low=1, high=8)


def shape_type(scene: Scene, letter: str) -> Choice:
    return Choice(CLOSED if ed.is_closed(scene.shapes[LETTERS.index(letter)]) else OPEN, (CLOSED, OPEN),
                  (("closed outline", CLOSED), ("open path", OPEN)))


def missing_of(scene: Scene, letter: str) -> Count:
    return Count(_found(scene.figure, scene.shapes, turns_allowed(scene))[LETTERS.index(letter)][1], low=0, high=8)


def present(scene: Scene) -> list[str]:
    return [LETTERS[i] for i, (occ, _) in enumerate(_found(scene.figure, scene.shapes, turns_allowed(scene))) if occ]


def hidden_shape(scene: Scene) -> Choice:
    got = present(scene)
    if len(got) != 1:
        raise Reject("hidden_not_unique")
    return Choice(got[0], LETTERS)


def edit(scene: Scene) -> Scene:
    """Erase the marked segment's unit edges and draw in the straight join of P and Q."""
    fig = (set(scene.figure) - set(ed.unit_edges(scene.erase))) | set(ed.unit_edges(scene.join))
    return replace(scene, figure=tuple(sorted(fig)))


def present_after_edit(scene: Scene) -> tuple[str, ...]:
    return tuple(present(edit(scene)))


def hidden_shapes(scene: Scene) -> Ordered:
    return Ordered(tuple(present(scene)), "alphabetical order", LETTERS, as_set=True)


counterfactual = hidden_shapes


def hidden_corner(scene: Scene) -> Record:
    """Row and column (1-based from the top-left) of the top-left corner of the hidden placement's bounding box."""
    letter = hidden_shape(scene).value
    occ = _found(scene.figure, scene.shapes, turns_allowed(scene))[LETTERS.index(letter)][0]
    if len(occ) != 1:
        raise Reject("hidden_not_unique")
    pts = [p for e in ed.edges_of(occ[0]) for p in e]
    return Record((("row", Count(min(p[1] for p in pts) + 1, low=1, high=7)),
                   ("col", Count(min(p[0] for p in pts) + 1, low=1, high=7))))


def distractor_margin(scene: Scene) -> int:
    """Fewest missing edges over the shapes absent from the figure (8, a shape's most edges, when every shape is
    present: no distractor is near, and Q4's uniqueness check rejects such a figure)."""
    return min([m for occ, m in _found(scene.figure, scene.shapes, turns_allowed(scene)) if not occ], default=8)


def absent_margin(scene: Scene) -> int:
    """Fewest missing edges over the shapes absent from the figure (8 when every shape is present)."""
    return min([m for occ, m in _found(scene.figure, scene.shapes, turns_allowed(scene)) if not occ], default=8)


def end_gap_px(scene: Scene, letter: str) -> float:
    sh = scene.shapes[LETTERS.index(letter)]
    ends = [p for p, d in ed.degrees(sh).items() if d == 1]
    return SPACING_PX * float(np.hypot(ends[0][0] - ends[1][0], ends[0][1] - ends[1][1])) if ends else SPACING_PX


# --- ladder ------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=256)       # generate and rephrase_q4 each ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    lv = scene.level
    how = ("same size, turning by quarter turns allowed, no flipping" if lv == 3 else
           "same size and orientation")
    dm = Margin(distractor_margin(scene), "unit edges", M_MIN[lv], "a distractor missing too few edges")
    e = edit(scene)
    if not ed.diagonals_ok(e.figure):
        raise Reject("diagonal_clash")
    rungs = (
        Question(1, "segments_of_a", "How many straight line segments make up shape A? (A straight run counts once, "
                 "even where it passes lattice points.)", segment_count(scene, "A"),
                 Margin(SPACING_PX, "px", 40.0, "lattice points too close to see where a line bends")),
        Question(2, "type_of_b", "Is shape B a closed outline or an open path?", shape_type(scene, "B"),
                 Margin(end_gap_px(scene, "B"), "px", 40.0, "the ends of an open path too close to tell it open")),
        Question(3, "missing_of_b", "What is the smallest number of unit edges (lattice point to neighbouring lattice "
                 "point) that would have to be added to the complex figure on the left for shape B to appear in "
                 f"it ({how})? Answer 0 if it already appears.", missing_of(scene, "B"), dm),
        Question(4, "hidden_shape", f"Which of the shapes A-D is hidden in the complex figure ({how})?",
                 hidden_shape(scene), dm),
        Question(5, "hidden_after_edit", "If the straight line marked with the cross were erased along its whole "
                 "length (end to end, through any lattice points it passes) and P were joined to Q by a straight "
                 f"line, which of the shapes A-D would be hidden in the figure ({how})?", counterfactual(e),
                 Margin(absent_margin(e), "unit edges", 1.0, "an absent shape already complete"),
                 edit="erase the straight line marked with the cross and join P to Q"),
    )
    open_q = Question(6, "hidden_corner", "Where is the hidden shape in the complex figure? Give the lattice point "
                      "(row and column, numbered from 1 at the top-left as printed) of the top-left corner of its "
                      "bounding box. Explain.", hidden_corner(scene), dm)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    q4 = ladder(scene).rungs[3]
    return Question(4, "traceable_shape", "Which shape (A, B, C or D) can be traced entirely along lines of the "
                    "complex figure without adding any line" + (", turning it by quarter turns if needed?"
                                                                if scene.level == 3 else "?"), q4.answer, q4.margin)


MAX_REMOVED = 4                                   # most figure edges a minimal pair removes


def _removals(fig: int, near: list, lo: int, pool: int):
    """The smallest sets of edges (bitmasks within `pool`) whose removal from `fig` leaves every placement in
    `near` lacking at least `lo` edges, and the sets one edge larger (tried where the smallest break a rule)."""
    bits = [1 << b for b in range(pool.bit_length()) if pool >> b & 1]
    found = []
    for k in range(1, MAX_REMOVED + 1):
        for combo in combinations(bits, k):
            r = sum(combo)
            if all((p & ~(fig & ~r)).bit_count() >= lo for p in near):
                found.append(r)
        if found and (k == MAX_REMOVED or min(x.bit_count() for x in found) < k):
            break
    return found


def minimal_pair(scene: Scene) -> Scene:
    """Add a distractor's missing edges (at its best placement) and remove the fewest figure edges that leave the
    old hidden shape lacking at least the level's distractor margin (`M_MIN`) at every placement, near ones beside
    its occurrence included: Q4 becomes that distractor. Removed edges lie on the old hidden shape's placements,
    never on the new one's placement or the marked segment. Fewest edges changed first, then distractors with
    fewer missing edges. The marked segment stays a whole straight line of the figure and the join stays undrawn,
    so Q5's wording keeps its meaning."""
    fm, turns = figure_mask(scene), turns_allowed(scene)
    lo = M_MIN[scene.level]
    h = LETTERS.index(hidden_shape(scene).value)
    hidden_pls = ed.placements(scene.shapes[h], turns)
    join, erase = ed.mask(ed.unit_edges(scene.join)), ed.mask(ed.unit_edges(scene.erase))
    cands = []
    for i, sh in enumerate(scene.shapes):
        if i == h:
            continue
        m = ed.missing(sh, fm, turns)
        for best in sorted(p for p in ed.placements(sh, turns) if (p & ~fm).bit_count() == m):
            if best & join:
                continue
            f = fm | best
            near = [p for p in hidden_pls if (p & ~f).bit_count() < lo]
            pool = 0
            for p in near:
                pool |= p
            for r in _removals(f, near, lo, pool & fm & ~best & ~erase):
                cands.append((m + r.bit_count(), m, i, best, r))
    for _, _, i, best, r in sorted(cands):
        twin = replace(scene, figure=tuple(sorted(ed.edges_of((fm | best) & ~r))))
        if not ed.diagonals_ok(twin.figure) or ed.edge(*scene.erase) not in {
                ed.edge(*sg) for sg in ed.segments(twin.figure)}:
            continue
        try:
            lad = ladder(twin)
        except Reject:
            continue
        if lad.rungs[3].answer.value == LETTERS[i] and not lad.failing_margins() and \
                ed.occurrences(twin.shapes[i], figure_mask(twin), turns) == [best]:
            return twin
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def lattice_px(p) -> tuple[float, float]:
    return (LAT_X0 + p[0] * SPACING_PX, LAT_Y0 + p[1] * SPACING_PX)


def _dots(canvas, x0: float, y0: float, n: int) -> None:
    ctx = canvas.ctx
    ctx.set_source_rgb(*GREY)
    for i in range(n):
        for j in range(n):
            ctx.new_sub_path()
            ctx.arc(x0 + i * SPACING_PX, y0 + j * SPACING_PX, 3.0, 0, 2 * np.pi)
    ctx.fill()                                        # one fill: the dots lie far apart, so the same pixels


def _outline(line, half_px: float):
    """A line's stroke outline, as `shapes` buffers it."""
    return LineString(line).buffer(half_px)


PQ_LABEL = LABEL.with_(text=MARK)
PQ_RADII_PX = (20.0, 30.0, 40.0)
CLEARANCE_PX = 4.0                                # of P's and Q's labels from other strokes
SAGITTA = 0.002                                   # > 1 - cos(pi / 64), the sagitta of a 64-gon over its radius


def _place_pq_label(canvas: Canvas, name: str, p, strokes, placed) -> tuple[float, float, float, float]:
    """`place_label(canvas, name, p, name, PQ_LABEL, radii_px=PQ_RADII_PX, clearance_px=CLEARANCE_PX)`, each
    stroke test first decided on the exact strokes (`_stroke_meets`; see `place_label_screened`): buffering every
    candidate's box is the bulk of place_label's cost, and most candidates lie on a line. `strokes`: (owner, centre
    line x0, y0, x1, y1, half width) of every stroke on the canvas, px; `placed`: the bounds of `canvas.labels`.
    Returns the bounds of the label's box."""
    others = [st for owner, *st in strokes if owner != name]
    return place_label_screened(canvas, name, p, name, PQ_LABEL, PQ_RADII_PX, CLEARANCE_PX, placed,
                                lambda box: any_meets(_stroke_meets(box, *st) for st in others))


def _stroke_meets(box, ax: float, ay: float, bx: float, by: float, half: float) -> bool | None:
    """Whether the box (x0, y0, x1, y1) buffered by CLEARANCE_PX meets the stroke of half width `half` around the
    segment a-b (a disk where a = b) as shapely's polygons have them, or None where their approximations could
    decide either way: a box's buffer lies between 3.99 and 4 px of the box, a line's or point's buffer of radius
    rho (round ends, as 64-gons) between rho (1 - SAGITTA) and rho of it."""
    x0, y0, x1, y1 = box
    out = CLEARANCE_PX + half + 1e-6
    if min(ax, bx) - x1 > out or x0 - max(ax, bx) > out or min(ay, by) - y1 > out or y0 - max(ay, by) > out:
        return False                                   # far apart along an axis
    d = _segment_box_distance(box, ax, ay, bx, by)
    if d > out:
        return False
    if d < CLEARANCE_PX - 0.01 + half * (1 - SAGITTA) - 1e-6:
        return True
    return None


def _segment_box_distance(box, ax: float, ay: float, bx: float, by: float) -> float:
    """The distance between the segment a-b and the closed box (x0, y0, x1, y1): 0 where they meet, else the least
    over the segment's ends and the box's corners (two disjoint convex sets are nearest at a vertex of one)."""
    x0, y0, x1, y1 = box
    t0, t1 = 0.0, 1.0                                  # the segment clipped to the box's slabs (Liang-Barsky)
    for p, d, lo, hi in ((ax, bx - ax, x0, x1), (ay, by - ay, y0, y1)):
        if d == 0.0:
            if p < lo or p > hi:
                t0 = 2.0
                break
        else:
            ta, tb = (lo - p) / d, (hi - p) / d
            t0, t1 = max(t0, min(ta, tb)), min(t1, max(ta, tb))
    if t0 <= t1:
        return 0.0
    ex, ey = bx - ax, by - ay
    ee = ex * ex + ey * ey
    best = min(math.hypot(max(x0 - px, 0.0, px - x1), max(y0 - py, 0.0, py - y1)) for px, py in ((ax, ay), (bx, by)))
    for cx, cy in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
        t = min(1.0, max(0.0, ((cx - ax) * ex + (cy - ay) * ey) / ee)) if ee else 0.0
        best = min(best, math.hypot(cx - ax - t * ex, cy - ay - t * ey))
    return best


def _draw_lattice(canvas) -> list:
    """The figure's dot lattice and its row and column numbers; returns the numbers' boxes."""
    _dots(canvas, LAT_X0, LAT_Y0, ed.SIZE)
    boxes = []
    for k in range(ed.SIZE):
        boxes.append(draw_text_px(canvas, str(k + 1), (LAT_X0 + k * SPACING_PX, LAT_Y0 - 24), NUMBERS))
        boxes.append(draw_text_px(canvas, str(k + 1), (LAT_X0 - 22, LAT_Y0 + k * SPACING_PX), NUMBERS))
    return boxes


@lru_cache(maxsize=4)
def _lattice_layer(size_px: int, world) -> tuple:
    """The surface bytes of a fresh canvas after `_draw_lattice`, and the numbers' boxes."""
    canvas = Canvas(size_px, world)
    boxes = _draw_lattice(canvas)
    return canvas.layer_bytes(), tuple(boxes)


def draw(scene: Scene, canvas) -> None:
    # The lattice and its numbers are the same in every scene: drawn once onto a fresh canvas, their pixels are
    # copied onto a fresh one (else drawn here). Every later stroke and text sets the cairo state it uses.
    layer, boxes = _lattice_layer(canvas.size_px, canvas.world)
    if not canvas.paste_layer(layer):
        boxes = _draw_lattice(canvas)
    canvas.labels.extend(boxes)                      # registered as labels, so that P and Q keep off them
    segs = [(lattice_px(a), lattice_px(b)) for a, b in ed.segments(scene.figure)]
    shapes.segments(canvas, segs, Style(stroke=BLACK, width_px=3.0), register=False)
    # One outline per segment, each built only if a label is tested near it: the same point set as the buffer of
    # their union (what `shapes.segments` registers, ~10 ms for a figure's many crossing lines), and a label meets
    # it wherever it meets one of them.
    lines = canvas.pts_px(np.asarray(segs, float).reshape(-1, 2)).reshape(-1, 2, 2)
    for ln in lines:
        canvas.register_stroke(LazyGeometry(partial(_outline, ln, 1.5), ln, 1.5), "figure")
    strokes = [("figure", *ln.ravel().tolist(), 1.5) for ln in lines]
    # The erase mark: a vermillion x with a white halo at the middle of the segment's central unit edge, never on
    # a lattice point (where other lines may meet, the mark could name two lines); diagonals never cross, so that
    # point lies on the marked line only.
    (a, b) = scene.erase
    n = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
    t = (n // 2 + 0.5) / n
    mx, my = lattice_px((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
    cross = [((mx - 9, my - 9), (mx + 9, my + 9)), ((mx - 9, my + 9), (mx + 9, my - 9))]
    shapes.segments(canvas, cross, Style(stroke=WHITE, width_px=8.0), register=False)
    shapes.segments(canvas, cross, Style(stroke=MARK, width_px=4.0), owner="x")
    strokes += [("x", *canvas.px(*a), *canvas.px(*b), 2.0) for a, b in cross]
    for name, p in zip(("P", "Q"), scene.join):
        c = lattice_px(p)
        shapes.circle(canvas, c, 8.0, Style(stroke=MARK, fill=WHITE, width_px=3.0), owner=name)
        strokes.append((name, *canvas.px(*c), *canvas.px(*c), canvas.len_px(8.0) + 1.5))    # a filled disk
    # Keep both labels off the stretch between P and Q, where a label would sit by both points.
    join = canvas.pts_px([lattice_px(p) for p in scene.join])
    canvas.register_stroke(LazyGeometry(partial(_outline, join, 3.0), join, 3.0), "join")
    strokes.append(("join", *join.ravel().tolist(), 3.0))
    placed = [o.bounds for o in canvas.labels]
    for name, p in zip(("P", "Q"), scene.join):
        placed.append(_place_pq_label(canvas, name, lattice_px(p), strokes, placed))
    for i, sh in enumerate(scene.shapes):
        bx, by = BOX_X[i % 2], BOX_Y[i // 2]
        ctx = canvas.ctx                             # the frame: drawn only, no label needs to avoid it
        ctx.rectangle(bx - 6, by - 6, BOX_PX + 12, BOX_PX + 12)
        ctx.set_source_rgb(*GREY)
        ctx.set_line_width(1.5)
        ctx.stroke()
        draw_text_px(canvas, LETTERS[i], (bx + BOX_PX / 2, by - 6 - STRIP_PX / 2), LABEL)
        w, h = ed.extent(sh)
        ox, oy = bx + SPACING_PX * ((3 - w) // 2), by + SPACING_PX * ((3 - h) // 2)
        _dots(canvas, bx, by, 4)
        segs = [((ox + a[0] * SPACING_PX, oy + a[1] * SPACING_PX), (ox + b[0] * SPACING_PX, oy + b[1] * SPACING_PX))
                for a, b in ed.segments(sh)]
        shapes.segments(canvas, segs, Style(stroke=BLACK, width_px=3.0), register=False)


DOMAIN = Domain(
    id="embedded_figures", family="transformational", title="Embedded figures",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2, max_attempts=4000,
    description="A complex lattice line figure and four simple shapes, exactly one hidden in it: segments of A, B's "
                "type, the edges B lacks, the hidden shape, the shapes hidden after erasing a segment and drawing a "
                "join, and where the hidden shape sits.",
    balance_keys=("type_of_b", "missing_of_b", "hidden_shape", "hidden_after_edit"),
)
