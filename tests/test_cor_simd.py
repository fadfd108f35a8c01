"""The float32 CoR SIMD kernels (skin_simd.template.c, ``cor8_*``) on every path this machine runs
(scalar, avx2, avx512): against the NumPy reference, the same bits whatever the threads, the range
split, the memory layout, in place or batched, and the cases they hand to the scalar code
(tangents, scaled palettes)."""
import numpy as np
import pytest

import skinkit as sk
from skinkit import _core
from skinkit import reference as ref
from skinkit import transforms as tf

PATHS = _core.simd_paths()
INDEX_DTYPES = [np.uint8, np.uint16, np.uint32, np.int32, np.int64]
TOL = 1e-5  # float32, relative to the scene's size (as tests/test_cor.py)


@pytest.fixture(params=PATHS)
def path(request):
    """Run the test on one SIMD path, then restore the one in use before."""
    previous = _core.set_simd_path(request.param)
    yield request.param
    _core.set_simd_path(previous)


def rigid_palette(rng, J, frames=None):
    lead = (J,) if frames is None else (frames, J)
    k = tf.rotvec(rng.normal(size=lead + (3,)) * 1.5)
    k[..., :3, 3] = rng.normal(size=lead + (3,)) * 4.0
    return k


class Scene:
    """V float32 vertices with unit normals, K influences of J joints (a quarter of the slots
    zero with a garbage index, rows 3 and V - 2 all zero), centers near the vertices with every
    fifth row NaN (no center: LBS)."""

    def __init__(self, rng, V=133, J=9, K=4, index_dtype=np.uint16):
        self.P = (rng.normal(size=(V, 3)) * 5).astype(np.float32)
        n = rng.normal(size=(V, 3))
        self.N = (n / np.linalg.norm(n, axis=1, keepdims=True)).astype(np.float32)
        hi = min(J, np.iinfo(index_dtype).max + 1)
        idx = rng.integers(0, hi, size=(V, K)).astype(index_dtype)
        w = rng.random((V, K)) + 0.05
        if K > 1:
            off = rng.random((V, K)) < 0.25
            off[:, 0] = False
            w[off] = 0
            idx[off] = np.iinfo(index_dtype).max if index_dtype != np.int64 else 10 ** 12
        w /= w.sum(1, keepdims=True)
        w[[3, V - 2]] = 0
        self.idx, self.w = idx, w.astype(np.float32)
        c = self.P + rng.normal(size=(V, 3))
        c[::5] = np.nan
        self.C = c.astype(np.float32)
        self.V, self.J = V, J


def check(got, want, s, pal):
    """Positions within TOL of the scene's size, unit normals within TOL."""
    size = (np.abs(s.P).max() + np.abs(np.nan_to_num(s.C)).max()
            + np.abs(np.asarray(pal)[..., :3, 3]).max())
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.float32 and g.shape == w.shape
        err = np.abs(g.astype(np.float64) - w).max()
        assert err <= TOL * (size if i == 0 else 1.0), f"output {i}: {err}"


# -- against the reference -----------------------------------------------------------------------

@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("K", [1, 2, 4, 8])
@pytest.mark.parametrize("rule", ["joint", "blend"])
def test_matches_reference(path, index_dtype, K, rule):
    """Odd V (a partial last block), NaN centers (LBS with either normal rule), zero rows."""
    rng = np.random.default_rng([K, INDEX_DTYPES.index(index_dtype)])
    s = Scene(rng, K=K, index_dtype=index_dtype)
    pal = rigid_palette(rng, s.J)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N, normal_rule=rule)
    want = ref.cor(s.P, s.idx, s.w, pal, s.C, normals=s.N, normal_rule=rule)
    check(got, want, s, pal)
    for v in (3, s.V - 2):  # weights summing to 0: copied bit for bit
        assert np.array_equal(got[0][v], s.P[v]) and np.array_equal(got[1][v], s.N[v])
    # the NaN-center rows are LBS's, within rounding (LBS has its own SIMD kernels)
    lbs = sk.lbs(s.P, s.idx, s.w, pal, normals=s.N, normal_rule=rule)
    np.testing.assert_allclose(got[0][::5], lbs[0][::5], atol=TOL * 30)
    np.testing.assert_allclose(got[1][::5], lbs[1][::5], atol=TOL)


def test_many_joints_unorm_weights_and_no_centers(path):
    """J above the sign table (the per-slot hemisphere test), unorm8 / unorm16 weights, a mesh
    with no center at all and one with every center."""
    rng = np.random.default_rng(4)
    for J, K in ((200, 4), (70, 3), (64, 4)):
        s = Scene(rng, V=141, J=J, K=K)
        pal = rigid_palette(rng, J)
        check(sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N),
              ref.cor(s.P, s.idx, s.w, pal, s.C, normals=s.N), s, pal)
    s = Scene(rng, V=77, J=12, K=4)
    pal = rigid_palette(rng, s.J)
    for dt, top in ((np.uint8, 255), (np.uint16, 65535)):
        wq = np.round(s.w.astype(np.float64) * top).astype(dt)
        check((sk.cor(s.P, s.idx, wq, pal, centers=s.C),), (ref.cor(s.P, s.idx, wq, pal, s.C),),
              s, pal)
    for C in (np.full_like(s.C, np.nan), np.nan_to_num(s.C, nan=1.5)):
        check((sk.cor(s.P, s.idx, s.w, pal, centers=C),), (ref.cor(s.P, s.idx, s.w, pal, C),),
              s, pal)


