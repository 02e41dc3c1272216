"""Impossible objects: a closed loop of square bars along the x, y and z axes, drawn in true isometric (ISO, DOMAINS.md
0.8), numbered 1..n in travel order, with a tick at the middle of every unit of each bar's length. The ladder walks
bar count -> axis of bar 2 -> total ascent -> buildable? -> gap left when bar r is removed; the open question asks
for the loop's net displacement along x, y and z. The removed bar r is drawn uniformly from 1..4 whatever n is (every
loop has at least 4 bars), so Q5's words carry no information about the bar count (naming bar n would give Q1 away).

Mechanism: ISO's kernel is (1, 1, 1). The drawing of steps d_1..d_n closes on screen iff sum d_i = k (1, 1, 1) for
an integer k, but the object closes in 3-D only for k = 0. Every joint is painted as the real corner of its two bars
lifted locally (`_bars`), so nothing at any one joint shows the trick. Impossibility is decided exactly on the
latent 3-D structure (`_lift`): a drawn bar fixes its 3-D step (six axis directions, six distinct images, unit steps
drawn one edge long) and leaves only its position along the kernel free; joints tie those positions together, and
the loop can be built iff its constraint cycle sums to zero, i.e. iff sum d_i = 0. A cyclic over/under order of
bars is never used as evidence (0.9): non-adjacent bars never overlap on screen (>= 10 px apart), and `_lift`
accepts three sticks that cross cyclically when a real arrangement exists.
Ambiguity boundaries: an impossible loop misses closing by |k| >= 2 units per axis (>= 1 at level 3); a possible
loop's prisms keep >= 0.5 unit apart (no self-intersection), and so do the bars of an impossible one other than bar r
(the open chain Q5 asks about), whose free-end gap differs from bar r's length by >= 0.5 unit. Legibility: ticks are
s >= 24 px apart (s = one unit on screen, at most 48 px) and cross the ridge between a bar's two visible side faces,
which the bar it joins never hides.
Q4 is asked as yes/no ("could it be built?") rather than possible/impossible so that the rephrasing "is this an
impossible object?" is its exact inversion over one option set.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product

import numpy as np

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.optical import _bars as bars
from grip.domains.optical import _lift
from grip.draws import Draws
from grip.renderers import projection as pj
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, LABEL, TEXT, Style
from grip.renderers.text import draw_text_px, text_size

YES, NO = "yes", "no"
BUILD_ALIASES = (("possible", YES), ("impossible", NO))
IMPOSSIBLE_ALIASES = (("impossible", YES), ("possible", NO))
AXES = ("x", "y", "z")
N_BARS = {1: (4, 6, 7), 2: (4, 6, 7, 8), 3: (6, 7, 8)}
K_MIN = {1: 2, 2: 2, 3: 1}             # |k| of an impossible loop: units by which it fails to close, per axis
K_MAX = 4
LENGTHS = (2, 3, 4, 5, 6)
CLEAR_3D = 0.5                          # units between prisms of bars that do not meet
CLEAR_2D_PX = 10.0                      # px between footprints of bars that do not meet
Q5_GAP = 0.5                            # units between Q5's answer and bar r's own length (impossible loops)
REMOVED = (1, 2, 3, 4)                  # Q5's removed bar r: the same choices for every n
S_MAX, S_MIN = 48.0, 24.0               # px per unit
CAPTION_H = 34.0
LABEL_ROOM = 40.0                       # px kept round the footprints for the bar numbers
LEGEND_W, LEGEND_H = 118.0, 112.0
LEGEND_CLEAR = 16.0
TICK_HALF_PX = 7.0
ARROW_PX = 34.0
LO, HI = float(SAFE_BORDER_PX), 768.0 - SAFE_BORDER_PX
TRIES = 400
CAPTION = "Tick marks split each bar into 1-unit pieces, counted between joint centres."


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3
    steps: tuple[tuple[int, int, int], ...]      # 3-D step of bar 1..n: +-L e_axis, L in 2..6, neighbours on other axes
    scale_px: float                              # s: px per unit, 24..48
    origin_px: tuple[float, float]               # pixel of the world origin (the start of bar 1)
    legend: int                                  # corner of the axis legend: 0 top-left .. 3 bottom-right
    removed: int = 1                             # Q5: bar r removed, r in REMOVED (never drawn)


# --- the latent structure (pure) ----------------------------------------------------------------------------------

def net_step(scene: Scene) -> tuple[int, int, int]:
    """sum d_i: k (1, 1, 1) for every scene, 0 for a loop that closes in 3-D."""
    return tuple(sum(d[a] for d in scene.steps) for a in range(3))


def miss_k(scene: Scene) -> int:
    return _lift.kernel_offset(net_step(scene), (0, 0, 0)).numerator


def buildable(scene: Scene) -> bool:
    """The exact test: some 3-D placement of the drawn bars meets every drawn joint (`_lift`)."""
    return _buildable(scene.steps)


@lru_cache(maxsize=64)
def _buildable(steps) -> bool:   # cached: the ladder and the rephrased Q4 both ask
    return _lift.realizable(*_lift.loop_drawing(steps))


def chain_without(steps, r: int) -> tuple[tuple[int, int, int], ...]:
    """The open chain left when bar r (1-based) is removed, in loop order from bar r + 1: bars r+1..n, then 1..r-1
    (bar n joined to bar 1 as drawn)."""
    return tuple(steps[r:]) + tuple(steps[:r - 1])


def clearance_3d(scene: Scene) -> float:
    """Prism clearance of the object that must be real: the whole loop if it closes, else the chain without bar r."""
    return bars.clearance_3d(scene.steps, closed=True) if miss_k(scene) == 0 else \
        bars.clearance_3d(chain_without(scene.steps, scene.removed), closed=False)


def footprints_px(scene: Scene):
    return bars.footprints(scene.steps, scene.scale_px, scene.origin_px)


def free_end_gap(scene: Scene) -> float:
    """3-D distance between the two ends of the (open) chain of bars in `scene`: |sum d_i|."""
    return math.sqrt(sum(v * v for v in net_step(scene)))


# --- sampling -----------------------------------------------------------------------------------------------------

def _combos() -> dict[tuple[int, int], list[tuple[int, ...]]]:
    """Signed lengths for m bars on one axis (m = 1..4) by their sum."""
    vals = [s * v for v in LENGTHS for s in (1, -1)]
    out: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    for m in range(1, 5):
        for c in product(vals, repeat=m):
            if abs(sum(c)) <= K_MAX:
                out.setdefault((m, sum(c)), []).append(c)
    return out


COMBOS = _combos()


def _axis_sequence(rng: np.random.Generator, d: Draws, n: int, possible: bool) -> list[int]:
    """`d`: `rng`'s own scalar draws, cheaper."""
    if n == 4:   # a flat frame (two axes), or one axis twice and a lone bar on each of the others
        a, b, c = d.permutation(3)
        seq = [a, b, a, b] if possible else [a, b, a, c]
        r = d.integers(4)
        return seq[r:] + seq[:r]
    while True:   # neighbours on different axes, the last bar too; every axis twice or more
        seq = [d.integers(3)]
        for step in rng.integers(1, 3, size=n - 1).tolist():
            seq.append((seq[-1] + step) % 3)
        if seq[-1] != seq[0] and min(seq.count(a) for a in range(3)) >= 2:
            return seq


