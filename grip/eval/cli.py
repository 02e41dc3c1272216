"""`grip eval ...` and `grip strips`. Imports only click at module level: `grip list` must stay light."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from grip._help import FullHelpGroup

DEFAULT_STORE = Path("runs") / "responses.sqlite"


def friendly(fn):
    """The main CLI's one-line errors (imported when the command runs, not when the group is defined)."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        from grip.cli import friendly as main_friendly
        return main_friendly(fn)(*a, **kw)
    return wrapper


def _fail(msg: str):
    from grip import GripError
    raise GripError(msg)


@click.group("eval", cls=FullHelpGroup)
def eval_group():
    """Evaluate models: run (requests -> response store), score, report."""


@eval_group.command("run")
@click.option("--experiment", required=True, help="e1 (five rungs, clean images), e2 (grain sigma 0/15/25/40), "
              "e3 (sycophancy: one challenge after the stored E1 answer), e4 (cross-examination: the open "
              "question, then other models' or constructed peers' answers), swap (Q4 on the item image, then "
              "on its twin in the same conversation; a build made with --twins) or consistency (Q4 and its "
              "rephrasing in fresh conversations).")
@click.option("--items", "items_dir", required=True, type=click.Path(path_type=Path),
              help="Item store: a `grip build` folder, a `grip export` or `grip download` folder, or a Hub repo id "
                   "ORG/NAME[@REVISION] (read once into a cached item store, every shard's sha256 checked).")
@click.option("--model", required=True, help="Model name at the endpoint, or `random` (built-in, offline).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1).")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key.")
@click.option("--concurrency", type=int, default=16, show_default=True, help="Requests in flight at once (1-512).")
@click.option("--max-tokens", type=int, default=1024, show_default=True)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--top-p", type=float, default=1.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed sent to the server.")
@click.option("--no-seed", is_flag=True, help="Send no seed (servers that reject the field).")
@click.option("--extra", "extra_json", default=None, metavar="JSON",
              help='Provider sampling fields passed through verbatim and recorded, e.g. \'{"top_k": 20}\'.')
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Seconds per attempt, from connecting to the reply's last byte (at most 900).")
@click.option("--max-response-bytes", type=int, default=None,
              help="Longest reply body read (default 4 MiB); a longer one is that request's typed failure.")
@click.option("--subset", default="core", show_default=True, help="core (items 0-19 per domain) or all.")
@click.option("--domain", "domains", multiple=True, help="Only these domains (repeatable; default: all in store).")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="SQLite response store (may hold several models and experiments).")
@click.option("--readability", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="E2 readability labels (default: manifests/readability.toml).")
@click.option("--template", default="v1", show_default=True,
              help="Prompt template: v1 (the instruction states a numeric answer's tolerance in words) or "
                   "v1-no-tolerance (states none, as the GRIP protocol). Recorded with every response.")
@click.option("--phase", type=click.Choice(["1", "2", "both"]), default="both", show_default=True,
              help="E4 only: 1 = the open question; 2 = the peer turn on the stored phase-1 replies; both = 1 then "
                   "2. Run phase 1 of every model before phase 2 so the natural arm can show them as peers.")
@click.option("--variant", default=None, help="Swap probe only: multi-turn (a user turn with the twin image asks "
              "again; any chat API), continuation (the reply is pre-filled and continued; vLLM) or both. "
              "[default: multi-turn]")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@friendly
