"""Ground-truth isolation: no request the runner sends carries an answer, tolerance field, margin, scene or seed,
in any serialisation. Every test that uses the `openai_server` fixture gets the same check at teardown on every
request it sent; here the check runs explicitly over a full E1 + E2 sweep of the three working domains, and is
shown to catch each kind of leak."""
import copy
import hashlib
import io
import json

import pytest
from openai_server import (  # noqa: F401
    Recorded,
    ScriptedServer,
    check_isolation,
    item_jobs,
    openai_server,
    truth_index,
)
from PIL import Image, PngImagePlugin

from grip.eval import runner
from grip.eval.prompts import build_messages as real_build_messages
from grip.eval.runner import Endpoint, Sampling, run_jobs
from grip.eval.store import ResponseStore


def test_every_request_of_a_full_sweep_is_clean(openai_server, eval_items, tmp_path):  # noqa: F811
    jobs = item_jobs(eval_items, "e1") + item_jobs(eval_items, "e2", sigmas=(15, 25, 40), items=1)
    run_jobs(jobs, Endpoint("m", openai_server.url), Sampling(extra={"top_k": 1}),
             ResponseStore(tmp_path / "r.sqlite"), concurrency=8, progress=False)
    requests = openai_server.requests
    assert len(requests) == len(jobs)           # the check below is not vacuous
    truth = truth_index([eval_items])
    assert check_isolation(requests, truth) == []
    # and every item image was matched: originals and grain copies alike
    seen = {hashlib.sha256(__import__("base64").b64decode(
        r.json["messages"][0]["content"][0]["image_url"]["url"].split(",", 1)[1])).hexdigest() for r in requests}
    assert seen <= set(truth) and len(seen) == len({(j.item.item_id, j.condition) for j in jobs})


@pytest.fixture
def clean_request(eval_items, tmp_path):
    with ScriptedServer() as srv:
        jobs = item_jobs(eval_items, positions=(4,), domains=("clock_reading",))[:1]
        run_jobs(jobs, Endpoint("m", srv.url), Sampling(), ResponseStore(tmp_path / "r.sqlite"), progress=False)
    (rec,) = srv.requests
    truth = truth_index([eval_items])
    assert check_isolation([rec], truth) == []
    row = next(r for r in truth.values() if r["id"] == jobs[0].item.item_id)
    return rec, truth, row


def _with_body(rec, body: dict, headers=None):
    raw = json.dumps(body).encode()
    return Recorded(rec.path, headers or rec.headers, raw, body, rec.time)


def _leaks(rec, truth):
    return check_isolation([rec], truth)


def test_answer_in_prompt_text_is_caught(clean_request):
    rec, truth, row = clean_request
    body = copy.deepcopy(rec.json)
    body["messages"][0]["content"][1]["text"] += "\n(hint: " + json.dumps(row["questions"][3]["answer"]) + ")"
    problems = _leaks(_with_body(rec, body), truth)
    assert any("not the prompt template" in p for p in problems)
    assert any("ground truth" in p for p in problems)


def test_scene_in_an_extra_field_is_caught(clean_request):
    rec, truth, row = clean_request
    body = {**copy.deepcopy(rec.json), "metadata": {"scene": row["scene"]}}
    problems = _leaks(_with_body(rec, body), truth)
    assert any("unexpected request fields" in p for p in problems)
    assert any("ground truth" in p for p in problems)


def test_margin_in_a_header_is_caught(clean_request):
    rec, truth, row = clean_request
    headers = {**rec.headers, "x-debug": json.dumps(row["questions"][0]["margin"])}
    assert any("headers" in p for p in _leaks(_with_body(rec, rec.json, headers), truth))


def test_seed_anywhere_is_caught(clean_request):
    rec, truth, row = clean_request
    body = {**copy.deepcopy(rec.json), "user": str(row["seed"])}
    assert any("ground truth" in p for p in _leaks(_with_body(rec, body), truth))


def test_png_metadata_or_reencoded_image_is_caught(clean_request, eval_items):
    rec, truth, row = clean_request
    img = Image.open(eval_items / "clock_reading" / row["image"])
    info = PngImagePlugin.PngInfo()
    info.add_text("scene", json.dumps(row["scene"]))
    for pnginfo, expect in ((info, "metadata chunks"), (None, "not byte-identical")):
        buf = io.BytesIO()
        img.save(buf, format="PNG", pnginfo=pnginfo, compress_level=1)
        body = copy.deepcopy(rec.json)
        body["messages"][0]["content"][0]["image_url"]["url"] = (
            "data:image/png;base64," + __import__("base64").b64encode(buf.getvalue()).decode())
        assert any(expect in p for p in _leaks(_with_body(rec, body), truth))


def test_a_leaky_runner_fails_the_check(eval_items, tmp_path, monkeypatch):
    """End to end: a prompt builder that appends the answer is caught on the requests it really sent."""
    from grip.manifest import load_store
    answers = {(r["id"], q["id"]): q["answer"] for d in ("gear_trains",) for r in load_store(eval_items / d)
               for q in r["questions"]}

    def leaky(item, png):
        msgs = real_build_messages(item, png)
        msgs[0]["content"][1]["text"] += " " + json.dumps(answers[(item.item_id, item.question_id)])
        return msgs

    monkeypatch.setattr(runner, "build_messages", leaky)
    with ScriptedServer(audit=False) as srv:   # leaks on purpose: left out of the session-end audit
        run_jobs(item_jobs(eval_items, domains=("gear_trains",)), Endpoint("m", srv.url), Sampling(),
                 ResponseStore(tmp_path / "r.sqlite"), progress=False)
    problems = check_isolation(srv.requests, truth_index([eval_items]))
    assert len({p.split(":")[0] for p in problems}) == len(srv.requests) > 0   # every request flagged
