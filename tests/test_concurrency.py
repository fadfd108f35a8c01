"""Concurrency (issue 8; DESIGN.md section 4): the GIL is released around every kernel and calls
from several threads are safe.

- 8 Python threads calling each entry point at once on the same inputs (each with its own
  outputs) get the very bits one serial call gets, whatever ``threads=`` each call uses;
- a Python thread keeps running while a long kernel call is in flight: the call is measured by
  how far a counter in another thread advances during it, not by a clock.
"""
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import skinkit as sk
from skinkit import bind
from skinkit import transforms as tf

N_THREADS = 8


def _rig(dtype, V=3000, J=8, K=4, seed=11):
    rng = np.random.default_rng(seed)
    skel = sk.Skeleton(np.arange(J) - 1, tf.translation(np.where(np.arange(J)[:, None] == 0, 0, [0, 1, 0])))
    local = skel.local_bind @ tf.axis_angle(rng.standard_normal((J, 3)), rng.uniform(-2, 2, J))
    scaled = local @ tf.scale(rng.uniform(0.7, 1.3, (J, 3)))
    w = rng.uniform(0, 1, (V, K))
    return {
        "skel": skel, "palette": skel.palette(local), "scaled": skel.palette(scaled),
        "pivots": skel.pivots(), "P": rng.uniform(-1, J, (V, 3)).astype(dtype),
        "N": rng.standard_normal((V, 3)).astype(dtype),
        "T": np.concatenate([rng.standard_normal((V, 3)), np.ones((V, 1))], 1).astype(dtype),
        "idx": rng.integers(0, J, (V, K)).astype(np.int32),
        "w": (w / w.sum(1, keepdims=True)).astype(dtype),
        "ridx": rng.integers(-1, J, V).astype(np.int64),
        "poses": skel.palette(np.stack([local, scaled, local @ tf.scale([1, 2, 1])])),
    }


def _entry_points(r):
    """name -> function(threads) returning a tuple of arrays."""
    P, N, T, idx, w = r["P"], r["N"], r["T"], r["idx"], r["w"]
    skel = r["skel"]

    def tup(x):
        return x if isinstance(x, tuple) else (x,)

    return {
        "lbs": lambda t: tup(sk.lbs(P, idx, w, r["palette"], normals=N, tangents=T, threads=t)),
        "lbs-blend": lambda t: tup(sk.lbs(P, idx, w, r["scaled"], normals=N, normal_rule="blend", threads=t)),
        "lbs-batched": lambda t: tup(sk.lbs(P, idx, w, r["poses"], threads=t)),
        "dqs": lambda t: tup(sk.dqs(P, idx, w, r["scaled"], pivots=r["pivots"], normals=N, tangents=T, threads=t)),
        "rigid": lambda t: tup(sk.rigid(P, r["ridx"], r["palette"], normals=N, threads=t)),
        "skin-rigid": lambda t: tup(sk.skin(P, idx, w, r["palette"], method="rigid", threads=t)),
        "nearest": lambda t: bind.nearest(P, skel, explain=True)[:2],
        "proximity": lambda t: bind.proximity(P, skel, k=3),
        "volume_spheres": lambda t: bind.volume_spheres(P, skel),
        "projection": lambda t: bind.projection(P, skel),
        "envelope": lambda t: bind.envelope(P, skel, 0.4, 0.3, 0.8),
        "forward_kinematics": lambda t: (sk.forward_kinematics(skel.parents, r["poses"][:, :, :3]),),
    }


