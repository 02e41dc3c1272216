"""Optical illusions: two targets A and B inside a classic illusion figure (Müller-Lyer, Ebbinghaus, Ponzo,
Delboeuf, vertical-horizontal). One target carries the context that makes a target look larger (the "+" class),
the other the opposite. Every comparison is of the TRUE drawn sizes (integer px in the scene, measurable on the
picture with a ruler), never of the percept. The ladder walks context count on A -> which target carries a named
context class -> the true ratio A/B -> the true comparison -> the comparison after B is resized by k%; the open
question asks which target carries the enlarging context and which is actually larger.

What is measured: a shaft's or bar's length between its end vertices (flat-ended 4 px strokes, fins meet at the
ends); a black disc's diameter (filled, no outline); in the inverted T, the horizontal segment end to end and the
vertical one from where it leaves the horizontal one to its top.
Ambiguity boundaries: unequal sizes differ by at least the level's share (0.15 / 0.08 / 0.06 of the smaller) AND by
at least `MIN_DIFF_PX` = 6 px, three times the 2 px a careful reading of two sizes can be off (1 px each); equal
sizes are identical px. After the Q5 resize the same holds with the share `TAU5` (0.05 / 0.05 / 0.03), unless
exactly equal (k chosen so that B's new size is a whole px). Both questions state these rules in their text.
Legibility: the discs are enlarged from the sheet's 60-90 px (Ebbinghaus) and 70-120 px (Delboeuf) to 80-105 and
90-130 px, and Q3's tolerance is widened from 0.04 where a 1 px misread of each size moves the ratio by more than
half of it (tolerance = max(0.04, twice the worst ratio error), in hundredths).
Deviations: the open question's first field asks which target carries the textbook enlarging context
(`enlarging_context`), not which "looks larger to most people": with true differences of up to 20% the percept is
not a fact the picture fixes. Q2 names one of the type's two context classes (drawn 50/50, `q2_plus`) and asks which
target, A or B, carries it, rather than asking A's class over the sheet's per-type pair: a per-type answer set names
the figure type, which every question's words (and the target sizes, whose ranges differ by type) give away, so the
text alone would pick the option pair and leave a coin flip. Over A/B the answer is a_plus == q2_plus, independent
of the type and of every other question's words. The sheet's Q4 rephrase ("which is actually smaller", A and B
swapped) maps three options, which the contract's `inversion` (two-way) does not cover: the rephrase asks Q4 again in
other words (identity).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.optical import _illusions as ill
from grip.renderers.canvas import Canvas

KINDS = ("muller_lyer", "ebbinghaus", "ponzo", "delboeuf", "vertical_horizontal")
A, B, EQUAL = "A", "B", "equal"
TRUTHS = (A, B, EQUAL)
SIZE_RANGE = {"muller_lyer": (180, 320), "ebbinghaus": (80, 105), "ponzo": (90, 140), "delboeuf": (90, 130),
              "vertical_horizontal": (180, 320)}
BAND = {1: (0.15, 0.20), 2: (0.08, 0.15), 3: (0.06, 0.08)}      # share; upper end exclusive at levels 2-3
TAU5 = {1: 0.05, 2: 0.05, 3: 0.03}
MIN_DIFF_PX = 6.0
READ_PX = 1.0                                  # a careful reading of one size
RATIO_TOL = 0.04
K_RANGE = (2, 30)
# Context class names per type: (plus, minus). Plus makes its target look larger. Options are asked in the
# sheet's order (`OPTIONS`).
CLASSES = {"muller_lyer": ("tails", "arrowheads"), "ebbinghaus": ("small inducers", "large inducers"),
           "ponzo": ("near the apex", "near the wide end"), "delboeuf": ("tight ring", "wide ring"),
           "vertical_horizontal": ("bisecting", "bisected")}
OPTIONS = {k: (v[::-1] if k == "muller_lyer" else v) for k, v in CLASSES.items()}
Q1_RANGE = {"muller_lyer": (4, 6), "ebbinghaus": (4, 6), "delboeuf": (1, 3), "ponzo": (5, 9),
            "vertical_horizontal": (2, 4)}
TRIES = 60
RING_STEP_PX = 14.0                            # Delboeuf ring diameters differ by at least this (7 px radially)


@dataclass(frozen=True)
class Scene:
    kind: str                                       # one of KINDS
    level: int                                      # 1..3
    sizes: tuple[int, int]                          # true sizes of A and B, px
    a_plus: bool                                    # A carries the enlarging ("+") context class
    grow: bool                                      # Q5: B made k% longer (True) or shorter (False)
    k_pct: int                                      # 2..30
    anchors: tuple[tuple[float, float], tuple[float, float]]   # per target: shaft/bar/disc centre, T base (px)
    fins: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))   # Müller-Lyer: V's at (left, right) end
    fin: tuple[float, float, float] = (0.0, 0.0, 0.0)   # Müller-Lyer fin length px, angle deg, inner spacing px
    inducers: tuple[int, int] = (0, 0)              # Ebbinghaus circles per disc, 4..6
    ref_px: tuple[int, int] = (0, 0)                # Ebbinghaus: disc size the inducers were built for
    phase_deg: tuple[float, float] = (0.0, 0.0)     # Ebbinghaus inducer rotation
    rings: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())   # Delboeuf ring diameters px
    rails: tuple[float, float, float] = (0.0, 0.0, 0.0)   # Ponzo apex x, apex y px, half-angle deg
    ties: tuple[float, ...] = ()                    # Ponzo cross-tie heights px
    distractors: tuple[tuple[float, float, float, float], ...] = ()   # vertical-horizontal extra segments
    b_scale_pct: int = 100                          # B's size as a share of its drawn size: 100 in every drawn
    #                                                 scene; 100 +- k after the Q5 edit (never drawn)
    q2_plus: bool = True                            # Q2 names the enlarging ("+") class (True) or the other one


# --- true sizes --------------------------------------------------------------------------------------------------

def truth(scene: Scene) -> str:
    """Which true size is larger, in exact integer arithmetic (B's size scaled by `b_scale_pct`)."""
    a, b = 100 * scene.sizes[0], scene.sizes[1] * scene.b_scale_pct
    return A if a > b else B if b > a else EQUAL


def resized_b_x100(scene: Scene) -> int:
    """100 x B's size after the Q5 resize."""
    return scene.sizes[1] * (100 + scene.k_pct if scene.grow else 100 - scene.k_pct)


def _share(x: float, y: float) -> float:
    return max(x, y) / min(x, y) - 1


def _in_band(level: int, d: float) -> bool:
    lo, hi = BAND[level]
    return lo - 1e-12 <= d <= hi + 1e-12 if level == 1 else lo - 1e-12 <= d < hi - 1e-12


def _sizes(rng: np.random.Generator, level: int, kind: str, t: str, q5: str):
    """(m_A, m_B, grow, k) with true relation t and Q5 answer q5, every margin holding; None when a try fails."""
    lo, hi = SIZE_RANGE[kind]
    tau = TAU5[level]
    if t == EQUAL:
        m = int(rng.integers(lo, hi + 1))
        grow = q5 == B
        kmin = math.ceil(max(100 * (tau if grow else 1 - 1 / (1 + tau)), 100 * MIN_DIFF_PX / m) - 1e-9)
        return (m, m, grow, int(rng.integers(kmin, K_RANGE[1] + 1))) if kmin <= K_RANGE[1] else None
    grow = t == A                                   # the direction that does not fix Q5 from Q4
    if q5 == EQUAL:
        ks = [k for k in range(K_RANGE[0], K_RANGE[1] + 1) if _in_band(level, k / 100 if grow else k / (100 - k))]
        k = ks[int(rng.integers(len(ks)))]
        big = [m for m in range(lo, hi + 1) if m * k % 100 == 0
               and lo <= m + (m * k // 100 if grow else -(m * k // 100)) <= hi and m * k / 100 >= MIN_DIFF_PX]
        if not big:
            return None
        mb = big[int(rng.integers(len(big)))]
        other = mb + mb * k // 100 if grow else mb - mb * k // 100
        return (other, mb, grow, k)
    small = int(rng.integers(lo, hi + 1))
    large = int(round(small * (1 + rng.uniform(*BAND[level]))))
    if large > hi or not _in_band(level, large / small - 1) or large - small < MIN_DIFF_PX:
        return None
    ma, mb = (large, small) if t == A else (small, large)
    ks = [k for k in range(K_RANGE[0], K_RANGE[1] + 1) if _q5_ok(level, ma, mb, grow, k, q5)]
    return (ma, mb, grow, ks[int(rng.integers(len(ks)))]) if ks else None


def _q5_ok(level: int, ma: int, mb: int, grow: bool, k: int, q5: str) -> bool:
    b2 = mb * (100 + k if grow else 100 - k) / 100
    if (A if ma > b2 else B) != q5:
        return False
    return _share(ma, b2) >= TAU5[level] - 1e-12 and abs(ma - b2) >= MIN_DIFF_PX - 1e-9


# --- context and placement ---------------------------------------------------------------------------------------

def _context(rng: np.random.Generator, s: Scene, q1: int) -> Scene | None:
    """Type-specific context and placement around sizes already chosen; None when a try does not fit."""
    k, lv = s.kind, s.level
    plus = (s.a_plus, not s.a_plus)
    if k == "muller_lyer":
        fin = (45.0, 30.0, float(rng.uniform(12, 14))) if lv == 3 else \
            (float(rng.uniform(25, 45)), float(rng.uniform(30, 60)), float(rng.uniform(10, 14)))
        fa = {4: (2, 2), 6: (3, 3), 5: ((2, 3), (3, 2))[int(rng.integers(2))]}[q1]
        fb = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))
        y0 = float(rng.uniform(200, 300))
        ys = (y0, y0 + float(rng.uniform(200, 260)))
        if rng.integers(2):
            ys = ys[::-1]
        return replace(s, fin=fin, fins=(fa, fb),
                       anchors=tuple((float(rng.uniform(370, 430)), y) for y in ys))
    if k in ("ebbinghaus", "delboeuf"):
        if k == "ebbinghaus":
            n = (q1, int(rng.integers(4, 7)))
            s = replace(s, inducers=n, ref_px=s.sizes, phase_deg=tuple(float(rng.uniform(0, 360)) for _ in n))
            radii = [(1.05 if p else 2.0) * m + 1 for p, m in zip(plus, s.sizes)]
        else:
            rings = []
            for i, (p, m) in enumerate(zip(plus, s.sizes)):
                lo, hi = (max(1.15 * m, m + 2 * ill.CLEAR_PX), 1.5 * m) if p else (2.0 * m, 2.6 * m)
                n = q1 if i == 0 else int(rng.integers(1, 4))
                if lv == 3:                 # strongest: rings as close to the disc (tight) or as far (wide) as allowed
                    ds = [lo + RING_STEP_PX * j for j in range(n)] if p else [hi - RING_STEP_PX * j for j in range(n)]
                else:
                    ds = [float(x) for x in rng.uniform(lo, hi, n)]
                ds = sorted(ds)
                if ds[0] < lo - 1e-9 or ds[-1] > hi + 1e-9 or any(b - a < RING_STEP_PX for a, b in zip(ds, ds[1:])):
                    return None
                rings.append(tuple(ds))
            s = replace(s, rings=tuple(rings))
            radii = [max(r) / 2 + 1 for r in s.rings]
        gap = float(rng.uniform(40, 70))
        first = int(rng.integers(2))                     # which target stands on the left
        wl, wr = radii[first], radii[1 - first]
        x_left = float(rng.uniform(24, max(24.0, 744 - 2 * wl - gap - 2 * wr) + 1e-9)) + wl
        xs = {first: x_left, 1 - first: x_left + wl + gap + wr}
        ys = [float(rng.uniform(360, 440)) for _ in range(2)]
        return replace(s, anchors=((xs[0], ys[0]), (xs[1], ys[1])))
    if k == "ponzo":
        half = 20.0 if lv == 3 else float(rng.uniform(14, 20))
        ax, ay = float(rng.uniform(364, 404)), float(rng.uniform(28, 60))
        near, far = ay + float(rng.uniform(300, 380)), float(rng.uniform(ill.BOTTOM - 150, ill.BOTTOM - 24))
        ys = (near, far) if s.a_plus else (far, near)
        ties: list[float] = []
        for _ in range(40 * q1):
            t = float(rng.uniform(ay + 60, ill.BOTTOM - 4))
            if (all(abs(t - y) >= ill.BAR_CLEAR_PX + 2 for y in ys)
                    and all(abs(t - u) >= ill.TIE_GAP_PX for u in ties)):
                ties.append(t)
                if len(ties) == q1:
                    break
        else:
            return None
        return replace(s, rails=(ax, ay, half), ties=tuple(sorted(ties)), anchors=((ax, ys[0]), (ax, ys[1])))
    x, y = float(rng.uniform(330, 440)), float(rng.uniform(560, 680))
    s = replace(s, anchors=((x, y), (x, y)))
    segs = []
    for _ in range(q1 - 2):
        for _ in range(30):
            ln, ang = float(rng.uniform(60, 120)), math.radians(float(rng.uniform(20, 70)) * (1 if rng.integers(2)
                                                                                               else -1))
            cx, cy = float(rng.uniform(90, 680)), float(rng.uniform(90, 680))
            seg = (cx - ln / 2 * math.cos(ang), cy - ln / 2 * math.sin(ang), cx + ln / 2 * math.cos(ang),
                   cy + ln / 2 * math.sin(ang))
            t = replace(s, distractors=tuple(segs) + (seg,))
            if ill.context_gap_px(t) >= 0 and all(_point_seg(ill.label_spot(t, i), seg) >= 30 for i in range(2)):
                segs.append(seg)
                break
        else:
            return None
    return replace(s, distractors=tuple(segs))


def _point_seg(p, seg) -> float:
    a, b, q = np.array(seg[:2]), np.array(seg[2:]), np.array(p)
    t = np.clip(np.dot(q - a, b - a) / np.dot(b - a, b - a), 0, 1)
    return float(np.linalg.norm(q - (a + t * (b - a))))


def layout_ok(scene: Scene) -> str | None:
    """The reason a scene cannot be drawn legibly, or None."""
    if ill.context_gap_px(scene) < 0:
        return "context_crowded"
    if ill.figures_gap_px(scene) < 40:
        return "figures_too_close"
    for i in range(2):
        x0, y0, x1, y1 = ill.extent(scene, i)
        lx, ly = ill.label_spot(scene, i)
        if min(x0, y0, lx - 14, ly - 14) < 24 or max(x1, y1, lx + 14, ly + 14) > 744:
            return "outside_safe_area"
    if scene.kind == "ponzo" and (scene.ties and (min(scene.ties) < scene.rails[1] + 40)):
        return "context_crowded"
    return None


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"optical_illusions: level must be 1..3, got {level}")
    # Targets first: type uniform; truth uniform; (Q4, Q5) by the sheet's table (row A or B: Q5 = A 1/4, B 1/4,
    # equal 1/2; row equal: A 1/2, B 1/2); congruent 50/50 among unequal; Q1 uniform over its per-type range.
    kind = KINDS[int(rng.integers(len(KINDS)))]
    t = TRUTHS[int(rng.integers(3))]
    q5 = (A, B)[int(rng.integers(2))] if t == EQUAL else (A, B, EQUAL, EQUAL)[int(rng.integers(4))]
    a_plus = bool(rng.integers(2)) if t == EQUAL else (t == A) == bool(rng.integers(2))
    q1 = int(rng.integers(Q1_RANGE[kind][0], Q1_RANGE[kind][1] + 1))
    for _ in range(TRIES):
        sz = _sizes(rng, level, kind, t, q5)
        if sz is None:
            continue
        ma, mb, grow, k = sz
        s = _context(rng, Scene(kind, level, (ma, mb), a_plus, grow, k, ((0.0, 0.0), (0.0, 0.0))), q1)
        if s is not None and layout_ok(s) is None:
            return replace(s, q2_plus=bool(rng.integers(2)))
    raise Reject("no_scene_for_target")


