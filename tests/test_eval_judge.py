"""The semantic validator (`grip eval score --judge`): a scripted judge on its own local server (not audited: it is
shown the key by design) sees only the responses the rules found wrong or unparsed, text only; a YES moves them to
correct, a NO / unclear reply / failed call leaves the rule verdict, and nothing ever moves to wrong. Judge calls are
stored under their own experiment, a rerun asks nothing twice, and the report shows strict and validated scores."""
import json
import re

import numpy as np
import pytest
from cli_helpers import no_report_figures, ok, one_line_error, run
from openai_server import Fault, ScriptedServer, image_digest, truth_index

from grip.answers import answer_from_json
from grip.eval.judge import JUDGE_EXPERIMENT, read_verdict
from grip.eval.prompts import prompt_text
from grip.eval.scoring import ScoringError, read_scored
from grip.eval.store import ResponseStore


DOMAIN = "clock_reading"
N = 3


def kind(index: int, position: int) -> str:
    """The scripted model: right, wrong, an answer the rules cannot parse but a reader would accept, or a reply the
    judge fails on / is unclear about."""
    return {0: "right", 1: "wrong", 2: "paraphrase"}[index] if position != 5 else "judge_fails" if index == 2 \
        else {0: "right", 1: "unclear"}[index]


def _model(truth):
    def answer(req):
        row = truth[image_digest(req)]
        text = next(p["text"] for p in req["messages"][0]["content"] if p["type"] == "text")
        q = next(q for q in row["questions"] if prompt_text(q["text"], q["instruction"]) == text)
        a = answer_from_json(q["answer"])
        k = kind(row["index"], q["position"])
        if k == "right":
            return f"ANSWER: {a.reference_text()}"
        if k == "wrong":
            return f"ANSWER: {a.format_value(a.plausible_wrong(np.random.default_rng(3)))}"
        return f"My answer, in words: {a.reference_text()} [{k}]"   # no ANSWER line: unparsed
    return answer


def _judge(req):
    text = req["messages"][0]["content"][0]["text"]
    if "[unclear]" in text:
        return "Hard to say."
    return "VERDICT: YES" if "[paraphrase]" in text or "[judge_fails]" in text else "VERDICT: NO"


def _judge_faults(req, seen):
    text = req["messages"][0]["content"][0]["text"]
    return Fault.status(400) if "[judge_fails]" in text else None


@pytest.fixture(scope="session")
def world(eval_items, tmp_path_factory):
    out = tmp_path_factory.mktemp("judge")
    truth = truth_index([eval_items])
    vlm = ScriptedServer(model=_model(truth)).start()
    judge = ScriptedServer(model=_judge, faults=_judge_faults, audit=False).start()
    db = out / "r.sqlite"
    try:
        ok(run("eval", "run", "--experiment", "e1", "--items", eval_items, "--model", "m", "--base-url", vlm.url,
               "--store", db, "--quiet", "--domain", DOMAIN))
        first = ok(run("eval", "score", "--store", db, "--out", out / "s.jsonl", "--judge", "j",
                       "--judge-base-url", judge.url))
        sent = len(judge.requests)
        again = ok(run("eval", "score", "--store", db, "--out", out / "s2.jsonl", "--judge", "j",
                       "--judge-base-url", judge.url))
        failed = sum(kind(i, p) == "judge_fails" for i in range(N) for p in range(1, 6))
        assert len(judge.requests) == sent + failed   # a rerun asks again only the calls that failed
    finally:
        vlm.stop()
        judge.stop()
    with no_report_figures():   # report.md and stats.json are read, no figure
        ok(run("eval", "report", "--scored", out / "s.jsonl", "--out", out / "rep", "--resamples", 100))
    return {"out": out, "db": db, "judge": judge, "rows": read_scored(out / "s.jsonl"), "first": first,
            "again": again, "items": eval_items}


def test_only_wrong_and_unparsed_move_and_only_to_correct(world):
    for r in world["rows"]:
        k = kind(r["index"], r["position"])
        want_strict = {"right": "correct", "wrong": "wrong"}.get(k, "unparsed")
        assert r["outcome"] == want_strict
        want = "correct" if k in ("right", "paraphrase") else want_strict
        assert r["validated_outcome"] == want, (k, r)
        if want_strict == "correct":
            assert "judge_verdict" not in r
        else:
            assert r["judge_verdict"] == {"wrong": "no", "paraphrase": "yes", "unclear": "unclear",
                                          "judge_fails": "failed"}[k]
    assert "moved to correct" in world["first"]
    assert "already stored" in world["again"]


