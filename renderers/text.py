"""Text with one pinned font (DejaVu Sans / DejaVu Sans Bold), haloed labels and collision-checked placement.

pycairo's toy font API resolves family names through fontconfig. A missing DejaVu Sans would silently fall back
to another face and change every image, so the first use checks with `fc-match` and fails loudly instead.
`make` installs the font (Debian package fonts-dejavu-core) when it is missing."""
from __future__ import annotations

import functools
import math
import subprocess

import cairo
import numpy as np
from shapely.geometry import Polygon, box
from shapely.ops import polylabel

from grip.domain import Reject
from grip.renderers.canvas import Canvas
from grip.renderers.style import LABEL, Style

FONT_FAMILY = "DejaVu Sans"


class FontMissing(RuntimeError):
    pass


@functools.lru_cache(maxsize=None)
def check_font() -> str:
    """Path of the file fontconfig resolves for DejaVu Sans (regular and bold); raises FontMissing otherwise."""
    files = []
    for spec in (FONT_FAMILY, FONT_FAMILY + ":bold"):
        try:
            out = subprocess.run(["fc-match", "-f", "%{file}", spec], capture_output=True, text=True,
                                 timeout=30).stdout
        except (OSError, subprocess.SubprocessError) as e:
            raise FontMissing(f"cannot run fc-match to find {FONT_FAMILY!r} ({e}); install fontconfig") from e
        want = "DejaVuSans-Bold.ttf" if spec.endswith("bold") else "DejaVuSans.ttf"
        if not out.endswith(want):
            raise FontMissing(f"font {spec!r} resolves to {out or 'nothing'!r}, not {want}: install "
                              f"fonts-dejavu-core (make does this)")
        files.append(out)
    return files[0]


def _select(canvas: Canvas, style: Style) -> None:
    check_font()
    ctx = canvas.ctx
    ctx.select_font_face(FONT_FAMILY, cairo.FONT_SLANT_NORMAL,
                         cairo.FONT_WEIGHT_BOLD if style.bold else cairo.FONT_WEIGHT_NORMAL)
    ctx.set_font_size(style.font_px)


def text_size(canvas: Canvas, text: str, style: Style) -> tuple[float, float]:
    """(width, height) in px of the ink box of `text`, halo included."""
    _select(canvas, style)
    ext = canvas.ctx.text_extents(text)
    return ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px


def text_box_px(canvas: Canvas, text: str, center_px, style: Style) -> Polygon:
    w, h = text_size(canvas, text, style)
    u, v = center_px
    return box(u - w / 2, v - h / 2, u + w / 2, v + h / 2)


def draw_text_px(canvas: Canvas, text: str, center_px, style: Style) -> Polygon:
    """Draw `text` centred on a pixel point, with a white halo when `style.halo_px` > 0. Returns its box."""
    _select(canvas, style)
    ctx = canvas.ctx
    ext = ctx.text_extents(text)
    u = center_px[0] - ext.width / 2 - ext.x_bearing
    v = center_px[1] - ext.height / 2 - ext.y_bearing
    if style.halo_px > 0:
        ctx.move_to(u, v)
        ctx.text_path(text)
        ctx.set_source_rgb(1, 1, 1)
        ctx.set_line_width(2 * style.halo_px)
        ctx.set_line_join(cairo.LINE_JOIN_ROUND)
        ctx.stroke()
    ctx.move_to(u, v)
    ctx.set_source_rgb(*style.text)
    ctx.show_text(text)
    ctx.new_path()
    w, h = ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px   # text_size's box, measured once
    return box(center_px[0] - w / 2, center_px[1] - h / 2, center_px[0] + w / 2, center_px[1] + h / 2)


def draw_text(canvas: Canvas, text: str, at, style: Style = LABEL, register: bool = True,
              check_safe: bool = True) -> Polygon:
    """Draw text centred on a world point. Raises Reject("text_clipped") if it leaves the safe area."""
    c = canvas.px(*at)
    b = text_box_px(canvas, text, c, style)
    if check_safe and not canvas.inside_safe(np.array(b.exterior.coords)):
        raise Reject("text_clipped")
    draw_text_px(canvas, text, c, style)
    if register:
        canvas.labels.append(b)
    return b


