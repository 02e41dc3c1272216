"""End to end: `grip eval run` (E1 and E2) against a real local OpenAI-compatible server whose scripted model answers
right, wrong, unreadably or not at all by a rule this test knows, and with `--model random`; then `grip eval score`
and `grip eval report`, whose tables are checked against counts made here from the rule. Plus one-line errors."""
import hashlib
import json
import os
import re
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import ok, one_line_error, run
from openai_server import Fault, ScriptedServer, check_isolation, text_of, truth_index

from grip.answers import answer_from_json
from grip.builder import build
from grip.eval.prompts import prompt_text


SIZES = {"gear_trains": 6, "clock_reading": 22}   # clock_reading: more items than the core subset of 20
DOMAINS = tuple(SIZES)
CORE = 20
SIGMAS = (0, 15, 25, 40)
UNREADABLE = {("gear_trains", 25), ("gear_trains", 40)}
MODEL = "scripted"


def intended(index: int, position: int, sigma: int) -> str:
    """What the scripted model does with question `position` of item `index` at grain `sigma`."""
    if index == 3 and position == 2:
        return "failed"      # the server answers 400 every time: a typed failure, not retried
    if (index + position) % 7 == 0:
        return "unparsed"
    if (index * 5 + position) % 3 == 0 or (sigma == 40 and index % 4 == 1):
        return "wrong"
    return "correct"




def md_tables(md: str) -> dict[str, list[dict]]:
    """heading -> rows (dicts by column name) of the first table under it."""
    out, heading, lines = {}, None, md.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#"):
            heading = ln.lstrip("#").strip()
        elif ln.startswith("|") and heading and heading not in out:
            head = [c.strip() for c in ln.strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(head, (c.strip() for c in lines[i].strip("|").split("|")))))
                i += 1
            out[heading] = rows
            continue
        i += 1
    return out


def value(cell: str) -> float:
    return float(cell.split(" ")[0])


@pytest.fixture(scope="session")
def world(tmp_path_factory):
    items = tmp_path_factory.mktemp("cli_items")
    for d, n in SIZES.items():
        build(d, n, items)
    rows = {d: [json.loads(ln) for ln in (items / d / "items.jsonl").read_text().splitlines()] for d in DOMAINS}
    by_sha = {}
    for d in DOMAINS:
        for r in rows[d]:
            by_sha[r["sha256"]] = (r, 0)
            for s in SIGMAS[1:]:
                p = items / d / "grain" / f"s{s}" / f"{r['id']}.png"
                if p.exists():
                    by_sha[hashlib.sha256(p.read_bytes()).hexdigest()] = (r, s)

    located = {}   # id(request) -> (request, its row, question and sigma): `faults`, then `model`, ask for each

    def locate(req):
        hit = located.get(id(req))
        if hit is not None and hit[0] is req:
            return hit[1]
        from openai_server import image_digest
        row, sigma = by_sha[image_digest(req)]
        text = text_of(req)
        q = next(q for q in row["questions"] if prompt_text(q["text"], q["instruction"]) == text)
        located[id(req)] = (req, (row, q, sigma))
        return row, q, sigma

    def model(req):  # the "model" may read the item store; the runner may not
        row, q, sigma = locate(req)
        a = answer_from_json(q["answer"])
        what = intended(row["index"], q["position"], sigma)
        if what == "unparsed":
            return "I cannot tell from this picture."
        if what == "wrong":
            wrong = a.plausible_wrong(np.random.default_rng(row["index"] * 10 + q["position"]))
            return f"Looking closely.\nANSWER: {a.format_value(wrong)}"
        return f"Looking closely.\nANSWER: {a.reference_text()}"

    def faults(req, seen):
        row, q, _ = locate(req)
        if intended(row["index"], q["position"], 0) == "failed":
            return Fault.status(400)
        if seen == 0 and row["index"] == 5 and q["position"] == 1:
            return Fault.status(429, retry_after="0")
        if seen == 0 and row["index"] == 6 and q["position"] == 3:
            return Fault.status(500, retry_after="0")
        return None

    readability = tmp_path_factory.mktemp("labels") / "readability.toml"
    readability.write_text("\n".join(
        [f"[domains.{d}]\n" + "\n".join(f'sigma{s} = "{"unreadable" if (d, s) in UNREADABLE else "readable"}"'
                                         for s in SIGMAS) for d in DOMAINS]) + "\n")
    work = tmp_path_factory.mktemp("runs")
    store, scored, report = work / "responses.sqlite", work / "scored.jsonl", work / "report"
    srv = ScriptedServer(model=model, faults=faults).start()
    try:
        env = {"GRIP_TEST_KEY": "sk-local-test"}
        out_e1 = ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", MODEL, "--base-url",
                        srv.url, "--api-key-env", "GRIP_TEST_KEY", "--store", store, "--concurrency", 8,
                        "--max-tokens", 256, "--quiet", env=env))
        sent_e1 = len(srv.requests)
        again = ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", MODEL, "--base-url",
                       srv.url, "--api-key-env", "GRIP_TEST_KEY", "--store", store, "--max-tokens", 256,
                       "--quiet", env=env))
        sent_again = len(srv.requests) - sent_e1
        out_e2 = ok(run("eval", "run", "--experiment", "e2", "--items", items, "--model", MODEL, "--base-url",
                        srv.url, "--api-key-env", "GRIP_TEST_KEY", "--store", store, "--concurrency", 8,
                        "--max-tokens", 256, "--readability", readability, "--quiet", env=env))
    finally:
        srv.stop()
    problems = check_isolation(srv.requests, truth_index([items]))
    assert not problems, "\n".join(problems[:10])
    ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random", "--store", store, "--quiet"))
    score_out = ok(run("eval", "score", "--store", store, "--items", items, "--out", scored))
    first = scored.read_bytes()
    ok(run("eval", "score", "--store", store, "--items", items, "--out", scored))
    assert scored.read_bytes() == first  # deterministic, rerunnable
    ok(run("eval", "report", "--scored", scored, "--items", items, "--out", report, "--resamples", 300,
           "--readability", readability))
    return dict(items=items, rows=rows, store=store, scored=scored, report=report, srv=srv, out_e1=out_e1,
                again=again, sent_e1=sent_e1, sent_again=sent_again, out_e2=out_e2, score_out=score_out,
                md=(report / "report.md").read_text())


