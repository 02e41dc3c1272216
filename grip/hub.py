"""The Hugging Face Hub copy of a build (DESIGN.md section 6): export, dataset card, push, download.

    <hub_dir>/README.md                                    dataset card generated from code (YAML configs + infos)
    <hub_dir>/grip-export.json                             shard index: rows, bytes, sha256 of every shard
    <hub_dir>/<domain>/test-00000-of-0000N.parquet         the items, PNG bytes embedded
    <hub_dir>/<domain>/core-00000-of-0000N.parquet         the core rows of `test` again (the protocols' subset)
    <hub_dir>/<domain>/test_grain-00000-of-0000N.parquet   grain copies of the grain subset (sigma 15/25/40)
    <hub_dir>/<domain>/twins-00000-of-0000N.parquet        the items' minimal pairs (a `grip build --twins` store)

One config per domain. Every split shares one schema (a config has one `features`; grip/hub_rows.py): an item row
has `grain_sigma` 0 and `source_id` equal to its own id; a grain or twin row points at its item through
`source_id`. Grain is a split of its own rather than extra image columns because it exists for the first K items
only: columns would be null on most rows and every reader of `test` would download three noisy images it does not
need. The card is grip/hub_card.py; reading an export back into an item store is grip/eval/sources.py.

`datasets`, `huggingface_hub` and `pyarrow` are imported inside the functions: `grip list` must stay light.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

import grip
from grip import GripError
from grip.hub_card import SIZE_CATEGORIES, card_yaml, core_text, dataset_card, size_category  # noqa: F401
from grip.hub_rows import (CORE_SPLIT, GRAIN_SPLIT, SPLIT, SPLITS, TWIN_SPLIT, features, hub_row,  # noqa: F401
                           item_row, twin_hub_row)
from grip.manifest import (StoreError, check_output_file, grain_rel, load_store, output_lstat, row_version,
                           sha256_bytes)

INDEX_FILE = "grip-export.json"
FORMAT = "grip-hub/2"   # 2: the core and twins splits, the columns that make item_row exact
# Shards stay well under the Hub's 500 MB advice, row groups near the viewer's ~100 MB limit with room to spare.
MAX_SHARD_BYTES = 256 * 2**20
ROW_GROUP_BYTES = 64 * 2**20
DEFAULT_CORE = 20
DEFAULT_LICENSE = "cc-by-4.0"
DEFAULT_NAME = "GRIP"
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


class HubError(GripError):
    pass


# --- reading the item stores ---------------------------------------------------------------------------------

@dataclass
class Store:
    domain: str
    path: Path
    rows: list
    build: dict
    grain_items: int
    sigmas: tuple


def find_stores(out_dir: Path) -> list[Store]:
    """The item stores under a build folder (or the folder itself when it is one store), in registry order, each
    validated: rows, build.json of a finished build, every image and grain copy present with its sha256 recorded
    (the hashes themselves are checked as the export reads the files; `check_rows` re-samples the rows)."""
    from grip.domains import ids
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise StoreError(f"{out_dir}: no such folder")
    dirs = [out_dir] if (out_dir / "items.jsonl").is_file() else sorted(
        p for p in out_dir.iterdir() if p.is_dir() and (p / "items.jsonl").is_file())
    if not dirs:
        raise StoreError(f"{out_dir}: no item store in it (no <domain>/items.jsonl); not a grip build folder")
    known = ids()
    stores = []
    for d in dirs:
        rows = load_store(d)
        if not rows:
            raise StoreError(f"{d}: items.jsonl holds no items")
        domain = rows[0]["domain"]
        if any(r["domain"] != domain for r in rows):
            raise StoreError(f"{d}: rows of more than one domain; the item store is corrupt")
        if domain not in known:
            raise StoreError(f"{d}: domain {domain!r} is not registered; `grip list` shows the registered ones")
        if d != out_dir and d.name != domain:
            raise StoreError(f"{d}: holds items of {domain!r}; a store folder is named after its domain")
        try:
            build = json.loads((d / "build.json").read_text())
            grain = build["grain"]
            k, sigmas = int(grain["items"]), tuple(int(s) for s in grain["sigmas"])
        except (OSError, ValueError, KeyError, TypeError):
            raise StoreError(f"{d}: no readable build.json; the build did not finish (rerun it to resume)") from None
        if build.get("items") != len(rows):
            raise StoreError(f"{d}: build.json counts {build.get('items')} items, items.jsonl {len(rows)}; "
                             f"rerun the build to finish it")
        for i, r in enumerate(rows):
            if not (d / r["image"]).is_file():
                raise StoreError(f"{d / r['image']}: image missing; the item store is incomplete")
            if r["index"] < k and sigmas:
                _check_grain_hashes(d, i, r, sigmas)
            for s in sigmas if r["index"] < k else ():
                if not (d / grain_rel(r["id"], s)).is_file():
                    raise StoreError(f"{d / grain_rel(r['id'], s)}: grain copy missing; rerun the build")
            if "twin" in r and not (d / r["twin"]["image"]).is_file():
                raise StoreError(f"{d / r['twin']['image']}: twin image missing; the item store is incomplete")
        stores.append(Store(domain, d, rows, build, min(k, len(rows)), sigmas))
    doms = [s.domain for s in stores]
    if len(set(doms)) != len(doms):
        raise StoreError(f"{out_dir}: more than one store of the same domain")
    return sorted(stores, key=lambda s: known.index(s.domain))


def _check_grain_hashes(d: Path, i: int, r: dict, sigmas: tuple) -> None:
    """A row of the grain subset records the sha256 of each of its grain copies (`grain_sha256`, sigma as a string
    -> hex). Stores built before the field existed cannot vouch for their grain copies: they are refused, not
    trusted."""
    where = f"{d / 'items.jsonl'}: line {i + 1}"
    if "grain_sha256" not in r:
        raise StoreError(f"{where}: row {r['id']} records no grain_sha256; the store predates grain hashes, so "
                         f"its grain copies cannot be checked: rebuild it into a new folder to export it")
    hashes = r["grain_sha256"]
    for s in sigmas:
        h = hashes.get(str(s)) if isinstance(hashes, dict) else None
        if not isinstance(h, str) or not SHA256.match(h):
            raise StoreError(f"{where}: row {r['id']} records no sha256 for its grain copy at sigma {s}; the item "
                             f"store is corrupt (rebuild it)")


def _read_png(store: Store, rel: str, sha: str) -> bytes:
    data = (store.path / rel).read_bytes()
    if sha256_bytes(data) != sha:
        raise StoreError(f"{store.path / rel} differs from its row's sha256; the item store is corrupt")
    return data


def check_rows(st: Store, workers: int | None = None) -> None:
    """Every row is the item its seed regenerates (scene, questions, answers, margins): a hand-edited row is a
    one-line StoreError naming it, never exported. Re-sampling draws nothing, but a domain's sampler is most of
    the cost of an item, so a large store is checked by the builder's worker pool (one process per CPU)."""
    from grip.builder import CHECK_CHUNK, _check_row_args, _pool_map, cpu_count
    path = st.path / "items.jsonl"
    checks = ((r, f"{path}: line {i + 1}") for i, r in enumerate(st.rows))
    with contextlib.closing(_pool_map(_check_row_args, checks, len(st.rows), workers or cpu_count(),
                                      CHECK_CHUNK)) as done:
        for _ in done:
            pass


