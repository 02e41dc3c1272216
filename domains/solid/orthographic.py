"""Orthographic views: a small object of unit cubes drawn in TRI on a floor grid, with a FRONT arrow pointing at its
+x side (the picture's left) and a RIGHT arrow at its +y side (the picture's right); below it four drawings 1-4 of
binary views. The ladder walks cube count -> is the front view symmetric -> the front view's width, height and
filled squares -> which drawing is the right view -> would removing the starred cube change the right view; the open question asks how many
squares the top view fills.

Views (DOMAINS.md 2.4), each a silhouette cropped to its filled squares: FRONT looks toward -x with z up, its
right hand toward +y (cells (y, z), y growing rightward); RIGHT looks toward -y, its right hand toward -x (cells
(x, z), x growing LEFTWARD); TOP looks down with FRONT at the bottom (columns y rightward, rows x downward). The left
view is mirror(right) and the back view mirror(front).

Ambiguity boundaries: (1) a cube or an empty place hidden in the picture, so that two objects with different views
draw alike: every column top keeps >= `TOP_VISIBLE` of its area visible, every place where one more cube could
legally go would show >= `PROBE_VISIBLE` of one face, and at level 3 every cube shows >= `PROBE_VISIBLE` of one face;
(2) a wrong drawing too close to the right view: distance = cells filled in exactly one of two grids at the best
relative shift. The one-cell toggle partner sits at 1; at levels 1-2 every other drawing is >= 2 cells away, on the
item and on its minimal pair. When none of F, T, B fits a slot that rule leaves open (small symmetric objects,
where F = B and often F = R), a grid two toggles from R takes it.
Q3's answer is a Record of three counts (width, height, filled) rather than the view's rows (DOMAINS.md 2.4 asks for
the rows): a record of rows would give away the view's height in its fields and its width in each row's choices.
Legibility: cubes >= 48 px per edge, view cells 32 px, labels bold 20-22 px."""
from __future__ import annotations

import functools
import itertools
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.renderers import projection as pj
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY, GREY_LIGHT, LABEL, OKABE_ITO, WHITE, Style
from grip.renderers.text import draw_text_px, text_size

from . import _voxels as vx

GRID = {1: 3, 2: 4, 3: 4}            # floor grid g x g
HMAX = {1: 2, 2: 3, 3: 3}            # tallest column
CUBES = (6, 13)                      # the minimal pair adds one: at most 14
TOP_VISIBLE = 0.30                   # visible fraction of every column's top face
PROBE_VISIBLE = 0.25                 # best face of a would-be added cube (and at L3 of every cube)
PAIRED = 0.25                        # L3 symmetric target: share of objects built mirror-symmetric in y
CELL_PX = 32                         # candidate grid cell
EDGE_PX = (48.0, 72.0)               # TRI cube edge, min and max
OPTIONS = ("1", "2", "3", "4")
YES, NO = "yes", "no"
CAM = pj.TRI
CUBE_RGB = (0.80, 0.90, 1.0)
STAR_RGB = OKABE_ITO["vermillion"]
PANEL_TOP = 574.0                    # candidate row starts here (px); the object lives above it
PREAMBLE = {1: "Every cube rests on the floor or on another cube; the top of every stack can be seen, and there are "
               "no hidden gaps.",
            3: "Cubes are glued face to face and some overhang; every cube can be seen, and there are no hidden gaps."}
VIEWS = ("A view is what a person standing at an arrow sees, upright and looking straight at the object along the "
         "arrow: the squares the object covers, cropped to the object.")


@dataclass(frozen=True)
class Scene:
    level: int                                      # 1..3
    grid: int                                       # floor grid side, 3 or 4 cells
    cubes: tuple[tuple[int, int, int], ...]         # sorted (x, y, z), 0 <= x, y < grid, 0 <= z < HMAX
    star: tuple[int, int, int]                      # the marked cube: top of its column, its removal keeps V connected
    options: tuple[tuple[str, ...], ...]            # drawings 1-4: rows top first, '#' filled, '-' empty
    kinds: tuple[str, ...]                          # right|toggle|mirror|front|top|back|toggle2|toggle_two
    removed: tuple[tuple[int, int, int], ...] = ()  # cubes an edit took away (only on an edited scene)


# --- views (pure) -------------------------------------------------------------------------------------------------

def front_view(cubes) -> tuple[str, ...]:
    return vx.grid_of({(-z, y) for x, y, z in cubes})


def right_view(cubes) -> tuple[str, ...]:
    return vx.grid_of({(-z, -x) for x, y, z in cubes})


def top_view(cubes) -> tuple[str, ...]:
    return vx.grid_of({(x, y) for x, y, z in cubes})


def left_view(cubes) -> tuple[str, ...]:
    return vx.grid_of({(-z, x) for x, y, z in cubes})


def back_view(cubes) -> tuple[str, ...]:
    return vx.grid_of({(-z, -y) for x, y, z in cubes})


def _pre(level: int) -> str:
    return PREAMBLE[3 if level == 3 else 1]