def test_runs_send_every_request_once_with_the_key_and_resume(world):
    srv = world["srv"]
    chat = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert all({k.lower(): v for k, v in r.headers.items()}.get("authorization") == "Bearer sk-local-test" for r in chat)
    assert all(r.json["max_tokens"] == 256 and r.json["temperature"] == 0.0 and r.json["model"] == MODEL
               for r in chat)
    core = {d: min(n, CORE) for d, n in SIZES.items()}
    n_e1 = sum(core.values()) * 5
    assert f"{n_e1} requests" in world["out_e1"]
    assert f"{n_e1 - len(DOMAINS)} done, {len(DOMAINS)} failed" in world["out_e1"]
    # the rerun skips the completed keys and retries only the failed ones (one 400 per domain, again)
    assert f"{n_e1 - len(DOMAINS)} already stored" in world["again"] and world["sent_again"] == len(DOMAINS)
    assert "excluded gear_trains at sigma25" in world["out_e2"] and "excluded gear_trains at sigma40" in world["out_e2"]
    with sqlite3.connect(world["store"]) as db:
        got = dict(db.execute("SELECT experiment, COUNT(*) FROM responses GROUP BY experiment"))
        retried = db.execute("SELECT item_id, attempts FROM responses WHERE attempts > 1 AND model=?",
                             (MODEL,)).fetchall()
    readable = {d: [s for s in SIGMAS if (d, s) not in UNREADABLE] for d in DOMAINS}
    n_e2 = sum(core[d] * 5 * len(readable[d]) for d in DOMAINS)
    assert got == {"e1": 2 * n_e1, "e2": n_e2}   # scripted + random in e1
    # the 429 and the 500 came once per distinct request body: e1, then the grain copies of e2 (its sigma0
    # requests are byte-identical to e1's, so the server had seen them)
    assert {a for _, a in retried} == {2}
    assert Counter(i.rsplit("_", 1)[1] for i, _ in retried) == {
        f"{i:06d}": sum(len(readable[d]) for d in DOMAINS if i < core[d]) for i in (5, 6)}


def _expected(world, experiment, sigma=0):
    exp = defaultdict(Counter)
    for d in DOMAINS:
        for r in world["rows"][d][:CORE]:
            for p in range(1, 6):
                exp[(d, p)][intended(r["index"], p, sigma)] += 1
    return exp


