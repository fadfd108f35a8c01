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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        if (strcmp(name, "weights") == 0) { /* the validators report a weight's vertex */
            PyErr_Format(PyExc_ValueError, "weights: NaN or inf at vertex %lld", (long long)bad);
            break;
        }
        /* fall through */
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
        PyArray_Descr *want = typenum >= 0 ? PyArray_DescrFromType(typenum) : NULL;
        if (want) {
            /* the vertex arrays' and outputs' float type is the positions' */
            PyErr_Format(PyExc_TypeError, "%s has dtype %S, expected %S%s", name, (PyObject *)d,
                         (PyObject *)want,
                         is_float_type(typenum) && strcmp(name, "positions") != 0
                             ? " (the positions' dtype)" : "");
            Py_DECREF(want);
        } else if (typenum < 0) {
            PyErr_Format(PyExc_TypeError, "%s has dtype %S, expected float32 or float64", name,
                         (PyObject *)d);
        }
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

/* 1 when two elements of `a` may share bytes (a zero stride, or rows closer than a row is
 * long): each axis's stride, smallest first, must step past everything the axes before it
 * span.  This admits every view NumPy makes of a buffer without repeating elements
 * (interleaved vertex buffers included). */
static int elements_overlap(PyArrayObject *a)
{
    int nd = PyArray_NDIM(a), order[NPY_MAXDIMS], n = 0;
    for (int i = 0; i < nd; ++i) {
        if (PyArray_DIM(a, i) == 0) return 0;
        if (PyArray_DIM(a, i) > 1) order[n++] = i;
    }
    for (int i = 1; i < n; ++i) /* insertion sort by |stride| */
        for (int k = i; k > 0 && llabs((long long)PyArray_STRIDE(a, order[k])) <
                                     llabs((long long)PyArray_STRIDE(a, order[k - 1])); --k) {
            int tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
    long long span = PyArray_ITEMSIZE(a);
    for (int i = 0; i < n; ++i) {
        long long step = llabs((long long)PyArray_STRIDE(a, order[i]));
        if (step < span) return 1;
        span += step * (PyArray_DIM(a, order[i]) - 1);
    }
    return 0;
}

/* An output array: as get_array, writable, its elements apart (elements_overlap), and not
 * overlapping any of `inputs` (NULL-ended), except that `allowed` (may be NULL) may be the
 * very same array. */
static PyArrayObject *get_out(PyObject *obj, const char *name, int typenum, int ndim,
                              const npy_intp *shape, PyArrayObject **inputs, PyArrayObject *allowed)
{
    PyArrayObject *a = get_array(obj, name, typenum, ndim, shape);
    if (!a) return NULL;
    if (!PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s is read-only", name);
        return NULL;
    }
    if (elements_overlap(a)) {
        PyErr_Format(PyExc_ValueError, "%s has elements that share memory (a zero or too small "
                     "stride): every output element needs its own place", name);
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

/* A vertex stream of `a`, optionally at frame f of a batched (F, V, n) array. */
static sk_stream stream_of(PyArrayObject *a, npy_intp f)
{
    sk_stream s = {NULL, 0, 0};
    if (!a) return s;
    int nd = PyArray_NDIM(a);
    char *base = PyArray_BYTES(a);
    if (nd == 3) base += f * PyArray_STRIDE(a, 0);
    s.data = base;
    s.row = nd >= 2 ? PyArray_STRIDE(a, nd - 2) : PyArray_STRIDE(a, 0);
    s.elem = nd >= 2 ? PyArray_STRIDE(a, nd - 1) : 0;
    if (nd == 1) s.row = PyArray_STRIDE(a, 0);
    return s;
}

static int index_type_of(PyArrayObject *a, sk_index_type *t)
{
    switch (PyArray_TYPE(a)) {
    case NPY_UINT8: *t = SK_INDEX_U8; return 1;
    case NPY_UINT16: *t = SK_INDEX_U16; return 1;
    case NPY_UINT32: *t = SK_INDEX_U32; return 1;
    case NPY_INT32: *t = SK_INDEX_I32; return 1;
    case NPY_INT64: *t = SK_INDEX_I64; return 1;
    default: return 0;
    }
}

/* The index type of `a`, or TypeError naming indices. */
static int get_index_type(PyArrayObject *a, sk_index_type *t)
{
    if (index_type_of(a, t)) return 1;
    PyErr_Format(PyExc_TypeError, "indices has dtype %S, expected uint8, uint16, uint32, int32 or "
                 "int64", (PyObject *)PyArray_DESCR(a));
    return 0;
}

/* Raw influences, checked the same way wherever they come in: indices (V, K >= 1) of an index
 * dtype and weights (V, K) of float type `t` (-1: float32 or float64) or unorm uint8 / uint16;
 * V < 0 takes V from indices.  Fills `infl`; returns the weights array (borrowed) or NULL. */
static PyArrayObject *get_influences(PyObject *io, PyObject *wo, npy_intp V, int t,
                                     sk_influences *infl)
{
    if (!PyArray_Check(io)) return get_array(io, "indices", -1, 2, NULL); /* TypeError */
    PyArrayObject *idx = (PyArrayObject *)io;
    sk_index_type itype;
    if (!get_index_type(idx, &itype)) return NULL;
    if (!get_array(io, "indices", PyArray_TYPE(idx), 2, NULL)) return NULL;
    if (V >= 0 && PyArray_DIM(idx, 0) != V) {
        PyErr_Format(PyExc_ValueError, "the influences have %zd rows (indices, weights) but "
                     "positions has %zd vertices", (Py_ssize_t)PyArray_DIM(idx, 0),
                     (Py_ssize_t)V);
        return NULL;
    }
    npy_intp K = PyArray_DIM(idx, 1);
    if (K < 1) {
        PyErr_SetString(PyExc_ValueError, "indices must have at least one column (K = 0)");
        return NULL;
    }
    if (!PyArray_Check(wo)) return get_array(wo, "weights", -1, 2, NULL); /* TypeError */
    int wt = PyArray_TYPE((PyArrayObject *)wo);
    int float_ok = t < 0 ? is_float_type(wt) : wt == t;
    if (!float_ok && wt != NPY_UINT8 && wt != NPY_UINT16) {
        PyErr_Format(PyExc_TypeError, "weights has dtype %S, expected %s or unorm uint8 / uint16",
                     (PyObject *)PyArray_DESCR((PyArrayObject *)wo),
                     t < 0 ? "float32, float64" : t == NPY_FLOAT32 ? "float32" : "float64");
        return NULL;
    }
    npy_intp ws[2] = {PyArray_DIM(idx, 0), K};
    PyArrayObject *w = get_array(wo, "weights", wt, 2, ws);
    if (!w) return NULL;
    infl->indices = stream_of(idx, 0);
    infl->index_type = itype;
    infl->weights = stream_of(w, 0);
    infl->weight_type = wt == NPY_UINT8    ? SK_WEIGHT_UNORM8
                        : wt == NPY_UINT16 ? SK_WEIGHT_UNORM16
                                           : SK_WEIGHT_FLOAT;
    infl->k = K;
    return w;
}

/* A (V, n) or (F, V, n) float array of type t, with F = frames when batched. */
static PyArrayObject *get_vertex_array(PyObject *o, const char *name, int t, npy_intp V, int n,
                                       npy_intp frames, int allow_batched)
{
    if (!PyArray_Check(o)) return get_array(o, name, t, 2, NULL); /* raises TypeError */
    int nd = PyArray_NDIM((PyArrayObject *)o);
    if (nd == 3 && allow_batched) {
        npy_intp s[3] = {frames, V, n};
        return get_array(o, name, t, 3, s);
    }
    npy_intp s[2] = {V, n};
    return get_array(o, name, t, 2, s);
}

typedef struct {
    int method; /* 0 rigid, 1 lbs, 2 dqs, 3 cor, 4 blend */
    int f32;
    const void *job;
} skin_task;

static void skin_range(void *ctx, int64_t begin, int64_t end)
{
    const skin_task *t = (const skin_task *)ctx;
    if (t->f32) {
        const sk_skin_job_f32 *j = t->job;
        if (t->method == 0) sk_rigid_f32(j, begin, end);
        else if (t->method == 1) sk_lbs_f32(j, begin, end);
        else if (t->method == 2) sk_dqs_f32(j, begin, end);
        else if (t->method == 3) sk_cor_f32(j, begin, end);
        else sk_blend_f32(j, begin, end);
    } else {
        const sk_skin_job_f64 *j = t->job;
        if (t->method == 0) sk_rigid_f64(j, begin, end);
        else if (t->method == 1) sk_lbs_f64(j, begin, end);
        else if (t->method == 2) sk_dqs_f64(j, begin, end);
        else if (t->method == 3) sk_cor_f64(j, begin, end);
        else sk_blend_f64(j, begin, end);
    }
}

/* Vertices per scheduling block: a multiple of every SIMD width, so thread splits never change
 * which code path a vertex takes. */
#define SKIN_GRAIN 64

/* 1 with a ValueError when a (F, J, 4, 4) C-contiguous palette has a last row other than
 * [0, 0, 0, 1] within 1e-6 (NaN included), the rule of _checks.transforms. */
static int palette_last_rows_bad(PyArrayObject *pal, int f32)
{
    const npy_intp F = PyArray_DIM(pal, 0), J = PyArray_DIM(pal, 1);
    const char *data = PyArray_BYTES(pal);
    for (npy_intp m = 0; m < F * J; ++m)
        for (int c = 0; c < 4; ++c) {
            const npy_intp e = 16 * m + 12 + c;
            const double x = f32 ? (double)((const float *)data)[e] : ((const double *)data)[e];
            if (!(fabs(x - (c == 3 ? 1.0 : 0.0)) <= 1e-6)) {
                char frame[48] = "";
                if (F > 1) snprintf(frame, sizeof frame, "frame %zd, ", (Py_ssize_t)(m / J));
                PyErr_Format(PyExc_ValueError, "palette has a last row other than [0, 0, 0, 1] "
                             "(%sjoint %zd)", frame, (Py_ssize_t)(m % J));
                return 1;
            }
        }
    return 0;
}

/*
 * skin(method, positions, normals, tangents, out, out_normals, out_tangents, indices, weights,
 *      palette, pivots, n_joints, normal_rule, threads, validated[, centers, blend])
 *
 * positions (V,3) or (F,V,3) float32/float64 (any strides); normals / tangents likewise (…,3) /
 * (…,4) or None; out* the matching outputs ((V,n) when unbatched, (F,V,n) when batched; given
 * exactly when their input is); indices (V,K) of u8/u16/u32/i32/i64 (rigid: (V,) or (V,1));
 * weights (V,K) of the positions' dtype or u8/u16 (None for rigid); palette (Fk,J,3,4) or
 * (Fk,J,4,4) C-contiguous of the positions' dtype, Fk in {1, F} (a 4x4's last row must be
 * [0, 0, 0, 1] within 1e-6, as _checks.transforms asks: the common (J, 4, 4) palette then needs
 * no copy in Python, which took a third of a call's fixed cost); pivots None or (J,3) of that
 * dtype.
 * cor (3): centers (V,3) of the positions' dtype, any strides, rows all finite or all NaN.
 * blend (4): blend (V,) of the positions' dtype in [0, 1], or a 0-d array (one value).
 */
static PyObject *py_skin(PyObject *self, PyObject *args)
{
    int method, normal_rule, threads, validated;
    Py_ssize_t n_joints_arg;
    PyObject *po, *no, *to, *oo, *ono, *oto, *io, *wo, *ko, *pvo, *co = Py_None, *bo = Py_None;
    if (!PyArg_ParseTuple(args, "iOOOOOOOOOOniip|OO", &method, &po, &no, &to, &oo, &ono, &oto,
                          &io, &wo, &ko, &pvo, &n_joints_arg, &normal_rule, &threads, &validated,
                          &co, &bo))
        return NULL;
    if (method < 0 || method > 4) {
        PyErr_SetString(PyExc_ValueError, "method must be 0 (rigid), 1 (lbs), 2 (dqs), 3 (cor) "
                        "or 4 (blend)");
        return NULL;
    }
    /* ---- output shape decides the batch ---- */
    if (!PyArray_Check(oo)) return get_array(oo, "out", -1, 2, NULL), NULL;
    PyArrayObject *out = (PyArrayObject *)oo;
    int batched = PyArray_NDIM(out) == 3;
    PyArrayObject *pos = get_array(po, "positions", -1, PyArray_Check(po) ? PyArray_NDIM((PyArrayObject *)po) : 2, NULL);
    if (!pos) return NULL;
    int t = PyArray_TYPE(pos);
    if (PyArray_NDIM(pos) < 2 || PyArray_NDIM(pos) > 3 || PyArray_DIM(pos, PyArray_NDIM(pos) - 1) != 3) {
        PyErr_SetString(PyExc_ValueError, "positions must have shape (V, 3) or (F, V, 3)");
        return NULL;
    }
    npy_intp V = PyArray_DIM(pos, PyArray_NDIM(pos) - 2);
    npy_intp F = batched ? PyArray_DIM(out, 0) : 1;
    if (PyArray_NDIM(pos) == 3 && (!batched || PyArray_DIM(pos, 0) != F)) {
        PyErr_SetString(PyExc_ValueError, "positions has a batch axis that does not match out");
        return NULL;
    }
    /* ---- joint-sized ---- */
    npy_intp J = (npy_intp)n_joints_arg;
    if (J < 1) {
        PyErr_SetString(PyExc_ValueError, "palette must have at least one joint (J = 0)");
        return NULL;
    }
    npy_intp ks[4] = {-1, J, -1, 4};
    PyArrayObject *pal = get_small(ko, "palette", t, 4, ks);
    if (!pal) return NULL;
    npy_intp Fk = PyArray_DIM(pal, 0);
    if (Fk != 1 && Fk != F) {
        PyErr_SetString(PyExc_ValueError, "palette must have 1 or F frames");
        return NULL;
    }
    const npy_intp pal_rows = PyArray_DIM(pal, 2);
    if (pal_rows != 3 && pal_rows != 4) {
        PyErr_Format(PyExc_ValueError, "palette has shape axis 2 = %zd, expected 3 or 4",
                     (Py_ssize_t)pal_rows);
        return NULL;
    }
    if (pal_rows == 4 && palette_last_rows_bad(pal, t == NPY_FLOAT32)) return NULL;
    PyArrayObject *piv = NULL;
    if (pvo != Py_None) {
        npy_intp s[2] = {J, 3};
        if (!(piv = get_small(pvo, "pivots", t, 2, s))) return NULL;
    }
    /* ---- vertex-sized inputs ---- */
    PyArrayObject *nrm = NULL, *tan = NULL, *idx = NULL, *wts = NULL;
    if (no != Py_None && !(nrm = get_vertex_array(no, "normals", t, V, 3, F, batched))) return NULL;
    if (to != Py_None && !(tan = get_vertex_array(to, "tangents", t, V, 4, F, batched))) return NULL;
    if (!PyArray_Check(io)) return get_array(io, "indices", -1, 2, NULL), NULL;
    idx = (PyArrayObject *)io;
    sk_influences infl;
    memset(&infl, 0, sizeof infl);
    sk_index_type itype = SK_INDEX_I64;
    if (method == 0) {
        if (!get_index_type(idx, &itype)) return NULL;
        if (!get_array(io, "indices", PyArray_TYPE(idx), PyArray_NDIM(idx), NULL)) return NULL;
        if (!((PyArray_NDIM(idx) == 1 && PyArray_DIM(idx, 0) == V) ||
              (PyArray_NDIM(idx) == 2 && PyArray_DIM(idx, 0) == V && PyArray_DIM(idx, 1) == 1))) {
            PyErr_Format(PyExc_ValueError, "indices must have shape (%zd,) or (%zd, 1) for rigid "
                         "skinning", (Py_ssize_t)V, (Py_ssize_t)V);
            return NULL;
        }
    } else {
        if (!(wts = get_influences(io, wo, V, t, &infl))) return NULL;
        itype = infl.index_type;
    }
    PyArrayObject *ctr = NULL, *bln = NULL;
    if (method == 3) {
        npy_intp cs[2] = {V, 3};
        if (co == Py_None) {
            PyErr_SetString(PyExc_ValueError, "centers are required for method 'cor' "
                            "(skinkit.centers_of_rotation)");
            return NULL;
        }
        if (!(ctr = get_array(co, "centers", t, 2, cs))) return NULL;
    }
    if (method == 4) {
        if (bo == Py_None) {
            PyErr_SetString(PyExc_ValueError, "blend is required for method 'blend'");
            return NULL;
        }
        npy_intp bs[1] = {V};
        int bnd = PyArray_Check(bo) && PyArray_NDIM((PyArrayObject *)bo) == 0 ? 0 : 1;
        if (!(bln = get_array(bo, "blend", t, bnd, bs))) return NULL;
    }
    /* ---- outputs ---- */
    PyArrayObject *ins[] = {pos, nrm ? nrm : pos, tan ? tan : pos, idx, wts ? wts : pos, pal,
                            piv ? piv : pos, ctr ? ctr : pos, bln ? bln : pos, NULL};
    PyArrayObject *allowed = (!batched && PyArray_NDIM(pos) == 2) ? pos : NULL;
    npy_intp os3[3] = {F, V, 3}, os4[3] = {F, V, 4};
    int ond = batched ? 3 : 2;
    const npy_intp *s3 = batched ? os3 : os3 + 1, *s4 = batched ? os4 : os4 + 1;
    if (!get_out(oo, "out", t, ond, s3, ins, allowed)) return NULL;
    PyArrayObject *onrm = NULL, *otan = NULL;
    if ((no != Py_None) != (ono != Py_None) || (to != Py_None) != (oto != Py_None)) {
        PyErr_SetString(PyExc_ValueError, "out_normals / out_tangents must be given exactly when "
                        "normals / tangents are");
        return NULL;
    }
    if (nrm && !(onrm = get_out(ono, "out_normals", t, ond, s3, ins, NULL))) return NULL;
    if (tan && !(otan = get_out(oto, "out_tangents", t, ond, s4, ins, NULL))) return NULL;
    PyArrayObject *outs[] = {out, onrm, otan};
    for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b)
            if (outs[a] && outs[b]) {
                int r = overlaps(outs[a], outs[b]);
                if (r < 0) return NULL;
                if (r) {
                    PyErr_SetString(PyExc_ValueError, "out, out_normals and out_tangents overlap");
                    return NULL;
                }
            }
    if (threads < 1) threads = 1;

    /* ---- validate, prepare every frame, then write ---- */
    sk_stream ridx = method == 0 ? stream_of(idx, 0) : (sk_stream){NULL, 0, 0};
    size_t psize = method >= 3 ? SK_COR_PREPARED_SIZE
                   : method == 2 ? SK_DQS_PREPARED_SIZE : SK_LBS_PREPARED_SIZE;
    sk_stream cstream = stream_of(ctr, 0), bstream = {NULL, 0, 0};
    if (bln) {
        bstream.data = PyArray_BYTES(bln);
        bstream.row = PyArray_NDIM(bln) == 0 ? 0 : PyArray_STRIDE(bln, 0);
    }
    size_t esize = t == NPY_FLOAT32 ? sizeof(float) : sizeof(double);
    /* 64-byte aligned: the SIMD kernels load each joint as whole cache lines */
    void *prep_block = PyMem_RawMalloc(esize * psize * (size_t)J * (size_t)Fk + 64);
    if (!prep_block) return PyErr_NoMemory();
    /* a 4x4 palette's 3x4 parts, one frame at a time, for the prepare steps */
    void *k3 = pal_rows == 4 ? PyMem_RawMalloc(esize * 12 * (size_t)J) : NULL;
    if (pal_rows == 4 && !k3) {
        PyMem_RawFree(prep_block);
        return PyErr_NoMemory();
    }
    void *prep = (void *)(((uintptr_t)prep_block + 63) & ~(uintptr_t)63);
    sk_result r = SK_OK;
    int64_t bad = 0;
    const char *bad_name = "palette";
    npy_intp bad_frame = 0;
    const char *pal_data = PyArray_BYTES(pal);
    float dqs_sign[SK_DQS_SIGN_MAX_J * SK_DQS_SIGN_MAX_J]; /* 16 KB */
    uint64_t dqs_sign_bits[SK_DQS_SIGN_MAX_J];
    _Alignas(64) float lbs_table[12 * SK_LBS_TABLE_MAX_J];
    const void *piv_data = piv ? PyArray_DATA(piv) : NULL;
    Py_BEGIN_ALLOW_THREADS
    if (!validated && V > 0) {
        bad_name = "indices";
        if (method == 0)
            r = sk_validate_rigid_indices(&ridx, itype, V, J, &bad);
        else
            r = t == NPY_FLOAT32 ? sk_validate_influences_f32(&infl, V, J, &bad)
                                 : sk_validate_influences_f64(&infl, V, J, &bad);
        if (r == SK_ERR_NOT_FINITE || r == SK_ERR_NEGATIVE_WEIGHT) bad_name = "weights";
    }
    if (r == SK_OK && ctr && V > 0) {
        bad_name = "centers";
        r = t == NPY_FLOAT32 ? sk_validate_centers_f32(&cstream, V, &bad)
                             : sk_validate_centers_f64(&cstream, V, &bad);
    }
    if (r == SK_OK && bln && V > 0) {
        bad_name = "blend";
        r = t == NPY_FLOAT32 ? sk_validate_blend_f32(&bstream, V, &bad)
                             : sk_validate_blend_f64(&bstream, V, &bad);
    }
    for (npy_intp f = 0; r == SK_OK && f < Fk; ++f) {
        bad_name = "palette";
        bad_frame = f;
        const char *kf = pal_data + (size_t)f * J * 4 * pal_rows * esize;
        if (k3) { /* rows 0-2 of each joint */
            /* each copy's size a constant (a run-time size compiled to `rep movsq`, a
             * microsecond a call with J = 64) */
            for (npy_intp j = 0; j < J; ++j) {
                char *d = (char *)k3 + (size_t)j * 12 * esize;
                const char *s = kf + (size_t)j * 16 * esize;
                if (esize == sizeof(float))
                    memcpy(d, s, 12 * sizeof(float));
                else
                    memcpy(d, s, 12 * sizeof(double));
            }
            kf = k3;
        }
        char *pf = (char *)prep + (size_t)f * J * psize * esize;
        if (method >= 3)
            r = t == NPY_FLOAT32 ? sk_cor_prepare_f32((float *)pf, (const float *)kf, piv_data, J, &bad)
                                 : sk_cor_prepare_f64((double *)pf, (const double *)kf, piv_data, J, &bad);
        else if (method == 2)
            r = t == NPY_FLOAT32 ? sk_dqs_prepare_f32((float *)pf, (const float *)kf, piv_data, J, &bad)
                                 : sk_dqs_prepare_f64((double *)pf, (const double *)kf, piv_data, J, &bad);
        else
            r = t == NPY_FLOAT32 ? sk_lbs_prepare_f32((float *)pf, (const float *)kf, J, &bad)
                                 : sk_lbs_prepare_f64((double *)pf, (const double *)kf, J, &bad);
        if (r == SK_ERR_NEEDS_PIVOTS) bad_name = "pivots";
    }
    for (npy_intp f = 0; r == SK_OK && f < F; ++f) {
        const char *pf = (const char *)prep + (size_t)(Fk == 1 ? 0 : f) * J * psize * esize;
        npy_intp pfr = PyArray_NDIM(pos) == 3 ? f : 0;
        skin_task task = {method, t == NPY_FLOAT32, NULL};
        sk_skin_job_f32 j32;
        sk_skin_job_f64 j64;
#define FILL_JOB(J_)                                                                             \
        memset(&J_, 0, sizeof J_);                                                               \
        J_.positions = stream_of(pos, pfr);                                                      \
        J_.out_positions = stream_of(out, f);                                                    \
        J_.normals = stream_of(nrm, nrm && PyArray_NDIM(nrm) == 3 ? f : 0);                      \
        J_.out_normals = stream_of(onrm, f);                                                     \
        J_.tangents = stream_of(tan, tan && PyArray_NDIM(tan) == 3 ? f : 0);                     \
        J_.out_tangents = stream_of(otan, f);                                                    \
        J_.influences = infl;                                                                    \
        J_.rigid_indices = ridx;                                                                 \
        J_.rigid_index_type = itype;                                                             \
        J_.n_joints = J;                                                                         \
        J_.normal_rule = normal_rule ? SK_NORMALS_BLEND : SK_NORMALS_JOINT;                      \
        J_.centers = cstream;                                                                    \
        J_.blend = bstream;                                                                      \
        J_.stream = V >= (t == NPY_FLOAT32 ? SK_STREAM_MIN : SK_STREAM_MIN_F64);
        /* DQS's hemisphere signs, once per frame rather than per range; for CoR and blend from
         * the DQS block of sk_cor_prepare's records */
        const int signs = method >= 2 && J <= SK_DQS_SIGN_MAX_J;
        const ptrdiff_t qfirst = method == 2 ? 0 : SK_COR_DQS;
        const ptrdiff_t qstride = method == 2 ? SK_DQS_PREPARED_SIZE : SK_COR_PREPARED_SIZE;
        if (task.f32) {
            FILL_JOB(j32)
            j32.prepared = (const float *)pf;
            if (method <= 1 && nrm) /* rigid and LBS normals: see sk_lbs_cof_is_matrix */
                j32.cof_matrix = sk_lbs_cof_is_matrix_f32(j32.prepared, J) ? 1 : -1;
            /* small palettes: LBS by lookups, in calls big enough to repay the table (about
             * 0.1 us against about 0.35 ns a vertex saved) */
            if (method == 1 && V >= SK_LBS_TABLE_MIN_V &&
                sk_lbs_table_f32(lbs_table, j32.prepared, J))
                j32.lbs_table = lbs_table;
            if (signs) {
                if (sk_dqs_signs_f32(dqs_sign, dqs_sign_bits, j32.prepared + qfirst, qstride, J))
                    j32.dqs_sign_bits = dqs_sign_bits;
                j32.dqs_sign = dqs_sign;
            }
            task.job = &j32;
        } else {
            FILL_JOB(j64)
            j64.prepared = (const double *)pf;
            if (method <= 1 && nrm)
                j64.cof_matrix = sk_lbs_cof_is_matrix_f64(j64.prepared, J) ? 1 : -1;
            if (signs) {
                if (sk_dqs_signs_f64(dqs_sign, dqs_sign_bits, j64.prepared + qfirst, qstride, J))
                    j64.dqs_sign_bits = dqs_sign_bits;
                j64.dqs_sign = dqs_sign;
            }
            task.job = &j64;
        }
#undef FILL_JOB
        sk_parallel_for(threads, V, SKIN_GRAIN, skin_range, &task);
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(prep_block);
    PyMem_RawFree(k3);
    if (r != SK_OK && strcmp(bad_name, "centers") == 0) {
        PyErr_Format(PyExc_ValueError, "centers: row %lld holds inf or mixes NaN and numbers (a "
                     "row is all finite, or all NaN for a vertex without a center)", (long long)bad);
        return NULL;
    }
    if (r != SK_OK && strcmp(bad_name, "blend") == 0) {
        PyErr_Format(PyExc_ValueError, "blend must be in [0, 1] (NaN or out of range at vertex "
                     "%lld)", (long long)bad);
        return NULL;
    }
    if (r == SK_ERR_NOT_FINITE && strcmp(bad_name, "palette") == 0) {
        /* sk_*_prepare check the pivots too: name the one that is not finite */
        int pivot_bad = 0;
        for (int c = 0; piv && c < 3; ++c) {
            const char *e = PyArray_BYTES(piv) + (bad * 3 + c) * esize;
            pivot_bad |= t == NPY_FLOAT32 ? !isfinite(*(const float *)e)
                                          : !isfinite(*(const double *)e);
        }
        char frame[48] = "";
        if (!pivot_bad && Fk > 1)
            snprintf(frame, sizeof frame, "frame %zd, ", (Py_ssize_t)bad_frame);
        PyErr_Format(PyExc_ValueError, "%s: NaN or inf at %sjoint %lld%s",
                     pivot_bad ? "pivots" : "palette", frame, (long long)bad,
                     t == NPY_FLOAT32 ? " (in float32, the positions' dtype)" : "");
        return NULL;
    }
    if (r != SK_OK) return raise_result(r, bad_name, bad);
    Py_RETURN_NONE;
}

/* validate_influences(indices (V,K), weights (V,K), n_joints, float_type) -> None */
static PyObject *py_validate_influences(PyObject *self, PyObject *args)
{
    PyObject *io, *wo;
    Py_ssize_t J;
    if (!PyArg_ParseTuple(args, "OOn", &io, &wo, &J)) return NULL;
    if (J < 1) {
        PyErr_SetString(PyExc_ValueError, "n_joints must be >= 1");
        return NULL;
    }
    sk_influences infl;
    PyArrayObject *w = get_influences(io, wo, -1, -1, &infl);
    if (!w) return NULL;
    npy_intp V = PyArray_DIM(w, 0);
    int wt = PyArray_TYPE(w);
    int64_t bad = 0;
    sk_result r;
    Py_BEGIN_ALLOW_THREADS
    r = wt == NPY_FLOAT64 ? sk_validate_influences_f64(&infl, V, J, &bad)
                          : sk_validate_influences_f32(&infl, V, J, &bad);
    Py_END_ALLOW_THREADS
    if (r != SK_OK)
        return raise_result(r, r == SK_ERR_INDEX_RANGE ? "indices" : "weights", bad);
    Py_RETURN_NONE;
}

static int simd_of_name(const char *name, sk_simd *path)
{
    for (int p = SK_SIMD_SCALAR; p <= SK_SIMD_AVX512; ++p)
        if (strcmp(name, sk_simd_name((sk_simd)p)) == 0) {
            *path = (sk_simd)p;
            return 1;
        }
    return 0;
}

/* simd_path() -> "avx512" | "avx2" | "scalar", the path the kernels take now. */
static PyObject *py_simd_path(PyObject *self, PyObject *noargs)
{
    return PyUnicode_FromString(sk_simd_name(sk_simd_current()));
}

/* simd_paths() -> the paths this build and CPU can run, best last. */
/* The names of the SIMD paths p for which has(p) holds (sk_simd_supported, sk_simd_built), in
 * order: a new list. */
static PyObject *simd_names(int (*has)(sk_simd))
{
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    for (int p = SK_SIMD_SCALAR; p <= SK_SIMD_AVX512; ++p) {
        if (!has((sk_simd)p)) continue;
        PyObject *name = PyUnicode_FromString(sk_simd_name((sk_simd)p));
        if (!name || PyList_Append(list, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(name);
    }
    return list;
}

static PyObject *py_simd_paths(PyObject *self, PyObject *noargs)
{
    return simd_names(sk_simd_supported);
}

/* set_simd_path(name) -> the previous name.  For tests and benchmarks: process-wide, not while
 * kernels run in other threads.  ValueError for an unknown name or one this CPU cannot run. */
static PyObject *py_set_simd_path(PyObject *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    sk_simd path, prev = sk_simd_current();
    if (!simd_of_name(name, &path)) {
        PyErr_Format(PyExc_ValueError, "SIMD path must be 'scalar', 'avx2' or 'avx512', got '%s'",
                     name);
        return NULL;
    }
    if (sk_simd_select(path) != SK_OK) {
        PyErr_Format(PyExc_ValueError, "SIMD path '%s' is not supported by this CPU or build "
                     "(best: '%s')", name, sk_simd_name(sk_simd_best()));
        return NULL;
    }
    return PyUnicode_FromString(sk_simd_name(prev));
}

/* SKINKIT_SIMD=scalar|avx2|avx512 at import forces a path; a name this machine cannot run, or an
 * unknown one, warns and keeps the best path (an import must not fail over a tuning knob). */
static int simd_from_environment(void)
{
    const char *name = getenv("SKINKIT_SIMD");
    if (!name || !*name || strcmp(name, "auto") == 0) return 0;
    sk_simd path;
    if (!simd_of_name(name, &path))
        return PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "SKINKIT_SIMD=%s is not one of scalar, "
                                "avx2, avx512, auto; using %s", name,
                                sk_simd_name(sk_simd_best()));
    if (sk_simd_select(path) != SK_OK)
        return PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "SKINKIT_SIMD=%s is not supported by "
                                "this CPU or build; using %s", name, sk_simd_name(sk_simd_best()));
    return 0;
}

/* === kernels: end === */

/* ------------------------------------------------------------------------------------------
 * Binding and weight tools
 * ---------------------------------------------------------------------------------------- */

/* The Python layer (skinkit/bind.py) allocates every output and builds the bones tuple
 * (joints (J, 3) f64, parents (J,) i64, seg_start (J + 1,) i64, seg_end (S, 3) f64); here the
 * vertices are checked (never converted: any strides, float32 / float64) and the GIL released. */
static int get_bones(PyObject *o, sk_bones *b)
{
    PyObject *jo, *po, *so, *eo;
    if (!PyTuple_Check(o) || !PyArg_ParseTuple(o, "OOOO", &jo, &po, &so, &eo)) {
        PyErr_SetString(PyExc_TypeError, "bones must be (joints, parents, seg_start, seg_end)");
        return -1;
    }
    npy_intp s3[2] = {-1, 3};
    PyArrayObject *j = get_small(jo, "joints", NPY_FLOAT64, 2, s3);
    if (!j) return -1;
    npy_intp J = PyArray_DIM(j, 0), sJ[1] = {J}, sJ1[1] = {J + 1};
    PyArrayObject *p = get_small(po, "parents", NPY_INT64, 1, sJ);
    PyArrayObject *s = p ? get_small(so, "seg_start", NPY_INT64, 1, sJ1) : NULL;
    PyArrayObject *e = s ? get_small(eo, "seg_end", NPY_FLOAT64, 2, s3) : NULL;
    if (!e) return -1;
    if (J < 1) {
        PyErr_SetString(PyExc_ValueError, "skeleton: binding needs at least one joint (J = 0)");
        return -1;
    }
    const int64_t *ss = PyArray_DATA(s), *pp = PyArray_DATA(p);
    if (ss[0] != 0 || ss[J] != PyArray_DIM(e, 0)) {
        PyErr_SetString(PyExc_ValueError, "seg_start must run from 0 to len(seg_end)");
        return -1;
    }
    for (npy_intp i = 0; i < J; ++i) {
        if (ss[i + 1] <= ss[i]) {
            PyErr_Format(PyExc_ValueError, "seg_start: bone %zd has no segment", (Py_ssize_t)i);
            return -1;
        }
        if (pp[i] < -1 || pp[i] >= J) {
            PyErr_Format(PyExc_ValueError, "parents: joint %zd has parent %lld", (Py_ssize_t)i,
                         (long long)pp[i]);
            return -1;
        }
    }
    b->joints = PyArray_DATA(j);
    b->parents = pp;
    b->seg_start = ss;
    b->seg_end = PyArray_DATA(e);
    b->n_joints = J;
    return 0;
}

typedef struct bind_io {
    int type;                    /* NPY_FLOAT32 or NPY_FLOAT64 */
    const void *vp;              /* vertices */
    ptrdiff_t row, elem;
    int64_t n;                   /* V */
    int32_t *idx;
    void *w;
    sk_bind_explain ex;
    const sk_bind_explain *exp;  /* &ex or NULL */
} bind_io;

/* vertices (V, 3) float, indices (V, K) int32, weights (V, K) of the vertices' dtype, info None
 * or (bones (V, K) int32, distances (V, K) f64, t (V, K) f64), all outputs C-contiguous. */
static int get_bind_io(bind_io *a, PyObject *vo, PyObject *io, PyObject *wo, PyObject *xo,
                       npy_intp K)
{
    npy_intp s3[2] = {-1, 3};
    PyArrayObject *v = get_array(vo, "vertices", -1, 2, s3);
    if (!v) return -1;
    npy_intp V = PyArray_DIM(v, 0), sk[2] = {V, K};
    PyArrayObject *ins[] = {v, NULL};
    a->type = PyArray_TYPE(v);
    PyArrayObject *idx = get_small(io, "indices", NPY_INT32, 2, sk);
    if (!idx || !get_out(io, "indices", NPY_INT32, 2, sk, ins, NULL)) return -1;
    PyArrayObject *w = get_small(wo, "weights", a->type, 2, sk);
    if (!w || !get_out(wo, "weights", a->type, 2, sk, ins, NULL)) return -1;
    a->vp = PyArray_DATA(v);
    a->row = PyArray_STRIDE(v, 0);
    a->elem = PyArray_STRIDE(v, 1);
    a->n = V;
    a->idx = PyArray_DATA(idx);
    a->w = PyArray_DATA(w);
    a->exp = NULL;
    if (xo != Py_None) {
        PyObject *bo, *dobj, *to;
        if (!PyTuple_Check(xo) || !PyArg_ParseTuple(xo, "OOO", &bo, &dobj, &to)) {
            PyErr_SetString(PyExc_TypeError, "info must be None or (bones, distances, t)");
            return -1;
        }
        PyArrayObject *b = get_small(bo, "info bones", NPY_INT32, 2, sk);
        if (!b || !get_out(bo, "info bones", NPY_INT32, 2, sk, ins, NULL)) return -1;
        PyArrayObject *d = get_small(dobj, "info distances", NPY_FLOAT64, 2, sk);
        if (!d || !get_out(dobj, "info distances", NPY_FLOAT64, 2, sk, ins, NULL)) return -1;
        PyArrayObject *t = get_small(to, "info t", NPY_FLOAT64, 2, sk);
        if (!t || !get_out(to, "info t", NPY_FLOAT64, 2, sk, ins, NULL)) return -1;
        a->ex.bones = PyArray_DATA(b);
        a->ex.distances = PyArray_DATA(d);
        a->ex.t = PyArray_DATA(t);
        a->exp = &a->ex;
    }
    return 0;
}

/* Call the f32 or f64 binder `fn` with the usual leading arguments. */
#define SK_BIND_CALL(a, fn, ...)                                                               \
    ((a).type == NPY_FLOAT32                                                                   \
         ? fn##_f32((a).idx, (float *)(a).w, (a).exp, (const float *)(a).vp, (a).row,           \
                    (a).elem, (a).n, __VA_ARGS__)                                               \
         : fn##_f64((a).idx, (double *)(a).w, (a).exp, (const double *)(a).vp, (a).row,         \
                    (a).elem, (a).n, __VA_ARGS__))

static PyObject *bind_result(sk_result r, int64_t bad, const char *arg)
{
    if (r == SK_OK) Py_RETURN_NONE;
    if (r == SK_ERR_NOT_FINITE) {
        PyErr_Format(PyExc_ValueError, "vertices: NaN or inf at vertex %lld", (long long)bad);
        return NULL;
    }
    if (r == SK_ERR_TOO_LARGE) {
        PyErr_Format(PyExc_ValueError, "vertices: coordinate beyond 1e150 at vertex %lld "
                     "(squared distances would overflow)", (long long)bad);
        return NULL;
    }
    return raise_result(r, arg, bad);
}

/* bind_nearest(indices, weights, info, vertices, bones, to_bone) */
static PyObject *py_bind_nearest(PyObject *self, PyObject *args)
{
    PyObject *io, *wo, *xo, *vo, *bo;
    int to_bone;
    bind_io a;
    sk_bones b;
    if (!PyArg_ParseTuple(args, "OOOOOp", &io, &wo, &xo, &vo, &bo, &to_bone)) return NULL;
    if (get_bones(bo, &b) < 0 || get_bind_io(&a, vo, io, wo, xo, 1) < 0) return NULL;
    int64_t bad = 0;
    sk_result r;
    Py_BEGIN_ALLOW_THREADS
    r = SK_BIND_CALL(a, sk_bind_nearest, &b, to_bone, &bad);
    Py_END_ALLOW_THREADS
    return bind_result(r, bad, "skeleton");
}

/* bind_proximity(indices, weights, info, vertices, bones, k, power, to_bone) */
static PyObject *py_bind_proximity(PyObject *self, PyObject *args)
{
    PyObject *io, *wo, *xo, *vo, *bo;
    long long k;
    double power;
    int to_bone;
    bind_io a;
    sk_bones b;
    if (!PyArg_ParseTuple(args, "OOOOOLdp", &io, &wo, &xo, &vo, &bo, &k, &power, &to_bone))
        return NULL;
    if (k < 1) {
        PyErr_Format(PyExc_ValueError, "k must be >= 1, got %lld", k);
        return NULL;
    }
    if (get_bones(bo, &b) < 0 || get_bind_io(&a, vo, io, wo, xo, (npy_intp)k) < 0) return NULL;
    void *scratch = PyMem_RawMalloc(sk_bind_scratch_size(k));
    if (!scratch) return PyErr_NoMemory();
    int64_t bad = 0;
    sk_result r;
    Py_BEGIN_ALLOW_THREADS
    r = SK_BIND_CALL(a, sk_bind_proximity, &b, k, power, to_bone, scratch, &bad);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    return bind_result(r, bad, "power");
}

/* bind_sphere_radii(radii (J,) f64, vertices, bones, multiplier) */
static PyObject *py_bind_sphere_radii(PyObject *self, PyObject *args)
{
    PyObject *ro, *vo, *bo;
    double multiplier;
    sk_bones b;
    if (!PyArg_ParseTuple(args, "OOOd", &ro, &vo, &bo, &multiplier)) return NULL;
    if (get_bones(bo, &b) < 0) return NULL;
    npy_intp s3[2] = {-1, 3}, sJ[1] = {b.n_joints};
    PyArrayObject *v = get_array(vo, "vertices", -1, 2, s3);
    if (!v) return NULL;
    PyArrayObject *ins[] = {v, NULL};
    PyArrayObject *radii = get_small(ro, "radii", NPY_FLOAT64, 1, sJ);
    if (!radii || !get_out(ro, "radii", NPY_FLOAT64, 1, sJ, ins, NULL)) return NULL;
    int64_t bad = 0;
    sk_result r;
    double *rp = PyArray_DATA(radii);
    const void *vp = PyArray_DATA(v);
    ptrdiff_t row = PyArray_STRIDE(v, 0), elem = PyArray_STRIDE(v, 1);
    int64_t n = PyArray_DIM(v, 0);
    int t = PyArray_TYPE(v);
    Py_BEGIN_ALLOW_THREADS
    r = t == NPY_FLOAT32 ? sk_bind_sphere_radii_f32(rp, vp, row, elem, n, &b, multiplier, &bad)
                         : sk_bind_sphere_radii_f64(rp, vp, row, elem, n, &b, multiplier, &bad);
    Py_END_ALLOW_THREADS
    return bind_result(r, bad, "multiplier");
}

/* bind_volume_spheres(indices, weights, info, vertices, bones, radii (J,) f64) */
static PyObject *py_bind_volume_spheres(PyObject *self, PyObject *args)
{
    PyObject *io, *wo, *xo, *vo, *bo, *ro;
    bind_io a;
    sk_bones b;
    if (!PyArg_ParseTuple(args, "OOOOOO", &io, &wo, &xo, &vo, &bo, &ro)) return NULL;
    if (get_bones(bo, &b) < 0) return NULL;
    npy_intp sJ[1] = {b.n_joints};
    PyArrayObject *radii = get_small(ro, "radii", NPY_FLOAT64, 1, sJ);
    if (!radii || get_bind_io(&a, vo, io, wo, xo, 2) < 0) return NULL;
    int64_t bad = 0;
    sk_result r;
    const double *rp = PyArray_DATA(radii);
    Py_BEGIN_ALLOW_THREADS
    r = SK_BIND_CALL(a, sk_bind_volume_spheres, &b, rp, &bad);
    Py_END_ALLOW_THREADS
    return bind_result(r, bad, "radii");
}

/* bind_projection(indices, weights, info, vertices, bones) */
static PyObject *py_bind_projection(PyObject *self, PyObject *args)
{
    PyObject *io, *wo, *xo, *vo, *bo;
    bind_io a;
    sk_bones b;
    if (!PyArg_ParseTuple(args, "OOOOO", &io, &wo, &xo, &vo, &bo)) return NULL;
    if (get_bones(bo, &b) < 0 || get_bind_io(&a, vo, io, wo, xo, 1) < 0) return NULL;
    int64_t bad = 0;
    sk_result r;
    Py_BEGIN_ALLOW_THREADS
    r = SK_BIND_CALL(a, sk_bind_projection, &b, &bad);
    Py_END_ALLOW_THREADS
    return bind_result(r, bad, "skeleton");
}

/* bind_height_bands(indices, weights, info, vertices, chain (n,) i64, heights (n,) f64,
 *                   origin (3,) f64, axis (3,) f64) */
static PyObject *py_bind_height_bands(PyObject *self, PyObject *args)
{
    PyObject *io, *wo, *xo, *vo, *co, *ho, *oo, *ao;
    bind_io a;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &io, &wo, &xo, &vo, &co, &ho, &oo, &ao)) return NULL;
    PyArrayObject *chain = get_small(co, "chain", NPY_INT64, 1, NULL);
    if (!chain) return NULL;
    npy_intp sn[1] = {PyArray_DIM(chain, 0)}, s3[1] = {3};
    PyArrayObject *h = get_small(ho, "heights", NPY_FLOAT64, 1, sn);
    PyArrayObject *org = h ? get_small(oo, "origin", NPY_FLOAT64, 1, s3) : NULL;
    PyArrayObject *ax = org ? get_small(ao, "axis", NPY_FLOAT64, 1, s3) : NULL;
    if (!ax || get_bind_io(&a, vo, io, wo, xo, 2) < 0) return NULL;
    int64_t bad = 0;
    sk_result r;
    const int64_t *cp = PyArray_DATA(chain);
    const double *hp = PyArray_DATA(h), *op = PyArray_DATA(org), *axp = PyArray_DATA(ax);
    int64_t n = sn[0];
    Py_BEGIN_ALLOW_THREADS
    r = SK_BIND_CALL(a, sk_bind_height_bands, cp, hp, n, op, axp, &bad);
    Py_END_ALLOW_THREADS
    return bind_result(r, bad, "heights");
}

