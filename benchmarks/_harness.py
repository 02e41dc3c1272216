"""Shared by the eval-runner benchmarks: a small PNG on disk, and one timed pass of the same jobs through
`run_jobs` against an instant local OpenAI-compatible server (a subprocess, so it does not share the client's core)
and through the built-in random model (no HTTP) as the baseline measured alongside."""
from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

from grip.eval.runner import Endpoint, Sampling, run_jobs
from grip.eval.store import ResponseStore

ROOT = Path(__file__).resolve().parent.parent


def tiny_png(tmp: Path) -> tuple[Path, str]:
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (30, 120, 200)).save(buf, format="PNG")
    png = tmp / "tiny.png"
    png.write_bytes(buf.getvalue())
    return png, hashlib.sha256(buf.getvalue()).hexdigest()


def measure(make_jobs, concurrency: int, target: float = 200.0) -> None:
    """make_jobs(tmp) -> jobs; prints requests/s over HTTP and for the random model, their ratio and the target."""
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--no-record"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            t0 = time.perf_counter()
            jobs = make_jobs(tmp)
            print(f"{len(jobs)} jobs made in {time.perf_counter() - t0:.2f} s")
            # warm-up: imports and the first connections are not harness overhead
            run_jobs(jobs[:20], Endpoint("bench", url), Sampling(), ResponseStore(tmp / "warm.sqlite"),
                     concurrency=concurrency, progress=False)
            results = {}
            for name, endpoint in (("http", Endpoint("bench", url)), ("random", Endpoint("random", None))):
                store = ResponseStore(tmp / f"{name}.sqlite")
                t0 = time.perf_counter()
                s = run_jobs(jobs, endpoint, Sampling(), store, concurrency=concurrency, progress=False)
                dt = time.perf_counter() - t0
                if s.done != len(jobs):
                    raise SystemExit(f"{name}: only {s.done} of {len(jobs)} done ({s.failures})")
                results[name] = len(jobs) / dt
                print(f"{name:>7}: {len(jobs)} requests in {dt:.2f} s = {len(jobs) / dt:,.0f} requests/s "
                      f"(concurrency {concurrency}, one commit per response)")
            print(f"http / random = {results['http'] / results['random']:.2f}")
            print(f"target >= {target:.0f} requests/s:", "met" if results["http"] >= target else "NOT met")
    finally:
        server.terminate()
        server.wait(10)
