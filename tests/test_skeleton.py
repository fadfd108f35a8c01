"""Tests of skinkit.skeleton (and the C skeleton core behind it) against skinkit.reference.

Issue 2's acceptance: FK, inverse bind and palettes on random rigid trees of up to 1,000 joints
(depth <= 64) in shuffled order, batched F = 1 and F = 7, float64 to 1e-12 and float32 to 1e-5
relative to the largest translation; a 1,000-deep chain to 1e-9 / 1e-4; `out=`; every bad input.
"""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import skinkit as sk
from skinkit import _core
from skinkit import reference as ref
from skinkit import transforms as tf

TOL = {np.float64: 1e-12, np.float32: 1e-5}
CHAIN_TOL = {np.float64: 1e-9, np.float32: 1e-4}


def largest_translation(*stacks):
    return max(float(np.abs(tf.to_4x4(s)[..., :3, 3]).max()) for s in stacks)


def relative_error(got, want, scale):
    return float(np.abs(np.asarray(got, np.float64) - want).max()) / scale


def frozen(*arrays):
    """Copies to compare with afterwards: inputs are never modified."""
    return [None if a is None else np.array(a, copy=True) for a in arrays]


def assert_unchanged(arrays, copies):
    for a, c in zip(arrays, copies):
        if a is not None:
            np.testing.assert_array_equal(a, c)


def is_shuffled(parents):
    """True when some child is listed before its parent (the C order is not given for free)."""
    return bool(np.any(parents > np.arange(parents.size)))


# -- forward kinematics ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("frames", [None, 1, 7])
@pytest.mark.parametrize("root_kind", [None, "shared", "per_frame"])
@pytest.mark.parametrize("n_joints", [1, 64, 1000])
def test_forward_kinematics_random_trees(rng, random_tree, random_rigid, tree_depth, n_joints,
                                         root_kind, frames, dtype):
    n_roots = 1 + n_joints // 200
    parents = random_tree(rng, n_joints, max_depth=64, n_roots=n_roots)
    assert tree_depth(parents) == min(64, n_joints - n_roots + 1)
    assert np.sum(parents < 0) == n_roots
    if n_joints > 1:
        assert is_shuffled(parents)
    lead = () if frames is None else (frames,)
    local = random_rigid(rng, lead + (n_joints,)).astype(dtype)
    root = None
    if root_kind == "shared":
        root = random_rigid(rng, ())
    elif root_kind == "per_frame":
        root = random_rigid(rng, (frames or 7,))
    copies = frozen(parents, local, root)

    got = sk.forward_kinematics(parents, local, root=root)

    want = ref.forward_kinematics(parents, local.astype(np.float64), root)
    assert got.shape == want.shape
    assert got.dtype == dtype
    assert relative_error(got, want, largest_translation(want)) <= TOL[dtype]
    assert_unchanged([parents, local, root], copies)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_skeleton_global_transforms_random_tree(rng, random_tree, random_rigid, dtype):
    parents = random_tree(rng, 1000, max_depth=64, n_roots=3)
    bind = random_rigid(rng, 1000)
    pose = random_rigid(rng, (7, 1000))
    root = random_rigid(rng, (7,))
    skel = sk.Skeleton(parents, bind)

    got = skel.global_transforms(pose, root=root, dtype=dtype)
    want = ref.forward_kinematics(parents, pose, root)
    assert got.dtype == dtype and got.shape == (7, 1000, 4, 4)
    assert relative_error(got, want, largest_translation(want)) <= TOL[dtype]

    got_bind = skel.global_transforms(dtype=dtype)
    want_bind = ref.forward_kinematics(parents, bind)
    assert relative_error(got_bind, want_bind, largest_translation(want_bind)) <= TOL[dtype]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_deep_chain(rng, random_rigid, dtype):
    n = 1000
    perm = rng.permutation(n)
    parents = np.full(n, -1)
    parents[perm[1:]] = perm[:-1]  # chain perm[0] -> perm[1] -> ... in shuffled labels
    local = random_rigid(rng, (1, n), reach=1.0).astype(dtype)
    skel = sk.Skeleton(parents, local[0])

    got = sk.forward_kinematics(parents, local)
    want = ref.forward_kinematics(parents, local.astype(np.float64))
    scale = largest_translation(want)
    assert relative_error(got, want, scale) <= CHAIN_TOL[dtype]

    inv = skel.inverse_bind(dtype=dtype)
    assert relative_error(inv, np.linalg.inv(want[0]), scale) <= CHAIN_TOL[dtype]
    pal = skel.palette(local, dtype=dtype)
    assert relative_error(pal, np.broadcast_to(np.eye(4), pal.shape), 1.0) <= CHAIN_TOL[dtype]


def test_hand_checked_order():
    """Joint 0 is a child of 2, 2 a child of 1 (the root): caller order in, caller order out."""
    parents = [2, -1, 1]
    local = tf.translation([[1.0, 0, 0], [0, 10.0, 0], [0, 0, 100.0]])
    g = sk.forward_kinematics(parents, local)
    np.testing.assert_array_equal(g[:, :3, 3], [[1, 10, 100], [0, 10, 0], [0, 10, 100]])
    skel = sk.Skeleton(parents, local, names=["hand", "hips", "arm"])
    np.testing.assert_array_equal(skel.pivots(), [[1, 10, 100], [0, 10, 0], [0, 10, 100]])
    np.testing.assert_array_equal(skel.inverse_bind()[:, :3, 3], -skel.pivots())
    np.testing.assert_array_equal(skel.children("hips"), [2])
    np.testing.assert_array_equal(skel.children("arm"), [0])


