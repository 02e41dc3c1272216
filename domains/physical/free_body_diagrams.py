"""Free-body diagrams: a top view of a puck on frictionless ice at the centre of a 16x16 grid of 40 px squares
(1 square = 1 N), with K forces F1..FK drawn as arrows from the puck's centre. The ladder walks count -> largest
force -> net components -> direction of the acceleration -> direction once F2 is reversed, and the open question
asks for the size of the net force. Q2 offers F1..F5 whatever K is, so that its options do not tell Q1's answer.

Levels 1-2 give every force as integer components (its tip lies on a grid point; level 1: K = 3 forces along the
axes, level 2: K = 4-5, at least two oblique). Level 3 gives each force as printed magnitude and angle (counter-
clockwise from the rightward direction), so the tips lie off the grid and the components need trigonometry; the
component answers then carry a tolerance. The net force is N = sum of the forces; the puck accelerates along N,
read as one of eight 45 deg sectors centred on right, up-right, ..., or "none" iff N = (0, 0).

Ambiguity boundaries: N within `SECTOR_GAP_DEG` of a sector boundary (22.5 + 45 k deg), or 0 < |N| < `NET_MIN_N`
(Q4 and, on the edited scene, Q5); the two largest magnitudes within `LARGEST_GAP_N` (Q2); two arrows closer in
direction than `ARROW_GAP_DEG` (Q1) or shorter than two squares (Q3). "none" is only produced exactly: integer
components at levels 1-2, and at level 3 forces along six directions 60 deg apart whose magnitudes satisfy the two
integer equations of a closed hexagonal-lattice polygon.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import shapely
from shapely.geometry import LineString

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY_DARK, GREY_LIGHT, LABEL, OKABE_ITO, TEXT, Style
from grip.renderers.text import draw_text_px, text_size

SQUARE_PX = 40                    # 1 square = 1 N
CENTRE_PX = 384.0                 # the puck's centre = the grid's centre point
GRID_LO, GRID_HI = 64, 704        # 16 squares each way
COMPONENT_MAX_N = 6               # |f_x|, |f_y| <= 6 N: tips stay 2 squares inside the grid
FORCE_MIN_N = 2.0                 # arrows at least two squares long
ARROW_GAP_DEG = 10.0              # pairwise angle between arrows
SECTOR_GAP_DEG = 5.0              # net direction to the nearest sector boundary
NET_MIN_N = 2.0                   # |N| = 0 exactly or >= 2 N
LARGEST_GAP_N = 0.5               # largest minus second-largest magnitude
COMPONENT_TOL_N = 0.2             # level 3: components computed from printed magnitude/angle
MAGNITUDE_TOL_N = 0.1             # open question
HEX_DECOY = 0.5                   # level 3: share of other targets also built on six directions 60 deg apart,
                                  # so that such a layout does not give "none" away
P_NONE = 0.18                     # levels 2-3 ("none" cannot occur at level 1): 12% over the default level mix
TRIES = 600
DIRECTIONS = ("right", "up-right", "up", "up-left", "left", "down-left", "down", "down-right")
NONE = "none"
K_MAX = 5                         # the most forces any level draws
LARGEST_OPTIONS = tuple(f"F{i + 1}" for i in range(K_MAX))
OPTIONS = DIRECTIONS + (NONE,)
ALIASES = tuple((f"{a} {b}", f"{a}-{b}") for a in ("up", "down") for b in ("right", "left")) + tuple(
    (f"{b}-{a}", f"{a}-{b}") for a in ("up", "down") for b in ("right", "left")) + (
    ("upper right", "up-right"), ("upper left", "up-left"), ("lower right", "down-right"),
    ("lower left", "down-left"), ("upward", "up"), ("downward", "down"), ("rightward", "right"),
    ("leftward", "left"), ("no direction", NONE), ("stays at rest", NONE), ("at rest", NONE), ("zero", NONE))
ARROW_COLOURS = tuple(OKABE_ITO[k] for k in ("blue", "vermillion", "green", "purple", "orange", "black"))
ARROW_PX, HEAD_PX = 4.0, 18.0
PUCK_PX = 16.0
CAPTION = "1 square = 1 N; forces act at the puck's centre"
CAPTION_L3 = "Each force: size in N, angle counterclockwise from the rightward direction"


@dataclass(frozen=True)
class Scene:
    level: int                                    # 1..3
    grid_forces: tuple[tuple[int, int], ...]      # levels 1-2: (f_x, f_y) N per force, F1 first; ints in [-6, 6]
    polar_forces: tuple[tuple[float, int], ...]   # level 3: (magnitude N in 0.5 steps, angle deg ccw from right,
                                                  # a multiple of 5), F1 first; empty below level 3
    hues: tuple[int, ...]                         # per force, index into ARROW_COLOURS (nuisance, distinct)


# --- vectors (pure) ----------------------------------------------------------------------------------------------

def vectors(scene: Scene) -> list[tuple[float, float]]:
    """(f_x, f_y) in N, right and up positive, F1 first."""
    return _vectors(scene.polar_forces) if scene.polar_forces else _vectors(scene.grid_forces, polar=False)


def _vectors(forces, polar: bool = True) -> list[tuple[float, float]]:
    if polar:
        return [(m * math.cos(math.radians(a)), m * math.sin(math.radians(a))) for m, a in forces]
    return [(float(x), float(y)) for x, y in forces]


def force_labels(scene: Scene) -> tuple[str, ...]:
    return tuple(f"F{i + 1}" for i in range(len(scene.hues)))


def net(scene: Scene) -> tuple[float, float]:
    """N = sum of the forces. Exact for integer components; at level 3 rounded to 1e-9 N so that a polygon closed
    exactly by construction gives exactly (0, 0)."""
    v = vectors(scene)
    nx, ny = sum(x for x, _ in v), sum(y for _, y in v)
    if scene.polar_forces:
        nx, ny = round(nx, 9) + 0.0, round(ny, 9) + 0.0
    return nx, ny


def angle_deg(v: tuple[float, float]) -> float:
    return math.degrees(math.atan2(v[1], v[0])) % 360.0


def direction(v: tuple[float, float]) -> str:
    """The 45 deg sector of v (sectors centred on right, up-right, ...); "none" iff v = (0, 0)."""
    if v == (0.0, 0.0):
        return NONE
    return DIRECTIONS[int(((angle_deg(v) + 22.5) % 360.0) // 45.0) % 8]


def direction_margin_deg(v: tuple[float, float]) -> float:
    """Degrees to the nearest sector boundary; 22.5 (the most there is) for an exact zero, 0 when 0 < |v| < 2 N."""
    mag = math.hypot(*v)
    if mag == 0:
        return 22.5
    if mag < NET_MIN_N:
        return 0.0
    d = (angle_deg(v) - 22.5) % 45.0
    return min(d, 45.0 - d)


def magnitudes(scene: Scene) -> list[float]:
    return [math.hypot(*v) for v in vectors(scene)]


def min_pair_angle_deg(scene: Scene) -> float:
    a = [angle_deg(v) for v in vectors(scene)]
    gaps = [min(abs(x - y) % 360, 360 - abs(x - y) % 360) for i, x in enumerate(a) for y in a[i + 1:]]
    return float(min(gaps))


def largest_gap_n(scene: Scene) -> float:
    m = sorted(magnitudes(scene))
    return m[-1] - m[-2]


# --- answers -----------------------------------------------------------------------------------------------------

def force_count(scene: Scene) -> Count:
    return Count(len(scene.hues), low=1, high=8)


def largest_force(scene: Scene) -> Choice:
    """One option list for every scene, F1..F5 (the most forces any level draws): listing only the labels drawn
    would tell Q1's answer."""
    return Choice(force_labels(scene)[int(np.argmax(magnitudes(scene)))], LARGEST_OPTIONS,
                  aliases=tuple((f"force {lb[1:]}", lb) for lb in LARGEST_OPTIONS))


