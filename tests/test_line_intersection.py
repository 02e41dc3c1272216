"""Domain-specific tests for line_intersection: exact crossing tests checked against shapely as an independent
route, Q5 against a far-stretched shapely line, mirror and endpoint-swap relations, the minimal pair and the
reversed rephrasing, and scenes worked out on paper."""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from shapely.geometry import LineString

from grip.domain import Reject
from grip.domains.plane import line_intersection as li
from grip.draws import Draws

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])
FEW = settings(max_examples=12)


def accepted(seed: int, level: int) -> li.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(100):
        try:
            s = li.sample(rng, level)
        except Reject:
            continue
        if not li.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


def shapely_lines(s: li.Scene) -> list[LineString]:
    return [LineString([seg[:2], seg[2:]]) for seg in s.segments]


def answers(s: li.Scene) -> list:
    return [q.answer.key() for q in li.ladder(s).questions]


# --- worked on paper ---------------------------------------------------------------------------------------------

def paper_scene() -> li.Scene:
    # A from its dot (100, 100) to (500, 140): y = 100 + (x - 100) / 10.
    # B vertical x = 200 from y 50 to 300: meets A at (200, 110), u = 100/400 = 0.25 -> crosses.
    # C from (400, 50) to (300, 300): x = 400 - 100t, y = 50 + 250t; on A when 50 + 250t = 130 - 10t, t = 4/13,
    #   at (369.2, 126.9), u = 269.2/400 = 0.67 -> crosses. B and C: C keeps x >= 300 > 200 -> no.
    # D horizontal y = 400, x 100..500: above it (y < 400) lie A, B, C entirely; E (x = 600, y 200..600) reaches
    #   below. So D crosses nothing, but its infinite line splits E only: Q5 = 1.
    # E (x = 600) lies right of A (x <= 500), B, C and D: it crosses nothing.
    return li.Scene(2, ((100, 100, 500, 140), (200, 50, 200, 300), (400, 50, 300, 300), (100, 400, 500, 400),
                        (600, 200, 600, 600)), (1, 0, 0, 0, 0))


def test_paper_scene_answers():
    s = paper_scene()
    assert li.crossing_count(s).value == 2                      # A-B and A-C
    assert li.b_crosses_c(s).value == "no"
    assert li.most_crossed(s).value == "A"                       # A: 2, B: 1, C: 1, D: 0, E: 0
    assert li.crossed_along_a(s).value == ("B", "C")             # u = 0.25 before u = 0.67
    assert li.crossed_along_a(s, reverse=True).value == ("C", "B")
    assert li.degrees(s)[3] == 0
    assert li.counterfactual(li.edit(s)).value == 1             # the stretched D meets E only
    assert li.straddling_line_d(s) == 1
    assert li.highest_pair(s).fields["pair"].value == ("A", "B")  # y = 110 above y = 126.9
    assert li.highest_gap_px(s) == pytest.approx(126.92 - 110, abs=0.01)
    assert li.top_gap(s) == 1


def test_touching_and_parallel_segments_do_not_cross():
    # A T-junction: b starts exactly on a (v = 0), so it does not cross; overlapping collinear and parallel
    # segments have no single meeting point.
    a = (0, 0, 10, 0)
    assert li.meet(a, (5, 0, 5, 10)) == (0.5, 0) and not li.cross(a, (5, 0, 5, 10))
    assert li.cross(a, (5, -10, 5, 10)) and li.meet(a, (5, -10, 5, 10)) == (0.5, 0.5)
    assert li.meet(a, (2, 0, 20, 0)) is None and not li.cross(a, (2, 0, 20, 0))
    assert li.meet(a, (0, 3, 10, 3)) is None
    # X: the diagonals of a 10 x 10 square meet at their midpoints.
    assert li.meet((0, 0, 10, 10), (0, 10, 10, 0)) == (0.5, 0.5)


def test_paper_scene_crossing_angles():
    # A's direction atan2(40, 400) = 5.71 deg; B is vertical (90 deg): 84.29 deg apart. C's direction
    # atan2(250, -100) = 111.80 deg: 106.09 apart, acute angle 73.91. The smallest crossing angle is C's.
    assert li.rules(paper_scene())["angle"] == pytest.approx(73.91, abs=0.01)


# --- properties of sampled scenes --------------------------------------------------------------------------------

