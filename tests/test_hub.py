"""Export to the Hub layout, the generated card, push to and load from a local Hub-compatible server, download,
and one-line errors. Nothing here reaches the real Hub: every `datasets`/`huggingface_hub` call runs in a
subprocess whose HF_ENDPOINT points at tests/hub_server.py on 127.0.0.1 (or is offline) and whose HF_HOME is a
temp folder; the variables are read at import time, hence the subprocesses."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

import grip
from grip import domains, hub, hub_card
from grip.builder import build
from grip.cli import main
from grip.grain import SIGMAS
from grip.manifest import grain_rel, load_store


sys.path.insert(0, str(Path(__file__).parent))
from hub_server import OUTSIDER, READER, WRITER, HubServer  # noqa: E402

DOMAINS = ("physical_stability", "gear_trains", "clock_reading")
N, GRAIN = 3, 1
ALLOWED_SIZES = {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B",
                 "1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T"}


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    for d in DOMAINS:
        build(d, N, out, grain_subset=GRAIN)
    return out


@pytest.fixture(scope="session")
def facts(store):
    return store_facts(store)


@pytest.fixture(scope="session")
def exported(store, tmp_path_factory):
    """`grip export` of a copy of the build, whose PNGs are then deleted: the Hub copy must stand alone."""
    base = tmp_path_factory.mktemp("hub")
    src, dest = base / "build", base / "export"
    shutil.copytree(store, src)
    res = CliRunner().invoke(main, ["export", str(src), "--to", str(dest), "--core", "2"])
    assert res.exit_code == 0, res.output
    for d in DOMAINS:
        shutil.rmtree(src / d / "images")
        shutil.rmtree(src / d / "grain")
    return dest


@pytest.fixture(scope="session")
def local_loaded(exported, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("load")
    return load_in_subprocess(tmp, [(str(exported), "", DOMAINS)], hf_env(tmp))[0]


def sha(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): sha(p) for p in sorted(Path(root).rglob("*")) if p.is_file()}


def one_line_error(res_or_proc):
    out = res_or_proc.output if hasattr(res_or_proc, "output") else res_or_proc.stdout + res_or_proc.stderr
    code = res_or_proc.exit_code if hasattr(res_or_proc, "exit_code") else res_or_proc.returncode
    assert code == 2, out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("grip: error:"), out
    return lines[0]


def hf_env(tmp_path: Path, endpoint: str | None = None, token: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_HOME=str(tmp_path / "hf_home"), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1",
               HF_HUB_DISABLE_IMPLICIT_TOKEN="1" if token is None else "0")
    if endpoint is None:
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    else:
        env["HF_ENDPOINT"] = endpoint
    if token is not None:
        env["HF_TOKEN"] = token
    return env


def grip_cli(env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grip.cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=120)


LOAD = r"""
import hashlib, json, sys
import datasets
from datasets import Image
from grip.hub import item_row
jobs, out = json.loads(sys.argv[1]), sys.argv[2]
results = []
for source, revision, doms in jobs:
    res = {}
    for d in doms:
        dd = datasets.load_dataset(source, d, revision=revision or None, cache_dir=out + ".cache")
        res[d] = {}
        for split, ds in dd.items():
            rows = []
            for r in ds:
                img = r["image"]
                rows.append({"item": item_row(r), "id": r["id"], "source_id": r["source_id"],
                             "grain_sigma": r["grain_sigma"], "core": r["core"], "image_sha256": r["image_sha256"],
                             "decoded": [img.size[0], img.size[1], img.mode]})
            raw = ds.cast_column("image", Image(decode=False))
            shas = [hashlib.sha256(x["bytes"]).hexdigest() for x in raw["image"]]
            res[d][split] = {"features": ds.features.to_dict(), "num_rows": ds.num_rows, "rows": rows,
                             "bytes_sha256": shas}
    results.append(res)
