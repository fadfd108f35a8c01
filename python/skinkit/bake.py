"""Baking: every frame of a clip skinned into ``(F, V, 3)``, in memory or streamed to a file.

:func:`bake` evaluates a :class:`~skinkit.Clip` (or a stack of palettes) on a
:class:`~skinkit.SkinnedMesh` chunk of frames by chunk of frames: serially, on a pool of Python
threads (each kernel call then runs on one thread, the kernels release the GIL), or as tasks on
a ``dask.distributed`` scheduler (the ``dask`` extra).  Every way gives the same bits, because
the frames are cut into the same chunks and each chunk is skinned by the same call.

Files: ``.npy`` (a memory map, the mesh's dtype) or ``.pc2``, the point cache Blender's Mesh
Cache modifier and 3ds Max read.  A file is written as ``<out>.partial`` and renamed to ``out``
when the last frame is in: a bake that fails or is interrupted leaves the ``.partial`` file (a
``.pc2`` one with its header's frame count cut to the frames it holds) and never a complete-
looking ``out``.

:func:`bake_many` bakes many characters (different rigs and clips), one task or thread each.
"""
from __future__ import annotations

import errno
import math
import os
import shutil
import struct
import sys
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._checks import positive_int, real_array, transforms
from ._config import resolve_threads
from .mesh import Clip, SkinnedMesh

__all__ = ["bake", "bake_many"]

#: Blender's ``PC2Head`` (MOD_meshcache_pc2): signature, version 1, vertex count, start frame,
#: sampling (frames between samples), frame count; little-endian, then float32 xyz per vertex.
PC2_HEADER = struct.Struct("<12siiffi")
PC2_SIGNATURE = b"POINTCACHE2\0"

_CHUNK_BYTES = 64 << 20       # output bytes per kernel call, at most
_CHUNKS = 32                  # a bake is cut into about this many chunks (threads, dask, bar)
_MIN_CHUNK = 8                # frames: below this the per-call overhead shows
_LONG = 50_000_000            # vertex-frames (about a second serially) before an automatic bar
_DASK_EXTRA = "pip install 'skinkit[dask]'"


# ---------------------------------------------------------------------------------------------
# The work: a chunk of frames
# ---------------------------------------------------------------------------------------------
def _skin_chunk(mesh, clip, frames, method, normals, options, out=None, out_normals=None):
    """Skin frames ``frames`` (times of ``clip``, or palettes when ``clip`` is None) on one
    thread into ``out`` / ``out_normals`` (allocated when None), with the options of
    :meth:`SkinnedMesh.deform` in ``options``.  Every scheduler calls this."""
    pal = frames if clip is None else mesh.palette(clip.sample(frames))
    if out is None:
        out = np.empty((pal.shape[0], mesh.n_vertices, 3), dtype=mesh.dtype)
    kw = dict(options)
    if normals:
        if out_normals is None:
            out_normals = np.empty_like(out)
        kw.update(normals=True, out_normals=out_normals)
    mesh.deform(pal, method=method, threads=1, out=out, **kw)
    return (out, out_normals) if normals else out


def _realign(mesh):
    """Make the worker's copy of ``mesh`` fit the kernels, once: dask unpickles arrays from
    out-of-band buffers that may sit at any byte offset of a message, and the kernels refuse a
    misaligned array.  The copy belongs to this worker, so fixing it in place is safe."""
    for owner, names in ((mesh, ("positions", "normals", "tangents", "centers")),
                         (mesh.influences, ("indices", "weights"))):
        for name in names:
            a = getattr(owner, name)
            if isinstance(a, np.ndarray) and not a.flags.aligned:
                setattr(owner, name, np.require(a, requirements=["C", "A"]))
    return mesh


def _task(mesh, clip, frames, method, normals, options):
    """A dask task (module level so workers can unpickle it)."""
    return _skin_chunk(_realign(mesh), clip, frames, method, normals, options)


def _bake_task(mesh, clip, fps, method, normals, chunk, options):
    return bake(_realign(mesh), clip, fps=fps, method=method, threads=1, normals=normals,
                progress=False, chunk=chunk, **options)


