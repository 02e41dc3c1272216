"""Gear trains: meshed spur gears seen face-on; gear A is the driver, with a curved arrow on its body and its speed
in the caption. Teeth counts are printed on the gears ("24T") at levels 1-2 and must be counted at level 3, except
on the back gear of a shaft pair, whose teeth the gears in front of it partly hide, so it keeps its count. Two
gears may be fixed on one shaft (drawn concentric, sharing a hexagonal hub; the larger one sits behind), and at
level 3 an idler may stand apart, meshing with nothing. The ladder walks count -> B's direction -> D's speed ->
fastest gear -> C removed, and the open question asks for the speed of a gear at least two meshes from A.

Rules: an external mesh gives w_j = -w_i * T_i / T_j; gears on one shaft share w; gears not connected to A do not
turn. Meshes form a tree, so no train jams (`signed_rpm` still rejects a contradictory hand-made scene).
Ambiguity boundaries: (1) whether two gears mesh — meshing pairs sit at exactly r_i + r_j, every other pair keeps
its tip circles `CLEAR_PX[level]` apart (the legibility margin of Q1, Q2, Q5); (2) the fastest gear — the fastest
shaft must outrun the second by `FAST_RATIO[level]`, and must carry a single gear (a shared shaft would tie).
Layering: the back gear of a shaft pair is drawn in its own style (hatched, dashed outline, named in the caption),
and the one gear that meshes with the front gear lies across it with a white casing, its centre at least
`LAYER_MODULES` modules off the back gear's pitch circle (sitting on its face or standing clear of it, never
straddling its teeth as a gear meshing with it would). Every other gear keeps clear of the back gear unless it
meshes with it.
"""
from __future__ import annotations

import functools
import math
from collections import deque
from dataclasses import dataclass, replace
from fractions import Fraction

import cairo
import numpy as np
from shapely.geometry import Point, box

from grip.answers import Choice, Count, Number, Ordered, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import SAFE_BORDER_PX, Canvas
from grip.renderers.style import (BLACK, GREY_DARK, GREY_LIGHT, GREY_PALE, LABEL, OKABE_ITO, PASTELS, TEXT, WHITE,
                                  Style)
from grip.renderers.text import draw_text_px, text_size

CW, CCW, STILL = "clockwise", "counterclockwise", "does not turn"
DIR_ALIASES = (("cw", CW), ("ccw", CCW), ("anticlockwise", CCW), ("anti-clockwise", CCW),
               ("counter-clockwise", CCW), ("stationary", STILL), ("it does not turn", STILL))
RPMS = (30, 40, 60, 90, 120)
MODULE_PX = {1: 6.5, 2: 6.0, 3: 7.5}      # pitch radius = module * teeth / 2; bigger teeth when they are counted
CLEAR_PX = {1: 20.0, 2: 16.0, 3: 14.0}    # tip-circle gap between gears that do not mesh
FAST_RATIO = {1: 1.20, 2: 1.15, 3: 1.10}  # fastest shaft speed / second fastest
TOOTH_PITCH_MIN_PX = 12.0                 # no counted element smaller than 12 px
# Teeth ranges (even counts). A is large enough to carry its arrow inside the body around the label; the
# back gear of a shaft pair is large enough that its letter fits on the ring the front gear leaves visible.
TEETH = {1: dict(a=(22, 32), gear=(16, 32)), 2: dict(a=(22, 32), gear=(16, 32), small=(16, 22), gap=16, big=40),
         3: dict(a=(12, 20), gear=(8, 20), small=(8, 12), gap=14, big=28)}
LAYER_MODULES = 3                         # front gear's partner centre to the back gear's pitch circle
HUB_PX = 15.0
TOP_PX = 78.0                             # caption strip: gears stay below it
PAD_PX = 6.0                              # gap between tip circles and the safe border
ARROW = Style(stroke=OKABE_ITO["vermillion"], width_px=3.0)
COUNT = TEXT.with_(font_px=14.0)          # teeth counts


@dataclass(frozen=True)
class Scene:
    level: int                                   # 1..3: label style, teeth ranges, thresholds
    labels: tuple[str, ...]                      # letter per gear, "A" = driver; letters survive removing a gear
    teeth: tuple[int, ...]                       # per gear, even, 8..40
    centers: tuple[tuple[float, float], ...]     # per gear, px, y down, inside the safe area below the caption
    meshes: tuple[tuple[int, int], ...]          # external meshes, index pairs (i < j), a forest
    shafts: tuple[tuple[int, int], ...]          # gears fixed on one shaft, (front = fewer teeth, back); 0..1 pairs
    driver_rpm: int                              # one of RPMS
    driver_dir: str                              # CW or CCW, as seen in the picture
    target: str                                  # letter of the open question's gear: >= 2 meshes from A, not D, C


