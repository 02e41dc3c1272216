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
import math
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path

from grip import GripError

ROW_FIELDS = ("id", "domain", "family", "index", "seed", "level", "image", "sha256", "width", "height", "scene",
              "attempts", "rejections", "margin_min", "questions")
QUESTION_FIELDS = ("position", "rung", "id", "text", "instruction", "answer", "margin", "edit")
# Fields a row may carry beyond ROW_FIELDS. `grain_sha256` (sigma as a string -> sha256 of that grain PNG; {} for an
# item without grain copies) is absent from rows written before grip recorded grain hashes.
# `version` (the domain's version that built the row, an int >= 1) is absent from rows written before domains had
# versions: such a row counts as version 1.
# `rephrase` (the second wording of Q4: question JSON plus "map") is absent from rows written before grip recorded
# it; a rerun does not add it. `twin` (the minimal pair: TWIN_FIELDS) is present exactly in a `--twins` build.
OPTIONAL_ROW_FIELDS = ("grain_sha256", "version", "rephrase", "twin")
GRAIN_KEYS = ("15", "25", "40")   # str(sigma) for sigma in grip.grain.SIGMAS (kept here: no numpy import)
TWIN_FIELDS = ("image", "sha256", "scene", "questions", "rephrase", "margin_min", "edit", "changed_fraction", "ssim")
# grip.domain.REPHRASE_MAPS (kept here: no numpy import; a test keeps them equal)
REPHRASE_MAPS = ("identity", "inversion", "reversal", "complement")


ROW_ORDER = (ROW_FIELDS[:2] + ("version",) + ROW_FIELDS[2:8] + ("grain_sha256",) + ROW_FIELDS[8:]
             + ("rephrase", "twin"))  # as built


def row_in_order(row: dict) -> dict:
    """A row with its fields in the order the builder writes them (version after domain, grain_sha256 after
    sha256, rephrase and twin last)."""
    return {f: row[f] for f in ROW_ORDER if f in row}


MAX_ITEMS = 10_000_000      # items per store (and per domain of a release): about 500 GB of PNGs at this bound
MAX_SEED = 2 ** 63 - 1      # seeds are whole numbers 0..MAX_SEED, on the command line as in a manifest (TOML ints)


class StoreError(GripError):
    pass


def item_id(domain: str, index: int) -> str:
    return f"{domain}_{index:06d}"


def image_rel(item: str) -> str:
    return f"images/{item}.png"


def grain_rel(item: str, sigma: int) -> str:
    return f"grain/s{sigma}/{item}.png"


def twin_rel(item: str) -> str:
    return f"twins/{item}.png"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def output_lstat(path: Path, what: str, error: type = GripError, link_hint: str = "give a regular file or a new path"):
    """lstat of a path grip is about to write (None when it does not exist yet); a symbolic link is refused, never
    followed or replaced, and an unreadable path is one line of `error`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise error(f"{what} {path}: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        raise error(f"{what} {path} is a symbolic link; {link_hint}")
    return st


def check_output_file(path, what: str = "--out") -> Path:
    """An output file path must be a new path or an existing regular file: the rename that writes it would replace a
    symlink, a device node, a fifo or a socket with a regular file (and a folder cannot be written at all). Every
    command that takes a file path to write checks it with this before doing any work."""
    if path is None or str(path).strip() == "":
        raise GripError(f"{what} is empty; give a file path")
    path = Path(path)
    st = output_lstat(path, what)
    if st is None:
        return path
    if stat.S_ISDIR(st.st_mode):
        raise GripError(f"{what} {path} is a folder; give a file path")
    if not stat.S_ISREG(st.st_mode):
        raise GripError(f"{what} {path} is not a regular file (a device, fifo or socket); give a regular file "
                        f"or a new path")
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same folder, then rename over the target: readers never see half a file. The
    temp name is fixed per target (one writer per store, guaranteed by `store_lock`), which is cheaper than
    mkstemp's random names; a killed build's leftovers are swept by the next run. A target that exists and is not
    a regular file is refused (see `check_output_file`), never replaced."""
    path = check_output_file(path, "output")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError) and e.filename is None:   # a failed write (disk full) names no file by itself
            e.filename = str(path)
        raise


