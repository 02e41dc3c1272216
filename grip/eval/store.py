"""The response store: one SQLite file (WAL) holding one row per request key.

The key is a hash of everything that decides what a model is asked: model, endpoint, the full request with image
hashes in place of image bytes, the sampling fields, the experiment and the condition. Transport settings
(timeout, concurrency, retry caps, API key) are left out, so changing them never re-asks a question.

Every `put` is one SQLite statement in autocommit mode, i.e. one transaction: once `put` returns, the row is in the
WAL, and a process killed after that (SIGKILL included) loses nothing. `synchronous=NORMAL` is enough for that; it
only risks the last transactions on a power cut or kernel crash, which a rerun redoes (their keys are simply not
complete). A key is the primary key, so it is never stored twice; an `ok` row is never replaced, a `failed` row is
replaced by the next attempt at the same key.

One run writes a store at a time: `ResponseStore.lock()` holds an exclusive lock on `<store>.lock` beside the file
for the length of a run (`grip eval run` takes it before planning), so a second run into the same store fails at
once instead of sending every request a second time. Readers (score, report) take no lock.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from grip import GripError

__all__ = ["COLUMNS", "SCHEMA_VERSION", "ResponseStore", "StoreError", "request_key"]

SCHEMA_VERSION = 1

# (column, SQL type). JSON columns hold dicts/lists serialised with sorted keys.
_SCHEMA = (
    ("key", "TEXT PRIMARY KEY"),
    ("experiment", "TEXT NOT NULL"),
    ("condition", "TEXT NOT NULL"),
    ("model", "TEXT NOT NULL"),
    ("base_url", "TEXT"),
    ("item_id", "TEXT NOT NULL"),
    ("domain", "TEXT NOT NULL"),
    ("family", "TEXT"),
    ("question_id", "TEXT NOT NULL"),
    ("position", "INTEGER NOT NULL"),
    ("rung", "TEXT"),
    ("image_sha256", "TEXT"),
    ("status", "TEXT NOT NULL CHECK (status IN ('ok', 'failed'))"),
    ("http_status", "INTEGER"),
    ("error_class", "TEXT"),
    ("error_message", "TEXT"),
    ("attempts", "INTEGER NOT NULL"),
    ("elapsed_s", "REAL"),
    ("raw_body", "BLOB"),          # the response body exactly as received (the last attempt's, for a failure)
    ("content", "TEXT"),           # assistant text extracted from raw_body, or NULL
    ("response_model", "TEXT"),    # the model id the server said it used
    ("usage", "TEXT"),             # JSON
    ("latency_s", "REAL"),         # of the attempt that produced raw_body
    ("sampling", "TEXT NOT NULL"),  # JSON: every sampling field sent
    ("request", "TEXT NOT NULL"),   # JSON: the request as keyed (image hashes instead of bytes)
    ("template_version", "TEXT"),
    ("history", "TEXT"),           # JSON list, one entry per attempt: status, error_class, latency_s, wait_s
    ("created_at", "TEXT NOT NULL"),
)
COLUMNS = tuple(c for c, _ in _SCHEMA)
_JSON_COLUMNS = ("usage", "sampling", "request", "history")
_REQUIRED = ("key", "experiment", "condition", "model", "item_id", "domain", "question_id", "position", "status",
             "attempts", "sampling", "request")


class StoreError(GripError):
    pass


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def request_key(model: str, base_url: str | None, request: dict, sampling: dict, experiment: str,
                condition: str) -> str:
    """sha256 hex of the canonical JSON of what decides the question put to the model. `request` must already have
    image hashes in place of image bytes; a trailing slash on the base URL does not make a new key."""
    base = None if base_url is None else str(base_url).rstrip("/")
    try:
        text = _canonical({"model": model, "base_url": base, "request": request, "sampling": sampling,
                           "experiment": experiment, "condition": condition})
    except (TypeError, ValueError) as e:
        raise StoreError(f"request key: request or sampling is not plain JSON ({e})") from None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _storable(text: str) -> str:
    """`text` with each lone surrogate (legal in JSON as "\\ud800", not encodable as UTF-8, so not storable as
    SQLite TEXT) replaced by U+FFFD, the replacement character. Only derived text columns go through this: the
    raw body is stored as the exact bytes received, so nothing is lost."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ResponseStore:
    """SQLite response store. One writer process at a time is the intended use; readers may run alongside (WAL)."""

    def __init__(self, path: Path | str, readonly: bool = False):
        """Open (creating when missing) the store at `path`. `readonly=True` opens an existing store for reading
        only (SQLite `mode=ro`): nothing is created or written, so scoring works on a read-only file or folder."""
        self.path = Path(path)
        self.readonly = readonly
        self._lock_fd: int | None = None
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder; the response store is a file (e.g. responses.sqlite)")
        if self.path.exists() and not self.path.is_file():   # /dev/null, a fifo...: SQLite would write beside it
            raise StoreError(f"{self.path} is not a regular file; the response store is a file (e.g. "
                             f"responses.sqlite)")
        try:
            if readonly:
                if not self.path.is_file():
                    raise StoreError(f"{self.path}: no response store (run `grip eval run` first)")
                self._db = self._connect_readonly()
            else:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise StoreError(f"cannot write the response store at {self.path} (cannot create its folder: "
                                     f"{e.strerror or e})") from None
                self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._init_schema()
        except sqlite3.Error as e:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            raise self._error(e) from None
        except StoreError:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            raise
        cols = ", ".join(COLUMNS)
        marks = ", ".join("?" for _ in COLUMNS)
        updates = ", ".join(f"{c}=excluded.{c}" for c in COLUMNS if c != "key")
        # The WHERE keeps an acknowledged answer forever: only a failed row can be overwritten.
        self._put_sql = (f"INSERT INTO responses ({cols}) VALUES ({marks}) "
                         f"ON CONFLICT(key) DO UPDATE SET {updates} WHERE responses.status != 'ok'")

    def _connect_readonly(self) -> sqlite3.Connection:
        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
        db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0, check_same_thread=False)
        try:
            db.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
            return db
        except sqlite3.OperationalError as e:
            # A WAL store read from a read-only folder: SQLite cannot create the -shm index beside it. Then no
            # writer can be at work on it either (a writer has those files open), so read it as immutable.
            if getattr(e, "sqlite_errorname", "") not in ("SQLITE_CANTOPEN", "SQLITE_READONLY_CANTINIT",
                                                          "SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY"):
                db.close()
                raise
            db.close()
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)

    def _error(self, e: sqlite3.Error) -> StoreError:
        """A one-line StoreError for an SQLite error, saying whether the file is foreign or cannot be used."""
        name = getattr(e, "sqlite_errorname", "") or ""
        if name in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or (not name and "not a database" in str(e)):
            return StoreError(f"{self.path}: not a grip response store ({e})")
        verb = "read" if self.readonly else "write"
        return StoreError(f"cannot {verb} the response store at {self.path} ({e})")

    def _init_schema(self) -> None:
        db = self._db
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and self.readonly:
            raise StoreError(f"{self.path}: not a grip response store (no tables; an empty file?)")
        if not tables:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
                db.execute("CREATE TABLE responses (" + ", ".join(f"{c} {t}" for c, t in _SCHEMA) + ")")
                db.execute("CREATE INDEX responses_experiment ON responses (experiment, condition)")
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                db.execute("INSERT INTO meta VALUES ('kind', 'grip-response-store')")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return
        if "meta" not in tables or "responses" not in tables:
            raise StoreError(f"{self.path}: an SQLite file that is not a grip response store")
        meta = dict(db.execute("SELECT k, v FROM meta"))
        if meta.get("kind") != "grip-response-store":
            raise StoreError(f"{self.path}: an SQLite file that is not a grip response store")
        if meta.get("schema_version") != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path}: response store schema {meta.get('schema_version')}, this grip reads "
                             f"{SCHEMA_VERSION}")

    # -- writing ------------------------------------------------------------------------------------------------
    def put(self, record: dict) -> bool:
        """Store one response or typed failure; committed when this returns. Returns False when the key already
        holds an `ok` row (which is kept)."""
        missing = [f for f in _REQUIRED if record.get(f) is None]
        if missing:
            raise StoreError(f"response record lacks {missing}")
        unknown = sorted(set(record) - set(COLUMNS))
        if unknown:
            raise StoreError(f"response record has unknown fields {unknown}")
        if record["status"] not in ("ok", "failed"):
            raise StoreError(f"response status must be 'ok' or 'failed', got {record['status']!r}")
        if self.readonly:
            raise StoreError(f"{self.path}: the response store is open read-only")
        row = dict(record)
        row.setdefault("created_at", _now())
        for c in _JSON_COLUMNS:
            if row.get(c) is not None:
                try:
                    row[c] = _canonical(row[c])
                except (TypeError, ValueError) as e:
                    raise StoreError(f"response record field {c} is not plain JSON ({e})") from None
        body = row.get("raw_body")
        if isinstance(body, str):
            # Lossless: every code point, a lone surrogate included, round-trips through surrogatepass.
            row["raw_body"] = body.encode("utf-8", "surrogatepass")
        elif body is not None and not isinstance(body, bytes):
            row["raw_body"] = bytes(body)
        for c, v in row.items():
            if isinstance(v, str) and c != "raw_body":
                row[c] = _storable(v)
        try:
            cur = self._db.execute(self._put_sql, tuple(row.get(c) for c in COLUMNS))
        except sqlite3.Error as e:
            raise self._error(e) from None
        return cur.rowcount == 1

    # -- what the last run used ---------------------------------------------------------------------------------
    def remember_run(self, items_dir: Path | str, readability: Path | str | None = None) -> None:
        """Record the item folder (absolute) a run used, so that `grip eval score` and `grip eval report` default
        to it; `readability` (E2's labels file), when given, likewise. Kept in the meta table, one row."""
        if self.readonly:
            raise StoreError(f"{self.path}: the response store is open read-only")
        d = self.run_defaults()
        d["items"] = str(Path(items_dir).resolve())
        if readability is not None:
            d["readability"] = str(Path(readability).resolve())
        try:
            self._db.execute("INSERT INTO meta VALUES ('run_defaults', ?) ON CONFLICT(k) DO UPDATE SET v=excluded.v",
                             (_storable(_canonical(d)),))
        except sqlite3.Error as e:
            raise self._error(e) from None

    def run_defaults(self) -> dict:
        """{"items": folder, "readability": file} as the last `grip eval run` recorded them ({} for a store made
        before runs were recorded, or a damaged entry)."""
        try:
            r = self._db.execute("SELECT v FROM meta WHERE k='run_defaults'").fetchone()
        except sqlite3.Error as e:
            raise self._error(e) from None
        try:
            d = json.loads(r[0]) if r is not None else {}
        except (TypeError, ValueError):
            return {}
        return {k: v for k, v in d.items() if k in ("items", "readability") and isinstance(v, str) and v} \
            if isinstance(d, dict) else {}

    # -- reading ------------------------------------------------------------------------------------------------
    def completed_keys(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT key FROM responses WHERE status='ok'")}

    def failed_keys(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT key FROM responses WHERE status='failed'")}

    def count(self, experiment: str | None = None) -> dict[str, int]:
        sql = "SELECT status, COUNT(*) FROM responses"
        args: tuple = ()
        if experiment is not None:
            sql += " WHERE experiment=?"
            args = (experiment,)
        out = {"ok": 0, "failed": 0}
        out.update(dict(self._db.execute(sql + " GROUP BY status", args)))
        return out

    def get(self, key: str) -> dict | None:
        cur = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM responses WHERE key=?", (key,))
        r = cur.fetchone()
        return None if r is None else self._decode(r)

    def rows(self, experiment: str | None = None) -> Iterator[dict]:
        """Every stored row as a dict (JSON columns decoded, raw_body as text), in a stable order."""
        sql = f"SELECT {', '.join(COLUMNS)} FROM responses"
        args: tuple = ()
        if experiment is not None:
            sql += " WHERE experiment=?"
            args = (experiment,)
        sql += " ORDER BY experiment, condition, model, domain, item_id, position, key"
        for r in self._db.execute(sql, args).fetchall():
            yield self._decode(r)

    @staticmethod
    def _decode(r: tuple) -> dict:
        d = dict(zip(COLUMNS, r))
        for c in _JSON_COLUMNS:
            if d[c] is not None:
                d[c] = json.loads(d[c])
        if d["usage"] is None:
            d["usage"] = {}
        if isinstance(d["raw_body"], bytes):
            d["raw_body"] = d["raw_body"].decode("utf-8", "replace")
        return d

    def integrity_ok(self) -> bool:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    # -- one writer at a time -------------------------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    @contextmanager
    def lock(self):
        """Hold the store's writer lock (an exclusive `flock` on `<store>.lock`) for the block; a StoreError at once
        when another run holds it. Re-entrant on this object: a block inside a block keeps the one lock."""
        if self.readonly:
            raise StoreError(f"{self.path}: the response store is open read-only")
        if self._lock_fd is not None:
            yield
            return
        self._lock_fd = self._take_lock()
        try:
            yield
        finally:
            fd, self._lock_fd = self._lock_fd, None
            if fd is not None:   # None: the store was closed inside the block, which let the lock go
                os.close(fd)     # closing the descriptor releases the lock

    def _take_lock(self) -> int:
        path = self.lock_path
        try:   # never through a link: the lock file is ours to create and nothing else
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as e:
            why = "it is a symbolic link" if e.errno == errno.ELOOP else (e.strerror or str(e))
            raise StoreError(f"cannot lock the response store at {self.path} ({path}: {why})") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StoreError(f"cannot lock the response store at {self.path} ({path} is not a regular file)")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoreError(f"{self.path} is being written by another grip eval run (it holds {path}); "
                                 f"wait for it to end or give another --store") from None
            except OSError as e:
                raise StoreError(f"cannot lock the response store at {self.path} ({path}: "
                                 f"{e.strerror or e})") from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        self._db.close()

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
