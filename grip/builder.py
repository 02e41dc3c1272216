"""The builder: rejection sampling per item, the item store, resume, and the one writer behind every executor
(`grip.executors`: a local process pool or Ray), whose output is byte-identical to a single worker's.

Item i is a pure function of (release, domain, i, level): its generator is seeded from a hash of those names and
rejection resamples continue on that same generator, so worker count, order and resume point change nothing.
"""
from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import threading
import time
from collections import Counter
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import grip
from grip import GripError
from grip import domains as registry
from grip.domain import Domain, Ladder, Reject
# cpu_count, max_workers, _pool_map, constant_baseline and summarise are re-exported for the callers they had here.
from grip.executors import (Executor, check_workers, cpu_count, make_executor, max_workers,  # noqa: F401
                            pool_map as _pool_map)
from grip.grain import SIGMAS, grain_copies
from grip.manifest import (MAX_ITEMS, MAX_SEED, StoreError, atomic_write_bytes, atomic_write_json, grain_rel,
                           image_rel, item_id, row_in_order, row_line, row_version, sha256_bytes,
                           store_lock, twin_rel, validate_row)
from grip.progress import progress as progress_display
from grip.renderers.canvas import PNG_COMPRESSOR, Canvas, decode_png, encode_png
from grip.seeding import item_seed, level_for
from grip.summary import Summary, constant_baseline, summarise  # noqa: F401
from grip.twins import check_extras_regenerate, check_twin_file, twin_of


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
    twin: object = None   # grip.twins.Twin in a --twins build


def release_name(seed: int) -> str:
    return str(int(seed))


class DomainDefect(GripError):
    """A domain broke its own contract (an answer outside its declared space): a bug to report, not bad input."""


def generate(dom: Domain, seed: int, level: int, render: bool = True, twins: bool = False) -> Generated:
    """Draw candidates from one generator until one has every margin at or above its threshold and renders with
    no Reject. Answers outside their declared space are a bug in the domain, not a rejection. `render=False`
    (the conformance balance check) stops at the first candidate whose margins pass, without drawing it
    (rgb None): the same scene whenever drawing rejects nothing. `twins=True` also needs the candidate's minimal
    pair (`grip.twins.twin_of`) to pass and to draw; a candidate without one is rejected and sampling goes on, so a twins
    build may accept other scenes than a plain one."""
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
        twin = None
        if twins:
            try:
                twin = twin_of(dom, scene, seed, level)
            except Reject as r:
                rejections[r.reason] += 1
                t_sample += time.perf_counter() - t1
                continue
            t_sample += time.perf_counter() - t1
            t1 = time.perf_counter()
        if not render:
            return Generated(scene, lad, None, attempt, rejections, {"sample": t_sample, "draw": 0.0}, twin)
        canvas = Canvas(dom.size_px, dom.world)
        try:
            dom.draw(scene, canvas)
            if twin is not None:
                twin_canvas = Canvas(dom.size_px, dom.world)
                try:
                    dom.draw(twin.scene, twin_canvas)
                except Reject as r:
                    raise Reject(f"twin:{r.reason}") from None
                twin.rgb = twin_canvas.array()
        except Reject as r:
            rejections[r.reason] += 1
            t_draw += time.perf_counter() - t1
            continue
        rgb = canvas.array()
        t_draw += time.perf_counter() - t1
        return Generated(scene, lad, rgb, attempt, rejections, {"sample": t_sample, "draw": t_draw}, twin)
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
    check_extras_regenerate(dom, row, scene, fail, _first_difference)


@dataclass
class ItemResult:
    index: int
    row: dict
    png: bytes
    grain: dict  # sigma -> PNG bytes
    seconds: dict
    twin_png: bytes | None = None   # written to row["twin"]["image"] before the row, like the image


