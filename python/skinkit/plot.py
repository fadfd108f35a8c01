"""Figures (matplotlib, the ``plot`` extra, imported only when a function runs).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (no global
state, safe in scripts, threads and the command line); save it with ``fig.savefig(path)``.  In
Jupyter, run ``%matplotlib inline`` once so returned figures display; a function given ``ax=``
draws into that (pyplot-made) axes instead.

Scenes use skinkit's y-up convention and show it upright (matplotlib's 3-D axes are z-up):
a point ``(x, y, z)`` is drawn at ``(x, -z, y)``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["candy_wrapper", "volume_chart", "elbow_bend", "weights", "skeleton", "mesh",
           "METHOD_COLORS", "METHOD_LABELS"]

METHOD_COLORS = {"rigid": "#7f7f7f", "lbs": "#e6842a", "dqs": "#3b75af", "cor": "#55a868",
                 "blend": "#8172b2"}
# row and legend labels; methods without an entry are upper-cased
METHOD_LABELS = {"cor": "CoR"}
_LIGHT = np.array([0.4, -0.6, 0.7]) / np.linalg.norm([0.4, -0.6, 0.7])


def _mpl():
    try:
        import matplotlib
        from matplotlib.figure import Figure
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection  # noqa: F401
    except ImportError:
        raise ImportError("skinkit.plot needs matplotlib: pip install 'skinkit[plot]'") from None
    return matplotlib, Figure


def _view(p):
    """skinkit y-up → matplotlib z-up: (x, y, z) → (x, -z, y)."""
    p = np.asarray(p, dtype=np.float64)
    return np.stack([p[..., 0], -p[..., 2], p[..., 1]], -1)


def _shade(tris, color):
    """Lambert + ambient colours per triangle (``tris`` in view space)."""
    from matplotlib.colors import to_rgba_array

    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, ln, out=np.zeros_like(n), where=ln > 0)
    k = 0.35 + 0.65 * np.abs(n @ _LIGHT)  # two-sided: inside faces of a torn mesh stay visible
    base = to_rgba_array(color)
    if base.shape[0] == 1:
        base = np.repeat(base, len(tris), 0)
    out = base.copy()
    out[:, :3] = np.clip(base[:, :3] * k[:, None], 0, 1)
    return out


def _equal(ax, pts, pad=0.04, zoom=1.0):
    lo, hi = pts.min(0), pts.max(0)
    c = (lo + hi) / 2
    span = np.maximum(hi - lo, 1e-9) * (1 + pad)
    ax.set_xlim(c[0] - span[0] / 2, c[0] + span[0] / 2)
    ax.set_ylim(c[1] - span[1] / 2, c[1] + span[1] / 2)
    ax.set_zlim(c[2] - span[2] / 2, c[2] + span[2] / 2)
    ax.set_box_aspect(span, zoom=zoom)


def _clean(ax, axes=False):
    ax.set_proj_type("ortho")
    if not axes:
        ax.set_axis_off()
    else:
        for a in (ax.xaxis, ax.yaxis, ax.zaxis):
            a.pane.set_alpha(0.0)


def _draw_mesh(ax, positions, faces, color, edges=True, face_values=None, cmap=None, norm=None):
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    tris = _view(positions)[faces]
    if face_values is not None:
        import matplotlib

        cm = matplotlib.colormaps[cmap or "viridis"]
        color = cm(norm(face_values))
    coll = Poly3DCollection(tris, facecolors=_shade(tris, color),
                            edgecolors=(0, 0, 0, 0.25) if edges else "none",
                            linewidths=0.25 if edges else 0)
    coll.set_zorder(1)
    ax.add_collection3d(coll)
    return tris.reshape(-1, 3)


def _draw_skeleton(ax, parents, joints, names=None, color="#c0392b", size=10):
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    # x-ray: drawn over the mesh whatever the depth, so the bones inside a skin stay visible
    ax.computed_zorder = False
    jp = _view(joints)
    segs = [(jp[p], jp[j]) for j, p in enumerate(parents) if p >= 0]
    if segs:
        ax.add_collection3d(Line3DCollection(segs, colors=color, linewidths=1.5, zorder=10))
    ax.scatter(jp[:, 0], jp[:, 1], jp[:, 2], s=size, c=color, depthshade=False, zorder=11)
    if names is not None:
        for n, p in zip(names, jp):
            ax.text(p[0], p[1], p[2], " " + n, fontsize=6, color="#333333")
    return jp


def mesh(positions, faces, color="#9fb4c7", skeleton=None, local=None, ax=None, elev=12,
         azim=-55, title=None):
    """One shaded mesh (optionally with a posed skeleton drawn).

    Parameters
    ----------
    positions : (V, 3)
    faces : (T, 3) int
    skeleton : Skeleton, optional
    local : (J, 4, 4), optional
        Pose of the skeleton (bind pose by default).
    ax : 3-D Axes, optional

    Returns
    -------
    Figure
    """
    _, Figure = _mpl()
    if ax is None:
        fig = Figure(figsize=(4, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    pts = [_draw_mesh(ax, positions, faces, color)]
    if skeleton is not None:
        g = skeleton.global_transforms(local)
        pts.append(_draw_skeleton(ax, skeleton.parents, g[:, :3, 3]))
    _equal(ax, np.vstack(pts))
    ax.view_init(elev=elev, azim=azim)
    _clean(ax)
    if title:
        ax.set_title(title)
    return fig


def _stripes(rest, faces, color, n=6):
    """Per-face colours in ``n`` light / dark stripes around the rest pose's y axis, so that a
    twist shows as a spiral instead of an unchanged-looking cylinder."""
    from matplotlib.colors import to_rgba_array

    c = np.asarray(rest, dtype=np.float64)[faces].mean(1)
    sector = np.floor((np.arctan2(c[:, 2], c[:, 0]) + np.pi) / (2 * np.pi) * 2 * n)
    light = (sector.astype(np.int64) % 2).astype(bool)
    out = np.repeat(to_rgba_array(color), len(faces), 0)
    out[light, :3] = 1.0 - 0.45 * (1.0 - out[light, :3])
    return out


def candy_wrapper(rig=None, angles=(0, 90, 135, 179), methods=("rigid", "lbs", "dqs"), joint=5,
                  elev=14, azim=-60, crop=None):
    """The candy-wrapper figure (seed 004): one twisted cylinder per method (rows) and angle
    (columns), shaded, with the posed skeleton.

    Parameters
    ----------
    rig : SkinnedMesh, optional
        Seed 001's cylinder (:func:`skinkit.rigs.seed001`) by default.
    angles : sequence of float
        Twists of ``joint`` about its bone axis, degrees.
    methods : sequence of str
    joint : int or str
    crop : (float, float), optional
        Show only this height range (y) of the mesh and skeleton.

    Returns
    -------
    Figure
    """
    from . import rigs

    _, Figure = _mpl()
    rig = rigs.seed001() if rig is None else rig
    local = rigs.twist(rig.skeleton, joint, np.asarray(angles, dtype=np.float64))
    K = rig.palette(local)
    g = rig.skeleton.global_transforms(local)
    nr, nc = len(methods), len(angles)
    ext = np.ptp(rig.positions, axis=0)
    tall = ext[1] / max(ext[0], ext[2], 1e-9)
    fig = Figure(figsize=(1.8 * nc + 0.5, min(0.95 * tall, 3.6) * nr + 0.5), layout="constrained")
    for r, m in enumerate(methods):
        P = rig.deform(K, method=m)
        for c, a in enumerate(angles):
            ax = fig.add_subplot(nr, nc, r * nc + c + 1, projection="3d")
            faces = rig.faces
            joints = g[c, :, :3, 3]
            parents = rig.skeleton.parents
            if crop is not None:
                keep = np.all((rig.positions[faces][..., 1] >= crop[0]) &
                              (rig.positions[faces][..., 1] <= crop[1]), axis=1)
                faces = faces[keep]
                inside = np.flatnonzero((joints[:, 1] >= crop[0]) & (joints[:, 1] <= crop[1]))
                remap = np.full(len(joints), -1)
                remap[inside] = np.arange(inside.size)
                parents = np.where(parents[inside] >= 0, remap[np.maximum(parents[inside], 0)], -1)
                joints = joints[inside]
            pts = [_draw_mesh(ax, P[c], faces, _stripes(rig.positions, faces,
                                                       METHOD_COLORS.get(m, "#9fb4c7"))),
                   _draw_skeleton(ax, parents, joints, size=6)]
            _equal(ax, np.vstack(pts), pad=0.02)
            ax.view_init(elev=elev, azim=azim)
            _clean(ax)
            if r == 0:
                ax.set_title(f"twist {a:g}°", fontsize=10)
            if c == 0:
                ax.text2D(-0.02, 0.5, METHOD_LABELS.get(m, m.upper()), transform=ax.transAxes,
                          rotation=90,
                          va="center", ha="right", fontsize=11, fontweight="bold",
                          color=METHOD_COLORS.get(m, "k"))
    fig.suptitle(f"Candy wrapper: twisting {rig.skeleton.names[rig.skeleton.index(joint)]}"
                 f" of {rig.name or 'the rig'}", fontsize=11)
    return fig


def volume_chart(sweep, title="Twist sweep"):
    """Volume ratio and smallest radius around the twisted bone vs angle, one line per method.

    Parameters
    ----------
    sweep : dict
        From :func:`skinkit.metrics.twist_sweep` (or ``bend_sweep``).

    Returns
    -------
    Figure
    """
    _, Figure = _mpl()
    a = sweep["angles"]
    panels = [("volume_ratio", "volume / rest volume")]
    if sweep.get("min_radius"):
        panels.append(("min_radius", "smallest radius / rest radius"))
    fig = Figure(figsize=(4.6 * len(panels), 3.6), layout="constrained")
    for i, (key, label) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        for m, y in sweep[key].items():
            # rigid and CoR dashed / dotted and on top: under a twist both often coincide with
            # DQS (all three keep the radius)
            style = {"rigid": (0, (4, 3)), "cor": (0, (1, 2))}.get(m, "-")
            ax.plot(a, y, label=METHOD_LABELS.get(m, m.upper()), color=METHOD_COLORS.get(m),
                    lw=2.5 if m == "cor" else 2, ls=style, zorder=2 if style == "-" else 3)
        ax.set_xlabel("twist angle (degrees)")
        ax.set_ylabel(label)
        ax.set_xlim(a.min(), a.max())
        lo = min(float(np.min(y)) for y in sweep[key].values())
        ax.set_ylim(min(0.0, lo) if key == "min_radius" else min(lo - 0.01, 0.9), 1.05)
        ax.axhline(1.0, color="k", lw=0.6, alpha=0.5)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left")
    fig.suptitle(title, fontsize=11)
    return fig


def elbow_bend(rig=None, angles=(0, 45, 90, 135), methods=("lbs", "dqs"), joint="elbow"):
    """The elbow-bend comparison: an arm bent at ``joint`` by each angle (columns), one row per
    method, seen from the front (the bend plane).

    Returns
    -------
    Figure
    """
    from . import rigs

    _, Figure = _mpl()
    rig = rigs.arm() if rig is None else rig
    local = rigs.bend(rig.skeleton, joint, np.asarray(angles, dtype=np.float64))
    K = rig.palette(local)
    g = rig.skeleton.global_transforms(local)
    Ps = {m: rig.deform(K, method=m) for m in methods}
    allpts = _view(np.concatenate([P.reshape(-1, 3) for P in Ps.values()]))
    nr, nc = len(methods), len(angles)
    fig = Figure(figsize=(2.3 * nc + 0.5, 2.6 * nr + 0.5), layout="constrained")
    for r, m in enumerate(methods):
        for c, a in enumerate(angles):
            ax = fig.add_subplot(nr, nc, r * nc + c + 1, projection="3d")
            _draw_mesh(ax, Ps[m][c], rig.faces, METHOD_COLORS.get(m, "#9fb4c7"))
            _draw_skeleton(ax, rig.skeleton.parents, g[c, :, :3, 3], size=8)
            _equal(ax, allpts, pad=0.02)  # one frame for all panels: sizes compare
            ax.view_init(elev=8, azim=-90)
            _clean(ax)
            if r == 0:
                ax.set_title(f"bend {a:g}°", fontsize=10)
            if c == 0:
                ax.text2D(-0.02, 0.5, METHOD_LABELS.get(m, m.upper()), transform=ax.transAxes,
                          rotation=90,
                          va="center", ha="right", fontsize=11, fontweight="bold",
                          color=METHOD_COLORS.get(m, "k"))
    title = "Elbow bend: LBS collapses the inside of the joint, DQS keeps its girth"
    if "cor" in methods:
        title += " but bulges out, CoR bulges less"
    fig.suptitle(title, fontsize=10)
    return fig


def weights(rig, joint, positions=None, ax=None, cmap="viridis", elev=14, azim=-60):
    """The weights of one joint painted on the mesh (0 dark, 1 bright), with a colour bar and
    the skeleton (the painted joint highlighted).

    Parameters
    ----------
    rig : SkinnedMesh
    joint : int or str
    positions : (V, 3), optional
        Draw on these (a posed mesh) instead of the rest positions.

    Returns
    -------
    Figure
    """
    from matplotlib.colors import Normalize
    from matplotlib.cm import ScalarMappable

    from .reference import unorm_weights

    _, Figure = _mpl()
    j = rig.skeleton.index(joint)
    w = unorm_weights(rig.weights)
    wj = np.where(np.asarray(rig.indices) == j, w, 0.0).sum(1)
    if ax is None:
        fig = Figure(figsize=(4.2, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    P = rig.positions if positions is None else positions
    norm = Normalize(0.0, 1.0)
    pts = [_draw_mesh(ax, P, rig.faces, None, edges=True, face_values=wj[rig.faces].mean(1),
                      cmap=cmap, norm=norm)]
    jp = rig.skeleton.global_transforms()[:, :3, 3]
    if positions is None:
        pts.append(_draw_skeleton(ax, rig.skeleton.parents, jp, size=6, color="#1f77b4"))
        v = _view(jp[j])
        ax.scatter([v[0]], [v[1]], [v[2]], s=40, c="#00c853", depthshade=False, zorder=12)
    _equal(ax, np.vstack(pts))
    ax.view_init(elev=elev, azim=azim)
    _clean(ax)
    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.6, label="weight")
    ax.set_title(f"weights of {rig.skeleton.names[j]}", fontsize=10)
    return fig


def skeleton(skel, local=None, names=True, ax=None, elev=10, azim=-70):
    """A skeleton alone: joints, bones and names, posed by ``local`` (bind pose by default).

    Returns
    -------
    Figure
    """
    _, Figure = _mpl()
    if ax is None:
        fig = Figure(figsize=(4.5, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    g = skel.global_transforms(local)
    jp = _draw_skeleton(ax, skel.parents, g[:, :3, 3], skel.names if names else None, size=14)
    _equal(ax, jp, pad=0.25)
    ax.view_init(elev=elev, azim=azim)
    _clean(ax)
    ax.set_title(f"{skel.n_joints} joints", fontsize=10)
    return fig
