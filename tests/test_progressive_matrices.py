"""Domain-specific tests for progressive_matrices: rule uniqueness by brute force over every hypothesis, the rule
margin against a brute-force count, the I-RAVEN answer tree and the failure of the most-common-value shortcut,
the Q5 edit and the minimal pair, and examples worked on paper."""
from collections import Counter
from dataclasses import replace
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject
from grip.domains.inductive import _raven as rv
from grip.domains.inductive import progressive_matrices as pm
from grip.renderers.canvas import Canvas
from grip.seeding import item_seed

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])
ATTRS = ("number", "type", "size", "colour")


def accepted(seed: int, level: int) -> pm.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        try:
            s = pm.sample(rng, level)
        except Reject:
            continue
        if not pm.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


# --- an independent statement of the rules (not the module's tables) -----------------------------------------------

def domain(attr, grid):
    return {"number": grid * grid, "type": 5, "size": 5, "colour": 6}[attr]


def all_hypotheses(attr, m):
    hs = [("constant", 0)] + [("progression", d) for d in (1, -1, 2, -2)]
    if attr in ("number", "colour"):
        hs += [("arithmetic", 1), ("arithmetic", -1)]
    return hs + [("distribute-three", s) for s in combinations(range(1, m + 1), 3)]


def row_ok(h, row, m):
    rule, p = h
    if rule == "constant":
        return len(set(row)) == 1
    if rule == "progression":
        return all(row[i + 1] - row[i] == p for i in range(len(row) - 1))
    if rule == "arithmetic":
        return row[2] == row[0] + p * row[1]
    return len(set(row)) == len(row) and set(row) <= set(p)


def predict(h, a, b, m):
    """The missing value of row 3 under h from its first two values, None if h does not fit them or leaves 1..m."""
    rule, p = h
    if rule == "constant":
        v = a if a == b else None
    elif rule == "progression":
        v = b + p if b - a == p else None
    elif rule == "arithmetic":
        v = a + p * b
    else:
        rest = [x for x in p if x not in (a, b)]
        v = rest[0] if a != b and a in p and b in p else None
    return v if v is not None and 1 <= v <= m else None


def brute_fits(attr, m, v8):
    """Every hypothesis that fits the eight visible values as drawn, with its in-range prediction."""
    out = []
    for h in all_hypotheses(attr, m):
        if row_ok(h, v8[0:3], m) and row_ok(h, v8[3:6], m):
            p = predict(h, v8[6], v8[7], m)
            if p is not None:
                out.append((h, p))
    return out


def brute_changes(attr, m, v8, h, cap=2):
    """Fewest visible values to change so that h fits, by trying every change of up to `cap` values."""
    for r in range(cap + 1):
        for where in combinations(range(8), r):
            for new in product(range(1, m + 1), repeat=r):
                w = list(v8)
                for i, x in zip(where, new):
                    w[i] = x
                if row_ok(h, w[0:3], m) and row_ok(h, w[3:6], m) and predict(h, w[6], w[7], m) is not None:
                    return r
    return cap + 1


def hand_scene(values, candidates, edit_attr, edit_value, level=1, grid=2):
    slots = tuple(tuple(range(n)) for n in list(values[0]) + [c[0] for c in candidates])
    return pm.Scene(level, grid, tuple(tuple(v) for v in values), tuple(candidates), slots, (0.0,) * 16,
                    edit_attr, edit_value)


# --- examples worked on paper ------------------------------------------------------------------------------------

# Level 1, 2x2 grid. Number 1 2 3 / 2 3 4 / 1 2 ?: progression +1 gives 3 (arithmetic + fails row 2 since 2+3=5;
# distribute-three fails since the rows hold different sets). Type all circles, size all level 3 (constants).
# Colour 2 4 6 / 4 6 2 / 6 2 ?: distribute-three over {2,4,6} gives 4 (progression +2 and arithmetic + fail row 2).
# Solution (3, 5, 3, 4) is candidate 6. Q5 sets (3,2)'s grey to 4 (the old missing grey): row 3 reads 6 4 ?, so the
# missing grey becomes 2 and candidate 2 = (3, 5, 3, 2) completes it.
PAPER_A = hand_scene(
    values=((1, 2, 3, 2, 3, 4, 1, 2), (5,) * 8, (3,) * 8, (2, 4, 6, 4, 6, 2, 6, 2)),
    candidates=((4, 5, 3, 4), (3, 5, 3, 2), (4, 5, 5, 2), (3, 5, 5, 4), (4, 5, 5, 4), (3, 5, 3, 4), (3, 5, 5, 2),
                (4, 5, 3, 2)),
    edit_attr="colour", edit_value=4)


