"""Domain-specific tests for combination_3d: which candidate fills the gap re-derived by brute force over the 24
rotation matrices and every translation into the block (no canonical forms), mirror images refused, the margin's
lower bound against the exact best-alignment difference, the minimal pair, and examples worked on paper."""
import functools
import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.solid import _voxels as vx
from grip.domains.solid import combination_3d as m
from grip.draws import Draws
from grip.renderers import projection as pj

FAST = settings(max_examples=25, deadline=None)
FEW = settings(max_examples=10, deadline=None)


@functools.cache
def pool() -> tuple:
    out = []
    for level in (1, 2, 3):
        rng = np.random.default_rng(200 + level)
        while sum(s.level == level for s in out) < 3:
            try:
                s = m.sample(rng, level)
            except Reject:
                continue
            if not m.ladder(s).failing_margins():
                out.append(s)
    return tuple(out)


SCENE = st.integers(0, 8).map(lambda i: pool()[i])


# --- an independent route: brute force over rotation matrices and translations --------------------------------

def placements(cubes, block):
    """Every cell set the piece can occupy inside the block after a proper rotation (from the 24 matrices) and a
    translation."""
    a = np.asarray(cubes)
    out = set()
    for r in pj.CUBE_ROTATIONS:
        assert round(np.linalg.det(r)) == 1          # turning only: no reflections among them
        b = a @ r.T
        b = b - b.min(axis=0)
        room = [block[i] - b[:, i].max() for i in range(3)]     # translations that keep it inside the block
        for t in itertools.product(*(range(n) for n in room)):
            out.add(frozenset(map(tuple, (b + np.asarray(t)).tolist())))
    return out


def brute_fit(scene, piece) -> str:
    cells = {(x, y, z) for x in range(scene.block[0]) for y in range(scene.block[1]) for z in range(scene.block[2])}
    empty = frozenset(cells - set(piece))
    hits = [m.OPTIONS[i] for i, c in enumerate(scene.candidates) if empty in placements(c, scene.block)]
    assert len(hits) <= 1
    return hits[0] if hits else m.NONE


def test_the_24_rotations_are_proper_and_distinct():
    mats = {tuple(r.ravel()) for r in pj.CUBE_ROTATIONS}
    assert len(mats) == 24 and all(round(np.linalg.det(r)) == 1 for r in pj.CUBE_ROTATIONS)
    assert tuple(np.diag([-1, 1, 1]).ravel()) not in mats


@FAST
@given(SCENE)
def test_gap_fit_equals_brute_force(s):
    lad = m.ladder(s)
    assert lad.rungs[3].answer.value == brute_fit(s, s.piece)
    assert lad.rungs[4].answer.value == brute_fit(s, m.edit(s).piece)


@FAST
@given(SCENE)
def test_a_mirror_image_is_accepted_only_when_the_gap_is_achiral(s):
    g = m.gap(s)
    swapped = m.Scene(s.level, s.block, s.piece, s.star, (vx.mirror(g),) + s.candidates[1:], s.kinds)
    cells = frozenset(g)
    by_brute = cells in placements(vx.mirror(g), s.block)
    assert by_brute == vx.achiral(g) == (m.mirror_fits(s).fields["mirror_fits"].value == "yes")
    if not by_brute:      # a chiral gap: its mirror image in slot 1 is not taken for the answer
        assert m.gap_fit(swapped).value != "1" and brute_fit(swapped, s.piece) != "1"


# --- examples worked on paper -------------------------------------------------------------------------------------

