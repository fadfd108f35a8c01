"""Weight tools: clean, limit, quantize, pack, convert and validate fixed-K influences.

Influences are ``indices`` ``(V, K)`` (any integer dtype) and ``weights`` ``(V, K)``, float32 /
float64, or unorm uint8 / uint16 meaning ``w / 255`` / ``w / 65535`` (DESIGN.md section 1).  The
index of a zero weight is never read; the tools write 0 there.  Each tool returns new arrays and
never modifies its inputs.  These are offline tools (run once per asset, not per frame): they
are plain vectorised NumPy.

:func:`validate` reports the glTF 2.0 rules for JOINTS_n / WEIGHTS_n (specification section
3.7.3.3) as readable sentences (it raises only for invalid arguments, never for problems in the
weights); :func:`check` raises on the first problem.
"""
from __future__ import annotations

import numpy as np

from ._checks import nonneg_number, positive_int

__all__ = ["normalize", "prune", "limit", "quantize", "pack", "unpack", "to_dense",
           "from_dense", "validate", "check"]

_UNORM = {np.dtype(np.uint8): 255, np.dtype(np.uint16): 65535}
_BITS = {8: np.uint8, 16: np.uint16}


# -- helpers ---------------------------------------------------------------------------------------

def _weights(weights, name="weights"):
    w = weights if isinstance(weights, np.ndarray) else np.asarray(weights)
    if w.dtype.kind not in "fu" or (w.dtype.kind == "u" and w.dtype not in _UNORM):
        raise TypeError(f"{name} must be float32, float64, uint8 or uint16, got {w.dtype}")
    if w.ndim != 2:
        raise ValueError(f"{name} must have shape (V, K), got {w.shape}")
    if w.shape[1] < 1:
        raise ValueError(f"{name} must have K >= 1 columns")
    return w


def _indices(indices, shape):
    i = indices if isinstance(indices, np.ndarray) else np.asarray(indices)
    if i.dtype.kind not in "iu":
        raise TypeError(f"indices must have an integer dtype, got {i.dtype}")
    if i.shape != shape:
        raise ValueError(f"indices has shape {i.shape}, weights has {shape}")
    return i


def _pair(indices, weights):
    w = _weights(weights)
    return _indices(indices, w.shape), w


def _finite_nonneg(w, name):
    """ValueError naming ``name`` and the first vertex (row) with a NaN, inf or negative value."""
    bad = ~np.isfinite(w)
    if bad.any():
        raise ValueError(f"{name}: NaN or inf at vertex {np.flatnonzero(bad.any(1))[0]}")
    neg = w < 0
    if neg.any():
        raise ValueError(f"{name}: negative weight at vertex {np.flatnonzero(neg.any(1))[0]}")


def _as_float(w, name="weights"):
    """Float weights (float64 for unorm input) and a function giving the caller's form back."""
    if w.dtype in _UNORM:
        scale = _UNORM[w.dtype]
        bits = 8 if w.dtype == np.uint8 else 16
        return w.astype(np.float64) / scale, lambda f: quantize(f, bits=bits)
    _finite_nonneg(w, name)
    return w.astype(w.dtype, copy=True), lambda f: f


def _flag(x, name):
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(x).__name__}")
    return bool(x)


def _sorted_slots(indices, weights):
    """Slots of each row in decreasing weight, ties to the smaller joint index, zero weights
    last with index 0; returns (indices, weights) reordered."""
    idx = np.where(weights > 0, indices, 0)
    # lexsort sorts by the last key first: weight descending, then joint index ascending.
    order = np.lexsort((idx, -weights), axis=1) if weights.size else np.zeros(weights.shape, int)
    return np.take_along_axis(idx, order, 1), np.take_along_axis(weights, order, 1)


def _finish(i, f, back):
    """The caller's weight form from float weights, with index 0 wherever the weight is 0."""
    w = back(f)
    return np.where(w != 0, i, 0).astype(i.dtype), w


