"""Process-wide settings (threads, strict mode) and show_config()."""
from __future__ import annotations

import os
import platform
import sys

import numpy as np

_settings = {"threads": None}


def _env_int(name, default):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    return n


# The C core runs at most 64 threads; a larger count means as many (and must fit a C int).
_MAX_THREADS = 1 << 16


def set_num_threads(n):
    """Set the default ``threads=`` of every kernel (starts at 1, or ``SKINKIT_NUM_THREADS``)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    _settings["threads"] = min(int(n), _MAX_THREADS)


def get_num_threads():
    if _settings["threads"] is None:
        _settings["threads"] = _env_int("SKINKIT_NUM_THREADS", 1)
    return _settings["threads"]


def resolve_threads(threads):
    if threads is None:
        return get_num_threads()
    if type(threads) is int and 1 <= threads <= _MAX_THREADS:  # the common case first: 60 ns of 180
        return threads
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an int or None, got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return min(int(threads), _MAX_THREADS)


def resolve_strict(strict):
    if strict is None:
        return os.environ.get("SKINKIT_STRICT", "") not in ("", "0")
    return bool(strict)


def config():
    """The build and runtime facts as a dict."""
    from . import __version__, _core

    info = {"skinkit": __version__, "python": sys.version.split()[0],
            "platform": platform.platform(), "numpy": np.__version__,
            "threads": get_num_threads()}
    info.update({f"build_{k}": v for k, v in _core.build_info().items()})
    if hasattr(_core, "simd_path"):
        info["simd"] = _core.simd_path()
    return info


def show_config():
    """Print the build and runtime facts (versions, compiler, SIMD path, default threads)."""
    info = config()
    width = max(map(len, info))
    for k, v in info.items():
        print(f"{k:<{width}}  {v}")
