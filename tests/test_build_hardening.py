"""The builder, the item store and the main CLI under attack: killed builds, edited or corrupt stores, outputs that
point at links or devices, huge or odd values, disk full, a closed pipe."""
import dataclasses
import errno
import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import one_line_error, run

import fakes
from grip import domains
from grip import builder, executors, manifest, progress
from grip.builder import build, check_row_regenerates
from grip.domain import Reject
from grip.manifest import StoreError, load_store, sha256_bytes, validate_row

HERE = Path(__file__).parent
REPO = HERE.parent


def _draw_rejecting(scene, canvas):
    if scene.dots[0][0] < 330:   # about 40% of candidates pass sample and margins and are then rejected by draw
        raise Reject("label_clash")
    fakes.draw(scene, canvas)


DRAW_REJECT_DOMAIN = dataclasses.replace(fakes.DOMAIN, id="fake_draw_reject", draw=_draw_rejecting)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "fake_dots", ("physical", "fakes:DOMAIN"))
    monkeypatch.setitem(domains.REGISTRY, "fake_draw_reject",
                        ("physical", "test_build_hardening:DRAW_REJECT_DOMAIN"))
    monkeypatch.setattr(domains, "_CACHE", {})
    return "fake_dots"


def tree_bytes(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "build.json"}


def rows_of(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "items.jsonl").read_text().splitlines()]


def write_rows(d: Path, rows: list[dict]) -> None:
    (d / "items.jsonl").write_bytes(b"".join(manifest.row_line(r) for r in rows))


# --- 1. a killed build leaves no worker behind and resumes ---------------------------------------------------

# The build under test: `grip build` on fake_dots whose workers, once ten rows are on disk, wait at the next draw
# until they are killed, so the kill always lands mid-build with workers busy (what the items are is unchanged).
GATED_CLI = """
import dataclasses, sys, time
sys.path.insert(0, {tests!r})
import fakes
from grip import domains

def gated_draw(scene, canvas):
    while open({items!r}, "rb").read().count(b"\\n") >= 10:
        time.sleep(0.05)
    fakes.draw(scene, canvas)

GATED = dataclasses.replace(fakes.DOMAIN, draw=gated_draw)
domains.REGISTRY["fake_dots"] = ("physical", "__main__:GATED")
from grip.cli import main
sys.argv = ["grip"] + sys.argv[1:]
main()
"""


def _children(pid: int) -> list[int]:
    kids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                kids.append(int(d))
    return kids


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"   # a zombie has let go of everything; only its reaper is missing


@pytest.fixture(scope="module")
def clean_40(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setitem(domains.REGISTRY, "fake_dots", ("physical", "fakes:DOMAIN"))
    try:
        return tree_bytes(build("fake_dots", 40, tmp_path_factory.mktemp("clean"), grain_subset=0,
                                workers=2).domain_dir)
    finally:
        mp.undo()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_build_leaves_no_worker_and_resumes_byte_identical(fake, tmp_path, clean_40, sig):
    out = tmp_path / "killed"
    items = out / fake / "items.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", GATED_CLI.format(tests=str(HERE), items=str(items)), "build",
                             "--domain", fake, "--n", "40", "--out", str(out), "--workers", "2", "--grain-subset",
                             "0", "--quiet"], stderr=open(tmp_path / "stderr", "w"))
    workers = []
    try:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None and (
                len(workers) < 2 or not items.exists() or items.read_bytes().count(b"\n") < 10):
            workers = _children(proc.pid)
            time.sleep(0.01)
        assert proc.poll() is None and len(workers) == 2, (tmp_path / "stderr").read_text()
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        if sig == signal.SIGTERM:   # stopped the way Ctrl-C stops it: one line, no traceback
            err = (tmp_path / "stderr").read_text()
            assert proc.returncode == 2 and "interrupted" in err and "Traceback" not in err, err
        deadline = time.time() + 10
        while time.time() < deadline and any(map(_running, workers)):
            time.sleep(0.02)
        assert not [w for w in workers if _running(w)], "worker processes outlived the killed build"
    finally:
        for w in workers:   # never leave a stray process behind, even when the test fails
            if _running(w):
                os.kill(w, signal.SIGKILL)
    assert 10 <= items.read_bytes().count(b"\n") < 40
    res = build(fake, 40, out, grain_subset=0, workers=2)   # not "being written by another grip build"
    assert res.resumed >= 10
    assert tree_bytes(out / fake) == clean_40


