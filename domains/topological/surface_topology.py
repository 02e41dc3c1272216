"""Surface topology: a fundamental polygon (4, 6 or 8 edges, one edge flat at the top) whose lettered edges are glued
in pairs so that their arrows match; grey dashed edges stay free and form the boundary. The ladder walks letters ->
orientability -> corner classes -> Euler characteristic and surface -> two edges trading letters, and the open
question asks how many corners meet at each glued point.

Every answer is exact (integer invariants of the edge word, `_gluing`), so the margins are legibility limits: edges
at least `EDGE_MIN_PX` long, arrowheads `ARROW_PX` (>= 16 px), letters `LETTER_CLEAR_PX` clear of the polygon and of
each other. A letter's copies are told apart by their arrowhead glyph as well as the letter: a one head, b two, c
three, d one hollow head. Edges are named by position (top, upper left, ...), never by an internal number.

Sampling (target-first): the number of letters, then orientability, then the surface among the level's classes that
allow that many letters, then the polygon's shape, then the Q5 outcome from the outcomes the class can reach; the
(word, trade) pair is then drawn uniformly among the pairs of that class and shape whose trade gives the outcome and
whose word has a minimal pair that keeps the two traded edges on different letters (rejection over uniform words).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.domains.topological import _gluing as gl
from grip.domains.topological._gluing import (ANNULUS, DISK, DOUBLE_TORUS, KLEIN, MOBIUS, OTHER, PROJECTIVE,
                                              SPHERE, SURFACES, TORUS)
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY, LABEL, TEXT, WHITE, Style
from grip.renderers.text import draw_text_px, text_size

ORIENTABLE = {SPHERE: True, DISK: True, ANNULUS: True, TORUS: True, DOUBLE_TORUS: True, MOBIUS: False,
              PROJECTIVE: False, KLEIN: False}
CLOSED = (SPHERE, TORUS, PROJECTIVE, KLEIN, DOUBLE_TORUS)
LEVEL_CLASSES = {1: (SPHERE, TORUS, PROJECTIVE, KLEIN),
                 2: (SPHERE, TORUS, PROJECTIVE, KLEIN, DISK, ANNULUS, MOBIUS),
                 3: (SPHERE, TORUS, PROJECTIVE, KLEIN, DISK, ANNULUS, MOBIUS, DOUBLE_TORUS)}
# Bounded shapes (n, free edges) per letter count: a bounded word never has a single letter (no Q5 trade).
BOUNDED_SHAPES = {2: ((6, 2), (8, 4)), 3: ((8, 2),), 4: ()}
Q5_WEIGHT = {SPHERE: 1.0, KLEIN: 1.0, PROJECTIVE: 1.5, TORUS: 2.0, DOUBLE_TORUS: 4.0, DISK: 1.0, ANNULUS: 1.0,
             MOBIUS: 1.0, OTHER: 0.5}
SURFACE_ALIASES = (("mobius band", MOBIUS), ("moebius band", MOBIUS), ("möbius strip", MOBIUS),
                   ("mobius strip", MOBIUS), ("real projective plane", PROJECTIVE), ("klein", KLEIN),
                   ("2-sphere", SPHERE), ("disc", DISK), ("cylinder", ANNULUS), ("genus 2 surface", DOUBLE_TORUS),
                   ("genus-2 surface", DOUBLE_TORUS), ("none of these", OTHER))
ORIENT_OPTIONS = ("orientable", "non-orientable")
POSITIONS = {4: ("top", "left", "bottom", "right"),
             6: ("top", "upper left", "lower left", "bottom", "lower right", "upper right"),
             8: ("top", "upper left", "left", "lower left", "bottom", "lower right", "right", "upper right")}
HEADS = {"a": 1, "b": 2, "c": 3, "d": 1}           # d's single head is hollow
LETTERS = "abcd"
RADIUS_PX = 280.0
CENTER = (384.0, 404.0)
EDGE_MIN_PX = 150.0
ARROW_PX = 18.0
ARROW_MIN_PX = 16.0
HEAD_GAP_PX = 15.0
LABEL_OFFSET_PX = 36.0        # edge line to the letter's centre: a 22 px gap to the letter box
LETTER_HALF_PX = 14.0         # half the diagonal extent of a 24 px bold letter with its halo
LETTER_CLEAR_PX = 12.0
TRIES = 4000
CAPTION = ("Edges with the same letter are glued together so that their arrows match.",
           "Grey dashed edges are not glued: they form the boundary.")
LETTER_STYLE = LABEL.with_(font_px=24.0)


@dataclass(frozen=True)
class Scene:
    level: int                   # 1..3: which surfaces occur
    letters: tuple[str, ...]     # per edge in reading order (anticlockwise from the top edge); "" = free edge
    exponents: tuple[int, ...]   # per edge: +1 arrow anticlockwise (corner k -> k + 1), -1 clockwise, 0 free edge
    swap: tuple[int, int]        # the two Q5 edges (i < j), carrying different letters


def word_of(scene: Scene) -> tuple[tuple[str, int], ...]:
    return tuple(zip(scene.letters, scene.exponents))


def n_edges(scene: Scene) -> int:
    return len(scene.letters)


def shapes_for(surface: str, ell: int) -> tuple[tuple[int, int], ...]:
    if surface == DOUBLE_TORUS:
        return ((8, 0),) if ell == 4 else ()
    return ((2 * ell, 0),) if surface in CLOSED else BOUNDED_SHAPES[ell]


def reachable(surface: str, n: int) -> tuple[str, ...]:
    """Every Q5 outcome of an admissible (word, trade) pair of this class on an n-gon (checked by enumeration in
    the tests)."""
    big = n >= 6
    table = {SPHERE: (SPHERE, TORUS, PROJECTIVE, KLEIN),
             TORUS: (SPHERE, KLEIN) + ((TORUS, OTHER) if big else ()) + ((DOUBLE_TORUS,) if n == 8 else ()),
             PROJECTIVE: (SPHERE, PROJECTIVE, KLEIN) + ((OTHER,) if big else ()),
             KLEIN: (SPHERE, TORUS, PROJECTIVE, KLEIN) + ((OTHER,) if big else ()),
             DOUBLE_TORUS: (TORUS, DOUBLE_TORUS, OTHER),
             DISK: (DISK, ANNULUS, MOBIUS, OTHER), MOBIUS: (DISK, ANNULUS, MOBIUS, OTHER),
             ANNULUS: (ANNULUS, MOBIUS, OTHER)}
    return table[surface]


# --- minimal pair on words (pure) --------------------------------------------------------------------------------

def _different(word, swap) -> bool:
    return word[swap[0]][0] != word[swap[1]][0]


def minimal_word(word, swap):
    """The sheet's smallest edit that changes the surface: reverse the arrow of the first edge in reading order whose
    reversal gives another listed surface; else trade the letters of the first two (cyclically) adjacent edges that
    gives another listed surface and leaves the Q5 edges on different letters; else None."""
    sigma, n = gl.classify(word), len(word)
    for k in range(n):
        if word[k][0]:
            twin = gl.reversed_at(word, k)
            c = gl.classify(twin)
            if c in SURFACES and c != sigma:
                return twin
    for k in range(n):
        k2 = (k + 1) % n
        if word[k][0] and word[k2][0] and word[k][0] != word[k2][0]:
            twin = gl.swapped(word, k, k2)
            c = gl.classify(twin)
            if c in SURFACES and c != sigma and _different(twin, swap):
                return twin
    return None


# --- sampling ----------------------------------------------------------------------------------------------------

def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"surface_topology: level must be 1..3, got {level}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    ell = d.integers(2, 5)
    orientable = d.random() < 0.5
    classes = [c for c in LEVEL_CLASSES[level] if ORIENTABLE[c] == orientable and shapes_for(c, ell)]
    sigma = d.pick(classes)
    n, n_free = d.pick(shapes_for(sigma, ell))
    outcomes = reachable(sigma, n)
    w = np.array([Q5_WEIGHT[o] for o in outcomes])
    target = outcomes[int(rng.choice(len(outcomes), p=w / w.sum()))]
    words = gl.base_words(n, n_free)[sigma]
    for _ in range(TRIES):
        base = d.pick(words)
        # the draws of rng.choice((1, -1), size=ell), which takes its indices from this same call, at less cost
        flips = [(1, -1)[i] for i in rng.integers(2, size=ell).tolist()]
        word = tuple((x, e * flips[int(x)]) if x else (x, e) for x, e in base)
        trades = [(i, j) for i in range(n) if word[i][0] for j in range(i + 1, n)
                  if word[j][0] and word[i][0] != word[j][0]]
        swap = d.pick(trades)
        if gl.classify(gl.swapped(word, *swap)) != target or minimal_word(word, swap) is None:
            continue
        names = [LETTERS[k] for k in d.subset(4, ell)]
        return Scene(level, tuple(names[int(x)] if x else "" for x, _ in word), tuple(e for _, e in word), swap)
    raise Reject("no_word_for_target")


# --- geometry (shared by margins and drawing) --------------------------------------------------------------------

def corners_px(scene: Scene) -> list[tuple[float, float]]:
    """Corner k at angle 90 - 180/n + 360 k/n degrees (anticlockwise on screen); corner 0 = right end of the top
    edge."""
    n = n_edges(scene)
    out = []
    for k in range(n):
        t = math.radians(90.0 - 180.0 / n + 360.0 * k / n)
        out.append((CENTER[0] + RADIUS_PX * math.cos(t), CENTER[1] - RADIUS_PX * math.sin(t)))
    return out


def edge_length_px(scene: Scene) -> float:
    return 2 * RADIUS_PX * math.sin(math.pi / n_edges(scene))


def letter_centres_px(scene: Scene) -> list[tuple[float, float] | None]:
    n, c = n_edges(scene), corners_px(scene)
    out: list[tuple[float, float] | None] = []
    for k in range(n):
        if not scene.letters[k]:
            out.append(None)
            continue
        t = math.radians(90.0 + 360.0 * k / n)      # outward normal of edge k
        (x0, y0), (x1, y1) = c[k], c[(k + 1) % n]
        out.append(((x0 + x1) / 2 + LABEL_OFFSET_PX * math.cos(t), (y0 + y1) / 2 - LABEL_OFFSET_PX * math.sin(t)))
    return out


def letter_clearance_px(scene: Scene) -> float:
    """Smallest gap from a letter (a disc of LETTER_HALF_PX round its centre) to the polygon or another letter."""
    cs = [p for p in letter_centres_px(scene) if p is not None]
    # A letter centre sits on its edge's outward normal through the midpoint, outside a convex polygon: the nearest
    # polygon point is on its own edge (LABEL_OFFSET_PX away) or, at most, a corner.
    gaps = [LABEL_OFFSET_PX - LETTER_HALF_PX]
    gaps += [min(math.dist(p, q) for q in corners_px(scene)) - LETTER_HALF_PX for p in cs]
    gaps += [math.dist(p, q) - 2 * LETTER_HALF_PX for i, p in enumerate(cs) for q in cs[i + 1:]]
    return float(min(gaps))


# --- answers -----------------------------------------------------------------------------------------------------

def letter_count(scene: Scene) -> Count:
    return Count(len({x for x in scene.letters if x}), low=1, high=4)


def orientability(scene: Scene) -> Choice:
    orientable = gl.invariants(word_of(scene))[0]
    return Choice(ORIENT_OPTIONS[0] if orientable else ORIENT_OPTIONS[1], ORIENT_OPTIONS,
                  (("nonorientable", ORIENT_OPTIONS[1]), ("not orientable", ORIENT_OPTIONS[1])))


def corner_points(scene: Scene) -> Count:
    return Count(gl.invariants(word_of(scene))[1], low=1, high=n_edges(scene))


def surface_of(scene: Scene) -> str:
    return gl.classify(word_of(scene))


def euler_and_surface(scene: Scene) -> Record:
    sigma = surface_of(scene)
    if sigma not in SURFACES:
        raise Reject("not_a_listed_surface")
    chi = gl.invariants(word_of(scene))[2]
    return Record((("euler_characteristic", Count(chi, low=-2, high=2)),
                   ("surface", Choice(sigma, SURFACES, SURFACE_ALIASES))))


def edit(scene: Scene) -> Scene:
    """The two Q5 edges trade letters, each keeping its own arrow."""
    i, j = scene.swap
    letters = list(scene.letters)
    letters[i], letters[j] = scene.letters[j], scene.letters[i]
    return replace(scene, letters=tuple(letters))


def glued_surface(scene: Scene) -> Choice:
    return Choice(surface_of(scene), SURFACES + (OTHER,), SURFACE_ALIASES)


counterfactual = glued_surface


def partitions(n: int, largest: int | None = None) -> list[tuple[int, ...]]:
    """Every way to write n as a sum of parts, each part list largest first, in decreasing lexicographic order."""
    largest = n if largest is None else largest
    if n == 0:
        return [()]
    return [(k,) + rest for k in range(min(n, largest), 0, -1) for rest in partitions(n - k, k)]


def corner_groups(scene: Scene) -> Record:
    """Corner-class sizes, largest first. The typed list answer holds distinct items only, and sizes repeat, so the
    list is one option among the partitions of n (written "2, 1, 1"; spacing after commas is free)."""
    sizes = gl.corner_class_sizes(word_of(scene))
    return Record((("corner_groups", Choice("+".join(map(str, sizes)), _group_options(n_edges(scene)))),))


@functools.lru_cache(maxsize=None)   # n is 4, 6 or 8
def _group_options(n: int) -> tuple[str, ...]:
    return tuple("+".join(map(str, p)) for p in partitions(n))   # "2+1+1": one option, no commas


# --- ladder ------------------------------------------------------------------------------------------------------

def _q4_margin() -> Margin:
    return Margin(1.0, "exact", 1.0, "integer invariants: the class is exact, no boundary to be near")


def ladder(scene: Scene) -> Ladder:
    n, (i, j) = n_edges(scene), scene.swap
    pos = POSITIONS[n]
    x, y = scene.letters[i], scene.letters[j]
    edge = Margin(edge_length_px(scene), "px", EDGE_MIN_PX, "edge too short to carry its letter and arrowheads")
    rungs = (
        Question(1, "letter_count", "How many different letters label the glued edges?", letter_count(scene), edge),
        Question(2, "orientability", "After gluing matching letters with matching arrows, is the surface "
                 "orientable or non-orientable?", orientability(scene),
                 Margin(ARROW_PX, "px", ARROW_MIN_PX, "arrowhead too small to read its direction")),
        Question(3, "corner_points", "After gluing, into how many distinct points do the polygon's corners merge?",
                 corner_points(scene), Margin(letter_clearance_px(scene), "px", LETTER_CLEAR_PX,
                                              "a letter too close to the polygon or another letter")),
        Question(4, "euler_and_surface", "What is the Euler characteristic of the glued surface, and which "
                 "surface is it?", euler_and_surface(scene), _q4_margin()),
        Question(5, "surface_after_trade", f"Suppose the {pos[i]} edge (labelled {x}) and the {pos[j]} edge "
                 f"(labelled {y}) traded letters, each keeping its own arrow: the {pos[i]} edge is then glued to the "
                 f"other {y} edge and the {pos[j]} edge to the other {x} edge. Which surface would the gluing give? "
                 "Say 'other' if it is none of the listed surfaces.", counterfactual(edit(scene)),
                 Margin(float(x != y and bool(x) and bool(y)), "letters", 1.0,
                        "the two edges carry one letter: the trade would change nothing"),
                 edit=f"the {pos[i]} and {pos[j]} edges trade letters"),
    )
    open_q = Question(6, "corner_groups", "Explain how the polygon's corners merge when the edges are glued and how "
                      "you get the Euler characteristic. End with the number of polygon corners that meet at each "
                      "glued point, largest first, joined by '+' (e.g. 3+2+1).", corner_groups(scene), edge)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words (identity): V - E + F is the Euler characteristic."""
    return Question(4, "v_minus_e_plus_f", "What is V − E + F for the glued surface, and to which standard "
                    "surface is it homeomorphic?", euler_and_surface(scene), _q4_margin())


