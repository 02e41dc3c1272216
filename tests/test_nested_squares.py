"""Domain-specific tests for nested_squares: exact area bookkeeping, geometry of the drawn squares, metamorphic
relations, the minimal pair and the Q4 rephrasing, and examples worked on paper."""
import math
from dataclasses import replace
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.plane import nested_squares as ns
from grip.geometry import area, nest

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])


def accepted(seed: int, level: int) -> ns.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        try:
            s = ns.sample(rng, level)
        except Reject:
            continue
        if not ns.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


def hand(divisions, ticks, shaded, edit_t=(1, 3), side_cm=10, level=1):
    return ns.Scene(level, side_cm, 600.0, tuple(divisions), tuple(ticks), tuple(shaded), edit_t)


# --- examples worked on paper ------------------------------------------------------------------------------------

def test_three_squares_by_hand():
    # t = 1/4, 1/2; a_1 = 1/16 + 9/16 = 5/8, a_2 = 1/2. Areas 1, 5/8, 5/16: R1 = 3/8, R2 = 5/16, core = 5/16.
    # Shading (1, 0, 1): F = 3/8 + 5/16 = 11/16 > 1/2 -> shaded. f = 1 - 1/4 = 3/4 -> right.
    # S2's side = 10 * sqrt(5/8) = 7.906 cm. Innermost share 5/16 = 0.3125.
    # Q5 with t' = 1/3: a' = 1/9 + 4/9 = 5/9, G = 1/2, F' = (1 - 5/9) + 5/9 * 1/2 = 13/18 -> shaded.
    s = hand((4, 2), (1, 1), (1, 0, 1))
    assert ns.shaded_fraction(s) == Fraction(11, 16)
    assert ns.larger_part(s).value == "shaded"
    assert ns.contact_side(s).value == "right"
    assert ns.s2_side_cm(s).value == pytest.approx(7.91, abs=0.005)
    assert ns.innermost_share(s).fields["fraction"].value == pytest.approx(0.3125)
    assert ns.shaded_fraction(ns.edit(s)) == Fraction(13, 18)
    assert ns.counterfactual(ns.edit(s)).value == "shaded"
    # Minimal pair: switching R1 off (F = 5/16) or the core off (F = 3/8) both flip Q4 with both margins; R2 on
    # would shade everything. Tie on one region -> the smaller area: the core (5/16 < 3/8).
    twin = ns.minimal_pair(s)
    assert twin.shaded == (1, 0, 0)
    assert ns.shaded_fraction(twin) == Fraction(3, 8) and ns.larger_part(twin).value == "unshaded"


def test_midpoint_square_by_hand():
    # t = 1/2, 1/3, 1/4; a = 1/2, 5/9, 5/8. Core = 1/2 * 5/9 * 5/8 = 25/144. Shading (1, 0, 0, 1):
    # F = 1/2 + 25/144 = 97/144 -> shaded; the contact point is the middle. S1 = 8 cm: S2 = 8 / sqrt 2 = 5.66 cm.
    s = hand((2, 3, 4), (1, 1, 1), (1, 0, 0, 1), edit_t=(1, 4), side_cm=8)
    assert ns.contact_side(s).value == "middle"
    assert ns.shaded_fraction(s) == Fraction(97, 144)
    assert ns.s2_side_cm(s).value == pytest.approx(5.66, abs=0.005)
    assert ns.innermost_share(s).fields["fraction"].value == pytest.approx(25 / 144, abs=5e-5)
    # The sheet's example: t_1 = 1/3 puts S2's top corner 2/3 of the way from the left: right.
    assert ns.contact_side(hand((3, 2), (1, 1), (1, 0, 1))).value == "right"


# --- properties --------------------------------------------------------------------------------------------------

@given(SEEDS, LEVELS)
def test_accepted_scenes_keep_every_rule(seed, level):
    s = accepted(seed, level)
    n = len(s.shaded)
    assert n in ns.N_BY_LEVEL[level] and len(set(s.shaded)) == 2
    assert all(2 <= d <= ns.N_MAX[level] and 1 <= k < d for d, k in zip(s.divisions, s.ticks))
    assert abs(ns.shaded_fraction(s) - Fraction(1, 2)) >= Fraction(ns.AREA_GAP[level]).limit_denominator(100)
    assert abs(ns.shaded_fraction(ns.edit(s)) - Fraction(1, 2)) >= Fraction(ns.AREA_GAP[level]).limit_denominator(100)
    f = ns.contact_fraction(s)
    assert f == Fraction(1, 2) or abs(f - Fraction(1, 2)) >= Fraction(1, 10)
    assert ns.sides_px(s)[-1] >= ns.INNER_MIN_PX and ns.outline_clearance_px(s) >= ns.OUTLINE_CLEAR_PX
    if level == 3:       # untick-marked fractions: sixths, thirds and halves only, pairwise >= 1/6 apart
        assert set(zip(s.divisions, s.ticks)) <= set(ns.UNTICKED)
    else:
        assert ns.tick_legibility_px(s) >= ns.TICK_CLEAR_PX
    assert Fraction(*s.edit_t) in ns.EDIT_TS and Fraction(*s.edit_t) not in (f, 1 - f)
    assert scene_from_json(ns.Scene, scene_to_json(s)) == s


