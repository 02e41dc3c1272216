"""clock_reading: hand-worked times and properties of the hand geometry, the mirror edit and the sampler."""
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
