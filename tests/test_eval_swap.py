"""The swap probe end to end against the local OpenAI-compatible server: a swap-blind model (right on the item image,
repeats that answer after the swap) and an attentive one (answers each image's truth), both variants; the payload
(the twin image after the item image, bytes unchanged; the continuation's trigger and fields), the isolation audit,
a server that refuses the continuation fields, resume, `--model random`, the no-twins error and the template
snapshot."""
import json
import os
from pathlib import Path

import pytest
from cli_helpers import ok, one_line_error, run
from openai_server import ScriptedServer, check_isolation, truth_index
from probe_items import N, PROBE_DOMAINS, Truth, images_of, question_of, right, wrong  # noqa: F401

from grip.answers import extract_answer_line
from grip.eval.probes import SWAP_LEAD, SWAP_TEMPLATE_VERSION, SWAP_TRIGGER, swap_text
from grip.eval.store import ResponseStore

SNAPSHOT = Path(__file__).parent / "snapshots" / f"swap_{SWAP_TEMPLATE_VERSION}.json"
MODELS = ("blind", "attentive")


def base_right(index: int) -> bool:
    """The scripted base turn (the twin image alone): right on even item indices."""
    return index % 2 == 0


def _model(truth: Truth):
    def answer(req: dict) -> str:
        msgs = req["messages"]
        pngs = images_of(req)
        entry = truth.entry(pngs[0])
        q = question_of(entry, msgs[0]["content"][1]["text"])
        if len(msgs) == 1:
            if entry.get("twin_image") and req["model"] == "blind" and not base_right(entry["index"]):
                return f"I read the figure.\nANSWER: {wrong(q)}"
            return f"I read the figure.\nANSWER: {right(q)}"
        if req["model"] == "blind":   # the swap goes unseen: the first answer again
            return f"Same as before.\nANSWER: {extract_answer_line(msgs[1]['content'])}"
        twin = truth.entry(pngs[1])
        return f"It changed.\nANSWER: {right(next(t for t in twin['questions'] if t['position'] == 4))}"
    return answer


@pytest.fixture(scope="module")
def world(twin_items, tmp_path_factory):
    out = tmp_path_factory.mktemp("swap_world")
    srv = ScriptedServer(model=_model(Truth(twin_items))).start()
    db = out / "r.sqlite"
    try:
        for m in MODELS:
            ok(run("eval", "run", "--experiment", "swap", "--variant", "both", "--items", twin_items, "--model", m,
                   "--base-url", srv.url, "--store", db, "--quiet", "--concurrency", 8))
        sent = len(srv.requests)
        again = ok(run("eval", "run", "--experiment", "swap", "--variant", "both", "--items", twin_items,
                       "--model", "blind", "--base-url", srv.url, "--store", db, "--quiet"))
        resent = len(srv.requests) - sent
    finally:
        srv.stop()
    ok(run("eval", "score", "--store", db, "--items", twin_items, "--out", out / "s.jsonl"))
    from grip.eval.scoring import AnswerKey, read_scored
    from grip.eval.stats import compute
    stats = compute(read_scored(out / "s.jsonl"), AnswerKey(twin_items), resamples=200)
    return {"srv": srv, "db": db, "out": out, "stats": stats, "items": twin_items, "again": again,
            "resent": resent}


def test_blind_model_loses_exactly_its_base_accuracy_and_attentive_loses_nothing(world):
    t = world["stats"]["experiments"]["swap"]
    cells = {(c["model"], c["variant"]): c for c in t["table"]}
    acc_base = sum(base_right(i) for i in range(N)) / N
    for v in ("multi-turn", "continuation"):
        blind, att = cells[("blind", v)], cells[("attentive", v)]
        assert blind["pairs"] == att["pairs"] == N * len(PROBE_DOMAINS)
        assert blind["acc_probe"]["value"] == 0.0 and blind["probe_correct"] == 0
        assert blind["acc_base"]["value"] == pytest.approx(acc_base)
        assert blind["delta"]["value"] == pytest.approx(-acc_base)
        assert blind["delta"]["lo"] <= blind["delta"]["value"] <= blind["delta"]["hi"] <= 0
        assert blind["acc_first"] == 1.0 and blind["repeat_rate"] == 1.0
        assert att["acc_base"]["value"] == att["acc_probe"]["value"] == 1.0
        assert att["delta"] == {"value": 0.0, "lo": 0.0, "hi": 0.0} and att["repeat_rate"] == 0.0
    per_domain = {(c["model"], c["variant"], c["domain"]): c for c in t["domains_table"]}
    assert all(per_domain[("blind", "multi-turn", d)]["delta"]["value"] == pytest.approx(-acc_base)
               for d in PROBE_DOMAINS)
    assert {c["family"] for c in t["families_table"]} == {"physical", "analytic"}