def test_paper_example_a_ladder():
    lad = pm.ladder(PAPER_A)
    got = [q.answer.reference_text() for q in lad.questions]
    assert got == ["1", "progression", "3", "6", "2", "type=constant; size=constant; colour=distribute-three"]
    # Number margin 1: changing row 2's 2 to 1 makes 1 3 4 fit arithmetic + (and row 3's 1+2=3 fits already).
    assert rv.rule_margin("number", 2, (1, 2, 3, 2, 3, 4, 1, 2)) == 1
    # Colour margin 2: a set {2, x, 6} keeps row 3's 6 2 and needs one change in each full row (4 -> x); arithmetic
    # needs 0+2+1 (sum) or 2+1+0 (difference) changes; progression +2 needs 0+3+2.
    assert rv.rule_margin("colour", 2, (2, 4, 6, 4, 6, 2, 6, 2)) == 2
    assert not lad.failing_margins()


def test_paper_example_a_minimal_pair():
    # X is colour, so Y is number (first tree attribute in order): progression +1 must now give the alternative 4,
    # so row 3's visible counts become 2, 3; Q4 moves to candidate 1 = (4, 5, 3, 4); the top-left count stays 1.
    twin = pm.minimal_pair(PAPER_A)
    assert twin.values[0] == (1, 2, 3, 2, 3, 4, 2, 3) and twin.values[1:] == PAPER_A.values[1:]
    assert twin.slots[6] == (0, 1) and twin.slots[7] == (0, 1, 2)
    lad = pm.ladder(twin)
    assert lad.rungs[3].answer.value == "1" and lad.rungs[0].answer.value == 1
    assert pm.rephrase_q4(PAPER_A).answer.value == "6"


def test_paper_example_b_arithmetic_number():
    # 3x3 grid, number 2 3 5 / 4 1 5 / 3 3 ?: 2+3=5 and 4+1=5, so arithmetic + gives 3+3 = 6. Nothing else fits:
    # the rows are neither constant nor steps, the difference rule fails (2-3 < 1) and the rows hold different
    # sets. Margin 3: arithmetic - needs 8 3 5, 4 1 3 and a row 3 whose difference is >= 1 (one change each);
    # any other three-value set misses one value in every row; progressions need >= 4.
    v = (2, 3, 5, 4, 1, 5, 3, 3)
    assert rv.fitting("number", 3, v) == ((("arithmetic", 1), 6),)
    assert rv.rule_margin("number", 3, v) == 3


def test_sheet_example_is_ambiguous():
    # DOMAINS.md 9.1: 1 2 3 / 1 2 3 / 1 2 ? fits progression +1, arithmetic + and distribute-three {1,2,3}.
    v = (1, 2, 3, 1, 2, 3, 1, 2)
    assert {h for h, _ in rv.fitting("number", 3, v)} == {("progression", 1), ("arithmetic", 1),
                                                          ("distribute-three", (1, 2, 3))}
    assert rv.rule_margin("number", 3, v) == 0


# --- the rule margin against brute force -------------------------------------------------------------------------

@settings(max_examples=12)
@given(st.sampled_from([("number", 2), ("type", 2), ("colour", 2)]), st.randoms(use_true_random=False))
def test_changes_needed_matches_brute_force(attr_grid, rnd):
    attr, grid = attr_grid
    m = domain(attr, grid)
    v8 = tuple(rnd.randint(1, m) for _ in range(8))
    got = dict(zip(rv.hypotheses(attr, grid), rv.changes_needed(attr, grid, v8)))
    for h in all_hypotheses(attr, m):
        want = brute_changes(attr, m, v8, h)
        if h not in got:                       # the module leaves out hypotheses no row can obey
            assert want == 3 and not rv.allowed_rows(h[0], h[1], m)
        else:
            assert min(got[h], 3) == want, (h, v8)


