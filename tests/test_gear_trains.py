"""Domain-specific tests for gear_trains: kinematic invariants, geometry, metamorphic relations, examples worked on
paper, the minimal pair and rephrased Q4, and the layering of shaft pairs."""
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.builder import generate
from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.physical import gear_trains as gt
from grip.renderers.canvas import SAFE_BORDER_PX

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])


def accepted(seed: int, level: int) -> gt.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        try:
            s = gt.sample(rng, level)
        except Reject:
            continue
        if not gt.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


def hand_scene(teeth, meshes, shafts=(), rpm=60, direction=gt.CW, level=3, target="E"):
    """Answers never read the centres except for margins, so a hand scene may put gears on a line."""
    labels = tuple("ABCDEFG"[: len(teeth)])
    centers = tuple((100.0 * k, 400.0) for k in range(len(teeth)))
    return gt.Scene(level, labels, tuple(teeth), centers, tuple(meshes), tuple(shafts), rpm, direction, target)


# --- examples worked on paper ------------------------------------------------------------------------------------

def test_simple_chain_by_hand():
    # A(20T) -> B(40T) -> C(10T) -> D(30T), A at 60 rpm clockwise.
    # B: ccw, 60*20/40 = 30; C: cw, 60*20/10 = 120; D: ccw, 60*20/30 = 40 (idlers cancel: only A and D matter).
    s = hand_scene((20, 40, 10, 30), ((0, 1), (1, 2), (2, 3)))
    assert gt.direction_of(s, "B").value == gt.CCW
    assert gt.rpm_of(s, "B").value == 30.0
    assert gt.direction_of(s, "C").value == gt.CW and gt.rpm_of(s, "C").value == 120.0
    assert gt.direction_of(s, "D").value == gt.CCW and gt.rpm_of(s, "D").value == 40.0
    # fastest: C at 120 against A at 60
    assert gt.fastest_gear(s).reference_value() == {"gear": "C", "direction": gt.CW}
    assert gt.fastest(s)[1] == pytest.approx(2.0)
    # without C only B still turns
    assert gt.counterfactual(gt.edit(s)).value == ("B",)


def test_compound_shaft_by_hand():
    # A(24T) ccw at 30 rpm meshes B(12T): B cw at 30*24/12 = 60. D(36T) shares B's shaft: cw at 60.
    # D meshes C(18T): C ccw at 60*36/18 = 120. C meshes E(16T): E cw at 120*18/16 = 135.
    # Fastest: E (135) over C (120), ratio 1.125. Removing C leaves B and D turning.
    s = hand_scene((24, 12, 18, 36, 16), ((0, 1), (2, 3), (2, 4)), shafts=((1, 3),), rpm=30, direction=gt.CCW)
    assert gt.direction_of(s, "B").value == gt.CW and gt.rpm_of(s, "B").value == 60.0
    assert gt.direction_of(s, "D").value == gt.CW and gt.rpm_of(s, "D").value == 60.0
    assert gt.direction_of(s, "C").value == gt.CCW and gt.rpm_of(s, "C").value == 120.0
    assert gt.rpm_of(s, "E").value == 135.0
    assert gt.fastest_gear(s).reference_value() == {"gear": "E", "direction": gt.CW}
    assert gt.fastest(s)[1] == pytest.approx(1.125)
    assert gt.counterfactual(gt.edit(s)).value == ("B", "D")
    assert gt.meshes_from_a(s)[4] == 3            # A-B, D-C, C-E: the shaft is not a mesh


def test_idler_does_not_turn_and_slow_speeds_keep_two_decimals():
    # F stands alone. D: 30 rpm * 8/40 = 6 rpm, then through a shaft pair 8 -> 40 once more: E at 1.2 rpm.
    s = hand_scene((8, 40, 8, 40, 40, 20), ((0, 1), (2, 4)), shafts=((2, 1),), rpm=30)
    assert gt.direction_of(s, "F").value == gt.STILL
    assert gt.rpm_of(s, "F").value == 0.0
    assert gt.rpm_of(s, "B").value == 6.0
    e = gt.rpm_of(s, "E")
    assert e.value == 1.2 and e.decimals == 2 and e.matches(e.parse("ANSWER: " + e.reference_text()))


