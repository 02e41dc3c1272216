"""Domain-specific tests for cube_nets. The chirality-dependent answers are re-derived by an independent route: every
square of the net is folded in 3-D by explicit hinge rotations (Rodrigues, floats) about the edge it shares with its
parent, the folded squares are checked to close up into one unit cube with printed sides outward, and the 24 views
are built from rotations generated here (closure of two quarter turns) with turns read off by atan2. These are
compared with the module's rolling bookkeeping for the net, the correct candidate and every distractor. The
rendered glyphs are checked on the pixels: the ink centroid of F, L and P on each drawn face must lie where the
face's glyph-up and glyph-right vectors, projected by the ISO formulas written out here, put it."""
import math
from functools import lru_cache
from itertools import product

import cairo
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import scene_from_json, scene_to_json
from grip.domains.solid import _cubenet as cn
from grip.domains.solid import cube_nets as m
from grip.renderers.canvas import Canvas
from domain_scenes import accepted_scene

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])
FAST = settings(max_examples=25, deadline=None)


def accepted(seed: int, level: int) -> m.Scene:
    return accepted_scene(m, seed, level, 60)


# --- the independent fold -----------------------------------------------------------------------------------------

def rodrigues(axis, deg):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    t = math.radians(deg)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(t) * kx + (1 - math.cos(t)) * kx @ kx


def page_corners(cell):
    """tl, tr, br, bl of a cell on the page (x right, y up, rows downward), z = 0."""
    c, r = cell
    return np.array([(c, -r, 0), (c + 1, -r, 0), (c + 1, -r - 1, 0), (c, -r - 1, 0)], float)


def fold(cells, turns):
    """Per square: (folded corners, outward normal, glyph-up), folding every child by +90 deg about e_z x step
    through the shared edge, away from the reader. Transforms are (R, t): p -> R p + t, composed along the BFS tree."""
    tf = {0: (np.eye(3), np.zeros(3))}
    todo = [0]
    while todo:
        i = todo.pop(0)
        for j, cj in enumerate(cells):
            ci = cells[i]
            if j in tf or abs(ci[0] - cj[0]) + abs(ci[1] - cj[1]) != 1:
                continue
            step = np.array([cj[0] - ci[0], ci[1] - cj[1], 0.0])
            # a point on the shared edge: the midpoint between the two centres
            q = np.array([ci[0] + 0.5 + step[0] / 2, -ci[1] - 0.5 + step[1] / 2, 0.0])
            h = rodrigues(np.cross((0, 0, 1), step), 90)
            r_p, t_p = tf[i]
            # child point p -> q + h (p - q), then the parent's transform
            tf[j] = (r_p @ h, r_p @ (q - h @ q) + t_p)
            todo.append(j)
    assert len(tf) == len(cells)
    up = {0: (0, 1, 0), 90: (1, 0, 0), 180: (0, -1, 0), 270: (-1, 0, 0)}
    out = []
    for i, cell in enumerate(cells):
        r, t = tf[i]
        corners = page_corners(cell) @ r.T + t
        tl, tr, _, bl = corners
        normal = np.cross(bl - tl, tr - tl)
        out.append((corners, np.rint(normal).astype(int), np.rint(r @ up[turns[i]]).astype(int)))
    return out


def closes_into_cube(folded) -> bool:
    centres = np.array([c.mean(axis=0) for c, _, _ in folded])
    centre = centres.mean(axis=0)
    verts = {tuple(np.rint(2 * (p - centre)).astype(int)) for c, _, _ in folded for p in c}
    outward = all(n @ (c.mean(axis=0) - centre) > 0.49 for c, n, _ in folded)
    return len({tuple(n) for _, n, _ in folded}) == 6 and verts == set(product((-1, 1), repeat=3)) and outward


def rotations_here():
    qx = np.rint(rodrigues((1, 0, 0), 90)).astype(int)
    qz = np.rint(rodrigues((0, 0, 1), 90)).astype(int)
    seen = {tuple(np.eye(3, dtype=int).ravel())}
    todo = [np.eye(3, dtype=int)]
    while todo:
        a = todo.pop()
        for g in (qx, qz):
            b = g @ a
            if tuple(b.ravel()) not in seen:
                seen.add(tuple(b.ravel()))
                todo.append(b)
    return [np.array(x).reshape(3, 3) for x in sorted(seen)]


