"""skinkit.centers_of_rotation (Le & Hodgins 2016) against the slow NumPy reference, its
invariants, every bad input, and SkinnedMesh keeping its centers."""
import numpy as np
import pytest

import skinkit as sk
from skinkit import reference as ref
from skinkit import rigs
from skinkit import transforms as tf

INDEX_DTYPES = (np.uint8, np.uint16, np.uint32, np.int32, np.int64)


def random_mesh(rng, V=30, T=50, K=3, J=6, corners=3, zero=0.3, dtype=np.float64):
    """Random positions, faces (every vertex used) and normalized sparse weights."""
    P = rng.normal(size=(V, 3)) * 5 + rng.normal(size=3) * 20
    F = rng.integers(0, V, size=(T, corners))
    F[: V // corners, :] = np.arange(V // corners * corners).reshape(-1, corners)
    idx = rng.integers(0, J, size=(V, K))
    w = rng.random((V, K)) + 0.05
    w[rng.random((V, K)) < zero] = 0
    w[:, 0] += (w.sum(1) == 0)
    w /= w.sum(1, keepdims=True)
    return P.astype(dtype), F, idx, w.astype(dtype)


def close(c, r, rtol):
    """Same NaN rows and finite rows within rtol of the mesh's extent."""
    assert np.array_equal(np.isnan(c), np.isnan(r))
    ok = ~np.isnan(r)
    scale = max(1.0, float(np.abs(r[ok]).max())) if ok.any() else 1.0
    err = np.abs(c[ok] - r[ok]).max() if ok.any() else 0.0
    assert err <= rtol * scale, err / scale


# ---------------------------------------------------------------------------------------------
# against the reference
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("K", [1, 2, 3, 4])
@pytest.mark.parametrize("corners", [3, 4])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_reference(K, corners, dtype):
    rng = np.random.default_rng(10 * K + corners)
    P, F, idx, w = random_mesh(rng, K=K, corners=corners, dtype=dtype)
    c = sk.centers_of_rotation(P, F, idx, w)
    assert c.dtype == dtype and c.shape == P.shape
    r = ref.centers_of_rotation(P, F, idx, w)
    close(c, r, 1e-10 if dtype == np.float64 else 1e-5)
    if K > 1:
        assert np.isfinite(c).any()  # the comparison was not NaN against NaN only
    else:
        assert np.isnan(c).all()  # one influence: no center anywhere


def test_wide_rows_beyond_one_slot_block():
    # K = 70 slots (the core reads slots 64 at a time), most of them zero, joints repeated
    rng = np.random.default_rng(17)
    P, F, idx, w = random_mesh(rng, V=25, T=40, K=70, J=8, zero=0.95)
    c = sk.centers_of_rotation(P, F, idx, w)
    close(c, ref.centers_of_rotation(P, F, idx, w), 1e-10)
    assert np.isfinite(c).any()


@pytest.mark.parametrize("subdivide", [True, 0.05, 0.3])
@pytest.mark.parametrize("corners", [3, 4])
def test_subdivision_matches_reference(subdivide, corners):
    rng = np.random.default_rng(7)
    P, F, idx, w = random_mesh(rng, V=20, T=25, K=3, J=4, corners=corners)
    c = sk.centers_of_rotation(P, F, idx, w, subdivide=subdivide)
    close(c, ref.centers_of_rotation(P, F, idx, w, subdivide=subdivide), 1e-10)
    # subdivision changes the answer (the weights vary across these triangles)
    plain = sk.centers_of_rotation(P, F, idx, w)
    ok = ~np.isnan(c)
    assert np.abs(c[ok] - plain[ok]).max() > 1e-6


def test_subdivision_depth_cap_with_unnormalized_weights():
    # weights up to 50 would need 9 levels for 0.1: the cap (6 levels) holds in both
    rng = np.random.default_rng(3)
    P, F, idx, w = random_mesh(rng, V=8, T=6, K=2, J=3)
    w = w * 50
    c = sk.centers_of_rotation(P, F, idx, w, subdivide=True)
    close(c, ref.centers_of_rotation(P, F, idx, w, subdivide=True), 1e-10)


@pytest.mark.parametrize("itype", INDEX_DTYPES)
def test_every_index_dtype_for_indices_and_faces(itype):
    rng = np.random.default_rng(5)
    P, F, idx, w = random_mesh(rng, K=4)
    expected = sk.centers_of_rotation(P, F, idx, w)
    got = sk.centers_of_rotation(P, F.astype(itype), idx.astype(itype), w)
    assert np.array_equal(got, expected, equal_nan=True)


@pytest.mark.parametrize("ftype", [np.int8, np.int16, np.uint64, np.dtype(">i4")])
def test_other_face_dtypes_are_converted(ftype):
    rng = np.random.default_rng(5)
    P, F, idx, w = random_mesh(rng, V=30, K=2)
    expected = sk.centers_of_rotation(P, F, idx, w)
    assert np.array_equal(sk.centers_of_rotation(P, F.astype(ftype), idx, w), expected,
                          equal_nan=True)


@pytest.mark.parametrize("bits", [8, 16])
def test_unorm_weights(bits):
    rng = np.random.default_rng(11)
    P, F, idx, w = random_mesh(rng, K=4)
    q = sk.weights.quantize(w, bits=bits)
    c = sk.centers_of_rotation(P, F, idx, q)
    close(c, ref.centers_of_rotation(P, F, idx, q), 1e-10)
    c32 = sk.centers_of_rotation(P.astype(np.float32), F, idx, q)
    close(c32, ref.centers_of_rotation(P, F, idx, q), 1e-5)


def test_strided_inputs_are_read_in_place():
    rng = np.random.default_rng(2)
    P, F, idx, w = random_mesh(rng, K=3, corners=4)
    expected = sk.centers_of_rotation(P, F, idx, w)
    V = len(P)
    buf = np.zeros((V, 8))
    buf[:, 2:5] = P
    Pv = buf[:, 2:5]                                   # interleaved vertex buffer
    Fv = np.asfortranarray(F[:, ::-1])[:, ::-1]        # Fortran order, reversed columns
    iv = np.zeros((V, 6), idx.dtype)[:, ::2]
    iv[...] = idx                                      # every other column
    wv = np.ascontiguousarray(w[::-1])[::-1]           # negative row stride
    assert not (Pv.flags.c_contiguous or Fv.flags.c_contiguous or iv.flags.c_contiguous
                or wv.flags.c_contiguous)
    got = sk.centers_of_rotation(Pv, Fv, iv, wv)
    assert np.array_equal(got, expected, equal_nan=True)


def test_influences_object_and_duplicate_joints():
    rng = np.random.default_rng(4)
    P, F, idx, w = random_mesh(rng, K=3, J=5)
    infl = sk.Influences(idx, w, 5)
    assert np.array_equal(sk.centers_of_rotation(P, F, infl),
                          sk.centers_of_rotation(P, F, idx, w), equal_nan=True)
    # a joint listed in two slots counts with the sum of its weights, as in the dense vector
    dup_i = np.concatenate([idx, idx[:, :1]], 1)
    dup_w = np.concatenate([w, np.zeros((len(w), 1))], 1)
    dup_w[:, 0] *= 0.25
    dup_w[:, -1] = w[:, 0] * 0.75
    close(sk.centers_of_rotation(P, F, dup_i, dup_w), sk.centers_of_rotation(P, F, idx, w),
          1e-12)


def test_positional_sigma_form():
    rng = np.random.default_rng(4)
    P, F, idx, w = random_mesh(rng, K=3)
    assert np.array_equal(sk.centers_of_rotation(P, F, idx, w, 0.3),
                          sk.centers_of_rotation(P, F, idx, w, sigma=0.3), equal_nan=True)


# ---------------------------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------------------------
def test_one_influence_gives_nan_and_others_do_not():
    rng = np.random.default_rng(8)
    P, F, idx, w = random_mesh(rng, K=2, J=3, zero=0.0)
    w[:5] = [1.0, 0.0]
    c = sk.centers_of_rotation(P, F, idx, w)
    assert np.isnan(c[:5]).all()
    two = np.array([len(set(idx[v][w[v] > 0])) >= 2 for v in range(len(P))])
    assert np.isfinite(c[two]).all()


def test_shared_weight_rows_match_the_reference():
    # half the vertices repeat another's weight row (computed once, copied): still the formula
    rng = np.random.default_rng(14)
    P, F, idx, w = random_mesh(rng, V=40, K=3)
    src = rng.integers(0, 20, 20)
    idx[20:], w[20:] = idx[src], w[src]
    for dtype in (np.float64, np.float32):
        c = sk.centers_of_rotation(P.astype(dtype), F, idx, w.astype(dtype))
        close(c, ref.centers_of_rotation(P, F, idx, w), 1e-10 if dtype == np.float64 else 1e-5)
        assert np.array_equal(c[20:], c[src], equal_nan=True)


def test_identical_weights_give_the_same_center():
    rng = np.random.default_rng(9)
    P, F, idx, w = random_mesh(rng, K=3)
    idx[7], w[7] = idx[3], w[3]
    idx[12], w[12] = idx[3][::-1], w[3][::-1]  # same dense vector, other slot order
    c = sk.centers_of_rotation(P, F, idx, w)
    assert np.isfinite(c[3]).all()
    assert np.array_equal(c[3], c[7])
    np.testing.assert_allclose(c[12], c[3], rtol=0, atol=1e-12 * np.abs(P).max())


def test_rigid_motion_moves_centers_rigidly(random_rigid):
    rng = np.random.default_rng(12)
    P, F, idx, w = random_mesh(rng, K=4)
    M = random_rigid(rng, ())
    c = sk.centers_of_rotation(P, F, idx, w)
    Pm = P @ M[:3, :3].T + M[:3, 3]
    cm = sk.centers_of_rotation(Pm, F, idx, w)
    ok = ~np.isnan(c[:, 0])
    assert np.array_equal(np.isnan(cm), np.isnan(c)) and ok.any()
    np.testing.assert_allclose(cm[ok], c[ok] @ M[:3, :3].T + M[:3, 3], rtol=0,
                               atol=1e-10 * np.abs(Pm).max())
    # a uniform scale of the mesh scales the centers (areas scale, the ratio does not)
    np.testing.assert_allclose(sk.centers_of_rotation(P * 3.0, F, idx, w)[ok], 3.0 * c[ok],
                               rtol=1e-12)


def test_sigma_matters():
    rng = np.random.default_rng(13)
    P, F, idx, w = random_mesh(rng, K=3)
    a = sk.centers_of_rotation(P, F, idx, w, sigma=0.05)
    b = sk.centers_of_rotation(P, F, idx, w, sigma=1.0)
    ok = ~np.isnan(a[:, 0])
    assert np.abs(a[ok] - b[ok]).max() > 1e-3
    close(b, ref.centers_of_rotation(P, F, idx, w, sigma=1.0), 1e-10)
    close(a, ref.centers_of_rotation(P, F, idx, w, sigma=0.05), 1e-10)


@pytest.mark.parametrize("subdivide", [False, True])
def test_threads_bit_identical(subdivide):
    prim = rigs.cylinder(radial_segments=24, height_segments=60)
    skel = sk.Skeleton.chain(6, 40.0)
    idx, w = sk.bind.proximity(prim.positions + [0, 100, 0], skel, k=4)
    one = sk.centers_of_rotation(prim.positions, prim.faces, idx, w, subdivide=subdivide, threads=1)
    assert np.isfinite(one).mean() > 0.9
    for n in (2, 3, 7):
        many = sk.centers_of_rotation(prim.positions, prim.faces, idx, w, subdivide=subdivide,
                                      threads=n)
        assert np.array_equal(one.view(np.uint64), many.view(np.uint64))


@pytest.mark.parametrize("path", sk._core.simd_paths())
def test_every_simd_path_matches_the_reference(path):
    # the group loop has an AVX2 version (its own exp()); the scalar path uses libm's
    rng = np.random.default_rng(15)
    P, F, idx, w = random_mesh(rng, V=60, T=120, K=4, J=5)
    r = ref.centers_of_rotation(P, F, idx, w, sigma=0.07)
    before = sk._core.set_simd_path(path)
    try:
        c = sk.centers_of_rotation(P, F, idx, w, sigma=0.07)
        c2 = sk.centers_of_rotation(P, F, idx, w, sigma=0.07, threads=3)
        tiny = sk.centers_of_rotation(P, F, idx, w, sigma=0.004)  # exp() far into underflow
    finally:
        sk._core.set_simd_path(before)
    close(c, r, 1e-10)
    assert np.array_equal(c, c2, equal_nan=True)
    close(tiny, ref.centers_of_rotation(P, F, idx, w, sigma=0.004), 1e-10)


def test_pruning_equals_the_unpruned_reference():
    # many joints, each vertex with two neighbouring ones along a strip: pruning skips almost
    # every triangle for every vertex; the reference sums over all of them
    n = 40
    x = np.linspace(0, 10, n)
    P = np.concatenate([np.stack([x, np.zeros(n), np.zeros(n)], 1),
                        np.stack([x, np.ones(n), np.zeros(n)], 1)])
    F = np.array([[i, i + 1, n + i + 1, n + i] for i in range(n - 1)])
    J = 12
    t = np.concatenate([x, x]) / 10 * (J - 1)
    j0 = np.minimum(np.floor(t).astype(int), J - 2)
    f = t - j0
    idx = np.stack([j0, j0 + 1], 1)
    w = np.stack([1 - f, f], 1)
    c = sk.centers_of_rotation(P, F, idx, w)
    close(c, ref.centers_of_rotation(P, F, idx, w), 1e-10)
    # a vertex's center lies among the triangles of its own joint pair
    ok = ~np.isnan(c[:, 0])
    assert ok.sum() > n
    assert np.all(np.abs(c[ok, 0] - (j0[ok] + 0.5) * 10 / (J - 1)) <= 10 / (J - 1))


def test_cylinder_centers_lie_on_the_axis():
    # seed 001's cylinder: by symmetry every ring's centers sit on the bone axis, at heights
    # inside the mesh (the paper's point: a center inside the limb, near the joint)
    mesh = rigs.seed001()
    c = sk.centers_of_rotation(mesh.positions, mesh.faces, mesh.influences)
    ok = ~np.isnan(c[:, 0])
    # rings between two joints have a center; rings at a joint's height (weight 1) do not
    two = np.count_nonzero(mesh.weights > 0, axis=1) == 2
    assert np.array_equal(ok, two) and ok.sum() >= 100
    assert np.abs(c[ok][:, [0, 2]]).max() < 1e-9 * 200
    assert np.all((c[ok, 1] >= 0) & (c[ok, 1] <= 200))


def test_real_character_matches_the_reference():
    # CesiumMan (glTF sample model, tests/data/gltf): 3273 vertices, 19 joints, K = 4, float32
    import os

    from skinkit.io import gltf

    path = os.path.join(os.path.dirname(__file__), "data", "gltf", "CesiumMan.glb")
    mesh = gltf.load(path)[0][0]
    c = mesh.compute_centers()
    r = ref.centers_of_rotation(mesh.positions, mesh.faces, mesh.indices, mesh.weights)
    close(c, r, 1e-5)
    ok = ~np.isnan(c[:, 0])
    assert 0.5 < ok.mean() < 1.0  # single-influence vertices have none
    lo, hi = mesh.positions.min(0), mesh.positions.max(0)
    assert np.all((c[ok] >= lo) & (c[ok] <= hi))  # averages of the surface's centroids
    c64 = sk.centers_of_rotation(mesh.positions.astype(np.float64), mesh.faces, mesh.indices,
                                 mesh.weights.astype(np.float64))
    close(c64, r, 1e-10)


def test_degenerate_and_empty():
    P = np.zeros((0, 3))
    c = sk.centers_of_rotation(P, np.zeros((0, 3), np.int32), np.zeros((0, 2), np.int32),
                               np.zeros((0, 2)))
    assert c.shape == (0, 3)
    rng = np.random.default_rng(1)
    P, F, idx, w = random_mesh(rng, K=2)
    assert np.isnan(sk.centers_of_rotation(P, F[:0], idx, w)).all()  # no faces, no center
    Pz = P.copy()
    Pz[:] = 1.0  # every triangle has zero area
    assert np.isnan(sk.centers_of_rotation(Pz, F, idx, w)).all()


@pytest.mark.parametrize("dtype, value", [(np.float64, np.nan), (np.float64, np.inf),
                                          (np.float64, -np.inf), (np.float64, 1e300),
                                          (np.float32, np.nan), (np.float32, -np.inf)])
def test_positions_not_finite_or_huge(dtype, value):
    # NaN centers mean "no center" (CoR then does LBS there): a NaN, an inf, or a coordinate
    # whose triangle areas overflow must raise instead of turning into NaN centers
    rng = np.random.default_rng(1)
    P, F, idx, w = random_mesh(rng, K=2)
    P = P.astype(dtype)
    v = int(F[3, 1])
    P[v, 2] = value
    word = "coordinate beyond 1e150" if np.isfinite(value) else "NaN or inf"
    with pytest.raises(ValueError, match=f"positions: {word} at vertex {v}"):
        sk.centers_of_rotation(P, F, idx, w.astype(dtype))
    with pytest.raises(ValueError, match=f"positions: {word} at vertex {v}"):
        sk.centers_of_rotation(P, F, sk.Influences(idx, w.astype(dtype), int(idx.max()) + 1))


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------
def _bad_cases(P, F, idx, w):
    V = len(P)
    neg = w.copy()
    neg[3, 0] = -0.1
    nan = w.copy()
    nan[4, 1] = np.nan
    v = int(np.nonzero(w[:, 0] > 0)[0][0])  # the index of a zero weight is never read
    negi = idx.astype(np.int32)
    negi[v, 0] = -1
    huge = idx.astype(np.int64)
    huge[v, 0] = 1 << 24
    return [
        (IndexError, "faces", (P, np.where(F == F[2, 1], V, F), idx, w), {}),
        (IndexError, "faces", (P, np.where(F == F[2, 1], -1, F), idx, w), {}),
        (TypeError, "faces", (P, F.astype(np.float64), idx, w), {}),
        (TypeError, "faces", (P, F.astype(bool), idx, w), {}),
        (ValueError, "faces", (P, F[:, :2].copy(), idx, w), {}),
        (ValueError, "faces", (P, F.reshape(-1), idx, w), {}),
        (TypeError, "positions", (P.astype(np.int64), F, idx, w), {}),
        (TypeError, "positions", (P.astype(">f8"), F, idx, w), {}),
        (TypeError, "positions", (P.tolist(), F, idx, w), {}),
        (ValueError, "positions", (P[:, :2].copy(), F, idx, w), {}),
        (TypeError, "weights", (P, F, idx, w.astype(np.float32)), {}),
        (TypeError, "indices", (P, F, idx.astype(np.float64), w), {}),
        (ValueError, "indices", (P, F, idx[:-1].copy(), w[:-1].copy()), {}),
        (ValueError, "weights", (P, F, idx, w[:, :-1].copy()), {}),
        (ValueError, "weights", (P, F, idx, neg), {}),
        (ValueError, "weights", (P, F, idx, nan), {}),
        (IndexError, "indices", (P, F, negi, w), {}),
        # beyond 2**24 joints: the precompute's limit, as for an Influences (below)
        (ValueError, "indices: joint index 16777216 is too large.*2\\^24", (P, F, huge, w), {}),
        (ValueError, "sigma", (P, F, idx, w), {"sigma": 0.0}),
        (ValueError, "sigma", (P, F, idx, w), {"sigma": -1.0}),
        (ValueError, "sigma", (P, F, idx, w), {"sigma": np.nan}),
        (ValueError, "sigma", (P, F, idx, w), {"sigma": np.inf}),
        (TypeError, "sigma", (P, F, idx, w), {"sigma": "0.1"}),
        (TypeError, "sigma", (P, F, idx, w), {"sigma": True}),
        (ValueError, "subdivide", (P, F, idx, w), {"subdivide": -0.1}),
        (ValueError, "subdivide", (P, F, idx, w), {"subdivide": np.nan}),
        (TypeError, "subdivide", (P, F, idx, w), {"subdivide": "yes"}),
        (TypeError, "influences", (P, F, idx), {}),
        (ValueError, "threads", (P, F, idx, w), {"threads": 0}),
    ]


def test_bad_input_raises_naming_the_argument_and_modifies_nothing():
    rng = np.random.default_rng(6)
    P, F, idx, w = random_mesh(rng, K=2)
    # validated influences of a huge skeleton: the precompute's own limit
    big = idx.astype(np.int64)
    big[w[:, 0] > 0, 0] = 1 << 24
    with pytest.raises(ValueError, match="indices.*2\\^24"):
        sk.centers_of_rotation(P, F, sk.Influences(big, w, (1 << 24) + 1))
    for exc, name, args, kw in _bad_cases(P, F, idx, w):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        with pytest.raises(exc, match=name):
            sk.centers_of_rotation(*args, **kw)
        for a, b in zip(args, copies):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b, equal_nan=True)


