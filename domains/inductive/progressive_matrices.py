"""Progressive matrices: a RAVEN-style 3x3 matrix of panels, the bottom-right one replaced by "?", and eight
numbered candidates below it. Every object in a panel shares the panel's type (triangle, square, pentagon, hexagon,
circle), size (five levels) and grey (six levels); the panel's number of objects is the fourth attribute. Each
attribute follows one row rule (constant, progression, arithmetic, distribute-three; `_raven.py`). The ladder walks
top-left count -> the rule for number -> the missing count -> the completing candidate -> the candidate once row 3,
column 2 is edited; the open question asks for the rules of type, size and colour.

Answer set: an I-RAVEN attribute tree. Three attributes (number always among them) get one alternative value each;
the eight candidates are the 2^3 combinations, so every tree value appears in exactly four candidates and "pick the
most common value per attribute" only meets ties; whether each alternative lies above or below the correct value is
a fair coin, so a tie broken by "smaller" or "larger" is right 1/8 of the time. Size and grey alternatives (Q5's new
value included) lie two or more levels from the correct one. Ambiguity boundaries: a second hypothesis fitting the
visible values (rule margin >= 1 panel value for every attribute, on the scene and the edited scene); objects of a
panel too close to count (>= 6 px).

Legibility. Every shape is inscribed in a circle of diameter 17 px * 2^((s-1)/4) at size s (17-34 px, the sheet's
+18.9% step; one scale in both grids and in the key), drawn around it as a blue ring (a circle is its own ring): a
size level is one ring in every type, and the size key is a ruler. The smallest shape, an upright square, has a
12 px side; 3x3 panels pad their slots by 1 px so level-5 rings stay 6.7 px apart. Orientation is noise at level 3
only, and the key and Q4 say so. Keys number the grey, type and size levels: arithmetic on grey and steps of type or
size cannot be read otherwise. Q5 names the new value by a panel that shows it (the sheet names types in words): for
a distribute-three edit the new value is the old missing one, and words would print part of Q4's answer. Q5 never
edits number (the sheet allows it): a number edit would tell that Q2's answer is arithmetic or distribute-three.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from grip.answers import Choice, Count, Record
from grip.domain import Domain, Ladder, Margin, Question, Reject
from grip.domains.inductive import _raven as rv
from grip.domains.inductive._raven import ARITH, ATTRS, CONST, DIST, PROG, RULES
from grip.draws import Draws
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, LABEL, OKABE_ITO, TEXT
from grip.renderers.text import draw_text_px

TYPES = ("triangles", "squares", "pentagons", "hexagons", "circles")
SIDES = (3, 4, 5, 6, 0)
L_STAR = (96, 78, 60, 42, 24, 6)                          # grey levels 1..6, Delta L* = 18
D1_PX, PAD_PX, RING = 17.0, {2: 4.0, 3: 1.0}, OKABE_ITO["sky"]   # size 1 ring; slot padding per grid
PANEL_PX, GAP_PX = 124.0, 6.0
TOP_PX = 29.0                                             # 710 px of layout centred in the 720 px safe area
MATRIX_X0 = (768 - (3 * PANEL_PX + 2 * GAP_PX)) / 2
CAND_X0, CAND_GAP_PX, BAND_PX, CAND_ROW_GAP_PX = (768 - (4 * PANEL_PX + 3 * 16.0)) / 2, 16.0, 22.0, 10.0
CAND_Y0 = TOP_PX + 3 * PANEL_PX + 2 * GAP_PX + 24.0
MIN_GAP_PX, MIN_OBJECT_PX, RULE_MARGIN = 6.0, 12.0, 1
RULED = {1: 2, 2: 3, 3: 4}                                # attributes that draw a rule (number always)
OPTIONS = tuple(str(i) for i in range(1, 9))
NONE = "none"
TRIES = 60
SIZE_NOTE = ("A shape's size is the diameter of the blue ring drawn around it (a circle is its own ring); the size "
             "key shows the ring of each level at the panels' scale.")
TURN_NOTE = " Shapes are turned at random: orientation follows no rule (a turned square is still a square)."


@dataclass(frozen=True)
class Scene:
    level: int                                       # 1..3
    grid: int                                        # k: each panel holds a k x k grid of slots (2 at L1-2, 3 at L3)
    values: tuple[tuple[int, ...], ...]              # per attribute (ATTRS order): levels of the 8 visible panels
    candidates: tuple[tuple[int, int, int, int], ...]  # the 8 answer panels (number, type, size, colour), as 1..8
    slots: tuple[tuple[int, ...], ...]               # 16 panels (matrix, candidates): occupied slots (noise)
    angles: tuple[float, ...]                        # 16 panels: orientation in degrees (noise at L3, else 0)
    edit_attr: str                                   # X, the attribute Q5 changes in row 3, column 2
    edit_value: int                                  # X's level there after the edit


# --- rules and the solution (pure) -------------------------------------------------------------------------------

def attr_values(scene: Scene, attr: str) -> tuple[int, ...]:
    return tuple(scene.values[ATTRS.index(attr)])


def rule_fit(scene: Scene, attr: str) -> tuple[tuple[str, object], int]:
    """The hypothesis that fits `attr` as drawn and its missing value (the first, if several fit: margin 0)."""
    fits = rv.fitting(attr, scene.grid, attr_values(scene, attr))
    if not fits:
        raise Reject("no_rule_fits")
    return fits[0]


def rule_margins(scene: Scene) -> dict[str, int]:
    return {a: rv.rule_margin(a, scene.grid, attr_values(scene, a)) for a in ATTRS}


def solution(scene: Scene) -> tuple[int, int, int, int]:
    return tuple(rule_fit(scene, a)[1] for a in ATTRS)


def completing(scene: Scene) -> int | None:
    """0-based index of the candidate equal to the solution in every attribute, None if there is none."""
    want = solution(scene)
    return next((i for i, c in enumerate(scene.candidates) if tuple(c) == want), None)


def slot_px(scene: Scene) -> float:
    return (PANEL_PX - 2 * PAD_PX[scene.grid]) / scene.grid


def diameter_px(size: int) -> float:
    """The diameter of the ring a shape of this size level is inscribed in, in panels and key alike."""
    return D1_PX * 2 ** ((size - 1) / 4)


def panels(scene: Scene) -> list[tuple[int, int, int, int]]:
    """Attributes of the 16 drawn panels: 8 matrix panels (reading order, "?" left out), then the 8 candidates."""
    return [tuple(scene.values[a][p] for a in range(4)) for p in range(8)] + [tuple(c) for c in scene.candidates]


def min_gap_px(scene: Scene) -> float:
    """Smallest clearance between two objects of one panel: the slot pitch minus the ring's diameter (rings are
    centred on the slots and hold the shape in any orientation)."""
    gaps = [slot_px(scene) - diameter_px(s) for n, _, s, _ in panels(scene) if n > 1]
    return float(min(gaps, default=slot_px(scene)))


# --- answers ------------------------------------------------------------------------------------------------------

def top_left_count(scene: Scene) -> Count:
    return Count(attr_values(scene, "number")[0], low=1, high=scene.grid ** 2)


def number_rule(scene: Scene) -> Choice:
    return Choice(rule_fit(scene, "number")[0][0], RULES)


def missing_count(scene: Scene) -> Count:
    return Count(rule_fit(scene, "number")[1], low=1, high=scene.grid ** 2)


def answer_candidate(scene: Scene) -> Choice:
    i = completing(scene)
    if i is None:
        raise Reject("no_completing_candidate")
    return Choice(OPTIONS[i], OPTIONS)


def completing_or_none(scene: Scene) -> Choice:
    i = completing(scene)
    return Choice(NONE if i is None else OPTIONS[i], OPTIONS + (NONE,))


def rules_of_others(scene: Scene) -> Record:
    return Record(tuple((a, Choice(rule_fit(scene, a)[0][0], rv.admits(a))) for a in ("type", "size", "colour")))


def _with_count(slots: tuple[int, ...], n: int, grid: int) -> tuple[int, ...]:
    """A panel's slots for a new count, deterministically: keep the first ones, fill the lowest free ones."""
    free = [s for s in range(grid * grid) if s not in slots]
    return tuple(sorted(slots[:n] if n <= len(slots) else slots + tuple(free[:n - len(slots)])))


