"""Artifact metrics: what a skinning method does to a mesh, in numbers.

Enclosed volume (divergence theorem) and its ratio to the rest mesh, the radius of the mesh
around a bone (seed 004's candy wrapper: LBS pinches a twisted joint), per-vertex displacement
between two results, edge-length distortion, the seam a rigid binding tears open, and sweeps that
twist or bend a joint over a range of angles and return every metric per method.

Every function takes plain arrays; ``positions`` may be one mesh ``(V, 3)`` or a batch
``(F, V, 3)``, and results then carry the leading ``F``.
"""
from __future__ import annotations

import numpy as np

from . import rigs
from .mesh import SkinnedMesh

__all__ = ["volume", "volume_ratio", "is_closed", "edges", "edge_lengths", "edge_distortion",
           "displacement", "skinned_rest", "joint_positions", "bone_radii", "min_bone_radius",
           "bone_distances", "bulge", "rigid_gap", "twist_sweep", "bend_sweep", "sweep"]


def _faces(faces):
    f = np.asarray(faces)
    if f.ndim != 2 or f.shape[1] != 3 or f.dtype.kind not in "iu":
        raise ValueError(f"faces must be (T, 3) integers, got {f.shape} {f.dtype}")
    return f


def volume(positions, faces):
    """Volume enclosed by a closed, outward-wound triangle mesh (divergence theorem:
    ``Σ a · (b × c) / 6`` over the triangles, about the mean of the vertices so that a mesh far
    from the origin keeps its precision), ``float`` or ``(F,)`` float64.  Negative for an
    inside-out mesh; meaningless for an open one (it then depends on the reference point;
    :func:`is_closed` tells)."""
    p = np.asarray(positions, dtype=np.float64)
    f = _faces(faces)
    if p.shape[-2]:
        p = p - p.mean(axis=-2, keepdims=True)
    a, b, c = p[..., f[:, 0], :], p[..., f[:, 1], :], p[..., f[:, 2], :]
    v = np.einsum("...i,...i->...", a, np.cross(b, c)).sum(-1) / 6.0
    return float(v) if np.ndim(v) == 0 else v


def is_closed(faces, positions=None):
    """True when the triangles form closed surfaces wound consistently: every directed edge
    appears once and its reverse once (each edge between exactly two triangles that agree on
    orientation), which :func:`volume` needs to mean anything.  With ``positions`` ``(V, 3)``,
    vertices at exactly the same place count as one (a cap or a UV seam that repeats its
    vertices still closes the surface)."""
    f = _faces(faces).astype(np.int64)
    if f.shape[0] == 0:
        return False
    if positions is not None:
        p = np.ascontiguousarray(positions, dtype=np.float64)
        _, weld = np.unique(p, axis=0, return_inverse=True)
        f = weld.reshape(-1)[f]
    d = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    n = int(f.max()) + 1
    key, rev = d[:, 0] * n + d[:, 1], d[:, 1] * n + d[:, 0]
    return bool(np.unique(key).size == key.size and np.isin(rev, key).all())


def volume_ratio(positions, rest, faces):
    """``volume(positions) / volume(rest)``: 1 preserves volume; LBS under twist falls below."""
    return volume(positions, faces) / volume(rest, faces)


def edges(faces):
    """Unique undirected edges ``(E, 2)`` (smaller index first) of a triangle list."""
    f = _faces(faces)
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    e.sort(axis=1)
    return np.unique(e, axis=0)


def edge_lengths(positions, edge_list):
    """Lengths ``(E,)`` or ``(F, E)`` of ``edge_list`` ``(E, 2)``."""
    p = np.asarray(positions, dtype=np.float64)
    e = np.asarray(edge_list)
    return np.linalg.norm(p[..., e[:, 1], :] - p[..., e[:, 0], :], axis=-1)


def edge_distortion(positions, rest, faces):
    """Per-edge length ratio ``deformed / rest`` ``(E,)`` or ``(F, E)`` (1 = unstretched);
    edges of zero rest length give NaN."""
    e = edges(faces)
    r = edge_lengths(rest, e)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r > 0, edge_lengths(positions, e) / np.where(r > 0, r, 1.0), np.nan)


def displacement(a, b):
    """Per-vertex distance ``|a - b|`` between two results (e.g. LBS vs DQS), ``(V,)`` or
    ``(F, V)``."""
    return np.linalg.norm(np.asarray(a, np.float64) - np.asarray(b, np.float64), axis=-1)


def skinned_rest(mesh):
    """The rest mesh where the kernels put it: the bind pose skinned, ``inv(base) @ bind_shape @
    p`` (README: at the bind pose ``K = inv(base) @ bind_shape``), ``(V, 3)`` float64.  The
    mesh's own positions when ``base`` equals ``bind_shape`` (the glTF loader's meshes, and the
    built-in rigs).  The metrics compare a deformed mesh with this, never with the object-space
    positions."""
    p = np.asarray(mesh.positions, np.float64)
    m = np.linalg.solve(mesh.base, mesh.bind_shape)
    if np.array_equal(m, np.eye(4)):
        return p
    return p @ m[:3, :3].T + m[:3, 3]


