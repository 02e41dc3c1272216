"""Rotation matching: a reference polyomino (6-9 unit squares, no holes, no symmetry) on the left and four numbered
candidates in a 2x2 grid on the right. Candidate i is the reference, left-right flipped or not (F^m, m in {0, 1}),
then turned clockwise by theta_i about its area centroid: rot_cw(theta_i)(F^m(R)). At level 3 one candidate is a
different shape R' (one cell of R moved to another edge-adjacent place), also turned. The ladder walks cell count ->
candidate 1's class -> candidate k's angle -> every rotated copy -> the angle once the reference is flipped; the open
question asks the turn from candidate a to candidate b of one class.

Chirality is the whole point: a mirrored glyph is a distractor. A polyomino can only be congruent to another
axis-aligned one by a multiple of 90 degrees, so F(R) is never a turn of R whenever R is chiral; the margin is the
number of cells that would have to move to turn R's mirror into a turn of R (`chirality_cells`).
Ambiguity boundaries: chirality >= 2 cells at L1-L2 (>= 1 at L3); R' one cell from every image of R; named angles
(theta_k, theta_j) >= 20 deg from 0; angles of one class >= 20 deg apart, so the open answer is >= 20 deg from 0.
Angles lie on a 90 (L1), 45 (L2) or 15 (L3) degree grid and are asked with +-8 deg: the cell edges show the turn
exactly, and at 32 px cells a 15 degree step moves a shape's far corner by more than 25 px.

Deviations from the sheet: k and j are never candidate 1, so Q3's and Q5's wording ("candidate k is a rotated copy",
"flipped ... to match candidate j") cannot give Q2's answer away; the balancer then draws the number of rotations r
uniformly and candidate 1's class given r so that both marginals stay uniform. The Q4 rephrase keeps Q4's answer
(identity): the sheet's "which are mirror images" (the complement of a list) has no rephrase map the contract checks.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from grip.answers import Choice, Count, Number, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.geometry import (apply_affine, cell_images, cells_apply, cells_polygon, normalise_lattice,
                           reflection_matrix, rotation_matrix)
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY, GREY_DARK, LABEL, PASTELS, Style
from grip.renderers.text import draw_text_px

ROT, MIR, DIFF = "rotation", "mirror image", "different shape"
CELLS = {1: (6, 7), 2: (7, 8), 3: (8, 9)}
STEP_DEG = {1: 90, 2: 45, 3: 15}
CHIRALITY_MIN = {1: 2, 2: 2, 3: 1}          # cells
ANGLE_GAP_DEG = 20.0
TOL_DEG = 8.0
CELL_PX, PANEL_PX, GUTTER_PX, STRIP_PX = 32.0, 228.0, 12.0, 26.0
FIT_PAD_PX = 16.0                           # 2 * rho * CELL_PX + FIT_PAD_PX <= PANEL_PX
X0 = (768 - (3 * PANEL_PX + 2 * GUTTER_PX)) / 2
Y0 = (768 - 2 * (PANEL_PX + STRIP_PX) - GUTTER_PX) / 2
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))
CAND = ("1", "2", "3", "4")


@dataclass(frozen=True)
class Scene:
    level: int                               # 1..3
    cells: tuple[tuple[int, int], ...]       # the base shape R, unit cells (x, y), y down, normalised
    other: tuple[tuple[int, int], ...]       # R' at level 3 (one cell of R moved), else ()
    thetas: tuple[int, ...]                  # clockwise turn of candidates 1..4, degrees, on the level's grid
    flips: tuple[int, ...]                   # m_i in {0, 1}: candidate i is rot(theta_i)(F^m_i(shape))
    different: int                           # 1-based candidate drawn from R' (0: none)
    ref_flip: int                            # the reference is F^ref_flip(R): 0 as drawn, 1 after the Q5 edit
    k: int                                   # Q3's rotation candidate (not 1)
    j: int                                   # Q5's mirror candidate (not 1)
    a: int                                   # open pair, same class
    b: int


# --- shapes (pure) -----------------------------------------------------------------------------------------------

def distance_cells(a, b) -> int:
    """Fewest cells of a to move to get b (same size): |a| - max over translations of the overlap, which is the
    largest number of pairs (p, q) with one difference p - q (`max_translation_overlap`). A point (x, y) is keyed
    as 64 x + y, so that key differences name point differences (shapes span fewer than 32 cells)."""
    kb = [x * 64 + y for x, y in set(map(tuple, b))]
    diffs = Counter([x * 64 + y - q for x, y in set(map(tuple, a)) for q in kb])
    return len(a) - max(diffs.values(), default=0)


@lru_cache(maxsize=4096)
def _images(cells) -> dict[str, tuple[tuple[int, int], ...]]:
    """`cell_images` of a shape, once: the sampler's checks and the ladder all ask (read only)."""
    return cell_images(cells)


