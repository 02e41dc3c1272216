"""Domain-specific tests for occluded_patterns: identifiability re-derived by a naive search over every hypothesis
rule, periods and counts recounted cell by cell, the moved-A counterfactual, the minimal pair, and scenes worked on
paper."""
from dataclasses import replace
from math import gcd

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip import domains
from grip.builder import generate
from grip.domain import Reject
from grip.domains.projective import occluded_patterns as op
from grip.draws import Draws
from grip.seeding import item_seed

DOM = domains.get("occluded_patterns")
SCENES = [generate(DOM, item_seed("op-tests", DOM.id, i), 1 + i % 3).scene for i in range(36)]
PICK = st.sampled_from(SCENES)
FEW = settings(max_examples=30, deadline=None)


def paper_scene(a=(1, 1, 3, 2), target=("blue", "square")) -> op.Scene:
    # 5 x 5. Shape by column, c mod 3: circle, square, triangle, circle, square. Colour by row, r mod 2: red, blue,
    # red, blue, red.
    return op.Scene(1, 5, 5, (3, 0, 1), ("circle", "square", "triangle"), (2, 1, 0), ("red", "blue"), (0, 0),
                    ("large", "small"), (a,), target, (2, 1))


def cell(s, r, c):
    return s.colour_names[(s.colour_rule[1] * r + s.colour_rule[2] * c) % s.colour_rule[0]], \
        s.shape_names[(s.shape_rule[1] * r + s.shape_rule[2] * c) % s.shape_rule[0]]


def naive_identified(s: op.Scene, attr: int) -> bool:
    """Every rule (m, a, b) with an unknown injective naming that fits the visible cells names every hidden cell as
    it truly is (attr 0 colour, 1 shape)."""
    hidden = set(op.hidden_cells(s))
    cells = [(r, c) for r in range(s.rows) for c in range(s.cols)]
    for m in (2, 3, 4):
        for a in range(m):
            for b in range(m):
                seen: dict[int, str] = {}
                fits = True
                for r, c in cells:
                    if (r, c) in hidden:
                        continue
                    k, name = (a * r + b * c) % m, cell(s, r, c)[attr]
                    if seen.setdefault(k, name) != name:
                        fits = False
                if not fits or len(set(seen.values())) != len(seen):
                    continue
                for r, c in hidden:
                    if seen.get((a * r + b * c) % m) != cell(s, r, c)[attr]:
                        return False
    return True


def row_period(seq_rows) -> int:
    n = len(seq_rows[0])
    return next(p for p in range(1, n + 1) if all(row[i] == row[i + p] for row in seq_rows for i in range(n - p)))


# --- worked on paper ---------------------------------------------------------------------------------------------

def test_paper_scene_answers():
    # A covers printed rows 2-4, columns 2-3: blue square, blue triangle / red square, red triangle / blue square,
    # blue triangle. Six hidden cells, two blue squares. Shapes repeat every 3 along a row, colours every 2 down a
    # column. Moved right, A covers columns 3-4: triangles and circles, no blue square. Row 3, column 2 is a red
    # square.
    s = paper_scene()
    lad = op.ladder(s)
    assert [q.answer.reference_text() for q in lad.questions] == [
        "6", "3", "shape=square; colour=red", "2", "0", "period=2"]
    assert "one column to the right" in lad.rungs[4].text and "contain a blue square?" in lad.rungs[3].text
    # Witnesses: triangles show only in column 3, rows 1 and 5 (2 cells); blue shows in rows 2 and 4 outside A
    # (3 + 3 = 6 cells).
    assert [q.margin.value for q in lad.rungs[1:]] == [2, 2, 2, 2] and lad.open.margin.value == 6
    assert not lad.failing_margins()


def test_paper_minimal_pair_and_its_failure():
    # A one row down covers rows 3-5: red, blue, red -> one blue square (Q4 2 -> 1); row 3, column 2 stays hidden.
    twin = op.minimal_pair(paper_scene())
    assert twin.occluders == ((2, 1, 3, 2),)
    assert op.hidden_kind_count(twin).value == 1
    # Two rows tall, A always spans one red and one blue row: moving it a row keeps one red square under it.
    with pytest.raises(Reject):
        op.minimal_pair(paper_scene(a=(1, 1, 2, 2), target=("red", "square")))


