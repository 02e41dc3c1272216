"""A build's progress on stderr: a bar on a terminal, a line every PROGRESS_EVERY_S seconds in a log.

An item counts when it is written. The time left is estimated from the items written so far, weighted by cost:
an item with grain copies encodes four PNGs where a plain one encodes one, and a store's grain items come first, so
a plain rate taken from them would overstate what is left (and a grain item's cost is taken from what it took).
"""
from __future__ import annotations

import sys
import time

PROGRESS_EVERY_S = 5.0   # a progress line this often when stderr is no terminal


class Estimate:
    """Seconds left from the work seen: `add(seconds, grain)` for every item written (its worker-side stage
    seconds; `grain` whether it carried grain copies), `left()` None until there is something to go on."""

    def __init__(self, total: int, grain_items: int):
        self.t_first = None         # the clock starts at the first item written: start-up (a pool, a Ray) is no rate
        self.since_first = 0.0      # worker seconds of the items written after it
        self.left_plain, self.left_grain = total - grain_items, grain_items
        self.plain = [0.0, 0]       # worker seconds, items
        self.grain = [0.0, 0]
        self.plain_part = 0.0       # of the grain items' seconds, what a plain item would have cost

    def add(self, seconds: dict, grain: int) -> None:
        cost = sum(seconds.values())
        if self.t_first is None:
            self.t_first = time.monotonic()
        else:
            self.since_first += cost
        if grain:
            self.grain[0] += cost
            self.grain[1] += 1
            self.left_grain -= 1
            # A grain item encodes its image and `grain` copies: one encode in 1 + grain is the plain share.
            self.plain_part += cost - seconds.get("encode", 0.0) * grain / (1 + grain)
        else:
            self.plain[0] += cost
            self.plain[1] += 1
            self.left_plain -= 1

    def left(self) -> float | None:
        if self.t_first is None or self.since_first <= 0:
            return None
        per_plain = self.plain[0] / self.plain[1] if self.plain[1] else self.plain_part / self.grain[1]
        per_grain = self.grain[0] / self.grain[1] if self.grain[1] else per_plain
        work_left = max(self.left_plain, 0) * per_plain + max(self.left_grain, 0) * per_grain
        # wall seconds per worker second since the first item: covers the worker count and the writes
        return (time.monotonic() - self.t_first) * work_left / self.since_first


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    s = int(round(seconds))
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m:02d}:{s % 60:02d}"


class _NoBar:
    def update(self, seconds: dict, grain: int = 0): pass
    def finish(self): pass


class _Bar:
    def __init__(self, total: int, label: str, grain_items: int):
        import click
        self.est = Estimate(total, grain_items)
        self._bar = click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True, show_eta=False,
                                      item_show_func=lambda text: text)
        self._bar.__enter__()
        self._open = True

    def update(self, seconds: dict, grain: int = 0):
        self.est.add(seconds, grain)
        self._bar.update(1, f"ETA {_clock(self.est.left())}")

    def finish(self):
        if self._open:
            self._open = False
            self._bar.__exit__(None, None, None)


class _Lines:
    def __init__(self, total: int, label: str, grain_items: int):
        self.total, self.label, self.done = total, label, 0
        self.est = Estimate(total, grain_items)
        self.t0 = time.monotonic()
        self.due = self.t0 + PROGRESS_EVERY_S

    def update(self, seconds: dict, grain: int = 0):
        import click
        self.done += 1
        self.est.add(seconds, grain)
        now = time.monotonic()
        if now >= self.due:
            rate = self.done / (now - self.t0) if now > self.t0 else 0.0
            click.echo(f"{self.label}: {self.done}/{self.total} items, {rate:.1f} items/s, "
                       f"ETA {_clock(self.est.left())}", err=True)
            self.due = now + PROGRESS_EVERY_S

    def finish(self):
        pass


def progress(total: int, label: str, mode, grain_items: int = 0):
    """False/None: nothing; "lines": a line every PROGRESS_EVERY_S seconds; True or "bar": a bar. `grain_items`
    of the `total` carry grain copies (the first ones)."""
    if not mode or not total:
        return _NoBar()
    return (_Lines if mode == "lines" else _Bar)(total, label, grain_items)
