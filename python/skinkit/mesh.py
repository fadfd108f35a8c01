"""Skinned meshes and animation clips: the shared types of rigs, glTF loading and baking.

:class:`SkinnedMesh` bundles a mesh (positions, normals, tangents, faces, morph targets), a
:class:`~skinkit.Skeleton` and :class:`~skinkit.Influences`, plus glTF/O3D's ``base`` (world matrix
of the skinning frame) and ``bind_shape`` matrices.  :class:`Clip` holds keyframed local
transforms as per-joint translation / rotation / scale channels (glTF's data model) and samples
them into ``(J, 4, 4)`` locals.  :func:`bake` (from :mod:`skinkit.bake`) evaluates a whole clip
into ``(F, V, 3)``, in memory or streamed to a ``.npy`` / ``.pc2`` file.

Everything stays reachable as plain NumPy arrays (``mesh.positions``, ``mesh.influences.indices``,
``clip.channels[i].values`` …).
"""
from __future__ import annotations

import numpy as np

from . import transforms as tf
from ._checks import npz_source, real_array, transforms
from .skeleton import Skeleton
from .skinning import Influences, skin

__all__ = ["SkinnedMesh", "Clip", "Channel", "bake"]

_PATHS = ("translation", "rotation", "scale")
_WIDTH = {"translation": 3, "rotation": 4, "scale": 3}
_INTERPOLATIONS = ("linear", "step", "cubicspline")


# ---------------------------------------------------------------------------------------------
# Channels and clips
# ---------------------------------------------------------------------------------------------
class Channel:
    """Keyframes of one joint's translation, rotation or scale (a glTF animation channel).

    Parameters
    ----------
    joint : int
        Index of the animated joint in the skeleton the clip is played on.
    path : {"translation", "rotation", "scale"}
    times : (N,) float
        Strictly increasing key times in seconds.
    values : (N, C) float, or (N, 3, C) for ``"cubicspline"``
        ``C`` is 3 for translation and scale, 4 (quaternion xyzw) for rotation.  Cubic-spline
        keys hold glTF's ``(in-tangent, value, out-tangent)`` triples.
    interpolation : {"linear", "step", "cubicspline"}
        ``"linear"`` interpolates translation and scale linearly and rotation by slerp
        (shortest arc); ``"step"`` holds each key until the next; ``"cubicspline"`` is glTF's
        Hermite spline (tangents scaled by the key interval), rotations normalized after.

    Sampling is clamped at both ends.  To add another interpolation, subclass and override
    :meth:`sample`; a :class:`Clip` only calls ``channel.sample(t)`` and reads ``joint``,
    ``path``, ``times`` (for its time range).
    """

    def __init__(self, joint, path, times, values, interpolation="linear"):
        if path not in _PATHS:
            raise ValueError(f"path must be one of {_PATHS}, got {path!r}")
        interpolation = str(interpolation).lower()
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}")
        self.joint = int(joint)
        self.path = path
        self.interpolation = interpolation
        t = real_array(times, "times").astype(np.float64).reshape(-1)
        if t.size == 0:
            raise ValueError("times: a channel needs at least one key")
        if not np.all(np.isfinite(t)):
            raise ValueError("times contains NaN or inf")
        if np.any(np.diff(t) <= 0):
            raise ValueError("times must be strictly increasing")
        v = real_array(values, "values").astype(np.float64)
        c = _WIDTH[path]
        want = (t.size, 3, c) if interpolation == "cubicspline" else (t.size, c)
        if v.shape != want:
            raise ValueError(f"values must have shape {want} for a {interpolation} {path} channel, "
                             f"got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError("values contains NaN or inf")
        if path == "rotation":
            keys = v[:, 1] if interpolation == "cubicspline" else v
            if np.any(np.linalg.norm(keys, axis=-1) == 0):
                raise ValueError("values: a rotation key is the zero quaternion")
        self.times = t
        self.values = v

    def __repr__(self):
        return (f"Channel(joint={self.joint}, path={self.path!r}, keys={self.times.size}, "
                f"{self.interpolation}, t=[{self.times[0]:g}, {self.times[-1]:g}])")

    def sample(self, t):
        """Values at times ``t`` (scalar or ``(F,)``): ``(C,)`` or ``(F, C)`` float64."""
        t = np.asarray(t, dtype=np.float64)
        scalar = t.ndim == 0
        t = np.atleast_1d(t)
        times, n = self.times, self.times.size
        keys = self.values[:, 1] if self.interpolation == "cubicspline" else self.values
        if n == 1:
            out = np.broadcast_to(keys[0], t.shape + keys.shape[1:]).copy()
        else:
            # k: index of the key interval [times[k], times[k+1]] holding each t, clamped
            k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, n - 2)
            dt = times[k + 1] - times[k]
            u = np.clip((t - times[k]) / dt, 0.0, 1.0)
            a, b = keys[k], keys[k + 1]
            if self.interpolation == "step":
                out = np.where((t >= times[k + 1])[:, None], b, a)
            elif self.interpolation == "linear":
                if self.path == "rotation":
                    out = tf.quat_slerp(a, b, u)
                else:
                    out = a + u[:, None] * (b - a)
            else:
                u2, u3 = u * u, u * u * u
                out_tan = self.values[k, 2] * dt[:, None]
                in_tan = self.values[k + 1, 0] * dt[:, None]
                out = ((2 * u3 - 3 * u2 + 1)[:, None] * a + (u3 - 2 * u2 + u)[:, None] * out_tan
                       + (-2 * u3 + 3 * u2)[:, None] * b + (u3 - u2)[:, None] * in_tan)
        if self.path == "rotation":
            out = out / np.linalg.norm(out, axis=-1, keepdims=True)
        return out[0] if scalar else out


