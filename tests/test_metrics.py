"""Metrics against closed forms, and the candy-wrapper acceptance numbers on seed 001's rig."""
import numpy as np
import pytest

import skinkit as sk
from skinkit import metrics, rigs

CUBE_P = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                   [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=np.float64)
CUBE_F = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                   [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]])


def _prism_volume(n, r, h):
    return 0.5 * n * r * r * np.sin(2 * np.pi / n) * h


# --------------------------------------------------------------------------------------------
# Volume, edges, displacement
# --------------------------------------------------------------------------------------------
def test_volume_of_a_cube_and_a_capped_cylinder(rng, random_rigid):
    assert metrics.volume(CUBE_P, CUBE_F) == pytest.approx(1.0, abs=1e-15)
    assert metrics.volume(CUBE_P, CUBE_F[:, ::-1]) == pytest.approx(-1.0)  # inside out
    c = rigs.cylinder(40, 200, 12, 20)
    assert metrics.volume(c.positions, c.faces) == pytest.approx(_prism_volume(12, 40, 200), rel=1e-12)
    c = rigs.cylinder(1.5, 3.0, 64, 1)
    assert metrics.volume(c.positions, c.faces) == pytest.approx(_prism_volume(64, 1.5, 3), rel=1e-12)
    # a rigid motion keeps the volume; a scale multiplies it by the determinant
    M = random_rigid(rng, ())
    moved = c.positions @ M[:3, :3].T + M[:3, 3]
    assert metrics.volume(moved, c.faces) == pytest.approx(_prism_volume(64, 1.5, 3), rel=1e-12)
    assert metrics.volume_ratio(c.positions * [2, 3, 0.5], c.positions, c.faces) == pytest.approx(3.0)


def test_volume_is_batched():
    batch = np.stack([CUBE_P, 2 * CUBE_P, CUBE_P + 5])
    np.testing.assert_allclose(metrics.volume(batch, CUBE_F), [1, 8, 1])
    np.testing.assert_allclose(metrics.volume_ratio(batch, CUBE_P, CUBE_F), [1, 8, 1])


def test_volume_keeps_its_precision_far_from_the_origin():
    """Σ a·(b×c)/6 about the origin cancels badly for a mesh far away (1e5 from it: 2.47
    relative error before); about the vertices' mean it does not."""
    c = rigs.cylinder(1.5, 3.0, 64, 4)
    want = _prism_volume(64, 1.5, 3)
    for offset in (1e2, 1e4, 1e5, 1e7):
        got = metrics.volume(c.positions + offset, c.faces)
        assert got == pytest.approx(want, rel=1e-9), offset
    batch = np.stack([c.positions + 1e6, c.positions * 2 - 1e6])
    np.testing.assert_allclose(metrics.volume(batch, c.faces), [want, 8 * want], rtol=1e-9)


def test_is_closed():
    assert metrics.is_closed(CUBE_F) and metrics.is_closed(CUBE_F[:, ::-1])  # inside out: closed
    assert not metrics.is_closed(CUBE_F[:-2])  # a missing face
    flipped = CUBE_F.copy()
    flipped[0] = flipped[0, ::-1]
    assert not metrics.is_closed(flipped)  # one triangle wound the other way
    assert not metrics.is_closed(np.concatenate([CUBE_F, CUBE_F]))  # an edge in four triangles
    assert not metrics.is_closed(CUBE_F[:0])
    # the cylinder repeats its cap vertices: closed once vertices at one place are one
    c = rigs.cylinder(40, 200, 12, 20)
    assert not metrics.is_closed(c.faces) and metrics.is_closed(c.faces, c.positions)
    strip = rigs.plane_strip()
    assert not metrics.is_closed(strip.faces, strip.positions)


def test_sweep_volume_of_an_open_mesh_is_nan():
    """A volume ratio of an open mesh depends on where the origin is (a translation gave -4):
    the sweep reports NaN there, and the edge and radius metrics as usual."""
    strip = rigs.plane_strip()
    skel = sk.Skeleton.chain(3, float(np.ptp(strip.positions[:, 1])) / 2)
    infl = sk.bind.height_bands(strip.positions, skel)
    m = sk.SkinnedMesh(strip.positions, skel, infl, faces=strip.faces)
    s = metrics.bend_sweep(m, 1, [0.0, 60.0], methods=("lbs", "dqs"))
    for meth in ("lbs", "dqs"):
        assert np.isnan(s["volume_ratio"][meth]).all()
        assert np.isfinite(s["max_edge_stretch"][meth]).all()
    r = rigs.seed001()
    s = metrics.twist_sweep(r, 5, [0.0, 90.0], methods=("lbs",))
    assert np.isfinite(s["volume_ratio"]["lbs"]).all()


