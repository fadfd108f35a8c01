#!/usr/bin/env bash
# budget: 780
# (the build, then up to 3 rounds of 3 targets x 60 s until 10^6 executions: at most 540 s)
#
# Fuzz lane: libFuzzer targets (tests/fuzz/fuzz_*.c) over the C core's entry points, built with
# clang -fsanitize=fuzzer,address,undefined with asserts live, each run time-boxed.  Passes when
# every target finishes without a finding and all targets together executed at least
# SKINKIT_FUZZ_MIN_EXECS inputs (10^6 by default); prints the execution count of each target.
#
# Environment: SKINKIT_FUZZ_SECONDS (per target and round, default 60), SKINKIT_FUZZ_MIN_EXECS,
# CLANG (default clang; installed from Debian when missing and the lane runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

CLANG=${CLANG:-clang}
if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "lane-fuzz: $CLANG not found; installing clang from Debian"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
    CLANG=clang
fi

out=build/fuzz
mkdir -p "$out"
# The core through its own CMake target (so per-file flags, e.g. for SIMD sources, are CMake's),
# instrumented for the fuzzer and the sanitizers; Debug keeps the asserts live.  -O0: with the
# sanitizers, clang needs minutes at -O1 for the SIMD kernels (skin_avx512.c: 404 s against 74 s).
# SKINKIT_SIMD_BUILD=native: only the SIMD kernels this CPU runs (the others cannot be fuzzed here).
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$out/core" -G Ninja -DCMAKE_C_COMPILER="$CLANG" -DSKINKIT_BUILD_PYTHON=OFF \
    -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Debug -DSKINKIT_SIMD_BUILD=native \
    -DCMAKE_C_FLAGS="-O0 -g -fsanitize=fuzzer-no-link $sanitize" >"$out/cmake.log"
cmake --build "$out/core" --target sk_core >"$out/build.log" || { tail -30 "$out/build.log"; exit 1; }
core_lib=$(find "$out/core" -name 'libsk_core.a' | head -1)

flags=(-g -O1 -fsanitize=fuzzer $sanitize -pthread -Wall -Wextra -Wno-unused-parameter
       -Wno-unused-function -Icsrc)
targets=()
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    "$CLANG" "${flags[@]}" "$src" "$core_lib" -lm -o "$out/$name"
    targets+=("$name")
done
echo "lane-fuzz: built ${targets[*]} with $("$CLANG" --version | head -1) in $((SECONDS - start)) s"

seconds=${SKINKIT_FUZZ_SECONDS:-60}
min_execs=${SKINKIT_FUZZ_MIN_EXECS:-1000000}
total=0
status=0
declare -A per_target
round=0
# Rounds of `seconds` per target until the total reaches min_execs (at most 3 rounds), so a slow
# machine still reaches the count without an unbounded run.
while [ "$total" -lt "$min_execs" ] && [ "$round" -lt 3 ]; do
    round=$((round + 1))
    for name in "${targets[@]}"; do
        corpus="$out/corpus/$name"
        mkdir -p "$corpus" "$out/artifacts"
        log="$out/$name.round$round.log"
        rc=0
        # -max_len caps the decoded sizes' inputs; -len_control=0 tries inputs of that length
        # from the start (growing them slowly, libFuzzer seldom drew 16 vertices or more in a
        # minute: the kernels' whole blocks went unfuzzed); -timeout flags a hang; rss limit a
        # runaway.
        "$out/$name" "$corpus" -max_total_time="$seconds" -max_len=4096 -len_control=0 -timeout=10 \
            -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$out/artifacts/$name-" >"$log" 2>&1 || rc=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        execs=${execs:-0}
        per_target[$name]=$(( ${per_target[$name]:-0} + execs ))
        total=$((total + execs))
        if [ "$rc" -ne 0 ]; then
            echo "lane-fuzz: FINDING in $name (exit $rc); log $log:"
            grep -E "ERROR|SUMMARY|fuzz check failed|runtime error|Test unit written" "$log" | head -20 || true
            status=1
        fi
    done
    [ "$status" -eq 0 ] || break
done

for name in "${targets[@]}"; do
    echo "lane-fuzz: $name executed ${per_target[$name]:-0} inputs"
done
echo "lane-fuzz: total $total executions (minimum $min_execs), rounds $round, findings: $([ $status -eq 0 ] && echo 0 || echo '>= 1')"
echo "lane-fuzz: wall time $((SECONDS - start)) s"
if [ "$status" -ne 0 ]; then exit 1; fi
if [ "$total" -lt "$min_execs" ]; then
    echo "lane-fuzz: FAIL: fewer than $min_execs executions"
    exit 1
fi