def test_forest_and_root_transform():
    parents = [-1, -1, 0]
    local = tf.translation([[1.0, 0, 0], [0, 2.0, 0], [0, 0, 3.0]])
    root = tf.axis_angle([0, 0, 1], np.pi / 2)
    g = sk.forward_kinematics(parents, local, root=root)
    np.testing.assert_allclose(g[:, :3, 3], [[0, 1, 0], [-2, 0, 0], [0, 1, 3]], atol=1e-15)
    np.testing.assert_allclose(g[:, :3, :3], np.broadcast_to(root[:3, :3], (3, 3, 3)), atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compact_forms(rng, random_tree, random_rigid, dtype):
    parents = random_tree(rng, 50)
    local = random_rigid(rng, (7, 50)).astype(dtype)
    root = random_rigid(rng, (7,))
    full = sk.forward_kinematics(parents, local, root=root)

    compact = sk.forward_kinematics(parents, local[..., :3, :], root=root[..., :3, :])
    assert compact.shape == (7, 50, 3, 4) and compact.dtype == dtype
    np.testing.assert_array_equal(compact, full[..., :3, :])
    one = sk.forward_kinematics(parents, local[0, :, :3, :])
    assert one.shape == (50, 3, 4)

    skel = sk.Skeleton(parents, local[0, :, :3, :])
    np.testing.assert_array_equal(skel.local_bind, local[0].astype(np.float64))
    g = skel.global_transforms(local[..., :3, :], dtype=dtype)
    assert g.shape == (7, 50, 3, 4)
    pal = skel.palette(local[..., :3, :], dtype=dtype)
    assert pal.shape == (7, 50, 3, 4) and pal.dtype == dtype
    np.testing.assert_allclose(pal, skel.palette(local, dtype=dtype)[..., :3, :], rtol=0, atol=0)

    ib = skel.inverse_bind()
    p34 = sk.skinning_palette(full[..., :3, :], ib[:, :3, :])
    assert p34.shape == (7, 50, 3, 4) and p34.dtype == dtype
    np.testing.assert_array_equal(p34, sk.skinning_palette(full, ib)[..., :3, :])


# -- inverse bind and pivots ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_inverse_bind_and_pivots_random_tree(rng, random_tree, random_rigid, dtype):
    parents = random_tree(rng, 1000, max_depth=64, n_roots=2)
    bind = random_rigid(rng, 1000)
    skel = sk.Skeleton(parents, bind)
    g = ref.forward_kinematics(parents, bind)
    scale = largest_translation(g)

    inv = skel.inverse_bind(dtype=dtype)
    assert inv.dtype == dtype and inv.shape == (1000, 4, 4)
    assert relative_error(inv, np.linalg.inv(g), scale) <= TOL[dtype]
    piv = skel.pivots(dtype=dtype)
    assert piv.dtype == dtype and piv.shape == (1000, 3)
    assert relative_error(piv, g[:, :3, 3], scale) <= TOL[dtype]

    # the C pivots are the translations of inv(inverse_bind), for both storage types
    ib = np.ascontiguousarray(inv)
    c_piv = _core.pivots(np.empty((1000, 3), dtype), ib)
    assert relative_error(c_piv, g[:, :3, 3], scale) <= TOL[dtype]
    c_piv34 = _core.pivots(np.empty((1000, 3), dtype), np.ascontiguousarray(ib[:, :3]))
    np.testing.assert_array_equal(c_piv34, c_piv)


def scaled_shear_bind(rng, n):
    """Local binds with scale (incl. a mirror) and shear: not rigid, well conditioned."""
    m = np.tile(np.eye(4), (n, 1, 1))
    for j in range(n):
        q = rng.standard_normal(4)
        r = tf.quat_to_matrix(q)[:3, :3]
        shear = np.eye(3) + np.triu(rng.uniform(-0.5, 0.5, (3, 3)), 1)
        s = np.diag(rng.uniform(0.5, 2.0, 3) * (-1 if j == 3 else 1))
        m[j, :3, :3] = r @ shear @ s
        m[j, :3, 3] = rng.uniform(-5, 5, 3)
    return m


def test_inverse_bind_scaled_and_sheared(rng, random_tree):
    parents = random_tree(rng, 12, max_depth=4)
    bind = scaled_shear_bind(rng, 12)
    skel = sk.Skeleton(parents, bind)
    g = ref.forward_kinematics(parents, bind)
    want = np.linalg.inv(g)
    scale = largest_translation(g, want)
    assert relative_error(skel.inverse_bind(), want, scale) <= 1e-12
    np.testing.assert_allclose(skel.inverse_bind() @ g, np.broadcast_to(np.eye(4), g.shape),
                               atol=1e-12)
    pose = skel.local_bind.copy()
    pose[0] = tf.axis_angle([1, 2, 3], 0.3) @ pose[0]
    want_pal = ref.skinning_palette(ref.forward_kinematics(parents, pose), want)
    assert relative_error(skel.palette(pose), want_pal, scale) <= 1e-12


def test_inverse_bind_nearly_rigid_takes_the_general_inverse(rng, random_rigid):
    """A bind whose rotation is orthonormal only to 1e-8 (float32 data, say) must still be
    inverted exactly: transposing it would be off by the non-orthonormality."""
    bind = random_rigid(rng, 20, reach=100.0)
    bind[:, :3, :3] += 1e-8 * rng.standard_normal((20, 3, 3))
    skel = sk.Skeleton(np.full(20, -1), bind)
    want = np.linalg.inv(bind)
    assert relative_error(skel.inverse_bind(), want, largest_translation(bind)) <= 1e-12
    np.testing.assert_allclose(skel.palette(), np.broadcast_to(np.eye(4), bind.shape),
                               rtol=0, atol=1e-13)


@pytest.mark.parametrize("joint", [0, 2])
@pytest.mark.parametrize("singular", ["zero_scale", "flat", "rank1"])
def test_singular_bind_raises_naming_it(joint, singular):
    bind = tf.translation(np.arange(12.0).reshape(4, 3))
    a = bind[joint, :3, :3]
    if singular == "zero_scale":
        a[:] = 0
    elif singular == "flat":
        a[2] = a[0] + a[1]
    else:
        a[:] = np.outer([1.0, 2, 3], [3.0, 1, 2])
    skel = sk.Skeleton([-1, 0, 1, 0], bind, names=["a", "b", "c", "d"])
    name = "abcd"[joint]
    for call in (skel.inverse_bind, skel.palette):
        with pytest.raises(ValueError, match=rf"local_bind.*joint {joint} \('{name}'\).*singular"):
            call()
    # a nearly singular but invertible bind is fine
    bind[joint, :3, :3] = np.diag([1e-3, 1.0, 1.0])
    np.testing.assert_allclose(sk.Skeleton([-1, 0, 1, 0], bind).inverse_bind()[joint, 0, 0],
                               1e3, rtol=1e-12)


def test_overflowing_bind_raises_naming_it():
    bind = tf.scale(np.full((3, 3), 1e120))
    with pytest.raises(ValueError, match=r"local_bind.*joint 0\b.*overflows"):
        sk.Skeleton([-1, 0, 1], bind).inverse_bind()


def test_core_inverse_bind_singular_and_nan():
    g = np.tile(np.eye(4), (3, 1, 1))
    g[1, :3, :3] = 0
    out = np.full((3, 4, 4), 7.0)
    with pytest.raises(ValueError, match=r"bind_globals.*singular.*1"):
        _core.inverse_bind(out, g)
    assert np.all(out == 7.0)  # validated before anything is written
    g[1, :3, :3] = np.eye(3)
    g[2, 0, 3] = np.nan
    with pytest.raises(ValueError, match=r"bind_globals.*not finite"):
        _core.inverse_bind(out, g)
    with pytest.raises(ValueError, match=r"inverse_bind.*not finite"):
        _core.pivots(np.empty((3, 3)), g)
    assert np.all(out == 7.0)


# -- palettes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("frames", [None, 1, 7])
@pytest.mark.parametrize("extras", [False, True])
def test_palette_random_tree(rng, random_tree, random_rigid, frames, extras, dtype):
    J = 1000
    parents = random_tree(rng, J, max_depth=64, n_roots=2)
    bind = random_rigid(rng, J)
    lead = () if frames is None else (frames,)
    pose = random_rigid(rng, lead + (J,))
    root = random_rigid(rng, lead) if extras else None
    base = random_rigid(rng, ()) if extras else None
    bind_shape = None
    if extras:
        bind_shape = tf.compose_trs([1.0, -2.0, 0.5], [0.1, 0.2, 0.3, 0.9], [1.5, 0.8, 1.2])
    skel = sk.Skeleton(parents, bind)
    copies = frozen(pose, root, base, bind_shape)

    got = skel.palette(pose, base=base, bind_shape=bind_shape, root=root, dtype=dtype)

    g_pose = ref.forward_kinematics(parents, pose, root)
    g_bind = ref.forward_kinematics(parents, bind)
    want = ref.skinning_palette(g_pose, ref.inverse_bind(g_bind), base, bind_shape)
    scale = largest_translation(g_pose, g_bind)
    assert got.shape == want.shape and got.dtype == dtype
    assert relative_error(got, want, scale) <= TOL[dtype]
    assert_unchanged([pose, root, base, bind_shape], copies)

    # the free function, from globals, in the globals' dtype
    g_in = g_pose.astype(dtype)
    ib_in = ref.inverse_bind(g_bind).astype(dtype)
    copies = frozen(g_in, ib_in)
    free = sk.skinning_palette(g_in, ib_in, base=base, bind_shape=bind_shape)
    want_free = ref.skinning_palette(g_in.astype(np.float64), ib_in.astype(np.float64), base,
                                     bind_shape)
    assert free.shape == want.shape and free.dtype == dtype
    assert relative_error(free, want_free, scale) <= TOL[dtype]
    assert_unchanged([g_in, ib_in], copies)


def test_bind_pose_palette_is_identity(rng, random_tree, random_rigid):
    parents = random_tree(rng, 200)
    skel = sk.Skeleton(parents, random_rigid(rng, 200))
    np.testing.assert_allclose(skel.palette(), np.broadcast_to(np.eye(4), (200, 4, 4)),
                               rtol=0, atol=1e-12)
    # base = a world matrix moved with the whole skeleton cancels out (seed 001)
    world = random_rigid(rng, ())
    np.testing.assert_allclose(skel.palette(root=world, base=world),
                               np.broadcast_to(np.eye(4), (200, 4, 4)), rtol=0, atol=1e-12)


# -- out= ----------------------------------------------------------------------------------------

def _fk_case(rng, random_tree, random_rigid, dtype=np.float64):
    parents = random_tree(rng, 30)
    local = random_rigid(rng, (2, 30)).astype(dtype)
    return parents, local


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows", [4, 3])
def test_fk_out_written_in_place(rng, random_tree, random_rigid, dtype, rows):
    parents, local = _fk_case(rng, random_tree, random_rigid, dtype)
    local = np.ascontiguousarray(local[..., :rows, :])
    out = np.full((2, 30, rows, 4), np.nan, dtype=dtype)
    res = sk.forward_kinematics(parents, local, out=out)
    assert res is out
    np.testing.assert_array_equal(out, sk.forward_kinematics(parents, local))
    # a strided view is fine too: it is written through
    big = np.zeros((2, 30, rows, 8), dtype=dtype)
    res = sk.forward_kinematics(parents, local, out=big[..., ::2])
    np.testing.assert_array_equal(big[..., ::2], out)
    assert np.all(big[..., 1::2] == 0)


def _bad_outs(dtype, shape, local):
    yield "dtype", TypeError, np.zeros(shape, np.float32 if dtype == np.float64 else np.float64)
    yield "int dtype", TypeError, np.zeros(shape, np.int64)
    yield "shape", ValueError, np.zeros(shape[:-3] + (shape[-3] + 1,) + shape[-2:], dtype)
    yield "compact", ValueError, np.zeros(shape[:-2] + (3, 4), dtype)
    ro = np.zeros(shape, dtype)
    ro.flags.writeable = False
    yield "read-only", ValueError, ro
    yield "overlap", ValueError, local
    yield "list", TypeError, np.zeros(shape, dtype).tolist()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fk_bad_out(rng, random_tree, random_rigid, dtype):
    parents, local = _fk_case(rng, random_tree, random_rigid, dtype)
    copies = frozen(parents, local)
    for what, exc, out in _bad_outs(dtype, local.shape, local):
        before = np.array(out, copy=True)
        with pytest.raises(exc, match="out"):
            sk.forward_kinematics(parents, local, out=out)
        np.testing.assert_array_equal(out, before, err_msg=what)
    assert_unchanged([parents, local], copies)
    # a view overlapping the input (not the same array)
    for view in (local[:, ::-1], local[::-1], local.reshape(-1)[::-1].reshape(local.shape)):
        with pytest.raises(ValueError, match="out.*overlap"):
            sk.forward_kinematics(parents, local, out=view)
        assert_unchanged([local], copies[1:])
    root = np.zeros((2, 30, 4, 4), dtype)
    root[1, 0] = np.eye(4)
    with pytest.raises(ValueError, match="out.*overlap"):
        sk.forward_kinematics(parents, local, root=root[1, 0], out=root)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_palette_out(rng, random_tree, random_rigid, dtype):
    parents, local = _fk_case(rng, random_tree, random_rigid, dtype)
    g = sk.forward_kinematics(parents, local)
    ib = np.linalg.inv(g[0]).astype(dtype)
    copies = frozen(g, ib)
    out = np.full(g.shape, np.nan, dtype)
    assert sk.skinning_palette(g, ib, out=out) is out
    np.testing.assert_array_equal(out, sk.skinning_palette(g, ib))
    for what, exc, bad in _bad_outs(dtype, g.shape, g):
        before = np.array(bad, copy=True)
        with pytest.raises(exc, match="out"):
            sk.skinning_palette(g, ib, out=bad)
        np.testing.assert_array_equal(bad, before, err_msg=what)
    assert_unchanged([g, ib], copies)
    # out overlapping the inverse binds, the base or the bind shape
    for name, kwargs in [("inverse_bind", {}), ("base", {}), ("bind_shape", {})]:
        buf = np.zeros((2, 30, 4, 4), dtype)
        if name == "inverse_bind":
            buf[0] = ib
            args = (g, buf[0])
        elif name == "base":
            buf[0, 0] = np.eye(4)
            args, kwargs = (g, ib), {"base": buf[0, 0]}
        else:
            buf[0, 0] = np.eye(4)
            args, kwargs = (g, ib), {"bind_shape": buf[0, 0]}
        before = buf.copy()
        with pytest.raises(ValueError, match="out.*overlap"):
            sk.skinning_palette(*args, out=buf, **kwargs)
        np.testing.assert_array_equal(buf, before)


def test_out_untouched_when_an_input_is_bad(rng, random_tree, random_rigid):
    parents, local = _fk_case(rng, random_tree, random_rigid)
    out = np.full(local.shape, 5.0)
    bad = local.copy()
    bad[1, 3, 0, 0] = np.nan
    with pytest.raises(ValueError, match="local"):
        sk.forward_kinematics(parents, bad, out=out)
    cyc = parents.copy()
    cyc[parents == -1] = int(np.flatnonzero(parents != -1)[0])  # the root hangs below a child
    with pytest.raises(ValueError, match="parents"):
        sk.forward_kinematics(cyc, local, out=out)
    assert np.all(out == 5.0)


# -- bad input -------------------------------------------------------------------------------------

BAD_PARENTS = [
    ("cycle", [-1, 2, 3, 1], ValueError, r"parents: joint [123]\b.*cycle"),
    ("cycle above a good joint", [3, 0, -1, 1], ValueError, r"parents: joint [013]\b.*cycle"),
    ("two roots in a loop", [1, 0], ValueError, r"parents: joint [01]\b.*cycle"),
    ("self-parent", [-1, 1, 0], ValueError, r"parents: joint 1\b.*own parent"),
    ("too large", [-1, 0, 3], ValueError, r"parents: joint 2\b"),
    ("below -1", [-1, -2, 0], ValueError, r"parents: joint 1\b"),
    ("huge", [-1, 2**62, 0], ValueError, r"parents: joint 1\b"),
    ("uint64 max", np.array([2**64 - 1, 0, 0], np.uint64), ValueError, r"parents: joint 0\b"),
    ("non-integer float", [-1, 0.5, 0], ValueError, r"parents.*integer"),
    ("huge float", [-1, 1e30, 0], ValueError, r"parents"),
    ("nan", [-1, np.nan, 0], ValueError, r"parents"),
    ("inf", [-1, 0, np.inf], ValueError, r"parents"),
    ("2-D", [[-1, 0, 1]], ValueError, r"parents"),
    ("bool", np.array([True, False, False]), TypeError, r"parents"),
    ("complex", np.array([-1, 0, 1], complex), TypeError, r"parents"),
    ("object", np.array([-1, 0, None], object), TypeError, r"parents"),
    ("strings", ["-1", "0", "1"], TypeError, r"parents"),
    ("ragged", [-1, [0, 1], 1], TypeError, r"parents"),
]


@pytest.mark.parametrize("what,parents,exc,match", BAD_PARENTS, ids=[b[0] for b in BAD_PARENTS])
def test_bad_parents(what, parents, exc, match):
    n = np.shape(parents)[-1] if what != "ragged" else 3
    local = tf.identity(n)
    out = np.full((n, 4, 4), 3.0)
    with pytest.raises(exc, match=match):
        sk.forward_kinematics(parents, local, out=out)
    assert np.all(out == 3.0)
    with pytest.raises(exc, match=match):
        sk.Skeleton(parents, local)


def test_float_and_unsigned_parents_accepted():
    g = sk.forward_kinematics(np.array([-1.0, 0.0, 1.0]), tf.translation([[1.0, 0, 0]] * 3))
    np.testing.assert_array_equal(g[:, 0, 3], [1, 2, 3])
    g = sk.forward_kinematics(np.array([1, 2, 3, -1], np.int8), tf.translation([[1.0, 0, 0]] * 4))
    np.testing.assert_array_equal(g[:, 0, 3], [4, 3, 2, 1])
    # unsigned parents cannot say -1, but a forest of uint8 children under a float root can
    g = sk.forward_kinematics(np.array([-1, 0, 0], np.int64).astype(np.float32),
                              tf.translation([[1.0, 0, 0]] * 3))
    np.testing.assert_array_equal(g[:, 0, 3], [1, 2, 2])


def test_zero_joints():
    for parents in ([], np.zeros(0, np.int64)):
        with pytest.raises(ValueError, match=r"parents.*J = 0"):
            sk.forward_kinematics(parents, np.zeros((0, 4, 4)))
        with pytest.raises(ValueError, match=r"parents.*J = 0"):
            sk.Skeleton(parents, np.zeros((0, 4, 4)))


def test_cycle_names_a_joint_in_the_cycle():
    # 0 -> 1 -> 2 -> 1: joint 0 hangs below the cycle {1, 2} but is not in it
    with pytest.raises(ValueError, match=r"joint [12]\b.*cycle"):
        sk.Skeleton([1, 2, 1, -1], tf.identity(4))


def _nonfinite(a, where, value):
    a = np.array(a, dtype=np.float64)
    a[where] = value
    return a


BAD_MATRICES = [
    ("local nan", "local", ValueError, lambda L, R: (_nonfinite(L, (1, 0, 0), np.nan), R)),
    ("local inf", "local", ValueError, lambda L, R: (_nonfinite(L, (2, 1, 3), np.inf), R)),
    ("local -inf in last row", "local", ValueError,
     lambda L, R: (_nonfinite(L, (0, 3, 3), -np.inf), R)),
    ("root nan", "root", ValueError, lambda L, R: (L, _nonfinite(R, (0, 3), np.nan))),
    ("local last row", "local", ValueError, lambda L, R: (_nonfinite(L, (1, 3, 0), 0.5), R)),
    ("local last row w", "local", ValueError, lambda L, R: (_nonfinite(L, (1, 3, 3), 2.0), R)),
    ("root last row", "root", ValueError, lambda L, R: (L, _nonfinite(R, (3, 2), 1e-3))),
    ("local (J,4,3)", "local", ValueError, lambda L, R: (L[..., :3], R)),
    ("local (J,3,3)", "local", ValueError, lambda L, R: (L[:, :3, :3], R)),
    ("local (J,16)", "local", ValueError, lambda L, R: (L.reshape(3, 16), R)),
    ("local (4,4)", "local", ValueError, lambda L, R: (L[0], R)),
    ("local (1,1,J,4,4)", "local", ValueError, lambda L, R: (L[None, None], R)),
    ("local wrong J", "local", ValueError, lambda L, R: (L[:2], R)),
    ("root (3,3)", "root", ValueError, lambda L, R: (L, R[:3, :3])),
    ("root (2,2,4,4)", "root", ValueError, lambda L, R: (L, np.tile(R, (2, 2, 1, 1)))),
    ("root frames", "root", ValueError,
     lambda L, R: (np.tile(L, (3, 1, 1, 1)), np.tile(R, (2, 1, 1)))),
    ("local complex", "local", TypeError, lambda L, R: (L.astype(complex), R)),
    ("local bool", "local", TypeError, lambda L, R: (L.astype(bool), R)),
    ("local object", "local", TypeError, lambda L, R: (L.astype(object), R)),
    ("local str", "local", TypeError, lambda L, R: (L.astype(str), R)),
    ("root complex", "root", TypeError, lambda L, R: (L, R.astype(np.complex64))),
    ("root object", "root", TypeError, lambda L, R: (L, R.astype(object))),
]


@pytest.mark.parametrize("what,name,exc,make", BAD_MATRICES, ids=[b[0] for b in BAD_MATRICES])
def test_bad_matrices_forward_kinematics(what, name, exc, make):
    local, root = make(tf.translation([[1.0, 2, 3]] * 3), tf.identity())
    copies = frozen(local, root) if np.asarray(local).dtype != object else None
    with pytest.raises(exc, match=name):
        sk.forward_kinematics([-1, 0, 1], local, root=root)
    if copies is not None:
        assert_unchanged([local, root], copies)
    skel = sk.Skeleton([-1, 0, 1], tf.identity(3))
    if not (name == "local" and np.ndim(local) == 4):
        with pytest.raises(exc, match=name):
            skel.global_transforms(local, root=root)
        with pytest.raises(exc, match=name):
            skel.palette(local, root=root)
    if name == "local" and np.ndim(local) == 3:
        with pytest.raises(exc, match="local_bind"):
            sk.Skeleton([-1, 0, 1], local)


BAD_PALETTE_ARGS = [
    ("global nan", "global_transforms", ValueError, {"g": (1, 0, 3), "value": np.nan}),
    ("inverse_bind inf", "inverse_bind", ValueError, {"ib": (2, 1, 1), "value": np.inf}),
    ("base nan", "base", ValueError, {"base": (0, 0), "value": np.nan}),
    ("bind_shape inf", "bind_shape", ValueError, {"bind_shape": (1, 3), "value": np.inf}),
    ("global last row", "global_transforms", ValueError, {"g": (0, 3, 1), "value": 1.0}),
    ("inverse_bind last row", "inverse_bind", ValueError, {"ib": (0, 3, 3), "value": 0.0}),
    ("base last row", "base", ValueError, {"base": (3, 0), "value": 0.1}),
    ("bind_shape last row", "bind_shape", ValueError, {"bind_shape": (3, 3), "value": 3.0}),
    ("base singular", "base", ValueError, {"base": (1, 1), "value": 0.0}),
]


@pytest.mark.parametrize("what,name,exc,spec", BAD_PALETTE_ARGS,
                         ids=[b[0] for b in BAD_PALETTE_ARGS])
def test_bad_palette_arguments(what, name, exc, spec):
    args = {"g": tf.translation([[1.0, 2, 3]] * 3), "ib": tf.identity(3),
            "base": tf.identity(), "bind_shape": tf.identity()}
    key = next(k for k in spec if k != "value")
    args[key][spec[key]] = spec["value"]
    if what == "base singular":
        args["base"][:3, :3] = 0
    with pytest.raises(exc, match=name):
        sk.skinning_palette(args["g"], args["ib"], base=args["base"], bind_shape=args["bind_shape"])


@pytest.mark.parametrize("name,value,exc", [
    ("global_transforms", np.zeros((3, 4, 3)), ValueError),
    ("global_transforms", np.zeros((2, 2, 3, 4, 4)), ValueError),
    ("global_transforms", np.ones((3, 4, 4), complex), TypeError),
    ("global_transforms", np.ones((3, 4, 4), bool), TypeError),
    ("inverse_bind", tf.identity(2), ValueError),
    ("inverse_bind", tf.identity((1, 3)), ValueError),
    ("inverse_bind", tf.identity(3).astype(object), TypeError),
    ("base", tf.identity(2), ValueError),
    ("base", np.eye(3), ValueError),
    ("base", np.eye(4, dtype=complex), TypeError),
    ("bind_shape", tf.identity(2), ValueError),
    ("bind_shape", np.eye(4, dtype=bool), TypeError),
])
def test_palette_wrong_shapes_and_dtypes(name, value, exc):
    args = {"global_transforms": tf.identity(3), "inverse_bind": tf.identity(3),
            "base": None, "bind_shape": None}
    args[name] = value
    with pytest.raises(exc, match=name):
        sk.skinning_palette(**args)


def test_real_dtypes_are_cast_silently():
    local = np.tile(np.eye(4, dtype=np.int32), (3, 1, 1))
    local[:, 0, 3] = 2
    g = sk.forward_kinematics([-1, 0, 1], local, root=np.eye(4, dtype=np.uint8))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g[:, 0, 3], [2, 4, 6])
    g16 = sk.forward_kinematics([-1, 0, 1], local.astype(np.float16))
    assert g16.dtype == np.float64
    # byte-swapped J-sized arrays are J-sized: converted, not refused
    swapped = local.astype(np.float64).astype(np.dtype(np.float64).newbyteorder())
    np.testing.assert_array_equal(sk.forward_kinematics([-1, 0, 1], swapped), g)
    pal = sk.skinning_palette(g.astype(np.float32), np.tile(np.eye(4, dtype=np.int16), (3, 1, 1)))
    assert pal.dtype == np.float32


