"""Skeletons: joint hierarchies, forward kinematics, bind poses and skinning palettes.

The C core needs parents before children; :class:`Skeleton` and :func:`forward_kinematics`
accept any joint order, sort it once, and give every result back in the caller's order.
"""
from __future__ import annotations

import numpy as np

from . import _core
from . import transforms as tf
from ._checks import (affine_3x4, float_dtype, no_overlap, npz_source, out_array, real_array,
                      result_float_dtype, transforms)

__all__ = ["Skeleton", "forward_kinematics", "skinning_palette", "topological_order"]


def _parents_array(parents):
    """``parents`` checked (shape, integer values, range) and returned as int64."""
    p = real_array(parents, "parents")
    if p.ndim != 1:
        raise ValueError(f"parents must have shape (J,), got {p.shape}")
    n = p.size
    if n == 0:
        raise ValueError("parents: a skeleton needs at least one joint (J = 0)")
    if p.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(p) | (p != np.round(p)))
        if bad.size:
            j = bad[0]
            raise ValueError(f"parents: joint {j} has parent {p[j]}, which is not an integer")
    # Checked before the cast: uint64 or float values beyond int64 would wrap (2**64 - 1 would
    # become -1, a root) or turn into garbage.
    bad = np.flatnonzero((p < -1) | (p >= n))
    if bad.size:
        j = bad[0]
        raise ValueError(f"parents: joint {j} has parent {p[j]}, outside [-1, {n})")
    return p.astype(np.int64)


def topological_order(parents):
    """Validate ``parents`` (any order) and return ``order`` such that ``parents`` relabelled
    by ``order`` lists parents before children.  Roots and siblings keep their relative order.

    Raises ``ValueError`` naming the joint for an index out of range, a self-parent or a cycle.
    """
    p = _parents_array(parents)
    n = p.size
    bad = np.flatnonzero(p == np.arange(n))
    if bad.size:
        raise ValueError(f"parents: joint {bad[0]} is its own parent")
    depth = np.zeros(n, dtype=np.int64)
    up = p.copy()
    for _ in range(n):
        live = up >= 0
        if not live.any():
            break
        depth[live] += 1
        up[live] = p[up[live]]
    else:
        stuck = np.flatnonzero(up >= 0)
        if stuck.size:
            # n steps up from any joint whose ancestors never reach a root land inside the
            # cycle itself (the path into it is shorter than n): name a joint of the cycle.
            j = up[stuck[0]]
            loop = [int(j)]
            while p[loop[-1]] != j:
                loop.append(int(p[loop[-1]]))
            raise ValueError(f"parents: joint {j} is in a cycle ({' -> '.join(map(str, loop))}"
                             f" -> {j})")
    return np.argsort(depth, kind="stable")


def _c_array(a, dtype):
    """``a`` as the C core reads joint-sized arrays: C-contiguous, aligned, native ``dtype``.
    Copies only when needed; ``np.ascontiguousarray`` alone keeps a misaligned buffer."""
    return np.require(a, dtype=dtype, requirements=["C_CONTIGUOUS", "ALIGNED"])


def _sorted_parents(parents, order):
    inv = np.empty_like(order)
    inv[order] = np.arange(order.size)
    p = parents[order]
    return np.where(p < 0, -1, inv[np.maximum(p, 0)]).astype(np.int64), inv


def _fk_sorted(sorted_parents, local, root, dtype):
    """FK in sorted order.  local: (J,r,4) or (F,J,r,4) of ``dtype``; root: None or (R,3,4) f64."""
    rows = local.shape[-2]
    F = local.shape[0] if local.ndim == 4 else (root.shape[0] if root is not None else 1)
    out = np.empty((F, sorted_parents.size, rows, 4), dtype=dtype)
    return _core.fk(out, local, sorted_parents, root)


def _root_array(root, frames):
    if root is None:
        return None, frames
    r, _ = transforms(root, "root", batch_ndim=(0, 1), dtype=np.float64, axes=("F",))
    r = _c_array(r[..., :3, :], np.float64).reshape(-1, 3, 4)
    batched = np.ndim(root) == 3
    if batched:
        if frames is not None and r.shape[0] != frames:
            raise ValueError(f"root has {r.shape[0]} frames, local has {frames}")
        frames = r.shape[0]
    return r, frames


