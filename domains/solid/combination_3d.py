"""3D combination: an orange piece P of unit cubes drawn in place inside the thin wireframe of a rectangular block,
and four grey candidate pieces 1-4, each drawn alone in one of the 24 rotations. The ladder walks piece size -> gap
size -> candidates of the gap's size -> which candidate fills the gap -> which one would fill it once the starred
cube is taken out; the open question asks whether the gap's mirror image would fit too.

Rules: the gap G is the block minus P (one face-connected polycube). A candidate fills it iff one of its 24 proper
rotations, translated to the origin, equals G translated to the origin (canonical forms agree); mirror images are
not rotations unless G is achiral. Answers come from the latent cube sets, never from the picture.
Ambiguity boundaries: (1) a wrong candidate too close to the right shape. Distance = the best-alignment symmetric
difference in cubes; the margin stores a lower bound that needs no search (0 for a rotation of G, 2 for another
shape of |G| cubes, by parity, and the size difference otherwise), which must be >= 1. (2) A cube hidden in a
drawing, or an empty place that would not show if filled: every drawn cube keeps >= `VISIBLE` of one face in view,
every gap cell would show >= `VISIBLE` of one face if it alone were added to P, and so would every empty cell of a
candidate's bounding box that touches it (so no drawing looks like a fuller shape).
Sizes: level 1 gaps have 4 cubes (only two trominoes exist, too few for three distinct candidates of the gap's
size), level 2 pieces at least 5 (level 1 already fixes |P| = 4), and a box-shaped gap (a whole layer) is refused.
Legibility: every drawing at 48 px per cube edge, candidate numbers bold 24 px, star on the most visible face."""
from __future__ import annotations

import bisect
import functools
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import projection as pj
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY, LABEL, OKABE_ITO, WHITE
from grip.renderers.text import draw_text_px

from . import _voxels as vx

BLOCKS = {1: ((2, 2, 2),), 2: ((2, 2, 3), (2, 3, 3)), 3: ((2, 3, 3),)}
# Level 1 gaps have 4 cubes: only two trominoes exist, too few for three distinct candidates of the gap's size.
GAP = {1: (4, 4), 2: (3, 9), 3: (6, 9)}
PIECE = {1: (4, 12), 2: (5, 12), 3: (9, 12)}  # L2 >= 5: level 1 already fixes |P| = 4 for a third of the items
VISIBLE = 0.25                       # best visible face fraction of a drawn cube or a would-be added one
GROW_BIAS = 10.0                      # weight of a cell just in front of the gap when growing it
SEED_SHEET = 0.5                     # share of gaps grown from the thin side's front sheet (2x3x3)
SEED_FRONT = 0.25                    # share of gaps grown from the block's nearest corner
GAP_TRIES = 200
STAR_VISIBLE = 0.60                  # the starred face must show most of itself
OPTIONS = ("1", "2", "3", "4")
NONE = "none"
FIT = OPTIONS + (NONE,)
YES, NO = "yes", "no"
CAM = pj.TRI
S_PX = 48.0                          # cube edge in every drawing (>= 45: min lattice image 0.334 edge = 16 px)
ORANGE = OKABE_ITO["orange"]
WIRE = (0.45, 0.45, 0.45)
SPLIT_U = 300.0                      # block on the left of this column, candidates in a 2 x 2 grid on the right
PREAMBLE = ("Pieces may be turned but not mirrored. No cube is hidden: every cube in every drawing shows at least "
            "part of a face.")


@dataclass(frozen=True)
class Scene:
    level: int                                            # 1..3
    block: tuple[int, int, int]                           # block size along x, y, z (cubes)
    piece: tuple[tuple[int, int, int], ...]               # P, sorted cells inside the block
    star: tuple[int, int, int]                            # the starred cube of P (touches G, P minus it connected)
    candidates: tuple[tuple[tuple[int, int, int], ...], ...]  # four cube sets as drawn (normalised, <= 3x3x3)
    kinds: tuple[str, ...]                                # per candidate: gap|mirror|moved|other|star|decoy|minus|size


# --- geometry (pure) -----------------------------------------------------------------------------------------------

def gap(scene: Scene) -> tuple[tuple[int, int, int], ...]:
    return _gap(scene.block, scene.piece)


@functools.lru_cache(maxsize=4096)
def _gap(block, piece) -> tuple[tuple[int, int, int], ...]:
    p = set(piece)
    return tuple(c for c in itertools.product(*(range(d) for d in block)) if c not in p)


def shape_key(cubes) -> int | tuple:
    """Equal for two cube sets iff one is a rotation of the other: `_shape_id` of a set inside the box [0, 3)^3,
    else its canonical form."""
    try:
        return _shape_id(_word(cubes))
    except KeyError:
        return vx.canonical(cubes)


def same_shape(a: tuple, b: tuple) -> bool:
    """Whether one cube set is a rotation of the other (their canonical forms agree)."""
    return shape_key(a) == shape_key(b)


def fitting(scene: Scene, cells) -> list[int]:
    """Candidates (indices) that are a rotation of `cells`."""
    key = shape_key(tuple(cells))
    return [i for i, c in enumerate(scene.candidates) if shape_key(c) == key]