def run_cmd(experiment, items_dir, model, base_url, api_key_env, concurrency, max_tokens, temperature, top_p, seed,
            no_seed, extra_json, timeout_s, max_response_bytes, subset, domains, store_path, readability, template,
            phase, quiet, variant=None):
    """Send an experiment's requests to a model and store the responses (resumes: done keys are skipped)."""
    import os

    from grip.eval import experiments as X
    if experiment not in X.EXPERIMENTS:
        _fail(f"unknown experiment {experiment!r}; choose one of {', '.join(X.EXPERIMENTS)}")
    if phase != "both" and experiment != "e4":
        _fail(f"--phase is an E4 option; {experiment} has one phase")
    if variant is not None and experiment != "swap":
        _fail(f"--variant is a swap probe option; {experiment} has no variants")
    from grip.eval.probes import check_variant
    variants = check_variant(variant or "multi-turn")
    if subset not in ("core", "all"):
        _fail(f"--subset must be core or all, got {subset!r}")
    from grip.eval.prompts import check_template
    check_template(template, "--template")
    from grip.eval.runner import DEFAULT_MAX_RESPONSE_BYTES, Endpoint, Sampling, check_base_url, check_limit, run_jobs
    check_limit("concurrency", concurrency, "--concurrency")
    if not temperature >= 0:   # NaN too
        _fail(f"--temperature must be a number >= 0, got {temperature}")
    if not 0 < top_p <= 1:
        _fail(f"--top-p must be in (0, 1], got {top_p}")
    extra = {}
    if extra_json is not None:
        import json
        try:
            extra = json.loads(extra_json)
        except json.JSONDecodeError as e:
            _fail(f"--extra must be a JSON object, e.g. '{{\"top_k\": 20}}' ({e.msg})")
        if not isinstance(extra, dict):
            _fail("--extra must be a JSON object, e.g. '{\"top_k\": 20}'")
    sampling = Sampling(temperature=temperature, max_tokens=max_tokens, top_p=top_p,
                        seed=None if no_seed else seed, extra=extra)
    sampling.fields()   # a clash between --extra and the named fields is an error before anything runs
    offline = model == "random"
    if offline and base_url:
        _fail("--model random is the built-in offline model; it takes no --base-url")
    if not offline and not base_url:
        _fail(f"--base-url is required for model {model!r} (only --model random runs offline)")
    if not offline:
        check_base_url(base_url)   # before any planning: a bad URL would fail every request after its retries
    if api_key_env is not None and not os.environ.get(api_key_env):
        _fail(f"--api-key-env {api_key_env}: that environment variable is not set or empty")
    # Validates --timeout and --max-response-bytes (finite, within sane bounds) before anything is planned.
    endpoint = Endpoint(model=model, base_url=None if offline else base_url, api_key_env=api_key_env,
                        timeout_s=timeout_s,
                        max_response_bytes=DEFAULT_MAX_RESPONSE_BYTES if max_response_bytes is None
                        else max_response_bytes)
    items_dir = _items_folder(items_dir)
    from grip.eval.store import ResponseStore
    store = ResponseStore(store_path)   # creates its folder; a store it cannot write is a one-line error
    try:
        # Locked before planning, so a second run into a busy store says so at once (one line, exit 2).
        with store.lock():
            if experiment == "e4" and phase == "2":
                plan = X.plan_e4_phase2(items_dir, store, endpoint, sampling, subset=subset,
                                        domains=list(domains) or None, template=template)
            else:
                plan = X.plan(experiment, items_dir, subset=subset, domains=list(domains) or None,
                              readability=readability, store=store, endpoint=endpoint, sampling=sampling,
                              template=template)
            if not plan.requests:
                _fail(f"{items_dir}: nothing to evaluate for {experiment} (no items selected)")
            # E3 builds on the E1 run made with --template and asks its first turn exactly as that run did
            jobs = X.jobs(plan) if experiment in ("e3", "e4") else _with_template(X.jobs(plan), template)
            before = store.run_defaults().get("items")
            store.remember_run(items_dir, readability)
            if before is not None and before != str(Path(items_dir).resolve()):
                X.warn(f"{store_path} holds responses made on the item store {before}; `grip eval score` now "
                       f"defaults to {Path(items_dir).resolve()} (give --items to score the others)")
            click.echo(plan.describe() + (f" (template {template})" if template != "v1" else ""), err=True)
            summary = run_jobs(jobs, endpoint, sampling, store, concurrency=concurrency,
                               progress=not quiet and sys.stderr.isatty())
            if (experiment == "e4" and phase == "both" or experiment == "swap") and not summary.not_sent:
                # Phase 2 on the phase-1 replies just stored (and those of other models already in the store)
                if experiment == "swap":   # the probe turn after the first turns just stored
                    from grip.eval.probes import plan_swap_probe
                    plan = plan_swap_probe(items_dir, store, endpoint, sampling, subset=subset,
                                           domains=list(domains) or None, template=template, variants=variants)
                else:
                    plan = X.plan_e4_phase2(items_dir, store, endpoint, sampling, subset=subset,
                                            domains=list(domains) or None, template=template)
                click.echo(plan.describe(), err=True)
                jobs2 = X.jobs(plan)
                if jobs2:
                    s2 = run_jobs(jobs2, endpoint, sampling, store, concurrency=concurrency,
                                  progress=not quiet and sys.stderr.isatty())
                    summary = summary.merged(s2)
                jobs = jobs + jobs2
    finally:
        close = getattr(store, "close", None)
        if close:
            close()
    click.echo(f"{store_path}: {experiment} {model}: {len(jobs)} requests; {summary.done} done, "
               f"{summary.failed} failed, {summary.skipped} already stored, {summary.retried} retried"
               + (f", {summary.not_sent} not sent" if summary.not_sent else ""))
    for d, s, why in plan.excluded:
        click.echo(f"excluded {d} at {X.condition_name(s)}: {why}")
    why = _run_failed(summary)
    if why:
        # Exit 1, not 2: the command was fine, the run was not. The failures are stored; a rerun retries them.
        click.echo(f"grip: error: {why}; the failures are stored in {store_path} and a rerun retries them",
                   err=True)
        sys.exit(1)


