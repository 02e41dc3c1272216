"""Protocol options: the no-tolerance prompt template (selectable per run, part of the request key, recorded and
reported), `grip eval score` / `grip eval report` defaulting to the item folder the run used, and the `--model` /
`--experiment` filters. Through the CLI, against the local scripted server."""
import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import no_report_figures, ok, one_line_error, run
from openai_server import ScriptedServer, check_isolation, text_of, truth_index

from grip.eval.prompts import (
    TEMPLATE_NO_TOLERANCE,
    TEMPLATES,
    PublicItem,
    TemplateError,
    build_messages,
    prompt_text,
)
from grip.manifest import load_store

SNAPSHOT = Path(__file__).parent / "snapshots" / "prompt_v1-no-tolerance.json"
TINY_PNG = b"\x89PNG\r\n\x1a\n" + b"not really pixels"
DOMAIN = "clock_reading"   # rungs with an absolute tolerance, a record with one, and the exact-count kinds

# Each shape of instruction a store carries, plus every tolerance wording `grip.answers` writes.
SNAPSHOT_CASES = [
    ("Which hour has the clock's hour hand most recently passed? Give it as a number from 1 to 12.",
     "Answer with a whole number. End with a line `ANSWER: ...`."),
    ("What angle does the minute hand make with 12 o'clock?",
     "Answer with a number in degrees, rounded to 1 decimal place; ±2 degrees is accepted. End with a line "
     "`ANSWER: ...`."),
    ("How fast does gear E turn?",
     "Answer with a number in rpm, rounded to 1 decimal place; within 1% is accepted. End with a line `ANSWER: ...`."),
    ("What is the reading?", "Answer with a number in units, rounded to a whole number; only the exact value is "
                             "accepted."),
    ("How long until the hands next overlap?",
     ("Explain your reasoning on a line starting `JUSTIFICATION:`, give your confidence from 0 to 100 on a line "
      "starting `CONFIDENCE:`, and end with a line `ANSWER: ...`. Answer in the form `hour=<hour>; minute=<minute>`. "
      "For hour: answer with a whole number. For minute: answer with a number in minutes, rounded to 1 decimal "
      "place; ±0.5 minutes is accepted.")),
]


def _item(text, instruction, template=TEMPLATE_NO_TOLERANCE):
    return PublicItem("d_000000", "d", "fam", 1, "observe", "q_id", text, instruction,
                      Path("/nowhere/d_000000.png"), "0" * 64, template)


def _rendered():
    return [build_messages(_item(t, i), TINY_PNG) for t, i in SNAPSHOT_CASES]


def test_no_tolerance_template_is_frozen_by_snapshot():
    """GRIP_WRITE_PROMPT_SNAPSHOT=1 writes the entry; afterwards the wording never changes."""
    if os.environ.get("GRIP_WRITE_PROMPT_SNAPSHOT") == "1":
        SNAPSHOT.write_text(json.dumps({TEMPLATE_NO_TOLERANCE: _rendered()}, indent=2, ensure_ascii=False) + "\n")
    snap = json.loads(SNAPSHOT.read_text())
    assert _rendered() == snap[TEMPLATE_NO_TOLERANCE], (
        f"template {TEMPLATE_NO_TOLERANCE} changed; a released template is frozen: add a new version instead")


def test_no_tolerance_template_reads_as_intended():
    """By hand, independent of the snapshot: the tolerance clause goes, the rounding and the ANSWER line stay."""
    texts = [m[0]["content"][1]["text"] for m in _rendered()]
    assert texts[1] == ("What angle does the minute hand make with 12 o'clock?\n\nAnswer with a number in degrees, "
                        "rounded to 1 decimal place. End with a line `ANSWER: ...`.")
    assert texts[2].endswith("rounded to 1 decimal place. End with a line `ANSWER: ...`.")
    assert texts[3] == ("What is the reading?\n\nAnswer with a number in units, rounded to a whole number. End with "
                        "a line `ANSWER: ...`.")
    assert texts[4].endswith("rounded to 1 decimal place.") and "0.5" not in texts[4]
    assert texts[0] == prompt_text(*SNAPSHOT_CASES[0])   # nothing to take out: the same text as v1
    for t in texts:
        assert "accepted" not in t and "±" not in t and "%" not in t


def test_unknown_tolerance_wording_and_unknown_template_are_errors():
    with pytest.raises(TemplateError, match="cannot take the tolerance out"):
        prompt_text("How far?", "Answer in metres; anything near is accepted.", TEMPLATE_NO_TOLERANCE)
    with pytest.raises(TemplateError, match="unknown template 'v9'"):
        prompt_text("How far?", "Answer in metres.", "v9")


