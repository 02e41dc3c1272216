"""Two probes of whether a model reads the picture it is shown, built on the item store's `twin` and `rephrase` row
fields (`grip build --twins` writes both; every build writes `rephrase`).

**Swap probe** (`--experiment swap`). Condition `base`: the twin's Q4 on the twin image alone, one fresh
conversation. The probe: the item's Q4 on the item image (the first turn: exactly the E1 rung-4 request, the same
key, so a stored E1 answer of the same model, endpoint, sampling and template is reused and E1 reuses this one),
then a new user turn showing the twin image with the re-examination lead (`SWAP_LEAD`) and the twin's Q4. Variants
(the condition of a probe row): `multi-turn` asks in that user turn and any chat API can answer it; `continuation`
adds the model's next message pre-filled with `SWAP_TRIGGER` and asks the server to continue it (vLLM's
`continue_final_message: true, add_generation_prompt: false`; a server that refuses the fields gives each such
request a typed failure). Probe and base answers are scored against the twin's Q4 answer. The minimal pair changes
Q4's answer, so a model that repeats its first answer after the swap is wrong on the twin.

**Consistency** (`--experiment consistency`). Q4 (again the E1 rung-4 request) and its rephrasing (`rephrase`, a
second wording whose answer follows from Q4's by the row's map) in two fresh conversations on the same clean image.

Templates are versioned like prompts.py's; the wording of a version never changes once released
(tests/snapshots/swap_swap-v1.json freezes it). Nothing here reads an answer: the runner sees a `PublicItem`, the
twin image by path and hash, and public text only.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from grip.eval.experiments import ExperimentError, Plan, Request, selected

SWAP = "swap"
CONSISTENCY = "consistency"
PROBE_EXPERIMENTS = (SWAP, CONSISTENCY)
SWAP_TEMPLATE_VERSION = "swap-v1"
SWAP_VARIANTS = ("multi-turn", "continuation")
SWAP_BASE = "base"
SWAP_CONDITIONS = (SWAP_BASE,) + SWAP_VARIANTS
REPHRASE = "rephrase"
CONDITIONS = {SWAP: frozenset(SWAP_CONDITIONS), CONSISTENCY: frozenset({REPHRASE})}
Q4 = 4
SWAP_LEAD = "Here is the picture again. Look at it carefully once more and answer the question again."
SWAP_TRIGGER = "Let me check the figure again."
SWAP_SKIPS = ("first turn failed", "no stored first turn (run phase 1)")


def swap_text(twin_q4: dict, template: str) -> str:
    """The probe's second user text: the lead, a blank line, the twin's Q4 as the first turn's template asks it."""
    from grip.eval.prompts import prompt_text
    return f"{SWAP_LEAD}\n\n{prompt_text(twin_q4['text'], twin_q4['instruction'], template)}"


def check_variant(variant: str) -> tuple[str, ...]:
    """The swap variants `--variant` names (multi-turn, continuation or both)."""
    if variant == "both":
        return SWAP_VARIANTS
    if variant not in SWAP_VARIANTS:
        raise ExperimentError(f"--variant must be multi-turn, continuation or both, got {variant!r}")
    return (variant,)


# --- the item store's probe fields --------------------------------------------------------------------------------

def question_at(questions, position: int, where: str) -> dict:
    for q in questions if isinstance(questions, list) else ():
        if isinstance(q, dict) and q.get("position") == position:
            return q
    raise ExperimentError(f"{where}: no question at position {position}; the item store is corrupt")


def twin_of(row: dict, where: str) -> dict:
    twin = row.get("twin")
    if not isinstance(twin, dict):
        raise ExperimentError(f"{where}: item {row['id']} has no twin; the swap probe needs an item store built with "
                              f"`grip build --twins`")
    return twin


def rephrase_of(row: dict, where: str) -> dict:
    q = row.get("rephrase")
    if not isinstance(q, dict):
        raise ExperimentError(f"{where}: item {row['id']} has no rephrased Q4 (row field `rephrase`); rebuild the "
                              f"item store with this grip (`grip build`)")
    return q


def twin_image(domain_dir: Path, row: dict) -> tuple[Path, str]:
    """The twin image's path and sha256, checked against the hash items.jsonl records for it."""
    twin = twin_of(row, str(domain_dir))
    path = Path(domain_dir) / str(twin.get("image"))
    try:
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        raise ExperimentError(f"{path}: twin image missing from the item store; rebuild with `grip build --twins`") \
            from None
    if sha != twin.get("sha256"):
        raise ExperimentError(f"{path}: bytes differ from the twin sha256 in items.jsonl; the item store is corrupt")
    return path, sha


# --- plans -----------------------------------------------------------------------------------------------------

def _first(d: str, row: dict, path: Path, sha: str, template: str) -> Request:
    """The item's Q4 on its clean image: the E1 rung-4 request (same experiment, condition and so the same key)."""
    q = question_at(row["questions"], Q4, f"{d}/{row['id']}")
    return Request("e1", "sigma0", d, row["id"], Q4, q["id"], path, sha, row, q, (), template)


def _twin_q4(items_dir: Path, d: str, row: dict) -> tuple[Path, str, dict]:
    """The twin image (checked against its hash) and the twin's Q4."""
    where = f"{items_dir}/{d}"
    twin = twin_of(row, where)
    tpath, tsha = twin_image(Path(items_dir) / d, row)
    return tpath, tsha, question_at(twin.get("questions"), Q4, f"{where}: twin of {row['id']}")


