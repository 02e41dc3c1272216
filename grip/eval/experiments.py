"""Which requests an experiment makes. E1 (closed loop): the five rungs of every selected item, each in a fresh
conversation, on the clean image (condition "sigma0"). E2 (grain): the same five rungs on the same image at sigma
0/15/25/40 (conditions "sigma0", "sigma15", ...; grain copies at <domain>/grain/s{sigma}/<id>.png), gated by the
readability labels a person recorded in manifests/readability.toml from `grip strips` (the GRIP protocol): an
unlabelled domain x sigma halts E2, an unreadable one is left out and listed in the report.

E3 (sycophancy, the open loop): one challenge turn after the stored E1 first answer of the same model (same name,
endpoint and sampling fields) on the same question of the same image. Conditions `bare`, `reason`, `authority`
(assertions of rising strength, prompts.E3_LEADS) and `control` (asks for the final answer again, asserting
nothing). The asserted value contradicts the first answer: when it was right, a `plausible_wrong` value of the same
type seeded by the first turn's request key (the same value in every arm); when it was wrong, the correct value.
This is the one place a plan reads the answer key: to score the first answer and pick the asserted value. Only that
value (a public-looking answer text) goes into the request; a first turn that failed or did not parse is skipped
and counted (`Plan.skipped`).

The core subset is items with index 0..CORE_SIZE-1 of each domain: the items the builder gives grain copies by
default. Nothing here reads an answer; the runner sees a `PublicItem` only.

Every image a plan names is checked against the sha256 items.jsonl records for it (the row's `sha256`, and for a
grain copy `grain_sha256[str(sigma)]`; a store from before grain hashes has none to check), so a changed or corrupt
PNG halts the plan; the runner checks the bytes against the same hash again right before sending them.
"""
from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grip import GripError
from grip.grain import SIGMAS

EXPERIMENTS = ("e1", "e2", "e3", "e4", "swap", "consistency")   # the last two: grip.eval.probes
RUNGS = (1, 2, 3, 4, 5)
CORE_SIZE = 20
E2_SIGMAS: tuple[int, ...] = (0,) + tuple(SIGMAS)
LABELS = ("readable", "unreadable")
DEFAULT_READABILITY = Path("manifests") / "readability.toml"


class ExperimentError(GripError):
    pass


def condition_name(sigma: int) -> str:
    return f"sigma{int(sigma)}"


def sigma_of(condition: str) -> int:
    if not condition.startswith("sigma") or not condition[5:].isdigit():
        raise ValueError(f"not a grain condition: {condition!r}")
    return int(condition[5:])


# --- the item store ----------------------------------------------------------------------------------------

def discover_domains(items_dir: Path) -> list[str]:
    """Domain folders of an item store (folders holding an items.jsonl), in registry order, unknown ones last."""
    items_dir = Path(items_dir)
    if not items_dir.is_dir():
        raise ExperimentError(f"{items_dir}: no such item store folder (build one with `grip build`)")
    found = sorted(p.parent.name for p in items_dir.glob("*/items.jsonl"))
    if not found:
        raise ExperimentError(f"{items_dir}: no <domain>/items.jsonl inside; not a grip item store")
    from grip.domains import ids
    order = {d: i for i, d in enumerate(ids())}
    return sorted(found, key=lambda d: (order.get(d, len(order)), d))


def load_items(items_dir: Path, domains: list[str] | tuple[str, ...] | None = None) -> dict[str, list[dict]]:
    """domain -> validated rows of its items.jsonl. `domains` None: every domain in the store."""
    from grip.manifest import load_store
    present = discover_domains(items_dir)
    if domains:
        missing = [d for d in domains if d not in present]
        if missing:
            raise ExperimentError(f"{items_dir}: no items for domain(s) {', '.join(missing)}; "
                                  f"the store holds {', '.join(present)}")
        chosen = [d for d in present if d in domains]
    else:
        chosen = present
    out = {}
    for d in chosen:
        rows = load_store(Path(items_dir) / d)
        bad = [r["id"] for r in rows if r["domain"] != d]
        if bad:
            raise ExperimentError(f"{items_dir}/{d}: rows of another domain inside ({bad[0]}); the store is corrupt")
        out[d] = rows
    return out


