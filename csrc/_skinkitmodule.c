/*
 * _skinkitmodule.c -- the only file that includes Python.h and NumPy.
 *
 * It checks every array the same way (helpers below), maps sk_result codes to the exceptions of
 * DESIGN.md section 5 with the argument's name in the message, allocates only with
 * PyMem_RawMalloc, and releases the GIL around the pure-C calls.  The Python package prepares
 * joint-sized arrays (casting, making them contiguous); vertex-sized arrays are never converted
 * here: a wrong one is an error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "sk.h"

/* ------------------------------------------------------------------------------------------
 * Shared checks
 * ---------------------------------------------------------------------------------------- */

/* Raise the exception DESIGN.md section 5 gives for `r`, naming the argument. */
static PyObject *raise_result(sk_result r, const char *name, int64_t bad)
{
    switch (r) {
    case SK_ERR_INDEX_RANGE:
        PyErr_Format(PyExc_IndexError, "%s: %s at vertex %lld", name, sk_result_string(r),
                     (long long)bad);
        break;
    case SK_ERR_BAD_PARENT:
        PyErr_Format(PyExc_ValueError, "%s: joint %lld: %s", name, (long long)bad,
                     sk_result_string(r));
        break;
    case SK_ERR_NOT_FINITE:
    case SK_ERR_SINGULAR:
        PyErr_Format(PyExc_ValueError, "%s: %s (item %lld)", name, sk_result_string(r),
                     (long long)bad);
        break;
    case SK_ERR_NEGATIVE_WEIGHT:
        PyErr_Format(PyExc_ValueError, "%s: %s at vertex %lld", name, sk_result_string(r),
                     (long long)bad);
        break;
    default:
        PyErr_Format(PyExc_ValueError, "%s: %s", name, sk_result_string(r));
    }
    return NULL;
}

static int is_float_type(int t) { return t == NPY_FLOAT32 || t == NPY_FLOAT64; }

/* Check that `obj` is an ndarray of the given type (-1: float32 or float64), native byte order,
 * aligned, with `ndim` dimensions whose sizes match `shape` (-1 = any).  Borrowed reference. */
static PyArrayObject *get_array(PyObject *obj, const char *name, int typenum, int ndim,
                                const npy_intp *shape)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy.ndarray, not %s", name,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    PyArray_Descr *d = PyArray_DESCR(a);
    int t = d->type_num;
    if (typenum >= 0 ? t != typenum : !is_float_type(t)) {
        PyErr_Format(PyExc_TypeError, "%s has dtype %S, expected %s", name, (PyObject *)d,
                     typenum >= 0 ? "a different one" : "float32 or float64");
        return NULL;
    }
    if (!PyArray_ISNBO(d->byteorder)) {
        PyErr_Format(PyExc_TypeError, "%s is byte-swapped (dtype %S): convert it with "
                     "astype(dtype.newbyteorder('='))", name, (PyObject *)d);
        return NULL;
    }
    if (!PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_ValueError, "%s is not aligned for its dtype", name);
        return NULL;
    }
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimensions, got %d", name, ndim,
                     PyArray_NDIM(a));
        return NULL;
    }
    for (int i = 0; i < ndim; ++i) {
        if (shape && shape[i] >= 0 && PyArray_DIM(a, i) != shape[i]) {
            PyErr_Format(PyExc_ValueError, "%s has shape axis %d = %zd, expected %zd", name, i,
                         (Py_ssize_t)PyArray_DIM(a, i), (Py_ssize_t)shape[i]);
            return NULL;
        }
    }
    return a;
}

/* A joint-sized array: as get_array, and C-contiguous. */
static PyArrayObject *get_small(PyObject *obj, const char *name, int typenum, int ndim,
                                const npy_intp *shape)
{
    PyArrayObject *a = get_array(obj, name, typenum, ndim, shape);
    if (a && !PyArray_IS_C_CONTIGUOUS(a)) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous", name);
        return NULL;
    }
    return a;
}

