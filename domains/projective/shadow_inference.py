"""Shadow inference: a side view of vertical poles on a ground ruler, lit by one point lamp above the top of the
picture (never drawn). Every pole but D casts a drawn shadow bar from its foot to its tip. The ladder walks A's
shadow direction -> the lamp's side of B -> the lamp's height -> D's (undrawn) shadow -> A's shadow under a raised
lamp; the open question asks for the lamp's ruler reading.

Rule: the lamp L = (L_x, L_h), a pole at x of height h; its shadow tip is t = x + h (x - L_x) / (L_h - h), on the
far side from the lamp, and its length h |x - L_x| / (L_h - h). The line from a pole's top to its tip passes through
the lamp, so the drawn lines meet there.
Ambiguity boundaries: a pole within 0.5 m of the lamp's vertical (side and direction); shadow bars closer than
0.2 m to another pole's foot or bar; drawn lines meeting the lamp at a narrow angle (20 deg at level 1, 12 deg
above); and the sensitivity of each measured answer: every read coordinate (a drawn pole's foot, its top or its
tip, D's foot or top) off by 2 px (0.05 m), the lamp re-estimated as the least-squares point of the drawn lines,
the answer recomputed; margin = tolerance / worst error, >= 2 (level 3 >= 1.5).
Legibility: the sheet's ground ruler gives horizontal positions only; a height scale (0-4.5 m, ticks every 0.5 m)
stands at the left so that pole heights can be measured too. All coordinates are multiples of 5 cm (2 px).
Deviation: the sheet's Q4 rephrase (the ruler reading of D's shadow tip, x_D +- Q4) follows from Q4 by no map the
contract offers (identity, inversion, reversal, complement), so the rephrase asks D's shadow length again in other
words (identity).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import cairo
import numpy as np

from grip.answers import Choice, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, GREY, GREY_DARK, LABEL, TEXT, Style
from grip.renderers.text import draw_text_px

LEFT, RIGHT = "left", "right"
SIDES = (LEFT, RIGHT)
STEP_CM = 5                                # every coordinate is a multiple of 5 cm (2 px at 40 px/m)
PX_PER_M = 40.0
RULER_M = 16.0
RULER_GAP_M = 0.3                          # ruler line below the ground line
CROP_M = 4.5                               # the picture ends here: the lamp (>= 5 m) is never in view
SIDE_M = 0.5                               # every pole this far from the lamp's vertical
BAR_CLEAR_M = 0.2                          # shadow bars from other feet and other bars
SHADOW_M = (0.5, 12.0)
LAMP_CLEAR_M = 1.5
ANGLE_DEG = {1: 20.0, 2: 12.0, 3: 12.0}    # least angle at the lamp between two drawn lines
SENS_MIN = {1: 2.0, 2: 2.0, 3: 1.5}        # tolerance / worst error under one 2 px misread
MISREAD_M = 0.05
REL_TOL, MIN_TOL_M, LX_TOL_M = 0.08, 0.2, 0.5
RAISE_M = 2.0
POLES = {1: 4, 2: 4, 3: 3}
TRIES = 40
WORLD = (-2.0, 2.0 + 9.6, 17.2, 2.0 - 9.6)  # metres, y up: 40 px/m, ground at 464 px, 0 m at 80 px


@dataclass(frozen=True)
class Scene:
    level: int                              # 1..3
    lamp_cm: tuple[int, int]                # (L_x, L_h): L_x 200..1400, L_h 500..900, multiples of 5
    poles_cm: tuple[tuple[int, int], ...]   # (x, h) per pole, named A, B, (C,) D in this order; x 50..1550,
    #                                         h 100..400 and <= L_h - 150; D (last) has no drawn shadow


def names(scene: Scene) -> tuple[str, ...]:
    return tuple("ABC"[:len(scene.poles_cm) - 1]) + ("D",)


def lamp_m(scene: Scene) -> tuple[float, float]:
    return scene.lamp_cm[0] / 100, scene.lamp_cm[1] / 100


def poles_m(scene: Scene) -> list[tuple[float, float]]:
    return [(x / 100, h / 100) for x, h in scene.poles_cm]


def tip_of(x: float, h: float, lx: float, lh: float) -> float:
    return x + h * (x - lx) / (lh - h)


def shadow_length(x: float, h: float, lx: float, lh: float) -> float:
    return h * abs(x - lx) / (lh - h)


def tips_m(scene: Scene) -> list[float]:
    lx, lh = lamp_m(scene)
    return [tip_of(x, h, lx, lh) for x, h in poles_m(scene)]


# --- reading the picture back: the lamp as the least-squares point of the drawn lines ----------------------------

def lamp_estimate(tops: np.ndarray, tips: np.ndarray) -> np.ndarray:
    """Least-squares meeting point of the lines top_i -> (tip_i, 0). tops (..., n, 2), tips (..., n); returns
    (..., 2). Two lines: their intersection."""
    d = np.stack([tips - tops[..., 0], -tops[..., 1]], axis=-1)
    d = d / np.linalg.norm(d, axis=-1, keepdims=True)
    nrm = np.stack([-d[..., 1], d[..., 0]], axis=-1)
    a = np.einsum("...ni,...nj->...ij", nrm, nrm)
    b = np.einsum("...ni,...nj,...nj->...i", nrm, nrm, tops)
    return np.linalg.solve(a, b[..., None])[..., 0]


@lru_cache(maxsize=256)
def sensitivity(scene: Scene) -> dict[str, float]:
    """Worst |error| of each measured answer when one read coordinate is off by `MISREAD_M`."""
    lx, lh = lamp_m(scene)
    ps = np.array(poles_m(scene))
    drawn = ps[:-1]
    tips = np.array(tips_m(scene)[:-1])
    n = len(drawn)
    cases_tops, cases_tips, cases_d, cases_a = [], [], [], []
    for i in range(n):
        for sign in (-1, 1):
            for what in range(3):                       # foot x (moves the top too), top height, tip
                t, p = tips.copy(), drawn.copy()
                if what == 0:
                    p[i, 0] += sign * MISREAD_M
                elif what == 1:
                    p[i, 1] += sign * MISREAD_M
                else:
                    t[i] += sign * MISREAD_M
                cases_tops.append(p)
                cases_tips.append(t)
                cases_d.append(ps[-1])
                cases_a.append(p[0])
    for k in range(2):                                  # D's foot x or top height
        for sign in (-1, 1):
            dd = ps[-1].copy()
            dd[k] += sign * MISREAD_M
            cases_tops.append(drawn)
            cases_tips.append(tips)
            cases_d.append(dd)
            cases_a.append(drawn[0])
    est = lamp_estimate(np.array(cases_tops), np.array(cases_tips))
    ex, eh = est[:, 0], est[:, 1]
    dx, dh = np.array(cases_d).T
    ax, ah = np.array(cases_a).T
    q4 = dh * np.abs(dx - ex) / (eh - dh)
    q5 = ah * np.abs(ax - ex) / (eh + RAISE_M - ah)
    xd, hd = ps[-1]
    xa, ha = ps[0]
    return {"height": float(np.max(np.abs(eh - lh))),
            "d_shadow": float(np.max(np.abs(q4 - shadow_length(xd, hd, lx, lh)))),
            "a_raised": float(np.max(np.abs(q5 - shadow_length(xa, ha, lx, lh + RAISE_M)))),
            "lamp_x": float(np.max(np.abs(ex - lx)))}


def _length_tol(v: float) -> float:
    return max(REL_TOL * v, MIN_TOL_M)


def _sens_margin(tol: float, err: float) -> float:
    return tol / max(err, 1e-9)


# --- validity ----------------------------------------------------------------------------------------------------

def side_gap_m(scene: Scene) -> float:
    lx, _ = lamp_m(scene)
    return min(abs(x - lx) for x, _ in poles_m(scene))


def bar_clearance_m(scene: Scene) -> float:
    """Least gap between a drawn shadow bar and another pole's foot or another drawn bar."""
    ps, tips = poles_m(scene), tips_m(scene)
    bars = [(min(x, t), max(x, t)) for (x, _), t in zip(ps[:-1], tips[:-1])]
    out = math.inf
    for i, (a, b) in enumerate(bars):
        for j, (x, _) in enumerate(ps):
            if j != i:
                g = 0.0 if a <= x <= b else min(abs(x - a), abs(x - b))
                if g < out:
                    out = g
        for c, d in bars[i + 1:]:
            g = max(c - b, a - d, 0.0)
            if g < out:
                out = g
    return out


