"""Cube structure: stacks of unit cubes on a g x g floor grid (g = 3..5), drawn in the TRI projection with the
painter's order. Cells are named like a chessboard: letters a-e along the front edge (left to right), numbers 1-5
along the left edge (front to back); a1 is the cell at the near corner. The ladder walks tallest stack -> two named
stacks -> total -> the cubes missing from the smallest enclosing block -> a row removed; the open question counts
cubes with exactly three painted faces.

World: cell (x, y) holds H[x][y] cubes at (x, y, 0..H-1). TRI looks from +x, +y, +z, so the near corner is
(g - 1, g - 1); letter index i and number k name the cell (g - 1 - i, g - k). The prompt states that every cube
rests on the floor or on another cube, that the top of every stack can be seen and that there are no hidden gaps.
Ambiguity boundary: a stack top hidden behind nearer stacks. For every cell the top face of its stack (for an empty
cell, the top a single cube there would have) keeps >= `VISIBLE_MIN[level]` of its projected area visible, measured
by clipping it against the silhouettes of every nearer box of cubes (an occluder is >= the occluded cube in every
coordinate). Lattice injectivity comes with TRI: no integer vector of the scene's extent projects shorter than
0.3155 edge, >= 15 px at the >= 48 px edges used here (edges are fitted up to 80 px, larger than the sheet's 60, for
legibility). Q2's two stacks carry coloured outlines on their top faces (outlines on the floor would lie under the
stacks). The tallest stack is the level's height limit (2, 3, 4): with a lower top one height would pass 35% of the
level mix, and a top of 1 leaves Q2 only "same"; so a single-level build has a constant Q1.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import cairo
import numpy as np
import shapely

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import projection as pj
from grip.renderers.canvas import Canvas
from grip.renderers.style import LABEL, OKABE_ITO, TEXT
from grip.renderers.text import draw_text_px, text_box_px

GRID = {1: 3, 2: 4, 3: 5}
HMAX = {1: 2, 2: 3, 3: 4}
VISIBLE_MIN = {1: 0.30, 2: 0.30, 3: 0.20}   # fraction of a stack top's projected area left visible
TOTAL_RANGE = (6, 30)
EDGE_MIN_PX, EDGE_MAX_PX = 48.0, 80.0   # >= 48 keeps lattice images >= 15 px apart
TALLER, SHORTER, SAME = "taller", "shorter", "same"
COMPARE = (TALLER, SHORTER, SAME)
COMPARE_ALIASES = (("the same", SAME), ("same height", SAME), ("the same height", SAME), ("equal", SAME))
# Per step toward the viewer, P(height drops by 0, 1, 2): keeps the total inside TOTAL_RANGE at each grid size.
DROP = {1: (0.7, 0.25, 0.05), 2: (0.5, 0.35, 0.15), 3: (0.4, 0.35, 0.25)}
DROP_P = 0.4                                # share of items whose row removal lowers the tallest stack
LETTERS = "abcde"
BOX = (40.0, 40.0, 728.0, 700.0)            # pixel box the structure and its labels are fitted into
CAPTION = ("Every cube rests on the floor or on another cube; the top of every stack can be seen, and there are "
           "no hidden gaps.")
Q2_RGB = (OKABE_ITO["orange"], OKABE_ITO["sky"])


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3
    g: int                                       # floor grid is g x g cells, 3..5
    heights: tuple[tuple[int, ...], ...]         # heights[x][y], cubes per cell, 0..HMAX[level]
    pair: tuple[str, str]                        # the two cells Q2 compares, e.g. ("c2", "a3")
    row: int                                     # number (1..g) of the row Q5 removes


# --- cells and heights (pure) ---------------------------------------------------------------------------------------

def cell_xy(scene: Scene, name: str) -> tuple[int, int]:
    i, k = LETTERS.index(name[0]), int(name[1:])
    return scene.g - 1 - i, scene.g - k


def cell_name(g: int, x: int, y: int) -> str:
    return f"{LETTERS[g - 1 - x]}{g - y}"


def height_at(scene: Scene, name: str) -> int:
    x, y = cell_xy(scene, name)
    return scene.heights[x][y]


def cubes(scene: Scene) -> list[tuple[int, int, int]]:
    return [(x, y, z) for x in range(scene.g) for y in range(scene.g) for z in range(scene.heights[x][y])]


def footprint_box(heights) -> tuple[int, int]:
    """Sides (cells) of the smallest grid-aligned rectangle holding every non-empty cell."""
    xs = [x for x, col in enumerate(heights) for h in col if h]
    ys = [y for col in heights for y, h in enumerate(col) if h]
    return max(xs) - min(xs) + 1, max(ys) - min(ys) + 1


def without_row(scene: Scene) -> Scene:
    y = scene.g - scene.row
    return replace(scene, heights=tuple(tuple(0 if yy == y else h for yy, h in enumerate(col))
                                        for col in scene.heights))


SAMPLES = 10                                # per side: visibility is measured on a 10 x 10 grid of points
_UV = (np.arange(SAMPLES) + 0.5) / SAMPLES


@lru_cache(maxsize=4096)
def visible_fractions(heights: tuple[tuple[int, ...], ...]) -> tuple[tuple[float, ...], ...]:
    """Per cell, the visible share of its stack's top face (z = H, or z = 1 for an empty cell) in TRI: the share of
    a 10 x 10 grid of points on it whose ray toward the viewer (along w) meets no cube. The ray from p rises as it
    crosses each column (x2, y2) in front; it is blocked iff its height where it enters the column is below that
    column's height (orthographic, so the ray test is exact for each point).
    The ray runs toward +x and +y and rises from the top at z = T, so only a column with x2 >= x, y2 >= y and more
    than T cubes can block it (any other has an exit parameter < 0 or an entry height >= T); only those (cell,
    column) pairs are tested, on the cell's 10 x 10 block of points, with the per-axis entry and exit parameters
    of `_ray_tables`."""
    g = len(heights)
    x_in, x_out, y_in, y_out = _ray_tables(g)
    w2 = pj.TRI.w[2]
    out = []
    for x in range(g):
        row = []
        for y in range(g):
            top = max(heights[x][y], 1)
            hidden = None
            for x2 in range(x, g):
                col = heights[x2]
                for y2 in range(y, g):
                    if col[y2] <= top:
                        continue
                    lam_in = np.maximum(np.maximum(x_in[x2, x][:, None], y_in[y2, y][None, :]), 0.0)
                    lam_out = np.minimum(x_out[x2, x][:, None], y_out[y2, y][None, :])
                    blocked = (lam_in < lam_out) & (top + lam_in * w2 < col[y2] - 1e-9)
                    hidden = blocked if hidden is None else hidden | blocked
            row.append(1.0 if hidden is None else 1.0 - int(np.count_nonzero(hidden)) / (SAMPLES * SAMPLES))
        out.append(tuple(row))
    return tuple(out)


@lru_cache(maxsize=None)
def _ray_tables(g: int) -> tuple[np.ndarray, ...]:
    """Ray parameters where the rays from a cell's points (coordinate c + _UV along one axis) enter and leave the
    slab of column c2 along x and along y: arrays indexed [c2, c, point]."""
    w0, w1, _ = pj.TRI.w
    c2 = np.arange(g)[:, None, None]
    pc = np.arange(g)[None, :, None] + _UV[None, None, :]
    return (c2 - pc) / w0, (c2 + 1 - pc) / w0, (c2 - pc) / w1, (c2 + 1 - pc) / w1


def min_visible(scene: Scene) -> float:
    return float(min(min(r) for r in visible_fractions(scene.heights)))


def painted_faces(scene: Scene) -> list[int]:
    """Per cube: faces touching neither the floor nor another cube."""
    cs = cubes(scene)
    filled = set(cs)
    return [6 - sum((x + dx, y + dy, z + dz) in filled for dx, dy, dz in
                    ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))) - (z == 0)
            for x, y, z in cs]


# --- sampling -------------------------------------------------------------------------------------------------------

def _cdf(p) -> tuple[float, ...]:
    c = np.array(p, dtype=float).cumsum()
    c /= c[-1]
    return tuple(c.tolist())


# `rng.choice(3, p=DROP[level])` is numpy's `cdf.searchsorted(rng.random(), side="right")` over this normalised
# cumulative sum: `_drop` makes the same single draw and comparisons without choice's per-call checks (~30 us).
DROP_CDF = {lv: _cdf(p) for lv, p in DROP.items()}


def _drop(random, cdf: tuple[float, ...]) -> int:
    """`random`: `rng.random`, or `Draws(rng).random` (the same draw, cheaper)."""
    u = random()
    return sum(c <= u for c in cdf)


def _heights(rng: np.random.Generator, d: Draws, level: int, top: int) -> tuple[tuple[int, ...], ...]:
    """Heights that never grow toward the viewer (larger x or y) from `top` at the far corner, plus a few random
    bumps of one cube, all within 0..top. `d`: `rng`'s own scalar draws, cheaper."""
    g = GRID[level]
    cdf = DROP_CDF[level]
    random = d.random
    h = [[0] * g for _ in range(g)]
    for x in range(g):
        for y in range(g):
            cap = min([top] + ([h[x - 1][y]] if x else []) + ([h[x][y - 1]] if y else []))
            drop = _drop(random, cdf) if (x or y) else 0
            h[x][y] = max(0, cap - drop)
    for _ in range(d.integers(1, g + 1)):
        x, y = (int(v) for v in rng.integers(0, g, size=2))
        h[x][y] = min(max(h[x][y] + (1 if random() < 0.5 else -1), 0), top)
    return tuple(tuple(col) for col in h)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first (Q2's relation, whether removing Q5's row lowers the tallest stack); heights are redrawn
    until a scene with every margin meets them, so that the targets keep their shares."""
    if level not in (1, 2, 3):
        raise ValueError(f"cube_structure: level must be 1..3, got {level}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    want_q2 = COMPARE[d.integers(3)]
    want_drop = d.random() < DROP_P
    # The tallest stack is the level's height limit: a lower top at one level would push that height past 35% of
    # the level mix (each level then holds one third), and a top of 1 leaves Q2 nothing but "same".
    top = HMAX[level]
    g = GRID[level]
    for _ in range(40):
        heights = _heights(rng, d, level, top)
        total = sum(map(sum, heights))
        if not TOTAL_RANGE[0] <= total <= TOTAL_RANGE[1] or max(map(max, heights)) != top:
            continue
        if total == footprint_area(heights) * top and d.random() < 0.7:
            continue                      # a full block (Q4 = 0) would otherwise be common at level 1
        if min(map(min, visible_fractions(heights))) < VISIBLE_MIN[level]:
            continue
        base = Scene(level, g, heights, ("a1", "a1"), 1)
        named = [(cell_name(g, x, y), heights[x][y]) for x in range(g) for y in range(g) if heights[x][y]]
        pairs = [(a, b) for a, ha in named for b, hb in named if a != b and compare(ha, hb) == want_q2]
        # The tallest stack once row k (y = g - k) is emptied, all heights being >= 0.
        rows = [k for k in range(1, g + 1) if sum(heights[x][g - k] for x in range(g))
                and (max(h for col in heights for y, h in enumerate(col) if y != g - k) < top) == want_drop]
        if pairs and rows:
            return replace(base, pair=pairs[d.integers(len(pairs))], row=d.pick(rows))
    raise Reject("no_scene_for_targets")


# --- answers --------------------------------------------------------------------------------------------------------

def compare(a: int, b: int) -> str:
    return TALLER if a > b else SHORTER if a < b else SAME


def footprint_area(heights) -> int:
    a, b = footprint_box(heights)
    return a * b


def tallest(scene: Scene) -> Count:
    return Count(max(map(max, scene.heights)), low=0, high=HMAX[3])


def pair_relation(scene: Scene) -> Choice:
    a, b = scene.pair
    return Choice(compare(height_at(scene, a), height_at(scene, b)), COMPARE, COMPARE_ALIASES)


def total_cubes(scene: Scene) -> Count:
    return Count(sum(map(sum, scene.heights)), low=0, high=125)


def missing_from_block(scene: Scene) -> Count:
    return Count(footprint_area(scene.heights) * max(map(max, scene.heights)) - total_cubes(scene).value, low=0,
                 high=125)


def edit(scene: Scene) -> Scene:
    return without_row(scene)


def counterfactual(scene: Scene) -> Record:
    return Record((("remaining", Count(total_cubes(scene).value, low=0, high=125)),
                   ("tallest", Count(max(map(max, scene.heights)), low=0, high=HMAX[3]))))


def three_painted(scene: Scene) -> Record:
    return Record((("cubes", Count(sum(p == 3 for p in painted_faces(scene)), low=0, high=125)),))


# --- ladder ---------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=256)       # sample, rephrase_q4 and the minimal pair each ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    lv = scene.level
    vis = visible_fractions(scene.heights)
    seen = Margin(min_visible(scene), "fraction", VISIBLE_MIN[lv], "a stack top hidden behind nearer stacks")
    pair_seen = min(vis[x][y] for x, y in (cell_xy(scene, n) for n in scene.pair))
    a, b = scene.pair
    last = LETTERS[scene.g - 1]
    rungs = (
        Question(1, "tallest_stack", f"{CAPTION} How many cubes tall is the tallest stack?", tallest(scene),
                 Margin(edge_px(scene), "px", EDGE_MIN_PX, "cube edges too short to count cubes")),
        Question(2, "compare_stacks", f"{CAPTION} Is the stack on {a} taller than, shorter than, or the same height "
                 f"as the stack on {b}? (The tops of both stacks are outlined in colour.)", pair_relation(scene),
                 Margin(pair_seen, "fraction", VISIBLE_MIN[lv], "a named stack's top hidden")),
        Question(3, "total_cubes", f"{CAPTION} How many cubes are there in total?", total_cubes(scene), seen),
        Question(4, "missing_from_block", f"{CAPTION} How many more cubes are needed to fill the smallest "
                 "rectangular block, aligned with the floor grid, that contains the whole structure?",
                 missing_from_block(scene), seen),
        Question(5, "row_removed", f"{CAPTION} If every cube standing on row {scene.row} (cells a{scene.row} to "
                 f"{last}{scene.row}) were removed, how many cubes would remain, and how many cubes tall would the "
                 "tallest remaining stack be?", counterfactual(edit(scene)), seen,
                 edit=f"remove every cube on row {scene.row}"),
    )
    open_q = Question(6, "three_painted_faces", f"{CAPTION} If every cube face touching neither the floor nor "
                      "another cube were painted, how many cubes would have exactly 3 painted faces? Explain.",
                      three_painted(scene), seen)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    q = ladder(scene).rungs[3]
    return Question(4, "empty_cells_in_block", f"{CAPTION} Take the smallest rectangular block, aligned with the "
                    "floor grid, that contains the whole structure. How many empty unit cells does that block "
                    "contain?", q.answer, q.margin)


def _valid(scene: Scene) -> bool:
    return (min_visible(scene) >= VISIBLE_MIN[scene.level]
            and TOTAL_RANGE[0] <= total_cubes(scene).value <= TOTAL_RANGE[1]
            and all(height_at(scene, n) > 0 for n in scene.pair)
            and sum(scene.heights[x][scene.g - scene.row] for x in range(scene.g)) > 0)


def minimal_pair(scene: Scene) -> Scene:
    """One cube added to or taken off the top of one stack, every margin holding and the tallest stack unchanged:
    first the edits that move Q4 by exactly 1 (a cube added inside the footprint below the top height, or the top
    taken off a stack of >= 2 that is not the only tallest), then any other that changes Q4; cells in order."""
    top = tallest(scene).value
    q4 = missing_from_block(scene).value
    x0 = [x for x, col in enumerate(scene.heights) if any(col)]
    y0 = [y for col in scene.heights for y, h in enumerate(col) if h]
    inside = [(x, y) for x in range(min(x0), max(x0) + 1) for y in range(min(y0), max(y0) + 1)]
    n_top = sum(h == top for col in scene.heights for h in col)
    edits = [((x, y), +1) for x, y in inside if scene.heights[x][y] < top]
    edits += [((x, y), -1) for x, y in inside if scene.heights[x][y] >= 2 and
              not (scene.heights[x][y] == top and n_top == 1)]
    edits += [((x, y), d) for x in range(scene.g) for y in range(scene.g) for d in (1, -1)
              if ((x, y), d) not in edits]
    for (x, y), d in edits:
        h = scene.heights[x][y] + d
        if not 0 <= h <= HMAX[scene.level]:
            continue
        heights = tuple(tuple(h if (xx, yy) == (x, y) else v for yy, v in enumerate(col))
                        for xx, col in enumerate(scene.heights))
        twin = replace(scene, heights=heights)
        if (_valid(twin) and tallest(twin).value == top and missing_from_block(twin).value != q4
                and not ladder(twin).failing_margins()):
            return twin
    raise Reject("no_minimal_pair")


# --- drawing --------------------------------------------------------------------------------------------------------

def fit(scene: Scene) -> tuple[float, tuple[float, float]]:
    return _fit(scene.g, max(HMAX[scene.level], 1))


@lru_cache(maxsize=None)
def _fit(g: int, top: int) -> tuple[float, tuple[float, float]]:
    pts = [(x, y, z) for x in (0, g + 0.8) for y in (0, g + 0.8) for z in (0, top)]
    return pj.fit(pj.TRI, pts, BOX, s_max=EDGE_MAX_PX)


def edge_px(scene: Scene) -> float:
    return fit(scene)[0]


def _poly(ctx, pts) -> None:
    ctx.move_to(*pts[0])
    for u, v in pts[1:]:
        ctx.line_to(u, v)
    ctx.close_path()


def label_anchors(scene: Scene) -> list[tuple[str, tuple[float, float, float]]]:
    """Grid labels at floor level just outside the grid: letters beyond the front edge (y = g), numbers beyond the
    left edge (x = g)."""
    return _anchors(scene.g)


def _anchors(g: int) -> list[tuple[str, tuple[float, float, float]]]:
    return ([(LETTERS[g - 1 - x], (x + 0.5, g + 0.45, 0.0)) for x in range(g)]
            + [(str(g - y), (g + 0.45, y + 0.5, 0.0)) for y in range(g)])


def _mark(ctx, pts, rgb) -> None:
    """A thick coloured outline inset in a face (Q2's named stacks)."""
    c = pts.mean(axis=0)
    _poly(ctx, c + 0.72 * (pts - c))
    ctx.set_source_rgb(*rgb)
    ctx.set_line_width(5.0)
    ctx.stroke()


LABEL_STYLE = LABEL.with_(font_px=22.0)
NOTE_STYLE = TEXT.with_(font_px=15.0)


@lru_cache(maxsize=16)
def _floor_layer(size_px: int, world, g: int, level: int) -> bytes:
    """The surface bytes of a fresh canvas after `_draw_floor`."""
    canvas = Canvas(size_px, world)
    _draw_floor(canvas, g, *_fit(g, max(HMAX[level], 1)))
    return canvas.layer_bytes()


def _draw_floor(canvas: Canvas, g: int, s: float, origin) -> None:
    ctx = canvas.ctx
    ctx.set_line_width(1.5)
    # Quads are projected as one (n, 4, 3) stack: numpy's matmul runs the same 4 x 3 product per quad as one
    # project() call per quad, so the pixels are bit-identical; tolist() hands cairo plain floats.
    floor = pj.TRI.project([((x, y, 0), (x + 1, y, 0), (x + 1, y + 1, 0), (x, y + 1, 0))
                            for x in range(g) for y in range(g)], s, origin)
    for pts in floor.tolist():
        _poly(ctx, pts)
        ctx.set_source_rgb(0.95, 0.95, 0.95)
        ctx.fill_preserve()
        ctx.set_source_rgb(0.55, 0.55, 0.55)
        ctx.stroke()


@lru_cache(maxsize=16)
def _labels(g: int, level: int, size_px: int):
    """The grid labels of `label_anchors` for a grid and level (the fit depends on nothing else): texts, pixel
    centres, their boxes (a shapely array) and whether every box lies in the safe area of a `size_px` canvas."""
    s, origin = _fit(g, max(HMAX[level], 1))
    canvas = Canvas(size_px)
    texts, centres, boxes = [], [], []
    for text, p in _anchors(g):
        c = pj.TRI.project(p, s, origin)
        texts.append(text)
        centres.append(c)
        boxes.append(text_box_px(canvas, text, c, LABEL_STYLE))
    inside = all(canvas.inside_safe(np.array(b.exterior.coords)) for b in boxes)
    return tuple(texts), tuple(centres), np.array(boxes, dtype=object), inside


def draw(scene: Scene, canvas: Canvas) -> None:
    ctx = canvas.ctx
    s, origin = fit(scene)
    if s < EDGE_MIN_PX:
        raise Reject("cubes_too_small")
    g = scene.g
    # The floor grid depends on the grid and the level only: drawn once onto a fresh canvas, its pixels are copied
    # onto a fresh one (else drawn here). The cubes set every cairo state they use.
    if not canvas.paste_layer(_floor_layer(canvas.size_px, canvas.world, g, scene.level)):
        _draw_floor(canvas, g, s, origin)
    # Cubes in painter's order (pj.cube_faces), shaded as pj.draw_cubes does; each Q2 stack's top face gets its
    # coloured inset outline right after it is drawn, so nearer cubes still cover it where they should.
    marks = {(x, y, max(scene.heights[x][y], 1) - 1): rgb for (x, y), rgb in
             zip((cell_xy(scene, n) for n in scene.pair), Q2_RGB)}
    faces = pj.cube_faces(cubes(scene), pj.TRI)
    quads = pj.TRI.project([f.corners for f in faces], s, origin)
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.set_line_width(pj.EDGE_PX)
    for i, (f, pts) in enumerate(zip(faces, quads.tolist())):
        _poly(ctx, pts)
        grey = pj.SHADE[f.axis]
        ctx.set_source_rgb(grey, grey, grey)
        ctx.fill_preserve()
        ctx.set_source_rgb(0, 0, 0)
        ctx.stroke()
        if f.axis == "+z" and f.cube in marks:
            _mark(ctx, quads[i], marks[f.cube])
            ctx.set_line_width(pj.EDGE_PX)
    # Labels lie beyond the front and left edges; only cubes on the front row or left file come near them. All are
    # checked before any is drawn: a clash rejects the whole canvas either way.
    texts, centres, boxes, inside = _labels(g, scene.level, canvas.size_px)
    drawn = shapely.polygons(quads[[i for i, f in enumerate(faces) if g - 1 in f.cube[:2]]])
    if not inside or shapely.intersects(boxes[:, None], drawn[None, :]).any():
        raise Reject("label_clash")
    for text, c in zip(texts, centres):
        draw_text_px(canvas, text, c, LABEL_STYLE)
    draw_text_px(canvas, "letters run along the front edge, numbers along the left edge; a1 is the near corner",
                 (384.0, 730.0), NOTE_STYLE)


DOMAIN = Domain(
    id="cube_structure", family="solid", title="Cube structure",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="Stacks of unit cubes on a lettered floor grid in a trimetric view: tallest stack, two named stacks "
                "compared, total, cubes missing from the enclosing block, and a row removed.",
    balance_keys=("compare_stacks", "missing_from_block", "row_removed"),
)