@FEW
@given(SEEDS, LEVELS)
def test_crossings_agree_with_shapely(seed, level):
    s = accepted(seed, level)
    lines = shapely_lines(s)
    k = len(lines)
    want = {(i, j) for i in range(k) for j in range(i + 1, k) if lines[i].intersects(lines[j])}
    assert {(i, j) for i, j, _, _ in li.crossings(s)} == want
    assert li.crossing_count(s).value == len(want)
    assert (li.b_crosses_c(s).value == "yes") == ((1, 2) in want)
    deg = [sum(x in p for p in want) for x in range(k)]
    assert sorted(deg)[-1] > sorted(deg)[-2]
    assert li.most_crossed(s).value == li.LETTERS[int(np.argmax(deg))]
    # Q4: the crossing points met along A, ordered by distance from the dot.
    dot = lines[0].coords[0]
    hits = sorted((lines[0].intersection(lines[j]).distance(LineString([dot, dot])), li.LETTERS[j])
                  for j in range(1, k) if (0, j) in want)
    assert li.crossed_along_a(s).value == tuple(name for _, name in hits)
    assert 2 <= len(hits) <= 4


@FEW
@given(SEEDS, LEVELS)
def test_q5_is_the_stretched_d_and_matches_a_long_shapely_line(seed, level):
    s = accepted(seed, level)
    q5 = li.ladder(s).rungs[4]
    x0, y0, x1, y1 = s.segments[3]
    far = LineString([(x0 - 50 * (x1 - x0), y0 - 50 * (y1 - y0)), (x1 + 50 * (x1 - x0), y1 + 50 * (y1 - y0))])
    others = [g for k, g in enumerate(shapely_lines(s)) if k != 3]
    assert q5.answer.value == sum(far.intersects(g) for g in others) == li.straddling_line_d(s)
    assert 1 <= q5.answer.value <= 4
    assert li.edit(s).segments[3] != s.segments[3] and li.edit(s).segments[:3] == s.segments[:3]
    assert li.line_d_gap_px(s) >= li.LINE_D_PX


@FEW
@given(SEEDS, LEVELS)
def test_mirror_and_endpoint_swaps(seed, level):
    s = accepted(seed, level)
    mirrored = replace(s, segments=tuple((768 - a, b, 768 - c, d) for a, b, c, d in s.segments))
    assert answers(mirrored) == answers(s)
    # Swapping the ends of a segment other than A changes no answer; swapping A's reverses Q4.
    b = s.segments[1]
    assert answers(replace(s, segments=(s.segments[0], b[2:] + b[:2]) + s.segments[2:])) == answers(s)
    a = s.segments[0]
    flipped = replace(s, segments=(a[2:] + a[:2],) + s.segments[1:])
    assert li.crossed_along_a(flipped).value == li.rephrase_q4(s).answer.value
    assert li.rephrase_q4(s).answer.value == tuple(reversed(li.ladder(s).rungs[3].answer.value))


@FEW
@given(SEEDS, LEVELS)
def test_sampled_scenes_pass_every_rule(seed, level):
    s = accepted(seed, level)
    assert li.broken_rule(s) is None and li.labels_fit(s)
    assert len(s.segments) in {1: (5,), 2: (5, 6), 3: (6, 7, 8)}[level]
    assert all(li.length(g) >= li.MIN_LEN_PX for g in s.segments)
    assert all(li.LO <= v <= li.HI and isinstance(v, int) for g in s.segments for v in g)


@FEW
@given(SEEDS, LEVELS)
def test_minimal_pair_moves_one_endpoint_across_a(seed, level):
    s = accepted(seed, level)
    try:
        twin = li.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    moved = [k for k in range(len(s.segments)) if twin.segments[k] != s.segments[k]]
    assert len(moved) == 1 and moved[0] != 0
    old, new = s.segments[moved[0]], twin.segments[moved[0]]
    assert (old[:2] == new[:2]) != (old[2:] == new[2:])          # exactly one end moved
    assert abs(li.crossing_count(twin).value - li.crossing_count(s).value) == 1
    q4, q4t = set(li.crossed_along_a(s).value), set(li.crossed_along_a(twin).value)
    assert len(q4 ^ q4t) == 1 and 2 <= len(q4t) <= 4
    assert not li.ladder(twin).failing_margins() and li.broken_rule(twin) is None