/* bind_envelope(indices, weights, info, vertices, bones, head_radius (J,), tail_radius (J,),
 *               distance (J,), k, normalize) */
static PyObject *py_bind_envelope(PyObject *self, PyObject *args)
{
    PyObject *io, *wo, *xo, *vo, *bo, *hro, *tro, *dso;
    long long k;
    int normalize;
    bind_io a;
    sk_bones b;
    if (!PyArg_ParseTuple(args, "OOOOOOOOLp", &io, &wo, &xo, &vo, &bo, &hro, &tro, &dso, &k,
                          &normalize))
        return NULL;
    if (k < 1) {
        PyErr_Format(PyExc_ValueError, "k must be >= 1, got %lld", k);
        return NULL;
    }
    if (get_bones(bo, &b) < 0) return NULL;
    npy_intp sJ[1] = {b.n_joints};
    PyArrayObject *hr = get_small(hro, "head_radius", NPY_FLOAT64, 1, sJ);
    PyArrayObject *tr = hr ? get_small(tro, "tail_radius", NPY_FLOAT64, 1, sJ) : NULL;
    PyArrayObject *ds = tr ? get_small(dso, "distance", NPY_FLOAT64, 1, sJ) : NULL;
    if (!ds || get_bind_io(&a, vo, io, wo, xo, (npy_intp)k) < 0) return NULL;
    void *scratch = PyMem_RawMalloc(sk_bind_scratch_size(k));
    if (!scratch) return PyErr_NoMemory();
    int64_t bad = 0;
    sk_result r;
    const double *hp = PyArray_DATA(hr), *tp = PyArray_DATA(tr), *dp = PyArray_DATA(ds);
    Py_BEGIN_ALLOW_THREADS
    r = SK_BIND_CALL(a, sk_bind_envelope, &b, hp, tp, dp, k, normalize, scratch, &bad);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    return bind_result(r, bad, "head_radius, tail_radius or distance");
}

