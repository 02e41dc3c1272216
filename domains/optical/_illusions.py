"""Geometry and drawing of the five illusion figures (optical_illusions): every element in px (y down), derived from
the scene alone, so that the legibility rules, the label spots and the renderer read one layout."""
from __future__ import annotations

import math
from functools import lru_cache

import cairo
import numpy as np

from grip.geometry import segment_distances
from grip.renderers.canvas import Canvas
from grip.renderers.style import BLACK, LABEL
from grip.renderers.text import draw_text_px, text_box_px

TARGET_PX = 4.0            # target strokes
CONTEXT_PX = 2.0           # context strokes
CONTEXT_RGB = (0.22, 0.22, 0.22)
GRID_RGB = (0.90, 0.90, 0.90)
BOTTOM = 740.0             # lowest drawn row: 4 px inside the safe area (no antialiased ink in the border)
CLEAR_PX = 6.0             # context from context and from targets
BAR_CLEAR_PX = 12.0        # Ponzo: rails and cross-ties from the bars
TIE_GAP_PX = 12.0          # Ponzo: cross-ties from each other (they are counted)
DISTRACTOR_CLEAR_PX = 24.0


def is_plus(scene, i: int) -> bool:
    """Whether target i (0 = A, 1 = B) carries the class that makes a target look larger."""
    return scene.a_plus == (i == 0)


def ml_fins(scene, i: int) -> list[tuple[float, float, float, float]]:
    """Müller-Lyer fins of shaft i as segments (vertex -> free end). Arrowheads (<->): the fins point back over the
    shaft; tails (>-<): away from it; inner fins sit `spacing` px further in along the shaft."""
    length, deg, spacing = scene.fin
    (cx, cy), half = scene.anchors[i], scene.sizes[i] / 2
    tails = is_plus(scene, i)
    cos, dy = math.cos(math.radians(deg)), length * math.sin(math.radians(deg))
    out = []
    for end, n in zip((-1, 1), scene.fins[i]):
        dx = (end if tails else -end) * length * cos
        for j in range(n):
            vx = cx + end * (half - j * spacing)
            out += [(vx, cy, vx + dx, cy - dy), (vx, cy, vx + dx, cy + dy)]
    return out


def ebb_inducers(scene, i: int) -> list[tuple[float, float, float]]:
    """(cx, cy, r) of the circles around disc i, sized from the disc the context was built for (`ref_px`)."""
    d = scene.ref_px[i]
    ring, r = (0.85 * d, 0.2 * d) if is_plus(scene, i) else (1.375 * d, 0.625 * d)
    cx, cy = scene.anchors[i]
    n = scene.inducers[i]
    return [(cx + ring * math.cos(math.radians(scene.phase_deg[i] + 360 * j / n)),
             cy + ring * math.sin(math.radians(scene.phase_deg[i] + 360 * j / n)), r) for j in range(n)]


def ponzo_rail_half(scene, y: float) -> float:
    """Half the distance between the rails at height y (px)."""
    ax, ay, half_deg = scene.rails
    return (y - ay) * math.tan(math.radians(half_deg))


def target_segments(scene) -> list[tuple[float, float, float, float]]:
    """The two targets as segments (line types) in target order A, B."""
    k = scene.kind
    if k in ("muller_lyer", "ponzo"):
        return [(x - m / 2, y, x + m / 2, y) for (x, y), m in zip(scene.anchors, scene.sizes)]
    if k == "vertical_horizontal":
        (x, y), out = scene.anchors[0], []
        for i, m in enumerate(scene.sizes):
            out.append((x, y - TARGET_PX / 2, x, y - TARGET_PX / 2 - m) if is_plus(scene, i)
                       else (x - m / 2, y, x + m / 2, y))
        return out
    return []


