/* cor_centers.template.c -- the float / double entry points of cor_centers.c; included once per
 * type after SK_T and SK_FN are defined (and skin_common.template.h).  Only the weights are read
 * in SK_T: everything else is computed in double and shared. */

/* prepare, step 1: each vertex's non-zero weights as a sparse row sorted by joint. */
static void SK_FN(cor_rows_range)(void *vctx, int64_t begin, int64_t end)
{
    cor_ctx *x = (cor_ctx *)vctx;
    const sk_influences *in = &x->mesh->influences;
    const int64_t K = x->K;
    int64_t idx[SK_SLOTS];
    SK_T w[SK_SLOTS];
    for (int64_t v = begin; v < end; ++v) {
        int64_t n = 0;
        for (int64_t k0 = 0; k0 < K; k0 += SK_SLOTS) {
            int64_t nk = K - k0 < SK_SLOTS ? K - k0 : SK_SLOTS;
            SK_FN(sk_load_slots)(in, v, k0, nk, INT64_MAX, idx, w);
            for (int64_t k = 0; k < nk; ++k)
                if (w[k] != 0)
                    cor_row_insert(x->p.vj + v * K, x->p.vw + v * K, &n, idx[k], (double)w[k]);
        }
        x->p.vn[v] = n;
    }
}

sk_result SK_FN(sk_centers_prepare)(void *prep, sk_centers_plan *plan,
                                    const sk_centers_mesh *mesh, int n_threads, int64_t *bad)
{
    sk_result r = cor_check(mesh);
    if (r == SK_OK) r = cor_check_positions(mesh, sizeof(SK_T) == sizeof(float), bad);
    if (r != SK_OK) return r;
    cor_ctx x;
    cor_init(&x, mesh, prep, sizeof(SK_T) == sizeof(float));
    sk_parallel_for(n_threads, mesh->n_vertices, 256, SK_FN(cor_rows_range), &x);
    return cor_plan(&x, plan, n_threads, bad);
}

sk_result SK_FN(sk_centers)(sk_stream out, const sk_centers_mesh *mesh, const void *prep,
                            const sk_centers_plan *plan, void *scratch, int n_threads)
{
    sk_result r = cor_check(mesh);
    if (r != SK_OK) return r;
    cor_ctx x;
    cor_init(&x, mesh, prep, sizeof(SK_T) == sizeof(float));
    x.out = out;
    cor_run(&x, plan, scratch, n_threads);
    return SK_OK;
}
