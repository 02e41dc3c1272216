"""What an adversarial sweep of the Hub paths broke (issue 9), one regression each: hand-edited rows and corrupt
grain copies reach the Hub copy; `--to`/`--out` replace or follow links; export deletes folders it never made;
downloads keep corrupt shards; a shard whose index entry was rewritten to match passes push and download; a push
into a closed pipe. Every Hub request goes to tests/hub_server.py on 127.0.0.1, from a subprocess (see
tests/test_hub.py)."""
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import run

from grip import hub
from grip.builder import build

sys.path.insert(0, str(Path(__file__).parent))
from hub_server import WRITER, Blob, HubServer  # noqa: E402
from test_hub import UPLOADS, grip_cli, hf_env, one_line_error  # noqa: E402

DOMAIN = "gear_trains"
TEST_SHARD = f"{DOMAIN}/test-00000-of-00001.parquet"
GRAIN_SHARD = f"{DOMAIN}/test_grain-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    build(DOMAIN, 3, out, grain_subset=1)
    return out


@pytest.fixture(scope="module")
def exported(store, tmp_path_factory):
    dest = tmp_path_factory.mktemp("hub") / "export"
    hub.export(store, dest, core=2)
    return dest


def tree(root: Path) -> dict:
    """Every file under `root` (hidden folders left out: huggingface_hub's .cache) with its bytes."""
    root = Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)}


def flipped(data: bytes) -> bytes:
    """The same bytes with four in the middle inverted: same size, so only a hash can tell."""
    k = len(data) // 2
    return data[:k] + bytes(b ^ 0xFF for b in data[k:k + 4]) + data[k + 4:]


def flip(p: Path) -> None:
    p.write_bytes(flipped(p.read_bytes()))


def edit_rows(store_dir: Path, fn) -> None:
    p = store_dir / DOMAIN / "items.jsonl"
    rows = [json.loads(line) for line in p.read_text().splitlines()]
    for r in rows:
        fn(r)
    p.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows))


def state(p: Path):
    """What sits at `p`, without following it: file type, link target, and the tree it leads to."""
    st = os.lstat(p)
    link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
    real = p.resolve()
    return stat.S_IFMT(st.st_mode), link, tree(real) if real.is_dir() else None


# --- export refuses what it cannot vouch for (must-fix 7) ----------------------------------------------------

def _count_answer(r):
    q = next(q for q in r["questions"] if q["answer"]["type"] == "count")
    a = q["answer"]
    a["value"] = a["value"] - 1 if a["value"] > a.get("low", 0) else a["value"] + 1


EDITS = {
    "answer_changed": _count_answer,
    "extra_scene_key": lambda r: r["scene"].update(extra=1),
    "question_text_changed": lambda r: r["questions"][2].update(text=r["questions"][2]["text"] + " Really?"),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_export_refuses_a_hand_edited_row(store, tmp_path, case):
    src = tmp_path / "build"
    shutil.copytree(store, src)
    edit_rows(src, lambda r: EDITS[case](r) if r["index"] == 1 else None)
    line = one_line_error(run("export", src, "--to", tmp_path / "hub"))
    assert f"{DOMAIN}_000001" in line or "items.jsonl: line 2" in line, line
    assert not (tmp_path / "hub").exists()


def test_export_refuses_a_bit_flipped_grain_copy(store, tmp_path):
    src = tmp_path / "build"
    shutil.copytree(store, src)
    victim = src / DOMAIN / "grain" / "s25" / f"{DOMAIN}_000000.png"
    flip(victim)
    line = one_line_error(run("export", src, "--to", tmp_path / "hub"))
    assert str(victim) in line and "sha256" in line, line
    assert not (tmp_path / "hub").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]  # no temp folder left either


def test_export_of_a_store_without_grain_hashes_asks_for_a_rebuild(store, tmp_path):
    src = tmp_path / "build"
    shutil.copytree(store, src)
    edit_rows(src, lambda r: r.pop("grain_sha256", None))
    line = one_line_error(run("export", src, "--to", tmp_path / "hub"))
    assert "grain" in line and "rebuild" in line, line
    assert not (tmp_path / "hub").exists()
    plain = tmp_path / "plain"  # no grain copies at all: nothing to vouch for, an old row exports
    build(DOMAIN, 2, plain, grain_subset=0)
    edit_rows(plain, lambda r: r.pop("grain_sha256", None))
    res = run("export", plain, "--to", tmp_path / "hub2")
    assert res.exit_code == 0, res.output
    assert set(json.loads((tmp_path / "hub2" / hub.INDEX_FILE).read_text())["domains"][DOMAIN]["splits"]) == {
        "test", "core"}


