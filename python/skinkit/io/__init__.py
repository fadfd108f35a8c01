"""Reading and writing assets: glTF 2.0 skins and animations, posed meshes as OBJ / PLY.

* :mod:`skinkit.io.gltf` -- ``load(path) -> (meshes, clips)``, ``save`` (a rigged glTF),
  ``save_posed`` (a deformed mesh).  Reading needs only NumPy; writing uses pygltflib
  (``pip install skinkit[gltf]``).
* :mod:`skinkit.io.export` -- ``write_obj`` / ``write_ply`` for posed meshes (NumPy only).
"""
from . import export, gltf
from .export import write_obj, write_ply

__all__ = ["gltf", "export", "write_obj", "write_ply"]
