"""Domain-specific tests for symmetry_patterns: the group re-derived with numpy flips and turns, cost as the size of a
real fix, metamorphic relations (turning the whole pattern), the balance table, the whitening counterfactual, the
minimal pair, and examples worked on paper."""
from collections import Counter
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject
from grip.domains.transformational import symmetry_patterns as sp
from grip.renderers.style import OKABE_ITO

SEEDS = st.integers(0, 11)          # a small pool: scenes are sampled once and shared by every test (cached)
LEVELS = st.sampled_from([1, 2, 3])


@lru_cache(maxsize=None)
def accepted(seed: int, level: int) -> sp.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(100):
        try:
            s = sp.sample(rng, level)
        except Reject:
            continue
        if not sp.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


def grid_of(cells: dict, n: int) -> tuple:
    return tuple(tuple(cells.get((r, c), 0) for c in range(n)) for r in range(n))


NUMPY_OPS = {"id": lambda a: a, "r90": lambda a: np.rot90(a, -1), "r180": lambda a: np.rot90(a, 2),
             "r270": lambda a: np.rot90(a, 1), "flip_x": np.fliplr, "flip_y": np.flipud, "diag": lambda a: a.T,
             "anti": lambda a: np.rot90(a, 2).T}


# --- examples worked on paper ------------------------------------------------------------------------------------

def test_two_opposite_corners_by_hand():
    # (0,0) and (5,5) coloured: the half turn and both diagonal mirrors keep it; the centre-line mirrors send (0,0)
    # to a white corner. D2(diagonals): 2 mirror lines, rotation order 2.
    s = sp.Scene(1, grid_of({(0, 0): 1, (5, 5): 1}, 6), ((5, 5),), "D2(diagonals)", "D1(diag)")
    lad = sp.ladder(s)
    assert lad.rungs[0].answer.value == 2 and lad.rungs[1].answer.value == "no"
    assert lad.rungs[2].answer.value == 2
    assert sp.symmetry_record(s).reference_value() == {"mirror_lines": 2, "rotation_order": 2}
    # The vertical mirror pairs two corners twice, each pair mismatched: 2 recolourings; the quarter turn's corner
    # cycle (1, 0, 1, 0) also needs 2. So the margin is 2 cells (below L1's tau = 4).
    colours = sp.flat(s.grid)
    assert sp.cost(colours, 6, "flip_x") == 2 and sp.cost(colours, 6, "r90") == 2 and sp.missing_cost(s.grid) == 2
    # All 8 symmetries: the corner orbit (1, 0, 0, 1) needs 2 cells changed, the rest is white.
    assert lad.open.answer.fields["cells"].value == 2
    # Whitening (5,5) leaves one corner: only the main diagonal keeps it.
    assert lad.rungs[4].answer.reference_value() == {"mirror_lines": 1, "rotation_order": 1}


def test_centre_and_two_edge_cells_by_hand():
    # 7x7: centre colour 2, (0,3) and (6,3) colour 1. Vertical and horizontal mirrors and the half turn keep it; a
    # quarter turn sends (0,3) to (3,6), white. D2(V,H). To full symmetry: orbit {(0,3),(3,6),(6,3),(3,0)} is
    # (1, 0, 1, 0): 2 cells.
    s = sp.Scene(2, grid_of({(3, 3): 2, (0, 3): 1, (6, 3): 1}, 7), ((0, 3), (6, 3)), "D2(V,H)", "D4")
    assert sp.group_of(s.grid) == sp.GROUPS["D2(V,H)"]
    assert sp.vertical_mirror(s).value == "yes" and sp.mirror_lines(s).value == 2
    assert sp.recolour_to_full(s).value == 2
    # Whitening the two outlined cells leaves the centre alone: all 8 symmetries.
    assert sp.counterfactual(sp.edit(s)).reference_value() == {"mirror_lines": 4, "rotation_order": 4}