def test_empty_frames():
    g = sk.forward_kinematics([-1, 0], np.zeros((0, 2, 4, 4)))
    assert g.shape == (0, 2, 4, 4)
    pal = sk.skinning_palette(np.zeros((0, 2, 3, 4)), tf.identity(2))
    assert pal.shape == (0, 2, 3, 4)


# -- the C functions called directly with wrong arrays -----------------------------------------

def _good_fk_args():
    return [np.empty((2, 3, 4, 4)), tf.identity(3), np.array([-1, 0, 1], np.int64), None]


def _misaligned(shape, dtype=np.float64):
    raw = np.zeros(int(np.prod(shape)) * np.dtype(dtype).itemsize + 1, np.uint8)
    return raw[1:].view(dtype).reshape(shape)


def _swapped(a):
    return a.astype(a.dtype.newbyteorder())


FK_BAD = [
    (0, "list", TypeError, lambda a: a.tolist()),
    (0, "float16", TypeError, lambda a: a.astype(np.float16)),
    (0, "int", TypeError, lambda a: a.astype(np.int64)),
    (0, "3-D", ValueError, lambda a: a[0]),
    (0, "rows 2", ValueError, lambda a: np.ascontiguousarray(a[..., :2, :])),
    (0, "non-contiguous", ValueError, lambda a: np.empty((2, 3, 4, 8))[..., ::2]),
    (0, "read-only", ValueError, lambda a: np.lib.stride_tricks.as_strided(a, writeable=False)),
    (0, "misaligned", ValueError, lambda a: _misaligned(a.shape)),
    (0, "byte-swapped", TypeError, lambda a: _swapped(a)),
    (1, "None", TypeError, lambda a: None),
    (1, "float32", TypeError, lambda a: a.astype(np.float32)),
    (1, "wrong J", ValueError, lambda a: tf.identity(4)),
    (1, "wrong rows", ValueError, lambda a: np.ascontiguousarray(a[:, :3])),
    (1, "wrong frames", ValueError, lambda a: tf.identity((3, 3))),
    (1, "non-contiguous", ValueError, lambda a: np.asfortranarray(a)),
    (1, "5-D", ValueError, lambda a: a[None, None]),
    (2, "int32", TypeError, lambda a: a.astype(np.int32)),
    (2, "float", TypeError, lambda a: a.astype(np.float64)),
    (2, "wrong J", ValueError, lambda a: np.array([-1, 0], np.int64)),
    (2, "2-D", ValueError, lambda a: a[None]),
    (2, "strided", ValueError, lambda a: np.repeat(a, 2)[::2]),
    (2, "bad order", ValueError, lambda a: np.array([-1, 2, 0], np.int64)),
    (2, "out of range", ValueError, lambda a: np.array([-1, 0, 7], np.int64)),
    (2, "very negative", ValueError, lambda a: np.array([-1, 0, -(2**62)], np.int64)),
    (3, "list", TypeError, lambda a: np.eye(4)[:3].tolist()),
    (3, "(3,4)", ValueError, lambda a: np.eye(4)[:3].copy()),
    (3, "(1,4,4)", ValueError, lambda a: np.eye(4)[None]),
    (3, "float32", TypeError, lambda a: np.zeros((1, 3, 4), np.float32)),
    (3, "frames", ValueError, lambda a: np.zeros((3, 3, 4))),
    (3, "non-contiguous", ValueError, lambda a: np.zeros((2, 3, 8))[..., ::2]),
]


