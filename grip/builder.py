"""The builder: rejection sampling per item, the item store, resume, and a process pool whose output is
byte-identical to a single worker's.

Item i is a pure function of (release, domain, i, level): its generator is seeded from a hash of those names and
rejection resamples continue on that same generator, so worker count, order and resume point change nothing.
"""
from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import numpy as np

from grip import GripError, __version__
from grip import domains as registry
from grip.domain import Domain, Ladder, Reject
from grip.grain import SIGMAS, grain_copies
from grip.manifest import (MAX_ITEMS, MAX_SEED, StoreError, atomic_write_bytes, atomic_write_json, grain_rel,
                           image_rel, item_id, read_rows, row_in_order, row_line, row_version, sha256_bytes,
                           store_lock)
from grip.renderers.canvas import Canvas, decode_png, encode_png
from grip.seeding import item_seed, level_for


class GenerationError(GripError):
    pass


@dataclass
class Generated:
    """One accepted scene: its ladder, its pixels, and how many candidates it took."""
    scene: object
    ladder: Ladder
    rgb: np.ndarray
    attempts: int
    rejections: Counter
    seconds: dict = field(default_factory=dict)


def release_name(seed: int) -> str:
    return str(int(seed))


class DomainDefect(GripError):
    """A domain broke its own contract (an answer outside its declared space): a bug to report, not bad input."""


def generate(dom: Domain, seed: int, level: int, render: bool = True) -> Generated:
    """Draw candidates from one generator until one has every margin at or above its threshold and renders with
    no Reject. Answers outside their declared space are a bug in the domain, not a rejection. `render=False`
    (the conformance balance check) stops at the first candidate whose margins pass, without drawing it
    (rgb None): the same scene whenever drawing rejects nothing."""
    rng = np.random.default_rng(seed)
    rejections: Counter = Counter()
    t_sample = t_draw = 0.0
    for attempt in range(1, dom.max_attempts + 1):
        t0 = time.perf_counter()
        try:
            scene = dom.sample(rng, level)
            lad = dom.ladder(scene)
        except Reject as r:
            rejections[r.reason] += 1
            t_sample += time.perf_counter() - t0
            continue
        bad = lad.failing_margins()
        t1 = time.perf_counter()
        t_sample += t1 - t0
        if bad:
            for q in bad:
                rejections[f"margin:{q.id}"] += 1
            continue
        for q in lad.questions:
            if not q.answer.in_space():
                raise DomainDefect(f"{dom.id} (item seed {seed}, level {level}): answer of {q.id} lies outside its "
                                   f"declared space: {q.answer!r}. This is a bug in the domain; the items "
                                   f"built so far are kept")
        if not render:
            return Generated(scene, lad, None, attempt, rejections, {"sample": t_sample, "draw": 0.0})
        canvas = Canvas(dom.size_px, dom.world)
        try:
            dom.draw(scene, canvas)
        except Reject as r:
            rejections[r.reason] += 1
            t_draw += time.perf_counter() - t1
            continue
        rgb = canvas.array()
        t_draw += time.perf_counter() - t1
        return Generated(scene, lad, rgb, attempt, rejections, {"sample": t_sample, "draw": t_draw})
    top = ", ".join(f"{k}={v}" for k, v in rejections.most_common(4))
    raise GenerationError(f"{dom.id}: no acceptable scene in {dom.max_attempts} attempts (level {level}): {top}")


def _replay(dom: Domain, seed: int, level: int, attempts: int):
    """The candidates `generate` saw, replayed without drawing: (accepted scene, its ladder, the rejections that
    replay can name, how many candidates passed sample, ladder and margins and were then rejected by `draw`).
    Only `sample` reads the generator and `draw` reads none, so candidate k of a replay is candidate k of the build,
    draw-time rejects included. The last candidate is the accepted one: None when it does not pass."""
    rng = np.random.default_rng(seed)
    named: Counter = Counter()
    drawn_rejected = 0
    for attempt in range(1, attempts + 1):
        try:
            scene = dom.sample(rng, level)
            lad = dom.ladder(scene)
        except Reject as r:
            if attempt == attempts:
                return None, None, named, drawn_rejected
            named[r.reason] += 1
            continue
        bad = lad.failing_margins()
        if attempt == attempts:
            return (None, None, named, drawn_rejected) if bad else (scene, lad, named, drawn_rejected)
        if bad:
            named.update(f"margin:{q.id}" for q in bad)
        else:
            drawn_rejected += 1
    return None, None, named, drawn_rejected