def test_edges_and_distortion(rng, random_rigid):
    e = metrics.edges(CUBE_F)
    assert e.shape == (18, 2)  # 12 cube edges + 6 face diagonals
    assert np.all(e[:, 0] < e[:, 1])
    np.testing.assert_allclose(np.sort(metrics.edge_lengths(CUBE_P, e)),
                               [1.0] * 12 + [np.sqrt(2)] * 6)
    M = random_rigid(rng, ())
    np.testing.assert_allclose(metrics.edge_distortion(CUBE_P @ M[:3, :3].T + M[:3, 3], CUBE_P, CUBE_F),
                               1.0)
    np.testing.assert_allclose(metrics.edge_distortion(np.stack([CUBE_P, 3 * CUBE_P]), CUBE_P, CUBE_F),
                               np.repeat([[1.0], [3.0]], 18, 1))
    assert metrics.edges(np.array([[0, 1, 2]])).shape == (3, 2)
    assert metrics.edges(np.array([[0, 1, 2], [2, 1, 3]])).shape == (5, 2)


def test_displacement():
    a = np.zeros((3, 3))
    b = np.array([[3, 4, 0], [0, 0, 0], [1, 2, 2]], dtype=np.float64)
    np.testing.assert_allclose(metrics.displacement(a, b), [5, 0, 3])
    assert metrics.displacement(np.zeros((2, 3, 3)), np.ones((2, 3, 3))).shape == (2, 3)


@pytest.mark.parametrize("faces", [np.zeros((3, 4), int), np.zeros((3, 3)), np.zeros(3, int)])
def test_bad_faces_are_refused(faces):
    with pytest.raises(ValueError, match="faces"):
        metrics.volume(CUBE_P, faces)


# --------------------------------------------------------------------------------------------
# Bone radius and joints
# --------------------------------------------------------------------------------------------
def test_joint_positions_follow_forward_kinematics():
    m = rigs.seed001()
    loc = rigs.bend(m.skeleton, 3, [30, 60])
    K = m.palette(loc)
    np.testing.assert_allclose(metrics.joint_positions(m, K),
                               m.skeleton.global_transforms(loc)[..., :3, 3], atol=1e-9)


def test_radius_of_the_rest_cylinder_is_its_radius():
    m = rigs.seed001()
    r, sel = metrics.bone_radii(m, m.positions, m.palette(), 4, 5)
    # rings at y = 80, 90, 100 lie on the bone from joint 4 (y = 80) to joint 5 (y = 100)
    np.testing.assert_array_equal(np.unique(m.positions[sel, 1]), [80, 90, 100])
    assert sel.size == 36
    np.testing.assert_allclose(r, 40.0)
    assert metrics.min_bone_radius(m, m.positions, m.palette(), 4, 5) == pytest.approx(1.0)
    assert metrics.min_bone_radius(m, m.positions, m.palette(), "joint4", "joint5",
                                   relative=False) == pytest.approx(40.0)
    with pytest.raises(ValueError, match="same place"):
        metrics.bone_radii(m, m.positions, m.palette(), 4, 4)


def test_lbs_radius_follows_the_half_angle_chord():
    # at the middle ring (weights 1/2, 1/2) LBS averages two points 2θ apart: r cos(θ / 2)
    m = rigs.seed001()
    for angle in (30.0, 90.0, 150.0):
        K = m.palette(rigs.twist(m.skeleton, 5, angle))
        P = m.deform(K, method="lbs")
        assert metrics.min_bone_radius(m, P, K, 4, 5) == pytest.approx(np.cos(np.radians(angle) / 2))


