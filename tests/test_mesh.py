"""SkinnedMesh, Clip / Channel and bake: sampling against closed forms, posing against the
NumPy reference, saving, and every bad argument."""
import pickle

import numpy as np
import pytest

import skinkit as sk
from skinkit import reference as ref
from skinkit import rigs
from skinkit import transforms as tf
from skinkit.mesh import Channel, Clip, SkinnedMesh, bake


def _chain_mesh(dtype=np.float64, n=5, spacing=10.0, per=4, rng=None):
    """A ring of points every 2.5 units up a chain of n joints, height-band weights."""
    skel = sk.Skeleton.chain(n, spacing)
    y = np.arange(0, (n - 1) * spacing + 1e-9, spacing / per)
    ang = np.linspace(0, 2 * np.pi, 6, endpoint=False)
    P = np.array([[3 * np.cos(a), h, 3 * np.sin(a)] for h in y for a in ang])
    a = P[:, 1] / spacing
    b1 = np.clip(np.floor(a), 0, n - 1)
    f = np.where(b1 >= n - 1, 0.0, a - b1)
    idx = np.stack([b1, np.minimum(b1 + 1, n - 1)], 1).astype(np.int32)
    w = np.stack([1 - f, f], 1)
    N = P * np.array([1.0, 0.0, 1.0])
    N /= np.linalg.norm(N, axis=1, keepdims=True)
    return SkinnedMesh(P.astype(dtype), skel, (idx, w.astype(dtype)), normals=N.astype(dtype))


def _ref_palette(skel, local, base=None, bind_shape=None):
    g = ref.forward_kinematics(skel.parents, local)
    ib = ref.inverse_bind(ref.forward_kinematics(skel.parents, skel.local_bind))
    return ref.skinning_palette(g, ib, base=base, bind_shape=bind_shape)


def _pose_locals(skel, rng, frames=None):
    shape = () if frames is None else (frames,)
    loc = np.broadcast_to(skel.local_bind, shape + skel.local_bind.shape).copy()
    angles = rng.uniform(-2, 2, shape + (skel.n_joints, 3))
    loc[..., :3, :3] = loc[..., :3, :3] @ tf.rotvec(angles)[..., :3, :3]
    return loc


# --------------------------------------------------------------------------------------------
# Channels
# --------------------------------------------------------------------------------------------
def test_linear_translation_and_scale_interpolate_and_clamp():
    c = Channel(0, "translation", [1.0, 3.0], [[0, 0, 0], [2, 4, -6]])
    np.testing.assert_allclose(c.sample(2.0), [1, 2, -3])
    np.testing.assert_allclose(c.sample(2.5), [1.5, 3, -4.5])
    np.testing.assert_allclose(c.sample(-5.0), [0, 0, 0])  # clamped before the first key
    np.testing.assert_allclose(c.sample(9.0), [2, 4, -6])  # and after the last
    np.testing.assert_allclose(c.sample([1.0, 2.0, 3.0]), [[0, 0, 0], [1, 2, -3], [2, 4, -6]])


def test_rotation_slerp_takes_the_half_angle_on_the_shortest_arc():
    q0 = tf.matrix_to_quat(tf.axis_angle([0, 0, 1], 0.0))
    q1 = tf.matrix_to_quat(tf.axis_angle([0, 0, 1], np.deg2rad(120)))
    c = Channel(2, "rotation", [0.0, 1.0], [q0, -q1])  # the sign of a key must not matter
    for u in (0.25, 0.5, 0.9):
        m = tf.quat_to_matrix(c.sample(u))
        np.testing.assert_allclose(m, tf.axis_angle([0, 0, 1], np.deg2rad(120 * u)), atol=1e-12)


def test_step_holds_each_key_until_the_next():
    c = Channel(0, "scale", [0.0, 1.0, 2.0], [[1, 1, 1], [2, 2, 2], [3, 3, 3]], "step")
    got = c.sample([0.0, 0.99, 1.0, 1.5, 2.0, 7.0])[:, 0]
    np.testing.assert_array_equal(got, [1, 1, 2, 2, 3, 3])


