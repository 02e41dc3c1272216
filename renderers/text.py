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
import shapely
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


def _box(x0: float, y0: float, x1: float, y1: float) -> Polygon:
    """`shapely.geometry.box(x0, y0, x1, y1)`, corner for corner, built by shapely's vectorised constructor (about
    6x faster than the Python coordinate list of `box`). NaN corners, for which that one gives None, take `box`."""
    b = shapely.box(x0, y0, x1, y1)
    return b if b is not None else box(x0, y0, x1, y1)


def _extents(canvas: Canvas, text: str, style: Style) -> cairo.TextExtents:
    _select(canvas, style)
    return canvas.ctx.text_extents(text)


def text_size(canvas: Canvas, text: str, style: Style) -> tuple[float, float]:
    """(width, height) in px of the ink box of `text`, halo included."""
    ext = _extents(canvas, text, style)
    return ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px


def _box_corners(center_px, size: tuple[float, float]) -> tuple[float, float, float, float]:
    (u, v), (w, h) = center_px, size
    return u - w / 2, v - h / 2, u + w / 2, v + h / 2


def text_box_px(canvas: Canvas, text: str, center_px, style: Style) -> Polygon:
    return _box(*_box_corners(center_px, text_size(canvas, text, style)))


def draw_text_px(canvas: Canvas, text: str, center_px, style: Style) -> Polygon:
    """Draw `text` centred on a pixel point, with a white halo when `style.halo_px` > 0. Returns its box."""
    ext = _extents(canvas, text, style)
    _paint_text(canvas, text, center_px, style, ext)
    w, h = ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px   # text_size's box, measured once
    return _box(center_px[0] - w / 2, center_px[1] - h / 2, center_px[0] + w / 2, center_px[1] + h / 2)


def _paint_text(canvas: Canvas, text: str, center_px, style: Style, ext: cairo.TextExtents) -> None:
    """The drawing of `draw_text_px`, given the text's extents under the font `_select` set."""
    ctx = canvas.ctx
    u = center_px[0] - ext.width / 2 - ext.x_bearing
    v = center_px[1] - ext.height / 2 - ext.y_bearing
    if style.halo_px > 0:
        ctx.move_to(u, v)
        ctx.text_path(text)
        ctx.set_source_rgb(1, 1, 1)
        ctx.set_line_width(2 * style.halo_px)
        ctx.set_line_join(cairo.LINE_JOIN_ROUND)
        if canvas.white_under_stroke(style.halo_px):
            ctx.new_path()   # a halo on blank paper changes no pixel: skip its stroke, the bulk of a label's cost
        else:
            ctx.stroke()
    ctx.move_to(u, v)
    ctx.set_source_rgb(*style.text)
    ctx.show_text(text)
    ctx.new_path()


def draw_text(canvas: Canvas, text: str, at, style: Style = LABEL, register: bool = True,
              check_safe: bool = True) -> Polygon:
    """Draw text centred on a world point. Raises Reject("text_clipped") if it leaves the safe area."""
    c = canvas.px(*at)
    ext = _extents(canvas, text, style)
    corners = _box_corners(c, (ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px))
    if check_safe and not canvas.box_inside_safe(*corners):
        raise Reject("text_clipped")
    _paint_text(canvas, text, c, style, ext)
    b = _box(*corners)
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
    ext = _extents(canvas, text, style)   # one measure for every candidate, and the box is built only in the safe area
    size = ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px
    for c in centres:
        corners = _box_corners(c, size)
        if not canvas.box_inside_safe(*corners):
            continue
        b = _box(*corners)
        if any(b.intersects(o) for o in canvas.labels):
            continue
        # Only strokes near the box can come within the clearance (its buffer lies inside the box widened by it)
        x0, y0, x1, y1 = corners
        reach = clearance_px + 1.0
        near = canvas.strokes_near((x0 - reach, y0 - reach, x1 + reach, y1 + reach), owner)
        if near and _too_close(b, near, clearance_px):
            continue
        if draw:
            _paint_text(canvas, text, c, style, ext)
        canvas.labels.append(b)
        return b
    raise Reject("label_clash")


# `b.buffer(r)` rounds a box's corners with 16 chords per quarter circle, their ends on the circle: it holds every
# point within r cos(pi / 64) of the box and none farther than r.
_BUFFER_INNER = math.cos(math.pi / 64)


def _too_close(b: Polygon, near: list, r: float) -> bool:
    """Whether `b.buffer(r)` intersects any of `near`, settled by exact distances where they are clear of the
    buffer's chords by a margin; the buffer is built only for a geometry in between."""
    d = shapely.distance(b, near)
    if (d < r * _BUFFER_INNER - 1e-6).any():
        return True
    doubtful = [g for g, x in zip(near, d.tolist()) if x <= r + 1e-6]
    if not doubtful:
        return False
    grown = b.buffer(r)
    return any(grown.intersects(g) for g in doubtful)


def any_meets(tests) -> bool | None:
    """`any` over stroke tests that may be undecided (True, False, or None): True if one is True, else None if one
    is None, else False. Stops at the first True (`tests` may be a generator)."""
    out = False
    for m in tests:
        if m:
            return True
        if m is None:
            out = None
    return out


def place_label_screened(canvas: Canvas, text: str, anchor, owner: str | None, style: Style,
                         radii_px: tuple[float, ...], clearance_px: float, placed, meets) -> tuple[float, ...]:
    """`place_label(canvas, text, anchor, owner, style, radii_px=radii_px, clearance_px=clearance_px)`: the same
    candidates and checks, so the same spot, for a caller that knows its strokes exactly. Each candidate box (x0,
    y0, x1, y1) goes first to `meets(box)`: True if its clearance meets a stroke of another owner, False if it
    clears them all, None where only the buffered outlines can tell, which then decide as place_label does.
    `placed`: the bounds of `canvas.labels` (all boxes). Returns the bounds of the label's box."""
    w, h = text_size(canvas, text, style)
    ax, ay = canvas.px(*anchor)
    reach = clearance_px + 1.0
    for rad in radii_px:
        for dx, dy in DIRECTIONS:
            u, v = ax + dx * rad, ay + dy * rad
            x0, y0, x1, y1 = u - w / 2, v - h / 2, u + w / 2, v + h / 2
            if not canvas.box_inside_safe(x0, y0, x1, y1):
                continue
            # two boxes intersect (shapely) iff their closed extents overlap
            if any(a0 <= x1 and x0 <= a1 and b0 <= y1 and y0 <= b1 for a0, b0, a1, b1 in placed):
                continue
            m = meets((x0, y0, x1, y1))
            if m is None:                              # as place_label tests it
                near = canvas.strokes_near((x0 - reach, y0 - reach, x1 + reach, y1 + reach), owner)
                grown = shapely.box(x0, y0, x1, y1).buffer(clearance_px)
                m = any(grown.intersects(g) for g in near)
            if m:
                continue
            canvas.labels.append(draw_text_px(canvas, text, (u, v), style))
            return x0, y0, x1, y1
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
    ext = _extents(canvas, text, style)
    b = _box(*_box_corners((p.x, p.y), (ext.width + 2 * style.halo_px, ext.height + 2 * style.halo_px)))
    if not poly.contains(b):
        raise Reject("label_does_not_fit")
    _paint_text(canvas, text, (p.x, p.y), style, ext)
    canvas.labels.append(b)
    return b
