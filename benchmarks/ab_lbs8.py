#!/usr/bin/env python3
"""A/B of the AVX2 float32 LBS block loop in seconds: two copies of csrc/skin_simd.template.c
built as one kernel instance each and timed against each other in one process.

    cp csrc/skin_simd.template.c /tmp/variant.c     # then edit the copy
    python benchmarks/ab_lbs8.py /tmp/variant.c                 # K = 4 with normals, 100k and 1M
    python benchmarks/ab_lbs8.py /tmp/variant.c --k 8 --positions-only --sizes 10000
    python benchmarks/ab_lbs8.py /tmp/variant.c --callgrind     # instructions a vertex, each build
    python benchmarks/ab_lbs8.py /tmp/variant.c --by-window 30  # pairs split by the core's window

Building the extension compiles every kernel instance of both ISAs (about 7 minutes on a 2-core
VM); this builds one: the template cut before its AVX2 float32 LBS instances (the line that
starts `SIMD_INSTANCES_LBS_IN(lbs8_range`), one `lbs8_range` instance appended (K constant,
contiguous uint16 indices or --index's, float32 weights: the issue-7 workload's loop),
compiled with CMakeLists.txt's flags for skin_avx2.c, about 15 s a build.  The rest of the core
(the prepare step) is compiled once, portable, into the build folder.

Each round calls both builds on the same job in turn (bench_skin.py's data: J = 64, rigid joints
unless --scaled, unit normals), so the ratio of a round compares two samples taken a second
apart; the printed ratio is the median over the rounds of variant time / base time, with its
quartiles.  `same_bits` says whether both builds wrote the same bytes: a change meant to keep
the bits must print 1.  Calls of SK_STREAM_MIN vertices or more stream their stores, as the
module's do.  Needs gcc (or $CC) and a CPU with AVX2 and FMA; it is a tool for kernel work, not
a contender of bench_skin.py, and none of its figures stand for the shipped kernels.

--by-window SECONDS: on a machine whose core's other hardware thread runs on and off (a VM's
neighbour: see bench_machine.py's window), a round's pair may straddle a change of the core's
window and the ratios scatter.  This times pairs for SECONDS a size instead, each bracketed by
samples of window_probe.h (the process held on one CPU), on slices of SK_STREAM_MIN vertices or
more taken in turn, and prints the ratio apart for the pairs that ran with the window whole and
those that ran with it split.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "csrc"
DRIVER = Path(__file__).resolve().with_name("ab_lbs8_driver.c")
# CMakeLists.txt: sk_core's options, and skin_avx2.c's own
FLAGS = ["-O3", "-DNDEBUG", "-std=c11", "-fPIC", "-fno-math-errno", "-ffp-contract=off",
         "-Wno-psabi", "-w"]
AVX2_FLAGS = ["-mavx2", "-mfma", "-DSK_BUILD_AVX2"]
# sk_core's portable sources (CMakeLists.txt, without the SIMD files): the prepare step
CORE = ["skeleton", "skin_rigid", "skin_lbs", "skin_dqs", "skin_cor", "parallel", "cpu", "bind",
        "cor_centers"]
CUT = "SIMD_INSTANCES_LBS_IN(lbs8_range"


def compiler():
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        sys.exit("ab_lbs8: no C compiler (set CC)")
    return cc


def run(cmd, cpu=None):
    """cmd's output; cpu: hold it on that CPU (Linux)."""
    hold = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
    r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=hold)
    if r.returncode:
        sys.exit(f"ab_lbs8: {' '.join(map(str, cmd))} failed:\n{r.stderr[-4000:]}")
    return r.stdout


INDEX = {"uint8": (1, "SK_INDEX_U8"), "uint16": (2, "SK_INDEX_U16"),
         "int32": (4, "SK_INDEX_I32"), "int64": (8, "SK_INDEX_I64")}


def trimmed(template: Path, name: str, k: int, index: str = "uint16") -> str:
    """The template up to its AVX2 float32 LBS instances, and one instance exported as `name`."""
    text = template.read_text()
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith(CUT)), None)
    if at is None:
        sys.exit(f"ab_lbs8: {template} has no line starting {CUT!r} (the cut)")
    return "\n".join(lines[:at] + [
        "#endif /* __AVX512F__ (the cut) */",
        f"SIMD_INSTANCE(lbs8_range, sk_skin_job_f32, ab_k{k}, {INDEX[index][1]}, {k}, "
        "SK_WEIGHT_FLOAT)",
        f"void {name}(const sk_skin_job_f32 *job, int64_t begin, int64_t end)",
        f"{{ lbs8_range_ab_k{k}(job, begin, end); }}",
        "",
    ])


def build_kernel(cc, template: Path, name: str, k: int, index: str, out: Path) -> Path:
    src = out / f"{name}.c"
    # SK_ISA names the template's other exported functions apart for each build
    isa = f"#define SK_ISA(name, suffix) name##_{name}##suffix\n"
    src.write_text(isa + trimmed(template, name, k, index))
    obj = out / f"{name}.o"
    run([cc, *FLAGS, *AVX2_FLAGS, f"-I{CSRC}", "-c", str(src), "-o", str(obj)])
    return obj


def build_core(cc, out: Path) -> list[Path]:
    """The portable core's objects, rebuilt when a source or header changed."""
    digest = hashlib.sha256()
    for p in sorted(CSRC.glob("*")):
        digest.update(p.name.encode() + p.read_bytes())
    folder = out / f"core-{digest.hexdigest()[:12]}"
    objs = [folder / f"{n}.o" for n in CORE]
    if all(o.exists() for o in objs):
        return objs
    folder.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        list(pool.map(lambda n: run([cc, *FLAGS, f"-I{CSRC}", "-c", str(CSRC / f"{n}.c"),
                                     "-o", str(folder / f"{n}.o")]), CORE))
    return objs


