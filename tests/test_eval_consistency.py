"""Equivalent-question consistency end to end against the local OpenAI-compatible server: a consistent model (right
on Q4 and on its rephrasing) and an inconsistent one (right on Q4, wrong on the rephrasing); the Q4 request shared
with E1, the payload and the isolation audit, `--model random`, the no-rephrase error; and the random baseline's
answers, which must all parse in their declared type."""
import json
import shutil

import pytest
from cli_helpers import ok, one_line_error, run
from openai_server import ScriptedServer, check_isolation, truth_index
from probe_items import N, PROBE_DOMAINS, Truth, images_of, question_of, right, wrong  # noqa: F401

from grip.eval.prompts import prompt_text
from grip.eval.store import ResponseStore

MODELS = ("consistent", "inconsistent")


def _model(truth: Truth):
    def answer(req: dict) -> str:
        entry = truth.entry(images_of(req)[0])
        q = question_of(entry, req["messages"][0]["content"][1]["text"])
        rephrased = q is entry.get("rephrase")
        if rephrased and req["model"] == "inconsistent":
            return f"Seen another way.\nANSWER: {wrong(q)}"
        return f"I read the figure.\nANSWER: {right(q)}"
    return answer


@pytest.fixture(scope="module")
def world(twin_items, tmp_path_factory):
    out = tmp_path_factory.mktemp("consistency_world")
    srv = ScriptedServer(model=_model(Truth(twin_items))).start()
    db = out / "r.sqlite"
    runs = {}
    try:
        ok(run("eval", "run", "--experiment", "e1", "--items", twin_items, "--model", "consistent",
               "--base-url", srv.url, "--store", db, "--quiet", "--concurrency", 8, "--domain", "clock_reading"))
        for m in MODELS:
            runs[m] = ok(run("eval", "run", "--experiment", "consistency", "--items", twin_items, "--model", m,
                             "--base-url", srv.url, "--store", db, "--quiet", "--concurrency", 8))
    finally:
        srv.stop()
    ok(run("eval", "score", "--store", db, "--items", twin_items, "--out", out / "s.jsonl"))
    from grip.eval.scoring import AnswerKey, read_scored
    from grip.eval.stats import compute
    stats = compute(read_scored(out / "s.jsonl"), AnswerKey(twin_items), resamples=200)
    return {"srv": srv, "db": db, "stats": stats, "runs": runs, "items": twin_items}


def test_consistency_and_robust_accuracy_match_the_scripts(world):
    t = world["stats"]["experiments"]["consistency"]
    cells = {(c["model"], c["domain"]): c for c in t["table"]}
    for d in PROBE_DOMAINS + ("all",):
        n = N * (len(PROBE_DOMAINS) if d == "all" else 1)
        good, bad = cells[("consistent", d)], cells[("inconsistent", d)]
        assert good["pairs"] == bad["pairs"] == n and good["rung"] == bad["rung"] == 4
        assert good["consistency"]["value"] == good["robust_accuracy"]["value"] == 1.0
        assert bad["consistency"] == bad["robust_accuracy"] == {"value": 0.0, "lo": 0.0, "hi": 0.0}
        assert bad["acc_q4"] == 1.0 and bad["acc_rephrase"] == 0.0
    assert all(x["q4_missing"] == x["failed"] == 0 for x in t["left_out"])


def test_the_q4_request_is_the_e1_rung4_request(world):
    """E1 (clock_reading) then consistency: the Q4 requests E1 made are not asked again."""
    items = N * len(PROBE_DOMAINS)
    assert f"{items + N} done" in world["runs"]["consistent"] and f"{N} already stored" in world["runs"]["consistent"]
    assert f"{2 * items} done" in world["runs"]["inconsistent"]
    with ResponseStore(world["db"], readonly=True) as store:
        e1 = list(store.rows("e1"))
        rows = list(store.rows("consistency"))
    assert len(e1) == 5 * N + (items - N) + items   # E1 of one model, the Q4 turns E1 did not make
    assert len(rows) == 2 * items and {r["condition"] for r in rows} == {"rephrase"}


def test_rephrase_requests_are_fresh_turns_on_the_clean_image_and_pass_the_audit(world):
    items = world["items"]
    rows = {json.loads(line)["id"]: json.loads(line) for d in PROBE_DOMAINS
            for line in (items / d / "items.jsonl").read_text().splitlines()}
    asked = set()
    for rec in world["srv"].requests:
        msgs = rec.json["messages"]
        assert len(msgs) == 1
        for r in rows.values():
            if images_of(rec.json)[0] == (items / r["domain"] / r["image"]).read_bytes():
                if msgs[0]["content"][1]["text"] == prompt_text(r["rephrase"]["text"], r["rephrase"]["instruction"]):
                    asked.add((rec.json["model"], r["id"]))
    assert asked == {(m, i) for m in MODELS for i in rows}
    assert check_isolation(world["srv"].requests, truth_index([items])) == []


def test_a_store_without_rephrase_is_one_line_saying_to_rebuild(twin_items, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(twin_items / "clock_reading", old / "clock_reading")
    path = old / "clock_reading" / "items.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k not in ("rephrase", "twin")}) + "\n"
                            for r in rows))
    res = run("eval", "run", "--experiment", "consistency", "--items", old, "--model", "random",
              "--store", tmp_path / "r.sqlite", "--quiet")
    one_line_error(res, r"no rephrased Q4.*rebuild")


def test_every_random_answer_parses_in_its_declared_type():
    """A list answer's labels are drawn in the picture, not named in the public item: a guess outside them must
    never be the random model's answer."""
    from grip.answers import Ordered, Record, Unparsed, answer_from_json
    from grip.eval.prompts import public_item
    from grip.eval.runner import random_reply
    ordered = Ordered(("2", "3"), "ascending order", ("1", "2", "3", "4"), as_set=True)
    record = Record((("route", answer_from_json({"type": "choice", "value": "open", "options": ["open", "closed"],
                                                  "aliases": []})),
                     ("ends", Ordered(("P",), "alphabetical order", ("P", "Q", "R"), as_set=True))))
    for answer in (ordered, record):
        q = {"position": 4, "rung": "integrate", "id": "q", "text": "Which?",
             "instruction": f"{answer.instruction()} End with a line `ANSWER: ...`."}
        item = public_item({"id": "x_000000", "domain": "x", "family": "plane"}, q, "x.png", "0" * 64)
        for k in range(40):
            parsed = answer.parse(random_reply(item, f"key{k}"))
            assert not isinstance(parsed, Unparsed), (answer.kind, k, parsed)
            if isinstance(answer, Record):
                assert set(parsed) == {"route", "ends"}
