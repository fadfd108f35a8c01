"""How much of its core's vector units this CPU gives one thread: a context for bench_skin.

    python benchmarks/bench_machine.py            # needs a C compiler (cc) and an x86-64 CPU with AVX2

A skinning kernel with normals is memory-bound only where the core computes fast enough.  On
a virtual machine the vCPU's physical core often has a second hardware thread that runs another
tenant's vCPU: while it runs, the core splits its reorder window and queues between the two
threads, and a kernel that keeps hundreds of instructions in flight (skinkit's LBS) takes
1.5x its time or more, while NumPy's add (the bandwidth probe of bench_skin.py) slows much
less and a chain of FMAs not at all.  This script measures, in one run:

  chain       one dependent chain of 256-bit FMAs: one FMA per FMA latency (the clock, in effect)
  independent 12 independent chains: as many FMAs as the core's pipes issue
  overlap     independent / chain = FMAs in flight per latency; a core to itself reaches its
              FMA pipes times the latency (2 x 4 = 8 on Zen 3 / Zen 4 / Skylake and later)
  two at once the independent chains on the first two CPUs at the same time, each held on its
              CPU: near the rate alone where the two have a core each, near half where they are
              one core's two hardware threads, which caps bench_skin's threads_2_over_1
  probe       bench_skin's probe at 1M vertices (NumPy adding two (V, 6) float32 arrays), made
              and timed by bench_skin's own functions
  window      the core's reorder window (window_probe.h): two chains of cache-missing loads,
              each load followed by a gap of nops; the misses overlap only while a gap fits in
              the window, so the smallest gap that serializes them is the window (256 on
              Zen 3).  Sampled for a
              few seconds: a core whose other hardware thread runs (another tenant's vCPU, on a
              virtual machine) splits its window in two for as long as that thread runs, which
              the FMA figures above do not show
  1M by window  bench_skin's float32 LBS call (1M vertices, K = 4, normals) and its probe, as
              calls on slices of the 1M arrays (see _sliced_calls) bracketed by window samples,
              split by whether the window was whole or split on both sides of the call: what
              the other hardware thread costs LBS and the probe, and lbs / probe in each state

The FMA figures are independent of the clock; where the overlap is far below 8, vector-heavy
kernels run at that fraction of their speed whatever their memory traffic.  The window figures
tell the rest: bench_skin's lbs_vs_probe moves with the share of the time the window is split.
"""
import argparse
import contextlib
import ctypes
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import bench_skin  # beside this file: its probe and its timing
import skinkit as sk
from skinkit import _core

C_SOURCE = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
#define KEEP(x) __asm__ volatile("" : "+x"(x))
int main(int argc, char **argv)
{
    long n = 20000000; /* FMAs per chain and sample */
    const __m256 b = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-4f);
    __m256 x = c, a0 = c, a1 = c, a2 = c, a3 = c, a4 = c, a5 = c, a6 = c, a7 = c, a8 = c, a9 = c,
           a10 = c, a11 = c; /* twelve registers: no array, which a compiler may keep in memory */
    double best_chain = 0, best_indep = 0;
    for (int r = 0; r < 7; ++r) {
        double t = now();
        for (long i = 0; i < n; ++i) { x = _mm256_fmadd_ps(x, b, c); KEEP(x); }
        t = now() - t;
        if (n / t > best_chain) best_chain = n / t;
        t = now();
        for (long i = 0; i < n; ++i) {
#define STEP(v) v = _mm256_fmadd_ps(v, b, c); KEEP(v)
            STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5);
            STEP(a6); STEP(a7); STEP(a8); STEP(a9); STEP(a10); STEP(a11);
        }
        t = now() - t;
        if (12.0 * n / t > best_indep) best_indep = 12.0 * n / t;
    }
    float s = x[0] + a0[0] + a1[0] + a2[0] + a3[0] + a4[0] + a5[0] + a6[0] + a7[0] + a8[0] +
              a9[0] + a10[0] + a11[0];
    printf("%.6g %.6g %g\n", best_chain, best_indep, (double)s);
    return 0;
}
"""

# The reorder-window probe (window_probe.h, beside this file), built into a library for ctypes so
# that window samples can bracket a skinkit call in this process.
WINDOW_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "window_probe.h")


def _compiler():
    """The C compiler command, or a string saying why there is none to use."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"not an x86-64 CPU ({platform.machine()})"
    cc = shlex.split(os.environ.get("CC", "")) or [shutil.which("cc") or shutil.which("gcc")]
    if not cc[0]:
        return "no C compiler (set CC)"
    return cc


