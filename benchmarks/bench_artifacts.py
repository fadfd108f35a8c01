"""Skinning artifacts and kernel times: LBS vs DQS vs CoR (optimized centers of rotation) vs the
LBS <-> DQS blend.

    python benchmarks/bench_artifacts.py [--vertices 100000] [--repeat 7] [--blend 0.5]

Artifacts, on skinkit's own rigs:
- the candy wrapper: seed 001's cylinder with joint 5 twisted by 90 / 135 / 179 degrees: the
  smallest radius between joints 4 and 5 relative to rest (1 = no pinch) and the enclosed volume
  ratio;
- the bent elbow: ``skinkit.rigs.arm`` (a closed capsule on two bones) bent by 90 / 120 degrees:
  the bulge (``metrics.bulge``: the largest increase of a vertex's distance from the bent bones,
  in the arm's units; its radius is 5) and the enclosed volume ratio.

Kernel times: every method on one mesh of about ``--vertices`` vertices (seed 001's cylinder,
finer), in float32 and in float64, K = 2, positions + normals, an Influences object, one thread,
the median of ``--repeat`` interleaved runs, plus the centers precompute once.  Nothing here is asserted:
tests/test_cor.py checks the artifact claims.
"""
import argparse
import time

import numpy as np

import skinkit as sk
from skinkit import metrics, rigs

METHODS = ("lbs", "dqs", "cor", "blend")


def deform(mesh, K, method, blend):
    return mesh.deform(K, method=method, **({"blend": blend} if method == "blend" else {}))


def artifacts(blend):
    rows = []
    cyl = rigs.seed001()
    cyl.compute_centers()
    for a in (90.0, 135.0, 179.0):
        K = cyl.palette(rigs.twist(cyl.skeleton, 5, [a]))[0]
        for m in METHODS:
            P = deform(cyl, K, m, blend)
            rows.append(("twist", a, m, metrics.min_bone_radius(cyl, P, K, 4, 5),
                         metrics.bulge(cyl, P, K), metrics.volume_ratio(P, cyl.positions, cyl.faces)))
    arm = rigs.arm()
    arm.compute_centers()
    for a in (90.0, 120.0):
        K = arm.palette(rigs.bend(arm.skeleton, "elbow", [a]))[0]
        for m in METHODS:
            P = deform(arm, K, m, blend)
            rows.append(("bend", a, m, metrics.min_bone_radius(arm, P, K, "shoulder", "elbow"),
                         metrics.bulge(arm, P, K), metrics.volume_ratio(P, arm.positions, arm.faces)))
    return rows


def kernel_times(n_vertices, repeat, blend, dtype):
    side = max(3, int(round(np.sqrt(n_vertices / 2))))
    mesh = rigs.seed001(radial_segments=2 * side, height_segments=side - 1, dtype=dtype)
    t0 = time.perf_counter()
    mesh.compute_centers()
    t_centers = time.perf_counter() - t0
    K = mesh.palette(rigs.twist(mesh.skeleton, 5, [120.0]))[0].astype(dtype)
    P, N, infl = mesh.positions, mesh.normals, mesh.influences
    out, out_n = np.empty_like(P), np.empty_like(N)
    kw = {"lbs": {}, "dqs": {"pivots": mesh.pivots()},
          "cor": {"pivots": mesh.pivots(), "centers": mesh.centers},
          "blend": {"pivots": mesh.pivots(), "blend": np.full(len(P), blend, dtype)}}
    times = {m: [] for m in METHODS}
    for _ in range(repeat):
        for m in METHODS:  # interleaved, so drifting machine load hits every method alike
            t = time.perf_counter()
            sk.skin(P, infl, K, method=m, normals=N, out=out, out_normals=out_n, threads=1,
                    **kw[m])
            times[m].append(time.perf_counter() - t)
    return len(P), t_centers, {m: float(np.median(v)) for m, v in times.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vertices", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--blend", type=float, default=0.5, help="blend amount for 'blend'")
    args = ap.parse_args(argv)
    print(f"{'pose':<6} {'angle':>6} {'method':<6} {'radius':>7} {'bulge':>7} {'volume':>7}")
    for kind, a, m, r, b, v in artifacts(args.blend):
        print(f"{kind:<6} {a:6.0f} {m:<6} {r:7.3f} {b:7.3f} {v:7.4f}")
    for dtype in (np.float32, np.float64):
        V, tc, times = kernel_times(args.vertices, args.repeat, args.blend, dtype)
        print(f"\nkernels: {V} vertices, {np.dtype(dtype).name}, K = 2, positions + normals, "
              f"1 thread (median of {args.repeat}); centers precompute {tc * 1e3:.1f} ms")
        for m in METHODS:
            print(f"  {m:<6} {times[m] * 1e3:8.3f} ms  {times[m] / V * 1e9:6.2f} ns/vertex  "
                  f"{times[m] / times['lbs']:5.2f}x LBS  {times[m] / times['dqs']:5.2f}x DQS")


if __name__ == "__main__":
    main()