NAMES = list(_entry_points(_rig(np.float64, V=10)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", NAMES)
def test_eight_threads_on_the_same_inputs_give_the_serial_bits(name, dtype):
    r = _rig(dtype)
    inputs = [(a, a.copy()) for a in r.values() if isinstance(a, np.ndarray)]
    fn = _entry_points(r)[name]
    serial = fn(1)
    barrier = threading.Barrier(N_THREADS)

    def worker(i):
        barrier.wait()  # start together, so the calls really overlap
        return [fn(1 + i % 3) for _ in range(4)]  # threads=1, 2, 3 inside the calls too

    with ThreadPoolExecutor(N_THREADS) as pool:
        results = list(pool.map(worker, range(N_THREADS)))
    for per_thread in results:
        for got in per_thread:
            assert len(got) == len(serial)
            for a, b in zip(got, serial):
                assert a.dtype == b.dtype and a.shape == b.shape
                assert a.tobytes() == b.tobytes(), f"{name}: a concurrent call differs"
    for a, c in inputs:
        assert np.array_equal(a, c), "a concurrent call modified an input"


def test_shared_out_buffers_distinct_rows():
    """Threads writing disjoint row ranges of one interleaved vertex buffer (a common pattern:
    each worker skins its own slice) give the serial result, and the other columns stay intact."""
    r = _rig(np.float64, V=4000)
    P, idx, w = r["P"], r["idx"], r["w"]
    expected = sk.lbs(P, idx, w, r["palette"])
    buf = np.full((P.shape[0], 8), 5.0)
    chunks = np.array_split(np.arange(P.shape[0]), N_THREADS)

    def work(c):
        s = slice(c[0], c[-1] + 1)
        sk.lbs(P[s], idx[s], w[s], r["palette"], out=buf[s, 2:5])

    with ThreadPoolExecutor(N_THREADS) as pool:
        list(pool.map(work, chunks))
    assert buf[:, 2:5].tobytes() == np.ascontiguousarray(expected).tobytes()
    assert np.all(buf[:, :2] == 5.0) and np.all(buf[:, 5:] == 5.0)


@pytest.mark.parametrize("method", ["lbs", "dqs", "rigid", "cor", "blend", "proximity"])
def test_a_python_thread_runs_while_a_kernel_is_in_flight(method, assert_gil_released):
    """If a call held the GIL, a counter in another Python thread could not move during it."""
    rng = np.random.default_rng(1)
    V, J, K, F = 200_000, 16, 4, 6
    skel = sk.Skeleton(np.arange(J) - 1, tf.translation(np.where(np.arange(J)[:, None] == 0, 0, [0, 1, 0])))
    palettes = skel.palette(skel.local_bind[None] @ tf.axis_angle(rng.standard_normal((F, J, 3)), 0.5)
                            @ tf.scale(rng.uniform(0.8, 1.2, (F, J, 3))))
    P = rng.uniform(-1, J, (V, 3))
    idx = rng.integers(0, J, (V, K)).astype(np.int32)
    w = rng.uniform(0, 1, (V, K))
    w /= w.sum(1, keepdims=True)
    call = {
        "lbs": lambda: sk.lbs(P, idx, w, palettes, threads=1),
        "dqs": lambda: sk.dqs(P, idx, w, palettes, pivots=skel.pivots(), threads=1),
        "rigid": lambda: sk.rigid(P, idx[:, 0], palettes, threads=1),
        "cor": lambda: sk.cor(P, idx, w, palettes, centers=P + 0.5, pivots=skel.pivots(),
                              threads=1),
        "blend": lambda: sk.skin(P, idx, w, palettes, method="blend", blend=0.5,
                                 pivots=skel.pivots(), threads=1),
        "proximity": lambda: bind.proximity(P[:60_000], skel, k=4, to="bone"),
    }[method]
    assert_gil_released(call, f"{method} calls")


def test_the_worker_pool_across_changing_thread_counts():
    """Successive calls on one thread with threads = 1..6 in turn reuse (and grow) the worker
    pool; every call gets the serial bits, and none hangs on a job handed out before a worker
    was started."""
    r = _rig(np.float32, V=20000)
    serial = sk.lbs(r["P"], r["idx"], r["w"], r["palette"], normals=r["N"], threads=1)
    out, out_n = np.empty_like(r["P"]), np.empty_like(r["N"])
    for i in range(120):
        sk.lbs(r["P"], r["idx"], r["w"], r["palette"], normals=r["N"], out=out, out_normals=out_n,
               threads=1 + i % 6)
        assert out.tobytes() == serial[0].tobytes() and out_n.tobytes() == serial[1].tobytes()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_threads_work_in_a_forked_child():
    """A child forked after the pool started (multiprocessing's default on Linux) has none of its
    parent's workers; its threaded calls must start their own instead of waiting forever."""
    r = _rig(np.float32, V=20000)
    serial = sk.lbs(r["P"], r["idx"], r["w"], r["palette"], threads=2)  # the pool is running now
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        ok = all(sk.lbs(r["P"], r["idx"], r["w"], r["palette"], threads=t).tobytes()
                 == serial.tobytes() for t in (2, 3, 2))
        os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("a threaded call in the forked child hung")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "the child's results differ"
