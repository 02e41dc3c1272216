"""Domain-specific tests for rotation_matching: an independent re-derivation of every candidate's class and angle
from the drawn geometry (explicit rotation matrices on cell centres), chirality (a mirror image is never a turn of
the reference), the flip counterfactual, the minimal pair, and examples worked on paper."""
from functools import lru_cache

import numpy as np
from hypothesis import given, settings, strategies as st

from grip.domain import Reject
from grip.domains.transformational import rotation_matching as rm
from grip.geometry import apply_affine, cells_apply

SEEDS = st.integers(0, 11)          # a small pool: scenes are sampled once and shared by every test (cached)
LEVELS = st.sampled_from([1, 2, 3])
L_HEX = ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3), (2, 3))   # bar of four down the left, foot of two to the right


@lru_cache(maxsize=None)
def accepted(seed: int, level: int) -> rm.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        try:
            s = rm.sample(rng, level)
        except Reject:
            continue
        if not rm.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


# --- examples worked on paper ------------------------------------------------------------------------------------

def test_quarter_turn_of_the_l_hexomino_by_hand():
    # Turned clockwise, the bar of four points right along the top and the foot hangs down at the left.
    assert cells_apply("r90", L_HEX) == ((0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (3, 0))
    # Flipped left to right: the bar runs down the right, the foot points left.
    assert cells_apply("flip_x", L_HEX) == ((0, 3), (1, 3), (2, 0), (2, 1), (2, 2), (2, 3))
    # Shifting that mirror image two cells left lays its bar on R's bar: 4 cells shared, so 2 cells must move.
    assert rm.distance_cells(L_HEX, cells_apply("flip_x", L_HEX)) == 2
    # The P pentomino and its mirror share the 2x2 block: one cell moves, chirality 1 (never used at L1-L2).
    p = ((0, 0), (1, 0), (0, 1), (1, 1), (0, 2))
    assert rm.chirality_cells(p) == 1 and rm.is_asymmetric(p)


def test_level_1_scene_by_hand():
    # Candidates: 1 = R turned 90, 2 = F(R) turned 270, 3 = R turned 180, 4 = F(R) turned 0.
    s = rm.Scene(1, L_HEX, (), (90, 270, 180, 0), (0, 1, 0, 1), 0, 0, k=3, j=2, a=3, b=1)
    lad = rm.ladder(s)
    assert lad.rungs[0].answer.value == 6
    assert lad.rungs[1].answer.value == "rotation"
    assert lad.rungs[2].answer.value == 180.0
    assert lad.rungs[3].answer.value == ("1", "3")
    # Flipping the reference makes candidates 2 and 4 its turns: candidate 2 needs 270 degrees.
    assert lad.rungs[4].answer.value == 270.0
    # From candidate 3 (180) to candidate 1 (90): 90 - 180 = -90 = 270 clockwise.
    assert lad.open.answer.fields["angle"].value == 270.0
    # The unnamed candidate 4 is mirrored in place and joins the rotated copies.
    twin = rm.minimal_pair(s)
    assert twin.flips == (0, 1, 0, 0) and rm.ladder(twin).rungs[3].answer.value == ("1", "3", "4")


def test_level_3_different_shape_by_hand():
    # R' = R with the top of the bar moved to the right of the foot: a bar of three and a foot of three.
    other = ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (3, 2))
    s = rm.Scene(3, L_HEX, other, (45, 0, 300, 120), (0, 0, 1, 1), 2, 0, k=1, j=3, a=3, b=4)
    assert rm.candidate_class(s, 2) == "different shape"
    assert rm.rotated_copies(s).value == ("1",)
    assert rm.pair_turn(s).value == 180.0          # 120 - 300 = -180
    twin = rm.minimal_pair(s)                      # the moved cell goes back: candidate 2 = R turned 0
    assert twin.different == 0 and rm.rotated_copies(twin).value == ("1", "2")


# --- the independent route: classes and angles re-derived from the drawn geometry -------------------------------

