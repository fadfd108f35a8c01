"""skinkit.bake: CesiumMan's walk baked serially, on threads and on a dask LocalCluster (the same
bits), to .npy and to Blender's .pc2 point cache (read back by an independent reader here), with
normals, a progress bar, bad input refused before any work, and interrupted bakes that say so."""
import errno
import importlib
import os
import struct
import sys
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import skinkit as sk
from skinkit import reference
from skinkit.__main__ import main
from skinkit.io import gltf

DATA = os.path.join(os.path.dirname(__file__), "data", "gltf")
bake_module = importlib.import_module("skinkit.bake")  # skinkit.bake is the function
FPS = 60


def read_pc2(path):
    """Blender's MOD_meshcache_pc2 layout: char[12] "POINTCACHE2\\0", int32 version, int32
    verts_tot, float32 start, float32 sampling, int32 frame_tot, then float32 xyz."""
    raw = open(path, "rb").read()
    sig, version, V, start, sampling, F = struct.unpack("<12siiffi", raw[:32])
    data = np.frombuffer(raw, dtype="<f4", offset=32)
    return dict(sig=sig, version=version, V=V, start=start, sampling=sampling, F=F,
                bytes=len(raw), data=data)


@pytest.fixture(scope="module")
def cesium():
    (mesh,), (clip,) = gltf.load(os.path.join(DATA, "CesiumMan.glb"))
    return mesh, clip


@pytest.fixture(scope="module")
def serial(cesium):
    mesh, clip = cesium
    return {m: sk.bake(mesh, clip, fps=FPS, method=m, threads=1) for m in ("lbs", "dqs")}


@pytest.fixture(scope="module")
def client():
    import distributed  # the dask extra is part of the test extra: no skip
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_serial_bake_matches_the_numpy_reference(cesium, serial, method):
    mesh, clip = cesium
    B = serial[method]
    times = clip.frame_times(FPS)
    assert B.shape == (len(times), mesh.n_vertices, 3) == (118, 3273, 3)
    assert B.dtype == np.float32
    for i in (0, 57, len(times) - 1):
        pal = mesh.palette(clip.sample(times[i]))
        if method == "lbs":
            want = reference.lbs(mesh.positions, mesh.indices, mesh.weights, pal)
        else:
            want = reference.dqs(mesh.positions, mesh.indices, mesh.weights, pal,
                                 pivots=mesh.pivots())
        np.testing.assert_allclose(B[i], want, atol=2e-5)
    assert not np.array_equal(B[0], B[30])  # the walk moves


@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_threads_equal_serial_bit_for_bit(cesium, serial, method):
    mesh, clip = cesium
    np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, method=method, threads=2),
                                  serial[method])
    # other chunkings (one frame per call, everything in one call) change nothing either
    np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, method=method, threads=2,
                                          chunk=1), serial[method])
    np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, method=method, chunk=1000),
                                  serial[method])


@pytest.mark.parametrize("method, options", [("rigid", {}), ("cor", {}),
                                              ("blend", {"blend": 0.25})])
def test_other_methods_and_deform_options_pass_through(cesium, method, options):
    mesh, clip = cesium
    mesh = sk.SkinnedMesh(mesh.positions, mesh.skeleton, mesh.influences, faces=mesh.faces,
                          base=mesh.base, bind_shape=mesh.bind_shape)  # cor: centers computed
    B = sk.bake(mesh, clip, fps=FPS, method=method, threads=2, chunk=9, **options)
    np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, method=method, **options), B)
    times = clip.frame_times(FPS)
    for i in (0, 70):
        np.testing.assert_array_equal(
            B[i], mesh.deform(mesh.palette(clip.sample(times[i])), method=method, **options))


def test_a_palette_stack_bakes_like_its_clip(cesium, serial):
    mesh, clip = cesium
    pal = mesh.palette(clip.sample(clip.frame_times(FPS)))
    before = pal.copy()
    np.testing.assert_array_equal(sk.bake(mesh, pal, method="dqs", threads=2), serial["dqs"])
    np.testing.assert_array_equal(pal, before)


