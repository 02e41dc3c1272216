"""Domain-specific tests for laser_mirrors: an independent tracer, reversibility, metamorphic relations (rotation,
reflection, translation, relabelling), the sampler's construction guarantees, and examples worked on paper."""
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from shapely.geometry import LineString, box

from grip.builder import generate
from grip.domain import Reject, scene_from_json, scene_to_json
from grip.domains.physical import laser_mirrors as lm
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.text import text_size
from domain_scenes import accepted_scene

SEEDS = st.integers(0, 2**32)
LEVELS = st.sampled_from([1, 2, 3])
FEW = settings(max_examples=25)


def accepted(seed: int, level: int) -> lm.Scene:
    return accepted_scene(lm, seed, level, 200)


def answers(s):
    return [q.answer for q in lm.ladder(s).questions]


def oracle(s):
    """Independent tracer in screen coordinates (x right, y DOWN): on screen '/' sends a beam moving right upwards,
    i.e. (dx, dy) -> (-dy, -dx); '\\' sends it downwards, (dx, dy) -> (dy, dx). Returns (hits, end)."""
    n = s.n
    kinds = {(c, r): (k + 1, kind) for k, (r, c, kind) in enumerate(s.mirrors)}   # keyed (x, y) = (col, row)
    side, i = s.entry
    x, y = {"top": (i, 1), "bottom": (i, n), "left": (1, i), "right": (n, i)}[side]
    dx, dy = {"top": (0, 1), "bottom": (0, -1), "left": (1, 0), "right": (-1, 0)}[side]
    hits = []
    while 1 <= x <= n and 1 <= y <= n:
        if (y, x) in set(s.absorbers):
            return hits, ("absorbed", y, x)
        if (x, y) in kinds:
            k, kind = kinds[(x, y)]
            hits.append(k)
            dx, dy = (-dy, -dx) if kind == "/" else (dy, dx)
        x, y = x + dx, y + dy
    end = ("top", x) if y < 1 else ("bottom", x) if y > n else ("left", y) if x < 1 else ("right", y)
    return hits, ("exit", *end)


def hand_scene(n, mirrors, entry, exits, absorbers=(), flip=1, level=2):
    return lm.Scene(level, n, tuple(mirrors), tuple(absorbers), entry, tuple(exits), flip, (0.0, 0.0))


def rotated(s):
    """The board turned 90 degrees clockwise on screen: cell (r, c) -> (c, n + 1 - r); a 45-degree bar turned by 90
    degrees is the other diagonal; edges move top -> right -> bottom -> left."""
    n = s.n

    def edge(side, i):
        return {"top": ("right", i), "right": ("bottom", n + 1 - i), "bottom": ("left", i),
                "left": ("top", n + 1 - i)}[side]

    return replace(s, mirrors=tuple((c, n + 1 - r, "\\" if k == "/" else "/") for r, c, k in s.mirrors),
                   absorbers=tuple((c, n + 1 - r) for r, c in s.absorbers), entry=edge(*s.entry),
                   exits=tuple((L, *edge(side, i)) for L, side, i in s.exits))


# --- examples worked on paper ------------------------------------------------------------------------------------

# 5x5, laser on the left edge of row 3 firing right. Mirror 1 '/' at (3,4), mirror 2 '\' at (1,4).
# Right along row 3 to (3,4): '/' sends a rightward beam up (heading east -> north: a LEFT turn). Up column 4 to
# (1,4): '\' sends an upward beam left (north -> west: left again). Left along row 1 out through the left edge of
# row 1, lettered B. Two reflections, mirrors 1 then 2.
# Flip 2 ('/'): the upward beam turns right along row 1 and leaves by the right edge of row 1 (C).
# Flip 1 ('\'): the rightward beam turns down column 4 and leaves by the bottom of column 4 (D) -- unless an
# absorber sits at (5,4), which then swallows it.
EXAMPLE = dict(n=5, mirrors=((3, 4, "/"), (1, 4, "\\")), entry=("left", 3),
               exits=(("A", "top", 4), ("B", "left", 1), ("C", "right", 1), ("D", "bottom", 4),
                      ("E", "top", 1), ("F", "right", 5), ("G", "bottom", 2), ("H", "left", 5)))


def test_two_mirror_example_by_hand():
    s = hand_scene(**EXAMPLE, flip=2)
    assert lm.first_turn(s).value == "left"
    assert lm.reflection_count(s).value == 2
    assert lm.beam_end(s).value == "B"
    assert lm.mirrors_in_order(s).reference_value() == {"mirrors": ("1", "2")}
    assert lm.ladder(s).rungs[4].answer.value == "C"
    flip1 = replace(s, flip=1)
    assert lm.ladder(flip1).rungs[4].answer.value == "D"
    sunk = replace(flip1, absorbers=((5, 4),))
    assert lm.ladder(sunk).rungs[3].answer.value == "B"          # the absorber is off the original path
    assert lm.ladder(sunk).rungs[4].answer.value == "absorbed"


