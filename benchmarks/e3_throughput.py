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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import measure, tiny_png  # noqa: E402

from grip.eval.prompts import E3_CONDITIONS, E3_TEMPLATE_VERSION, PublicItem, challenge_text
from grip.eval.runner import Job, Turn

CLOSING = "Answer with a whole number. End with a line `ANSWER: ...`."


def _jobs(tmp: Path, items: int) -> list[Job]:
    png, sha = tiny_png(tmp)
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

    measure(lambda tmp: _jobs(tmp, args.items), args.concurrency)


if __name__ == "__main__":
    main()
