"""gauge_reading: the value-to-angle map, readings recomputed from the needle angle, the change edit of Q5,
metamorphic relations (sweep, offset, swapping the gauges), the sampler's targets, the minimal pair and the
rephrased Q4, the Q5 text's independence of Q2, the dial's legibility, and examples worked on paper."""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.physical import gauge_reading as gr
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas

seeds = st.integers(0, 2**32)
levels = st.sampled_from((1, 2, 3))


def accepted(seed: int, level: int) -> gr.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        try:
            s = gr.sample(rng, level)
        except Reject:
            continue
        if not gr.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed}, level {level}")


def gauges(g1, g2, change=1, level=1):
    """g = (unit, v_min, step, n_major, minors, sweep, red_minor, needle_half)."""
    cols = list(zip(g1, g2))
    return gr.Scene(level, *cols[:7], needle_half=cols[7], change_minor=change)


def swapped(s: gr.Scene) -> gr.Scene:
    flip = {f: getattr(s, f)[::-1] for f in ("units", "v_min", "major_step", "n_major", "minors", "sweep_deg",
                                                "red_minor", "needle_half")}
    return replace(s, **flip)


def answers(s: gr.Scene) -> dict:
    return {q.id: q.answer for q in gr.ladder(s).questions}


# --- worked on paper ---------------------------------------------------------------------------------------------

def test_worked_speedometer_and_pressure():
    # G1: 0-160 km/h, majors every 20 (8 intervals), d = 2 so minor = 10 km/h, half-minor = 5 km/h. Needle at
    # 15 half-minors = 75 km/h. Red zone from minor 13 = 130 km/h. Rise X = 6 minors = 60 km/h.
    # G2: 0-6 bar, majors every 1, d = 2 so minor = 0.5 bar. Needle at 9 half-minors = 2.25 bar; red from 5 bar.
    s = gauges(("km/h", 0, 20, 8, 2, 240, 13, 15), ("bar", 0, 1, 6, 2, 180, 10, 9), change=6)
    a = answers(s)
    assert a["g1_major_passed"].value == 60.0 and a["g1_major_passed"].tol == 0      # 60 <= 75 < 80
    assert a["g1_in_red"].value == "no"                                               # 75 < 130
    assert a["g1_reading"].value == 75.0 and a["g1_reading"].tol == 5.0 and a["g1_reading"].decimals == 0
    # f1 = 75/160 = 0.46875 > f2 = 2.25/6 = 0.375
    assert a["closer_to_max"].value == "G1"
    assert a["g1_red_after_change"].value == "yes"                                    # 75 + 60 = 135 >= 130
    rise = a["g2_headroom"].fields["rise"]
    assert rise.value == 2.75 and rise.tol == 0.25 and rise.decimals == 2             # 5 - 2.25, tol 0.5 * 0.5
    m = {q.id: q.margin.value for q in gr.ladder(s).questions}
    assert m["g1_major_passed"] == 0.5            # 75 is 5 km/h = half a minor below the 80 major
    assert m["g1_in_red"] == 5.5                  # (130 - 75) / 10
    assert m["closer_to_max"] == pytest.approx(0.09375)
    assert m["g1_red_after_change"] == 0.5        # (135 - 130) / 10
    assert m["g2_headroom"] == 5.5                # (5 - 2.25) / 0.5
    # angles: -120 + 240 * 75/160 = -7.5 deg; G2: -90 + 180 * 2.25/6 = -22.5 deg
    assert gr.angle_of(s, 0, 75) == pytest.approx(-7.5)
    assert gr.angle_of(s, 1, 2.25) == pytest.approx(-22.5)
    text = gr.ladder(s).rungs[4].text
    assert "rose by 60 km/h" in text and "above the maximum" in text