# --- export --------------------------------------------------------------------------------------------------

def _shard_plan(sizes: list[int]) -> list[tuple[int, int]]:
    """Consecutive [start, stop) row ranges whose payload stays under MAX_SHARD_BYTES (at least one row each)."""
    plan, start, acc = [], 0, 0
    for i, s in enumerate(sizes):
        if i > start and acc + s > MAX_SHARD_BYTES:
            plan.append((start, i))
            start, acc = i, 0
        acc += s
    plan.append((start, len(sizes)))
    return plan


def _write_split(dest: Path, rel_dir: str, split: str, make_rows, sizes: list[int]) -> dict:
    """Write one split as shards `<rel_dir>/<split>-0000k-of-0000N.parquet`; `make_rows(start, stop)` yields the
    rows of a range (so only one shard is in memory at a time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = features().arrow_schema
    plan = _shard_plan(sizes)
    shards, nbytes = [], 0
    for k, (a, b) in enumerate(plan):
        rel = f"{rel_dir}/{split}-{k:05d}-of-{len(plan):05d}.parquet"
        table = pa.Table.from_pylist(list(make_rows(a, b)), schema=schema)
        per_row = max(1, sum(sizes[a:b]) // max(1, b - a))
        group = max(1, min(b - a, ROW_GROUP_BYTES // per_row))
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path, row_group_size=group, compression="snappy", write_page_index=True)
        data = path.read_bytes()
        shards.append({"path": rel, "rows": b - a, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        nbytes += table.nbytes
    return {"rows": len(sizes), "num_bytes": nbytes, "download_size": sum(s["bytes"] for s in shards),
            "shards": shards}


@dataclass
class ExportResult:
    hub_dir: Path
    index: dict
    card: str


def _release_info(out_dir: Path) -> dict:
    """The recipe a `grip build --manifest` left in the build folder (release.json), if any, its shape checked."""
    p = Path(out_dir) / "release.json"
    if not p.is_file():
        return {}
    try:
        rel = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise StoreError(f"{p}: not valid JSON") from None
    why = _release_problem(rel)
    if why:
        raise StoreError(f"{p}: not a release record written by `grip build --manifest` ({why})")
    return rel


def _release_problem(rel) -> str | None:
    if not isinstance(rel, dict):
        return "not an object"
    for k in ("manifest", "name", "license"):
        if not isinstance(rel.get(k), str) or not rel[k].strip():
            return f"{k} is {rel.get(k)!r}, not a non-empty string"
    if not _count(rel.get("core")) or rel["core"] < 1:
        return f"core is {rel.get('core')!r}, not a positive whole number"
    if not isinstance(rel.get("grain_sigmas"), list):
        return "grain_sigmas is not a list"
    doms = rel.get("domains")
    if not isinstance(doms, dict) or not doms:
        return "domains is not a non-empty object"
    for d, spec in doms.items():
        if not isinstance(spec, dict):
            return f"domains.{d} is not an object"
        for k in ("n", "seed", "grain_subset"):
            if not _count(spec.get(k)):
                return f"domains.{d}.{k} is {spec.get(k)!r}, not a whole number"
        if spec.get("level") is not None and not _count(spec["level"]):
            return f"domains.{d}.level is {spec['level']!r}"
    return None


def check_release_matches(out_dir: Path, release: dict, stores: list[Store]) -> None:
    """Every store under a release folder is what its recipe (release.json) says: the same domains, and per domain
    the same item count, seed, level and grain subset. A store rebuilt with `grip build --domain` into the folder
    would otherwise be exported under the recipe's name and card ("rebuild with grip build --manifest ...") while
    holding other items."""
    where = f"{Path(out_dir) / 'release.json'} (recipe {release['manifest']})"
    fix = f"rebuild with `grip build --manifest {release['manifest']} --out NEW_DIR`, or remove release.json to " \
          f"export these stores as a plain build"
    want, have = release["domains"], {st.domain: st for st in stores}
    missing, extra = [d for d in want if d not in have], [d for d in have if d not in want]
    if missing or extra:
        what = "; ".join(x for x in (missing and f"no store of {', '.join(missing)}",
                                     extra and f"stores of {', '.join(extra)} it does not name") if x)
        raise StoreError(f"{out_dir}: does not match {where}: {what}; {fix}")
    for d, spec in want.items():
        st = have[d]
        args = st.build.get("arguments") or {}
        got = {"n": len(st.rows), "seed": args.get("seed"), "level": args.get("level"),
               "grain_subset": st.grain_items}
        exp = {"n": spec["n"], "seed": spec["seed"], "level": spec["level"], "grain_subset": spec["grain_subset"]}
        if list(st.sigmas) != list(release["grain_sigmas"]) and st.grain_items:
            got["grain_sigmas"], exp["grain_sigmas"] = list(st.sigmas), list(release["grain_sigmas"])
        diff = [f"{k} {got[k]!r} (recipe: {exp[k]!r})" for k in exp if got[k] != exp[k]]
        if diff:
            raise StoreError(f"{st.path}: built with {', '.join(diff)}; the folder no longer matches {where}; "
                             f"{fix}")


def export(out_dir: Path, hub_dir: Path, core: int | None = None, name: str | None = None,
           license: str | None = None) -> ExportResult:
    """Turn the item stores under `out_dir` into the Hub layout in `hub_dir` (replaced whole, atomically). Every
    row is checked against the item its seed regenerates and every PNG against its recorded sha256 first."""
    out_dir, hub_dir = Path(out_dir), Path(hub_dir)
    check_target_folder(hub_dir, "--to", "export")  # before any work; again before the rename
    if hub_dir.resolve() == out_dir.resolve() or out_dir.resolve() in hub_dir.resolve().parents:
        raise GripError(f"--to {hub_dir} lies inside the build folder {out_dir}; choose a folder outside it")
    stores = find_stores(out_dir)
    release = _release_info(out_dir)
    if release:
        check_release_matches(out_dir, release, stores)
    if core is not None:
        smallest = min(stores, key=lambda st: len(st.rows))
        if isinstance(core, bool) or not isinstance(core, int) or not 1 <= core <= len(smallest.rows):
            raise HubError(f"--core must be a whole number from 1 to {len(smallest.rows)} (the items of "
                           f"{smallest.domain}), got {core!r}")
    else:
        core = release.get("core", DEFAULT_CORE)  # the default 20 counts all items of a smaller store as core
    for opt, v in (("--name", name), ("--license", license)):
        if v is not None and (not isinstance(v, str) or not v.strip() or any(c in v for c in "\r\n")):
            raise HubError(f"{opt} must be a non-empty single line, got {v!r}")
    if license is not None and any(c.isspace() for c in license.strip()):
        raise HubError(f"--license must be a license id such as {DEFAULT_LICENSE!r} (no spaces), got {license!r}")
    name = (name or release.get("name") or DEFAULT_NAME).strip()
    license = (license or release.get("license") or DEFAULT_LICENSE).strip()
    for st in stores:
        check_rows(st)
    # Unique names beside the target (same filesystem, so the renames are atomic); never a fixed name, which
    # could be someone's folder.
    parent, base = _parent_and_name(hub_dir)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_temp_dir(parent, f".tmp-{base}-")
    old = None
    try:
        domains = {}
        for st in stores:
            img_sizes = [(st.path / r["image"]).stat().st_size + 8192 for r in st.rows]

            def items(a, b, st=st):
                for r in st.rows[a:b]:
                    yield hub_row(r, _read_png(st, r["image"], r["sha256"]), core)
            grain_keys = [(r, s) for r in st.rows[:st.grain_items] for s in st.sigmas]
            grain_sizes = [(st.path / grain_rel(r["id"], s)).stat().st_size + 8192 for r, s in grain_keys]

            def grains(a, b, st=st, keys=grain_keys):
                for r, s in keys[a:b]:
                    yield hub_row(r, _read_png(st, grain_rel(r["id"], s), r["grain_sha256"][str(s)]), core,
                                  sigma=s)
            twin_rows = [r for r in st.rows if "twin" in r]
            twin_sizes = [(st.path / r["twin"]["image"]).stat().st_size + 8192 for r in twin_rows]

            def twins(a, b, st=st, rows=twin_rows):
                for r in rows[a:b]:
                    yield twin_hub_row(r, _read_png(st, r["twin"]["image"], r["twin"]["sha256"]), core)
            n_core = sum(r["index"] < core for r in st.rows)   # rows are in index order: the first n_core
            splits = {SPLIT: _write_split(tmp, st.domain, SPLIT, items, img_sizes),
                      CORE_SPLIT: _write_split(tmp, st.domain, CORE_SPLIT, items, img_sizes[:n_core])}
            if grain_keys:
                splits[GRAIN_SPLIT] = _write_split(tmp, st.domain, GRAIN_SPLIT, grains, grain_sizes)
            if twin_rows:
                splits[TWIN_SPLIT] = _write_split(tmp, st.domain, TWIN_SPLIT, twins, twin_sizes)
            rungs = {}
            for r in st.rows:
                for q in r["questions"]:
                    rungs.setdefault(str(q["position"]), set()).add(q["id"])
            domains[st.domain] = {
                "family": st.rows[0]["family"], "version": row_version(st.rows[0]), "items": len(st.rows),
                "core": min(core, len(st.rows)),
                "grain_items": st.grain_items, "grain_sigmas": list(st.sigmas), "twin_items": len(twin_rows),
                "question_ids": {p: sorted(v) for p, v in sorted(rungs.items())},
                "answer_types": sorted({q["answer"]["type"] for r in st.rows for q in r["questions"]}),
                "build": {k: st.build.get("arguments", {}).get(k) for k in ("seed", "release", "level", "n")},
                "provenance": st.build.get("provenance", {}),
                "splits": splits,
            }
        index = {"format": FORMAT, "name": name, "license": license, "core": core,
                 "release": {k: v for k, v in release.items() if k != "provenance"},
                 "export": _export_provenance(), "domains": domains}
        card = dataset_card(index, stores)
        (tmp / "README.md").write_text(card, encoding="utf-8")
        (tmp / INDEX_FILE).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if check_target_folder(hub_dir, "--to", "export"):  # again: it may have changed during the export
            old = _make_temp_dir(parent, f".old-{base}-")
            os.replace(hub_dir, old / base)
        os.replace(tmp, hub_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and (old / base).exists() and not os.path.lexists(hub_dir):
            os.replace(old / base, hub_dir)  # the earlier export back where it was
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return ExportResult(hub_dir, index, card)


def _parent_and_name(path: Path) -> tuple[Path, str]:
    """The folder holding `path` and its name, without following links (`path` may be relative, even `.`)."""
    full = Path(os.path.abspath(path))
    return full.parent, full.name


def _is_regular_file(p: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(p).st_mode)
    except OSError:
        return False


def check_target_folder(path: Path, what: str, kind: str) -> bool:
    """A folder grip writes whole (`--to` of export, `--out` of download) must be a new path, an empty folder or
    an earlier grip {kind} (a real folder holding a grip-export.json); a symbolic link is never followed nor
    replaced, and a file, device or fifo is never replaced by a folder. True when the folder exists."""
    path = Path(path)
    st = output_lstat(path, what, HubError, "give the folder itself or a new path (a link is never followed or "
                                            "replaced)")
    if st is None:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise HubError(f"{what} {path} exists and is not a folder; choose an empty or new folder")
    try:
        occupied = any(path.iterdir())
    except OSError as e:
        raise HubError(f"{what} {path}: {e.strerror or e}") from None
    if occupied and not _is_regular_file(path / INDEX_FILE):
        raise HubError(f"{path} exists and is not an earlier grip {kind}; choose an empty or new folder")
    return True


def _export_provenance() -> dict:
    """What made the export: library versions, and the grip checkout (commit, dirty, remote) when grip runs from
    one; `install` is the card's install line, true for how this grip was installed (`hub_card.install_spec`)."""
    import datasets
    import huggingface_hub
    import pyarrow

    from grip.hub_card import install_spec
    prov = {"grip": grip.__version__, "datasets": datasets.__version__, "huggingface_hub": huggingface_hub.__version__,
            "pyarrow": pyarrow.__version__, **git_checkout()}
    prov["install"] = install_spec(prov)
    return prov


