"""Projectile motion: a strobe picture of a ball in flight (side view, g = 9.8 m/s^2, no air resistance), one dot
every dt seconds from the launch (dot 0) to dot k, and a brick wall further along. The path after the last dot is
not drawn. The ladder walks dots -> highest dot -> horizontal speed -> wall outcome -> changed launch speed, and
the open question asks for the maximum height.

Outcome rule (the sheet's): the ball is its centre path inflated by r = 0.15 m. With s the distance from the
launch along the direction of flight and x_L where the centre comes down to y = r, the ball "lands before wall"
iff x_L + r < near face; otherwise it "clears wall" iff y(s) - r > H_w for every s over the wall span widened by r,
else it "hits wall". Ambiguity boundaries: the leading edge at landing within `LAND_GAP_M` of the wall face, and
the ball's bottom within `TOP_GAP_M` of the wall-top level anywhere over the widened span (so a "hit" is a clean
face hit and a "clear" a clean pass). Q5 launches the ball at another speed (same angle and point); at every s a
slower path is lower and a faster one higher, so a slower launch can only move the outcome down the order
lands < hits < clears and a faster one only up.

Q5's speed change: the sheet asks for half the speed, but the wall stands beyond the last drawn dot, and at levels 1-2
half the speed never reached such a wall (0 of ~7,800 sampled flights; 7% at level 3), so Q5 would be a constant.
The factor is therefore part of the scene, printed in Q5 and drawn by the sampler so that Q5's target is reachable:
one of `SLOWER` (half speed among them) or `FASTER`. A ball that lands short is always launched faster and one that
clears always slower (otherwise Q5 would copy Q4 without any reasoning); a ball that hits goes either way.

The world is the sheet's grid of 1 m squares at 34 px/m, 0-20 m wide (the sheet's 21 m does not fit 768 px with a
24 px border and axis numbers; the wall ends by 19.3 m anyway) and 0-12 m high. The ball flies right from x = 0 or,
mirrored, left from the far side. Level 3 (version 2) has no grid, only scale bars, so nothing ties it to 34 px/m:
its view is 15 m wide at 45 px/m and fills the safe area (version 1 left its top half empty); its walls stand by 14 m.

Dot counts (a decision the sheet leaves two ways: "k in 4..10" and "L3: 4 dots"): the sheet's per-level lines are
followed, L1 8-10, L2 5-7 and L3 4 dots, i.e. 4..10 dots in all, so its "k in 4..10" is read as the number of dots
(k + 1 here, with dots numbered 0..k). L3 is hard through its missing grid and raised launch, not through more dots.

Minimal pair: the wall top raised or lowered by the least multiple of 0.1 m (within 1-9 m) that moves the outcome
between "hits" and "clears" with every margin holding. No wall height changes "lands before", so there (beyond the
sheet) the wall moves nearer by the least multiple of 0.1 m that makes the ball meet it, still clear of the last
dot. The Q4 rephrase asks what the ball first touches, on Q4's own options (map: identity).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import shapely

from grip.renderers import shapes
from grip.renderers.canvas import Canvas, LazyGeometry
from grip.renderers.style import GREY, GREY_DARK, GREY_PALE, LABEL, OKABE_ITO, TEXT, THIN, Style, tint
from grip.renderers.text import draw_text, draw_text_px, text_size

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws

G = 9.8                     # m/s^2
R_BALL = 0.15               # ball radius, m
WALL_T = 0.3                # wall thickness, m
VIEW_W = {1: 20.0, 2: 20.0, 3: 15.0}    # m, per level
VIEW_H = 12.0                           # m
PX_PER_M = {1: 34.0, 2: 34.0, 3: 45.0}  # the sheet's grid scale; level 3 (scale bars only) fills the safe area
LAND_GAP_M = 0.5            # Q4/Q5: |x_L + r - wall face| at least this
TOP_GAP_M = 0.4             # Q4/Q5: |y(s) - r - H_w| at least this over the widened wall span
TOP_DOT_GAP_M = 0.2         # Q2: highest dot above the second highest
DOT_GAP_PX = 14.0           # Q1: any two dots' centres
SPAN_MIN_PX = 4 * 34.0      # Q3: horizontal span of the dots, so 5% of it is >= 6.8 px of reading error
RISE_MIN_PX = 34.0          # open: vertical spread of the dots (the vertical motion must be readable)
WALL_CLEAR_M = 0.5          # last dot's leading edge to the wall face (drawn dots never touch the wall)
DTS = (0.2, 0.25, 0.3)
SLOWER = (0.5, 0.6, 0.7, 0.8, 0.9)      # Q5: launch speed as a fraction of v0 (stated in Q5)
FASTER = (1.2, 1.3, 1.4, 1.5)
STEPS = {1: (7, 9), 2: (4, 6), 3: (3, 3)}            # k: dots 0..k, i.e. L1 8-10, L2 5-7, L3 4 dots
LAUNCH_Y = {1: (0.15, 2.0), 2: (0.15, 4.0), 3: (2.0, 4.0)}
CLOSE_WALL_M = 3.0          # L1 "wall close": wall face within this of the last dot's leading edge
OUTCOMES = ("lands before wall", "hits wall", "clears wall")
LANDS, HITS, CLEARS = OUTCOMES
# Q5 target given Q4 and the direction of the speed change (lands, hits, clears): Q5 differs from Q4 in about two
# items of three (the sheet asks >= 50%) and Q5 comes out near uniform (about 30/38/32%).
Q5_GIVEN_Q4 = {(LANDS, "faster"): (0.3, 0.35, 0.35), (HITS, "faster"): (0.0, 0.4, 0.6),
               (HITS, "slower"): (0.6, 0.4, 0.0), (CLEARS, "slower"): (0.3, 0.4, 0.3)}
ALIASES = (("lands before the wall", LANDS), ("land before wall", LANDS), ("lands before", LANDS),
           ("hits the wall", HITS), ("hit wall", HITS), ("hit the wall", HITS), ("hits", HITS),
           ("clears the wall", CLEARS), ("clear wall", CLEARS), ("passes over the wall", CLEARS),
           ("passes over", CLEARS), ("clears", CLEARS))
TRIES, RELAX_TOP, RELAX_Q5 = 600, 200, 400   # sampler: flights per call; targets dropped after these
# Q2's target, the highest dot: L3 (dots 0-3) 1/2/3 at 20/40/40%; L2 uniform over 2..k; L1 uniform over the
# indices a flight of k steps can have inside the view with a close wall (measured). Without a target the apex
# piles up on one or two indices (dot 4 took 37% of a 600-item build).
L1_TOPS = {7: (4, 5, 6, 7), 8: (4, 5, 6), 9: (5, 6)}
# drawing
TOP_PX = {1: 180.0, 2: 180.0, 3: 104.0}            # y = 12 m
GROUND_PX = {lv: TOP_PX[lv] + VIEW_H * PX_PER_M[lv] for lv in TOP_PX}   # y = 0: 588 px, 644 px at level 3
GRID_LEFT_PX = {1: {1: 34.0, -1: 54.0}, 2: {1: 34.0, -1: 54.0}, 3: {1: 34.0, -1: 59.0}}   # x = 0, per facing
CAPTION_Y = {1: (110.0, 136.0), 2: (110.0, 136.0), 3: (40.0, 64.0)}
DOT_R_PX = {1: 5.5, 2: 5.5, 3: 7.0}
BALL = Style(stroke=(0, 0, 0), fill=OKABE_ITO["blue"], width_px=2.0)
GRID = Style(stroke=(0.85, 0.85, 0.85), width_px=1.0)
BRICK = Style(stroke=(0, 0, 0), fill=tint(OKABE_ITO["vermillion"], 0.35), width_px=3.0)
SMALL = TEXT.with_(font_px=14.0)
DOT_LABEL = LABEL.with_(font_px=18.0)


@dataclass(frozen=True)
class Scene:
    level: int              # 1..3
    facing: int             # +1: flies to the right, -1: to the left
    launch_x_m: float       # x of the launch point (0 when facing right, 20 when facing left)
    launch_y_m: float       # height of the ball's centre at launch, 0.15..4 m
    speed_mps: float        # launch speed v0, 8..16 m/s (0.1 steps)
    angle_deg: float        # launch angle above the horizontal, 20..70 (whole degrees)
    dt_s: float             # strobe interval, one of DTS
    steps: int              # k: dots 0..k are drawn
    wall_x_m: float         # x of the wall's left face (world), wall spans [wall_x, wall_x + 0.3]
    wall_h_m: float         # wall height, 1..9 m (0.1 steps)
    speed_factor: float     # Q5's edit: launch at this multiple of the speed, one of SLOWER or FASTER


# --- flight (pure) ------------------------------------------------------------------------------------------------

def velocity(scene: Scene) -> tuple[float, float]:
    return _velocity(scene.speed_mps, scene.angle_deg)


def _velocity(speed: float, angle_deg: float) -> tuple[float, float]:
    a = math.radians(angle_deg)
    return speed * math.cos(a), speed * math.sin(a)


def height_at(scene: Scene, s: float) -> float:
    """Centre height when the ball is s metres along its direction of flight from the launch point."""
    vx, vy = velocity(scene)
    t = s / vx
    return scene.launch_y_m + vy * t - G * t * t / 2


def dots(scene: Scene) -> list[tuple[float, float]]:
    """(x, y) of the ball's centre at t = i dt, i = 0..k, in world metres."""
    vx, vy = velocity(scene)
    return _dots_of(scene.launch_x_m, scene.launch_y_m, vx, vy, scene.facing, scene.dt_s, scene.steps)


