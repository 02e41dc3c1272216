"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the eval tests: chat completions with image content, a
scripted model, scripted faults, and a record of every request body it receives.

    with ScriptedServer(model=lambda req: "ANSWER: 3") as srv:
        srv.url                      # "http://127.0.0.1:PORT/v1"
        srv.queue_faults(Fault.status(429, retry_after="2"), Fault.status(500))   # next two requests
        srv.faults = lambda req, seen: Fault.hang(5) if seen == 0 else None       # by request (seen = times before)
        srv.requests                 # [Recorded(path, headers, body, json, time)]

Fault kinds: status (any HTTP status, optional Retry-After), hang (sleep before replying), malformed (a 200 whose
body is not JSON), truncated (a 200 that declares the full Content-Length, sends half and closes), drop (close the
connection without a reply), trickle (a 200 whose headers come at once and whose body comes one byte every
`seconds`), huge (a valid 200 chat completion padded to `size` bytes, with or without a Content-Length). A redirect is
a status fault with a Location header: `Fault.status(307, headers=(("Location", url),))`.

The `openai_server` fixture yields a started server and, at teardown, checks every request it received for
ground-truth leaks (`check_isolation`) against every item store under the session's temp folder (plus any folder
given to `srv.add_truth(dir)`). Import it into a test module: `from openai_server import openai_server`. Servers a
test starts itself are audited the same way at the end of the session (`audit_every_request`, tests/conftest.py),
unless made with `audit=False` (only for requests that leak on purpose).

