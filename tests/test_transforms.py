"""Tests of skinkit.transforms against scipy.spatial.transform where they overlap, and of the
helpers SciPy does not have (TRS, polar, rigid inverse) against their defining identities."""
import itertools

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from skinkit import transforms as tf

PROPER = ["xyx", "xzx", "yxy", "yzy", "zxz", "zyz"]
TAIT_BRYAN = ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]
SEQUENCES = [s for base in PROPER + TAIT_BRYAN for s in (base, base.upper())]
SHORT = ["x", "Y", "z", "xy", "YZ", "zx", "XZ"]


def rotations(rng, n):
    return Rotation.from_quat(rng.standard_normal((n, 4)))


@pytest.mark.parametrize("seq", SEQUENCES + SHORT)
def test_euler_matches_scipy(rng, seq):
    angles = rng.uniform(-np.pi, np.pi, (50, len(seq)))
    got = tf.euler(angles, seq)
    assert got.shape == (50, 4, 4)
    np.testing.assert_allclose(got[:, :3, :3], Rotation.from_euler(seq, angles).as_matrix(),
                               rtol=0, atol=1e-14)
    np.testing.assert_array_equal(got[:, 3], np.broadcast_to([0, 0, 0, 1], (50, 4)))
    np.testing.assert_array_equal(got[:, :3, 3], 0)
    deg = tf.euler(np.rad2deg(angles[0]), seq, degrees=True)
    assert deg.shape == (4, 4)
    np.testing.assert_allclose(deg, got[0], rtol=0, atol=1e-14)


def test_euler_intrinsic_is_reversed_extrinsic(rng):
    a = rng.uniform(-3, 3, (10, 3))
    np.testing.assert_allclose(tf.euler(a, "XYZ"), tf.euler(a[:, ::-1], "zyx"), atol=1e-15)
    # intrinsic XYZ is Rx @ Ry @ Rz
    rx, ry, rz = (tf.axis_angle(ax, a[:, i]) for i, ax in enumerate(np.eye(3)))
    np.testing.assert_allclose(tf.euler(a, "XYZ"), rx @ ry @ rz, atol=1e-15)
    np.testing.assert_allclose(tf.euler(a, "xyz"), rz @ ry @ rx, atol=1e-15)


def test_euler_single_axis_shapes():
    assert tf.euler(0.5, "x").shape == (4, 4)
    assert tf.euler([0.1, 0.2, 0.3], "z").shape == (3, 4, 4)
    np.testing.assert_allclose(tf.euler([0.1, 0.2, 0.3], "z")[:, :3, :3],
                               Rotation.from_euler("z", [[0.1], [0.2], [0.3]]).as_matrix(),
                               atol=1e-15)
    np.testing.assert_array_equal(tf.euler([[0.1], [0.2], [0.3]], "z"),
                                  tf.euler([0.1, 0.2, 0.3], "z"))


@pytest.mark.parametrize("seq", ["", "xyzx", "xYz", "abc", "xxy", "XYY", "xx"])
def test_euler_bad_sequence(seq):
    with pytest.raises(ValueError, match="seq"):
        tf.euler(np.zeros(max(1, len(seq))), seq)
    with pytest.raises(ValueError):
        Rotation.from_euler(seq, np.zeros(max(1, len(seq))))


def test_euler_bad_angles_shape():
    with pytest.raises(ValueError, match="angles"):
        tf.euler(np.zeros((4, 2)), "xyz")


def test_quat_to_matrix_matches_scipy(rng):
    q = rng.standard_normal((200, 4)) * rng.uniform(0.1, 10, (200, 1))  # not unit: normalised
    got = tf.quat_to_matrix(q)
    assert got.shape == (200, 4, 4)
    np.testing.assert_allclose(got[:, :3, :3], Rotation.from_quat(q).as_matrix(), atol=1e-14)
    np.testing.assert_allclose(tf.quat_to_matrix(q), tf.quat_to_matrix(-q), atol=1e-15)
    with pytest.raises(ValueError, match="q"):
        tf.quat_to_matrix([0, 0, 0, 0])
    with pytest.raises(ValueError, match="q"):
        tf.quat_to_matrix([0, 0, 1])


