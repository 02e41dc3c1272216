"""Domain-specific tests for combination_2d: the tiling answers re-derived by an independent tiler written here
(cell sets and hand-written turns, not the domain's bitmask search), the minimal pair, the Q4 rephrasing, and
examples worked on paper."""
from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from domain_scenes import accepted_scene
from grip.domain import Reject
from grip.domains.transformational import _polyomino as pm
from grip.domains.transformational import combination_2d as c2
from grip.draws import Draws

N_SCENES = 15


def _accepted(seed: int, level: int) -> c2.Scene:
    return accepted_scene(c2, seed, level)


@lru_cache(maxsize=None)
def scenes() -> tuple[c2.Scene, ...]:
    return tuple(_accepted(500 + i, 1 + i % 3) for i in range(N_SCENES))


INDEX = st.integers(0, N_SCENES - 1)


# --- an independent tiler ------------------------------------------------------------------------------------------

def _norm(cells):
    x0, y0 = min(x for x, _ in cells), min(y for _, y in cells)
    return frozenset((x - x0, y - y0) for x, y in cells)


def _shapes(piece, flips):
    out, cur = set(), list(piece)
    for _ in range(4):
        cur = [(-y, x) for x, y in cur]                   # a quarter turn
        out.add(_norm(cur))
        if flips:
            out.add(_norm([(-x, y) for x, y in cur]))     # and its mirror image
    return out


def covers(region, pieces, flips):
    """Every way (as tuples of placed cell sets, one per piece) the pieces tile the region exactly."""
    region = frozenset(region)
    if sum(len(p) for p in pieces) != len(region):
        return []
    out = []

    def go(left, todo, placed):
        if not left:
            out.append(tuple(placed))
            return
        first = min(left, key=lambda c: (c[1], c[0]))
        for i in todo:
            for sh in _shapes(pieces[i], flips):
                for ax, ay in sh:                       # put cell (ax, ay) of the shape on `first`
                    cells = frozenset((x - ax + first[0], y - ay + first[1]) for x, y in sh)
                    if cells <= left:
                        go(left - cells, [j for j in todo if j != i], placed + [(i, cells)])
    go(region, list(range(len(pieces))), [])
    return out


def tiling_sets_brute(scene, flips):
    k = c2.K[scene.level]
    return [s for s in combinations(range(6), k)
            if covers(scene.target, [scene.bank[i] for i in s], flips)]


@settings(max_examples=15, deadline=None)
@given(INDEX)
def test_tiling_answers_match_an_independent_tiler(i):
    s = scenes()[i]
    lad = c2.ladder(s)
    turns = tiling_sets_brute(s, False)
    assert len(turns) == 1
    assert lad.rungs[3].answer.value == tuple(c2.NUMBERS[j] for j in turns[0])
    with_flips = tiling_sets_brute(s, True)
    assert lad.rungs[4].answer.value == ("yes" if [x for x in with_flips if x not in turns] else "no")
    # the open answer: the piece on the dot in every tiling by the Q4 set
    ways = covers(s.target, [s.bank[j] for j in turns[0]], False)
    owners = {turns[0][i] for way in ways for i, cells in way if s.dot in cells}
    assert owners == {c2.NUMBERS.index(lad.open.answer.fields["piece"].value)}


@settings(max_examples=30, deadline=None)
@given(INDEX)
def test_accepted_scenes_keep_every_rule(i):
    s = scenes()[i]
    lad = c2.ladder(s)
    assert len(s.target) == c2.AREA[s.level] and pm.connected(s.target) and not pm.has_hole(s.target)
    assert len(s.bank) == 6 and all(pm.connected(p) for p in s.bank)
    areas = sorted((len(p) for p in s.bank), reverse=True)
    assert areas[0] > areas[1] and len(s.bank[c2.NUMBERS.index(lad.rungs[1].answer.value)]) == areas[0]
    k = c2.K[s.level]
    assert lad.rungs[2].answer.value == sum(sum(len(s.bank[j]) for j in c) == len(s.target)
                                            for c in combinations(range(6), k)) >= 3
    assert lad.rungs[4].answer == c2.counterfactual(c2.edit(s)) and c2.edit(s).flips and not s.flips