def _first_difference(a, b, path: str = "") -> str:
    """Where two JSON values first differ, as a dotted path ('' when they are equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}".lstrip(".")
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return ""
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return path.lstrip(".") or "(length)"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return ""
    same = a == b and type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                             and not isinstance(a, bool) and not isinstance(b, bool) and a == b)
    return "" if same else (path.lstrip(".") or "(value)")


def check_row_regenerates(row: dict, where: str) -> None:
    """Re-sample the item a row claims from its seed, level and attempts (no drawing) and check that the stored
    scene and every stored question (text, instruction, answer, margin, edit) are what that seed gives, and that
    the recorded rejections can be what the build saw. A hand-edited or corrupt row is a one-line StoreError
    naming the row and the field. `row` must have passed `grip.manifest.validate_row`."""
    rid = row.get("id")

    def fail(what: str) -> None:
        raise StoreError(f"{where}: row {rid} does not match the item its seed regenerates ({what}); the item "
                         f"store was edited or is corrupt")

    try:
        dom = registry.get(row["domain"])
    except registry.UnknownDomain:
        raise StoreError(f"{where}: row {rid} names domain {row['domain']!r}, which is not registered") from None
    if row["id"] != item_id(dom.id, row["index"]) or row["image"] != image_rel(row["id"]):
        fail("id or image path")
    if row_version(row) != dom.version:
        raise StoreError(f"{where}: row {rid} was built by version {row_version(row)} of {dom.id}, and this grip has "
                         f"version {dom.version}; items of two versions are never mixed: rebuild into a new folder")
    if row["family"] != dom.family:
        fail("family")
    if row["level"] not in dom.levels:
        fail(f"level {row['level']} is not one of {list(dom.levels)}")
    if not 1 <= row["attempts"] <= dom.max_attempts:
        fail(f"attempts {row['attempts']} outside 1..{dom.max_attempts}")
    try:
        scene, lad, named, drawn_rejected = _replay(dom, row["seed"], row["level"], row["attempts"])
    except Exception as e:  # a domain fed an edited seed or level may fail in any way; the row is at fault
        fail(f"re-sampling failed: {type(e).__name__}: {e}")
    if scene is None:
        fail(f"candidate {row['attempts']} of its seed is rejected, so it cannot be the accepted scene")
    d = _first_difference(json.loads(json.dumps(dom.scene_to_json(scene))), row["scene"])
    if d:
        fail(f"scene field {d}")
    want = json.loads(json.dumps([q.to_json() for q in lad.questions]))
    for q_want, q_got in zip(want, row["questions"]):
        d = _first_difference(q_want, q_got)
        if d:
            fail(f"question {q_want['id']}: {d}")
    if len(want) != len(row["questions"]):
        fail("number of questions")
    if row["margin_min"] != lad.margin_min():
        fail("margin_min")
    rej = Counter(row["rejections"])
    if any(rej[k] < v for k, v in named.items()) or sum(rej.values()) - sum(named.values()) != drawn_rejected:
        fail("rejections")


@dataclass
class ItemResult:
    index: int
    row: dict
    png: bytes
    grain: dict  # sigma -> PNG bytes
    seconds: dict


def make_item(domain_id: str, release: str, index: int, level: int | None, with_grain: bool,
              sigmas: tuple[int, ...] = SIGMAS) -> ItemResult:
    """Everything about item `index`, computed with no I/O: the row, the PNG and its grain copies."""
    dom = registry.get(domain_id)
    lvl = level_for(index, level)
    seed = item_seed(release, domain_id, index)
    g = generate(dom, seed, lvl)
    t0 = time.perf_counter()
    png = encode_png(g.rgb)
    iid = item_id(domain_id, index)
    grain = {}
    if with_grain:
        for s, arr in grain_copies(g.rgb, f"{iid}.png", sigmas).items():
            grain[s] = encode_png(arr)
    seconds = dict(g.seconds, encode=time.perf_counter() - t0)
    h, w = g.rgb.shape[:2]
    row = {
        "id": iid, "domain": dom.id, "version": dom.version, "family": dom.family, "index": index, "seed": seed,
        "level": lvl,
        "image": image_rel(iid), "sha256": sha256_bytes(png),
        "grain_sha256": {str(s): sha256_bytes(data) for s, data in sorted(grain.items())}, "width": w, "height": h,
        "scene": dom.scene_to_json(g.scene), "attempts": g.attempts,
        "rejections": dict(sorted(g.rejections.items())), "margin_min": g.ladder.margin_min(),
        "questions": [q.to_json() for q in g.ladder.questions],
    }
    return ItemResult(index, row, png, grain, seconds)


def _make_item_args(args) -> ItemResult:
    return make_item(*args)


def _check_row_args(args) -> None:
    check_row_regenerates(*args)


# --- worker processes ----------------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1   # <linux/prctl.h>


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def max_workers() -> int:
    """The most worker processes a build starts: four per CPU this process may run on."""
    return 4 * cpu_count()


def check_workers(workers: int) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= max_workers():
        raise GripError(f"--workers must be from 1 to {max_workers()} (four per CPU here), got {workers}")


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(1)


def _worker_init(parent_pid: int, lock_fd: int | None) -> None:
    """First thing in every worker (a child of the build). A worker must never outlive the build: one left behind
    by a killed build blocks on a pipe no one reads, and a worker holding the store lock would refuse every rerun."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C reaches the whole process group; the parent stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # not the parent's handler, which fork copied
    if lock_fd is not None:
        # The lock belongs to the open file, shared by every copy of the descriptor: dropping the worker's copy
        # leaves the parent holding it, and the lock goes when the parent does, whatever happens to us.
        try:
            os.close(lock_fd)
        except OSError:
            pass
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:   # the parent died before the line above took effect
        os._exit(1)
    # Where there is no death signal (or the pool was made by another thread that has since ended): poll.
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="grip-parent-watch").start()


