"""skinkit: skeletal mesh skinning for NumPy, with a C core.

Conventions: column vectors (``p' = M @ [x, y, z, 1]``), quaternions xyzw, joints in any order
(sorted internally), palettes ``K[j] = inv(base) @ global[j] @ inverse_bind[j] @ bind_shape``.
See the README for the tour.
"""
__version__ = "0.1.0"

from . import transforms, reference
from ._config import set_num_threads, get_num_threads, show_config
from .skeleton import Skeleton, forward_kinematics, skinning_palette
from .skinning import Influences, rigid, lbs, dqs, skin
from .mesh import SkinnedMesh, Clip, Channel, bake
from . import bind, weights
from . import rigs, metrics, plot

__all__ = [
    "Skeleton", "forward_kinematics", "skinning_palette", "Influences", "rigid", "lbs", "dqs", "skin", "transforms", "reference",
    "set_num_threads", "get_num_threads", "show_config", "__version__",
]
__all__ += ["SkinnedMesh", "Clip", "Channel", "bake", "rigs", "metrics", "plot"]
__all__ += ["bind", "weights"]
# Assets: skinkit.io.gltf (reading needs NumPy only; writing the `gltf` extra), OBJ / PLY export.
# skinkit.blender is imported explicitly (it needs bpy).
from . import io  # noqa: E402
__all__ += ["io"]
