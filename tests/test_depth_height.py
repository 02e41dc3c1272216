"""Domain-specific tests for depth_height: heights, distances and sides re-derived from projected pixels by explicit
similar triangles (and from the rendered image: a pole at +x is drawn right of centre), the horizon where the tile
lines meet, Q5 on the edited scene, the minimal pair and rephrased Q4, and an example worked on paper."""
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.solid import depth_height as dh
from grip.renderers import projection as pj
from grip.renderers.canvas import Canvas

POOL = 16
SEEDS = st.integers(0, POOL - 1)
LEVELS = st.sampled_from([1, 2, 3])
FAST = settings(max_examples=25, deadline=None)


def accepted(seed: int, level: int) -> dh.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        try:
            s = dh.sample(rng, level)
        except Reject:
            continue
        if not dh.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


@lru_cache(maxsize=None)
def pool(level: int) -> tuple[dh.Scene, ...]:
    """Accepted scenes sampled once per session; the properties draw from them."""
    return tuple(accepted(500 * level + i, level) for i in range(POOL))


def pooled(i: int, level: int) -> dh.Scene:
    return pool(level)[i]


def hand_scene(level=1):
    # H = 1.6 m, f = 600 px, horizon at v = 300. A (0, 10 m, 2.0 m), B (2, 6 m, 1.0 m), C (-3, 20 m, 5.0 m).
    return dh.Scene(level, 1.6, 600.0, 300.0, (0.0, 2.0, -3.0), (10.0, 6.0, 20.0), (2.0, 1.0, 5.0))


# --- an example worked on paper -----------------------------------------------------------------------------------

def test_three_poles_by_hand():
    # A: foot 300 + 600*1.6/10 = 396, top 300 + 600*(1.6 - 2)/10 = 276, drawn 120, u = 384.
    # B: foot 300 + 960/6 = 460, top 300 + 600*0.6/6 = 360, drawn 100, u = 384 + 600*2/6 = 584 (right of centre).
    # C: foot 300 + 960/20 = 348, top 300 - 600*3.4/20 = 198, drawn 150, u = 384 - 600*3/20 = 294 (left).
    s = hand_scene()
    for (u, vb, vt, _), want in zip(dh.pole_px(s), ((384, 396, 276), (584, 460, 360), (294, 348, 198))):
        assert (u, vb, vt) == pytest.approx(want)
    lad = dh.ladder(s)
    assert lad.rungs[0].answer.value == "C" and lad.rungs[0].margin.value == pytest.approx(1.25)   # 150 / 120
    assert lad.rungs[1].answer.value == dh.BELOW and lad.rungs[1].margin.value == pytest.approx(60)  # 360 - 300
    # Q3: ratios A 120/96 = 1.25, B 100/160 = 0.625: h_B = 2.0 * 0.625 / 1.25 = 1.00 m.
    assert lad.rungs[2].answer.value == 1.0 and lad.rungs[2].answer.tol == 0.07
    assert lad.rungs[3].answer.value == "C" and lad.rungs[3].margin.value == pytest.approx(2.5)
    # Q5: C at 40 m is drawn 600*5/40 = 75 px against A's 120: shorter, ratio 0.625.
    assert lad.rungs[4].answer.value == dh.SHORTER and lad.rungs[4].margin.value == pytest.approx(0.375)
    # Open: H = 2.0 * 96 / 120 = 1.60 m.
    assert lad.open.answer.fields["camera_height"].value == 1.6
    # Minimal pair: the second tallest, A, would need 1.12 * 5.0 = 5.6 m; it would then be drawn 336 px, longer
    # than C, so Q1 could not be kept (and its top would run off the canvas): no pair.
    with pytest.raises(Reject):
        dh.minimal_pair(s)


def test_minimal_pair_by_hand():
    # A 1.0 m at 5 m (drawn 600/5 = 120 px), B 5.0 m at 12 m (drawn 250 px, the tallest and drawn longest),
    # C 4.0 m at 30 m (drawn 80 px), the second tallest. C raised to 1.12 * 5.0 = 5.6 m is drawn 112 px: B stays
    # drawn longest (250 / 120), C becomes the tallest, its foot stays at 300 + 960/30 = 332.
    s = dh.Scene(1, 1.6, 600.0, 300.0, (0.0, 2.0, -3.0), (5.0, 12.0, 30.0), (1.0, 5.0, 4.0))
    assert not dh.ladder(s).failing_margins() and dh.legible(s)
    t = dh.minimal_pair(s)
    assert t.heights_m == (1.0, 5.0, 5.6) and t.zs_m == s.zs_m and t.xs_m == s.xs_m
    assert dh.pole_px(t)[2][1] == pytest.approx(332.0) and dh.drawn_lengths(t)[2] == pytest.approx(112.0)
    assert dh.tallest(t).value == "C" and dh.drawn_longest(t).value == dh.drawn_longest(s).value == "B"


