"""grip.score and the other training rewards: the same verdicts as the offline scorer, on item-store rows and on
Hub rows (answers as JSON strings), and the consistency reward over rung 4 and its rephrasing."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import grip
from grip.answers import answer_from_json
from grip.builder import generate
from grip import domains as registry
from grip.eval.scoring import score_response
from grip.hub import hub_row
from grip.rewards import RewardError
from grip.seeding import item_seed

DOMAINS = ("clock_reading", "compass_bearings", "nested_squares", "route_puzzles")


def _row(domain: str, index: int) -> dict:
    """An item-store-shaped row (undrawn), with the rephrasing of rung 4 as the builder records it."""
    dom = registry.get(domain)
    g = generate(dom, item_seed("rewards", domain, index), 1 + index % 3, render=False)
    reph = dict(dom.rephrase_q4(g.scene).to_json(), map=dom.rephrase_map)
    return {"id": f"{domain}_{index:06d}", "domain": domain, "family": dom.family, "index": index,
            "seed": 0, "level": 1 + index % 3, "width": 768, "height": 768, "scene": dom.scene_to_json(g.scene),
            "margin_min": g.ladder.margin_min(), "questions": [q.to_json() for q in g.ladder.questions],
            "rephrase": reph}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [_row(d, i) for d in DOMAINS for i in range(3)]


def _responses(answer, rng) -> list[str]:
    right = answer.reference_text()
    wrong = answer.format_value(answer.plausible_wrong(rng))
    return [f"It reads so.\nANSWER: {right}", f"ANSWER: {wrong}", "no answer line at all", "", f"ANSWER: {right}\n"
            f"ANSWER: {wrong}"]


def test_score_is_the_offline_scorers_verdict_on_every_question(rows):
    rng = np.random.default_rng(7)
    seen = set()
    for row in rows:
        for pos in (1, 2, 3, 4, 5, 6, "rephrase"):
            q = row["rephrase"] if pos == "rephrase" else row["questions"][pos - 1]
            answer = answer_from_json(q["answer"])
            for text in _responses(answer, rng):
                outcome = score_response(answer, text)["outcome"]
                assert grip.score(row, text, pos) == (1.0 if outcome == "correct" else 0.0), (row["id"], pos, text)
                assert grip.format_reward(row, text, pos) == (0.0 if outcome == "unparsed" else 1.0)
                seen.add(outcome)
    assert seen == {"correct", "wrong", "unparsed"}


def test_a_hub_row_scores_like_its_item_row(rows):
    rng = np.random.default_rng(3)
    for row in rows:
        hub = hub_row(row, b"png", core=20)
        hub["rephrase"] = json.dumps(row["rephrase"])
        assert isinstance(hub["questions"][0]["answer"], str)
        for pos in (1, 4, 6, "rephrase"):
            q = row["rephrase"] if pos == "rephrase" else row["questions"][pos - 1]
            for text in _responses(answer_from_json(q["answer"]), rng):
                assert grip.score(hub, text, pos) == grip.score(row, text, pos)


def test_hand_worked_clock_answers():
    row = {"id": "x", "questions": [
        {"position": 1, "id": "hour_hand", "answer": {"type": "count", "value": 7, "low": 0, "high": 12}},
        {"position": 3, "id": "minutes", "answer": json.dumps(
            {"type": "number", "value": 42.0, "tol": 2.0, "unit": "min", "decimals": 0})}]}
    assert grip.score(row, "ANSWER: 7", 1) == 1.0
    assert grip.score(row, "ANSWER: 8", 1) == 0.0
    assert grip.score(row, "ANSWER: 44 min", 3) == 1.0      # within the tolerance of 2
    assert grip.score(row, "ANSWER: 44.5 min", 3) == 0.0
    assert grip.format_reward(row, "ANSWER: 44.5 min", 3) == 1.0
    assert grip.score_batch([row, row, row], ["ANSWER: 7", "ANSWER: 9", "ANSWER: 41"], [1, 1, 3]) == [1.0, 0.0, 1.0]
    assert grip.score_batch([row, row], ["ANSWER: 7", "seven"], 1) == [1.0, 0.0]


def test_consistency_rewards_agreement_of_the_two_wordings(rows):
    rng = np.random.default_rng(11)
    for row in rows:
        a4 = answer_from_json(row["questions"][3]["answer"])
        ar = answer_from_json(row["rephrase"]["answer"])
        r4, w4 = f"ANSWER: {a4.reference_text()}", f"ANSWER: {a4.format_value(a4.plausible_wrong(rng))}"
        rr, wr = f"ANSWER: {ar.reference_text()}", f"ANSWER: {ar.format_value(ar.plausible_wrong(rng))}"
        assert grip.consistency_reward(row, r4, rr) == 1.0
        assert grip.consistency_reward(row, w4, wr) == 1.0
        assert grip.consistency_reward(row, r4, wr) == 0.0
        assert grip.consistency_reward(row, w4, rr) == 0.0
        assert grip.consistency_reward(row, r4, "no idea") == 0.0


def test_bad_calls_are_one_line_errors(rows):
    row = rows[0]
    for pos in (0, 7, True, "q4"):
        with pytest.raises(RewardError, match="position must be"):
            grip.score(row, "ANSWER: 1", pos)
    with pytest.raises(RewardError, match="no rephrasing"):
        grip.score({k: v for k, v in row.items() if k != "rephrase"}, "ANSWER: 1", "rephrase")
    with pytest.raises(RewardError, match="item row"):
        grip.score({"id": "x"}, "ANSWER: 1", 1)
    with pytest.raises(RewardError, match="2 rows but 1 responses"):
        grip.score_batch([row, row], ["ANSWER: 1"], 1)


def test_rewards_import_no_evaluation_machinery():
    code = ("import sys, grip; grip.score; "
            "print(sorted(m for m in sys.modules if m.startswith(('grip.eval', 'openai', 'datasets', 'matplotlib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
