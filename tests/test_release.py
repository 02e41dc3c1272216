"""Release recipes: `grip build --manifest` builds one item store per domain exactly as `grip build --domain`
would, rebuilds give identical bytes (images, grain, items.jsonl, release.json and the exported shards), and bad
manifests are one-line errors that build nothing."""
import hashlib
import json
import tomllib
from pathlib import Path

import pytest
from cli_helpers import one_line_error, run

from grip import domains, hub
from grip.audit import SummariesBeside, build_summary
from grip.manifest import load_store
from grip.release import load_recipe


TINY = """
[release]
name = "grip-tiny"
seed = 11
n = 3
core = 2

[domains.gear_trains]

[domains.clock_reading]
n = 4
level = 2

[domains.physical_stability]
seed = 5
grain_subset = 1
"""




def files(root: Path, skip=("build.json", ".lock")) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name not in skip}


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("release")
    (base / "tiny.toml").write_text(TINY)
    for out in ("a", "b"):
        res = run("build", "--manifest", base / "tiny.toml", "--out", base / out, "--quiet")
        assert res.exit_code == 0, res.output
        (base / f"{out}.log").write_text(res.output)
    return base


def test_rebuild_gives_identical_bytes_and_shards(tiny, tmp_path):
    a, b = files(tiny / "a"), files(tiny / "b")
    assert a == b, sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    assert any(k.startswith("gear_trains/grain/s15/") for k in a) and "release.json" in a
    for out in ("a", "b"):
        assert run("export", tiny / out, "--to", tmp_path / f"hub_{out}").exit_code == 0
    shards_a = {k: v for k, v in files(tmp_path / "hub_a").items() if k.endswith(".parquet")}
    assert shards_a and shards_a == {k: v for k, v in files(tmp_path / "hub_b").items() if k.endswith(".parquet")}
    # The card and the index also record the code that built each store (git commit, dirty flag): equal too,
    # unless the checkout moved between the two builds, which other work on this machine may do.
    def masked(out: str):
        text = (tmp_path / f"hub_{out}" / "README.md").read_text()
        index = json.loads((tmp_path / f"hub_{out}" / hub.INDEX_FILE).read_text())
        for d, info in index["domains"].items():
            pv = info.pop("provenance")
            text = text.replace(f"{pv['git_commit']}{' (dirty)' if pv['git_dirty'] else ''}", "<commit>")
        ex = index.pop("export")  # the exporting checkout's commit, in the install note too
        text = text.replace(ex["install"]["note"], "<install>").replace(ex["install"]["line"], "<line>")
        return text, index
    assert masked("a") == masked("b")


def test_manifest_build_equals_single_domain_builds(tiny, tmp_path):
    spec = tomllib.loads(TINY)
    rel = spec["release"]
    for d, over in spec["domains"].items():
        n, seed = over.get("n", rel["n"]), over.get("seed", rel["seed"])
        args = ["build", "--domain", d, "--n", n, "--seed", seed, "--out", tmp_path,
                "--grain-subset", over.get("grain_subset", rel["core"]), "--quiet"]
        if "level" in over:
            args += ["--level", over["level"]]
        assert run(*args).exit_code == 0
        assert files(tmp_path / d) == files(tiny / "a" / d)
        rows = load_store(tiny / "a" / d)
        assert len(rows) == n
        if "level" in over:
            assert {r["level"] for r in rows} == {over["level"]}
    built = json.loads((tiny / "a" / "gear_trains" / "build.json").read_text())["arguments"]
    assert built["seed"] == rel["seed"] and built["grain_subset"] == rel["core"]


def test_export_of_a_release_carries_its_recipe(tiny, tmp_path):
    res = hub.export(tiny / "a", tmp_path / "hub")
    assert res.index["name"] == "grip-tiny" and res.index["core"] == 2
    assert res.index["release"]["manifest_sha256"] == hashlib.sha256(TINY.encode()).hexdigest()
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "pretty_name: grip-tiny" in card and hashlib.sha256(TINY.encode()).hexdigest() in card


