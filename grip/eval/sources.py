"""Where `--items` may point: a local item store built by `grip build`, and (to come) a Hub export folder, a `grip
download` folder or a Hub repo id, each turned into a local item store folder."""
from __future__ import annotations

from pathlib import Path


def resolve_items(source) -> Path:
    """A local item store folder for `source` (a local build folder is returned unchanged)."""
    return Path(source)
