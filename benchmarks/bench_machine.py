"""How much of its core's vector units this CPU gives one thread: a context for bench_skin.

    python benchmarks/bench_machine.py            # needs a C compiler (cc) and an x86-64 CPU with AVX2

A skinning kernel with normals is memory-bound only where the core computes fast enough; on a
virtual machine whose vCPU shares its physical core with another tenant's thread, the vector
units are shared too, and the same kernel becomes compute-bound while NumPy's add (the
bandwidth probe of bench_skin.py) is not slowed at all.  This script measures, in one run:

  chain       one dependent chain of 256-bit FMAs: one FMA per FMA latency (the clock, in effect)
  independent 12 independent chains: as many FMAs as the core's pipes issue
  overlap     independent / chain = FMAs in flight per latency; a core to itself reaches its
              FMA pipes times the latency (2 x 4 = 8 on Zen 3 / Zen 4 / Skylake and later)
  two at once the independent chains on the first two CPUs at the same time, each held on its
              CPU: near the rate alone where the two have a core each, near half where they are
              one core's two hardware threads, which caps bench_skin's threads_2_over_1
  probe       bench_skin's probe at 1M vertices (NumPy adding two (V, 6) float32 arrays), made
              and timed by bench_skin's own functions

The overlap is independent of the clock.  Where it is far below 8, vector-heavy kernels run at
that fraction of their speed on this machine whatever their memory traffic, and bench_skin's
lbs_vs_probe compares a slowed kernel against an unslowed probe.
"""
import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import bench_skin  # beside this file: its probe and its timing

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


def fma_rates():
    """(chain FMAs/s, independent FMAs/s, pair), pair being (cpus, rates): the independent rates of
    two copies run at once on the first two CPUs, or a string saying why not; or a string saying
    why nothing could be measured."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"not an x86-64 CPU ({platform.machine()})"
    cc = shlex.split(os.environ.get("CC", "")) or [shutil.which("cc") or shutil.which("gcc")]
    if not cc[0]:
        return "no C compiler (set CC)"
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "fma.c"), os.path.join(d, "fma")
        with open(src, "w") as f:
            f.write(C_SOURCE)
        try:
            r = subprocess.run([*cc, "-O2", "-mavx2", "-mfma", src, "-o", exe],
                               capture_output=True, text=True)
        except OSError as e:
            return f"cannot run {cc[0]}: {e.strerror}"
        if r.returncode:
            return f"{cc[0]} failed: {r.stderr.strip()[:200]}"
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


def probe_ns(V=1_000_000, rounds=11):
    """bench_skin's probe, timed as bench_skin times it: median ns a vertex."""
    samples = bench_skin.measure({"probe": bench_skin.probe_call(V)}, rounds, 0.02)["probe"]
    return float(np.median(samples)) / V * 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
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
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
