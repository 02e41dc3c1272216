"""Fold & punch: an 8 x 8 square of paper is folded one to three times along dashed lines (grid lines x = c, y = c or
diagonals y = x + c, y = -x + c), then one to three holes are punched through the folded paper at cell centres.
The top row shows each fold on the paper as it is before that fold (dashed line, curved arrow from the part that
moves to where it lands) and then the punched paper; the bottom row shows four candidate unfolded sheets. The
ladder walks holes punched -> layers under hole 1 -> holes after unfolding -> the right drawing -> hole 1 punched
before an earlier fold; the open question asks for the first hole of the unfolded sheet in reading order.

Rules: the part of the paper on the flap side of a fold line is reflected across it and laid on top; the other part
stays where it is, so a spot on it keeps its coordinates through every later fold. The paper is kept as layers
(convex polygon in the current coordinates, affine map back to the flat sheet); a punch at p makes one hole per
layer containing p, at that layer's map of p. Distinct spots have disjoint preimages, so the unfolded holes are
distinct cell centres.
Ambiguity boundaries: a hole near a fold line or a layer edge (at any stage, in that stage's coordinates), where a
viewer cannot tell which layers it passes: every hole image keeps `CLEAR[level]` units from them. The sheet's
Q5 ("punched before the last fold") reads Q5 = Q3 - Q2/2 off earlier answers whenever the layers are even, as after
half folds; so Q5 names the fold (`early_fold`, drawn uniformly among the folds) before which hole 1 is punched.
Legibility: 1 unit = 20 px in the fold panels and 24 px in the candidates; holes are 12 px across.
Clearance: a cell centre lies 0.5 + k units from a grid line and k / sqrt 2 from a diagonal, so any threshold in
(0.71, 1.41] is the sheet's 1.0. At level 2 that left no cell under most asymmetric or corner flaps (a flap needs
a width of 3, a corner leg of 5, and the "moved" drawing a second such cell next to hole 1), so level 2 uses
level 3's 0.5 (10 px; only holes on a line or an edge corner are rejected). Hole 1's one-cell move may be diagonal.
Balance: Q1 and Q4 are drawn first; Q2 follows a per-level preference (`WANT_LAYERS`) where the folds allow it, and
level 1 makes one fold twice as often as two, so that no layer count passes 35% of the default mix.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import shapely
from shapely.geometry import Polygon

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.transformational._folding import (
    SIZE, Cell, _edges, _QX, clearances, extent, flap_layers, fold_line, fold_mask, layers_at, mask_bounds,
    membership, outline, pattern_of, stages, unfolded)
from grip.draws import Draws
from grip.geometry import apply_affine, clip_convex, reflection_matrix
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY_DARK, LABEL, OKABE_ITO, TEXT, Style, tint
from grip.renderers.text import DIRECTIONS, draw_text_px

CLEAR = {1: 1.0, 2: 0.5, 3: 0.5}           # hole image to fold line / layer edge, units (see docstring)
N_FOLDS = {1: (1, 1, 2), 2: (2,), 3: (3,)}   # drawn uniformly from the tuple: L1 has one fold 2 times in 3
WANT_LAYERS = {1: (2,), 2: (2, 3, 3, 4), 3: (3, 4, 5, 5)}   # Q2 preference (5 = five or more); 2 comes unasked
MOVES = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))   # one cell, 8 ways
OPTIONS = ("1", "2", "3", "4")
TOP_UNIT, BOT_UNIT = 20.0, 24.0            # px per unit: fold panels, candidate drawings
HOLE_R = 6.0
LABEL_CLEAR_PX = 3.0                       # hole 1's label to any edge of the punched paper
LABEL_BOX_PX = (16.0, 19.0)                # ink box of "1" in bold 18 px with its 3 px halo (a test measures it)
PAPER = tint(OKABE_ITO["sky"], 0.78)
ARROW = Style(stroke=OKABE_ITO["vermillion"], width_px=3.0)


@dataclass(frozen=True)
class Scene:
    level: int                                     # 1..3: fold count and kinds, clearance
    folds: tuple[tuple[str, int, int], ...]        # (line kind in LINES, c, flap side -1 | +1 of a x + b y - c)
    holes: tuple[tuple[float, float], ...]         # punched spots (cell centres, units), hole 1 first; 1..3
    punched_after: tuple[int, ...]                 # per hole, folds made before it is punched (drawn: all)
    move: tuple[int, int]                          # hole 1's one-cell step that makes the "moved" drawing
    early_fold: int                                # Q5: hole 1 punched before this fold, 1..len(folds)
    candidates: tuple[tuple[Cell, ...], ...]       # drawings 1-4: hole cells of each unfolded sheet, sorted


# --- sampling ----------------------------------------------------------------------------------------------------

# Smallest flap, units from the bounding box's edge (axis folds) or corner (diagonal folds, leg length): below it
# no cell centre under the flap keeps the level's clearance from the crease and the flap's own edges.
FLAP_MIN = {2: {"axis": 3, "diag": 4}, 3: {"axis": 2, "diag": 3}}


def _draw_fold(d: Draws, level: int, mask: np.ndarray, kinds: str):
    """(fold, covered quarter cells after it), or None."""
    x0, y0, x1, y1 = mask_bounds(mask)
    if level == 1:   # half folds of the current rectangle, the second across the first
        kind = kinds[0]
        mid = (x0 + x1) / 2 if kind == "x" else (y0 + y1) / 2
        fold = (kind, int(mid), d.pick((-1, 1)))
        after = fold_mask(mask, fold) if mid == int(mid) else None
        return None if after is None else (fold, after)
    for _ in range(12):
        kind = kinds[d.integers(len(kinds))]
        side = d.pick((-1, 1))
        if kind in "xy":
            lo, hi = (x0, x1) if kind == "x" else (y0, y1)
            legs = range(FLAP_MIN[level]["axis"], int((hi - lo) // 2) + 1)
        else:
            legs = range(FLAP_MIN[level]["diag"], int(min(x1 - x0, y1 - y0)) + 1)
        if not len(legs):
            continue
        leg = legs[d.integers(len(legs))]
        # c of the line `leg` units in from the flap side's edge or corner
        c = {("x", -1): x0 + leg, ("x", 1): x1 - leg, ("y", -1): y0 + leg, ("y", 1): y1 - leg,
             ("d", -1): y0 - x1 + leg, ("d", 1): y1 - x0 - leg, ("a", -1): x0 + y0 + leg,
             ("a", 1): x1 + y1 - leg}[(kind, side)]
        fold = (kind, int(c), side)
        after = fold_mask(mask, fold)
        if after is not None:
            return fold, after
    return None


def _mirror(cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """The sheet's pattern reflected about the first of x = 4, y = 4, y = x, y = 8 - x that changes it; with all
    eight symmetries, the pattern plus the first free cell in reading order."""
    n = SIZE - 1
    for f in (lambda c, r: (n - c, r), lambda c, r: (c, n - r), lambda c, r: (r, c), lambda c, r: (n - r, n - c)):
        out = tuple(sorted(f(c, r) for c, r in cells))
        if out != cells:
            return out
    free = next((c, r) for r in range(SIZE) for c in range(SIZE) if (c, r) not in cells)
    return tuple(sorted(cells + (free,)))


HALF_FOLDS = (("x", 4), ("y", 4), ("d", 0), ("a", 8))   # the sheet's four mirror lines


def _draw_folds(d: Draws, level: int, nf: int) -> tuple | None:
    """The fold lines, in order. L1: half folds, the second across the first. L2: a half fold of the sheet (about
    any of its four mirror lines) then an asymmetric fold, or an asymmetric fold then any; one of the two is
    diagonal. L3: any three."""
    folds: list = []
    mask = np.ones(len(_QX), bool)
    if level == 1:
        first = "xy"[d.integers(2)]
        kinds = [first, "y" if first == "x" else "x"][:nf]
    elif level == 2 and d.random() < 0.5:   # a diagonal half fold, then a grid-line fold
        kind, c = HALF_FOLDS[2 + d.integers(2)]
        folds = [(kind, c, d.pick((-1, 1)))]
        mask = fold_mask(mask, folds[0])
        kinds = ["xy"]
    elif level == 2:
        kinds = ["xy", "da"] if d.random() < 0.5 else ["da", "xy"]
    else:
        kinds = ["xyda"] * nf
    for k in kinds:
        got = _draw_fold(d, level, mask, k)
        if got is None:
            return None
        folds.append(got[0])
        mask = got[1]
    return tuple(folds)


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"fold_punch: level must be 1..3, got {level}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper (its shuffles stay: cheaper still)
    n_holes = d.integers(1, 4)                  # Q1 target, uniform
    slot = d.integers(4)                        # Q4 target, uniform
    # Q2 preference: 2, 3, 4 or "5 or more" layers under hole 1, met where the folds allow (L1's half folds fix it)
    want_layers = d.pick(WANT_LAYERS[level])
    nf = N_FOLDS[level][d.integers(len(N_FOLDS[level]))]
    fallback = None
    for _ in range(10):
        folds = _draw_folds(d, level, nf)
        if folds is None:
            continue
        x0, y0, x1, y1 = extent(stages(folds)[-1])
        cells = np.array([(i + 0.5, j + 0.5) for j in range(int(y0), math.ceil(y1))
                          for i in range(int(x0), math.ceil(x1))])
        ok = clearances(folds, cells) >= CLEAR[level]
        valid = [tuple(p) for p in cells[ok].tolist()]
        under = flap_layers(folds, cells[ok]) > 0 if ok.any() else np.zeros(0, bool)
        flap = {p for p, u in zip(valid, under) if u}
        starts = [p for p in valid if p in flap and any((p[0] + dx, p[1] + dy) in flap for dx, dy in MOVES)]
        if not starts:
            continue
        depth = membership(folds, nf, starts).sum(axis=1)
        best = [p for p, n in zip(starts, depth) if min(int(n), 5) == want_layers]
        if best or level == 1:
            starts = best or starts
            break
        fallback = fallback or (folds, valid, flap, starts)
    else:
        if fallback is None:
            raise Reject("no_spot_under_flap")
        folds, valid, flap, starts = fallback
    p1 = starts[d.integers(len(starts))]
    moves = [MOVES[i] for i in rng.permutation(len(MOVES)) if (p1[0] + MOVES[i][0], p1[1] + MOVES[i][1]) in flap]
    others = [p for p in valid if p != p1]
    for mv in moves:
        moved = (p1[0] + mv[0], p1[1] + mv[1])
        pool = [p for p in others if p != moved]
        if len(pool) < n_holes - 1:
            continue
        rest = [pool[i] for i in sorted(d.subset(len(pool), n_holes - 1))]
        holes = (p1, *rest)
        truth = pattern_of(folds, holes)
        no_last = pattern_of(folds, holes, nf - 1)
        shifted = pattern_of(folds, (moved, *rest))
        if level < 3:
            third = _mirror(truth)
        else:
            third = tuple(c for c in truth if c != no_last[d.integers(len(no_last))])
        cands = [truth, no_last, shifted, third]
        if len(set(cands)) < 4:
            continue
        order = [1, 2, 3]
        rng.shuffle(order)
        order.insert(slot, 0)
        s = Scene(level, folds, holes, (nf,) * n_holes, mv, d.integers(1, nf + 1),
                  tuple(cands[i] for i in order))
        if hole_label_spot(s) is None:
            raise Reject("label_clash")
        return s
    raise Reject("no_distinct_drawings")


# --- answers -----------------------------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def pattern(scene: Scene) -> tuple[Cell, ...]:
    """The unfolded sheet: each hole j makes one hole per layer at its spot after `punched_after[j]` folds."""
    cells = [c for p, k in zip(scene.holes, scene.punched_after) for c in unfolded(scene.folds, k, p)]
    if len(set(cells)) != len(cells):
        raise ValueError("fold_punch: two punches reach one cell of the sheet (distinct spots must not)")
    return tuple(sorted(cells))


def holes_punched(scene: Scene) -> Count:
    return Count(len(scene.holes), low=1, high=3)


def layers_at_hole_1(scene: Scene) -> Count:
    return Count(len(layers_at(scene.folds, len(scene.folds), scene.holes[0])), low=1, high=2 ** len(scene.folds))


def unfolded_holes(scene: Scene) -> Count:
    return Count(len(pattern(scene)), low=1, high=3 * 2 ** len(scene.folds))


def true_drawing(scene: Scene) -> Choice:
    truth = pattern(scene)
    hits = [i for i, c in enumerate(scene.candidates) if c == truth]
    if len(hits) != 1:
        raise Reject("no_single_true_drawing")
    return Choice(OPTIONS[hits[0]], OPTIONS)


def hamming_margin(scene: Scene) -> float:
    """Fewest holes by which a wrong drawing differs from the truth (0 if a wrong drawing equals it)."""
    truth = set(pattern(scene))
    return float(min((len(truth ^ set(c)) for c in scene.candidates if set(c) != truth), default=0))


def edit(scene: Scene) -> Scene:
    """Hole 1 punched at the same spot before fold `early_fold`, i.e. after the folds before it."""
    return replace(scene, punched_after=(scene.early_fold - 1, *scene.punched_after[1:]))


counterfactual = unfolded_holes


def first_hole(scene: Scene) -> Record:
    """The unfolded sheet's first hole in reading order (row by row from the top, each left to right), 1-based."""
    c, r = min(pattern(scene), key=lambda cell: (cell[1], cell[0]))
    return Record((("row", Count(r + 1, low=1, high=SIZE)), ("col", Count(c + 1, low=1, high=SIZE))))