@settings(max_examples=30, deadline=None)
@given(INDEX)
def test_minimal_pair_moves_one_cell_of_one_piece(i):
    s = scenes()[i]
    try:
        twin = c2.minimal_pair(s)
    except Reject as r:
        assert r.reason == "no_minimal_pair"
        return
    changed = [j for j in range(6) if twin.bank[j] != s.bank[j]]
    assert changed == [s.twin_slot] and len(twin.bank[s.twin_slot]) == len(s.bank[s.twin_slot])
    # P' differs from P by one cell moved (up to a translation of the drawing)
    a, b = s.bank[s.twin_slot], twin.bank[s.twin_slot]
    assert _best_overlap(a, b) == len(a) - 1
    old, new = set(c2.ladder(s).rungs[3].answer.value), set(c2.ladder(twin).rungs[3].answer.value)
    assert len(old ^ new) == 2                           # the piece Q swapped for Q'
    assert c2.ladder(twin).rungs[0].answer == c2.ladder(s).rungs[0].answer
    r = c2.rephrase_q4(s)
    assert r.answer == c2.ladder(s).rungs[3].answer and r.text != c2.ladder(s).rungs[3].text


def _best_overlap(a, b):
    from collections import Counter
    d = Counter((p[0] - q[0], p[1] - q[1]) for p in a for q in b)
    return max(d.values())


# --- examples worked on paper --------------------------------------------------------------------------------------

L3 = ((0, 0), (1, 0), (0, 1))
L4 = ((0, 0), (1, 0), (2, 0), (0, 1))        # a row of three, one cell under its left end
J4 = ((0, 0), (1, 0), (2, 0), (2, 1))        # its mirror image: the cell under the right end


def test_two_trominoes_tile_a_2x3_rectangle_two_ways():
    # The 2 x 3 rectangle splits into two L-trominoes only along a "staircase": either the left L takes the top-left
    # corner pair or the bottom-left pair. As an ordered pair of named pieces, each tiling counts twice.
    rect = pm.mask_of([(x, y) for x in range(3) for y in range(2)])
    found, _ = pm.tilings((L3, L3), rect, flips=False)
    assert len(found) == 4 and len({frozenset(t) for t in found}) == 2


def test_l_and_j_tetrominoes_in_a_2x4_rectangle():
    # A 2 x 4 rectangle cut into two L-shaped tetrominoes: the two halves are turns of each other (half-turn
    # symmetry), so both are L or both are J. Turning only, {L, J} never tiles it; with flips, each of the two cuts
    # takes L and J either way round: 4 ordered tilings.
    rect = pm.mask_of([(x, y) for x in range(4) for y in range(2)])
    assert pm.tilings((L4, J4), rect, flips=False)[0] == []
    assert len(pm.tilings((L4, J4), rect, flips=True)[0]) == 4
    # Best overlap-allowed cover with turns: L on the top row's left three plus (0, 1), J turned on the bottom row's
    # right three plus (1, 0): 7 of 8 cells, u = 1.
    assert pm.uncovered((L4, J4), rect, flips=False) == 1
    assert pm.uncovered((L4, L4), rect, flips=False) == 0
    assert pm.chiral(L4) and not pm.chiral(L3) and pm.congruent(L4, J4) and not pm.congruent(L4, J4, flips=False)


def test_small_scene_by_hand():
    # Target: the 2 x 3 rectangle. Bank: three dominoes (areas 2), an L-tromino (3) and two single cells (1).
    # Q1 = 6; Q2: piece 4 (area 3, unique). Triples of total 6: the three dominoes (1 set), and the L with one domino
    # and one single cell (3 x 2 = 6 sets): Q3 = 7. Every one of them tiles (three dominoes tile 2 x 3; the L in a
    # corner leaves a domino and a cell), so the tiling set is not unique and Q4 is rejected.
    target = tuple(sorted((x, y) for x in range(3) for y in range(2)))
    dom, cell = ((0, 0), (1, 0)), ((0, 0),)
    s = c2.Scene(1, target, (dom, ((0, 0), (0, 1)), dom, L3, cell, cell), (0, 0), 0, dom)
    assert c2.target_area(s).value == 6 and c2.largest_piece(s).value == "4"
    assert c2.matching_sets(s).value == 7
    assert len(c2.tiling_sets(s, False)[0]) == 7
    with pytest.raises(Reject):
        c2.tiling_set(s)


