"""Shared by the CLI tests: invoke `grip` in-process and check the house rule for bad input (one line starting
`grip: error:`, exit code 2, no traceback)."""
from __future__ import annotations

import re

from click.testing import CliRunner

from grip.cli import main


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def ok(res) -> str:
    assert res.exit_code == 0, res.output
    return res.output


def one_line_error(res, match: str | None = None) -> str:
    """The single error line; with `match`, a regex it must contain."""
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("grip: error:"), res.output
    assert "Traceback" not in res.output
    if match is not None:
        assert re.search(match, lines[0]), lines[0]
    return lines[0]