def net_components(scene: Scene) -> Record:
    nx, ny = net(scene)
    if scene.polar_forces:
        comp = [Number(round(c, 2) + 0.0, COMPONENT_TOL_N, "N", decimals=2) for c in (nx, ny)]
    else:
        comp = [Count(int(c), low=-40, high=40) for c in (nx, ny)]
    return Record((("x", comp[0]), ("y", comp[1])))


def acceleration_direction(scene: Scene) -> Choice:
    return Choice(direction(net(scene)), OPTIONS, ALIASES)


def net_magnitude(scene: Scene) -> Record:
    return Record((("magnitude", Number(round(math.hypot(*net(scene)), 2), MAGNITUDE_TOL_N, "N", decimals=2,
                                        low=0.0)),))


def edit(scene: Scene) -> Scene:
    """Reverse F2: same size, opposite direction."""
    if scene.polar_forces:
        m, a = scene.polar_forces[1]
        return replace(scene, polar_forces=scene.polar_forces[:1] + ((m, (a + 180) % 360),) + scene.polar_forces[2:])
    x, y = scene.grid_forces[1]
    return replace(scene, grid_forces=scene.grid_forces[:1] + ((-x, -y),) + scene.grid_forces[2:])


counterfactual = acceleration_direction


# Stated in every direction question: how an angle is binned into the eight answer directions.
SECTOR_RULE = (" Each direction covers the 45° sector centred on it: 'right' is from 22.5° below to 22.5° above the "
               "rightward direction, 'up-right' from 22.5° to 67.5° above it, and so on round the circle.")


