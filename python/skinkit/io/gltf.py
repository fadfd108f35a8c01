"""glTF 2.0 skins and animations in and out.

``meshes, clips = load(path)`` reads every skinned primitive of a ``.gltf`` (embedded or external
buffers) or ``.glb`` file as a :class:`~skinkit.SkinnedMesh` and every animation as a
:class:`~skinkit.Clip`, posed exactly as the glTF 2.0 specification (section 3.7.3) says::

    world vertex = sum_k  w_k  G(joint_k, t) @ inverseBindMatrix_k @ p

with ``G`` the joint node's global matrix from the scene root (non-joint ancestors included) and
the skinned mesh node's own transform ignored (``skin.skeleton`` is only a hint and is not used).

Output space (DESIGN.md section 1): the skeleton's globals are world matrices; ``mesh.base`` is
the world matrix of the frame of the skeleton's non-joint ancestors (identity when the root joints
sit at the scene root, or when one of those ancestors is animated), so palettes and
``mesh.pose(clip, t)`` are relative to that frame and ``world = mesh.base @ p``.  glTF has no
bind-shape matrix: the loader sets ``mesh.bind_shape = mesh.base`` so that the skeleton's bind
pose is the world pose ``base @ inv(inverseBindMatrix)`` and the palette reduces to the
specification's ``G_rel(t) @ inverseBindMatrix``.

Reading needs only NumPy (the container, accessors, sparse accessors and data URIs are decoded
here, with explicit bounds checks); :func:`save` and :func:`save_posed` write through pygltflib
(the ``gltf`` extra).
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import struct
import urllib.parse
import warnings

import numpy as np

from .. import transforms as tf
from ..mesh import Channel, Clip, SkinnedMesh
from ..skeleton import Skeleton

__all__ = ["load", "save", "save_posed", "morph_weights", "GltfError", "GltfWarning"]


class GltfError(ValueError):
    """A glTF file skinkit cannot read correctly: malformed, truncated, or using a feature that
    would change the pose (an unsupported required extension)."""


class GltfWarning(UserWarning):
    """A glTF rule broken in a way that still loads (weights, mainly)."""


_COMPONENT = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16,
              5125: np.uint32, 5126: np.float32}
_NCOMP = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
# Extensions that change nothing skinkit reads (materials, textures, lights, cameras): a file
# that requires them still poses correctly.  Everything else that is *required* is refused.
_HARMLESS_EXTENSIONS = ("KHR_materials_", "KHR_texture_", "EXT_texture_", "KHR_lights_",
                        "KHR_xmp")
_SUPPORTED_EXTENSIONS = ("KHR_mesh_quantization",)


# ---------------------------------------------------------------------------------------------
# Container and buffers
# ---------------------------------------------------------------------------------------------
def _read_container(path):
    """(json dict, glb BIN chunk or None) from a .gltf or .glb file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == b"glTF":
        if len(data) < 12:
            raise GltfError(f"{path}: truncated GLB header ({len(data)} bytes)")
        _, version, length = struct.unpack_from("<4sII", data, 0)
        if version != 2:
            raise GltfError(f"{path}: GLB version {version}, only glTF 2.0 is supported")
        if length > len(data):
            raise GltfError(f"{path}: truncated GLB file: header says {length} bytes, "
                            f"the file has {len(data)}")
        pos, doc, binary = 12, None, None
        while pos < length:
            if pos + 8 > length:
                raise GltfError(f"{path}: truncated GLB chunk header at byte {pos}")
            clen, ctype = struct.unpack_from("<II", data, pos)
            start, end = pos + 8, pos + 8 + clen
            if end > length:
                raise GltfError(f"{path}: truncated GLB chunk at byte {pos}: it needs {clen} "
                                f"bytes, {length - start} remain")
            if ctype == 0x4E4F534A and doc is None:  # "JSON"
                doc = _parse_json(data[start:end], path)
            elif ctype == 0x004E4942 and binary is None:  # "BIN\0"
                binary = memoryview(data)[start:end]
            pos = end + (-clen % 4) if ctype not in (0x4E4F534A, 0x004E4942) else end
        if doc is None:
            raise GltfError(f"{path}: GLB file without a JSON chunk")
        return doc, binary
    return _parse_json(data, path), None


def _parse_json(raw, path):
    try:
        doc = json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GltfError(f"{path}: not a glTF file (JSON: {exc})") from None
    if not isinstance(doc, dict):
        raise GltfError(f"{path}: not a glTF file (top level is not an object)")
    asset = doc.get("asset")
    version = str(asset.get("version", "")) if isinstance(asset, dict) else ""
    if not version.startswith("2."):
        raise GltfError(f"{path}: asset.version is {version!r}; only glTF 2.0 is supported")
    return doc


def _load_buffers(doc, binary, path):
    out = []
    folder = os.path.dirname(os.path.abspath(path))
    for i, b in enumerate(doc.get("buffers", [])):
        need = int(b.get("byteLength", 0))
        uri = b.get("uri")
        if uri is None:
            if i != 0 or binary is None:
                raise GltfError(f"buffers[{i}] has no uri and there is no GLB binary chunk")
            data = binary
        elif uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                raise GltfError(f"buffers[{i}]: only base64 data URIs are supported")
            try:
                data = memoryview(base64.b64decode(payload, validate=True))
            except (binascii.Error, ValueError) as exc:
                raise GltfError(f"buffers[{i}]: corrupted base64 data URI ({exc})") from None
        else:
            file = os.path.join(folder, urllib.parse.unquote(uri))
            try:
                with open(file, "rb") as f:
                    data = memoryview(f.read())
            except OSError as exc:
                raise GltfError(f"buffers[{i}]: cannot read {uri!r} ({exc.strerror})") from None
        if len(data) < need:
            raise GltfError(f"buffers[{i}] is truncated: byteLength {need}, only {len(data)} "
                            "bytes present")
        out.append(data[:need])
    return out


# The JSON properties skinkit reads, with their types: checked once up front (cgltf's separate
# validate pass) so a malformed file gives one GltfError naming the property, never a TypeError
# from deep inside.  "index" / "uint": integers >= 0; ("list", T[, n]): a list of T (of length n).
_SPARSE = {"count": "uint", "indices": {"bufferView": "index", "byteOffset": "uint",
                                        "componentType": "int"},
           "values": {"bufferView": "index", "byteOffset": "uint"}}
_SCHEMA = {
    "asset": {"version": "str"},
    "scene": "index",
    "extensionsRequired": ("list", "str"),
    "scenes": ("list", {"nodes": ("list", "index")}),
    "nodes": ("list", {"name": "str", "children": ("list", "index"), "mesh": "index",
                       "skin": "index", "matrix": ("list", "num", 16),
                       "translation": ("list", "num", 3), "rotation": ("list", "num", 4),
                       "scale": ("list", "num", 3), "weights": ("list", "num")}),
    "meshes": ("list", {"name": "str", "weights": ("list", "num"),
                        "primitives": ("list", {"attributes": ("map", "index"),
                                                "indices": "index", "mode": "uint",
                                                "targets": ("list", ("map", "index"))})}),
    "skins": ("list", {"name": "str", "joints": ("list", "index"),
                       "inverseBindMatrices": "index", "skeleton": "index"}),
    "accessors": ("list", {"bufferView": "index", "byteOffset": "uint", "componentType": "int",
                           "count": "uint", "type": "str", "normalized": "bool",
                           "sparse": _SPARSE}),
    "bufferViews": ("list", {"buffer": "index", "byteOffset": "uint", "byteLength": "uint",
                             "byteStride": "uint"}),
    "buffers": ("list", {"uri": "str", "byteLength": "uint"}),
    "animations": ("list", {"name": "str",
                            "channels": ("list", {"sampler": "index",
                                                  "target": {"node": "index", "path": "str"}}),
                            "samplers": ("list", {"input": "index", "output": "index",
                                                  "interpolation": "str"})}),
}
_REQUIRED = {"accessors": ("componentType", "count", "type"), "bufferViews": ("buffer", "byteLength"),
             "buffers": ("byteLength",), "skins": ("joints",), "meshes": ("primitives",),
             "primitives": ("attributes",), "channels": ("sampler", "target"),
             "samplers": ("input", "output"), "sparse": ("count", "indices", "values")}


