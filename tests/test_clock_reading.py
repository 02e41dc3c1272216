"""clock_reading: hand-worked times and properties of the hand geometry, the mirror edit and the sampler, the
minimal pair and the reflex-angle rephrase, the sheet's near-hour and half-past rules, and the dial's legibility."""
import collections
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import scene_from_json, scene_to_json
from grip.domains.physical import clock_reading as cr
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas

seeds = st.integers(0, 2**32)
levels = st.sampled_from([1, 2, 3])


def clock(h, m, s=0, level=1):
    return cr.Scene(level=level, hour=h, minute=m, second=s, second_hand=level == 3, numeral_style="arabic",
                    minute_ticks=level < 3, radius_px=320.0, center=(384.0, 384.0),
                    hour_hand_frac=0.5 if level < 3 else 0.64, face_tint=0)


def sampled(seed, level):
    return cr.sample(np.random.default_rng(seed), level)


def circ(a, b):
    d = abs(a - b) % 360
    return min(d, 360 - d)


# --- worked on paper ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("h, m, s, hour_deg, minute_deg, gap", [
    (3, 0, 0, 90.0, 0.0, 90.0),             # hour hand on the 3, minute hand on the 12
    (9, 45, 0, 292.5, 270.0, 22.5),         # 270 + 45/2 vs 45*6
    (12, 30, 0, 15.0, 180.0, 165.0),        # hour hand halfway from 12 to 1
    (2, 20, 0, 70.0, 120.0, 50.0),
    (11, 0, 0, 330.0, 0.0, 30.0),           # |330 - 0| folds to 30
    (6, 0, 0, 180.0, 0.0, 180.0),
    (3, 14, 50, 90 + 7 + 50 / 120, 89.0, 7 + 50 / 120 + 1.0),   # 84 + 5 for the minute hand
])
def test_worked_hand_angles(h, m, s, hour_deg, minute_deg, gap):
    scene = clock(h, m, s, level=3 if s else 1)
    hour, minute, second = cr.hand_angles(scene)
    assert hour == pytest.approx(hour_deg) and minute == pytest.approx(minute_deg)
    assert second == pytest.approx(6 * s)
    assert cr.hand_gap_deg(scene) == pytest.approx(gap)


@pytest.mark.parametrize("h, m, s, mh, mm, ms", [
    (3, 0, 0, 9, 0, 0),
    (2, 20, 0, 9, 40, 0),        # 12:00 - 2:20
    (9, 45, 0, 2, 15, 0),
    (12, 10, 0, 11, 50, 0),      # just past 12 mirrors to just before 12
    (3, 14, 50, 8, 45, 10),      # seconds borrow: 11:59:60 - 3:14:50
    (6, 0, 0, 6, 0, 0),          # fixed points of the mirror: 6:00 and 12:00
    (12, 0, 0, 12, 0, 0),
])
def test_worked_mirror(h, m, s, mh, mm, ms):
    e = cr.edit(clock(h, m, s, level=3 if s else 1))
    assert (e.hour, e.minute, e.second) == (mh, mm, ms)
    assert cr.counterfactual(e).reference_value() == {"hour": mh, "minute": mm}


@pytest.mark.parametrize("h, m, s, wait_min", [
    (3, 0, 0, 180 / 11),         # hands 90 deg apart, closing at 5.5 deg/min
    (9, 45, 0, 45 / 11),         # 22.5 / 5.5
    (12, 30, 0, 390 / 11),       # next overlap at 720/11 min past 12
    (12, 0, 0, 720 / 11),        # coinciding now: the *next* overlap is a full lap away
    (3, 14, 50, (7 + 50 / 120 + 1) / 5.5),
])
def test_worked_minutes_to_overlap(h, m, s, wait_min):
    assert cr.minutes_to_overlap(clock(h, m, s)) == pytest.approx(wait_min)


