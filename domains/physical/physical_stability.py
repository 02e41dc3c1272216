"""Physical stability: N rectangular blocks stacked on a table, A at the bottom. Each joint (where block j+1 rests on
block j) holds iff the centre of mass of everything above it lies strictly inside the support interval, the
horizontal overlap of the two blocks. The ladder walks count -> C relative to B -> largest offset -> lowest failing
joint -> verdict with the top block lifted off, and the open question asks for the deciding joint's clearance.

Ambiguity boundary: a substack centre of mass within `MARGIN_PX[level]` of an edge of its support (original and
edited stack alike). Centres are integer px, so "directly above" is exact by construction; every other offset of C
from B is at least `Q2_GAP_PX`. A grid line every unit (40 px) and a numbered ruler make offsets measurable.

The verdict is the sheet's static rule: each joint is judged with the blocks above it taken as one rigid body, and
Q4 names the lowest joint that fails that test (joints above it may fail as well).

Minimal pair: the top block slid sideways by the fewest whole px (either way, up to `PAIR_MAX_PX`) that changes the
verdict with every margin holding and the stack still over the ruler. The Q4 rephrase ("Will the stack tip over?")
keeps Q4's options, "stable" read as "does not tip" (an alias), so its map is the identity.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Number, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.draws import Draws
from grip.renderers import shapes
from grip.renderers.canvas import Canvas
from grip.renderers.style import GREY, GREY_DARK, GREY_PALE, LABEL, OUTLINE, PALETTE, TEXT, THIN, Style, tint
from grip.renderers.text import draw_text

UNIT_PX = 40                      # 1 block unit = 40 px (the sheet's unit; printed on the ruler)
MARGIN_PX = {1: 12.0, 2: 6.0, 3: 4.0}   # COM to nearest support edge, per level
Q2_GAP_PX = 8.0                   # |x_C - x_B| unless exactly 0
Q3_GAP_PX = 8.0                   # largest minus second-largest offset
MIN_SUPPORT_PX = 20               # every support interval at least this wide
MAX_STEP_PX = 150                 # largest centre offset between neighbours: keeps six blocks on the canvas
STACK_X = (64, 704)               # the stack stays over the ruler (0..16 units), px
TABLE_Y, TABLE_BOTTOM = 616, 656  # table top and bottom, px
RULER_Y, RULER_X0 = 672, 64       # ruler baseline and its 0 mark, px
DENSITY_GREY = {1: 0.86, 2: 0.70, 3: 0.54}   # level-3 fill grey per density: denser is darker, across all hues
PAIR_MAX_PX = 120                 # minimal pair: largest sideways slide of the top block
GRID = Style(stroke=(0.87, 0.87, 0.87), width_px=2.0)   # faint: read against it, never mistaken for a block
LETTERS = "ABCDEF"
Q2_OPTIONS = ("left", "right", "directly above")


@dataclass(frozen=True)
class Scene:
    level: int                      # 1..3 (sets N, the margin threshold and whether densities vary)
    widths_px: tuple[int, ...]      # per block, bottom (A) first; 80..220, even so that edges are integers
    heights_px: tuple[int, ...]     # per block, 40..80
    centers_px: tuple[int, ...]     # horizontal centre per block, integer px, 104..664
    densities: tuple[int, ...]      # per block, 1..3 (all 1 below level 3); mass = density * width * height


# --- sampling ---------------------------------------------------------------------------------------------------

def joint_name(j: int) -> str:
    return f"{LETTERS[j]}-{LETTERS[j + 1]}"


def _keep(spans: list, lo: float, hi: float) -> list:
    """The integer intervals [a, b) of `spans` cut down to [lo, hi)."""
    return [(max(a, lo), min(b, hi)) for a, b in spans if max(a, lo) < min(b, hi)]


def _cut(spans: list, lo: float, hi: float) -> list:
    """The integer intervals [a, b) of `spans` with [lo, hi) taken out."""
    out = []
    for a, b in spans:
        if a < min(b, lo):
            out.append((a, min(b, lo)))
        if max(a, hi) < b:
            out.append((max(a, hi), b))
    return out


def _least(pred, v: int) -> int:
    """The least integer at which `pred` (false below some integer, true from it on) holds, searched from v."""
    while pred(v - 1):
        v -= 1
    while not pred(v):
        v += 1
    return v


def _place(draws: Draws, w: np.ndarray, m: np.ndarray, want: list, want_edit: list, q2: str,
           tau: float) -> np.ndarray | None:
    """Centres top-down (top block at 0): each joint's substack COM is known before the block beneath is placed,
    so its status (original and with the top block removed) is a condition on that one centre. None if some
    joint has no admissible centre.

    Block j's centre c runs over the integers within `reach` of the centre above, and its support edges lo(c) =
    max(c - a, L), hi(c) = min(c + a, R) are integers that never decrease with c. So each condition on a COM holds
    on one interval of c or off one, bounded where lo or hi crosses an integer threshold (found with the float
    comparisons a candidate-by-candidate test makes: the same centres, tests/test_physical_stability.py), and
    the admissible centres are a few intervals, drawn from in increasing order."""
    n = len(w)
    w, m = [int(v) for v in w], [int(v) for v in m]   # even widths: every edge below is an integer
    thr = tau + 1e-6   # float slack vs. the ladder
    x = [0] * n
    for j in range(n - 2, -1, -1):
        x1, a, b = x[j + 1], w[j] // 2, w[j + 1] // 2
        reach = min(MAX_STEP_PX, (w[j] + w[j + 1]) // 2 - MIN_SUPPORT_PX)
        spans = [(x1 - reach, x1 + reach + 1)]
        if j == 1:   # C relative to B: x_C - x_B = x[2] - c
            spans = _keep(spans, *{"left": (math.ceil(x[2] + Q2_GAP_PX), math.inf),
                                   "right": (-math.inf, math.floor(x[2] - Q2_GAP_PX) + 1),
                                   "directly above": (x[2], x[2] + 1)}[q2])

        def lo_at(v: int) -> float:   # the least c with lo(c) >= v
            return -math.inf if x1 - b >= v else v + a

        def hi_at(v: int) -> float:   # the least c with hi(c) >= v
            return v - a if x1 + b >= v else math.inf

        checks = [(j + 1, n, want[j])]
        if j <= n - 3:
            checks.append((j + 1, n - 1, want_edit[j]))
        for k0, k1, target in checks:
            # integer sums, so the quotient is the one of numpy's float dot product (all partial sums < 2**53)
            com = sum(m[k] * x[k] for k in range(k0, k1)) / sum(m[k0:k1])
            near = _least(lambda v: com - v < thr, math.floor(com - thr))   # |com - e| < thr iff near <= e < far
            far = _least(lambda v: com - v <= -thr, math.ceil(com + thr))
            spans = _cut(_cut(spans, lo_at(near), lo_at(far)), hi_at(near), hi_at(far))
            if target is not None:   # lo < com < hi iff lo < ceil(com) and hi >= floor(com) + 1
                inside = (hi_at(math.floor(com) + 1), lo_at(math.ceil(com)))
                spans = _keep(spans, *inside) if target else _cut(spans, *inside)
        count = sum(hi - lo for lo, hi in spans)
        if not count:
            return None
        i = draws.index(count)   # rng.choice over the admissible candidates, in increasing order
        for lo, hi in spans:
            if i < hi - lo:
                x[j] = lo + i
                break
            i -= hi - lo
    return np.array(x, float)


def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first: Q4 (stable 40%, else a uniform joint), Q2 (directly above 20%, left/right 40% each) and Q5
    (stable/unstable 50/50), then a stack built to have them."""
    if level not in MARGIN_PX:
        raise ValueError(f"physical_stability: level must be 1..3, got {level!r}")
    # N: L1 3, L2 4-5, L3 6, so that no block count passes 35% of a build with the default level mix.
    draws = Draws(rng)   # the Generator's own scalar draws, cheaper
    n = {1: 3, 2: draws.integers(4, 6), 3: 6}[level]
    tau = MARGIN_PX[level]
    fail_at = None if draws.random() < 0.4 else draws.integers(n - 1)
    # With three blocks and C directly above B, joint B-C cannot fail (C is centred on B). Those items take
    # left/right, and the others take "directly above" more often, so that it stays at 20% overall.
    p_above = 0.2 if n > 3 else (0.0 if fail_at == 1 else 0.2 / 0.7)
    q2 = str(rng.choice(Q2_OPTIONS, p=[(1 - p_above) / 2, (1 - p_above) / 2, p_above]))
    edit_stable = draws.random() < 0.5
    want = [True if fail_at is None or j < fail_at else (False if j == fail_at else None) for j in range(n - 1)]
    for attempt in range(60):
        w = 2 * rng.integers(40, 111, n)
        h = rng.integers(40, 81, n)
        rho = rng.integers(1, 4, n) if level == 3 else np.ones(n, int)
        m = (rho * w * h).astype(float)
        e = draws.integers(n - 2)   # the joint that fails once the top is removed (if Q5 = unstable)
        want_edit = [True if edit_stable else (False if j == e else None) for j in range(n - 2)]
        if attempt >= 40:   # Q5 is balanced "where feasible": some (Q4, Q2) targets fix it
            want_edit = [None] * (n - 2)
        x = _place(draws, w, m, want, want_edit, q2, tau)
        if x is None:
            continue
        offsets = np.sort(np.abs(np.diff(x)))
        if offsets[-1] - offsets[-2] < Q3_GAP_PX:
            continue
        left, right = int(np.min(x - w // 2)), int(np.max(x + w // 2))
        if right - left > STACK_X[1] - STACK_X[0]:
            continue
        shift = draws.integers(STACK_X[0] - left, STACK_X[1] - right + 1)
        return Scene(level=level, widths_px=tuple(int(v) for v in w), heights_px=tuple(int(v) for v in h),
                     centers_px=tuple(int(v) + shift for v in x), densities=tuple(int(v) for v in rho))
    raise Reject("no_stack_for_target")


# --- geometry and physics -----------------------------------------------------------------------------------------

def masses(scene: Scene) -> tuple[float, ...]:
    return tuple(float(d * w * h) for d, w, h in zip(scene.densities, scene.widths_px, scene.heights_px))


def substack_com(scene: Scene, j: int) -> float:
    """Horizontal centre of mass (px) of the blocks above joint j (blocks j+1 .. top)."""
    m = masses(scene)[j + 1:]
    return sum(mi * xi for mi, xi in zip(m, scene.centers_px[j + 1:])) / sum(m)


def support(scene: Scene, j: int) -> tuple[float, float]:
    """Support interval (px) of joint j: the horizontal overlap of block j and block j+1."""
    (wa, wb), (xa, xb) = scene.widths_px[j:j + 2], scene.centers_px[j:j + 2]
    return max(xa - wa / 2, xb - wb / 2), min(xa + wa / 2, xb + wb / 2)


@functools.lru_cache(maxsize=16)   # the ladder reads a scene's joints five times, its edit's twice
def joints(scene: Scene) -> tuple[tuple[float, float, float, bool, float], ...]:
    """Per joint, bottom first: (support lo, support hi, substack COM, holds, clearance to the nearest edge px)."""
    out = []
    for j in range(len(scene.centers_px) - 1):
        lo, hi = support(scene, j)
        com = substack_com(scene, j)
        out.append((lo, hi, com, lo < com < hi, min(abs(com - lo), abs(com - hi))))
    return tuple(out)


def deciding_joint(scene: Scene) -> int:
    """The lowest failing joint, or, when every joint holds, the one with the smallest clearance."""
    js = joints(scene)
    failing = [j for j, jt in enumerate(js) if not jt[3]]
    return failing[0] if failing else min(range(len(js)), key=lambda j: js[j][4])


# --- answers ------------------------------------------------------------------------------------------------------

def block_count(scene: Scene) -> Count:
    return Count(len(scene.centers_px), low=1)


def c_relative_to_b(scene: Scene) -> Choice:
    d = scene.centers_px[2] - scene.centers_px[1]
    value = "directly above" if d == 0 else ("left" if d < 0 else "right")
    return Choice(value, Q2_OPTIONS, aliases=(("above", "directly above"), ("to the left", "left"),
                                              ("to the right", "right"), ("centred", "directly above")))


def largest_offset_block(scene: Scene) -> Choice:
    offsets = np.abs(np.diff(scene.centers_px))
    letters = tuple(LETTERS[1:len(scene.centers_px)])
    return Choice(letters[int(np.argmax(offsets))], letters, aliases=tuple((f"block {c}", c) for c in letters))


def _verdict_choice(scene: Scene, value: str) -> Choice:
    names = [joint_name(j) for j in range(len(scene.centers_px) - 1)]
    aliases = (("does not tip", "stable"),) + tuple(p for nm in names for p in (
        (nm, f"tips at {nm}"), (f"tips at joint {nm}", f"tips at {nm}"), (f"unstable at {nm}", f"tips at {nm}")))
    return Choice(value, ("stable",) + tuple(f"tips at {nm}" for nm in names), aliases=aliases)


def stack_verdict(scene: Scene) -> Choice:
    js = joints(scene)
    failing = [j for j, jt in enumerate(js) if not jt[3]]
    return _verdict_choice(scene, f"tips at {joint_name(failing[0])}" if failing else "stable")


def stability(scene: Scene) -> Choice:
    """Stable or unstable, the verdict Q5 applies to the edited stack."""
    return Choice("stable" if all(jt[3] for jt in joints(scene)) else "unstable", ("stable", "unstable"))


def deciding_clearance_units(scene: Scene) -> Number:
    return Number(round(joints(scene)[deciding_joint(scene)][4] / UNIT_PX, 2), tol=0.1, unit="units", decimals=2,
                  low=0.0)


def edit(scene: Scene) -> Scene:
    """Lift the top block off."""
    return Scene(level=scene.level, widths_px=scene.widths_px[:-1], heights_px=scene.heights_px[:-1],
                 centers_px=scene.centers_px[:-1], densities=scene.densities[:-1])


def counterfactual(scene: Scene) -> Choice:
    return stability(scene)


# --- ladder -------------------------------------------------------------------------------------------------------

def _density_note(scene: Scene) -> str:
    if scene.level == 3:
        return ("Each block has uniform density; densities differ between blocks as printed on them (×1, ×2, ×3 "
                "times the lightest; darker shading = denser). ")
    return "All blocks are solid, of the same uniform density. "


def ladder(scene: Scene) -> Ladder:
    n = len(scene.centers_px)
    tau = MARGIN_PX[scene.level]
    js = joints(scene)
    clear_min = min(jt[4] for jt in js)
    edited = edit(scene)
    edit_clear = min(jt[4] for jt in joints(edited))
    d_bc = abs(scene.centers_px[2] - scene.centers_px[1])
    offsets = sorted(np.abs(np.diff(scene.centers_px)).tolist())
    note = _density_note(scene)
    joint_rule = "A joint is named by the two blocks that meet there (A-B is where block B rests on block A). "
    com_edge = Margin(clear_min, "px", tau, "a substack centre of mass at an edge of its support")
    return Ladder(rungs=(
        Question(1, "block_count", "How many blocks are stacked on the table?", block_count(scene),
                 Margin(float(min(scene.heights_px)), "px", 12.0, "smallest block height (legibility)")),
        Question(2, "c_relative_to_b",
                 "Is the centre of block C to the left of, to the right of, or directly above the centre of "
                 "block B?", c_relative_to_b(scene),
                 # "directly above" is exact by construction; the other classes keep >= Q2_GAP_PX from it
                 Margin(float(d_bc) if d_bc else Q2_GAP_PX, "px", Q2_GAP_PX,
                        "C's centre level with B's centre (exact ties only by construction)")),
        Question(3, "largest_offset_block",
                 "Of the blocks resting on another block (B and up), which one has its centre shifted furthest "
                 "horizontally, in either direction, from the centre of the block directly beneath it?",
                 largest_offset_block(scene),
                 Margin(float(offsets[-1] - offsets[-2]), "px", Q3_GAP_PX, "two largest offsets equal")),
        Question(4, "stack_verdict",
                 note + joint_rule + "Is this entire stack stable, or will it tip? If it tips, give the lowest "
                 "joint at which it becomes unstable.", stack_verdict(scene), com_edge),
        Question(5, "verdict_top_removed",
                 note + f"Suppose the topmost block ({LETTERS[n - 1]}) were lifted off and nothing else moved. "
                 "Would the remaining stack be stable or unstable?", counterfactual(edited),
                 Margin(edit_clear, "px", tau, "a substack centre of mass at a support edge, top block removed"),
                 edit="remove the top block"),
    ), open=Question(
        6, "deciding_joint_clearance",
        note + joint_rule + "Explain whether this stack is stable. Take the joint that decides it: the lowest "
        "joint that fails, or, if the stack is stable, the joint whose support edge is closest to the centre of "
        "mass of the blocks above it. Give the verdict (as for the whole stack: stable, or tips at that joint) and "
        "the horizontal distance between the centre of mass of all blocks above that joint and the nearest edge "
        "of the joint's support (the overlap of the two blocks), in units (1 unit = 40 px, one grid step).",
        Record((("verdict", stack_verdict(scene)), ("distance", deciding_clearance_units(scene)))), com_edge))


def rephrase_q4(scene: Scene) -> Question:
    """Q4 asked as "will it tip over" (map: identity; "stable" is the answer for a stack that does not tip)."""
    return Question(4, "tips_over", _density_note(scene) + "A joint is named by the two blocks that meet there (A-B "
                    "is where block B rests on block A). Will this stack tip over? If it does, at which joint does it "
                    "first fail (the lowest joint that cannot hold)? Answer 'stable' if it does not tip.",
                    stack_verdict(scene), Margin(min(jt[4] for jt in joints(scene)), "px", MARGIN_PX[scene.level],
                                                 "a substack centre of mass at an edge of its support"))


def minimal_pair(scene: Scene) -> Scene:
    """The top block slid sideways by the fewest whole px (right first on a tie) that changes Q4, every margin
    holding and every block still over the ruler."""
    q4 = stack_verdict(scene).value
    top, w = scene.centers_px[-1], scene.widths_px[-1]
    for d in (d for k in range(1, PAIR_MAX_PX + 1) for d in (k, -k)):
        if not STACK_X[0] <= top + d - w / 2 and top + d + w / 2 <= STACK_X[1]:
            continue
        twin = replace(scene, centers_px=scene.centers_px[:-1] + (top + d,))
        if stack_verdict(twin).value != q4 and not ladder(twin).failing_margins():
            return twin
    raise Reject("no_minimal_pair")


# --- drawing ------------------------------------------------------------------------------------------------------

def _fill(scene: Scene, i: int):
    if scene.level == 3:   # one grey ramp: hue lightness would otherwise compete with the density shading
        return (DENSITY_GREY[scene.densities[i]],) * 3
    return tint(PALETTE[i % len(PALETTE)], 0.55)


@functools.lru_cache(maxsize=8)
def _backdrop(size_px: int, world: tuple[float, ...], legend: bool):
    """Grid, table, ruler and (level 3) density legend: the same on every image, so drawn once per process and
    painted as a copy (it is a third of the drawing time otherwise)."""
    canvas = Canvas(size_px, world)
    for k in range(17):   # unit grid behind everything, so overhangs can be read against it
        gx = RULER_X0 + k * UNIT_PX
        shapes.line(canvas, (gx, 28), (gx, TABLE_Y), GRID, owner="grid")
    shapes.rect(canvas, 28, TABLE_Y, 740, TABLE_BOTTOM, Style(stroke=None, fill=GREY_PALE), owner="table")
    shapes.hatch(canvas, 28, TABLE_Y, 740, TABLE_BOTTOM, 12.0, Style(stroke=GREY, width_px=2.0), owner="table")
    shapes.rect(canvas, 28, TABLE_Y, 740, TABLE_BOTTOM, OUTLINE.with_(stroke=GREY_DARK), owner="table")
    # ruler: minor ticks every quarter unit, numbered every unit
    shapes.line(canvas, (RULER_X0, RULER_Y), (RULER_X0 + 16 * UNIT_PX, RULER_Y), THIN, owner="ruler")
    for q in range(16 * 4 + 1):
        tx = RULER_X0 + q * UNIT_PX / 4
        shapes.line(canvas, (tx, RULER_Y), (tx, RULER_Y + (10 if q % 4 == 0 else 5)), THIN, owner="ruler")
        if q % 4 == 0:
            draw_text(canvas, str(q // 4), (tx, RULER_Y + 22), TEXT.with_(font_px=14.0))
    draw_text(canvas, "units (1 unit = 40 px)", (600, RULER_Y + 50), TEXT)
    if legend:   # top left, above the tallest possible stack (6 x 80 px)
        draw_text(canvas, "density:", (84, 48), TEXT)
        for k in (1, 2, 3):
            x0 = 140 + (k - 1) * 76
            shapes.rect(canvas, x0, 36, x0 + 28, 60, THIN.with_(fill=(DENSITY_GREY[k],) * 3), owner="legend")
            draw_text(canvas, f"×{k}", (x0 + 46, 48), TEXT.with_(bold=True))
        draw_text(canvas, "(darker = denser)", (450, 48), TEXT)
    canvas.surface.flush()
    return canvas.surface


def draw(scene: Scene, canvas: Canvas) -> None:
    with canvas.layer() as ctx:
        ctx.set_source_surface(_backdrop(canvas.size_px, tuple(canvas.world), scene.level == 3), 0, 0)
        ctx.paint()
    y = float(TABLE_Y)
    for i in range(len(scene.centers_px)):
        w, h, x = scene.widths_px[i], scene.heights_px[i], scene.centers_px[i]
        if not (STACK_X[0] <= x - w / 2 and x + w / 2 <= STACK_X[1] and y - h >= 28):
            raise Reject("stack_off_canvas")
        shapes.rect(canvas, x - w / 2, y - h, x + w / 2, y, OUTLINE.with_(fill=_fill(scene, i)), owner=LETTERS[i])
        if scene.level == 3:
            draw_text(canvas, LETTERS[i], (x - 16, y - h / 2), LABEL)
            draw_text(canvas, f"×{scene.densities[i]}", (x + 17, y - h / 2), TEXT.with_(bold=True))
        else:
            draw_text(canvas, LETTERS[i], (x, y - h / 2), LABEL)
        y -= h


DOMAIN = Domain(
    id="physical_stability", family="physical", title="Physical stability of block stacks", scene=Scene,
    sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual, minimal_pair=minimal_pair,
    rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
    description="Rectangular blocks stacked on a table; judge from overhangs and densities whether each joint "
                "holds (substack centre of mass strictly inside the overlap), and what happens without the top.",
    balance_keys=("block_count", "stack_verdict", "verdict_top_removed", "c_relative_to_b"),
    balance_caps=(("stack_verdict", 0.45),))   # the sheet's quota: stable 40%, the rest uniform over joints
