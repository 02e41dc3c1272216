"""Domain-specific tests for orthographic: views re-derived by explicit ray casting along each viewer's own axes,
the arrows checked against the faces they name, a rotation of the voxel set, the minimal pair, the Q4 rephrasing,
and examples worked on paper."""
import functools
from dataclasses import replace

import numpy as np
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.solid import _voxels as vx
from grip.domains.solid import orthographic as o
from grip.renderers import projection as pj

FAST = settings(max_examples=30, deadline=None)


@functools.cache
def pool() -> tuple:
    """Accepted scenes, four per level, sampled once for the whole file."""
    out = []
    for level in (1, 2, 3):
        rng = np.random.default_rng(100 + level)
        while sum(s.level == level for s in out) < 4:
            try:
                s = o.sample(rng, level)
            except Reject:
                continue
            if not o.ladder(s).failing_margins():
                out.append(s)
    return tuple(out)


SCENE = st.integers(0, 11).map(lambda i: pool()[i])


# --- an independent route: ray casting along each viewer's axes -------------------------------------------------

def raycast(cubes, look, up) -> tuple[str, ...]:
    """The silhouette a viewer looking along `look` with `up` overhead sees: one ray per unit square of the view
    plane, marched through the voxels; the viewer's right hand is look x up. Rows top first, cropped."""
    look, up = np.asarray(look, float), np.asarray(up, float)
    right = np.cross(look, up)
    occ = np.zeros((16, 16, 16), bool)            # voxels shifted by 6 so that -6..9 index 0..15
    for c in cubes:
        occ[tuple(np.asarray(c) + 6)] = True
    ij = np.array([(i, j) for i in range(-6, 7) for j in range(-6, 7)], float)
    p0 = (ij[:, :1] + 0.5) * right + (ij[:, 1:] + 0.5) * up - 12 * look          # (rays, 3)
    t = np.arange(0.0, 24.0, 0.25)
    q = np.floor(p0[:, None, :] + t[None, :, None] * look).astype(int) + 6        # (rays, steps, 3)
    inside = np.all((q >= 0) & (q < 16), axis=2)
    q = np.clip(q, 0, 15)
    blocked = (occ[q[..., 0], q[..., 1], q[..., 2]] & inside).any(axis=1)
    hit = {(-int(j), int(i)) for (i, j), b in zip(ij, blocked) if b}   # row against up, column along the right
    rows = sorted({r for r, _ in hit})
    cols = sorted({c for _, c in hit})
    return tuple("".join("#" if (r, c) in hit else "-" for c in range(cols[0], cols[-1] + 1))
                 for r in range(rows[0], rows[-1] + 1))


FRONT = ((-1, 0, 0), (0, 0, 1))     # standing at +x, looking toward -x
RIGHT = ((0, -1, 0), (0, 0, 1))     # standing at +y, looking toward -y
LEFT = ((0, 1, 0), (0, 0, 1))       # standing at -y
BACK = ((1, 0, 0), (0, 0, 1))       # standing at -x
TOP = ((0, 0, -1), (-1, 0, 0))      # looking down, FRONT (+x) at the bottom of the view


def test_raycast_viewer_axes_follow_the_sheet():
    # The person at FRONT has +y on their right; the person at RIGHT has -x on their right.
    assert tuple(np.cross(*map(np.array, FRONT))) == (0, 1, 0)
    assert tuple(np.cross(*map(np.array, RIGHT))) == (-1, 0, 0)
    assert tuple(np.cross(*map(np.array, TOP))) == (0, 1, 0)


@FAST
@given(SCENE)
def test_module_views_equal_ray_cast_views(s):
    assert o.front_view(s.cubes) == raycast(s.cubes, *FRONT)
    assert o.right_view(s.cubes) == raycast(s.cubes, *RIGHT)
    assert o.top_view(s.cubes) == raycast(s.cubes, *TOP)
    assert o.back_view(s.cubes) == raycast(s.cubes, *BACK)
    left = raycast(s.cubes, *LEFT)
    assert o.left_view(s.cubes) == left
    assert vx.flip(left) == o.right_view(s.cubes)          # mirror(L) = R
    # and the gold drawing of Q4 is the ray-cast right view
    q4 = o.ladder(s).rungs[3].answer.value
    assert s.options[o.OPTIONS.index(q4)] == raycast(s.cubes, *RIGHT)


