"""Harness overhead of the eval runner: requests/s through `run_jobs` against an instant local OpenAI-compatible
server (a subprocess, so it does not share the client's core), with a small PNG, one SQLite commit per response.
The built-in random model (no HTTP at all) is run on the same jobs as the baseline.

    .venv/bin/python benchmarks/eval_throughput.py [--n 2000] [--concurrency 64]

Target: >= 200 requests/s on a 2-core machine.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import measure, tiny_png  # noqa: E402

from grip.eval.prompts import PublicItem
from grip.eval.runner import Job



def _jobs(tmp: Path, n: int) -> list[Job]:
    png, sha = tiny_png(tmp)
    return [Job("bench", "sigma0", PublicItem(f"bench_{i:06d}", "bench", "bench", 1, "observe", f"q{i}",
                                              f"How many dots are there? ({i})",
                                              "Answer with a whole number. End with a line `ANSWER: ...`.",
                                              png, sha)) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()

    measure(lambda tmp: _jobs(tmp, args.n), args.concurrency)


if __name__ == "__main__":
    main()
