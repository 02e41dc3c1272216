"""The item store of DESIGN.md section 5: layout, row schema, validation, atomic writes.

    <out>/<domain>/images/<item_id>.png
    <out>/<domain>/grain/s15/<item_id>.png  s25/  s40/
    <out>/<domain>/items.jsonl     one row per image, in index order
    <out>/<domain>/build.json      provenance and summary
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
from contextlib import contextmanager
from pathlib import Path

from grip import GripError

ROW_FIELDS = ("id", "domain", "family", "index", "seed", "level", "image", "sha256", "width", "height", "scene",
              "attempts", "rejections", "margin_min", "questions")
QUESTION_FIELDS = ("position", "rung", "id", "text", "instruction", "answer", "margin", "edit")


class StoreError(GripError):
    pass


def item_id(domain: str, index: int) -> str:
    return f"{domain}_{index:06d}"


def image_rel(item: str) -> str:
    return f"images/{item}.png"


def grain_rel(item: str, sigma: int) -> str:
    return f"grain/s{sigma}/{item}.png"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same folder, then rename over the target: readers never see half a file. The
    temp name is fixed per target (one writer per store, guaranteed by `store_lock`), which is cheaper than
    mkstemp's random names; a killed build's leftovers are swept by the next run."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@contextmanager
def store_lock(domain_dir: Path):
    """Hold an exclusive lock on a store folder for the length of a build; a second build into the same folder
    fails at once instead of interleaving rows."""
    domain_dir.mkdir(parents=True, exist_ok=True)
    f = open(domain_dir / ".lock", "a+b")
    try:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{domain_dir} is being written by another grip build") from None
        yield
    finally:
        f.close()


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def row_line(row: dict) -> bytes:
    return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def validate_row(row: dict, where: str) -> None:
    if not isinstance(row, dict):
        raise StoreError(f"{where}: a row is not a JSON object")
    missing = [f for f in ROW_FIELDS if f not in row]
    if missing:
        raise StoreError(f"{where}: row lacks fields {missing}; not a grip item store")
    types = {"id": str, "domain": str, "index": int, "seed": int, "level": int, "image": str, "sha256": str,
             "scene": dict, "rejections": dict}
    wrong = [f for f, t in types.items() if not isinstance(row[f], t) or isinstance(row[f], bool)]
    if wrong:
        raise StoreError(f"{where}: row fields {wrong} have the wrong type; the item store is corrupt")
    qs = row["questions"]
    if not isinstance(qs, list) or [q.get("position") for q in qs] != [1, 2, 3, 4, 5, 6]:
        raise StoreError(f"{where}: row {row.get('id')} does not carry five rungs and an open question")
    for q in qs:
        if any(f not in q for f in QUESTION_FIELDS):
            raise StoreError(f"{where}: question {q.get('id')} of row {row.get('id')} lacks fields")


def read_rows(path: Path, allow_partial_tail: bool = False) -> tuple[list[dict], int]:
    """Rows of an items.jsonl and the byte length of its complete lines. A last line with no newline is an append
    cut short by an interruption: with `allow_partial_tail` it is ignored (the builder redoes that item), otherwise
    it is corruption. Any other unreadable line is corruption."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail and not allow_partial_tail:
        raise StoreError(f"{path}: last line is incomplete (interrupted write); rerun the build to resume")
    rows = []
    for k, raw in enumerate(lines, 1):
        try:
            row = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise StoreError(f"{path}: line {k} is not valid JSON; the item store is corrupt") from None
        validate_row(row, f"{path}: line {k}")
        rows.append(row)
    return rows, len(data) - len(tail)


def load_store(domain_dir: Path) -> list[dict]:
    """Read and validate a finished item store folder (used by tools that consume a build)."""
    path = Path(domain_dir) / "items.jsonl"
    if not path.is_file():
        raise StoreError(f"{domain_dir}: no items.jsonl; not a grip item store")
    rows, _ = read_rows(path)
    for i, row in enumerate(rows):
        if row["index"] != i:
            raise StoreError(f"{path}: row {i} has index {row['index']}; rows must be in index order")
    return rows