/* === bind: end === */

/* ------------------------------------------------------------------------------------------
 * Centers of rotation (the precompute)
 * ---------------------------------------------------------------------------------------- */

/* centers_of_rotation(out (V,3), positions (V,3), faces (T,3|4), indices (V,K), weights (V,K),
 *                     sigma, subdivide, threads, validated) -> None.  faces of an index dtype
 * (skinkit/centers.py converts other integer dtypes); everything checked before out is written. */
static PyObject *py_centers_of_rotation(PyObject *self, PyObject *args)
{
    PyObject *oo, *po, *fo, *io, *wo;
    double sigma, subdivide;
    int threads, validated;
    if (!PyArg_ParseTuple(args, "OOOOOddip", &oo, &po, &fo, &io, &wo, &sigma, &subdivide,
                          &threads, &validated))
        return NULL;
    npy_intp s3[2] = {-1, 3};
    PyArrayObject *pos = get_array(po, "positions", -1, 2, s3);
    if (!pos) return NULL;
    int t = PyArray_TYPE(pos);
    npy_intp V = PyArray_DIM(pos, 0);
    if (!PyArray_Check(fo)) return (PyObject *)get_array(fo, "faces", -1, 2, NULL);
    PyArrayObject *faces = (PyArrayObject *)fo;
    sk_index_type ftype;
    if (!index_type_of(faces, &ftype)) {
        PyErr_Format(PyExc_TypeError, "faces has dtype %S, expected an integer dtype",
                     (PyObject *)PyArray_DESCR(faces));
        return NULL;
    }
    if (!get_array(fo, "faces", PyArray_TYPE(faces), 2, NULL)) return NULL;
    int corners = (int)PyArray_DIM(faces, 1);
    if (corners != 3 && corners != 4) {
        PyErr_Format(PyExc_ValueError, "faces must have shape (T, 3) or (T, 4), got (%zd, %d)",
                     (Py_ssize_t)PyArray_DIM(faces, 0), corners);
        return NULL;
    }
    sk_influences infl;
    PyArrayObject *w = get_influences(io, wo, V, t, &infl);
    if (!w) return NULL;
    if (!(isfinite(sigma) && sigma > 0.0)) {
        PyErr_Format(PyExc_ValueError, "sigma must be finite and > 0, got %g", sigma);
        return NULL;
    }
    if (!(isfinite(subdivide) && subdivide >= 0.0)) {
        PyErr_Format(PyExc_ValueError, "subdivide must be a finite threshold > 0, got %g",
                     subdivide);
        return NULL;
    }
    npy_intp os[2] = {V, 3};
    PyArrayObject *ins[] = {pos, faces, (PyArrayObject *)io, w, NULL};
    PyArrayObject *out = get_out(oo, "out", t, 2, os, ins, NULL);
    if (!out) return NULL;
    if (threads < 1) threads = 1;
    sk_centers_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    mesh.positions = stream_of(pos, 0);
    mesh.n_vertices = V;
    mesh.faces = stream_of(faces, 0);
    mesh.face_type = ftype;
    mesh.corners = corners;
    mesh.n_faces = PyArray_DIM(faces, 0);
    mesh.influences = infl;
    mesh.sigma = sigma;
    mesh.subdivide = subdivide;
    int64_t n_tri = corners == 4 ? 2 * mesh.n_faces : mesh.n_faces;
    void *prep = PyMem_RawMalloc(sk_centers_prepare_size(V, infl.k, n_tri));
    if (!prep) return PyErr_NoMemory();
    void *scratch = NULL;
    sk_centers_plan plan;
    sk_result r = SK_OK;
    int64_t bad = 0;
    int no_memory = 0;
    const char *bad_name = "indices";
    Py_BEGIN_ALLOW_THREADS
    if (!validated && V > 0) {
        /* no palette here: only a negative index is out of range (IndexError); one at or past
         * the precompute's limit is refused by sk_centers_prepare, as for an Influences */
        r = t == NPY_FLOAT32 ? sk_validate_influences_f32(&infl, V, INT64_MAX, &bad)
                             : sk_validate_influences_f64(&infl, V, INT64_MAX, &bad);
        if (r == SK_ERR_NOT_FINITE || r == SK_ERR_NEGATIVE_WEIGHT) bad_name = "weights";
    }
    if (r == SK_OK) {
        bad_name = "faces";
        bad = -1;
        r = t == NPY_FLOAT32 ? sk_centers_prepare_f32(prep, &plan, &mesh, threads, &bad)
                             : sk_centers_prepare_f64(prep, &plan, &mesh, threads, &bad);
    }
    if (r == SK_OK && !(scratch = PyMem_RawMalloc(plan.scratch_size))) no_memory = 1;
    if (r == SK_OK && scratch)
        r = t == NPY_FLOAT32
                ? sk_centers_f32(stream_of(out, 0), &mesh, prep, &plan, scratch, threads)
                : sk_centers_f64(stream_of(out, 0), &mesh, prep, &plan, scratch, threads);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    PyMem_RawFree(prep);
    if (no_memory) return PyErr_NoMemory();
    if (r == SK_OK) Py_RETURN_NONE;
    if (r == SK_ERR_NOT_FINITE && bad_name[0] == 'f') {
        const char *row = (const char *)PyArray_DATA(pos) + bad * PyArray_STRIDE(pos, 0);
        int finite = 1;
        for (int c = 0; c < 3; ++c) {
            const char *e = row + c * PyArray_STRIDE(pos, 1);
            finite &= t == NPY_FLOAT32 ? isfinite(*(const float *)e) : isfinite(*(const double *)e);
        }
        PyErr_Format(PyExc_ValueError,
                     finite ? "positions: coordinate beyond 1e150 at vertex %lld (triangle areas "
                              "would overflow)"
                            : "positions: NaN or inf at vertex %lld",
                     (long long)bad);
        return NULL;
    }
    if (r == SK_ERR_INDEX_RANGE && bad_name[0] == 'f') {
        PyErr_Format(PyExc_IndexError, "faces: vertex index outside [0, %zd) at face %lld",
                     (Py_ssize_t)V, (long long)bad);
        return NULL;
    }
    if (r == SK_ERR_TOO_LARGE && bad >= 0) {
        PyErr_Format(PyExc_ValueError, "indices: joint index %lld is too large for centers of "
                     "rotation (at most 2^24 joints)", (long long)bad);
        return NULL;
    }
    if (r == SK_ERR_TOO_LARGE) return PyErr_NoMemory();
    if (r == SK_ERR_BAD_ARGUMENT) return raise_result(r, "faces, sigma or subdivide", bad);
    return raise_result(r, bad_name, bad);
}