def test_worked_negative_scale_fall():
    # G1: -40..120 degC, majors every 20, d = 4 so minor = 5, half-minor = 2.5. Needle 53 half-minors:
    # -40 + 132.5 = 92.5 degC. Red from minor 26: -40 + 130 = 90 degC, so G1 is in the red (margin 0.5 minor).
    # Last major at or below 92.5 is 80. A fall of 3 minors = 15 degC gives 77.5 < 90: no longer red.
    # G2: -1..5 bar, majors every 1, d = 5 so minor = 0.2 bar. Needle 30 half-minors = 2.0 bar; red from minor 24
    # = 3.8 bar, so 1.8 bar of headroom. f1 = 132.5/160 = 0.828125, f2 = 3/6 = 0.5: G1.
    s = gauges(("°C", -40, 20, 8, 4, 270, 26, 53), ("bar", -1, 1, 6, 5, 240, 24, 30), change=-3, level=2)
    a = answers(s)
    assert a["g1_major_passed"].value == 80.0
    assert a["g1_in_red"].value == "yes"
    assert a["g1_reading"].value == 92.5 and a["g1_reading"].decimals == 1
    assert a["closer_to_max"].value == "G1"
    assert a["g1_red_after_change"].value == "no"
    assert a["g2_headroom"].fields["rise"].value == pytest.approx(1.8)
    assert a["g2_headroom"].fields["rise"].tol == pytest.approx(0.1)
    q5 = gr.ladder(s).rungs[4]
    # The same note on readings above the maximum whichever way the reading moves: the text differs only in the verb.
    assert "fell by 15 °C" in q5.text and "above the maximum" in q5.text
    assert q5.margin.value == 2.5                 # (90 - 77.5) / 5


def test_worked_rejections():
    base = gauges(("km/h", 0, 20, 8, 2, 240, 13, 15), ("bar", 0, 1, 6, 2, 180, 10, 9), change=6)
    on_major = replace(base, needle_half=(16, 9))            # 80 km/h exactly on a major tick
    assert not gr.ladder(on_major).rungs[0].margin.ok
    on_red = replace(base, needle_half=(26, 9))              # 130 km/h, the red-zone start
    assert not gr.ladder(on_red).rungs[1].margin.ok
    tie = replace(base, needle_half=(15, 11))                # f2 = 2.75/6 = 0.4583 vs f1 = 0.46875: 0.0104 apart
    assert not gr.ladder(tie).rungs[3].margin.ok
    lands_on_red = replace(base, change_minor=5)             # 75 + 50 = 125: half a minor short of red
    assert gr.ladder(lands_on_red).rungs[4].margin.ok and answers(lands_on_red)["g1_red_after_change"].value == "no"
    dense = gauges(("%", 0, 10, 10, 10, 180, 80, 15), ("bar", 0, 1, 6, 2, 180, 10, 9), level=3)
    assert gr.minor_gap_px(dense, 0) == pytest.approx(gr.TICK_R * math.pi / 100)  # 3.8 px: too dense
    assert not gr.ladder(dense).rungs[2].margin.ok


def test_bad_level():
    with pytest.raises(ValueError):
        gr.sample(np.random.default_rng(0), 0)


# --- properties ------------------------------------------------------------------------------------------------

@given(seeds, levels)
def test_angle_map_monotone_and_invertible(seed, level):
    s = accepted(seed, level)
    for g in (0, 1):
        n_half = 2 * s.n_major[g] * s.minors[g]
        vals = [s.v_min[g] + Fraction(h) * gr.minor(s, g) / 2 for h in range(n_half + 1)]
        angles = [gr.angle_of(s, g, v) for v in vals]
        assert all(b > a for a, b in itertools.pairwise(angles))
        assert angles[0] == pytest.approx(-s.sweep_deg[g] / 2) and angles[-1] == pytest.approx(s.sweep_deg[g] / 2)
        for v, a in zip(vals, angles):
            assert gr.value_at(s, g, a) == pytest.approx(float(v), abs=1e-9)


@given(seeds, levels)
def test_readings_agree_with_the_needle_angle(seed, level):
    """Recompute Q1-Q4 from nothing but each needle's angle and the printed scale."""
    s = accepted(seed, level)
    a = answers(s)
    frac = []
    for g in (0, 1):
        alpha = gr.angle_of(s, g, gr.value_of(s, g))
        t = (alpha + s.sweep_deg[g] / 2) / s.sweep_deg[g]               # 0..1 along the scale
        frac.append(t)
        if g == 0:
            span = s.n_major[0] * s.major_step[0]
            half = s.major_step[0] / s.minors[0] / 2
            read = s.v_min[0] + round(t * span / half) * half            # snap to the half-minor grid
            assert a["g1_reading"].matches(read) and a["g1_reading"].value == pytest.approx(read)
            major = s.v_min[0] + math.floor(t * s.n_major[0] + 1e-9) * s.major_step[0]
            assert a["g1_major_passed"].value == pytest.approx(major)
            red_angle = gr.angle_of(s, 0, gr.red_from(s, 0))
            assert (a["g1_in_red"].value == "yes") == (alpha > red_angle)
    assert a["closer_to_max"].value == ("G1" if frac[0] > frac[1] else "G2")
    assert abs(frac[0] - frac[1]) >= gr.FRACTION_GAP - 1e-12