# --- ladder ------------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)   # sample's accepted scene, then the builder's ladder of it
def ladder(scene: Scene) -> Ladder:
    edited = edit(scene)
    n, n_edit = net(scene), net(edited)
    mag = math.hypot(*n)
    sector = "net force within 5 deg of a sector boundary, or 0 < |N| < 2 N"
    rungs = (
        Question(1, "force_count", "How many forces act on the puck?", force_count(scene),
                 Margin(min_pair_angle_deg(scene), "deg", ARROW_GAP_DEG, "two arrows too close in direction")),
        Question(2, "largest_force", "Which force has the largest magnitude?", largest_force(scene),
                 Margin(largest_gap_n(scene), "N", LARGEST_GAP_N, "two largest forces equally large")),
        Question(3, "net_components", "What are the horizontal and vertical components of the net force, in N "
                 "(right and up positive)?", net_components(scene),
                 Margin(min(magnitudes(scene)), "N", FORCE_MIN_N, "an arrow shorter than two squares")),
        Question(4, "acceleration_direction", "The puck starts at rest. In which direction does the puck start to "
                 "accelerate? Answer 'none' if it stays at rest." + SECTOR_RULE, acceleration_direction(scene),
                 Margin(direction_margin_deg(n), "deg", SECTOR_GAP_DEG, sector)),
        Question(5, "direction_f2_reversed", "The puck starts at rest. If F2 were reversed (same size, opposite "
                 "direction), in which direction would the puck accelerate? Answer 'none' if it would stay at rest."
                 + SECTOR_RULE,
                 counterfactual(edited), Margin(direction_margin_deg(n_edit), "deg", SECTOR_GAP_DEG,
                                                     sector + ", with F2 reversed"),
                 edit="reverse F2 (same size, opposite direction)"),
    )
    open_q = Question(6, "net_magnitude", "Explain how you combine the forces, and give the magnitude of the net "
                      "force on the puck, in N.", net_magnitude(scene),
                      Margin(mag if mag > 0 else NET_MIN_N, "N", NET_MIN_N, "net force nonzero but under 2 N"))
    return Ladder(rungs, open_q)


# --- sampling ----------------------------------------------------------------------------------------------------

def _in_sector(k: int, lim: int) -> list[tuple[int, int]]:
    return [(x, y) for x in range(-lim, lim + 1) for y in range(-lim, lim + 1)
            if direction((float(x), float(y))) == DIRECTIONS[k] and direction_margin_deg((x, y)) >= SECTOR_GAP_DEG]


NET_TARGETS = tuple(tuple(_in_sector(k, 10)) for k in range(8))   # integer nets per sector, margins met
# Hexagonal lattice: direction k (60 k deg past a base angle) in the basis (1, w), w = e^(i 60 deg).
HEX = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))


def _grid_force(rng: np.random.Generator, oblique: bool) -> tuple[int, int]:
    while True:
        x, y = rng.integers(-COMPONENT_MAX_N, COMPONENT_MAX_N + 1, 2).tolist()
        if x * x + y * y >= FORCE_MIN_N ** 2 and (not oblique or (x and y)):
            return x, y


