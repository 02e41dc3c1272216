"""Domain-specific tests for surface_topology. Every invariant the module computes from the edge word (union-find on
corners, V - E + 1, "each letter once each way") is recomputed here by a second, independent algorithm: the polygon
is cut into 3n triangles round a centre point, each edge into three segments; the segments are glued as cells, and
orientability is found by propagating triangle orientations across shared cells, the boundary by tracing the cells
that lie on one triangle only, and manifoldness from the link of every glued point. The classification theorem then
names the surface."""
from dataclasses import replace
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.topological import _gluing as gl
from grip.domains.topological import surface_topology as su

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])
SUB = 3     # segments per polygon edge: every triangle then has three distinct glued vertices


# --- the second algorithm ----------------------------------------------------------------------------------------

class _Classes:
    def __init__(self):
        self.p = {}

    def find(self, x):
        self.p.setdefault(x, x)
        while self.p[x] != x:
            x = self.p[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.p[rb] = ra


def brute(letters, exps):
    """(orientable, corner points V, chi, boundary cycles b, manifold, surface, corner-group sizes) from an explicit
    triangulated gluing."""
    n = len(letters)

    def pt(k, t):                       # point at step t (0..SUB) of edge k in reading order
        if t == 0:
            return ("c", k % n)
        return ("c", (k + 1) % n) if t == SUB else ("e", k, t)

    def along(k, s):                    # step s (0..SUB) along edge k's arrow
        return s if exps[k] > 0 else SUB - s

    pts, segs = _Classes(), _Classes()
    copies = {}
    for k, x in enumerate(letters):
        if x:
            copies.setdefault(x, []).append(k)
    for x, (i, j) in copies.items():
        for s in range(SUB + 1):
            pts.union(pt(i, along(i, s)), pt(j, along(j, s)))
        for s in range(SUB):            # segment s along the arrow of i glued to segment s along the arrow of j
            ti = min(along(i, s), along(i, s + 1))
            tj = min(along(j, s), along(j, s + 1))
            segs.union(("s", i, ti), ("s", j, tj))
    # Triangles (O, pt(k, t), pt(k, t + 1)) traversed O -> p -> q -> O; cells are spokes and glued segments.
    tris = [(k, t) for k in range(n) for t in range(SUB)]
    incid = {}                          # cell -> [(triangle, from-class, to-class)]
    for tr in tris:
        k, t = tr
        p, q = pts.find(pt(k, t)), pts.find(pt(k, t + 1))
        assert p != q
        cells = ((("o", k, t), "O", p), (segs.find(("s", k, t)), p, q), (("o", k, t + 1) if t + 1 < SUB else
                                                                          ("o", (k + 1) % n, 0), q, "O"))
        for cell, a, b in cells:
            incid.setdefault(cell, []).append((tr, a, b))
    verts = {pts.find(pt(k, t)) for k in range(n) for t in range(SUB)} | {"O"}
    chi = len(verts) - len(incid) + len(tris)
    # Orientation propagation: across a shared cell the two triangles must traverse it in opposite directions.
    sign, orientable = {tris[0]: 1}, True
    todo = [tris[0]]
    adj = {}
    for cell, uses in incid.items():
        assert len(uses) <= 2
        if len(uses) == 2:
            (ta, a1, b1), (tb, a2, b2) = uses
            flip = (a1, b1) == (a2, b2)
            adj.setdefault(ta, []).append((tb, flip))
            adj.setdefault(tb, []).append((ta, flip))
    while todo:
        tr = todo.pop()
        for other, flip in adj.get(tr, []):
            want = -sign[tr] if flip else sign[tr]
            if other not in sign:
                sign[other] = want
                todo.append(other)
            elif sign[other] != want:
                orientable = False
    # Boundary cycles: cells on one triangle, joined at their glued end points.
    bound = _Classes()
    free = [(a, b) for uses in incid.values() if len(uses) == 1 for _, a, b in uses]
    for a, b in free:
        bound.union(a, b)
    b_count = len({bound.find(a) for a, _ in free})
    # Links: at each glued point, the cells round it joined by the triangle corners there.
    link = _Classes()
    at = {}
    for cell, uses in incid.items():
        for _, a, b in uses:
            at.setdefault(a, set()).add(cell)
            at.setdefault(b, set()).add(cell)
    tri_cells = {}
    for cell, uses in incid.items():
        for tr, a, b in uses:
            tri_cells.setdefault(tr, []).append((cell, a, b))
    for tr, cells in tri_cells.items():
        for v in {x for _, a, b in cells for x in (a, b)}:
            touching = [c for c, a, b in cells if v in (a, b)]
            assert len(touching) == 2
            link.union((v, touching[0]), (v, touching[1]))
    manifold = all(len({link.find((v, c)) for c in cs}) == 1 for v, cs in at.items())
    if orientable:
        names = {(2, 0): su.SPHERE, (1, 1): su.DISK, (0, 2): su.ANNULUS, (0, 0): su.TORUS, (-2, 0): su.DOUBLE_TORUS}
    else:
        names = {(1, 0): su.PROJECTIVE, (0, 0): su.KLEIN, (0, 1): su.MOBIUS}
    surface = names.get((chi, b_count), su.OTHER) if manifold else su.OTHER
    sizes = {}
    for k in range(n):
        r = pts.find(("c", k))
        sizes[r] = sizes.get(r, 0) + 1
    corners = sorted(sizes.values(), reverse=True)
    return orientable, len(sizes), chi, b_count, manifold, surface, tuple(corners)


def brute_scene(s: su.Scene):
    return brute(s.letters, s.exponents)


def accepted(seed: int, level: int) -> su.Scene:
    rng = np.random.default_rng(seed)
    for _ in range(50):
        try:
            s = su.sample(rng, level)
        except Reject:
            continue
        if not su.ladder(s).failing_margins():
            return s
    raise AssertionError(f"no accepted scene for seed {seed} level {level}")


def scene(word: str, swap=(0, 1), level=1) -> su.Scene:
    """A scene from a word such as "a b A B" (capital = inverse) or "a _ b" (_ = free edge)."""
    toks = word.split()
    return su.Scene(level, tuple("" if t == "_" else t.lower() for t in toks),
                    tuple(0 if t == "_" else (1 if t.islower() else -1) for t in toks), swap)


def answers(s: su.Scene):
    lad = su.ladder(s)
    return [q.answer.reference_text() for q in lad.questions]


# --- examples worked on paper ------------------------------------------------------------------------------------

def test_torus_by_hand():
    # a b a^-1 b^-1 on a square: a glues tail 0 ~ 3, head 1 ~ 2; b glues 1 ~ 0, 2 ~ 3: one point, all 4 corners.
    # V - E + F = 1 - 2 + 1 = 0, orientable, closed: torus. Trading top (a) and left (b): b a a^-1 b^-1, the a's
    # cancel and b b^-1 is a sphere. Minimal pair: reverse the top arrow: a^-1 b a^-1 b^-1 has V = 1, chi = 0,
    # a twice the same way: Klein bottle.
    s = scene("a b A B", swap=(0, 1))
    assert answers(s) == ["2", "orientable", "1", "euler_characteristic=0; surface=torus", "sphere",
                          "corner_groups=4"]
    twin = su.minimal_pair(s)
    assert twin.exponents == (-1, 1, -1, -1) and twin.letters == s.letters
    assert su.ladder(twin).rungs[3].answer.reference_text() == "euler_characteristic=0; surface=Klein bottle"
    assert "top edge (labelled a) and the left edge (labelled b)" in su.ladder(s).rungs[4].text


def test_sphere_by_hand():
    # a b b^-1 a^-1: b glues 1 ~ 3 (tails) and 2 ~ 2; a glues 0 ~ 0 and 1 ~ 3: points {1, 3}, {0}, {2}: V = 3,
    # chi = 3 - 2 + 1 = 2: sphere, corner groups 2, 1, 1 (the sheet's example).
    s = scene("a b B A", swap=(1, 3))
    assert answers(s)[:4] == ["2", "orientable", "3", "euler_characteristic=2; surface=sphere"]
    assert answers(s)[5] == "corner_groups=2+1+1"
    # Trade the left (b) and right (a) edges: a a b^-1 b^-1; a glues 0 ~ 1, 1 ~ 2 and b glues 3 ~ 0, 2 ~ 3: one
    # point, chi = 1 - 2 + 1 = 0, a twice the same way: Klein bottle.
    assert su.ladder(s).rungs[4].answer.value == su.KLEIN


def test_annulus_by_hand():
    # a _ b b^-1 a^-1 _ on a hexagon: a glues 0 ~ 5, 1 ~ 4; b glues 2 ~ 4, 3 ~ 3. Points {0, 5}, {1, 2, 4}, {3}:
    # V = 3, E = 2 letters + 2 free = 4, chi = 0, orientable; free edge 1 joins {1,2,4} to itself and free edge 5
    # {0,5} to itself: two boundary cycles: annulus. Trading top (a) and lower left (b): b _ a b^-1 a^-1 _ glues
    # 0~4, 1~3, 2~5, 3~4: V = 2, chi = -1, one boundary cycle, orientable: a punctured torus, "other".
    s = scene("a _ b B A _", swap=(0, 2), level=2)
    assert answers(s) == ["2", "orientable", "3", "euler_characteristic=0; surface=annulus", "other",
                          "corner_groups=3+2+1"]
    # Minimal pair: reversing the top arrow gives a^-1 _ b b^-1 a^-1 _: V = 3, chi = 0, one boundary: Moebius band.
    twin = su.minimal_pair(s)
    assert twin.exponents[0] == -1 and su.surface_of(twin) == su.MOBIUS


def test_brute_force_agrees_on_the_hand_examples():
    assert brute_scene(scene("a b A B"))[:6] == (True, 1, 0, 0, True, su.TORUS)
    assert brute_scene(scene("a b B A"))[:6] == (True, 3, 2, 0, True, su.SPHERE)
    assert brute_scene(scene("a a b b"))[5] == su.KLEIN and brute_scene(scene("a b a b"))[5] == su.PROJECTIVE
    assert brute_scene(scene("a _ b B A _"))[:6] == (True, 3, 0, 2, True, su.ANNULUS)
    assert brute_scene(scene("b _ a B A _"))[:6] == (True, 2, -1, 1, True, su.OTHER)
    assert brute_scene(scene("a b A B c d C D"))[5] == su.DOUBLE_TORUS


# --- exhaustive agreement on small shapes ------------------------------------------------------------------------

def _all_words(n: int, n_free: int):
    for cls, ws in gl.base_words(n, n_free).items():
        for w in ws:
            ell = (n - n_free) // 2
            for flips in product((1, -1), repeat=ell):
                yield cls, tuple((x, e * flips[int(x)]) if x else (x, e) for x, e in w)


@pytest.mark.parametrize("shape", [(4, 0), (6, 0), (6, 2)])
def test_every_small_word_classifies_as_the_triangulation_says(shape):
    count = 0
    for cls, w in _all_words(*shape):
        if cls == su.OTHER and count % 5:       # the unlisted words: a fifth of them is enough
            count += 1
            continue
        o, v, chi, b, man, surf, sizes = brute([x for x, _ in w], [e for _, e in w])
        assert (o, v, chi, b) == gl.invariants(w) and man == gl.manifold(w) and man and surf == cls
        assert sizes == gl.corner_class_sizes(w)
        count += 1
    assert count == {(4, 0): 48, (6, 0): 960, (6, 2): 720}[shape]


@pytest.mark.parametrize("shape", [(4, 0), (6, 0), (6, 2)])
def test_reachable_outcomes_are_exactly_the_enumerated_ones(shape):
    n = shape[0]
    found = {}
    for cls, w in _all_words(*shape):
        if cls == su.OTHER:
            continue
        lettered = [k for k in range(n) if w[k][0]]
        # A reversal twin serves every trade; only words without one need the per-trade check.
        by_reversal = any(gl.classify(gl.reversed_at(w, k)) not in (su.OTHER, cls) for k in lettered)
        for i, j in combinations(lettered, 2):
            if w[i][0] != w[j][0] and (by_reversal or su.minimal_word(w, (i, j)) is not None):
                found.setdefault(cls, set()).add(gl.classify(gl.swapped(w, i, j)))
    for cls, outs in found.items():
        assert outs == set(su.reachable(cls, n)) and len(outs) >= 2


# --- properties --------------------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_ladder_matches_the_triangulation(seed, level):
    s = accepted(seed, level)
    o, v, chi, b, man, surf, sizes = brute_scene(s)
    lad = su.ladder(s)
    assert man and surf in su.LEVEL_CLASSES[level]
    assert lad.rungs[0].answer.value == len({x for x in s.letters if x})
    assert lad.rungs[1].answer.value == ("orientable" if o else "non-orientable")
    assert lad.rungs[2].answer.value == v
    assert lad.rungs[3].answer.fields["euler_characteristic"].value == chi
    assert lad.rungs[3].answer.fields["surface"].value == surf
    assert lad.open.answer.fields["corner_groups"].value == "+".join(map(str, sizes))
    assert sum(sizes) == len(s.letters) and len(sizes) == v
    # Q5 recomputed on the traded word by the triangulation
    i, j = s.swap
    assert s.letters[i] and s.letters[j] and s.letters[i] != s.letters[j]
    e = su.edit(s)
    assert e.letters[i] == s.letters[j] and e.letters[j] == s.letters[i] and e.exponents == s.exponents
    assert lad.rungs[4].answer.value == brute_scene(e)[5] == su.counterfactual(e).value
    assert lad.rungs[4].answer.value in su.reachable(surf, len(s.letters))
    assert scene_from_json(su.Scene, scene_to_json(s)) == s


@settings(max_examples=30, deadline=None)
@given(SEEDS, LEVELS, st.integers(0, 7), st.booleans(), st.permutations("abcd"))
def test_rotations_reflections_and_renaming_keep_the_surface(seed, level, shift, mirror, names):
    s = accepted(seed, level)
    n = len(s.letters)
    w = list(zip(s.letters, s.exponents))
    w = w[shift % n:] + w[:shift % n]
    if mirror:                               # read the other way round: order reversed, every arrow flips
        w = [(x, -e) for x, e in reversed(w)]
    rename = dict(zip("abcd", names))
    t = su.Scene(level, tuple(rename.get(x, "") for x, _ in w), tuple(e for _, e in w), (0, 1))
    a, b = su.ladder(s), su.ladder(t)
    for k in (1, 2, 3):
        assert a.rungs[k].answer.key() == b.rungs[k].answer.key()
    assert a.open.answer == b.open.answer
    assert brute_scene(t)[5] == su.surface_of(s)


@settings(max_examples=30, deadline=None)
@given(SEEDS, LEVELS)
def test_minimal_pair_is_one_arrow_or_two_adjacent_letters(seed, level):
    s = accepted(seed, level)
    twin = su.minimal_pair(s)
    n = len(s.letters)
    arrows = [k for k in range(n) if s.exponents[k] != twin.exponents[k]]
    letters = [k for k in range(n) if s.letters[k] != twin.letters[k]]
    if arrows:
        assert len(arrows) == 1 and not letters
        k = arrows[0]
        # it is the first edge in reading order whose reversal gives another listed surface
        for m in range(k):
            if s.letters[m]:
                c = brute_scene(replace(s, exponents=tuple(-e if i == m else e for i, e in enumerate(s.exponents))))
                assert c[5] in (su.OTHER, su.surface_of(s))
    else:
        assert len(letters) == 2 and (letters[1] - letters[0]) % n in (1, n - 1)
        assert twin.exponents == s.exponents
    surf = brute_scene(twin)[5]
    assert surf in su.SURFACES and surf != su.surface_of(s)
    assert su.ladder(twin).rungs[0].answer == su.ladder(s).rungs[0].answer
    assert not su.ladder(twin).failing_margins()
    i, j = twin.swap
    assert twin.letters[i] != twin.letters[j]


@settings(max_examples=25, deadline=None)
@given(SEEDS, LEVELS)
def test_rephrase_is_the_same_answer(seed, level):
    s = accepted(seed, level)
    r, q4 = su.rephrase_q4(s), su.ladder(s).rungs[3]
    assert r.answer == q4.answer and r.text != q4.text and r.margin.ok


def test_levels_keep_their_classes_and_the_balance_draws_every_letter_count():
    seen = {lv: set() for lv in (1, 2, 3)}
    ells = {lv: set() for lv in (1, 2, 3)}
    for seed in range(24):
        for lv in (1, 2, 3):
            s = accepted(seed, lv)
            seen[lv].add(su.surface_of(s))
            ells[lv].add(len({x for x in s.letters if x}))
    assert seen[1] == {su.SPHERE, su.TORUS, su.PROJECTIVE, su.KLEIN}
    assert seen[2] <= set(su.LEVEL_CLASSES[2]) and {su.DISK, su.ANNULUS, su.MOBIUS} <= seen[2]
    assert su.DOUBLE_TORUS in seen[3] and su.DOUBLE_TORUS not in seen[2]
    assert all(e == {2, 3, 4} for e in ells.values())


def test_letters_clear_the_polygon_at_every_size():
    for word in ("a b A B", "a b c A B C", "a b c d A B C D"):
        s = scene(word)
        assert su.letter_clearance_px(s) >= su.LETTER_CLEAR_PX and su.edge_length_px(s) >= su.EDGE_MIN_PX


def test_minimal_pair_changes_few_pixels_in_a_small_box():
    """The sheet's QA (0.7): changed pixels <= 5% of the canvas, their bounding box <= 25%."""
    from grip.renderers.canvas import Canvas
    for seed, level in ((1, 1), (4, 2), (9, 3)):
        s = accepted(seed, level)
        imgs = []
        for t in (s, su.minimal_pair(s)):
            c = Canvas(768)
            su.draw(t, c)
            imgs.append(c.array())
        diff = np.argwhere((imgs[0] != imgs[1]).any(axis=2))
        (y0, x0), (y1, x1) = diff.min(axis=0), diff.max(axis=0)
        assert 0 < len(diff) <= 0.05 * 768 * 768 and (y1 - y0 + 1) * (x1 - x0 + 1) <= 0.25 * 768 * 768


def test_invariants_match_the_label_merging_reference():
    """The one-pass `gl.invariants` against the same quantities from `pairs`, `corner_labels` and `_merge`."""
    rng = np.random.default_rng(3)
    for n, n_free in ((4, 0), (6, 2), (8, 0), (8, 4)):
        for w in [w for ws in gl.base_words(n, n_free).values() for w in ws][::8]:
            w = tuple((x, e * int(rng.choice((1, -1)))) if x else (x, e) for x, e in w)
            prs, lab = gl.pairs(w), gl.corner_labels(w)
            free = [k for k in range(n) if not w[k][0]]
            bl = lab
            for k in free:
                bl = gl._merge(bl, k, (k + 1) % n)
            want = (all(w[i][1] != w[j][1] for i, j in prs), len(set(lab)),
                    len(set(lab)) - len(prs) - len(free) + 1, len({bl[k] for k in free}))
            assert gl.invariants(w) == want