def _mp_context():
    """fork where there is one (Linux; the default there before Python 3.14): workers start at once, inherit what
    the parent loaded (domains registered at run time included), and are the build's own children, which
    `_worker_init` relies on. Elsewhere spawn, whose workers are direct children too."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform.startswith("linux")
                                       else "spawn")


def _map_chunk(fn, chunk: list) -> list:
    return [fn(x) for x in chunk]


def _stop_pool(ex: ProcessPoolExecutor) -> None:
    """Stop a pool at once: queued work cancelled, busy workers killed (they write nothing; the parent does)."""
    kill = getattr(ex, "kill_workers", None)   # Python 3.14+
    if kill is not None:
        kill()
        ex.shutdown(wait=True, cancel_futures=True)
        return
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.kill()
    for p in procs:
        p.join(timeout=10)
    # Before 3.14 the pool's manager thread notices the dead workers and closes its wake-up pipe, and the module's
    # exit hook may then write to that closed pipe ("Exception ignored ... Bad file descriptor" after our one-line
    # error): take the pipe off the hook's list (the thread still ends on its own and is joined at exit).
    import concurrent.futures.process as cfp
    manager = getattr(ex, "_executor_manager_thread", None)
    if manager is not None:
        getattr(cfp, "_threads_wakeups", {}).pop(manager, None)


def _pool_map(fn, items, count: int, workers: int, chunk: int, lock_fd: int | None = None):
    """`fn` over `items` (`count` of them), results in order. With more than one worker, a pool of at most one
    process per chunk, `chunk` items per task and four tasks per process in flight, so memory stays flat in n.
    Closing the generator early (an error or Ctrl-C in the consumer) kills the pool."""
    procs = min(workers, -(-count // chunk))
    if procs <= 1:
        yield from map(fn, items)
        return
    ctx = _mp_context()
    inherited_lock = lock_fd if ctx.get_start_method() == "fork" else None   # spawn passes no descriptor on
    ex = ProcessPoolExecutor(max_workers=procs, mp_context=ctx, initializer=_worker_init,
                             initargs=(os.getpid(), inherited_lock))
    finished = False
    try:
        it = iter(items)
        chunks = iter(lambda: list(islice(it, chunk)), [])
        pending = deque(ex.submit(_map_chunk, fn, c) for c in islice(chunks, 4 * procs))
        while pending:
            try:
                batch = pending.popleft().result()
            except BrokenProcessPool:
                raise GripError("a worker process died (out of memory, or killed); rerun the same command to "
                                "resume") from None
            for c in islice(chunks, 1):
                pending.append(ex.submit(_map_chunk, fn, c))
            yield from batch
        finished = True
    finally:
        if finished:
            ex.shutdown(wait=True)
        else:
            _stop_pool(ex)


@contextmanager
def _sigterm_as_interrupt():
    """SIGTERM stops a build the way Ctrl-C does (pool stopped, progress bar closed, lock released), so the next
    run resumes. Only where the handler is ours to set: the main thread, and no handler installed by the caller."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


