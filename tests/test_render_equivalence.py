"""The fast paths of the renderer and the samplers give exactly what the plain formulations give: lazily built
stroke outlines, the text box, the RGB copy and PNG rows, exact gear speeds, and the voxel helpers."""
from __future__ import annotations

import math
import zlib
from collections import deque
from fractions import Fraction

import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon

from grip.domain import Reject
from grip.domains.physical import gear_trains as gt
from grip.domains.solid import _voxels as vx
from grip.renderers import shapes
from grip.renderers.canvas import Canvas, LazyGeometry, decode_png, encode_png
from grip.renderers.style import LABEL, Style
from grip.renderers.text import draw_text_px, text_box_px

PX = Style(width_px=3.0)


def test_lazy_strokes_are_the_eager_outlines():
    c = Canvas()
    pts = [(100.0, 100.0), (300.0, 120.0), (200.0, 260.0)]
    shapes.polygon(c, pts, PX.with_(fill=(1, 0, 0)), owner="p")
    shapes.polygon(c, pts, PX, owner="q")
    shapes.circle(c, (400.0, 400.0), 50.0, PX, owner="c")
    shapes.polyline(c, pts, PX, owner="l")
    arrow = shapes.arrow(c, (500.0, 500.0), (600.0, 650.0), PX, owner="a")
    c.register_stroke(Point(0, 0).buffer(1.0), "eager")
    assert all(isinstance(g, LazyGeometry) for _, g in c._strokes[:4])
    got = c.strokes
    assert [o for o, _ in got] == ["p", "q", "c", "l", "a", "a", "eager"]
    want = [Polygon(pts).buffer(1.5), Polygon(pts).exterior.buffer(1.5),
            Point(400, 400).buffer(51.5).difference(Point(400, 400).buffer(48.5)), LineString(pts).buffer(1.5)]
    for (_, g), w in zip(got, want):
        assert not isinstance(g, LazyGeometry) and g.equals_exact(w, 0.0)
    assert arrow.geometry.equals_exact(got[4][1].union(got[5][1]), 0.0)
    assert arrow.area == arrow.geometry.area     # attributes pass through


def test_strokes_extend_and_assignment_keep_order():
    c = Canvas()
    shapes.line(c, (10.0, 10.0), (50.0, 10.0), PX, owner="x")
    c.strokes.extend([("y", Point(1, 1).buffer(1.0))])
    shapes.line(c, (10.0, 30.0), (50.0, 30.0), PX, owner="z")
    assert [o for o, _ in c.strokes] == ["x", "y", "z"]
    c.strokes = [("w", Point(2, 2).buffer(1.0))]
    assert [o for o, _ in c.strokes] == ["w"]


def test_text_box_is_the_measured_box():
    c = Canvas()
    for text, style in (("B", LABEL), ("24T", LABEL.with_(font_px=14.0, halo_px=0.0, bold=False))):
        assert draw_text_px(c, text, (123.4, 321.9), style).equals_exact(text_box_px(c, text, (123.4, 321.9), style),
                                                                        0.0)