def minimal_pair(scene: Scene) -> Scene:
    """One arrowhead reversed (or, where no reversal changes the surface, two adjacent edges trade letters)."""
    twin = minimal_word(word_of(scene), scene.swap)
    if twin is None:
        raise Reject("no_minimal_pair")
    return replace(scene, letters=tuple(x for x, _ in twin), exponents=tuple(e for _, e in twin))


# --- drawing -----------------------------------------------------------------------------------------------------

def _heads(canvas: Canvas, a, b, letter: str) -> None:
    """The letter's arrowhead glyph at the middle of edge a -> b, pointing along the arrow."""
    d = np.subtract(b, a) / math.dist(a, b)
    mid = (np.asarray(a) + np.asarray(b)) / 2
    k = HEADS[letter]
    for m in range(k):
        tip = mid + d * (ARROW_PX / 2 + (m - (k - 1) / 2) * HEAD_GAP_PX)
        if letter == "d":
            nrm = np.array([-d[1], d[0]])
            base = tip - d * ARROW_PX * 1.3     # long and narrow (30 degree point): its direction reads at once
            tri = [tuple(tip), tuple(base + nrm * ARROW_PX * 0.35), tuple(base - nrm * ARROW_PX * 0.35)]
            shapes.polygon(canvas, tri, Style(stroke=BLACK, fill=WHITE, width_px=2.5), owner="arrows")
        else:
            shapes.arrowhead(canvas, tuple(tip), tuple(d), Style(stroke=BLACK), ARROW_PX, owner="arrows")


