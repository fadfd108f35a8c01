"""Property tests through the Python API (issue 8), with hypothesis.

Random rigs (forests in any joint order, rigid and scaled poses), random influences of every index
and weight dtype, random memory layouts; the properties are the invariants DESIGN.md section 2
promises and agreement with the slow NumPy reference (``skinkit.reference``).  The last test
throws arbitrary values at every public function: it must raise one of the exceptions DESIGN.md
section 5 allows, never anything else.

``SKINKIT_HYPOTHESIS_MAX_EXAMPLES`` scales the number of examples (the sanitizer lane lowers it).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skinkit as sk
from skinkit import bind, reference
from skinkit import transforms as tf
from skinkit import weights as wt

MAX = int(os.environ.get("SKINKIT_HYPOTHESIS_MAX_EXAMPLES", "60"))
SETTINGS = settings(max_examples=MAX, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = st.sampled_from([np.float32, np.float64])
INDEX_DTYPES = st.sampled_from([np.uint8, np.uint16, np.uint32, np.int32, np.int64])
LAYOUTS = st.sampled_from(["c", "fortran", "interleaved", "reversed"])


def tol(dtype):
    return 1e-11 if dtype == np.float64 else 2e-5


def random_rotations(rng, n):
    q = rng.standard_normal((n, 4))
    return tf.quat_to_matrix(q / np.linalg.norm(q, axis=1, keepdims=True))


def random_parents(rng, J):
    """A random forest, parents not necessarily before children."""
    sorted_parents = np.array([-1] + [int(rng.integers(-1, j)) if rng.random() < 0.9 else -1
                                      for j in range(1, J)], dtype=np.int64)
    perm = rng.permutation(J)
    parents = np.full(J, -1, dtype=np.int64)
    has = sorted_parents >= 0
    parents[perm[has]] = perm[sorted_parents[has]]
    parents[perm[~has]] = -1
    return parents


def random_rig(rng, J, scaled=False):
    parents = random_parents(rng, J)
    local_bind = random_rotations(rng, J)
    local_bind[:, :3, 3] = rng.uniform(-1, 1, (J, 3))
    skel = sk.Skeleton(parents, local_bind)
    pose = local_bind @ random_rotations(rng, J)
    if scaled:
        pose = pose @ tf.scale(rng.uniform(0.5, 1.5, (J, 3)))
    return skel, skel.palette(pose)


def random_influences(rng, V, J, K, index_dtype, dtype, unorm=None):
    idx = rng.integers(0, J, (V, K)).astype(index_dtype)
    w = rng.uniform(0, 1, (V, K)) * (rng.random((V, K)) < 0.8)
    w[:, 0] += 1e-3  # every row has weight
    w /= w.sum(1, keepdims=True)
    if unorm is not None:
        w = wt.quantize(w, bits=unorm)
        return idx, w, w.astype(np.float64) / (255.0 if unorm == 8 else 65535.0)
    w = w.astype(dtype)
    return idx, w, w.astype(np.float64)


def layout(a, how):
    """``a`` (V, n) in another memory layout, same values."""
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "interleaved":
        buf = np.full((a.shape[0], a.shape[1] + 5), np.nan, dtype=a.dtype)
        buf[:, 2:2 + a.shape[1]] = a
        return buf[:, 2:2 + a.shape[1]]
    if how == "reversed":
        return np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    return np.ascontiguousarray(a)


def assert_close(got, expected, scale, dtype):
    err = np.abs(np.asarray(got, np.float64) - expected)
    bound = tol(dtype) * (1.0 + scale)
    assert np.all(err <= bound), f"max error {err.max()} > {bound}"


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(0, 30), J=st.integers(1, 6),
       K=st.integers(1, 6), dtype=DTYPES, index_dtype=INDEX_DTYPES, how=LAYOUTS,
       method=st.sampled_from(["lbs", "dqs", "rigid"]), unorm=st.sampled_from([None, 8, 16]))
def test_kernels_match_the_reference(seed, V, J, K, dtype, index_dtype, how, method, unorm):
    rng = np.random.default_rng(seed)
    skel, palette = random_rig(rng, J)
    P = rng.uniform(-2, 2, (V, 3))
    N = rng.standard_normal((V, 3))
    idx, w, w64 = random_influences(rng, V, J, K, index_dtype, dtype, unorm)
    Pd, Nd = layout(P.astype(dtype), how), layout(N.astype(dtype), how)
    frozen = [(a, a.copy()) for a in (Pd, Nd, idx, w)]
    if method == "rigid":
        got, got_n = sk.rigid(Pd, idx[:, 0], palette, normals=Nd)
        ref, ref_n = reference.rigid(P, idx[:, 0].astype(np.int64), palette, normals=N)
    elif method == "lbs":
        got, got_n = sk.lbs(Pd, idx, w, palette, normals=Nd)
        ref, ref_n = reference.lbs(P, idx.astype(np.int64), w64, palette, normals=N)
    else:
        got, got_n = sk.dqs(Pd, idx, w, palette, normals=Nd)
        ref, ref_n = reference.dqs(P, idx.astype(np.int64), w64, palette, normals=N)
    assert got.dtype == dtype and got.shape == (V, 3)
    scale = np.abs(P).max(initial=0) + np.abs(palette[:, :3, 3]).max()
    assert_close(got, ref, scale, dtype)
    assert_close(got_n, ref_n, 1.0, dtype)
    for a, c in frozen:
        assert np.array_equal(a, c, equal_nan=True)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(0, 30), K=st.integers(1, 5), dtype=DTYPES,
       how=LAYOUTS, method=st.sampled_from(["lbs", "dqs", "rigid"]))
def test_identity_palette_returns_the_input(seed, V, K, dtype, how, method):
    rng = np.random.default_rng(seed)
    J = 4
    P = layout(rng.uniform(-10, 10, (V, 3)).astype(dtype), how)
    N = rng.standard_normal((V, 3))
    N = layout((N / np.linalg.norm(N, axis=1, keepdims=True)).astype(dtype), how)
    idx, w, _ = random_influences(rng, V, J, K, np.int32, dtype)
    eye = np.tile(np.eye(4), (J, 1, 1))
    if method == "rigid":
        got, got_n = sk.rigid(P, idx[:, 0], eye, normals=N)
    else:
        got, got_n = getattr(sk, method)(P, idx, w, eye, normals=N)
    # the weights sum to 1 only to rounding in float32, so allow that much
    np.testing.assert_allclose(got, P, rtol=4 * np.finfo(dtype).eps * K, atol=1e-30)
    np.testing.assert_allclose(got_n, N, rtol=8 * np.finfo(dtype).eps * K, atol=8 * np.finfo(dtype).eps)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(1, 25), J=st.integers(1, 5),
       K=st.integers(1, 5), method=st.sampled_from(["lbs", "dqs"]))
def test_a_rigid_motion_of_the_palette_moves_the_result_rigidly(seed, V, J, K, method):
    rng = np.random.default_rng(seed)
    _, palette = random_rig(rng, J)
    M = random_rotations(rng, 1)[0]
    M[:3, 3] = rng.uniform(-5, 5, 3)
    P = rng.uniform(-2, 2, (V, 3))
    idx, w, _ = random_influences(rng, V, J, K, np.int64, np.float64)
    fn = getattr(sk, method)
    moved = fn(P, idx, w, M @ palette)
    np.testing.assert_allclose(moved, fn(P, idx, w, palette) @ M[:3, :3].T + M[:3, 3], atol=1e-10)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(1, 25), J=st.integers(1, 5),
       K=st.integers(2, 6), dtype=DTYPES, method=st.sampled_from(["lbs", "dqs"]),
       scaled=st.booleans())
def test_permuting_the_influence_columns_changes_nothing(seed, V, J, K, dtype, method, scaled):
    rng = np.random.default_rng(seed)
    skel, palette = random_rig(rng, J, scaled=scaled and method == "dqs")
    P = rng.uniform(-2, 2, (V, 3)).astype(dtype)
    idx, w, _ = random_influences(rng, V, J, K, np.int32, dtype)
    if rng.random() < 0.5:
        w[:, 1] = w[:, 0]  # exact ties between two joints
    perm = rng.permutation(K)
    kw = {"pivots": skel.pivots()} if method == "dqs" else {}
    fn = getattr(sk, method)
    a = fn(P, idx, w, palette, **kw)
    b = fn(P, idx[:, perm], w[:, perm], palette, **kw)
    scale = np.abs(P).max() + np.abs(palette[:, :3, 3]).max()
    assert_close(a, b.astype(np.float64), scale, dtype)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(1, 25), J=st.integers(1, 5), dtype=DTYPES)
def test_one_influence_lbs_dqs_and_rigid_agree(seed, V, J, dtype):
    rng = np.random.default_rng(seed)
    _, palette = random_rig(rng, J)
    P = rng.uniform(-2, 2, (V, 3)).astype(dtype)
    idx = rng.integers(0, J, (V, 1)).astype(np.int32)
    w = np.ones((V, 1), dtype)
    r = sk.rigid(P, idx, palette)
    scale = np.abs(P).max() + np.abs(palette[:, :3, 3]).max()
    assert_close(sk.lbs(P, idx, w, palette), r.astype(np.float64), scale, dtype)
    assert_close(sk.dqs(P, idx, w, palette), r.astype(np.float64), scale, dtype)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(0, 300), K=st.integers(1, 4), dtype=DTYPES,
       how=LAYOUTS, method=st.sampled_from(["lbs", "dqs", "rigid"]), threads=st.integers(2, 8),
       F=st.integers(1, 3))
def test_layout_threads_and_batches_never_change_a_bit(seed, V, K, dtype, how, method, threads, F):
    rng = np.random.default_rng(seed)
    J = 5
    skel, _ = random_rig(rng, J, scaled=True)
    poses = np.stack([skel.local_bind @ random_rotations(rng, J) @ tf.scale(rng.uniform(0.7, 1.3, (J, 3)))
                      for _ in range(F)])
    palettes = skel.palette(poses)
    P = rng.uniform(-2, 2, (V, 3)).astype(dtype)
    T = np.concatenate([rng.standard_normal((V, 3)), np.sign(rng.standard_normal((V, 1)))], 1).astype(dtype)
    idx, w, _ = random_influences(rng, V, J, K, np.uint16, dtype)
    kw = {"pivots": skel.pivots()} if method == "dqs" else {}

    def run(p, t, pal, **extra):
        if method == "rigid":
            return sk.rigid(p, idx[:, 0], pal, tangents=t, **extra)
        return getattr(sk, method)(p, idx, w, pal, tangents=t, **kw, **extra)

    base = [run(P, T, palettes[f]) for f in range(F)]
    out = layout(np.zeros((V, 3), dtype), how)
    got = run(layout(P, how), layout(T, how), palettes[0], threads=threads, out=out)
    assert got[0] is out
    assert np.array_equal(got[0], base[0][0]) and np.array_equal(got[1], base[0][1])
    batched = run(P, T, palettes, threads=threads)
    for f in range(F):
        assert np.array_equal(batched[0][f], base[f][0]) and np.array_equal(batched[1][f], base[f][1])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), J=st.integers(1, 12), F=st.integers(0, 3),
       rows=st.sampled_from([3, 4]), dtype=DTYPES)
def test_forward_kinematics_matches_the_reference_in_any_joint_order(seed, J, F, rows, dtype):
    rng = np.random.default_rng(seed)
    parents = random_parents(rng, J)
    local = random_rotations(rng, F * J).reshape(F, J, 4, 4)
    local[..., :3, 3] = rng.uniform(-1, 1, (F, J, 3))
    root = random_rotations(rng, 1)[0]
    got = sk.forward_kinematics(parents, local[..., :rows, :].astype(dtype), root=root)
    assert got.shape == (F, J, rows, 4) and got.dtype == dtype
    if F:
        ref = np.stack([reference.forward_kinematics(parents, local[f], root=root) for f in range(F)])
        np.testing.assert_allclose(got, ref[..., :rows, :], atol=tol(dtype) * 10 * J)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(1, 60), J=st.integers(1, 8), dtype=DTYPES,
       binder=st.sampled_from(["nearest", "proximity", "volume_spheres", "projection", "envelope"]),
       how=LAYOUTS)
def test_binders_give_valid_influences(seed, V, J, dtype, binder, how):
    rng = np.random.default_rng(seed)
    skel, _ = random_rig(rng, J)
    verts = layout(rng.uniform(-3, 3, (V, 3)).astype(dtype), how)
    frozen = verts.copy()
    if binder == "envelope":
        idx, w = bind.envelope(verts, skel, 0.5, 0.25, 1.0, k=3, normalize=True)
    elif binder == "proximity":
        idx, w = bind.proximity(verts, skel, k=int(rng.integers(1, 5)), power=float(rng.uniform(0, 3)))
    else:
        idx, w = getattr(bind, binder)(verts, skel)
    assert idx.dtype == np.int32 and w.dtype == dtype and idx.shape == w.shape
    assert idx.shape[0] == V
    assert np.all((idx >= 0) & (idx < J)) and np.all(w >= 0) and np.all(np.isfinite(w))
    assert np.all(idx[w == 0] == 0)
    sums = w.astype(np.float64).sum(1)
    ok = np.isclose(sums, 1.0, atol=1e-5) | ((sums == 0) if binder == "envelope" else False)
    assert np.all(ok), sums
    assert wt.validate(idx, w, tol=1e-5, n_joints=J) == [] or binder == "envelope"
    assert np.array_equal(verts, frozen)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(0, 40), K=st.integers(1, 8),
       bits=st.sampled_from([8, 16]), dtype=DTYPES)
def test_weight_tools_keep_their_promises(seed, V, K, bits, dtype):
    rng = np.random.default_rng(seed)
    J = 6
    idx = rng.integers(0, J, (V, K)).astype(np.int32)
    w = (rng.uniform(0, 1, (V, K)) * (rng.random((V, K)) < 0.7)).astype(dtype)
    frozen = (idx.copy(), w.copy())
    q = wt.quantize(w, bits=bits)
    m = (1 << bits) - 1
    rows = w.sum(1) > 0
    assert np.all(q.astype(np.int64).sum(1)[rows] == m)
    assert np.all(q[~rows] == 0)
    ni, nw = wt.normalize(idx, w)
    np.testing.assert_allclose(nw.astype(np.float64).sum(1)[rows], 1.0, rtol=1e-6)
    li, lw = wt.limit(idx, w, k=min(2, K))
    assert lw.shape == (V, min(2, K))
    dense = wt.to_dense(ni, nw, J)
    np.testing.assert_allclose(dense.sum(1)[rows], 1.0, rtol=1e-6)
    assert isinstance(wt.validate(idx, w), list)
    assert np.array_equal(idx, frozen[0]) and np.array_equal(w, frozen[1])


# -- arbitrary values into every public function ---------------------------------------------------------

ALLOWED = (TypeError, ValueError, IndexError, KeyError, OverflowError, NotImplementedError)

_arrays = st.builds(
    lambda shape, dtype, fill: np.full(shape, fill).astype(dtype) if dtype != "O" else np.full(shape, None, dtype=object),
    st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple),
    st.sampled_from([np.float64, np.float32, np.int64, np.int32, np.uint8, np.uint16, np.bool_,
                     np.complex128, np.float16, "O"]),
    st.sampled_from([0, 1, -1, 3]),
)
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from([2**63, -2**70]),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3),
                 st.lists(st.integers(-1, 3), max_size=4), _arrays)


def _public_callables():
    fns = {}
    for name in ["forward_kinematics", "skinning_palette", "Skeleton", "Influences", "rigid",
                 "lbs", "dqs", "skin", "set_num_threads"]:
        fns[name] = getattr(sk, name)
    fns["Skeleton.chain"] = sk.Skeleton.chain
    for mod in (bind, wt, tf):
        for name in mod.__all__:
            fns[f"{mod.__name__.split('.')[-1]}.{name}"] = getattr(mod, name)
    return fns


PUBLIC = _public_callables()


@pytest.mark.parametrize("name", sorted(PUBLIC))
@settings(max_examples=max(10, MAX), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(args=st.lists(JUNK, min_size=0, max_size=5))
def test_public_functions_raise_only_documented_exceptions(name, args):
    before = sk.get_num_threads()
    try:
        with np.errstate(all="ignore"):
            PUBLIC[name](*args)
    except ALLOWED:
        pass
    except Exception as exc:  # noqa: BLE001 - anything else is a finding
        raise AssertionError(f"{name}{tuple(args)!r} raised {type(exc).__name__}: {exc}") from exc
    finally:
        sk.set_num_threads(before)