def test_l_tromino_gap_by_hand():
    # Block 2x2x2. Gap: an L of three cells in the x = 1 layer; the piece is the x = 0 layer plus (1,0,1): 5 cubes.
    # Candidate 1 is an L-tromino (every L-tromino is a turned copy of every other), 2 a straight tromino,
    # 3 a 2x2 square, 4 an L-tetracube. Same size as the gap (3): 1 and 2. Taking out the starred (1,0,1) leaves the
    # whole x = 1 layer empty: a 2x2 square -> candidate 3. An L-tromino is flat, so its mirror image fits: yes.
    piece = ((0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 1))
    cands = (((0, 0, 0), (0, 0, 1), (1, 0, 1)), ((0, 0, 0), (1, 0, 0), (2, 0, 0)),
             ((0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)), ((0, 0, 0), (1, 0, 0), (2, 0, 0), (2, 1, 0)))
    s = m.Scene(1, (2, 2, 2), piece, (1, 0, 1), cands, ("gap", "other", "star", "size"))
    lad = m.ladder(s)
    assert m.gap(s) == ((1, 0, 0), (1, 1, 0), (1, 1, 1))
    assert [q.answer.reference_text() for q in lad.rungs] == ["5", "3", "1, 2", "1", "3"]
    assert lad.open.answer.reference_text() == "mirror_fits=yes"
    assert m.separation(s, m.gap(s)) == 1      # the tetracubes differ in size by one


def test_chiral_tetracube_by_hand():
    # Gap = the skew tetracube (0,0,0)-(1,0,0)-(1,1,0)-(1,1,1): chiral. Candidate 1 is its mirror image
    # (x -> -x), candidate 2 the gap turned a quarter about z ((x, y) -> (-y, x)), 3 and 4 other shapes.
    # Only candidate 2 fills the gap; the mirror image cannot be turned into it: open answer no.
    g = ((0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1))
    cells = [(x, y, z) for x in range(2) for y in range(2) for z in range(2)]
    piece = tuple(c for c in cells if c not in g)
    turned = vx.normalise((-y, x, z) for x, y, z in g)
    cands = (vx.mirror(g), turned, ((0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)), ((0, 0, 0), (1, 0, 0), (0, 1, 0)))
    s = m.Scene(1, (2, 2, 2), piece, (0, 0, 1), cands, ("mirror", "gap", "other", "size"))
    assert m.gap_fit(s).value == "2" == brute_fit(s, piece)
    assert m.mirror_fits(s).fields["mirror_fits"].value == "no"
    assert vx.best_overlap_difference(g, vx.mirror(g)) == 2
    assert m.same_size(s).value == ("1", "2", "3")


# --- properties ---------------------------------------------------------------------------------------------------

@FAST
@given(SCENE)
def test_accepted_scenes_keep_the_sheet_rules(s):
    g = m.gap(s)
    lo, hi = m.GAP[s.level]
    assert lo <= len(g) <= hi and m.PIECE[s.level][0] <= len(s.piece) <= m.PIECE[s.level][1]
    assert vx.connected(g) and vx.connected(s.piece)
    assert any(n in set(g) for n in vx.neighbours(s.star)) and vx.connected(set(s.piece) - {s.star})
    assert all(m.fits_box(c) for c in s.candidates)
    assert len({vx.canonical(c) for c in s.candidates}) == 4
    lad = m.ladder(s)
    q3, q5 = lad.rungs[2].answer.value, lad.rungs[4].answer.value
    assert len(q3) in (2, 3) and q5 not in q3
    assert lad.rungs[3].answer.value in q3 + ("none",)
    assert scene_from_json(m.Scene, scene_to_json(s)) == s


@FEW
@given(SCENE)
def test_margin_is_a_lower_bound_of_the_exact_difference(s):
    g = m.gap(s)
    want = vx.canonical(g)
    exact = min(vx.best_overlap_difference(g, c) for c in s.candidates if vx.canonical(c) != want)
    assert 1 <= m.separation(s, g) <= exact


@FAST
@given(SCENE)
def test_minimal_pair_moves_one_cube_and_flips_q4(s):
    twin = m.minimal_pair(s)
    old, new = m.gap_fit(s).value, m.gap_fit(twin).value
    assert (old == m.NONE) != (new == m.NONE)
    changed = [i for i in range(4) if twin.candidates[i] != s.candidates[i]]
    assert len(changed) == 1
    k = changed[0]
    assert len(twin.candidates[k]) == len(s.candidates[k])
    assert vx.best_overlap_difference(twin.candidates[k], s.candidates[k]) == 2   # one cube moved
    assert m.ladder(twin).rungs[0].answer == m.ladder(s).rungs[0].answer
    assert not m.ladder(twin).failing_margins()
    assert brute_fit(twin, twin.piece) == new


