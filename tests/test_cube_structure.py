"""Domain-specific tests for cube_structure. Chirality-dependent facts are re-derived by independent routes: the
cell names are checked against the TRI formulas written out here (letters run left to right along the front edge,
numbers run back along the left edge, a1 is nearest), the coloured marks of Q2 are found in the pixels on the named
stacks' tops, the visible share of every stack top is re-measured on a painter's-order face-id buffer, and the
voxel set is rotated about the vertical axis to check the answers that do not depend on the view."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.solid import cube_structure as m
from grip.draws import Draws
from grip.renderers import projection as pj
from grip.renderers.canvas import Canvas
from domain_scenes import accepted_scene

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])
FAST = settings(max_examples=25, deadline=None)


def accepted(seed: int, level: int) -> m.Scene:
    return accepted_scene(m, seed, level, 200)


def tri(p):
    """TRI written out (DOMAINS.md 0.8): a = 29.5, e = 31.5 deg; pixels per edge 1, no origin."""
    a, e = math.radians(29.5), math.radians(31.5)
    x, y, z = p
    return np.array([y * math.sin(a) - x * math.cos(a), (x * math.sin(a) + y * math.cos(a)) * math.sin(e)
                     - z * math.cos(e)])


# --- hand-worked examples -------------------------------------------------------------------------------------------

def test_small_structure_by_hand():
    # g = 3: c3 = (0,0) holds 2, c2 = (0,1) 2, b3 = (1,0) 1, b2 = (1,1) 1, a3 = (2,0) 1: 7 cubes, tallest 2.
    # c2 (2) vs a3 (1): taller. Footprint x 0..2, y 0..1: 3 x 2 cells x 2 high = 12, so 5 missing.
    # Row 3 is y = 0: c3, b3, a3 hold 4 cubes -> 3 remain, the tallest c2 (2).
    # Painted faces: only b2's cube (neighbours c2 and b3 at its sides, the floor) keeps exactly 3.
    s = m.Scene(1, 3, ((2, 2, 0), (1, 1, 0), (1, 0, 0)), ("c2", "a3"), 3)
    lad = m.ladder(s)
    assert [q.answer.value for q in lad.rungs[:4]] == [2, "taller", 7, 5]
    assert lad.rungs[4].answer.fields["remaining"].value == 3 and lad.rungs[4].answer.fields["tallest"].value == 2
    assert lad.open.answer.fields["cubes"].value == 1
    assert m.cell_xy(s, "a1") == (2, 2) and m.cell_xy(s, "c3") == (0, 0) and m.cell_xy(s, "a3") == (2, 0)
    # Minimal pair: the first preferred edit in cell order adds a cube on b3 (below the top, inside the footprint):
    # 8 cubes, Q4 = 12 - 8 = 4, tallest unchanged.
    twin = m.minimal_pair(s)
    assert twin.heights == ((2, 2, 0), (2, 1, 0), (1, 0, 0))
    assert m.missing_from_block(twin).value == 4 and m.tallest(twin).value == 2


def test_full_block_by_hand():
    # g = 4, a 2 x 2 x 2 block in the far corner: cells d4, d3, c4, c3. Q4 = 4 * 2 - 8 = 0. Each of the four top
    # cubes touches two side neighbours and the cube below: 3 painted faces; the bottom cubes have 2.
    # Removing row 4 (y = 0: d4 and c4) leaves 4 cubes, still 2 tall.
    s = m.Scene(2, 4, ((2, 2, 0, 0), (2, 2, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)), ("d4", "c3"), 4)
    lad = m.ladder(s)
    assert [q.answer.value for q in lad.rungs[:4]] == [2, "same", 8, 0]
    assert lad.rungs[4].answer.fields["remaining"].value == 4 and lad.rungs[4].answer.fields["tallest"].value == 2
    assert lad.open.answer.fields["cubes"].value == 4
    assert m.min_visible(s) == 1.0                         # nothing stands in front of the block


# --- chirality: names, labels and marks -----------------------------------------------------------------------------

@FAST
@given(st.sampled_from([3, 4, 5]))
def test_cell_names_follow_the_picture(g):
    s = m.Scene(3, g, tuple((0,) * g for _ in range(g)), ("a1", "b1"), 1)
    centre = {m.cell_name(g, x, y): tri((x + 0.5, y + 0.5, 0)) for x in range(g) for y in range(g)}
    letters = m.LETTERS[:g]
    front = [centre[f"{c}1"] for c in letters]
    assert all(b[0] > a[0] and b[1] < a[1] for a, b in zip(front, front[1:]))      # right and up
    left = [centre[f"a{k}"] for k in range(1, g + 1)]
    assert all(b[0] < a[0] and b[1] < a[1] for a, b in zip(left, left[1:]))        # left and up
    assert max(centre, key=lambda n: centre[n][1]) == "a1"                         # nearest: lowest on screen
    for name in centre:
        assert m.cell_name(g, *m.cell_xy(s, name)) == name
    # each drawn label sits on the screen line of the file (letter) or row (number) it names, beyond the front or
    # left edge, and far nearer that line than any other file's or row's
    def line_distance(q, a, b):
        d = (b - a) / np.linalg.norm(b - a)
        r = q - a
        return abs(d[0] * r[1] - d[1] * r[0])

    def cells_of(text):
        return ([f"{text}{k}" for k in range(1, g + 1)] if text.isalpha()
                else [f"{c}{text}" for c in letters])

    for text, p in m.label_anchors(s):
        q = tri(p)
        group = cells_of(text)
        own = line_distance(q, centre[group[0]], centre[group[-1]])
        others = [t2 for t2 in (letters if text.isalpha() else [str(k) for k in range(1, g + 1)]) if t2 != text]
        rival = min(line_distance(q, centre[cells_of(t2)[0]], centre[cells_of(t2)[-1]]) for t2 in others)
        assert own < 1e-9 and rival > 0.2
        assert np.linalg.norm(q - centre[group[0]]) < np.linalg.norm(q - centre[group[-1]])   # beyond the near end


@settings(max_examples=5, deadline=None)
@given(SEEDS, LEVELS)
def test_q2_marks_sit_on_the_named_stacks(seed, level):
    s = accepted(seed, level)
    canvas = Canvas(768)
    m.draw(s, canvas)
    rgb = canvas.array().astype(int)
    scale, origin = m.fit(s)
    for name, colour in zip(s.pair, m.Q2_RGB):
        x, y = m.cell_xy(s, name)
        h = s.heights[x][y]
        corners = np.array([tri(p) for p in ((x, y, h), (x + 1, y, h), (x + 1, y + 1, h), (x, y + 1, h))])
        corners = corners * scale + origin
        c = corners.mean(axis=0)
        want = np.array(colour) * 255
        # pixels of the mark's colour, anywhere in the picture, lie in the named stack's top face
        hits = np.argwhere(np.abs(rgb - want).sum(axis=2) < 40)
        assert len(hits) > 30
        mid = hits[:, ::-1].mean(axis=0)
        assert np.linalg.norm(mid - c) < 0.35 * scale, (name, mid, c)


# --- visibility re-measured on pixels -------------------------------------------------------------------------------

def id_buffer_fractions(heights):
    """Visible share of every cell's stack top from a painter's-order id buffer (empty cells: with one cube added
    there, as the margin defines it)."""
    g = len(heights)
    s, origin, size = 40.0, (300.0, 230.0), 512
    out = np.zeros((g, g))
    for x in range(g):
        for y in range(g):
            cubes = [(a, b, z) for a in range(g) for b in range(g) for z in range(heights[a][b])]
            if heights[x][y] == 0:
                cubes.append((x, y, 0))
            top = (x, y, max(heights[x][y], 1) - 1)
            faces = pj.cube_faces(cubes, pj.TRI)
            polys = [pj.TRI.project(f.corners, s, origin) for f in faces]
            ids = pj.face_id_buffer(polys, size, scale=1)
            k = next(i for i, f in enumerate(faces) if f.cube == top and f.axis == "+z")
            alone = pj.face_id_buffer([polys[k]], size, scale=1)
            out[x, y] = (ids == k).sum() / max(1, (alone == 0).sum())
    return out


@settings(max_examples=3, deadline=None)
@given(SEEDS, st.sampled_from([1, 2]))
def test_visible_share_matches_the_id_buffer(seed, level):
    s = accepted(seed, level)
    got = np.array(m.visible_fractions(s.heights))
    assert np.allclose(got, id_buffer_fractions(s.heights), atol=0.05)


def test_hidden_and_half_hidden_tops_are_measured():
    # A 3-high wall along the front hides the low stacks behind it; single taller stacks in front (in x, in y, on
    # the diagonal) hide part of a top: both must agree with the pixels.
    for h in (((1, 1, 3), (1, 1, 3), (3, 3, 3)), ((1, 0, 0), (2, 0, 0), (0, 0, 0)),
              ((1, 2, 0), (0, 0, 0), (0, 0, 0)), ((2, 1, 0), (1, 3, 0), (0, 0, 1))):
        frac = np.array(m.visible_fractions(h))
        assert np.allclose(frac, id_buffer_fractions(h), atol=0.04), h
    assert frac.min() < 0.3
    partial = [f for h in (((1, 0, 0), (2, 0, 0), (0, 0, 0)), ((1, 2, 0), (0, 0, 0), (0, 0, 0)))
               for f in np.ravel(m.visible_fractions(h))]
    assert any(0.05 < f < 0.95 for f in partial)


def _visible_fractions_all_columns(heights):
    """visible_fractions written out over every (point, column) pair, with no pruning or tabulation."""
    g, s = len(heights), m.SAMPLES
    h, w = np.array(heights, dtype=float), np.array(pj.TRI.w)
    cx, cy = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
    u, v = np.meshgrid(m._UV, m._UV, indexing="ij")
    px = (cx[:, :, None, None] + u[None, None]).ravel()[:, None]
    py = (cy[:, :, None, None] + v[None, None]).ravel()[:, None]
    pz = np.broadcast_to(np.maximum(h, 1.0)[:, :, None, None], (g, g, s, s)).ravel()[:, None]
    x2, y2 = cx.ravel()[None, :], cy.ravel()[None, :]
    lam_in = np.maximum(np.maximum((x2 - px) / w[0], (y2 - py) / w[1]), 0.0)
    lam_out = np.minimum((x2 + 1 - px) / w[0], (y2 + 1 - py) / w[1])
    blocked = (lam_in < lam_out) & (pz + lam_in * w[2] < h.ravel()[None, :] - 1e-9)
    return tuple(tuple(float(f) for f in row) for row in 1.0 - blocked.any(axis=1).reshape(g, g, s * s).mean(axis=2))


def test_visible_fractions_equal_the_unpruned_ray_test():
    rng = np.random.default_rng(3)
    cases = [((0, 0), (0, 0)), ((1,),), ((4, 0, 2), (0, 3, 1), (2, 1, 0))]
    cases += [tuple(tuple(int(v) for v in r) for r in rng.integers(0, 5, size=(g, g)))
              for g in (3, 4, 5) for _ in range(20)]
    cases += [m._heights(rng, Draws(rng), level, m.HMAX[level]) for level in (1, 2, 3) for _ in range(10)]
    for h in cases:
        assert m.visible_fractions.__wrapped__(h) == _visible_fractions_all_columns(h), h


# --- properties -----------------------------------------------------------------------------------------------------

def rotate_quarter(s: m.Scene) -> m.Scene:
    """The voxel set turned +90 deg about the vertical axis through the grid centre (pj.rotation), re-read as a
    heightmap; Q2's cells and Q5's row are carried along by name only where they stay meaningful (not used)."""
    r = pj.rotation("z", 90)
    g = s.g
    h = np.zeros((g, g), int)
    for x, y, z in m.cubes(s):
        c = r @ (np.array([x + 0.5, y + 0.5, z + 0.5]) - (g / 2, g / 2, 0)) + (g / 2, g / 2, 0)
        h[int(math.floor(c[0])), int(math.floor(c[1]))] += 1
    return m.Scene(s.level, g, tuple(tuple(int(v) for v in col) for col in h), s.pair, s.row)


def painted_here(heights) -> int:
    vox = {(x, y, z) for x, col in enumerate(heights) for y, hh in enumerate(col) for z in range(hh)}
    n3 = 0
    for x, y, z in vox:
        touching = sum((x + d[0], y + d[1], z + d[2]) in vox for d in
                       ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)))
        n3 += 6 - touching - (z == 0) == 3
    return n3


@FAST
@given(SEEDS, LEVELS)
def test_rules_rotation_and_counterfactual(seed, level):
    s = accepted(seed, level)
    assert scene_from_json(m.Scene, scene_to_json(s)) == s
    lad = m.ladder(s)
    g = s.g
    assert g == m.GRID[level] and max(map(max, s.heights)) <= m.HMAX[level]
    assert m.TOTAL_RANGE[0] <= lad.rungs[2].answer.value <= m.TOTAL_RANGE[1]
    assert all(m.height_at(s, n) > 0 for n in s.pair) and s.pair[0] != s.pair[1]
    assert lad.open.answer.fields["cubes"].value == painted_here(s.heights)
    # view-independent answers survive a quarter turn of the voxel set
    t = rotate_quarter(s)
    assert sorted(v for col in t.heights for v in col) == sorted(v for col in s.heights for v in col)
    for f in (m.tallest, m.total_cubes, m.missing_from_block):
        assert f(t) == f(s)
    assert painted_here(t.heights) == painted_here(s.heights)
    # Q5 recomputed by hand on the edited state
    y = g - s.row
    row_cubes = sum(s.heights[x][y] for x in range(g))
    rest = [s.heights[x][yy] for x in range(g) for yy in range(g) if yy != y]
    q5 = lad.rungs[4].answer.fields
    assert row_cubes > 0 and q5["remaining"].value == lad.rungs[2].answer.value - row_cubes
    assert q5["tallest"].value == max(rest) and lad.rungs[4].answer == m.counterfactual(m.edit(s))
    # Q4 from the definition
    xs = [x for x in range(g) for yy in range(g) if s.heights[x][yy]]
    ys = [yy for x in range(g) for yy in range(g) if s.heights[x][yy]]
    block = (max(xs) - min(xs) + 1) * (max(ys) - min(ys) + 1) * max(map(max, s.heights))
    assert lad.rungs[3].answer.value == block - lad.rungs[2].answer.value == m.rephrase_q4(s).answer.value


@FAST
@given(SEEDS, LEVELS)
def test_minimal_pair_moves_one_cube(seed, level):
    s = accepted(seed, level)
    try:
        twin = m.minimal_pair(s)
    except Reject:
        return
    diff = [(x, y) for x in range(s.g) for y in range(s.g) if twin.heights[x][y] != s.heights[x][y]]
    assert len(diff) == 1 and abs(twin.heights[diff[0][0]][diff[0][1]] - s.heights[diff[0][0]][diff[0][1]]) == 1
    lt = m.ladder(twin)
    assert not lt.failing_margins() and lt.rungs[0].answer == m.ladder(s).rungs[0].answer
    assert lt.rungs[3].answer != m.ladder(s).rungs[3].answer


def test_lattice_injectivity_at_the_drawn_scale():
    length, _ = pj.min_lattice_image(pj.TRI, 5)
    assert length >= 0.315
    for level in (1, 2, 3):
        s = m.Scene(level, m.GRID[level], tuple((1,) * m.GRID[level] for _ in range(m.GRID[level])), ("a1", "b1"),
                    1)
        assert length * m.edge_px(s) >= 15.0 and m.edge_px(s) >= m.EDGE_MIN_PX


# --- fast paths against the plain calls they stand for --------------------------------------------------------------

def test_drop_draws_what_rng_choice_draws():
    for level, p in m.DROP.items():
        a, b = np.random.default_rng(level), np.random.default_rng(level)
        random = Draws(a).random
        got = [m._drop(random, m.DROP_CDF[level]) for _ in range(1000)]
        assert got == [int(b.choice(3, p=p)) for _ in range(1000)]
        assert a.random() == b.random()                          # the same draws consumed
        assert set(got) == {0, 1, 2}


def test_pasted_floor_gives_the_pixels_of_drawing_it(monkeypatch):
    for level in (1, 2, 3):
        s = accepted(level, level)
        pasted = Canvas(768)
        m.draw(s, pasted)
        with monkeypatch.context() as mp:
            mp.setattr(Canvas, "paste_layer", lambda self, layer: False)
            drawn = Canvas(768)
            m.draw(s, drawn)
        assert np.array_equal(pasted.array(), drawn.array()), level
