"""Rig scripting: primitives with normals, posing by joint name, T / A poses, keyframed clips,
and the built-in rigs (seed 001's skinned cylinder, a bendable arm, a stick humanoid).

Every primitive returns a :class:`Primitive` of plain arrays (``positions (V, 3)``,
``normals (V, 3)``, ``faces (T, 3)``, counter-clockwise seen from outside) that can be handed to
:class:`skinkit.SkinnedMesh`.  Angles are in degrees unless ``degrees=False``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import transforms as tf
from ._checks import positive_int, real_array, result_float_dtype, transforms
from .mesh import Clip, SkinnedMesh
from .skeleton import Skeleton

__all__ = [
    "Primitive", "cylinder", "capsule", "plane_strip", "rotation", "pose", "twist", "bend",
    "a_pose", "t_pose", "keyframes", "seed001", "arm", "humanoid",
]


@dataclass
class Primitive:
    """A triangle mesh as plain arrays.

    Attributes
    ----------
    positions : (V, 3) float64
    normals : (V, 3) float64, unit length
    faces : (T, 3) int64, counter-clockwise seen from outside
    """

    positions: np.ndarray
    normals: np.ndarray
    faces: np.ndarray

    def transformed(self, matrix):
        """The primitive moved by ``matrix`` (4, 4): normals by its inverse transpose,
        renormalized, and the winding reversed for a mirror, so both stay outward."""
        m, _ = transforms(matrix, "matrix", batch_ndim=0, dtype=np.float64)
        m = tf.to_4x4(m)
        a = m[:3, :3]
        det = np.linalg.det(a)
        if abs(det) < 1e-12:
            raise ValueError("matrix is singular")
        n = self.normals @ np.linalg.inv(a)
        n /= np.linalg.norm(n, axis=1, keepdims=True)
        faces = self.faces if det > 0 else self.faces[:, ::-1].copy()  # a mirror flips winding
        return Primitive(self.positions @ a.T + m[:3, 3], n, faces)

    def astype(self, dtype):
        dtype = result_float_dtype(dtype)
        return Primitive(self.positions.astype(dtype), self.normals.astype(dtype), self.faces)


def _grid_faces(rows, cols, wrap=True, offset=0):
    """Quads of a (rows x cols) vertex grid, row-major, split in two triangles each; with
    ``wrap`` the last column connects to the first.  Winding: (r, c) → (r, c+1) → (r+1, c+1)
    is counter-clockwise when columns run counter-clockwise seen from outside and rows go up."""
    c_end = cols if wrap else cols - 1
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(c_end), indexing="ij")
    r, c = r.ravel(), c.ravel()
    a = r * cols + c
    b = r * cols + (c + 1) % cols
    d = (r + 1) * cols + c
    e = (r + 1) * cols + (c + 1) % cols
    return offset + np.concatenate([np.stack([a, b, e], 1), np.stack([a, e, d], 1)])


def _disc(center_y, radius, radial, up, offset):
    """A cap: a center vertex and a ring (duplicated from the side so the normals are flat)."""
    ang = 2 * np.pi * np.arange(radial) / radial
    ring = np.stack([radius * np.cos(ang), np.full(radial, center_y), -radius * np.sin(ang)], 1)
    pos = np.vstack([[0.0, center_y, 0.0], ring])
    nrm = np.tile([0.0, 1.0 if up else -1.0, 0.0], (radial + 1, 1))
    i = np.arange(radial)
    ctr, cur, nxt = offset, offset + 1 + i, offset + 1 + (i + 1) % radial
    faces = np.stack([ctr + 0 * i, cur, nxt], 1) if up else np.stack([ctr + 0 * i, nxt, cur], 1)
    return pos, nrm, faces


def cylinder(radius=40.0, height=200.0, radial_segments=12, height_segments=20, matrix=None,
             caps=True):
    """A capped cylinder around the y axis, centred on the origin like O3D's
    ``createCylinderVertices`` (seed 001); ``matrix`` places it (seed 001 lifts it by 100 so it
    stands on the origin: ``tf.translation([0, 100, 0])``).

    Side vertices form ``height_segments + 1`` rings of ``radial_segments`` (no seam copy);
    each cap adds a centre and its own copy of the rim ring so cap normals stay flat.  The
    surface is closed (its enclosed volume is the polygonal prism's,
    ``0.5 n r² sin(2π/n) h``).

    Returns
    -------
    Primitive
    """
    n = positive_int(radial_segments, "radial_segments", 3)
    m = positive_int(height_segments, "height_segments", 1)
    radius, height = float(radius), float(height)
    if not radius > 0 or not height > 0:
        raise ValueError("radius and height must be positive")
    ang = 2 * np.pi * np.arange(n) / n
    # x = cos, z = -sin: counter-clockwise seen from +y, so quads wind outward (see _grid_faces)
    ys = np.linspace(-height / 2, height / 2, m + 1)
    ring = np.stack([np.cos(ang), np.zeros(n), -np.sin(ang)], 1)
    pos = (ring[None] * radius + ys[:, None, None] * np.array([0.0, 1.0, 0.0])).reshape(-1, 3)
    nrm = np.tile(ring, (m + 1, 1))
    faces = [_grid_faces(m + 1, n)]
    P, N = [pos], [nrm]
    if caps:
        off = pos.shape[0]
        for y, up in ((-height / 2, False), (height / 2, True)):
            p, q, f = _disc(y, radius, n, up, off)
            P.append(p), N.append(q), faces.append(f)
            off += p.shape[0]
    prim = Primitive(np.vstack(P), np.vstack(N), np.vstack(faces).astype(np.int64))
    return prim if matrix is None else prim.transformed(matrix)


def capsule(radius=10.0, length=60.0, radial_segments=16, height_segments=12, cap_segments=6,
            matrix=None):
    """A welded capsule along +y: a cylinder of ``length`` from y = 0 to y = ``length`` with
    hemispherical ends (total extent ``length + 2 radius``); one vertex at each pole.

    Returns
    -------
    Primitive
    """
    n = positive_int(radial_segments, "radial_segments", 3)
    m = positive_int(height_segments, "height_segments", 1)
    c = positive_int(cap_segments, "cap_segments", 1)
    radius, length = float(radius), float(length)
    if not radius > 0 or not length >= 0:
        raise ValueError("radius must be positive and length non-negative")
    # latitude rings from the bottom pole to the top pole (poles excluded)
    lat_bottom = -np.pi / 2 + np.pi / 2 * np.arange(1, c + 1) / c          # up to the equator
    lat_top = np.pi / 2 * np.arange(0, c) / c                              # from the equator
    rings = ([(np.cos(a), np.sin(a), 0.0) for a in lat_bottom]
             + [(1.0, 0.0, length * k / m) for k in range(1, m)]
             + [(np.cos(a), np.sin(a), length) for a in lat_top])
    ang = 2 * np.pi * np.arange(n) / n
    ring = np.stack([np.cos(ang), np.zeros(n), -np.sin(ang)], 1)
    pos, nrm = [], []
    for cr, sr, y0 in rings:
        nn = ring * cr + np.array([0.0, sr, 0.0])
        nrm.append(nn)
        pos.append(nn * radius + np.array([0.0, y0, 0.0]))
    pos, nrm = np.vstack(pos), np.vstack(nrm)
    R = len(rings)
    faces = [_grid_faces(R, n)]
    bottom, top = R * n, R * n + 1
    i = np.arange(n)
    faces.append(np.stack([np.full(n, bottom), (i + 1) % n, i], 1))
    faces.append(np.stack([np.full(n, top), (R - 1) * n + i, (R - 1) * n + (i + 1) % n], 1))
    pos = np.vstack([pos, [0.0, -radius, 0.0], [0.0, length + radius, 0.0]])
    nrm = np.vstack([nrm, [0.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    prim = Primitive(pos, nrm, np.vstack(faces).astype(np.int64))
    return prim if matrix is None else prim.transformed(matrix)


def plane_strip(length=100.0, width=10.0, length_segments=20, width_segments=1, matrix=None):
    """A flat strip along +y from 0 to ``length``, ``width`` wide across x, normals +z (an open
    surface, good for watching a bend).

    Returns
    -------
    Primitive
    """
    m = positive_int(length_segments, "length_segments", 1)
    k = positive_int(width_segments, "width_segments", 1)
    ys = np.linspace(0.0, float(length), m + 1)
    xs = np.linspace(-float(width) / 2, float(width) / 2, k + 1)
    Y, X = np.meshgrid(ys, xs, indexing="ij")
    pos = np.stack([X.ravel(), Y.ravel(), np.zeros(X.size)], 1)
    nrm = np.tile([0.0, 0.0, 1.0], (pos.shape[0], 1))
    prim = Primitive(pos, nrm, _grid_faces(m + 1, k + 1, wrap=False).astype(np.int64))
    return prim if matrix is None else prim.transformed(matrix)


# ---------------------------------------------------------------------------------------------
# Posing
# ---------------------------------------------------------------------------------------------
def rotation(spec, degrees=True):
    """A (4, 4) rotation from a flexible spec.

    ``spec`` may be a (3, 3) or (4, 4) matrix; a quaternion ``(4,)`` xyzw; a rotation vector
    ``(3,)`` (axis × angle, in degrees when ``degrees``); ``(axis, angle)`` with ``axis`` one of
    ``"x" "y" "z"`` or a 3-vector; or ``(seq, angles)`` with an Euler sequence like ``"XYZ"``
    (SciPy's convention: upper-case intrinsic, lower-case extrinsic).
    """
    if isinstance(spec, tuple) and len(spec) == 2 and (
            isinstance(spec[0], str) or np.shape(spec[0]) == (3,)):
        axis, angle = spec
        if isinstance(axis, str):
            if len(axis) > 1 or np.ndim(angle) == 1:
                return tf.euler(angle, axis, degrees=degrees)
            if axis.lower() not in ("x", "y", "z"):
                raise ValueError(f"axis must be 'x', 'y', 'z' or a 3-vector, got {axis!r}")
            axis = tf._AXES[axis.lower()]
        return tf.axis_angle(axis, float(angle), degrees=degrees)
    a = real_array(spec, "rotation").astype(np.float64)
    if a.shape in ((3, 3), (4, 4)):
        m = tf.to_4x4(np.vstack([a[:3], [[0, 0, 0, 1]]]) if a.shape == (4, 4) else
                      np.hstack([a, np.zeros((3, 1))]))
        if not np.allclose(m[:3, :3] @ m[:3, :3].T, np.eye(3), atol=1e-6) or np.linalg.det(m[:3, :3]) < 0:
            raise ValueError("rotation: the matrix is not a proper rotation")
        m[:3, 3] = 0.0
        return m
    if a.shape == (4,):
        return tf.quat_to_matrix(a)
    if a.shape == (3,):
        return tf.rotvec(np.deg2rad(a) if degrees else a)
    raise ValueError(f"rotation: cannot read a spec of shape {a.shape}")


def pose(skeleton, rotations=None, translations=None, locals=None, compose=True, degrees=True):
    """Local transforms ``(J, 4, 4)`` with joints rotated by name (or index).

    Parameters
    ----------
    skeleton : Skeleton
    rotations : dict joint -> rotation spec, optional
        See :func:`rotation`.  With ``compose`` (default) the rotation is applied in the joint's
        own frame about its origin, after its current local (``local @ R``); otherwise it
        replaces the local rotation, keeping the translation.
    translations : dict joint -> (3,), optional
        Replace the joint's local translation.
    locals : (J, 4, 4), optional
        Starting pose (the bind pose by default); not modified.

    Returns
    -------
    (J, 4, 4) float64
    """
    out = skeleton.local_bind.copy() if locals is None else tf.to_4x4(
        transforms(locals, "locals", batch_ndim=1, dtype=np.float64)[0]).copy()
    if out.shape[0] != skeleton.n_joints:
        raise ValueError(f"locals has {out.shape[0]} joints, the skeleton has {skeleton.n_joints}")
    for joint, spec in (rotations or {}).items():
        j = skeleton.index(joint)
        r = rotation(spec, degrees=degrees)
        if compose:
            out[j] = out[j] @ r
        else:
            t = out[j, :3, 3].copy()
            out[j] = r
            out[j, :3, 3] = t
    for joint, t in (translations or {}).items():
        j = skeleton.index(joint)
        out[j, :3, 3] = np.asarray(t, dtype=np.float64)
    return out


def _bone_axis(skeleton, j):
    """Unit direction from joint j to its first child in j's local frame (y for a leaf)."""
    kids = skeleton.children(j)
    if kids.size == 0:
        return np.array([0.0, 1.0, 0.0])
    d = skeleton.local_bind[kids[0], :3, 3]
    n = np.linalg.norm(d)
    return d / n if n > 0 else np.array([0.0, 1.0, 0.0])


def twist(skeleton, joint, angles, axis=None, degrees=True, locals=None):
    """Locals ``(J, 4, 4)`` (scalar angle) or ``(A, J, 4, 4)`` with ``joint`` rotated about its
    bone axis (towards its first child, in its own frame; or ``axis``) by ``angles``."""
    j = skeleton.index(joint)
    ax = _bone_axis(skeleton, j) if axis is None else np.asarray(axis, dtype=np.float64)
    return _rotate_many(skeleton, j, ax, angles, degrees, locals)


def bend(skeleton, joint, angles, axis=(0.0, 0.0, 1.0), degrees=True, locals=None):
    """Like :func:`twist` about ``axis`` (default z, perpendicular to a y-bone)."""
    j = skeleton.index(joint)
    return _rotate_many(skeleton, j, np.asarray(axis, dtype=np.float64), angles, degrees, locals)


def _rotate_many(skeleton, j, axis, angles, degrees, locals):
    a = np.asarray(angles, dtype=np.float64)
    base = pose(skeleton, locals=locals)
    out = np.broadcast_to(base, a.shape + base.shape).copy()
    out[..., j, :, :] = base[j] @ tf.axis_angle(axis, a, degrees=degrees)
    return out


def t_pose(skeleton):
    """The T pose: the bind locals of a skeleton bound in T pose (:func:`humanoid`)."""
    return skeleton.local_bind.copy()


def a_pose(skeleton, angle=45.0, arms=("l_shoulder", "r_shoulder"), degrees=True, locals=None):
    """Lower the arms of a T-posed humanoid by ``angle`` (seed 002's A pose): each shoulder
    rotates about the forward axis (z) so its arm points down-and-out.  Which way is "down" is
    read from the arm's direction (+x arms rotate by -angle, -x arms by +angle)."""
    rot = {}
    for name in arms:
        j = skeleton.index(name)
        ax = _bone_axis(skeleton, j)
        sign = -1.0 if ax[0] >= 0 else 1.0
        rot[name] = ((0.0, 0.0, 1.0), sign * angle)
    return pose(skeleton, rot, locals=locals, degrees=degrees)


def keyframes(skeleton, times, poses, name=None, interpolation="linear"):
    """A :class:`Clip` from full poses: ``poses`` a list of ``(J, 4, 4)`` locals or of
    :func:`pose` dicts ``{joint: rotation spec}`` (composed on the bind pose), one per time."""
    mats = [pose(skeleton, p) if isinstance(p, dict) else
            pose(skeleton, locals=p) for p in poses]
    return Clip(times, np.stack(mats), rest=skeleton, name=name, interpolation=interpolation)


# ---------------------------------------------------------------------------------------------
# Built-in rigs
# ---------------------------------------------------------------------------------------------
def seed001(radius=40.0, height=200.0, radial_segments=12, height_segments=20, n_joints=11,
            spacing=20.0, dtype=np.float64):
    """Seed 001's skinned cylinder: radius 40, height 200, 12 × 20 segments, standing on the
    origin (placement matrix: translation by 100 along y); a chain of 11 joints 20 apart along
    y; height-band weights ``(1 - f, f)`` (:func:`skinkit.bind.height_bands`, with the seed's
    errata: clamped at both ends); ``base`` the identity (the root's world matrix).

    Returns
    -------
    SkinnedMesh
    """
    prim = cylinder(radius, height, radial_segments, height_segments,
                    matrix=tf.translation([0.0, height / 2, 0.0])).astype(dtype)
    from . import bind

    skel = Skeleton.chain(n_joints, spacing)
    idx, w = bind.height_bands(prim.positions, skel)
    return SkinnedMesh(prim.positions, skel, (idx, w), normals=prim.normals,
                       faces=prim.faces, name="seed001_cylinder")


def arm(upper=30.0, fore=30.0, radius=5.0, blend=6.0, radial_segments=16, segments=24,
        dtype=np.float64):
    """A bendable arm along +y: a capsule over ``shoulder`` (y = 0) → ``elbow`` (y = upper) →
    ``wrist`` (y = upper + fore); weights ramp linearly from the upper arm to the forearm over
    ``±blend`` around the elbow (the ``wrist`` joint carries the hand's end and gets no weight).

    Returns
    -------
    SkinnedMesh
    """
    L = float(upper) + float(fore)
    prim = capsule(radius, L, radial_segments, segments, 6).astype(dtype)
    local = tf.translation([[0.0, 0.0, 0.0], [0.0, upper, 0.0], [0.0, fore, 0.0]])
    skel = Skeleton([-1, 0, 1], local, names=["shoulder", "elbow", "wrist"])
    y = prim.positions[:, 1].astype(np.float64)
    f = np.clip((y - upper) / (2 * float(blend)) + 0.5, 0.0, 1.0) if blend > 0 else (y >= upper) * 1.0
    idx = np.stack([np.zeros_like(y), np.ones_like(y)], 1).astype(np.int32)
    w = np.stack([1.0 - f, f], 1)
    idx[w == 0] = 0
    return SkinnedMesh(prim.positions, skel, (idx, w.astype(dtype)), normals=prim.normals,
                       faces=prim.faces, name="arm")


def humanoid(height=180.0, bind="T"):
    """A stick skeleton of 17 joints (hips, spine, chest, neck, head, both arms and legs) in
    T pose (arms along ±x) or A pose (``bind="A"``: arms 45° down), y up, facing +z.

    Returns
    -------
    Skeleton
    """
    s = float(height) / 180.0
    names = ["hips", "spine", "chest", "neck", "head",
             "l_shoulder", "l_elbow", "l_wrist", "r_shoulder", "r_elbow", "r_wrist",
             "l_hip", "l_knee", "l_ankle", "r_hip", "r_knee", "r_ankle"]
    parents = [-1, 0, 1, 2, 3, 2, 5, 6, 2, 8, 9, 0, 11, 12, 0, 14, 15]
    t = np.array([[0, 95, 0], [0, 15, 0], [0, 20, 0], [0, 15, 0], [0, 12, 0],
                  [18, 8, 0], [28, 0, 0], [25, 0, 0], [-18, 8, 0], [-28, 0, 0], [-25, 0, 0],
                  [10, -5, 0], [0, -43, 0], [0, -42, 0], [-10, -5, 0], [0, -43, 0], [0, -42, 0]],
                 dtype=np.float64) * s
    skel = Skeleton(parents, tf.translation(t), names=names)
    if bind == "T":
        return skel
    if bind == "A":
        return Skeleton(parents, a_pose(skel), names=names)
    raise ValueError(f"bind must be 'T' or 'A', got {bind!r}")
