"""The runner against a real local OpenAI-compatible server: retry policy, scripted faults, typed failures,
sampling fields, verbatim bodies, resume, bounded concurrency, and the offline random model."""
import base64
import email.utils
import hashlib
import json
import sqlite3
import time

import pytest
from openai_server import (  # noqa: F401
    WORKING_DOMAINS,
    Fault,
    ScriptedServer,
    image_of,
    item_jobs,
    openai_server,
)
from PIL import Image, PngImagePlugin

from grip import GripError
from grip.answers import Unparsed, answer_from_json
from grip.eval.prompts import public_item
from grip.eval.runner import (
    ERROR_CLASSES,
    Endpoint,
    Job,
    RetryPolicy,
    Sampling,
    _Progress,
    check_base_url,
    job_key,
    parse_retry_after,
    random_reply,
    run_jobs,
)
from grip.eval.store import ResponseStore, StoreError
from grip.manifest import load_store

# -- the retry policy, pure ----------------------------------------------------------------------------------------


def test_backoff_grows_and_is_capped():
    p = RetryPolicy(base_s=1.0, factor=2.0, max_delay_s=10.0)
    # equal jitter: between half and all of base * 2**(k-1)
    assert p.delay(1, None, 0.0) == 0.5 and p.delay(1, None, 0.999) == pytest.approx(0.9995)
    assert p.delay(3, None, 0.0) == 2.0 and p.delay(3, None, 1.0) == 4.0
    assert p.delay(20, None, 1.0) == 10.0 and p.delay(20, None, 0.0) == 5.0


def test_retry_after_is_honoured_never_earlier():
    p = RetryPolicy(base_s=1.0, max_delay_s=2.0)
    for u in (0.0, 0.5, 0.99):
        assert 7.0 <= p.delay(1, 7.0, u) <= 7.7     # longer than the backoff cap: the server knows best
        assert 0.0 <= p.delay(4, 0.0, u) <= 0.0
    assert p.next_wait(1, "RateLimited", 700.0, 0.0, 0.5) is None   # beyond retry_after_max_s: give up


def test_next_wait_caps_attempts_total_time_and_class():
    p = RetryPolicy(max_attempts=3, max_total_s=10.0, base_s=1.0)
    for cls in ("RateLimited", "RequestTimeout", "ServerError", "Timeout", "ConnectionError", "MalformedResponse"):
        assert p.next_wait(1, cls, None, 0.0, 0.0) == 0.5
    for cls in ("ClientError", "BadInput"):
        assert p.next_wait(1, cls, None, 0.0, 0.0) is None
    assert p.next_wait(2, "ServerError", None, 0.0, 0.0) == 1.0
    assert p.next_wait(3, "ServerError", None, 0.0, 0.0) is None          # attempts used up
    assert p.next_wait(1, "ServerError", None, 9.8, 0.0) is None          # would end past max_total_s
    assert p.next_wait(1, "ServerError", 3.0, 6.0, 0.0) == 3.0
    assert p.next_wait(1, "ServerError", 3.0, 7.5, 0.0) is None
    with pytest.raises(GripError):
        RetryPolicy(max_attempts=0)


def test_parse_retry_after():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"retry-after": future}) <= 31
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-4"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


# -- against the local server --------------------------------------------------------------------------------------


class Sleeps:
    """Injected sleep: records the waits, returns at once (the fault tests take seconds, not minutes)."""

    def __init__(self):
        self.waits = []

    async def __call__(self, s):
        self.waits.append(s)


def _one_job(root, domain="clock_reading", position=1):
    row = load_store(root / domain)[0]
    q = row["questions"][position - 1]
    return Job("e1", "sigma0", public_item(row, q, root / domain / row["image"], row["sha256"])), row, q


def _run(server, jobs, tmp_path, sleeps=None, **endpoint_kw):
    endpoint = Endpoint("scripted", server.url, **{"timeout_s": 5.0, **endpoint_kw})
    store = ResponseStore(tmp_path / "r.sqlite")
    summary = run_jobs(jobs, endpoint, Sampling(), store, concurrency=2, progress=False,
                       sleep=sleeps or Sleeps())
    return summary, store, endpoint