ROTS = rotations_here()
WORLD = {"+z": np.array([0, 0, 1]), "+x": np.array([1, 0, 0]), "+y": np.array([0, 1, 0])}
REF = {"+z": np.array([-1, 0, 0]), "+x": np.array([0, 0, 1]), "+y": np.array([0, 0, 1])}


def cw_turn(face, v) -> int:
    """Clockwise angle seen from outside the face from its reference direction to v."""
    n, ref = WORLD[face], REF[face]
    ccw = math.degrees(math.atan2(n @ np.cross(ref, v), ref @ v))
    return int(round(-ccw)) % 360


def views_here(cells, letters, turns):
    folded = fold(cells, turns)
    out = set()
    for o in ROTS:
        view = []
        for face in ("+z", "+x", "+y"):
            i = next(k for k, (_, n, _) in enumerate(folded) if tuple(o @ n) == tuple(WORLD[face]))
            view.append((letters[i], cw_turn(face, o @ folded[i][2])))
        out.add(tuple(view))
    return out


def opposite_here(cells, letters):
    folded = fold(cells, (0,) * 6)
    return {letters[i]: letters[next(j for j, (_, n2, _) in enumerate(folded) if tuple(n2) == tuple(-n))]
            for i, (_, n, _) in enumerate(folded)}


# --- the fold itself ------------------------------------------------------------------------------------------------

def test_all_eleven_nets_fold_in_every_placement_and_no_other_hexomino_does():
    assert len(cn.NETS) == 11 and len(rotations_here()) == 24
    shapes = set()
    for _, cells in cn.NETS:
        placed = {cn.place(cells, g) for g in cn.D4}
        assert not placed & shapes            # eleven different free hexominoes
        shapes |= placed
        for p in placed:
            assert closes_into_cube(fold(p, (0,) * 6)) and cn.folds(p)
    # every fixed hexomino grown from a domino; those not among the nets' placements must not fold
    polys = {((0, 0), (1, 0)), ((0, 0), (0, 1))}
    for _ in range(4):
        polys = {cn.place(tuple(sorted(set(p) | {(c + dc, r + dr)})), (0, False))
                 for p in polys for c, r in p for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
                 if (c + dc, r + dr) not in p}
    assert len(polys) == 216                 # fixed hexominoes
    for p in polys - shapes:
        assert not closes_into_cube(fold(p, (0,) * 6)) and not cn.folds(p)


@FAST
@given(st.integers(0, 10), st.integers(0, 7), st.lists(st.sampled_from(cn.TURNS), min_size=6, max_size=6))
def test_rolling_bookkeeping_equals_hinge_rotations(net, g, turns):
    cells = cn.place(cn.NETS[net][1], cn.D4[g])
    folded = fold(cells, tuple(turns))
    frames = cn.face_frames(cells, tuple(turns))
    for (_, n, u), (n2, u2) in zip(folded, frames):
        assert tuple(n) == n2 and tuple(u) == u2
    assert set(cn.views(cells, cn.LETTERS, tuple(turns))) == views_here(cells, cn.LETTERS, tuple(turns))
    # every page lattice point of the net folds onto one cube vertex (the red dot's corner is well defined)
    where = {}
    for (c, r), (corners, _, _) in zip(cells, folded):
        for (dc, dr), p in zip(((0, 0), (1, 0), (1, 1), (0, 1)), corners):
            where.setdefault((c + dc, r + dr), set()).add(tuple(np.rint(2 * p).astype(int)))
    assert all(len(v) == 1 for v in where.values())


# --- sampled scenes against the independent fold -----------------------------------------------------------------

@FAST
@given(SEEDS, LEVELS)
def test_candidates_against_the_independent_fold(seed, level):
    s = accepted(seed, level)
    vs = views_here(s.cells, s.letters, s.turns)
    twin = m.minimal_pair(s)
    vt = views_here(twin.cells, twin.letters, twin.turns)
    good = [i for i, c in enumerate(s.candidates) if c in vs]
    assert len(good) == 1 and m.foldable_cube(s).value == str(good[0] + 1)
    good_t = [i for i, c in enumerate(twin.candidates) if c in vt]
    assert len(good_t) == 1 and m.foldable_cube(twin).value == str(good_t[0] + 1) != str(good[0] + 1)
    opp = opposite_here(s.cells, s.letters)
    kinds = []
    for i, cand in enumerate(s.candidates):
        if i == good[0]:
            continue
        d = min(sum(a != b for a, b in zip(cand, v)) for v in vs)
        assert d >= m.DIST_MIN[level]
        letters = [x for x, _ in cand]
        if any(opp[a] == b for a in letters for b in letters):
            kinds.append(m.OPPOSITE)
        elif not any([x for x, _ in v] == letters for v in vs):
            kinds.append(m.MIRROR)
        else:
            kinds.append(m.TURNED)
        assert m.reason_of(s, cand) == kinds[-1]
    assert sorted(kinds) == sorted(m.REASONS)            # one distractor of each type
    # the mirror distractor is the true view of the glyph-swapped net
    assert s.candidates[good_t[0]] in vt and m.reason_of(s, s.candidates[good_t[0]]) == m.MIRROR
    assert m.ladder(s).rungs[1].answer.value == opp["P"]


