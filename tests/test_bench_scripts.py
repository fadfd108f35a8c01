"""`benchmarks/bench_skin.py` runs end to end on a small mesh and its own checks hold, and
`benchmarks/ab_lbs8.py` (the kernel A/B tool) builds the template and tells same bits from others.

No timing is asserted (speed lives in benchmarks/): this keeps the script the issue's figures come
from working as the API moves, including its thread-pinned contenders.
"""
import importlib.util
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import skinkit as sk

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_skin_runs_and_its_checks_hold(tmp_path, capsys):
    bench = _load("bench_skin")
    V, out = 16384, tmp_path / "run.json"
    bench.main(["--sizes", str(V), "--rounds", "2", "--min-sample", "0.001", "--frames", "2",
                "--no-torch", "--no-libigl", "--json", str(out)])
    run = json.loads(out.read_text())
    names = {row["name"] for row in run["results"]}
    assert {"probe (V,6) f32 add", "lbs f32 normals", "lbs f32 normals 2 threads",
            "lbs f64 normals", "dqs f32 normals", "numpy f32 normals"} <= names
    assert all(row["ns_per_vertex"] > 0 for row in run["results"])
    ratios = run["ratios"][str(V)]
    for key in ("lbs_vs_probe", "lbs_vs_numpy", "dqs_over_lbs", "threads_2_over_1",
                "f64_over_f32", "raw_over_influences", "batch_over_frames"):
        assert np.isfinite(ratios[key]) and ratios[key] > 0, key
    if len(bench.pinnable_cpus()) == 2:  # Linux with two CPUs: the pinned contenders ran
        assert "lbs f32 normals 2 pinned halves at once" in names
        for key in ("threads_2_vs_pinned_cpus", "two_at_once_over_1", "threads_2_vs_two_at_once"):
            assert np.isfinite(ratios[key]) and ratios[key] > 0, key
    checks = run["checks"][str(V)]
    assert checks["bit_identical_threads_1_2_3"] is True
    # the frame's joint table (about 12 KB), nothing proportional to V (a (V,) float32
    # temporary alone would be 64 KB; the outputs, 393 KB, are preallocated)
    assert checks["peak_bytes_lbs_call"] < 32 * 1024
    assert checks["peak_bytes_lbs_raw_call"] < 32 * 1024
    printed = capsys.readouterr().out
    assert "targets (issue 7)" in printed and "not measured in this run" in printed


@pytest.mark.skipif(shutil.which(os.environ.get("CC") or "gcc") is None,
                    reason="benchmarks/ab_lbs8.py compiles C: no gcc (or $CC)")
@pytest.mark.skipif("avx2" not in sk._core.simd_paths(), reason="ab_lbs8 runs AVX2 kernels")
def test_ab_lbs8_builds_the_template_and_tells_its_bits(tmp_path, capsys):
    """The A/B tool cuts csrc/skin_simd.template.c at its AVX2 float32 LBS instances, builds one
    instance twice and times the two: the template against itself gives the same bits, a copy
    whose blend rounds otherwise (its first weight a hair off) does not, and a template without
    the cut is refused by name."""
    ab = _load("ab_lbs8")
    template = ab.CSRC / "skin_simd.template.c"
    text = template.read_text()
    first_product = "m0 = _mm256_mul_ps(wv, _mm256_loadu_ps(pj));"
    assert text.count(first_product) == 1  # the AVX2 blend's first slot
    off = tmp_path / "off.c"
    off.write_text(text.replace(first_product, "m0 = _mm256_mul_ps(_mm256_mul_ps(wv, "
                                "_mm256_set1_ps(1.0f + 0x1p-20f)), _mm256_loadu_ps(pj));"))
    # K = 1: the smallest instance (10 s a build, 17 for K = 4); the first product is any K's
    build = ["--k", "1", "--sizes", "1003", "--rounds", "1",
             "--build-dir", str(tmp_path / "build")]
    same = ab.main([str(template), *build, "--by-window", "0.3"])
    other = ab.main([str(off), *build])
    assert same[0]["same_bits"] == 1 and other[0]["same_bits"] == 0
    # --by-window: the window probe's keys, and pairs of each state where the probe found one
    row = same[0]
    assert row["window_test_gap"] < row["window_whole"] or row["window_test_gap"] == 0
    if row["window_test_gap"]:
        for key in ("whole", "split"):
            assert row[f"{key}_pairs"] >= 0
            assert (f"{key}_ratio" in row) == (row[f"{key}_pairs"] > 0)
        assert row["whole_pairs"] + row["split_pairs"] > 0
    assert "window" in ab.window_lines(row)
    for row in same + other:
        assert row["base_ns"] > 0 and row["variant_ns"] > 0 and row["ratio"] > 0
    printed = capsys.readouterr().out
    assert "same bits: yes" in printed and "same bits: NO" in printed
    no_cut = tmp_path / "no_cut.c"
    no_cut.write_text(text.replace(ab.CUT, "SIMD_RENAMED("))
    with pytest.raises(SystemExit, match="the cut"):
        ab.trimmed(no_cut, "ab_variant", 4)


