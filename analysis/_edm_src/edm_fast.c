/*
 * EDM_percent's result in O(n^2): the same candidates in the same order with
 * the same statistic (edm_candidate), only the medians are found cheaper.
 *
 *  - Left medians med(Z[prev[t]:t]) depend on t alone: prev[t] is final once
 *    prefix t has been settled, so each is computed once, when t settles.
 *  - Right medians med(Z[t:s]) for one s as t ascends: the values of Z[m:s]
 *    sit in a doubly linked list in sorted order and t's step deletes Z[t-1]
 *    from it. A deletion moves the median pointer by at most one node, which
 *    side it moves to decided by comparing ranks, so each candidate costs
 *    O(1).
 *  - The sorted order of the prefix Z[0:s] is kept as an array of ranks,
 *    one insertion per s (O(n)); the list for s is threaded through it and a
 *    left median is a scan of it (O(n) each).
 * Ranks order the values with ties broken by index; equal values have equal
 * bits except 0.0 and -0.0, which only ever meet in (L-R)^2 or a sum, where
 * the sign of a zero changes nothing. So every median, hence every
 * statistic, is bit-identical to the reference's.
 */
#include "edm.h"

/* The list's nodes are ranks; -1 heads it and n ends it. */
struct sorted_list {
    int *next;
    int *prev;
};

/* The median of the members of the sorted prefix whose index is >= from. */
static double
median_from(const int *sorted, int len, int from, const struct edm_ranking *rk)
{
    int count = len - from, k = (count - 1) / 2, seen = 0, lower = 0;
    for (int p = 0; p < len; p++) {
        int rank = sorted[p];
        if (rk->index_of_rank[rank] < from)
            continue;
        if (seen == k) {
            lower = rank;
            if (count % 2)
                return rk->value_of_rank[rank];
        } else if (seen == k + 1) {
            return edm_even_median(rk->value_of_rank[lower], rk->value_of_rank[rank]);
        }
        seen++;
    }
    return 0; /* not reached: count >= 1 */
}

/* Insert rank into the ascending array sorted[0:len]. */
static void
insert_sorted(int *sorted, int len, int rank)
{
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (sorted[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(sorted + lo + 1, sorted + lo, (size_t)(len - lo) * sizeof(int));
    sorted[lo] = rank;
}

/* Thread the list through the members of sorted[0:len] with index >= from;
 * returns the node at the lower median. */
static int
thread_list(const struct sorted_list *l, const int *sorted, int len, int from, const int *index_of_rank,
            int tail)
{
    int last = -1, seen = 0, k = (len - from - 1) / 2, median = 0;
    for (int p = 0; p < len; p++) {
        int node = sorted[p];
        if (index_of_rank[node] < from)
            continue;
        l->next[last] = node;
        l->prev[node] = last;
        last = node;
        if (seen++ == k)
            median = node;
    }
    l->next[last] = tail;
    l->prev[tail] = last;
    return median;
}

/* The candidates t = m..s-m for prefix s; returns the first best t (0: none). */
static int
scan_candidates(const struct sorted_list *l, int median, int s, int m, const struct edm_ranking *rk,
                const struct edm_tables *tb, const double *left_median, double *best)
{
    int count = s - m, best_t = 0;
    double best_f = 0; /* F[s] before any candidate */
    int *next = l->next, *prev = l->prev;
    const double *value_of_rank = rk->value_of_rank;
    for (int t = m; t <= s - m; t++) {
        if (t > m) {
            /* Delete Z[t-1]; the median (the lower one for an even count)
             * keeps its rank (count-1)/2 by moving at most one node. Odd
             * count: it stays if Z[t-1] was below it, else steps down; even
             * count: it stays if Z[t-1] was above it, else steps up. */
            int gone = rk->rank_of[t - 1], before = prev[median], after = next[median];
            if (count & 1)
                median = gone < median ? median : before;
            else
                median = gone > median ? median : after;
            next[prev[gone]] = next[gone];
            prev[next[gone]] = prev[gone];
            count--;
        }
        double right = count & 1 ? value_of_rank[median]
                                 : edm_even_median(value_of_rank[median], value_of_rank[next[median]]);
        double tmp = edm_candidate(tb->F[t], tb->prev[t], t, s, left_median[t], right);
        if (tmp > best_f) {
            best_f = tmp;
            best_t = t;
        }
    }
    *best = best_f;
    return best_t;
}

int
edm_fast(const double *z, int n, int min_size, double percent, int degree, struct edm_tables *tb)
{
    int m = min_size, rc = -1;
    struct edm_ranking rk = {NULL, NULL, NULL};
    int *sorted = malloc((size_t)n * sizeof(int));
    double *left_median = malloc(((size_t)n + 1) * sizeof(double));
    int *links = malloc(2 * ((size_t)n + 2) * sizeof(int));
    /* Offset by one so that the head, -1, is an index. */
    struct sorted_list list = {links + 1, links + n + 3};
    if (!sorted || !left_median || !links || edm_rank(z, n, &rk))
        goto done;

    for (int s = 1; s <= n; s++) {
        insert_sorted(sorted, s - 1, rk.rank_of[s - 1]);
        if (s >= 2 * m) {
            int median = thread_list(&list, sorted, s, m, rk.index_of_rank, n);
            double best_f;
            int best_t = scan_candidates(&list, median, s, m, &rk, tb, left_median, &best_f);
            edm_settle(tb, s, best_t, best_f, percent, degree);
        }
        /* prev[s] is final now; only t <= n - m is ever a candidate. */
        if (s >= m && s <= n - m)
            left_median[s] = median_from(sorted, s, tb->prev[s], &rk);
    }
    rc = 0;
done:
    edm_ranking_free(&rk);
    free(sorted);
    free(left_median);
    free(links);
    return rc;
}
