/* fuzz_common.h -- shared helpers of skinkit's libFuzzer targets.
 *
 * A target decodes the fuzzer's bytes into sizes, options, strides and values, lays every array
 * out in a heap block of exactly the bytes it needs (so AddressSanitizer sees one byte past any
 * end), calls a core entry point within its documented contract, and checks what the header
 * promises beyond memory safety:
 *   - on an error code nothing was written to the outputs (they still hold a sentinel pattern);
 *   - bytes of a strided output block that are not elements of the output (the gaps of an
 *     interleaved vertex buffer) are never written;
 *   - the inputs are never modified.
 * A broken promise calls FZ_FAIL, which aborts: libFuzzer records it as a crash.
 *
 * Sizes are capped (joints, vertices, frames, influences) so one input runs in microseconds and
 * the fuzzer spends its time on shapes and values, not on big loops.  Asserts are live in the
 * fuzz build (no NDEBUG): the harness keeps to each function's documented preconditions (non-NULL
 * pointers, scratch sizes), so an assert that fires is a finding.
 */
#ifndef SK_FUZZ_COMMON_H
#define SK_FUZZ_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk.h"

#define FZ_FAIL(...)                                                                           \
    do {                                                                                       \
        fprintf(stderr, "fuzz check failed at %s:%d: ", __FILE__, __LINE__);                   \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fputc('\n', stderr);                                                                   \
        abort();                                                                               \
    } while (0)

/* The fuzzer's bytes, consumed front to back; past the end every read gives 0. */
typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static uint64_t fz_bits(fz_in *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
        v <<= 8;
        if (in->n) {
            v |= *in->p++;
            --in->n;
        }
    }
    return v;
}

/* An integer in [lo, hi]. */
static int64_t fz_range(fz_in *in, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    int bytes = span <= 0x100 ? 1 : span <= 0x10000 ? 2 : 4;
    return lo + (int64_t)(fz_bits(in, bytes) % span);
}

static int fz_bool(fz_in *in) { return (int)(fz_bits(in, 1) & 1); }

/* A double drawn to reach the edges: small integers and simple fractions most of the time (so
 * the fuzzer can build rotations, scales and exact ties), sometimes NaN, +-inf, +-0, denormals,
 * huge or raw bit patterns. */
static double fz_double(fz_in *in)
{
    unsigned kind = (unsigned)fz_bits(in, 1);
    switch (kind % 16) {
    case 0: return NAN;
    case 1: return (kind & 16) ? INFINITY : -INFINITY;
    case 2: return (kind & 16) ? 0.0 : -0.0;
    case 3: return (kind & 16) ? 4.9e-324 : -2.2e-308;
    case 4: return (kind & 16) ? 1e300 : -3.4e38;
    case 5: {
        uint64_t b = fz_bits(in, 8);
        double d;
        memcpy(&d, &b, sizeof d);
        return d;
    }
    case 6: case 7: case 8:
        return (double)(int8_t)fz_bits(in, 1) / 16.0;
    default:
        return (double)(int8_t)fz_bits(in, 1) / 4.0 + (double)(int16_t)fz_bits(in, 2) * 1e-4;
    }
}

/* A value that is finite most of the time, and only rarely one of fz_double's edge cases; used
 * where an edge value would stop the call at validation every time. */
static double fz_mostly_finite(fz_in *in)
{
    if ((fz_bits(in, 1) & 15) == 0) return fz_double(in);
    return (double)(int8_t)fz_bits(in, 1) / 8.0;
}

/* A heap block holding exactly `bytes` bytes (at least one, so malloc never returns the shared
 * zero-size block), filled with a sentinel pattern. */
typedef struct fz_block {
    unsigned char *mem;
    size_t bytes;
} fz_block;

#define FZ_SENTINEL 0xA5

static fz_block fz_alloc(size_t bytes)
{
    fz_block b;
    b.bytes = bytes;
    b.mem = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!b.mem) abort();
    memset(b.mem, FZ_SENTINEL, bytes ? bytes : 1);
    return b;
}

static void fz_free(fz_block *b)
{
    free(b->mem);
    b->mem = NULL;
}

/* A copy of a block, to check later that it was not modified (inputs) or to compare runs. */
static fz_block fz_snapshot(const fz_block *b)
{
    fz_block s = fz_alloc(b->bytes);
    memcpy(s.mem, b->mem, b->bytes);
    return s;
}

static int fz_same(const fz_block *a, const fz_block *b)
{
    return a->bytes == b->bytes && memcmp(a->mem, b->mem, a->bytes) == 0;
}

static int fz_untouched(const fz_block *b)
{
    for (size_t i = 0; i < b->bytes; ++i)
        if (b->mem[i] != FZ_SENTINEL) return 0;
    return 1;
}