# --- the group, independently -----------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_group_matches_numpy_flips_and_turns(seed, level):
    s = accepted(seed, level)
    for grid in (s.grid, sp.edit(s).grid):
        a = np.array(grid)
        want = frozenset(op for op, f in NUMPY_OPS.items() if np.array_equal(f(a), a))
        assert sp.group_of(grid) == want
    assert sp.group_of(s.grid) == sp.GROUPS[s.group]
    assert sp.group_of(sp.edit(s).grid) == sp.GROUPS[s.group_after]


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_cost_is_the_size_of_a_real_fix(seed, level):
    s = accepted(seed, level)
    n, colours = len(s.grid), sp.flat(s.grid)
    g = sp.group_of(s.grid)
    for op in sp.D4_OPS:
        c = sp.cost(colours, n, op)
        assert (c == 0) == (op in g)
        fixed = list(colours)
        for cyc in sp.cycles(n, op):
            vals = [colours[i] for i in cyc]
            best = Counter(vals).most_common(1)[0][0]
            for i in cyc:
                fixed[i] = best
        assert sum(x != y for x, y in zip(fixed, colours)) == c
        assert op in sp.group_of(tuple(tuple(fixed[r * n:(r + 1) * n]) for r in range(n)))
    assert sp.missing_cost(s.grid) >= sp.TAU[level]


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_turning_the_pattern_keeps_the_counts(seed, level):
    s = accepted(seed, level)
    turned = tuple(map(tuple, np.rot90(np.array(s.grid), -1).tolist()))
    t = sp.Scene(level, turned, (), s.group, s.group_after)
    assert sp.symmetry_record(t) == sp.symmetry_record(s)
    assert sp.recolour_to_full(t) == sp.recolour_to_full(s)
    assert sp.missing_cost(turned) == sp.missing_cost(s.grid)
    # A quarter turn swaps the vertical and horizontal mirrors.
    g, h = sp.group_of(s.grid), sp.group_of(turned)
    assert ("flip_x" in h) == ("flip_y" in g) and ("diag" in h) == ("anti" in g)


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_whitening_counterfactual_and_outlined_set(seed, level):
    s = accepted(seed, level)
    lad = sp.ladder(s)
    e = sp.edit(s)
    assert lad.rungs[4].answer == sp.symmetry_record(e)
    assert all(e.grid[r][c] == 0 for r, c in s.outlined) and all(s.grid[r][c] for r, c in s.outlined)
    assert 1 <= len(s.outlined) <= 8
    same = s.group == s.group_after
    assert same == (sp.GROUPS[s.group] == sp.group_of(e.grid))
    if sp.GROUPS[s.group_after] < sp.GROUPS[s.group]:
        assert len(s.outlined) == len(sp.GROUPS[s.group_after])


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_minimal_pair(seed, level):
    s = accepted(seed, level)
    try:
        twin = sp.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    assert sp.symmetry_record(twin) != sp.symmetry_record(s)
    assert not sp.ladder(twin).failing_margins()
    changed = sum(a != b for a, b in zip(sp.flat(twin.grid), sp.flat(s.grid)))
    assert 1 <= changed <= sp.MAX_PAIR_CELLS
    assert twin.outlined == s.outlined and all(twin.grid[r][c] == s.grid[r][c] for r, c in s.outlined)
    q = sp.rephrase_q4(s)
    assert q.answer == sp.ladder(s).rungs[3].answer


def test_balance_table_is_symmetric_with_the_sheet_weights():
    total = sum(w for _, _, w in sp.TABLE)
    assert total == pytest.approx(100)
    g_marg, g5_marg = Counter(), Counter()
    for g, g5, w in sp.TABLE:
        g_marg[g] += w
        g5_marg[g5] += w
        assert sp.GROUPS[g] <= sp.GROUPS[g5] or sp.GROUPS[g5] <= sp.GROUPS[g]
    for g, w in sp.WEIGHT.items():
        assert g_marg[g] == pytest.approx(w) and g5_marg[g] == pytest.approx(w)
    assert sum(w for g, g5, w in sp.TABLE if g == g5) == pytest.approx(50)


def _lab(rgb):
    def lin(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_colours_are_far_apart_and_carry_distinct_symbols():
    assert len(set(sp.SYMBOLS)) == 3
    for level, names in sp.COLOURS.items():
        labs = [_lab(OKABE_ITO[c]) for c in names] + [_lab((1.0, 1.0, 1.0))]
        for i in range(4):
            for j in range(i + 1, 4):
                assert np.linalg.norm(labs[i] - labs[j]) >= 40, (level, i, j)


def test_cost_matches_counting_each_cycle():
    rng = np.random.default_rng(3)
    for k in range(72):
        n = (6, 7, 8)[k % 3]
        colours = rng.integers(0, 4, n * n).tolist() if k % 2 else sp.flat(accepted(k % 12, 1 + k % 3).grid)
        for op in sp.D4_OPS:
            want = sum(len(c) - max(Counter(colours[i] for i in c).values()) for c in sp.cycles(n, op))
            assert sp.cost(colours, n, op) == want