# --- ladder ------------------------------------------------------------------------------------------------------

def _fold_words(k: int) -> str:
    return "before any fold was made" if k == 1 else f"before fold {k} was made (after fold{'s 1-' if k > 2 else ' '}{k - 1})"


@lru_cache(maxsize=64)                      # the builder asks again for `rephrase_q4`, and so does a twin's row
def ladder(scene: Scene) -> Ladder:
    lv = scene.level
    clear = Margin(float(clearances(scene.folds, scene.holes).min()), "units", CLEAR[lv],
                   "a hole image near a fold line or a layer edge")
    q3, q5 = unfolded_holes(scene), counterfactual(edit(scene))
    k = scene.early_fold
    rungs = (
        Question(1, "holes_punched", "How many holes are punched in the folded paper?", holes_punched(scene), clear),
        Question(2, "layers_at_hole_1", "How many layers of paper does the hole marked 1 go through?",
                 layers_at_hole_1(scene), clear),
        Question(3, "unfolded_holes", "How many holes will there be when the paper is fully unfolded?", q3, clear),
        Question(4, "unfolded_drawing", "Which drawing (1-4) shows the paper when it is fully unfolded?",
                 true_drawing(scene), Margin(hamming_margin(scene), "holes", 1.0,
                                             "a wrong drawing with the true hole pattern")),
        Question(5, "holes_if_punched_early", f"Suppose hole 1 had instead been punched at the same spot "
                 f"{_fold_words(k)}, the remaining folds then made as shown and the other holes punched as shown. "
                 "How many holes would the fully unfolded paper have in total?", q5,
                 Margin(float(q3.value - q5.value), "holes", 1.0, "punching hole 1 earlier changes nothing"),
                 edit=f"hole 1 punched before fold {k}"),
    )
    open_q = Question(6, "first_hole_cell", "Read the unfolded sheet row by row from the top, each row from left "
                      "to right. In which cell (row and column, counted from 1 at the top-left) is the first hole? "
                      "Explain how the folds put a hole there.", first_hole(scene), clear)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """The sheet's second wording: X folded up by the same steps must put a hole through every layer at each punched
    spot and nowhere else, i.e. X = the preimage of the punched spots = the unfolded sheet (identity)."""
    lad = ladder(scene)
    return Question(4, "refolds_to_punches", "Which drawing (1-4), folded back up by the same steps, would have a "
                    "hole through every layer of paper at each punched spot and no hole anywhere else?",
                    lad.rungs[3].answer, lad.rungs[3].margin)


