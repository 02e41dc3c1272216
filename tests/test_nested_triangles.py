"""Domain-specific tests for nested_triangles: Routh-type area ratios against pixel areas, the triangle count by
enumeration, symmetries of rho, the Q5 edit, the minimal pair and the rephrased Q4, and examples worked on paper."""
import functools
import itertools
import math
from dataclasses import replace
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from shapely.geometry import LineString, Point, Polygon

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.plane import nested_triangles as nt
from grip.draws import Draws
from grip.renderers.canvas import Canvas
from domain_scenes import accepted_scene

SEEDS = st.integers(0, 10**6)
LEVELS = st.sampled_from([1, 2, 3])
# A fixed, roomy T1 for hand scenes: area 0.5 * 568 * 540 = 153 360 px^2 (>= 147 456), angles 62.2, 62.2, 55.5.
ABC = ((100.0, 650.0), (668.0, 650.0), (384.0, 110.0))


@functools.lru_cache(maxsize=None)
def accepted(seed: int, level: int) -> nt.Scene:
    return accepted_scene(nt, seed, level, 200)


def hand(divisions, ticks, p_edit=(1, 8), level=1, area=48):
    return nt.Scene(level, ABC, tuple(divisions), tuple(tuple(t) for t in ticks), p_edit, area)


def px_area(t) -> float:
    return Polygon(t).area


def answers(s):
    return {q.id: q.answer for q in nt.ladder(s).questions}


# --- examples worked on paper ----------------------------------------------------------------------------------

def test_sheet_example_one_seventh_everywhere():
    # p = q = r = 1/7: rho = (6/7)^2 - (1/7)(5/7) = 31/49 > 1/2, so T2 is larger; corner at A = (1/7)(6/7) = 6/49.
    # Q5 with p' = 1/8: rho' = 36/49 - (1/8)(5/7) = 36/49 - 5/56 = 0.645 -> T2. Open: 48 * 31/49 = 30.37 cm^2.
    s = hand([7], [(1, 1, 1)])
    a = answers(s)
    assert a["triangle_count"].value == 5
    assert a["corner_on_ab"].value == "A"
    assert a["corner_triangle_a"].value == pytest.approx(6 / 49, abs=1e-4)
    assert a["larger_part"].value == "T2"
    assert a["larger_part_moved"].value == "T2"
    assert a["innermost_area"].fields["area"].value == pytest.approx(48 * 31 / 49, rel=1e-3)
    # Minimal pair (sheet): no one-step move flips Q4 (each gives 26/49 = 0.531); two steps on p give 3/7 but put
    # p = 3/7 within 1/8 of the midpoint; two steps on q give rho = (4/7)(6/7) - (1/7)(3/7) = 21/49 -> corners.
    twin = nt.minimal_pair(s)
    assert twin.ticks == ((1, 3, 1),) and twin.divisions == (7,)
    assert nt.ratios(twin)[0] == F(21, 49)
    assert answers(twin)["larger_part"].value == "corners"


def test_worked_example_two_levels():
    # n = 8, p = 3/8, q = 5/8, r = 2/8: corners c_A = (3/8)(6/8) = 18/64, c_B = (5/8)(5/8) = 25/64,
    # c_C = (2/8)(3/8) = 6/64, so rho = 1 - 49/64 = 15/64 -> corners. Q2: 3/8 < 1/2 -> A.
    # T3 at the midpoints of T2's sides (n = 4, 2/4 each): rho_2 = 1/4. Open: 48 * 15/64 * 1/4 = 2.8125 cm^2.
    # Q5 with p' = 1/8: rho' = (3/8)(6/8) - (1/8)(1/8) = 17/64 -> still corners. Count: T1 + 3 + T2 + 3 + T3 = 9.
    s = hand([8, 4], [(3, 5, 2), (2, 2, 2)])
    a = answers(s)
    assert nt.ratios(s) == (F(15, 64), F(1, 4))
    assert a["triangle_count"].value == 9 == nt.enumerated_triangles(s)
    assert a["corner_on_ab"].value == "A"
    assert a["corner_triangle_a"].value == pytest.approx(18 / 64, abs=1e-4)
    assert a["larger_part"].value == "corners"
    assert a["larger_part_moved"].value == "corners"
    assert a["innermost_area"].fields["area"].value == pytest.approx(2.8125, rel=1e-3)