@lru_cache(maxsize=4096)
def chirality_cells(cells) -> int:
    """min over the four turns rho of d(R, rho(F(R))): the mirror images of a square are the four reflections."""
    images = _images(cells)
    return min(distance_cells(cells, images[op]) for op in ("flip_x", "flip_y", "diag", "anti"))


def is_asymmetric(cells) -> bool:
    return len(set(_images(cells).values())) == 8


def has_no_holes(cells) -> bool:
    """Every empty cell of the bounding box (grown by one) reaches the outside through edge-adjacent empty cells; an
    empty cell closed off by cells that only touch at a corner counts as a hole too."""
    have = set(cells)
    x1, y1 = max(x for x, _ in cells) + 1, max(y for _, y in cells) + 1
    start = (-1, -1)                              # a flood fill of the empty cells from a corner
    seen, todo = (set(), []) if start in have else ({start}, [start])
    while todo:
        x, y = todo.pop()
        for p in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if -1 <= p[0] <= x1 and -1 <= p[1] <= y1 and p not in seen and p not in have:
                seen.add(p)
                todo.append(p)
    return len(seen) + len(have) == (x1 + 2) * (y1 + 2)


def centroid(cells) -> tuple[float, float]:
    return (sum(x for x, _ in cells) / len(cells) + 0.5, sum(y for _, y in cells) / len(cells) + 0.5)


def reach_cells(cells) -> float:
    """Largest distance (cells) from the area centroid to a cell corner: the radius every turn stays within."""
    cx, cy = centroid(cells)
    return max(math.hypot(x + u - cx, y + v - cy) for x, y in cells for u in (0, 1) for v in (0, 1))


def fit_px(cells) -> float:
    """Panel clearance: PANEL_PX - (2 rho CELL_PX + FIT_PAD_PX), >= 0 when the shape fits at every angle."""
    return PANEL_PX - (2 * reach_cells(cells) * CELL_PX + FIT_PAD_PX)


def placement(cells, flip: int, theta: float, center) -> np.ndarray:
    """Affine matrix from cell coordinates to page px: flip about the vertical line through the centroid, turn
    clockwise by theta about it, centroid at `center`, CELL_PX per cell."""
    cx, cy = centroid(cells)
    m = np.array([[CELL_PX, 0, center[0] - CELL_PX * cx], [0, CELL_PX, center[1] - CELL_PX * cy], [0, 0, 1.0]])
    if flip:
        m = reflection_matrix(1.0, 0.0, center[0]) @ m
    return rotation_matrix(theta, center) @ m


def candidate_class(scene: Scene, i: int) -> str:
    if i == scene.different:
        return DIFF
    return ROT if scene.flips[i - 1] == scene.ref_flip else MIR


def members(scene: Scene, cls: str) -> list[int]:
    return [i for i in range(1, 5) if candidate_class(scene, i) == cls]


def _circ(a: float, b: float) -> float:
    d = abs(a - b) % 360
    return min(d, 360 - d)


def class_gap_deg(scene: Scene) -> float:
    """Smallest circular gap between the angles of two candidates of one class (360 when no class has two)."""
    gaps = [_circ(scene.thetas[p - 1], scene.thetas[q - 1]) for cls in (ROT, MIR, DIFF)
            for p in members(scene, cls) for q in members(scene, cls) if p < q]
    return min(gaps, default=360.0)


# --- sampling ----------------------------------------------------------------------------------------------------

def _grow(rng: np.random.Generator, n: int) -> tuple[tuple[int, int], ...]:
    cells = [(0, 0)]
    while len(cells) < n:
        have = set(cells)
        frontier = sorted({(x + dx, y + dy) for x, y in cells for dx, dy in NEIGHBOURS} - have)
        cells.append(frontier[int(rng.integers(len(frontier)))])
    return normalise_lattice(cells)


def _shape(rng: np.random.Generator, level: int):
    # The cell count is drawn first: 7 and 8 occur at two levels each, so the outer counts get 60% of their level
    # (default mix: 6 and 9 at 20%, 7 and 8 at 30%).
    lo, hi = CELLS[level]
    n = {1: lo if rng.random() < 0.6 else hi, 2: lo if rng.random() < 0.5 else hi,
         3: hi if rng.random() < 0.6 else lo}[level]
    for _ in range(100):
        cells = _grow(rng, n)
        if (fit_px(cells) >= 0 and is_asymmetric(cells) and has_no_holes(cells)
                and chirality_cells(cells) >= CHIRALITY_MIN[level]):
            return cells
    raise Reject("no_shape")


