"""renderers/projection.py: camera handedness, the sheet's formulas, TRI's minimum lattice image, painter's order
against a brute-force depth test, convex-polyhedron visibility, the face-id buffer."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from matplotlib.path import Path

from grip.renderers import projection as pj


def test_iso_and_tri_are_right_handed_and_a_mirrored_camera_is_not():
    assert pj.ISO.handedness() == pytest.approx(1.0)
    assert pj.TRI.handedness() == pytest.approx(1.0)
    mirrored = pj.OrthoCamera("mirror", tuple(-x for x in pj.TRI.u_row), pj.TRI.v_row, pj.TRI.w)
    assert mirrored.handedness() == pytest.approx(-1.0)
    assert pj.PinholeCamera(1.6, 600, 384, 300).handedness() == pytest.approx(1.0)


def test_iso_matches_the_sheet_formula_and_its_kernel():
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    for x, y, z in [(1, 0, 0), (0, 1, 0), (0, 0, 1), (2, -1, 3)]:
        u, v = pj.ISO.project((x, y, z), s=10)
        assert u == pytest.approx(10 * (y - x) * c)
        assert v == pytest.approx(10 * ((x + y) * s - z))
    assert np.allclose(pj.ISO.project((1, 1, 1)), 0)  # kernel (1, 1, 1)
    assert np.allclose(pj.ISO.w, np.ones(3) / math.sqrt(3))


def test_tri_matches_the_sheet_formula():
    a, e = math.radians(29.5), math.radians(31.5)
    for x, y, z in [(1, 0, 0), (0, 1, 0), (0, 0, 1), (3, 2, -1)]:
        u, v = pj.TRI.project((x, y, z), s=48)
        assert u == pytest.approx(48 * (y * math.sin(a) - x * math.cos(a)))
        assert v == pytest.approx(48 * ((x * math.sin(a) + y * math.cos(a)) * math.sin(e) - z * math.cos(e)))
    assert np.allclose(pj.TRI.w, (0.420, 0.742, 0.522), atol=5e-4)


@pytest.mark.parametrize("cam", [pj.ISO, pj.TRI], ids=["ISO", "TRI"])
def test_plus_x_face_on_the_left_plus_y_on_the_right_top_above(cam):
    centre = {ax: np.mean(cam.project(f.corners), axis=0) for f in pj.cube_faces([(0, 0, 0)], cam)
              for ax in [f.axis]}
    assert set(centre) == {"+x", "+y", "+z"}
    assert centre["+x"][0] < centre["+y"][0]
    assert centre["+z"][1] < centre["+x"][1] and centre["+z"][1] < centre["+y"][1]  # v down: top face is higher


def test_tri_minimum_lattice_image_for_the_scene_extents():
    m, n = pj.min_lattice_image(pj.TRI, 5)
    assert m == pytest.approx(0.315, abs=5e-4)
    assert m * 48 >= 15  # >= 15 px at 48 px per edge
    m30, n30 = pj.min_lattice_image(pj.tri_camera(30, 30), 5)
    assert m30 == pytest.approx(0.242, abs=5e-4)
    assert sorted(abs(x) for x in n30) == [2, 2, 3]
    # brute force over the same box agrees
    best = min(np.linalg.norm(pj.TRI.project(v)) for v in itertools.product(range(-5, 6), repeat=3) if any(v))
    assert best == pytest.approx(m)


def _nearest_face_brute_force(faces, cam, pts):
    """Rays through screen points along -w: per point, the face met nearest the viewer (largest depth t), or -1."""
    ur, vr, w = (np.asarray(x, dtype=float) for x in (cam.u_row, cam.v_row, cam.w))
    p0 = pts[:, :1] * ur / ur.dot(ur) + pts[:, 1:] * vr / vr.dot(vr)
    best, best_t = np.full(len(pts), -1), np.full(len(pts), -np.inf)
    for i, f in enumerate(faces):
        k = "xyz".index(f.axis[1])
        t = (f.cube[k] + 1 - p0[:, k]) / w[k]
        p = p0 + t[:, None] * w
        inside = np.ones(len(pts), dtype=bool)
        for j in (j for j in range(3) if j != k):
            inside &= (p[:, j] >= f.cube[j] - 1e-9) & (p[:, j] <= f.cube[j] + 1 + 1e-9)
        hit = inside & (t > best_t)
        best[hit], best_t[hit] = i, t[hit]
    return best


@settings(max_examples=30, deadline=None)
@given(st.sets(st.tuples(*[st.integers(0, 3)] * 3), min_size=1, max_size=14), st.sampled_from(["ISO", "TRI"]))
def test_painters_order_agrees_with_a_brute_force_depth_test(cubes, cam_name):
    cam = pj.ISO if cam_name == "ISO" else pj.TRI
    faces = pj.cube_faces(cubes, cam)
    polys = [cam.project(f.corners) for f in faces]
    pts = np.random.default_rng(len(cubes)).uniform(-4.5, 4.5, size=(400, 2))
    near = np.zeros(len(pts), dtype=bool)  # within 0.02 edge of a face outline: shared edges tie, skip them
    painted = np.full(len(pts), -1)
    for i, p in enumerate(polys):
        for a, b in zip(p, np.roll(p, -1, axis=0)):
            d = b - a
            t = np.clip((pts - a) @ d / d.dot(d), 0, 1)
            near |= np.linalg.norm(a + t[:, None] * d - pts, axis=1) < 0.02
        painted[Path(p).contains_points(pts)] = i
    truth = _nearest_face_brute_force(faces, cam, pts)
    assert (~near).sum() > 100
    assert np.array_equal(painted[~near], truth[~near])


def test_glued_faces_are_left_out_and_order_is_by_depth():
    faces = pj.cube_faces([(0, 0, 0), (1, 0, 0), (0, 0, 1)], pj.TRI)
    assert ("+x" not in {f.axis for f in faces if f.cube == (0, 0, 0)})
    assert ("+z" not in {f.axis for f in faces if f.cube == (0, 0, 0)})
    depths = [pj.TRI.depth(f.cube) for f in faces]
    assert depths == sorted(depths)


def test_cube_rotations_are_the_24_proper_ones_and_a_group():
    rs = pj.CUBE_ROTATIONS
    assert len(rs) == 24 and len({r.tobytes() for r in rs}) == 24
    keys = {r.tobytes() for r in rs}
    for a, b in itertools.product(rs[:6], rs):
        assert (a @ b).tobytes() in keys
    assert all(round(np.linalg.det(r)) == 1 for r in rs)


def test_rotation_is_counter_clockwise_seen_from_the_axis():
    assert np.allclose(pj.rotation("z", 90) @ (1, 0, 0), (0, 1, 0))
    assert np.allclose(pj.rotation("x", 90) @ (0, 1, 0), (0, 0, 1))
    assert np.allclose(pj.rotation("y", 90) @ (0, 0, 1), (1, 0, 0))
    r = pj.random_rotation(np.random.default_rng(3))
    assert np.allclose(r @ r.T, np.eye(3)) and np.linalg.det(r) == pytest.approx(1)


def test_unit_cube_under_iso_shows_three_faces_and_hides_three_edges():
    v = np.array(list(itertools.product((0, 1), repeat=3)), dtype=float)
    idx = {tuple(int(c) for c in p): i for i, p in enumerate(v)}
    faces = []
    for k in range(3):
        for side in (0, 1):
            quad = [p for p in idx if p[k] == side]
            centre = np.mean(quad, axis=0)
            others = [j for j in range(3) if j != k]
            quad.sort(key=lambda p: math.atan2(p[others[1]] - centre[others[1]], p[others[0]] - centre[others[0]]))
            faces.append([idx[p] for p in quad])
    view = pj.polyhedron_view(v, faces, pj.ISO)
    assert len(view.visible_faces) == 3
    assert len(view.hidden_edges) == 3 and len(view.visible_edges) == 9
    assert all(idx[(0, 0, 0)] in e for e in view.hidden_edges)  # the far corner
    assert view.facing_margin == pytest.approx(1 / math.sqrt(3))
    for fi in view.visible_faces:
        assert view.normals[fi] @ pj.ISO.w > 0


def test_pinhole_puts_camera_height_on_the_horizon_and_shrinks_with_depth():
    cam = pj.PinholeCamera(height=1.6, f_px=600, cu=384, cv=300)
    assert cam.project((0.7, 10, 1.6))[1] == pytest.approx(300)
    top_near, top_far = cam.project([(0, 5, 2.0), (0, 10, 2.0)])
    foot_near, foot_far = cam.project([(0, 5, 0.0), (0, 10, 0.0)])
    assert foot_near[1] - top_near[1] == pytest.approx(2 * (foot_far[1] - top_far[1]))
    assert cam.project((1, 5, 1.6))[0] > 384  # +x is screen-right
    with pytest.raises(ValueError):
        cam.project((0, 0, 1))


def test_face_id_buffer_shows_the_last_polygon_on_top():
    a = [(10, 10), (60, 10), (60, 60), (10, 60)]
    b = [(40, 40), (90, 40), (90, 90), (40, 90)]
    ids = pj.face_id_buffer([a, b], 100, scale=2)
    assert ids.shape == (200, 200)
    assert ids[2 * 20, 2 * 20] == 0 and ids[2 * 50, 2 * 50] == 1 and ids[2 * 95, 2 * 5] == -1