/* === cor centers: end === */

/* ------------------------------------------------------------------------------------------
 * Module
 * ---------------------------------------------------------------------------------------- */

/* NumPy 2 headers name the API version the module targets; older headers do not. */
#ifdef NPY_FEATURE_VERSION_STRING
#define SK_NUMPY_TARGET NPY_FEATURE_VERSION_STRING
#else
#define SK_NUMPY_TARGET "pre-2.0 headers"
#endif

#ifndef SK_SIMD_BUILD
#define SK_SIMD_BUILD "unknown" /* CMakeLists.txt defines it: SKINKIT_SIMD_BUILD */
#endif

static PyObject *py_build_info(PyObject *self, PyObject *noargs)
{
    /* stream_min_*: calls of at least this many vertices write non-temporal stores (sk.h);
     * lbs_table_min: float32 LBS calls of at least this many vertices and at most
     * lbs_table_max_joints joints skin by lookups on AVX-512 (sk_lbs_table_f32) */
    PyObject *info = Py_BuildValue("{s:s,s:s,s:i,s:s,s:n,s:n,s:n,s:n,s:s}", "compiler",
#if defined(__clang__)
                         "clang " __clang_version__,
#elif defined(__GNUC__)
                         "gcc " __VERSION__,
#else
                         "unknown",
#endif
                         "numpy_build_api", SK_NUMPY_TARGET, "c_standard",
                         (int)(__STDC_VERSION__), "build_date", __DATE__, "stream_min_float32",
                         (Py_ssize_t)SK_STREAM_MIN, "stream_min_float64",
                         (Py_ssize_t)SK_STREAM_MIN_F64, "lbs_table_min",
                         (Py_ssize_t)SK_LBS_TABLE_MIN_V, "lbs_table_max_joints",
                         (Py_ssize_t)SK_LBS_TABLE_MAX_J, "simd_build", SK_SIMD_BUILD);
    if (!info) return NULL;
    /* simd_built: the paths this build compiled, whether or not this CPU runs them */
    PyObject *built = simd_names(sk_simd_built);
    if (!built || PyDict_SetItemString(info, "simd_built", built) < 0) {
        Py_XDECREF(built);
        Py_DECREF(info);
        return NULL;
    }
    Py_DECREF(built);
    return info;
}

