"""Scoring: outcomes correct / wrong / unparsed / failed from stored responses and the item store's answer key."""
import hashlib
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grip.answers import Choice, Count, Number, Ordered, Record, answer_from_json
from grip.builder import build
from grip.eval.scoring import (OUTCOMES, ScoringError, read_scored, score_response, score_rows, score_store,
                               write_scored)

DOMAINS = ("physical_stability", "gear_trains", "clock_reading")

SAMPLE_ANSWERS = [
    Count(3, low=0, high=12),
    Number(10.0, 0.5, "cm", decimals=1),
    Number(20.0, 0.05, "rpm", decimals=2, tol_kind="rel"),
    Number(359.0, 2.0, "degrees", decimals=0, period=360.0),
    Choice("left", ("left", "right", "balanced"), aliases=(("l", "left"),)),
    Ordered(("A", "C"), "alphabetical order", options=("A", "B", "C", "D"), as_set=True),
    Ordered(("B", "A"), "order from top to bottom", options=("A", "B", "C")),
    Record((("hour", Count(4, low=1, high=12)), ("minute", Number(30.0, 1.0, "minutes")))),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("items")
    for d in DOMAINS:
        build(d, 5, out, grain_subset=0)
    return out


def _questions(store):
    for d in DOMAINS:
        for line in (store / d / "items.jsonl").read_text().splitlines():
            row = json.loads(line)
            for q in row["questions"]:
                yield row, q


# --- score_response --------------------------------------------------------------------------------------------

@given(text=st.text(max_size=300), idx=st.integers(0, len(SAMPLE_ANSWERS) - 1))
def test_arbitrary_text_never_crashes(text, idx):
    out = score_response(SAMPLE_ANSWERS[idx], text)
    assert out["outcome"] in ("correct", "wrong", "unparsed")
    json.dumps(out)  # scored rows must serialise


@given(body=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
       prefix=st.sampled_from(["", "Reasoning...\n", "**ANSWER:** 3\n", "answer: left\n"]),
       idx=st.integers(0, len(SAMPLE_ANSWERS) - 1))
def test_answer_lines_with_arbitrary_values_never_crash(body, prefix, idx):
    out = score_response(SAMPLE_ANSWERS[idx], f"{prefix}ANSWER: {body}")
    assert out["outcome"] in ("correct", "wrong", "unparsed")


def test_every_reference_answer_scores_correct_and_plausible_wrong_scores_wrong(store):
    rng = np.random.default_rng(7)
    n = 0
    for row, q in _questions(store):
        a = answer_from_json(q["answer"])
        good = score_response(a, f"Let me look.\nANSWER: {a.reference_text()}")
        assert good["outcome"] == "correct", (row["id"], q["id"], a.reference_text(), good)
        wrong_value = a.plausible_wrong(rng)
        bad = score_response(a, f"ANSWER: {a.format_value(wrong_value)}")
        assert bad["outcome"] == "wrong", (row["id"], q["id"], wrong_value, bad)
        n += 1
    assert n == len(DOMAINS) * 5 * 6


@pytest.mark.parametrize("answer, text, outcome", [
    # absolute tolerance: 10 +- 0.5
    (Number(10.0, 0.5, "cm", decimals=1), "10.5", "correct"),
    (Number(10.0, 0.5, "cm", decimals=1), "9.5", "correct"),
    (Number(10.0, 0.5, "cm", decimals=1), "10.51", "wrong"),
    (Number(10.0, 0.5, "cm", decimals=1), "9.49 cm", "wrong"),
    # relative tolerance: 5% of 20 = 1
    (Number(20.0, 0.05, "rpm", decimals=1, tol_kind="rel"), "21", "correct"),
    (Number(20.0, 0.05, "rpm", decimals=1, tol_kind="rel"), "21.01", "wrong"),
    # circular: 359 vs 1 is 2 degrees apart
    (Number(359.0, 2.0, "degrees", period=360.0), "1", "correct"),
    (Number(359.0, 2.0, "degrees", period=360.0), "1.5", "wrong"),
    (Number(359.0, 2.0, "degrees", period=360.0), "357", "correct"),
    (Count(3), "3", "correct"),
    (Count(3), "three", "correct"),
    (Count(3), "4", "wrong"),
    (Count(3), "3.5", "unparsed"),
    (Choice("left", ("left", "right")), "LEFT.", "correct"),
    (Choice("left", ("left", "right")), "right", "wrong"),
    (Choice("left", ("left", "right")), "up", "unparsed"),
    (Record((("hour", Count(4)), ("minute", Number(30.0, 1.0, "minutes")))), "hour=4; minute=31", "correct"),
    (Record((("hour", Count(4)), ("minute", Number(30.0, 1.0, "minutes")))), "hour=4", "wrong"),
    (Record((("hour", Count(4)), ("minute", Number(30.0, 1.0, "minutes")))), "four thirty", "unparsed"),
])
def test_comparators_at_the_boundary(answer, text, outcome):
    assert score_response(answer, f"ANSWER: {text}")["outcome"] == outcome


def test_failed_empty_and_missing_answer_line():
    a = Count(3)
    assert score_response(a, "ANSWER: 3", status="failed")["outcome"] == "failed"
    assert score_response(a, None)["outcome"] == "unparsed"
    assert score_response(a, "   ")["outcome"] == "unparsed"
    out = score_response(a, "It is 3.")
    assert out["outcome"] == "unparsed" and out["reason"]
    # the last ANSWER line counts
    assert score_response(a, "ANSWER: 2\nno wait\nANSWER: 3")["outcome"] == "correct"


def test_record_scores_carry_field_results():
    a = Record((("hour", Count(4)), ("minute", Number(30.0, 1.0, "minutes"))))
    out = score_response(a, "ANSWER: hour=5; minute=30")
    assert out["outcome"] == "wrong" and out["fields"] == {"hour": False, "minute": True}


# --- score_rows over store rows --------------------------------------------------------------------------------

def _store_row(row, q, content, status="ok", model="m", temperature=0.0, experiment="e1", condition="sigma0"):
    key = f"{model}-{temperature}-{experiment}-{condition}-{row['id']}-{q['id']}"
    return {"key": key, "experiment": experiment, "condition": condition, "model": model, "base_url": "http://x",
            "item_id": row["id"], "domain": row["domain"], "question_id": q["id"], "position": q["position"],
            "image_sha256": row["sha256"] if condition == "sigma0" else None,
            "status": status, "http_status": 200 if status == "ok" else 500,
            "error_class": None if status == "ok" else "ServerError", "attempts": 1, "raw_body": "{}",
            "content": content, "response_model": model, "usage": {}, "latency_s": 0.01,
            "sampling": {"temperature": temperature, "max_tokens": 64, "top_p": 1.0, "seed": 0},
            "template_version": "v1", "created_at": "now"}


def test_score_rows_outcomes_counts_and_order(store):
    rows, expect = [], {o: 0 for o in OUTCOMES}
    for k, (row, q) in enumerate(_questions(store)):
        a = answer_from_json(q["answer"])
        kind = OUTCOMES[k % 4]
        content = {"correct": f"ANSWER: {a.reference_text()}",
                   "wrong": f"ANSWER: {a.format_value(a.plausible_wrong(np.random.default_rng(k)))}",
                   "unparsed": "no idea", "failed": None}[kind]
        rows.append(_store_row(row, q, content, status="failed" if kind == "failed" else "ok"))
        expect[kind] += 1
    scored = score_rows(list(reversed(rows)), store)
    got = {o: sum(r["outcome"] == o for r in scored) for o in OUTCOMES}
    assert got == expect
    assert all(r["reason"] == "ServerError" for r in scored if r["outcome"] == "failed")
    assert scored == score_rows(rows, store)  # order-independent, deterministic
    assert {r["family"] for r in scored} == {"physical"}


def test_two_configurations_of_one_model_are_never_pooled(store):
    row, q = next(_questions(store))
    rows = [_store_row(row, q, "ANSWER: 1", temperature=0.0), _store_row(row, q, "ANSWER: 1", temperature=0.7),
            _store_row(row, q, "ANSWER: 1", model="other")]
    labels = sorted(r["model"] for r in score_rows(rows, store))
    assert labels == ["m [temperature=0.0]", "m [temperature=0.7]", "other"]


def test_responses_for_unknown_items_are_an_error(store):
    row, q = next(_questions(store))
    with pytest.raises(ScoringError, match="another item store"):
        score_rows([_store_row(dict(row, id="physical_stability_999999"), q, "ANSWER: 1")], store)
    with pytest.raises(ScoringError, match="no items for domain"):
        score_rows([_store_row(dict(row, domain="compass_bearings"), q, "ANSWER: 1")], store)
    with pytest.raises(ScoringError, match="another item store"):
        score_rows([_store_row(row, dict(q, id="no_such_question"), "ANSWER: 1")], store)


def test_score_store_is_deterministic_and_roundtrips(store, tmp_path):
    from grip.eval.store import ResponseStore
    path = tmp_path / "r.sqlite"
    with ResponseStore(path) as s:
        for k, (row, q) in enumerate(_questions(store)):
            a = answer_from_json(q["answer"])
            r = _store_row(row, q, f"ANSWER: {a.reference_text()}" if k % 2 else "ANSWER: ???")
            r.update(request={"messages": []}, family=row["family"], rung=q["rung"])
            s.put(r)
    one, two = score_store(path, store), score_store(path, store)
    assert one == two and len(one) == len(DOMAINS) * 5 * 6
    write_scored(one, tmp_path / "a.jsonl")
    write_scored(two, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert read_scored(tmp_path / "a.jsonl") == json.loads(json.dumps(one))
    (tmp_path / "c.jsonl").write_text("{not json\n")
    with pytest.raises(ScoringError, match="line 1"):
        read_scored(tmp_path / "c.jsonl")
    with pytest.raises(ScoringError, match="no response store"):
        score_store(tmp_path / "missing.sqlite", store)


# --- the answer key must be the one the run used (image hashes) ------------------------------------------------

@pytest.fixture(scope="module")
def twin_stores(tmp_path_factory):
    """Two item stores with the same item ids: seed 0 and seed 1 (other scenes, other answers), with grain copies."""
    a, b = tmp_path_factory.mktemp("seed0"), tmp_path_factory.mktemp("seed1")
    build("clock_reading", 3, a, grain_subset=None)
    build("clock_reading", 3, b, seed=1, grain_subset=None)
    return a, b


def _first_rows(store_dir):
    return [json.loads(line) for line in (store_dir / "clock_reading" / "items.jsonl").read_text().splitlines()]


def test_scoring_against_another_seeds_item_store_is_refused(twin_stores):
    a, b = twin_stores
    row = _first_rows(a)[0]
    assert _first_rows(b)[0]["id"] == row["id"] and _first_rows(b)[0]["sha256"] != row["sha256"]
    rows = [_store_row(row, q, "ANSWER: 1") for q in row["questions"] if q["position"] <= 5]
    assert len(score_rows(rows, a)) == 5  # the store the run used
    with pytest.raises(ScoringError) as e:
        score_rows(rows, b)
    assert str(e.value) == (f"{row['id']}: image sha256 differs from the one the response was made on; score "
                            f"against the item store the run used")


def test_grain_conditions_are_checked_against_the_grain_copy(twin_stores):
    a, b = twin_stores
    row = _first_rows(a)[0]
    q = row["questions"][0]
    grain = hashlib.sha256((a / "clock_reading" / "grain" / "s25" / f"{row['id']}.png").read_bytes()).hexdigest()
    r = dict(_store_row(row, q, "ANSWER: 1", experiment="e2", condition="sigma25"), image_sha256=grain)
    assert score_rows([r], a)[0]["condition"] == "sigma25"
    with pytest.raises(ScoringError, match="image sha256 differs"):
        score_rows([r], b)
    # the clean image's hash on a grain condition is not the image that was sent
    with pytest.raises(ScoringError, match="image sha256 differs"):
        score_rows([dict(r, image_sha256=row["sha256"])], a)


def test_failed_requests_without_an_image_hash_still_score(twin_stores):
    a, _ = twin_stores
    row = _first_rows(a)[0]
    q = row["questions"][0]
    bad_input = dict(_store_row(row, q, None, status="failed"), image_sha256=None, error_class="BadInput")
    assert score_rows([bad_input], a)[0]["outcome"] == "failed"
    # an answered response must say which image it was made on
    with pytest.raises(ScoringError, match="no image sha256"):
        score_rows([dict(_store_row(row, q, "ANSWER: 1"), image_sha256=None)], a)


# --- read_scored refuses rows it cannot count ------------------------------------------------------------------

def _good_scored(store, tmp_path):
    row, q = next(_questions(store))
    rows = score_rows([_store_row(row, q, "ANSWER: 1"), _store_row(row, row["questions"][1], "ANSWER: 1")], store)
    return json.loads(json.dumps(rows))


@pytest.mark.parametrize("field, value", [
    ("position", "one"), ("position", 0), ("position", 1.0), ("position", True), ("position", None), ("model", None), ("model", ""),
    ("model", 3), ("experiment", "e7"), ("experiment", None), ("condition", "sigma99"), ("condition", "clean"),
    ("condition", None), ("item_id", None), ("domain", ["x"]), ("family", None), ("outcome", ["correct"]),
    ("question_id", None), ("key", 5),
])
def test_read_scored_refuses_bad_field_types(store, tmp_path, field, value):
    rows = _good_scored(store, tmp_path)
    rows[1][field] = value
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ScoringError) as e:
        read_scored(path)
    assert str(e.value) == f"{path}: line 2 is not a scored row; rerun `grip eval score`"


def test_read_scored_refuses_an_e1_row_on_a_grain_condition(store, tmp_path):
    rows = _good_scored(store, tmp_path)
    rows[0]["condition"] = "sigma15"   # valid for e2, not for e1
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ScoringError, match="line 1 is not a scored row"):
        read_scored(path)


def test_read_scored_refuses_a_duplicated_row(store, tmp_path):
    rows = _good_scored(store, tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + [rows[0]]))
    with pytest.raises(ScoringError) as e:
        read_scored(path)
    msg = str(e.value)
    assert "\n" not in msg and "line 3" in msg and rows[0]["key"] in msg and "line 1" in msg
    # the same response under another key is still counted twice: refused too
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + [dict(rows[0], key="other")]))
    with pytest.raises(ScoringError, match="line 3"):
        read_scored(path)
    # the untouched file reads
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_scored(path) == rows
