"""The fast paths of the renderer and the samplers give exactly what the plain formulations give: lazily built
stroke outlines, the text box, the RGB copy and PNG rows, exact gear speeds, the voxel helpers, and the cube
drawing, fit and pinhole projection of renderers/projection.py."""
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
from grip.renderers.canvas import Canvas, LazyGeometry, decode_png, encode_png, png_rows
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
    assert rgb.dtype == np.uint8 and rgb.shape == (64, 64, 3) and np.array_equal(rgb, want)
    rows = np.zeros((64, 1 + 3 * 64), np.uint8)
    rows[:, 1:] = want.reshape(64, -1)
    png = encode_png(rgb)
    assert zlib.decompress(png[png.index(b"IDAT") + 4:-16]) == rows.tobytes() and np.array_equal(decode_png(png), want)
    # The canvas's array is a view into its scanlines, compressed as they are; any other array is copied into new
    # ones, with the same bytes out.
    assert png_rows(rgb) is rgb.base and encode_png(want) == png and encode_png(rgb.copy()) == png
    other = np.zeros((64, 1 + 3 * 64), np.uint8)
    other[:, 1:] = want.reshape(64, -1)
    other[5, 0] = 1                                  # not a filter byte of type 0: must not be passed on
    view = other[:, 1:].reshape(64, 64, 3)
    assert png_rows(view) is not other and encode_png(view) == png
    shifted = rows[:, :-1].reshape(64, 64, 3)        # the scanlines' shape and strides, one byte early
    assert png_rows(shifted) is not rows and encode_png(shifted) == encode_png(shifted.copy())


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


def test_halo_skipped_on_white_paper_changes_no_pixel(monkeypatch):
    """Labels over blank paper, over shapes, across the canvas edge and under a transform: the halo stroke that
    `white_under_stroke` skips would have changed no pixel."""
    rng = np.random.default_rng(7)
    labels = [("".join(rng.choice(list("AQgj8%Wy ."), int(rng.integers(1, 9)))),
               (float(rng.uniform(-10, 330)), float(rng.uniform(-10, 330))),
               LABEL.with_(font_px=float(rng.uniform(10, 30)), halo_px=float(rng.choice([1.0, 2.0, 3.0, 4.5]))))
              for _ in range(60)]

    def render(white_under_stroke):
        with monkeypatch.context() as m:
            m.setattr(Canvas, "white_under_stroke", white_under_stroke)
            c = Canvas(size_px=320)
            shapes.polygon(c, [(40.0, 40.0), (200.0, 60.0), (120.0, 180.0)], PX.with_(fill=(0.9, 0.8, 0.6)))
            shapes.circle(c, (240.0, 240.0), 50.0, PX)
            shapes.rect(c, 0.0, 300.0, 320.0, 320.0, Style(stroke=None, fill=(0.0, 0.0, 0.0)))
            for k, (text, at, style) in enumerate(labels):
                if k == 50:
                    c.ctx.translate(3.5, 2.25)   # not in pixel space: never skipped
                draw_text_px(c, text, at, style)
            return c.array()

    real, skipped = Canvas.white_under_stroke, []

    def counted(self, half):
        skipped.append(real(self, half))
        return skipped[-1]

    fast = render(counted)
    assert 10 < sum(skipped) < 50   # both branches taken
    assert np.array_equal(fast, render(lambda self, half: False))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # shapely on the NaN corner
def test_box_helpers_are_shapely_box():
    from shapely import wkb
    from shapely.geometry import box
    from grip.renderers.text import _box
    rng = np.random.default_rng(2)
    for x0, y0, x1, y1 in [*rng.uniform(-1e3, 1e3, (200, 4)), (1, 2, 3, 4), (np.float64(0.1), 2, 3, 4.5),
                           (float("nan"), 0.0, 1.0, 1.0)]:
        assert wkb.dumps(_box(x0, y0, x1, y1)) == wkb.dumps(box(x0, y0, x1, y1))
    c = Canvas(size_px=100)
    for x0, y0, x1, y1 in [*rng.uniform(-10, 110, (300, 4)), (24, 24, 76, 76), (24, 24, 76.01, 76),
                           (float("nan"), 30, 40, 50)]:
        corners = np.array(box(x0, y0, x1, y1).exterior.coords)
        assert c.box_inside_safe(x0, y0, x1, y1) == c.inside_safe(corners)


def test_pts_px_is_px_point_by_point():
    rng = np.random.default_rng(4)
    for world in ((0.0, 0.0, 768.0, 768.0), (-3.7, 11.2, 9.1, -4.4), (5.0, -2.0, -7.5, 10.0)):
        c = Canvas(size_px=500, world=world)
        pts = rng.uniform(-20, 20, (50, 2))
        got = c.pts_px(pts)
        assert got.shape == (50, 2) and got.tobytes() == np.array([c.px(x, y) for x, y in pts]).tobytes()
    assert c.pts_px([]).shape == (0, 2)


