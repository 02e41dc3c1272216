"""Depth and height: upright poles A-E on flat ground seen through a pinhole camera with a horizontal optical axis
(`pj.PinholeCamera`: camera at height H_c, looking along +y; world x is screen-right, z is up). The ground carries
1 m square tiles whose lines converge on the horizon; levels 1-2 draw the horizon as a dashed "eye level" line, level
3 leaves it out (it is where the tile lines meet) and adds crates as distractor props. The ladder walks drawn length
-> B against the horizon -> B's true height -> tallest in reality -> C slid twice as far away; the open question asks
for the camera's height.

A pole at ground distance Z (the depth y) with height h has its foot at v_b = v_h + f H_c / Z and its top at
v_t = v_h + f (H_c - h) / Z, so h = H_c (v_b - v_t) / (v_b - v_h) (the horizon ratio rule) and its drawn length is
f h / Z. Ambiguity boundaries: two drawn lengths within `DRAWN_RATIO` (Q1) or true heights within `TRUE_RATIO`
(Q4) of each other; B's top within `HORIZON_GAP_PX` of the horizon (Q2: the sheet's 8 px, doubled at level 3,
where the horizon has to be found from the tile lines); C's halved drawn length within
`SLIDE_GAP` of A's (Q5); a foot closer than `BASE_GAP_PX` to the horizon.
Measurement (Q3, open question): the sheet's +-5% on B's height (and the camera's) asks for the horizon ratio of two
poles to within a few percent, more than a careful reader gets from a 25 px pole whose foot sits 30 px below the
horizon. So poles A and B are drawn at least `MEASURE_LENGTH_PX` long with their feet at least `MEASURE_GAP_PX` below
the horizon (a 1 px slip at one end then costs about 2% of a length), and the tolerance is widened to `REL_TOL` = 7%.
Legibility: poles keep `POLE_GAP_PX` between their sides, are drawn at least `MIN_LENGTH_PX` long and at least
`MIN_WIDTH_PX` wide (the true 0.15 m is thinner than that for far poles); each letter sits above its pole's top, or
beside the top where the spot above would cross the dashed horizon, clear of every other pole and letter.
Balance: targets first (the tallest letter, whether it is drawn longest, B above or below, C longer or shorter); a
drawn-longest A leaves C no way to be drawn longer than A from twice as far (`sample` says how Q5 stays 50/50).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
from functools import lru_cache

from grip.answers import Choice, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import projection as pj
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import BLACK, GREY, GREY_DARK, LABEL, PASTELS, TEXT
from grip.renderers.text import draw_text_px, text_size

LETTERS = "ABCDE"
ABOVE, BELOW, LONGER, SHORTER = "above", "below", "longer", "shorter"
CU = 384.0
H_CAM = (1.5, 1.8)
F_PX = (500.0, 700.0)
HORIZON = (250.0, 330.0)
X_M, Z_M, H_M = 6.0, (4.0, 30.0), (0.5, 6.0)
POLE_W_M = 0.15
DRAWN_RATIO, TRUE_RATIO, SLIDE_GAP = 1.10, 1.12, 0.10
HORIZON_GAP_PX, BASE_GAP_PX = {1: 8.0, 2: 8.0, 3: 16.0}, 30.0
MEASURE_LENGTH_PX, MEASURE_GAP_PX = 45.0, 40.0     # poles A and B (the measured ones)
POLE_GAP_PX, MIN_LENGTH_PX, MIN_WIDTH_PX = 20.0, 25.0, 4.0
LABEL_LIFT_PX, LABEL_HALF = 20.0, (14.0, 15.0)      # letter centre above the top; half box (bold 20 px + halo)
SIDE_GAP_PX = 6.0                                  # a letter beside its pole's top keeps this far from it
EYE_TEXT, EYE_HALF = "eye level", (40.0, 11.0)
LO, HI = SAFE_BORDER_PX + 6.0, 768.0 - SAFE_BORDER_PX - 6.0
TILE_FAR_M, TILE_X_M = 60.0, 14      # tile lines stop 60 m out (10 px apart there), |x| <= 14 m
TILE_RGB = (0.68, 0.68, 0.68)
REL_TOL = 0.07
BATCH = 24                                 # candidate layouts tried at once per set of heights


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3: pole count, horizon drawn (1-2) or not (3), props (3)
    cam_height_m: float                          # H_c, 1.5..1.8
    f_px: float                                  # focal length, 500..700
    horizon_px: float                            # v_h: the horizon's row, 250..330
    xs_m: tuple[float, ...]                      # per pole A.. (letter order): lateral position, -6..6 (+ = right)
    zs_m: tuple[float, ...]                      # per pole: ground distance along the optical axis, 4..30
    heights_m: tuple[float, ...]                 # per pole: height, 0.5..6 on a 0.1 m grid
    props: tuple[tuple[float, float, float, float, float], ...] = ()  # crates: (x, z, width, depth, height) m


# --- projection (pure) -----------------------------------------------------------------------------------------

def camera(scene: Scene) -> pj.PinholeCamera:
    return pj.PinholeCamera(scene.cam_height_m, scene.f_px, CU, scene.horizon_px)


def letters(scene: Scene) -> tuple[str, ...]:
    return tuple(LETTERS[: len(scene.heights_m)])


def index_of(scene: Scene, letter: str) -> int:
    return LETTERS.index(letter)


def box(x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
    return (float(x0), float(y0), float(x1), float(y1))


def overlap(a, b, pad: float = 0.0) -> bool:
    """Whether two pixel boxes come within `pad` of each other."""
    return a[0] - pad < b[2] and b[0] - pad < a[2] and a[1] - pad < b[3] and b[1] - pad < a[3]


def pole_px(scene: Scene) -> list[tuple[float, float, float, float]]:
    """Per pole: (u, v_foot, v_top, half width) in pixels."""
    return list(_pole_px(scene))


@lru_cache(maxsize=256)     # answers, margins, layout checks and the renderer all start here
def _pole_px(scene: Scene) -> tuple[tuple[float, float, float, float], ...]:
    # One projection for every foot and top: the pinhole map is elementwise, so the batch gives the same floats.
    ends = camera(scene).project([((x, z, 0.0), (x, z, h)) for x, z, h in
                                  zip(scene.xs_m, scene.zs_m, scene.heights_m)]).tolist()
    return tuple((u, vb, vt, max(scene.f_px * POLE_W_M / z, MIN_WIDTH_PX) / 2)
                 for ((u, vb), (_, vt)), z in zip(ends, scene.zs_m))


def drawn_lengths(scene: Scene) -> list[float]:
    return [vb - vt for _, vb, vt, _ in pole_px(scene)]


def _ratio_top_two(values) -> tuple[int, float]:
    order = sorted(range(len(values)), key=lambda i: -values[i])
    return order[0], round(values[order[0]] / values[order[1]], 9)   # 5.6 / 5.0 is 1.12, not 1.1199999999999999


def label_boxes(scene: Scene) -> list[tuple[float, float, float, float] | None]:
    """Each letter's box, placed in letter order at the first free spot: above its pole's top, else beside the top
    (right, then left) when the spot above would cross the dashed horizon or touch another pole or letter. A spot
    must lie in the safe area and keep 6 px from every other pole and every letter already placed; None: no spot."""
    return list(_label_boxes(scene))


@lru_cache(maxsize=256)
def _label_boxes(scene: Scene):
    p, poles, placed = pole_px(scene), pole_boxes(scene), []
    hx, hy = LABEL_HALF
    for i, (u, _, vt, w) in enumerate(p):
        side = w + hx + SIDE_GAP_PX
        for cu_, cv_ in ((u, vt - LABEL_LIFT_PX), (u + side, vt + hy), (u - side, vt + hy)):
            b = box(cu_ - hx, cv_ - hy, cu_ + hx, cv_ + hy)
            if (b[0] < LO or b[2] > HI or b[1] < LO or b[3] > HI
                    or (scene.level < 3 and b[1] - 4 < scene.horizon_px < b[3] + 4)
                    or any(overlap(b, o, 6) for j, o in enumerate(poles) if j != i)
                    or any(overlap(b, o, 6) for o in placed if o is not None)):
                continue
            placed.append(b)
            break
        else:
            placed.append(None)
    return tuple(placed)


def pole_boxes(scene: Scene):
    return [box(u - w, vt, u + w, vb + 4) for u, vb, vt, w in pole_px(scene)]


def eye_label_box(scene: Scene):
    """The "eye level" text on the horizon's left end, or its right end when a pole or letter is in the way."""
    v = scene.horizon_px - EYE_HALF[1] - 4
    blocked = pole_boxes(scene) + label_boxes(scene) + prop_boxes(scene)
    for cx in (LO + 6 + EYE_HALF[0], HI - 6 - EYE_HALF[0]):
        b = box(cx - EYE_HALF[0], v - EYE_HALF[1], cx + EYE_HALF[0], v + EYE_HALF[1])
        if not any(overlap(b, o, 6) for o in blocked):
            return b
    return None