def _grid_candidate(rng: np.random.Generator, draws: Draws, level: int, k: int, target: str) -> list | None:
    if level == 1:    # three of the four axis directions, 2..6 N each
        axes = [(1, 0), (0, 1), (-1, 0), (0, -1)]
        del axes[draws.integers(4)]
        return [(ux * m, uy * m) for (ux, uy), m in zip(axes, (int(v) for v in rng.integers(2, 7, 3)))]
    goal = (0, 0) if target == NONE else draws.pick(NET_TARGETS[DIRECTIONS.index(target)])
    rest = [_grid_force(rng, oblique=i < 2) for i in range(k - 1)]
    last = (goal[0] - sum(x for x, _ in rest), goal[1] - sum(y for _, y in rest))
    if max(map(abs, last)) > COMPONENT_MAX_N or math.hypot(*last) < FORCE_MIN_N:
        return None
    return rest + [last]


def _polar_ok(m: float, a: int) -> bool:
    c = (m * math.cos(math.radians(a)), m * math.sin(math.radians(a)))
    return FORCE_MIN_N <= m and max(map(abs, c)) <= COMPONENT_MAX_N + 1e-9


def _hex_forces(draws: Draws, k: int, closed: bool) -> list:
    """k forces along k of six directions 60 deg apart. `closed`: two magnitudes are solved from the others so
    that the polygon closes exactly (in the lattice basis the two conditions are integer equations with a
    determinant of +-1, so the solution is again a multiple of 0.5 N)."""
    base = 5 * draws.integers(12)
    dirs = draws.permutation(6)[:k]
    half = {d: draws.integers(4, 13) for d in dirs}               # magnitudes in half newtons, 2.0..6.0 N
    if closed:
        i, j = next((a, b) for a in dirs for b in dirs if (a - b) % 3)   # two non-parallel directions
        rx = -sum(half[d] * HEX[d][0] for d in dirs if d not in (i, j))
        ry = -sum(half[d] * HEX[d][1] for d in dirs if d not in (i, j))
        (px, py), (qx, qy) = HEX[i], HEX[j]
        det = px * qy - py * qx
        half[i], half[j] = (rx * qy - ry * qx) // det, (px * ry - py * rx) // det
    return [(half[d] / 2, (base + 60 * d) % 360) for d in dirs]


def _polar_candidate(draws: Draws, k: int, target: str, hexed: bool) -> list | None:
    if hexed:
        forces = _hex_forces(draws, k, closed=target == NONE)
    else:   # k - 1 free forces; the last one aims the net near the middle of the target sector
        forces = [(0.5 * draws.integers(4, 13), 5 * draws.integers(72)) for _ in range(k - 1)]
        c = (DIRECTIONS.index(target) * 45 + draws.uniform(-17.5, 17.5)) % 360
        r = draws.uniform(2.5, 8.0)
        sx = sum(m * math.cos(math.radians(a)) for m, a in forces)
        sy = sum(m * math.sin(math.radians(a)) for m, a in forces)
        lx, ly = r * math.cos(math.radians(c)) - sx, r * math.sin(math.radians(c)) - sy
        forces.append((round(2 * math.hypot(lx, ly)) / 2, 5 * round(angle_deg((lx, ly)) / 5) % 360))
    return forces if all(_polar_ok(m, a) for m, a in forces) else None