/* Byte range [lo, hi) that an array's elements can touch. */
static void byte_bounds(PyArrayObject *a, char **lo, char **hi)
{
    char *base = PyArray_BYTES(a);
    char *l = base, *h = base;
    npy_intp item = PyArray_ITEMSIZE(a);
    for (int i = 0; i < PyArray_NDIM(a); ++i) {
        npy_intp ext = (PyArray_DIM(a, i) - 1) * PyArray_STRIDE(a, i);
        if (PyArray_DIM(a, i) == 0) {
            *lo = *hi = base;
            return;
        }
        if (ext < 0) l += ext; else h += ext;
    }
    *lo = l;
    *hi = h + item;
}

/* 1 when a and b may share memory, after an exact check by numpy.shares_memory when their
 * byte ranges intersect (interleaved vertex buffers); -1 with an exception on error. */
static int overlaps(PyArrayObject *a, PyArrayObject *b)
{
    char *alo, *ahi, *blo, *bhi;
    byte_bounds(a, &alo, &ahi);
    byte_bounds(b, &blo, &bhi);
    if (alo >= ahi || blo >= bhi || ahi <= blo || bhi <= alo) return 0;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np) return -1;
    PyObject *res = PyObject_CallMethod(np, "shares_memory", "OO", (PyObject *)a, (PyObject *)b);
    Py_DECREF(np);
    if (!res) return -1;
    int r = PyObject_IsTrue(res);
    Py_DECREF(res);
    return r;
}

/* An output array: as get_array, writable, and not overlapping any of `inputs` (NULL-ended),
 * except that `allowed` (may be NULL) may be the very same array. */
static PyArrayObject *get_out(PyObject *obj, const char *name, int typenum, int ndim,
                              const npy_intp *shape, PyArrayObject **inputs, PyArrayObject *allowed)
{
    PyArrayObject *a = get_array(obj, name, typenum, ndim, shape);
    if (!a) return NULL;
    if (!PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s is read-only", name);
        return NULL;
    }
    for (PyArrayObject **in = inputs; in && *in; ++in) {
        if (*in == a && a == allowed) continue;
        int r = overlaps(a, *in);
        if (r < 0) return NULL;
        if (r) {
            PyErr_Format(PyExc_ValueError, "%s overlaps an input array", name);
            return NULL;
        }
    }
    return a;
}

static int get_rows(PyArrayObject *a, const char *name)
{
    int nd = PyArray_NDIM(a);
    if (nd < 2 || PyArray_DIM(a, nd - 1) != 4 ||
        (PyArray_DIM(a, nd - 2) != 3 && PyArray_DIM(a, nd - 2) != 4)) {
        PyErr_Format(PyExc_ValueError, "%s must end in (4, 4) or (3, 4)", name);
        return -1;
    }
    return (int)PyArray_DIM(a, nd - 2);
}

/* ------------------------------------------------------------------------------------------
 * Skeleton
 * ---------------------------------------------------------------------------------------- */

static PyObject *py_validate_parents(PyObject *self, PyObject *args)
{
    PyObject *o;
    if (!PyArg_ParseTuple(args, "O", &o)) return NULL;
    PyArrayObject *p = get_small(o, "parents", NPY_INT64, 1, NULL);
    if (!p) return NULL;
    int64_t bad = 0;
    sk_result r = sk_validate_parents((const int64_t *)PyArray_DATA(p), PyArray_DIM(p, 0), &bad);
    if (r != SK_OK) return raise_result(r, "parents", bad);
    Py_RETURN_NONE;
}

