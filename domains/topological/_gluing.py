"""Edge words of one polygon and the surface their gluing gives: corner classes, Euler characteristic, boundary
cycles, orientability and the classification theorem. Shared by `surface_topology`'s answers and its sampler.

A word is a tuple with one entry per polygon edge, in reading order (anticlockwise from the top edge): `(letter,
exponent)` for a glued edge (exponent +1: the arrow runs from corner k to corner k + 1) and `("", 0)` for a free
(boundary) edge. Edge k runs from corner k to corner k + 1 (mod n)."""
from __future__ import annotations

import itertools
from functools import lru_cache

SPHERE, DISK, ANNULUS, TORUS = "sphere", "disk", "annulus", "torus"
MOBIUS, PROJECTIVE, KLEIN, DOUBLE_TORUS, OTHER = "Möbius band", "projective plane", "Klein bottle", "double torus", \
    "other"
SURFACES = (SPHERE, DISK, ANNULUS, TORUS, MOBIUS, PROJECTIVE, KLEIN, DOUBLE_TORUS)
# (orientable, chi, boundary cycles) -> surface: chi = 2 - 2g - b (orientable), 2 - k - b (k crosscaps).
BY_INVARIANTS = {(True, 2, 0): SPHERE, (True, 1, 1): DISK, (True, 0, 2): ANNULUS, (True, 0, 0): TORUS,
                 (False, 0, 1): MOBIUS, (False, 1, 0): PROJECTIVE, (False, 0, 0): KLEIN, (True, -2, 0): DOUBLE_TORUS}
CHI = {s: chi for (_, chi, _), s in BY_INVARIANTS.items()}


def _merge(lab: list[int], a: int, b: int) -> list[int]:
    """Labels with the classes of a and b merged (the smaller label wins): n <= 8, so a relabelling pass is cheaper
    than a union-find."""
    la, lb = lab[a], lab[b]
    if la == lb:
        return lab
    lo, hi = (la, lb) if la < lb else (lb, la)
    return [lo if v == hi else v for v in lab]


def _ends(k: int, e: int, n: int) -> tuple[int, int]:
    """(tail corner, head corner) of edge k read along its arrow."""
    return (k, (k + 1) % n) if e > 0 else ((k + 1) % n, k)


def pairs(word) -> list[tuple[int, int]]:
    """The two edges of each letter, in order of first appearance."""
    first: dict[str, int] = {}
    out = []
    for k, (x, _) in enumerate(word):
        if x:
            if x in first:
                out.append((first[x], k))
            else:
                first[x] = k
    return out


def corner_labels(word) -> list[int]:
    """Per corner, the smallest corner glued to it: the two copies of a letter identify tail with tail and head
    with head."""
    n = len(word)
    lab = list(range(n))
    for i, j in pairs(word):
        (ti, hi), (tj, hj) = _ends(i, word[i][1], n), _ends(j, word[j][1], n)
        lab = _merge(_merge(lab, ti, tj), hi, hj)
    return lab


def corner_class_sizes(word) -> tuple[int, ...]:
    """Number of polygon corners in each glued point, largest first."""
    lab = corner_labels(word)
    return tuple(sorted((lab.count(r) for r in set(lab)), reverse=True))


def invariants(word) -> tuple[bool, int, int, int]:
    """(orientable, V, chi, b). Orientable iff the two copies of every letter point opposite ways round the polygon;
    V = corner classes; chi = V - E + F with E = letters + free edges, F = 1; b = components, with at least one free
    edge, of the graph of corner classes joined by free edges."""
    # The hot path of sampling and of `base_words`: `pairs`, `corner_labels` and `_merge` in one pass, merging the
    # labels in place (only the number of classes is read).
    n = len(word)
    lab = list(range(n))

    def merge(a: int, b: int) -> None:
        la, lb = lab[a], lab[b]
        if la != lb:
            for c in range(n):
                if lab[c] == lb:
                    lab[c] = la

    first: dict[str, tuple[int, int]] = {}
    free = []
    orientable, letters = True, 0
    for k, (x, e) in enumerate(word):
        if not x:
            free.append(k)
        elif x in first:
            i, ei = first[x]
            orientable = orientable and ei != e
            letters += 1
            k1, i1 = (k + 1) % n, (i + 1) % n
            ti, hi = (i, i1) if ei > 0 else (i1, i)
            tj, hj = (k, k1) if e > 0 else (k1, k)
            merge(ti, tj)
            merge(hi, hj)
        else:
            first[x] = (k, e)
    v = len(set(lab))
    chi = v - (letters + len(free)) + 1
    for k in free:
        merge(k, (k + 1) % n)
    b = len({lab[k] for k in free})
    return orientable, v, chi, b


def manifold(word) -> bool:
    """Whether every glued point has one disk or half-disk round it (its link is one piece). Not needed by
    `classify`: every word of the sheet's shapes is a manifold (the tests check this against an independent
    triangulation). Link nodes 2k (edge k at corner k) and 2k + 1 (edge k at corner k + 1); the sector at corner c
    joins 2(c - 1) + 1 to 2c; a letter joins its two edges' ends at matching corners."""
    n = len(word)
    link = list(range(2 * n))
    for c in range(n):
        link = _merge(link, 2 * ((c - 1) % n) + 1, 2 * c)
    for i, j in pairs(word):
        same = word[i][1] == word[j][1]
        link = _merge(_merge(link, 2 * i, 2 * j if same else 2 * j + 1), 2 * i + 1, 2 * j + 1 if same else 2 * j)
    return len(set(link)) == len(set(corner_labels(word)))


def classify(word) -> str:
    orientable, _, chi, b = invariants(word)
    return BY_INVARIANTS.get((orientable, chi, b), OTHER)


def swapped(word, i: int, j: int):
    """Edges i and j trade letters, each keeping its own arrow."""
    w = list(word)
    w[i], w[j] = (word[j][0], word[i][1]), (word[i][0], word[j][1])
    return tuple(w)


def reversed_at(word, k: int):
    w = list(word)
    w[k] = (word[k][0], -word[k][1])
    return tuple(w)


# --- enumeration -------------------------------------------------------------------------------------------------

def _matchings(items: tuple[int, ...]):
    if not items:
        yield ()
        return
    a, rest = items[0], items[1:]
    for k, b in enumerate(rest):
        for m in _matchings(rest[:k] + rest[k + 1:]):
            yield ((a, b),) + m


@lru_cache(maxsize=None)
def base_words(n: int, n_free: int) -> dict[str, tuple[tuple, ...]]:
    """Every word of the shape up to flipping both arrows of one letter (which changes no invariant), by class.
    Letters are "0".."l-1" in order of first appearance; the first copy of each letter points anticlockwise (+1).
    Each base word stands for exactly 2**l words, so a uniform base word with uniform letter flips is a uniform
    word of the shape."""
    ell = (n - n_free) // 2
    out: dict[str, list] = {}
    for free in itertools.combinations(range(n), n_free):
        glued = tuple(k for k in range(n) if k not in free)
        for m in _matchings(glued):
            for signs in itertools.product((1, -1), repeat=ell):
                w = [("", 0)] * n
                for x, ((a, b), s) in enumerate(zip(m, signs)):
                    w[a], w[b] = (str(x), 1), (str(x), s)
                w = tuple(w)
                out.setdefault(classify(w), []).append(w)
    return {k: tuple(v) for k, v in out.items()}