def test_fast_cell_helpers_match_grip_geometry():
    """`pm.normalise`, `pm.apply` and `c2.cells_outline` give exactly what `grip.geometry` gives."""
    from grip.geometry import D4_OPS, cells_apply, cells_polygon, normalise_lattice
    d = Draws(np.random.default_rng(7))
    for _ in range(80):
        cells = pm.grow(d, d.integers(1, 13))
        assert pm.normalise(cells) == normalise_lattice(cells)
        assert pm.cells_of(pm.mask_of(cells)) == tuple(sorted(cells))
        for op in D4_OPS:
            assert pm.apply(op, cells) == cells_apply(op, cells)
        assert c2.cells_outline(cells).wkb == cells_polygon(cells).wkb
        assert pm.cell_bits(pm.mask_of(cells)) == tuple(pm.mask_of([c]) for c in sorted(cells))


def _geos_rings(cells):
    outline = c2.cells_outline(cells)
    return [list(ring.coords[:-1]) for poly in getattr(outline, "geoms", [outline])
            for ring in (poly.exterior, *poly.interiors)]


def test_traced_outline_is_the_union_ring_and_draws_the_same_pixels(monkeypatch):
    """`c2._outline_rings` traces a connected hole-free set's ring itself: `cells_outline`'s exterior, vertex for
    vertex in the same order from another start, and the same pixels drawn; sets with holes keep the union's."""
    from grip.renderers.canvas import Canvas
    d = Draws(np.random.default_rng(13))
    cases = [((0, 0), (1, 0)), ((0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (2, 1), (2, 2), (1, 2))]   # the second: a hole
    cases += [pm.grow(d, d.integers(2, 16)) for _ in range(80)]
    cases += [pm.compact_region(d, n) for n in (12, 16, 20) * 5]
    traced = c2._outline_rings.__wrapped__
    for i, cells in enumerate(tuple(sorted(c)) for c in cases if c is not None):
        rings, want = traced(cells), _geos_rings(cells)
        if pm.has_hole(cells):
            assert [list(r) for r in rings] == want
            continue
        (ring,) = rings
        k = want[0].index(ring[0])
        assert list(ring) == want[0][k:] + want[0][:k] and len(want) == 1
        if i % 8 == 0:
            drawn = []
            for outline in (traced, lambda c: tuple(map(tuple, _geos_rings(c)))):
                canvas = Canvas(300)
                monkeypatch.setattr(c2, "_outline_rings", outline)
                c2._cells_shape(canvas, cells, (10.0, 12.5), c2.BANK_CELL, (0.9, 0.8, 0.7), True, "x")
                drawn.append(canvas.surface.get_data().tobytes())
            assert drawn[0] == drawn[1]


# --- the fast search helpers against plain references ----------------------------------------------------------------

def _plain_placements(piece, region, flips):
    out = set()
    for o in pm.orientations(piece, flips):
        w, h = max(x for x, _ in o) + 1, max(y for _, y in o) + 1
        for dy in range(pm.BOARD - h + 1):
            for dx in range(pm.BOARD - w + 1):
                m = pm.mask_of([(x + dx, y + dy) for x, y in o])
                if m & region == m:
                    out.add(m)
    return tuple(sorted(out))


def _plain_tilings(pieces, region, flips, limit=64):
    places = [_plain_placements(p, region, flips) for p in pieces]
    found, nodes, chosen = [], [0], [0] * len(pieces)

    def go(left, used):
        nodes[0] += 1
        if len(found) >= limit:
            return
        if not left:
            found.append(tuple(chosen))
            return
        low = left & -left
        for i, pl in enumerate(places):
            if not used >> i & 1:
                for m in pl:
                    if m & low and m & left == m:
                        chosen[i] = m
                        go(left & ~m, used | 1 << i)
    go(region, 0)
    return found, nodes[0]


def test_placements_tilings_and_shape_keys_match_plain_references():
    from grip.geometry import D4_OPS, ROTATION_OPS
    d = Draws(np.random.default_rng(11))
    for _ in range(40):
        region = pm.compact_region(d, d.integers(6, 13))
        pieces = pm.partition(d, region, 2, min_size=2) if region else None
        if pieces is None:
            continue
        mask = pm.mask_of(region)
        pieces = tuple(pm.normalise(p) for p in pieces)
        for flips in (False, True):
            for p in pieces:
                assert pm.placements(p, mask, flips) == _plain_placements(p, mask, flips)
            assert pm.tilings(pieces, mask, flips) == _plain_tilings(pieces, mask, flips)
        for p in pieces:
            assert pm.shape_key(pm.mask_of(p)) == pm.mask_of(pm.normalise(p))
            images = {pm.apply(op, p) for op in D4_OPS}
            assert pm.orbit_keys(pm.shape_key(pm.mask_of(p))) == {pm.mask_of(c) for c in images}
            turns = list(dict.fromkeys(pm.apply(op, p) for op in ROTATION_OPS))      # in `D4_OPS` order
            assert pm.orientations(p, False) == tuple(turns)
            assert pm.orientations(p, True) == tuple(dict.fromkeys(turns + [pm.apply(op, p) for op in D4_OPS]))
            assert pm.chiral(p) == (pm.apply("flip_x", p) not in {pm.apply(op, p) for op in ROTATION_OPS})


def _plain_pick(rng, m):
    for _ in range(int(rng.integers(m.bit_count()))):
        m &= m - 1
    return m & -m


def _plain_grow(rng, n):
    m = 1 << int(rng.integers(pm.BOARD * pm.BOARD))
    for _ in range(n - 1):
        front = pm.expand(m) & ~m
        if not front:
            return None
        m |= _plain_pick(rng, front)
    return pm.cells_of(m)


def _plain_partition(rng, region, k, min_size=3):
    free = pm.mask_of(region)
    parts = []
    for i in rng.choice(len(region), size=k, replace=False):
        parts.append(pm.mask_of([region[int(i)]]))
        free &= ~parts[-1]
    sizes = [1] * k
    while free:
        able = [i for i in range(k) if pm.expand(parts[i]) & free]
        if not able:
            return None
        least = min(sizes[i] for i in able)
        pick = [i for i in able if sizes[i] == least]
        i = pick[int(rng.integers(len(pick)))]
        b = _plain_pick(rng, pm.expand(parts[i]) & free)
        parts[i] |= b
        sizes[i] += 1
        free &= ~b
    return [pm.cells_of(p) for p in parts] if min(sizes) >= min_size else None


def _plain_compact_region(rng, n):
    start = _plain_grow(rng, n)
    if start is None:
        return None
    empty = pm.FULL & ~pm.mask_of(start)
    m = pm.FULL & ~pm._flood(empty & pm._BORDER, empty)          # holes filled
    while m.bit_count() > n:
        bits = pm._bits(m & (pm.expand(pm.FULL & ~m) | pm._BORDER))
        for i in rng.permutation(len(bits)):
            rest = m & ~bits[int(i)]
            if pm.connected(rest) and not pm.has_hole(rest):
                m = rest
                break
        else:
            return None
    return pm.cells_of(m)


def test_growth_skips_only_draws_that_read_nothing():
    """`pm.grow`, `pm.partition` and `pm.compact_region` (drawing through `Draws`, and skipping `integers(1)`, which
    leaves the generator as it was) give the same pieces and the same generator state as plain Generator draws."""
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert all(rng.integers(1) == 0 for _ in range(5)) and rng.bit_generator.state == state
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    d = Draws(a)
    for n in (12, 16, 20) * 15:
        region = pm.compact_region(d, n)
        assert region == _plain_compact_region(b, n)
        if region is not None:
            assert pm.partition(d, region, 3 + n % 2) == _plain_partition(b, region, 3 + n % 2)
        assert pm.grow(d, n // 2) == _plain_grow(b, n // 2) and a.bit_generator.state == b.bit_generator.state
