"""Transform helpers for rig scripts, vectorised over leading axes.

Conventions (README, "Conventions"): column vectors, ``p' = M @ [x, y, z, 1]``; matrices are
``(..., 4, 4)`` float64; quaternions are scalar-last ``(x, y, z, w)`` with the canonical sign
(``w > 0``, or when ``w == 0`` the first non-zero component positive); Euler sequences follow
SciPy: upper-case axes (``"XYZ"``) are intrinsic, lower-case (``"xyz"``) extrinsic.
"""
from __future__ import annotations

import numpy as np

from ._checks import real_array

__all__ = [
    "identity", "translation", "scale", "axis_angle", "rotvec", "euler", "quat_to_matrix",
    "matrix_to_quat", "quat_canonical", "quat_multiply", "quat_conjugate", "quat_slerp",
    "compose_trs", "decompose_trs", "polar", "rigid_inverse", "to_4x4", "to_3x4",
]


def _real(x, name):
    """``x`` as float64; bool, complex, object and string dtypes raise TypeError naming ``name``
    (a cast would silently drop imaginary parts or turn True into 1)."""
    return real_array(x, name).astype(np.float64, copy=False)


def _affine(x, name):
    """A ``(..., 3, 4)`` or ``(..., 4, 4)`` stack as float64 (ValueError naming it otherwise)."""
    m = _real(x, name)
    if m.ndim < 2 or m.shape[-2] not in (3, 4) or m.shape[-1] != 4:
        raise ValueError(f"{name} must have shape (..., 4, 4) or (..., 3, 4), got {m.shape}")
    return m


def _f64(x, name, last):
    a = _real(x, name)
    if a.shape[-len(last):] != last if a.ndim >= len(last) else True:
        raise ValueError(f"{name} must have shape (..., {', '.join(map(str, last))}), got {a.shape}")
    return a


