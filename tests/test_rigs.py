"""Rig scripting: primitives against their closed forms, posing by name, T / A poses, clips from
keyframes, and the built-in seed-001 rig."""
import numpy as np
import pytest

import skinkit as sk
from skinkit import rigs
from skinkit import transforms as tf


def _face_normals(p, f):
    return np.cross(p[f[:, 1]] - p[f[:, 0]], p[f[:, 2]] - p[f[:, 0]])


def _edge_use(faces, positions=None):
    """How many faces use each undirected edge, welding vertices at the same position first."""
    f = np.asarray(faces)
    if positions is not None:
        _, weld = np.unique(np.round(positions, 9), axis=0, return_inverse=True)
        f = weld.reshape(-1)[f]
    e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    return counts


def _winds_outward(prim):
    """Every face normal agrees with the mean of its vertex normals."""
    fn = _face_normals(prim.positions, prim.faces)
    vn = prim.normals[prim.faces].mean(1)
    return np.all(np.einsum("ij,ij->i", fn, vn) > 0)


# --------------------------------------------------------------------------------------------
# Primitives
# --------------------------------------------------------------------------------------------
def test_seed001_cylinder_geometry():
    c = rigs.cylinder(40, 200, 12, 20, matrix=tf.translation([0, 100, 0]))
    side = 12 * 21
    assert c.positions.shape == (side + 2 * 13, 3)
    assert c.faces.shape == (2 * 12 * 20 + 2 * 12, 3)
    p = c.positions
    np.testing.assert_allclose(np.hypot(p[:side, 0], p[:side, 2]), 40.0)
    np.testing.assert_allclose(np.unique(np.round(p[:, 1], 9)), np.arange(0, 201, 10.0))
    # side normals are radial, cap normals axial, all unit length
    np.testing.assert_allclose(c.normals[:side], p[:side] * [1, 0, 1] / 40.0, atol=1e-12)
    np.testing.assert_allclose(np.abs(c.normals[side:, 1]), 1.0)
    np.testing.assert_allclose(np.linalg.norm(c.normals, axis=1), 1.0)
    assert _winds_outward(c)
    # closed: once the cap rims are welded to the side, every edge joins exactly two faces
    assert np.all(_edge_use(c.faces, c.positions) == 2)


def test_cylinder_without_caps_is_open_and_centred():
    c = rigs.cylinder(2.0, 6.0, 8, 3, caps=False)
    assert c.positions.shape == (32, 3)
    np.testing.assert_allclose([c.positions[:, 1].min(), c.positions[:, 1].max()], [-3, 3])
    assert np.any(_edge_use(c.faces) == 1)


def test_capsule_is_every_point_radius_from_its_segment():
    k = rigs.capsule(radius=3.0, length=10.0, radial_segments=10, height_segments=5, cap_segments=4)
    p = k.positions
    closest = np.stack([np.zeros(len(p)), np.clip(p[:, 1], 0, 10), np.zeros(len(p))], 1)
    np.testing.assert_allclose(np.linalg.norm(p - closest, axis=1), 3.0, atol=1e-12)
    np.testing.assert_allclose(k.normals, (p - closest) / 3.0, atol=1e-12)
    np.testing.assert_allclose([p[:, 1].min(), p[:, 1].max()], [-3, 13])
    assert np.all(_edge_use(k.faces) == 2)  # welded and closed
    assert _winds_outward(k)


def test_plane_strip():
    s = rigs.plane_strip(length=50, width=4, length_segments=5, width_segments=2)
    assert s.positions.shape == (18, 3) and s.faces.shape == (20, 3)
    np.testing.assert_allclose(s.positions.min(0), [-2, 0, 0])
    np.testing.assert_allclose(s.positions.max(0), [2, 50, 0])
    assert _winds_outward(s)


def test_placement_matrix_moves_positions_and_normals(rng, random_rigid):
    M = random_rigid(rng, ()) @ tf.scale([2.0, 1.0, 0.5])
    a = rigs.capsule(2, 5, 8, 3, 3)
    b = rigs.capsule(2, 5, 8, 3, 3, matrix=M)
    np.testing.assert_allclose(b.positions, a.positions @ M[:3, :3].T + M[:3, 3], atol=1e-12)
    assert _winds_outward(b)
    mirror = a.transformed(tf.scale([-1.0, 1.0, 1.0]))
    assert _winds_outward(mirror)  # a mirror flips the winding back outward
    np.testing.assert_allclose(np.linalg.norm(b.normals, axis=1), 1.0)
    with pytest.raises(ValueError, match="singular"):
        a.transformed(tf.scale([1.0, 0.0, 1.0]))


