"""The command line: ``skinkit demo`` (table and figures), ``info``, ``--help``, ``bake`` (more
in test_bake.py)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from skinkit import bake as sk_bake, metrics, rigs
from skinkit.__main__ import main


def _rows(text):
    """The table rows: angle -> list of numbers."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)°\s+(.*)$", line)
        if m:
            out[float(m.group(1))] = [float(x) for x in m.group(2).split()]
    return out


def test_demo_writes_the_figures_and_prints_the_table(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert main(["demo", "--out", str(tmp_path / "figs")]) == 0
    text = capsys.readouterr().out
    for name in ("candy_wrapper.png", "volume_ratio.png"):
        data = (tmp_path / "figs" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    rows = _rows(text)
    assert sorted(rows) == [0, 45, 90, 135, 179]
    # columns: rigid vol, rigid r, lbs vol, lbs r, dqs vol, dqs r, rigid seam
    sweep = metrics.twist_sweep(rigs.seed001(), 5, [179.0])
    want = [sweep["volume_ratio"]["rigid"][0], sweep["min_radius"]["rigid"][0],
            sweep["volume_ratio"]["lbs"][0], sweep["min_radius"]["lbs"][0],
            sweep["volume_ratio"]["dqs"][0], sweep["min_radius"]["dqs"][0], sweep["rigid_gap"][0]]
    np.testing.assert_allclose(rows[179], want, atol=0.051)
    assert rows[179][3] < 0.1 and rows[179][5] > 0.95
    assert rows[0][:6] == [1.0] * 6


def test_demo_defaults_to_the_current_folder(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--angles", "0", "90"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["candy_wrapper.png", "volume_ratio.png"]
    assert sorted(_rows(capsys.readouterr().out)) == [0, 90]


def test_demo_without_matplotlib_still_prints_the_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["demo", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "pip install 'skinkit[plot]'" in text
    assert 179 in _rows(text)
    assert os.listdir(tmp_path) == []


def test_demo_no_plots_writes_nothing(tmp_path, capsys):
    assert main(["demo", "--no-plots", "--out", str(tmp_path)]) == 0
    assert os.listdir(tmp_path) == []
    assert len(_rows(capsys.readouterr().out)) == 5


def test_demo_fails_when_it_cannot_write(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["demo", "--out", str(blocker / "sub")]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_bad_arguments_exit_with_usage(capsys):
    with pytest.raises(SystemExit) as e:
        main(["demo", "--angles", "ninety"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["dance"])
    assert e.value.code == 2


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_demo_refuses_non_finite_angles(bad, tmp_path, capsys):
    assert main(["demo", "--no-plots", "--angles", "0", bad, "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert err == f"skinkit demo: --angles must be finite numbers of degrees, got {bad}\n"
    assert out == "" and os.listdir(tmp_path) == []


def test_info_and_help(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^skinkit\s+\d", out, re.M) and "numpy" in out
    assert main([]) == 0
    assert "demo" in capsys.readouterr().out


def test_help_names_what_the_demo_and_bake_do(capsys):
    """The help texts cover the CoR rows, the elbow bends and every bake method."""
    for argv in (["--help"], ["demo", "--help"], ["bake", "--help"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "rigid / LBS / DQS / CoR and bend an elbow" in text
    assert "compare rigid, LBS, DQS and CoR" in text and "bend the elbow" in text
    assert "rigid, lbs, dqs, cor" in text and "or blend" in text and "--blend B|FILE.npy" in text


def test_python_dash_m_skinkit():
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-m", "skinkit", "--help"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and "demo" in r.stdout and "info" in r.stdout and "bake" in r.stdout
    r = subprocess.run([sys.executable, "-m", "skinkit", "demo", "--no-plots", "--angles", "179"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert 179 in _rows(r.stdout)


def test_python_dash_m_skinkit_bake(tmp_path):
    glb = os.path.join(os.path.dirname(__file__), "data", "gltf", "CesiumMan.glb")
    out = tmp_path / "walk.npy"
    r = subprocess.run([sys.executable, "-m", "skinkit", "bake", glb, "--fps", "24", "--method",
                        "dqs", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {out}: 48 frames x 3273 vertices")
    from skinkit.io import gltf

    (mesh,), (clip,) = gltf.load(glb)
    np.testing.assert_array_equal(np.load(out), sk_bake(mesh, clip, fps=24, method="dqs"))


def test_bake_blend_takes_a_number_or_a_npy_file(tmp_path, capsys):
    glb = os.path.join(os.path.dirname(__file__), "data", "gltf", "CesiumMan.glb")
    from skinkit.io import gltf

    (mesh,), (clip,) = gltf.load(glb)
    out = tmp_path / "b.npy"
    assert main(["bake", glb, "--fps", "10", "--method", "blend", "--blend", "0.25", "--out",
                 str(out), "--no-progress"]) == 0
    assert "blend" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(out), sk_bake(mesh, clip, fps=10, method="blend",
                                                        blend=0.25))
    per_vertex = np.linspace(0.0, 1.0, mesh.n_vertices)  # float64: cast to the mesh's float32
    np.save(tmp_path / "b_values.npy", per_vertex)
    assert main(["bake", glb, "--fps", "10", "--method", "blend", "--blend",
                 str(tmp_path / "b_values.npy"), "--out", str(out), "--no-progress"]) == 0
    want = sk_bake(mesh, clip, fps=10, method="blend", blend=per_vertex.astype(np.float32))
    np.testing.assert_array_equal(np.load(out), want)


def test_bake_blend_errors_are_one_line(tmp_path, capsys):
    glb = os.path.join(os.path.dirname(__file__), "data", "gltf", "CesiumMan.glb")
    np.save(tmp_path / "short.npy", np.zeros(5))
    out = str(tmp_path / "b.npy")
    cases = [
        ([], "--method blend needs --blend: a number in [0, 1]"),
        (["--blend", "1.5"], "blend must be in [0, 1], got 1.5"),
        (["--blend", "nan"], "blend must be in [0, 1], got nan"),
        (["--blend", "half"], "--blend: 'half' is neither a number nor a .npy file"),
        (["--blend", str(tmp_path / "none.npy")], "--blend: cannot read"),
        (["--blend", str(tmp_path / "short.npy")], "it must be (3273,) numbers, one per vertex"),
    ]
    for extra, message in cases:
        assert main(["bake", glb, "--method", "blend", "--out", out] + extra) == 1, extra
        err = capsys.readouterr().err
        assert err.startswith("skinkit bake: ") and message in err and err.count("\n") == 1
    assert main(["bake", glb, "--blend", "0.5", "--out", out]) == 1
    assert "--blend is only used by --method blend, not 'lbs'" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["short.npy"]