def _renormalize(w):
    """Rows of finite weights >= 0 scaled to sum to 1; rows of zeros stay zeros."""
    with np.errstate(over="ignore"):
        s = w.sum(axis=1, keepdims=True)
    big = np.isinf(s[:, 0])
    if big.any():
        # The sum overflowed (weights near the dtype's maximum): scale those rows by a power of
        # two that brings the largest weight into [0.5, 1).  That is exact, so the result is the
        # one an unbounded exponent would give; other rows are untouched.
        w = w.copy()
        e = np.frexp(w[big].max(axis=1))[1]
        w[big] = np.ldexp(w[big], -e[:, None])
        s[big] = w[big].sum(axis=1, keepdims=True)
    return np.divide(w, s, out=np.zeros_like(w), where=s > 0)


# -- tools -----------------------------------------------------------------------------------------

def normalize(indices, weights, zero="keep", root=0):
    """Scale each row of weights to sum to 1.

    Parameters
    ----------
    indices : (V, K) int
    weights : (V, K) float32, float64, uint8 or uint16 (unorm rows come back summing to exactly
        255 / 65535)
    zero : {"keep", "root", "raise"}
        What to do with a row summing to 0: leave it at 0 (such a vertex is not skinned: the
        kernels output it unchanged), give it weight 1 on joint ``root``, or raise ValueError
        naming the first such vertex.
    root : int >= 0
        The joint for ``zero="root"``; it must fit the indices' dtype.

    Returns
    -------
    indices : (V, K), the input's dtype (zero-weight slots set to 0)
    weights : (V, K), the input's dtype
    """
    i, w = _pair(indices, weights)
    if not isinstance(zero, str):
        raise TypeError(f"zero must be 'keep', 'root' or 'raise', got {type(zero).__name__}")
    if zero not in ("keep", "root", "raise"):
        raise ValueError(f"zero must be 'keep', 'root' or 'raise', got {zero!r}")
    root = positive_int(root, "root", minimum=0)
    if root > np.iinfo(i.dtype).max:
        raise ValueError(f"root must fit the indices' dtype {i.dtype} (at most "
                         f"{np.iinfo(i.dtype).max}), got {root}")
    f, back = _as_float(w)
    empty = ~(f > 0).any(axis=1)  # the weights are >= 0: a row summing to 0
    if empty.any():
        if zero == "raise":
            raise ValueError(f"weights: vertex {np.flatnonzero(empty)[0]} has no weight "
                             "(all zero); normalize(zero='keep' or 'root') handles such rows")
    f = _renormalize(f)
    i = i.copy()
    if zero == "root" and empty.any():
        f[empty, 0] = 1
        i[empty, 0] = root
    return _finish(i, f, back)


def prune(indices, weights, threshold=0.01, normalize=True):
    """Drop influences below ``threshold`` (Blender's "Clean").

    A row's largest weight is never dropped, so no vertex loses all its joints.  Dropped slots
    get weight 0 and index 0.

    Parameters
    ----------
    indices : (V, K) int
    weights : (V, K) float or unorm
    threshold : float, finite, >= 0
        Weights ``< threshold`` (in float units, also for unorm input) are dropped.
    normalize : bool
        Rescale the rows to sum to 1 afterwards (default).

    Returns
    -------
    indices, weights : (V, K), the inputs' dtypes
    """
    i, w = _pair(indices, weights)
    t = nonneg_number(threshold, "threshold")
    normalize = _flag(normalize, "normalize")
    f, back = _as_float(w)
    keep = f >= t
    if f.shape[0]:
        keep[np.arange(f.shape[0]), np.argmax(f, axis=1)] = True
    f = np.where(keep, f, 0)
    if normalize:
        f = _renormalize(f)
    return _finish(i, f, back)


def limit(indices, weights, k=4, normalize=True):
    """Keep the ``k`` largest influences per vertex, sorted, renormalized.

    Slots come out in decreasing weight (ties: smaller joint index); a row with fewer than
    ``k`` influences is padded with empty slots (index 0, weight 0).

    Parameters
    ----------
    indices : (V, K) int
    weights : (V, K) float or unorm
    k : int >= 1
    normalize : bool
        Rescale the kept weights to sum to 1 (default).

    Returns
    -------
    indices : (V, k), the input's dtype
    weights : (V, k), the input's dtype
    """
    i, w = _pair(indices, weights)
    k = positive_int(k, "k")
    normalize = _flag(normalize, "normalize")
    f, back = _as_float(w)
    si, sf = _sorted_slots(i, f)
    V, K = sf.shape
    if K < k:
        si = np.concatenate([si, np.zeros((V, k - K), si.dtype)], axis=1)
        sf = np.concatenate([sf, np.zeros((V, k - K), sf.dtype)], axis=1)
    si, sf = si[:, :k], sf[:, :k]
    if normalize:
        sf = _renormalize(sf)
    return _finish(si.astype(i.dtype), sf, back)