@FAST
@given(SEEDS, LEVELS)
def test_corner_and_moved_square_against_the_independent_fold(seed, level):
    s = accepted(seed, level)
    folded = fold(s.cells, s.turns)
    cell, corner = s.dot
    p = folded[cell][0][corner]
    at = sorted(s.letters[i] for i, (c, _, _) in enumerate(folded) if min(np.linalg.norm(c - p, axis=1)) < 1e-9)
    assert tuple(at) == m.ladder(s).rungs[2].answer.value and len(at) == 3
    # Q5: refold with Y on the ghost cell
    e = m.edit(s)
    assert e.cells[s.leaf] == s.ghost and sum(e.cells[i] != s.cells[i] for i in range(6)) == 1
    refolded = fold(e.cells, e.turns)
    normals = [tuple(n) for _, n, _ in refolded]
    q5 = m.ladder(s).rungs[4].answer.value
    if len(set(normals)) < 6:
        assert q5 == m.NO_CUBE
    else:
        assert closes_into_cube(refolded)
        u = tuple(refolded[s.leaf][2])
        assert q5 == e.letters[normals.index(u)]
        before = tuple(folded[s.leaf][2])
        assert q5 != s.letters[[tuple(n) for _, n, _ in folded].index(before)]   # not a no-op


# --- hand-worked examples -------------------------------------------------------------------------------------------

# The Latin cross: F above P, G J L in the row with P (G left, J and L right), R below P.
CROSS_CELLS = ((1, 0), (0, 1), (1, 1), (2, 1), (3, 1), (1, 2))
CROSS_LETTERS = ("F", "G", "P", "J", "L", "R")


def cross_scene(turns=(0,) * 6, leaf=4, ghost=(1, 3), dot=(2, 0)):
    return m.Scene(2, cn.CROSS, CROSS_CELLS, CROSS_LETTERS, turns, dot, leaf, ghost,
                   ((("P", 90), ("J", 90), ("F", 180)), (("P", 90), ("F", 180), ("J", 90)),
                    (("P", 90), ("J", 90), ("L", 180)), (("P", 0), ("J", 90), ("F", 180))), (3, 4), 2)


def test_latin_cross_by_hand():
    # On paper, with P facing the reader and the cube behind the page: F folds back to the top (normal +y), its
    # letter's top now pointing away from the reader (-z); R folds to the bottom (-y) with its top toward the
    # reader (+z); G (-x) and J (+x) keep their tops at +y; L, hinged on J, becomes the back (-z), top +y.
    # Opposite pairs: P-L, F-R, G-J. Seen with P on top, J left-front and F right-front (the body as it is):
    # top P, up +y: from the reference -x one clockwise quarter turn seen from above (-x -> +y): 90.
    # Left-front J, up +y: from +z, clockwise seen from +x, +z -> +y: 90. Right-front F, up -z: 180.
    s = cross_scene()
    vs = set(cn.views(s.cells, s.letters, s.turns))
    assert (("P", 90), ("J", 90), ("F", 180)) in vs
    assert (("P", 90), ("F", 180), ("J", 90)) not in vs       # J and F exchanged: the mirror arrangement
    assert (("P", 0), ("J", 90), ("F", 180)) not in vs        # P turned
    # Tipped forward about x (F to the top): F up -z -> +y: 90; J up +y -> +z: 0; L (was -z) now right-front: 0.
    assert (("F", 90), ("J", 0), ("L", 0)) in vs
    lad = m.ladder(s)
    assert lad.rungs[0].answer.value == 4
    assert lad.rungs[1].answer.value == "L"
    assert lad.rungs[2].answer.value == ("F", "G", "P")        # P's top-left corner: P, F above, G left
    assert lad.rungs[3].answer.value == "1"
    assert cn.opposite_letters(s.cells, s.letters) == {"P": "L", "L": "P", "F": "R", "R": "F", "G": "J", "J": "G"}
    assert [m.reason_of(s, c) for c in s.candidates[1:]] == [m.MIRROR, m.OPPOSITE, m.TURNED]