DIRECTIONS = tuple((math.cos(math.radians(a)), -math.sin(math.radians(a)))
                   for a in (0, 45, 90, 135, 180, 225, 270, 315))


def place_label(canvas: Canvas, text: str, anchor, owner: str | None, style: Style = LABEL,
                radii_px: tuple[float, ...] | None = None, clearance_px: float = 8.0,
                draw: bool = True) -> Polygon:
    """Try 8 directions x 2 radii (default: scaled to the text box) around a world anchor; keep the first spot whose box overlaps no placed label,
    stays `clearance_px` from every stroke not owned by `owner`, and lies in the safe area. No spot: Reject
    ("label_clash"), so the builder draws another scene."""
    a = np.asarray(canvas.px(*anchor))
    if radii_px is None:  # two rings far enough apart that a label on the outer one clears the inner one
        w, h = text_size(canvas, text, style)
        d = math.hypot(w, h)
        radii_px = (0.8 * d, 1.9 * d)
    return _first_free_spot(canvas, text, (a + np.asarray(d) * r for r in radii_px for d in DIRECTIONS), owner,
                            style, clearance_px, draw)


def _first_free_spot(canvas: Canvas, text: str, centres, owner: str | None, style: Style, clearance_px: float,
                     draw: bool) -> Polygon:
    """The first candidate centre (pixels) whose text box lies in the safe area, overlaps no placed label and keeps
    `clearance_px` from every stroke not owned by `owner`; drawn and registered. None fits: Reject("label_clash")."""
    for c in centres:
        b = text_box_px(canvas, text, c, style)
        if not canvas.inside_safe(np.array(b.exterior.coords)):
            continue
        if any(b.intersects(o) for o in canvas.labels):
            continue
        grown = b.buffer(clearance_px)
        if any(own != owner and grown.intersects(g) for own, g in canvas.strokes):
            continue
        if draw:
            draw_text_px(canvas, text, c, style)
        canvas.labels.append(b)
        return b
    raise Reject("label_clash")


def place_label_beside(canvas: Canvas, text: str, part_box_px, owner: str | None, style: Style = LABEL,
                       gaps_px: tuple[float, ...] = (10.0, 22.0), clearance_px: float = 8.0,
                       draw: bool = True) -> Polygon:
    """Like `place_label`, but the candidates hug a part's pixel bounding box (x0, y0, x1, y1): right, left, above,
    below, then the four corners, each `gap` px from the box, for each gap in turn. A label thus sits next to its own
    part whatever the text's width, instead of on a ring sized to the text. Same checks: no overlap with a placed
    label, `clearance_px` from every stroke not owned by `owner`, inside the safe area; none fits: Reject."""
    x0, y0, x1, y1 = part_box_px
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    w, h = text_size(canvas, text, style)
    centres = (c for g in gaps_px for c in (
        (x1 + g + w / 2, cy), (x0 - g - w / 2, cy), (cx, y0 - g - h / 2), (cx, y1 + g + h / 2),
        (x1 + g + w / 2, y0 - g - h / 2), (x0 - g - w / 2, y0 - g - h / 2),
        (x1 + g + w / 2, y1 + g + h / 2), (x0 - g - w / 2, y1 + g + h / 2)))
    return _first_free_spot(canvas, text, centres, owner, style, clearance_px, draw)


def label_inside(canvas: Canvas, text: str, region_world, style: Style = LABEL) -> Polygon:
    """Label at the pole of inaccessibility (polylabel) of a world polygon; rejects if the text does not fit."""
    poly = Polygon(canvas.pts_px(region_world))
    p = polylabel(poly, tolerance=1.0)
    b = text_box_px(canvas, text, (p.x, p.y), style)
    if not poly.contains(b):
        raise Reject("label_does_not_fit")
    draw_text_px(canvas, text, (p.x, p.y), style)
    canvas.labels.append(b)
    return b
