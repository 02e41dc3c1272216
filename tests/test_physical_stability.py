"""physical_stability: metamorphic properties of the stability rule, an exact rational oracle, the sampler's
construction guarantees, and examples worked out on paper."""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject
from grip.draws import Draws
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.domains.physical import physical_stability as ps

seeds = st.integers(0, 2**32)
levels = st.sampled_from((1, 2, 3))


def scene_of(seed: int, level: int) -> ps.Scene:
    return ps.sample(np.random.default_rng(seed), level)


def verdicts(s: ps.Scene) -> tuple[str, str]:
    return ps.stack_verdict(s).value, ps.stability(ps.edit(s)).value


def oracle_verdict(widths, heights, centers, densities) -> str:
    """Exact re-derivation with rationals: lowest joint whose upper substack COM is not strictly inside the overlap."""
    m = [Fraction(d * w * h) for d, w, h in zip(densities, widths, heights)]
    for j in range(len(centers) - 1):
        com = sum(mk * xk for mk, xk in zip(m[j + 1:], centers[j + 1:])) / sum(m[j + 1:])
        lo = max(Fraction(centers[j]) - Fraction(widths[j], 2), Fraction(centers[j + 1]) - Fraction(widths[j + 1], 2))
        hi = min(Fraction(centers[j]) + Fraction(widths[j], 2), Fraction(centers[j + 1]) + Fraction(widths[j + 1], 2))
        if not lo < com < hi:
            return f"tips at {'ABCDEF'[j]}-{'ABCDEF'[j + 1]}"
    return "stable"


# --- the sampler -------------------------------------------------------------------------------------------------