# --- legibility margins a reader sees without zooming ------------------------------------------------------------

def two_segments(b, level=2, a=(100, 100, 500, 100)) -> li.Scene:
    return li.Scene(level, (a, b), (0, 0))


def test_a_crossing_19_px_before_an_end_is_rejected():
    # B (x = 300) starts 19 px above A (y = 100): it crosses A 19 px from its end, and that end is 19 px from A.
    s = two_segments((300, 81, 300, 400))
    assert li.cross(*s.segments) and li.rules(s)["near_miss"] == pytest.approx(19)
    assert li.rules(s)["end_along"] == pytest.approx(19) and li.broken_rule(s) == "end_along"
    assert li.broken_rule(two_segments((300, 72, 300, 400))) is None    # 28 px: plain at a glance


def test_an_end_12_px_short_of_another_segment_is_rejected():
    # Parallel to A 14 px below it: no meeting point, only the endpoint clearance applies.
    assert li.broken_rule(two_segments((100, 114, 500, 114))) == "near_miss"
    assert li.broken_rule(two_segments((100, 118, 500, 118))) is None
    # B stops 12 px short of A, pointing at it: both the clearance and the distance along B to A's line fail.
    s = two_segments((300, 112, 300, 400))
    assert not li.cross(*s.segments) and li.broken_rule(s) == "near_miss" and li.rules(s)["end_along"] == 12


def test_three_crossings_12_px_apart_are_rejected_at_level_3():
    # A horizontal; B and C cross A at x = 340 and x = 352 and each other at (346, 312): a 12 px triangle.
    segs = ((100, 300, 600, 300), (240, 100, 440, 500), (452, 100, 252, 500))
    s = li.Scene(3, segs, (0, 0, 0))
    assert len(li.crossings(s)) == 3 and li.rules(s)["spacing"] == pytest.approx(12)
    assert li.rules(s)["angle"] > li.ANGLE_DEG[3] and li.broken_rule(s) == "spacing"
    assert li.SPACING_PX[3] >= 16


@pytest.mark.parametrize("past", [False, True])
def test_minimal_pair_move_keeps_the_end_clear_of_a_at_a_shallow_angle(past):
    # X meets A (y = 300) at 25 deg, at v = 1/2 along X: the moved end must end 21 px from A, not just 31 px
    # along X (31 sin 25 deg = 13 px would break the 18 px clearance).
    a, x = (100, 300, 600, 300), (200, 207, 600, 393)
    s = li.Scene(2, (a, x), (0, 0))
    v = li.meet(a, x)[1]
    _, twin = li._moved(s, 1, 1, v, past=past)
    end = twin.segments[1][2:]
    assert abs(end[1] - 300) >= li.NEAR_MISS_PX + 2 and li.cross(a, twin.segments[1]) == past
    assert li.rules(twin)["near_miss"] >= li.NEAR_MISS_PX and li.rules(twin)["end_along"] >= li.END_ALONG_PX


def test_vectorised_segment_geometry_matches_the_exact_scalar_one():
    from grip.geometry import line_offsets, segment_meet, segment_meets
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 768, (20, 4)), rng.integers(0, 768, (15, 4))
    b[0] = a[0]                                             # parallel (identical) lines
    nu, nv, den = segment_meets(a, b)
    for i in range(len(a)):
        for j in range(len(b)):
            p = segment_meet(tuple(int(v) for v in a[i]), tuple(int(v) for v in b[j]))
            assert (den[i, j] == 0) if p is None else (nu[i, j], nv[i, j], den[i, j]) == p
    pts = rng.integers(0, 768, (10, 2))
    pts[0] = a[3, :2]                                       # on the line
    exact = np.sign([[(s[2] - s[0]) * (p[1] - s[1]) - (s[3] - s[1]) * (p[0] - s[0]) for p in pts] for s in a])
    assert (np.sign(line_offsets(a, pts)) == exact).all() and line_offsets(a, pts)[3, 0] == 0


# --- the fast paths give the same values as the plain ones ---------------------------------------------------------

