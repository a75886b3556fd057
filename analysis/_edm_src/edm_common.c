/*
 * What both algorithms share: EDM_percent's per-candidate statistic (edm.h),
 * its penalty rule, the backtrack, and the ranking of the series.
 *
 * Bit-exactness with Pilot rests on evaluating the arithmetic as edm-per.cpp
 * does, compiled by g++ -O2 for x86-64 (SSE2 doubles, no FMA):
 *  - normalize = (int)((t-p)*(s-t)) / std::pow(s-p, 2), the integer product
 *    converted once, divided by the exact square of s-p;
 *  - tmp = F[t] + normalize * (L-R)^2, and a candidate wins only when
 *    tmp > F[s] (strict: the lowest t among equal maxima);
 *  - the penalty compares F[s] - F[q] < (percent * G(number[q])) * F[q],
 *    left to right;
 *  - an even count's median is (lower + upper) / 2.
 * setup.py builds with -ffp-contract=off so no product and sum is fused into
 * one FMA (GCC does that by default wherever the target has FMA), which would
 * round once where Pilot rounds twice.
 * Pilot's golden rows (shared/golden/pilot) also accept the other orders
 * tried (the fraction (t-p)/(s-p)^2 times (s-t); lo + (hi-lo)/2), so the
 * order above is taken from the source, not the goldens.
 */
#include "edm.h"

double
edm_penalty_weight(int degree, int k)
{
    double x = (double)k; /* G takes a double */
    switch (degree) {
    case 1:
        return 1;
    case 2:
        return 2 * x + 1;
    default:
        return 0;
    }
}

void
edm_settle(struct edm_tables *tb, int s, int best_t, double best_f, double percent, int degree)
{
    if (best_t) {
        tb->F[s] = best_f;
        tb->prev[s] = best_t;
        tb->number[s] = tb->number[best_t] + 1;
    }
    int q = tb->prev[s];
    /* A new changepoint must raise the statistic by percent * G of F[q];
     * otherwise s inherits q's segmentation. */
    if (q && tb->F[s] - tb->F[q] < percent * edm_penalty_weight(degree, tb->number[q]) * tb->F[q]) {
        tb->number[s] = tb->number[q];
        tb->F[s] = tb->F[q];
        tb->prev[s] = tb->prev[q];
    }
}

int
edm_backtrack(const struct edm_tables *tb, int n, int *out)
{
    int k = 0;
    for (int at = n; at; at = tb->prev[at])
        if (tb->prev[at])
            out[k++] = tb->prev[at];
    /* prev[at] < at, so the walk is descending. */
    for (int i = 0, j = k - 1; i < j; i++, j--) {
        int tmp = out[i];
        out[i] = out[j];
        out[j] = tmp;
    }
    return k;
}

struct keyed {
    double v;
    int i;
};

static int
by_value_then_index(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->v < y->v)
        return -1;
    if (x->v > y->v)
        return 1;
    return (x->i > y->i) - (x->i < y->i);
}

void
edm_ranking_free(struct edm_ranking *rk)
{
    free(rk->rank_of);
    free(rk->index_of_rank);
    free(rk->value_of_rank);
    rk->rank_of = rk->index_of_rank = NULL;
    rk->value_of_rank = NULL;
}

int
edm_rank(const double *z, int n, struct edm_ranking *rk)
{
    struct keyed *k = malloc((size_t)n * sizeof *k);
    rk->rank_of = malloc((size_t)n * sizeof(int));
    rk->index_of_rank = malloc((size_t)n * sizeof(int));
    rk->value_of_rank = malloc((size_t)n * sizeof(double));
    if (!k || !rk->rank_of || !rk->index_of_rank || !rk->value_of_rank) {
        free(k);
        edm_ranking_free(rk);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        k[i].v = z[i];
        k[i].i = i;
    }
    qsort(k, (size_t)n, sizeof *k, by_value_then_index);
    for (int r = 0; r < n; r++) {
        rk->index_of_rank[r] = k[r].i;
        rk->value_of_rank[r] = k[r].v;
        rk->rank_of[k[r].i] = r;
    }
    free(k);
    return 0;
}