@FAST
@given(SCENE, st.sampled_from([90, 180, 270]))
def test_turning_the_object_about_z_turns_the_views(s, deg):
    # Turning the object +90 degrees about z (counter-clockwise seen from above) brings its old -y side (LEFT) to
    # face FRONT: front(R V) = left(V); two quarter turns bring the back: front(R^2 V) = back(V).
    m = np.rint(pj.rotation("z", deg)).astype(int)
    turned = [tuple(int(v) for v in m @ np.array(c)) for c in s.cubes]
    want = {90: o.left_view(s.cubes), 180: o.back_view(s.cubes), 270: o.right_view(s.cubes)}[deg]
    assert o.front_view(turned) == want
    assert o.front_view(turned) == raycast(turned, *FRONT)


# --- the arrows name the faces the sheet says ---------------------------------------------------------------------

@FAST
@given(SCENE)
def test_front_and_right_arrows_point_at_the_plus_x_and_plus_y_faces(s):
    lay = o.layout(s)
    a = np.asarray(s.cubes)
    lo, hi = a.min(axis=0), a.max(axis=0) + 1
    mid = (lo + hi) / 2
    px_face = pj.TRI.project((hi[0], mid[1], mid[2]), lay["s"], lay["origin"])
    py_face = pj.TRI.project((mid[0], hi[1], mid[2]), lay["s"], lay["origin"])
    for name, axis, own, other in (("FRONT", 0, px_face, py_face), ("RIGHT", 1, py_face, px_face)):
        tail, tip, label = lay[name]
        d = (tip - tail) / np.linalg.norm(tip - tail)
        step = -np.eye(3)[axis]                  # the arrow runs along -x (FRONT) or -y (RIGHT) ...
        want = pj.TRI.project(step)
        assert np.allclose(d, want / np.linalg.norm(want), atol=1e-9)
        assert np.linalg.norm(tip - own) < np.linalg.norm(tip - other)   # ... and ends at its own face
        assert np.linalg.norm(label - tail) < np.linalg.norm(label - tip)  # label at the tail
    # FRONT on the picture's left, RIGHT on its right (0.8: +x face left, +y face right)
    assert lay["FRONT"][1][0] < lay["RIGHT"][1][0]


# --- examples worked on paper ------------------------------------------------------------------------------------

def hand(cubes, star, level=1, grid=3):
    cubes = tuple(sorted(cubes))
    r = o.right_view(cubes)
    return o.Scene(level, grid, cubes, star, (r, vx.flip(r), ("#",), ("##",)), ("right", "mirror", "x", "y"))


def test_l_shape_by_hand():
    # A row of three along x, one cube beside the first along y, one on top of the first.
    # FRONT (y to the right): z=1 has y=0 only, z=0 has y=0,1 -> "#-", "##" (not symmetric).
    # RIGHT (x to the LEFT): z=1 has x=0 -> rightmost; z=0 has x=0,1,2 -> "--#", "###".
    # TOP (y to the right, x downward): x=0 -> y 0,1; x=1, x=2 -> y 0 -> "##", "#-", "#-": 4 squares.
    s = hand([(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0), (0, 0, 1)], star=(0, 0, 1))
    assert o.front_view(s.cubes) == ("#-", "##")
    assert o.right_view(s.cubes) == ("--#", "###")
    assert o.top_view(s.cubes) == ("##", "#-", "#-")
    assert o.left_view(s.cubes) == ("#--", "###")
    assert o.back_view(s.cubes) == ("-#", "##")
    assert o.front_symmetric(s).value == "no"
    assert o.front_size(s).reference_text() == "width=2; height=2; filled=3"
    assert o.right_option(s).value == "1"
    assert o.top_count(s).fields["filled"].value == 4
    assert vx.grid_distance(("--#", "###"), ("#--", "###")) == 2
    # The star on (0,0,1) is alone on its line along y (x=0, z=1): removing it changes the right view.
    assert o.counterfactual(o.edit(s)).value == "yes"
    # The cube (0,1,0) shares its line (x=0, z=0) with (0,0,0): removing it leaves the right view as it was.
    assert o.counterfactual(o.edit(hand(s.cubes, star=(0, 1, 0)))).value == "no"


def test_mirror_pair_by_hand():
    # Two objects that are mirror images in y: their front views are mirror images, their right views equal.
    a = [(0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 2, 1), (1, 0, 0)]
    b = [(x, 2 - y, z) for x, y, z in a]
    assert o.front_view(a) == ("--#", "###") and o.front_view(b) == ("#--", "###")
    assert o.right_view(a) == o.right_view(b) == ("-#", "##")
    assert o.top_view(a) == ("###", "#--") and o.top_view(b) == ("###", "--#")