def joint_positions(mesh, palette):
    """Posed joint positions in the skinning frame, ``(J, 3)`` or ``(F, J, 3)``: each joint's
    bind position moved by its own skinning matrix (``K[j] @ c_j``)."""
    K = np.asarray(palette, dtype=np.float64)
    c = mesh.pivots()
    return np.einsum("...jab,jb->...ja", K[..., :3, :3], c) + K[..., :3, 3]


def bone_radii(mesh, positions, palette, a, b):
    """Distance of each vertex near bone ``a → b`` to the posed bone's line.

    The vertices are chosen on the rest mesh (their projection onto the rest segment from joint
    ``a`` to joint ``b`` lies within it), so the same vertices are compared across methods and
    poses; the radius is measured from the line through the posed joints.

    Returns
    -------
    radii : (n,) or (F, n) float64
    selected : (n,) int, the vertex indices
    """
    ja, jb = mesh.skeleton.index(a), mesh.skeleton.index(b)
    c = mesh.pivots()
    d = c[jb] - c[ja]
    L2 = float(d @ d)
    if L2 == 0:
        raise ValueError(f"joints {a!r} and {b!r} are at the same place")
    s = (np.asarray(mesh.positions, np.float64) - c[ja]) @ d / L2
    sel = np.flatnonzero((s >= -1e-9) & (s <= 1 + 1e-9))
    jp = joint_positions(mesh, palette)
    pa, pb = jp[..., ja, :], jp[..., jb, :]
    axis = pb - pa
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    rel = np.asarray(positions, np.float64)[..., sel, :] - pa[..., None, :]
    along = np.einsum("...vi,...i->...v", rel, axis)
    perp = rel - along[..., None] * axis[..., None, :]
    return np.linalg.norm(perp, axis=-1), sel


def min_bone_radius(mesh, positions, palette, a, b, relative=True):
    """Smallest :func:`bone_radii` over the segment ``a → b``; with ``relative`` divided by the
    rest mesh's smallest radius there (1 = no pinch).  ``float`` or ``(F,)``."""
    r, _ = bone_radii(mesh, positions, palette, a, b)
    m = r.min(axis=-1)
    if relative:
        rest, _ = bone_radii(mesh, skinned_rest(mesh), mesh.palette(), a, b)
        m = m / rest.min()
    return float(m) if np.ndim(m) == 0 else m


def bone_distances(mesh, positions, palette):
    """Distance of every vertex to the nearest posed bone segment (parent joint → joint, each
    end moved by its own skinning matrix as in :func:`joint_positions`), ``(V,)`` or ``(F, V)``
    float64.  A skeleton of one joint measures to that joint."""
    P = np.asarray(positions, np.float64)
    jp = joint_positions(mesh, palette)
    parents = np.asarray(mesh.skeleton.parents)
    segs = [(int(p), j) for j, p in enumerate(parents) if p >= 0] or [(0, 0)]
    best = None
    for a, b in segs:
        pa, pb = jp[..., a, None, :], jp[..., b, None, :]
        d = pb - pa
        L2 = np.sum(d * d, axis=-1, keepdims=True)
        t = np.clip(np.sum((P - pa) * d, axis=-1, keepdims=True) / np.where(L2 > 0, L2, 1.0), 0, 1)
        dist = np.linalg.norm(P - (pa + t * d), axis=-1)
        best = dist if best is None else np.minimum(best, dist)
    return best


def bulge(mesh, positions, palette):
    """The largest increase of any vertex's distance from the (posed) bones over its rest
    distance: how far a method pushes skin out at a bent joint (DQS's bulge), 0 when nothing
    moves away.  ``float`` or ``(F,)``."""
    rest = bone_distances(mesh, skinned_rest(mesh), mesh.palette())
    g = np.maximum(bone_distances(mesh, positions, palette) - rest, 0.0).max(axis=-1)
    return float(g) if np.ndim(g) == 0 else g


def rigid_gap(mesh, palette, faces=None):
    """The seam rigid skinning tears open: give every vertex its largest-weight joint (as
    ``skin(method="rigid")``), cut the mesh where an edge joins two joints, and move each side
    with its own joint; the gap is the largest distance between the two copies of a cut vertex,
    ``max |K[j_u] v − K[j_w] v|`` over cut edges (u, w) and their ends v.  ``float`` or ``(F,)``
    (0 when nothing is cut)."""
    f = mesh.faces if faces is None else faces
    if f is None:
        raise ValueError("faces: the mesh has no faces")
    w = np.asarray(mesh.weights, np.float64)
    j = np.take_along_axis(np.asarray(mesh.indices, np.int64), np.argmax(w, 1)[:, None], 1)[:, 0]
    e = edges(f)
    cut = e[j[e[:, 0]] != j[e[:, 1]]]
    K = np.asarray(palette, dtype=np.float64)
    if cut.size == 0:
        return 0.0 if K.ndim == 3 else np.zeros(K.shape[0])
    v = np.concatenate([cut[:, 0], cut[:, 1]])
    ja = np.concatenate([j[cut[:, 0]], j[cut[:, 0]]])
    jb = np.concatenate([j[cut[:, 1]], j[cut[:, 1]]])
    p = np.asarray(mesh.positions, np.float64)[v]
    A, B = K[..., ja, :3, :], K[..., jb, :3, :]
    pa = np.einsum("...vab,vb->...va", A[..., :3], p) + A[..., 3]
    pb = np.einsum("...vab,vb->...va", B[..., :3], p) + B[..., 3]
    g = np.linalg.norm(pa - pb, axis=-1).max(axis=-1)
    return float(g) if np.ndim(g) == 0 else g