def legal_additions(cubes, level: int, grid: int) -> list[tuple[int, int, int]]:
    """Empty cells where one cube may go: L1-2 on the floor touching the object or on top of a column; L3 glued to
    any face. Inside the grid and below HMAX."""
    s = cubes if isinstance(cubes, (set, frozenset)) else set(cubes)
    nb = _inside_neighbours(grid, HMAX[level])
    touching = set()
    for c in s:
        n = nb.get(c)
        if n is None:
            n = _neighbours_inside(c, grid, HMAX[level])
        touching.update(n)
    touching -= s
    if level == 3:
        return sorted(touching)                  # in (x, y, z) order
    return sorted(c for c in touching if c[2] == 0 or (c[0], c[1], c[2] - 1) in s)


def _neighbours_inside(c, grid: int, hmax: int) -> tuple[tuple[int, int, int], ...]:
    x, y, z = c
    return tuple(n for n in ((x + 1, y, z), (x - 1, y, z), (x, y + 1, z), (x, y - 1, z), (x, y, z + 1), (x, y, z - 1))
                 if 0 <= n[0] < grid and 0 <= n[1] < grid and 0 <= n[2] < hmax)


@functools.lru_cache(maxsize=16)
def _inside_neighbours(grid: int, hmax: int) -> dict:
    """Per cell of the grid x grid x hmax box: its face neighbours inside the box."""
    return {(x, y, z): _neighbours_inside((x, y, z), grid, hmax)
            for x in range(grid) for y in range(grid) for z in range(hmax)}


def _column_tops(cubes) -> list[tuple[int, int, int]]:
    tops: dict[tuple[int, int], int] = {}
    for x, y, z in cubes:
        tops[(x, y)] = max(tops.get((x, y), -1), z)
    return sorted((x, y, z) for (x, y), z in tops.items())


def visibility(scene: Scene) -> dict[str, float]:
    """Visible fractions: column tops, probes (would-be added cubes inside the object's box), every cube (level 3
    only; 1.0 otherwise, where the column tops cover it), and the star's top face."""
    return _visibility(scene.cubes, scene.level, scene.grid, scene.star)


@functools.lru_cache(maxsize=512)
def _visibility(cubes, level: int, grid: int, star) -> dict[str, float]:
    box = _box(grid, HMAX[level])
    s = box.bits(cubes)
    return {"tops": min(box.visible(s, c, "+z") for c in _column_tops(cubes)),
            "probes": min((box.best_visible(s, c) for c in _probes(cubes, level, grid)), default=1.0),
            "cubes": min(box.best_visible(s, c) for c in cubes) if level == 3 else 1.0,
            "star": box.visible(s, star, "+z")}


def _probes(cubes, level: int, grid: int) -> list[tuple[int, int, int]]:
    """The legal additions inside the object's bounding box, sorted."""
    box = _box(grid, HMAX[level])
    return box.members(box.probes(box.bits(cubes), level))


def _probes_and_cubes_seen(cubes, level: int, grid: int) -> bool:
    """visibility()'s "cubes" and "probes" both >= PROBE_VISIBLE, stopping at the first place that fails (the
    sampler rejects most level-3 candidates here)."""
    box = _box(grid, HMAX[level])
    s = box.bits(cubes)
    return (level < 3 or all(box.best_hidden(s, c) <= _PROBE_HIDDEN for c in cubes)) \
        and all(box.best_hidden(s, c) <= _PROBE_HIDDEN for c in box.members(box.probes(s, level)))