def scipy_canonical(q):
    """The DESIGN sign rule: w > 0, or when w == 0 the first non-zero component > 0."""
    q = np.array(q, dtype=np.float64)
    for row in q.reshape(-1, 4):
        key = next((c for c in (row[3], row[0], row[1], row[2]) if c != 0), 0)
        if key < 0:
            row *= -1
    return q


def special_rotations():
    """Rotations by pi (w == 0) and near pi about many axes: every branch of Shepperd's method
    and of the canonical sign rule."""
    axes = [a for a in itertools.product([-1, 0, 1], repeat=3) if any(a)]
    out = []
    for a in axes:
        for angle in (np.pi, np.pi - 1e-9, 0.5, 2.0):
            out.append(Rotation.from_rotvec(np.array(a, float) / np.linalg.norm(a) * angle))
    out.append(Rotation.identity())
    return Rotation.concatenate(out)


def test_matrix_to_quat_matches_scipy_canonical(rng):
    r = Rotation.concatenate([rotations(rng, 500), special_rotations()])
    m = r.as_matrix()
    got = tf.matrix_to_quat(m)
    want = r.as_quat(canonical=True)
    # the same rotation, and the same sign where SciPy's canonical rule agrees with ours
    np.testing.assert_allclose(np.abs(np.sum(got * want, axis=1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(got, scipy_canonical(want), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-15)
    # 4x4 and 3x4 inputs read the rotation part
    m4 = tf.compose_trs(rng.standard_normal((len(r), 3)), r.as_quat())
    np.testing.assert_allclose(tf.matrix_to_quat(m4), got, atol=1e-12)
    np.testing.assert_allclose(tf.matrix_to_quat(m4[:, :3]), got, atol=1e-12)
    # round trip
    np.testing.assert_allclose(tf.quat_to_matrix(got)[:, :3, :3], m, atol=1e-14)


@pytest.mark.parametrize("kind", ["uniform", "per_axis", "sheared", "mirrored"])
def test_matrix_to_quat_of_a_scaled_matrix_is_its_rotation(rng, kind):
    """A 3x3 that is not a rotation gives the rotation of its polar decomposition, as SciPy's
    Rotation.from_matrix does; a scale without shear gives exactly the rotation it scales (it
    gave a 106° turn for a 90° one scaled by 2)."""
    rot = rotations(rng, 200).as_matrix()
    s = {"uniform": np.full((200, 3), 2.0), "per_axis": rng.uniform(0.3, 3, (200, 3)),
         "sheared": rng.uniform(0.3, 3, (200, 3)), "mirrored": rng.uniform(0.3, 3, (200, 3))}[kind]
    a = rot * s[:, None, :]
    if kind == "sheared":
        a = a @ np.array([[1.0, 0.4, 0], [0, 1, 0.2], [0, 0, 1]])
    if kind == "mirrored":
        a = a @ np.diag([1.0, 1, -1])
    got = tf.matrix_to_quat(a)
    np.testing.assert_allclose(tf.quat_to_matrix(got)[:, :3, :3], tf.polar(a)[0], atol=1e-12)
    if kind != "mirrored":  # SciPy's rotation of a mirror differs (no proper-rotation rule)
        want = tf.quat_canonical(Rotation.from_matrix(a).as_quat())
        np.testing.assert_allclose(got, want, atol=1e-12)
    if kind in ("uniform", "per_axis"):
        np.testing.assert_allclose(tf.quat_to_matrix(got)[:, :3, :3], rot, atol=1e-12)
    m4 = np.broadcast_to(np.eye(4), (200, 4, 4)).copy()
    m4[:, :3, :3] = a
    np.testing.assert_allclose(tf.matrix_to_quat(m4), got, atol=0)


def test_matrix_to_quat_bad_shape():
    with pytest.raises(ValueError, match="m"):
        tf.matrix_to_quat(np.eye(2))


@pytest.mark.parametrize("q,want", [
    ([0, 0, 0, -1], [0, 0, 0, 1]),
    ([-1, 0, 0, 0], [1, 0, 0, 0]),
    ([0, -1, 0, 0], [0, 1, 0, 0]),
    ([0, 0, -1, 0], [0, 0, 1, 0]),
    ([0, -0.6, 0.8, 0], [0, 0.6, -0.8, 0]),
    ([0.5, -0.5, 0.5, -0.5], [-0.5, 0.5, -0.5, 0.5]),
    ([-0.5, 0.5, 0.5, 0.5], [-0.5, 0.5, 0.5, 0.5]),
])
def test_quat_canonical(q, want):
    np.testing.assert_array_equal(tf.quat_canonical(q), want)
    batch = tf.quat_canonical(np.array([q, want]))
    np.testing.assert_array_equal(batch, [want, want])


def test_rotvec_and_axis_angle_match_scipy(rng):
    v = rng.standard_normal((100, 3)) * rng.uniform(0, 3, (100, 1))
    np.testing.assert_allclose(tf.rotvec(v)[:, :3, :3], Rotation.from_rotvec(v).as_matrix(),
                               atol=1e-14)
    np.testing.assert_array_equal(tf.rotvec(np.zeros(3)), np.eye(4))
    np.testing.assert_array_equal(tf.rotvec(np.zeros((2, 5, 3))), tf.identity((2, 5)))
    axis = rng.standard_normal((100, 3))
    angle = rng.uniform(-4, 4, 100)
    want = Rotation.from_rotvec(axis / np.linalg.norm(axis, axis=1, keepdims=True)
                                * angle[:, None]).as_matrix()
    np.testing.assert_allclose(tf.axis_angle(axis, angle)[:, :3, :3], want, atol=1e-14)
    np.testing.assert_allclose(tf.axis_angle(axis, np.rad2deg(angle), degrees=True)[:, :3, :3],
                               want, atol=1e-14)
    # right-hand rule: +90 degrees about z takes x to y
    np.testing.assert_allclose(tf.axis_angle([0, 0, 1], 90, degrees=True) @ [1, 0, 0, 1],
                               [0, 1, 0, 1], atol=1e-15)
    with pytest.raises(ValueError, match="axis"):
        tf.axis_angle([0, 0, 0], 1.0)


def test_quat_multiply_and_conjugate_match_scipy(rng):
    a, b = rotations(rng, 50), rotations(rng, 50)
    ab = tf.quat_multiply(a.as_quat(), b.as_quat())
    np.testing.assert_allclose(tf.quat_to_matrix(ab)[:, :3, :3], (a * b).as_matrix(),
                               atol=1e-14)
    np.testing.assert_allclose(tf.quat_canonical(ab), scipy_canonical((a * b).as_quat()),
                               atol=1e-14)
    inv = tf.quat_conjugate(a.as_quat())
    np.testing.assert_allclose(tf.quat_to_matrix(inv)[:, :3, :3], a.inv().as_matrix(),
                               atol=1e-14)


def test_slerp_matches_scipy(rng):
    for _ in range(20):
        pair = rotations(rng, 2)
        t = np.linspace(0, 1, 11)
        want = Slerp([0, 1], pair)(t).as_matrix()
        got = tf.quat_slerp(pair[0].as_quat(), pair[1].as_quat(), t)
        assert got.shape == (11, 4)
        np.testing.assert_allclose(tf.quat_to_matrix(got)[:, :3, :3], want, atol=1e-12)
        # shortest arc whatever the sign of either end
        flipped = tf.quat_slerp(pair[0].as_quat(), -pair[1].as_quat(), t)
        np.testing.assert_allclose(tf.quat_to_matrix(flipped)[:, :3, :3], want, atol=1e-12)
    q = rotations(rng, 1).as_quat()[0]
    np.testing.assert_allclose(tf.quat_slerp(q, q, [0.0, 0.3, 1.0]), [q, q, q], atol=1e-15)
    # nearly identical ends take the linear branch without dividing by ~0
    q2 = q + 1e-12
    res = tf.quat_slerp(q, q2, 0.5)
    assert np.all(np.isfinite(res))
    np.testing.assert_allclose(res, q / np.linalg.norm(q), atol=1e-11)


def test_translation_scale_identity():
    t = tf.translation([[1.0, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(t @ [0, 0, 0, 1], [[1, 2, 3, 1], [4, 5, 6, 1]])
    np.testing.assert_array_equal(tf.scale(2.0), np.diag([2.0, 2, 2, 1]))
    np.testing.assert_array_equal(tf.scale([1, 2, 3]), np.diag([1.0, 2, 3, 1]))
    assert tf.identity().shape == (4, 4) and tf.identity(3).shape == (3, 4, 4)
    assert tf.identity((2, 5)).shape == (2, 5, 4, 4)
    with pytest.raises(ValueError, match="t"):
        tf.translation([1.0, 2.0])
    with pytest.raises(ValueError, match="s"):
        tf.scale([1.0, 2.0])


def test_to_4x4_and_3x4(rng, random_rigid):
    m = random_rigid(rng, (2, 3))
    np.testing.assert_array_equal(tf.to_4x4(m[..., :3, :]), m)
    np.testing.assert_array_equal(tf.to_3x4(m), m[..., :3, :])
    np.testing.assert_array_equal(tf.to_4x4(m), m)


@pytest.mark.parametrize("negative", [False, True])
def test_compose_decompose_trs_round_trip(rng, negative):
    n = 100
    t = rng.uniform(-10, 10, (n, 3))
    q = tf.quat_canonical(rotations(rng, n).as_quat())
    s = rng.uniform(0.2, 3.0, (n, 3))
    if negative:
        s[:, 2] *= -1  # a mirror: decompose puts the negative determinant into the last scale
    m = tf.compose_trs(t, q, s)
    # T @ R @ S (glTF's node order)
    want = tf.translation(t) @ tf.quat_to_matrix(q) @ tf.scale(s)
    np.testing.assert_allclose(m, want, atol=1e-13)
    t2, q2, s2 = tf.decompose_trs(m)
    np.testing.assert_allclose(t2, t, atol=1e-13)
    np.testing.assert_allclose(s2, s, atol=1e-13)
    np.testing.assert_allclose(q2, q, atol=1e-12)
    np.testing.assert_allclose(tf.compose_trs(t2, q2, s2), m, atol=1e-12)
    # SciPy agrees on the rotation
    np.testing.assert_allclose(Rotation.from_quat(q2).as_matrix(), tf.quat_to_matrix(q)[:, :3, :3],
                               atol=1e-12)


def test_compose_trs_partial():
    np.testing.assert_array_equal(tf.compose_trs(), np.eye(4))
    np.testing.assert_array_equal(tf.compose_trs(t=[1.0, 2, 3]), tf.translation([1.0, 2, 3]))
    np.testing.assert_array_equal(tf.compose_trs(s=[2.0, 2, 2]), tf.scale(2.0))
    m = tf.compose_trs(t=[[1.0, 0, 0], [2.0, 0, 0]], q=[0, 0, 0, 1])
    assert m.shape == (2, 4, 4)


@pytest.mark.parametrize("kind", ["general", "negative_det", "rotation", "symmetric", "singular"])
def test_polar(rng, kind):
    a = rng.standard_normal((100, 3, 3))
    if kind == "negative_det":
        a[np.linalg.det(a) > 0, :, 0] *= -1
    elif kind == "rotation":
        a = rotations(rng, 100).as_matrix()
    elif kind == "symmetric":
        b = rng.standard_normal((100, 3, 3))
        a = b @ np.swapaxes(b, 1, 2) + np.eye(3)  # symmetric positive definite
    elif kind == "singular":
        a[:, :, 2] = a[:, :, 0] + a[:, :, 1]
    r, s = tf.polar(a)
    assert r.shape == s.shape == (100, 3, 3)
    np.testing.assert_allclose(r @ s, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(s, 1, 2), s, atol=0)
    np.testing.assert_allclose(np.swapaxes(r, 1, 2) @ r, np.broadcast_to(np.eye(3), r.shape),
                               atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, atol=1e-12)  # proper, even for det A < 0
    eig = np.linalg.eigvalsh(s)
    if kind != "singular":
        # S carries the reflection of a negative determinant as its one negative eigenvalue
        neg = np.linalg.det(a) < 0
        assert neg.any() == (kind in ("general", "negative_det"))
        np.testing.assert_array_equal(np.sum(eig < 0, axis=1), neg.astype(int))
    if kind == "rotation":
        np.testing.assert_allclose(r, a, atol=1e-12)
        np.testing.assert_allclose(s, np.broadcast_to(np.eye(3), s.shape), atol=1e-12)
    if kind == "symmetric":
        np.testing.assert_allclose(r, np.broadcast_to(np.eye(3), r.shape), atol=1e-10)
        np.testing.assert_allclose(s, a, atol=1e-10)
    if kind != "singular":
        # SciPy's nearest rotation (as_matrix of from_matrix) is the polar factor when det > 0
        pos = np.linalg.det(a) > 0
        if pos.any():
            np.testing.assert_allclose(r[pos], Rotation.from_matrix(a[pos]).as_matrix(),
                                       atol=1e-10)


def test_polar_shapes():
    # the reflection goes to the smallest singular value: S = diag(-2, 3, 4), R = diag(-1, 1, -1)
    r, s = tf.polar(np.diag([2.0, 3.0, -4.0]))
    np.testing.assert_allclose(r, np.diag([-1.0, 1.0, -1.0]), atol=1e-15)
    np.testing.assert_allclose(s, np.diag([-2.0, 3.0, 4.0]), atol=1e-14)
    assert tf.polar(np.zeros((2, 5, 3, 3)))[0].shape == (2, 5, 3, 3)
    with pytest.raises(ValueError, match="a"):
        tf.polar(np.eye(4))


@pytest.mark.parametrize("case", ["mirror_x", "mirror_z", "rotated_mirror", "scaled_mirror",
                                  "near_tie", "minus_identity", "float32_mirror", "two_tied"])
def test_polar_mirror_with_a_shared_smallest_singular_value(rng, case):
    """A mirror's sign may go on any direction sharing the smallest singular value; the one
    taken leaves the smallest rotation (a plain mirror: R = I), ties between those to the
    nearest coordinate axis.  Checked against the defining identities and a brute-force search
    over the candidate directions."""
    rot = rotations(rng, 1).as_matrix()[0]
    a = {"mirror_x": np.diag([-1.0, 1, 1]), "mirror_z": np.diag([1.0, 1, -1]),
         "rotated_mirror": rot @ np.diag([-1.0, 1, 1]),
         "scaled_mirror": 2.5 * rot @ np.diag([1.0, -1, 1]) @ rot.T,
         "near_tie": np.diag([-1.0, 1 + 3e-6, 1 - 2e-6]), "minus_identity": -np.eye(3),
         "float32_mirror": (rot @ np.diag([-1.0, 1, 1])).astype(np.float32).astype(np.float64),
         "two_tied": np.diag([-1.0, 1, 3])}[case]
    r, s = tf.polar(a)
    np.testing.assert_allclose(r @ s, a, atol=1e-14)
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-14)
    assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(s, s.T, atol=1e-5 * np.abs(a).max())  # symmetric within the tie
    assert np.sum(np.linalg.eigvalsh(0.5 * (s + s.T)) < 0) == 1
    # brute force: R = Q (I - 2 n n^T) over unit n in the tied space; none rotates less
    u, sig, vt = np.linalg.svd(a)
    q = u @ vt
    tied = vt[sig - sig[-1] <= 1e-5 * sig[0]]
    c = rng.standard_normal((20000, len(tied))) @ tied
    n = c / np.linalg.norm(c, axis=1, keepdims=True)
    cands = q[None] - 2.0 * np.einsum("ij,nj,nk->nik", q, n, n)
    best_trace = np.einsum("nii->n", cands).max()
    assert np.trace(r) >= best_trace - 1e-6
    expect = {"mirror_x": np.eye(3), "mirror_z": np.eye(3), "scaled_mirror": np.eye(3),
              "near_tie": np.eye(3), "two_tied": np.eye(3),
              "minus_identity": np.diag([1.0, -1, -1])}  # the rotation about x, the first axis
    if case in expect:
        np.testing.assert_allclose(r, expect[case], atol=1e-5)


def test_rigid_inverse(rng, random_rigid):
    m = random_rigid(rng, (4, 6), reach=50.0)
    inv = tf.rigid_inverse(m)
    np.testing.assert_allclose(inv, np.linalg.inv(m), atol=1e-12)
    np.testing.assert_allclose(inv @ m, np.broadcast_to(np.eye(4), m.shape), atol=1e-12)
    inv34 = tf.rigid_inverse(m[..., :3, :])
    assert inv34.shape == (4, 6, 3, 4)
    np.testing.assert_allclose(inv34, inv[..., :3, :], atol=0)


NON_REAL = [np.array([1 + 2j, 0, 0]), np.array([True, False, True]), np.array([1, 2, None], object),
            np.array(["1", "2", "3"])]


@pytest.mark.parametrize("bad", NON_REAL, ids=["complex", "bool", "object", "str"])
def test_non_real_dtypes_raise_type_error(bad):
    """A cast would silently drop imaginary parts or read True as 1 (DESIGN section 5)."""
    b4 = np.concatenate([bad, bad[:1]])
    b33 = np.stack([bad] * 3)
    b44 = np.stack([b4] * 4)
    calls = [
        ("t", lambda: tf.translation(bad)), ("s", lambda: tf.scale(bad)),
        ("axis", lambda: tf.axis_angle(bad, 1.0)), ("angle", lambda: tf.axis_angle([0, 0, 1], bad)),
        ("v", lambda: tf.rotvec(bad)), ("angles", lambda: tf.euler(bad, "xyz")),
        ("q", lambda: tf.quat_to_matrix(b4)), ("q", lambda: tf.quat_canonical(b4)),
        ("m", lambda: tf.matrix_to_quat(b33)), ("a", lambda: tf.quat_multiply(b4, b4)),
        ("q", lambda: tf.quat_conjugate(b4)), ("a", lambda: tf.quat_slerp(b4, b4, 0.5)),
        ("t", lambda: tf.quat_slerp([0, 0, 0, 1], [0, 0, 0, 1], bad)),
        ("t", lambda: tf.compose_trs(t=bad)), ("a", lambda: tf.polar(b33)),
        ("m", lambda: tf.decompose_trs(b44)), ("m", lambda: tf.rigid_inverse(b44)),
        ("m", lambda: tf.to_4x4(b44[:3])),
    ]
    for name, call in calls:
        with pytest.raises(TypeError, match=rf"^{name}\b"):
            call()


@pytest.mark.parametrize("fn", [tf.decompose_trs, tf.rigid_inverse, tf.to_4x4, tf.to_3x4])
@pytest.mark.parametrize("shape", [(3,), (2, 2), (4, 3), (3, 3), (5, 4), (2, 4, 5)])
def test_affine_helpers_check_shapes(fn, shape):
    with pytest.raises(ValueError, match=r"^m must have shape"):
        fn(np.zeros(shape))


def test_to_3x4_keeps_dtype_and_is_a_view():
    m = np.tile(np.eye(4, dtype=np.float32), (2, 1, 1))
    v = tf.to_3x4(m)
    assert v.dtype == np.float32 and v.shape == (2, 3, 4) and np.shares_memory(v, m)
    assert tf.to_3x4(v).shape == (2, 3, 4)


@pytest.mark.parametrize("seq", [None, 3, ["x", "y", "z"], b"xyz"])
def test_euler_seq_must_be_a_string(seq):
    with pytest.raises(TypeError, match="seq"):
        tf.euler([0.0, 0.0, 0.0], seq)
