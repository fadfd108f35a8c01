"""Blender interop: armatures and skinned meshes to skinkit and back (bpy imported lazily).

Runs inside Blender's Python or with the PyPI ``bpy`` module (Blender 4.2 - 5.0: Python 3.11);
``bpy`` is never a dependency of skinkit.

Spaces.  The :class:`~skinkit.Skeleton` is in world space: a root bone's local bind transform is
``armature.matrix_world @ bone.matrix_local`` (the rest pose), a child's is relative to its parent
bone.  The mesh keeps its own object space: ``mesh.base = mesh.bind_shape =
mesh_object.matrix_world``, so palettes are Blender's Armature-modifier matrices
``inv(premat) @ pose @ inv(rest) @ premat`` (``premat = inv(armature.matrix_world) @
mesh_object.matrix_world``) and the skinned positions are directly comparable with the modifier's
evaluated mesh (object space), ``world = base @ p``.  ``from_blender(..., space="armature")``
works in the armature object's space instead, the frame in which the modifier blends: the one
to use for Preserve Volume (DQS) parity when an object has a non-uniform scale.

Data moves with ``foreach_get`` / ``foreach_set`` (vertex positions, normals, triangles, shape
keys).  Vertex-group weights have no bulk API in Blender: reading loops over each vertex's groups
once; writing calls ``VertexGroup.add`` once per distinct weight of each group.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import result_float_dtype
from .mesh import SkinnedMesh
from .skeleton import Skeleton
from .skinning import Influences

__all__ = ["BlenderRig", "armature_to_skeleton", "read_influences", "from_blender",
           "pose_locals", "write_influences", "to_blender", "evaluated_positions"]


def _bpy():
    try:
        import bpy
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "skinkit.blender needs Blender's Python module bpy: run inside Blender, or "
            "pip install bpy==5.0.1 in a Python 3.11 environment") from None
    return bpy


def _matrix(m):
    """A mathutils Matrix as a float64 (4, 4) array (row-major, like mathutils indexing)."""
    return np.array([list(row) for row in m], dtype=np.float64)


@dataclass
class BlenderRig:
    """An armature as skinkit sees it.

    Attributes
    ----------
    skeleton : Skeleton
        One joint per bone, in ``armature.data.bones`` order, named after the bones, world-space
        bind pose, ``tails`` the bones' world-space tails.
    head_radius, tail_radius, distance : (J,) float64
        Envelope radii and falloff distance, already multiplied by the armature object's scale
        (as Blender does when binding "With Envelope Weights").
    envelope_weight : (J,) float64
        Bone envelope weight (Blender's "Envelope Weight").
    deform : (J,) bool
        ``bone.use_deform``: the Armature modifier ignores the other bones.
    matrix_world : (4, 4) float64
        The armature object's world matrix.
    """
    skeleton: Skeleton
    head_radius: np.ndarray
    tail_radius: np.ndarray
    distance: np.ndarray
    envelope_weight: np.ndarray
    deform: np.ndarray
    matrix_world: np.ndarray


def armature_to_skeleton(armature_object):
    """:class:`BlenderRig` (skeleton, envelope radii, deform flags) of an armature object's
    rest pose.

    Parameters
    ----------
    armature_object : bpy.types.Object of type "ARMATURE"
    """
    if getattr(armature_object, "type", None) != "ARMATURE":
        raise TypeError("armature_object must be a Blender armature object")
    bones = armature_object.data.bones
    names = [b.name for b in bones]
    index = {n: j for j, n in enumerate(names)}
    J = len(names)
    if J == 0:
        raise ValueError("armature_object has no bones (J = 0)")
    mw = _matrix(armature_object.matrix_world)
    rest = np.stack([_matrix(b.matrix_local) for b in bones])
    parents = np.array([index[b.parent.name] if b.parent else -1 for b in bones], dtype=np.int64)
    local = np.empty((J, 4, 4))
    for j in range(J):
        p = parents[j]
        local[j] = mw @ rest[j] if p < 0 else np.linalg.solve(rest[p], rest[j])
    tails = np.array([list(b.tail_local) for b in bones], dtype=np.float64)
    tails = tails @ mw[:3, :3].T + mw[:3, 3]
    # Blender scales the envelope by the armature object's scale when it binds: its
    # mat4_to_scale, the length of the 3x3 applied to the unit vector (1, 1, 1) / sqrt(3)
    scale = float(np.linalg.norm(mw[:3, :3] @ np.full(3, np.sqrt(1.0 / 3.0))))
    arr = lambda attr: np.array([getattr(b, attr) for b in bones], dtype=np.float64)  # noqa: E731
    return BlenderRig(
        skeleton=Skeleton(parents, local, names=names, tails=tails),
        head_radius=arr("head_radius") * scale, tail_radius=arr("tail_radius") * scale,
        distance=arr("envelope_distance") * scale, envelope_weight=arr("envelope_weight"),
        deform=np.array([b.use_deform for b in bones], dtype=bool), matrix_world=mw)


def read_influences(mesh_object, names, k=None, deform=None, dtype=np.float32):
    """Vertex-group weights of a mesh object as fixed-K influences.

    Groups are matched to joints by name (Blender's rule); groups without a joint, and joints
    with ``deform[j] == False``, are skipped, exactly as the Armature modifier does.

    Parameters
    ----------
    mesh_object : bpy.types.Object of type "MESH"
    names : sequence of J str
        Joint names (``skeleton.names``).
    k : int, optional
        Influences per vertex: the largest ``k`` are kept (not renormalized); default the
        largest count any vertex has (at least 1).
    deform : (J,) bool, optional
    dtype : float32 or float64

    Returns
    -------
    Influences with int32 indices and raw weights (rows may sum to anything: Blender
    renormalizes at evaluation, skinkit does not; use :func:`skinkit.weights.normalize`).
    """
    dtype = result_float_dtype(dtype)
    if getattr(mesh_object, "type", None) != "MESH":
        raise TypeError("mesh_object must be a Blender mesh object")
    index = {n: j for j, n in enumerate(names)}
    J = len(names)
    ok = np.ones(J, bool) if deform is None else np.asarray(deform, bool)
    group_joint = {}
    for g in mesh_object.vertex_groups:
        j = index.get(g.name)
        if j is not None and ok[j]:
            group_joint[g.index] = j
    me = mesh_object.data
    rows_v, rows_j, rows_w = [], [], []
    for v in me.vertices:  # no bulk API for vertex-group weights
        for ge in v.groups:
            j = group_joint.get(ge.group)
            if j is not None and ge.weight != 0.0:
                rows_v.append(v.index)
                rows_j.append(j)
                rows_w.append(ge.weight)
    V = len(me.vertices)
    rv, rj, rw = (np.asarray(rows_v, np.int64), np.asarray(rows_j, np.int64),
                  np.asarray(rows_w, np.float64))
    counts = np.bincount(rv, minlength=V) if rv.size else np.zeros(V, np.int64)
    K = int(max(1, counts.max(initial=0))) if k is None else int(k)
    if K < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    # sort each vertex's entries by weight, descending (ties: smaller joint first)
    order = np.lexsort((rj, -rw, rv))
    rv, rj, rw = rv[order], rj[order], rw[order]
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.arange(rv.size) - start[rv]
    keep = slot < K
    idx = np.zeros((V, K), np.int32)
    w = np.zeros((V, K), dtype)
    idx[rv[keep], slot[keep]] = rj[keep]
    w[rv[keep], slot[keep]] = rw[keep]
    return Influences(idx, w, J)


def _mesh_arrays(mesh_object, dtype):
    me = mesh_object.data
    V = len(me.vertices)
    co = np.empty(V * 3, np.float32)
    me.vertices.foreach_get("co", co)
    me.calc_loop_triangles()
    tri = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("vertices", tri)
    n = np.empty(V * 3, np.float32)
    if hasattr(me, "vertex_normals"):  # Blender >= 3.5
        me.vertex_normals.foreach_get("vector", n)
    else:  # pragma: no cover - older Blender
        me.vertices.foreach_get("normal", n)
    return (co.reshape(V, 3).astype(dtype), tri.reshape(-1, 3).astype(np.int64),
            n.reshape(V, 3).astype(dtype))


def from_blender(mesh_object, armature_object=None, k=None, dtype=np.float32, space="object"):
    """A :class:`~skinkit.SkinnedMesh` and its :class:`BlenderRig` from Blender objects.

    Parameters
    ----------
    mesh_object : bpy.types.Object of type "MESH"
        Its rest (undeformed) mesh is read: positions, vertex normals, triangles, vertex groups.
    armature_object : bpy.types.Object, optional
        Default: the object of the mesh's first Armature modifier.
    k : int, optional
        See :func:`read_influences`.
    dtype : float32 or float64
    space : {"object", "armature"}
        ``"object"``: positions in the mesh object's space, world-space skeleton,
        ``base = bind_shape = mesh_object.matrix_world`` (the module docstring): skinned
        positions compare directly with the modifier's output.  ``"armature"``: positions
        mapped into the armature object's space (Blender's ``premat``),
        ``base = bind_shape = armature.matrix_world``; this is the frame in which
        the Armature modifier blends, so it reproduces Preserve Volume (DQS) even when an object
        carries a non-uniform scale (then the object-space palettes are not rigid and DQS takes
        its scale path).  Map results to object space with ``inv(mesh_object.matrix_world) @
        base``.

    Returns
    -------
    mesh : SkinnedMesh
        Weights raw, as stored in the vertex groups.
    rig : BlenderRig
    """
    dtype = result_float_dtype(dtype)
    if space not in ("object", "armature"):
        raise ValueError(f"space must be 'object' or 'armature', got {space!r}")
    if armature_object is None:
        mods = [m for m in mesh_object.modifiers if m.type == "ARMATURE" and m.object]
        if not mods:
            raise ValueError("mesh_object has no Armature modifier with an object; pass "
                             "armature_object")
        armature_object = mods[0].object
    rig = armature_to_skeleton(armature_object)
    P, faces, N = _mesh_arrays(mesh_object, dtype)
    infl = read_influences(mesh_object, rig.skeleton.names, k=k, deform=rig.deform, dtype=dtype)
    mw = _matrix(mesh_object.matrix_world)
    if space == "object":
        base = bind_shape = mw
    else:
        premat = np.linalg.solve(rig.matrix_world, mw)
        P = (P.astype(np.float64) @ premat[:3, :3].T + premat[:3, 3]).astype(dtype)
        cof = np.linalg.inv(premat[:3, :3]).T  # normals transform by the inverse transpose
        N = N.astype(np.float64) @ cof.T
        N = (N / np.maximum(np.linalg.norm(N, axis=1, keepdims=True), 1e-30)).astype(dtype)
        base = bind_shape = rig.matrix_world
    mesh = SkinnedMesh(P, rig.skeleton, infl, normals=N, faces=faces, base=base,
                       bind_shape=bind_shape, name=mesh_object.name)
    return mesh, rig


def pose_locals(armature_object, skeleton=None):
    """The armature's current pose as skinkit locals ``(J, 4, 4)`` float64 (world-space roots,
    like :func:`armature_to_skeleton`), for ``mesh.palette(...)`` / ``mesh.pose(...)``.

    Read from each pose bone's evaluated ``matrix``, so constraints, drivers and Blender's
    inherit-scale options are already applied.
    """
    bpy = _bpy()
    dg = bpy.context.evaluated_depsgraph_get()
    pose_obj = armature_object.evaluated_get(dg)
    bones = armature_object.data.bones
    names = [b.name for b in bones] if skeleton is None else skeleton.names
    pb = pose_obj.pose.bones
    mats = np.stack([_matrix(pb[n].matrix) for n in names])
    mw = _matrix(pose_obj.matrix_world)
    index = {n: j for j, n in enumerate(names)}
    out = np.empty_like(mats)
    for j, n in enumerate(names):
        parent = pb[n].parent
        out[j] = mw @ mats[j] if parent is None else np.linalg.solve(mats[index[parent.name]],
                                                                     mats[j])
    return out


def write_influences(mesh_object, names, indices, weights, replace=True):
    """Write fixed-K influences into vertex groups named after the joints.

    Parameters
    ----------
    mesh_object : bpy.types.Object of type "MESH"
    names : sequence of J str
    indices : (V, K) int
    weights : (V, K) float or unorm uint8 / uint16
    replace : bool
        Clear the groups first (otherwise weights are replaced vertex by vertex).
    """
    idx = np.asarray(indices)
    w = np.asarray(weights)
    if w.dtype == np.uint8:
        w = w / 255.0
    elif w.dtype == np.uint16:
        w = w / 65535.0
    w = w.astype(np.float64)
    V = len(mesh_object.data.vertices)
    if idx.shape != w.shape or idx.ndim != 2 or idx.shape[0] != V:
        raise ValueError(f"indices and weights must both have shape ({V}, K)")
    for j, name in enumerate(names):
        vg = mesh_object.vertex_groups.get(name)
        if vg is None:
            vg = mesh_object.vertex_groups.new(name=name)
        elif replace:
            vg.remove(list(range(V)))
        rows, cols = np.nonzero((idx == j) & (w != 0))
        if rows.size == 0:
            continue
        vals = w[rows, cols]
        # one add() per distinct weight: the API takes one weight for a list of vertices
        order = np.argsort(vals, kind="stable")
        vals, rows = vals[order], rows[order]
        cuts = np.flatnonzero(np.diff(vals)) + 1
        for grp_rows, grp_vals in zip(np.split(rows, cuts), np.split(vals, cuts)):
            vg.add(grp_rows.tolist(), float(grp_vals[0]), "REPLACE")


def to_blender(mesh_object, positions, shape_key=None):
    """Put skinned positions back into Blender.

    Parameters
    ----------
    mesh_object : bpy.types.Object of type "MESH"
    positions : (V, 3) float
        In the mesh's object space (what :meth:`SkinnedMesh.pose` returns for a mesh from
        :func:`from_blender`).
    shape_key : str, optional
        Write into this shape key (created, with a Basis when the mesh has none) instead of the
        mesh's vertices.

    Returns
    -------
    The mesh data or the shape key written.
    """
    P = np.asarray(positions)
    me = mesh_object.data
    V = len(me.vertices)
    if P.ndim != 2 or P.shape != (V, 3):
        raise ValueError(f"positions must have shape ({V}, 3), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("positions contains NaN or inf")
    flat = np.ascontiguousarray(P, dtype=np.float32).reshape(-1)
    if shape_key is None:
        me.vertices.foreach_set("co", flat)
        me.update()
        return me
    if me.shape_keys is None:
        mesh_object.shape_key_add(name="Basis", from_mix=False)
    key = me.shape_keys.key_blocks.get(shape_key)
    if key is None:
        key = mesh_object.shape_key_add(name=shape_key, from_mix=False)
    key.data.foreach_set("co", flat)
    me.update()
    return key


def evaluated_positions(mesh_object):
    """Positions ``(V, 3)`` float32 of the mesh after its modifiers (e.g. the Armature
    modifier), in object space, read from the evaluated depsgraph."""
    bpy = _bpy()
    dg = bpy.context.evaluated_depsgraph_get()
    ev = mesh_object.evaluated_get(dg)
    me = ev.to_mesh()
    try:
        co = np.empty(len(me.vertices) * 3, np.float32)
        me.vertices.foreach_get("co", co)
    finally:
        ev.to_mesh_clear()
    return co.reshape(-1, 3)