def _set_values(scene: Scene, attr: str, changes: dict[int, int]) -> Scene:
    """The scene with `attr` set to new levels in some visible panels (counts also move the objects' slots)."""
    a = ATTRS.index(attr)
    vals = list(scene.values[a])
    slots = list(scene.slots)
    for p, v in changes.items():
        vals[p] = int(v)
        if attr == "number":
            slots[p] = _with_count(scene.slots[p], int(v), scene.grid)
    values = scene.values[:a] + (tuple(vals),) + scene.values[a + 1:]
    return replace(scene, values=values, slots=tuple(slots))


def edit(scene: Scene) -> Scene:
    """Q5's edit: row 3, column 2 (visible panel 7) takes `edit_value` in X (type, size or grey), nothing else."""
    return _set_values(scene, scene.edit_attr, {7: scene.edit_value})


counterfactual = completing_or_none


def reference_panel(scene: Scene) -> int | None:
    """The first visible panel in reading order, (3,2) excluded, that shows X's new value: Q5 names the value by
    this panel, never in words, so that a distribute-three edit (whose new value is the old missing one) does not
    print the missing count or type in the question."""
    vals = attr_values(scene, scene.edit_attr)
    return next((p for p in range(7) if vals[p] == scene.edit_value), None)


def _where(p: int) -> str:
    return f"row {p // 3 + 1}, column {p % 3 + 1}"