# --------------------------------------------------------------------------------------------
# Acceptance: the candy wrapper on seed 001's rig
# --------------------------------------------------------------------------------------------
def test_candy_wrapper_acceptance_at_179_degrees():
    m = rigs.seed001()  # radius 40, height 200, 12 x 20 segments, 11 joints 20 apart
    res = metrics.twist_sweep(m, 5, [179.0])
    lbs, dqs, rigid = (res["min_radius"][k][0] for k in ("lbs", "dqs", "rigid"))
    assert lbs < 0.10
    assert lbs == pytest.approx(np.cos(np.radians(89.5)), rel=1e-9)
    assert dqs > 0.95
    assert rigid == pytest.approx(1.0)
    # rigid: every vertex moves with a single joint, so each piece keeps its shape and volume …
    K = m.palette(rigs.twist(m.skeleton, 5, 179.0))
    P = m.deform(K, method="rigid")
    j = np.take_along_axis(m.indices, np.argmax(m.weights, 1)[:, None], 1)[:, 0]
    for joint in (4, 5):
        piece = np.flatnonzero(j == joint)
        d0 = np.linalg.norm(m.positions[piece, None] - m.positions[None, piece], axis=-1)
        d1 = np.linalg.norm(P[piece, None] - P[None, piece], axis=-1)
        np.testing.assert_allclose(d1, d0, atol=1e-9)
    # … but the mesh tears where the pieces meet: the seam opens by a chord of the twist
    assert res["rigid_gap"][0] == pytest.approx(2 * 40 * np.sin(np.radians(179) / 2), rel=1e-9)
    # with shared vertices the torn band (one ring spacing, 10 of 200) collapses like a
    # ruled surface between circles 179° apart: volume 1 - (10/200)(1 - cos 179°)/3
    want = 1 - (10 / 200) * (1 - np.cos(np.radians(179))) / 3
    assert res["volume_ratio"]["rigid"][0] == pytest.approx(want, abs=2e-3)


def test_lbs_volume_loss_matches_the_closed_form():
    # A band between joints 4 and 5 (20 of 200) with weights (1 - f, f): the LBS ring at f has
    # r² = R² ((1-f)² + f² + 2 f (1-f) cos φ), whose mean over f is R² (2 + cos φ) / 3.
    m = rigs.seed001(height_segments=100, radial_segments=48)
    angles = np.array([0.0, 60.0, 120.0, 179.0])
    res = metrics.twist_sweep(m, 5, angles)
    want = 1 - (20 / 200) * (1 - np.cos(np.radians(angles))) / 3
    np.testing.assert_allclose(res["volume_ratio"]["lbs"], want, atol=5e-4)
    # on a fine mesh DQS keeps the volume
    assert np.all(res["volume_ratio"]["dqs"] > 0.997)
    np.testing.assert_allclose(res["min_radius"]["dqs"], 1.0, atol=1e-9)


@pytest.mark.parametrize("base", ["translate", "scale", "rotate", "bind_shape_too"])
def test_metrics_compare_in_the_skinning_frame(base):
    """With base != bind_shape the kernels put the rest mesh at inv(base) @ bind_shape @ p, not
    at p: the metrics of the bind pose are those of no motion (bulge 0, radius and volume 1), and
    a sweep gives the numbers of the same rig without a base."""
    from skinkit import transforms as tf
    r = rigs.seed001()
    m0 = sk.SkinnedMesh(r.positions, r.skeleton, r.influences, faces=r.faces)
    b = {"translate": tf.translation([0.0, 0, 30]), "scale": tf.scale(2.0),
         "rotate": tf.axis_angle([1.0, 2, 3], 0.7) @ tf.translation([5.0, 0, 0]),
         "bind_shape_too": tf.axis_angle([0.0, 1, 0], 1.1)}[base]
    P0, kw = r.positions, {}
    if base == "bind_shape_too":  # the mesh authored in its own frame, placed by bind_shape
        kw["bind_shape"] = tf.translation([3.0, -7, 11]) @ tf.scale(1.5)
        P0 = (r.positions - [3.0, -7, 11]) / 1.5
    m = sk.SkinnedMesh(P0, r.skeleton, r.influences, faces=r.faces, base=b, **kw)
    K = m.palette()
    P = m.deform(K)
    np.testing.assert_allclose(P, metrics.skinned_rest(m), atol=1e-9)
    assert metrics.bulge(m, P, K) == pytest.approx(0, abs=1e-9)
    assert metrics.min_bone_radius(m, P, K, 4, 5) == pytest.approx(1, abs=1e-12)
    want = metrics.twist_sweep(m0, 5, [0, 90, 179], methods=("lbs", "dqs"), segment=(4, 5))
    got = metrics.twist_sweep(m, 5, [0, 90, 179], methods=("lbs", "dqs"), segment=(4, 5))
    scale = float(np.cbrt(abs(np.linalg.det(np.linalg.solve(m.base, m.bind_shape)[:3, :3]))))
    for key in ("volume_ratio", "max_edge_stretch", "min_radius"):
        for meth in ("lbs", "dqs"):
            np.testing.assert_allclose(got[key][meth], want[key][meth], atol=1e-9, err_msg=key)
    for meth in ("lbs", "dqs"):
        np.testing.assert_allclose(got["bulge"][meth], scale * want["bulge"][meth], atol=1e-9)