def _compatible_plain(c, segs, pts, level):
    """Which rows pass, written out from `_pairs` over every row, as the sampler first did it."""
    n, m = len(c), len(segs)
    miss, along, ang, hit, cpts = li._pairs(c, np.asarray(segs, float))
    ok = ~((miss < li.NEAR_MISS_PX) | (along < li.END_ALONG_PX) | (ang < li.ANGLE_DEG[level])).any(1)
    new = np.where(hit[..., None], cpts, np.nan)
    every = np.concatenate([new, np.broadcast_to(np.asarray(pts, float).reshape(-1, 2), (n, len(pts), 2))], 1)
    d = np.hypot(*np.moveaxis(new[:, :, None] - every[:, None], -1, 0))
    d[:, np.arange(m), np.arange(m)] = np.inf
    return ok & ~(d < li.SPACING_PX[level]).any((1, 2)), cpts, hit


def _geometry(a: np.ndarray) -> list[tuple]:
    return [li._geometry_row(*r, n, d) for r, n, d in zip(a.tolist(), *li._lengths_directions(a))]


def _pair_rule_case(rng, n: int):
    c = li._candidates(rng, n, float(rng.uniform(0, 180)), 90.0)
    segs = [tuple(int(v) for v in r) for r in li._candidates(rng, 8, float(rng.uniform(0, 180)), 90.0)[:3]]
    pts = [tuple(p) for p in rng.uniform(60, 708, (int(rng.integers(0, 4)), 2))]
    return c, segs, pts


@pytest.mark.parametrize("level", [1, 2, 3])
def test_rule_points_match_the_pair_rules_row_by_row(level):
    rng = np.random.default_rng(level)
    kept = 0
    for _ in range(30):
        c, segs, pts = _pair_rule_case(rng, 60)
        others = _geometry(np.asarray(segs, float))
        want, wpts, hit = _compatible_plain(c, segs, pts, level)
        for r in range(len(c)):
            got = li._first_row(c[r:r + 1], others, pts, level, [], [], None)
            assert (got is not None) == want[r]
            if got is not None:
                assert np.array_equal(np.asarray(got[2], float).reshape(-1, 2), wpts[r][hit[r]])
                kept += 1
    assert kept > 0                      # the rule lets some candidates through, so both branches ran


def test_first_row_is_the_first_the_crossing_masks_and_the_pair_rules_pass():
    # As the sampler first did it: every row against every segment at once, then the first row that passes.
    from grip.geometry import segment_meets
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(40):
        level = int(rng.integers(1, 4))
        c, segs, pts = _pair_rule_case(rng, 80)
        must = [j for j in range(3) if rng.random() < 0.3]
        never = [j for j in range(3) if j not in must and rng.random() < 0.4]
        below = None if rng.random() < 0.3 else int(rng.integers(1, 4))
        cmask = li._hit(*segment_meets(c, np.asarray(segs, float)))
        ok = cmask[:, must].all(1) & ~cmask[:, never].any(1) & (True if below is None else cmask.sum(1) < below)
        fine, cpts, hit = _compatible_plain(c, segs, pts, level)
        want = np.flatnonzero(ok & fine)
        got = li._first_row(c, _geometry(np.asarray(segs, float)), pts, level, must, never, below)
        assert (got is None) == (len(want) == 0)
        if got is not None:
            r, row, new, g = got
            assert r == want[0] and row == cmask[r].tolist() and g == _geometry(c[r:r + 1])[0]
            assert np.array_equal(np.asarray(new, float).reshape(-1, 2), cpts[r][hit[r]])
            found += 1
    assert 0 < found < 40                # some batches have a fit and some none


def test_split_is_line_offsets_bit_for_bit():
    from grip.geometry import line_offsets
    rng = np.random.default_rng(8)
    for _ in range(20):
        segs = [tuple(int(v) for v in r) for r in rng.integers(60, 709, (int(rng.integers(1, 8)), 4))]
        s = np.asarray(segs, float)
        p, a = rng.uniform(60, 708, (50, 2)), rng.uniform(0, np.pi, 50)
        for lines in (rng.integers(60, 709, (50, 4)).astype(float),
                      np.column_stack([p, p[:, 0] + np.cos(a), p[:, 1] + np.sin(a)])):   # as `_d_candidates`
            o0, o1 = line_offsets(lines, s[:, :2]), line_offsets(lines, s[:, 2:])
            clear, n = li._split(lines, segs)
            assert np.array_equal(clear, np.minimum(abs(o0), abs(o1)).min(1, initial=np.inf))
            assert np.array_equal(n, (o0 * o1 < 0).sum(1))
        for d in segs:
            assert np.array_equal(li._offsets(d, lines[:, 0], lines[:, 1]), line_offsets([d], lines[:, :2])[0])