def _git(root: Path, *args: str) -> str | None:
    import subprocess
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_checkout() -> dict:
    """{git_commit, git_dirty, git_remote} of the checkout grip runs from; all None when the package is not the
    `grip/` folder at the top of a git work tree (an installed wheel, or site-packages inside some repository)."""
    pkg = Path(__file__).resolve().parent
    top = _git(pkg, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != pkg.parent:
        return {"git_commit": None, "git_dirty": None, "git_remote": None}
    remotes = (_git(pkg, "remote") or "").split()
    remote = None
    if remotes:
        remote = _git(pkg, "remote", "get-url", "origin" if "origin" in remotes else remotes[0]) or None
    return {"git_commit": _git(pkg, "rev-parse", "HEAD") or None,
            "git_dirty": bool(_git(pkg, "status", "--porcelain")), "git_remote": remote}


# --- reading an export back ----------------------------------------------------------------------------------

SHA256 = re.compile(r"^[0-9a-f]{64}$")
DOMAIN_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # a folder name: no slash, never "." or ".."


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def index_problem(index) -> str | None:
    """What is wrong with the structure of a parsed grip-export.json, or None: the one place that knows the shape
    push, download and the CLI rely on (every shard a dict with a relative `<domain>/<split>-k-of-N.parquet` path,
    a row count, a size and a sha256; every split's rows the sum of its shards')."""
    if not isinstance(index, dict):
        return f"the top level is a {type(index).__name__}, not an object"
    if index.get("format") != FORMAT:
        return f"format is {index.get('format')!r}, not {FORMAT!r}"
    for k in ("name", "license"):
        if not isinstance(index.get(k), str) or not index[k].strip():
            return f"{k} is {index.get(k)!r}, not a non-empty string"
    doms = index.get("domains")
    if not isinstance(doms, dict):
        return f"domains is {'missing' if doms is None else 'a ' + type(doms).__name__}, not an object"
    if not doms:
        return "domains is empty"
    for d, info in doms.items():
        if not DOMAIN_KEY.match(d):
            return f"domain name {d!r} is not a domain id"
        if not isinstance(info, dict):
            return f"domains.{d} is a {type(info).__name__}, not an object"
        splits = info.get("splits")
        if not isinstance(splits, dict):
            return f"domains.{d}.splits is {'missing' if splits is None else 'a ' + type(splits).__name__}, " \
                   f"not an object"
        for must in (SPLIT, CORE_SPLIT):
            if must not in splits:
                return f"domains.{d}.splits has no {must!r} split"
        for s, si in splits.items():
            w = f"domains.{d}.splits.{s}"
            if s not in SPLITS:
                return f"{w}: unknown split (expected one of {', '.join(SPLITS)})"
            if not isinstance(si, dict):
                return f"{w} is a {type(si).__name__}, not an object"
            if not _count(si.get("rows")):
                return f"{w}.rows is {si.get('rows')!r}, not a row count"
            shards = si.get("shards")
            if not isinstance(shards, list) or not shards:
                return f"{w}.shards is {shards!r}, not a list of shards"
            for k, sh in enumerate(shards):
                ws = f"{w}.shards[{k}]"
                if not isinstance(sh, dict):
                    return f"{ws} is a {type(sh).__name__}, not an object"
                path = sh.get("path")
                if not isinstance(path, str):
                    return f"{ws}.path is {'missing' if path is None else repr(path)}, not a file name"
                if not re.fullmatch(rf"{re.escape(d)}/{re.escape(s)}-\d{{5}}-of-\d{{5}}\.parquet", path):
                    return f"{ws}.path {path!r} is not {d}/{s}-0000k-of-0000N.parquet"
                for key in ("rows", "bytes"):
                    if not _count(sh.get(key)):
                        return f"{ws}.{key} is {sh.get(key)!r}, not a whole number"
                if not isinstance(sh.get("sha256"), str) or not SHA256.match(sh["sha256"]):
                    return f"{ws}.sha256 is {sh.get('sha256')!r}, not a sha256"
            if len({sh["path"] for sh in shards}) != len(shards):
                return f"{w}.shards lists a file twice"
            if sum(sh["rows"] for sh in shards) != si["rows"]:
                return f"{w}.rows is {si['rows']} but its shards hold {sum(sh['rows'] for sh in shards)}"
    return None


def read_index_file(p: Path, hint: str = "") -> dict:
    """Parse and validate one grip-export.json; one-line errors."""
    p = Path(p)
    try:
        index = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise HubError(f"{p}: not valid JSON{hint}") from None
    why = index_problem(index)
    if why is not None:
        raise HubError(f"{p}: not a {FORMAT} index ({why}){hint}")
    return index


def read_index(hub_dir: Path) -> dict:
    p = Path(hub_dir) / INDEX_FILE
    if not (Path(hub_dir) / "README.md").is_file() or not p.is_file():
        raise HubError(f"{hub_dir}: no README.md and {INDEX_FILE}; not a grip export (run `grip export` first)")
    return read_index_file(p, "; export again")


def _file_sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_shard_rows(p: Path, sh: dict, bad: str, shown: Path | None = None) -> None:
    """The rows inside one shard: as many as the index says, and every row's image bytes (item or grain copy)
    hash to the row's own `image_sha256`. A shard rewritten together with its index entry passes the file-level
    checks; only this catches it. Reads one row group at a time. `shown` is the path the error names."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    shown = p if shown is None else shown
    try:
        f = pq.ParquetFile(p)
        if f.metadata.num_rows != sh["rows"]:
            raise HubError(f"{shown}: holds {f.metadata.num_rows} rows, {INDEX_FILE} says {sh['rows']}; {bad}")
        for batch in f.iter_batches(batch_size=256, columns=["id", "image", "image_sha256"]):
            images = batch.column("image").field("bytes").to_pylist()
            for rid, data, want in zip(batch.column("id").to_pylist(), images,
                                       batch.column("image_sha256").to_pylist()):
                if data is None or sha256_bytes(data) != want:
                    raise HubError(f"{shown}: row {rid}: image bytes differ from its image_sha256; {bad}")
    except (pa.ArrowException, OSError, KeyError, ValueError, TypeError, AttributeError) as e:
        raise HubError(f"{shown}: not a readable grip shard ({_first(e)}); {bad}") from None


def _shards(index: dict, domains: list[str] | None = None) -> list[dict]:
    return [sh for d, info in index["domains"].items() if domains is None or d in domains
            for s in info["splits"].values() for sh in s["shards"]]


def check_export(hub_dir: Path, hash_files: bool = False, domains: list[str] | None = None,
                 bad_hash: str = "the copy is corrupt", rows: bool = False) -> dict:
    """Every shard the index lists is there with its size (and sha256 when `hash_files`, and every row's image
    against its `image_sha256` when `rows`; `bad_hash` ends the error)."""
    index = read_index(hub_dir)
    for sh in _shards(index, domains):
        p = Path(hub_dir) / sh["path"]
        if not _is_regular_file(p) or p.stat().st_size != sh["bytes"]:
            raise HubError(f"{p}: missing or not the size {INDEX_FILE} records; export again")
        if hash_files and _file_sha256(p) != sh["sha256"]:
            raise HubError(f"{p}: sha256 differs from {INDEX_FILE}; {bad_hash}")
        if rows:
            check_shard_rows(p, sh, bad_hash)
    return index


# --- push and download ---------------------------------------------------------------------------------------

def _http_errors():
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError
    return HfHubHTTPError, httpx2.HTTPError


def _why(e: Exception) -> str:
    resp = getattr(e, "response", None)
    status = getattr(resp, "status_code", None)
    msg = ""
    if resp is not None:
        msg = resp.headers.get("X-Error-Message") or ""
        if not msg:
            try:
                msg = resp.json().get("error", "")
            except Exception:
                msg = ""
    if not msg:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return f"{status} {msg}".strip() if status else msg


@contextlib.contextmanager
def _quiet_hub_logs():
    """huggingface_hub logs a warning line for every retried request ("... thrown while requesting HEAD ..."); the
    failure, if it comes, is reported as one line of ours."""
    import huggingface_hub.utils.logging  # noqa: F401  (its import sets this level; ours must come after)
    log = logging.getLogger("huggingface_hub")
    level = log.level
    log.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        log.setLevel(level)


def _first(e: Exception) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _check_repo_id(repo: str) -> None:
    if not isinstance(repo, str) or not REPO_ID.match(repo) or "--" in repo or ".." in repo:
        raise HubError(f"--repo must look like ORG/NAME, got {repo!r}")


def _token(token: str | None) -> str:
    from huggingface_hub import get_token
    token = token or get_token()
    if not token:
        raise HubError("no Hugging Face token: set HF_TOKEN or run `hf auth login` (nothing was uploaded)")
    return token


def check_access(api, repo: str, token: str, private: bool) -> dict:
    """whoami, namespace membership, repo creation and a write check, in that order; one-line errors."""
    me = check_identity(api, repo, token)
    ensure_repo(api, repo, token, private, me)
    return me


def check_identity(api, repo: str, token: str) -> dict:
    """whoami: the token is valid, may write, and its user may write to the repo's namespace (no side effect)."""
    HfHubHTTPError, TransportError = _http_errors()
    ns = repo.split("/")[0]
    try:
        me = api.whoami(token=token, cache=False)
    except HfHubHTTPError as e:
        raise HubError(f"{api.endpoint} rejected the token ({_why(e)}); nothing was uploaded") from None
    except TransportError as e:
        raise HubError(f"cannot reach {api.endpoint}: {e}; nothing was uploaded") from None
    user = me.get("name", "?")
    role = (((me.get("auth") or {}).get("accessToken") or {}).get("role"))
    if role == "read":
        raise HubError(f"the token of {user} is read-only; use a token with write access (nothing was uploaded)")
    orgs = [o.get("name") for o in me.get("orgs", []) if isinstance(o, dict)]
    if ns != user and ns not in orgs:
        raise HubError(f"{user} cannot write to {repo}: not a member of {ns!r} (nothing was uploaded)")
    return me


def ensure_repo(api, repo: str, token: str, private: bool, me: dict) -> None:
    """Create the dataset repo if needed and check write access to it."""
    HfHubHTTPError, TransportError = _http_errors()
    user = me.get("name", "?")
    try:
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True, token=token)
        api.auth_check(repo, repo_type="dataset", write=True, token=token)
    except HfHubHTTPError as e:
        raise HubError(f"{user} cannot write to dataset {repo} ({_why(e)}); nothing was uploaded") from None
    except TransportError as e:
        raise HubError(f"cannot reach {api.endpoint}: {e}; nothing was uploaded") from None
    except (ValueError, KeyError, TypeError) as e:  # a malformed answer from the server
        raise HubError(f"unexpected answer from {api.endpoint} while checking {repo}: {_first(e)}") from None