# ---------------------------------------------------------------------------------------------
# Checks made before any work
# ---------------------------------------------------------------------------------------------
class _Plan:
    """A validated bake: the frames (clip times or palettes), their count, the chunking."""

    def __init__(self, mesh, clip, fps, method, normals, chunk, options):
        if not isinstance(mesh, SkinnedMesh):
            raise TypeError(f"mesh must be a SkinnedMesh, not {type(mesh).__name__}")
        J = mesh.skeleton.n_joints
        if isinstance(clip, Clip):
            if clip.n_joints != J:
                raise ValueError(f"clip has {clip.n_joints} joints, the mesh's skeleton has {J}")
            self.clip, self.frames = clip, clip.frame_times(fps)
            self.start = float(clip.start) * float(fps)
        elif isinstance(clip, (np.ndarray, list, tuple)):
            pal = real_array(clip, "clip (a palette stack)")
            if pal.ndim == 4 and pal.dtype.kind == "f" and not np.isfinite(pal).all():
                f, j = np.argwhere(~np.isfinite(pal).all(axis=(2, 3)))[0]
                raise ValueError(f"clip (a palette stack): NaN or inf at frame {f}, joint {j}")
            # finite: checked just above for the only shape transforms accepts
            pal, _ = transforms(pal, "clip (a palette stack)", batch_ndim=2, dtype=np.float64,
                                finite=False)
            if pal.shape[1] != J:
                raise ValueError(f"clip: the palette stack has {pal.shape[1]} joints, the mesh's "
                                 f"skeleton has {J}")
            fps = float(fps)
            if not fps > 0 or not np.isfinite(fps):
                raise ValueError(f"fps must be a positive number, got {fps}")
            self.clip, self.frames, self.start = None, pal, 0.0
        else:
            raise TypeError("clip must be a Clip or an (F, J, 4, 4) palette stack, not "
                            f"{type(clip).__name__}")
        if normals and mesh.normals is None:
            raise ValueError("normals: this mesh has no normals")
        taken = {"threads", "out", "normals", "out_normals", "palette"} & set(options)
        if taken:
            raise TypeError(f"{sorted(taken)[0]}: set by bake itself, not a deform option")
        refused = {"tangents", "out_tangents"} & set(options)
        if refused:
            raise TypeError(f"{sorted(refused)[0]}: bake does not bake tangents (.npy and .pc2 "
                            "hold xyz); use SkinnedMesh.deform(palette, tangents=True)")
        self.mesh, self.method, self.normals = mesh, method, bool(normals)
        self.options = dict(options)
        self.F, self.V = len(self.frames), mesh.n_vertices
        weights = self.options.get("morph_weights")
        if weights is not None:
            weights = real_array(weights, "morph_weights")
            if weights.ndim == 2 and len(weights) != self.F:
                raise ValueError(f"morph_weights has {len(weights)} rows, the bake has {self.F} "
                                 "frames: pass (M,) weights for every frame or (F, M), one row "
                                 "per frame")
            self.options["morph_weights"] = weights
        self.per_frame = weights is not None and weights.ndim == 2
        if chunk is None:
            per_frame = max(1, self.V * 3 * mesh.dtype.itemsize * (2 if normals else 1))
            chunk = max(1, min(_CHUNK_BYTES // per_frame,
                               max(_MIN_CHUNK, math.ceil(self.F / _CHUNKS))))
        self.chunk = positive_int(chunk, "chunk")
        self.ranges = [(a, min(self.F, a + self.chunk)) for a in range(0, self.F, self.chunk)]
        if self.F:
            # One frame through the real kernel into scratch memory: an unknown method, a
            # missing ``centers`` or a bad option fails here, before a file is opened.
            _skin_chunk(mesh, self.clip, self.frames[:1], method, self.normals,
                        self.options_for(0, 1))

    @property
    def shape(self):
        return (self.F, self.V, 3)

    def options_for(self, a, b):
        """The deform options of frames ``a:b``: per-frame morph weights cut to their rows."""
        if not self.per_frame:
            return self.options
        return dict(self.options, morph_weights=self.options["morph_weights"][a:b])