@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_pc2_reads_back_to_the_same_positions(tmp_path, cesium, serial, method):
    mesh, clip = cesium
    path = tmp_path / "walk.pc2"
    got = sk.bake(mesh, clip, fps=FPS, method=method, threads=2, out=path)
    pc2 = read_pc2(path)
    F, V = serial[method].shape[:2]
    assert (pc2["sig"], pc2["version"], pc2["V"], pc2["F"], pc2["sampling"]) == \
        (b"POINTCACHE2\0", 1, V, F, 1.0)
    assert pc2["start"] == pytest.approx(clip.start * FPS)  # 2.5: the glTF walk starts at 1/24 s
    assert pc2["bytes"] == 32 + F * V * 12
    np.testing.assert_array_equal(pc2["data"].reshape(F, V, 3), serial[method])  # float32 in
    np.testing.assert_array_equal(got, serial[method])
    assert not got.flags.writeable
    assert os.listdir(tmp_path) == ["walk.pc2"]  # the .partial was renamed


def test_npy_stream_and_array_out(tmp_path, cesium, serial):
    mesh, clip = cesium
    path = tmp_path / "walk.npy"
    got = sk.bake(mesh, clip, fps=FPS, threads=2, out=str(path), chunk=5)
    np.testing.assert_array_equal(np.load(path), serial["lbs"])
    assert isinstance(got, np.memmap) and not got.flags.writeable
    out = np.full(serial["lbs"].shape, np.nan, np.float32)
    assert sk.bake(mesh, clip, fps=FPS, threads=2, out=out) is out
    np.testing.assert_array_equal(out, serial["lbs"])
    assert sorted(os.listdir(tmp_path)) == ["walk.npy"]


def test_normals_in_memory_and_in_a_sibling_file(tmp_path, cesium):
    mesh, clip = cesium
    P, N = sk.bake(mesh, clip, fps=FPS, method="dqs", normals=True, threads=2, chunk=7)
    times = clip.frame_times(FPS)
    for i in (0, 80):
        p, n = mesh.deform(mesh.palette(clip.sample(times[i])), method="dqs", normals=True)
        np.testing.assert_array_equal(P[i], p)
        np.testing.assert_array_equal(N[i], n)
    np.testing.assert_allclose(np.linalg.norm(N, axis=-1), 1.0, atol=1e-5)
    p2, n2 = sk.bake(mesh, clip, fps=FPS, method="dqs", normals=True, out=tmp_path / "w.pc2")
    assert sorted(os.listdir(tmp_path)) == ["w.normals.pc2", "w.pc2"]
    assert bake_module.normals_path(tmp_path / "w.pc2") == str(tmp_path / "w.normals.pc2")
    for name, want in (("w.pc2", P), ("w.normals.pc2", N)):
        pc2 = read_pc2(tmp_path / name)
        np.testing.assert_array_equal(pc2["data"].reshape(want.shape), want)
    np.testing.assert_array_equal(n2, N)


# ---------------------------------------------------------------------------------------------
# dask
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["lbs", "dqs"])
def test_dask_bake_equals_serial_bit_for_bit(client, cesium, serial, method):
    mesh, clip = cesium
    # back to back: the second bake's scattered mesh must not be dropped with the first's
    for _ in range(3):
        np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, method=method,
                                              scheduler=client), serial[method])


def test_dask_passes_deform_options(client, cesium):
    mesh, clip = cesium
    want = sk.bake(mesh, clip, fps=FPS, method="blend", blend=0.25)
    np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, method="blend", blend=0.25,
                                          scheduler=client), want)
    [got] = sk.bake_many([(mesh, clip)], fps=FPS, method="blend", blend=0.25, scheduler=client)
    np.testing.assert_array_equal(got, want)


