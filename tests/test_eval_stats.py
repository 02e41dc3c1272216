"""Statistics: cluster bootstrap, constant-answer baselines, adjusted and chain-conditional accuracy, grain deltas."""
from collections import Counter

import numpy as np
import pytest

from grip.answers import Choice, Count, Number, answer_from_json
from grip.builder import build
from grip.eval import stats as S
from grip.eval.scoring import AnswerKey, score_response

DOMAINS = ("physical_stability", "gear_trains", "clock_reading")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("items")
    for d in DOMAINS:
        build(d, 12, out, grain_subset=0)
    return out


def _rows(store):
    import json
    for d in DOMAINS:
        for line in (store / d / "items.jsonl").read_text().splitlines():
            row = json.loads(line)
            for q in row["questions"]:
                if q["position"] <= 5:
                    yield row, q


def _scored(row, q, outcome, model="m", condition="sigma0", experiment="e1"):
    return {"experiment": experiment, "condition": condition, "model": model, "item_id": row["id"],
            "domain": row["domain"], "family": row["family"], "index": row["index"], "question_id": q["id"],
            "position": q["position"], "outcome": outcome}


def _fake(domain, item, pos, outcome, condition="sigma0", model="m"):
    return {"experiment": "e1", "condition": condition, "model": model, "item_id": item, "domain": domain,
            "family": "physical", "question_id": f"q{pos}", "position": pos, "outcome": outcome}


# --- the bootstrap ---------------------------------------------------------------------------------------------

def test_bootstrap_resamples_clusters_within_strata():
    # stratum "a" has 3 clusters, "b" has 7: every resample keeps those counts (column 0 and 1 count clusters)
    strata = np.array(["a"] * 3 + ["b"] * 7)
    X = np.stack([(strata == "a").astype(float), (strata == "b").astype(float), np.arange(10.0)], axis=1)
    sums = S.bootstrap_sums(X, strata, 500, seed=1)
    assert np.all(sums[:, 0] == 3) and np.all(sums[:, 1] == 7)
    assert sums[:, 2].std() > 0  # actually resampled
    assert np.array_equal(sums, S.bootstrap_sums(X, strata, 500, seed=1))
    assert not np.array_equal(sums, S.bootstrap_sums(X, strata, 500, seed=2))


def test_bootstrap_intervals_cover_a_known_rate():
    """Clustered data (image effects) with a known population rate 0.3: the 95% interval should contain it in
    about 95% of simulated studies."""
    rng = np.random.default_rng(2024)
    p_true, hits, sims = 0.3, 0, 300
    for k in range(sims):
        # per-image success probability ~ Beta(1.5, 3.5) (mean 0.3), 5 questions per image, 2 domains x 30 images
        p_img = rng.beta(1.5, 3.5, size=60)
        correct = rng.binomial(5, p_img)
        X = np.stack([correct, np.full(60, 5.0)], axis=1)
        strata = np.repeat(["d1", "d2"], 30)
        e = S.estimate(X, strata, lambda s: s[:, 0] / s[:, 1], 400, seed=k)
        hits += e.lo <= p_true <= e.hi
    assert 0.88 <= hits / sims <= 0.99, hits / sims


def test_bootstrap_interval_brackets_the_estimate_on_a_release_sized_cell():
    # speed is measured in benchmarks/, never here: this checks the interval on a cell of release size
    rng = np.random.default_rng(0)
    rows = [_fake(f"d{d}", f"d{d}_{i}", p, "correct" if rng.random() < 0.6 else "wrong")
            for d in range(9) for i in range(70) for p in range(1, 6)]
    assert len(rows) == 3150
    base = {(f"d{d}", p): 0.2 for d in range(9) for p in range(1, 6)}
    cell = S.rate_cell(rows, base, 1_000, seed=0, tag=("release-size",))
    assert cell["accuracy"]["lo"] < cell["accuracy"]["value"] < cell["accuracy"]["hi"]
    assert cell["accuracy"]["hi"] - cell["accuracy"]["lo"] < 0.06   # ~ 4 standard errors of 630 images


# --- baselines -------------------------------------------------------------------------------------------------