@dataclass
class PushResult:
    url: str
    commit: str
    revision: str | None


def push(hub_dir: Path, repo: str, private: bool = False, revision: str | None = None,
         token: str | None = None) -> PushResult:
    """Upload an export in one commit to the `main` branch of dataset `repo`, then tag it `revision` if given.
    The index structure and shard sizes are checked first (no request), then the token (whoami), then every
    shard's sha256 and every row's image hash (before the repo is created or anything uploaded), then repo access
    and the tag."""
    _check_repo_id(repo)
    index = check_export(hub_dir)
    if revision is not None and (not revision or revision.strip() != revision or " " in revision):
        raise HubError(f"--revision must be a tag name without spaces, got {revision!r}")
    from huggingface_hub import HfApi
    HfHubHTTPError, TransportError = _http_errors()
    token = _token(token)
    api = HfApi(token=token)
    me = check_identity(api, repo, token)
    index = check_export(hub_dir, hash_files=True, rows=True,
                         bad_hash="it changed after the export: export again (nothing was uploaded)")
    ensure_repo(api, repo, token, private, me)
    shards = [sh["path"] for sh in _shards(index)]
    try:
        if revision is not None and api.revision_exists(repo, revision, repo_type="dataset", token=token):
            raise HubError(f"revision {revision!r} already exists in {repo}; a release tag never moves "
                           f"(nothing was uploaded)")
        n = sum(s["rows"] for info in index["domains"].values() for s in info["splits"].values())
        info = api.upload_folder(
            repo_id=repo, repo_type="dataset", folder_path=str(hub_dir), token=token,
            commit_message=f"grip export: {len(index['domains'])} domains, {n} rows",
            allow_patterns=["README.md", INDEX_FILE, *shards],  # the indexed shards only, never a stray file
            delete_patterns=["*.parquet", INDEX_FILE])
        commit = info.oid
        if revision is not None:
            api.create_tag(repo, tag=revision, revision=commit, repo_type="dataset", token=token,
                           tag_message=f"grip export {index['name']}")
    except HfHubHTTPError as e:
        raise HubError(f"upload to {repo} failed: {_why(e)}") from None
    except TransportError as e:
        raise HubError(f"upload to {repo} failed: cannot reach {api.endpoint}: {e}") from None
    except (ValueError, KeyError, TypeError, RuntimeError, OSError) as e:
        raise HubError(f"upload to {repo} failed: {_first(e)}") from None
    url = f"{api.endpoint}/datasets/{repo}" + (f"/tree/{revision}" if revision else "")
    return PushResult(url, commit, revision)


