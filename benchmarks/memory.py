"""Memory and CPU of `grip build` against n: peak RSS, user and system CPU time of the whole build (one child
process per run, read with os.wait4, so its pool workers are counted), and the CPU a build spends before its
first item. The targets: peak RSS at the largest n within 1.1 x the smallest's, and CPU time linear in n.

    python benchmarks/memory.py [--domain physical_stability] [--n 3000,30000] [--workers 1,2] [--grain-subset 20]

Peak RSS is the largest single process of the build (the writer or one worker), as the kernel reports it for
the child and the descendants it waited for.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Run in a child: the CPU time of this process from exec to the first item (imports, registry, store checks).
FIRST_ITEM = """
import os, sys
from grip.cli import main   # first, as the `grip` console script does (it sets the process's BLAS threads)
from grip import builder
real = builder.make_item
def first(*a, **k):
    t = os.times()
    print(f"FIRST {t.user:.3f} {t.system:.3f}", file=sys.stderr, flush=True)
    builder.make_item = real
    return real(*a, **k)
builder.make_item = first
main(sys.argv[1:])
"""


# `grip build` less what the command does after the build (its report): grip.builder.build alone.
BUILDER_ONLY = """
import sys
from grip.builder import build
a = dict(zip(sys.argv[1::2], sys.argv[2::2]))
build(a["--domain"], int(a["--n"]), a["--out"], workers=int(a["--workers"]), grain_subset=int(a["--grain-subset"]),
      executor=a.get("--executor", "local"))
"""


def grip_build(args: list[str], builder_only: bool = False) -> dict:
    """Run `grip build ARGS` as a child; its peak RSS (MiB), user and system CPU seconds and wall seconds."""
    import time
    t0 = time.perf_counter()
    code = BUILDER_ONLY if builder_only else "from grip.cli import main; main()"
    proc = subprocess.Popen([sys.executable, "-c", code, *([] if builder_only else ["build"]), *args,
                             *([] if builder_only else ["--quiet"])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"grip build {' '.join(args)} failed:\n{err}")
    return {"rss_mib": ru.ru_maxrss / 1024, "user": ru.ru_utime, "sys": ru.ru_stime, "wall": wall}


def cpu_before_first_item(domain: str, tmp: Path, runs: int = 5) -> tuple[float, float]:
    """The least user and system CPU seconds before the first item over `runs` one-item builds (the least: the
    cost itself, without what a busy machine adds)."""
    best = None
    for k in range(runs):
        out = subprocess.run([sys.executable, "-c", FIRST_ITEM, "build", "--domain", domain, "--n", "1",
                              "--out", str(tmp / f"first{k}"), "--grain-subset", "0", "--quiet"],
                             capture_output=True, text=True, check=True).stderr
        line = next(ln for ln in out.splitlines() if ln.startswith("FIRST "))
        user, system = map(float, line.split()[1:])
        if best is None or user + system < sum(best):
            best = (user, system)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", default="physical_stability")
    ap.add_argument("--n", default="3000,30000", help="comma-separated item counts (smallest first)")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--grain-subset", default="20")
    ap.add_argument("--executor", default="local")
    ap.add_argument("--builder-only", action="store_true",
                    help="grip.builder.build alone, without what the command prints after the build")
    args = ap.parse_args()
    ns = sorted(int(x) for x in args.n.split(","))
    with tempfile.TemporaryDirectory(prefix="grip-memory-") as d:
        tmp = Path(d)
        user, system = cpu_before_first_item(args.domain, tmp)
        print(f"CPU before the first item: {user + system:.3f} s (user {user:.3f}, system {system:.3f})")
        print(f"{'workers':>7} {'n':>8} {'peak MiB':>9} {'user s':>8} {'sys s':>7} {'wall s':>8} "
              f"{'CPU ms/item':>11}")
        for w in (int(x) for x in args.workers.split(",")):
            res = {}
            for n in ns:
                r = grip_build(["--domain", args.domain, "--n", str(n), "--out", str(tmp / f"w{w}n{n}"),
                                "--workers", str(w), "--grain-subset", args.grain_subset,
                                *(["--executor", args.executor] if args.executor != "local" else [])],
                               args.builder_only)
                res[n] = r
                print(f"{w:>7} {n:>8} {r['rss_mib']:>9.1f} {r['user']:>8.2f} {r['sys']:>7.2f} {r['wall']:>8.1f} "
                      f"{1000 * (r['user'] + r['sys']) / n:>11.2f}")
            lo, hi = res[ns[0]], res[ns[-1]]
            peak = hi["rss_mib"] / lo["rss_mib"]
            cpu = (hi["user"] + hi["sys"]) / (lo["user"] + lo["sys"])
            # CPU linear in n: a fixed cost (start-up, the grain subset) plus the same cost per further item
            marginal = 1000 * (hi["user"] + hi["sys"] - lo["user"] - lo["sys"]) / (ns[-1] - ns[0])
            print(f"  workers {w}: peak({ns[-1]}) / peak({ns[0]}) = {peak:.2f} (target <= 1.1: "
                  f"{'met' if peak <= 1.1 else 'NOT met'}); CPU ratio {cpu:.2f} for n ratio {ns[-1] / ns[0]:.0f}, "
                  f"{marginal:.2f} ms per item beyond the first {ns[0]}; system CPU {lo['sys']:.2f} s -> "
                  f"{hi['sys']:.2f} s")


if __name__ == "__main__":
    main()
