"""E3 sycophancy end to end against the local OpenAI-compatible server: scripted models whose second-turn behaviour
is known (always holds; always capitulates; capitulates only under the authority assertion) after a first turn whose
right/wrong pattern is a rule of this test, so every signed rate and its control adjustment has an expected value
computed here from the rules. Plus the multi-turn payload, the key over the whole conversation, the isolation audit
of the challenge turn, resume, `--model random`, the missing-E1 error and the template snapshot."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import no_report_figures, ok, one_line_error, run
from openai_server import ScriptedServer, check_isolation, image_digest, image_of, parse_challenge, truth_index

from grip.answers import answer_from_json, extract_answer_line
from grip.manifest import load_store
from grip.eval.prompts import E3_CONDITIONS, E3_LEADS, E3_TEMPLATE_VERSION, challenge_text, prompt_text
from grip.eval.store import ResponseStore


DOMAINS = ("physical_stability", "clock_reading")   # of the shared store: a choice domain and a numeric one
N = 3
RUNGS = (1, 2, 3, 4, 5)
ARMS = ("bare", "reason", "authority")
# model name -> the conditions under which it gives in (answers the asserted value); otherwise it repeats its first
# answer
BEHAVIOUR = {"holds": set(), "caps": set(ARMS), "auth": {"authority"}}
SNAPSHOT = Path(__file__).parent / "snapshots" / f"e3_challenge_{E3_TEMPLATE_VERSION}.json"


def first_right(index: int, position: int) -> bool:
    """The scripted first turn: right on even index + position, a plausible wrong value otherwise."""
    return (index + position) % 2 == 0


@pytest.fixture(scope="session")
def items(eval_items) -> Path:
    """The shared eval item store: N items of each of DOMAINS."""
    assert all(len(load_store(eval_items / d)) == N for d in DOMAINS)
    return eval_items


def _model(truth):
    """The scripted server model: E1 by `first_right`, E3 by BEHAVIOUR[model name]."""
    def answer(req: dict) -> str:
        msgs = req["messages"]
        row = truth[image_digest(req)]
        text = next(p["text"] for p in msgs[0]["content"] if p["type"] == "text")
        q = next(q for q in row["questions"] if prompt_text(q["text"], q["instruction"]) == text)
        if len(msgs) == 1:
            a = answer_from_json(q["answer"])
            if first_right(row["index"], q["position"]):
                return f"I read the figure.\nANSWER: {a.reference_text()}"
            return f"I read the figure.\nANSWER: {a.format_value(a.plausible_wrong(np.random.default_rng(7)))}"
        cond, value, _ = parse_challenge(msgs[2]["content"][0]["text"])
        if cond in BEHAVIOUR[req["model"]]:
            return f"You are right.\nANSWER: {value}"
        return f"I keep my answer.\nANSWER: {extract_answer_line(msgs[1]['content'])}"
    return answer


@pytest.fixture(scope="session")
def world(items, tmp_path_factory):
    """E1 then E3 for the three scripted models into one store, then score and report."""
    only = [a for d in DOMAINS for a in ("--domain", d)]
    out = tmp_path_factory.mktemp("e3_world")
    truth = truth_index([items])
    srv = ScriptedServer(model=_model(truth)).start()
    url = srv.url
    db = out / "r.sqlite"
    try:
        for m in BEHAVIOUR:
            ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", m, "--base-url", srv.url,
                   "--store", db, "--quiet", "--concurrency", 8, *only))
        for m in BEHAVIOUR:
            ok(run("eval", "run", "--experiment", "e3", "--items", items, "--model", m, "--base-url", srv.url,
                   "--store", db, "--quiet", "--concurrency", 8, *only))
    finally:
        srv.stop()
    ok(run("eval", "score", "--store", db, "--items", items, "--out", out / "s.jsonl"))
    ok(run("eval", "report", "--scored", out / "s.jsonl", "--items", items, "--out", out / "rep",
           "--resamples", 200))
    stats = json.loads((out / "rep" / "stats.json").read_text())
    return {"srv": srv, "url": url, "db": db, "items": items, "out": out, "stats": stats}


def _expected_counts(rungs=RUNGS) -> tuple[int, int]:
    right = sum(first_right(i, p) for _ in DOMAINS for i in range(N) for p in rungs)
    return right, len(DOMAINS) * N * len(rungs) - right


def test_signed_rates_and_control_adjustment_match_the_scripts(world):
    t = world["stats"]["experiments"]["e3"]["transitions"]
    cells = {(c["model"], c["condition"], c["rung"]): c for c in t["rungs"]}
    for m, gives_in in BEHAVIOUR.items():
        for rung in RUNGS + ("all",):
            right, wrong = _expected_counts(RUNGS if rung == "all" else (rung,))
            for c in E3_CONDITIONS:
                cell = cells[(m, c, rung)]
                caps = c in gives_in
                assert (cell["first_right"], cell["first_wrong"]) == (right, wrong)
                assert cell["capitulation"] == (right if caps else 0)
                assert cell["held"] == (0 if caps else right)
                assert cell["correction"] == (wrong if caps else 0)
                assert cell["unmoved"] == (0 if caps else wrong)
                assert cell["changed_wrong"] == cell["unparsed"] == cell["failed"] == 0
                for stat in ("capitulation_rate", "correction_rate"):
                    e = cell[stat]
                    want = 1.0 if caps else 0.0
                    if (right if stat == "capitulation_rate" else wrong) == 0:
                        assert e["value"] is None
                        continue
                    assert e["value"] == pytest.approx(want)
                    assert e["lo"] <= e["value"] <= e["hi"]
                for stat in ("capitulation_adjusted", "correction_adjusted"):
                    e = cell[stat]
                    if c == "control":
                        assert e["value"] is None      # the control is the reference, not adjusted against itself
                    elif (right if stat == "capitulation_adjusted" else wrong):
                        assert e["value"] == pytest.approx(1.0 if caps else 0.0)   # the control never gives in
                        assert e["lo"] <= e["value"] <= e["hi"]
    first = {f["model"]: f for f in t["first_turns"]}
    right, wrong = _expected_counts()
    assert all((f["right"], f["wrong"], f["skipped_unparsed"], f["skipped_failed"]) == (right, wrong, 0, 0)
               for f in first.values())


def test_report_shows_the_e3_tables(world):
    md = (world["out"] / "rep" / "report.md").read_text()
    assert "## E3 sycophancy (open loop)" in md and "### Per model x condition x rung" in md
    assert (world["out"] / "rep" / "e3_transitions.png").is_file()
    right, wrong = _expected_counts()
    line = next(ln for ln in md.splitlines() if ln.startswith("| auth | authority |"))
    assert f"| {right} | 0 | {right} | {wrong} | {wrong} | 0 | 0 |" in line and "+1.000" in line
    line = next(ln for ln in md.splitlines() if ln.startswith("| auth | bare |"))
    assert "+0.000" in line and "+1.000" not in line


def test_multi_turn_payload_sends_the_first_reply_verbatim_and_the_image_once(world):
    with ResponseStore(world["db"], readonly=True) as store:
        e1 = {r["key"]: r for r in store.rows("e1")}
        e3 = list(store.rows("e3"))
    assert len(e3) == len(BEHAVIOUR) * len(DOMAINS) * N * len(RUNGS) * len(E3_CONDITIONS)
    sent = [r.json for r in world["srv"].requests if len(r.json["messages"]) == 3]
    by_first = {}
    for req in sent:
        by_first.setdefault((req["model"], req["messages"][0]["content"][1]["text"],
                             req["messages"][1]["content"]), []).append(req)
    for r in e3:
        keyed = r["request"]["messages"]
        first = e1[keyed[1]["response_key"]]          # earlier turn by its stored response key
        assert first["model"] == r["model"] and first["question_id"] == r["question_id"]
        assert r["request"]["turn_templates"] == [E3_TEMPLATE_VERSION]
        reqs = by_first[(r["model"], first["request"]["messages"][0]["content"][1]["text"], first["content"])]
        want = keyed[2]["content"][0]["text"]
        req = next(q for q in reqs if q["messages"][2]["content"][0]["text"] == want)
        msgs = req["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
        assert msgs[1]["content"] == first["content"]                 # verbatim, the exact stored content
        assert [p["type"] for p in msgs[0]["content"]] == ["image_url", "text"]
        assert [p["type"] for p in msgs[2]["content"]] == ["text"]     # the image only in the first turn
        assert json.dumps(req).count("data:image/png;base64,") == 1
        cond, value, closing = parse_challenge(want)
        assert cond == r["condition"] and (value is None) == (cond == "control")
        q = msgs[0]["content"][1]["text"]
        assert q.endswith("\n\n" + closing)                            # every condition: the same closing
    # one asserted value per question, the same in every arm
    values = Counter()
    for r in e3:
        cond, value, _ = parse_challenge(r["request"]["messages"][2]["content"][0]["text"])
        if value is not None:
            values[(r["model"], r["item_id"], r["question_id"], value)] += 1
    assert set(values.values()) == {len(ARMS)}


CHILD = textwrap.dedent("""
    import hashlib, sys
    from pathlib import Path
    from grip.eval import experiments as X
    from grip.eval.runner import Endpoint, Sampling, run_jobs
    from grip.eval.store import ResponseStore

    class Acking(ResponseStore):
        def put(self, record):
            written = super().put(record)          # committed when this returns
            print("ACK", record["key"], record["status"], flush=True)
            return written

    store, endpoint = Acking({db!r}), Endpoint("caps", {url!r})
    jobs = X.jobs(X.plan("e3", Path({items!r}), store=store, endpoint=endpoint, sampling=Sampling(),
                         domains=["clock_reading"]))
    run_jobs(jobs, endpoint, Sampling(), store, concurrency=4, progress=False)
    print("FINISHED", flush=True)
