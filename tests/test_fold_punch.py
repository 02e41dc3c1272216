"""Domain-specific tests for fold_punch: the unfolded pattern re-derived by explicit reflection matrices applied to
every cell centre of the sheet (independent of the sampler's layer bookkeeping), the guards against the upstream
defect of asking the same question at rungs 4 and 5, a mirror-image metamorphic relation, the minimal pair and the
Q4 rephrasing, and examples worked on paper."""
from collections import defaultdict
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from domain_scenes import accepted_scene
from grip.domain import Reject
from grip.domains.transformational import fold_punch as fp
from grip.domains.transformational._folding import region

N_SCENES = 21


def _accepted(seed: int, level: int) -> fp.Scene:
    return accepted_scene(fp, seed, level)


@lru_cache(maxsize=None)
def scenes() -> tuple[fp.Scene, ...]:
    return tuple(_accepted(1000 + i, 1 + i % 3) for i in range(N_SCENES))


INDEX = st.integers(0, N_SCENES - 1)


# --- an independent route: explicit reflection matrices on the 64 cell centres ------------------------------------

def _matrix(kind: str, c: int) -> np.ndarray:
    """Written out by hand for each line kind, not taken from grip.geometry."""
    return {"x": np.array([[-1, 0, 2 * c], [0, 1, 0], [0, 0, 1]]),          # x = c
            "y": np.array([[1, 0, 0], [0, -1, 2 * c], [0, 0, 1]]),          # y = c
            "d": np.array([[0, 1, -c], [1, 0, c], [0, 0, 1]]),              # y = x + c
            "a": np.array([[0, -1, c], [-1, 0, c], [0, 0, 1]])}[kind]       # y = -x + c


def _side(kind: str, c: int, x: float, y: float) -> float:
    return {"x": x - c, "y": y - c, "d": y - x - c, "a": x + y - c}[kind]


def forward(folds, point, upto: int | None = None) -> tuple[float, float]:
    """Where a point of the flat sheet lies after the first `upto` folds: on a fold's flap side it is reflected."""
    p = np.array([point[0], point[1], 1.0])
    for kind, c, flap in folds[:upto]:
        if np.sign(_side(kind, c, p[0], p[1])) == flap:
            p = _matrix(kind, c) @ p
    return float(p[0]), float(p[1])


def brute_pattern(scene: fp.Scene) -> tuple:
    cells = []
    for r in range(8):
        for c in range(8):
            for p, k in zip(scene.holes, scene.punched_after):
                if forward(scene.folds, (c + 0.5, r + 0.5), k) == tuple(p):
                    cells.append((c, r))
    return tuple(sorted(cells))


def brute_layers(folds, p, upto=None) -> int:
    return sum(forward(folds, (c + 0.5, r + 0.5), upto) == tuple(p) for r in range(8) for c in range(8))


@settings(max_examples=21, deadline=None)
@given(INDEX)
def test_unfolded_pattern_matches_explicit_reflections(i):
    s = scenes()[i]
    truth = brute_pattern(s)
    assert fp.pattern(s) == truth
    lad = fp.ladder(s)
    assert lad.rungs[1].answer.value == brute_layers(s.folds, s.holes[0])
    assert lad.rungs[2].answer.value == len(truth)
    assert s.candidates[int(lad.rungs[3].answer.value) - 1] == truth
    # Q5: hole 1 punched after early_fold - 1 folds, the others at the end
    early = brute_layers(s.folds, s.holes[0], s.early_fold - 1)
    assert lad.rungs[4].answer.value == early + sum(brute_layers(s.folds, p) for p in s.holes[1:])
    assert brute_pattern(fp.edit(s)) == fp.pattern(fp.edit(s))


# --- guards: rung 5 is not rung 4 asked again, nor a fixed map of earlier answers ---------------------------------

def q5_problems(ladders) -> list[str]:
    """What the upstream ladder got wrong: the same question at rungs 4 and 5, or a Q5 that a lookup on earlier
    answers would give. Over a sample: Q5's text and id must differ from Q4's, and Q5 must not be a function of
    Q4's answer, of Q3's, or of (Q2, Q3)."""
    problems = []
    for lad in ladders:
        q4, q5 = lad.rungs[3], lad.rungs[4]
        if q4.text == q5.text or q4.id == q5.id:
            problems.append(f"rung 5 repeats rung 4: {q5.text!r}")
    for name, key in (("Q4", lambda l: (l.rungs[3].answer.key(),)), ("Q3", lambda l: (l.rungs[2].answer.key(),)),
                      ("Q2 and Q3", lambda l: (l.rungs[1].answer.key(), l.rungs[2].answer.key()))):
        seen = defaultdict(set)
        for lad in ladders:
            seen[key(lad)].add(lad.rungs[4].answer.key())
        if all(len(v) == 1 for v in seen.values()):
            problems.append(f"Q5 is a function of {name} over {len(ladders)} scenes")
    return problems