def test_candidates_are_the_plain_formulas_draw_for_draw():
    for seed in range(20):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        base, spread = 9.0 * seed, 60.0 + 30 * (seed % 2)
        L = r2.uniform(li.MIN_LEN_PX + 2, 560.0, 80)
        a = np.radians(base + r2.uniform(-spread, spread, 80))
        hxs, hys = L / 2 * np.cos(a), L / 2 * np.sin(a)
        cx = li.LO + np.abs(hxs) + r2.random(80) * (li.HI - li.LO - 2 * np.abs(hxs))
        cy = li.LO + np.abs(hys) + r2.random(80) * (li.HI - li.LO - 2 * np.abs(hys))
        c = li._candidates(r1, 80, base, spread)
        assert np.array_equal(c, np.round(np.stack([cx - hxs, cy - hys, cx + hxs, cy + hys], 1)))
        rough = r2.uniform(0, 800, (60, 4))
        ok = (np.hypot(rough[:, 2] - rough[:, 0], rough[:, 3] - rough[:, 1]) >= li.MIN_LEN_PX) & \
            (rough >= li.LO).all(1) & (rough <= li.HI).all(1)
        assert np.array_equal(li._long_enough(*rough.T), rough[ok])


def test_hypot_below_is_np_hypot_at_the_threshold():
    rng = np.random.default_rng(5)
    for lim in (16.0, 18.0):
        d = rng.uniform(-lim * 1.01, lim * 1.01, (3000, 2))
        d[:1000, 1] = np.sqrt(np.maximum(lim * lim - d[:1000, 0] ** 2, 0)) * (1 + rng.uniform(-1e-15, 1e-15, 1000))
        assert [li._hypot_below(x, y, lim) for x, y in d.tolist()] == (np.hypot(d[:, 0], d[:, 1]) < lim).tolist()


def test_pair_distances_are_scipys_pdist_bit_for_bit():
    from scipy.spatial.distance import pdist
    rng = np.random.default_rng(3)
    for n in (2, 3, 7, 20):
        p = rng.uniform(0, 768, (n, 2))
        assert np.array_equal(li._pair_distances(p), pdist(p))


@FEW
@given(SEEDS, LEVELS)
def test_label_table_agrees_with_label_ok(seed, level):
    s = accepted(seed, level)
    rng = np.random.default_rng(seed)
    s = replace(s, segments=tuple(tuple(int(v) + int(d) for v, d in zip(seg, rng.integers(-40, 41, 4)))
                                  for seg in s.segments))   # jostled, so that some letters no longer fit
    ok, gaps = li._label_table(s)
    lines = li._lines(s)
    for k, seg in enumerate(s.segments):
        for e in (0, 1):
            assert ok[k, e] == li.label_ok(s, k, li._label_at(seg, e), [], lines)
            for j in range(k):
                placed = [li._box(li._label_at(s.segments[j], 1 - e))]
                assert li._fits_at(ok, gaps, k, e, [2 * j + 1 - e]) == \
                    li.label_ok(s, k, li._label_at(seg, e), placed, lines)


@FEW
@given(SEEDS, LEVELS)
def test_remembered_label_fit_is_the_one_worked_out_again(seed, level):
    s = accepted(seed, level)
    for ends in ((0,) * len(s.segments), (1,) * len(s.segments), s.label_end):
        fixed = li._fix_labels(replace(s, label_end=ends))
        remembered = li.labels_fit(fixed)
        li._FITS.clear()
        placed, lines, fits = [], li._lines(fixed), True
        for k, c in enumerate(li.label_boxes(fixed)):
            if not li.label_ok(fixed, k, c, placed, lines):
                fits = False
                break
            placed.append(li._box(c))
        assert remembered == fits == li.labels_fit(fixed)