def test_cubicspline_reproduces_a_cubic():
    # f(t) = t^3 on [0, 2]: values 0 and 8, slopes (per second) 0 and 12; Hermite is exact.
    keys = np.zeros((2, 3, 3))
    keys[0, 1] = 0.0
    keys[1, 1] = 8.0
    keys[0, 2] = 0.0    # out-tangent of key 0
    keys[1, 0] = 12.0   # in-tangent of key 1
    c = Channel(0, "translation", [0.0, 2.0], keys, "CUBICSPLINE")
    t = np.array([0.0, 0.5, 1.3, 2.0])
    np.testing.assert_allclose(c.sample(t)[:, 0], t ** 3, atol=1e-12)


def test_a_single_key_is_constant():
    c = Channel(0, "translation", [0.5], [[1, 2, 3]])
    np.testing.assert_array_equal(c.sample([-1, 0.5, 4]), [[1, 2, 3]] * 3)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(path="position"), ValueError, "path"),
    (dict(interpolation="cubic"), ValueError, "interpolation"),
    (dict(times=[0.0, 0.0]), ValueError, "times"),
    (dict(times=[1.0, 0.0]), ValueError, "times"),
    (dict(times=[0.0, np.nan]), ValueError, "times"),
    (dict(times=[]), ValueError, "times"),
    (dict(values=[[0, 0], [1, 1]]), ValueError, "values"),
    (dict(values=[[0, 0, np.inf], [1, 1, 1]]), ValueError, "values"),
    (dict(values=[[0, 0, 0], [1, 1, 1j]]), TypeError, "values"),
    (dict(path="rotation", values=[[0, 0, 0, 0], [0, 0, 0, 1]]), ValueError, "values"),
    (dict(times=["a", "b"]), TypeError, "times"),
])
def test_channel_rejects_bad_arguments(kwargs, exc, word):
    args = dict(joint=0, path="translation", times=[0.0, 1.0], values=[[0, 0, 0], [1, 1, 1]])
    args.update(kwargs)
    with pytest.raises(exc, match=word):
        Channel(**args)


# --------------------------------------------------------------------------------------------
# Clips
# --------------------------------------------------------------------------------------------
def test_clip_from_locals_hits_its_keys_and_interpolates_between(rng):
    skel = sk.Skeleton.chain(4, 5.0)
    keys = np.stack([_pose_locals(skel, rng) for _ in range(3)])
    keys[..., :3, 3] += rng.uniform(-1, 1, (3, 4, 3))
    clip = Clip([0.0, 0.5, 2.0], keys, name="walk")
    for k, t in enumerate([0.0, 0.5, 2.0]):
        np.testing.assert_allclose(clip.sample(t), keys[k], atol=1e-12)
    mid = clip.sample(1.25)  # halfway between keys 1 and 2
    np.testing.assert_allclose(mid[:, :3, 3], 0.5 * (keys[1, :, :3, 3] + keys[2, :, :3, 3]), atol=1e-12)
    q1, q2 = tf.matrix_to_quat(keys[1]), tf.matrix_to_quat(keys[2])
    np.testing.assert_allclose(mid[:, :3, :3], tf.quat_to_matrix(tf.quat_slerp(q1, q2, 0.5))[:, :3, :3],
                               atol=1e-12)
    assert clip.start == 0.0 and clip.end == 2.0 and clip.duration == 2.0
    assert clip.n_joints == 4 and clip.name == "walk"
    batch = clip.sample([0.1, 1.9, 3.0])
    assert batch.shape == (3, 4, 4, 4)
    np.testing.assert_allclose(batch[1], clip.sample(1.9), atol=0)
    np.testing.assert_allclose(batch[2], keys[2], atol=1e-12)  # clamped


def test_clip_with_scale_keys_interpolates_scale_linearly():
    skel = sk.Skeleton.chain(2, 1.0)
    a = tf.compose_trs([0, 1, 0], [0, 0, 0, 1], [1, 1, 1])
    b = tf.compose_trs([0, 1, 0], [0, 0, 0, 1], [3, 1, 2])
    keys = np.stack([np.stack([np.eye(4), a]), np.stack([np.eye(4), b])])
    clip = Clip([0, 1], keys, rest=skel)
    np.testing.assert_allclose(np.diag(clip.sample(0.5)[1])[:3], [2, 1, 1.5])