def _check_schema(value, rule, where, path):
    """Check ``value`` against ``rule``; JSON nulls of optional properties are dropped."""
    def fail(what):
        raise GltfError(f"{path}: {where} must be {what}, got {json.dumps(value)[:40]}")

    if isinstance(rule, dict):
        if not isinstance(value, dict):
            fail("an object")
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for key in _REQUIRED.get(where.split(".")[-1].split("[")[0], ()):
            if key not in value:
                raise GltfError(f"{path}: {where} lacks the required property {key!r}")
        for key, sub in rule.items():
            if key in value:
                _check_schema(value[key], sub, f"{where}.{key}", path)
    elif isinstance(rule, tuple):
        kind, sub = rule[0], rule[1]
        if kind == "map":
            if not isinstance(value, dict):
                fail("an object")
            for key, v in value.items():
                _check_schema(v, sub, f"{where}.{key}", path)
            return
        if not isinstance(value, list) or (len(rule) == 3 and len(value) != rule[2]):
            fail("a list" + (f" of {rule[2]}" if len(rule) == 3 else ""))
        for i, v in enumerate(value):
            _check_schema(v, sub, f"{where}[{i}]", path)
    elif rule in ("int", "uint", "index"):
        if isinstance(value, bool) or not isinstance(value, int) or (rule != "int" and value < 0):
            fail("an integer" if rule == "int" else "a non-negative integer")
    elif rule == "num":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("a number")
    elif rule == "str":
        if not isinstance(value, str):
            fail("a string")
    elif rule == "bool":
        if not isinstance(value, bool):
            fail("true or false")


class _Doc:
    """The parsed JSON with its buffers and an accessor decoder."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.json, binary = _read_container(self.path)
        for key in [k for k, v in self.json.items() if v is None]:
            del self.json[key]
        for key, rule in _SCHEMA.items():
            if key in self.json:
                _check_schema(self.json[key], rule, key, self.path)
        self._check_extensions()
        self.buffers = _load_buffers(self.json, binary, self.path)
        self._cache = {}

    def _check_extensions(self):
        bad = [e for e in self.json.get("extensionsRequired", [])
               if not (e.startswith(_HARMLESS_EXTENSIONS) or e in _SUPPORTED_EXTENSIONS)]
        if bad:
            raise GltfError(f"{self.path}: unsupported required extension(s) {', '.join(bad)}; "
                            "decompress the file first (e.g. gltf-transform copy)")

    def get(self, kind, i, what):
        items = self.json.get(kind, [])
        if not isinstance(i, int) or not 0 <= i < len(items):
            raise GltfError(f"{what}: {kind}[{i}] does not exist ({len(items)} {kind})")
        return items[i]

    def _view_bytes(self, view_index, what):
        bv = self.get("bufferViews", view_index, what)
        self.get("buffers", bv.get("buffer"), f"bufferViews[{view_index}]")  # exists?
        data = self.buffers[bv["buffer"]]
        off, length = int(bv.get("byteOffset", 0)), int(bv.get("byteLength", 0))
        if off < 0 or length < 0 or off + length > len(data):
            raise GltfError(f"bufferViews[{view_index}] (bytes {off}..{off + length}) runs past "
                            f"the end of buffers[{bv['buffer']}] ({len(data)} bytes): truncated "
                            "or corrupted buffer")
        return data[off:off + length], bv.get("byteStride"), off

    def _strided(self, view_index, offset, count, dtype, ncomp, what, stride=None):
        data, view_stride, view_offset = self._view_bytes(view_index, what)
        item = np.dtype(dtype).itemsize
        elem = item * ncomp
        stride = int(view_stride or stride or elem)
        if stride < elem:
            raise GltfError(f"{what}: byteStride {stride} is smaller than an element ({elem} bytes)")
        # glTF 2.0 section 3.6.2.4: the offset into the view and into the buffer, and the
        # stride, are multiples of the component size (a misaligned read decodes garbage)
        if offset % item:
            raise GltfError(f"{what}: byteOffset {offset} is not a multiple of the component size "
                            f"({item} bytes)")
        if view_offset % item:
            raise GltfError(f"{what}: bufferViews[{view_index}].byteOffset {view_offset} is not a "
                            f"multiple of the component size ({item} bytes)")
        if stride % item:
            raise GltfError(f"{what}: byteStride {stride} of bufferViews[{view_index}] is not a "
                            f"multiple of the component size ({item} bytes)")
        if count == 0:
            return np.zeros((0, ncomp), dtype=dtype)
        end = offset + stride * (count - 1) + elem
        if offset < 0 or end > len(data):
            raise GltfError(f"{what}: {count} elements need {end} bytes of bufferViews"
                            f"[{view_index}], which has {len(data)}: truncated or corrupted")
        raw = np.frombuffer(data, dtype=np.uint8, count=end - offset, offset=offset)
        arr = np.lib.stride_tricks.as_strided(raw, shape=(count, elem), strides=(stride, 1))
        return np.ascontiguousarray(arr).view(np.dtype(dtype).newbyteorder("<")).astype(dtype)

    def accessor(self, i, what, raw=False):
        """Accessor ``i`` as ``(count, ncomp)`` (MAT4: ``(count, 4, 4)`` row-major).

        Normalized integer data comes back as float32 unless ``raw`` (unorm weights stay ints).
        """
        key = (i, raw)
        if key in self._cache:
            return self._cache[key]
        acc = self.get("accessors", i, what)
        what = f"{what} (accessors[{i}])"
        ctype = acc.get("componentType")
        if ctype not in _COMPONENT:
            raise GltfError(f"{what}: unknown componentType {ctype}")
        if acc.get("type") not in _NCOMP:
            raise GltfError(f"{what}: unknown type {acc.get('type')!r}")
        dtype, ncomp, count = _COMPONENT[ctype], _NCOMP[acc["type"]], int(acc.get("count", -1))
        if count < 0:
            raise GltfError(f"{what}: missing count")
        if acc["type"] in ("MAT2", "MAT3") and np.dtype(dtype).itemsize < 4:
            raise GltfError(f"{what}: padded {acc['type']} of small integers is not supported")
        if "bufferView" in acc:
            arr = self._strided(acc["bufferView"], int(acc.get("byteOffset", 0)), count, dtype,
                                ncomp, what)
        else:
            arr = np.zeros((count, ncomp), dtype=dtype)
        sparse = acc.get("sparse")
        if sparse:
            n = int(sparse.get("count", 0))
            si, sv = sparse.get("indices", {}), sparse.get("values", {})
            itype = _COMPONENT.get(si.get("componentType"))
            if itype not in (np.uint8, np.uint16, np.uint32):
                raise GltfError(f"{what}: sparse indices must be unsigned integers")
            idx = self._strided(si.get("bufferView"), int(si.get("byteOffset", 0)), n, itype, 1,
                                what + " sparse indices")[:, 0].astype(np.int64)
            val = self._strided(sv.get("bufferView"), int(sv.get("byteOffset", 0)), n, dtype,
                                ncomp, what + " sparse values")
            if n and (idx.max() >= count or np.any(np.diff(idx) <= 0)):
                raise GltfError(f"{what}: sparse indices must be increasing and below {count}")
            arr = arr.copy()
            arr[idx] = val
        if acc.get("normalized") and not raw:
            if dtype == np.float32 or dtype == np.uint32:
                raise GltfError(f"{what}: normalized is not allowed for this componentType")
            info = np.iinfo(dtype)
            arr = np.maximum(arr.astype(np.float32) / np.float32(info.max), np.float32(-1.0))
        if acc["type"] == "MAT4":
            arr = arr.reshape(count, 4, 4).transpose(0, 2, 1)  # glTF stores column-major
        if acc["type"] in ("MAT2", "MAT3"):
            n = 2 if acc["type"] == "MAT2" else 3
            arr = arr.reshape(count, n, n).transpose(0, 2, 1)
        if arr.dtype == np.float32 and not np.all(np.isfinite(arr)):
            raise GltfError(f"{what} contains NaN or inf: corrupted or misaligned data")
        arr.setflags(write=False)  # cached and shared: load() hands out copies
        self._cache[key] = arr
        return arr


# ---------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------
def _unique_names(doc):
    """A unique name per node: missing names become ``node<i>``, repeats get ``.<i>``."""
    nodes = doc.json.get("nodes", [])
    names, seen = [], set()
    for i, n in enumerate(nodes):
        name = n.get("name")
        name = f"node{i}" if not name else str(name)
        if name in seen:
            k, base = i, name
            name = f"{base}.{k}"
            while name in seen:
                k += 1
                name = f"{base}.{k}"
        seen.add(name)
        names.append(name)
    return names


def _node_local(node, i):
    if "matrix" in node:
        m = np.asarray(node["matrix"], dtype=np.float64)
        if m.shape != (16,) or not np.all(np.isfinite(m)):
            raise GltfError(f"nodes[{i}].matrix must be 16 finite numbers")
        m = m.reshape(4, 4).T
        if np.max(np.abs(m[3] - [0, 0, 0, 1])) > 1e-6:
            raise GltfError(f"nodes[{i}].matrix is not affine (last row {m[3].tolist()})")
        m[3] = [0, 0, 0, 1]
        return m
    t, q, s = _node_trs(node, i)
    return tf.compose_trs(t, q, s)


def _node_trs(node, i):
    t = np.asarray(node.get("translation", [0, 0, 0]), dtype=np.float64)
    q = np.asarray(node.get("rotation", [0, 0, 0, 1]), dtype=np.float64)
    s = np.asarray(node.get("scale", [1, 1, 1]), dtype=np.float64)
    if t.shape != (3,) or q.shape != (4,) or s.shape != (3,):
        raise GltfError(f"nodes[{i}]: translation / rotation / scale have the wrong length")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q)) and np.all(np.isfinite(s))):
        raise GltfError(f"nodes[{i}]: non-finite translation / rotation / scale")
    nq = np.linalg.norm(q)
    if nq == 0:
        raise GltfError(f"nodes[{i}].rotation is the zero quaternion")
    return t, q / nq, s


def _node_parents(doc):
    nodes = doc.json.get("nodes", [])
    parent = np.full(len(nodes), -1, dtype=np.int64)
    for i, n in enumerate(nodes):
        for c in n.get("children", []):
            if not isinstance(c, int) or not 0 <= c < len(nodes):
                raise GltfError(f"nodes[{i}].children lists a missing node {c}")
            if parent[c] >= 0 or c == i:
                raise GltfError(f"nodes[{c}] has two parents (or is its own child)")
            parent[c] = i
    for i in range(len(nodes)):  # a cycle has no root: walking up never ends
        seen, k = 0, i
        while k >= 0:
            k = parent[k]
            seen += 1
            if seen > len(nodes):
                raise GltfError(f"nodes[{i}] is part of a cycle in the node hierarchy")
    return parent


def _path_to_root(parent, i):
    """[root, ..., i]."""
    path = []
    while i >= 0:
        path.append(i)
        i = parent[i]
    return path[::-1]


def _is_similarity(m, tol=1e-9):
    """Rotation times a positive uniform scale, plus translation (it keeps TRS channels TRS)."""
    a = m[:3, :3]
    s2 = np.sum(a * a, axis=0)
    scale = float(np.sqrt(s2.mean()))
    if scale == 0:
        return False
    r = a / scale
    return bool(np.allclose(r.T @ r, np.eye(3), atol=tol) and np.linalg.det(r) > 0)


# ---------------------------------------------------------------------------------------------
# Animations
# ---------------------------------------------------------------------------------------------
def _animated_nodes(doc):
    """{node: set of paths} over every animation; checks every channel's node and sampler."""
    out = {}
    for ai, a in enumerate(doc.json.get("animations", [])):
        seen = {}
        for ci, ch in enumerate(a.get("channels", [])):
            what = f"animations[{ai}].channels[{ci}]"
            node, path = ch.get("target", {}).get("node"), ch.get("target", {}).get("path")
            if node is not None:
                doc.get("nodes", node, what + ".target.node")
                if (node, path) in seen:  # glTF 2.0 section 3.11: each target at most once
                    raise GltfError(f"{what}: nodes[{node}].{path} is already animated by "
                                    f"channels[{seen[node, path]}] of the same animation")
                seen[node, path] = ci
            si, samplers = ch.get("sampler"), a.get("samplers", [])
            if not isinstance(si, int) or not 0 <= si < len(samplers):
                raise GltfError(f"{what}.sampler: animations[{ai}].samplers[{si}] does not "
                                f"exist ({len(samplers)} samplers)")
            if node is not None and path in ("translation", "rotation", "scale"):
                out.setdefault(node, set()).add(path)
    return out


