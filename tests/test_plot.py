"""Figures: each one renders to a PNG with what it promises (panels, titles, labels, legend,
colour bar), without pyplot's global state, and without clipping at the figure's edge."""
import os
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")  # the `plot` extra; `test` installs it

from matplotlib.figure import Figure  # noqa: E402

from skinkit import metrics, plot, rigs  # noqa: E402


def _render(fig, path):
    import matplotlib.image

    fig.savefig(path, dpi=60)
    img = matplotlib.image.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    return img


def _margin_is_blank(img, px=2):
    """Nothing drawn in the outer ``px`` pixels: the content is not clipped by the figure."""
    frame = np.concatenate([img[:px].reshape(-1, img.shape[2]), img[-px:].reshape(-1, img.shape[2]),
                            img[:, :px].reshape(-1, img.shape[2]), img[:, -px:].reshape(-1, img.shape[2])])
    return np.all(frame[:, :3] > 0.99)


def _painted(img):
    """Fraction of pixels that are not white."""
    return np.mean(np.any(img[..., :3] < 0.95, axis=-1))


def test_candy_wrapper_has_a_panel_per_method_and_angle(tmp_path):
    fig = plot.candy_wrapper(angles=(0, 90, 179), methods=("lbs", "dqs"))
    assert isinstance(fig, Figure)
    axes = fig.axes
    assert len(axes) == 6 and all(ax.name == "3d" for ax in axes)
    assert [ax.get_title() for ax in axes[:3]] == ["twist 0°", "twist 90°", "twist 179°"]
    labels = {t.get_text() for ax in axes for t in ax.texts}
    assert {"LBS", "DQS"} <= labels
    for ax in axes:  # equal aspect: the box follows the data's extents (80 x 80 x 200)
        box = ax.get_box_aspect()
        assert box[2] / box[0] == pytest.approx(200 / 80, rel=0.05)
    img = _render(fig, tmp_path / "candy.png")
    assert _margin_is_blank(img)
    assert 0.05 < _painted(img) < 0.6


def test_candy_wrapper_crop_keeps_only_the_band():
    fig = plot.candy_wrapper(angles=(90,), methods=("lbs",), crop=(60, 120))
    ax = fig.axes[0]
    lo, hi = ax.get_zlim()  # the view's z is the rig's y
    assert 55 <= lo and hi <= 125


def test_volume_chart_plots_the_sweep(tmp_path):
    sweep = metrics.twist_sweep(rigs.seed001(), 5, np.linspace(0, 180, 7))
    fig = plot.volume_chart(sweep, kind="twist")
    vol, rad = fig.axes
    assert "twist angle" in vol.get_xlabel() and "volume" in vol.get_ylabel()
    assert "radius" in rad.get_ylabel()
    assert [t.get_text() for t in vol.get_legend().get_texts()] == ["RIGID", "LBS", "DQS"]
    lines = {ln.get_label(): ln for ln in vol.get_lines() if not ln.get_label().startswith("_")}
    np.testing.assert_allclose(lines["LBS"].get_ydata(), sweep["volume_ratio"]["lbs"])
    np.testing.assert_allclose(lines["LBS"].get_xdata(), sweep["angles"])
    lo, hi = vol.get_ylim()
    assert lo <= min(y.min() for y in sweep["volume_ratio"].values()) and hi >= 1.0
    img = _render(fig, tmp_path / "vol.png")
    assert _margin_is_blank(img)


def test_elbow_bend(tmp_path):
    fig = plot.elbow_bend(angles=(0, 90))
    assert len(fig.axes) == 4
    assert fig.axes[1].get_title() == "bend 90°"
    assert _margin_is_blank(_render(fig, tmp_path / "elbow.png"))