def test_odd_loop_jams_and_even_loop_turns():
    with pytest.raises(Reject):
        gt.signed_rpm(hand_scene((20, 20, 20, 20), ((0, 1), (1, 2), (0, 2), (2, 3))))
    square = hand_scene((20, 30, 20, 30), ((0, 1), (1, 2), (2, 3), (0, 3)))
    assert [float(w) for w in gt.signed_rpm(square)] == [60.0, -40.0, 60.0, -40.0]


# --- properties of sampled scenes --------------------------------------------------------------------------------

@given(SEEDS, LEVELS)
def test_kinematics_along_every_mesh_and_shaft(seed, level):
    s = accepted(seed, level)
    w = gt.signed_rpm(s)
    for i, j in s.meshes:
        assert w[i] * w[j] <= 0                                       # a mesh reverses the direction
        assert abs(w[i]) * s.teeth[i] == abs(w[j]) * s.teeth[j]       # equal pitch-line speed
    for i, j in s.shafts:
        assert w[i] == w[j]                                           # a shaft carries one speed
    assert {k for k in range(len(w)) if w[k] != 0} == reachable(s, "A")


def reachable(s, start, removed=None):
    """Independent flood fill over meshes and shafts."""
    links = [p for p in s.meshes + s.shafts if removed not in p]
    seen, todo = {s.labels.index(start)}, [s.labels.index(start)]
    while todo:
        i = todo.pop()
        for a, b in links:
            for x, y in ((a, b), (b, a)):
                if x == i and y not in seen:
                    seen.add(y)
                    todo.append(y)
    return seen


@given(SEEDS, LEVELS)
def test_q5_is_the_component_of_a_without_c(seed, level):
    s = accepted(seed, level)
    lad = gt.ladder(s)
    q5 = lad.rungs[4]
    assert q5.answer == gt.counterfactual(gt.edit(s))
    c = s.labels.index("C")
    want = sorted(s.labels[k] for k in reachable(s, "A", removed=c) if s.labels[k] != "A")
    assert list(q5.answer.value) == want
    assert "C" not in gt.edit(s).labels and len(gt.edit(s).teeth) == len(s.teeth) - 1


@given(SEEDS, LEVELS)
def test_roles_of_lettered_gears(seed, level):
    s = accepted(seed, level)
    w, hops = gt._walk(s)
    assert w[s.labels.index("C")] != 0 and w[s.labels.index("D")] != 0
    x = s.labels.index(s.target)
    assert s.target not in ("A", "C", "D") and hops[x] >= 2
    top, ratio = gt.fastest(s)
    assert len(top) == 1 and ratio >= gt.FAST_RATIO[level]
    assert 4 <= len(s.teeth) <= 7
    assert all(t % 2 == 0 and 8 <= t <= 40 for t in s.teeth)
    assert (level == 1) == (not s.shafts)
    for front, back in s.shafts:
        assert s.teeth[front] < s.teeth[back]


@given(SEEDS, LEVELS)
def test_geometry_meshes_exact_and_others_clear(seed, level):
    s = accepted(seed, level)
    m = gt.module_px(s)
    for i, j in s.meshes:
        assert math.dist(s.centers[i], s.centers[j]) == pytest.approx(m * (s.teeth[i] + s.teeth[j]) / 2, abs=1e-6)
    for i, j in s.shafts:
        assert s.centers[i] == s.centers[j]
    assert gt.min_gap_px(s) >= gt.CLEAR_PX[level]
    for (x, y), t in zip(s.centers, s.teeth):
        tip = m * t / 2 + m
        assert SAFE_BORDER_PX <= x - tip and x + tip <= 768 - SAFE_BORDER_PX
        assert gt.TOP_PX <= y - tip and y + tip <= 768 - SAFE_BORDER_PX


