"""Shape functions `(canvas, geometry, style)`: geometry in world units, style in pixels. Each returns the pixel
outline it drew as a shapely geometry, and registers it as a stroke (with an owner tag) for label collision checks.
The outline is a `LazyGeometry`, buffered on first use: most canvases never check a label against their strokes."""
from __future__ import annotations

import math

import numpy as np
from shapely.geometry import LineString, MultiLineString, Point, Polygon

from grip.renderers.canvas import Canvas, LazyGeometry
from grip.renderers.style import Style


def _apply(canvas: Canvas, style: Style, fill: bool = True) -> None:
    """Fill (unless `fill` is False: what `style.with_(fill=None)` would draw, without building that style) and
    stroke the current path, then clear it."""
    ctx = canvas.ctx
    if fill and style.fill is not None:
        ctx.set_source_rgb(*style.fill)
        if style.stroke is not None:
            ctx.fill_preserve()
        else:
            ctx.fill()
    if style.stroke is not None:
        ctx.set_source_rgb(*style.stroke)
        ctx.set_line_width(style.width_px)
        ctx.set_dash(list(style.dash_px))
        ctx.set_line_join(1)  # round
        ctx.set_line_cap(1)
        ctx.stroke()
        ctx.set_dash([])
    ctx.new_path()


def _trace(canvas: Canvas, pts_px: np.ndarray, closed: bool) -> None:
    ctx = canvas.ctx
    pts = pts_px.tolist()          # Python floats: the same values, without a numpy scalar per coordinate
    ctx.move_to(*pts[0])
    for u, v in pts[1:]:
        ctx.line_to(u, v)
    if closed:
        ctx.close_path()


def polyline(canvas: Canvas, pts, style: Style, owner: str | None = None):
    p = canvas.pts_px(pts)
    _trace(canvas, p, closed=False)
    _apply(canvas, style, fill=False)
    g = LazyGeometry(lambda: LineString(p).buffer(style.width_px / 2), p, style.width_px / 2)
    canvas.register_stroke(g, owner)
    return g


def line(canvas: Canvas, a, b, style: Style, owner: str | None = None):
    return polyline(canvas, [a, b], style, owner)


def segments(canvas: Canvas, segs, style: Style, owner: str | None = None, register: bool = True):
    """Many separate segments [(a, b), ...] stroked as one path: ticks, grids, rulers. With `register`, their union
    is recorded for label collision checks (skip it for backdrops no label needs to avoid)."""
    arr = canvas.pts_px(np.asarray(segs, float).reshape(-1, 2)).reshape(-1, 2, 2)
    ctx = canvas.ctx
    for (u0, v0), (u1, v1) in arr.tolist():   # Python floats: the same values, without numpy scalars
        ctx.move_to(u0, v0)
        ctx.line_to(u1, v1)
    _apply(canvas, style, fill=False)
    if not register:
        return None
    g = LazyGeometry(lambda: MultiLineString([tuple(map(tuple, s)) for s in arr]).buffer(style.width_px / 2),
                     arr.reshape(-1, 2), style.width_px / 2)
    canvas.register_stroke(g, owner)
    return g


def polygon(canvas: Canvas, pts, style: Style, owner: str | None = None):
    p = canvas.pts_px(pts)
    _trace(canvas, p, closed=True)
    _apply(canvas, style)
    # A filled shape blocks its whole area for labels of other parts; an outline only its stroke.
    half = style.width_px / 2 if style.stroke is not None else 0
    filled = style.fill is not None
    g = LazyGeometry(lambda: Polygon(p).buffer(half) if filled else Polygon(p).exterior.buffer(max(half, 0.5)),
                     p, max(half, 0.5))
    canvas.register_stroke(g, owner)
    return g


def rect(canvas: Canvas, x0: float, y0: float, x1: float, y1: float, style: Style, owner: str | None = None):
    return polygon(canvas, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], style, owner)


def circle(canvas: Canvas, center, radius: float, style: Style, owner: str | None = None):
    cx, cy = canvas.px(*center)
    r = canvas.len_px(radius)
    canvas.ctx.new_sub_path()
    canvas.ctx.arc(cx, cy, r, 0, 2 * math.pi)
    _apply(canvas, style)
    half = style.width_px / 2 if style.stroke is not None else 0
    filled = style.fill is not None

    def outline():
        disk = Point(cx, cy).buffer(r + half)
        return disk if filled else disk.difference(Point(cx, cy).buffer(max(r - half, 0)))
    g = LazyGeometry(outline, np.array([(cx, cy)]), r + half)
    canvas.register_stroke(g, owner)
    return g


def arc(canvas: Canvas, center, radius: float, a0_deg: float, a1_deg: float, style: Style,
        owner: str | None = None, n: int = 48):
    """Arc in world angles (counterclockwise from +x in a y-up world; clockwise on screen in a y-down world)."""
    t = np.radians(np.linspace(a0_deg, a1_deg, n))
    pts = np.column_stack([center[0] + radius * np.cos(t), center[1] + radius * np.sin(t)])
    return polyline(canvas, pts, style, owner)


