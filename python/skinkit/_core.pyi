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

# -- skinning kernels (csrc/skin_*.c; skinkit/skinning.py prepares the arguments) ----------------
# method: 0 rigid, 1 lbs, 2 dqs.  positions (V, 3) or (F, V, 3), any strides, float32 / float64;
# normals / tangents likewise (…, 3) / (…, 4) or None; out* the matching outputs, (V, n) when
# unbatched and (F, V, n) when batched, written in place; indices (V, K) of u8 / u16 / u32 / i32 /
# i64 (rigid: (V,) or (V, 1)); weights (V, K) of the positions' dtype or u8 / u16 (None for
# rigid); palette (Fk, J, 3, 4) C-contiguous of the positions' dtype, Fk in {1, F}; pivots None or
# (J, 3); normal_rule 0 "joint" / 1 "blend"; validated: skip the influence validation pass.
def skin(method: int, positions: FloatArray, normals: Optional[FloatArray],
         tangents: Optional[FloatArray], out: FloatArray, out_normals: Optional[FloatArray],
         out_tangents: Optional[FloatArray], indices: NDArray[np.integer[Any]],
         weights: Optional[NDArray[Any]], palette: FloatArray, pivots: Optional[FloatArray],
         n_joints: int, normal_rule: int, threads: int, validated: bool,
         centers: Optional[FloatArray] = None, blend: Optional[FloatArray] = None) -> None: ...
def validate_influences(indices: NDArray[np.integer[Any]], weights: NDArray[Any],
                        n_joints: int) -> None: ...
# The SIMD path in use ("avx512", "avx2" or "scalar"), the paths this CPU runs, and a switch
# (SKINKIT_SIMD=scalar|avx2|avx512|auto at import does the same).
def simd_path() -> str: ...
def simd_paths() -> list[str]: ...
def set_simd_path(name: str) -> str: ...
# -- binding (csrc/bind.c; skinkit/bind.py prepares the arguments) -------------------------------
# bones = (joints (J, 3) f64, parents (J,) i64, seg_start (J + 1,) i64, seg_end (S, 3) f64);
# indices (V, K) int32 and weights (V, K) of the vertices' dtype are written in place;
# info is None or (bones (V, K) int32, distances (V, K) f64, t (V, K) f64), also written.
Bones = tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]
Info = Optional[tuple[NDArray[np.int32], NDArray[np.float64], NDArray[np.float64]]]

def bind_nearest(indices: NDArray[np.int32], weights: FloatArray, info: Info,
                 vertices: FloatArray, bones: Bones, to_bone: bool) -> None: ...
def bind_proximity(indices: NDArray[np.int32], weights: FloatArray, info: Info,
                   vertices: FloatArray, bones: Bones, k: int, power: float,
                   to_bone: bool) -> None: ...
def bind_sphere_radii(radii: NDArray[np.float64], vertices: FloatArray, bones: Bones,
                      multiplier: float) -> None: ...
def bind_volume_spheres(indices: NDArray[np.int32], weights: FloatArray, info: Info,
                        vertices: FloatArray, bones: Bones,
                        radii: NDArray[np.float64]) -> None: ...
def bind_projection(indices: NDArray[np.int32], weights: FloatArray, info: Info,
                    vertices: FloatArray, bones: Bones) -> None: ...
def bind_height_bands(indices: NDArray[np.int32], weights: FloatArray, info: Info,
                      vertices: FloatArray, chain: NDArray[np.int64],
                      heights: NDArray[np.float64], origin: NDArray[np.float64],
                      axis: NDArray[np.float64]) -> None: ...
def bind_envelope(indices: NDArray[np.int32], weights: FloatArray, info: Info,
                  vertices: FloatArray, bones: Bones, head_radius: NDArray[np.float64],
                  tail_radius: NDArray[np.float64], distance: NDArray[np.float64], k: int,
                  normalize: bool) -> None: ...

# centers of rotation (the precompute): out (V, 3) of the positions' dtype is written; faces
# (T, 3) or (T, 4) of uint8 / uint16 / uint32 / int32 / int64; subdivide 0 = none, else the
# weight-difference threshold; validated = the influences come from an Influences object.
def centers_of_rotation(out: FloatArray, positions: FloatArray, faces: NDArray[np.integer[Any]],
                        indices: NDArray[np.integer[Any]], weights: NDArray[Any], sigma: float,
                        subdivide: float, threads: int, validated: bool) -> None: ...