def minimal_pair(scene: Scene) -> Scene:
    """Hole 1 moved one cell (the stored step) in the folded paper: the "moved" drawing becomes the truth. The step
    back is stored, so the pair of the pair is the scene itself."""
    (x, y), (dx, dy) = scene.holes[0], scene.move
    twin = replace(scene, holes=((x + dx, y + dy), *scene.holes[1:]), move=(-dx, -dy))
    if hole_label_spot(twin) is None:        # its label would not fit: no drawable twin
        raise Reject("no_minimal_pair")
    return twin


# --- drawing -----------------------------------------------------------------------------------------------------

def _top_origins(n: int) -> list[tuple[float, float]]:
    w, gap = SIZE * TOP_UNIT, 20.0
    x0 = 384.0 - (n * w + (n - 1) * gap) / 2
    return [(x0 + i * (w + gap), 70.0) for i in range(n)]


BOT_ORIGINS = ((140.0, 300.0), (436.0, 300.0), (140.0, 532.0), (436.0, 532.0))
SHEET = ((0, 0), (SIZE, 0), (SIZE, SIZE), (0, SIZE))
TOP_GRID, BOTTOM_GRID = Style(stroke=(0.70, 0.76, 0.82), width_px=1.0), Style(stroke=(0.62, 0.70, 0.78), width_px=1.0)
FOLD_LINE = Style(stroke=BLACK, width_px=2.5, dash_px=(8.0, 5.0))
PANEL_TITLE, NOTE, NUMBER = TEXT.with_(bold=True), TEXT.with_(font_px=14.0), LABEL.with_(font_px=18.0)