@pytest.mark.parametrize("pos,what,exc,make", FK_BAD, ids=[f"{b[0]}-{b[1]}" for b in FK_BAD])
def test_core_fk_rejects_wrong_arrays(pos, what, exc, make):
    args = _good_fk_args()
    assert _core.fk(*args) is args[0]
    args[pos] = make(args[pos] if args[pos] is not None else None)
    with pytest.raises(exc):
        _core.fk(*args)


def test_core_fk_out_overlap_and_arity():
    local = tf.identity((2, 3))
    with pytest.raises(ValueError, match="out.*overlap"):
        _core.fk(local, local, np.array([-1, 0, 1], np.int64), None)
    with pytest.raises(TypeError):
        _core.fk()
    with pytest.raises(TypeError):
        _core.fk(np.empty((1, 3, 4, 4)), tf.identity(3))


@pytest.mark.parametrize("fn", ["inverse_bind", "pivots"])
def test_core_inverse_bind_and_pivots_reject_wrong_arrays(fn):
    f = getattr(_core, fn)
    good_in = tf.identity(3)
    good_out = np.empty((3, 3)) if fn == "pivots" else np.empty((3, 4, 4))
    assert f(good_out, good_in) is good_out
    bads = [
        (good_out, good_in.tolist(), TypeError),
        (good_out, good_in.astype(np.int64), TypeError),
        (good_out, good_in.astype(complex), TypeError),
        (good_out, good_in[None], ValueError),
        (good_out, np.zeros((3, 4, 3)), ValueError),
        (good_out, np.asfortranarray(good_in), ValueError),
        (good_out, _swapped(good_in), TypeError),
        (good_out, _misaligned((3, 4, 4)), ValueError),
        (good_out.astype(np.float32), good_in, TypeError),
        (np.empty((4,) + good_out.shape[1:]), good_in, ValueError),
        (np.empty((3, 4, 8))[..., ::2] if fn != "pivots" else np.empty((3, 6))[:, ::2],
         good_in, ValueError),
        (None, good_in, TypeError),
        (good_in if fn != "pivots" else good_in[:, 0, :3], good_in, ValueError),
    ]
    ro = np.empty_like(good_out)
    ro.flags.writeable = False
    bads.append((ro, good_in, ValueError))
    for out, inp, exc in bads:
        with pytest.raises(exc):
            f(out, inp)


