"""Typed answers: parsing never crashes, the reference scores correct, near misses score wrong, tolerances hold at
the boundary, JSON round-trips."""
import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from grip.answers import (Choice, Count, Number, Ordered, Record, Unparsed, answer_from_json,
                          extract_answer_line)

counts = st.builds(lambda v, lo, span: Count(v + lo, low=lo, high=lo + v + span),
                   st.integers(0, 50), st.integers(0, 3), st.integers(0, 5))
numbers = st.builds(
    lambda v, tol, dec, rel: Number(round(v, dec), tol, "rpm", decimals=dec, tol_kind="rel" if rel else "abs",
                                    low=0.0),
    st.floats(0.5, 5000, allow_nan=False), st.floats(0.01, 5), st.integers(0, 2), st.booleans())
angles = st.builds(lambda v, tol: Number(float(v), tol, "degrees", period=360.0),
                   st.integers(0, 359), st.sampled_from([1.0, 2.0, 5.0]))
choices = st.lists(st.sampled_from(["left", "right", "directly above", "stable", "tips at A-B", "clockwise",
                                    "counterclockwise", "does not turn"]), min_size=2, max_size=5, unique=True) \
    .flatmap(lambda opts: st.builds(lambda i: Choice(opts[i], tuple(opts)), st.integers(0, len(opts) - 1)))
ordereds = st.lists(st.sampled_from("BCDEFG"), unique=True, max_size=6).map(
    lambda v: Ordered(tuple(sorted(v)), "alphabetical order", tuple("BCDEFG"), as_set=True))
scalars = st.one_of(counts, numbers, angles, choices, ordereds)
records = st.lists(scalars, min_size=1, max_size=3).map(
    lambda fs: Record(tuple((f"f{i}", a) for i, a in enumerate(fs))))
answers = st.one_of(scalars, records)


@given(answers, st.text(max_size=200))
def test_parse_never_crashes(ans, text):
    for t in (text, "ANSWER: " + text, text + "\nANSWER:" + text):
        parsed = ans.parse(t)
        assert isinstance(ans.matches(parsed), bool)


@given(answers, st.sampled_from(["", "I think...\n", "Step 1: look.\nANSWER: wrong guess\nOn reflection:\n"]),
       st.sampled_from(["ANSWER: ", "**ANSWER:** ", "Answer: ", "answer:  "]))
def test_reference_answer_scores_correct(ans, preamble, keyword):
    assert ans.in_space()
    assert ans.matches(ans.parse(preamble + keyword + ans.reference_text()))


@given(answers, st.integers(0, 2**32 - 1))
def test_plausible_wrong_scores_wrong(ans, seed):
    rng = np.random.default_rng(seed)
    w = ans.plausible_wrong(rng)
    assert not ans.matches(w)
    assert not ans.matches(ans.parse("ANSWER: " + ans.format_value(w)))


@given(answers)
def test_json_round_trip(ans):
    assert answer_from_json(json.loads(json.dumps(ans.to_json()))) == ans


@given(st.floats(1, 1000), st.floats(0.1, 10), st.sampled_from([-1, 1]))
def test_absolute_tolerance_boundary(v, tol, sign):
    a = Number(v, tol, "px", decimals=3)
    assert a.matches(v + sign * tol)
    assert not a.matches(v + sign * tol * 1.001 + sign * 1e-6)


def test_relative_tolerance_is_a_fraction_of_the_value():
    a = Number(200.0, 0.01, "rpm", tol_kind="rel", decimals=1)
    assert a.matches(202.0) and a.matches(198.0)
    assert not a.matches(202.1) and not a.matches(197.9)


@given(st.integers(0, 359), st.floats(0, 4.99))
def test_circular_difference_wraps(v, d):
    a = Number(float(v), 5.0, "degrees", period=360.0)
    assert a.matches((v + d) % 360) and a.matches((v - d) % 360)
    assert not a.matches((v + 180) % 360)


def test_answer_line_is_the_last_one():
    assert extract_answer_line("ANSWER: 3\nthinking again\nANSWER: 4") == "4"
    assert isinstance(extract_answer_line("the answer is 4"), Unparsed)
    assert isinstance(extract_answer_line("ANSWER:   "), Unparsed)


def test_unparsed_is_not_wrong():
    c = Count(4)
    assert isinstance(c.parse("ANSWER: four or five"), Unparsed)
    assert isinstance(c.parse("no answer here"), Unparsed)
    assert c.parse("ANSWER: four") == 4
    assert not c.matches(c.parse("ANSWER: 2.5"))


def test_choice_normalises_case_whitespace_and_dashes():
    c = Choice("tips at A-B", ("stable", "tips at A-B", "tips at B-C"))
    assert c.matches(c.parse("ANSWER:  Tips  at A\u2013B."))
    assert isinstance(c.parse("ANSWER: maybe stable"), Unparsed)


def test_choice_aliases_are_fixed_per_question():
    c = Choice("counterclockwise", ("clockwise", "counterclockwise"), aliases=(("anticlockwise", "counterclockwise"),))
    assert c.matches(c.parse("ANSWER: anticlockwise"))
    assert not Choice("counterclockwise", ("clockwise", "counterclockwise")).matches(
        Choice("counterclockwise", ("clockwise", "counterclockwise")).parse("ANSWER: anticlockwise"))


def test_ordered_set_and_empty():
    o = Ordered(("B", "D"), "alphabetical order", tuple("BCDE"), as_set=True)
    assert o.matches(o.parse("ANSWER: D, B"))
    assert not o.matches(o.parse("ANSWER: B, C, D"))
    e = Ordered((), "alphabetical order", tuple("BCDE"), as_set=True)
    assert e.reference_text() == "none" and e.matches(e.parse("ANSWER: none"))
    seq = Ordered(("3", "1", "2"), "the order shown")
    assert not seq.matches(seq.parse("ANSWER: 1, 2, 3"))


def test_record_missing_field_is_wrong_not_unparsed():
    r = Record((("hour", Count(3, 1, 12)), ("minute", Number(25.0, 1.0, "minutes"))))
    p = r.parse("ANSWER: hour=3")
    assert p == {"hour": 3} and not r.matches(p)
    assert r.matches(r.parse("ANSWER: minute = 26; Hour: 3"))
    assert isinstance(r.parse("ANSWER: 3:25"), Unparsed)
    assert r.field_matches({"hour": 3, "minute": 30}) == {"hour": True, "minute": False}


@pytest.mark.parametrize("ans", [Count(3), Number(2.5, 0.1, "m", decimals=1), Choice("a", ("a", "b")),
                                 Ordered(("B",), "alphabetical order", ("B", "C"), as_set=True)])
def test_instruction_names_the_format(ans):
    text = ans.instruction()
    assert text.startswith("Answer") and text.endswith(".")


def test_out_of_space_detected():
    assert not Choice("target_density", ("a", "b")).in_space()
    assert not Count(13, 1, 12).in_space()
    assert not Number(float("nan"), 1, "x").in_space()
    assert not Ordered(("C", "B"), "alphabetical order", ("B", "C"), as_set=True).in_space()
