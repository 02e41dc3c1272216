"""Clock reading: one analogue wall clock with an hour hand (short, wide), a minute hand (long, narrow) and, at
level 3, a thin second hand. The ladder walks hour -> half hour -> exact time -> hand angle -> mirrored clock.

The latent state is the time itself, h:m:s; every hand angle follows from it in closed form (clockwise from 12):
hour = 30 (h mod 12) + m/2 + s/120, minute = 6 m + s/10, second = 6 s. Ambiguity boundaries:
* the hour rollover: the hour hand sits on an hour mark and the read hour changes (Q1); a minute answer with a
  +-1 tolerance must not straddle it either (Q3, and Q5 on the mirrored time), because the record is compared field
  by field and "2:59" for "3:00" would be wrong in the hour field. So the read minute stays in 1..58;
* half past: the minute hand on the 6 (Q2);
* coincident hands: below `HAND_GAP_DEG` one hand hides the other (Q4, and the overlap question).
The mirrored clock (Q5) is the edit E(h:m:s) = (12:00:00 - h:m:s) mod 12 h, which reflects every hand, the second
hand included, so the edited scene is an ordinary clock whose time is read by the same function as Q3.

Two rules of the sheet, as decided here:
* Near the hour (Q1), levels 1-2 show no minute in {58, 59, 0, 1}: the hour hand is then within 1 deg of a mark.
  The sheet keeps minute 2 (the hand 1 deg past its mark) but not 58 (1 deg short of the next one), because a hand
  about to reach a mark is read as on it. Q1's margin is therefore measured to the last mark passed and to the point
  one minute's travel (0.5 deg) short of the next mark, with a 1 deg threshold: minutes 2..57. Level 3 lifts it.
* Half past (Q2): the boundary is the minute hand's actual position, seconds included: |m + s/60 - 30| >= 1.5 min
  (9 deg of the minute hand). With s = 0 that is exactly the sheet's m not in {29, 30, 31}; at level 3 it also
  rejects 28:31..28:59 and accepts 31:30..31:59, where the hand is as far from the 6 as at 28:30 and 31:30.
Q4 measures the hour and minute hands where they are drawn; at level 3 the text says that the second hand is not one
of them (the seconds still move both hands, and the drawing shows that).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.shapes import circle, line, polygon
from grip.renderers.style import BLACK, GREY_DARK, OKABE_ITO, Style, hex_rgb
from grip.renderers.text import draw_text

STYLES = ("arabic", "roman", "ticks")
ROMAN = ("XII", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI")
FACE_TINTS = (hex_rgb("#FFFFFF"), hex_rgb("#F4F4F4"), hex_rgb("#FBF6E9"), hex_rgb("#EEF6FC"))
HALF_DAY_S = 12 * 3600
OVERLAP_PERIOD_MIN = 720 / 11          # the minute hand laps the hour hand every 65 5/11 min
RELATIVE_SPEED_DEG_PER_MIN = 5.5       # minute hand 6 deg/min minus hour hand 0.5 deg/min

HAND_GAP_DEG = 6.0                     # below this one hand covers the other (hour hand is 12 px wide)
HALF_PAST_GAP_MIN = 1.5                # m in {29, 30, 31} at s = 0 is too close to call "before/after half past"
HOUR_MARK_GAP_DEG = {1: 1.0, 2: 1.0, 3: 0.0}   # L1-L2: minutes 2..57 (module docstring); lifted at L3
APPROACH_DEG = 0.5                     # one minute of hour-hand travel: short of a mark by this much reads as on it
ROLLOVER_GAP_MIN = 1                   # read minute in 1..58: its +-1 window never crosses the hour
MINUTE_TOL = 1
ANGLE_TOL_DEG = 2.0
RIM_PX = 8.0
SAMPLE_TRIES = 64


@dataclass(frozen=True)
class Scene:
    level: int                 # difficulty, 1..3
    hour: int                  # 1..12
    minute: int                # 0..59
    second: int                # 0..59; always 0 unless second_hand
    second_hand: bool          # a second hand is drawn (level 3)
    numeral_style: str         # one of STYLES: arabic, roman, ticks (hour marks only, a triangle at 12)
    minute_ticks: bool         # 60 minute ticks on the rim (levels 1-2)
    radius_px: float           # dial radius, 300..340 px
    center: tuple[float, float]  # dial centre, px, within 384 +- (360 - radius - rim)
    hour_hand_frac: float      # hour-hand length / radius: 0.5 (L1-L2), 0.60..0.68 (L3, closer to the minute hand)
    face_tint: int             # index into FACE_TINTS (nuisance)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Target first: the hour (uniform 1..12) and the quarter hour (uniform 0..3, so Q2 is 50/50) are drawn, then
    minutes (and seconds at L3) inside that quarter until every margin passes. Uniform time also spreads Q4
    uniformly over 0..180 deg, because the hands' relative angle advances at a constant rate."""
    if level not in (1, 2, 3):
        raise ValueError(f"clock_reading: level must be 1, 2 or 3, got {level!r}")
    hour = int(rng.integers(1, 13))
    quarter = int(rng.integers(4))
    style = "arabic" if level == 1 else STYLES[int(rng.integers(2 if level == 2 else 3))]
    radius = round(float(rng.uniform(300.0, 340.0)), 1)
    slack = 384.0 - SAFE_BORDER_PX - radius - RIM_PX
    center = tuple(round(384.0 + float(rng.uniform(-slack, slack)), 1) for _ in range(2))
    hour_frac = 0.5 if level < 3 else round(float(rng.uniform(0.60, 0.68)), 3)
    tint = int(rng.integers(len(FACE_TINTS)))
    for _ in range(SAMPLE_TRIES):
        minute = 15 * quarter + int(rng.integers(15))
        second = int(rng.integers(60)) if level == 3 else 0
        scene = Scene(level, hour, minute, second, level == 3, style, level < 3, radius, center, hour_frac, tint)
        if not ladder(scene).failing_margins():
            return scene
    raise Reject("no_time_in_target")


