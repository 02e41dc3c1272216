"""`grip audit`: a clean fake domain passes; a leaky variant, with one planted shortcut of each kind the audit looks
for, fails on each of them."""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

import pytest

import fakes
from cli_helpers import run
from grip import audit, domains
from grip.builder import generate
from grip.domain import Ladder, Reject
from grip.seeding import item_seed, level_for

N = 150
WORDS = {2: "two", 3: "three"}


@dataclass(frozen=True)
class LeakyScene:
    dots: tuple[tuple[int, int], ...]
    level: int
    tint: int   # the fill shade of dot A, 0..1: no answer reads it


def _sample(rng, level):
    s = fakes.sample(rng, level)
    if s.dots[0][0] >= 384 and rng.random() < 0.7:   # dot A mostly left: a_side over its cap
        raise Reject("rebalance")
    tint = int(s.dots[0][0] < 384) if rng.random() < 0.9 else int(rng.integers(2))   # shade follows A's side
    return LeakyScene(s.dots, level, tint)


def _ladder(scene):
    lad = fakes.ladder(fakes.Scene(scene.dots, scene.level))
    r = list(lad.rungs)
    side_b = "left" if scene.dots[1][0] < 384 else "right"
    r[1] = dataclasses.replace(r[1], text=r[1].text + f" (Dot B is drawn on the {side_b}.)")   # gives Q6 away
    if len(scene.dots) < 4:                                                               # gives Q1 away
        r[0] = dataclasses.replace(r[0], text=f"How many dots are there ({WORDS[len(scene.dots)]}, by the way)?")
    return Ladder(tuple(r), lad.open)


LEAKY = dataclasses.replace(fakes.DOMAIN, id="fake_leaky", scene=LeakyScene, sample=_sample, ladder=_ladder,
                            balance_caps=(("a_side", 0.6),))


def _rows(dom, n=N):
    rows = []
    for i in range(n):
        lvl = level_for(i, None)
        seed = item_seed("0", dom.id, i)
        g = generate(dom, seed, lvl, render=False)
        rows.append({"id": f"{dom.id}_{i:06d}", "domain": dom.id, "family": dom.family, "index": i, "seed": seed,
                     "level": lvl, "image": f"images/{dom.id}_{i:06d}.png", "sha256": "0" * 64, "width": 768,
                     "height": 768, "scene": dom.scene_to_json(g.scene), "attempts": g.attempts,
                     "rejections": dict(g.rejections), "margin_min": g.ladder.margin_min(),
                     "questions": [q.to_json() for q in g.ladder.questions]})
    return rows


@pytest.fixture(scope="module")
def results():
    return {"clean": audit.audit_rows("fake_dots", _rows(fakes.DOMAIN), fakes.DOMAIN),
            "leaky": audit.audit_rows("fake_leaky", _rows(LEAKY), LEAKY)}


def test_a_clean_domain_passes(results):
    res = results["clean"]
    assert res.items == N and not res.failed, [f.line("fake_dots") for f in res.failed]
    assert {f.kind for f in res.findings} >= {"balance"}   # notes are still reported


def test_every_planted_leak_is_caught(results):
    bad = {(f.qid, f.kind): f for f in results["leaky"].failed}
    assert ("a_side", "text") in bad and "explain_b" in bad[("a_side", "text")].message
    assert "'drawn'" not in bad[("a_side", "text")].message   # constant words are no feature
    assert ("a_side", "nuisance") in bad and "tint" in bad[("a_side", "nuisance")].message
    assert ("a_side", "balance") in bad and "cap 0.60" in bad[("a_side", "balance")].message
    assert ("n_dots", "blind") in bad
    # the tint follows A's side: it predicts the questions that side decides, and no other
    assert {k[0] for k in bad if k[1] == "nuisance"} <= {"a_side", "left_set"}
    assert ("n_dots", "text") in bad and "n_without_a" in bad[("n_dots", "text")].message


