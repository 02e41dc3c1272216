"""Executors (local pool, Ray) behind one writer, the streamed build.json summary, progress, and a light start-up."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import one_line_error, run

from grip import builder, executors, manifest, progress, summary
from grip.answers import Number
from grip.builder import build

DOMAIN = "clock_reading"   # a cheap registered domain: Ray workers import it by name


def tree_bytes(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "build.json"}


def content(domain_dir: Path) -> dict:
    """build.json less what differs between runs of the same build (times, how it ran)."""
    info = json.loads((domain_dir / "build.json").read_text())
    for k in ("timing", "provenance", "arguments"):
        info.pop(k)
    return info


@pytest.fixture(scope="module")
def local4(tmp_path_factory):
    return build(DOMAIN, 4, tmp_path_factory.mktemp("local"), grain_subset=1).domain_dir


@pytest.fixture(scope="session")
def ray_session():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


# --- Ray ------------------------------------------------------------------------------------------------------

def test_a_ray_build_resuming_a_local_one_gives_the_local_bytes(ray_session, local4, tmp_path):
    # One Ray build covers both paths through the executor: the resume check of the rows on disk and new items.
    build(DOMAIN, 2, tmp_path, grain_subset=1)
    res = build(DOMAIN, 4, tmp_path, grain_subset=1, workers=2, executor="ray")
    assert (res.resumed, res.built) == (2, 2)
    assert tree_bytes(res.domain_dir) == tree_bytes(local4)
    assert content(res.domain_dir) == content(local4)
    assert json.loads((res.domain_dir / "build.json").read_text())["arguments"]["executor"] == "ray"


def test_without_ray_the_error_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)   # import ray fails
    line = one_line_error(run("build", "--domain", DOMAIN, "--n", 2, "--out", tmp_path / "o", "--executor", "ray"))
    assert "pip install 'grip-bench[ray]'" in line and ".[ray]" in line
    assert not (tmp_path / "o").exists()


def test_address_goes_with_the_ray_executor_only(tmp_path):
    one_line_error(run("build", "--domain", DOMAIN, "--n", 2, "--out", tmp_path, "--address", "10.0.0.1:6379"),
                   r"--address .* --executor ray")
    one_line_error(run("build", "--manifest", tmp_path / "none.toml", "--out", tmp_path, "--address", "x:1"),
                   r"--address .* --executor ray")
    assert not (tmp_path / DOMAIN).exists()


def test_a_manifest_build_says_how_many_workers_it_uses(tmp_path):
    m = tmp_path / "one.toml"
    m.write_text(f'[release]\nname = "one"\nseed = 0\nn = 1\ncore = 1\n\n[domains.{DOMAIN}]\ngrain_subset = 0\n')
    res = run("build", "--manifest", m, "--out", tmp_path / "o", "--quiet")
    assert res.exit_code == 0, res.output
    assert "building with 1 worker process" in res.output and "--workers N" in res.output
    res = run("build", "--manifest", m, "--out", tmp_path / "o", "--quiet", "--workers", 1)
    assert res.exit_code == 0 and "worker process" not in res.output, res.output


# --- the streamed summary --------------------------------------------------------------------------------------

def test_no_build_reads_the_whole_store_back(monkeypatch, local4, tmp_path):
    def whole_store(*a, **k):
        raise AssertionError("read every row at once")
    monkeypatch.setattr(manifest, "read_rows", whole_store)
    monkeypatch.setattr(builder, "read_rows", whole_store, raising=False)
    build(DOMAIN, 2, tmp_path, grain_subset=0)
    d = build(DOMAIN, 4, tmp_path, grain_subset=1).domain_dir   # resume, with grain copies made for row 0
    assert tree_bytes(d) == tree_bytes(local4)
    assert content(d) == content(local4)                        # the resumed rows are in the summary


def test_answer_distributions_and_constants_are_typed_json(local4):
    info = json.loads((local4 / "build.json").read_text())
    rows = [json.loads(x) for x in (local4 / "items.jsonl").read_text().splitlines()]
    for qid, q in info["questions"].items():
        dist = q["answer_distribution"]
        assert all(set(e) == {"answer", "count"} for e in dist)
        assert [e["count"] for e in dist] == sorted((e["count"] for e in dist), reverse=True)
        assert sum(e["count"] for e in dist) == 4 and q["distinct_answers"] == len(dist)
        kinds = {r_q["answer"]["type"] for r in rows for r_q in r["questions"] if r_q["id"] == qid}
        want = {"count": int, "number": float, "choice": str, "ordered": list, "record": dict}[kinds.pop()]
        assert all(isinstance(e["answer"], want) for e in dist), (qid, dist)
        if want is not float:
            assert q["constant_baseline"]["constant"] in [e["answer"] for e in dist]


def _brute_baseline(vals, tols, period):
    """The O(n^2) definition: the smallest observed value accepted by the most items."""
    v, tol = np.array(vals), np.array(tols) * (1 + 1e-9) + 1e-9
    best, best_c = -1, None
    for c in np.unique(v):
        d = np.abs(v - c)
        if period:
            d = np.minimum(d % period, period - d % period)
        hits = int(np.count_nonzero(d <= tol))
        if hits > best:
            best, best_c = hits, float(c)
    return {"share": best / len(v), "constant": best_c}


@pytest.mark.parametrize("period", [None, 360.0])
def test_the_numeric_baseline_sweep_equals_its_definition(period):
    rng = np.random.default_rng(7)
    for trial in range(30):
        n = int(rng.integers(1, 60))
        vals = np.round(rng.uniform(0, 360, n) if period else rng.normal(50, 20, n), int(rng.integers(0, 2)))
        vals = vals % 360 if period else vals
        tols = rng.choice([0.0, 0.5, 2.0, 15.0, 200.0], n)
        answers = [Number(float(x), float(t), "deg", decimals=1, period=period).to_json() for x, t in zip(vals, tols)]
        assert summary.constant_baseline(answers) == _brute_baseline(vals, tols, period), (trial, period)


def test_twin_statistics_come_from_grip_twins(monkeypatch, tmp_path):
    seen = []

    class Stats:
        def add(self, row):
            seen.append(row["index"])

        def result(self):
            return {"count": len(seen)}
    monkeypatch.setattr("grip.twins.TwinStats", Stats)
    d = build(DOMAIN, 3, tmp_path, grain_subset=0).domain_dir
    assert seen == [0, 1, 2] and json.loads((d / "build.json").read_text())["twins"] == {"count": 3}


# --- progress and chunks ---------------------------------------------------------------------------------------

def test_grain_items_go_one_per_task_so_progress_moves_at_once():
    assert list(executors._chunks(range(8), 3, 2)) == [[0], [1], [2, 3, 4], [5, 6, 7]]
    assert list(executors._chunks(range(2), 3, 5)) == [[0], [1]]


def test_the_time_left_weighs_grain_items_by_what_they_cost(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    est = progress.Estimate(total=12, grain_items=2)   # 2 grain items first, then 10 plain ones
    assert est.left() is None
    est.add({"sample": 0.1, "draw": 0.1, "encode": 3.2}, grain=3)   # four encodes of 0.8 s
    assert est.left() is None                                      # nothing to take a rate from yet
    now[0] += 3.4
    est.add({"sample": 0.1, "draw": 0.1, "encode": 3.2}, grain=3)
    # plain items estimated at 0.2 + 0.8 s, not the 3.4 s a grain item took: 10 x 1.0 s at 1 wall s per worker s
    assert est.left() == pytest.approx(10.0)
    now[0] += 1.0
    est.add({"sample": 0.1, "draw": 0.1, "encode": 0.8}, grain=0)
    assert est.left() == pytest.approx(9 * 1.0 * 4.4 / 4.4)


# --- start-up ----------------------------------------------------------------------------------------------------

def test_the_build_command_loads_no_heavy_library():
    code = ("import sys, grip.cli, grip.builder, grip.executors, grip.summary, grip.progress\n"
            "from grip import domains; domains.get('clock_reading')\n"
            "print(sorted(m for m in ('datasets', 'matplotlib', 'openai', 'pyarrow', 'ray', 'inspect_ai', "
            "'pandas', 'huggingface_hub') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _sleep(seconds):
    import time
    time.sleep(seconds)


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14+ pools have kill_workers and need no exit-hook fix")
def test_a_stopped_pool_leaves_no_wakeup_pipe_for_the_exit_hook():
    """A build stopped mid-way kills its pool's workers; the pool's manager thread then closes its wake-up pipe, and
    concurrent.futures' exit hook would write to it ('Exception ignored ... Bad file descriptor' after the one-line
    error). `_stop_pool` takes the pipe off the hook's list: it must find the manager thread before shutdown drops it."""
    import concurrent.futures.process as cfp
    ex = executors._pool_class()(max_workers=1, mp_context=executors._mp_context())
    ex.submit(_sleep, 5)
    manager = ex._executor_manager_thread
    assert manager in cfp._threads_wakeups
    executors._stop_pool(ex)
    assert manager not in cfp._threads_wakeups