def _steps(d: Draws, seq: list[int], k: int) -> tuple[tuple[int, int, int], ...]:
    vals = {}
    for a in range(3):
        m = seq.count(a)
        if m:
            opts = COMBOS[(m, k)]
            vals[a] = list(opts[d.integers(len(opts))])
    out = []
    for a in seq:
        step = [0, 0, 0]
        step[a] = vals[a].pop(0)
        out.append(tuple(step))
    return tuple(out)


def _permute(steps, perm) -> tuple[tuple[int, int, int], ...]:
    """Axis a of every step becomes axis perm[a] (k (1, 1, 1) and every clearance are unchanged)."""
    out = []
    for d in steps:
        e = [0, 0, 0]
        for a in range(3):
            e[perm[a]] = d[a]
        out.append(tuple(e))
    return tuple(out)


def legend_box(corner: int) -> tuple[float, float, float, float]:
    x0 = LO + 4 if corner % 2 == 0 else HI - 4 - LEGEND_W
    y0 = LO + CAPTION_H + 4 if corner < 2 else HI - 4 - LEGEND_H
    return (x0, y0, x0 + LEGEND_W, y0 + LEGEND_H)


def layout(steps) -> tuple[float, tuple[float, float], int] | None:
    """The largest s <= 48 px at which the footprints (with room for labels) fit below the caption and one corner
    stays free for the legend: (s, origin, corner), or None below 24 px."""
    unit = bars.footprints(steps)
    flat = unit.reshape(-1, 2)
    lo, hi = flat.min(axis=0), flat.max(axis=0)
    span = hi - lo
    room = (HI - LO - 2 * LABEL_ROOM, HI - LO - CAPTION_H - 2 * LABEL_ROOM)
    s = min(S_MAX, room[0] / span[0], room[1] / span[1])
    cx, cy = (LO + HI) / 2, (LO + CAPTION_H + HI) / 2
    n = len(unit)
    rects = np.array([[(x0, y0), (x1, y0), (x1, y1), (x0, y1)] for x0, y0, x1, y1 in map(legend_box, range(4))])
    while s >= S_MIN:
        origin = (cx - s * (lo[0] + hi[0]) / 2, cy - s * (lo[1] + hi[1]) / 2)
        polys = unit * s + np.asarray(origin)
        d = bars.poly_distance(np.tile(polys, (4, 1, 1)), np.repeat(rects, n, axis=0)).reshape(4, n).min(axis=1)
        free = np.nonzero(d >= LEGEND_CLEAR)[0]
        if len(free):
            return float(s), (float(origin[0]), float(origin[1])), int(free[0])
        s *= 0.93
    return None


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"impossible_objects: level must be 1..3, got {level}")
    # Targets first: n, the class (Q4), the sign and size of k, and bar 2's axis (Q2).
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    n = d.pick(N_BARS[level])
    possible = d.random() < 0.5
    k = 0 if possible else d.pick((1, -1)) * d.integers(K_MIN[level], K_MAX + 1)
    axis2 = d.integers(3)
    removed = d.pick(REMOVED)
    for _ in range(TRIES):
        seq = _axis_sequence(rng, d, n, possible)
        steps = _steps(d, seq, k)
        a2 = bars.axis_of(steps[1])
        perms = [p for p in ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2)) if p[a2] == axis2]
        steps = _permute(steps, perms[d.integers(len(perms))])
        cand = Scene(level, steps, S_MAX, (0.0, 0.0), 0, removed)
        if clearance_3d(cand) < CLEAR_3D:
            continue
        if k and abs(free_end_gap(edit(cand)) - abs(sum(steps[removed - 1]))) < Q5_GAP:
            continue
        if bars.centreline_distance(steps) < 2 * 0.3 * math.sqrt(3) + CLEAR_2D_PX / S_MAX:
            continue                                                 # footprints surely too close: cheap test first
        clear = bars.footprint_clearance(bars.footprints(steps))     # units: the px clearance is s times it
        if clear * S_MAX < CLEAR_2D_PX:
            continue
        fit = layout(steps)
        if fit is None or clear * fit[0] < CLEAR_2D_PX:
            continue
        scene = Scene(level, steps, *fit, removed)
        if number_layout(scene) is None:
            continue
        return scene
    raise Reject("no_layout")


