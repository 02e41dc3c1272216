"""`grip eval ...` and `grip strips`. Imports only click at module level: `grip list` must stay light."""
from __future__ import annotations

import click


@click.group("eval")
def eval_group():
    """Evaluate models: run (requests -> response store), score, report."""
