"""Domain-specific tests for embedded_figures: containment re-derived by brute force (plain edge sets and explicit
rotation matrices, no bitmasks), the rules every accepted scene keeps, the erase-and-join counterfactual, the
minimal pair, and an example worked on paper."""
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json
from grip.draws import Draws
from grip.domains.transformational import _edges as ed
from grip.domains.transformational import embedded_figures as ef
from domain_scenes import accepted_scene

SEEDS = st.integers(0, 11)          # a small pool: scenes are sampled once and shared by every test (cached)
LEVELS = st.sampled_from([1, 2, 3])


@lru_cache(maxsize=None)
def accepted(seed: int, level: int) -> ef.Scene:
    return accepted_scene(ef, seed, level, 300)


def e(a, b):
    return ed.edge(a, b)


# --- an example worked on paper ----------------------------------------------------------------------------------

SQUARE = (e((0, 0), (1, 0)), e((0, 0), (0, 1)), e((1, 0), (1, 1)), e((0, 1), (1, 1)))
HOOK = (e((0, 0), (1, 0)), e((1, 0), (2, 0)), e((2, 0), (3, 0)), e((3, 0), (3, 1)))       # three right, one down
POLE = tuple(e((0, k), (0, k + 1)) for k in range(4))                                  # four down
BOX21 = (e((0, 0), (1, 0)), e((1, 0), (2, 0)), e((0, 1), (1, 1)), e((1, 1), (2, 1)), e((0, 0), (0, 1)),
         e((2, 0), (2, 1)))                                                            # 2 x 1 rectangle


def test_square_and_line_by_hand():
    # C: the unit square at the top-left and the top row continued to x = 3.
    fig = SQUARE + (e((1, 0), (2, 0)), e((2, 0), (3, 0)))
    s = ef.Scene(1, tuple(sorted(fig)), (SQUARE, HOOK, POLE, BOX21), ((0, 0), (3, 0)), ((1, 1), (3, 1)))
    lad = ef.ladder(s)
    assert lad.rungs[0].answer.value == 4                 # a square: four sides
    assert ef.segment_count(s, "B").value == 2            # the hook: one run of three, one of one
    assert lad.rungs[1].answer.value == "open"
    assert lad.rungs[2].answer.value == 1                 # the hook lies on the top row and lacks its last edge
    assert lad.rungs[3].answer.value == "A"
    # The pole finds one vertical edge at best (3 missing); the rectangle keeps 4 of its 6 edges on the square.
    assert ef.missing_of(s, "C").value == 3 and ef.missing_of(s, "D").value == 2
    assert lad.open.answer.reference_value() == {"row": 1, "col": 1}
    # The top row (0,0)-(3,0) is one straight line: erasing it removes the square's top. The join adds the bottom
    # row from (1,1) to (3,1); nothing is then complete.
    assert ((0, 0), (3, 0)) in ed.segments(s.figure) and len(ed.segments(s.figure)) == 4
    assert lad.rungs[4].answer.value == ()


def test_quarter_turn_only_counts_at_level_3_by_hand():
    # C: a vertical run of three from (3,2) down to (3,5), then one edge left to (2,5): the hook turned clockwise.
    fig = (e((3, 2), (3, 3)), e((3, 3), (3, 4)), e((3, 4), (3, 5)), e((2, 5), (3, 5)))
    s3 = ef.Scene(3, tuple(sorted(fig)), (SQUARE, HOOK, POLE, BOX21), ((3, 2), (3, 5)), ((5, 0), (6, 0)))
    s1 = ef.Scene(1, s3.figure, s3.shapes, s3.erase, s3.join)
    # Turning allowed: the hook is there, its box's top-left corner is the point (x=2, y=2): row 3, column 3.
    assert ef.missing_of(s3, "B").value == 0 and ef.hidden_shape(s3).value == "B"
    assert ef.hidden_corner(s3).reference_value() == {"row": 3, "col": 3}
    # The pole (four down) finds the run of three: one edge short.
    assert ef.missing_of(s3, "C").value == 1
    # Without turning, the hook's run of three must lie flat: at best one of its edges is on C, three are missing.
    assert ef.missing_of(s1, "B").value == 3 and ef.present(s1) == []


# --- brute force --------------------------------------------------------------------------------------------------

QUARTER = np.array([[0, -1], [1, 0]])            # clockwise on a y-down page: (x, y) -> (-y, x)


