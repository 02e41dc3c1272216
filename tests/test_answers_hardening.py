"""Answer parsing under the forms models really write: every minus spelling (never a flipped or dropped sign), the
question's own unit written after the number, an empty `ANSWER:` line, repeated record fields, records with commas
or as JSON, `[]` for an empty list and `counter clockwise`."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from grip.answers import MINUS_SIGNS, Choice, Count, Number, Ordered, Record, Unparsed, read_number
from grip.domain import Reject
from grip.domains import REGISTRY, get
from grip.eval.scoring import score_response

# Every way of writing a minus sign the parser accepts; each must make the number negative.
MINUS_SPELLINGS = ["-", "\u2212", "\u2013", "\u2014", "\u2012", "\u2010", "\u2011", "\u2015", "\ufe63", "\uff0d",
                   "\u2212 ", "- ", "minus ", "Minus ", "negative ", "NEGATIVE "]
# The units the v1 domains state in their instructions (gauge_reading's `×1000 rpm` has a number in it).
UNITS = ["×1000 rpm", "°C", "%", "km/h", "bar", "A", "V", "kPa", "N", "m", "m/s", "km", "rpm", "minutes",
         "degrees", "units", "square units"]


@pytest.mark.parametrize("minus", MINUS_SPELLINGS)
def test_every_minus_form_reads_negative(minus):
    a = Number(-60.0, 1.0, "°C", decimals=0)
    assert a.parse(f"ANSWER: {minus}60 °C") == -60.0
    assert a.matches(a.parse(f"ANSWER: {minus}60"))
    assert not Number(60.0, 1.0, "°C").matches(Number(60.0, 1.0, "°C").parse(f"ANSWER: {minus}60 °C"))


def test_the_scorer_does_not_flip_signs():
    plus, minus = Number(60.0, 1.0, "°C"), Number(-10.0, 0.5, "N", decimals=1)
    assert score_response(plus, "ANSWER: \u221260 °C")["outcome"] == "wrong"
    for text in ("ANSWER: \u221210", "ANSWER: minus 10", "ANSWER: \u2013 10 N", "ANSWER: negative 10.0 N"):
        assert score_response(minus, text)["outcome"] == "correct", text


@given(v=st.floats(0, 5000, allow_nan=False), decimals=st.integers(0, 3), minus=st.sampled_from(MINUS_SPELLINGS),
       unit=st.sampled_from(UNITS), with_unit=st.sampled_from(["", " ", "\u00a0"]))
def test_formatted_value_with_any_minus_parses_back(v, decimals, minus, unit, with_unit):
    a = Number(round(v, decimals), 0.5, unit, decimals=decimals)
    text = a.format_value(a.value)
    suffix = with_unit + unit if with_unit else ""
    assert a.parse_value(text + suffix) == float(text)
    assert a.parse_value("+" + text + suffix) == float(text)
    assert a.parse_value(minus + text + suffix) == -float(text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), st.sampled_from(UNITS))
def test_a_positive_number_never_parses_negative(text, unit):
    """Text with no minus form and no sign word in it never reads as a negative number."""
    folded = text.lower()
    if any(c in text for c in MINUS_SIGNS) or "minus" in folded or "negative" in folded:
        return
    for t in (text, "5 " + text, text + " 5"):
        x = read_number(t, unit)
        assert isinstance(x, Unparsed) or x >= 0, (t, x)


@pytest.mark.parametrize("text", ["--5", "\u2212-5", "minus -5", "negative minus 5", "\u00b15", "5-", "5\u2212",
                                  "5 below zero", "5 (negative)", "x-5", "\u301c5", "+-5"])
def test_ambiguous_signs_are_unparsed(text):
    assert isinstance(Number(5.0, 0.5, "N").parse_value(text), Unparsed)
    assert isinstance(Count(5).parse_value(text), Unparsed)


def test_zero_has_no_sign_to_lose():
    a = Number(0.0, 0.05, "N", decimals=2)
    assert a.parse("ANSWER: 0.00 N (neither positive nor negative)") == 0.0
    assert a.matches(a.parse("ANSWER: \u22120.00 N"))


def test_count_keeps_the_sign():
    assert Count(2).parse("ANSWER: minus 2") == -2
    assert not Count(2).matches(Count(2).parse("ANSWER: \u22122"))
    assert Count(2).parse("ANSWER: 2") == 2


@pytest.mark.parametrize("text", ["8.25 ×1000 rpm", "8.25×1000 rpm", "8.25 x1000 rpm", "8.25 × 1000 RPM",
                                  "8.25 (×1000 rpm)", "8.25 rpm", "8.25"])
def test_the_stated_unit_is_stripped_before_the_number_is_read(text):
    a = Number(8.25, 0.05, "×1000 rpm", decimals=2)
    assert a.parse("ANSWER: " + text) == 8.25
    assert score_response(a, "ANSWER: " + text)["outcome"] == "correct"


def test_a_unit_is_not_cut_out_of_a_word():
    assert Number(-3.0, 0.1, "m", decimals=1).parse_value("minus 3 m") == -3.0
    assert Number(-3.0, 0.1, "N", decimals=1).parse_value("negative 3 N") == -3.0
    # Another multiplier than the unit's own is not stripped: two numbers, unparsed.
    assert isinstance(Number(8.25, 0.05, "×1000 rpm").parse_value("8.25 ×100 rpm"), Unparsed)


def _numbers_of(answer):
    if isinstance(answer, Number):
        return [answer]
    if isinstance(answer, Record):
        return [a for _, a in answer.value if isinstance(a, Number)]
    return []


def _ladders(dom, k: int):
    for i in range(40):
        if k == 0:
            return
        try:
            lad = dom.ladder(dom.sample(np.random.default_rng(i), dom.levels[i % len(dom.levels)]))
        except Reject:
            continue
        k -= 1
        yield lad


@pytest.mark.parametrize("domain", list(REGISTRY))
def test_reference_answers_written_with_their_unit_score_correct(domain):
    """Every Number of the domains' ladders, written as the instruction asks (its value, then its unit), scores
    correct; negative references also with U+2212."""
    dom = get(domain)
    for lad in _ladders(dom, 6):
        for q in lad.questions:
            for a in _numbers_of(q.answer):
                ref = a.reference_text()
                for text in (f"{ref} {a.unit}", f"{ref}{a.unit}", ref.replace("-", "\u2212") + " " + a.unit):
                    assert a.matches(a.parse("ANSWER: " + text)), (domain, q.id, text)
            if isinstance(q.answer, Record):
                text = ", ".join(f"{n}={f.reference_text()} {getattr(f, 'unit', '')}" for n, f in q.answer.value)
                assert q.answer.matches(q.answer.parse("ANSWER: " + text)), (domain, q.id, text)


def test_gauge_readings_in_thousands_of_rpm_parse():
    dom = get("gauge_reading")
    found = 0
    for i in range(300):
        try:
            lad = dom.ladder(dom.sample(np.random.default_rng(i), 1))
        except Reject:
            continue
        for q in lad.questions:
            for a in _numbers_of(q.answer):
                if a.unit == "×1000 rpm":
                    found += 1
                    assert a.matches(a.parse(f"ANSWER: {a.reference_text()} ×1000 rpm")), (q.id, a)
        if found >= 3:
            break
    assert found >= 3


def test_an_empty_answer_line_is_unparsed_not_the_next_line():
    for a in (Count(80), Number(80.0, 1.0, "%"), Choice("a", ("a", "b"))):
        for text in ("ANSWER:\nCONFIDENCE: 80", "ANSWER:   \n80", "**ANSWER:**\r\n80", "ANSWER:\n\na"):
            assert isinstance(a.parse(text), Unparsed), (a, text)
    r = Record((("rise", Number(5.0, 0.5, "bar")),))
    assert isinstance(r.parse("ANSWER:\nrise=5\nCONFIDENCE: 70"), Unparsed)
    assert r.parse("ANSWER: rise=5\nJUSTIFICATION: read it\nCONFIDENCE: 70") == {"rise": 5.0}


def test_a_record_field_given_twice_is_unparsed():
    r = Record((("hour", Count(3, 1, 12)), ("minute", Number(25.0, 1.0, "minutes"))))
    for text in ("hour=3; minute=25; hour=4", "hour=4; hour=3; minute=25", "hour=3, Hour: 3, minute=25",
                 '{"hour": 3, "minute": 25, "hour": 4}'):
        assert isinstance(r.parse("ANSWER: " + text), Unparsed), text


def test_records_with_commas_or_as_json_parse():
    r = Record((("fx", Number(-3.2, 0.05, "N", decimals=2)), ("fy", Number(1.5, 0.05, "N", decimals=2)),
                ("side", Choice("left", ("left", "right")))))
    want = {"fx": -3.2, "fy": 1.5, "side": "left"}
    for text in ("fx=-3.2, fy=1.5, side=left", "fx = \u22123.20 N, fy = 1.50 N, side: Left",
                 '{"fx": -3.2, "fy": 1.5, "side": "left"}', '{"fx": "\u22123.2 N", "fy": "1.5", "side": "LEFT"}',
                 "fx=-3.2; fy=1.5; side=left"):
        p = r.parse("ANSWER: " + text)
        assert p == want and r.matches(p), (text, p)
    # A thousands separator inside a value is not a field separator.
    big = Record((("rpm", Number(1200.0, 1.0, "rpm")), ("n", Count(2))))
    assert big.parse("ANSWER: rpm=1,200, n=2") == {"rpm": 1200.0, "n": 2}
    # Nested JSON objects are not fields of the record.
    assert isinstance(r.parse('ANSWER: {"other": {"fx": -3.2}}'), Unparsed)


def test_an_empty_list_may_be_written_as_brackets():
    o = Ordered((), "alphabetical order", tuple("BCD"), as_set=True)
    for text in ("[]", "[ ]", "`[]`", "none"):
        assert o.parse("ANSWER: " + text) == () and o.matches(o.parse("ANSWER: " + text)), text
    assert Ordered(("B", "C"), "alphabetical order", tuple("BCD"), as_set=True).parse('ANSWER: ["B", "C"]') == \
        ("B", "C")


def test_counter_clockwise_reads_as_counterclockwise():
    from domains.physical.gear_trains import CCW, CW, DIR_ALIASES, STILL
    c = Choice(CCW, (CW, CCW, STILL), aliases=DIR_ALIASES)
    for text in ("counter clockwise", "Counter-Clockwise", "counter\u2013clockwise", "anti clockwise",
                 "counterclockwise"):
        assert c.parse("ANSWER: " + text) == CCW, text
    assert c.parse("ANSWER: clock wise") == CW
    # Folding spaces never merges two options.
    two = Choice("ab", ("ab", "a b"))
    assert two.parse("ANSWER: a b") == "a b" and two.parse("ANSWER: ab") == "ab"
    assert isinstance(two.parse("ANSWER: a-b"), Unparsed)