def _compile(cc, source, path, flags):
    """Compiles source to path; None, or a string saying why not."""
    with open(path + ".c", "w") as f:
        f.write(source)
    try:
        r = subprocess.run([*cc, "-O2", *flags, path + ".c", "-o", path],
                           capture_output=True, text=True)
    except OSError as e:
        return f"cannot run {cc[0]}: {e.strerror}"
    return f"{cc[0]} failed: {r.stderr.strip()[:200]}" if r.returncode else None


def fma_rates():
    """(chain FMAs/s, independent FMAs/s, pair), pair being (cpus, rates): the independent rates of
    two copies run at once on the first two CPUs, or a string saying why not; or a string saying
    why nothing could be measured."""
    cc = _compiler()
    if isinstance(cc, str):
        return cc
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "fma")
        failed = _compile(cc, C_SOURCE, exe, ["-mavx2", "-mfma"])
        if failed:
            return failed
        r = subprocess.run([exe], capture_output=True, text=True)
        if r.returncode:
            return "this CPU cannot run AVX2 + FMA"
        chain, indep, _ = (float(v) for v in r.stdout.split())
        return chain, indep, _pair_rates(exe)


def _pair_rates(exe):
    """The CPUs and the independent FMA rates of two copies of `exe` held on bench_skin's two
    pinnable CPUs at once (each the best of its seven rounds, which run side by side): each near
    its rate alone where the two CPUs have a core each, near half where they are two hardware
    threads of one core (a virtual machine's vCPUs can be either, and change)."""
    cpus = bench_skin.pinnable_cpus()
    if len(cpus) < 2:
        return "no two CPUs to hold the copies on (CPU affinity is Linux's)"
    procs = [subprocess.Popen([exe], stdout=subprocess.PIPE, text=True,
                              preexec_fn=lambda c=c: os.sched_setaffinity(0, {c}))
             for c in cpus]
    rates = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            return "a copy failed"
        rates.append(float(out.split()[1]))
    return cpus, tuple(rates)