def test_grip_audit_exit_codes_and_lines(tmp_path, monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "fake_leaky", ("physical", "test_audit:LEAKY"))
    monkeypatch.setitem(domains.REGISTRY, "fake_dots", ("physical", "fakes:DOMAIN"))
    for dom in (LEAKY, fakes.DOMAIN):
        d = tmp_path / "out" / dom.id
        d.mkdir(parents=True)
        rows = _rows(dom, 60)
        (d / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = run("audit", tmp_path / "out" / "fake_dots")
    assert res.exit_code == 0 and res.output.startswith("fake_dots: 60 items, 0 above thresholds"), res.output
    res = run("audit", tmp_path / "out")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("fake_dots: 60 items, 0 above") and lines[1].startswith("fake_leaky: 60 items")
    assert all(ln.startswith("  FAIL fake_leaky ") for ln in lines[2:]) and len(lines) > 3
    assert run("audit", tmp_path / "nowhere").exit_code == 2


def test_cramers_v_and_chi_square_by_hand():
    x = [0] * 10 + [1] * 10
    assert audit.cramers_v(x, x) == pytest.approx(1.0)
    # [[6, 4], [4, 6]]: chi2 = 0.8, phi2 = 0.04 below the bias (k-1)(r-1)/(n-1) = 1/19: no association
    y = [0] * 6 + [1] * 4 + [0] * 4 + [1] * 6
    assert audit.cramers_v(x, y) == 0.0
    # [[8, 2], [2, 8]]: chi2 = 7.2, phi2 = 0.36 - 1/19, r~ = k~ = 2 - 1/19
    y = [0] * 8 + [1] * 2 + [0] * 2 + [1] * 8
    assert audit.cramers_v(x, y) == pytest.approx(math.sqrt((0.36 - 1 / 19) / (1 - 1 / 19)))
    assert audit.cramers_v(x, [3] * 20) == 0.0
    assert audit.chisquare_p([10, 20, 30]) == pytest.approx(math.exp(-5))   # chi2 = 10 on 2 degrees of freedom
    assert audit.stratified_v(x * 3, (y * 3), [1] * 60) == pytest.approx(audit.cramers_v(x * 3, y * 3))
    # strata too small to test: the items pooled
    assert audit.stratified_v(x, y, list(range(20))) == pytest.approx(audit.cramers_v(x, y))


def test_grip_build_ends_with_the_audit_line(tmp_path, monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "fake_leaky", ("physical", "test_audit:LEAKY"))
    res = run("build", "--domain", "fake_leaky", "--n", "3", "--out", tmp_path, "--quiet", "--grain-subset", "0")
    last = res.output.splitlines()[-1]
    assert res.exit_code == 0 and last.startswith("audit: no finding above the thresholds over 3 items"), res.output
    (tmp_path / "fake_leaky" / "items.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _rows(LEAKY, 60)))   # as if built: the audit reads the rows only
    from grip.audit import build_summary
    assert build_summary(tmp_path / "fake_leaky").startswith("audit: ") and "above the thresholds over 60" in \
        build_summary(tmp_path / "fake_leaky")


def _plain_blind_hits(qs, keys):
    """The blind score's hits written out: each item's key against its template's other items (a copy of the
    template's counts less the item; the overall counts for a template of one item)."""
    from collections import Counter
    groups, overall, hits = {}, Counter(keys), 0
    for q, k in zip(qs, keys):
        groups.setdefault(q["text"], Counter())[k] += 1
    for q, k in zip(qs, keys):
        g = groups[q["text"]].copy()
        g[k] -= 1
        pool = g if sum(g.values()) else overall
        best = max(pool.values())
        hits += pool[k] == best and best > 0
    return hits


def test_blind_score_equals_the_plain_count():
    import random
    rng = random.Random(7)
    for _ in range(300):
        n, ntext, nkey = rng.randint(2, 40), rng.randint(2, 9), rng.randint(1, 4)
        qs = [{"text": f"t{rng.randrange(ntext)}"} for _ in range(n)]
        vals = [rng.randrange(nkey) if rng.random() < 0.4 else int(q["text"][1:]) % nkey for q in qs]
        res = audit.AuditResult("d", n)
        audit._blind(res, "q", qs, vals)
        keys = [json.dumps(v, sort_keys=True) for v in vals]
        blind = _plain_blind_hits(qs, keys) / n
        const = max(keys.count(k) for k in keys) / n
        if len({q["text"] for q in qs}) >= 2 and blind - const > 0.05:
            assert res.findings and f"scores {blind:.2f} " in res.findings[0].message
        else:
            assert not res.findings


def test_answer_texts_and_scene_leaves_match_their_plain_formulations():
    values = [1, 1.0, True, False, 0, 0.0, -0.0, float("nan"), "a", "a", "é\n", 1, True, 2.5, -0.0, "[1, 2]"]
    assert audit._keys(values) == [json.dumps(v, sort_keys=True) for v in values]
    assert audit._JSON.encode({"b": [1, {"d": 2, "c": 3}], "a": None}) == json.dumps(
        {"b": [1, {"d": 2, "c": 3}], "a": None}, sort_keys=True)

    def plain(obj, path="", depth=0):
        if isinstance(obj, dict):
            for k, v in obj.items():
                yield from plain(v, f"{path}.{k}" if path else k, depth)
        elif isinstance(obj, list):
            if depth < 3:
                for i, v in enumerate(obj[:audit.MAX_LIST_INDEX]):
                    yield from plain(v, f"{path}[{i}]", depth + 1)
        elif obj is not None:
            yield path, obj
    scene = {"a": 1, "b": {"c": [1, [2, [3, [4, 5]]], None, {"d": "x"}], "e": None},
             "f": list(range(9)), "g": [[[[[1]]]]], "h": True}
    assert list(audit._leaves(scene).items()) == list(plain(scene))
    assert audit._leaves(7) == {"": 7} and audit._leaves(None) == {}