def test_rerun_resumes_and_another_recipe_is_refused(tiny, tmp_path):
    before = files(tiny / "a")
    res = run("build", "--manifest", tiny / "tiny.toml", "--out", tiny / "a", "--quiet")
    assert res.exit_code == 0 and res.output.count("0 built") == 3, res.output
    assert files(tiny / "a") == before
    other = tmp_path / "other.toml"
    other.write_text(TINY.replace("seed = 11", "seed = 12"))
    one_line_error(run("build", "--manifest", other, "--out", tiny / "a"))
    assert files(tiny / "a") == before


def test_the_v1_recipe_names_every_registered_domain():
    r = load_recipe(Path(__file__).parent.parent / "manifests" / "grip-v1.toml")
    assert [d.domain for d in r.domains] == list(domains.REGISTRY)
    assert r.core == 20 and all(d.n >= r.core and d.grain_subset == r.core for d in r.domains)
    assert len({d.seed for d in r.domains}) == 1


BAD = {
    "unknown_domain": TINY + "\n[domains.no_such_domain]\n",
    "n_zero": TINY.replace("n = 4", "n = 0"),
    "n_negative": TINY.replace("n = 3", "n = -3"),
    "n_not_int": TINY.replace("n = 3", 'n = "many"'),
    "unknown_release_key": TINY.replace("core = 2", "core = 2\ncolour = 'red'"),
    "unknown_domain_key": TINY.replace("level = 2", "level = 2\nspeed = 3"),
    "unknown_table": TINY + "\n[extras]\nx = 1\n",
    "missing_seed": TINY.replace("seed = 11\n", ""),
    "missing_n": TINY.replace("n = 3\n", ""),
    "missing_release": TINY.split("[domains.gear_trains]")[1],
    "no_domains": TINY.split("[domains.gear_trains]")[0],
    "core_above_n": TINY.replace("core = 2", "core = 4"),
    "bad_level": TINY.replace("level = 2", "level = 7"),
    "bad_sigmas": TINY.replace("core = 2", "core = 2\ngrain_sigmas = [10, 20]"),
    "not_toml": "this is [ not toml",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_manifest_is_one_line_and_builds_nothing(tmp_path, case):
    m = tmp_path / "bad.toml"
    m.write_text(BAD[case])
    line = one_line_error(run("build", "--manifest", m, "--out", tmp_path / "out"))
    assert "bad.toml" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [
    ["build", "--manifest", "{m}", "--domain", "gear_trains"],
    ["build", "--manifest", "{m}", "--n", "3"],
    ["build", "--manifest", "{m}", "--seed", "4"],
    ["build", "--manifest", "{m}", "--level", "2"],
    ["build", "--out", "{o}"],
    ["build", "--domain", "gear_trains", "--out", "{o}"],
    ["build", "--manifest", "{o}/missing.toml", "--out", "{o}"],
])
def test_manifest_and_domain_options_exclude_each_other(tmp_path, args):
    (tmp_path / "tiny.toml").write_text(TINY)
    one_line_error(run(*[a.format(m=tmp_path / "tiny.toml", o=tmp_path / "out") for a in args]))
    assert not (tmp_path / "out" / "gear_trains").exists()


# --- regression: a release folder that drifted from its recipe is not exported under the recipe's name ----------

DRIFT = """
[release]
name = "grip-drift"
seed = 0
n = 2
core = 1

[domains.clock_reading]
"""


@pytest.fixture(scope="session")
def drift_release(tmp_path_factory):
    base = tmp_path_factory.mktemp("drift")
    (base / "m.toml").write_text(DRIFT)
    assert run("build", "--manifest", base / "m.toml", "--out", base / "rel", "--quiet").exit_code == 0
    return base


def _copy(src: Path, dest: Path) -> Path:
    import shutil
    shutil.copytree(src, dest)
    return dest