# ---------------------------------------------------------------------------------------------
# SkinnedMesh keeps its centers
# ---------------------------------------------------------------------------------------------
def test_skinned_mesh_centers_round_trip(tmp_path):
    mesh = rigs.seed001()
    assert mesh.centers is None
    c = mesh.compute_centers()
    assert c is mesh.centers
    assert np.array_equal(c, sk.centers_of_rotation(mesh.positions, mesh.faces, mesh.influences),
                          equal_nan=True)
    back = sk.SkinnedMesh.from_arrays(mesh.to_arrays())
    assert np.array_equal(back.centers, c, equal_nan=True)
    mesh.save(tmp_path / "m.npz")
    loaded = sk.SkinnedMesh.load(tmp_path / "m.npz")
    assert np.array_equal(loaded.centers, c, equal_nan=True)
    # sigma is passed through; the attribute is settable and validated
    assert not np.array_equal(mesh.compute_centers(sigma=0.5), c, equal_nan=True)
    mesh.centers = c
    with pytest.raises(ValueError, match="centers"):
        mesh.centers = c[:-1]
    with pytest.raises(TypeError, match="centers"):
        mesh.centers = c.astype(np.float32)
    assert mesh.centers is c
    mesh.centers = None
    assert mesh.centers is None


def test_skinned_mesh_without_faces():
    mesh = rigs.seed001()
    bare = sk.SkinnedMesh(mesh.positions, mesh.skeleton, mesh.influences)
    with pytest.raises(ValueError, match="faces"):
        bare.compute_centers()