@given(seeds, levels)
def test_q5_recomputes_on_the_changed_reading(seed, level):
    s = accepted(seed, level)
    e = gr.edit(s)
    lad = gr.ladder(s)
    assert lad.rungs[4].answer == gr.in_red(e) == gr.counterfactual(e)
    assert gr.value_of(e, 0) - gr.value_of(s, 0) == gr.change(s) != 0
    assert gr.value_of(e, 1) == gr.value_of(s, 1) and e.red_minor == s.red_minor
    want = "yes" if gr.value_of(s, 0) + gr.change(s) >= gr.red_from(s, 0) else "no"
    assert lad.rungs[4].answer.value == want
    # Rises and falls from either side of the zone; X at most two majors.
    assert 0 < abs(gr.change(s)) <= gr.CHANGE_SPAN_MAJORS * s.major_step[0]
    assert abs(gr.value_of(e, 0) - gr.red_from(s, 0)) >= gr.minor(s, 0) / 2
    assert gr.value_of(e, 0) >= s.v_min[0]


@given(seeds, levels)
def test_sweep_and_unit_do_not_change_answers(seed, level):
    s = accepted(seed, level)
    other = replace(s, sweep_deg=tuple(270 if w != 270 else 180 for w in s.sweep_deg))
    a, b = answers(s), answers(other)
    for qid in ("g1_major_passed", "g1_in_red", "g1_reading", "closer_to_max", "g1_red_after_change"):
        assert a[qid] == b[qid], qid
    renamed = replace(s, units=("u1", "u2"))
    assert answers(renamed)["g1_reading"].value == a["g1_reading"].value
    assert answers(renamed)["g1_reading"].unit == "u1"


@given(seeds, levels, st.integers(-5, 5))
def test_offset_shifts_values_and_keeps_classes(seed, level, k):
    """Moving the whole scale of G1 by k major steps shifts every value answer by the same amount and leaves
    the yes/no and G1/G2 answers alone."""
    s = accepted(seed, level)
    shift = k * s.major_step[0]
    t = replace(s, v_min=(s.v_min[0] + shift, s.v_min[1]))
    a, b = answers(s), answers(t)
    assert b["g1_reading"].value == pytest.approx(a["g1_reading"].value + shift)
    assert b["g1_major_passed"].value == pytest.approx(a["g1_major_passed"].value + shift)
    for qid in ("g1_in_red", "closer_to_max", "g1_red_after_change", "g2_headroom"):
        assert a[qid] == b[qid], qid


@given(seeds, levels)
def test_swapping_gauges_flips_q4(seed, level):
    s = accepted(seed, level)
    w = swapped(s)
    assert gr.closer_to_max(w).value != gr.closer_to_max(s).value
    assert gr.fraction_of(w, 0) == gr.fraction_of(s, 1)


@given(seeds, levels)
def test_sampled_scene_contract(seed, level):
    s = accepted(seed, level)
    assert scene_from_json(gr.Scene, scene_to_json(s)) == s
    assert s.level == level and all(d in gr.MINORS[level] for d in s.minors)
    assert all(5 <= n <= 10 for n in s.n_major) and all(w in gr.SWEEPS_DEG for w in s.sweep_deg)
    if level == 1:
        assert s.v_min == (0, 0)
    if level == 2:
        assert all(v < 0 for v in s.v_min)
    for g in (0, 1):
        total = s.n_major[g] * s.minors[g]
        assert 0.65 <= s.red_minor[g] / total <= 0.95                  # red zone in the upper 35%, on a tick
        assert 0 < s.needle_half[g] < 2 * total
        assert gr.minor_gap_px(s, g) >= gr.MINOR_GAP_PX
    lad = gr.ladder(s)
    assert not lad.failing_margins()
    assert len({q.text for q in lad.questions}) == 6
    rng = np.random.default_rng(seed)
    for q in lad.questions:
        assert q.answer.in_space(), q.id
        assert q.answer.matches(q.answer.parse("ANSWER: " + q.answer.reference_text())), q.id
        assert not q.answer.matches(q.answer.plausible_wrong(rng)), q.id


@settings(max_examples=6)
@given(seeds, levels)
def test_draw_stays_in_safe_area(seed, level):
    s = accepted(seed, level)
    c = Canvas(768, gr.DOMAIN.world)
    gr.draw(s, c)
    a = c.array()
    b = SAFE_BORDER_PX
    border = np.concatenate([a[:b].ravel(), a[-b:].ravel(), a[:, :b].ravel(), a[:, -b:].ravel()])
    assert border.min() == 255 and (a < 128).any()


