"""Figures: each one renders to a PNG with what it promises (panels, titles, labels, legend,
colour bar), without pyplot's global state, and without clipping at the figure's edge."""
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
    fig = plot.volume_chart(sweep)
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
