"""grip as an inspect_ai task (grip.integrations.inspect): the samples are grip's own E1/E2 requests (the exact PNG
bytes and prompt text, no answer, margin or scene in the input), the scorer is grip's, and the scores inspect gives
equal `grip eval score` on the same replies: through inspect's mockllm model with scripted outputs, and through a
real local OpenAI-compatible server that both `grip eval run` and inspect's openai provider talk to."""
import base64
import hashlib
import json
from importlib.metadata import entry_points

import numpy as np
import pytest
from cli_helpers import ok, run
from openai_server import (ALLOWED_FIELDS, Recorded, ScriptedServer, check_isolation, image_of, text_of,
                           truth_index, truth_strings)

from grip import GripError
from grip.answers import Record, answer_from_json
from grip.builder import build
from grip.eval.experiments import ExperimentError
from grip.eval.prompts import prompt_text
from grip.eval.runner import Sampling

# inspect's own retry set-up warns on every model it makes (tenacity's renamed argument): not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

inspect_ai = ModelOutput = ModelUsage = get_model = gi = None   # set by `_inspect` before the first test here


@pytest.fixture(scope="module", autouse=True)
def _inspect():
    """inspect_ai and grip's integration of it, imported when this file's tests run rather than when the file is
    collected: the import takes seconds and every xdist worker collects every file. Without inspect_ai every test
    here is skipped, as the whole file was."""
    global inspect_ai, ModelOutput, ModelUsage, get_model, gi
    inspect_ai = pytest.importorskip("inspect_ai",
                                     reason="inspect_ai is not installed (pip install grip-bench[inspect])")
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from grip.integrations import inspect as gi

SIZES = {"clock_reading": 2, "compass_bearings": 2}
GRAIN = {"clock_reading": 2, "compass_bearings": 0}   # E2 is tested on clock_reading
INSPECT_VALUE = {"C": "correct", "I": "wrong", "N": "unparsed"}


def intended(domain: str, index: int, position: int) -> str:
    k = (index * 5 + position + len(domain)) % 3
    return ("correct", "wrong", "unparsed")[k]


def reply(row: dict, q: dict) -> str:
    """The scripted model: right, wrong or unreadable by `intended` (it may read the item store; grip may not)."""
    a = answer_from_json(q["answer"])
    what = intended(row["domain"], row["index"], q["position"])
    if what == "unparsed":
        return "I cannot tell from this picture." if q["position"] % 2 else "Looking.\nANSWER: purple elephant"
    if what == "wrong":
        wrong = a.plausible_wrong(np.random.default_rng(row["index"] * 10 + q["position"]))
        return f"Looking closely.\nANSWER: {a.format_value(wrong)}"
    return f"Looking closely.\nANSWER: {a.reference_text()}"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    items = tmp_path_factory.mktemp("inspect_items")
    for d, n in SIZES.items():
        build(d, n, items, grain_subset=GRAIN[d])
    rows = {d: [json.loads(ln) for ln in (items / d / "items.jsonl").read_text().splitlines()] for d in SIZES}
    by_image = {r["sha256"]: r for d in SIZES for r in rows[d]}
    for d in SIZES:
        for r in rows[d]:
            for sha in r["grain_sha256"].values():
                by_image[sha] = r

    def locate(png: bytes, text: str):
        row = by_image[hashlib.sha256(png).hexdigest()]
        return row, next(q for q in row["questions"] if prompt_text(q["text"], q["instruction"]) == text)

    return dict(items=items, rows=rows, locate=locate, logs=tmp_path_factory.mktemp("inspect_logs"))


def _png(data_uri: str) -> bytes:
    head, b64 = data_uri.split(",", 1)
    assert head == "data:image/png;base64"
    return base64.b64decode(b64)


def _parts(sample):
    (msg,) = sample.input
    assert msg.role == "user"
    image, text = msg.content
    assert (image.type, text.type) == ("image", "text")
    return image, text