@given(SEEDS, LEVELS)
def test_areas_match_the_drawn_geometry(seed, level):
    """Exact shoelace areas of the nested squares (Fraction vertices) agree with a_i = t^2 + (1 - t)^2, and the
    regions tile S1."""
    s = accepted(seed, level)
    ts = ns.fractions_t(s)
    sq = nest([(Fraction(0), Fraction(0)), (Fraction(0), Fraction(1)), (Fraction(1), Fraction(1)),
               (Fraction(1), Fraction(0))], ts)
    for i, t in enumerate(ts):
        assert area(sq[i + 1]) / area(sq[i]) == t * t + (1 - t) ** 2
    shares = ns.area_shares(ts, s.shaded)
    assert sum(shares) == 1 and all(x > 0 for x in shares)
    assert shares[-1] == area(sq[-1])


@given(SEEDS, LEVELS)
def test_contact_point_read_off_the_layout(seed, level):
    s = accepted(seed, level)
    sq = ns.layout(s)
    (x0, y0), top = sq[0][0], sq[1][3]
    assert top[1] == pytest.approx(y0)                    # S2's fourth corner lies on S1's top side
    f = (top[0] - x0) / s.side_px
    assert f == pytest.approx(float(ns.contact_fraction(s)))
    want = "middle" if abs(f - 0.5) < 1e-9 else "left" if f < 0.5 else "right"
    assert ns.contact_side(s).value == want


@given(SEEDS, LEVELS)
def test_complementing_the_shading_maps_f_to_one_minus_f(seed, level):
    s = accepted(seed, level)
    c = replace(s, shaded=tuple(1 - x for x in s.shaded))
    assert ns.shaded_fraction(c) == 1 - ns.shaded_fraction(s)
    assert ns.larger_part(c).value != ns.larger_part(s).value
    assert ns.larger_part(ns.edit(c)).value != ns.larger_part(ns.edit(s)).value


@given(SEEDS, LEVELS, st.floats(0.5, 2.0))
def test_drawn_size_changes_no_answer(seed, level, k):
    s = accepted(seed, level)
    big = replace(s, side_px=s.side_px * k)
    for a, b in zip(ns.ladder(s).questions, ns.ladder(big).questions):
        assert a.answer == b.answer


@given(SEEDS, LEVELS)
def test_q5_is_the_closed_form_on_the_edited_scene(seed, level):
    """F' = sigma_1 (1 - a') + a' G, with G the shaded share of S2, computed here without the module's F."""
    s = accepted(seed, level)
    tp = Fraction(*s.edit_t)
    a1, a2 = [t * t + (1 - t) ** 2 for t in (ns.fractions_t(s)[0], tp)]
    g = (ns.shaded_fraction(s) - s.shaded[0] * (1 - a1)) / a1
    f_edit = s.shaded[0] * (1 - a2) + a2 * g
    assert ns.shaded_fraction(ns.edit(s)) == f_edit
    assert ns.ladder(s).rungs[4].answer.value == ("shaded" if f_edit > Fraction(1, 2) else "unshaded")
    assert ns.ladder(s).rungs[4].answer == ns.counterfactual(ns.edit(s))


@settings(max_examples=30)
@given(SEEDS, LEVELS)
def test_minimal_pair_toggles_the_fewest_regions(seed, level):
    s = accepted(seed, level)
    twin = ns.minimal_pair(s)
    changed = [i for i, (a, b) in enumerate(zip(s.shaded, twin.shaded)) if a != b]
    assert replace(twin, shaded=s.shaded) == s                     # only the shading moves
    assert ns.larger_part(twin).value != ns.larger_part(s).value
    assert not ns.ladder(twin).failing_margins() and len(set(twin.shaded)) == 2
    for q_s, q_t in zip(ns.ladder(s).rungs[:3], ns.ladder(twin).rungs[:3]):
        assert q_s.answer == q_t.answer                              # Q1-Q3 unchanged
    for size in range(1, len(changed)):                              # no smaller toggle would do
        for c in combinations(range(len(s.shaded)), size):
            other = replace(s, shaded=tuple(1 - x if i in c else x for i, x in enumerate(s.shaded)))
            assert (len(set(other.shaded)) < 2 or ns.larger_part(other).value == ns.larger_part(s).value
                    or ns.ladder(other).failing_margins())