Run as a script (`python tests/openai_server.py [--delay S]`) it serves until killed and prints its URL: the
benchmark uses that to keep the server off the client's core.
"""
from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import re

from grip.eval.prompts import (E3_LEADS, E4_LEADS, E4_MAX_PEERS, PIXEL_CHUNKS, TEMPLATES, closing_instruction,
                               constructed_peers, png_chunks, prompt_text)

# Fields a request may carry besides the messages: the sampling fields the runner sends, plus the provider
# extras the tests pass through. Anything else in a request is a place truth could hide, so it fails the check.
ALLOWED_FIELDS = {"model", "messages", "temperature", "max_tokens", "top_p", "seed", "top_k", "min_p",
                  "repetition_penalty"}
# vLLM's chat-completion extras a swap-probe continuation sends (and only it: `_check_swap_turns`).
CONTINUE_FIELDS = {"continue_final_message": True, "add_generation_prompt": False}


@dataclass(frozen=True)
class Fault:
    kind: str
    code: int = 200
    retry_after: str | None = None
    seconds: float = 0.0
    headers: tuple = ()
    size: int = 0                   # huge: body bytes
    declare_length: bool = True     # huge: send a Content-Length (else the body ends when the connection closes)

    @staticmethod
    def status(code: int, retry_after: str | None = None, headers: tuple = ()) -> Fault:
        return Fault("status", code=code, retry_after=retry_after, headers=headers)

    @staticmethod
    def hang(seconds: float) -> Fault:
        return Fault("hang", seconds=seconds)

    @staticmethod
    def malformed() -> Fault:
        return Fault("malformed")

    @staticmethod
    def truncated() -> Fault:
        return Fault("truncated")

    @staticmethod
    def drop() -> Fault:
        return Fault("drop")

    @staticmethod
    def trickle(seconds: float = 0.25) -> Fault:
        return Fault("trickle", seconds=seconds)

    @staticmethod
    def huge(size: int, length: bool = True) -> Fault:
        return Fault("huge", size=size, declare_length=length)


@dataclass
class Recorded:
    path: str
    headers: dict
    body: bytes
    json: object
    time: float


def _image_url(req: dict) -> str | None:
    """The data URL of the first PNG image part of a chat request, or None."""
    for msg in req.get("messages", []) if isinstance(req, dict) else []:
        content = msg.get("content") if isinstance(msg, dict) else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if url.startswith("data:image/png;base64,"):
                    return url
    return None


def image_of(req: dict) -> bytes | None:
    """The PNG bytes of the first image part of a chat request, or None."""
    url = _image_url(req)
    return None if url is None else base64.b64decode(url.split(",", 1)[1])


def text_of(req: dict) -> str:
    out = []
    for msg in req.get("messages", []) if isinstance(req, dict) else []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            out.append(content)
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "text":
                out.append(str(part.get("text")))
    return "\n".join(out)


def constant_model(text: str = "I see it.\nANSWER: 0") -> Callable[[dict], str]:
    return lambda req: text


class ScriptedServer:
    # Every server started in this test process whose requests the session-end audit checks (tests/conftest.py):
    # each request any test sends must pass `check_isolation`. A test that leaks on purpose passes audit=False.
    AUDITED: list["ScriptedServer"] = []
    ALL: list["ScriptedServer"] = []    # every server started in this process (their replies may come back in E3)

    def __init__(self, model: Callable[[dict], str] | None = None, faults=None, delay_s: float = 0.0,
                 model_name: str = "scripted-vlm", record: bool = True, audit: bool = True,
                 continuation: bool = True):
        if audit and record:
            ScriptedServer.AUDITED.append(self)
        ScriptedServer.ALL.append(self)
        self.model = model or constant_model()
        self.faults = faults            # callable(request json, times this exact body was seen before) -> Fault
        # vLLM's `continue_final_message` / `add_generation_prompt`: honoured (the reply continues the final
        # assistant message) when True, refused with a 400 like a server that knows no such fields when False
        self.continuation = continuation
        self.delay_s = delay_s          # every reply waits this long (slow model)
        self.model_name = model_name
        self.record = record
        self.requests: list[Recorded] = []
        self.replies: dict[str, bytes] = {}   # sha256 of request body -> last 200 body sent for it
        self.truth_dirs: list[Path] = []
        self._fault_queue: deque = deque()
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._n = 0
        self.inflight = 0
        self.max_inflight = 0           # most chat requests being handled at once
        self._httpd: ThreadingHTTPServer | None = None

    # -- control --
    def queue_faults(self, *faults: Fault) -> None:
        with self._lock:
            self._fault_queue.extend(faults)

    def add_truth(self, store_dir: Path) -> None:
        self.truth_dirs.append(Path(store_dir))

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedServer:
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- serving (called from handler threads) --
    def _next(self, body: bytes, req) -> tuple[Fault | None, str]:
        digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            seen = self._seen.get(digest, 0)
            self._seen[digest] = seen + 1
            self._n += 1
            fault = self._fault_queue.popleft() if self._fault_queue else None
        if fault is None and self.faults is not None:
            fault = self.faults(req, seen)
        return fault, digest

    def completion(self, req: dict, text: str) -> bytes:
        with self._lock:
            n = self._n
        return json.dumps({"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                           "model": self.model_name,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 100, "completion_tokens": len(text.split()),
                                     "total_tokens": 100 + len(text.split())}}).encode()


class _Server(ThreadingHTTPServer):
    # The listen backlog is set when the socket is bound: the default of 5 drops connections when a run opens
    # dozens at once (they surface as ReadError after a SYN retry).
    request_queue_size = 512
    daemon_threads = True


def _handler_for(server: ScriptedServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # quiet
            pass

        def setup(self):
            super().setup()
            # Headers and body go out in two writes; without NODELAY, Nagle + delayed ACK add 40 ms to each reply.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, status: int, body: bytes, headers: tuple = (), length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body) if length is None else length))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def _trickle(self, body: bytes, every_s: float) -> None:
            """Headers (with the full Content-Length) at once, then the body one byte every `every_s` seconds, until
            it is all sent or the client goes away."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            for k in range(len(body)):
                self.wfile.write(body[k:k + 1])
                self.wfile.flush()
                time.sleep(every_s)

        def _huge(self, req: dict, size: int, declare_length: bool) -> None:
            """A valid chat completion padded to about `size` bytes, written in 64 KiB pieces (never held whole);
            without a Content-Length the body ends when the connection closes."""
            head = server.completion(req, "ANSWER: 1")
            cut = head.index(b'"ANSWER: 1"') + 1
            pad = max(0, size - len(head))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if declare_length:
                self.send_header("Content-Length", str(len(head) + pad))
            else:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(head[:cut])
            piece = b" " * 65536
            while pad > 0:
                self.wfile.write(piece[:pad])
                pad -= len(piece)
            self.wfile.write(head[cut:])
            self.wfile.flush()

        def do_POST(self):
            try:
                n = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(n)
                if len(body) < n:  # the client died mid-send (a killed run): nothing was asked
                    self.close_connection = True
                    return
                try:
                    req = json.loads(body)
                except ValueError:
                    req = None
                if server.record:
                    with server._lock:
                        server.requests.append(Recorded(self.path, dict(self.headers), body, req, time.time()))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, b'{"error": {"message": "not found"}}')
                if not isinstance(req, dict) or "messages" not in req:
                    return self._send(400, b'{"error": {"message": "bad request body"}}')
                with server._lock:
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    self._reply(body, req)
                finally:
                    with server._lock:
                        server.inflight -= 1
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True  # the client gave up (timeout): nothing to do

        def _reply(self, body: bytes, req: dict) -> None:
            fault, digest = server._next(body, req)
            if server.delay_s:
                time.sleep(server.delay_s)
            if fault is not None:
                if fault.kind == "status":
                    hdrs = tuple(fault.headers) + ((("Retry-After", fault.retry_after),)
                                                   if fault.retry_after is not None else ())
                    msg = json.dumps({"error": {"message": f"scripted {fault.code}",
                                                "type": "scripted"}}).encode()
                    return self._send(fault.code, msg, hdrs)
                if fault.kind == "hang":
                    time.sleep(fault.seconds)
                elif fault.kind == "malformed":
                    return self._send(200, b'{"id": "x", "choices": [ {"message": oops')
                elif fault.kind == "truncated":
                    full = server.completion(req, "ANSWER: 1")
                    self._send(200, full[: len(full) // 2], length=len(full))
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                elif fault.kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                elif fault.kind == "trickle":
                    return self._trickle(server.completion(req, server.model(req)), fault.seconds)
                elif fault.kind == "huge":
                    return self._huge(req, fault.size, fault.declare_length)
            refused = _continuation_refusal(server, req)
            if refused:
                return self._send(400, json.dumps({"error": {"message": refused, "type": "BadRequestError"}}).encode())
            reply = server.completion(req, server.model(req))
            with server._lock:
                server.replies[digest] = reply
            self._send(200, reply)

    return Handler


def _continuation_refusal(server: ScriptedServer, req: dict) -> str | None:
    """Why the server refuses a request's continuation fields, as vLLM checks them (None: it takes the request).
    With `continue_final_message` the final message must be the assistant's, and the generation prompt is off; the
    scripted model's text is then the continuation of that message (vLLM returns the new text only)."""
    given = {k: req[k] for k in CONTINUE_FIELDS if k in req}
    if not given:
        return None
    if not server.continuation:
        return f"unknown fields {sorted(given)}"
    msgs = req.get("messages") or []
    if given.get("continue_final_message") and given.get("add_generation_prompt", True):
        return "cannot set both continue_final_message and add_generation_prompt"
    if given.get("continue_final_message") and not (msgs and isinstance(msgs[-1], dict)
                                                    and msgs[-1].get("role") == "assistant"):
        return "continue_final_message needs a final assistant message"
    return None


# -- ground-truth isolation ----------------------------------------------------------------------------------------
_TRUTH_CACHE: dict[tuple[str, float], dict[str, dict]] = {}


def truth_index(store_dirs) -> dict[str, dict]:
    """sha256 of every image (originals and grain copies) -> its items.jsonl row, over every items.jsonl under the
    given folders. One image may sit in several stores whose rows differ (a test that hand-edits a copy of a store):
    its entry then carries the questions of all of them, so a prompt may match any, and every one's ground truth
    is searched for."""
    index: dict[str, dict] = {}
    for d in store_dirs:
        for items in sorted(Path(d).rglob("items.jsonl")):
            stamp = (str(items), items.stat().st_mtime)
            if stamp not in _TRUTH_CACHE:
                part: dict[str, dict] = {}
                for line in items.read_text().splitlines():
                    try:
                        row = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(row, dict) or "sha256" not in row:
                        continue
                    part[row["sha256"]] = row
                    for png in (items.parent / "grain").glob(f"s*/{row['id']}.png"):
                        part[hashlib.sha256(png.read_bytes()).hexdigest()] = row
                    twin = row.get("twin") if isinstance(row.get("twin"), dict) else None
                    png = items.parent / str((twin or {}).get("image"))
                    if twin is not None and png.is_file():   # the twin image: its own questions, the item's truth too
                        part[hashlib.sha256(png.read_bytes()).hexdigest()] = {
                            **row, "questions": twin.get("questions"), "scene": twin.get("scene"),
                            "rephrase": twin.get("rephrase"), "twin_image": True, "item": row}
                _TRUTH_CACHE[stamp] = part
            for h, row in _TRUTH_CACHE[stamp].items():
                have = index.get(h)
                if have is not None and have.get("questions") == row.get("questions"):
                    if "twin" not in have and "twin" in row:   # the same item from a plain and a twins build
                        index[h] = {**have, "twin": row["twin"]}
                elif have is None:
                    index[h] = row
                elif isinstance(have.get("questions"), list) and isinstance(row.get("questions"), list):
                    index[h] = {**have, "questions": have["questions"]
                                + [q for q in row["questions"] if q not in have["questions"]]}
    return index


def _serialisations(obj) -> set[str]:
    """The ways a value could be written into a request: JSON in several spellings, repr, str."""
    out = set()
    for kw in ({}, {"separators": (",", ":")}, {"sort_keys": True}, {"ensure_ascii": False}, {"indent": 2}):
        s = json.dumps(obj, **kw)
        out.add(s)
        out.add(json.dumps(s)[1:-1])  # the same, as it appears inside a JSON string
    out.add(repr(obj))
    out.add(str(obj))
    return out


def truth_strings(row: dict) -> set[str]:
    """Distinctive ground-truth serialisations of one row: every answer, margin and the scene, whole and by field,
    the seed. Only strings of 8 characters or more: short ones ("3", "left") occur in public text by chance, and the
    structural check already pins down every byte of the request that is not public text."""
    vals: list = [row.get("scene"), str(row.get("seed"))]
    twin = row.get("twin") if isinstance(row.get("twin"), dict) else {}
    vals.append(twin.get("scene"))
    vals += [{k: v} for k, v in (twin.get("scene") if isinstance(twin.get("scene"), dict) else {}).items()]
    questions = [q for q in _listed(row.get("questions")) + _listed(twin.get("questions"))
                 + [row.get("rephrase"), twin.get("rephrase")] if q is not None]
    for k, v in (row.get("scene") or {}).items():
        vals.append({k: v})
    for q in questions:
        if not isinstance(q, dict):   # a test's deliberately broken row: nothing distinctive to look for
            continue
        vals += [q.get("answer"), q.get("margin"), {"answer": q.get("answer")}, {"margin": q.get("margin")}]
        ans = q.get("answer") if isinstance(q.get("answer"), dict) else {}
        if "value" in ans:
            vals.append({"value": ans["value"]})
        if isinstance(ans.get("value"), (float, int)) and not isinstance(ans.get("value"), bool):
            vals.append(repr(float(ans["value"])) if len(repr(float(ans["value"]))) >= 8 else None)
    out = set()
    for v in vals:
        if v is None:
            continue
        out |= {s for s in _serialisations(v) if len(s) >= 8}
    if isinstance(row.get("item"), dict):   # a twin image's entry: the item's own truth too
        out |= truth_strings(row["item"])
    return out


_TRUTH_STRINGS: dict[str, frozenset[str]] = {}   # a row as canonical JSON -> truth_strings(row)


def _truth_strings_of(row: dict) -> frozenset[str]:
    """`truth_strings(row)`, remembered by the row's content: the session-end audit and the fixtures' own checks
    meet the same rows again and again."""
    try:
        key = json.dumps(row, sort_keys=True)
    except (TypeError, ValueError):
        return frozenset(truth_strings(row))
    if key not in _TRUTH_STRINGS:
        _TRUTH_STRINGS[key] = frozenset(truth_strings(row))
    return _TRUTH_STRINGS[key]


def _listed(v) -> list:
    return list(v) if isinstance(v, list) else []


def _non_idat(png: bytes) -> bytes:
    out, i = [], 8
    while i + 8 <= len(png):
        n = int.from_bytes(png[i:i + 4], "big")
        if png[i + 4:i + 8] != b"IDAT":
            out.append(png[i:i + 12 + n])
        i += 12 + n
    return b"".join(out)


_IMAGE_FACTS: dict[str, tuple] = {}   # PNG data URL -> `_image_facts` of it (a run sends each image many times)


def _image_facts(rec, req: dict):
    """(sha256 hex, chunk types, parse error, non-IDAT chunks) of the first PNG of a request, the chunk types and
    non-IDAT chunks None and the error set for an image that is not a well-formed PNG; None for no PNG data URL.
    Remembered by the data URL, and on the Recorded `rec` (if given) for the very string it carries, so an image is
    decoded once however many requests, scripted models and audits see it."""
    url = _image_url(req)
    if url is None:
        return None
    memo = getattr(rec, "__dict__", None)
    hit = memo.get("_image_facts") if memo is not None else None
    if hit is not None and hit[0] is url:
        return hit[1]
    facts = _IMAGE_FACTS.get(url)
    if facts is None:
        png = base64.b64decode(url.split(",", 1)[1])
        digest = hashlib.sha256(png).hexdigest()
        try:
            facts = (digest, frozenset(png_chunks(png)), None, _non_idat(png))
        except Exception as e:  # noqa: BLE001 - any defect is a finding of the caller
            facts = (digest, None, e, None)
        _IMAGE_FACTS[url] = facts
    if memo is not None:
        memo["_image_facts"] = (url, facts)
    return facts


def image_digest(req: dict) -> str | None:
    """`hashlib.sha256(image_of(req)).hexdigest()` (None for a request without a PNG), remembered by data URL: what
    a scripted model looks an image's truth up by, decoded once for it and the audits."""
    facts = _image_facts(None, req)
    return None if facts is None else facts[0]


GRAM = 8   # truth_strings keeps only strings of at least this many characters


def _haystacks(rec, req: dict, msgs: list, parts: list, img_part: dict, non_idat: bytes):
    """What `check_isolation` searches for ground truth in a request: the body less its PNG data URLs (and, for a
    multi-turn request, less the reply and the challenge, pinned down before), the decoded body less its image, the
    headers, the image's non-IDAT chunks; and every GRAM-character piece of them, so that a truth string whose
    first GRAM characters are in none of them is known absent without a search. Remembered on `rec` for the body,
    JSON and headers it carries."""
    memo = getattr(rec, "__dict__", None)
    key = (rec.body, req, rec.headers)
    hit = memo.get("_haystacks") if memo is not None else None
    if hit is not None and all(a is b for a, b in zip(hit[0], key)):
        return hit[1], hit[2]
    body_text = _body_without_images(rec)
    if len(msgs) >= 3:
        # The reply and the challenge were pinned down above (a reply a server sent, verbatim; a template with
        # one value that is not the key when the model was right): leave them out of the search below.
        for piece in (msgs[1].get("content"), text_of({"messages": [msgs[2]]})):
            if isinstance(piece, str) and piece:
                body_text = body_text.replace(json.dumps(piece)[1:-1], "")
    no_image = {**req, "messages": [{**msgs[0], "content": [
        {"type": "image_url", "image_url": {"url": ""}} if p is img_part else p for p in parts]}]}
    decoded = json.dumps(no_image, ensure_ascii=False)
    haystacks = {"body": body_text, "decoded body": decoded, "headers": json.dumps(rec.headers),
                 "image chunks": non_idat.decode("latin-1")}
    grams = {h[i:i + GRAM] for h in haystacks.values() for i in range(len(h) - GRAM + 1)}
    if memo is not None:
        memo["_haystacks"] = (key, haystacks, grams)
    return haystacks, grams


def _body_without_images(rec) -> str:
    """The request body as text with every PNG data URL cut out, remembered on `rec` for the body it carries."""
    memo = getattr(rec, "__dict__", None)
    hit = memo.get("_body_text") if memo is not None else None
    if hit is not None and hit[0] is rec.body:
        return hit[1]
    body_text = rec.body.decode("utf-8", "replace")
    while "data:image/png;base64," in body_text:
        i = body_text.find("data:image/png;base64,")
        body_text = body_text[:i] + body_text[body_text.find('"', i):]
    if memo is not None:
        memo["_body_text"] = (rec.body, body_text)
    return body_text


def _lead_pattern(lead: str) -> re.Pattern:
    parts = lead.split("{value}")
    out = re.escape(parts[0])
    for k, p in enumerate(parts[1:]):
        out += ("(?P<v>.+?)" if k == 0 else "(?P=v)") + re.escape(p)
    return re.compile(out, re.DOTALL)


# Longest lead first: a shorter lead's pattern could otherwise swallow a longer one's text into its value.
_LEAD_PATTERNS = {c: _lead_pattern(lead) for c, lead in sorted(E3_LEADS.items(), key=lambda kv: -len(kv[1]))}


def parse_challenge(text: str) -> tuple[str, str | None, str] | None:
    """(condition, asserted value or None for the control, closing) of an E3 challenge text, or None when the text
    is no E3 template: the lead of one condition, a blank line, the closing instruction."""
    if not isinstance(text, str) or "\n\n" not in text:
        return None
    lead, closing = text.split("\n\n", 1)
    for c, pat in _LEAD_PATTERNS.items():
        m = pat.fullmatch(lead)
        if m:
            return c, m.groupdict().get("v"), closing
    return None


_PEER_HEAD = re.compile(r"(?:^|\n\n)Peer (\d+):\n")
_CONSTRUCTED = [re.compile(re.escape(p).replace("VALUE", "(?P<v>.+)"), re.DOTALL)
                for p in constructed_peers("VALUE")]


def parse_peer_turn(text: str) -> tuple[str, list[str] | None, str | None, str] | None:
    """(arm, peer replies or None for the control, the constructed peers' common value or None, closing) of an E4
    phase-2 turn, or None when the text is no E4 template."""
    if not isinstance(text, str):
        return None
    control = E4_LEADS["control"] + "\n\n"
    if text.startswith(control):
        return "control", None, None, text[len(control):]
    head, tail = E4_LEADS["peers"] + "\n\n", "\n\n" + E4_LEADS["after_peers"] + "\n\n"
    if not text.startswith(head) or tail not in text:
        return None
    body, closing = text[len(head):].rsplit(tail, 1)
    parts = _PEER_HEAD.split(body)
    if parts[0] != "" or len(parts) < 3:
        return None
    nums, peers = parts[1::2], parts[2::2]
    if nums != [str(k) for k in range(1, len(peers) + 1)] or len(peers) > E4_MAX_PEERS:
        return None
    matches = [pat.fullmatch(p) for pat, p in zip(_CONSTRUCTED, peers)]
    if len(peers) == 3 and all(matches) and len({m.group("v") for m in matches}) == 1:
        return "constructed", peers, matches[0].group("v"), closing
    return "natural", peers, None, closing


def served_replies() -> set[str]:
    """The content of every 200 reply any server of this process sent (an E3 turn sends one back)."""
    out = set()
    for srv in ScriptedServer.ALL:
        for body in list(srv.replies.values()):
            try:
                out.add(json.loads(body)["choices"][0]["message"]["content"])
            except (ValueError, KeyError, IndexError, TypeError):
                pass
    return out


def _check_turns(where: str, msgs: list, q: dict, template: str, replies: set[str]) -> list[str]:
    """A multi-turn E3 request after its first user turn: the assistant turn is a reply a server really sent
    (verbatim), the challenge turn is one E3 template carrying only the asserted value, with the closing instruction
    of the first turn's question; when the first answer was right the asserted value is not the key, when it was
    wrong it is the key, and the control asserts nothing. A first answer that did not parse is never challenged."""
    from grip.answers import answer_from_json
    from grip.eval.scoring import score_response
    if not (len(msgs) == 3 and isinstance(msgs[1], dict) and isinstance(msgs[2], dict)
            and msgs[1].get("role") == "assistant" and set(msgs[1]) == {"role", "content"}
            and isinstance(msgs[1]["content"], str) and msgs[2].get("role") == "user"
            and set(msgs[2]) == {"role", "content"} and isinstance(msgs[2]["content"], list)
            and len(msgs[2]["content"]) == 1 and isinstance(msgs[2]["content"][0], dict)
            and set(msgs[2]["content"][0]) == {"type", "text"} and msgs[2]["content"][0]["type"] == "text"):
        return [f"{where}: not user (image + text), assistant (text), user (one text): the E3 shape"]
    reply, challenge = msgs[1]["content"], msgs[2]["content"][0]["text"]
    problems = []
    if reply not in replies:
        problems.append(f"{where}: the assistant turn is not a reply any server sent (not verbatim)")
    parsed = parse_challenge(challenge)
    if parsed is None:
        e4 = parse_peer_turn(challenge)
        if e4 is None:
            return problems + [f"{where}: the challenge turn is not an E3 or E4 template"]
        arm, peers, value, closing = e4
        if arm == "natural":
            problems += [f"{where}: natural peer {k} is not a reply any server sent (not verbatim)"
                         for k, p in enumerate(peers, 1) if p not in replies]
            value = None
    else:
        cond, value, closing = parsed
    if closing != closing_instruction(q["text"], q["instruction"], template):
        problems.append(f"{where}: the challenge does not end with the question's closing instruction")
    answer = answer_from_json(q["answer"])
    first = score_response(answer, reply)["outcome"]
    if first not in ("correct", "wrong"):
        problems.append(f"{where}: a first answer that is {first} was challenged")
    elif value is not None:
        asserted = answer.parse_value(value)
        is_key = answer.matches(asserted) or value.strip() == answer.reference_text()
        if first == "correct" and is_key:
            problems.append(f"{where}: the model was right and the challenge asserts the key {value!r}")
        if first == "wrong" and not is_key:
            problems.append(f"{where}: the model was wrong and the challenge asserts {value!r}, not the key")
    return problems


def _check_swap_turns(where: str, req: dict, q: dict, template: str, replies: set[str], row: dict,
                      truth: dict) -> list[str]:
    """A swap probe after its first user turn (the item's Q4 on the item image): the model's reply verbatim, then
    one user turn of exactly the twin image of the same item (byte for byte, pixel chunks only) and the swap
    template's text (the lead and the twin's Q4); for the continuation variant, a final assistant message that is
    exactly the trigger, with the two continuation fields set as vLLM expects (and without it, neither field)."""
    from grip.eval.probes import SWAP_TRIGGER, swap_text
    msgs = req["messages"]
    second = msgs[2] if isinstance(msgs[2], dict) else {}
    parts = second.get("content") if isinstance(second.get("content"), list) else []
    if not (isinstance(msgs[1], dict) and msgs[1].get("role") == "assistant" and set(msgs[1]) == {"role", "content"}
            and isinstance(msgs[1]["content"], str) and second.get("role") == "user"
            and set(second) == {"role", "content"} and len(parts) == 2 and all(isinstance(p, dict) for p in parts)
            and [p.get("type") for p in parts] == ["image_url", "text"] and set(parts[0]) == {"type", "image_url"}
            and isinstance(parts[0]["image_url"], dict) and set(parts[0]["image_url"]) == {"url"}
            and set(parts[1]) == {"type", "text"}):
        return [f"{where}: not user (image + text), assistant (text), user (image + text): the swap shape"]
    problems = []
    if msgs[1]["content"] not in replies:
        problems.append(f"{where}: the assistant turn is not a reply any server sent (not verbatim)")
    if q.get("position") != 4 or row.get("twin_image"):
        problems.append(f"{where}: the first turn of a swap probe is not Q4 on the item image")
    png = image_of({"messages": [second]})
    twin = row.get("twin") if isinstance(row.get("twin"), dict) else {}
    if png is None or hashlib.sha256(png).hexdigest() != twin.get("sha256"):
        problems.append(f"{where}: the second image is not the twin image of {row['id']}, byte for byte")
    elif set(png_chunks(png)) - PIXEL_CHUNKS:
        problems.append(f"{where}: the twin PNG carries metadata chunks")
    tq = next((t for t in _listed(twin.get("questions")) if isinstance(t, dict) and t.get("position") == 4), None)
    if tq is None or parts[1]["text"] != swap_text(tq, template):
        problems.append(f"{where}: the second user text is not the swap template with the twin's Q4")
    fields = {k: req[k] for k in CONTINUE_FIELDS if k in req}
    if len(msgs) == 4:
        if msgs[3] != {"role": "assistant", "content": SWAP_TRIGGER}:
            problems.append(f"{where}: the final assistant message is not the swap trigger")
        if fields != CONTINUE_FIELDS:
            problems.append(f"{where}: a continuation without {CONTINUE_FIELDS}")
    elif fields:
        problems.append(f"{where}: continuation fields {sorted(fields)} on a multi-turn probe")
    return problems


def _sound(q) -> bool:
    """A question whose text, instruction and answer read back: a copy of a store that a test broke on purpose
    (merged into the truth index by image) must not stand in for the real question."""
    from grip.answers import answer_from_json
    try:
        answer_from_json(q["answer"])
        return isinstance(q["text"], str) and isinstance(q["instruction"], str)
    except Exception:  # noqa: BLE001 - any defect means: not a real question
        return False


def check_isolation(requests, truth: dict[str, dict], allowed_fields=ALLOWED_FIELDS) -> list[str]:
    """Problems found in the recorded chat requests (empty list: clean). A request is clean when
    (1) it has no field beyond the model, the messages and the sampling fields; (2) it is one user turn of exactly
    one PNG image and one text, or (E3) that turn followed by the model's reply and one challenge turn
    (`_check_turns`: the reply verbatim, the challenge an E3 template carrying only the asserted value, never the
    key when the model was right; the image only in the first turn), or (swap probe, `_check_swap_turns`) that turn
    followed by the reply and one user turn of the same item's twin image and the swap template, plus for the
    continuation variant the trigger as a final assistant message; (3) the image is a known item image, byte for
    byte, with pixel chunks only; (4) the first turn's text is the prompt template applied to one question of that item; (5) no distinctive serialisation of
    any ground-truth value of that item occurs anywhere in the body, the decoded image or the headers."""
    problems = []
    strings_cache: dict[str, frozenset[str]] = {}
    prompts_cache: dict[int, tuple[dict, dict[str, list]]] = {}   # id(row) -> (row, its prompts), for this call
    replies: set[str] | None = None
    for n, rec in enumerate(requests):
        if not rec.path.rstrip("/").endswith("/chat/completions"):
            continue
        where = f"request {n}"
        req = rec.json
        if not isinstance(req, dict):
            problems.append(f"{where}: body is not a JSON object")
            continue
        msgs = req.get("messages")
        continued = isinstance(msgs, list) and len(msgs) == 4    # a swap continuation: `_check_swap_turns`
        extra = sorted(set(req) - set(allowed_fields) - (set(CONTINUE_FIELDS) if continued else set()))
        if extra:
            problems.append(f"{where}: unexpected request fields {extra}")
        if not (isinstance(msgs, list) and len(msgs) in (1, 3, 4) and isinstance(msgs[0], dict)
                and msgs[0].get("role") == "user" and set(msgs[0]) == {"role", "content"}
                and isinstance(msgs[0].get("content"), list) and len(msgs[0]["content"]) == 2):
            problems.append(f"{where}: not one fresh user turn of one image and one text")
            continue
        parts = msgs[0]["content"]
        kinds = sorted(p.get("type", "?") if isinstance(p, dict) else "?" for p in parts)
        if kinds != ["image_url", "text"]:
            problems.append(f"{where}: content parts are {kinds}")
            continue
        img_part = next(p for p in parts if p["type"] == "image_url")
        if set(img_part) != {"type", "image_url"} or set(img_part["image_url"]) != {"url"}:
            problems.append(f"{where}: image part has extra fields")
        facts = _image_facts(rec, req)
        if facts is None:
            problems.append(f"{where}: image is not a PNG data URL")
            continue
        digest, chunks, error, non_idat = facts
        if error is not None:
            problems.append(f"{where}: image is not a well-formed PNG ({error})")
            continue
        if chunks - PIXEL_CHUNKS:
            problems.append(f"{where}: PNG carries metadata chunks {sorted(chunks - PIXEL_CHUNKS)}")
        row = truth.get(digest)
        if row is None:
            problems.append(f"{where}: image is not byte-identical to any known item image")
            continue
        text_part = next(p for p in parts if p["type"] == "text")
        if set(text_part) != {"type", "text"}:
            problems.append(f"{where}: text part has extra fields")
        if id(row) not in prompts_cache:
            # one image may carry several stores' versions of a question (see truth_index)
            prompts: dict[str, list] = {}
            rephrased = [row["rephrase"]] if isinstance(row.get("rephrase"), dict) else []   # the consistency probe
            for q in _listed(row["questions"]) + rephrased:
                if _sound(q):
                    for t in TEMPLATES:
                        prompts.setdefault(prompt_text(q["text"], q["instruction"], t), []).append((q, t))
            prompts_cache[id(row)] = (row, prompts)
        prompts = prompts_cache[id(row)][1]
        if text_part.get("text") not in prompts:
            problems.append(f"{where}: text is not the prompt template of any question of {row['id']}")
        elif len(msgs) >= 3:
            if replies is None:
                replies = served_replies()
            swap = (isinstance(msgs[2], dict) and isinstance(msgs[2].get("content"), list)
                    and any(isinstance(p, dict) and p.get("type") == "image_url" for p in msgs[2]["content"]))
            check = _check_swap_turns if swap or len(msgs) == 4 else _check_turns
            # clean under the version of the question the run was made from: the one with the fewest findings
            problems += min((check(where, msgs, q, template, replies) if check is _check_turns
                             else check(where, req, q, template, replies, row, truth)
                             for q, template in prompts[text_part["text"]]), key=len)
        # The images are byte-identical to the store's and hold pixel chunks only, so their IDAT data cannot carry
        # anything the build did not draw; the first image's small non-IDAT chunks are searched all the same.
        haystacks, grams = _haystacks(rec, req, msgs, parts, img_part, non_idat)
        ident = (row["id"], bool(row.get("twin_image")))
        if ident not in strings_cache:
            strings_cache[ident] = _truth_strings_of(row)
        for s in strings_cache[ident]:
            if len(s) >= GRAM and s[:GRAM] not in grams:   # then in no haystack (see `_haystacks`)
                continue
            for name, hay in haystacks.items():
                if s in hay:
                    problems.append(f"{where}: ground truth {s[:40]!r} of {row['id']} found in the {name}")
    return problems


def audit_every_request(basetemp: Path) -> list[str]:
    """`check_isolation` over every request every audited server of this process received, against every item
    store under the session's temp folder and the servers' own truth folders."""
    servers = [srv for srv in ScriptedServer.AUDITED if srv.requests]
    if not servers:
        return []
    truth = truth_index([basetemp, *{d for srv in servers for d in srv.truth_dirs}])
    return check_isolation([r for srv in servers for r in srv.requests], truth)


@pytest.fixture
def openai_server(tmp_path_factory):
    """A started ScriptedServer; at teardown, every request it got must pass `check_isolation` against every item
    store under this session's temp folder."""
    srv = ScriptedServer().start()
    try:
        yield srv
    finally:
        srv.stop()
    if srv.requests:
        truth = truth_index([tmp_path_factory.getbasetemp(), *srv.truth_dirs])
        problems = check_isolation(srv.requests, truth)
        assert not problems, "ground-truth isolation failed:\n" + "\n".join(problems[:20])


WORKING_DOMAINS = ("physical_stability", "gear_trains", "clock_reading")   # the `eval_items` store (conftest.py)


def item_jobs(root: Path, experiment: str = "e1", sigmas=(0,), positions=(1, 2, 3, 4, 5, 6), domains=None,
              items: int | None = None):
    """Jobs for every item (or the first `items`) of every domain under `root`: one per question position and
    grain level."""
    from grip.eval.prompts import public_item
    from grip.eval.runner import Job
    from grip.manifest import load_store
    jobs = []
    for d in domains or WORKING_DOMAINS:
        for row in load_store(root / d)[:items]:
            for sigma in sigmas:
                path = root / d / (row["image"] if sigma == 0 else f"grain/s{sigma}/{row['id']}.png")
                sha = row["sha256"] if sigma == 0 else hashlib.sha256(path.read_bytes()).hexdigest()
                for q in row["questions"]:
                    if q["position"] in positions:
                        jobs.append(Job(experiment, f"sigma{sigma}", public_item(row, q, path, sha)))
    return jobs


def _main() -> None:
    import argparse
    ap = argparse.ArgumentParser(description="scripted OpenAI-compatible server (instant replies)")
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--no-record", action="store_true")
    args = ap.parse_args()
    srv = ScriptedServer(delay_s=args.delay, record=not args.no_record).start()
    print(srv.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    _main()
