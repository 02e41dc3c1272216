"""Contact sheets: a grid of items, each image with its ladder answers and margins printed under it."""
from __future__ import annotations

import re

import cairo
import numpy as np
from PIL import Image

from grip import GripError
from grip.renderers.canvas import encode_png
from grip.renderers.text import FONT_FAMILY, check_font

LINE_PX = 17
FONT_PX = 13
TEXT_LINES = 11          # under each image: the caption, six questions, and up to four continuation lines
TEXT_H = LINE_PX * (TEXT_LINES + 1)
LEGEND_H = LINE_PX * 3     # two lines of legend above the grid
PAD = 12
INDENT = "    "
LEGEND = ("Q1-Q5 rungs, O the open question: id: reference answer [m R×], where R = margin ÷ rejection "
          "threshold (every kept item has R ≥ 1; [m –]: no threshold)")
# The sheet is one image in memory (4 bytes a pixel, twice over while it is encoded): bounds that keep it to about
# a gigabyte at worst.
MAX_ITEMS = 400
CELL_PX = (32, 2048)
MAX_COLS = 64
MAX_SIDE_PX = 16384


def sheet_size(n: int, cell: int, cols: int) -> tuple[int, int]:
    """Width and height in px of a sheet of n items."""
    rows = (n + cols - 1) // cols
    return cols * (cell + PAD) + PAD, LEGEND_H + rows * (cell + TEXT_H + PAD) + PAD


def check_sheet_size(n: int, cell: int, cols: int) -> None:
    if not 1 <= n <= MAX_ITEMS:
        raise GripError(f"--n must be from 1 to {MAX_ITEMS} items for a sheet, got {n}")
    if not CELL_PX[0] <= cell <= CELL_PX[1]:
        raise GripError(f"--cell must be from {CELL_PX[0]} to {CELL_PX[1]} px, got {cell}")
    if not 1 <= cols <= MAX_COLS:
        raise GripError(f"--cols must be from 1 to {MAX_COLS}, got {cols}")
    w, h = sheet_size(n, cell, cols)
    if max(w, h) > MAX_SIDE_PX:
        raise GripError(f"the sheet would be {w} x {h} px, over {MAX_SIDE_PX} px a side; use fewer --n, fewer "
                        f"--cols or a smaller --cell")