def _with_template(jobs: list, template: str) -> list:
    """The jobs asked with `template`; every prompt is rendered once first, so an instruction the template cannot
    be applied to is a one-line error before anything is sent."""
    import dataclasses

    from grip.eval.prompts import prompt_text
    out = []
    for j in jobs:
        item = j.item if j.item.template == template else dataclasses.replace(j.item, template=template)
        prompt_text(item.text, item.instruction, item.template)
        out.append(j if item is j.item else dataclasses.replace(j, item=item))
    return out


def _items_folder(items: Path) -> Path:
    """--items as a local item store folder: a build folder as it is; an export or download folder or a Hub repo
    id read into the cached item store (grip.eval.sources)."""
    from grip.eval.sources import resolve_items
    return resolve_items(items)


def _remembered_items(store, store_path) -> Path:
    items = store.run_defaults().get("items")
    if items is None:
        _fail(f"--items is required: {store_path} records no item folder (no `grip eval run` into it has recorded "
              f"one yet)")
    if not Path(items).is_dir():
        _fail(f"{items}: the item folder the last run into {store_path} used is gone; give --items")
    return Path(items)


def _check_filters(models, experiments) -> None:
    from grip.eval import experiments as X
    for x in experiments:
        if x not in X.EXPERIMENTS:
            _fail(f"--experiment: unknown experiment {x!r}; choose one of {', '.join(X.EXPERIMENTS)}")
    for m in models:
        if not m.strip():
            _fail("--model must name a model, got an empty name")


def _run_failed(summary) -> str | None:
    """Why this run counts as failed (nothing answered), or None. A rerun whose only requests are keys that
    failed before for a lasting reason (say a 400) is not a failed run; an unreachable server always is."""
    if summary.done or not (summary.failed or summary.not_sent):
        return None
    classes = ", ".join(f"{n} {c}" for c, n in sorted(summary.failures.items()))
    if summary.stopped:
        return f"{summary.stopped}, so the run stopped early ({summary.failed} failed: {classes}; " \
               f"{summary.not_sent} not sent)"
    if summary.skipped == 0 or set(summary.failures) <= {"ConnectionError"}:
        return f"every request failed ({summary.failed} of {summary.failed}: {classes})"
    return None


@eval_group.command("score")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_STORE,
              show_default=True)
@click.option("--items", "items_dir", default=None, type=click.Path(path_type=Path),
              help="Item store: a build, export or download folder or a Hub repo id ORG/NAME[@REVISION] "
                   "(default: the one the last `grip eval run` into the store used).")
@click.option("--out", type=click.Path(dir_okay=False), default=str(Path("runs") / "scored.jsonl"),
              show_default=True)
@click.option("--experiment", "experiments", multiple=True,
              help="Only this experiment (repeatable; default: every one in the store).")
@click.option("--model", "models", multiple=True,
              help="Only this model, by name or report label (repeatable; default: every one in the store).")