def test_samples_are_grips_e1_questions_without_ground_truth(world):
    items, rows = world["items"], world["rows"]
    samples = gi.grip_samples("all", source=items)
    want = [(d, r, q) for d in SIZES for r in rows[d] for q in r["questions"] if q["position"] <= 5]
    assert [s.id for s in samples] == [f"{r['id']}/{q['id']}" for _, r, q in want]
    for s, (d, r, q) in zip(samples, want):
        image, text = _parts(s)
        assert _png(image.image) == (items / d / r["image"]).read_bytes()
        assert text.text == prompt_text(q["text"], q["instruction"])
        assert json.loads(s.target) == q["answer"]
        assert s.metadata == {"experiment": "e1", "condition": "sigma0", "domain": d, "family": r["family"],
                              "item_id": r["id"], "question_id": q["id"], "position": q["position"],
                              "rung": q["rung"], "template": "v1", "image_sha256": r["sha256"]}
        shown = json.dumps([m.model_dump() for m in s.input]).replace(image.image, "")
        leaks = [t for t in truth_strings(r) if t in shown]
        assert not leaks, (s.id, leaks[:3])
    # one domain, some rungs (as inspect passes a task arg on the command line), the no-tolerance template
    few = gi.grip_samples("compass_bearings", source=items, rungs="2,4", template="v1-no-tolerance")
    assert [(s.metadata["item_id"], s.metadata["position"]) for s in few] == [
        (r["id"], p) for r in rows["compass_bearings"] for p in (2, 4)]
    q4 = next(q for q in rows["compass_bearings"][0]["questions"] if q["position"] == 4)
    assert _parts(few[1])[1].text == prompt_text(q4["text"], q4["instruction"], "v1-no-tolerance")


def test_e2_samples_follow_grips_readability_gate(world, tmp_path):
    items, rows = world["items"], world["rows"]
    labels = tmp_path / "readability.toml"
    labels.write_text('[domains.clock_reading]\nsigma0 = "readable"\nsigma15 = "readable"\n'
                      'sigma25 = "unreadable"\nsigma40 = "unreadable"\n')
    samples = gi.grip_samples("clock_reading", source=items, experiment="e2", readability=labels, rungs=[1])
    want = [(r, s) for r in rows["clock_reading"] for s in (0, 15)]
    assert [x.id for x in samples] == [f"{r['id']}/{r['questions'][0]['id']}/sigma{s}" for r, s in want]
    for x, (r, s) in zip(samples, want):
        path = items / "clock_reading" / (r["image"] if s == 0 else f"grain/s{s}/{r['id']}.png")
        assert _png(_parts(x)[0].image) == path.read_bytes()
        assert x.metadata["condition"] == f"sigma{s}"
    labels.write_text('[domains.clock_reading]\nsigma0 = "readable"\n')
    with pytest.raises(ExperimentError, match="E2 halted: no readability label"):
        gi.grip_samples("clock_reading", source=items, experiment="e2", readability=labels)


@pytest.mark.parametrize("kwargs, match", [
    ({"experiment": "e3"}, "experiment must be one of e1, e2"),
    ({"rungs": [0, 1]}, "rungs must be some of"),
    ({"rungs": "one"}, "rungs must be some of"),
    ({"rungs": [2.5]}, "rungs must be some of"),
    ({"rungs": []}, "rungs must be some of"),
    ({"domain": "gear_trains"}, "no items for domain"),
    ({"subset": "half"}, "unknown subset"),
])
def test_bad_task_args_are_one_line_errors(world, kwargs, match):
    with pytest.raises(GripError, match=match) as e:
        gi.grip_samples(**{"domain": "all", "source": world["items"], **kwargs})
    assert "\n" not in str(e.value)


def test_mockllm_scores_are_grips(world):
    """Through the registered task name (as `inspect eval grip/clock_reading -T ...` resolves it), with mockllm
    replying by script; every score is grip's outcome of that reply, with grip's sampling defaults sent."""
    seen = []

    def outputs(input, tools, tool_choice, config):
        image, text = input[0].content
        row, q = world["locate"](_png(image.image), text.text)
        seen.append((config.temperature, config.max_tokens, config.top_p, config.seed))
        out = ModelOutput.from_content(model="mockllm/model", content=reply(row, q))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)   # no tokenizer download
        return out

    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    (log,) = inspect_ai.eval("grip/clock_reading", task_args={"source": str(world["items"]), "rungs": "1,2,3"},
                             model=model, log_dir=str(world["logs"]), display="none")
    assert log.status == "success" and log.eval.task == "grip/clock_reading"
    s = Sampling()
    assert set(seen) == {(s.temperature, s.max_tokens, s.top_p, s.seed)}
    rows = {r["id"]: r for r in world["rows"]["clock_reading"]}
    assert len(log.samples) == 3 * len(rows)
    values = []
    for smp in log.samples:
        score = smp.scores["grip_scorer"]
        row = rows[smp.metadata["item_id"]]
        q = next(q for q in row["questions"] if q["id"] == smp.metadata["question_id"])
        a = answer_from_json(q["answer"])
        want = intended("clock_reading", row["index"], q["position"])
        assert INSPECT_VALUE[score.value] == score.metadata["outcome"] == want, smp.id
        assert score.metadata["reference"] == a.reference_text()
        if want == "unparsed":
            assert score.metadata["parsed"] is None and score.explanation
        else:
            assert a.matches(a.parse(smp.output.completion)) == (want == "correct")
            assert score.metadata["parsed"] is not None
        if isinstance(a, Record) and want != "unparsed":
            assert score.metadata["fields"] == a.field_matches(a.parse(smp.output.completion))
            assert all(score.metadata["fields"].values()) == (want == "correct")
        values.append((q["rung"], want == "correct"))
    assert {INSPECT_VALUE[x.scores["grip_scorer"].value] for x in log.samples} == {"correct", "wrong", "unparsed"}
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == pytest.approx(sum(v for _, v in values) / len(values))
    assert metrics["stderr"].value > 0
    per_rung = {k: m.value for k, m in metrics.items() if m.group == "grouped"}
    rungs = {r for r, _ in values}
    assert rungs == {"observe", "relate", "measure"}
    assert per_rung == pytest.approx({r: np.mean([v for x, v in values if x == r]) for r in rungs})


