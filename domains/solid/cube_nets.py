"""Cube nets: a hexomino net of six lettered squares on the left, four candidate cubes drawn in true isometric (ISO)
on the right. The glyphs F G J L P R have no rotational or mirror symmetry, so every glyph's turn is readable. The
net folds away from the reader (printed sides outside). The ladder walks P's net neighbours -> the face opposite P ->
the three faces at the corner marked by a red dot -> which cube the net folds into -> where the top of a re-hinged
square's letter points, and the open question asks why one impossible cube is impossible.

Bookkeeping (`_cubenet`): folding = rolling a cube under the page from square to square; every square gets an
integer body frame (outward normal, glyph-up). A view of the folded cube under one of the 24 rotations lists
(letter, turn) on top, left-front (+x) and right-front (+y); a glyph's turn on a face is clockwise seen from outside,
from world up on a side face and from -x (drawn toward the upper right) on the top face.
Distractors, one of each: (a) two faces that are opposite in the fold shown together (at level 1 with a turned
glyph as well); (b) a true arrangement with one glyph (level 1: two) turned; (c) the mirror arrangement: the true
view of the net with two net-adjacent visible squares' glyphs exchanged, which is the correct cube of the minimal
pair. Ambiguity boundary: a candidate's distance to the nearest true view = the number of its three faces whose
letter or turn differs; every distractor stays >= 1 face (level 1: 2) from every true view of the net and of the
minimal-pair net, and the correct cube is unique for both.
Legibility: net squares >= 72 px with glyphs 60% of the square; candidate faces 76 px (the ISO map shrinks a
glyph's strokes by at most 0.71, which keeps DejaVu Sans Bold stems above 4 px). Faces are shaded lighter than
pj.draw_cubes' greys (0.97 / 0.86 / 0.76) so that black glyphs keep their contrast. Each letter is sized by its own
ink box (DejaVu's J descends). Q5's square Y has a blue border and its new place a dashed blue outline, rather than
the sheet's arrow: a move that breaks the cube always takes Y across the net (turning a flap about a corner keeps
it on its face), so an arrow from Y to the ghost would run over other squares' glyphs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import cairo
import numpy as np

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.solid import _cubenet as cn
from grip.renderers import projection as pj
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, LABEL, OKABE_ITO, WHITE, Style
from grip.renderers.text import FONT_FAMILY, check_font, draw_text_px

OPPOSITE, MIRROR, TURNED = "opposite faces adjacent", "mirror arrangement", "glyph turned"
REASONS = (OPPOSITE, MIRROR, TURNED)
NO_CUBE = "no cube"
NO_CUBE_ALIASES = (("no-cube", NO_CUBE), ("nocube", NO_CUBE), ("it cannot be folded into a cube", NO_CUBE),
                   ("cannot fold into a cube", NO_CUBE))
REASON_ALIASES = (("opposite faces", OPPOSITE), ("mirror", MIRROR), ("mirrored arrangement", MIRROR),
                  ("turned glyph", TURNED), ("glyph rotated", TURNED), ("rotated glyph", TURNED))
NETS_BY_LEVEL = {1: (0, 1, 2, 3, 4, 5), 2: tuple(range(11)), 3: (6, 7, 8, 9, 10)}
DEGREE_P = {1: (0.3, 0.3, 0.3, 0.1), 2: (0.3, 0.3, 0.3, 0.1), 3: (1 / 3, 1 / 3, 1 / 3, 0.0)}
DIST_MIN = {1: 2, 2: 1, 3: 1}        # faces between a distractor and the nearest true view
NO_CUBE_P = 0.23                     # "about 25%", kept under the 1/6 + 0.10 cap of a six-option choice
SQUARE_MIN_PX, SQUARE_MAX_PX = 72.0, 100.0
DOT_PX = 18.0                        # red dot diameter
NET_BOX = (32.0, 32.0, 540.0, 736.0)
CUBE_S = 76.0                        # ISO edge of a candidate cube, px
SLOT_H = 180.0
CUBE_CX = 668.0
FACE_GREY = {"+z": 0.97, "+y": 0.86, "+x": 0.76}
MOVE_RGB = OKABE_ITO["blue"]        # Y's border and the ghost's dashed outline
MOVE_BORDER_PX = 7.0
DOT_RGB = (0.85, 0.1, 0.05)
CORNER_STEP = ((0, 0), (1, 0), (1, 1), (0, 1))   # corner k of a cell, from its top-left, in (col, row)


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3
    net: int                                     # index into cn.NETS (information only)
    cells: tuple[tuple[int, int], ...]           # six (col, row) page cells, rows downward, after g in D4
    letters: tuple[str, ...]                     # per cell, a permutation of F G J L P R
    turns: tuple[int, ...]                       # per cell, 0/90/180/270, clockwise as the reader sees the page
    dot: tuple[int, int]                         # (cell, corner 0..3 = top-left, top-right, bottom-right, bottom-left)
    leaf: int                                    # cell Y (net degree 1), drawn with a blue border
    ghost: tuple[int, int]                       # empty cell Y is moved to (Q5)
    candidates: tuple[tuple[tuple[str, int], ...], ...]   # 4 x (top, left-front, right-front) (letter, turn)
    swap: tuple[int, int]                        # cells whose glyphs the minimal pair exchanges
    odd: int                                     # 1..4, the impossible cube the open question asks about


# --- pure helpers -------------------------------------------------------------------------------------------------

def true_views(scene: Scene) -> list:
    return cn.views(scene.cells, scene.letters, scene.turns)


def swapped(scene: Scene) -> Scene:
    """The net with the glyphs of the two `swap` squares exchanged, each letter keeping its page turn."""
    a, b = scene.swap
    letters, turns = list(scene.letters), list(scene.turns)
    letters[a], letters[b] = letters[b], letters[a]
    turns[a], turns[b] = turns[b], turns[a]
    return replace(scene, letters=tuple(letters), turns=tuple(turns))


def matching(scene: Scene) -> list[int]:
    vs = true_views(scene)
    return [i for i, c in enumerate(scene.candidates) if c in vs]


@lru_cache(maxsize=256)       # sample's last check, then the ladder's margin, of the same scene
def distractor_distance(scene: Scene) -> int:
    """Smallest distance (faces) of a non-matching candidate to a true view, over the net and its minimal pair."""
    out = 3
    for s in (scene, swapped(scene)):
        vs = true_views(s)
        good = matching(s)
        if len(good) != 1:
            return 0
        out = min([out] + [cn.distance_to(c, vs) for i, c in enumerate(s.candidates) if i != good[0]])
    return out


def reason_of(scene: Scene, cand) -> str:
    """The first reason that applies to an impossible candidate: opposite faces, then arrangement, then turn."""
    opp = cn.opposite_letters(scene.cells, scene.letters)
    ls = [x for x, _ in cand]
    if any(opp[a] == b for a in ls for b in ls):
        return OPPOSITE
    if not any([x for x, _ in v] == ls for v in true_views(scene)):
        return MIRROR
    return TURNED


def up_face(scene: Scene) -> str:
    """Letter of the face the top of the leaf square's glyph points toward once folded, or "no cube"."""
    return _up_face(scene.cells, scene.letters, scene.turns, scene.leaf)


