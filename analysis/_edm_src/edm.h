/*
 * Shared declarations of the analysis._edm extension: Pilot's changepoints,
 * BreakoutDetection's EDM_percent (edm-per.cpp) as libpilot links it, built from
 *   edm_common.c     the candidate statistic, the penalty rule, the backtrack
 *   edm_reference.c  the algorithm as written: O(n^2 log n), the oracle
 *   edm_fast.c       the same result in O(n^2)
 *   module.c         the Python module
 * (setup.py lists them; all build with -ffp-contract=off, see edm_common.c).
 */
#ifndef COLDRUN_EDM_H
#define COLDRUN_EDM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define EDM_INTERNAL __attribute__((visibility("hidden")))
#else
#define EDM_INTERNAL
#endif

/* EDM's dynamic programme. F[s] is the best statistic of a segmentation of
 * Z[0:s], prev[s] its last changepoint (0: none), number[s] its changepoint
 * count; all start at 0. Index type int, as Pilot's vectors. */
struct edm_tables {
    int *prev;
    int *number;
    double *F;
};

/* The statistic of the candidate "last change at t" for the prefix Z[0:s],
 * with p = prev[t] and the medians L of Z[p:t] and R of Z[t:s], evaluated
 * exactly as edm-per.cpp does (see edm_common.c for why each step). */
static inline double
edm_candidate(double f_t, int p, int t, int s, double left_median, double right_median)
{
    /* Pilot's int product (t-p)*(s-t), formed in doubles: exact (below
     * 2^53), so the same value wherever Pilot's int does not overflow (below
     * 92682 points); beyond, this is the true product. */
    double num = (double)(t - p) * (double)(s - t);
    double len = (double)(s - p);
    double normalize = num / (len * len); /* std::pow(s-p, 2): exact */
    double d = left_median - right_median;
    return f_t + normalize * (d * d);
}

/* The median of an even count: (lower middle + upper middle) / 2, as EDM's
 * two trees give it. */
static inline double
edm_even_median(double lower, double upper)
{
    return (lower + upper) / 2;
}

/* Penalty G(k) by degree: 0 Const (0), 1 Linear (1), 2 Quadratic (2k+1). */
EDM_INTERNAL double edm_penalty_weight(int degree, int k);

/* After the candidates of s are scanned: record the winner t (0: none) and
 * its statistic, then apply the percent-change penalty. */
EDM_INTERNAL void edm_settle(struct edm_tables *tb, int s, int best_t, double best_f, double percent,
                             int degree);

/* Changepoints from prev[], ascending, without 0; returns their count. */
EDM_INTERNAL int edm_backtrack(const struct edm_tables *tb, int n, int *out);

/* Z ranked in (value, index) order: the rank of each index, and the index
 * and value of each rank. */
struct edm_ranking {
    int *rank_of;
    int *index_of_rank;
    double *value_of_rank;
};

/* Allocates and fills rk; returns -1 when out of memory (rk then freed). */
EDM_INTERNAL int edm_rank(const double *z, int n, struct edm_ranking *rk);
EDM_INTERNAL void edm_ranking_free(struct edm_ranking *rk);

/* The two algorithms fill tb (arrays of n+1, zeroed) for z[0:n]; n >= 1,
 * min_size >= 1. They return 0, or -1 when out of memory. */
EDM_INTERNAL int edm_reference(const double *z, int n, int min_size, double percent, int degree,
                               struct edm_tables *tb);
EDM_INTERNAL int edm_fast(const double *z, int n, int min_size, double percent, int degree,
                          struct edm_tables *tb);

#endif