def identity(shape=()):
    """``(*shape, 4, 4)`` identity matrices (``shape`` an int or a tuple)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return np.broadcast_to(np.eye(4), shape + (4, 4)).copy()


def translation(t):
    """Translation matrices from ``t : (..., 3)``."""
    t = _f64(t, "t", (3,))
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., [0, 1, 2, 3], [0, 1, 2, 3]] = 1.0
    m[..., :3, 3] = t
    return m


def scale(s):
    """Scale matrices from ``s : (..., 3)`` (or a scalar for a uniform scale)."""
    s = _real(s, "s")
    if s.ndim == 0:
        s = np.full(3, float(s))
    s = _f64(s, "s", (3,))
    m = np.zeros(s.shape[:-1] + (4, 4))
    m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], m[..., 3, 3] = s[..., 0], s[..., 1], s[..., 2], 1.0
    return m


def _rotation_3x3(axis, angle):
    axis = _f64(axis, "axis", (3,))
    angle = _real(angle, "angle")
    axis, angle = np.broadcast_arrays(axis, angle[..., None])
    angle = angle[..., 0]
    n = np.linalg.norm(axis, axis=-1)
    if np.any(n == 0):
        raise ValueError("axis must be non-zero")
    x, y, z = np.moveaxis(axis / n[..., None], -1, 0)
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    return np.stack([
        np.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s], -1),
        np.stack([y * x * C + z * s, c + y * y * C, y * z * C - x * s], -1),
        np.stack([z * x * C - y * s, z * y * C + x * s, c + z * z * C], -1),
    ], -2)


def _embed(r3):
    m = np.zeros(r3.shape[:-2] + (4, 4))
    m[..., :3, :3] = r3
    m[..., 3, 3] = 1.0
    return m


def axis_angle(axis, angle, degrees=False):
    """Rotation matrices about ``axis : (..., 3)`` by ``angle`` (radians unless ``degrees``),
    counter-clockwise looking down the axis (right-hand rule)."""
    angle = np.deg2rad(angle) if degrees else angle
    return _embed(_rotation_3x3(axis, angle))


def rotvec(v):
    """Rotation matrices from rotation vectors ``v : (..., 3)`` (axis × angle in radians)."""
    v = _f64(v, "v", (3,))
    angle = np.linalg.norm(v, axis=-1)
    safe = np.where(angle[..., None] > 0, v, [1.0, 0.0, 0.0])
    return axis_angle(safe, angle)


_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def euler(angles, seq="XYZ", degrees=False):
    """Rotation matrices from Euler angles ``(..., len(seq))``, SciPy's convention: upper-case
    ``seq`` is intrinsic (``"XYZ"``: R = Rx Ry Rz), lower-case extrinsic (``"xyz"``: R = Rz Ry Rx)."""
    if not isinstance(seq, str):
        raise TypeError(f"seq must be a str such as 'XYZ' or 'xyz', got {type(seq).__name__}")
    if not (1 <= len(seq) <= 3) or not (seq.isupper() or seq.islower()) or \
            any(c not in "xyz" for c in seq.lower()) or \
            any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"seq must be 1 to 3 of 'xyz' (extrinsic) or 'XYZ' (intrinsic), no axis "
                         f"twice in a row, got {seq!r}")
    angles = _real(angles, "angles")
    if len(seq) == 1 and (angles.ndim == 0 or angles.shape[-1] != 1):
        angles = angles[..., None]
    if angles.shape[-1] != len(seq):
        raise ValueError(f"angles must have shape (..., {len(seq)}), got {angles.shape}")
    if degrees:
        angles = np.deg2rad(angles)
    r = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3))
    for i, c in enumerate(seq):
        ri = _rotation_3x3(_AXES[c.lower()], angles[..., i])
        r = r @ ri if seq.isupper() else ri @ r
    return _embed(r)


def quat_canonical(q):
    """The canonical sign of quaternions ``(..., 4)`` xyzw: ``w > 0``, or when ``w == 0`` the
    first non-zero component positive."""
    q = _f64(q, "q", (4,))
    key = q[..., 3].copy()
    for i in range(3):
        z = key == 0
        key[z] = q[..., i][z]
    return np.where((key < 0)[..., None], -q, q)


def quat_to_matrix(q):
    """Rotation matrices from quaternions ``(..., 4)`` xyzw (normalised first)."""
    q = _f64(q, "q", (4,))
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(n == 0):
        raise ValueError("q must be non-zero")
    x, y, z, w = np.moveaxis(q / n, -1, 0)
    r = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)
    return _embed(r)


def matrix_to_quat(m):
    """Quaternions xyzw (canonical sign) of the rotation part of ``m : (..., 3|4, 3|4)``
    (Shepperd's method: the largest of the four candidate divisors).  The rotation part is the
    3x3 itself when it is a rotation up to rounding (``|AᵀA − I|`` within 1e-4, which takes in
    a float32 rotation and what DQS calls rigid, determinant > 0; the quaternion is normalized),
    else the rotation of its polar decomposition (:func:`polar`; for a scaled matrix without
    shear, its rotation), as SciPy's ``Rotation.from_matrix`` does."""
    m = _real(m, "m")
    if m.ndim < 2 or m.shape[-2] not in (3, 4) or m.shape[-1] not in (3, 4):
        raise ValueError(f"m must have shape (..., 3|4, 3|4), got {m.shape}")
    r = m[..., :3, :3]
    off = np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(3)).max(axis=(-2, -1))
    bad = ~((off <= 1e-4) & (np.linalg.det(r) > 0))
    if np.any(bad):
        r = r.copy()
        r[bad] = polar(r[bad])[0]
    tr = r[..., 0, 0] + r[..., 1, 1] + r[..., 2, 2]
    cand = np.stack([r[..., 0, 0], r[..., 1, 1], r[..., 2, 2], tr], -1)
    k = np.argmax(cand, axis=-1)
    q = np.empty(r.shape[:-2] + (4,))
    # w largest
    s = np.sqrt(np.maximum(1.0 + tr, 1e-300)) * 2
    qw = np.stack([(r[..., 2, 1] - r[..., 1, 2]) / s, (r[..., 0, 2] - r[..., 2, 0]) / s,
                   (r[..., 1, 0] - r[..., 0, 1]) / s, 0.25 * s], -1)
    s = np.sqrt(np.maximum(1.0 + r[..., 0, 0] - r[..., 1, 1] - r[..., 2, 2], 1e-300)) * 2
    qx = np.stack([0.25 * s, (r[..., 0, 1] + r[..., 1, 0]) / s, (r[..., 0, 2] + r[..., 2, 0]) / s,
                   (r[..., 2, 1] - r[..., 1, 2]) / s], -1)
    s = np.sqrt(np.maximum(1.0 + r[..., 1, 1] - r[..., 0, 0] - r[..., 2, 2], 1e-300)) * 2
    qy = np.stack([(r[..., 0, 1] + r[..., 1, 0]) / s, 0.25 * s, (r[..., 1, 2] + r[..., 2, 1]) / s,
                   (r[..., 0, 2] - r[..., 2, 0]) / s], -1)
    s = np.sqrt(np.maximum(1.0 + r[..., 2, 2] - r[..., 0, 0] - r[..., 1, 1], 1e-300)) * 2
    qz = np.stack([(r[..., 0, 2] + r[..., 2, 0]) / s, (r[..., 1, 2] + r[..., 2, 1]) / s, 0.25 * s,
                   (r[..., 1, 0] - r[..., 0, 1]) / s], -1)
    q = np.select([(k == 3)[..., None], (k == 0)[..., None], (k == 1)[..., None]], [qw, qx, qy], qz)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return quat_canonical(q)


