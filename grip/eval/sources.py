"""Where `--items` may point, each turned into a local item store folder (`<domain>/items.jsonl` + PNGs, exactly
what `grip build` wrote):

    a `grip build` folder               used as it is
    a `grip export` folder              grip-export.json + parquet shards, read back into an item store
    a `grip download` folder            the same layout (perhaps of some domains only)
    ORG/NAME[@REVISION]                 a Hub repo id: its index fetched, the shards downloaded on first use

An item store read from a Hub copy is cached under $GRIP_CACHE (default ~/.cache/grip/hub) in a folder named by a
hash of the shard sha256s the export's index records, so a changed copy gets a new folder. Every shard is checked
against its sha256 before its copy is used, and every image against its row's hash as it is written. The store is
written into a temp folder and renamed into place when complete: an interrupted one is never used.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from grip import GripError

CACHE_ENV = "GRIP_CACHE"
LAYOUT = "grip-items/1"        # how a store is read out of an export; a change here must change every cache key
MARK = ".grip-source.json"     # written last inside a finished store
REPO_REF = re.compile(r"(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)(?:@(?P<rev>[^\s@]+))?")
BATCH_ROWS = 32                # rows per parquet batch: about 32 PNGs in memory at a time


class SourceError(GripError):
    pass


def cache_root() -> Path:
    env = os.environ.get(CACHE_ENV, "").strip()
    return Path(env) if env else Path.home() / ".cache" / "grip" / "hub"


def is_item_store(path: Path) -> bool:
    return (path / "items.jsonl").is_file() or any(path.glob("*/items.jsonl"))


def resolve_items(source) -> Path:
    """A local item store folder for `source` (a local build folder is returned unchanged)."""
    text = str(source)
    path = Path(source)
    if path.is_dir():
        if is_item_store(path):
            return path
        from grip.hub import INDEX_FILE
        if (path / INDEX_FILE).is_file():
            return from_export(path)
        raise SourceError(f"{path}: neither an item store (no <domain>/items.jsonl) nor a grip export or "
                          f"download (no {INDEX_FILE}); give a `grip build`, `grip export` or `grip download` folder "
                          f"or a Hub repo id ORG/NAME[@REVISION]")
    if os.path.lexists(path):
        raise SourceError(f"{path}: not a folder; give an item store, export or download folder, or a Hub repo id")
    m = REPO_REF.fullmatch(text)
    if m is None:
        raise SourceError(f"{text}: no such item store folder, and not a Hub repo id ORG/NAME[@REVISION]")
    from grip.hub import HubError
    try:
        return from_repo(m["repo"], m["rev"])
    except HubError as e:   # a mistyped local path reads as a repo id too: say both
        raise SourceError(f"{text}: no such folder here, and as a Hub repo id: {e}") from None


def _domains_present(folder: Path, index: dict) -> list[str]:
    """The domains of an export or download folder whose shards are there (a `grip download --domain` folder holds
    one); a domain with some of its shards is checked, and refused, by `check_export`."""
    return [d for d, info in index["domains"].items()
            if any(os.path.lexists(folder / sh["path"]) for si in info["splits"].values() for sh in si["shards"])]


def cache_key(index: dict, domains: list[str]) -> str:
    """sha256 of the shards a store is read from (by the sha256 the index records), per domain and split."""
    from grip.hub import GRAIN_SPLIT, SPLIT, TWIN_SPLIT
    doms = {d: {s: [sh["sha256"] for sh in index["domains"][d]["splits"][s]["shards"]]
                for s in (SPLIT, GRAIN_SPLIT, TWIN_SPLIT) if s in index["domains"][d]["splits"]}
            for d in domains}
    return hashlib.sha256(json.dumps({"layout": LAYOUT, "domains": doms}, sort_keys=True).encode()).hexdigest()


def _cached(key: str) -> Path | None:
    p = cache_root() / key
    return p if (p / MARK).is_file() else None


def from_export(folder: Path) -> Path:
    """The cached item store of an export or download folder, made on first use; every present shard's sha256 is
    checked first, every time (the cache is named by the index's hashes, the files must match them)."""
    from grip.hub import check_export, read_index
    index = read_index(folder)
    domains = _domains_present(folder, index)
    if not domains:
        raise SourceError(f"{folder}: holds none of the shards its grip-export.json lists; download it again")
    check_export(folder, hash_files=True, domains=domains,
                 bad_hash="the copy is corrupt: export or download it again")
    key = cache_key(index, domains)
    return _cached(key) or materialise(folder, index, domains, key, {"folder": str(Path(folder).resolve())})


def from_repo(repo: str, revision: str | None) -> Path:
    """The cached item store of a Hub repo at `revision`: the index is fetched each time (a moved branch gives a
    new key); the shards only when no store of that index is cached yet, into a temp folder removed afterwards."""
    from grip.hub import download, fetch_index, read_index
    index = fetch_index(repo, revision)
    hit = _cached(cache_key(index, list(index["domains"])))
    if hit is not None:
        return hit
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-download-"))
    try:
        out, _ = download(repo, revision=revision, out=tmp / "export")   # every shard and image hash checked
        index = read_index(out)
        key = cache_key(index, list(index["domains"]))
        return _cached(key) or materialise(out, index, list(index["domains"]), key,
                                           {"repo": repo, "revision": revision})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _rows(path: Path):
    import pyarrow.parquet as pq
    for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
        yield from batch.to_pylist()


def _png(row: dict, shown: Path) -> bytes:
    from grip.manifest import sha256_bytes
    data = (row.get("image") or {}).get("bytes")
    if data is None or sha256_bytes(data) != row["image_sha256"]:
        raise SourceError(f"{shown}: row {row['id']}: image bytes differ from its image_sha256; the copy is corrupt")
    return data


def materialise(src: Path, index: dict, domains: list[str], key: str, origin: dict) -> Path:
    """Write the item stores of `domains` read from the export in `src` into cache_root()/key, atomically."""
    from grip.hub import _make_temp_dir
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    tmp = _make_temp_dir(root, f".tmp-{key[:16]}-")   # a plain folder's permissions once renamed into place
    try:
        for d in domains:
            _write_domain(Path(src), index["domains"][d], tmp / d)
        (tmp / MARK).write_text(json.dumps({"layout": LAYOUT, "source": origin, "name": index["name"],
                                            "domains": domains}, indent=2) + "\n", encoding="utf-8")
        target = root / key
        try:
            os.replace(tmp, target)
        except OSError:   # another process finished the same store first
            if _cached(key) is None:
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _write_domain(src: Path, info: dict, dest: Path) -> None:
    from grip.hub import GRAIN_SPLIT, SPLIT, TWIN_SPLIT, item_row
    from grip.manifest import StoreError, grain_rel, image_rel, load_store, row_line, twin_rel
    splits = info["splits"]
    shards = {s: [src / sh["path"] for sh in splits[s]["shards"]] if s in splits else []
              for s in (SPLIT, GRAIN_SPLIT, TWIN_SPLIT)}
    (dest / "images").mkdir(parents=True)
    twins, grain = {}, {}
    for p in shards[TWIN_SPLIT]:
        for r in _rows(p):
            _write(dest / twin_rel(r["source_id"]), _png(r, p))
            twins[r["source_id"]] = {k: v for k, v in r.items() if k != "image"}
    for p in shards[GRAIN_SPLIT]:
        for r in _rows(p):
            _write(dest / grain_rel(r["source_id"], r["grain_sigma"]), _png(r, p))
            grain[(r["source_id"], str(r["grain_sigma"]))] = r["image_sha256"]
    n = 0
    with open(dest / "items.jsonl", "wb") as f:
        for p in shards[SPLIT]:
            for r in _rows(p):
                _write(dest / image_rel(r["id"]), _png(r, p))
                row = item_row(r, twins.pop(r["id"], None))
                for s, h in (row.get("grain_sha256") or {}).items():
                    if grain.get((row["id"], s)) != h:
                        raise SourceError(f"{p}: row {row['id']}: its grain copy at sigma {s} is missing from "
                                          f"split {GRAIN_SPLIT} or differs from its hash; the copy is corrupt")
                f.write(row_line(row))
                n += 1
    if twins:
        raise SourceError(f"{src}: split {TWIN_SPLIT} holds twins of items not in {SPLIT} ({next(iter(twins))}); "
                          f"the copy is corrupt")
    try:
        load_store(dest)   # every row as deeply checked as a build's
    except StoreError as e:
        raise SourceError(f"{src} does not read back as an item store: {e}") from None
    build = {"items": n, "grain": {"items": info.get("grain_items", 0), "sigmas": info.get("grain_sigmas", [])},
             "arguments": info.get("build", {}), "provenance": info.get("provenance", {}),
             "version": info.get("version")}
    (dest / "build.json").write_text(json.dumps(build, indent=2) + "\n", encoding="utf-8")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
