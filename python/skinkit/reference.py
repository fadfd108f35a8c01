"""Slow, obviously correct NumPy versions of skinkit's kernels, for tests and for reading.

Everything here computes in float64, one joint or one influence slot at a time, straight from
the formulas of DESIGN.md sections 1 and 2.  Nothing here is fast and nothing here is used by
the fast paths: the tests compare the C core against these functions.
"""
from __future__ import annotations

import numpy as np

from . import transforms as tf

__all__ = ["forward_kinematics", "inverse_bind", "skinning_palette", "rigid", "lbs", "dqs",
           "cor", "blend", "cofactor", "dual_quaternion", "has_scale", "unorm_weights"]


def forward_kinematics(parents, local, root=None):
    """Globals by recursion over parents (any order): ``g[j] = g[parent] @ local[j]``."""
    parents = np.asarray(parents)
    local = tf.to_4x4(local)
    root = np.eye(4) if root is None else tf.to_4x4(root)
    lead = np.broadcast_shapes(local.shape[:-3], root.shape[:-2])
    local = np.broadcast_to(local, lead + local.shape[-3:])
    root = np.broadcast_to(root, lead + (4, 4))
    out = np.full(local.shape, np.nan)
    done = np.zeros(len(parents), bool)

    def solve(j):
        if not done[j]:
            parent = root if parents[j] < 0 else solve(parents[j])
            out[..., j, :, :] = parent @ local[..., j, :, :]
            done[j] = True
        return out[..., j, :, :]

    for j in range(len(parents)):
        # iterative for deep chains: walk up to the first solved ancestor, then down
        path = []
        k = j
        while k >= 0 and not done[k]:
            path.append(k)
            k = parents[k]
        for k in reversed(path):
            solve(k)
    return out


def inverse_bind(bind_globals):
    return np.linalg.inv(tf.to_4x4(bind_globals))


def skinning_palette(global_transforms, inverse_bind, base=None, bind_shape=None):
    g = tf.to_4x4(global_transforms)
    pre = np.eye(4) if base is None else np.linalg.inv(tf.to_4x4(base))
    post = np.eye(4) if bind_shape is None else tf.to_4x4(bind_shape)
    return pre @ g @ tf.to_4x4(inverse_bind) @ post


def unorm_weights(weights):
    """Float weights of any supported dtype: unorm uint8 / uint16 become w / 255, w / 65535."""
    w = np.asarray(weights)
    if w.dtype == np.uint8:
        return w.astype(np.float64) / 255.0
    if w.dtype == np.uint16:
        return w.astype(np.float64) / 65535.0
    return w.astype(np.float64)


def cofactor(a):
    """Cofactor matrices of ``(..., 3, 3)``: columns ``a1 × a2, a2 × a0, a0 × a1``, i.e.
    ``det(A) A^-T``; the rotation itself for a rotation, finite for a singular A."""
    a0, a1, a2 = a[..., :, 0], a[..., :, 1], a[..., :, 2]
    return np.stack([np.cross(a1, a2), np.cross(a2, a0), np.cross(a0, a1)], axis=-1)


def _normalize(v):
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(n > 0, v / np.where(n > 0, n, 1.0), v)


def _per_frame(palette, positions):
    """Palette as (F, J, 4, 4) and positions as (F, V, 3) (broadcast), plus whether batched."""
    K = tf.to_4x4(palette)
    batched = K.ndim == 4 or np.ndim(positions) == 3
    K = K.reshape((-1,) + K.shape[-3:])
    if np.ndim(positions) == 3 and K.shape[0] == 1:
        K = np.broadcast_to(K, (np.shape(positions)[0],) + K.shape[1:])
    return K, batched


def _apply(m, p):
    return (m[..., :3, :3] @ p[..., None])[..., 0] + m[..., :3, 3]


