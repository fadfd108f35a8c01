"""Centers-of-rotation skinning (``method="cor"``, Le & Hodgins 2016) and the per-vertex LBS <-> DQS
blend (``method="blend"``) against skinkit.reference, their limits and invariants, layouts,
threads, and every bad input.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skinkit as sk
from skinkit import _core
from skinkit import reference as ref
from skinkit import transforms as tf

INDEX_DTYPES = [np.uint8, np.uint16, np.uint32, np.int32, np.int64]
FLOATS = [np.float64, np.float32]
# relative to the scene's size (largest |position|, |center| or palette translation)
TOL = {np.float64: 1e-10, np.float32: 1e-5}


@pytest.fixture(params=_core.simd_paths())
def simd_path(request):
    """Run the test on one SIMD path (float32 CoR has SIMD kernels), then restore the one in use
    before."""
    previous = _core.set_simd_path(request.param)
    yield request.param
    _core.set_simd_path(previous)


# -- a random scene ------------------------------------------------------------------------------

@pytest.fixture
def poses(random_palette):
    """``poses(rng, J, frames=None, scale=False)``: (J, 4, 4) or (F, J, 4, 4) random rigid
    palettes; with ``scale``, non-uniform scale and shear on every joint (DQS's two-phase split
    then needs pivots)."""

    def make(rng, J, frames=None, scale=False):
        return random_palette(rng, J, frames, spread=1.5, reach=4.0, scale=0.25 if scale else 0.0)

    return make


class Scene:
    """V vertices with unit normals, tangents (handedness +-1), K random influences of J joints
    (a quarter of the slots zero with a garbage index, row 2 all zero), centers near the
    vertices with every fifth row NaN (no center), pivots."""

    def __init__(self, rng, influences, unit_rows, V=40, J=6, K=4, dtype=np.float64,
                 index_dtype=np.int64):
        self.P = (rng.normal(size=(V, 3)) * 5).astype(dtype)
        self.N = unit_rows(rng, V).astype(dtype)
        t = np.concatenate([rng.normal(size=(V, 3)), rng.choice([-1.0, 1.0], (V, 1))], 1)
        self.T = t.astype(dtype)
        self.idx, self.w = influences(rng, V, J, K, index_dtype, dtype, zero_rows=[2])
        c = self.P + rng.normal(size=(V, 3))
        c[::5] = np.nan
        self.C = c.astype(dtype)
        self.pivots = rng.normal(size=(J, 3)) * 3
        self.J, self.V, self.dtype = J, V, dtype


@pytest.fixture
def scene(influences, unit_rows):
    """``scene(rng, V=40, J=6, K=4, dtype=np.float64, index_dtype=np.int64)``: a random Scene."""

    def make(rng, **kwargs):
        return Scene(rng, influences, unit_rows, **kwargs)

    return make


def size(scene, palette):
    finite = np.nan_to_num(np.asarray(scene.C, np.float64))
    return (np.abs(scene.P).max(initial=1.0) + np.abs(finite).max(initial=0.0)
            + np.abs(np.asarray(palette)[..., :3, 3]).max())


def assert_close(got, want, scene, palette, dtype, what=""):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == dtype and g.shape == w.shape
        # positions scale with the scene; unit normals and tangents with 1
        scale = size(scene, palette) if i == 0 else 1.0
        err = np.abs(g.astype(np.float64) - w).max() if g.size else 0.0
        assert err <= TOL[dtype] * scale, f"{what} output {i}: {err} > {TOL[dtype] * scale}"


# -- against the reference -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("K", range(1, 9))
@pytest.mark.parametrize("rule", ["joint", "blend"])
def test_cor_matches_reference(dtype, K, rule, scene, poses):
    rng = np.random.default_rng(K)
    for index_dtype in INDEX_DTYPES:
        s = scene(rng, K=K, dtype=dtype, index_dtype=index_dtype)
        pal = poses(rng, s.J)
        got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N, tangents=s.T,
                     normal_rule=rule)
        want = ref.cor(s.P, s.idx, s.w, pal, s.C, normals=s.N, tangents=s.T, normal_rule=rule)
        assert_close(got, want, s, pal, dtype, f"{index_dtype.__name__}")
        # handedness is copied
        assert np.array_equal(got[2][:, 3], s.T[:, 3])
        # without tangents the SIMD kernels take the call (on a SIMD path): their own rounding
        alone = sk.cor(s.P, s.idx, s.w, pal, centers=s.C)
        assert_close(alone, want[0], s, pal, dtype, "no tangents")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("K", [1, 2, 4, 7])
def test_cor_scaled_palette_matches_reference(dtype, K, scene, poses):
    rng = np.random.default_rng(100 + K)
    s = scene(rng, K=K, dtype=dtype)
    pal = poses(rng, s.J, scale=True)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, pivots=s.pivots, normals=s.N, tangents=s.T)
    want = ref.cor(s.P, s.idx, s.w, pal, s.C, pivots=s.pivots, normals=s.N, tangents=s.T)
    assert_close(got, want, s, pal, dtype)
    with pytest.raises(ValueError, match="pivots"):
        sk.cor(s.P, s.idx, s.w, pal, centers=s.C)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("K", [1, 3, 4, 8])
@pytest.mark.parametrize("scale", [False, True])
def test_blend_matches_reference(dtype, K, scale, scene, poses):
    rng = np.random.default_rng(200 + K)
    s = scene(rng, K=K, dtype=dtype)
    pal = poses(rng, s.J, scale=scale)
    piv = s.pivots if scale else None
    b = rng.random(s.V).astype(dtype)
    b[:3] = [0, 1, 0.5]
    for amount in (b, 0.25):
        got = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=amount, pivots=piv,
                      normals=s.N, tangents=s.T)
        want = ref.blend(s.P, s.idx, s.w, pal, amount, pivots=piv, normals=s.N, tangents=s.T)
        assert_close(got, want, s, pal, dtype)


# scene and poses are function-scoped fixtures, but stateless: safe to share between examples
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 32 - 1), V=st.integers(0, 25), J=st.integers(1, 7),
       K=st.integers(1, 9), f64=st.booleans(), scale=st.booleans(), frames=st.sampled_from([None, 2]))
def test_random_shapes_and_poses_match_the_reference(seed, V, J, K, f64, scale, frames, scene,
                                                     poses):
    """Any V (0 included), J, K (K > J too), batch, scale: CoR and blend against the reference."""
    rng = np.random.default_rng(seed)
    dtype = np.float64 if f64 else np.float32
    s = scene(rng, V=max(V, 3), J=J, K=K, dtype=dtype)
    s.P, s.N, s.idx, s.w, s.C = s.P[:V], s.N[:V], s.idx[:V], s.w[:V], s.C[:V]
    pal = poses(rng, J, frames=frames, scale=scale)
    piv = s.pivots if scale else None
    b = rng.random(V).astype(dtype)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, pivots=piv, normals=s.N)
    assert_close(got, ref.cor(s.P, s.idx, s.w, pal, s.C, pivots=piv, normals=s.N), s, pal, dtype)
    got = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=b, pivots=piv, normals=s.N)
    assert_close(got, ref.blend(s.P, s.idx, s.w, pal, b, pivots=piv, normals=s.N), s, pal, dtype)


def test_unorm_weights(simd_path, scene, poses):
    rng = np.random.default_rng(5)
    s = scene(rng, K=4, dtype=np.float32)
    pal = poses(rng, s.J)
    for dt, top in ((np.uint8, 255), (np.uint16, 65535)):
        wq = np.round(s.w.astype(np.float64) * top).astype(dt)
        assert_close(sk.cor(s.P, s.idx, wq, pal, centers=s.C),
                     ref.cor(s.P, s.idx, wq, pal, s.C), s, pal, np.float32)
        assert_close(sk.skin(s.P, s.idx, wq, pal, method="blend", blend=0.7),
                     ref.blend(s.P, s.idx, wq, pal, 0.7), s, pal, np.float32)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batched(dtype, simd_path, scene, poses):
    rng = np.random.default_rng(7)
    s = scene(rng, dtype=dtype)
    pal = poses(rng, s.J, frames=3)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    assert got[0].shape == (3, s.V, 3)
    want = ref.cor(s.P, s.idx, s.w, pal, s.C, normals=s.N)
    assert_close(got, want, s, pal, dtype)
    for f in range(3):  # each frame is the unbatched call
        one = sk.cor(s.P, s.idx, s.w, pal[f], centers=s.C, normals=s.N)
        assert np.array_equal(one[0], got[0][f]) and np.array_equal(one[1], got[1][f])
    # per-batch positions (morph targets) with one shared palette and one per frame
    Pf = np.stack([s.P, s.P * 1.1, s.P - 1]).astype(dtype)
    for k in (pal, pal[0]):
        got = sk.cor(Pf, s.idx, s.w, k, centers=s.C)
        want = ref.cor(Pf, s.idx, s.w, k, s.C)
        assert_close(got, want, s, k, dtype)
        got = sk.skin(Pf, s.idx, s.w, k, method="blend", blend=0.4)
        assert_close(got, ref.blend(Pf, s.idx, s.w, k, 0.4), s, k, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_strided_layouts_and_out(dtype, simd_path, scene, poses):
    """Interleaved vertex buffers, Fortran order and reversed views in and out: read and written
    in place, the same bits as contiguous arrays."""
    rng = np.random.default_rng(9)
    s = scene(rng, dtype=dtype)
    pal = poses(rng, s.J)
    b = rng.random(s.V).astype(dtype)
    want_c = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    want_b = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=b, normals=s.N)
    buf = np.zeros((s.V, 11), dtype)
    buf[:, 0:3], buf[:, 3:6], buf[:, 6:9], buf[:, 9] = s.P, s.N, s.C, b
    out = np.full((s.V, 8), 7, dtype)
    got = sk.cor(buf[:, 0:3], s.idx, s.w, pal, centers=buf[:, 6:9], normals=buf[:, 3:6],
                 out=out[:, 0:3], out_normals=out[:, 4:7])
    assert got[0].base is out and got[1].base is out
    assert np.array_equal(out[:, 0:3], want_c[0]) and np.array_equal(out[:, 4:7], want_c[1])
    assert np.all(out[:, [3, 7]] == 7)
    got = sk.skin(buf[:, 0:3], s.idx, s.w, pal, method="blend", blend=buf[:, 9],
                  normals=buf[:, 3:6], out=out[:, 0:3], out_normals=out[:, 4:7])
    assert np.array_equal(got[0], want_b[0]) and np.array_equal(got[1], want_b[1])
    # Fortran order and reversed
    rev = sk.cor(s.P[::-1], s.idx[::-1], s.w[::-1], pal, centers=s.C[::-1])
    assert np.array_equal(rev, want_c[0][::-1])
    fort = sk.cor(np.asfortranarray(s.P), np.asfortranarray(s.idx), np.asfortranarray(s.w), pal,
                  centers=np.asfortranarray(s.C))
    assert np.array_equal(fort, want_c[0])
    rev = sk.skin(s.P[::-1], s.idx[::-1], s.w[::-1], pal, method="blend", blend=b[::-1])
    assert np.array_equal(rev, want_b[0][::-1])
    # in place
    P = s.P.copy()
    assert sk.cor(P, s.idx, s.w, pal, centers=s.C, out=P) is P
    assert np.array_equal(P, want_c[0])


def test_influences_object_and_skin_dispatch(scene, poses):
    rng = np.random.default_rng(11)
    s = scene(rng)
    pal = poses(rng, s.J)
    infl = sk.Influences(s.idx, s.w, s.J)
    a = sk.cor(s.P, infl, pal, centers=s.C)
    assert np.array_equal(a, sk.cor(s.P, s.idx, s.w, pal, centers=s.C))
    assert np.array_equal(a, sk.skin(s.P, infl, pal, method="cor", centers=s.C))
    b = sk.skin(s.P, infl, pal, method="blend", blend=0.5)
    assert np.array_equal(b, sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=0.5))


# -- limits and invariants -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_one_influence_is_rigid(dtype, scene, poses):
    """A vertex bound to one joint moves with it, wherever its center is (and without one)."""
    rng = np.random.default_rng(13)
    s = scene(rng, K=1, dtype=dtype)
    w = np.ones((s.V, 1), dtype)
    for scale in (False, True):
        pal = poses(rng, s.J, scale=scale)
        piv = s.pivots if scale else None
        got = sk.cor(s.P, s.idx, w, pal, centers=s.C, pivots=piv, normals=s.N)
        want = sk.rigid(s.P, s.idx[:, 0], pal, normals=s.N)
        assert_close(got, tuple(x.astype(np.float64) for x in want), s, pal, dtype)
        # a second slot of zero weight changes nothing
        idx2 = np.concatenate([s.idx, s.idx[::-1]], 1)
        w2 = np.concatenate([w, np.zeros_like(w)], 1)
        assert np.array_equal(sk.cor(s.P, idx2, w2, pal, centers=s.C, pivots=piv)[...],
                              got[0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_identity_palette_gives_the_rest_mesh(dtype, scene):
    rng = np.random.default_rng(17)
    s = scene(rng, K=4, dtype=dtype)
    pal = np.broadcast_to(np.eye(4), (s.J, 4, 4))
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    assert np.abs(got[0] - s.P).max() <= TOL[dtype] * size(s, pal)
    assert np.abs(got[1] - s.N).max() <= TOL[dtype]
    got = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=0.3, normals=s.N)
    assert np.abs(got[0] - s.P).max() <= TOL[dtype] * size(s, pal)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rigid_motion_of_the_palette_moves_the_result_rigidly(dtype, scene, poses):
    rng = np.random.default_rng(19)
    s = scene(rng, K=4, dtype=dtype)
    M = tf.axis_angle([0.3, -1, 0.5], 2.1)
    M[:3, 3] = [3, -7, 2]
    for scale in (False, True):
        pal = poses(rng, s.J, scale=scale)
        piv = s.pivots if scale else None
        a = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, pivots=piv, normals=s.N)
        b = sk.cor(s.P, s.idx, s.w, M @ pal, centers=s.C, pivots=piv, normals=s.N)
        moved = (a[0].astype(np.float64) @ M[:3, :3].T + M[:3, 3], a[1] @ M[:3, :3].T)
        skinned = s.w.sum(1) > 0  # the all-zero row is copied, not skinned
        assert_close(tuple(x[skinned] for x in b), tuple(x[skinned] for x in moved), s,
                     M @ pal, dtype)


def test_cor_has_no_candy_wrapper():
    """Two bones, a ring half on each: under a 170 degree twist LBS collapses the ring, DQS and
    CoR (center on the axis) keep its radius."""
    a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    ring = np.stack([np.cos(a), np.zeros_like(a), np.sin(a)], 1)
    idx = np.tile([0, 1], (16, 1))
    w = np.full((16, 2), 0.5)
    twist = np.stack([np.eye(4), tf.axis_angle([0, 1, 0], 170, degrees=True)])
    r = {m: np.linalg.norm(sk.skin(ring, idx, w, twist, method=m, **kw)[:, [0, 2]], axis=1).mean()
         for m, kw in (("lbs", {}), ("dqs", {}), ("cor", {"centers": np.zeros((16, 3))}))}
    assert r["lbs"] < 0.1 and r["dqs"] > 0.99 and r["cor"] > 0.99


@pytest.mark.parametrize("dtype", FLOATS)
def test_blend_ends_are_lbs_and_dqs(dtype, scene, poses):
    rng = np.random.default_rng(23)
    s = scene(rng, K=4, dtype=dtype)
    pal = poses(rng, s.J)
    kw = dict(normals=s.N, tangents=s.T)
    previous = _core.set_simd_path("scalar")  # the scalar LBS / DQS: the same code blend runs
    try:
        lbs, dqs = sk.lbs(s.P, s.idx, s.w, pal, **kw), sk.dqs(s.P, s.idx, s.w, pal, **kw)
        b0 = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=0.0, **kw)
        b1 = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=np.ones(s.V, dtype), **kw)
    finally:
        _core.set_simd_path(previous)
    assert np.array_equal(b0[0], lbs[0]) and np.array_equal(b1[0], dqs[0])
    one_ulp = np.finfo(dtype).eps  # unit vectors, normalized once more
    for x, y in ((b0, lbs), (b1, dqs)):
        assert np.abs(x[2] - y[2]).max() <= one_ulp
    assert np.abs(b1[1] - dqs[1]).max() <= one_ulp
    # a rigid palette: the portable LBS takes the blended matrix for the normals (as the SIMD
    # kernels do), blend's LBS end the blended cofactors, equal to a few units in the last place
    assert np.abs(b0[1] - lbs[1]).max() <= 4 * one_ulp
    # whatever SIMD path lbs / dqs take, the ends agree to their rounding
    fast = sk.lbs(s.P, s.idx, s.w, pal)
    assert np.abs(sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=0.0) - fast).max() \
        <= 4 * TOL[dtype] * size(s, pal)
    # a scalar blend is the array of that value
    b = np.full(s.V, 0.375, dtype)
    assert np.array_equal(sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=0.375),
                          sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=b))


@pytest.mark.parametrize("method", ["cor", "blend"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_threads_are_bit_identical(method, dtype, simd_path, scene, poses):
    rng = np.random.default_rng(29)
    s = scene(rng, V=5003, K=4, dtype=dtype)
    pal = poses(rng, s.J, frames=2)
    kw = {"centers": s.C} if method == "cor" else {"blend": rng.random(s.V).astype(dtype)}
    one = sk.skin(s.P, s.idx, s.w, pal, method=method, normals=s.N, threads=1, **kw)
    for n in (2, 3, 8):
        many = sk.skin(s.P, s.idx, s.w, pal, method=method, normals=s.N, threads=n, **kw)
        assert np.array_equal(one[0], many[0]) and np.array_equal(one[1], many[1])
    # a vertex's bits do not depend on where its range starts (the SIMD kernels' partial blocks)
    for start in (1, 5, 13, 16, 17, 63, 100):
        kw_s = {k: v[start:] for k, v in kw.items()}
        part = sk.skin(s.P[start:], s.idx[start:], s.w[start:], pal, method=method,
                       normals=s.N[start:], **kw_s)
        assert np.array_equal(part[0], one[0][:, start:]), start
        assert np.array_equal(part[1], one[1][:, start:]), start


def test_zero_weight_rows_and_empty_inputs(scene, poses):
    rng = np.random.default_rng(31)
    s = scene(rng)
    pal = poses(rng, s.J)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    assert np.array_equal(got[0][2], s.P[2]) and np.array_equal(got[1][2], s.N[2])
    got = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=0.5, normals=s.N)
    assert np.array_equal(got[0][2], s.P[2]) and np.array_equal(got[1][2], s.N[2])
    e = np.zeros((0, 3))
    ei, ew = np.zeros((0, 2), np.int32), np.zeros((0, 2))
    assert sk.cor(e, ei, ew, pal, centers=e).shape == (0, 3)
    assert sk.skin(e, ei, ew, pal, method="blend", blend=np.zeros(0)).shape == (0, 3)
    assert sk.cor(s.P, s.idx, s.w, pal[:0][None][:, :0].reshape(0, s.J, 4, 4),
                  centers=s.C).shape == (0, s.V, 3)


# -- bad input -----------------------------------------------------------------------------------

def _check(exc, match, fn, *args, **kwargs):
    """``fn`` raises ``exc`` naming the argument; no array it was given changes (out untouched)."""
    arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)]
    before = [a.copy() for a in arrays]
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)
    for a, b in zip(arrays, before):
        assert np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bad_centers(dtype, scene, poses):
    rng = np.random.default_rng(37)
    s = scene(rng, dtype=dtype)
    pal = poses(rng, s.J)
    out = np.full((s.V, 3), 5, dtype)
    call = lambda C, **kw: sk.cor(s.P, s.idx, s.w, pal, centers=C, out=out, **kw)  # noqa: E731
    _check(ValueError, "centers", sk.cor, s.P, s.idx, s.w, pal, centers=None, out=out)
    _check(ValueError, "centers", sk.skin, s.P, s.idx, s.w, pal, method="cor", out=out)
    _check(TypeError, "centers", call, s.C.tolist())
    _check(TypeError, "centers", call, s.C.astype(np.float16))
    _check(TypeError, "centers", call, s.C.astype(np.float32 if dtype == np.float64 else np.float64))
    _check(TypeError, "centers", call, s.C.astype(s.C.dtype.newbyteorder()))
    _check(ValueError, "centers", call, s.C[:-1])
    _check(ValueError, "centers", call, s.C[:, :2])
    _check(ValueError, "centers", call, s.C[None])
    for row, value in ((6, (np.nan, 1, 2)), (7, (np.inf, 0, 0)), (8, (0, -np.inf, np.nan))):
        C = s.C.copy()
        C[row] = value
        _check(ValueError, f"centers.*{row}", call, C)
    # validation runs before anything is written, after the influences' own checks
    C = s.C.copy()
    C[1, 1] = np.nan
    bad_idx = s.idx.copy()
    bad_idx[0, 0] = s.J
    _check(IndexError, "indices", sk.cor, s.P, bad_idx, s.w, pal, centers=C, out=out)
    # an out overlapping the centers
    buf = np.zeros((s.V, 6), dtype)
    buf[:, 3:] = np.nan_to_num(s.C)
    _check(ValueError, "out", sk.cor, s.P, s.idx, s.w, pal, centers=buf[:, 3:], out=buf[:, 1:4])
    # centers to other methods, blend to cor
    for m in ("lbs", "dqs", "rigid", "blend"):
        kw = {"blend": 0.5} if m == "blend" else {}
        _check(TypeError, "centers", sk.skin, s.P, s.idx, s.w, pal, method=m, centers=s.C, **kw)
    _check(TypeError, "blend", sk.skin, s.P, s.idx, s.w, pal, method="cor", centers=s.C,
           blend=0.5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bad_blend(dtype, scene, poses):
    rng = np.random.default_rng(41)
    s = scene(rng, dtype=dtype)
    pal = poses(rng, s.J)
    out = np.full((s.V, 3), 5, dtype)
    call = lambda b: sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=b, out=out)  # noqa: E731
    for b in (None, -0.01, 1.01, np.nan, np.inf):
        _check(ValueError, "blend", call, b)
    for b in ("0.5", True, [0.5] * s.V, 1j):
        _check(TypeError, "blend", call, b)
    good = rng.random(s.V).astype(dtype)
    for v, x in ((0, -1e-7), (9, 1.5), (s.V - 1, np.nan)):
        b = good.copy()
        b[v] = x
        _check(ValueError, f"blend.*{v}", call, b)
    _check(TypeError, "blend", call, good.astype(np.float16))
    _check(TypeError, "blend", call, good.astype(np.float32 if dtype == np.float64 else np.float64))
    _check(ValueError, "blend", call, good[:-1])
    _check(ValueError, "blend", call, good[:, None])
    # a scaled palette needs pivots, as for DQS
    scaled = poses(rng, s.J, scale=True)
    _check(ValueError, "pivots", sk.skin, s.P, s.idx, s.w, scaled, method="blend", blend=good,
           out=out)
    buf = np.zeros((s.V, 4), dtype)
    buf[:, 3] = good
    _check(ValueError, "out", sk.skin, s.P, s.idx, s.w, pal, method="blend", blend=buf[:, 3],
           out=buf[:, 1:4])


# -- artifacts: the twisted cylinder and the bent arm --------------------------------------------

def test_twisted_seed001_cylinder_keeps_its_radius():
    """Seed 001's cylinder twisted at joint 5: CoR keeps the smallest radius between joints 4
    and 5 above 95 % like DQS, where LBS collapses (cos(θ/2))."""
    rig = sk.rigs.seed001()
    s = sk.metrics.twist_sweep(rig, 5, [90, 135, 179], methods=("lbs", "dqs", "cor"))
    assert np.all(s["min_radius"]["cor"] > 0.95) and np.all(s["min_radius"]["dqs"] > 0.95)
    assert s["min_radius"]["lbs"][-1] < 0.05
    assert np.all(np.abs(s["volume_ratio"]["cor"] - 1) < np.abs(s["volume_ratio"]["lbs"] - 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_bent_arm_cor_bulges_less_than_dqs_and_keeps_volume_better_than_lbs(dtype):
    """The closed two-bone arm (skinkit.rigs.arm) bent at the elbow by 90 and 120 degrees, with
    its optimized centers: CoR's bulge (largest increase of a vertex's distance from the bent
    bones) is below DQS's and its change of enclosed volume below LBS's."""
    arm = sk.rigs.arm(dtype=dtype)
    arm.compute_centers()
    s = sk.metrics.bend_sweep(arm, "elbow", [90, 120], methods=("lbs", "dqs", "cor"))
    bulge, vol = s["bulge"], {m: np.abs(s["volume_ratio"][m] - 1) for m in s["volume_ratio"]}
    assert np.all(bulge["cor"] < 0.8 * bulge["dqs"]), bulge
    assert np.all(vol["cor"] < 0.5 * vol["lbs"]), vol
    # the same through the metric functions directly, and through skin(centers=)
    K = arm.palette(sk.rigs.bend(arm.skeleton, "elbow", [90.0]))[0]
    P = sk.skin(arm.positions, arm.influences, K, method="cor", centers=arm.centers,
                pivots=arm.pivots())
    assert sk.metrics.bulge(arm, P, K) == pytest.approx(bulge["cor"][0], rel=1e-6)


def test_bulge_metric():
    """bulge against a hand computation: a straight two-bone chain, one vertex pushed 0.5 away
    from the bones and one pulled in: the bulge is 0.5."""
    arm = sk.rigs.arm()
    K = arm.palette()
    P = arm.positions.copy()
    r = sk.metrics.bone_distances(arm, P, K)
    assert np.allclose(r[np.abs(P[:, 1] - 30) < 20], 5.0)  # the side of the capsule, radius 5
    far = int(np.argmin(np.abs(P[:, 1] - 15)))  # on the side, halfway up the upper arm
    assert sk.metrics.bulge(arm, P, K) == 0.0
    away = P[far] - [0, P[far, 1], 0]
    P[far] += 0.5 * away / np.linalg.norm(away)
    P[0] *= 0.5
    assert sk.metrics.bulge(arm, P, K) == pytest.approx(0.5, abs=1e-9)
    assert sk.metrics.bulge(arm, np.stack([arm.positions, P]), np.stack([K, K])).tolist() == \
        pytest.approx([0.0, 0.5], abs=1e-9)


# -- the float32 CoR SIMD kernels (skin_simd.template.c) on every path ---------------------------

@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("K", [1, 2, 4, 8])
@pytest.mark.parametrize("rule", ["joint", "blend"])
def test_cor_simd_matches_reference(simd_path, index_dtype, K, rule, scene, poses):
    """Without tangents (the SIMD kernels' case): odd V (a partial last block), NaN centers (LBS
    with either normal rule), an all-zero row copied bit for bit."""
    rng = np.random.default_rng([K, INDEX_DTYPES.index(index_dtype)])
    s = scene(rng, V=133, J=9, K=K, dtype=np.float32, index_dtype=index_dtype)
    pal = poses(rng, s.J)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N, normal_rule=rule)
    want = ref.cor(s.P, s.idx, s.w, pal, s.C, normals=s.N, normal_rule=rule)
    assert_close(got, want, s, pal, np.float32, simd_path)
    assert np.array_equal(got[0][2], s.P[2]) and np.array_equal(got[1][2], s.N[2])
    # the rows without a center are LBS's, within rounding (LBS has its own SIMD kernels)
    lbs = sk.lbs(s.P, s.idx, s.w, pal, normals=s.N, normal_rule=rule)
    assert_close(tuple(x[::5] for x in got), tuple(x[::5].astype(np.float64) for x in lbs), s,
                 pal, np.float32, "no center")
    # blend through the LBS and DQS kernels: per-vertex and one amount, the ends included
    b = rng.random(s.V).astype(np.float32)
    b[:4] = [0, 1, 0.5, 1]
    for amount in (b, 0.625):
        got = sk.skin(s.P, s.idx, s.w, pal, method="blend", blend=amount, normals=s.N,
                      normal_rule=rule)
        want = ref.blend(s.P, s.idx, s.w, pal, amount, normals=s.N, normal_rule=rule)
        assert_close(got, want, s, pal, np.float32, f"blend {simd_path}")
        assert np.array_equal(got[0][2], s.P[2]) and np.array_equal(got[1][2], s.N[2])


def test_cor_simd_many_joints_and_center_patterns(simd_path, scene, poses):
    """J above the hemisphere sign table (64: the per-slot test), K = 3 and 4; a mesh with no
    center at all and one with every center."""
    rng = np.random.default_rng(4)
    for J, K in ((200, 4), (70, 3), (64, 4)):
        s = scene(rng, V=141, J=J, K=K, dtype=np.float32)
        pal = poses(rng, J)
        assert_close(sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N),
                     ref.cor(s.P, s.idx, s.w, pal, s.C, normals=s.N), s, pal, np.float32, J)
    for C in (np.full_like(s.C, np.nan), np.nan_to_num(s.C, nan=1.5)):
        assert_close(sk.cor(s.P, s.idx, s.w, pal, centers=C), ref.cor(s.P, s.idx, s.w, pal, C),
                     s, pal, np.float32)


def test_cor_simd_paths_agree_and_scalar_cases(simd_path, scene, poses):
    """Each path within rounding of the scalar one; with tangents or a scaled palette (the scalar
    kernel's cases) every path still matches the reference."""
    rng = np.random.default_rng(11)
    s = scene(rng, V=1001, J=40, K=4, dtype=np.float32)
    pal = poses(rng, s.J)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    previous = _core.set_simd_path("scalar")
    try:
        scalar = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    finally:
        _core.set_simd_path(previous)
    assert_close(got, tuple(x.astype(np.float64) for x in scalar), s, pal, np.float32)
    assert_close(sk.cor(s.P, s.idx, s.w, pal, centers=s.C, tangents=s.T),
                 ref.cor(s.P, s.idx, s.w, pal, s.C, tangents=s.T), s, pal, np.float32)
    scaled = poses(rng, s.J, scale=True)
    assert_close(sk.cor(s.P, s.idx, s.w, scaled, centers=s.C, pivots=s.pivots),
                 ref.cor(s.P, s.idx, s.w, scaled, s.C, pivots=s.pivots), s, scaled, np.float32)
    assert_close(sk.skin(s.P, s.idx, s.w, scaled, method="blend", blend=0.3, pivots=s.pivots,
                         normals=s.N),
                 ref.blend(s.P, s.idx, s.w, scaled, 0.3, pivots=s.pivots, normals=s.N), s, scaled,
                 np.float32)