def prop_corners(scene: Scene) -> list[np.ndarray]:
    cam = camera(scene)
    return [cam.project([(x + dx, z + dz, dh) for dh in (0, h) for dz in (0, d) for dx in (0, w)])
            for x, z, w, d, h in scene.props]


def prop_boxes(scene: Scene):
    return list(_prop_boxes(scene))


@lru_cache(maxsize=256)     # legible and eye_label_box ask again for each candidate
def _prop_boxes(scene: Scene):
    return tuple(box(*c.min(axis=0), *c.max(axis=0)) for c in prop_corners(scene))


def pole_gap_px(scene: Scene) -> float:
    """Smallest horizontal gap between the sides of two poles."""
    p = pole_px(scene)
    return float(min(abs(a[0] - b[0]) - a[3] - b[3] for a, b in itertools.combinations(p, 2)))


def legible(scene: Scene) -> bool:
    """Every pole, foot ellipse, letter and prop inside the safe area; letters clear of each other and of other
    poles; props clear of poles and letters; the eye-level label placeable (levels 1-2)."""
    p, labels, poles, props = pole_px(scene), label_boxes(scene), pole_boxes(scene), prop_boxes(scene)
    if min(drawn_lengths(scene)) < MIN_LENGTH_PX or pole_gap_px(scene) < POLE_GAP_PX:
        return False
    if any(lab is None for lab in labels):
        return False
    for u, vb, vt, w in p:
        if u - w - 10 < LO or u + w + 10 > HI or vb + 8 > HI:
            return False
    for i, b in enumerate(props):
        x0, y0, x1, y1 = b
        if (x0 < LO or x1 > HI or y1 > HI or any(overlap(b, o, 10) for o in labels + poles)
                or any(overlap(b, o, 6) for o in props[:i])):
            return False
    return scene.level == 3 or eye_label_box(scene) is not None