@FAST
@given(SCENE)
def test_rephrase_is_identity_and_edit_only_removes_the_star(s):
    assert m.rephrase_q4(s).answer == m.ladder(s).rungs[3].answer
    e = m.edit(s)
    assert set(s.piece) - set(e.piece) == {s.star} and len(m.gap(e)) == len(m.gap(s)) + 1


# --- the fast paths against plain versions ------------------------------------------------------------------------

def test_box_visibility_rotations_and_probes_match_plain_versions():
    """The precomputed visibility of sets inside [0, 3)^3 equals the dense slab test to the bit; `vx.rotated` is the
    matrix product, normalised; `_probes` is the bounding-box scan, and the drawing's visibility follows."""
    rng = np.random.default_rng(5)
    for _ in range(80):
        cubes = sorted({tuple(int(v) for v in rng.integers(0, 3, 3)) for _ in range(int(rng.integers(1, 12)))})
        faces = [(tuple(int(v) for v in rng.integers(0, 3, 3)), vx.AXES[int(rng.integers(3))]) for _ in range(9)]
        occ = np.asarray(cubes, dtype=np.int64)
        assert vx.face_visibility(cubes, faces).tobytes() == vx._face_visibility_dense(occ, faces, pj.TRI).tobytes()
        probes = [c for c, _ in faces]
        best = vx._face_visibility_dense(occ, [(c, ax) for c in probes for ax in vx.AXES], pj.TRI)
        assert vx.best_face_visibility(cubes, probes).tobytes() == best.reshape(-1, 3).max(axis=1).tobytes()
        k = int(rng.integers(24))
        assert vx.rotated(cubes, k) == vx.normalise(occ @ pj.CUBE_ROTATIONS[k].T)
        lo, hi = occ.min(axis=0), occ.max(axis=0)
        box = itertools.product(*(range(a, b + 1) for a, b in zip(lo.tolist(), hi.tolist())))
        probes = [c for c in box if c not in cubes and any(n in cubes for n in vx.neighbours(c))]
        word = m._word(cubes)
        probe_word = m._probes(word)
        assert word == sum(1 << m._BIT[c] for c in cubes) and probe_word == sum(1 << m._BIT[c] for c in probes)
        # the drawing's two minima, from the plain best-face fractions; the quick refusal never refuses a drawing
        # that passes
        best = vx.best_face_visibility(cubes, list(cubes) + probes)
        want = (float(best[:len(cubes)].min()), float(best[len(cubes):].min()) if probes else 1.0)
        assert m.drawing_visibility(tuple(cubes)) == want
        assert m._visible_drawing(tuple(cubes)) == (min(want) >= m.VISIBLE)


def test_words_rotations_and_shapes_match_plain_versions():
    """A set's word gives its cells back; `_turned_words` is `vx.rotated` for each of the 24 rotations; rotations
    share a `_shape_id`, and `same_shape` is the comparison of canonical forms (turned copies, mirror images, one
    cube moved, random sets)."""
    rng = np.random.default_rng(6)
    for _ in range(100):
        a = vx.normalise({tuple(int(v) for v in rng.integers(0, 3, 3)) for _ in range(int(rng.integers(1, 10)))})
        assert m._cells(m._word(a)) == a and m._to_origin(m._word(a)) == m._word(a)
        turns = m._turned_words(m._word(a))
        assert [m._cells(w) for w in turns] == [vx.rotated(a, k) for k in range(24)]
        turned = vx.rotated(a, int(rng.integers(24)))
        assert m._shape_id(m._word(turned)) == m._shape_id(m._word(a)) and m.same_shape(turned, a)
        moved = [c for c in m.moves(a)][:2] if vx.connected(a) else []
        for b in [vx.mirror(a), *moved,
                  vx.normalise({tuple(int(v) for v in rng.integers(0, 3, 3)) for _ in range(len(a))})]:
            assert m.same_shape(a, b) == (vx.canonical(a) == vx.canonical(b))