def download(repo: str, domain: str | None = None, revision: str | None = None, out: Path | None = None,
             token: str | None = None) -> tuple[Path, dict]:
    """Fetch an export (or one domain of it) into `out`. Shards already there that match the index are kept; the
    others are fetched into a temp folder, checked (size, sha256, every row's image hash) and only then renamed
    into place, so `out` never holds a corrupt shard, not even after a failed download."""
    _check_repo_id(repo)
    if out is not None and not str(out).strip():
        raise HubError("--out is empty; give a folder")
    out = Path(out) if out is not None else Path(repo.split("/")[1])
    check_target_folder(out, "--out", "download")
    where = f"{repo}" + (f"@{revision}" if revision else "")
    with _quiet_hub_logs():
        return _download(repo, domain, revision, out, token, where)


def _download(repo: str, domain: str | None, revision: str | None, out: Path, token: str | None,
              where: str) -> tuple[Path, dict]:
    from huggingface_hub import snapshot_download

    def fetch(dest: Path, paths: list[str]) -> None:
        with tempfile.TemporaryDirectory(prefix=".hf-", dir=dest) as meta:
            # huggingface_hub keeps its download records in <local_dir>/.cache/huggingface: fetched into a folder
            # of their own, the files are renamed into place and the records go with that folder, so `out` holds
            # the export only.
            snapshot_download(repo, repo_type="dataset", revision=revision, local_dir=meta, allow_patterns=paths,
                              token=token)
            for rel in paths:
                if (Path(meta) / rel).is_file():
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    os.replace(Path(meta) / rel, dest / rel)
    with _hub_errors(repo, revision, where):
        # The index goes to the cache first, so a wrong repo, revision or domain leaves no folder behind.
        index = _fetch_index(repo, revision, token)
        if domain is not None and domain not in index["domains"]:
            raise HubError(f"{where} has no domain {domain!r}; it holds {', '.join(index['domains'])}")
        _sync(out, index, None if domain is None else [domain], fetch, where)
    check_export(out, domains=None if domain is None else [domain])
    return out, index