@pytest.mark.parametrize("fault,cls,status", [
    (Fault.status(429, retry_after="2"), "RateLimited", 429),
    (Fault.status(408), "RequestTimeout", 408),
    (Fault.status(500), "ServerError", 500),
    (Fault.status(503, retry_after="1"), "ServerError", 503),
    (Fault.malformed(), "MalformedResponse", 200),
    (Fault.truncated(), "ConnectionError", None),
    (Fault.drop(), "ConnectionError", None),
])
def test_transient_fault_is_retried_then_answered(openai_server, eval_items, tmp_path, fault, cls, status):  # noqa: F811
    job, _, _ = _one_job(eval_items)
    openai_server.queue_faults(fault, fault)
    sleeps = Sleeps()
    summary, store, _ = _run(openai_server, [job], tmp_path, sleeps)
    assert (summary.done, summary.failed, summary.retried, summary.requests) == (1, 0, 2, 3)
    assert len(openai_server.requests) == 3
    (row,) = store.rows()
    assert row["status"] == "ok" and row["attempts"] == 3 and row["http_status"] == 200
    assert [h.get("error_class") for h in row["history"]] == [cls, cls, None]
    assert [h["status"] for h in row["history"][:2]] == [status, status]
    assert len(sleeps.waits) == 2
    if fault.retry_after is not None:
        ra = float(fault.retry_after)
        assert all(ra <= w <= ra * 1.1 for w in sleeps.waits)
    else:  # exponential backoff with equal jitter: [0.5, 1] then [1, 2] with the default base of 1 s
        assert 0.5 <= sleeps.waits[0] <= 1.0 and 1.0 <= sleeps.waits[1] <= 2.0


def test_hang_past_timeout_is_a_timeout_then_retried(openai_server, eval_items, tmp_path):  # noqa: F811
    job, _, _ = _one_job(eval_items)
    openai_server.queue_faults(Fault.hang(3.0))
    t0 = time.monotonic()
    _, store, _ = _run(openai_server, [job], tmp_path, timeout_s=0.4)
    assert time.monotonic() - t0 < 2.5
    (row,) = store.rows()
    assert row["status"] == "ok" and row["attempts"] == 2
    assert row["history"][0]["error_class"] == "Timeout" and row["history"][0]["status"] is None
    assert 0.35 <= row["history"][0]["latency_s"] < 1.5


def test_persistent_server_error_ends_as_typed_failure(openai_server, eval_items, tmp_path):  # noqa: F811
    job, _, _ = _one_job(eval_items)
    openai_server.faults = lambda req, seen: Fault.status(502)
    sleeps = Sleeps()
    summary, store, _ = _run(openai_server, [job], tmp_path, sleeps, max_attempts=4)
    assert (summary.done, summary.failed) == (0, 1) and summary.failures == {"ServerError": 1}
    assert len(openai_server.requests) == 4 and len(sleeps.waits) == 3
    (row,) = store.rows()
    assert row["status"] == "failed" and row["error_class"] == "ServerError" and row["http_status"] == 502
    assert row["attempts"] == 4 and row["content"] is None and "502" in row["raw_body"]
    assert row["elapsed_s"] >= 0 and row["error_message"]
    assert store.completed_keys() == set()


def test_total_time_cap_stops_retries(openai_server, eval_items, tmp_path):  # noqa: F811
    job, _, _ = _one_job(eval_items)
    openai_server.faults = lambda req, seen: Fault.status(429, retry_after="30")
    sleeps = Sleeps()
    _, store, _ = _run(openai_server, [job], tmp_path, sleeps, max_attempts=10, max_total_s=100.0)
    (row,) = store.rows()
    # waits of 30..33 s each: three fit in 100 s, a fourth would end past it
    assert len(sleeps.waits) == 3 and row["elapsed_s"] >= 90
    assert row["status"] == "failed" and row["error_class"] == "RateLimited" and row["attempts"] == 4


@pytest.mark.parametrize("code", [400, 401, 404, 422])
def test_client_errors_are_not_retried(openai_server, eval_items, tmp_path, code):  # noqa: F811
    job, _, _ = _one_job(eval_items)
    openai_server.faults = lambda req, seen: Fault.status(code, retry_after="1")
    sleeps = Sleeps()
    _, store, _ = _run(openai_server, [job], tmp_path, sleeps)
    (row,) = store.rows()
    assert (row["status"], row["error_class"], row["http_status"], row["attempts"]) == ("failed", "ClientError",
                                                                                         code, 1)
    assert sleeps.waits == [] and len(openai_server.requests) == 1


