"""skinkit: skeletal mesh skinning for NumPy, with a C core.

Conventions: column vectors (``p' = M @ [x, y, z, 1]``), quaternions xyzw, joints in any order
(sorted internally), palettes ``K[j] = inv(base) @ global[j] @ inverse_bind[j] @ bind_shape``.
See the README for the tour.

Modules: ``transforms`` (matrix / quaternion helpers), ``reference`` (slow NumPy versions of the
kernels), ``bind`` (automatic weights) and ``weights`` (weight tools), ``rigs`` (primitives,
posing), ``metrics``, ``plot`` (matplotlib, imported when drawing), ``io`` (glTF, OBJ, PLY).
``skinkit.blender`` is imported explicitly, inside Blender (it needs bpy).
"""
__version__ = "0.1.0"

from . import transforms, reference
from ._config import set_num_threads, get_num_threads, show_config
from .skeleton import Skeleton, forward_kinematics, skinning_palette
from .skinning import Influences, rigid, lbs, dqs, cor, skin
from .mesh import SkinnedMesh, Clip, Channel
from .bake import bake, bake_many
from .centers import centers_of_rotation
from . import bind, weights, rigs, metrics, plot, io

__all__ = [
    "__version__",
    # skeletons and palettes
    "Skeleton", "forward_kinematics", "skinning_palette",
    # skinning
    "Influences", "rigid", "lbs", "dqs", "cor", "skin",
    # optimized centers of rotation (the precompute)
    "centers_of_rotation",
    # meshes, clips, baking
    "SkinnedMesh", "Clip", "Channel", "bake", "bake_many",
    # settings
    "set_num_threads", "get_num_threads", "show_config",
    # modules
    "transforms", "reference", "bind", "weights", "rigs", "metrics", "plot", "io",
]
