"""Baking benchmark: frames per second for an SMPL-sized character over a long clip, skinkit
serially, on 2 threads and on a 2-worker dask LocalCluster, against smplx's ``lbs`` on PyTorch
CPU, all in the same run.

    python benchmarks/bench_bake.py                       # 10,000 frames, best of 3
    python benchmarks/bench_bake.py --frames 2000 --repeat 1 --json out.json
    python benchmarks/bench_bake.py --no-dask --no-torch

Workload: 6,890 vertices, 24 joints on SMPL's kinematic tree (joint positions of a rough human
scale, random), K = 4 influences per vertex (4 distinct random joints, random positive weights
summing to 1), float32, LBS.  The clip: one random rotation per joint per frame (axis uniform,
angle up to 60 degrees; the root also translates), ``F`` frames at 30 fps.

Contenders (each writes all ``F x V x 3`` positions into memory):

  skinkit serial        ``skinkit.bake(mesh, clip, threads=1, out=...)``: clip sampling (slerp
                        of the keys), forward kinematics, palettes and the C LBS kernel
  skinkit 2 threads     the same with ``threads=2`` (two Python threads over chunks of frames)
  skinkit palettes      ``skinkit.bake(mesh, palettes)``: the kernel alone, palettes given
                        (1 and 2 threads)
  skinkit dask 2 w      ``scheduler=client`` on ``LocalCluster(n_workers=2, threads_per_worker=1,
                        processes=True)``: tasks of chunks, results sent back to this process
  smplx rigid+skin      ``smplx.lbs.batch_rigid_transform`` on the clip's rotation matrices
                        (FK) followed by smplx.lbs's skinning lines (``T = W @ A``, ``T p``): the
                        same work as skinkit's, in batches of frames, torch with 1 and 2 threads
  smplx lbs (full)      ``smplx.lbs.lbs(betas=0, pose axis-angle, shapedirs=0, posedirs=0, ...)``:
                        what SMPL users call, which also applies shape and pose blend shapes
                        (zero here, but the matmuls run) and regresses the joints; 1 thread

Every contender's positions are compared with skinkit serial's (float32 tolerance).  The times
are the best of ``--repeat`` runs; the table gives frames per second and the speed over smplx.
Results (and the machine, load average before and after) go to a JSON file (``bench_bake.json``).
"""
import argparse
import json
import os
import platform
import sys
import time

import numpy as np

import skinkit as sk
from bench_skin import _cpu_name, _loadavg  # this folder is on sys.path when run as a script
from skinkit import transforms as tf

SMPL_PARENTS = np.array([-1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18,
                         19, 20, 21])


def character(V=6890, K=4, seed=0):
    """An SMPL-sized rig: (joint positions (24, 3), SkinnedMesh float32, dense weights)."""
    rng = np.random.default_rng(seed)
    J = len(SMPL_PARENTS)
    joints = np.zeros((J, 3))
    for j in range(1, J):
        joints[j] = joints[SMPL_PARENTS[j]] + rng.normal(0.0, 0.15, 3)
    rel = joints - np.where(SMPL_PARENTS[:, None] >= 0, joints[np.maximum(SMPL_PARENTS, 0)], 0)
    skel = sk.Skeleton(SMPL_PARENTS, tf.translation(rel))
    positions = (joints[rng.integers(0, J, V)] + rng.normal(0.0, 0.1, (V, 3))).astype(np.float32)
    idx = np.argsort(rng.random((V, J)), axis=1)[:, :K].astype(np.int32)  # K distinct joints
    w = rng.random((V, K)).astype(np.float32) + 0.05
    w /= w.sum(1, keepdims=True)
    mesh = sk.SkinnedMesh(positions, skel, (idx, w))
    dense = np.zeros((V, J), np.float32)
    np.put_along_axis(dense, idx, w, axis=1)
    return joints, rel, mesh, dense