def quantize(weights, bits=8):
    """Quantize weights to unorm integers whose rows sum to exactly 255 or 65535 (glTF).

    Each row is normalized, scaled to ``m = 2**bits - 1`` and floored; the ``m - sum`` units
    left go to the slots with the largest remainders (ties: the earlier slot), so every
    quantized weight is within one step of ``w * m`` and each row sums to ``m`` exactly.  A row
    of zeros stays zeros (a non-skinned vertex).

    Parameters
    ----------
    weights : (V, K) float32, float64 (>= 0, finite), or uint8 / uint16 (re-quantized)
    bits : {8, 16}

    Returns
    -------
    (V, K) uint8 or uint16
    """
    w = _weights(weights)
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise TypeError(f"bits must be the int 8 or 16, got {type(bits).__name__}")
    if bits not in _BITS:
        raise ValueError(f"bits must be 8 or 16, got {bits!r}")
    bits = int(bits)
    if w.dtype in _UNORM:
        f = w.astype(np.float64) / _UNORM[w.dtype]
    else:
        f, _ = _as_float(w)
        f = f.astype(np.float64)
    m = (1 << bits) - 1
    x = _renormalize(f) * m
    q = np.floor(x)
    rem = x - q
    left = np.rint(m - q.sum(axis=1)).astype(np.int64)
    left[~(f > 0).any(axis=1)] = 0  # rows of zeros
    order = np.argsort(-rem, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(w.shape[1])[None, :].repeat(w.shape[0], 0), 1)
    q += rank < left[:, None]
    return q.astype(_BITS[bits])


def pack(weights, tol=1e-6):
    """Seed 000's compact form: drop the last weight, implied as ``1 - sum(the others)``.

    Parameters
    ----------
    weights : (V, K) float or unorm, K >= 2, rows summing to 1 (within ``tol``; exactly 255 /
        65535 for unorm), or the dropped weight would be wrong: ValueError naming the vertex.
    tol : float, finite, >= 0
        How far a float row's sum may be from 1.

    Returns
    -------
    (V, K - 1), the input's dtype
    """
    w = _weights(weights)
    tol = nonneg_number(tol, "tol")
    if w.shape[1] < 2:
        raise ValueError("weights: pack needs K >= 2 columns")
    if w.dtype in _UNORM:
        bad = w.astype(np.int64).sum(axis=1) != _UNORM[w.dtype]
    else:
        f, _ = _as_float(w)
        with np.errstate(over="ignore"):  # an overflowing sum is inf: not 1
            bad = np.abs(f.astype(np.float64).sum(axis=1) - 1) > tol
    if bad.any():
        raise ValueError(f"weights: vertex {np.flatnonzero(bad)[0]} does not sum to 1, so its "
                         "last weight cannot be implied; normalize (or quantize) first")
    return w[:, :-1].copy()


def unpack(packed, tol=1e-6):
    """Seed 000's compact form back to K weights: the last is ``1 - sum(the others)`` (255 or
    65535 minus the sum for unorm).

    Parameters
    ----------
    packed : (V, K - 1) float or unorm
    tol : float, finite, >= 0
        A float row whose stored weights exceed 1 by more than ``tol`` is a ValueError; within
        ``tol`` the implied weight is clamped to 0.

    Returns
    -------
    (V, K), the input's dtype
    """
    p = packed if isinstance(packed, np.ndarray) else np.asarray(packed)
    if p.dtype.kind not in "fu" or (p.dtype.kind == "u" and p.dtype not in _UNORM):
        raise TypeError(f"packed must be float32, float64, uint8 or uint16, got {p.dtype}")
    if p.ndim != 2:
        raise ValueError(f"packed must have shape (V, K - 1), got {p.shape}")
    tol = nonneg_number(tol, "tol")
    if p.dtype in _UNORM:
        last = _UNORM[p.dtype] - p.astype(np.int64).sum(axis=1)
        bad = last < 0
    else:
        f, _ = _as_float(p, "packed")
        with np.errstate(over="ignore"):  # an overflowing sum is inf: more than 1
            last = 1 - f.astype(np.float64).sum(axis=1)
        bad = last < -tol
        last = np.maximum(last, 0)
    if bad.any():
        raise ValueError(f"packed: vertex {np.flatnonzero(bad)[0]} has stored weights summing "
                         "to more than 1")
    return np.concatenate([p, last[:, None].astype(p.dtype)], axis=1)


