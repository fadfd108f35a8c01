/* cor_centers.c -- the optimized centers of rotation precompute (Le & Hodgins, SIGGRAPH 2016).
 *
 *     c_i = sum_t s(w_i, w_t) a_t p_t / sum_t s(w_i, w_t) a_t
 *     s(w_p, w_v) = sum_{j != k} w_pj w_pk w_vj w_vk exp(-(w_pj w_vk - w_pk w_vj)^2 / sigma^2)
 *
 * over the (optionally subdivided) triangles t of the rest mesh: centroid p_t, area a_t, and w_t
 * the weights at the centroid (the mean of the corners').  A term needs both j and k non-zero
 * in both vectors, so s(w_i, w_t) is a sum over the joint pairs {j, k} that vertex i and sample t
 * share.  Instead of visiting every sample for every vertex (O(V T)), each sample is filed once
 * in the group of each joint pair of its weights, and a vertex visits only the groups of its own
 * joint pairs: the samples that share no pair with it, which contribute exactly zero, are never
 * read.
 *
 * Order of work, all deterministic (the centers do not depend on the thread count):
 *   prepare  vertex weights as sorted sparse rows (threads over vertices); per triangle its
 *            subdivision depth and sample count (threads over triangles); totals.
 *   centers  the groups filled in triangle order (one thread: cheap next to the last step);
 *            vertices with the same weight row found (one thread); each distinct row's center
 *            (threads over vertices), then copied to the other vertices of that row.
 * Everything is computed in double whatever the storage type.
 */
#include <math.h>
#include <string.h>

#include "sk.h"

/* Defined in skin_common.template.h, included below for the float / double parts. */
static inline int64_t sk_read_index(const char *p, sk_index_type type);

/* The prepared data, carved out of the caller's `prep` block (sk_centers_prepare_size bytes). */
typedef struct sk_centers_prep_view {
    int64_t *vj;        /* (V, K) joints of each vertex's non-zero weights, increasing */
    double *vw;         /* (V, K) their weights (duplicate joints summed) */
    int64_t *vn;        /* (V,) how many */
    int64_t *tri_first; /* (T' + 1,) first sample of each triangle; T' = triangles after quads */
    int64_t *tri_cnt;   /* (T',) size of the union of the corners' joints */
    uint8_t *tri_depth; /* (T',) subdivision depth: 4^depth samples */
} sk_centers_prep_view;

static int64_t cor_n_triangles(const sk_centers_mesh *m)
{
    return m->corners == 4 ? 2 * m->n_faces : m->n_faces;
}

size_t sk_centers_prepare_size(int64_t n_vertices, int64_t k, int64_t n_triangles)
{
    size_t V = (size_t)(n_vertices > 0 ? n_vertices : 0), K = (size_t)(k > 0 ? k : 1);
    size_t T = (size_t)(n_triangles > 0 ? n_triangles : 0);
    /* the int64 / double arrays first, then the depth bytes */
    return 8 * (2 * V * K + V + (T + 1) + T) + T + 8;
}

static sk_centers_prep_view cor_prep_view(void *prep, int64_t V, int64_t K, int64_t T)
{
    sk_centers_prep_view p;
    char *c = (char *)prep;
    p.vj = (int64_t *)c;
    c += 8 * (size_t)(V * K);
    p.vw = (double *)c;
    c += 8 * (size_t)(V * K);
    p.vn = (int64_t *)c;
    c += 8 * (size_t)V;
    p.tri_first = (int64_t *)c;
    c += 8 * (size_t)(T + 1);
    p.tri_cnt = (int64_t *)c;
    c += 8 * (size_t)T;
    p.tri_depth = (uint8_t *)c;
    return p;
}

/* Insert (j, w) into the sorted sparse row (j_row, w_row) of *n entries, summing a joint that
 * is already there (a joint listed twice counts as the sum, as LBS counts it). */
static void cor_row_insert(int64_t *j_row, double *w_row, int64_t *n, int64_t j, double w)
{
    int64_t i = *n;
    while (i > 0 && j_row[i - 1] > j) --i;
    if (i > 0 && j_row[i - 1] == j) {
        w_row[i - 1] += w;
        return;
    }
    memmove(j_row + i + 1, j_row + i, sizeof(int64_t) * (size_t)(*n - i));
    memmove(w_row + i + 1, w_row + i, sizeof(double) * (size_t)(*n - i));
    j_row[i] = j;
    w_row[i] = w;
    ++*n;
}

