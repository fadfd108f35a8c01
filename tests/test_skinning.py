"""The skinning kernels (rigid, LBS, DQS) against skinkit.reference, third-party poses
(three.js, Blender), invariants, the candy wrapper, the zero-copy contract, bad input and threads.
"""
import base64
import json
import pathlib
import threading
import time
import tracemalloc

import numpy as np
import pytest

import skinkit as sk
from skinkit import reference as ref
from skinkit import transforms as tf

INDEX_DTYPES = [np.uint8, np.uint16, np.uint32, np.int32, np.int64]
FLOATS = [np.float64, np.float32]
TOL = {np.float64: 1e-12, np.float32: 1e-6}
DATA = pathlib.Path(__file__).parent / "data" / "gltf"


# ---------------------------------------------------------------------------------------------
# against the reference
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("K", range(1, 9))
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_lbs_matches_reference(dtype, K, index_dtype, unit_rows, influences, random_palette,
                               assert_skin_close):
    rng = np.random.default_rng(K * 7 + INDEX_DTYPES.index(index_dtype))
    V, J = 157, 12
    P = rng.normal(size=(V, 3)) * 5
    N = unit_rows(rng, V)
    idx, w = influences(rng, V, J, K, index_dtype, dtype, zero_rows=[3])
    pal = random_palette(rng, J, scale=0.3)  # LBS takes any affine palette
    p, n = sk.lbs(P.astype(dtype), idx, w, pal, normals=N.astype(dtype))
    rp, rn = ref.lbs(P, idx, w, pal, normals=N)
    assert p.dtype == dtype and n.dtype == dtype
    assert_skin_close(p, rp, P, pal, TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[dtype])
    # the all-zero row is copied unchanged
    assert np.array_equal(p[3], P[3].astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("K", [1, 2, 4, 8])
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_dqs_matches_reference(dtype, K, index_dtype, unit_rows, influences, random_palette,
                               assert_skin_close):
    rng = np.random.default_rng(100 + K)
    V, J = 120, 9
    P = rng.normal(size=(V, 3)) * 5
    N = unit_rows(rng, V)
    idx, w = influences(rng, V, J, K, index_dtype, dtype, zero_rows=[3])
    pal = random_palette(rng, J)
    p, n = sk.dqs(P.astype(dtype), idx, w, pal, normals=N.astype(dtype))
    rp, rn = ref.dqs(P, idx, w, pal, normals=N)
    assert_skin_close(p, rp, P, pal, TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_dqs_scaled_palette_with_pivots(dtype, unit_rows, influences, random_palette,
                                        assert_skin_close):
    rng = np.random.default_rng(5)
    V, J, K = 200, 8, 4
    P = rng.normal(size=(V, 3)) * 5
    N = unit_rows(rng, V)
    T = np.concatenate([unit_rows(rng, V), np.where(rng.random((V, 1)) < 0.5, -1.0, 1.0)], 1)
    idx, w = influences(rng, V, J, K, np.uint16, dtype, zero_rows=[3])
    pal = random_palette(rng, J, scale=0.3)
    pal[2, :3, :3] = np.diag([-1.5, 1.0, 0.7]) @ pal[2, :3, :3]  # a mirrored joint too
    piv = rng.normal(size=(J, 3))
    p, n, t = sk.dqs(P.astype(dtype), idx, w, pal, pivots=piv.astype(dtype),
                     normals=N.astype(dtype), tangents=T.astype(dtype))
    rp, rn, rt = ref.dqs(P, idx, w, pal, pivots=piv, normals=N, tangents=T)
    assert_skin_close(p, rp, P, pal, 10 * TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=20 * TOL[dtype])
    np.testing.assert_allclose(t, rt, atol=20 * TOL[dtype])
    assert np.array_equal(t[:, 3], T[:, 3].astype(dtype))


@pytest.mark.parametrize("mirror", ["x", "rotated", "minus_identity", "float32_noise",
                                    "near_tie", "scaled_along_axis"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_dqs_and_cor_of_a_mirrored_joint_match_the_reference(dtype, mirror, unit_rows,
                                                             influences, random_palette,
                                                             assert_skin_close):
    """A mirrored joint whose singular values tie (a plain mirror) has many polar
    decompositions; the C kernels take transforms.polar's (the least rotation), so DQS and CoR
    match the reference there too, and a vertex bound to it alone is the mirror exactly."""
    rng = np.random.default_rng(23)
    V, J = 300, 5
    P = rng.normal(size=(V, 3)) * 3
    N = unit_rows(rng, V)
    idx, w = influences(rng, V, J, 3, np.uint16, dtype, zero_rows=[4])
    idx[:10], w[:10] = 2, np.array([1, 0, 0], dtype)  # bound to the mirrored joint alone
    pal = random_palette(rng, J)
    rot = tf.axis_angle([1.0, 2, 3], 0.8)[:3, :3]
    m = {"x": np.diag([-1.0, 1, 1]), "rotated": rot @ np.diag([-1.0, 1, 1]),
         "minus_identity": -np.eye(3),
         "float32_noise": (rot @ np.diag([-1.0, 1, 1])).astype(np.float32).astype(np.float64),
         "near_tie": np.diag([-1.0, 1 + 4e-6, 1]), "scaled_along_axis": np.diag([-2.0, 1, 1])}
    pal[2, :3, :3] = pal[2, :3, :3] @ m[mirror]
    piv = rng.normal(size=(J, 3))
    p, n = sk.dqs(P.astype(dtype), idx, w, pal, pivots=piv.astype(dtype),
                  normals=N.astype(dtype))
    rp, rn = ref.dqs(P, idx, w, pal, pivots=piv, normals=N)
    assert_skin_close(p, rp, P, pal, 10 * TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=20 * TOL[dtype])
    lone = (pal[2, :3, :3] @ P[:10].T).T + pal[2, :3, 3]
    np.testing.assert_allclose(rp[:10], lone, atol=1e-12)
    C = P + rng.normal(size=(V, 3)) * 0.1
    pc = sk.cor(P.astype(dtype), idx, w, pal, centers=C.astype(dtype), pivots=piv.astype(dtype))
    assert_skin_close(pc, ref.cor(P, idx, w, pal, C, pivots=piv), P, pal, 10 * TOL[dtype])


@pytest.mark.parametrize("scale, shear, scaled", [
    (1 + 0.9e-5, 0.0, False), (1 - 0.9e-5, 0.0, False),   # within 1e-5 of 1: rigid
    (1 + 1.2e-5, 0.0, True), (1 - 1.2e-5, 0.0, True),     # just past it: scale
    (1.0, 0.6e-5, False), (1.0, 2.5e-5, True),            # shear moves the singular values
    (3.0, 0.0, True)])
def test_dqs_scale_threshold(scale, shear, scaled, influences, random_palette, assert_skin_close):
    """DESIGN section 2: a joint is scaled when a singular value is more than 1e-5 off 1 (or the
    determinant is negative); below that DQS needs no pivots.  Checked on both sides of the
    threshold, against numpy's SVD, for a rotated joint."""
    rng = np.random.default_rng(17)
    V, J = 40, 3
    P = rng.normal(size=(V, 3))
    idx, w = influences(rng, V, J, 2, np.uint16, np.float64, zero_rows=[3])
    pal = random_palette(rng, J)
    A = np.diag([scale, 1.0, 1.0]) @ np.array([[1.0, shear, 0], [0, 1, 0], [0, 0, 1]])
    pal[1, :3, :3] = pal[1, :3, :3] @ A
    sigma = np.linalg.svd(pal[1, :3, :3], compute_uv=False)
    assert (np.abs(sigma - 1).max() > 1e-5) == scaled  # the case is what it claims to be
    if scaled:
        _raises(ValueError, "pivots", sk.dqs, P, idx, w, pal)
    else:
        assert_skin_close(sk.dqs(P, idx, w, pal), ref.dqs(P, idx, w, pal), P, pal, 1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint8])
def test_rigid_matches_reference(dtype, index_dtype, unit_rows, random_palette, assert_skin_close):
    rng = np.random.default_rng(9)
    V, J = 300, 20
    P = rng.normal(size=(V, 3))
    N = unit_rows(rng, V)
    lo = -1 if np.issubdtype(index_dtype, np.signedinteger) else 0
    j = rng.integers(lo, J, size=V).astype(index_dtype)
    pal = random_palette(rng, J, scale=0.3)
    p, n = sk.rigid(P.astype(dtype), j, pal, normals=N.astype(dtype))
    rp, rn = ref.rigid(P, j, pal, normals=N)
    assert_skin_close(p, rp, P, pal, TOL[dtype])
    np.testing.assert_allclose(n, rn, atol=10 * TOL[dtype])
    if lo < 0:
        assert np.array_equal(p[j < 0], P[j < 0].astype(dtype))
    p2 = sk.rigid(P.astype(dtype), j[:, None], pal)  # (V, 1) indices
    assert np.array_equal(p2, p)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("rule", ["joint", "blend"])
def test_normals_and_tangents(dtype, rule, unit_rows, influences, random_palette):
    rng = np.random.default_rng(11)
    V, J, K = 150, 6, 3
    P = rng.normal(size=(V, 3))
    N = unit_rows(rng, V)
    N[5] = 0.0  # a zero-length normal stays zero
    T = np.concatenate([unit_rows(rng, V), np.where(rng.random((V, 1)) < 0.5, -1.0, 1.0)], 1)
    idx, w = influences(rng, V, J, K, np.int32, dtype, zero_rows=[3])
    pal = random_palette(rng, J, scale=0.3)
    p, n, t = sk.lbs(P.astype(dtype), idx, w, pal, normals=N.astype(dtype),
                     tangents=T.astype(dtype), normal_rule=rule)
    rp, rn, rt = ref.lbs(P, idx, w, pal, normals=N, tangents=T, normal_rule=rule)
    np.testing.assert_allclose(n, rn, atol=20 * TOL[dtype])
    np.testing.assert_allclose(t, rt, atol=20 * TOL[dtype])
    assert np.array_equal(t[:, 3], T[:, 3].astype(dtype))
    assert np.all(n[5] == 0)
    if rule == "blend":
        # the blend rule is exactly perpendicular to the skinned tangent directions
        # cof(M) n . M t = det(M) n . t = 0: perpendicular to every skinned tangent direction
        M = np.einsum("vk,vkij->vij", w.astype(np.float64),
                      pal[np.where(w > 0, idx, 0).astype(np.int64)][..., :3, :3])
        perp = np.cross(N, T[:, :3])
        img = np.einsum("vij,vj->vi", M, perp)
        skinned = w.sum(1) > 1e-6
        skinned[5] = False  # the zero normal
        img = img[skinned] / np.linalg.norm(img[skinned], axis=1, keepdims=True)
        assert np.abs(np.einsum("vi,vi->v", n[skinned], img)).max() < 50 * TOL[dtype]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("weight_dtype", [np.uint8, np.uint16])
def test_unorm_weights(dtype, weight_dtype, influences, random_palette, assert_skin_close):
    rng = np.random.default_rng(3)
    V, J, K = 100, 5, 4
    P = rng.normal(size=(V, 3))
    idx, w = influences(rng, V, J, K, np.uint8, np.float64, zero_rows=[3])
    top = np.iinfo(weight_dtype).max
    wq = np.round(w * top).astype(weight_dtype)
    pal = random_palette(rng, J)
    for fn in (sk.lbs, sk.dqs):
        got = fn(P.astype(dtype), idx, wq, pal)
        want = getattr(ref, fn.__name__)(P, idx, wq, pal)
        assert_skin_close(got, want, P, pal, 4 * TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_batched_palettes_and_positions(dtype, unit_rows, influences, random_palette,
                                        assert_skin_close):
    rng = np.random.default_rng(21)
    V, J, K, F = 90, 7, 4, 5
    P = rng.normal(size=(V, 3))
    PF = rng.normal(size=(F, V, 3))
    N = unit_rows(rng, V)
    idx, w = influences(rng, V, J, K, np.uint16, dtype, zero_rows=[3])
    pal = random_palette(rng, J, frames=F)
    for fn in (sk.lbs, sk.dqs):
        name = fn.__name__
        # shared positions, batched palette
        p, n = fn(P.astype(dtype), idx, w, pal, normals=N.astype(dtype))
        assert p.shape == (F, V, 3) and n.shape == (F, V, 3)
        rp, rn = getattr(ref, name)(P, idx, w, pal, normals=N)
        assert_skin_close(p, rp, P, pal, TOL[dtype])
        # per-frame positions, batched palette
        p = fn(PF.astype(dtype), idx, w, pal)
        assert_skin_close(p, getattr(ref, name)(PF, idx, w, pal), PF, pal, TOL[dtype])
        # per-frame positions, one palette
        p = fn(PF.astype(dtype), idx, w, pal[0])
        assert p.shape == (F, V, 3)
        assert_skin_close(p, getattr(ref, name)(PF, idx, w, pal[0]), PF, pal[0], TOL[dtype])
        # each frame equals the unbatched call
        for f in range(F):
            assert np.array_equal(fn(PF[f].astype(dtype), idx, w, pal[f]), fn(
                PF.astype(dtype), idx, w, pal)[f])


def test_compact_palette_and_skin_dispatch(influences, random_palette):
    rng = np.random.default_rng(2)
    V, J, K = 60, 5, 3
    P = rng.normal(size=(V, 3))
    idx, w = influences(rng, V, J, K, np.int64, np.float64, zero_rows=[3])
    pal = random_palette(rng, J)
    assert np.array_equal(sk.lbs(P, idx, w, pal[:, :3]), sk.lbs(P, idx, w, pal))
    infl = sk.Influences(idx, w, J)
    assert np.array_equal(sk.skin(P, infl, pal, method="lbs"), sk.lbs(P, idx, w, pal))
    assert np.array_equal(sk.skin(P, idx, w, pal, method="dqs"), sk.dqs(P, infl, pal))
    best = np.take_along_axis(idx.astype(np.int64), np.argmax(w, 1)[:, None], 1)[:, 0]
    best[w.sum(1) == 0] = -1
    assert np.array_equal(sk.skin(P, infl, pal, method="rigid"), sk.rigid(P, best, pal))
    with pytest.raises(ValueError, match="method"):
        sk.skin(P, infl, pal, method="nope")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("method", ["lbs", "dqs", "rigid", "cor"])
def test_4x4_palette_read_in_c_matches_every_other_form(dtype, method, unit_rows, influences,
                                                        random_palette):
    """A C-contiguous (J, 4, 4) / (F, J, 4, 4) palette of the positions' dtype goes to C as it
    is (C reads its 3x4 parts); every other form is sliced and cast in Python first.  Same bits."""
    rng = np.random.default_rng(21)
    V, J, F = 203, 7, 3
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, 4, np.uint16, dtype, zero_rows=[5])
    pals = random_palette(rng, J, frames=F).astype(dtype)
    kw = {"normals": N}
    if method == "rigid":
        args = (np.ascontiguousarray(idx[:, 0]),)
    else:
        args = (sk.Influences(idx, w, J),)
    if method == "cor":
        faces = rng.integers(0, V, size=(300, 3))
        kw["centers"] = sk.centers_of_rotation(P, faces, idx, w)
    fn = getattr(sk, method)
    for pal in (pals[1], pals):
        want = fn(P, *args, pal, **kw)
        others = [np.ascontiguousarray(pal[..., :3, :]),  # 3x4
                  np.asfortranarray(pal),  # not C-contiguous
                  pal.tolist()]  # a list
        if dtype == np.float32:  # float64 holding float32 values: cast exactly
            others.append(pal.astype(np.float64))
        for other in others:
            got = fn(P, *args, other, **kw)
            assert all(np.array_equal(g, h) for g, h in zip(got, want))


@pytest.mark.parametrize("dtype", FLOATS)
def test_4x4_palette_last_row_checked_in_c(dtype, influences, random_palette):
    """The last-row rule of the Python path (within 1e-6 of [0, 0, 0, 1], NaN refused), with the
    frame and joint named, and no output written."""
    rng = np.random.default_rng(22)
    V, J, F = 50, 6, 3
    P = rng.normal(size=(V, 3)).astype(dtype)
    idx, w = influences(rng, V, J, 4, np.uint16, dtype)
    pals = random_palette(rng, J, frames=F).astype(dtype)
    near = pals.copy()
    near[1, 2, 3, 3] += 5e-7
    near[2, 4, 3, 0] -= 5e-7
    assert np.array_equal(sk.lbs(P, idx, w, near), sk.lbs(P, idx, w, pals))
    for value in (1e-5, np.nan, np.inf):
        bad = pals.copy()
        bad[1, 2, 3, 0] = value
        out = np.full((F, V, 3), 7, dtype)
        for method in ("lbs", "dqs", "rigid"):
            call_args = (idx[:, 0].copy(),) if method == "rigid" else (idx, w)
            with pytest.raises(ValueError, match=r"palette has a last row other than \[0, 0, 0, "
                                                 r"1\] \(frame 1, joint 2\)"):
                getattr(sk, method)(P, *call_args, bad, out=out)
            assert (out == 7).all()
        with pytest.raises(ValueError, match=r"last row .*\(joint 2\)"):
            sk.lbs(P, idx, w, bad[1])
    # the binding itself: a palette of neither 3 nor 4 rows
    from skinkit import _core
    with pytest.raises(ValueError, match="palette has shape axis 2 = 5, expected 3 or 4"):
        _core.skin(1, P, None, None, np.empty_like(P), None, None, idx, w,
                   np.zeros((1, J, 5, 4), dtype), None, J, 0, 1, False)


# ---------------------------------------------------------------------------------------------
# strides and layouts: read and written in place
# ---------------------------------------------------------------------------------------------

def layouts(P):
    """The same (V, 3) data in every supported layout."""
    V = P.shape[0]
    inter = np.zeros((V, 8), P.dtype)
    inter[:, 0:3] = P
    rev = np.ascontiguousarray(P[::-1])[::-1]
    fort = np.asfortranarray(P)
    yield "contiguous", P.copy()
    yield "interleaved", inter[:, 0:3]
    yield "fortran", fort
    yield "reversed", rev
    big = np.zeros((2 * V, 3), P.dtype)
    big[::2] = P
    yield "every-other-row", big[::2]


@pytest.mark.parametrize("dtype", FLOATS)
def test_strided_inputs_and_outputs(dtype, unit_rows, influences, random_palette):
    rng = np.random.default_rng(4)
    V, J, K = 101, 6, 4
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, K, np.uint16, dtype, zero_rows=[3])
    pal = random_palette(rng, J)
    want_p, want_n = sk.lbs(P, idx, w, pal, normals=N)
    want_dp = sk.dqs(P, idx, w, pal)
    idx_f, w_f = np.asfortranarray(idx), np.asfortranarray(w)
    for (lp, pv), (ln, nv) in zip(layouts(P), layouts(N)):
        before = pv.copy()
        buf = np.zeros((V, 8), dtype)
        out, out_n = buf[:, 0:3], buf[:, 3:6]
        r = sk.lbs(pv, idx_f, w_f, pal, normals=nv, out=out, out_normals=out_n, strict=True)
        assert r[0] is out and r[1] is out_n
        assert np.array_equal(out, want_p), lp
        assert np.array_equal(out_n, want_n), ln
        assert not buf[:, 6:].any()  # nothing written outside the views
        assert np.array_equal(pv, before)
        assert np.array_equal(sk.dqs(pv, idx, w, pal, strict=True), want_dp), lp


@pytest.mark.parametrize("fn", [sk.lbs, sk.dqs])
def test_in_place_positions(fn, influences, random_palette):
    rng = np.random.default_rng(8)
    P = rng.normal(size=(50, 3))
    idx, w = influences(rng, 50, 4, 2, np.int64, np.float64, zero_rows=[3])
    pal = random_palette(rng, 4)
    want = fn(P, idx, w, pal)
    r = fn(P, idx, w, pal, out=P)
    assert r is P and np.array_equal(P, want)


# ---------------------------------------------------------------------------------------------
# third-party references: three.js and Blender on real glTF models
# ---------------------------------------------------------------------------------------------

def _gltf_primitive(name):
    """POSITION, NORMAL, JOINTS_0 and WEIGHTS_0 of mesh 0 / primitive 0, read with pygltflib
    directly (independent of skinkit.io)."""
    pygltflib = pytest.importorskip("pygltflib")
    path = next(p for p in DATA.glob(name + ".gl*"))
    g = pygltflib.GLTF2().load(str(path))
    buffers = []
    for b in g.buffers:
        if b.uri is None:
            buffers.append(g.binary_blob())
        elif b.uri.startswith("data:"):
            buffers.append(base64.b64decode(b.uri.split(",", 1)[1]))
        else:
            buffers.append((path.parent / b.uri).read_bytes())
    comps = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}
    types = {5121: np.uint8, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}

    def read(i):
        a = g.accessors[i]
        view = g.bufferViews[a.bufferView]
        blob = buffers[view.buffer]
        dt = np.dtype(types[a.componentType])
        n = comps[a.type]
        start = (view.byteOffset or 0) + (a.byteOffset or 0)
        stride = view.byteStride or dt.itemsize * n
        raw = np.frombuffer(blob, np.uint8, count=stride * (a.count - 1) + dt.itemsize * n,
                            offset=start)
        rows = np.lib.stride_tricks.as_strided(raw, (a.count, n * dt.itemsize), (stride, 1))
        return rows.copy().view(dt)

    prim = g.meshes[0].primitives[0]
    attrs = prim.attributes
    out = {"positions": read(attrs.POSITION), "joints": read(attrs.JOINTS_0),
           "weights": read(attrs.WEIGHTS_0)}
    if attrs.NORMAL is not None:
        out["normals"] = read(attrs.NORMAL)
    return out


def _refs(name):
    d = DATA / "refs" / name
    meta = json.loads((d / "meta.json").read_text())
    load = {f.stem: np.load(f) for f in d.glob("*.npy")}
    return meta, load


MODELS = ["SimpleSkin", "RiggedSimple", "CesiumMan"]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_lbs_and_dqs_match_three_js_and_blender(model, dtype):
    prim = _gltf_primitive(model)
    meta, r = _refs(model)
    P = prim["positions"].astype(dtype)
    w = prim["weights"]
    w = (w / 255.0 if w.dtype == np.uint8 else w / 65535.0 if w.dtype == np.uint16 else w)
    w = w.astype(dtype)
    infl = sk.Influences(prim["joints"], w, r["joint_skin_three"].shape[1])
    diag = np.linalg.norm(np.ptp(P.astype(np.float64), axis=0))
    palettes = r["joint_skin_three"]  # (T, J, 4, 4): world global @ inverse bind
    lbs_all = sk.lbs(P, infl, palettes)  # batched over the five times at once
    for t in range(len(meta["times_s"])):
        p = sk.lbs(P, infl, palettes[t])
        assert np.array_equal(p, lbs_all[t])
        err = np.abs(p - r["p0_lbs_three"][t]).max() / diag
        assert err < 2e-6, (model, t, err)
        if t < 4:  # index 4 is off-key, where Blender's nlerp differs from slerp
            d = sk.dqs(P, infl, palettes[t])
            err = np.abs(d - r["p0_dqs_blender"][t]).max() / diag
            assert err < 2e-6, (model, t, err)
        if "normals" in prim and "p0_lbs_three_normals" in r:
            _, n = sk.lbs(P, infl, palettes[t], normals=prim["normals"].astype(dtype))
            err = np.abs(n - r["p0_lbs_three_normals"][t]).max()
            assert err < 1e-5, (model, t, err)
    # DQS is a real change on these models, not a copy of LBS
    assert np.abs(sk.dqs(P, infl, palettes) - lbs_all).max() / diag > 1e-3


# ---------------------------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_identity_palette_returns_input(dtype, unit_rows, influences):
    rng = np.random.default_rng(1)
    V, J = 80, 6
    P = rng.normal(size=(V, 3)).astype(dtype)
    N = unit_rows(rng, V).astype(dtype)
    idx, w = influences(rng, V, J, 4, np.uint8, dtype, zero_rows=[3])
    eye = np.broadcast_to(np.eye(4), (J, 4, 4))
    for fn in (sk.lbs, sk.dqs):
        p, n = fn(P, idx, w, eye, normals=N)
        np.testing.assert_allclose(p, P, atol=4 * TOL[dtype])
        np.testing.assert_allclose(n, N, atol=4 * TOL[dtype])
    p = sk.rigid(P, idx[:, 0].astype(np.int64), eye)
    np.testing.assert_allclose(p, P, atol=TOL[dtype])


def test_one_influence_lbs_dqs_rigid_agree(random_palette):
    rng = np.random.default_rng(12)
    V, J = 100, 8
    P = rng.normal(size=(V, 3))
    j = rng.integers(0, J, size=(V, 1))
    w = np.ones((V, 1))
    pal = random_palette(rng, J)
    a, b, c = sk.lbs(P, j, w, pal), sk.dqs(P, j, w, pal), sk.rigid(P, j[:, 0], pal)
    np.testing.assert_allclose(a, c, atol=1e-12)
    np.testing.assert_allclose(b, c, atol=1e-12)


def test_column_permutation_changes_nothing_ties_included(random_palette):
    rng = np.random.default_rng(13)
    V, J, K = 200, 10, 4
    P = rng.normal(size=(V, 3))
    idx = np.stack([rng.permutation(J)[:K] for _ in range(V)])
    w = np.full((V, K), 0.25)  # every row a four-way tie: the pivot rule decides
    w[::3] = [0.4, 0.4, 0.1, 0.1]
    pal = random_palette(rng, J, spread=3.0)
    base_l, base_d = sk.lbs(P, idx, w, pal), sk.dqs(P, idx, w, pal)
    for _ in range(5):
        perm = rng.permutation(K)
        np.testing.assert_allclose(sk.lbs(P, idx[:, perm], w[:, perm], pal), base_l, atol=1e-12)
        np.testing.assert_allclose(sk.dqs(P, idx[:, perm], w[:, perm], pal), base_d, atol=1e-12)


@pytest.mark.parametrize("fn", ["lbs", "dqs"])
def test_rigid_motion_of_palette_moves_result_rigidly(fn, influences, random_palette):
    rng = np.random.default_rng(14)
    V, J = 120, 7
    P = rng.normal(size=(V, 3))
    # no zero weights: an unskinned vertex would not move
    idx, w = influences(rng, V, J, 3, np.int64, np.float64, zero_slots=False)
    pal = random_palette(rng, J)
    G = tf.rotvec([0.3, -1.2, 2.0])
    G[:3, 3] = [4.0, -2.0, 1.0]
    f = getattr(sk, fn)
    np.testing.assert_allclose(f(P, idx, w, G @ pal), ref._apply(G, f(P, idx, w, pal)), atol=1e-11)


def test_dqs_covariant_under_change_of_bind_frame_with_scaled_joints(unit_rows, influences,
                                                                     random_palette):
    rng = np.random.default_rng(15)
    V, J = 150, 6
    P = rng.normal(size=(V, 3)) * 3
    N = unit_rows(rng, V)
    idx, w = influences(rng, V, J, 3, np.int64, np.float64, zero_rows=[3])
    pal = random_palette(rng, J, scale=0.3)
    piv = rng.normal(size=(J, 3))
    M = tf.rotvec([1.0, 0.5, -0.7])
    M[:3, 3] = [10.0, -3.0, 2.0]
    Minv = np.linalg.inv(M)
    p, n = sk.dqs(P, idx, w, pal, pivots=piv, normals=N)
    p2, n2 = sk.dqs(ref._apply(M, P), idx, w, M @ pal @ Minv, pivots=ref._apply(M, piv),
                    normals=N @ M[:3, :3].T)
    np.testing.assert_allclose(p2, ref._apply(M, p), atol=1e-10)
    np.testing.assert_allclose(n2, n @ M[:3, :3].T, atol=1e-10)


def test_dqs_equals_lbs_for_identity_rotations_with_scale(influences):
    rng = np.random.default_rng(16)
    V, J = 100, 5
    P = rng.normal(size=(V, 3))
    idx, w = influences(rng, V, J, 3, np.int64, np.float64, zero_rows=[3])
    pal = np.tile(np.eye(4), (J, 1, 1))
    pal[:, [0, 1, 2], [0, 1, 2]] = rng.uniform(0.5, 2.0, size=(J, 3))
    pal[:, :3, 3] = rng.normal(size=(J, 3))
    piv = rng.normal(size=(J, 3))
    np.testing.assert_allclose(sk.dqs(P, idx, w, pal, pivots=piv), sk.lbs(P, idx, w, pal),
                               atol=1e-12)


# ---------------------------------------------------------------------------------------------
# the candy wrapper (seeds 001 and 004)
# ---------------------------------------------------------------------------------------------

def seed001_cylinder(radius=40.0, height=200.0, radial=12, height_segments=20):
    """The side of O3D's cylinder: rings of `radial` vertices every height / height_segments."""
    ys = np.linspace(0.0, height, height_segments + 1)
    a = 2 * np.pi * np.arange(radial) / radial
    P = np.array([[radius * np.cos(t), y, radius * np.sin(t)] for y in ys for t in a])
    return P, ys


def seed001_weights(P, spacing=20.0, n=11):
    """Seed 001's rule: bones floor(y / spacing) and the next, weights (1 - f, f), clamped."""
    area = np.clip(P[:, 1] / spacing, 0, n - 1)
    b0 = np.minimum(np.floor(area).astype(np.int64), n - 2)
    f = area - b0
    return np.stack([b0, b0 + 1], 1), np.stack([1 - f, f], 1)


def ring_radii(p, P, ys, y0, y1):
    rows = P[:, 1].round(9)
    radii = []
    for y in ys[(ys >= y0) & (ys <= y1)]:
        ring = p[rows == round(y, 9)]
        radii.append(np.linalg.norm(ring - ring.mean(0), axis=1).mean())
    return min(radii)


def test_candy_wrapper_lbs_collapses_dqs_keeps_volume():
    skel = sk.Skeleton.chain(11, 20.0)
    P, ys = seed001_cylinder()
    idx, w = seed001_weights(P)
    local = skel.local_bind.copy()
    local[5] = local[5] @ tf.axis_angle([0, 1, 0], 179.0, degrees=True)
    pal = skel.palette(local)
    rest = ring_radii(P, P, ys, 80.0, 100.0)
    assert rest == pytest.approx(40.0)
    lbs_r = ring_radii(sk.lbs(P, idx, w, pal), P, ys, 80.0, 100.0)
    dqs_r = ring_radii(sk.dqs(P, idx, w, pal, pivots=skel), P, ys, 80.0, 100.0)
    assert lbs_r < 0.10 * rest
    assert dqs_r > 0.95 * rest


# ---------------------------------------------------------------------------------------------
# zero copy
# ---------------------------------------------------------------------------------------------

def test_no_vertex_sized_allocation_at_one_million_vertices(unit_rows, random_palette):
    rng = np.random.default_rng(0)
    V, J, K = 1_000_000, 64, 4
    P = rng.normal(size=(V, 3)).astype(np.float32)
    N = unit_rows(rng, V).astype(np.float32)
    idx = rng.integers(0, J, size=(V, K)).astype(np.uint16)
    w = rng.random((V, K)).astype(np.float32)
    w /= w.sum(1, keepdims=True)
    infl = sk.Influences(idx, w, J)
    pal = random_palette(rng, J).astype(np.float32)
    out, out_n = np.empty_like(P), np.empty_like(N)
    copies = [a.copy() for a in (P, N, idx, w, pal)]
    input_bytes = P.nbytes + N.nbytes + idx.nbytes + w.nbytes
    for fn in (sk.lbs, sk.dqs):
        tracemalloc.start()
        try:
            fn(P, infl, pal, normals=N, out=out, out_normals=out_n, strict=True)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 0.01 * input_bytes, (fn.__name__, peak)
    for a, b in zip((P, N, idx, w, pal), copies):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------------------------------------
# bad input: the exception of DESIGN.md section 5, naming the argument; out untouched
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def case(influences, random_palette):
    rng = np.random.default_rng(31)
    V, J, K = 40, 5, 3
    P = rng.normal(size=(V, 3))
    idx, w = influences(rng, V, J, K, np.int32, np.float64, zero_rows=[3])
    return P, idx, w, random_palette(rng, J)


def _raises(exc, match, fn, P, idx, w, pal, **kw):
    out = np.full((P.shape[-2], 3), 7.0, P.dtype) if "out" not in kw else kw.pop("out")
    before = out.copy()
    snap = [np.array(a, copy=True) for a in (P, idx, w, pal) if isinstance(a, np.ndarray)]
    with pytest.raises(exc, match=match):
        fn(P, idx, w, pal, out=out, **kw)
    assert np.array_equal(out, before, equal_nan=True)
    after = [a for a in (P, idx, w, pal) if isinstance(a, np.ndarray)]
    for a, b in zip(after, snap):
        assert np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("fn", [sk.lbs, sk.dqs])
def test_bad_input(fn, case):
    P, idx, w, pal = case
    _raises(TypeError, "positions", fn, P.astype(np.float16), idx, w, pal,
            out=np.zeros((40, 3), np.float16))
    _raises(TypeError, "positions", fn, P.tolist(), idx, w, pal, out=np.zeros((40, 3)))
    _raises(TypeError, "positions", fn, P.astype(P.dtype.newbyteorder()), idx, w, pal)
    _raises(TypeError, "weights", fn, P, idx, w.astype(np.float32), pal)
    _raises(TypeError, "indices", fn, P, idx.astype(np.int16), w, pal)
    _raises(TypeError, "indices", fn, P, idx.astype(np.float64), w, pal)
    _raises(TypeError, "out", fn, P, idx, w, pal, out=np.zeros((40, 3), np.float32))
    _raises(ValueError, "positions", fn, P[:, :2].copy(), idx, w, pal)
    _raises(ValueError, "weights", fn, P, idx, w[:-1], pal)
    _raises(ValueError, "out", fn, P, idx, w, pal, out=np.zeros((39, 3)))
    ro = np.zeros((40, 3))
    ro.flags.writeable = False
    _raises(ValueError, "read-only", fn, P, idx, w, pal, out=ro)
    buf = np.zeros(40 * 3 * 8 + 1, np.uint8)
    mis = buf[1:].view(np.float64).reshape(40, 3)
    mis[:] = P
    _raises(ValueError, "aligned", fn, mis, idx, w, pal)
    _raises(ValueError, "out", fn, P, idx, w, pal, out=P[::-1])
    big = np.zeros((41, 3))
    big[:40] = P
    _raises(ValueError, "overlap", fn, big[:40], idx, w, pal, out=big[1:])
    bad = idx.copy()
    bad[7, 1] = 5
    w2 = w.copy()
    w2[7, 1] = 0.2
    _raises(IndexError, "vertex 7", fn, P, bad, w2, pal)
    neg = idx.copy()
    neg[9, 0] = -1
    _raises(IndexError, "vertex 9", fn, P, neg, w, pal)
    nanw = w.copy()
    nanw[4, 0] = np.nan
    _raises(ValueError, "weights", fn, P, idx, nanw, pal)
    negw = w.copy()
    negw[6, 0] = -0.1
    _raises(ValueError, "weights", fn, P, idx, negw, pal)
    nanp = pal.copy()
    nanp[2, 0, 0] = np.nan
    _raises(ValueError, "palette", fn, P, idx, w, nanp)
    lastrow = pal.copy()
    lastrow[1, 3, 0] = 0.5
    _raises(ValueError, "palette", fn, P, idx, w, lastrow)
    _raises(ValueError, "palette", fn, P, idx, w, pal[:, :2])
    _raises(TypeError, "palette", fn, P, idx, w, pal.astype(complex))
    _raises(ValueError, "J = 0", fn, P, idx[:, :0], w[:, :0], pal[:0])
    _raises(ValueError, "K = 0", fn, P, idx[:, :0], w[:, :0], pal)
    if fn is sk.dqs:
        scaled = pal.copy()
        scaled[0, :3, :3] *= 2.0
        _raises(ValueError, "pivots", fn, P, idx, w, scaled)


def test_rigid_bad_indices(case):
    P, idx, w, pal = case
    j = idx[:, 0].astype(np.int64)
    j[3] = 5
    out = np.zeros_like(P)
    with pytest.raises(IndexError, match="vertex 3"):
        sk.rigid(P, j, pal, out=out)
    assert not out.any()
    with pytest.raises(ValueError, match="indices"):
        sk.rigid(P, idx, pal)


def test_empty_inputs_give_empty_results(case):
    P, idx, w, pal = case
    for fn in (sk.lbs, sk.dqs):
        assert fn(P[:0], idx[:0], w[:0], pal).shape == (0, 3)
        assert fn(P, idx, w, np.zeros((0, 5, 4, 4)) + np.eye(4)).shape == (0, 40, 3)
    assert sk.rigid(P[:0], idx[:0, 0], pal).shape == (0, 3)


def test_influences_object(case):
    P, idx, w, pal = case
    infl = sk.Influences(idx, w, 5)
    assert infl.shape == idx.shape and "V=40" in repr(infl)
    assert np.array_equal(sk.lbs(P, infl, pal), sk.lbs(P, idx, w, pal))
    with pytest.raises(ValueError, match="validated for 5 joints"):
        sk.lbs(P, infl, pal[:4])
    bad = idx.copy()
    bad[2, 0] = 9
    with pytest.raises(IndexError, match="vertex 2"):
        sk.Influences(bad, w, 5)
    with pytest.raises(ValueError, match="n_joints"):
        sk.Influences(idx, w, 0)
    import pickle
    again = pickle.loads(pickle.dumps(infl))
    assert again == infl


# ---------------------------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def big_case(unit_rows, influences, random_palette):
    """``big_case(V)`` -> float32 ``P, N, Influences, palette`` of 32 joints (seed 40)."""

    def make(V):
        rng = np.random.default_rng(40)
        P = rng.normal(size=(V, 3)).astype(np.float32)
        N = unit_rows(rng, V).astype(np.float32)
        idx, w = influences(rng, V, 32, 4, np.uint16, np.float32, zero_rows=[3])
        return P, N, sk.Influences(idx, w, 32), random_palette(rng, 32).astype(np.float32)

    return make


@pytest.mark.parametrize("fn", [sk.lbs, sk.dqs, sk.skin])
def test_thread_count_never_changes_a_bit(fn, big_case):
    P, N, infl, pal = big_case(V=10_007)
    one = fn(P, infl, pal, normals=N, threads=1)
    for n in (2, 3, 8):
        other = fn(P, infl, pal, normals=N, threads=n)
        assert all(np.array_equal(a, b) for a, b in zip(one, other))


def test_eight_python_threads_at_once_give_the_same_bits(big_case):
    P, N, infl, pal = big_case(V=50_000)
    want = sk.dqs(P, infl, pal, normals=N)
    results = [None] * 8

    def work(i):
        results[i] = sk.dqs(P, infl, pal, normals=N, threads=1 + i % 2)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in results:
        assert all(np.array_equal(a, b) for a, b in zip(r, want))


def test_gil_is_released_during_a_long_kernel(big_case):
    P, N, infl, pal = big_case(V=1_000_000)
    out, out_n = np.empty_like(P), np.empty_like(N)
    start = time.perf_counter()
    sk.dqs(P, infl, pal, normals=N, out=out, out_normals=out_n)
    one_call = time.perf_counter() - start

    def long_call():
        for _ in range(3):
            sk.dqs(P, infl, pal, normals=N, out=out, out_normals=out_n)

    t = threading.Thread(target=long_call)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
        time.sleep(0)
    t.join()
    # With the GIL held, this loop would stall for a whole kernel call at a time, i.e. for
    # nearly all of the three calls; a busy machine may stall it now and then, not throughout.
    gaps = np.diff(stamps)
    assert len(stamps) > 10
    stalled = gaps[gaps > 0.25 * one_call].sum()
    assert stalled < 0.5 * (stamps[-1] - stamps[0]), (stalled, stamps[-1] - stamps[0], one_call)