# --- properties --------------------------------------------------------------------------------------------------

@FAST
@given(SCENE)
def test_accepted_scenes_keep_the_sheet_rules(s):
    assert o.CUBES[0] <= len(s.cubes) <= o.CUBES[1] and vx.connected(s.cubes)
    assert all(0 <= x < s.grid and 0 <= y < s.grid and 0 <= z < o.HMAX[s.level] for x, y, z in s.cubes)
    supported = all(z == 0 or (x, y, z - 1) in s.cubes for x, y, z in s.cubes)
    assert supported == (s.level < 3)           # level 3 always glues at least one overhang
    assert (s.star[0], s.star[1], s.star[2] + 1) not in s.cubes and vx.connected(set(s.cubes) - {s.star})
    grids = [tuple(g) for g in s.options]
    assert len(set(grids)) == 4 and grids.count(o.right_view(s.cubes)) == 1
    d = o.option_distances(s)
    assert d[0] == 1 and (s.level == 3 or d[1] >= 2)
    assert scene_from_json(o.Scene, scene_to_json(s)) == s


@FAST
@given(SCENE)
def test_q5_is_recomputed_on_the_edited_object(s):
    e = o.edit(s)
    assert s.star not in e.cubes and len(e.cubes) == len(s.cubes) - 1
    changed = o.right_view(e.cubes) != o.right_view(s.cubes)
    alone = sum((x, z) == (s.star[0], s.star[2]) for x, _, z in s.cubes) == 1
    assert o.ladder(s).rungs[4].answer.value == ("yes" if changed else "no") == ("yes" if alone else "no")


@FAST
@given(SCENE)
def test_minimal_pair_moves_q4_to_the_toggle_partner(s):
    twin = o.minimal_pair(s)
    added = set(twin.cubes) - set(s.cubes)
    assert len(added) == 1 and set(s.cubes) < set(twin.cubes)
    new, old = o.ladder(twin).rungs[3].answer.value, o.ladder(s).rungs[3].answer.value
    assert new == o.OPTIONS[s.kinds.index("toggle")] and new != old
    assert vx.grid_distance(o.right_view(twin.cubes), tuple(s.options[o.OPTIONS.index(old)])) == 1
    assert not o.ladder(twin).failing_margins() and twin.options == s.options


@FAST
@given(SCENE)
def test_rephrased_q4_uses_mirror_of_left(s):
    q = o.rephrase_q4(s)
    assert q.answer == o.ladder(s).rungs[3].answer
    assert s.options[o.OPTIONS.index(q.answer.value)] == vx.flip(o.left_view(s.cubes))


def test_visibility_rejects_a_hidden_column_top():
    # A tall column right in front (larger y) of a single cube hides that cube's top completely.
    s = hand([(0, 0, 0), (0, 1, 0), (0, 1, 1), (1, 1, 0), (1, 1, 1)], star=(0, 1, 1))
    assert o.visibility(s)["tops"] < o.TOP_VISIBLE
    assert o.visibility(hand([(0, 0, 0), (0, 1, 0), (0, 0, 1)], star=(0, 0, 1)))["tops"] == 1.0


# --- the sampler's machinery --------------------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(3, 2), (4, 3)]), st.integers(0, 2**32 - 1))
def test_box_masks_agree_with_ray_casting_and_walks(size, seed):
    # The bit-mask box answers what `_voxels` answers from the cubes themselves: face fractions, connectivity, order.
    box = o._box(*size)
    rng = np.random.default_rng(seed)
    cubes = [box.cells[i] for i in rng.choice(len(box.cells), size=int(rng.integers(1, 16)), replace=False)]
    m = box.bits(cubes)
    faces = [(c, ax) for c in box.cells for ax in vx.AXES]
    assert [box.visible(m, c, ax) for c, ax in faces] == vx.face_visibility(cubes, faces).tolist()
    assert box.connected(m) == vx.connected(cubes) and box.members(m) == sorted(cubes)