def test_sweeps_return_arrays_per_method():
    m = rigs.seed001()
    res = metrics.twist_sweep(m, "joint5", [0, 45, 90], methods=("lbs", "dqs"))
    np.testing.assert_array_equal(res["angles"], [0, 45, 90])
    for key in ("volume_ratio", "min_radius", "max_edge_stretch"):
        assert set(res[key]) == {"lbs", "dqs"}
        assert all(v.shape == (3,) for v in res[key].values())
    assert res["positions"]["lbs"].shape == (3, 278, 3)
    np.testing.assert_allclose([v[0] for v in res["volume_ratio"].values()], 1.0)
    assert res["displacement_lbs_dqs"][0] == pytest.approx(0.0, abs=1e-9)
    assert res["displacement_lbs_dqs"][2] > 1.0
    assert res["rigid_gap"].shape == (3,)


def test_bend_sweep_on_the_arm():
    m = rigs.arm()
    res = metrics.bend_sweep(m, "elbow", [0, 90, 135])
    lbs, dqs = res["volume_ratio"]["lbs"], res["volume_ratio"]["dqs"]
    np.testing.assert_allclose([lbs[0], dqs[0]], 1.0)
    assert np.all(lbs[1:] < dqs[1:])  # LBS loses volume at a bent elbow, DQS much less
    assert dqs[-1] > 0.98


def test_rigid_gap_is_zero_without_a_cut():
    m = rigs.seed001()
    one = sk.SkinnedMesh(m.positions, m.skeleton, (np.full((m.n_vertices, 1), 3), np.ones((m.n_vertices, 1))),
                         faces=m.faces)
    K = m.palette(rigs.twist(m.skeleton, 5, [0.0, 90.0]))
    np.testing.assert_array_equal(metrics.rigid_gap(one, K), [0, 0])
    assert metrics.rigid_gap(one, K[1]) == 0.0
    no_faces = sk.SkinnedMesh(m.positions, m.skeleton, m.influences)
    with pytest.raises(ValueError, match="faces"):
        metrics.rigid_gap(no_faces, K)


def test_sweep_rejects_a_non_mesh():
    with pytest.raises(TypeError, match="SkinnedMesh"):
        metrics.sweep(np.zeros((3, 3)), np.zeros((1, 1, 4, 4)))


def test_metrics_do_not_modify_inputs():
    m = rigs.seed001()
    K = m.palette(rigs.twist(m.skeleton, 5, 120.0))
    P = m.deform(K)
    P0, K0, R0 = P.copy(), K.copy(), m.positions.copy()
    metrics.volume_ratio(P, m.positions, m.faces)
    metrics.min_bone_radius(m, P, K, 4, 5)
    metrics.rigid_gap(m, K)
    metrics.edge_distortion(P, m.positions, m.faces)
    np.testing.assert_array_equal(P, P0)
    np.testing.assert_array_equal(K, K0)
    np.testing.assert_array_equal(m.positions, R0)


def test_twist_axis_can_be_given():
    m = rigs.seed001()
    a = metrics.twist_sweep(m, 5, [90.0], axis=(0, 1, 0))
    b = metrics.twist_sweep(m, 5, [90.0])
    np.testing.assert_allclose(a["volume_ratio"]["lbs"], b["volume_ratio"]["lbs"])
    c = metrics