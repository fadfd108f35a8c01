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


def _points(p, name, n=None):
    """``p`` as float64 ``(V, 3)`` (``V == n`` when given), or an error naming ``name``."""
    try:
        p = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a (V, 3) array of numbers") from None
    if p.ndim != 2 or p.shape[1] != 3 or (n is not None and p.shape[0] != n):
        want = "(V, 3)" if n is None else f"({n}, 3)"
        raise ValueError(f"{name} must have shape {want}, got {p.shape}")
    return p


def _faces(faces, n, name="faces"):
    """``faces`` as int ``(T, 3)`` indexing ``n`` vertices, None kept, or a ValueError."""
    if faces is None:
        return None
    f = np.asarray(faces)
    if f.ndim != 2 or f.shape[1] != 3 or f.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a (T, 3) integer array, got {f.shape} {f.dtype}")
    if f.size and (f.min() < 0 or f.max() >= n):
        raise ValueError(f"{name} index vertices outside 0..{n - 1}")
    return f


def _skinned(rig, name="rig"):
    from .mesh import SkinnedMesh

    if not isinstance(rig, SkinnedMesh):
        raise TypeError(f"{name} must be a SkinnedMesh, not {type(rig).__name__}")
    return rig


def _draw_mesh(ax, positions, faces, color, edges=True, values=None, cmap=None, norm=None):
    """Shaded triangles; without ``faces``, the vertices as points.  ``values`` (per vertex,
    averaged per face) colour through ``cmap`` and ``norm`` instead of ``color``."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    if values is not None:
        import matplotlib

        cm = matplotlib.colormaps[cmap or "viridis"]
        color = cm(norm(values if faces is None else values[faces].mean(1)))
    if faces is None:
        p = _view(positions)
        ax.scatter(p[:, 0], p[:, 1], p[:, 2], s=4, c=color, depthshade=False, zorder=1)
        return p
    tris = _view(positions)[faces]
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
    faces : (T, 3) int or None
        None draws the vertices as points.
    skeleton : SkinnedMesh or Skeleton, optional
        A SkinnedMesh's joints are drawn in its skinning frame (``inv(base) @ world``), the
        frame of :meth:`~skinkit.SkinnedMesh.deform`'s output and of
        :func:`skinkit.metrics.skinned_rest`: pass the mesh itself to draw its skeleton over
        such positions (glTF meshes have a non-identity ``base``).  A bare Skeleton is drawn in
        its own (world) space, which is that frame only when ``base`` is the identity.
    local : (J, 4, 4), optional
        Pose of the skeleton (bind pose by default).
    ax : 3-D Axes, optional

    Returns
    -------
    Figure
    """
    _, Figure = _mpl()
    positions = _points(positions, "positions")
    faces = _faces(faces, len(positions))
    if skeleton is not None:
        joints, parents = _joints(skeleton, local, "skeleton")
    if ax is None:
        fig = Figure(figsize=(4, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    pts = [_draw_mesh(ax, positions, faces, color)]
    if skeleton is not None:
        pts.append(_draw_skeleton(ax, parents, joints))
    _equal(ax, np.vstack(pts))
    ax.view_init(elev=elev, azim=azim)
    _clean(ax)
    if title:
        ax.set_title(title)
    return fig


def _joints(skel, local=None, name="skel"):
    """Joint positions ``(J, 3)`` posed by ``local`` and the parents of a Skeleton (in its own
    space) or a SkinnedMesh (in its skinning frame, with its palette)."""
    from .mesh import SkinnedMesh
    from .skeleton import Skeleton

    if isinstance(skel, SkinnedMesh):
        from .metrics import joint_positions

        return joint_positions(skel, skel.palette(local)), skel.skeleton.parents
    if isinstance(skel, Skeleton):
        return skel.global_transforms(local)[:, :3, 3], skel.parents
    raise TypeError(f"{name} must be a Skeleton or SkinnedMesh, not {type(skel).__name__}")


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
    angles : float or sequence of float
        Twists of ``joint`` about its bone axis, degrees.
    methods : str or sequence of str
    joint : int or str
    crop : (float, float), optional
        Show only this height range (y, in the rest mesh's skinning frame) of the mesh and
        skeleton.

    Returns
    -------
    Figure
    """
    from . import rigs
    from .metrics import joint_positions, skinned_rest

    _, Figure = _mpl()
    rig = rigs.seed001() if rig is None else _skinned(rig)
    if rig.faces is None:
        raise ValueError("rig: candy_wrapper needs a mesh with faces")
    angles = np.atleast_1d(np.asarray(angles, dtype=np.float64))
    if angles.ndim != 1 or angles.size == 0:
        raise ValueError(f"angles must be a number or a non-empty 1-D sequence, got {angles.shape}")
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    rest = skinned_rest(rig)
    if crop is not None:
        crop = np.asarray(crop, dtype=np.float64)
        if crop.shape != (2,) or not crop[0] < crop[1]:
            raise ValueError(f"crop must be (low, high) with low < high, got {crop.tolist()}")
        keep = np.all((rest[rig.faces][..., 1] >= crop[0]) &
                      (rest[rig.faces][..., 1] <= crop[1]), axis=1)
        if not keep.any():
            raise ValueError(f"crop {tuple(crop.tolist())} keeps no face of the mesh (y from "
                             f"{rest[:, 1].min():g} to {rest[:, 1].max():g})")
    local = rigs.twist(rig.skeleton, joint, angles)
    K = rig.palette(local)
    g = joint_positions(rig, K)
    nr, nc = len(methods), len(angles)
    ext = np.ptp(rest, axis=0)
    tall = ext[1] / max(ext[0], ext[2], 1e-9)
    fig = Figure(figsize=(1.8 * nc + 0.5, min(0.95 * tall, 3.6) * nr + 0.5), layout="constrained")
    for r, m in enumerate(methods):
        P = rig.deform(K, method=m)
        for c, a in enumerate(angles):
            ax = fig.add_subplot(nr, nc, r * nc + c + 1, projection="3d")
            faces = rig.faces
            joints = g[c]
            parents = rig.skeleton.parents
            if crop is not None:
                faces = faces[keep]
                inside = np.flatnonzero((joints[:, 1] >= crop[0]) & (joints[:, 1] <= crop[1]))
                remap = np.full(len(joints), -1)
                remap[inside] = np.arange(inside.size)
                parents = np.where(parents[inside] >= 0, remap[np.maximum(parents[inside], 0)], -1)
                joints = joints[inside]
            pts = [_draw_mesh(ax, P[c], faces, _stripes(rest, faces,
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


def volume_chart(sweep, title=None, kind=None):
    """Volume ratio and smallest radius around the swept bone vs angle, one line per method.

    Parameters
    ----------
    sweep : dict
        From :func:`skinkit.metrics.twist_sweep` (or ``bend_sweep``).
    title : str, optional
        ``"Twist sweep"`` / ``"Bend sweep"`` (``"Angle sweep"`` when the kind is unknown).
    kind : {"twist", "bend"}, optional
        What the sweep turned, for the x axis's label (``"twist angle (degrees)"``); by default
        ``sweep["kind"]`` when the dict has one.  The two sweeps return the same keys, so
        without either the label is plain ``"angle (degrees)"``.

    Returns
    -------
    Figure
    """
    _, Figure = _mpl()
    a = np.asarray(sweep["angles"])
    kind = sweep.get("kind") if kind is None else kind
    xlabel = f"{kind} angle (degrees)" if kind else "angle (degrees)"
    title = f"{kind or 'angle'} sweep".capitalize() if title is None else title
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
        ax.set_xlabel(xlabel)
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
    from .metrics import joint_positions

    _, Figure = _mpl()
    rig = rigs.arm() if rig is None else _skinned(rig)
    local = rigs.bend(rig.skeleton, joint, np.asarray(angles, dtype=np.float64))
    K = rig.palette(local)
    g = joint_positions(rig, K)
    Ps = {m: rig.deform(K, method=m) for m in methods}
    allpts = _view(np.concatenate([P.reshape(-1, 3) for P in Ps.values()]))
    nr, nc = len(methods), len(angles)
    fig = Figure(figsize=(2.3 * nc + 0.5, 2.6 * nr + 0.5), layout="constrained")
    for r, m in enumerate(methods):
        for c, a in enumerate(angles):
            ax = fig.add_subplot(nr, nc, r * nc + c + 1, projection="3d")
            _draw_mesh(ax, Ps[m][c], rig.faces, METHOD_COLORS.get(m, "#9fb4c7"))
            _draw_skeleton(ax, rig.skeleton.parents, g[c], size=8)
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
    """The weights of one joint painted on the mesh (0 dark, 1 bright; the vertices as points
    when it has no faces), with a colour bar and the skeleton (the painted joint highlighted).
    The rest mesh and the skeleton are drawn in the skinning frame
    (:func:`skinkit.metrics.skinned_rest`, :func:`skinkit.metrics.joint_positions`).

    Parameters
    ----------
    rig : SkinnedMesh
    joint : int or str
    positions : (V, 3), optional
        Draw on these (a posed mesh, e.g. from :meth:`~skinkit.SkinnedMesh.deform`) instead of
        the rest positions, without the skeleton.

    Returns
    -------
    Figure
    """
    from matplotlib.colors import Normalize
    from matplotlib.cm import ScalarMappable

    from .metrics import joint_positions, skinned_rest
    from .reference import unorm_weights

    _, Figure = _mpl()
    _skinned(rig)
    j = rig.skeleton.index(joint)
    n = len(rig.positions)
    P = skinned_rest(rig) if positions is None else _points(positions, "positions", n)
    w = unorm_weights(rig.weights)
    wj = np.where(np.asarray(rig.indices) == j, w, 0.0).sum(1)
    if ax is None:
        fig = Figure(figsize=(4.2, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    norm = Normalize(0.0, 1.0)
    pts = [_draw_mesh(ax, P, rig.faces, None, edges=True, values=wj, cmap=cmap, norm=norm)]
    if positions is None:
        jp = joint_positions(rig, rig.palette())
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

    Parameters
    ----------
    skel : Skeleton or SkinnedMesh
        A SkinnedMesh's skeleton is drawn in its skinning frame (as :func:`mesh` draws it).

    Returns
    -------
    Figure
    """
    _, Figure = _mpl()
    joints, parents = _joints(skel, local, "skel")
    s = getattr(skel, "skeleton", skel)
    if ax is None:
        fig = Figure(figsize=(4.5, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    jp = _draw_skeleton(ax, parents, joints, s.names if names else None, size=14)
    _equal(ax, jp, pad=0.25)
    ax.view_init(elev=elev, azim=azim)
    _clean(ax)
    ax.set_title(f"{s.n_joints} joint{'' if s.n_joints == 1 else 's'}", fontsize=10)
    return fig