@given(SEEDS, LEVELS)
def test_meshing_teeth_interlock(seed, level):
    # Measured from each gear's nearest tooth centre to the line of centres, the two offsets (in pitches) add
    # up to half a pitch: a tooth of one gear faces a gap of the other.
    s = accepted(seed, level)
    ph = gt.phases_deg(s)
    for i, j in s.meshes:
        (xi, yi), (xj, yj) = s.centers[i], s.centers[j]
        th = math.degrees(math.atan2(yj - yi, xj - xi))
        pi_, pj = 360 / s.teeth[i], 360 / s.teeth[j]
        fi, fj = ((ph[i] - th) % pi_) / pi_, ((ph[j] - th - 180) % pj) / pj
        assert (fi + fj) % 1.0 == pytest.approx(0.5, abs=1e-6)


@given(SEEDS, LEVELS)
def test_json_round_trip(seed, level):
    s = accepted(seed, level)
    assert scene_from_json(gt.Scene, scene_to_json(s)) == s


# --- metamorphic relations ---------------------------------------------------------------------------------------

def answers(s):
    return [q.answer for q in gt.ladder(s).questions]


@given(SEEDS, LEVELS, st.floats(-20, 20), st.floats(-20, 20))
def test_translation_leaves_answers_unchanged(seed, level, dx, dy):
    s = accepted(seed, level)
    moved = replace(s, centers=tuple((x + dx, y + dy) for x, y in s.centers))
    assert answers(moved) == answers(s)
    assert gt.min_gap_px(moved) == pytest.approx(gt.min_gap_px(s), abs=1e-6)


@given(SEEDS, LEVELS, st.randoms(use_true_random=False))
def test_storage_order_of_gears_does_not_matter(seed, level, rnd):
    s = accepted(seed, level)
    perm = list(range(len(s.teeth)))
    rnd.shuffle(perm)                      # perm[new] = old
    new = {old: k for k, old in enumerate(perm)}
    shuffled = replace(s, labels=tuple(s.labels[o] for o in perm), teeth=tuple(s.teeth[o] for o in perm),
                       centers=tuple(s.centers[o] for o in perm),
                       meshes=tuple((new[i], new[j]) for i, j in s.meshes),
                       shafts=tuple((new[i], new[j]) for i, j in s.shafts))
    assert answers(shuffled) == answers(s)


@given(SEEDS, LEVELS)
def test_reversing_the_driver_flips_every_direction(seed, level):
    s = accepted(seed, level)
    flipped = replace(s, driver_dir=gt.CCW if s.driver_dir == gt.CW else gt.CW)
    swap = {gt.CW: gt.CCW, gt.CCW: gt.CW, gt.STILL: gt.STILL}
    assert gt.direction_of(flipped, "B").value == swap[gt.direction_of(s, "B").value]
    a, b = gt.fastest_gear(s).reference_value(), gt.fastest_gear(flipped).reference_value()
    assert b == {"gear": a["gear"], "direction": swap[a["direction"]]}
    assert gt.rpm_of(flipped, "D") == gt.rpm_of(s, "D")


@given(SEEDS, LEVELS)
def test_speeds_scale_with_the_driver(seed, level):
    s = accepted(seed, level)
    double = replace(s, driver_rpm=2 * s.driver_rpm)
    assert [2 * w for w in gt.signed_rpm(s)] == gt.signed_rpm(double)
    # A simple train (no shaft on the way): the speed is the driver's times T_A / T_gear, whatever lies between.
    a = s.labels.index("A")
    for k in range(len(s.teeth)):
        if not s.shafts and gt.signed_rpm(s)[k] != 0:
            assert abs(gt.signed_rpm(s)[k]) * s.teeth[k] == s.driver_rpm * s.teeth[a]


def test_rendering_stays_inside_the_safe_border():
    for i in range(6):
        rgb = generate(gt.DOMAIN, 1000 + i, 1 + i % 3).rgb
        b = SAFE_BORDER_PX
        assert (rgb[:b] == 255).all() and (rgb[-b:] == 255).all()
        assert (rgb[:, :b] == 255).all() and (rgb[:, -b:] == 255).all()


@given(SEEDS, st.sampled_from([2, 3]))
def test_at_most_one_gear_is_drawn_over_a_back_gear(seed, level):
    s = accepted(seed, level)
    for front, back in s.shafts:
        assert sum(front in m for m in s.meshes) <= 1
        assert len([p for p in gt.back_gear_exceptions(s) if back in p]) <= 1