def _up_face(cells, letters, turns, leaf: int) -> str:
    # `cn.face_frames`, of the leaf's glyph-up only: the normals depend on the cells alone (cached)
    normals = cn.normals(tuple(cells))
    if len(set(normals)) != 6:
        return NO_CUBE
    u = cn.apply_t(cn.orientations(tuple(cells))[leaf], cn.page_up(turns[leaf]))
    return letters[normals.index(u)]


def moved(scene: Scene, ghost) -> Scene:
    cells = list(scene.cells)
    cells[scene.leaf] = tuple(ghost)
    return replace(scene, cells=tuple(cells))


def ghosts(cells, y: int) -> list[tuple[int, int]]:
    """Empty cells sharing an edge with exactly one of the five squares other than y (and >= 0 in both axes
    after the net's shift is kept: negative cells are allowed, the layout re-centres)."""
    rest = [c for i, c in enumerate(cells) if i != y]
    taken = set(rest)
    steps = ((1, 0), (-1, 0), (0, 1), (0, -1))
    out = set()
    for c, r in rest:
        for dc, dr in steps:
            g = (c + dc, r + dr)
            if g not in cells and sum((g[0] + a, g[1] + b) in taken for a, b in steps) == 1:
                out.add(g)
    return sorted(out)


def layout(scene: Scene) -> tuple[float, float, float]:
    """(square px, x of column 0, y of row 0) for the net and its ghost, centred in the net panel."""
    cols = [c for c, _ in scene.cells] + [scene.ghost[0]]
    rows = [r for _, r in scene.cells] + [scene.ghost[1]]
    nc, nr = max(cols) - min(cols) + 1, max(rows) - min(rows) + 1
    x0, y0, x1, y1 = NET_BOX
    sq = min(SQUARE_MAX_PX, (x1 - x0) / nc, (y1 - y0) / nr)
    ox = (x0 + x1) / 2 - sq * (min(cols) + max(cols) + 1) / 2
    oy = (y0 + y1) / 2 - sq * (min(rows) + max(rows) + 1) / 2
    return sq, ox, oy