def test_deform_cor_passes_the_centers_and_computes_them_once(monkeypatch):
    import skinkit.mesh as skmesh

    seen = {}

    def fake_skin(P, influences, palette, method="lbs", **kw):  # the kernel is tested elsewhere
        seen.clear()
        seen.update(kw, method=method)
        return np.zeros_like(P)

    monkeypatch.setattr(skmesh, "skin", fake_skin)
    mesh = rigs.seed001()
    mesh.deform(mesh.palette(), method="cor")
    c = mesh.centers
    assert c is not None and seen["centers"] is c and seen["method"] == "cor"
    assert np.array_equal(c, sk.centers_of_rotation(mesh.positions, mesh.faces, mesh.influences),
                          equal_nan=True)
    mesh.deform(mesh.palette(), method="cor")
    assert mesh.centers is c and seen["centers"] is c  # kept, not recomputed
    mine = np.zeros_like(c)
    mesh.deform(mesh.palette(), method="cor", centers=mine)
    assert seen["centers"] is mine
    bare = sk.SkinnedMesh(mesh.positions, mesh.skeleton, mesh.influences)
    with pytest.raises(ValueError, match="centers"):
        bare.deform(mesh.palette(), method="cor")
    assert bare.centers is None


def test_many_calls_keep_memory_flat():
    # the binding's PyMem_RawMalloc blocks (prep, scratch) and references on every path
    import sys
    import tracemalloc

    rng = np.random.default_rng(16)
    P, F, idx, w = random_mesh(rng, V=40, K=3)
    bad_w = w.copy()
    bad_w[0, 0] = -1.0
    bad_f = F.copy()
    bad_f[3, 1] = 999
    arrays = [P, F, idx, w, bad_w, bad_f]

    def calls():
        sk.centers_of_rotation(P, F, idx, w, subdivide=True)
        for f, ww, exc in ((F, bad_w, ValueError), (bad_f, w, IndexError)):
            with pytest.raises(exc):
                sk.centers_of_rotation(P, f, idx, ww)

    for _ in range(300):
        calls()
    refs = [sys.getrefcount(a) for a in arrays]
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(1000):
            calls()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert [sys.getrefcount(a) for a in arrays] == refs
    mine = [tracemalloc.Filter(True, "*skinkit*")]
    growth = sum(s.size_diff for s in after.filter_traces(mine).compare_to(
        before.filter_traces(mine), "filename"))
    assert growth < 16 * 1024, growth


