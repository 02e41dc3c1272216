"""The one shared model runner: jobs -> chat-completion requests -> the response store.

`AsyncOpenAI` against any OpenAI-compatible base URL, with the SDK's retries off (`max_retries=0`) and one retry
policy of ours (`RetryPolicy`, a pure function of attempt, error class, Retry-After and elapsed time). Bounded
concurrency (a fixed pool of worker tasks). PNG bytes go out unchanged as data URLs, after checking they are the
bytes the item store hashed and carry no metadata chunk. Every sampling field is sent explicitly and recorded.
A failure is a typed record (status "failed", error class, HTTP status, attempts, elapsed), never an answer.

A job may carry earlier turns (`Job.turns`, multi-turn protocols such as E3): the image goes once, in the first user
turn; each earlier reply of the model goes back verbatim as an assistant message, followed by the next user text.
Its key covers the whole conversation, each earlier reply by its stored response key (`keyed_request`), so a
resumed run never mixes conversations.

Error classes: RateLimited (429), RequestTimeout (408), ServerError (5xx), Timeout (no complete reply within the
attempt's deadline), ConnectionError (refused, reset, dropped, body cut short by the peer), MalformedResponse (a 2xx
whose body is not a chat completion: not JSON, truncated JSON, no choices), ResponseTooLarge (a body over
`Endpoint.max_response_bytes`: reading stops at the cap, nothing of it is kept), ClientError (any other 4xx, and a
3xx: redirects are never followed, so a request never goes to another origin), BadInput (the image is missing,
changed since the build or carries metadata; nothing is sent) and InternalError (anything else that went wrong
while handling one request or its reply: a bug or an unstorable record; the raw body is kept when there is one).
All but ResponseTooLarge, ClientError, BadInput and InternalError are retried. MalformedResponse is retried because
on a 2xx a body that does not parse is overwhelmingly a transport or gateway fault (a proxy cutting the stream, an
overloaded server), not the model's answer; the attempt cap bounds the cost when a server is broken for good, and
the last body is kept verbatim in the failure record.

Deadlines are real: each attempt, from connecting to the last byte of the body, must end within `timeout_s` and
within what is left of the request's `max_total_s` (httpx's own timeouts apply per socket operation, so a server
trickling a byte at a time would never trip them).

No single request can end a run: whatever goes wrong while handling one request becomes that key's typed failure.
Only a store that cannot be written stops the run (with a one-line error). A server that cannot be reached at all
stops the run early: until something in the run has reached the server, a request whose attempts all failed to
connect (refused, or timed out while connecting) is tried `UNREACHABLE_ATTEMPTS` times, not `max_attempts`, and once
the first `stop_after_unreachable` requests to finish all failed that way the run stops taking new requests (keys
waiting for a retry give up at once): the failures are stored, the rest are not sent (`RunSummary.not_sent`,
`RunSummary.stopped`), and a rerun sends them.

`Endpoint(model="random", base_url=None)` is a built-in offline model: it answers a random value of the type the
instruction asks for, seeded by the request key, and never sees anything but the PublicItem.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import json
import math
import os
import random
import re
import sys
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from grip import GripError
from grip.eval.prompts import (
    BadImage,
    PublicItem,
    build_messages,
    check_png,
)
from grip.eval.store import ResponseStore, request_key

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "ERROR_CLASSES",
    "LIMITS",
    "RANDOM_MODEL",
    "Endpoint",
    "Job",
    "RetryPolicy",
    "Turn",
    "RunSummary",
    "Sampling",
    "check_base_url",
    "check_limit",
    "job_key",
    "job_messages",
    "keyed_request",
    "parse_retry_after",
    "random_reply",
    "run_jobs",
    "run_jobs_async",
]

RANDOM_MODEL = "random"
ERROR_CLASSES = ("RateLimited", "RequestTimeout", "ServerError", "Timeout", "ConnectionError", "MalformedResponse",
                 "ResponseTooLarge", "ClientError", "BadInput", "InternalError")
RETRYABLE = frozenset({"RateLimited", "RequestTimeout", "ServerError", "Timeout", "ConnectionError",
                       "MalformedResponse"})
_RESERVED = frozenset({"model", "messages", "stream", "n"})
STOP_AFTER_UNREACHABLE = 4   # default: stop a run whose first 4 finished requests never connected
UNREACHABLE_ATTEMPTS = 2     # attempts per request while nothing in the run has reached the server
DEFAULT_MAX_RESPONSE_BYTES = 4 << 20   # a chat completion is a few kB; 4 MiB leaves room for long reasoning

# Sane bounds for the settings a user gives (CLI and API alike): values past them exhaust memory, file handles or
# patience long before they could be useful.
LIMITS = {
    "timeout_s": (0.0, 900.0),                  # exclusive low, inclusive high; past 900 s the total cap rules
    "max_total_s": (0.0, 24 * 3600.0),
    "concurrency": (1, 512),                    # each worker may hold a connection (a file handle)
    "max_tokens": (1, 1 << 20),
    "max_response_bytes": (1024, 256 << 20),    # SQLite refuses rows near 1 GB; a body is held in memory once
    "max_attempts": (1, 100),
    "seed": (-(1 << 63), (1 << 63) - 1),        # what a provider's 64-bit seed field can hold
}


def check_limit(name: str, value, option: str):
    """`value` when it lies within LIMITS[name] (whole numbers, inclusive; seconds: finite, above the low bound, at
    most the high one), a one-line GripError naming `option` otherwise."""
    lo, hi = LIMITS[name]
    if isinstance(lo, float):
        if (not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value)
                or not lo < value <= hi):
            raise GripError(f"{option} must be a number of seconds above {lo:g} and at most {hi:g}, got {value!r}")
        return float(value)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise GripError(f"{option} must be a whole number from {lo} to {hi}, got {value!r}")
    return value


@dataclass
class Sampling:
    temperature: float = 0.0
    max_tokens: int = 1024
    top_p: float = 1.0
    seed: int | None = 0          # None: not sent (for providers that reject it)
    extra: dict = field(default_factory=dict)   # provider fields passed through verbatim (top_k, min_p, ...)

    def __post_init__(self):
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
                and self.temperature >= 0):
            raise GripError(f"--temperature must be a number >= 0, got {self.temperature!r}")
        check_limit("max_tokens", self.max_tokens, "--max-tokens")
        if not (isinstance(self.top_p, (int, float)) and 0 < self.top_p <= 1):
            raise GripError(f"--top-p must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None:
            check_limit("seed", self.seed, "--seed")
        if not isinstance(self.extra, dict):
            raise GripError("extra sampling fields must be a mapping")
        clash = sorted(_RESERVED & set(self.extra))
        if clash:
            raise GripError(f"extra sampling fields may not set {clash}")

    def fields(self) -> dict:
        """Every field sent with each request, exactly as sent and recorded."""
        out = {"temperature": float(self.temperature), "max_tokens": int(self.max_tokens),
               "top_p": float(self.top_p)}
        if self.seed is not None:
            out["seed"] = int(self.seed)
        overlap = set(out) & set(self.extra)
        if overlap:
            raise GripError(f"extra sampling fields repeat {sorted(overlap)}; use their own options "
                            f"({', '.join('--' + k.replace('_', '-') for k in sorted(overlap))})")
        out.update(self.extra)
        return out


@dataclass
class Endpoint:
    model: str
    base_url: str | None
    api_key_env: str | None = None     # name of the environment variable holding the key; None sends "EMPTY"
    timeout_s: float = 120.0           # per attempt, connecting to the body's last byte
    max_attempts: int = 6
    max_total_s: float = 900.0         # per request, all attempts and waits together
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES   # a longer body is the key's ResponseTooLarge failure

    def __post_init__(self):
        check_limit("timeout_s", self.timeout_s, "--timeout")
        check_limit("max_total_s", self.max_total_s, "the total time cap per request")
        check_limit("max_attempts", self.max_attempts, "the attempt cap per request")
        check_limit("max_response_bytes", self.max_response_bytes, "--max-response-bytes")

    @property
    def offline(self) -> bool:
        return self.model == RANDOM_MODEL and self.base_url is None

    def policy(self) -> RetryPolicy:
        return RetryPolicy(max_attempts=self.max_attempts, max_total_s=self.max_total_s,
                           base_s=self.backoff_base_s, max_delay_s=self.backoff_max_s)


@dataclass(frozen=True)
class Turn:
    """One earlier exchange of a multi-turn job: the model's stored reply to the conversation so far (`reply`, the
    exact stored content, sent back verbatim as the assistant message; `reply_key`, the response key it is stored
    under) and the user text that follows it (`user`, made by template `template`).

    `image` (path, sha256), when set, goes in that user turn before its text, bytes unchanged and checked like the
    first turn's (the swap probe shows a second picture). `prefill`, on the last turn only, is the start of the
    model's next message: it is sent as a final assistant message with `continue_final_message: true,
    add_generation_prompt: false` (vLLM's chat-completion extras), and the reply continues it."""
    reply_key: str
    reply: str
    user: str
    template: str
    image: tuple | None = None
    prefill: str | None = None


@dataclass(frozen=True)
class Job:
    """One request: the public item (its image goes in the first user turn only) and, for a multi-turn job, the
    earlier turns of the conversation. A text job (`text` set: the semantic validator's judge calls) sends that one
    text turn and no image; `item` then names the question the text is about."""
    experiment: str
    condition: str
    item: PublicItem
    turns: tuple[Turn, ...] = ()
    text: str | None = None
    text_template: str | None = None


def _text_messages(text: str) -> list[dict]:
    return [{"role": "user", "content": [{"type": "text", "text": text}]}]


def job_request(job: Job) -> dict:
    """The request of a job as keyed and recorded (`keyed_request`, or a text job's one turn)."""
    if job.text is not None:
        return {"template": job.text_template, "messages": _text_messages(job.text)}
    return keyed_request(job.item, job.turns)


@dataclass
class RunSummary:
    done: int = 0          # stored ok in this run
    failed: int = 0        # stored as a typed failure in this run
    skipped: int = 0       # already complete in the store (or a duplicate job)
    retried: int = 0       # retry attempts made (beyond each request's first)
    requests: int = 0      # HTTP attempts made
    elapsed_s: float = 0.0
    failures: dict = field(default_factory=dict)   # error class -> count
    not_sent: int = 0      # left unsent because the run stopped early (see `stopped`); a rerun sends them
    stopped: str | None = None   # why the run stopped early, or None

    @property
    def total(self) -> int:
        return self.done + self.failed + self.skipped

    def merged(self, other: "RunSummary") -> "RunSummary":
        """Two runs' summaries as one (E4 runs its phases one after the other)."""
        failures = dict(self.failures)
        for k, v in other.failures.items():
            failures[k] = failures.get(k, 0) + v
        return RunSummary(self.done + other.done, self.failed + other.failed, self.skipped + other.skipped,
                          self.retried + other.retried, self.requests + other.requests,
                          self.elapsed_s + other.elapsed_s, failures, self.not_sent + other.not_sent,
                          self.stopped or other.stopped)


# -- retry policy ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with equal jitter, Retry-After honoured, attempts and total time capped.

    Wait before attempt k+1 (k = attempts made so far, u = a uniform draw in [0, 1)):
      with Retry-After r:  r * (1 + 0.1 u)            never earlier than the server asked
      without:             b * (0.5 + 0.5 u),  b = min(max_delay_s, base_s * factor**(k-1))
    No retry when the class is not retryable, k >= max_attempts, the wait would end past max_total_s, or the
    server asks for more than retry_after_max_s."""
    max_attempts: int = 6
    max_total_s: float = 900.0
    base_s: float = 1.0
    factor: float = 2.0
    max_delay_s: float = 60.0
    retry_after_max_s: float = 600.0

    def __post_init__(self):
        if self.max_attempts < 1:
            raise GripError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.max_total_s <= 0 or self.base_s < 0 or self.factor < 1 or self.max_delay_s < 0:
            raise GripError("retry policy: max_total_s > 0, base_s >= 0, factor >= 1 and max_delay_s >= 0 needed")

    @staticmethod
    def retryable(error_class: str) -> bool:
        return error_class in RETRYABLE

    def delay(self, attempt: int, retry_after_s: float | None, u: float) -> float:
        if retry_after_s is not None:
            r = max(0.0, float(retry_after_s))
            return r * (1.0 + 0.1 * u)
        b = min(self.max_delay_s, self.base_s * self.factor ** max(0, attempt - 1))
        return b * (0.5 + 0.5 * u)

    def next_wait(self, attempt: int, error_class: str, retry_after_s: float | None, elapsed_s: float,
                  u: float) -> float | None:
        """Seconds to wait before the next attempt, or None to give up (the failure is final)."""
        if not self.retryable(error_class) or attempt >= self.max_attempts:
            return None
        if retry_after_s is not None and retry_after_s > self.retry_after_max_s:
            return None
        d = self.delay(attempt, retry_after_s, u)
        if elapsed_s + d > self.max_total_s:
            return None
        return d


def parse_retry_after(headers) -> float | None:
    """Seconds asked for by `retry-after-ms` or `Retry-After` (seconds or an HTTP date); None when absent or bad."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            v = float(ms) / 1000.0
            if math.isfinite(v) and v >= 0:
                return v
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        v = float(ra)
        return v if math.isfinite(v) and v >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def check_base_url(url) -> str:
    """`url` when it is an http:// or https:// URL with a host (and a valid port, if any); a GripError otherwise,
    before anything is sent (a bad URL would otherwise fail every request after all its retries)."""
    hint = "an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000/v1"
    if not isinstance(url, str) or not url or any(c.isspace() or not c.isprintable() for c in url):
        raise GripError(f"--base-url must be {hint}, got {url!r}")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in 0-65535
    except ValueError as e:
        raise GripError(f"--base-url {url!r} is not a valid URL ({e}); it must be {hint}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise GripError(f"--base-url must be {hint}, got {url!r}")
    if parts.query or parts.fragment or "?" in url or "#" in url:   # the client appends /chat/completions
        raise GripError(f"--base-url must be {hint}, with no ?query or #fragment, got {url!r}")
    return url


def _connect_failure(exc: BaseException | None) -> bool:
    """True when an attempt failed before any connection was made (refused, unroutable, connect timeout)."""
    import httpx2
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, (httpx2.ConnectError, httpx2.ConnectTimeout, ConnectionRefusedError)):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def classify_status(status: int) -> str:
    if status == 429:
        return "RateLimited"
    if status == 408:
        return "RequestTimeout"
    if status >= 500:
        return "ServerError"
    return "ClientError"


# -- requests and keys ----------------------------------------------------------------------------------------------
CONTINUE_FIELDS = {"continue_final_message": True, "add_generation_prompt": False}


def _user_turn(t: Turn, url: str | None) -> dict:
    image = [] if url is None else [{"type": "image_url", "image_url": {"url": url}}]
    return {"role": "user", "content": image + [{"type": "text", "text": t.user}]}


def job_messages(item: PublicItem, png: bytes, turns: tuple[Turn, ...] = (), turn_pngs: tuple = ()) -> list[dict]:
    """The messages sent: the first user turn (the image and the question), then per earlier turn the model's
    stored reply verbatim as the assistant message and the next user turn (its text; first its image, from
    `turn_pngs`, when the turn has one), and a last turn's prefill as the final assistant message."""
    from grip.eval.prompts import png_data_url
    messages = build_messages(item, png)
    pngs = iter(turn_pngs)
    for t in turns:
        messages.append({"role": "assistant", "content": t.reply})
        messages.append(_user_turn(t, None if t.image is None else png_data_url(next(pngs))))
    if turns and turns[-1].prefill is not None:
        messages.append({"role": "assistant", "content": turns[-1].prefill})
    return messages


def job_fields(job: Job) -> dict:
    """Request fields a job adds to the sampling fields: the continuation extras when its last turn is prefilled."""
    return dict(CONTINUE_FIELDS) if job.turns and job.turns[-1].prefill is not None else {}


def keyed_request(item: PublicItem, turns: tuple[Turn, ...] = ()) -> dict:
    """The request as keyed and recorded: the messages with the image's sha256 in place of its bytes, and each
    earlier reply by its stored response key (an ok row is never replaced, so the key names the exact content)."""
    messages = build_messages(item, b"")
    for msg in messages:
        for part in msg["content"]:
            if part.get("type") == "image_url":
                part["image_url"] = {"url": f"sha256:{item.image_sha256}"}
    out: dict = {"template": item.template, "messages": messages}
    if turns:
        for t in turns:
            messages.append({"role": "assistant", "response_key": t.reply_key})
            messages.append(_user_turn(t, None if t.image is None else f"sha256:{t.image[1]}"))
        out["turn_templates"] = [t.template for t in turns]
        if turns[-1].prefill is not None:
            messages.append({"role": "assistant", "content": turns[-1].prefill})
            out.update(CONTINUE_FIELDS)
    return out


def job_key(job: Job, endpoint: Endpoint, sampling: Sampling) -> str:
    return request_key(endpoint.model, endpoint.base_url, job_request(job), sampling.fields(),
                       job.experiment, job.condition)


def extract_content(body: bytes) -> tuple[str | None, str | None, dict]:
    """(content, response model, usage) of a chat-completion body. Raises ValueError when it is not one."""
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"body is not JSON ({e.__class__.__name__}: {str(e)[:80]})") from None
    if not isinstance(doc, dict):
        raise ValueError("body is not a JSON object")
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        err = doc.get("error")
        raise ValueError("no choices in body" + (f" (error: {str(err)[:120]})" if err else ""))
    msg = choices[0].get("message")
    if not isinstance(msg, dict):
        raise ValueError("choices[0] has no message")
    content = msg.get("content")
    if isinstance(content, list):  # some providers return content parts
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        content = "".join(texts) if texts else None
    elif content is not None and not isinstance(content, str):
        raise ValueError("message content is neither text nor null")
    model = doc.get("model")
    usage = doc.get("usage")
    if isinstance(usage, dict):
        try:  # e.g. NaN from a server's token counter: the store keeps plain JSON only; the raw body has it all
            json.dumps(usage, allow_nan=False)
        except (TypeError, ValueError):
            usage = {}
    return content, (model if isinstance(model, str) else None), (usage if isinstance(usage, dict) else {})


# -- the built-in random model --------------------------------------------------------------------------------------
_OPEN_PREFIX = re.compile(r"^Explain your reasoning.*?`ANSWER: \.\.\.`\.\s*", re.DOTALL)
_END = re.compile(r"\s*End with a line `ANSWER: \.\.\.`\.\s*$")


def _random_value(core: str, rng: random.Random) -> str:
    core = core.strip()
    if core.startswith("Answer with a whole number"):
        return str(rng.randint(0, 12))
    m = re.match(r"Answer with a number in (.+?), rounded to (?:a whole number|(\d+) decimal place)", core)
    if m:
        decimals = int(m.group(2) or 0)
        high = 360.0 if "deg" in m.group(1) else 100.0
        return f"{rng.uniform(0, high):.{decimals}f}"
    m = re.match(r"Answer with one of: (.+)\.$", core)
    if m:
        return rng.choice([o.strip() for o in m.group(1).split(", ") if o.strip()])
    m = re.match(r"Answer with a comma-separated list in .+?, or '(.+?)' if there are none\.", core)
    if m:
        # The labels a list draws from are drawn in the picture, never named in the public item, and a guessed
        # label outside them does not parse: the one list the instruction itself names is the empty one.
        return m.group(1)
    m = re.match(r"Answer in the form `(.+?)`\.\s*(.*)$", core, re.DOTALL)
    if m:
        names = [p.split("=")[0].strip() for p in m.group(1).split(";")]
        subs = dict(re.findall(r"For (\w+): (.+?)(?=\s*For \w+: |$)", m.group(2), re.DOTALL))
        return "; ".join(f"{n}={_random_value(subs.get(n, '')[:1].upper() + subs.get(n, '')[1:], rng)}"
                         for n in names)
    return "unknown"


def random_reply(item: PublicItem, key: str) -> str:
    """A random answer of the type the instruction asks for; a function of the public item and the key only. Every
    answer parses as that type: a list answer is the empty word the instruction names (the labels a list draws from
    are in the picture only)."""
    rng = random.Random(key)  # str seeds go through sha512: stable across processes, unlike hash()
    core = _END.sub("", _OPEN_PREFIX.sub("", item.instruction.strip()))
    lines = ["A random guess."]
    if item.instruction.startswith("Explain your reasoning"):
        lines += ["JUSTIFICATION: none, this is a random baseline.", f"CONFIDENCE: {rng.randint(0, 100)}"]
    lines.append(f"ANSWER: {_random_value(core, rng)}")
    return "\n".join(lines)


def random_verdict(key: str) -> str:
    """The built-in random model as a judge: YES or NO, a function of the key only."""
    return "VERDICT: " + random.Random(key).choice(["YES", "NO"])


def _random_body(content: str, key: str) -> bytes:
    return json.dumps({"id": f"random-{key[:12]}", "object": "chat.completion", "created": 0,
                       "model": RANDOM_MODEL,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}).encode()


# -- progress -------------------------------------------------------------------------------------------------------
class _Progress:
    def __init__(self, total: int, label: str, enabled: bool):
        self.total, self.label = total, label
        self.enabled = enabled and sys.stderr.isatty()
        self.done = self.failed = self.retrying = 0
        self._last = 0.0

    def show(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.2:
            return
        self._last = now
        n = self.done + self.failed
        sys.stderr.write(f"\r{self.label}: {n}/{self.total}  done {self.done}  failed {self.failed}  "
                         f"retrying {self.retrying}   ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self.show(force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()


# -- the run --------------------------------------------------------------------------------------------------------
def _api_key(endpoint: Endpoint) -> str:
    if endpoint.api_key_env is None:
        return "EMPTY"  # local servers (vLLM) accept any key; never fall back to a key meant for another host
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise GripError(f"environment variable {endpoint.api_key_env} (--api-key-env) is not set or empty")
    return key


class ResponseTooLarge(Exception):
    """A response body longer than the cap: reading stopped there and the connection was closed."""

    def __init__(self, cap: int, declared: int | None = None, status: int | None = None):
        self.cap, self.declared, self.status = cap, declared, status
        said = f" (it declared {declared} bytes)" if declared is not None else ""
        super().__init__(f"response body over {cap} bytes{said}; not read further (--max-response-bytes)")


# Per attempt: whether a connection to the server was made. Set by the client's trace hook, read when the attempt's
# own deadline ends it (a deadline gives no hint of whether it struck while connecting).
_ATTEMPT: contextvars.ContextVar[dict | None] = contextvars.ContextVar("grip_eval_attempt", default=None)


async def _trace(name: str, info: dict) -> None:
    state = _ATTEMPT.get()
    if state is not None and (name == "connection.connect_tcp.complete" or name.startswith(("http11.", "http2."))):
        state["connected"] = True   # a new connection, or a pooled one carrying the request


def _capped_stream(inner, cap: int, status: int):
    """`inner` (an httpx async byte stream) that raises ResponseTooLarge, and closes, once past `cap` bytes."""
    import httpx2

    class Capped(httpx2.AsyncByteStream):
        async def __aiter__(self):
            n = 0
            async for chunk in inner:
                n += len(chunk)
                if n > cap:
                    await inner.aclose()
                    raise ResponseTooLarge(cap, status=status)
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    return Capped()


def _client(endpoint: Endpoint, concurrency: int):
    """The SDK client: no retries of its own, no redirects followed (a 3xx is a status error, never re-sent to
    another origin), every body capped on the wire (error bodies too, which the SDK reads itself), connection
    tracing for the attempt deadline, and no compression (so a decoded body is no larger than the wire's)."""
    import httpx2
    import openai
    cap = endpoint.max_response_bytes

    async def on_request(request) -> None:
        request.extensions["trace"] = _trace

    async def on_response(response) -> None:
        declared = (response.headers.get("content-length") or "").strip()
        if declared.isascii() and declared.isdigit() and int(declared) > cap:
            await response.aclose()
            raise ResponseTooLarge(cap, int(declared), response.status_code)
        response.stream = _capped_stream(response.stream, cap, response.status_code)

    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    http = openai.DefaultAsyncHttpx2Client(limits=limits, timeout=endpoint.timeout_s, follow_redirects=False,
                                           headers={"Accept-Encoding": "identity"},
                                           event_hooks={"request": [on_request], "response": [on_response]})
    return openai.AsyncOpenAI(api_key=_api_key(endpoint), base_url=endpoint.base_url, max_retries=0,
                              timeout=endpoint.timeout_s, http_client=http)


async def _read_capped(response, cap: int) -> bytes:
    """The decoded body of a streamed response, refusing past `cap` bytes; the response is closed after."""
    parts, n = [], 0
    try:
        async for chunk in response.aiter_bytes():
            n += len(chunk)
            if n > cap:
                raise ResponseTooLarge(cap, status=response.status_code)
            parts.append(chunk)
    finally:
        await response.aclose()
    return b"".join(parts)


def run_jobs(jobs: list[Job], endpoint: Endpoint, sampling: Sampling, store: ResponseStore, concurrency: int = 16,
             progress: bool = True, *, sleep: Callable[[float], Awaitable[None]] | None = None,
             policy: RetryPolicy | None = None,
             stop_after_unreachable: int | None = STOP_AFTER_UNREACHABLE) -> RunSummary:
    """Run every job not yet complete in `store`; failed keys are tried again. Blocking wrapper of
    `run_jobs_async`. `sleep` replaces asyncio.sleep for the retry waits (tests); `policy` overrides the
    endpoint's retry caps; `stop_after_unreachable` (None: never) stops a run whose first that many finished
    requests never connected to the server (and, until the server has been reached, tries a request that cannot
    connect `UNREACHABLE_ATTEMPTS` times only). Holds the store's writer lock (`ResponseStore.lock`) throughout:
    a store another run is writing is a StoreError before anything is sent."""
    return asyncio.run(run_jobs_async(jobs, endpoint, sampling, store, concurrency, progress, sleep=sleep,
                                      policy=policy, stop_after_unreachable=stop_after_unreachable))


async def run_jobs_async(jobs: list[Job], endpoint: Endpoint, sampling: Sampling, store: ResponseStore,
                         concurrency: int = 16, progress: bool = True, *,
                         sleep: Callable[[float], Awaitable[None]] | None = None,
                         policy: RetryPolicy | None = None,
                         stop_after_unreachable: int | None = STOP_AFTER_UNREACHABLE) -> RunSummary:
    check_limit("concurrency", concurrency, "--concurrency")
    if endpoint.base_url is None and not endpoint.offline:
        raise GripError(f"--base-url is required for model {endpoint.model!r} (only the built-in "
                        f"'{RANDOM_MODEL}' model runs without a server)")
    if endpoint.base_url is not None:
        check_base_url(endpoint.base_url)
    # One run per store at a time: a second run would read the same keys as not done and send them all again.
    lock = getattr(store, "lock", None)
    with lock() if lock is not None else contextlib.nullcontext():
        return await _run_locked(jobs, endpoint, sampling, store, concurrency, progress, sleep, policy,
                                 stop_after_unreachable)


async def _run_locked(jobs: list[Job], endpoint: Endpoint, sampling: Sampling, store: ResponseStore,
                      concurrency: int, progress: bool, sleep: Callable[[float], Awaitable[None]] | None,
                      policy: RetryPolicy | None, stop_after_unreachable: int | None) -> RunSummary:
    policy = policy or endpoint.policy()
    sleep = sleep or asyncio.sleep
    sampling_fields = sampling.fields()
    t_start = time.monotonic()
    summary = RunSummary()

    done_keys = store.completed_keys()
    todo: list[tuple[str, Job]] = []
    seen: set[str] = set()
    for job in jobs:
        key = job_key(job, endpoint, sampling)
        if key in done_keys or key in seen:
            summary.skipped += 1
            continue
        seen.add(key)
        todo.append((key, job))

    bar = _Progress(len(todo), f"{endpoint.model} {jobs[0].experiment if jobs else ''}".strip(), progress)
    client = None if endpoint.offline or not todo else _client(endpoint, concurrency)
    queue: asyncio.Queue = asyncio.Queue()
    for kj in todo:
        queue.put_nowait(kj)

    never_connected: set[str] = set()   # keys whose every attempt failed before connecting
    state = {"reached": False, "unreachable": 0}
    stopping = asyncio.Event()           # set when the run gives up on an unreachable server: wakes waiting retries

    def finish(record: dict) -> None:
        store.put(record)  # committed before it counts as done
        key = record["key"]
        if key in never_connected:
            state["unreachable"] += 1
            if (stop_after_unreachable is not None and not state["reached"] and summary.stopped is None
                    and state["unreachable"] >= stop_after_unreachable):
                summary.stopped = (f"the first {state['unreachable']} requests to finish could not connect to "
                                   f"{endpoint.base_url}")
                stopping.set()
        if record["status"] == "ok":
            summary.done += 1
            bar.done += 1
        else:
            summary.failed += 1
            bar.failed += 1
            summary.failures[record["error_class"]] = summary.failures.get(record["error_class"], 0) + 1
        bar.show()

    def base_record(key: str, job: Job) -> dict:
        item = job.item
        return {"key": key, "experiment": job.experiment, "condition": job.condition, "model": endpoint.model,
                "base_url": endpoint.base_url, "item_id": item.item_id, "domain": item.domain,
                "family": item.family, "question_id": item.question_id, "position": item.position,
                "rung": item.rung, "image_sha256": None if job.text is not None else item.image_sha256,
                "sampling": sampling_fields, "request": job_request(job),
                "template_version": job.text_template if job.text is not None else item.template}

    def internal_failure(key: str, job: Job, exc: BaseException, record: dict | None) -> dict:
        """The typed failure for an exception raised while handling one request or storing its record; keeps
        the raw body and attempt history of `record` (the record that could not be stored), if any."""
        record = record or {}
        msg = f"{exc.__class__.__name__}: {exc}"
        if record.get("status") == "ok":
            msg = "the reply could not be stored: " + msg
        history = record.get("history") or []
        try:
            json.dumps(history, allow_nan=False)
        except (TypeError, ValueError):
            history = []
        body = record.get("raw_body")
        return {**base_record(key, job), "status": "failed", "error_class": "InternalError",
                "error_message": msg[:500], "http_status": record.get("http_status"),
                "raw_body": body if isinstance(body, (bytes, str)) else None,
                "attempts": record.get("attempts") or 0, "elapsed_s": record.get("elapsed_s"),
                "latency_s": record.get("latency_s"), "history": history}

    async def one(key: str, job: Job) -> dict:
        item = job.item
        rec = base_record(key, job)
        if job.text is not None:
            if endpoint.offline:
                content = random_verdict(key)
                return {**rec, "status": "ok", "raw_body": _random_body(content, key), "content": content,
                        "response_model": RANDOM_MODEL, "usage": {}, "attempts": 1, "http_status": None,
                        "latency_s": 0.0, "elapsed_s": 0.0, "history": [{"status": "ok", "latency_s": 0.0}]}
            return await attempt_loop(rec, key, _text_messages(job.text))
        images = [(item.image_path, item.image_sha256)] + [t.image for t in job.turns if t.image is not None]
        pngs = []
        for path, sha in images:
            try:
                pngs.append(path.read_bytes())
                check_png(pngs[-1], sha, str(path))
            except (OSError, BadImage) as e:
                msg = str(e) if isinstance(e, BadImage) else f"{path}: {e.strerror or e}"
                return {**rec, "status": "failed", "error_class": "BadInput", "error_message": msg, "attempts": 0,
                        "elapsed_s": 0.0, "history": []}
        png = pngs[0]
        if endpoint.offline:
            t0 = time.monotonic()
            content = random_reply(item, key)
            return {**rec, "status": "ok", "raw_body": _random_body(content, key), "content": content,
                    "response_model": RANDOM_MODEL, "usage": {}, "attempts": 1, "http_status": None,
                    "latency_s": time.monotonic() - t0, "elapsed_s": time.monotonic() - t0,
                    "history": [{"status": "ok", "latency_s": time.monotonic() - t0}]}
        return await attempt_loop(rec, key, job_messages(item, png, job.turns, tuple(pngs[1:])), job_fields(job))

    async def wait_or_stop(seconds: float) -> None:
        """Sleep before a retry; a key that never connected wakes early when the run gives up on the server."""
        sleeper = asyncio.ensure_future(sleep(seconds))
        stopper = asyncio.ensure_future(stopping.wait())
        try:
            await asyncio.wait({sleeper, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (sleeper, stopper):
                t.cancel()
            await asyncio.gather(sleeper, stopper, return_exceptions=True)

    async def send(payload: dict, limit: float) -> tuple[int, bytes, object]:
        """One attempt: (status, body, headers) of a 2xx, the body read in full within `limit` seconds."""
        import httpx2
        async with asyncio.timeout(limit):
            raw = await client.post("/chat/completions", cast_to=httpx2.Response, body=payload, stream=True)
            body = await _read_capped(raw, endpoint.max_response_bytes)
        return raw.status_code, body, raw.headers

    async def attempt_loop(rec: dict, key: str, messages: list[dict], fields: dict | None = None) -> dict:
        import httpx2
        import openai
        jitter = random.Random(key)
        # The body is sent as built, through the SDK client's generic `post`: the typed `chat.completions.create`
        # re-walks every message through its TypedDict transform, which cost more than the rest of the harness.
        payload = {"model": endpoint.model, "messages": messages, **sampling_fields, **(fields or {})}
        history: list[dict] = []
        t0 = time.monotonic()
        slept_real = waited = 0.0   # elapsed counts the waits asked for, so an injected sleep keeps the caps true
        attempt = 0
        connected = False
        while True:
            attempt += 1
            summary.requests += 1
            ta = time.monotonic()
            status: int | None = None
            body: bytes | None = None
            headers = None
            no_connect = False      # this attempt failed before a connection was made
            left = policy.max_total_s - (ta - t0 - slept_real + waited)
            limit = max(0.0, min(endpoint.timeout_s, left))
            trace = {"connected": False}
            token = _ATTEMPT.set(trace)
            try:
                try:
                    got_status, got_body, got_headers = await send(payload, limit)
                finally:
                    _ATTEMPT.reset(token)
                status, body, headers = got_status, got_body, got_headers
                try:
                    content, model_id, usage = extract_content(body)
                except ValueError as e:
                    err_class, err_msg = "MalformedResponse", str(e)
                except RecursionError:
                    err_class, err_msg = "MalformedResponse", "body is JSON nested too deeply to read"
                else:
                    state["reached"] = True
                    latency = time.monotonic() - ta
                    history.append({"status": status, "latency_s": round(latency, 4)})
                    return {**rec, "status": "ok", "http_status": status, "raw_body": body, "content": content,
                            "response_model": model_id, "usage": usage, "latency_s": latency,
                            "attempts": attempt, "elapsed_s": time.monotonic() - t0 - slept_real + waited,
                            "history": history}
            except TimeoutError:   # this attempt's own deadline (asyncio.timeout), body read included
                err_class = "Timeout"
                no_connect = not trace["connected"]
                if no_connect:
                    err_msg = f"could not connect within {limit:g} s"
                elif left < endpoint.timeout_s:
                    err_msg = (f"the request's total time cap of {policy.max_total_s:g} s ran out during attempt "
                               f"{attempt} (after {limit:.3g} s of it)")
                else:
                    err_msg = f"no complete reply within {endpoint.timeout_s:g} s"
            except ResponseTooLarge as e:
                err_class, err_msg, status = "ResponseTooLarge", str(e), e.status
            except openai.APIStatusError as e:
                status, headers = e.status_code, e.response.headers
                try:
                    body = e.response.content
                except Exception:  # noqa: BLE001 - an error body that cannot be read back is just no body
                    body = None
                err_class, err_msg = classify_status(status), f"HTTP {status}: {str(e.message)[:200]}"
                if 300 <= status < 400:
                    where = headers.get("location")
                    err_msg = (f"HTTP {status}: a redirect{f' to {where[:200]}' if where else ''}, not followed "
                               f"(a request is never re-sent to another address; give the final URL as --base-url)")
            except openai.APITimeoutError as e:
                err_class, err_msg = "Timeout", f"no reply within {endpoint.timeout_s:g} s"
                no_connect = _connect_failure(e)
                if no_connect:
                    err_msg = f"could not connect within {endpoint.timeout_s:g} s"
            except openai.APIConnectionError as e:
                cause = e.__cause__
                err_class = "ConnectionError"
                err_msg = f"{cause.__class__.__name__}: {str(cause)[:200]}" if cause else str(e)
                no_connect = _connect_failure(e)
            except httpx2.TimeoutException as e:   # the body stalled past httpx's own per-read timeout
                err_class, err_msg = "Timeout", f"no complete reply within {endpoint.timeout_s:g} s ({e!r:.100})"
            except (httpx2.TransportError, httpx2.StreamError) as e:   # the body was cut short or refused
                err_class, err_msg = "ConnectionError", f"{e.__class__.__name__}: {str(e)[:200]}"
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - anything else is this key's typed failure, never the run's end
                err_class, err_msg = "InternalError", f"{e.__class__.__name__}: {str(e)[:200]}"
            if not no_connect:
                connected = True
                state["reached"] = True
            latency = time.monotonic() - ta
            retry_after = parse_retry_after(headers) if err_class in ("RateLimited", "ServerError",
                                                                       "RequestTimeout") else None
            elapsed = time.monotonic() - t0 - slept_real + waited
            wait = policy.next_wait(attempt, err_class, retry_after, elapsed, jitter.random())
            if (wait is not None and stop_after_unreachable is not None and not connected and not state["reached"]
                    and attempt >= UNREACHABLE_ATTEMPTS):
                wait = None   # nothing in this run has reached the server: it is not there, do not wait for it
            history.append({"status": status, "error_class": err_class, "error": err_msg[:200],
                            "latency_s": round(latency, 4),
                            "retry_after_s": retry_after, "wait_s": None if wait is None else round(wait, 4)})
            if wait is None:
                if not connected:
                    never_connected.add(key)
                return {**rec, "status": "failed", "http_status": status, "error_class": err_class,
                        "error_message": err_msg, "raw_body": body, "latency_s": latency, "attempts": attempt,
                        "elapsed_s": elapsed, "history": history}
            if summary.stopped is None or connected:
                bar.retrying += 1
                bar.show()
                ts = time.monotonic()
                try:
                    if connected:
                        await sleep(wait)
                    else:
                        await wait_or_stop(wait)
                finally:
                    bar.retrying -= 1
                    slept_real += time.monotonic() - ts
                    waited += wait
            if summary.stopped is not None and not connected:
                # the run has given up on this server: store this key's failure now instead of retrying on
                never_connected.add(key)
                history[-1]["wait_s"] = None
                return {**rec, "status": "failed", "http_status": status, "error_class": err_class,
                        "error_message": err_msg, "raw_body": body, "latency_s": latency, "attempts": attempt,
                        "elapsed_s": time.monotonic() - t0 - slept_real + waited, "history": history}
            summary.retried += 1

    async def worker() -> None:
        while summary.stopped is None:
            try:
                key, job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                record = await one(key, job)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - one request's trouble is that key's typed failure
                record = internal_failure(key, job, e, None)
            try:
                finish(record)
            except Exception as e:  # noqa: BLE001 - e.g. a reply the store cannot take: keep what can be kept
                # If even this cannot be stored, the store itself is unusable: that ends the run (one line).
                finish(internal_failure(key, job, e, record))

    try:
        n = min(concurrency, len(todo))
        if n:
            await asyncio.gather(*(worker() for _ in range(n)))
    finally:
        bar.close()
        if client is not None:
            await client.close()
    summary.not_sent = queue.qsize()
    summary.elapsed_s = time.monotonic() - t_start
    return summary