def test_rgb_copy_and_png_match_the_plain_formulation():
    c = Canvas(size_px=64)
    shapes.circle(c, (20.0, 30.0), 12.0, PX.with_(fill=(0.2, 0.6, 0.9), stroke=(0.9, 0.1, 0.3)))
    c.surface.flush()
    raw = np.frombuffer(c.surface.get_data(), np.uint8).reshape(64, c.surface.get_stride() // 4, 4)[:, :64]
    want = raw[:, :, 2::-1].copy()
    rgb = c.array()
    assert rgb.dtype == np.uint8 and rgb.flags.c_contiguous and np.array_equal(rgb, want)
    rows = np.zeros((64, 1 + 3 * 64), np.uint8)
    rows[:, 1:] = want.reshape(64, -1)
    png = encode_png(rgb)
    assert zlib.compress(rows.tobytes(), 3) in png and np.array_equal(decode_png(png), want)


def _walk_fractions(scene):
    """Gear speeds multiplied out in Fractions, mesh by mesh."""
    a = gt.index_of(scene, "A")
    w, hops = [None] * len(scene.teeth), [None] * len(scene.teeth)
    w[a], hops[a] = Fraction(scene.driver_rpm * (1 if scene.driver_dir == gt.CW else -1)), 0
    nb, todo = gt._neighbours(scene), deque([a])
    while todo:
        i = todo.popleft()
        for j, f, h in nb[i]:
            if w[j] is None:
                w[j], hops[j] = w[i] * f, hops[i] + h
                todo.append(j)
            elif w[j] != w[i] * f:
                raise Reject("jammed")
    return [x if x is not None else Fraction(0) for x in w], hops


def test_gear_speeds_match_fraction_arithmetic():
    rng = np.random.default_rng(5)
    for k in range(9):
        s = gt.sample(rng, 1 + k % 3)
        assert gt._walk(s) == _walk_fractions(s)
    jam = gt.Scene(1, ("A", "B", "C"), (20, 20, 20), ((0, 0),) * 3, ((0, 1), (1, 2), (0, 2)), (), 30, gt.CW, "C")
    for walk in (gt._walk, _walk_fractions):
        with pytest.raises(Reject):
            walk(jam)


def _visibility_dense(cubes, faces):
    occ = np.asarray(sorted({tuple(int(v) for v in c) for c in cubes}), dtype=float).reshape(-1, 3)
    inv = 1.0 / np.asarray(vx._CAM.w, dtype=float)
    base = np.asarray([c for c, _ in faces], dtype=float)
    kind = np.asarray([vx.AXES.index(ax) for _, ax in faces])
    pts = (base[:, None, :] + vx._TEMPLATES[kind]).reshape(-1, 3)
    lo = [(occ[None, :, i] - pts[:, i, None]) * inv[i] for i in range(3)]
    t_in = np.maximum(np.maximum(lo[0], lo[1]), lo[2])
    t_out = np.minimum(np.minimum(lo[0] + inv[0], lo[1] + inv[1]), lo[2] + inv[2])
    return 1.0 - (t_out > np.maximum(t_in, 1e-9)).any(axis=1).reshape(len(faces), -1).mean(axis=1)


def test_voxel_helpers_match_plain_versions():
    rng = np.random.default_rng(3)
    for _ in range(6):
        cubes = {tuple(int(v) for v in rng.integers(0, 3, 3)) for _ in range(8)}
        faces = [(c, ax) for c in sorted(cubes) + [(3, 0, 0)] for ax in vx.AXES]
        assert vx.face_visibility(list(cubes), faces).tobytes() == _visibility_dense(cubes, faces).tobytes()
        arr = np.asarray(sorted(cubes)) - 1
        assert vx.normalise(arr) == vx.normalise([tuple(c) for c in arr.tolist()])
        cells = {(int(r), int(c)) for r, c in rng.integers(-2, 3, (5, 2))}
        r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
        r1, c1 = max(r for r, _ in cells), max(c for _, c in cells)
        assert vx.grid_of(cells) == tuple("".join("#" if (r, c) in cells else "-" for c in range(c0, c1 + 1))
                                          for r in range(r0, r1 + 1))
    assert vx.connected([(0, 0, 0), (0, 0, 1)]) and not vx.connected([(0, 0, 0), (0, 0, 2)])
    assert not vx.connected([])
    assert math.isclose(vx.face_visibility([], [((0, 0, 0), "+z")])[0], 1.0)


def test_cut_cubes_are_the_cubes_whose_removal_disconnects():
    rng = np.random.default_rng(11)
    for _ in range(40):
        s = {(1, 1, 1)}
        for _ in range(int(rng.integers(0, 16))):
            c = sorted(s)[int(rng.integers(len(s)))]
            s.add(vx.neighbours(c)[int(rng.integers(6))])
        assert vx.cut_cubes(s) == {c for c in s if not vx.connected(s - {c})}
    assert vx.cut_cubes([(0, 0, 0)]) == {(0, 0, 0)}
    assert vx.cut_cubes([(0, 0, 0), (0, 0, 2)]) is None and vx.cut_cubes([]) is None