def edit_text(scene: Scene) -> str:
    ref = reference_panel(scene)
    where = _where(ref) if ref is not None else "(no panel)"
    return {"type": f"the shapes in row 3, column 2 had the same type as the shapes in {where} (same number, size "
                    f"and grey as now)",
            "size": f"the shapes in row 3, column 2 were the same size as the shapes in {where}",
            "colour": f"the shapes in row 3, column 2 had the same grey as the shapes in {where}"}[scene.edit_attr]


# --- ladder -------------------------------------------------------------------------------------------------------

def _q4_margin(scene: Scene) -> Margin:
    return Margin(float(min(rule_margins(scene).values())), "panel values", RULE_MARGIN,
                  "a second rule hypothesis fits some attribute as drawn")


def notes(scene: Scene) -> str:
    return SIZE_NOTE + (TURN_NOTE if scene.level == 3 else "")


@functools.lru_cache(maxsize=64)
def ladder(scene: Scene) -> Ladder:
    """Cached: the sampler, the build, Q4's rephrasing and the twin each ask for the same scenes' ladders."""
    rm = rule_margins(scene)
    number_m = Margin(float(rm["number"]), "panel values", RULE_MARGIN, "a second rule fits the number of shapes")
    edited = edit(scene)
    q5_m = float(min(rule_margins(edited).values())) if reference_panel(scene) is not None else 0.0
    rungs = (
        Question(1, "top_left_count", "How many shapes are in the top-left panel of the 3x3 matrix?",
                 top_left_count(scene), Margin(min_gap_px(scene), "px", MIN_GAP_PX,
                                               "two shapes of a panel close enough to merge")),
        Question(2, "number_rule", "Which rule governs the number of shapes along each row of the matrix? "
                 "constant: the same in a row; progression: a fixed step from panel to panel; arithmetic: the "
                 "third panel is the sum or the difference of the first two; distribute-three: every row shows "
                 "the same three different values in some order.", number_rule(scene), number_m),
        Question(3, "missing_count", "How many shapes should the missing panel (the \"?\", row 3, column 3) "
                 "contain?", missing_count(scene), number_m),
        Question(4, "answer_candidate", f"Which of the numbered candidates 1-8 completes the matrix? {notes(scene)}",
                 answer_candidate(scene), _q4_margin(scene)),
        Question(5, "edited_candidate", f"Suppose {edit_text(scene)}, everything else unchanged. Which candidate "
                 "would then complete the matrix? Answer none if no candidate would.", counterfactual(edited),
                 Margin(q5_m, "panel values", RULE_MARGIN, "a second rule hypothesis fits the edited matrix"),
                 edit=f"row 3, column 2 takes {scene.edit_attr} level {scene.edit_value}"),
    )
    others = min(rm["type"], rm["size"], rm["colour"])
    open_q = Question(6, "other_rules", "Explain which row rule governs the type of the shapes, their size and "
                      "their grey (colour), using the levels numbered by the keys beside the matrix, and how each "
                      f"one shows in the matrix. {notes(scene)}", rules_of_others(scene),
                      Margin(float(others), "panel values", RULE_MARGIN, "a second rule fits type, size or grey"))
    return Ladder(rungs, open_q)


