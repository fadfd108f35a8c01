"""The Blender lane (.ci/lane-blender.sh): parity of skinkit with Blender's Armature modifier.

Not collected by the main test suite (tests/conftest.py ignores this folder); run it with
``python -m pytest --confcutdir=tests/blender tests/blender`` in an environment with the PyPI
``bpy`` module (Blender 5.0.1, Python 3.11).  ``SKINKIT_REQUIRE_BLENDER=1`` turns a missing
``bpy`` into an error instead of a skip, so the lane cannot pass without Blender.
"""
import os

import pytest

try:
    import bpy  # noqa: F401  (import bpy before mathutils: the pip build needs it)
    _BPY_ERROR = None
except ImportError as exc:  # pragma: no cover - depends on the environment
    bpy = None
    _BPY_ERROR = exc
    if os.environ.get("SKINKIT_REQUIRE_BLENDER") == "1":
        raise RuntimeError(f"SKINKIT_REQUIRE_BLENDER=1 but bpy cannot be imported: {exc}") from exc


def pytest_collection_modifyitems(config, items):
    if bpy is None:
        skip = pytest.mark.skip(reason=f"bpy not importable ({_BPY_ERROR}); "
                                       "set SKINKIT_REQUIRE_BLENDER=1 to make this an error")
        for item in items:
            item.add_marker(skip)


@pytest.fixture
def scene():
    """An empty Blender scene (factory settings, no default cube / camera / light)."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene
