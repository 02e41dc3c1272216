"""grip in inspect_ai: the E1/E2 questions of an item store as an inspect `Task`, scored by grip's own comparators.

    inspect eval grip/gear_trains --model openai/gpt-4o -T source=out        # one domain (`grip/all`: every one)
    inspect eval grip/clock_reading -T experiment=e2 -T subset=all -T rungs=[1,2] \\
        --model openai-api/local/NAME --model-base-url http://127.0.0.1:8000/v1   # any OpenAI-compatible server

    from inspect_ai import eval
    from grip.integrations.inspect import grip_task
    eval(grip_task("gear_trains", source="out"), model="openai/NAME")

One sample per request grip's own plan makes (`grip.eval.experiments.plan`, then `jobs`, so the selection, the
readability gate of E2 and the image checks are grip's): one user turn holding the exact PNG bytes of the item store
as a data URI and the text of grip's prompt template (`grip.eval.prompts.prompt_text`), both taken from the
`PublicItem` only. The sample id is the question's key in the item store, `<item id>/<question id>` (E2 adds
`/<condition>`); the target is the typed answer JSON, which never reaches the model. `grip_scorer` reads the reply
exactly as `grip eval score` does (`grip.eval.scoring.score_response`): correct, incorrect, or inspect's "no answer"
for a reply that does not parse. A request that fails is an inspect sample error, not a score (grip's "failed").

The tasks are registered when inspect loads this module through the `inspect_ai` entry point (pyproject.toml):
`grip/<domain>` for every registered domain and `grip/all`, each taking the task args of `grip_task` but `domain`.
`source` defaults to `$GRIP_ITEMS`, else `out`, and goes through `grip.eval.sources.resolve_items` (a build folder,
a Hub export or download folder, or a Hub repo id). Sampling defaults to grip's (`grip.eval.runner.Sampling`:
temperature 0, max_tokens 1024, top_p 1, seed 0); inspect's `--temperature` etc. override it.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Target, accuracy, grouped, scorer, stderr
from inspect_ai.solver import TaskState, generate

from grip import GripError
from grip.eval.experiments import RUNGS, jobs, plan
from grip.eval.prompts import TEMPLATE_VERSION, check_png, png_data_url, prompt_text

__all__ = ["EXPERIMENTS", "SOURCE_ENV", "grip_samples", "grip_scorer", "grip_task", "sample_id"]

EXPERIMENTS = ("e1", "e2")      # the single-turn protocols; E3 and E4 build on stored replies of grip's own runner
SOURCE_ENV = "GRIP_ITEMS"
DEFAULT_SOURCE = "out"
ALL = "all"
_OUTCOME_VALUE = {"correct": CORRECT, "wrong": INCORRECT, "unparsed": NOANSWER}


class InspectTaskError(GripError):
    pass


def default_source() -> str:
    return os.environ.get(SOURCE_ENV) or DEFAULT_SOURCE


def sample_id(experiment: str, item_id: str, question_id: str, condition: str) -> str:
    """`<item id>/<question id>`; E2 asks each question once per condition, so its ids end in `/<condition>`."""
    return f"{item_id}/{question_id}" + (f"/{condition}" if experiment == "e2" else "")


def _rungs(rungs) -> tuple[int, ...]:
    """Rungs as given in Python or as an inspect task arg: an int, a list of ints, or text such as "1,2"."""
    if isinstance(rungs, str):
        parts = rungs.replace("[", " ").replace("]", " ").replace(",", " ").split()
        parts = [int(p) if p.isdigit() else p for p in parts]
    elif isinstance(rungs, int):
        parts = [rungs]
    elif isinstance(rungs, Iterable):
        parts = list(rungs)
    else:
        parts = []
    if not parts or not all(isinstance(p, int) and not isinstance(p, bool) and p in RUNGS for p in parts):
        raise InspectTaskError(f"rungs must be some of {list(RUNGS)}, got {rungs!r}")
    return tuple(sorted(set(parts)))


def grip_samples(domain: str = ALL, source=None, subset: str = "core", rungs=RUNGS, experiment: str = "e1",
                 template: str = TEMPLATE_VERSION, readability=None) -> list[Sample]:
    """The samples of `grip_task`, in grip's plan order."""
    from grip.eval.sources import resolve_items
    if experiment not in EXPERIMENTS:
        raise InspectTaskError(f"experiment must be one of {', '.join(EXPERIMENTS)}, got {experiment!r}")
    if not isinstance(domain, str) or not domain:
        raise InspectTaskError(f"domain must be a domain id or {ALL!r}, got {domain!r}")
    wanted = _rungs(rungs)
    items = resolve_items(default_source() if source is None else source)
    p = plan(experiment, items, subset, None if domain == ALL else [domain], readability, template=template)
    images: dict[str, str] = {}   # one data URI per image, shared by its questions' samples
    out = []
    for req, job in zip(p.requests, jobs(p, template)):
        item = job.item
        if item.position not in wanted:
            continue
        url = images.get(str(item.image_path))
        if url is None:
            png = item.image_path.read_bytes()
            check_png(png, item.image_sha256, str(item.image_path))
            url = images[str(item.image_path)] = png_data_url(png)
        text = prompt_text(item.text, item.instruction, item.template)
        out.append(Sample(
            id=sample_id(experiment, item.item_id, item.question_id, job.condition),
            input=[ChatMessageUser(content=[ContentImage(image=url), ContentText(text=text)])],
            target=json.dumps(req.question["answer"], sort_keys=True),
            metadata={"experiment": experiment, "condition": job.condition, "domain": item.domain,
                      "family": item.family, "item_id": item.item_id, "question_id": item.question_id,
                      "position": item.position, "rung": item.rung, "template": item.template,
                      "image_sha256": item.image_sha256}))
    if not out:
        raise InspectTaskError(f"{items}: no questions selected (domain {domain}, subset {subset}, rungs "
                               f"{list(wanted)}, {experiment})")
    return out