def _sampler_data(doc, anim, ai, si):
    what = f"animations[{ai}].samplers[{si}]"
    s = anim["samplers"][si]  # exists: _animated_nodes checked every channel's sampler
    interp = str(s.get("interpolation", "LINEAR")).lower()
    if interp not in ("linear", "step", "cubicspline"):
        raise GltfError(f"{what}: unknown interpolation {s.get('interpolation')!r}")
    times = doc.accessor(s.get("input"), what + " input")
    values = doc.accessor(s.get("output"), what + " output")
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    if times.size == 0:
        raise GltfError(f"{what}: no keyframes")
    if np.any(np.diff(times) <= 0):  # finite: accessor() checks every float accessor
        raise GltfError(f"{what}: input times must be strictly increasing")
    return times, np.asarray(values, dtype=np.float64), interp, what


def _channel_values(values, n_keys, width, interp, what):
    per = 3 if interp == "cubicspline" else 1
    if values.shape[0] != n_keys * per or values.shape[1] != width:
        raise GltfError(f"{what}: output has {values.shape[0]} x {values.shape[1]} values, "
                        f"expected {n_keys * per} x {width} for {n_keys} keys")
    if interp == "cubicspline":
        return values.reshape(n_keys, 3, width)
    return values


def _transform_channel_values(path, values, pre):
    """Channel values of ``pre @ TRS`` from those of ``TRS`` (``pre`` a similarity): exact for
    every interpolation, because each path maps linearly (tangents included) and slerp / the
    shortest-arc test are invariant under a left rotation."""
    a = pre[:3, :3]
    scale = float(np.cbrt(np.linalg.det(a)))
    r = a / scale
    if path == "translation":
        v = values @ (a.T)
        if values.ndim == 3:  # tangents are differences: no translation
            v[:, 1] += pre[:3, 3]
        else:
            v = v + pre[:3, 3]
        return v
    if path == "rotation":
        qp = tf.matrix_to_quat(r)
        return tf.quat_multiply(np.broadcast_to(qp, values.shape), values)
    return values * scale


class _ComposedClip(Clip):
    """A clip whose joints sit below animated non-joint nodes (or below nodes with shear or
    non-uniform scale): ``local[j] = chain[j] @ TRS_j`` with ``chain[j]`` sampled from the
    node channels.  Samples like a :class:`~skinkit.Clip`; cannot be saved to ``.npz``."""

    def __init__(self, channels, rest, chains, node_clip, name=None):
        super().__init__(channels=channels, rest=rest, name=name)
        self._chains = chains        # {joint: [slot, ...]} (outermost first)
        self._node_clip = node_clip  # a Clip over the chain slots (identity "rest" for fixed)

    @property
    def start(self):
        return min((float(c.times[0]) for c in self.channels + self._node_clip.channels),
                   default=0.0)

    @property
    def end(self):
        return max((float(c.times[-1]) for c in self.channels + self._node_clip.channels),
                   default=0.0)

    def sample(self, t):
        loc = super().sample(t)
        pre = self._node_clip.sample(t)
        for j, slots in self._chains.items():
            m = pre[..., slots[0], :, :]
            for s in slots[1:]:
                m = m @ pre[..., s, :, :]
            loc[..., j, :, :] = m @ loc[..., j, :, :]
        return loc

    def to_arrays(self, prefix=""):
        raise TypeError("this glTF clip animates non-joint nodes above its joints and cannot be "
                        "saved to .npz; bake it (skinkit.bake) or resample it into a Clip")