def test_no_more_worker_processes_than_items(fake, tmp_path, monkeypatch):
    started = []

    class Recording(executors._pool_class()):
        def __init__(self, max_workers=None, **kw):
            started.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(executors, "ProcessPoolExecutor", Recording)
    build(fake, 3, tmp_path, workers=builder.max_workers(), grain_subset=0)
    assert started and max(started) <= 3


def test_too_many_workers_refused_before_anything_starts(fake, tmp_path):
    one_line_error(run("build", "--domain", fake, "--n", 3, "--out", tmp_path, "--workers", 100000),
                   r"--workers must be from 1 to \d+")
    assert not (tmp_path / fake).exists()


# --- 2. --out never replaces a link, a device or a fifo ------------------------------------------------------

@pytest.mark.parametrize("cmd", [["show", "fake_dots"], ["sheet", "fake_dots", "--n", "1"]])
def test_show_and_sheet_refuse_links_fifos_and_folders_up_front(fake, tmp_path, monkeypatch, cmd):
    def no_work(*a, **kw):
        raise AssertionError("the item was generated before --out was checked")
    monkeypatch.setattr(builder, "generate", no_work)
    target = tmp_path / "target.png"
    target.write_bytes(b"keep me")
    link = tmp_path / "link.png"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    one_line_error(run(*cmd, "--out", link), "symbolic link")
    one_line_error(run(*cmd, "--out", fifo), "not a regular file")
    one_line_error(run(*cmd, "--out", tmp_path), "folder|directory")
    one_line_error(run(*cmd, "--out", ""), "empty")
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_bytes() == b"keep me"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# --- 3. grain hashes, deep row validation, rows checked against their seeds ----------------------------------

def test_rows_record_the_sha256_of_their_grain_copies(fake, tmp_path):
    d = build(fake, 3, tmp_path, grain_subset=1).domain_dir
    rows = load_store(d)
    for r in rows[:1]:
        assert sorted(r["grain_sha256"], key=int) == ["15", "25", "40"]
        for s, h in r["grain_sha256"].items():
            assert sha256_bytes((d / f"grain/s{s}/{r['id']}.png").read_bytes()) == h
    assert [r["grain_sha256"] for r in rows[1:]] == [{}, {}]
    assert list(rows[0])[list(rows[0]).index("sha256") + 1] == "grain_sha256"


def test_a_larger_grain_subset_rewrites_the_rows_with_the_new_hashes(fake, tmp_path):
    d = build(fake, 3, tmp_path / "a", grain_subset=0).domain_dir
    build(fake, 3, tmp_path / "a", grain_subset=1)
    assert [len(r["grain_sha256"]) for r in load_store(d)] == [3, 0, 0]
    assert tree_bytes(d) == tree_bytes(build(fake, 3, tmp_path / "b", grain_subset=1).domain_dir)
    assert not list(d.rglob(".tmp-*"))


def test_a_store_from_before_grain_hashes_loads_and_resumes_to_the_same_bytes(fake, tmp_path):
    d = build(fake, 3, tmp_path / "old", grain_subset=1).domain_dir
    rows = rows_of(d)
    for r in rows:
        del r["grain_sha256"]
    write_rows(d, rows)
    assert [("grain_sha256" in r) for r in load_store(d)] == [False] * 3
    build(fake, 4, tmp_path / "old", grain_subset=1)
    assert tree_bytes(d) == tree_bytes(build(fake, 4, tmp_path / "new", grain_subset=1).domain_dir)


def test_a_bit_flipped_grain_copy_is_refused_on_resume(fake, tmp_path):
    d = build(fake, 2, tmp_path, grain_subset=1).domain_dir
    png = d / "grain/s25/fake_dots_000000.png"
    data = bytearray(png.read_bytes())
    data[len(data) // 2] ^= 1
    png.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=r"s25/fake_dots_000000.png.*grain_sha256"):
        build(fake, 4, tmp_path, grain_subset=1)
    assert len(rows_of(d)) == 2


def _edit_answer(rows):
    q = rows[1]["questions"][0]           # n_dots, a count: another count is still a valid answer
    q["answer"]["value"] = q["answer"]["value"] + 1 if q["answer"]["value"] < 6 else 2


