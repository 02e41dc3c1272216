"""The response store: keys, verbatim bodies, resume semantics, refusal of foreign files, and SIGKILL durability."""
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from openai_server import item_jobs, openai_server  # noqa: F401 - fixture

from grip.eval.runner import Endpoint, Sampling, job_key, run_jobs
from grip.eval.store import COLUMNS, ResponseStore, StoreError, request_key

REQ = {"template": "v1", "messages": [{"role": "user", "content": [
    {"type": "image_url", "image_url": {"url": "sha256:" + "ab" * 32}}, {"type": "text", "text": "How many?"}]}]}
SAMPLING = {"temperature": 0.0, "max_tokens": 64, "top_p": 1.0, "seed": 0}


def _record(key="k1", status="ok", **kw):
    rec = {"key": key, "experiment": "e1", "condition": "sigma0", "model": "m", "base_url": "http://h/v1",
           "item_id": "clock_reading_000000", "domain": "clock_reading", "family": "physical",
           "question_id": "q", "position": 1, "rung": "observe", "status": status, "attempts": 1,
           "sampling": SAMPLING, "request": REQ, "template_version": "v1"}
    if status == "ok":
        rec.update(raw_body='{"choices": []}', content="ANSWER: 3", response_model="m-2024", usage={"a": 1},
                   latency_s=0.5, http_status=200)
    else:
        rec.update(error_class="ServerError", http_status=500, raw_body="oops", error_message="HTTP 500")
    rec.update(kw)
    return rec


def test_request_key_depends_on_every_part_and_nothing_else():
    base = request_key("m", "http://h/v1", REQ, SAMPLING, "e1", "sigma0")
    assert len(base) == 64 and int(base, 16) >= 0
    assert request_key("m", "http://h/v1/", REQ, SAMPLING, "e1", "sigma0") == base   # trailing slash
    assert request_key("m", "http://h/v1", json.loads(json.dumps(REQ)), dict(reversed(SAMPLING.items())),
                       "e1", "sigma0") == base   # dict order
    other_req = json.loads(json.dumps(REQ))
    other_req["messages"][0]["content"][0]["image_url"]["url"] = "sha256:" + "cd" * 32
    variants = [("m2", "http://h/v1", REQ, SAMPLING, "e1", "sigma0"),
                ("m", "http://other/v1", REQ, SAMPLING, "e1", "sigma0"),
                ("m", None, REQ, SAMPLING, "e1", "sigma0"),
                ("m", "http://h/v1", other_req, SAMPLING, "e1", "sigma0"),
                ("m", "http://h/v1", REQ, {**SAMPLING, "temperature": 0.7}, "e1", "sigma0"),
                ("m", "http://h/v1", REQ, {**SAMPLING, "top_k": 5}, "e1", "sigma0"),
                ("m", "http://h/v1", REQ, SAMPLING, "e2", "sigma0"),
                ("m", "http://h/v1", REQ, SAMPLING, "e1", "sigma15")]
    keys = {request_key(*v) for v in variants}
    assert len(keys) == len(variants) and base not in keys
    with pytest.raises(StoreError):
        request_key("m", None, {"x": float("nan")}, SAMPLING, "e1", "c")


def test_put_and_read_back_verbatim(tmp_path):
    body = '{"choices": [{"message": {"content": "Ünïcode ✓\\n  spaced  "}}],   "x": 1}\n'
    with ResponseStore(tmp_path / "r.sqlite") as s:
        assert s.put(_record(raw_body=body))
        row = s.get("k1")
    with ResponseStore(tmp_path / "r.sqlite") as s:  # reopened: it was committed
        rows = list(s.rows())
    assert rows == [row]
    assert row["raw_body"] == body
    assert row["usage"] == {"a": 1} and row["sampling"] == SAMPLING and row["request"] == REQ
    assert set(row) == set(COLUMNS)
    for f in ("key", "experiment", "condition", "model", "base_url", "item_id", "domain", "question_id",
              "position", "status", "http_status", "error_class", "attempts", "raw_body", "content",
              "response_model", "usage", "latency_s", "sampling", "template_version", "created_at"):
        assert f in row


def test_ok_is_never_replaced_failed_is(tmp_path):
    with ResponseStore(tmp_path / "r.sqlite") as s:
        assert s.put(_record("a", "failed"))
        assert s.failed_keys() == {"a"} and s.completed_keys() == set()
        assert s.put(_record("a", "failed", attempts=3))
        assert s.get("a")["attempts"] == 3
        assert s.put(_record("a", "ok", content="first"))
        assert not s.put(_record("a", "ok", content="second"))
        assert not s.put(_record("a", "failed"))
        assert s.get("a")["content"] == "first"
        assert s.completed_keys() == {"a"} and s.failed_keys() == set()
        assert s.count() == {"ok": 1, "failed": 0}
        n = s._db.execute("SELECT COUNT(*) FROM responses WHERE key='a'").fetchone()[0]
        assert n == 1