def attempts_text(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


def margin_tag(margin) -> str:
    """`[m R×]`, R = value / threshold (the sheet's legend says so); `[m –]` for a margin with no threshold."""
    return f"[m {margin.value / margin.threshold:.1f}×]" if margin.threshold else "[m –]"


def _fit(text: str, fits, width: float) -> str:
    """`text`, or as much of it as fits followed by an ellipsis (for a single value wider than the cell)."""
    if fits(text, width):
        return text
    while text and not fits(text + "…", width):
        text = text[:-1]
    return text + "…"


# Where an answer may break between lines: after a record's `; ` or a list's `, `, then at any space.
_BREAKS = (re.compile(r"(?<=; )"), re.compile(r"(?<=, )"), re.compile(r"(?<= )"))


def _pieces(text: str) -> list[str]:
    for rx in _BREAKS:
        parts = [p for p in rx.split(text) if p]
        if len(parts) > 1:
            return parts
    return [text]


def _wrap(head: str, answer: str, tail: str, fits, width: float, pieces: list[str] | None = None) -> list[str]:
    """`head + answer + tail` broken into lines of at most `width`, only between values of the answer (record
    fields, list items, words) or between the given `pieces`; continuation lines are indented."""
    lines, cur = [], head
    for piece in pieces if pieces is not None else _pieces(answer):
        if fits(cur + piece, width) or cur in (head, INDENT):
            cur += piece
        else:
            lines.append(cur.rstrip())
            cur = INDENT + piece
    if fits(cur + tail, width) or cur in (head, INDENT):
        lines.append(cur + tail)
    else:
        lines += [cur.rstrip(), INDENT + tail.strip()]
    return [_fit(line, fits, width) for line in lines]


def _shorten(lines: list[str], keep: int, fits, width: float) -> list[str]:
    """The first `keep` lines of one question, the last ending in `…` where whole values were left out."""
    if len(lines) <= keep:
        return lines
    return lines[:keep - 1] + [_fit(lines[keep - 1] + " …", fits, width)]


def cell_lines(caption: str, g, fits, width: float, max_lines: int = TEXT_LINES) -> list[str]:
    """The text under one image: the caption, then each question as `tag id: answer [m R×]`, wrapped between
    values. When the wrapped text needs more than `max_lines`, the questions with the most lines are shortened
    (whole values dropped, marked `…`), so a value is never cut in the middle. `fits(text, width)` measures."""
    per_q = []
    for q in g.ladder.questions:
        tag = "O" if q.is_open else f"Q{q.position}"
        per_q.append(_wrap(f"{tag} {q.id}: ", q.answer.reference_text(), f"  {margin_tag(q.margin)}", fits, width))
    keep = [len(x) for x in per_q]
    while sum(keep) > max_lines - 1 and max(keep) > 1:
        keep[keep.index(max(keep))] -= 1
    out = [_fit(f"{caption}  ({attempts_text(g.attempts)})", fits, width)]
    for lines, k in zip(per_q, keep):
        out += _shorten(lines, k, fits, width)
    return out


def paste_rgb(ctx: cairo.Context, rgb: np.ndarray, x: float, y: float, side: int) -> None:
    """Draw an RGB image scaled to `side` x `side` px at (x, y), with a thin grey frame."""
    img = Image.fromarray(rgb)
    if img.size[0] % side == 0 and img.size[0] > side:
        img = img.reduce(img.size[0] // side)    # a whole factor: box averaging, several times faster than Lanczos
    elif img.size != (side, side):
        img = img.resize((side, side), Image.LANCZOS)
    a = np.asarray(img)
    bgrx = np.zeros((side, side, 4), np.uint8)
    bgrx[:, :, :3] = a[:, :, ::-1]
    src = cairo.ImageSurface.create_for_data(memoryview(bgrx), cairo.FORMAT_RGB24, side, side, side * 4)
    ctx.set_source_surface(src, x, y)
    ctx.paint()
    ctx.set_source_rgb(0.6, 0.6, 0.6)
    ctx.set_line_width(1)
    ctx.rectangle(x + 0.5, y + 0.5, side - 1, side - 1)
    ctx.stroke()


def surface_png(surf: cairo.ImageSurface) -> bytes:
    """PNG bytes of an RGB24 cairo surface (through grip's encoder: no metadata, the same bytes every run)."""
    surf.flush()
    w, h = surf.get_width(), surf.get_height()
    buf = np.frombuffer(surf.get_data(), np.uint8).reshape(h, surf.get_stride() // 4, 4)[:, :w, 2::-1]
    return encode_png(np.ascontiguousarray(buf))


def set_font(ctx: cairo.Context, bold: bool = False, px: int = FONT_PX) -> None:
    ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL,
                         cairo.FONT_WEIGHT_BOLD if bold else cairo.FONT_WEIGHT_NORMAL)
    ctx.set_font_size(px)


def contact_sheet(items, cell: int = 384, cols: int = 3) -> bytes:
    """`items`: (caption, Generated) pairs. Returns PNG bytes."""
    check_sheet_size(len(items), cell, cols)
    check_font()
    W, H = sheet_size(len(items), cell, cols)
    surf = cairo.ImageSurface(cairo.FORMAT_RGB24, W, H)
    ctx = cairo.Context(surf)
    ctx.set_source_rgb(0.97, 0.97, 0.97)
    ctx.paint()

    def fits(text: str, width: float) -> bool:
        return ctx.text_extents(text).x_advance <= width

    set_font(ctx)
    ctx.set_source_rgb(0.25, 0.25, 0.25)
    legend = _wrap("", "", "", fits, W - 2 * PAD, _BREAKS[2].split(LEGEND))
    for j, line in enumerate(_shorten(legend, 2, fits, W - 2 * PAD)):
        ctx.move_to(PAD, PAD + FONT_PX + LINE_PX * j)
        ctx.show_text(line.strip())
    for k, (caption, g) in enumerate(items):
        x = PAD + (k % cols) * (cell + PAD)
        y = LEGEND_H + PAD + (k // cols) * (cell + TEXT_H + PAD)
        paste_rgb(ctx, g.rgb, x, y, cell)
        ctx.set_source_rgb(0, 0, 0)
        for j, line in enumerate(cell_lines(caption, g, fits, cell)):
            set_font(ctx, bold=j == 0)
            ctx.move_to(x, y + cell + LINE_PX * (j + 1))
            ctx.show_text(line)
    return surface_png(surf)