json.dump(results, open(out, "w"))
"""


def load_in_subprocess(tmp_path: Path, jobs: list, env: dict) -> list[dict]:
    """`datasets.load_dataset(source, domain, revision=...)` for each (source, revision, domains) job, in one
    fresh interpreter with `env`; returns, per job, what a user would read back."""
    out = tmp_path / "loaded.json"
    proc = subprocess.run([sys.executable, "-c", LOAD, json.dumps([[str(a), b, list(c)] for a, b, c in jobs]),
                           str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def card_header(hub_dir: Path) -> dict:
    text = (hub_dir / "README.md").read_text()
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert m, "card has no YAML header"
    return yaml.safe_load(m.group(1))


def check_against_store(loaded: dict, store_rows: dict, grain_sha: dict, hub_dir: Path, core: int):
    """Everything a Hub user reads equals the item store: features, counts (as the card says), image bytes,
    scenes, answers, margins."""
    infos = {c["config_name"]: c for c in card_header(hub_dir)["dataset_info"]}
    want_features = hub.features().to_dict()
    for d, splits in loaded.items():
        rows = store_rows[d]
        assert set(splits) == {"test", "core", "test_grain"}
        declared = {s["name"]: s["num_examples"] for s in infos[d]["splits"]}
        for split, got in splits.items():
            assert got["features"] == want_features
            assert got["num_rows"] == declared[split] == len(got["rows"])
            for r in got["rows"]:
                assert r["decoded"][:2] == [768, 768] and r["decoded"][2] == "RGB"
        test = splits["test"]
        assert test["num_rows"] == len(rows)
        for r, stored, bsha in zip(test["rows"], rows, test["bytes_sha256"]):
            assert r["id"] == r["source_id"] == stored["id"] and r["grain_sigma"] == 0
            assert r["core"] == (stored["index"] < core)
            assert bsha == r["image_sha256"] == stored["sha256"]
            assert r["item"] == stored, (d, stored["id"])  # every field, the rephrase too, in the builder's order
            assert list(r["item"]) == list(stored)
        assert [r["item"] for r in splits["core"]["rows"]] == [row for row in rows if row["index"] < core]
        grain = splits["test_grain"]
        expected = [(row["id"], s) for row in rows[:GRAIN] for s in SIGMAS]
        assert [(r["source_id"], r["grain_sigma"]) for r in grain["rows"]] == expected
        by_id = {row["id"]: row for row in rows}
        for r, bsha in zip(grain["rows"], grain["bytes_sha256"]):
            assert bsha == grain_sha[(r["source_id"], r["grain_sigma"])]
            assert r["item"]["questions"] == by_id[r["source_id"]]["questions"]


def store_facts(store: Path):
    rows = {d: load_store(store / d) for d in DOMAINS}
    grain = {(row["id"], s): sha(store / d / grain_rel(row["id"], s)) for d in DOMAINS for row in rows[d][:GRAIN]
             for s in SIGMAS}
    return rows, grain


# --- export and load -----------------------------------------------------------------------------------------

def test_export_loads_without_source_images(exported, local_loaded, facts):
    names = sorted(str(p.relative_to(exported)) for p in exported.rglob("*.parquet"))
    assert names == sorted(f"{d}/{s}-00000-of-00001.parquet" for d in DOMAINS for s in ("test", "core", "test_grain"))
    check_against_store(local_loaded, *facts, exported, core=2)


def test_card_is_generated_from_the_registry(store, tmp_path, monkeypatch):
    monkeypatch.setitem(domains.REGISTRY, "zz_future_domain", ("optical", "nowhere:DOMAIN"))
    res = hub.export(store, tmp_path / "hub", core=2)
    head = card_header(tmp_path / "hub")
    assert head["task_categories"] == ["visual-question-answering"]
    assert head["license"] and isinstance(head["license"], str)
    assert len(head["size_categories"]) == 1 and head["size_categories"][0] in ALLOWED_SIZES
    configs = head["configs"]
    assert [c["config_name"] for c in configs] == list(DOMAINS)  # registry order
    assert sum(bool(c.get("default")) for c in configs) == 1
    for c in configs:
        assert {f["split"]: f["path"] for f in c["data_files"]} == {
            s: f"{c['config_name']}/{s}-*" for s in ("test", "core", "test_grain")}
    infos = {i["config_name"]: i for i in head["dataset_info"]}
    assert set(infos) == set(DOMAINS)
    for d in DOMAINS:
        splits = {s["name"]: s["num_examples"] for s in infos[d]["splits"]}
        assert splits == {"test": N, "core": 2, "test_grain": GRAIN * len(SIGMAS)}
        shards = [sh for s in res.index["domains"][d]["splits"].values() for sh in s["shards"]]
        assert infos[d]["download_size"] == sum((tmp_path / "hub" / sh["path"]).stat().st_size for sh in shards)
        names = [f["name"] for f in infos[d]["features"]]
        assert names == list(hub.features())
    body = (tmp_path / "hub" / "README.md").read_text().split("\n---\n", 1)[1]
    for d, (fam, _) in domains.REGISTRY.items():  # every registered domain and its family, the fake one too
        assert re.search(rf"\| {fam} \| `?{d}`? \|", body), d
    for word in ("## The ladder", "## Answer types", "## Margins", "## Grain levels", "load_dataset("):
        assert word in body
    prov = json.loads((store / "gear_trains" / "build.json").read_text())["provenance"]
    assert prov["git_commit"] in body and prov["numpy"] in body and prov["pycairo"] in body


def test_export_is_deterministic_and_replaces_an_old_export(store, tmp_path):
    hub.export(store, tmp_path / "a", core=2)
    hub.export(store, tmp_path / "b", core=2)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    (tmp_path / "a" / "gear_trains" / "stale-00000-of-00001.parquet").write_bytes(b"old")
    hub.export(store, tmp_path / "a", core=2)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    index = json.loads((tmp_path / "a" / hub.INDEX_FILE).read_text())
    for info in index["domains"].values():
        for s in info["splits"].values():
            for sh in s["shards"]:
                assert sha(tmp_path / "a" / sh["path"]) == sh["sha256"]


def test_shards_and_row_groups_follow_the_size_limits(store, tmp_path, monkeypatch):
    rows = load_store(store / "gear_trains")
    sizes = [(store / "gear_trains" / r["image"]).stat().st_size for r in rows]
    monkeypatch.setattr(hub, "MAX_SHARD_BYTES", max(sizes) + 9000)  # about one item per shard
    monkeypatch.setattr(hub, "ROW_GROUP_BYTES", 1)                 # one row per row group
    hub.export(store / "gear_trains", tmp_path / "hub", core=2)
    shards = sorted((tmp_path / "hub" / "gear_trains").glob("test-*.parquet"))
    assert len(shards) >= 2
    assert [p.name for p in shards] == [f"test-{k:05d}-of-{len(shards):05d}.parquet" for k in range(len(shards))]
    ids = []
    for p in shards:
        f = pq.ParquetFile(p)
        assert all(f.metadata.row_group(i).num_rows == 1 for i in range(f.num_row_groups))
        ids += f.read(columns=["id"]).column("id").to_pylist()
    assert ids == [r["id"] for r in rows]
    head = card_header(tmp_path / "hub")
    assert [c["config_name"] for c in head["configs"]] == ["gear_trains"]


def test_export_rejects_what_is_not_an_item_store(store, tmp_path):
    run = lambda *a: CliRunner().invoke(main, ["export", *map(str, a)])  # noqa: E731
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk" / "stuff").mkdir(parents=True)
    (tmp_path / "junk" / "stuff" / "items.jsonl").write_text("not json\n")
    assert "not a grip build folder" in one_line_error(run(tmp_path / "empty", "--to", tmp_path / "h1"))
    assert "no such folder" in one_line_error(run(tmp_path / "missing", "--to", tmp_path / "h2"))
    one_line_error(run(tmp_path / "junk", "--to", tmp_path / "h3"))
    unfinished = tmp_path / "unfinished"
    shutil.copytree(store / "clock_reading", unfinished / "clock_reading")
    (unfinished / "clock_reading" / "build.json").unlink()
    assert "build.json" in one_line_error(run(unfinished, "--to", tmp_path / "h4"))
    corrupt = tmp_path / "corrupt"
    shutil.copytree(store / "clock_reading", corrupt / "clock_reading")
    img = sorted((corrupt / "clock_reading" / "images").iterdir())[1]
    img.write_bytes(img.read_bytes()[:-10] + b"0123456789")
    assert "sha256" in one_line_error(run(corrupt, "--to", tmp_path / "h5"))
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "thesis.tex").write_text("precious")
    one_line_error(run(store, "--to", occupied))
    assert [p.name for p in occupied.iterdir()] == ["thesis.tex"]
    for p in ("h1", "h2", "h3", "h4", "h5"):
        assert not (tmp_path / p).exists()
    one_line_error(CliRunner().invoke(main, ["export", str(store)]))  # no --to


# --- push, load from the server, download --------------------------------------------------------------------

UPLOADS = ("/preupload/", "/info/lfs/", "/lfs-upload/", "/commit/", "/tag/")


def test_push_then_load_dataset_from_the_hub_equals_the_export(exported, local_loaded, facts, tmp_path):
    with HubServer() as server:
        env = hf_env(tmp_path, server.url, WRITER)
        proc = grip_cli(env, "push", exported, "--repo", "grip-test/grip-small", "--revision", "v1")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout.strip().splitlines()[-1] == f"{server.url}/datasets/grip-test/grip-small/tree/v1"
        paths = [p for _, p, _ in server.log]
        assert sum("/commit/" in p for p in paths) == 1  # one commit
        assert any("/info/lfs/objects/batch" in p for p in paths)
        first_upload = min(i for i, p in enumerate(paths) if any(u in p for u in UPLOADS))
        assert any("/api/whoami-v2" in p for p in paths[:first_upload])
        assert any("auth-check/write" in p for p in paths[:first_upload])
        repo = server.state.repos["grip-test/grip-small"]
        files = repo.commits[repo.tags["v1"]]
        local = tree(exported)
        assert {p: hashlib.sha256(b.data).hexdigest() for p, b in files.items() if p != ".gitattributes"} == local

        remote, tagged = load_in_subprocess(
            tmp_path, [("grip-test/grip-small", "", DOMAINS), ("grip-test/grip-small", "v1", ["clock_reading"])],
            hf_env(tmp_path, server.url))
        proc = grip_cli(hf_env(tmp_path, server.url), "download", "grip-test/grip-small", "--domain",
                        "gear_trains", "--out", tmp_path / "dl")
        assert proc.returncode == 0, proc.stderr[-3000:]
        bad = grip_cli(hf_env(tmp_path, server.url), "download", "grip-test/grip-small", "--domain", "nope",
                       "--out", tmp_path / "dl2")
        assert "nope" in one_line_error(bad) and not (tmp_path / "dl2").exists()
        bad = grip_cli(hf_env(tmp_path, server.url), "download", "grip-test/grip-small", "--revision", "v9",
                       "--out", tmp_path / "dl3")
        assert "v9" in one_line_error(bad) and not (tmp_path / "dl3").exists()
    assert remote == local_loaded
    assert tagged["clock_reading"] == local_loaded["clock_reading"]
    check_against_store(remote, *facts, exported, core=2)
    got = {str(p.relative_to(tmp_path / "dl")): sha(p) for p in (tmp_path / "dl").rglob("*") if not p.is_dir()}
    assert got == {k: v for k, v in local.items() if not k.startswith(("physical_stability/", "clock_reading/"))}


@pytest.mark.parametrize("case", ["no_token", "bad_token", "read_only", "other_org", "server_refuses",
                                  "not_an_export", "bad_repo_id"])
def test_push_refusals_are_one_line_and_upload_nothing(exported, tmp_path, case):
    folder, repo, token = exported, "grip-test/x", WRITER
    if case == "no_token":
        token = None
    elif case == "bad_token":
        token = "hf_wrong"
    elif case == "read_only":
        token = READER
    elif case == "other_org":
        repo = "someone-else/x"
    elif case == "server_refuses":
        token, repo = OUTSIDER, "elsewhere/x"
    elif case == "not_an_export":
        folder = tmp_path / "plain"
        folder.mkdir()
        (folder / "README.md").write_text("hello")
    elif case == "bad_repo_id":
        repo = "no-slash"
    with HubServer() as server:
        proc = grip_cli(hf_env(tmp_path, server.url, token), "push", folder, "--repo", repo)
        line = one_line_error(proc)
        assert not any(u in p for _, p, _ in server.log for u in UPLOADS), server.log
        assert not server.state.repos
    if case in ("not_an_export", "bad_repo_id"):
        assert server.log == []  # refused before any request
    assert "Traceback" not in proc.stderr and line


def test_push_refuses_to_move_an_existing_tag(exported, tmp_path):
    with HubServer() as server:
        env = hf_env(tmp_path, server.url, WRITER)
        assert grip_cli(env, "push", exported, "--repo", "grip-test/t", "--revision", "v1").returncode == 0
        commits = len(server.state.repos["grip-test/t"].commits)
        n_log = len(server.log)
        assert "v1" in one_line_error(grip_cli(env, "push", exported, "--repo", "grip-test/t", "--revision", "v1"))
        assert not any(u in p for _, p, _ in server.log[n_log:] for u in UPLOADS)
        assert len(server.state.repos["grip-test/t"].commits) == commits
        proc = grip_cli(env, "push", exported, "--repo", "grip-test/t", "--private")  # same files: no new shards
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert not any("/lfs-upload/" in p for _, p, _ in server.log[n_log:])


# --- regressions: a malformed index, a changed shard, no network, export options ----------------------------

def _index_mutations():
    def shard(i):
        return i["domains"]["gear_trains"]["splits"]["test"]["shards"][0]
    return {
        "domains_int": lambda i: i.update(domains=5),
        "domains_list": lambda i: i.update(domains=list(i["domains"])),
        "domains_empty": lambda i: i.update(domains={}),
        "domain_info_str": lambda i: i["domains"].update(gear_trains="gear_trains"),
        "no_splits": lambda i: i["domains"]["gear_trains"].pop("splits"),
        "splits_str": lambda i: i["domains"]["gear_trains"].update(splits="test"),
        "shards_null": lambda i: i["domains"]["gear_trains"]["splits"]["test"].update(shards=None),
        "shard_no_path": lambda i: shard(i).pop("path"),
        "shard_path_int": lambda i: shard(i).update(path=5),
        "shard_path_traversal": lambda i: shard(i).update(path="../../../etc/passwd"),
        "shard_path_absolute": lambda i: shard(i).update(path="/etc/hostname"),
        "shard_bytes_str": lambda i: shard(i).update(bytes=str(shard(i)["bytes"])),
        "shard_no_sha256": lambda i: shard(i).pop("sha256"),
        "rows_disagree": lambda i: i["domains"]["gear_trains"]["splits"]["test"].update(rows=99),
        "unknown_domain_key": lambda i: i["domains"].update({"zzz": i["domains"]["gear_trains"]}),
        "name_empty": lambda i: i.update(name=""),
        "top_level_list": lambda i: (i.clear(), i.update(format=hub.FORMAT, bad=[])),
        "no_core_split": lambda i: i["domains"]["gear_trains"]["splits"].pop("core"),
        "unknown_split": lambda i: i["domains"]["gear_trains"]["splits"].update(
            train=i["domains"]["gear_trains"]["splits"]["test"]),
    }


@pytest.mark.parametrize("case", sorted(_index_mutations()))
def test_push_of_a_malformed_index_is_one_line(exported, tmp_path, monkeypatch, case):
    """`format` right, structure wrong: one line naming the index and what is wrong, before any request (the token
    lookup is replaced by a failure, so a regression cannot reach a network)."""
    folder = tmp_path / "hub"
    folder.mkdir()
    shutil.copy(exported / "README.md", folder / "README.md")
    index = json.loads((exported / hub.INDEX_FILE).read_text())
    _index_mutations()[case](index)
    (folder / hub.INDEX_FILE).write_text(json.dumps(index))

    def no_token(token):
        raise AssertionError("got past the index check")
    monkeypatch.setattr(hub, "_token", no_token)
    line = one_line_error(CliRunner().invoke(main, ["push", str(folder), "--repo", "grip-test/x"]))
    assert f"{folder / hub.INDEX_FILE}: not a {hub.FORMAT} index (" in line and line.endswith("export again"), line
    with pytest.raises(hub.HubError):
        hub.read_index_file(folder / hub.INDEX_FILE)


def test_push_checks_every_shard_sha256_before_anything_leaves(exported, tmp_path):
    folder = tmp_path / "hub"
    shutil.copytree(exported, folder)
    victim = folder / "clock_reading" / "test_grain-00000-of-00001.parquet"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2:len(data) // 2 + 4] = bytes(b ^ 0xFF for b in data[len(data) // 2:len(data) // 2 + 4])
    victim.write_bytes(bytes(data))  # same size: only the sha256 can tell
    with HubServer() as server:
        line = one_line_error(grip_cli(hf_env(tmp_path, server.url, WRITER), "push", folder, "--repo",
                                       "grip-test/x"))
        assert str(victim) in line and "sha256" in line, line
        assert not any(u in p for _, p, _ in server.log for u in UPLOADS), server.log
        assert not server.state.repos  # not even created
        assert any("/api/whoami-v2" in p for _, p, _ in server.log)  # after the credential check


def test_push_uploads_the_indexed_shards_only(exported, tmp_path):
    folder = tmp_path / "hub"
    shutil.copytree(exported, folder)
    (folder / "gear_trains" / "stale-00000-of-00001.parquet").write_bytes(b"not in the index")
    with HubServer() as server:
        proc = grip_cli(hf_env(tmp_path, server.url, WRITER), "push", folder, "--repo", "grip-test/s")
        assert proc.returncode == 0, proc.stderr[-2000:]
        repo = server.state.repos["grip-test/s"]
        files = repo.commits[repo.branches["main"]]
    assert {p for p in files if p != ".gitattributes"} == set(tree(exported))


def _closed_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


NO_SLEEP_CLI = "import sys, time; time.sleep = lambda s: None; from grip.cli import main; sys.argv[0] = 'grip'; main()"


def test_download_without_network_says_so(tmp_path):
    offline = grip_cli(hf_env(tmp_path), "download", "grip-test/x", "--out", tmp_path / "dl")
    line = one_line_error(offline)
    assert "cannot reach" in line and "offline" in line and "not a grip export" not in line, line
    env = hf_env(tmp_path, f"http://127.0.0.1:{_closed_port()}")  # online, nothing listening (retries unslept)
    refused = subprocess.run([sys.executable, "-c", NO_SLEEP_CLI, "download", "grip-test/x", "--out",
                              str(tmp_path / "dl")], env=env, capture_output=True, text=True, timeout=120)
    line = one_line_error(refused)
    assert "cannot reach http://127.0.0.1:" in line and "connection refused" in line, line
    assert not (tmp_path / "dl").exists()


def test_download_of_a_repo_without_index_is_not_a_grip_export(tmp_path):
    from hub_server import Blob, Repo
    with HubServer() as server:
        repo = Repo("grip-test/plain", private=False)
        repo.branches["main"] = repo.commit({"README.md": Blob(b"# hello\n", False)})
        server.state.repos[repo.repo_id] = repo
        line = one_line_error(grip_cli(hf_env(tmp_path, server.url), "download", "grip-test/plain", "--out",
                                       tmp_path / "dl"))
    assert "grip-test/plain has no grip-export.json; not a grip export" in line, line


@pytest.mark.parametrize("args, match", [
    (["--core", "100"], "--core must be a whole number from 1 to 3"),
    (["--core", "4"], "--core must be a whole number from 1 to 3"),
    (["--core", "0"], "must be a whole number from 1 to"),   # the option's own bound, checked by click
    (["--core", "-1"], "--core"),
    (["--name", ""], "--name must be a non-empty"),
    (["--name", "   "], "--name must be a non-empty"),
    (["--name", "a\nb"], "--name must be a non-empty single line"),
    (["--license", ""], "--license must be a non-empty"),
    (["--license", "cc by"], "--license must be a license id"),
])
def test_export_options_are_checked(store, tmp_path, args, match):
    line = one_line_error(CliRunner().invoke(main, ["export", str(store), "--to", str(tmp_path / "h"), *args]))
    assert match in line, line
    assert not (tmp_path / "h").exists()


def test_card_words_core_and_grain_from_the_facts(store, tmp_path):
    """GRAIN (1) grain copies per domain: with --core 2 the card must not call the core items the ones with grain
    copies; with --core 1 it may; by default (20 > 3 items) every item is core and the card says so."""
    def sentence(core):
        args = [] if core is None else ["--core", str(core)]
        res = CliRunner().invoke(main, ["export", str(store), "--to", str(tmp_path / f"h{core}"), *args])
        assert res.exit_code == 0, res.output
        body = (tmp_path / f"h{core}" / "README.md").read_text()
        return next(ln for ln in body.splitlines() if ln.startswith("The core subset"))
    two = sentence(2)
    assert "(index < 2)" in two and "the items with grain copies" not in two
    assert "`gear_trains` the first 1 (fewer than the core items)" in two
    assert "(index < 1)" in sentence(1) and "exactly the items with grain copies" in sentence(1)
    default = sentence(None)
    assert "(index < 20)" in default and "Every item of `physical_stability`, `gear_trains`, `clock_reading` is core" \
        in default


def test_card_install_line_is_the_one_the_export_records(exported):
    index = json.loads((exported / hub.INDEX_FILE).read_text())
    ex, card = index["export"], (exported / "README.md").read_text()
    assert ex["install"] == hub_card.install_spec(ex) and f"```bash\n{ex['install']['line']}\n```" in card
    assert "pip install grip-bench" not in card
    assert ex["grip"] == grip.__version__ and re.fullmatch(r"[0-9a-f]{40}", ex["git_commit"])  # run in a checkout


@pytest.mark.parametrize("remote, line", [
    ("https://user:secret@example.org/org/grip.git", 'pip install "git+https://example.org/org/grip.git@c0ffee"'),
    ("git@example.org:org/grip.git", 'pip install "git+ssh://git@example.org/org/grip.git@c0ffee"'),
    ("ssh://git@example.org:2222/org/grip", 'pip install "git+ssh://git@example.org:2222/org/grip@c0ffee"'),
    ("/srv/git/grip.git", "pip install grip_bench-0.1.0-py3-none-any.whl"),   # not fetchable by others
    (None, "pip install grip_bench-0.1.0-py3-none-any.whl"),
])
def test_install_line_follows_how_grip_was_checked_out(remote, line):
    spec = hub_card.install_spec({"grip": "0.1.0", "git_commit": "c0ffee", "git_dirty": False, "git_remote": remote})
    assert spec["line"] == line and "secret" not in json.dumps(spec)
    if spec["method"] == "wheel":
        assert "pip wheel --no-deps ." in spec["note"] and "c0ffee" in spec["note"]
    dirty = hub_card.install_spec({"grip": "0.1.0", "git_commit": "c0ffee", "git_dirty": True, "git_remote": remote})
    assert "uncommitted changes" in dirty["note"]
    bare = hub_card.install_spec({"grip": "0.1.0", "git_commit": None, "git_dirty": None, "git_remote": None})
    assert bare["line"] == "pip install grip_bench-0.1.0-py3-none-any.whl" and "pip wheel" in bare["note"]


def test_export_names_its_input_store():
    res = CliRunner().invoke(main, ["export", "--help"])
    assert "Usage: main export [OPTIONS] STORE" in res.output or "export [OPTIONS] STORE" in res.output
    res = CliRunner().invoke(main, ["export"])
    assert res.exit_code == 2 and "'STORE'" in res.output and "OUT_DIR" not in res.output