def test_every_store_instruction_loses_its_tolerance(eval_items):
    for d in sorted(p.name for p in eval_items.iterdir() if (p / "items.jsonl").is_file()):
        for row in load_store(eval_items / d):
            for q in row["questions"]:
                v1 = prompt_text(q["text"], q["instruction"])
                nt = prompt_text(q["text"], q["instruction"], TEMPLATE_NO_TOLERANCE)
                assert "accepted" not in nt and "±" not in nt
                if "accepted" not in v1:
                    assert nt == v1


# --- through the CLI -----------------------------------------------------------------------------------------------

def _answer_zero(req):
    return "ANSWER: 0"


@pytest.fixture(scope="module")
def world(eval_items, tmp_path_factory):
    """One store: the scripted model asked with both templates on one domain, and a `random` trial run."""
    tmp = tmp_path_factory.mktemp("protocol")
    store = tmp / "responses.sqlite"
    srv = ScriptedServer(model=_answer_zero).start()
    try:
        common = ("--experiment", "e1", "--items", eval_items, "--domain", DOMAIN, "--model", "scripted",
                  "--base-url", srv.url, "--store", store, "--quiet")
        ok(run("eval", "run", *common, "--template", TEMPLATE_NO_TOLERANCE))
        sent_notol = [text_of(r.json) for r in srv.requests]
        ok(run("eval", "run", *common))
        sent_v1 = [text_of(r.json) for r in srv.requests][len(sent_notol):]
    finally:
        srv.stop()
    problems = check_isolation(srv.requests, truth_index([eval_items]))
    assert not problems, "\n".join(problems[:10])
    ok(run("eval", "run", "--experiment", "e1", "--items", eval_items, "--domain", DOMAIN, "--model", "random",
           "--store", store, "--quiet"))
    with sqlite3.connect(store) as db:
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute("SELECT key, model, template_version, request, item_id, question_id "
                                            "FROM responses")]
    return {"items": eval_items, "store": store, "tmp": tmp, "rows": rows, "sent_notol": sent_notol,
            "sent_v1": sent_v1}


def test_template_is_sent_recorded_and_keyed(world):
    """Both templates' requests are sent and stored apart: no key shared, each row records its template, and the
    no-tolerance texts state no tolerance where the v1 texts do."""
    notol, v1 = world["sent_notol"], world["sent_v1"]
    n = len(load_store(world["items"] / DOMAIN)) * 5
    assert len(notol) == len(v1) == n   # the second template is not skipped as "already stored"
    assert any("is accepted" in t for t in v1)
    assert not any("is accepted" in t or "±" in t for t in notol)
    scripted = [r for r in world["rows"] if r["model"] == "scripted"]
    assert len(scripted) == 2 * n and len({r["key"] for r in scripted}) == 2 * n
    by_template = {t: [r for r in scripted if r["template_version"] == t] for t in TEMPLATES}
    assert {t: len(v) for t, v in by_template.items()} == {"v1": n, TEMPLATE_NO_TOLERANCE: n}
    for t, rs in by_template.items():
        assert all(json.loads(r["request"])["template"] == t for r in rs)
    # same questions under both templates
    assert ({(r["item_id"], r["question_id"]) for r in by_template["v1"]}
            == {(r["item_id"], r["question_id"]) for r in by_template[TEMPLATE_NO_TOLERANCE]})


def test_score_and_report_default_to_the_run_paths_and_show_the_template(world, tmp_path, monkeypatch):
    """No --items on score or report: the store remembers the item folder the run used (absolute, so another
    working folder does not matter), the scored rows carry it on to the report, which lists the templates."""
    monkeypatch.chdir(tmp_path)
    scored, report = tmp_path / "scored.jsonl", tmp_path / "report"
    ok(run("eval", "score", "--store", world["store"], "--out", scored))
    rows = [json.loads(ln) for ln in scored.read_text().splitlines()]
    assert {r["items_dir"] for r in rows} == {str(world["items"].resolve())}
    assert {r["model"] for r in rows} == {"scripted [template_version=v1]",
                                         f"scripted [template_version={TEMPLATE_NO_TOLERANCE}]", "random"}
    with no_report_figures():   # the Runs table and stats.json are read, no figure
        ok(run("eval", "report", "--scored", scored, "--out", report, "--resamples", 100))
    md = (report / "report.md").read_text()
    runs = md.split("## Runs", 1)[1].split("\n## ", 1)[0]
    assert re.search(rf"\| scripted \[template_version={TEMPLATE_NO_TOLERANCE}\] \| e1 \| \d+ \| "
                     rf"{TEMPLATE_NO_TOLERANCE} \|", runs), runs
    assert re.search(r"\| random \| e1 \| \d+ \| v1 \|", runs), runs
    st = json.loads((report / "stats.json").read_text())
    assert {(u["model"], u["template_version"]) for u in st["runs"]} == {
        ("scripted [template_version=v1]", "v1"),
        (f"scripted [template_version={TEMPLATE_NO_TOLERANCE}]", TEMPLATE_NO_TOLERANCE), ("random", "v1")}