def make_item(domain_id: str, release: str, index: int, level: int | None, with_grain: bool,
              sigmas: tuple[int, ...] = SIGMAS, twins: bool = False) -> ItemResult:
    """Everything about item `index`, computed with no I/O: the row, the PNG and its grain copies, and with
    `twins` its minimal pair's PNG and the row's `twin`. Every row of a domain with a second wording of Q4 carries
    `rephrase`."""
    from grip import twins as twin_mod
    dom = registry.get(domain_id)
    lvl = level_for(index, level)
    seed = item_seed(release, domain_id, index)
    g = generate(dom, seed, lvl, twins=twins)
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
    rephrase = twin_mod.rephrase_json(dom, g.scene)
    if rephrase is not None:
        row["rephrase"] = rephrase
    twin_png = None
    if twins:
        t1 = time.perf_counter()
        twin_png = encode_png(g.twin.rgb)
        row["twin"] = {"image": twin_rel(iid), "sha256": sha256_bytes(twin_png),
                       **twin_mod.twin_content(dom, row["scene"], g.twin.scene, g.twin.ladder),
                       "changed_fraction": twin_mod.changed_fraction(g.rgb, g.twin.rgb),
                       "ssim": twin_mod.ssim(g.rgb, g.twin.rgb)}
        seconds["twin"] = time.perf_counter() - t1
    return ItemResult(index, row, png, grain, seconds, twin_png)


def _make_item_args(args) -> ItemResult:
    return make_item(*args)


def _check_row_args(args) -> None:
    check_row_regenerates(*args)


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


def _count_lines(path: Path) -> int:
    """Complete lines of a file (a cut-short last line is not one), read a block at a time."""
    with open(path, "rb") as f:
        return sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


def _scan_rows(path: Path):
    """(line number, row, byte length up to the end of that line) for each complete line of an items.jsonl, one
    row at a time and validated as `grip.manifest.read_rows` does. A last line with no newline is an append cut
    short: it is left out, so the item is redone."""
    with open(path, "rb") as f:
        end = 0
        for k, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                return
            end += len(raw)
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise StoreError(f"{path}: line {k} is not valid JSON; the item store is corrupt") from None
            validate_row(row, f"{path}: line {k}")
            yield k, row, end


def _grain_record(row: dict, i: int, k_grain: int) -> tuple[list[int], dict]:
    """(sigmas whose copies item i lacks under a grain subset of k_grain, its row as the grain subset has it once
    they are made: grain_sha256 present, in sigma order)."""
    rec = row.get("grain_sha256", {})
    wanted = [s for s in SIGMAS if i < k_grain and str(s) not in rec]
    return wanted, row_in_order({**row, "grain_sha256": {str(s): rec[str(s)] for s in SIGMAS if str(s) in rec}})


@dataclass
class _Existing:
    """What the rows already on disk come to, gathered in one pass over them."""
    count: int = 0          # rows (complete lines)
    good_len: int = 0       # bytes of items.jsonl up to the end of the last complete line
    grain_prefix: int = 0   # leading items with a grain copy at some sigma (hash recorded or file present)
    regrain: bool = False   # some row needs grain copies made or its grain_sha256 rewritten (`_record_grain`)


def _check_existing(domain_dir: Path, domain_id: str, release: str, level: int | None, n: int,
                    executor: Executor, twins: bool, k_grain: int, summary: Summary) -> _Existing:
    """Rows already built in this folder, read once and one at a time (never all held): checked to belong to this
    very build (same domain, seeds, levels), to match their images and recorded grain copies byte for byte, and to
    be the items their seeds regenerate (`executor` re-samples them; a hand-edited answer or scene is refused,
    never extended), and fed to `summary`. A cut-short last line is dropped so the item is redone."""
    path = domain_dir / "items.jsonl"
    ex = _Existing()
    if not path.exists():
        return ex
    lines = _count_lines(path)
    if lines > n:
        raise StoreError(f"{domain_dir} already holds {lines} items, more than --n {n}; choose another --out")
    version = registry.get(domain_id).version

    def checked():
        for k, row, end in _scan_rows(path):
            i = k - 1
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
                    raise StoreError(f"{g} is missing or differs from its row's grain_sha256; the item store is "
                                     f"corrupt")
            check_twin_file(domain_dir, path, row, twins)
            if row.get("grain_sha256") or any((domain_dir / grain_rel(row["id"], s)).is_file() for s in SIGMAS):
                ex.grain_prefix = k
            if not ex.regrain:
                wanted, new = _grain_record(row, i, k_grain)
                ex.regrain = bool(wanted) or row_line(new) != row_line(row)
            summary.add(row)
            ex.count, ex.good_len = k, end
            yield row, f"{path}: line {k}"

    with closing(executor.map(_check_row_args, checked(), lines, CHECK_CHUNK)) as done:
        for _ in done:
            pass
    return ex


