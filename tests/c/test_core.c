/* test_core.c -- plain C tests of the skinkit core (no Python): each case a static function
 * with its own checks; run under ctest. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sk.h"

static int failures = 0;
#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            ++failures;                                                                 \
        }                                                                               \
    } while (0)

static void translation(double *m, double x, double y, double z)
{
    memset(m, 0, 16 * sizeof(double));
    m[0] = m[5] = m[10] = m[15] = 1.0;
    m[3] = x;
    m[7] = y;
    m[11] = z;
}

static void case_validate_parents(void)
{
    int64_t good[4] = {-1, 0, 1, 1}, bad_order[3] = {-1, 2, 0}, self_parent[2] = {-1, 1};
    int64_t bad = -7;
    CHECK(sk_validate_parents(good, 4, &bad) == SK_OK);
    CHECK(sk_validate_parents(bad_order, 3, &bad) == SK_ERR_BAD_PARENT && bad == 1);
    CHECK(sk_validate_parents(self_parent, 2, &bad) == SK_ERR_BAD_PARENT && bad == 1);
    CHECK(strcmp(sk_result_string(SK_OK), "ok") == 0);
}

static void case_fk_chain(void)
{
    /* three joints along x, each 1 apart, under a root translated by (0, 5, 0) */
    double local[3 * 16], global[3 * 16], scratch[3 * 12], root[12] = {1, 0, 0, 0, 0, 1, 0, 5, 0, 0, 1, 0};
    int64_t parents[3] = {-1, 0, 1}, bad = 0;
    for (int j = 0; j < 3; ++j) translation(local + 16 * j, 1.0, 0, 0);
    CHECK(sk_fk_f64(global, local, 0, parents, 3, 1, root, 0, 4, scratch, &bad) == SK_OK);
    for (int j = 0; j < 3; ++j) {
        CHECK(fabs(global[16 * j + 3] - (j + 1)) < 1e-15);
        CHECK(fabs(global[16 * j + 7] - 5.0) < 1e-15);
        CHECK(global[16 * j + 15] == 1.0);
    }
    int64_t wrong[3] = {-1, 2, 1};
    CHECK(sk_fk_f64(global, local, 0, wrong, 3, 1, NULL, 0, 4, scratch, &bad) == SK_ERR_BAD_PARENT);
}

static void case_inverse_bind_and_palette(void)
{
    /* a scaled joint goes through the general inverse; a singular one is reported */
    double g[2 * 12] = {2, 0, 0, 1, 0, 3, 0, 2, 0, 0, 4, 3, /* */ 0, -1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0};
    double ib[2 * 12], pal[2 * 12], piv[2 * 3];
    int64_t bad = -1;
    CHECK(sk_inverse_bind_f64(ib, g, 2, 3, &bad) == SK_OK);
    CHECK(sk_palette_f64(pal, g, ib, 2, 1, NULL, NULL, 3) == SK_OK);
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 12; ++i)
            CHECK(fabs(pal[12 * j + i] - ((i == 0 || i == 5 || i == 10) ? 1.0 : 0.0)) < 1e-14);
    CHECK(sk_pivots_f64(piv, ib, 2, 3, &bad) == SK_OK);
    CHECK(fabs(piv[0] - 1) < 1e-14 && fabs(piv[1] - 2) < 1e-14 && fabs(piv[2] - 3) < 1e-14);
    double singular[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
    CHECK(sk_inverse_bind_f64(ib, singular, 1, 3, &bad) == SK_ERR_SINGULAR && bad == 0);
    double nan_m[12] = {NAN, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    CHECK(sk_inverse_bind_f64(ib, nan_m, 1, 3, &bad) == SK_ERR_NOT_FINITE);
}

int main(void)
{
    case_validate_parents();
    case_fk_chain();
    case_inverse_bind_and_palette();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_core: all checks passed\n");
    return 0;
}
