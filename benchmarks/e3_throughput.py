"""Harness throughput of E3 (multi-turn requests): 680 items x 5 rungs x 4 conditions = 13,600 challenge requests
through `run_jobs` against an instant local OpenAI-compatible server (a subprocess, so it does not share the
client's core). Each request carries the first turn (a small PNG and the question), the stored first reply and the
challenge turn made by the E3 templates, and is keyed over the whole conversation; one SQLite commit per response.
The built-in random model (no HTTP) runs the same jobs as the baseline measured alongside.

    .venv/bin/python benchmarks/e3_throughput.py [--items 680] [--concurrency 64]

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

from grip.eval.prompts import E3_CONDITIONS, E3_TEMPLATE_VERSION, PublicItem, challenge_text
from grip.eval.runner import Endpoint, Job, Sampling, Turn, run_jobs
from grip.eval.store import ResponseStore

ROOT = Path(__file__).resolve().parent.parent
CLOSING = "Answer with a whole number. End with a line `ANSWER: ...`."


def _jobs(tmp: Path, items: int) -> list[Job]:
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (30, 120, 200)).save(buf, format="PNG")
    png = tmp / "tiny.png"
    png.write_bytes(buf.getvalue())
    sha = hashlib.sha256(buf.getvalue()).hexdigest()
    jobs = []
    for i in range(items):
        for rung in range(1, 6):
            item = PublicItem(f"bench_{i:06d}", "bench", "bench", rung, "observe", f"q{rung}",
                              f"How many dots are there? ({i}, {rung})", CLOSING, png, sha)
            first_key = hashlib.sha256(f"e1:{i}:{rung}".encode()).hexdigest()
            reply = f"I count the dots one by one.\nANSWER: {i % 9}"
            for c in E3_CONDITIONS:
                text = challenge_text(c, None if c == "control" else str(i % 9 + 1), CLOSING)
                jobs.append(Job("e3", c, item, (Turn(first_key, reply, text, E3_TEMPLATE_VERSION),)))
    return jobs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=680)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()

    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "openai_server.py"), "--no-record"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            t0 = time.perf_counter()
            jobs = _jobs(tmp, args.items)
            print(f"{len(jobs)} E3 jobs made in {time.perf_counter() - t0:.2f} s")
            run_jobs(jobs[:20], Endpoint("bench", url), Sampling(), ResponseStore(tmp / "warm.sqlite"),
                     concurrency=args.concurrency, progress=False)   # warm-up: imports and first connections
            results = {}
            for name, endpoint in (("http", Endpoint("bench", url)), ("random", Endpoint("random", None))):
                store = ResponseStore(tmp / f"{name}.sqlite")
                t0 = time.perf_counter()
                s = run_jobs(jobs, endpoint, Sampling(), store, concurrency=args.concurrency, progress=False)
                dt = time.perf_counter() - t0
                if s.done != len(jobs):
                    raise SystemExit(f"{name}: only {s.done} of {len(jobs)} done ({s.failures})")
                results[name] = len(jobs) / dt
                print(f"{name:>7}: {len(jobs)} requests in {dt:.2f} s = {len(jobs) / dt:,.0f} requests/s "
                      f"(concurrency {args.concurrency}, one commit per response)")
            print(f"http / random = {results['http'] / results['random']:.2f}")
            print("target >= 200 requests/s:", "met" if results["http"] >= 200 else "NOT met")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