def _record_grain(domain_dir: Path, items_path: Path, k_grain: int) -> None:
    """Bring every existing row's grain copies and `grain_sha256` in line with a grain subset of `k_grain`: the
    first k_grain items get a copy at every sigma, the others none. A copy whose hash no row records (a rerun with
    a larger --grain-subset, a run killed before it recorded one, a store from before grain hashes) is made again
    from the verified image rather than trusted. The rows are streamed into a new items.jsonl that replaces the old
    one whole (atomically), so a run killed halfway leaves the old one."""
    tmp = items_path.with_name(f".tmp-{items_path.name}")
    try:
        with open(tmp, "wb") as out:
            for k, row, _ in _scan_rows(items_path):
                i = k - 1
                wanted, new = _grain_record(row, i, k_grain)
                if wanted:
                    rgb = decode_png((domain_dir / row["image"]).read_bytes())
                    rec = dict(new["grain_sha256"])
                    for s, arr in grain_copies(rgb, f"{row['id']}.png", wanted).items():
                        data = encode_png(arr)
                        atomic_write_bytes(domain_dir / grain_rel(row["id"], s), data)
                        rec[str(s)] = sha256_bytes(data)
                    new["grain_sha256"] = {str(s): rec[str(s)] for s in SIGMAS if str(s) in rec}
                _append(out, tmp, row_line(new))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, items_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
    return {"grip": grip.__version__, "git_commit": commit, "git_dirty": dirty, "python": platform.python_version(),
            "cairo": cairo.cairo_version_string(), "pycairo": cairo.version, "numpy": np.__version__,
            "pillow": PIL.__version__, "shapely": shapely.__version__, "png": PNG_COMPRESSOR,
            "platform": platform.platform()}


@dataclass
class BuildResult:
    domain_dir: Path
    n: int
    built: int
    resumed: int
    seconds: float
    summary: dict