def _results(batched, *outs):
    """The kernels' return form: positions alone, or a tuple with the normals / tangents that
    were asked for (None: not asked); frame axis dropped when nothing was batched."""
    outs = [o if batched else o[0] for o in outs if o is not None]
    return outs[0] if len(outs) == 1 else tuple(outs)


def rigid(positions, indices, palette, normals=None):
    """Rigid skinning (seed 003): ``p' = K[j] p``; a negative index leaves the vertex as it is."""
    K, batched = _per_frame(palette, positions)
    idx = np.asarray(indices).reshape(-1).astype(np.int64)
    P = np.broadcast_to(np.asarray(positions, np.float64), (K.shape[0], idx.size, 3))
    out = P.copy()
    N = None if normals is None else np.broadcast_to(np.asarray(normals, np.float64), P.shape)
    out_n = None if N is None else N.copy()
    for f in range(K.shape[0]):
        for v in range(idx.size):
            j = idx[v]
            if j < 0:
                continue
            out[f, v] = _apply(K[f, j], P[f, v])
            if N is not None:
                out_n[f, v] = _normalize(cofactor(K[f, j, :3, :3]) @ N[f, v])
    return _results(batched, out, out_n)


def lbs(positions, indices, weights, palette, normals=None, tangents=None, normal_rule="joint"):
    """Linear blend skinning: ``p' = Σ w_i K[j_i] p`` (DESIGN.md section 2).

    Normals: ``"joint"`` rule ``normalize(Σ w_i cof(A_i) n)``, ``"blend"`` rule
    ``normalize(cof(Σ w_i A_i) n)``; tangents ``(V, 4)``: ``normalize(Σ w_i A_i t)`` with the
    handedness kept.  A vertex whose weights sum to <= 1e-6 is returned unchanged.
    """
    K, batched = _per_frame(palette, positions)
    idx = np.asarray(indices).astype(np.int64)
    w = unorm_weights(weights)
    V, Kn = idx.shape
    P = np.broadcast_to(np.asarray(positions, np.float64), (K.shape[0], V, 3))
    out_p = P.copy()
    N = None if normals is None else np.broadcast_to(np.asarray(normals, np.float64), P.shape)
    T = None if tangents is None else np.broadcast_to(np.asarray(tangents, np.float64),
                                                      (K.shape[0], V, 4))
    out_n = None if N is None else N.copy()
    out_t = None if T is None else T.copy()
    skinned = w.sum(axis=1) > 1e-6
    for f in range(K.shape[0]):
        M = np.zeros((V, 3, 4))
        C = np.zeros((V, 3, 3))
        for k in range(Kn):
            wk = w[:, k]
            jk = np.where(wk != 0, idx[:, k], 0)  # the index of a zero weight is never read
            A = K[f, jk, :3, :]
            M += wk[:, None, None] * A
            C += wk[:, None, None] * cofactor(A[:, :, :3])
        s = skinned
        out_p[f, s] = _apply(M[s], P[f, s])
        if N is not None:
            rule = C if normal_rule == "joint" else cofactor(M[:, :, :3])
            out_n[f, s] = _normalize((rule[s] @ N[f, s][..., None])[..., 0])
        if T is not None:
            out_t[f, s, :3] = _normalize((M[s, :, :3] @ T[f, s, :3][..., None])[..., 0])
    return _results(batched, out_p, out_n, out_t)


def has_scale(palette, tol=1e-5):
    """True when any 3×3 of the palette (or of a (…, 3, 3) stack) has a singular value off 1 by more than ``tol`` or a
    negative determinant (DESIGN.md section 2: then DQS needs pivots)."""
    a = np.asarray(palette, dtype=np.float64)
    a = a[..., :3, :3]
    s = np.linalg.svd(a, compute_uv=False)
    return bool(np.any(np.abs(s - 1.0) > tol) or np.any(np.linalg.det(a) < 0))