def test_e1_table_matches_an_independent_count(world):
    t = md_tables(world["md"])["Per model x domain x rung"]
    mine = {(r["domain"], r["rung"]): r for r in t if r["model"] == MODEL}
    exp = _expected(world, "e1")
    assert len(mine) == len(DOMAINS) * 6
    for (d, p), c in exp.items():
        row = mine[(d, str(p))]
        assert [int(row[k]) for k in ("correct", "wrong", "unparsed", "failed")] == [
            c["correct"], c["wrong"], c["unparsed"], c["failed"]], (d, p)
        answered = c["correct"] + c["wrong"] + c["unparsed"]
        assert int(row["answered"]) == answered
        assert row["accuracy [95% CI]"].startswith(f"{c['correct'] / answered:.3f} [")
        b = float(row["baseline"])
        if b < 1:
            assert value(row["adjusted [95% CI]"]) == pytest.approx((c["correct"] / answered - b) / (1 - b),
                                                                     abs=2.5e-3)
    for d in DOMAINS:
        tot = sum((exp[(d, p)] for p in range(1, 6)), Counter())
        row = mine[(d, "all")]
        assert int(row["correct"]) == tot["correct"] and int(row["failed"]) == tot["failed"]


def test_baselines_match_the_modal_answer_where_answers_are_exact(world):
    t = md_tables(world["md"])["Constant-answer baselines"]
    checked = 0
    for r in t:
        qs = [q for row in world["rows"][r["domain"]][:CORE] for q in row["questions"]
              if q["position"] == int(r["rung"])]
        if all(q["answer"]["type"] in ("choice", "count") for q in qs):
            modal = Counter(json.dumps(q["answer"]["value"]) for q in qs).most_common(1)[0][1]
            assert float(r["baseline"]) == pytest.approx(modal / len(qs), abs=5e-4), r
            checked += 1
    assert checked >= 2


def test_chain_conditional_matches_an_independent_count(world):
    t = md_tables(world["md"])["Chain-conditional accuracy"]
    mine = {(r["domain"], int(r["k"])): r for r in t if r["model"] == MODEL}
    for d in DOMAINS:
        for k in range(2, 6):
            imgs = [r["index"] for r in world["rows"][d][:CORE]
                    if all(intended(r["index"], j, 0) != "failed" for j in range(1, k + 1))]
            cond = [i for i in imgs if all(intended(i, j, 0) == "correct" for j in range(1, k))]
            hit = [i for i in cond if intended(i, k, 0) == "correct"]
            row = mine[(d, k)]
            assert (int(row["images"]), int(row["rungs 1..k-1 correct"]), int(row["rung k also correct"])) == (
                len(imgs), len(cond), len(hit)), (d, k)


def test_e2_deltas_and_exclusions(world):
    md = world["md"]
    assert "- gear_trains at sigma 25: labelled unreadable" in md
    assert "- gear_trains at sigma 40: labelled unreadable" in md
    t = md_tables(md)["Grain deltas (accuracy at sigma - accuracy at sigma 0, paired within image, rungs 1-5 pooled)"]
    mine = {(r["domain"], int(r["sigma"])): r for r in t if r["model"] == MODEL}
    assert ("gear_trains", 25) not in mine and ("gear_trains", 40) not in mine
    assert ("gear_trains", 15) in mine
    for (d, s), row in mine.items():
        doms = DOMAINS if d == "all" else (d,)
        pairs = [(intended(r["index"], p, 0), intended(r["index"], p, s)) for dd in doms
                 for r in world["rows"][dd][:CORE] for p in range(1, 6)
                 if (dd, s) not in UNREADABLE]
        pairs = [(a, b) for a, b in pairs if "failed" not in (a, b)]
        a0 = sum(a == "correct" for a, _ in pairs) / len(pairs)
        a1 = sum(b == "correct" for _, b in pairs) / len(pairs)
        assert int(row["pairs"]) == len(pairs)
        assert float(row["accuracy sigma0"]) == pytest.approx(a0, abs=5e-4)
        assert value(row["delta [95% CI]"]) == pytest.approx(a1 - a0, abs=5e-4)
    assert value(mine[("clock_reading", 40)]["delta [95% CI]"]) < 0  # the script degrades at sigma 40