def _moved(rng: np.random.Generator, cells):
    """R': one cell of R moved to another free edge-adjacent place; connected, no holes, not an image of R. The
    (cell, place) pairs are tried in a random order and the first that works is kept."""
    images = set(_images(cells).values())
    free = sorted({(x + dx, y + dy) for x, y in cells for dx, dy in NEIGHBOURS} - set(cells))
    pairs = [(c, p) for c in cells for p in free]
    for n in rng.permutation(len(pairs)):
        c, p = pairs[int(n)]
        rest = [x for x in cells if x != c]
        if not any((p[0] + dx, p[1] + dy) in rest for dx, dy in NEIGHBOURS) or not _connected(rest):
            continue
        new = normalise_lattice(rest + [p])
        if fit_px(new) >= 0 and new not in images and has_no_holes(new):
            return new
    raise Reject("no_different_shape")


def _connected(cells) -> bool:
    cells = set(cells)
    seen, todo = set(), [min(cells)]
    while todo:
        x, y = todo.pop()
        if (x, y) in seen:
            continue
        seen.add((x, y))
        todo += [(x + dx, y + dy) for dx, dy in NEIGHBOURS if (x + dx, y + dy) in cells]
    return seen == cells


def _classes(rng: np.random.Generator, level: int) -> list[str]:
    """Classes of candidates 1..4. r (the number of rotations) is uniform; candidate 1's class given r keeps Q2
    uniform while leaving a rotation and a mirror image other than candidate 1 for k and j."""
    if level < 3:
        r = int(rng.integers(1, 4))
        first = MIR if r == 1 else ROT if r == 3 else (ROT, MIR)[int(rng.integers(2))]
        pool = [ROT] * r + [MIR] * (4 - r)
    else:
        r = int(rng.integers(1, 3))
        first = (MIR if r == 1 else ROT) if rng.random() < 2 / 3 else DIFF
        pool = [ROT] * r + [MIR] * (3 - r) + [DIFF]
    pool.remove(first)
    return [first] + [pool[int(i)] for i in rng.permutation(len(pool))]


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"rotation_matching: level must be 1..3, got {level}")
    classes = _classes(rng, level)
    cells = _shape(rng, level)
    other = _moved(rng, cells) if level == 3 else ()
    idx = {c: [i + 1 for i, x in enumerate(classes) if x == c] for c in (ROT, MIR, DIFF)}
    k = int(rng.choice([i for i in idx[ROT] if i != 1]))
    j = int(rng.choice([i for i in idx[MIR] if i != 1]))
    if len(idx[ROT]) >= 2:
        a, b = k, int(rng.choice([i for i in idx[ROT] if i != k]))
    else:
        a, b = j, int(rng.choice([i for i in idx[MIR] if i != j]))
    spare = next(i for i in range(1, 5) if i not in (k, j, a, b))
    grid = np.arange(0, 360, STEP_DEG[level])
    for _ in range(80):
        thetas = tuple(int(t) for t in rng.choice(grid, size=4))
        s = Scene(level, cells, other, thetas, tuple(int(c == MIR) for c in classes),
                  classes.index(DIFF) + 1 if DIFF in classes else 0, 0, k, j, a, b)
        joins = ROT if classes[spare - 1] != ROT else MIR
        if (class_gap_deg(s) >= ANGLE_GAP_DEG and _circ(thetas[k - 1], 0) >= ANGLE_GAP_DEG
                and _circ(thetas[j - 1], 0) >= ANGLE_GAP_DEG
                and all(_circ(thetas[spare - 1], thetas[i - 1]) >= ANGLE_GAP_DEG for i in idx[joins])):
            return s
    raise Reject("no_angles")


# --- answers -----------------------------------------------------------------------------------------------------

def cell_count(scene: Scene) -> Count:
    return Count(len(scene.cells), low=1, high=12)


def class_of_first(scene: Scene) -> Choice:
    options = (ROT, MIR, DIFF) if scene.level == 3 else (ROT, MIR)
    return Choice(candidate_class(scene, 1), options, (("rotated copy", ROT), ("mirror", MIR),
                                                        ("rotated mirror image", MIR), ("different", DIFF)))