# --- answers ----------------------------------------------------------------------------------------------------

def drawn_longest(scene: Scene) -> Choice:
    return Choice(letters(scene)[_ratio_top_two(drawn_lengths(scene))[0]], letters(scene))


def top_vs_horizon(scene: Scene, letter: str = "B") -> Choice:
    return Choice(ABOVE if scene.heights_m[index_of(scene, letter)] > scene.cam_height_m else BELOW, (ABOVE, BELOW))


def true_height(scene: Scene, letter: str = "B") -> Number:
    """The horizon ratio rule from the drawn positions, scaled by A's printed height."""
    ratio = [(vb - vt) / (vb - scene.horizon_px) for _, vb, vt, _ in pole_px(scene)]
    h = scene.heights_m[0] * ratio[index_of(scene, letter)] / ratio[0]
    return Number(round(h, 2), REL_TOL, "m", decimals=2, tol_kind="rel", low=0.0)


def tallest(scene: Scene) -> Choice:
    return Choice(letters(scene)[_ratio_top_two(scene.heights_m)[0]], letters(scene))


def edit(scene: Scene) -> Scene:
    """Slide pole C straight away from the camera's foot until it is twice as far: X and Z both double."""
    c = index_of(scene, "C")
    return replace(scene, xs_m=tuple(2 * x if i == c else x for i, x in enumerate(scene.xs_m)),
                   zs_m=tuple(2 * z if i == c else z for i, z in enumerate(scene.zs_m)))