def dual_quaternion(r3, t):
    """Unit dual quaternion ``(real xyzw, dual xyzw)`` of the rigid transform ``p -> R p + t``."""
    q = tf.matrix_to_quat(r3)
    d = 0.5 * tf.quat_multiply(np.concatenate([t, np.zeros(t.shape[:-1] + (1,))], -1), q)
    return np.concatenate([q, d], -1)


def _split_inputs(positions, indices, weights, palette, pivots, normals, tangents, method):
    """The inputs of DQS and CoR in float64, per frame: ``K (F, J, 4, 4)``, batched, indices,
    float weights, pivots ``(J, 3)`` (zeros when None, allowed only for a rigid palette), and
    positions / normals / tangents broadcast to ``(F, V, n)``."""
    K, batched = _per_frame(palette, positions)
    if has_scale(K) and pivots is None:
        raise ValueError(f"pivots: the palette has scale or shear, {method} needs the joints' "
                         "bind positions")
    idx = np.asarray(indices).astype(np.int64)
    J = K.shape[1]
    c = np.zeros((J, 3)) if pivots is None else np.asarray(pivots, np.float64)
    P = np.broadcast_to(np.asarray(positions, np.float64), (K.shape[0], idx.shape[0], 3))
    N = None if normals is None else np.broadcast_to(np.asarray(normals, np.float64), P.shape)
    T = None if tangents is None else np.broadcast_to(np.asarray(tangents, np.float64),
                                                      P.shape[:-1] + (4,))
    return K, batched, idx, unorm_weights(weights), c, P, N, T


def _pivot(wv, jv, dq):
    """The non-zero slots of one vertex and the real part of its pivot influence (largest
    weight, ties to the smallest joint index), whose hemisphere every rotation is brought to."""
    nz = [k for k in range(len(wv)) if wv[k] != 0]
    pivot = min(nz, key=lambda k: (-wv[k], jv[k]))
    return nz, dq[jv[pivot], :4]


def _blend_vertex(wv, jv, dq, scale_aff):
    """One vertex's blends over its non-zero slots: the joints' dual quaternions ``(8,)``, each
    flipped into the pivot influence's hemisphere, weighted by ``w``; and the scale affines
    ``(3, 4)`` weighted by ``w / Σw``.  Returns ``(slots, dual quaternion, scale affine)``."""
    total = wv.sum()
    nz, q0 = _pivot(wv, jv, dq)
    blend = np.zeros(8)
    sb = np.zeros((3, 4))
    for k in nz:
        q = dq[jv[k]]
        sign = -1.0 if np.dot(q[:4], q0) < 0 else 1.0
        blend += wv[k] * sign * q
        sb += (wv[k] / total) * scale_aff[jv[k]]
    return nz, blend, sb


def _split_scale(K, c):
    """Per joint of one frame's palette ``K (J, 4, 4)`` and pivots ``c (J, 3)``: ``K = Rigid ∘
    Scale`` (DESIGN.md section 2) as ``R (J, 3, 3)``, ``S (J, 3, 3)``, the scale affine
    ``[S | c - S c] (J, 3, 4)``, the rigid translation ``t + R S c - R c (J, 3)`` and the unit
    dual quaternion of the rigid part ``(J, 8)``."""
    A, t = K[:, :3, :3], K[:, :3, 3]
    R, S = tf.polar(A)
    # A joint without scale (within 1e-5) is plain DQS: its 3x3 is the rotation, S = I.
    rigid_j = np.array([not has_scale(a) for a in A])
    R = np.where(rigid_j[:, None, None], A, R)
    S = np.where(rigid_j[:, None, None], np.eye(3), S)
    scale_aff = np.concatenate([S, (c - (S @ c[..., None])[..., 0])[..., None]], -1)
    t_rigid = t + (R @ (S @ c[..., None]))[..., 0] - (R @ c[..., None])[..., 0]
    return R, S, scale_aff, t_rigid, dual_quaternion(R, t_rigid)