def test_connection_refused_is_a_typed_failure(eval_items, tmp_path):
    with ScriptedServer() as srv:
        url = srv.url
    job, _, _ = _one_job(eval_items)   # the port is closed now
    store = ResponseStore(tmp_path / "r.sqlite")
    summary = run_jobs([job], Endpoint("m", url, max_attempts=2), Sampling(), store, progress=False,
                       sleep=Sleeps())
    (row,) = store.rows()
    assert row["status"] == "failed" and row["error_class"] == "ConnectionError" and row["attempts"] == 2
    assert summary.failed == 1


def test_request_carries_sampling_image_and_prompt_exactly(openai_server, eval_items, tmp_path):  # noqa: F811
    job, row, q = _one_job(eval_items, "gear_trains", 3)
    sampling = Sampling(temperature=0.3, max_tokens=77, top_p=0.9, seed=1234, extra={"top_k": 5})
    store = ResponseStore(tmp_path / "r.sqlite")
    run_jobs([job], Endpoint("vlm-x", openai_server.url), sampling, store, progress=False)
    (rec,) = openai_server.requests
    body = rec.json
    assert body["model"] == "vlm-x"
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"], body["top_k"]) == (
        0.3, 77, 0.9, 1234, 5)
    png = (eval_items / "gear_trains" / row["image"]).read_bytes()
    assert image_of(body) == png                                    # bytes unchanged, no re-encode
    text = body["messages"][0]["content"][1]["text"]
    assert text.startswith(q["text"]) and q["instruction"] in text
    (stored,) = store.rows()
    assert stored["sampling"] == {"temperature": 0.3, "max_tokens": 77, "top_p": 0.9, "seed": 1234, "top_k": 5}
    assert stored["request"]["messages"][0]["content"][0]["image_url"]["url"] == "sha256:" + row["sha256"]
    assert base64.b64encode(png).decode() not in json.dumps(stored["request"])


def test_seed_none_is_not_sent(openai_server, eval_items, tmp_path):  # noqa: F811
    job, _, _ = _one_job(eval_items)
    run_jobs([job], Endpoint("m", openai_server.url), Sampling(seed=None), ResponseStore(tmp_path / "r.sqlite"),
             progress=False)
    assert "seed" not in openai_server.requests[0].json


def test_raw_body_model_and_usage_recorded_verbatim(openai_server, eval_items, tmp_path):  # noqa: F811
    openai_server.model = lambda req: "Looks like  three.\n\nANSWER: 3 "
    openai_server.model_name = "served-model-id"
    job, _, _ = _one_job(eval_items)
    _, store, _ = _run(openai_server, [job], tmp_path)
    (row,) = store.rows()
    (sent,) = openai_server.replies.values()
    assert row["raw_body"].encode() == sent
    assert row["content"] == "Looks like  three.\n\nANSWER: 3 "
    assert row["response_model"] == "served-model-id"
    assert row["usage"] == json.loads(sent)["usage"]
    assert row["latency_s"] > 0


def test_rerun_skips_completed_and_retries_failed(openai_server, eval_items, tmp_path):  # noqa: F811
    jobs = item_jobs(eval_items, positions=(1, 2))
    bad = {jobs[0].item.text, jobs[3].item.text}
    openai_server.faults = lambda req, seen: (Fault.status(500) if req["messages"][0]["content"][1]["text"]
                                              .split("\n\n")[0] in bad else None)
    s1, store, endpoint = _run(openai_server, jobs, tmp_path, max_attempts=2)
    assert s1.failed >= 2 and s1.done + s1.failed == len(jobs) and s1.skipped == 0
    failed_before = store.failed_keys()
    openai_server.faults = None
    n_before = len(openai_server.requests)
    s2 = run_jobs(jobs, endpoint, Sampling(), store, progress=False, sleep=Sleeps())
    assert (s2.done, s2.failed, s2.skipped) == (len(failed_before), 0, s1.done)
    assert len(openai_server.requests) - n_before == len(failed_before)
    assert store.completed_keys() == {job_key(j, endpoint, Sampling()) for j in jobs}
    s3 = run_jobs(jobs, endpoint, Sampling(), store, progress=False)
    assert (s3.done, s3.skipped) == (0, len(jobs)) and len(openai_server.requests) - n_before == len(failed_before)


def test_concurrency_is_bounded(openai_server, eval_items, tmp_path):  # noqa: F811
    openai_server.delay_s = 0.05
    jobs = item_jobs(eval_items, positions=(1, 2, 3))
    store = ResponseStore(tmp_path / "r.sqlite")
    s = run_jobs(jobs, Endpoint("m", openai_server.url), Sampling(), store, concurrency=3, progress=False)
    assert s.done == len(jobs)
    assert openai_server.max_inflight == 3