def sweep(mesh, locals, methods=("rigid", "lbs", "dqs"), segment=None, threads=None):
    """Deform ``mesh`` for a batch of poses with each method and measure.

    Parameters
    ----------
    mesh : SkinnedMesh
        With faces for the volume and edge metrics; ``volume_ratio`` is NaN when they do not
    form closed surfaces (:func:`is_closed`), where a volume means nothing.
    locals : (A, J, 4, 4)
        One pose per sweep step.
    methods : sequence of str
    segment : (joint, joint), optional
        Bone for the radius metric.

    Returns
    -------
    dict
        ``"positions"``: {method: (A, V, 3)}, ``"volume_ratio"``: {method: (A,)},
        ``"max_edge_stretch"``: {method: (A,)} (largest ``|ratio - 1|``), ``"min_radius"``:
        {method: (A,)} relative to rest (with ``segment``), ``"bulge"``: {method: (A,)}
        (:func:`bulge`), ``"rigid_gap"``: (A,),
        ``"displacement_lbs_dqs"``: (A,) max over vertices (when both are swept).
    """
    if not isinstance(mesh, SkinnedMesh):
        raise TypeError(f"mesh must be a SkinnedMesh, not {type(mesh).__name__}")
    K = mesh.palette(locals)
    res = {"positions": {}, "volume_ratio": {}, "max_edge_stretch": {}, "min_radius": {},
           "bulge": {}}
    rest = skinned_rest(mesh)
    closed = mesh.faces is not None and is_closed(mesh.faces, rest)
    for m in methods:
        P = mesh.deform(K, method=m, threads=threads)
        res["positions"][m] = P
        if mesh.faces is not None:
            res["volume_ratio"][m] = (volume_ratio(P, rest, mesh.faces) if closed
                                      else np.full(K.shape[:-3], np.nan))
            res["max_edge_stretch"][m] = np.nanmax(
                np.abs(edge_distortion(P, rest, mesh.faces) - 1), axis=-1)
        if segment is not None:
            res["min_radius"][m] = min_bone_radius(mesh, P, K, *segment)
        res["bulge"][m] = bulge(mesh, P, K)
    if mesh.faces is not None:
        res["rigid_gap"] = rigid_gap(mesh, K)
    if "lbs" in methods and "dqs" in methods:
        res["displacement_lbs_dqs"] = displacement(res["positions"]["lbs"],
                                                   res["positions"]["dqs"]).max(-1)
    return res


def twist_sweep(mesh, joint, angles, methods=("rigid", "lbs", "dqs"), axis=None, segment=None,
                degrees=True, threads=None):
    """Twist ``joint`` about its bone axis by each of ``angles`` and :func:`sweep`.

    ``segment`` defaults to (parent of ``joint``, ``joint``): the bone whose skin the twist
    wrings.  Returns :func:`sweep`'s dict plus ``"angles"`` and ``"kind"`` (``"twist"``)."""
    j = mesh.skeleton.index(joint)
    if segment is None and mesh.skeleton.parents[j] >= 0:
        segment = (int(mesh.skeleton.parents[j]), j)
    a = np.atleast_1d(np.asarray(angles, dtype=np.float64))
    out = sweep(mesh, rigs.twist(mesh.skeleton, j, a, axis=axis, degrees=degrees), methods,
                segment, threads)
    out["angles"], out["kind"] = a, "twist"
    return out


def bend_sweep(mesh, joint, angles, methods=("rigid", "lbs", "dqs"), axis=(0.0, 0.0, 1.0),
               segment=None, degrees=True, threads=None):
    """Bend ``joint`` about ``axis`` by each of ``angles`` and :func:`sweep` (segment as
    :func:`twist_sweep`; ``"kind"`` is ``"bend"``)."""
    j = mesh.skeleton.index(joint)
    if segment is None and mesh.skeleton.parents[j] >= 0:
        segment = (int(mesh.skeleton.parents[j]), j)
    a = np.atleast_1d(np.asarray(angles, dtype=np.float64))
    out = sweep(mesh, rigs.bend(mesh.skeleton, j, a, axis=axis, degrees=degrees), methods,
                segment, threads)
    out["angles"], out["kind"] = a, "bend"
    return out