@given(SEEDS, LEVELS)
def test_exactly_one_rule_and_one_missing_value_fit(seed, level):
    s = accepted(seed, level)
    sol = pm.solution(s)
    for i, attr in enumerate(ATTRS):
        fits = brute_fits(attr, domain(attr, s.grid), s.values[i])
        assert len(fits) == 1 and fits[0][1] == sol[i]
        assert fits[0][0] == pm.rule_fit(s, attr)[0]
        assert fits[0][0][0] in rv.admits(attr)
    # ... and the edited scene keeps X's rule unique, with a new missing value
    e = pm.edit(s)
    x = ATTRS.index(s.edit_attr)
    fits = brute_fits(s.edit_attr, domain(s.edit_attr, s.grid), e.values[x])
    assert len(fits) == 1 and fits[0][0] == pm.rule_fit(s, s.edit_attr)[0] and fits[0][1] != sol[x]


# --- answer set ---------------------------------------------------------------------------------------------------

@given(SEEDS, LEVELS)
def test_candidates_form_an_attribute_tree(seed, level):
    s = accepted(seed, level)
    cands = s.candidates
    assert len(set(cands)) == 8
    per_attr = [Counter(c[i] for c in cands) for i in range(4)]
    varying = [i for i in range(4) if len(per_attr[i]) == 2]
    assert len(varying) == 3 and 0 in varying                       # number is always in the tree
    for i in varying:
        assert sorted(per_attr[i].values()) == [4, 4]
        if ATTRS[i] in ("size", "colour"):                          # never one step of size or grey apart
            lo, hi = sorted(per_attr[i])
            assert hi - lo >= 2
    sol = pm.solution(s)
    assert sum(tuple(c) == sol for c in cands) == 1
    assert all(c[i] == sol[i] for c in cands for i in range(4) if i not in varying)


def shortcut_choice(s: pm.Scene, tie: str) -> int:
    """Per attribute the value most candidates share (ties: smaller, larger, or the first candidate's value), then
    the candidate that has all of them."""
    pick = []
    for i in range(4):
        cnt = Counter(c[i] for c in s.candidates)
        top = max(cnt.values())
        best = [v for v in cnt if cnt[v] == top]
        if tie == "smaller":
            pick.append(min(best))
        elif tie == "larger":
            pick.append(max(best))
        else:
            pick.append(next(c[i] for c in s.candidates if c[i] in best))
    return next((k for k, c in enumerate(s.candidates) if tuple(c) == tuple(pick)), 0)


def test_most_common_value_shortcut_is_at_chance():
    # 600 items, default level mix. Under chance the hits are Binomial(600, 1/8): mean 75, sd 8.1. A solver doing
    # better than chance would show it; we allow mean + 3 sd = 99 hits (one-sided false alarm ~0.2%).
    scenes = [accepted(item_seed("0", "progressive_matrices", i), 1 + i % 3) for i in range(600)]
    truth = [pm.completing(s) for s in scenes]
    for tie in ("smaller", "larger", "first"):
        hits = sum(shortcut_choice(s, tie) == t for s, t in zip(scenes, truth))
        assert hits <= 99, (tie, hits)
    # Every tree attribute is an exact 4-4 tie, so the shortcut is decided by its tie rule alone: "first" always
    # picks candidate 1, which is right exactly when Q4 is 1.
    assert all(shortcut_choice(s, "first") == 0 for s in scenes)
    q4 = Counter(truth)
    assert max(q4.values()) <= 75 + 3 * 8.1


# --- Q5 and the minimal pair --------------------------------------------------------------------------------------

@given(SEEDS, LEVELS)
def test_q5_is_the_rule_recomputed_on_the_edited_matrix(seed, level):
    s = accepted(seed, level)
    x = ATTRS.index(s.edit_attr)
    rule, p = pm.rule_fit(s, s.edit_attr)[0]
    assert rule in ("arithmetic", "distribute-three")
    e = pm.edit(s)
    assert e.values[x][7] == s.edit_value != s.values[x][7]
    assert [v for i, v in enumerate(e.values) if i != x] == [v for i, v in enumerate(s.values) if i != x]
    a, b = e.values[x][6], e.values[x][7]
    new_missing = a + p * b if rule == "arithmetic" else next(v for v in p if v not in (a, b))
    want = tuple(new_missing if i == x else v for i, v in enumerate(pm.solution(s)))
    hit = [k for k, c in enumerate(s.candidates) if tuple(c) == want]
    q5 = pm.ladder(s).rungs[4]
    assert q5.answer.value == (pm.OPTIONS[hit[0]] if hit else "none")
    assert q5.answer == pm.counterfactual(e)
    assert len(e.slots[7]) == e.values[0][7]
    ref = pm.reference_panel(s)                          # the named panel shows the new value...
    assert ref is not None and ref != 7 and s.values[x][ref] == s.edit_value and pm._where(ref) in q5.text
    assert s.edit_attr != "number"                        # Q5 says nothing about Q2's rule
    if s.edit_attr == "type":                             # ... and the new value is never printed in words
        assert pm.TYPES[s.edit_value - 1] not in q5.text