def draw(scene: Scene, canvas: Canvas) -> None:
    n, c = n_edges(scene), corners_px(scene)
    for k in range(n):
        a, b = c[k], c[(k + 1) % n]
        if scene.letters[k]:
            shapes.line(canvas, a, b, Style(stroke=BLACK, width_px=3.0), owner="polygon")
        else:
            shapes.line(canvas, a, b, Style(stroke=GREY, width_px=7.0, dash_px=(14.0, 9.0)), owner="polygon")
    for k in range(n):
        if scene.letters[k]:
            a, b = c[k], c[(k + 1) % n]
            if scene.exponents[k] < 0:
                a, b = b, a
            _heads(canvas, a, b, scene.letters[k])
    for p in c:
        shapes.circle(canvas, p, 5.0, Style(stroke=None, fill=BLACK), owner="polygon")
    for k, p in enumerate(letter_centres_px(scene)):
        if p is not None:
            draw_text_px(canvas, scene.letters[k], p, LETTER_STYLE)
    for row, line in enumerate(CAPTION):
        w, _ = text_size(canvas, line, TEXT)
        draw_text_px(canvas, line, (384.0, 40.0 + 22.0 * row), TEXT)
        if w > 768 - 2 * 30:
            raise Reject("caption_too_wide")


DOMAIN = Domain(
    id="surface_topology", family="topological", title="Surface topology",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="A polygon whose lettered edges are glued in pairs (fundamental polygon): letters, orientability, "
                "glued corner points, Euler characteristic and surface, and the surface after two edges trade "
                "letters. Level 2 adds boundary edges, level 3 the double torus.",
    balance_keys=("letter_count", "orientability", "corner_points", "euler_and_surface", "surface_after_trade"),
    balance_caps=(("euler_and_surface", 0.225), ("surface_after_trade", 0.211)),
)