def slide_ratio(scene: Scene) -> float:
    """C's drawn length over A's drawn length in `scene` (on the edited scene: C moved, A as drawn now)."""
    d = drawn_lengths(scene)
    return d[index_of(scene, "C")] / d[0]


def c_against_a(scene: Scene) -> Choice:
    return Choice(LONGER if slide_ratio(scene) > 1 else SHORTER, (LONGER, SHORTER))


counterfactual = c_against_a


def camera_height(scene: Scene) -> Record:
    _, vb, vt, _ = pole_px(scene)[0]
    h = scene.heights_m[0] * (vb - scene.horizon_px) / (vb - vt)
    return Record((("camera_height", Number(round(h, 2), REL_TOL, "m", decimals=2, tol_kind="rel", low=0.0)),))


# --- sampling -----------------------------------------------------------------------------------------------------

def _z_range(h: float, hc: float, f: float, vh: float, measured: bool) -> tuple[float, float]:
    """Distances at which a pole of height h fits: foot above the canvas bottom and far enough below the horizon,
    letter below the canvas top, drawn long enough (A and B, the `measured` poles, more so)."""
    lo = max(Z_M[0], f * hc / (HI - 10 - vh), f * (h - hc) / (vh - LO - LABEL_LIFT_PX - LABEL_HALF[1] - 2))
    gap, length = (MEASURE_GAP_PX, MEASURE_LENGTH_PX) if measured else (BASE_GAP_PX, MIN_LENGTH_PX)
    return lo, min(Z_M[1], f * hc / gap, f * h / length)


def _heights(d: Draws, k: int, hc: float, top: int, q2: str) -> list[float] | None:
    """Heights in letter order on the 0.1 m grid: B on the side of the camera height that q2 asks for, the pole of
    letter `top` at least TRUE_RATIO taller than every other."""
    def grid(lo: float, hi: float) -> float:
        return round(d.uniform(lo, hi), 1)

    band = (hc + 0.1, H_M[1]) if q2 == ABOVE else (H_M[0], hc - 0.1)
    if top == 1:
        hb = grid(*band)
        if hb / TRUE_RATIO - 0.05 <= H_M[0]:
            return None
        others = [grid(H_M[0], hb / TRUE_RATIO - 0.05) for _ in range(k - 1)]
        return None if hb / max(others) < TRUE_RATIO else others[:1] + [hb] + others[1:]
    hb = grid(band[0], min(band[1], H_M[1] / TRUE_RATIO))
    hs = [hb if i == 1 else grid(H_M[0], H_M[1] / TRUE_RATIO) for i in range(k)]
    lo = TRUE_RATIO * max(h for i, h in enumerate(hs) if i != top)
    if lo + 0.05 > H_M[1]:
        return None
    hs[top] = math.ceil(d.uniform(lo, H_M[1]) * 10 - 1e-9) / 10
    return hs if hs[top] >= lo and hs[top] <= H_M[1] else None


def _props(d: Draws, count: int):
    return tuple((round(d.uniform(-5, 4), 2), round(d.uniform(5, 20), 2), round(d.uniform(0.5, 1.0), 2),
                  round(d.uniform(0.5, 1.0), 2), round(d.uniform(0.4, 0.9), 2)) for _ in range(count))


def margins_ok(scene: Scene) -> bool:
    return all(q.margin.ok for q in ladder(scene).questions)