def test_paper_move_left_at_the_right_border():
    # A at columns 4-5 touches the right border: Q5 moves it left, onto columns 3-4 (triangle, circle).
    s = paper_scene(a=(1, 3, 2, 2), target=("blue", "triangle"))
    assert op.move_step(s) == -1
    assert op.edit(s).occluders == ((1, 2, 2, 2),)
    assert op.counterfactual(op.edit(s)).value == 1     # row 2, column 3: blue triangle
    assert "to the left" in op.ladder(s).rungs[4].text


def test_a_residue_seen_nowhere_is_not_identified():
    # Shapes by column with period 4 and column 3 (residue 2) hidden in every row but one: that one row shows it.
    # Hide the whole column and no visible cell names residue 2.
    names = np.array([(c % 4) for r in range(5) for c in range(5)])
    hidden = np.zeros(25, dtype=bool)
    hidden[[r * 5 + 2 for r in range(5)]] = True
    assert not op.identified(names, hidden, 5, 5)
    hidden[2] = False
    assert op.identified(names, hidden, 5, 5)


# --- properties of sampled scenes --------------------------------------------------------------------------------

@FEW
@given(PICK)
def test_every_consistent_rule_predicts_the_truth(s):
    assert naive_identified(s, 0) and naive_identified(s, 1)


@FEW
@given(PICK)
def test_periods_recounted_from_the_cells(s):
    shapes = [[cell(s, r, c)[1] for c in range(s.cols)] for r in range(s.rows)]
    colours = [[cell(s, r, c)[0] for r in range(s.rows)] for c in range(s.cols)]
    assert op.row_shape_period(s).value == row_period(shapes)
    assert op.column_colour_period(s).fields["period"].value == row_period(colours)


@FEW
@given(PICK)
def test_counts_and_counterfactual_recounted(s):
    hid = op.hidden_cells(s)
    assert op.hidden_count(s).value == len(hid)
    assert op.hidden_kind_count(s).value == sum(cell(s, r, c) == s.target for r, c in hid)
    r0, c0, h, w = s.occluders[0]
    step = op.move_step(s)
    moved = [(r, c + step) for r in range(r0, r0 + h) for c in range(c0, c0 + w)]
    assert op.ladder(s).rungs[4].answer.value == sum(cell(s, r, c) == s.target for r, c in moved)
    assert op.ladder(s).rungs[4].answer == op.counterfactual(op.edit(s))
    r, c = s.probe
    assert s.probe in hid and op.probe_contents(s).reference_value() == {"shape": cell(s, r, c)[1],
                                                                          "colour": cell(s, r, c)[0]}


@FEW
@given(PICK)
def test_witness_margin_recounted(s):
    hidden = set(op.hidden_cells(s))
    vis = [(r, c) for r in range(s.rows) for c in range(s.cols) if (r, c) not in hidden]
    for attr, rule in ((1, s.shape_rule), (0, s.colour_rule)):
        m, a, b = rule
        values = {(a * r + b * c) % m for r in range(s.rows) for c in range(s.cols)}
        w = min(sum((a * r + b * c) % m == v for r, c in vis) for v in values)
        assert w >= op.WITNESS_MIN[s.level]
        assert w == op.witness(rule, op._mask(s), s.rows, s.cols)


@FEW
@given(PICK)
def test_structure_per_level(s):
    assert 5 <= s.rows <= 8 and 5 <= s.cols <= 8
    assert len(s.occluders) == (2 if s.level == 3 else 1)
    assert 4 <= len(op.hidden_cells(s)) <= 12
    for r0, c0, h, w in s.occluders:
        assert 2 <= h <= s.rows - 1 and 2 <= w <= s.cols - 1 and r0 >= 0 and c0 >= 0
        assert r0 + h <= s.rows and c0 + w <= s.cols
    assert s.occluders[0][3] <= 3
    if s.level == 3:
        assert op._apart(*s.occluders)
        assert len(set(s.size_names)) == 2
    else:
        assert {op.size_at(s, r, c) for r in range(s.rows) for c in range(s.cols)} == {"large"}
    for m, a, b in (s.shape_rule, s.colour_rule):
        if s.level == 1:
            assert (a == 0) != (b == 0)
    assert len(set(s.shape_names)) == s.shape_rule[0] and len(set(s.colour_names)) == s.colour_rule[0]


@FEW
@given(PICK)
def test_minimal_pair_moves_a_one_row(s):
    try:
        twin = op.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    (r0, c0, h, w), (r1, c1, h1, w1) = s.occluders[0], twin.occluders[0]
    assert (c1, h1, w1) == (c0, h, w) and abs(r1 - r0) == 1 and twin.occluders[1:] == s.occluders[1:]
    assert op.hidden_kind_count(twin) != op.hidden_kind_count(s)
    assert s.probe in op.hidden_cells(twin)
    assert naive_identified(twin, 0) and naive_identified(twin, 1)
    assert op.hidden_count(twin) == op.hidden_count(s)