def test_joints_without_channels_keep_the_skeletons_bind_local():
    skel = sk.Skeleton.chain(3, 7.0)
    q = tf.matrix_to_quat(tf.axis_angle([1, 0, 0], 0.3))
    clip = Clip(channels=[Channel(1, "rotation", [0.0, 1.0], [[0, 0, 0, 1], q])], rest=skel)
    s = clip.sample(1.0)
    np.testing.assert_array_equal(s[0], skel.local_bind[0])
    np.testing.assert_array_equal(s[2], skel.local_bind[2])
    # the animated joint keeps its rest translation (no translation channel)
    np.testing.assert_allclose(s[1], skel.local_bind[1] @ tf.axis_angle([1, 0, 0], 0.3), atol=1e-12)
    assert clip.start == 0.0 and clip.end == 1.0


def test_clip_from_separate_channels_matches_the_matrix_form(rng):
    skel = sk.Skeleton.chain(3, 2.0)
    T = rng.uniform(-1, 1, (2, 3, 3))
    Q = tf.matrix_to_quat(tf.rotvec(rng.uniform(-1, 1, (2, 3, 3))))
    S = rng.uniform(0.5, 2, (2, 3, 3))
    a = Clip([0, 1], translations=T, rotations=Q, scales=S)
    b = Clip([0, 1], tf.compose_trs(T, Q, S))
    np.testing.assert_allclose(a.sample([0, 0.3, 1]), b.sample([0, 0.3, 1]), atol=1e-12)
    only_rot = Clip([0, 1], rotations=Q, rest=skel)
    np.testing.assert_allclose(only_rot.sample(1.0)[:, :3, 3], skel.local_bind[:, :3, 3])


def test_channel_subclass_is_the_sampling_hook():
    class Sine(Channel):
        def sample(self, t):
            t = np.asarray(t, dtype=np.float64)
            v = np.stack([np.sin(t), np.zeros_like(t), np.zeros_like(t)], -1)
            return v

    skel = sk.Skeleton.chain(2, 1.0)
    clip = Clip(channels=[Sine(0, "translation", [0.0, 10.0], [[0, 0, 0], [0, 0, 0]])], rest=skel)
    np.testing.assert_allclose(clip.sample(1.0)[0, 0, 3], np.sin(1.0))
    np.testing.assert_allclose(clip.sample([0.5, 2.0])[:, 0, 0, 3], np.sin([0.5, 2.0]))
    with pytest.raises(TypeError, match="channel 0"):
        clip.save("unused.npz")


def test_frame_times_cover_the_clip():
    clip = Clip([0.0, 1.0], np.stack([np.eye(4)[None]] * 2))
    np.testing.assert_allclose(clip.frame_times(4), [0, 0.25, 0.5, 0.75, 1.0])
    assert clip.frame_times(3).size == 4
    with pytest.raises(ValueError, match="fps"):
        clip.frame_times(0)


@pytest.mark.parametrize("build, exc, word", [
    (lambda s: Clip([0, 1]), ValueError, "locals"),
    (lambda s: Clip(), ValueError, "times"),
    (lambda s: Clip([0, 1], np.stack([s.local_bind] * 3)), ValueError, "keys"),
    (lambda s: Clip([0, 1], np.stack([s.local_bind] * 2)[..., :2, :]), ValueError, "locals"),
    (lambda s: Clip([0, 1], np.stack([s.local_bind] * 2), interpolation="cubicspline"),
     ValueError, "interpolation"),
    (lambda s: Clip(channels=[]), ValueError, "rest"),
    (lambda s: Clip([0, 1], np.stack([s.local_bind] * 2), rest=sk.Skeleton.chain(4, 1.0)),
     ValueError, "rest has 4"),
    (lambda s: Clip(channels=[Channel(5, "scale", [0], [[1, 1, 1]])], rest=s), ValueError, "joint 5"),
    (lambda s: Clip(channels=[Channel(0, "scale", [0], [[1, 1, 1]])] * 2, rest=s), ValueError,
     "two scale"),
    (lambda s: Clip(channels=["not a channel"], rest=s), TypeError, "Channel"),
    (lambda s: Clip([0, 1], rotations=np.zeros((2, 3, 4)) + [0, 0, 0, 1]), ValueError, "rest"),
    (lambda s: Clip([0, 1], rotations=np.zeros((2, 2, 4)) + [0, 0, 0, 1], rest=s), ValueError,
     "rotations"),
])
def test_clip_rejects_bad_arguments(build, exc, word):
    with pytest.raises(exc, match=word):
        build(sk.Skeleton.chain(3, 1.0))


def test_clip_refuses_shear_it_cannot_hold():
    shear = np.eye(4)
    shear[0, 1] = 0.5
    with pytest.raises(ValueError, match="shear"):
        Clip([0, 1], np.stack([np.eye(4)[None], shear[None]]))