def _to_px(origin, unit, pts) -> np.ndarray:
    return np.asarray(origin, float) + np.asarray(pts, float).reshape(-1, 2) * unit


def _px(origin, unit, pts) -> list[tuple[float, float]]:
    """`_to_px` in Python floats (the same two roundings per coordinate), for the cairo calls."""
    ox, oy = origin
    return [(ox + x * unit, oy + y * unit) for x, y in pts]


def _poly(canvas: Canvas, pts, stroke=None, fill=None, width_px: float = 2.0) -> None:
    """A closed polygon (px points) straight on the cairo context (nothing here places labels against registered
    strokes)."""
    ctx = canvas.ctx
    ctx.move_to(*pts[0])
    for u, v in pts[1:]:
        ctx.line_to(u, v)
    ctx.close_path()
    if fill is not None:
        ctx.set_source_rgb(*fill)
        ctx.fill_preserve() if stroke is not None else ctx.fill()
    if stroke is not None:
        ctx.set_source_rgb(*stroke)
        ctx.set_line_width(width_px)
        ctx.set_line_join(1)
        ctx.stroke()
    ctx.new_path()


def _dots(canvas: Canvas, centres_px) -> None:
    ctx = canvas.ctx
    for u, v in centres_px:
        ctx.new_sub_path()
        ctx.arc(u, v, HOLE_R, 0, 2 * math.pi)
    ctx.set_source_rgb(*BLACK)
    ctx.fill()