def test_core_palette_rejects_wrong_arrays():
    g, ib, e34 = tf.identity((2, 3)), tf.identity(3), np.eye(4)[:3].copy()
    out = np.empty((2, 3, 4, 4))
    assert _core.palette(out, g, ib, e34, e34) is out
    bads = [
        ((out, g.tolist(), ib, None, None), TypeError),
        ((out, g[0], ib, None, None), ValueError),
        ((out, g, ib.astype(np.float32), None, None), TypeError),
        ((out, g, ib[:2], None, None), ValueError),
        ((out, g, np.ascontiguousarray(ib[:, :3]), None, None), ValueError),
        ((out, g, ib, np.eye(4), None), ValueError),
        ((out, g, ib, None, e34.astype(np.float32)), TypeError),
        ((out, g, ib, None, np.asfortranarray(e34)), ValueError),
        ((out, g, ib, [[1, 0, 0, 0]] * 3, None), TypeError),
        ((out.astype(np.float32), g, ib, None, None), TypeError),
        ((out[:1], g, ib, None, None), ValueError),
        ((g, g, ib, None, None), ValueError),
        ((np.empty((2, 3, 4, 8))[..., ::2], g, ib, None, None), ValueError),
        ((_misaligned(out.shape), g, ib, None, None), ValueError),
    ]
    for args, exc in bads:
        with pytest.raises(exc):
            _core.palette(*args)