def _dots_of(x0: float, y0: float, vx: float, vy: float, facing: int, dt: float,
             steps: int) -> list[tuple[float, float]]:
    out = []
    for i in range(steps + 1):
        t = i * dt
        out.append((x0 + facing * vx * t, y0 + vy * t - G * t * t / 2))
    return out


def landing_s(scene: Scene) -> float:
    """Distance along the flight where the centre comes down to y = r (the ball touches the ground)."""
    return _landing_s(scene.speed_mps, scene.angle_deg, scene.launch_y_m)


def _landing_s(speed: float, angle_deg: float, launch_y: float) -> float:
    vx, vy = _velocity(speed, angle_deg)
    t = (vy + math.sqrt(vy * vy + 2 * G * (launch_y - R_BALL))) / G
    return vx * t


def wall_span_s(scene: Scene) -> tuple[float, float]:
    """Near and far faces of the wall, as distances along the flight from the launch point."""
    a = scene.facing * (scene.wall_x_m - scene.launch_x_m)
    b = scene.facing * (scene.wall_x_m + WALL_T - scene.launch_x_m)
    return min(a, b), max(a, b)


def _clearance_over_wall(scene: Scene) -> tuple[float, float]:
    """(min, max) of y(s) - r - H_w over the wall span widened by r: min > 0 means the ball passes over."""
    near, far = wall_span_s(scene)
    a, b = near - R_BALL, far + R_BALL
    vx, vy = velocity(scene)
    apex = vx * vy / G
    pts = [a, b] + ([apex] if a < apex < b else [])
    f = [height_at(scene, s) - R_BALL - scene.wall_h_m for s in pts]
    return min(f), max(f)


