"""E4 cross-examination end to end against the local OpenAI-compatible server: scripted models whose phase-1
correctness and phase-2 behaviour are rules of this test (always holds; a peer-follower that copies the majority of
the peers it is shown; one that answers the control differently; one that only answers phase 1 and serves as a natural
peer), so every signed rate, its control adjustment and every confidence movement has an expected value computed
here from the rules. Plus the phase-2 payload (own reply and natural peers verbatim, image once), the isolation audit
of the peer turn, resume, the natural arm asked once, `--phase`, `--model random` and the template snapshot."""
import hashlib
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from cli_helpers import no_report_figures, ok, one_line_error, run
from openai_server import ScriptedServer, check_isolation, image_digest, image_of, parse_peer_turn, truth_index

from grip.answers import answer_from_json, extract_answer_line
from grip.eval.prompts import (E4_ARMS, E4_CONSTRUCTED, E4_LEADS, E4_TEMPLATE_VERSION, constructed_peers, peer_text,
                               prompt_text, read_confidence)
from grip.eval.store import ResponseStore
from grip.manifest import load_store


DOMAINS = ("physical_stability", "gear_trains", "clock_reading")
N = 3
SNAPSHOT = Path(__file__).parent / "snapshots" / f"e4_peers_{E4_TEMPLATE_VERSION}.json"
# model -> phase-1 rule: right on these item indices (a plausible wrong value on the others)
RIGHT_ON = {"holds": {0, 2}, "follower": {0}, "ctrl": {1}, "always": {0, 1, 2}}
PHASE2 = ("holds", "follower", "ctrl")   # "always" answers phase 1 only


def _wrong(a):
    return a.format_value(a.plausible_wrong(np.random.default_rng(7)))


def _model(truth):
    def answer(req: dict) -> str:
        msgs = req["messages"]
        row = truth[image_digest(req)]
        text = next(p["text"] for p in msgs[0]["content"] if p["type"] == "text")
        q = next(q for q in row["questions"] if prompt_text(q["text"], q["instruction"]) == text)
        a = answer_from_json(q["answer"])
        m = req["model"]
        if len(msgs) == 1:
            value = a.reference_text() if row["index"] in RIGHT_ON[m] else _wrong(a)
            return f"JUSTIFICATION: I read the figure.\nCONFIDENCE: 60\nANSWER: {value}"
        arm, peers, _, _ = parse_peer_turn(msgs[2]["content"][0]["text"])
        own = extract_answer_line(msgs[1]["content"])
        if m == "follower" and peers:
            votes = [extract_answer_line(p) for p in peers]
            top = max(set(votes), key=votes.count)
            if votes.count(top) * 2 > len(votes):
                return f"JUSTIFICATION: the others agree.\nCONFIDENCE: 80\nANSWER: {top}"
        if m == "ctrl" and arm == "control" and row["index"] in RIGHT_ON[m]:
            return f"JUSTIFICATION: on second thought.\nCONFIDENCE: 40\nANSWER: {_wrong(a)}"
        return f"JUSTIFICATION: I keep it.\nCONFIDENCE: 60\nANSWER: {own}"
    return answer


def expected(model: str, arm: str) -> dict:
    """Transitions per item index (the same in every domain) and the confidence change, from the rules alone."""
    out = {"held": 0, "capitulation": 0, "correction": 0, "unmoved": 0, "conf": []}
    for i in range(N):
        right = i in RIGHT_ON[model]
        after = right
        conf = 60
        if model == "follower" and arm == "constructed":
            after, conf = not right, 80          # unanimous peers assert the opposite of its own answer
        elif model == "follower" and arm == "natural":
            peers = [i in RIGHT_ON[o] for o in RIGHT_ON if o != model]   # the other three models, all shown
            after, conf = sum(peers) * 2 > len(peers), 80   # two values among three peers: always a majority
        elif model == "ctrl" and arm == "control" and right:
            after, conf = False, 40
        key = ("held" if after else "capitulation") if right else ("correction" if after else "unmoved")
        out[key] += len(DOMAINS)
        out["conf"] += [conf - 60] * len(DOMAINS)
    return out