def dqs(positions, indices, weights, palette, pivots=None, normals=None, tangents=None):
    """Dual quaternion skinning with the two-phase scale split of DESIGN.md section 2.

    Per joint ``K = Rigid ∘ Scale`` about the joint's bind position ``c`` (``pivots``): polar
    ``A = R S``, ``Scale(p) = S (p - c) + c``, ``Rigid(p) = R p + (t + R S c - R c)``.  Per
    vertex the Scale parts blend linearly with ``w / Σw``; the rigid parts as dual quaternions,
    each flipped into the hemisphere of the pivot influence (largest weight, ties to the smallest
    joint index), divided by the real part's norm.
    """
    K, batched, idx, w, c, P, N, T = _split_inputs(positions, indices, weights, palette, pivots,
                                                   normals, tangents, "DQS")
    V, Kn = idx.shape
    out_p, out_n = P.copy(), None if N is None else N.copy()
    out_t = None if T is None else T.copy()
    for f in range(K.shape[0]):
        _, _, scale_aff, _, dq = _split_scale(K[f], c)
        for v in range(V):
            wv, jv = w[v], idx[v]
            if wv.sum() <= 1e-6:
                continue
            _, blend, sb = _blend_vertex(wv, jv, dq, scale_aff)
            real = blend[:4] / np.linalg.norm(blend[:4])
            dual = blend[4:] / np.linalg.norm(blend[:4])
            Rb = tf.quat_to_matrix(real)[:3, :3]
            tb = 2.0 * tf.quat_multiply(dual, tf.quat_conjugate(real))[:3]
            out_p[f, v] = Rb @ (sb[:, :3] @ P[f, v] + sb[:, 3]) + tb
            if N is not None:
                out_n[f, v] = _normalize(Rb @ cofactor(sb[:, :3]) @ N[f, v])
            if T is not None:
                out_t[f, v, :3] = _normalize(Rb @ sb[:, :3] @ T[f, v, :3])
    return _results(batched, out_p, out_n, out_t)


def cor(positions, indices, weights, palette, centers, pivots=None, normals=None, tangents=None,
        normal_rule="joint"):
    """Skinning with optimized centers of rotation (Le & Hodgins 2016), one vertex at a time.

    Per joint ``K = Rigid ∘ Scale`` as in :func:`dqs`.  Per vertex with center ``c``: the scale
    parts blend with ``w / Σw`` into ``Sb`` and move both the vertex and its center
    (``v1 = Sb v``, ``c1 = Sb c``); the rigid parts' quaternions, each flipped into the pivot
    influence's hemisphere, blend into ``q``, ``R`` its rotation; the result is
    ``R (v1 - c1) + Σ w_i Rigid_i(c1)`` (for a rigid palette: ``R (v - c) + LBS(c)``).  Normals
    ``normalize(R cof(Sb) n)``, tangents ``normalize(R Sb t)``.  A NaN center gives this vertex's
    :func:`lbs` result; weights summing to <= 1e-6 leave the vertex as it is.
    """
    K, batched, idx, w, c, P, N, T = _split_inputs(positions, indices, weights, palette, pivots,
                                                   normals, tangents, "CoR")
    V, Kn = idx.shape
    C = np.asarray(centers, np.float64)
    plain = lbs(P, idx, w, K, normals=N, tangents=T, normal_rule=normal_rule)
    plain = plain if isinstance(plain, tuple) else (plain,)
    out_p = plain[0].copy()
    out_n = None if N is None else plain[1].copy()
    out_t = None if T is None else plain[-1].copy()
    for f in range(K.shape[0]):
        R, _, scale_aff, t_rigid, dq = _split_scale(K[f], c)
        for v in range(V):
            wv, jv = w[v], idx[v]
            if wv.sum() <= 1e-6 or np.isnan(C[v]).any():
                continue  # copied, or the LBS result already there
            nz, blend, sb = _blend_vertex(wv, jv, dq, scale_aff)
            Rb = tf.quat_to_matrix(blend[:4])[:3, :3]  # the real part only: no dual needed
            v1 = sb[:, :3] @ P[f, v] + sb[:, 3]
            c1 = sb[:, :3] @ C[v] + sb[:, 3]
            lbs_c = sum(wv[k] * (R[jv[k]] @ c1 + t_rigid[jv[k]]) for k in nz)
            out_p[f, v] = Rb @ (v1 - c1) + lbs_c
            if N is not None:
                out_n[f, v] = _normalize(Rb @ cofactor(sb[:, :3]) @ N[f, v])
            if T is not None:
                out_t[f, v, :3] = _normalize(Rb @ sb[:, :3] @ T[f, v, :3])
    return _results(batched, out_p, out_n, out_t)