def test_re_hinged_square_by_hand():
    # L moved below R: R hangs from P's bottom edge (plane y = 0); a square hinged on R's far edge becomes the back
    # (-z), L's old face, so the net still folds. L's top pointed at the hinge with R, which now lies at y = 0 with L
    # spanning y 0..1: the top points -y, toward R. Before the move it pointed +y, toward F.
    s = cross_scene(ghost=(1, 3))
    assert m.up_face(s) == "F"
    assert m.counterfactual(m.edit(s)).value == "R"
    # L moved left of G: the back again, its top along both hinges (+y): F again -- a no-op the sampler rejects.
    assert m.counterfactual(m.edit(cross_scene(ghost=(-1, 1)))).value == "F"
    # F (a leaf) moved right of L: hinged on the back's far edge it lands on G's face: no cube.
    assert m.counterfactual(m.edit(cross_scene(leaf=0, ghost=(4, 1)))).value == m.NO_CUBE
    # Glyphs turned on the page turn the folded glyph the same way: L at 180 now points down the hinge, toward R.
    assert m.up_face(cross_scene(turns=(0, 0, 0, 0, 180, 0))) == "R"


# --- contract-level properties --------------------------------------------------------------------------------------

@FAST
@given(SEEDS, LEVELS)
def test_scene_rules_minimal_pair_and_rephrase(seed, level):
    s = accepted(seed, level)
    assert scene_from_json(m.Scene, scene_to_json(s)) == s
    assert cn.NETS[s.net][1] in {cn.place(s.cells, g) for g in cn.D4} and s.net in m.NETS_BY_LEVEL[level]
    assert sorted(s.letters) == list(cn.LETTERS)
    assert cn.degree(s.cells, s.leaf) == 1 and s.ghost not in s.cells
    rest = [c for i, c in enumerate(s.cells) if i != s.leaf]
    assert sum(abs(s.ghost[0] - a) + abs(s.ghost[1] - b) == 1 for a, b in rest) == 1
    p = s.letters.index("P")
    assert p not in s.swap and s.leaf not in s.swap and s.swap[1] in cn.neighbours(s.cells, s.swap[0])
    twin = m.minimal_pair(s)
    lt, ls = m.ladder(twin), m.ladder(s)
    assert not lt.failing_margins() and lt.rungs[0].answer == ls.rungs[0].answer
    assert lt.rungs[3].answer != ls.rungs[3].answer and m.minimal_pair(twin) == s   # an involution
    assert sum(a != b for a, b in zip(twin.letters, s.letters)) == 2 and twin.cells == s.cells
    assert m.rephrase_q4(s).answer == ls.rungs[3].answer
    assert ls.rungs[4].answer == m.counterfactual(m.edit(s))
    assert m.layout(s)[0] >= m.SQUARE_MIN_PX


# --- rendered glyph orientation -------------------------------------------------------------------------------------

REF_FS = 200.0


@lru_cache(maxsize=None)
def reference_mask(letter):
    """An upright letter rendered here with cairo (DejaVu Sans Bold, ink box centred on (200, 200)), and its ink
    height in px: the glyph unit (the module draws every letter 0.6 face edges tall)."""
    n = 400
    surf = cairo.ImageSurface(cairo.FORMAT_RGB24, n, n)
    ctx = cairo.Context(surf)
    ctx.set_source_rgb(1, 1, 1)
    ctx.paint()
    ctx.select_font_face("DejaVu Sans", cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_BOLD)
    ctx.set_font_size(REF_FS)
    e = ctx.text_extents(letter)
    cap = e.height
    ctx.move_to(200 - e.width / 2 - e.x_bearing, 200 - e.height / 2 - e.y_bearing)
    ctx.set_source_rgb(0, 0, 0)
    ctx.show_text(letter)
    surf.flush()
    return np.frombuffer(surf.get_data(), np.uint8).reshape(n, -1, 4)[:, :n, 0] < 128, cap