def test_worked_half_hour_and_margins():
    assert cr.half_hour_side(clock(4, 28)).value == "before half past"
    assert cr.half_hour_side(clock(4, 32)).value == "after half past"
    qs = {q.id: q for q in cr.ladder(clock(10, 4)).questions}
    assert qs["hour_passed"].margin.value == pytest.approx(2.0)        # 4 min past the 10 = 2 deg
    assert qs["half_hour_side"].margin.value == pytest.approx(26.0)
    assert qs["mirrored_time"].answer.reference_value() == {"hour": 1, "minute": 56}
    # 12:00 would read 12:00 with a window 11:59..12:01 across the hour: rejected.
    assert not cr.ladder(clock(12, 0)).rungs[2].margin.ok
    assert not cr.ladder(clock(4, 30)).rungs[1].margin.ok
    assert not cr.ladder(clock(3, 16)).rungs[3].margin.ok              # hands 2 deg apart


def test_reference_answers_parse():
    q = cr.ladder(clock(9, 45)).rungs[2]
    assert q.answer.matches(q.answer.parse("ANSWER: hour=9; minute=44"))    # within one minute
    assert not q.answer.matches(q.answer.parse("ANSWER: hour=10; minute=45"))


def test_bad_level():
    with pytest.raises(ValueError):
        cr.sample(np.random.default_rng(0), 4)


# --- properties ----------------------------------------------------------------------------------------------------

@given(seeds, levels)
def test_angles_and_gap(seed, level):
    s = sampled(seed, level)
    hour, minute, second = cr.hand_angles(s)
    assert all(0 <= a < 360 for a in (hour, minute, second))
    gap = cr.hand_gap_deg(s)
    assert 0 <= gap <= 180
    assert gap == pytest.approx(circ(hour, minute))
    if s.second == 0:
        x = abs(30 * (s.hour % 12) - 5.5 * s.minute)
        assert gap == pytest.approx(min(x, 360 - x))


@given(seeds, levels)
def test_mirror_reflects_every_hand(seed, level):
    s = sampled(seed, level)
    e = cr.edit(s)
    assert cr.edit(e) == s
    assert (e.hour, e.minute, e.second) != (s.hour, s.minute, s.second)
    for a, b in zip(cr.hand_angles(s), cr.hand_angles(e)):
        assert circ(b, -a) == pytest.approx(0, abs=1e-9)
    assert cr.hand_gap_deg(e) == pytest.approx(cr.hand_gap_deg(s))      # a reflection keeps angles


@given(seeds, levels)
def test_overlap_wait_makes_hands_coincide(seed, level):
    s = sampled(seed, level)
    wait = cr.minutes_to_overlap(s)
    assert 0 < wait <= 720 / 11
    t = 60 * (s.hour % 12) + s.minute + s.second / 60 + wait
    assert circ(0.5 * t, 6 * t) == pytest.approx(0, abs=1e-6)
    hour, minute, _ = cr.hand_angles(s)
    assert 5.5 * wait == pytest.approx((hour - minute) % 360)          # closing speed 5.5 deg/min
    for frac in (0.25, 0.5, 0.75):                                      # no overlap on the way
        u = t - wait * (1 - frac)
        assert circ(0.5 * u, 6 * u) > 1e-3


@given(seeds, levels)
def test_next_hour_turns_only_the_hour_hand(seed, level):
    s = sampled(seed, level)
    later = replace(s, hour=s.hour % 12 + 1)
    (h0, m0, s0), (h1, m1, s1) = cr.hand_angles(s), cr.hand_angles(later)
    assert circ(h1, h0 + 30) == pytest.approx(0, abs=1e-9)
    assert (m1, s1) == (m0, s0)
    assert cr.hour_passed(later).value == s.hour % 12 + 1