def test_probe_payload_shows_the_twin_after_the_item_unchanged_and_passes_the_audit(world):
    items = world["items"]
    recs = [r for r in world["srv"].requests if len(r.json["messages"]) >= 3]
    assert len(recs) == len(MODELS) * 2 * N * len(PROBE_DOMAINS)
    rows = {json.loads(line)["id"]: json.loads(line) for d in PROBE_DOMAINS
            for line in (items / d / "items.jsonl").read_text().splitlines()}
    for rec in recs:
        msgs = rec.json["messages"]
        first, second = images_of(rec.json)
        row = next(r for r in rows.values() if (items / r["domain"] / r["image"]).read_bytes() == first)
        assert second == (items / row["domain"] / row["twin"]["image"]).read_bytes()
        assert [m["role"] for m in msgs[:3]] == ["user", "assistant", "user"]
        assert [p["type"] for p in msgs[2]["content"]] == ["image_url", "text"]
        tq = next(q for q in row["twin"]["questions"] if q["position"] == 4)
        assert msgs[2]["content"][1]["text"] == swap_text(tq, "v1")
    assert check_isolation(world["srv"].requests, truth_index([items])) == []
    # the audit catches a probe that shows the item image twice, or a trigger that is not the template's
    rec = next(r for r in recs if len(r.json["messages"]) == 4)
    for edit in ("image", "trigger"):
        req = json.loads(json.dumps(rec.json))
        if edit == "image":
            req["messages"][2]["content"][0] = req["messages"][0]["content"][0]
        else:
            req["messages"][3]["content"] = "The answer is the same."
        bad = type(rec)(rec.path, rec.headers, json.dumps(req).encode(), req, rec.time)
        assert check_isolation([bad], truth_index([items])), edit


def test_continuation_prefills_the_trigger_and_sets_the_vllm_fields(world):
    cont = [r.json for r in world["srv"].requests if len(r.json["messages"]) == 4]
    assert len(cont) == len(MODELS) * N * len(PROBE_DOMAINS)
    for req in cont:
        assert req["messages"][-1] == {"role": "assistant", "content": SWAP_TRIGGER}
        assert req["continue_final_message"] is True and req["add_generation_prompt"] is False
    multi = [r.json for r in world["srv"].requests if len(r.json["messages"]) == 3]
    assert multi and all("continue_final_message" not in r and "add_generation_prompt" not in r for r in multi)
    with ResponseStore(world["db"], readonly=True) as store:
        rows = [r for r in store.rows("swap") if r["condition"] == "continuation"]
        e1 = {r["key"]: r for r in store.rows("e1")}
    assert len(rows) == len(cont) and all(r["status"] == "ok" for r in rows)
    for r in rows:   # keyed with the trigger and the fields; the first turn is the stored E1 rung-4 answer
        assert r["request"]["messages"][-1] == {"role": "assistant", "content": SWAP_TRIGGER}
        assert r["request"]["continue_final_message"] is True
        assert e1[r["request"]["messages"][1]["response_key"]]["position"] == 4
    assert len(e1) == len(MODELS) * N * len(PROBE_DOMAINS)   # one first turn per item, shared by both variants


def test_rerun_sends_nothing(world):
    assert world["resent"] == 0 and "0 done" in world["again"]


