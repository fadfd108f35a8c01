"""Skinning: rigid, LBS and DQS over NumPy buffers without copying them (DESIGN.md §2, §4, §5).

Vertex-sized arrays (positions, normals, tangents, indices, weights, outputs) are handed to the C
core as they are, strides and all; a wrong one raises instead of being converted.  Joint-sized
arrays (palettes, pivots) are checked and cast here, which is cheap.
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._checks import real_array, result_float_dtype, transforms
from ._config import get_num_threads, resolve_strict, resolve_threads

__all__ = ["Influences", "rigid", "lbs", "dqs", "cor", "skin"]

_METHOD = {"rigid": 0, "lbs": 1, "dqs": 2, "cor": 3, "blend": 4}
_RULE = {"joint": 0, "blend": 1}
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


class Influences:
    """Per-vertex joint influences, validated once and reused every frame.

    Parameters
    ----------
    indices : (V, K) uint8, uint16, uint32, int32 or int64
        Joint of each slot; the index of a zero weight is never read (glTF leaves it 0).
    weights : (V, K) float32 or float64 (the positions' dtype), or unorm uint8 / uint16
        Used as given (no renormalization; see ``skinkit.weights.normalize``).
    n_joints : int
        Number of joints of the palettes these influences will be used with.

    Validation (once, here): finite non-negative weights, and an index in ``[0, n_joints)``
    wherever the weight is non-zero.  The arrays are kept by reference, not copied: changing
    them afterwards voids the validation (a kernel then reads a bad index as joint 0; it never
    reads outside the palette).
    """

    __slots__ = ("indices", "weights", "n_joints")

    def __init__(self, indices, weights, n_joints):
        if isinstance(n_joints, bool) or not isinstance(n_joints, (int, np.integer)):
            raise TypeError(f"n_joints must be an int, got {type(n_joints).__name__}")
        if not 1 <= n_joints <= np.iinfo(np.int64).max:
            raise ValueError(f"n_joints must be in [1, 2**63), got {n_joints}")
        indices = indices if isinstance(indices, np.ndarray) else np.asarray(indices)
        weights = weights if isinstance(weights, np.ndarray) else np.asarray(weights)
        _core.validate_influences(indices, weights, int(n_joints))
        self.indices, self.weights, self.n_joints = indices, weights, int(n_joints)

    @property
    def shape(self):
        """``(V, K)``."""
        return self.indices.shape

    def __len__(self):
        return self.indices.shape[0]

    def __repr__(self):
        V, K = self.indices.shape
        return (f"Influences(V={V}, K={K}, n_joints={self.n_joints}, "
                f"indices {self.indices.dtype}, weights {self.weights.dtype})")

    def astype(self, dtype):
        """The same influences with float weights of ``dtype`` (a copy; unorm weights decoded)."""
        dtype = result_float_dtype(dtype)
        w = self.weights
        scale = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}.get(w.dtype, 1.0)
        return Influences(self.indices, (w / scale).astype(dtype), self.n_joints)

    def __getstate__(self):
        return {"indices": self.indices, "weights": self.weights, "n_joints": self.n_joints}

    def __setstate__(self, state):
        self.__init__(state["indices"], state["weights"], state["n_joints"])

    def __eq__(self, other):
        if not isinstance(other, Influences):
            return NotImplemented
        return (self.n_joints == other.n_joints and self.indices.dtype == other.indices.dtype
                and self.weights.dtype == other.weights.dtype
                and np.array_equal(self.indices, other.indices)
                and np.array_equal(self.weights, other.weights))

    __hash__ = None


def _positions(positions):
    if not isinstance(positions, np.ndarray):
        raise TypeError(f"positions must be a numpy.ndarray, not {type(positions).__name__}")
    dt = positions.dtype
    # (identity first: comparing a dtype with a type object converts the type, about 0.2 us)
    if dt is not _F32 and dt is not _F64 and dt not in (np.float32, np.float64):
        swapped = dt.kind == "f" and not dt.isnative
        raise TypeError(f"positions has dtype {dt}, expected float32 or float64"
                        + (" in native byte order (it is byte-swapped)" if swapped else ""))
    if positions.ndim not in (2, 3) or positions.shape[-1] != 3:
        raise ValueError(f"positions must have shape (V, 3) or (F, V, 3), got {positions.shape}")
    return positions


def _palette(palette, dtype):
    # The common case, a C-contiguous (J, 4, 4) or (F, J, 4, 4) palette of the positions' dtype,
    # goes to C as it is: C checks its last rows as transforms() does and every value, and reads
    # the 3x4 parts (checking and slicing here took 3.8 of a call's 10.3 us of fixed cost).
    # (the shape and the flags read once each: 0.75x this step's time)
    if type(palette) is np.ndarray and palette.dtype == dtype:
        shape = palette.shape
        if len(shape) in (3, 4) and shape[-1] == 4 and shape[-2] == 4 and shape[-3] > 0:
            flags = palette.flags
            if flags.c_contiguous and flags.aligned:
                return (palette if len(shape) == 4 else palette[None]), len(shape) == 4
    # finite=False: the kernels' prepare step checks every value in C, after the cast to the
    # positions' dtype (so a float64 value too large for float32 is refused too), before anything
    # is written; a NaN in the last row fails the last-row test.  (A call's fixed cost matters
    # for small meshes: NumPy's check took 1.6-2.8 us of 15.)
    k, _ = transforms(palette, "palette", batch_ndim=(1, 2), finite=False)
    batched = k.ndim == 4
    if k.shape[-3] == 0:
        raise ValueError("palette must have at least one joint (J = 0)")
    if k.dtype == dtype:
        k = np.ascontiguousarray(k[..., :3, :])
    else:
        with np.errstate(over="ignore"):  # a value too big for float32 becomes inf: refused in C
            k = np.ascontiguousarray(k[..., :3, :], dtype=dtype)
    return (k if batched else k[None]), batched


def _pivots(pivots, n_joints, dtype):
    if pivots is None:
        return None
    if hasattr(pivots, "pivots") and callable(pivots.pivots):  # a Skeleton
        pivots = pivots.pivots()
    p = real_array(pivots, "pivots")
    if p.shape != (n_joints, 3):
        raise ValueError(f"pivots must have shape ({n_joints}, 3), got {p.shape}")
    if p.dtype.kind == "f" and not np.all(np.isfinite(p)):
        raise ValueError("pivots contains NaN or inf")
    with np.errstate(over="ignore"):  # a value too big for float32 becomes inf: refused in C
        return np.ascontiguousarray(p, dtype=dtype)


def _influences(args, method):
    """(indices, weights, validated_joints, rest) from the two call forms."""
    if not args:
        raise TypeError(f"{method}() needs influences (an Influences, or indices and weights) and a palette")
    if isinstance(args[0], Influences):
        infl = args[0]
        return infl.indices, infl.weights, infl.n_joints, args[1:]
    if len(args) < 2:
        raise TypeError(f"{method}() needs indices, weights and a palette")
    return args[0], args[1], None, args[2:]


def _blend_amount(blend, dtype):
    """A (V,) array as it is (checked in C, never copied), or one number as a 0-d array."""
    if blend is None:
        raise ValueError("blend is required for method='blend': a number or a (V,) array in "
                         "[0, 1] (0 = LBS, 1 = DQS)")
    if isinstance(blend, np.ndarray) and blend.ndim > 0:
        return blend
    if isinstance(blend, (bool, np.bool_)) or not isinstance(blend, (int, float, np.number,
                                                                     np.ndarray)):
        raise TypeError(f"blend must be a number or a numpy.ndarray, not {type(blend).__name__}")
    if np.iscomplexobj(blend):
        raise TypeError("blend must be real")
    b = float(blend)
    if not 0.0 <= b <= 1.0:
        raise ValueError(f"blend must be in [0, 1], got {b}")
    return np.array(b, dtype=dtype)


def _run(method, positions, indices, weights, palette, validated_joints, *, pivots=None,
         normals=None, tangents=None, out=None, out_normals=None, out_tangents=None,
         normal_rule="joint", threads=None, strict=None, centers=None, blend=None):
    positions = _positions(positions)
    if method == "cor" and centers is not None and not isinstance(centers, np.ndarray):
        raise TypeError(f"centers must be a numpy.ndarray, not {type(centers).__name__}")
    if method == "blend":
        blend = _blend_amount(blend, positions.dtype)
    if strict is not None:  # nothing V-sized is ever copied, so strict mode has nothing to refuse
        resolve_strict(strict)
    n_threads = get_num_threads() if threads is None else resolve_threads(threads)
    if normal_rule not in _RULE:
        raise ValueError(f"normal_rule must be 'joint' or 'blend', got {normal_rule!r}")
    k, pal_batched = _palette(palette, positions.dtype)
    J = k.shape[1]
    if validated_joints is not None and validated_joints > J:
        raise ValueError(f"influences were validated for {validated_joints} joints, the palette "
                         f"has {J}")
    piv = None if pivots is None else _pivots(pivots, J, positions.dtype)
    batched = pal_batched or positions.ndim == 3
    V = positions.shape[-2]
    if batched:
        F = k.shape[0] if pal_batched else positions.shape[0]
        if positions.ndim == 3 and pal_batched and positions.shape[0] != k.shape[0]:
            raise ValueError(f"positions has {positions.shape[0]} frames, palette has {k.shape[0]}")
        shape = (F, V)
    else:
        shape = (V,)

    # (written out rather than looped over: a small call's fixed cost is mostly this wrapper)
    if normals is not None and not isinstance(normals, np.ndarray):
        raise TypeError(f"normals must be a numpy.ndarray, not {type(normals).__name__}")
    if tangents is not None and not isinstance(tangents, np.ndarray):
        raise TypeError(f"tangents must be a numpy.ndarray, not {type(tangents).__name__}")
    if normals is None and out_normals is not None:
        raise ValueError("out_normals is given without its input")
    if tangents is None and out_tangents is not None:
        raise ValueError("out_tangents is given without its input")
    dtype = positions.dtype
    rows = shape + (3,)
    # (_out_shape only where an output's shape is not the expected one: a call less each)
    if out is None:
        out = np.empty(rows, dtype=dtype)
    elif type(out) is not np.ndarray or out.shape != rows:
        _out_shape(out, "out", rows, dtype)
    if out_normals is not None:
        if type(out_normals) is not np.ndarray or out_normals.shape != rows:
            _out_shape(out_normals, "out_normals", rows, dtype)
    elif normals is not None:
        out_normals = np.empty(rows, dtype=dtype)
    if out_tangents is not None:
        _out_shape(out_tangents, "out_tangents", shape + (4,), dtype)
    elif tangents is not None:
        out_tangents = np.empty(shape + (4,), dtype=dtype)
    _core.skin(_METHOD[method], positions, normals, tangents, out, out_normals, out_tangents,
               indices, weights, k, piv, J, _RULE[normal_rule], n_threads,
               validated_joints is not None, centers, blend)
    if out_normals is None:
        return out if out_tangents is None else (out, out_tangents)
    return (out, out_normals) if out_tangents is None else (out, out_normals, out_tangents)


def _out_shape(arr, name, want, dtype):
    """The binding checks outputs fully; naming a wrongly shaped one here keeps the message
    about the output rather than about the batch it was meant for."""
    if isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.shape != want:
        raise ValueError(f"{name} has shape {arr.shape}, expected {want}")


def lbs(positions, *args, normals=None, tangents=None, out=None, out_normals=None,
        out_tangents=None, normal_rule="joint", threads=None, strict=None):
    """Linear blend skinning, ``p' = Σ w_i K[j_i] p`` (seeds 000, 002, 004).

    Call as ``lbs(positions, influences, palette)`` or ``lbs(positions, indices, weights,
    palette)``.

    Parameters
    ----------
    positions : (V, 3) or (F, V, 3) float32 or float64
        Read in place, any strides (a ``buf[:, 0:3]`` view of an interleaved buffer works).
    influences : Influences, or indices (V, K) and weights (V, K)
        Raw arrays are validated before anything is written (IndexError naming the vertex for an
        index out of range with a non-zero weight; ValueError for NaN or negative weights).
    palette : (J, 4, 4), (J, 3, 4) or (F, J, 4, 4)
        Skinning matrices (``Skeleton.palette``); checked every call (finite, affine).
    normals : (V, 3) or (F, V, 3), optional
        Normal rule ``"joint"`` (default): ``normalize(Σ w_i cof(A_i) n)``; ``"blend"``:
        ``normalize(cof(Σ w_i A_i) n)``.
    tangents : (V, 4) or (F, V, 4), optional
        ``normalize(Σ w_i A_i t)`` with the handedness ``w`` kept.
    out, out_normals, out_tangents : ndarray, optional
        Written in place (strided views allowed) and returned.  ``out`` may be ``positions``
        itself (unbatched) for in-place skinning; no other overlap is allowed.
    threads : int, optional
        Default ``skinkit.get_num_threads()`` (1 unless set).  Results are bit-identical for any
        thread count.
    strict : bool, optional
        skinkit never copies a vertex-sized array; ``strict=True`` (or ``SKINKIT_STRICT=1``) is
        accepted so code can state that requirement.

    Returns
    -------
    positions, or ``(positions, normals)``, or ``(positions, normals, tangents)``; (V, 3) or
    (F, V, 3) in the positions' dtype.  A vertex whose weights sum to <= 1e-6 is copied.
    """
    idx, w, vj, rest = _influences(args, "lbs")
    if len(rest) != 1:
        raise TypeError("lbs() takes positions, influences (or indices, weights) and palette")
    return _run("lbs", positions, idx, w, rest[0], vj, normals=normals, tangents=tangents,
                out=out, out_normals=out_normals, out_tangents=out_tangents,
                normal_rule=normal_rule, threads=threads, strict=strict)


def dqs(positions, *args, pivots=None, normals=None, tangents=None, out=None, out_normals=None,
        out_tangents=None, threads=None, strict=None):
    """Dual quaternion skinning (seed 002; Kavan et al. 2008), same call forms as :func:`lbs`.

    Each joint's skinning matrix is split ``K = Rigid ∘ Scale`` with the scale / shear taken about
    the joint's bind position (``pivots``, (J, 3), or a ``Skeleton`` to take them from): scale
    parts blend linearly, rigid parts as dual quaternions in the hemisphere of the vertex's
    largest-weight joint.  A palette with scale or shear and no ``pivots`` raises ValueError.
    Normals rotate with the blended rotation (after the cofactor of the blended scale).
    """
    idx, w, vj, rest = _influences(args, "dqs")
    if len(rest) != 1:
        raise TypeError("dqs() takes positions, influences (or indices, weights) and palette")
    return _run("dqs", positions, idx, w, rest[0], vj, pivots=pivots, normals=normals,
                tangents=tangents, out=out, out_normals=out_normals, out_tangents=out_tangents,
                threads=threads, strict=strict)


def cor(positions, *args, centers, pivots=None, normals=None, tangents=None, out=None,
        out_normals=None, out_tangents=None, normal_rule="joint", threads=None, strict=None):
    """Skinning with optimized centers of rotation (Le & Hodgins 2016), same call forms as
    :func:`lbs`.

    Per vertex with center ``c``: the influences' rotations blend as in :func:`dqs` (unit
    quaternions in the hemisphere of the largest-weight joint, normalized) into ``R``, and the
    translation comes from the LBS of the center: ``p' = R (p - c) + LBS(c)``.  No candy
    wrapper under twist (like DQS) and no bulge at bends (unlike DQS), at about DQS's cost.
    Normals rotate with ``R``.

    Scaled palettes follow DQS's two-phase split: each joint's matrix is ``Rigid ∘ Scale``
    about its bind position (``pivots``, required when the palette has scale or shear); the
    scale parts blend with ``w / Σw`` into ``Sb`` and move both the vertex and its center, then
    ``p' = R (Sb p - Sb c) + Σ w_i Rigid_i(Sb c)``, normals ``normalize(R cof(Sb) n)``.

    Parameters
    ----------
    centers : (V, 3) float32 or float64 (the positions' dtype)
        Rest-space centers of rotation (``skinkit.centers_of_rotation``), shared by every frame
        and batch; any strides, never copied.  A row of NaN means "no center": that vertex gets
        plain LBS (positions, normals and tangents, with ``normal_rule``), which is rigid
        skinning for a single influence.  A row mixing NaN and numbers, or holding inf, raises
        ValueError naming ``centers``.
    pivots : (J, 3) or Skeleton, optional
        As in :func:`dqs`.
    Other arguments and the return value as :func:`lbs`.
    """
    idx, w, vj, rest = _influences(args, "cor")
    if len(rest) != 1:
        raise TypeError("cor() takes positions, influences (or indices, weights) and palette")
    if centers is None:
        raise ValueError("centers are required for cor(): skinkit.centers_of_rotation(...) gives "
                         "them, NaN rows for vertices without one")
    return _run("cor", positions, idx, w, rest[0], vj, pivots=pivots, normals=normals,
                tangents=tangents, out=out, out_normals=out_normals, out_tangents=out_tangents,
                normal_rule=normal_rule, threads=threads, strict=strict, centers=centers)


def rigid(positions, indices, palette, normals=None, tangents=None, out=None, out_normals=None,
          out_tangents=None, threads=None, strict=None):
    """Rigid skinning, ``p' = K[j] p`` (seed 003): one joint per vertex.

    ``indices`` is (V,) or (V, 1) of uint8 / uint16 / uint32 / int32 / int64; a negative index
    means "not skinned" and copies the vertex.  Other arguments as :func:`lbs`.
    """
    return _run("rigid", positions, indices, None, palette, None, normals=normals,
                tangents=tangents, out=out, out_normals=out_normals, out_tangents=out_tangents,
                threads=threads, strict=strict)


def skin(positions, *args, method="lbs", centers=None, blend=None, **kwargs):
    """Skin by name: ``method`` is ``"rigid"``, ``"lbs"``, ``"dqs"``, ``"cor"`` or ``"blend"``;
    the other arguments are those of that function, with influences in either call form.

    ``"rigid"`` uses each vertex's largest-weight joint (ties to the earlier slot; a vertex with
    zero weights is not skinned).  ``"cor"`` is :func:`cor` and needs ``centers``.  ``"blend"``
    is Maya's weight-blended skinning: ``p' = (1 - b) LBS(p) + b DQS(p)`` with ``blend`` a
    number or a (V,) array of the positions' dtype in [0, 1] (0 = LBS, 1 = DQS; NaN or out of
    range: ValueError naming ``blend``), normals and tangents ``normalize((1 - b) n_lbs + b
    n_dqs)``; it takes the arguments of :func:`dqs` (``pivots`` for a scaled palette) and
    ``normal_rule`` for its LBS part.  ``centers`` / ``blend`` given to another method raise
    TypeError naming them.
    """
    for name, value, user in (("centers", centers, "cor"), ("blend", blend, "blend")):
        if value is not None and method != user:
            raise TypeError(f"{name} is only used by method={user!r}, not {method!r}")
    if method == "cor":
        return cor(positions, *args, centers=centers, **kwargs)
    if method == "blend":
        idx, w, vj, rest = _influences(args, "skin")
        if len(rest) != 1:
            raise TypeError("skin() takes positions, influences (or indices, weights) and palette")
        return _run("blend", positions, idx, w, rest[0], vj, blend=blend, **kwargs)
    if method == "lbs":
        return lbs(positions, *args, **kwargs)
    if method == "dqs":
        return dqs(positions, *args, **kwargs)
    if method == "rigid":
        idx, w, validated_joints, rest = _influences(args, "skin")
        if len(rest) != 1:
            raise TypeError("skin() takes positions, influences (or indices, weights) and palette")
        # the checks lbs and dqs make, before the largest-weight joint is picked
        positions = _positions(positions)
        J = _palette(rest[0], positions.dtype)[0].shape[1]
        if validated_joints is None:
            if isinstance(w, np.ndarray) and w.dtype not in (positions.dtype, np.uint8, np.uint16):
                raise TypeError(f"weights has dtype {w.dtype}, expected {positions.dtype} or "
                                "unorm uint8 / uint16")
            _core.validate_influences(idx, w, J)
        elif validated_joints > J:
            raise ValueError(f"influences were validated for {validated_joints} joints, the "
                             f"palette has {J}")
        # as lbs and dqs, rigid takes only its own keywords (pivots, normal_rule: TypeError)
        best = np.argmax(w, axis=1)
        j = np.take_along_axis(idx, best[:, None], 1)[:, 0].astype(np.int64)
        j[~np.any(w > 0, axis=1)] = -1
        return rigid(positions, j, rest[0], **kwargs)
    raise ValueError(f"method must be 'rigid', 'lbs', 'dqs', 'cor' or 'blend', got {method!r}")