@given(seeds, levels)
def test_sampled_scene_contract(seed, level):
    s = sampled(seed, level)
    assert s == sampled(seed, level)
    assert scene_from_json(cr.Scene, scene_to_json(s)) == s
    assert s.level == level and s.second_hand == (level == 3) and (s.second == 0 or level == 3)
    assert s.numeral_style == "arabic" or level > 1
    lad = cr.ladder(s)
    assert not lad.failing_margins()
    assert len({q.text for q in lad.rungs}) == 5 and [q.position for q in lad.questions] == [1, 2, 3, 4, 5, 6]
    assert lad.rungs[4].answer == cr.counterfactual(cr.edit(s)) and lad.rungs[4].edit
    rng = np.random.default_rng(seed)
    for q in lad.questions:
        assert q.answer.in_space(), q.id
        assert q.answer.matches(q.answer.parse("ANSWER: " + q.answer.reference_text())), q.id
        assert not q.answer.matches(q.answer.plausible_wrong(rng)), q.id
    q1, q2, q3 = (q.answer for q in lad.rungs[:3])
    assert q3.reference_value() == {"hour": s.hour, "minute": s.minute} and q1.value == s.hour
    assert (q2.value == "before half past") == (s.minute < 30)
    assert 1 <= s.minute <= 58 and 1 <= cr.edit(s).minute <= 58         # the +-1 minute window stays in the hour


@settings(max_examples=9)
@given(seeds, levels)
def test_draw_stays_in_safe_area(seed, level):
    s = sampled(seed, level)
    c = Canvas(768, cr.DOMAIN.world)
    cr.draw(s, c)
    a = c.array()
    b = SAFE_BORDER_PX
    border = np.concatenate([a[:b].ravel(), a[-b:].ravel(), a[:, :b].ravel(), a[:, -b:].ravel()])
    assert border.min() == 255
    assert (a < 128).any()


def test_balance_targets():
    """Target-first sampling: hours uniform, Q2 50/50, Q4 spread over 0..180 deg (uniform time)."""
    rng = np.random.default_rng(7)
    scenes = [cr.sample(rng, 1 + i % 3) for i in range(2400)]
    hours = collections.Counter(s.hour for s in scenes)
    assert set(hours) == set(range(1, 13)) and max(hours.values()) / len(scenes) < 0.12
    before = sum(cr.half_hour_side(s).value == "before half past" for s in scenes) / len(scenes)
    assert 0.45 < before < 0.55
    gaps, _ = np.histogram([cr.hand_gap_deg(s) for s in scenes], bins=6, range=(0, 180))
    assert gaps.min() > 0.6 * len(scenes) / 6
    assert math.isclose(sum(gaps), len(scenes))


# --- issue 15: minimal pair, rephrase, the sheet's near-hour and half-past rules, legibility ----------------------

@settings(max_examples=30)
@given(seeds, levels)
def test_minimal_pair_moves_the_clock_five_minutes(seed, level):
    s = sampled(seed, level)
    try:
        t = cr.minimal_pair(s)
    except cr.Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    assert t == cr.minimal_pair(s)                                        # deterministic
    assert abs(t.minute - s.minute) == 5 and replace(t, minute=s.minute) == s
    # The hour hand moves 2.5 deg with the minute hand's 30 deg; Q1 stays, Q4 moves by >= 3 tolerances.
    assert circ(cr.hand_angles(t)[0], cr.hand_angles(s)[0]) == pytest.approx(2.5)
    assert cr.hour_passed(t) == cr.hour_passed(s)
    assert abs(cr.hand_gap_deg(t) - cr.hand_gap_deg(s)) >= 3 * cr.ANGLE_TOL_DEG
    assert not cr.ladder(t).failing_margins()


def test_minimal_pair_worked():
    # 3:10 -> 3:15: the gap 30*3 - 5.5*10 = 35 deg becomes 90 - 82.5 = 7.5 deg (27.5 deg less).
    t = cr.minimal_pair(clock(3, 10))
    assert (t.hour, t.minute) == (3, 15) and cr.hand_gap_deg(t) == pytest.approx(7.5)
    # 4:56 cannot go on without changing the hour, so 4:51: hour hand 148 -> 145.5 deg, minute hand 336 -> 306 deg,
    # gap 188 (folded to 172) -> 160.5 deg: the fold at 180 leaves 11.5 deg of the 27.5, still >= 3 tolerances.
    t = cr.minimal_pair(clock(4, 56))
    assert (t.hour, t.minute) == (4, 51) and cr.hand_gap_deg(t) == pytest.approx(160.5)