# --- --to and --out: nothing but a folder grip wrote, never through a link (must-fix 2) ----------------------

TARGETS = ["link_to_earlier", "link_to_empty_folder", "dangling_link", "file", "fifo"]


def _make_target(case: str, target: Path, earlier: Path) -> None:
    if case == "link_to_earlier":
        real = target.with_name("real")
        shutil.copytree(earlier, real)
        target.symlink_to(real)
    elif case == "link_to_empty_folder":
        target.with_name("real").mkdir()
        target.symlink_to(target.with_name("real"))
    elif case == "dangling_link":
        target.symlink_to(target.with_name("nowhere"))
    elif case == "file":
        target.write_text("precious")
    else:
        os.mkfifo(target)


@pytest.mark.parametrize("case", TARGETS)
def test_export_to_refuses_links_and_what_is_not_a_folder(store, exported, tmp_path, case):
    target = tmp_path / "hub"
    _make_target(case, target, exported)
    before = state(target)
    one_line_error(run("export", store, "--to", target))
    assert state(target) == before
    assert not target.with_name("nowhere").exists()


@pytest.mark.parametrize("case", TARGETS)
def test_download_out_refuses_links_and_what_is_not_a_folder(exported, tmp_path, monkeypatch, case):
    def no_network(*a, **kw):
        raise AssertionError("got past the --out check")
    monkeypatch.setattr(hub, "_download", no_network)
    target = tmp_path / "dl"
    _make_target(case, target, exported)
    before = state(target)
    one_line_error(run("download", "grip-test/x", "--out", target))
    assert state(target) == before
    assert not target.with_name("nowhere").exists()


def test_an_empty_to_or_out_is_refused(store, tmp_path, monkeypatch):
    """Path('') is the working folder: an empty --to or --out must not export or download into it."""
    def no_network(*a, **kw):
        raise AssertionError("got past the --out check")
    monkeypatch.setattr(hub, "_download", no_network)
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    one_line_error(run("export", store, "--to", ""))
    one_line_error(run("download", "grip-test/x", "--out", ""))
    assert list(here.iterdir()) == []


def test_an_earlier_download_is_never_written_through_a_link_inside_it(exported, tmp_path):
    dl, elsewhere = tmp_path / "dl", tmp_path / "elsewhere"
    shutil.copytree(exported, dl)
    shutil.move(dl / DOMAIN, elsewhere)
    (dl / DOMAIN).symlink_to(elsewhere)
    (elsewhere / TEST_SHARD.split("/")[1]).unlink()  # so the download would write one there

    def fetch(dest, paths):
        for rel in paths:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(exported / rel, dest / rel)
    index = json.loads((exported / hub.INDEX_FILE).read_text())
    with pytest.raises(hub.HubError, match="symbolic link"):
        hub._sync(dl, index, None, fetch, "grip-test/r")
    assert not (elsewhere / TEST_SHARD.split("/")[1]).exists()
    assert sorted(p.name for p in dl.iterdir()) == sorted(p.name for p in exported.iterdir())


def test_export_leaves_folders_it_did_not_make_alone(store, tmp_path):
    for name in (".tmp-hub", ".old-hub"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "keep.txt").write_text(name)
    hub.export(store, tmp_path / "hub", core=2)   # a new folder
    hub.export(store, tmp_path / "hub", core=2)   # replacing an earlier export
    assert sorted(p.name for p in tmp_path.iterdir()) == [".old-hub", ".tmp-hub", "hub"]
    for name in (".tmp-hub", ".old-hub"):
        assert (tmp_path / name / "keep.txt").read_text() == name


# --- downloads: corrupt shards re-fetched, never left behind; per-row hashes (should-fix) ---------------------

