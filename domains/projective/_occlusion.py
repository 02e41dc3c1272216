"""Private helpers of occluded_patterns: the hypothesis rules and the identifiability test, the enumeration of
occluder placements, and the batched symbol drawing."""
from __future__ import annotations

from functools import lru_cache

import cairo
import numpy as np

from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, OKABE_ITO, WHITE
from grip.renderers.text import FONT_FAMILY

SHAPES = ("circle", "square", "triangle", "star")
COLOURS = ("red", "blue", "green", "orange")
RGB = {"red": OKABE_ITO["vermillion"], "blue": OKABE_ITO["blue"], "green": OKABE_ITO["green"],
       "orange": OKABE_ITO["orange"]}
SIZES = ("large", "small")
SIZE_PX = {"large": 46.0, "small": 28.0}
RULES = tuple((m, a, b) for m in (2, 3, 4) for a in range(m) for b in range(m))   # 29 hypotheses


@lru_cache(maxsize=16)
def residues(rows: int, cols: int) -> np.ndarray:
    """(29, R*C) residues of every hypothesis rule, row-major."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    return np.array([(a * r + b * c) % m for m, a, b in RULES], dtype=np.int64)


def grid(rule, rows: int, cols: int) -> np.ndarray:
    m, a, b = rule
    r, c = np.divmod(np.arange(rows * cols), cols)
    return (a * r + b * c) % m


def identified(names: np.ndarray, hidden: np.ndarray, rows: int, cols: int) -> bool:
    """Every hypothesis rule consistent with the visible cells determines every hidden cell, and all predict the
    true names (`names`: name index per cell, row-major)."""
    res = residues(rows, cols)
    vis = ~hidden
    rv, nv = res[:, vis], names[vis]
    k = np.arange(len(RULES))[:, None]
    pairs = np.bincount((k * 16 + rv * 4 + nv).ravel(), minlength=16 * len(RULES)).reshape(-1, 4, 4) > 0
    consistent = (pairs.sum(2) <= 1).all(1) & (pairs.sum(1) <= 1).all(1)
    rh = res[consistent][:, hidden]
    p = pairs[consistent]
    rows_of = np.take_along_axis(p, rh[:, :, None], axis=1)        # (rules, hidden, 4): names seen for residue
    determined = rows_of.sum(2) == 1
    predicted = rows_of.argmax(2)
    return bool(determined.all() and (predicted == names[hidden][None, :]).all())


def witness(rule, hidden: np.ndarray, rows: int, cols: int) -> int:
    """Least number of visible cells showing any residue the true rule takes on the full grid."""
    g = grid(rule, rows, cols)
    return int(min(np.count_nonzero(g[~hidden] == v) for v in np.unique(g)))


def gap_ok(r0, c0, h, w, b) -> np.ndarray:
    """`_apart` of many A rectangles (arrays) and one B."""
    if b is None:
        return np.ones(np.shape(r0), dtype=bool)
    gr = np.maximum(b[0] - (r0 + h), r0 - (b[0] + b[2]))
    gc = np.maximum(b[1] - (c0 + w), c0 - (b[1] + b[3]))
    return np.maximum(gr, gc) >= 1


@lru_cache(maxsize=1024)
def placements(rows: int, cols: int, b) -> np.ndarray:
    """Every A (row0, col0, h, w) that fits beside B (None: no B) with a Q5 move and a minimal-pair move, as rows of
    (row0, col0, h, w, moved col0, pair row0); the same rules as `move_step` and `_pair_rect`."""
    r0, c0, h, w = (x.ravel() for x in np.meshgrid(np.arange(rows), np.arange(cols), np.arange(2, rows),
                                                   np.arange(2, min(3, cols - 1) + 1), indexing="ij"))
    inside = (r0 + h <= rows) & (c0 + w <= cols)
    ok = inside & gap_ok(r0, c0, h, w, b)
    right = (c0 + w + 1 <= cols) & gap_ok(r0, c0 + 1, h, w, b)
    left = (c0 >= 1) & gap_ok(r0, c0 - 1, h, w, b)
    down = (r0 + h + 1 <= rows) & gap_ok(r0 + 1, c0, h, w, b)
    up = (r0 >= 1) & gap_ok(r0 - 1, c0, h, w, b)
    keep = ok & (right | left) & (down | up)
    mc = np.where(right, c0 + 1, c0 - 1)
    pr = np.where(down, r0 + 1, r0 - 1)
    return np.column_stack([r0, c0, h, w, mc, pr])[keep]


def rect_counts(cum: np.ndarray, r0, c0, h, w) -> np.ndarray:
    return cum[:, r0 + h, c0 + w] - cum[:, r0, c0 + w] - cum[:, r0 + h, c0] + cum[:, r0, c0]


_STAR = [(float(np.cos(a)), float(np.sin(a))) for a in (-np.pi / 2 + i * np.pi / 5 for i in range(10))]


def star(cx: float, cy: float, rad: float) -> list[tuple[float, float]]:
    pts = []
    for i, (ca, sa) in enumerate(_STAR):
        rr = rad if i % 2 == 0 else rad * 0.45
        pts.append((cx + rr * ca, cy + rr * sa))
    return pts


def symbol_path(ctx, shape: str, d: float, cx: float, cy: float) -> float:
    """Adds one symbol's outline to the current path; returns where its letter's centre goes (y, px)."""
    if shape == "circle":
        ctx.new_sub_path()
        ctx.arc(cx, cy, d / 2, 0, 2 * np.pi)
        return cy
    if shape == "square":
        ctx.rectangle(cx - d * 0.42, cy - d * 0.42, d * 0.84, d * 0.84)
        return cy
    pts = ([(cx, cy - d / 2), (cx + d / 2, cy + d * 0.4), (cx - d / 2, cy + d * 0.4)] if shape == "triangle"
           else star(cx, cy + d * 0.04, d / 2 + 2))
    ctx.move_to(*pts[0])
    for p in pts[1:]:
        ctx.line_to(*p)
    ctx.close_path()
    return cy + (d * 0.12 if shape == "triangle" else d * 0.06)


def symbols(canvas: Canvas, cells) -> None:
    """Symbols straight on the cairo context (no label-collision bookkeeping: nothing is placed around them): the
    fills one colour at a time, every outline in one stroke, then the initials. `cells`: (shape, colour, size, cx,
    cy)."""
    ctx = canvas.ctx
    marks = []
    for colour in COLOURS:
        for shape, col, size, cx, cy in cells:
            if col == colour:
                symbol_path(ctx, shape, SIZE_PX[size], cx, cy)
        ctx.set_source_rgb(*RGB[colour])
        ctx.fill()
    for shape, col, size, cx, cy in cells:
        ty = symbol_path(ctx, shape, SIZE_PX[size], cx, cy)
        marks.append((col[0].upper(), (cx, ty), 16.0 if size == "large" else 14.0))
    ctx.set_source_rgb(*BLACK)
    ctx.set_line_width(2.0)
    ctx.set_line_join(1)
    ctx.stroke()
    letters(canvas, marks)


def letters(canvas: Canvas, letters) -> None:
    """Bold initials with a 2 px white halo: every halo in one stroke, every letter in one fill."""
    ctx = canvas.ctx
    ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_BOLD)
    ext: dict = {}
    placed = []
    for text, (u, v), font in letters:
        if (text, font) not in ext:
            ctx.set_font_size(font)
            e = ctx.text_extents(text)
            ext[text, font] = (e.width / 2 + e.x_bearing, e.height / 2 + e.y_bearing)
        dx, dy = ext[text, font]
        placed.append((text, font, u, v, u - dx, v - dy))
    for text, font, _, _, x, y in placed:
        ctx.set_font_size(font)
        ctx.move_to(x, y)
        ctx.text_path(text)
    ctx.set_source_rgb(*WHITE)
    ctx.set_line_width(4.0)
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.stroke_preserve()
    ctx.set_source_rgb(*BLACK)
    ctx.fill()