/* Corner vertices of triangle t (quads: 0-1-2 then 0-2-3). */
static void cor_corners(const sk_centers_mesh *m, int64_t t, int64_t c[3])
{
    static const int tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
    int64_t f = m->corners == 4 ? t / 2 : t;
    const int *corner = tri[m->corners == 4 ? t % 2 : 0];
    const char *row = (const char *)m->faces.data + f * m->faces.row;
    for (int a = 0; a < 3; ++a)
        c[a] = sk_read_index(row + corner[a] * m->faces.elem, m->face_type);
}

/* The union of the three corners' sparse rows: its size, the largest weight difference between
 * two corners over all joints (*diff), and, when `uj` is given, the joints and the corners'
 * weights (uw[3 r + c], zero where corner c lacks joint uj[r]). */
static int64_t cor_union(const sk_centers_prep_view *p, int64_t K, const int64_t c[3],
                         double *diff, int64_t *uj, double *uw)
{
    const int64_t *j[3];
    const double *w[3];
    int64_t n[3], at[3] = {0, 0, 0}, m = 0;
    double d = 0.0;
    for (int a = 0; a < 3; ++a) {
        j[a] = p->vj + c[a] * K;
        w[a] = p->vw + c[a] * K;
        n[a] = p->vn[c[a]];
    }
    for (;;) {
        int64_t next = INT64_MAX;
        for (int a = 0; a < 3; ++a)
            if (at[a] < n[a] && j[a][at[a]] < next) next = j[a][at[a]];
        if (next == INT64_MAX) break;
        double x[3];
        for (int a = 0; a < 3; ++a)
            x[a] = (at[a] < n[a] && j[a][at[a]] == next) ? w[a][at[a]++] : 0.0;
        d = fmax(d, fmax(fabs(x[0] - x[1]), fmax(fabs(x[1] - x[2]), fabs(x[0] - x[2]))));
        if (uj) {
            uj[m] = next;
            uw[3 * m] = x[0];
            uw[3 * m + 1] = x[1];
            uw[3 * m + 2] = x[2];
        }
        ++m;
    }
    *diff = d;
    return m;
}

/* Subdivision depth: corner weights differing by `diff` differ by diff / 2^d after d levels of
 * 1 -> 4 midpoint splits (weights are linear over a triangle), so the paper's "subdivide until
 * neighbouring weights differ by less than eps" is one depth per triangle, capped. */
static int cor_depth(double diff, double eps)
{
    int d = 0;
    if (eps > 0.0)
        while (diff >= eps && d < SK_CENTERS_MAX_DEPTH) {
            diff *= 0.5;
            ++d;
        }
    return d;
}

/* Barycentric (u, v) of the centroid of piece s of a triangle split into n x n: pieces
 * 0 .. n(n+1)/2 - 1 are the grid's "up" triangles, row by row, the rest the "down" ones. */
static void cor_sub_centroid(int64_t n, int64_t s, double *u, double *v)
{
    int64_t ups = n * (n + 1) / 2, i = 0;
    int down = s >= ups;
    if (down) s -= ups;
    /* row i has n - i up triangles and n - 1 - i down ones */
    for (;;) {
        int64_t row = down ? n - 1 - i : n - i;
        if (s < row) break;
        s -= row;
        ++i;
    }
    double off = down ? 2.0 : 1.0;
    *u = (3.0 * (double)i + off) / (3.0 * (double)n);
    *v = (3.0 * (double)s + off) / (3.0 * (double)n);
}

typedef struct cor_ctx {
    const sk_centers_mesh *mesh;
    sk_centers_prep_view p;
    int64_t K;
    /* One group per joint pair (j, k), j < k, found by hashing j * 2^24 + k (open addressing):
     * its entries are [gstart, gend).  One entry per sample having both joints: the sample's
     * weights of j and k, wa = wj wk area, and its centroid, as separate arrays so the loop of a
     * group reads six straight streams. */
    int64_t *gkey, *gstart, *gend;
    int gbits;
    double *wj, *wk, *wa, *px, *py, *pz;
    /* A center depends on nothing but the vertex's weight row, so vertices with the very same
     * row (same joints, same weight bits: rings of a procedural mesh, quantized weights) share
     * one computation: rep[v] is the first vertex with v's row. */
    int64_t *rep;
    sk_stream out;
    int f32;
    int avx2; /* the group loop of cor_centers_avx2.c */
} cor_ctx;