def test_rung5_is_a_different_question_from_rung4():
    ladders = [fp.ladder(s) for s in scenes()]
    assert q5_problems(ladders) == []
    assert all(l.rungs[4].edit for l in ladders)


def test_q5_guard_catches_the_upstream_repeat():
    # Upstream asked rung 4's question again at rung 5: a ladder built that way must fail the guard.
    ladders = [fp.ladder(s) for s in scenes()]
    repeated = [replace(l, rungs=l.rungs[:4] + (replace(l.rungs[3], position=5),)) for l in ladders]
    assert any("repeats rung 4" in p for p in q5_problems(repeated))
    assert any("function of Q4" in p for p in q5_problems(repeated))
    # A Q5 that is always Q3 - Q2 / 2 (the half-fold lookup) must fail it too.
    lookup = [replace(l, rungs=l.rungs[:4] + (replace(l.rungs[4], answer=replace(
        l.rungs[4].answer, value=l.rungs[2].answer.value - l.rungs[1].answer.value // 2)),)) for l in ladders]
    assert any("function of Q2 and Q3" in p for p in q5_problems(lookup))


# --- properties ---------------------------------------------------------------------------------------------------

@settings(max_examples=21, deadline=None)
@given(INDEX)
def test_accepted_scenes_keep_every_rule(i):
    s = scenes()[i]
    nf = len(s.folds)
    assert nf in fp.N_FOLDS[s.level] and 1 <= len(s.holes) <= 3
    assert float(fp.clearances(s.folds, s.holes).min()) >= fp.CLEAR[s.level]
    assert fp.flap_layers(s.folds, [s.holes[0]])[0] >= 1          # hole 1 lies under the last flap
    assert len(set(s.candidates)) == 4 and sum(c == fp.pattern(s) for c in s.candidates) == 1
    lad = fp.ladder(s)
    assert lad.rungs[4].answer.value < lad.rungs[2].answer.value
    assert 1 <= s.early_fold <= nf
    # every fold keeps its flap inside the part that stays: the folded outline only shrinks
    areas = [region(layers).area for layers in fp.stages(s.folds)]
    assert all(b < a for a, b in zip(areas, areas[1:]))


def _mirror_scene(s: fp.Scene) -> fp.Scene:
    """The whole scene reflected about x = 4 (x -> 8 - x)."""
    def fold(f):
        kind, c, side = f
        return {"x": ("x", 8 - c, -side), "y": ("y", c, side), "d": ("a", 8 + c, side), "a": ("d", c - 8, side)}[kind]
    return replace(s, folds=tuple(fold(f) for f in s.folds), holes=tuple((8 - x, y) for x, y in s.holes),
                   move=(-s.move[0], s.move[1]),
                   candidates=tuple(tuple(sorted((7 - c, r) for c, r in cells)) for cells in s.candidates))


@settings(max_examples=21, deadline=None)
@given(INDEX)
def test_mirror_image_scene_has_the_mirrored_pattern(i):
    s = scenes()[i]
    m = _mirror_scene(s)
    assert fp.pattern(m) == tuple(sorted((7 - c, r) for c, r in fp.pattern(s)))
    a, b = fp.ladder(s), fp.ladder(m)
    assert [q.answer for q in a.rungs] == [q.answer for q in b.rungs]
    assert abs(a.rungs[0].margin.value - b.rungs[0].margin.value) < 1e-9


@settings(max_examples=21, deadline=None)
@given(INDEX)
def test_minimal_pair_makes_the_moved_drawing_true(i):
    s = scenes()[i]
    try:
        twin = fp.minimal_pair(s)
    except Reject as r:                       # hole 1's label has no room at the moved spot
        assert r.reason == "no_minimal_pair" and fp.hole_label_spot(replace(s, holes=(
            (s.holes[0][0] + s.move[0], s.holes[0][1] + s.move[1]), *s.holes[1:]))) is None
        return
    lad, tl = fp.ladder(s), fp.ladder(twin)
    assert not tl.failing_margins()
    assert twin.candidates == s.candidates and len(twin.holes) == len(s.holes)
    moved = tuple(sorted(fp.pattern_of(s.folds, ((s.holes[0][0] + s.move[0], s.holes[0][1] + s.move[1]),
                                                 *s.holes[1:]))))
    assert s.candidates[int(tl.rungs[3].answer.value) - 1] == moved
    assert tl.rungs[3].answer != lad.rungs[3].answer and tl.rungs[0].answer == lad.rungs[0].answer
    assert fp.minimal_pair(twin) == s
    r = fp.rephrase_q4(s)
    assert r.answer == lad.rungs[3].answer and r.text != lad.rungs[3].text


def test_level_fold_kinds():
    for s in scenes():
        kinds = [f[0] for f in s.folds]
        if s.level == 1:
            assert all((k, c) in (("x", 4), ("y", 4), ("x", 2), ("x", 6), ("y", 2), ("y", 6)) for k, c, _ in s.folds)
        if s.level == 2:
            assert any(k in "da" for k in kinds) and any(k in "xy" for k in kinds)


# --- examples worked on paper --------------------------------------------------------------------------------------

def test_one_half_fold_by_hand():
    # x = 4, left half folds over onto the right (flap side -1). A punch at (5.5, 2.5) goes through the right half
    # (cell (5, 2)) and the left half laid over it: x -> 8 - x gives (2.5, 2.5), cell (2, 2). Two layers, two holes.
    # Punched before the fold: one hole. First hole in reading order: row 3, column 3.
    # Distractors: no_last = {(5, 2)}; moved down a cell = {(2, 3), (5, 3)}; mirrored: x = 4 leaves the pattern
    # unchanged, y = 4 sends row 2 to row 5.
    truth = ((2, 2), (5, 2))
    s = fp.Scene(1, (("x", 4, -1),), ((5.5, 2.5),), (1,), (0, 1), 1,
                 (((5, 2),), ((2, 3), (5, 3)), truth, ((2, 5), (5, 5))))
    lad = fp.ladder(s)
    assert [q.answer.value for q in lad.rungs] == [1, 2, 2, "3", 1]
    assert lad.open.answer.reference_value() == {"row": 3, "col": 3}
    assert lad.rungs[0].margin.value == pytest.approx(1.5)          # hole to the fold line x = 4
    assert lad.rungs[3].margin.value == 1.0                          # no_last lacks one hole
    assert fp._mirror(truth) == ((2, 5), (5, 5))
    twin = fp.minimal_pair(s)
    assert twin.holes == ((5.5, 3.5),) and fp.ladder(twin).rungs[3].answer.value == "2"


def test_diagonal_then_grid_fold_by_hand():
    # Fold 1: y = x, the lower-left triangle (y > x, side +1) turns over onto the upper-right one: (x, y) -> (y, x).
    # Fold 2: x = 6, the part right of it (side +1) turns over: x -> 12 - x; it lands on (4,0)-(6,0)-(6,6)-(4,4),
    # inside the triangle. A punch at (5.5, 1.5) passes 4 layers: the sheet itself (5, 1), fold 1's flap (1, 5),
    # and fold 2's two flap layers from (6.5, 1.5): (6, 1) and its fold-1 partner (1, 6).
    # Nearest edge: the crease x = 6, 0.5 away. Before fold 2 the spot has 2 layers: Q5 = 2.
    # First hole in reading order: row 2 (y in [1, 2)), column 6 (cell (5, 1)).
    truth = ((1, 5), (1, 6), (5, 1), (6, 1))
    s = fp.Scene(2, (("d", 0, 1), ("x", 6, 1)), ((5.5, 1.5),), (2,), (0, 1), 2,
                 (truth, ((1, 5), (5, 1)), ((1, 6), (1, 7), (5, 2), (6, 2)), ((5, 1), (6, 1))))
    assert brute_pattern(s) == truth
    lad = fp.ladder(s)
    assert [q.answer.value for q in lad.rungs] == [1, 4, 4, "1", 2]
    assert lad.open.answer.reference_value() == {"row": 2, "col": 6}
    assert lad.rungs[0].margin.value == pytest.approx(0.5)
    assert fp.ladder(replace(s, early_fold=1)).rungs[4].answer.value == 1
    # After fold 1, y = 2 with the top part moving: (0,0)-(8,0)-(8,2)-(2,2) would land on (0,4)-(8,4)-(8,2)-(2,2),
    # whose corner (0, 4) is off the triangle: not allowed. x = 2 with the left part moving lands (0,0)-(2,0)-(2,2)
    # on (4,0)-(2,0)-(2,2), inside it: allowed.
    after = fp.fold_mask(np.ones(len(fp._QX), bool), ("d", 0, 1))
    assert fp.fold_mask(after, ("y", 2, -1)) is None and fp.fold_mask(after, ("x", 2, -1)) is not None


def test_distance_zero_to_a_diagonal_is_rejected():
    # After x = 4 (left half over), y = x + 2 folds the corner triangle (4,6)-(4,8)-(6,8) up onto (4,6)-(6,6)-(6,8).
    # (4.5, 6.5) lies on that diagonal: clearance 0 at every level. (6.5, 7.5) lies 0.71 units from it and 0.5 from
    # the sheet's bottom edge.
    folds = (("x", 4, -1), ("d", 2, 1))
    got = fp.clearances(folds, [(4.5, 6.5), (6.5, 7.5), (20.0, 20.0)])
    assert got[0] == 0.0 and got[1] == pytest.approx(0.5) and got[2] == 0.0


def test_label_box_constant_is_the_measured_one():
    from grip.renderers.canvas import Canvas
    from grip.renderers.style import LABEL
    from grip.renderers.text import text_size
    assert text_size(Canvas(8), "1", LABEL.with_(font_px=18.0)) == fp.LABEL_BOX_PX
    for s in scenes():
        assert fp.hole_label_spot(s) is not None


# --- the fast paths against plain references ---------------------------------------------------------------------

def _reference_clearances(folds, pts):
    """`clearances` one stage at a time through grip.geometry (the arithmetic it must reproduce bit for bit)."""
    from grip.geometry import apply_affine, line_distances, point_segment_distances, reflection_matrix
    from grip.domains.transformational import _folding as fo
    pts = np.asarray(pts, float).reshape(-1, 2)
    st = fo.stages(folds)
    spot, idx = np.nonzero(fo.membership(folds, len(folds), pts))
    q, d = pts[spot], np.full(len(spot), np.inf)
    for k in range(len(folds), -1, -1):
        edges = np.array([(*v, *ly.verts[(j + 1) % len(ly.verts)]) for ly in st[k] for j, v in enumerate(ly.verts)])
        d = np.minimum(d, point_segment_distances(q, edges).min(axis=1))
        if k < len(folds):
            d = np.minimum(d, line_distances(q, *fo.fold_line(folds[k])))
        if k == 0:
            break
        f = np.array([st[k][i].flipped for i in idx], bool)
        if f.any():
            q = q.copy()
            q[f] = apply_affine(reflection_matrix(*fo.fold_line(folds[k - 1])), q[f])
        idx = np.array([st[k][i].parent for i in idx], int)
    best = np.full(len(pts), np.inf)
    np.minimum.at(best, spot, d)
    return np.where(np.isfinite(best), best, 0.0)


def _reference_label_spot(s: fp.Scene):
    from shapely.geometry import MultiLineString, Point, box
    layers = fp.stages(s.folds)[-1]
    lines = MultiLineString([[(v[0] * 20, v[1] * 20), (w[0] * 20, w[1] * 20)] for ly in layers
                             for v, w in zip(ly.verts, ly.verts[1:] + ly.verts[:1])])
    dots = [Point(x * 20, y * 20).buffer(fp.HOLE_R) for x, y in s.holes[1:]]
    for u, v in ((s.holes[0][0] * 20 + r * dx, s.holes[0][1] * 20 + r * dy) for r, dx, dy in fp.LABEL_SPOTS):
        b = box(u - 8.0, v - 9.5, u + 8.0, v + 9.5)
        if b.distance(lines) >= fp.LABEL_CLEAR_PX and all(b.distance(d) >= 2.0 for d in dots):
            return u, v
    return None


def test_fast_paths_match_plain_references():
    from grip.geometry import apply_affine, clip_convex, reflection_matrix
    rng = np.random.default_rng(3)
    grid = [(i + 0.5, j + 0.5) for j in range(-1, 9) for i in range(-1, 9)]
    for s in scenes():
        pts = np.concatenate([grid, rng.uniform(-1, 9, (30, 2))])
        assert fp.clearances(s.folds, pts).tobytes() == _reference_clearances(s.folds, pts).tobytes()
        st = fp.stages(s.folds)
        assert fp.extent(st[-1]) == region(st[-1]).bounds
        for k, f in enumerate(s.folds):      # a flap layer's corners and map: reflected by the matrix
            r = reflection_matrix(*fp.fold_line(f))
            for ly in st[k + 1]:
                if ly.flipped:
                    src = st[k][ly.parent]
                    moved = apply_affine(r, clip_convex(src.verts, *fp.fold_line(f), f[2]))[::-1]
                    assert ly.verts == tuple(map(tuple, moved.tolist()))
                    assert ly.to_sheet == tuple(map(tuple, (np.asarray(src.to_sheet) @ r).tolist()))
        for _ in range(3):
            holes = tuple((float(rng.integers(8)) + 0.5, float(rng.integers(8)) + 0.5) for _ in range(3))
            t = replace(s, holes=holes[:int(rng.integers(1, 4))])
            assert fp.hole_label_spot(t) == _reference_label_spot(t)