def test_balance_targets():
    """Q2, Q4 and Q5 are drawn 50/50 before the scene is built."""
    rng = np.random.default_rng(11)
    got = {k: Counter() for k in ("g1_in_red", "closer_to_max", "g1_red_after_change")}
    n = 0
    for i in range(450):
        try:
            s = gr.sample(rng, 1 + i % 3)
        except Reject:
            continue
        n += 1
        a = answers(s)
        for k, tally in got.items():
            tally[a[k].value] += 1
    assert n > 400
    for k, c in got.items():
        assert len(c) == 2 and max(c.values()) / n < 0.58, (k, c)


# --- issue 15: Q5 leak, minimal pair, rephrase, legibility ------------------------------------------------------

def _cramers_v(pairs) -> float:
    """Bias-corrected Cramer's V between two categorical columns."""
    xs, ys = sorted({x for x, _ in pairs}), sorted({y for _, y in pairs})
    t = np.array([[sum(1 for p in pairs if p == (x, y)) for y in ys] for x in xs], float)
    n = t.sum()
    if min(t.shape) < 2:
        return 0.0
    chi2 = (((t - t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / n) ** 2)
            / (t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / n)).sum()
    r, k = t.shape
    phi2 = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    rc, kc = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    return float(math.sqrt(phi2 / max(1e-12, min(kc - 1, rc - 1))))