# --- answers ----------------------------------------------------------------------------------------------------

def context_count(scene: Scene) -> Count:
    k = scene.kind
    n = (sum(scene.fins[0]) if k == "muller_lyer" else scene.inducers[0] if k == "ebbinghaus" else
         len(scene.rings[0]) if k == "delboeuf" else len(scene.ties) if k == "ponzo" else 2 + len(scene.distractors))
    return Count(n, low=0, high=12)


def q2_class(scene: Scene) -> str:
    """The context class Q2 names."""
    plus, minus = CLASSES[scene.kind]
    return plus if scene.q2_plus else minus


def context_kind(scene: Scene) -> Choice:
    """Which target carries the class Q2 names: A iff A's class (+ when a_plus) is that class."""
    return Choice(A if scene.a_plus == scene.q2_plus else B, (A, B))


def ratio_tol(scene: Scene) -> tuple[float, float]:
    """(tolerance, worst ratio error when each size is read 1 px off)."""
    a, b = scene.sizes
    err = max(abs((a + sa) / (b + sb) - a / b) for sa in (-READ_PX, READ_PX) for sb in (-READ_PX, READ_PX))
    return max(RATIO_TOL, math.ceil(2 * err * 100 + 1e-6) / 100), err


def true_ratio(scene: Scene) -> Number:
    return Number(round(scene.sizes[0] / scene.sizes[1], 3), ratio_tol(scene)[0], "ratio A/B", decimals=2,
                  low=0.0)


