"""Orthographic views: a small object of unit cubes drawn in TRI on a floor grid, with a FRONT arrow pointing at its
+x side (the picture's left) and a RIGHT arrow at its +y side (the picture's right); below it four drawings 1-4 of
binary views. The ladder walks cube count -> is the front view symmetric -> the front view row by row -> which
drawing is the right view -> would removing the starred cube change the right view; the open question asks how many
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
Q3's answer is a Record row1..rowN (an Ordered list cannot hold two equal rows), each row written with '#' and '-'
(not '.', which the answer parser strips from the ends of a token, so that '#..' and '#' would read alike).
Legibility: cubes >= 48 px per edge, view cells 32 px, labels bold 20-22 px."""
from __future__ import annotations

import functools
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
PAIRED = 0.5                         # L3 symmetric target: share of overhang changes made in mirror pairs
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
    lo = [min(c[i] for c in cubes) for i in range(3)]
    hi = [max(c[i] for c in cubes) for i in range(3)]
    probes = [c for c in legal_additions(cubes, level, grid)
              if lo[0] <= c[0] <= hi[0] and lo[1] <= c[1] <= hi[1] and lo[2] <= c[2] <= hi[2]]
    tops = _column_tops(cubes)
    # One pass over every face wanted (each face's fraction stands alone): the column tops and the star's top,
    # at level 3 every cube's three faces, then the probes' three faces.
    faces = [(c, "+z") for c in tops] + [(star, "+z")]
    n_top = len(faces)
    if level == 3:
        faces += [(c, ax) for c in cubes for ax in vx.AXES]
    n_every = len(faces)
    faces += [(c, ax) for c in probes for ax in vx.AXES]
    vis = vx.face_visibility(cubes, faces)
    top_vis = vis[:n_top]
    every = vis[n_top:n_every].reshape(-1, 3).max(axis=1) if level == 3 else np.ones(1)
    probe_vis = vis[n_every:].reshape(len(probes), 3).max(axis=1)
    return {"tops": float(top_vis[:-1].min()), "probes": float(probe_vis.min()) if len(probes) else 1.0,
            "cubes": float(every.min()), "star": float(top_vis[-1])}


# --- answers ------------------------------------------------------------------------------------------------------

def cube_count(scene: Scene) -> Count:
    return Count(len(scene.cubes), low=1, high=20)


def front_symmetric(scene: Scene) -> Choice:
    f = front_view(scene.cubes)
    return Choice(YES if vx.flip(f) == f else NO, (YES, NO))


def row_options(width: int) -> tuple[str, ...]:
    """Every row of `width` squares with at least one filled, '#' first."""
    rows = ["".join(vx.FILLED if (k >> (width - 1 - i)) & 1 else vx.EMPTY for i in range(width))
            for k in range(1, 2 ** width)]
    return tuple(sorted(rows, key=lambda r: (-r.count(vx.FILLED), r)))


def front_rows(scene: Scene) -> Record:
    """The front view as fields row1 (top) .. rowN: an Ordered list cannot hold two equal rows."""
    f = front_view(scene.cubes)
    opts = row_options(len(f[0]))
    return Record(tuple((f"row{i + 1}", Choice(row, opts)) for i, row in enumerate(f)))


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