def to_dense(indices, weights, n_joints):
    """A ``(V, J)`` matrix of weights (a joint listed twice in a row gets the sum).

    Parameters
    ----------
    indices : (V, K) int
    weights : (V, K) float or unorm (unorm gives float64 ``w / 255`` or ``w / 65535``)
    n_joints : int

    Returns
    -------
    (V, J), the weights' float dtype.  IndexError naming the first vertex with a non-zero weight
    on a joint outside ``[0, n_joints)``; ValueError for NaN, inf or negative weights.
    """
    i, w = _pair(indices, weights)
    J = positive_int(n_joints, "n_joints")
    f, _ = _as_float(w)  # NaN / inf or negative weights: ValueError, as the other tools
    nz = f != 0
    bad = nz & ((i < 0) | (i >= J))
    if bad.any():
        raise IndexError(f"indices: joint index out of range at vertex "
                         f"{np.flatnonzero(bad.any(1))[0]}")
    V = f.shape[0]
    rows = np.broadcast_to(np.arange(V)[:, None], f.shape)
    flat = rows[nz] * J + i[nz].astype(np.int64)
    dense = np.bincount(flat, weights=f[nz].astype(np.float64), minlength=V * J)
    return dense.reshape(V, J).astype(f.dtype, copy=False)


def from_dense(dense, k=None):
    """Fixed-K influences from a ``(V, J)`` weight matrix: each row's ``k`` largest, sorted.

    Parameters
    ----------
    dense : (V, J) float, finite, >= 0 (else ValueError naming the first such vertex)
    k : int, optional
        Slots per vertex; by default the largest number of non-zero weights in any row (at
        least 1), so nothing is lost.  Weights are not renormalized.

    Returns
    -------
    indices : (V, k) int32
    weights : (V, k), the dense dtype
    """
    d = dense if isinstance(dense, np.ndarray) else np.asarray(dense)
    if d.dtype.kind != "f":
        raise TypeError(f"dense must be float32 or float64, got {d.dtype}")
    if d.ndim != 2:
        raise ValueError(f"dense must have shape (V, J), got {d.shape}")
    _finite_nonneg(d, "dense")
    if k is None:
        k = max(1, int((d != 0).sum(axis=1).max())) if d.shape[0] else 1
    k = positive_int(k, "k")
    idx = np.broadcast_to(np.arange(d.shape[1], dtype=np.int32), d.shape)
    si, sw = _sorted_slots(idx, d)
    V, J = sw.shape
    if J < k:
        si = np.concatenate([si, np.zeros((V, k - J), si.dtype)], axis=1)
        sw = np.concatenate([sw, np.zeros((V, k - J), sw.dtype)], axis=1)
    si, sw = si[:, :k], sw[:, :k]
    return np.where(sw != 0, si, 0).astype(np.int32), np.ascontiguousarray(sw)


# -- validation ------------------------------------------------------------------------------------

def _first(mask):
    rows = np.flatnonzero(mask.any(axis=1)) if mask.ndim == 2 else np.flatnonzero(mask)
    return rows.size, (int(rows[0]) if rows.size else -1)