def grip_task(domain: str = ALL, source=None, subset: str = "core", rungs=RUNGS, experiment: str = "e1",
              template: str = TEMPLATE_VERSION, readability=None) -> Task:
    """An inspect Task over grip's `experiment` (e1 | e2) questions of `domain` (a domain id or "all") in the item
    store `source` (a build folder, a Hub export or download folder, a Hub repo id; None: $GRIP_ITEMS, else out),
    `subset` core | all, the given rungs (1..5), prompt template `template`, E2 gated by the readability labels
    `readability` (None: manifests/readability.toml)."""
    from grip.eval.runner import Sampling
    s = Sampling()
    return Task(dataset=MemoryDataset(grip_samples(domain, source, subset, rungs, experiment, template, readability),
                                      name=f"grip-{domain}-{experiment}"),
                solver=generate(), scorer=grip_scorer(), name=f"grip/{domain}",
                config=GenerateConfig(temperature=s.temperature, max_tokens=s.max_tokens, top_p=s.top_p, seed=s.seed),
                metadata={"grip_experiment": experiment, "grip_domain": domain, "grip_subset": subset,
                          "grip_template": template})


@scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), "rung", all=False)])
def grip_scorer():
    """grip's typed comparators on the reply's last `ANSWER:` line. Score metadata: grip's outcome (correct, wrong,
    unparsed), the parsed value, the reference text, the reason a reply did not parse and, for a record answer,
    which fields matched."""
    from grip.answers import extract_answer_line
    from grip.eval.scoring import answer_of, score_response

    async def score(state: TaskState, target: Target) -> Score:
        md = state.metadata or {}
        where = f"sample {state.sample_id}"
        try:
            spec = json.loads(target.text)
        except ValueError:
            raise InspectTaskError(f"{where}: the target is not a grip answer JSON") from None
        answer = answer_of({"id": md.get("item_id")}, {"id": md.get("question_id"), "answer": spec}, where)
        content = state.output.completion if state.output is not None else None
        s = score_response(answer, content, "ok")
        line = extract_answer_line(content) if isinstance(content, str) else None
        meta = {"outcome": s["outcome"], "parsed": s["parsed"], "reference": answer.reference_text()}
        if "fields" in s:
            meta["fields"] = s["fields"]
        return Score(value=_OUTCOME_VALUE[s["outcome"]], answer=line if isinstance(line, str) else None,
                     explanation=s["reason"], metadata=meta)

    return score


# --- registration (inspect loads this module through the `inspect_ai` entry point named `grip`) -------------------

def _namespace() -> str:
    """inspect prefixes a task name with its package only when it takes the package for an installed one (a regular
    install; an editable install is recognised by distribution name, which is not the package name here). Name the
    tasks so that they are `grip/<domain>` either way."""
    try:
        from inspect_ai._util.package import get_installed_package_name
        return "" if get_installed_package_name(grip_task) == "grip" else "grip/"
    except ImportError:
        return ""


def _register(domain: str):
    def domain_task(source=None, subset: str = "core", rungs=RUNGS, experiment: str = "e1",
                    template: str = TEMPLATE_VERSION, readability=None) -> Task:
        return grip_task(domain, source, subset, rungs, experiment, template, readability)

    domain_task.__name__ = domain_task.__qualname__ = domain
    domain_task.__doc__ = f"grip {domain if domain != ALL else 'every domain of the store'}: see grip_task."
    return task(name=_namespace() + domain)(domain_task)


def _register_all() -> dict:
    from grip.domains import ids
    return {d: _register(d) for d in [*ids(), ALL]}


TASKS = _register_all()