def test_deform_cor_end_to_end_with_the_kernel():
    # seed 001's cylinder twisted 90 degrees: the lazily computed centers reach the CoR kernel
    mesh = rigs.seed001()
    local = rigs.twist(mesh.skeleton, 5, 90.0)
    K = mesh.palette(local)
    got = mesh.deform(K, method="cor")
    c = sk.centers_of_rotation(mesh.positions, mesh.faces, mesh.influences)
    assert np.array_equal(mesh.centers, c, equal_nan=True)
    want = sk.skin(mesh.positions, mesh.influences, K, method="cor", centers=c,
                   pivots=mesh.pivots())
    assert np.array_equal(got, want)
    assert not np.allclose(got, sk.skin(mesh.positions, mesh.influences, K, method="lbs"))


# ---------------------------------------------------------------------------------------------
# properties (hypothesis): random small meshes, any K, J, faces, sigma, subdivision, dtypes
# ---------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(3, 25), T=st.integers(0, 30),
       K=st.integers(1, 5), J=st.integers(1, 7), corners=st.sampled_from([3, 4]),
       zero=st.floats(0.0, 0.8), sigma=st.sampled_from([0.02, 0.1, 0.5]),
       subdivide=st.sampled_from([False, True, 0.25]), itype=st.sampled_from(INDEX_DTYPES),
       threads=st.integers(1, 4))