# 5x5, laser below column 2 firing up. Mirrors: 1 '/' (3,2), 2 '/' (3,4), 3 '\' (1,4), 4 '/' (1,2).
# Up to (3,2): '/' turns an upward beam right (north -> east: a RIGHT turn). Right to (3,4): '/' turns it up.
# Up to (1,4): '\' turns it left. Left to (1,2): '/' turns a leftward beam down. Down to (3,2) again, now from
# above: '/' turns a downward beam left, out through the left edge of row 3 (E). Hits 1,2,3,4,1: five
# reflections, mirror 1 struck on both faces. Entering at E firing right retraces it: hits 1,4,3,2,1, out at the
# bottom of column 2.
LOOP = dict(n=5, mirrors=((3, 2, "/"), (3, 4, "/"), (1, 4, "\\"), (1, 2, "/")), entry=("bottom", 2),
            exits=(("A", "top", 1), ("B", "top", 3), ("C", "right", 2), ("D", "right", 4), ("E", "left", 3),
                   ("F", "left", 5), ("G", "bottom", 5), ("H", "bottom", 4)))


def test_both_faces_of_one_mirror_by_hand():
    s = hand_scene(**LOOP)
    t = lm.trace(s)
    assert t.hits == (1, 2, 3, 4, 1)
    assert t.turns[0] == "right" and lm.first_turn(s).value == "right"
    assert lm.reflection_count(s).value == 5
    assert lm.beam_end(s).value == "E"
    back = lm.trace(replace(s, entry=("left", 3)))
    assert back.hits == (1, 4, 3, 2, 1) and back.end == ("exit", "bottom", 2)
    with pytest.raises(Reject):       # an Ordered answer cannot repeat a number: such scenes are rejected
        lm.mirrors_in_order(s)


def test_absorber_before_any_mirror_is_rejected_and_unlettered_exit_too():
    s = hand_scene(**EXAMPLE, absorbers=((3, 2),))
    assert lm.beam_end(s).value == "absorbed" and lm.reflection_count(s).value == 0
    with pytest.raises(Reject):
        lm.first_turn(s)
    bare = hand_scene(**{**EXAMPLE, "exits": EXAMPLE["exits"][2:]})
    with pytest.raises(Reject):
        lm.beam_end(bare)
    assert lm.end_label_gap_px(bare) == 0.0


# --- properties of sampled scenes --------------------------------------------------------------------------------

@FEW
@given(SEEDS, LEVELS)
def test_tracer_agrees_with_an_independent_oracle(seed, level):
    s = accepted(seed, level)
    for scene in (s, lm.edit(s)):
        hits, end = oracle(scene)
        t = lm.trace(scene)
        assert list(t.hits) == hits and t.end == end


@FEW
@given(SEEDS, LEVELS)
def test_paths_are_reversible(seed, level):
    s = accepted(seed, level)
    for scene in (s, lm.edit(s)):
        t = lm.trace(scene)
        if t.end[0] != "exit":
            continue
        back = lm.trace(replace(scene, entry=t.end[1:]))
        assert back.hits == t.hits[::-1]
        assert back.end == ("exit", *scene.entry)
        assert back.cells == t.cells[::-1]


@FEW
@given(SEEDS, LEVELS)
def test_sampler_construction(seed, level):
    s = accepted(seed, level)
    p = lm.LEVEL[level]
    t = lm.trace(s)
    assert p["n"][0] <= s.n <= p["n"][1] and p["m"][0] <= len(s.mirrors) <= p["m"][1]
    assert (len(s.absorbers) == 0) == (level == 1) and len(s.absorbers) <= 3
    cells = [(r, c) for r, c, _ in s.mirrors] + list(s.absorbers)
    assert len(set(cells)) == len(cells) and all(1 <= v <= s.n for x in cells for v in x)
    assert 1 <= len(t.hits) <= 6 and len(set(t.hits)) == len(t.hits)
    assert 8 <= len(s.exits) <= 12 and sorted(L for L, _, _ in s.exits) == list(lm.LETTERS[:len(s.exits)])
    edges = [(side, i) for _, side, i in s.exits]
    assert len(set(edges)) == len(edges) and s.entry not in edges
    for scene in (s, lm.edit(s)):                # both ends are lettered or absorbed
        end = lm.trace(scene).end
        assert end[0] == "absorbed" or end[1:] in edges
    assert lm.ladder(s).rungs[4].answer == lm.counterfactual(lm.edit(s))
    assert lm.edit(s) != s and lm.edit(lm.edit(s)) == s
    assert scene_from_json(lm.Scene, scene_to_json(s)) == s


