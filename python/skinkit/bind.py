"""Automatic binding: which joints move each vertex, and how much (DESIGN.md section 3).

Every binder is a pure function of the bind-space ``vertices`` and a :class:`~skinkit.Skeleton`
(joint positions are the translations of ``skeleton.bind_globals()``) and returns fixed-K
influences ``(indices, weights)``: ``indices`` ``(V, K)`` int32, ``weights`` ``(V, K)`` in the
vertices' dtype, slots in decreasing weight, a zero-weight slot holding index 0.  The work is one
C pass over the vertices, O(V * bones), with the GIL released.

Joints are points.  "Bone j" is the set of segments from joint j to each of its children, or to
its tail when the skeleton has ``tails``; a leaf without a tail is a point.  Ties between equally
near joints go to the smallest joint index (in the caller's joint order).

With ``explain=True`` a binder returns ``(indices, weights, info)``; ``info`` is a dict of
``(V, K)`` arrays:

``"bones"`` (int32)
    the joint whose bone or point decided each slot (-1: empty slot);
``"distances"`` (float64)
    the vertex's distance to that bone or point (NaN: empty slot);
``"t"`` (float64)
    the binder's parameter, described with each binder (NaN where it has none).
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._checks import nonneg_number, positive_int, real_array
from .skeleton import Skeleton

__all__ = ["nearest", "proximity", "volume_spheres", "volume_sphere_radii", "projection",
           "height_bands", "envelope", "bones"]


# -- shared preparation (J-sized, cheap) ----------------------------------------------------------

def _skeleton(skeleton):
    if not isinstance(skeleton, Skeleton):
        raise TypeError(f"skeleton must be a skinkit.Skeleton, not {type(skeleton).__name__}")
    return skeleton


def _vertices(vertices):
    """Check the (V, 3) vertices without converting them (DESIGN.md section 4)."""
    if not isinstance(vertices, np.ndarray):
        raise TypeError(f"vertices must be a numpy.ndarray, not {type(vertices).__name__}")
    if vertices.dtype.newbyteorder("=") not in (np.float32, np.float64):
        raise TypeError(f"vertices has dtype {vertices.dtype}, expected float32 or float64")
    if vertices.ndim != 2 or vertices.shape[1] != 3:
        raise ValueError(f"vertices must have shape (V, 3), got {vertices.shape}")
    return vertices


def _joints(skeleton):
    return np.ascontiguousarray(skeleton.bind_globals()[:, :3, 3], dtype=np.float64)


def bones(skeleton):
    """The bones of ``skeleton`` as segments, in the form the C binders take.

    Returns
    -------
    joints : (J, 3) float64
        Bind positions of the joints (the heads of the bones).
    parents : (J,) int64
    seg_start : (J + 1,) int64
        Bone j's segments are ``seg_end[seg_start[j]:seg_start[j + 1]]``, each running from
        joint j: to its tail when the skeleton has tails, else to each child (in joint order);
        a leaf without a tail has one segment of length zero.
    seg_end : (S, 3) float64
    """
    sk = _skeleton(skeleton)
    joints = _joints(sk)
    parents = np.ascontiguousarray(sk.parents, dtype=np.int64)
    J = parents.size
    if sk.tails is not None:
        return (joints, parents, np.arange(J + 1, dtype=np.int64),
                np.ascontiguousarray(sk.tails, dtype=np.float64))
    kids = np.flatnonzero(parents >= 0)
    kids = kids[np.argsort(parents[kids], kind="stable")]  # grouped by parent, joint order kept
    counts = np.bincount(parents[kids], minlength=J)
    nseg = np.maximum(counts, 1)
    seg_start = np.concatenate([[0], np.cumsum(nseg)]).astype(np.int64)
    seg_end = np.empty((int(seg_start[-1]), 3))
    leaves = np.flatnonzero(counts == 0)
    seg_end[seg_start[leaves]] = joints[leaves]
    # The k-th child of parent p goes to slot seg_start[p] + k.
    first = np.concatenate([[0], np.cumsum(counts)])[parents[kids]]
    rank = np.arange(kids.size) - first
    seg_end[seg_start[parents[kids]] + rank] = joints[kids]
    return joints, parents, seg_start, seg_end


def _outputs(vertices, k, explain):
    V = vertices.shape[0]
    indices = np.empty((V, k), dtype=np.int32)
    weights = np.empty((V, k), dtype=vertices.dtype)
    info = None
    if explain:
        info = (np.empty((V, k), dtype=np.int32), np.empty((V, k)), np.empty((V, k)))
    return indices, weights, info


def _result(indices, weights, info):
    if info is None:
        return indices, weights
    return indices, weights, {"bones": info[0], "distances": info[1], "t": info[2]}


def _to_bone(to, name="to"):
    if to not in ("bone", "joint"):
        raise ValueError(f"{name} must be 'bone' or 'joint', got {to!r}")
    return to == "bone"


def _per_bone(x, name, J):
    """A scalar or (J,) array of finite values >= 0, as a contiguous (J,) float64."""
    a = real_array(x, name).astype(np.float64)
    if a.ndim == 0:
        a = np.full(J, float(a))
    if a.shape != (J,):
        raise ValueError(f"{name} must be a scalar or have shape ({J},), got {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a) | (a < 0))
    if bad.size:
        raise ValueError(f"{name} must be finite and >= 0: bone {bad[0]} has {a[bad[0]]}")
    return np.ascontiguousarray(a)


# -- binders ----------------------------------------------------------------------------------------

def nearest(vertices, skeleton, to="bone", explain=False):
    """Bind each vertex to one joint, the nearest (seeds 002 and 003): rigid skinning weights.

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
        Bind-space positions (any strides; never copied).
    skeleton : Skeleton
    to : {"bone", "joint"}
        Distance to each joint's bone (segments to its children or tail; default) or to the joint
        point itself.
    explain : bool
        Also return ``info`` (module docstring); ``t`` is the parameter of the closest point on
        the chosen bone's nearest segment (0 at the joint, 1 at the child or tail), 0 for
        ``to="joint"``.

    Returns
    -------
    indices : (V, 1) int32
    weights : (V, 1) of the vertices' dtype, all 1
    """
    v = _vertices(vertices)
    tb = _to_bone(to)
    b = bones(skeleton)
    idx, w, info = _outputs(v, 1, explain)
    _core.bind_nearest(idx, w, info, v, b, tb)
    return _result(idx, w, info)


def proximity(vertices, skeleton, k=2, power=1, to="joint", explain=False):
    """The ``k`` nearest joints with inverse-distance weights (seed 004, corrected).

    ``w_i = (1 / d_i**power) / sum_j (1 / d_j**power)`` over the k nearest, so the nearer joint
    weighs more (seed 004 says "proportional to their distance": see the seeds' errata).  A
    vertex at distance 0 from a joint gets weight 1 there (the smallest such joint index).

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
    skeleton : Skeleton
    k : int >= 1
        Influences per vertex; K = k (slots beyond the number of joints stay empty).
    power : float >= 0
        Falloff exponent (0: equal weights).
    to : {"joint", "bone"}
        Distance to the joint points (default, seed 004) or to the bones.
    explain : bool
        ``t`` as for :func:`nearest`.

    Returns
    -------
    indices : (V, k) int32, nearest first
    weights : (V, k) of the vertices' dtype, rows summing to 1
    """
    v = _vertices(vertices)
    k = positive_int(k, "k")
    power = nonneg_number(power, "power")
    tb = _to_bone(to)
    b = bones(skeleton)
    idx, w, info = _outputs(v, k, explain)
    _core.bind_proximity(idx, w, info, v, b, k, power, tb)
    return _result(idx, w, info)


def volume_sphere_radii(vertices, skeleton, multiplier=1.5):
    """Seed 002's volume-sphere radii: ``multiplier`` times each joint's distance to its nearest
    vertex.

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
    skeleton : Skeleton
    multiplier : float >= 0
        Seed 002 suggests 1.5 to 2; too large and a sphere swallows unrelated vertices.

    Returns
    -------
    (J,) float64; 0 (no sphere) for every joint when V = 0.
    """
    v = _vertices(vertices)
    multiplier = nonneg_number(multiplier, "multiplier")
    b = bones(skeleton)
    radii = np.empty(b[1].size)
    _core.bind_sphere_radii(radii, v, b, multiplier)
    return radii


def volume_spheres(vertices, skeleton, multiplier=1.5, radii=None, explain=False):
    """Seed 002's volume spheres: each vertex is shared by its nearest joint j and j's parent.

    With ``d`` the distance to j and ``r_j`` its sphere radius: if ``d < r_j`` and j has a
    parent, ``w_parent = 0.5 * (1 - d / r_j)`` and ``w_j = 1 - w_parent``; otherwise
    ``w_j = 1``.  The weights are continuous across each sphere's surface (``w_parent`` reaches
    0 there); where the nearest joint changes they may jump.  A root keeps its vertices.

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
    skeleton : Skeleton
    multiplier : float >= 0
        Radius multiplier for :func:`volume_sphere_radii` (ignored when ``radii`` is given).
    radii : (J,) array or float, optional
        Sphere radii (finite, >= 0) to use instead.
    explain : bool
        ``t`` is ``d / r_j`` (< 1 inside the sphere; NaN when ``r_j = 0``).

    Returns
    -------
    indices : (V, 2) int32: j, then its parent (or an empty slot)
    weights : (V, 2) of the vertices' dtype, rows summing to 1
    """
    v = _vertices(vertices)
    sk = _skeleton(skeleton)
    if radii is None:
        radii = volume_sphere_radii(v, sk, multiplier)
    else:
        radii = _per_bone(radii, "radii", sk.n_joints)
    b = bones(sk)
    idx, w, info = _outputs(v, 2, explain)
    _core.bind_volume_spheres(idx, w, info, v, b, radii)
    return _result(idx, w, info)


def projection(vertices, skeleton, explain=False):
    """Seed 002's projection rule: the nearest joint or its parent.

    With j the nearest joint, ``s = (v - j) . (parent - j)``: ``s > 0`` (the vertex lies toward
    the parent, on the bone parent -> j, which rotating the parent moves) binds to the parent,
    otherwise to j.  A root keeps its vertices.

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
    skeleton : Skeleton
    explain : bool
        ``bones`` is the nearest joint j (not always the chosen index), ``distances`` ``|v - j|``
        and ``t = s / |parent - j|**2`` (NaN for a root).

    Returns
    -------
    indices : (V, 1) int32
    weights : (V, 1) of the vertices' dtype, all 1
    """
    v = _vertices(vertices)
    b = bones(skeleton)
    idx, w, info = _outputs(v, 1, explain)
    _core.bind_projection(idx, w, info, v, b)
    return _result(idx, w, info)


_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def _chain(sk):
    """The joints of a chain skeleton from its root down, or ValueError."""
    p = sk.parents
    roots = np.flatnonzero(p < 0)
    counts = np.bincount(p[p >= 0], minlength=p.size)
    if roots.size != 1 or np.any(counts > 1):
        raise ValueError("skeleton: height_bands needs a chain (one root, at most one child per "
                         f"joint); this one has {roots.size} roots and a joint with "
                         f"{counts.max()} children")
    child = np.full(p.size, -1)
    child[p[p >= 0]] = np.flatnonzero(p >= 0)
    order = [int(roots[0])]
    while child[order[-1]] >= 0:
        order.append(int(child[order[-1]]))
    return np.array(order, dtype=np.int64)


def height_bands(vertices, skeleton, axis="y", explain=False):
    """Seed 001's cylinder rule for a chain: the two joints around each vertex's height.

    Heights are measured along ``axis`` from the chain's first joint.  A vertex between joints b
    and b + 1 of the chain gets ``(1 - f, f)`` with ``f`` its fraction of the way up the band
    (seed 001: ``f = y / spacing - floor(y / spacing)`` for joints ``spacing`` apart); below the
    first joint or at or above the last it gets weight 1 on that end joint.

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
    skeleton : Skeleton
        A chain (one root, at most one child per joint), e.g. ``Skeleton.chain(11, 20)``, whose
        joints' heights strictly increase (or strictly decrease: the axis is then flipped).
    axis : {"x", "y", "z"} or (3,) array
        Direction of the heights (normalized here).
    explain : bool
        ``bones`` the band's two joints, ``distances`` the height differences to them, ``t = f``.

    Returns
    -------
    indices : (V, 2) int32, larger weight first
    weights : (V, 2) of the vertices' dtype, rows summing to 1
    """
    v = _vertices(vertices)
    sk = _skeleton(skeleton)
    if isinstance(axis, str):
        if axis not in _AXES:
            raise ValueError(f"axis must be 'x', 'y', 'z' or a 3-vector, got {axis!r}")
        ax = np.array(_AXES[axis])
    else:
        ax = real_array(axis, "axis").astype(np.float64)
        n = np.linalg.norm(ax) if ax.shape == (3,) else 0.0
        if ax.shape != (3,) or not np.isfinite(n) or n == 0:
            raise ValueError(f"axis must be a finite non-zero 3-vector, got {axis!r}")
        ax = ax / n
    chain = _chain(sk)
    joints = _joints(sk)
    origin = np.ascontiguousarray(joints[chain[0]])
    heights = (joints[chain] - origin) @ ax
    d = np.diff(heights)
    if d.size and np.all(d < 0):
        ax, heights = -ax, -heights
    elif d.size and not np.all(d > 0):
        raise ValueError("skeleton: the chain's joint heights along axis must strictly increase "
                         f"(or decrease); got {heights.tolist()}")
    idx, w, info = _outputs(v, 2, explain)
    _core.bind_height_bands(idx, w, info, v, chain, np.ascontiguousarray(heights), origin,
                            np.ascontiguousarray(ax))
    return _result(idx, w, info)


def envelope(vertices, skeleton, head_radius, tail_radius, distance, k=4, normalize=False,
             explain=False):
    """Blender's envelope weights ("With Envelope Weights"), raw by default.

    Bone j runs from joint j to its tail (``Skeleton(tails=...)``, as Blender's bones) or to each
    of its children (a leaf without a tail is a point).  For one segment head -> tail of length
    ``l``, with ``a`` the projection of ``v - head`` on the unit bone axis (Blender's
    ``distfactor_to_bone``)::

        a < 0:      d2 = |v - head|**2,           r = head_radius
        a > l:      d2 = |v - tail|**2,           r = tail_radius
        otherwise:  d2 = |v - head|**2 - a**2,    r = lerp(head_radius, tail_radius, a / l)
        weight = 1                                   if d2 < r**2
               = 0                                   if distance == 0 or d2 >= (r + distance)**2
               = 1 - (sqrt(d2) - r)**2 / distance**2 otherwise

    A bone with several segments takes the largest.  The ``k`` largest non-zero weights are
    kept.  Rows may sum to anything, 0 included, exactly as Blender's vertex groups.

    Parameters
    ----------
    vertices : (V, 3) float32 or float64
        Bind-space positions (Blender: world space; Blender also multiplies the three radii by
        the armature object's scale -- pass them scaled).
    skeleton : Skeleton
    head_radius, tail_radius, distance : float or (J,) array, finite, >= 0
        Blender's bone ``head_radius``, ``tail_radius`` and ``envelope_distance``.
    k : int >= 1
        Slots per vertex; ``k >= J`` keeps every bone, as Blender does.
    normalize : bool
        Divide each row by its sum (rows of zeros stay zero).
    explain : bool
        ``distances`` the distance to the deciding segment's axis (or end point), ``t`` the
        position along it clamped to [0, 1].

    Returns
    -------
    indices : (V, k) int32, larger weight first
    weights : (V, k) of the vertices' dtype
    """
    v = _vertices(vertices)
    sk = _skeleton(skeleton)
    J = sk.n_joints
    hr = _per_bone(head_radius, "head_radius", J)
    tr = _per_bone(tail_radius, "tail_radius", J)
    ds = _per_bone(distance, "distance", J)
    k = positive_int(k, "k")
    b = bones(sk)
    idx, w, info = _outputs(v, k, explain)
    _core.bind_envelope(idx, w, info, v, b, hr, tr, ds, k, bool(normalize))
    return _result(idx, w, info)