/* A (rows, cols) array of `item`-byte elements with signed byte strides, inside its own block.
 * The strides are drawn from the input: row-major or column-major order, each axis forward or
 * reversed, with 0 to 3 items of padding (an interleaved vertex buffer), so every layout the
 * binding can pass reaches the core.  `base` points at element (0, 0). */
typedef struct fz_strided {
    fz_block block;
    char *base;
    int64_t rows, cols;
    ptrdiff_t row_stride, col_stride; /* bytes */
    size_t item;
} fz_strided;

static fz_strided fz_layout(fz_in *in, int64_t rows, int64_t cols, size_t item)
{
    fz_strided s;
    unsigned opts = (unsigned)fz_bits(in, 1);
    int col_major = opts & 1, rev_rows = (opts >> 1) & 1, rev_cols = (opts >> 2) & 1;
    int64_t pad = (opts >> 3) & 3;
    int64_t inner = col_major ? rows : cols, outer_n = col_major ? cols : rows;
    ptrdiff_t inner_step = (ptrdiff_t)item;
    ptrdiff_t outer_step = (ptrdiff_t)((inner + pad) * (int64_t)item);
    ptrdiff_t rs = col_major ? inner_step : outer_step;
    ptrdiff_t cs = col_major ? outer_step : inner_step;
    /* The block spans the first to the last element, padding after the last row excluded, so a
     * read one element past the end is out of bounds. */
    size_t bytes = (rows > 0 && cols > 0)
                       ? (size_t)((outer_n - 1) * (int64_t)outer_step + (inner - 1) * (int64_t)item) + item
                       : 0;
    s.block = fz_alloc(bytes);
    s.rows = rows;
    s.cols = cols;
    s.item = item;
    s.row_stride = rev_rows ? -rs : rs;
    s.col_stride = rev_cols ? -cs : cs;
    s.base = (char *)s.block.mem;
    if (rows > 0 && cols > 0) {
        if (rev_rows) s.base += (rows - 1) * rs;
        if (rev_cols) s.base += (cols - 1) * cs;
    }
    return s;
}

static void *fz_at(const fz_strided *s, int64_t r, int64_t c)
{
    return s->base + r * s->row_stride + c * s->col_stride;
}

/* Marks which bytes of a strided block are elements (1) and which are padding (0). */
static unsigned char *fz_element_mask(const fz_strided *s)
{
    unsigned char *m = (unsigned char *)calloc(s->block.bytes ? s->block.bytes : 1, 1);
    if (!m) abort();
    for (int64_t r = 0; r < s->rows; ++r)
        for (int64_t c = 0; c < s->cols; ++c) {
            size_t off = (size_t)((char *)fz_at(s, r, c) - (char *)s->block.mem);
            memset(m + off, 1, s->item);
        }
    return m;
}

/* The padding bytes of a strided output still hold the sentinel. */
static int fz_gaps_untouched(const fz_strided *s)
{
    unsigned char *m = fz_element_mask(s);
    int ok = 1;
    for (size_t i = 0; i < s->block.bytes && ok; ++i)
        if (!m[i] && s->block.mem[i] != FZ_SENTINEL) ok = 0;
    free(m);
    return ok;
}

/* Fill every element of a strided float or double array. */
static void fz_fill(fz_in *in, fz_strided *s, int mostly_finite)
{
    for (int64_t r = 0; r < s->rows; ++r)
        for (int64_t c = 0; c < s->cols; ++c) {
            double v = mostly_finite ? fz_mostly_finite(in) : fz_double(in);
            if (s->item == sizeof(float)) {
                float f = (float)v;
                memcpy(fz_at(s, r, c), &f, sizeof f);
            } else {
                memcpy(fz_at(s, r, c), &v, sizeof v);
            }
        }
}

/* Fill a contiguous block of n floats or doubles. */
static void fz_fill_flat(fz_in *in, void *p, int64_t n, int f64, int mostly_finite)
{
    for (int64_t i = 0; i < n; ++i) {
        double v = mostly_finite ? fz_mostly_finite(in) : fz_double(in);
        if (f64)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
}

/* n affine transforms with `rows` (3 or 4) rows of 4: the 3x4 part from the input, the last row
 * of a 4x4 [0 0 0 1] (the binding rejects anything else before calling the core). */
static void fz_fill_affine(fz_in *in, void *p, int64_t n, int rows, int f64)
{
    for (int64_t k = 0; k < n; ++k)
        for (int i = 0; i < 4 * rows; ++i) {
            double v = i < 12 ? fz_mostly_finite(in) : (i == 15 ? 1.0 : 0.0);
            if (f64)
                ((double *)p)[k * 4 * rows + i] = v;
            else
                ((float *)p)[k * 4 * rows + i] = (float)v;
        }
}

#endif /* SK_FUZZ_COMMON_H */