# --- the item store ------------------------------------------------------------------------------------------

CHECK_CHUNK = 32   # rows per task when a pool re-samples existing rows


def _check_existing(domain_dir: Path, domain_id: str, release: str, level: int | None, n: int, workers: int,
                    lock_fd: int | None) -> list[dict]:
    """Rows already built in this folder, checked to belong to this very build (same domain, seeds, levels), to
    match their images and recorded grain copies byte for byte, and to be the items their seeds regenerate (a
    hand-edited answer or scene is refused, never extended). A cut-short last line is dropped so the item is
    redone."""
    path = domain_dir / "items.jsonl"
    if not path.exists():
        return []
    rows, good_len = read_rows(path, allow_partial_tail=True)
    if len(rows) > n:
        raise StoreError(f"{domain_dir} already holds {len(rows)} items, more than --n {n}; choose another --out")
    version = registry.get(domain_id).version
    for i, row in enumerate(rows):
        if row["domain"] != domain_id or row["index"] != i:
            raise StoreError(f"{path} holds items of another build (row {i}: {row['domain']} #{row['index']}); "
                             f"choose another --out")
        if row_version(row) != version:
            raise StoreError(f"{path} was built by version {row_version(row)} of {domain_id}, and this grip has "
                             f"version {version}; items of two versions are never mixed: choose another --out")
        if row["seed"] != item_seed(release, domain_id, i) or row["level"] != level_for(i, level):
            raise StoreError(f"{path} was built with another --seed or --level; choose another --out")
        img = domain_dir / row["image"]
        if not img.is_file() or sha256_bytes(img.read_bytes()) != row["sha256"]:
            raise StoreError(f"{img} is missing or differs from its row's sha256; the item store is corrupt")
        for s, h in row.get("grain_sha256", {}).items():
            g = domain_dir / grain_rel(row["id"], int(s))
            if not g.is_file() or sha256_bytes(g.read_bytes()) != h:
                raise StoreError(f"{g} is missing or differs from its row's grain_sha256; the item store is corrupt")
    checks = ((row, f"{path}: line {i + 1}") for i, row in enumerate(rows))
    with closing(_pool_map(_check_row_args, checks, len(rows), workers, CHECK_CHUNK, lock_fd)) as done:
        for _ in done:
            pass
    if path.stat().st_size != good_len:
        with open(path, "r+b") as f:
            f.truncate(good_len)
    return rows


