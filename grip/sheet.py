"""Contact sheets: a grid of items, each image with its ladder answers and margins printed under it."""
from __future__ import annotations

import cairo
import numpy as np
from PIL import Image

from grip import GripError
from grip.renderers.canvas import encode_png
from grip.renderers.text import FONT_FAMILY, check_font

LINE_PX = 17
FONT_PX = 13
TEXT_H = LINE_PX * 8
PAD = 12
# The sheet is one image in memory (4 bytes a pixel, twice over while it is encoded): bounds that keep it to about
# a gigabyte at worst.
MAX_ITEMS = 400
CELL_PX = (32, 2048)
MAX_COLS = 64
MAX_SIDE_PX = 16384


def sheet_size(n: int, cell: int, cols: int) -> tuple[int, int]:
    """Width and height in px of a sheet of n items."""
    rows = (n + cols - 1) // cols
    return cols * (cell + PAD) + PAD, rows * (cell + TEXT_H + PAD) + PAD


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


def _fit(text: str, ctx: cairo.Context, width: float) -> str:
    if ctx.text_extents(text).x_advance <= width:
        return text
    while text and ctx.text_extents(text + "…").x_advance > width:
        text = text[:-1]
    return text + "…"


def contact_sheet(items, cell: int = 384, cols: int = 3) -> bytes:
    """`items`: (caption, Generated) pairs. Returns PNG bytes."""
    check_sheet_size(len(items), cell, cols)
    check_font()
    text_h, pad = TEXT_H, PAD
    W, H = sheet_size(len(items), cell, cols)
    surf = cairo.ImageSurface(cairo.FORMAT_RGB24, W, H)
    ctx = cairo.Context(surf)
    ctx.set_source_rgb(0.97, 0.97, 0.97)
    ctx.paint()
    for k, (caption, g) in enumerate(items):
        x = pad + (k % cols) * (cell + pad)
        y = pad + (k // cols) * (cell + text_h + pad)
        img = Image.fromarray(g.rgb).resize((cell, cell), Image.LANCZOS)
        a = np.asarray(img)
        bgrx = np.zeros((cell, cell, 4), np.uint8)
        bgrx[:, :, :3] = a[:, :, ::-1]
        src = cairo.ImageSurface.create_for_data(memoryview(bgrx), cairo.FORMAT_RGB24, cell, cell, cell * 4)
        ctx.set_source_surface(src, x, y)
        ctx.paint()
        ctx.set_source_rgb(0.6, 0.6, 0.6)
        ctx.set_line_width(1)
        ctx.rectangle(x + 0.5, y + 0.5, cell - 1, cell - 1)
        ctx.stroke()
        ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_BOLD)
        ctx.set_font_size(FONT_PX)
        ctx.set_source_rgb(0, 0, 0)
        ctx.move_to(x, y + cell + LINE_PX)
        ctx.show_text(_fit(f"{caption}  ({g.attempts} attempts)", ctx, cell))
        ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL, cairo.FONT_WEIGHT_NORMAL)
        for j, q in enumerate(g.ladder.questions):
            tag = "O" if q.is_open else f"Q{q.position}"
            m = q.margin
            ratio = f"{m.value / m.threshold:.1f}x" if m.threshold else "-"
            line = f"{tag} {q.id}: {q.answer.reference_text()}  [m {ratio}]"
            ctx.move_to(x, y + cell + LINE_PX * (j + 2))
            ctx.show_text(_fit(line, ctx, cell))
    surf.flush()
    buf = np.frombuffer(surf.get_data(), np.uint8).reshape(H, surf.get_stride() // 4, 4)[:, :W, 2::-1]
    return encode_png(np.ascontiguousarray(buf))