def _check_array_out(out, name, plan):
    if out.dtype != plan.mesh.dtype:
        raise TypeError(f"{name} has dtype {out.dtype}, expected {plan.mesh.dtype}")
    if out.shape != plan.shape:
        if out.ndim == 3 and out.shape[1:] == plan.shape[1:] and out.shape[0] < plan.F:
            raise ValueError(f"{name} has shape {out.shape}: {out.shape[0]} frames, the bake "
                             f"has {plan.F}")
        raise ValueError(f"{name} has shape {out.shape}, expected {plan.shape}")
    if not out.flags.writeable:
        raise ValueError(f"{name} is read-only")
    if np.shares_memory(out, plan.mesh.positions):
        raise ValueError(f"{name} overlaps the mesh's positions")


def _check_path(path):
    """Refuse a path that cannot be written, before any work."""
    kind = os.path.splitext(path)[1].lower()
    if kind not in (".npy", ".pc2"):
        raise ValueError(f"out: a path must end in .npy or .pc2, got {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"out: the folder {folder!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"out: {path!r} is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"out: cannot write in the folder {folder!r}")
    return kind


def normals_path(path):
    """The sibling file that receives the normals of a bake to ``path``:
    ``anim.pc2`` → ``anim.normals.pc2``."""
    stem, ext = os.path.splitext(os.fspath(path))
    return f"{stem}.normals{ext}"


# ---------------------------------------------------------------------------------------------
# Destinations: where finished chunks go
# ---------------------------------------------------------------------------------------------
class _ArraySink:
    """An in-memory array (the caller's or a new one): chunks are skinned straight into it."""

    def __init__(self, positions, normals):
        self.arrays = (positions, normals)

    def buffers(self, a, b):
        p, n = self.arrays
        return p[a:b], (None if n is None else n[a:b])

    def commit(self, a, b, p, n):
        if not np.may_share_memory(p, self.arrays[0]):  # a dask task's result
            self.arrays[0][a:b] = p
            if n is not None:
                self.arrays[1][a:b] = n

    def done(self):
        p, n = self.arrays
        return p if n is None else (p, n)

    def fail(self):
        pass


class _FileSink:
    """``.npy`` memory maps or ``.pc2`` streams, written as ``<path>.partial`` then renamed."""

    def __init__(self, plan, paths, kind):
        self.plan, self.kind, self.paths = plan, kind, paths
        self.partials = [p + ".partial" for p in paths]
        self.written = 0
        self.handles = []
        try:
            for part in self.partials:
                if kind == ".npy":
                    self.handles.append(np.lib.format.open_memmap(
                        part, mode="w+", dtype=plan.mesh.dtype, shape=plan.shape))
                else:
                    fh = open(part, "wb")
                    self.handles.append(fh)
                    fh.write(PC2_HEADER.pack(PC2_SIGNATURE, 1, plan.V, plan.start, 1.0, plan.F))
            if kind == ".npy":
                _reserve(self.partials, paths[0], plan)
        except OSError as exc:
            self._close()
            for part in self.partials:
                if os.path.exists(part):
                    os.remove(part)
            raise type(exc)(exc.errno, f"out: cannot write {exc.filename!r}: {exc.strerror}") \
                from None

    def buffers(self, a, b):
        if self.kind == ".npy":
            return tuple(h[a:b] for h in self.handles) + (None,) * (2 - len(self.handles))
        return None, None  # the kernel allocates; commit converts to float32

    def commit(self, a, b, p, n):
        if self.kind == ".pc2":
            for fh, x in zip(self.handles, (p, n)):
                fh.write(np.ascontiguousarray(x, dtype="<f4").tobytes())
        elif not np.may_share_memory(p, self.handles[0]):  # a dask task's result
            for h, x in zip(self.handles, (p, n)):
                h[a:b] = x
        self.written = b

    def _close(self):
        for h in self.handles:
            if isinstance(h, np.memmap):
                h.flush()
            else:
                h.close()
        self.handles = []

    def done(self):
        self._close()
        for part, path in zip(self.partials, self.paths):
            os.replace(part, path)
        F, shape = self.plan.F, self.plan.shape
        res = []
        for path in self.paths:
            if self.kind == ".npy":
                res.append(np.load(path, mmap_mode="r"))
            elif F * self.plan.V:
                res.append(np.memmap(path, dtype="<f4", mode="r", offset=PC2_HEADER.size,
                                     shape=shape))
            else:
                res.append(np.empty(shape, dtype="<f4"))
        return res[0] if len(res) == 1 else tuple(res)

    def fail(self):
        """Leave the ``.partial`` files; a PC2 header then counts only the frames written, so
        the file is a valid, shorter cache."""
        try:
            if self.kind == ".pc2":
                for fh in self.handles:
                    fh.flush()
                    fh.seek(PC2_HEADER.size - 4)
                    fh.write(struct.pack("<i", self.written))
            self._close()
        except OSError:  # a full disk: the bake's own error is the one to report
            pass


def _size(n):
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,} bytes" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000


def _reserve(partials, out, plan):
    """Allocate the disk blocks of the memory-mapped files ``partials`` before any frame goes
    in: a write through a memory map into a hole that a full disk cannot fill kills the process
    (SIGBUS) instead of raising.  ``os.posix_fallocate`` where there is one, else a comparison
    with the free space.  Raises OSError ENOSPC naming ``out`` and the bytes needed."""
    sizes = [os.path.getsize(p) for p in partials]
    need = sum(sizes)
    free = shutil.disk_usage(os.path.dirname(os.path.abspath(partials[0]))).free
    full = free < need
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is not None and not full:
        try:
            for part, size in zip(partials, sizes):
                fd = os.open(part, os.O_RDWR)
                try:
                    fallocate(fd, 0, size)
                finally:
                    os.close(fd)
        except OSError as exc:  # a file system without it: the comparison above stands
            if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS):
                if exc.errno != errno.ENOSPC:
                    raise
                full = True
    if full:
        both = " x 2 (positions and normals)" if len(partials) > 1 else ""
        why = (f"the disk has {_size(free)} free" if free < need else
               "the file system could not allocate it")
        raise OSError(errno.ENOSPC, f"not enough disk space: the bake needs {need:,} bytes "
                      f"({_size(need)}: {plan.F:,} frames x {plan.V:,} vertices x 3 "
                      f"{plan.mesh.dtype}{both}), {why}", out)