def extent(scene, i: int) -> tuple[float, float, float, float]:
    """Bounding box (x0, y0, x1, y1) of target i with its own context (px, strokes included)."""
    k, (cx, cy), m = scene.kind, scene.anchors[i], scene.sizes[i]
    if k == "muller_lyer":
        fins = ml_fins(scene, i)
        xs = [f[0] for f in fins] + [f[2] for f in fins] + [cx - m / 2, cx + m / 2]
        ys = [f[1] for f in fins] + [f[3] for f in fins] + [cy]
        return (min(xs) - 2, min(ys) - 2, max(xs) + 2, max(ys) + 2)
    if k == "ebbinghaus":
        r = max([m / 2] + [math.hypot(x - cx, y - cy) + rr + 1 for x, y, rr in ebb_inducers(scene, i)])
    elif k == "delboeuf":
        r = max([m / 2] + [d / 2 + 1 for d in scene.rings[i]])
    else:
        x0, y0, x1, y1 = target_segments(scene)[i]
        return (min(x0, x1) - 2, min(y0, y1) - 2, max(x0, x1) + 2, max(y0, y1) + 2)
    return (cx - r, cy - r, cx + r, cy + r)


def label_spot(scene, i: int) -> tuple[float, float]:
    """Centre (px) of target i's letter: left of a shaft's figure, above a disc's figure, left of the left rail at a
    Ponzo bar's height, right of the vertical segment / below the horizontal one."""
    k = scene.kind
    x0, y0, x1, y1 = extent(scene, i)
    if k == "muller_lyer":
        return x0 - 20, scene.anchors[i][1]
    if k in ("ebbinghaus", "delboeuf"):
        return scene.anchors[i][0], y0 - 20
    if k == "ponzo":
        y = scene.anchors[i][1]
        return scene.rails[0] - ponzo_rail_half(scene, y) - 24, y
    sx0, sy0, sx1, sy1 = target_segments(scene)[i]
    if sx0 == sx1:                              # the vertical one
        return sx0 + 20, sy1 + 0.3 * (sy0 - sy1)
    return sx0 + 0.8 * (sx1 - sx0), sy0 + 22


def context_gap_px(scene) -> float:
    """How far the tightest clearance rule is exceeded (px; >= 0 passes). Centre lines of context strokes, or a
    context centre line and a target's edge, keep `CLEAR_PX` (Ponzo rails and ties from the bars `BAR_CLEAR_PX`,
    ties from each other `TIE_GAP_PX`; vertical-horizontal distractors `DISTRACTOR_CLEAR_PX` from everything)."""
    k = scene.kind
    gaps = [math.inf]
    if k == "muller_lyer":
        length, deg, spacing = scene.fin
        gaps.append(spacing * math.sin(math.radians(deg)) - CLEAR_PX)
    elif k == "ebbinghaus":
        for i in range(2):
            cx, cy = scene.anchors[i]
            cs = ebb_inducers(scene, i)
            gaps += [math.hypot(x - cx, y - cy) - r - scene.sizes[i] / 2 - CLEAR_PX for x, y, r in cs]
            gaps += [math.hypot(cs[j][0] - cs[j - 1][0], cs[j][1] - cs[j - 1][1]) - 2 * cs[j][2] - CLEAR_PX
                     for j in range(len(cs))]
    elif k == "delboeuf":
        for i in range(2):
            ds = sorted(scene.rings[i])
            gaps.append(ds[0] / 2 - scene.sizes[i] / 2 - CLEAR_PX)
            gaps += [(b - a) / 2 - CLEAR_PX for a, b in zip(ds, ds[1:])]
    elif k == "ponzo":
        th = math.radians(scene.rails[2])
        for (x, y), m in zip(scene.anchors, scene.sizes):
            gaps.append((ponzo_rail_half(scene, y) - m / 2) * math.cos(th) - TARGET_PX / 2 * math.sin(th)
                        - BAR_CLEAR_PX)
            gaps += [abs(t - y) - TARGET_PX / 2 - BAR_CLEAR_PX for t in scene.ties]
        ts = sorted(scene.ties)
        gaps += [b - a - TIE_GAP_PX for a, b in zip(ts, ts[1:])]
    elif scene.distractors:
        segs = np.array(target_segments(scene) + list(scene.distractors), dtype=float).reshape(-1, 4)
        d = segment_distances(segs[:, :2], segs[:, 2:], segs[2:, :2], segs[2:, 2:])
        for j in range(len(scene.distractors)):
            d[2 + j, j] = np.inf
        gaps.append(float(d.min()) - TARGET_PX / 2 - DISTRACTOR_CLEAR_PX)
    return float(min(gaps))