def test_dask_streams_a_pc2_and_takes_an_address(tmp_path, client, cesium, serial):
    mesh, clip = cesium
    sk.bake(mesh, clip, fps=FPS, method="dqs", scheduler=client.scheduler.address,
            out=tmp_path / "walk.pc2", chunk=9)
    pc2 = read_pc2(tmp_path / "walk.pc2")
    np.testing.assert_array_equal(pc2["data"].reshape(serial["dqs"].shape), serial["dqs"])
    assert client.status == "running"  # only the client bake made for the address was closed


def test_cli_bakes_on_a_scheduler(tmp_path, client, capsys, serial):
    out = tmp_path / "walk.pc2"
    assert main(["bake", os.path.join(DATA, "CesiumMan.glb"), "--fps", "60", "--out", str(out),
                 "--scheduler", client.scheduler.address]) == 0
    np.testing.assert_array_equal(read_pc2(out)["data"].reshape(118, 3273, 3), serial["lbs"])
    assert main(["bake", os.path.join(DATA, "CesiumMan.glb"), "--scheduler", "nowhere",
                 "--out", str(tmp_path / "x.pc2")]) == 1
    assert "scheduler: 'nowhere' is not a scheduler address" in capsys.readouterr().err


def test_bake_many_different_rigs_as_tasks(client, cesium, serial):
    mesh, clip = cesium
    rig = sk.rigs.seed001()
    s = rig.skeleton
    keys = np.stack([s.local_bind, s.local_bind @ sk.transforms.axis_angle([0, 1.0, 0], 0.5)])
    twist = sk.Clip([0.0, 1.0], keys)
    jobs = [(mesh, clip), (rig, twist)]
    want = [serial["lbs"], sk.bake(rig, twist, fps=FPS)]
    for got in (sk.bake_many(jobs, fps=FPS, scheduler=client),
                sk.bake_many(jobs, fps=FPS, threads=2), sk.bake_many(jobs, fps=FPS)):
        assert len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------------------------------------
# Bad input: refused before any work, nothing written
# ---------------------------------------------------------------------------------------------
def test_bad_input_is_refused_before_anything_is_written(tmp_path, cesium):
    mesh, clip = cesium
    F, V, J = 118, mesh.n_vertices, mesh.skeleton.n_joints
    short = np.full((F - 1, V, 3), 7.0, np.float32)
    with pytest.raises(ValueError, match=r"out has shape .*117 frames, the bake has 118"):
        sk.bake(mesh, clip, fps=FPS, out=short)
    assert np.all(short == 7.0)
    pal = mesh.palette(clip.sample(clip.frame_times(10)))
    nan = pal.copy()
    nan[3, 2, 0, 1] = np.nan
    cases = [
        (dict(clip=nan), ValueError,
         r"clip \(a palette stack\): NaN or inf at frame 3, joint 2$"),
        (dict(clip=pal[:, :, :2]), ValueError,
         r"clip \(a palette stack\) must have shape"),
        (dict(clip=pal[:, :-1]), ValueError, "clip: the palette stack has 18 joints"),
        (dict(clip=sk.Clip([0.0, 1.0], np.stack([np.eye(4)[None]] * 2))), ValueError,
         "clip has 1 joints"),
        (dict(clip="walk"), TypeError, "clip must be a Clip"),
        (dict(mesh=mesh.positions), TypeError, "mesh must be a SkinnedMesh"),
        (dict(fps=0), ValueError, "fps"),
        (dict(method="bogus"), ValueError, "method"),
        (dict(threads=0), ValueError, "threads"),
        (dict(chunk=0), ValueError, "chunk"),
        (dict(chunk=2.5), TypeError, "chunk"),
        (dict(method="blend"), ValueError, "blend"),
        (dict(out_normals=np.zeros((118, V, 3), np.float32)), TypeError, "out_normals"),
        (dict(normal_rule="nonsense"), ValueError, "normal_rule"),
        (dict(out=tmp_path / "missing" / "walk.pc2"), FileNotFoundError, "out: the folder"),
        (dict(out=tmp_path / "walk.abc"), ValueError, "out: a path must end in .npy or .pc2"),
        (dict(out=3), TypeError, "out must be"),
        (dict(scheduler="threads"), ValueError, "scheduler"),
        (dict(scheduler=object()), TypeError, "scheduler"),
        # has .submit like a Client, but is none: refused with or without dask
        (dict(scheduler=ThreadPoolExecutor(1)), TypeError, "scheduler must be .* not ThreadPool"),
        (dict(scheduler="tcp://127.0.0.1:1", threads=2), ValueError, "threads"),
        (dict(mesh=sk.SkinnedMesh(mesh.positions, mesh.skeleton, mesh.influences),
              normals=True), ValueError, "normals"),
    ]
    os.mkdir(tmp_path / "folder.pc2")
    cases.append((dict(out=tmp_path / "folder.pc2"), IsADirectoryError, "out"))
    for change, exc, word in cases:
        args = dict(mesh=mesh, clip=clip, fps=FPS, out=tmp_path / "walk.pc2")
        args.update(change)
        with pytest.raises(exc, match=word):
            sk.bake(**args)
        assert os.listdir(tmp_path) == ["folder.pc2"], change
    np.testing.assert_array_equal(nan[~np.isnan(nan)], pal[~np.isnan(nan)])


