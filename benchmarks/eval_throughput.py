"""Harness overhead of the eval runner: requests/s through `run_jobs` against an instant local OpenAI-compatible
server (a subprocess, so it does not share the client's core), with a small PNG, one SQLite commit per response.
The built-in random model (no HTTP at all) is run on the same jobs as the baseline.

    .venv/bin/python benchmarks/eval_throughput.py [--n 2000] [--concurrency 64]

Target: >= 200 requests/s on a 2-core machine.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

from grip.eval.prompts import PublicItem
from grip.eval.runner import Endpoint, Job, Sampling, run_jobs
from grip.eval.store import ResponseStore

ROOT = Path(__file__).resolve().parent.parent


def _jobs(tmp: Path, n: int) -> list[Job]:
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (30, 120, 200)).save(buf, format="PNG")
    png = tmp / "tiny.png"
    png.write_bytes(buf.getvalue())
    sha = hashlib.sha256(buf.getvalue()).hexdigest()
    return [Job("bench", "sigma0", PublicItem(f"bench_{i:06d}", "bench", "bench", 1, "observe", f"q{i}",
                                              f"How many dots are there? ({i})",
                                              "Answer with a whole number. End with a line `ANSWER: ...`.",
                                              png, sha)) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()

    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--no-record"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            jobs = _jobs(tmp, args.n)
            # warm-up: imports and the first connections are not harness overhead
            run_jobs(jobs[:20], Endpoint("bench", url), Sampling(), ResponseStore(tmp / "warm.sqlite"),
                     concurrency=args.concurrency, progress=False)
            results = {}
            for name, endpoint in (("http", Endpoint("bench", url)), ("random", Endpoint("random", None))):
                store = ResponseStore(tmp / f"{name}.sqlite")
                t0 = time.perf_counter()
                s = run_jobs(jobs, endpoint, Sampling(), store, concurrency=args.concurrency, progress=False)
                dt = time.perf_counter() - t0
                if s.done != args.n:
                    raise SystemExit(f"{name}: only {s.done} of {args.n} done ({s.failures})")
                results[name] = args.n / dt
                print(f"{name:>7}: {args.n} requests in {dt:.2f} s = {args.n / dt:,.0f} requests/s "
                      f"(concurrency {args.concurrency}, one commit per response)")
            print(f"http / random = {results['http'] / results['random']:.2f}")
            print("target >= 200 requests/s:", "met" if results["http"] >= 200 else "NOT met")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
