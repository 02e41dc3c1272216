"""grip: procedural visual-reasoning scenes with exact ground truth, a dataset builder, and a VLM evaluation
backend."""


def _version() -> str:
    from importlib import metadata   # ~60 ms of start-up: read on first use of grip.__version__ only
    try:
        return metadata.version("grip-bench")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+unknown"


class GripError(Exception):
    """An error the user can fix (bad argument, foreign or corrupt store...). The CLI prints it on one line and
    exits with code 2."""


_REWARDS = ("score", "score_batch", "format_reward", "consistency_reward")


def __getattr__(name: str):
    """`grip.score` and the other rewards (grip/rewards.py), imported on first use so `import grip` stays light."""
    if name == "__version__":
        globals()["__version__"] = v = _version()
        return v
    if name in _REWARDS:
        from grip import rewards
        return getattr(rewards, name)
    raise AttributeError(f"module 'grip' has no attribute {name!r}")