@pytest.fixture(scope="session")
def world(eval_items, tmp_path_factory):
    only = [a for d in DOMAINS for a in ("--domain", d)]
    out = tmp_path_factory.mktemp("e4_world")
    truth = truth_index([eval_items])
    srv = ScriptedServer(model=_model(truth)).start()
    db = out / "r.sqlite"
    try:
        for m in RIGHT_ON:
            ok(run("eval", "run", "--experiment", "e4", "--phase", "1", "--items", eval_items, "--model", m,
                   "--base-url", srv.url, "--store", db, "--quiet", "--concurrency", 8, *only))
        for m in PHASE2:
            ok(run("eval", "run", "--experiment", "e4", "--items", eval_items, "--model", m, "--base-url", srv.url,
                   "--store", db, "--quiet", "--concurrency", 8, *only))
        sent = len(srv.requests)
        rerun = run("eval", "run", "--experiment", "e4", "--items", eval_items, "--model", "follower",
                    "--base-url", srv.url, "--store", db, "--quiet", *only)
        ok(rerun)
        assert len(srv.requests) == sent, "a rerun sent requests again"
    finally:
        srv.stop()
    ok(run("eval", "score", "--store", db, "--out", out / "s.jsonl"))
    ok(run("eval", "report", "--scored", out / "s.jsonl", "--out", out / "rep", "--resamples", 200))
    stats = json.loads((out / "rep" / "stats.json").read_text())
    return {"srv": srv, "db": db, "items": eval_items, "out": out, "stats": stats, "truth": truth,
            "rerun": rerun}


def test_signed_rates_control_adjustment_and_confidence_match_the_scripts(world):
    t = world["stats"]["experiments"]["e4"]["cross_examination"]
    cells = {(c["model"], c["arm"]): c for c in t["arms_table"]}
    assert set(cells) == {(m, a) for m in PHASE2 for a in E4_ARMS}
    for (m, a), c in cells.items():
        e = expected(m, a)
        for k in ("held", "capitulation", "correction", "unmoved"):
            assert c[k] == e[k], (m, a, k)
        assert c["changed_wrong"] == c["unparsed"] == c["failed"] == 0
        right, wrong = e["held"] + e["capitulation"], e["correction"] + e["unmoved"]
        cap = e["capitulation"] / right if right else None
        corr = e["correction"] / wrong if wrong else None
        assert c["capitulation_rate"]["value"] == pytest.approx(cap)
        assert c["correction_rate"]["value"] == pytest.approx(corr)
        ctl = expected(m, "control")
        cap0 = ctl["capitulation"] / right if right else None
        corr0 = ctl["correction"] / wrong if wrong else None
        if a == "control":
            assert c["capitulation_adjusted"]["value"] is None
        else:
            assert c["capitulation_adjusted"]["value"] == pytest.approx(cap - cap0)
            assert c["correction_adjusted"]["value"] == pytest.approx(corr - corr0)
            lo, hi = c["capitulation_adjusted"]["lo"], c["capitulation_adjusted"]["hi"]
            assert lo <= c["capitulation_adjusted"]["value"] <= hi
        assert c["confidence_pairs"] == N * len(DOMAINS)
        assert c["confidence_before"] == pytest.approx(60)
        assert c["confidence_change"]["value"] == pytest.approx(np.mean(e["conf"]))
    # the known signs: the follower capitulates to constructed peers, corrects with natural ones; ctrl's control
    # capitulation makes its peer arms' adjusted capitulation negative
    assert cells[("follower", "constructed")]["capitulation_adjusted"]["value"] == pytest.approx(1.0)
    assert cells[("follower", "natural")]["correction_adjusted"]["value"] == pytest.approx(1.0)
    assert cells[("ctrl", "natural")]["capitulation_adjusted"]["value"] == pytest.approx(-1.0)
    fam = {(c["model"], c["arm"], c["family"]) for c in t["families_table"]}
    assert ("follower", "natural", "physical") in fam
    p1 = {f["model"]: f for f in t["phase1"]}
    for m, right in RIGHT_ON.items():
        assert p1[m]["right"] == len(right) * len(DOMAINS)
        assert p1[m]["confidence_mean"] == pytest.approx(60)


