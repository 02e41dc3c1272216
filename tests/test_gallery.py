"""The domain gallery (docs/gallery): the checked-in copy is what the code generates now, its pages show each item's
ladder, and `grip gallery` replaces only an earlier gallery."""
from pathlib import Path

import pytest
from cli_helpers import one_line_error, run

from grip import gallery
from grip.builder import make_item
from grip.domains import FAMILIES, REGISTRY

DOCS = Path(__file__).resolve().parent.parent / "docs" / "gallery"


@pytest.fixture(scope="module")
def built():
    es = gallery.entries()
    return es, gallery.gallery_files(es)


def test_checked_in_gallery_is_what_the_code_generates(built, tmp_path):
    _, files = built
    gallery.write_gallery(tmp_path, files)
    fresh = gallery.existing_files(tmp_path)
    assert fresh == set(files)
    checked_in = gallery.existing_files(DOCS)
    stale = sorted(r for r in fresh & checked_in if (DOCS / r).read_bytes() != (tmp_path / r).read_bytes())
    problems = [f"missing: {sorted(fresh - checked_in)}"] * bool(fresh - checked_in) + \
               [f"no longer generated: {sorted(checked_in - fresh)}"] * bool(checked_in - fresh) + \
               [f"differ: {stale}"] * bool(stale)
    assert not problems, "docs/gallery is out of date (" + "; ".join(problems) + "): run `make gallery`"


def test_every_domain_at_every_level_and_the_images_are_the_built_items(built):
    es, files = built
    assert [(e.dom.id, e.level) for e in es] == [(d, lvl) for d in REGISTRY for lvl in (1, 2, 3)]
    assert sum(map(len, files.values())) < 6e6
    # the gallery image is byte for byte the PNG `grip build` writes for that item of seed 0
    for e in [e for e in es if e.dom.id == "nested_squares"]:
        assert files[e.image] == make_item("nested_squares", "0", e.index, None, False).png


def test_family_pages_show_the_whole_ladder(built):
    es, files = built
    e = next(e for e in es if e.dom.id == "gear_trains" and e.level == 2)
    page = files[f"{e.dom.family}.md"].decode()
    assert f'src="{e.image}"' in page and f"grip show gear_trains --index {e.index}" in page
    for q in e.generated.ladder.questions:
        assert gallery._md(q.text) in page
        assert gallery._code(q.answer.reference_text()) in page
        assert gallery._md(gallery.margin_text(q.margin)) in page
        assert q.margin.boundary and q.margin.boundary in gallery.margin_text(q.margin)
    edit = e.generated.ladder.rungs[4].edit
    assert edit and f"*Edit:* {gallery._md(edit)}" in page
    readme = files["README.md"].decode()
    assert readme.startswith(gallery.README_TITLE + "\n\n![") and "(montage.png)" in readme
    for d, (fam, _) in REGISTRY.items():
        assert f"]({fam}.md#{d})" in readme and f"## {d}\n" in files[f"{fam}.md"].decode()


def test_montage_tiles_are_different_domains_from_every_family(built):
    es, _ = built
    tiles = gallery.montage_entries(es, list(FAMILIES))
    assert len(tiles) == gallery.MONTAGE_COLS * gallery.MONTAGE_ROWS
    assert len({t.dom.id for t in tiles}) == len(tiles)
    assert {t.dom.family for t in tiles} == set(FAMILIES)


def test_table_cells_cannot_be_split_or_styled():
    cell = gallery._md("a | b *c* <d> `e` [f](g)")
    assert "|" not in cell.replace("\\|", "") and "<" not in cell and "*" not in cell.replace("\\*", "")
    assert gallery._code("x|y") == "`x\\|y`"


def test_gallery_replaces_only_an_earlier_gallery(tmp_path):
    files = {"README.md": (gallery.README_TITLE + "\n").encode(), "images/a_L1.png": b"png"}
    gallery.write_gallery(tmp_path / "g", files)
    (tmp_path / "g" / "images" / "old_L1.png").write_bytes(b"stale")
    (tmp_path / "g" / "notes.txt").write_text("kept")
    gallery.write_gallery(tmp_path / "g", files)
    assert gallery.existing_files(tmp_path / "g") == set(files)          # the stale image is gone
    assert (tmp_path / "g" / "notes.txt").read_text() == "kept"          # anything else is left alone
    other = tmp_path / "other"
    other.mkdir()
    (other / "README.md").write_text("# My project\n")
    one_line_error(run("gallery", "--out", other), "not a gallery")
    assert (other / "README.md").read_text() == "# My project\n"
    (tmp_path / "file").write_text("x")
    one_line_error(run("gallery", "--out", tmp_path / "file"), "is a file")
