"""`--items` from a Hub copy: an export folder, a download and a Hub repo id read back into the item store the build
wrote (byte for byte: rows with their rephrase and twin, images, grain copies, twin images), cached by the shard
hashes, and a `--model random` E1 run on each scoring exactly like one on the build. The Hub is tests/hub_server.py
on 127.0.0.1, reached from a subprocess (huggingface_hub reads its endpoint at import; see tests/test_hub.py)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import ok, one_line_error, run

from grip import hub
from grip.builder import build
from grip.eval import sources

sys.path.insert(0, str(Path(__file__).parent))
from hub_server import HubServer  # noqa: E402
from test_hub import hf_env  # noqa: E402

REPO = "grip-test/small"
SKIP = {".lock", "build.json", sources.MARK}   # the builder's lock file; build.json is the build's own record


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    build("clock_reading", 3, out, grain_subset=1)
    build("nested_squares", 3, out, grain_subset=1, twins=True)
    return out


@pytest.fixture(scope="module")
def exported(built, tmp_path_factory):
    dest = tmp_path_factory.mktemp("hub") / "export"
    hub.export(built, dest, core=2)
    return dest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def files(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(Path(root).rglob("*"))
            if p.is_file() and p.name not in SKIP}


def scored(path: Path) -> list[dict]:
    rows = [json.loads(ln) for ln in Path(path).read_text().splitlines()]
    assert rows and {r["outcome"] for r in rows} <= {"correct", "wrong", "unparsed"}
    return [{k: v for k, v in r.items() if k != "items_dir"} for r in rows]


def e1(tmp_path: Path, name: str, items) -> list[dict]:
    store, out = tmp_path / f"{name}.sqlite", tmp_path / f"{name}.jsonl"
    ok(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random", "--store", store, "--quiet"))
    ok(run("eval", "score", "--store", store, "--out", out))   # --items: the folder the run recorded
    return scored(out)


def test_an_export_folder_reads_back_as_the_build(built, exported, cache):
    local = sources.resolve_items(exported)
    assert local.parent == cache and local.name == sources.cache_key(hub.read_index(exported), list(
        hub.read_index(exported)["domains"]))
    assert files(local) == files(built)   # items.jsonl byte for byte, images, grain copies, twins
    assert any(k.startswith("nested_squares/twins/") for k in files(local))
    assert sources.resolve_items(built) == built   # a build folder is used as it is
    mtime = (local / "clock_reading" / "items.jsonl").stat().st_mtime_ns
    assert sources.resolve_items(exported) == local   # cached: not written again
    assert (local / "clock_reading" / "items.jsonl").stat().st_mtime_ns == mtime
    # The read-back store exports to the very same shards: the Hub copy loses nothing
    again = hub.export(local, cache.parent / "again", core=2)
    assert {sh["path"]: sh["sha256"] for sh in hub._shards(again.index)} == {
        sh["path"]: sh["sha256"] for sh in hub._shards(hub.read_index(exported))}


def test_e1_on_the_build_the_export_and_the_repo_id_scores_the_same(built, exported, cache, tmp_path):
    want = e1(tmp_path, "build", built)
    assert e1(tmp_path, "export", exported) == want
    blobs = {str(p.relative_to(exported)): p.read_bytes() for p in exported.rglob("*") if p.is_file()}
    repo_cache = tmp_path / "repo-cache"
    cmds = [["eval", "run", "--experiment", "e1", "--items", REPO, "--model", "random", "--store",
             tmp_path / "repo.sqlite", "--quiet"],
            ["eval", "score", "--store", tmp_path / "repo.sqlite", "--items", f"{REPO}@main", "--out",
             tmp_path / "repo.jsonl"],
            ["eval", "score", "--store", tmp_path / "repo.sqlite", "--items", "grip-test/missing", "--out",
             tmp_path / "x.jsonl"]]
    with HubServer() as server:
        server.add_repo(REPO, blobs)
        env = dict(hf_env(tmp_path, server.url), **{sources.CACHE_ENV: str(repo_cache)})
        got = cli_in_subprocess(env, cmds, server)
    (code1, _, fetched1), (code2, _, fetched2), (code3, out3, _) = got
    assert code1 == code2 == 0, got
    assert {p for p in blobs if p.endswith(".parquet")} <= set(fetched1)   # first use: every shard
    assert not [p for p in fetched2 if p.endswith(".parquet")]   # second use: the index only, from the cache
    assert scored(tmp_path / "repo.jsonl") == want
    [folder] = [p for p in repo_cache.iterdir()]
    assert folder.name == sources.resolve_items(exported).name and files(folder) == files(built)
    lines = [ln for ln in out3.splitlines() if ln.strip()]
    assert code3 == 2 and len(lines) == 1 and lines[0].startswith("grip: error: grip-test/missing: no such folder") \
        and "dataset grip-test/missing not found" in lines[0], out3


CLI = r"""
import json, sys
from click.testing import CliRunner
from grip.cli import main
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(main, args)
    print(json.dumps([r.exit_code, r.output]), flush=True)
    sys.stdin.readline()
"""


def cli_in_subprocess(env: dict, cmds: list, server) -> list:
    """Each command through `grip` in one fresh interpreter (one import of huggingface_hub with `env`), with the
    paths fetched from the server while it ran."""
    proc = subprocess.Popen([sys.executable, "-c", CLI, json.dumps([[str(a) for a in c] for c in cmds])], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    got = []
    try:
        for _ in cmds:
            since = len(server.log)
            code, out = json.loads(proc.stdout.readline())
            got.append((code, out, server.get_paths(since)))
            proc.stdin.write("\n")
            proc.stdin.flush()
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return got


def test_a_corrupt_shard_is_refused_and_nothing_is_cached(exported, cache, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(exported, bad)
    shard = bad / "clock_reading" / "test-00000-of-00001.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF   # same size: only the sha256 can tell
    shard.write_bytes(bytes(data))
    line = one_line_error(run("eval", "run", "--experiment", "e1", "--items", bad, "--model", "random", "--store",
                              tmp_path / "r.sqlite"))
    assert str(shard) in line and "sha256" in line, line
    assert not cache.exists() or not list(cache.iterdir())
    with pytest.raises(hub.HubError):
        sources.resolve_items(bad)


def test_an_interrupted_read_back_is_never_used(exported, cache, monkeypatch):
    real = sources._write_domain
    calls = []

    def dies_on_the_second(src, info, dest):
        calls.append(dest.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(src, info, dest)
    monkeypatch.setattr(sources, "_write_domain", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        sources.resolve_items(exported)
    assert not list(cache.iterdir())   # no half-written store, no temp folder left
    monkeypatch.setattr(sources, "_write_domain", real)
    assert (sources.resolve_items(exported) / sources.MARK).is_file()


def test_what_is_no_source_is_one_line(built, exported, cache, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    one_download = tmp_path / "one"   # a download of one domain: only its shards are there
    shutil.copytree(exported, one_download, ignore=shutil.ignore_patterns("nested_squares"))
    assert sorted(p.name for p in sources.resolve_items(one_download).iterdir() if p.is_dir()) == ["clock_reading"]
    for items, match in [(tmp_path / "empty", "neither an item store"), (tmp_path / "file", "not a folder"),
                         (tmp_path / "no" / "such" / "x", "not a Hub repo id")]:
        one_line_error(run("eval", "run", "--experiment", "e1", "--items", items, "--model", "random", "--store",
                           tmp_path / "r.sqlite"), match)
