/*
 * EDM_percent as edm-per.cpp runs it, the oracle for edm_fast.c and the
 * stand-in for Pilot's library in bench/bench_pilot_edm.py.
 *
 * For each prefix length s it rebuilds two order-statistic sets, the left
 * one holding Z[prev[t]:t] and the right one Z[t:s], and updates them as t
 * advances exactly as EDM updates its pairs of multisets (insert Z[t-1]
 * left, remove it right, then move the left set's start from prev[t-1] to
 * prev[t]); every candidate reads both medians afresh. The sets here are
 * Fenwick trees over the values' ranks instead of red-black trees: the same
 * O(log n) per update and per median, so O(n^2 log n) in all, and the same
 * median values.
 */
#include "edm.h"

struct ranked_set {
    int *tree; /* Fenwick tree of 0/1 counts per rank, 1-based */
    int n;
    int top;   /* the highest power of two <= n */
    int count;
};

static void
set_add(struct ranked_set *st, int rank, int delta)
{
    for (int i = rank + 1; i <= st->n; i += i & -i)
        st->tree[i] += delta;
    st->count += delta;
}

/* The rank of the k-th smallest member (k from 0). */
static int
set_kth(const struct ranked_set *st, int k)
{
    int pos = 0;
    for (int step = st->top; step; step >>= 1) {
        if (pos + step <= st->n && st->tree[pos + step] <= k) {
            pos += step;
            k -= st->tree[pos];
        }
    }
    return pos;
}

static double
set_median(const struct ranked_set *st, const double *value_of_rank)
{
    int k = (st->count - 1) / 2;
    double lower = value_of_rank[set_kth(st, k)];
    if (st->count % 2)
        return lower;
    return edm_even_median(lower, value_of_rank[set_kth(st, k + 1)]);
}

static void
set_clear(struct ranked_set *st)
{
    memset(st->tree, 0, (size_t)(st->n + 1) * sizeof(int));
    st->count = 0;
}

int
edm_reference(const double *z, int n, int min_size, double percent, int degree, struct edm_tables *tb)
{
    int m = min_size, rc = -1;
    struct edm_ranking rk = {NULL, NULL, NULL};
    struct ranked_set left = {calloc((size_t)n + 1, sizeof(int)), n, 1, 0};
    struct ranked_set right = {calloc((size_t)n + 1, sizeof(int)), n, 1, 0};
    if (!left.tree || !right.tree || edm_rank(z, n, &rk))
        goto done;
    const int *rank_of = rk.rank_of;
    while (left.top * 2 <= n)
        left.top *= 2;
    right.top = left.top;
    int *prev = tb->prev;

    for (int s = 2 * m; s <= n; s++) {
        set_clear(&left);
        set_clear(&right);
        for (int i = prev[m - 1]; i < m - 1; i++)
            set_add(&left, rank_of[i], 1);
        for (int i = m - 1; i < s; i++)
            set_add(&right, rank_of[i], 1);
        double best_f = 0; /* F[s] before any candidate */
        int best_t = 0;
        for (int t = m; t <= s - m; t++) {
            set_add(&left, rank_of[t - 1], 1);
            set_add(&right, rank_of[t - 1], -1);
            /* The left set now holds Z[prev[t-1]:t]; move its start to prev[t]. */
            for (int i = prev[t - 1]; i < prev[t]; i++)
                set_add(&left, rank_of[i], -1);
            for (int i = prev[t]; i < prev[t - 1]; i++)
                set_add(&left, rank_of[i], 1);
            double tmp = edm_candidate(tb->F[t], prev[t], t, s, set_median(&left, rk.value_of_rank),
                                       set_median(&right, rk.value_of_rank));
            if (tmp > best_f) {
                best_f = tmp;
                best_t = t;
            }
        }
        edm_settle(tb, s, best_t, best_f, percent, degree);
    }
    rc = 0;
done:
    edm_ranking_free(&rk);
    free(left.tree);
    free(right.tree);
    return rc;
}
