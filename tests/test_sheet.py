"""Contact-sheet captions: attempts in words, the margin tag, and answers wrapped or shortened between values, never
cut in the middle of one."""
from types import SimpleNamespace

from grip.answers import Choice, Count, Record
from grip.domain import Ladder, Margin, Question
from grip.sheet import LEGEND, cell_lines, margin_tag


def fits(text: str, width: float) -> bool:   # a monospaced measure: one unit per character
    return len(text) <= width


def _item(open_answer, attempts=1):
    m = Margin(3.0, "px", 2.0, "two marks too close")
    rungs = tuple(Question(i, f"q{i}", "?", Count(i), m) for i in range(1, 6))
    return SimpleNamespace(attempts=attempts, ladder=Ladder(rungs, Question(6, "why", "?", open_answer, m)))


def _values(record) -> list[str]:
    return [f"{n}={a.reference_text()}" for n, a in record.value]


def test_attempts_are_counted_in_words():
    assert cell_lines("#0", _item(Count(1)), fits, 60)[0] == "#0  (1 attempt)"
    assert cell_lines("#0", _item(Count(1), attempts=7), fits, 60)[0] == "#0  (7 attempts)"


def test_margin_tag_and_its_legend():
    assert margin_tag(Margin(3.0, "px", 2.0)) == "[m 1.5×]" and margin_tag(Margin(3.0, "px", 0.0)) == "[m –]"
    assert "margin ÷ rejection threshold" in LEGEND and "[m –]" in LEGEND


def test_a_long_open_answer_wraps_between_fields():
    rec = Record(tuple((f"field{i}", Choice(f"value{i}", (f"value{i}", "other"))) for i in range(4)))
    lines = cell_lines("#0", _item(rec), fits, 34)
    open_lines = lines[6:]
    assert len(open_lines) > 1 and all(len(x) <= 34 for x in lines)
    text = " ".join(x.strip() for x in open_lines)
    for v in _values(rec):
        assert v in text                                     # every value whole, none cut at the edge
    assert text.endswith("[m 1.5×]")


def test_too_long_an_answer_is_shortened_at_a_value_boundary():
    rec = Record(tuple((f"f{i}", Choice(f"v{i}", (f"v{i}", "w"))) for i in range(40)))
    lines = cell_lines("#0", _item(rec), fits, 30, max_lines=9)
    assert len(lines) <= 9 and lines[-1].endswith("…")
    shown = " ".join(x.strip() for x in lines[6:]).rstrip(" …").rstrip(";")
    pieces = [p.strip() for p in shown.split(":", 1)[1].split(";")]
    assert pieces and all(p in _values(rec) for p in pieces)   # whole values only