def blend(positions, indices, weights, palette, blend, pivots=None, normals=None, tangents=None,
          normal_rule="joint"):
    """Maya's weight-blended skinning: ``(1 - b) LBS(v) + b DQS(v)`` per vertex, ``b`` a scalar
    or ``(V,)`` in [0, 1]; normals (and tangents, handedness kept) ``normalize((1 - b) n_lbs +
    b n_dqs)``."""
    P = np.asarray(positions, np.float64)
    N = None if normals is None else np.asarray(normals, np.float64)
    T = None if tangents is None else np.asarray(tangents, np.float64)
    a = lbs(P, indices, weights, palette, normals=N, tangents=T, normal_rule=normal_rule)
    d = dqs(P, indices, weights, palette, pivots=pivots, normals=N, tangents=T)
    a, d = (a if isinstance(a, tuple) else (a,)), (d if isinstance(d, tuple) else (d,))
    b = np.broadcast_to(np.asarray(blend, np.float64), (P.shape[-2],))[:, None]
    skinned = (unorm_weights(weights).sum(1) > 1e-6)[:, None]  # others are copied as they are
    outs = [np.where(skinned, (1 - b) * a[0] + b * d[0], a[0])]
    if N is not None:
        outs.append(np.where(skinned, _normalize((1 - b) * a[1] + b * d[1]), a[1]))
    if T is not None:
        t = a[-1].copy()
        t[..., :3] = np.where(skinned, _normalize((1 - b) * a[-1][..., :3] + b * d[-1][..., :3]),
                              a[-1][..., :3])
        outs.append(t)
    return outs[0] if len(outs) == 1 else tuple(outs)


# ================================================================================================
# Binding (DESIGN.md section 3): the rules of skinkit.bind, one joint at a time over all vertices,
# returning dense per-joint tables or the same fixed-K (indices, weights) as the C binders.
# ================================================================================================

def bind_joint_positions(skeleton):
    """(J, 3) bind positions: the translations of the bind globals."""
    return np.asarray(skeleton.bind_globals())[:, :3, 3].astype(np.float64)


def bind_segments(parents, joints, tails=None):
    """Bone j as a list of (head, end) segments: to its tail, else to each child; a leaf without
    a tail is the point (head, head)."""
    parents = np.asarray(parents)
    segs = []
    for j in range(len(parents)):
        if tails is not None:
            segs.append([(joints[j], np.asarray(tails[j], dtype=np.float64))])
            continue
        kids = [c for c in range(len(parents)) if parents[c] == j]
        segs.append([(joints[j], joints[c]) for c in kids] or [(joints[j], joints[j])])
    return segs


def bind_point_segment(v, a, b):
    """Distance from each vertex (V, 3) to the segment a -> b, and the parameter of the closest
    point in [0, 1]."""
    ab = b - a
    l2 = ab @ ab
    t = np.zeros(len(v)) if l2 == 0 else np.clip((v - a) @ ab / l2, 0, 1)
    return np.sqrt(((v - (a + t[:, None] * ab)) ** 2).sum(1)), t