# --- sampling -----------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1024)     # a net's cells: at most 11 nets x 8 placements
def _moves(cells) -> tuple[tuple[int, tuple[int, int]], ...]:
    """Every (Y, ghost): Y a square of net degree 1, the ghost one of its `ghosts`."""
    return tuple((y, g) for y in range(6) if cn.degree(cells, y) == 1 for g in ghosts(cells, y))


def _pick_move(rng, cells, turns, letters, nocube: bool):
    """A uniformly random (Y, ghost) move of the wanted kind: Y's square collides (no cube), or
    it folds onto its old face with its glyph pointing toward another face than before. None if there is none."""
    moves = _moves(cells)
    for k in rng.permutation(len(moves)):
        y, g = moves[int(k)]
        after = _up_face(cells[:y] + (g,) + cells[y + 1:], letters, turns, y)     # up_face(moved(...))
        if (after == NO_CUBE) if nocube else (after != NO_CUBE and after != _up_face(cells, letters, turns, y)):
            return y, g
    return None


def _turn_some(rng, cand, k: int, keep=()):
    idx = [i for i in range(3) if i not in keep]
    out = list(cand)
    for i in rng.choice(idx, size=k, replace=False):
        letter, t = out[int(i)]
        out[int(i)] = (letter, (t + 90 * int(rng.integers(1, 4))) % 360)
    return tuple(out)