def _weights_sampler(times, values, interp, t):
    """Morph-target weights ``(F, M)`` at times ``t`` (same rules as a Channel, no normalizing)."""
    t = np.atleast_1d(np.asarray(t, dtype=np.float64))
    keys = values[:, 1] if interp == "cubicspline" else values
    n = times.size
    if n == 1:
        return np.broadcast_to(keys[0], (t.size,) + keys.shape[1:]).copy()
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, n - 2)
    dt = times[k + 1] - times[k]
    u = np.clip((t - times[k]) / dt, 0.0, 1.0)[:, None]
    a, b = keys[k], keys[k + 1]
    if interp == "step":
        return np.where((t >= times[k + 1])[:, None], b, a)
    if interp == "linear":
        return a + u * (b - a)
    u2, u3 = u * u, u * u * u
    return ((2 * u3 - 3 * u2 + 1) * a + (u3 - 2 * u2 + u) * values[k, 2] * dt[:, None]
            + (-2 * u3 + 3 * u2) * b + (u3 - u2) * values[k + 1, 0] * dt[:, None])


def morph_weights(clip, mesh, t):
    """Morph-target weights of a loaded ``mesh`` in ``clip`` at time(s) ``t``.

    Parameters
    ----------
    clip : Clip from :func:`load`
    mesh : SkinnedMesh from :func:`load` (with ``morph_targets``)
    t : float or (F,)

    Returns
    -------
    (M,) or (F, M) float64: the animated weights, or the mesh's default weights (glTF
    ``node.weights`` / ``mesh.weights``, zeros when absent) where the clip does not animate them.
    Pass them to ``mesh.pose(clip, t, morph_weights=...)``.
    """
    if mesh.morph_targets is None:
        raise ValueError("mesh: it has no morph targets")
    scalar = np.ndim(t) == 0
    data = getattr(clip, "gltf_morph_weights", {}).get(mesh.name)
    if data is None:
        w = np.asarray(getattr(mesh, "gltf_default_morph_weights",
                               np.zeros(mesh.morph_targets.shape[0])), dtype=np.float64)
        return w.copy() if scalar else np.broadcast_to(w, (np.size(t), w.size)).copy()
    out = _weights_sampler(*data, t)
    return out[0] if scalar else out


# ---------------------------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------------------------
def _triangles(doc, prim, V, what):
    mode = prim.get("mode", 4)
    if "indices" in prim:
        idx = doc.accessor(prim["indices"], what + " indices")
        if idx.dtype.kind not in "iu":
            raise GltfError(f"{what}: indices must be integers")
        idx = idx.reshape(-1).astype(np.int64)
    else:
        idx = np.arange(V, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= V):
        raise GltfError(f"{what}: an index is outside the {V} vertices")
    if mode == 4:
        n = idx.size // 3
        return idx[:3 * n].reshape(n, 3)
    # strips and fans as the specification writes them (3.7.2.1), keeping the winding
    n = max(idx.size - 2, 0)
    k = np.arange(n)
    if mode == 5:
        odd = k % 2
        return np.stack([idx[k], idx[k + 1 + odd], idx[k + 2 - odd]], 1)
    if mode == 6:
        return np.stack([idx[k + 1], idx[k + 2], np.full(n, idx[0] if idx.size else 0)], 1)
    return None  # points and lines have no faces


def _influences(doc, prim, J, what, on_invalid):
    attrs = prim.get("attributes", {})
    sets = []
    n = 0
    while f"JOINTS_{n}" in attrs or f"WEIGHTS_{n}" in attrs:
        if f"JOINTS_{n}" not in attrs or f"WEIGHTS_{n}" not in attrs:
            raise GltfError(f"{what}: JOINTS_{n} and WEIGHTS_{n} must come in pairs")
        j = doc.accessor(attrs[f"JOINTS_{n}"], f"{what} JOINTS_{n}")
        w = doc.accessor(attrs[f"WEIGHTS_{n}"], f"{what} WEIGHTS_{n}", raw=True)
        acc = doc.get("accessors", attrs[f"WEIGHTS_{n}"], what)
        if j.dtype not in (np.uint8, np.uint16) or j.shape[1] != 4:
            raise GltfError(f"{what}: JOINTS_{n} must be VEC4 of unsigned byte or short")
        if w.shape[1] != 4 or w.dtype not in (np.float32, np.uint8, np.uint16) or (
                w.dtype != np.float32 and not acc.get("normalized")):
            raise GltfError(f"{what}: WEIGHTS_{n} must be VEC4 float or normalized unsigned "
                            "byte / short")
        sets.append((j, w))
        n += 1
    if not sets:
        raise GltfError(f"{what}: the node has a skin but the primitive has no JOINTS_0 / "
                        "WEIGHTS_0, so it cannot be skinned")
    V = sets[0][0].shape[0]
    if any(j.shape[0] != V or w.shape[0] != V for j, w in sets):
        raise GltfError(f"{what}: JOINTS_n / WEIGHTS_n sets have different vertex counts")
    wdt = {w.dtype for _, w in sets}
    idx = np.concatenate([j for j, _ in sets], axis=1)
    if len(wdt) == 1:
        w = np.concatenate([w for _, w in sets], axis=1)
    else:  # mixed unorm / float sets: one float form
        w = np.concatenate([_unorm(w) for _, w in sets], axis=1)
    idx = idx.astype(np.int32) if idx.dtype == np.uint16 else idx
    _check_weights(idx, w, J, what, on_invalid)
    if on_invalid == "normalize":
        from .. import weights as wt

        if w.dtype != np.float32 or _needs_fix(idx, w, J):
            w = _unorm(w) if w.dtype != np.float32 else w
            idx, w = _merge_duplicates(idx, w)
            idx, w = wt.normalize(idx, w, zero="keep")
    bad = (_unorm(w) != 0) & (idx >= J)
    if bad.any():
        v = int(np.flatnonzero(bad.any(1))[0])
        raise IndexError(f"{what}: vertex {v} uses joint {int(idx[v][bad[v]][0])} with non-zero "
                         f"weight, but the skin has {J} joints")
    return idx, w


def _unorm(w):
    if w.dtype == np.uint8:
        return w.astype(np.float32) / np.float32(255)
    if w.dtype == np.uint16:
        return w.astype(np.float32) / np.float32(65535)
    return w


def _needs_fix(idx, w, J):
    from .. import weights as wt

    return bool(wt.validate(idx, w))


def _merge_duplicates(idx, w):
    """A joint listed twice in a row: its weights summed into the first slot."""
    w = w.copy()
    K = idx.shape[1]
    for a in range(K):
        for b in range(a + 1, K):
            same = (idx[:, a] == idx[:, b]) & (w[:, a] != 0) & (w[:, b] != 0)
            w[same, a] += w[same, b]
            w[same, b] = 0
    return idx, w


def _check_weights(idx, w, J, what, on_invalid):
    from .. import weights as wt

    if on_invalid not in ("warn", "raise", "normalize"):
        raise ValueError(f"on_invalid must be 'warn', 'raise' or 'normalize', got {on_invalid!r}")
    if w.dtype == np.float32 and np.any(w < 0):  # NaN / inf: refused by accessor()
        raise GltfError(f"{what}: WEIGHTS_n holds negative weights")
    # joint range is checked by the caller (IndexError, DESIGN section 5), so not here
    problems = wt.validate(idx, w)
    if not problems:
        return
    text = f"{what}: weights break the glTF skinning rules: " + "; ".join(problems)
    if on_invalid == "raise":
        raise GltfError(text)
    if on_invalid == "warn":
        warnings.warn(text + " (load(..., on_invalid='normalize') fixes them)", GltfWarning,
                      stacklevel=4)


# ---------------------------------------------------------------------------------------------
# Skins
# ---------------------------------------------------------------------------------------------
class _SkinInfo:
    """Everything a skin contributes: the Skeleton, the base frame, each joint's node chain."""


