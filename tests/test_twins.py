"""Swap twins and the rephrased Q4 in the item store: `grip build --twins` writes each item's minimal pair
(twins/<id>.png, the row's `twin`), every row carries `rephrase`, resume checks both, and a plain build is the
build it was before."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil

import numpy as np
import pytest

import fakes
from cli_helpers import one_line_error, run
from grip import builder, domains
from grip import twins as tw
from grip.conformance import _rephrase_holds
from grip.domain import REPHRASE_MAPS, Reject
from grip.manifest import REPHRASE_MAPS as STORE_MAPS
from grip.manifest import StoreError, load_store, validate_row
from grip.renderers.canvas import decode_png

N = 4


def _picky_pair(scene):
    """fake_dots' minimal pair, refused for scenes whose dot A lies in the left third: a twins build must resample."""
    if scene.dots[0][0] < 256:
        raise Reject("no_minimal_pair")
    return fakes.minimal_pair(scene)


# fake_dots with a pickier minimal pair: a plain build never calls it, so its plain items are fake_dots' own.
PICKY = dataclasses.replace(fakes.DOMAIN, minimal_pair=_picky_pair)
D = "fake_dots"


@pytest.fixture(scope="module")
def registered():
    saved = dict(domains.REGISTRY)
    cached = domains._CACHE.pop(D, None)
    domains.REGISTRY[D] = ("physical", "test_twins:PICKY")
    yield
    domains.REGISTRY.clear()
    domains.REGISTRY.update(saved)
    domains._CACHE.pop(D, None)
    if cached is not None:
        domains._CACHE[D] = cached


@pytest.fixture(scope="module")
def stores(registered, tmp_path_factory):
    base = tmp_path_factory.mktemp("twins")
    builder.build(D, N, base / "twins", grain_subset=1, twins=True)
    builder.build(D, 6, base / "plain", grain_subset=2)
    return base


def _rows(path):
    return load_store(path)


def test_twins_build_writes_twin_images_and_rows(stores):
    d = stores / "twins" / D
    dom = PICKY
    rows = _rows(d)
    assert len(rows) == N
    for r in rows:
        t = r["twin"]
        png = (d / t["image"]).read_bytes()
        assert t["image"] == f"twins/{r['id']}.png" and hashlib.sha256(png).hexdigest() == t["sha256"]
        twin_rgb, item_rgb = decode_png(png), decode_png((d / r["image"]).read_bytes())
        assert twin_rgb.shape == item_rgb.shape == (768, 768, 3)
        scene = dom.scene_from_json(r["scene"])
        twin = dom.minimal_pair(scene)
        assert t["scene"] == json.loads(json.dumps(dom.scene_to_json(twin)))
        assert t["questions"] == json.loads(json.dumps([q.to_json() for q in dom.ladder(twin).questions]))
        assert t["questions"][3]["answer"] != r["questions"][3]["answer"]   # the pair changes Q4
        (x, y) = r["scene"]["dots"][0]
        assert t["edit"] == [{"path": "dots[0][0]", "from": x, "to": 768 - x}]
        assert t["margin_min"] == dom.ladder(twin).margin_min()
        assert 0 < t["changed_fraction"] < 0.1 and 0.5 < t["ssim"] < 1
        assert t["changed_fraction"] == tw.changed_fraction(item_rgb, twin_rgb)


def test_twins_build_resamples_scenes_without_a_minimal_pair(stores):
    twins = _rows(stores / "twins" / D)
    plain = _rows(stores / "plain" / D)
    assert all(r["scene"]["dots"][0][0] >= 256 for r in twins)
    assert sum(r["rejections"].get("no_minimal_pair", 0) for r in twins) > 0
    assert any(r["scene"]["dots"][0][0] < 256 for r in plain)   # so the items differ from a plain build's


def test_rephrase_follows_the_map_for_item_and_twin(stores):
    for r in _rows(stores / "twins" / D):
        for rec in (r, r["twin"]):
            rp = rec["rephrase"]
            assert rp["map"] == "identity" and rp["position"] == 4 and rp["id"] == "left_set_again"
            q4 = rec["questions"][3]
            from grip.answers import answer_from_json
            assert _rephrase_holds(rp["map"], answer_from_json(q4["answer"]), answer_from_json(rp["answer"]))
    assert STORE_MAPS == REPHRASE_MAPS


