"""Hashed seeds. Every seed is a stable hash (blake2b) of names, never Python's salted `hash()` and never
`base + index` (which makes item i of seed s equal item i-1 of seed s+1)."""
from __future__ import annotations

import hashlib


def _h64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def item_seed(release: str, domain: str, index: int) -> int:
    """Seed of item `index` of `domain` in `release`: the same whatever the worker count, order or resume point."""
    return _h64(f"{release}:{domain}:{index}")


def grain_seed(file_name: str) -> int:
    """Seed of the grain field of one image, from its file name only (the same field at every sigma)."""
    return _h64(f"grain:{file_name}")


def bootstrap_seed(*parts: object) -> int:
    return _h64("bootstrap:" + ":".join(map(str, parts)))


def level_for(index: int, level: int | None) -> int:
    """The default level mix: item i at level 1 + i mod 3, unless a level is fixed."""
    return level if level is not None else 1 + index % 3
