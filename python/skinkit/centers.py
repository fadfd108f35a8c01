"""Optimized centers of rotation (Le & Hodgins, SIGGRAPH 2016): the per-vertex precompute.

CoR skinning (``skinkit.skin(..., method="cor", centers=...)``) rotates each vertex with its
blended quaternion about a center ``c_i`` and translates with the LBS of that center.  The
center is the area-weighted mean of the rest mesh's triangle centroids, each weighted by how
similar its weights are to the vertex's; computed once per binding, in C.
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._config import resolve_threads
from .skinning import Influences

__all__ = ["centers_of_rotation"]

_FACE_DTYPES = (np.uint8, np.uint16, np.uint32, np.int32, np.int64)


def _subdivide_threshold(subdivide):
    if subdivide is False or subdivide is None:
        return 0.0
    if subdivide is True:
        return 0.1
    if isinstance(subdivide, (int, float, np.integer, np.floating)):
        eps = float(subdivide)
        if not (np.isfinite(eps) and eps > 0):
            raise ValueError(f"subdivide must be True, False or a finite threshold > 0, got {subdivide!r}")
        return eps
    raise TypeError(f"subdivide must be True, False or a threshold, got {type(subdivide).__name__}")


def _faces(faces):
    if not isinstance(faces, np.ndarray):
        try:
            faces = np.asarray(faces)
        except Exception as exc:
            raise TypeError(f"faces must be an integer array: {exc}") from None
    if faces.dtype.kind not in "iu" or faces.dtype == np.bool_:
        raise TypeError(f"faces has dtype {faces.dtype}, expected an integer dtype")
    if faces.dtype.type not in _FACE_DTYPES or not faces.dtype.isnative:
        # int8 / int16 / uint64 / byte-swapped faces: one cast of the (T, 3) index array (the C
        # core reads the five index dtypes of the influences in place)
        if faces.dtype.kind == "u" and faces.size and faces.max() > np.iinfo(np.int64).max:
            raise IndexError("faces: vertex index beyond int64")
        faces = faces.astype(np.int64)
    return faces


def centers_of_rotation(positions, faces, *influences, sigma=0.1, subdivide=False, threads=None):
    """Each vertex's optimized center of rotation (Le & Hodgins 2016).

    ``c_i = Σ_t s(w_i, w_t) a_t p_t / Σ_t s(w_i, w_t) a_t`` over the triangles t of the rest mesh
    (``p_t`` centroid, ``a_t`` area, ``w_t`` the mean of its corners' weights), with the weight
    similarity ``s(w_p, w_v) = Σ_{j≠k} w_pj w_pk w_vj w_vk exp(-(w_pj w_vk - w_pk w_vj)² / σ²)``.

    Call as ``centers_of_rotation(positions, faces, influences)`` or
    ``centers_of_rotation(positions, faces, indices, weights)``.

    Parameters
    ----------
    positions : (V, 3) float32 or float64
        Rest positions, read in place (any strides); NaN, inf or a coordinate beyond 1e150 is a
        ValueError naming the vertex.
    faces : (T, 3) or (T, 4) integer array
        Triangles, or quads (each split into ``(0, 1, 2)`` and ``(0, 2, 3)``); vertex indices in
        ``[0, V)``.  uint8 / uint16 / uint32 / int32 / int64 are read in place, other integer
        dtypes converted.
    influences : Influences, or indices (V, K) and weights (V, K)
        As for :func:`skinkit.lbs`: weights of the positions' dtype or unorm uint8 / uint16, any
        K; raw arrays are validated first (finite, non-negative weights; a negative index with a
        non-zero weight is an IndexError).  A joint listed twice in a row counts with the sum of
        its weights.  Joint indices must be below 2**24.
    sigma : float
        Width of the similarity kernel (the paper's 0.1 by default), finite and > 0.
    subdivide : bool or float
        False (default): each triangle is one sample.  True: the paper's subdivision, splitting
        each triangle 1 → 4 at its edge midpoints until its corners' weights differ by less than
        0.1 (max abs difference over joints), at most 6 levels; a float sets the threshold.
    threads : int, optional
        Default ``skinkit.get_num_threads()``; the result is bit-identical for any count.

    Returns
    -------
    centers : (V, 3) ndarray in the positions' dtype
        NaN rows where a vertex has no center: its similarity sum is 0, as for a vertex with a
        single influence (CoR skinning then does plain LBS there, which is rigid for one
        influence) or one that no triangle shares two joints with.

    Notes
    -----
    Only triangles sharing a pair of joints with a vertex can contribute, so each vertex visits
    just those (buckets of samples per joint pair, built once): the cost is about
    ``Σ_i (samples sharing a joint pair with i)`` rather than ``V · T``.  Computed in double.
    """
    if not isinstance(positions, np.ndarray):
        raise TypeError(f"positions must be a numpy.ndarray, not {type(positions).__name__}")
    if positions.dtype not in (np.float32, np.float64):
        raise TypeError(f"positions has dtype {positions.dtype}, expected float32 or float64"
                        + (" in native byte order" if positions.dtype.kind == "f" else ""))
    if positions.ndim != 2 or positions.shape[1] != 3:
        raise ValueError(f"positions must have shape (V, 3), got {positions.shape}")
    if influences and isinstance(influences[-1], (int, float, np.integer, np.floating)) \
            and not isinstance(influences[-1], bool) and len(influences) in (2, 3):
        if sigma != 0.1:
            raise TypeError("centers_of_rotation() got sigma both by position and by keyword")
        sigma, influences = influences[-1], influences[:-1]  # the brief's positional form
    if len(influences) == 1 and isinstance(influences[0], Influences):
        idx, w, validated = influences[0].indices, influences[0].weights, True
    elif len(influences) == 2:
        (idx, w), validated = influences, False
    else:
        raise TypeError("centers_of_rotation() takes positions, faces and influences (an "
                        "Influences, or indices and weights)")
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.integer, np.floating)):
        raise TypeError(f"sigma must be a number, got {type(sigma).__name__}")
    sigma = float(sigma)
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be finite and > 0, got {sigma}")
    eps = _subdivide_threshold(subdivide)
    faces = _faces(faces)
    out = np.empty(positions.shape, dtype=positions.dtype)
    _core.centers_of_rotation(out, positions, faces, idx, w, sigma, eps, resolve_threads(threads),
                              validated)
    return out