def build(domain_id: str, n: int, out: Path, seed: int = 0, level: int | None = None, workers: int = 1,
          grain_subset: int | None = 20, progress: bool | str = False, twins: bool = False,
          executor: str = "local", address: str | None = None) -> BuildResult:
    """Build (or resume) items 0..n-1 of one domain into `out/<domain>/`. `grain_subset` None means every item.
    `twins`: also each item's minimal pair (`twins/<id>.png` and the row's `twin`; see `generate`).
    `progress`: False for none, True or "bar" for a progress bar, "lines" for a line every
    grip.progress.PROGRESS_EVERY_S seconds (for a log rather than a terminal). `executor`: "local" (a process
    pool of `workers`) or "ray" (`workers` Ray tasks at a time, on the cluster at `address` or a local Ray)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ITEMS:
        raise GripError(f"--n must be a whole number of items from 1 to {MAX_ITEMS:,}, got {n}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise GripError(f"--seed must be a whole number from 0 to {MAX_SEED}, got {seed}")
    dom = registry.get(domain_id)  # raises UnknownDomain
    if level is not None and level not in dom.levels:
        raise GripError(f"--level must be one of {list(dom.levels)} for {domain_id}, got {level}")
    if twins and dom.minimal_pair is None:
        raise GripError(f"{domain_id} has no minimal_pair, so it cannot be built with --twins")
    check_workers(workers, executor)
    runner = make_executor(executor, workers, address)   # a missing Ray is an error before anything is touched
    if out is None or str(out).strip() == "":   # Path("") is the working folder, never what was meant
        raise GripError("the output folder is empty; give a folder")
    out = Path(out)
    check_writable(out)
    domain_dir = out / domain_id
    with store_lock(domain_dir) as lock_fd, _sigterm_as_interrupt(), runner:
        runner.lock_fd = lock_fd
        return _build_locked(dom, domain_dir, n, seed, level, workers, grain_subset, progress, runner, twins)


def _append(f, path: Path, data: bytes) -> None:
    try:
        f.write(data)
        f.flush()
    except OSError as e:
        if e.filename is None:   # a failed write names no file; the user needs to know which
            e.filename = str(path)
        raise


def _build_locked(dom: Domain, domain_dir: Path, n: int, seed: int, level: int | None, workers: int,
                  grain_subset: int | None, progress, executor: Executor, twins: bool = False) -> BuildResult:
    domain_id = dom.id
    release = release_name(seed)
    k_grain = n if grain_subset is None else min(int(grain_subset), n)
    # build.json's summary grows row by row, from the rows on disk as they are checked and each new row as it is
    # written: no row is held, so memory stays flat in n.
    summary = Summary(dom)
    t_check = time.perf_counter()
    existing = _check_existing(domain_dir, domain_id, release, level, n, executor, twins, k_grain, summary)
    t_check = time.perf_counter() - t_check
    if existing.grain_prefix > k_grain:
        on_disk = existing.grain_prefix
        raise GripError(f"{domain_dir}: grain copies exist for the first {on_disk} items, but --grain-subset asks for "
                        f"{k_grain}; build.json would leave {on_disk - k_grain} of them out. Rerun with "
                        f"--grain-subset {on_disk} (or --grain all), or build into a new folder")
    (domain_dir / "images").mkdir(parents=True, exist_ok=True)
    for stale in domain_dir.rglob(".tmp-*"):  # temp files of writes a killed build never renamed
        stale.unlink()

    items_path = domain_dir / "items.jsonl"
    if existing.regrain:
        # Grain copies missing for items built earlier (say, with a smaller --grain-subset): made from the image,
        # and the rows rewritten (atomically) with their new grain hashes.
        _record_grain(domain_dir, items_path, k_grain)
    elif items_path.exists() and items_path.stat().st_size != existing.good_len:
        with open(items_path, "r+b") as f:   # a cut-short last line: that item is built again
            f.truncate(existing.good_len)

    todo = range(existing.count, n)
    jobs = ((domain_id, release, i, level, i < k_grain, SIGMAS, twins) for i in todo)
    chunk = max(1, min(16, len(todo) // (workers * 8) or 1))
    singles = max(0, k_grain - existing.count)   # items with grain copies cost several encodes: one per task
    stage = Counter()
    t0 = time.perf_counter()
    bar = progress_display(len(todo), f"{domain_id}", progress, grain_items=min(singles, len(todo)))
    try:
        with open(items_path, "ab") as manifest, \
                closing(executor.map(_make_item_args, jobs, len(todo), chunk, singles)) as results:
            for res in results:
                # image first, then its row: a row on disk always has its image.
                atomic_write_bytes(domain_dir / res.row["image"], res.png)
                if res.twin_png is not None:
                    atomic_write_bytes(domain_dir / res.row["twin"]["image"], res.twin_png)
                for s, data in res.grain.items():
                    atomic_write_bytes(domain_dir / grain_rel(res.row["id"], s), data)
                _append(manifest, items_path, row_line(res.row))
                summary.add(res.row)
                stage.update(res.seconds)
                bar.update(res.seconds, len(res.grain))
            try:
                os.fsync(manifest.fileno())
            except OSError as e:
                e.filename = e.filename or str(items_path)
                raise
    finally:
        bar.finish()   # also on Ctrl-C or an error: the bar gives the terminal its cursor back
    seconds = time.perf_counter() - t0

    info = summary.result()
    info.update({
        "provenance": provenance(),
        "arguments": {"domain": domain_id, "n": n, "seed": seed, "release": release, "level": level,
                      "workers": workers, "grain_subset": "all" if grain_subset is None else k_grain,
                      "grain_sigmas": list(SIGMAS), **({"twins": True} if twins else {}),
                      **({"executor": executor.name} if executor.name != "local" else {})},
        "timing": {"seconds": round(seconds, 3), "items_built": len(todo), "items_resumed": existing.count,
                   "items_per_second": round(len(todo) / seconds, 2) if todo and seconds > 0 else None,
                   "resume_check_seconds": round(t_check, 3),
                   "worker_seconds": {k: round(v, 3) for k, v in sorted(stage.items())}},
        "grain": {"sigmas": list(SIGMAS), "items": k_grain,
                  "paths": "grain/s{sigma}/{id}.png for the first `items` items"},
    })
    atomic_write_json(domain_dir / "build.json", info)
    return BuildResult(domain_dir, n, len(todo), existing.count, seconds, info)
