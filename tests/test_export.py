"""Writing back: posed meshes (glTF, OBJ, PLY) and rigged glTF files that read back to the same
palettes (skinkit.io.export, skinkit.io.gltf.save / save_posed)."""
import os

import numpy as np
import pygltflib
import pytest

import skinkit as sk
from skinkit.io import export, gltf

DATA = os.path.join(os.path.dirname(__file__), "data", "gltf")


@pytest.fixture(scope="module")
def cesium():
    (mesh,), (clip,) = gltf.load(os.path.join(DATA, "CesiumMan.glb"))
    return mesh, clip


@pytest.fixture(scope="module")
def rigged_simple():
    (mesh,), (clip,) = gltf.load(os.path.join(DATA, "RiggedSimple.gltf"))
    return mesh, clip


# ---------------------------------------------------------------------------------------------
# OBJ / PLY
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_obj_roundtrip(tmp_path, cesium, dtype):
    mesh, clip = cesium
    P, N = mesh.pose(clip, 0.5, normals=True)
    P, N = P.astype(dtype), N.astype(dtype)
    path = export.write_obj(tmp_path / "pose.obj", P, mesh.faces, N)
    P2, F2, N2 = export.read_obj(path)
    np.testing.assert_array_equal(P2.astype(np.float32), P.astype(np.float32))  # 9 digits
    np.testing.assert_array_equal(F2, mesh.faces)
    np.testing.assert_allclose(N2, N, atol=1e-8)
    text = open(path).read()
    assert text.count("\nv ") == mesh.n_vertices and "f 1//1" not in text[:10]
    assert min(int(x.split("//")[0]) for x in text.split("\nf ")[1].split()) >= 1  # 1-based


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ply_roundtrip(tmp_path, cesium, binary, dtype):
    mesh, clip = cesium
    P, N = mesh.pose(clip, 1.0, normals=True)
    P, N = P.astype(dtype), N.astype(dtype)
    path = export.write_ply(tmp_path / "pose.ply", P, mesh.faces, N, binary=binary)
    P2, F2, N2 = export.read_ply(path)
    assert P2.dtype == dtype
    np.testing.assert_array_equal(P2, P)
    np.testing.assert_array_equal(N2, N)
    np.testing.assert_array_equal(F2, mesh.faces)


