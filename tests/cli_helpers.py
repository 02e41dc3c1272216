"""Shared by the CLI tests: invoke `grip` in-process and check the house rule for bad input (one line starting
`grip: error:`, exit code 2, no traceback)."""
from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from click.testing import CliRunner

from grip.cli import main


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def ok(res) -> str:
    assert res.exit_code == 0, res.output
    return res.output


@contextmanager
def no_report_figures():
    """`grip eval report` (and `write_report`) without the matplotlib figures, whose rendering is most of a small
    report's time: for tests that read only the tables and numbers. report.md then links no figure. The figures are
    checked where they are made: tests/test_eval_cli.py, test_eval_e3.py, test_eval_e4.py, test_eval_swap.py,
    test_eval_report_edge.py, test_eval_score_hardening.py."""
    from grip.eval import report
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report, "_figures", lambda st, out: [])
        yield


def one_line_error(res, match: str | None = None) -> str:
    """The single error line; with `match`, a regex it must contain."""
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("grip: error:"), res.output
    assert "Traceback" not in res.output
    if match is not None:
        assert re.search(match, lines[0]), lines[0]
    return lines[0]