@click.option("--judge", "judge_model", default=None,
              help="Semantic validator: a judge model that looks again at the responses the rules found wrong or "
                   "unparsed (moves incorrect -> correct only; strict and validated scores are both kept).")
@click.option("--judge-base-url", default=None, help="The judge's OpenAI-compatible base URL.")
@click.option("--judge-api-key-env", default=None, help="Environment variable holding the judge's API key.")
@click.option("--judge-concurrency", type=int, default=16, show_default=True, help="Judge requests in flight.")
@friendly
def score_cmd(store_path, items_dir, out, experiments, models, judge_model, judge_base_url, judge_api_key_env,
              judge_concurrency):
    """Score every stored response against the item store's answer key (offline, deterministic); with --judge,
    also the validated score."""
    import os

    from grip.eval.scoring import counts, score_rows, select, stored_responses, write_scored
    from grip.eval.store import ResponseStore
    from grip.manifest import check_output_file
    _check_filters(models, experiments)
    out = check_output_file(out, "--out")
    if out.exists() and Path(store_path).exists() and os.path.samefile(out, store_path):
        _fail(f"--out {out} is the response store itself; give another file for the scored rows")
    judge = None
    if judge_model is not None or judge_base_url is not None:
        judge = _judge_endpoint(judge_model, judge_base_url, judge_api_key_env, judge_concurrency)
    elif judge_api_key_env is not None:
        _fail("--judge-api-key-env needs --judge")
    if judge is not None and not Path(store_path).is_file():
        _fail(f"{store_path}: no response store (run `grip eval run` first)")
    if items_dir is not None:
        items_dir = _items_folder(items_dir)
    # Read-only (SQLite mode=ro): scoring writes nothing to the store, so a read-only store file or folder works.
    # The validator stores its judge calls in the store, so with --judge it is opened for writing.
    store = ResponseStore(store_path, readonly=judge is None)
    try:
        if items_dir is None:
            items_dir = _remembered_items(store, store_path)
        stored = stored_responses(store, experiments[0] if len(experiments) == 1 else None)
        if not stored:
            _fail(f"{store_path}: no responses stored" + (f" for {experiments[0]}" if experiments else ""))
        rows = score_rows(select(stored, models, experiments, str(store_path)), items_dir)
        labels = store.run_defaults().get("readability")
        if labels:   # E2 rows carry the labels file their run used: `grip eval report` defaults to it
            for r in rows:
                if r["experiment"] == "e2":
                    r["readability"] = labels
        summary = None
        if judge is not None:
            from grip.eval.judge import validate
            endpoint, sampling, concurrency = judge
            with store.lock():
                rows, summary = validate(rows, store, endpoint, sampling, items_dir, concurrency,
                                         progress=sys.stderr.isatty())
    finally:
        store.close()
    write_scored(rows, out)
    c = counts(rows)
    click.echo(f"{out}: {len(rows)} responses scored: " + ", ".join(f"{v} {k}" for k, v in c.items()))
    if judge is not None:
        from collections import Counter
        v = Counter(r.get("judge_verdict") for r in rows if "judge_verdict" in r)
        moved = sum(r["validated_outcome"] != r["outcome"] for r in rows)
        click.echo(f"validator {judge[0].model}: {sum(v.values())} responses judged ("
                   + ", ".join(f"{v.get(k, 0)} {k}" for k in ("yes", "no", "unclear", "failed"))
                   + f"); {moved} moved to correct"
                   + (f"; {summary.skipped} judge calls already stored" if summary and summary.skipped else ""))


def _judge_endpoint(model, base_url, api_key_env, concurrency):
    """(Endpoint, Sampling, concurrency) of the validator, every option checked before anything runs."""
    import os

    from grip.eval.runner import Endpoint, Sampling, check_base_url, check_limit
    if not model:
        _fail("--judge-base-url needs --judge MODEL")
    check_limit("concurrency", concurrency, "--judge-concurrency")
    if model == "random":
        if base_url:
            _fail("--judge random is the built-in offline model; it takes no --judge-base-url")
    else:
        if not base_url:
            _fail(f"--judge-base-url is required for judge {model!r} (only --judge random runs offline)")
        check_base_url(base_url)
    if api_key_env is not None and not os.environ.get(api_key_env):
        _fail(f"--judge-api-key-env {api_key_env}: that environment variable is not set or empty")
    endpoint = Endpoint(model=model, base_url=None if model == "random" else base_url, api_key_env=api_key_env)
    return endpoint, Sampling(temperature=0.0, max_tokens=256, top_p=1.0, seed=0, extra={}), concurrency