def brute_placements(shape, turns: bool) -> set:
    out = set()
    for k in range(4 if turns else 1):
        r = np.linalg.matrix_power(QUARTER, k)
        rot = [tuple(tuple(int(v) for v in r @ np.array(p)) for p in edge) for edge in shape]
        x0, y0 = min(p[0] for m in rot for p in m), min(p[1] for m in rot for p in m)
        for dx in range(-x0, 7 - x0):
            for dy in range(-y0, 7 - y0):
                moved = [e((a[0] + dx, a[1] + dy), (b[0] + dx, b[1] + dy)) for a, b in rot]
                if all(0 <= v <= 6 for m in moved for p in m for v in p):
                    out.add(frozenset(moved))
    return out


@settings(max_examples=20, deadline=None)
@given(SEEDS, LEVELS)
def test_containment_matches_brute_force(seed, level):
    s = accepted(seed, level)
    turns = level == 3
    for fig_scene in (s, ef.edit(s)):
        fig = set(fig_scene.figure)
        found = []
        for letter, shape in zip(ef.LETTERS, s.shapes):
            pls = brute_placements(shape, turns)
            assert len(pls) == len(ed.placements(shape, turns))
            miss = min(len(p - fig) for p in pls)
            assert miss == ef.missing_of(fig_scene, letter).value
            if miss == 0:
                found.append(letter)
                if fig_scene is s:
                    assert sum(p <= fig for p in pls) == 1      # the hidden shape at exactly one placement
        assert tuple(found) == ef.hidden_shapes(fig_scene).value


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_accepted_scenes_keep_every_rule(seed, level):
    s = accepted(seed, level)
    fig = set(s.figure)
    assert all(ed.is_unit(x) and all(0 <= v <= 6 for p in x for v in p) for x in fig)
    assert ed.diagonals_ok(fig) and ed.diagonals_ok(ef.edit(s).figure)
    if level == 1:
        assert not any(ed.is_diagonal(x) for x in fig)
    for shape in s.shapes:
        assert 4 <= len(shape) <= 8 and ed.is_simple(shape) and max(ed.extent(shape)) <= 3
    for i, a in enumerate(s.shapes):
        for j, b in enumerate(s.shapes):
            if i != j:
                assert not ef._sub_shape(a, b, level == 3)
    lo, hi = ef.M_RANGE[level]
    hidden = ef.hidden_shape(s).value
    ms = [ef.missing_of(s, x).value for x in ef.LETTERS if x != hidden]
    assert all(lo <= m <= hi for m in ms) and (level != 3 or min(ms) == 1)
    assert s.erase in ed.segments(s.figure)
    join = ed.unit_edges(s.join)
    assert ef.JOIN_LEN[level][0] <= len(join) <= ef.JOIN_LEN[level][1] and not set(join) & fig


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_counterfactual_recomputes_on_the_edited_figure(seed, level):
    s = accepted(seed, level)
    t = ef.edit(s)
    want = set(s.figure) - set(ed.unit_edges(s.erase)) | set(ed.unit_edges(s.join))
    assert set(t.figure) == want and t.figure != s.figure
    assert ef.ladder(s).rungs[4].answer == ef.hidden_shapes(t)
    # Whether the hidden shape survives is decided by the erased line alone.
    hidden = ef.hidden_shape(s).value
    (occ,) = ed.occurrences(s.shapes[ef.LETTERS.index(hidden)], ef.figure_mask(s), level == 3)
    if not set(ed.edges_of(occ)) & set(ed.unit_edges(s.erase)):
        assert hidden in ef.hidden_shapes(t).value


@settings(max_examples=15, deadline=None)
@given(SEEDS, LEVELS)
def test_minimal_pair_moves_q4_to_a_distractor(seed, level):
    s = accepted(seed, level)
    try:
        twin = ef.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    a, b = ef.ladder(s), ef.ladder(twin)
    assert not b.failing_margins() and a.rungs[3].answer.value != b.rungs[3].answer.value
    removed, added = set(s.figure) - set(twin.figure), set(twin.figure) - set(s.figure)
    assert ef.M_MIN[level] <= len(removed) <= ef.MAX_REMOVED and 1 <= len(added) <= 3
    assert ef.edit(twin).figure != twin.figure and tuple(twin.erase) in ed.segments(twin.figure)
    assert len(added) == ef.missing_of(s, b.rungs[3].answer.value).value
    q = ef.rephrase_q4(s)
    assert q.answer == a.rungs[3].answer and q.text != a.rungs[3].text