def test_property_matches_reference(seed, V, T, K, J, corners, zero, sigma, subdivide, itype,
                                    threads):
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(V, 3)) * rng.uniform(0.1, 100)
    F = rng.integers(0, V, size=(T, corners)).astype(itype)
    idx = rng.integers(0, J, size=(V, K)).astype(itype)
    w = rng.random((V, K))
    w[rng.random((V, K)) < zero] = 0
    if rng.random() < 0.5:
        s = w.sum(1, keepdims=True)
        w = np.divide(w, s, out=np.zeros_like(w), where=s > 0)
    c = sk.centers_of_rotation(P, F, idx, w, sigma=sigma, subdivide=subdivide, threads=threads)
    close(c, ref.centers_of_rotation(P, F, idx, w, sigma=sigma, subdivide=subdivide), 1e-10)


def test_a_python_thread_runs_while_centers_are_computed(assert_gil_released):
    """If the call held the GIL, a counter in another Python thread could not move during it."""
    prim = rigs.cylinder(radial_segments=24, height_segments=80)
    skel = sk.Skeleton.chain(6, 40.0)
    idx, w = sk.bind.proximity(prim.positions + [0, 100, 0], skel, k=4)
    w = w * (1 + 1e-9 * np.random.default_rng(0).random(w.shape))  # distinct rows: real work
    assert_gil_released(lambda: sk.centers_of_rotation(prim.positions, prim.faces, idx, w,
                                                       threads=1), "centers_of_rotation calls")