@settings(max_examples=30)
@given(seeds, levels)
def test_rephrased_q4_is_the_reflex_angle(seed, level):
    s = sampled(seed, level)
    q4, r = cr.ladder(s).rungs[3], cr.rephrase_q4(s)
    assert q4.answer.value + r.answer.value == pytest.approx(360.0)
    assert 180.0 <= r.answer.value <= 360.0 and r.answer.in_space() and r.margin.ok and r.text != q4.text


def test_levels_1_2_leave_out_minute_58_as_the_sheet_says():
    """DOMAINS.md 4.6: m not in {58, 59, 0, 1} at L1-L2 (the hour hand about to reach a mark reads as on it);
    minute 2 stays. Level 3 lifts the rule. Before issue 15 minute 58 passed at L1-L2."""
    for level in (1, 2):
        assert not cr.ladder(clock(3, 58, level=level)).rungs[0].margin.ok
        assert not cr.ladder(clock(3, 1, level=level)).rungs[0].margin.ok
        assert cr.ladder(clock(3, 57, level=level)).rungs[0].margin.ok
        assert cr.ladder(clock(3, 2, level=level)).rungs[0].margin.ok
    assert not cr.ladder(clock(3, 58, 30, level=3)).failing_margins()
    rng = np.random.default_rng(58)
    minutes = {cr.sample(rng, 1 + i % 2).minute for i in range(600)}
    assert minutes <= set(range(2, 58)) and {2, 57} <= minutes


def test_half_past_rule_is_the_minute_hands_distance_from_the_six():
    """Decided: Q2's boundary is the minute hand's position, seconds included, 1.5 min (9 deg) either side of the
    6. With s = 0 this is the sheet's m not in {29, 30, 31}; at level 3 28:45 is too close and 31:40 is not."""
    for m in range(2, 58):
        assert cr.ladder(clock(4, m)).rungs[1].margin.ok == (m not in (29, 30, 31)), m
    assert not cr.ladder(clock(4, 28, 45, level=3)).rungs[1].margin.ok      # 1.25 min before half past
    assert cr.ladder(clock(4, 28, 30, level=3)).rungs[1].margin.ok          # exactly 1.5 min
    assert cr.ladder(clock(4, 31, 40, level=3)).rungs[1].margin.ok          # 1.67 min after
    assert not cr.ladder(clock(4, 31, 20, level=3)).rungs[1].margin.ok


def test_q4_says_the_second_hand_is_not_counted():
    q4 = cr.ladder(clock(4, 20, 30, level=3)).rungs[3]
    assert "second hand is not one of the two" in q4.text
    assert "second hand" not in cr.ladder(clock(4, 20)).rungs[3].text      # no second hand is drawn below L3


def test_twelve_marker_cannot_be_read_as_a_numeral():
    """Without numerals 12 is a filled triangle: one dark run across it, not two bars that read as "II"."""
    s = replace(clock(3, 15, 30, level=3), numeral_style="ticks")      # second hand at the 6
    c = Canvas(768, cr.DOMAIN.world)
    cr.draw(s, c)
    a = c.array().astype(int).sum(axis=2)
    cx, cy, r = s.center[0], s.center[1], s.radius_px
    for depth in (8, 16, 24):
        row = a[int(cy - (r - cr.RIM_PX - depth)), int(cx) - 30:int(cx) + 31] < 200
        runs = int(row[0]) + int(np.count_nonzero(row[1:] & ~row[:-1]))
        assert runs == 1, (depth, row.astype(int))


def test_edit_text_carries_no_internal_notation():
    q5 = cr.ladder(clock(4, 20)).rungs[4]
    assert "->" not in q5.edit and "->" not in q5.text and "12-6 line" in q5.edit