@given(seeds, levels)
def test_sample_is_deterministic_and_respects_the_level(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    assert s == scene_of(seed, level)
    n = len(s.centers_px)
    assert {1: n == 3, 2: 4 <= n <= 5, 3: n == 6}[level]
    assert all(80 <= w <= 220 and w % 2 == 0 for w in s.widths_px)
    assert all(40 <= h <= 80 for h in s.heights_px)
    assert level == 3 or set(s.densities) == {1}
    assert all(type(v) is int for t in (s.widths_px, s.heights_px, s.centers_px, s.densities) for v in t)


@given(seeds, levels)
def test_constructed_scenes_pass_every_margin_and_support_width(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    assert not ps.ladder(s).failing_margins()
    for j in range(len(s.centers_px) - 1):
        lo, hi = ps.support(s, j)
        assert hi - lo >= ps.MIN_SUPPORT_PX


@given(seeds, levels)
def test_rule_agrees_with_an_exact_rational_oracle(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    assert ps.stack_verdict(s).value == oracle_verdict(s.widths_px, s.heights_px, s.centers_px, s.densities)
    e = ps.edit(s)
    want = "stable" if oracle_verdict(e.widths_px, e.heights_px, e.centers_px, e.densities) == "stable" else "unstable"
    assert ps.ladder(s).rungs[4].answer.value == want


def test_targets_are_balanced():
    v4, v5, v2 = [], [], []
    for seed in range(300):
        try:
            s = scene_of(seed, 1 + seed % 3)
        except Reject:
            continue
        v4.append(ps.stack_verdict(s).value)
        v5.append(ps.stability(ps.edit(s)).value)
        v2.append(ps.c_relative_to_b(s).value)
    assert len(v4) >= 290
    assert 0.30 <= v4.count("stable") / len(v4) <= 0.50
    assert 0.40 <= v5.count("stable") / len(v5) <= 0.60
    assert 0.12 <= v2.count("directly above") / len(v2) <= 0.28
    assert abs(v2.count("left") - v2.count("right")) / len(v2) <= 0.12



def _place_by_candidate(rng, w, m, want, want_edit, q2, tau):
    """Centre placement tested candidate by candidate with numpy: `ps._place` must give the same centres from the
    same draws."""
    n = len(w)
    x = np.zeros(n)
    for j in range(n - 2, -1, -1):
        reach = min(ps.MAX_STEP_PX, (w[j] + w[j + 1]) // 2 - ps.MIN_SUPPORT_PX)
        cand = x[j + 1] + np.arange(-reach, reach + 1)
        if j == 1:
            d = x[2] - cand
            cand = cand[{"left": d <= -ps.Q2_GAP_PX, "right": d >= ps.Q2_GAP_PX, "directly above": d == 0}[q2]]
        lo = np.maximum(cand - w[j] / 2, x[j + 1] - w[j + 1] / 2)
        hi = np.minimum(cand + w[j] / 2, x[j + 1] + w[j + 1] / 2)
        ok = np.ones(len(cand), bool)
        checks = [(m[j + 1:], x[j + 1:], want[j])]
        if j <= n - 3:
            checks.append((m[j + 1:n - 1], x[j + 1:n - 1], want_edit[j]))
        for mass, pos, target in checks:
            com = float(mass @ pos / mass.sum())
            ok &= np.minimum(np.abs(com - lo), np.abs(com - hi)) >= tau + 1e-6
            if target is not None:
                ok &= ((lo < com) & (com < hi)) == target
        if not ok.any():
            return None
        x[j] = cand[rng.choice(np.flatnonzero(ok))]
    return x


def test_interval_placement_equals_the_candidate_by_candidate_test():
    gen = np.random.default_rng(3)
    ref, rng = np.random.default_rng(1), np.random.default_rng(1)
    draws, placed = Draws(rng), 0
    for _ in range(300):
        n = int(gen.integers(3, 7))
        w = 2 * gen.integers(40, 111, n)
        m = (gen.integers(1, 4, n) * w * gen.integers(40, 81, n)).astype(float)
        want = [None if gen.random() < 0.3 else bool(gen.random() < 0.7) for _ in range(n - 1)]
        want_edit = [None if gen.random() < 0.3 else bool(gen.random() < 0.5) for _ in range(n - 2)]
        args = (w, m, want, want_edit, str(gen.choice(ps.Q2_OPTIONS)), float(gen.choice(list(ps.MARGIN_PX.values()))))
        a, b = _place_by_candidate(ref, *args), ps._place(draws, *args)
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
        placed += a is not None
    assert placed >= 100 and ref.random() == rng.random()   # and the stream stands where the reference left it

# --- metamorphic properties ----------------------------------------------------------------------------------

@given(seeds, levels, st.integers(-300, 300))
def test_horizontal_translation_keeps_every_answer(seed, level, dx):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    t = replace(s, centers_px=tuple(x + dx for x in s.centers_px))
    assert verdicts(t) == verdicts(s)
    assert ps.c_relative_to_b(t) == ps.c_relative_to_b(s)
    assert ps.largest_offset_block(t) == ps.largest_offset_block(s)
    assert [jt[4] for jt in ps.joints(t)] == pytest.approx([jt[4] for jt in ps.joints(s)])


@given(seeds, levels)
def test_mirror_keeps_the_verdict_and_swaps_left_and_right(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    m = replace(s, centers_px=tuple(768 - x for x in s.centers_px))
    assert verdicts(m) == verdicts(s)
    swap = {"left": "right", "right": "left", "directly above": "directly above"}
    assert ps.c_relative_to_b(m).value == swap[ps.c_relative_to_b(s).value]
    assert ps.deciding_clearance_units(m).value == pytest.approx(ps.deciding_clearance_units(s).value, abs=0.011)


@given(seeds, levels, st.integers(2, 5))
def test_scaling_every_mass_leaves_the_centres_of_mass(seed, level, k):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    heavy = replace(s, densities=tuple(k * d for d in s.densities))
    for j in range(len(s.centers_px) - 1):
        assert ps.substack_com(heavy, j) == pytest.approx(ps.substack_com(s, j))
    assert verdicts(heavy) == verdicts(s)


@given(seeds, levels)
def test_removing_the_top_block_equals_recomputing_without_it(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    e = ps.edit(s)
    assert e != s and len(e.centers_px) == len(s.centers_px) - 1
    m = np.array(ps.masses(s))[:-1]
    x = np.array(s.centers_px, float)[:-1]
    for j, (lo, hi, com, holds, clear) in enumerate(ps.joints(e)):
        assert (lo, hi) == ps.support(s, j)            # supports do not involve the top block
        assert com == pytest.approx(float(m[j + 1:] @ x[j + 1:] / m[j + 1:].sum()))
    lad = ps.ladder(s)
    assert lad.rungs[4].answer == ps.counterfactual(e)
    assert lad.rungs[4].text != lad.rungs[3].text
    assert lad.rungs[4].margin.value == pytest.approx(min(jt[4] for jt in ps.joints(e)))


@settings(max_examples=15)
@given(seeds, levels)
def test_drawing_leaves_the_safe_border_blank(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    c = Canvas(768, ps.DOMAIN.world)
    ps.draw(s, c)
    a = c.array()
    b = SAFE_BORDER_PX
    assert (a[:b] == 255).all() and (a[-b:] == 255).all() and (a[:, :b] == 255).all() and (a[:, -b:] == 255).all()


# --- worked by hand ------------------------------------------------------------------------------------------

def test_staircase_tips_at_the_bottom_joint():
    # Three 100 x 40 blocks stepping 40 px right. B-C: overlap [330, 390], COM of C = 380 -> holds, 10 px inside.
    # A-B: overlap [290, 350], COM of B+C = 360 -> 10 px beyond the right edge: tips at A-B.
    # Without C: COM of B = 340 inside [290, 350] -> stable. Offsets 40 and 40 tie, so Q3's margin is 0.
    s = ps.Scene(level=2, widths_px=(100, 100, 100), heights_px=(40, 40, 40), centers_px=(300, 340, 380),
                 densities=(1, 1, 1))
    lad = ps.ladder(s)
    assert lad.rungs[0].answer.value == 3
    assert lad.rungs[1].answer.value == "right"
    assert lad.rungs[2].margin.value == 0.0 and not lad.rungs[2].margin.ok
    assert lad.rungs[3].answer.value == "tips at A-B"
    assert lad.rungs[3].margin.value == pytest.approx(10.0)
    assert lad.rungs[4].answer.value == "stable"
    assert lad.open.answer.fields["distance"].value == pytest.approx(0.25)
    assert lad.open.answer.fields["verdict"].value == "tips at A-B"


def test_counterweight_holds_until_the_top_block_is_lifted():
    # A: 200 wide at 400 -> [300, 500]. B: 120 at 510 -> [450, 570], its centre beyond A's edge.
    # C: 120 at 470 -> [410, 530]. B-C overlap [450, 530], COM 470, clearance 20.
    # A-B overlap [450, 500], COM of B+C (equal masses) = 490, clearance 10 -> stable.
    # Lift C: COM of B = 510 > 500 -> unstable, 10 px out. Offsets 110 (B) and 40 (C); C is 40 px left of B.
    s = ps.Scene(level=2, widths_px=(200, 120, 120), heights_px=(40, 40, 40), centers_px=(400, 510, 470),
                 densities=(1, 1, 1))
    lad = ps.ladder(s)
    assert [q.answer.value for q in lad.rungs[1:]] == ["left", "B", "stable", "unstable"]
    assert lad.rungs[1].margin.value == 40.0 and lad.rungs[2].margin.value == 70.0
    assert lad.rungs[3].margin.value == pytest.approx(10.0) and lad.rungs[4].margin.value == pytest.approx(10.0)
    assert lad.open.answer.fields["distance"].value == pytest.approx(0.25)   # A-B decides: 10 px
    assert not lad.failing_margins()                                        # 10 px clears level 2's 6 px
    assert ps.ladder(replace(s, level=1)).rungs[3].margin.ok is False         # but not level 1's 12 px


def test_density_decides_the_bottom_joint():
    # A: 100 at 400 -> [350, 450]. B: 120 x 40 at 420 -> [360, 480]. C: 100 x 80 at 465 -> [415, 515].
    # A-B overlap [360, 450]. Uniform: m_B = 4800, m_C = 8000, COM = 5736000 / 12800 = 448.125 -> holds.
    # C three times as dense: m_C = 24000, COM = 13176000 / 28800 = 457.5 -> 7.5 px out: tips at A-B.
    # B-C overlap [415, 480], COM of C = 465 holds either way.
    light = ps.Scene(level=3, widths_px=(100, 120, 100), heights_px=(40, 40, 80), centers_px=(400, 420, 465),
                     densities=(1, 1, 1))
    heavy = replace(light, densities=(1, 1, 3))
    assert ps.stack_verdict(light).value == "stable"
    assert ps.substack_com(light, 0) == pytest.approx(448.125)
    assert ps.stack_verdict(heavy).value == "tips at A-B"
    assert ps.substack_com(heavy, 0) == pytest.approx(457.5)
    assert ps.deciding_clearance_units(heavy).value == pytest.approx(0.19)   # 7.5 / 40 = 0.1875


def test_exactly_centred_blocks_are_directly_above():
    s = ps.Scene(level=2, widths_px=(200, 160, 120), heights_px=(50, 50, 50), centers_px=(300, 300, 300),
                 densities=(1, 1, 1))
    lad = ps.ladder(s)
    assert lad.rungs[1].answer.value == "directly above"
    assert lad.rungs[3].answer.value == "stable" and lad.rungs[4].answer.value == "stable"
    # the narrowest clearance is C on B: 60 px (C is 120 wide) vs. B+C on A: 80 px
    assert lad.open.answer.fields["distance"].value == pytest.approx(1.5)
    one_px = replace(s, centers_px=(300, 300, 301))
    assert ps.c_relative_to_b(one_px).value == "right" and not ps.ladder(one_px).rungs[1].margin.ok


# --- minimal pair and Q4 rephrase ----------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(seeds, levels)
def test_minimal_pair_slides_only_the_top_block_and_flips_the_verdict(seed, level):
    try:
        s = scene_of(seed, level)
        twin = ps.minimal_pair(s)
    except Reject:
        return
    assert twin == ps.minimal_pair(s)
    assert twin.centers_px[:-1] == s.centers_px[:-1] and twin.widths_px == s.widths_px
    d = abs(twin.centers_px[-1] - s.centers_px[-1])
    assert 1 <= d <= ps.PAIR_MAX_PX
    assert not ps.ladder(twin).failing_margins()
    before = oracle_verdict(s.widths_px, s.heights_px, s.centers_px, s.densities)
    after = oracle_verdict(twin.widths_px, twin.heights_px, twin.centers_px, twin.densities)
    assert before != after and ps.block_count(twin) == ps.block_count(s)
    # minimal: no smaller slide either way gives another verdict with every margin holding
    for k in range(1, d):
        for sign in (1, -1):
            t = replace(s, centers_px=s.centers_px[:-1] + (s.centers_px[-1] + sign * k,))
            lo, hi = t.centers_px[-1] - t.widths_px[-1] / 2, t.centers_px[-1] + t.widths_px[-1] / 2
            if ps.STACK_X[0] <= lo and hi <= ps.STACK_X[1]:
                assert ps.stack_verdict(t).value == before or ps.ladder(t).failing_margins()


@settings(max_examples=30, deadline=None)
@given(seeds, levels)
def test_tip_over_rephrase_gives_the_same_verdict(seed, level):
    try:
        s = scene_of(seed, level)
    except Reject:
        return
    r, q4 = ps.rephrase_q4(s), ps.ladder(s).rungs[3]
    assert r.answer == q4.answer and r.text != q4.text and r.margin.ok
    if r.answer.value == "stable":
        assert r.answer.matches(r.answer.parse("ANSWER: does not tip"))


def test_minimal_pair_worked_example():
    # Four 100 x 40 blocks of equal mass (level 2, margin 6 px), centres 300, 300, 300, 340. Joint C-D: support
    # 290..350, D's centre 340 is 10 px inside. B-C: COM (300 + 340) / 2 = 320 in 250..350. A-B: 313.3. Stable.
    # Slide D right by d: C-D's support is 290 + d..350 and its COM 340 + d, which must pass 350 by 6 px: d = 16
    # (then B-C's COM 328 and A-B's 318.7 stay well inside). Sliding left, D stays over C until d > 90. So 16 px.
    s = ps.Scene(level=2, widths_px=(100, 100, 100, 100), heights_px=(40, 40, 40, 40),
                 centers_px=(300, 300, 300, 340), densities=(1, 1, 1, 1))
    assert ps.stack_verdict(s).value == "stable"
    twin = ps.minimal_pair(s)
    assert twin.centers_px[-1] == 356 and ps.stack_verdict(twin).value == "tips at C-D"