def test_core_validate_parents():
    _core.validate_parents(np.array([-1, 0, 0, 2], np.int64))
    with pytest.raises(ValueError, match=r"parents: joint 1\b"):
        _core.validate_parents(np.array([-1, 1], np.int64))
    with pytest.raises(ValueError, match=r"parents: joint 2\b"):
        _core.validate_parents(np.array([-1, 0, -5], np.int64))
    for bad in ([-1, 0], np.array([-1, 0], np.int32), np.array([[-1]], np.int64),
                np.array([-1, 0, 0, 0], np.int64)[::2]):
        with pytest.raises((TypeError, ValueError)):
            _core.validate_parents(bad)


# -- the Skeleton class ---------------------------------------------------------------------------

def test_chain_is_seed_001():
    """Seed 001: 11 transforms, each translated (0, 20, 0) from its parent: joint k at y = 20 k."""
    skel = sk.Skeleton.chain(11, 20)
    assert skel.n_joints == len(skel) == 11
    np.testing.assert_array_equal(skel.parents, np.arange(11) - 1)
    want = np.zeros((11, 3))
    want[:, 1] = 20.0 * np.arange(11)
    np.testing.assert_array_equal(skel.pivots(), want)
    np.testing.assert_array_equal(skel.bind_globals()[:, :3, :3], np.broadcast_to(np.eye(3),
                                                                                  (11, 3, 3)))
    np.testing.assert_array_equal(skel.inverse_bind()[:, 1, 3], -want[:, 1])
    np.testing.assert_array_equal(sk.Skeleton.chain(3, 2.5, axis="z").pivots(),
                                  [[0, 0, 0], [0, 0, 2.5], [0, 0, 5]])
    with pytest.raises(ValueError, match="n"):
        sk.Skeleton.chain(0, 20)
    with pytest.raises(TypeError, match="n"):
        sk.Skeleton.chain(2.0, 20)
    with pytest.raises(ValueError, match="axis"):
        sk.Skeleton.chain(3, 1, axis="w")
    for bad, exc in ((np.nan, ValueError), (np.inf, ValueError), ([1, 2], ValueError),
                     ("20", TypeError), (1j, TypeError)):
        with pytest.raises(exc, match="spacing"):
            sk.Skeleton.chain(3, bad)


