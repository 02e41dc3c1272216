"""Domain versions: every row and build.json record the version of the domain that built them, the card shows it, and
resume and export refuse a store built by another version, so items of two versions are never mixed."""
import dataclasses
import json

import pytest

import fakes
from grip import domains
from grip.builder import build
from grip.hub import export
from grip.manifest import StoreError, load_store


def _register(monkeypatch, version: int) -> str:
    dom = dataclasses.replace(fakes.DOMAIN, version=version)
    monkeypatch.setitem(domains.REGISTRY, "fake_dots", ("physical", "fakes:DOMAIN"))
    monkeypatch.setattr(domains, "_CACHE", {"fake_dots": dom})
    return "fake_dots"


def test_rows_and_build_json_record_the_domain_version(monkeypatch, tmp_path):
    d = _register(monkeypatch, 3)
    res = build(d, 4, tmp_path, grain_subset=1)
    assert {r["version"] for r in load_store(res.domain_dir)} == {3}
    assert json.loads((res.domain_dir / "build.json").read_text())["version"] == 3


def test_resume_refuses_a_store_built_by_another_version(monkeypatch, tmp_path):
    d = _register(monkeypatch, 1)
    build(d, 3, tmp_path, grain_subset=1)
    _register(monkeypatch, 2)
    with pytest.raises(StoreError, match="version 1 of fake_dots.*version 2.*never mixed"):
        build(d, 6, tmp_path, grain_subset=1)
    assert len(load_store(tmp_path / d)) == 3   # nothing appended


def test_a_row_from_before_versions_counts_as_version_1(monkeypatch, tmp_path):
    d = _register(monkeypatch, 1)
    path = tmp_path / d / "items.jsonl"
    build(d, 3, tmp_path, grain_subset=1)
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    for r in rows:
        del r["version"]
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows))
    build(d, 5, tmp_path, grain_subset=1)            # version-1 rows without the field resume under version 1
    assert len(load_store(tmp_path / d)) == 5
    _register(monkeypatch, 2)
    with pytest.raises(StoreError, match="version 1"):
        build(d, 6, tmp_path, grain_subset=1)


def test_export_refuses_a_store_of_another_version_and_the_card_shows_the_version(monkeypatch, tmp_path):
    d = _register(monkeypatch, 2)
    build(d, 3, tmp_path / "out", grain_subset=1)
    export(tmp_path / "out", tmp_path / "hub")
    index = json.loads((tmp_path / "hub" / "grip-export.json").read_text())
    assert index["domains"][d]["version"] == 2
    assert f"| `{d}` | {fakes.DOMAIN.title} | 2 |" in (tmp_path / "hub" / "README.md").read_text()
    _register(monkeypatch, 3)
    with pytest.raises(StoreError, match="version 2 of fake_dots.*version 3"):
        export(tmp_path / "out", tmp_path / "hub2")


@pytest.mark.parametrize("bad", [0, -1, "2", 1.5, True])
def test_a_version_that_is_not_a_whole_number_is_refused(monkeypatch, tmp_path, bad):
    d = _register(monkeypatch, 1)
    build(d, 2, tmp_path, grain_subset=1)
    path = tmp_path / d / "items.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[1]["version"] = bad
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(StoreError, match="version"):
        load_store(tmp_path / d)
