"""The builder: item rows, determinism across worker counts, resume after interruption, grain, bad stores."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from grip import GripError, domains
from grip.builder import build
from grip.manifest import StoreError, load_store
from grip.renderers.canvas import decode_png, png_chunk_types

HERE = Path(__file__).parent


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "fake_dots", ("physical", "fakes:DOMAIN"))
    monkeypatch.setattr(domains, "_CACHE", {})
    return "fake_dots"


def tree_bytes(root: Path) -> dict:
    """Every file under root except build.json (which records timings), by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "build.json"}


def test_rows_carry_the_whole_ladder(fake, tmp_path):
    res = build(fake, 9, tmp_path, grain_subset=2)
    rows = load_store(res.domain_dir)
    assert [r["index"] for r in rows] == list(range(9))
    assert [r["level"] for r in rows] == [1, 2, 3] * 3
    for r in rows:
        assert [q["position"] for q in r["questions"]] == [1, 2, 3, 4, 5, 6]
        for q in r["questions"]:
            assert set(q["margin"]) >= {"value", "unit", "threshold"} and q["margin"]["unit"]
            assert q["margin"]["value"] >= q["margin"]["threshold"]
            assert q["answer"]["type"] in {"count", "number", "choice", "ordered", "record"}
            assert q["instruction"].endswith("ANSWER: ...`.") or q["position"] == 6
        png = (res.domain_dir / r["image"]).read_bytes()
        assert set(png_chunk_types(png)) == {"IHDR", "IDAT", "IEND"}
        assert decode_png(png).shape == (r["height"], r["width"], 3)
        assert r["scene"]["dots"]
    summary = json.loads((res.domain_dir / "build.json").read_text())
    assert summary["items"] == 9
    assert set(summary["questions"]) == {q["id"] for q in rows[0]["questions"]}
    for q in summary["questions"].values():
        assert 0 < q["constant_baseline"]["share"] <= 1
    assert summary["provenance"]["cairo"] and summary["provenance"]["png"].startswith("zlib-ng ") and summary["arguments"]["n"] == 9


def test_same_bytes_whatever_the_worker_count(fake, tmp_path):
    a = build(fake, 14, tmp_path / "a", workers=1, grain_subset=3)
    b = build(fake, 14, tmp_path / "b", workers=2, grain_subset=3)
    ta, tb = tree_bytes(a.domain_dir), tree_bytes(b.domain_dir)
    assert ta == tb
    assert len([k for k in ta if k.startswith("grain/")]) == 9


def test_other_seed_other_items(fake, tmp_path):
    a = load_store(build(fake, 3, tmp_path / "a", seed=0).domain_dir)
    b = load_store(build(fake, 3, tmp_path / "b", seed=1).domain_dir)
    assert [r["scene"] for r in a] != [r["scene"] for r in b]


def test_resume_extends_without_duplicates(fake, tmp_path):
    full = build(fake, 12, tmp_path / "full", grain_subset=4)
    part = tmp_path / "part"
    build(fake, 5, part, grain_subset=4)
    res = build(fake, 12, part, grain_subset=4)
    assert res.resumed == 5 and res.built == 7
    assert tree_bytes(res.domain_dir) == tree_bytes(full.domain_dir)


def test_resume_after_a_cut_short_row(fake, tmp_path):
    full = build(fake, 8, tmp_path / "full", grain_subset=1)
    part = build(fake, 8, tmp_path / "part", grain_subset=1).domain_dir
    items = part / "items.jsonl"
    data = items.read_bytes()
    lines = data.split(b"\n")
    items.write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][:40])  # row 5 half written
    res = build(fake, 8, tmp_path / "part", grain_subset=1)
    assert res.resumed == 5
    assert tree_bytes(part) == tree_bytes(full.domain_dir)


def test_resume_after_sigkill(fake, tmp_path):
    # The kill comes once 20 kB of rows are down (6 of fake_dots' 3.4 kB rows, a few more by the time it lands):
    # 80 items leave some 70 rows, about a second of building, for it to land mid-run.
    n = 80
    out = tmp_path / "killed"
    script = (f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
              "from grip import domains\n"
              "domains.REGISTRY['fake_dots'] = ('physical', 'fakes:DOMAIN')\n"
              "from grip.builder import build\n"
              f"build('fake_dots', {n}, {str(out)!r}, grain_subset=0)\n")
    proc = subprocess.Popen([sys.executable, "-c", script])
    items = out / "fake_dots" / "items.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not items.exists() or items.stat().st_size < 20000):
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert items.exists()
    assert items.read_bytes().count(b"\n") < n, "the kill must land mid-run"
    build(fake, n, out, grain_subset=0)
    full = build(fake, n, tmp_path / "full", grain_subset=0)
    assert tree_bytes(out / "fake_dots") == tree_bytes(full.domain_dir)
    rows = load_store(out / "fake_dots")
    assert len({r["id"] for r in rows}) == n