def test_weights_paints_the_joint(tmp_path):
    rig = rigs.seed001()
    fig = plot.weights(rig, "joint5")
    ax3d = fig.axes[0]
    assert "joint5" in ax3d.get_title()
    assert any(ax.get_ylabel() == "weight" for ax in fig.axes[1:])  # the colour bar
    coll = ax3d.collections[0]
    # the face colours in face order (get_facecolor() gives them depth-sorted once projected)
    colors = coll._facecolor3d
    # faces far from joint 5 (weight 0) are dark, faces between y = 90 and 110 bright
    y = rig.positions[rig.faces][..., 1]
    zero = np.all(y <= 60, axis=1)
    hot = np.all((y >= 90) & (y <= 110), axis=1)
    assert zero.any() and hot.any()
    assert len(colors) == len(rig.faces)
    lum = colors[:, :3].sum(1)
    assert lum[hot].mean() > lum[zero].mean() + 0.3
    assert _margin_is_blank(_render(fig, tmp_path / "w.png"))


def test_skeleton_alone_and_mesh(tmp_path):
    s = rigs.humanoid()
    fig = plot.skeleton(s, rigs.a_pose(s))
    names = {t.get_text().strip() for t in fig.axes[0].texts}
    assert set(s.names) <= names
    assert _margin_is_blank(_render(fig, tmp_path / "s.png"))
    c = rigs.capsule()
    fig = plot.mesh(c.positions, c.faces, title="capsule")
    assert fig.axes[0].get_title() == "capsule"
    _render(fig, tmp_path / "m.png")


def test_volume_chart_labels_the_sweeps_kind():
    sweep = metrics.bend_sweep(rigs.arm(), "elbow", [0, 45, 90])
    fig = plot.volume_chart(sweep, kind="bend")
    assert fig.axes[0].get_xlabel() == "bend angle (degrees)"
    assert fig._suptitle.get_text() == "Bend sweep"
    # the sweep dicts do not say what they turned: no guess, no "twist" on a bend
    assert "twist" not in plot.volume_chart(sweep).axes[0].get_xlabel()
    sweep["kind"] = "bend"
    assert plot.volume_chart(sweep).axes[0].get_xlabel() == "bend angle (degrees)"


def _cesium_man():
    from skinkit.io import gltf

    return gltf.load(os.path.join(os.path.dirname(__file__), "data", "gltf", "CesiumMan.glb"))[0][0]