@lru_cache(maxsize=None)
def _nets_with(level: int, deg: int) -> tuple[int, ...]:
    """The nets of this level with a square of net degree `deg`."""
    return tuple(k for k in NETS_BY_LEVEL[level] if any(cn.degree(cn.NETS[k][1], i) == deg for i in range(6)))


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"cube_nets: level must be 1..3, got {level}")
    q4 = int(rng.integers(4))
    odd_reason = REASONS[int(rng.integers(3))]
    deg = 1 + int(rng.choice(4, p=DEGREE_P[level]))
    want_nocube = rng.random() < NO_CUBE_P
    net = int(rng.choice(_nets_with(level, deg)))
    cells = cn.place(cn.NETS[net][1], cn.D4[int(rng.integers(8))])
    p = int(rng.choice([i for i in range(6) if cn.degree(cells, i) == deg]))
    others = [x for x in cn.LETTERS if x != "P"]
    order = iter(rng.permutation(others))
    letters = tuple("P" if i == p else str(next(order)) for i in range(6))
    turns = tuple(int(t) * 90 for t in rng.integers(0, 4, size=6))
    move = _pick_move(rng, cells, turns, letters, want_nocube)
    if move is None:
        raise Reject("no_q5_move")
    leaf, ghost = move
    dot = (int(rng.integers(6)), int(rng.integers(4)))
    vs = cn.views(cells, letters, turns)
    opp = cn.opposite_letters(cells, letters)
    for _ in range(20):
        o = int(rng.integers(24))
        correct = vs[o]
        shown = [letters.index(x) for x, _ in correct]
        pairs = [(a, b) for a in shown for b in shown if a < b and b in cn.neighbours(cells, a)
                 and not {a, b} & {p, leaf}]
        if not pairs:
            continue
        swap = pairs[int(rng.integers(len(pairs)))]
        base = Scene(level, net, cells, letters, turns, dot, leaf, ghost, (), swap, 1)
        sw = swapped(base)
        mirror = cn.views(sw.cells, sw.letters, sw.turns)[o]
        turned = _turn_some(rng, correct, 2 if level == 1 else 1)
        i, j = (int(x) for x in rng.choice(3, size=2, replace=False))
        opposite = list(correct)
        opposite[i] = (opp[correct[j][0]], 90 * int(rng.integers(4)))
        opposite = tuple(opposite)
        if level == 1:
            opposite = _turn_some(rng, opposite, 1, keep=(i,))
        slots = [int(x) for x in rng.permutation([k for k in range(4) if k != q4])]
        cands = [None] * 4
        cands[q4] = correct
        for k, c in zip(slots, (opposite, mirror, turned)):
            cands[k] = c
        odd = 1 + slots[REASONS.index(odd_reason)]
        s = replace(base, candidates=tuple(cands), odd=odd)
        if distractor_distance(s) < DIST_MIN[level]:
            continue
        return s
    raise Reject("no_candidates")


# --- answers ------------------------------------------------------------------------------------------------------

def p_degree(scene: Scene) -> Count:
    return Count(cn.degree(scene.cells, scene.letters.index("P")), low=1, high=4)


def opposite_of_p(scene: Scene) -> Choice:
    return Choice(cn.opposite_letters(scene.cells, scene.letters)["P"], tuple(x for x in cn.LETTERS if x != "P"))


def corner_faces(scene: Scene) -> Ordered:
    v = cn.corner_vertex(scene.cells, *scene.dot)
    frames = cn.face_frames(scene.cells, scene.turns)
    want = {tuple(int(v[i] if k == i else 0) for k in range(3)) for i in range(3)}
    got = tuple(sorted(scene.letters[i] for i, (n, _) in enumerate(frames) if n in want))
    return Ordered(got, "alphabetical order", cn.LETTERS, as_set=True)


def foldable_cube(scene: Scene) -> Choice:
    good = matching(scene)
    if len(good) != 1:
        raise Reject("q4_not_unique")
    return Choice(str(good[0] + 1), ("1", "2", "3", "4"))


def edit(scene: Scene) -> Scene:
    """Y cut off and taped on at the ghost outline, its glyph keeping its page turn."""
    return moved(scene, scene.ghost)


def counterfactual(scene: Scene) -> Choice:
    y = scene.letters[scene.leaf]
    return Choice(up_face(scene), tuple(x for x in cn.LETTERS if x != y) + (NO_CUBE,), NO_CUBE_ALIASES)


def odd_reason(scene: Scene) -> Record:
    return Record((("reason", Choice(reason_of(scene, scene.candidates[scene.odd - 1]), REASONS,
                                     REASON_ALIASES)),))


# --- ladder -------------------------------------------------------------------------------------------------------

FOLD = "The net is folded into a cube with its printed side outward."