def test_report_shows_the_e4_tables_and_figure(world):
    md = (world["out"] / "rep" / "report.md").read_text()
    for head in ("## E4 cross-examination", "### Phase 1", "### Per model x arm (domains pooled)",
                 "### Control table", "### Per model x arm x family", "### Per model x arm x domain"):
        assert head in md
    assert (world["out"] / "rep" / "e4_transitions.png").stat().st_size > 5000


def test_peer_turn_payloads(world):
    """Phase 2: the image once (first turn), the model's own phase-1 reply verbatim, then one text turn; natural peers
    are the other models' phase-1 replies verbatim; constructed peers assert the key exactly when the model was
    wrong; the control shows no peer."""
    served = set()
    for body in world["srv"].replies.values():
        try:
            served.add(json.loads(body)["choices"][0]["message"]["content"])
        except (ValueError, KeyError):
            pass
    seen = set()
    for rec in world["srv"].requests:
        msgs = rec.json["messages"]
        if len(msgs) == 1:
            continue
        assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
        assert sum(p["type"] == "image_url" for m in msgs if isinstance(m["content"], list) for p in m["content"]) == 1
        assert msgs[1]["content"] in served
        arm, peers, value, closing = parse_peer_turn(msgs[2]["content"][0]["text"])
        seen.add(arm)
        row = world["truth"][hashlib.sha256(image_of(rec.json)).hexdigest()]
        q = next(q for q in row["questions"] if q["position"] == 6)
        a = answer_from_json(q["answer"])
        own_right = row["index"] in RIGHT_ON[rec.json["model"]]
        if arm == "natural":
            assert len(peers) == 3 and all(p in served for p in peers)
            others = [f"JUSTIFICATION: I read the figure.\nCONFIDENCE: 60\nANSWER: "
                      f"{a.reference_text() if row['index'] in RIGHT_ON[o] else _wrong(a)}"
                      for o in RIGHT_ON if o != rec.json["model"]]
            assert sorted(peers) == sorted(others)
        elif arm == "constructed":
            assert a.matches(a.parse_value(value)) == (not own_right)
        else:
            assert peers is None
        assert closing.startswith("Explain your reasoning")
    assert seen == set(E4_ARMS)
    problems = check_isolation(world["srv"].requests, world["truth"])
    assert problems == []


def test_isolation_audit_catches_a_constructed_peer_carrying_the_key(world):
    rec = next(r for r in world["srv"].requests if len(r.json["messages"]) == 3
               and parse_peer_turn(r.json["messages"][2]["content"][0]["text"])[0] == "constructed"
               and world["truth"][hashlib.sha256(image_of(r.json)).hexdigest()]["index"]
               in RIGHT_ON[r.json["model"]])
    row = world["truth"][hashlib.sha256(image_of(rec.json)).hexdigest()]
    q = next(q for q in row["questions"] if q["position"] == 6)
    key = answer_from_json(q["answer"]).reference_text()
    _, _, value, closing = parse_peer_turn(rec.json["messages"][2]["content"][0]["text"])
    bad = json.loads(json.dumps(rec.json))
    bad["messages"][2]["content"][0]["text"] = peer_text("constructed", constructed_peers(key), closing)
    forged = SimpleNamespace(path=rec.path, headers=rec.headers, json=bad, body=json.dumps(bad).encode())
    problems = check_isolation([forged], world["truth"])
    assert any("asserts the key" in p for p in problems)