def random_clip(rel, F, fps=30.0, seed=1):
    """(Clip, axis-angle (F, J, 3), rotation matrices (F, J, 3, 3)): random rotations per joint
    per frame, keys at exactly the frame times."""
    rng = np.random.default_rng(seed)
    J = rel.shape[0]
    axis = rng.normal(size=(F, J, 3))
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    angle = rng.uniform(0.0, np.pi / 3, (F, J, 1))
    aa = axis * angle
    rot = tf.rotvec(aa)  # (F, J, 4, 4)
    locals_ = rot.copy()
    locals_[..., :3, 3] = rel
    locals_[:, 0, :3, 3] += rng.normal(0.0, 0.2, (F, 3))
    return sk.Clip(np.arange(F) / fps, locals_), aa, rot[..., :3, :3], locals_[:, 0, :3, 3]


def best(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def smplx_contenders(joints, mesh, dense, aa, rot, root_t, batch, notes):
    """Closures timing smplx on torch (None where smplx or torch is missing)."""
    try:
        import torch
        from smplx import lbs as smplx_lbs
    except ImportError as exc:
        notes.append(f"smplx contenders skipped ({exc}): pip install torch==2.13.0 (the CPU "
                     "wheel), then pip install smplx")
        return {}
    import smplx

    notes.append(f"torch {torch.__version__}, smplx {getattr(smplx, '__version__', None) or 'installed'}")
    F, J = aa.shape[:2]
    V = mesh.n_vertices
    P = torch.from_numpy(mesh.positions)
    W = torch.from_numpy(dense)
    jt = torch.from_numpy(joints.astype(np.float32))
    parents = torch.from_numpy(SMPL_PARENTS)
    R = torch.from_numpy(rot.astype(np.float32))
    T0 = torch.from_numpy(root_t.astype(np.float32))
    AA = torch.from_numpy(aa.reshape(F, J * 3).astype(np.float32))
    ones = torch.ones(V, 1)
    Ph = torch.cat([P, ones], 1)

    def rigid_and_skin(threads):
        def run():
            torch.set_num_threads(threads)
            out = np.empty((F, V, 3), np.float32)
            with torch.no_grad():
                for a in range(0, F, batch):
                    b = min(F, a + batch)
                    n = b - a
                    _, A = smplx_lbs.batch_rigid_transform(R[a:b], jt.expand(n, J, 3), parents)
                    A = A.clone()
                    A[:, :, :3, 3] += T0[a:b, None, :]  # the root's translation, as transl
                    T = torch.matmul(W, A.view(n, J, 16)).view(n, V, 4, 4)
                    out[a:b] = torch.matmul(T, Ph[None, :, :, None])[:, :, :3, 0].numpy()
            return out
        return run

    def full():
        torch.set_num_threads(1)
        out = np.empty((F, V, 3), np.float32)
        betas = torch.zeros(batch, 10)
        shapedirs = torch.zeros(V, 3, 10)
        posedirs = torch.zeros((J - 1) * 9, V * 3)
        J_reg = torch.from_numpy(_joint_regressor(mesh.positions, joints))
        with torch.no_grad():
            for a in range(0, F, batch):
                b = min(F, a + batch)
                v, _ = smplx_lbs.lbs(betas[: b - a], AA[a:b], P[None], shapedirs, posedirs,
                                     J_reg, parents, W)
                out[a:b] = (v + T0[a:b, None, :]).numpy()
        return out

    return {"smplx rigid+skin, torch 1 thread": rigid_and_skin(1),
            "smplx rigid+skin, torch 2 threads": rigid_and_skin(2),
            "smplx lbs (full), torch 1 thread": full}


def _joint_regressor(positions, joints):
    """A (J, V) regressor that gives back ``joints`` from ``positions`` exactly enough: each
    joint is the weighted mean of 4 vertices, shifted by the fourth's weight (least squares)."""
    V, J = positions.shape[0], joints.shape[0]
    reg = np.zeros((J, V), np.float32)
    # minimum-norm solution of reg[j] @ positions = joints[j] with reg[j] summing to 1
    A = np.concatenate([positions.T.astype(np.float64), np.ones((1, V))], 0)  # (4, V)
    rhs = np.concatenate([joints.T, np.ones((1, J))], 0)                      # (4, J)
    reg[:] = np.linalg.lstsq(A, rhs, rcond=None)[0].T
    return reg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=10_000)
    ap.add_argument("--vertices", type=int, default=6890)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs (smplx: "
                    "at most 2)")
    ap.add_argument("--batch", type=int, default=100, help="frames per smplx call")
    ap.add_argument("--json", default="bench_bake.json")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    F, R = args.frames, args.repeat
    notes = []
    info = {"python": sys.version.split()[0], "numpy": np.__version__,
            "skinkit": sk.__version__, "machine": platform.machine(), "processor": _cpu_name(),
            "cpus": os.cpu_count(), "load_average": _loadavg()}
    joints, rel, mesh, dense = character(args.vertices)
    clip, aa, rot, root_t = random_clip(rel, F)
    V = mesh.n_vertices
    print(f"skinkit bake benchmark: {F} frames, V = {V}, J = 24 (SMPL tree), K = 4, float32, "
          f"LBS; best of {R}; " + ", ".join(f"{k} {v}" for k, v in info.items()))
    out = np.zeros((F, V, 3), np.float32)  # touched once, reused by every skinkit contender
    pal = mesh.palette(clip.sample(clip.frame_times(30)))
    contenders = {
        "skinkit serial": lambda: sk.bake(mesh, clip, threads=1, out=out, progress=False),
        "skinkit 2 threads": lambda: sk.bake(mesh, clip, threads=2, out=out, progress=False),
        "skinkit palettes given, serial": lambda: sk.bake(mesh, pal, threads=1, out=out,
                                                          progress=False),
        "skinkit palettes given, 2 threads": lambda: sk.bake(mesh, pal, threads=2, out=out,
                                                             progress=False),
    }
    cluster = client = None
    if not args.no_dask:
        try:
            from distributed import Client, LocalCluster

            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
            contenders["skinkit dask, 2 workers"] = lambda: sk.bake(
                mesh, clip, scheduler=client, out=out, progress=False)
        except ImportError:
            notes.append("dask contender skipped: pip install 'skinkit[dask]'")
    if not args.no_torch:
        contenders.update(smplx_contenders(joints, mesh, dense, aa, rot, root_t, args.batch,
                                           notes))
    rows = []
    want = None
    try:
        for name, fn in contenders.items():
            t, res = best(fn, min(R, 2) if name.startswith("smplx") else R)
            res = np.array(res) if want is None else res
            if want is None:
                want = res
            err = float(np.max(np.abs(res - want)))
            rows.append({"name": name, "seconds": t, "frames_per_s": F / t,
                         "max_abs_diff_vs_serial": err, "bit_identical": bool(err == 0.0)})
            print(f"  {name:<36} {t:8.2f} s {F / t:10.0f} frames/s   max |diff| {err:.2e}",
                  flush=True)
    finally:
        if client is not None:
            client.close()
            cluster.close()
    info["load_average_after"] = _loadavg()
    ref = {r["name"]: r["frames_per_s"] for r in rows}
    base = ref.get("smplx rigid+skin, torch 1 thread")
    print(f"\n{'contender':<36} {'frames/s':>10} {'x smplx 1t':>11} {'identical':>10}")
    for r in rows:
        ratio = f"{r['frames_per_s'] / base:10.1f}x" if base else f"{'-':>11}"
        r["over_smplx_rigid_skin_1_thread"] = r["frames_per_s"] / base if base else None
        print(f"{r['name']:<36} {r['frames_per_s']:>10.0f} {ratio} "
              f"{'yes' if r['bit_identical'] else 'no':>10}")
    for n in notes:
        print("note: " + n)
    with open(args.json, "w") as f:
        json.dump({"info": info, "args": vars(args), "results": rows, "notes": notes}, f,
                  indent=1)
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