def test_build_json_carries_twin_stats(stores):
    twins = json.loads((stores / "twins" / D / "build.json").read_text())
    rows = _rows(stores / "twins" / D)
    s = twins["twins"]
    assert s["count"] == N and twins["arguments"]["twins"] is True
    cf = [r["twin"]["changed_fraction"] for r in rows]
    assert s["changed_fraction_max"] == pytest.approx(max(cf), abs=1e-6)
    assert s["changed_fraction_mean"] == pytest.approx(np.mean(cf), abs=1e-6)
    assert s["ssim_mean"] == pytest.approx(np.mean([r["twin"]["ssim"] for r in rows]), abs=1e-6)
    plain = json.loads((stores / "plain" / D / "build.json").read_text())
    assert "twins" not in plain and "twins" not in plain["arguments"]


# Rows of `grip build --domain fake_dots --n 6 --grain-subset 2` as grip wrote them before rows carried `rephrase`
# (image hashes left out: pixels may differ across machines).
PLAIN_ROWS_SHA256 = "2ca3a70a1aa6b0a2b74532bd216e1c7e6b9985b59abd4303f917e01a4af25886"


def test_plain_build_is_the_build_it_was(stores):
    rows = _rows(stores / "plain" / D)
    assert all("twin" not in r and "rephrase" in r for r in rows)
    assert not (stores / "plain" / D / "twins").exists()
    for r in rows:
        r.pop("rephrase")
    strip = [{k: v for k, v in r.items() if k not in ("sha256", "grain_sha256")} for r in rows]
    assert hashlib.sha256(json.dumps(strip, sort_keys=True).encode()).hexdigest() == PLAIN_ROWS_SHA256


def test_resume_of_a_twins_build(stores, tmp_path):
    b = stores / "twins" / D
    a = tmp_path / D
    shutil.copytree(b, a)
    lines = (a / "items.jsonl").read_bytes().splitlines(keepends=True)
    (a / "items.jsonl").write_bytes(b"".join(lines[:-1]) + lines[-1][:40])   # the last row cut short
    (a / "twins" / f"{D}_{N - 1:06d}.png").unlink()
    res = builder.build(D, N, tmp_path, grain_subset=1, twins=True)
    assert (res.resumed, res.built) == (N - 1, 1)
    assert (a / "items.jsonl").read_bytes() == (b / "items.jsonl").read_bytes()
    assert sorted(p.read_bytes() for p in (a / "twins").iterdir()) == sorted(
        p.read_bytes() for p in (b / "twins").iterdir())
    with pytest.raises(StoreError, match="built with --twins and this build is without"):
        builder.build(D, N, tmp_path, grain_subset=1)


def test_resume_refuses_an_edited_twin(stores, tmp_path):
    src = stores / "twins" / D
    d = tmp_path / D
    shutil.copytree(src, d)
    png = d / "twins" / f"{D}_000001.png"
    png.write_bytes(png.read_bytes() + b"x")
    with pytest.raises(StoreError, match=f"twins/{D}_000001.png is missing or differs"):
        builder.build(D, N, tmp_path, grain_subset=1, twins=True)
    shutil.copyfile(src / "twins" / f"{D}_000001.png", png)
    good = (src / "items.jsonl").read_text().splitlines()
    edits = [(lambda r: r["rephrase"].update(text=r["rephrase"]["text"] + " Be brief."), r"\(rephrase: text\)"),
             (lambda r: r["twin"]["questions"][1].update(text="Is dot A left?"), r"\(twin questions: \[1\]\.text\)"),
             (lambda r: r["twin"]["edit"].clear(), r"\(twin edit: \(length\)\)"),
             (lambda r: r["twin"]["scene"]["dots"][0].reverse(), r"\(twin scene: dots\[0\]\[0\]\)")]
    for edit, msg in edits:
        row = json.loads(good[2])
        edit(row)
        (d / "items.jsonl").write_text("\n".join(good[:2] + [json.dumps(row)] + good[3:]) + "\n")
        with pytest.raises(StoreError, match=rf"row {D}_000002 does not match .*{msg}"):
            builder.build(D, N, tmp_path, grain_subset=1, twins=True)