def plain_moves(cubes):
    """`moves` on sets of cells."""
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
                if m.fits_box(new) and vx.canonical(new) != vx.canonical(own):
                    yield new


def plain_random_move(rng, cubes, tries):
    s = sorted(set(cubes))
    for _ in range(tries):
        g = s[int(rng.integers(len(s)))]
        rest = set(s) - {g}
        cells = sorted({n for r in rest for n in vx.neighbours(r)} - set(s))
        c = cells[int(rng.integers(len(cells)))]
        if vx.connected(rest) and m.fits_box(rest | {c}):
            new = vx.normalise(rest | {c})
            if vx.canonical(new) != vx.canonical(s):
                return new
    return None


def test_moves_mirrors_and_connectivity_on_words_match_plain_versions():
    rng = np.random.default_rng(7)
    for seed in range(120):
        a = tuple(sorted({tuple(int(v) for v in rng.integers(0, 3, 3)) for _ in range(int(rng.integers(2, 10)))}))
        w = m._word(a)
        assert m._connected_word(w) == vx.connected(a)
        assert m._cells(m._mirror_word(w)) == vx.mirror(a) and m._achiral(a) == vx.achiral(a)
        assert list(m.moves(a)) == list(plain_moves(a))
        if len(a) < 2:
            continue
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        assert m.random_move(Draws(r1), a, 4) == plain_random_move(r2, a, 4) and r1.random() == r2.random()


def plain_grow_gap(rng, block, n, sym_axis):
    """`_grow_gap` on sets of cell ids."""
    t = m._block_tables(block)
    around = [{i for i in range(27) if w >> i & 1} for w in t.around]
    mirror = t.mirror[sym_axis] if sym_axis is not None else range(27)
    r = rng.random()
    if r < m.SEED_SHEET and t.sheet:
        g = set(t.sheet)
        g.update([mirror[c] for c in g])
    elif r < m.SEED_SHEET + m.SEED_FRONT:
        g = {t.front_corner, mirror[t.front_corner]}
    else:
        start = 9 * int(rng.integers(block[0])) + 3 * int(rng.integers(block[1])) + int(rng.integers(block[2]))
        g = {start, mirror[start]}
    front = set().union(*[around[c] for c in g]) - g
    ahead = list(t.outside)
    for c in g:
        for k in t.behind[c]:
            ahead[k] += 1
    while len(g) < n:
        if not front:
            return None
        cells = sorted(front)
        w = np.cumsum([m.GROW_BIAS ** ahead[c] for c in cells])
        c = cells[min(int(np.searchsorted(w, rng.random() * w[-1], side="right")), len(cells) - 1)]
        for new in {c, mirror[c]}:
            g.add(new)
            front.discard(new)
            front |= around[new] - g
            for k in t.behind[new]:
                ahead[k] += 1
    return sum(1 << c for c in g)


def plain_random_polycube(rng, n):
    cells = {(int(rng.integers(3)), int(rng.integers(3)), int(rng.integers(3)))}
    while len(cells) < n:
        front = sorted({k for c in cells for k in vx.neighbours(c) if all(0 <= v < 3 for v in k)} - cells)
        if not front:
            return None
        cells.add(front[int(rng.integers(len(front)))])
    return vx.normalise(cells)


def test_grown_sets_match_plain_versions():
    """`_grow_gap` and `_random_polycube` (on words) draw the same numbers and give the same sets as the plain
    versions on sets of cells."""
    dims = sorted({d for ds in m.BLOCKS.values() for d in ds})
    for seed in range(150):
        block = tuple(np.random.default_rng(seed).permutation(dims[seed % len(dims)]).tolist())
        args = (block, 3 + seed % 8, (None, 0, 1, 2)[seed % 4])
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert m._grow_gap(Draws(a), *args) == plain_grow_gap(b, *args) and a.random() == b.random()
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        n = 1 + seed % 11
        assert m._random_polycube(Draws(a), n) == plain_random_polycube(b, n) and a.random() == b.random()