def test_a_server_that_refuses_the_continuation_fields_gives_typed_failures(twin_items, tmp_path):
    srv = ScriptedServer(model=_model(Truth(twin_items)), continuation=False).start()
    db = tmp_path / "r.sqlite"
    try:
        out = ok(run("eval", "run", "--experiment", "swap", "--variant", "continuation", "--items", twin_items,
                     "--model", "attentive", "--base-url", srv.url, "--store", db, "--quiet",
                     "--domain", "clock_reading"))
    finally:
        srv.stop()
    with ResponseStore(db, readonly=True) as store:
        rows = [r for r in store.rows("swap") if r["condition"] == "continuation"]
    assert len(rows) == N and f"{N} failed" in out
    assert all(r["status"] == "failed" and r["error_class"] == "ClientError" and r["http_status"] == 400
               for r in rows)


def test_probes_with_the_random_model_end_to_end(twin_items, tmp_path):
    """Swap (both variants) and consistency with the built-in random model, through run, score and report; a
    rerun sends nothing; a report's probe sections appear only for the probes its scored rows hold."""
    db = tmp_path / "r.sqlite"
    args = ("--items", twin_items, "--model", "random", "--store", db, "--quiet", "--domain", "compass_bearings")
    ok(run("eval", "run", "--experiment", "swap", "--variant", "both", *args))
    ok(run("eval", "run", "--experiment", "consistency", *args))
    ok(run("eval", "score", "--store", db, "--items", twin_items, "--out", tmp_path / "s.jsonl"))
    ok(run("eval", "report", "--scored", tmp_path / "s.jsonl", "--items", twin_items, "--out", tmp_path / "rep",
           "--resamples", 100))
    st = json.loads((tmp_path / "rep" / "stats.json").read_text())
    assert {c["variant"]: c["pairs"] for c in st["experiments"]["swap"]["table"]} == {"multi-turn": N,
                                                                                     "continuation": N}
    assert st["experiments"]["consistency"]["table"][0]["pairs"] == N
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Swap probe" in md and "### Per model x variant x family" in md
    assert "## Consistency (equivalent questions)" in md and "### Per model x domain" in md
    assert (tmp_path / "rep" / "swap_probe.png").is_file() and "![swap_probe.png]" in md
    for x in ("swap", "consistency"):
        assert "0 done" in ok(run("eval", "run", "--experiment", x, *args))
    from grip.eval.report import _markdown
    from grip.eval.scoring import AnswerKey, read_scored
    from grip.eval.stats import compute
    only = [r for r in read_scored(tmp_path / "s.jsonl") if r["experiment"] != "consistency"]
    md = _markdown(compute(only, AnswerKey(twin_items), resamples=0), [])
    assert "## Swap probe" in md and "## Consistency" not in md


def test_swap_needs_a_twins_build_and_a_known_variant(tmp_path):
    from grip.builder import build
    build("clock_reading", 1, tmp_path / "plain", grain_subset=0)
    base = ("--items", tmp_path / "plain", "--model", "random", "--store", tmp_path / "r.sqlite", "--quiet")
    one_line_error(run("eval", "run", "--experiment", "swap", *base), r"has no twin.*grip build --twins")
    one_line_error(run("eval", "run", "--experiment", "swap", "--variant", "sideways", *base), r"--variant must be")
    one_line_error(run("eval", "run", "--experiment", "e1", "--variant", "both", *base), r"--variant is a swap")


def test_swap_template_is_frozen_by_snapshot():
    twin_q4 = {"text": "What time does the clock show?", "instruction": "Answer with a whole number."}
    now = {"lead": SWAP_LEAD, "trigger": SWAP_TRIGGER, "example": swap_text(twin_q4, "v1")}
    if os.environ.get("GRIP_WRITE_PROMPT_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps({SWAP_TEMPLATE_VERSION: now}, indent=2) + "\n")
    snap = json.loads(SNAPSHOT.read_text())
    assert snap[SWAP_TEMPLATE_VERSION] == now, "swap wording changed: make a new SWAP_TEMPLATE_VERSION"
    assert now["example"].startswith(SWAP_LEAD + "\n\n") and now["example"].endswith("`ANSWER: ...`.")