def _quick_ok(hs, zs: np.ndarray, xs: np.ndarray, hc, f, horizon_gap, same: bool, q5: str) -> np.ndarray:
    """The numeric rules for a batch of layouts (rows of zs, xs): drawn-longest target, drawn ratio, gaps, B's and
    C's margins, checked on plain arrays before any scene and label box is built."""
    h = np.asarray(hs, dtype=float)[None, :]
    drawn, u, half = f * h / zs, CU + f * xs / zs, np.maximum(f * POLE_W_M / zs, MIN_WIDTH_PX) / 2
    srt = np.sort(drawn, axis=1)
    ok = ((np.argmax(drawn, axis=1) == int(np.argmax(h))) == same) & (srt[:, -1] >= DRAWN_RATIO * srt[:, -2])
    i, j = _pairs(h.shape[1])
    ok &= (np.abs(u[:, i] - u[:, j]) - half[:, i] - half[:, j]).min(axis=1) >= POLE_GAP_PX
    ok &= np.abs(f * (hc - h[0, 1]) / zs[:, 1]) >= horizon_gap
    ratio = drawn[:, 2] / 2 / drawn[:, 0]
    return ok & (np.abs(ratio - 1) >= SLIDE_GAP) & ((ratio > 1) == (q5 == LONGER))


@lru_cache(maxsize=None)
def _pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(k, 1)


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"depth_height: level must be 1..3, got {level}")
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    k = 3 if level == 1 else d.integers(3, 6)
    hc, f = round(d.uniform(*H_CAM), 2), d.uniform(*F_PX)
    vh = d.uniform(*HORIZON)
    # Targets first: the tallest letter, whether it is also drawn longest (half the time), B above or below the
    # horizon, and C slid back drawn longer or shorter than A. A drawn longest leaves C no way to outdo A from twice
    # as far, so there Q5 is "shorter"; elsewhere "longer" comes with probability K / (2K - 1), which keeps it at
    # one half overall without skewing the tallest letter.
    top, same = d.integers(k), d.random() < 0.5
    q2 = (ABOVE, BELOW)[d.integers(2)]
    forced = same and top == 0
    q5 = SHORTER if forced else (LONGER if d.random() < k / (2 * k - 1) else SHORTER)
    for _ in range(60):
        hs = _heights(d, k, hc, top, q2)
        if hs is None:
            continue
        ranges = [_z_range(h, hc, f, vh, i < 2) for i, h in enumerate(hs)]
        if any(lo >= hi for lo, hi in ranges):
            continue
        lo, hi = np.log(np.array(ranges)).T     # log-uniform distances: near and far poles alike
        zs = np.exp(lo + (hi - lo) * rng.random((BATCH, k)))
        xs = (2 * rng.random((BATCH, k)) - 1) * np.minimum(X_M, (CU - LO - 30) * zs / f)
        for row in np.flatnonzero(_quick_ok(hs, zs, xs, hc, f, HORIZON_GAP_PX[level], same, q5))[:4]:
            s = Scene(level, hc, f, vh, tuple(float(x) for x in xs[row]), tuple(float(z) for z in zs[row]),
                      tuple(hs), _props(d, 2) if level == 3 else ())
            if legible(s) and margins_ok(s):
                return s
    raise Reject("no_layout")


# --- ladder -------------------------------------------------------------------------------------------------------

def _context(scene: Scene) -> str:
    base = ("The picture is a perspective view from a camera held level (its optical axis horizontal) over flat "
            "ground covered with 1 m square tiles; the lettered poles stand upright on the ground. ")
    if scene.level < 3:
        return base + "The dashed line marked 'eye level' is the horizon. "
    return base + "The horizon is not drawn, and the boxes are only props. "