def test_names_and_lookup():
    skel = sk.Skeleton([2, -1, 1], tf.identity(3), names=["hand", "hips", "arm"])
    assert skel.names == ["hand", "hips", "arm"]
    assert skel.index("arm") == 2 and skel.index(1) == 1 and skel.index(-1) == 2
    with pytest.raises(KeyError, match="foot"):
        skel.index("foot")
    with pytest.raises(IndexError):
        skel.index(3)
    assert sk.Skeleton([-1, 0], tf.identity(2)).names == ["joint0", "joint1"]
    with pytest.raises(ValueError, match=r"names: joint 2\b.*'hips'.*joint 1\b"):
        sk.Skeleton([-1, 0, 1], tf.identity(3), names=["root", "hips", "hips"])
    with pytest.raises(ValueError, match="names"):
        sk.Skeleton([-1, 0, 1], tf.identity(3), names=["a", "b"])


def test_tails_validated():
    skel = sk.Skeleton([-1, 0], tf.identity(2), tails=[[0, 1, 0], [0, 2, 0]])
    assert skel.tails.shape == (2, 3) and skel.tails.dtype == np.float64
    with pytest.raises(ValueError, match="tails"):
        sk.Skeleton([-1, 0], tf.identity(2), tails=[[0, 1, 0]])
    with pytest.raises(ValueError, match="tails"):
        sk.Skeleton([-1, 0], tf.identity(2), tails=[[0, 1, 0], [0, np.nan, 0]])
    with pytest.raises(TypeError, match="tails"):
        sk.Skeleton([-1, 0], tf.identity(2), tails=np.zeros((2, 3), complex))


def test_skeleton_does_not_keep_or_modify_caller_arrays():
    parents = np.array([-1, 0, 1])
    local = tf.translation([[1.0, 0, 0]] * 3)
    copies = frozen(parents, local)
    skel = sk.Skeleton(parents, local)
    local[:] = 0
    parents[:] = -1
    np.testing.assert_array_equal(skel.local_bind, copies[1])
    np.testing.assert_array_equal(skel.parents, copies[0])
    inv = skel.inverse_bind()
    inv[:] = 0
    glob = skel.bind_globals()
    glob[:] = 0
    np.testing.assert_array_equal(skel.pivots(), [[1, 0, 0], [2, 0, 0], [3, 0, 0]])


def test_repr():
    skel = sk.Skeleton.chain(11, 20)
    text = repr(skel)
    assert text.startswith("Skeleton(11 joints")
    assert "depth 11" in text and "joint0" in text and "…" in text
    small = sk.Skeleton([2, -1, 1], tf.identity(3), names=["hand", "hips", "arm"],
                        tails=np.zeros((3, 3)))
    text = repr(small)
    assert "3 joints" in text and "depth 3" in text and "['hips']" in text and "tails" in text


def _skeletons():
    yield sk.Skeleton.chain(11, 20)
    yield sk.Skeleton([2, -1, 1], tf.compose_trs([[1.0, 2, 3]] * 3, [0.1, 0.2, 0.3, 0.9]),
                      names=["hand", "hips", "arm"], tails=np.arange(9.0).reshape(3, 3))


@pytest.mark.parametrize("skel", list(_skeletons()), ids=["chain", "tails"])
def test_pickle_round_trip(skel):
    back = pickle.loads(pickle.dumps(skel))
    assert back == skel and back is not skel
    assert back.names == skel.names
    np.testing.assert_array_equal(back.inverse_bind(), skel.inverse_bind())
    np.testing.assert_array_equal(back.palette(), skel.palette())
    assert repr(back) == repr(skel)


@pytest.mark.parametrize("skel", list(_skeletons()), ids=["chain", "tails"])
def test_npz_round_trip(skel, tmp_path):
    path = tmp_path / "skel.npz"
    skel.save(path)
    with np.load(path, allow_pickle=False) as d:  # no pickles inside
        assert set(d.files) >= {"parents", "local_bind", "names"}
    back = sk.Skeleton.load(path)
    assert back == skel
    assert back.names == skel.names
    np.testing.assert_array_equal(back.pivots(), skel.pivots())


def test_equality():
    a = sk.Skeleton.chain(3, 1)
    assert a == sk.Skeleton.chain(3, 1)
    assert a != sk.Skeleton.chain(3, 2)
    assert a != sk.Skeleton.chain(3, 1, names=["a", "b", "c"])
    assert a != sk.Skeleton([-1, 0, 0], a.local_bind)
    assert (a == "chain") is False