def bind_distance_table(vertices, joints, parents, tails=None, to="bone"):
    """(V, J) distances to each joint's point or bone, and (V, J) parameters t."""
    v = np.asarray(vertices, dtype=np.float64)
    J = len(joints)
    D = np.empty((len(v), J))
    T = np.zeros((len(v), J))
    if to == "joint":
        for j in range(J):
            D[:, j] = np.sqrt(((v - joints[j]) ** 2).sum(1))
        return D, T
    for j, segs in enumerate(bind_segments(parents, joints, tails)):
        D[:, j] = np.inf
        for a, b in segs:
            d, t = bind_point_segment(v, a, b)
            better = d < D[:, j]
            D[better, j] = d[better]
            T[better, j] = t[better]
    return D, T


def _fixed_k(dense, order, k):
    """The first k columns of `order` per row as (indices int32, weights), index 0 where the
    weight is 0."""
    V = dense.shape[0]
    idx = np.zeros((V, k), dtype=np.int32)
    w = np.zeros((V, k))
    m = min(k, order.shape[1])
    idx[:, :m] = order[:, :m]
    w[:, :m] = np.take_along_axis(dense, order[:, :m], 1)
    idx[w == 0] = 0
    return idx, w


def bind_nearest(vertices, joints, parents, tails=None, to="bone"):
    D, _ = bind_distance_table(vertices, joints, parents, tails, to)
    j = np.argmin(D, axis=1)  # the first minimum: ties to the smallest joint index
    return j[:, None].astype(np.int32), np.ones((len(j), 1))


def bind_proximity(vertices, joints, parents, tails=None, k=2, power=1.0, to="joint"):
    D, _ = bind_distance_table(vertices, joints, parents, tails, to)
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    d = np.take_along_axis(D, order, 1)
    with np.errstate(divide="ignore"):
        inv = 1.0 / d ** power
    w = inv / inv.sum(1, keepdims=True)
    at = d[:, 0] == 0
    w[at] = 0
    w[at, 0] = 1
    dense = np.zeros_like(D)
    np.put_along_axis(dense, order, w, 1)
    return _fixed_k(dense, order, k)


def bind_sphere_radii(vertices, joints, multiplier=1.5):
    v = np.asarray(vertices, dtype=np.float64)
    return np.array([multiplier * np.sqrt(((v - p) ** 2).sum(1)).min(initial=np.inf)
                     for p in joints])


def bind_volume_spheres(vertices, joints, parents, radii):
    D, _ = bind_distance_table(vertices, joints, parents, to="joint")
    V = len(D)
    j = np.argmin(D, axis=1)
    d = D[np.arange(V), j]
    r = np.asarray(radii)[j]
    p = np.asarray(parents)[j]
    inside = (p >= 0) & (d < r)
    wp = np.where(inside, 0.5 * (1 - d / np.where(r > 0, r, 1)), 0.0)
    idx = np.stack([j, np.where(inside, p, 0)], 1).astype(np.int32)
    return idx, np.stack([1 - wp, wp], 1)


def bind_projection(vertices, joints, parents):
    v = np.asarray(vertices, dtype=np.float64)
    D, _ = bind_distance_table(v, joints, parents, to="joint")
    j = np.argmin(D, axis=1)
    p = np.asarray(parents)[j]
    s = ((v - joints[j]) * (joints[np.maximum(p, 0)] - joints[j])).sum(1)
    return np.where((p >= 0) & (s > 0), p, j)[:, None].astype(np.int32), np.ones((len(v), 1))


def bind_height_bands(vertices, chain, heights, origin, axis):
    """Dense (V, J) height-band weights for a chain (joint ids bottom to top, increasing
    heights)."""
    v = np.asarray(vertices, dtype=np.float64)
    h = (v - origin) @ np.asarray(axis, dtype=np.float64)
    n = len(chain)
    J = max(chain) + 1
    dense = np.zeros((len(v), J))
    for i in range(len(v)):
        if n == 1 or h[i] < heights[0]:
            dense[i, chain[0]] = 1
        elif h[i] >= heights[-1]:
            dense[i, chain[-1]] = 1
        else:
            b = np.searchsorted(heights, h[i], side="right") - 1
            f = (h[i] - heights[b]) / (heights[b + 1] - heights[b])
            dense[i, chain[b]] += 1 - f
            dense[i, chain[b + 1]] += f
    return dense