def _build_skin(doc, si, ni, parent, names, locals_, worlds, animated):
    skin = doc.get("skins", si, f"nodes[{ni}].skin")
    what = f"skins[{si}]"
    joints = skin.get("joints", [])
    if not joints:
        raise GltfError(f"{what} has no joints")
    for k, j in enumerate(joints):
        doc.get("nodes", j, f"{what}.joints[{k}]")
    if len(set(joints)) != len(joints):
        dup = next(j for k, j in enumerate(joints) if j in joints[:k])
        raise GltfError(f"{what}.joints lists nodes[{dup}] twice (joints must be distinct)")
    if "skeleton" in skin:  # only a hint, unused, but it must name a node
        doc.get("nodes", skin["skeleton"], f"{what}.skeleton")
    J = len(joints)
    pos = {node: k for k, node in enumerate(joints)}
    if "inverseBindMatrices" in skin:
        ibm = np.asarray(doc.accessor(skin["inverseBindMatrices"], what + " inverseBindMatrices"),
                         dtype=np.float64)
        if ibm.ndim != 3 or ibm.shape[0] < J:
            raise GltfError(f"{what}: inverseBindMatrices must be MAT4 with at least {J} "
                            "elements")
        ibm = ibm[:J].copy()  # finite: accessor() checks every float accessor
        bad = np.abs(ibm[:, 3] - [0, 0, 0, 1]).max(axis=1) > 1e-6
        if bad.any():
            raise GltfError(f"{what}: inverse bind matrix of joint {int(np.flatnonzero(bad)[0])} "
                            "is not affine (last row must be 0, 0, 0, 1)")
        ibm[:, 3] = [0, 0, 0, 1]
        if np.any(np.abs(np.linalg.det(ibm[:, :3, :3])) < 1e-300):
            raise GltfError(f"{what}: a singular inverse bind matrix")
    else:
        ibm = np.broadcast_to(np.eye(4), (J, 4, 4)).copy()

    # Each joint's skeleton parent is its nearest joint ancestor; the non-joint nodes between
    # them (and, for root joints, below the base frame) are folded into the joint's local.
    jparent = np.full(J, -1, dtype=np.int64)
    between = []
    root_paths = {}
    for k, node in enumerate(joints):
        path = _path_to_root(parent, node)[:-1]  # strict ancestors, root first
        chain = []
        for anc in reversed(path):
            if anc in pos:
                jparent[k] = pos[anc]
                break
            chain.append(anc)
        between.append(chain[::-1])
        if jparent[k] < 0:
            root_paths[k] = path
    # Base frame: the deepest node shared by every root joint's ancestry such that neither it nor
    # any of its ancestors is animated (an animated base would not be one matrix).
    common = None
    for path in root_paths.values():
        if common is None:
            common = list(path)
            continue
        k = 0
        while k < min(len(common), len(path)) and common[k] == path[k]:
            k += 1
        common = common[:k]
    base_path = []
    for node in common or []:
        if node in animated:
            break
        base_path.append(node)
    base = worlds[base_path[-1]] if base_path else np.eye(4)
    # prefix[k]: fixed matrix above the joint's chain; chain nodes below the base frame
    chains = {}
    for k in range(J):
        chain = between[k] if jparent[k] >= 0 else root_paths[k][len(base_path):]
        chains[k] = chain
    bind_world = base @ np.linalg.inv(ibm)  # see the module docstring (bind_shape = base)
    local_bind = np.empty((J, 4, 4))
    try:  # (LinAlgError is a ValueError)
        for k in range(J):
            p = jparent[k]
            local_bind[k] = bind_world[k] if p < 0 else np.linalg.solve(bind_world[p],
                                                                        bind_world[k])
        skeleton = Skeleton(jparent, local_bind, names=[names[n] for n in joints])
        skeleton.inverse_bind()  # what every palette needs: fail here, not at the first pose
    except ValueError as exc:  # e.g. a corrupted matrix: a bind pose float64 cannot invert
        why = str(exc).removeprefix("local_bind: ")
        raise GltfError(f"{what}: the bind pose of its inverseBindMatrices (accessors"
                        f"[{skin.get('inverseBindMatrices')}]) is unusable: {why}") from None
    info = _SkinInfo()
    info.index, info.joints, info.skeleton, info.base, info.chains = si, joints, skeleton, base, chains
    info.ibm = ibm
    info.name = skin.get("name") or f"skin{si}"
    # the fixed matrix in front of each joint's own TRS: base for roots, then the chain
    info.prefix = np.empty((J, 4, 4))
    info.fixed = np.ones(J, dtype=bool)
    for k in range(J):
        m = base.copy() if jparent[k] < 0 else np.eye(4)
        for node in chains[k]:
            m = m @ locals_[node]
            if node in animated:
                info.fixed[k] = False
        info.prefix[k] = m
    info.rest = np.stack([info.prefix[k] @ locals_[joints[k]] for k in range(J)])
    return info


def _clip_for_skin(doc, ai, anim, info, locals_, name):
    """A Clip of animation ``ai`` on the joints of one skin, or None if it touches none of them."""
    J = len(info.joints)
    pos = {node: k for k, node in enumerate(info.joints)}
    chain_nodes = sorted({n for k in range(J) for n in info.chains[k]})
    slot = {n: i for i, n in enumerate(chain_nodes)}
    joint_ch, node_ch, touched = [], [], False
    general = not np.all(info.fixed) or not all(_is_similarity(info.prefix[k]) for k in range(J))
    for ci, ch in enumerate(anim.get("channels", [])):
        target = ch.get("target", {})
        node, path = target.get("node"), target.get("path")
        if path == "weights" or node is None:
            continue
        if path not in ("translation", "rotation", "scale"):
            continue  # e.g. KHR_animation_pointer targets: nothing of a skin
        if node not in pos and node not in slot:
            continue
        times, values, interp, what = _sampler_data(doc, anim, ai, ch.get("sampler"))
        width = 4 if path == "rotation" else 3
        values = _channel_values(values, times.size, width, interp,
                                 f"animations[{ai}].channels[{ci}]")
        if path == "rotation" and np.any(np.linalg.norm(
                values[:, 1] if interp == "cubicspline" else values, axis=-1) == 0):
            raise GltfError(f"animations[{ai}].channels[{ci}]: a rotation key is zero")
        touched = True
        if node in pos:
            k = pos[node]
            if not general:
                values = _transform_channel_values(path, values, info.prefix[k])
            joint_ch.append(Channel(k, path, times, values, interp))
        else:
            node_ch.append(Channel(slot[node], path, times, values, interp))
    if not touched:
        return None
    if not general:
        return Clip(channels=joint_ch, rest=info.rest, name=name)
    # General case: joints keep their own TRS channels, the chain above each is sampled node by
    # node (base first for roots) and multiplied in front.
    node_rest = np.stack([locals_[n] for n in chain_nodes] + [info.base]) if chain_nodes else \
        info.base[None]
    base_slot = len(chain_nodes)
    chains = {}
    for k in range(J):
        s = ([base_slot] if info.skeleton.parents[k] < 0 else []) + [slot[n] for n in info.chains[k]]
        if s:
            chains[k] = s
    node_clip = Clip(channels=node_ch, rest=node_rest)
    joint_rest = np.stack([locals_[n] for n in info.joints])
    return _ComposedClip(joint_ch, joint_rest, chains, node_clip, name=name)


