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


@functools.lru_cache(maxsize=16384)
def _shape_signature(cubes: tuple) -> tuple:
    """Invariants of a cube set under turning and moving: its cube counts layer by layer along each axis (read
    from the nearer end, the three sorted) and its sorted numbers of face neighbours. Sets whose signatures differ
    are no rotations of each other: most canonical forms are not needed."""
    s = set(cubes)
    layers = []
    for coords in zip(*s):
        lo = min(coords)
        counts = [0] * (max(coords) - lo + 1)
        for v in coords:
            counts[v - lo] += 1
        layers.append(min(counts, counts[::-1]))
    degrees = sorted(((x + 1, y, z) in s) + ((x - 1, y, z) in s) + ((x, y + 1, z) in s) + ((x, y - 1, z) in s)
                     + ((x, y, z + 1) in s) + ((x, y, z - 1) in s) for x, y, z in s)
    return tuple(map(tuple, sorted(layers))), tuple(degrees)


def same_shape(a: tuple, b: tuple) -> bool:
    """Whether one cube set is a rotation of the other (their canonical forms agree)."""
    return _shape_signature(a) == _shape_signature(b) and vx.canonical(a) == vx.canonical(b)


def fitting(scene: Scene, cells) -> list[int]:
    """Candidates (indices) that are a rotation of `cells`."""
    cells = tuple(cells)
    return [i for i, c in enumerate(scene.candidates) if same_shape(c, cells)]


def separation(scene: Scene, cells) -> int:
    """Lower bound on the best-alignment difference from `cells` to the nearest candidate that is not a rotation
    of it (see the module docstring)."""
    cells = tuple(cells)
    out = []
    for c in scene.candidates:
        if same_shape(c, cells):
            continue
        out.append(2 if len(c) == len(cells) else abs(len(c) - len(cells)))
    return min(out)


# Every drawing lies in the box [0, 3)^3: cell (x, y, z) is bit 9 x + 3 y + z of a set's word, so that ascending
# bits are the cells in sorted order.
_BOX = tuple(itertools.product(range(3), repeat=3))
_BIT = {c: i for i, c in enumerate(_BOX)}
_NEAR = tuple(sum(1 << _BIT[n] for n in vx.neighbours(c) if n in _BIT) for c in _BOX)    # face neighbours' bits
_BURIABLE = sum(1 << i for i, c in enumerate(_BOX) if max(c) < 2)                  # +x, +y, +z neighbours in the box
# _SPAN[k][lo][hi]: the cells whose coordinate k lies in lo..hi
_SPAN = tuple(tuple(tuple(sum(1 << i for i, c in enumerate(_BOX) if lo <= c[k] <= hi) for hi in range(3))
                    for lo in range(3)) for k in range(3))


def _probe_word(cubes) -> tuple[int, int]:
    """(the set's word, the word of the empty cells of its bounding box that touch it)."""
    word = near = 0
    for c in cubes:
        i = _BIT[c]
        word |= 1 << i
        near |= _NEAR[i]
    xs, ys, zs = zip(*cubes)
    box = _SPAN[0][min(xs)][max(xs)] & _SPAN[1][min(ys)][max(ys)] & _SPAN[2][min(zs)][max(zs)]
    return word, near & box & ~word