def test_random_model_is_scored_like_any_other(world):
    t = md_tables(world["md"])["Per model x domain x rung"]
    rand = [r for r in t if r["model"] == "random" and r["rung"] == "all"]
    assert {r["domain"] for r in rand} == set(DOMAINS)
    with sqlite3.connect(world["store"]) as db:
        got = db.execute("SELECT domain, item_id, question_id, content FROM responses WHERE model='random'"
                         ).fetchall()
    correct = Counter()
    for d, item, qid, content in got:
        row = next(r for r in world["rows"][d] if r["id"] == item)
        a = answer_from_json(next(q for q in row["questions"] if q["id"] == qid)["answer"])
        correct[d] += a.matches(a.parse(content))
    for r in rand:
        assert int(r["failed"]) == 0 and int(r["answered"]) == min(SIZES[r["domain"]], CORE) * 5
        assert int(r["correct"]) == correct[r["domain"]]


def test_report_files(world):
    rep = world["report"]
    for f in ("report.md", "stats.json", "accuracy_by_rung.png", "family_heatmap.png", "grain_deltas.png"):
        assert (rep / f).is_file() and (rep / f).stat().st_size > 0, f
        if f.endswith(".png"):
            assert (rep / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    st = json.loads((rep / "stats.json").read_text())
    assert st["resamples"] == 300 and set(st["experiments"]) == {"e1", "e2"}
    assert "![accuracy_by_rung.png](accuracy_by_rung.png)" in world["md"]
    assert re.search(r"\d+ responses scored: \d+ correct, \d+ wrong, \d+ unparsed, \d+ failed", world["score_out"])


def test_one_line_errors(world, tmp_path, monkeypatch):
    items, store = world["items"], world["store"]
    monkeypatch.chdir(tmp_path)
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", tmp_path / "nope", "--model", "random",
                       "--store", tmp_path / "s.sqlite"), "no such item store")
    one_line_error(run("eval", "run", "--experiment", "e7", "--items", items, "--model", "random"),
                   "unknown experiment 'e7'")
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "gpt-x"),
                   "--base-url is required")
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "gpt-x", "--base-url",
                       "http://127.0.0.1:9/v1", "--api-key-env", "GRIP_NO_SUCH_VAR_123"), "GRIP_NO_SUCH_VAR_123")
    labels = tmp_path / "partial.toml"
    labels.write_text('[domains.clock_reading]\nsigma0 = "readable"\nsigma15 = "readable"\nsigma25 = "readable"\n'
                      'sigma40 = "readable"\n')
    one_line_error(run("eval", "run", "--experiment", "e2", "--items", items, "--model", "random",
                       "--readability", labels, "--store", tmp_path / "s.sqlite"), "E2 halted.*gear_trains x sigma0")
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random",
                       "--subset", "half"), "--subset")
    one_line_error(run("eval", "score", "--store", tmp_path / "none.sqlite", "--items", items, "--out",
                       tmp_path / "x.jsonl"), "no response store")
    one_line_error(run("eval", "score", "--store", store, "--items", tmp_path / "nope", "--out",
                       tmp_path / "x.jsonl"), "no such item store")
    one_line_error(run("eval", "report", "--scored", tmp_path / "none.jsonl", "--items", items, "--out",
                       tmp_path / "r"), "no scored file")
    one_line_error(run("eval", "report", "--scored", world["scored"], "--items", items, "--out", tmp_path / "r",
                       "--resamples", -1), "--resamples")
    one_line_error(run("strips", "no_such_domain"), "unknown domain")
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random",
                       "--extra", "[1, 2]"), "--extra must be a JSON object")
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random",
                       "--extra", '{"model": "other"}'), "may not set")


def test_extra_provider_fields_are_sent_and_recorded(world, tmp_path):
    srv = ScriptedServer(model=lambda req: "ANSWER: 1").start()
    try:
        ok(run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", MODEL, "--base-url",
               srv.url, "--store", tmp_path / "x.sqlite", "--domain", "gear_trains", "--extra", '{"top_k": 20}',
               "--quiet"))
    finally:
        srv.stop()
    chat = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert chat and all(r.json["top_k"] == 20 and r.json["seed"] == 0 for r in chat)
    with sqlite3.connect(tmp_path / "x.sqlite") as db:
        recorded = [json.loads(x) for (x,) in db.execute("SELECT sampling FROM responses")]
    assert len(recorded) == len(chat) and all(r["top_k"] == 20 for r in recorded)


def test_strips_command(tmp_path):
    out = tmp_path / "s.png"
    res = run("strips", "gear_trains", "--index", 2, "--out", out)
    assert res.exit_code == 0, res.output
    from grip.renderers.canvas import decode_png
    a = decode_png(out.read_bytes())
    assert a.shape[1] > 4 * 700 and a.shape[0] > 700


# -- regressions: bad URLs, failed runs, store errors ---------------------------------------------------------------