def _make(draws: Draws, level: int, forces: list) -> Scene | None:
    """Letters and colours: F2 is drawn from the forces whose reversal keeps Q5's margin, the rest shuffled."""
    k = len(forces)
    v = _vectors(forces, polar=level == 3)
    nx, ny = sum(x for x, _ in v), sum(y for _, y in v)
    # A pre-filter only (closed form of the edit); the ladder re-checks Q5 on edit(scene) itself.
    ok = [j for j in range(k) if direction_margin_deg((nx - 2 * v[j][0], ny - 2 * v[j][1])) >= SECTOR_GAP_DEG]
    if not ok:
        return None
    two = draws.pick(ok)
    others = [forces[i] for i in draws.permutation(k) if i != two]
    order = tuple(others[:1] + [forces[two]] + others[1:])
    hues = tuple(draws.permutation(len(ARROW_COLOURS))[:k])
    return Scene(level, () if level == 3 else order, order if level == 3 else (), hues)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Target first: Q4's direction (8 directions uniform, "none" P_NONE at levels 2-3), then forces built for it."""
    if level not in (1, 2, 3):
        raise ValueError(f"free_body_diagrams: level must be 1, 2 or 3, got {level!r}")
    draws = Draws(rng)   # the Generator's own scalar draws, cheaper
    target = NONE if level > 1 and draws.random() < P_NONE else DIRECTIONS[draws.integers(8)]
    # K: 3 at level 1, 4-5 at levels 2-3, so that no count passes 35% over the default level mix. Drawn once, so
    # that the harder five-force layouts are not crowded out by retries.
    k = 3 if level == 1 else draws.integers(4, K_MAX + 1)
    hexed = target == NONE or (level == 3 and draws.random() < HEX_DECOY)
    for _ in range(TRIES):
        forces = (_polar_candidate(draws, k, target, hexed) if level == 3 else
                  _grid_candidate(rng, draws, level, k, target))
        if forces is None:
            continue
        scene = _make(draws, level, forces)
        if scene is None or direction(net(scene)) != target:
            continue
        # Q2's and Q1's margins turn most candidates down: checked before building the ladder, which checks them too
        if largest_gap_n(scene) < LARGEST_GAP_N or min_pair_angle_deg(scene) < ARROW_GAP_DEG:
            continue
        if not ladder(scene).failing_margins():
            return scene
    raise Reject("no_scene_for_target")


# --- minimal pair and rephrased Q4 ------------------------------------------------------------------------------