@pytest.mark.skipif(shutil.which(os.environ.get("CC") or "cc") is None,
                    reason="benchmarks/bench_machine.py compiles C: no cc (or $CC)")
@pytest.mark.skipif("avx2" not in sk._core.simd_paths(), reason="bench_machine needs x86-64 AVX2")
def test_bench_machine_runs_and_tells_the_window(tmp_path, monkeypatch, capsys):
    """The machine context: FMA rates, the probe, the reorder window's samples and the 1M
    calls bracketed by them, in the JSON and printed (its figures are the machine's, not
    asserted)."""
    monkeypatch.syspath_prepend(str(BENCH))  # bench_machine imports bench_skin beside it
    bm = _load("bench_machine")
    out = tmp_path / "machine.json"
    assert bm.main(["--window-seconds", "0.3", "--calls-seconds", "0.5", "--json", str(out)]) == 0
    run = json.loads(out.read_text())
    assert run["fma_overlap"] > 0 and run["probe_ns_per_vertex_1M"] > 0
    assert run["window_samples"] == len(run["window_gaps"]) > 0
    tried = run["window_gaps_tried"]
    assert tried == sorted(tried) and tried[0] > 0
    assert all(g is None or g in tried for g in run["window_gaps"])
    printed = capsys.readouterr().out
    if "window_skipped" in run:  # no gap up to the largest serialized two misses
        assert "window" in printed and run["window_skipped"] in printed
        return
    assert run["window_whole"] in tried and run["window_test_gap"] < run["window_whole"]
    assert 0 < run["window_whole_share"] <= 1 and 0 <= run["window_split_share"] <= 1
    assert run["window_whole_share"] + run["window_split_share"] <= 1
    calls = 0
    for key in ("whole", "split"):
        for name in ("lbs", "probe"):
            n = run[f"{name}_calls_window_{key}"]
            calls += n
            assert (f"{name}_ns_window_{key}" in run) == (n > 0)
        assert f"1M by window {key}" in printed
    assert calls > 0  # some calls had the same window state on both sides


def test_bench_machine_sliced_calls_stream_like_a_million(monkeypatch):
    """The 1M calls by slices: each slice at least the streaming threshold (so its stores are
    non-temporal, as a 1M call's are), together the mesh but less than a slice, and the LBS
    slices write the bits one call on the whole mesh writes."""
    monkeypatch.syspath_prepend(str(BENCH))
    bm = _load("bench_machine")
    V = 300_000
    calls, m = bm._sliced_calls(V)
    size, lbs = calls["lbs"]
    assert calls["probe"][0] == size and len(calls["probe"][1]) == len(lbs)
    assert size >= sk._core.build_info()["stream_min_float32"]
    assert 0 <= V - size * len(lbs) < size
    for f in lbs:
        f()
    n = size * len(lbs)
    p, nrm = sk.lbs(m.P, m.infl, m.pal, normals=m.N)
    np.testing.assert_array_equal(m.out[:n], p[:n])
    np.testing.assert_array_equal(m.out_n[:n], nrm[:n])