def test_number_baseline_finds_a_constant_between_observed_values():
    # 10 and 11 are both within 0.6 of 10.5 (not of each other): the best constant covers two of three items
    b = S.constant_baseline([Number(10.0, 0.6, "cm"), Number(11.0, 0.6, "cm"), Number(30.0, 0.6, "cm")])
    assert b["share"] == pytest.approx(2 / 3)
    c = b["constant"]
    assert Number(10.0, 0.6, "cm").matches(c) and Number(11.0, 0.6, "cm").matches(c)
    # across the wrap: 0 degrees is within 1.5 of both 359 and 1
    b = S.constant_baseline([Number(359.0, 1.5, "deg", period=360.0), Number(1.0, 1.5, "deg", period=360.0),
                             Number(180.0, 1.5, "deg", period=360.0)])
    assert b["share"] == pytest.approx(2 / 3)


def test_choice_and_count_baselines_are_the_modal_share():
    opts = ("left", "right", "balanced")
    answers = [Choice(v, opts) for v in ["left"] * 5 + ["right"] * 3 + ["balanced"] * 2]
    assert S.constant_baseline(answers) == {"share": 0.5, "constant": "left"}
    assert S.constant_baseline([Count(v) for v in (1, 2, 2, 3)])["share"] == 0.5
    assert S.constant_baseline([Count(3)] * 4)["share"] == 1.0


def test_baselines_against_an_independent_constant_answerer(store):
    """For every domain x rung: the baseline is at least the best constant among the reference texts (tried here by
    brute force through the scorer), equal to it unless the rung is numeric (where a constant between values can do
    better), and a constant answerer writing the reported constant scores exactly the baseline."""
    key = AnswerKey(store)
    cells = {}
    for row, q in _rows(store):
        cells.setdefault((row["domain"], q["position"]), []).append((row, q))
    qid = {(row["id"], q["position"]): q["id"] for row, q in _rows(store)}
    bl = S.baselines(key, {c: {r["id"] for r, _ in v} for c, v in cells.items()}, qid)
    for cell, pairs in cells.items():
        answers = [answer_from_json(q["answer"]) for _, q in pairs]
        best = max(sum(score_response(a, f"ANSWER: {t}")["outcome"] == "correct" for a in answers)
                   for t in {a.reference_text() for a in answers}) / len(answers)
        share = bl[cell]["share"]
        assert share >= best - 1e-12, cell
        if not all(isinstance(a, Number) for a in answers):
            assert share == pytest.approx(best), cell
        const = bl[cell]["constant"]
        got = sum(score_response(a, f"ANSWER: {const}")["outcome"] == "correct" for a in answers) / len(answers)
        assert got == pytest.approx(share), (cell, const)


def test_adjusted_accuracy_is_zero_for_the_constant_answerer_and_one_for_a_perfect_one(store):
    key = AnswerKey(store)
    constant, perfect = [], []
    for row, q in _rows(store):
        perfect.append(_scored(row, q, "correct", model="perfect"))
        constant.append((row, q))
    cells = {}
    for row, q in constant:
        cells.setdefault((row["domain"], q["position"]), set()).add(row["id"])
    qid = {(row["id"], q["position"]): q["id"] for row, q in constant}
    bl = S.baselines(key, cells, qid)
    const_rows = []
    for row, q in constant:
        c = bl[(row["domain"], q["position"])]["constant"]
        out = score_response(answer_from_json(q["answer"]), f"ANSWER: {c}")["outcome"]
        const_rows.append(_scored(row, q, out, model="constant"))
    st = S.compute(perfect + const_rows, key, resamples=200, seed=0)
    for cell in st["experiments"]["e1"]["rungs"]:
        if cell["baseline"] is not None and cell["baseline"] >= 1:
            assert cell["adjusted"]["value"] is None and "undefined" in cell["adjusted_note"]
            continue
        want = 1.0 if cell["model"] == "perfect" else 0.0
        assert cell["adjusted"]["value"] == pytest.approx(want, abs=1e-9), cell
    for cell in st["experiments"]["e1"]["families_table"]:
        want = 1.0 if cell["model"] == "perfect" else 0.0
        assert cell["adjusted"]["value"] == pytest.approx(want, abs=1e-9), cell


