"""`grip eval score`, `grip eval report` and `grip strips` on bad input, through the CLI as a user runs them: odd
numeric options, output paths that are links, devices or empty, and stores that are valid JSON / SQLite but broken
inside. Each is a one-line `grip: error:` (exit 2), never a traceback, and nothing is written through a link."""
import json
import os
import shutil
import sqlite3

import pytest
from cli_helpers import no_report_figures, ok, one_line_error, run

DOMAIN = "clock_reading"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A three-item clock_reading store, an offline E1 run over it, its scored rows."""
    base = tmp_path_factory.mktemp("hardening")
    items, store, scored = base / "items", base / "responses.sqlite", base / "scored.jsonl"
    ok(run("build", "--domain", DOMAIN, "--n", 3, "--out", items, "--quiet"))
    ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random", "--store", store, "--quiet"))
    ok(run("eval", "score", "--store", store, "--items", items, "--out", scored))
    return {"items": items, "store": store, "scored": scored}


def _report(world, out, *extra, scored=None, items=None):
    return run("eval", "report", "--scored", scored or world["scored"], "--items", items or world["items"],
               "--out", out, *extra)


# --- numeric options -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1_000_000_000_000, 1, 0, -1, 99, 100_001])
def test_report_resamples_out_of_bounds(world, tmp_path, n):
    one_line_error(_report(world, tmp_path / "r", "--resamples", n), r"--resamples must be from 100 to 100,000")
    assert not (tmp_path / "r").exists()


def test_report_resamples_at_the_bound_and_seed_range(world, tmp_path):
    with no_report_figures():   # the bound is read from stats.json
        ok(_report(world, tmp_path / "r", "--resamples", 100))
    assert json.loads((tmp_path / "r" / "stats.json").read_text())["resamples"] == 100
    for seed in (-1, 2 ** 63):
        one_line_error(_report(world, tmp_path / "r2", "--seed", seed), "--seed")
    for v in ("nan", "inf", "1e12"):
        one_line_error(_report(world, tmp_path / "r2", "--resamples", v), "--resamples")


def test_strips_index_and_seed_bounds(tmp_path):
    for args in (("--index", 10 ** 12), ("--index", -1), ("--seed", -1), ("--seed", 2 ** 63), ("--index", "nan")):
        one_line_error(run("strips", DOMAIN, *args, "--out", tmp_path / "s.png"), args[0])
    assert not (tmp_path / "s.png").exists()


# --- output paths --------------------------------------------------------------------------------------------

def _bad_outputs(tmp_path):
    """(label, path, check that it is untouched) for each kind of output path that must be refused."""
    target = tmp_path / "target.txt"
    target.write_text("keep me")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.out"
    os.mkfifo(fifo)

    def intact():
        assert link.is_symlink() and target.read_text() == "keep me"
        assert fifo.exists() and not fifo.is_file()
    return [("symlink", link), ("device", "/dev/null"), ("fifo", fifo), ("empty", "")], intact


def test_score_out_refuses_links_devices_and_empty_paths(world, tmp_path):
    cases, intact = _bad_outputs(tmp_path)
    for label, path in cases:
        one_line_error(run("eval", "score", "--store", world["store"], "--items", world["items"], "--out", path),
                       "--out")
    intact()
    one_line_error(run("eval", "score", "--store", world["store"], "--items", world["items"], "--out",
                       world["store"]), "response store itself")


def test_strips_out_refuses_links_devices_and_empty_paths(tmp_path):
    cases, intact = _bad_outputs(tmp_path)
    for label, path in cases:
        one_line_error(run("strips", DOMAIN, "--out", path), "--out")
    intact()


def test_report_out_refuses_links_devices_and_empty_paths(world, tmp_path):
    cases, intact = _bad_outputs(tmp_path)
    real = tmp_path / "real_report"
    real.mkdir()
    (tmp_path / "report_link").symlink_to(real)
    for path in ("", tmp_path / "report_link", tmp_path / "target.txt", "/dev/null"):
        one_line_error(_report(world, path), "--out")
    # Inside the folder: a report file or a figure that is a link or a device is refused, never written through.
    for name in ("stats.json", "report.md", "accuracy_by_rung.png"):
        folder = tmp_path / f"rep_{name}"
        folder.mkdir()
        (folder / name).symlink_to(tmp_path / "target.txt")
        one_line_error(_report(world, folder), "symbolic link")
    intact()
    assert not any(real.iterdir())


# --- broken item stores --------------------------------------------------------------------------------------

def _edited_items(world, tmp_path, edit):
    items = tmp_path / "items"
    shutil.copytree(world["items"], items)
    path = items / DOMAIN / "items.jsonl"
    rows = [json.loads(ln) for ln in path.read_text().splitlines()]
    edit(rows[0])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return items


def _set(q: int, *keys, value=None, delete=False):
    def edit(row):
        d = row["questions"][q]
        for k in keys[:-1]:
            d = d[k]
        if delete:
            del d[keys[-1]]
        else:
            d[keys[-1]] = value
    return edit


BROKEN_ITEMS = {
    "unknown answer type": _set(0, "answer", "type", value="banana"),
    "missing value": _set(0, "answer", "value", delete=True),
    "margin as a string": _set(0, "margin", "value", value="wide"),
    "answer is a list": _set(0, "answer", value=[1]),
    "options not a list": _set(1, "answer", "options", value=7),
    "number value as text": _set(2, "answer", value={"type": "number", "value": "ten", "tol": 1.0, "unit": "min"}),
}


@pytest.mark.parametrize("what", list(BROKEN_ITEMS))
def test_score_and_report_on_a_broken_item_store(world, tmp_path, what):
    items = _edited_items(world, tmp_path, BROKEN_ITEMS[what])
    one_line_error(run("eval", "score", "--store", world["store"], "--items", items, "--out", tmp_path / "s.jsonl"),
                   "clock_reading_000000")
    one_line_error(_report(world, tmp_path / "r", items=items), "clock_reading_000000")
    assert not (tmp_path / "s.jsonl").exists()


# --- broken response stores ----------------------------------------------------------------------------------

BROKEN_RESPONSES = {
    "sampling not JSON": "UPDATE responses SET sampling='{bad' WHERE rowid=1",
    "sampling a list": "UPDATE responses SET sampling='[1, 2]' WHERE rowid=1",
    "usage not JSON": "UPDATE responses SET usage='[' WHERE rowid=1",
    "position as text": "UPDATE responses SET position='two' WHERE rowid=1",
    "position of another question": "UPDATE responses SET position=position % 5 + 1 WHERE rowid=1",
    "content as bytes": "UPDATE responses SET content=x'00ff' WHERE rowid=1",
    "unknown experiment": "UPDATE responses SET experiment='e9' WHERE rowid=1",
    "unknown condition": "UPDATE responses SET condition='sigma15' WHERE rowid=1",
    "unknown status": "UPDATE responses SET status='maybe' WHERE rowid=1",
}


@pytest.mark.parametrize("what", list(BROKEN_RESPONSES))
def test_score_on_a_broken_response_store(world, tmp_path, what):
    store = tmp_path / "responses.sqlite"
    shutil.copy(world["store"], store)
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA ignore_check_constraints=1")
        db.execute(BROKEN_RESPONSES[what])
    one_line_error(run("eval", "score", "--store", store, "--items", world["items"], "--out", tmp_path / "s.jsonl"),
                   "response store|stored response")
    assert not (tmp_path / "s.jsonl").exists()


# --- broken scored files -------------------------------------------------------------------------------------

def _edit_first(**changes):
    return lambda r: r.update(changes)


BROKEN_SCORED = {
    "position as text": _edit_first(position="1"),
    "position of no question": _edit_first(position=9),
    "family of another domain": _edit_first(family="analytic"),
    "family as a number": _edit_first(family=3),
    "unknown outcome": _edit_first(outcome="maybe"),
    "model as a list": _edit_first(model=["a"]),
    "unknown item": _edit_first(item_id="clock_reading_000099"),
}


@pytest.mark.parametrize("what", list(BROKEN_SCORED))
def test_report_on_a_broken_scored_file(world, tmp_path, what):
    rows = [json.loads(ln) for ln in world["scored"].read_text().splitlines()]
    BROKEN_SCORED[what](rows[0])
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in rows))
    one_line_error(_report(world, tmp_path / "r", scored=scored))
    assert not (tmp_path / "r" / "stats.json").exists()


@pytest.mark.parametrize("data", [b"\xff\xfe\x00 not text\n", b"[" * 100_000 + b"]" * 100_000 + b"\n"],
                         ids=["binary", "deeply nested"])
def test_report_on_an_unreadable_scored_file(world, tmp_path, data):
    scored = tmp_path / "scored.jsonl"
    scored.write_bytes(data)
    one_line_error(_report(world, tmp_path / "r", scored=scored), "scored")


@pytest.mark.parametrize("answer", [{"type": "banana", "value": 1}, {"type": "count"}, [1], "x",
                                    {"type": "choice", "value": "a", "options": 7},
                                    {"type": "number", "value": "ten", "tol": 1.0, "unit": "min"},
                                    {"type": "choice", "value": "c", "options": ["a", "b"]},
                                    {"type": "record", "fields": [["x", {"type": "count", "value": []}]]}])
def test_the_scorer_guards_answers_itself(answer):
    """The last guard behind the item store's validation: an answer that cannot be read or lies outside its space
    is a ScoringError naming the item and question, whatever reached the scorer."""
    from grip.eval.scoring import ScoringError, answer_of
    with pytest.raises(ScoringError, match="item i1 question q1"):
        answer_of({"id": "i1"}, {"id": "q1", "answer": answer}, "items/x")
