"""The installable package: the wheel built from this checkout, installed into a folder of its own, runs `grip
build` and `grip eval run/score` from a working folder outside the checkout, on its own files (never the editable
install's), and builds the same items as the checkout."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import grip
from grip import hub_card
from grip.builder import build

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "grip", "domains", "renderers", "manifests")
N = 2

EVAL = r"""
import json, sys
import grip
from click.testing import CliRunner
from grip.cli import main
from grip.eval.experiments import default_readability_path
from grip.release import load_recipe
res = [CliRunner().invoke(main, args) for args in json.loads(sys.argv[1])]
print(json.dumps({"grip": grip.__file__, "readability": str(default_readability_path()),
                  "recipe": load_recipe("manifests/grip-v1.toml").name,
                  "runs": [[r.exit_code, r.output] for r in res]}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel of a copy of the checkout (so the build's own folders never land in the checkout), installed
    with `pip install --no-deps --target`."""
    base = tmp_path_factory.mktemp("package")
    src = base / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", "-q"]   # no config, no index
    proc = subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", base / "wheel",
                           "."], cwd=src,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"pip wheel failed (the dev environment needs setuptools>=77: pip install -e " \
                                 f"'.[dev]'): {proc.stderr[-1500:]}"
    [wheel] = (base / "wheel").glob("grip_bench-*.whl")
    assert wheel.name == hub_card.wheel_name(grip.__version__)   # the file the card's install line names
    target = base / "site"
    proc = subprocess.run([*pip, "install", "--no-deps", "--no-index", "--target", target, wheel],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1500:]
    return wheel, target


def test_the_wheel_runs_build_and_eval_outside_the_checkout(installed, tmp_path):
    wheel, target = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert {"grip/manifests/readability.toml", "grip/manifests/grip-v1.toml"} <= set(names)
    work = tmp_path / "work"   # a working folder with no manifests/ of its own
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target))
    proc = subprocess.run([target / "bin" / "grip", "build", "--domain", "clock_reading", "--n", str(N), "--out",
                           work / "out", "--grain-subset", "1", "--quiet"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cmds = [["eval", "run", "--experiment", "e1", "--items", "out", "--model", "random", "--store", "r.sqlite",
             "--quiet"], ["eval", "score", "--store", "r.sqlite", "--out", "scored.jsonl"]]
    proc = subprocess.run([sys.executable, "-c", EVAL, json.dumps(cmds)], cwd=work, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    assert Path(got["grip"]).is_relative_to(target), got["grip"]   # the wheel's grip, not the editable install
    assert Path(got["readability"]).is_relative_to(target) and got["recipe"] == "GRIP v1"
    assert [code for code, _ in got["runs"]] == [0, 0], got["runs"]
    assert len((work / "scored.jsonl").read_text().splitlines()) == N * 5
    build("clock_reading", N, tmp_path / "here", grain_subset=1)
    here, there = tmp_path / "here" / "clock_reading", work / "out" / "clock_reading"
    assert (there / "items.jsonl").read_bytes() == (here / "items.jsonl").read_bytes()
    for p in sorted(here.rglob("*.png")):
        assert (there / p.relative_to(here)).read_bytes() == p.read_bytes()
