"""`grip --help` and `grip eval --help` list every command with its whole first paragraph, never cut with '...'."""
from __future__ import annotations

import click
from click.testing import CliRunner

from grip.cli import main


def _help(*args: str) -> str:
    res = CliRunner().invoke(main, [*args, "--help"])
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def test_command_listings_are_never_cut():
    ctx = click.Context(main)
    for group, cmd in ((main, None), (main.get_command(ctx, "eval"), "eval")):
        text = _help(*([cmd] if cmd else [])).split("Commands:", 1)[1]
        assert "..." not in text
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            first = " ".join((sub.help or "").split("\n\n")[0].split())
            assert first and first in text, name


def test_the_cli_starts_one_blas_thread_unless_told_otherwise():
    import os
    import subprocess
    import sys
    code = "import os, grip.cli, numpy; print(os.environ['OPENBLAS_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert got.stdout.strip() == "1"
    got = subprocess.run([sys.executable, "-c", code], env=dict(env, OPENBLAS_NUM_THREADS="4"), capture_output=True,
                         text=True, check=True)
    assert got.stdout.strip() == "4"


def test_a_private_helper_module_is_named_as_such_not_as_an_unknown_domain(tmp_path):
    from cli_helpers import one_line_error, run
    line = one_line_error(run("check", "_cubenet"))
    assert "private helper module, not a domain (used by cube_nets)" in line
    assert "unknown domain '_nothing'" in one_line_error(run("sheet", "_nothing", "--out", "/tmp/never.png"))


def test_a_sheet_of_a_private_helper_module_shows_the_domains_that_use_it(tmp_path):
    from cli_helpers import run
    from PIL import Image
    out = tmp_path / "bars.png"
    r = run("sheet", "_bars", "--n", "2", "--cols", "2", "--cell", "256", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "2 items of the domains that use _bars (impossible_objects)" in r.output
    from grip.sheet import sheet_size
    with Image.open(out) as im:
        assert im.size == sheet_size(2, 256, 2)