# ---------------------------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------------------------
def load(path, on_invalid="warn", dtype=np.float32, scene=None):
    """Load every skinned primitive and every animation of a glTF 2.0 file.

    Parameters
    ----------
    path : str or PathLike
        A ``.gltf`` (embedded data URIs or external ``.bin`` files) or ``.glb`` file.
    on_invalid : {"warn", "raise", "normalize"}
        What to do with weights that break the glTF rules (reported by
        :func:`skinkit.weights.validate`: rows not summing to 1, unorm rows not summing to
        255 / 65535, a joint twice in a row): warn (:class:`GltfWarning`, naming the rule) and
        use them as given, raise :class:`GltfError`, or fix them (duplicates merged, rows
        normalized; unorm weights become float32).  Negative or non-finite weights always raise.
    dtype : float32 or float64
        Dtype of positions, normals, tangents, morph targets and float weights.
    scene : int, optional
        Scene whose nodes are loaded (default: the file's ``scene``, else scene 0, else every
        node).

    Returns
    -------
    meshes : list of SkinnedMesh
        One per skinned primitive (a node with both ``mesh`` and ``skin``), named
        ``"<node>/<mesh>/<primitive>"``.  ``K = 4 × (number of JOINTS_n sets)``; indices are the
        file's uint8 (int32 for uint16); weights float32 (or ``dtype``), or unorm uint8 / uint16
        as stored.  Meshes of the same skin share one :class:`~skinkit.Skeleton` (the skin's
        joints in ``skin.joints`` order, named after their nodes, bind pose from the inverse bind
        matrices, identity when absent).  ``base`` is the world matrix of the skeleton's
        non-joint ancestors, ``bind_shape = base`` (see the module docstring); positions are the
        primitive's, in the mesh's (bind) space.  ``faces`` are triangles (strips and fans
        converted), None for points and lines.  Morph targets: ``morph_targets`` holds the
        POSITION deltas ``(M, V, 3)``; ``mesh.gltf_default_morph_weights`` the default weights.
        Every array is a writable, C-contiguous copy owned by its mesh (decoded from the file,
        never shared with another mesh even where two primitives use one accessor), so
        ``skinkit.lbs(m.positions, m.influences, K, out=m.positions)`` skins in place.
    clips : list of Clip
        One per animation and skin it moves (an animation is attached to every skin when the
        file has one skin), named after the animation (``"animation<i>"`` when unnamed; with
        several skins ``"<animation>/<skin>"``); ``clip.skeleton`` is the skeleton it drives.
        ``clip.sample(t)`` gives the joints' locals (root joints' include the base frame, so the
        skeleton's globals are world matrices); sampling follows the specification: LINEAR
        (slerp for rotations), STEP, CUBICSPLINE, clamped at both ends, rotations normalized.
        Morph-weight channels: :func:`morph_weights`.

    Raises
    ------
    GltfError (a ValueError)
        Malformed JSON / GLB, an index the loader follows (scene nodes, children, skin joints /
        skeleton / inverseBindMatrices, meshes, accessors, buffer views, buffers, animation
        target nodes and samplers) naming nothing, truncated or corrupted buffers, accessors
        out of bounds or misaligned (offsets and strides must be multiples of the component
        size), NaN or inf in a float accessor (named with its use), an unsupported required
        extension (Draco, meshopt ...), a skinned primitive without JOINTS_0 / WEIGHTS_0,
        non-affine or singular inverse bind matrices, bad keyframes.
    IndexError
        A joint index beyond the skin's joints where the weight is not zero.

    Warns
    -----
    GltfWarning
        Weights breaking the glTF rules, with ``on_invalid="warn"``.

    Notes
    -----
    Reading needs only NumPy.  Non-joint nodes between two joints, or between the base frame and
    a root joint, are folded into the joint's local transform; when they are static similarities
    (rotation, uniform scale, translation: the usual ``Armature`` / ``Z_UP`` nodes) the clip is a
    plain :class:`~skinkit.Clip` whose channels are the joints' own, mapped exactly; otherwise
    (animated or non-uniformly scaled in-between nodes) it is a Clip subclass that samples the
    whole chain, which cannot be saved to ``.npz`` (bake it instead).
    """
    if on_invalid not in ("warn", "raise", "normalize"):
        raise ValueError(f"on_invalid must be 'warn', 'raise' or 'normalize', got {on_invalid!r}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64, got {dtype}")
    doc = _Doc(path)
    j = doc.json
    nodes = j.get("nodes", [])
    parent = _node_parents(doc)
    names = _unique_names(doc)
    locals_ = [_node_local(n, i) for i, n in enumerate(nodes)]
    worlds = [None] * len(nodes)
    for i in range(len(nodes)):
        m = np.eye(4)
        for k in _path_to_root(parent, i):
            m = m @ locals_[k]
        worlds[i] = m
    animated = _animated_nodes(doc)
    if scene is None:
        scene = j.get("scene", 0 if j.get("scenes") else None)
    if scene is not None:
        sc = doc.get("scenes", scene, "scene")
        in_scene = set()
        for k, r in enumerate(sc.get("nodes", [])):
            doc.get("nodes", r, f"scenes[{scene}].nodes[{k}]")  # children: _node_parents
            stack = [r]
            while stack:
                n = stack.pop()
                if n in in_scene:
                    continue
                in_scene.add(n)
                stack.extend(nodes[n].get("children", []))
    else:
        in_scene = set(range(len(nodes)))

    skins, meshes = {}, []
    for ni in sorted(in_scene):
        node = nodes[ni]
        if "skin" not in node or "mesh" not in node:
            continue
        si = node["skin"]
        if si not in skins:
            skins[si] = _build_skin(doc, si, ni, parent, names, locals_, worlds, animated)
        info = skins[si]
        J = len(info.joints)
        mesh_json = doc.get("meshes", node["mesh"], f"nodes[{ni}]")
        mname = mesh_json.get("name") or f"mesh{node['mesh']}"
        default_w = node.get("weights", mesh_json.get("weights"))
        for pi, prim in enumerate(mesh_json.get("primitives", [])):
            what = f"nodes[{ni}] ({names[ni]}) mesh {mname!r} primitive {pi}"
            attrs = prim.get("attributes", {})
            if "POSITION" not in attrs:
                raise GltfError(f"{what}: no POSITION attribute")
            P = doc.accessor(attrs["POSITION"], what + " POSITION")
            if P.shape[1] != 3:
                raise GltfError(f"{what}: POSITION must be VEC3")
            V = P.shape[0]
            P = np.array(P, dtype=dtype)  # the mesh's own writable copy (accessors are shared)
            idx, w = _influences(doc, prim, J, what, on_invalid)
            if idx.shape[0] != V:
                raise GltfError(f"{what}: JOINTS_0 has {idx.shape[0]} vertices, POSITION has {V}")
            if w.dtype == np.float32:
                w = np.ascontiguousarray(w, dtype=dtype)
            N = T = None
            if "NORMAL" in attrs:
                N = np.array(doc.accessor(attrs["NORMAL"], what + " NORMAL"), dtype=dtype)
                if N.shape != (V, 3):
                    raise GltfError(f"{what}: NORMAL must be VEC3 with {V} elements")
            if "TANGENT" in attrs:
                T = np.array(doc.accessor(attrs["TANGENT"], what + " TANGENT"), dtype=dtype)
                if T.shape != (V, 4):
                    raise GltfError(f"{what}: TANGENT must be VEC4 with {V} elements")
            morphs = None
            targets = prim.get("targets", [])
            if targets:
                morphs = np.zeros((len(targets), V, 3), dtype=dtype)
                for ti, tgt in enumerate(targets):
                    if "POSITION" in tgt:
                        d = doc.accessor(tgt["POSITION"], f"{what} target {ti} POSITION")
                        if d.shape != (V, 3):
                            raise GltfError(f"{what}: morph target {ti} POSITION must be VEC3 "
                                            f"with {V} elements")
                        morphs[ti] = d
            faces = _triangles(doc, prim, V, what)
            name = f"{names[ni]}/{mname}/{pi}"
            mesh = SkinnedMesh(P, info.skeleton, (idx, w), normals=N, tangents=T, faces=faces,
                               base=info.base, bind_shape=info.base, morph_targets=morphs,
                               name=name)
            if morphs is not None:
                dw = np.zeros(len(targets)) if default_w is None else np.asarray(default_w, float)
                if dw.shape != (len(targets),):
                    raise GltfError(f"{what}: weights has {dw.size} entries for "
                                    f"{len(targets)} morph targets")
                mesh.gltf_default_morph_weights = dw
                mesh.gltf_node = ni
            meshes.append(mesh)
    clips = []
    for ai, anim in enumerate(j.get("animations", [])):
        aname = anim.get("name") or f"animation{ai}"
        for si, info in skins.items():
            name = aname if len(skins) == 1 else f"{aname}/{info.name}"
            clip = _clip_for_skin(doc, ai, anim, info, locals_, name)
            if clip is None and len(skins) == 1:
                clip = Clip(channels=[], rest=info.rest, name=name)
            if clip is None:
                continue
            clip.skeleton = info.skeleton
            clip.gltf_morph_weights = _morph_channels(doc, ai, anim, meshes)
            clips.append(clip)
    return meshes, clips