def _fetch_index(repo: str, revision: str | None, token: str | None) -> dict:
    from huggingface_hub import hf_hub_download
    return read_index_file(hf_hub_download(repo, INDEX_FILE, repo_type="dataset", revision=revision, token=token))


def fetch_index(repo: str, revision: str | None = None, token: str | None = None) -> dict:
    """The grip-export.json of `repo` at `revision` (through the Hugging Face cache), validated; one-line
    errors as `download` gives them."""
    _check_repo_id(repo)
    where = f"{repo}" + (f"@{revision}" if revision else "")
    with _quiet_hub_logs(), _hub_errors(repo, revision, where):
        return _fetch_index(repo, revision, token)


@contextlib.contextmanager
def _hub_errors(repo: str, revision: str | None, where: str):
    """The failures of a fetch from the Hub as one-line HubErrors."""
    from huggingface_hub import constants
    from huggingface_hub.errors import (EntryNotFoundError, LocalEntryNotFoundError, OfflineModeIsEnabled,
                                        RepositoryNotFoundError, RevisionNotFoundError)
    HfHubHTTPError, TransportError = _http_errors()
    try:
        yield
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):  # before EntryNotFoundError: it is one
        why = ("offline mode: HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE
               else "connection refused, no network or the server is down")
        raise HubError(f"download of {where} failed: cannot reach {constants.ENDPOINT} ({why})") from None
    except RevisionNotFoundError:
        raise HubError(f"{repo} has no revision {revision!r}") from None
    except RepositoryNotFoundError:
        raise HubError(f"dataset {repo} not found (or private and the token cannot read it)") from None
    except EntryNotFoundError:
        raise HubError(f"{where} has no {INDEX_FILE}; not a grip export") from None
    except HfHubHTTPError as e:
        raise HubError(f"download of {where} failed: {_why(e)}") from None
    except TransportError as e:
        raise HubError(f"download of {where} failed: {e}") from None
    except (ValueError, KeyError, TypeError, RuntimeError) as e:
        raise HubError(f"download of {where} failed: {_first(e)}") from None