def _png_with_text(path, text):
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", text)
    Image.new("RGB", (8, 8)).save(path, format="PNG", pnginfo=info)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bad_images_are_typed_failures_and_never_sent(openai_server, eval_items, tmp_path):  # noqa: F811
    _, row, q = _one_job(eval_items)
    leaky = tmp_path / "leaky.png"
    sha = _png_with_text(leaky, "answer=3")
    missing = public_item(row, q, tmp_path / "gone.png", row["sha256"])
    changed = public_item(row, q, leaky, row["sha256"])
    metadata = public_item(row, q, leaky, sha)
    jobs = [Job("e1", c, it) for c, it in (("a", missing), ("b", changed), ("c", metadata))]
    summary, store, _ = _run(openai_server, jobs, tmp_path)
    assert summary.failed == 3 and summary.failures == {"BadInput": 3}
    msgs = sorted(r["error_message"] for r in store.rows())
    assert any("metadata" in m for m in msgs) and any("do not match" in m for m in msgs)
    assert all(r["attempts"] == 0 for r in store.rows())
    assert openai_server.requests == []


def test_endpoint_errors_are_clear(eval_items, tmp_path, monkeypatch):
    job, _, _ = _one_job(eval_items)
    store = ResponseStore(tmp_path / "r.sqlite")
    with pytest.raises(GripError, match="--base-url is required"):
        run_jobs([job], Endpoint("gpt-x", None), Sampling(), store, progress=False)
    monkeypatch.delenv("GRIP_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(GripError, match="GRIP_TEST_NO_SUCH_KEY"):
        run_jobs([job], Endpoint("m", "http://127.0.0.1:9/v1", api_key_env="GRIP_TEST_NO_SUCH_KEY"), Sampling(),
                 store, progress=False)
    with pytest.raises(GripError, match="concurrency"):
        run_jobs([job], Endpoint("random", None), Sampling(), store, concurrency=0, progress=False)
    for bad in ({"temperature": -1}, {"max_tokens": 0}, {"top_p": 0}, {"extra": {"messages": []}}):
        with pytest.raises(GripError):
            Sampling(**bad)
    assert list(store.rows()) == []


def test_api_key_from_named_env_var(openai_server, eval_items, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("GRIP_TEST_KEY", "sk-test-123")
    job, _, _ = _one_job(eval_items)
    run_jobs([job], Endpoint("m", openai_server.url, api_key_env="GRIP_TEST_KEY"), Sampling(),
             ResponseStore(tmp_path / "r.sqlite"), progress=False)
    headers = {k.lower(): v for k, v in openai_server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-test-123"


# -- the offline random model --------------------------------------------------------------------------------------


def test_random_model_answers_every_question_in_its_type(eval_items, tmp_path):
    jobs = item_jobs(eval_items, sigmas=(0, 15))
    store = ResponseStore(tmp_path / "r.sqlite")
    s = run_jobs(jobs, Endpoint("random", None), Sampling(), store, progress=False)
    assert s.done == len(jobs) and s.requests == 0
    truth = {}
    for d in WORKING_DOMAINS:
        for row in load_store(eval_items / d):
            for q in row["questions"]:
                ans = q["answer"]
                if ans["type"] == "ordered":  # its universe of items is not in the prompt: check the type only
                    ans = {**ans, "options": None}
                truth[(row["id"], q["id"])] = answer_from_json(ans)
    rows = list(store.rows())
    assert len(rows) == len(jobs)
    for r in rows:
        assert r["status"] == "ok" and r["response_model"] == "random"
        assert json.loads(r["raw_body"])["choices"][0]["message"]["content"] == r["content"]
        parsed = truth[(r["item_id"], r["question_id"])].parse(r["content"])
        assert not isinstance(parsed, Unparsed), (r["question_id"], r["content"])
    # a function of the public item and the key only: same key, same answer
    again = {j.item.question_id + j.condition: random_reply(j.item, job_key(j, Endpoint("random", None),
                                                                            Sampling())) for j in jobs}
    assert {r["question_id"] + r["condition"]: r["content"] for r in rows} == again


def test_random_model_is_not_a_constant(eval_items, tmp_path):
    jobs = item_jobs(eval_items, positions=(2,))
    answers = {random_reply(jobs[0].item, hashlib.sha256(str(k).encode()).hexdigest()) for k in range(40)}
    assert len(answers) > 1


def test_duplicate_jobs_run_once(eval_items, tmp_path):
    job, _, _ = _one_job(eval_items)
    store = ResponseStore(tmp_path / "r.sqlite")
    s = run_jobs([job, job, job], Endpoint("random", None), Sampling(), store, progress=False)
    assert (s.done, s.skipped) == (1, 2) and len(list(store.rows())) == 1


def test_progress_line_shows_live_counts(capsys, monkeypatch):
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    bar = _Progress(10, "m e1", True)
    bar.done, bar.failed, bar.retrying = 4, 1, 2
    bar.show(force=True)
    bar.close()
    err = capsys.readouterr().err
    assert "5/10" in err and "done 4" in err and "failed 1" in err and "retrying 2" in err
    quiet = _Progress(10, "m", False)
    quiet.show(force=True)
    quiet.close()
    assert capsys.readouterr().err == ""


def test_error_classes_documented():
    assert set(ERROR_CLASSES) == {"RateLimited", "RequestTimeout", "ServerError", "Timeout", "ConnectionError",
                                  "MalformedResponse", "ResponseTooLarge", "ClientError", "BadInput",
                                  "InternalError"}


# -- regressions: one bad reply never ends a run; bad URLs and dead servers -----------------------------------------


def test_lone_surrogate_in_a_reply_is_stored_and_the_run_goes_on(openai_server, eval_items, tmp_path):  # noqa: F811
    # "\ud800" is legal JSON but not encodable as UTF-8: storing the extracted content used to raise
    # UnicodeEncodeError in store.put and abort the whole run with nothing stored.
    openai_server.model = lambda req: "answer \x00 \ud800 ANSWER: 3"
    jobs = item_jobs(eval_items, positions=(1, 2), domains=("clock_reading",), items=2)
    store = ResponseStore(tmp_path / "r.sqlite")
    summary = run_jobs(jobs, Endpoint("scripted", openai_server.url), Sampling(), store, concurrency=1,
                       progress=False, sleep=Sleeps())
    assert (summary.done, summary.failed) == (len(jobs), 0)
    rows = list(store.rows())
    assert len(rows) == len(jobs)
    assert all(r["status"] == "ok" and r["content"] == "answer \x00 \ufffd ANSWER: 3" for r in rows)
    db = sqlite3.connect(tmp_path / "r.sqlite")
    raw = {k: b for k, b in db.execute("SELECT key, raw_body FROM responses")}
    assert sorted(raw.values()) == sorted(openai_server.replies.values())   # the bytes received, verbatim
    assert all(b"\\ud800" in b for b in raw.values())


def test_an_unexpected_error_is_that_keys_typed_failure(openai_server, eval_items, tmp_path, monkeypatch):  # noqa: F811
    import grip.eval.runner as R
    jobs = item_jobs(eval_items, positions=(1, 2, 3), domains=("clock_reading",), items=1)
    real = R.extract_content
    calls = []

    def flaky_extract(body):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom in extraction")
        return real(body)

    monkeypatch.setattr(R, "extract_content", flaky_extract)
    store = ResponseStore(tmp_path / "r.sqlite")
    real_put = store.put
    puts = []

    def picky_put(record):   # the second reply cannot be stored as given
        puts.append(record["key"])
        if len(puts) == 2:
            raise ValueError("cannot store this one")
        return real_put(record)

    store.put = picky_put
    summary = run_jobs(jobs, Endpoint("scripted", openai_server.url), Sampling(), store, concurrency=1,
                       progress=False, sleep=Sleeps())
    assert (summary.done, summary.failed) == (1, 2) and summary.failures == {"InternalError": 2}
    failed = [r for r in store.rows() if r["status"] == "failed"]
    assert len(failed) == 2 and len(list(store.rows())) == 3
    assert {r["error_class"] for r in failed} == {"InternalError"}
    msgs = sorted(r["error_message"] for r in failed)
    assert "RuntimeError: boom in extraction" in msgs[0]
    assert msgs[1].startswith("the reply could not be stored: ValueError: cannot store this one")
    assert all(r["attempts"] == 1 and r["raw_body"] for r in failed)          # not retried; the body is kept
    assert len(openai_server.requests) == 3
    # a rerun retries both failed keys
    store.put = real_put
    again = run_jobs(jobs, Endpoint("scripted", openai_server.url), Sampling(), store, progress=False)
    assert (again.done, again.skipped) == (2, 1)


def test_a_store_that_cannot_write_ends_the_run_with_a_store_error(eval_items, tmp_path):
    store = ResponseStore(tmp_path / "r.sqlite")

    def broken(record):
        raise StoreError(f"cannot write the response store at {store.path} (disk I/O error)")

    store.put = broken
    with pytest.raises(StoreError, match="cannot write the response store"):
        run_jobs(item_jobs(eval_items, positions=(1,), items=1), Endpoint("random", None), Sampling(), store,
                 progress=False)


@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1/v1", "http:///v1", "127.0.0.1:8000/v1",
                                 "http://h:99999/v1", "http://[::1/v1", "http://h /v1", "", "http://h/v1?x=1",
                                 "http://h/v1#top"])
def test_bad_base_url_is_refused_before_anything_is_sent(eval_items, tmp_path, url):
    with pytest.raises(GripError, match="--base-url"):
        check_base_url(url)
    store = ResponseStore(tmp_path / "r.sqlite")
    t0 = time.monotonic()
    with pytest.raises(GripError, match="--base-url"):
        run_jobs(item_jobs(eval_items, positions=(1,), items=1), Endpoint("m", url), Sampling(), store,
                 progress=False)
    assert time.monotonic() - t0 < 1.0 and list(store.rows()) == []


def test_good_base_urls_pass():
    for url in ("http://127.0.0.1:8000/v1", "https://api.example.com/v1", "HTTP://[::1]:8/v1", "http://h"):
        assert check_base_url(url) == url


def test_a_server_that_never_answers_stops_the_run_early(eval_items, tmp_path):
    with ScriptedServer() as srv:
        url = srv.url
    jobs = item_jobs(eval_items, positions=(1, 2, 3))            # the port is closed now
    store = ResponseStore(tmp_path / "r.sqlite")
    s = run_jobs(jobs, Endpoint("m", url, max_attempts=3), Sampling(), store, concurrency=2, progress=False,
                 sleep=Sleeps(), stop_after_unreachable=4)
    assert s.stopped and "could not connect" in s.stopped and url in s.stopped
    assert 4 <= s.failed <= 5 and s.done == 0 and s.failures == {"ConnectionError": s.failed}
    assert s.not_sent == len(jobs) - s.failed > 0
    rows = list(store.rows())
    assert len(rows) == s.failed and all(r["error_class"] == "ConnectionError" for r in rows)
    # never: every job is tried
    s2 = run_jobs(jobs, Endpoint("m", url, max_attempts=1), Sampling(), store, concurrency=2, progress=False,
                  sleep=Sleeps(), stop_after_unreachable=None)
    assert s2.stopped is None and s2.not_sent == 0 and s2.failed == len(jobs)


def test_a_server_that_answers_errors_is_not_stopped_early(openai_server, eval_items, tmp_path):  # noqa: F811
    openai_server.faults = lambda req, seen: Fault.status(500)
    jobs = item_jobs(eval_items, positions=(1, 2), domains=("clock_reading",))
    s, _, _ = _run(openai_server, jobs, tmp_path, max_attempts=1)
    assert s.stopped is None and s.not_sent == 0 and s.failed == len(jobs) > 4


def test_an_error_outside_the_request_loop_is_that_keys_typed_failure(eval_items, tmp_path, monkeypatch):
    import grip.eval.runner as R
    jobs = item_jobs(eval_items, positions=(1, 2, 3), domains=("clock_reading",), items=1)
    real = R.random_reply

    def bad_for_position_2(item, key):
        if item.position == 2:
            raise KeyError("no such answer type")
        return real(item, key)

    monkeypatch.setattr(R, "random_reply", bad_for_position_2)
    store = ResponseStore(tmp_path / "r.sqlite")
    s = run_jobs(jobs, Endpoint("random", None), Sampling(), store, concurrency=1, progress=False)
    assert (s.done, s.failed, s.failures) == (2, 1, {"InternalError": 1})
    (bad,) = [r for r in store.rows() if r["status"] == "failed"]
    assert bad["position"] == 2 and bad["error_message"] == "KeyError: 'no such answer type'"
    assert bad["attempts"] == 0 and bad["raw_body"] is None


def test_usage_that_is_not_plain_json_does_not_cost_the_answer():
    from grip.eval.runner import extract_content
    body = b'{"choices": [{"message": {"content": "ANSWER: 3"}}], "usage": {"total_tokens": NaN}, "model": "m"}'
    assert extract_content(body) == ("ANSWER: 3", "m", {})   # the raw body keeps the usage as sent
