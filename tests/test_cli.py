"""The command line: list, show, build, sheet, and one-line errors with exit code 2 on bad input."""
import subprocess
import sys

import pytest
from cli_helpers import one_line_error, run

from grip import domains


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "fake_dots", ("physical", "fakes:DOMAIN"))
    monkeypatch.setattr(domains, "_CACHE", {})
    return "fake_dots"




def test_list_imports_no_domain_module():
    code = ("import sys; from grip.cli import main\n"
            "sys.argv=['grip','list']\n"
            "try:\n    main()\nexcept SystemExit: pass\n"
            "mods=[m for m in sys.modules if m.startswith('grip.domains.')]\n"
            "print('LOADED', mods)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "LOADED []" in out
    for d in domains.REGISTRY:
        assert d in out


def test_build_show_sheet(fake, tmp_path):
    res = run("build", "--domain", fake, "--n", 4, "--out", tmp_path, "--grain-subset", 1)
    assert res.exit_code == 0, res.output
    assert (tmp_path / fake / "items.jsonl").read_text().count("\n") == 4
    res = run("show", fake, "--index", 2, "--out", tmp_path / "one.png")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "one.png").stat().st_size > 1000
    assert res.output.count("answer:") == 6 and "margin:" in res.output
    res = run("sheet", fake, "--n", 4, "--out", tmp_path / "sheet.png")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "sheet.png").stat().st_size > 1000


@pytest.mark.parametrize("args", [
    ["build", "--domain", "no_such_domain", "--n", "3"],
    ["build", "--domain", "fake_dots", "--n", "0"],
    ["build", "--domain", "fake_dots", "--n", "-5"],
    ["build", "--domain", "fake_dots", "--n", "3", "--level", "7"],
    ["build", "--domain", "fake_dots", "--n", "3", "--grain-subset", "lots"],
    ["show", "no_such_domain"],
    ["sheet", "fake_dots", "--n", "0", "--out", "x.png"],
])
def test_bad_input_is_one_line(fake, tmp_path, args):
    one_line_error(run(*args, *([] if args[0] != "build" else ["--out", tmp_path])))


def test_unwritable_output(fake, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    one_line_error(run("build", "--domain", fake, "--n", 2, "--out", blocker / "sub"))


def test_corrupt_or_foreign_items_untouched(fake, tmp_path):
    d = tmp_path / fake
    d.mkdir()
    (d / "items.jsonl").write_text('{"hello": "world"}\n')
    one_line_error(run("build", "--domain", fake, "--n", 2, "--out", tmp_path))
    assert (d / "items.jsonl").read_text() == '{"hello": "world"}\n'
    (d / "items.jsonl").write_text("garbage\n")
    one_line_error(run("build", "--domain", fake, "--n", 2, "--out", tmp_path))
    assert (d / "items.jsonl").read_text() == "garbage\n"


def test_check_passes_good_and_fails_broken_domains(fake, monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "fake_broken", ("physical", "fakes:BROKEN_DOMAIN"))
    res = run("check", fake)
    assert res.exit_code == 0 and "ok" in res.output, res.output
    res = run("check", "fake_broken")
    assert res.exit_code == 1 and "FAIL" in res.output and "counterfactual" in res.output, res.output


def test_row_with_wrong_types_is_corrupt(fake, tmp_path):
    run("build", "--domain", fake, "--n", 2, "--out", tmp_path)
    items = tmp_path / fake / "items.jsonl"
    bad = items.read_text().replace('"image":"images/fake_dots_000001.png"', '"image":5')
    items.write_text(bad)
    one_line_error(run("build", "--domain", fake, "--n", 3, "--out", tmp_path))
    assert items.read_text() == bad
    one_line_error(run("sheet", fake, "--n", 1, "--cell", 0, "--out", tmp_path / "s.png"))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_domain_defect_during_build_is_one_line_and_keeps_nothing_half_written(monkeypatch, tmp_path, workers):
    monkeypatch.setitem(domains.REGISTRY, "fake_out_of_space", ("physical", "fakes:OUT_OF_SPACE_DOMAIN"))
    monkeypatch.setattr(domains, "_CACHE", {})
    res = run("build", "--domain", "fake_out_of_space", "--n", 3, "--out", tmp_path, "--workers", workers)
    one_line_error(res)
    assert "outside its declared space" in res.output and "bug in the domain" in res.output
    rows = tmp_path / "fake_out_of_space" / "items.jsonl"
    assert not rows.exists() or rows.read_text() == ""


@pytest.mark.parametrize("args", [
    ["build", "--domain", "gear_trains", "--n", "many"],
    ["build", "--domain"],
    ["no_such_command"],
    ["sheet", "gear_trains", "--out", "/tmp", "--n", "2"],
    ["eval", "run", "--experiment", "e1"],
])
def test_usage_errors_are_one_line_too(args):
    one_line_error(run(*args))


def test_bare_grip_prints_its_help():
    res = run()
    assert res.exit_code == 0 and "Usage:" in res.output and "build" in res.output