def _rest_locals(rest):
    if isinstance(rest, Skeleton):
        return rest.local_bind.copy()
    r, _ = transforms(rest, "rest", batch_ndim=1, dtype=np.float64)
    return tf.to_4x4(r).copy()


def _check_trs(locals_):
    """Decompose (T, J, 4, 4) locals into TRS, refusing shear (it has no TRS channel)."""
    t, q, s = tf.decompose_trs(locals_)
    back = tf.compose_trs(t, q, s)
    scale = max(1.0, float(np.abs(locals_).max(initial=0.0)))
    if not np.allclose(back, locals_, rtol=0, atol=1e-6 * scale):
        raise ValueError("locals: a transform has shear, which TRS channels cannot hold; "
                         "build the Clip from channels instead")
    return t, q, s


class Clip:
    """Keyframed local transforms of a skeleton's joints, sampled at any time.

    Three ways to build one:

    * ``Clip(times, locals)``: full poses, ``locals`` ``(T, J, 4, 4)`` (or ``(T, J, 3, 4)``) at
      ``times`` ``(T,)``; each joint gets translation, rotation and scale channels (the
      transforms must be free of shear).
    * ``Clip(times, translations=..., rotations=..., scales=...)``: separate channels for every
      joint, ``(T, J, 3)``, ``(T, J, 4)`` xyzw and ``(T, J, 3)``; a missing one keeps the rest
      value (``rest`` required then).
    * ``Clip(channels=[Channel, ...], rest=skeleton_or_locals)``: glTF's model, per-joint
      per-path key times and interpolations.

    Joints (or paths) without a channel keep their ``rest`` local transform, normally the
    skeleton's bind pose (``rest`` may be a :class:`Skeleton` or ``(J, 4, 4)`` locals; when built
    from full ``locals`` it defaults to the first key).

    Parameters
    ----------
    times : (T,) float, optional
    locals : (T, J, 4, 4) or (T, J, 3, 4), optional
    translations, rotations, scales : (T, J, 3), (T, J, 4), (T, J, 3), optional
    channels : sequence of Channel, optional
    rest : Skeleton or (J, 4, 4), optional
    name : str, optional
    interpolation : {"linear", "step"}
        For the ``times`` forms (channels carry their own).

    Attributes
    ----------
    channels : list of Channel
    rest : (J, 4, 4) float64
    n_joints, start, end, duration
    """

    def __init__(self, times=None, locals=None, *, translations=None, rotations=None,
                 scales=None, channels=None, rest=None, name=None, interpolation="linear"):
        self.name = None if name is None else str(name)
        by_times = times is not None
        if by_times == (channels is not None):
            raise ValueError("give either times (with locals or translations / rotations / "
                             "scales) or channels")
        if channels is not None:
            if rest is None:
                raise ValueError("rest: a Clip built from channels needs the rest locals "
                                 "(a Skeleton or (J, 4, 4))")
            self.rest = _rest_locals(rest)
            chans = list(channels)
        else:
            if str(interpolation).lower() not in ("linear", "step"):
                raise ValueError("interpolation must be 'linear' or 'step' for the times forms "
                                 f"(build cubic-spline channels explicitly), got {interpolation!r}")
            t = real_array(times, "times").astype(np.float64).reshape(-1)
            if t.size == 0:
                raise ValueError("times: a clip needs at least one key")
            if locals is not None:
                if any(x is not None for x in (translations, rotations, scales)):
                    raise ValueError("give locals or translations / rotations / scales, not both")
                loc, _ = transforms(locals, "locals", batch_ndim=2, dtype=np.float64)
                loc = tf.to_4x4(loc)
                if loc.shape[0] != t.size:
                    raise ValueError(f"locals has {loc.shape[0]} keys, times has {t.size}")
                translations, rotations, scales = _check_trs(loc)
                self.rest = _rest_locals(rest) if rest is not None else loc[0].copy()
                if self.rest.shape[0] != loc.shape[1]:
                    raise ValueError(f"locals has {loc.shape[1]} joints, rest has "
                                     f"{self.rest.shape[0]}")
            else:
                given = [x for x in (translations, rotations, scales) if x is not None]
                if not given:
                    raise ValueError("give locals or at least one of translations / rotations / scales")
                if rest is None and len(given) < 3:
                    raise ValueError("rest: needed when some of translations / rotations / "
                                     "scales are missing")
                self.rest = (_rest_locals(rest) if rest is not None else
                             tf.compose_trs(np.asarray(translations, float)[0],
                                            np.asarray(rotations, float)[0],
                                            np.asarray(scales, float)[0]))
            J = self.rest.shape[0]
            chans = []
            for path, arr in zip(_PATHS, (translations, rotations, scales)):
                if arr is None:
                    continue
                a = real_array(arr, path + "s" if path != "scale" else "scales").astype(np.float64)
                if a.shape != (t.size, J, _WIDTH[path]):
                    raise ValueError(f"{path}s must have shape ({t.size}, {J}, {_WIDTH[path]}), "
                                     f"got {a.shape}")
                for j in range(J):
                    chans.append(Channel(j, path, t, a[:, j], interpolation))
        J = self.rest.shape[0]
        seen = set()
        for c in chans:
            if not hasattr(c, "sample") or getattr(c, "path", None) not in _PATHS:
                raise TypeError("channels must be Channel-like objects (joint, path, times, sample)")
            if not 0 <= c.joint < J:
                raise ValueError(f"channels: joint {c.joint} outside [0, {J})")
            if (c.joint, c.path) in seen:
                raise ValueError(f"channels: joint {c.joint} has two {c.path} channels")
            seen.add((c.joint, c.path))
        self.channels = chans
        self._rest_trs = None

    # -- facts ------------------------------------------------------------------------------------
    @property
    def n_joints(self):
        return self.rest.shape[0]

    @property
    def start(self):
        """First key time over all channels (0 for a clip without channels)."""
        return min((float(c.times[0]) for c in self.channels), default=0.0)

    @property
    def end(self):
        """Last key time over all channels."""
        return max((float(c.times[-1]) for c in self.channels), default=0.0)

    @property
    def duration(self):
        return self.end - self.start

    def frame_times(self, fps=30):
        """Times ``start + i / fps`` up to ``end``, ``(F,)``; a last frame that rounding puts
        within 1e-6 of a frame past ``end`` is taken at ``end`` (never after it)."""
        fps = float(fps)
        if not fps > 0 or not np.isfinite(fps):
            raise ValueError(f"fps must be a positive number, got {fps}")
        n = int(np.floor(self.duration * fps + 1e-6)) + 1
        return np.minimum(self.start + np.arange(n) / fps, self.end)

    def __repr__(self):
        joints = len({c.joint for c in self.channels})
        return (f"Clip({self.name!r}, {self.n_joints} joints, {len(self.channels)} channels on "
                f"{joints} joints, t=[{self.start:g}, {self.end:g}])")

    # -- sampling ---------------------------------------------------------------------------------
    def sample(self, t):
        """Local transforms at time ``t``: ``(J, 4, 4)`` for a scalar, ``(F, J, 4, 4)`` for an
        array ``(F,)`` of times; float64, clamped to ``[start, end]``."""
        t = np.asarray(t, dtype=np.float64)
        if t.ndim > 1:
            raise ValueError(f"t must be a scalar or (F,), got shape {t.shape}")
        if not np.all(np.isfinite(t)):
            raise ValueError("t contains NaN or inf")
        scalar = t.ndim == 0
        t = np.atleast_1d(t)
        F, J = t.size, self.n_joints
        out = np.broadcast_to(self.rest, (F, J, 4, 4)).copy()
        if not self.channels:
            return out[0] if scalar else out
        if self._rest_trs is None:
            self._rest_trs = tf.decompose_trs(self.rest)
        rt, rq, rs = self._rest_trs
        animated = sorted({c.joint for c in self.channels})
        cols = {j: i for i, j in enumerate(animated)}
        T = np.broadcast_to(rt[animated], (F, len(animated), 3)).copy()
        Q = np.broadcast_to(rq[animated], (F, len(animated), 4)).copy()
        S = np.broadcast_to(rs[animated], (F, len(animated), 3)).copy()
        target = {"translation": T, "rotation": Q, "scale": S}
        for c in self.channels:
            target[c.path][:, cols[c.joint]] = c.sample(t)
        out[:, animated] = tf.compose_trs(T, Q, S)
        return out[0] if scalar else out

    # -- saving -----------------------------------------------------------------------------------
    def to_arrays(self, prefix=""):
        """Plain arrays describing the clip (``.npz``-ready, no pickles)."""
        d = {prefix + "rest": self.rest,
             prefix + "channel_joints": np.array([c.joint for c in self.channels], dtype=np.int64),
             prefix + "channel_paths": np.array([c.path for c in self.channels], dtype="U11"),
             prefix + "channel_interpolations": np.array(
                 [getattr(c, "interpolation", "linear") for c in self.channels], dtype="U11"),
             prefix + "name": np.array("" if self.name is None else self.name),
             prefix + "has_name": np.array(self.name is not None)}
        for i, c in enumerate(self.channels):
            if type(c) is not Channel:
                raise TypeError(f"channel {i} is a {type(c).__name__}: only Channel saves to .npz")
            d[f"{prefix}channel{i}_times"] = c.times
            d[f"{prefix}channel{i}_values"] = c.values
        return d

    @classmethod
    def from_arrays(cls, d, prefix=""):
        joints = d[prefix + "channel_joints"]
        paths = d[prefix + "channel_paths"]
        interps = d[prefix + "channel_interpolations"]
        chans = [Channel(int(joints[i]), str(paths[i]), d[f"{prefix}channel{i}_times"],
                         d[f"{prefix}channel{i}_values"], str(interps[i]))
                 for i in range(joints.size)]
        name = str(d[prefix + "name"]) if bool(d[prefix + "has_name"]) else None
        return cls(channels=chans, rest=d[prefix + "rest"], name=name)

    def save(self, path):
        """Save to an ``.npz`` file (no pickles inside)."""
        np.savez(path, **self.to_arrays())

    @classmethod
    def load(cls, path):
        """Load what :meth:`save` wrote (``path`` with or without ``.npz``, or a readable
        binary file)."""
        with np.load(npz_source(path), allow_pickle=False) as d:
            return cls.from_arrays(d)