@pytest.mark.parametrize("call, exc", [
    (lambda: rigs.cylinder(radial_segments=2), ValueError),
    (lambda: rigs.cylinder(height_segments=0), ValueError),
    (lambda: rigs.cylinder(radius=-1), ValueError),
    (lambda: rigs.cylinder(radial_segments=3.5), TypeError),
    (lambda: rigs.capsule(radius=0), ValueError),
    (lambda: rigs.plane_strip(length_segments=0), ValueError),
    (lambda: rigs.cylinder(matrix=np.ones((4, 4))), ValueError),
])
def test_primitives_reject_bad_arguments(call, exc):
    with pytest.raises(exc):
        call()


# --------------------------------------------------------------------------------------------
# Posing
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, want", [
    (("y", 90), tf.axis_angle([0, 1, 0], 90, degrees=True)),
    (("Z", -30), tf.axis_angle([0, 0, 1], -30, degrees=True)),
    (((1, 1, 0), 45), tf.axis_angle([1, 1, 0], 45, degrees=True)),
    (("XYZ", (10, 20, 30)), tf.euler([10, 20, 30], "XYZ", degrees=True)),
    (("zyx", (10, 20, 30)), tf.euler([10, 20, 30], "zyx", degrees=True)),
    (np.array([0.0, 0.0, np.sin(0.3), np.cos(0.3)]), tf.axis_angle([0, 0, 1], 0.6)),
    (np.array([0.0, 90.0, 0.0]), tf.axis_angle([0, 1, 0], 90, degrees=True)),
    (tf.axis_angle([1, 0, 0], 0.4)[:3, :3], tf.axis_angle([1, 0, 0], 0.4)),
    (tf.axis_angle([1, 0, 0], 0.4) @ tf.translation([1, 2, 3]), tf.axis_angle([1, 0, 0], 0.4)),
])
def test_rotation_specs(spec, want):
    np.testing.assert_allclose(rigs.rotation(spec), want, atol=1e-12)


@pytest.mark.parametrize("spec", [("w", 10), np.eye(3) * 2, np.zeros(5), np.diag([1.0, 1, -1])])
def test_rotation_rejects_bad_specs(spec):
    with pytest.raises(ValueError):
        rigs.rotation(spec)


def test_pose_by_name_composes_or_sets():
    s = rigs.humanoid()
    bind = s.local_bind.copy()
    p = rigs.pose(s, {"l_elbow": ("z", 90), 0: ("y", 180)})
    e = s.index("l_elbow")
    np.testing.assert_allclose(p[e], bind[e] @ tf.axis_angle([0, 0, 1], 90, degrees=True), atol=1e-12)
    np.testing.assert_allclose(p[0], bind[0] @ tf.axis_angle([0, 1, 0], 180, degrees=True), atol=1e-12)
    untouched = [j for j in range(s.n_joints) if j not in (0, e)]
    np.testing.assert_array_equal(p[untouched], bind[untouched])
    twice = rigs.pose(s, {"l_elbow": ("z", 30)}, locals=rigs.pose(s, {"l_elbow": ("z", 60)}))
    np.testing.assert_allclose(twice, rigs.pose(s, {"l_elbow": ("z", 90)}), atol=1e-12)
    set_ = rigs.pose(s, {"l_elbow": ("z", 30)}, locals=p, compose=False)
    np.testing.assert_allclose(set_[e, :3, :3], tf.axis_angle([0, 0, 1], 30, degrees=True)[:3, :3],
                               atol=1e-12)
    np.testing.assert_array_equal(set_[e, :3, 3], bind[e, :3, 3])
    moved = rigs.pose(s, translations={"head": [0, 20, 1]})
    np.testing.assert_array_equal(moved[s.index("head"), :3, 3], [0, 20, 1])
    np.testing.assert_array_equal(s.local_bind, bind)  # the skeleton is not modified
    with pytest.raises(KeyError, match="nose"):
        rigs.pose(s, {"nose": ("x", 1)})
    with pytest.raises(ValueError, match="joints"):
        rigs.pose(s, locals=np.stack([np.eye(4)] * 3))


def test_twist_turns_descendants_about_the_bone_axis():
    s = sk.Skeleton.chain(4, 10.0)
    loc = rigs.twist(s, 1, [0, 90, 180])
    assert loc.shape == (3, 4, 4, 4)
    g = s.global_transforms(loc)
    # the bone runs along y: joint positions stay put, frames below turn by the angle
    np.testing.assert_allclose(g[:, :, :3, 3], np.broadcast_to(s.pivots(), (3, 4, 3)), atol=1e-12)
    np.testing.assert_allclose(g[1, 3, :3, :3], tf.axis_angle([0, 1, 0], 90, degrees=True)[:3, :3],
                               atol=1e-12)
    np.testing.assert_allclose(g[2, 0], np.eye(4))
    bent = s.global_transforms(rigs.bend(s, 1, 90))
    np.testing.assert_allclose(bent[2, :3, 3], [-10, 10, 0], atol=1e-12)  # z-bend swings +y to -x