def actually_larger(scene: Scene) -> Choice:
    return Choice(truth(scene), TRUTHS)


def edit(scene: Scene) -> Scene:
    """B resized by k% (the context removal changes no size, so the answer reads the sizes alone)."""
    return replace(scene, b_scale_pct=100 + scene.k_pct if scene.grow else 100 - scene.k_pct)


def counterfactual(scene: Scene) -> Choice:
    """Which target is larger (applied to the edited scene: after B's resize)."""
    return Choice(truth(scene), TRUTHS)


def enlarging_and_larger(scene: Scene) -> Record:
    return Record((("enlarging_context", Choice(A if scene.a_plus else B, (A, B))),
                   ("actually_larger", actually_larger(scene))))


def minimal_pair(scene: Scene) -> Scene:
    """B's size changed alone, Q5's direction and k kept: unequal -> equal (m_B' = m_A); equal -> unequal at the band
    floor on the side Q5's direction allows. Only B's own context moves with it (fins at its ends; inducers and
    rings keep their centres and sizes)."""
    a = scene.sizes[0]
    floor = BAND[scene.level][0]
    if truth(scene) != EQUAL:
        b2 = a
    else:
        b2 = math.floor(a / (1 + floor)) if scene.grow else math.ceil(a * (1 + floor))
    lo, hi = SIZE_RANGE[scene.kind]
    twin = replace(scene, sizes=(a, b2))
    if not lo <= b2 <= hi or layout_ok(twin) is not None or ladder(twin).failing_margins():
        raise Reject("no_minimal_pair")
    return twin