# --- graph and kinematics (pure) ---------------------------------------------------------------------------------

def index_of(scene: Scene, letter: str) -> int:
    return scene.labels.index(letter)


def module_px(scene: Scene) -> float:
    return MODULE_PX[scene.level]


def _neighbours(scene: Scene) -> list[list[tuple[int, Fraction, int]]]:
    """Per gear: (other gear, speed factor, meshes crossed). A mesh reverses and scales, a shaft copies."""
    nb: list[list[tuple[int, Fraction, int]]] = [[] for _ in scene.teeth]
    for i, j in scene.meshes:
        nb[i].append((j, Fraction(-scene.teeth[i], scene.teeth[j]), 1))
        nb[j].append((i, Fraction(-scene.teeth[j], scene.teeth[i]), 1))
    for i, j in scene.shafts:
        nb[i].append((j, Fraction(1), 0))
        nb[j].append((i, Fraction(1), 0))
    return nb


def _exact(scene: Scene) -> tuple[list[tuple[int, int]], list[int | None]]:
    """Signed speed (rpm, + = clockwise) as an integer pair (numerator, positive denominator), not reduced, and
    meshes from A for every gear; (0, 1)/None for gears A does not reach."""
    a, n = index_of(scene, "A"), len(scene.teeth)
    w: list[tuple[int, int] | None] = [None] * n
    hops: list[int | None] = [None] * n
    w[a] = (scene.driver_rpm * (1 if scene.driver_dir == CW else -1), 1)
    hops[a] = 0
    nb: list[list[tuple[int, int, int, int]]] = [[] for _ in range(n)]   # (other gear, factor num, den, meshes)
    for i, j in scene.meshes:
        nb[i].append((j, -scene.teeth[i], scene.teeth[j], 1))
        nb[j].append((i, -scene.teeth[j], scene.teeth[i], 1))
    for i, j in scene.shafts:
        nb[i].append((j, 1, 1, 0))
        nb[j].append((i, 1, 1, 0))
    todo = deque([a])
    while todo:
        i = todo.popleft()
        p, q = w[i]
        for j, fp, fq, h in nb[i]:
            if w[j] is None:
                w[j], hops[j] = (p * fp, q * fq), hops[i] + h
                todo.append(j)
            elif w[j][0] * q * fq != p * fp * w[j][1]:
                raise Reject("jammed")   # an odd mesh loop, or a shaft loop whose ratios do not close
    return [x if x is not None else (0, 1) for x in w], hops


@functools.lru_cache(maxsize=16)   # the ladder asks for the same scene's speeds several times
def _walk(scene: Scene) -> tuple[list[Fraction], list[int | None]]:
    """Signed speed (rpm, + = clockwise) and meshes from A for every gear; 0/None for gears A does not reach."""
    w, hops = _exact(scene)
    return [Fraction(p, q) for p, q in w], hops


def signed_rpm(scene: Scene) -> list[Fraction]:
    return _walk(scene)[0]


def meshes_from_a(scene: Scene) -> list[int | None]:
    return _walk(scene)[1]


def shaft_groups(scene: Scene) -> list[tuple[int, ...]]:
    on_shaft = {g for pair in scene.shafts for g in pair}
    return [tuple(p) for p in scene.shafts] + [(i,) for i in range(len(scene.teeth)) if i not in on_shaft]