def _morph_channels(doc, ai, anim, meshes):
    out = {}
    for ci, ch in enumerate(anim.get("channels", [])):
        target = ch.get("target", {})
        if target.get("path") != "weights":
            continue
        for m in meshes:
            if getattr(m, "gltf_node", None) == target.get("node") and m.morph_targets is not None:
                times, values, interp, what = _sampler_data(doc, anim, ai, ch.get("sampler"))
                M = m.morph_targets.shape[0]
                per = 3 if interp == "cubicspline" else 1
                flat = values.reshape(-1)
                if flat.size != times.size * per * M:
                    raise GltfError(f"animations[{ai}].channels[{ci}]: {flat.size} weights for "
                                    f"{times.size} keys of {M} targets")
                v = flat.reshape(times.size, 3, M) if per == 3 else flat.reshape(times.size, M)
                out[m.name] = (times, v, interp)
    return out


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------
def _pygltflib():
    try:
        import pygltflib
    except ModuleNotFoundError:
        raise ModuleNotFoundError("writing glTF needs pygltflib: pip install 'skinkit[gltf]'") from None
    return pygltflib


class _Writer:
    """Accumulates one binary buffer and its views / accessors."""

    def __init__(self, g):
        self.g, self.blob = g, bytearray()

    def add(self, array, kind, ctype, target=None, normalized=False, minmax=False):
        pg = _pygltflib()
        a = np.ascontiguousarray(array)
        if kind == "MAT4":
            a = np.ascontiguousarray(a.transpose(0, 2, 1))  # column-major
        while len(self.blob) % 4:
            self.blob.append(0)
        off = len(self.blob)
        self.blob.extend(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        self.g.bufferViews.append(pg.BufferView(buffer=0, byteOffset=off, byteLength=a.nbytes,
                                                target=target))
        count = a.shape[0]
        acc = pg.Accessor(bufferView=len(self.g.bufferViews) - 1, componentType=ctype,
                          count=count, type=kind, normalized=True if normalized else None)
        if minmax and count:
            flat = a.reshape(count, -1)
            acc.min = flat.min(0).astype(float).tolist()
            acc.max = flat.max(0).astype(float).tolist()
        self.g.accessors.append(acc)
        return len(self.g.accessors) - 1

    def finish(self, path):
        pg = _pygltflib()
        while len(self.blob) % 4:
            self.blob.append(0)
        path = os.fspath(path)
        if path.lower().endswith(".glb"):
            self.g.buffers = [pg.Buffer(byteLength=len(self.blob))]
            self.g.set_binary_blob(bytes(self.blob))
            self.g.save_binary(path)
        else:
            uri = "data:application/octet-stream;base64," + base64.b64encode(
                bytes(self.blob)).decode("ascii")
            self.g.buffers = [pg.Buffer(byteLength=len(self.blob), uri=uri)]
            self.g.save_json(path)
        return path


def _new_gltf():
    pg = _pygltflib()
    return pg.GLTF2(asset=pg.Asset(version="2.0", generator="skinkit"), scene=0,
                    scenes=[pg.Scene(nodes=[])], nodes=[], meshes=[], accessors=[],
                    bufferViews=[], buffers=[])


def _check_vertex_array(a, name, V, width):
    a = np.asarray(a)
    if a.dtype.kind != "f":
        raise TypeError(f"{name} must be float32 or float64, got {a.dtype}")
    if a.shape != (V, width):
        raise ValueError(f"{name} must have shape ({V}, {width}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a.astype(np.float32)


def _add_primitive(w, positions, faces, normals, extra=None):
    pg = _pygltflib()
    P = np.asarray(positions)
    if P.ndim != 2 or P.shape[1] != 3:
        raise ValueError(f"positions must have shape (V, 3), got {P.shape}")
    V = P.shape[0]
    P = _check_vertex_array(P, "positions", V, 3)
    attrs = pg.Attributes(POSITION=w.add(P, "VEC3", 5126, target=34962, minmax=True))
    if normals is not None:
        attrs.NORMAL = w.add(_check_vertex_array(normals, "normals", V, 3), "VEC3", 5126,
                             target=34962)
    for k, v in (extra or {}).items():
        setattr(attrs, k, v)
    prim = pg.Primitive(attributes=attrs, mode=0 if faces is None else 4)
    if faces is not None:
        f = np.asarray(faces)
        if f.dtype.kind not in "iu" or f.ndim != 2 or f.shape[1] != 3:
            raise ValueError(f"faces must be (T, 3) integers, got {f.dtype} {f.shape}")
        if f.size and (f.min() < 0 or f.max() >= V):
            raise IndexError(f"faces: a vertex index outside [0, {V})")
        prim.indices = w.add(f.astype(np.uint32).reshape(-1), "SCALAR", 5125, target=34963)
    return prim


def save_posed(path, positions, faces=None, normals=None, matrix=None, name="posed"):
    """Write a deformed mesh as a static glTF (``.gltf`` with an embedded buffer, or ``.glb``).

    Parameters
    ----------
    path : str or PathLike
    positions : (V, 3) float32 or float64
        E.g. ``mesh.pose(clip, t)`` (in the skinning frame).
    faces : (T, 3) int, optional
        Triangles; without them the primitive is written as points.
    normals : (V, 3), optional
    matrix : (4, 4), optional
        The node's matrix, e.g. ``mesh.base`` so the file shows the pose in world space.
    name : str

    Returns
    -------
    str, the path written.  Needs pygltflib (``skinkit[gltf]``).
    """
    pg = _pygltflib()
    g = _new_gltf()
    w = _Writer(g)
    g.meshes.append(pg.Mesh(name=name, primitives=[_add_primitive(w, positions, faces, normals)]))
    node = pg.Node(name=name, mesh=0)
    if matrix is not None:
        m = np.asarray(matrix, dtype=np.float64)
        if m.shape != (4, 4) or not np.all(np.isfinite(m)):
            raise ValueError(f"matrix must be a finite (4, 4), got {m.shape}")
        node.matrix = m.T.reshape(-1).tolist()
    g.nodes.append(node)
    g.scenes[0].nodes = [0]
    return w.finish(path)


def save(path, mesh, clips=(), fps=30.0):
    """Write a rigged glTF: the mesh, its skin (joints, inverse bind matrices) and clips.

    The file reads back (:func:`load`) to the same palettes: a node with matrix ``mesh.base``
    holds the root joints (omitted when ``base`` is the identity), each joint node carries the
    clip's rest local transform (the skeleton's bind pose without clips), and the inverse bind
    matrices are ``skeleton.inverse_bind() @ mesh.bind_shape``.

    Parameters
    ----------
    path : str or PathLike
        ``.gltf`` (one embedded buffer) or ``.glb``.
    mesh : SkinnedMesh
        Influences are written as JOINTS_n / WEIGHTS_n sets of 4 (K padded with zero weights);
        unorm uint8 / uint16 weights stay unorm, float weights are written as float32.
    clips : Clip or sequence of Clip
        Channels whose joint's local is exactly its TRS channels are written as they are
        (keys, interpolation, tangents); root joints below a non-trivial ``base`` frame, and
        joints of a clip that animates in-between nodes, are resampled as LINEAR keys at the
        union of their key times (plus ``fps`` frames for STEP and CUBICSPLINE channels and for
        animated in-between nodes), exact at those keys.  A local transform with shear (no TRS
        holds it) raises ValueError.
    fps : float
        Resampling rate for the non-linear channels that must be resampled.

    Returns
    -------
    str, the path written.  Needs pygltflib (``skinkit[gltf]``).
    """
    pg = _pygltflib()
    if not isinstance(mesh, SkinnedMesh):
        raise TypeError(f"mesh must be a SkinnedMesh, not {type(mesh).__name__}")
    if isinstance(clips, Clip):
        clips = [clips]
    clips = list(clips)
    sk = mesh.skeleton
    J = sk.n_joints
    for c in clips:
        if not isinstance(c, Clip):
            raise TypeError(f"clips must be Clip objects, not {type(c).__name__}")
        if c.n_joints != J:
            raise ValueError(f"clip {c.name!r} has {c.n_joints} joints, the skeleton has {J}")
    g = _new_gltf()
    w = _Writer(g)
    base = mesh.base
    has_base = not np.allclose(base, np.eye(4), rtol=0, atol=0)
    inv_base = np.linalg.inv(base)
    roots = sk.parents < 0
    rest = _clip_rest(clips[0]) if clips else sk.local_bind
    for c in clips[1:]:
        if not np.allclose(_clip_rest(c), rest, rtol=0, atol=1e-9):
            raise ValueError(f"clips: {c.name!r} has another rest pose than {clips[0].name!r}; "
                             "a glTF file has one rest pose per node (write them separately)")
    file_rest = rest.copy()
    file_rest[roots] = inv_base @ rest[roots]
    # joint nodes first (node j = joint j), then the base node, then the mesh node
    for jj in range(J):
        node = pg.Node(name=sk.names[jj])
        _set_node_transform(node, file_rest[jj], animated=bool(clips))
        node.children = [int(c) for c in np.flatnonzero(sk.parents == jj)] or None
        g.nodes.append(node)
    top = [int(r) for r in np.flatnonzero(roots)]
    if has_base:
        g.nodes.append(pg.Node(name="skinkit_base", matrix=base.T.reshape(-1).tolist(),
                               children=top))
        top = [len(g.nodes) - 1]
    # influences as sets of 4
    idx, wts = mesh.influences.indices, mesh.influences.weights
    V, K = idx.shape
    if idx.size and np.asarray(idx).max(initial=0) > 65535:
        raise ValueError("indices: glTF JOINTS_n hold at most 65536 joints")
    n_sets = -(-K // 4)
    pad = n_sets * 4 - K
    wdt = wts.dtype
    if wdt not in (np.uint8, np.uint16):
        wdt = np.dtype(np.float32)
    idx_p = np.concatenate([np.where(_unorm(np.asarray(wts)) != 0, idx, 0),
                            np.zeros((V, pad), idx.dtype)], 1)
    w_p = np.concatenate([np.asarray(wts).astype(wdt), np.zeros((V, pad), wdt)], 1)
    jdt, jct = (np.uint8, 5121) if J <= 256 else (np.uint16, 5123)
    extra = {}
    wct = {np.dtype(np.uint8): 5121, np.dtype(np.uint16): 5123, np.dtype(np.float32): 5126}[wdt]
    for s in range(n_sets):
        extra[f"JOINTS_{s}"] = w.add(idx_p[:, 4 * s:4 * s + 4].astype(jdt), "VEC4", jct,
                                     target=34962)
        extra[f"WEIGHTS_{s}"] = w.add(w_p[:, 4 * s:4 * s + 4], "VEC4", wct, target=34962,
                                      normalized=wdt != np.float32)
    prim = _add_primitive(w, mesh.positions, mesh.faces, mesh.normals, extra)
    if mesh.tangents is not None:
        prim.attributes.TANGENT = w.add(np.asarray(mesh.tangents, np.float32), "VEC4", 5126,
                                        target=34962)
    g.meshes.append(pg.Mesh(name=mesh.name or "mesh", primitives=[prim]))
    ibm = sk.inverse_bind() @ mesh.bind_shape
    g.skins = [pg.Skin(joints=list(range(J)), inverseBindMatrices=w.add(ibm.astype(np.float32),
                                                                        "MAT4", 5126),
                       skeleton=top[0] if len(top) == 1 else None)]
    g.nodes.append(pg.Node(name=mesh.name or "mesh", mesh=0, skin=0))
    top.append(len(g.nodes) - 1)
    g.scenes[0].nodes = top
    g.animations = []
    for ci, clip in enumerate(clips):
        g.animations.append(_write_clip(w, clip, sk, inv_base, has_base, fps, ci))
    if not g.animations:
        g.animations = None
    if not g.skins:
        g.skins = None
    return w.finish(path)


def _clip_rest(clip):
    """Locals of the joints where the clip does not animate them."""
    return clip.sample(clip.start) if isinstance(clip, _ComposedClip) else clip.rest


def _set_node_transform(node, m, animated):
    try:
        t, q, s = tf.decompose_trs(m)
        if np.allclose(tf.compose_trs(t, q, s), m, rtol=0, atol=1e-9 * max(1, np.abs(m).max())):
            node.translation, node.rotation, node.scale = t.tolist(), q.tolist(), s.tolist()
            return
    except Exception:  # pragma: no cover - decompose of a degenerate matrix
        pass
    node.matrix = m.T.reshape(-1).tolist()


def _write_clip(w, clip, sk, inv_base, has_base, fps, ci):
    pg = _pygltflib()
    anim = pg.Animation(name=clip.name or f"clip{ci}", channels=[], samplers=[])
    roots = sk.parents < 0
    by_joint = {}
    for c in clip.channels:
        by_joint.setdefault(c.joint, []).append(c)
    composed = isinstance(clip, _ComposedClip)

    def trs(joint, times, loc):
        t, q, s = tf.decompose_trs(loc)
        scale = max(1.0, float(np.abs(loc).max()))
        bad = np.abs(tf.compose_trs(t, q, s) - loc).max(axis=(1, 2)) > 1e-6 * scale
        if bad.any():
            raise ValueError(f"clip {clip.name!r}: the local transform of joint {joint} "
                             f"({sk.names[joint]!r}) has shear at t = {times[bad][0]:g}, which "
                             "glTF's translation / rotation / scale channels cannot hold")
        return t, _continuous(q), s

    def add(joint, path, times, values, interp):
        vals = np.asarray(values, np.float32).reshape(-1, values.shape[-1])
        anim.samplers.append(pg.AnimationSampler(
            input=w.add(np.asarray(times, np.float32), "SCALAR", 5126, minmax=True),
            output=w.add(vals, {3: "VEC3", 4: "VEC4"}[vals.shape[1]], 5126),
            interpolation=interp.upper()))
        anim.channels.append(pg.AnimationChannel(
            sampler=len(anim.samplers) - 1, target=pg.AnimationChannelTarget(node=joint, path=path)))

    for j, chans in sorted(by_joint.items()):
        verbatim = not composed and not (roots[j] and has_base) and all(
            type(c) is Channel for c in chans)
        if verbatim:
            for c in chans:
                add(j, c.path, c.times, c.values, c.interpolation)
            continue
        times = np.unique(np.concatenate([c.times for c in chans]))
        if composed and j in clip._chains and clip._node_clip.channels:
            # the in-between nodes' keys matter as much as the joint's own
            times = np.unique(np.concatenate([times] + [c.times for c in clip._node_clip.channels]))
        # products of interpolated transforms are not interpolations of products: sample densely
        if (composed or any(getattr(c, "interpolation", "linear") != "linear" for c in chans)) \
                and times.size > 1:
            n = int(np.ceil((times[-1] - times[0]) * fps)) + 1
            times = np.unique(np.concatenate([times, np.linspace(times[0], times[-1], n)]))
        loc = clip.sample(times)[:, j]
        if roots[j]:
            loc = inv_base @ loc
        t, q, s = trs(j, times, loc)
        for path, v in (("translation", t), ("rotation", q), ("scale", s)):
            add(j, path, times, v, "linear")
    if composed:  # joints moved only by animated chain nodes
        times = None
        for c in clip._node_clip.channels:
            times = c.times if times is None else np.union1d(times, c.times)
        if times is not None and times.size > 1:
            n = int(np.ceil((times[-1] - times[0]) * fps)) + 1
            times = np.unique(np.concatenate([times, np.linspace(times[0], times[-1], n)]))
        if times is not None:
            for j in clip._chains:
                if j in by_joint:
                    continue
                loc = clip.sample(times)[:, j]
                if roots[j]:
                    loc = inv_base @ loc
                t, q, s = trs(j, times, loc)
                for path, v in (("translation", t), ("rotation", q), ("scale", s)):
                    add(j, path, times, v, "linear")
    return anim


def _continuous(q):
    """Flip signs so consecutive keys are in the same hemisphere (slerp then takes the short arc
    either way; this keeps the written keys tidy)."""
    q = q.copy()
    for i in range(1, q.shape[0]):
        if np.dot(q[i], q[i - 1]) < 0:
            q[i] = -q[i]
    return q