def _sink(out, plan):
    if out is None:
        p = np.empty(plan.shape, dtype=plan.mesh.dtype)
        return _ArraySink(p, np.empty_like(p) if plan.normals else None)
    if isinstance(out, np.ndarray):
        _check_array_out(out, "out", plan)
        return _ArraySink(out, np.empty_like(out) if plan.normals else None)
    if isinstance(out, (str, os.PathLike)):
        path = os.fspath(out)
        kind = _check_path(path)
        paths = [path] + ([normals_path(path)] if plan.normals else [])
        if plan.normals:
            _check_path(paths[1])
        return lambda: _FileSink(plan, paths, kind)
    raise TypeError(f"out must be an ndarray or a .npy / .pc2 path, not {type(out).__name__}")


# ---------------------------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------------------------
def _bar(progress, total, work, unit="frame"):
    """A tqdm.auto bar of ``total`` steps, or None: off when asked, when tqdm is missing, and
    (``progress=None``) when stderr is not a terminal or the bake is short (``work``
    vertex-frames)."""
    if progress is False or total == 0:
        return None
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        if work < _LONG or not (isatty and isatty()):
            return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress:  # asked for: say why there is none
            warnings.warn("progress=True draws its bar with tqdm, which is not installed "
                          "(pip install tqdm); baking without one", stacklevel=3)
        return None
    return tqdm(total=total, unit=unit, desc="bake", leave=False)