def rephrase_q4(scene: Scene) -> Question:
    return Question(4, "consistent_candidate", "Which candidate is the only one consistent with every row rule of "
                    f"the matrix (number, type, size and grey of the shapes)? {notes(scene)}", answer_candidate(scene),
                    _q4_margin(scene))


def minimal_pair(scene: Scene) -> Scene:
    """Change only row 3's visible panels, in one tree attribute Y != X (first in ATTRS order that works), so that
    Y's rule (same rule, same parameter) requires the tree's alternative a_Y: Q4 moves to the candidate that differs
    from the old answer only in Y."""
    sol = solution(scene)
    for y in ATTRS:
        a = ATTRS.index(y)
        alts = {c[a] for c in scene.candidates} - {sol[a]}
        if y == scene.edit_attr or len(alts) != 1:
            continue
        alt, m = alts.pop(), rv.domain_size(y, scene.grid)
        (rule, p), _ = rule_fit(scene, y)
        c1, c2 = attr_values(scene, y)[6:8]
        if rule == CONST:
            ch = {6: alt, 7: alt}
        elif rule == PROG:
            ch = {6: alt - 2 * p, 7: alt - p}
        elif rule == ARITH:
            ch = {6: alt - p * c2}
        elif alt in (c1, c2):
            ch = {6 if c1 == alt else 7: sol[a]}
        else:
            continue
        if not all(1 <= v <= m for v in ch.values()):
            continue
        twin = _set_values(scene, y, ch)
        try:
            lad = ladder(twin)
        except Reject:
            continue
        if not lad.failing_margins() and lad.rungs[3].answer != answer_candidate(scene):
            return twin
    raise Reject("no_minimal_pair")


# --- sampling -----------------------------------------------------------------------------------------------------

def sample(rng: np.random.Generator, level: int) -> Scene:
    """Targets first: number's rule (Q2), the completing candidate's place (Q4), Q5's answer (none in 1/9 of items,
    else uniform over the other seven places) and, per attribute, whether its alternative lies above or below the
    correct value; then scenes are drawn for those targets."""
    if level not in (1, 2, 3):
        raise ValueError(f"progressive_matrices: level must be 1, 2 or 3, got {level!r}")
    grid = 2 if level < 3 else 3
    d = Draws(rng)   # the Generator's own scalar draws, cheaper (its shuffles stay: cheaper still)
    q2 = RULES[d.integers(4)]
    q4 = d.integers(8)
    q5 = None if d.random() < 1 / 9 else [i for i in range(8) if i != q4][d.integers(7)]
    up = {a: d.random() < 0.5 for a in ATTRS}
    for _ in range(TRIES):
        s = _try(rng, d, level, grid, q2, q4, q5, up)
        if s is not None:
            return s
    raise Reject("no_scene_for_targets")