def test_balance_targets_over_a_batch():
    """Q2 near 50/50, Q3 over 1..6, absorbed near 15% at L >= 2, Q5's mirror on the path near 75%."""
    turns, refl, absorbed, on_path = Counter(), Counter(), 0, 0
    k = 240
    for i in range(k):
        s = accepted(10_000 + i, 2 + i % 2)
        t = lm.trace(s)
        turns[t.turns[0]] += 1
        refl[len(t.hits)] += 1
        absorbed += t.end[0] == "absorbed"
        on_path += s.flip in t.hits
    assert abs(turns["left"] / k - 0.5) < 0.1
    assert set(refl) == {1, 2, 3, 4, 5, 6} and max(refl.values()) / k < 0.3
    assert 0.07 < absorbed / k < 0.25
    assert 0.6 < on_path / k < 0.9


# --- metamorphic relations ---------------------------------------------------------------------------------------

@FEW
@given(SEEDS, LEVELS, st.integers(1, 3))
def test_rotating_the_board_keeps_every_answer(seed, level, quarter_turns):
    s = accepted(seed, level)
    r = s
    for _ in range(quarter_turns):
        r = rotated(r)
    assert lm.trace(r).hits == lm.trace(s).hits
    assert lm.trace(r).turns == lm.trace(s).turns             # a rotation keeps handedness
    assert answers(r) == answers(s)
    assert rotated(rotated(rotated(rotated(s)))) == s


@FEW
@given(SEEDS, LEVELS)
def test_mirroring_the_board_swaps_left_and_right_only(seed, level):
    s = accepted(seed, level)
    m = lm.mirrored_lr(s)
    a, b = answers(s), answers(m)
    assert b[1].value == {"left": "right", "right": "left"}[a[1].value]
    assert [x for i, x in enumerate(b) if i != 1] == [x for i, x in enumerate(a) if i != 1]
    assert lm.mirrored_lr(m) == s


@FEW
@given(SEEDS, LEVELS, st.integers(-8, 8), st.integers(-8, 8))
def test_translating_the_board_keeps_answers_and_margins(seed, level, dx, dy):
    s = accepted(seed, level)
    moved = replace(s, shift_px=(float(dx), float(dy)))
    assert answers(moved) == answers(s)
    assert [q.margin.value for q in lm.ladder(moved).questions] == pytest.approx(
        [q.margin.value for q in lm.ladder(s).questions])


@FEW
@given(SEEDS, LEVELS, st.randoms(use_true_random=False))
def test_relabelling_mirrors_permutes_answers_consistently(seed, level, rnd):
    s = accepted(seed, level)
    m = len(s.mirrors)
    perm = list(range(m))
    rnd.shuffle(perm)                       # old number k + 1 becomes new number perm[k] + 1
    mirrors = [None] * m
    for k, mirror in enumerate(s.mirrors):
        mirrors[perm[k]] = mirror
    r = replace(s, mirrors=tuple(mirrors), flip=perm[s.flip - 1] + 1)
    assert lm.trace(r).hits == tuple(perm[k - 1] + 1 for k in lm.trace(s).hits)
    assert lm.mirrors_in_order(r).reference_value()["mirrors"] == tuple(
        str(perm[int(k) - 1] + 1) for k in lm.mirrors_in_order(s).reference_value()["mirrors"])
    assert answers(r)[:5] == answers(s)[:5]


@FEW
@given(SEEDS, LEVELS)
def test_q5_is_q4_recomputed_on_the_flipped_board(seed, level):
    s = accepted(seed, level)
    q4, q5 = lm.ladder(s).rungs[3], lm.ladder(s).rungs[4]
    e = lm.edit(s)
    assert q5.answer == lm.beam_end(e)
    _, end = oracle(e)                     # and the independent tracer on the edited board agrees
    assert q5.answer.value == ("absorbed" if end[0] == "absorbed" else lm.letter_at(s, *end[1:]))
    assert q5.text != q4.text and str(s.flip) in q5.text
    if s.flip not in lm.trace(s).hits:     # a mirror the beam never meets changes nothing
        assert q5.answer == q4.answer
    changed = [i for i, (a, b) in enumerate(zip(s.mirrors, e.mirrors)) if a != b]
    assert changed == [s.flip - 1] and e.mirrors[s.flip - 1][2] != s.mirrors[s.flip - 1][2]