@lru_cache(maxsize=256)       # sample, rephrase_q4 and the minimal pair each ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    sq = layout(scene)[0]
    lv = scene.level
    size = Margin(sq, "px", SQUARE_MIN_PX, "net squares too small to read a glyph's turn")
    dist = distractor_distance(scene)
    y = scene.letters[scene.leaf]
    changes = up_face(edit(scene)) == NO_CUBE or up_face(edit(scene)) != up_face(scene)
    rungs = (
        Question(1, "p_neighbours", "How many squares of the net share an edge with the square lettered P?",
                 p_degree(scene), size),
        Question(2, "opposite_p", f"{FOLD} Which face is opposite the face lettered P?", opposite_of_p(scene),
                 size),
        Question(3, "corner_faces", f"{FOLD} Which three faces meet at the cube corner marked by the red dot? "
                 "Give their letters in alphabetical order.", corner_faces(scene),
                 Margin(DOT_PX, "px", 12.0, "corner dot too small to see")),
        Question(4, "foldable_cube", f"{FOLD} Which of the cubes 1-4 could be the result? Letters on the cubes "
                 "must face the same way as they would on the folded net.", foldable_cube(scene),
                 Margin(float(dist), "faces", DIST_MIN[lv], "a wrong cube within that many faces of a true view")),
        Question(5, "moved_square_points_to",
                 f"If the square with the blue border (letter {y}) were cut off and taped on at the dashed blue "
                 "outline, its letter keeping its direction on the page, which face would the top of its letter "
                 "point toward once the net is folded into a cube (printed side outward)? Answer 'no cube' if the "
                 "new shape cannot fold into a cube.", counterfactual(edit(scene)),
                 Margin(1.0 if changes else 0.0, "faces", 1.0, "the moved letter points where it did before"),
                 edit="move the blue-bordered square to the dashed outline"),
    )
    cand = scene.candidates[scene.odd - 1]
    open_q = Question(6, "why_impossible",
                      f"{FOLD} Cube {scene.odd} cannot be made from this net. Explain why. Give the first reason "
                      "that applies, in this order: opposite faces adjacent (two faces that are opposite on the "
                      "folded cube are seen together); mirror arrangement (the three letters go round the corner "
                      "the wrong way); glyph turned (a letter faces the wrong way).", odd_reason(scene),
                      Margin(float(cn.distance_to(cand, true_views(scene))), "faces", 1.0,
                             "the named cube matches a true view"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    q = ladder(scene).rungs[3]
    return Question(4, "only_foldable_cube", f"{FOLD} Three of the cubes 1-4 cannot be folded from this net. "
                    "Which one can?", q.answer, q.margin)


def minimal_pair(scene: Scene) -> Scene:
    """The glyphs of the two `swap` squares exchanged (each keeping its page turn): the old mirror-arrangement cube
    becomes the foldable one. If the open question named that cube, it names the old answer instead (now the
    mirror arrangement), so its reason stays the same."""
    twin = swapped(scene)
    new = matching(twin)
    if len(new) != 1:
        raise Reject("no_minimal_pair")
    odd = scene.odd if scene.odd - 1 != new[0] else matching(scene)[0] + 1
    return replace(twin, odd=odd)


# --- drawing ------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _ink_height(letter: str) -> float:
    """Ink height of a letter in DejaVu Sans Bold at font size 1 (each glyph is sized by its own ink box, so the
    descending J is no larger than the rest)."""
    check_font()
    ctx = cairo.Context(cairo.ImageSurface(cairo.FORMAT_RGB24, 8, 8))
    ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_BOLD)
    ctx.set_font_size(100.0)
    return ctx.text_extents(letter).height / 100.0


def glyph(ctx: cairo.Context, letter: str, matrix: cairo.Matrix, glyph_px: float, rgb=BLACK) -> None:
    """A letter whose ink is `glyph_px` tall, its ink box centred on the origin of `matrix`'s glyph space."""
    check_font()
    ctx.save()
    ctx.transform(matrix)
    ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_BOLD)
    ctx.set_font_size(glyph_px / _ink_height(letter))
    e = ctx.text_extents(letter)
    ctx.move_to(-e.width / 2 - e.x_bearing, -e.height / 2 - e.y_bearing)
    ctx.text_path(letter)
    ctx.set_source_rgb(*rgb)
    ctx.fill()
    ctx.restore()


@lru_cache(maxsize=None)
def cube_origin(slot: int) -> tuple[float, float]:
    """ISO origin of candidate `slot` (0..3): the unit cube's centre lands at the slot's centre."""
    centre = pj.ISO.project((0.5, 0.5, 0.5), CUBE_S)
    return CUBE_CX - float(centre[0]), 24.0 + SLOT_H * (slot + 0.5) - float(centre[1])