def turn_deg(scene: Scene, i: int) -> float:
    """Clockwise turn taking the reference onto candidate i (which must be one of its rotated copies)."""
    if candidate_class(scene, i) != ROT:
        raise ValueError(f"rotation_matching: candidate {i} is not a rotated copy of the reference")
    return float(scene.thetas[i - 1] % 360)


def _angle(value: float) -> Number:
    return Number(float(value % 360), TOL_DEG, "degrees", period=360.0, low=0.0)


def rotation_angle(scene: Scene) -> Number:
    return _angle(turn_deg(scene, scene.k))


def rotated_copies(scene: Scene) -> Ordered:
    return Ordered(tuple(str(i) for i in members(scene, ROT)), "ascending order", CAND, as_set=True)


def edit(scene: Scene) -> Scene:
    """Flip the reference left to right (about a vertical line)."""
    return replace(scene, ref_flip=1 - scene.ref_flip)


def counterfactual(scene: Scene) -> Number:
    """Q5 on the edited scene: the turn taking the (flipped) reference onto candidate j."""
    return _angle(turn_deg(scene, scene.j))


def pair_turn(scene: Scene) -> Number:
    return _angle(scene.thetas[scene.b - 1] - scene.thetas[scene.a - 1])


# --- ladder ------------------------------------------------------------------------------------------------------

def _chirality_margin(scene: Scene) -> Margin:
    return Margin(chirality_cells(scene.cells), "cells", CHIRALITY_MIN[scene.level],
                  "a mirror image one cell move from a turn")