def test_the_judge_sees_text_only_and_never_a_correct_response(world):
    reqs = world["judge"].requests
    n_needs = sum(r["outcome"] != "correct" for r in world["rows"])
    assert len({r.body for r in reqs}) == n_needs   # one call per judged response (the failed one asked twice)
    for rec in reqs:
        msgs = rec.json["messages"]
        assert len(msgs) == 1 and [p["type"] for p in msgs[0]["content"]] == ["text"]
        text = msgs[0]["content"][0]["text"]
        assert "Reference answer:" in text and "<<<RESPONSE" in text
    store = ResponseStore(world["db"], readonly=True)
    judged = list(store.rows(experiment=JUDGE_EXPERIMENT))
    assert judged and all(r["condition"] == "e1:sigma0" and r["image_sha256"] is None for r in judged)
    # the model's own rows are untouched and the judge rows are not scored as model responses
    assert {r["model"] for r in world["rows"]} == {"m"}


def test_report_shows_strict_and_validated(world):
    md = (world["out"] / "rep" / "report.md").read_text()
    assert "## Strict and validated scores (semantic validator)" in md
    st = json.loads((world["out"] / "rep" / "stats.json").read_text())
    v = st["validated"]
    row = next(c for c in v["table"] if c["domain"] == DOMAIN)
    strict = sum(r["outcome"] == "correct" for r in world["rows"])
    validated = sum(r["validated_outcome"] == "correct" for r in world["rows"])
    assert (row["strict_correct"], row["validated_correct"]) == (strict, validated)
    assert validated > strict
    assert v["moved"] == validated - strict
    # the E1 tables stay strict
    e1 = next(c for c in st["experiments"]["e1"]["rungs"] if c["domain"] == DOMAIN and c["rung"] == "all")
    assert e1["correct"] == strict


def test_a_scored_file_that_moves_a_correct_answer_to_wrong_is_refused(world, tmp_path):
    rows = [dict(r) for r in world["rows"]]
    r = next(r for r in rows if r["outcome"] == "correct")
    r["validated_outcome"] = "wrong"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(x) + "\n" for x in rows))
    with pytest.raises(ScoringError, match="not a scored row"):
        read_scored(bad)


def test_an_unreachable_judge_leaves_every_rule_verdict(world, tmp_path):
    import shutil
    db = tmp_path / "r.sqlite"
    shutil.copy(world["db"], db)
    with ResponseStore(db) as s:   # drop the stored judge calls so they are asked again
        s._db.execute("DELETE FROM responses WHERE experiment=?", (JUDGE_EXPERIMENT,))
    res = run("eval", "score", "--store", db, "--out", tmp_path / "s.jsonl", "--judge", "j", "--judge-base-url",
              "http://127.0.0.1:9/v1")
    ok(res)
    rows = read_scored(tmp_path / "s.jsonl")
    assert all(r["validated_outcome"] == r["outcome"] for r in rows)
    assert {r["judge_verdict"] for r in rows if "judge_verdict" in r} == {"failed"}


def test_judge_options_are_checked_up_front(world, tmp_path):
    one_line_error(run("eval", "score", "--store", world["db"], "--out", tmp_path / "s.jsonl", "--judge", "j"),
                   "--judge-base-url is required")
    one_line_error(run("eval", "score", "--store", world["db"], "--out", tmp_path / "s.jsonl", "--judge-base-url",
                       "http://127.0.0.1:9/v1"), "needs --judge MODEL")
    one_line_error(run("eval", "score", "--store", tmp_path / "none.sqlite", "--out", tmp_path / "s.jsonl",
                       "--judge", "random"), "no response store")


def test_read_verdict():
    assert read_verdict("thinking...\nVERDICT: YES") == "yes"
    assert read_verdict("VERDICT: yes\nVERDICT: NO") == "no"
    assert read_verdict("**Verdict:** No.") == "no"
    assert read_verdict("yes") == "unclear"
    assert read_verdict(None) == "unclear"
    assert re.search("VERDICT", "VERDICT: NO")