def test_q5_outcomes_all_occur():
    seen = set()
    for seed in range(24):
        s = accepted(seed, 2)
        after = ef.hidden_shapes(ef.edit(s)).value
        seen.add((ef.hidden_shape(s).value in after, len(after) - (ef.hidden_shape(s).value in after)))
    assert seen == {(True, 0), (True, 1), (False, 0), (False, 1)}


# The scene (seed 8957474886560308867, level 1) whose minimal-pair search reached a twin with every shape present:
# the distractor margin over no absent shape crashed (min of an empty sequence) instead of the twin being refused.
CRASH_SCENE = {"level": 1, "figure": [[[0, 2], [0, 3]], [[0, 3], [0, 4]], [[0, 3], [1, 3]], [[0, 5], [0, 6]], [[0, 6], [1, 6]], [[1, 0], [2, 0]], [[1, 1], [1, 2]], [[1, 1], [2, 1]], [[1, 2], [1, 3]], [[1, 3], [2, 3]], [[1, 4], [1, 5]], [[1, 4], [2, 4]], [[1, 5], [1, 6]], [[2, 0], [3, 0]], [[2, 4], [3, 4]], [[3, 0], [3, 1]], [[3, 1], [4, 1]], [[3, 2], [3, 3]], [[3, 2], [4, 2]], [[3, 3], [3, 4]], [[3, 3], [4, 3]], [[3, 4], [3, 5]], [[3, 4], [4, 4]], [[4, 0], [4, 1]], [[4, 0], [5, 0]], [[4, 1], [4, 2]], [[4, 1], [5, 1]], [[4, 2], [5, 2]], [[4, 4], [5, 4]], [[5, 4], [6, 4]]], "shapes": [[[[0, 0], [1, 0]], [[0, 1], [0, 2]], [[0, 1], [1, 1]], [[0, 2], [1, 2]], [[1, 0], [1, 1]]], [[[0, 0], [0, 1]], [[0, 0], [1, 0]], [[0, 1], [1, 1]], [[1, 0], [2, 0]], [[1, 1], [2, 1]], [[2, 0], [2, 1]]], [[[0, 0], [0, 1]], [[0, 0], [1, 0]], [[0, 1], [0, 2]], [[0, 2], [1, 2]], [[1, 0], [1, 1]], [[1, 1], [1, 2]]], [[[0, 0], [0, 1]], [[0, 0], [1, 0]], [[0, 1], [0, 2]], [[0, 2], [1, 2]], [[1, 0], [2, 0]], [[1, 1], [1, 2]], [[1, 1], [2, 1]], [[2, 0], [2, 1]]]], "erase": [[1, 0], [3, 0]], "join": [[2, 1], [2, 3]]}


def test_minimal_pair_survives_a_candidate_with_every_shape_present():
    s = scene_from_json(ef.Scene, CRASH_SCENE)
    assert not ef.ladder(s).failing_margins()
    full = replace(s, figure=tuple(sorted(set(s.figure) | {e for sh in s.shapes for e in sh})))
    assert ef.distractor_margin(full) == 8          # defined over no absent shape
    with pytest.raises(Reject):
        ef.ladder(full)                            # four shapes present: no unique hidden shape
    try:
        twin = ef.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
    else:
        assert not ef.ladder(twin).failing_margins()


def test_most_level_1_scenes_carry_a_minimal_pair():
    # At L1 a distractor must lack 2 edges, and the hidden shape usually has a placement one edge short beside its
    # occurrence: removing one edge of the occurrence alone never holds the margin (no L1 twin at all before).
    found = 0
    for seed in range(12):
        try:
            ef.minimal_pair(accepted(seed, 1))
            found += 1
        except Reject:
            pass
    assert found >= 5