def stream_min() -> int:
    m = re.search(r"#define SK_STREAM_MIN (\d+)", (CSRC / "sk.h").read_text())
    return int(m.group(1))


def parse(line: str) -> dict:
    f = line.split()
    return {f[i]: float(f[i + 1]) for i in range(0, len(f) - 1, 2)}


def callgrind_counts(exe, argv, V, out: Path) -> dict:
    """Instructions a vertex of each build (valgrind's callgrind; a repeatable count)."""
    if not shutil.which("valgrind"):
        return {"callgrind": "valgrind not found"}
    counts = {}
    for fn in ("ab_base", "ab_variant"):
        dump = out / f"callgrind.{fn}"
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={fn}",
                            f"--callgrind-out-file={dump}", str(exe), *argv],
                           capture_output=True, check=True, text=True)
        total = re.search(r"^summary:\s*(\d+)", dump.read_text(), re.M)
        calls = 1 + parse(r.stdout)["reps"]  # the bit check's call, then one round
        counts[f"{fn}_instructions_per_vertex"] = int(total.group(1)) / (calls * V)
    return counts


def window_lines(row: dict) -> str:
    """--by-window's figures of one size, as printed."""
    if not row.get("window_test_gap"):
        return "    window: no gap serialized the probe's misses (no window to tell)"
    lines = [f"    window {row['window_whole']:.0f} instructions, pairs bracketed by misses "
             f"{row['window_test_gap']:.0f} apart:"]
    for key in ("whole", "split"):
        n = int(row[f"{key}_pairs"])
        if n:
            lines.append(f"      {key:5s} {n:5d} pairs: base {row[f'{key}_base_ns']:.3f} "
                         f"ns/vertex, variant {row[f'{key}_variant_ns']:.3f}, variant / base "
                         f"{row[f'{key}_ratio']:.3f} (quartiles {row[f'{key}_ratio_q1']:.3f}-"
                         f"{row[f'{key}_ratio_q3']:.3f})")
        else:
            lines.append(f"      {key:5s}     0 pairs")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variant", type=Path, help="a copy of csrc/skin_simd.template.c, edited")
    ap.add_argument("--base", type=Path, default=CSRC / "skin_simd.template.c",
                    help="the build to compare with (default: the checkout's template)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--k", type=int, default=4, choices=range(1, 9), metavar="K",
                    help="influences a vertex, the instance's constant K (default 4)")
    ap.add_argument("--index", choices=INDEX, default="uint16",
                    help="the joints' type, contiguous rows (default uint16)")
    ap.add_argument("--positions-only", action="store_true")
    ap.add_argument("--scaled", action="store_true",
                    help="scaled joints: normals by the cofactors' blend (not the rigid loop)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--by-window", type=float, default=0, metavar="SECONDS",
                    help="time pairs for SECONDS a size, split by the core's reorder window")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count each build's instructions a vertex (valgrind)")
    ap.add_argument("--build-dir", type=Path,
                    default=Path(tempfile.gettempdir()) / "skinkit-ab-lbs8")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if not 1 <= args.rounds <= 101:
        ap.error("--rounds: 1 to 101")
    if any(v < 1 for v in args.sizes):
        ap.error("--sizes: at least 1 vertex")
    if args.by_window < 0:
        ap.error("--by-window: seconds, at least 0")

    cc = compiler()
    out = args.build_dir
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(2) as pool:
        base = pool.submit(build_kernel, cc, args.base, "ab_base", args.k, args.index, out)
        variant = pool.submit(build_kernel, cc, args.variant, "ab_variant", args.k, args.index,
                              out)
        core = build_core(cc, out)
        objs = [base.result(), variant.result(), *core]
    exe = out / "ab_lbs8"
    run([cc, "-O2", f"-I{CSRC}", str(DRIVER), *map(str, objs), "-lm", "-lpthread", "-o", str(exe)])

    case = (f"K = {args.k}, {'positions only' if args.positions_only else 'normals'}, "
            f"{'scaled' if args.scaled else 'rigid'} joints, {args.index} indices, "
            "float32 weights")
    print(f"ab_lbs8: {args.variant} against {args.base}; {case}; {args.rounds} rounds")
    results = []
    for V in args.sizes:
        stream = int(V >= stream_min())
        argv_ = [str(V), str(args.k), str(int(not args.positions_only)), str(int(args.scaled)),
                 str(stream), str(args.rounds), str(args.seed), str(INDEX[args.index][0])]
        window, cpu = [], None
        if args.by_window > 0:  # the driver held on one CPU: its window samples are that core's
            window = [str(args.by_window)]
            cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        row = {"V": V, "stream": stream, **parse(run([str(exe), *argv_, *window], cpu))}
        if args.callgrind:
            one_round = argv_[:5] + ["1", *argv_[6:]]
            row.update(callgrind_counts(exe, one_round, V, out))
        results.append(row)
        line = (f"  V = {V:>9,} stream {stream}: base {row['base_ns']:.3f} ns/vertex, variant "
                f"{row['variant_ns']:.3f}, variant / base {row['ratio']:.3f} "
                f"(quartiles {row['ratio_q1']:.3f}-{row['ratio_q3']:.3f}), "
                f"same bits: {'yes' if row['same_bits'] else 'NO'}")
        if "ab_base_instructions_per_vertex" in row:
            line += (f"; instructions a vertex {row['ab_base_instructions_per_vertex']:.1f} / "
                     f"{row['ab_variant_instructions_per_vertex']:.1f}")
        print(line, flush=True)
        if args.by_window > 0:
            print(window_lines(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"case": case, "results": results}, indent=1))
    return results


if __name__ == "__main__":
    main()