def _check_seed(seed: int, what: str = "--seed") -> None:
    from grip.manifest import MAX_SEED
    if not 0 <= seed <= MAX_SEED:
        _fail(f"{what} must be a whole number from 0 to {MAX_SEED}, got {seed}")


@eval_group.command("report")
@click.option("--scored", "scored_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("runs") / "scored.jsonl", show_default=True)
@click.option("--items", "items_dir", default=None, type=click.Path(path_type=Path),
              help="Item store: a build, export or download folder or a Hub repo id ORG/NAME[@REVISION] "
                   "(default: the one the scored rows were scored against).")
@click.option("--out", type=click.Path(file_okay=False), default=str(Path("runs") / "report"), show_default=True)
@click.option("--resamples", type=int, default=10_000, show_default=True,
              help="Bootstrap resamples, 100 to 100,000.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--readability", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="E2 readability labels (default: the ones the run used, else manifests/readability.toml).")
@click.option("--experiment", "experiments", multiple=True,
              help="Only this experiment (repeatable; default: every one scored).")
@click.option("--model", "models", multiple=True,
              help="Only this model, by name or label (repeatable; default: every one scored).")
@friendly
def report_cmd(scored_path, items_dir, out, resamples, seed, readability, experiments, models):
    """Tables (report.md, stats.json) and figures from scored rows."""
    from grip.eval.stats import RESAMPLES_MAX, RESAMPLES_MIN
    if not RESAMPLES_MIN <= resamples <= RESAMPLES_MAX:
        _fail(f"--resamples must be from {RESAMPLES_MIN} to {RESAMPLES_MAX:,}, got {resamples}")
    _check_seed(seed)
    _check_filters(models, experiments)
    from grip.eval.report import check_report_dir, write_report
    from grip.eval.scoring import items_dir_of, read_scored, select
    out = check_report_dir(out, "--out")
    rows = read_scored(scored_path)
    if not rows:
        _fail(f"{scored_path}: no scored rows")
    rows = select(rows, models, experiments, str(scored_path))
    if items_dir is not None:
        items_dir = _items_folder(items_dir)
    if items_dir is None:
        items_dir = items_dir_of(rows, str(scored_path))
        if not items_dir.is_dir():
            _fail(f"{items_dir}: the item folder {scored_path} was scored against is gone; give --items")
    if readability is None:
        readability = _scored_readability(rows)
    path = write_report(rows, items_dir, out, resamples=resamples, seed=seed, readability=readability)
    click.echo(f"{path}: report over {len(rows)} scored responses")


def _scored_readability(rows: list[dict]) -> Path | None:
    """The E2 labels file the run of the scored E2 rows used, if it recorded one and it is still there."""
    found = {r.get("readability") for r in rows if r.get("experiment") == "e2"} - {None}
    if len(found) == 1:
        p = Path(found.pop())
        return p if p.is_file() else None
    return None


@click.command("strips")
@click.argument("domain")
@click.option("--index", type=int, default=0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Release seed (as in grip build).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="PNG path (default: <domain>_<index>_strip.png).")
@friendly
def strips(domain, index, seed, out):
    """One scene at grain sigma 0/15/25/40 side by side, for the E2 readability labels."""
    from grip.manifest import MAX_ITEMS, atomic_write_bytes, check_output_file
    if not 0 <= index < MAX_ITEMS:
        _fail(f"--index must be from 0 to {MAX_ITEMS - 1:,}, got {index}")
    _check_seed(seed)
    out = check_output_file(Path(f"{domain}_{index:06d}_strip.png") if out is None else out, "--out")
    from grip.eval.experiments import E2_SIGMAS, strip_png
    atomic_write_bytes(out, strip_png(domain, index, seed))
    click.echo(f"{out}: {domain} item {index} at sigma {'/'.join(map(str, E2_SIGMAS))}; record readable/unreadable "
               f"per sigma in manifests/readability.toml")