def _centres_px(scene: rm.Scene, panel: int) -> np.ndarray:
    """Cell centres of one panel as drawn (0 = reference), relative to the panel centre, as complex numbers."""
    centre = rm.panel_centres()[panel]
    if panel == 0:
        cells = cells_apply("flip_x", scene.cells) if scene.ref_flip else scene.cells
        m = rm.placement(cells, 0, 0.0, centre)
    else:
        cells = scene.other if panel == scene.different else scene.cells
        m = rm.placement(cells, scene.flips[panel - 1], scene.thetas[panel - 1], centre)
    pts = apply_affine(m, np.asarray(cells, float) + 0.5) - np.asarray(centre)
    return pts[:, 0] + 1j * pts[:, 1]


def _matching_turns(ref: np.ndarray, cand: np.ndarray) -> list[int]:
    """Every whole-degree clockwise turn (y down: multiply by exp(+i theta)) that maps ref's centres onto cand's."""
    if len(ref) != len(cand):
        return []
    theta = np.radians(np.arange(360))[:, None]
    turned = ref[None, :] * np.exp(1j * theta)
    key = lambda z: np.sort(np.round(z.real, 3) + 1j * np.round(z.imag, 3), axis=-1)
    return [int(t) for t in np.flatnonzero(np.all(np.abs(key(turned) - key(cand[None, :])) < 1e-2, axis=1))]


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS, st.booleans())
def test_classes_and_angles_rederived_from_the_picture(seed, level, flipped):
    s = accepted(seed, level)
    if flipped:                       # the Q5 edit: the same check must hold for the flipped reference
        s = rm.edit(s)
    ref = _centres_px(s, 0)
    mirror_ref = -ref.conjugate()     # the reference flipped about a vertical line, by hand
    rotations = []
    for i in range(1, 5):
        cand = _centres_px(s, i)
        turns, mirror_turns = _matching_turns(ref, cand), _matching_turns(mirror_ref, cand)
        cls = rm.candidate_class(s, i)
        if cls == "rotation":
            assert turns == [s.thetas[i - 1]] and not mirror_turns
            rotations.append(str(i))
        elif cls == "mirror image":
            assert not turns, "a mirror distractor is a turn of the reference"
            assert mirror_turns == [s.thetas[i - 1]]
        else:
            assert not turns and not mirror_turns
    assert rm.rotated_copies(s).value == tuple(rotations)
    a, b = _centres_px(s, s.a), _centres_px(s, s.b)
    assert _matching_turns(a, b) == [round(rm.pair_turn(s).value)]
    if not flipped:
        lad = rm.ladder(s)
        assert _matching_turns(ref, _centres_px(s, s.k)) == [round(lad.rungs[2].answer.value)]
        assert _matching_turns(mirror_ref, _centres_px(s, s.j)) == [round(lad.rungs[4].answer.value)]


