"""Slow, obviously correct NumPy versions of skinkit's kernels, for tests and for reading.

Everything here computes in float64, one joint or one influence slot at a time, straight from
the formulas of DESIGN.md sections 1 and 2.  Nothing here is fast and nothing here is used by
the fast paths: the tests compare the C core against these functions.
"""
from __future__ import annotations

import numpy as np

from . import transforms as tf

__all__ = ["forward_kinematics", "inverse_bind", "skinning_palette", "rigid", "lbs", "dqs",
           "cofactor", "dual_quaternion", "has_scale", "unorm_weights"]


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
    return K, batched


def _apply(m, p):
    return (m[..., :3, :3] @ p[..., None])[..., 0] + m[..., :3, 3]


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
    if not batched:
        out = out[0]
        out_n = None if out_n is None else out_n[0]
    return out if normals is None else (out, out_n)


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
    outs = [out_p] + [o for o in (out_n, out_t) if o is not None]
    if not batched:
        outs = [o[0] for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


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


def dqs(positions, indices, weights, palette, pivots=None, normals=None, tangents=None):
    """Dual quaternion skinning with the two-phase scale split of DESIGN.md section 2.

    Per joint ``K = Rigid ∘ Scale`` about the joint's bind position ``c`` (``pivots``): polar
    ``A = R S``, ``Scale(p) = S (p - c) + c``, ``Rigid(p) = R p + (t + R S c - R c)``.  Per
    vertex the Scale parts blend linearly with ``w / Σw``; the rigid parts as dual quaternions,
    each flipped into the hemisphere of the pivot influence (largest weight, ties to the smallest
    joint index), divided by the real part's norm.
    """
    K, batched = _per_frame(palette, positions)
    if has_scale(K) and pivots is None:
        raise ValueError("pivots: the palette has scale or shear, DQS needs the joints' bind positions")
    idx = np.asarray(indices).astype(np.int64)
    w = unorm_weights(weights)
    V, Kn = idx.shape
    J = K.shape[1]
    c = np.zeros((J, 3)) if pivots is None else np.asarray(pivots, np.float64)
    P = np.broadcast_to(np.asarray(positions, np.float64), (K.shape[0], V, 3))
    N = None if normals is None else np.broadcast_to(np.asarray(normals, np.float64), P.shape)
    T = None if tangents is None else np.broadcast_to(np.asarray(tangents, np.float64),
                                                      (K.shape[0], V, 4))
    out_p, out_n = P.copy(), None if N is None else N.copy()
    out_t = None if T is None else T.copy()
    for f in range(K.shape[0]):
        A, t = K[f, :, :3, :3], K[f, :, :3, 3]
        R, S = tf.polar(A)
        # A joint without scale (within 1e-5) is plain DQS: its 3x3 is the rotation, S = I.
        rigid_j = np.array([not has_scale(a) for a in A])
        R = np.where(rigid_j[:, None, None], A, R)
        S = np.where(rigid_j[:, None, None], np.eye(3), S)
        scale_aff = np.concatenate([S, (c - (S @ c[..., None])[..., 0])[..., None]], -1)
        t_rigid = t + (R @ (S @ c[..., None]))[..., 0] - (R @ c[..., None])[..., 0]
        dq = dual_quaternion(R, t_rigid)  # (J, 8)
        for v in range(V):
            wv, jv = w[v], idx[v]
            total = wv.sum()
            if total <= 1e-6:
                continue
            nz = [k for k in range(Kn) if wv[k] != 0]
            pivot = min(nz, key=lambda k: (-wv[k], jv[k]))
            q0 = dq[jv[pivot], :4]
            blend = np.zeros(8)
            sb = np.zeros((3, 4))
            for k in nz:
                q = dq[jv[k]]
                sign = -1.0 if np.dot(q[:4], q0) < 0 else 1.0
                blend += wv[k] * sign * q
                sb += (wv[k] / total) * scale_aff[jv[k]]
            real = blend[:4] / np.linalg.norm(blend[:4])
            dual = blend[4:] / np.linalg.norm(blend[:4])
            Rb = tf.quat_to_matrix(real)[:3, :3]
            tb = 2.0 * tf.quat_multiply(dual, tf.quat_conjugate(real))[:3]
            out_p[f, v] = Rb @ (sb[:, :3] @ P[f, v] + sb[:, 3]) + tb
            if N is not None:
                out_n[f, v] = _normalize(Rb @ cofactor(sb[:, :3]) @ N[f, v])
            if T is not None:
                out_t[f, v, :3] = _normalize(Rb @ sb[:, :3] @ T[f, v, :3])
    outs = [out_p] + [o for o in (out_n, out_t) if o is not None]
    if not batched:
        outs = [o[0] for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)