def test_bake_many_names_the_bad_pair(cesium):
    mesh, clip = cesium
    with pytest.raises(TypeError, match=r"jobs\[1\]: clip must be"):
        sk.bake_many([(mesh, clip), (mesh, "walk")])
    with pytest.raises(ValueError, match=r"jobs\[0\] must be a \(mesh, clip\) pair"):
        sk.bake_many([(mesh,)])
    with pytest.raises(TypeError, match="jobs"):
        sk.bake_many(3)


def test_tangents_are_refused_not_computed_and_dropped(cesium):
    mesh, clip = cesium
    for kw in (dict(tangents=True), dict(out_tangents=np.zeros((118, 3273, 4), np.float32))):
        name = next(iter(kw))
        with pytest.raises(TypeError, match=f"^{name}: bake does not bake tangents"):
            sk.bake(mesh, clip, fps=FPS, **kw)
        with pytest.raises(TypeError, match=rf"jobs\[0\]: {name}: bake does not bake"):
            sk.bake_many([(mesh, clip)], fps=FPS, **kw)


def test_per_frame_morph_weights_follow_the_frames(cesium):
    mesh, clip = cesium
    rng = np.random.default_rng(0)
    deltas = rng.normal(0, 0.01, (2, mesh.n_vertices, 3)).astype(np.float32)
    mesh = sk.SkinnedMesh(mesh.positions, mesh.skeleton, mesh.influences, base=mesh.base,
                          bind_shape=mesh.bind_shape, morph_targets=deltas)
    pal = mesh.palette(clip.sample(clip.frame_times(10)))  # 20 frames
    w = rng.uniform(0, 1, (len(pal), 2))
    got = sk.bake(mesh, pal, morph_weights=w, threads=2, chunk=3)
    for i in (0, 4, len(pal) - 1):
        np.testing.assert_array_equal(got[i], mesh.deform(pal[i], morph_weights=w[i]))
    np.testing.assert_array_equal(sk.bake(mesh, pal, morph_weights=w, chunk=50), got)
    np.testing.assert_array_equal(sk.bake(mesh, pal, morph_weights=w[3]),  # (M,): every frame
                                  mesh.deform(pal, morph_weights=w[3]))
    with pytest.raises(ValueError, match=r"morph_weights has 19 rows, the bake has 20 frames"):
        sk.bake(mesh, pal, morph_weights=w[1:])


