"""skinkit.bake's .pc2 point caches played by Blender's own Mesh Cache modifier (C reader).

Blender's modifier, Time Mode "Frame" (its default), plays sample ``i`` at scene frame
``frame_start + i``; the header's start frame is not used in that mode.
"""
import os

import bpy
import numpy as np
import pytest

import skinkit as sk
from skinkit.io import gltf

CESIUM = os.path.join(os.path.dirname(__file__), "..", "data", "gltf", "CesiumMan.glb")


def _cached_object(scene, mesh, path, frame_start=0.0):
    me = bpy.data.meshes.new("baked")
    me.from_pydata(mesh.positions.astype(np.float64).tolist(), [], mesh.faces.tolist())
    me.update()
    obj = bpy.data.objects.new("baked", me)
    scene.collection.objects.link(obj)
    mod = obj.modifiers.new("cache", "MESH_CACHE")
    mod.cache_format = "PC2"
    mod.filepath = str(path)
    mod.time_mode = "FRAME"
    mod.interpolation = "NONE"
    mod.frame_start = frame_start
    return obj


def _evaluated(scene, obj, frame):
    scene.frame_set(frame)
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    co = np.empty(len(ev.data.vertices) * 3, np.float32)
    ev.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_mesh_cache_modifier_plays_the_bake(scene, tmp_path, method):
    (mesh,), (clip,) = gltf.load(CESIUM)
    path = tmp_path / "walk.pc2"
    baked = np.array(sk.bake(mesh, clip, fps=24, method=method, threads=2, out=path))
    assert baked.shape == (48, mesh.n_vertices, 3)
    obj = _cached_object(scene, mesh, path)
    for f in (0, 1, 17, 47):
        np.testing.assert_array_equal(_evaluated(scene, obj, f), baked[f])
    assert not np.array_equal(baked[0], baked[17])
    obj.modifiers["cache"].frame_start = 10.0  # sample i at scene frame 10 + i
    np.testing.assert_array_equal(_evaluated(scene, obj, 27), baked[17])


def test_mesh_cache_modifier_reads_an_interrupted_bake(scene, tmp_path, monkeypatch):
    """The .partial file left by an interrupted bake is a valid, shorter cache."""
    (mesh,), (clip,) = gltf.load(CESIUM)
    want = sk.bake(mesh, clip, fps=24)
    real, calls = sk.SkinnedMesh.palette, []

    def interrupted(self, local=None, root=None):
        calls.append(1)
        if len(calls) == 4:  # the pre-flight frame, chunks 0-9 and 10-19, then this one
            raise KeyboardInterrupt
        return real(self, local, root)

    monkeypatch.setattr(sk.SkinnedMesh, "palette", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sk.bake(mesh, clip, fps=24, out=tmp_path / "walk.pc2", chunk=10)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["walk.pc2.partial"]
    obj = _cached_object(scene, mesh, tmp_path / "walk.pc2.partial")
    for f in (0, 19):
        np.testing.assert_array_equal(_evaluated(scene, obj, f), want[f])