def test_paths_agree_and_scalar_cases(path):
    """Each path within rounding of the scalar one; tangents and scaled palettes (the scalar
    kernel's cases) still match the reference on every path."""
    rng = np.random.default_rng(11)
    s = Scene(rng, V=1001, J=40, K=4)
    pal = rigid_palette(rng, s.J)
    got = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    previous = _core.set_simd_path("scalar")
    try:
        want = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    finally:
        _core.set_simd_path(previous)
    np.testing.assert_allclose(got[0], want[0], atol=2e-5 * 20)
    np.testing.assert_allclose(got[1], want[1], atol=2e-6)
    t = np.concatenate([s.N[:, [1, 2, 0]], np.ones((s.V, 1), np.float32)], 1)
    check(sk.cor(s.P, s.idx, s.w, pal, centers=s.C, tangents=t),
          ref.cor(s.P, s.idx, s.w, pal, s.C, tangents=t), s, pal)
    scaled = pal.copy()
    scaled[:, :3, :3] = scaled[:, :3, :3] @ (np.eye(3) + 0.2 * rng.normal(size=(s.J, 3, 3)))
    piv = rng.normal(size=(s.J, 3))
    check((sk.cor(s.P, s.idx, s.w, scaled, centers=s.C, pivots=piv),),
          (ref.cor(s.P, s.idx, s.w, scaled, s.C, pivots=piv),), s, scaled)


# -- the same bits whatever the threads, the range, the layout -----------------------------------

@pytest.mark.parametrize("K", [2, 4])
def test_threads_and_ranges_do_not_change_bits(path, K):
    rng = np.random.default_rng(3)
    s = Scene(rng, V=4133, J=30, K=K)
    pal = rigid_palette(rng, s.J)

    def run(start, threads):
        return sk.cor(s.P[start:], s.idx[start:], s.w[start:], pal, centers=s.C[start:],
                      normals=s.N[start:], threads=threads)

    p1, n1 = run(0, 1)
    for t in (2, 3, 4, 7):
        pt, nt = run(0, t)
        assert np.array_equal(pt, p1) and np.array_equal(nt, n1), t
    # a vertex's bits do not depend on where its block starts (partial blocks)
    for start in (1, 5, 13, 16, 17, 63, 64, 100):
        ps, ns = run(start, 1)
        assert np.array_equal(ps, p1[start:]) and np.array_equal(ns, n1[start:]), start


def _layouts(A):
    V, n = A.shape
    inter = np.zeros((V, 8), A.dtype)
    inter[:, 1:1 + n] = A
    yield "contiguous", A.copy()
    yield "interleaved", inter[:, 1:1 + n]
    yield "fortran", np.asfortranarray(A)
    yield "reversed", np.ascontiguousarray(A[::-1])[::-1]


def test_layouts_in_place_and_batches_do_not_change_bits(path):
    rng = np.random.default_rng(21)
    s = Scene(rng, V=203, J=12, K=4)
    pal = rigid_palette(rng, s.J)
    want_p, want_n = sk.cor(s.P, s.idx, s.w, pal, centers=s.C, normals=s.N)
    for (name, pv), (_, nv), (_, cv), (_, iv), (_, wv) in zip(
            _layouts(s.P), _layouts(s.N), _layouts(s.C), _layouts(s.idx), _layouts(s.w)):
        before = (pv.copy(), nv.copy(), cv.copy())
        buf = np.full((s.V, 9), -7.0, np.float32)
        out, out_n = buf[:, 1:4], buf[:, 5:8]
        r = sk.cor(pv, iv, wv, pal, centers=cv, normals=nv, out=out, out_normals=out_n)
        assert r[0] is out and r[1] is out_n
        assert np.array_equal(out, want_p) and np.array_equal(out_n, want_n), name
        assert (buf[:, [0, 4, 8]] == -7.0).all()  # nothing written outside the views
        assert np.array_equal(pv, before[0]) and np.array_equal(nv, before[1])
        assert np.array_equal(cv, before[2], equal_nan=True)
    # in place: out = positions
    P = s.P.copy()
    r = sk.cor(P, s.idx, s.w, pal, centers=s.C, normals=s.N, out=P)
    assert r[0] is P and np.array_equal(P, want_p) and np.array_equal(r[1], want_n)
    # batched palettes: each frame is the unbatched call
    pals = rigid_palette(rng, s.J, frames=4)
    got = sk.cor(s.P, s.idx, s.w, pals, centers=s.C, normals=s.N, threads=2)
    for f in range(4):
        one = sk.cor(s.P, s.idx, s.w, pals[f], centers=s.C, normals=s.N)
        assert np.array_equal(got[0][f], one[0]) and np.array_equal(got[1][f], one[1])