# --- ladder -----------------------------------------------------------------------------------------------------

def _size_margin(scene: Scene, share: float) -> Margin:
    a, b = scene.sizes
    thr = max(MIN_DIFF_PX, share * min(a, b)) if a != b else max(MIN_DIFF_PX, share * a)
    return Margin(float(abs(a - b)) if a != b else thr, "px", thr,
                  "sizes equal (unequal ones differ by the stated share and 6 px; equal ones are identical px)")


def _words(scene: Scene) -> dict[str, str]:
    k = scene.kind
    if k in ("ebbinghaus", "delboeuf"):
        return dict(what="black discs", size="diameter", larger="larger", longer="larger in diameter",
                    shorter="smaller in diameter")
    what = {"muller_lyer": "horizontal segments (each measured along its thick black line, end to end; the "
                           "outermost fins meet it at its ends)",
            "ponzo": "horizontal bars between the rails",
            "vertical_horizontal": "segments of the inverted T (the vertical one measured from where it leaves the "
                                   "horizontal one)"}[k]
    return dict(what=what, size="length", larger="longer", longer="longer", shorter="shorter")


def _describe_classes(kind: str) -> str:
    return {"muller_lyer": "'arrowheads' (fins angled back over the segment, like <-->) or 'tails' (fins angled "
                           "away from it, like >--<)",
            "ebbinghaus": "'small inducers' (the surrounding circles are smaller than the disc) or 'large inducers' "
                          "(larger than the disc)",
            "ponzo": "'near the apex' (the bar nearer the point where the rails converge) or 'near the wide end' "
                     "(the bar nearer the rails' wide end)",
            "delboeuf": "'tight ring' (the rings hug the disc) or 'wide ring' (the rings are far out, at least "
                        "twice its diameter)",
            "vertical_horizontal": "'bisecting' (the target is the segment that rises from the middle of the other) "
                                   "or 'bisected' (the target is the segment from whose middle the other rises)"}[kind]


