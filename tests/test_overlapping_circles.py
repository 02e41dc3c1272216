"""Domain-specific tests for overlapping_circles: the guard against the upstream defect of a gold answer outside
its answer space (a leaked internal token), the Euler region count against a flood fill of the drawn outlines, the
lens area against counting grid points, the minimal pair, relabelling, and examples worked on paper."""
import math
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from domain_scenes import accepted_scene
from grip.answers import Choice, Ordered, Record
from grip.domain import Reject
from grip.domains.transformational import overlapping_circles as oc

N_SCENES = 24


def _accepted(seed: int, level: int) -> oc.Scene:
    return accepted_scene(oc, seed, level)


@lru_cache(maxsize=None)
def scenes() -> tuple[oc.Scene, ...]:
    return tuple(_accepted(300 + i, 1 + i % 3) for i in range(N_SCENES))


INDEX = st.integers(0, N_SCENES - 1)


# --- guard: every gold answer lies in its declared space ----------------------------------------------------------

def gold_problems(lad) -> list[str]:
    """Upstream once stored an internal token as a gold answer. A gold answer must lie in its declared space: a
    choice among its options, a list drawn from its options, every record field likewise."""
    out = []
    for q in lad.questions:
        answers = [a for _, a in q.answer.value] if isinstance(q.answer, Record) else [q.answer]
        for a in answers:
            if not a.in_space():
                out.append(f"{q.id}: {a.reference_text()!r} outside its declared space")
            elif isinstance(a, Choice) and a.value not in a.options:
                out.append(f"{q.id}: {a.value!r} is not an option")
            elif isinstance(a, Ordered) and a.options is not None and not set(a.value) <= set(a.options):
                out.append(f"{q.id}: {a.value!r} not drawn from the options")
    return out


def test_every_gold_answer_lies_in_its_space():
    for s in scenes():
        lad = oc.ladder(s)
        assert gold_problems(lad) == []
        opts, _ = oc.pair_options(s)
        assert lad.rungs[3].answer.value in opts and lad.rungs[3].answer.options == opts
        assert set(lad.rungs[1].answer.value) <= set(s.letters)


def test_guard_catches_a_leaked_internal_token():
    # A ladder whose Q4 gold is an internal token (upstream's `target_density`) must fail the guard.
    lad = oc.ladder(scenes()[0])
    q4 = lad.rungs[3]
    leaked = replace(lad, rungs=lad.rungs[:3] + (replace(q4, answer=replace(q4.answer, value="target_density")),)
                     + lad.rungs[4:])
    assert any("target_density" in p for p in gold_problems(leaked))
    # A scene with no overlapping pair has no answer among the pair tokens: it is rejected, never answered.
    apart = oc.Scene(1, ("A", "B", "C"), ((150.0, 200.0, 80.0), (400.0, 200.0, 80.0), (400.0, 500.0, 80.0)),
                     ((600.0, 600.0), (650.0, 650.0), (700.0, 100.0), (60.0, 700.0)))
    with pytest.raises(Reject, match="no_overlap"):
        oc.ladder(apart)


# --- independent routes -------------------------------------------------------------------------------------------