def _paper(canvas: Canvas, layers, rim, origin) -> None:
    """The folded paper: its layers, the grid and the outline `rim` (`region(layers)`)."""
    _poly(canvas, _px(origin, TOP_UNIT, SHEET), stroke=(0.86, 0.86, 0.86))
    for ly in layers:                     # bottom layer first: the flaps lie on top
        _poly(canvas, _px(origin, TOP_UNIT, ly.verts), stroke=GREY_DARK, fill=PAPER)
    shapes.segments(canvas, _grid_px(origin, TOP_UNIT), TOP_GRID, register=False)
    for poly in getattr(rim, "geoms", [rim]):
        _poly(canvas, _px(origin, TOP_UNIT, poly.exterior.coords[:-1]), stroke=BLACK, width_px=3.0)


@lru_cache(maxsize=16)
def _grid_px(origin, unit: float) -> np.ndarray:
    """The sheet's inner grid lines, px (segments, 2, 2): the same few panels on every canvas."""
    grid = [((k, 0), (k, SIZE)) for k in range(1, SIZE)] + [((0, k), (SIZE, k)) for k in range(1, SIZE)]
    return _to_px(origin, unit, np.array(grid).reshape(-1, 2)).reshape(-1, 2, 2)


def _fold_marks(canvas: Canvas, rim, fold, origin) -> None:
    a, b, c = fold_line(fold)
    x0, y0, x1, y1 = rim.bounds
    ends = clip_convex([(x0 - .4, y0 - .4), (x1 + .4, y0 - .4), (x1 + .4, y1 + .4), (x0 - .4, y1 + .4)], a, b, c, 1)
    on = [p for p in ends if abs(a * p[0] + b * p[1] - c) < 1e-9]
    shapes.line(canvas, *_to_px(origin, TOP_UNIT, on[:2]), FOLD_LINE)
    flap = rim.intersection(Polygon(clip_convex([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], a, b, c,
                                                           fold[2])))
    pa = np.array(flap.representative_point().coords[0])
    pb = apply_affine(reflection_matrix(a, b, c), pa)[0]
    t = np.array([-b, a], float) / math.hypot(a, b)
    ctrl = (pa + pb) / 2 + t * 0.35 * float(np.linalg.norm(pb - pa))
    s = np.linspace(0.0, 1.0, 24)[:, None]
    curve = (1 - s) ** 2 * pa + 2 * s * (1 - s) * ctrl + s ** 2 * pb
    px = _to_px(origin, TOP_UNIT, curve)
    shapes.polyline(canvas, px[:-3], ARROW)
    shapes.arrowhead(canvas, px[-1], px[-1] - px[-4], ARROW, size_px=12.0)