def ladder(scene: Scene) -> Ladder:
    lv = scene.level
    chir = _chirality_margin(scene)
    fit = Margin(min(fit_px(scene.cells), fit_px(scene.other) if scene.other else PANEL_PX), "px", 0.0,
                 "a turned shape leaving its panel")
    if scene.different:
        diff = min(distance_cells(scene.other, im) for im in _images(scene.cells).values())
        q2 = Margin(min(diff, chir.value), "cells", 1.0, "the different shape equal to an image of the reference")
    else:
        q2 = chir
    gap = class_gap_deg(scene)
    options = "rotated copy, mirror image or different shape" if lv == 3 else "rotated copy or mirror image"
    rungs = (
        Question(1, "cell_count", "How many unit squares make up the reference shape?", cell_count(scene), fit),
        Question(2, "candidate_1_class", "Is candidate 1 a rotated copy of the reference (turned only), a rotated "
                 f"mirror image of it (flipped, then turned), or a different shape? Options: {options}.",
                 class_of_first(scene), q2),
        Question(3, "rotation_angle", f"Candidate {scene.k} is a rotated copy of the reference. By how many degrees "
                 "clockwise was the reference turned to get it (0-359)?", rotation_angle(scene),
                 Margin(_circ(scene.thetas[scene.k - 1], 0), "deg", ANGLE_GAP_DEG, "a turn of 0 degrees")),
        Question(4, "rotated_copies", "Which candidates are rotated copies of the reference, turned only and not "
                 "mirrored?", rotated_copies(scene), chir),
        Question(5, "turn_after_flip", "If the reference were first flipped left to right (about a vertical line), "
                 f"by how many degrees clockwise would it then have to be turned to match candidate {scene.j} "
                 "(0-359)?", counterfactual(edit(scene)),
                 Margin(_circ(scene.thetas[scene.j - 1], 0), "deg", ANGLE_GAP_DEG, "a turn of 0 degrees"),
                 edit="flip the reference left to right"),
    )
    open_q = Question(6, "pair_turn", f"Candidates {scene.a} and {scene.b} show the same shape in different "
                      f"orientations. By how many degrees clockwise must candidate {scene.a} be turned to match "
                      f"candidate {scene.b} (0-359)? Explain.", Record((("angle", pair_turn(scene)),)),
                      Margin(gap, "deg", ANGLE_GAP_DEG, "two candidates of one class at nearly the same angle"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4's answer and margin (`ladder`) without the rest of the ladder."""
    return Question(4, "turn_only_matches", "List every candidate that can be made to match the reference exactly by "
                    "turning it in the plane, without flipping it over.", rotated_copies(scene),
                    _chirality_margin(scene))


def minimal_pair(scene: Scene) -> Scene:
    """The candidate no question names mirrored in place (same angle), so it joins or leaves Q4; at level 3 that is
    the different shape, whose moved cell goes back (it becomes a turn of the reference)."""
    spare = next(i for i in range(1, 5) if i not in (scene.k, scene.j, scene.a, scene.b))
    if spare == scene.different:
        return replace(scene, different=0, other=(), flips=tuple(scene.ref_flip if i == spare - 1 else f
                                                                 for i, f in enumerate(scene.flips)))
    return replace(scene, flips=tuple(1 - f if i == spare - 1 else f for i, f in enumerate(scene.flips)))


# --- drawing -----------------------------------------------------------------------------------------------------

def panel_centres() -> list[tuple[float, float]]:
    """Centres of the reference panel and candidate panels 1..4 (px)."""
    ref = (X0 + PANEL_PX / 2, 384 + STRIP_PX / 2)
    out = [ref]
    for r in range(2):
        for c in range(2):
            out.append((X0 + (c + 1) * (PANEL_PX + GUTTER_PX) + PANEL_PX / 2,
                        Y0 + r * (PANEL_PX + STRIP_PX + GUTTER_PX) + STRIP_PX + PANEL_PX / 2))
    return out


@lru_cache(maxsize=64)
def _cell_geometry(cells) -> tuple[np.ndarray, np.ndarray]:
    """A shape's outline corners (k, 2) and its cell edges as end points (2 per edge), in cell coordinates: once per
    shape, as most panels of a scene show the same one."""
    outline = np.asarray(list(cells_polygon(cells).exterior.coords)[:-1], float)
    edges = [((x, y), (x + 1, y)) for x, y in cells] + [((x, y), (x, y + 1)) for x, y in cells] + \
        [((x, y + 1), (x + 1, y + 1)) for x, y in cells] + [((x + 1, y), (x + 1, y + 1)) for x, y in cells]
    edges = np.asarray(edges, float).reshape(-1, 2)
    outline.flags.writeable = edges.flags.writeable = False
    return outline, edges


def _draw_shape(canvas, cells, m: np.ndarray, fill) -> None:
    """Rotated cells drawn as polygons: the filled outline, every cell edge as a grid line, the outline on top."""
    corners, edges = _cell_geometry(cells)
    outline = apply_affine(m, corners)
    ctx = canvas.ctx
    ctx.move_to(*outline[0])
    for p in outline[1:]:
        ctx.line_to(*p)
    ctx.close_path()
    ctx.set_source_rgb(*fill)
    ctx.fill()
    segs = apply_affine(m, edges).reshape(-1, 2, 2)
    shapes.segments(canvas, segs, Style(stroke=GREY_DARK, width_px=2.0), register=False)
    shapes.polyline(canvas, np.vstack([outline, outline[:1]]), Style(stroke=BLACK, width_px=3.0))


def draw(scene: Scene, canvas) -> None:
    # The panel frames and titles are the same in every picture, and no shape comes near another panel's frame or
    # title (`fit_px`): drawn once onto a fresh canvas, their pixels are copied onto a fresh one (else drawn here).
    if not canvas.paste_layer(_frames(canvas.size_px, canvas.world)):
        _draw_frames(canvas)
    ref_cells = cells_apply("flip_x", scene.cells) if scene.ref_flip else scene.cells
    for n, (cx, cy) in enumerate(panel_centres()):
        if n == 0:
            _draw_shape(canvas, ref_cells, placement(ref_cells, 0, 0.0, (cx, cy)), PASTELS[1])
            continue
        shape = scene.other if n == scene.different else scene.cells
        _draw_shape(canvas, shape, placement(shape, scene.flips[n - 1], scene.thetas[n - 1], (cx, cy)), PASTELS[1])


@lru_cache(maxsize=4)
def _frames(size_px: int, world) -> bytes:
    """The surface bytes of a fresh canvas after drawing every panel's frame and title."""
    canvas = Canvas(size_px, world)
    _draw_frames(canvas)
    return canvas.layer_bytes()


def _draw_frames(canvas: Canvas) -> None:
    for title, (cx, cy) in zip(["Reference"] + list(CAND), panel_centres()):
        shapes.rect(canvas, cx - PANEL_PX / 2, cy - PANEL_PX / 2, cx + PANEL_PX / 2, cy + PANEL_PX / 2,
                    Style(stroke=GREY, width_px=2.0))
        draw_text_px(canvas, title, (cx, cy - PANEL_PX / 2 - STRIP_PX / 2), LABEL)


DOMAIN = Domain(
    id="rotation_matching", family="transformational", title="Rotation matching",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="A reference polyomino and four candidates, each the reference turned, a turned mirror image, or "
                "(level 3) a different shape: cell count, candidate class, turn angle, the rotated copies, and the "
                "turn needed once the reference is flipped.",
    balance_keys=("cell_count", "candidate_1_class", "rotated_copies"),
)