def figures_gap_px(scene) -> float:
    """Gap between the two figures' boxes (px); inf where the targets share one figure (Ponzo, the T)."""
    if scene.kind in ("ponzo", "vertical_horizontal"):
        return math.inf
    a, b = extent(scene, 0), extent(scene, 1)
    return max(b[0] - a[2], a[0] - b[2], b[1] - a[3], a[1] - b[3])


def label_boxes(scene, canvas: Canvas):
    return [text_box_px(canvas, "AB"[i], label_spot(scene, i), LABEL) for i in range(2)]


# --- drawing ----------------------------------------------------------------------------------------------------

def _stroke(ctx, colour, width: float) -> None:
    ctx.set_source_rgb(*colour)
    ctx.set_line_width(width)
    ctx.set_line_cap(cairo.LINE_CAP_BUTT)
    ctx.set_line_join(cairo.LINE_JOIN_MITER)
    ctx.stroke()


def _segments(ctx, segs, colour, width: float) -> None:
    for x0, y0, x1, y1 in segs:
        ctx.move_to(x0, y0)
        ctx.line_to(x1, y1)
    _stroke(ctx, colour, width)


def _circles(ctx, circles, colour, width: float) -> None:
    for cx, cy, r in circles:
        ctx.new_sub_path()
        ctx.arc(cx, cy, r, 0, 2 * math.pi)
    _stroke(ctx, colour, width)


@lru_cache(maxsize=4)
def _grid_layer(size_px: int, world) -> bytes:
    """The surface bytes of a fresh canvas with the level-1 background grid on it."""
    canvas = Canvas(size_px, world)
    _draw_grid(canvas)
    return canvas.layer_bytes()


def _draw_grid(canvas: Canvas) -> None:
    _segments(canvas.ctx, [(x, 30, x, BOTTOM) for x in range(30, 741, 10)]
              + [(30, y, BOTTOM, y) for y in range(30, 741, 10)], GRID_RGB, 1.0)


def draw_figure(scene, canvas: Canvas) -> None:
    """Straight cairo in px (the canvas world is the pixel square): grid (level 1), context, targets, letters."""
    ctx, k = canvas.ctx, scene.kind
    if scene.level == 1:
        # The grid is the same in every level-1 picture and drawn first: drawn once onto a fresh canvas, its pixels
        # are copied onto a fresh one, else drawn here (every later stroke sets its own colour, width, cap and join).
        if not canvas.paste_layer(_grid_layer(canvas.size_px, canvas.world)):
            _draw_grid(canvas)
    if k == "muller_lyer":
        _segments(ctx, ml_fins(scene, 0) + ml_fins(scene, 1), CONTEXT_RGB, CONTEXT_PX)
    elif k == "ebbinghaus":
        _circles(ctx, ebb_inducers(scene, 0) + ebb_inducers(scene, 1), CONTEXT_RGB, CONTEXT_PX)
    elif k == "delboeuf":
        _circles(ctx, [(*scene.anchors[i], d / 2) for i in range(2) for d in scene.rings[i]], CONTEXT_RGB,
                 CONTEXT_PX)
    elif k == "ponzo":
        ax, ay, _ = scene.rails
        w = ponzo_rail_half(scene, BOTTOM)
        _segments(ctx, [(ax, ay, ax - w, BOTTOM), (ax, ay, ax + w, BOTTOM)], CONTEXT_RGB, CONTEXT_PX + 1)
        _segments(ctx, [(ax - ponzo_rail_half(scene, t), t, ax + ponzo_rail_half(scene, t), t) for t in scene.ties],
                  CONTEXT_RGB, CONTEXT_PX)
    else:
        _segments(ctx, list(scene.distractors), CONTEXT_RGB, CONTEXT_PX)
    if k in ("ebbinghaus", "delboeuf"):
        for (cx, cy), m in zip(scene.anchors, scene.sizes):
            ctx.new_sub_path()
            ctx.arc(cx, cy, m / 2, 0, 2 * math.pi)
        ctx.set_source_rgb(*BLACK)
        ctx.fill()
    else:
        _segments(ctx, target_segments(scene), BLACK, TARGET_PX)
    for i in range(2):
        draw_text_px(canvas, "AB"[i], label_spot(scene, i), LABEL)