def _extra_scene_key(rows):
    rows[1]["scene"]["colour"] = "red"


def _edit_text(rows):
    rows[1]["questions"][2]["text"] = "How far apart are A and B, roughly?"


def _edit_margin(rows):
    rows[1]["questions"][1]["margin"]["value"] += 1.0


def _edit_rejections(rows):
    rows[1]["rejections"] = {"dots_too_close": 999}


def _edit_instruction(rows):
    rows[1]["questions"][0]["instruction"] = "Answer with a number. End with a line `ANSWER: ...`."


@pytest.mark.parametrize("edit, field", [
    (_edit_answer, "question n_dots: answer.value"),
    (_extra_scene_key, "scene field colour"),
    (_edit_text, "question ab_distance: text"),
    (_edit_margin, "question a_side: margin.value"),
    (_edit_rejections, "rejections"),
    (_edit_instruction, "question n_dots: instruction"),
])
def test_a_hand_edited_row_is_refused_on_resume_naming_the_row(fake, tmp_path, edit, field):
    d = build(fake, 3, tmp_path, grain_subset=0).domain_dir
    rows = rows_of(d)
    edit(rows)
    write_rows(d, rows)
    before = tree_bytes(d)
    line = one_line_error(run("build", "--domain", fake, "--n", 5, "--out", tmp_path, "--grain-subset", 0))
    assert "line 2" in line and "fake_dots_000001" in line and field in line, line
    assert tree_bytes(d) == before
    with pytest.raises(StoreError, match="fake_dots_000001"):
        check_row_regenerates(rows[1], "here")


def test_a_store_in_another_instruction_wording_still_loads(fake, tmp_path):
    """Reading a store (eval score, report) does not depend on this version's prompt wording; resuming does."""
    d = build(fake, 2, tmp_path, grain_subset=0).domain_dir
    rows = rows_of(d)
    _edit_instruction(rows)
    write_rows(d, rows)
    assert load_store(d)[1]["questions"][0]["instruction"].startswith("Answer with a number.")


def _unknown_type(r):
    r["questions"][0]["answer"]["type"] = "vector"


def _missing_value(r):
    del r["questions"][3]["answer"]["value"]


def _margin_string(r):
    r["questions"][2]["margin"]["value"] = "10"


def _margin_nan(r):
    r["questions"][2]["margin"]["threshold"] = float("nan")


def _choice_outside(r):
    r["questions"][1]["answer"]["value"] = "up"


def _count_as_text(r):
    r["questions"][0]["answer"]["value"] = str(r["questions"][0]["answer"]["value"])


def _record_fields_broken(r):
    r["questions"][5]["answer"]["fields"] = [["side"]]


def _unknown_row_field(r):
    r["note"] = "checked by hand"


def _unknown_question_field(r):
    r["questions"][4]["hint"] = "look left"


def _grain_not_hex(r):
    r["grain_sha256"] = {"15": "not a hash"}


def _grain_other_sigma(r):
    r["grain_sha256"] = {"33": "0" * 64}


def _unit_not_string(r):
    r["questions"][0]["margin"]["unit"] = 5


def _rung_renamed(r):
    r["questions"][0]["rung"] = "counterfactual"


def _bool_for_a_count(r):
    r["questions"][0]["answer"]["value"] = True


def _answer_extra_key(r):
    r["questions"][2]["answer"]["hint"] = "about 100"


@pytest.mark.parametrize("edit", [_unknown_type, _missing_value, _margin_string, _margin_nan, _choice_outside,
                                  _count_as_text, _record_fields_broken, _unknown_row_field,
                                  _unknown_question_field, _grain_not_hex, _grain_other_sigma, _unit_not_string,
                                  _rung_renamed, _bool_for_a_count, _answer_extra_key])
def test_rows_broken_inside_are_one_line_store_errors(fake, tmp_path, edit):
    d = build(fake, 2, tmp_path, grain_subset=0).domain_dir
    rows = rows_of(d)
    edit(rows[1])
    write_rows(d, rows)
    with pytest.raises(StoreError, match="fake_dots_000001") as e:
        load_store(d)
    assert "\n" not in str(e.value)
    one_line_error(run("build", "--domain", fake, "--n", 3, "--out", tmp_path, "--grain-subset", 0),
                   "fake_dots_000001")
    validate_row(rows_of(d)[0], "row 0")   # the untouched row still passes