class _Box:
    """The grid x grid x hmax box of one level, its cube sets as bit masks (bit (x * grid + y) * hmax + z, so that
    ascending bits are sorted cubes): connectivity by growing a mask along its faces, and visibility in TRI from
    a table of which sample points of each face every other place of the box blocks (the rays of
    `_voxels.face_visibility`: the same slab tests, the same fractions)."""

    def __init__(self, grid: int, hmax: int):
        self.cells = [(x, y, z) for x in range(grid) for y in range(grid) for z in range(hmax)]
        self.bit = {c: 1 << i for i, c in enumerate(self.cells)}
        self.full = (1 << len(self.cells)) - 1
        self.floor = sum(self.bit[c] for c in self.cells if c[2] == 0)
        self.ntop = sum(self.bit[c] for c in self.cells if c[2] < hmax - 1)       # a place above inside the box
        self.nfar = sum(self.bit[c] for c in self.cells if c[1] < grid - 1)       # a place at y + 1 inside
        self.grid, self.dy, self.dx = grid, hmax, grid * hmax
        self.plane = (1 << self.dx) - 1                                             # the places at x = 0
        # planes[i][v]: the places whose coordinate i is v
        self.planes = [[sum(self.bit[c] for c in self.cells if c[i] == v) for v in range(n)]
                       for i, n in enumerate((grid, grid, hmax))]
        # below_top[k]: the places with a place k above them inside the box
        self.below_top = [sum(self.bit[c] for c in self.cells if c[2] < hmax - k) for k in range(hmax)]
        # byte_cells[i][v]: the cells of bits 8 i .. 8 i + 7 set in v, ascending (v's lowest bit, then the rest)
        self.byte_cells = []
        for i in range(0, len(self.cells), 8):
            table = [()]
            for v in range(1, 256):
                low = (v & -v).bit_length() - 1
                table.append((self.cells[i + low],) + table[v & (v - 1)] if i + low < len(self.cells) else ())
            self.byte_cells.append(table)
        # column[y][x][h]: the mask of a column of h cubes standing on floor cell (x, y)
        self.column = [[[((1 << h) - 1) << ((x * grid + y) * hmax) for h in range(hmax + 1)] for x in range(grid)]
                       for y in range(grid)]
        self.blocks = self._blocks()
        # top[y][x][h]: blocks[] of the top face of that column
        self.top = [[[None] + [self.blocks[((x, y, h - 1), "+z")] for h in range(1, hmax + 1)] for x in range(grid)]
                    for y in range(grid)]

    def bits(self, cubes) -> int:
        try:
            return sum(self.bit[c] for c in cubes)
        except KeyError as e:
            raise ValueError(f"orthographic: cube {e.args[0]} lies outside the box") from None

    def members(self, m: int) -> list[tuple[int, int, int]]:
        out = []
        for cells in self.byte_cells:       # eight bits at a time, lowest first
            if not m:
                break
            out += cells[m & 255]
            m >>= 8
        return out

    def spread(self, m: int) -> int:
        """The places face-adjacent to m's cubes, inside the box (m's own included where they touch each other)."""
        return (((m & self.ntop) << 1) | ((m >> 1) & self.ntop) | ((m & self.nfar) << self.dy)
                | ((m >> self.dy) & self.nfar) | (m << self.dx) | (m >> self.dx)) & self.full

    def probes(self, m: int, level: int) -> int:
        """legal_additions(m) inside m's bounding box: places touching m, at levels 1-2 on the floor or on a cube."""
        p = self.spread(m) & ~m
        if level < 3:
            p &= self.floor | ((m & self.ntop) << 1)
        for planes in self.planes:          # inside m's range along x, along y, along z
            vs = [v for v, q in enumerate(planes) if m & q]
            p &= sum(planes[vs[0]:vs[-1] + 1])
        return p

    def tops(self, m: int) -> int:
        """The highest cube of each column of m."""
        above = 0
        for k in range(1, self.dy):
            above |= (m >> k) & self.below_top[k]
        return m & ~above

    def twice_along_x(self, m: int) -> int:
        """The (y, z) places (as bits of the x = 0 plane) where m has two or more cubes."""
        seen = twice = 0
        for x in range(self.grid):
            plane = (m >> x * self.dx) & self.plane
            twice |= seen & plane
            seen |= plane
        return twice

    def along_x(self, p: int) -> int:
        """Bits of the x = 0 plane repeated at every x."""
        return sum(p << x * self.dx for x in range(self.grid))

    def connected(self, m: int) -> bool:
        if not m:
            return False
        ntop, nfar, dy, dx = self.ntop, self.nfar, self.dy, self.dx
        reach = m & -m
        while True:
            # reach | spread(reach), inside m
            grown = (reach | ((reach & ntop) << 1) | ((reach >> 1) & ntop) | ((reach & nfar) << dy)
                     | ((reach >> dy) & nfar) | (reach << dx) | (reach >> dx)) & m
            if grown == reach:
                return reach == m
            reach = grown

    def hidden(self, m: int, face) -> int:
        """How many of the face's sample points m's cubes block."""
        entry = self.blocks[face]
        n = entry[2].get(m & entry[0])
        return self.count(entry, m) if n is None else n

    @staticmethod
    def count(entry, m: int) -> int:
        """hidden() counted from a face's blocks, and remembered: it depends only on which of them m fills."""
        anywhere, blocks, memo = entry
        pts = 0
        for b, p in blocks:
            if m & b:
                pts |= p
        if len(memo) > 4096:
            memo.clear()
        n = memo[m & anywhere] = pts.bit_count()
        return n

    def best_hidden(self, m: int, c) -> int:
        """The fewest sample points m's cubes block on one of the cell's +x, +y, +z faces."""
        return min(self.hidden(m, (c, ax)) for ax in vx.AXES)

    def visible(self, m: int, c, axis: str) -> float:
        return _FRACTION[self.hidden(m, (c, axis))]

    def best_visible(self, m: int, c) -> float:
        # The fraction falls as the count grows: the best face is the one with the fewest points blocked.
        return _FRACTION[self.best_hidden(m, c)]

    def _blocks(self) -> dict:
        """Per (place, axis) face: (the bits of the places that block any of its sample points, ((bit of such a
        place, mask of the points a cube there blocks), ...), a memo {the places filled among them: points
        blocked}). The slab test toward the viewer (direction CAM.w), one row per (face, place) pair."""
        n = vx.SAMPLES
        t = (np.arange(n) + 0.5) / n
        uv = np.array([(a, b) for a in t for b in t])
        faces = [(c, ax) for c in self.cells for ax in vx.AXES]
        templates = []
        for ax in vx.AXES:
            k = "xyz".index(ax[1])
            p = np.zeros((len(uv), 3))
            p[:, k] = 1.0
            p[:, [i for i in range(3) if i != k]] = uv
            templates.append(p)
        inv = 1.0 / np.asarray(CAM.w, dtype=float)
        base = np.repeat(np.asarray([c for c, _ in faces], dtype=float), len(self.cells), axis=0)   # (F * C, 3)
        kind = np.repeat([vx.AXES.index(ax) for _, ax in faces], len(self.cells))
        occ = np.tile(np.asarray(self.cells, dtype=np.int64), (len(faces), 1)).astype(float)
        pts = base[:, None, :] + np.stack(templates)[kind]                                        # (F * C, S^2, 3)
        lo = [(occ[:, None, i] - pts[:, :, i]) * inv[i] for i in range(3)]
        t_in = np.maximum(np.maximum(lo[0], lo[1]), lo[2])
        t_out = np.minimum(np.minimum(lo[0] + inv[0], lo[1] + inv[1]), lo[2] + inv[2])
        hit = t_out > np.maximum(t_in, 1e-9)
        masks = (hit.astype(np.int64) * (1 << np.arange(n * n, dtype=np.int64))).sum(axis=1).reshape(len(faces), -1)
        out = {}
        for f, row in zip(faces, masks):
            blocks = tuple((1 << j, int(mk)) for j, mk in enumerate(row.tolist()) if mk)
            out[f] = (sum(b for b, _ in blocks), blocks, {})
        return out