def test_row_validation_of_the_new_fields(stores):
    row = _rows(stores / "twins" / D)[0]
    validate_row(row, "x")
    older = {k: v for k, v in row.items() if k not in ("rephrase", "twin")}
    validate_row(older, "x")   # rows from before these fields still load
    bad = [
        ({**row, "rephrase": {**row["rephrase"], "map": "shuffle"}}, "rephrase is not a question with a map"),
        ({**row, "rephrase": {**row["rephrase"], "position": 2}}, "not at position 4"),
        ({**row, "twin": {k: v for k, v in row["twin"].items() if k != "ssim"}}, "twin is not an object of"),
        ({**row, "twin": {**row["twin"], "image": "images/x.png"}}, "twin image is not twins/"),
        ({**row, "twin": {**row["twin"], "changed_fraction": 1.5}}, "changed_fraction is not a number in 0..1"),
        ({**row, "twin": {**row["twin"], "edit": [{"path": 3}]}}, "edit is not a list of"),
        ({**row, "twin": {**row["twin"], "questions": row["questions"][:5]}}, "twin does not carry five rungs"),
    ]
    for r, msg in bad:
        with pytest.raises(StoreError, match=msg):
            validate_row(r, "x")


def test_twins_cli_and_a_domain_without_minimal_pair(stores, tmp_path, monkeypatch):
    one_line_error(run("build", "--domain", D, "--n", "6", "--out", stores / "plain", "--quiet",
                       "--grain-subset", "2", "--twins"), "built without --twins and this build is with")
    bare = dataclasses.replace(fakes.DOMAIN, id="fake_bare", minimal_pair=None)
    monkeypatch.setattr(fakes, "BARE", bare, raising=False)
    monkeypatch.setitem(domains.REGISTRY, "fake_bare", ("physical", "fakes:BARE"))
    one_line_error(run("build", "--domain", "fake_bare", "--n", "2", "--out", tmp_path, "--twins"),
                   "fake_bare has no minimal_pair")

    def crash(scene):
        return min(())

    monkeypatch.setattr(fakes, "CRASHY", dataclasses.replace(fakes.DOMAIN, id="fake_crashy", minimal_pair=crash),
                        raising=False)
    monkeypatch.setitem(domains.REGISTRY, "fake_crashy", ("physical", "fakes:CRASHY"))
    one_line_error(run("build", "--domain", "fake_crashy", "--n", "2", "--out", tmp_path, "--twins"),
                   r"fake_crashy \(item seed \d+, level 1\): minimal_pair failed \(ValueError: .*bug in the domain")


def test_ssim_and_changed_fraction_by_hand():
    a = np.full((40, 40, 3), 100, np.uint8)
    b = np.full((40, 40, 3), 120, np.uint8)
    c1 = (0.01 * 255) ** 2
    # constant images: no variance, so SSIM is the luminance term alone
    assert tw.ssim(a, b) == pytest.approx((2 * 100 * 120 + c1) / (100 ** 2 + 120 ** 2 + c1), rel=1e-6)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)
    y = x.copy()
    y[:10, :8] = 0
    assert tw.ssim(x, x) == pytest.approx(1.0) and tw.ssim(x, y) == pytest.approx(tw.ssim(y, x))
    assert tw.ssim(x, y) < 1
    assert tw.changed_fraction(x, y) == pytest.approx(np.any(x[:10, :8] != 0, axis=-1).sum() / 1600)
    assert tw.scene_edit({"a": [1, [2, 3]], "b": "x"}, {"a": [1, [2, 4]], "b": "y"}) == [
        {"path": "a[1][1]", "from": 3, "to": 4}, {"path": "b", "from": "x", "to": "y"}]


def test_a_store_from_before_rephrase_resumes_as_it_is(stores, tmp_path):
    d = tmp_path / D
    shutil.copytree(stores / "plain" / D, d)
    rows = [json.loads(ln) for ln in (d / "items.jsonl").read_text().splitlines()]
    old = "".join(json.dumps({k: v for k, v in r.items() if k != "rephrase"}, ensure_ascii=False,
                             separators=(",", ":")) + "\n" for r in rows)
    (d / "items.jsonl").write_text(old)
    res = builder.build(D, 7, tmp_path, grain_subset=2)
    assert (res.resumed, res.built) == (6, 1)
    text = (d / "items.jsonl").read_text()
    assert text.startswith(old) and "rephrase" in text.splitlines()[-1]   # old rows kept, the new one has it