LABEL_SPOTS = tuple((r, dx, dy) for r in (17.0, 26.0) for dx, dy in DIRECTIONS)   # tried in this order


@lru_cache(maxsize=64)                      # asked by the sampler, then by `draw`
def hole_label_spot(scene: Scene) -> tuple[float, float] | None:
    """Where "1" goes beside hole 1, px from the punched panel's corner: the first of 8 directions x 2 radii whose
    box (`LABEL_BOX_PX`) keeps `LABEL_CLEAR_PX` from every layer edge of the punched paper and 2 px from the other
    holes; None when no spot does (the sampler rejects the scene, `label_clash`, before anything is drawn). All
    16 boxes are measured in one vectorised GEOS call each (the same distances as one box at a time)."""
    edges = np.array(_edges(scene.folds)[-1], float) * TOP_UNIT
    hx, hy = scene.holes[0][0] * TOP_UNIT, scene.holes[0][1] * TOP_UNIT
    lines = shapely.multilinestrings(shapely.linestrings(edges.reshape(-1, 2, 2)))
    w, h = LABEL_BOX_PX
    spots = [(hx + r * dx, hy + r * dy) for r, dx, dy in LABEL_SPOTS]
    c = np.array([(u - w / 2, v - h / 2, u + w / 2, v + h / 2) for u, v in spots])
    boxes = shapely.box(c[:, 0], c[:, 1], c[:, 2], c[:, 3])
    ok = shapely.distance(boxes, lines) >= LABEL_CLEAR_PX
    if len(scene.holes) > 1:
        dots = shapely.buffer(shapely.points(np.array(scene.holes[1:]) * TOP_UNIT), HOLE_R)
        ok &= (shapely.distance(boxes[:, None], dots[None, :]) >= 2.0).all(axis=1)
    first = np.flatnonzero(ok)
    return spots[first[0]] if len(first) else None


def _caption(canvas: Canvas, text: str, center, style: Style = TEXT) -> None:
    draw_text_px(canvas, text, center, style)


def draw(scene: Scene, canvas: Canvas) -> None:
    st, nf = stages(scene.folds), len(scene.folds)
    origins = _top_origins(nf + 1)
    w = SIZE * TOP_UNIT
    for k in range(nf):
        _caption(canvas, f"Fold {k + 1}", (origins[k][0] + w / 2, origins[k][1] - 18), PANEL_TITLE)
        rim = outline(scene.folds[:k])
        _paper(canvas, st[k], rim, origins[k])
        _fold_marks(canvas, rim, scene.folds[k], origins[k])
    o = origins[nf]
    _caption(canvas, "Punched", (o[0] + w / 2, o[1] - 18), PANEL_TITLE)
    _paper(canvas, st[nf], outline(scene.folds), o)
    _dots(canvas, _px(o, TOP_UNIT, scene.holes))
    spot = hole_label_spot(scene)
    if spot is None:
        raise Reject("label_clash")
    draw_text_px(canvas, "1", (o[0] + spot[0], o[1] + spot[1]), NUMBER)
    _caption(canvas, "Dashed line: the fold. The arrow shows the part that folds over; the rest stays in place.",
             (384.0, 262.0), NOTE)
    wb = SIZE * BOT_UNIT
    for i, (cells, ob) in enumerate(zip(scene.candidates, BOT_ORIGINS)):
        _caption(canvas, f"Drawing {i + 1}", (ob[0] + wb / 2, ob[1] - 16), NUMBER)
        frame = _px(ob, BOT_UNIT, SHEET)
        _poly(canvas, frame, fill=PAPER)
        shapes.segments(canvas, _grid_px(ob, BOT_UNIT), BOTTOM_GRID, register=False)
        _poly(canvas, frame, stroke=BLACK, width_px=3.0)
        _dots(canvas, _px(ob, BOT_UNIT, [(c + 0.5, r + 0.5) for c, r in cells]))


DOMAIN = Domain(
    id="fold_punch", family="transformational", title="Fold and punch",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="A square sheet folded one to three times and punched: holes punched, layers under hole 1, holes "
                "after unfolding, which of four drawings is the unfolded sheet, and the total if hole 1 had been "
                "punched before an earlier fold.",
    balance_keys=("holes_punched", "layers_at_hole_1", "unfolded_drawing"),
)
