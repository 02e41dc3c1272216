"""The builder: rejection sampling per item, the item store, resume, and a process pool whose output is
byte-identical to a single worker's.

Item i is a pure function of (release, domain, i, level): its generator is seeded from a hash of those names and
rejection resamples continue on that same generator, so worker count, order and resume point change nothing.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grip import GripError, __version__
from grip import domains as registry
from grip.domain import Domain, Ladder, Reject
from grip.grain import SIGMAS, grain_copies
from grip.manifest import (StoreError, atomic_write_bytes, atomic_write_json, grain_rel, image_rel, item_id,
                           read_rows, row_line, sha256_bytes, store_lock)
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


def generate(dom: Domain, seed: int, level: int) -> Generated:
    """Draw candidates from one generator until one has every margin at or above its threshold and renders with
    no Reject. Answers outside their declared space are a bug in the domain, not a rejection."""
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
        "id": iid, "domain": dom.id, "family": dom.family, "index": index, "seed": seed, "level": lvl,
        "image": image_rel(iid), "sha256": sha256_bytes(png), "width": w, "height": h,
        "scene": dom.scene_to_json(g.scene), "attempts": g.attempts,
        "rejections": dict(sorted(g.rejections.items())), "margin_min": g.ladder.margin_min(),
        "questions": [q.to_json() for q in g.ladder.questions],
    }
    return ItemResult(index, row, png, grain, seconds)


def _make_item_args(args) -> ItemResult:
    return make_item(*args)


# --- the item store ------------------------------------------------------------------------------------------

def _check_existing(domain_dir: Path, domain_id: str, release: str, level: int | None, n: int) -> list[dict]:
    """Rows already built in this folder, checked to belong to this very build (same domain, seeds, levels);
    a cut-short last line is dropped so the item is redone."""
    path = domain_dir / "items.jsonl"
    if not path.exists():
        return []
    rows, good_len = read_rows(path, allow_partial_tail=True)
    for i, row in enumerate(rows):
        if row["domain"] != domain_id or row["index"] != i:
            raise StoreError(f"{path} holds items of another build (row {i}: {row['domain']} #{row['index']}); "
                             f"choose another --out")
        if row["seed"] != item_seed(release, domain_id, i) or row["level"] != level_for(i, level):
            raise StoreError(f"{path} was built with another --seed or --level; choose another --out")
        img = domain_dir / row["image"]
        if not img.is_file() or sha256_bytes(img.read_bytes()) != row["sha256"]:
            raise StoreError(f"{img} is missing or differs from its row's sha256; the item store is corrupt")
    if len(rows) > n:
        raise StoreError(f"{domain_dir} already holds {len(rows)} items, more than --n {n}; choose another --out")
    if path.stat().st_size != good_len:
        with open(path, "r+b") as f:
            f.truncate(good_len)
    return rows


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
          grain_subset: int | None = 20, progress: bool = False) -> BuildResult:
    """Build (or resume) items 0..n-1 of one domain into `out/<domain>/`. `grain_subset` None means every item."""
    if n <= 0:
        raise GripError(f"--n must be a positive number of items, got {n}")
    dom = registry.get(domain_id)  # raises UnknownDomain
    if level is not None and level not in dom.levels:
        raise GripError(f"--level must be one of {list(dom.levels)} for {domain_id}, got {level}")
    if workers < 1:
        raise GripError(f"--workers must be at least 1, got {workers}")
    out = Path(out)
    check_writable(out)
    domain_dir = out / domain_id
    with store_lock(domain_dir):
        return _build_locked(dom, domain_dir, n, seed, level, workers, grain_subset, progress)


def _grain_items_on_disk(domain_dir: Path, rows: list[dict]) -> int:
    """How many leading items of the store have a grain copy at some sigma (copies are made for a prefix)."""
    k = 0
    for i, row in enumerate(rows):
        if any((domain_dir / grain_rel(row["id"], s)).is_file() for s in SIGMAS):
            k = i + 1
    return k


def _build_locked(dom: Domain, domain_dir: Path, n: int, seed: int, level: int | None, workers: int,
                  grain_subset: int | None, progress: bool) -> BuildResult:
    domain_id = dom.id
    release = release_name(seed)
    existing = _check_existing(domain_dir, domain_id, release, level, n)
    k_grain = n if grain_subset is None else min(int(grain_subset), n)
    on_disk = _grain_items_on_disk(domain_dir, existing)
    if on_disk > k_grain:
        raise GripError(f"{domain_dir}: grain copies exist for the first {on_disk} items, but --grain-subset asks for "
                        f"{k_grain}; build.json would leave {on_disk - k_grain} of them out. Rerun with "
                        f"--grain-subset {on_disk} (or --grain all), or build into a new folder")
    (domain_dir / "images").mkdir(parents=True, exist_ok=True)
    for stale in domain_dir.rglob(".tmp-*"):  # temp files of writes a killed build never renamed
        stale.unlink()

    # Grain copies missing for items built earlier (say, with a smaller --grain-subset): make them from the image.
    for row in existing[:k_grain]:
        wanted = [s for s in SIGMAS if not (domain_dir / grain_rel(row["id"], s)).is_file()]
        if wanted:
            rgb = decode_png((domain_dir / row["image"]).read_bytes())
            for s, arr in grain_copies(rgb, f"{row['id']}.png", wanted).items():
                atomic_write_bytes(domain_dir / grain_rel(row["id"], s), encode_png(arr))

    todo = list(range(len(existing), n))
    jobs = [(domain_id, release, i, level, i < k_grain) for i in todo]
    stage = Counter()
    t0 = time.perf_counter()
    with open(domain_dir / "items.jsonl", "ab") as manifest:
        results = _run(jobs, workers)
        bar = _progress(len(jobs), f"{domain_id}", progress)
        for res in results:
            # image first, then its row: a row on disk always has its image.
            atomic_write_bytes(domain_dir / res.row["image"], res.png)
            for s, data in res.grain.items():
                atomic_write_bytes(domain_dir / grain_rel(res.row["id"], s), data)
            manifest.write(row_line(res.row))
            manifest.flush()
            stage.update(res.seconds)
            bar.update(1)
        bar.finish()
        os.fsync(manifest.fileno())
    seconds = time.perf_counter() - t0

    rows, _ = read_rows(domain_dir / "items.jsonl")
    summary = summarise(dom, rows)
    summary.update({
        "provenance": provenance(),
        "arguments": {"domain": domain_id, "n": n, "seed": seed, "release": release, "level": level,
                      "workers": workers, "grain_subset": "all" if grain_subset is None else k_grain,
                      "grain_sigmas": list(SIGMAS)},
        "timing": {"seconds": round(seconds, 3), "items_built": len(jobs), "items_resumed": len(existing),
                   "items_per_second": round(len(jobs) / seconds, 2) if jobs and seconds > 0 else None,
                   "worker_seconds": {k: round(v, 3) for k, v in sorted(stage.items())}},
        "grain": {"sigmas": list(SIGMAS), "items": k_grain,
                  "paths": "grain/s{sigma}/{id}.png for the first `items` items"},
    })
    atomic_write_json(domain_dir / "build.json", summary)
    return BuildResult(domain_dir, n, len(jobs), len(existing), seconds, summary)


def _run(jobs: list, workers: int):
    if workers == 1 or len(jobs) < 2:
        return (make_item(*j) for j in jobs)
    ex = ProcessPoolExecutor(max_workers=workers)
    chunk = max(1, min(16, len(jobs) // (workers * 8) or 1))

    def gen():
        try:
            yield from ex.map(_make_item_args, jobs, chunksize=chunk)
        finally:
            ex.shutdown(wait=True, cancel_futures=True)
    return gen()


class _NoBar:
    def update(self, k): pass
    def finish(self): pass


class _Bar:
    def __init__(self, total: int, label: str):
        import click
        self._bar = click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True, show_eta=True)
        self._bar.__enter__()

    def update(self, k):
        self._bar.update(k)

    def finish(self):
        self._bar.__exit__(None, None, None)


def _progress(total: int, label: str, enabled: bool):
    return _Bar(total, label) if enabled and total else _NoBar()


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
        "domain": dom.id, "family": dom.family, "title": dom.title, "items": len(rows),
        "levels": {str(k): v for k, v in sorted(levels.items())},
        "single_level": len(levels) == 1,
        "rungs": rungs,
        "attempts": {"total": sum(r["attempts"] for r in rows), "rejections_by_reason": dict(sorted(rej.items()))},
        "questions": {qid: {"position": pos[qid], "distinct_answers": len(set(map(repr, map(_key, by_q[qid])))),
                            "answer_distribution": dist[qid], "constant_baseline": base[qid],
                            "margin_ratio_min": min(margins[qid])}
                      for qid in sorted(by_q, key=lambda q: pos[q])},
    }