def _plan_numpy(rng, k, t, hub, d_at, bc):
    """`_plan` as first written, on numpy arrays."""
    n_a, h = t["n_a"], t["hub_deg"]
    pool_a = np.array([x for x in range(1, k) if x != d_at] if t["moved"] and t["q5"] == 1 else range(1, k))
    keys = (0, 2) if t["t3"] in (1, 2) else (0,)
    pool = np.array([x for x in range(k) if x != hub and x not in keys], int)
    others = np.arange(k) != hub
    d_room = t["q5"] - bool(t["moved"]) if d_at != hub else k
    if n_a > len(pool_a):
        return None
    for _ in range(20):
        want = np.full((k, k), -1)
        want[0, 1:] = 0
        want[0, rng.choice(pool_a, n_a, replace=False)] = 1
        if hub != 0:
            fixed = [int(want[0, hub]), int(t["q2"])][:len(keys)]
            n_rest = h - sum(fixed)
            if not 0 <= n_rest <= len(pool):
                continue
            want[hub, :] = 0
            want[hub, rng.choice(pool, n_rest, replace=False)] = 1
            want[hub, list(keys)] = fixed
        want = np.where(want >= 0, want, want.T)
        want[np.arange(k), np.arange(k)] = -1
        low = (want == 1).sum(1)
        if t["q2"] and want[bc] < 0:
            low[list(bc)] += 1
        if (low[others] < h).all() and low[d_at] <= d_room:
            return want
    return None


def test_plan_is_the_numpy_plan_draw_for_draw():
    for seed in range(60):
        g = np.random.default_rng(seed)
        k = int(g.integers(5, 9))
        t = li.targets(g, k)
        hub = 0 if t["t3"] == 0 else 1
        bc = {1: (1, 2), 2: (2, 1)}.get(t["t3"], (2, 3) if hub == 1 else (1, 2))
        d_at = 1 if t["t3"] == 3 else k - 1
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        got, want = li._plan(Draws(r1), k, t, hub, d_at, bc), _plan_numpy(r2, k, t, hub, d_at, bc)
        assert (got is None and want is None) or got == want.tolist()
        assert r1.random() == r2.random()              # the same draws


def test_candidates_all_fit_once_rounded():
    rng = np.random.default_rng(9)
    for _ in range(100):
        c = li._candidates(rng, 80, float(rng.uniform(0, 180)), float(rng.choice([60.0, 90.0])))
        assert len(c) == 80 and len(li._long_enough(*c.T)) == 80


def test_label_table_settles_what_geos_settles():
    from shapely import box, distance
    rng = np.random.default_rng(11)
    s = accepted(7, 3)
    for _ in range(25):
        j = replace(s, segments=tuple(tuple(int(v) + int(d) for v, d in zip(seg, rng.integers(-30, 31, 4)))
                                      for seg in s.segments))
        _, close = li._label_table(j)
        xy = np.array([li._label_at(seg, e) for seg in j.segments for e in (0, 1)])
        b = box(*(xy - li.LABEL_HALF_PX).T, *(xy + li.LABEL_HALF_PX).T)
        assert np.array_equal(close, distance(b[:, None], b[None]) < li.LABEL_GAP_PX)


def test_answer_shortcuts_are_the_plain_routes():
    """Q2's margin read off the scene's pair table, Q5's count from D's own pairs, D's line clearance in plain
    floats and the highest crossing from the cached heights: the same values as the routes they replace."""
    g = np.random.default_rng(7)
    for _ in range(200):
        segs = tuple(tuple(int(v) for v in r) for r in g.integers(60, 709, (int(g.integers(5, 9)), 4)))
        s = li.Scene(1, segs, (0,) * len(segs))
        bc = np.asarray(s.segments[1:3], float)
        miss, along = li._pairs(bc[:1], bc[1:])[:2]
        table = li._pair_table(s)
        assert table[0][1, 2] == miss[0, 0] and table[1][1, 2] == along[0, 0]
        assert li.crossed_by_d(s).value == li.degrees(s)[3]
        assert li.crossed_by_d(li.edit(s)).value == li.degrees(li.edit(s))[3]
        assert li.line_d_gap_px(s) == float(li._split([s.segments[3]], li._others_of_d(s))[0][0])
        if li.crossings(s):
            i, j, _, _ = min(li.crossings(s), key=lambda c: li.point_at(s.segments[c[0]], c[2])[1])
            assert li.highest_pair(s).value[0][1].value == (li.letters(s)[i], li.letters(s)[j])
        deg = li.degrees(s)
        assert li.most_crossed(s).value == li.letters(s)[int(np.argmax(deg))]