# --- answers ------------------------------------------------------------------------------------------------------

def bar_count(scene: Scene) -> Count:
    return Count(len(scene.steps), low=1, high=12)


def axis_of_bar(scene: Scene, i: int) -> Choice:
    return Choice(AXES[bars.axis_of(scene.steps[i - 1])], AXES)


def total_ascent(scene: Scene) -> Count:
    return Count(sum(max(d[2], 0) for d in scene.steps), low=0, high=6 * 12)


def could_be_built(scene: Scene) -> Choice:
    return Choice(YES if buildable(scene) else NO, (YES, NO), BUILD_ALIASES)


def edit(scene: Scene) -> Scene:
    """Bar r removed; the other bars stay exactly where they are drawn (an open chain of n - 1 bars, listed from bar
    r + 1 on; never drawn)."""
    return replace(scene, steps=chain_without(scene.steps, scene.removed))


def gap_after_removal(scene: Scene) -> Number:
    """Q5 on the edited scene: the distance between the chain's free ends, |sum d_i| (every bar but r)."""
    return Number(round(free_end_gap(scene), 2), 0.05, "units", decimals=2, low=0.0)


counterfactual = gap_after_removal


def net_displacement(scene: Scene) -> Record:
    return Record(tuple((AXES[a], Count(v, low=-72, high=72)) for a, v in enumerate(net_step(scene))))


# --- ladder -------------------------------------------------------------------------------------------------------

def _q4_margin(scene: Scene) -> Margin:
    k = miss_k(scene)
    if k:
        return Margin(float(abs(k)), "units", float(K_MIN[scene.level]), "the loop closing in 3-D (k = 0)")
    return Margin(clearance_3d(scene), "units", CLEAR_3D, "two bars that do not meet touching in 3-D")


def _q5_margin(scene: Scene) -> Margin:
    value = clearance_3d(scene)
    if miss_k(scene):
        value = min(value, abs(free_end_gap(edit(scene)) - abs(sum(scene.steps[scene.removed - 1]))))
    return Margin(value, "units", Q5_GAP, "free-end gap equal to the removed bar's length, or remaining bars within "
                  "0.5 unit")