@FEW
@given(PICK)
def test_rephrase_is_the_same_count(s):
    q = op.rephrase_q4(s)
    assert q.answer == op.ladder(s).rungs[3].answer and q.text != op.ladder(s).rungs[3].text


def test_period_targets_map_to_rules():
    d = Draws(np.random.default_rng(3))
    for period in (1, 2, 3, 4):
        for level in (1, 2, 3):
            m, along, across = op._rule(d, level, period)
            assert (m // gcd(along, m) if along else 1) == period
            assert (across == 0) == (level == 1 and period > 1)


def test_level_one_q5_table_is_reachable_only():
    # The product structure at level 1: Q4 = 3 with Q5 = 1 would need 3 = x * y and 1 = x * y' with the same x.
    assert 1 not in op.Q5_BY_Q4[1][3] and 3 not in op.Q5_BY_Q4[1][1]
    s = replace(paper_scene(), level=1)
    assert op.ladder(s).rungs[3].answer.value == 2


def plain_identified(names, hidden, rows, cols) -> bool:
    """`identified` cell by cell: every rule whose residues name the visible cells injectively names each hidden
    cell as `names` does."""
    cells = [(i, divmod(i, cols)) for i in range(rows * cols)]
    for m in (2, 3, 4):
        for a in range(m):
            for b in range(m):
                seen: dict[int, int] = {}
                if any(seen.setdefault((a * r + b * c) % m, names[i]) != names[i]
                       for i, (r, c) in cells if not hidden[i]) or len(set(seen.values())) != len(seen):
                    continue
                if any(seen.get((a * r + b * c) % m) != names[i] for i, (r, c) in cells if hidden[i]):
                    return False
    return True


def test_identified_matches_a_plain_search():
    rng = np.random.default_rng(5)
    results = set()
    for _ in range(120):
        rows, cols = (int(x) for x in rng.integers(5, 9, size=2))
        m, a, b = op.oc.RULES[int(rng.integers(len(op.oc.RULES)))]
        names = rng.permutation(4)[:m][[(a * r + b * c) % m for r in range(rows) for c in range(cols)]]
        hidden = rng.random(rows * cols) < rng.choice((0.1, 0.3, 0.6))
        got = op.identified(names, hidden, rows, cols)
        assert got == plain_identified(names, hidden, rows, cols)
        results.add(got)
    assert results == {True, False}


def test_hits_match_a_plain_enumeration():
    # Every A in (row0, col0, h, w) order that `move_step` and `_pair_rect` can move, hiding 4..12 cells with B; then
    # every (kind, A) with the wanted counts, kinds ascending.
    for s in SCENES[:4]:
        b = s.occluders[1] if s.level == 3 else None
        rows = []
        for r0 in range(s.rows):
            for c0 in range(s.cols):
                for h in range(2, s.rows):
                    for w in range(2, min(3, s.cols - 1) + 1):
                        t = replace(s, occluders=((r0, c0, h, w),) + s.occluders[1:])
                        area = len(op.hidden_cells(t))
                        if op._fits(t, (r0, c0, h, w)) and op.move_step(t) and op._pair_rect(t) and 4 <= area <= 12:
                            rows.append((r0, c0, h, w, c0 + op.move_step(t), op._pair_rect(t)[0]))
        kinds = sorted({op.COLOURS.index(cell(s, r, c)[0]) * 4 + op.SHAPES.index(cell(s, r, c)[1])
                        for r in range(s.rows) for c in range(s.cols)})
        for q4, q5 in ((1, 2), (2, 1)):
            pl, hit_kinds, hit_pl = op._hits(s, b, q4, q5)
            assert [tuple(x) for x in pl.tolist()] == rows
            want = []
            for k in kinds:
                kind = (op.COLOURS[k // 4], op.SHAPES[k % 4])
                for j, (r0, c0, h, w, mc, _) in enumerate(rows):
                    t = replace(s, occluders=((r0, c0, h, w),) + s.occluders[1:])
                    if (op._count(t, kind, op.hidden_cells(t)) == q4
                            and op._count(t, kind, op.cells_of((r0, mc, h, w))) == q5):
                        want.append((k, j))
            assert list(zip(hit_kinds.tolist(), hit_pl.tolist())) == want