# --- geometry and rendering --------------------------------------------------------------------------------------

def test_number_box_estimate_covers_the_real_text():
    c = Canvas()
    for k in range(1, 11):
        w, h = text_size(c, str(k), lm.NUMBER_STYLE)
        bw, bh = lm.NUMBER_BOX_PX[len(str(k))]
        assert w <= bw and h <= bh


@FEW
@given(SEEDS, LEVELS)
def test_margins_match_shapely_geometry(seed, level):
    s = accepted(seed, level)
    bars = [LineString(lm.bar_of(s, *m)).buffer(lm.BAR_WIDTH_PX / 2, cap_style="flat") for m in s.mirrors]
    gap = min(bars[i].distance(bars[j]) for i in range(len(bars)) for j in range(i + 1, len(bars)))
    assert gap >= lm.BAR_GAP_MIN_PX - 1e-6
    x0, y0, cell = lm.grid_origin(s)
    for (r, c, _), (a, b, p, q), bar in zip(s.mirrors, lm.number_boxes(s), bars):
        nb = box(a, b, p, q)
        assert nb.distance(bar) >= lm.NUMBER_CLEAR_MIN_PX - 1e-6
        assert box(x0 + (c - 1) * cell, y0 + (r - 1) * cell, x0 + c * cell, y0 + r * cell).contains(nb)
    letters = [lm.edge_point(s, side, i, lm.LETTER_OUT_PX) for _, side, i in s.exits]
    board = box(x0, y0, x0 + s.n * cell, y0 + s.n * cell)
    for u, v in letters:               # 28 x 20 px letter boxes stay 8 px off the board
        assert box(u - 14, v - 10, u + 14, v + 10).distance(board) >= 8
    assert min(np.hypot(u1 - u2, v1 - v2) for i, (u1, v1) in enumerate(letters)
               for (u2, v2) in letters[i + 1:]) >= lm.LABEL_GAP_MIN_PX


def test_rendering_stays_inside_the_safe_border():
    for i in range(6):
        rgb = generate(lm.DOMAIN, 2000 + i, 1 + i % 3).rgb
        b = SAFE_BORDER_PX
        assert (rgb[:b] == 255).all() and (rgb[-b:] == 255).all()
        assert (rgb[:, :b] == 255).all() and (rgb[:, -b:] == 255).all()


# --- version 2: colour words, minimal pair, Q4 rephrase ----------------------------------------------------------

HUE_WORDS = {"red": ((0, 15), (345, 360)), "orange": ((15, 45),)}


def test_the_laser_is_called_by_the_colour_it_is_drawn_in():
    """The laser box is filled with vermillion (hue ~27 deg), which reads as orange: every text that names the box's
    colour must use that word (version 1 said "red box")."""
    import colorsys
    hue = colorsys.rgb_to_hsv(*lm.LASER)[0] * 360
    word = next(w for w, spans in HUE_WORDS.items() if any(a <= hue < b for a, b in spans))
    s = accepted(7, 2)
    texts = [q.text for q in lm.ladder(s).questions] + [lm.rephrase_q4(s).text]
    named = [t for t in texts if " box" in t]
    assert named
    for t in named:
        assert f"{word} box" in t and not any(f"{w} box" in t for w in HUE_WORDS if w != word), t


@FEW
@given(SEEDS, LEVELS)
def test_minimal_pair_flips_one_path_mirror_and_changes_the_end(seed, level):
    s = accepted(seed, level)
    try:
        twin = lm.minimal_pair(s)
    except Reject:
        return
    assert twin == lm.minimal_pair(s)
    changed = [k for k, (a, b) in enumerate(zip(s.mirrors, twin.mirrors)) if a != b]
    assert len(changed) == 1 and changed[0] + 1 in lm.trace(s).hits
    (r, c, kind), (r2, c2, kind2) = s.mirrors[changed[0]], twin.mirrors[changed[0]]
    assert (r, c) == (r2, c2) and {kind, kind2} == {lm.SLASH, lm.BACKSLASH}
    a, b = lm.ladder(s), lm.ladder(twin)
    assert not b.failing_margins() and a.rungs[0].answer == b.rungs[0].answer
    assert a.rungs[3].answer.value != b.rungs[3].answer.value
    assert oracle(twin)[1] != oracle(s)[1]


@FEW
@given(SEEDS, LEVELS)
def test_detector_rephrase_names_the_same_end(seed, level):
    s = accepted(seed, level)
    r, q4 = lm.rephrase_q4(s), lm.ladder(s).rungs[3]
    assert r.answer == q4.answer and r.text != q4.text and r.margin.ok