def line_angle_deg(scene: Scene) -> float:
    """Least angle at the lamp between two drawn lines (top -> tip)."""
    lx, lh = lamp_m(scene)
    dirs = [np.arctan2(-lh, t - lx) for t in tips_m(scene)[:-1]]
    return float(min(np.degrees(abs(a - b)) for i, a in enumerate(dirs) for b in dirs[i + 1:]))


def valid(scene: Scene) -> str | None:
    """The reason a scene cannot be used, or None."""
    lx, lh = lamp_m(scene)
    ps = poles_m(scene)
    if any(h > lh - LAMP_CLEAR_M + 1e-9 for _, h in ps):
        return "lamp_too_low"
    if side_gap_m(scene) < SIDE_M - 1e-9:
        return "pole_under_lamp"
    for (x, h), t in zip(ps, tips_m(scene)):
        if not SHADOW_M[0] <= shadow_length(x, h, lx, lh) <= SHADOW_M[1] or not 0 <= t <= RULER_M:
            return "shadow_off_ruler"
    if bar_clearance_m(scene) < BAR_CLEAR_M - 1e-9:
        return "bars_crowded"
    if line_angle_deg(scene) < ANGLE_DEG[scene.level]:
        return "lines_too_parallel"
    return None


# --- sampling ----------------------------------------------------------------------------------------------------