static PyMethodDef methods[] = {
    {"validate_parents", py_validate_parents, METH_VARARGS, "validate_parents(parents)"},
    {"fk", py_fk, METH_VARARGS, "fk(out, local, parents, root) -> out"},
    {"inverse_bind", py_inverse_bind, METH_VARARGS, "inverse_bind(out, bind_globals) -> out"},
    {"pivots", py_pivots, METH_VARARGS, "pivots(out, inverse_bind) -> out"},
    {"palette", py_palette, METH_VARARGS, "palette(out, globals, inverse_bind, pre, post) -> out"},
    {"build_info", py_build_info, METH_NOARGS, "build_info() -> dict"},
    {"skin", py_skin, METH_VARARGS, "skin(method, positions, normals, tangents, out, out_normals, out_tangents, indices, weights, palette, pivots, n_joints, normal_rule, threads, validated)"},
    {"validate_influences", py_validate_influences, METH_VARARGS, "validate_influences(indices, weights, n_joints)"},
    {"simd_path", py_simd_path, METH_NOARGS, "simd_path() -> 'avx512' | 'avx2' | 'scalar'"},
    {"simd_paths", py_simd_paths, METH_NOARGS, "simd_paths() -> list of the paths this machine runs"},
    {"set_simd_path", py_set_simd_path, METH_VARARGS, "set_simd_path(name) -> previous name"},
    /* === kernels: methods === */
    {"bind_nearest", py_bind_nearest, METH_VARARGS,
     "bind_nearest(indices, weights, info, vertices, bones, to_bone)"},
    {"bind_proximity", py_bind_proximity, METH_VARARGS,
     "bind_proximity(indices, weights, info, vertices, bones, k, power, to_bone)"},
    {"bind_sphere_radii", py_bind_sphere_radii, METH_VARARGS,
     "bind_sphere_radii(radii, vertices, bones, multiplier)"},
    {"bind_volume_spheres", py_bind_volume_spheres, METH_VARARGS,
     "bind_volume_spheres(indices, weights, info, vertices, bones, radii)"},
    {"bind_projection", py_bind_projection, METH_VARARGS,
     "bind_projection(indices, weights, info, vertices, bones)"},
    {"bind_height_bands", py_bind_height_bands, METH_VARARGS,
     "bind_height_bands(indices, weights, info, vertices, chain, heights, origin, axis)"},
    {"bind_envelope", py_bind_envelope, METH_VARARGS,
     "bind_envelope(indices, weights, info, vertices, bones, head_radius, tail_radius, "
     "distance, k, normalize)"},
    /* === bind: methods === */
    {"centers_of_rotation", py_centers_of_rotation, METH_VARARGS,
     "centers_of_rotation(out, positions, faces, indices, weights, sigma, subdivide, threads, "
     "validated)"},
    /* === cor centers: methods === */
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_core",
                                       "skinkit's C core (see csrc/sk.h).", -1, methods};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&moduledef);
    if (m && simd_from_environment() < 0) Py_CLEAR(m);
    return m;
}
