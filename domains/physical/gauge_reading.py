"""Gauge reading: two analogue dial gauges, G1 (upper left) and G2 (lower right), each with a linear scale, major
and minor ticks, a hatched orange danger zone at the top of its range and a needle. The ladder walks G1's last major
tick -> G1 in the danger zone? -> G1's reading -> which gauge is nearer its maximum -> G1 after a change of X; the
open question asks how far G2 can still rise before its danger zone.

The latent state is exact: every scale has an integer minimum and major step, the needle sits on the half-minor
grid (`needle_half` half-minor intervals above the minimum) and the danger zone starts on a minor tick, so every
answer is a fraction computed without rounding. The value-to-angle map is linear, clockwise from 12 o'clock and
symmetric about the bottom: alpha(v) = -sweep/2 + sweep (v - v_min) / (v_max - v_min).
Ambiguity boundaries (all measured in minor intervals of the gauge, or in fraction of range for Q4):
* the needle on a major tick (Q1: which major was passed last);
* the needle on the danger-zone boundary (Q2, and Q5 on the edited scene, and the open question on G2);
* equal fractions of range (Q4).
Legibility: the zone is a band just outside the tick ring, so it covers no tick and the needle tip (which ends
among the ticks) never lies in it; minor ticks are at least `MINOR_GAP_PX` apart, so the +-half-minor tolerance of
a reading is at least 4 px of arc either way. The zone is drawn in Okabe-Ito vermillion, which reads as orange,
and every text calls it the orange danger zone.
Q5 edits the scene (G1's needle moves by X) and re-runs Q2's answer function. The direction of the change is drawn
50/50 independently of Q2, so the verb ("rose"/"fell") says nothing about Q2's answer. A rise from inside the zone
stays in it and a fall from below it stays below, so those two cells follow from Q2 and the verb; the other two
are drawn 50/50, which keeps Q5 at 50/50 overall.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from grip.answers import Choice, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.renderers.canvas import Canvas
from grip.renderers.shapes import circle, polygon
from grip.renderers.style import BLACK, GREY_DARK, LABEL, OKABE_ITO, Style, TEXT
from grip.renderers.text import draw_text, draw_text_px, text_size

# (unit, v_min, v_max, major step): linear "nice" scales with 5..10 major intervals.
SCALES_ZERO = (("%", 0, 100, 10), ("%", 0, 100, 20), ("km/h", 0, 160, 20), ("km/h", 0, 200, 20),
               ("km/h", 0, 240, 40), ("°C", 0, 120, 20), ("°C", 0, 100, 10), ("bar", 0, 6, 1),
               ("bar", 0, 10, 1), ("bar", 0, 16, 2), ("×1000 rpm", 0, 8, 1), ("×1000 rpm", 0, 7, 1),
               ("×1000 rpm", 0, 10, 1), ("A", 0, 50, 10), ("V", 0, 30, 5))
SCALES_NEG = (("°C", -40, 120, 20), ("°C", -30, 50, 10), ("°C", -20, 100, 20), ("°C", -50, 50, 10),
              ("bar", -1, 5, 1), ("bar", -1, 9, 1), ("A", -30, 30, 10), ("A", -50, 50, 10),
              ("V", -10, 10, 2), ("kPa", -60, 60, 20))
SCALES = {1: SCALES_ZERO, 2: SCALES_NEG, 3: SCALES_ZERO + SCALES_NEG}
MINORS = {1: (2,), 2: (4, 5), 3: (10,)}            # minor divisions per major interval
SWEEPS_DEG = (180, 240, 270)
RED_FROM = (0.65, 0.95)                            # danger zone starts on a minor tick in this fraction of the range
YES, NO, G1, G2 = "yes", "no", "G1", "G2"

HALF_MINOR_GAP = 0.5                               # minor intervals: needle to a major tick / the zone boundary
FRACTION_GAP = 0.05                                # Q4: |f1 - f2|
_GAP_N, _GAP_D = FRACTION_GAP.as_integer_ratio()   # the float's exact value, for the sampler's integer test
# Minor ticks at least this far apart along the tick arc: the +-half-minor tolerance is then >= 4 px of arc, and
# ticks can be counted at 768 px without magnifying.
MINOR_GAP_PX = 8.0
CHANGE_SPAN_MAJORS = 2                             # Q5's change X is at most two majors
G2_RED_SHARE = 0.2                                 # share of items whose G2 is already in the zone (open answer 0)
SAMPLE_TRIES = 40

# Dial geometry (px). The two dials sit on the diagonal, as large as the safe area allows (24 px border + bezel),
# with their names and the legend in the two free corners. Outward from the hub: needle (its tip among the ticks),
# tick ring, the danger-zone band, then the numerals; no band or needle ever covers a tick or a numeral.
FACE_R, BEZEL_PX = 200.0, 4.0
CENTERS = ((24.0 + FACE_R + 4.0,) * 2, (768.0 - 24.0 - FACE_R - 4.0,) * 2)
TICK_R = 138.0                                     # outer end of every tick
TICK_LEN = {"major": 24.0, "mid": 16.0, "minor": 10.0}
BAND_R = (TICK_R + 3.0, TICK_R + 13.0)             # danger-zone band, just outside the tick ring
NEEDLE_R, TAIL_R = TICK_R - 3.0, 26.0
LABEL_GAP_PX = 4.0                                 # numerals this far beyond the band
NUMERAL = Style(stroke=None, font_px=17.0, bold=True)
UNIT_STYLE = Style(stroke=None, font_px=18.0, bold=True)
RED = OKABE_ITO["vermillion"]                      # reads as orange: the texts say "orange danger zone"
NEEDLE = OKABE_ITO["blue"]
ZONE = "danger zone"


@dataclass(frozen=True)
class Scene:
    level: int                          # 1..3
    units: tuple[str, str]              # per gauge (G1, G2), as printed on the dial
    v_min: tuple[int, int]              # scale minimum, in the gauge's unit
    major_step: tuple[int, int]         # value between major ticks
    n_major: tuple[int, int]            # major intervals, 5..10 (v_max = v_min + n_major * major_step)
    minors: tuple[int, int]             # minor intervals per major, d in {2, 4, 5, 10}
    sweep_deg: tuple[int, int]          # dial sweep, 180 / 240 / 270, symmetric about the bottom
    red_minor: tuple[int, int]          # danger zone starts this many minor intervals above v_min
    needle_half: tuple[int, int]        # needle value = v_min + needle_half * minor / 2
    change_minor: int                   # Q5: G1's reading changes by this many minor intervals (+ rise, - fall)


# --- exact scale arithmetic (shared by answers, margins and drawing) -------------------------------------------

def minor(scene: Scene, g: int) -> Fraction:
    return Fraction(scene.major_step[g], scene.minors[g])


def v_max(scene: Scene, g: int) -> int:
    return scene.v_min[g] + scene.n_major[g] * scene.major_step[g]


def value_of(scene: Scene, g: int) -> Fraction:
    return scene.v_min[g] + scene.needle_half[g] * minor(scene, g) / 2


def red_from(scene: Scene, g: int) -> Fraction:
    return scene.v_min[g] + scene.red_minor[g] * minor(scene, g)


def fraction_of(scene: Scene, g: int) -> Fraction:
    return Fraction(scene.needle_half[g], 2 * scene.n_major[g] * scene.minors[g])


def change(scene: Scene) -> Fraction:
    return scene.change_minor * minor(scene, 0)


def angle_of(scene: Scene, g: int, value: float) -> float:
    """Degrees clockwise from 12 o'clock; the scale runs from -sweep/2 to +sweep/2."""
    span = scene.n_major[g] * scene.major_step[g]
    return -scene.sweep_deg[g] / 2 + scene.sweep_deg[g] * (float(value) - scene.v_min[g]) / span