@contextmanager
def store_lock(domain_dir: Path):
    """Hold an exclusive lock on a store folder for the length of a build; a second build into the same folder
    fails at once instead of interleaving rows. Yields the lock's file descriptor: a forked worker closes its copy
    (`grip.builder`), so only the build process itself ever holds the lock."""
    domain_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(domain_dir / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{domain_dir} is being written by another grip build") from None
        yield fd
    finally:
        os.close(fd)


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def row_line(row: dict) -> bytes:
    return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _written_as(stored, rebuilt) -> bool:
    """Whether `stored` JSON is `rebuilt` (the same value read back and written again), allowing only keys absent
    from `stored` (defaults of fields added since). A bool never passes for a number."""
    if isinstance(stored, dict):
        return (isinstance(rebuilt, dict) and set(stored) <= set(rebuilt)
                and all(_written_as(v, rebuilt[k]) for k, v in stored.items()))
    if isinstance(stored, list):
        return (isinstance(rebuilt, (list, tuple)) and len(stored) == len(rebuilt)
                and all(_written_as(x, y) for x, y in zip(stored, rebuilt)))
    if isinstance(stored, bool) or isinstance(rebuilt, bool):
        return type(stored) is type(rebuilt) and stored == rebuilt
    if _is_number(stored) and _is_number(rebuilt):
        return stored == rebuilt
    return type(stored) is type(rebuilt) and stored == rebuilt


def _check_question(q, k: int, rid, where: str) -> None:
    from grip.domain import Question
    qid = q.get("id") if isinstance(q, dict) else None

    def bad(what: str) -> None:
        raise StoreError(f"{where}: row {rid}, question {qid or k}: {what}; the item store is corrupt")

    if not isinstance(q, dict):
        bad("not a JSON object")
    missing = [f for f in QUESTION_FIELDS if f not in q]
    if missing:
        bad(f"lacks fields {missing}")
    unknown = sorted(set(q) - set(QUESTION_FIELDS))
    if unknown:
        bad(f"unknown fields {unknown}")
    for f in ("id", "text", "instruction", "rung"):
        if not isinstance(q[f], str):
            bad(f"{f} is not a string")
    if q["edit"] is not None and not isinstance(q["edit"], str):
        bad("edit is neither a string nor null")
    m = q["margin"]
    if not isinstance(m, dict) or set(m) != {"value", "unit", "threshold", "boundary"}:
        bad("margin is not {value, unit, threshold, boundary}")
    # A margin is a distance to the nearest boundary: a number, +inf where no boundary is in reach; never NaN.
    if not _is_number(m["value"]) or math.isnan(m["value"]) or m["value"] == -math.inf:
        bad(f"margin value {m['value']!r} is not a number")
    if not _is_number(m["threshold"]) or not math.isfinite(m["threshold"]):
        bad(f"margin threshold {m['threshold']!r} is not a finite number")
    if not isinstance(m["unit"], str) or not isinstance(m["boundary"], str):
        bad("margin unit or boundary is not a string")
    a = q["answer"]
    if not isinstance(a, dict):
        bad("answer is not a JSON object")
    try:
        # The typed answer must be one `answer_from_json` reads back as written (no value of the wrong type that it
        # coerces, no stray key; a key it has since gained may be absent), whose value lies in its declared space.
        from grip.answers import answer_from_json
        ans = answer_from_json(a)
        if not _written_as(a, ans.to_json()):
            bad("answer JSON does not read back as written (a value of the wrong type or an unknown key)")
        if not ans.in_space():
            bad(f"answer {ans.reference_text()!r} lies outside its declared space")
        # The rung name follows from the position. (The instruction wording may differ between grip versions;
        # whether it is this version's is for `grip.builder.check_row_regenerates`.)
        if not _written_as({**q, "instruction": ""}, {**Question.from_json(q).to_json(), "instruction": ""}):
            bad(f"rung {q['rung']!r} does not match position {q['position']}")
    except StoreError:
        raise
    except Exception as e:  # a broken answer can fail in any way inside the typed classes
        bad(f"answer cannot be read ({type(e).__name__}: {e})")


def row_version(row: dict) -> int:
    """The version of its domain that built a row (rows from before versions count as version 1)."""
    return row.get("version", 1)


def validate_row(row: dict, where: str) -> None:
    """Check a row deeply enough that nothing downstream (resume, export, scoring, reports) can trip on it: every
    field present with its type, no unknown field, every question's typed answer readable and in its space, margins
    numbers, grain hashes hex. A broken row is a one-line StoreError naming the row. Whether the row is the item
    its seed gives is `grip.builder.check_row_regenerates`."""
    if not isinstance(row, dict):
        raise StoreError(f"{where}: a row is not a JSON object")
    missing = [f for f in ROW_FIELDS if f not in row]
    if missing:
        raise StoreError(f"{where}: row lacks fields {missing}; not a grip item store")
    rid = row["id"] if isinstance(row["id"], str) else None
    unknown = sorted(set(row) - set(ROW_FIELDS) - set(OPTIONAL_ROW_FIELDS))
    if unknown:
        raise StoreError(f"{where}: row {rid} has unknown fields {unknown}; the item store is corrupt")
    types = {"id": str, "domain": str, "family": str, "index": int, "seed": int, "level": int, "image": str,
             "sha256": str, "width": int, "height": int, "scene": dict, "attempts": int, "rejections": dict,
             "margin_min": (int, float), "questions": list}
    wrong = [f for f, t in types.items() if not isinstance(row[f], t) or isinstance(row[f], bool)]
    if wrong:
        raise StoreError(f"{where}: row {rid} fields {wrong} have the wrong type; the item store is corrupt")

    def bad(what: str) -> None:
        raise StoreError(f"{where}: row {rid}: {what}; the item store is corrupt")

    if row["index"] < 0 or not 0 <= row["seed"] < 2 ** 64 or row["attempts"] < 1:
        bad("index, seed or attempts out of range")
    if row["width"] < 1 or row["height"] < 1:
        bad("width or height is not positive")
    if not _HEX64.fullmatch(row["sha256"]):
        bad("sha256 is not 64 lowercase hex digits")
    if math.isnan(row["margin_min"]):
        bad("margin_min is not a number")
    if any(not isinstance(k, str) or not _is_int(v) or v < 0 for k, v in row["rejections"].items()):
        bad("rejections is not a table of counts")
    if "version" in row and (not _is_int(row["version"]) or row["version"] < 1):
        bad("version is not a whole number >= 1")
    if "grain_sha256" in row:
        g = row["grain_sha256"]
        if (not isinstance(g, dict) or any(k not in GRAIN_KEYS for k in g)
                or any(not isinstance(v, str) or not _HEX64.fullmatch(v) for v in g.values())):
            bad(f"grain_sha256 is not a table of sigma ({', '.join(GRAIN_KEYS)}) to sha256")
    _check_ladder(row["questions"], rid, where, "")
    if "rephrase" in row:
        _check_rephrase(row["rephrase"], rid, where, "")
    if "twin" in row:
        _check_twin(row["twin"], rid, where)


def _check_ladder(qs, rid, where: str, what: str) -> None:
    if not isinstance(qs, list) or \
            [q.get("position") if isinstance(q, dict) else None for q in qs] != [1, 2, 3, 4, 5, 6]:
        raise StoreError(f"{where}: row {rid}{what} does not carry five rungs and an open question")
    for k, q in enumerate(qs, 1):
        _check_question(q, k, rid, where)


def _check_rephrase(r, rid, where: str, what: str) -> None:
    """`rephrase`: a rung-4 question as `questions` holds them, plus its map."""
    if not isinstance(r, dict) or r.get("map") not in REPHRASE_MAPS:
        raise StoreError(f"{where}: row {rid}{what}: rephrase is not a question with a map (one of "
                         f"{', '.join(REPHRASE_MAPS)}); the item store is corrupt")
    if r.get("position") != 4:
        raise StoreError(f"{where}: row {rid}{what}: rephrase is not at position 4; the item store is corrupt")
    _check_question({k: v for k, v in r.items() if k != "map"}, "rephrase", rid, where)


def _check_twin(t, rid, where: str) -> None:
    def bad(what: str) -> None:
        raise StoreError(f"{where}: row {rid}: twin {what}; the item store is corrupt")

    if not isinstance(t, dict) or set(t) != set(TWIN_FIELDS):
        bad(f"is not an object of {', '.join(TWIN_FIELDS)}")
    if not isinstance(rid, str) or t["image"] != twin_rel(rid):
        bad(f"image is not {twin_rel(rid) if isinstance(rid, str) else 'twins/<id>.png'}")
    if not isinstance(t["sha256"], str) or not _HEX64.fullmatch(t["sha256"]):
        bad("sha256 is not 64 lowercase hex digits")
    if not isinstance(t["scene"], dict):
        bad("scene is not an object")
    if not _is_number(t["margin_min"]) or math.isnan(t["margin_min"]):
        bad("margin_min is not a number")
    for f, low in (("changed_fraction", 0.0), ("ssim", -1.0)):
        if not _is_number(t[f]) or not low <= t[f] <= 1.0:
            bad(f"{f} is not a number in {low:g}..1")
    if not isinstance(t["edit"], list) or any(not isinstance(e, dict) or set(e) != {"path", "from", "to"}
                                              or not isinstance(e["path"], str) for e in t["edit"]):
        bad("edit is not a list of {path, from, to}")
    _check_ladder(t["questions"], rid, where, " twin")
    if t["rephrase"] is not None:
        _check_rephrase(t["rephrase"], rid, where, " twin")


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