def outcome_of(scene: Scene) -> str:
    near, _ = wall_span_s(scene)
    if landing_s(scene) + R_BALL < near:
        return LANDS
    return CLEARS if _clearance_over_wall(scene)[0] > 0 else HITS


def outcome_margin(scene: Scene) -> Margin:
    """The nearer (relative to its threshold) of the two outcome boundaries: the leading edge at landing against
    the wall face (m), and the ball's bottom against the wall-top level over the widened span (m; zero where the
    two cross inside the span). A scene in "lands before" has only the first."""
    near, _ = wall_span_s(scene)
    land = abs(landing_s(scene) + R_BALL - near)
    land_m = Margin(land, "m", LAND_GAP_M, "ball's leading edge at landing reaches the wall face")
    if landing_s(scene) + R_BALL < near:
        return land_m
    lo, hi = _clearance_over_wall(scene)
    top = 0.0 if lo < 0 < hi else min(abs(lo), abs(hi))
    top_m = Margin(top, "m", TOP_GAP_M, "ball's bottom level with the wall top over the wall")
    return top_m if top / TOP_GAP_M < land / LAND_GAP_M else land_m


def max_height_m(scene: Scene) -> float:
    _, vy = velocity(scene)
    return scene.launch_y_m + vy * vy / (2 * G)


# --- sampling -----------------------------------------------------------------------------------------------------

def _interval_from(d: Draws, lo: float, hi: float, step: float = 0.1) -> float | None:
    """A multiple of `step` drawn uniformly inside [lo, hi], or None if there is none."""
    a, b = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    if a > b:
        return None
    return round(d.integers(a, b + 1) * step, 10)


def _height_range(scene: Scene, near: float, target: str | None) -> tuple[float, float]:
    """Wall heights for which `scene` (with its wall face at `near`) has outcome `target` with the top margin."""
    probe = replace(scene, wall_x_m=scene.launch_x_m + scene.facing * near - (WALL_T if scene.facing < 0 else 0.0),
                    wall_h_m=0.0)
    lo, hi = _clearance_over_wall(probe)   # with H = 0: the ball bottom's min and max height over the span
    if target == CLEARS:
        return -math.inf, lo - TOP_GAP_M
    if target == HITS:
        return hi + TOP_GAP_M, math.inf
    return -math.inf, math.inf