@lru_cache(maxsize=64)
def _cube_outline(origin, s: float) -> tuple[tuple[str, tuple], ...]:
    """(axis, screen corners) of the ISO unit cube's visible faces at this origin and scale."""
    return tuple((f.axis, tuple(map(tuple, pj.ISO.project(f.corners, s, origin).tolist())))
                 for f in pj.cube_faces([(0, 0, 0)], pj.ISO))


def draw_candidate(ctx: cairo.Context, cand, origin, s: float = CUBE_S) -> None:
    for axis, pts in _cube_outline(tuple(origin), s):
        ctx.move_to(*pts[0])
        for u, v in pts[1:]:
            ctx.line_to(u, v)
        ctx.close_path()
        ctx.set_source_rgb(*(FACE_GREY[axis],) * 3)
        ctx.fill_preserve()
        ctx.set_source_rgb(*BLACK)
        ctx.set_line_width(3.0)
        ctx.set_line_join(cairo.LINE_JOIN_ROUND)
        ctx.stroke()
    for face, (letter, turn) in zip(cn.VIEW_FACES, cand):
        glyph(ctx, letter, cn.glyph_matrix(face, turn, s, origin, 100.0), 100.0)


def _square(ctx: cairo.Context, x: float, y: float, side: float, rgb, width_px: float, fill=None, dash=()) -> None:
    """A square in pixel space (plain cairo: the net places no labels, so no stroke is registered)."""
    ctx.rectangle(x, y, side, side)
    if fill is not None:
        ctx.set_source_rgb(*fill)
        ctx.fill_preserve()
    ctx.set_source_rgb(*rgb)
    ctx.set_line_width(width_px)
    ctx.set_line_join(cairo.LINE_JOIN_MITER)
    ctx.set_dash(list(dash))
    ctx.stroke()
    ctx.set_dash([])


NUMBER = LABEL.with_(font_px=26.0)   # the candidates' numbers


def draw(scene: Scene, canvas: Canvas) -> None:
    ctx = canvas.ctx
    sq, ox, oy = layout(scene)
    if sq < SQUARE_MIN_PX:
        raise Reject("net_too_large")
    px = lambda c, r: (ox + sq * c, oy + sq * r)  # noqa: E731
    gx, gy = px(*scene.ghost)
    _square(ctx, gx, gy, sq, MOVE_RGB, 4.0, dash=(12.0, 8.0))
    for (c, r), letter, turn in zip(scene.cells, scene.letters, scene.turns):
        x, y = px(c, r)
        _square(ctx, x, y, sq, BLACK, 3.0, fill=WHITE)
        m = cairo.Matrix.init_rotate(math.radians(turn))
        m = m.multiply(cairo.Matrix(x0=x + sq / 2, y0=y + sq / 2))
        glyph(ctx, letter, m, 0.6 * sq)
    x, y = px(*scene.cells[scene.leaf])
    k = MOVE_BORDER_PX / 2 + 1.5                 # Y's border runs just inside its outline
    _square(ctx, x + k, y + k, sq - 2 * k, MOVE_RGB, MOVE_BORDER_PX)
    cell, corner = scene.dot
    c, r = scene.cells[cell]
    dc, dr = CORNER_STEP[corner]
    shapes.circle(canvas, px(c + dc, r + dr), DOT_PX / 2, Style(stroke=BLACK, fill=DOT_RGB, width_px=2.0))
    for k, cand in enumerate(scene.candidates):
        origin = cube_origin(k)
        draw_candidate(ctx, cand, origin)
        draw_text_px(canvas, str(k + 1), (CUBE_CX - 0.87 * CUBE_S - 24.0, 24.0 + SLOT_H * (k + 0.5)), NUMBER)


DOMAIN = Domain(
    id="cube_nets", family="solid", title="Cube nets",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="A lettered cube net and four isometric cubes: P's neighbours, the face opposite P, the faces at a "
                "marked corner, which cube the net folds into, and where a re-hinged square's letter points.",
    balance_keys=("p_neighbours", "opposite_p", "foldable_cube", "moved_square_points_to", "why_impossible"),
)