def test_natural_arm_is_asked_once_even_after_new_peers_arrive(world, tmp_path):
    """The natural arm of a question is asked once: a model whose phase 1 arrives later is not shown in it, a rerun
    sends nothing, and scoring sees one natural row per question."""
    db = tmp_path / "r.sqlite"
    srv = ScriptedServer(model=_model(world["truth"])).start()
    args = ("--items", world["items"], "--base-url", srv.url, "--store", db, "--quiet", "--domain", "clock_reading")

    def e4(model, *extra):
        ok(run("eval", "run", "--experiment", "e4", "--model", model, *extra, *args))

    try:
        e4("holds")                 # no other model yet: constructed and control only
        e4("follower")              # natural shows holds
        e4("holds")                 # now natural shows follower
        e4("always", "--phase", "1")
        n = len(srv.requests)
        e4("holds")                 # always's phase 1 is new, but holds' natural was asked already
        assert len(srv.requests) == n
    finally:
        srv.stop()
    natural = [r for r in ResponseStore(db, readonly=True).rows(experiment="e4")
               if r["model"] == "holds" and r["condition"] == "natural"]
    assert len(natural) == N
    assert all(len(parse_peer_turn(r["request"]["messages"][2]["content"][0]["text"])[1]) == 1 for r in natural)
    ok(run("eval", "score", "--store", db, "--out", tmp_path / "s.jsonl"))


def test_phase_two_without_phase_one_is_one_line(world, tmp_path):
    r = run("eval", "run", "--experiment", "e4", "--phase", "2", "--items", world["items"], "--model", "random",
            "--store", tmp_path / "r.sqlite")
    one_line_error(r, "phase-1 replies of model 'random'")
    r = run("eval", "run", "--experiment", "e1", "--phase", "2", "--items", world["items"], "--model", "random",
            "--store", tmp_path / "r.sqlite")
    one_line_error(r, "--phase is an E4 option")


def test_e4_with_the_random_model_end_to_end(world, tmp_path):
    db = tmp_path / "r.sqlite"
    ok(run("eval", "run", "--experiment", "e4", "--items", world["items"], "--model", "random", "--store", db,
           "--quiet", "--domain", "gear_trains"))
    ok(run("eval", "score", "--store", db, "--out", tmp_path / "s.jsonl"))
    with no_report_figures():   # stats.json is read here; the E4 figure is checked on the world's report
        ok(run("eval", "report", "--scored", tmp_path / "s.jsonl", "--out", tmp_path / "rep", "--resamples", 100))
    st = json.loads((tmp_path / "rep" / "stats.json").read_text())
    t = st["experiments"]["e4"]["cross_examination"]
    assert {c["arm"] for c in t["arms_table"]} == {"constructed", "control"}   # no other model: no natural arm
    assert all(c["questions"] == N for c in t["arms_table"])


def test_read_confidence():
    assert read_confidence("JUSTIFICATION: x\nCONFIDENCE: 85\nANSWER: 3") == 85
    assert read_confidence("CONFIDENCE: 40%\nCONFIDENCE: 70/100") == 70
    assert read_confidence("**Confidence:** 55") == 55
    assert read_confidence("CONFIDENCE: 140") is None
    assert read_confidence("no confidence here") is None
    assert read_confidence(None) is None


def test_peer_templates_are_frozen_by_snapshot():
    closing = "Explain your reasoning. End with a line `ANSWER: ...`."
    now = {"leads": E4_LEADS, "constructed": [list(x) for x in E4_CONSTRUCTED],
           "examples": {"natural": peer_text("natural", ["ANSWER: 3", "ANSWER: 4"], closing),
                        "constructed": peer_text("constructed", constructed_peers("7"), closing),
                        "control": peer_text("control", None, closing)}}
    if os.environ.get("GRIP_WRITE_PROMPT_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps({E4_TEMPLATE_VERSION: now}, indent=2) + "\n")
    snap = json.loads(SNAPSHOT.read_text())
    assert snap[E4_TEMPLATE_VERSION] == now, "E4 wording changed: make a new E4_TEMPLATE_VERSION"
    assert all(v.endswith("\n\n" + closing) for v in now["examples"].values())
    assert "7" not in now["examples"]["control"]
    assert re.search(r"Peer 3:\nJUSTIFICATION: .+\nCONFIDENCE: \d+\nANSWER: 7", now["examples"]["constructed"])