def test_model_and_experiment_filters(world, tmp_path):
    """--model keeps one model (by name, or by label for one configuration); a filtered-out trial run leaves no
    trace in the scored rows or the report, and its labels no longer split the kept model."""
    scored, report = tmp_path / "scored.jsonl", tmp_path / "report"
    ok(run("eval", "score", "--store", world["store"], "--out", scored, "--model", "random", "--experiment", "e1"))
    rows = [json.loads(ln) for ln in scored.read_text().splitlines()]
    assert rows and {r["model"] for r in rows} == {"random"}
    label = f"scripted [template_version={TEMPLATE_NO_TOLERANCE}]"
    ok(run("eval", "score", "--store", world["store"], "--out", scored, "--model", label))
    rows = [json.loads(ln) for ln in scored.read_text().splitlines()]
    assert {(r["model"], r["template_version"]) for r in rows} == {("scripted", TEMPLATE_NO_TOLERANCE)}
    # the report filters scored rows the same way
    ok(run("eval", "score", "--store", world["store"], "--out", scored))
    with no_report_figures():   # report.md's text and stats.json are read, no figure
        ok(run("eval", "report", "--scored", scored, "--out", report, "--resamples", 100, "--model", "scripted"))
    md = (report / "report.md").read_text()
    assert "random" not in md and "scripted [template_version=v1]" in md
    st = json.loads((report / "stats.json").read_text())
    assert {u["model_name"] for u in st["runs"]} == {"scripted"}


def test_one_line_errors(world, tmp_path):
    store, items = world["store"], world["items"]
    one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random", "--store",
                       tmp_path / "s.sqlite", "--template", "v9"), r"--template 'v9'.*v1, v1-no-tolerance")
    one_line_error(run("eval", "score", "--store", store, "--out", tmp_path / "x.jsonl", "--model", "nosuch"),
                   r"no responses of model 'nosuch'.*'random'")
    one_line_error(run("eval", "score", "--store", store, "--out", tmp_path / "x.jsonl", "--experiment", "e9"),
                   r"unknown experiment 'e9'")
    one_line_error(run("eval", "score", "--store", store, "--out", tmp_path / "x.jsonl", "--experiment", "e2"),
                   r"no responses stored for e2")
    one_line_error(run("eval", "score", "--store", store, "--out", tmp_path / "x.jsonl", "--model", ""),
                   r"--model must name a model")
    scored = tmp_path / "scored.jsonl"
    ok(run("eval", "score", "--store", store, "--out", scored))
    one_line_error(run("eval", "report", "--scored", scored, "--out", tmp_path / "r", "--model", "nosuch"),
                   r"no responses of model 'nosuch'")
    one_line_error(run("eval", "report", "--scored", scored, "--out", tmp_path / "r", "--experiment", "e9"),
                   r"unknown experiment 'e9'")
    # scored rows that do not record their item folder (an older grip): --items is then required
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({k: v for k, v in json.loads(ln).items() if k != "items_dir"}) + "\n"
                           for ln in scored.read_text().splitlines()))
    one_line_error(run("eval", "report", "--scored", old, "--out", tmp_path / "r"), r"give --items")
    with no_report_figures():   # only that the report is made
        ok(run("eval", "report", "--scored", old, "--out", tmp_path / "r", "--items", items, "--resamples", 100))
    # a store no run has recorded an item folder in: --items is required, said in one line
    bare = tmp_path / "bare.sqlite"
    src, dst = sqlite3.connect(store), sqlite3.connect(bare)
    src.backup(dst)
    src.close()
    dst.execute("DELETE FROM meta WHERE k='run_defaults'")
    dst.commit()
    dst.close()
    one_line_error(run("eval", "score", "--store", bare, "--out", tmp_path / "y.jsonl"), r"--items is required")
    ok(run("eval", "score", "--store", bare, "--out", tmp_path / "y.jsonl", "--items", items))