# ---------------------------------------------------------------------------------------------
# Schedulers
# ---------------------------------------------------------------------------------------------
def _run_threads(plan, sink, threads, bar):
    mesh, clip, frames = plan.mesh, plan.clip, plan.frames

    def work(a, b):
        p, n = sink.buffers(a, b)
        return _skin_chunk(mesh, clip, frames[a:b], plan.method, plan.normals,
                           plan.options_for(a, b), p, n)

    def finish(a, b, res):
        p, n = res if plan.normals else (res, None)
        sink.commit(a, b, p, n)
        if bar is not None:
            bar.update(b - a)

    if threads == 1:
        for a, b in plan.ranges:
            finish(a, b, work(a, b))
        return
    # At most two chunks per thread in flight: a streamed bake holds O(threads) chunks, and
    # chunks are committed (written) in frame order.
    pending = deque()
    pool = ThreadPoolExecutor(threads, thread_name_prefix="skinkit-bake")
    try:
        for a, b in plan.ranges:
            while len(pending) >= 2 * threads:
                finish(*pending[0][:2], pending.popleft()[2].result())
            pending.append((a, b, pool.submit(work, a, b)))
        while pending:
            finish(*pending[0][:2], pending.popleft()[2].result())
    finally:
        # on an exception or KeyboardInterrupt: drop queued chunks, let running ones end
        pool.shutdown(wait=True, cancel_futures=True)


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError("scheduler= needs dask.distributed, the dask extra: "
                          f"{_DASK_EXTRA}") from None
    return distributed


def _not_a_scheduler(scheduler):
    return TypeError("scheduler must be a dask.distributed Client, a cluster or a scheduler "
                     f"address, not {type(scheduler).__name__}")


def _client(scheduler):
    """(client, ours): a Client as given, or one connected to an address / cluster."""
    connect = isinstance(scheduler, str) or hasattr(scheduler, "scheduler_address")
    # wrong with or without dask, so said before importing it: a string that is no address,
    # and an object that is neither a Client (which has .submit) nor a cluster
    if isinstance(scheduler, str) and ":" not in scheduler:
        raise ValueError(f"scheduler: {scheduler!r} is not a scheduler address "
                         "('tcp://host:8786')")
    if not (connect or hasattr(scheduler, "submit")):
        raise _not_a_scheduler(scheduler)
    if not connect:
        # a Client exists only where distributed has been imported: anything else with a
        # .submit (a ThreadPoolExecutor) is refused as such, with or without dask installed
        distributed = sys.modules.get("distributed")
        if distributed is None or not isinstance(scheduler, distributed.Client):
            raise _not_a_scheduler(scheduler)
        return scheduler, False
    return _distributed().Client(scheduler), True


def _run_dask(plan, sink, client, bar):
    mesh, clip = plan.mesh, plan.clip
    # The mesh (and the clip) go to every worker once; each task then carries only its frames.
    # hash=False: a content-hashed key is shared with the previous bake of the same mesh, whose
    # release can reach the scheduler after this scatter and drop the data under our tasks.
    mesh_f = client.scatter(mesh, broadcast=True, hash=False)
    clip_f = None if clip is None else client.scatter(clip, broadcast=True, hash=False)
    depth = 2 * max(1, len(client.scheduler_info().get("workers", ()))) + 1
    pending = deque()
    try:
        for a, b in plan.ranges:
            while len(pending) >= depth:
                _dask_finish(plan, sink, bar, *pending.popleft())
            fut = client.submit(_task, mesh_f, clip_f, plan.frames[a:b], plan.method,
                                plan.normals, plan.options_for(a, b), pure=False)
            pending.append((a, b, fut))
        while pending:
            _dask_finish(plan, sink, bar, *pending.popleft())
    except BaseException:
        client.cancel([f for _, _, f in pending])
        raise


def _dask_finish(plan, sink, bar, a, b, fut):
    res = fut.result()
    p, n = res if plan.normals else (res, None)
    sink.commit(a, b, p, n)
    if bar is not None:
        bar.update(b - a)