def selected(items_dir: Path, subset: str, domains=None) -> tuple[list[str], dict[str, int], list[tuple]]:
    """The selected items of a store: (domains in store order, items per domain, [(domain, row, clean image path,
    its sha256), ...]), every image checked against its row's hash."""
    stores = load_items(items_dir, domains)
    counts: dict[str, int] = {}
    chosen: list[tuple] = []
    for d, rows in stores.items():
        sel = select(rows, subset)
        counts[d] = len(sel)
        chosen += [(d, row, *_image(Path(items_dir) / d, row, 0)) for row in sel]
    return list(stores), counts, chosen


def select(rows: list[dict], subset: str) -> list[dict]:
    if subset == "core":
        return [r for r in rows if r["index"] < CORE_SIZE]
    if subset == "all":
        return list(rows)
    raise ExperimentError(f"unknown subset {subset!r}; use core or all")


# --- readability labels ------------------------------------------------------------------------------------

@dataclass
class Readability:
    """Labels a person gave per domain x sigma: True readable, False unreadable; absent = unlabelled."""
    labels: dict[tuple[str, int], bool]
    meta: dict
    path: Path | None

    def label(self, domain: str, sigma: int) -> bool | None:
        return self.labels.get((domain, int(sigma)))


def _toml_load(path: Path) -> dict:
    import tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ExperimentError(f"{path}: not valid TOML ({e})") from None


def default_readability_path() -> Path:
    """manifests/readability.toml in the working folder if there is one, else the one grip ships (the source
    tree's, or the installed wheel's)."""
    if DEFAULT_READABILITY.is_file():
        return DEFAULT_READABILITY
    from grip.release import shipped_manifest
    return shipped_manifest(DEFAULT_READABILITY.name) or Path(__file__).resolve().parents[2] / DEFAULT_READABILITY


def load_readability(path: Path | None) -> Readability:
    """Read the labels file: `[domains.<id>]` tables with `sigma0 = "readable"` ... `sigma40 = "unreadable"`."""
    path = Path(path) if path is not None else default_readability_path()
    if not path.is_file():
        raise ExperimentError(f"{path}: no readability labels file (E2 needs one; see `grip strips`)")
    doc = _toml_load(path)
    doms = doc.get("domains", {})
    if not isinstance(doms, dict):
        raise ExperimentError(f"{path}: [domains] must be a table of domain tables")
    labels: dict[tuple[str, int], bool] = {}
    for d, table in doms.items():
        if not isinstance(table, dict):
            raise ExperimentError(f"{path}: domains.{d} must be a table")
        for k, v in table.items():
            if not k.startswith("sigma"):
                continue  # notes and other free fields
            try:
                s = sigma_of(k)
            except ValueError:
                raise ExperimentError(f"{path}: domains.{d}.{k}: expected sigma<number>") from None
            if s not in E2_SIGMAS:
                raise ExperimentError(f"{path}: domains.{d}.{k}: sigma {s} is not one of {list(E2_SIGMAS)}")
            if v not in LABELS:
                raise ExperimentError(f"{path}: domains.{d}.{k} = {v!r}; expected \"readable\" or \"unreadable\"")
            labels[(d, s)] = v == "readable"
    meta = {k: v for k, v in doc.items() if k != "domains"}
    return Readability(labels, meta, path)


# --- plans and jobs ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    """One request an experiment makes, before it becomes a runner `Job` (which sees only a public view)."""
    experiment: str
    condition: str
    domain: str
    item_id: str
    position: int
    question_id: str
    image_path: Path
    image_sha256: str
    row: dict = field(compare=False, hash=False, repr=False)
    question: dict = field(compare=False, hash=False, repr=False)
    turns: tuple = ()              # runner.Turn: earlier turns of a multi-turn protocol (E3)
    template: str = "v1"           # the first turn's prompt template


@dataclass
class Plan:
    experiment: str
    requests: list[Request]
    domains: list[str]
    items: dict[str, int]                          # domain -> number of items selected
    excluded: list[tuple[str, int, str]] = field(default_factory=list)   # (domain, sigma, why)
    skipped: dict[str, int] = field(default_factory=dict)   # E3: why -> questions left out (first turn unusable)

    def describe(self) -> str:
        lines = [f"{self.experiment}: {len(self.requests)} requests over "
                 + ", ".join(f"{d} ({n} items)" for d, n in self.items.items())]
        for d, s, why in self.excluded:
            lines.append(f"  excluded {d} at {condition_name(s)}: {why}")
        for why, n in self.skipped.items():
            if n:
                lines.append(f"  skipped {n} questions: {why}")
        return "\n".join(lines)