# --- issue 15: minimal pair, rephrase, layering of shaft pairs ---------------------------------------------------

@settings(max_examples=20)
@given(SEEDS, LEVELS)
def test_minimal_pair_reverses_only_the_driver(seed, level):
    s = accepted(seed, level)
    t = gt.minimal_pair(s)
    assert t == gt.minimal_pair(s) and replace(t, driver_dir=s.driver_dir) == s and t.driver_dir != s.driver_dir
    a, b = gt.fastest_gear(s).reference_value(), gt.fastest_gear(t).reference_value()
    assert a["gear"] == b["gear"] and a["direction"] != b["direction"]
    assert gt.gear_count(t) == gt.gear_count(s) and not gt.ladder(t).failing_margins()


@settings(max_examples=20)
@given(SEEDS, LEVELS)
def test_rephrased_q4_has_q4s_answer(seed, level):
    s = accepted(seed, level)
    q4, r = gt.ladder(s).rungs[3], gt.rephrase_q4(s)
    assert r.answer == q4.answer and r.text != q4.text and r.margin.ok


def _front_partner_offsets(s):
    """(T_front + T_partner - T_back) / 2: the partner's centre to the back gear's pitch circle, in modules."""
    return [(s.teeth[f] + s.teeth[j] - s.teeth[b]) / 2 for f, b in s.shafts for m in s.meshes if f in m
            for j in m if j != f]


def test_front_partner_never_straddles_the_back_gears_teeth():
    """The gear meshing a shaft pair's front gear sits on the back gear's face or stands clear of it: its centre is
    >= 3 modules off the back gear's pitch circle. Before issue 15 most level-3 partners sat within one module of
    it, their teeth across the back gear's as if the two meshed."""
    rng = np.random.default_rng(15)
    offsets = []
    for i in range(60):
        try:
            s = gt.sample(rng, 2 + i % 2)
        except Reject:
            continue
        offsets += _front_partner_offsets(s)
    assert len(offsets) > 40
    assert min(abs(x) for x in offsets) >= 3, sorted(offsets)[:5]


def test_back_gear_is_hatched_and_front_gears_are_cased():
    """The back gear carries hatching (two grey levels on its visible ring, not one flat fill), and a white casing
    separates a gear lying across it from its teeth."""
    rng = np.random.default_rng(4)
    s = next(s for s in (accepted(int(rng.integers(2**32)), 2) for _ in range(40)) if s.shafts)
    c = gt.Canvas(768)
    gt.draw(s, c)
    img = c.array().astype(int).sum(axis=2)
    m = gt.module_px(s)
    (front, back), = s.shafts
    cx, cy = s.centers[back]
    r = (m * s.teeth[front] / 2 + m + m * s.teeth[back] / 2 - 1.25 * m) / 2        # middle of the visible ring
    clear = [a for a in range(0, 360, 10) if all(
        math.dist((cx + r * math.cos(math.radians(a)), cy + r * math.sin(math.radians(a))), s.centers[j])
        > m * s.teeth[j] / 2 + m + 12 for j in range(len(s.teeth)) if j not in (front, back))]
    assert clear
    a = math.radians(clear[0])
    u, v = int(cx + r * math.cos(a)), int(cy + r * math.sin(a))
    patch = img[v - 6:v + 7, u - 6:u + 7]
    assert patch.max() - patch.min() > 30, patch
    # Casing: just outside the front gear's tip circle, over the back gear, the picture is white.
    tip = m * s.teeth[front] / 2 + m
    ring = [img[int(cy + (tip + 3) * math.sin(t)), int(cx + (tip + 3) * math.cos(t))]
            for t in np.linspace(0, 2 * math.pi, 90, endpoint=False)]
    assert sum(x >= 3 * 250 for x in ring) > 0.5 * len(ring)


# --- fast paths against plain references -------------------------------------------------------------------------