def test_rows_filter_by_experiment(tmp_path):
    with ResponseStore(tmp_path / "r.sqlite") as s:
        s.put(_record("a", experiment="e1"))
        s.put(_record("b", experiment="e2"))
        assert [r["key"] for r in s.rows("e2")] == ["b"]
        assert {r["key"] for r in s.rows()} == {"a", "b"}
        assert s.count("e1") == {"ok": 1, "failed": 0}


@pytest.mark.parametrize("bad", [{"key": None}, {"status": "maybe"}, {"bogus_field": 1}, {"attempts": None}])
def test_bad_records_are_refused(tmp_path, bad):
    with ResponseStore(tmp_path / "r.sqlite") as s:
        with pytest.raises(StoreError):
            s.put(_record(**bad))
        assert list(s.rows()) == []


def test_foreign_files_are_refused(tmp_path):
    (tmp_path / "text.sqlite").write_text("hello, not a database " * 100)
    with pytest.raises(StoreError, match="not a grip response store"):
        ResponseStore(tmp_path / "text.sqlite")
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    with pytest.raises(StoreError, match="not a grip response store"):
        ResponseStore(tmp_path / "other.sqlite")
    with pytest.raises(StoreError, match="folder"):
        ResponseStore(tmp_path)


def test_wal_mode_and_concurrent_reader(tmp_path):
    with ResponseStore(tmp_path / "r.sqlite") as writer:
        assert writer._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        writer.put(_record("a"))
        with ResponseStore(tmp_path / "r.sqlite") as reader:
            assert reader.completed_keys() == {"a"}
            writer.put(_record("b"))
            assert reader.completed_keys() == {"a", "b"}


CHILD = textwrap.dedent("""
    import hashlib, sys
    sys.path.insert(0, {tests!r})
    from pathlib import Path
    from openai_server import item_jobs
    from grip.eval.runner import Endpoint, Sampling, run_jobs
    from grip.eval.store import ResponseStore

    class Acking(ResponseStore):
        def put(self, record):
            written = super().put(record)          # committed when this returns
            body = record.get("raw_body") or b""
            body = body.encode() if isinstance(body, str) else body
            print("ACK", record["key"], record["status"], hashlib.sha256(body).hexdigest(), flush=True)
            return written

    jobs = [j for c in range(3) for j in item_jobs(Path({root!r}), "e1", sigmas=(0, 15))]
    run_jobs(jobs, Endpoint("scripted", {url!r}), Sampling(), Acking({db!r}), concurrency=4, progress=False)
    print("FINISHED", flush=True)
""")


def test_sigkill_mid_run_loses_nothing_acknowledged(tmp_path, eval_items, openai_server):  # noqa: F811
    """Kill -9 a run half way, rerun: every key stored exactly once, every acknowledged response kept as it was,
    completed keys not asked again."""
    openai_server.delay_s = 0.02
    db = tmp_path / "r.sqlite"
    jobs = item_jobs(eval_items, "e1", sigmas=(0, 15))
    endpoint, sampling = Endpoint("scripted", openai_server.url), Sampling()
    keys = {job_key(j, endpoint, sampling) for j in jobs}
    assert len(keys) == len(jobs)
    script = CHILD.format(tests=str(Path(__file__).parent), root=str(eval_items), url=openai_server.url,
                          db=str(db))
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).parent.parent)
    acked: dict[str, str] = {}
    deadline = time.monotonic() + 60
    try:
        for line in child.stdout:
            if line.startswith("ACK"):
                _, key, status, digest = line.split()
                assert status == "ok"
                acked[key] = digest
            if len(acked) >= len(keys) // 3 or time.monotonic() > deadline:
                break
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(10)
    assert child.returncode == -signal.SIGKILL
    time.sleep(0.3)   # let the server finish handling what the child sent before it died
    assert 0 < len(acked) < len(keys), "the kill must land mid-run"

    with ResponseStore(db) as store:
        assert store.integrity_ok()
        before = store.completed_keys()
        assert set(acked) <= before
        sent_before = len(openai_server.requests)
        summary = run_jobs(jobs, endpoint, sampling, store, concurrency=4, progress=False)
        assert summary.skipped == len(before)
        assert summary.done == len(keys) - len(before) and summary.failed == 0
        assert len(openai_server.requests) - sent_before == len(keys) - len(before)
        rows = list(store.rows())
        assert sorted(r["key"] for r in rows) == sorted(keys)           # every key, exactly once
        n, distinct = store._db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM responses").fetchone()
        assert n == distinct == len(keys)
        by_key = {r["key"]: r for r in rows}
        for key, digest in acked.items():                                 # acknowledged = kept unchanged
            assert hashlib.sha256(by_key[key]["raw_body"].encode()).hexdigest() == digest
        assert all(r["status"] == "ok" for r in rows)


# -- regressions ----------------------------------------------------------------------------------------------------


