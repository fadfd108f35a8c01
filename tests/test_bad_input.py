"""Bad input never crashes (issue 8; DESIGN.md section 5).

A matrix over every public function: each bad input raises the exception DESIGN.md section 5
names, with the argument's name in the message, leaves every array it was given (``out``
included) bit-identical, and never crashes the interpreter.  Valid edge cases (V = 0, F = 0, a
J-sized array in an odd dtype or layout) give the result the plain input gives.

The last part calls every function of the C binding (``skinkit._core``) with junk argument lists:
whatever it is given, it raises TypeError / ValueError / IndexError (or MemoryError /
OverflowError for absurd sizes) or returns; a crash there would take the test run down with it.
"""
import inspect

import numpy as np
import pytest

import skinkit as sk
from skinkit import _core
from skinkit import bind
from skinkit import transforms as tf
from skinkit import weights as wt

V, J, K = 7, 3, 2
INDEX_DTYPES = [np.uint8, np.uint16, np.uint32, np.int32, np.int64]


# -- helpers -------------------------------------------------------------------------------------

def _arrays(obj, found):
    """Every ndarray reachable from call arguments (Influences and containers included)."""
    if isinstance(obj, np.ndarray):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _arrays(x, found)
    elif isinstance(obj, dict):
        for x in obj.values():
            _arrays(x, found)
    elif isinstance(obj, sk.Influences):
        _arrays((obj.indices, obj.weights), found)
    return found


def _frozen(arrays):
    return [(a, a.dtype, a.shape, a.tobytes()) for a in arrays]


def _assert_unchanged(frozen):
    for a, dtype, shape, data in frozen:
        assert a.dtype == dtype and a.shape == shape, "an argument array changed dtype or shape"
        assert a.tobytes() == data, "an argument array (input or out) was modified"