def ladder(scene: Scene) -> Ladder:
    lv, pre = scene.level, _pre(scene.level)
    vis = visibility(scene)
    tops = Margin(vis["tops"], "fraction", TOP_VISIBLE, "a column top hidden behind nearer cubes")
    probes = Margin(vis["probes"], "fraction", PROBE_VISIBLE, "a place for one more cube hidden from view")
    q1m = Margin(vis["cubes"], "fraction", PROBE_VISIBLE, "a cube hidden behind nearer cubes") if lv == 3 else tops
    rungs = (
        Question(1, "cube_count", f"{pre} How many cubes make up the object?", cube_count(scene), q1m),
        Question(2, "front_symmetric", f"{pre} {VIEWS} Is the view from FRONT mirror-symmetric left to right?",
                 front_symmetric(scene), probes),
        Question(3, "front_view_rows", f"{pre} {VIEWS} Write the view from FRONT row by row, cropped to the "
                 "object: row1 is the top row, each row written with # for a filled square and - for an empty one "
                 "(for example row1=#--; row2=###).", front_rows(scene), tops),
        Question(4, "right_view", f"{pre} {VIEWS} Which drawing, 1, 2, 3 or 4, is the view from RIGHT?",
                 right_option(scene), _q4_margin(scene)),
        Question(5, "right_view_changes", f"{pre} {VIEWS} If the cube marked with a star were removed (nothing "
                 "else moves), would the view from RIGHT change?", counterfactual(edit(scene)),
                 Margin(vis["star"], "fraction", TOP_VISIBLE, "the starred top face hidden"),
                 edit="remove the starred cube"),
    )
    open_q = Question(6, "top_view_count", f"{pre} How many squares are filled in the view from directly above "
                      "(the top view)? Explain how you found them.", top_count(scene), tops)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """mirror(left) = right: the same drawing answers (identity)."""
    q4 = ladder(scene).rungs[3]
    return Question(4, "mirrored_left_view", f"{_pre(scene.level)} {VIEWS} The LEFT side is the side opposite "
                    "RIGHT. Which drawing, 1, 2, 3 or 4, is the mirror image of the view from the LEFT side?",
                    q4.answer, q4.margin)


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
    for c in legal_additions(scene.cubes, scene.level, scene.grid):
        if (c[0], c[1]) == (sx, sy) or right_view(scene.cubes + (c,)) != want:
            continue
        twin = replace(scene, cubes=tuple(sorted(scene.cubes + (c,))), kinds=tuple(kinds))
        if not _q4_margin(twin).ok:         # the cheap margin first
            continue
        try:
            if not ladder(twin).failing_margins():
                return twin
        except Reject:
            continue
    raise Reject("no_minimal_pair")


# --- sampling -----------------------------------------------------------------------------------------------------

