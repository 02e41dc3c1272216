"""The report over degenerate scored files: models with no answered rows, incomplete E1 chains, E2 with no pairs."""
import json

import pytest
from cli_helpers import no_report_figures

from grip.builder import build
from grip.eval.report import write_report

DOMAINS = ("clock_reading", "gear_trains")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("items")
    for d in DOMAINS:
        build(d, 4, out, grain_subset=0)
    return out


def _scored(store, model, outcome, rungs=(1, 2, 3, 4, 5), experiment="e1", condition="sigma0"):
    out = []
    for d in DOMAINS:
        for line in (store / d / "items.jsonl").read_text().splitlines():
            row = json.loads(line)
            for q in row["questions"]:
                if q["position"] in rungs:
                    o = outcome if isinstance(outcome, str) else outcome(row, q)
                    out.append({"experiment": experiment, "condition": condition, "model": model,
                                "item_id": row["id"], "domain": d, "family": row["family"], "index": row["index"],
                                "question_id": q["id"], "position": q["position"], "outcome": o})
    return out


def _report(rows, store, tmp_path, **kw):
    out = tmp_path / "rep"
    path = write_report(rows, store, out, resamples=50, seed=0, **kw)
    st = json.loads((out / "stats.json").read_text())
    return path.read_text(), st, out


def _mixed(row, q):
    return "correct" if (row["index"] + q["position"]) % 3 else "wrong"


@pytest.mark.parametrize("rows_of", [
    lambda s: _scored(s, "dead", "failed"),                                          # every request failed
    lambda s: _scored(s, "dead", "failed") + _scored(s, "good", _mixed),              # mixed with a good model
    lambda s: _scored(s, "m", _mixed, rungs=(1,)),                                    # only rung 1
    lambda s: _scored(s, "m", _mixed, rungs=(3,)),                                    # only rung 3
    lambda s: _scored(s, "m", _mixed, rungs=(1, 2)),                                  # rungs <= 2
    lambda s: _scored(s, "m", "failed", rungs=(1,)) + _scored(s, "m", _mixed, rungs=(2, 3)),
], ids=["all-failed", "failed+good", "rung1", "rung3", "rungs12", "rung1-failed"])
def test_report_is_written_for_empty_cells(store, tmp_path, rows_of):
    md, st, out = _report(rows_of(store), store, tmp_path)
    assert md.startswith("# grip evaluation report")
    for f in ("accuracy_by_rung.png", "family_heatmap.png"):
        assert (out / f).stat().st_size > 0
    e = st["experiments"]["e1"]
    for c in e["rungs"] + e["families_table"]:
        if c["answered"] == 0:
            assert c["accuracy"]["value"] is None and c["adjusted_note"] == "no answered images"
    for c in e["chain"]:
        if c["images"] == 0:
            assert c["rate"]["value"] is None
    if any(c["answered"] == 0 for c in e["rungs"]):
        assert "no answered images" in md


def test_the_good_models_numbers_do_not_change_when_a_dead_model_joins(store, tmp_path):
    good = _scored(store, "good", _mixed)
    with no_report_figures():   # stats only; these rows' figures: test_report_is_written_for_empty_cells[failed+good]
        _, alone, _ = _report(good, store, tmp_path / "a")
        _, both, _ = _report(_scored(store, "dead", "failed") + good, store, tmp_path / "b")
    for t in ("rungs", "families_table", "chain"):
        assert [c for c in both["experiments"]["e1"][t] if c["model"] == "good"] == alone["experiments"]["e1"][t]


def test_e2_with_a_model_that_never_answered_a_grain_condition(store, tmp_path):
    labels = tmp_path / "r.toml"
    labels.write_text("".join(f"[domains.{d}]\n" + "".join(f'sigma{s} = "readable"\n' for s in (0, 15, 25, 40))
                              for d in DOMAINS))
    rows = _scored(store, "m", _mixed, experiment="e2") + _scored(store, "m", "failed", experiment="e2",
                                                                   condition="sigma40")
    md, st, out = _report(rows, store, tmp_path, readability=labels)
    d = [c for c in st["experiments"]["e2"]["deltas"] if c["sigma"] == 40]
    assert d and all(c["pairs"] == 0 and c["delta"]["value"] is None for c in d)
    assert "## E2 grain" in md