# ---------------------------------------------------------------------------------------------
# Public
# ---------------------------------------------------------------------------------------------
def bake(mesh, clip, fps=30, method="lbs", threads=None, out=None, normals=False, progress=None,
         scheduler=None, chunk=None, **options):
    """Skin every frame of a clip (or a palette stack) on a mesh.

    Parameters
    ----------
    mesh : SkinnedMesh
    clip : Clip or (F, J, 4, 4) float
        A clip, sampled at ``clip.start + i / fps`` up to ``clip.end``
        (:meth:`Clip.frame_times`), or ready skinning palettes (:meth:`SkinnedMesh.palette`),
        one per frame, checked (finite, affine, ``J`` the mesh's) before any work.
    fps : float
        Frames per second of the clip's sampling; the PC2 header's start frame is
        ``clip.start * fps`` (0 for a palette stack).
    method : str
        Any method :meth:`SkinnedMesh.deform` takes (``"rigid"``, ``"lbs"``, ``"dqs"`` …).
    threads : int, optional
        Python threads over chunks of frames, each kernel call on one thread (the kernels
        release the GIL).  Default ``skinkit.get_num_threads()``.  Results are identical to
        ``threads=1`` bit for bit.  Not with ``scheduler``.
    out : ndarray (F, V, 3) or str / PathLike ending in ``.npy`` or ``.pc2``, optional
        An array (the mesh's dtype) is written in place.  A path is written chunk by chunk to
        ``<out>.partial``, renamed to ``out`` once complete: ``.npy`` keeps the mesh's dtype (a
        memory map), ``.pc2`` is Blender's Mesh Cache point cache (float32, start frame
        ``clip.start * fps``, sampling 1 frame; Blender's modifier in its default Time Mode
        "Frame" plays sample ``i`` at scene frame ``frame_start + i`` and ignores the header's
        start).  A failed or interrupted bake leaves only the
        ``.partial`` file (a PC2 header then counts the frames it holds).
    normals : bool
        Also bake the mesh's normals: returned as a second ``(F, V, 3)`` array, or for a path
        written to the sibling file :func:`normals_path` (``anim.pc2`` → ``anim.normals.pc2``).
    progress : bool, optional
        A ``tqdm.auto`` bar (when tqdm is installed; True without it warns).  None: only when
        stderr is a terminal and the bake is long (50 million vertex-frames or more); False:
        never.
    scheduler : distributed.Client, cluster or str, optional
        Bake on a ``dask.distributed`` scheduler (the ``dask`` extra): the mesh (and clip) are
        scattered to every worker once, each task skins one chunk on one thread, results come
        back (or are written) in frame order, at most about two chunks per worker in flight.
        A cluster or an address gets a client that is closed afterwards.
    chunk : int, optional
        Frames per kernel call / task.  Default: about 1/32 of the frames (at least 8), at most
        64 MiB of output.  The chunking does not change the result.
    **options
        Passed to :meth:`SkinnedMesh.deform` for every frame (``blend=`` for
        ``method="blend"``, ``normal_rule=`` …); ``morph_weights`` is ``(M,)`` for every frame
        or ``(F, M)``, one row per frame.  Tangents are not baked: ``tangents=`` is refused.

    Returns
    -------
    positions : (F, V, 3)
        The mesh's dtype in the skinning frame (``world = base @ p``): ``out``, a new array, or
        for a path a read-only memory map of the finished file (float32 for ``.pc2``).
    normals : (F, V, 3)
        Only with ``normals=True``: ``(positions, normals)``.

    Raises
    ------
    TypeError, ValueError
        A bad mesh, clip, palette stack, method, ``out`` (dtype, shape — a clip longer than
        ``out`` — read-only), ``fps``, ``threads`` or ``chunk``, before anything is written.
    FileNotFoundError, PermissionError, IsADirectoryError
        ``out`` cannot be written, before any work.
    OSError
        ENOSPC: the disk cannot hold a ``.npy`` ``out`` (and its normals), whose space is
        reserved before any frame is baked; the message gives the bytes needed, and no
        ``.partial`` is left.  A ``.pc2`` is streamed: a full disk stops it with ENOSPC.
    ImportError
        ``scheduler`` without the ``dask`` extra.
    """
    if scheduler is not None and threads is not None:
        raise ValueError("threads: with a scheduler each task runs the kernel on one thread; "
                         "pass threads=None")
    nthreads = 1 if scheduler is not None else resolve_threads(threads)
    plan = _Plan(mesh, clip, fps, method, normals, chunk, options)
    sink = _sink(out, plan)
    client, ours = (None, False) if scheduler is None else _client(scheduler)
    try:
        if callable(sink):  # a file: opened only now that everything is checked
            sink = sink()
        bar = _bar(progress, plan.F, plan.F * plan.V)
        try:
            if client is None:
                _run_threads(plan, sink, nthreads, bar)
            else:
                _run_dask(plan, sink, client, bar)
        except BaseException:
            sink.fail()
            raise
        finally:
            if bar is not None:
                bar.close()
        return sink.done()
    finally:
        if ours:
            client.close()