def quat_multiply(a, b):
    """Hamilton product ``a ⊗ b`` of xyzw quaternions (rotation b first, then a)."""
    a, b = _f64(a, "a", (4,)), _f64(b, "b", (4,))
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], -1)


def quat_conjugate(q):
    q = _f64(q, "q", (4,))
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_slerp(a, b, t):
    """Spherical interpolation from ``a`` to ``b`` (xyzw, shortest arc) at ``t`` in [0, 1]."""
    a, b = _f64(a, "a", (4,)), _f64(b, "b", (4,))
    t = _real(t, "t")[..., None]
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    sin = np.sin(theta)
    near = sin < 1e-8
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(near, 1.0, sin))
    wb = np.where(near, t, np.sin(t * theta) / np.where(near, 1.0, sin))
    q = wa * a + wb * b
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def compose_trs(t=None, q=None, s=None):
    """``T @ R @ S`` from translations ``(..., 3)``, quaternions ``(..., 4)`` xyzw and scales
    ``(..., 3)`` (glTF's node order); any may be None."""
    parts = [np.asarray(x) for x in (t, q, s) if x is not None]
    lead = np.broadcast_shapes(*[p.shape[:-1] for p in parts]) if parts else ()
    m = np.broadcast_to(np.eye(4), lead + (4, 4)).copy()
    if s is not None:
        m = m @ scale(s)
    if q is not None:
        m = quat_to_matrix(q) @ m
    if t is not None:
        m[..., :3, 3] += _f64(t, "t", (3,))
    return m


_POLAR_TIE = 1e-5  # singular values this close (relative to the largest) count as equal


def _mirror_tie(a, q, sig, vt):
    """``(R, S)`` of a mirror ``a`` (3, 3) whose smallest singular value several directions
    share, or None: the sign goes on the unit ``n`` of that space leaving the smallest rotation
    ``R = Q (I - 2 n n^T)`` (the least ``n^T sym(Q) n``; ``Q = U V^T``); where several do, the
    coordinate axis nearest them, the first of equals.  ``S = R^T A``."""
    first = 2
    while first > 0 and sig[first - 1] - sig[2] <= _POLAR_TIE * sig[0]:
        first -= 1
    if first == 2 or not sig[2] > 0:
        return None
    v = vt[first:].T  # (3, m): an orthonormal basis of the shared space
    p = v @ v.T
    g = p @ (0.5 * (q + q.T)) @ p + 4.0 * (np.eye(3) - p)
    e, ev = np.linalg.eigh(g)  # ascending
    least = int(np.sum(e <= e[0] + 1e-6))
    if least == 1:
        n = ev[:, 0]
    else:
        pw = ev[:, :least] @ ev[:, :least].T
        axis = 0
        for i in (1, 2):
            if pw[i, i] > pw[axis, axis] + 1e-9:
                axis = i
        n = pw[:, axis] / np.sqrt(pw[axis, axis])
    r = q - 2.0 * np.outer(q @ n, n)
    return r, r.T @ a