def test_undefined_adjusted_accuracy_when_the_baseline_is_one():
    rows = [_fake("d", f"i{i}", 1, "correct") for i in range(4)]
    cell = S.rate_cell(rows, {("d", 1): 1.0}, 100, 0, ("x",))
    assert cell["adjusted"]["value"] is None and cell["adjusted_note"] == "undefined: baseline is 1"
    assert S.adjusted(0.5, 1.0) is None and S.adjusted(0.5, 0.0) == 0.5 and S.adjusted(0.5, 0.5) == 0.0


# --- rates by hand ---------------------------------------------------------------------------------------------

def test_failed_requests_are_left_out_of_accuracy_and_unparsed_count_as_not_correct():
    rows = [_fake("d", "i1", 1, "correct"), _fake("d", "i2", 1, "wrong"), _fake("d", "i3", 1, "unparsed"),
            _fake("d", "i4", 1, "failed")]
    cell = S.rate_cell(rows, {("d", 1): 0.25}, 100, 0, ("x",))
    assert (cell["answered"], cell["correct"], cell["wrong"], cell["unparsed"], cell["failed"]) == (3, 1, 1, 1, 1)
    assert cell["accuracy"]["value"] == pytest.approx(1 / 3)
    assert cell["adjusted"]["value"] == pytest.approx((1 / 3 - 0.25) / 0.75)


def test_chain_conditional_by_hand():
    o = {  # image -> outcomes of rungs 1..5
        "a": ["correct", "correct", "correct", "wrong", "correct"],
        "b": ["correct", "wrong", "correct", "correct", "correct"],
        "c": ["correct", "correct", "wrong", "correct", "correct"],
        "d": ["wrong", "correct", "correct", "correct", "correct"],
        "e": ["correct", "failed", "correct", "correct", "correct"],   # left out from k = 2 on
    }
    rows = [_fake("d", img, p + 1, out) for img, outs in o.items() for p, out in enumerate(outs)]
    got = {c["k"]: c for c in (S.chain_cell(rows, k, 200, 0, ("t",)) for k in range(2, 6))}
    # k=2: rung 1 correct on a, b, c (e has rung 2 failed); rung 2 also correct on a, c
    assert (got[2]["images"], got[2]["conditioning"], got[2]["correct"]) == (4, 3, 2)
    assert got[2]["rate"]["value"] == pytest.approx(2 / 3)
    # k=3: rungs 1-2 correct on a, c; rung 3 correct on a
    assert (got[3]["conditioning"], got[3]["correct"]) == (2, 1)
    # k=4: rungs 1-3 correct on a only; its rung 4 is wrong
    assert (got[4]["conditioning"], got[4]["correct"]) == (1, 0)
    assert got[5]["conditioning"] == 0 and got[5]["rate"]["value"] is None


def test_grain_delta_is_paired_within_image():
    zero = [_fake("d", "a", 1, "correct"), _fake("d", "a", 2, "correct"), _fake("d", "b", 1, "wrong"),
            _fake("d", "b", 2, "failed"), _fake("d", "c", 1, "correct")]
    s40 = [_fake("d", "a", 1, "wrong", "sigma40"), _fake("d", "a", 2, "correct", "sigma40"),
           _fake("d", "b", 1, "wrong", "sigma40"), _fake("d", "b", 2, "correct", "sigma40")]
    # pairs: (a,1) c->w, (a,2) c->c, (b,1) w->w; (b,2) failed at 0 and (c,1) missing at 40 are not pairs
    cell = S.delta_cell(zero, s40, 300, 0, ("t",))
    assert cell["pairs"] == 3 and cell["images"] == 2
    assert cell["accuracy_sigma0"] == pytest.approx(2 / 3) and cell["accuracy_sigma"] == pytest.approx(1 / 3)
    assert cell["delta"]["value"] == pytest.approx(-1 / 3)
    assert cell["delta"]["lo"] <= cell["delta"]["value"] <= cell["delta"]["hi"]