def test_replay_reproduces_draw_time_rejects(fake, tmp_path):
    d = build("fake_draw_reject", 12, tmp_path, grain_subset=0).domain_dir
    rows = load_store(d)
    assert sum(r["rejections"].get("label_clash", 0) for r in rows) > 0   # draw did reject candidates
    for r in rows:
        check_row_regenerates(r, "here")
    assert build("fake_draw_reject", 14, tmp_path, grain_subset=0).resumed == 12
    r = dict(rows[0], attempts=rows[0]["attempts"] + 1)
    with pytest.raises(StoreError, match="fake_draw_reject_000000"):
        check_row_regenerates(r, "here")


@pytest.mark.parametrize("domain", list(domains.REGISTRY))
def test_every_registered_domain_replays_its_items(domain):
    row = json.loads(json.dumps(builder.make_item(domain, "0", 2, None, False).row))   # level 3
    validate_row(row, domain)
    check_row_regenerates(row, domain)


# --- 4. huge or odd values -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, match", [
    (["build", "--domain", "fake_dots", "--n", "1000000000000"], "--n"),
    (["build", "--domain", "fake_dots", "--n", "10000001"], "--n"),
    (["sheet", "fake_dots", "--out", "s.png", "--cell", "100000"], "--cell"),
    (["sheet", "fake_dots", "--out", "s.png", "--cols", "1e12"], "--cols"),
    (["sheet", "fake_dots", "--out", "s.png", "--cols", "1000000000000"], "--cols"),
    (["sheet", "fake_dots", "--out", "s.png", "--cols", "64", "--cell", "2048"], "px a side"),
    (["sheet", "fake_dots", "--out", "s.png", "--n", "100000"], "--n"),
    (["show", "fake_dots", "--out", ""], "--out"),
    (["show", "fake_dots", "--index", "100000000000000000000"], "--index"),
])
def test_huge_or_odd_values_are_one_line_errors(fake, tmp_path, monkeypatch, args, match):
    monkeypatch.chdir(tmp_path)
    one_line_error(run(*args), match)
    assert not list(tmp_path.iterdir())


def test_a_manifest_with_a_huge_n_is_refused(tmp_path):
    m = tmp_path / "big.toml"
    m.write_text('[release]\nname = "big"\nseed = 0\nn = 1000000000000\n\n[domains.gear_trains]\n')
    one_line_error(run("build", "--manifest", m, "--out", tmp_path / "out"), "n must be at most 10,000,000")
    assert not (tmp_path / "out").exists()


def test_the_cli_bounds_are_the_library_bounds():
    from grip import cli, sheet
    assert (cli.SHEET_MAX_ITEMS, cli.SHEET_CELL, cli.SHEET_MAX_COLS, cli.SHEET_MAX_SIDE_PX) == \
        (sheet.MAX_ITEMS, sheet.CELL_PX, sheet.MAX_COLS, sheet.MAX_SIDE_PX)
    res = run("build", "--help")
    assert "10,000,000" in res.output and "4 per CPU" in res.output


# --- 5. should-fix: cursor, progress lines, empty --out, digits, seeds, disk full, broken pipe ---------------