/* fk(out (F,J,r,4), locals (J,r,4) | (F,J,r,4), parents (J,) int64, root None | (R,3,4) f64) */
static PyObject *py_fk(PyObject *self, PyObject *args)
{
    PyObject *oo, *lo, *po, *ro;
    if (!PyArg_ParseTuple(args, "OOOO", &oo, &lo, &po, &ro)) return NULL;
    PyArrayObject *out = get_small(oo, "out", -1, 4, NULL);
    if (!out) return NULL;
    int rows = get_rows(out, "out");
    if (rows < 0) return NULL;
    npy_intp F = PyArray_DIM(out, 0), J = PyArray_DIM(out, 1);
    int t = PyArray_TYPE(out);
    PyArrayObject *loc = NULL;
    if (PyArray_Check(lo) && PyArray_NDIM((PyArrayObject *)lo) == 3) {
        npy_intp s[3] = {J, rows, 4};
        loc = get_small(lo, "local", t, 3, s);
    } else {
        npy_intp s[4] = {F, J, rows, 4};
        loc = get_small(lo, "local", t, 4, s);
    }
    if (!loc) return NULL;
    npy_intp ps[1] = {J};
    PyArrayObject *par = get_small(po, "parents", NPY_INT64, 1, ps);
    if (!par) return NULL;
    PyArrayObject *root = NULL;
    if (ro != Py_None) {
        npy_intp rs[3] = {-1, 3, 4};
        root = get_small(ro, "root", NPY_FLOAT64, 3, rs);
        if (!root) return NULL;
        if (PyArray_DIM(root, 0) != 1 && PyArray_DIM(root, 0) != F) {
            PyErr_SetString(PyExc_ValueError, "root must have 1 or F frames");
            return NULL;
        }
    }
    PyArrayObject *ins[] = {loc, par, root, NULL};
    if (!get_out(oo, "out", t, 4, NULL, ins, NULL)) return NULL;
    double *scratch = PyMem_RawMalloc(sizeof(double) * 12 * (size_t)(J > 0 ? J : 1));
    if (!scratch) return PyErr_NoMemory();
    int per_frame = PyArray_NDIM(loc) == 4;
    const double *rp = root ? (const double *)PyArray_DATA(root) : NULL;
    int root_pf = root && PyArray_DIM(root, 0) == F && F != 1;
    const int64_t *pp = (const int64_t *)PyArray_DATA(par);
    int64_t bad = 0;
    sk_result r;
    Py_BEGIN_ALLOW_THREADS
    if (t == NPY_FLOAT32)
        r = sk_fk_f32(PyArray_DATA(out), PyArray_DATA(loc), per_frame, pp, J, F, rp, root_pf,
                      rows, scratch, &bad);
    else
        r = sk_fk_f64(PyArray_DATA(out), PyArray_DATA(loc), per_frame, pp, J, F, rp, root_pf,
                      rows, scratch, &bad);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    if (r != SK_OK) return raise_result(r, "parents", bad);
    Py_INCREF(oo);
    return oo;
}

/* inverse_bind(out (J,r,4), bind_globals (J,r,4)) and pivots(out (J,3), inverse_bind (J,r,4)) */
static PyObject *inverse_or_pivots(PyObject *args, int pivots)
{
    PyObject *oo, *io;
    if (!PyArg_ParseTuple(args, "OO", &oo, &io)) return NULL;
    const char *name = pivots ? "inverse_bind" : "bind_globals";
    PyArrayObject *in = get_small(io, name, -1, 3, NULL);
    if (!in) return NULL;
    int rows = get_rows(in, name);
    if (rows < 0) return NULL;
    npy_intp J = PyArray_DIM(in, 0);
    int t = PyArray_TYPE(in);
    npy_intp s_ib[3] = {J, rows, 4}, s_pv[2] = {J, 3};
    PyArrayObject *ins[] = {in, NULL};
    PyArrayObject *out = pivots ? get_small(oo, "out", t, 2, s_pv) : get_small(oo, "out", t, 3, s_ib);
    if (!out || !get_out(oo, "out", t, pivots ? 2 : 3, NULL, ins, NULL)) return NULL;
    int64_t bad = 0;
    sk_result r;
    Py_BEGIN_ALLOW_THREADS
    if (pivots)
        r = t == NPY_FLOAT32 ? sk_pivots_f32(PyArray_DATA(out), PyArray_DATA(in), J, rows, &bad)
                             : sk_pivots_f64(PyArray_DATA(out), PyArray_DATA(in), J, rows, &bad);
    else
        r = t == NPY_FLOAT32
                ? sk_inverse_bind_f32(PyArray_DATA(out), PyArray_DATA(in), J, rows, &bad)
                : sk_inverse_bind_f64(PyArray_DATA(out), PyArray_DATA(in), J, rows, &bad);
    Py_END_ALLOW_THREADS
    if (r != SK_OK) return raise_result(r, name, bad);
    Py_INCREF(oo);
    return oo;
}

static PyObject *py_inverse_bind(PyObject *self, PyObject *args) { return inverse_or_pivots(args, 0); }
static PyObject *py_pivots(PyObject *self, PyObject *args) { return inverse_or_pivots(args, 1); }