READING = ("A bar's length runs between the centres of its two end joints (where the bars' centre lines meet), "
           "and its tick marks split it into 1-unit pieces: a bar with 3 ticks is 4 units long. The bars are "
           "numbered in order around the loop; the arrow beside bar 1 shows the direction of travel. ")


def ladder(scene: Scene) -> Ladder:
    r, s = scene.removed, scene.scale_px
    clear = Margin(bars.footprint_clearance(footprints_px(scene)), "px", CLEAR_2D_PX,
                   "two bars that do not meet drawn close enough to look joined")
    ticks = Margin(s, "px", S_MIN, "tick marks closer than 24 px")
    rungs = (
        Question(1, "bar_count", "How many straight bars form the closed loop?", bar_count(scene), clear),
        Question(2, "axis_of_bar_2", "The legend shows the x, y and z axes. Which axis is bar 2 parallel to?",
                 axis_of_bar(scene, 2), Margin(abs(sum(scene.steps[1])) * s, "px", 2 * S_MIN,
                                                "bar 2 too short to show its direction")),
        Question(3, "total_ascent", READING + "Travel once around the loop in numbered order and add up the lengths "
                 "of the vertical (z) bars along which you travel upward. What is the total, in units?",
                 total_ascent(scene), ticks),
        Question(4, "could_be_built", "Could this object be built as a real 3-D object exactly as drawn: straight "
                 "square bars, each joined to the next at a corner as the drawing shows?", could_be_built(scene),
                 _q4_margin(scene)),
        Question(5, "gap_without_bar", READING + f"Suppose bar {r} were removed and every other bar stayed "
                 f"exactly where it is drawn. How far apart would the two free ends then be, in a straight line in "
                 f"3-D, measured between the centres of the two end joints?", counterfactual(edit(scene)),
                 _q5_margin(scene), edit=f"remove bar {r}"),
    )
    open_q = Question(6, "net_displacement", READING + "Explain what makes this object possible or impossible to "
                      "build, and give its net displacement: travelling once around the loop in numbered order, how "
                      "many units do you move along x, along y and along z in total (signed, + in the direction of "
                      "the legend's arrow)?", net_displacement(scene), ticks)
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 turned round (inversion): "impossible" is the answer "no, it could not be built"."""
    return Question(4, "is_impossible", "Is this an impossible object, one that could not be built in 3-D exactly "
                    "as drawn (straight square bars, each joined to the next at a corner as the drawing shows)?",
                    Choice(NO if buildable(scene) else YES, (YES, NO), IMPOSSIBLE_ALIASES), _q4_margin(scene))


def minimal_pair(scene: Scene) -> Scene:
    """Three bars, one per axis, lengthened or shortened by one signed amount D, each keeping its sign and a length
    in 2..6: a possible loop becomes impossible with D = +-1 (sum d = D (1, 1, 1)), an impossible one possible with
    D = -k. The drawing still closes and only the joints between the changed bars move. Validated at level 3 rules
    (|k| = 1 allowed) at the same scale and origin; the first valid choice in the order: smallest cyclic span of the
    three bars, then lowest indices, D = +1 before -1. No pair for n = 4 (an axis without bars, or a lone bar that
    would need length 0), nor when the first valid pair fails 0.7's pixel QA (changed pixels <= 5% of the canvas,
    their bounding box <= 25%)."""
    n, k = len(scene.steps), miss_k(scene)
    deltas = (1, -1) if k == 0 else (-k,)
    by_axis = [[i for i, d in enumerate(scene.steps) if d[a]] for a in range(3)]

    def span(t):
        t = sorted(t)
        return min((t[(r + 2) % 3] - t[r]) % n for r in range(3))

    for t in sorted(product(*by_axis), key=lambda t: (span(t), sorted(t))):
        for dl in deltas:
            new = list(scene.steps)
            for i in t:
                a = bars.axis_of(new[i])
                v = new[i][a] + dl
                if abs(v) not in LENGTHS or (v > 0) != (new[i][a] > 0):
                    break
                new[i] = tuple(v if b == a else 0 for b in range(3))
            else:
                twin = replace(scene, steps=tuple(new), level=3)
                drawn = _pair_drawing(twin)
                if drawn is None:
                    continue
                if not pixel_qa(_render(scene), drawn):
                    raise Reject("no_minimal_pair")
                return twin
    raise Reject("no_minimal_pair")


def _render(scene: Scene) -> np.ndarray:
    c = Canvas(768)
    draw(scene, c)
    return c.array()


def _pair_drawing(twin: Scene) -> np.ndarray | None:
    """The twin's picture when every margin and the layout hold at the original's scale and origin, else None."""
    if ladder(twin).failing_margins():
        return None
    try:
        return _render(twin)
    except Reject:
        return None


def pixel_qa(a: np.ndarray, b: np.ndarray) -> bool:
    """DOMAINS.md 0.7 on two renderings: they differ in <= 5% of the canvas, within a box <= 25% of it (QA only)."""
    changed = np.any(a != b, axis=2)
    ys, xs = np.nonzero(changed)
    if not len(xs):
        return False
    area = (xs.max() - xs.min() + 1) * (ys.max() - ys.min() + 1)
    return bool(changed.mean() <= 0.05 and area <= 0.25 * changed.size)


# --- drawing ------------------------------------------------------------------------------------------------------

LEGEND_ARROW = Style(stroke=BLACK, width_px=2.5)
LEGEND_LABEL = LABEL.with_(font_px=18.0)


@lru_cache(maxsize=None)
def _legend_spots(corner: int) -> tuple:
    """Per axis of the legend in this corner: (arrow tail, arrow tip, label centre), px."""
    x0, y0, x1, y1 = legend_box(corner)
    o = np.array([(x0 + x1) / 2, y0 + 62.0])
    out = []
    for a in range(3):
        e = np.zeros(3)
        e[a] = 1.0
        tip = o + pj.ISO.project(e, 40.0)
        d = pj.ISO.project(e, 1.0)
        out.append((tuple(o), tuple(tip), tuple(tip + d / np.linalg.norm(d) * 14.0)))
    return tuple(out)


def _legend(canvas: Canvas, corner: int) -> None:
    for name, (tail, tip, at) in zip(AXES, _legend_spots(corner)):
        shapes.arrow(canvas, tail, tip, LEGEND_ARROW, head_px=12.0, owner="legend")
        draw_text_px(canvas, name, at, LEGEND_LABEL)


@lru_cache(maxsize=None)
def _text_wh(text: str, bold: bool) -> tuple[float, float]:
    """Text box size in px (pure font metrics, cached; the font is pinned)."""
    return text_size(Canvas(8), text, LABEL if bold else TEXT)


@lru_cache(maxsize=64)
def number_layout(scene: Scene):
    """Where the bar numbers and bar 1's travel arrow go (`_bars.number_spots`), or None: the sampler rejects such
    a scene, so `draw` always finds the same spots (cached: `draw` reuses what the sampler computed)."""
    wc, _ = _text_wh(CAPTION, False)
    taken = [legend_box(scene.legend), (LO, LO, LO + 12 + wc, LO + 28)]
    sizes = [_text_wh(str(i + 1), True) for i in range(len(scene.steps))]
    return bars.number_spots(scene.steps, scene.scale_px, scene.origin_px, sizes, taken, (LO, LO, HI, HI), ARROW_PX)


def draw(scene: Scene, canvas: Canvas) -> None:
    if canvas.size_px != 768:
        raise ValueError("impossible_objects: draws on a 768 px canvas in pixel units")
    s, origin = scene.scale_px, scene.origin_px
    hexes = footprints_px(scene)
    if hexes[..., 0].min() < LO or hexes[..., 0].max() > HI or hexes[..., 1].min() < LO + CAPTION_H \
            or hexes[..., 1].max() > HI or bars.box_clearance(hexes, legend_box(scene.legend)) < LEGEND_CLEAR:
        raise Reject("bar_clipped")                   # off the safe area, under the caption or over the legend
    bars.paint(canvas.ctx, scene.steps, s, origin)
    bars.paint_ticks(canvas.ctx, scene.steps, s, origin, TICK_HALF_PX)
    spots = number_layout(scene)
    if spots is None:
        raise Reject("label_clash")
    _legend(canvas, scene.legend)
    wc, _ = _text_wh(CAPTION, False)
    draw_text_px(canvas, CAPTION, (LO + 6 + wc / 2, LO + 14), TEXT)
    centres, (tail, head) = spots
    for i, c in enumerate(centres):
        draw_text_px(canvas, str(i + 1), c, LABEL)
    shapes.arrow(canvas, tail, head, Style(stroke=BLACK, width_px=3.0), head_px=13.0)


DOMAIN = Domain(
    id="impossible_objects", family="optical", title="Impossible objects",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="inversion", version=3,
    description="A closed loop of square bars in true isometric that may only close on screen (ISO hides (1,1,1)): "
                "bar count, axis of bar 2, total ascent, whether it could be built, and the gap left by removing "
                "one bar.",
    balance_keys=("bar_count", "axis_of_bar_2", "total_ascent", "could_be_built"),
    balance_caps=(("total_ascent", 0.25),),
)