def test_segments_and_best_overlap_match_plain_references():
    """The fast `segments` (runs walked from their first edges) and `best_overlap` (votes per direction) against
    plain ones: growing each edge along its line, and trying every translation."""
    rng = np.random.default_rng(0)
    every = ed.all_edges()

    def plain_segments(edges):
        es, out = {ed.edge(*x) for x in edges}, set()
        for a, b in es:
            d = (b[0] - a[0], b[1] - a[1])
            while ed.edge((a[0] - d[0], a[1] - d[1]), a) in es:
                a = (a[0] - d[0], a[1] - d[1])
            while ed.edge(b, (b[0] + d[0], b[1] + d[1])) in es:
                b = (b[0] + d[0], b[1] + d[1])
            out.add((a, b))
        return sorted(out)

    def plain_overlap(small, big, turns):
        return max(len({ed.edge((a[0] + dx, a[1] + dy), (b[0] + dx, b[1] + dy)) for a, b in s} & set(big))
                   for s in {ed.turned(small, k) for k in range(4 if turns else 1)}
                   for dx in range(-4, 5) for dy in range(-4, 5))

    for k in range(60):
        edges = [every[i] for i in rng.choice(len(every), size=int(rng.integers(1, 60)), replace=False)]
        assert ed.segments(edges) == plain_segments(edges)
        assert ed.segments([(b, a) for a, b in edges]) == plain_segments(edges)
        small, big = (ef._random_shape(Draws(rng), 1 + k % 3, bool(j)) for j in (k % 2, k // 2 % 2))
        assert ed.best_overlap(small, big, k % 2 == 0) == plain_overlap(small, big, k % 2 == 0)
        rows = ed.placement_indices(small, k % 2 == 0)
        assert ed.placements(small, k % 2 == 0) == tuple(sum(1 << i for i in row) for row in rows)


def test_run_lengths_and_placements_match_plain_references():
    """The sampler's segment lengths from a walk's steps against `ed.segments`, and the placement rows (built from
    shifted padded indices) against every translation of every quarter turn looked up edge by edge."""
    rng = Draws(np.random.default_rng(1))
    idx = ed.edge_index()
    for k in range(150):
        closed = bool(k % 2)
        shape = ef._random_shape(rng, 1 + k % 3, closed)
        # Walk the shape from an end (or any point of a cycle) to recover its steps in order.
        adj: dict = {}
        for a, b in shape:
            adj.setdefault(a, []).append(b)
            adj.setdefault(b, []).append(a)
        p = min(q for q in adj if len(adj[q]) == 1) if not closed else min(adj)
        steps, seen = [], set()
        while True:
            nxt = [q for q in adj[p] if ed.edge(p, q) not in seen]
            if not nxt:
                break
            seen.add(ed.edge(p, nxt[0]))
            steps.append((nxt[0][0] - p[0], nxt[0][1] - p[1]))
            p = nxt[0]
        assert sorted(ef._run_lengths(steps, closed)) == sorted(ed.length(s) for s in ed.segments(shape))
        turns = k % 3 == 0
        plain = set()
        for s in {ed.turned(shape, t) for t in range(4 if turns else 1)}:
            w, h = ed.extent(s)
            for dx in range(ed.SIZE - w):
                for dy in range(ed.SIZE - h):
                    plain.add(tuple(sorted(idx[((a[0] + dx, a[1] + dy), (b[0] + dx, b[1] + dy))] for a, b in s)))
        assert ed.placement_indices(shape, turns) == tuple(sorted(plain))


def test_stroke_tests_agree_with_the_buffered_outlines():
    """`_segment_box_distance` against shapely's distance, and every stroke test `_stroke_meets` decides against
    place_label's own test (the box buffered by the clearance meets the stroke's buffer), on boxes and strokes
    (segments, some axis-parallel, and points) scattered within a few clearances of each other."""
    import shapely
    from shapely.geometry import LineString, Point

    rng = np.random.default_rng(3)
    decided = {True: 0, False: 0}
    for _ in range(500):
        x0, y0 = rng.uniform(0, 40, 2)
        box = (x0, y0, x0 + rng.uniform(5, 20), y0 + rng.uniform(5, 20))
        a, d = rng.uniform(-10, 70, 2), rng.uniform(-30, 30, 2)
        if rng.random() < 0.3:
            d[rng.integers(2)] = 0.0
        b = a if rng.random() < 0.2 else a + d
        half = float(rng.choice([1.5, 2.0, 3.0, 9.5]))
        line = Point(a) if (a == b).all() else LineString([a, b])
        poly = shapely.box(*box)
        assert ef._segment_box_distance(box, *a, *b) == pytest.approx(poly.distance(line), abs=1e-9)
        got = ef._stroke_meets(box, *a, *b, half)
        if got is not None:
            decided[got] += 1
            assert got == poly.buffer(ef.CLEARANCE_PX).intersects(line.buffer(half))
    assert min(decided.values()) > 50