def test_bake_many_takes_bake_options(monkeypatch, cesium, serial):
    mesh, clip = cesium
    for kw in (dict(chunk=4), dict(progress=False), dict(chunk=5, threads=2, progress=None)):
        [got] = sk.bake_many([(mesh, clip)], fps=FPS, **kw)
        np.testing.assert_array_equal(got, serial["lbs"])
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=_FakeBar))
    _FakeBar.made.clear()
    sk.bake_many([(mesh, clip), (mesh, clip)], fps=FPS, progress=True, threads=2)
    [bar] = _FakeBar.made  # one bar over the pairs, none inside them
    assert (bar.total, bar.n, bar.closed) == (2, 2, True)
    with pytest.raises(ValueError, match=r"jobs\[0\]: chunk must be >= 1"):
        sk.bake_many([(mesh, clip)], chunk=0)
    with pytest.raises(TypeError, match=r"bake_many\(\) takes no out"):
        sk.bake_many([(mesh, clip)], out="walk.npy")


def test_no_dask_names_the_extra(monkeypatch, cesium):
    mesh, clip = cesium
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"skinkit\[dask\]"):
        sk.bake(mesh, clip, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ImportError, match=r"skinkit\[dask\]"):
        sk.bake_many([(mesh, clip)], scheduler="tcp://127.0.0.1:8786")
    # a string that is no address, or an object that is no Client or cluster, is wrong with or
    # without dask: said first
    with pytest.raises(ValueError, match="scheduler: 'threads' is not a scheduler address"):
        sk.bake(mesh, clip, scheduler="threads")
    with pytest.raises(TypeError, match="scheduler must be .* not object"):
        sk.bake(mesh, clip, scheduler=object())
    with ThreadPoolExecutor(1) as pool:  # has .submit, but no Client exists without dask
        with pytest.raises(TypeError, match="scheduler must be .* not ThreadPoolExecutor"):
            sk.bake(mesh, clip, scheduler=pool)


# ---------------------------------------------------------------------------------------------
# Interrupted bakes
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, MemoryError])
def test_an_interrupted_pc2_is_a_partial_file_counting_its_frames(tmp_path, monkeypatch, cesium,
                                                                  serial, threads, exc):
    mesh, clip = cesium
    real, t30 = bake_module._skin_chunk, clip.frame_times(FPS)[30]

    def flaky(mesh_, clip_, frames, *args, **kwargs):
        if frames[0] == t30:  # the fourth chunk of 10 frames, whichever thread takes it
            raise exc("stop")
        return real(mesh_, clip_, frames, *args, **kwargs)

    monkeypatch.setattr(bake_module, "_skin_chunk", flaky)
    path = tmp_path / "walk.pc2"
    with pytest.raises(exc):
        sk.bake(mesh, clip, fps=FPS, threads=threads, out=path, chunk=10)
    assert os.listdir(tmp_path) == ["walk.pc2.partial"]
    pc2 = read_pc2(tmp_path / "walk.pc2.partial")
    assert pc2["F"] == 30 and pc2["F"] * pc2["V"] * 3 <= pc2["data"].size
    np.testing.assert_array_equal(pc2["data"][:30 * pc2["V"] * 3].reshape(30, -1, 3),
                                  serial["lbs"][:30])
    monkeypatch.setattr(bake_module, "_skin_chunk", real)
    sk.bake(mesh, clip, fps=FPS, out=path)  # a new bake replaces the partial file's role
    assert read_pc2(path)["F"] == 118