def _cm(rng: np.random.Generator, lo: float, hi: float) -> int:
    """A multiple of 5 cm in [lo, hi] metres."""
    a, b = math.ceil(lo * 100 / STEP_CM), math.floor(hi * 100 / STEP_CM)
    if b < a:
        raise Reject("empty_range")
    return int(rng.integers(a, b + 1)) * STEP_CM


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"shadow_inference: level must be 1..3, got {level}")
    # Target first: (Q1, Q2) uniform over the four pairs. Q1 = right when A stands right of the lamp; Q2 = right when
    # the lamp stands right of B, i.e. B left of the lamp.
    q1, q2 = SIDES[int(rng.integers(2))], SIDES[int(rng.integers(2))]
    k = POLES[level]
    for _ in range(TRIES):
        lx, lh = _cm(rng, 2, 14) / 100, _cm(rng, 5, 9) / 100
        sides = [1 if q1 == RIGHT else -1, -1 if q2 == RIGHT else 1] + [0] * (k - 2)
        poles: list[tuple[int, int]] = []
        for sd in sides:
            pole = _pole(rng, sd, lx, lh, poles)
            if pole is None:
                break
            poles.append(pole)
        if len(poles) < k:
            continue
        s = Scene(level, (round(lx * 100), round(lh * 100)), tuple(poles))
        if valid(s) is None and min(sensitivity_margins(s).values()) >= SENS_MIN[level]:
            return s
    raise Reject("no_scene_for_target")