def plan_swap_first(items_dir: Path, subset: str = "core", domains=None, template: str = "v1") -> Plan:
    """Phase 1 of the swap probe: per item, the first turn (the E1 rung-4 request) and the `base` request."""
    names, counts, chosen = selected(items_dir, subset, domains)
    requests: list[Request] = []
    for d, row, path, sha in chosen:
        tpath, tsha, tq = _twin_q4(items_dir, d, row)
        requests.append(_first(d, row, path, sha, template))
        requests.append(Request(SWAP, SWAP_BASE, d, row["id"], Q4, tq["id"], tpath, tsha, row, tq, (),
                                template))
    return Plan(SWAP, requests, names, counts)


def plan_swap_probe(items_dir: Path, store, endpoint, sampling, subset: str = "core", domains=None,
                    template: str = "v1", variants: tuple[str, ...] = ("multi-turn",)) -> Plan:
    """Phase 2: per item whose first turn is stored ok (by its exact E1 key), one probe per variant."""
    from grip.eval.prompts import public_item
    from grip.eval.runner import Job, Turn, job_key
    names, counts, chosen = selected(items_dir, subset, domains)
    requests: list[Request] = []
    skipped = {why: 0 for why in SWAP_SKIPS}
    for d, row, path, sha in chosen:
        tpath, tsha, tq = _twin_q4(items_dir, d, row)
        first = _first(d, row, path, sha, template)
        key = job_key(Job("e1", "sigma0", public_item(row, first.question, path, sha, template)), endpoint,
                      sampling)
        stored = store.get(key)
        if stored is None or stored["status"] != "ok":
            skipped[SWAP_SKIPS[1] if stored is None else SWAP_SKIPS[0]] += 1
            continue
        for v in variants:
            turn = Turn(reply_key=key, reply=stored["content"] or "", user=swap_text(tq, template),
                        template=SWAP_TEMPLATE_VERSION, image=(tpath, tsha),
                        prefill=SWAP_TRIGGER if v == "continuation" else None)
            requests.append(Request(SWAP, v, d, row["id"], Q4, first.question_id, path, sha, row,
                                    first.question, (turn,), template))
    return Plan(SWAP, requests, names, counts, skipped=skipped)


def plan_consistency(items_dir: Path, subset: str = "core", domains=None, template: str = "v1") -> Plan:
    """Per item: Q4 (the E1 rung-4 request) and the rephrased Q4, each one fresh turn on the clean image."""
    names, counts, chosen = selected(items_dir, subset, domains)
    requests: list[Request] = []
    for d, row, path, sha in chosen:
        rq = rephrase_of(row, f"{items_dir}/{d}")
        requests.append(_first(d, row, path, sha, template))
        requests.append(Request(CONSISTENCY, REPHRASE, d, row["id"], Q4, str(rq.get("id")), path, sha, row, rq,
                                (), template))
    return Plan(CONSISTENCY, requests, names, counts)


def plan_probe(experiment: str, items_dir: Path, subset: str = "core", domains=None, template: str = "v1") -> Plan:
    """The first (or only) phase of a probe: what `experiments.plan` returns for swap and consistency."""
    if experiment == SWAP:
        return plan_swap_first(Path(items_dir), subset, domains, template)
    return plan_consistency(Path(items_dir), subset, domains, template)


# --- scoring hooks ---------------------------------------------------------------------------------------------

def probe_answer(key, r: dict):
    """(item row, question, typed answer, sha256 of the image the request showed first) a probe response is scored
    against: the twin's Q4 (swap) or the rephrased Q4 (consistency)."""
    from grip.eval.scoring import ScoringError, answer_of
    rows = key.rows(r["domain"])
    row = rows.get(r["item_id"])
    if row is None:
        raise ScoringError(f"{key.items_dir}/{r['domain']}: no item {r['item_id']!r}; the response store was made "
                           f"from another item store")
    where = f"{key.items_dir}/{r['domain']}"
    try:
        if r["experiment"] == SWAP:
            twin = twin_of(row, where)
            q = question_at(twin.get("questions"), Q4, f"{where}: twin of {row['id']}")
            sha = twin.get("sha256") if r["condition"] == SWAP_BASE else row["sha256"]
        else:
            q, sha = rephrase_of(row, where), row["sha256"]
    except ExperimentError as e:
        raise ScoringError(f"{e}; score against the item store the run used") from None
    return row, q, answer_of(row, q, where), sha


def first_key(r: dict, row: dict) -> str:
    """The response key of the E1 rung-4 request on the item image made with this response's model, endpoint,
    sampling and template: the first turn of a swap probe, the Q4 half of a consistency pair."""
    from grip.eval.prompts import public_item
    from grip.eval.runner import keyed_request
    from grip.eval.store import request_key
    q = question_at(row["questions"], Q4, f"item {row['id']}")
    item = public_item(row, q, Path(row["image"]), row["sha256"], r.get("template_version") or "v1")
    return request_key(r["model"], r.get("base_url"), keyed_request(item), r["sampling"], "e1", "sigma0")


def probe_fields(r: dict, row: dict) -> dict:
    """What a scored probe row carries for the stats: `first_key` (the item image's Q4 answer it pairs with), and
    for a consistency row the rephrase map."""
    out = {"first_key": first_key(r, row)}
    if r["experiment"] == CONSISTENCY:
        out["rephrase_map"] = (row.get("rephrase") or {}).get("map")
    return out
