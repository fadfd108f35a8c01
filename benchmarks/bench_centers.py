"""Time skinkit.centers_of_rotation (the Le & Hodgins 2016 precompute) on 10k / 50k / 100k-vertex
meshes.

The mesh is seed 001's capped cylinder (radius 40, height 200, on an 11-joint chain 20 apart),
subdivided to the vertex count asked for, with K = 4 influence slots weighted three ways:

  local       what a rigged limb looks like: one joint along each bone, two in a blend zone of
              +-5 around each joint (smoothstep), the other slots zero
  bands       seed 001's height bands: every vertex blends two joints along the whole bone
  proximity4  skinkit.bind.proximity(k=4): every vertex has four joints (the worst case: every
              triangle shares several joint pairs with most vertices of its region)

The cost is about sum over distinct weight rows of (samples sharing a joint pair with the row):
one exp() each.  It grows with the width of the blend regions, not with V * T.  A center depends
only on the vertex's weight row, so vertices with identical rows are computed once: the
cylinder's rings share rows (as quantized or painted weights often do), which flatters it.
`unique` rows defeat that: each weight is multiplied by 1 + 1e-9 x (a random number), then the
row renormalized, so every vertex is computed on its own (the honest worst case).

    python benchmarks/bench_centers.py                  # 10k, 50k, 100k; threads 1 and 2
    python benchmarks/bench_centers.py --sizes 10000 --threads 1 2 4 --weights local bands
    python benchmarks/bench_centers.py --full           # proximity4 / unique at 100k too
    python benchmarks/bench_centers.py --rows shared    # only the rows as the binder made them
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import skinkit as sk
from skinkit import rigs
from skinkit import transforms as tf

JOINTS, SPACING = 11, 20.0


def mesh(n_vertices):
    """The cylinder with about n_vertices vertices (radial : height segments about 1 : 5)."""
    radial = max(8, int(round(np.sqrt(n_vertices / 5.0))))
    height = max(1, int(round(n_vertices / radial)) - 1)
    return rigs.cylinder(radius=40.0, height=200.0, radial_segments=radial, height_segments=height,
                         matrix=tf.translation([0.0, 100.0, 0.0]))


def local_weights(positions, blend=5.0):
    """One joint per vertex, two within `blend` of a joint (smoothstep), in K = 4 slots."""
    y = np.clip(positions[:, 1], 0.0, SPACING * (JOINTS - 1))
    near = np.clip(np.round(y / SPACING), 0, JOINTS - 1).astype(np.int64)
    d = y - near * SPACING                       # signed distance from the nearest joint
    f = np.clip((d + blend) / (2 * blend), 0.0, 1.0)
    f = f * f * (3 - 2 * f)                      # weight of the upper joint of the zone
    lower = np.where(d < 0, near - 1, near)
    lower = np.clip(lower, 0, JOINTS - 2)
    inside = np.abs(d) < blend
    V = len(positions)
    idx = np.zeros((V, 4), np.int32)
    w = np.zeros((V, 4))
    idx[:, 0] = np.where(inside, lower, near)
    w[:, 0] = np.where(inside, 1 - f, 1.0)
    idx[:, 1] = np.where(inside, lower + 1, 0)
    w[:, 1] = np.where(inside, f, 0.0)
    zero = w[:, 1] == 0
    idx[zero, 1] = 0
    return idx, w


def weights(kind, positions, skeleton):
    if kind == "local":
        return local_weights(positions)
    if kind == "bands":
        i, w = sk.bind.height_bands(positions, skeleton)
        return (np.concatenate([i, np.zeros_like(i)], 1),
                np.concatenate([w, np.zeros_like(w)], 1))
    return sk.bind.proximity(positions, skeleton, k=4)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--weights", nargs="+", default=["local", "bands", "proximity4"],
                    choices=["local", "bands", "proximity4"])
    ap.add_argument("--subdivide", action="store_true", help="also time subdivide=True")
    ap.add_argument("--rows", nargs="+", default=["shared", "unique"], choices=["shared", "unique"])
    ap.add_argument("--full", action="store_true", help="proximity4 / unique beyond 50k too")
    args = ap.parse_args(argv)
    skel = sk.Skeleton.chain(JOINTS, SPACING)
    print(f"skinkit {sk.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'V':>7} {'T':>7} {'weights':>10} {'rows':>6} {'distinct':>8} {'subdiv':>6} "
          f"{'threads':>7} {'seconds':>8} {'us/vertex':>9} {'no center':>9}")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        prim = mesh(n)
        P, F = prim.positions, prim.faces
        for kind in args.weights:
            idx0, w0 = weights(kind, P, skel)
            for rows in args.rows:
                slow = kind == "proximity4" and rows == "unique"
                if len(P) > 60_000 and not args.full and slow:
                    print(f"{len(P):>7} {len(F):>7} {kind:>10} {rows:>6}  (skipped: minutes; "
                          "--full runs it)")
                    continue
                w = w0
                if rows == "unique":
                    w = w0 * (1 + 1e-9 * rng.random(w0.shape))
                    w /= w.sum(1, keepdims=True)
                infl = sk.Influences(idx0, w, JOINTS)
                distinct = len(np.unique(np.concatenate([idx0 * (w > 0), w], 1), axis=0))
                first = None
                for sub in ([False, True] if args.subdivide else [False]):
                    for th in args.threads:
                        t0 = time.perf_counter()
                        c = sk.centers_of_rotation(P, F, infl, subdivide=sub, threads=th)
                        dt = time.perf_counter() - t0
                        if not sub:
                            # every thread count gives the same bits
                            if first is None:
                                first = c
                            assert np.array_equal(first, c, equal_nan=True)
                        print(f"{len(P):>7} {len(F):>7} {kind:>10} {rows:>6} {distinct:>8} "
                              f"{str(sub):>6} {th:>7} {dt:>8.3f} {1e6 * dt / len(P):>9.1f} "
                              f"{np.isnan(c[:, 0]).mean():>8.1%}", flush=True)


if __name__ == "__main__":
    main()
