"""A tiny domain that satisfies the contract (used to test the builder without the real domains), and broken
variants of it that the conformance checks must catch."""
from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass

import numpy as np

from grip.answers import Choice, Count, Number, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.renderers import LABEL, OUTLINE, PASTELS
from grip.renderers.shapes import circle
from grip.renderers.text import draw_text

NAMES = "ABCDEF"


@dataclass(frozen=True)
class Scene:
    dots: tuple[tuple[int, int], ...]   # px centres, 80..688
    level: int


def sample(rng: np.random.Generator, level: int) -> Scene:
    n = int(rng.integers(2, 4 + level))
    dots = tuple((int(rng.integers(80, 689)), int(rng.integers(80, 689))) for _ in range(n))
    gap = min(math.dist(a, b) for i, a in enumerate(dots) for b in dots[i + 1:])
    if gap < 90:
        raise Reject("dots_too_close")
    return Scene(dots, level)


def count(scene: Scene) -> Count:
    return Count(len(scene.dots), low=0, high=6)


def left_dots(scene: Scene) -> Ordered:
    return Ordered(tuple(NAMES[i] for i, (x, _) in enumerate(scene.dots) if x < 384), "alphabetical order",
                   tuple(NAMES), as_set=True)


def edit(scene: Scene) -> Scene:
    return dataclasses.replace(scene, dots=scene.dots[1:])


def counterfactual(scene: Scene) -> Count:
    return count(scene)


def ladder(scene: Scene) -> Ladder:
    ax, bx = scene.dots[0][0], scene.dots[1][0]
    side_margin = min(abs(x - 384) for x, _ in scene.dots)
    d = math.dist(scene.dots[0], scene.dots[1])
    rungs = (
        Question(1, "n_dots", "How many dots are there?", count(scene), Margin(90.0, "px", 20.0, "dot gap")),
        Question(2, "a_side", "Is dot A left or right of the vertical centre line?",
                 Choice("left" if ax < 384 else "right", ("left", "right")),
                 Margin(abs(ax - 384), "px", 4.0, "centre line")),
        Question(3, "ab_distance", "How far apart are A and B, in px?", Number(round(d), 10.0, "px"),
                 Margin(10.0, "px", 1.0, "rounding")),
        Question(4, "left_set", "Which dots lie left of the centre line?", left_dots(scene),
                 Margin(side_margin, "px", 4.0, "centre line")),
        Question(5, "n_without_a", "If dot A were removed, how many dots would remain?",
                 counterfactual(edit(scene)), Margin(90.0, "px", 20.0, "dot gap"), edit="remove dot A"),
    )
    open_q = Question(6, "explain_b", "Explain where dot B is, and give its side.",
                      Record((("side", Choice("left" if bx < 384 else "right", ("left", "right"))),)),
                      Margin(abs(bx - 384), "px", 4.0, "centre line"))
    return Ladder(rungs, open_q)


def minimal_pair(scene: Scene) -> Scene:
    """Mirror dot A across the centre line: it changes sides, so the left set changes; the count does not."""
    (x, y), rest = scene.dots[0], scene.dots[1:]
    return dataclasses.replace(scene, dots=((768 - x, y), *rest))


def rephrase_q4(scene: Scene) -> Question:
    side_margin = min(abs(x - 384) for x, _ in scene.dots)
    return Question(4, "left_set_again", "List the dots whose centres are left of the vertical centre line.",
                    left_dots(scene), Margin(side_margin, "px", 4.0, "centre line"))


def draw(scene: Scene, canvas) -> None:
    for i, (x, y) in enumerate(scene.dots):
        circle(canvas, (x, y), 30, OUTLINE.with_(fill=PASTELS[i]), owner=NAMES[i])
        draw_text(canvas, NAMES[i], (x, y), LABEL)


DOMAIN = Domain(id="fake_dots", family="physical", title="Fake dots", scene=Scene, sample=sample, ladder=ladder,
                draw=draw, edit=edit, counterfactual=counterfactual, balance_keys=("a_side",),
                minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity")


# --- broken variants: each must fail at least the named check ------------------------------------------------

def _bad_space(scene):
    lad = ladder(scene)
    r = list(lad.rungs)
    r[1] = dataclasses.replace(r[1], answer=Choice("target_density", ("left", "right")))
    return Ladder(tuple(r), lad.open)


def _q5_hand_written(scene):
    lad = ladder(scene)
    r = list(lad.rungs)
    r[4] = dataclasses.replace(r[4], answer=Count(len(scene.dots)))  # forgot to apply the edit
    return Ladder(tuple(r), lad.open)


def _q5_repeats_q4(scene):
    lad = ladder(scene)
    r = list(lad.rungs)
    r[4] = dataclasses.replace(r[4], text=r[3].text)
    return Ladder(tuple(r), lad.open)


def _global_rng_sample(rng, level):
    s = sample(rng, level)
    np.random.random()
    random.random()
    return s


def _draw_clipped(scene, canvas):
    draw(scene, canvas)
    circle(canvas, (5, 5), 10, OUTLINE)


BROKEN = {
    "pair_keeps_q4": ("minimal_pair", dataclasses.replace(DOMAIN, minimal_pair=lambda s: s)),
    "pair_changes_q1": ("minimal_pair", dataclasses.replace(
        DOMAIN, minimal_pair=lambda s: dataclasses.replace(minimal_pair(s), dots=minimal_pair(s).dots[:-1]))),
    "pair_breaks_margin": ("minimal_pair", dataclasses.replace(
        DOMAIN, minimal_pair=lambda s: dataclasses.replace(s, dots=((385, s.dots[0][1]), *s.dots[1:])))),
    "rephrase_wrong_map": ("rephrase", dataclasses.replace(DOMAIN, rephrase_map="complement")),
    "rephrase_unknown_map": ("rephrase", dataclasses.replace(DOMAIN, rephrase_map="shuffle")),
    "rephrase_same_text": ("rephrase", dataclasses.replace(
        DOMAIN, rephrase_q4=lambda s: dataclasses.replace(rephrase_q4(s), text=ladder(s).rungs[3].text))),
    "answer_outside_space": ("ladder", dataclasses.replace(DOMAIN, ladder=_bad_space)),
    "q5_not_recomputed": ("counterfactual", dataclasses.replace(DOMAIN, ladder=_q5_hand_written)),
    "q5_repeats_q4": ("counterfactual", dataclasses.replace(DOMAIN, ladder=_q5_repeats_q4)),
    "global_rng": ("no_global_rng", dataclasses.replace(DOMAIN, sample=_global_rng_sample)),
    "clipped": ("render", dataclasses.replace(DOMAIN, draw=_draw_clipped)),
    "noop_edit": ("counterfactual", dataclasses.replace(DOMAIN, edit=lambda s: s)),
}

# registered under its own id by the CLI test of `grip check`
BROKEN_DOMAIN = dataclasses.replace(DOMAIN, id="fake_broken", ladder=_q5_hand_written)

# registered under its own id by the CLI test of a domain defect met during `grip build`
OUT_OF_SPACE_DOMAIN = dataclasses.replace(DOMAIN, id="fake_out_of_space", ladder=_bad_space)
