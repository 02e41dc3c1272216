"""Accepted scenes for domain tests: what the builder keeps (sampled, every margin holds), from a plain seed."""
from __future__ import annotations

import numpy as np

from grip.domain import Reject


def accepted_scene(module, seed: int, level: int, tries: int = 200):
    """The first scene `module.sample` draws from `default_rng(seed)` at `level` whose ladder fails no margin."""
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        try:
            s = module.sample(rng, level)
            if not module.ladder(s).failing_margins():
                return s
        except Reject:
            continue
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")