def test_compute_tables_match_direct_counts(store):
    rng = np.random.default_rng(3)
    rows = []
    for row, q in _rows(store):
        for m in ("m1", "m2"):
            rows.append(_scored(row, q, rng.choice(["correct", "wrong", "unparsed", "failed"], p=[.5, .3, .1, .1]),
                                model=m))
    st = S.compute(rows, AnswerKey(store), resamples=100, seed=5)
    e = st["experiments"]["e1"]
    assert e["models"] == ["m1", "m2"] and e["domains"] == list(DOMAINS)
    for cell in e["rungs"]:
        sel = [r for r in rows if r["model"] == cell["model"] and r["domain"] == cell["domain"]
               and (cell["rung"] == "all" or r["position"] == cell["rung"])]
        c = Counter(r["outcome"] for r in sel)
        assert (cell["correct"], cell["wrong"], cell["unparsed"], cell["failed"]) == (
            c["correct"], c["wrong"], c["unparsed"], c["failed"])
        answered = c["correct"] + c["wrong"] + c["unparsed"]
        assert cell["accuracy"]["value"] == pytest.approx(c["correct"] / answered)
    # same seed, same intervals; another seed, other intervals
    again = S.compute(rows, AnswerKey(store), resamples=100, seed=5)
    assert again == st
    other = S.compute(rows, AnswerKey(store), resamples=100, seed=6)
    assert [c["accuracy"] for c in other["experiments"]["e1"]["rungs"]] != [c["accuracy"] for c in e["rungs"]]


# --- empty cells: no answered rows, incomplete chains ----------------------------------------------------------

def test_empty_inputs_give_undefined_estimates_not_errors():
    assert S.estimate(np.zeros((0, 2)), np.array([]), S._ratio, 100, 0) == S.Estimate(None, None, None)
    assert S.estimate([], [], S._ratio, 100, 0) == S.Estimate(None, None, None)
    cell = S.rate_cell([_fake("d", f"i{i}", 1, "failed") for i in range(3)], {("d", 1): 0.25}, 100, 0, ("x",))
    assert (cell["answered"], cell["failed"], cell["images"]) == (0, 3, 3)
    assert cell["accuracy"]["value"] is None and cell["adjusted"]["value"] is None and cell["baseline"] is None
    assert cell["adjusted_note"] == "no answered images"
    d = S.delta_cell([_fake("d", "a", 1, "failed")], [_fake("d", "a", 1, "correct", "sigma40")], 100, 0, ("t",))
    assert d["pairs"] == 0 and d["delta"]["value"] is None and d["accuracy_sigma"] is None


@pytest.mark.parametrize("rungs", [(1,), (3,), (1, 2), (2, 3, 4)])
def test_incomplete_chains_have_no_conditional_rate(rungs):
    rows = [_fake("d", f"i{i}", p, "correct") for i in range(4) for p in rungs]
    for k in S.RUNGS[1:]:
        c = S.chain_cell(rows, k, 100, 0, ("t",))
        if all(j in rungs for j in range(1, k + 1)):
            assert c["images"] == 4 and c["rate"]["value"] == 1.0
        else:
            assert (c["images"], c["conditioning"], c["correct"], c["rate"]["value"]) == (0, 0, 0, None)


def test_a_model_with_every_request_failed_leaves_the_other_models_numbers_unchanged(store):
    rng = np.random.default_rng(11)
    good = [_scored(row, q, rng.choice(["correct", "wrong", "unparsed"]), model="good") for row, q in _rows(store)]
    dead = [_scored(row, q, "failed", model="dead") for row, q in _rows(store)]
    alone = S.compute(good, AnswerKey(store), resamples=100, seed=2)["experiments"]["e1"]
    both = S.compute(good + dead, AnswerKey(store), resamples=100, seed=2)["experiments"]["e1"]
    for table in ("rungs", "families_table", "chain"):
        assert [c for c in both[table] if c["model"] == "good"] == alone[table], table
        dead_cells = [c for c in both[table] if c["model"] == "dead"]
        assert dead_cells
        for c in dead_cells:
            v = c["rate"] if table == "chain" else c["accuracy"]
            assert v == {"value": None, "lo": None, "hi": None}
    only_dead = S.compute(dead, AnswerKey(store), resamples=100, seed=2)["experiments"]["e1"]
    assert all(c["answered"] == 0 and c["adjusted_note"] == "no answered images" for c in only_dead["rungs"])