def test_moving_the_corner_can_flip_the_answer():
    # p = 6/7, q = r = 6/7 (mirror of 1/7 everywhere): rho = 31/49 -> T2. Moving T2's corner to 1/8 of AB:
    # rho' = (1/7)(1/7) - (1/8)(1 - 12/7) = 1/49 + 5/56 = 0.1097 -> corners.
    s = hand([7], [(6, 6, 6)])
    assert nt.larger_part(s).value == "T2" and nt.corner_on_ab(s).value == "B"
    e = nt.edit(s)
    assert nt.fractions_of(e, 0) == (F(1, 8), F(6, 7), F(6, 7))
    assert nt.counterfactual(e).value == "corners"
    assert float(nt.ratios(e)[0]) == pytest.approx(1 / 49 + 5 / 56)


# --- exhaustive checks of the balance table ---------------------------------------------------------------------

def test_every_cell_is_reachable_and_respects_its_rules():
    for n1 in nt.DIV1:
        cells = nt._cells(n1)
        assert set(cells) == set(itertools.product([False, True], repeat=3))   # all 8, for every n_1
        for (q2_a, q4_t2, q5_t2), options in cells.items():
            for (a, b, c), p_edits in options:
                p, q, r = F(a, n1), F(b, n1), F(c, n1)
                rho = 1 - p * (1 - r) - q * (1 - p) - r * (1 - q)          # 1 minus the three corners
                assert (p < F(1, 2)) == q2_a and abs(p - F(1, 2)) >= F(1, 8)
                assert (rho > F(1, 2)) == q4_t2 and abs(rho - F(1, 2)) >= F(3, 100)
                for num, den in p_edits:
                    pe = F(num, den)
                    rho_e = 1 - pe * (1 - r) - q * (1 - pe) - r * (1 - q)
                    assert pe != p and (rho_e > F(1, 2)) == q5_t2 and abs(rho_e - F(1, 2)) >= F(3, 100)


def test_level_three_builds_obtuse_triangles():
    def largest_angle(v):
        v = np.asarray(v)
        out = []
        for k in range(3):
            a, b = v[(k + 1) % 3] - v[k], v[(k + 2) % 3] - v[k]
            out.append(math.degrees(math.acos(a @ b / np.linalg.norm(a) / np.linalg.norm(b))))
        return max(out)
    angles = [largest_angle(accepted(s, 3).vertices) for s in range(40)]
    assert any(a > 90 for a in angles) and all(a <= 100 + 1e-6 for a in angles)


# --- properties of sampled scenes -------------------------------------------------------------------------------