# --- properties --------------------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_accepted_scenes_keep_every_rule(seed, level):
    s = accepted(seed, level)
    lo, hi = rm.CELLS[level]
    assert lo <= len(s.cells) <= hi and rm.has_no_holes(s.cells) and rm.is_asymmetric(s.cells)
    assert rm.chirality_cells(s.cells) >= rm.CHIRALITY_MIN[level] and rm.fit_px(s.cells) >= 0
    assert all(t % rm.STEP_DEG[level] == 0 and 0 <= t < 360 for t in s.thetas)
    classes = [rm.candidate_class(s, i) for i in range(1, 5)]
    if level < 3:
        assert s.different == 0 and set(classes) == {"rotation", "mirror image"}
    else:
        assert classes.count("different shape") == 1 and 1 <= classes.count("rotation") <= 2
        assert min(rm.distance_cells(s.other, cells_apply(op, s.cells)) for op in rm.cell_images(s.cells)) == 1
        assert rm.has_no_holes(s.other) and len(s.other) == len(s.cells)
    assert classes[s.k - 1] == "rotation" and classes[s.j - 1] == "mirror image" and 1 not in (s.k, s.j)
    assert s.a != s.b and classes[s.a - 1] == classes[s.b - 1] and s.a in (s.k, s.j)
    assert (s.a == s.k) == (classes.count("rotation") >= 2)
    assert rm.class_gap_deg(s) >= rm.ANGLE_GAP_DEG


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_flip_swaps_rotations_and_mirror_images(seed, level):
    s = accepted(seed, level)
    e = rm.edit(s)
    swap = {"rotation": "mirror image", "mirror image": "rotation", "different shape": "different shape"}
    assert [rm.candidate_class(e, i) for i in range(1, 5)] == [swap[rm.candidate_class(s, i)] for i in range(1, 5)]
    assert rm.edit(e) == s
    assert rm.ladder(s).rungs[4].answer == rm.counterfactual(e)
    assert rm.counterfactual(e).value == rm.turn_deg(e, s.j) == s.thetas[s.j - 1]
    # Asking Q5 of the unedited scene is not even defined: j is not a turn of the drawn reference.
    try:
        rm.turn_deg(s, s.j)
        raise AssertionError("candidate j is a rotated copy of the unflipped reference")
    except ValueError:
        pass


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_minimal_pair_moves_one_candidate_across_q4(seed, level):
    s = accepted(seed, level)
    twin = rm.minimal_pair(s)
    a, b = rm.ladder(s), rm.ladder(twin)
    assert not b.failing_margins()
    spare = str(next(i for i in range(1, 5) if i not in (s.k, s.j, s.a, s.b)))
    assert set(a.rungs[3].answer.value) ^ set(b.rungs[3].answer.value) == {spare}
    for q, r in ((0, 0), (2, 2), (4, 4)):
        assert a.rungs[q].answer == b.rungs[r].answer
    assert a.open.answer == b.open.answer
    assert twin.thetas == s.thetas and twin.cells == s.cells
    q = rm.rephrase_q4(s)
    assert q.answer == a.rungs[3].answer and q.text != a.rungs[3].text


def test_balancer_keeps_k_and_j_off_candidate_1_and_r_uniform():
    from collections import Counter
    rs, firsts = Counter(), Counter()
    for seed in range(90):
        s = accepted(seed, 1 + seed % 2)
        rs[len(rm.rotated_copies(s).value)] += 1
        firsts[rm.candidate_class(s, 1)] += 1
    assert set(rs) == {1, 2, 3} and max(rs.values()) < 0.5 * 90
    assert max(firsts.values()) < 0.65 * 90


def test_same_seed_same_scene():
    a = rm.sample(np.random.default_rng(7), 3)
    b = rm.sample(np.random.default_rng(7), 3)
    assert a == b and rm.ladder(a) == rm.ladder(b)


# --- the fast helpers against plain references ---------------------------------------------------------------------

def _holes_reference(cells) -> bool:
    have = set(cells)
    x1, y1 = max(x for x, _ in cells) + 1, max(y for _, y in cells) + 1
    seen, todo = set(), [(-1, -1)]
    while todo:
        x, y = todo.pop()
        if (x, y) in seen or (x, y) in have or not (-1 <= x <= x1 and -1 <= y <= y1):
            continue
        seen.add((x, y))
        todo += [(x + dx, y + dy) for dx, dy in rm.NEIGHBOURS]
    return len(seen) + len(have) == (x1 + 2) * (y1 + 2)


def test_distance_and_holes_match_plain_references():
    from grip.geometry import max_translation_overlap
    rng = np.random.default_rng(5)
    for n in range(300):
        a = rm._grow(rng, 4 + n % 7) if n % 3 else tuple(map(tuple, rng.integers(-2, 6, (6, 2)).tolist()))
        b = cells_apply(("flip_x", "r90", "diag")[n % 3], a) if n % 2 else rm._grow(rng, len(a))
        assert rm.distance_cells(a, b) == len(a) - max_translation_overlap(a, b)
        assert rm.has_no_holes(a) == _holes_reference(a)
