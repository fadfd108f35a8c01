"""Argument checks shared by the Python layer (joint-sized, cheap; DESIGN.md section 5).

Vertex-sized arrays are never checked here: the C binding checks them in the pass that reads
them.  Everything here raises the exception DESIGN.md section 5 names, with the argument's name.
"""
from __future__ import annotations

import os

import numpy as np


def real_array(x, name):
    """``x`` as an ndarray of a real numeric dtype (bool, complex, object, strings: TypeError)."""
    if isinstance(x, np.ndarray):
        a = x
    else:
        try:
            a = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be array-like of real numbers: {exc}") from None
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must have a real numeric dtype, got {a.dtype}")
    return a


def result_float_dtype(dtype, name="dtype"):
    """A caller's ``dtype=`` for float results: float32 or float64 (anything NumPy reads as
    one), else TypeError naming ``name``."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d is None or d not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"{name} must be float32 or float64, got {dtype!r}")
    return d


def npz_source(path):
    """What ``numpy.load`` should open for a ``load(path)`` of a file ``save(path)`` wrote:
    ``numpy.savez`` appends ``.npz`` to a name without it, so such a name loads too."""
    if isinstance(path, (str, os.PathLike)):
        path = os.fspath(path)
        if not os.path.exists(path) and os.path.exists(path + ".npz"):
            return path + ".npz"
    return path


def float_dtype(*arrays):
    """float32 when every array is float32, else float64 (the result dtype of skeleton math)."""
    return np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64


_EXACT_LAST_ROW = {np.dtype(t): np.array([0, 0, 0, 1], dtype=t).tobytes()
                   for t in (np.float32, np.float64)}


def transforms(x, name, batch_ndim=None, dtype=None, finite=True, axes=("F", "J")):
    """A ``(..., 4, 4)`` or ``(..., 3, 4)`` stack of affine transforms, checked: real dtype,
    finite (unless ``finite=False``: for a caller whose C code checks), last row [0, 0, 0, 1]
    within 1e-6; ``batch_ndim`` fixes the number of leading axes (an int or a tuple of allowed
    counts), named in messages by the last ones of ``axes`` (frames, joints).  Returns (array
    as ``dtype``, rows)."""
    a = real_array(x, name)
    if a.ndim < 2 or a.shape[-1] != 4 or a.shape[-2] not in (3, 4):
        raise ValueError(f"{name} must have shape (..., 4, 4) or (..., 3, 4), got {a.shape}")
    if batch_ndim is not None:
        allowed = (batch_ndim,) if isinstance(batch_ndim, int) else tuple(batch_ndim)
        if a.ndim - 2 not in allowed:
            forms = " or ".join("(" + ", ".join(list(axes[len(axes) - n:]) + ["4", "4"]) + ")"
                                for n in allowed)
            raise ValueError(f"{name} must have shape {forms}, got {a.shape}")
    if finite and a.dtype.kind == "f" and not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or inf")
    rows = a.shape[-2]
    if rows == 4:
        last = a[..., 3, :]
        # exactly [0, 0, 0, 1] everywhere (the usual case) is one byte comparison, a tenth of
        # the tolerant test's time; a call's fixed cost matters for small meshes
        exact = _EXACT_LAST_ROW.get(a.dtype)
        if exact is None or last.tobytes() != exact * (last.size // 4):
            if not np.all(np.abs(last - np.array([0, 0, 0, 1], dtype=np.float64)) <= 1e-6):
                raise ValueError(f"{name} has a last row other than [0, 0, 0, 1]")
    if dtype is not None:
        # aligned too: np.ascontiguousarray keeps a misaligned buffer, which C cannot read
        a = np.require(a, dtype=dtype, requirements=["C_CONTIGUOUS", "ALIGNED"])
    return a, rows


def affine_3x4(x, name):
    """A single transform as a contiguous (3, 4) float64, or None for None."""
    if x is None:
        return None
    a, _ = transforms(x, name, batch_ndim=0, dtype=np.float64)
    return np.ascontiguousarray(a[:3])


def out_array(out, name, shape, dtype):
    """Check a caller's ``out``: an ndarray of exactly ``shape`` and ``dtype``, writable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, not {type(out).__name__}")
    if out.dtype != dtype:
        raise TypeError(f"{name} has dtype {out.dtype}, expected {np.dtype(dtype)}")
    if out.shape != tuple(shape):
        raise ValueError(f"{name} has shape {out.shape}, expected {tuple(shape)}")
    if not out.flags.writeable:
        raise ValueError(f"{name} is read-only")
    return out


def no_overlap(out, name, *inputs):
    for a in inputs:
        if isinstance(a, np.ndarray) and np.shares_memory(out, a):
            raise ValueError(f"{name} overlaps an input array")


def nonneg_number(x, name):
    """A finite float >= 0 (a bool, a string, an array: TypeError; an int beyond the float
    range: ValueError)."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    try:
        f = float(x)
    except OverflowError:
        f = np.inf
    if not np.isfinite(f) or f < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {x}")
    return f


def positive_int(x, name, minimum=1):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(x).__name__}")
    if x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    return int(x)