/* palette(out (F,J,r,4), globals (F,J,r,4), inverse_bind (J,r,4), pre None|(3,4), post None|(3,4)) */
static PyObject *py_palette(PyObject *self, PyObject *args)
{
    PyObject *oo, *go, *io, *pre_o, *post_o;
    if (!PyArg_ParseTuple(args, "OOOOO", &oo, &go, &io, &pre_o, &post_o)) return NULL;
    PyArrayObject *g = get_small(go, "global_transforms", -1, 4, NULL);
    if (!g) return NULL;
    int rows = get_rows(g, "global_transforms");
    if (rows < 0) return NULL;
    int t = PyArray_TYPE(g);
    npy_intp F = PyArray_DIM(g, 0), J = PyArray_DIM(g, 1);
    npy_intp s_ib[3] = {J, rows, 4}, s_out[4] = {F, J, rows, 4}, s_aff[2] = {3, 4};
    PyArrayObject *ib = get_small(io, "inverse_bind", t, 3, s_ib);
    if (!ib) return NULL;
    PyArrayObject *pre = NULL, *post = NULL;
    if (pre_o != Py_None && !(pre = get_small(pre_o, "base", NPY_FLOAT64, 2, s_aff))) return NULL;
    if (post_o != Py_None && !(post = get_small(post_o, "bind_shape", NPY_FLOAT64, 2, s_aff)))
        return NULL;
    PyArrayObject *ins[] = {g, ib, pre ? pre : g, post ? post : g, NULL};
    PyArrayObject *out = get_small(oo, "out", t, 4, s_out);
    if (!out || !get_out(oo, "out", t, 4, s_out, ins, NULL)) return NULL;
    const double *prep = pre ? PyArray_DATA(pre) : NULL, *postp = post ? PyArray_DATA(post) : NULL;
    Py_BEGIN_ALLOW_THREADS
    if (t == NPY_FLOAT32)
        sk_palette_f32(PyArray_DATA(out), PyArray_DATA(g), PyArray_DATA(ib), J, F, prep, postp, rows);
    else
        sk_palette_f64(PyArray_DATA(out), PyArray_DATA(g), PyArray_DATA(ib), J, F, prep, postp, rows);
    Py_END_ALLOW_THREADS
    Py_INCREF(oo);
    return oo;
}

/* ------------------------------------------------------------------------------------------
 * Skinning kernels
 * ---------------------------------------------------------------------------------------- */

/* === kernels: end === */

/* ------------------------------------------------------------------------------------------
 * Binding and weight tools
 * ---------------------------------------------------------------------------------------- */

/* === bind: end === */

/* ------------------------------------------------------------------------------------------
 * Module
 * ---------------------------------------------------------------------------------------- */

static PyObject *py_build_info(PyObject *self, PyObject *noargs)
{
    return Py_BuildValue("{s:s,s:s,s:i,s:s}", "compiler",
#if defined(__clang__)
                         "clang " __clang_version__,
#elif defined(__GNUC__)
                         "gcc " __VERSION__,
#else
                         "unknown",
#endif
                         "numpy_build_api", NPY_FEATURE_VERSION_STRING, "c_standard",
                         (int)(__STDC_VERSION__), "build_date", __DATE__);
}

static PyMethodDef methods[] = {
    {"validate_parents", py_validate_parents, METH_VARARGS, "validate_parents(parents)"},
    {"fk", py_fk, METH_VARARGS, "fk(out, local, parents, root) -> out"},
    {"inverse_bind", py_inverse_bind, METH_VARARGS, "inverse_bind(out, bind_globals) -> out"},
    {"pivots", py_pivots, METH_VARARGS, "pivots(out, inverse_bind) -> out"},
    {"palette", py_palette, METH_VARARGS, "palette(out, globals, inverse_bind, pre, post) -> out"},
    {"build_info", py_build_info, METH_NOARGS, "build_info() -> dict"},
    /* === kernels: methods === */
    /* === bind: methods === */
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_core",
                                       "skinkit's C core (see csrc/sk.h).", -1, methods};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    return PyModule_Create(&moduledef);
}