def test_bad_base_url_is_one_line_at_once(world, tmp_path):
    import time
    for url in ("notaurl", "ftp://127.0.0.1/v1", "http:///v1"):
        t0 = time.monotonic()
        one_line_error(run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", "m",
                           "--base-url", url, "--store", tmp_path / "s.sqlite", "--quiet"),
                       "--base-url must be an http:// or https:// URL with a host")
        assert time.monotonic() - t0 < 2
    assert not (tmp_path / "s.sqlite").exists()


def _lines(res):
    return [ln for ln in res.output.splitlines() if ln.strip()]


def test_a_run_where_every_request_fails_exits_1_and_keeps_the_failures(world, tmp_path):
    srv = ScriptedServer(faults=lambda req, seen: Fault.status(404)).start()   # no such model: not retried
    try:
        res = run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", "nope", "--base-url",
                  srv.url, "--store", tmp_path / "x.sqlite", "--domain", "gear_trains", "--quiet")
    finally:
        srv.stop()
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    lines = _lines(res)
    n = len(srv.requests)
    assert n > 0 and any(f"0 done, {n} failed, 0 already stored" in ln for ln in lines[:-1])
    assert lines[-1].startswith(f"grip: error: every request failed ({n} of {n}: {n} ClientError)")
    assert "a rerun retries them" in lines[-1]
    with sqlite3.connect(tmp_path / "x.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses WHERE status='failed'").fetchone()[0] == n


def test_an_unreachable_server_stops_early_exits_1_and_keeps_the_failures(world, tmp_path, monkeypatch):
    from grip.eval.runner import RetryPolicy
    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, retry_after, u: 0.0)   # no waits in tests
    with ScriptedServer() as srv:
        url = srv.url                                                      # the port is closed now
    res = run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", "m", "--base-url", url,
              "--store", tmp_path / "x.sqlite", "--concurrency", 2, "--quiet")
    assert res.exit_code == 1, res.output
    lines = _lines(res)
    summary = next(ln for ln in lines if "requests;" in ln)
    failed, not_sent = (int(x) for x in re.search(r"(\d+) failed,.* (\d+) not sent", summary).groups())
    assert 4 <= failed <= 5 and not_sent > 0     # the first 4 to finish, plus at most one in flight
    assert re.match(rf"grip: error: the first \d+ requests to finish could not connect to {re.escape(url)}, so the "
                    rf"run stopped early \({failed} failed: {failed} ConnectionError; {not_sent} not sent\)",
                    lines[-1]), lines[-1]
    with sqlite3.connect(tmp_path / "x.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses WHERE error_class='ConnectionError'").fetchone()[0] == \
            failed


def test_store_errors_name_what_is_wrong(world, tmp_path):
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", "random",
                       "--store", "/proc/x.sqlite", "--quiet"),
                   r"cannot write the response store at /proc/x\.sqlite \(unable to open database file\)")
    fifo = tmp_path / "fifo.sqlite"
    os.mkfifo(fifo)
    for special in ("/dev/null", fifo):   # SQLite would create its journal beside a device or fifo
        one_line_error(run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", "random",
                           "--store", special, "--quiet"), "is not a regular file")
    assert not Path("/dev/null-journal").exists() and not (tmp_path / "fifo.sqlite-journal").exists()
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", world["items"], "--model", "random",
                       "--extra", '{"temperature": 1}', "--quiet"), r"use their own options \(--temperature\)")
    (tmp_path / "text.sqlite").write_text("hello, not a database " * 100)
    one_line_error(run("eval", "score", "--store", tmp_path / "text.sqlite", "--items", world["items"], "--out",
                       tmp_path / "x.jsonl"), "not a grip response store")


def test_score_opens_the_store_read_only(world, tmp_path, monkeypatch):
    # Scoring only reads: it must not open the store for writing (a read-only store file used to fail with
    # "not a grip response store (attempt to write a readonly database)").
    from grip.eval import store as S
    opened = []
    real_init = S.ResponseStore.__init__

    def spy(self, path, readonly=False):
        opened.append(readonly)
        real_init(self, path, readonly=readonly)

    monkeypatch.setattr(S.ResponseStore, "__init__", spy)
    out = ok(run("eval", "score", "--store", world["store"], "--items", world["items"], "--out",
                 tmp_path / "s.jsonl"))
    assert opened == [True] and "responses scored" in out
    assert (tmp_path / "s.jsonl").read_bytes() == world["scored"].read_bytes()