def flood_regions(scene, scale: float = 0.5) -> int:
    """Bounded regions of a raster of the outlines (walls 2 raster px wide); free specks under 4 cells dropped."""
    n = int(768 * scale)
    yy, xx = np.mgrid[0:n, 0:n] / scale
    wall = np.zeros((n, n), bool)
    for x, y, r in scene.circles:
        wall |= np.abs(np.hypot(xx - x, yy - y) - r) < 1.0 / scale
    lab, k = ndimage.label(~wall)
    border = set(np.unique(np.r_[lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    sizes = np.bincount(lab.ravel())
    return sum(1 for i in range(1, k + 1) if i not in border and sizes[i] >= 4)


@settings(max_examples=8, deadline=None)
@given(INDEX)
def test_region_count_matches_a_flood_fill(i):
    s = scenes()[i]
    lad = oc.ladder(s)
    assert lad.rungs[2].answer.value == flood_regions(s)
    assert lad.rungs[4].answer.value == flood_regions(oc.edit(s)) < lad.rungs[2].answer.value


@settings(max_examples=15, deadline=None)
@given(st.floats(40, 200), st.floats(40, 200), st.floats(0, 420))
def test_lens_area_matches_counting_grid_points(r1, r2, d):
    xx, yy = np.meshgrid(np.arange(-210.0, 631.0) + 0.5, np.arange(-210.0, 211.0) + 0.5)   # unit cell centres
    both = (np.hypot(xx, yy) < r1) & (np.hypot(xx - d, yy) < r2)
    assert oc.lens_area(r1, r2, d) == pytest.approx(both.sum(), abs=0.01 * math.pi * min(r1, r2) ** 2 + 30)


@settings(max_examples=24, deadline=None)
@given(INDEX)
def test_accepted_scenes_keep_every_rule(i):
    s = scenes()[i]
    lv = s.level
    assert len(s.circles) == oc.K_BY_LEVEL[lv] and len(s.probes) == 4
    for x, y, r in s.circles:
        assert oc.R_MIN <= r <= oc.R_MAX and 24 <= x - r and x + r <= 744 and y - r >= 56 and y + r <= 744
    assert oc.tangency_px(s) >= oc.TANGENT_PX[lv] and oc.crossing_clearance_px(s) >= oc.TRIPLE_PX
    assert oc.probe_clearance_px(s) >= oc.PROBE_PX
    if lv == 2:   # one circle holds another
        assert any(math.dist(a[:2], b[:2]) + b[2] < a[2] for a in s.circles for b in s.circles if a != b)
    lad = oc.ladder(s)
    # Q1 from the crossing points themselves
    pts = [p for i, j in oc.pairs(s) for p in oc.crossing_points(s.circles[i], s.circles[j])]
    assert lad.rungs[0].answer.value == len(pts)
    assert all(abs(math.dist(p, c[:2]) - c[2]) < 1e-6 for i, j in oc.pairs(s)
               for p in oc.crossing_points(s.circles[i], s.circles[j]) for c in (s.circles[i], s.circles[j]))


@settings(max_examples=25, deadline=None)
@given(INDEX, st.permutations(list("ABCDE")))
def test_relabelling_keeps_the_counts(i, perm):
    s = scenes()[i]
    k = len(s.letters)
    names = [x for x in perm if x in "ABCDE"[:k]]
    m = replace(s, letters=tuple(names[oc.LETTERS.index(x)] for x in s.letters))
    a, b = oc.ladder(s), oc.ladder(m)
    assert a.rungs[0].answer == b.rungs[0].answer and a.rungs[2].answer == b.rungs[2].answer
    pa, _ = oc.overlap_ratio(s)
    pb, _ = oc.overlap_ratio(m)
    assert pa == pb                                         # the same two circles, whatever they are called


@settings(max_examples=24, deadline=None)
@given(INDEX)
def test_minimal_pair_slides_or_resizes_one_circle(i):
    s = scenes()[i]
    try:
        twin = oc.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    moved = [k for k in range(len(s.circles)) if twin.circles[k] != s.circles[k]]
    assert len(moved) == 1
    k = moved[0]
    step = math.dist(s.circles[k][:2], twin.circles[k][:2])
    if step == 0:                                   # a radius change
        assert abs(twin.circles[k][2] - s.circles[k][2]) <= max(oc.EDIT_STEPS_PX) + 0.01
    else:                                           # a slide along the line of centres with some other circle
        assert 3.9 <= step <= max(oc.EDIT_STEPS_PX) + 0.1 and twin.circles[k][2] == s.circles[k][2]
        u = np.subtract(twin.circles[k][:2], s.circles[k][:2]) / step
        assert any(abs(abs(float(np.dot(u, np.subtract(c[:2], s.circles[k][:2]))))
                       - math.dist(c[:2], s.circles[k][:2])) < 0.05 for j, c in enumerate(s.circles) if j != k)
    lt = oc.ladder(twin)
    assert gold_problems(lt) == []
    assert not lt.failing_margins() and lt.rungs[3].answer.value != oc.ladder(s).rungs[3].answer.value
    r = oc.rephrase_q4(s)
    assert r.answer == oc.ladder(s).rungs[3].answer and r.text != oc.ladder(s).rungs[3].text


def test_most_scenes_carry_a_minimal_pair():
    # The 15-30 px slide alone found a twin for about 1 scene in 15 here (a twins build rejected some 300
    # candidates per item); the smallest slide or radius change that keeps Q1 and every margin finds one for most
    # (the rest, mostly at L1-L2, have no such edit: flipping the largest pair there needs new crossings).
    found = 0
    for s in scenes():
        try:
            oc.minimal_pair(s)
            found += 1
        except Reject:
            pass
    assert found >= 2 * len(scenes()) // 3


# --- examples worked on paper --------------------------------------------------------------------------------------

PROBES = ((275.0, 400.0), (100.0, 700.0), (700.0, 100.0), (700.0, 700.0))


def test_two_crossing_circles_and_one_apart_by_hand():
    # A and B (r = 100) 150 apart cross twice; C (r = 80) is 250 from B: apart. m = (2, 2, 0): V = 2 + 1, E = 2 + 2 + 1,
    # two components: regions = 5 - 3 + 2 = 4. Lens: 2 r^2 acos(d / 2r) - (d / 2) sqrt(4 r^2 - d^2)
    # = 20000 * 0.722734 - 75 * 132.2876 = 4533.1; 4533.1 / (pi 100^2) = 14.4 % of A lies in B.
    # Without C: 3 regions. P = (275, 400) is 75 from both centres: in A and B, 25 from both outlines.
    s = oc.Scene(1, ("A", "B", "C"), ((200.0, 400.0, 100.0), (350.0, 400.0, 100.0), (600.0, 400.0, 80.0)), PROBES)
    lad = oc.ladder(s)
    assert lad.rungs[0].answer.value == 2 and lad.rungs[1].answer.value == ("A", "B")
    assert lad.rungs[2].answer.value == 4 and lad.rungs[3].answer.value == "A-B" and lad.rungs[4].answer.value == 3
    assert oc.overlap(s, 0, 1) == pytest.approx(4533.1, abs=0.5)
    assert lad.open.answer.fields["percent"].value == 14
    assert lad.rungs[3].margin.value == oc.RATIO_CAP              # no other pair overlaps
    assert lad.rungs[1].margin.value == pytest.approx(25.0)


def test_nested_circle_and_a_crossing_one_by_hand():
    # B (r = 80) is concentric with A (r = 200): no crossing, B wholly inside (gap 120). C (r = 100) is 250 from A:
    # 100 < 250 < 300, two crossings; 250 from B: apart. V = 2 + 1 (B alone), E = 2 + 1 + 2, components {A, C}, {B}:
    # regions = 5 - 3 + 2 = 4. Overlaps: A-B = pi 80^2 = 20106.2; A-C = 40000 acos(0.925) + 10000 acos(0.65)
    # - 0.5 sqrt(50 * 350 * 150 * 550) = 40000 * 0.389761 + 10000 * 0.863212 - 18998.4 = 5224.2: A-B largest,
    # ratio 3.85.
    # 16 % of A lies in B (80^2 / 200^2). Without C: two nested circles, 2 regions.
    s = oc.Scene(2, ("A", "B", "C"), ((400.0, 400.0, 200.0), (400.0, 400.0, 80.0), (650.0, 400.0, 100.0)), PROBES)
    lad = oc.ladder(s)
    assert [q.answer.value for q in lad.rungs] == [2, ("A",), 4, "A-B", 2]
    assert oc.overlap(s, 0, 2) == pytest.approx(5224.2, abs=0.5)
    assert lad.rungs[3].margin.value == pytest.approx(3.85, abs=0.005)
    assert lad.open.answer.fields["percent"].value == 16
    assert lad.rungs[3].answer.matches(lad.rungs[3].answer.parse("ANSWER: B-A"))       # reversed order accepted


def test_letter_boxes_are_the_measured_ones_and_every_scene_has_its_letters():
    from grip.renderers.canvas import Canvas
    from grip.renderers.style import LABEL
    from grip.renderers.text import text_size
    for letter, size in oc.LETTER_BOX_PX.items():
        assert text_size(Canvas(8), letter, LABEL) == pytest.approx(size, abs=1e-9)
    for s in scenes():
        spots = oc.letter_spots(s)
        assert spots is not None
        for (u, v), (x, y, r) in zip(spots, s.circles):       # outside its circle, near its top
            assert math.dist((u, v), (x, y)) > r and math.dist((u, v), (x, y - r)) <= 42.0 + 1e-9


# --- fast paths against the plain computations they stand for -----------------------------------------------------

def test_outline_gap_and_crossing_clearance_equal_their_plain_forms():
    def gap(box, circle):
        (x, y, r), (x0, y0, x1, y1) = circle, box
        near = math.hypot(max(x0 - x, 0, x - x1), max(y0 - y, 0, y - y1))
        far = max(math.hypot(x0 - x, y0 - y), math.hypot(x1 - x, y0 - y), math.hypot(x0 - x, y1 - y),
                  math.hypot(x1 - x, y1 - y))
        return 0.0 if near <= r <= far else min(abs(near - r), abs(far - r))

    def clearance(circles):
        pts = [(p, i, j) for i in range(len(circles)) for j in range(i + 1, len(circles))
               for p in oc.crossing_points(circles[i], circles[j])]
        gaps = [math.dist(a[0], b[0]) - oc.CROSS_GAP_PX + oc.TRIPLE_PX for k, a in enumerate(pts) for b in pts[k + 1:]]
        gaps += [abs(math.dist(p, (x, y)) - r) for p, i, j in pts for k, (x, y, r) in enumerate(circles)
                 if k not in (i, j)]
        return min(gaps + [oc.NO_BOUNDARY_PX])

    rng = np.random.default_rng(7)
    for _ in range(2000):
        x0, y0 = rng.uniform(0, 700, 2)
        box = (x0, y0, x0 + rng.uniform(18, 22), y0 + 20.0)
        circle = (*rng.uniform(100, 600, 2), rng.uniform(70, 210))
        assert oc._outline_gap(box, circle) == gap(box, circle)
    for _ in range(500):   # on a 10 px grid: box edges through the centre's x or y, and gaps of exactly 0
        x0, y0, w, cx, cy, r = (10.0 * v for v in rng.integers(0, 8, 6).tolist())
        box, circle = (x0, y0, x0 + w + 10.0, y0 + 20.0), (cx, cy, r + 10.0)
        assert oc._outline_gap(box, circle) == gap(box, circle)
    for s in scenes():
        assert oc._crossing_clearance.__wrapped__(s.circles) == clearance(s.circles)
    for _ in range(200):
        circles = tuple(tuple(round(float(v), 2) for v in (*rng.uniform(200, 560, 2), rng.uniform(70, 210)))
                        for _ in range(int(rng.integers(1, 6))))
        assert oc._crossing_clearance.__wrapped__(circles) == clearance(circles)


def test_ring_test_agrees_with_the_buffered_polygons():
    """`_ring_meets` never contradicts shapely's test on the buffers `shapes.circle` registers and place_label
    grows, on boxes placed all round an outline and a dot (so that all three verdicts come up)."""
    import shapely
    from shapely.geometry import Point
    rng = np.random.default_rng(11)
    seen = set()
    for k in range(24):
        cx, cy = rng.uniform(300, 460, 2)
        r = 3.5 if k % 3 == 0 else rng.uniform(70, 210)
        ring = (cx, cy, 0.0, 3.5) if r == 3.5 else (cx, cy, r - 1.5, r + 1.5)
        disk = Point(cx, cy).buffer(ring[3])
        shape = disk if r == 3.5 else disk.difference(Point(cx, cy).buffer(ring[2]))
        for a, d in zip(rng.uniform(0, 2 * math.pi, 40), (r if r > 3.5 else 0.0) + rng.uniform(-22, 22, 40)):
            u, v = cx + d * math.cos(a), cy + d * math.sin(a)
            box = (u - 6.5, v - 8.0, u + 6.5, v + 8.0)
            got = oc._ring_meets(box, *ring)
            seen.add(got)
            if got is not None:
                assert got == shapely.box(*box).buffer(oc.CLEARANCE_PX).intersects(shape), (box, ring)
    assert seen == {True, False, None}


def test_probe_labels_sit_where_place_label_puts_them(monkeypatch):
    from grip.renderers.canvas import Canvas
    from grip.renderers.text import place_label

    def plain(canvas, name, p, rings, placed):
        return place_label(canvas, name, p, name, oc.PROBE_STYLE, radii_px=oc.PROBE_RADII_PX).bounds

    def drawn(s):
        canvas = Canvas(768)
        try:
            oc.draw(s, canvas)
        except Reject as r:
            return r.reason
        return canvas.array().tobytes(), [b.bounds for b in canvas.labels]

    def near_outlines(s):            # probes 8-20 px off random outlines: labels hemmed in, some with no spot
        out = []
        for k, a, d in zip(rng.integers(0, len(s.circles), 4), rng.uniform(0, 2 * math.pi, 4),
                           rng.uniform(8, 20, 4) * rng.choice((-1, 1), 4)):
            x, y, r = s.circles[k]
            out.append((round(x + (r + d) * math.cos(a), 2), round(y + (r + d) * math.sin(a), 2)))
        return replace(s, probes=tuple(out))

    rng = np.random.default_rng(5)
    cases = list(scenes()[:4]) + [near_outlines(s) for s in scenes()[4:16]]
    for s in cases:
        fast = drawn(s)
        with monkeypatch.context() as mp:
            mp.setattr(oc, "_place_probe_label", plain)
            assert drawn(s) == fast