def separation(scene: Scene, cells) -> int:
    """Lower bound on the best-alignment difference from `cells` to the nearest candidate that is not a rotation
    of it (see the module docstring)."""
    cells = tuple(cells)
    key = shape_key(cells)
    out = []
    for c in scene.candidates:
        if shape_key(c) == key:
            continue
        out.append(2 if len(c) == len(cells) else abs(len(c) - len(cells)))
    return min(out)


# Every drawing lies in the box [0, 3)^3: cell (x, y, z) is bit 9 x + 3 y + z of a set's word, so that ascending
# bits are the cells in sorted order. Chunk k of a word (bits 9 k .. 9 k + 8) holds the cells with x = k.
_BOX = tuple(itertools.product(range(3), repeat=3))
_BIT = {c: i for i, c in enumerate(_BOX)}
_NEAR = tuple(sum(1 << _BIT[n] for n in vx.neighbours(c) if n in _BIT) for c in _BOX)    # face neighbours' bits
_BURIABLE = sum(1 << i for i, c in enumerate(_BOX) if max(c) < 2)                  # +x, +y, +z neighbours in the box
# _CHUNK_BITS[k][v], _CHUNK_CELLS[k][v]: the bits and the cells of chunk k when it holds v, ascending
_CHUNK_BITS = tuple(tuple(tuple(9 * k + i for i in range(9) if v >> i & 1) for v in range(512)) for k in range(3))
_CHUNK_CELLS = tuple(tuple(tuple(_BOX[i] for i in bits) for bits in table) for table in _CHUNK_BITS)


def _span(k: int, values: int) -> int:
    """The cells whose coordinate k lies between the least and the greatest of `values` (a 3-bit mask)."""
    vs = [v for v in range(3) if values >> v & 1]
    return sum(1 << i for i, c in enumerate(_BOX) if vs and vs[0] <= c[k] <= vs[-1])


