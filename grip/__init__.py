"""grip: procedural visual-reasoning scenes with exact ground truth, a dataset builder, and a VLM evaluation
backend."""
from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("grip-bench")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"


class GripError(Exception):
    """An error the user can fix (bad argument, foreign or corrupt store...). The CLI prints it on one line and
    exits with code 2."""


_REWARDS = ("score", "score_batch", "format_reward", "consistency_reward")


def __getattr__(name: str):
    """`grip.score` and the other rewards (grip/rewards.py), imported on first use so `import grip` stays light."""
    if name in _REWARDS:
        from grip import rewards
        return getattr(rewards, name)
    raise AttributeError(f"module 'grip' has no attribute {name!r}")