class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_ctrl_c_during_a_build_gives_the_cursor_back(fake, tmp_path, monkeypatch):
    import click._termui_impl as termui
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    written = []
    real = builder.atomic_write_bytes

    def interrupted_on_the_third(path, data):
        written.append(path)
        if len(written) == 3:
            raise KeyboardInterrupt
        real(path, data)
    monkeypatch.setattr(builder, "atomic_write_bytes", interrupted_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        build(fake, 6, tmp_path, grain_subset=0, progress="bar")
    out = err.getvalue()
    assert termui.BEFORE_BAR in out                     # the bar hid the cursor...
    assert out.endswith(termui.AFTER_BAR)               # ...and showed it again on the way out


def test_without_a_terminal_a_build_prints_progress_lines(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.0)
    res = run("build", "--domain", fake, "--n", 3, "--out", tmp_path / "a", "--grain-subset", 0)
    assert res.exit_code == 0, res.output
    assert "fake_dots: 1/3 items" in res.output and "fake_dots: 3/3 items" in res.output
    res = run("build", "--domain", fake, "--n", 3, "--out", tmp_path / "b", "--grain-subset", 0, "--quiet")
    assert res.exit_code == 0 and "items," not in res.output, res.output


def test_an_empty_out_is_refused_not_the_working_folder(fake, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_line_error(run("build", "--domain", fake, "--n", 2, "--out", ""), "empty")
    one_line_error(run("build", "--domain", fake, "--n", 2, "--out", "  "), "empty")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args", [
    ["build", "--domain", "fake_dots", "--n", "\u0663"],           # Arabic-Indic three
    ["build", "--domain", "fake_dots", "--n", "\uff13"],           # fullwidth three
    ["build", "--domain", "fake_dots", "--n", "1_0"],
    ["build", "--domain", "fake_dots", "--n", " 3"],
    ["build", "--domain", "fake_dots", "--n", "2", "--seed", "\u0661"],
    ["build", "--domain", "fake_dots", "--n", "2", "--workers", "\u0662"],
    ["build", "--domain", "fake_dots", "--n", "2", "--level", "\u0661"],
    ["build", "--domain", "fake_dots", "--n", "2", "--grain-subset", "\u0661"],
    ["show", "fake_dots", "--index", "\u0661"],
    ["sheet", "fake_dots", "--out", "s.png", "--n", "\u0661"],
    ["sheet", "fake_dots", "--out", "s.png", "--start", "\u0661"],
    ["sheet", "fake_dots", "--out", "s.png", "--cell", "\u0664\u0660\u0660"],
    ["sheet", "fake_dots", "--out", "s.png", "--cols", "\u0662"],
    ["export", "out", "--to", "hub", "--core", "\u0662"],
])
def test_integer_options_take_ascii_digits_only(fake, tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    one_line_error(run(*args), "digits 0-9")
    assert not list(tmp_path.iterdir())


def test_a_negative_seed_is_refused_on_the_command_line_as_in_a_manifest(fake, tmp_path):
    one_line_error(run("build", "--domain", fake, "--n", 2, "--seed", -1, "--out", tmp_path), "--seed")
    one_line_error(run("build", "--domain", fake, "--n", 2, "--seed", 2 ** 63, "--out", tmp_path), "--seed")
    m = tmp_path / "neg.toml"
    m.write_text('[release]\nname = "neg"\nseed = -1\nn = 2\ncore = 1\n\n[domains.gear_trains]\n')
    one_line_error(run("build", "--manifest", m, "--out", tmp_path / "rel"), "seed must be >= 0")
    assert not list(tmp_path.glob("*/items.jsonl")) and not (tmp_path / "rel").exists()
    assert run("build", "--domain", fake, "--n", 1, "--seed", 2 ** 63 - 1, "--out", tmp_path,
               "--grain-subset", 0, "--quiet").exit_code == 0


class _FullDisk(io.BytesIO):
    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["image", "items.jsonl"])
def test_disk_full_names_the_path(fake, tmp_path, monkeypatch, where):
    real_open = open

    def full_for(target):
        def fake_open(path, mode="r", *a, **kw):
            if "b" in mode and ("w" in mode or "a" in mode) and target in str(path):
                return _FullDisk()
            return real_open(path, mode, *a, **kw)
        return fake_open
    if where == "image":
        monkeypatch.setattr(manifest, "open", full_for(".tmp-fake_dots_000000.png"), raising=False)
        expect = str(tmp_path / fake / "images" / "fake_dots_000000.png")
    else:
        monkeypatch.setattr(builder, "open", full_for("items.jsonl"), raising=False)
        expect = str(tmp_path / fake / "items.jsonl")
    line = one_line_error(run("build", "--domain", fake, "--n", 2, "--out", tmp_path, "--grain-subset", 0,
                              "--quiet"))
    assert expect in line and "No space left on device" in line, line


def test_a_closed_pipe_ends_quietly():
    r, w = os.pipe()
    os.close(r)   # the reader is gone before grip writes its first line (`grip list | head -0`)
    try:
        proc = subprocess.run([sys.executable, "-c", "from grip.cli import main; main()", "list"], stdout=w,
                              stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=60)
    finally:
        os.close(w)
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr   # click's own quiet exit on EPIPE