def envelope_factor(vertices, head, tail, rad_head, rad_tail, dist):
    """Blender's distfactor_to_bone for every vertex (V, 3) and one segment, vectorised."""
    v = np.asarray(vertices, dtype=np.float64)
    head = np.asarray(head, dtype=np.float64)
    tail = np.asarray(tail, dtype=np.float64)
    axis = tail - head
    l = np.sqrt(axis @ axis)
    axis = axis / l if l > 0 else np.zeros(3)
    pv = v - head
    a = pv @ axis
    d2 = np.where(a < 0, ((v - head) ** 2).sum(1),
                  np.where(a > l, ((v - tail) ** 2).sum(1), (pv ** 2).sum(1) - a * a))
    lerp = (a / l) * rad_tail + (1 - a / l) * rad_head if l != 0 else np.full(len(v), rad_head)
    r = np.where(a < 0, rad_head, np.where(a > l, rad_tail, lerp))
    with np.errstate(invalid="ignore"):
        fall = 1 - (np.sqrt(np.maximum(d2, 0)) - r) ** 2 / (dist * dist if dist else 1.0)
    out = np.where(d2 < r * r, 1.0,
                   np.where((dist == 0) | (d2 >= (r + dist) ** 2), 0.0, fall))
    return out


def bind_envelope_table(vertices, joints, parents, tails, head_radius, tail_radius, distance):
    """(V, J) raw envelope weights: per bone the largest factor over its segments."""
    J = len(joints)
    hr, tr, ds = (np.broadcast_to(np.asarray(x, dtype=np.float64), (J,))
                  for x in (head_radius, tail_radius, distance))
    dense = np.zeros((len(vertices), J))
    for j, segs in enumerate(bind_segments(parents, joints, tails)):
        for a, b in segs:
            dense[:, j] = np.maximum(dense[:, j],
                                     envelope_factor(vertices, a, b, hr[j], tr[j], ds[j]))
    return dense


def bind_envelope(vertices, joints, parents, tails, head_radius, tail_radius, distance, k=4,
                  normalize=False):
    dense = bind_envelope_table(vertices, joints, parents, tails, head_radius, tail_radius,
                                distance)
    order = np.lexsort((np.broadcast_to(np.arange(dense.shape[1]), dense.shape), -dense),
                       axis=1)
    idx, w = _fixed_k(dense, order, k)
    if normalize:
        s = w.sum(1, keepdims=True)
        w = np.divide(w, s, out=np.zeros_like(w), where=s > 0)
    return idx, w


# ---------------------------------------------------------------------------------------------
# Optimized centers of rotation (Le & Hodgins 2016): the precompute
# ---------------------------------------------------------------------------------------------
__all__ += ["cor_similarity", "centers_of_rotation"]

COR_MAX_DEPTH = 6  # subdivision levels at most (weights in [0, 1] never need more than 4)


def cor_similarity(wp, wv, sigma):
    """Le & Hodgins' weight similarity, straight from the paper, for dense weight vectors
    ``wp (J,)`` and ``wv (..., J)``: ``Σ_{j≠k} wp_j wp_k wv_j wv_k exp(-(wp_j wv_k - wp_k wv_j)² / σ²)``
    over ordered pairs."""
    wp = np.asarray(wp, np.float64)
    wv = np.asarray(wv, np.float64)
    s = np.zeros(wv.shape[:-1])
    for j in range(wp.shape[0]):
        for k in range(wp.shape[0]):
            if j != k and wp[j] * wp[k] != 0:  # (a zero product adds exactly 0: skipped)
                d = wp[j] * wv[..., k] - wp[k] * wv[..., j]
                s = s + wp[j] * wp[k] * wv[..., j] * wv[..., k] * np.exp(-d * d / sigma ** 2)
    return s