# _FRACTION[k]: the visible fraction of a face with k of its sample points blocked.
_FRACTION = tuple(1.0 - k / (vx.SAMPLES * vx.SAMPLES) for k in range(vx.SAMPLES * vx.SAMPLES + 1))
# The most points a column top may have blocked and keep TOP_VISIBLE.
_TOP_HIDDEN = max(k for k, f in enumerate(_FRACTION) if f >= TOP_VISIBLE)
_PROBE_HIDDEN = max(k for k, f in enumerate(_FRACTION) if f >= PROBE_VISIBLE)


@functools.lru_cache(maxsize=4)
def _box(grid: int, hmax: int) -> _Box:
    return _Box(grid, hmax)


# --- answers ------------------------------------------------------------------------------------------------------

def cube_count(scene: Scene) -> Count:
    return Count(len(scene.cubes), low=1, high=20)


def front_symmetric(scene: Scene) -> Choice:
    f = front_view(scene.cubes)
    return Choice(YES if vx.flip(f) == f else NO, (YES, NO))


def front_size(scene: Scene) -> Record:
    """The front view, cropped to the object: its width and height in squares and how many are filled. Fixed
    fields, so the form of the answer tells nothing of the view (a record of rows would give away its height, and
    its row choices its width)."""
    f = front_view(scene.cubes)
    return Record((("width", Count(len(f[0]), low=1, high=max(GRID.values()))),
                   ("height", Count(len(f), low=1, high=max(HMAX.values()))),
                   ("filled", Count(len(vx.cells_of(f)), low=1, high=max(GRID.values()) * max(HMAX.values())))))


def right_option(scene: Scene) -> Choice:
    r = right_view(scene.cubes)
    hits = [i for i, o in enumerate(scene.options) if tuple(o) == r]
    if len(hits) != 1:
        raise Reject("right_view_not_unique")
    return Choice(OPTIONS[hits[0]], OPTIONS)


def option_distances(scene: Scene) -> list[int]:
    """Grid distance from the right view to every other drawing, ascending."""
    r = right_view(scene.cubes)
    return sorted(vx.grid_distance(r, tuple(o)) for o in scene.options if tuple(o) != r)


def edit(scene: Scene) -> Scene:
    """Remove the starred cube (remembered in `removed`, so that the edited scene still knows what it lost)."""
    return replace(scene, cubes=tuple(c for c in scene.cubes if c != scene.star), removed=(scene.star,))


def right_view_changes(scene: Scene) -> Choice:
    """On an edited scene: does the right view of what is left differ from that of the object before the edit?"""
    before = right_view(tuple(scene.cubes) + tuple(scene.removed))
    return Choice(YES if right_view(scene.cubes) != before else NO, (YES, NO))


counterfactual = right_view_changes


def top_count(scene: Scene) -> Record:
    return Record((("filled", Count(len(vx.cells_of(top_view(scene.cubes))), low=1, high=16)),))


# --- ladder -------------------------------------------------------------------------------------------------------

def _q4_margin(scene: Scene) -> Margin:
    d = option_distances(scene)
    if scene.level < 3:
        return Margin(float(min(d[0], d[1] - 1)), "cells", 1.0,
                      "a wrong drawing equal to the right view, or a second one only one cell from it")
    return Margin(float(d[0]), "cells", 1.0, "a wrong drawing equal to the right view")


def _margins(scene: Scene) -> dict[str, Margin]:
    """The ladder's margins by name (every question's margin is one of them)."""
    vis = visibility(scene)
    tops = Margin(vis["tops"], "fraction", TOP_VISIBLE, "a column top hidden behind nearer cubes")
    return {"tops": tops,
            "probes": Margin(vis["probes"], "fraction", PROBE_VISIBLE, "a place for one more cube hidden from view"),
            "q1": (Margin(vis["cubes"], "fraction", PROBE_VISIBLE, "a cube hidden behind nearer cubes")
                   if scene.level == 3 else tops),
            "q4": _q4_margin(scene),
            "star": Margin(vis["star"], "fraction", TOP_VISIBLE, "the starred top face hidden")}


def _margins_pass(scene: Scene) -> bool:
    """not ladder(scene).failing_margins(), without building the questions."""
    return all(m.ok for m in _margins(scene).values())