@given(SEEDS, LEVELS)
def test_minimal_pair_changes_one_tree_attribute_in_row_3(seed, level):
    s = accepted(seed, level)
    t = pm.minimal_pair(s)
    changed = [i for i in range(4) if t.values[i] != s.values[i]]
    assert len(changed) == 1 and ATTRS[changed[0]] != s.edit_attr
    y = changed[0]
    assert all(t.values[y][p] == s.values[y][p] for p in range(6))   # rows 1 and 2 untouched
    assert pm.rule_fit(t, ATTRS[y])[0] == pm.rule_fit(s, ATTRS[y])[0]
    old, new = pm.completing(s), pm.completing(t)
    diff = [i for i in range(4) if s.candidates[old][i] != t.candidates[new][i]]
    assert diff == [y]
    assert pm.ladder(t).rungs[0].answer == pm.ladder(s).rungs[0].answer
    assert pm.rephrase_q4(s).answer == pm.ladder(s).rungs[3].answer


def test_minimal_pair_pixels_stay_local():
    # DOMAINS.md 0.7 QA: changed pixels <= 5% of the canvas, their bounding box <= 25%.
    for i in range(6):
        s = accepted(item_seed("pairs", "progressive_matrices", i), 1 + i % 3)
        a, b = Canvas(768), Canvas(768)
        pm.draw(s, a)
        pm.draw(pm.minimal_pair(s), b)
        diff = (a.array() != b.array()).any(axis=2)
        ys, xs = np.nonzero(diff)
        assert 0 < diff.mean() <= 0.05
        assert (ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1) <= 0.25 * 768 * 768


# --- invariants and metamorphic relations -------------------------------------------------------------------------

@given(SEEDS, LEVELS)
def test_levels_and_legibility_margins(seed, level):
    s = accepted(seed, level)
    assert s.grid == (3 if level == 3 else 2)
    varying = [i for i in range(1, 4) if len(set(s.values[i])) > 1]     # the others are one value throughout
    assert len(varying) <= {1: 1, 2: 2, 3: 3}[level]
    assert (any(a != 0.0 for a in s.angles)) == (level == 3)
    assert pm.diameter_px(1) / 2 ** 0.5 >= pm.MIN_OBJECT_PX and pm.min_gap_px(s) >= pm.MIN_GAP_PX   # square side
    for p, n in zip(pm.panels(s), s.slots):
        assert len(n) == p[0] and len(set(n)) == p[0] and all(0 <= k < s.grid ** 2 for k in n)


@given(SEEDS, LEVELS, st.randoms(use_true_random=False))
def test_positions_and_orientations_are_noise(seed, level, rnd):
    s = accepted(seed, level)
    moved = replace(s, slots=tuple(tuple(sorted(rnd.sample(range(s.grid ** 2), len(k)))) for k in s.slots),
                    angles=tuple(float(rnd.randrange(360)) for _ in s.angles))
    assert pm.ladder(moved) == pm.ladder(s)


@given(SEEDS, LEVELS, st.permutations(range(8)))
def test_shuffling_candidates_moves_the_answer_with_them(seed, level, perm):
    s = accepted(seed, level)
    shuffled = replace(s, candidates=tuple(s.candidates[j] for j in perm),
                       slots=s.slots[:8] + tuple(s.slots[8 + j] for j in perm),
                       angles=s.angles[:8] + tuple(s.angles[8 + j] for j in perm))
    assert pm.completing(shuffled) == list(perm).index(pm.completing(s))