@given(SEEDS, LEVELS)
def test_rephrase_is_the_other_option(seed, level):
    s = accepted(seed, level)
    r = ns.rephrase_q4(s)
    assert {r.answer.value, ns.larger_part(s).value} == {"shaded", "unshaded"}
    assert r.text != ns.ladder(s).rungs[3].text and r.margin.ok


def test_level_three_questions_state_the_common_ratio_and_tolerance_is_wider():
    s1, s3 = accepted(5, 1), accepted(5, 3)
    assert "tick marks" in ns.ladder(s1).rungs[3].text and "tick" not in ns.ladder(s3).rungs[3].text
    assert ns.ladder(s3).rungs[2].answer.tol == 0.04 and ns.ladder(s1).rungs[2].answer.tol == 0.02


def test_crowded_centre_is_rejected_and_ticks_keep_clear_of_other_outlines():
    # A chain of sixths: S_{i+2}'s corners come close to S_i's sides (8.1 px at a 560 px S1, 4 px at 280 px).
    chain = replace(hand((6,) * 6, (1,) * 6, (0, 1, 0, 1, 0, 1, 1), level=3), side_px=280.0)
    assert ns.outline_clearance_px(chain) < ns.OUTLINE_CLEAR_PX and not ns.legible(chain)
    assert not ns.ladder(chain).rungs[0].margin.ok
    # The reader's crowded centre (1/4, 1/2, 1/3, 2/5, 1/6, 2/5 on 580 px): S5's and S6's ticks ran into each
    # other's outlines; now the ticks would have to shrink below TICK_MIN_PX, so the scene is rejected.
    crowded = replace(hand((4, 2, 3, 5, 6, 5), (1, 1, 1, 2, 1, 2), (0, 1, 0, 1, 0, 1, 1), level=2), side_px=580.0)
    assert ns.tick_legibility_px(crowded) < ns.TICK_CLEAR_PX and not ns.legible(crowded)
    # Every drawn tick point stays TICK_CLEAR_PX from every other square's outline (the tick at the next square's
    # corner touches that corner only), and each tick keeps at least TICK_MIN_PX of length.
    from shapely.geometry import LineString, Polygon
    s = hand((4, 3, 2), (1, 1, 1), (1, 0, 1, 0), level=1)
    sq = ns.layout(s)
    assert ns.legible(s)
    for a, b, i in ns.drawn_ticks(s):
        seg = LineString([a, b])
        assert seg.length >= ns.TICK_MIN_PX - 1e-9
        for j, poly in enumerate(sq):
            if j != i and not (j == i + 1 and any(seg.distance(LineString([p, p])) < 1e-6 for p in sq[j])):
                assert Polygon(poly).exterior.distance(seg) >= ns.TICK_CLEAR_PX - 0.01


def test_level_three_wording_says_the_fraction_may_change_between_squares():
    text = ns.ladder(accepted(7, 3)).rungs[3].text
    assert "can differ from one square to the next" in text and "same fraction" not in text


def render(s: ns.Scene) -> np.ndarray:
    from grip.renderers.canvas import Canvas
    c = Canvas(768)
    ns.draw(s, c)
    return c.array()


@pytest.mark.parametrize("seed", [3, 11])
def test_minimal_pair_changes_pixels_only_inside_the_toggled_regions(seed):
    """The sheet's QA for this domain: no outline moves, every changed pixel lies in a toggled region (+2 px)."""
    from shapely.geometry import Point, Polygon
    s = accepted(seed, 1 + seed % 3)
    twin = ns.minimal_pair(s)
    diff = np.argwhere((render(s) != render(twin)).any(axis=2))
    assert len(diff)
    sq = ns.layout(s)
    regions = [Polygon(sq[i]).difference(Polygon(sq[i + 1])) if i + 1 < len(sq) else Polygon(sq[i])
               for i, (a, b) in enumerate(zip(s.shaded, twin.shaded)) if a != b]
    zone = regions[0].union(*regions[1:]).buffer(2.5) if len(regions) > 1 else regions[0].buffer(2.5)
    assert all(zone.contains(Point(x + 0.5, y + 0.5)) for y, x in diff[::7])


def test_s2_side_text_names_no_length():
    # The audit's blind baseline: with "S1's side is L cm" in the text, L and the few tick fractions (t_1 = 1/2 for
    # a third of the items) let the text alone fix Q3's answer for 42% of items. The side is printed on the figure.
    texts = {ns.ladder(replace(accepted(3, 1), side_cm=c)).rungs[2].text for c in ns.SIDES_CM}
    assert len(texts) == 1
    assert not any(f"{c} cm" in next(iter(texts)) for c in ns.SIDES_CM)
    assert "printed below S1" in next(iter(texts))