@given(SEEDS, LEVELS)
def test_scene_invariants_and_margins(seed, level):
    s = accepted(seed, level)
    assert scene_from_json(nt.Scene, scene_to_json(s)) == s
    n_tri = nt.triangle_count(s)
    assert n_tri in nt.N_SET[level] and s.divisions[0] in nt.DIV1
    assert nt.enumerated_triangles(s) == 4 * n_tri - 3 == nt.ladder(s).rungs[0].answer.value
    v = np.asarray(s.vertices)
    assert v.min() >= nt.BOX[0] and v.max() <= nt.BOX[1]
    tris = nt.triangles_px(s)
    assert px_area(tris[0]) >= nt.MIN_AREA_PX2
    for k in range(3):
        a, b = v[(k + 1) % 3] - v[k], v[(k + 2) % 3] - v[k]
        ang = math.degrees(math.acos(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
        assert 35 - 1e-6 <= ang <= (100 if level == 3 else 90) + 1e-6
    # Routh-type ratio against the pixel areas, and the corner triangle at A against its pixel area.
    for i, r in enumerate(nt.ratios(s)):
        assert px_area(tris[i + 1]) / px_area(tris[i]) == pytest.approx(float(r), rel=1e-6)
    corner_a = Polygon([tris[0][0], tris[1][0], tris[1][2]]).area / px_area(tris[0])
    assert nt.corner_at_a(s).value == pytest.approx(corner_a, abs=1e-4)
    # Legibility rules of the drawn state.
    assert nt.guard_px(s) >= nt.GUARD_PX and nt.vertex_gap_px(s) >= nt.VERTEX_GAP_PX
    assert nt.inradius_px(tris[-1]) >= nt.INRADIUS_PX
    for i in range(len(s.divisions)):
        side = np.linalg.norm(tris[i] - tris[i][[1, 2, 0]], axis=1)
        if nt.ticked(s, i):
            assert side.min() / s.divisions[i] >= (nt.READ_PX if i == 0 else nt.DEEP_READ_PX)
            assert i == 0 or s.divisions[i] <= nt.DEEP_MAX[level]
        else:
            # Level 3: a third or two thirds, each corner a third of its side (>= 24 px) from the other choice.
            assert level == 3 and i > 0
            assert all(F(k, s.divisions[i]) in (F(1, 3), F(2, 3)) for k in s.ticks[i])
            assert side.min() / 3 >= nt.DEEP_READ_PX


@given(SEEDS, LEVELS)
def test_mirrored_ticks_keep_every_area_answer(seed, level):
    # rho = 1 - (p + q + r) + (pq + qr + rp) is symmetric and invariant under x -> 1 - x, so reading every side
    # from its other end changes no area answer; Q2 flips and the corner at A becomes (1 - p) r.
    s = accepted(seed, level)
    m = replace(s, ticks=tuple(tuple(n - k for k in t) for n, t in zip(s.divisions, s.ticks)))
    assert nt.ratios(m) == nt.ratios(s)
    assert nt.larger_part(m) == nt.larger_part(s) and nt.innermost_area(m) == nt.innermost_area(s)
    assert nt.corner_on_ab(m).value != nt.corner_on_ab(s).value
    p, _, r = nt.fractions_of(s, 0)
    assert nt.corner_at_a(m).value == pytest.approx(float((1 - p) * r), abs=1e-4)
    for perm in itertools.permutations(range(3)):
        f = nt.fractions_of(s, 0)
        assert nt.rho(*(f[j] for j in perm)) == nt.ratios(s)[0]


@given(SEEDS, LEVELS)
def test_q5_recomputes_on_the_edited_state(seed, level):
    s = accepted(seed, level)
    lad = nt.ladder(s)
    e = nt.edit(s)
    p, q, r = nt.fractions_of(s, 0)
    pe = F(*s.p_edit)
    assert nt.fractions_of(e, 0) == (pe, q, r) and pe != p
    assert [nt.fractions_of(e, i) for i in range(1, len(e.divisions))] == \
        [nt.fractions_of(s, i) for i in range(1, len(s.divisions))]
    rho_e = (1 - q) * (1 - r) - pe * (1 - q - r)
    assert lad.rungs[4].answer.value == ("T2" if rho_e > F(1, 2) else "corners")
    assert abs(rho_e - F(1, 2)) >= nt.RHO_GAP
    assert lad.rungs[4].margin.value == pytest.approx(float(abs(rho_e - F(1, 2))))
    words = nt.P_WORDS[s.p_edit]
    assert words in lad.rungs[4].text and lad.rungs[4].text != lad.rungs[3].text


@given(SEEDS, LEVELS)
def test_rephrase_is_the_inversion_of_q4(seed, level):
    s = accepted(seed, level)
    q4, rq = nt.ladder(s).rungs[3], nt.rephrase_q4(s)
    assert {q4.answer.value, rq.answer.value} == {"T2", "corners"}
    assert rq.margin == q4.margin and rq.text != q4.text


# 30 examples, as the other brute-force minimal-pair searches (nested_squares 30, nested_hexagons 25), not the
# profile's 60: each example tries every tick move of the scene.
@settings(max_examples=30)
@given(SEEDS, st.sampled_from([1, 3]))
def test_minimal_pair_is_the_fewest_tick_steps(seed, level):
    s = accepted(seed, level)
    try:
        twin = nt.minimal_pair(s)
    except Reject:
        return
    assert twin.divisions == s.divisions and twin.ticks[1:] == s.ticks[1:] and twin.vertices == s.vertices
    assert nt.larger_part(twin) != nt.larger_part(s)
    assert not nt.ladder(twin).failing_margins()
    assert nt.triangle_count(twin) == nt.triangle_count(s)
    steps = sum(abs(a - b) for a, b in zip(twin.ticks[0], s.ticks[0]))
    n = s.divisions[0]
    # No move with fewer steps flips Q4 and keeps every margin (rendering aside).
    for new in itertools.product(range(1, n), repeat=3):
        d = sum(abs(a - b) for a, b in zip(new, s.ticks[0]))
        if 0 < d < steps:
            cand = replace(s, ticks=(new,) + s.ticks[1:])
            if nt.larger_part(cand) == nt.larger_part(s) or F(*s.p_edit) == F(new[0], n):
                continue
            assert nt.ladder(cand).failing_margins() or not legible(cand), (new, twin.ticks[0])


def legible(s) -> bool:
    try:
        nt._legible(s)
    except Reject:
        return False
    return True


# --- readability of the drawing -------------------------------------------------------------------------------

def quarters():
    """An item whose old pointer landed exactly on T2's 3/4 tick: T2's sides in quarters, T3's corners at 1/4, 3/4
    and 1/2 (the old rule aimed at the middle of the longer piece T3's corner leaves: (1 + 1/2) / 2 = 3/4)."""
    return nt.Scene(1, ((373.0, 634.0), (704.0, 66.0), (63.0, 222.0)), (6, 4, 3), ((1, 1, 1), (1, 3, 2), (1, 2, 2)),
                    (7, 8), 72)


def drawn_pointer(s):
    """The drawn T2 pointer's tip and head (from the canvas's register of strokes)."""
    canvas = Canvas(768)
    nt.draw(s, canvas)
    heads = [g for own, g in canvas.strokes if own == "t2_label" and g.geom_type == "Polygon"
             and len(g.exterior.coords) == 4]
    assert len(heads) == 1
    return np.array(heads[0].exterior.coords[0]), heads[0], canvas


def assert_pointer_clear(s, tip, head):
    t2 = nt.triangles_px(s)[1]
    # The side it points at: the nearest of T2's sides; its foot is the tip's projection on it.
    j = min(range(3), key=lambda j: LineString([t2[j], t2[(j + 1) % 3]]).distance(Point(tip)))
    a, e = t2[j], t2[(j + 1) % 3]
    length = np.linalg.norm(e - a)
    x = (tip - a) @ (e - a) / length
    assert LineString([a, e]).distance(Point(tip)) == pytest.approx(nt.POINTER_GAP_PX, abs=1e-6)
    marks = [0.0, 1.0] + ([float(nt.fractions_of(s, 1)[j])] if len(s.divisions) > 1 else [])
    if len(s.divisions) > 1 and nt.ticked(s, 1):
        marks += [m / s.divisions[1] for m in range(1, s.divisions[1])]
    assert min(abs(x - m * length) for m in marks) >= nt.POINTER_CLEAR_PX - 1e-6
    ticks = [LineString(seg) for seg in nt.tick_segments(s)]
    vertices = [Point(v) for t in nt.triangles_px(s) for v in t]
    assert min(head.distance(g) for g in ticks + vertices) >= nt.HEAD_CLEAR_PX - 1e-6


def test_pointer_lands_between_ticks_and_corners():
    s = quarters()
    tip, head, _ = drawn_pointer(s)
    assert_pointer_clear(s, tip, head)
    # Whichever corner triangle holds the label, the pointer keeps clear (0.75 of a side in quarters was a tick).
    t1, t2 = nt.triangles_px(s)[:2]
    for k in range(3):
        centre = (t1[k] + t2[k] + t2[(k - 1) % 3]) / 3
        tip = nt.pointer_tip(s, k, centre)
        assert tip is not None
        assert_pointer_clear(s, tip, nt.arrowhead_px(tip, centre))


@pytest.mark.parametrize("seed,level", [(0, 1), (1, 2), (2, 3), (3, 2)])
def test_pointer_of_sampled_scenes_is_clear(seed, level):
    s = accepted(seed, level)
    tip, head, _ = drawn_pointer(s)
    assert_pointer_clear(s, tip, head)


def test_a_tick_under_an_inner_corner_still_shows():
    # T3's corners sit on T2's ticks; 6 px outside T2's side at each of them the tick's own colour must show.
    s = quarters()
    _, _, canvas = drawn_pointer(s)
    rgb = canvas.array()
    t2, t3 = nt.triangles_px(s)[1:3]
    centre = t2.mean(axis=0)
    for k in range(3):
        a, e = t2[k], t2[(k + 1) % 3]
        u = (e - a) / np.linalg.norm(e - a)
        out = np.array([-u[1], u[0]])
        out = out if out @ (a - centre) > 0 else -out
        for side in (out, -out):
            x, y = np.round(t3[k] + side * 6.0).astype(int)
            assert int(rgb[y, x].min()) < 160, (k, rgb[y, x])


def test_open_question_wording_does_not_depend_on_depth():
    # One inner triangle or four: the same text, which states no count and does not imply several levels.
    one = nt.ladder(hand([7], [(1, 1, 1)])).open.text
    four = nt.ladder(hand([7, 4, 4, 3], [(1, 1, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1)])).open.text
    assert one == four
    assert "T2's corners lie on the sides of ABC" in one and "any triangle drawn inside T2" in one
    assert "every triangle that has them" not in one and "Each triangle's corners" not in one


# --- fast paths of sampling agree with the plain definitions ----------------------------------------------------

@pytest.mark.parametrize("n1", sorted(set(nt.DIV1) | {4, 5, 9}))
def test_cells_hold_every_admissible_triple_in_order(n1):
    # The table is built in integer arithmetic; here it is rebuilt from the definitions in Fractions.
    want: dict = {}
    for a, b, c in itertools.product(range(1, n1), repeat=3):
        p, q, r = F(a, n1), F(b, n1), F(c, n1)
        x = nt.rho(p, q, r)
        if abs(p - F(1, 2)) < nt.Q2_GAP or abs(x - F(1, 2)) < nt.RHO_GAP:
            continue
        by_cell: dict = {}
        for num, den in nt.P_EDIT:
            y = nt.rho(F(num, den), q, r)
            if F(num, den) != p and abs(y - F(1, 2)) >= nt.RHO_GAP:
                by_cell.setdefault((p < F(1, 2), x > F(1, 2), y > F(1, 2)), []).append((num, den))
        for cell, pe in by_cell.items():
            want.setdefault(cell, []).append(((a, b, c), tuple(pe)))
    got = nt._cells(n1)
    assert list(got) == list(want)
    assert got == {k: tuple(v) for k, v in want.items()}


NEAR_SIDE = hand([7, 3, 5], [(5, 2, 2), (2, 2, 2), (2, 4, 1)])     # a vertex 9.6 px from a side, all else kept
UNREADABLE = hand([6, 3, 6], [(3, 2, 3), (2, 1, 1), (1, 2, 1)])    # a tick spacing of 20 px, all else kept


def random_nestings(count: int):
    """Nestings with free fractions, legible or not, on sampled T1s."""
    rng = np.random.default_rng(11)
    out = []
    while len(out) < count:
        level = int(rng.integers(1, 4))
        try:
            t1 = nt._t1(rng, Draws(rng), level)
        except Reject:
            continue
        divs, ticks = [int(rng.choice(nt.DIV1))], []
        ticks.append(tuple(int(x) for x in rng.integers(1, divs[0], size=3)))
        for _ in range(int(rng.integers(0, 4))):
            n = nt.UNTICKED_DEN if level == 3 else int(rng.integers(3, 7))
            divs.append(n)
            ticks.append(tuple(int(x) for x in rng.integers(1, n, size=3)))
        out.append(nt.Scene(level, t1, tuple(divs), tuple(ticks), (1, 8), 48))
    return out


def test_fits_agrees_with_legible():
    # Hand nestings that break one rule alone: a vertex 9.6 px from a side (every other rule kept), a fraction
    # 20 px from its neighbour; random nestings for the rest.
    near_side, unreadable = NEAR_SIDE, UNREADABLE
    assert nt.guard_px(near_side) < nt.GUARD_PX and nt.vertex_gap_px(near_side) >= nt.VERTEX_GAP_PX
    assert nt.guard_px(unreadable) >= nt.GUARD_PX
    assert not nt._fits(near_side) and not nt._fits(unreadable)
    verdicts = [(nt._fits(s), legible(s)) for s in [near_side, unreadable] + random_nestings(300)]
    assert all(f == g for f, g in verdicts)
    assert {g for _, g in verdicts} == {True, False}      # both outcomes exercised


def test_fits_after_growing_a_legible_nesting_agrees_with_legible():
    # The shortcut for a legible nesting with one level appended (its new triangle's inradius and angles checked).
    verdicts = []
    for s in [NEAR_SIDE, UNREADABLE] + random_nestings(400):
        head = replace(s, divisions=s.divisions[:-1], ticks=s.ticks[:-1])
        last = nt.triangles_px(s)[-1]
        if (len(s.divisions) > 1 and legible(head) and nt.inradius_px(last) >= nt.INRADIUS_PX
                and nt.min_angle_deg(last) >= nt.SLIVER_DEG):
            verdicts.append((nt._fits(s, grown=True), legible(s)))
    assert verdicts[0] == (False, False)                  # NEAR_SIDE grew from a legible nesting
    assert all(f == g for f, g in verdicts)
    assert {g for _, g in verdicts} == {True, False}


def test_triangles_built_level_by_level_match_a_direct_build():
    for s in random_nestings(40):
        tris = [np.asarray(s.vertices, float)]
        for i in range(len(s.divisions)):
            t, f = tris[-1], np.array([float(x) for x in nt.fractions_of(s, i)])[:, None]
            tris.append(t + f * (t[nt.NEXT] - t))
        got = nt.triangles_px(s)
        assert len(got) == len(tris) and all(np.array_equal(a, b) for a, b in zip(got, tris))
        assert not any(t.flags.writeable for t in got)


def test_norm_is_numpys_norm_bit_for_bit():
    v = np.random.default_rng(3).normal(scale=300.0, size=(7, 5, 2))
    for axis in (1, 2):
        assert np.array_equal(nt._norm(v, axis), np.linalg.norm(v, axis=axis))


def test_deeper_checks_a_nesting_that_needs_no_further_level():
    # N = 2 draws no deeper level, so T2 itself must still be checked: a sliver T2 is refused, a roomy one kept.
    roomy, sliver = hand([8], [(4, 4, 4)]), hand([8], [(1, 1, 7)])
    assert legible(roomy) and not legible(sliver)
    rng = np.random.default_rng(0)
    assert nt._deeper(rng, Draws(rng), roomy, 2) == roomy
    assert nt._deeper(rng, Draws(rng), sliver, 2) is None


def test_head_clearance_from_the_parts_is_the_unions():
    # Heads around every tick and vertex, at distances on both sides of HEAD_CLEAR_PX and right at it.
    s = accepted(4, 1)
    union = nt._marks_geometry(s)
    rng = np.random.default_rng(4)
    marks = [v for t in nt.triangles_px(s) for v in t] + [(a + b) / 2 for a, b in nt.tick_segments(s)]
    seen = set()
    for m in marks[:20]:
        for r in (5.0, 6.0, 7.5, 9.0):
            d = rng.normal(size=2)
            tail = m + d / np.linalg.norm(d) * (r + 20.0)
            tip = m + d / np.linalg.norm(d) * r
            head = nt.arrowhead_px(tip, tail)
            clear = head.distance(union) >= nt.HEAD_CLEAR_PX
            assert nt._head_clear(s, head) == clear
            seen.add(clear)
    assert seen == {True, False}


def test_tick_segments_are_the_ticks_at_each_division():
    s = accepted(5, 2)
    segs = iter(nt.tick_segments(s))
    for m, t in enumerate(nt.triangles_px(s)[:-1]):
        n, half = s.divisions[m], nt.TICK_PX[min(m, 1)][0] / 2
        for k in range(3):
            a, b = t[k], t[nt.NEXT[k]]
            u = (b - a) / np.linalg.norm(b - a)
            nrm = np.array([-u[1], u[0]]) * half
            for j in range(1, n):
                lo, hi = next(segs)
                assert np.array_equal(lo, a + j / n * (b - a) - nrm) and np.array_equal(hi, a + j / n * (b - a) + nrm)
    assert next(segs, None) is None


def test_new_triangle_rules_in_floats_decide_as_the_array_forms():
    """`_new_fails` against `_inner`, `_sides`, `inradius_px` and `min_angle_deg` on random parents and fractions,
    with limits near the sampled values so that both outcomes occur; `_area_at_least` against shapely's area."""
    rng = np.random.default_rng(5)
    outcomes = set()
    for _ in range(400):
        t = np.round(rng.uniform(60, 708, size=(3, 2)), 2)
        n = int(rng.integers(3, 9))
        nums = tuple(rng.integers(1, n, size=3).tolist())
        new = nt._inner(t, n, nums)
        shortest = float(rng.choice([0.0, 40.0, 72.0, 150.0]))
        plain = (nt._sides(new).min() < shortest or nt.inradius_px(new, nt._sides(new)) < nt.INRADIUS_PX
                 or nt.min_angle_deg(new) < nt.SLIVER_DEG)
        assert nt._new_fails(t, n, nums, shortest) == plain
        outcomes.add(plain)
        limit = abs(Polygon(t).area) * float(rng.choice([0.5, 1.0, 2.0]))
        assert nt._area_at_least(t, limit) == (abs(Polygon(t).area) >= limit)
    assert outcomes == {True, False}


def test_surely_small_shapes_fail_the_area_rule_wherever_they_are_placed():
    """`_surely_small` says True only where `_t1`'s arrays, for every placement and corner order, give an area under
    MIN_AREA_PX2; it also passes shapes that reach the area, and both occur."""
    rng = np.random.default_rng(11)
    lo, hi = nt.BOX
    outcomes = set()
    for _ in range(600):
        alpha, gamma = rng.uniform(35.0, 100.0), rng.uniform(35.0, 100.0)
        if alpha + gamma >= 145.0:
            continue
        ra, rg = math.radians(alpha), math.radians(gamma)
        side = math.sin(math.radians(180.0 - alpha - gamma)) / math.sin(rg)
        flip, theta, shrink = rng.random() < 0.5, math.radians(rng.uniform(0.0, 360.0)), rng.uniform(0.94, 1.0)
        ct, st = math.cos(theta), math.sin(theta)
        x, y = side * math.cos(ra), side * math.sin(ra)
        small = nt._surely_small(x, -y if flip else y, ct, st, shrink * (hi - lo))
        outcomes.add(small)
        shape = np.array([(0.0, 0.0), (1.0, 0.0), (x, -y if flip else y)]) @ np.array([[ct, st], [-st, ct]])
        ext = shape.max(axis=0) - shape.min(axis=0)
        scale = (hi - lo) / float(ext.max()) * shrink
        for u in rng.uniform(0.0, 1.0, size=(3, 2)):
            pts = (shape - shape.min(axis=0)) * scale + lo + ((hi - lo) - ext * scale) * u
            for roll in nt._ROLLS:
                if small:
                    assert not nt._area_at_least(np.round(pts[roll], 2), nt.MIN_AREA_PX2)
    assert outcomes == {True, False}