def _q1_text(kind: str) -> str:
    return {"muller_lyer": "How many V-shaped fins are attached to segment A (count each V once)?",
            "ebbinghaus": "How many circles surround disc A?", "delboeuf": "How many rings surround disc A?",
            "ponzo": "How many cross-ties are drawn between the rails?",
            "vertical_horizontal": ("How many separate straight black or grey segments are drawn, A and B included "
                                    "(the pale background grid, where there is one, does not count)?")}[kind]


def ladder(scene: Scene) -> Ladder:
    why = layout_ok(scene)
    if why is not None:
        raise Reject(why)
    w, lv = _words(scene), scene.level
    floor, tau = BAND[lv][0], TAU5[lv]
    intro = (f"The picture shows two {w['what']}, labelled A and B, inside an illusion figure. Compare the true "
             f"drawn sizes, as a ruler would measure them in the picture, not how they look. ")
    rule = (f"Sizes that are not identical differ by at least {floor:.0%} of the smaller one and by at least "
            f"{MIN_DIFF_PX:g} px. ")
    tol, err = ratio_tol(scene)
    gap = ill.context_gap_px(scene)
    q4_rule = rule + f"Which is actually {w['larger']}: A, B, or are they exactly equal?"
    direction = w["longer"] if scene.grow else w["shorter"]
    rungs = (
        Question(1, "context_count", intro + _q1_text(scene.kind), context_count(scene),
                 Margin(gap, "px beyond the clearance rule", 0.0, "context elements too close to count apart")),
        Question(2, "context_kind", intro + "Each target's context is of one of two kinds: "
                 + _describe_classes(scene.kind) + f". Which target's context is of the kind '{q2_class(scene)}': "
                 "A or B?", context_kind(scene), Margin(gap, "px beyond the clearance rule", 0.0,
                                                         "context elements too close to tell apart")),
        Question(3, "true_ratio", intro + f"Measure the true {w['size']}s: what is A's {w['size']} divided by B's?",
                 true_ratio(scene), Margin(tol / err, "tolerance / worst error", 2.0,
                                           "a 1 px misread of each size moves the ratio past half its tolerance")),
        Question(4, "actually_larger", intro + q4_rule, actually_larger(scene), _size_margin(scene, floor)),
        Question(5, "larger_after_resize", intro + f"Suppose B were made {scene.k_pct}% {direction} and all "
                 f"context elements were removed. Which would then be actually {w['larger']}: A, B, or exactly "
                 f"equal? Answer 'equal' only if the two would be exactly the same size; otherwise the larger would "
                 f"be at least {tau:.0%} and {MIN_DIFF_PX:g} px larger.", counterfactual(edit(scene)),
                 _resize_margin(scene), edit=f"B made {scene.k_pct}% {direction}, context removed"),
    )
    open_q = Question(6, "illusion_explained", intro + rule + "Which target, A or B, carries the context that in "
                      "the textbook version of this illusion makes a target look larger, and which is actually "
                      f"{w['larger']} (A, B, or equal)? Explain the illusion.", enlarging_and_larger(scene),
                      _size_margin(scene, floor))
    return Ladder(rungs, open_q)


