"""Posed meshes to OBJ and PLY (NumPy only).

Both writers take the arrays a pose gives (``mesh.pose(clip, t, normals=True)``), optionally in
world space (``p @ base[:3, :3].T + base[:3, 3]``), and write them in one vectorised pass.
Faces are 0-based ``(T, 3)`` triangles (OBJ's 1-based indices are written for you).
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["write_obj", "write_ply", "read_obj", "read_ply"]


def _vertices(positions, normals, faces):
    P = np.asarray(positions)
    if P.dtype.kind != "f":
        raise TypeError(f"positions must be float32 or float64, got {P.dtype}")
    if P.ndim != 2 or P.shape[1] != 3:
        raise ValueError(f"positions must have shape (V, 3), got {P.shape}")
    V = P.shape[0]
    if not np.all(np.isfinite(P)):
        raise ValueError("positions contains NaN or inf")
    N = None
    if normals is not None:
        N = np.asarray(normals)
        if N.dtype.kind != "f":
            raise TypeError(f"normals must be float32 or float64, got {N.dtype}")
        if N.shape != (V, 3):
            raise ValueError(f"normals must have shape ({V}, 3), got {N.shape}")
        if not np.all(np.isfinite(N)):
            raise ValueError("normals contains NaN or inf")
    F = None
    if faces is not None:
        F = np.asarray(faces)
        if F.dtype.kind not in "iu":
            raise TypeError(f"faces must be integers, got {F.dtype}")
        if F.ndim != 2 or F.shape[1] != 3:
            raise ValueError(f"faces must have shape (T, 3), got {F.shape}")
        if F.size and (F.min() < 0 or F.max() >= V):
            raise IndexError(f"faces: a vertex index outside [0, {V})")
        F = F.astype(np.int64)
    return P, N, F


def _lines(fmt, rows):
    if rows.shape[0] == 0:
        return ""
    return "\n".join(fmt % tuple(r) for r in rows.tolist()) + "\n"


def write_obj(path, positions, faces=None, normals=None, precision=9):
    """Write a Wavefront OBJ file.

    Parameters
    ----------
    path : str or PathLike
    positions : (V, 3) float32 or float64
    faces : (T, 3) int, optional
        0-based triangles.
    normals : (V, 3), optional
        Per-vertex normals (``vn``), referenced as ``f a//a b//b c//c``.
    precision : int
        Significant digits (9 keeps float32 exact).

    Returns
    -------
    str, the path written.
    """
    P, N, F = _vertices(positions, normals, faces)
    g = f"%.{int(precision)}g"
    parts = ["# written by skinkit\n", _lines(f"v {g} {g} {g}", P)]
    if N is not None:
        parts.append(_lines(f"vn {g} {g} {g}", N))
    if F is not None:
        f1 = F + 1
        if N is not None:
            parts.append(_lines("f %d//%d %d//%d %d//%d", np.repeat(f1, 2, axis=1)))
        else:
            parts.append(_lines("f %d %d %d", f1))
    path = os.fspath(path)
    with open(path, "w", encoding="ascii") as f:
        f.write("".join(parts))
    return path


def write_ply(path, positions, faces=None, normals=None, binary=True):
    """Write a PLY file (binary little-endian by default, or ASCII).

    Vertices keep the positions' dtype (``float`` or ``double`` properties); faces are written as
    ``list uchar int vertex_indices``.

    Parameters
    ----------
    path : str or PathLike
    positions : (V, 3) float32 or float64
    faces : (T, 3) int, optional
    normals : (V, 3), optional
        Cast to the positions' dtype.
    binary : bool

    Returns
    -------
    str, the path written.
    """
    P, N, F = _vertices(positions, normals, faces)
    V = P.shape[0]
    ptype = "double" if P.dtype == np.float64 else "float"
    fdt = np.dtype("<f8") if P.dtype == np.float64 else np.dtype("<f4")
    head = ["ply", f"format {'binary_little_endian' if binary else 'ascii'} 1.0",
            "comment written by skinkit", f"element vertex {V}"]
    head += [f"property {ptype} {c}" for c in "xyz"]
    if N is not None:
        head += [f"property {ptype} {c}" for c in ("nx", "ny", "nz")]
    if F is not None:
        head += [f"element face {F.shape[0]}", "property list uchar int vertex_indices"]
    head.append("end_header")
    cols = [P.astype(fdt)] + ([N.astype(fdt)] if N is not None else [])
    path = os.fspath(path)
    with open(path, "wb") as f:
        f.write(("\n".join(head) + "\n").encode("ascii"))
        if binary:
            vert = np.empty(V, dtype=[("v", fdt, (3 * len(cols),))])
            vert["v"] = np.concatenate(cols, axis=1)
            f.write(vert.tobytes())
            if F is not None:
                face = np.empty(F.shape[0], dtype=[("n", "u1"), ("i", "<i4", (3,))])
                face["n"] = 3
                face["i"] = F
                f.write(face.tobytes())
        else:
            g = "%.17g" if P.dtype == np.float64 else "%.9g"
            f.write(_lines(" ".join([g] * (3 * len(cols))),
                           np.concatenate(cols, axis=1)).encode("ascii"))
            if F is not None:
                f.write(_lines("3 %d %d %d", F).encode("ascii"))
    return path


def read_obj(path):
    """Read back what :func:`write_obj` writes: ``(positions (V, 3) float64, faces (T, 3) int64
    or None, normals (V, 3) float64 or None)``.  Triangles only; texture coordinates ignored."""
    v, vn, f = [], [], []
    with open(path, encoding="ascii", errors="replace") as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                v.append([float(x) for x in parts[1:4]])
            elif parts[0] == "vn":
                vn.append([float(x) for x in parts[1:4]])
            elif parts[0] == "f":
                if len(parts) != 4:
                    raise ValueError(f"{path}: only triangles are supported, got {line.strip()!r}")
                f.append([int(p.split("/")[0]) - 1 for p in parts[1:4]])
    P = np.array(v, dtype=np.float64).reshape(-1, 3)
    return (P, np.array(f, dtype=np.int64).reshape(-1, 3) if f else None,
            np.array(vn, dtype=np.float64).reshape(-1, 3) if vn else None)


def read_ply(path):
    """Read back what :func:`write_ply` writes (binary little-endian or ASCII): ``(positions,
    faces or None, normals or None)`` with positions / normals in the file's float dtype."""
    with open(path, "rb") as fh:
        data = fh.read()
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise ValueError(f"{path}: not a PLY file")
    header = data[:end].decode("ascii").splitlines()
    body = data[end + len(b"end_header\n"):]
    binary = any(h.startswith("format binary_little_endian") for h in header)
    V = T = 0
    props, ptype = [], "float"
    for h in header:
        w = h.split()
        if w[:2] == ["element", "vertex"]:
            V = int(w[2])
        elif w[:2] == ["element", "face"]:
            T = int(w[2])
        elif w[0] == "property" and w[1] in ("float", "double"):
            props.append(w[2])
            ptype = w[1]
    fdt = np.dtype("<f8") if ptype == "double" else np.dtype("<f4")
    n = len(props)
    if binary:
        vert = np.frombuffer(body, dtype=fdt, count=V * n).reshape(V, n)
        off = V * n * fdt.itemsize
        faces = None
        if T:
            face = np.frombuffer(body, dtype=[("n", "u1"), ("i", "<i4", (3,))], count=T,
                                 offset=off)
            faces = face["i"].astype(np.int64)
    else:
        rows = body.decode("ascii").split("\n")
        vert = np.array([[float(x) for x in r.split()] for r in rows[:V]], dtype=fdt).reshape(V, n)
        faces = (np.array([[int(x) for x in r.split()[1:4]] for r in rows[V:V + T]],
                          dtype=np.int64).reshape(T, 3) if T else None)
    normals = vert[:, 3:6].copy() if n >= 6 else None
    return vert[:, :3].copy(), faces, normals