def polar(a):
    """Polar decomposition ``A = R @ S`` of ``(..., 3, 3)`` matrices: ``R`` a proper rotation,
    ``S`` symmetric (with a negative eigenvalue when ``det A < 0``).

    With ``det A < 0`` the smallest singular direction takes the sign (``R`` is the rotation
    closest to ``A``).  When several directions share the smallest singular value (within 1e-5
    of the largest; a plain mirror: all three), any of them could: the one taken leaves the
    smallest rotation, so a mirror is ``R = I``, ``S = A`` (where several do, as for ``-s I``,
    the coordinate axis nearest them).  ``S`` is then ``R^T A`` (symmetric within the tie)."""
    a = _real(a, "a")
    if a.shape[-2:] != (3, 3):
        raise ValueError(f"a must have shape (..., 3, 3), got {a.shape}")
    u, sig, vt = np.linalg.svd(a)
    q = u @ vt
    flip = np.linalg.det(q) < 0
    u = u.copy()
    u[..., :, 2] = np.where(flip[..., None], -u[..., :, 2], u[..., :, 2])
    sig_s = np.where(flip[..., None], sig * np.array([1.0, 1.0, -1.0]), sig)
    r = u @ vt
    s = np.swapaxes(vt, -1, -2) @ (sig_s[..., None] * vt)
    s = 0.5 * (s + np.swapaxes(s, -1, -2))
    a_in = np.broadcast_to(np.asarray(a, np.float64), r.shape)
    for i in np.ndindex(flip.shape):  # mirrors: the tie rule (rare; one at a time)
        tie = _mirror_tie(a_in[i], q[i], sig[i], vt[i]) if flip[i] else None
        if tie is not None:
            r[i], s[i] = tie
    return r, s


def decompose_trs(m):
    """Translations ``(..., 3)``, quaternions ``(..., 4)`` and scales ``(..., 3)`` of matrices
    without shear (``m = T R S``); a negative determinant goes into the last scale."""
    m = _affine(m, "m")
    a = m[..., :3, :3]
    s = np.linalg.norm(a, axis=-2)
    neg = np.linalg.det(a) < 0
    s[..., 2] = np.where(neg, -s[..., 2], s[..., 2])
    r = a / np.where(s == 0, 1.0, s)[..., None, :]
    return m[..., :3, 3].copy(), matrix_to_quat(r), s


def rigid_inverse(m):
    """Inverse of rigid ``(..., 4, 4)`` (or ``(..., 3, 4)``) transforms by transposition."""
    m = _affine(m, "m")
    r = np.swapaxes(m[..., :3, :3], -1, -2)
    out = np.zeros(m.shape)
    out[..., :3, :3] = r
    out[..., :3, 3] = -(r @ m[..., :3, 3, None])[..., 0]
    if m.shape[-2] == 4:
        out[..., 3, 3] = 1.0
    return out


def to_4x4(m):
    """``(..., 3, 4)`` affine stacks to ``(..., 4, 4)``; 4×4 stacks pass through (as float64)."""
    m = _affine(m, "m")
    if m.shape[-2:] == (4, 4):
        return m
    out = np.zeros(m.shape[:-2] + (4, 4))
    out[..., :3, :] = m
    out[..., 3, 3] = 1.0
    return out


def to_3x4(m):
    """``(..., 4, 4)`` stacks to their compact ``(..., 3, 4)`` form (a view, dtype kept);
    ``(..., 3, 4)`` stacks pass through."""
    a = real_array(m, "m")
    if a.ndim < 2 or a.shape[-2] not in (3, 4) or a.shape[-1] != 4:
        raise ValueError(f"m must have shape (..., 4, 4) or (..., 3, 4), got {a.shape}")
    return a[..., :3, :]