def _try(rng, d: Draws, level, grid, q2, q4, q5, up) -> Scene | None:
    ruled = ["number"] + [ATTRS[1 + i] for i in d.subset(3, RULED[level] - 1)]
    for _ in range(20):
        rules = {a: (q2 if a == "number" else rv.admits(a)[d.integers(len(rv.admits(a)))]) if a in ruled
                 else CONST for a in ATTRS}
        if any(rules[a] in (ARITH, DIST) for a in ATTRS[1:]):
            break
    else:
        return None
    vals = {}
    for a in ATTRS:
        for _ in range(20):
            v = rv.rows_for(rng, d, a, grid, rules[a], fixed=a not in ruled)
            if rv.rule_margin(a, grid, v[:8]) >= RULE_MARGIN:
                vals[a] = v
                break
        else:
            return None
    # X is never number: the edit exists only for arithmetic and distribute-three, so editing number would tell
    # Q2's answer is one of those two. Number's rule is drawn apart from the others, so Q5's text says nothing of it.
    eligible = [a for a in ATTRS[1:] if rules[a] in (ARITH, DIST)]
    x = eligible[d.integers(len(eligible))]
    got = rv.edit_for(d, x, grid, rules[x], vals[x])
    if got is None:
        return None
    w, new_missing = got
    correct = tuple(vals[a][8] for a in ATTRS)
    tree = ["number", x]
    rest = [a for a in ATTRS if a not in tree]
    tree += [rest[i] for i in d.subset(len(rest), 3 - len(tree))]
    alt = {}
    for a in tree:
        m, c = rv.domain_size(a, grid), correct[ATTRS.index(a)]
        if a == x and q5 is not None:
            alt[a] = new_missing if (new_missing > c) == up[a] and rv.far_enough(a, new_missing, c) else None
        else:
            alt[a] = rv.alternative(d, a, m, c, up[a], avoid=(new_missing,) if a == x else ())
        if alt[a] is None:
            return None
    combos = [tuple(alt[a] if a in tree and (bits >> tree.index(a)) & 1 else correct[i] for i, a in enumerate(ATTRS))
              for bits in range(8)]
    q5_combo = tuple(alt[x] if a == x else correct[i] for i, a in enumerate(ATTRS))
    order = [None] * 8
    order[q4] = correct
    rest_c = [c for c in combos if c != correct and (q5 is None or c != q5_combo)]
    if q5 is not None:
        order[q5] = q5_combo
    free = [i for i in range(8) if order[i] is None]
    for i, j in zip(free, rng.permutation(len(rest_c))):
        order[i] = rest_c[int(j)]
    counts = [vals["number"][p] for p in range(8)] + [c[0] for c in order]
    slots = tuple(tuple(sorted(d.subset(grid * grid, n))) for n in counts)
    angles = tuple(round(d.uniform(0, 360), 1) if level == 3 else 0.0 for _ in range(16))
    scene = Scene(level, grid, tuple(tuple(int(t) for t in vals[a][:8]) for a in ATTRS), tuple(order), slots, angles,
                  x, int(w))
    if diameter_px(1) / math.sqrt(2) < MIN_OBJECT_PX:
        raise ValueError("progressive_matrices: smallest object below 12 px")  # a constant broke, not a scene
    try:
        if ladder(scene).failing_margins():
            return None
        minimal_pair(scene)
    except Reject:
        return None
    return scene


# --- drawing ------------------------------------------------------------------------------------------------------