def arrowhead(canvas: Canvas, tip_px, direction_px, style: Style, size_px: float = 16.0,
              owner: str | None = None):
    """Filled triangular head at a pixel tip pointing along a pixel direction."""
    d = np.asarray(direction_px, float)
    d = d / (np.linalg.norm(d) or 1.0)
    n = np.array([-d[1], d[0]])
    tip = np.asarray(tip_px, float)
    base = tip - d * size_px
    pts = np.array([tip, base + n * size_px * 0.45, base - n * size_px * 0.45])
    _trace(canvas, pts, closed=True)
    col = style.stroke if style.stroke is not None else (0, 0, 0)
    _apply(canvas, Style(stroke=col, fill=col, width_px=1.0))
    g = LazyGeometry(lambda: Polygon(pts), pts)
    canvas.register_stroke(g, owner)
    return g


def arrow(canvas: Canvas, a, b, style: Style, head_px: float = 16.0, owner: str | None = None):
    pa, pb = canvas.px(*a), canvas.px(*b)
    d = np.subtract(pb, pa)
    shaft_end = np.asarray(pb) - d / (np.linalg.norm(d) or 1.0) * head_px * 0.8
    g1 = polyline(canvas, [a, canvas.world_of(*shaft_end)], style, owner)
    g2 = arrowhead(canvas, pb, d, style, head_px, owner)
    return LazyGeometry(lambda: g1.geometry.union(g2.geometry))


def curved_arrow(canvas: Canvas, center, radius: float, a0_deg: float, a1_deg: float, style: Style,
                 head_px: float = 16.0, owner: str | None = None):
    """An arc from a0 to a1 (world angles) with a head at a1: turning direction shown by the head."""
    n = 48
    t = np.radians(np.linspace(a0_deg, a1_deg, n))
    pts = np.column_stack([center[0] + radius * np.cos(t), center[1] + radius * np.sin(t)])
    p = canvas.pts_px(pts)
    # stop the shaft short of the head so the round cap does not poke through the tip
    keep = np.cumsum(np.r_[0, np.linalg.norm(np.diff(p, axis=0), axis=1)])
    total = keep[-1]
    shaft = p[keep <= total - head_px * 0.7]
    _trace(canvas, shaft, closed=False)
    _apply(canvas, style, fill=False)
    g = LazyGeometry(lambda: LineString(shaft).buffer(style.width_px / 2), shaft, style.width_px / 2)
    canvas.register_stroke(g, owner)
    head = arrowhead(canvas, p[-1], p[-1] - p[-4], style, head_px, owner)
    return LazyGeometry(lambda: g.geometry.union(head.geometry))


def gear_outline(center, pitch_radius: float, teeth: int, module: float, phase_deg: float = 0.0) -> np.ndarray:
    """Spur gear outline with trapezoid teeth: addendum = module, dedendum = 1.25 module. Returns world points."""
    ra, rd = pitch_radius + module, pitch_radius - 1.25 * module
    pitch = 2 * math.pi / teeth
    ph = math.radians(phase_deg)
    cx, cy, cos, sin = center[0], center[1], math.cos, math.sin
    # root, flank up, tip land, flank down (fractions of one pitch)
    profile = [(frac * pitch, r) for frac, r in ((-0.5, rd), (-0.28, rd), (-0.14, ra), (0.14, ra), (0.28, rd))]
    angles = [(ph + k * pitch + off, r) for k in range(teeth) for off, r in profile]
    return np.array([(cx + r * cos(t), cy + r * sin(t)) for t, r in angles])


def dial_ticks(canvas: Canvas, center, r_outer: float, count: int, length: float, style: Style,
               start_deg: float = 0.0, span_deg: float = 360.0, every: int = 1, owner: str | None = None):
    """Radial ticks at `count` equal steps over `span_deg`, starting at `start_deg` (screen-clockwise from 12
    o'clock in a y-down world); only every `every`-th tick is drawn."""
    steps = count if span_deg >= 360 else count - 1
    for k in range(0, count, every):
        ang = math.radians(start_deg + span_deg * k / max(steps, 1))
        dx, dy = math.sin(ang), -math.cos(ang)
        a = (center[0] + dx * (r_outer - length), center[1] + dy * (r_outer - length))
        b = (center[0] + dx * r_outer, center[1] + dy * r_outer)
        line(canvas, a, b, style, owner)


def hatch(canvas: Canvas, x0: float, y0: float, x1: float, y1: float, spacing_px: float, style: Style,
          angle_deg: float = 45.0, owner: str | None = None):
    """Parallel hatching clipped to a world rectangle (e.g. a table or the ground)."""
    p = canvas.pts_px([(x0, y0), (x1, y1)])
    (u0, v0), (u1, v1) = p.min(axis=0), p.max(axis=0)
    ctx = canvas.ctx
    with canvas.layer():
        ctx.rectangle(u0, v0, u1 - u0, v1 - v0)
        ctx.clip()
        t = math.tan(math.radians(angle_deg))
        h = v1 - v0
        u = u0 - h / max(t, 1e-6)
        while u < u1 + spacing_px:
            ctx.move_to(u, v1)
            ctx.line_to(u + h / max(t, 1e-6), v0)
            u += spacing_px
        ctx.set_source_rgb(*(style.stroke or (0, 0, 0)))
        ctx.set_line_width(style.width_px)
        ctx.stroke()
    g = LazyGeometry(lambda: Polygon([(u0, v0), (u1, v0), (u1, v1), (u0, v1)]), p)
    canvas.register_stroke(g, owner)
    return g