SHARD_NAME = re.compile(rf"^(?:{'|'.join(SPLITS)})-\d{{5}}-of-\d{{5}}\.parquet$")


def _make_temp_dir(parent: Path, prefix: str) -> Path:
    """A uniquely named folder in `parent`, with the permissions a plain mkdir gives (mkdtemp makes it 0700, and
    it may become the user's folder by a rename)."""
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    return tmp


def _check_inside(out: Path, rel: str) -> Path:
    """`out / rel`, where every folder on the way that exists is a real folder, not a link leading elsewhere, and
    the file itself, if there, is a regular file (or a new path)."""
    p = out
    for part in Path(rel).parts[:-1]:
        p = p / part
        try:
            mode = os.lstat(p).st_mode
        except FileNotFoundError:
            break
        if not stat.S_ISDIR(mode):
            raise HubError(f"{p} is {'a symbolic link' if stat.S_ISLNK(mode) else 'not a folder'}; an earlier "
                           f"grip download holds real folders only (choose a new --out)")
    return check_output_file(out / rel, "--out file")


def _sync(out: Path, index: dict, domains: list[str] | None, fetch, where: str) -> None:
    """Make `out` hold README.md, the index and the shards of `domains` (None: all) of `index`. `fetch(dest,
    paths)` downloads repo paths into folder `dest`."""
    shards = _shards(index, domains)
    bad = f"the copy on {where} is corrupt (nothing of it was kept)"
    existed = check_target_folder(out, "--out", "download")
    keep = set()
    if existed:
        for sh in shards:
            p = _check_inside(out, sh["path"])
            if _is_regular_file(p) and p.stat().st_size == sh["bytes"] and _file_sha256(p) == sh["sha256"]:
                check_shard_rows(p, sh, bad)  # the very bytes the server holds: a bad row there is a bad copy
                keep.add(sh["path"])
        for name in ("README.md", INDEX_FILE):
            check_output_file(out / name, "--out file")
    want = [sh for sh in shards if sh["path"] not in keep]
    if existed:
        stage = _make_temp_dir(out, ".tmp-download-")
    else:
        parent, base = _parent_and_name(out)
        parent.mkdir(parents=True, exist_ok=True)
        stage = _make_temp_dir(parent, f".tmp-{base}-")
    try:
        fetch(stage, ["README.md", INDEX_FILE, *(sh["path"] for sh in want)])
        if read_index_file(stage / INDEX_FILE) != index:
            raise HubError(f"{where} changed during the download (a push in between?); run it again")
        for sh in want:
            p, shown = stage / sh["path"], out / sh["path"]
            if not _is_regular_file(p) or p.stat().st_size != sh["bytes"]:
                raise HubError(f"{shown}: the fetched copy is missing or not the size {INDEX_FILE} records; {bad}")
            if _file_sha256(p) != sh["sha256"]:
                raise HubError(f"{shown}: sha256 of the fetched copy differs from {INDEX_FILE}; {bad}")
            check_shard_rows(p, sh, bad, shown)
        if not existed:
            os.replace(stage, out)  # all or nothing
            return
        for sh in want:
            target = _check_inside(out, sh["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / sh["path"], target)
        listed = {sh["path"] for sh in shards}
        for d in {sh["path"].split("/")[0] for sh in shards}:  # shards of another revision of the same config
            for f in (out / d).iterdir():
                if SHARD_NAME.match(f.name) and f"{d}/{f.name}" not in listed and _is_regular_file(f):
                    f.unlink()
        for name in ("README.md", INDEX_FILE):  # the index last: it marks a finished download
            if (stage / name).is_file():
                os.replace(stage / name, check_output_file(out / name, "--out file"))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