def panel_origin(k: int) -> tuple[float, float]:
    """Top-left corner (px) of panel k: 0..8 the matrix in reading order (8 = "?"), 9..16 the candidates 1..8."""
    if k < 9:
        return MATRIX_X0 + (k % 3) * (PANEL_PX + GAP_PX), TOP_PX + (k // 3) * (PANEL_PX + GAP_PX)
    c = k - 9
    return (CAND_X0 + (c % 4) * (PANEL_PX + CAND_GAP_PX),
            CAND_Y0 + BAND_PX + (c // 4) * (BAND_PX + PANEL_PX + CAND_ROW_GAP_PX))


def grey(level: int) -> tuple[float, float, float]:
    """CIE L* to an sRGB grey."""
    lab = L_STAR[level - 1]
    y = ((lab + 16) / 116) ** 3 if lab > 8 else lab / 903.3
    g = 12.92 * y if y <= 0.0031308 else 1.055 * y ** (1 / 2.4) - 0.055
    return (g, g, g)


def _ring(ctx, centre, d: float) -> None:
    ctx.new_sub_path()
    ctx.arc(centre[0], centre[1], d / 2, 0, 2 * math.pi)


def _shape(ctx, centre, t: int, d: float, angle_deg: float, fill, ring: bool = True) -> None:
    """One object inscribed in a circle of diameter d, with that circle drawn as a blue ring (a circle is its own
    ring). Drawn straight on the cairo context: no label ever needs the boxes of these 17 panels' shapes."""
    n = SIDES[t - 1]
    if n and ring:
        _ring(ctx, centre, d)
        _stroke(ctx, RING)
    if n == 0:
        _ring(ctx, centre, d)
    else:
        base = -90.0 + (45.0 if n == 4 else 0.0) + angle_deg       # a vertex up (squares sit on a side)
        for i in range(n):
            a = math.radians(base + 360 * i / n)
            (ctx.line_to if i else ctx.move_to)(centre[0] + d / 2 * math.cos(a), centre[1] + d / 2 * math.sin(a))
        ctx.close_path()
    ctx.set_source_rgb(*fill)
    ctx.fill_preserve()
    _stroke(ctx, BLACK)


def _box(ctx, x0: float, y0: float, side: float, fill=None) -> None:
    ctx.rectangle(x0, y0, side, side)
    if fill is not None:
        ctx.set_source_rgb(*fill)
        ctx.fill_preserve()
    _stroke(ctx, BLACK)


def _stroke(ctx, colour) -> None:
    ctx.set_source_rgb(*colour)
    ctx.set_line_width(2.0)          # text halos change the width: set it for every outline
    ctx.set_line_join(1)
    ctx.stroke()


def _panel(ctx, scene: Scene, k: int, attrs, slots, angle: float, frame: bool = True, shapes: bool = True) -> None:
    x0, y0 = panel_origin(k)
    if frame:
        _box(ctx, x0, y0, PANEL_PX)
    if not shapes:
        return
    _, t, s, c = attrs
    sp, pad = slot_px(scene), PAD_PX[scene.grid]
    d, fill = diameter_px(s), grey(c)
    for slot in slots:
        r, col = divmod(slot, scene.grid)
        _shape(ctx, (x0 + pad + (col + 0.5) * sp, y0 + pad + (r + 0.5) * sp), t, d, angle, fill)


def key_rings(scene: Scene) -> list[tuple[float, float, float]]:
    """The size key, right of the matrix: (x, y, diameter) of the ring for levels 1..5, at the panels' scale."""
    out, y = [], TOP_PX + 48
    for z in range(1, 6):
        d = diameter_px(z)
        out.append((676.0, y + d / 2, d))
        y += d + 10
    return out


def _keys(ctx, canvas, scene: Scene) -> None:
    """Keys beside the matrix that number the levels: grey and type on the left, size (the rings that panel shapes
    are inscribed in, drawn at the same scale) on the right."""
    small = TEXT.with_(font_px=15.0)
    draw_text_px(canvas, "grey level", (105.0, TOP_PX + 12), small)
    for g in range(1, 7):
        y = TOP_PX + 38 + (g - 1) * 26
        draw_text_px(canvas, str(g), (82.0, y), small)
        _box(ctx, 106.0, y - 10, 20.0, grey(g))
    draw_text_px(canvas, "type", (105.0, TOP_PX + 216), small)
    for t in range(1, 6):
        y = TOP_PX + 244 + (t - 1) * 28
        draw_text_px(canvas, str(t), (82.0, y), small)
        _shape(ctx, (116.0, y), t, 24.0, 0.0, (1.0, 1.0, 1.0), ring=False)
    draw_text_px(canvas, "size level", (663.0, TOP_PX + 12), small)
    draw_text_px(canvas, "(blue ring)", (663.0, TOP_PX + 30), small)
    for z, (x, y, d) in enumerate(key_rings(scene), start=1):
        draw_text_px(canvas, str(z), (632.0, y), small)
        _ring(ctx, (x, y), d)
        _stroke(ctx, RING)
    if scene.level == 3:
        for i, line in enumerate(("shapes are", "turned at", "random: a turn", "means nothing")):
            draw_text_px(canvas, line, (663.0, TOP_PX + 290 + 18 * i), small)


def _draw(scene: Scene, canvas, frame: bool = True, shapes: bool = True) -> None:
    """The picture in drawing order; `frame` is everything but the shapes (panel boxes, "?", keys, candidate
    numbers), which depends on the level only."""
    drawn, ctx = panels(scene), canvas.ctx
    for p in range(8):
        _panel(ctx, scene, p, drawn[p], scene.slots[p], scene.angles[p], frame, shapes)
    if frame:
        x0, y0 = panel_origin(8)
        _box(ctx, x0, y0, PANEL_PX, (0.93, 0.93, 0.93))
        draw_text_px(canvas, "?", (x0 + PANEL_PX / 2, y0 + PANEL_PX / 2), LABEL.with_(font_px=56.0))
        _keys(ctx, canvas, scene)
    for c in range(8):
        _panel(ctx, scene, 9 + c, drawn[8 + c], scene.slots[8 + c], scene.angles[8 + c], frame, shapes)
        if frame:
            cx, cy = panel_origin(9 + c)
            draw_text_px(canvas, OPTIONS[c], (cx + PANEL_PX / 2, cy - BAND_PX / 2 - 1), LABEL)


_FRAMES: dict[int, bytes] = {}          # level -> the frame's surface bytes, drawn on a blank canvas
STAMP_PX = 20                            # half the side of a shape's stamp: a level-5 ring's 17 px radius, 1 px of
                                         # stroke and 1 of antialiasing, rounded up


def _surface_bytes(canvas) -> np.ndarray:
    canvas.surface.flush()
    return np.frombuffer(canvas.surface.get_data(), dtype=np.uint8)


@functools.lru_cache(maxsize=None)
def _stamp(t: int, s: int, c: int) -> np.ndarray:
    """The surface bytes (rows) of one unturned shape drawn alone, centred on a pixel corner."""
    blank = Canvas(2 * STAMP_PX)
    _shape(blank.ctx, (float(STAMP_PX), float(STAMP_PX)), t, diameter_px(s), 0.0, grey(c))
    return _surface_bytes(blank).reshape(2 * STAMP_PX, -1)[:, :8 * STAMP_PX].copy()


def _stamp_shapes(scene: Scene, rows: np.ndarray) -> None:
    """The shapes of an unturned 2x2 scene, copied as stamps: their centres lie on pixel corners, where cairo draws
    a shape byte for byte alike at every position (checked for every type, size, grey and slot of the 2x2 grid)."""
    sp, pad = slot_px(scene), PAD_PX[scene.grid]
    for p, (_, t, s, c) in enumerate(panels(scene)):
        x0, y0 = panel_origin(p if p < 8 else p + 1)
        stamp = _stamp(t, s, c)
        for slot in scene.slots[p]:
            r, col = divmod(slot, scene.grid)
            x, y = int(x0 + pad + (col + 0.5) * sp) - STAMP_PX, int(y0 + pad + (r + 0.5) * sp) - STAMP_PX
            rows[y:y + 2 * STAMP_PX, 4 * x:4 * (x + 2 * STAMP_PX)] = stamp


def draw(scene: Scene, canvas) -> None:
    """On a blank (all-white) canvas the frame's pixels are copied from the level's cached drawing and only the
    shapes are drawn (copied as stamps in an unturned 2x2 scene): the same bytes as drawing it all in order, as no
    shape meets a pixel the frame touches or reads (text halos look at the paper under them) and cairo composites
    each pixel on its own."""
    if canvas.world != (0.0, 0.0, float(canvas.size_px), float(canvas.size_px)) or canvas.size_px != 768:
        raise ValueError("progressive_matrices: draws on a 768 px canvas in pixel units")
    if scene.level not in _FRAMES:
        blank = Canvas(768)
        _draw(scene, blank, shapes=False)
        _FRAMES[scene.level] = blank.layer_bytes()
    if not canvas.paste_layer(_FRAMES[scene.level]):   # not a blank 768 px surface in pixel space: draw in order
        _draw(scene, canvas)
        return
    pixels = _surface_bytes(canvas)
    if scene.grid == 2 and not any(scene.angles):
        _stamp_shapes(scene, pixels.reshape(canvas.surface.get_height(), canvas.surface.get_stride()))
        canvas.surface.mark_dirty()
    else:
        canvas.surface.mark_dirty()
        _draw(scene, canvas, frame=False)


DOMAIN = Domain(
    id="progressive_matrices", family="inductive", title="Progressive matrices",
    scene=Scene, sample=sample, ladder=ladder, draw=draw, edit=edit, counterfactual=counterfactual,
    description="RAVEN-style 3x3 matrices with an I-RAVEN attribute-tree answer set of eight candidates: count, "
                "the rule for number, the missing count, the completing candidate, and the candidate once row 3, "
                "column 2 is edited.",
    balance_keys=("top_left_count", "number_rule", "missing_count", "answer_candidate", "edited_candidate"),
    minimal_pair=minimal_pair, rephrase_q4=rephrase_q4, rephrase_map="identity", version=2,
)