def test_npz_without_suffix_and_file_objects(tmp_path):
    import io

    skel = sk.Skeleton([2, -1, 1], tf.identity(3), names=["hand", "hips", "arm"])
    skel.save(tmp_path / "rig")  # numpy.savez appends .npz
    assert (tmp_path / "rig.npz").exists()
    assert sk.Skeleton.load(tmp_path / "rig") == skel
    assert sk.Skeleton.load(str(tmp_path / "rig.npz")) == skel
    buf = io.BytesIO()
    skel.save(buf)
    buf.seek(0)
    assert sk.Skeleton.load(buf) == skel
    with pytest.raises(FileNotFoundError):
        sk.Skeleton.load(tmp_path / "missing")


# -- properties over any small forest in any order ---------------------------------------------

@st.composite
def forests(draw):
    """(parents in a shuffled order, a relabelling permutation) of a forest of 1 to 12 joints."""
    n = draw(st.integers(1, 12))
    sorted_parents = np.array([draw(st.integers(-1, j - 1)) for j in range(n)], dtype=np.int64)
    perm = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    parents = np.full(n, -1, dtype=np.int64)
    has = sorted_parents >= 0
    parents[perm[has]] = perm[sorted_parents[has]]
    relabel = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    return parents, relabel


@settings(max_examples=80, deadline=None, derandomize=True)
@given(forests(), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 3]), st.booleans())
def test_fk_property_any_order(forest, seed, frames, compact):
    parents, relabel = forest
    n = parents.size
    lead = () if frames is None else (frames,)
    count = int(np.prod(lead + (n,)))
    local = np.tile(np.eye(4), (count, 1, 1))
    local[:, :3, :3] = Rotation.random(count, random_state=seed).as_matrix()
    local[:, :3, 3] = np.random.default_rng(seed).uniform(-3, 3, (count, 3))
    local = local.reshape(lead + (n, 4, 4))
    rows = 3 if compact else 4
    got = sk.forward_kinematics(parents, local[..., :rows, :])
    want = ref.forward_kinematics(parents, local)
    assert got.shape == want[..., :rows, :].shape
    np.testing.assert_allclose(got, want[..., :rows, :], rtol=0, atol=1e-12 * max(1, n))
    # relabelling the joints relabels the result and nothing else: new joint k is old relabel[k]
    inverse = np.empty_like(relabel)
    inverse[relabel] = np.arange(n)
    new_parents = np.where(parents[relabel] < 0, -1, inverse[np.maximum(parents[relabel], 0)])
    moved = sk.forward_kinematics(new_parents, local[..., relabel, :rows, :])
    np.testing.assert_array_equal(moved, got[..., relabel, :, :])
    skel = sk.Skeleton(new_parents, local.reshape(-1, n, 4, 4)[0][relabel])
    np.testing.assert_allclose(skel.palette(local[..., relabel, :, :]),
                               ref.skinning_palette(want[..., relabel, :, :],
                                                    np.linalg.inv(ref.forward_kinematics(
                                                        new_parents, skel.local_bind))),
                               rtol=0, atol=1e-11 * max(1, n))


def _misaligned_copy(a):
    raw = np.zeros(a.nbytes + 1, np.uint8)
    m = raw[1:].view(a.dtype).reshape(a.shape)
    m[...] = a
    assert not m.flags.aligned
    return m


@pytest.mark.parametrize("variant", ["misaligned", "byteswapped", "fortran", "reversed"])
def test_odd_layouts_of_joint_sized_arrays_are_read(rng, random_tree, random_rigid, variant):
    """J-sized arrays are converted for the C core, whatever their layout (DESIGN section 5)."""
    make = {"misaligned": _misaligned_copy,
            "byteswapped": lambda a: a.astype(a.dtype.newbyteorder()),
            "fortran": np.asfortranarray,
            "reversed": lambda a: np.ascontiguousarray(a[::-1])[::-1]}[variant]
    parents = random_tree(rng, 20)
    local = random_rigid(rng, (3, 20))
    root = random_rigid(rng, (3,))
    want = sk.forward_kinematics(parents, local, root=root)
    np.testing.assert_array_equal(sk.forward_kinematics(parents, make(local), root=make(root)),
                                  want)
    np.testing.assert_array_equal(sk.forward_kinematics(parents, make(local[..., :3, :]),
                                                        root=make(root[..., :3, :])),
                                  want[..., :3, :])
    ib = np.linalg.inv(want[0])
    base, shape = random_rigid(rng, ()), random_rigid(rng, ())
    pal = sk.skinning_palette(want, ib, base=base, bind_shape=shape)
    np.testing.assert_array_equal(
        sk.skinning_palette(make(want), make(ib), base=make(base), bind_shape=make(shape)), pal)
    skel = sk.Skeleton(parents, make(local[0]))
    np.testing.assert_array_equal(skel.palette(make(local), root=make(root)),
                                  sk.Skeleton(parents, local[0]).palette(local, root=root))


def test_palette_of_no_joints():
    with pytest.raises(ValueError, match=r"global_transforms.*J = 0"):
        sk.skinning_palette(np.zeros((0, 4, 4)), np.zeros((0, 4, 4)))


def test_cached_arrays_are_read_only_and_index_takes_names_or_ints():
    """The bind pose and the joint order are cached (bind globals, sorted parents): an edit in
    place would leave them stale (pivots at the old place, the bind palette not the identity),
    so parents, local_bind and tails are read-only; a pickled copy too."""
    import pickle
    s = sk.Skeleton.chain(3, 2.0, names=["a", "b", "c"])
    s.pivots()
    for a in (s.parents, s.local_bind):
        with pytest.raises(ValueError, match="read-only"):
            a[1] = 0
    assert not pickle.loads(pickle.dumps(s)).local_bind.flags.writeable
    edited = s.local_bind.copy()  # the way to change a bind pose: a new skeleton
    edited[1, 0, 3] = 5.0
    s2 = sk.Skeleton(s.parents, edited, names=s.names)
    np.testing.assert_allclose(s2.pivots()[1], [5.0, 2.0, 0.0])
    np.testing.assert_allclose(s2.palette(), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-15)
    assert s.index("b") == 1 and s.index(np.int64(-1)) == 2
    for bad in (1.7, True, None):
        with pytest.raises(TypeError, match="joint"):
            s.index(bad)
    with pytest.raises(TypeError, match="names"):
        sk.Skeleton.chain(3, 1.0, names="abc")