# ---------------------------------------------------------------------------------------------
# Skinned meshes
# ---------------------------------------------------------------------------------------------
def _vertex_array(x, name, V, width, dtype):
    if x is None:
        return None
    a = np.asarray(x)
    if a.dtype != dtype:
        raise TypeError(f"{name} has dtype {a.dtype}, expected {np.dtype(dtype)} (the positions' dtype)")
    if a.shape != (V, width):
        raise ValueError(f"{name} must have shape ({V}, {width}), got {a.shape}")
    return a


def _matrix(x, name):
    if x is None:
        return np.eye(4)
    a, _ = transforms(x, name, batch_ndim=0, dtype=np.float64)
    a = tf.to_4x4(a)
    if abs(np.linalg.det(a)) < 1e-300:
        raise ValueError(f"{name} is singular")
    return a.copy()


class SkinnedMesh:
    """A mesh bound to a skeleton: everything needed to deform it.

    Parameters
    ----------
    positions : (V, 3) float32 or float64
        Rest positions (the mesh's object space; ``bind_shape`` maps them to the bind space).
    skeleton : Skeleton
    influences : Influences or (indices (V, K), weights (V, K))
        Raw arrays are validated once into an :class:`Influences`.
    normals : (V, 3), optional
        Same dtype as positions.
    tangents : (V, 4), optional
        xyz + handedness w, same dtype as positions.
    faces : (T, 3) int, optional
        Triangles (counter-clockwise seen from outside), for metrics and plots.
    base : (4, 4), optional
        World matrix of the skinning frame: skinned results are ``inv(base) @ …`` and
        ``world = base @ p`` (seed 001's ``base``, the glTF loader's skeleton frame).
    bind_shape : (4, 4), optional
        glTF / three.js bind-shape matrix applied to positions before the inverse bind.
    centers : (V, 3), optional
        Optimized centers of rotation for ``method="cor"``.
    morph_targets : (M, V, 3), optional
        Position deltas (blend shapes), applied before skinning with ``morph_weights``.
    name : str, optional

    Notes
    -----
    Pickles, and saves to ``.npz`` with :meth:`save` / :meth:`load`.
    """

    def __init__(self, positions, skeleton, influences, normals=None, tangents=None, faces=None,
                 base=None, bind_shape=None, centers=None, morph_targets=None, name=None):
        p = np.asarray(positions)
        if p.dtype not in (np.float32, np.float64):
            raise TypeError(f"positions must be float32 or float64, got {p.dtype}")
        if p.ndim != 2 or p.shape[1] != 3:
            raise ValueError(f"positions must have shape (V, 3), got {p.shape}")
        if not isinstance(skeleton, Skeleton):
            raise TypeError(f"skeleton must be a skinkit.Skeleton, not {type(skeleton).__name__}")
        V, dtype = p.shape[0], p.dtype
        self.positions = p
        self.skeleton = skeleton
        if not isinstance(influences, Influences):
            try:
                idx, w = influences
            except (TypeError, ValueError):
                raise TypeError("influences must be an Influences or a pair (indices, weights)") from None
            influences = Influences(idx, w, skeleton.n_joints)
        if influences.n_joints != skeleton.n_joints:
            raise ValueError(f"influences are for {influences.n_joints} joints, the skeleton has "
                             f"{skeleton.n_joints}")
        if influences.shape[0] != V:
            raise ValueError(f"influences has {influences.shape[0]} vertices, positions has {V}")
        self.influences = influences
        self.normals = _vertex_array(normals, "normals", V, 3, dtype)
        self.tangents = _vertex_array(tangents, "tangents", V, 4, dtype)
        self.centers = _vertex_array(centers, "centers", V, 3, dtype)
        if faces is not None:
            f = np.asarray(faces)
            if f.dtype.kind not in "iu":
                raise TypeError(f"faces must be integers, got {f.dtype}")
            if f.ndim != 2 or f.shape[1] != 3:
                raise ValueError(f"faces must have shape (T, 3), got {f.shape}")
            if f.size and (f.min() < 0 or f.max() >= V):
                raise IndexError(f"faces: vertex index outside [0, {V})")
            faces = f.astype(np.int64, copy=False)
        self.faces = faces
        if morph_targets is not None:
            m = np.asarray(morph_targets)
            if m.dtype != dtype:
                raise TypeError(f"morph_targets has dtype {m.dtype}, expected {np.dtype(dtype)}")
            if m.ndim != 3 or m.shape[1:] != (V, 3):
                raise ValueError(f"morph_targets must have shape (M, {V}, 3), got {m.shape}")
            morph_targets = m
        self.morph_targets = morph_targets
        self.base = _matrix(base, "base")
        self.bind_shape = _matrix(bind_shape, "bind_shape")
        self.name = None if name is None else str(name)
        self._pivots = None

    # -- facts ------------------------------------------------------------------------------------
    @property
    def n_vertices(self):
        return self.positions.shape[0]

    @property
    def dtype(self):
        return self.positions.dtype

    @property
    def indices(self):
        return self.influences.indices

    @property
    def weights(self):
        return self.influences.weights

    # -- centers of rotation ------------------------------------------------------------------------
    @property
    def centers(self):
        """Optimized centers of rotation ``(V, 3)`` in the positions' dtype (NaN rows: no
        center), or None.  Settable (validated); :meth:`compute_centers` fills it."""
        return self._centers

    @centers.setter
    def centers(self, value):
        self._centers = _vertex_array(value, "centers", self.n_vertices, 3, self.dtype)

    def compute_centers(self, sigma=0.1, subdivide=False, threads=None):
        """Fill :attr:`centers` from the rest positions, faces and influences with
        :func:`skinkit.centers_of_rotation` and return them ``(V, 3)``."""
        if self.faces is None:
            raise ValueError("faces: centers of rotation are computed from the mesh's faces, "
                             "and this mesh has none")
        from .centers import centers_of_rotation

        self.centers = centers_of_rotation(self.positions, self.faces, self.influences,
                                           sigma=sigma, subdivide=subdivide, threads=threads)
        return self._centers

    def __repr__(self):
        extra = [x for x, v in (("normals", self.normals), ("tangents", self.tangents),
                                ("faces", self.faces), ("centers", self.centers),
                                ("morphs", self.morph_targets)) if v is not None]
        return (f"SkinnedMesh({self.name!r}, V={self.n_vertices}, {self.dtype}, "
                f"J={self.skeleton.n_joints}, K={self.influences.shape[1]}"
                f"{', ' + ', '.join(extra) if extra else ''})")

    def pivots(self):
        """Joint bind positions in the mesh's object space, ``(J, 3)`` float64 (DQS pivots)."""
        key = (id(self.skeleton), np.asarray(self.bind_shape, np.float64).tobytes())
        if self._pivots is None or self._pivots[0] != key:  # kept while neither changes
            c = self.skeleton.pivots()
            inv_bs = np.linalg.inv(self.bind_shape)
            self._pivots = key, c @ inv_bs[:3, :3].T + inv_bs[:3, 3]
        return self._pivots[1].copy()

    # -- posing -----------------------------------------------------------------------------------
    def palette(self, local=None, root=None):
        """Skinning matrices ``(J, 4, 4)`` or ``(F, J, 4, 4)`` float64 for local transforms
        ``local`` (the bind pose when None), with this mesh's ``base`` and ``bind_shape``."""
        return self.skeleton.palette(local, base=self.base, bind_shape=self.bind_shape, root=root)

    def rest_positions(self, morph_weights=None):
        """Positions with morph targets applied: ``(V, 3)``, or ``(F, V, 3)`` for
        ``morph_weights`` ``(F, M)``."""
        if morph_weights is None:
            return self.positions
        if self.morph_targets is None:
            raise ValueError("morph_weights: this mesh has no morph targets")
        w = real_array(morph_weights, "morph_weights").astype(np.float64)
        M = self.morph_targets.shape[0]
        if w.shape[-1:] != (M,) or w.ndim > 2:
            raise ValueError(f"morph_weights must have shape ({M},) or (F, {M}), got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError("morph_weights contains NaN or inf")
        delta = np.tensordot(w, self.morph_targets, axes=([-1], [0]))
        return (self.positions + delta).astype(self.dtype, copy=False)

    def deform(self, palette, method="lbs", normals=False, tangents=False, threads=None,
               morph_weights=None, out=None, **kwargs):
        """Skin the mesh with ``palette`` ``(J, 4, 4)`` or ``(F, J, 4, 4)``.

        Parameters
        ----------
        palette : (J, 4, 4) or (F, J, 4, 4)
        method : {"rigid", "lbs", "dqs", "cor", "blend"}
        normals, tangents : bool
            Also return the skinned normals ``(…, V, 3)`` / tangents ``(…, V, 4)``.
        threads : int, optional
        morph_weights : (M,) or (F, M), optional
        out : ndarray, optional
            Receives the positions.
        **kwargs
            Passed to :func:`skinkit.skin` (``normal_rule``, ``blend`` …).

        Returns
        -------
        positions ``(V, 3)`` or ``(F, V, 3)`` in the positions' dtype (the skinning frame:
        ``world = base @ p``), or a tuple with normals / tangents.
        """
        if normals and self.normals is None:
            raise ValueError("normals: this mesh has no normals")
        if tangents and self.tangents is None:
            raise ValueError("tangents: this mesh has no tangents")
        P = self.rest_positions(morph_weights)
        kw = dict(kwargs)
        if normals:
            kw["normals"] = self.normals
        if tangents:
            kw["tangents"] = self.tangents
        if threads is not None:
            kw["threads"] = threads
        if method in ("dqs", "cor", "blend"):
            kw.setdefault("pivots", self.pivots())
        if method == "cor":
            if self.centers is None and "centers" not in kw:
                if self.faces is None:
                    raise ValueError("centers: method='cor' needs centers of rotation; this mesh "
                                     "has none and no faces to compute them from")
                self.compute_centers()  # once: kept for the next frames
            kw.setdefault("centers", self.centers)
        if out is not None:
            kw["out"] = out
        res = skin(P, self.influences, palette, method=method, **kw)
        if out is not None:
            first = res[0] if isinstance(res, tuple) else res
            if first is not out:  # a backend that ignored out=
                out[...] = first
                res = (out,) + tuple(res[1:]) if isinstance(res, tuple) else out
        return res

    def pose(self, clip_or_locals=None, t=None, method="lbs", normals=False, threads=None,
             root=None, **kwargs):
        """Deformed positions for a clip at time(s) ``t`` or for local transforms.

        Parameters
        ----------
        clip_or_locals : Clip or (J, 4, 4) or (F, J, 4, 4), optional
            None: the bind pose.
        t : float or (F,), optional
            Sample time(s) of a clip (its start when None).
        method, normals, threads, **kwargs
            As :meth:`deform`.
        root : (4, 4) or (F, 4, 4), optional
            Transform above the skeleton's roots.

        Returns
        -------
        (V, 3) or (F, V, 3) positions in the skinning frame (``world = base @ p``), or a tuple
        with normals.
        """
        if isinstance(clip_or_locals, Clip):
            clip = clip_or_locals
            if clip.n_joints != self.skeleton.n_joints:
                raise ValueError(f"clip has {clip.n_joints} joints, the skeleton has "
                                 f"{self.skeleton.n_joints}")
            local = clip.sample(clip.start if t is None else t)
        else:
            if t is not None:
                raise ValueError("t: only meaningful with a Clip")
            local = clip_or_locals
        return self.deform(self.palette(local, root=root), method=method, normals=normals,
                           threads=threads, **kwargs)

    # -- saving -----------------------------------------------------------------------------------
    def to_arrays(self, prefix=""):
        d = {prefix + "positions": self.positions,
             prefix + "indices": self.influences.indices,
             prefix + "weights": self.influences.weights,
             prefix + "base": self.base, prefix + "bind_shape": self.bind_shape,
             prefix + "name": np.array("" if self.name is None else self.name),
             prefix + "has_name": np.array(self.name is not None)}
        d.update(self.skeleton.to_arrays(prefix + "skeleton_"))
        for key in ("normals", "tangents", "faces", "centers", "morph_targets"):
            v = getattr(self, key)
            if v is not None:
                d[prefix + key] = v
        return d

    @classmethod
    def from_arrays(cls, d, prefix=""):
        def opt(k):
            return d[prefix + k] if prefix + k in d else None

        skel = Skeleton.from_arrays(d, prefix + "skeleton_")
        name = str(d[prefix + "name"]) if bool(d[prefix + "has_name"]) else None
        return cls(d[prefix + "positions"], skel, (d[prefix + "indices"], d[prefix + "weights"]),
                   normals=opt("normals"), tangents=opt("tangents"), faces=opt("faces"),
                   base=d[prefix + "base"], bind_shape=d[prefix + "bind_shape"],
                   centers=opt("centers"), morph_targets=opt("morph_targets"), name=name)

    def save(self, path):
        """Save to an ``.npz`` file (no pickles inside)."""
        np.savez(path, **self.to_arrays())

    @classmethod
    def load(cls, path):
        """Load what :meth:`save` wrote (``path`` with or without ``.npz``, or a readable
        binary file)."""
        with np.load(npz_source(path), allow_pickle=False) as d:
            return cls.from_arrays(d)


# ---------------------------------------------------------------------------------------------
# Baking lives in skinkit.bake (threads, dask, point caches); re-exported here for old imports.
# ---------------------------------------------------------------------------------------------
from .bake import bake  # noqa: E402  (bake.py imports SkinnedMesh and Clip from here)