@lru_cache(maxsize=256)       # sample (margins_ok), generate and rephrase_q4 each ask for the same scene's ladder
def ladder(scene: Scene) -> Ladder:
    c, ha = _context(scene), f"Pole A is {scene.heights_m[0]:.1f} m tall. "
    p, vh = pole_px(scene), scene.horizon_px
    b = index_of(scene, "B")
    dr, tr = _ratio_top_two(drawn_lengths(scene))[1], _ratio_top_two(scene.heights_m)[1]
    base_gap = Margin(min(p[0][1] - vh, p[b][1] - vh, p[0][1] - p[0][2], p[b][1] - p[b][2]), "px", MEASURE_GAP_PX,
                      "pole A or B too short, or its foot too near the horizon, to measure its ratio")
    rungs = (
        Question(1, "drawn_longest", c + "Which pole is drawn longest in the picture (measured on the picture, "
                 "from its foot to its top)?", drawn_longest(scene),
                 Margin(dr, "ratio", DRAWN_RATIO, "two poles drawn equally long")),
        Question(2, "b_top_vs_horizon", c + "Does the top of pole B rise above the horizon or stay below it?",
                 top_vs_horizon(scene), Margin(abs(p[b][2] - vh), "px", HORIZON_GAP_PX[scene.level],
                                               "B's top on the horizon")),
        Question(3, "b_height", c + ha + "How tall is pole B in reality?", true_height(scene), base_gap),
        Question(4, "tallest", c + "Which pole is actually the tallest in reality?", tallest(scene),
                 Margin(tr, "ratio", TRUE_RATIO, "two poles equally tall")),
        Question(5, "c_slid_back", c + "Suppose pole C were slid along the ground straight away from the camera, "
                 "along the line from the point on the ground below the camera through C's foot, until it is twice "
                 "as far away. Would it then be drawn longer or shorter than pole A is drawn now?",
                 counterfactual(edit(scene)), Margin(abs(slide_ratio(edit(scene)) - 1), "ratio", SLIDE_GAP,
                                                     "C slid back drawn as long as A"),
                 edit="slide pole C back to twice its distance"),
    )
    open_q = Question(6, "camera_height", c + ha + "How high above the ground is the camera? Explain using the "
                      "horizon.", camera_height(scene),
                      Margin(min(p[0][1] - vh, p[0][1] - p[0][2]), "px", MEASURE_GAP_PX,
                             "pole A too short, or its foot too near the horizon, to measure its ratio"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    q4 = ladder(scene).rungs[3]
    return Question(4, "not_shorter_than_any", _context(scene) + "Which pole is not shorter in reality than any "
                    "other pole?", q4.answer, q4.margin)


def minimal_pair(scene: Scene) -> Scene:
    """The second-tallest pole's top raised (0.1 m steps, foot unchanged) until it is at least `TRUE_RATIO` times as
    tall as the tallest; the first such height that keeps Q1, every margin and the layout."""
    order = sorted(range(len(scene.heights_m)), key=lambda i: -scene.heights_m[i])
    first, second = order[0], order[1]
    q1 = drawn_longest(scene).value
    h = math.ceil(TRUE_RATIO * scene.heights_m[first] * 10 - 1e-9) / 10
    for _ in range(6):
        s = replace(scene, heights_m=tuple(h if i == second else x for i, x in enumerate(scene.heights_m)))
        if h <= H_M[1] and legible(s) and margins_ok(s) and drawn_longest(s).value == q1:
            return s
        h = round(h + 0.1, 1)
    raise Reject("no_minimal_pair")


# --- drawing --------------------------------------------------------------------------------------------------------

def _tiles(scene: Scene, canvas: Canvas) -> None:
    """Tile lines: constant-x lines from the canvas bottom towards the vanishing point, constant-z lines while their
    spacing stays above 4 px. Drawn inside the safe area only."""
    cam, ctx = camera(scene), canvas.ctx
    z_near = scene.f_px * scene.cam_height_m / (HI + 30 - scene.horizon_px)
    ctx.set_source_rgb(*TILE_RGB)
    ctx.set_line_width(1.5)
    for (u0, v0), (u1, v1) in cam.project([((x, z_near, 0.0), (x, TILE_FAR_M, 0.0))
                                           for x in range(-TILE_X_M, TILE_X_M + 1)]).tolist():
        ctx.move_to(u0, v0)
        ctx.line_to(u1, v1)
    z = math.ceil(z_near)
    while scene.f_px * scene.cam_height_m * (1 / z - 1 / (z + 1)) >= 4:
        v = scene.horizon_px + scene.f_px * scene.cam_height_m / z
        ctx.move_to(LO - 10, v)
        ctx.line_to(HI + 10, v)
        z += 1
    ctx.stroke()


def _crate(scene: Scene, canvas: Canvas, corners: np.ndarray, k: int) -> None:
    """Front, top and the side facing the camera of a box (corner index = dx + 2 dz + 4 dh)."""
    ctx, (x, _, w, _, _) = canvas.ctx, scene.props[k]
    side = [(0, 2, 6, 4)] if x > 0 else [(1, 3, 7, 5)] if x + w < 0 else []   # a crate straddling x = 0 shows none
    for f in side + [(4, 5, 7, 6), (0, 1, 5, 4)]:       # far to near: side, top, front
        ctx.move_to(*corners[f[0]])
        for i in f[1:]:
            ctx.line_to(*corners[i])
        ctx.close_path()
        ctx.set_source_rgb(*PASTELS[3])
        ctx.fill_preserve()
        ctx.set_source_rgb(*BLACK)
        ctx.set_line_width(2.0)
        ctx.stroke()


def draw(scene: Scene, canvas: Canvas) -> None:
    if not legible(scene):
        raise Reject("illegible_layout")
    ctx = canvas.ctx
    with canvas.layer():
        ctx.rectangle(SAFE_BORDER_PX, SAFE_BORDER_PX, 768 - 2 * SAFE_BORDER_PX, 768 - 2 * SAFE_BORDER_PX)
        ctx.clip()
        _tiles(scene, canvas)
        if scene.level < 3:
            ctx.set_source_rgb(*BLACK)
            ctx.set_line_width(2.0)
            ctx.set_dash([10.0, 6.0])
            ctx.move_to(LO, scene.horizon_px)
            ctx.line_to(HI, scene.horizon_px)
            ctx.stroke()
            ctx.set_dash([])
    for k, corners in enumerate(prop_corners(scene)):
        _crate(scene, canvas, corners, k)
    # Far poles first: a nearer pole is drawn over a farther one (the layout keeps them apart anyway).
    p = pole_px(scene)
    for i in sorted(range(len(p)), key=lambda i: -scene.zs_m[i]):
        u, vb, vt, w = p[i]
        ctx.new_sub_path()
        ctx.save()
        ctx.translate(u, vb)
        ctx.scale(w + 5, max(2.5, (w + 5) * scene.cam_height_m / scene.zs_m[i]))
        ctx.arc(0, 0, 1, 0, 2 * math.pi)
        ctx.restore()
        ctx.set_source_rgb(*GREY)
        ctx.fill_preserve()
        ctx.set_source_rgb(*BLACK)
        ctx.set_line_width(1.5)
        ctx.stroke()
        ctx.rectangle(u - w, vt, 2 * w, vb - vt)
        ctx.set_source_rgb(*GREY_DARK)
        ctx.fill()
    for (x0, y0, x1, y1), letter in zip(label_boxes(scene), letters(scene)):
        draw_text_px(canvas, letter, ((x0 + x1) / 2, (y0 + y1) / 2), LABEL)
    if scene.level < 3:
        x0, y0, x1, y1 = eye_label_box(scene)
        w, _ = text_size(canvas, EYE_TEXT, TEXT)
        draw_text_px(canvas, EYE_TEXT, ((x0 + x1) / 2, (y0 + y1) / 2), TEXT)
        if w / 2 > EYE_HALF[0]:
            raise ValueError("depth_height: EYE_HALF is smaller than the eye-level text")


DOMAIN = Domain(
    id="depth_height", family="solid", title="Depth and height",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="Upright poles on tiled ground in a level-camera perspective view: the longest drawn, B against the "
                "horizon, B's true height from A's, the tallest in reality, and C slid twice as far away.",
    balance_keys=("drawn_longest", "b_top_vs_horizon", "tallest", "c_slid_back"),
)
