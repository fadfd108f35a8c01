"""Skinning: rigid, LBS and DQS over NumPy buffers (DESIGN.md sections 2, 4, 5, 7).

TEMPORARY BACKEND: until the C kernels land these call skinkit.reference; the signatures are
final.
"""
from __future__ import annotations

import numpy as np

from . import reference
from ._config import resolve_strict, resolve_threads

__all__ = ["Influences", "rigid", "lbs", "dqs", "skin"]

_INDEX_DTYPES = (np.uint8, np.uint16, np.uint32, np.int32, np.int64)


class Influences:
    """Per-vertex joint influences, validated once and reused every frame.

    Parameters
    ----------
    indices : (V, K) uint8, uint16, uint32, int32 or int64
    weights : (V, K) float32, float64, or unorm uint8 / uint16
    n_joints : int
        Number of joints of the palettes they will be used with.
    """

    def __init__(self, indices, weights, n_joints):
        self.indices = np.asarray(indices)
        self.weights = np.asarray(weights)
        self.n_joints = int(n_joints)
        if self.indices.ndim != 2 or self.weights.shape != self.indices.shape:
            raise ValueError("indices and weights must both have shape (V, K)")
        w = reference.unorm_weights(self.weights)
        if not np.all(np.isfinite(w)):
            raise ValueError("weights contains NaN or inf")
        if np.any(w < 0):
            raise ValueError("weights: negative weight")
        bad = (w != 0) & ((self.indices < 0) | (self.indices >= self.n_joints))
        if bad.any():
            raise IndexError(f"indices: joint index out of range at vertex {np.flatnonzero(bad.any(1))[0]}")

    @property
    def shape(self):
        return self.indices.shape

    def __repr__(self):
        V, K = self.indices.shape
        return (f"Influences(V={V}, K={K}, n_joints={self.n_joints}, "
                f"indices {self.indices.dtype}, weights {self.weights.dtype})")


def _split(args, kwargs):
    """(influences-or-(indices, weights), palette) from lbs' two call forms."""
    if isinstance(args[0], Influences):
        infl, rest = args[0], args[1:]
        return infl.indices, infl.weights, rest
    return args[0], args[1], args[2:]


def lbs(positions, *args, normals=None, tangents=None, out=None, out_normals=None,
        out_tangents=None, normal_rule="joint", threads=None, strict=None):
    """Linear blend skinning ``p' = Σ w_i K[j_i] p``: ``lbs(P, influences, K)`` or
    ``lbs(P, indices, weights, K)``."""
    idx, w, rest = _split(args, {})
    (palette,) = rest
    return reference.lbs(positions, idx, w, palette, normals=normals, tangents=tangents,
                         normal_rule=normal_rule)


def dqs(positions, *args, pivots=None, normals=None, tangents=None, out=None, out_normals=None,
        out_tangents=None, threads=None, strict=None):
    """Dual quaternion skinning (DESIGN.md section 2)."""
    idx, w, rest = _split(args, {})
    (palette,) = rest
    return reference.dqs(positions, idx, w, palette, pivots=pivots, normals=normals,
                         tangents=tangents)


def rigid(positions, indices, palette, normals=None, out=None, out_normals=None, threads=None,
          strict=None):
    """Rigid skinning: ``p' = K[j] p``; negative index = not skinned."""
    return reference.rigid(positions, indices, palette, normals=normals)


def skin(positions, *args, method="lbs", **kwargs):
    """Dispatch to rigid / lbs / dqs; ``method="rigid"`` uses each vertex's largest weight."""
    if method == "lbs":
        return lbs(positions, *args, **kwargs)
    if method == "dqs":
        return dqs(positions, *args, **kwargs)
    if method == "rigid":
        idx, w, rest = _split(args, {})
        ww = reference.unorm_weights(w)
        j = np.take_along_axis(np.asarray(idx).astype(np.int64), np.argmax(ww, 1)[:, None], 1)[:, 0]
        j = np.where(ww.sum(1) > 1e-6, j, -1)
        kwargs.pop("pivots", None)
        return rigid(positions, j, *rest, **{k: v for k, v in kwargs.items() if k in ("normals",)})
    raise ValueError(f"method must be 'rigid', 'lbs' or 'dqs', got {method!r}")