def test_an_interrupted_npy_is_a_partial_file(tmp_path, monkeypatch, cesium):
    mesh, clip = cesium
    real = bake_module._skin_chunk

    def flaky(mesh_, clip_, frames, *args, **kwargs):
        if len(frames) > 1 and frames[0] > clip.start:
            raise KeyboardInterrupt
        return real(mesh_, clip_, frames, *args, **kwargs)

    monkeypatch.setattr(bake_module, "_skin_chunk", flaky)
    (tmp_path / "walk.npy").write_bytes(b"an older file")
    with pytest.raises(KeyboardInterrupt):
        sk.bake(mesh, clip, fps=FPS, out=tmp_path / "walk.npy", chunk=20, threads=2)
    assert sorted(os.listdir(tmp_path)) == ["walk.npy", "walk.npy.partial"]
    assert (tmp_path / "walk.npy").read_bytes() == b"an older file"  # not touched
    assert np.load(tmp_path / "walk.npy.partial", mmap_mode="r").shape == (118, 3273, 3)


@pytest.mark.parametrize("normals", [False, True])
def test_a_full_disk_fails_an_npy_bake_before_any_frame(tmp_path, monkeypatch, cesium, normals):
    """A memory map written into a full disk dies of SIGBUS: the space is reserved first."""
    mesh, clip = cesium

    def no_frames(*args):
        raise AssertionError("a frame was skinned before the space was reserved")

    def full(fd, offset, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bake_module, "_run_threads", no_frames)
    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    path = tmp_path / "walk.npy"
    need = (118 * 3273 * 12 + 128) * (2 if normals else 1)
    with pytest.raises(OSError, match=rf"out: cannot write '{path}': not enough disk space: "
                                      rf"the bake needs {need:,} bytes \({need / 1e6:.1f} MB: "
                                      r"118 frames x 3,273 vertices .*could not allocate it$") \
            as info:
        sk.bake(mesh, clip, fps=FPS, out=path, normals=normals)
    assert info.value.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == []
    # without posix_fallocate (macOS, Windows): the free space is compared with the size
    monkeypatch.delattr(os, "posix_fallocate", raising=False)
    monkeypatch.setattr(bake_module.shutil, "disk_usage",
                        lambda folder: types.SimpleNamespace(free=1_000_000))
    with pytest.raises(OSError, match=r"needs [\d,]+ bytes .* the disk has 1\.0 MB free"):
        sk.bake(mesh, clip, fps=FPS, out=path, normals=normals)
    assert os.listdir(tmp_path) == []


def test_a_file_system_without_fallocate_still_bakes(tmp_path, monkeypatch, cesium, serial):
    mesh, clip = cesium

    def unsupported(fd, offset, size):
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(os, "posix_fallocate", unsupported, raising=False)
    np.testing.assert_array_equal(sk.bake(mesh, clip, fps=FPS, out=tmp_path / "w.npy"),
                                  serial["lbs"])
    assert os.listdir(tmp_path) == ["w.npy"]


# ---------------------------------------------------------------------------------------------
# Progress bar
# ---------------------------------------------------------------------------------------------
class _FakeBar:
    made = []

    def __init__(self, total, **kwargs):
        self.total, self.n, self.closed = total, 0, False
        _FakeBar.made.append(self)

    def update(self, n):
        self.n += n

    def close(self):
        self.closed = True


def test_progress_bar_through_tqdm_auto(monkeypatch, cesium):
    mesh, clip = cesium
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=_FakeBar))
    _FakeBar.made.clear()
    sk.bake(mesh, clip, fps=FPS, threads=2, progress=True)
    [bar] = _FakeBar.made
    assert (bar.total, bar.n, bar.closed) == (118, 118, True)
    sk.bake(mesh, clip, fps=FPS, progress=False)
    sk.bake(mesh, clip, fps=FPS)  # stderr is not a terminal under pytest, and the bake is short
    assert len(_FakeBar.made) == 1
    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: True))
    sk.bake(mesh, clip, fps=FPS)  # a terminal, but 118 x 3273 vertex-frames is short
    assert len(_FakeBar.made) == 1
    monkeypatch.setattr(bake_module, "_LONG", 100_000)
    sk.bake(mesh, clip, fps=FPS)  # a terminal and a long bake: a bar
    assert len(_FakeBar.made) == 2 and _FakeBar.made[1].n == 118


