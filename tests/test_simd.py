"""The SIMD kernels: every path this machine runs (scalar, avx2, avx512) against the NumPy
reference, bit-identical across thread counts, range splits and memory layouts on each path, the
validation fast path, and how a path is chosen (runtime detection, ``SKINKIT_SIMD``)."""
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np
import pytest

import skinkit as sk
from skinkit import _core
from skinkit import reference as ref
from skinkit import transforms as tf

PATHS = _core.simd_paths()
INDEX_DTYPES = [np.uint8, np.uint16, np.uint32, np.int32, np.int64]
FLOATS = [np.float32, np.float64]
TOL = {np.float64: 1e-12, np.float32: 1e-6}


@pytest.fixture(params=PATHS)
def path(request):
    """Run the test on one SIMD path, then restore the one in use before."""
    previous = _core.set_simd_path(request.param)
    yield request.param
    _core.set_simd_path(previous)


# ---------------------------------------------------------------------------------------------
# choosing a path
# ---------------------------------------------------------------------------------------------

def _cpu_flags():
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return None


def test_paths_follow_the_cpu():
    assert PATHS[0] == "scalar" and _core.simd_path() in PATHS
    assert set(PATHS) <= {"scalar", "avx2", "avx512"}
    flags = _cpu_flags()
    info = _core.build_info()
    built, build = info["simd_built"], info["simd_build"]
    assert built[0] == "scalar" and set(PATHS) <= set(built) <= {"scalar", "avx2", "avx512"}
    assert build in ("all", "native", "none")
    if build == "none":
        assert built == ["scalar"]
    if flags is not None and platform.machine() in ("x86_64", "AMD64") and \
            info["compiler"].split()[0] in ("gcc", "clang") and build != "none":
        runs = {"avx2": {"avx2", "fma"} <= flags,
                "avx512": {"avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags}
        for name, cpu_runs in runs.items():
            # a GCC / Clang build on x86-64 has both SIMD ISAs (CMake's SKINKIT_SIMD_BUILD=all)
            # or those of the machine that built it (native: CI's lanes, on this machine); the
            # CPU alone decides which run
            assert (name in built) == (build == "all" or cpu_runs)
            assert (name in PATHS) == cpu_runs
    # without SKINKIT_SIMD the best path is in use, and show_config reports it
    if not os.environ.get("SKINKIT_SIMD"):
        assert _core.simd_path() == PATHS[-1]
    from skinkit._config import config
    assert config()["simd"] == _core.simd_path()


def test_set_simd_path():
    before = _core.simd_path()
    for name in PATHS:
        assert _core.set_simd_path(name) in PATHS
        assert _core.simd_path() == name
    assert _core.set_simd_path(before) == PATHS[-1]
    with pytest.raises(ValueError, match="scalar"):
        _core.set_simd_path("sse9")
    for name in {"avx2", "avx512"} - set(PATHS):  # paths this machine cannot run
        with pytest.raises(ValueError, match="not supported"):
            _core.set_simd_path(name)
    assert _core.simd_path() == before


def _run_python(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                          text=True, timeout=120)


def test_environment_variable_forces_a_path():
    code = "import skinkit._core as c; print(c.simd_path())"
    for name in PATHS:
        r = _run_python(code, SKINKIT_SIMD=name)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == name
    r = _run_python(code, SKINKIT_SIMD="auto")
    assert r.stdout.strip() == PATHS[-1]
    # a bad value must not break the import: a warning, and the best path
    r = _run_python("import warnings; warnings.simplefilter('always')\n" + code,
                    SKINKIT_SIMD="fastest")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == PATHS[-1]
    assert "RuntimeWarning" in r.stderr and "SKINKIT_SIMD=fastest" in r.stderr


# ---------------------------------------------------------------------------------------------
# every path against the reference
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("K", [1, 3, 4, 8])
@pytest.mark.parametrize("scaled", [False, True])
def test_lbs_matches_reference(path, dtype, index_dtype, K, scaled, unit_rows, influences,
                               random_palette, assert_skin_close):
    rng = np.random.default_rng([K, INDEX_DTYPES.index(index_dtype), scaled])
    V, J = 157, 11  # odd: partial blocks at the end
    P = rng.normal(size=(V, 3)) * 5
    N = unit_rows(rng, V)
    N[7] = 0.0  # a zero normal stays zero
    # weights summing to 0 in the first block, the last whole block and the partial tail
    idx, w = influences(rng, V, J, K, index_dtype, dtype, zero_rows=[3, 150, V - 2])
    pal = random_palette(rng, J, scale=0.3) if scaled else random_palette(rng, J)
    infl = sk.Influences(idx, w, J)
    p, n = sk.lbs(P.astype(dtype), infl, pal, normals=N.astype(dtype))
    rp, rn = ref.lbs(P, idx, w, pal, normals=N)
    assert p.dtype == dtype and n.dtype == dtype
    assert_skin_close(p, rp, P, pal, TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[dtype])
    assert not n[7].any()
    for v in (3, 150, V - 2):  # weights summing to 0: copied bit for bit
        assert np.array_equal(p[v], P[v].astype(dtype))
        assert np.array_equal(n[v], N[v].astype(dtype))
    # positions only, and raw arrays (validated every call): the same bits
    assert np.array_equal(sk.lbs(P.astype(dtype), idx, w, pal), p)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bits", [8, 16])
def test_lbs_unorm_weights(path, dtype, bits, influences, random_palette, assert_skin_close):
    rng = np.random.default_rng(bits)
    V, J, K = 99, 7, 4
    P = rng.normal(size=(V, 3))
    idx, w = influences(rng, V, J, K, np.uint8, np.float64, zero_rows=[3, V - 2])
    q = np.round(w * (2**bits - 1)).astype(np.uint8 if bits == 8 else np.uint16)
    pal = random_palette(np.random.default_rng(bits + 1), J)
    p = sk.lbs(P.astype(dtype), idx, q, pal)
    rp = ref.lbs(P, idx, q, pal)
    assert_skin_close(p, rp, P, pal, TOL[dtype])


@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_lbs_unorm_weights_k4_with_normals(path, bits, index_dtype, unit_rows, influences,
                                           random_palette, assert_skin_close):
    """K = 4 unorm weights (AVX2: loops of their own) with normals, against the reference:
    all-zero rows copied bit for bit, and the same bits for every layout and thread count."""
    rng = np.random.default_rng([bits, INDEX_DTYPES.index(index_dtype)])
    V, J = 1037, 23  # a partial block at the end
    P = rng.normal(size=(V, 3)).astype(np.float32)
    N = unit_rows(rng, V).astype(np.float32)
    idx, w = influences(rng, V, J, 4, index_dtype, np.float64, zero_rows=[3, 500, V - 2])
    top = 2 ** bits - 1
    q = np.round(w * top).astype(np.uint8 if bits == 8 else np.uint16)
    pal = random_palette(rng, J, scale=0.3)  # cofactors blended
    p, n = sk.lbs(P, idx, q, pal, normals=N)
    rp, rn = ref.lbs(P.astype(np.float64), idx, q, pal, normals=N)
    assert_skin_close(p, rp, P, pal, TOL[np.float32])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[np.float32])
    for v in (3, 500, V - 2):
        assert np.array_equal(p[v], P[v]) and np.array_equal(n[v], N[v])
    wide = np.zeros((V, 6), q.dtype)
    wide[:, 1:5] = q
    # every 4-byte slot of 16-byte rows: the byte strides of packed float32 weights
    spread = np.zeros((V, 16 // q.itemsize), q.dtype)
    spread[:, ::4 // q.itemsize] = q
    layouts = ((np.asfortranarray(idx), q, 1), (idx, wide[:, 1:5], 3), (idx, q, 2),
               (idx, spread[:, ::4 // q.itemsize], 1))
    for ii, qq, t in layouts:
        got_p, got_n = sk.lbs(P, ii, qq, pal, normals=N, threads=t)
        assert np.array_equal(got_p, p) and np.array_equal(got_n, n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("K", [1, 2, 4, 5, 8])
def test_dqs_matches_reference(path, dtype, index_dtype, K, unit_rows, influences, random_palette,
                               assert_skin_close):
    rng = np.random.default_rng([100, K, INDEX_DTYPES.index(index_dtype)])
    V, J = 133, 9
    P = rng.normal(size=(V, 3)) * 5
    N = unit_rows(rng, V)
    idx, w = influences(rng, V, J, K, index_dtype, dtype, zero_rows=[3, V - 2])
    pal = random_palette(rng, J)
    p, n = sk.dqs(P.astype(dtype), idx, w, pal, normals=N.astype(dtype))
    rp, rn = ref.dqs(P, idx, w, pal, normals=N)
    assert_skin_close(p, rp, P, pal, TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[dtype])
    for v in (3, V - 2):
        assert np.array_equal(p[v], P[v].astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_dqs_many_joints_and_scaled_palettes(path, dtype, influences, random_palette,
                                             assert_skin_close):
    """J above the sign table's size (each slot's hemisphere tested in the kernel), and a scaled
    palette (the scalar kernel's case)."""
    rng = np.random.default_rng(9)
    V, K = 140, 4
    P = rng.normal(size=(V, 3)) * 3
    for J, pal in ((200, random_palette(rng, 200)), (6, random_palette(rng, 6, scale=0.3))):
        idx, w = influences(rng, V, J, K, np.uint16, dtype, zero_rows=[3, V - 2])
        piv = rng.normal(size=(J, 3))
        p = sk.dqs(P.astype(dtype), idx, w, pal, pivots=piv)
        assert_skin_close(p, ref.dqs(P, idx, w, pal, pivots=piv), P, pal, TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("joints", [(0, 1, 2), (5, 36, 33), (40, 2, 7)])
@pytest.mark.parametrize("K", [4, 8])
def test_dqs_tie_goes_to_the_smallest_joint(path, dtype, joints, K, random_palette,
                                            assert_skin_close):
    """Two slots holding the largest weight: the pivot is the smaller joint (DESIGN.md section
    2).  Here it decides the result, not only its rounding: joints b and c (rotations of +-100
    degrees about z) lie in opposite hemispheres, a (the identity) in both of theirs.  Joints on
    both sides of 32 (the kernels' sign bit rows), the slots in every order."""
    rng = np.random.default_rng(sum(joints))
    a, b, c = joints
    V, J = 96, 41
    pal = random_palette(rng, J)
    for j, angle in ((a, 0.0), (b, 1.745), (c, -1.745)):
        pal[j, :3, :3] = tf.rotvec([0.0, 0.0, angle])[:3, :3]
    P = rng.normal(size=(V, 3)) * 3
    idx = np.empty((V, K), np.uint16)
    w = np.empty((V, K), dtype)
    for v in range(V):
        order = rng.permutation(K)
        idx[v, order] = [a, b, c, *rng.integers(J, size=K - 3)]
        w[v, order] = [0.25, 0.375, 0.375] + [0.0] * (K - 3)
    got = sk.dqs(P.astype(dtype), idx, w, pal)
    assert_skin_close(got, ref.dqs(P, idx, w, pal), P, pal, TOL[dtype])
    # the other pivot gives another result: a tie rule that picks it fails above
    other = w.astype(np.float64)
    other[idx == max(b, c)] += 1e-9
    assert np.abs(ref.dqs(P, idx, other, pal) - ref.dqs(P, idx, w, pal)).max() > 0.1


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("scale", [0.3, 0.0])  # 0: a rigid palette (normals by the matrices)
def test_rigid_matches_reference(path, dtype, index_dtype, scale, unit_rows, random_palette,
                                 assert_skin_close):
    rng = np.random.default_rng([7, INDEX_DTYPES.index(index_dtype)])
    V, J = 149, 9
    P = rng.normal(size=(V, 3)) * 4
    N = unit_rows(rng, V)
    idx = rng.integers(0, J, V).astype(index_dtype)
    if np.issubdtype(index_dtype, np.signedinteger):
        idx[::7] = -1  # not skinned: copied
    pal = random_palette(rng, J, scale=scale)
    p, n = sk.rigid(P.astype(dtype), idx, pal, normals=N.astype(dtype))
    # positions only: the same bits
    assert np.array_equal(sk.rigid(P.astype(dtype), idx, pal), p)
    rp, rn = ref.rigid(P, idx, pal, normals=N)
    assert_skin_close(p, rp, P, pal, TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[dtype])
    if np.issubdtype(index_dtype, np.signedinteger):
        assert np.array_equal(p[::7], P[::7].astype(dtype))
        assert np.array_equal(n[::7], N[::7].astype(dtype))
    # (V, 1) indices and a strided view give the same bits
    inter = np.zeros((V, 8), dtype)
    inter[:, 2:5] = P
    assert np.array_equal(sk.rigid(inter[:, 2:5], idx[:, None], pal), p)


def test_paths_agree(path, unit_rows, influences, random_palette):
    """Each path is within rounding of the scalar one (they may differ in the last bits)."""
    rng = np.random.default_rng(11)
    V, J = 1001, 40
    P = rng.normal(size=(V, 3)).astype(np.float32)
    N = unit_rows(rng, V).astype(np.float32)
    idx, w = influences(rng, V, J, 4, np.uint16, np.float32, zero_rows=[3, V - 2])
    pal = random_palette(rng, J)
    j = np.ascontiguousarray(idx[:, 0]).astype(np.int32)
    got = [sk.lbs(P, idx, w, pal, normals=N), sk.dqs(P, idx, w, pal, normals=N),
           sk.rigid(P, j, pal, normals=N)]
    previous = _core.set_simd_path("scalar")
    try:
        want = [sk.lbs(P, idx, w, pal, normals=N), sk.dqs(P, idx, w, pal, normals=N),
                sk.rigid(P, j, pal, normals=N)]
    finally:
        _core.set_simd_path(previous)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g[0], h[0], atol=2e-5)
        np.testing.assert_allclose(g[1], h[1], atol=2e-6)


# ---------------------------------------------------------------------------------------------
# the same bits whatever the threads, the range, the layout
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method, K", [("lbs", 4), ("lbs", 8), ("dqs", 4), ("dqs", 8),
                                       ("rigid", 1)])
def test_threads_and_ranges_do_not_change_bits(path, dtype, method, K, unit_rows, influences,
                                               random_palette):
    rng = np.random.default_rng(3)
    V, J = 4133, 30
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, K, np.uint16, dtype, zero_rows=[3, V - 2])
    pal = random_palette(rng, J)
    if method == "rigid":
        run = lambda s, t: sk.rigid(P[s:], idx[s:, 0], pal, normals=N[s:], threads=t)
    else:
        fn = getattr(sk, method)
        run = lambda s, t: fn(P[s:], idx[s:], w[s:], pal, normals=N[s:], threads=t)
    p1, n1 = run(0, 1)
    for t in (2, 3, 4, 7):
        pt, nt = run(0, t)
        assert np.array_equal(pt, p1) and np.array_equal(nt, n1), t
    # a vertex's bits do not depend on where its block starts (partial blocks, alignment heads)
    for s in (1, 5, 13, 16, 17, 63, 64, 100):
        ps, ns = run(s, 1)
        assert np.array_equal(ps, p1[s:]) and np.array_equal(ns, n1[s:]), s


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("with_normals", [False, True])
def test_palette_size_does_not_change_bits(path, index_dtype, with_normals, unit_rows,
                                           influences, random_palette):
    """float32 LBS with J <= 32 looks the joints up in a table (on AVX-512) rather than reading
    each vertex's rows: the same joints in palettes of 16 to 64 give the same bits, whatever
    the threads and wherever a vertex's block starts."""
    rng = np.random.default_rng([9, INDEX_DTYPES.index(index_dtype)])
    V, used = _core.build_info()["lbs_table_min"] + 499, 16  # calls big enough for the table
    P = rng.normal(size=(V, 3)).astype(np.float32)
    N = unit_rows(rng, V).astype(np.float32) if with_normals else None
    # garbage indices under zero weights (outside every palette), rows of zero weights (copied)
    idx, w = influences(rng, V, used, 4, index_dtype, np.float32, zero_rows=[3, 500, V - 2])
    pal = random_palette(rng, 64)
    run = lambda J, s=0, t=1: sk.lbs(P[s:], idx[s:], w[s:], pal[:J],
                                     normals=None if N is None else N[s:], threads=t)
    want = run(64)  # the rows
    want_p = want[0] if with_normals else want
    rp = ref.lbs(P.astype(np.float64), idx, w, pal)
    np.testing.assert_allclose(want_p, rp, atol=1e-5)
    for J in (16, 17, 31, 32, 33):
        for s, t in ((0, 1), (0, 3), (1, 1), (17, 2), (40, 1)):
            got = run(J, s, t)
            if with_normals:
                assert np.array_equal(got[0], want[0][s:]), (J, s, t)
                assert np.array_equal(got[1], want[1][s:]), (J, s, t)
            else:
                assert np.array_equal(got, want[s:]), (J, s, t)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs"])
@pytest.mark.parametrize("K", [1, 2, 3])
def test_fewer_than_four_influences_match_them_padded(path, dtype, method, K, unit_rows,
                                                       influences, random_palette,
                                                       assert_skin_close):
    """K = 1-3 (what `nearest`, `proximity` and `projection` bind) take the K = 4 loops on
    AVX-512, through copies padded with zero weights on joint 0, and loops compiled for their K
    on AVX2 (float weights): the bits of the same influences padded by the caller, for every
    index type and layout, whatever the threads and wherever a vertex's chunk starts (several
    chunks of copies, a partial one at the end)."""
    rng = np.random.default_rng([K, FLOATS.index(dtype)])
    V, J = 2600, 40
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, K, np.uint16, dtype, zero_rows=[3, 1500, V - 2])
    pal = random_palette(rng, J)
    fn = getattr(sk, method)
    idx4 = np.zeros((V, 4), np.int32)
    idx4[:, :K] = np.where(w > 0, idx, 0)  # garbage under zero weights: joint 0, as padded
    w4 = np.zeros((V, 4), dtype)
    w4[:, :K] = w
    want_p, want_n = fn(P, idx4, w4, pal, normals=N)
    rp, rn = getattr(ref, method)(P.astype(np.float64), idx, w, pal, normals=N)
    assert_skin_close(want_p, rp, P, pal, TOL[dtype])
    wide_w = np.zeros((V, 6), dtype)
    wide_w[:, 1:1 + K] = w
    for index_dtype in INDEX_DTYPES:
        iv = np.where(w > 0, idx, np.iinfo(index_dtype).max if index_dtype != np.int64 else -5)
        iv = iv.astype(index_dtype)
        for name, (ii, ww) in {"contiguous": (iv, w),
                               "Fortran-order indices": (np.asfortranarray(iv), w),
                               "weights in a wider buffer": (iv, wide_w[:, 1:1 + K])}.items():
            for s, t in ((0, 1), (0, 3), (5, 1), (1100, 2)):
                p, n = fn(P[s:], ii[s:], ww[s:], pal, normals=N[s:], threads=t)
                assert np.array_equal(p, want_p[s:]) and np.array_equal(n, want_n[s:]), \
                    (index_dtype, name, s, t)


@pytest.mark.parametrize("bits", [8, 16])
def test_fewer_than_four_unorm_weights_match_them_padded(path, bits, influences,
                                                          random_palette):
    """unorm weights with K < 4 are converted into the padded copies as the loops for any K
    convert them (w / 255 or w / 65535 in the kernel's type)."""
    rng = np.random.default_rng(bits)
    V, J, K = 1500, 12, 2
    P = rng.normal(size=(V, 3)).astype(np.float32)
    idx, w = influences(rng, V, J, K, np.uint8, np.float64, zero_slots=False)
    top = 2 ** bits - 1
    q = np.round(w * top).astype(np.uint8 if bits == 8 else np.uint16)
    pal = random_palette(rng, J)
    got = sk.lbs(P, idx, q, pal)
    w4 = np.zeros((V, 4), np.float32)
    w4[:, :K] = q.astype(np.float32) / np.float32(top)
    idx4 = np.zeros((V, 4), np.uint8)
    idx4[:, :K] = idx
    assert np.array_equal(got, sk.lbs(P, idx4, w4, pal))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs", "cor"])
@pytest.mark.parametrize("K", [4, 8])
def test_wide_joints_give_the_bits_of_int32(path, dtype, method, K, unit_rows, influences,
                                            random_palette):
    """int64 joints (NumPy's default integer) and uint32 ones are narrowed to int32 a chunk of
    vertices at a time, the first chunk up to the outputs' next 64-byte line, or (contiguous
    int64 rows, float32 LBS on AVX2) read by int32's loops with offsets of their own: the bits of
    int32 joints whatever the layout, the outputs' alignment and the threads.  The zero-weight
    slots hold garbage that only a 64-bit range check reads right (2**32 + 1 is joint 1 in 32
    bits)."""
    rng = np.random.default_rng(31)
    V, J = 1500, 40
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    C = rng.normal(size=(V, 3)).astype(dtype)
    idx, w = influences(rng, V, J, K, np.int32, dtype, zero_rows=[3, 700])
    pal = random_palette(rng, J)
    fn = getattr(sk, method)
    kw = {"centers": C} if method == "cor" else {}
    want_p, want_n = fn(P, idx, w, pal, normals=N, **kw)
    zero = w == 0
    for index_dtype, garbage in ((np.int64, [2**32 + 1, -1, 2**62]),
                                 (np.uint32, [2**32 - 1, 2**31 + 1])):
        wide = idx.astype(index_dtype)
        wide[zero] = rng.choice(np.array(garbage, index_dtype), int(zero.sum()))
        sliced = np.zeros((V, K + 3), index_dtype)  # the rows of a slice (argpartition's)
        sliced[:, 1:K + 1] = wide
        for iv in (wide, np.asfortranarray(wide), sliced[:, 1:K + 1], sk.Influences(wide, w, J)):
            args = (iv, pal) if isinstance(iv, sk.Influences) else (iv, w, pal)
            for threads, skip in ((1, 0), (2, 1), (3, 5)):
                bp = np.zeros((V + skip, 3), dtype)  # outputs `skip` vertices past a line
                bn = np.zeros((V + skip, 3), dtype)
                p, n = fn(P, *args, normals=N, out=bp[skip:], out_normals=bn[skip:],
                          threads=threads, **kw)
                assert np.array_equal(p, want_p) and np.array_equal(n, want_n), \
                    (index_dtype, type(iv), threads, skip)
        # positions only: contiguous int64 rows take int32's loops directly (AVX2 float32 LBS)
        assert np.array_equal(fn(P, wide, w, pal, **kw), fn(P, idx, w, pal, **kw)), index_dtype


@pytest.mark.parametrize("dtype", FLOATS)
def test_rigid_joints_of_every_type_give_the_bits_of_uint16(path, dtype, unit_rows,
                                                            random_palette):
    """Rigid joints of the other types are narrowed to uint16 a chunk of vertices at a time (the
    first up to the outputs' next 64-byte line), a negative one to a copied vertex: the bits of
    uint16 joints, with copies where the index is negative, whatever the layout and threads."""
    rng = np.random.default_rng(32)
    V, J = 9000, 40
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    pal = random_palette(rng, J)
    j = rng.integers(0, J, V)
    copied = rng.random(V) < 0.1
    want_p, want_n = sk.rigid(P, j.astype(np.uint16), pal, normals=N)
    for index_dtype in (np.uint8, np.uint32, np.int32, np.int64):
        jt = j.astype(index_dtype)
        if np.issubdtype(index_dtype, np.signedinteger):
            jt[copied] = rng.choice(np.array([-1, np.iinfo(index_dtype).min], index_dtype),
                                    int(copied.sum()))
        wide = np.zeros((V, 3), index_dtype)
        wide[:, 1] = jt
        for iv in (jt, wide[:, 1], wide[:, 1:2]):
            for threads, skip in ((1, 0), (2, 1), (3, 5)):
                bp = np.zeros((V + skip, 3), dtype)  # outputs `skip` vertices past a line
                bn = np.zeros((V + skip, 3), dtype)
                p, n = sk.rigid(P, iv, pal, normals=N, out=bp[skip:], out_normals=bn[skip:],
                                threads=threads)
                want = np.where(copied[:, None], P, want_p) if jt.min() < 0 else want_p
                want_nn = np.where(copied[:, None], N, want_n) if jt.min() < 0 else want_n
                assert np.array_equal(p, want) and np.array_equal(n, want_nn), \
                    (index_dtype, iv.strides, threads, skip)


def _layouts(A):
    V, n = A.shape
    inter = np.zeros((V, 8), A.dtype)
    inter[:, 1:1 + n] = A
    yield "contiguous", A.copy()
    yield "interleaved", inter[:, 1:1 + n]
    yield "fortran", np.asfortranarray(A)
    yield "reversed", np.ascontiguousarray(A[::-1])[::-1]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_influence_layouts_do_not_change_bits(path, dtype, method, unit_rows, influences,
                                              random_palette):
    """Packed positions and outputs (the block loops, not the stack copies of strided layouts),
    influences in other layouts: contiguous (V, 4) float weights take loops of their own."""
    rng = np.random.default_rng(22)
    V, J = 203, 12
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, 4, np.uint16, dtype, zero_rows=[3, 100, V - 2])
    pal = random_palette(rng, J)
    fn = getattr(sk, method)
    want_p, want_n = fn(P, idx, w, pal, normals=N)
    wide_w = np.zeros((V, 8), dtype)
    wide_w[:, 2:6] = w
    wide_i = np.zeros((V, 8), idx.dtype)
    wide_i[:, 2:6] = idx
    layouts = {
        "weights in a wider buffer": (idx, wide_w[:, 2:6]),
        "Fortran-order weights": (idx, np.asfortranarray(w)),
        "slots reversed": (idx[:, ::-1], w[:, ::-1]),
        "both in wider buffers": (wide_i[:, 2:6], wide_w[:, 2:6]),
    }
    for name, (iv, wv) in layouts.items():
        if name == "slots reversed" and method == "dqs":
            continue  # the DQS pivot is the first slot of the largest weight: order matters
        p, n = fn(P, iv, wv, pal, normals=N)
        if name == "slots reversed":  # LBS sums the slots in another order: not the same bits
            np.testing.assert_allclose(p, want_p, atol=TOL[dtype] * 100)
            continue
        assert np.array_equal(p, want_p) and np.array_equal(n, want_n), name


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_layouts_do_not_change_bits(path, dtype, method, unit_rows, influences, random_palette):
    rng = np.random.default_rng(21)
    V, J = 203, 12
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, 4, np.uint16, dtype, zero_rows=[3, V - 2])
    pal = random_palette(rng, J)
    fn = getattr(sk, method)
    want_p, want_n = fn(P, idx, w, pal, normals=N)
    for (lp, pv), (_, nv), (_, iv), (_, wv) in zip(_layouts(P), _layouts(N), _layouts(idx),
                                                   _layouts(w)):
        before = (pv.copy(), nv.copy())
        buf = np.full((V, 9), -7.0, dtype)
        out, out_n = buf[:, 1:4], buf[:, 5:8]
        r = fn(pv, iv, wv, pal, normals=nv, out=out, out_normals=out_n)
        assert r[0] is out and r[1] is out_n
        assert np.array_equal(out, want_p), lp
        assert np.array_equal(out_n, want_n), lp
        assert (buf[:, [0, 4, 8]] == -7.0).all()  # nothing written outside the views
        assert np.array_equal(pv, before[0]) and np.array_equal(nv, before[1])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs"])
@pytest.mark.parametrize("with_normals", [False, True])
def test_in_place(path, dtype, method, with_normals, influences, random_palette):
    rng = np.random.default_rng(8)
    V = 77  # blocks and pairs of blocks, a tail, and copied rows in both
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = rng.normal(size=(V, 3)).astype(dtype) if with_normals else None
    idx, w = influences(rng, V, 5, 4, np.uint16, dtype, zero_rows=[3, 13, V - 2])
    pal = random_palette(rng, 5).astype(dtype)
    fn = getattr(sk, method)
    want = fn(P, idx, w, pal, normals=N)
    got = fn(P, idx, w, pal, normals=N, out=P)
    if with_normals:
        assert got[0] is P
        assert np.array_equal(got[1], want[1])
        want = want[0]
    else:
        assert got is P
    assert np.array_equal(P, want)


# weights whose sum is near the copy threshold (1e-6): rows of tiny weights whose sum is above it
# (skinned) or not (copied as they are), each with some weight above 1e-6 or none
TINY_ROWS = [[0.4e-6] * 4, [0.2e-6] * 4, [0.9e-6, 0, 0, 0], [0.5e-6, 0.5e-6, 0.5e-6, 0],
             [0, 0, 0, 2e-6], [0.3e-6, 0, 0.3e-6, 0.3e-6], [0, 1.2e-6, 0, 0], [0.2e-6, 0, 0, 0.7e-6]]


def _tiny_weights(idx, w, starts):
    """Write TINY_ROWS (zero weights in slots after the fourth) from each row in ``starts``,
    under joints 1, 2, ... (modulo 8: valid in the callers' palettes, all of 8 joints or more)."""
    K = w.shape[1]
    for s in starts:
        w[s:s + len(TINY_ROWS)] = 0
        w[s:s + len(TINY_ROWS), :4] = TINY_ROWS
        idx[s:s + len(TINY_ROWS)] = np.arange(1, K + 1) % 8


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs"])
@pytest.mark.parametrize("K", [4, 8])
def test_weights_near_the_copy_threshold(path, dtype, method, K, unit_rows, influences,
                                         random_palette, assert_skin_close):
    """Sums above 1e-6 skinned (even with no single weight above it), others copied, in blocks
    of every position: the same decisions as the reference's."""
    rng = np.random.default_rng(11)
    V, J = 203, 8
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, K, np.uint16, dtype)
    _tiny_weights(idx, w, [0, 13, 40, 64, 99, V - 8])
    pal = random_palette(rng, J)
    got_p, got_n = getattr(sk, method)(P, idx, w, pal, normals=N)
    want_p, want_n = getattr(ref, method)(P, idx, w, pal, normals=N)
    copied = w.astype(np.float64).sum(1) <= 1e-6
    assert copied.sum() == 6 * 4  # four of the eight tiny rows, at six places
    assert np.array_equal(got_p[copied], P[copied]) and np.array_equal(got_n[copied], N[copied])
    assert not np.isclose(got_p[~copied], P[~copied]).all(1).any()
    assert_skin_close(got_p, want_p, P, pal, TOL[dtype])
    np.testing.assert_allclose(got_n, want_n, atol=10 * TOL[dtype])


# float64 DQS never streams; LBS has block loops of its own for rigid palettes, hence scale, and
# for small ones (J <= 32: lookups in a table on AVX-512), hence J
@pytest.mark.parametrize("method, dtype, scale, J", [
    ("lbs", np.float32, 0.0, 64), ("lbs", np.float64, 0.0, 64), ("dqs", np.float32, 0.0, 64),
    ("lbs", np.float32, 0.3, 64), ("lbs", np.float64, 0.3, 64), ("lbs", np.float32, 0.0, 24)])
def test_large_outputs_misaligned_and_aligned(path, dtype, method, scale, J, unit_rows,
                                              influences, random_palette, assert_skin_close):
    """Above the non-temporal store threshold, with outputs at every alignment."""
    rng = np.random.default_rng(5)
    V = _core.build_info()[f"stream_min_{np.dtype(dtype).name}"] + 13
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    # vertices copied through (weights summing to 0) in the head, a block and the tail, and
    # weights near the copy threshold there and in the sampled tail
    idx, w = influences(rng, V, J, 4, np.uint16, dtype, zero_rows=[3, 9, V - 2])
    _tiny_weights(idx, w, [16, 24, 40, V - 40])
    pal = random_palette(rng, J, scale=scale)
    infl = sk.Influences(idx, w, J)
    fn = getattr(sk, method)
    want_p, want_n = fn(P, infl, pal, normals=N)
    # the reference on both ends and a sample between (vertices are independent; the whole mesh
    # took the NumPy DQS reference 15 s)
    sel = np.unique(np.r_[0:600, V - 600:V, rng.integers(0, V, 3000)])
    rp, rn = getattr(ref, method)(P[sel], idx[sel], w[sel], pal, normals=N[sel])
    assert_skin_close(want_p[sel], rp, P[sel], pal, TOL[dtype])
    np.testing.assert_allclose(want_n[sel], rn, atol=10 * TOL[dtype])
    # the outputs at chosen offsets (in elements) from a cache line: the normals' at the same
    # offset as the positions' (streamed alike) or at another (streamed through permutes)
    per_line = 64 // np.dtype(dtype).itemsize
    raw_p, raw_n = np.empty(3 * V + 2 * per_line, dtype), np.empty(3 * V + 2 * per_line, dtype)
    # the first element of a on a boundary of `size` bytes
    first = lambda a, size: (-a.ctypes.data % size) // a.itemsize
    for sp, sn, threads in ((0, 0, 1), (3, 3, 2), (1, 2, 2), (5, 8, 1), (8, 1, 2), (4, 0, 2)):
        out = raw_p[first(raw_p, 64) + sp:][:3 * V].reshape(V, 3)
        out_n = raw_n[first(raw_n, 64) + sn:][:3 * V].reshape(V, 3)
        fn(P, infl, pal, normals=N, out=out, out_normals=out_n, threads=threads)
        assert np.array_equal(out, want_p) and np.array_equal(out_n, want_n), (sp, sn)
    # the normals' output at chosen distances (in elements) after the positions' within a 4 KB
    # page: LBS on AVX2 writes a block's normals before or after the next block's blends by
    # how close the two are (outputs_close in csrc/skin_simd.template.c), with the same bits
    page = 4096 // np.dtype(dtype).itemsize
    raw = np.empty(6 * V + 4 * page, dtype)
    start = first(raw, 4096)
    out = raw[start:][:3 * V].reshape(V, 3)
    for gap, threads in ((0, 1), (2, 2), (8, 1), (12, 2), (24, 1), (32, 2), (page - 2, 1),
                         (page // 2, 2)):
        at = start + (3 * V // page + 1) * page + gap
        out_n = raw[at:][:3 * V].reshape(V, 3)
        out[...] = out_n[...] = 0
        fn(P, infl, pal, normals=N, out=out, out_normals=out_n, threads=threads)
        assert np.array_equal(out, want_p) and np.array_equal(out_n, want_n), gap


def test_batch(path, influences, random_palette):
    rng = np.random.default_rng(6)
    V, J, F = 301, 10, 5
    P = rng.normal(size=(V, 3)).astype(np.float32)
    idx, w = influences(rng, V, J, 4, np.uint16, np.float32, zero_rows=[3, V - 2])
    pals = np.stack([random_palette(rng, J) for _ in range(F)])
    got = sk.lbs(P, idx, w, pals)
    for f in range(F):
        assert np.array_equal(got[f], sk.lbs(P, idx, w, pals[f]))


# ---------------------------------------------------------------------------------------------
# the validation pass of raw influences (its fast path and the exact one agree)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_validation_reports_the_first_bad_vertex(index_dtype, dtype, influences, random_palette):
    rng = np.random.default_rng(2)
    V, J, K = 5000, 20, 4
    P = rng.normal(size=(V, 3)).astype(dtype)
    idx, w = influences(rng, V, J, K, index_dtype, dtype, zero_rows=[3, V - 2])
    pal = random_palette(rng, J)
    sk.lbs(P, idx, w, pal)  # valid, garbage indices under zero weights included
    bad_index = J if index_dtype in (np.uint8, np.uint16, np.uint32) else -1
    for first, second in ((0, 4999), (1023, 1024), (2500, 4000), (4999, None)):
        for kind in ("index", "nan", "inf", "negative"):
            i2, w2 = idx.copy(), w.copy()
            for v in (first, second):
                if v is None:
                    continue
                k = v % K
                if kind == "index":
                    w2[v, k] = 0.5
                    i2[v, k] = bad_index
                else:
                    w2[v, k] = {"nan": np.nan, "inf": np.inf, "negative": -0.25}[kind]
            exc = IndexError if kind == "index" else ValueError
            for iv, wv in ((i2, w2), (np.asfortranarray(i2), np.asfortranarray(w2))):
                out = np.zeros_like(P)
                pattern = f"at vertex {first}$"
                with pytest.raises(exc, match=pattern):
                    sk.lbs(P, iv, wv, pal, out=out)
                assert not out.any()  # nothing written


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("bits", [8, 16])
def test_validation_of_unorm_weights_reports_the_first_bad_vertex(index_dtype, bits, influences,
                                                                  random_palette):
    """Raw unorm weights take the fast pass too (C order by rows, Fortran order by slot
    columns, 4096 pairs a chunk): a bad index under a non-zero weight on either side of a
    chunk's edge, or before another, is reported at the first vertex; under a zero weight it is
    never read."""
    rng = np.random.default_rng(6)
    V, J, K = 9000, 20, 4
    P = rng.normal(size=(V, 3)).astype(np.float32)
    idx, w = influences(rng, V, J, K, index_dtype, np.float64, zero_rows=[3, V - 2])
    q = np.round(w * (2**bits - 1)).astype(np.uint8 if bits == 8 else np.uint16)
    pal = random_palette(rng, J)
    sk.lbs(P, idx, q, pal)  # valid, garbage indices under zero weights included
    sk.lbs(P, np.asfortranarray(idx), np.asfortranarray(q), pal)
    bad_index = -1 if np.issubdtype(index_dtype, np.signedinteger) else J
    for first, second in ((0, V - 1), (1023, 1024), (4095, 4096), (5000, 8000), (V - 1, None)):
        i2, q2 = idx.copy(), q.copy()
        for v in (first, second):
            if v is not None:
                q2[v, v % K], i2[v, v % K] = 1, bad_index
        for iv, wv in ((i2, q2), (np.asfortranarray(i2), np.asfortranarray(q2))):
            out = np.zeros_like(P)
            with pytest.raises(IndexError, match=f"at vertex {first}$"):
                sk.lbs(P, iv, wv, pal, out=out)
            assert not out.any()  # nothing written


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_rigid_validation_reports_the_first_bad_vertex(path, index_dtype, random_palette):
    """Rigid indices are checked 4096 at a time in each type's own width (each path's loop),
    then re-read one by one where a chunk fails: a first bad index (J, or the type's largest
    value) on either side of a chunk's edge, in the last and short chunk, or before another;
    negative ones are copied vertices, not errors."""
    rng = np.random.default_rng(4)
    V, J = 10_001, 20
    P = rng.normal(size=(V, 3))
    pal = random_palette(rng, J)
    idx = rng.integers(0, J, V).astype(index_dtype)
    if np.issubdtype(index_dtype, np.signedinteger):
        idx[::7] = -1
    want = sk.rigid(P, idx.astype(np.int64), pal)
    assert np.array_equal(sk.rigid(P, idx, pal), want)
    for first, second in ((0, V - 1), (4095, 4096), (4096, None), (8191, 9000), (V - 1, None)):
        for value in (J, np.iinfo(index_dtype).max):
            i2 = idx.copy()
            i2[first] = value
            if second is not None:
                i2[second] = J
            out = np.zeros_like(P)
            with pytest.raises(IndexError, match=f"^indices: .* at vertex {first}$"):
                sk.rigid(P, i2, pal, out=out)
            assert not out.any()  # nothing written


@pytest.mark.parametrize("index_dtype", [np.uint8, np.uint16])
def test_rigid_indices_below_joints_past_their_type(path, index_dtype, random_palette):
    """A palette with more joints than the index type can name leaves no index out of range;
    one with exactly the type's largest value as J makes that value the only bad one."""
    rng = np.random.default_rng(5)
    top = int(np.iinfo(index_dtype).max)
    V = 5000
    P = rng.normal(size=(V, 3))
    idx = rng.integers(0, top + 1, V).astype(index_dtype)
    idx[[0, 4097, V - 1]] = top
    pal = random_palette(rng, top + 1)
    assert np.array_equal(sk.rigid(P, idx, pal), sk.rigid(P, idx.astype(np.int64), pal))
    with pytest.raises(IndexError, match="at vertex 0$"):
        sk.rigid(P, idx, pal[:top])
    assert np.array_equal(sk.rigid(P, np.minimum(idx, top - 1), pal[:top]),
                          sk.rigid(P, np.minimum(idx, top - 1).astype(np.int64), pal[:top]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_validation_of_large_influences_reports_the_first_bad_vertex(dtype, influences,
                                                                     random_palette):
    """Pairs beyond 8 MB take the pass's prefetching chunks of 256: a problem on either side of
    a chunk's edge, in the last chunks (read without prefetch), or after an earlier one."""
    rng = np.random.default_rng(3)
    V, J, K = 450_000, 20, 4  # 1.8M pairs of uint16 and float: 10.8 MB in float32
    P = np.zeros((V, 3), dtype)
    idx, w = influences(rng, V, J, K, np.uint16, dtype)
    pal = random_palette(rng, J)
    out = np.zeros_like(P)
    sk.lbs(P, idx, w, pal, out=out, threads=1)  # valid: garbage indices under zero weights
    for first, second in ((0, V - 1), (63, 64), (64, 200_000), (V // 2, None),
                          (V - 400, V - 1), (V - 1, None)):
        i2, w2 = idx.copy(), w.copy()
        for v, kind in ((first, "index"), (second, "nan")):
            if v is None:
                continue
            k = 3 if v == 63 else v % K
            if kind == "index":
                w2[v, k], i2[v, k] = 0.5, J
            else:
                w2[v, k] = np.nan
        out[:] = 0
        with pytest.raises(IndexError, match=f"at vertex {first}$"):
            sk.lbs(P, i2, w2, pal, out=out, threads=1)
        assert not out.any()  # nothing written