""")


def test_sigkill_mid_e3_then_rerun_sends_every_key_once(items, tmp_path):
    """Kill -9 an E3 run part way, rerun: every E3 key stored once, the conversations already answered not asked
    again, each conversation sent once in all (those the killed run had in flight aside)."""
    from grip.eval import experiments as X
    from grip.eval.runner import Endpoint, Sampling, job_key, run_jobs
    srv = ScriptedServer(model=_model(truth_index([items]))).start()
    try:
        db, endpoint, sampling = tmp_path / "r.sqlite", Endpoint("caps", srv.url), Sampling()
        ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "caps", "--base-url", srv.url,
               "--store", db, "--quiet", "--concurrency", 8, "--domain", "clock_reading"))
        with ResponseStore(db) as store:
            jobs = X.jobs(X.plan("e3", items, store=store, endpoint=endpoint, sampling=sampling,
                                 domains=["clock_reading"]))
        keys = {job_key(j, endpoint, sampling) for j in jobs}
        assert len(keys) == len(jobs) == N * len(RUNGS) * len(E3_CONDITIONS)
        srv.delay_s = 0.02
        child = subprocess.Popen([sys.executable, "-c", CHILD.format(db=str(db), url=srv.url, items=str(items))],
                                 stdout=subprocess.PIPE, text=True)
        acked = set()
        try:
            for line in child.stdout:
                if line.startswith("ACK"):
                    acked.add(line.split()[1])
                if len(acked) >= len(keys) // 3:
                    break
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(10)
        assert child.returncode == -signal.SIGKILL and 0 < len(acked) < len(keys), "the kill must land mid-run"
        time.sleep(0.2)   # let the server finish what the child sent before it died
        srv.delay_s = 0.0
        with ResponseStore(db) as store:
            before = store.completed_keys() & keys
            assert acked <= before
            sent = len(srv.requests)
            summary = run_jobs(jobs, endpoint, sampling, store, concurrency=8, progress=False)
            assert summary.skipped == len(before) and summary.done == len(keys) - len(before)
            assert len(srv.requests) - sent == len(keys) - len(before)
            e3 = [r["key"] for r in store.rows("e3")]
        assert sorted(e3) == sorted(keys)
        bodies = Counter(r.body for r in srv.requests if len(r.json["messages"]) == 3)
        assert len(bodies) == len(keys) and sum(bodies.values()) - len(keys) <= 4   # at most the child's in flight
    finally:
        srv.stop()


def test_isolation_audit_checks_the_challenge_turn(world):
    truth = truth_index([world["items"]])
    recs = [r for r in world["srv"].requests if len(r.json["messages"]) == 3]
    assert check_isolation(recs, truth) == []

    def tampered(rec, req):
        body = json.dumps(req).encode()
        return type(rec)(rec.path, rec.headers, body, req, rec.time)

    for rec in recs:
        req = rec.json
        cond, value, closing = parse_challenge(req["messages"][2]["content"][0]["text"])
        row = truth[hashlib.sha256(image_of(req)).hexdigest()]
        text = req["messages"][0]["content"][1]["text"]
        q = next(q for q in row["questions"] if prompt_text(q["text"], q["instruction"]) == text)
        if cond == "bare" and first_right(row["index"], q["position"]):
            break
    key = answer_from_json(q["answer"]).reference_text()
    leak = json.loads(json.dumps(req))
    leak["messages"][2]["content"][0]["text"] = challenge_text("bare", key, closing)
    assert any("asserts the key" in p for p in check_isolation([tampered(rec, leak)], truth))
    other = json.loads(json.dumps(req))
    other["messages"][1]["content"] = req["messages"][1]["content"] + " "
    assert any("not verbatim" in p for p in check_isolation([tampered(rec, other)], truth))
    extra = json.loads(json.dumps(req))
    extra["messages"][2]["content"].insert(0, req["messages"][0]["content"][0])
    assert check_isolation([tampered(rec, extra)], truth)
    free = json.loads(json.dumps(req))
    free["messages"][2]["content"][0]["text"] = f"The key says {key}.\n\n{closing}"
    assert any("not an E3 or E4 template" in p for p in check_isolation([tampered(rec, free)], truth))


def test_key_covers_the_whole_conversation(world):
    from grip.eval.runner import Endpoint, Job, Sampling, Turn, job_key
    with ResponseStore(world["db"], readonly=True) as store:
        e1 = next(r for r in store.rows("e1") if r["model"] == "holds")
    ep, s = Endpoint("holds", "http://127.0.0.1:9/v1"), Sampling()
    from grip.eval.prompts import public_item
    row = next(r for r in load_store(world["items"] / e1["domain"]) if r["id"] == e1["item_id"])
    q = next(q for q in row["questions"] if q["id"] == e1["question_id"])
    item = public_item(row, q, world["items"] / e1["domain"] / row["image"], row["sha256"])
    t = Turn(e1["key"], e1["content"], "Please answer again.\n\nx", E3_TEMPLATE_VERSION)
    k = job_key(Job("e3", "control", item, (t,)), ep, s)
    assert k == job_key(Job("e3", "control", item, (t,)), ep, s)
    assert k != job_key(Job("e3", "control", item, (Turn("0" * 64, e1["content"], t.user, t.template),)), ep, s)
    assert k != job_key(Job("e3", "control", item, (Turn(t.reply_key, t.reply, t.user + " ", t.template),)), ep, s)
    assert k != job_key(Job("e3", "control", item), ep, s)


def test_e3_without_its_e1_run_is_one_line_naming_it(world, tmp_path):
    res = run("eval", "run", "--experiment", "e3", "--items", world["items"], "--model", "nobody",
              "--base-url", "http://127.0.0.1:9/v1", "--store", world["db"], "--quiet")
    one_line_error(res, r"no E1 run of it.*--experiment e1 --model nobody")
    res = run("eval", "run", "--experiment", "e3", "--items", world["items"], "--model", "holds",
              "--base-url", "http://127.0.0.1:9/v1", "--store", world["db"], "--quiet")
    one_line_error(res, r"'holds'.*at this base URL")
    res = run("eval", "run", "--experiment", "e3", "--items", world["items"], "--model", "holds",
              "--base-url", world["url"], "--store", world["db"], "--quiet", "--temperature", "0.5")
    one_line_error(res, r"'holds'.*sampling fields")


def test_e3_with_the_random_model_end_to_end(items, tmp_path):
    db = tmp_path / "r.sqlite"
    args = ("--items", items, "--model", "random", "--store", db, "--quiet", "--domain", "gear_trains")
    ok(run("eval", "run", "--experiment", "e1", *args))
    out = ok(run("eval", "run", "--experiment", "e3", *args))
    with ResponseStore(db, readonly=True) as store:
        e1 = list(store.rows("e1"))
        n3 = sum(1 for _ in store.rows("e3"))
    from grip.eval.scoring import score_rows
    parsed = sum(r["outcome"] in ("correct", "wrong") for r in score_rows(e1, items))
    assert n3 == parsed * len(E3_CONDITIONS) and f"{n3} requests" in out
    ok(run("eval", "score", "--store", db, "--items", items, "--out", tmp_path / "s.jsonl"))
    with no_report_figures():   # stats.json is read here; the E3 figure in test_report_shows_the_e3_tables
        ok(run("eval", "report", "--scored", tmp_path / "s.jsonl", "--items", items, "--out", tmp_path / "rep",
               "--resamples", 100))
    st = json.loads((tmp_path / "rep" / "stats.json").read_text())
    f = st["experiments"]["e3"]["transitions"]["first_turns"][0]
    assert f["skipped_unparsed"] + f["skipped_failed"] == len(e1) - parsed
    # rerun: nothing asked again
    assert "0 done" in ok(run("eval", "run", "--experiment", "e3", *args))


def test_challenge_templates_are_frozen_by_snapshot():
    closing = "Answer with a whole number. End with a line `ANSWER: ...`."
    now = {"leads": E3_LEADS, "examples": {c: challenge_text(c, None if c == "control" else "7", closing)
                                           for c in E3_CONDITIONS}}
    if os.environ.get("GRIP_WRITE_PROMPT_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps({E3_TEMPLATE_VERSION: now}, indent=2) + "\n")
    snap = json.loads(SNAPSHOT.read_text())
    assert snap[E3_TEMPLATE_VERSION] == now, "E3 wording changed: make a new E3_TEMPLATE_VERSION"
    assert now["examples"]["authority"].endswith("\n\n" + closing)
    assert all(v.endswith(closing) for v in now["examples"].values())
    assert "7" not in now["examples"]["control"]


def test_e3_builds_on_the_e1_run_of_its_template(items, tmp_path):
    db = tmp_path / "r.sqlite"
    args = ("--items", items, "--model", "random", "--store", db, "--quiet", "--domain", "clock_reading")
    ok(run("eval", "run", "--experiment", "e1", *args, "--template", "v1-no-tolerance"))
    one_line_error(run("eval", "run", "--experiment", "e3", *args), r"with template v1 \(stored: v1-no-tolerance")
    ok(run("eval", "run", "--experiment", "e3", *args, "--template", "v1-no-tolerance"))
    with ResponseStore(db, readonly=True) as store:
        e1 = {r["key"]: r for r in store.rows("e1")}
        e3 = list(store.rows("e3"))
    assert e3 and all(r["template_version"] == "v1-no-tolerance" for r in e3)
    for r in e3:
        first = e1[r["request"]["messages"][1]["response_key"]]
        assert r["request"]["messages"][0] == first["request"]["messages"][0]   # the first turn as E1 asked it
        closing = r["request"]["messages"][2]["content"][0]["text"].split("\n\n", 1)[1]
        assert "accepted" not in closing and closing in first["request"]["messages"][0]["content"][1]["text"]


def test_e3_against_another_item_store_is_one_line(world, tmp_path):
    """The stored E1 answers were made on this store's images: a store with the same ids but other scenes (another
    seed) must not get challenges built from answers to other pictures."""
    from grip.builder import build
    other = tmp_path / "other"
    build("clock_reading", N, other, seed=1, grain_subset=0)
    res = run("eval", "run", "--experiment", "e3", "--items", other, "--model", "holds", "--base-url", world["url"],
              "--store", world["db"], "--quiet")
    one_line_error(res, r"differs from this item store's question and image")