# --- pure helpers shared by answers and drawing -----------------------------------------------------------------

def seconds_past_twelve(scene: Scene) -> int:
    """Time on the 12-hour dial in whole seconds, 0..43199."""
    return 3600 * (scene.hour % 12) + 60 * scene.minute + scene.second


def minutes_into_hour(scene: Scene) -> float:
    return scene.minute + scene.second / 60


def hand_angles(scene: Scene) -> tuple[float, float, float]:
    """(hour, minute, second) hand angles in degrees clockwise from 12, each in [0, 360)."""
    hour = 30 * (scene.hour % 12) + 0.5 * scene.minute + scene.second / 120
    return (hour % 360, (6 * scene.minute + 0.1 * scene.second) % 360, (6.0 * scene.second) % 360)


def mirrored(scene: Scene) -> Scene:
    """The clock reflected left to right: every hand angle a -> 360 - a, i.e. time T -> (12 h - T) mod 12 h."""
    t = (HALF_DAY_S - seconds_past_twelve(scene)) % HALF_DAY_S
    return replace(scene, hour=t // 3600 or 12, minute=(t % 3600) // 60, second=t % 60)


def _minute_answer(minute: int) -> Number:
    return Number(minute, MINUTE_TOL, "minutes", decimals=0, low=0, high=59)


def _hour_mark_gap_deg(scene: Scene) -> float:
    """Degrees from the hour hand to the last mark it passed, or to the point `APPROACH_DEG` short of the next one,
    whichever is nearer (module docstring); never below 0 for a time the rollover margin accepts."""
    into = minutes_into_hour(scene)
    return max(0.0, min(0.5 * into, 0.5 * (60 - into) - APPROACH_DEG))


def _rollover_gap(scene: Scene) -> float:
    """Minutes from the read minute to the nearer of 0 and 59; >= 1 keeps its +-1 window inside the hour. This also
    rejects the mirror's fixed points (12:00:00 and 6:00:00), so the Q5 edit is never a no-op."""
    return float(min(scene.minute, 59 - scene.minute))


# --- answers ------------------------------------------------------------------------------------------------------

def hour_passed(scene: Scene) -> Count:
    return Count(scene.hour, low=1, high=12)


def half_hour_side(scene: Scene) -> Choice:
    value = "before half past" if minutes_into_hour(scene) < 30 else "after half past"
    return Choice(value, ("before half past", "after half past"),
                  aliases=(("before", "before half past"), ("after", "after half past")))


def time_shown(scene: Scene) -> Record:
    """The time read to the minute (seconds dropped): the answer of Q3 and, on the mirrored scene, of Q5."""
    return Record((("hour", Count(scene.hour, low=1, high=12)), ("minute", _minute_answer(scene.minute))))


def hand_gap_deg(scene: Scene) -> float:
    """The smaller angle between the hour and minute hands, 0..180 deg."""
    hour, minute, _ = hand_angles(scene)
    a = abs(hour - minute) % 360
    return min(a, 360 - a)


def minutes_to_overlap(scene: Scene) -> float:
    """Minutes until the hands next coincide: overlaps fall at 43200 k / 11 s; exact in units of 1/11 s."""
    t11 = 11 * seconds_past_twelve(scene)
    k = t11 // HALF_DAY_S + 1
    return (HALF_DAY_S * k - t11) / 660


def hand_angle(scene: Scene) -> Number:
    return Number(hand_gap_deg(scene), ANGLE_TOL_DEG, "degrees", decimals=1, low=0.0, high=180.0)


def overlap_wait(scene: Scene) -> Record:
    return Record((("minutes", Number(minutes_to_overlap(scene), MINUTE_TOL, "minutes", decimals=1, low=0.0,
                                      high=OVERLAP_PERIOD_MIN)),))


def reflex_angle(scene: Scene) -> Number:
    return Number(360.0 - hand_gap_deg(scene), ANGLE_TOL_DEG, "degrees", decimals=1, low=180.0, high=360.0)


def edit(scene: Scene) -> Scene:
    """Q5's edit: the mirrored clock."""
    return mirrored(scene)


def counterfactual(scene: Scene) -> Record:
    return time_shown(scene)


_SECOND_HAND_NOTE = {False: "", True: " The thin second hand is not one of the two: measure the hour and minute "
                                       "hands where they are drawn."}


def _q4_margin(scene: Scene) -> Margin:
    return Margin(hand_gap_deg(scene), "deg", HAND_GAP_DEG, "hour and minute hands coincide")


def ladder(scene: Scene) -> Ladder:
    into = minutes_into_hour(scene)
    wait = minutes_to_overlap(scene)
    seconds = " Ignore the seconds." if scene.second_hand else ""
    q1 = Question(1, "hour_passed", "Which hour has the clock's hour hand most recently passed? Give it as a number "
                  "from 1 to 12.", hour_passed(scene),
                  Margin(_hour_mark_gap_deg(scene), "deg", HOUR_MARK_GAP_DEG[scene.level],
                         "hour hand on an hour mark, or one minute short of the next (the hour changes)"))
    q2 = Question(2, "half_hour_side", "Is the time shown on the clock before or after half past the hour?",
                  half_hour_side(scene),
                  Margin(abs(into - 30), "min", HALF_PAST_GAP_MIN, "minute hand on the 6 (exactly half past)"))
    q3 = Question(3, "time_shown", "What time does the clock show, to the minute? Give the hour (1 to 12) and the "
                  "minutes past the hour (0 to 59)." + seconds, time_shown(scene),
                  Margin(_rollover_gap(scene), "min", ROLLOVER_GAP_MIN, "minute +-1 window crosses the hour"))
    q4 = Question(4, "hand_angle", "What is the smaller angle between the hour hand and the minute hand?"
                  + _SECOND_HAND_NOTE[scene.second_hand], hand_angle(scene), _q4_margin(scene))
    mirror = edit(scene)
    q5 = Question(5, "mirrored_time", "Suppose this clock were seen in a mirror, reflected left to right (12 stays at "
                  "the top). What time would the mirror image appear to show, to the minute? Give the hour (1 to 12) "
                  "and the minutes past the hour (0 to 59)." + seconds, counterfactual(mirror),
                  Margin(_rollover_gap(mirror), "min", ROLLOVER_GAP_MIN,
                         "mirrored minute +-1 window crosses the hour"),
                  edit="reflect the clock left to right (each hand turns to the other side of the 12-6 line)")
    open_q = Question(6, "overlap_wait", "Explain how many minutes it will be, from the time shown, until the hour "
                      "hand and the minute hand next point in exactly the same direction.", overlap_wait(scene),
                      Margin(min(wait, OVERLAP_PERIOD_MIN - wait), "min", HAND_GAP_DEG / RELATIVE_SPEED_DEG_PER_MIN,
                             "hands coincide now (next overlap jumps by a full lap)"))
    return Ladder((q1, q2, q3, q4, q5), open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked for the other side: the reflex angle, 360 deg minus Q4's answer (complement)."""
    return Question(4, "reflex_hand_angle", "What is the larger (reflex) angle between the hour hand and the minute "
                    "hand, measured the long way round?" + _SECOND_HAND_NOTE[scene.second_hand], reflex_angle(scene),
                    _q4_margin(scene))


MINIMAL_STEP_MIN = 5                   # the sheet's minimal pair: the minute hand 5 min on, the hour hand 2.5 deg


def minimal_pair(scene: Scene) -> Scene:
    """The clock 5 minutes later (the minute hand 30 deg on, the hour hand 2.5 deg), or else 5 minutes earlier:
    the first that keeps the hour (Q1), moves Q4 by at least three tolerances (27.5 deg unless the smaller angle
    folds at 0 or 180) and passes every margin."""
    q4 = hand_angle(scene)
    for step in (MINIMAL_STEP_MIN, -MINIMAL_STEP_MIN):
        minute = scene.minute + step
        if not 0 <= minute <= 59:
            continue
        twin = replace(scene, minute=minute)
        if q4.difference(hand_gap_deg(twin)) >= 3 * ANGLE_TOL_DEG and not ladder(twin).failing_margins():
            return twin
    raise Reject("no_minimal_pair")


# --- drawing --------------------------------------------------------------------------------------------------------

def _polar(scene: Scene, angle_deg: float, r: float) -> tuple[float, float]:
    a = math.radians(angle_deg)
    return (scene.center[0] + r * math.sin(a), scene.center[1] - r * math.cos(a))


def _hand(canvas: Canvas, scene: Scene, angle_deg: float, length: float, width: float, colour, owner: str) -> None:
    """A tapered hand with a pointed tip and a short tail, so its direction reads unambiguously."""
    a = math.radians(angle_deg)
    d, n = np.array([math.sin(a), -math.cos(a)]), np.array([math.cos(a), math.sin(a)])
    c = np.asarray(scene.center)
    tail, shoulder = c - d * 0.12 * length, c + d * (length - 1.6 * width)
    pts = [tail + n * width / 2, shoulder + n * width * 0.35, c + d * length, shoulder - n * width * 0.35,
           tail - n * width / 2]
    polygon(canvas, pts, Style(stroke=colour, fill=colour, width_px=2.0), owner=owner)


def _ticks(canvas: Canvas, scene: Scene, ticks, width_px: float) -> None:
    """Radial ticks (angle_deg, r_outer, r_inner, sideways_px) as one cairo path: 60 separate toolkit lines
    (each buffered by shapely for label collisions, which this domain has none of) cost more than the PNG encode."""
    ctx, (cx, cy) = canvas.ctx, scene.center
    for angle, r0, r1, dx in ticks:
        a = math.radians(angle)
        sin, cos = math.sin(a), math.cos(a)           # `_polar` at both ends, one sin and cos
        ctx.move_to(*canvas.px(cx + r0 * sin + dx, cy - r0 * cos))
        ctx.line_to(*canvas.px(cx + r1 * sin + dx, cy - r1 * cos))
    ctx.set_source_rgb(*BLACK)
    ctx.set_line_width(width_px)
    ctx.set_line_cap(1)
    ctx.stroke()


def draw(scene: Scene, canvas: Canvas) -> None:
    c, r = scene.center, scene.radius_px
    outer = np.array([[c[0] - r - RIM_PX, c[1] - r - RIM_PX], [c[0] + r + RIM_PX, c[1] + r + RIM_PX]])
    if not canvas.inside_safe(canvas.pts_px(outer)):
        raise Reject("outside_safe_area")
    circle(canvas, c, r, Style(stroke=GREY_DARK, fill=FACE_TINTS[scene.face_tint], width_px=2 * RIM_PX), "rim")
    plain = scene.numeral_style != "ticks"
    if scene.minute_ticks:
        _ticks(canvas, scene, [(6 * k, r - RIM_PX, 0.95 * r - RIM_PX, 0.0) for k in range(60)], 2.0)
    # Without numerals the quarters are long bars and 12 a filled triangle pointing at the centre, so the
    # orientation is never in doubt (two bars at 12 read as the numeral "II").
    inner = [0.92 * r if plain else (0.88 * r if k % 3 else 0.82 * r) for k in range(12)]
    hours = [(30 * k, r - RIM_PX, inner[k], 0.0) for k in range(12) if plain or k]
    if not plain:
        top = r - RIM_PX - 2.0
        polygon(canvas, [_polar(scene, -4.5, top), _polar(scene, 4.5, top), _polar(scene, 0.0, 0.80 * r)],
                Style(stroke=BLACK, fill=BLACK, width_px=2.0), owner="twelve")
    _ticks(canvas, scene, hours, 6.0 if plain else 8.0)
    if plain:
        font = Style(stroke=None, font_px=round((0.13 if scene.numeral_style == "arabic" else 0.10) * r),
                     bold=True)
        for k in range(12):
            text = str(k or 12) if scene.numeral_style == "arabic" else ROMAN[k]
            draw_text(canvas, text, _polar(scene, 30 * k, 0.74 * r), font, register=False)
    hour, minute, second = hand_angles(scene)
    _hand(canvas, scene, hour, scene.hour_hand_frac * r, 12.0, BLACK, "hour_hand")
    _hand(canvas, scene, minute, 0.9 * r, 7.0, BLACK, "minute_hand")
    if scene.second_hand:
        red = OKABE_ITO["vermillion"]
        line(canvas, _polar(scene, second + 180, 0.18 * r), _polar(scene, second, 0.93 * r),
             Style(stroke=red, width_px=2.5), owner="second_hand")
        circle(canvas, c, 9.0, Style(stroke=None, fill=red), "second_hand")
    circle(canvas, c, 5.0 if scene.second_hand else 10.0, Style(stroke=None, fill=GREY_DARK), "hub")


DOMAIN = Domain(
    id="clock_reading", family="physical", title="Clock Reading", scene=Scene, sample=sample, ladder=ladder,
    draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="complement", version=3,
    description="An analogue clock: read the hour, the half hour, the exact time and the angle between the hands, "
                "then the time its mirror image would show.",
    balance_keys=("hour_passed", "half_hour_side", "hand_angle"),
)
