"""How long a whole release takes to build: every domain of a manifest built at a reduced n, at 1 and 2 workers,
and the release's full item count extrapolated from those rates.

Per domain (a line as each finishes):
  w=1 /s    `build` end to end with one worker (sampling, answers, drawing, PNG encode, writes; no grain copies:
            at a reduced n they would weigh far more than in a release), items per second of wall time.
  w=2 /s    the same with two workers, wall time, on other items (the next seed but one: no scene the first
            builds made, whose per-scene caches a forked worker would inherit). Both wall rates include whatever
            else the machine runs, and the pool's start, which a 3,000-item build pays once but a small one pays
            in every item.
  cpu /s    items per CPU second of one worker that has already made items: a second one-worker build of n
            items in the same process, of the next seed (other items of the same levels; every per-process table
            and cache warm, no scene repeated), CPU of the process: the rate of one core that has the machine to
            itself, as in a 3,000-item build, which pays a process's warm-up once. (A resumed store would not do:
            resuming re-checks rows already there.)
  cpu2 /s   items per CPU second of the two-worker build: its workers and the process that writes the store
            (receiving each item, writing its files and row), all counted, less what starting and stopping the
            pool costs (measured by a two-worker build of 2 more items, beyond 2 items at cpu /s): the per-item
            cost of a release on two cores.
  warm-up   CPU seconds the first n items cost beyond n items at that rate: the domain's import and the
            tables its process builds once (paid once per domain by each worker of a release build).
  floor /s  the same accepted scenes drawn and PNG-encoded again, nothing else, per CPU second (as
            build_throughput.py measures, in CPU time): the most a build could reach.
  floor/cpu how far the pipeline is from that floor (1.0 = nothing but drawing and encoding).
  audit     CPU seconds of the audit `grip build` prints at its end (grip.audit.build_summary: reading the
            rows back, then auditing them), over the recipe's n items (at most the audit's MAX_ROWS): the n built
            items repeated to that count. In a release build it runs in a process of its own beside the next
            domain's build, so it is shared by the two cores like the items (the last domain's adds whole).
  release   this domain's recipe n at cpu2 /s, plus two workers' warm-up and its audit, shared by two cores.
Then the slowest five domains, the CPU cost of one item's grain copies (three sigmas, each PNG-encoded; noise
compresses slowly), and the release extrapolated: its items at the cpu2 rates plus its grain items (each domain's
grain subset), two warm-ups per domain and the audits but the last, shared by two cores, plus the last audit (the
target is <= 15 min); the same from the measured wall rates at two workers (with every audit added whole); and per
added worker (a Ray worker, say) as a linear estimate, T(k) = CPU seconds / k, which assumes each worker has a core
of its own as fast as this one and no overhead: an estimate, not a measurement. (A Ray release build runs its audits
in the build process: add them whole there.) The real thing, for comparison:
`time grip build --manifest manifests/grip-v1.toml --workers 2 --out DIR`.

    python benchmarks/release.py [--manifest manifests/grip-v1.toml] [--n 30] [--domains a,b]
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_throughput import floor_rate, read_rows  # noqa: E402

from grip import domains  # noqa: E402
from grip.audit import MAX_ROWS, build_summary  # noqa: E402
from grip.builder import build, generate  # noqa: E402
from grip.grain import SIGMAS, grain_copies  # noqa: E402
from grip.release import load_recipe  # noqa: E402
from grip.renderers.canvas import encode_png  # noqa: E402
from grip.seeding import item_seed  # noqa: E402

TARGET_S = 15 * 60      # the release on 2 cores


def _fmt(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (pool workers count once they exit)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def grain_seconds(domain_id: str, k: int = 3) -> float:
    """CPU seconds for one item's grain copies (every sigma, PNG-encoded), over k items of a domain."""
    dom = domains.get(domain_id)
    rgbs = [generate(dom, item_seed("0", domain_id, i), 1 + i % 3).rgb for i in range(k)]
    t0 = time.process_time()
    for i, rgb in enumerate(rgbs):
        for arr in grain_copies(rgb, f"{domain_id}_{i:06d}.png", SIGMAS).values():
            encode_png(arr)
    return (time.process_time() - t0) / k