def template_score(offsets_px, frame, letter):
    """Share of drawn ink pixels (offsets from the glyph centre, screen px, v down) that land on the upright
    reference letter when mapped back through `frame` = 2x2 [glyph-right, glyph-up] in screen px per glyph unit."""
    mask, cap = reference_mask(letter)
    q = np.linalg.solve(frame, offsets_px.T).T                   # glyph units (right, up)
    col = np.rint(200 + q[:, 0] * cap).astype(int)
    row = np.rint(200 - q[:, 1] * cap).astype(int)
    ok = (col >= 0) & (col < 400) & (row >= 0) & (row < 400)
    return float(np.mean(mask[row[ok], col[ok]]) * np.mean(ok))


def iso_px(p, s, origin):
    x, y, z = p
    return np.array([origin[0] + s * (y - x) * math.cos(math.radians(30)),
                     origin[1] + s * ((x + y) * math.sin(math.radians(30)) - z)])


FACE_CORNERS = {"+z": ((0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)), "+x": ((1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)),
                "+y": ((1, 1, 0), (0, 1, 0), (0, 1, 1), (1, 1, 1))}


def face_ink(rgb, face, s, origin):
    """Offsets (screen px, v down) from the face centre of the dark pixels inside the drawn face."""
    corners = np.array([iso_px(p, s, origin) for p in FACE_CORNERS[face]])
    centre = corners.mean(axis=0)
    inner = centre + 0.85 * (corners - centre)
    lo, hi = np.floor(inner.min(axis=0)).astype(int), np.ceil(inner.max(axis=0)).astype(int)
    yy, xx = np.mgrid[lo[1]:hi[1], lo[0]:hi[0]]
    pts = np.stack([xx + 0.5, yy + 0.5], axis=-1)
    inside = np.ones(xx.shape, bool)
    sign = None
    for a, b in zip(inner, np.roll(inner, -1, axis=0)):      # a convex polygon: one side of every edge
        side = (b[0] - a[0]) * (pts[..., 1] - a[1]) - (b[1] - a[1]) * (pts[..., 0] - a[0])
        sign = sign if sign is not None else np.sign(np.mean(side))
        inside &= side * sign > 0
    ink = inside & (rgb[lo[1]:hi[1], lo[0]:hi[0]].max(axis=2) < 90)
    assert ink.sum() > 150, "no glyph ink found on the face"
    return pts[ink] - centre


def face_frame_px(face, turn, s, mirror=False):
    """Screen [glyph-right, glyph-up] per glyph unit (0.6 face edge): glyph-up u = the reference turned clockwise
    (seen from outside) by the turn, glyph-right = u x n, both projected by the ISO formulas."""
    n = WORLD[face]
    u = np.rint(rodrigues(n, -turn) @ REF[face]).astype(int)
    r = np.cross(u, n) * (-1 if mirror else 1)
    return 0.6 * np.column_stack([iso_px(r, s, (0, 0)), iso_px(u, s, (0, 0))])


def best_reading(offsets, letter, frames):
    scores = {k: template_score(offsets, f, letter) for k, f in frames.items()}
    return max(scores, key=scores.get), scores


def test_drawn_glyphs_point_along_their_up_vector():
    """Every letter and turn on every visible face of a drawn candidate: mapping the drawn ink back through each
    of the 8 frames (4 turns, mirrored or not) onto the upright letter, the stored turn unmirrored fits best,
    clearly (>= 0.08 ahead of the next; G flipped top to bottom is the closest rival) and well (>= 0.8 of the ink
    on the letter)."""
    s_px, origin = 120.0, (384.0, 200.0)
    for letter, turn in product(cn.LETTERS, cn.TURNS):
        canvas = Canvas(768)
        m.draw_candidate(canvas.ctx, ((letter, turn),) * 3, origin, s_px)
        rgb = canvas.array()
        for face in ("+z", "+x", "+y"):
            frames = {(t2, mir): face_frame_px(face, t2, s_px, mir) for t2 in cn.TURNS for mir in (False, True)}
            best, scores = best_reading(face_ink(rgb, face, s_px, origin), letter, frames)
            runner_up = max(v for k, v in scores.items() if k != (turn, False))
            assert best == (turn, False) and scores[best] >= 0.8 and scores[best] - runner_up >= 0.08, \
                (letter, face, turn, scores)