@pytest.mark.parametrize("change, match", [
    (["--domain", "clock_reading", "--n", "3"], (r"clock_reading: built with n 3 \(recipe: 2\), grain_subset 3 "
                                                 r"\(recipe: 1\); the folder no longer matches .*recipe m\.toml")),
    (["--domain", "clock_reading", "--n", "2", "--grain-subset", "2"], r"grain_subset 2 \(recipe: 1\)"),
    (["--domain", "gear_trains", "--n", "2", "--grain-subset", "1"], r"stores of gear_trains it does not name"),
])
def test_export_refuses_a_release_folder_that_drifted_from_its_recipe(drift_release, tmp_path, change, match):
    out = _copy(drift_release / "rel", tmp_path / "rel")
    assert run("export", out, "--to", tmp_path / "ok").exit_code == 0  # as built: fine
    assert run("build", *change, "--out", out, "--quiet").exit_code == 0
    line = one_line_error(run("export", out, "--to", tmp_path / "hub"), match)
    assert "grip build --manifest m.toml" in line
    assert not (tmp_path / "hub").exists()


def test_export_refuses_a_release_folder_missing_a_store_or_with_a_bad_record(drift_release, tmp_path):
    import shutil
    out = _copy(drift_release / "rel", tmp_path / "rel")
    rel = json.loads((out / "release.json").read_text())
    (out / "release.json").write_text(json.dumps({**rel, "domains": {**rel["domains"], "gear_trains":
                                                                      rel["domains"]["clock_reading"]}}))
    one_line_error(run("export", out, "--to", tmp_path / "hub"), r"no store of gear_trains")
    for bad in ({**rel, "domains": []}, {**rel, "core": 0}, [], {**rel, "name": 5}):
        (out / "release.json").write_text(json.dumps(bad))
        one_line_error(run("export", out, "--to", tmp_path / "hub"), r"release\.json: not a release record")
    (out / "release.json").unlink()  # the documented way out: export the stores as a plain build
    shutil.rmtree(tmp_path / "hub", ignore_errors=True)
    assert run("export", out, "--to", tmp_path / "hub").exit_code == 0
    assert "grip build --manifest" not in (tmp_path / "hub" / "README.md").read_text()


def test_manifest_core_zero_is_refused(tmp_path):
    m = tmp_path / "m.toml"
    m.write_text(DRIFT.replace("core = 1", "core = 0"))
    one_line_error(run("build", "--manifest", m, "--out", tmp_path / "out"), r"m\.toml \[release\]: core must be")
    assert not (tmp_path / "out").exists()


def test_a_release_build_prints_each_domain_then_its_audit(tiny):
    # The audits run beside the next domain's build; their lines still follow their own domain's.
    lines = [ln for ln in (tiny / "a.log").read_text().splitlines() if not ln.startswith("grip: ")]   # notes
    doms = list(tomllib.loads(TINY)["domains"])
    assert len(lines) == 2 * len(doms) + 1 and lines[-1].startswith(f"{tiny / 'a'}: release ")
    for k, d in enumerate(doms):
        assert lines[2 * k].startswith(f"{tiny / 'a' / d}: ")
        assert lines[2 * k + 1] == build_summary(tiny / "a" / d)


def test_audits_beside_equal_those_made_here_and_outlive_their_process(tiny):
    stores = [tiny / "a" / d for d in tomllib.loads(TINY)["domains"]]
    want = [build_summary(s) for s in stores]
    for beside in (True, False):
        audits, got = SummariesBeside(beside), []
        for s in stores:
            got.append(audits.take())
            audits.submit(s)
        got.append(audits.take())
        audits.close()
        assert got == [None] + want
    audits = SummariesBeside()
    audits.submit(stores[0])
    assert audits.take() == want[0]
    for p in list(audits._pool._processes.values()):   # the side process dies: the next audit is made here
        p.kill()
        p.join()
    audits.submit(stores[1])
    assert audits.take() == want[1]
    audits.close()