# --- the tick and outline measures of grip.geometry against plain references --------------------------------------

def _crowded_figures(count: int, seed: int = 0):
    """Nested squares and hexagons of random fractions and sizes (small ones crowd their ticks and outlines)."""
    from grip.geometry import regular_polygon
    rng = np.random.default_rng(seed)
    for _ in range(count):
        m, levels = int(rng.choice([4, 6])), int(rng.integers(2, 7))
        divisions = [int(rng.integers(1, 7)) for _ in range(levels)]
        ts = [Fraction(int(rng.integers(1, n)) if n > 1 else 0, n) for n in divisions]
        polys = nest(regular_polygon((384.0, 392.0), float(rng.uniform(60, 330)), m, float(rng.uniform(0, 90))),
                     [float(t) for t in ts])
        ticked = sorted(rng.choice(levels, int(rng.integers(0, levels + 1)), replace=False).tolist())
        yield polys, divisions, ticked, ts


def _plain_fitted_ticks(polys, divisions, ticked, contacts, length, clear, step=0.5):
    """Every tick of `tick_marks`, each half grown step by step while it stays `clear` from every side of every
    polygon but its own and the one it touches by construction."""
    from grip.geometry import _point_segment_each, tick_marks
    hs, out = np.arange(0.0, length / 2 + 1e-9, step), []
    for i in ticked:
        for a, b, f in tick_marks(polys[i], divisions[i], length):
            skip = i + 1 if abs(f - float(contacts[i])) < 1e-9 else -1
            sides = np.array([(*p[j], *p[(j + 1) % len(p)]) for k, p in enumerate(polys) if k not in (i, skip)
                              for j in range(len(p))], float).reshape(-1, 4)
            base = np.array([(a[0] + b[0]) / 2, (a[1] + b[1]) / 2])
            normal = np.array([(b[0] - a[0]) / length, (b[1] - a[1]) / length])
            halves = []
            for sign in (1.0, -1.0):
                pts = base + sign * hs[:, None] * normal
                d = _point_segment_each(pts[:, None, :], sides[None, :, :2], sides[None, :, 2:]).min(axis=1,
                                                                                                     initial=np.inf)
                bad = np.flatnonzero(d < clear)
                halves.append(hs[-1] if not len(bad) else hs[bad[0] - 1] if bad[0] else -1.0)
            hi, lo = (0.0, 0.0) if min(halves) < 0 else halves
            out.append((tuple((base - lo * normal).tolist()), tuple((base + hi * normal).tolist()), i))
    return out


def test_fitted_ticks_match_a_plain_fit():
    from grip.geometry import fitted_ticks
    shortened = 0
    for polys, divisions, ticked, ts in _crowded_figures(40):
        want = _plain_fitted_ticks(polys, divisions, ticked, ts, 10.0, 3.0)
        got = fitted_ticks(polys, divisions, ticked, ts, 10.0, 3.0)
        assert got == want
        shortened += sum(math.dist(a, b) < 10.0 - 1e-9 for a, b, _ in got)
    assert shortened > 20


def test_tick_stats_and_outline_clearance_match_all_pairs():
    from grip.geometry import fitted_ticks, outline_clearance, outline_gap, segment_distances, tick_stats
    for polys, divisions, ticked, ts in _crowded_figures(40, seed=1):
        ticks = fitted_ticks(polys, divisions, ticked, ts, 10.0, 3.0)
        if ticks:
            a0, a1 = np.array([t[0] for t in ticks]), np.array([t[1] for t in ticks])
            owner = np.array([t[2] for t in ticks])
            d = segment_distances(a0, a1, a0, a1)[owner[:, None] != owner[None, :]]
            want = (float(np.hypot(*(a1 - a0).T).min()), float(d.min()) if len(d) else math.inf)
        else:
            want = (math.inf, math.inf)
        assert tick_stats(ticks) == want
        gaps = [outline_gap(polys[i], polys[j]) for i in range(len(polys)) for j in range(i + 2, len(polys))]
        assert outline_clearance(polys) == min(gaps, default=math.inf)


def test_integer_area_shares_are_the_fractions():
    rng = np.random.default_rng(2)
    for _ in range(200):
        divisions = tuple(int(n) for n in rng.integers(2, 7, int(rng.integers(2, 7))))
        ticks = tuple(int(rng.integers(1, n)) for n in divisions)
        shares = ns.area_shares([Fraction(k, n) for k, n in zip(ticks, divisions)], None)
        assert ns._share_floats(divisions, ticks).tolist() == [float(x) for x in shares]
        shaded = tuple(int(x) for x in rng.integers(0, 2, len(divisions) + 1))
        s = hand(divisions, ticks, shaded)
        assert ns.shaded_fraction(s) == sum((a * w for a, w in zip(shaded, shares)), Fraction(0))