def value_at(scene: Scene, g: int, angle_deg: float) -> float:
    """Inverse of `angle_of`."""
    span = scene.n_major[g] * scene.major_step[g]
    return scene.v_min[g] + (angle_deg + scene.sweep_deg[g] / 2) / scene.sweep_deg[g] * span


def decimals(x: Fraction) -> int:
    """Digits after the point that write x exactly (steps divide by 2 and 5 only, so x terminates)."""
    for k in range(6):
        if (x * 10 ** k).denominator == 1:
            return k
    raise ValueError(f"gauge_reading: {x} does not terminate in 5 decimals")


def minor_gap_px(scene: Scene, g: int) -> float:
    return TICK_R * math.radians(scene.sweep_deg[g]) / (scene.n_major[g] * scene.minors[g])


def fmt(x: Fraction) -> str:
    return f"{float(x):.{decimals(x)}f}"


# --- sampling ----------------------------------------------------------------------------------------------------

def _dial(rng: np.random.Generator, level: int):
    """A scale, its minor division, sweep and red-zone start, with minor ticks far enough apart to see."""
    for _ in range(50):
        unit, lo, hi, step = SCALES[level][int(rng.integers(len(SCALES[level])))]
        # rng.choice(seq)'s draws, without its overhead (most dials are drawn again)
        n, d = (hi - lo) // step, MINORS[level][int(rng.integers(len(MINORS[level])))]
        sweep = SWEEPS_DEG[int(rng.integers(len(SWEEPS_DEG)))]
        if TICK_R * math.radians(sweep) / (n * d) < MINOR_GAP_PX:
            continue
        total = n * d
        red = int(rng.integers(math.ceil(RED_FROM[0] * total), math.floor(RED_FROM[1] * total) + 1))
        return unit, lo, step, n, d, sweep, red
    raise Reject("no_legible_scale")