def _fastest_by_fractions(s):
    w = gt.signed_rpm(s)
    ranked = sorted(gt.shaft_groups(s), key=lambda g: -abs(w[g[0]]))
    top, second = abs(w[ranked[0][0]]), abs(w[ranked[1][0]])
    return ranked[0], float(top / second) if second else math.inf


def test_fastest_agrees_with_fraction_ranking():
    rng = np.random.default_rng(7)
    scenes = []
    for k in range(30):   # sampled trains, and random trees of few teeth counts (ties, still gears, shafts)
        try:
            scenes.append(gt.sample(rng, 1 + k % 3))
        except Reject:
            pass
        n = int(rng.integers(3, 8))
        meshes = [(int(rng.integers(0, j)), j) for j in range(1, n) if rng.random() < 0.85]
        shafts = [] if rng.random() < 0.5 else [(n - 1, n)]
        teeth = [int(t) for t in rng.choice([10, 20, 30, 40], size=n + len(shafts))]
        scenes.append(hand_scene(teeth, meshes, shafts, direction=(gt.CW, gt.CCW)[k % 2]))
    for s in scenes:
        assert gt.fastest(s) == _fastest_by_fractions(s)


def test_box_in_ring_agrees_with_shapely():
    from shapely.geometry import Point, box
    rng = np.random.default_rng(11)
    decided = tried = 0
    for _ in range(40):
        cx, cy, outer = *rng.uniform(200, 500, 2).tolist(), float(rng.uniform(60, 130))
        holes = [(cx, cy, outer * float(rng.uniform(0.3, 0.7)))]
        holes += [(cx + float(d * math.cos(a)), cy + float(d * math.sin(a)), float(r)) for d, a, r in
                  zip(rng.uniform(0.8, 1.6, 2) * outer, rng.uniform(0, 2 * math.pi, 2), rng.uniform(30, 70, 2))]
        region = Point(cx, cy).buffer(outer)
        for hx, hy, hr in holes:
            region = region.difference(Point(hx, hy).buffer(hr))
        for _ in range(30):
            rm, a = float(rng.uniform(0.2, 1.1) * outer), float(rng.uniform(0, 2 * math.pi))
            u, v, w, h = cx + rm * math.cos(a), cy + rm * math.sin(a), *rng.uniform(5, 40, 2).tolist()
            corners = (u - w / 2, v - h / 2, u + w / 2, v + h / 2)
            got = gt._box_in_ring(corners, (cx, cy), outer, holes)
            tried += 1
            if got is not None:
                decided += 1
                assert got == region.contains(box(*corners)), (corners, holes)
    assert decided > 0.9 * tried


def _back_gear_every_line(canvas, outline):
    """`_back_gear`'s hatching stroked line for line over the whole bounding box."""
    gt.shapes.polygon(canvas, outline, gt.Style(stroke=None, fill=gt.GREY_PALE))
    ctx = canvas.ctx
    with canvas.layer():
        pts = canvas.pts_px(outline)
        ctx.move_to(*pts[0])
        for p in pts[1:]:
            ctx.line_to(*p)
        ctx.close_path()
        ctx.clip()
        (u0, v0), (u1, v1) = pts.min(axis=0), pts.max(axis=0)
        for u in np.arange(u0 - (v1 - v0), u1, 9.0):
            ctx.move_to(u, v1)
            ctx.line_to(u + (v1 - v0), v0)
        ctx.set_source_rgb(*gt.GREY_LIGHT)
        ctx.set_line_width(2.0)
        ctx.stroke()
    gt.shapes.polygon(canvas, outline, gt.Style(stroke=gt.GREY_DARK, width_px=2.0, dash_px=(7.0, 4.0)))


def test_back_gear_hatching_leaves_out_only_lines_clipped_away():
    for teeth, m, c, ph in ((40, 6.0, (384.3, 400.7), 3.0), (28, 7.5, (301.2, 352.9), 11.5),
                             (16, 6.0, (99.9, 600.1), 0.0)):
        outline = gt.shapes.gear_outline(c, m * teeth / 2, teeth, m, ph)
        got, want = gt.Canvas(768), gt.Canvas(768)
        gt._back_gear(got, outline, "B")
        _back_gear_every_line(want, outline)
        assert np.array_equal(got.array(), want.array())