def test_points_only_and_bad_input(tmp_path):
    P = np.zeros((3, 3), np.float32)
    P2, F, N = export.read_ply(export.write_ply(tmp_path / "p.ply", P))
    assert F is None and N is None and P2.shape == (3, 3)
    P3, F3, N3 = export.read_obj(export.write_obj(tmp_path / "p.obj", P))
    assert F3 is None and N3 is None
    with pytest.raises(TypeError, match="positions"):
        export.write_obj(tmp_path / "x.obj", np.zeros((3, 3), int))
    with pytest.raises(ValueError, match="positions"):
        export.write_ply(tmp_path / "x.ply", np.zeros((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        export.write_ply(tmp_path / "x.ply", np.full((3, 3), np.nan))
    with pytest.raises(IndexError, match="faces"):
        export.write_obj(tmp_path / "x.obj", P, np.array([[0, 1, 3]]))
    with pytest.raises(ValueError, match="normals"):
        export.write_obj(tmp_path / "x.obj", P, normals=np.zeros((2, 3)))
    assert not os.path.exists(tmp_path / "x.obj")  # nothing written on error


# ---------------------------------------------------------------------------------------------
# Posed glTF
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", ["gltf", "glb"])
def test_posed_gltf(tmp_path, cesium, ext):
    mesh, clip = cesium
    P, N = mesh.pose(clip, 0.77, normals=True)
    path = gltf.save_posed(tmp_path / f"posed.{ext}", P, mesh.faces, N, matrix=mesh.base)
    g = pygltflib.GLTF2().load(str(path))
    assert g.skins == [] and len(g.meshes) == 1
    # read back through the third-party library's own buffer access
    prim = g.meshes[0].primitives[0]
    acc = g.accessors[prim.attributes.POSITION]
    view = g.bufferViews[acc.bufferView]
    blob = g.binary_blob() if ext == "glb" else g.get_data_from_buffer_uri(g.buffers[0].uri)
    got = np.frombuffer(blob, np.float32, acc.count * 3, view.byteOffset + (acc.byteOffset or 0))
    np.testing.assert_array_equal(got.reshape(-1, 3), P)
    np.testing.assert_allclose(acc.min, P.min(0))
    np.testing.assert_allclose(np.array(g.nodes[0].matrix).reshape(4, 4).T, mesh.base)
    nacc = g.accessors[prim.attributes.NORMAL]
    nview = g.bufferViews[nacc.bufferView]
    n = np.frombuffer(blob, np.float32, nacc.count * 3, nview.byteOffset).reshape(-1, 3)
    np.testing.assert_array_equal(n, N)


# ---------------------------------------------------------------------------------------------
# Rigged glTF round trip
# ---------------------------------------------------------------------------------------------
def _same_palettes(m1, c1, m2, c2, times, tol=1e-5):
    for t in times:
        np.testing.assert_allclose(m2.palette(c2.sample(t)), m1.palette(c1.sample(t)),
                                   atol=tol, rtol=0)
        np.testing.assert_allclose(m2.pose(c2, t), m1.pose(c1, t), atol=tol * 10, rtol=0)


@pytest.mark.parametrize("ext", ["gltf", "glb"])
@pytest.mark.parametrize("model", ["CesiumMan.glb", "RiggedSimple.gltf"])
def test_rigged_roundtrip_of_loaded_models(tmp_path, model, ext):
    (m1,), (c1,) = gltf.load(os.path.join(DATA, model))
    path = gltf.save(tmp_path / f"rig.{ext}", m1, [c1])
    (m2,), (c2,) = gltf.load(path)
    np.testing.assert_allclose(m2.base, m1.base, atol=1e-7)
    assert m2.skeleton.names == m1.skeleton.names
    np.testing.assert_array_equal(m2.skeleton.parents, m1.skeleton.parents)
    np.testing.assert_array_equal(m2.positions, m1.positions)
    np.testing.assert_array_equal(m2.faces, m1.faces)
    ts = np.linspace(c1.start - 0.1, c1.end + 0.1, 23)
    _same_palettes(m1, c1, m2, c2, ts)


def _scripted_rig(weights_dtype=np.float32, k=6):
    """A bent chain built in skinkit (not from a file), K = 6 so two JOINTS sets are written."""
    skel = sk.Skeleton.chain(4, 1.0, axis="y")
    rng = np.random.default_rng(7)
    V = 50
    P = np.c_[rng.uniform(-0.3, 0.3, V), rng.uniform(0, 3, V), rng.uniform(-0.3, 0.3, V)]
    P = P.astype(np.float32)
    idx = np.tile(np.array([0, 1, 2, 3, 0, 0]), (V, 1))[:, :k].astype(np.int32)
    w = rng.uniform(0.1, 1, (V, k)) * (np.arange(k) < 4)
    w = (w / w.sum(1, keepdims=True)).astype(np.float32)
    if weights_dtype == np.uint8:
        w = sk.weights.quantize(w, bits=8)
    base = sk.transforms.compose_trs([1, 2, 3], [0, 0.3826834, 0, 0.9238795], [2, 2, 2])
    mesh = sk.SkinnedMesh(P, skel, (idx, w), base=base, name="chain")
    times = np.array([0.0, 0.5, 1.0])
    rot = np.stack([[0, 0, 0, 1], [0, 0, 0.3826834, 0.9238795], [0.2, 0, 0, 0.98]])
    chans = [sk.Channel(j, "rotation", times, rot, "linear") for j in range(4)]
    chans.append(sk.Channel(0, "translation", times, [[0, 0, 0], [0.5, 0, 0], [0, 1, 0]], "step"))
    tang = np.zeros((3, 3, 3))
    tang[:, 1] = [[1, 1, 1], [1.2, 0.8, 1], [1, 1, 1.3]]
    tang[1, 0] = tang[1, 2] = [0.1, -0.2, 0]
    chans.append(sk.Channel(2, "scale", times, tang, "cubicspline"))
    clip = sk.Clip(channels=chans, rest=skel, name="wave")
    return mesh, clip


@pytest.mark.parametrize("wdt", [np.float32, np.uint8])
def test_rigged_roundtrip_of_scripted_rig(tmp_path, wdt):
    mesh, clip = _scripted_rig(wdt)
    path = gltf.save(tmp_path / "chain.glb", mesh, clip, fps=240)
    (m2,), (c2,) = gltf.load(path)
    assert m2.influences.shape == (50, 8)
    assert m2.weights.dtype == wdt
    np.testing.assert_allclose(m2.base, mesh.base, atol=1e-12)
    # keys are exact; the root joint under the base frame was resampled (step + linear keys at
    # the union of times and 240 fps), so between keys it agrees to the resampling step
    _same_palettes(mesh, clip, m2, c2, [0.0, 0.5, 1.0, -1.0, 2.0], tol=1e-5)
    for t in np.linspace(0.01, 0.99, 11):
        K1, K2 = mesh.palette(clip.sample(t)), m2.palette(c2.sample(t))
        np.testing.assert_allclose(K2[1:], K1[1:], atol=1e-5)  # verbatim channels


def test_save_without_clips_gives_the_bind_pose(tmp_path):
    mesh, _ = _scripted_rig()
    (m2,), clips = gltf.load(gltf.save(tmp_path / "bind.gltf", mesh))
    assert clips == []
    np.testing.assert_allclose(m2.pose(), mesh.positions, atol=1e-5)


def test_save_bad_input(tmp_path, cesium):
    mesh, clip = cesium
    with pytest.raises(TypeError, match="SkinnedMesh"):
        gltf.save(tmp_path / "x.gltf", "mesh")
    other, oclip = _scripted_rig()
    with pytest.raises(ValueError, match="joints"):
        gltf.save(tmp_path / "x.gltf", mesh, [oclip])
    with pytest.raises(ValueError, match="positions"):
        gltf.save_posed(tmp_path / "x.gltf", np.zeros((3, 2), np.float32))
