"""Canvas: one cairo surface and one world-to-pixel transform. Domains draw in world units; stroke widths and font
sizes stay in pixels. Also the register of placed labels and strokes used for collision checks."""
from __future__ import annotations

import io
import math
import zlib
from contextlib import contextmanager

import cairo
import numpy as np
from zlib_ng import zlib_ng as _zng
from shapely.geometry.base import BaseGeometry

SAFE_BORDER_PX = 24
_IDENTITY = cairo.Matrix()


class LazyGeometry:
    """A shapely geometry built on first use (`.geometry`, or any attribute, which it forwards): what the shape
    functions return and register, so that a canvas nobody checks labels against never pays for buffering. Made
    with the pixel points it lies around (`pts`, an (n, 2) array) and a distance `pad` it stays within, it also
    tells (`reach`) a box that holds it, without being built."""
    __slots__ = ("_make", "_geom", "_pts", "_pad", "_reach")

    def __init__(self, make, pts: np.ndarray | None = None, pad: float = 0.0):
        self._make, self._geom, self._pts, self._pad, self._reach = make, None, pts, pad, False

    def reach(self) -> tuple[float, float, float, float] | None:
        """A box (x0, y0, x1, y1) holding the geometry (a pixel wider than `pad` needs), or None when unknown.
        Computed once: the label search asks it of every stroke for every candidate."""
        if self._reach is False:
            if self._pts is None or not len(self._pts):
                self._reach = None
            else:
                (x0, y0), (x1, y1) = self._pts.min(axis=0).tolist(), self._pts.max(axis=0).tolist()
                d = self._pad + 1.0
                self._reach = (x0 - d, y0 - d, x1 + d, y1 + d)
        return self._reach

    @property
    def geometry(self) -> BaseGeometry:
        if self._geom is None:
            self._geom = self._make()
            self._make = None
        return self._geom

    def __getattr__(self, name):
        return getattr(self.geometry, name)

    def __repr__(self) -> str:
        return f"LazyGeometry({self.geometry!r})"