def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked about the cause: the net force points the way the puck accelerates (identity). The sheet's balancing
    force maps a direction to its opposite, which none of the four rephrase maps expresses, so this asks for the
    net force's own direction, with Q4's options."""
    n = net(scene)
    return Question(4, "net_force_direction", "Taken together, in which direction does the net force on the puck "
                    "point? Answer 'none' if the forces cancel." + SECTOR_RULE,
                    Choice(direction(n), OPTIONS, ALIASES),
                    Margin(direction_margin_deg(n), "deg", SECTOR_GAP_DEG, "net force on a sector boundary"))


def _moves(scene: Scene) -> list[tuple[int, tuple]]:
    """Single-force edits, smallest tip displacement first. Levels 1-2 move a tip to another grid point: one square
    is the sheet's step, but with N at least 5 deg inside its sector on both sides a one-square move rarely carries
    N into the next sector (or to zero from at least 2 N), so moves go up to 3 squares each way. Level 3 changes
    one printed magnitude (0.5 N steps) or angle (5 deg steps), by up to 3 N or 30 deg."""
    out = [(math.hypot(dx, dy), i, (x + dx, y + dy)) for i, (x, y) in enumerate(scene.grid_forces)
           for dx in range(-3, 4) for dy in range(-3, 4) if (dx, dy) != (0, 0)]
    for i, (m, a) in enumerate(scene.polar_forces):
        for k in (*range(-6, 0), *range(1, 7)):
            out += [(0.5 * abs(k), i, (m + 0.5 * k, a)), (2 * m * math.sin(math.radians(2.5 * abs(k))), i,
                                                           (m, (a + 5 * k) % 360))]
    return [(i, f) for _, i, f in sorted(out, key=lambda t: (round(t[0], 9), t[1], t[2]))]


def _level_ok(scene: Scene) -> bool:
    """The sampler's level rules on a hand-edited scene: level 1 along the axes, level 2 two oblique forces or more,
    level 3 the printed-value grid; every force >= 2 N with components within 6 N."""
    if scene.polar_forces:
        return all(_polar_ok(m, a) for m, a in scene.polar_forces)
    oblique = sum(1 for x, y in scene.grid_forces if x and y)
    return (oblique == 0 if scene.level == 1 else oblique >= 2) and all(
        max(map(abs, f)) <= COMPONENT_MAX_N and math.hypot(*f) >= FORCE_MIN_N for f in scene.grid_forces)


def minimal_pair(scene: Scene) -> Scene:
    """The sheet's minimal pair: move one force's tip by the smallest step that carries N across a sector
    boundary (or to zero) with the level's rules and every margin, Q5's included, still passing, and the picture
    still drawable."""
    q4 = direction(net(scene))
    field = "polar_forces" if scene.polar_forces else "grid_forces"
    for i, f in _moves(scene):
        forces = getattr(scene, field)
        twin = replace(scene, **{field: forces[:i] + (f,) + forces[i + 1:]})
        if direction(net(twin)) == q4 or not _level_ok(twin) or ladder(twin).failing_margins():
            continue
        try:
            draw(twin, Canvas(768))
        except Reject:
            continue
        return twin
    raise Reject("no_minimal_pair")


# --- drawing -----------------------------------------------------------------------------------------------------

def tip_px(v: tuple[float, float]) -> tuple[float, float]:
    return CENTRE_PX + SQUARE_PX * v[0], CENTRE_PX - SQUARE_PX * v[1]


def _caption_centres(canvas: Canvas, level: int) -> list[tuple[str, tuple[float, float]]]:
    out = [(CAPTION, (CENTRE_PX, 44.0))]
    if level == 3:
        out.append((CAPTION_L3, (CENTRE_PX, 724.0)))
    return out


@functools.lru_cache(maxsize=8)
def _backdrop(size_px: int, world: tuple[float, ...], level: int):
    """Faint grid (centre lines darker, for counting squares from the puck) and captions: drawn once per process."""
    canvas = Canvas(size_px, world)
    ticks = [GRID_LO + SQUARE_PX * k for k in range(17)]
    segs = [((t, GRID_LO), (t, GRID_HI)) for t in ticks if t != CENTRE_PX] + \
           [((GRID_LO, t), (GRID_HI, t)) for t in ticks if t != CENTRE_PX]
    shapes.segments(canvas, segs, Style(stroke=(0.84, 0.84, 0.84), width_px=2.0), register=False)
    shapes.segments(canvas, [((CENTRE_PX, GRID_LO), (CENTRE_PX, GRID_HI)), ((GRID_LO, CENTRE_PX),
                             (GRID_HI, CENTRE_PX))], Style(stroke=(0.62, 0.62, 0.62), width_px=2.0), register=False)
    for text, c in _caption_centres(canvas, level):
        draw_text_px(canvas, text, c, TEXT)
    canvas.surface.flush()
    return canvas.surface


def _label_text(scene: Scene, i: int) -> str | None:
    if not scene.polar_forces:
        return None
    m, a = scene.polar_forces[i]
    return f"{m:.1f} N, {a}°"


# b.buffer(pad) (16 chords a quarter circle) holds every point within pad * cos(pi / 64) of b and none farther than
# pad: a distance outside that band tells whether the buffer meets a stroke without building it (slack 1e-6 px).
_CHORD = math.cos(math.pi / 64)


def _buffer_meets(b, pad: float, g) -> bool:
    """`b.buffer(pad).intersects(g)`, with the buffer built only when the distance cannot tell."""
    dist = b.distance(g)
    if dist > pad + 1e-6:
        return False
    if dist < pad * _CHORD - 1e-6:
        return True
    return b.buffer(pad).intersects(g)


def _place_label(canvas: Canvas, name: str, value: str | None, tip, d, owner: str, taken: list, strokes: list) -> None:
    """Label block (letter, and at level 3 the printed size and angle under it) beyond the arrow's tip, turning
    away from the arrow's own line step by step; the first spot clear of every label and stroke wins. `taken`
    holds the bounds of every label so far (all axis-aligned boxes, so two meet iff their closed intervals
    overlap), and gets this one's; `strokes` is (owner, outline, its bounds) per stroke."""
    small = TEXT.with_(font_px=15.0)
    wl, hl = text_size(canvas, name, LABEL)
    wv, hv = text_size(canvas, value, small) if value else (0.0, 0.0)
    w, h = max(wl, wv), hl + hv
    base = math.atan2(d[1], d[0])
    # Strokes keep 4 px from the block (its own arrow) or 8 px (any other).
    padded = [(4.0 if own == owner else 8.0, g, gb) for own, g, gb in strokes]
    for r in (8.0, 18.0, 30.0):
        for turn in (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150, 180):
            t = base + math.radians(turn)
            ux, uy = math.cos(t), math.sin(t)
            reach = r + (w * abs(ux) + h * abs(uy)) / 2
            cx, cy = tip[0] + ux * reach, tip[1] + uy * reach
            x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
            if not canvas.box_inside_safe(x0, y0, x1, y1):
                continue
            if any(x0 <= o[2] and o[0] <= x1 and y0 <= o[3] and o[1] <= y1 for o in taken):
                continue
            # A stroke whose bounds lie farther than its pad (and a pixel) cannot meet the buffered block.
            b = shapely.box(x0, y0, x1, y1)
            if any(gb[0] <= x1 + pad + 1 and x0 - pad - 1 <= gb[2] and gb[1] <= y1 + pad + 1
                   and y0 - pad - 1 <= gb[3] and _buffer_meets(b, pad, g) for pad, g, gb in padded):
                continue
            draw_text_px(canvas, name, (cx, cy - h / 2 + hl / 2), LABEL)
            if value:
                draw_text_px(canvas, value, (cx, cy + h / 2 - hv / 2), small)
            canvas.labels.append(b)
            taken.append((x0, y0, x1, y1))
            return
    raise Reject("label_clash")