def _pick(rng: np.random.Generator, options) -> int | None:
    options = list(options)
    return int(options[int(rng.integers(len(options)))]) if options else None


def _g2_options(t2: int, r2: int, red: bool | None, h1: int, t1: int, nearer: bool) -> list[int]:
    """G2's half-minor positions h (of t2) off its zone start, in the zone or not as `red` says (None: either), at
    least FRACTION_GAP of range from G1's h1 / t1, and below it iff `nearer` (G1 nearer its maximum). In integers:
    |h t1 - h1 t2| / (t1 t2) >= FRACTION_GAP with the float taken at its exact value, as a Fraction compares, so
    h t1 <= h1 t2 - m (nearer) or h t1 >= h1 t2 + m, with m the gap's ceiling in units of 1 / (t1 t2): a range."""
    cross, m = h1 * t2, -(-_GAP_N * t1 * t2 // _GAP_D)
    lo, hi = (1, min(t2 - 1, (cross - m) // t1)) if nearer else (max(1, -(-(cross + m) // t1)), t2 - 1)
    if red is not None:
        lo, hi = (max(lo, 2 * r2 + 1), hi) if red else (lo, min(hi, 2 * r2 - 1))
    return [h for h in range(lo, hi + 1) if h != 2 * r2]


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Target first: Q2 (G1 in the zone) and Q4 (nearer its maximum) are each drawn 50/50, the direction of Q5's
    change 50/50 on its own, Q5 (in the zone after the change) 50/50 where Q2 and the direction leave it open, and
    whether G2 is in the zone (open answer 0) with `G2_RED_SHARE`; then G1's needle, G2's needle and the change X
    are drawn among the positions that give those answers with every margin passing."""
    if level not in (1, 2, 3):
        raise ValueError(f"gauge_reading: level must be 1, 2 or 3, got {level!r}")
    want_red, want_g1 = bool(rng.integers(2)), bool(rng.integers(2))
    sign = 1 if rng.integers(2) else -1
    # A rise from inside the zone stays inside (readings above the maximum count) and a fall from below stays below.
    want_red_after = want_red if (sign > 0) == want_red else bool(rng.integers(2))
    # G2 already in the zone makes the open answer 0; left to chance that is over a third of the items.
    want_g2_red = bool(rng.random() < G2_RED_SHARE)
    for attempt in range(SAMPLE_TRIES):
        # The G2 target yields when it cannot be met (G1 nearer its maximum, out of the zone, and G2 in it needs a
        # high G1 zone), so the other balance keys keep their exact 50/50 draw.
        g2_free = attempt >= SAMPLE_TRIES // 2
        dials = [_dial(rng, level), _dial(rng, level)]
        (_, _, _, n1, d1, _, r1), (_, _, _, n2, d2, _, r2) = dials
        # X in whole minor intervals, drawn from G1's dial alone (never from the targets), so that Q5's text says
        # nothing about Q2: at most two majors, and one minor less than the zone is wide, so that every target
        # cell (stay in, leave, enter, stay below) has room on this dial.
        k_max = min(CHANGE_SPAN_MAJORS * d1, n1 * d1 - r1 - 1)
        if k_max < 1:
            continue
        k = sign * int(rng.integers(1, k_max + 1))
        # G1: half-minor positions strictly inside the scale, off every major tick, on the wanted side of the zone
        # before and after the change, and not below the minimum after it.
        h1 = _pick(rng, (h for h in range(1, 2 * n1 * d1) if h % (2 * d1) and (h > 2 * r1) == want_red
                         and h != 2 * r1 and h + 2 * k >= 0 and h + 2 * k != 2 * r1
                         and (h + 2 * k > 2 * r1) == want_red_after))
        if h1 is None:
            continue
        h2 = _pick(rng, _g2_options(2 * n2 * d2, r2, None if g2_free else want_g2_red, h1, 2 * n1 * d1, want_g1))
        if h2 is None:
            continue
        # dials are (unit, v_min, step, n_major, minors, sweep, red_minor) per gauge: transpose into the fields
        return Scene(level, *zip(*dials), needle_half=(h1, h2), change_minor=k)
    raise Reject("no_needle_for_targets")


# --- answers -----------------------------------------------------------------------------------------------------

def _number(scene: Scene, g: int, x: Fraction, tol: Fraction) -> Number:
    return Number(float(x), float(tol), scene.units[g], decimals=decimals(x if tol == 0 else tol))


def major_passed(scene: Scene) -> Number:
    """G1's last major tick at or below the needle: floor to the major interval."""
    k = scene.needle_half[0] // (2 * scene.minors[0])
    return _number(scene, 0, Fraction(scene.v_min[0] + k * scene.major_step[0]), Fraction(0))


def in_red(scene: Scene) -> Choice:
    """Is G1's needle at or above its danger-zone start (readings above the maximum count as in the zone)?"""
    return Choice(YES if value_of(scene, 0) >= red_from(scene, 0) else NO, (YES, NO))


def reading(scene: Scene) -> Number:
    half = minor(scene, 0) / 2
    return Number(float(value_of(scene, 0)), float(half), scene.units[0], decimals=decimals(half))


def closer_to_max(scene: Scene) -> Choice:
    return Choice(G1 if fraction_of(scene, 0) > fraction_of(scene, 1) else G2, (G1, G2),
                  aliases=(("gauge 1", G1), ("gauge G1", G1), ("gauge 2", G2), ("gauge G2", G2)))


def headroom(scene: Scene) -> Record:
    """How far G2 can rise before it reaches its danger zone; 0 once it is in it."""
    half = minor(scene, 1) / 2
    room = max(red_from(scene, 1) - value_of(scene, 1), Fraction(0))
    return Record((("rise", Number(float(room), float(half), scene.units[1], decimals=decimals(half), low=0.0)),))


def edit(scene: Scene) -> Scene:
    """Q5's edit: G1's reading changes by X = change_minor minor intervals."""
    return replace(scene, needle_half=(scene.needle_half[0] + 2 * scene.change_minor, scene.needle_half[1]))


counterfactual = in_red


def _red_gap(scene: Scene, g: int) -> float:
    """Minor intervals between the needle and the danger-zone start."""
    return abs(scene.needle_half[g] - 2 * scene.red_minor[g]) / 2


def ladder(scene: Scene) -> Ladder:
    d1 = scene.minors[0]
    to_major = scene.needle_half[0] % (2 * d1)
    x = change(scene)
    unit = scene.units[0]
    verb = "rose" if x > 0 else "fell"
    unlabelled = (" Some major ticks carry no number; give the value of the last one passed, numbered or not."
                  if scene.level == 3 else "")
    rungs = (
        Question(1, "g1_major_passed", "On gauge G1, what is the value of the last major (long) tick that the needle "
                 "has passed, counting up from the scale's minimum?" + unlabelled, major_passed(scene),
                 Margin(min(to_major, 2 * d1 - to_major) / 2, "minor intervals", HALF_MINOR_GAP,
                        "G1's needle on a major tick")),
        Question(2, "g1_in_red", f"Does gauge G1's needle point into its {ZONE} (the hatched orange band just "
                 "outside the ticks)?", in_red(scene),
                 Margin(_red_gap(scene, 0), "minor intervals", HALF_MINOR_GAP, f"G1's needle on the {ZONE} start")),
        Question(3, "g1_reading", "What value does gauge G1 read?", reading(scene),
                 Margin(minor_gap_px(scene, 0), "px", MINOR_GAP_PX, "G1's minor ticks too close to tell apart")),
        Question(4, "closer_to_max", "Which gauge is closer to its maximum, as a fraction of its full range?",
                 closer_to_max(scene), _q4_margin(scene)),
        Question(5, "g1_red_after_change", f"If gauge G1's reading {verb} by {fmt(abs(x))} {unit}, would its needle "
                 f"point into the {ZONE}? (Readings above the maximum count as in the {ZONE}.)",
                 counterfactual(edit(scene)),
                 Margin(_red_gap(edit(scene), 0), "minor intervals", HALF_MINOR_GAP,
                        f"G1's changed reading on the {ZONE} start"),
                 edit=f"G1's reading {verb} by {fmt(abs(x))} {unit}"),
    )
    open_q = Question(6, "g2_headroom", f"Explain how much further gauge G2's reading can rise before it reaches its "
                      f"{ZONE} (answer 0 if it is already in its {ZONE}).", headroom(scene),
                      Margin(_red_gap(scene, 1), "minor intervals", HALF_MINOR_GAP,
                             f"G2's needle on the {ZONE} start"))
    return Ladder(rungs, open_q)


def _q4_margin(scene: Scene) -> Margin:
    return Margin(float(abs(fraction_of(scene, 0) - fraction_of(scene, 1))), "fraction of range", FRACTION_GAP,
                  "both gauges at the same fraction of their range")


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked from the other end of the scale: the gauge with more range left is the other one (inversion)."""
    other = G2 if closer_to_max(scene).value == G1 else G1
    return Question(4, "more_range_left", "Which gauge has the larger fraction of its full range still left above "
                    "its reading?", replace(closer_to_max(scene), value=other), _q4_margin(scene))


def minimal_pair(scene: Scene) -> Scene:
    """G2's needle turned by the fewest half-minor steps that flip Q4 with every margin passing (downward first on
    a tie); G1, and so Q1-Q3 and Q5, stay as they are."""
    top = 2 * scene.n_major[1] * scene.minors[1]
    h2, q4 = scene.needle_half[1], closer_to_max(scene).value
    for step in range(1, top):
        for h in (h2 - step, h2 + step):
            if 0 < h < top:
                twin = replace(scene, needle_half=(scene.needle_half[0], h))
                if closer_to_max(twin).value != q4 and not ladder(twin).failing_margins():
                    return twin
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def _polar(c, angle_deg: float, r: float) -> tuple[float, float]:
    a = math.radians(angle_deg)
    return (c[0] + r * math.sin(a), c[1] - r * math.cos(a))


def _stroke_segments(canvas: Canvas, segs, width_px: float, colour) -> None:
    """Many segments as one cairo path: a hundred toolkit lines (each buffered by shapely) would cost more than the
    PNG encode, and no label is placed by collision search here (they sit on their own ring by construction)."""
    ctx = canvas.ctx
    for a, b in segs:
        ctx.move_to(*canvas.px(*a))
        ctx.line_to(*canvas.px(*b))
    ctx.set_source_rgb(*colour)
    ctx.set_line_width(width_px)
    ctx.set_line_cap(0)
    ctx.stroke()


def _label_spot(canvas: Canvas, c, angle_deg: float, text: str):
    """Centre of a numeral just outside the danger-zone band: its box's nearest point stays LABEL_GAP_PX beyond the
    band (so no tick, band or needle ever reaches it) and its farthest corner inside the bezel."""
    w, h = text_size(canvas, text, NUMERAL)
    a = math.radians(angle_deg)
    support = w / 2 * abs(math.sin(a)) + h / 2 * abs(math.cos(a))
    rho = BAND_R[1] + LABEL_GAP_PX + support
    x, y = _polar(c, angle_deg, rho)
    far = max(math.hypot(x + sx * w / 2 - c[0], y + sy * h / 2 - c[1]) for sx in (-1, 1) for sy in (-1, 1))
    if far > FACE_R - BEZEL_PX - 1:
        raise Reject("label_clipped")
    return (x, y), (x - w / 2, y - h / 2, x + w / 2, y + h / 2)


def _hatched_band(canvas: Canvas, c, a0: float, a1: float, r0: float, r1: float) -> None:
    """A vermillion annular sector with white slanted hatching and a dark edge: the danger zone, recognisable
    without colour (the legend names it)."""
    ctx = canvas.ctx
    ctx.new_path()
    cx, cy = canvas.px(*c)
    ctx.arc(cx, cy, r1, math.radians(a0 - 90), math.radians(a1 - 90))
    ctx.arc_negative(cx, cy, r0, math.radians(a1 - 90), math.radians(a0 - 90))
    ctx.close_path()
    ctx.set_source_rgb(*RED)
    ctx.fill_preserve()
    with canvas.layer():
        ctx.clip()
        step = math.degrees(6.0 / r1)
        k = a0 - 3 * step
        while k < a1 + step:
            a, b = math.radians(k), math.radians(k + 2 * step)   # `_polar` inlined: dozens of strokes per band
            ctx.move_to(*canvas.px(c[0] + (r0 - 2) * math.sin(a), c[1] - (r0 - 2) * math.cos(a)))
            ctx.line_to(*canvas.px(c[0] + (r1 + 2) * math.sin(b), c[1] - (r1 + 2) * math.cos(b)))
            k += step
        ctx.set_source_rgb(1.0, 1.0, 1.0)
        ctx.set_line_width(1.5)
        ctx.stroke()
    ctx.new_path()
    ctx.arc(cx, cy, r1, math.radians(a0 - 90), math.radians(a1 - 90))
    ctx.arc_negative(cx, cy, r0, math.radians(a1 - 90), math.radians(a0 - 90))
    ctx.close_path()
    ctx.set_source_rgb(*GREY_DARK)
    ctx.set_line_width(1.0)
    ctx.stroke()


def _needle(canvas: Canvas, c, angle_deg: float) -> None:
    a = math.radians(angle_deg)
    d, n = np.array([math.sin(a), -math.cos(a)]), np.array([math.cos(a), math.sin(a)])
    o = np.asarray(c)
    pts = [o - d * TAIL_R + n * 6, o + d * 0.8 * NEEDLE_R + n * 1.8, o + d * NEEDLE_R,
           o + d * 0.8 * NEEDLE_R - n * 1.8, o - d * TAIL_R - n * 6]
    polygon(canvas, pts, Style(stroke=NEEDLE, fill=NEEDLE, width_px=1.5), owner="needle")


def _gauge(canvas: Canvas, scene: Scene, g: int, boxes: list) -> None:
    c = CENTERS[g]
    circle(canvas, c, FACE_R - BEZEL_PX / 2, Style(stroke=GREY_DARK, fill=(1.0, 1.0, 1.0), width_px=BEZEL_PX),
           f"dial{g}")
    half = scene.sweep_deg[g] / 2
    _hatched_band(canvas, c, angle_of(scene, g, red_from(scene, g)), half, *BAND_R)
    d, n = scene.minors[g], scene.n_major[g]
    ticks: dict[str, list] = {"major": [], "mid": [], "minor": []}
    for k in range(n * d + 1):
        kind = "major" if k % d == 0 else "mid" if d % 2 == 0 and d > 2 and k % d == d // 2 else "minor"
        a = math.radians(-half + scene.sweep_deg[g] * k / (n * d))
        sin, cos, r = math.sin(a), math.cos(a), TICK_R - TICK_LEN[kind]   # `_polar` at both ends, one sin and cos
        ticks[kind].append(((c[0] + r * sin, c[1] - r * cos), (c[0] + TICK_R * sin, c[1] - TICK_R * cos)))
    _stroke_segments(canvas, ticks["minor"], 2.0, BLACK)
    _stroke_segments(canvas, ticks["mid"], 2.5, BLACK)
    _stroke_segments(canvas, ticks["major"], 4.0, BLACK)
    # Level 3 leaves every other major unnumbered, but always numbers the maximum: the full range stays printed.
    for k in [k for k in range(n + 1) if scene.level < 3 or k % 2 == 0 or k == n]:
        v = scene.v_min[g] + k * scene.major_step[g]
        text = str(v).replace("-", "\u2212")
        at, b = _label_spot(canvas, c, -half + scene.sweep_deg[g] * k / n, text)
        if any(b[0] < o[2] + 3 and o[0] < b[2] + 3 and b[1] < o[3] + 3 and o[1] < b[3] + 3 for o in boxes):
            raise Reject("label_clash")
        boxes.append(b)
        draw_text_px(canvas, text, canvas.px(*at), NUMERAL)
    # The unit sits in the gap the sweep leaves at the bottom, below the needle's tail.
    draw_text(canvas, scene.units[g], (c[0], c[1] + 0.62 * TICK_R), UNIT_STYLE)
    _needle(canvas, c, angle_of(scene, g, value_of(scene, g)))
    circle(canvas, c, 11.0, Style(stroke=None, fill=GREY_DARK), f"hub{g}")


def draw(scene: Scene, canvas: Canvas) -> None:
    boxes: list = []
    for g in (0, 1):
        _gauge(canvas, scene, g, boxes)
    name = LABEL.with_(font_px=30.0)
    draw_text(canvas, G1, _polar(CENTERS[0], 45.0, FACE_R + 30.0), name)
    draw_text(canvas, G2, _polar(CENTERS[1], 225.0, FACE_R + 30.0), name)
    # Legend, in the free upper-right corner: the zone is named in words and hatched, not only coloured.
    legend, style = "= " + ZONE, TEXT.with_(font_px=18.0)
    w, _ = text_size(canvas, legend, style)
    x, y = 600.0, 110.0
    _hatched_band(canvas, (x - w / 2 - 30.0, y + 300.0), -4.0, 4.0, 294.0, 306.0)
    draw_text_px(canvas, legend, canvas.px(x, y), style)


DOMAIN = Domain(
    id="gauge_reading", family="physical", title="Gauge Reading", scene=Scene, sample=sample, ladder=ladder,
    draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="inversion", version=3,
    description="Two analogue dial gauges: read G1's last major tick, whether it is in the danger zone and its exact "
                "value, compare both gauges' fractions of range, and judge G1's danger zone after a stated change.",
    balance_keys=("g1_in_red", "closer_to_max", "g1_red_after_change"),
)
