"""Build throughput per domain against its floor, in one run (default: every registered domain).

pipeline: `grip build` end to end with one worker (sampling with rejections, answers, margins, drawing, PNG
          encode, grain copies for the first 20 items, atomic writes, items.jsonl, build.json).
floor:    the same accepted scenes drawn and PNG-encoded again, with no sampling, no answers and no I/O.
ratio:    floor items/s / pipeline items/s (the target is <= 1.5).
Then the full pipeline again with --workers (default 2), the figure behind "3,000 items in <= 60 s".

    python benchmarks/build_throughput.py [--n 600] [--workers 2] [--domains gear_trains,clock_reading]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from grip import domains
from grip.builder import build
from grip.renderers.canvas import Canvas, encode_png



def floor_rate(domain_id: str, rows: list[dict]) -> float:
    dom = domains.get(domain_id)
    scenes = [dom.scene_from_json(r["scene"]) for r in rows]
    t0 = time.perf_counter()
    for s in scenes:
        c = Canvas(dom.size_px, dom.world)
        dom.draw(s, c)
        encode_png(c.array())
    return len(scenes) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--domains", default=None, help="comma-separated ids (default: all registered)")
    args = ap.parse_args()
    print(f"{'domain':<20} {'pipeline/s':>10} {'floor/s':>9} {'ratio':>6} {'rej/item':>8} "
          f"{f'w={args.workers} /s':>9} {'3000 items':>10}")
    for d in args.domains.split(",") if args.domains else domains.ids():
        with tempfile.TemporaryDirectory() as tmp:
            one = build(d, args.n, Path(tmp) / "w1", workers=1)
            rows = [json.loads(x) for x in (one.domain_dir / "items.jsonl").read_text().splitlines()]
            pipe = args.n / one.seconds
            flo = floor_rate(d, rows)
            rej = (one.summary["attempts"]["total"] - args.n) / args.n
            many = build(d, args.n, Path(tmp) / "wN", workers=args.workers)
            rate_n = args.n / many.seconds
            print(f"{d:<20} {pipe:>10.1f} {flo:>9.1f} {flo / pipe:>6.2f} {rej:>8.2f} {rate_n:>9.1f} "
                  f"{3000 / rate_n:>9.1f}s", flush=True)


if __name__ == "__main__":
    main()