def _problems(indices, weights, tol, n_joints):
    """[(exception type, message)] for every glTF rule broken, in a fixed order.  Invalid
    ``tol`` or ``n_joints`` (caller errors, not problems in the weights) raise."""
    tol = nonneg_number(tol, "tol")
    if n_joints is not None:
        n_joints = positive_int(n_joints, "n_joints")
    out = []
    try:
        w = _weights(weights)
        i = _indices(indices, w.shape)
    except (TypeError, ValueError) as exc:
        return [(type(exc), str(exc))]
    unorm = w.dtype in _UNORM
    f = w.astype(np.float64) / _UNORM[w.dtype] if unorm else w.astype(np.float64)
    if not unorm:
        n, v = _first(~np.isfinite(f))
        if n:
            out.append((ValueError, f"weights must be finite (glTF: weights are numbers in "
                        f"[0, 1]): {n} vertices have NaN or inf, the first is vertex {v}"))
        n, v = _first(f < 0)
        if n:
            s = int(np.flatnonzero(f[v] < 0)[0])
            out.append((ValueError, f"weights must not be negative (glTF 3.7.3.3): {n} vertices "
                        f"break it, the first is vertex {v} (slot {s}, weight {f[v, s]:g})"))
    nz = f != 0
    if n_joints is not None:
        bad = nz & ((i < 0) | (i >= n_joints))
        n, v = _first(bad)
        if n:
            s = int(np.flatnonzero(bad[v])[0])
            out.append((IndexError, f"joint indices must be within the skin's {n_joints} joints "
                        f"(glTF 3.7.3.3): {n} vertices break it, the first is vertex {v} (slot "
                        f"{s}, joint {int(i[v, s])})"))
    if w.shape[1] > 1 and w.shape[0]:
        key = np.where(nz, i.astype(np.int64), -1 - np.arange(w.shape[1]))
        srt = np.sort(key, axis=1)
        dup = np.zeros(w.shape, bool)
        dup[:, 1:] = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)
        n, v = _first(dup)
        if n:
            j = int(srt[v, 1:][dup[v, 1:]][0])
            out.append((ValueError, f"a joint must not appear twice with non-zero weight in one "
                        f"vertex (glTF 3.7.3.3): {n} vertices break it, the first is vertex {v} "
                        f"(joint {j})"))
    if unorm:
        m = _UNORM[w.dtype]
        sums = w.astype(np.int64).sum(axis=1)
        n, v = _first(sums != m)
        if n:
            out.append((ValueError, f"unorm {w.dtype} weights must sum to exactly {m} before "
                        f"normalization (glTF 3.7.3.3): {n} vertices break it, the first is "
                        f"vertex {v} (sum {int(sums[v])})"))
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(f.sum(axis=1) - 1)
            n, v = _first(err > tol)
            if n:
                out.append((ValueError, f"weights must sum to 1 within {tol:g} (glTF 3.7.3.3): "
                            f"{n} vertices break it, the first is vertex {v} (sum "
                            f"{f[v].sum():.9g})"))
    return out


def validate(indices, weights, tol=1e-6, n_joints=None):
    """Every glTF 2.0 skinning rule the influences break, as readable sentences.

    The rules (glTF 2.0 specification, section 3.7.3.3): weights finite and not negative; a
    joint at most once per vertex with non-zero weight; float rows summing to 1 within ``tol``;
    unorm uint8 / uint16 rows summing to exactly 255 / 65535; and, when ``n_joints`` is given,
    every joint index with a non-zero weight in ``[0, n_joints)``.  Each message names the rule,
    how many vertices break it and the first one.  Never raises for problems in ``indices`` or
    ``weights`` (a wrong dtype or shape is reported too); invalid ``tol`` or ``n_joints`` are the
    caller's errors: TypeError or ValueError naming the argument.

    Parameters
    ----------
    indices : (V, K) int
    weights : (V, K) float32, float64, uint8 or uint16
    tol : float, finite, >= 0
    n_joints : int >= 1, optional

    Returns
    -------
    list of str, empty when the influences are valid
    """
    return [msg for _, msg in _problems(indices, weights, tol, n_joints)]


def check(indices, weights, tol=1e-6, n_joints=None):
    """Raise on the first problem :func:`validate` finds: IndexError for a joint index out of
    range, TypeError for a wrong dtype, ValueError otherwise (DESIGN.md section 5).  Returns None
    when the influences are valid.  Invalid ``tol`` or ``n_joints``: TypeError or ValueError
    naming the argument, as :func:`validate`."""
    probs = _problems(indices, weights, tol, n_joints)
    if probs:
        exc, msg = probs[0]
        raise exc(msg)