# --- chirality and geometry by an independent route ------------------------------------------------------------

def test_a_pole_at_plus_x_is_drawn_right_of_centre():
    cam = pj.PinholeCamera(1.6, 600.0, 384.0, 300.0)
    assert cam.handedness() == pytest.approx(1.0)
    (u_right, _), (u_left, _) = cam.project([(2.0, 10.0, 0.0), (-2.0, 10.0, 0.0)])
    assert u_right > 384 > u_left
    s = hand_scene()
    c = Canvas(768)
    dh.draw(s, c)
    img = c.array().astype(int).sum(axis=2)
    # Row 420 crosses B's pole only (B spans v 360..460 at u = 584 +- 7.5): dark there, light at the mirror column.
    assert img[420, 584] < 300 and img[420, 2 * 384 - 584] > 400
    # Row 250 crosses C's pole only (u = 294, v 198..348): dark left of centre, light at its mirror image.
    assert img[250, 294] < 300 and img[250, 2 * 384 - 294] > 400


@FAST
@given(SEEDS, LEVELS)
def test_similar_triangles_from_pixels(seed, level):
    """From the drawn foot, top and horizon alone: depth Z = f H / (v_b - v_h) (the foot's sight line meets the
    ground), lateral X = (u - c_u) Z / f, height h = H (v_b - v_t) / (v_b - v_h). Every one matches the latent
    pole, so the picture is neither mirrored nor flipped, and the answers follow from the pixels."""
    s = pooled(seed, level)
    cam = pj.PinholeCamera(s.cam_height_m, s.f_px, 384.0, s.horizon_px)
    H, f, vh = s.cam_height_m, s.f_px, s.horizon_px
    derived = []
    for (x, z, h), (u, vb, vt, _) in zip(zip(s.xs_m, s.zs_m, s.heights_m), dh.pole_px(s)):
        (u0, v0), (u1, v1) = cam.project([(x, z, 0.0), (x, z, h)])
        assert (u, vb, vt) == pytest.approx((u0, v0, v1))
        zz = f * H / (vb - vh)
        xx = (u - 384.0) * zz / f
        hh = H * (vb - vt) / (vb - vh)
        assert (xx, zz, hh) == pytest.approx((x, z, h), abs=1e-9)
        assert (u > 384) == (x > 0)
        derived.append((vb - vt, hh, vt))
    letters = "ABCDE"[: len(derived)]
    lad = dh.ladder(s)
    assert lad.rungs[0].answer.value == letters[max(range(len(derived)), key=lambda i: derived[i][0])]
    assert lad.rungs[1].answer.value == (dh.ABOVE if derived[1][2] < vh else dh.BELOW)
    assert lad.rungs[2].answer.value == pytest.approx(derived[1][1], abs=0.005)
    assert lad.rungs[3].answer.value == letters[max(range(len(derived)), key=lambda i: derived[i][1])]
    # Q5: twice as far, C's drawn length halves (its u stays: x/z is unchanged).
    assert lad.rungs[4].answer.value == (dh.LONGER if derived[2][0] / 2 > derived[0][0] else dh.SHORTER)
    e = dh.edit(s)
    assert dh.pole_px(e)[2][0] == pytest.approx(dh.pole_px(s)[2][0])
    assert lad.open.answer.fields["camera_height"].value == pytest.approx(H, abs=0.005)


@FAST
@given(SEEDS, LEVELS)
def test_tile_lines_meet_on_the_horizon(seed, level):
    """Two ground lines x = -3 and x = +3 m, projected, cross at (c_u, v_h): the level-3 horizon is findable."""
    s = pooled(seed, level)
    cam = dh.camera(s)
    (a0, a1), (b0, b1) = (cam.project([(x, 5.0, 0.0), (x, 50.0, 0.0)]) for x in (-3.0, 3.0))
    da, db = a1 - a0, b1 - b0
    t = np.linalg.solve(np.column_stack([da, -db]), b0 - a0)[0]
    assert tuple(a0 + t * da) == pytest.approx((384.0, s.horizon_px))