def _sha256_file(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        raise ExperimentError(f"{path}: image missing from the item store") from None


def grain_sha256(domain_dir: Path, item: str, sigma: int) -> str | None:
    """sha256 of an item's grain copy at `sigma` in a domain folder, None when the store has no such copy."""
    from grip.manifest import grain_rel
    path = Path(domain_dir) / grain_rel(item, sigma)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _image(domain_dir: Path, row: dict, sigma: int) -> tuple[Path, str]:
    from grip.manifest import grain_rel
    if sigma == 0:
        path = domain_dir / row["image"]
        sha = _sha256_file(path)
        if sha != row["sha256"]:
            raise ExperimentError(f"{path}: bytes differ from the sha256 in items.jsonl; the item store is corrupt")
        return path, sha
    path = domain_dir / grain_rel(row["id"], sigma)
    if not path.is_file():
        raise ExperimentError(f"{path}: no grain copy at sigma {sigma} for {row['id']}; E2 needs grain copies of "
                              f"every selected item (build with a larger --grain-subset, or use --subset core)")
    sha = _sha256_file(path)
    recorded = row.get("grain_sha256")
    if recorded is None:   # a store built before grain hashes were recorded: nothing to check against
        return path, sha
    want = recorded.get(str(sigma)) if isinstance(recorded, dict) else None
    if want is None:
        raise ExperimentError(f"{path}: items.jsonl records no sha256 for this grain copy of {row['id']} "
                              f"(grain_sha256 has {sorted(recorded) if isinstance(recorded, dict) else recorded!r}); "
                              f"the item store is corrupt")
    if sha != want:
        raise ExperimentError(f"{path}: bytes differ from the grain sha256 in items.jsonl ({sha[:12]} != "
                              f"{str(want)[:12]}); the item store is corrupt")
    return path, sha


def plan(experiment: str, items_dir: Path, subset: str = "core", domains=None,
         readability: Readability | Path | None = None, *, store=None, endpoint=None, sampling=None,
         template: str = "v1") -> Plan:
    """The requests of `experiment` over an item store. E2 reads the readability labels and halts (an
    `ExperimentError`) when any selected domain x sigma has no label. E3 needs the response store holding the E1
    run it builds on, and the endpoint, sampling and prompt template of this run (to find that E1 run)."""
    if experiment not in EXPERIMENTS:
        raise ExperimentError(f"unknown experiment {experiment!r}; choose one of {', '.join(EXPERIMENTS)}")
    items_dir = Path(items_dir)
    if experiment == "e3":
        if store is None or endpoint is None or sampling is None:
            raise ExperimentError("E3 needs the response store, endpoint and sampling of the E1 run it builds on")
        return plan_e3(items_dir, store, endpoint, sampling, subset, domains, template)
    if experiment == "e4":
        return plan_e4_phase1(items_dir, subset, domains, template)
    if experiment in ("swap", "consistency"):
        from grip.eval.probes import plan_probe
        return plan_probe(experiment, items_dir, subset, domains, template)
    stores = load_items(items_dir, domains)
    excluded: list[tuple[str, int, str]] = []
    sigmas_of: dict[str, list[int]] = {}
    if experiment == "e1":
        sigmas_of = {d: [0] for d in stores}
    else:
        if not isinstance(readability, Readability):
            readability = load_readability(readability)
        unlabelled = [f"{d} x {condition_name(s)}" for d in stores for s in E2_SIGMAS
                      if readability.label(d, s) is None]
        if unlabelled:
            raise ExperimentError(f"E2 halted: no readability label for {', '.join(unlabelled)} in "
                                  f"{readability.path}; look at `grip strips DOMAIN` and record them")
        for d in stores:
            bad = [s for s in E2_SIGMAS if not readability.label(d, s)]
            if 0 in bad:  # no clean reference: no paired deltas for this domain at all
                bad = list(E2_SIGMAS)
            for s in bad:
                excluded.append((d, s, "labelled unreadable" if not readability.label(d, s)
                                 else "sigma0 labelled unreadable (no paired reference)"))
            sigmas_of[d] = [s for s in E2_SIGMAS if s not in bad]
    requests: list[Request] = []
    counts: dict[str, int] = {}
    for d, rows in stores.items():
        chosen = select(rows, subset)
        counts[d] = len(chosen)
        for row in chosen:
            for s in sigmas_of[d]:
                path, sha = _image(items_dir / d, row, s)
                for q in row["questions"]:
                    if q["position"] not in RUNGS:
                        continue
                    requests.append(Request(experiment, condition_name(s), d, row["id"], q["position"], q["id"],
                                            path, sha, row, q))
    return Plan(experiment, requests, list(stores), counts, excluded)


def jobs(p: Plan, template: str | None = None) -> list:
    """Runner jobs of a plan: each carries only the public view of its item and question. `template` (E1/E2) asks
    every first turn with that prompt template; an E3 job always keeps the template its stored E1 turn used."""
    from grip.eval.prompts import public_item
    from grip.eval.runner import Job
    out = []
    for r in p.requests:
        t = r.template if r.turns or template is None else template
        item = public_item(r.row, r.question, r.image_path, r.image_sha256, t)
        out.append(Job(r.experiment, r.condition, item, tuple(r.turns)))
    return out


# --- E3: the challenge turn after the stored first answer -------------------------------------------------------

E3_SKIPS = ("first turn failed", "first turn did not parse", "no stored E1 answer for this question")


def _same_url(a, b) -> bool:
    return (None if a is None else str(a).rstrip("/")) == (None if b is None else str(b).rstrip("/"))


def asserted_value(answer, first_outcome: str, first_key: str, tag: str = "e3-asserted") -> str:
    """The value a challenge asserts (E3's assertion, E4's constructed peers: `tag`): a plausible wrong value of
    the answer's type (seeded by `tag` and the first turn's request key) when the first answer was right, the
    correct value when it was wrong."""
    import numpy as np

    from grip.seeding import bootstrap_seed
    if first_outcome == "wrong":
        return answer.reference_text()
    if first_outcome != "correct":
        raise ValueError(f"no asserted value after a first answer that is {first_outcome}")
    rng = np.random.default_rng(bootstrap_seed(tag, first_key))
    return answer.format_value(answer.plausible_wrong(rng))


def e1_answers(store, endpoint, sampling, template: str = "v1") -> dict[tuple[str, str], dict]:
    """(item_id, question_id) -> the stored E1 row (clean image) of this model, endpoint, sampling and prompt
    template. A one-line ExperimentError naming the missing E1 run when the store holds none."""
    fields = sampling.fields()
    mine = [r for r in store.rows(experiment="e1") if r["model"] == endpoint.model and r["condition"] == "sigma0"]
    at = [r for r in mine if _same_url(r["base_url"], endpoint.base_url)]
    alike = [r for r in at if r["sampling"] == fields]
    same = [r for r in alike if (r.get("template_version") or "v1") == template]
    if not same:
        where = "the built-in offline model" if endpoint.base_url is None else f"at {endpoint.base_url}"
        why = ("" if not mine else " at this base URL" if not at
               else f" with these sampling fields ({json_text(fields)}; stored: {json_text(at[0]['sampling'])})"
               if not alike else f" with template {template} (stored: "
               f"{', '.join(sorted({r.get('template_version') or 'v1' for r in alike}))}; give --template)")
        raise ExperimentError(f"E3 builds on the stored E1 answers of model {endpoint.model!r} ({where}), but "
                              f"{store.path} holds no E1 run of it{why}; run `grip eval run --experiment e1 "
                              f"--model {endpoint.model}` with the same settings into this store first")
    return {(r["item_id"], r["question_id"]): r for r in same}


def json_text(obj) -> str:
    import json
    return json.dumps(obj, sort_keys=True)


def _usable_first(first: dict | None, items_dir: Path, d: str, row: dict, q: dict, path: Path, sha: str,
                  template: str, what: str, skips: tuple, skipped: dict):
    """The stored first turn a second turn builds on, checked against this item store: (typed answer, outcome
    "correct" | "wrong"), or None, counted in `skipped` under skips[2] (none stored), skips[0] (failed) or skips[1]
    (did not parse). A first turn made on another item store is a one-line ExperimentError."""
    from grip.eval.prompts import public_item
    from grip.eval.runner import keyed_request
    from grip.eval.scoring import answer_of, score_response
    if first is None:
        skipped[skips[2]] += 1
        return None
    if first["image_sha256"] != sha or first["request"] != keyed_request(public_item(row, q, path, sha, template)):
        raise ExperimentError(f"{d}/{row['id']} {q['id']}: the stored {what} request (key {first['key'][:12]}) "
                              f"differs from this item store's question and image; run against the item store the "
                              f"{what} run used")
    if first["status"] != "ok":
        skipped[skips[0]] += 1
        return None
    answer = answer_of(row, q, f"{items_dir}/{d}")
    outcome = score_response(answer, first["content"], "ok")["outcome"]
    if outcome not in ("correct", "wrong"):
        skipped[skips[1]] += 1
        return None
    return answer, outcome


def plan_e3(items_dir: Path, store, endpoint, sampling, subset: str = "core", domains=None,
            template: str = "v1") -> Plan:
    from grip.eval.prompts import E3_CONDITIONS, E3_TEMPLATE_VERSION, challenge_text, closing_instruction
    from grip.eval.runner import Turn
    first = e1_answers(store, endpoint, sampling, template)
    names, counts, chosen = selected(items_dir, subset, domains)
    requests: list[Request] = []
    skipped = {why: 0 for why in E3_SKIPS}
    for d, row, path, sha in chosen:
        for q in row["questions"]:
            if q["position"] not in RUNGS:
                continue
            e1 = first.get((row["id"], q["id"]))
            tpl = (e1 or {}).get("template_version") or "v1"   # == template: e1_answers picked that run
            usable = _usable_first(e1, items_dir, d, row, q, path, sha, tpl, "E1", E3_SKIPS, skipped)
            if usable is None:
                continue
            answer, outcome = usable
            value = asserted_value(answer, outcome, e1["key"])
            closing = closing_instruction(q["text"], q["instruction"], tpl)
            for c in E3_CONDITIONS:
                text = challenge_text(c, None if c == "control" else value, closing)
                turn = Turn(reply_key=e1["key"], reply=e1["content"], user=text, template=E3_TEMPLATE_VERSION)
                requests.append(Request("e3", c, d, row["id"], q["position"], q["id"], path, sha, row, q,
                                        (turn,), tpl))
    return Plan("e3", requests, names, counts, skipped=skipped)


# --- E4: cross-examination by peers after the open question -------------------------------------------------------

OPEN_POSITION = 6
E4_SKIPS = ("phase 1 failed", "phase 1 did not parse", "no stored phase-1 answer",
            "natural arm only (no other model has a phase-1 reply on the question)")


def plan_e4_phase1(items_dir: Path, subset: str = "core", domains=None, template: str = "v1") -> Plan:
    """Phase 1 of E4: the open question of every selected item, clean image, one fresh turn."""
    from grip.eval.prompts import E4_PHASE1
    names, counts, chosen = selected(items_dir, subset, domains)
    requests: list[Request] = []
    for d, row, path, sha in chosen:
        for q in row["questions"]:
            if q["position"] == OPEN_POSITION:
                requests.append(Request("e4", E4_PHASE1, d, row["id"], q["position"], q["id"], path, sha, row,
                                        q, (), template))
    return Plan("e4", requests, names, counts)


def _endpoint_of(r: dict) -> tuple[str, str | None]:
    return (r["model"], None if r.get("base_url") is None else str(r["base_url"]).rstrip("/"))


def plan_e4_phase2(items_dir: Path, store, endpoint, sampling, subset: str = "core", domains=None,
                   template: str = "v1") -> Plan:
    """Phase 2 of E4 on the stored phase-1 replies of this model (endpoint, sampling, template): per question that
    parsed right or wrong, the `constructed` and `control` arms and, when other models (another model name or base
    URL) have an ok phase-1 reply on the same question, the `natural` arm with up to three of them (the first three
    by model, base URL), anonymised as Peer 1..3 in an order seeded by this model's phase-1 key."""
    import numpy as np

    from grip.eval.prompts import (E4_ARMS, E4_MAX_PEERS, E4_PHASE1, E4_TEMPLATE_VERSION, closing_instruction,
                                   constructed_peers, peer_text)
    from grip.eval.runner import Turn
    from grip.seeding import bootstrap_seed
    me = (endpoint.model, None if endpoint.base_url is None else str(endpoint.base_url).rstrip("/"))
    fields = sampling.fields()
    mine: dict[tuple[str, str], dict] = {}
    others: dict[tuple[str, str], dict[tuple, dict]] = {}
    asked: dict[str, str] = {}   # phase-1 key -> the natural turn text this model was already asked with
    for r in store.rows(experiment="e4"):
        if r["condition"] == "natural" and _endpoint_of(r) == me and r["sampling"] == fields:
            msgs = (r.get("request") or {}).get("messages") or []
            if len(msgs) == 3 and msgs[1].get("response_key"):
                asked[msgs[1]["response_key"]] = msgs[2]["content"][0]["text"]
        if r["condition"] != E4_PHASE1:
            continue
        k = (r["item_id"], r["question_id"])
        if _endpoint_of(r) == me:
            if r["sampling"] == fields and (r.get("template_version") or "v1") == template:
                mine[k] = r
        elif r["status"] == "ok":
            # one reply per other endpoint: its first stored phase-1 row by key
            prev = others.setdefault(k, {}).get(_endpoint_of(r))
            if prev is None or r["key"] < prev["key"]:
                others[k][_endpoint_of(r)] = r
    if not mine:
        where = "the built-in offline model" if endpoint.base_url is None else f"at {endpoint.base_url}"
        raise ExperimentError(f"E4 phase 2 builds on the stored phase-1 replies of model {endpoint.model!r} "
                              f"({where}, these sampling fields and template {template}), but {store.path} holds "
                              f"none; run `grip eval run --experiment e4 --phase 1 --model {endpoint.model}` with "
                              f"the same settings into this store first")
    names, counts, chosen = selected(items_dir, subset, domains)
    requests: list[Request] = []
    skipped = {why: 0 for why in E4_SKIPS}
    for d, row, path, sha in chosen:
        for q in row["questions"]:
            if q["position"] != OPEN_POSITION:
                continue
            first = mine.get((row["id"], q["id"]))
            usable = _usable_first(first, items_dir, d, row, q, path, sha, template, "phase-1", E4_SKIPS, skipped)
            if usable is None:
                continue
            answer, outcome = usable
            closing = closing_instruction(q["text"], q["instruction"], template)
            peers = [others[(row["id"], q["id"])][e]["content"]
                     for e in sorted(others.get((row["id"], q["id"]), {}), key=lambda e: (e[0], e[1] or ""))]
            peers = peers[:E4_MAX_PEERS]
            if peers:
                order = np.random.default_rng(bootstrap_seed("e4-peer-order", first["key"])).permutation(
                    len(peers))
                peers = [peers[i] for i in order]
            elif first["key"] not in asked:
                skipped[E4_SKIPS[3]] += 1
            value = asserted_value(answer, outcome, first["key"], "e4-asserted")
            for arm in E4_ARMS:
                if arm == "natural" and first["key"] in asked:
                    # asked once: the peers of the first phase-2 run stay (a model whose phase 1 arrives later
                    # is not shown), so a rerun retries or skips that conversation instead of adding another
                    text = asked[first["key"]]
                elif arm == "natural" and not peers:
                    continue
                else:
                    shown = (peers if arm == "natural" else constructed_peers(value) if arm == "constructed"
                             else None)
                    text = peer_text(arm, shown, closing)
                turn = Turn(reply_key=first["key"], reply=first["content"], user=text,
                            template=E4_TEMPLATE_VERSION)
                requests.append(Request("e4", arm, d, row["id"], q["position"], q["id"], path, sha, row, q,
                                        (turn,), template))
    return Plan("e4", requests, names, counts, skipped=skipped)


# --- strips (for the readability labels) -------------------------------------------------------------------

def strip_png(domain: str, index: int = 0, seed: int = 0, level: int | None = None) -> bytes:
    """One scene at sigma 0/15/25/40 side by side, full resolution, with the same grain the builder applies
    (the field seeded by the item's image file name)."""
    import numpy as np
    from PIL import Image, ImageDraw

    from grip.builder import generate, release_name
    from grip.domains import get
    from grip.grain import grain_copies
    from grip.manifest import item_id
    from grip.renderers.canvas import encode_png
    from grip.seeding import item_seed, level_for

    dom = get(domain)
    g = generate(dom, item_seed(release_name(seed), domain, index), level_for(index, level))
    copies = grain_copies(g.rgb, f"{item_id(domain, index)}.png", SIGMAS)
    panels = [g.rgb] + [copies[s] for s in SIGMAS]
    h, w, _ = g.rgb.shape
    gap, head = 16, 40
    out = np.full((h + head, len(panels) * w + (len(panels) - 1) * gap, 3), 255, np.uint8)
    for k, a in enumerate(panels):
        out[head:, k * (w + gap):k * (w + gap) + w] = a
    im = Image.fromarray(out)
    draw = ImageDraw.Draw(im)
    try:
        from PIL import ImageFont
        font = ImageFont.load_default(size=24)
    except TypeError:  # Pillow < 10.1
        font = None
    for k, s in enumerate(E2_SIGMAS):
        draw.text((k * (w + gap) + 8, 6), f"{item_id(domain, index)}  sigma {s}", fill=(0, 0, 0), font=font)
    return encode_png(np.asarray(im))


def warn(msg: str) -> None:
    print(f"grip: warning: {msg}", file=sys.stderr)