def test_clip_sample_rejects_bad_times():
    clip = Clip([0, 1], np.stack([np.eye(4)[None]] * 2))
    with pytest.raises(ValueError, match="t contains"):
        clip.sample(np.nan)
    with pytest.raises(ValueError, match="shape"):
        clip.sample(np.zeros((2, 2)))


def test_clip_save_load_and_pickle_roundtrip(tmp_path, rng):
    skel = sk.Skeleton.chain(3, 2.0)
    keys = np.zeros((3, 3, 3))
    keys[:, 1] = [[0, 0, 0], [1, 2, 3], [0, 5, 0]]
    chans = [Channel(0, "translation", [0, 1, 2], keys, "cubicspline"),
             Channel(2, "rotation", [0, 1], tf.matrix_to_quat(tf.rotvec(rng.normal(size=(2, 3)))),
                     "step")]
    clip = Clip(channels=chans, rest=skel, name="c")
    t = np.linspace(-0.5, 2.5, 13)
    clip.save(tmp_path / "c.npz")
    for other in (Clip.load(tmp_path / "c.npz"), pickle.loads(pickle.dumps(clip))):
        assert other.name == "c"
        np.testing.assert_array_equal(other.sample(t), clip.sample(t))
        assert [c.interpolation for c in other.channels] == ["cubicspline", "step"]
    unnamed = Clip(channels=[], rest=skel)
    unnamed.save(tmp_path / "u.npz")
    assert Clip.load(tmp_path / "u.npz").name is None
    np.testing.assert_array_equal(Clip.load(tmp_path / "u.npz").sample(3.0), skel.local_bind)