def _pole(rng: np.random.Generator, side: int, lx: float, lh: float, placed) -> tuple[int, int] | None:
    """(x, h) in cm on the given side of the lamp (+1 right, -1 left, 0 either), >= 1 m from the poles placed, with a
    height whose shadow is 0.5-12 m long and ends on the ruler (the length grows with h: h = L L_h / (d + L))."""
    for _ in range(8):
        lo, hi = (lx + SIDE_M, 15.5) if side > 0 else (0.5, lx - SIDE_M) if side < 0 else (0.5, 15.5)
        if hi < lo:
            return None
        x = _cm(rng, lo, hi) / 100
        d = abs(x - lx)
        if d < SIDE_M or any(abs(x * 100 - px) < 100 for px, _ in placed):
            continue
        room = min(SHADOW_M[1], RULER_M - x if x > lx else x)
        h_lo = max(1.0, SHADOW_M[0] * lh / (d + SHADOW_M[0]))
        h_hi = min(4.0, lh - LAMP_CLEAR_M, room * lh / (d + room))
        if h_hi - h_lo < 0.05:
            continue
        return round(x * 100), _cm(rng, h_lo + 0.005, h_hi - 0.005)
    return None


def sensitivity_margins(scene: Scene) -> dict[str, float]:
    err = sensitivity(scene)
    lx, lh = lamp_m(scene)
    (xa, ha), (xd, hd) = poles_m(scene)[0], poles_m(scene)[-1]
    return {"height": _sens_margin(REL_TOL * lh, err["height"]),
            "d_shadow": _sens_margin(_length_tol(shadow_length(xd, hd, lx, lh)), err["d_shadow"]),
            "a_raised": _sens_margin(_length_tol(shadow_length(xa, ha, lx, lh + RAISE_M)), err["a_raised"]),
            "lamp_x": _sens_margin(LX_TOL_M, err["lamp_x"])}


# --- answers ----------------------------------------------------------------------------------------------------

def a_shadow_direction(scene: Scene) -> Choice:
    (xa, _), (lx, _) = poles_m(scene)[0], lamp_m(scene)
    return Choice(RIGHT if xa > lx else LEFT, SIDES)


def lamp_side_of_b(scene: Scene) -> Choice:
    (xb, _), (lx, _) = poles_m(scene)[1], lamp_m(scene)
    return Choice(RIGHT if lx > xb else LEFT, SIDES)


def lamp_height(scene: Scene) -> Number:
    return Number(round(lamp_m(scene)[1], 2), REL_TOL, "m", decimals=2, tol_kind="rel", low=0.0)


def _length(v: float) -> Number:
    return Number(round(v, 2), round(_length_tol(v), 4), "m", decimals=2, low=0.0)


def d_shadow_length(scene: Scene) -> Number:
    (x, h), (lx, lh) = poles_m(scene)[-1], lamp_m(scene)
    return _length(shadow_length(x, h, lx, lh))


def edit(scene: Scene) -> Scene:
    """The lamp raised by `RAISE_M` at the same horizontal position (never drawn; may stand above 9 m)."""
    return replace(scene, lamp_cm=(scene.lamp_cm[0], scene.lamp_cm[1] + round(RAISE_M * 100)))


def counterfactual(scene: Scene) -> Number:
    """Pole A's shadow length (applied to the edited scene: under the raised lamp)."""
    (x, h), (lx, lh) = poles_m(scene)[0], lamp_m(scene)
    return _length(shadow_length(x, h, lx, lh))


def lamp_x(scene: Scene) -> Record:
    return Record((("ruler_reading", Number(round(lamp_m(scene)[0], 2), LX_TOL_M, "m", decimals=2, low=0.0,
                                            high=RULER_M)),))