def forge_row(folder: Path, rel: str) -> str:
    """Change the image bytes of row 0 of shard `rel` (its image_sha256 column left as it was), then rewrite the
    shard's index entry to match the new file: the shard passes every file-level check. Returns the row id."""
    p = folder / rel
    table = pq.read_table(p)
    rows = table.to_pylist()
    rows[0]["image"]["bytes"] = flipped(rows[0]["image"]["bytes"])
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), p)
    index = json.loads((folder / hub.INDEX_FILE).read_text())
    for info in index["domains"].values():
        for split in info["splits"].values():
            for sh in split["shards"]:
                if sh["path"] == rel:
                    sh.update(bytes=p.stat().st_size, sha256=hub._file_sha256(p))
    (folder / hub.INDEX_FILE).write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return rows[0]["id"]


def test_download_refetches_a_corrupt_shard_and_keeps_the_good_ones(exported, tmp_path):
    dl = tmp_path / "dl"
    with HubServer() as server:
        server.add_repo("grip-test/r", tree(exported))
        env = hf_env(tmp_path, server.url)
        proc = grip_cli(env, "download", "grip-test/r", "--out", dl)
        assert proc.returncode == 0, proc.stderr[-2000:]
        victim = dl / TEST_SHARD
        st = victim.stat()
        flip(victim)
        os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))  # as if nothing had touched it
        n = len(server.log)
        proc = grip_cli(env, "download", "grip-test/r", "--out", dl)
        assert proc.returncode == 0, proc.stderr[-2000:]
        fetched = server.get_paths(n)
    assert tree(dl) == tree(exported)
    assert TEST_SHARD in fetched and GRAIN_SHARD not in fetched, fetched


def test_a_failed_download_leaves_no_corrupt_shard(exported, tmp_path):
    dl = tmp_path / "dl"
    shutil.copytree(exported, dl)            # an earlier download, one shard of it since lost
    (dl / TEST_SHARD).unlink()
    before = tree(dl)
    with HubServer() as server:
        repo = server.add_repo("grip-test/r", tree(exported))
        files = repo.commits[repo.branches["main"]]
        files[TEST_SHARD] = Blob(flipped(files[TEST_SHARD].data), True)  # the server's copy is corrupt
        line = one_line_error(grip_cli(hf_env(tmp_path, server.url), "download", "grip-test/r", "--out", dl))
    assert TEST_SHARD in line and "sha256" in line, line
    assert tree(dl) == before and not (dl / TEST_SHARD).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dl", "hf_home"]


def test_push_refuses_a_shard_whose_rows_do_not_match_their_image_sha256(exported, tmp_path):
    folder = tmp_path / "hub"
    shutil.copytree(exported, folder)
    rid = forge_row(folder, GRAIN_SHARD)
    hub.check_export(folder, hash_files=True)  # the file-level checks pass: only the rows can tell
    with HubServer() as server:
        line = one_line_error(grip_cli(hf_env(tmp_path, server.url, WRITER), "push", folder, "--repo",
                                       "grip-test/x"))
        assert GRAIN_SHARD in line and rid in line and "image_sha256" in line, line
        assert not any(u in p for _, p, _ in server.log for u in UPLOADS), server.log
        assert not server.state.repos


def test_download_refuses_a_shard_whose_rows_do_not_match_their_image_sha256(exported, tmp_path):
    folder = tmp_path / "hub"
    shutil.copytree(exported, folder)
    rid = forge_row(folder, TEST_SHARD)
    dl = tmp_path / "dl"
    with HubServer() as server:
        server.add_repo("grip-test/r", tree(folder))
        line = one_line_error(grip_cli(hf_env(tmp_path, server.url), "download", "grip-test/r", "--out", dl))
    assert TEST_SHARD in line and rid in line and "image_sha256" in line, line
    assert not dl.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf_home", "hub"]  # no temp folder left


# --- `grip push ... | head -1` ----------------------------------------------------------------------------------

def test_push_into_a_closed_pipe_prints_no_traceback(exported, tmp_path):
    with HubServer() as server:
        env = hf_env(tmp_path, server.url, WRITER)
        env.pop("HF_HUB_DISABLE_PROGRESS_BARS")  # as a user runs it
        proc = subprocess.Popen([sys.executable, "-m", "grip.cli", "push", str(exported), "--repo", "grip-test/p"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # the reader is gone before the first line, as with `| head -0`
        err = proc.stderr.read().decode()
        proc.wait(timeout=120)
        repo = server.state.repos["grip-test/p"]
        pushed = {p for p in repo.commits[repo.branches["main"]] if p != ".gitattributes"}
    assert pushed == set(tree(exported))
    assert "Traceback" not in err and "Broken pipe" not in err and "BrokenPipeError" not in err, err