def test_scene_to_json_is_the_asdict_round_trip():
    import dataclasses
    import json
    from collections import OrderedDict, namedtuple
    from grip.domain import scene_to_json
    P = namedtuple("P", "x y")

    @dataclasses.dataclass(frozen=True)
    class Inner:
        a: tuple
        b: float = 0.5

    @dataclasses.dataclass(frozen=True)
    class Scene:
        n: int
        inner: Inner
        items: tuple
        table: dict
        flag: bool = True
        name: str | None = None

    s = Scene(3, Inner(((1, 2), (3.25, np.float64(1) / 3)), float("inf")),
              (Inner((), -0.0), P(1, Inner((P(2, 3),))), [True, None, "x"]),
              OrderedDict([("k", (1, Inner((4,)))), (5, [6.5])]), False, "é")
    assert json.dumps(scene_to_json(s)) == json.dumps(json.loads(json.dumps(dataclasses.asdict(s))))
    with pytest.raises(TypeError):
        scene_to_json({"not": "a dataclass"})


def _free_spot_plain(canvas, text, centres, owner, style, clearance_px):
    """The label search as first written: every candidate's box measured and buffered, against every stroke."""
    for c in centres:
        b = text_box_px(canvas, text, c, style)
        if not canvas.inside_safe(np.array(b.exterior.coords)):
            continue
        if any(b.intersects(o) for o in canvas.labels):
            continue
        grown = b.buffer(clearance_px)
        if any(own != owner and grown.intersects(g) for own, g in canvas.strokes):
            continue
        canvas.labels.append(b)
        return b
    return None


def test_label_search_and_stroke_reach_match_the_plain_search():
    from grip.renderers.text import _first_free_spot
    rng = np.random.default_rng(9)
    placed = []
    for trial in range(3):
        canvases = []
        for _ in range(2):
            c = Canvas(size_px=400)
            r = np.random.default_rng(trial)
            for k in range(14):
                owner = f"s{k % 3}"
                pts = [tuple(p) for p in r.uniform(0, 400, (int(r.integers(3, 6)), 2))]
                style = PX.with_(width_px=float(r.uniform(1, 6)), fill=(0.5, 0.5, 0.5) if k % 4 == 0 else None)
                [lambda: shapes.polyline(c, pts, style, owner), lambda: shapes.polygon(c, pts, style, owner),
                 lambda: shapes.circle(c, pts[0], float(r.uniform(2, 40)), style, owner),
                 lambda: shapes.segments(c, [pts[:2]], style, owner),
                 lambda: shapes.arrow(c, pts[0], pts[1], style, owner=owner),
                 lambda: shapes.curved_arrow(c, pts[0], 60.0, 10.0, 200.0, style, owner=owner),
                 lambda: shapes.hatch(c, 10.0, 300.0, 120.0, 340.0, 9.0, style, owner=owner)][k % 7]()
            canvases.append(c)
        fast, plain = canvases
        for _, g in fast._strokes:   # each lazy outline lies in its reach
            if isinstance(g, LazyGeometry) and g.reach() is not None:
                x0, y0, x1, y1 = g.reach()
                b0, c0, b1, c1 = g.geometry.bounds
                assert x0 < b0 and y0 < c0 and b1 < x1 and c1 < y1
        for _ in range(8):
            text = "".join(rng.choice(list("AB12xy"), int(rng.integers(1, 4))))
            centres = [tuple(p) for p in rng.uniform(0, 400, (16, 2))]
            owner = str(rng.choice(["s0", "s1", "s2", "none"]))
            try:
                got = _first_free_spot(fast, text, centres, owner, LABEL, 8.0, False)
            except Reject:
                got = None
            want = _free_spot_plain(plain, text, centres, owner, LABEL, 8.0)
            assert (got is None and want is None) or got.equals_exact(want, 0.0)
            placed.append(got is not None)
    assert 0 < sum(placed) < len(placed)   # labels placed and labels refused


# --- layers drawn once and pasted ----------------------------------------------------------------------------------

PASTING = ["progressive_matrices", "shadow_inference", "rotation_matching", "optical_illusions"]