def forward_kinematics(parents, local, root=None, out=None):
    """Global transforms from local ones: ``global[j] = global[parents[j]] @ local[j]``.

    Parameters
    ----------
    parents : (J,) int
        Parent of each joint, -1 for a root; any order (validated, sorted internally).
    local : (J, 4, 4), (F, J, 4, 4) or the (…, 3, 4) compact forms, real dtype
        Local transforms in the caller's joint order.
    root : (4, 4) or (F, 4, 4), optional
        Transform applied above every root (identity by default).
    out : ndarray, optional
        Written in place and returned; same shape as the result and its dtype.

    Returns
    -------
    (J, r, 4) or (F, J, r, 4), float32 when ``local`` is float32 else float64, ``r`` as ``local``.
    """
    order = topological_order(parents)
    p = _parents_array(parents)
    loc, rows = transforms(local, "local", batch_ndim=(1, 2))
    if loc.shape[-3] != p.size:
        raise ValueError(f"local has {loc.shape[-3]} joints, parents has {p.size}")
    dtype = float_dtype(loc)
    batched = loc.ndim == 4
    r, frames = _root_array(root, loc.shape[0] if batched else None)
    sp, inv = _sorted_parents(p, order)
    loc_sorted = _c_array(loc[..., order, :, :], dtype)
    g = _fk_sorted(sp, loc_sorted, r, dtype)[..., inv, :, :]
    if not (batched or frames is not None):
        g = g[0]
    if out is None:
        return g
    out_array(out, "out", g.shape, dtype)
    no_overlap(out, "out", local, root, parents)
    out[...] = g
    return out


def skinning_palette(global_transforms, inverse_bind, base=None, bind_shape=None, out=None):
    """Skinning matrices ``K[j] = inv(base) @ global[j] @ inverse_bind[j] @ bind_shape``.

    Parameters
    ----------
    global_transforms : (J, 4, 4) or (F, J, 4, 4) (or (…, 3, 4))
    inverse_bind : (J, 4, 4) or (J, 3, 4)
    base : (4, 4), optional
        World matrix of the skinned object (seed 001); identity by default.
    bind_shape : (4, 4), optional
        glTF / three.js bind-shape matrix; identity by default.
    out : ndarray, optional

    Returns
    -------
    Same shape as ``global_transforms``, float32 when it is float32 else float64.
    """
    g, rows = transforms(global_transforms, "global_transforms", batch_ndim=(1, 2))
    ib, _ = transforms(inverse_bind, "inverse_bind", batch_ndim=1)
    if g.shape[-3] == 0:
        raise ValueError("global_transforms: a skeleton needs at least one joint (J = 0)")
    if ib.shape[0] != g.shape[-3]:
        raise ValueError(f"inverse_bind has {ib.shape[0]} joints, global_transforms has {g.shape[-3]}")
    dtype = float_dtype(g)
    pre = None
    if base is not None:
        b, _ = transforms(base, "base", batch_ndim=0)
        try:
            pre = np.ascontiguousarray(np.linalg.inv(tf.to_4x4(b))[:3])
        except np.linalg.LinAlgError:
            raise ValueError("base is singular") from None
    post = affine_3x4(bind_shape, "bind_shape")
    g4 = _c_array(g.reshape((-1,) + g.shape[-3:]), dtype)
    ibr = _c_array(tf.to_4x4(ib)[:, :rows], dtype)
    res = _core.palette(np.empty(g4.shape, dtype=dtype), g4, ibr, pre, post).reshape(g.shape)
    if out is None:
        return res
    out_array(out, "out", res.shape, dtype)
    no_overlap(out, "out", global_transforms, inverse_bind, base, bind_shape)
    out[...] = res
    return out


