"""Exact realizability of an ISO drawing of straight, axis-aligned bars (DOMAINS.md 0.8, 0.9).

ISO maps (x, y, z) to u = (y - x) cos 30, v = (x + y) sin 30 - z; its kernel is (1, 1, 1). A drawn bar fixes its 3-D
step d exactly: the six axis directions have six distinct images and a unit step is drawn one edge long, so d is
+-L e_axis. What the drawing leaves open is each bar's position along the kernel: the bars that draw exactly so are
q + t (1, 1, 1) + [0, d] for one real t per bar, q being any preimage of the drawn start point. Lattice points stand
for screen points by their canonical preimage (x - z, y - z, 0), exact integers instead of irrational pixels.

What the drawing asserts becomes a system of difference constraints on the t's:
* a joint (bar i ends where bar j starts, in 3-D, not only on screen): t_j - t_i = c, c fixed by the drawing;
* a crossing drawn with bar i over bar j: bar i nearer the viewer there, t_i - t_j > c (a strict inequality).
A lift exists iff the constraint graph has no negative cycle, with a strict edge weighing (c, -1) in lexicographic
order (c minus an infinitesimal). For a closed loop of joints the only cycle sums to the loop's net step along the
kernel, so the loop is buildable iff its steps sum to 0 in 3-D, not merely to k (1, 1, 1). A cyclic over/under order
of crossings is no proof of impossibility: three sticks can cross cyclically in real 3-D, and this test says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

Vec = tuple[int, int, int]


def canon(p: Sequence[int]) -> Vec:
    """The canonical preimage of p's ISO image: the lattice point of p's kernel line with z = 0."""
    return (int(p[0]) - int(p[2]), int(p[1]) - int(p[2]), 0)


def kernel_offset(a: Sequence, b: Sequence) -> Fraction:
    """m with a - b = m (1, 1, 1); raises ValueError if a and b are drawn at different screen points."""
    if all(type(x) is int and type(y) is int for x, y in zip(a, b)):
        d = [x - y for x, y in zip(a, b)]             # lattice points: exact ints, one Fraction at the end
    else:
        d = [Fraction(x) - Fraction(y) for x, y in zip(a, b)]
    if not d[0] == d[1] == d[2]:
        raise ValueError(f"points {tuple(a)} and {tuple(b)} are drawn at different screen points")
    return Fraction(d[0])


@dataclass(frozen=True)
class DrawnBar:
    start: Vec       # canonical preimage of the drawn start point
    step: Vec        # the 3-D step the drawing fixes: +-L e_axis


@dataclass(frozen=True)
class Crossing:
    """Bar `over` is drawn over bar `under` where the points at fractions `f_over`, `f_under` of their steps meet
    on screen; `gap` is the least depth by which it must lie nearer, in kernel steps (0: merely in front)."""
    over: int
    under: int
    f_over: Fraction
    f_under: Fraction
    gap: Fraction = Fraction(0)


def _constraints(bars: Sequence[DrawnBar], joints: Sequence[tuple[int, int]], crossings: Sequence[Crossing]):
    """Edges (a, b, (c, strict)) meaning t_b - t_a <= c (< c when strict)."""
    edges = []
    for i, j in joints:
        end = tuple(q + d for q, d in zip(bars[i].start, bars[i].step))
        c = kernel_offset(end, bars[j].start)          # end_i + t_i = start_j + t_j  =>  t_j - t_i = c
        edges += [(i, j, (c, 0)), (j, i, (-c, 0))]
    for x in crossings:
        po = [q + x.f_over * d for q, d in zip(bars[x.over].start, bars[x.over].step)]
        pu = [q + x.f_under * d for q, d in zip(bars[x.under].start, bars[x.under].step)]
        m = kernel_offset(pu, po)                      # pu = po + m (1, 1, 1): depth(under) - depth(over) ~ m
        # over nearer by more than gap: t_over + 0 > t_under + m + gap  =>  t_under - t_over < -(m + gap)
        edges.append((x.over, x.under, (-(m + x.gap), -1)))
    return edges


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def potentials(bars: Sequence[DrawnBar], joints: Sequence[tuple[int, int]] = (),
               crossings: Sequence[Crossing] = ()) -> list | None:
    """Bellman-Ford from a virtual source: per bar (c, e) such that t = c + e * eps satisfies every constraint for
    all small eps > 0; None when a negative cycle makes the drawing unbuildable."""
    n = len(bars)
    dist = [(0, 0)] * n
    # Whole weights as ints (equal to their Fractions, and far faster to add and compare: lattice loops have only
    # those); the potentials come out as ints where every weight on their path is whole.
    edges = [(a, b, (c.numerator if c.denominator == 1 else c, e)) for a, b, (c, e) in
             _constraints(bars, joints, crossings)]
    for _ in range(n + 1):
        changed = False
        for a, b, w in edges:
            cand = _add(dist[a], w)
            if cand < dist[b]:
                dist[b], changed = cand, True
        if not changed:
            return dist
    return None


def realizable(bars: Sequence[DrawnBar], joints: Sequence[tuple[int, int]] = (),
               crossings: Sequence[Crossing] = ()) -> bool:
    """Whether some 3-D placement of the drawn bars meets every joint in 3-D and every drawn crossing order."""
    return potentials(bars, joints, crossings) is not None


def lift(bars: Sequence[DrawnBar], joints: Sequence[tuple[int, int]] = (),
         crossings: Sequence[Crossing] = ()) -> list[tuple[Fraction, Fraction, Fraction]] | None:
    """A witness: each bar's 3-D start point (exact), or None when no lift exists. Checked against every
    constraint before it is returned."""
    pot = potentials(bars, joints, crossings)
    if pot is None:
        return None
    edges = _constraints(bars, joints, crossings)
    eps = Fraction(1)
    for _ in range(64):
        t = [c + e * eps for c, e in pot]
        if all((t[b] - t[a] < w[0]) if w[1] else (t[b] - t[a] <= w[0]) for a, b, w in edges):
            return [tuple(Fraction(q) + ti for q in bar.start) for bar, ti in zip(bars, t)]
        eps /= 2
    raise ArithmeticError("no eps found for a feasible system")   # unreachable: feasibility holds for small eps


def loop_drawing(steps: Sequence[Vec]) -> tuple[list[DrawnBar], list[tuple[int, int]]]:
    """The drawing of a loop of bars with these 3-D steps, started at the origin: each bar's drawn start point and
    step, and the joints the drawing shows (bar i into bar i + 1, the last bar into the first). Raises ValueError
    when the drawing does not close on screen (the steps do not sum to a multiple of (1, 1, 1))."""
    bars, p = [], (0, 0, 0)
    for d in steps:
        bars.append(DrawnBar(canon(p), tuple(int(x) for x in d)))
        p = tuple(a + b for a, b in zip(p, d))
    if canon(p) != (0, 0, 0):
        raise ValueError("the loop's drawing does not close on screen")
    n = len(bars)
    return bars, [(i, (i + 1) % n) for i in range(n)]