@functools.lru_cache(maxsize=8192)
def drawing_visibility(cubes) -> tuple[float, float]:
    """(min best-face fraction over the cubes, min over empty touching cells of the bounding box if added)."""
    word, probes = _probe_word(cubes)
    # The fraction of all 81 faces of the box at once (what `vx.best_face_visibility` reads for cells in the box);
    # each face's fraction stands alone, so one pass serves the cubes and the empty cells.
    best = vx._box_word_visibility(word).reshape(27, 3).max(axis=1).tolist()
    a = min(best[_BIT[c]] for c in cubes)
    return a, min((b for i, b in enumerate(best) if probes >> i & 1), default=1.0)


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
    return Record((("mirror_fits", Choice(YES if vx.achiral(gap(scene)) else NO, (YES, NO))),))


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
    `cubes` left out: yielded normalised, in a fixed order (cube moved, then target cell, both sorted)."""
    s, own = set(cubes), tuple(cubes)
    seen = set()
    for g in sorted(s):
        rest = s - {g}
        if not vx.connected(rest):
            continue
        for c in sorted({n for r in rest for n in vx.neighbours(r)} - s):
            new = vx.normalise(rest | {c})
            if new not in seen:
                seen.add(new)
                if fits_box(new) and not same_shape(new, own):
                    yield new


def random_move(rng, cubes, tries: int = 20):
    """One cube moved to a random empty cell beside the rest (connected, inside 3x3x3, not a rotation of the
    original), or None."""
    s = sorted(set(cubes))
    own = tuple(s)
    for _ in range(tries):
        g = s[int(rng.integers(len(s)))]
        rest = set(s) - {g}
        cells = sorted({n for r in rest for n in vx.neighbours(r)} - set(s))
        c = cells[int(rng.integers(len(cells)))]
        new = rest | {c}
        if vx.connected(rest) and fits_box(new):
            new = vx.normalise(new)
            if not same_shape(new, own):
                return new
    return None


def _visible_drawing(cubes) -> bool:
    """Whether `drawing_visibility` passes. A cube, or an empty cell if added, whose +x, +y and +z neighbours are
    cubes shows no face: that quick test turns away a third of the rotations `_turned` tries."""
    word, probes = _probe_word(cubes)
    if (word | probes) & _BURIABLE & (word >> 9) & (word >> 3) & (word >> 1):
        return False
    a, b = drawing_visibility(cubes)
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
    others = [c for i, c in enumerate(scene.candidates) if i != k]
    for new in moves(scene.candidates[k]):
        if any(same_shape(new, c) for c in others) or (q4 == NONE) != same_shape(new, g) or \
                not _visible_drawing(new):
            continue
        kinds = list(scene.kinds)
        kinds[k] = "moved" if q4 != NONE else "gap"
        twin = replace(scene, candidates=scene.candidates[:k] + (new,) + scene.candidates[k + 1:],
                       kinds=tuple(kinds))
        if not ladder(twin).failing_margins():
            return twin
    raise Reject("no_minimal_pair")


def _random_polycube(rng, n: int) -> tuple | None:
    cells = {(int(rng.integers(3)), int(rng.integers(3)), int(rng.integers(3)))}
    while len(cells) < n:
        front = sorted({m for c in cells for m in vx.neighbours(c) if all(0 <= v < 3 for v in m)} - cells)
        if not front:
            return None
        cells.add(front[int(rng.integers(len(front)))])
    return vx.normalise(cells)


def _grow_gap(rng, block, n: int, sym_axis: int | None) -> int | None:
    """About n block cells grown from a seed, face neighbour by face neighbour, mirror-symmetric across the block's
    mid-plane normal to `sym_axis` when given (then achiral, and maybe not connected), as a word (bit 9 x + 3 y + z
    per cell, as in `_BIT`). Cells whose +x, +y, +z neighbours are gap cells or outside the block (behind the gap,
    as seen) are likelier, GROW_BIAS per such neighbour: the gap stays open toward the viewer, so that its cells and
    the piece cubes behind it remain in view."""
    t = _block_tables(block)
    mirror = t.mirror[sym_axis] if sym_axis is not None else range(27)
    r = rng.random()
    if r < SEED_SHEET and t.sheet:
        g = set(t.sheet)
        g.update([mirror[c] for c in g])
    elif r < SEED_SHEET + SEED_FRONT:
        g = {t.front_corner, mirror[t.front_corner]}
    else:
        start = 9 * int(rng.integers(block[0])) + 3 * int(rng.integers(block[1])) + int(rng.integers(block[2]))
        g = {start, mirror[start]}
    around, behind = t.around, t.behind
    front = set().union(*[around[c] for c in g]) - g
    ahead = list(t.outside)                     # per cell: +x, +y, +z neighbours outside the block or in the gap
    for c in g:
        for m in behind[c]:
            ahead[m] += 1
    while len(g) < n:
        if not front:
            return None
        cells = sorted(front)                   # ascending ids are the cells in sorted order
        # GROW_BIAS ** ahead, summed in order (= np.cumsum)
        w = list(itertools.accumulate([_BIAS_POWERS[ahead[c]] for c in cells]))
        c = cells[min(bisect.bisect_right(w, rng.random() * w[-1]), len(cells) - 1)]
        for new in {c, mirror[c]}:
            g.add(new)
            front.discard(new)
            front |= around[new] - g
            for m in behind[new]:
                ahead[m] += 1
    return sum(1 << c for c in g)


_BIAS_POWERS = tuple(GROW_BIAS ** k for k in range(4))


@dataclass(frozen=True)
class _BlockTables:
    """Per cell id (9 x + 3 y + z) of a block: its face neighbours inside the block (ids); how many of its +x, +y,
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
    around, outside, behind = [frozenset()] * 27, [0] * 27, [()] * 27
    for c in cells:
        i = _BIT[c]
        around[i] = frozenset(_BIT[m] for m in vx.neighbours(c) if inside(m))
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


def _turned(rng, cubes) -> tuple | None:
    """The set in a random one of the 24 rotations whose drawing passes the visibility rules."""
    tried = set()
    for i in rng.permutation(24):
        t = vx.rotated(cubes, int(i))
        if t not in tried:                  # a symmetric shape repeats itself under some rotations
            tried.add(t)
            if _visible_drawing(t):
                return t
    return None


def _slots(rng, q4: int, q5: int, length: int) -> list[int]:
    """Slots of the candidates with |G| cubes: Q4's slot (if any) in, Q5's slot (if any) out."""
    inside = [q4] if q4 < 4 else []
    free = [int(i) for i in rng.permutation(4) if i not in inside and i != q5]
    return sorted(inside + free[: length - len(inside)])