def _cor_triangles(faces):
    """(T', 3) triangles of (T, 3) triangles or (T, 4) quads (split along the 0-2 diagonal)."""
    f = np.asarray(faces).astype(np.int64)
    if f.shape[1] == 4:
        f = np.stack([f[:, [0, 1, 2]], f[:, [0, 2, 3]]], 1).reshape(-1, 3)
    return f


def _cor_samples(p, w, eps, depth=0, diff=None):
    """Sample triangles (centroid, area, mean weight) of the triangle with corners ``p (3, 3)``
    and corner weights ``w (3, J)``, split 1 → 4 at the edge midpoints while two corners' weights
    differ by ``eps`` or more (max abs difference over joints).  Weights are linear over the
    triangle, so the pieces of level d differ by exactly ``diff / 2^d``: that is what is compared
    (the midpoints' rounding would otherwise flip ties such as diff / 4 == eps)."""
    if diff is None:
        diff = max(np.max(np.abs(w[a] - w[b])) for a, b in ((0, 1), (1, 2), (0, 2)))
    if eps is not None and diff >= eps and depth < COR_MAX_DEPTH:
        mp = [(p[a] + p[b]) / 2 for a, b in ((0, 1), (1, 2), (2, 0))]
        mw = [(w[a] + w[b]) / 2 for a, b in ((0, 1), (1, 2), (2, 0))]
        out = []
        for cp, cw in (([p[0], mp[0], mp[2]], [w[0], mw[0], mw[2]]),
                       ([mp[0], p[1], mp[1]], [mw[0], w[1], mw[1]]),
                       ([mp[2], mp[1], p[2]], [mw[2], mw[1], w[2]]),
                       ([mp[0], mp[1], mp[2]], [mw[0], mw[1], mw[2]])):
            out += _cor_samples(np.array(cp), np.array(cw), eps, depth + 1, diff / 2)
        return out
    area = 0.5 * np.linalg.norm(np.cross(p[1] - p[0], p[2] - p[0]))
    return [(p.mean(0), area, w.mean(0))]


def centers_of_rotation(positions, faces, indices, weights, sigma=0.1, subdivide=False):
    """Optimized centers of rotation, by the paper's formula over every triangle (O(V · T)).

    ``c_i = Σ_t s(w_i, w_t) a_t p_t / Σ_t s(w_i, w_t) a_t`` with ``p_t``, ``a_t`` the centroid
    and area of triangle t and ``w_t`` the mean of its corners' dense weights; quads are split in
    two triangles.  ``subdivide``: False, True (threshold 0.1) or a threshold: triangles are
    split until their corners' weights differ by less than it.  Rows whose similarity sum is 0
    (one influence, or no triangle sharing two of the vertex's joints) are NaN.
    """
    P = np.asarray(positions, np.float64)
    idx = np.asarray(indices).astype(np.int64)
    w = unorm_weights(weights)
    J = int(idx[w != 0].max()) + 1 if np.any(w != 0) else 1
    W = np.zeros((P.shape[0], J))
    for k in range(idx.shape[1]):
        nz = w[:, k] != 0
        np.add.at(W, (np.nonzero(nz)[0], idx[nz, k]), w[nz, k])
    eps = None if subdivide is False else (0.1 if subdivide is True else float(subdivide))
    samples = []
    for tri in _cor_triangles(faces):
        samples += _cor_samples(P[tri], W[tri], eps)
    out = np.full(P.shape, np.nan)
    if not samples:
        return out
    cent = np.array([s[0] for s in samples])
    area = np.array([s[1] for s in samples])
    wt = np.array([s[2] for s in samples])
    for i in range(P.shape[0]):
        sa = cor_similarity(W[i], wt, sigma) * area
        if sa.sum() != 0:
            out[i] = (sa[:, None] * cent).sum(0) / sa.sum()
    return out
