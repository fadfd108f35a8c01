"""Fixtures shared by skinkit's test modules.

Tests run with ``--import-mode=importlib``, so modules cannot import each other: shared helpers
live here as fixtures (a fixture may return a function).
"""
import threading

import numpy as np
import pytest

from skinkit import transforms as tf

# The Blender lane's tests need bpy in their own environment (.ci/lane-blender.sh runs them).
collect_ignore = ["blender"]


@pytest.fixture
def rng():
    """A seeded generator, so a failure reproduces."""
    return np.random.default_rng(20261121)


def _random_rotations(rng, n):
    """(n, 3, 3) proper rotations from normalised Gaussian quaternions (uniform on SO(3))."""
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


@pytest.fixture
def assert_gil_released():
    """``assert_gil_released(call, what)``: runs ``call()`` three times on a worker thread while
    another Python thread counts.  If a call held the GIL the counter could not move during it;
    during a released call it moves by tens of thousands (about 10^7 increments a second).  Best
    of three, for a loaded machine."""

    def check(call, what):
        counter, during = [0], []
        stop = threading.Event()

        def count():
            while not stop.is_set():
                counter[0] += 1

        def work():
            for _ in range(3):
                before = counter[0]
                call()
                during.append(counter[0] - before)

        counting = threading.Thread(target=count)
        counting.start()
        try:
            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
        finally:
            stop.set()
            counting.join()
        assert max(during) > 1000, f"the counter moved only {during} during {what}"

    return check


@pytest.fixture
def random_rigid():
    """``random_rigid(rng, shape, reach=10.0)``: rigid (…, 4, 4) float64 transforms with random
    rotations and translations of up to ``reach`` per axis."""

    def make(rng, shape, reach=10.0):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape))
        m = np.zeros((n, 4, 4))
        m[:, :3, :3] = _random_rotations(rng, n)
        m[:, :3, 3] = rng.uniform(-reach, reach, (n, 3))
        m[:, 3, 3] = 1.0
        return m.reshape(shape + (4, 4))

    return make


@pytest.fixture
def random_tree():
    """``random_tree(rng, n_joints, max_depth=64, n_roots=1)`` -> ``parents`` (J,) int64 of a
    random forest of exactly ``min(n_joints - n_roots + 1, max_depth)`` levels, in a shuffled
    joint order (parents are NOT before their children)."""

    def make(rng, n_joints, max_depth=64, n_roots=1):
        depth = np.zeros(n_joints, dtype=np.int64)
        sorted_parents = np.full(n_joints, -1, dtype=np.int64)
        # a spine from the first root down to max_depth levels, so the deepest case occurs
        spine = min(n_joints - n_roots + 1, max_depth)
        is_root = np.zeros(n_joints, dtype=bool)
        is_root[0] = True
        is_root[spine:spine + n_roots - 1] = True
        for j in range(1, n_joints):
            if is_root[j]:
                continue
            if j < spine:
                pick = j - 1
            else:
                candidates = np.flatnonzero(depth[:j] < max_depth - 1)
                # half the time extend the newest eligible joint: long branches besides the spine
                pick = candidates[-1] if rng.random() < 0.5 else rng.choice(candidates)
            sorted_parents[j] = pick
            depth[j] = depth[pick] + 1
        # relabel: caller joint perm[k] is sorted joint k
        perm = rng.permutation(n_joints)
        parents = np.full(n_joints, -1, dtype=np.int64)
        has = sorted_parents >= 0
        parents[perm[has]] = perm[sorted_parents[has]]
        return parents

    return make


@pytest.fixture
def tree_depth():
    """``tree_depth(parents)``: the number of levels of a forest (1 for lone roots)."""

    def depth(parents):
        parents = np.asarray(parents)
        best = 0
        for j in range(parents.size):
            d, k = 1, parents[j]
            while k >= 0:
                d, k = d + 1, parents[k]
            best = max(best, d)
        return best

    return depth


@pytest.fixture
def unit_rows():
    """``unit_rows(rng, V)``: (V, 3) float64 random unit vectors."""

    def make(rng, V):
        n = rng.normal(size=(V, 3))
        return n / np.linalg.norm(n, axis=1, keepdims=True)

    return make


@pytest.fixture
def random_palette():
    """``random_palette(rng, J, frames=None, spread=2.0, reach=3.0, scale=0.0)``: (J, 4, 4), or
    (frames, J, 4, 4), float64 palettes: rotation vectors N(0, spread) and translations
    N(0, reach); with ``scale``, each joint's 3x3 times ``I + scale * N(0, 1)`` (non-uniform scale
    and shear: DQS then needs pivots)."""

    def make(rng, J, frames=None, spread=2.0, reach=3.0, scale=0.0):
        lead = (J,) if frames is None else (frames, J)
        k = tf.rotvec(rng.normal(size=lead + (3,)) * spread)
        k[..., :3, 3] = rng.normal(size=lead + (3,)) * reach
        if scale:
            k[..., :3, :3] = k[..., :3, :3] @ (np.eye(3) + scale * rng.normal(size=lead + (3, 3)))
        return k

    return make


@pytest.fixture
def influences():
    """``influences(rng, V, J, K, index_dtype, dtype, zero_rows=(), zero_slots=True)`` -> ``idx,
    w``: random (V, K) influences of J joints, rows summing to 1.  With ``zero_slots`` a quarter
    of the slots after the first have weight 0 and a garbage index (never to be read); the rows
    ``zero_rows`` are all zero (a kernel copies those vertices unchanged)."""

    def make(rng, V, J, K, index_dtype, dtype, zero_rows=(), zero_slots=True):
        hi = min(J, np.iinfo(index_dtype).max + 1)
        idx = rng.integers(0, hi, size=(V, K)).astype(index_dtype)
        w = rng.random((V, K)) + 0.05
        if zero_slots and K > 1:
            off = rng.random((V, K)) < 0.25
            off[:, 0] = False
            w[off] = 0.0
            idx[off] = np.iinfo(index_dtype).max if index_dtype != np.int64 else 10**12
        w /= w.sum(1, keepdims=True)
        w[list(zero_rows)] = 0.0
        return idx, w.astype(dtype)

    return make


@pytest.fixture
def assert_skin_close():
    """``assert_skin_close(got, want, positions, palette, tol)``: every vertex of ``got`` within
    ``tol`` of ``want``, relative to its ``|position|`` plus the palette's largest translation."""

    def check(got, want, positions, palette, tol):
        scale = np.linalg.norm(np.asarray(positions, np.float64), axis=-1) + \
            np.abs(tf.to_4x4(palette)[..., :3, 3]).max()
        err = np.linalg.norm(np.asarray(got, np.float64) - want, axis=-1) / scale
        assert err.max() <= tol, f"max relative error {err.max():.3g} > {tol:g}"

    return check