def _heightmap(rng: np.random.Generator, level: int, symmetric: bool) -> list[tuple[int, int, int]] | None:
    """Columns whose front profile (tallest column per y) is a palindrome iff `symmetric`: every y of the profile's
    range holds a column, so the front view is exactly that profile. Connected, CUBES[0]..CUBES[1] cubes."""
    g, hmax = GRID[level], HMAX[level]
    for _ in range(40):
        wy = int(rng.integers(2, g + 1))
        y0 = int(rng.integers(0, g - wy + 1))
        prof = rng.integers(1, hmax + 1, size=wy).tolist()     # Python ints: small lists beat numpy here
        if symmetric:
            prof = prof[: (wy + 1) // 2] + prof[: wy // 2][::-1]
        elif prof == prof[::-1]:
            continue
        cubes = []
        for j in range(wy):
            k = int(rng.integers(1, g + 1))
            if rng.random() < 0.7:
                x0 = int(rng.integers(0, g - k + 1))
                xs = range(x0, x0 + k)
            else:
                xs = sorted(rng.choice(g, size=k, replace=False).tolist())
            hs = rng.integers(1, prof[j] + 1, size=k).tolist()
            hs[int(rng.integers(k))] = prof[j]
            if rng.random() < 0.6:          # lower columns nearer the viewer (+x) hide less; F stays the same
                hs.sort(reverse=True)
            cubes += [(x, y0 + j, z) for x, h in zip(xs, hs) for z in range(h)]
        if CUBES[0] <= len(cubes) <= CUBES[1] + (level == 3) and vx.connected(cubes):
            return cubes
    return None


def _overhangs(rng: np.random.Generator, cubes: list, symmetric: bool) -> list | None:
    """Level 3: take out a supporting cube or glue one on in mid-air, once to three times, keeping V connected and
    the front view's symmetry as targeted (a few tries). For a symmetric target each change is made together with
    its mirror image across the object's middle in y, which keeps most front views symmetric."""
    memo: dict = {}                         # the first change's choices from `cubes`, the same on every try
    for _ in range(6):
        out = _overhang_once(rng, cubes, symmetric and rng.random() < PAIRED, memo)
        if out is not None:
            front = front_view(out)
            if (vx.flip(front) == front) == symmetric:
                return out
    return None


def _overhang_once(rng: np.random.Generator, cubes: list, paired: bool, memo: dict | None = None) -> list | None:
    s = set(cubes)
    ys = [c[1] for c in cubes]
    span = min(ys) + max(ys)

    def twin(c):
        return (c[0], span - c[1], c[2]) if paired else c
    if memo is None:
        memo = {}
    fresh = True                            # s is still `cubes`: the choices may come from `memo`
    for _ in range(int(rng.integers(1, 3)) + 2 * (rng.random() < 0.5)):
        if rng.random() < 0.5:
            cands = memo.get(("out", paired)) if fresh else None
            if cands is None:
                cands = _removable(s, paired, twin)
                if fresh:
                    memo[("out", paired)] = cands
            if not cands:
                continue
            c = cands[int(rng.integers(len(cands)))]
            s -= {c, twin(c)}
        else:
            cands = memo.get(("in", paired)) if fresh else None
            if cands is None:
                cands = _gluable(s, paired, twin)
                if fresh:
                    memo[("in", paired)] = cands
            if not cands:
                continue
            c = cands[int(rng.integers(len(cands)))]
            s |= {c, twin(c)}
            # s was connected and c touches it: only a mirrored twin can leave the set in two parts.
            if twin(c) != c and not vx.connected(s):
                return None
        fresh = False
    if not any(z > 0 and (x, y, z - 1) not in s for x, y, z in s):
        return None
    return sorted(s)


def _removable(s: set, paired: bool, twin) -> list:
    """Supporting cubes (a cube right above) that may go, with their twins, keeping s connected (sorted)."""
    if not paired:                          # twin(c) is c: the same choices, fewer steps
        cands = [c for c in sorted(s) if (c[0], c[1], c[2] + 1) in s]
        cut = vx.cut_cubes(s) if len(cands) > 1 else None
        return [c for c in cands if (c not in cut if cut is not None else vx.connected(s - {c}))]
    cands = [c for c in sorted(s) if (c[0], c[1], c[2] + 1) in s and twin(c) in s
             and (twin(c)[0], twin(c)[1], c[2] + 1) in s]
    # Taking one cube out keeps s connected iff it is no cut cube of s (one walk instead of one per cube).
    cut = vx.cut_cubes(s) if sum(twin(c) == c for c in cands) > 1 else None
    return [c for c in cands
            if (c not in cut if cut is not None and twin(c) == c else vx.connected(s - {c, twin(c)}))]


def _gluable(s: set, paired: bool, twin) -> list:
    """Empty places in mid-air (nothing below) glued to s where a cube and its twin may go (sorted)."""
    if not paired:
        return [c for c in legal_additions(s, 3, GRID[3]) if c[2] >= 1 and (c[0], c[1], c[2] - 1) not in s]
    return [c for c in legal_additions(s, 3, GRID[3]) if c[2] >= 1 and (c[0], c[1], c[2] - 1) not in s
            and 0 <= twin(c)[1] < GRID[3] and (twin(c)[0], twin(c)[1], c[2] - 1) not in s]


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


def _others(rng, level: int, cubes, r, toggle):
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
                d = sorted(vx.grid_distance(r, x) for x in grids[1:])
                if d[0] >= 1 and (level == 3 or d[1] >= 2):
                    return [(k2, g2), (k3, g3)]
        return None

    if level == 3:
        extra = _toggles(r)
        return first_fit(second, [("toggle2", extra[i]) for i in rng.permutation(len(extra))])
    third = [views[i] for i in rng.permutation(3)]
    found = first_fit(second, third)
    if found is None:
        # The sheet's F, T or B; when none of them stays >= 2 cells from R and apart from the others (small
        # symmetric objects, where F = B and often F = R), a grid two toggles away from R.
        two = sorted({t2 for t in _toggles(r) for t2 in _toggles(t)} - set(_toggles(r)) - {r})
        fall = [("toggle_two", two[int(i)]) for i in rng.permutation(len(two))[:6]]
        found = first_fit(second + fall, third + fall)
    return found


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"orthographic: level must be 1..3, got {level}")
    symmetric = bool(rng.integers(2))      # Q2 target
    q4 = int(rng.integers(4))              # Q4 target index
    q5 = bool(rng.integers(2))             # Q5 target: the right view changes
    # A symmetric front view survives level 3's overhangs about four times less often: more tries keep Q2 at 50/50.
    for _ in range(160 if symmetric and level == 3 else 40):
        cubes = _heightmap(rng, level, symmetric)
        if cubes is None:
            continue
        if level == 3:
            cubes = _overhangs(rng, cubes, symmetric)
            if cubes is None:
                continue
        cubes = tuple(sorted(cubes))
        # Levels 1-2: `_heightmap` returned a connected set of distinct cubes within CUBES, so this only tests
        # level 3's overhangs.
        if level == 3 and (not (CUBES[0] <= len(cubes) <= CUBES[1]) or not vx.connected(cubes)):
            continue
        front = front_view(cubes)
        if (vx.flip(front) == front) != symmetric:
            continue
        row_count = Counter((x, z) for x, _, z in cubes)    # cubes per (x, z): the right view's depth there
        tops = _column_tops(cubes)
        stars = [c for c in tops if (row_count[(c[0], c[2])] == 1) == q5]
        if len(stars) > 1:
            cut = vx.cut_cubes(cubes)       # cubes are connected (checked above)
            stars = [c for c in stars if c not in cut]
        else:
            stars = [c for c in stars if vx.connected(set(cubes) - {c})]
        if not stars:
            continue
        star = stars[int(rng.integers(len(stars)))]
        r = right_view(cubes)
        if vx.face_visibility(cubes, [(c, "+z") for c in tops]).min() < TOP_VISIBLE:
            continue                        # the cheap check first: most rejected scenes hide a column top
        vis = visibility(Scene(level, GRID[level], cubes, star, (r,), ("right",)))
        if vis["probes"] < PROBE_VISIBLE or vis["cubes"] < PROBE_VISIBLE:
            continue
        rcells = {(-z, -x) for x, _, z in cubes}
        toggles = sorted({vx.grid_of(rcells | {(-c[2], -c[0])}) for c in legal_additions(cubes, level, GRID[level])
                          if (c[0], c[1]) != star[:2] and (-c[2], -c[0]) not in rcells})
        for i in rng.permutation(len(toggles))[:4]:
            toggle = toggles[i]
            others = _others(rng, level, cubes, r, toggle)
            if others is None:
                continue
            order = [x for j in rng.permutation(3) for x in [([("toggle", toggle)] + others)[j]]]
            order.insert(q4, ("right", r))
            scene = Scene(level, GRID[level], cubes, star, tuple(g for _, g in order), tuple(k for k, _ in order))
            if ladder(scene).failing_margins():
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


def _panel(canvas: Canvas, grid: tuple[str, ...], label: str, cx: float) -> None:
    """One candidate drawing: its cropped grid of CELL_PX squares, filled grey or white, black lines."""
    ctx = canvas.ctx
    h, w = len(grid), len(grid[0])
    x0, y0 = cx - w * CELL_PX / 2, PANEL_TOP + 30
    for r, row in enumerate(grid):
        for c, ch in enumerate(row):
            ctx.rectangle(x0 + c * CELL_PX, y0 + r * CELL_PX, CELL_PX, CELL_PX)
            ctx.set_source_rgb(*(GREY if ch == vx.FILLED else WHITE))
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
    draw_text_px(canvas, label, (cx, PANEL_TOP + 12), LABEL.with_(font_px=22.0))


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
    version=1,
    description="A unit-cube object in TRI with FRONT and RIGHT arrows and four view drawings: cube count, front "
                "symmetry, the front view, which drawing is the right view, and whether removing the starred cube "
                "changes it. Level 3 glues overhanging cubes.",
    balance_keys=("front_symmetric", "right_view", "right_view_changes"),
)