@functools.lru_cache(maxsize=1)
def _centre_lines():
    """The grid's two centre lines as 2 px strokes (immutable geometries, shared by every canvas)."""
    return tuple(LineString([a, b]).buffer(1.0) for a, b in (((CENTRE_PX, GRID_LO), (CENTRE_PX, GRID_HI)),
                                                             ((GRID_LO, CENTRE_PX), (GRID_HI, CENTRE_PX))))


def draw(scene: Scene, canvas: Canvas) -> None:
    with canvas.layer() as ctx:
        ctx.set_source_surface(_backdrop(canvas.size_px, tuple(canvas.world), scene.level), 0, 0)
        ctx.paint()
    taken = []
    for text, c in _caption_centres(canvas, scene.level):
        w, h = text_size(canvas, text, TEXT)
        taken.append((c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2))
        canvas.labels.append(shapely.box(*taken[-1]))
    # The two centre lines of the grid are drawn with the cached backdrop; registered here so that no label (a
    # level-3 "3.0 N" especially, whose decimal point a line through it would hide) sits on them.
    for g in _centre_lines():
        canvas.register_stroke(g, "axes")
    centre = (CENTRE_PX, CENTRE_PX)
    shapes.circle(canvas, centre, PUCK_PX, Style(stroke=GREY_DARK, fill=GREY_LIGHT, width_px=3.0), owner="puck")
    labels, vecs = force_labels(scene), vectors(scene)
    tips = [tip_px(v) for v in vecs]
    if not canvas.inside_safe(np.array(tips), SAFE_BORDER_PX + 40):
        raise Reject("arrow_clipped")
    for lb, tip, hue in zip(labels, tips, scene.hues):
        shapes.arrow(canvas, centre, tip, Style(stroke=ARROW_COLOURS[hue], width_px=ARROW_PX), HEAD_PX, owner=lb)
    shapes.circle(canvas, centre, 4.0, Style(stroke=None, fill=BLACK), owner="puck")
    # Labels add no strokes: the outlines' bounds are taken once, in one call.
    owners, outlines = zip(*canvas.strokes)
    strokes = list(zip(owners, outlines, shapely.bounds(np.array(outlines, dtype=object)).tolist()))
    for i, (lb, tip) in enumerate(zip(labels, tips)):
        _place_label(canvas, lb, _label_text(scene, i), tip, (tip[0] - CENTRE_PX, tip[1] - CENTRE_PX), lb, taken,
                     strokes)


DOMAIN = Domain(
    id="free_body_diagrams", family="physical", title="Free-body diagrams",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=3,
    description="Forces drawn from the centre of a puck on frictionless ice over a 1 N grid: count them, find the "
                "largest, add them, give the direction of the acceleration, and again with F2 reversed.",
    balance_keys=("force_count", "largest_force", "acceleration_direction", "direction_f2_reversed"),
    # Q2 always lists F1..F5 but only the K drawn can be the answer: the 1/K + 0.10 rule averaged over K = 3, 4, 5.
    balance_caps=(("largest_force", round(sum(1 / k + 0.10 for k in (3, 4, 5)) / 3, 2)),),
)
