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
def rule_codes(rows: int, cols: int) -> np.ndarray:
    """(29, R*C) codes 16 k + 4 residue of every hypothesis rule k, row-major: plus a name index (< 4), the
    (rule, residue, name) cell of a (29, 4, 4) table."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    codes = np.array([16 * k + 4 * ((a * r + b * c) % m) for k, (m, a, b) in enumerate(RULES)], dtype=np.int64)
    codes.flags.writeable = False
    return codes


@lru_cache(maxsize=1024)
def grid(rule, rows: int, cols: int) -> np.ndarray:
    """Residue of `rule` per cell, row-major (cached: read-only)."""
    m, a, b = rule
    r, c = np.divmod(np.arange(rows * cols), cols)
    g = (a * r + b * c) % m
    g.flags.writeable = False
    return g


def identified(names: np.ndarray, hidden: np.ndarray, rows: int, cols: int) -> bool:
    """Every hypothesis rule consistent with the visible cells determines every hidden cell, and all predict the
    true names (`names`: name index per cell, row-major)."""
    codes = rule_codes(rows, cols) + names
    # seen[k, residue, name]: rule k shows that name at that residue on some visible cell
    seen = np.bincount(codes[:, ~hidden].ravel(), minlength=16 * len(RULES)).reshape(-1, 4, 4) > 0
    consistent = (seen.sum(2) <= 1).all(1) & (seen.sum(1) <= 1).all(1)
    # A consistent rule shows at most one name per residue, so it predicts a hidden cell's true name exactly when it
    # has seen that name at the cell's residue.
    return bool(seen.ravel()[codes[consistent][:, hidden]].all())


def witness(rule, hidden: np.ndarray, rows: int, cols: int) -> int:
    """Least number of visible cells showing any residue the true rule takes on the full grid."""
    g = grid(rule, rows, cols)
    return int(np.bincount(g[~hidden], minlength=rule[0])[np.bincount(g, minlength=rule[0]) > 0].min())


def gap_ok(r0, c0, h, w, b) -> np.ndarray:
    """`_apart` of many A rectangles (arrays) and one B."""
    if b is None:
        return np.ones(np.shape(r0), dtype=bool)
    gr = np.maximum(b[0] - (r0 + h), r0 - (b[0] + b[2]))
    gc = np.maximum(b[1] - (c0 + w), c0 - (b[1] + b[3]))
    return np.maximum(gr, gc) >= 1


@lru_cache(maxsize=16)
def _rects(rows: int, cols: int) -> tuple[np.ndarray, ...]:
    """Every A (row0, col0, h, w) inside the grid, h and w >= 2, w <= 3, at most 12 cells, as four arrays; then the
    cells under each, under it moved one column right and moved one column left (0/1, rows x row-major cells)."""
    r0, c0, h, w = (x.ravel() for x in np.meshgrid(np.arange(rows), np.arange(cols), np.arange(2, rows),
                                                   np.arange(2, min(3, cols - 1) + 1), indexing="ij"))
    keep = (r0 + h <= rows) & (c0 + w <= cols) & (h * w <= 12)
    r0, c0, h, w = r0[keep], c0[keep], h[keep], w[keep]
    r, c = np.arange(rows), np.arange(cols)
    in_rows = ((r0[:, None] <= r) & (r < (r0 + h)[:, None]))[:, :, None]
    under = [(in_rows & ((c0[:, None] + d <= c) & (c < (c0 + w)[:, None] + d))[:, None, :]).reshape(len(r0), -1)
             for d in (0, 1, -1)]
    return r0, c0, h, w, *under


@lru_cache(maxsize=2048)      # every (rows, cols, B) there is: 1292 keys, about 11 MB
def candidates(rows: int, cols: int, b) -> tuple[np.ndarray, np.ndarray]:
    """Every A that fits beside B (None: no B) with a Q5 move and a minimal-pair move and hides 4..12 cells with B,
    as rows of (row0, col0, h, w, moved col0, pair row0): the same rules as `move_step` and `_pair_rect`. Then their
    cells as one weight per (A, cell), row-major: rows * cols + 1 for a cell hidden (under A or B), plus 1 for a cell
    under A moved. Summed over the cells of one kind that gives (hidden) * (rows * cols + 1) + (under A moved), both
    counts read back exactly."""
    r0, c0, h, w, under, under_right, under_left = _rects(rows, cols)
    total = h * w + (0 if b is None else b[2] * b[3])
    right = (c0 + w + 1 <= cols) & gap_ok(r0, c0 + 1, h, w, b)
    left = (c0 >= 1) & gap_ok(r0, c0 - 1, h, w, b)
    down = (r0 + h + 1 <= rows) & gap_ok(r0 + 1, c0, h, w, b)
    up = (r0 >= 1) & gap_ok(r0 - 1, c0, h, w, b)
    keep = gap_ok(r0, c0, h, w, b) & (right | left) & (down | up) & (total >= 4) & (total <= 12)
    pl = np.column_stack([r0, c0, h, w, np.where(right, c0 + 1, c0 - 1), np.where(down, r0 + 1, r0 - 1)])[keep]
    hidden = under[keep]
    if b is not None:
        r, c = np.arange(rows), np.arange(cols)
        hidden |= (((b[0] <= r) & (r < b[0] + b[2]))[:, None] & ((b[1] <= c) & (c < b[1] + b[3]))).ravel()
    moved = np.where(right[keep, None], under_right[keep], under_left[keep])
    weights = (hidden * (rows * cols + 1) + moved).astype(np.float32)
    pl.flags.writeable = weights.flags.writeable = False
    return pl, weights


_STAR = [(float(np.cos(a)), float(np.sin(a))) for a in (-np.pi / 2 + i * np.pi / 5 for i in range(10))]


@lru_cache(maxsize=8)
def _star_offsets(rad: float) -> tuple[tuple[float, float], ...]:
    """The star's corners from its centre: tips at `rad`, inner corners at 0.45 `rad`."""
    return tuple((rr * ca, rr * sa) for rr, (ca, sa) in zip((rad, rad * 0.45) * 5, _STAR))


def star(cx: float, cy: float, rad: float) -> list[tuple[float, float]]:
    return [(cx + dx, cy + dy) for dx, dy in _star_offsets(rad)]


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