@settings(max_examples=4, deadline=None)
@given(SEEDS, LEVELS)
def test_drawn_scene_candidates_and_net_read_as_stored(seed, level):
    """In the full picture: each candidate face reads, among the 8 frames, as the stored (letter, turn), which the
    independent fold produced for the correct cube; each net square's glyph reads as its page turn, clockwise."""
    s = accepted(seed, level)
    canvas = Canvas(768)
    m.draw(s, canvas)
    rgb = canvas.array()
    for k, cand in enumerate(s.candidates):
        origin = m.cube_origin(k)
        for face, (letter, turn) in zip(("+z", "+x", "+y"), cand):
            frames = {(t2, mir): face_frame_px(face, t2, m.CUBE_S, mir) for t2 in cn.TURNS for mir in (False, True)}
            assert best_reading(face_ink(rgb, face, m.CUBE_S, origin), letter, frames)[0] == (turn, False)
    sq, ox, oy = m.layout(s)
    for (c, r), letter, turn in zip(s.cells, s.letters, s.turns):
        x0, y0 = ox + sq * c, oy + sq * r
        lo = (int(x0 + 0.1 * sq), int(y0 + 0.1 * sq))
        box = rgb[lo[1]:int(y0 + 0.9 * sq), lo[0]:int(x0 + 0.9 * sq)]
        ys, xs = np.nonzero(box.max(axis=2) < 90)
        offsets = np.column_stack([xs + lo[0] + 0.5 - x0 - sq / 2, ys + lo[1] + 0.5 - y0 - sq / 2])
        frames = {}
        for t2, mir in product(cn.TURNS, (False, True)):
            a = math.radians(t2)                 # clockwise on screen: up (0, -1) -> right (1, 0) at 90
            up, right = np.array([math.sin(a), -math.cos(a)]), np.array([math.cos(a), math.sin(a)])
            frames[(t2, mir)] = 0.6 * sq * np.column_stack([right * (-1 if mir else 1), up])
        assert best_reading(offsets, letter, frames)[0] == (turn, False)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_level_rules(level):
    seen_deg = set()
    for seed in range(12):
        s = accepted(seed * 7 + level, level)
        seen_deg.add(m.p_degree(s).value)
        lad = m.ladder(s)
        assert lad.rungs[3].margin.value >= m.DIST_MIN[level]
    assert seen_deg <= ({1, 2, 3} if level == 3 else {1, 2, 3, 4})


def test_ghosts_equal_the_distance_count():
    # ghosts() counts a candidate cell's taken 4-neighbours; written out here as Manhattan distances to the rest.
    for net in range(11):
        for g in cn.D4:
            cells = cn.place(cn.NETS[net][1], g)
            for y in range(6):
                rest = [c for i, c in enumerate(cells) if i != y]
                want = sorted({(c + dc, r + dr) for c, r in rest for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
                               if (c + dc, r + dr) not in cells
                               and sum(abs(c + dc - a) + abs(r + dr - b) == 1 for a, b in rest) == 1})
                assert m.ghosts(cells, y) == want


def test_written_out_distance_and_up_face_match_their_plain_forms():
    """`cn.distance_to` (a loop that stops at one face) against min over `cn.distance`, and `_up_face` (normals
    cached per net) against `cn.face_frames`, on every net placement, moved leaves included."""
    rng = np.random.default_rng(0)
    faces = [(x, t) for x in cn.LETTERS for t in cn.TURNS]
    for net in range(11):
        for g in cn.D4:
            cells = cn.place(cn.NETS[net][1], g)
            turns = tuple(int(t) for t in rng.choice(cn.TURNS, 6))
            vs = cn.views(cells, cn.LETTERS, turns)
            cands = [vs[int(rng.integers(24))]] + [tuple(faces[int(i)] for i in rng.integers(24, size=3))
                                                   for _ in range(6)]
            cands += [tuple(c if k else faces[int(rng.integers(24))] for k, c in enumerate(vs[0]))]
            for cand in cands:
                assert cn.distance_to(cand, vs) == min(cn.distance(cand, v) for v in vs)
            for y, ghost in m._moves(cells) + ((0, cells[0]),):
                moved = cells[:y] + (ghost,) + cells[y + 1:]
                frames = cn.face_frames(moved, turns)
                want = m.NO_CUBE if len({n for n, _ in frames}) != 6 else \
                    next(cn.LETTERS[i] for i, (n, _) in enumerate(frames) if n == frames[y][1])
                assert m._up_face(moved, cn.LETTERS, turns, y) == want