def minimal_pair(scene: Scene) -> Scene:
    """D's height changed by the least multiple of 25 cm (+ before -, at most 2 m) that moves Q4 by >= 3 tolerances
    with every margin holding."""
    q4 = d_shadow_length(scene)
    x, h = scene.poles_cm[-1]
    for k in range(1, 9):
        for sign in (1, -1):
            h2 = h + sign * 25 * k
            if not 100 <= h2 <= min(400, scene.lamp_cm[1] - 150):
                continue
            twin = replace(scene, poles_cm=scene.poles_cm[:-1] + ((x, h2),))
            q4b = d_shadow_length(twin)
            if abs(q4b.value - q4.value) < 3 * max(q4.tol_abs(), q4b.tol_abs()) or valid(twin) is not None:
                continue
            if not ladder(twin).failing_margins():
                return twin
    raise Reject("no_minimal_pair")


# --- ladder -----------------------------------------------------------------------------------------------------

def _intro(scene: Scene) -> str:
    drawn = ", ".join(names(scene)[:-1])
    return (f"Side view: vertical poles stand on flat ground with a ruler in metres, lit by one small lamp that is "
            f"above the top of the picture and not shown. The black bars on the ground are the shadows of poles "
            f"{drawn}; pole D's shadow is not drawn. The scale at the left gives heights in metres. ")


def _q4_margin(scene: Scene) -> Margin:
    return Margin(sensitivity_margins(scene)["d_shadow"], "tolerance / worst error", SENS_MIN[scene.level],
                  "a 2 px misread moves the answer past its tolerance")