def _artists(ax):
    """The drawn mesh's vertices and the skeleton's joints (view space), as matplotlib got them."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    mesh = next(c for c in ax.collections if isinstance(c, Poly3DCollection))
    verts = np.asarray(mesh._faces).reshape(-1, 3)  # the triangles as given, in face order
    joints = np.asarray([c for c in ax.collections if hasattr(c, "_offsets3d")][0]._offsets3d).T
    return verts, joints


def _in_box(points, box_pts, slack=0.05):
    lo, hi = box_pts.min(0), box_pts.max(0)
    pad = slack * (hi - lo).max()
    return np.all((points >= lo - pad) & (points <= hi + pad))


def test_gltf_mesh_and_skeleton_share_a_frame():
    cm = _cesium_man()
    assert not np.allclose(cm.base, np.eye(4))
    rest = plot._view(metrics.skinned_rest(cm))
    joints = plot._view(metrics.joint_positions(cm, cm.palette()))
    for fig in (plot.weights(cm, 3), plot.mesh(cm.positions, cm.faces, skeleton=cm)):
        verts, jp = _artists(fig.axes[0])
        np.testing.assert_allclose(np.unique(verts, axis=0), np.unique(rest, axis=0), atol=1e-9)
        np.testing.assert_allclose(jp, joints, atol=1e-9)
        assert _in_box(jp, verts)  # the skeleton lies inside the body
    # a bare Skeleton stays in its own (world) space, as the docstring says
    _, jp = _artists(plot.mesh(cm.positions, cm.faces, skeleton=cm.skeleton).axes[0])
    np.testing.assert_allclose(jp, plot._view(cm.skeleton.global_transforms()[:, :3, 3]))
    # posed: the skeleton follows the skinned mesh
    local = rigs.bend(cm.skeleton, 3, 60.0)
    K = cm.palette(local)
    _, jp = _artists(plot.mesh(cm.deform(K), cm.faces, skeleton=cm, local=local).axes[0])
    np.testing.assert_allclose(jp, plot._view(metrics.joint_positions(cm, K)), atol=1e-9)
    # and plot.skeleton takes the mesh too
    ax = plot.skeleton(cm).axes[0]
    np.testing.assert_allclose(ax.collections[-1]._offsets3d, joints.T, atol=1e-9)


def test_builtin_rigs_draw_their_skeleton_where_they_did():
    rig = rigs.seed001()
    _, jp = _artists(plot.weights(rig, 5).axes[0])
    np.testing.assert_allclose(jp, plot._view(rig.skeleton.global_transforms()[:, :3, 3]),
                               atol=1e-9)
    arm = rigs.arm()
    ax = plot.elbow_bend(arm, angles=(90,), methods=("lbs",)).axes[0]
    g = arm.skeleton.global_transforms(rigs.bend(arm.skeleton, "elbow", [90.0]))
    np.testing.assert_allclose(ax.collections[-1]._offsets3d, plot._view(g[0, :, :3, 3]).T,
                               atol=1e-9)


def test_argument_errors_name_the_argument():
    rig = rigs.seed001()
    with pytest.raises(ValueError, match="crop"):
        plot.candy_wrapper(crop=(1000, 2000))
    with pytest.raises(ValueError, match="crop"):
        plot.candy_wrapper(crop=(100, 50))
    faceless = rigs.seed001()
    faceless.faces = None
    with pytest.raises(ValueError, match="faces"):
        plot.candy_wrapper(faceless)
    with pytest.raises(TypeError, match="rig"):
        plot.candy_wrapper(rig.skeleton)
    with pytest.raises(ValueError, match="positions"):
        plot.weights(rig, 5, positions=rig.positions[:10])
    with pytest.raises(ValueError, match="positions"):
        plot.mesh(rig.positions[:, :2], rig.faces)
    with pytest.raises(ValueError, match="faces"):
        plot.mesh(rig.positions, rig.faces + len(rig.positions))
    with pytest.raises(TypeError, match="skel"):
        plot.skeleton(rig.positions)
    with pytest.raises(TypeError, match="skeleton"):
        plot.mesh(rig.positions, rig.faces, skeleton="joint5")


def test_a_scalar_angle_and_a_faceless_mesh_draw():
    fig = plot.candy_wrapper(angles=90, methods="lbs")
    assert [ax.get_title() for ax in fig.axes] == ["twist 90°"]
    rig = rigs.seed001()
    fig = plot.mesh(rig.positions, None)
    np.testing.assert_allclose(fig.axes[0].collections[0]._offsets3d, plot._view(rig.positions).T)
    rig.faces = None
    ax = plot.weights(rig, "joint5").axes[0]
    pts = ax.collections[0]
    assert len(pts._offsets3d[0]) == len(rig.positions)
    lum = pts._facecolors[:, :3].sum(1)  # in point order (get_facecolor() is depth-sorted)
    assert len(lum) == len(rig.positions) and np.ptp(lum) > 0.3  # coloured by the weights


def test_skeleton_title_counts_joints():
    from skinkit import Skeleton

    s = rigs.humanoid()
    assert plot.skeleton(s).axes[0].get_title() == f"{s.n_joints} joints"
    one = Skeleton([-1], np.eye(4)[None], names=["root"])
    assert plot.skeleton(one).axes[0].get_title() == "1 joint"


def test_figures_stay_out_of_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plot.volume_chart(metrics.twist_sweep(rigs.seed001(), 5, [0, 90]))
    assert plt.get_fignums() == before


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"skinkit\[plot\]"):
        plot.candy_wrapper()