def fastest(scene: Scene) -> tuple[tuple[int, ...], float]:
    """The fastest turning shaft and its speed ratio over the second fastest (1.0 = a tie)."""
    w = _exact(scene)[0]
    den = math.lcm(*(q for _, q in w))
    speed = [abs(p) * (den // q) for p, q in w]   # |w| over a common denominator: exact, without Fractions
    ranked = sorted(shaft_groups(scene), key=lambda g: -speed[g[0]])
    top, second = speed[ranked[0][0]], speed[ranked[1][0]]
    return ranked[0], top / second if second else math.inf   # int / int is correctly rounded, as float(Fraction)


# --- sampling ----------------------------------------------------------------------------------------------------

def _even(d: Draws, lo: int, hi: int) -> int:
    return d.integers(lo // 2, hi // 2 + 1) * 2


def _structure(d: Draws, level: int, idler: bool):
    """Build order of a tree grown from A: per new gear (parent, "mesh" | "shaft"); the gear after a shaft partner
    meshes with that partner, so the shaft carries motion on. Returns (parents, compound index or None)."""
    # Gear counts N: L1 4-5, L2 5-7, L3 6-7 (idler included), so that no count passes 35% over the level mix.
    n_conn = {1: d.integers(4, 6), 2: d.integers(5, 8), 3: d.integers(6, 8) - idler}[level]
    compound_at = d.integers(2, n_conn - 1) if level >= 2 else None   # index of the shaft partner
    parents: list[tuple[int, str]] = [(-1, "root")]
    for k in range(1, n_conn):
        if k == compound_at:
            parents.append((d.integers(1, k), "shaft"))
        elif compound_at is not None and k == compound_at + 1:
            parents.append((k - 1, "mesh"))
        else:
            parents.append((k - 1 if d.random() < 0.6 else d.integers(0, k), "mesh"))
    if idler:
        parents.append((-1, "idler"))
    return parents, compound_at


def _teeth(d: Draws, level: int, parents, compound_at) -> list[int]:
    r = TEETH[level]
    t = [_even(d, *r["a"])] + [_even(d, *r["gear"]) for _ in parents[1:]]
    if compound_at is not None:
        p = parents[compound_at][0]
        small = _even(d, *r["small"])
        big = _even(d, small + r["gap"], r["big"])
        t[p], t[compound_at] = (small, big) if d.random() < 0.5 else (big, small)
    return t


def _place(rng: np.random.Generator, d: Draws, level, teeth, parents, compound_at) -> list[tuple[float, float]] | None:
    m, clear = MODULE_PX[level], CLEAR_PX[level] + 4.0
    lo, hi = SAFE_BORDER_PX + PAD_PX, 768 - SAFE_BORDER_PX - PAD_PX
    radius = [m * t / 2 for t in teeth]
    tip = [r + m for r in radius]
    linked = {frozenset((p, k)) for k, (p, kind) in enumerate(parents) if kind in ("mesh", "shaft")}
    if compound_at is not None:   # a gear meshing with the front gear of a shaft lies over the back gear
        p = parents[compound_at][0]
        back, front = (p, compound_at) if teeth[p] > teeth[compound_at] else (compound_at, p)
        linked |= {frozenset((back, j)) for pair in list(linked) if front in pair for j in pair if j != front}

    def fits(k: int, c: tuple[float, float], others: list) -> bool:
        """Inside the free area and clear of the placed gears `others` ((centre, tip radius)) k may not touch."""
        if not (lo + tip[k] <= c[0] <= hi - tip[k] and max(lo, TOP_PX) + tip[k] <= c[1] <= hi - tip[k]):
            return False
        for cj, tj in others:
            if math.dist(c, cj) - tip[k] - tj < clear:
                return False
        return True

    placed = {0: (d.uniform(260, 508), d.uniform(300, 500))}
    for k, (par, kind) in enumerate(parents[1:], start=1):
        # candidates are made as they are tried (the first that fits ends the search), in plain floats: the same
        # values as numpy scalars give
        if kind == "shaft":
            cands = [placed[par]]
        elif kind == "mesh":
            base, dist = d.uniform(0, 360), radius[par] + radius[k]
            steps = d.permutation(24)
            cands = ((placed[par][0] + dist * math.cos(math.radians(base + 15 * s)),
                      placed[par][1] + dist * math.sin(math.radians(base + 15 * s)))
                     for s in steps)
        else:
            cands = (tuple(c) for c in rng.uniform(lo, hi, size=(150, 2)).tolist())
        others = [(cj, tip[j]) for j, cj in placed.items() if frozenset((j, k)) not in linked]
        hit = next((c for c in cands if fits(k, c, others)), None)
        if hit is None:
            return None
        placed[k] = (float(hit[0]), float(hit[1]))
    # Centre the train in the free area: a translation changes no gap and no answer, and uses the canvas evenly.
    xs0 = min(placed[k][0] - tip[k] for k in placed)
    xs1 = max(placed[k][0] + tip[k] for k in placed)
    ys0 = min(placed[k][1] - tip[k] for k in placed)
    ys1 = max(placed[k][1] + tip[k] for k in placed)
    dx = (lo + hi) / 2 - (xs0 + xs1) / 2
    dy = (max(lo, TOP_PX) + hi) / 2 - (ys0 + ys1) / 2
    return [(placed[k][0] + dx, placed[k][1] + dy) for k in range(len(parents))]


def layer_offset_modules(scene: Scene) -> float:
    """Smallest distance, in modules, from the centre of a gear meshing with a shaft pair's front gear to that
    pair's back gear's pitch circle (inf without a pair). It is (T_front + T_partner - T_back) / 2, teeth alone."""
    return min((abs(scene.teeth[f] + scene.teeth[j] - scene.teeth[b]) / 2 for f, b in scene.shafts
                for m in scene.meshes if f in m for j in m if j != f), default=math.inf)


def front_partners(scene: Scene) -> int:
    """Meshes on the front gear of a shaft pair. Every gear meshing the front gear is drawn over the back gear's
    face; with more than one such gear it is no longer clear from the picture which plane each one meshes in, so
    the sampler allows at most one."""
    return max((sum(front in m for m in scene.meshes) for front, _ in scene.shafts), default=0)


def sample(rng: np.random.Generator, level: int) -> Scene:
    if level not in (1, 2, 3):
        raise ValueError(f"gear_trains: level must be 1..3, got {level}")
    # Targets first: B's direction (Q2) and the fastest gear's direction (Q4), uniform over their options.
    d = Draws(rng)   # the Generator's own scalar draws, cheaper
    q2 = (CW, CCW, STILL)[d.integers(3 if level == 3 else 2)]
    q4_dir = (CW, CCW)[d.integers(2)]
    idler = q2 == STILL or (level == 3 and d.random() < 0.5)
    for _ in range(12):
        parents, compound_at = _structure(d, level, idler)
        n = len(parents)
        for _ in range(20):
            teeth = _teeth(d, level, parents, compound_at)
            s = Scene(level, tuple("ABCDEFG"[:n]), tuple(teeth), tuple((0.0, 0.0) for _ in teeth),
                      tuple((p, k) for k, (p, kind) in enumerate(parents) if kind == "mesh"),
                      () if compound_at is None else
                      (tuple(sorted((parents[compound_at][0], compound_at), key=lambda g: teeth[g])),),
                      d.pick(RPMS), CW, "A")
            top, ratio = fastest(s)
            if (len(top) == 1 and ratio >= FAST_RATIO[level] and front_partners(s) <= 1
                    and layer_offset_modules(s) >= LAYER_MODULES):
                break
        else:
            continue
        w, hops = _exact(s)
        w = [p for p, _ in w]   # the signs of the speeds are all that is read here
        s = replace(s, driver_dir=q4_dir if w[top[0]] > 0 else (CCW if q4_dir == CW else CW))
        # Letters by role: B matches the Q2 target, C and D are driven, X is >= 2 meshes out (not C, not D).
        turning = [k for k in range(1, n) if w[k] != 0]
        sign = 1 if s.driver_dir == CW else -1
        b_cands = ([k for k in range(1, n) if w[k] == 0] if q2 == STILL else
                   [k for k in turning if (w[k] * sign > 0) == (q2 == s.driver_dir)])
        if not b_cands:
            continue
        b = d.pick(b_cands)
        rest = [k for k in turning if k != b]
        if len(rest) < 2:
            continue
        c, g = (rest[i] for i in d.subset(len(rest), 2))   # rng.choice(rest, size=2, replace=False)
        x_cands = [k for k in turning if hops[k] >= 2 and k not in (c, g)]
        if not x_cands:
            continue
        x = d.pick(x_cands)
        others = [k for k in range(1, n) if k not in (b, c, g)]
        rng.shuffle(others)   # rng.permutation(others)'s draws, on the list itself
        order = [0, b, c, g] + others   # order[letter index] = build index
        letter = {k: "ABCDEFG"[i] for i, k in enumerate(order)}
        centers = _place(rng, d, level, teeth, parents, compound_at)
        if centers is None:
            continue
        # Store gears in letter order.
        pos = {k: i for i, k in enumerate(order)}
        return Scene(level, tuple(letter[k] for k in order), tuple(teeth[k] for k in order),
                     tuple(centers[k] for k in order),
                     tuple(sorted(tuple(sorted((pos[i], pos[j]))) for i, j in s.meshes)),
                     tuple((pos[f], pos[bk]) for f, bk in s.shafts), s.driver_rpm, s.driver_dir, letter[x])
    raise Reject("no_layout")


# --- derived geometry (shared by margins and drawing) ------------------------------------------------------------

def back_gear_exceptions(scene: Scene) -> set[frozenset[int]]:
    """Pairs allowed to overlap: a gear meshing with the front gear of a shaft lies over that shaft's back gear."""
    out = set()
    for front, back in scene.shafts:
        for i, j in scene.meshes:
            if front in (i, j):
                out.add(frozenset((back, j if i == front else i)))
    return out


def min_gap_px(scene: Scene, without: int | None = None) -> float:
    """Smallest tip-circle gap between two gears that neither mesh, share a shaft nor lie in different planes
    (optionally leaving gear `without` out: the gaps that remain once it is removed)."""
    m = module_px(scene)
    tip = [m * t / 2 + m for t in scene.teeth]
    linked = {frozenset(p) for p in scene.meshes + scene.shafts} | back_gear_exceptions(scene)
    gaps = [math.dist(scene.centers[i], scene.centers[j]) - tip[i] - tip[j]
            for i in range(len(tip)) for j in range(i + 1, len(tip))
            if frozenset((i, j)) not in linked and without not in (i, j)]
    return float(min(gaps)) if gaps else 768.0


def phases_deg(scene: Scene) -> list[float]:
    """Angle of one tooth centre per gear, so that the teeth of meshing gears interlock: a tooth of i that sits an
    arc s past the contact line faces a gap of j the same arc s past it (p_i * r_i = p_j * r_j = pi * m)."""
    ph: list[float | None] = [None] * len(scene.teeth)
    nb = [[j for j, _, h in row if h] for row in _neighbours(scene)]
    for root in range(len(ph)):
        if ph[root] is not None:
            continue
        ph[root], todo = 90.0, deque([root])
        while todo:
            i = todo.popleft()
            for j in nb[i]:
                if ph[j] is None:
                    (xi, yi), (xj, yj) = scene.centers[i], scene.centers[j]
                    theta = math.degrees(math.atan2(yj - yi, xj - xi))
                    pi_, pj = 360.0 / scene.teeth[i], 360.0 / scene.teeth[j]
                    frac = ((ph[i] - theta) % pi_) / pi_
                    ph[j] = (theta + 180.0 - frac * pj - 0.5 * pj) % pj
                    todo.append(j)
    return [float(p) for p in ph]


# --- answers ----------------------------------------------------------------------------------------------------

def gear_count(scene: Scene) -> Count:
    return Count(len(scene.teeth), low=1, high=7)


def direction_of(scene: Scene, letter: str) -> Choice:
    w = signed_rpm(scene)[index_of(scene, letter)]
    options = (CW, CCW, STILL) if scene.level == 3 else (CW, CCW)
    return Choice(STILL if w == 0 else CW if w > 0 else CCW, options, DIR_ALIASES)


def _rpm_answer(value: Fraction) -> Number:
    v = abs(float(value))
    # One decimal already lies inside 1% from 5 rpm up; slower gears get two.
    d = 1 if v >= 10 else 2
    return Number(round(v, d), 0.01, "rpm", decimals=d, tol_kind="rel", low=0.0)


def rpm_of(scene: Scene, letter: str) -> Number:
    return _rpm_answer(signed_rpm(scene)[index_of(scene, letter)])


def fastest_gear(scene: Scene) -> Record:
    (g,), _ = fastest(scene)
    letters = tuple(sorted(scene.labels))
    return Record((("gear", Choice(scene.labels[g], letters)),
                   ("direction", Choice(direction_of(scene, scene.labels[g]).value, (CW, CCW), DIR_ALIASES))))


def edit(scene: Scene) -> Scene:
    """Remove gear C; everything else stays where it is, letters unchanged."""
    c = index_of(scene, "C")
    keep = [k for k in range(len(scene.teeth)) if k != c]
    new = {k: i for i, k in enumerate(keep)}
    return replace(scene, labels=tuple(scene.labels[k] for k in keep), teeth=tuple(scene.teeth[k] for k in keep),
                   centers=tuple(scene.centers[k] for k in keep),
                   meshes=tuple((new[i], new[j]) for i, j in scene.meshes if c not in (i, j)),
                   shafts=tuple((new[i], new[j]) for i, j in scene.shafts if c not in (i, j)))


def turning_gears(scene: Scene) -> Ordered:
    """The gears other than A that turn when A is driven, in alphabetical order."""
    w = signed_rpm(scene)
    options = tuple(sorted(x for x in scene.labels if x != "A"))
    return Ordered(tuple(x for x in options if w[index_of(scene, x)] != 0), "alphabetical order", options,
                   as_set=True)


counterfactual = turning_gears


# --- ladder -----------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)   # sample's accepted scene, then rephrase_q4 for the same scene
def ladder(scene: Scene) -> Ladder:
    lv, gap = scene.level, min_gap_px(scene)
    top, ratio = fastest(scene)
    edited = edit(scene)
    hops_x = meshes_from_a(scene)[index_of(scene, scene.target)] or 0
    pitch = math.pi * module_px(scene)
    clear = Margin(gap, "px", CLEAR_PX[lv], "two gears that do not mesh close enough to look meshed")
    counted = Margin(pitch, "px", TOOTH_PITCH_MIN_PX, "tooth spacing too small to count or read")
    rungs = (
        Question(1, "gear_count", "How many gears are shown? Two gears fixed together on one hub count as two.",
                 gear_count(scene), clear),
        Question(2, "direction_of_b", "Gear A turns as its arrow shows. Which way does gear B turn?",
                 direction_of(scene, "B"), clear),
        Question(3, "speed_of_d", "How fast does gear D turn, in revolutions per minute (rpm)?",
                 rpm_of(scene, "D"), counted),
        Question(4, "fastest_gear", "Which gear turns fastest, and in which direction does it turn?",
                 fastest_gear(scene), Margin(ratio if len(top) == 1 else 1.0, "speed ratio", FAST_RATIO[lv],
                                             "fastest and second-fastest shafts equally fast")),
        Question(5, "turning_without_c", "If gear C were removed (nothing else moves), which gears other than A "
                 "would still turn when A is driven?", counterfactual(edited),
                 Margin(min_gap_px(scene, without=index_of(scene, "C")), "px", CLEAR_PX[lv],
                        "a remaining pair close enough to look meshed"),
                 edit="remove gear C"),
    )
    open_q = Question(6, "speed_of_target", f"Explain how the motion passes from gear A to gear {scene.target}, "
                      f"mesh by mesh, and give gear {scene.target}'s speed.",
                      Record((("speed", rpm_of(scene, scene.target)),)),
                      Margin(float(hops_x), "meshes", 2.0, "target gear fewer than two meshes from A"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    """Q4 in other words, with Q4's answer fields (identity): the sheet's "same way as A?" would make the second field
    yes/no, which no rephrase map relates to Q4's direction field."""
    lad = ladder(scene)
    return Question(4, "highest_rpm_gear", "Name the gear with the highest speed in rpm, and say which way it "
                    "rotates (clockwise or counterclockwise).", lad.rungs[3].answer, lad.rungs[3].margin)


def minimal_pair(scene: Scene) -> Scene:
    """The driver's arrow reversed: every direction flips, Q4's among them; one arrowhead changes in the picture."""
    return replace(scene, driver_dir=CCW if scene.driver_dir == CW else CW)


# --- drawing ----------------------------------------------------------------------------------------------------

def _label_block(canvas: Canvas, letter: str, teeth: str | None, center, style_hub: Style | None) -> None:
    if style_hub is not None:
        shapes.circle(canvas, center, HUB_PX, style_hub, owner=letter)
    draw_text_px(canvas, letter, center, LABEL)
    if teeth:
        draw_text_px(canvas, teeth, (center[0], center[1] + 25), COUNT)


def _ring_label(canvas: Canvas, scene: Scene, front: int, back: int, covers: list[int], m: float) -> None:
    """The back gear's letter and teeth count, on the part of its body the front gear and its partners leave free."""
    cx, cy = scene.centers[back]
    inner = m * scene.teeth[front] / 2 + m + 3
    outer = m * scene.teeth[back] / 2 - 1.25 * m - 2
    holes = [(cx, cy, inner)] + [(*scene.centers[j], m * scene.teeth[j] / 2 + m + 3) for j in covers]
    region = None   # built only for a box that plain arithmetic cannot decide
    text = f"{scene.teeth[back]}T"
    wl, hl = text_size(canvas, scene.labels[back], LABEL)
    wt, _ = text_size(canvas, text, COUNT)
    w, h = wl + wt, hl
    # A wide, short box fits the ring best straight above or below the centre: try those angles first.
    spots = sorted(((rm, a) for a in range(0, 360, 15) for rm in ((inner + outer) / 2, (inner + outer) / 2 + 4)),
                   key=lambda p: abs(math.cos(math.radians(p[1]))))
    for rm, a in spots:
        u, v = cx + rm * math.cos(math.radians(a)), cy + rm * math.sin(math.radians(a))
        corners = (u - w / 2, v - h / 2, u + w / 2, v + h / 2)
        inside = _box_in_ring(corners, (cx, cy), outer, holes)
        if inside is None:
            if region is None:
                region = Point(cx, cy).buffer(outer)
                for hx, hy, hr in holes:
                    region = region.difference(Point(hx, hy).buffer(hr))
            inside = region.contains(box(*corners))
        if inside:
            draw_text_px(canvas, scene.labels[back], (u - w / 2 + wl / 2, v), LABEL)
            draw_text_px(canvas, text, (u + w / 2 - wt / 2, v), COUNT)
            return
    raise Reject("label_does_not_fit")


APOTHEM = math.cos(math.pi / 64)   # shapely's buffer of a point: a 64-gon, vertices on the circle


def _box_in_ring(corners, center, outer: float, holes, eps: float = 1e-6) -> bool | None:
    """Whether the box (x0, y0, x1, y1) lies in shapely's buffer of `center` by `outer` minus its buffers of the
    `holes` ((x, y, r)), decided in plain floats; None where the polygons' edges, which run between r cos(pi/64)
    and r from a centre, leave it open."""
    x0, y0, x1, y1 = corners
    far = math.hypot(max(center[0] - x0, x1 - center[0]), max(center[1] - y0, y1 - center[1]))
    if far > outer + eps:
        return False
    clear = True
    for hx, hy, hr in holes:
        near = math.hypot(hx - min(max(hx, x0), x1), hy - min(max(hy, y0), y1))
        if near < hr * APOTHEM - eps:
            return False
        clear = clear and near > hr + eps
    return True if clear and far < outer * APOTHEM - eps else None


def _back_gear(canvas: Canvas, outline: np.ndarray, owner: str) -> None:
    """A back gear: pale fill, grey diagonal hatching clipped to its outline, dashed dark outline."""
    ctx = canvas.ctx
    shapes.polygon(canvas, outline, Style(stroke=None, fill=GREY_PALE), owner=owner)
    with canvas.layer():
        pts = canvas.pts_px(outline)
        (u0, v0), (u1, v1) = pts.min(axis=0).tolist(), pts.max(axis=0).tolist()
        pts = pts.tolist()   # Python floats: the same values, without a numpy scalar per coordinate
        ctx.move_to(*pts[0])
        for p in pts[1:]:
            ctx.line_to(*p)
        ctx.close_path()
        ctx.clip()
        # A line (on which x + y is constant) that passes the outline a few pixels off is clipped away whole and
        # changes no pixel: leave it out, stroking costs time by its length.
        diag = [u + v for u, v in pts]
        near0, near1 = min(diag) - 6, max(diag) + 6
        for u in np.arange(u0 - (v1 - v0), u1, 9.0).tolist():
            if near0 <= u + v1 <= near1:
                ctx.move_to(u, v1)
                ctx.line_to(u + (v1 - v0), v0)
        ctx.set_source_rgb(*GREY_LIGHT)
        ctx.set_line_width(2.0)
        ctx.stroke()
    shapes.polygon(canvas, outline, Style(stroke=GREY_DARK, width_px=2.0, dash_px=(7.0, 4.0)), owner=owner)


def draw(scene: Scene, canvas: Canvas) -> None:
    m, n = module_px(scene), len(scene.teeth)
    lo, hi = SAFE_BORDER_PX + PAD_PX, canvas.size_px - SAFE_BORDER_PX - PAD_PX
    for (x, y), t in zip(scene.centers, scene.teeth):
        ra = m * t / 2 + m
        if x - ra < lo or x + ra > hi or y - ra < max(lo, TOP_PX) or y + ra > hi:
            raise Reject("gear_clipped")
    ph = phases_deg(scene)
    backs = {bk: fr for fr, bk in scene.shafts}
    fronts = {fr: bk for fr, bk in scene.shafts}
    a = index_of(scene, "A")
    outlines = [shapes.gear_outline(scene.centers[k], m * scene.teeth[k] / 2, scene.teeth[k], m, ph[k])
                for k in range(n)]
    for k in backs:                  # back gears first, hatched with a dashed outline: plainly a different plane
        _back_gear(canvas, outlines[k], scene.labels[k])
    # A white casing round the gears that lie across a back gear (its front gear and that gear's partner), drawn
    # before any front gear so that it cuts the back gear's teeth and nothing else.
    over = {j for f in fronts for mesh in scene.meshes if f in mesh for j in mesh} | set(fronts)
    for k in over:
        shapes.polyline(canvas, np.vstack([outlines[k], outlines[k][:1]]), Style(stroke=WHITE, width_px=9.0))
    for k in (k for k in range(n) if k not in backs):
        shapes.polygon(canvas, outlines[k], Style(stroke=BLACK, fill=GREY_LIGHT, width_px=2.0), owner=scene.labels[k])
    for k in range(n):
        if k in backs:
            covers = [j for j in range(n) if frozenset((backs[k], j)) in {frozenset(p) for p in scene.meshes}]
            _ring_label(canvas, scene, backs[k], k, covers, m)
            continue
        hub = Style(stroke=BLACK, fill=PASTELS[k % len(PASTELS)], width_px=2.0)
        if k in fronts:            # shared hexagonal hub: the two gears are fixed together
            c = scene.centers[k]
            hexagon = [(c[0] + 17 * math.cos(math.radians(60 * i)), c[1] + 17 * math.sin(math.radians(60 * i)))
                       for i in range(6)]
            shapes.polygon(canvas, hexagon, hub, owner=scene.labels[k])
            hub = None
        teeth = f"{scene.teeth[k]}T" if scene.level < 3 else None
        _label_block(canvas, scene.labels[k], teeth, scene.centers[k], hub)
    # A's arrow runs inside its body, between the label and the roots of the teeth.
    root_a = m * scene.teeth[a] / 2 - 1.25 * m
    r_arrow = (root_a + (40.0 if scene.level < 3 else 18.0)) / 2
    a0, a1 = (-230.0, 20.0) if scene.driver_dir == CW else (20.0, -230.0)   # y down: increasing angle = clockwise
    shapes.curved_arrow(canvas, scene.centers[a], r_arrow, a0, a1, ARROW, head_px=12.0, owner="A")
    lines = [f"Gear A is driven at {scene.driver_rpm} rpm, turning as its arrow shows."]
    if scene.shafts:
        lines.append("Gears sharing a hexagonal hub are fixed together; the hatched one is behind.")
    # The haloed caption costs about as much as the gears: drawn once per text and copied, where the rows it can
    # touch are still blank (they always are: gears stay below TOP_PX), which gives the same pixels as drawing it.
    strip, rows = _caption(canvas.size_px, tuple(lines))
    if _blank_rows(canvas, rows):
        with canvas.layer() as ctx:
            ctx.rectangle(0, 0, canvas.size_px, rows)
            ctx.clip()
            ctx.set_source_surface(strip, 0, 0)
            ctx.paint()
    else:
        _draw_caption(canvas, lines)


def _draw_caption(canvas: Canvas, lines) -> float:
    """Caption lines at the top left; returns the lowest y their haloed boxes reach."""
    bottom = 0.0
    for i, line in enumerate(lines):
        w, h = text_size(canvas, line, TEXT)
        y = SAFE_BORDER_PX + 12 + 22 * i
        draw_text_px(canvas, line, (SAFE_BORDER_PX + 4 + w / 2, y), TEXT)
        bottom = max(bottom, y + h / 2)
    return bottom


@functools.lru_cache(maxsize=16)
def _caption(size_px: int, lines: tuple[str, ...]):
    """The caption drawn on a blank canvas, and how many pixel rows from the top it can touch (its boxes, halo
    included, and 2 rows against antialiasing)."""
    c = Canvas(size_px)
    c.ctx.set_line_cap(cairo.LINE_CAP_ROUND)   # the state draw() leaves (shapes set it) before the caption
    bottom = _draw_caption(c, lines)
    c.surface.flush()
    return c.surface, min(size_px, math.ceil(bottom) + 2)


def _blank_rows(canvas: Canvas, rows: int) -> bool:
    """Whether the top `rows` pixel rows of the canvas are still white."""
    canvas.surface.flush()
    data = np.frombuffer(canvas.surface.get_data(), dtype=np.uint8).reshape(-1, canvas.surface.get_stride())
    # all four bytes of each pixel: cairo writes white as 255s, padding byte included (another padding byte only
    # costs drawing the caption instead of copying it)
    return bool(data[:rows, :4 * canvas.size_px].min() == 255)


DOMAIN = Domain(
    id="gear_trains", family="physical", title="Gear trains",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=3,
    description="Meshed spur gears driven by gear A: count, direction, speed, fastest gear, and which gears still "
                "turn when gear C is removed. Level 3 hides the teeth counts and adds an idler.",
    balance_keys=("gear_count", "direction_of_b", "fastest_gear", "turning_without_c"),
)