@pytest.mark.parametrize("domain_id", PASTING)
def test_a_pasted_layer_gives_the_pixels_of_drawing_it_and_other_canvases_draw_it(domain_id, monkeypatch):
    """A domain that pastes a cached layer onto a blank canvas draws the same bytes as with pasting refused (the
    layer drawn in place), at every level; on a canvas that is not blank (or not a plain 768 px surface, as a
    supersampling canvas is) it draws in place instead of copying bytes of the wrong size."""
    from grip import domains
    from grip.builder import generate
    from grip.seeding import item_seed
    dom = domains.get(domain_id)
    for level in (1, 2, 3):
        scene = generate(dom, item_seed("paste", domain_id, level), level, render=False).scene
        pasted = Canvas(dom.size_px, dom.world)
        dom.draw(scene, pasted)
        with monkeypatch.context() as m:
            m.setattr(Canvas, "paste_layer", lambda self, layer: False)
            drawn = Canvas(dom.size_px, dom.world)
            dom.draw(scene, drawn)
        assert np.array_equal(pasted.array(), drawn.array()), (domain_id, level)
        marked = Canvas(dom.size_px, dom.world)
        marked.ctx.rectangle(0, 0, 1, 1)
        marked.ctx.set_source_rgb(0, 0, 0)
        marked.ctx.fill()
        assert not marked.paste_layer(pasted.layer_bytes())
        dom.draw(scene, marked)
        assert (marked.array()[1:] == drawn.array()[1:]).all()   # drawn in place: all but the mark's row


def test_paste_layer_refuses_a_surface_of_another_size_or_a_scaled_context():
    import cairo
    big = Canvas(768)
    big.surface = cairo.ImageSurface(cairo.FORMAT_RGB24, 1536, 1536)
    big.ctx = cairo.Context(big.surface)
    big.ctx.set_source_rgb(1, 1, 1)
    big.ctx.paint()
    assert not big.paste_layer(Canvas(768).layer_bytes())
    scaled = Canvas(768)
    scaled.ctx.scale(2, 2)
    assert not scaled.paste_layer(Canvas(768).layer_bytes())
    assert Canvas(768).paste_layer(Canvas(768).layer_bytes())


def _draw_cubes_plain(ctx, cubes, cam, s, origin, tint=None):
    """pj.draw_cubes as one projection per face, its corners built one by one."""
    import cairo
    from grip.renderers import projection as pj
    order = sorted(sorted({tuple(int(v) for v in c) for c in cubes}),
                   key=lambda c: (c[0] * cam.w[0] + c[1] * cam.w[1] + c[2] * cam.w[2], c))
    m = np.array([cam.u_row, cam.v_row], dtype=float)
    faces = []
    ctx.save()
    ctx.set_line_join(cairo.LINE_JOIN_ROUND)
    ctx.set_line_width(pj.EDGE_PX)
    for c in order:
        for axis, step in pj._FACE_STEP.items():
            if tuple(a + b for a, b in zip(c, step)) in set(order):
                continue
            corners = tuple(tuple(a + b for a, b in zip(c, d)) for d in pj._FACE_CORNERS[axis])
            faces.append((c, axis, corners))
            pts = (np.asarray(corners, dtype=float) @ m.T * s + np.asarray(origin, dtype=float)).tolist()
            base, k = (tint or {}).get(c, (1.0, 1.0, 1.0)), pj.SHADE[axis]
            ctx.set_source_rgb(base[0] * k, base[1] * k, base[2] * k)
            ctx.move_to(*pts[0])
            for u, v in pts[1:]:
                ctx.line_to(u, v)
            ctx.close_path()
            ctx.fill_preserve()
            ctx.set_source_rgb(0.0, 0.0, 0.0)
            ctx.stroke()
    ctx.restore()
    return faces


class _CallLog:
    """A stand-in cairo context that records every call with its arguments."""
    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *args: self.calls.append((name, repr(args)))


def test_draw_cubes_and_cube_faces_match_the_face_by_face_drawing():
    """The same faces and the same cairo calls with the same floats as one projection per face."""
    from grip.renderers import projection as pj
    rng = np.random.default_rng(8)
    for k in range(24):
        cam = (pj.TRI, pj.ISO)[k % 2]
        cubes = [tuple(int(v) for v in rng.integers(-1, 4, 3)) for _ in range(int(rng.integers(1, 18)))]
        if k % 3 == 0:
            cubes = np.asarray(cubes)                      # rows of an integer array work too
        tint = {tuple(int(v) for v in cubes[0]): (0.9, 0.5, 0.1)} if k % 2 else None
        s, origin = float(rng.uniform(12, 30)), (float(rng.uniform(60, 100)), float(rng.uniform(60, 100)))
        got, want = _CallLog(), _CallLog()
        faces = pj.draw_cubes(got, cubes, cam, s, origin, tint=tint)
        assert [(f.cube, f.axis, f.corners) for f in faces] == _draw_cubes_plain(want, cubes, cam, s, origin, tint)
        assert got.calls == want.calls and pj.cube_faces(cubes, cam) == faces
        if k < 2:
            a, b = Canvas(size_px=192), Canvas(size_px=192)
            pj.draw_cubes(a.ctx, cubes, cam, s, origin, tint=tint)
            _draw_cubes_plain(b.ctx, cubes, cam, s, origin, tint)
            assert np.array_equal(a.array(), b.array())
    assert pj.draw_cubes(_CallLog(), [], pj.TRI, 10.0, (0.0, 0.0)) == []