def test_t_and_a_pose():
    s = rigs.humanoid()
    g = s.global_transforms(rigs.t_pose(s))
    for side in ("l", "r"):
        sh, wr = s.index(side + "_shoulder"), s.index(side + "_wrist")
        np.testing.assert_allclose(g[wr, 1], g[sh, 1])  # T: the arm is horizontal
    a = s.global_transforms(rigs.a_pose(s, 45))
    for side, sign in (("l", 1), ("r", -1)):
        sh, wr = s.index(side + "_shoulder"), s.index(side + "_wrist")
        d = a[wr, :3, 3] - a[sh, :3, 3]
        L = np.linalg.norm(g[wr, :3, 3] - g[sh, :3, 3])
        np.testing.assert_allclose(d, [sign * L * np.sqrt(0.5), -L * np.sqrt(0.5), 0], atol=1e-9)
    sa = rigs.humanoid(bind="A")
    np.testing.assert_allclose(sa.global_transforms(), a, atol=1e-12)
    with pytest.raises(ValueError, match="bind"):
        rigs.humanoid(bind="X")


def test_keyframes_make_a_clip_through_the_poses():
    s = rigs.humanoid()
    clip = rigs.keyframes(s, [0.0, 1.0, 3.0], [{}, {"l_elbow": ("z", 90)}, rigs.a_pose(s)],
                          name="wave")
    assert clip.name == "wave" and clip.duration == 3.0
    np.testing.assert_allclose(clip.sample(0.0), s.local_bind, atol=1e-12)
    np.testing.assert_allclose(clip.sample(1.0), rigs.pose(s, {"l_elbow": ("z", 90)}), atol=1e-12)
    np.testing.assert_allclose(clip.sample(0.5), rigs.pose(s, {"l_elbow": ("z", 45)}), atol=1e-12)
    np.testing.assert_allclose(clip.sample(3.0), rigs.a_pose(s), atol=1e-12)


# --------------------------------------------------------------------------------------------
# Built-in rigs
# --------------------------------------------------------------------------------------------
def test_seed001_rig_has_the_seeds_weights():
    m = rigs.seed001()
    assert m.n_vertices == 278 and m.skeleton.n_joints == 11
    np.testing.assert_allclose(m.skeleton.pivots()[:, 1], np.arange(0, 201, 20.0))
    np.testing.assert_array_equal(m.base, np.eye(4))
    # seed 001 (with its errata): a = y / 20, joints floor(a) and floor(a) + 1, (1 - f, f)
    y = m.positions[:, 1]
    a = y / 20.0
    b = np.clip(np.floor(a), 0, 10).astype(int)
    f = np.where(b >= 10, 0.0, a - b)
    dense = np.zeros((m.n_vertices, 11))
    np.add.at(dense, (np.arange(m.n_vertices), b), 1 - f)
    np.add.at(dense, (np.arange(m.n_vertices), np.minimum(b + 1, 10)), f)
    got = np.zeros_like(dense)
    np.add.at(got, (np.arange(m.n_vertices)[:, None], m.indices), m.weights)
    np.testing.assert_allclose(got, dense, atol=1e-12)
    # the errata's worked example: 63 / 20 = 3.15 → joints 3 and 4 with 0.85 / 0.15
    i, w = sk.bind.height_bands(np.array([[40.0, 63.0, 0.0]]), m.skeleton)
    assert dict(zip(i[0].tolist(), np.round(w[0], 12).tolist())) == {3: 0.85, 4: 0.15}
    assert rigs.seed001(dtype=np.float32).positions.dtype == np.float32


def test_arm_weights_ramp_across_the_elbow():
    m = rigs.arm(upper=30, fore=30, radius=5, blend=6)
    assert m.skeleton.names == ["shoulder", "elbow", "wrist"]
    y = m.positions[:, 1]
    dense = np.zeros((m.n_vertices, 3))
    np.add.at(dense, (np.arange(m.n_vertices)[:, None], m.indices), m.weights)
    np.testing.assert_allclose(dense.sum(1), 1.0)
    np.testing.assert_allclose(dense[:, 1], np.clip((y - 30) / 12 + 0.5, 0, 1), atol=1e-12)
    assert np.all(dense[:, 2] == 0)
    # bending the elbow leaves the upper arm in place and swings the hand's end
    P = m.pose(rigs.bend(m.skeleton, "elbow", 90))
    up = y < 24
    np.testing.assert_allclose(P[up], m.positions[up], atol=1e-12)
    tip = np.argmax(y)
    np.testing.assert_allclose(P[tip], [-35, 30, 0], atol=1e-9)