def test_horizon_drawn_only_below_level_three():
    for level, want in ((1, True), (3, False)):
        s = pooled(3, level)
        c = Canvas(768)
        dh.draw(s, c)
        img = c.array().astype(int).sum(axis=2)
        row = img[int(round(s.horizon_px)), 200:560]
        near_pole = np.zeros(360, bool)
        for u, _, _, w in dh.pole_px(s):
            near_pole[max(0, int(u - w - 20) - 200):max(0, int(u + w + 20) - 200)] = True
        dark = (row < 200) & ~near_pole
        assert (dark.mean() > 0.3) == want, dark.mean()


# --- sampled scenes ---------------------------------------------------------------------------------------------

@FAST
@given(SEEDS, LEVELS)
def test_accepted_scenes_keep_every_rule(seed, level):
    s = pooled(seed, level)
    k = len(s.heights_m)
    assert (k == 3) if level == 1 else 3 <= k <= 5
    assert all(abs(x) <= dh.X_M and dh.Z_M[0] <= z <= dh.Z_M[1] for x, z in zip(s.xs_m, s.zs_m))
    assert all(dh.H_M[0] <= h <= dh.H_M[1] and round(h, 1) == h for h in s.heights_m)
    assert dh.legible(s) and dh.pole_gap_px(s) >= dh.POLE_GAP_PX and min(dh.drawn_lengths(s)) >= dh.MIN_LENGTH_PX
    for u, vb, vt, _ in dh.pole_px(s)[:2]:
        assert vb - vt >= dh.MEASURE_LENGTH_PX and vb - s.horizon_px >= dh.MEASURE_GAP_PX
    assert all(vb - s.horizon_px >= dh.BASE_GAP_PX for _, vb, _, _ in dh.pole_px(s))
    assert bool(s.props) == (level == 3)
    assert scene_from_json(dh.Scene, scene_to_json(s)) == s
    lad = dh.ladder(s)
    assert not lad.failing_margins()
    e = dh.edit(s)
    assert e.zs_m[2] == 2 * s.zs_m[2] and e.xs_m[2] == 2 * s.xs_m[2]
    assert replace(e, xs_m=s.xs_m, zs_m=s.zs_m) == s and e.zs_m[:2] + e.zs_m[3:] == s.zs_m[:2] + s.zs_m[3:]
    assert lad.rungs[4].answer == dh.counterfactual(e) and lad.rungs[4].text != lad.rungs[3].text
    assert f"Pole A is {s.heights_m[0]:.1f} m tall" in lad.rungs[2].text


def test_targets_are_balanced():
    scenes = [s for level in (1, 2, 3) for s in pool(level)]
    differ = sum(dh.drawn_longest(s).value != dh.tallest(s).value for s in scenes) / len(scenes)
    above = sum(dh.top_vs_horizon(s).value == dh.ABOVE for s in scenes) / len(scenes)
    longer = sum(dh.c_against_a(dh.edit(s)).value == dh.LONGER for s in scenes) / len(scenes)
    assert 0.25 <= differ <= 0.75 and 0.25 <= above <= 0.75 and 0.2 <= longer <= 0.75
    assert len({dh.tallest(s).value for s in scenes}) >= 4


# --- minimal pair and rephrase ----------------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(SEEDS, LEVELS)
def test_minimal_pair_raises_the_second_tallest(seed, level):
    s = pooled(seed, level)
    try:
        t = dh.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    order = sorted(range(len(s.heights_m)), key=lambda i: -s.heights_m[i])
    changed = [i for i in range(len(s.heights_m)) if s.heights_m[i] != t.heights_m[i]]
    assert changed == [order[1]] and t.heights_m[order[1]] >= dh.TRUE_RATIO * s.heights_m[order[0]] - 1e-9
    assert t.heights_m[order[1]] - dh.TRUE_RATIO * s.heights_m[order[0]] < 0.6       # the smallest step or so
    assert dh.pole_px(t)[order[1]][1] == dh.pole_px(s)[order[1]][1]                 # the foot stays
    assert dh.tallest(t).value == "ABCDE"[order[1]] and dh.drawn_longest(t) == dh.drawn_longest(s)
    assert not dh.ladder(t).failing_margins() and dh.legible(t)


@FAST
@given(SEEDS, LEVELS)
def test_rephrase_is_identity(seed, level):
    s = pooled(seed, level)
    q4, r = dh.ladder(s).rungs[3], dh.rephrase_q4(s)
    assert r.answer == q4.answer and r.text != q4.text and r.margin.ok


def test_letters_never_cross_the_dashed_horizon():
    for s in pool(1) + pool(2):
        for box in dh.label_boxes(s):
            assert not (box[1] - 4 < s.horizon_px < box[3] + 4)