class Canvas:
    def __init__(self, size_px: int = 768, world: tuple[float, float, float, float] | None = None,
                 background: tuple[float, float, float] = (1.0, 1.0, 1.0)):
        self.size_px = int(size_px)
        self.world = tuple(world) if world is not None else (0.0, 0.0, float(size_px), float(size_px))
        x0, y0, x1, y1 = self.world
        # Uniform scale; y1 < y0 gives a y-up world. The world rectangle fills the canvas, centred.
        self.scale = min(self.size_px / abs(x1 - x0), self.size_px / abs(y1 - y0))
        self._sx = self.scale if x1 > x0 else -self.scale
        self._sy = self.scale if y1 > y0 else -self.scale
        self._ox = self.size_px / 2 - self._sx * (x0 + x1) / 2
        self._oy = self.size_px / 2 - self._sy * (y0 + y1) / 2
        self._s2, self._o2 = np.array([self._sx, self._sy]), np.array([self._ox, self._oy])
        self.surface = cairo.ImageSurface(cairo.FORMAT_RGB24, self.size_px, self.size_px)
        self.ctx = cairo.Context(self.surface)
        self.ctx.set_antialias(cairo.ANTIALIAS_GRAY)
        self.ctx.set_source_rgb(*background)
        self.ctx.paint()
        self.labels: list[BaseGeometry] = []                    # placed label boxes, pixel space
        self._strokes: list[tuple[str | None, BaseGeometry | LazyGeometry]] = []
        self._lazy = False
        self._bytes: np.ndarray | None = None                  # the surface's bytes, for white_under_stroke

    # --- transform -------------------------------------------------------------------------------------------
    def px(self, x: float, y: float) -> tuple[float, float]:
        return (self._ox + self._sx * x, self._oy + self._sy * y)

    def pts_px(self, pts) -> np.ndarray:
        # (sx, sy) * a + (ox, oy): the per-coordinate arithmetic of px(), in one pass instead of two and a stack
        return np.asarray(pts, dtype=float).reshape(-1, 2) * self._s2 + self._o2

    def len_px(self, length: float) -> float:
        return abs(length * self.scale)

    def world_of(self, u: float, v: float) -> tuple[float, float]:
        return ((u - self._ox) / self._sx, (v - self._oy) / self._sy)

    @property
    def y_up(self) -> bool:
        return self._sy < 0

    def safe_box(self, border_px: float = SAFE_BORDER_PX) -> tuple[float, float, float, float]:
        return (border_px, border_px, self.size_px - border_px, self.size_px - border_px)

    def inside_safe(self, pts_px, border_px: float = SAFE_BORDER_PX) -> bool:
        a = np.asarray(pts_px, dtype=float).reshape(-1, 2)
        lo, hi = border_px, self.size_px - border_px
        return bool(np.all(a >= lo) and np.all(a <= hi))

    def box_inside_safe(self, x0: float, y0: float, x1: float, y1: float,
                        border_px: float = SAFE_BORDER_PX) -> bool:
        """`inside_safe` of the four corners of an axis-aligned box, without building them."""
        lo, hi = border_px, self.size_px - border_px
        return bool(lo <= x0 <= hi and lo <= x1 <= hi and lo <= y0 <= hi and lo <= y1 <= hi)

    def white_under_stroke(self, half_width_px: float) -> bool:
        """Whether every pixel that stroking the current path `2 * half_width_px` wide could touch is already white,
        so that a white stroke would change none: cairo's 8-bit OVER of white at coverage m onto white gives
        m + 255 (255 - m) / 255 = 255 exactly. The stroke stays within half its width of the path's extents, and
        antialiasing within the pixels that region meets (a pixel more is looked at). Only for drawing onto this
        canvas's own surface in pixel space with the OVER operator; False otherwise."""
        ctx = self.ctx
        if ctx.get_operator() != cairo.OPERATOR_OVER or ctx.get_matrix() != _IDENTITY or \
                ctx.get_group_target() != self.surface:
            return False
        x0, y0, x1, y1 = ctx.path_extents()
        m = half_width_px + 1
        if self._bytes is None:
            s = self.surface
            self._bytes = np.frombuffer(s.get_data(), dtype=np.uint8).reshape(s.get_height(), s.get_stride())
        h, w = self._bytes.shape[0], self.surface.get_width()
        i0, i1 = max(0, math.floor(y0 - m)), min(h, math.floor(y1 + m) + 1)
        j0, j1 = max(0, math.floor(x0 - m)), min(w, math.floor(x1 + m) + 1)
        if i0 >= i1 or j0 >= j1:
            return True   # nothing of it on the canvas
        self.surface.flush()
        # All four bytes 255: white, and the padding byte as cairo writes it (a padding byte of another value only
        # costs the skip)
        return bool(self._bytes[i0:i1, 4 * j0:4 * j1].min() == 255)

    def layer_bytes(self) -> bytes:
        """The surface's bytes: a layer drawn once on a fresh canvas, for `paste_layer` onto later ones."""
        self.surface.flush()
        return bytes(self.surface.get_data())

    def paste_layer(self, layer: bytes) -> bool:
        """Copy `layer` (`layer_bytes` of a fresh canvas of this size, with something drawn on it) onto this canvas
        where that gives exactly the pixels of drawing it here: this canvas is still blank (all white), in pixel
        space on a surface of its own size. False, copying nothing, otherwise (a supersampled surface, a scaled
        context, something already drawn): the caller then draws the layer itself."""
        s = self.surface
        if s.get_width() != self.size_px or s.get_height() != self.size_px or \
                len(layer) != s.get_stride() * s.get_height() or self.ctx.get_matrix() != _IDENTITY:
            return False
        s.flush()
        pixels = np.frombuffer(s.get_data(), dtype=np.uint8)
        if pixels.min() < 255:
            return False
        s.get_data()[:] = layer
        s.mark_dirty()
        return True

    @contextmanager
    def layer(self):
        self.ctx.save()
        try:
            yield self.ctx
        finally:
            self.ctx.restore()

    def register_stroke(self, geom: BaseGeometry | LazyGeometry, owner: str | None = None) -> None:
        self._strokes.append((owner, geom))
        self._lazy = self._lazy or isinstance(geom, LazyGeometry)

    @property
    def strokes(self) -> list[tuple[str | None, BaseGeometry]]:
        """(owner, geometry) in pixel space, in the order drawn. Shapes register their outlines lazily (building
        the buffered outlines costs more than drawing them, and most canvases never check a label against them):
        they are computed here, on first use."""
        if self._lazy:
            self._strokes[:] = [(o, g.geometry if isinstance(g, LazyGeometry) else g) for o, g in self._strokes]
            self._lazy = False
        return self._strokes

    def strokes_near(self, box: tuple[float, float, float, float], owner: str | None) -> list[BaseGeometry]:
        """The outlines of the strokes not owned by `owner` that may meet the box (x0, y0, x1, y1), in the order
        drawn; every other one lies wholly outside it. A lazy outline whose `reach` misses the box is not built."""
        x0, y0, x1, y1 = box
        out = []
        for own, g in self._strokes:
            if own == owner:
                continue
            if isinstance(g, LazyGeometry):
                r = g.reach()
                if r is not None and (r[0] > x1 or r[2] < x0 or r[1] > y1 or r[3] < y0):
                    continue
                g = g.geometry
            out.append(g)
        return out

    @strokes.setter
    def strokes(self, value) -> None:
        self._strokes, self._lazy = [], False
        for owner, geom in value:
            self.register_stroke(geom, owner)

    # --- export ----------------------------------------------------------------------------------------------
    def array(self) -> np.ndarray:
        """H x W x 3 uint8 RGB copy of the surface: a view into PNG scanlines (see `png_rows`), so that
        `encode_png` compresses it with no further copy."""
        self.surface.flush()
        h, w = self.surface.get_height(), self.surface.get_width()
        bgrx = np.frombuffer(self.surface.get_data(), dtype=np.uint8).reshape(h, self.surface.get_stride() // 4, 4)
        rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
        rows[:, 0] = 0
        rgb = rows[:, 1:].reshape(h, w, 3)
        for c in range(3):   # BGRX (little-endian) -> RGB, one channel at a time: 3x faster than a reversed view
            rgb[:, :, c] = bgrx[:, :w, 2 - c]
        return rgb

    def png_bytes(self) -> bytes:
        return encode_png(self.array())


PNG_LEVEL = 2
# The PNG stream's compressor: zlib-ng, bundled (a fixed library version, whatever zlib the system has) and on
# these images ~2.7x faster than the system zlib at level 3, for ~6% fewer bytes (measured on items of 12 domains:
# 2.0 vs 5.6 ms, 44.0 vs 46.7 KiB). Its version is in every build's provenance: a PNG's bytes, not its pixels,
# depend on it.
PNG_COMPRESSOR = "zlib-ng " + _zng.ZLIBNG_VERSION


def _chunk(tag: bytes, data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + tag + data + zlib.crc32(tag + data).to_bytes(4, "big")


def encode_png(rgb: np.ndarray, level: int = PNG_LEVEL) -> bytes:
    """RGB uint8 -> PNG with only IHDR, IDAT and IEND: no text, time or colour-profile chunks that could leak state
    or differ between machines.

    Why not Pillow: its encoder picks a filter per row, which costs ~9 ms on a 768 px rendering, the largest single
    term of a build. Our flat vector renderings compress as well with filter type 0 (None) and a fast deflate
    (zlib-ng, level 2: see PNG_COMPRESSOR), in ~2 ms. The container is the PNG spec's three chunks; tests decode
    every image with Pillow."""
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError("encode_png expects an H x W x 3 uint8 array")
    h, w, _ = rgb.shape
    ihdr = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])  # 8-bit RGB, no interlace
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", _zng.compress(png_rows(rgb).data, level))
            + _chunk(b"IEND", b""))