def expect(exc, match, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` raises ``exc`` matching ``match``; every array argument is
    bit-identical afterwards (inputs unmodified, ``out`` untouched)."""
    frozen = _frozen(_arrays((args, kwargs), []))
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)
    _assert_unchanged(frozen)


def byteswapped(a):
    return a.astype(a.dtype.newbyteorder())


def misaligned(a):
    """A copy of ``a`` whose data starts one byte into a buffer: not aligned for its dtype."""
    a = np.asarray(a)
    buf = np.zeros(a.nbytes + 1, dtype=np.uint8)
    m = buf[1:].view(a.dtype).reshape(a.shape)
    m[...] = a
    assert not m.flags.aligned
    return m


def readonly(a):
    b = np.array(a, copy=True)
    b.flags.writeable = False
    return b


def interleaved(a, width=8, offset=0):
    """``a`` (V, n) as a strided view into a (V, width) buffer, columns offset.. ."""
    buf = np.full((a.shape[0], width), -7.0, dtype=a.dtype)
    view = buf[:, offset:offset + a.shape[1]]
    view[...] = a
    return view


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == \
        np.ascontiguousarray(b).tobytes()


class Rig:
    """A 3-joint chain posed away from the bind pose, 7 vertices, K = 2 normalized weights."""

    def __init__(self, dtype=np.float64):
        rng = np.random.default_rng(8)
        self.dtype = dtype
        self.skeleton = sk.Skeleton.chain(J, 1.0)
        local = self.skeleton.local_bind.copy()
        local[1] = local[1] @ tf.axis_angle([0, 0, 1], 0.7)
        local[2] = local[2] @ tf.axis_angle([1, 0, 0], -0.4)
        self.palette = self.skeleton.palette(local)
        self.scaled = self.palette.copy()
        self.scaled[1, :3, :3] *= 1.5
        self.pivots = self.skeleton.pivots()
        self.positions = rng.uniform(-1, 2, (V, 3)).astype(dtype)
        self.normals = rng.standard_normal((V, 3)).astype(dtype)
        self.tangents = np.concatenate([rng.standard_normal((V, 3)), np.ones((V, 1))], 1).astype(dtype)
        self.indices = rng.integers(0, J, (V, K)).astype(np.int32)
        w = rng.uniform(0.1, 1, (V, K))
        self.weights = (w / w.sum(1, keepdims=True)).astype(dtype)
        self.rigid_indices = rng.integers(0, J, V).astype(np.int32)
        self.centers = (self.positions + 0.25).astype(dtype)


@pytest.fixture(scope="module")
def rig():
    return Rig()


def kernel_call(method, rig, **over):
    """(function, args, kwargs) of a valid call of ``method`` with ``over`` replacing arguments
    (positions, indices, weights, palette, and any keyword)."""
    a = {"positions": rig.positions, "palette": rig.palette}
    if method == "rigid":
        a["indices"] = rig.rigid_indices
    else:
        a["indices"], a["weights"] = rig.indices, rig.weights
    kw = {}
    for k, v in over.items():
        (a if k in ("positions", "indices", "weights", "palette") else kw)[k] = v
    if method == "rigid":
        return sk.rigid, (a["positions"], a["indices"], a["palette"]), kw
    if method == "cor":
        kw.setdefault("centers", rig.centers)
    if method == "blend":
        kw = {"method": "blend", "blend": 0.5, **kw}
    fn = {"lbs": sk.lbs, "dqs": sk.dqs, "cor": sk.cor, "blend": sk.skin}[method]
    return fn, (a["positions"], a["indices"], a["weights"], a["palette"]), kw


# -- kernels: rigid, lbs, dqs, skin ------------------------------------------------------------------

METHODS = ["rigid", "lbs", "dqs"]
P = "positions"

# (case id, methods, argument overrides from a Rig, exception, message pattern)
KERNEL_CASES = [
    ("positions-list", METHODS, lambda r: {P: r.positions.tolist()}, TypeError, P),
    ("positions-int", METHODS, lambda r: {P: r.positions.astype(np.int64)}, TypeError, P),
    ("positions-float16", METHODS, lambda r: {P: r.positions.astype(np.float16)}, TypeError, P),
    ("positions-complex", METHODS, lambda r: {P: r.positions.astype(complex)}, TypeError, P),
    ("positions-object", METHODS, lambda r: {P: r.positions.astype(object)}, TypeError, P),
    ("positions-byteswapped", METHODS, lambda r: {P: byteswapped(r.positions)}, TypeError, P),
    ("positions-misaligned", METHODS, lambda r: {P: misaligned(r.positions)}, ValueError, P),
    ("positions-0d", METHODS, lambda r: {P: np.array(1.0)}, ValueError, P),
    ("positions-1d", METHODS, lambda r: {P: r.positions[0].copy()}, ValueError, P),
    ("positions-width-4", METHODS, lambda r: {P: np.zeros((V, 4))}, ValueError, P),
    ("positions-4d", METHODS, lambda r: {P: np.zeros((1, 1, V, 3))}, ValueError, P),
    ("positions-fewer-vertices", METHODS, lambda r: {P: r.positions[:-1].copy()}, ValueError,
     "positions|indices|weights"),
    ("positions-frames-mismatch", METHODS,
     lambda r: {P: np.stack([r.positions] * 3), "palette": np.stack([r.palette] * 2)}, ValueError,
     "positions|palette|frames"),
]

KERNEL_CASES += [
    # indices
    ("indices-float-lbs", ["lbs", "dqs"], lambda r: {"indices": r.indices.astype(float)}, TypeError, "indices"),
    ("indices-float-rigid", ["rigid"], lambda r: {"indices": r.rigid_indices.astype(float)}, TypeError, "indices"),
    ("indices-int8", ["lbs", "dqs"], lambda r: {"indices": r.indices.astype(np.int8)}, TypeError, "indices"),
    ("indices-int16", ["lbs", "dqs"], lambda r: {"indices": r.indices.astype(np.int16)}, TypeError, "indices"),
    ("indices-uint64", ["lbs", "dqs"], lambda r: {"indices": r.indices.astype(np.uint64)}, TypeError, "indices"),
    ("indices-bool", ["lbs", "dqs"], lambda r: {"indices": r.indices.astype(bool)}, TypeError, "indices"),
    ("indices-list", ["lbs", "dqs", "rigid"], lambda r: {"indices": r.indices.tolist()}, TypeError, "indices"),
    ("indices-byteswapped", ["lbs", "dqs"], lambda r: {"indices": byteswapped(r.indices)}, TypeError, "indices"),
    ("indices-byteswapped-rigid", ["rigid"], lambda r: {"indices": byteswapped(r.rigid_indices)}, TypeError, "indices"),
    ("indices-misaligned", ["lbs", "dqs"], lambda r: {"indices": misaligned(r.indices)}, ValueError, "indices"),
    ("indices-shape", ["lbs", "dqs"], lambda r: {"indices": r.indices[:, :1].copy()}, ValueError, "indices|weights"),
    ("indices-1d", ["lbs", "dqs"], lambda r: {"indices": r.indices[:, 0].copy()}, ValueError, "indices|weights"),
    ("indices-rigid-2-columns", ["rigid"], lambda r: {"indices": r.indices}, ValueError, "indices"),
    ("indices-rigid-fewer", ["rigid"], lambda r: {"indices": r.rigid_indices[:-1].copy()}, ValueError, "indices|positions"),
    # weights
    ("weights-other-float", ["lbs", "dqs"], lambda r: {"weights": r.weights.astype(np.float32)}, TypeError, "weights"),
    ("weights-int32", ["lbs", "dqs"], lambda r: {"weights": (r.weights * 100).astype(np.int32)}, TypeError, "weights"),
    ("weights-complex", ["lbs", "dqs"], lambda r: {"weights": r.weights.astype(complex)}, TypeError, "weights"),
    ("weights-byteswapped", ["lbs", "dqs"], lambda r: {"weights": byteswapped(r.weights)}, TypeError, "weights"),
    ("weights-misaligned", ["lbs", "dqs"], lambda r: {"weights": misaligned(r.weights)}, ValueError, "weights"),
    ("weights-nan", ["lbs", "dqs"], lambda r: {"weights": _poke(r.weights, (3, 1), np.nan)}, ValueError, "weights"),
    ("weights-inf", ["lbs", "dqs"], lambda r: {"weights": _poke(r.weights, (3, 1), np.inf)}, ValueError, "weights"),
    ("weights-negative", ["lbs", "dqs"], lambda r: {"weights": _poke(r.weights, (3, 1), -0.25)}, ValueError, "weights"),
    ("k-zero", ["lbs", "dqs"], lambda r: {"indices": np.zeros((V, 0), np.int32),
                                          "weights": np.zeros((V, 0))}, ValueError, "indices|weights|K"),
    # palette (J-sized: real dtypes are cast, the rest refused)
    ("palette-complex", METHODS, lambda r: {"palette": r.palette.astype(complex)}, TypeError, "palette"),
    ("palette-bool", METHODS, lambda r: {"palette": r.palette.astype(bool)}, TypeError, "palette"),
    ("palette-object", METHODS, lambda r: {"palette": r.palette.astype(object)}, TypeError, "palette"),
    ("palette-none", METHODS, lambda r: {"palette": None}, TypeError, "palette"),
    ("palette-string", METHODS, lambda r: {"palette": "identity"}, TypeError, "palette"),
    ("palette-nan", METHODS, lambda r: {"palette": _poke(r.palette, (1, 0, 3), np.nan)}, ValueError, "palette"),
    ("palette-inf", METHODS, lambda r: {"palette": _poke(r.palette, (2, 1, 1), -np.inf)}, ValueError, "palette"),
    ("palette-last-row", METHODS, lambda r: {"palette": _poke(r.palette, (0, 3, 0), 0.5)}, ValueError, "palette"),
    ("palette-nan-last-row", METHODS, lambda r: {"palette": _poke(r.palette, (2, 3, 3), np.nan)}, ValueError, "palette"),
    ("palette-inf-second-frame", METHODS,
     lambda r: {"palette": np.stack([r.palette, _poke(r.palette, (2, 0, 0), np.inf)])}, ValueError, "palette"),
    ("palette-4x3", METHODS, lambda r: {"palette": r.palette[:, :, :3].copy()}, ValueError, "palette"),
    ("palette-2d", METHODS, lambda r: {"palette": r.palette[0].copy()}, ValueError, "palette"),
    ("palette-5d", METHODS, lambda r: {"palette": r.palette[None, None]}, ValueError, "palette"),
    ("palette-no-joints", METHODS, lambda r: {"palette": np.zeros((0, 4, 4))}, ValueError, "palette"),
    ("palette-too-few-joints", METHODS, lambda r: {"palette": r.palette[:1].copy()}, IndexError, "vertex"),
    # DQS pivots
    ("dqs-scaled-without-pivots", ["dqs"], lambda r: {"palette": r.scaled}, ValueError, "pivots"),
    ("dqs-pivots-shape", ["dqs"], lambda r: {"palette": r.scaled, "pivots": r.pivots[:2]}, ValueError, "pivots"),
    ("dqs-pivots-nan", ["dqs"], lambda r: {"palette": r.scaled, "pivots": _poke(r.pivots, (1, 1), np.nan)}, ValueError, "pivots"),
    ("dqs-pivots-complex", ["dqs"], lambda r: {"palette": r.scaled, "pivots": r.pivots.astype(complex)}, TypeError, "pivots"),
    # normals and tangents
    ("normals-list", METHODS, lambda r: {"normals": r.normals.tolist()}, TypeError, "normals"),
    ("normals-other-float", METHODS, lambda r: {"normals": r.normals.astype(np.float32)}, TypeError, "normals"),
    ("normals-byteswapped", METHODS, lambda r: {"normals": byteswapped(r.normals)}, TypeError, "normals"),
    ("normals-misaligned", METHODS, lambda r: {"normals": misaligned(r.normals)}, ValueError, "normals"),
    ("normals-shape", METHODS, lambda r: {"normals": r.normals[:-1].copy()}, ValueError, "normals"),
    ("tangents-width-3", METHODS, lambda r: {"tangents": r.tangents[:, :3].copy()}, ValueError, "tangents"),
    ("tangents-int", METHODS, lambda r: {"tangents": r.tangents.astype(np.int32)}, TypeError, "tangents"),
    # out, out_normals, out_tangents
    ("out-list", METHODS, lambda r: {"out": [[0.0] * 3] * V}, TypeError, "out"),
    ("out-other-float", METHODS, lambda r: {"out": np.zeros((V, 3), np.float32)}, TypeError, "out"),
    ("out-byteswapped", METHODS, lambda r: {"out": byteswapped(np.zeros((V, 3)))}, TypeError, "out"),
    ("out-shape", METHODS, lambda r: {"out": np.zeros((V, 4))}, ValueError, "out"),
    ("out-fewer-rows", METHODS, lambda r: {"out": np.zeros((V - 1, 3))}, ValueError, "out"),
    ("out-read-only", METHODS, lambda r: {"out": readonly(np.zeros((V, 3)))}, ValueError, "out"),
    ("out-broadcast", METHODS, lambda r: {"out": np.broadcast_to(np.zeros(3), (V, 3))}, ValueError, "out"),
    ("out-misaligned", METHODS, lambda r: {"out": misaligned(np.zeros((V, 3)))}, ValueError, "out"),
    ("out-is-normals", METHODS, lambda r: _out_is_normals(r), ValueError, "out"),
    ("out-overlaps-positions", METHODS, lambda r: _overlapping(r), ValueError, "out"),
    ("out-is-weights-memory", ["lbs", "dqs"], lambda r: _out_in_weights(r), ValueError, "out"),
    ("out-normals-is-normals", METHODS, lambda r: _out_normals_is_normals(r), ValueError, "out_normals"),
    ("out-normals-without-normals", METHODS, lambda r: {"out_normals": np.zeros((V, 3))}, ValueError, "out_normals"),
    ("out-normals-read-only", METHODS, lambda r: {"normals": r.normals, "out_normals": readonly(np.zeros((V, 3)))}, ValueError, "out_normals"),
    ("out-tangents-shape", METHODS, lambda r: {"tangents": r.tangents, "out_tangents": np.zeros((V, 3))}, ValueError, "out_tangents"),
    ("out-is-positions-batched", METHODS, lambda r: _out_positions_batched(r), ValueError, "out|frames"),
    # options
    ("threads-zero", METHODS, lambda r: {"threads": 0}, ValueError, "threads"),
    ("threads-negative", METHODS, lambda r: {"threads": -3}, ValueError, "threads"),
    ("threads-float", METHODS, lambda r: {"threads": 1.5}, TypeError, "threads"),
    ("threads-string", METHODS, lambda r: {"threads": "2"}, TypeError, "threads"),
    ("normal-rule", ["lbs"], lambda r: {"normal_rule": "average"}, ValueError, "normal_rule"),
]


def _poke(a, where, value):
    b = a.copy()
    b[where] = value
    return b


def _out_is_normals(r):
    n = r.normals.copy()
    return {"normals": n, "out": n}


def _overlapping(r):
    """positions = buf[:, 0:3] and out = buf[:, 1:4] of one interleaved buffer."""
    buf = np.zeros((V, 8), dtype=r.dtype)
    buf[:, :3] = r.positions
    return {P: buf[:, 0:3], "out": buf[:, 1:4]}


def _out_in_weights(r):
    """out a view of the same memory as the weights (a (V, 4) float buffer)."""
    buf = np.zeros((V, 4), dtype=r.dtype)
    buf[:, :K] = r.weights
    return {"weights": buf[:, :K], "out": buf[:, 1:4]}


def _out_normals_is_normals(r):
    n = r.normals.copy()
    return {"normals": n, "out_normals": n}


def _out_positions_batched(r):
    p = r.positions.copy()
    return {P: p, "palette": np.stack([r.palette, r.palette]), "out": p}


def _kernel_params():
    for case, methods, make, exc, match in KERNEL_CASES:
        # CoR and blend take everything LBS and DQS take (pivots and normal_rule included)
        blended = ["cor", "blend"] if {"lbs", "dqs"} & set(methods) else []
        for m in methods + blended:
            yield pytest.param(m, make, exc, match, id=f"{m}-{case}")


def _cor_blend_cases(r):
    """(method, overrides, exception, pattern) of the inputs only CoR and blend take."""
    wrong = np.float32 if r.dtype == np.float64 else np.float64
    c, b = r.centers, np.full(V, 0.5, r.dtype)
    for bad, exc in ((None, ValueError), (c.tolist(), TypeError), (c.astype(wrong), TypeError),
                     (byteswapped(c), TypeError), (misaligned(c), ValueError),
                     (c[:-1].copy(), ValueError), (c[:, :2].copy(), ValueError),
                     (_poke(c, (2, 1), np.nan), ValueError), (_poke(c, (4, 0), np.inf), ValueError)):
        yield "cor", {"centers": bad}, exc, "centers"
    for bad, exc in ((None, ValueError), (-0.5, ValueError), (np.nan, ValueError),
                     (1 + 1e-9, ValueError), ("half", TypeError), (b.tolist(), TypeError),
                     (b.astype(wrong), TypeError), (b[:-1].copy(), ValueError),
                     (_poke(b, 3, 2.0), ValueError), (_poke(b, 5, np.nan), ValueError),
                     (b[:, None].copy(), ValueError)):
        yield "blend", {"blend": bad}, exc, "blend"
    for m in ("lbs", "dqs"):
        yield m, {"centers": c, "method": m}, TypeError, "centers"
        yield m, {"blend": 0.5, "method": m}, TypeError, "blend"


def test_palette_too_big_for_float32_is_refused():
    """A float64 palette holding a finite value beyond float32's range, for float32 positions:
    the cast makes it inf, which the kernels' C check refuses (never an inf output)."""
    r = Rig(np.float32)
    pal = _poke(r.palette, (1, 0, 3), 1e39)
    assert np.isfinite(pal).all()
    for method in METHODS:
        fn, args, kw = kernel_call(method, r, palette=pal, out=np.zeros((V, 3), np.float32))
        expect(ValueError, "palette", fn, *args, **kw)


def test_cor_and_blend_bad_input(rig):
    for method, over, exc, match in _cor_blend_cases(rig):
        if "method" in over:  # centers / blend given to a method that does not take them
            expect(exc, match, sk.skin, rig.positions, rig.indices, rig.weights, rig.palette,
                   out=np.zeros((V, 3)), **over)
            continue
        fn, args, kw = kernel_call(method, rig, out=np.zeros((V, 3)), **over)
        expect(exc, match, fn, *args, **kw)


@pytest.mark.parametrize("method, make, exc, match", list(_kernel_params()))
def test_kernel_bad_input(rig, method, make, exc, match):
    fn, args, kw = kernel_call(method, rig, **make(rig))
    expect(exc, match, fn, *args, **kw)


@pytest.mark.parametrize("method", ["rigid", "lbs", "dqs"])
def test_skin_dispatch_bad_input(rig, method):
    fn, args, kw = kernel_call("lbs", rig)
    expect(ValueError, "method", sk.skin, rig.positions, rig.indices, rig.weights, rig.palette,
           method="linear")
    # the same checks run whatever the method
    expect(TypeError, P, sk.skin, byteswapped(rig.positions), rig.indices, rig.weights,
           rig.palette, method=method)
    expect(ValueError, "palette", sk.skin, rig.positions, rig.indices, rig.weights,
           _poke(rig.palette, (0, 0, 0), np.nan), method=method)
    expect(ValueError, "weights", sk.skin, rig.positions, rig.indices,
           _poke(rig.weights, (0, 0), -1.0), rig.palette, method=method)


def test_skin_rigid_validates_raw_influences(rig):
    """skin(method="rigid") takes the same raw influences as lbs and dqs, so the same bad ones
    raise (DESIGN.md section 5), not only those of the slot it ends up using."""
    w = rig.weights.copy()
    w[3] = [0.9, 0.1]
    idx = rig.indices.copy()
    idx[3, 1] = J + 5  # out of range in the smaller, non-zero slot
    expect(IndexError, r"indices.*vertex 3\b", sk.skin, rig.positions, idx, w, rig.palette,
           method="rigid", out=np.zeros((V, 3)))
    expect(ValueError, "weights", sk.skin, rig.positions, rig.indices, _poke(rig.weights, (2, 1), np.nan),
           rig.palette, method="rigid", out=np.zeros((V, 3)))


def test_messages_name_what_is_wrong(rig):
    """The message says which dtype is expected, which argument disagrees, and where a bad
    value sits (frame and joint of a palette stack; the pivots, not the palette)."""
    r32 = Rig(np.float32)
    out = np.zeros((V, 3))
    expect(TypeError, r"out has dtype float32, expected float64 \(the positions' dtype\)",
           sk.lbs, rig.positions, rig.indices, rig.weights, rig.palette,
           out=np.zeros((V, 3), np.float32))
    expect(TypeError, r"normals has dtype float64, expected float32 \(the positions' dtype\)",
           sk.lbs, r32.positions, r32.indices, r32.weights, r32.palette,
           normals=rig.normals)
    expect(ValueError, f"influences have {V} rows .* positions has {V - 1} vertices", sk.lbs,
           rig.positions[:-1], sk.Influences(rig.indices, rig.weights, J), rig.palette)
    stack = np.stack([rig.palette] * 3)
    stack[2, 1, 0, 0] = np.nan
    for method in METHODS:
        fn, args, kw = kernel_call(method, rig, palette=stack, out=np.zeros((3, V, 3)))
        expect(ValueError, "palette: NaN or inf at frame 2, joint 1", fn, *args, **kw)
    expect(ValueError, "weights: NaN or inf at vertex 4", sk.lbs, rig.positions, rig.indices,
           _poke(rig.weights, (4, 1), np.inf), rig.palette, out=out)
    expect(ValueError, "weights: NaN or inf at vertex 4", sk.Influences, rig.indices,
           _poke(rig.weights, (4, 1), np.nan), J)
    # finite float64 pivots beyond float32's range: the pivots are named, not the palette
    big = rig.pivots.copy()
    big[2] = 1e300
    expect(ValueError, "pivots: NaN or inf at joint 2", sk.dqs, r32.positions, r32.indices,
           r32.weights, r32.scaled.astype(np.float32), pivots=big,
           out=np.zeros((V, 3), np.float32))


def test_shape_messages_name_the_axes(rig):
    for method in METHODS:
        fn, args, kw = kernel_call(method, rig, palette=rig.palette[0])
        expect(ValueError, r"palette must have shape \(J, 4, 4\) or \(F, J, 4, 4\)", fn, *args,
               **kw)
    expect(ValueError, r"root must have shape \(4, 4\) or \(F, 4, 4\)",
           rig.skeleton.global_transforms, root=np.zeros((2, 2, 4, 4)))
    expect(ValueError, r"local must have shape \(J, 4, 4\) or \(F, J, 4, 4\)",
           rig.skeleton.global_transforms, np.zeros((4, 4)))


def test_output_elements_must_not_share_memory(rig):
    """An out whose rows repeat memory (a zero stride) would keep the last write; refused.
    Views of a wider buffer (interleaved vertex data) are fine."""
    rep = np.lib.stride_tricks.as_strided(np.zeros(3), (V, 3), (0, 8))
    short = np.lib.stride_tricks.as_strided(np.zeros(V * 3), (V, 3), (16, 8))
    for method in METHODS + ["cor", "blend"]:
        for bad in (rep, short):
            fn, args, kw = kernel_call(method, rig, out=bad)
            expect(ValueError, "out has elements that share memory", fn, *args, **kw)
        fn, args, kw = kernel_call(method, rig, normals=rig.normals,
                                   out_normals=np.lib.stride_tricks.as_strided(
                                       np.zeros(3), (V, 3), (0, 8)))
        expect(ValueError, "out_normals has elements that share memory", fn, *args, **kw)
        buf = np.zeros((V, 8))
        fn, args, kw = kernel_call(method, rig, out=buf[:, 1:4])
        want = fn(*args, **{**kw, "out": None})
        fn(*args, **kw)
        np.testing.assert_array_equal(buf[:, 1:4], want)
        assert not buf[:, [0, 4, 5, 6, 7]].any()


def test_huge_thread_counts_mean_all_threads(rig):
    want = sk.lbs(rig.positions, rig.indices, rig.weights, rig.palette)
    for n in (2**31, 2**64):
        got = sk.lbs(rig.positions, rig.indices, rig.weights, rig.palette, threads=n)
        np.testing.assert_array_equal(got, want)
    before = sk.get_num_threads()
    try:
        sk.set_num_threads(2**70)
        np.testing.assert_array_equal(
            sk.dqs(rig.positions, rig.indices, rig.weights, rig.palette),
            sk.dqs(rig.positions, rig.indices, rig.weights, rig.palette, threads=1))
    finally:
        sk.set_num_threads(before)
    expect(ValueError, "n_joints", sk.Influences, rig.indices, rig.weights, 2**70)


def test_skin_methods_refuse_keywords_they_do_not_use(rig):
    """skin() passes keywords on to the method's function, which refuses those it does not
    take (TypeError naming them): rigid takes neither pivots nor normal_rule, lbs no pivots,
    dqs no normal_rule; a wrong normal_rule is a ValueError where it is taken."""
    call = (sk.skin, rig.positions, rig.indices, rig.weights, rig.palette)
    for method, kw in (("rigid", {"pivots": rig.pivots}), ("rigid", {"normal_rule": "joint"}),
                       ("lbs", {"pivots": rig.pivots}), ("dqs", {"normal_rule": "joint"})):
        expect(TypeError, list(kw)[0], *call, method=method, out=np.zeros((V, 3)), **kw)
    for method in ("lbs", "cor", "blend"):
        fn, args, kw = kernel_call(method, rig, normal_rule="bogus", out=np.zeros((V, 3)))
        expect(ValueError, "normal_rule", fn, *args, **kw)


@pytest.mark.parametrize("call", ["global_transforms", "inverse_bind", "pivots", "palette",
                                  "Influences.astype", "Primitive.astype"])
@pytest.mark.parametrize("dtype", [np.int32, "U3", bool, np.float16, "not a dtype"])
def test_result_dtype_must_be_float32_or_float64(rig, call, dtype):
    skel = rig.skeleton
    fn = {"global_transforms": skel.global_transforms, "inverse_bind": skel.inverse_bind,
          "pivots": skel.pivots, "palette": skel.palette,
          "Influences.astype": sk.Influences(rig.indices, rig.weights, J).astype,
          "Primitive.astype": sk.rigs.cylinder().astype}[call]
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        fn(dtype=dtype)
    got = fn(dtype="float32")
    got = {"Influences.astype": lambda g: g.weights,
           "Primitive.astype": lambda g: g.positions}.get(call, lambda g: g)(got)
    assert got.dtype == np.float32


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("method", ["lbs", "dqs", "skin-rigid"])
def test_index_out_of_range_names_the_first_vertex(rig, method, index_dtype):
    idx = rig.indices.astype(index_dtype)
    idx[4, 1] = J  # first bad vertex
    idx[6, 0] = np.iinfo(index_dtype).max
    if method == "skin-rigid":
        call = lambda: sk.skin(rig.positions, idx, rig.weights, rig.palette, method="rigid")  # noqa: E731
        frozen = _frozen([idx, rig.weights, rig.positions])
        with pytest.raises(IndexError):
            call()
        _assert_unchanged(frozen)
        return
    fn = sk.lbs if method == "lbs" else sk.dqs
    out = np.full((V, 3), 7.25)
    expect(IndexError, r"indices.*vertex 4\b", fn, rig.positions, idx, rig.weights, rig.palette,
           out=out)
    expect(IndexError, r"indices.*vertex 4\b", sk.Influences, idx, rig.weights, J)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_negative_index_with_weight_is_an_index_error(rig, method, index_dtype):
    idx = rig.indices.astype(index_dtype)
    idx[2, 0] = -1
    fn = sk.lbs if method == "lbs" else sk.dqs
    expect(IndexError, r"indices.*vertex 2\b", fn, rig.positions, idx, rig.weights, rig.palette,
           out=np.zeros((V, 3)))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_index_of_a_zero_weight_is_never_read(rig, method, index_dtype):
    idx = rig.indices.astype(index_dtype)
    w = rig.weights.copy()
    w[3] = [1.0, 0.0]
    idx[3, 1] = np.iinfo(index_dtype).max if index_dtype in (np.uint8, np.uint16) else J + 1000
    fn = sk.lbs if method == "lbs" else sk.dqs
    got = fn(rig.positions, idx, w, rig.palette)
    idx0 = idx.copy()
    idx0[3, 1] = 0
    assert same_bits(got, fn(rig.positions, idx0, w, rig.palette))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_rigid_index_range(rig, index_dtype):
    idx = rig.rigid_indices.astype(index_dtype)
    idx[5] = J
    expect(IndexError, r"indices.*vertex 5\b", sk.rigid, rig.positions, idx, rig.palette,
           out=np.zeros((V, 3)))
    if np.issubdtype(index_dtype, np.signedinteger):
        idx[5] = -1  # not skinned: copied
        got = sk.rigid(rig.positions, idx, rig.palette)
        assert same_bits(got[5], rig.positions[5])


def test_influences_bad_input(rig):
    expect(ValueError, "n_joints", sk.Influences, rig.indices, rig.weights, 0)
    expect(ValueError, "n_joints", sk.Influences, rig.indices, rig.weights, -2)
    expect(TypeError, "n_joints", sk.Influences, rig.indices, rig.weights, 3.0)
    expect(TypeError, "n_joints", sk.Influences, rig.indices, rig.weights, None)
    expect(TypeError, "indices", sk.Influences, rig.indices.astype(float), rig.weights, J)
    expect(TypeError, "weights", sk.Influences, rig.indices, rig.weights.astype(complex), J)
    expect(ValueError, "indices|weights", sk.Influences, rig.indices[:, :1].copy(), rig.weights, J)
    expect(ValueError, "indices|weights", sk.Influences, rig.indices[:-1].copy(), rig.weights, J)
    expect(ValueError, "indices|weights|K", sk.Influences, np.zeros((V, 0), np.int32),
           np.zeros((V, 0)), J)
    expect(ValueError, "weights", sk.Influences, rig.indices, _poke(rig.weights, (1, 1), np.nan), J)
    expect(ValueError, "weights", sk.Influences, rig.indices, _poke(rig.weights, (1, 1), -1e-9), J)
    expect(IndexError, "vertex 0", sk.Influences, _poke(rig.indices, (0, 0), J), rig.weights, J)
    # validated for more joints than the palette has
    infl = sk.Influences(rig.indices, rig.weights, J)
    expect(ValueError, "palette|joints", sk.lbs, rig.positions, infl, rig.palette[:2].copy())
    expect(ValueError, "palette|joints", sk.dqs, rig.positions, infl, rig.palette[:2].copy())


@pytest.mark.parametrize("method", METHODS)
def test_missing_or_extra_arguments(rig, method):
    fn = {"rigid": sk.rigid, "lbs": sk.lbs, "dqs": sk.dqs}[method]
    with pytest.raises(TypeError):
        fn(rig.positions)
    with pytest.raises(TypeError):
        fn()
    if method != "rigid":
        with pytest.raises(TypeError):
            fn(rig.positions, rig.indices, rig.weights, rig.palette, rig.palette)
        with pytest.raises(TypeError):
            fn(rig.positions, rig.indices, rig.palette)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("method", METHODS)
def test_empty_results(method, dtype):
    r = Rig(dtype)
    empty = np.zeros((0, 3), dtype)
    fn, args, kw = kernel_call(method, r, positions=empty,
                               indices=np.zeros((0,) if method == "rigid" else (0, K), np.int32),
                               weights=np.zeros((0, K), dtype))
    got = fn(*args, **kw)
    assert got.shape == (0, 3) and got.dtype == dtype
    out = np.zeros((0, 3), dtype)
    assert fn(*args, out=out, **kw) is out
    # F = 0 frames of a batched palette
    fn, args, kw = kernel_call(method, r, palette=np.zeros((0, J, 4, 4)))
    got = fn(*args, **kw)
    assert got.shape == (0, V, 3) and got.dtype == dtype
    # both
    fn, args, kw = kernel_call(method, r, positions=np.zeros((0, 0, 3), dtype),
                               indices=np.zeros((0,) if method == "rigid" else (0, K), np.int32),
                               weights=np.zeros((0, K), dtype), palette=np.zeros((0, J, 4, 4)))
    assert fn(*args, **kw).shape == (0, 0, 3)


@pytest.mark.parametrize("variant", ["byteswapped", "int-identity", "float16", "misaligned",
                                     "fortran", "reversed", "compact-3x4", "float32"])
@pytest.mark.parametrize("method", METHODS)
def test_palette_in_any_real_dtype_or_layout_is_cast(rig, method, variant):
    pal = rig.palette
    if variant == "int-identity":
        pal = np.tile(np.eye(4, dtype=np.int16), (J, 1, 1))
    elif variant == "float16":
        pal = np.tile(np.eye(4), (J, 1, 1)).astype(np.float16)
    base = pal.astype(np.float64)
    if variant == "byteswapped":
        pal = byteswapped(pal)
    elif variant == "misaligned":
        pal = misaligned(pal)
    elif variant == "fortran":
        pal = np.asfortranarray(pal)
    elif variant == "reversed":
        pal = pal[::-1].copy()[::-1]
    elif variant == "compact-3x4":
        pal = pal[:, :3, :]
    elif variant == "float32":
        pal = pal.astype(np.float32)
        base = pal.astype(np.float64)
    fn, args, kw = kernel_call(method, rig, palette=pal)
    fn0, args0, kw0 = kernel_call(method, rig, palette=base)
    frozen = _frozen([pal])
    assert same_bits(fn(*args, **kw), fn0(*args0, **kw0))
    _assert_unchanged(frozen)


@pytest.mark.parametrize("method", METHODS)
def test_in_place_is_the_one_allowed_overlap(rig, method):
    fn, args, kw = kernel_call(method, rig)
    expected = fn(*args, **kw)
    p = rig.positions.copy()
    fn, args, kw = kernel_call(method, rig, positions=p, out=p)
    assert fn(*args, **kw) is p
    assert same_bits(p, expected)


@pytest.mark.parametrize("method", METHODS)
def test_nan_positions_propagate_without_error(rig, method):
    p = rig.positions.copy()
    p[2, 1] = np.nan
    fn, args, kw = kernel_call(method, rig, positions=p)
    got = fn(*args, **kw)
    assert np.isnan(got[2]).any()
    ok = np.ones(V, bool)
    ok[2] = False
    fn0, args0, kw0 = kernel_call(method, rig)
    assert same_bits(got[ok], fn0(*args0, **kw0)[ok])


# -- binders -----------------------------------------------------------------------------------------

BINDERS = {
    "nearest": lambda v, s: bind.nearest(v, s),
    "nearest-joint": lambda v, s: bind.nearest(v, s, to="joint"),
    "proximity": lambda v, s: bind.proximity(v, s, k=2),
    "proximity-bone": lambda v, s: bind.proximity(v, s, k=3, to="bone"),
    "volume_spheres": lambda v, s: bind.volume_spheres(v, s),
    "volume_sphere_radii": lambda v, s: bind.volume_sphere_radii(v, s),
    "projection": lambda v, s: bind.projection(v, s),
    "height_bands": lambda v, s: bind.height_bands(v, s),
    "envelope": lambda v, s: bind.envelope(v, s, 0.5, 0.5, 1.0),
}

BINDER_CASES = [
    ("list", lambda v: v.tolist(), TypeError),
    ("int", lambda v: v.astype(np.int64), TypeError),
    ("float16", lambda v: v.astype(np.float16), TypeError),
    ("complex", lambda v: v.astype(complex), TypeError),
    ("byteswapped", byteswapped, TypeError),
    ("misaligned", misaligned, ValueError),
    ("1d", lambda v: v[0].copy(), ValueError),
    ("width-2", lambda v: v[:, :2].copy(), ValueError),
    ("3d", lambda v: v[None], ValueError),
    ("nan", lambda v: _poke(v, (3, 2), np.nan), ValueError),
    ("inf", lambda v: _poke(v, (0, 0), np.inf), ValueError),
]


def _bind_vertices(dtype=np.float64):
    rng = np.random.default_rng(4)
    return rng.uniform([-0.5, -0.5, -0.5], [0.5, 2.5, 0.5], (V, 3)).astype(dtype)


@pytest.mark.parametrize("case, make, exc", BINDER_CASES, ids=[c[0] for c in BINDER_CASES])
@pytest.mark.parametrize("binder", list(BINDERS))
def test_binder_bad_vertices(binder, case, make, exc):
    s = sk.Skeleton.chain(J, 1.0)
    expect(exc, "vertices", BINDERS[binder], make(_bind_vertices()), s)


@pytest.mark.parametrize("binder", list(BINDERS))
def test_binder_needs_a_skeleton(binder):
    s = sk.Skeleton.chain(J, 1.0)
    for not_a_skeleton in (None, s.parents, s.local_bind, "chain"):
        expect(TypeError, "skeleton", BINDERS[binder], _bind_vertices(), not_a_skeleton)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("binder", list(BINDERS))
def test_binder_of_no_vertices_is_empty(binder, dtype):
    s = sk.Skeleton.chain(J, 1.0)
    got = BINDERS[binder](np.zeros((0, 3), dtype), s)
    if binder == "volume_sphere_radii":
        assert got.shape == (J,)
        return
    idx, w = got
    assert idx.shape[0] == 0 and w.shape[0] == 0 and idx.dtype == np.int32 and w.dtype == dtype


@pytest.mark.parametrize("binder", list(BINDERS))
def test_binder_reads_strided_vertices_in_place(binder):
    s = sk.Skeleton.chain(J, 1.0)
    v = _bind_vertices()
    for view in (interleaved(v, 8, 2), v[::-1].copy()[::-1], np.asfortranarray(v)):
        frozen = _frozen([view])
        a, b = BINDERS[binder](view, s), BINDERS[binder](v, s)
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert same_bits(x, y)
        _assert_unchanged(frozen)


def test_binder_options():
    s = sk.Skeleton.chain(J, 1.0)
    v = _bind_vertices()
    expect(ValueError, r"\bk\b", bind.proximity, v, s, k=0)
    expect(TypeError, r"\bk\b", bind.proximity, v, s, k=1.5)
    expect(ValueError, "power", bind.proximity, v, s, power=-1)
    expect(ValueError, "power", bind.proximity, v, s, power=np.nan)
    expect(ValueError, r"\bto\b", bind.proximity, v, s, to="point")
    expect(ValueError, r"\bto\b", bind.nearest, v, s, to="head")
    expect(ValueError, "multiplier", bind.volume_spheres, v, s, multiplier=-1.0)
    expect(ValueError, "multiplier", bind.volume_sphere_radii, v, s, multiplier=np.inf)
    expect(ValueError, "radii", bind.volume_spheres, v, s, radii=np.ones(J + 1))
    expect(ValueError, "radii", bind.volume_spheres, v, s, radii=-np.ones(J))
    expect(ValueError, "radii", bind.volume_spheres, v, s, radii=np.full(J, np.nan))
    expect(TypeError, "radii", bind.volume_spheres, v, s, radii=np.ones(J, complex))
    expect(ValueError, "axis", bind.height_bands, v, s, axis="w")
    expect(ValueError, "axis", bind.height_bands, v, s, axis=[0.0, 0.0, 0.0])
    expect(ValueError, "skeleton", bind.height_bands, v, sk.Skeleton([-1, 0, 0], np.tile(np.eye(4), (3, 1, 1))))
    expect(ValueError, "head_radius", bind.envelope, v, s, -0.5, 0.5, 1.0)
    expect(ValueError, "tail_radius", bind.envelope, v, s, 0.5, np.nan, 1.0)
    expect(ValueError, "distance", bind.envelope, v, s, 0.5, 0.5, -1.0)
    expect(ValueError, "head_radius", bind.envelope, v, s, np.ones(J + 2), 0.5, 1.0)
    expect(ValueError, r"\bk\b", bind.envelope, v, s, 0.5, 0.5, 1.0, k=0)


def test_volume_sphere_radii_of_no_vertices():
    """A multiplier of 0 times the infinite nearest distance of an empty mesh must not give NaN
    radii, and binding no vertices is an empty result, whatever the multiplier (DESIGN.md 5).
    Found by tests/fuzz/fuzz_bind.c (sk_bind_sphere_radii_*: radii = multiplier * inf)."""
    s = sk.Skeleton.chain(J, 1.0)
    none = np.zeros((0, 3))
    radii = bind.volume_sphere_radii(none, s, multiplier=0.0)
    assert not np.isnan(radii).any(), radii
    idx, w = bind.volume_spheres(none, s, multiplier=0.0)
    assert idx.shape == (0, 2) and w.shape == (0, 2)


@pytest.mark.parametrize("binder", ["nearest", "proximity", "proximity-bone", "volume_spheres",
                                    "projection", "height_bands"])
def test_binders_far_but_finite_vertices(binder):
    """Finite float64 vertices far enough away that squared distances overflow are refused with
    a ValueError naming the vertex, before anything is written (found by tests/fuzz/fuzz_bind.c:
    proximity wrote NaN weights, nearest ranked infinities and picked joint 0, volume spheres
    blamed its radii)."""
    s = sk.Skeleton.chain(J, 1.0)
    v = np.array([[0.1, 0.5, 0.0], [1.0, -5e173, 1.5], [0.0, 1e160, 0.0]])
    with pytest.raises(ValueError, match=r"vertices: coordinate beyond 1e150 at vertex 1\b"):
        BINDERS[binder](v, s)
    # just inside the limit still binds, to finite normalized weights
    idx, w = BINDERS[binder](np.array([[0.0, 1e149, 0.0], [0.1, 0.5, 0.0]]), s)
    assert np.isfinite(w).all(), w
    np.testing.assert_allclose(w.sum(1), 1.0, rtol=1e-12)
    assert ((idx >= 0) & (idx < J)).all()


# -- weight tools ---------------------------------------------------------------------------------------

WEIGHT_TOOLS = {
    "normalize": lambda i, w: wt.normalize(i, w),
    "prune": lambda i, w: wt.prune(i, w, 0.01),
    "limit": lambda i, w: wt.limit(i, w, 1),
    "quantize": lambda i, w: wt.quantize(w),
    "pack": lambda i, w: wt.pack(w),
    "to_dense": lambda i, w: wt.to_dense(i, w, J),
    "check": lambda i, w: wt.check(i, w),
}
PAIR_TOOLS = ["normalize", "prune", "limit", "to_dense", "check"]

WEIGHT_CASES = [
    ("weights-complex", None, lambda w: w.astype(complex), TypeError, "weights"),
    ("weights-int32", None, lambda w: (w * 10).astype(np.int32), TypeError, "weights"),
    ("weights-object", None, lambda w: w.astype(object), TypeError, "weights"),
    ("weights-1d", None, lambda w: w[:, 0].copy(), ValueError, "weights"),
    ("weights-3d", None, lambda w: w[None], ValueError, "weights"),
    ("weights-k0", None, lambda w: w[:, :0].copy(), ValueError, "weights|K"),
    ("weights-nan", None, lambda w: _poke(w, (1, 0), np.nan), ValueError, "weights"),
    ("weights-negative", None, lambda w: _poke(w, (1, 0), -0.5), ValueError, "weights"),
    ("indices-float", lambda i: i.astype(float), None, TypeError, "indices"),
    ("indices-shape", lambda i: i[:, :1].copy(), None, ValueError, "indices"),
    ("indices-complex", lambda i: i.astype(complex), None, TypeError, "indices"),
]


def _weight_params():
    for case, mi, mw, exc, match in WEIGHT_CASES:
        for tool in WEIGHT_TOOLS:
            if mi is not None and tool not in PAIR_TOOLS:
                continue
            yield pytest.param(tool, mi, mw, exc, match, id=f"{tool}-{case}")


@pytest.mark.parametrize("tool, mi, mw, exc, match", list(_weight_params()))
def test_weight_tool_bad_input(rig, tool, mi, mw, exc, match):
    i = mi(rig.indices) if mi else rig.indices.copy()
    w = mw(rig.weights) if mw else rig.weights.copy()
    expect(exc, match, WEIGHT_TOOLS[tool], i, w)


def test_weight_tool_options(rig):
    i, w = rig.indices, rig.weights
    expect(ValueError, "bits", wt.quantize, w, bits=12)
    expect(ValueError, "zero", wt.normalize, i, w, zero="drop")
    expect(TypeError, r"\bk\b", wt.limit, i, w, k=1.5)
    expect(ValueError, r"\bk\b", wt.limit, i, w, k=0)
    expect(ValueError, "threshold", wt.prune, i, w, threshold=np.nan)
    expect(ValueError, "n_joints", wt.to_dense, i, w, 0)
    expect(IndexError, "indices|vertex", wt.to_dense, _poke(i, (2, 0), J), w, J)
    expect(ValueError, "dense", wt.from_dense, np.zeros(3))
    expect(ValueError, "packed", wt.unpack, np.full((V, 1), 2.0))


JUNK = [None, 0, -1, 2.5, "abc", b"\x00", object(), [], [[1, 2], [3]], {}, np.array(1.0),
        np.zeros(0), np.zeros((0, 4)), np.full((V, K), np.nan), np.ones((V, K), complex),
        np.ones((V, K), bool), np.array(["a", "b"]), np.zeros((V, K), object),
        np.iinfo(np.int64).max, -np.inf]


@pytest.mark.parametrize("k", range(len(JUNK)))
@pytest.mark.parametrize("second", [False, True])
def test_validate_never_raises(rig, k, second):
    """weights.validate reports problems as sentences and never raises, whatever it is given."""
    junk = JUNK[k]
    args = (rig.indices, junk) if second else (junk, rig.weights)
    problems = wt.validate(*args)
    assert isinstance(problems, list) and problems, f"validate found nothing wrong with {junk!r}"
    assert all(isinstance(p, str) and p for p in problems)


# -- skeleton functions (J-sized: any real dtype or layout is cast; the rest refused) ------------------

def _skeleton_calls(skel, local):
    g = skel.global_transforms(local)
    ib = skel.inverse_bind()
    return {
        "forward_kinematics": (sk.forward_kinematics, (skel.parents, local), "local"),
        "skinning_palette": (sk.skinning_palette, (g, ib), "global_transforms"),
        "skinning_palette-ib": (lambda a, b: sk.skinning_palette(b, a), (ib, g), "inverse_bind"),
        "Skeleton": (lambda p, l: sk.Skeleton(p, l), (skel.parents, local), "local_bind"),
        "Skeleton.palette": (lambda l: skel.palette(l), (local,), "local"),
        "Skeleton.global_transforms": (lambda l: skel.global_transforms(l), (local,), "local"),
    }


SKELETON_BAD = [
    ("complex", lambda m: m.astype(complex), TypeError),
    ("bool", lambda m: m.astype(bool), TypeError),
    ("object", lambda m: m.astype(object), TypeError),
    ("string", lambda m: "eye", TypeError),
    ("none", lambda m: None, TypeError),
    ("nan", lambda m: _poke(m, (1, 0, 3), np.nan), ValueError),
    ("inf", lambda m: _poke(m, (0, 2, 2), np.inf), ValueError),
    ("last-row", lambda m: _poke(m, (2, 3, 1), 1.0), ValueError),
    ("4x3", lambda m: m[:, :, :3].copy(), ValueError),
    ("0d", lambda m: np.array(1.0), ValueError),
    ("joints-mismatch", lambda m: m[:2].copy(), ValueError),
]


@pytest.mark.parametrize("case, make, exc", SKELETON_BAD, ids=[c[0] for c in SKELETON_BAD])
@pytest.mark.parametrize("fn_name", ["forward_kinematics", "skinning_palette", "skinning_palette-ib",
                                     "Skeleton", "Skeleton.palette", "Skeleton.global_transforms"])
def test_skeleton_function_bad_matrices(rig, fn_name, case, make, exc):
    skel = rig.skeleton
    local = skel.local_bind.copy()
    fn, args, name = _skeleton_calls(skel, local)[fn_name]
    args = list(args)
    k = 1 if fn_name in ("forward_kinematics", "Skeleton") else 0
    if case == "none" and fn_name in ("Skeleton.palette", "Skeleton.global_transforms"):
        return  # None there means the bind pose
    args[k] = make(args[k])
    expect(exc, name if case != "joints-mismatch" else "joints|" + name, fn, *args)


@pytest.mark.parametrize("variant", ["byteswapped", "misaligned", "int", "float16", "fortran",
                                     "float32", "longdouble"])
@pytest.mark.parametrize("fn_name", ["forward_kinematics", "skinning_palette", "Skeleton.palette"])
def test_skeleton_functions_cast_odd_matrices(rig, fn_name, variant):
    skel = rig.skeleton
    local = skel.local_bind.copy()  # integer-valued translations: exact in every dtype
    fn, args, _ = _skeleton_calls(skel, local)[fn_name]
    args = list(args)
    k = 1 if fn_name == "forward_kinematics" else 0
    m = args[k]
    odd = {"byteswapped": byteswapped, "misaligned": misaligned,
           "int": lambda a: a.astype(np.int32), "float16": lambda a: a.astype(np.float16),
           "fortran": np.asfortranarray, "float32": lambda a: a.astype(np.float32),
           "longdouble": lambda a: a.astype(np.longdouble)}[variant](m)
    expected = fn(*args)
    args[k] = odd
    frozen = _frozen([odd])
    got = fn(*args)
    np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(expected, np.float64))
    _assert_unchanged(frozen)


@pytest.mark.parametrize("fn_name", ["forward_kinematics", "skinning_palette"])
def test_skeleton_function_bad_out(rig, fn_name):
    skel = rig.skeleton
    fn, args, _ = _skeleton_calls(skel, skel.local_bind.copy())[fn_name]
    shape = (J, 4, 4)
    expect(TypeError, "out", fn, *args, out=[[0.0]])
    expect(TypeError, "out", fn, *args, out=np.zeros(shape, np.float32))
    expect(ValueError, "out", fn, *args, out=np.zeros((J, 3, 4)))
    expect(ValueError, "out", fn, *args, out=readonly(np.zeros(shape)))
    expect(ValueError, "out", fn, *args, out=np.broadcast_to(np.zeros((4, 4)), shape))
    same = np.array(args[1], dtype=np.float64, copy=True)
    expect(ValueError, "out", fn, args[0], same, out=same)


def test_skeleton_bad_parents():
    eye = np.tile(np.eye(4), (3, 1, 1))
    for parents, exc in [([-1, 0, 3], ValueError), ([-1, 0, -2], ValueError), ([1, 2, 0], ValueError),
                         ([0, 0, 1], ValueError), ([-1, 0.5, 1], ValueError), ([-1, 0, np.nan], ValueError),
                         (np.array([2**64 - 1, 0, 1], np.uint64), ValueError), ([-1, 0, 1e20], ValueError),
                         ([-1, 0, 1j], TypeError), ("abc", TypeError), (None, TypeError),
                         ([[-1, 0, 1]], ValueError), (np.array(-1), ValueError)]:
        for fn in (lambda p: sk.Skeleton(p, eye), lambda p: sk.forward_kinematics(p, eye)):
            with pytest.raises(exc, match="parents"):
                fn(parents)
    with pytest.raises(ValueError, match="parents|joint"):
        sk.forward_kinematics(np.zeros(0, np.int64), np.zeros((0, 4, 4)))


def test_skeleton_of_no_joints_names_the_argument():
    with pytest.raises(ValueError, match="global_transforms|inverse_bind|joint"):
        sk.skinning_palette(np.zeros((0, 4, 4)), np.zeros((0, 4, 4)))


def test_skeleton_frames_zero_is_empty(rig):
    skel = rig.skeleton
    assert sk.forward_kinematics(skel.parents, np.zeros((0, J, 4, 4))).shape == (0, J, 4, 4)
    assert skel.palette(np.zeros((0, J, 4, 4))).shape == (0, J, 4, 4)
    assert sk.skinning_palette(np.zeros((0, J, 4, 4)), skel.inverse_bind()).shape == (0, J, 4, 4)


# -- transforms (pure NumPy helpers) -------------------------------------------------------------------

TRANSFORM_BAD = [
    ("translation", lambda x: tf.translation(x), "t", np.zeros(2)),
    ("scale", lambda x: tf.scale(x), "s", np.zeros((2, 2))),
    ("axis_angle", lambda x: tf.axis_angle(x, 1.0), "axis", np.zeros(4)),
    ("rotvec", lambda x: tf.rotvec(x), "v", np.zeros(2)),
    ("euler", lambda x: tf.euler(x, "XYZ"), "angles", np.zeros(2)),
    ("quat_to_matrix", lambda x: tf.quat_to_matrix(x), "q", np.zeros(3)),
    ("quat_canonical", lambda x: tf.quat_canonical(x), "q", np.zeros(5)),
    ("matrix_to_quat", lambda x: tf.matrix_to_quat(x), "m", np.zeros((2, 2))),
    ("quat_multiply", lambda x: tf.quat_multiply(x, [0, 0, 0, 1]), "a", np.zeros(3)),
    ("quat_slerp", lambda x: tf.quat_slerp(x, [0, 0, 0, 1], 0.5), "a", np.zeros(3)),
    ("polar", lambda x: tf.polar(x), "a", np.zeros((2, 2))),
    ("decompose_trs", lambda x: tf.decompose_trs(x), "m", np.zeros(3)),
    ("rigid_inverse", lambda x: tf.rigid_inverse(x), "m", np.zeros((2, 2))),
    ("to_4x4", lambda x: tf.to_4x4(x), "m", np.zeros((2, 2))),
    ("to_3x4", lambda x: tf.to_3x4(x), "m", np.zeros(3)),
]


@pytest.mark.parametrize("name, fn, arg, bad", TRANSFORM_BAD, ids=[c[0] for c in TRANSFORM_BAD])
def test_transform_wrong_shape_is_a_value_error(name, fn, arg, bad):
    expect(ValueError, rf"\b{arg}\b", fn, bad)


@pytest.mark.parametrize("name, fn, arg, bad", TRANSFORM_BAD, ids=[c[0] for c in TRANSFORM_BAD])
def test_transform_complex_is_a_type_error(name, fn, arg, bad):
    good = {"t": np.ones(3), "s": np.ones(3), "axis": np.ones(3), "v": np.ones(3),
            "angles": np.ones(3), "q": np.array([0, 0, 0, 1.0]), "a": np.array([0, 0, 0, 1.0]),
            "m": np.eye(4)}[arg]
    if name == "polar":
        good = np.eye(3)
    expect(TypeError, rf"\b{arg}\b", fn, good.astype(complex))


# -- the C binding, called directly with junk ------------------------------------------------------

def _junk_pool():
    pool = [None, True, 0, 1, 3, -1, 2**31, 2**63 - 1, -2**63, 1.5, np.nan, "x", b"", (), [],
            object(), sk.Skeleton.chain(2, 1.0)]
    shapes = [(), (0,), (3,), (2, 3), (0, 3), (3, 3), (2, 2), (1, 3, 4), (2, 4, 4), (0, 2, 4, 4),
              (1, 2, 3, 4), (3, 4), (2, 1), (5, 2), (3,) * 5]
    for dtype in (np.float64, np.float32, np.int64, np.int32, np.uint8, np.uint16, np.complex128,
                  np.bool_):
        for shape in shapes:
            pool.append(np.ones(shape, dtype=dtype))
    pool.append(misaligned(np.ones((2, 3))))
    pool.append(byteswapped(np.ones((2, 3))))
    pool.append(readonly(np.ones((2, 3))))
    pool.append(np.ones((4, 6))[:, ::2])
    pool.append(np.ones((2, 3))[::-1])
    pool.append(np.ones((3, 4), order="F"))
    return pool


CORE_FUNCTIONS = sorted(n for n in dir(_core) if not n.startswith("_") and callable(getattr(_core, n)))
CLEAN = (TypeError, ValueError, IndexError, OverflowError, MemoryError)


def _arity(fn):
    doc = (fn.__doc__ or "").split("\n")[0]
    if "(" in doc and ")" in doc:
        inner = doc[doc.index("(") + 1:doc.index(")")].strip()
        return 0 if not inner else inner.count(",") + 1
    return None


@pytest.mark.parametrize("name", CORE_FUNCTIONS)
def test_core_functions_survive_junk(name):
    fn = getattr(_core, name)
    n = _arity(fn)
    pool = _junk_pool()
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    counts = sorted({c for c in (n, (n or 0) + 1, max((n or 1) - 1, 0), 0, 2) if c is not None})
    for _ in range(400):
        nargs = int(rng.choice(counts))
        args = [pool[int(rng.integers(len(pool)))] for _ in range(nargs)]
        frozen = _frozen([a for a in args if isinstance(a, np.ndarray) and not a.flags.writeable])
        try:
            fn(*args)
        except CLEAN:
            pass
        except Exception as exc:  # anything else is a binding bug (SystemError: a C-API misuse)
            pytest.fail(f"_core.{name}{tuple(type(a).__name__ for a in args)} raised "
                        f"{type(exc).__name__}: {exc}")
        _assert_unchanged(frozen)


@pytest.mark.parametrize("name", CORE_FUNCTIONS)
def test_core_functions_survive_right_arity_arrays(name):
    """Arrays of the right kinds in the right number but random shapes and dtypes: these get
    furthest into the binding's checks, where a missing one would crash."""
    fn = getattr(_core, name)
    n = _arity(fn)
    if not n:
        return
    rng = np.random.default_rng(7 + len(name))
    dtypes = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.uint16]
    for _ in range(600):
        args = []
        for _ in range(n):
            r = rng.random()
            if r < 0.15:
                args.append(None)
            elif r < 0.3:
                args.append(int(rng.choice([-1, 0, 1, 2, 3, 4, 64, 2**40])))
            else:
                nd = int(rng.integers(0, 5))
                shape = tuple(int(rng.choice([0, 1, 2, 3, 4])) for _ in range(nd))
                a = np.ones(shape, dtype=dtypes[int(rng.integers(len(dtypes)))])
                if rng.random() < 0.2 and a.ndim:
                    a = a[::-1]
                args.append(a)
        try:
            fn(*args)
        except CLEAN:
            pass
        except Exception as exc:
            pytest.fail(f"_core.{name} with {[getattr(a, 'shape', a) for a in args]} raised "
                        f"{type(exc).__name__}: {exc}")


def test_every_public_function_is_covered():
    """Keeps this matrix growing with the API: a new public callable must be added here."""
    covered = {"forward_kinematics", "skinning_palette", "Skeleton", "Influences", "rigid", "lbs",
               "dqs", "cor", "skin", "set_num_threads", "get_num_threads", "show_config",
               "SkinnedMesh", "Clip", "Channel", "bake", "bake_many", "centers_of_rotation"}
    public = {n for n in sk.__all__ if callable(getattr(sk, n)) and not inspect.ismodule(getattr(sk, n))}
    missing = public - covered
    assert not missing, f"public callables without bad-input cases: {sorted(missing)}"
    assert set(bind.__all__) - {"bones"} <= {b.split("-")[0] for b in BINDERS}
    assert set(wt.__all__) - {"unpack", "from_dense", "validate"} <= set(WEIGHT_TOOLS)


def test_set_num_threads_bad_input():
    before = sk.get_num_threads()
    for bad, exc in [(0, ValueError), (-1, ValueError), (1.5, TypeError), ("2", TypeError),
                     (None, TypeError), (True, TypeError)]:
        with pytest.raises(exc, match=r"\bn\b|threads"):
            sk.set_num_threads(bad)
        assert sk.get_num_threads() == before


def test_mesh_and_bake_bad_input(rig):
    s = rig.skeleton
    infl = sk.Influences(rig.indices, rig.weights, J)
    expect(TypeError, P, sk.SkinnedMesh, rig.positions.astype(np.int32), s, infl)
    expect(ValueError, P, sk.SkinnedMesh, rig.positions[:, :2].copy(), s, infl)
    expect(TypeError, "skeleton", sk.SkinnedMesh, rig.positions, "skeleton", infl)
    expect(TypeError, "influences", sk.SkinnedMesh, rig.positions, s, 3)
    expect(ValueError, "vertices|positions|influences", sk.SkinnedMesh, rig.positions[:-1].copy(), s, infl)
    expect(TypeError, "normals", sk.SkinnedMesh, rig.positions, s, infl, normals=rig.normals.astype(np.float32))
    expect(IndexError, "faces", sk.SkinnedMesh, rig.positions, s, infl, faces=np.array([[0, 1, V]]))
    expect(ValueError, "base", sk.SkinnedMesh, rig.positions, s, infl, base=np.zeros((4, 4)))
    mesh = sk.SkinnedMesh(rig.positions, s, infl)
    clip = sk.Clip(np.array([0.0, 1.0]), np.stack([s.local_bind, s.local_bind]))
    expect(TypeError, "mesh", sk.bake, "mesh", clip)
    expect(TypeError, "clip", sk.bake, mesh, "clip")
    expect(ValueError, "fps", sk.bake, mesh, clip, fps=0)
    expect(ValueError, "fps", sk.bake, mesh, clip, fps=np.nan)
    expect(ValueError, "out", sk.bake, mesh, clip, out=readonly(np.zeros((31, V, 3))))
    expect(TypeError, "out", sk.bake, mesh, clip, out=np.zeros((31, V, 3), np.float32))
    expect(ValueError, "out.*30 frames", sk.bake, mesh, clip, out=np.zeros((30, V, 3)))
    pal = mesh.palette(clip.sample(clip.frame_times(30)))
    expect(ValueError, "clip", sk.bake, mesh, np.where(pal == 1, np.inf, pal))
    expect(ValueError, "clip.*joints", sk.bake, mesh, pal[:, 1:])
    expect(ValueError, "clip", sk.bake, mesh, pal[0])
    expect(FileNotFoundError, "out", sk.bake, mesh, clip, out="/nonexistent-folder/anim.pc2")
    expect(ValueError, "threads", sk.bake, mesh, clip, threads=0)
    expect(ValueError, "method", sk.bake, mesh, clip, method="linear")
    expect(TypeError, r"jobs\[0\]: mesh", sk.bake_many, [("mesh", clip)])
    expect(ValueError, r"jobs\[0\]: fps", sk.bake_many, [(mesh, clip)] * 2, fps=-1)
    expect(TypeError, "jobs", sk.bake_many, None)
    expect(ValueError, "times|locals", sk.Clip, np.array([1.0, 0.0]), np.stack([s.local_bind] * 2))
    expect(ValueError, "times|locals", sk.Clip, np.array([0.0, np.nan]), np.stack([s.local_bind] * 2))
    expect(ValueError, "locals", sk.Clip, np.array([0.0, 1.0]), np.stack([s.local_bind * np.nan] * 2))


# -- centers of rotation ------------------------------------------------------------------------------

def test_centers_of_rotation_bad_input(rig):
    F = np.array([[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 0, 3]], np.int32)
    p, i, w = rig.positions, rig.indices, rig.weights
    fn = sk.centers_of_rotation
    assert np.isfinite(fn(p, F, i, w)).any()
    expect(IndexError, "faces", fn, p, np.where(F == 5, V, F), i, w)
    expect(IndexError, "faces", fn, p, np.where(F == 5, -1, F), i, w)
    expect(TypeError, "faces", fn, p, F.astype(np.float32), i, w)
    expect(ValueError, "faces", fn, p, F[:, :2].copy(), i, w)
    expect(ValueError, "faces", fn, p, np.zeros((2, 5), np.int32), i, w)
    expect(ValueError, "faces", fn, p, misaligned(F), i, w)
    expect(TypeError, P, fn, p.astype(np.float16), F, i, w)
    expect(TypeError, P, fn, byteswapped(p), F, i, w)
    expect(ValueError, P, fn, misaligned(p), F, i, w)
    expect(ValueError, P, fn, p[:, :2].copy(), F, i, w)
    expect(ValueError, "indices", fn, p, F, i[:-1].copy(), w[:-1].copy())
    expect(TypeError, "weights", fn, p, F, i, w.astype(np.float32))
    expect(ValueError, "weights", fn, p, F, i, -w)
    expect(ValueError, "weights", fn, p, F, i, np.full_like(w, np.nan))
    expect(IndexError, "indices", fn, p, F, i - 10, w)
    expect(TypeError, "indices", fn, p, F, i.astype(np.float64), w)
    for sigma, exc in ((0.0, ValueError), (-0.1, ValueError), (np.nan, ValueError),
                       (np.inf, ValueError), ("0.1", TypeError), (None, TypeError)):
        expect(exc, "sigma", fn, p, F, i, w, sigma=sigma)
    expect(ValueError, "subdivide", fn, p, F, i, w, subdivide=0.0)
    expect(TypeError, "subdivide", fn, p, F, i, w, subdivide=[0.1])
    expect(ValueError, "threads", fn, p, F, i, w, threads=0)
    expect(TypeError, "influences", fn, p, F, i)
