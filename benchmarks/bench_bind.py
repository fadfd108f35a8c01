"""Binding benchmark: 100k vertices, 64 joints, each skinkit.bind binder against a NumPy
implementation of the same rule, timed in the same run (best of a few repeats).

    python benchmarks/bench_bind.py [--vertices 100000] [--joints 64] [--repeat 3]

The NumPy side is vectorised over the vertices, one joint at a time (skinkit.reference's binding
section; height bands with searchsorted), which keeps its memory at O(V) like the C pass.  Every
pair's results are compared before the timings are printed.
"""
import argparse
import time

import numpy as np

import skinkit as sk
from skinkit import bind, reference as ref, transforms as tf


def tree(J, seed=0):
    """A branching skeleton: each joint hangs off one of the previous ones, ~1 unit away."""
    rng = np.random.default_rng(seed)
    parents = np.array([-1] + [int(rng.integers(max(0, j - 4), j)) for j in range(1, J)])
    return sk.Skeleton(parents, tf.translation(rng.normal(0, 1.0, (J, 3))))


def mesh_around(skel, V, seed=1):
    """Points scattered around the bones (a rough skin)."""
    rng = np.random.default_rng(seed)
    P = ref.bind_joint_positions(skel)
    j = rng.integers(1, skel.n_joints, V)
    p = skel.parents[j]
    t = rng.random(V)[:, None]
    return P[p] + t * (P[j] - P[p]) + rng.normal(0, 0.3, (V, 3))


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def height_bands_numpy(v, heights, origin, axis):
    h = (v - origin) @ axis
    n = len(heights)
    b = np.clip(np.searchsorted(heights, h, side="right") - 1, 0, n - 2)
    f = np.clip((h - heights[b]) / (heights[b + 1] - heights[b]), 0, 1)
    idx = np.stack([b, b + 1], 1)
    w = np.stack([1 - f, f], 1)
    return idx, w


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=100_000)
    ap.add_argument("--joints", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    V, J, R = a.vertices, a.joints, a.repeat
    s = tree(J)
    v = mesh_around(s, V)
    P = ref.bind_joint_positions(s)
    par = s.parents
    chain = sk.Skeleton.chain(J, 1.0)
    vc = np.random.default_rng(2).uniform([-1, -2, -1], [1, J + 1, 1], (V, 3))
    heights = np.arange(J, dtype=np.float64)
    radii = bind.volume_sphere_radii(v, s)
    hr, tr, ds = 0.3, 0.2, 0.5

    cases = [
        ("nearest (bone)", lambda: bind.nearest(v, s),
         lambda: ref.bind_nearest(v, P, par, to="bone")),
        ("nearest (joint)", lambda: bind.nearest(v, s, to="joint"),
         lambda: ref.bind_nearest(v, P, par, to="joint")),
        ("proximity k=4", lambda: bind.proximity(v, s, k=4),
         lambda: ref.bind_proximity(v, P, par, k=4)),
        ("volume_sphere_radii", lambda: (bind.volume_sphere_radii(v, s),),
         lambda: (ref.bind_sphere_radii(v, P),)),
        ("volume_spheres", lambda: bind.volume_spheres(v, s, radii=radii),
         lambda: ref.bind_volume_spheres(v, P, par, radii)),
        ("projection", lambda: bind.projection(v, s),
         lambda: ref.bind_projection(v, P, par)),
        ("height_bands", lambda: bind.height_bands(vc, chain),
         lambda: height_bands_numpy(vc, heights, np.zeros(3), np.array([0.0, 1, 0]))),
        ("envelope k=4", lambda: bind.envelope(v, s, hr, tr, ds),
         lambda: ref.bind_envelope(v, P, par, None, hr, tr, ds, k=4)),
    ]
    print(f"skinkit.bind: {V} vertices, {J} joints, float64, best of {R}; "
          f"NumPy = the same rule vectorised over vertices")
    print(f"{'binder':<22}{'skinkit ms':>12}{'numpy ms':>12}{'speed-up':>10}")
    for name, fast, slow in cases:
        tf_, out_f = best(fast, R)
        ts, out_s = best(slow, max(1, R - 1))
        if name == "height_bands":
            same = np.allclose(bind_dense(out_f, J), bind_dense(out_s, J), atol=1e-12)
        elif name == "volume_sphere_radii":
            same = np.allclose(out_f[0], out_s[0], rtol=1e-12)
        else:
            same = (np.array_equal(out_f[0], out_s[0])
                    and np.allclose(out_f[1], out_s[1], atol=1e-12))
        print(f"{name:<22}{tf_ * 1e3:>12.1f}{ts * 1e3:>12.1f}{ts / tf_:>9.1f}x"
              f"{'' if same else '   RESULTS DIFFER'}")


def bind_dense(out, J):
    idx, w = out
    D = np.zeros((idx.shape[0], J))
    np.add.at(D, (np.arange(idx.shape[0])[:, None].repeat(idx.shape[1], 1), idx), w)
    return D


if __name__ == "__main__":
    main()