def test_lone_surrogates_are_storable_and_the_raw_body_is_kept_exactly(tmp_path):
    # A reply may carry "\ud800" (legal JSON); as a Python str it cannot be encoded as UTF-8, which used to make
    # put raise UnicodeEncodeError.
    with ResponseStore(tmp_path / "r.sqlite") as s:
        s.put(_record("a", content="x \ud800 ANSWER: 3", response_model="m\udfff", usage={"note": "\ud800"},
                      raw_body='{"c": "\ud800"}'))
        s.put(_record("b", "failed", error_message="HTTP 500: \ud800", raw_body=b'{"e": "\\ud800"}'))
        a, b = s.get("a"), s.get("b")
    assert a["content"] == "x \ufffd ANSWER: 3" and a["response_model"] == "m\ufffd"
    assert a["usage"] == {"note": "\ufffd"} and b["error_message"] == "HTTP 500: \ufffd"
    db = sqlite3.connect(tmp_path / "r.sqlite")
    raw = dict(db.execute("SELECT key, raw_body FROM responses"))
    assert raw["a"].decode("utf-8", "surrogatepass") == '{"c": "\ud800"}'   # lossless
    assert raw["b"] == b'{"e": "\\ud800"}'


def test_readonly_store_reads_and_never_writes(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResponseStore(path) as s:
        s.put(_record("a"))
        s.put(_record("b", "failed"))
    before = path.read_bytes()
    with ResponseStore(path, readonly=True) as ro:
        assert {r["key"] for r in ro.rows()} == {"a", "b"} and ro.completed_keys() == {"a"}
        with pytest.raises(StoreError, match="read-only"):
            ro.put(_record("c"))
        # SQLite itself refuses writes on this connection (mode=ro), whatever the file permissions say
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro._db.execute("DELETE FROM responses")
    assert path.read_bytes() == before
    with pytest.raises(StoreError, match="no response store"):
        ResponseStore(tmp_path / "missing.sqlite", readonly=True)
    assert not (tmp_path / "missing.sqlite").exists()
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with pytest.raises(StoreError, match="not a grip response store"):
        ResponseStore(tmp_path / "empty.sqlite", readonly=True)
    assert (tmp_path / "empty.sqlite").read_bytes() == b""
    (tmp_path / "text.sqlite").write_text("hello, not a database " * 100)
    with pytest.raises(StoreError, match="not a grip response store"):
        ResponseStore(tmp_path / "text.sqlite", readonly=True)


def test_readonly_store_reads_alongside_a_writer(tmp_path):
    with ResponseStore(tmp_path / "r.sqlite") as writer:
        writer.put(_record("a"))
        with ResponseStore(tmp_path / "r.sqlite", readonly=True) as reader:
            assert reader.completed_keys() == {"a"}
            writer.put(_record("b"))
            assert reader.completed_keys() == {"a", "b"}


def test_a_store_that_cannot_be_written_says_so(tmp_path):
    # used to read "not a grip response store (unable to open database file)"
    with pytest.raises(StoreError, match=r"^cannot write the response store at /proc/x\.sqlite \(unable to open"):
        ResponseStore("/proc/x.sqlite")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreError, match="cannot write the response store at .*cannot create its folder"):
        ResponseStore(tmp_path / "afile" / "r.sqlite")
    with pytest.raises(StoreError, match=r"cannot read the response store at /proc/1/mem|not a grip"):
        ResponseStore("/proc/1/mem", readonly=True)


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.skipif(not shutil.which("setpriv") or os.geteuid() != 0, reason="needs root and setpriv")
def test_read_only_file_in_read_only_folder_as_another_user():
    """As user nobody (the tests run as root, for whom nothing is read-only): a 0444 store in a 0555 folder is
    readable read-only (scoring), and opening it, or a new store beside it, for writing says it cannot write."""
    probe = subprocess.run(NOBODY + [sys.executable, "-c", "import grip.eval.store"], check=False,
                           capture_output=True, cwd=Path(__file__).parent.parent, timeout=60)
    if probe.returncode != 0:   # the checkout or its venv is not readable by nobody (a root-only home folder)
        pytest.skip("user nobody cannot import grip from this checkout")
    top = Path(tempfile.mkdtemp(prefix="grip_ro_"))
    try:
        top.chmod(0o755)
        folder = top / "ro"
        folder.mkdir()
        with ResponseStore(folder / "r.sqlite") as s:
            s.put(_record("a"))
        (folder / "r.sqlite").chmod(0o444)
        folder.chmod(0o555)
        code = textwrap.dedent(f"""
            from grip.eval.store import ResponseStore, StoreError
            with ResponseStore({str(folder / "r.sqlite")!r}, readonly=True) as s:
                print("READ", sorted(s.completed_keys()))
            for p in ({str(folder / "r.sqlite")!r}, {str(folder / "new.sqlite")!r}):
                try:
                    ResponseStore(p)
                except StoreError as e:
                    print("ERR", e)
        """)
        out = subprocess.run(NOBODY + [sys.executable, "-c", code], check=False, capture_output=True, text=True,
                             cwd=Path(__file__).parent.parent, timeout=60)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[0] == "READ ['a']"
        assert lines[1].startswith(f"ERR cannot write the response store at {folder / 'r.sqlite'} (")
        assert lines[2].startswith(f"ERR cannot write the response store at {folder / 'new.sqlite'} (")
        assert sorted(p.name for p in folder.iterdir()) == ["r.sqlite"]
    finally:
        for p in (top / "ro", top):
            if p.exists():
                p.chmod(0o755)
        shutil.rmtree(top)