def _top_target(rng: np.random.Generator, d: Draws, level: int, steps: int) -> int:
    if level == 3:
        return int(rng.choice(3, p=(0.2, 0.4, 0.4))) + 1
    tops = L1_TOPS[steps] if level == 1 else tuple(range(2, steps + 1))
    return tops[d.integers(len(tops))]


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first: Q4 uniform over the three outcomes, the direction of Q5's speed change (faster after
    "lands", slower after "clears", either after "hits"), Q5 from `Q5_GIVEN_Q4`, Q2 from `_top_target`; then a
    flight whose apex falls at the target dot and whose drawn dots fit the view and pass the dot margins, a
    speed factor, and a wall face and height chosen inside the intervals that give both outcomes with their
    margins. Where a target is unreachable it is dropped (Q2 after `RELAX_TOP` flights, Q5 after `RELAX_Q5`)."""
    if level not in STEPS:
        raise ValueError(f"projectile_motion: level must be 1, 2 or 3, got {level!r}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    q4 = OUTCOMES[d.integers(3)]
    way = {LANDS: "faster", CLEARS: "slower"}.get(q4) or ("faster" if d.random() < 0.5 else "slower")
    q5: str | None = OUTCOMES[int(rng.choice(3, p=Q5_GIVEN_Q4[(q4, way)]))]
    factors = FASTER if way == "faster" else SLOWER
    steps = d.integers(STEPS[level][0], STEPS[level][1] + 1)
    top: int | None = _top_target(rng, d, level, steps)
    facing = 1 if d.random() < 0.5 else -1
    launch_x = 0.0 if facing > 0 else VIEW_W[level]
    for attempt in range(TRIES):
        if attempt == RELAX_Q5:
            q5 = None
        if attempt == RELAX_TOP:
            top = None
        dt = DTS[d.integers(3)]
        angle = d.integers(20, 71)
        # the apex time vy / g picks the highest dot: within half a step of dot `top`, or after dot k - 1/2
        lo, hi = 8.0, 16.0
        if top is not None:
            sin = math.sin(math.radians(angle))
            lo = max(lo, G * dt * (top - 0.5) / sin)
            if top < steps:
                hi = min(hi, G * dt * (top + 0.5) / sin)
        speed = _interval_from(d, lo, hi)
        if speed is None:
            continue
        launch_y = round(max(R_BALL, round(d.uniform(*LAUNCH_Y[level]) / 0.05) * 0.05), 2)
        # the flight's dots are checked before a Scene is built: most flights fail here (dots(scene) and
        # highest_dot(scene), computed the same way)
        a = math.radians(angle)
        pts = _dots_of(launch_x, launch_y, speed * math.cos(a), speed * math.sin(a), facing, dt, steps)
        if not _dots_ok(pts, level) or (top is not None and _highest(pts) != top):
            continue
        base = Scene(level=level, facing=facing, launch_x_m=launch_x,
                     launch_y_m=launch_y, speed_mps=speed, angle_deg=float(angle), dt_s=dt, steps=steps,
                     wall_x_m=10.0, wall_h_m=1.0,
                     speed_factor=factors[0])
        last_s = abs(pts[-1][0] - launch_x)
        edge = landing_s(base) + R_BALL
        order = list(factors)
        rng.shuffle(order)   # rng.permutation(factors)'s draws, on a list
        for factor in order:
            scene = _wall_for(d, base, factor, edge, last_s, q4, q5)
            if scene is not None:
                return scene
    raise Reject("no_flight_for_target")


def _wall_for(d: Draws, base: Scene, factor: float, edge: float, last_s: float, q4: str,
              q5: str | None) -> Scene | None:
    """A wall (face distance, then height, both on a 0.1 m grid) that gives `base` (at speed factor `factor`, its
    ball's leading edge at landing `edge` along the flight) outcome q4 and its changed launch outcome q5, every
    margin passing; None if there is none."""
    lo, hi = max(6.0, last_s + R_BALL + WALL_CLEAR_M), min(19.0, VIEW_W[base.level] - 1.0)
    if base.level == 1:
        hi = min(hi, last_s + R_BALL + CLOSE_WALL_M)
    # the changed launch's landing from plain floats (edit's speed): most factors find no wall face, and need
    # no Scene
    slow_edge = _landing_s(round(base.speed_mps * factor, 2), base.angle_deg, base.launch_y_m) + R_BALL
    for e, target in ((edge, q4), (slow_edge, q5)):
        if target == LANDS:
            lo = max(lo, e + LAND_GAP_M)
        elif target is not None:
            hi = min(hi, e - LAND_GAP_M)
    near = _interval_from(d, lo, hi)
    if near is None:
        return None
    base = replace(base, speed_factor=factor)
    slow = edit(base)
    h_lo, h_hi = 1.0, 9.0
    for sc, target in ((base, q4), (slow, q5)):
        a, b = _height_range(sc, near, target)
        h_lo, h_hi = max(h_lo, a), min(h_hi, b)
    h = _interval_from(d, h_lo, h_hi)
    if h is None:
        return None
    wall_x = round(base.launch_x_m + base.facing * near - (WALL_T if base.facing < 0 else 0.0), 2)
    scene = replace(base, wall_x_m=wall_x, wall_h_m=h)
    if outcome_of(scene) != q4 or (q5 is not None and outcome_of(edit(scene)) != q5):
        return None   # rounding moved it across a boundary
    return None if ladder(scene).failing_margins() else scene


def _dots_ok(d: list[tuple[float, float]], level: int) -> bool:
    """Cheap checks on the drawn dots `d` (world m) before a wall is chosen: inside the view and off the ground, and
    the dot margins (Q1 spacing, Q2 top gap, Q3 span, open rise) all at or above their thresholds: the values of
    `_dot_margins`, computed in plain floats (the spacing from squared distances, with `_dot_margins` itself
    deciding pairs within 1e-9 of the threshold, where a square could round the other way than np.hypot)."""
    ys_m = [y for _, y in d]
    if min(ys_m) < R_BALL or max(ys_m) > VIEW_H - R_BALL - 0.2:
        return False
    if ys_m[-1] < R_BALL + 0.3:   # the last dot is still clearly in the air
        return False
    ppm = PX_PER_M[level]
    xs = [x * ppm for x, _ in d]
    ys = [y * ppm for y in ys_m]
    hi, second = sorted(ys, reverse=True)[:2]
    if (hi / ppm - second / ppm) / TOP_DOT_GAP_M < 1.0 or (max(xs) - min(xs)) / SPAN_MIN_PX < 1.0 \
            or (max(ys) - min(ys)) / RISE_MIN_PX < 1.0:
        return False
    gap2, near = DOT_GAP_PX * DOT_GAP_PX, False
    for i in range(len(d)):
        for j in range(i + 1, len(d)):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            sq = dx * dx + dy * dy
            if sq < gap2 * (1 - 1e-9):
                return False
            near = near or sq <= gap2 * (1 + 1e-9)
    return not near or _dot_margins_of(d, level)[0].value / DOT_GAP_PX >= 1.0


def _highest(d: list[tuple[float, float]]) -> int:
    """Index of the highest dot (the first of equals, as np.argmax)."""
    ys = [y for _, y in d]
    return ys.index(max(ys))


@functools.lru_cache(maxsize=16)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, 1)


def _dot_margins(scene: Scene) -> tuple[Margin, Margin, Margin, Margin]:
    return _dot_margins_of(dots(scene), scene.level)


def _dot_margins_of(dots_m: list[tuple[float, float]], level: int) -> tuple[Margin, Margin, Margin, Margin]:
    d = np.array(dots_m) * PX_PER_M[level]
    gaps = np.hypot(*(d[:, None, :] - d[None, :, :]).transpose(2, 0, 1))
    spacing = float(gaps[_pairs(len(d))].min())
    ys = np.sort(d[:, 1])[::-1] / PX_PER_M[level]
    return (Margin(spacing, "px", DOT_GAP_PX, "two dots too close to count apart"),
            Margin(float(ys[0] - ys[1]), "m", TOP_DOT_GAP_M, "two highest dots level"),
            Margin(float(np.ptp(d[:, 0])), "px", SPAN_MIN_PX, "dots' horizontal span too short to measure within 5%"),
            Margin(float(np.ptp(d[:, 1])), "px", RISE_MIN_PX, "dots' vertical spread too small to read"))


# --- answers ------------------------------------------------------------------------------------------------------

def position_count(scene: Scene) -> Count:
    return Count(scene.steps + 1, low=1)


def highest_dot(scene: Scene) -> Count:
    return Count(_highest(dots(scene)), low=0, high=scene.steps)


def horizontal_speed(scene: Scene) -> Number:
    return Number(round(velocity(scene)[0], 2), 0.05, "m/s", decimals=2, tol_kind="rel", low=0.0)


def wall_outcome(scene: Scene) -> Choice:
    return Choice(outcome_of(scene), OUTCOMES, aliases=ALIASES)


def edit(scene: Scene) -> Scene:
    """Q5's edit: launch at `speed_factor` times the speed, same angle and launch point."""
    return replace(scene, speed_mps=round(scene.speed_mps * scene.speed_factor, 2))


def counterfactual(scene: Scene) -> Choice:
    return wall_outcome(scene)


def max_height(scene: Scene) -> Record:
    return Record((("height", Number(round(max_height_m(scene), 2), 0.05, "m", decimals=2, tol_kind="rel",
                                     low=0.0)),))


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked as "what does the ball first touch" (map: identity, on Q4's options)."""
    aliases = ALIASES + (("the ground before the wall", LANDS), ("ground before the wall", LANDS),
                         ("the wall", HITS), ("wall", HITS), ("the ground beyond the wall", CLEARS),
                         ("ground beyond the wall", CLEARS))
    return Question(4, "first_touch", _ball_text(scene) + f"After dot {scene.steps} the ball keeps flying, but its "
                    "path is not drawn. Where does the ball first touch something: the ground before the wall, the "
                    "wall, or the ground beyond the wall? Answer 'lands before wall' for the ground before the wall, "
                    "'hits wall' for the wall and 'clears wall' for the ground beyond it.",
                    Choice(outcome_of(scene), OUTCOMES, aliases=aliases), outcome_margin(scene))


def minimal_pair(scene: Scene) -> Scene:
    """Hits <-> clears: the wall top moved by the least multiple of 0.1 m; lands before: the wall moved nearer by the
    least multiple of 0.1 m. Every margin holds on the result, which must still draw inside the view."""
    q4, last_s = outcome_of(scene), abs(dots(scene)[-1][0] - scene.launch_x_m)
    for k in range(1, 81):
        if q4 == LANDS:
            x = round(scene.wall_x_m - scene.facing * 0.1 * k, 2)
            twins = [replace(scene, wall_x_m=x)]
        else:
            twins = [replace(scene, wall_h_m=round(scene.wall_h_m + sign * 0.1 * k, 1)) for sign in (1, -1)]
        for twin in twins:
            near = wall_span_s(twin)[0]
            if not (1.0 <= twin.wall_h_m <= 9.0 and near >= max(6.0, last_s + R_BALL + WALL_CLEAR_M)):
                continue
            if outcome_of(twin) != q4 and not ladder(twin).failing_margins():
                return twin
    raise Reject("no_minimal_pair")


def _ball_text(scene: Scene) -> str:
    return (f"The ball has radius {R_BALL:g} m and flies without air resistance (g = 9.8 m/s²); the dots show its "
            f"centre every {scene.dt_s:g} s, numbered from 0 at the launch. ")


@functools.lru_cache(maxsize=256)   # the sampler and the builder each ask for the accepted scene's ladder
def ladder(scene: Scene) -> Ladder:
    spacing, top_gap, span, rise = _dot_margins(scene)
    k = scene.steps
    ball = _ball_text(scene)
    q4_text = (ball + f"After dot {k} the ball keeps flying, but its path is not drawn. Does it land on the ground "
               "before reaching the wall, hit the wall, or pass over the wall?")
    changed = "half" if scene.speed_factor == 0.5 else f"{round(100 * scene.speed_factor)}%"
    q5_text = (ball + f"Suppose the ball had been launched at {changed} of its actual launch speed, at the same "
               "angle and from the same point (dot 0). Would it land on the ground before reaching the wall, hit the "
               "wall, or pass over the wall?")
    return Ladder(rungs=(
        Question(1, "position_count", "How many positions of the ball are shown as dots, including the launch "
                 "point?", position_count(scene), spacing),
        Question(2, "highest_dot", f"The dots are numbered 0 to {k}. Which numbered dot is the highest above the "
                 "ground?", highest_dot(scene), top_gap),
        Question(3, "horizontal_speed", f"One dot is drawn every {scene.dt_s:g} s. What is the ball's horizontal "
                 "speed?", horizontal_speed(scene), span),
        Question(4, "wall_outcome", q4_text, wall_outcome(scene), outcome_margin(scene)),
        Question(5, "changed_speed_outcome", q5_text, counterfactual(edit(scene)), outcome_margin(edit(scene)),
                 edit=f"launch speed times {scene.speed_factor:g} (same angle and launch point)"),
    ), open=Question(
        6, "max_height", ball + "Explain how high above the ground the ball's centre rises at the top of its "
        "flight (its maximum height), using the dots to find its launch velocity.", max_height(scene), rise))


# --- drawing ------------------------------------------------------------------------------------------------------

def to_px(level: int, facing: int, x: float, y: float) -> tuple[float, float]:
    return GRID_LEFT_PX[level][facing] + PX_PER_M[level] * x, GROUND_PX[level] - PX_PER_M[level] * y


@functools.lru_cache(maxsize=3 * 2 * len(DTS))
def _backdrop(size_px: int, level: int, facing: int, dt_s: float):
    """Grid (or, at level 3, scale bars), ground, axis numbers and the two caption lines: the same for every scene
    of one (level, facing, dt), so drawn once per process and painted as a copy (the haloed captions cost more than
    the rest of a picture). Returns the surface, the label boxes and the strokes (the faint grid excepted) that the
    dot labels must keep off, each with its bounds."""
    c = Canvas(size_px)
    with c.layer():   # the captions below are drawn in the state of a fresh canvas, as they once were on one
        x0, x1 = _draw_grid(c, level, facing)
    scale = "grid 1 m" if level < 3 else "scale bars 5 m"
    draw_text(c, f"g = 9.8 m/s²,  one dot every {dt_s:g} s,  {scale}", ((x0 + x1) / 2, CAPTION_Y[level][0]), TEXT)
    draw_text(c, f"ball radius {R_BALL:g} m", ((x0 + x1) / 2, CAPTION_Y[level][1]), TEXT)
    c.surface.flush()
    return (c.surface, tuple((b, b.bounds) for b in c.labels), tuple((g, g.bounds) for _, g in c.strokes))


def _draw_grid(c: Canvas, level: int, facing: int) -> tuple[float, float]:
    """The backdrop less its captions; returns the pixel x of 0 m and of the view's width."""
    ppm, ground, w = PX_PER_M[level], GROUND_PX[level], VIEW_W[level]
    x0, _ = to_px(level, facing, 0, 0)
    x1, _ = to_px(level, facing, w, 0)
    far_px = x1 + 16 if facing > 0 else x0 - 16   # axis numbers on the side away from the launch
    if level < 3:
        segs = [(to_px(level, facing, i, 0), to_px(level, facing, i, VIEW_H)) for i in range(int(w) + 1)]
        segs += [(to_px(level, facing, 0, j), to_px(level, facing, w, j)) for j in range(1, int(VIEW_H) + 1)]
        shapes.segments(c, segs, GRID, register=False)
        for i in range(int(w) + 1):
            draw_text(c, str(i), (to_px(level, facing, i, 0)[0], ground + 34), SMALL)
        for j in range(1, int(VIEW_H) + 1):
            draw_text(c, str(j), (far_px, to_px(level, facing, 0, j)[1]), SMALL)
        draw_text(c, "metres", ((x0 + x1) / 2, ground + 58), SMALL)
    else:   # level 3: a 5 m bar under the ground and a 5 m bar standing on it, away from the launch
        bx0 = (x0 + x1) / 2 - 2.5 * ppm
        by = ground + 40
        shapes.line(c, (bx0, by), (bx0 + 5 * ppm, by), THIN)
        for i in range(6):
            shapes.line(c, (bx0 + i * ppm, by - 8), (bx0 + i * ppm, by), THIN)
            draw_text(c, str(i), (bx0 + i * ppm, by + 14), SMALL)
        draw_text(c, "metres (scale bar)", (bx0 + 2.5 * ppm, by + 36), SMALL)
        vx = x1 + 8 if facing > 0 else x0 - 8
        shapes.line(c, (vx, ground), (vx, ground - 5 * ppm), THIN)
        for j in range(1, 6):
            ty = ground - j * ppm
            shapes.line(c, (vx, ty), (vx - 8 * facing, ty), THIN)
            draw_text(c, str(j), (vx + 12 * facing, ty), SMALL)
    shapes.rect(c, x0, ground, x1, ground + 16, Style(stroke=None, fill=GREY_PALE))
    shapes.hatch(c, x0, ground, x1, ground + 16, 10.0, Style(stroke=GREY, width_px=2.0))
    shapes.line(c, (x0, ground), (x1, ground), Style(stroke=GREY_DARK, width_px=3.0))
    return x0, x1


COMPASS = tuple((math.cos(math.radians(a)), -math.sin(math.radians(a))) for a in range(0, 360, 45))


def _meet(a, b) -> bool:
    """Whether two closed bounding boxes (x0, y0, x1, y1) share a point."""
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _label_dot(canvas: Canvas, text: str, center_px, normal, owner: str, labels: list, strokes: list) -> None:
    """Index next to its dot: first on either side of the path (normal to it), then the eight compass points; the
    first spot that overlaps no label, stays 8 px from every other stroke and lies in the safe area. `labels`
    holds the bounds of the canvas's labels, and grows with it: every label is an axis-aligned box, and two such
    boxes intersect exactly where their closed bounds meet. `strokes` holds (owner, outline, box): the box the
    outline's bounds, or for an outline not yet built (a `LazyGeometry`) a box holding it, its bounds then looked
    at only where that box meets. Shapely decides only where bounds meet: geometries whose bounds are apart never
    intersect."""
    w, h = text_size(canvas, text, DOT_LABEL)   # text_box_px's box, measured once for every spot
    lo, _, hi, _ = canvas.safe_box()
    for r in (21.0, 26.0, 32.0):
        for d in (normal, (-normal[0], -normal[1])) + COMPASS:
            c = (center_px[0] + d[0] * r, center_px[1] + d[1] * r)
            x0, y0, x1, y1 = bb = (c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2)
            if not (x0 >= lo and y0 >= lo and x1 <= hi and y1 <= hi):
                continue
            if any(x0 <= ob[2] and ob[0] <= x1 and y0 <= ob[3] and ob[1] <= y1 for ob in labels):   # _meet, inline
                continue
            b = shapely.box(*bb)
            # b.buffer(8.0) lies inside bb widened by 8 px (by 8.5, against rounding)
            wide = u0, v0, u1, v1 = (x0 - 8.5, y0 - 8.5, x1 + 8.5, y1 + 8.5)
            near = []
            for own, g, gb in strokes:
                if u0 <= gb[2] and gb[0] <= u1 and v0 <= gb[3] and gb[1] <= v1 and own != owner:
                    if isinstance(g, LazyGeometry):
                        g = g.geometry
                        if not _meet(wide, g.bounds):
                            continue
                    near.append(g)
            if near:
                grown = b.buffer(8.0)
                if any(grown.intersects(g) for g in near):
                    continue
            draw_text_px(canvas, text, c, DOT_LABEL)
            canvas.labels.append(b)
            labels.append(bb)
            return
    raise Reject("label_clash")


def draw(scene: Scene, canvas: Canvas) -> None:
    f, lv = scene.facing, scene.level
    ppm, ground = PX_PER_M[lv], GROUND_PX[lv]
    surface, boxes, strokes = _backdrop(canvas.size_px, lv, f, scene.dt_s)
    with canvas.layer() as ctx:
        ctx.set_source_surface(surface, 0, 0)
        ctx.paint()
    canvas.labels.extend(b for b, _ in boxes)
    canvas.strokes.extend(("backdrop", g) for g, _ in strokes)
    x0, _ = to_px(lv, f, 0, 0)
    x1, _ = to_px(lv, f, VIEW_W[lv], 0)
    # wall: bricks, outlined
    wx0, wy0 = to_px(lv, f, scene.wall_x_m, 0)
    wx1, wy1 = to_px(lv, f, scene.wall_x_m + WALL_T, scene.wall_h_m)
    if not (x0 <= wx0 and wx1 <= x1 and wy1 >= TOP_PX[lv]):
        raise Reject("wall_off_view")
    # the outlines drawn here, unbuilt, for the dot labels (the lazy ones in canvas.strokes, which builds them all)
    drawn = [("wall", shapes.rect(canvas, wx0, wy1, wx1, wy0, BRICK.with_(stroke=None), owner="wall"))]
    mortar = [((wx0, wy0 - k * 0.25 * ppm), (wx1, wy0 - k * 0.25 * ppm))
              for k in range(1, int(scene.wall_h_m / 0.25 + 1e-9) + 1) if k * 0.25 < scene.wall_h_m - 0.05]
    if mortar:
        shapes.segments(canvas, mortar, Style(stroke=(1, 1, 1), width_px=1.5), register=False)
    drawn.append(("wall", shapes.rect(canvas, wx0, wy1, wx1, wy0, BRICK.with_(fill=None), owner="wall")))
    # launch pillar under dot 0 when the launch is raised
    lx, _ = to_px(lv, f, scene.launch_x_m, scene.launch_y_m)
    top = scene.launch_y_m - R_BALL
    if top > 0.05:
        half = 0.2 * ppm
        drawn.append(("pillar", shapes.rect(canvas, lx - half, ground - top * ppm, lx + half, ground,
                                            Style(stroke=GREY_DARK, fill=(0.7, 0.7, 0.7), width_px=2.0),
                                            owner="pillar")))
    pts = [to_px(lv, f, x, y) for x, y in dots(scene)]
    for i, p in enumerate(pts):
        if not canvas.box_inside_safe(p[0] - 8, p[1] - 8, p[0] + 8, p[1] + 8) or p[1] < TOP_PX[lv]:
            raise Reject("dot_off_view")
        drawn.append((f"dot{i}", shapes.circle(canvas, p, DOT_R_PX[lv], BALL, owner=f"dot{i}")))
    labels = [bb for _, bb in boxes]
    strokes = [("backdrop", g, gb) for g, gb in strokes] + [(own, g, g.reach() or g.bounds) for own, g in drawn]
    vx, vy = velocity(scene)
    for i, p in enumerate(pts):
        t = i * scene.dt_s
        tx, ty = f * vx, -(vy - G * t)          # path direction in px (y down)
        n = math.hypot(tx, ty)
        normal = (ty / n, -tx / n) if f > 0 else (-ty / n, tx / n)   # the side above the path
        _label_dot(canvas, str(i), p, normal, f"dot{i}", labels, strokes)


DOMAIN = Domain(
    id="projectile_motion", family="physical", title="Projectile Motion", scene=Scene, sample=sample,
    ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual, minimal_pair=minimal_pair,
    rephrase_q4=rephrase_q4, rephrase_map="identity", version=3,
    description="A strobe picture of a ball in flight and a wall ahead: count the dots, find the highest, measure "
                "the horizontal speed, predict whether the ball lands short of, hits or clears the wall, and again "
                "at another launch speed.",
    balance_keys=("position_count", "wall_outcome", "changed_speed_outcome"),
)