def test_fit_and_pinhole_projection_match_the_numpy_formulation():
    from grip.renderers import projection as pj
    rng = np.random.default_rng(9)
    top = pj.OrthoCamera("TOP", (1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0))
    for k in range(300):
        cam = (pj.TRI, pj.ISO, top)[k % 3]
        pts = rng.uniform(-4, 6, (int(rng.integers(1, 10)), 3))
        box = tuple(int(v) for v in rng.integers(0, 400, 4)) if k % 2 else tuple(rng.uniform(0, 700, 4).tolist())
        kw = ({}, {"s": 37}, {"s": np.float64(12.5)}, {"s_max": float(rng.uniform(5, 60))})[k % 4]
        p = cam.project(pts)
        lo, hi = p.min(axis=0), p.max(axis=0)
        span = np.maximum(hi - lo, 1e-9)
        s = kw.get("s", float(min((box[2] - box[0]) / span[0], (box[3] - box[1]) / span[1],
                                  kw.get("s_max", math.inf))))
        origin = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]) - s * (lo + hi) / 2
        assert repr(pj.fit(cam, pts, box, **kw)) == repr((s, (float(origin[0]), float(origin[1]))))
    for k in range(200):
        cam = pj.PinholeCamera(float(rng.uniform(1.5, 1.8)), float(rng.uniform(500, 700)), 384.0,
                               float(rng.uniform(250, 330)))
        shape = ((3,), (5, 3), (4, 2, 3))[k % 3]
        p = rng.uniform(-5, 30, shape)
        p[..., 1] = np.abs(p[..., 1]) + 0.1
        y = p[..., 1]
        want = np.stack([cam.cu + cam.f_px * p[..., 0] / y, cam.cv - cam.f_px * (p[..., 2] - cam.height) / y], axis=-1)
        got = cam.project(p.tolist())
        assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    with pytest.raises(ValueError):
        pj.PinholeCamera(1.6, 600.0, 384.0, 300.0).project([(1.0, 5.0, 0.0), (1.0, 0.0, 0.0)])


def test_grain_copies_match_the_plain_formula():
    """grain_copies converts the image to float32 once and rounds and clips in place: the same values as the
    formula written out, per sigma, on a rendering with white, black, mid-grey and anti-aliased pixels."""
    from grip.grain import SIGMAS, grain_copies, grain_field
    c = Canvas(size_px=96)
    shapes.circle(c, (40.0, 50.0), 30.0, PX.with_(fill=(0.5, 0.5, 0.5), stroke=(0.0, 0.0, 0.0)))
    rgb = c.array()
    field = grain_field(rgb.shape[:2], "x_000000.png")
    copies = grain_copies(rgb, "x_000000.png")
    assert sorted(copies) == list(SIGMAS)
    for s in SIGMAS:
        want = np.clip(np.rint(rgb.astype(np.float32) + (np.float32(s) * field)[:, :, None]), 0, 255).astype(np.uint8)
        assert copies[s].dtype == np.uint8 and np.array_equal(copies[s], want)


def test_stroke_clearance_from_distances_is_the_buffer_test():
    """`_too_close` settles most candidates from exact distances: the same verdict as `b.buffer(r)` intersecting a
    stroke, also for strokes within a hair of the clearance at the box's rounded corners."""
    import math

    from shapely.geometry import LineString, Point, box

    from grip.renderers import text
    g = np.random.default_rng(1)
    for _ in range(400):
        x0, y0 = g.uniform(0, 500, 2)
        w, h = g.uniform(5, 80, 2)
        b, r = box(x0, y0, x0 + w, y0 + h), float(g.choice([4.0, 8.0, 10.0]))
        near = []
        for _ in range(4):
            ang, d = g.uniform(0, 2 * math.pi), r * g.uniform(0.995, 1.005)
            cx, cy = (x0, x0 + w)[int(g.integers(2))], (y0, y0 + h)[int(g.integers(2))]
            px, py = cx + d * math.cos(ang), cy + d * math.sin(ang)
            near.append((Point(px, py), LineString([(px, py), (px + g.uniform(-3, 3), py + g.uniform(-3, 3))]),
                         Point(px, py).buffer(0.5))[int(g.integers(3))])
        for m in range(1, 5):
            assert text._too_close(b, near[:m], r) == any(b.buffer(r).intersects(s) for s in near[:m])
