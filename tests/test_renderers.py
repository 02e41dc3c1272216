"""The drawing toolkit: the world-to-pixel transform, label placement, the pinned font, PNG export."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from grip.domain import Reject
from grip.renderers import LABEL, OUTLINE, Canvas, encode_png, png_chunk_types
from grip.renderers.shapes import circle, line
from grip.renderers.text import check_font, place_label, place_label_beside


@given(st.floats(-1000, 1000), st.floats(-1000, 1000), st.floats(1, 500), st.booleans())
def test_world_rectangle_fills_the_canvas(x0, y0, size, y_up):
    world = (x0, y0 + size, x0 + size, y0) if y_up else (x0, y0, x0 + size, y0 + size)
    c = Canvas(768, world)
    assert np.allclose(c.px(world[0], world[1]), (0, 0), atol=1e-6)
    assert np.allclose(c.px(world[2], world[3]), (768, 768), atol=1e-6)
    assert c.y_up == y_up
    u, v = c.px(x0 + size / 3, y0 + size / 5)
    assert np.allclose(c.world_of(u, v), (x0 + size / 3, y0 + size / 5), atol=1e-6)
    assert np.isclose(c.len_px(size), 768)


def test_stroke_width_is_in_pixels_whatever_the_world_scale():
    a, b = Canvas(200, (0, 0, 10, 10)), Canvas(200, (0, 0, 1000, 1000))
    line(a, (0, 5), (10, 5), OUTLINE.with_(width_px=4))
    line(b, (0, 500), (1000, 500), OUTLINE.with_(width_px=4))
    ink_a = (a.array()[:, 100, 0] < 128).sum()
    ink_b = (b.array()[:, 100, 0] < 128).sum()
    assert ink_a == ink_b == 4


def test_labels_never_overlap_and_avoid_foreign_strokes():
    c = Canvas(768)
    circle(c, (384, 384), 100, OUTLINE, owner="A")
    boxes = []
    for t in "ABCDEFGHIJKLMNOP":
        try:
            boxes.append(place_label(c, t, (384, 384), owner=t))
        except Reject:
            break
    assert len(boxes) >= 8
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.intersects(b)
        if i > 0:  # labels other than A keep 8 px from A's circle
            assert a.distance(c.strokes[0][1]) >= 8 - 1e-6


def test_crowded_label_is_rejected():
    c = Canvas(768)
    for k in range(40):
        circle(c, (384, 384), 5 + 4 * k, OUTLINE, owner="ring")
    with pytest.raises(Reject, match="label_clash"):
        place_label(c, "Z", (384, 384), owner="Z")


def test_pinned_font_is_dejavu():
    assert check_font().endswith("DejaVuSans.ttf")


def test_png_has_no_metadata_and_is_deterministic():
    def one():
        c = Canvas(300)
        circle(c, (150, 150), 100, OUTLINE)
        place_label(c, "A", (150, 150), owner="x", style=LABEL)
        return encode_png(c.array())
    a, b = one(), one()
    assert a == b
    assert set(png_chunk_types(a)) == {"IHDR", "IDAT", "IEND"}


@given(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_png_encoder_round_trips_through_pillow(h, w, seed):
    from grip.renderers import decode_png
    a = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    data = encode_png(a)
    assert png_chunk_types(data) == ["IHDR", "IDAT", "IEND"]
    assert np.array_equal(decode_png(data), a)


def test_segments_draw_like_separate_lines():
    from grip.renderers.shapes import segments
    segs = [((100, 100 + 20 * k), (600, 100 + 20 * k)) for k in range(10)]
    a, b = Canvas(768), Canvas(768)
    segments(a, segs, OUTLINE)
    for s in segs:
        line(b, *s, OUTLINE)
    assert np.array_equal(a.array(), b.array())
    assert a.strokes[0][1].area == pytest.approx(b.strokes[0][1].union(b.strokes[-1][1]).area * 5, rel=0.05)


def test_labels_beside_a_part_hug_its_box_and_keep_clear():
    c = Canvas(768)
    part = (300.0, 300.0, 340.0, 340.0)
    circle(c, (320, 320), 20, OUTLINE.with_(fill=(0.5, 0.5, 0.5)), "P")
    line(c, (344, 200), (344, 440), OUTLINE, "wall")      # a stroke just right of the part: "right" must fail
    b = place_label_beside(c, "Station", part, owner="label", gaps_px=(10.0,))
    x0, y0, x1, y1 = b.bounds
    # not on the right (the wall), so the next candidate: left of the box, 10 px away, centred on it
    assert x1 == pytest.approx(290.0) and (y0 + y1) / 2 == pytest.approx(320.0)
    for own, g in c.strokes:
        assert b.distance(g) >= 8.0 - 1e-6
    # a second label for the same part cannot reuse that spot; one more than fits raises Reject
    c2 = Canvas(768)
    for _ in range(8):
        place_label_beside(c2, "A", part, owner="x", gaps_px=(4.0,))
    with pytest.raises(Reject):
        place_label_beside(c2, "A", part, owner="x", gaps_px=(4.0,))