def ladder(scene: Scene) -> Ladder:
    pre = _pre(scene.level)
    m = _margins(scene)
    rungs = (
        Question(1, "cube_count", f"{pre} How many cubes make up the object?", cube_count(scene), m["q1"]),
        Question(2, "front_symmetric", f"{pre} {VIEWS} Is the view from FRONT mirror-symmetric left to right?",
                 front_symmetric(scene), m["probes"]),
        Question(3, "front_view_size", f"{pre} {VIEWS} Take the view from FRONT, cropped to the object: how "
                 "many squares wide and how many squares tall is it, and how many of its squares are filled?",
                 front_size(scene), m["tops"]),
        Question(4, "right_view", f"{pre} {VIEWS} Which drawing, 1, 2, 3 or 4, is the view from RIGHT?",
                 right_option(scene), m["q4"]),
        Question(5, "right_view_changes", f"{pre} {VIEWS} If the cube marked with a star were removed (nothing "
                 "else moves), would the view from RIGHT change?", counterfactual(edit(scene)), m["star"],
                 edit="remove the starred cube"),
    )
    open_q = Question(6, "top_view_count", f"{pre} How many squares are filled in the view from directly above "
                      "(the top view)? Explain how you found them.", top_count(scene), m["tops"])
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """mirror(left) = right: the same drawing answers (identity)."""
    return Question(4, "mirrored_left_view", f"{_pre(scene.level)} {VIEWS} The LEFT side is the side opposite "
                    "RIGHT. Which drawing, 1, 2, 3 or 4, is the mirror image of the view from the LEFT side?",
                    right_option(scene), _q4_margin(scene))


def minimal_pair(scene: Scene) -> Scene:
    """One cube added where the level allows, so that the right view gains exactly the toggle partner's extra cell:
    that drawing becomes correct and the old answer becomes the one-cell toggle. The first such place (sorted) whose
    item passes every margin."""
    if "toggle" not in scene.kinds:
        raise Reject("no_minimal_pair")
    k = scene.kinds.index("toggle")
    r0 = scene.kinds.index("right")
    want = tuple(scene.options[k])
    sx, sy, sz = scene.star
    kinds = list(scene.kinds)
    kinds[k], kinds[r0] = "right", "toggle"
    rcells = {(-z, -x) for x, _, z in scene.cubes}          # right_view's cells
    r = vx.grid_of(rcells)
    for c in legal_additions(scene.cubes, scene.level, scene.grid):
        if (c[0], c[1]) == (sx, sy):
            continue
        cell = (-c[2], -c[0])
        if (r if cell in rcells else vx.grid_of(rcells | {cell})) != want:      # right_view(cubes + (c,))
            continue
        twin = replace(scene, cubes=tuple(sorted(scene.cubes + (c,))), kinds=tuple(kinds))
        if not _q4_margin(twin).ok:         # the cheap margin first
            continue
        try:
            right_option(twin)              # the one part of the ladder that can reject
        except Reject:
            continue
        if _margins_pass(twin):
            return twin
    raise Reject("no_minimal_pair")


# --- sampling -----------------------------------------------------------------------------------------------------

class _Draws:
    """Uniform numbers from the generator, `BLOCK` at a time (one Generator call per block instead of one per
    number: each call costs about as much as the small sums it feeds), handed out one by one."""
    BLOCK = 256

    def __init__(self, rng: np.random.Generator):
        # One C-level iterator over the blocks, each drawn only when the one before has run out.
        blocks = iter(lambda: rng.random(self.BLOCK).tolist(), None)
        self.uniform = itertools.chain.from_iterable(blocks).__next__

    def below(self, n: int) -> int:
        # u <= 1 - 2**-53, and u * n rounds to a double below n for every n < 2**53: no guard needed.
        return int(self.uniform() * n)

    def between(self, lo: int, hi: int) -> int:
        return lo + int(self.uniform() * (hi - lo + 1))

    def chance(self, p: float) -> bool:
        return self.uniform() < p

    def shuffled(self, seq) -> list:
        out, u = list(seq), self.uniform
        for i in range(len(out) - 1, 0, -1):
            j = int(u() * (i + 1))          # below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def first(self, cands: list, ok):
        """A uniformly random element of `cands` among those for which ok(c) holds (None if none): tried in random
        order, so that only the ones tried are tested."""
        cands = list(cands)
        while cands:
            i = self.below(len(cands))
            cands[i], cands[-1] = cands[-1], cands[i]
            c = cands.pop()
            if ok(c):
                return c
        return None


