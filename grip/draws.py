"""Scalar draws from a numpy Generator at a fraction of the cost of its methods, with the same numbers.

A sampler that makes a few hundred scalar draws an item pays mostly for the Generator's argument handling
(`rng.integers(lo, hi)` ~3.7 us, `rng.uniform(a, b)` ~3.8 us, `rng.choice(seq)` ~23 us on the build machine) rather
than for the numbers. `Draws(rng)` makes the same draws from the same stream by calling the bit generator through
its ctypes interface (~0.7 us): its state, the buffered half of a 64-bit draw included, is the one the Generator
itself uses, so calls through `Draws` and through `rng` may be interleaved freely and every later draw is unchanged.

Each method is the numpy algorithm written out (numpy 2.x, checked draw for draw against a real Generator in
tests/test_draws.py, so a numpy that changes one fails there instead of silently changing items):

- `integers(lo, hi)`: `int(rng.integers(lo, hi))`: Lemire's multiply-and-reject on 32-bit draws for ranges up to
  2**32 (numpy's threshold `(2**32 - n) % n`); nothing drawn for a range of one value; larger ranges, bounds that
  are not Python ints (numpy integers, floats) and empty ranges (numpy's own error) go to the Generator.
- `random()`: `rng.random()`, the bit generator's `next_double`.
- `uniform(lo, hi)`: `rng.uniform(lo, hi)`: `lo + (hi - lo) * next_double`, in doubles as numpy computes it (hi
  below lo is numpy's error).
- `index(n)` / `pick(seq)`: `rng.choice(n)` as an int, and `seq[rng.choice(len(seq))]`: the element itself (numpy's
  `rng.choice(seq)` returns a numpy scalar or array made from it: callers check that the element serves the same).
- `shuffle(x)`: `rng.shuffle(x)` itself (for a list it is already cheap).
- `permutation(n)`: `rng.permutation(n).tolist()`: a list of `range(n)` shuffled by `rng.shuffle`, which makes the
  same swaps as the permutation (Fisher-Yates from the end, each index by numpy's `random_interval`) without the
  array (~2 us instead of ~5).
- `subset(n, k)`: `rng.choice(n, size=k, replace=False).tolist()` for n up to 10000: Floyd's sampling (a draw in
  0..j for each j from n - k, j itself where it repeats), then numpy's shuffle of the k."""
from __future__ import annotations

from functools import partial

import numpy as np

_M32 = 0xFFFFFFFF


class Draws:
    """Fast scalar draws sharing `rng`'s stream (see the module doc). Hot loops may bind the methods to locals:
    `integers` and `random` are plain closures."""

    __slots__ = ("integers", "random", "_rng")

    def __init__(self, rng: np.random.Generator):
        c = rng.bit_generator.ctypes
        u32, state = c.next_uint32, c.state

        def integers(lo: int, hi: int | None = None) -> int:
            if hi is None:
                lo, hi = 0, lo
            n = hi - lo
            if type(n) is int and 1 < n <= 1 << 32:      # numpy integers would overflow the product: the Generator
                m = u32(state) * n
                if m & _M32 < n:                       # maybe biased: numpy's threshold, (2**32 - n) % n
                    t = ((1 << 32) - n) % n
                    while m & _M32 < t:
                        m = u32(state) * n
                return lo + (m >> 32)
            return lo if n == 1 and type(n) is int else int(rng.integers(lo, hi))   # 64-bit path, other types, errors

        self.integers = integers
        self.random = partial(c.next_double, state)
        self._rng = rng

    def uniform(self, lo: float = 0.0, hi: float = 1.0) -> float:
        lo, hi = float(lo), float(hi)
        span = hi - lo
        if not 0.0 <= span < float("inf"):
            return float(self._rng.uniform(lo, hi))        # numpy's error: hi below lo, or a non-finite range
        return lo + span * self.random()

    def index(self, n: int) -> int:
        """`int(rng.choice(n))`."""
        if n <= 0:
            return int(self._rng.choice(n))                 # numpy's error
        return self.integers(0, n)

    def pick(self, seq):
        """`seq[rng.choice(len(seq))]`: the same draw as `rng.choice(seq)`, the element itself."""
        return seq[self.index(len(seq))]

    def shuffle(self, x: list) -> None:
        """`rng.shuffle(x)` for a list, in place: the Generator's own (its loop over a list is in C, ~2 us)."""
        self._rng.shuffle(x)

    def permutation(self, n: int) -> list[int]:
        """`rng.permutation(n).tolist()`: the same swaps (numpy's `random_interval` from the end) on a list, without
        the array."""
        out = list(range(n))
        self._rng.shuffle(out)
        return out

    def subset(self, n: int, k: int) -> list[int]:
        """`rng.choice(n, size=k, replace=False).tolist()`."""
        if not 0 <= k <= n <= 10000:
            return self._rng.choice(n, size=k, replace=False).tolist()
        integers = self.integers
        out, seen = [], set()
        for j in range(n - k, n):
            v = integers(j + 1)
            if v in seen:
                v = j
            seen.add(v)
            out.append(v)
        for i in range(k - 1, 0, -1):
            j = integers(i + 1)
            out[i], out[j] = out[j], out[i]
        return out