# Per 3-bit mask of the chunks in use (the x values) and per union u of the three chunks (the (y, z) places in
# use): the cells of the bounding box, and how far the set lies from the origin (a shift of the word).
_X_SPAN = tuple(_span(0, m) for m in range(8))
_YZ_SPAN = tuple(_span(1, sum(1 << y for y in {i // 3 for i in range(9) if u >> i & 1}))
                 & _span(2, sum(1 << z for z in {i % 3 for i in range(9) if u >> i & 1})) for u in range(512))
_X_LOW = (0, 0, 9, 0, 18, 0, 9, 0)
_YZ_LOW = (0,) + tuple(3 * min(i // 3 for i in range(9) if u >> i & 1) + min(i % 3 for i in range(9) if u >> i & 1)
                       for u in range(1, 512))
# _TURN[k][i]: the bit of cell i turned by rotation k (as `vx.rotated`) and moved back into the box
_TURN = tuple(tuple(1 << _BIT[tuple(s * c[j] + (2 if s < 0 else 0) for j, s in perm)] for c in _BOX)
              for perm in vx._SIGNED_PERMS)


def _chunk_turns(turn: tuple, k: int) -> tuple[int, ...]:
    """Per value v of chunk k (bits 9 k .. 9 k + 8): the OR of `turn` over its cells."""
    out = [0] * 512
    for v in range(1, 512):
        low = v & -v
        out[v] = out[v ^ low] | turn[9 * k + low.bit_length() - 1]
    return tuple(out)


# _TURN_CHUNKS[k]: rotation k as three chunk tables (`_chunk_turns`), so a word turns in three lookups
_TURN_CHUNKS = tuple(tuple(_chunk_turns(turn, k) for k in range(3)) for turn in _TURN)


# _PLANE[k][v]: the cells whose coordinate k is v; _STRIDE[k]: the bit step of a unit step along axis k
_PLANE = tuple(tuple(sum(1 << i for i, c in enumerate(_BOX) if c[k] == v) for v in range(3)) for k in range(3))
_STRIDE = (9, 3, 1)
# The 5 x 5 x 5 box around [0, 3)^3 (coordinates -1 .. 3, bit 25 (x + 1) + 5 (y + 1) + z + 1: ascending bits are
# again sorted cells), for the empty cells beside a set, inside the box or one step out: _BIT5[i] is the bit of
# box cell i there, _CELL5[j] the cell of bit j.
_BIT5 = tuple(1 << (25 * (x + 1) + 5 * (y + 1) + z + 1) for x, y, z in _BOX)
_CELL5 = tuple(itertools.product(range(-1, 4), repeat=3))


def _word(cubes) -> int:
    word = 0
    for c in cubes:
        word |= 1 << _BIT[c]
    return word


def _bits(word: int) -> tuple[int, ...]:
    return _CHUNK_BITS[0][word & 511] + _CHUNK_BITS[1][(word >> 9) & 511] + _CHUNK_BITS[2][word >> 18]


def _cells(word: int) -> tuple[tuple[int, int, int], ...]:
    """The word's cells, sorted (a normalised set when the word is)."""
    return _CHUNK_CELLS[0][word & 511] + _CHUNK_CELLS[1][(word >> 9) & 511] + _CHUNK_CELLS[2][word >> 18]


def _connected_word(word: int) -> bool:
    """Face-connected (an empty set is not)."""
    (x0, _, x2), (y0, _, y2), (z0, _, z2) = _PLANE
    reach = word & -word
    while reach:
        grown = (reach | (reach & ~x2) << 9 | (reach & ~x0) >> 9 | (reach & ~y2) << 3 | (reach & ~y0) >> 3
                 | (reach & ~z2) << 1 | (reach & ~z0) >> 1) & word
        if grown == reach:
            break
        reach = grown
    return reach == word and word != 0


def _beside(rest: int, word: int) -> list[tuple[int, int, int]]:
    """The cells outside `word` beside a cube of `rest` (a subset of it), one step out of the box included,
    sorted."""
    r = 0
    for i in _bits(rest):
        r |= _BIT5[i]
    w = 0
    for i in _bits(word):
        w |= _BIT5[i]
    # rest lies inside the 5-box's inner 3 x 3 x 3: a unit step never wraps
    t = (r << 25 | r >> 25 | r << 5 | r >> 5 | r << 1 | r >> 1) & ~w
    out = []
    while t:
        low = t & -t
        out.append(_CELL5[low.bit_length() - 1])
        t ^= low
    return out


def _moved(rest: int, c) -> int | None:
    """The word of rest + cell c (beside it, maybe one step out of the box), normalised, or None when the set does
    not fit in the box."""
    for k in range(3):
        if c[k] < 0 or c[k] > 2:
            if rest & _PLANE[k][2 if c[k] < 0 else 0]:
                return None
            rest = rest << _STRIDE[k] if c[k] < 0 else rest >> _STRIDE[k]
            c = tuple((0 if c[k] < 0 else 2) if j == k else c[j] for j in range(3))
            break
    return _to_origin(rest | 1 << _BIT[c])


def _mirror_word(word: int) -> int:
    """`vx.mirror` (x -> -x), normalised."""
    return _to_origin((word & 511) << 18 | word & 511 << 9 | word >> 18)


def _achiral(cubes) -> bool:
    """`vx.achiral` of a set inside the box."""
    w = _word(cubes)
    return _shape_id(_mirror_word(w)) == _shape_id(w)


def _probes(word: int) -> int:
    """The empty cells of the set's bounding box that touch it."""
    near = 0
    for i in _bits(word):
        near |= _NEAR[i]
    a, b, c = word & 511, (word >> 9) & 511, word >> 18
    return near & _X_SPAN[(a != 0) | (b != 0) << 1 | (c != 0) << 2] & _YZ_SPAN[a | b | c] & ~word


def _to_origin(word: int) -> int:
    """The word of the set moved to the origin (normalised)."""
    a, b, c = word & 511, (word >> 9) & 511, word >> 18
    return word >> (_X_LOW[(a != 0) | (b != 0) << 1 | (c != 0) << 2] + _YZ_LOW[a | b | c])


@functools.lru_cache(maxsize=8192)
def _turned_words(word: int) -> tuple[int, ...]:
    """The words of the set under the 24 rotations, normalised: `vx.rotated(cells, k)` is `_cells(...[k])`."""
    a, b, c = word & 511, (word >> 9) & 511, word >> 18
    out = []
    for t0, t1, t2 in _TURN_CHUNKS:
        w = t0[a] | t1[b] | t2[c]
        u, v, x = w & 511, (w >> 9) & 511, w >> 18              # `_to_origin`, written out
        out.append(w >> (_X_LOW[(u != 0) | (v != 0) << 1 | (x != 0) << 2] + _YZ_LOW[u | v | x]))
    return tuple(out)


@functools.lru_cache(maxsize=1 << 16)
def _shape_id(word: int) -> int:
    """The same number for two sets iff one is a rotation of the other (the least of the 24 turned words)."""
    return min(_turned_words(word))


def drawing_visibility(cubes) -> tuple[float, float]:
    """(min best-face fraction over the cubes, min over empty touching cells of the bounding box if added)."""
    return _word_visibility(_word(cubes))


@functools.lru_cache(maxsize=1 << 16)
def _word_visibility(word: int) -> tuple[float, float]:
    # The fraction of all 81 faces of the box at once (what `vx.best_face_visibility` reads for cells in the box);
    # each face's fraction stands alone, so one pass serves the cubes and the empty cells.
    best = vx._box_word_visibility(word).reshape(27, 3).max(axis=1).tolist()
    a = min(best[i] for i in _bits(word))
    return a, min((best[i] for i in _bits(_probes(word))), default=1.0)


@functools.lru_cache(maxsize=1024)
def _block_visibility(piece, gap_cells) -> tuple[float, float]:
    best = vx.best_face_visibility(piece, list(piece) + list(gap_cells))
    return float(best[:len(piece)].min()), float(best[len(piece):].min())


def star_face(scene: Scene) -> tuple[str, float]:
    """The starred cube's most visible face and its visible fraction."""
    f = vx.face_visibility(scene.piece, [(scene.star, ax) for ax in vx.AXES])
    k = int(np.argmax(f))
    return vx.AXES[k], float(f[k])


# --- answers -------------------------------------------------------------------------------------------------------

def piece_count(scene: Scene) -> Count:
    return Count(len(scene.piece), low=1, high=18)


def gap_count(scene: Scene) -> Count:
    return Count(len(gap(scene)), low=1, high=18)


def same_size(scene: Scene) -> Ordered:
    n = len(gap(scene))
    return Ordered(tuple(OPTIONS[i] for i, c in enumerate(scene.candidates) if len(c) == n), "ascending order",
                   OPTIONS, as_set=True)


def gap_fit(scene: Scene) -> Choice:
    hits = fitting(scene, gap(scene))
    if len(hits) > 1:
        raise Reject("two_candidates_fit")
    return Choice(OPTIONS[hits[0]] if hits else NONE, FIT)


def edit(scene: Scene) -> Scene:
    """Take the starred cube out of the orange piece: the gap grows by that cell."""
    return replace(scene, piece=tuple(c for c in scene.piece if c != scene.star))


counterfactual = gap_fit


def mirror_fits(scene: Scene) -> Record:
    return Record((("mirror_fits", Choice(YES if _achiral(gap(scene)) else NO, (YES, NO))),))


# --- ladder --------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)       # sample, the builder and rephrase_q4 each ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    g = gap(scene)
    p_vis, g_vis = _block_visibility(scene.piece, g)
    c_vis = [drawing_visibility(c) for c in scene.candidates]
    edited = edit(scene)
    rungs = (
        Question(1, "piece_count", f"{PREAMBLE} How many cubes make up the orange piece?", piece_count(scene),
                 Margin(p_vis, "fraction", VISIBLE, "a cube of the orange piece hidden")),
        Question(2, "gap_count", f"{PREAMBLE} The orange piece sits inside the block outlined in grey. How many "
                 "cubes are missing from the complete block?", gap_count(scene),
                 Margin(g_vis, "fraction", VISIBLE, "a missing cube that would not show if it were put back")),
        Question(3, "same_size_candidates", f"{PREAMBLE} Which of the grey candidates 1-4 have exactly as many "
                 "cubes as are missing from the block?", same_size(scene),
                 Margin(min(v[0] for v in c_vis), "fraction", VISIBLE, "a cube of a candidate hidden")),
        Question(4, "gap_fit", f"{PREAMBLE} Which candidate, turned as needed but not mirrored, exactly fills the "
                 "empty space of the block? Answer 'none' if no candidate does.", gap_fit(scene),
                 Margin(float(separation(scene, g)), "cubes", 1.0, "a wrong candidate that is a rotation of the gap")),
        Question(5, "gap_fit_without_star", f"{PREAMBLE} If the cube marked with a star were taken out of the orange "
                 "piece (nothing else moves), which candidate, turned as needed but not mirrored, would exactly "
                 "fill the empty space then? Answer 'none' if no candidate would.", counterfactual(edited),
                 Margin(float(separation(scene, gap(edited))), "cubes", 1.0,
                        "a wrong candidate that is a rotation of the enlarged gap"),
                 edit="take the starred cube out of the orange piece"),
    )
    open_q = Question(6, "mirror_fits", f"{PREAMBLE} Imagine the piece that exactly fills the empty space of the "
                      "block, and its mirror image. Could the mirror image also fill the space after turning? "
                      "Explain.", mirror_fits(scene),
                      Margin(min(v[1] for v in c_vis), "fraction", VISIBLE,
                             "an empty place beside a candidate that would not show if filled"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    q4 = ladder(scene).rungs[3]
    return Question(4, "gap_occupant", f"{PREAMBLE} Which candidate, after rotation, occupies exactly the cells that "
                    "the orange piece leaves empty in the block? Answer 'none' if no candidate does.",
                    q4.answer, q4.margin)


# --- candidates and the minimal pair ---------------------------------------------------------------------------------

def fits_box(cubes) -> bool:
    return all(d <= 3 for d in vx.box_size(cubes))


def moves(cubes):
    """Every set made by moving one cube to an empty cell beside the rest, connected and inside 3x3x3, rotations of
    `cubes` (a set inside the box) left out: yielded normalised, in a fixed order (cube moved, then target cell,
    both sorted)."""
    word = _word(cubes)
    own = _shape_id(word)
    seen = set()
    for i in _bits(word):
        rest = word & ~(1 << i)
        if not _connected_word(rest):
            continue
        for c in _beside(rest, word):
            new = _moved(rest, c)
            if new is not None and new not in seen:
                seen.add(new)
                if _shape_id(new) != own:
                    yield _cells(new)


def random_move(d: Draws, cubes, tries: int = 20):
    """One cube moved to a random empty cell beside the rest (connected, inside 3x3x3, not a rotation of the
    original; a set inside the box), or None."""
    word = _word(cubes)
    own, bits = _shape_id(word), _bits(word)
    for _ in range(tries):
        rest = word & ~(1 << bits[d.integers(len(bits))])
        cells = _beside(rest, word)
        c = cells[d.integers(len(cells))]
        if _connected_word(rest):
            new = _moved(rest, c)
            if new is not None and _shape_id(new) != own:
                return _cells(new)
    return None


def _visible_drawing(cubes) -> bool:
    """Whether `drawing_visibility` passes."""
    return _visible_word(_word(cubes))


@functools.lru_cache(maxsize=1 << 16)
def _visible_word(word: int) -> bool:
    # A cube, or an empty cell if added, whose +x, +y and +z neighbours are cubes shows no face: that quick test
    # turns away a third of the rotations `_turned` tries.
    if (word | _probes(word)) & _BURIABLE & (word >> 9) & (word >> 3) & (word >> 1):
        return False
    a, b = _word_visibility(word)
    return a >= VISIBLE and b >= VISIBLE


def minimal_pair(scene: Scene) -> Scene:
    """Q4 = k: move one cube of candidate k so that it is no longer a rotation of G (Q4 becomes none). Q4 = none:
    the 'moved' candidate gets its cube moved back (it becomes correct). The first move in sorted order that keeps
    the four candidates distinct shapes and the drawing's visibility."""
    g = gap(scene)
    q4 = gap_fit(scene).value
    k = OPTIONS.index(q4) if q4 != NONE else scene.kinds.index("moved") if "moved" in scene.kinds else None
    if k is None:
        raise Reject("no_minimal_pair")
    others = {shape_key(c) for i, c in enumerate(scene.candidates) if i != k}
    g_key = shape_key(g)
    for new in moves(scene.candidates[k]):
        key = shape_key(new)
        if key in others or (q4 == NONE) != (key == g_key) or not _visible_drawing(new):
            continue
        kinds = list(scene.kinds)
        kinds[k] = "moved" if q4 != NONE else "gap"
        twin = replace(scene, candidates=scene.candidates[:k] + (new,) + scene.candidates[k + 1:],
                       kinds=tuple(kinds))
        if not ladder(twin).failing_margins():
            return twin
    raise Reject("no_minimal_pair")


def _random_polycube(d: Draws, n: int) -> tuple | None:
    """n cells of the box [0, 3)^3 grown from a random one, each time a random empty face neighbour (the cells
    as words: ascending bits are the sorted cells), normalised."""
    i = 9 * d.integers(3) + 3 * d.integers(3) + d.integers(3)
    word, near, size = 1 << i, _NEAR[i], 1
    while size < n:
        front = _bits(near & ~word)
        if not front:
            return None
        i = front[d.integers(len(front))]
        word, near, size = word | 1 << i, near | _NEAR[i], size + 1
    return _cells(_to_origin(word))


def _grow_gap(d: Draws, block, n: int, sym_axis: int | None) -> int | None:
    """About n block cells grown from a seed, face neighbour by face neighbour, mirror-symmetric across the block's
    mid-plane normal to `sym_axis` when given (then achiral, and maybe not connected), as a word (bit 9 x + 3 y + z
    per cell, as in `_BIT`). Cells whose +x, +y, +z neighbours are gap cells or outside the block (behind the gap,
    as seen) are likelier, GROW_BIAS per such neighbour: the gap stays open toward the viewer, so that its cells and
    the piece cubes behind it remain in view."""
    t = _block_tables(block)
    mirror = t.mirror[sym_axis] if sym_axis is not None else range(27)
    r = d.random()
    if r < SEED_SHEET and t.sheet:
        seeds = t.sheet + tuple(mirror[c] for c in t.sheet)
    elif r < SEED_SHEET + SEED_FRONT:
        seeds = (t.front_corner, mirror[t.front_corner])
    else:
        start = 9 * d.integers(block[0]) + 3 * d.integers(block[1]) + d.integers(block[2])
        seeds = (start, mirror[start])
    # The gap and its front as words (ascending bits are the sorted cells).
    around, behind = t.around, t.behind
    ahead = list(t.outside)                     # per cell: +x, +y, +z neighbours outside the block or in the gap
    g = 0
    for c in seeds:
        if not g >> c & 1:
            g |= 1 << c
            for m in behind[c]:
                ahead[m] += 1
    front = 0
    for c in _bits(g):
        front |= around[c]
    front &= ~g
    size = g.bit_count()
    while size < n:
        if not front:
            return None
        cells = _bits(front)
        # GROW_BIAS ** ahead, summed in order (= np.cumsum)
        w = list(itertools.accumulate([_BIAS_POWERS[ahead[c]] for c in cells]))
        c = cells[min(bisect.bisect_right(w, d.random() * w[-1]), len(cells) - 1)]
        m = mirror[c]                           # never in the gap: the gap is its own mirror image
        for new in (c,) if m == c else (c, m):
            for k in behind[new]:
                ahead[k] += 1
        g |= 1 << c | 1 << m
        front = (front | around[c] | around[m]) & ~g
        size = g.bit_count()
    return g


_BIAS_POWERS = tuple(GROW_BIAS ** k for k in range(4))


@dataclass(frozen=True)
class _BlockTables:
    """Per cell id (9 x + 3 y + z) of a block: its face neighbours inside the block (a word); how many of its +x, +y,
    +z neighbours lie outside the block; its -x, -y, -z neighbours inside the block (the cells it lies ahead of);
    per axis, the id of its mirror image across the block's mid-plane. And the block's cells, sorted; the seed
    sheet of `_grow_gap` (empty unless the block is 2 x 3 x 3 in some order); the corner nearest the viewer."""
    around: tuple
    outside: tuple
    behind: tuple
    mirror: tuple
    cells: tuple
    sheet: tuple
    front_corner: int


@functools.lru_cache(maxsize=None)
def _block_tables(block) -> _BlockTables:
    def inside(c):
        return 0 <= c[0] < block[0] and 0 <= c[1] < block[1] and 0 <= c[2] < block[2]

    cells = tuple(itertools.product(*(range(d) for d in block)))
    around, outside, behind = [0] * 27, [0] * 27, [()] * 27
    for c in cells:
        i = _BIT[c]
        around[i] = sum(1 << _BIT[m] for m in vx.neighbours(c) if inside(m))
        outside[i] = sum(not inside(tuple(c[j] + (j == k) for j in range(3))) for k in range(3))
        behind[i] = tuple(_BIT[m] for m in (tuple(c[j] - (j == k) for j in range(3)) for k in range(3)) if inside(m))
    mirror = tuple(tuple(_BIT[tuple(block[k] - 1 - c[j] if j == k else c[j] for j in range(3))] if inside(c) else i
                         for i, c in enumerate(_BOX)) for k in range(3))
    sheet = ()
    if min(block) == 2 and max(block) == 3:
        # The cells of the thin (2-cube) side just in front of the cubes that nothing else could show: a gap
        # there keeps every piece cube behind it in view.
        t = block.index(2)
        sheet = tuple(sorted(_BIT[tuple(1 if j == t else c[j] for j in range(3))]
                             for c in itertools.product(*(range(d - 1) for d in block))))
    return _BlockTables(tuple(around), tuple(outside), tuple(behind), mirror, cells, sheet,
                        _BIT[tuple(d - 1 for d in block)])


def _buried(piece, block) -> bool:
    """A piece cube whose +x, +y and +z neighbours are all piece cubes shows no face (the quick test that rejects
    most candidate gaps before the visibility sampling)."""
    p = set(piece)
    return any((x + 1, y, z) in p and (x, y + 1, z) in p and (x, y, z + 1) in p for x, y, z in p)


def _turned(d: Draws, cubes) -> tuple | None:
    """The set in a random one of the 24 rotations whose drawing passes the visibility rules (a rotation that
    repeats another one of a symmetric shape gets the same verdict)."""
    turns = _turned_words(_word(cubes))
    for i in d.permutation(24):
        if _visible_word(turns[i]):
            return _cells(turns[i])
    return None


def _slots(d: Draws, q4: int, q5: int, length: int) -> list[int]:
    """Slots of the candidates with |G| cubes: Q4's slot (if any) in, Q5's slot (if any) out."""
    inside = [q4] if q4 < 4 else []
    free = [i for i in d.permutation(4) if i not in inside and i != q5]
    return sorted(inside + free[: length - len(inside)])


def _same_size(d: Draws, level: int, g, need: int, q4_none: bool) -> list | None:
    """`need` distractors of |G| cubes: a moved copy first when Q4 is none, the mirror image when G is chiral
    (levels 2-3), then moved copies and other shapes."""
    out: list[tuple[str, tuple]] = []
    seen = {shape_key(g)}                          # the shapes met so far

    def take(kind, cubes):
        cubes = vx.normalise(cubes)
        if fits_box(cubes) and shape_key(cubes) not in seen:
            seen.add(shape_key(cubes))
            out.append((kind, cubes))

    if q4_none:
        moved = random_move(d, g)
        if moved is None:
            return None
        take("moved", moved)
    if level >= 2 and not _achiral(g) and len(out) < need:
        take("mirror", _cells(_mirror_word(_word(g))))
    for _ in range(12):
        if len(out) >= need:
            break
        moved = random_move(d, g, tries=3) if d.random() < 0.5 else None
        if moved is not None:
            take("moved", moved)
        else:
            other = _random_polycube(d, len(g))
            if other is not None:
                take("other", other)
    return out if len(out) == need else None


def _other_size(d: Draws, g, piece, star, need: int, q5_none: bool) -> list | None:
    """`need` candidates whose size is not |G|: decoys G + one other piece cube beside G (one first when Q5 is
    none), G less one cube, other shapes; none of them a rotation of G + star."""
    gw = _word(g)                                  # G, the piece and the star lie in the block
    decoys = [_cells(_to_origin(gw | 1 << _BIT[c])) for c in sorted(piece) if c != star and _NEAR[_BIT[c]] & gw]
    minus = [_cells(_to_origin(gw & ~(1 << i))) for i in _bits(gw) if len(g) > 2 and _connected_word(gw & ~(1 << i))]
    out: list[tuple[str, tuple]] = []
    seen = {_shape_id(gw | 1 << _BIT[star]), _shape_id(gw)}     # the shapes met so far

    def take(kind, cubes):
        cubes = vx.normalise(cubes)
        if len(cubes) != len(g) and fits_box(cubes) and shape_key(cubes) not in seen:
            seen.add(shape_key(cubes))
            out.append((kind, cubes))

    if q5_none and decoys:
        for i in d.permutation(len(decoys)):
            take("decoy", decoys[i])
            if out:
                break
    for _ in range(12):
        if len(out) >= need:
            break
        r = d.random()
        if r < 0.4 and decoys:
            take("decoy", decoys[d.integers(len(decoys))])
        elif r < 0.7 and minus:
            take("minus", minus[d.integers(len(minus))])
        else:
            other = _random_polycube(d, len(g) + d.pick((-2, -1, 1, 2)))
            if other is not None and len(other) >= 2:
                take("size", other)
    return out if len(out) == need else None


def _block_and_gap(d: Draws, level: int, achiral: bool):
    """(block, gap, piece, star choices) passing every rule of the block drawing, or None after many cheap tries
    (at level 3 only a few per cent of grown gaps leave every piece cube and gap cell in view)."""
    for _ in range(GAP_TRIES):
        dims = list(d.pick(BLOCKS[level]))
        d.shuffle(dims)                          # rng.permutation(dims)
        block = tuple(dims)
        total = block[0] * block[1] * block[2]
        lo = max(GAP[level][0], total - PIECE[level][1])
        hi = min(GAP[level][1], total - PIECE[level][0])
        g = _grow_gap(d, block, d.integers(lo, hi + 1), d.integers(3) if achiral and d.random() < 0.5 else None)
        if g is None or not lo <= g.bit_count() <= hi:
            continue
        found = _judged_gap(block, g)
        if found is not None and found[0] == achiral:
            return (block,) + found[1:]
    return None


@functools.lru_cache(maxsize=16384)
def _judged_gap(block, word: int) -> tuple[bool, tuple, tuple, tuple] | None:
    """(whether the gap is achiral, its cells, the piece, its star choices) when the gap (a word, as `_grow_gap`
    gives it) passes the rules of the block drawing that do not depend on the level, else None. The same gaps come
    back again and again (a few thousand grow in each block), so the verdict is kept."""
    gt = tuple(c for i, c in enumerate(_BOX) if word >> i & 1)
    if not vx.connected(gt) or math.prod(vx.box_size(gt)) == len(gt):
        return None                                # a box-shaped gap (a whole layer) is no puzzle
    g = set(gt)
    piece = tuple(c for c in _block_tables(block).cells if c not in g)
    if _buried(piece, block) or not vx.connected(piece) or min(_block_visibility(piece, gt)) < VISIBLE:
        return None
    cut = vx.cut_cubes(piece)                      # the piece is connected (checked above)
    stars = [c for c in piece if any(n in g for n in vx.neighbours(c)) and c not in cut]
    vis = vx.face_visibility(piece, [(c, ax) for c in stars for ax in vx.AXES]).reshape(-1, 3).max(axis=1)
    stars = tuple(c for c, v in zip(stars, vis) if v >= STAR_VISIBLE)
    return (_achiral(gt), gt, piece, stars) if stars else None


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"combination_3d: level must be 1..3, got {level}")
    d = Draws(rng)                                 # the Generator's own draws, cheaper
    q4 = d.integers(5)                             # targets first: Q4 slot (4 = none), Q5 slot, Q3 length, open
    q5 = d.integers(5)
    while q4 < 4 and q5 == q4:
        q5 = d.integers(5)
    length = d.integers(2, 4)
    achiral = bool(d.integers(2))
    found = _block_and_gap(d, level, achiral)
    if found is None:
        raise Reject("no_gap")
    block, gt, piece, stars = found
    for _ in range(8):
        star = stars[d.integers(len(stars))]
        inside = _slots(d, q4, q5, length)
        same = _same_size(d, level, gt, len(inside) - (q4 < 4), q4 == 4)
        other = _other_size(d, gt, piece, star, 4 - len(inside) - (q5 < 4), q5 == 4)
        if same is None or other is None:
            continue
        if level == 3 and any(k == "mirror" for k, _ in same) and not (
                q5 < 4 or any(k in ("moved", "decoy", "minus") for k, _ in same + other)):
            continue                               # the mirror distractor comes with one one cube away from G
        slots: list = [None] * 4
        if q4 < 4:
            slots[q4] = ("gap", vx.normalise(gt))
        if q5 < 4:
            slots[q5] = ("star", vx.normalise(set(gt) | {star}))
        fill_in, fill_out = iter(same), iter(other)
        for i in range(4):
            if slots[i] is None:
                slots[i] = next(fill_in) if i in inside else next(fill_out)
        turned = [_turned(d, c) for _, c in slots]
        if any(t is None for t in turned):
            continue
        scene = Scene(level, block, piece, star, tuple(turned), tuple(k for k, _ in slots))
        if ladder(scene).failing_margins():
            continue
        try:
            minimal_pair(scene)
        except Reject:
            continue
        return scene
    raise Reject("no_scene")


# --- drawing -------------------------------------------------------------------------------------------------------

def _star(ctx, centre, r: float) -> None:
    ang = np.radians(-90 + 36 * np.arange(10))
    rad = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
    pts = np.column_stack([centre[0] + rad * np.cos(ang), centre[1] + rad * np.sin(ang)])
    ctx.move_to(*pts[0])
    for p in pts[1:]:
        ctx.line_to(*p)
    ctx.close_path()
    ctx.set_source_rgb(*WHITE)
    ctx.fill_preserve()
    ctx.set_source_rgb(*BLACK)
    ctx.set_line_width(2.0)
    ctx.stroke()


def _inside(pts, box) -> bool:
    p = np.asarray(pts)
    return bool(p[:, 0].min() >= box[0] and p[:, 0].max() <= box[2] and p[:, 1].min() >= box[1]
                and p[:, 1].max() <= box[3])


def layout(scene: Scene) -> dict:
    """Pixel origins of the block drawing and of candidates 1-4, and the boxes they must stay inside."""
    b = SAFE_BORDER_PX
    boxes = {"block": (b + 4, b + 4, SPLIT_U - 8, 768 - b - 4)}
    w, h = (768 - b - SPLIT_U) / 2, (768 - 2 * b) / 2
    for i in range(4):
        u0, v0 = SPLIT_U + (i % 2) * w, b + (i // 2) * h
        boxes[OPTIONS[i]] = (u0 + 6, v0 + 40, u0 + w - 6, v0 + h - 6)
    out = {"boxes": boxes}
    a, bb, c = scene.block
    corners = [(x, y, z) for x in (0, a) for y in (0, bb) for z in (0, c)]
    out["block"] = pj.fit(CAM, corners, boxes["block"], s=S_PX)[1]
    for i, cubes in enumerate(scene.candidates):
        ext = np.asarray(cubes).max(axis=0) + 1
        pts = [(x, y, z) for x in (0, ext[0]) for y in (0, ext[1]) for z in (0, ext[2])]
        out[OPTIONS[i]] = pj.fit(CAM, pts, boxes[OPTIONS[i]], s=S_PX)[1]
    return out


def draw(scene: Scene, canvas: Canvas) -> None:
    ctx = canvas.ctx
    lay = layout(scene)
    a, b, c = scene.block
    corners = [(x, y, z) for x in (0, a) for y in (0, b) for z in (0, c)]
    edges = [(p, q) for p in corners for q in corners if p < q and sum(u != v for u, v in zip(p, q)) == 1]
    hidden = [e for e in edges if (0, 0, 0) in e]          # the three edges behind everything
    origin = lay["block"]
    if not _inside(CAM.project(corners, S_PX, origin), lay["boxes"]["block"]):
        raise Reject("block_clipped")

    at = {p: CAM.project(p, S_PX, origin).tolist() for p in corners}       # each corner projected alone, once

    def wire(es, width):
        ctx.set_source_rgb(*WIRE)
        ctx.set_line_width(width)
        for p, q in es:
            ctx.move_to(*at[p])
            ctx.line_to(*at[q])
        ctx.stroke()
    wire(hidden, 1.5)
    pj.draw_cubes(ctx, scene.piece, CAM, S_PX, origin, tint={q: ORANGE for q in scene.piece})
    wire([e for e in edges if e not in hidden], 1.5)
    axis, _ = star_face(scene)
    face = np.array(pj._FACE_CORNERS[axis], float) + np.asarray(scene.star, float)
    _star(ctx, CAM.project(face, S_PX, origin).mean(axis=0), 0.22 * S_PX)
    for i, cubes in enumerate(scene.candidates):
        box = lay["boxes"][OPTIONS[i]]
        ext = np.asarray(cubes).max(axis=0) + 1
        pts = [(x, y, z) for x in (0, ext[0]) for y in (0, ext[1]) for z in (0, ext[2])]
        if not _inside(CAM.project(pts, S_PX, lay[OPTIONS[i]]), box):
            raise Reject("candidate_clipped")
        pj.draw_cubes(ctx, cubes, CAM, S_PX, lay[OPTIONS[i]])
        draw_text_px(canvas, OPTIONS[i], ((box[0] + box[2]) / 2, box[1] - 20), LABEL.with_(font_px=24.0))
    ctx.set_source_rgb(*GREY)
    ctx.set_line_width(2.0)
    ctx.move_to(SPLIT_U - 2, SAFE_BORDER_PX + 10)
    ctx.line_to(SPLIT_U - 2, 768 - SAFE_BORDER_PX - 10)
    ctx.stroke()


DOMAIN = Domain(
    id="combination_3d", family="solid", title="3D combination",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="An orange piece inside a block outline and four grey candidates drawn turned: piece size, gap size, "
                "candidates of the gap's size, which candidate fills the gap (turning allowed, mirroring not), and "
                "which one would after the starred cube is taken out.",
    balance_keys=("gap_fit", "gap_fit_without_star", "mirror_fits", "same_size_candidates"),
    # The open core is one yes/no field inside a Record: its cap is a two-way choice's (1/2 + 0.10).
    balance_caps=(("mirror_fits", 0.60),),
)