class Skeleton:
    """A joint hierarchy with its bind pose.

    Parameters
    ----------
    parents : (J,) int
        Parent of each joint, -1 for roots; any order.
    local_bind : (J, 4, 4) or (J, 3, 4)
        Local transforms of the bind pose.
    names : sequence of J str, optional
        Unique joint names (default ``joint0`` …).
    tails : (J, 3), optional
        Bone tail positions in bind space (Blender bones; used by envelope binding).
    """

    def __init__(self, parents, local_bind, names=None, tails=None):
        self._order = topological_order(parents)
        self.parents = _parents_array(parents)
        J = self.parents.size
        lb, _ = transforms(local_bind, "local_bind", batch_ndim=1)
        if lb.shape[0] != J:
            raise ValueError(f"local_bind has {lb.shape[0]} joints, parents has {J}")
        self.local_bind = tf.to_4x4(lb).copy()
        if names is None:
            names = [f"joint{j}" for j in range(J)]
        if isinstance(names, (str, bytes)):
            raise TypeError("names must be a sequence of str, not one string")
        names = [str(n) for n in names]
        if len(names) != J:
            raise ValueError(f"names has {len(names)} entries, expected {J}")
        seen = {}
        for j, n in enumerate(names):
            if n in seen:
                raise ValueError(f"names: joint {j} repeats the name {n!r} of joint {seen[n]}")
            seen[n] = j
        self.names = names
        self._index = seen
        if tails is not None:
            t = real_array(tails, "tails").astype(np.float64)
            if t.shape != (J, 3):
                raise ValueError(f"tails must have shape ({J}, 3), got {t.shape}")
            if not np.all(np.isfinite(t)):
                raise ValueError("tails contains NaN or inf")
            tails = t
        self.tails = tails
        self._sorted_parents, self._inv = _sorted_parents(self.parents, self._order)
        self._bind_globals = None
        # read-only: the joint order and the bind pose are cached (sorted parents, bind
        # globals), so an edit in place would leave them stale; build a new Skeleton instead
        for a in (self.parents, self.local_bind, self.tails):
            if a is not None:
                a.setflags(write=False)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def chain(cls, n, spacing, axis="y", names=None):
        """A chain of ``n`` joints ``spacing`` apart along ``axis`` (seed 001: ``chain(11, 20)``),
        the first at the origin, each the parent of the next.

        Parameters
        ----------
        n : int >= 1
        spacing : float
            Distance between consecutive joints (finite; negative goes down the axis).
        axis : {"x", "y", "z"}
        names : sequence of n str, optional
        """
        from ._checks import positive_int

        n = positive_int(n, "n")
        if axis not in ("x", "y", "z"):
            raise ValueError(f"axis must be 'x', 'y' or 'z', got {axis!r}")
        sp = real_array(spacing, "spacing")
        if sp.ndim != 0:
            raise ValueError(f"spacing must be a number, got shape {sp.shape}")
        if not np.isfinite(sp):
            raise ValueError(f"spacing must be finite, got {sp}")
        step = np.zeros(3)
        step["xyz".index(axis)] = float(sp)
        local = tf.translation(np.where(np.arange(n)[:, None] == 0, 0.0, step))
        return cls(np.arange(n) - 1, local, names=names)

    # -- basic facts ----------------------------------------------------------------------------
    @property
    def n_joints(self):
        return self.parents.size

    def __len__(self):
        return self.n_joints

    def index(self, joint):
        """Index of a joint given by name or index."""
        if isinstance(joint, str):
            try:
                return self._index[joint]
            except KeyError:
                raise KeyError(f"no joint named {joint!r}") from None
        if isinstance(joint, bool) or not isinstance(joint, (int, np.integer)):
            raise TypeError(f"joint must be a name or an int index, got {type(joint).__name__}")
        j = int(joint)
        if not -self.n_joints <= j < self.n_joints:
            raise IndexError(f"joint {j} out of range for {self.n_joints} joints")
        return j % self.n_joints

    def children(self, joint):
        j = self.index(joint)
        return np.flatnonzero(self.parents == j)

    def __repr__(self):
        roots = [self.names[j] for j in np.flatnonzero(self.parents < 0)]
        depth = 0
        up = self.parents.copy()
        while np.any(up >= 0):
            depth += 1
            up = np.where(up >= 0, self.parents[np.maximum(up, 0)], -1)
        shown = ", ".join(self.names[:6]) + (", …" if self.n_joints > 6 else "")
        return (f"Skeleton({self.n_joints} joints, depth {depth + 1}, roots {roots}, "
                f"names [{shown}]{', tails' if self.tails is not None else ''})")

    def __eq__(self, other):
        if not isinstance(other, Skeleton):
            return NotImplemented
        return (np.array_equal(self.parents, other.parents)
                and np.array_equal(self.local_bind, other.local_bind)
                and self.names == other.names
                and (self.tails is None) == (other.tails is None)
                and (self.tails is None or np.array_equal(self.tails, other.tails)))

    __hash__ = None

    # -- kinematics -----------------------------------------------------------------------------
    def global_transforms(self, local=None, root=None, dtype=np.float64):
        """Global transforms of a pose: ``global[j] = global[parent] @ local[j]``.

        Parameters
        ----------
        local : (J, 4, 4), (F, J, 4, 4) or the (…, 3, 4) compact forms, real dtype, optional
            Local transforms in this skeleton's joint order; None is the bind pose.
        root : (4, 4) or (F, 4, 4), optional
            Transform above every root (identity by default); a per-frame root batches the
            result even for one pose.
        dtype : float32 or float64
            Result dtype; the arithmetic is float64 either way.

        Returns
        -------
        (J, r, 4) or (F, J, r, 4) ``dtype``, ``r`` (4 or 3) as ``local``.
        """
        dtype = result_float_dtype(dtype)
        if local is None:
            local = self.local_bind
        loc, rows = transforms(local, "local", batch_ndim=(1, 2))
        if loc.shape[-3] != self.n_joints:
            raise ValueError(f"local has {loc.shape[-3]} joints, the skeleton has {self.n_joints}")
        batched = loc.ndim == 4
        r, frames = _root_array(root, loc.shape[0] if batched else None)
        loc = _c_array(loc[..., self._order, :, :], np.float64)
        g = _fk_sorted(self._sorted_parents, loc, r, np.float64)[..., self._inv, :, :]
        if not (batched or frames is not None):
            g = g[0]
        return g.astype(dtype, copy=False)

    def bind_globals(self):
        """Global transforms of the bind pose, ``(J, 4, 4)`` float64."""
        if self._bind_globals is None:
            self._bind_globals = self.global_transforms()
        return self._bind_globals.copy()

    def inverse_bind(self, dtype=np.float64):
        """Inverse bind matrices ``inv(bind global)``, ``(J, 4, 4)`` ``dtype``.

        Rotations orthonormal to rounding are transposed; anything else (scale, shear, mirrors,
        rotations stored in float32) takes the general affine inverse.  A singular bind pose
        raises ``ValueError`` naming ``local_bind`` and the joint.
        """
        dtype = result_float_dtype(dtype)
        g = self.bind_globals()
        try:
            ib = _core.inverse_bind(np.empty_like(g), g)
        except ValueError as exc:
            raise ValueError(self._bind_problem(g, exc)) from None
        return ib.astype(dtype, copy=False)

    def _bind_problem(self, g, exc):
        """The message for a bind pose the C core cannot invert, naming the user's argument and
        the joint (the core only knows its own argument, the bind globals)."""
        a = g[:, :3, :3]
        with np.errstate(all="ignore"):
            finite = np.isfinite(g).all(axis=(1, 2))
            det = np.where(finite, np.linalg.det(np.where(finite[:, None, None], a, 0.0)), 0.0)
            scale = np.linalg.norm(a, axis=1).max(axis=1)
            # the criterion of sk_aff_inverse (csrc/affine.h), used here only to find the joint
            singular = ~(np.abs(det) > 1e-12 * scale**3)
        bad = np.flatnonzero(~finite | singular)
        if bad.size == 0:
            return f"local_bind: {exc}"
        j = int(bad[0])
        if not finite[j] or not np.isfinite(det[j]):
            return (f"local_bind: joint {j} ({self.names[j]!r}) has a bind pose whose global "
                    f"transform overflows float64, so it has no inverse bind matrix")
        return (f"local_bind: joint {j} ({self.names[j]!r}) has a singular bind pose (the 3x3 "
                f"of its global transform has determinant {det[j]:.3g}), so it has no inverse "
                f"bind matrix")

    def pivots(self, dtype=np.float64):
        """Bind positions of the joints (DQS pivots): the translations of the bind globals,
        ``(J, 3)`` ``dtype``."""
        dtype = result_float_dtype(dtype)
        return np.ascontiguousarray(self.bind_globals()[:, :3, 3], dtype=dtype)

    def palette(self, local=None, base=None, bind_shape=None, root=None, dtype=np.float64):
        """Skinning matrices ``K[j] = inv(base) @ global[j] @ inverse_bind[j] @ bind_shape``.

        Parameters
        ----------
        local, root
            As :meth:`global_transforms` (None: the bind pose, whose palette is the identity).
        base : (4, 4), optional
            World matrix of the skinned object (seed 001); identity by default.
        bind_shape : (4, 4), optional
            glTF / three.js bind-shape matrix; identity by default.
        dtype : float32 or float64

        Returns
        -------
        (J, r, 4) or (F, J, r, 4) ``dtype``, ready for :func:`skinkit.lbs` and friends.
        """
        dtype = result_float_dtype(dtype)
        g = self.global_transforms(local, root=root)
        return skinning_palette(g, self.inverse_bind(), base=base,
                                bind_shape=bind_shape).astype(dtype, copy=False)

    # -- saving -----------------------------------------------------------------------------
    def to_arrays(self, prefix=""):
        d = {prefix + "parents": self.parents, prefix + "local_bind": self.local_bind,
             prefix + "names": np.array(self.names, dtype=str)}
        if self.tails is not None:
            d[prefix + "tails"] = self.tails
        return d

    @classmethod
    def from_arrays(cls, d, prefix=""):
        tails = d[prefix + "tails"] if prefix + "tails" in d else None
        return cls(d[prefix + "parents"], d[prefix + "local_bind"],
                   names=[str(n) for n in d[prefix + "names"]], tails=tails)

    def save(self, path):
        """Save to an ``.npz`` file (no pickles inside).

        Parameters
        ----------
        path : str, os.PathLike or a writable binary file
            As ``numpy.savez``: ``.npz`` is appended to a name without it.
        """
        np.savez(path, **self.to_arrays())

    @classmethod
    def load(cls, path):
        """Load a skeleton written by :meth:`save` (``path`` with or without ``.npz``, or a
        readable binary file)."""
        with np.load(npz_source(path), allow_pickle=False) as d:
            return cls.from_arrays(d)

    def __getstate__(self):
        return self.to_arrays()

    def __setstate__(self, state):
        self.__init__(**{"parents": state["parents"], "local_bind": state["local_bind"],
                         "names": [str(n) for n in state["names"]], "tails": state.get("tails")})