def _heightmap(d: _Draws, level: int, symmetric: bool, mirrored: bool = False) -> list | None:
    """Lines of columns along x, one per y, whose front profile (tallest column per line) is a palindrome iff
    `symmetric`: every y of the profile's range holds a line, so the front view is exactly that profile. A line is
    a contiguous run (70%, placed to overlap the line built before it) or any k places. Lines are built nearest
    the viewer (largest y) first, each redrawn a few times until every column top in it keeps TOP_VISIBLE: a ray
    toward the viewer only gains y (every component of CAM.w is positive), so only the lines already built and the
    line itself can hide it. Connected, CUBES[0]..CUBES[1] cubes (one more at level 3, whose overhangs may take
    one away). `mirrored`: line j copies line wy-1-j, so that the whole set is mirror-symmetric in y. Sorted."""
    g, hmax = GRID[level], HMAX[level]
    box = _box(g, hmax)
    column, top = box.column, box.top
    # The draws inline: lo + int(u() * (hi - lo + 1)) is d.between(lo, hi), int(u() * n) d.below(n), u() < p
    # d.chance(p).
    u = d.uniform
    most = CUBES[1] + (level == 3)
    for _ in range(40):
        wy = 2 + int(u() * (g - 1))
        y0 = int(u() * (g - wy + 1))
        prof = [1 + int(u() * hmax) for _ in range(wy)]
        if symmetric:
            prof = prof[: (wy + 1) // 2] + prof[: wy // 2][::-1]
        elif prof == prof[::-1]:
            continue
        lines: dict[int, tuple[list, list]] = {}
        s = 0
        for j in range(wy - 1, -1, -1):
            y, pj = y0 + j, prof[j]
            column_y, top_y = column[y], top[y]
            copy = mirrored and j < wy // 2
            for _ in range(1 if copy else 6):
                if copy:
                    xs, hs = lines[wy - 1 - j]
                else:
                    k = 1 + int(u() * g)
                    if u() < 0.7:
                        lo, hi = 0, g - k
                        if lines:           # overlap the line built before (cubes on the floor touch)
                            near = lines[j + 1][0]
                            lo, hi = max(lo, near[0] - k + 1), min(hi, near[-1])
                        x0 = lo + int(u() * (hi - lo + 1))
                        xs = list(range(x0, x0 + k))
                    else:
                        xs = sorted(d.shuffled(range(g))[:k])
                    hs = []
                    for _ in range(k):
                        hs.append(1 + int(u() * pj))
                    hs[int(u() * k)] = pj
                    if u() < 0.6:         # lower columns nearer the viewer (+x) hide less; F stays the same
                        hs.sort(reverse=True)
                t = s
                for x, h in zip(xs, hs):
                    t |= column_y[x][h]
                for x, h in zip(xs, hs):            # box.hidden of each column top, inline
                    entry = top_y[x][h]
                    n = entry[2].get(t & entry[0])
                    if (box.count(entry, t) if n is None else n) > _TOP_HIDDEN:
                        break
                else:
                    lines[j], s = (xs, hs), t
                    break
            else:
                break
        if len(lines) == wy and CUBES[0] <= s.bit_count() <= most and box.connected(s):
            return box.members(s)
    return None


def _overhangs(d: _Draws, cubes: list, symmetric: bool, paired: bool) -> list | None:
    """Level 3: one to four changes, each taking out a supporting cube (one with a cube right above) or gluing one
    on in mid-air, keeping V connected; None if no cube overhangs at the end. The front view's symmetry holds by
    construction for a symmetric target: with `paired` (V mirror-symmetric in y) each change is made together with
    its mirror image; otherwise only changes that keep F's cells (a support taken out where another cube fills the
    same (y, z), a cube glued where (y, z) is already filled). An asymmetric target allows any change (F is
    checked by the caller). Sorted."""
    g = GRID[3]
    box = _box(g, HMAX[3])
    s = box.bits(cubes)
    ys = [c[1] for c in cubes]
    span = min(ys) + max(ys)
    keep = symmetric and not paired
    fcells = {(y, z) for _, y, z in cubes}

    def pair(c) -> int:
        t = (c[0], span - c[1], c[2])
        return box.bit[c] | (box.bit[t] if paired else 0)

    def take_out(s: int) -> int | None:
        m = s & (s >> 1) & box.ntop                             # a cube right above
        if keep:
            m &= box.along_x(box.twice_along_x(s))                  # and another cube at the same (y, z)
        c = d.first(box.members(m), lambda c: box.connected(s & ~pair(c)))
        return None if c is None else s & ~pair(c)

    def glue_on(s: int) -> int | None:
        cands = box.members(box.spread(s) & ~s & ~box.floor & ~((s & box.ntop) << 1))  # touching, nothing below
        if keep:
            cands = [c for c in cands if (c[1], c[2]) in fcells]
        if paired:
            cands = [c for c in cands if 0 <= span - c[1] < g]
        # An unpaired cube touches s: s stays connected. Only a mirrored twin can leave two parts.
        c = d.first(cands, lambda c: not paired or box.connected(s | pair(c)))
        return None if c is None else s | pair(c)
    for _ in range(d.between(1, 2) + 2 * d.chance(0.5)):
        # Either change at even odds; next to a bound of CUBES the one that moves away from it (a pair moves 2).
        n = s.bit_count()
        glue = True if n <= CUBES[0] + 1 else False if n >= CUBES[1] - 1 else d.chance(0.5)
        s = (glue_on(s) if glue else take_out(s)) or s
    if not s & ~box.floor & ~((s & box.ntop) << 1):       # no cube overhangs yet: one more change that makes one
        s = glue_on(s) or take_out(s)
        if s is None:
            return None
    return box.members(s)


@functools.lru_cache(maxsize=4096)
def _toggles(grid: tuple[str, ...], limit=(4, 4)) -> list[tuple[str, ...]]:
    """Every grid one cell away (a cell added or taken away inside the box grown by one), 4-connected, within
    `limit` (columns, rows)."""
    cells = vx.cells_of(grid)
    h, w = len(grid), len(grid[0])
    out = []
    for r in range(-1, h + 1):
        for c in range(-1, w + 1):
            t = vx.grid_of(cells ^ {(r, c)})
            if t and t != grid and vx.grid_connected(t) and len(t) <= limit[1] and len(t[0]) <= limit[0]:
                out.append(t)
    return tuple(sorted(set(out)))


def _others(d: _Draws, level: int, cubes, r, toggle):
    """The mirror distractor and the third one, or None when no choice keeps the drawings apart."""
    views = [("front", front_view(cubes)), ("back", back_view(cubes)), ("top", top_view(cubes))]
    # A symmetric right view is its own mirror image: the front view takes that slot (then the back or top view).
    second = [("mirror", vx.flip(r))] if vx.flip(r) != r else views

    def first_fit(seconds, thirds):
        for k2, g2 in seconds:
            for k3, g3 in thirds:
                grids = [r, toggle, g2, g3]
                if len(set(grids)) < 4:
                    continue
                dist = sorted(vx.grid_distance(r, x) for x in grids[1:])
                if dist[0] >= 1 and (level == 3 or dist[1] >= 2):
                    return [(k2, g2), (k3, g3)]
        return None

    if level == 3:
        return first_fit(second, [("toggle2", t) for t in d.shuffled(_toggles(r))])
    third = d.shuffled(views)
    found = first_fit(second, third)
    if found is None:
        # The sheet's F, T or B; when none of them stays >= 2 cells from R and apart from the others (small
        # symmetric objects, where F = B and often F = R), a grid two toggles away from R.
        two = sorted({t2 for t in _toggles(r) for t2 in _toggles(t)} - set(_toggles(r)) - {r})
        fall = [("toggle_two", t) for t in d.shuffled(two)[:6]]
        found = first_fit(second + fall, third + fall)
    return found


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first (Q2's symmetry, Q4's index, Q5's answer), then candidates built to meet them: a heightmap
    with the targeted front profile, at level 3 changed by overhangs that keep the targeted symmetry, a star drawn
    among the column tops whose line along y answers Q5 as targeted, then the visibility margins (bit masks over
    the level's box), the distractors and the minimal pair. The generator is read a block of numbers at a time."""
    if level not in (1, 2, 3):
        raise ValueError(f"orthographic: level must be 1..3, got {level}")
    d = _Draws(rng)
    symmetric = d.chance(0.5)              # Q2 target
    q4 = d.below(4)                        # Q4 target index
    q5 = d.chance(0.5)                     # Q5 target: the right view changes
    g = GRID[level]
    box = _box(g, HMAX[level])
    for _ in range(120 if level == 3 else 40):
        paired = level == 3 and symmetric and d.chance(PAIRED)
        cubes = _heightmap(d, level, symmetric, mirrored=paired)
        if cubes is None:
            continue
        if level == 3:
            cubes = _overhangs(d, cubes, symmetric, paired)
            if cubes is None or not CUBES[0] <= len(cubes) <= CUBES[1]:
                continue
        cubes = tuple(cubes)
        front = front_view(cubes)
        if (vx.flip(front) == front) != symmetric:
            continue                        # only an asymmetric target's overhangs can land here
        s = box.bits(cubes)
        tops = box.members(box.tops(s))     # _column_tops(cubes)
        if any(box.hidden(s, (c, "+z")) > _TOP_HIDDEN for c in tops):
            continue                        # the cheap check first: most rejected scenes hide a column top
        depth = Counter((x, z) for x, _, z in cubes)        # cubes per (x, z): the right view's depth there
        star = d.first([c for c in tops if (depth[(c[0], c[2])] == 1) == q5],
                       lambda c: box.connected(s & ~box.bit[c]))
        if star is None:
            continue
        if not _probes_and_cubes_seen(cubes, level, g):
            continue
        r = right_view(cubes)
        rcells = {(-z, -x) for x, _, z in cubes}
        toggles = sorted({vx.grid_of(rcells | {(-c[2], -c[0])}) for c in legal_additions(cubes, level, g)
                          if (c[0], c[1]) != star[:2] and (-c[2], -c[0]) not in rcells})
        for toggle in d.shuffled(toggles)[:4]:
            others = _others(d, level, cubes, r, toggle)
            if others is None:
                continue
            order = d.shuffled([("toggle", toggle)] + others)
            order.insert(q4, ("right", r))
            scene = Scene(level, g, cubes, star, tuple(x for _, x in order), tuple(k for k, _ in order))
            if not _margins_pass(scene):    # (the four drawings differ: right_option cannot reject)
                continue
            try:
                minimal_pair(scene)
            except Reject:
                continue
            return scene
    raise Reject("no_scene")


# --- drawing ------------------------------------------------------------------------------------------------------

def layout(scene: Scene) -> dict:
    """Pixel geometry shared by drawing and tests: scale, origin and the two arrows (tail, tip) with label centres."""
    g, hmax = scene.grid, HMAX[scene.level]
    a = np.asarray(scene.cubes)
    yc, xc = (a[:, 1].min() + a[:, 1].max() + 1) / 2, (a[:, 0].min() + a[:, 0].max() + 1) / 2
    front = (np.array([g + 1.7, yc, 0.0]), np.array([g + 0.25, yc, 0.0]))
    right = (np.array([xc, g + 1.7, 0.0]), np.array([xc, g + 0.25, 0.0]))
    box = [(x, y, z) for x in (0, g) for y in (0, g) for z in (0, hmax)]
    pts = np.array(box + [front[0], right[0]], dtype=float)
    region = (SAFE_BORDER_PX + 70, SAFE_BORDER_PX + 8, 768 - SAFE_BORDER_PX - 70, PANEL_TOP - 40)
    s, origin = pj.fit(CAM, pts, region, s_max=EDGE_PX[1])
    out = {"s": s, "origin": origin}
    for name, (tail, tip) in (("FRONT", front), ("RIGHT", right)):
        t, p = CAM.project(tail, s, origin), CAM.project(tip, s, origin)
        d = (t - p) / np.linalg.norm(t - p)
        out[name] = (t, p, t + d * 34.0)
    return out


def _star(canvas: Canvas, centre, r: float) -> None:
    ang = np.radians(-90 + 36 * np.arange(10))
    rad = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
    pts = np.column_stack([centre[0] + rad * np.cos(ang), centre[1] + rad * np.sin(ang)])
    shapes.polygon(canvas, pts, Style(stroke=BLACK, fill=STAR_RGB, width_px=1.5))


_OPTION_LABEL = LABEL.with_(font_px=22.0)


def _panel(canvas: Canvas, grid: tuple[str, ...], label: str, cx: float) -> None:
    """One candidate drawing: its cropped grid of CELL_PX squares, filled grey or white, black lines."""
    ctx = canvas.ctx
    h, w = len(grid), len(grid[0])
    x0, y0 = cx - w * CELL_PX / 2, PANEL_TOP + 30
    # The cells of one colour as one path: they lie on whole pixels (the panel centres are), so that filling them
    # together or one by one covers the same pixels alike.
    for colour, filled in ((GREY, True), (WHITE, False)):
        for r, row in enumerate(grid):
            for c, ch in enumerate(row):
                if (ch == vx.FILLED) == filled:
                    ctx.rectangle(x0 + c * CELL_PX, y0 + r * CELL_PX, CELL_PX, CELL_PX)
        ctx.set_source_rgb(*colour)
        ctx.fill()
    ctx.set_source_rgb(*BLACK)
    ctx.set_line_width(2.0)
    for r in range(h + 1):
        ctx.move_to(x0, y0 + r * CELL_PX)
        ctx.line_to(x0 + w * CELL_PX, y0 + r * CELL_PX)
    for c in range(w + 1):
        ctx.move_to(x0 + c * CELL_PX, y0)
        ctx.line_to(x0 + c * CELL_PX, y0 + h * CELL_PX)
    ctx.stroke()
    draw_text_px(canvas, label, (cx, PANEL_TOP + 12), _OPTION_LABEL)


def draw(scene: Scene, canvas: Canvas) -> None:
    lay = layout(scene)
    s, origin = lay["s"], lay["origin"]
    if s < EDGE_PX[0]:
        raise Reject("cubes_too_small")
    g = scene.grid
    floor = [((i, 0, 0), (i, g, 0)) for i in range(g + 1)] + [((0, i, 0), (g, i, 0)) for i in range(g + 1)]
    segs = [tuple(map(tuple, CAM.project(np.array(seg, float), s, origin))) for seg in floor]
    shapes.segments(canvas, segs, Style(stroke=GREY_LIGHT, width_px=2.0), register=False)
    pj.draw_cubes(canvas.ctx, scene.cubes, CAM, s, origin, tint={c: CUBE_RGB for c in scene.cubes})
    top = np.array(pj._FACE_CORNERS["+z"], float) + np.asarray(scene.star, float)
    _star(canvas, CAM.project(top, s, origin).mean(axis=0), 0.24 * s)
    arrow = Style(stroke=BLACK, width_px=4.0)
    for name in ("FRONT", "RIGHT"):
        tail, tip, lab = lay[name]
        shapes.arrow(canvas, tuple(tail), tuple(tip), arrow, head_px=18.0)
        w, h = text_size(canvas, name, LABEL)
        box = np.array([[lab[0] - w / 2, lab[1] - h / 2], [lab[0] + w / 2, lab[1] + h / 2]])
        if not canvas.inside_safe(box):
            raise Reject("label_clipped")
        draw_text_px(canvas, name, tuple(lab), LABEL)
    xs = np.linspace(SAFE_BORDER_PX, 768 - SAFE_BORDER_PX, 5)
    for i, grid in enumerate(scene.options):
        _panel(canvas, grid, OPTIONS[i], float((xs[i] + xs[i + 1]) / 2))


DOMAIN = Domain(
    id="orthographic", family="solid", title="Orthographic views",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, minimal_pair_keeps_q1=False, rephrase_q4=rephrase_q4, rephrase_map="identity",
    version=3,
    description="A unit-cube object in TRI with FRONT and RIGHT arrows and four view drawings: cube count, front "
                "symmetry, the front view, which drawing is the right view, and whether removing the starred cube "
                "changes it. Level 3 glues overhanging cubes.",
    balance_keys=("front_symmetric", "right_view", "right_view_changes"),
)
