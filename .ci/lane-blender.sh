#!/usr/bin/env bash
# budget: 900
#
# Blender lane: skinkit against Blender's Armature modifier (LBS = Preserve Volume off, DQS = on)
# and "With Envelope Weights" binding, on rigs built in bpy (twisted cylinder, bent arm, scaled
# bones, envelope rig) and on CesiumMan through Blender's own glTF importer.  Tests:
# tests/blender/ (not collected by the main suite).
#
# Its own virtual environment with the PyPI bpy module, pinned: bpy 5.0.1 is the newest release
# for CPython 3.11 (5.1+ needs 3.13) and brings numpy 1.26, so this lane also checks that the
# wheel built against NumPy 2 headers runs on NumPy 1.x.  SKINKIT_REQUIRE_BLENDER=1 makes a
# missing bpy an error, and any skipped test fails the lane.
#
# Environment: SKINKIT_BLENDER_PYTHON (a Python 3.11, default python3.11), SKINKIT_BLENDER_VENV
# (default $TMPDIR/skinkit-lane-blender-bpy<version>; reused between runs so the 374 MB bpy wheel
# is fetched once; delete it to start clean), SKINKIT_LANE_SKINKIT (set by .ci/run: the
# installed skinkit/ package directory of a build of this checkout, used instead of a build).
set -euo pipefail
cd "$(dirname "$0")/.."

BPY_VERSION=5.0.1
PY=${SKINKIT_BLENDER_PYTHON:-python3.11}
VENV=${SKINKIT_BLENDER_VENV:-${TMPDIR:-/tmp}/skinkit-lane-blender-bpy$BPY_VERSION}

if ! "$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
    echo "lane-blender: $PY is not a Python 3.11 (bpy $BPY_VERSION needs exactly 3.11)"
    exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
# bpy's wheel is large: a longer socket timeout and retries (pip's 15 s default has failed on it)
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('bpy') == '$BPY_VERSION'" \
        2>/dev/null; then
    echo "lane-blender: installing bpy==$BPY_VERSION into $VENV"
    "$VENV/bin/pip" install -q --timeout 180 --retries 8 "bpy==$BPY_VERSION"
fi
"$VENV/bin/pip" install -q "numpy<2" pytest pygltflib
# The checkout's skinkit, built in isolation (NumPy 2 headers) and run on bpy's NumPy 1.26.
# .ci/run passes the package its main step installed from the same clean checkout
# (SKINKIT_LANE_SKINKIT, the installed skinkit/ directory): the venv imports it through a link
# and a .pth line (only skinkit, none of the main venv's other packages) instead of compiling the
# core once more; run by hand, the lane builds the checkout.
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -rf "$site/zz_lane_skinkit.pth" "$VENV/lane-skinkit"
if [ -n "${SKINKIT_LANE_SKINKIT:-}" ]; then
    if [ ! -f "$SKINKIT_LANE_SKINKIT/__init__.py" ]; then
        echo "lane-blender: SKINKIT_LANE_SKINKIT=$SKINKIT_LANE_SKINKIT is not a skinkit package"
        exit 1
    fi
    "$VENV/bin/pip" uninstall -q -y skinkit 2>/dev/null || true
    mkdir -p "$VENV/lane-skinkit"
    ln -s "$SKINKIT_LANE_SKINKIT" "$VENV/lane-skinkit/skinkit"
    echo "$VENV/lane-skinkit" >"$site/zz_lane_skinkit.pth"
else
    "$VENV/bin/pip" install -q --force-reinstall --no-deps .
fi

if ! "$VENV/bin/python" -c "import bpy" 2>/dev/null; then
    # Headless machines may lack the X / GL libraries bpy links against.
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        echo "lane-blender: import bpy failed; installing X/GL libraries from Debian"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libxrender1 libxi6 libxxf86vm1 \
            libxfixes3 libsm6 libgl1 libxkbcommon0 >/dev/null
    fi
fi
"$VENV/bin/python" -c "import bpy, numpy, skinkit; print('lane-blender: Blender', bpy.app.version_string, '| numpy', numpy.__version__, '| skinkit', skinkit.__version__, skinkit.__file__)"

log=$(mktemp)
rc=0
# bpy has been known to hang at interpreter exit: a timeout, and the results are read from the log
SKINKIT_REQUIRE_BLENDER=1 timeout --kill-after=20 600 "$VENV/bin/python" -m pytest -q -ra \
    -p no:cacheprovider --confcutdir=tests/blender tests/blender 2>&1 | tee "$log" || rc=$?
summary=$(tail -n 1 "$log")
rm -f "$log"
if [ "$rc" -ne 0 ]; then
    echo "lane-blender: pytest failed (exit $rc)"
    exit 1
fi
case "$summary" in
    *skipped* | *deselected* | *"no tests ran"*)
        echo "lane-blender: a test was skipped or none ran: $summary"
        exit 1 ;;
    *passed*) echo "lane-blender: ok ($summary)" ;;
    *) echo "lane-blender: cannot read the pytest summary: $summary"; exit 1 ;;
esac