def _without_detail(rec: Recorded) -> Recorded:
    """inspect's openai provider adds `"detail": "auto"` to each image part; grip's isolation audit checks every
    other byte of the request."""
    req = json.loads(rec.body)
    for m in req.get("messages", []):
        for p in m.get("content", []) if isinstance(m.get("content"), list) else []:
            if isinstance(p, dict) and isinstance(p.get("image_url"), dict):
                p["image_url"].pop("detail", None)
    return Recorded(rec.path, rec.headers, json.dumps(req).encode(), req, rec.time)


def test_openai_provider_scores_equal_grip_e1_on_the_same_server(world, tmp_path):
    items = world["items"]

    def model(req):
        return reply(*world["locate"](image_of(req), text_of(req)))

    srv = ScriptedServer(model=model, audit=False).start()   # audited below, less the image `detail` hint
    try:
        store, scored = tmp_path / "responses.sqlite", tmp_path / "scored.jsonl"
        ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "scripted", "--base-url", srv.url,
               "--api-key-env", "GRIP_TEST_KEY", "--store", store, "--quiet", env={"GRIP_TEST_KEY": "sk-local"}))
        grip_sent = len(srv.requests)
        ok(run("eval", "score", "--store", store, "--items", items, "--out", scored))
        m = get_model("openai/scripted", base_url=srv.url, api_key="sk-local", responses_api=False, memoize=False)
        (log,) = inspect_ai.eval(gi.grip_task("all", source=items), model=m, log_dir=str(world["logs"]),
                                 display="none", reasoning_summary="none")
    finally:
        srv.stop()
    assert log.status == "success", log.error
    grip = {(r["item_id"], r["question_id"]): r["outcome"] for r in map(json.loads, scored.read_text().splitlines())}
    got = {(s.metadata["item_id"], s.metadata["question_id"]): INSPECT_VALUE[s.scores["grip_scorer"].value]
           for s in log.samples}
    assert len(grip) == sum(5 * n for n in SIZES.values())
    assert got == grip
    assert set(grip.values()) == {"correct", "wrong", "unparsed"}
    # the same image bytes and text per question, and nothing of the answer key in any request inspect sent

    def asked(recs):
        return sorted((hashlib.sha256(image_of(r.json)).hexdigest(), text_of(r.json)) for r in recs)
    assert asked(srv.requests[grip_sent:]) == asked(srv.requests[:grip_sent])
    sent = [_without_detail(r) for r in srv.requests[grip_sent:]]
    problems = check_isolation(sent, truth_index([items]), ALLOWED_FIELDS | {"max_completion_tokens"})
    assert not problems, "\n".join(problems[:10])


def test_entry_point_registers_grip_tasks():
    """inspect resolves `grip/<name>` by loading the `inspect_ai` entry point named after the package: ours must
    exist, load this module, and the module must hold a task registered under that name for every domain."""
    from inspect_ai._util.registry import registry_info, registry_lookup
    (ep,) = [ep for ep in entry_points(group="inspect_ai") if ep.name == "grip"]
    assert ep.load() is gi
    from grip.domains import ids
    assert set(gi.TASKS) == set(ids()) | {"all"}
    for d in ("gear_trains", "clock_reading", "all"):
        assert registry_info(gi.TASKS[d]).name == f"grip/{d}"
        assert registry_lookup("task", f"grip/{d}") is gi.TASKS[d]