def ladder(scene: Scene) -> Ladder:
    why = valid(scene)
    if why is not None:
        raise Reject(why)
    sm, lv = sensitivity_margins(scene), scene.level
    need = SENS_MIN[lv]
    unit = "tolerance / worst error"
    clear = min(side_gap_m(scene) / SIDE_M, bar_clearance_m(scene) / BAR_CLEAR_M)
    intro = _intro(scene)
    rungs = (
        Question(1, "a_shadow_direction", intro + "Does pole A's shadow point left or right from its foot?",
                 a_shadow_direction(scene), Margin(side_gap_m(scene), "m", SIDE_M, "a pole under the lamp")),
        Question(2, "lamp_side_of_b", intro + "Is the lamp to the left or to the right of pole B?",
                 lamp_side_of_b(scene), Margin(clear, "fraction of the clearance rule", 1.0,
                                               "pole under the lamp or shadow bars crowding (0.5 m, 0.2 m)")),
        Question(3, "lamp_height", intro + "How high above the ground is the lamp, in metres?", lamp_height(scene),
                 Margin(sm["height"], unit, need, "a 2 px misread moves the answer past its tolerance")),
        Question(4, "d_shadow_length", intro + "How long is pole D's shadow (not drawn), in metres?",
                 d_shadow_length(scene), _q4_margin(scene)),
        Question(5, "a_shadow_raised_lamp", intro + f"If the lamp were raised by {RAISE_M:g} m, straight up from "
                 "where it is, how long would pole A's shadow be, in metres?", counterfactual(edit(scene)),
                 Margin(sm["a_raised"], unit, need, "a 2 px misread moves the answer past its tolerance"),
                 edit=f"lamp raised by {RAISE_M:g} m"),
    )
    open_q = Question(6, "lamp_ruler_reading", intro + "Where is the lamp horizontally: at which ruler reading does "
                      "the point straight below it lie? Explain how you found it.", lamp_x(scene),
                      Margin(min(sm["lamp_x"], line_angle_deg(scene) / ANGLE_DEG[lv] * need), unit, need,
                             "a 2 px misread moves the answer past its tolerance, or lines too parallel"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words (identity): see the module docstring for why not the sheet's ruler reading. Its answer
    and margin are Q4's (`ladder`, which also rejects an invalid scene)."""
    why = valid(scene)
    if why is not None:
        raise Reject(why)
    return Question(4, "d_shadow_foot_to_tip", _intro(scene) + "If pole D's shadow were drawn, how far would it "
                    "reach along the ground from D's foot to its tip, in metres?", d_shadow_length(scene),
                    _q4_margin(scene))


# --- drawing ----------------------------------------------------------------------------------------------------

def draw(scene: Scene, canvas: Canvas) -> None:
    # The ground, the crop line, the ruler and the height scale (the most of the drawing's cost) depend on the level
    # only: drawn once onto a fresh canvas, their pixels are copied onto a fresh one (else drawn here).
    if not canvas.paste_layer(_fixed_layer(canvas.size_px, canvas.world, scene.level)):
        _draw_fixed(canvas, scene.level)
    canvas.ctx.set_line_join(cairo.LINE_JOIN_ROUND)   # as the fixed layer's strokes leave it: the bars depend on it
    for (x, h), t, name in zip(poles_m(scene), tips_m(scene), names(scene)):
        if name != "D":
            _bar(canvas, (x, 0), (t, 0), BLACK, 8.0)
    for (x, h), name in zip(poles_m(scene), names(scene)):
        _bar(canvas, (x, 0), (x, h), GREY_DARK, 6.0)
        draw_text_px(canvas, name, canvas.px(x + 0.36, h - 0.2), LABEL)


@lru_cache(maxsize=8)
def _fixed_layer(size_px: int, world, level: int) -> bytes:
    """The surface bytes of a fresh canvas after `_draw_fixed`."""
    canvas = Canvas(size_px, world)
    _draw_fixed(canvas, level)
    return canvas.layer_bytes()


def _draw_fixed(canvas: Canvas, lv: int) -> None:
    shapes.line(canvas, (-0.5, 0), (RULER_M + 0.3, 0), Style(stroke=GREY_DARK, width_px=2.0))
    shapes.line(canvas, (-0.5, CROP_M), (RULER_M + 0.3, CROP_M), Style(stroke=GREY, width_px=2.0, dash_px=(6, 6)))
    # The ruler runs 12 px below the ground line, clear of the 8 px shadow bars; the height scale stands at -0.5 m.
    y = -RULER_GAP_M
    segs = [((k / 2, y), (k / 2, y - (0.3 if k % 2 == 0 else 0.18))) for k in range(int(RULER_M * 2) + 1)]
    segs += [((0, y), (RULER_M, y)), ((-0.5, 0), (-0.5, CROP_M))]
    segs += [((-0.5, k / 2), (-0.5 - (0.3 if k % 2 == 0 else 0.18), k / 2)) for k in range(int(CROP_M * 2) + 1)]
    shapes.segments(canvas, segs, Style(stroke=BLACK, width_px=2.0), register=False)
    font = TEXT.with_(font_px=16.0)
    for m in range(0, int(RULER_M) + 1, 2 if lv == 3 else 1):
        draw_text_px(canvas, str(m), canvas.px(m, y - 0.62), font)
    for m in range(0, int(CROP_M) + 1):
        draw_text_px(canvas, str(m), canvas.px(-1.15, m), font)
    draw_text_px(canvas, "metres", canvas.px(RULER_M / 2, y - 1.3), font)
    draw_text_px(canvas, "m", canvas.px(-1.15, CROP_M + 0.45), font)


def _bar(canvas: Canvas, a, b, colour, width_px: float) -> None:
    """A straight bar with flat (butt) ends: a pole ends exactly at its top and a shadow exactly at its tip (the
    toolkit's round caps would add half the width beyond each end)."""
    ctx = canvas.ctx
    ctx.move_to(*canvas.px(*a))
    ctx.line_to(*canvas.px(*b))
    ctx.set_source_rgb(*colour)
    ctx.set_line_width(width_px)
    ctx.set_line_cap(0)
    ctx.stroke()


DOMAIN = Domain(
    id="shadow_inference", family="projective", title="Shadow inference",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    world=WORLD,
    description="Poles on a ground ruler cast shadows from a lamp above the picture: a shadow's direction, the "
                "lamp's side, its height, an undrawn shadow's length, and a shadow under the raised lamp.",
    balance_keys=("a_shadow_direction", "lamp_side_of_b"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
)