def test_grey_levels_are_18_lstar_apart_and_sizes_19_percent():
    def lstar(g):                                   # sRGB grey -> CIE L*, written out independently
        lin = g / 12.92 if g <= 0.04045 else ((g + 0.055) / 1.055) ** 2.4
        return 116 * lin ** (1 / 3) - 16 if lin > 0.008856 else 903.3 * lin
    assert [round(lstar(pm.grey(c)[0]), 1) for c in range(1, 7)] == [96.0, 78.0, 60.0, 42.0, 24.0, 6.0]
    d = [pm.diameter_px(k) for k in range(1, 6)]
    assert all(b / a == pytest.approx(2 ** 0.25) for a, b in zip(d, d[1:]))


def blue_box(img, x0, y0, x1, y1):
    """Width and height (px) of the blue-ring pixels in a box of the picture."""
    sub = img[y0:y1, x0:x1].astype(int)
    ys, xs = np.nonzero(sub[..., 2] - sub[..., 0] > 40)
    return xs.max() - xs.min() + 1, ys.max() - ys.min() + 1


@pytest.mark.parametrize("level,grid", [(1, 2), (3, 3)])
def test_cached_frame_gives_the_bytes_of_drawing_in_order(level, grid):
    # A blank canvas gets the level's frame copied and only the shapes drawn (stamped in an unturned 2x2 scene);
    # any other canvas is drawn in order. Full panels of every type, size and grey, the largest among them, turned
    # at level 3, must give the same pixels both ways.
    n, types, sizes, greys = grid * grid, (1, 2, 3, 4, 5, 1, 2, 3), (5, 4, 3, 2, 1, 5, 5, 5), (6, 5, 4, 3, 2, 1, 6, 1)
    s = hand_scene(((n,) * 8, types, sizes, greys), tuple((n, t, 5, g) for t, g in zip(types[::-1], greys)),
                   "colour", 4, level, grid)
    s = replace(s, angles=tuple(float(17 * k) if level == 3 else 0.0 for k in range(16)))
    framed, in_order = Canvas(768), Canvas(768)
    in_order.ctx.rectangle(0, 0, 1, 1)                        # one pixel that nothing draws on: not blank
    in_order.ctx.set_source_rgb(0, 0, 0)
    in_order.ctx.fill()
    pm.draw(s, framed)
    pm.draw(s, in_order)
    a, b = framed.array(), in_order.array()
    b[0, 0] = 255
    assert np.array_equal(a, b)


@pytest.mark.parametrize("level,grid", [(1, 2), (3, 3)])
def test_size_key_is_a_ruler_for_the_panels(level, grid):
    # Measured on pixels: for every size level, the key's ring has the width and height of the ring around a
    # panel's square of that level (squares: their corners sit off the ring's extreme points), in both grids, to
    # within the 1 px that antialiasing at another sub-pixel phase allows; adjacent levels are >= 3 px apart.
    key = []
    for size in range(1, 6):
        s = hand_scene(((1,) * 8, (2,) * 8, (size,) * 8, (3,) * 8), ((1, 2, size, 3),) * 8, "colour", 4, level, grid)
        c = Canvas(768)
        pm.draw(s, c)
        img = c.array()
        x0, y0 = (int(v) for v in pm.panel_origin(0))
        panel = blue_box(img, x0 + 1, y0 + 1, x0 + int(pm.PANEL_PX) - 1, y0 + int(pm.PANEL_PX) - 1)
        x, y, d = pm.key_rings(s)[size - 1]
        ring = blue_box(img, int(x - d), int(y - d / 2 - 4), int(x + d), int(y + d / 2 + 5))
        ok = all(abs(int(a) - int(b)) <= 1 and abs(a - (d + 2)) <= 1 for a, b in zip(panel, ring))
        assert ok, (size, panel, ring)
        key.append(d)
    assert key == [pm.diameter_px(z) for z in range(1, 6)]


@settings(max_examples=10)
@given(SEEDS, LEVELS)
def test_turns_only_at_level_3_and_the_questions_say_so(seed, level):
    s = accepted(seed, level)
    lad = pm.ladder(s)
    assert (pm.TURN_NOTE in lad.rungs[3].text) == (level == 3) == any(s.angles)
    assert pm.SIZE_NOTE in lad.rungs[3].text and pm.SIZE_NOTE in lad.open.text