# --------------------------------------------------------------------------------------------
# SkinnedMesh
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bind_pose_returns_the_rest_mesh(dtype):
    m = _chain_mesh(dtype)
    out = m.pose()
    assert out.dtype == dtype
    np.testing.assert_allclose(out, m.positions, atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("method", ["lbs", "dqs", "rigid"])
def test_pose_matches_the_reference(method, rng):
    m = _chain_mesh()
    loc = _pose_locals(m.skeleton, rng)
    K = _ref_palette(m.skeleton, loc)
    idx, w = m.indices, m.weights
    if method == "lbs":
        want, want_n = ref.lbs(m.positions, idx, w, K, normals=m.normals)
    elif method == "dqs":
        want, want_n = ref.dqs(m.positions, idx, w, K, normals=m.normals)
    else:
        j = np.take_along_axis(idx, np.argmax(w, 1)[:, None], 1)[:, 0]
        want, want_n = ref.rigid(m.positions, j, K, normals=m.normals)
    got, got_n = m.pose(loc, method=method, normals=True)
    np.testing.assert_allclose(got, want, atol=1e-9)
    np.testing.assert_allclose(got_n, want_n, atol=1e-9)


def test_pose_of_a_clip_at_several_times_is_batched(rng):
    m = _chain_mesh()
    keys = _pose_locals(m.skeleton, rng, frames=3)
    keys[..., 1:, :3, 3] = m.skeleton.local_bind[1:, :3, 3]
    clip = Clip([0, 1, 2], keys)
    t = np.array([0.0, 0.7, 2.0])
    batch = m.pose(clip, t, method="dqs")
    assert batch.shape == (3, m.n_vertices, 3)
    for i in range(3):
        K = _ref_palette(m.skeleton, clip.sample(t[i]))
        np.testing.assert_allclose(batch[i], ref.dqs(m.positions, m.indices, m.weights, K), atol=1e-9)
    np.testing.assert_allclose(m.pose(clip), m.pose(clip, 0.0))


def test_base_gives_results_in_the_skinning_frame(rng, random_rigid):
    m = _chain_mesh()
    B = random_rigid(rng, ())
    based = SkinnedMesh(m.positions, m.skeleton, m.influences, base=B)
    loc = _pose_locals(m.skeleton, rng)
    p = based.pose(loc)
    world = p @ B[:3, :3].T + B[:3, 3]
    np.testing.assert_allclose(world, m.pose(loc), atol=1e-9)
    np.testing.assert_allclose(based.palette(loc), _ref_palette(m.skeleton, loc, base=B), atol=1e-12)


def test_bind_shape_maps_positions_into_the_bind_space(rng, random_rigid):
    m = _chain_mesh()
    BS = random_rigid(rng, ()) @ tf.scale([1.5, 1.5, 1.5])
    inv = np.linalg.inv(BS)
    P = m.positions @ inv[:3, :3].T + inv[:3, 3]
    moved = SkinnedMesh(P, m.skeleton, m.influences, bind_shape=BS)
    loc = _pose_locals(m.skeleton, rng)
    np.testing.assert_allclose(moved.pose(loc), m.pose(loc), atol=1e-9)
    np.testing.assert_allclose(moved.pivots(), m.skeleton.pivots() @ inv[:3, :3].T + inv[:3, 3])
    # the palette now has scale, so DQS needs pivots: the mesh supplies them in its own frame
    # (DQS is covariant only under a rigid change of frame, so only compare it for one)
    assert moved.pose(loc, method="dqs").shape == P.shape
    R = random_rigid(rng, ())
    inv = np.linalg.inv(R)
    rigid = SkinnedMesh(m.positions @ inv[:3, :3].T + inv[:3, 3], m.skeleton, m.influences,
                        bind_shape=R)
    np.testing.assert_allclose(rigid.pose(loc, method="dqs"), m.pose(loc, method="dqs"), atol=1e-9)


def test_morph_targets_apply_before_skinning(rng):
    m = _chain_mesh()
    D = rng.normal(size=(2, m.n_vertices, 3))
    mm = SkinnedMesh(m.positions, m.skeleton, m.influences, morph_targets=D)
    loc = _pose_locals(m.skeleton, rng)
    K = _ref_palette(m.skeleton, loc)
    want = ref.lbs(m.positions + 0.3 * D[0] - 0.5 * D[1], m.indices, m.weights, K)
    np.testing.assert_allclose(mm.pose(loc, morph_weights=[0.3, -0.5]), want, atol=1e-9)
    fw = np.array([[0.0, 0.0], [1.0, 0.0]])
    got = mm.pose(loc, morph_weights=fw)
    assert got.shape == (2, m.n_vertices, 3)
    np.testing.assert_allclose(got[1], ref.lbs(m.positions + D[0], m.indices, m.weights, K), atol=1e-9)
    with pytest.raises(ValueError, match="morph_weights"):
        mm.pose(loc, morph_weights=[1.0])
    with pytest.raises(ValueError, match="morph"):
        m.pose(loc, morph_weights=[1.0])


def test_inputs_are_not_modified(rng):
    m = _chain_mesh()
    snap = {k: v.copy() for k, v in m.to_arrays().items()}
    loc = _pose_locals(m.skeleton, rng)
    loc0 = loc.copy()
    for method in ("rigid", "lbs", "dqs"):
        m.pose(loc, method=method, normals=True)
    np.testing.assert_array_equal(loc, loc0)
    for k, v in m.to_arrays().items():
        np.testing.assert_array_equal(v, snap[k], err_msg=k)


@pytest.mark.parametrize("method", ["rigid", "lbs", "dqs"])
def test_deform_writes_out_in_place(method, rng):
    m = _chain_mesh()
    K = m.palette(_pose_locals(m.skeleton, rng))
    out = np.zeros_like(m.positions)
    got = m.deform(K, method=method, out=out)
    assert got is out
    np.testing.assert_allclose(out, m.deform(K, method=method), atol=0)


def test_mesh_save_load_and_pickle_roundtrip(tmp_path, rng, random_rigid):
    m = _chain_mesh(np.float32)
    full = SkinnedMesh(m.positions, m.skeleton, m.influences, normals=m.normals,
                       tangents=np.ones((m.n_vertices, 4), np.float32),
                       faces=np.array([[0, 1, 2], [2, 3, 4]]), base=random_rigid(rng, ()),
                       bind_shape=tf.translation([1, 2, 3]), centers=m.positions.copy(),
                       morph_targets=np.zeros((1, m.n_vertices, 3), np.float32), name="ring")
    full.save(tmp_path / "m.npz")
    loc = _pose_locals(m.skeleton, rng)
    for other in (SkinnedMesh.load(tmp_path / "m.npz"), pickle.loads(pickle.dumps(full))):
        assert other.name == "ring" and other.skeleton == full.skeleton
        for k, v in full.to_arrays().items():
            np.testing.assert_array_equal(other.to_arrays()[k], v, err_msg=k)
        np.testing.assert_array_equal(other.pose(loc), full.pose(loc))
    with np.load(tmp_path / "m.npz", allow_pickle=False) as d:
        assert d["positions"].dtype == np.float32


def test_clip_and_mesh_load_a_name_save_gave_a_suffix(tmp_path):
    r = rigs.seed001()
    clip = sk.Clip([0.0, 1.0], np.stack([r.skeleton.local_bind] * 2))
    clip.save(tmp_path / "c")
    r.save(str(tmp_path / "m"))
    assert sk.Clip.load(tmp_path / "c").end == 1.0
    assert sk.SkinnedMesh.load(str(tmp_path / "m")).n_vertices == r.n_vertices


def test_clip_frames_never_pass_its_end_and_need_a_key():
    J = 3
    c = sk.Clip([0.0, 1 - 1e-8], np.tile(np.eye(4), (2, J, 1, 1)))
    t = c.frame_times(1)
    assert t.size == 2 and t[-1] == c.end  # the rounding frame is taken at the end, not after
    with pytest.raises(ValueError, match="times: a clip needs at least one key"):
        sk.Clip([], np.zeros((0, J, 4, 4)))


def test_pivots_follow_a_new_bind_shape_and_morph_weights_are_finite():
    from skinkit import transforms as tf
    r = rigs.seed001()
    before = r.pivots()
    r.bind_shape = tf.translation([1.0, 0, 0])
    np.testing.assert_allclose(r.pivots(), before - [1.0, 0, 0])
    m = sk.SkinnedMesh(r.positions, r.skeleton, r.influences, faces=r.faces,
                       morph_targets=np.ones((2,) + r.positions.shape))
    with pytest.raises(ValueError, match="morph_weights contains NaN"):
        m.deform(m.palette(), morph_weights=[np.nan, 0.0])


def test_mesh_accepts_an_influences_object_and_exposes_arrays():
    m = _chain_mesh()
    again = SkinnedMesh(m.positions, m.skeleton, m.influences)
    assert again.influences is m.influences
    assert again.indices is m.influences.indices and again.weights is m.influences.weights
    assert "V=" in repr(again)


@pytest.mark.parametrize("change, exc, word", [
    (dict(positions=np.zeros((42, 3), np.int32)), TypeError, "positions"),
    (dict(positions=np.zeros((30, 2))), ValueError, "positions"),
    (dict(skeleton="chain"), TypeError, "skeleton"),
    (dict(influences=5), TypeError, "influences"),
    (dict(normals=np.zeros((42, 3), np.float32)), TypeError, "normals"),
    (dict(normals=np.zeros((41, 3))), ValueError, "normals"),
    (dict(tangents=np.zeros((42, 3))), ValueError, "tangents"),
    (dict(faces=np.array([[0, 1, 42]])), IndexError, "faces"),
    (dict(faces=np.array([[0.0, 1, 2]])), TypeError, "faces"),
    (dict(faces=np.array([0, 1, 2])), ValueError, "faces"),
    (dict(base=np.zeros((4, 4)) + np.eye(4) * [1, 1, 1, 2]), ValueError, "base"),
    (dict(base=np.diag([0.0, 1, 1, 1])), ValueError, "base"),
    (dict(bind_shape=np.ones((3, 3))), ValueError, "bind_shape"),
    (dict(morph_targets=np.zeros((2, 41, 3))), ValueError, "morph_targets"),
    (dict(morph_targets=np.zeros((2, 42, 3), np.float32)), TypeError, "morph_targets"),
    (dict(centers=np.zeros((42, 3), np.float32)), TypeError, "centers"),
])
def test_mesh_rejects_bad_arguments(change, exc, word):
    m = _chain_mesh(n=4, per=2)  # 4 joints, 7 rings of 6 vertices
    assert m.n_vertices == 42
    args = dict(positions=m.positions, skeleton=m.skeleton, influences=m.influences)
    args.update(change)
    with pytest.raises(exc, match=word):
        SkinnedMesh(**args)


def test_mesh_rejects_mismatched_influences():
    m = _chain_mesh(n=4, per=2)
    with pytest.raises(ValueError, match="joints"):
        SkinnedMesh(m.positions, sk.Skeleton.chain(5, 1.0), m.influences)
    with pytest.raises(ValueError, match="vertices"):
        SkinnedMesh(m.positions[:-1], m.skeleton, m.influences)
    with pytest.raises(IndexError):
        SkinnedMesh(m.positions, m.skeleton, (np.full((m.n_vertices, 1), 9), np.ones((m.n_vertices, 1))))


def test_pose_rejects_bad_requests(rng):
    m = _chain_mesh(n=4, per=2)
    bare = SkinnedMesh(m.positions, m.skeleton, m.influences)
    with pytest.raises(ValueError, match="normals"):
        bare.pose(method="lbs", normals=True)
    with pytest.raises(ValueError, match="centers"):
        bare.pose(method="cor")
    with pytest.raises(ValueError, match="t:"):
        bare.pose(m.skeleton.local_bind, t=1.0)
    with pytest.raises(ValueError, match="joints"):
        bare.pose(Clip([0, 1], np.stack([np.eye(4)[None]] * 2)))


# --------------------------------------------------------------------------------------------
# bake
# --------------------------------------------------------------------------------------------
def _clip_for(m, rng):
    keys = _pose_locals(m.skeleton, rng, frames=3)
    keys[..., :3, 3] = m.skeleton.local_bind[:, :3, 3]
    return Clip([0.0, 0.5, 1.0], keys)


@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_bake_equals_posing_each_frame(method, rng):
    m = _chain_mesh(np.float32)
    clip = _clip_for(m, rng)
    B = bake(m, clip, fps=10, method=method)
    assert B.shape == (11, m.n_vertices, 3) and B.dtype == np.float32
    for i, t in enumerate(clip.frame_times(10)):
        np.testing.assert_allclose(B[i], m.pose(clip, t, method=method), atol=1e-5)


def test_bake_into_an_array_and_streamed_to_npy(tmp_path, rng):
    m = _chain_mesh()
    clip = _clip_for(m, rng)
    want = bake(m, clip, fps=8)
    out = np.full((9, m.n_vertices, 3), np.nan)
    assert bake(m, clip, fps=8, out=out) is out
    np.testing.assert_array_equal(out, want)
    path = tmp_path / "anim.npy"
    got = bake(m, clip, fps=8, out=str(path), chunk=2)  # several chunks
    np.testing.assert_array_equal(np.load(path), want)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert sk.bake is bake


def test_bake_streams_a_pc2_point_cache(tmp_path, rng):
    import struct

    m = _chain_mesh()
    clip = _clip_for(m, rng)
    want = bake(m, clip, fps=8, method="dqs")
    path = tmp_path / "anim.pc2"
    got = bake(m, clip, fps=8, method="dqs", out=path, chunk=4)
    raw = path.read_bytes()
    sig, version, n_points, start, rate, n_samples = struct.unpack("<12siiffi", raw[:32])
    assert (sig, version, n_points, start, rate, n_samples) == (b"POINTCACHE2\0", 1, m.n_vertices,
                                                               0.0, 1.0, 9)
    assert len(raw) == 32 + 9 * m.n_vertices * 3 * 4
    data = np.frombuffer(raw[32:], dtype="<f4").reshape(9, m.n_vertices, 3)
    np.testing.assert_allclose(data, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(got), data)


@pytest.mark.parametrize("out, exc, word", [
    (np.zeros((9, 168, 3), np.float32), TypeError, "dtype"),
    (np.zeros((8, 168, 3)), ValueError, "shape"),
    ("anim.bin", ValueError, ".npy"),
    ([1, 2], TypeError, "out"),
])
def test_bake_rejects_bad_out(out, exc, word, rng):
    m = _chain_mesh()
    assert m.n_vertices == 102
    if isinstance(out, np.ndarray):
        out = np.zeros(out.shape[:1] + (m.n_vertices, 3), out.dtype)
        before = out.copy()
    with pytest.raises(exc, match=word):
        bake(m, _clip_for(m, rng), fps=8, out=out)
    if isinstance(out, np.ndarray):
        np.testing.assert_array_equal(out, before)


def test_bake_rejects_read_only_and_overlapping_out(rng):
    m = _chain_mesh()
    clip = _clip_for(m, rng)
    ro = np.zeros((9, m.n_vertices, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        bake(m, clip, fps=8, out=ro)
    with pytest.raises(TypeError, match="mesh"):
        bake(m.positions, clip)
    with pytest.raises(ValueError, match="clip"):  # locals, not an (F, J, 4, 4) palette stack
        bake(m, m.skeleton.local_bind)
    with pytest.raises(TypeError, match="clip"):
        bake(m, "clip")
    with pytest.raises(ValueError, match="scheduler"):
        bake(m, clip, scheduler="threads")