def audit_seconds(store: Path, m: int, scratch: Path) -> float:
    """CPU seconds of the audit a build prints at its end (`build_summary`: reading the store's rows, then
    auditing them) over m rows: the store's rows repeated to that count, in a scratch store."""
    lines = (store / "items.jsonl").read_bytes().splitlines(keepends=True)
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "items.jsonl").write_bytes(b"".join((lines * -(-m // len(lines)))[:m]))
    t0 = time.process_time()
    build_summary(scratch)
    return time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", type=Path, default=ROOT / "manifests" / "grip-v1.toml")
    ap.add_argument("--n", type=int, default=30, help="items built per domain and worker count (default 30)")
    ap.add_argument("--domains", default=None, help="comma-separated subset of the manifest's domains")
    args = ap.parse_args(argv)
    if args.n < 2:
        print("release: error: --n must be at least 2 (two workers need two items)", file=sys.stderr)
        return 2
    try:
        recipe = load_recipe(args.manifest)
    except Exception as e:   # a missing or bad manifest: one line
        print(f"release: error: {e}", file=sys.stderr)
        return 2
    recipes = list(recipe.domains)
    if args.domains:
        want = args.domains.split(",")
        unknown = sorted(set(want) - {d.domain for d in recipes})
        if unknown:
            print(f"release: error: not in {args.manifest.name}: {', '.join(unknown)}", file=sys.stderr)
            return 2
        recipes = [d for d in recipes if d.domain in want]
    total_n = sum(d.n for d in recipes)
    print(f"{recipe.name}: {len(recipes)} domains, {total_n:,} items in the recipe; building {args.n} per domain "
          f"at 1 and 2 workers", flush=True)
    print(f"{'domain':<22} {'w=1 /s':>7} {'w=2 /s':>7} {'cpu /s':>7} {'cpu2 /s':>7} {'warm-up':>7} {'floor /s':>8} "
          f"{'floor/cpu':>9} {'audit':>6} {'release':>9}", flush=True)
    rows = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for d in recipes:
            wall = []
            for workers in (1, 2):
                c0 = _cpu()
                res = build(d.domain, args.n, Path(tmp) / f"w{workers}", seed=d.seed + 2 * (workers - 1),
                            level=d.level, workers=workers, grain_subset=0)
                wall.append(args.n / res.seconds)
                if workers == 1:
                    c1 = _cpu()
                    build(d.domain, args.n, Path(tmp) / "warm", seed=d.seed + 1, level=d.level, workers=1,
                          grain_subset=0)
                    cpu = args.n / (_cpu() - c1)
                    warm = max(0.0, (c1 - c0) - args.n / cpu)
                    first = res.domain_dir
                else:
                    c2 = _cpu()
                    build(d.domain, 2, Path(tmp) / "pool", seed=d.seed + 3, level=d.level, workers=2, grain_subset=0)
                    pool = max(0.0, (_cpu() - c2) - 2 / cpu)
                    cpu2 = args.n / max((c2 - c0) - pool, 1e-9)
            built = read_rows(first)
            flo = floor_rate(d.domain, built, clock=time.process_time)
            aud = audit_seconds(first, min(d.n, MAX_ROWS), Path(tmp) / "audit" / d.domain)
            rows.append((d, wall[0], wall[1], cpu, warm, cpu2, aud))
            print(f"{d.domain:<22} {wall[0]:>7.1f} {wall[1]:>7.1f} {cpu:>7.1f} {cpu2:>7.1f} {warm:>7.2f} "
                  f"{flo:>8.1f} {flo / cpu:>9.2f} {aud:>6.1f} {_fmt((d.n / cpu2 + 2 * warm + aud) / 2):>9}", flush=True)
    print(f"({time.perf_counter() - t_start:.0f} s of building)")
    slow = sorted(rows, key=lambda r: r[3])[:5]
    print("slowest five (items per CPU s): " + ", ".join(f"{r[0].domain} {r[3]:.1f}" for r in slow))
    g_items = sum(min(d.grain_subset, d.n) for d in recipes)
    g_s = grain_seconds(recipes[0].domain)
    print(f"grain copies: {g_s:.2f} CPU s per item (3 sigmas, encoded) x {g_items:,} grain items = "
          f"{_fmt(g_s * g_items)} of CPU", flush=True)
    warm_total = 2 * sum(r[4] for r in rows)
    one_core = sum(r[0].n / r[3] for r in rows)
    cpu_total = sum(r[0].n / r[5] for r in rows) + g_s * g_items + warm_total
    wall2 = sum(r[0].n / r[2] for r in rows) + g_s * g_items / 2
    print(f"warm-ups: {_fmt(warm_total)} of CPU (two workers, every domain); the items at one worker's CPU rates "
          f"{_fmt(one_core)}, at the two-worker build's (writer and workers) {_fmt(cpu_total - g_s * g_items - warm_total)}",
          flush=True)
    audits, last = sum(r[6] for r in rows), rows[-1][6]
    on_two = (cpu_total + audits - last) / 2 + last
    print(f"closing audits: {_fmt(audits)} of CPU in all, each beside the next domain's build (shared by the two "
          f"cores), the last one's ({last:.1f} s) after it (added whole)", flush=True)
    print(f"release ({total_n:,} items): {_fmt(cpu_total)} of CPU for the items; on 2 cores {_fmt(on_two)} with the "
          f"audits (target <= {_fmt(TARGET_S)}: {'met' if on_two <= TARGET_S else 'NOT met'}); at the wall rates "
          f"measured with 2 workers just now, {_fmt(wall2 + audits)}")
    print("linear estimate per added worker, CPU seconds / workers + the last audit (not measured): "
          + ", ".join(f"{k} workers {_fmt((cpu_total + audits - last) / k + last)}" for k in (3, 4, 8, 16, 32)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