def test_no_tqdm_no_bar(monkeypatch, cesium, serial):
    """Without tqdm there is no bar; asked for one (progress=True), the bake says why."""
    import warnings
    mesh, clip = cesium
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.warns(UserWarning, match="tqdm, which is not installed"):
        got = sk.bake(mesh, clip, fps=FPS, progress=True)
    np.testing.assert_array_equal(got, serial["lbs"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sk.bake(mesh, clip, fps=FPS, progress=None)  # not asked for: silent


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------
def test_cli_bakes_a_glb_to_pc2_and_npy(tmp_path, capsys, serial):
    glb = os.path.join(DATA, "CesiumMan.glb")
    out = tmp_path / "walk.pc2"
    assert main(["bake", glb, "--fps", "60", "--method", "dqs", "--threads", "2", "--out",
                 str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert f"wrote {out}: 118 frames x 3273 vertices" in text and "dqs" in text
    pc2 = read_pc2(out)
    np.testing.assert_array_equal(pc2["data"].reshape(118, 3273, 3), serial["dqs"])
    npy = tmp_path / "walk.npy"
    assert main(["bake", glb, "--clip", "animation0", "--fps", "60", "--out", str(npy),
                 "--normals"]) == 0
    np.testing.assert_array_equal(np.load(npy), serial["lbs"])
    assert os.path.exists(tmp_path / "walk.normals.npy")
    assert "walk.normals.npy" in capsys.readouterr().out


def test_cli_default_out_and_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    glb = os.path.join(DATA, "CesiumMan.glb")
    assert main(["bake", glb, "--no-progress"]) == 0
    assert read_pc2(tmp_path / "CesiumMan.pc2")["F"] == 59  # 30 fps by default
    assert main(["bake", glb, "--clip", "run"]) == 1
    assert "no animation 'run'; the file has: 0: animation0" in capsys.readouterr().err
    assert main(["bake", glb, "--method", "bogus", "--out", "x.pc2"]) == 1
    assert "method" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["CesiumMan.pc2"]


def test_no_frames_give_empty_results_and_files(tmp_path, cesium):
    mesh, _ = cesium
    none = np.zeros((0, mesh.skeleton.n_joints, 4, 4))
    assert sk.bake(mesh, none).shape == (0, 3273, 3)
    assert sk.bake(mesh, none, out=tmp_path / "e.npy").shape == (0, 3273, 3)
    assert np.load(tmp_path / "e.npy").shape == (0, 3273, 3)
    assert sk.bake(mesh, none, out=tmp_path / "e.pc2").shape == (0, 3273, 3)
    pc2 = read_pc2(tmp_path / "e.pc2")
    assert (pc2["F"], pc2["V"], pc2["bytes"]) == (0, 3273, 32)


def test_streaming_holds_a_few_chunks_not_the_clip(tmp_path, monkeypatch, cesium):
    """Two threads skin faster than a slow disk writes: they must wait, not pile up chunks."""
    import time
    import tracemalloc

    mesh, clip = cesium
    commit = bake_module._FileSink.commit

    def slow_disk(self, *args):
        time.sleep(0.02)  # a chunk of 4 frames takes about 8 ms to skin
        return commit(self, *args)

    monkeypatch.setattr(bake_module._FileSink, "commit", slow_disk)
    F = len(clip.frame_times(120))
    total = F * mesh.n_vertices * 3 * 4  # the file's data: 236 frames, 9.3 MB of float32
    chunk_bytes = 4 * mesh.n_vertices * 3 * 4
    tracemalloc.start()
    try:
        sk.bake(mesh, clip, fps=120, threads=2, out=tmp_path / "walk.pc2", chunk=4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read_pc2(tmp_path / "walk.pc2")["F"] == F == 236
    # at most two chunks per thread in flight (about 0.8 MB measured; 4.3 MB when unbounded)
    assert peak < 10 * chunk_bytes < total / 4, (peak, chunk_bytes, total)