def test_grain_is_one_field_scaled(fake, tmp_path):
    d = build(fake, 2, tmp_path, grain_subset=1).domain_dir
    assert not (d / "grain/s15/fake_dots_000001.png").exists()
    clean = decode_png((d / "images/fake_dots_000000.png").read_bytes()).astype(int)
    noisy = {s: decode_png((d / f"grain/s{s}/fake_dots_000000.png").read_bytes()).astype(int) for s in (15, 25, 40)}
    offsets = {}
    for s, img in noisy.items():
        unclipped = ((img > 0) & (img < 255)).all(axis=2)
        diff = img - clean
        # monochrome: an integer image plus one float per pixel, rounded, moves every channel alike
        assert (np.ptp(diff[unclipped], axis=1) == 0).all()
        offsets[s] = np.where(unclipped, diff[:, :, 0], 0).astype(float)
    both = (offsets[15] != 0) & (offsets[40] != 0)
    # one field at every sigma: only the magnitude changes
    assert np.corrcoef(offsets[15][both], offsets[40][both])[0, 1] > 0.98
    white = (clean == 255).all(axis=2)
    spread = [np.abs(noisy[s][white] - 255).mean() for s in (15, 25, 40)]
    assert spread[0] < spread[1] < spread[2]


def test_grain_all(fake, tmp_path):
    d = build(fake, 4, tmp_path, grain_subset=None).domain_dir
    assert len(list((d / "grain/s40").glob("*.png"))) == 4


def test_foreign_store_refused(fake, tmp_path):
    build(fake, 3, tmp_path, seed=0)
    before = tree_bytes(tmp_path / "fake_dots")
    with pytest.raises(StoreError, match="another --seed"):
        build(fake, 5, tmp_path, seed=7)
    with pytest.raises(StoreError, match="more than --n"):
        build(fake, 2, tmp_path, seed=0)
    assert tree_bytes(tmp_path / "fake_dots") == before


def test_corrupt_store_refused(fake, tmp_path):
    d = build(fake, 3, tmp_path).domain_dir
    items = d / "items.jsonl"
    items.write_bytes(items.read_bytes().replace(b'"index":1', b'"index":1x', 1))
    before = tree_bytes(d)
    with pytest.raises(StoreError, match="corrupt"):
        build(fake, 5, tmp_path)
    assert tree_bytes(d) == before


def test_bad_arguments(fake, tmp_path):
    with pytest.raises(GripError):
        build(fake, 0, tmp_path)
    with pytest.raises(GripError):
        build(fake, 3, tmp_path, level=4)
    with pytest.raises(KeyError):
        build("no_such_domain", 3, tmp_path)


def test_concurrent_build_into_one_store_refused(fake, tmp_path):
    from grip.manifest import store_lock
    with store_lock(tmp_path / fake):
        with pytest.raises(StoreError, match="another grip build"):
            build(fake, 2, tmp_path)
    assert build(fake, 2, tmp_path).built == 2


def test_rerun_with_a_larger_grain_subset_fills_in(fake, tmp_path):
    build(fake, 5, tmp_path / "a", grain_subset=0)
    a = build(fake, 5, tmp_path / "a", grain_subset=3)
    b = build(fake, 5, tmp_path / "b", grain_subset=3)
    assert tree_bytes(a.domain_dir) == tree_bytes(b.domain_dir)
    assert len(list((a.domain_dir / "grain").rglob("*.png"))) == 9


def test_rerun_with_a_smaller_grain_subset_is_refused_not_misrecorded(fake, tmp_path):
    build(fake, 6, tmp_path, grain_subset=4)
    before = tree_bytes(tmp_path / fake)
    with pytest.raises(GripError, match="grain copies exist for the first 4 items.*--grain-subset 4"):
        build(fake, 6, tmp_path, grain_subset=2)
    assert tree_bytes(tmp_path / fake) == before          # nothing rewritten, build.json still says 4
    summary = json.loads((tmp_path / fake / "build.json").read_text())
    assert summary["grain"]["items"] == 4
    build(fake, 6, tmp_path, grain_subset=4)              # the same subset resumes as before
    build(fake, 8, tmp_path, grain_subset=None)           # a larger one (all) still fills in
    assert len(list((tmp_path / fake / "grain").rglob("*.png"))) == 8 * 3