class Window:
    """window_probe.h, built into `folder` and loaded; its ring takes 128 MB."""

    def __init__(self, cc, folder):
        path = os.path.join(folder, "window.so")
        failed = _compile(cc, f'#include "{WINDOW_HEADER}"\n', path, ["-shared", "-fPIC"])
        if failed:
            raise RuntimeError(failed)
        lib = self.lib = ctypes.CDLL(path)
        for name, args, res in (("window_setup", [ctypes.c_long], ctypes.c_int),
                                ("window_gap", [ctypes.c_int], ctypes.c_int),
                                ("window_gap_now", [ctypes.c_long], ctypes.c_int),
                                ("window_whole", [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
                                 ctypes.c_int),
                                ("window_test_gap", [ctypes.c_int], ctypes.c_int),
                                ("window_split", [ctypes.c_int, ctypes.c_long], ctypes.c_int)):
            getattr(lib, name).argtypes, getattr(lib, name).restype = args, res
        self.gaps = []
        while lib.window_gap(len(self.gaps)):
            self.gaps.append(lib.window_gap(len(self.gaps)))
        if lib.window_setup(1 << 24):
            raise MemoryError("the window probe's ring (128 MB)")

    def gap(self, iters=1000):
        """The smallest gap that serializes the misses now, or None where none does."""
        return self.lib.window_gap_now(iters) or None

    def whole(self, gaps):
        """The whole window from samples of gap() (window_probe.h), or None."""
        a = (ctypes.c_int * len(gaps))(*(g or 0 for g in gaps))
        return self.lib.window_whole(a, len(gaps)) or None

    def split(self, test, iters=1500):
        """True where misses `test` instructions apart are serialized now, False where they
        overlap, None in between (the state changed during the sample)."""
        return {1: True, 0: False}.get(self.lib.window_split(test, iters))


@contextlib.contextmanager
def _held():
    """The calling thread held on one CPU (Linux), so that the window samples and the calls they
    bracket run on the same core."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(old)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, old)


def window_figures(seconds=3.0, calls_seconds=20.0):
    """The window's samples for `seconds`, then LBS and probe calls timed between samples for
    `calls_seconds` (the docstring's `window` and `1M by window`), as a dict, or a string saying
    why not."""
    cc = _compiler()
    if isinstance(cc, str):
        return cc
    with tempfile.TemporaryDirectory() as d, _held():
        try:
            w = Window(cc, d)
        except (RuntimeError, OSError, MemoryError) as e:
            return f"the window probe: {e}"
        try:
            return _window_figures(w, seconds, calls_seconds)
        finally:
            w.lib.window_free()


def _window_figures(w, seconds, calls_seconds):
    """window_figures' measurements, by the probe w."""
    gaps = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        gaps.append(w.gap())
    out = {"window_gaps_tried": w.gaps, "window_samples": len(gaps), "window_gaps": gaps}
    whole = w.whole(gaps)
    if whole is None:
        return {**out, "window_skipped": f"no gap up to {w.gaps[-1]} serialized the misses"}
    test = w.lib.window_test_gap(whole)
    near = sum(g is not None and abs(g - whole) <= 16 for g in gaps)
    split = sum(g is not None and g <= 0.6 * whole for g in gaps)
    out.update(window_whole=whole, window_whole_share=near / len(gaps),
               window_test_gap=test, window_split_share=split / len(gaps))
    calls, _ = _sliced_calls()
    times = {(name, state): [] for name in calls for state in (False, True)}
    end = time.perf_counter() + calls_seconds
    turn = 0
    while time.perf_counter() < end:
        for name, (size, fns) in calls.items():
            before = w.split(test)
            t = time.perf_counter()
            fns[turn % len(fns)]()
            t = time.perf_counter() - t
            if before is not None and w.split(test) == before:
                times[name, before].append(t / size * 1e9)
        turn += 1
    for key, state in (("whole", False), ("split", True)):
        for name in calls:
            ts = times[name, state]
            out[f"{name}_calls_window_{key}"] = len(ts)
            if ts:
                out[f"{name}_ns_window_{key}"] = float(np.median(ts))
                out[f"{name}_ns_window_{key}_quartiles"] = [float(np.percentile(ts, 25)),
                                                             float(np.percentile(ts, 75))]
        if times["lbs", state] and times["probe", state]:
            out[f"lbs_vs_probe_window_{key}"] = (out[f"probe_ns_window_{key}"] /
                                                 out[f"lbs_ns_window_{key}"])
    return out


def _sliced_calls(V=1_000_000):
    """bench_skin's 1M-vertex float32 LBS call (K = 4, normals, an Influences object) and its
    probe, each as calls on consecutive slices of at least SK_STREAM_MIN vertices (so that they
    stream their stores as a call of 1M does), taken in turn so that a slice's arrays have left
    the caches by its next turn: calls of a millisecond or two, which window samples can bracket
    (a whole window seldom lasts through a call of 1M).  ({name: (slice size, calls)}, the mesh
    whose outputs the LBS calls write)."""
    size = max(_core.build_info()["stream_min_float32"], 1)
    n = max(V // size, 1)
    size = V // n
    m = bench_skin.Mesh(V, 4, np.float32)
    a, b, c = bench_skin.probe_arrays(V)
    lbs, probe = [], []
    for i in range(n):
        s = slice(i * size, (i + 1) * size)
        infl = sk.Influences(m.idx[s], m.w[s], len(m.pal))
        lbs.append(lambda s=s, infl=infl: sk.lbs(m.P[s], infl, m.pal, normals=m.N[s],
                                                  out=m.out[s], out_normals=m.out_n[s],
                                                  threads=1))
        probe.append(lambda s=s: np.add(a[s], b[s], out=c[s]))
    return {"lbs": (size, lbs), "probe": (size, probe)}, m


def probe_ns(V=1_000_000, rounds=11):
    """bench_skin's probe, timed as bench_skin times it: median ns a vertex."""
    samples = bench_skin.measure({"probe": bench_skin.probe_call(V)}, rounds, 0.02)["probe"]
    return float(np.median(samples)) / V * 1e9


def print_window(w):
    n = w["window_samples"]
    if "window_skipped" in w:
        print(f"window               {n} samples: {w['window_skipped']}")
        return
    print(f"window               {w['window_whole']} instructions (two cache misses that far apart "
          f"are serialized) in {100 * w['window_whole_share']:.0f}% of {n} samples; split, "
          f"{0.6 * w['window_whole']:.0f} or less, in {100 * w['window_split_share']:.0f}%: "
          "the core's other hardware thread running (another tenant, on a VM)")
    for key in ("whole", "split"):
        lbs, probe = w.get(f"lbs_ns_window_{key}"), w.get(f"probe_ns_window_{key}")
        calls = (w[f"lbs_calls_window_{key}"], w[f"probe_calls_window_{key}"])
        text = (f"lbs {lbs:.2f} ns/vertex, probe {probe:.2f}: lbs / probe throughput "
                f"{probe / lbs:.3f}" if lbs and probe else "too few calls to tell")
        print(f"1M by window {key:5s}  {text} ({calls[0]} / {calls[1]} calls of a slice, the "
              f"window {key} before and after each)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument("--window-seconds", type=float, default=3.0,
                    help="how long to sample the reorder window (default 3)")
    ap.add_argument("--calls-seconds", type=float, default=30.0,
                    help="how long to time LBS and probe calls between window samples "
                         "(default 30)")
    args = ap.parse_args(argv)
    out = {"processor": bench_skin._cpu_name(), "cpus": os.cpu_count()}
    rates = fma_rates()
    if isinstance(rates, str):
        print(f"FMA rates skipped: {rates}")
        out["fma_skipped"] = rates
    else:
        chain, indep, pair = rates
        out.update(fma_chain_per_s=chain, fma_independent_per_s=indep, fma_overlap=indep / chain)
        print(f"one FMA chain        {chain / 1e9:6.2f} G FMA/s  (one per FMA latency)")
        print(f"12 independent       {indep / 1e9:6.2f} G FMA/s")
        print(f"overlap              {indep / chain:6.2f} FMAs in flight per latency "
              "(a core to itself: 8 on Zen 3 / Zen 4 / Skylake and later)")
        if isinstance(pair, str):
            print(f"two at once skipped: {pair}")
            out["fma_pair_skipped"] = pair
        else:
            cpus, pair = pair
            share = min(pair) / indep
            out.update(fma_pair_cpus=cpus, fma_pair_independent_per_s=list(pair),
                       fma_pair_share=share)
            print(f"two at once          {pair[0] / 1e9:6.2f} / {pair[1] / 1e9:.2f} G FMA/s "
                  f"(12 independent on CPUs {cpus[0]} and {cpus[1]} together: the slower "
                  f"{share:.2f} of one alone; about 1 where each CPU has a core, 0.5 where they "
                  "share one)")
    out["probe_ns_per_vertex_1M"] = probe_ns()
    print(f"probe at 1M vertices {out['probe_ns_per_vertex_1M']:6.2f} ns/vertex "
          "(bench_skin's bandwidth probe)")
    window = window_figures(args.window_seconds, args.calls_seconds)
    if isinstance(window, str):
        print(f"window skipped: {window}")
        out["window_skipped"] = window
    else:
        out.update(window)
        print_window(window)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