def png_rows(rgb: np.ndarray) -> np.ndarray:
    """The PNG scanlines of an H x W x 3 uint8 image: each row's filter byte (type 0, None), then its RGB bytes, as
    one H x (1 + 3W) array. Where `rgb` is a view into such an array with zero filter bytes (as `Canvas.array`
    makes it), that array itself; otherwise a copy."""
    h, w, _ = rgb.shape
    rows = rgb.base
    if (isinstance(rows, np.ndarray) and rows.shape == (h, 1 + 3 * w) and rows.dtype == np.uint8
            and rows.flags.c_contiguous and rgb.strides == (1 + 3 * w, 3, 1)
            and rgb.__array_interface__["data"][0] == rows.__array_interface__["data"][0] + 1
            and not rows[:, 0].any()):
        return rows
    rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    rows[:, 0] = 0                                   # first byte of each row: filter type 0
    rows[:, 1:] = rgb.reshape(h, 3 * w)
    return rows


def png_chunk_types(data: bytes) -> list[str]:
    """Chunk types of a PNG, in order (used by tests to check no metadata chunk is written)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    out, i = [], 8
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "big")
        out.append(data[i + 4:i + 8].decode("ascii"))
        i += 12 + n
    return out


def decode_png(data: bytes) -> np.ndarray:
    from PIL import Image
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))
