#!/usr/bin/env bash
# budget: 1500
# (736 s on the 2-core Cascade Lake Xeon VM: compiling 439 s, the tests 296 s in two pytest-xdist
# workers; in one worker the lane had passed 1,010 s there, three quarters through the tests.
# 790 s on the Zen 3 VM with SKINKIT_SIMD_BUILD=native: compiling 428 s, the tests 361 s)
#
# Sanitizer lane: one AddressSanitizer + UndefinedBehaviorSanitizer build (asserts live, -O1) of
#   1. the extension module, installed into a private venv, and beside it in the same build tree
#      the C core's ctest test (tests/c: CMakeLists.txt adds it to sanitizer builds);
#   2. the C test under ctest, with leak checking;
#   3. skinkit's own fast Python tests with PYTHONMALLOC=malloc (so pymalloc does not hide heap
#      overflows) and the ASan runtime preloaded (CPython itself is not instrumented).
# Any sanitizer report aborts the run and fails the lane.
#
# Environment: PYTHON (default python3; needs numpy, pytest, hypothesis and scikit-build-core,
# else they are pip-installed into the lane's venv, as is pytest-xdist), SKINKIT_SANITIZE_WORKERS
# (pytest-xdist workers, default one per core), SKINKIT_SANITIZE_PYTEST_ARGS (extra pytest
# arguments, e.g. a -k filter).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
root=build/sanitize
mkdir -p "$root"
# One compiler for the build and the preloaded runtime.
export CC=${CC:-gcc}
asan_rt=$("$CC" -print-file-name=libasan.so)
if [ ! -e "$asan_rt" ]; then
    echo "lane-sanitize: $CC has no ASan runtime ($asan_rt)"
    exit 1
fi

# Release builds compile the core's asserts out: CMake's Release flags carry -DNDEBUG.
cmake -S . -B "$root/release-flags" -G Ninja -DSKINKIT_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=Release \
    >"$root/cmake-release.log"
if ! grep -q -- "-DNDEBUG" "$root/release-flags/build.ninja"; then
    echo "lane-sanitize: Release builds do not define NDEBUG"
    exit 1
fi

# --- 1. the extension in a private venv --------------------------------------------------------
# SKINKIT_SIMD_BUILD=native: the SIMD kernels of the ISAs this CPU runs, not those it cannot execute
# (on a machine without AVX-512, instrumenting those kernels was a third of the build, for code
# no test here reaches).
PYTHON=${PYTHON:-python3}
venv="$root/venv"
if [ ! -x "$venv/bin/python" ]; then
    "$PYTHON" -m venv "$venv"
fi
# Reuse the calling interpreter's packages by path only: a .pth line adds the directory without
# running the .pth files inside it, so an editable skinkit installed there cannot shadow this
# build.
base_site=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
lane_site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ "$base_site" != "$lane_site" ]; then
    echo "$base_site" >"$lane_site/zz_lane_base_site.pth"
fi
if ! "$venv/bin/python" -c 'import numpy, pytest, hypothesis, scikit_build_core' 2>/dev/null; then
    "$venv/bin/pip" install -q numpy pytest hypothesis scikit-build-core
fi
# pytest-xdist: the instrumented tests run in one worker per core (CI has 2)
if ! "$venv/bin/python" -c 'import xdist' 2>/dev/null; then
    "$venv/bin/pip" install -q pytest-xdist
fi
"$venv/bin/pip" install -q --no-deps --no-build-isolation --force-reinstall \
    -Cbuild-dir="$root/py" -Ccmake.build-type=Debug -Ccmake.define.SKINKIT_SANITIZE=ON \
    -Ccmake.define.CMAKE_C_FLAGS=-O1 -Ccmake.define.SKINKIT_SIMD_BUILD=native . >"$root/pip.log" 2>&1 || {
    tail -30 "$root/pip.log"
    exit 1
}
t_build=$((SECONDS - start))

# --- 2. the C core's test under ctest, from the same instrumented build of the core ----------------
cmake --build "$root/py" --target test_core >"$root/build-c.log"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir "$root/py" --output-on-failure --no-tests=error
t_c=$((SECONDS - start - t_build))

export PYTHONMALLOC=malloc
# libstdc++ is preloaded with the ASan runtime: loaded later (by a C++ extension such as
# matplotlib's), ASan's __cxa_throw interceptor finds no real function and aborts on the first
# C++ exception.
export LD_PRELOAD="$asan_rt $("$CC" -print-file-name=libstdc++.so)"
# CPython and NumPy are not instrumented and "leak" at exit by design: leak checking is for the
# C test above.  allocator_may_return_null lets tests that ask for absurd sizes get MemoryError.
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:allocator_may_return_null=1:detect_odr_violation=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export SKINKIT_HYPOTHESIS_MAX_EXAMPLES=${SKINKIT_HYPOTHESIS_MAX_EXAMPLES:-30}
# ASan's quarantine makes RSS grow by design: the leak test keeps its reference and tracemalloc
# meters here and fewer calls.
export SKINKIT_LEAK_RSS=0 SKINKIT_LEAK_CALLS=${SKINKIT_LEAK_CALLS:-500}
# The module under test must be this instrumented build, not another install.
core=$("$venv/bin/python" -c 'import skinkit._core as c; print(c.__file__)')
case "$core" in
    "$PWD/$venv"/*) ;;
    *) echo "lane-sanitize: skinkit._core comes from $core, not the lane's venv"; exit 1 ;;
esac
nm -D "$core" >"$root/core-symbols.txt"
if ! grep -q __asan_report "$root/core-symbols.txt"; then
    echo "lane-sanitize: $core is not instrumented with ASan"
    exit 1
fi

# skinkit's own fast tests: no notebooks, no Blender, nothing marked slow; one pytest-xdist worker
# a core.
workers=${SKINKIT_SANITIZE_WORKERS:-$(nproc 2>/dev/null || echo 2)}
pytest_args=(tests -q -p no:cacheprovider -m "not slow and not blender" -n "$workers")
for skip in tests/test_notebooks.py tests/blender; do
    if [ -e "$skip" ]; then pytest_args+=(--ignore="$skip"); fi
done
# shellcheck disable=SC2206
pytest_args+=(${SKINKIT_SANITIZE_PYTEST_ARGS:-})
rc=0
"$venv/bin/python" -m pytest "${pytest_args[@]}" || rc=$?
echo "lane-sanitize: build $t_build s, C test $t_c s, Python tests $((SECONDS - start - t_build - t_c)) s, wall $((SECONDS - start)) s (pytest exit $rc)"
exit "$rc"