def _same_size(rng, level: int, g, need: int, q4_none: bool) -> list | None:
    """`need` distractors of |G| cubes: a moved copy first when Q4 is none, the mirror image when G is chiral
    (levels 2-3), then moved copies and other shapes."""
    out: list[tuple[str, tuple]] = []
    seen = [tuple(g)]                              # one set of each shape met so far

    def take(kind, cubes):
        cubes = vx.normalise(cubes)
        if fits_box(cubes) and not any(same_shape(cubes, c) for c in seen):
            seen.append(cubes)
            out.append((kind, cubes))

    if q4_none:
        moved = random_move(rng, g)
        if moved is None:
            return None
        take("moved", moved)
    if level >= 2 and not vx.achiral(g) and len(out) < need:
        take("mirror", vx.mirror(g))
    for _ in range(12):
        if len(out) >= need:
            break
        moved = random_move(rng, g, tries=3) if rng.random() < 0.5 else None
        if moved is not None:
            take("moved", moved)
        else:
            other = _random_polycube(rng, len(g))
            if other is not None:
                take("other", other)
    return out if len(out) == need else None


def _other_size(rng, g, piece, star, need: int, q5_none: bool) -> list | None:
    """`need` candidates whose size is not |G|: decoys G + one other piece cube beside G (one first when Q5 is
    none), G less one cube, other shapes; none of them a rotation of G + star."""
    decoys = [vx.normalise(set(g) | {c}) for c in sorted(piece)
              if c != star and any(n in set(g) for n in vx.neighbours(c))]
    minus = [vx.normalise(set(g) - {c}) for c in sorted(g) if len(g) > 2 and vx.connected(set(g) - {c})]
    out: list[tuple[str, tuple]] = []
    seen = [vx.normalise(set(g) | {star}), tuple(g)]     # one set of each shape met so far

    def take(kind, cubes):
        cubes = vx.normalise(cubes)
        if len(cubes) != len(g) and fits_box(cubes) and not any(same_shape(cubes, c) for c in seen):
            seen.append(cubes)
            out.append((kind, cubes))

    if q5_none and decoys:
        for i in rng.permutation(len(decoys)):
            take("decoy", decoys[int(i)])
            if out:
                break
    for _ in range(12):
        if len(out) >= need:
            break
        r = rng.random()
        if r < 0.4 and decoys:
            take("decoy", decoys[int(rng.integers(len(decoys)))])
        elif r < 0.7 and minus:
            take("minus", minus[int(rng.integers(len(minus)))])
        else:
            other = _random_polycube(rng, len(g) + int(rng.choice([-2, -1, 1, 2])))
            if other is not None and len(other) >= 2:
                take("size", other)
    return out if len(out) == need else None


def _block_and_gap(rng, level: int, achiral: bool):
    """(block, gap, piece, star choices) passing every rule of the block drawing, or None after many cheap tries
    (at level 3 only a few per cent of grown gaps leave every piece cube and gap cell in view)."""
    for _ in range(GAP_TRIES):
        dims = BLOCKS[level][int(rng.integers(len(BLOCKS[level])))]
        block = tuple(rng.permutation(dims).tolist())
        total = block[0] * block[1] * block[2]
        lo = max(GAP[level][0], total - PIECE[level][1])
        hi = min(GAP[level][1], total - PIECE[level][0])
        g = _grow_gap(rng, block, int(rng.integers(lo, hi + 1)), int(rng.integers(3)) if achiral and rng.random() < 0.5 else None)
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
    return (vx.achiral(gt), gt, piece, stars) if stars else None


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"combination_3d: level must be 1..3, got {level}")
    q4 = int(rng.integers(5))                      # targets first: Q4 slot (4 = none), Q5 slot, Q3 length, open
    q5 = int(rng.integers(5))
    while q4 < 4 and q5 == q4:
        q5 = int(rng.integers(5))
    length = int(rng.integers(2, 4))
    achiral = bool(rng.integers(2))
    found = _block_and_gap(rng, level, achiral)
    if found is None:
        raise Reject("no_gap")
    block, gt, piece, stars = found
    for _ in range(8):
        star = stars[int(rng.integers(len(stars)))]
        inside = _slots(rng, q4, q5, length)
        same = _same_size(rng, level, gt, len(inside) - (q4 < 4), q4 == 4)
        other = _other_size(rng, gt, piece, star, 4 - len(inside) - (q5 < 4), q5 == 4)
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
        turned = [_turned(rng, c) for _, c in slots]
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

    def wire(es, width):
        ctx.set_source_rgb(*WIRE)
        ctx.set_line_width(width)
        for p, q in es:
            ctx.move_to(*CAM.project(p, S_PX, origin))
            ctx.line_to(*CAM.project(q, S_PX, origin))
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