def test_q5_text_carries_no_information_about_q2():
    """Q5's wording (rose/fell, and X in G1's major steps) is independent of Q2's answer over 300 items; before
    issue 15 "fell" appeared exactly when G1 was already in the zone (V = 1)."""
    rng = np.random.default_rng(2026)
    verb, size, q5 = [], [], Counter()
    for i in range(300):
        try:
            s = gr.sample(rng, 1 + i % 3)
        except Reject:
            continue
        lad = gr.ladder(s)
        q2 = lad.rungs[1].answer.value
        verb.append(("rose" in lad.rungs[4].text, q2))
        size.append((min(2, abs(s.change_minor) // s.minors[0]), q2))
        q5[lad.rungs[4].answer.value] += 1
    assert len(verb) > 280
    assert _cramers_v(verb) < 0.12, _cramers_v(verb)
    assert _cramers_v(size) < 0.12, _cramers_v(size)
    # Rises and falls in both Q2 classes, and Q5 itself near 50/50.
    per = Counter(verb)
    assert min(per.values()) > 0.18 * len(verb), per
    assert max(q5.values()) / sum(q5.values()) < 0.6, q5


@settings(max_examples=25)
@given(seeds, levels)
def test_minimal_pair_turns_only_g2_and_flips_q4(seed, level):
    s = accepted(seed, level)
    try:
        t = gr.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    assert t == gr.minimal_pair(s)                                   # deterministic
    assert t.needle_half[0] == s.needle_half[0] and replace(t, needle_half=s.needle_half) == s
    a, b = answers(s), answers(t)
    assert b["closer_to_max"].value != a["closer_to_max"].value
    for qid in ("g1_major_passed", "g1_in_red", "g1_reading", "g1_red_after_change"):
        assert a[qid] == b[qid], qid
    assert not gr.ladder(t).failing_margins()
    # The smallest turn: no half-minor position nearer to G2's needle flips Q4 with every margin.
    step = abs(t.needle_half[1] - s.needle_half[1])
    for h in range(s.needle_half[1] - step + 1, s.needle_half[1] + step):
        u = replace(s, needle_half=(s.needle_half[0], h))
        assert gr.closer_to_max(u) == gr.closer_to_max(s) or gr.ladder(u).failing_margins()


@settings(max_examples=25)
@given(seeds, levels)
def test_rephrased_q4_names_the_other_gauge(seed, level):
    s = accepted(seed, level)
    q4, r = gr.ladder(s).rungs[3], gr.rephrase_q4(s)
    assert {q4.answer.value, r.answer.value} == {"G1", "G2"} and r.answer.options == q4.answer.options
    # The gauge with more range left is the one with the smaller fraction of its range used.
    left = [1 - gr.fraction_of(s, g) for g in (0, 1)]
    assert r.answer.value == ("G1" if left[0] > left[1] else "G2")
    assert r.margin.ok and r.text != q4.text


def test_zone_and_needle_leave_every_tick_visible():
    """The danger-zone band lies outside the tick ring and the numerals outside the band, and the needle's tip ends
    among the ticks: no tick is covered by the zone, and the tip never lies in the zone."""
    assert gr.BAND_R[0] > gr.TICK_R
    assert gr.TICK_R - gr.TICK_LEN["minor"] < gr.NEEDLE_R < gr.TICK_R < gr.BAND_R[0]
    s = gauges(("km/h", 0, 20, 8, 2, 240, 13, 27), ("bar", 0, 1, 6, 2, 180, 10, 9), change=-6)
    c = Canvas(768, gr.DOMAIN.world)
    gr.draw(s, c)
    img = c.array().astype(int)
    # Every minor tick inside G1's zone (minors 14, 15) still has black pixels along its length.
    for k in (14, 15):
        angle = gr.angle_of(s, 0, gr.minor(s, 0) * k)
        x, y = gr._polar(gr.CENTERS[0], angle, gr.TICK_R - 4)
        patch = img[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2]
        assert (patch.sum(axis=2) < 150).any(), k
    # The needle tip (needle at 135 km/h, inside the zone) is drawn in needle blue, not over the zone's orange.
    tip = gr._polar(gr.CENTERS[0], gr.angle_of(s, 0, gr.value_of(s, 0)), gr.NEEDLE_R - 4)
    r, g, b = img[int(round(tip[1])), int(round(tip[0]))]
    assert b > r


def test_minor_ticks_far_enough_apart_to_read_within_tolerance():
    """A reading is accepted within half a minor interval; minor ticks at least 8 px apart leave 4 px of arc either
    way. The old 5 px rule allowed dials like 0-100 in 100 minors over 270 deg (3.8 px at the old radius)."""
    assert gr.MINOR_GAP_PX >= 8.0
    rng = np.random.default_rng(3)
    for i in range(60):
        s = accepted(int(rng.integers(2**32)), 1 + i % 3)
        for g in (0, 1):
            assert gr.minor_gap_px(s, g) >= 8.0
            assert gr.reading(s).tol_abs() == pytest.approx(float(gr.minor(s, 0)) / 2)


def test_texts_name_the_zone_by_the_colour_it_is_drawn_in():
    """The zone is drawn in Okabe-Ito vermillion, which reads as orange: no text calls it red."""
    assert gr.RED == gr.OKABE_ITO["vermillion"]
    s = accepted(7, 2)
    texts = [q.text for q in gr.ladder(s).questions]
    assert "orange" in gr.ladder(s).rungs[1].text
    texts.append(gr.rephrase_q4(s).text)
    assert not any("red" in t.lower().replace("reading", "") for t in texts), texts


def test_dials_use_the_safe_area():
    """Both dials together span the safe area from corner to corner (before issue 15 they sat in a 340 px strip)."""
    lo = min(c[1] - gr.FACE_R for c in gr.CENTERS)
    hi = max(c[1] + gr.FACE_R for c in gr.CENTERS)
    assert lo <= SAFE_BORDER_PX + 8 and hi >= 768 - SAFE_BORDER_PX - 8
    assert math.dist(*gr.CENTERS) > 2 * gr.FACE_R + 20                # the bezels do not touch


def test_g2_options_match_the_fraction_rule():
    """The sampler's integer test for G2's needle agrees with the rule stated in Fractions (|f2 - f1| against the
    float FRACTION_GAP, which a Fraction compares at its exact value), on every dial pair the scales allow."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        t1, t2 = (2 * int(rng.choice((5, 6, 8, 10))) * int(rng.choice((2, 4, 5, 10))) for _ in range(2))
        h1, r2 = int(rng.integers(1, t1)), int(rng.integers(1, t2 // 2))
        red, nearer = (None, True, False)[int(rng.integers(3))], bool(rng.integers(2))
        f1 = Fraction(h1, t1)
        ref = [h for h in range(1, t2) if h != 2 * r2 and (red is None or (h > 2 * r2) == red)
               and abs(Fraction(h, t2) - f1) >= gr.FRACTION_GAP and (Fraction(h, t2) < f1) == nearer]
        assert gr._g2_options(t2, r2, red, h1, t1, nearer) == ref
    # the boundary itself: a gap of exactly 1/20 is below the float 0.05 and fails, as it did with Fractions
    assert 11 not in gr._g2_options(20, 9, None, 10, 20, False) and 12 in gr._g2_options(20, 9, None, 10, 20, False)


def test_indexing_a_tuple_draws_what_rng_choice_draws():
    """`seq[rng.integers(len(seq))]` (the sampler's form) gives rng.choice(seq)'s value and leaves the generator in
    the same state."""
    for seed in range(100):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for seq in (gr.MINORS[1], gr.MINORS[2], gr.SWEEPS_DEG, tuple(range(37))):
            assert a.choice(seq) == seq[int(b.integers(len(seq)))]
        assert a.random() == b.random()
