"""The ``skinkit`` command (also ``python -m skinkit``).

``skinkit demo [--out DIR]`` twists joint 5 of seed 001's cylinder and prints, per angle, the
volume ratio and smallest radius under rigid, LBS and DQS skinning and the seam a rigid binding
tears open, then the same two numbers for optimized centers of rotation (CoR), then the bulge and
volume of the elbow of ``skinkit.rigs.arm`` bent by 90 and 120 degrees under LBS, DQS and CoR; it
writes ``candy_wrapper.png`` and ``volume_ratio.png`` (rigid, LBS, DQS and CoR; needs the ``plot``
extra, without it the tables are still printed).  ``skinkit info`` prints the build
configuration.  ``skinkit bake model.glb`` bakes an animation of a glTF file into a ``.pc2`` /
``.npy`` point cache by any skinning method (``--method blend`` takes ``--blend``), on threads or
on a dask scheduler with ``--scheduler tcp://host:8786``.
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

DEMO_ANGLES = (0.0, 45.0, 90.0, 135.0, 179.0)
_NAME = {"lbs": "LBS", "dqs": "DQS", "cor": "CoR"}


def _table(sweep, methods):
    rows = []
    head = f"{'twist':>6}  " + "  ".join(f"{m.upper() + ' vol':>9}  {m.upper() + ' r':>7}"
                                          for m in methods) + f"  {'rigid seam':>10}"
    rows.append(head)
    rows.append("-" * len(head))
    for i, a in enumerate(sweep["angles"]):
        cells = "  ".join(f"{sweep['volume_ratio'][m][i]:>9.3f}  {sweep['min_radius'][m][i]:>7.3f}"
                          for m in methods)
        rows.append(f"{a:>5.0f}°  {cells}  {sweep['rigid_gap'][i]:>10.1f}")
    return "\n".join(rows)


def _cor_table(rig, sweep, angles):
    """CoR at the demo's twists, then the elbow of ``rigs.arm`` bent by 90 / 120 degrees: bulge
    (largest increase of a vertex's distance from the bones; the arm's radius is 5) and volume,
    per method.  Rows start with a word, so the main table's rows stay the only ones that start
    with an angle."""
    from . import metrics, rigs

    rows = ["CoR (optimized centers of rotation) keeps the twisted radius like DQS:"]
    for i, a in enumerate(sweep["angles"]):
        rows.append(f"  twist {a:>3.0f}°  CoR vol {sweep['volume_ratio']['cor'][i]:.3f}  "
                    f"CoR r {sweep['min_radius']['cor'][i]:.3f}")
    rows.append("and bulges less than DQS at a bent elbow, losing less volume than LBS "
                "(skinkit.rigs.arm, radius 5):")
    arm = rigs.arm()
    bend = metrics.bend_sweep(arm, "elbow", [90.0, 120.0], methods=("lbs", "dqs", "cor"))
    for i, a in enumerate(bend["angles"]):
        rows.append(f"  bend {a:>4.0f}°  " + "  ".join(
            f"{_NAME[m]} bulge {bend['bulge'][m][i]:.2f} vol {bend['volume_ratio'][m][i]:.3f}"
            for m in ("lbs", "dqs", "cor")))
    return "\n".join(rows)


def demo(out=".", angles=DEMO_ANGLES, plots=True, stream=None):
    """Run the candy-wrapper demo; returns the exit status (0 ok, 1 non-finite angles or could
    not write the figures)."""
    from . import metrics, rigs

    stream = sys.stdout if stream is None else stream
    bad = [a for a in angles if not math.isfinite(a)]
    if bad:
        print(f"skinkit demo: --angles must be finite numbers of degrees, got {bad[0]}",
              file=sys.stderr)
        return 1
    methods = ("rigid", "lbs", "dqs")
    rig = rigs.seed001()
    sweep = metrics.twist_sweep(rig, 5, angles, methods=methods + ("cor",))
    print("skinkit demo: seed 001's cylinder (radius 40, height 200, 12 x 20 segments) on 11 "
          "joints 20 apart,\nheight-band weights; joint 5 twisted about the bone axis.", file=stream)
    print("vol = enclosed volume / rest volume; r = smallest radius between joints 4 and 5 / rest;",
          file=stream)
    print("rigid seam = widest gap a rigid (one joint per vertex) binding tears open, in units.\n",
          file=stream)
    print(_table(sweep, methods), file=stream)
    print("\nRings are 10 apart on this mesh, so the band next to the twisted joint turns a lot "
          "between two rings:\neven DQS loses a little volume there (almost none on a finer mesh; "
          "see notebooks/candy_wrapper.ipynb).\n", file=stream)
    print(_cor_table(rig, sweep, angles), file=stream)
    if not plots:
        return 0
    try:
        from . import plot

        plot._mpl()
    except ImportError:
        print("\nNo figures: matplotlib is missing. Install it with: pip install 'skinkit[plot]'",
              file=stream)
        return 0
    try:
        os.makedirs(out, exist_ok=True)
        files = [os.path.join(out, "candy_wrapper.png"), os.path.join(out, "volume_ratio.png")]
        plot.candy_wrapper(rig, angles=(0, 90, 135, 179), methods=methods + ("cor",)).savefig(
            files[0], dpi=110)
        fine = metrics.twist_sweep(rig, 5, np.linspace(0.0, 180.0, 37),
                                   methods=methods + ("cor",))
        plot.volume_chart(fine, title="Twisting joint 5 of seed 001's cylinder").savefig(
            files[1], dpi=110)
    except OSError as exc:
        print(f"\nskinkit demo: cannot write the figures: {exc}", file=sys.stderr)
        return 1
    print("\nwrote " + " and ".join(files), file=stream)
    return 0


def _pick(items, key, what):
    """An item by index or by name."""
    names = [getattr(x, "name", None) for x in items]
    if key in names:
        return items[names.index(key)]
    try:
        return items[int(key)]
    except (ValueError, IndexError):
        raise ValueError(f"no {what} {key!r}; the file has: "
                         + ", ".join(f"{i}: {n}" for i, n in enumerate(names))) from None


def _blend_option(arg, method, mesh):
    """``--blend``: ``{}`` or ``{"blend": b}`` for :func:`skinkit.bake`, from a number in
    [0, 1] or a ``.npy`` file of one such value per vertex (cast to the mesh's dtype); the range
    is checked by the skinning call."""
    if arg is None:
        if method == "blend":
            raise ValueError("--method blend needs --blend: a number in [0, 1] (0 = LBS, "
                             "1 = DQS) or a .npy file of one such value per vertex")
        return {}
    if method != "blend":
        raise ValueError(f"--blend is only used by --method blend, not {method!r}")
    if not arg.lower().endswith(".npy"):
        try:
            return {"blend": float(arg)}
        except ValueError:
            raise ValueError(f"--blend: {arg!r} is neither a number nor a .npy file") from None
    try:
        b = np.load(arg)
    except OSError as exc:
        raise ValueError(f"--blend: cannot read {arg!r} ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"--blend: {arg!r} is not a NumPy array file ({exc})") from None
    V = mesh.n_vertices
    if not isinstance(b, np.ndarray) or b.dtype.kind not in "fiu" or b.shape != (V,):
        what = f"{b.dtype} {b.shape}" if isinstance(b, np.ndarray) else type(b).__name__
        raise ValueError(f"--blend: {arg!r} holds {what}; it must be ({V},) numbers, one per "
                         f"vertex of {mesh.name!r}")
    return {"blend": np.ascontiguousarray(b, dtype=mesh.dtype)}


def bake_command(args, stream=None):
    """``skinkit bake``: returns the exit status (0 ok, 1 bad input or could not write)."""
    from .bake import bake, normals_path
    from .io import gltf

    stream = sys.stdout if stream is None else stream
    try:
        meshes, clips = gltf.load(args.model)
        mesh = _pick(meshes, args.mesh, "skinned mesh")
        mine = [c for c in clips if getattr(c, "skeleton", mesh.skeleton) is mesh.skeleton]
        if not mine:
            raise ValueError(f"{args.model}: no animation moves {mesh.name!r}")
        clip = _pick(mine, args.clip, "animation")
        options = _blend_option(args.blend, args.method, mesh)
        out = args.out or os.path.splitext(os.path.basename(args.model))[0] + ".pc2"
        res = bake(mesh, clip, fps=args.fps, method=args.method, threads=args.threads, out=out,
                   normals=args.normals, progress=False if args.no_progress else None,
                   scheduler=args.scheduler, **options)
    except (OSError, ValueError, TypeError, NotImplementedError, ImportError) as exc:
        print(f"skinkit bake: {exc}", file=sys.stderr)
        return 1
    F, V = (res[0] if args.normals else res).shape[:2]
    print(f"wrote {out}: {F} frames x {V} vertices of {mesh.name!r}, animation {clip.name!r} "
          f"at {args.fps:g} fps, {args.method}", file=stream)
    if args.normals:
        print(f"wrote {normals_path(out)}: the normals", file=stream)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="skinkit", description="Skeletal mesh skinning for NumPy: the candy-wrapper demo, "
        "build information and baking glTF animations into point caches.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"skinkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,info,bake}")
    d = sub.add_parser("demo", help="twist seed 001's cylinder under rigid / LBS / DQS / CoR "
                       "and bend an elbow: tables and figures", description="Twist joint 5 of "
                       "seed 001's skinned cylinder and compare rigid, LBS, DQS and CoR "
                       "(optimized centers of rotation) skinning, then bend the elbow of "
                       "skinkit.rigs.arm by 90 and 120 degrees under LBS, DQS and CoR: prints "
                       "the tables, writes candy_wrapper.png and volume_ratio.png (with "
                       "matplotlib, the plot extra).")
    d.add_argument("--out", default=".", metavar="DIR",
                   help="folder for the PNG files (default: the current folder)")
    d.add_argument("--angles", type=float, nargs="+", default=list(DEMO_ANGLES), metavar="DEG",
                   help="twist angles of the tables, finite degrees (default: %(default)s; the "
                   "figures and the elbow bends use fixed angles)")
    d.add_argument("--no-plots", action="store_true", help="print the tables only, no figures")
    sub.add_parser("info", help="print the build configuration (show_config)")
    b = sub.add_parser("bake", help="bake a glTF animation into a .pc2 / .npy point cache",
                       description="Skin every frame of an animation of a glTF file and write "
                       "the positions to a Blender Mesh Cache (.pc2) or NumPy (.npy) file.")
    b.add_argument("model", help="a .glb or .gltf file with a skinned mesh")
    b.add_argument("--clip", default="0", metavar="NAME|INDEX",
                   help="the animation (default: the first)")
    b.add_argument("--mesh", default="0", metavar="NAME|INDEX",
                   help="the skinned mesh (default: the first)")
    b.add_argument("--fps", type=float, default=30.0, help="frames per second (default: 30)")
    b.add_argument("--method", default="lbs",
                   help="rigid, lbs, dqs, cor (centers of rotation, computed from the mesh's "
                   "faces first) or blend (LBS and DQS mixed by --blend) (default: lbs)")
    b.add_argument("--blend", default=None, metavar="B|FILE.npy",
                   help="for --method blend: a number in [0, 1] (0 = LBS, 1 = DQS), or a .npy "
                   "file of one such value per vertex")
    b.add_argument("--threads", type=int, default=None, help="threads over frames")
    b.add_argument("--out", default=None, metavar="FILE.pc2|FILE.npy",
                   help="the point cache (default: <model name>.pc2 in the current folder)")
    b.add_argument("--normals", action="store_true",
                   help="also write the normals to <out name>.normals.pc2 / .npy")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="bake on a dask.distributed scheduler (tcp://host:8786; the dask extra)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.out, tuple(args.angles), plots=not args.no_plots)
    if args.command == "bake":
        return bake_command(args)
    if args.command == "info":
        from . import show_config

        show_config()
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