def bake_many(jobs, fps=30, method="lbs", threads=None, normals=False, progress=None,
              scheduler=None, chunk=None, **options):
    """Bake many characters: one task (or thread) per ``(mesh, clip)`` pair.

    Parameters
    ----------
    jobs : iterable of (SkinnedMesh, Clip or (F, J, 4, 4))
        Different rigs, meshes and clips; each pair is checked as :func:`bake` checks it,
        all of them before any work.
    fps, method, normals, chunk, **options
        As :func:`bake`, for every pair (``out=`` is refused: call :func:`bake` per pair).
    threads : int, optional
        Python threads, one pair each (each bake on one thread).  Not with ``scheduler``.
    progress : bool, optional
        A ``tqdm.auto`` bar counting the pairs, as :func:`bake`'s (None: only on a terminal
        when the pairs add up to 50 million vertex-frames or more).
    scheduler : distributed.Client, cluster or str, optional
        One dask task per pair (the ``dask`` extra).

    Returns
    -------
    list of (F_i, V_i, 3) arrays (or ``(positions, normals)`` pairs), in the order of ``jobs``,
    identical bit for bit to ``bake(mesh, clip, …)`` of each pair.  For results larger than
    memory, call :func:`bake` with ``out=`` per pair.
    """
    try:
        jobs = [tuple(j) for j in jobs]
    except TypeError:
        raise TypeError("jobs must be an iterable of (mesh, clip) pairs") from None
    if "out" in options:
        raise TypeError("bake_many() takes no out: it returns arrays; to write files call "
                        "bake(mesh, clip, out=...) for each pair")
    work = 0
    for i, job in enumerate(jobs):
        if len(job) != 2:
            raise ValueError(f"jobs[{i}] must be a (mesh, clip) pair, got {len(job)} items")
        try:
            plan = _Plan(job[0], job[1], fps, method, normals, chunk, options)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"jobs[{i}]: {exc}") from None
        work += plan.F * plan.V
    if scheduler is not None and threads is not None:
        raise ValueError("threads: with a scheduler each task runs the kernel on one "
                         "thread; pass threads=None")
    nthreads = 1 if scheduler is not None else resolve_threads(threads)
    client, ours = (None, False) if scheduler is None else _client(scheduler)
    bar = _bar(progress, len(jobs), work, unit="bake")
    pool = None
    try:
        if client is not None:
            futs = [client.submit(_bake_task, m, c, fps, method, normals, chunk, options,
                                  pure=False) for m, c in jobs]
        else:
            pool = ThreadPoolExecutor(min(nthreads, max(1, len(jobs))))
            futs = [pool.submit(_bake_task, m, c, fps, method, normals, chunk, options)
                    for m, c in jobs]
        try:
            results = []
            for f in futs:
                results.append(f.result())
                if bar is not None:
                    bar.update(1)
            return results
        except BaseException:
            if client is not None:
                client.cancel(futs)
            raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()
        if ours:
            client.close()