def _record_grain(domain_dir: Path, rows: list[dict], k_grain: int) -> bool:
    """Bring every existing row's grain copies and `grain_sha256` in line with a grain subset of `k_grain`: the
    first k_grain items get a copy at every sigma, the others none. A copy whose hash no row records (a rerun with
    a larger --grain-subset, a run killed before it recorded one, a store from before grain hashes) is made again
    from the verified image rather than trusted. Returns whether any row changed."""
    changed = False
    for i, row in enumerate(rows):
        rec = dict(row.get("grain_sha256", {}))
        wanted = [s for s in SIGMAS if i < k_grain and str(s) not in rec]
        if wanted:
            rgb = decode_png((domain_dir / row["image"]).read_bytes())
            for s, arr in grain_copies(rgb, f"{row['id']}.png", wanted).items():
                data = encode_png(arr)
                atomic_write_bytes(domain_dir / grain_rel(row["id"], s), data)
                rec[str(s)] = sha256_bytes(data)
        new = row_in_order({**row, "grain_sha256": {str(s): rec[str(s)] for s in SIGMAS if str(s) in rec}})
        if row_line(new) != row_line(row):
            rows[i] = new
            changed = True
    return changed


def check_writable(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".grip-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise GripError(f"output folder {out} is not writable: {e.strerror or e}") from None


def provenance() -> dict:
    import cairo
    import PIL
    import shapely
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=10).stdout.strip() or "unknown"
        dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=here, capture_output=True, text=True,
                                    timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "unknown", False
    return {"grip": __version__, "git_commit": commit, "git_dirty": dirty, "python": platform.python_version(),
            "cairo": cairo.cairo_version_string(), "pycairo": cairo.version, "numpy": np.__version__,
            "pillow": PIL.__version__, "shapely": shapely.__version__, "platform": platform.platform()}


@dataclass
class BuildResult:
    domain_dir: Path
    n: int
    built: int
    resumed: int
    seconds: float
    summary: dict


