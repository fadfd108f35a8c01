"""Type stubs for skinkit._core, the C extension (csrc/_skinkitmodule.c).

These are the low-level entry points: arrays must already have the exact dtype, shape and
contiguity documented here (the Python package prepares them); anything else raises.
"""
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.floating[Any]]

def validate_parents(parents: NDArray[np.int64]) -> None: ...
def fk(out: FloatArray, local: FloatArray, parents: NDArray[np.int64],
       root: Optional[NDArray[np.float64]]) -> FloatArray: ...
def inverse_bind(out: FloatArray, bind_globals: FloatArray) -> FloatArray: ...
def pivots(out: FloatArray, inverse_bind: FloatArray) -> FloatArray: ...
def palette(out: FloatArray, globals: FloatArray, inverse_bind: FloatArray,
            pre: Optional[NDArray[np.float64]], post: Optional[NDArray[np.float64]]) -> FloatArray: ...
def build_info() -> dict[str, Any]: ...