def _resize_margin(scene: Scene) -> Margin:
    a, b2 = 100 * scene.sizes[0], resized_b_x100(scene)
    thr = max(MIN_DIFF_PX, TAU5[scene.level] * min(a, b2) / 100)
    return Margin(abs(a - b2) / 100 if a != b2 else thr, "px", thr,
                  "equal after the resize (unequal ones differ by the stated share and 6 px)")


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words (identity): see the module docstring. Its answer and margin are Q4's (`ladder`, which also
    rejects a scene that cannot be drawn legibly)."""
    why = layout_ok(scene)
    if why is not None:
        raise Reject(why)
    w = _words(scene)
    return Question(4, "measured_larger", f"Two {w['what']} are labelled A and B. Ignore the surrounding lines and "
                    f"circles and go by measurement alone. Sizes that are not identical differ by at least "
                    f"{BAND[scene.level][0]:.0%} of the smaller one and by at least {MIN_DIFF_PX:g} px. Measured "
                    f"with a ruler, which has the greater {w['size']}: A, B, or are they exactly equal?",
                    actually_larger(scene), _size_margin(scene, BAND[scene.level][0]))


def draw(scene: Scene, canvas: Canvas) -> None:
    ill.draw_figure(scene, canvas)


DOMAIN = Domain(
    id="optical_illusions", family="optical", title="Optical illusions",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="Two targets in a classic illusion figure: context count, which target has a named context class, "
                "the true size ratio, which is actually larger, and which would be after B is resized.",
    balance_keys=("context_count", "context_kind", "actually_larger", "larger_after_resize"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=3,
)