def test_box_bit_helpers_agree_with_plain_sets():
    # members, column tops, probes (legal additions inside the bounding box), best faces and the (y, z) places
    # filled twice along x, each from the cube list itself.
    rng = np.random.default_rng(5)
    for level in (1, 2, 3):
        g = o.GRID[level]
        box = o._box(g, o.HMAX[level])
        for _ in range(50):
            n = int(rng.integers(1, min(20, len(box.cells))))
            cubes = sorted(box.cells[i] for i in rng.choice(len(box.cells), size=n, replace=False))
            m = box.bits(cubes)
            assert box.members(m) == cubes
            assert box.members(box.tops(m)) == o._column_tops(cubes)
            lo, hi = [min(c[i] for c in cubes) for i in range(3)], [max(c[i] for c in cubes) for i in range(3)]
            assert o._probes(tuple(cubes), level, g) == [c for c in o.legal_additions(cubes, level, g)
                                                         if all(lo[i] <= c[i] <= hi[i] for i in range(3))]
            assert all(box.best_visible(m, c) == max(box.visible(m, c, ax) for ax in vx.AXES) for c in box.cells)
            twice = {(y, z) for (x, y, z) in cubes if sum((y, z) == (c[1], c[2]) for c in cubes) > 1}
            assert box.members(box.twice_along_x(m)) == sorted((0, y, z) for y, z in twice)


def test_grid_distance_is_the_best_overlap_over_all_shifts():
    def plain(a, b):
        ca, cb = vx.cells_of(a), vx.cells_of(b)
        best = max((len(ca & {(r + dr, c + dc) for r, c in cb}) for dr in range(-5, 6) for dc in range(-6, 7)),
                   default=0)
        return len(ca) + len(cb) - 2 * best

    rng = np.random.default_rng(6)
    for _ in range(120):
        a, b = (tuple("".join(rng.choice(["#", "-"], size=int(w))) for _ in range(int(rng.integers(1, 5))))
                for w in rng.integers(1, 6, size=2))
        assert vx.grid_distance(a, b) == plain(a, b)


def test_margins_pass_is_the_ladder_s_verdict():
    # With the star on every column top in turn (its face hidden or not), and a third drawing one cell from the
    # right view (too close at levels 1-2).
    verdicts = set()
    for s in pool():
        i = next(i for i, k in enumerate(s.kinds) if k not in ("right", "toggle"))
        near = [g for g in o._toggles(o.right_view(s.cubes)) if g not in s.options][0]
        closer = s.options[:i] + (near,) + s.options[i + 1:]
        for star in o._column_tops(s.cubes):
            for t in (replace(s, star=star), replace(s, star=star, options=closer)):
                ok = o._margins_pass(t)
                assert ok == (not o.ladder(t).failing_margins())
                verdicts.add(ok)
    assert verdicts == {True, False}


class CountingGenerator:
    """A generator that records every call made on it."""
    def __init__(self, seed):
        self.rng, self.calls = np.random.default_rng(seed), []

    def __getattr__(self, name):
        def call(*args, **kw):
            self.calls.append((name, args, kw))
            return getattr(self.rng, name)(*args, **kw)
        return call


def test_sampler_reads_the_generator_in_blocks():
    # Every call is one block of uniforms; an accepted scene takes a few dozen calls at most, not thousands.
    for level in (1, 2, 3):
        for seed in range(3):
            g = CountingGenerator(seed)
            try:
                o.sample(g, level)
            except Reject:
                pass
            assert g.calls and all(c == ("random", (o._Draws.BLOCK,), {}) for c in g.calls)
            assert len(g.calls) <= 60


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_symmetric_overhangs_keep_the_front_view_symmetric_by_construction(seed, paired):
    d = o._Draws(np.random.default_rng(seed))
    cubes = o._heightmap(d, 3, True, mirrored=paired)
    if cubes is None:
        return
    box = o._box(o.GRID[3], o.HMAX[3])
    tops = o._column_tops(cubes)
    assert min(box.visible(box.bits(cubes), c, "+z") for c in tops) >= o.TOP_VISIBLE   # built line by line
    out = o._overhangs(d, cubes, True, paired)
    if out is None:
        return
    f = o.front_view(out)
    assert vx.flip(f) == f and vx.connected(out)
    assert any(z > 0 and (x, y, z - 1) not in out for x, y, z in out)       # at least one cube overhangs
    if paired:
        span = min(c[1] for c in out) + max(c[1] for c in out)
        assert set(out) == {(x, span - y, z) for x, y, z in out}


def test_draws_stay_in_range_and_first_finds_only_what_passes():
    d = o._Draws(np.random.default_rng(0))
    assert {d.below(3) for _ in range(300)} == {0, 1, 2}
    assert {d.between(2, 4) for _ in range(300)} == {2, 3, 4}
    assert sorted(d.shuffled(range(6))) == list(range(6))
    assert d.first(list(range(10)), lambda c: c % 4 == 3) in (3, 7)
    assert d.first([1, 2], lambda c: False) is None