#ifdef SK_BUILD_AVX2
void sk_centers_group_sums_avx2(const double *wj, const double *wk, const double *wa,
                                const double *px, const double *py, const double *pz,
                                int64_t e0, int64_t e1, double wr, double ws, double inv_s2,
                                double sum[4]);
#endif

#define COR_NO_GROUP (-1)

/* The slot of group (j, k): found, or (insert) claimed; COR_NO_GROUP when absent. */
static int64_t cor_group(const cor_ctx *x, int64_t j, int64_t k, int insert)
{
    const int64_t key = j * SK_CENTERS_MAX_JOINTS + k;
    const uint64_t mask = ((uint64_t)1 << x->gbits) - 1;
    uint64_t h = ((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - x->gbits);
    for (;; h = (h + 1) & mask) {
        if (x->gkey[h] == key) return (int64_t)h;
        if (x->gkey[h] < 0) {
            if (!insert) return COR_NO_GROUP;
            x->gkey[h] = key;
            return (int64_t)h;
        }
    }
}

/* prepare, step 2: per triangle its depth, union size and sample count (kept in tri_first[t+1]
 * until the prefix sum). */
static void cor_triangle_range(void *vctx, int64_t begin, int64_t end)
{
    cor_ctx *x = (cor_ctx *)vctx;
    for (int64_t t = begin; t < end; ++t) {
        int64_t c[3];
        double diff;
        cor_corners(x->mesh, t, c);
        int64_t m = cor_union(&x->p, x->K, c, &diff, NULL, NULL);
        int d = cor_depth(diff, x->mesh->subdivide);
        x->p.tri_depth[t] = (uint8_t)d;
        x->p.tri_cnt[t] = m;
        x->p.tri_first[t + 1] = (int64_t)1 << (2 * d);
    }
}

/* Sums over one group for a vertex with weights wr, ws of its pair: four lanes (entries taken
 * in turn), added in a fixed order, so the compiler may keep them in vector registers and the
 * bits never depend on anything but the group. */
static void cor_group_sums(const cor_ctx *x, int64_t g, double wr, double ws, double inv_s2,
                           double sum[4])
{
    const int64_t e0 = x->gstart[g], e1 = x->gend[g];
#ifdef SK_BUILD_AVX2
    if (x->avx2) {
        sk_centers_group_sums_avx2(x->wj, x->wk, x->wa, x->px, x->py, x->pz, e0, e1, wr, ws,
                                   inv_s2, sum);
        return;
    }
#endif
    double l[4][4] = {{0.0}};
    int64_t e = e0;
    for (; e + 4 <= e1; e += 4)
        for (int q = 0; q < 4; ++q) {
            const double d = wr * x->wk[e + q] - ws * x->wj[e + q];
            const double a = x->wa[e + q] * exp(-d * d * inv_s2);
            l[q][0] += a;
            l[q][1] += a * x->px[e + q];
            l[q][2] += a * x->py[e + q];
            l[q][3] += a * x->pz[e + q];
        }
    for (int q = 0; e < e1; ++e, ++q) {
        const double d = wr * x->wk[e] - ws * x->wj[e];
        const double a = x->wa[e] * exp(-d * d * inv_s2);
        l[q][0] += a;
        l[q][1] += a * x->px[e];
        l[q][2] += a * x->py[e];
        l[q][3] += a * x->pz[e];
    }
    for (int i = 0; i < 4; ++i) sum[i] = (l[0][i] + l[1][i]) + (l[2][i] + l[3][i]);
}

/* Vertex v's center from the groups of its joint pairs. */
static void cor_vertex(const cor_ctx *x, int64_t v, double c[3])
{
    const int64_t K = x->K, n = x->p.vn[v];
    const int64_t *vj = x->p.vj + v * K;
    const double *vw = x->p.vw + v * K;
    const double inv_s2 = 1.0 / (x->mesh->sigma * x->mesh->sigma);
    double num[3] = {0.0, 0.0, 0.0}, den = 0.0;
    for (int64_t r = 0; r + 1 < n; ++r)
        for (int64_t s = r + 1; s < n; ++s) {
            int64_t g = cor_group(x, vj[r], vj[s], 0);
            if (g == COR_NO_GROUP) continue;
            double sum[4];
            cor_group_sums(x, g, vw[r], vw[s], inv_s2, sum);
            /* each unordered pair once: the paper's sum over j != k counts it twice, a factor
             * that cancels in the ratio */
            const double f = vw[r] * vw[s];
            den += f * sum[0];
            num[0] += f * sum[1];
            num[1] += f * sum[2];
            num[2] += f * sum[3];
        }
    if (den > 0.0) {
        c[0] = num[0] / den;
        c[1] = num[1] / den;
        c[2] = num[2] / den;
    } else {
        c[0] = c[1] = c[2] = NAN; /* no center: the kernel falls back to LBS */
    }
}

static void cor_store(const cor_ctx *x, int64_t v, const double c[3])
{
    char *o = (char *)x->out.data + v * x->out.row;
    for (int i = 0; i < 3; ++i) {
        if (x->f32)
            *(float *)(o + i * x->out.elem) = (float)c[i];
        else
            *(double *)(o + i * x->out.elem) = c[i];
    }
}

/* Pass 1: the first vertex of each distinct weight row. */
static void cor_vertex_range(void *vctx, int64_t begin, int64_t end)
{
    const cor_ctx *x = (const cor_ctx *)vctx;
    for (int64_t v = begin; v < end; ++v) {
        if (x->rep[v] != v) continue;
        double c[3];
        cor_vertex(x, v, c);
        cor_store(x, v, c);
    }
}

/* Pass 2: the others copy their row's center (the same bits it would compute). */
static void cor_copy_range(void *vctx, int64_t begin, int64_t end)
{
    const cor_ctx *x = (const cor_ctx *)vctx;
    for (int64_t v = begin; v < end; ++v) {
        int64_t r = x->rep[v];
        if (r == v) continue;
        const char *o = (const char *)x->out.data + r * x->out.row;
        double c[3];
        for (int i = 0; i < 3; ++i)
            c[i] = x->f32 ? (double)*(const float *)(o + i * x->out.elem)
                          : *(const double *)(o + i * x->out.elem);
        cor_store(x, v, c);
    }
}

/* rep[v] for every vertex, with a table of `cap` (a power of two > V) vertex ids. */
static void cor_dedupe_rows(cor_ctx *x, int64_t *table, int64_t cap)
{
    const int64_t V = x->mesh->n_vertices, K = x->K;
    for (int64_t i = 0; i < cap; ++i) table[i] = -1;
    for (int64_t v = 0; v < V; ++v) {
        const int64_t n = x->p.vn[v];
        const int64_t *j = x->p.vj + v * K;
        const double *w = x->p.vw + v * K;
        uint64_t h = (uint64_t)n * UINT64_C(0x9E3779B97F4A7C15);
        for (int64_t r = 0; r < n; ++r) {
            uint64_t b;
            memcpy(&b, w + r, 8);
            h = (h ^ (uint64_t)j[r]) * UINT64_C(0x100000001B3);
            h = (h ^ b) * UINT64_C(0x100000001B3);
            h ^= h >> 29;
        }
        for (h &= (uint64_t)(cap - 1);; h = (h + 1) & (uint64_t)(cap - 1)) {
            int64_t u = table[h];
            if (u < 0) {
                table[h] = v;
                x->rep[v] = v;
                break;
            }
            if (x->p.vn[u] == n && memcmp(x->p.vj + u * K, j, 8 * (size_t)n) == 0 &&
                memcmp(x->p.vw + u * K, w, 8 * (size_t)n) == 0) {
                x->rep[v] = u;
                break;
            }
        }
    }
}

static void cor_load_position(const sk_centers_mesh *m, int f32, int64_t v, double p[3])
{
    const char *row = (const char *)m->positions.data + v * m->positions.row;
    for (int i = 0; i < 3; ++i)
        p[i] = f32 ? (double)*(const float *)(row + i * m->positions.elem)
                   : *(const double *)(row + i * m->positions.elem);
}

/* The positions: finite and within SK_BIND_MAX_COORD (triangle areas multiply two coordinates,
 * and their sums would overflow to inf and make every center NaN: "no center", so CoR skinning
 * would quietly fall back to LBS).  SK_ERR_NOT_FINITE with *bad = the first such vertex. */
static sk_result cor_check_positions(const sk_centers_mesh *m, int f32, int64_t *bad)
{
    for (int64_t v = 0; v < m->n_vertices; ++v) {
        double p[3];
        cor_load_position(m, f32, v, p);
        if (!(fabs(p[0]) <= SK_BIND_MAX_COORD && fabs(p[1]) <= SK_BIND_MAX_COORD &&
              fabs(p[2]) <= SK_BIND_MAX_COORD)) {
            if (bad) *bad = v;
            return SK_ERR_NOT_FINITE;
        }
    }
    return SK_OK;
}

/* Checks the faces and sizes everything, once the vertex rows exist. */
static sk_result cor_plan(cor_ctx *x, sk_centers_plan *plan, int n_threads, int64_t *bad)
{
    const sk_centers_mesh *m = x->mesh;
    const int64_t V = m->n_vertices, T = cor_n_triangles(m);
    for (int64_t f = 0; f < m->n_faces; ++f) {
        const char *row = (const char *)m->faces.data + f * m->faces.row;
        for (int a = 0; a < m->corners; ++a) {
            int64_t i = sk_read_index(row + a * m->faces.elem, m->face_type);
            if (i < 0 || i >= V) {
                if (bad) *bad = f;
                return SK_ERR_INDEX_RANGE;
            }
        }
    }
    int64_t J = 0;
    for (int64_t v = 0; v < V; ++v) {
        int64_t n = x->p.vn[v];
        if (n > 0 && x->p.vj[v * x->K + n - 1] + 1 > J) J = x->p.vj[v * x->K + n - 1] + 1;
    }
    if (J > SK_CENTERS_MAX_JOINTS) {
        if (bad) *bad = J - 1;
        return SK_ERR_TOO_LARGE;
    }
    sk_parallel_for(n_threads, T, 256, cor_triangle_range, x);
    int64_t S = 0, E = 0, P = 0;
    x->p.tri_first[0] = 0;
    for (int64_t t = 0; t < T; ++t) {
        int64_t ns = x->p.tri_first[t + 1], mt = x->p.tri_cnt[t];
        int64_t pairs = mt * (mt - 1) / 2;
        if (ns > 0 && pairs > (INT64_MAX / 64 - E) / ns) return SK_ERR_TOO_LARGE;
        S += ns;
        E += ns * pairs;
        P += pairs;
        x->p.tri_first[t + 1] = S;
    }
    /* the group table: a power of two, at least twice the (sample-free) pair count */
    int bits = 4;
    while (bits < 62 && ((int64_t)1 << bits) < 2 * P) ++bits;
    plan->n_joints = J > 0 ? J : 1;
    plan->n_triangles = T;
    plan->n_samples = S;
    plan->n_entries = E;
    plan->table_bits = bits;
    /* entries (6 doubles), the table (3 int64 per slot), one triangle's union (3K x 4) */
    /* + rep (V) and the row table (a power of two > V) */
    int64_t rows = 1;
    while (rows <= V) rows *= 2;
    double bytes = 48.0 * (double)E + 24.0 * ldexp(1.0, bits) + 32.0 * 3.0 * (double)x->K +
                   8.0 * (double)(V + rows);
    if (bytes > (double)(SIZE_MAX / 4)) return SK_ERR_TOO_LARGE;
    plan->scratch_size = 48 * (size_t)E + 24 * ((size_t)1 << bits) + 32 * 3 * (size_t)x->K +
                         8 * (size_t)(V + rows);
    return SK_OK;
}

/* Builds the groups into scratch, then every vertex's center. */
static void cor_run(cor_ctx *x, const sk_centers_plan *plan, void *scratch, int n_threads)
{
    const int64_t T = plan->n_triangles, K = x->K, E = plan->n_entries;
    const size_t cap = (size_t)1 << plan->table_bits;
    double *d = (double *)scratch;
    x->wj = d;
    x->wk = d + E;
    x->wa = d + 2 * E;
    x->px = d + 3 * E;
    x->py = d + 4 * E;
    x->pz = d + 5 * E;
    x->gkey = (int64_t *)(d + 6 * E);
    x->gstart = x->gkey + cap;
    x->gend = x->gstart + cap;
    x->gbits = plan->table_bits;
    int64_t *uj = x->gend + cap;                 /* 3K joints */
    double *uw = (double *)(uj + 3 * K);         /* 3K x 3 corner weights */
    const int64_t V = x->mesh->n_vertices;
    int64_t rows = 1;
    while (rows <= V) rows *= 2;
    x->rep = (int64_t *)(uw + 9 * K);            /* V */
    cor_dedupe_rows(x, x->rep + V, rows);
    memset(x->gkey, 0xff, 8 * cap);              /* -1: empty */
    memset(x->gend, 0, 8 * cap);

    /* group sizes, then their places in table order (any fixed order will do) */
    for (int64_t t = 0; t < T; ++t) {
        int64_t n_s = x->p.tri_first[t + 1] - x->p.tri_first[t], corners[3];
        double diff;
        cor_corners(x->mesh, t, corners);
        int64_t m = cor_union(&x->p, K, corners, &diff, uj, uw);
        for (int64_t r = 0; r + 1 < m; ++r)
            for (int64_t q = r + 1; q < m; ++q) x->gend[cor_group(x, uj[r], uj[q], 1)] += n_s;
    }
    int64_t at = 0;
    for (size_t h = 0; h < cap; ++h) {
        x->gstart[h] = at;
        at += x->gend[h];
        x->gend[h] = x->gstart[h];
    }
    for (int64_t t = 0; t < T; ++t) {
        int64_t corners[3];
        double diff, pos[3][3], e1[3], e2[3];
        cor_corners(x->mesh, t, corners);
        int64_t m = cor_union(&x->p, K, corners, &diff, uj, uw);
        for (int a = 0; a < 3; ++a) cor_load_position(x->mesh, x->f32, corners[a], pos[a]);
        for (int i = 0; i < 3; ++i) {
            e1[i] = pos[1][i] - pos[0][i];
            e2[i] = pos[2][i] - pos[0][i];
        }
        double cr[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                        e1[0] * e2[1] - e1[1] * e2[0]};
        int dep = x->p.tri_depth[t];
        int64_t n = (int64_t)1 << dep;
        double area =
            0.5 * sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]) / (double)(n * n);
        for (int64_t s = 0; s < n * n; ++s) {
            double b[3] = {0.0, 0.0, 0.0}, p[3];
            if (dep == 0) {
                /* the formula as written: the centroid and the mean of the corners */
                for (int i = 0; i < 3; ++i) p[i] = (pos[0][i] + pos[1][i] + pos[2][i]) / 3.0;
            } else {
                double u, v;
                cor_sub_centroid(n, s, &u, &v);
                b[0] = 1.0 - u - v;
                b[1] = u;
                b[2] = v;
                for (int i = 0; i < 3; ++i) p[i] = pos[0][i] + u * e1[i] + v * e2[i];
            }
            for (int64_t r = 0; r + 1 < m; ++r) {
                const double *wr = uw + 3 * r;
                double wjr = dep == 0 ? (wr[0] + wr[1] + wr[2]) / 3.0
                                      : b[0] * wr[0] + b[1] * wr[1] + b[2] * wr[2];
                for (int64_t q = r + 1; q < m; ++q) {
                    const double *wq = uw + 3 * q;
                    double wkq = dep == 0 ? (wq[0] + wq[1] + wq[2]) / 3.0
                                          : b[0] * wq[0] + b[1] * wq[1] + b[2] * wq[2];
                    int64_t e = x->gend[cor_group(x, uj[r], uj[q], 0)]++;
                    x->wj[e] = wjr;
                    x->wk[e] = wkq;
                    x->wa[e] = wjr * wkq * area;
                    x->px[e] = p[0];
                    x->py[e] = p[1];
                    x->pz[e] = p[2];
                }
            }
        }
    }
    sk_parallel_for(n_threads, V, 64, cor_vertex_range, x);
    sk_parallel_for(n_threads, V, 1024, cor_copy_range, x);
}

static sk_result cor_check(const sk_centers_mesh *mesh)
{
    if ((mesh->corners != 3 && mesh->corners != 4) || mesh->influences.k < 1 ||
        !(isfinite(mesh->sigma) && mesh->sigma > 0.0) ||
        !(isfinite(mesh->subdivide) && mesh->subdivide >= 0.0))
        return SK_ERR_BAD_ARGUMENT;
    return SK_OK;
}

static void cor_init(cor_ctx *x, const sk_centers_mesh *mesh, const void *prep, int f32)
{
    memset(x, 0, sizeof *x);
    x->mesh = mesh;
    x->K = mesh->influences.k;
    x->p = cor_prep_view((void *)prep, mesh->n_vertices, x->K, cor_n_triangles(mesh));
    x->f32 = f32;
#ifdef SK_BUILD_AVX2
    /* read once per call: every vertex of a call takes the same path */
    x->avx2 = sk_simd_current() != SK_SIMD_SCALAR;
#endif
}

/* The float / double parts: reading the weights (sk_load_slots of the kernels). */
#define SK_TEMPLATE "cor_centers.template.c"
#include "skin_instantiate.h"
