"""Build throughput per domain against its floor, in one run (default: every registered domain, 30 items each,
one to two minutes on two quiet cores; `--n 600` for steadier figures, ten minutes or more).

Columns, one line per domain as it finishes:
  pipeline/s  `grip build` end to end with one worker (sampling with rejections, answers, margins, drawing, PNG
              encode, grain copies, atomic writes, items.jsonl, build.json), items/s. Grain copies go to the
              first n x 20 / 3000 items (a release's share: 20 of 3,000), unless --grain-subset says otherwise.
  floor/s     the same accepted scenes drawn and PNG-encoded again, with no sampling, no answers and no I/O.
  ratio       floor/s over pipeline/s: what sampling and bookkeeping add (the target is <= 1.5).
  rej/item    candidate scenes rejected per accepted item.
  w=K /s      the full pipeline again with --workers K (default 2), items/s.
  3000 items  seconds for 3,000 items at the w=K rate (the figure behind "3,000 items in <= 60 s").

    python benchmarks/build_throughput.py [--n 30] [--workers 2] [--domains gear_trains,clock_reading]
    make bench BENCH="--n 600"
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from grip import domains
from grip.builder import build
from grip.renderers.canvas import Canvas, encode_png


def read_rows(domain_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (domain_dir / "items.jsonl").read_text().splitlines()]


def floor_rate(domain_id: str, rows: list[dict], clock=time.perf_counter) -> float:
    """Items/s drawing and encoding the rows' scenes again, nothing else (`clock=time.process_time`: per CPU s)."""
    dom = domains.get(domain_id)
    scenes = [dom.scene_from_json(r["scene"]) for r in rows]
    t0 = clock()
    for s in scenes:
        c = Canvas(dom.size_px, dom.world)
        dom.draw(s, c)
        encode_png(c.array())
    return len(scenes) / (clock() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=30, help="items per domain and build (default 30)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--domains", default=None, help="comma-separated ids (default: all registered)")
    ap.add_argument("--grain-subset", type=int, default=None, help="items with grain copies (default n*20/3000)")
    args = ap.parse_args(argv)
    grain = args.n * 20 // 3000 if args.grain_subset is None else args.grain_subset
    ids = args.domains.split(",") if args.domains else domains.ids()
    unknown = [d for d in ids if d not in domains.ids()]
    if unknown or args.n < max(2, args.workers) or args.workers < 1:
        why = (f"unknown domain {', '.join(unknown)}" if unknown else
               "--workers must be >= 1" if args.workers < 1 else f"--n must be at least {max(2, args.workers)}")
        print(f"build_throughput: error: {why}", file=sys.stderr)
        return 2
    print(__doc__.split("\n\n    python")[0], flush=True)
    print(f"\n{len(ids)} domains x {args.n} items ({grain} with grain copies), then again at --workers "
          f"{args.workers}:", flush=True)
    w = f"w={args.workers} /s"
    print(f"{'':<8}{'domain':<20} {'pipeline/s':>10} {'floor/s':>9} {'ratio':>6} {'rej/item':>8} {w:>9} "
          f"{'3000 items':>10}", flush=True)
    t_start = time.perf_counter()
    for k, d in enumerate(ids, 1):
        with tempfile.TemporaryDirectory() as tmp:
            one = build(d, args.n, Path(tmp) / "w1", workers=1, grain_subset=grain)
            pipe = args.n / one.seconds
            flo = floor_rate(d, read_rows(one.domain_dir))
            rej = (one.summary["attempts"]["total"] - args.n) / args.n
            many = build(d, args.n, Path(tmp) / "wN", workers=args.workers, grain_subset=grain)
            rate_n = args.n / many.seconds
            print(f"[{k:>2}/{len(ids)}] {d:<20} {pipe:>10.1f} {flo:>9.1f} {flo / pipe:>6.2f} {rej:>8.2f} "
                  f"{rate_n:>9.1f} {3000 / rate_n:>9.1f}s", flush=True)
    print(f"done in {time.perf_counter() - t_start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