def build(domain_id: str, n: int, out: Path, seed: int = 0, level: int | None = None, workers: int = 1,
          grain_subset: int | None = 20, progress: bool | str = False) -> BuildResult:
    """Build (or resume) items 0..n-1 of one domain into `out/<domain>/`. `grain_subset` None means every item.
    `progress`: False for none, True or "bar" for a progress bar, "lines" for a line every PROGRESS_EVERY_S
    seconds (for a log rather than a terminal)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ITEMS:
        raise GripError(f"--n must be a whole number of items from 1 to {MAX_ITEMS:,}, got {n}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise GripError(f"--seed must be a whole number from 0 to {MAX_SEED}, got {seed}")
    dom = registry.get(domain_id)  # raises UnknownDomain
    if level is not None and level not in dom.levels:
        raise GripError(f"--level must be one of {list(dom.levels)} for {domain_id}, got {level}")
    check_workers(workers)
    if out is None or str(out).strip() == "":   # Path("") is the working folder, never what was meant
        raise GripError("the output folder is empty; give a folder")
    out = Path(out)
    check_writable(out)
    domain_dir = out / domain_id
    with store_lock(domain_dir) as lock_fd, _sigterm_as_interrupt():
        return _build_locked(dom, domain_dir, n, seed, level, workers, grain_subset, progress, lock_fd)


def _grain_items_on_disk(domain_dir: Path, rows: list[dict]) -> int:
    """How many leading items of the store have a grain copy at some sigma (copies are made for a prefix)."""
    k = 0
    for i, row in enumerate(rows):
        if row.get("grain_sha256") or any((domain_dir / grain_rel(row["id"], s)).is_file() for s in SIGMAS):
            k = i + 1
    return k


def _append(f, path: Path, data: bytes) -> None:
    try:
        f.write(data)
        f.flush()
    except OSError as e:
        if e.filename is None:   # a failed write names no file; the user needs to know which
            e.filename = str(path)
        raise


def _build_locked(dom: Domain, domain_dir: Path, n: int, seed: int, level: int | None, workers: int,
                  grain_subset: int | None, progress, lock_fd: int | None) -> BuildResult:
    domain_id = dom.id
    release = release_name(seed)
    t_check = time.perf_counter()
    existing = _check_existing(domain_dir, domain_id, release, level, n, workers, lock_fd)
    t_check = time.perf_counter() - t_check
    k_grain = n if grain_subset is None else min(int(grain_subset), n)
    on_disk = _grain_items_on_disk(domain_dir, existing)
    if on_disk > k_grain:
        raise GripError(f"{domain_dir}: grain copies exist for the first {on_disk} items, but --grain-subset asks for "
                        f"{k_grain}; build.json would leave {on_disk - k_grain} of them out. Rerun with "
                        f"--grain-subset {on_disk} (or --grain all), or build into a new folder")
    (domain_dir / "images").mkdir(parents=True, exist_ok=True)
    for stale in domain_dir.rglob(".tmp-*"):  # temp files of writes a killed build never renamed
        stale.unlink()

    items_path = domain_dir / "items.jsonl"
    # Grain copies missing for items built earlier (say, with a smaller --grain-subset): made from the image, then
    # the rows rewritten whole (atomically) with their new grain hashes.
    if _record_grain(domain_dir, existing, k_grain):
        atomic_write_bytes(items_path, b"".join(row_line(r) for r in existing))

    todo = range(len(existing), n)
    jobs = ((domain_id, release, i, level, i < k_grain) for i in todo)
    chunk = max(1, min(16, len(todo) // (workers * 8) or 1))
    stage = Counter()
    t0 = time.perf_counter()
    bar = _progress(len(todo), f"{domain_id}", progress)
    try:
        with open(items_path, "ab") as manifest, \
                closing(_pool_map(_make_item_args, jobs, len(todo), workers, chunk, lock_fd)) as results:
            for res in results:
                # image first, then its row: a row on disk always has its image.
                atomic_write_bytes(domain_dir / res.row["image"], res.png)
                for s, data in res.grain.items():
                    atomic_write_bytes(domain_dir / grain_rel(res.row["id"], s), data)
                _append(manifest, items_path, row_line(res.row))
                stage.update(res.seconds)
                bar.update(1)
            try:
                os.fsync(manifest.fileno())
            except OSError as e:
                e.filename = e.filename or str(items_path)
                raise
    finally:
        bar.finish()   # also on Ctrl-C or an error: the bar gives the terminal its cursor back
    seconds = time.perf_counter() - t0

    rows, _ = read_rows(items_path)
    summary = summarise(dom, rows)
    summary.update({
        "provenance": provenance(),
        "arguments": {"domain": domain_id, "n": n, "seed": seed, "release": release, "level": level,
                      "workers": workers, "grain_subset": "all" if grain_subset is None else k_grain,
                      "grain_sigmas": list(SIGMAS)},
        "timing": {"seconds": round(seconds, 3), "items_built": len(todo), "items_resumed": len(existing),
                   "items_per_second": round(len(todo) / seconds, 2) if todo and seconds > 0 else None,
                   "resume_check_seconds": round(t_check, 3),
                   "worker_seconds": {k: round(v, 3) for k, v in sorted(stage.items())}},
        "grain": {"sigmas": list(SIGMAS), "items": k_grain,
                  "paths": "grain/s{sigma}/{id}.png for the first `items` items"},
    })
    atomic_write_json(domain_dir / "build.json", summary)
    return BuildResult(domain_dir, n, len(todo), len(existing), seconds, summary)


PROGRESS_EVERY_S = 5.0   # a progress line this often when stderr is no terminal


class _NoBar:
    def update(self, k): pass
    def finish(self): pass


class _Bar:
    def __init__(self, total: int, label: str):
        import click
        self._bar = click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True, show_eta=True)
        self._bar.__enter__()
        self._open = True

    def update(self, k):
        self._bar.update(k)

    def finish(self):
        if self._open:
            self._open = False
            self._bar.__exit__(None, None, None)


class _Lines:
    """Progress for a log: a line to stderr every PROGRESS_EVERY_S seconds."""

    def __init__(self, total: int, label: str):
        self.total, self.label, self.done = total, label, 0
        self.t0 = time.monotonic()
        self.due = self.t0 + PROGRESS_EVERY_S

    def update(self, k):
        import click
        self.done += k
        now = time.monotonic()
        if now >= self.due:
            rate = self.done / (now - self.t0) if now > self.t0 else 0.0
            click.echo(f"{self.label}: {self.done}/{self.total} items, {rate:.1f} items/s", err=True)
            self.due = now + PROGRESS_EVERY_S

    def finish(self):
        pass


def _progress(total: int, label: str, mode):
    if not mode or not total:
        return _NoBar()
    return _Lines(total, label) if mode == "lines" else _Bar(total, label)


# --- summary -------------------------------------------------------------------------------------------------

def _key(ans_json: dict):
    from grip.answers import answer_from_json
    return answer_from_json(ans_json).key()


def constant_baseline(answers: list[dict]) -> dict:
    """Accuracy of the best single constant answer over these items (what a model that ignores the image could
    score). Exact for counts, choices, lists and records (the modal value); for numbers, the best constant among
    the observed values, each item accepting it within its own tolerance."""
    from grip.answers import Number, answer_from_json
    objs = [answer_from_json(a) for a in answers]
    if objs and all(isinstance(o, Number) for o in objs):
        v = np.array([o.value for o in objs], float)
        tol = np.array([o.tol_abs() for o in objs], float) * (1 + 1e-9) + 1e-9
        period = objs[0].period
        best, best_c = -1, None
        for c in np.unique(v):
            d = np.abs(v - c)
            if period:
                d = np.minimum(d % period, period - d % period)
            hits = int(np.count_nonzero(d <= tol))
            if hits > best:
                best, best_c = hits, float(c)
        return {"share": best / len(objs), "constant": best_c}
    counts = Counter(repr(o.key()) for o in objs)
    key, hits = counts.most_common(1)[0]
    return {"share": hits / len(objs), "constant": key}


def summarise(dom: Domain, rows: list[dict]) -> dict:
    by_q: dict[str, list[dict]] = {}
    pos: dict[str, int] = {}
    margins: dict[str, list[float]] = {}
    for r in rows:
        for q in r["questions"]:
            by_q.setdefault(q["id"], []).append(q["answer"])
            pos[q["id"]] = q["position"]
            m = q["margin"]
            margins.setdefault(q["id"], []).append(m["value"] / m["threshold"] if m["threshold"] else float("inf"))
    rej = Counter()
    for r in rows:
        rej.update(r["rejections"])
    dist, base = {}, {}
    for qid, answers in by_q.items():
        c = Counter(repr(_key(a)) for a in answers)
        dist[qid] = dict(c.most_common(40))
        base[qid] = constant_baseline(answers)
    levels = Counter(r["level"] for r in rows)
    by_pos: dict[int, list[dict]] = {}
    for r in rows:
        for q in r["questions"]:
            by_pos.setdefault(q["position"], []).append(q)
    rungs = {str(p): {"question_ids": sorted({q["id"] for q in qs}),
                      "constant_baseline": constant_baseline([q["answer"] for q in qs])}
             for p, qs in sorted(by_pos.items())}
    return {
        "domain": dom.id, "version": dom.version, "family": dom.family, "title": dom.title, "items": len(rows),
        "levels": {str(k): v for k, v in sorted(levels.items())},
        "single_level": len(levels) == 1,
        "rungs": rungs,
        "attempts": {"total": sum(r["attempts"] for r in rows), "rejections_by_reason": dict(sorted(rej.items()))},
        "questions": {qid: {"position": pos[qid], "distinct_answers": len(set(map(repr, map(_key, by_q[qid])))),
                            "answer_distribution": dist[qid], "constant_baseline": base[qid],
                            "margin_ratio_min": min(margins[qid])}
                      for qid in sorted(by_q, key=lambda q: pos[q])},
    }
