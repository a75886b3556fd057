/*
 * Changepoints exactly as R's
 *   changepoint::cpt.meanvar(x, method="PELT", penalty="Manual", pen.value=pen)
 * returns them (Normal test statistic, minseglen 2, changepoint 2.2.2),
 * plus R's param.est means and variances for the segments found.
 *
 * Bit-exactness depends on reproducing R's arithmetic, not just its algorithm:
 *  - running sums of x and x*x are accumulated in long double (x87 80-bit on
 *    x86-64) and every partial sum is stored rounded to double, as R's cumsum;
 *  - the segment cost is evaluated in plain double with the C library's log,
 *    flooring a non-positive variance at 1e-11;
 *  - candidate costs are compared left to right, the first minimum wins, and
 *    pruning keeps tau when cost(tau) <= F(t) + pen;
 *  - means use R's two-pass long-double mean(); variances use R's var()
 *    (long-double sum of squared deviations from the double mean) scaled by
 *    (len-1)/len in double.
 * The arithmetic is written out in the same order as R's sources so the
 * compiler cannot reassociate it (no -ffast-math; SSE2 doubles on x86-64),
 * and setup.py builds with -ffp-contract=off so no product is fused into an
 * FMA (the vector kernels' FMAs are explicit intrinsics).
 * Speed comes from deciding most comparisons on a cheap approximation with a
 * proven error bound and falling back to R's exact value only where the
 * bound cannot decide (see "Speed" below), and from proving most candidates
 * out of most steps' minimum without evaluating them ("Skipping blocks");
 * the result is identical to R's.
 */
#include "pelt.h"
#include <float.h>

double pelt_log_two_pi;

static inline double
meanvar_cost(double sx, double sx2, Py_ssize_t len)
{
    double n = (double)len;
    double sigsq = (sx2 - ((sx * sx) / n)) / n;
    if (sigsq <= 0)
        sigsq = 0.00000000001;
    return n * (pelt_log_two_pi + log(sigsq) + 1);
}

/* R's mean() for doubles: long-double sum, divide, one correction pass. */
static double
r_mean(const double *x, Py_ssize_t n)
{
    long double s = 0.0L;
    for (Py_ssize_t i = 0; i < n; i++)
        s += x[i];
    s /= n;
    if (isfinite((double)s)) {
        long double t = 0.0L;
        for (Py_ssize_t i = 0; i < n; i++)
            t += (x[i] - s);
        s += t / n;
    }
    return (double)s;
}

/* R's var() for one complete vector (stats/src/cov.c). */
static double
r_var(const double *x, Py_ssize_t n)
{
    long double tmp, sum = 0.0L;
    for (Py_ssize_t k = 0; k < n; k++)
        sum += x[k];
    tmp = sum / n;
    if (isfinite((double)tmp)) {
        sum = 0.0L;
        for (Py_ssize_t k = 0; k < n; k++)
            sum += (x[k] - tmp);
        tmp = tmp + sum / n;
    }
    double xm = (double)tmp;
    long double xxm = xm;
    sum = 0.0L;
    for (Py_ssize_t k = 0; k < n; k++)
        sum += (x[k] - xxm) * (x[k] - xxm);
    return (double)(sum / (long double)(n - 1));
}

/* Exact candidate value, R's arithmetic: (F[tau] + cost) + pen. */
static inline double
exact_value(double f_tau, double sx, double sx2, Py_ssize_t len, double pen)
{
    double v = f_tau + meanvar_cost(sx, sx2, len);
    return v + pen;
}

/*
 * Speed: R evaluates a libm log for every (t, tau) pair, and with the large
 * penalty PELT prunes almost nothing (on homogeneous data a candidate's
 * value sits a chi-square(2)-sized gap below the pruning threshold), so that
 * is ~n^2/2 logs. R's result only depends on two decisions per step: which
 * candidate is the first minimum, and which candidates satisfy
 * value <= F[t] + pen. Both can be taken from an approximation g of
 * G = F[tau] + cost(tau, t) with a rigorous error bound, and R's exact value
 * is needed only for candidates where the bound cannot decide.
 *
 * The bound (each kernel's arithmetic: changepoint_kernels.c): the kernels'
 * w = log(2 pi) + log(sig) + 1 is within LOG_ERR = 1e-12 of R's own w, with
 * R's variance numerator a computed with R's operations (so cancellation and
 * the 1e-11 floor are R's; an approximate a would be off by many ulps
 * relative to a when the noise is 1e-7 of the mean). So |g - G_R| <=
 * len * LOG_ERR + (roundings of a few additions and a product of
 * magnitude <= |F| + len * 803 + pen, ~1e-16 relative each, on both sides),
 * and REL_ERR = 1e-14 is ten times those roundings (|log sig| < 800 for any
 * double). One margin per step, M = t * LOG_ERR + REL_ERR * (max|F| +
 * t * 803 + 2|pen|), also absorbs the rounding of the thresholds below.
 * At 10^6 points M is about 1e-5, so few candidates ever need R's value
 * (the log error was 2.3e-7 before, and at 10^6 points a third of all
 * candidates fell inside the margin).
 *
 * Inputs are restricted (py_cpt_meanvar refuses others) to finite x with
 * x == 0 or 1e-100 <= |x| < 1e100, so sig is a normal double whenever it is
 * not floored.
 *
 * Why no extra pruning: the classic PELT argument that a candidate beaten by
 * more than the penalty can never win again needs cost(tau, s) >= cost(tau,
 * t) + cost(t, s), which the 1e-11 floor breaks (a constant sub-segment is
 * floored at a higher cost than a barely-positive variance of the whole);
 * so R's own pruning rule is applied as R applies it, candidate by candidate
 * (to a left-out one when it could matter: "Skipping blocks" below).
 *
 * Even so, evaluating every candidate at every step is ~n^2/2 evaluations
 * (an hour at 10^6 points); "Skipping blocks" below leaves out most of them.
 * Kernels: AVX-512F/DQ (eight candidates per vector), AVX2+FMA (four), and a
 * portable one, chosen at import; COLDRUN_PELT_ISA=avx2|scalar forces a
 * lower one (the tests check all three decide identically).
 */

/* c(0, cumsum(x)) and c(0, cumsum(x^2)) as R builds them: long-double
 * running sums, each partial stored as a double. */
static void
running_sums(const double *x, Py_ssize_t n, double *s1, double *s2)
{
    long double acc1 = 0.0L, acc2 = 0.0L;
    s1[0] = 0.0;
    s2[0] = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double sq = x[i] * x[i];
        acc1 += x[i];
        acc2 += sq;
        s1[i + 1] = (double)acc1;
        s2[i + 1] = (double)acc2;
    }
}

/* F[0] = -pen (cancels the first segment's penalty) and F[j] for the
 * points [m, 2m) that admit no changepoint: one segment, no penalty (their
 * last-changepoint links stay 0). */
static void
first_segments(const double *s1, const double *s2, Py_ssize_t n, double pen, Py_ssize_t m, double *like)
{
    like[0] = -pen;
    for (Py_ssize_t j = m; j < 2 * m && j <= n; j++)
        like[j] = meanvar_cost(s1[j], s2[j], j);
}

/* Segment ends from the last-changepoint links: back from n, then ascending.
 * Returns their count. */
static Py_ssize_t
backtrack(const Py_ssize_t *last, Py_ssize_t n, Py_ssize_t *cpts)
{
    Py_ssize_t k = 0;
    for (Py_ssize_t at = n; at != 0; at = last[at])
        cpts[k++] = at;
    for (Py_ssize_t a = 0, b = k - 1; a < b; a++, b--) {
        Py_ssize_t tmp = cpts[a];
        cpts[a] = cpts[b];
        cpts[b] = tmp;
    }
    return k;
}

/*
 * R's PELT loop as written, with no approximation: R's exact value (libm
 * log) for every candidate at every step. The same answer as pelt_meanvar
 * at R's speed: it is the tests' independent oracle for the fast path's
 * decisions and the benchmark's same-machine stand-in for R's own time
 * (R runs this loop in C too, plus its interpreter's work around it).
 * Same contract as pelt_meanvar.
 */
static Py_ssize_t
pelt_meanvar_plain(const double *x, Py_ssize_t n, double pen, Py_ssize_t m, Py_ssize_t *cpts)
{
    Py_ssize_t result = -1;
    double *s1 = malloc(4 * ((size_t)n + 1) * sizeof(double));
    Py_ssize_t *last = calloc(n + 1, sizeof(Py_ssize_t)), *chk = malloc((n + 1) * sizeof(Py_ssize_t));
    if (!s1 || !last || !chk)
        goto done;
    double *s2 = s1 + n + 1, *like = s2 + n + 1, *tmp = like + n + 1;
    running_sums(x, n, s1, s2);
    first_segments(s1, s2, n, pen, m, like);
    Py_ssize_t nchk = 0;
    chk[nchk++] = 0;
    chk[nchk++] = m;
    for (Py_ssize_t t = 2 * m; t <= n; t++) {
        Py_ssize_t which = 0;
        for (Py_ssize_t i = 0; i < nchk; i++) {
            Py_ssize_t tau = chk[i];
            tmp[i] = exact_value(like[tau], s1[t] - s1[tau], s2[t] - s2[tau], t - tau, pen);
            if (tmp[i] < tmp[which])
                which = i;
        }
        like[t] = tmp[which];
        last[t] = chk[which];
        Py_ssize_t kept = 0;
        for (Py_ssize_t i = 0; i < nchk; i++)
            if (tmp[i] <= like[t] + pen)
                chk[kept++] = chk[i];
        nchk = kept;
        chk[nchk++] = t - (m - 1);
    }
    result = backtrack(last, n, cpts);
done:
    free(s1);
    free(last);
    free(chk);
    return result;
}

/*
 * Skipping blocks. With the penalty warmup_stats uses, a candidate's value
 * sits far above the minimum (about the penalty, 15 log n, on homogeneous
 * data), and far-back candidates' values move little from one step to the
 * next, relative to the minimum. So most of the checklist is not looked at
 * in most steps: every block of BLOCK candidates gets, when it is
 * evaluated, a lower bound on its candidates' R values for every later
 * step, and is evaluated again only when that bound no longer shows that it
 * holds no minimum.
 *
 * The bound, for a candidate tau evaluated at step t_B with k = r - t_B
 * steps since, in real arithmetic on the data x itself (G_true = F[tau] +
 * n (K + log(a/n)), a = sum of squared deviations, K = log(2 pi) + 1):
 *  - adding a point to a segment of n points multiplies its variance v by
 *    at least n/(n+1), and n log(v'/v) >= n log(n/(n+1)) >= -1, so the cost
 *    grows by at least log(2 pi) + log v + log(n/(n+1)); over k points,
 *    G_true(tau, r) >= G_true(tau, t_B) + k (log(2 pi) + log v) - k(k+1)/(2n);
 *  - for the block: v >= amin/nmax and n >= nmin at t_B;
 *  - R's value differs from G_true through R's running sums (long-double
 *    accumulation and rounding to double), its subtractions, product and
 *    division: |a_R - a| <= Delta(r), a bound from the running sums' errors
 *    up to r (measured against exact sums of the data: a worst-case bound
 *    of the accumulation, r 2^-64 of the sum, was 100 times too wide for
 *    noise of 1e-5 of the mean at 3x10^5 points) and the sums of |x| and
 *    x^2 (delta_a below). As a never decreases when points are added,
 *    a >= amin_true = amin_R - Delta(t_B) at every later step, and while
 *    Delta(r) <= amin_true / 2, |G_R - G_true| <= n 2 Delta(r) / amin_true
 *    (|log(1+u)| <= 2|u| for |u| <= 1/2), and R does not floor the
 *    variance;
 *  - the kernel's g and R's own roundings: the step's margin, as above.
 * A block is skipped at step r when that bound exceeds an upper bound of
 * R's minimum (the last winner's g + margin) by a margin: none of its
 * candidates can be, or tie with, the minimum. The bound is closed-form in
 * r, and groups of GROUP blocks carry one for all their blocks, so a step
 * costs a look at each group, plus the blocks of the groups that may hold
 * a minimum and the blocks evaluated. On homogeneous data a far block's
 * margin to the minimum (~the penalty) shrinks by about 1 per step, so it
 * is evaluated about every 15 log n steps: still ~n^2 work, 0.5-3% of all
 * candidate-steps at 10^4-10^6 points (tests and bench_analysis.py).
 *
 * Skipped candidates are not tested for pruning in the steps they are
 * skipped, so the list holds R's checklist and possibly candidates R has
 * pruned. Those can only matter if they could be the minimum: a candidate
 * not tested since some step is then tested, with R's exact values, for
 * every step it missed (the F of each step is kept), and dropped if R
 * pruned it. Candidates found pruned are marked (F = inf) and removed in
 * one pass once they are half the list.
 */

#define D_UNIT (DBL_EPSILON / 2)

/* The data's exact running sums, to measure how far R's are off: a sum as
 * an unevaluated pair hi + lo (TwoSum, then renormalised), exact to about
 * D_UNIT^2 of the sum per addition. */
struct exact_sum {
    double hi, lo;
};

static inline void
exact_add(struct exact_sum *s, double v)
{
    double sum = s->hi + v, bv = sum - s->hi;
    double err = (s->hi - (sum - bv)) + (v - bv);
    double lo = s->lo + err;
    s->hi = sum + lo;
    s->lo = lo - (s->hi - sum);
}

/* |R's running sum - the exact one|, rounded up. */
static inline double
sum_error(double r_sum, const struct exact_sum *s)
{
    return fabs((r_sum - s->hi) - s->lo) * (1.0 + 4.0 * D_UNIT);
}

/* Delta(r): a bound on |a_R - a| for any segment ending at r or before.
 * E1, E2: the largest errors of R's running sums S1, S2 up to r (measured
 * against the exact sums, plus the exact sums' own error); A1 = sum |x|,
 * A2 = sum x^2, X = max |x| over the first r points. sx and sx2 are off by
 * two sums' errors and a rounding each; (sx*sx)/n by 2 X dsx + dsx^2 plus
 * two roundings, the final subtraction by one (all <= D_UNIT A2 as
 * (sum x)^2/n <= sum x^2). */
static double
delta_a(double e1, double e2, double a1, double a2, double xmax)
{
    double dsx = 2.0 * e1 + D_UNIT * a1, dsx2 = 2.0 * e2 + D_UNIT * a2;
    return 1.01 * (dsx2 + 2.0 * xmax * dsx + dsx * dsx + 3.3 * D_UNIT * a2) + DBL_MIN;
}

/* The checklist in list order (ascending tau): each candidate's tau, running
 * sums and F side by side, so the kernels read contiguous memory, and each
 * one's g and a at the current step (valid in the blocks evaluated at it).
 * A candidate found pruned has F = inf. checked[i]: a step through which
 * candidate i is known to have survived R's pruning, beyond its block's. */
struct checklist {
    double *tau, *s1, *s2, *f, *g, *a;
    Py_ssize_t *checked;
    Py_ssize_t n, dead;
};

/* Per block of BLOCK candidates (index n: the candidates after the full
 * blocks, evaluated at every step): from its last evaluation (at tb; tb < 0:
 * evaluate at the next step), the bound of "Skipping blocks",
 * base + k c - k (k+1) h - (r - taumin) Delta(r) inv_amin, valid while
 * Delta(r) inv_amin <= 1; checked: a step through which all its live
 * candidates are known to have survived R's pruning; single: the last step
 * through which one of them was checked on its own (caught up); bounds: its
 * kernel's three bounds at the current step (when evaluated at it). */
struct blocks {
    double *base, *c, *h, *tb, *taumin, *inv_amin, *bounds;
    Py_ssize_t *checked, *single;
    Py_ssize_t n; /* full blocks */
};

/* Per group of GROUP blocks, a bound for all of them at once, so a step
 * looks at each far group, not at each block: from its blocks' bounds at r0
 * (r0 < 0: look at the blocks), for r >= r0,
 * low + (r - r0) c - (r - r0)(r + r0 + 1 - 2 tb) h - (r - taumin) Delta(r) inv_amin
 * with each block's bound at r0 (low: the least), and the least c, tb,
 * taumin and the greatest h, inv_amin of its blocks, which bound every
 * block's terms from below. */
#define GROUP 64
struct groups {
    double *low, *r0, *c, *h, *tb, *taumin, *inv_amin;
};

static inline void
push(struct checklist *c, Py_ssize_t tau, const double *s1, const double *s2, const double *like,
     Py_ssize_t checked)
{
    c->tau[c->n] = (double)tau;
    c->s1[c->n] = s1[tau];
    c->s2[c->n] = s2[tau];
    c->f[c->n] = like[tau];
    c->checked[c->n] = checked;
    c->n++;
}

static inline double
exact_at(const struct checklist *c, Py_ssize_t i, Py_ssize_t t, const double *s1, const double *s2, double pen)
{
    return exact_value(c->f[i], s1[t] - c->s1[i], s2[t] - c->s2[i], t - (Py_ssize_t)c->tau[i], pen);
}

static inline Py_ssize_t
checked_to(const struct checklist *c, const struct blocks *bl, Py_ssize_t i)
{
    Py_ssize_t own = c->checked[i], block = bl->checked[i / BLOCK];
    return own > block ? own : block;
}

static inline void
mark_pruned(struct checklist *c, Py_ssize_t i)
{
    c->f[i] = INFINITY;
    c->dead++;
}

/* R's pruning for candidate i at the steps it missed, up to r - 1 (F of each
 * step kept in like): 0, and marked pruned, if R dropped it. */
static int
catch_up(struct checklist *c, const struct blocks *bl, Py_ssize_t i, Py_ssize_t r, const double *s1,
         const double *s2, const double *like, double pen, int64_t *exact, Py_ssize_t *single)
{
    for (Py_ssize_t q = checked_to(c, bl, i) + 1; q < r; q++, ++*exact)
        if (!(exact_at(c, i, q, s1, s2, pen) <= like[q] + pen)) {
            mark_pruned(c, i);
            return 0;
        }
    c->checked[i] = r - 1;
    *single = r - 1;
    return 1;
}

/* Block b's bound from its kernel bounds at step r (taken before this step's
 * pruning: lower than or equal to those after it). */
static void
summarise(struct blocks *bl, Py_ssize_t b, const struct checklist *c, Py_ssize_t r, double margin, double delta)
{
    Py_ssize_t lo = b * BLOCK, hi = lo + BLOCK;
    double gmin = bl->bounds[3 * b], amin = bl->bounds[3 * b + 2];
    bl->tb[b] = (double)r;
    bl->taumin[b] = c->tau[lo];
    if (gmin == INFINITY) { /* every candidate pruned: never a minimum again */
        bl->base[b] = INFINITY;
        bl->c[b] = bl->h[b] = bl->inv_amin[b] = 0.0;
        return;
    }
    double amin_true = amin - delta, nmax = (double)r - c->tau[lo];
    if (!(amin_true > 2.0 * delta)) { /* near R's variance floor, or R's sums too coarse: every step */
        bl->tb[b] = -1.0;
        return;
    }
    bl->inv_amin[b] = 2.0 / amin_true;
    bl->base[b] = gmin - 2.0 * margin - nmax * delta * bl->inv_amin[b];
    bl->c[b] = pelt_log_two_pi + log(amin_true / nmax) - 1e-12;
    bl->h[b] = 0.5 / ((double)r - c->tau[hi - 1]);
}

/* Group G's bound from its blocks' bounds at step r. */
static void
summarise_group(struct groups *gr, Py_ssize_t G, const struct blocks *bl, Py_ssize_t r)
{
    Py_ssize_t lo = G * GROUP, hi = lo + GROUP < bl->n ? lo + GROUP : bl->n;
    double low = INFINITY, c = INFINITY, h = 0.0, tb = INFINITY, taumin = INFINITY, inv = 0.0;
    for (Py_ssize_t b = lo; b < hi; b++) {
        if (bl->tb[b] < 0.0) {
            gr->r0[G] = -1.0;
            return;
        }
        if (bl->base[b] == INFINITY) /* every candidate pruned */
            continue;
        double k = (double)r - bl->tb[b];
        double at = bl->base[b] + k * bl->c[b] - k * (k + 1.0) * bl->h[b];
        low = at < low ? at : low;
        c = bl->c[b] < c ? bl->c[b] : c;
        h = bl->h[b] > h ? bl->h[b] : h;
        tb = bl->tb[b] < tb ? bl->tb[b] : tb;
        taumin = bl->taumin[b] < taumin ? bl->taumin[b] : taumin;
        inv = bl->inv_amin[b] > inv ? bl->inv_amin[b] : inv;
    }
    gr->r0[G] = (double)r;
    gr->low[G] = low;
    if (low == INFINITY) { /* no candidate left in the group */
        gr->c[G] = gr->h[G] = gr->inv_amin[G] = gr->tb[G] = gr->taumin[G] = 0.0;
        return;
    }
    gr->c[G] = c;
    gr->h[G] = h;
    gr->tb[G] = tb;
    gr->taumin[G] = taumin;
    gr->inv_amin[G] = inv;
}

/* Drops the candidates marked pruned, keeping order; every block and group
 * is evaluated at the next step. */
static void
compact(struct checklist *c, struct blocks *bl, struct groups *gr, Py_ssize_t r)
{
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < c->n; i++)
        if (c->f[i] != INFINITY) {
            Py_ssize_t checked = checked_to(c, bl, i);
            c->tau[kept] = c->tau[i];
            c->s1[kept] = c->s1[i];
            c->s2[kept] = c->s2[i];
            c->f[kept] = c->f[i];
            c->checked[kept] = checked;
            kept++;
        }
    c->n = kept;
    c->dead = 0;
    bl->n = kept / BLOCK;
    for (Py_ssize_t b = 0; b <= bl->n; b++) {
        bl->tb[b] = -1.0;
        bl->checked[b] = -1;
        bl->single[b] = r; /* each candidate keeps its own step */
    }
    for (Py_ssize_t G = 0; G * GROUP < bl->n; G++)
        gr->r0[G] = -1.0;
}

/* Index of the candidate with this tau (the list is in ascending tau). */
static Py_ssize_t
find_tau(const struct checklist *c, double tau)
{
    Py_ssize_t lo = 0, hi = c->n - 1;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (c->tau[mid] < tau)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Candidates [lo, hi) of evaluated block e of this step (the last one: the
 * candidates after the full blocks). */
#define EVALUATED_RANGE(e)                                             \
    Py_ssize_t b = evaluated[e], lo = b * BLOCK, hi = e < nev ? lo + BLOCK : c.n

/*
 * PELT over n points. On success writes the 1-based segment ends (ascending,
 * including n) to cpts and returns their count; returns -1 on allocation
 * failure.
 */
static Py_ssize_t
pelt_meanvar(const double *x, Py_ssize_t n, double pen, Py_ssize_t m, Py_ssize_t *cpts, int64_t *progress,
             int64_t *counts)
{
    Py_ssize_t result = -1;
    size_t stride = (size_t)n + 8, nbl = stride / BLOCK + 2, ngr = nbl / GROUP + 1;
    double *mem = malloc((9 * stride + 9 * nbl + 7 * ngr) * sizeof(double));
    Py_ssize_t *last = calloc(n + 1, sizeof(Py_ssize_t)), *checked = malloc(stride * sizeof(Py_ssize_t));
    Py_ssize_t *evaluated = malloc(nbl * sizeof(Py_ssize_t)), *looked = malloc(ngr * sizeof(Py_ssize_t));
    Py_ssize_t *bchecked = malloc(2 * nbl * sizeof(Py_ssize_t));
    if (!mem || !last || !checked || !evaluated || !looked || !bchecked)
        goto done;
    double *s1 = mem, *s2 = s1 + stride, *like = s2 + stride;
    struct checklist c = {like + stride, like + 2 * stride, like + 3 * stride, like + 4 * stride,
                          like + 5 * stride, like + 6 * stride, checked, 0, 0};
    double *bm = c.a + stride;
    struct blocks bl = {bm, bm + nbl, bm + 2 * nbl, bm + 3 * nbl, bm + 4 * nbl, bm + 5 * nbl, bm + 6 * nbl,
                        bchecked, bchecked + nbl, 0};
    double *gm = bm + 9 * nbl;
    struct groups gr = {gm, gm + ngr, gm + 2 * ngr, gm + 3 * ngr, gm + 4 * ngr, gm + 5 * ngr, gm + 6 * ngr};
    pelt_kernel *kernel = pelt_approx_scalar;
#ifdef HAVE_AVX2_PATH
    kernel = pelt_isa_level == 2 ? pelt_approx_avx512 : pelt_isa_level == 1 ? pelt_approx_avx2 : kernel;
#endif

    running_sums(x, n, s1, s2);
    first_segments(s1, s2, n, pen, m, like);
    double max_abs_like = fabs(pen);
    for (Py_ssize_t j = m; j < 2 * m && j <= n; j++)
        if (fabs(like[j]) > max_abs_like)
            max_abs_like = fabs(like[j]);
    push(&c, 0, s1, s2, like, 2 * m - 1);
    push(&c, m, s1, s2, like, 2 * m - 1);
    bl.checked[0] = -1;
    bl.single[0] = 2 * m - 1;
    Py_ssize_t winner = 0;
    /* counts: candidates evaluated approximately, exactly; caught up, of which found pruned */
    int64_t approx = 0, exact = 0, caught_up = 0, found_pruned = 0;
    /* For Delta: sums of |x| and x^2, the largest |x|, the exact running sums
     * and the largest errors of R's so far. */
    double a1 = 0.0, a2 = 0.0, xmax = 0.0, e1 = 0.0, e2 = 0.0;
    struct exact_sum x1 = {0.0, 0.0}, x2 = {0.0, 0.0};
    for (Py_ssize_t t = 2 * m - 1, j = 0; t <= n; t++) {
        for (; j < t; j++) {
            double sq = x[j] * x[j];
            a1 += fabs(x[j]);
            a2 += sq;
            xmax = fabs(x[j]) > xmax ? fabs(x[j]) : xmax;
            exact_add(&x1, x[j]);
            exact_add(&x2, sq);
            exact_add(&x2, fma(x[j], x[j], -sq)); /* x^2 exactly: sq plus its rounding error */
            double d1 = sum_error(s1[j + 1], &x1), d2 = sum_error(s2[j + 1], &x2);
            e1 = d1 > e1 ? d1 : e1;
            e2 = d2 > e2 ? d2 : e2;
        }
        if (t < 2 * m)
            continue;
        const double s1t = s1[t], s2t = s2[t], dt = (double)t;
        /* a1, a2 rounded up by their own accumulation's error; the exact
         * sums' error (~3 D_UNIT^2 of the sum per addition) added to e1, e2. */
        double up = 1.0 + 2.0 * dt * D_UNIT;
        double ex = 8.0 * dt * D_UNIT * D_UNIT;
        double delta = delta_a(e1 + ex * a1 * up, e2 + ex * a2 * up, a1 * up, a2 * up, xmax);
        double slack = REL_ERR * (max_abs_like + dt * (800.0 + 3.0) + 2.0 * fabs(pen));
        double margin = dt * LOG_ERR + slack;

        /* Which blocks to evaluate: those whose bound does not clear the last
         * winner's value (an upper bound of R's minimum) by two margins,
         * looked for group by group, and the candidates after the full
         * blocks. */
        double skip_above = pelt_approx_one(dt, c.tau[winner], c.s1[winner], c.s2[winner], c.f[winner], s1t, s2t) +
                            2.0 * margin;
        Py_ssize_t nev = 0, nlooked = 0, ngroups = (bl.n + GROUP - 1) / GROUP;
        for (Py_ssize_t G = 0; G < ngroups; G++) {
            if (gr.r0[G] >= 0.0) {
                double k = dt - gr.r0[G], q = delta * gr.inv_amin[G];
                if (q <= 1.0 && gr.low[G] + k * gr.c[G] - k * (dt + gr.r0[G] + 1.0 - 2.0 * gr.tb[G]) * gr.h[G] -
                                        (dt - gr.taumin[G]) * q - margin > skip_above)
                    continue;
            }
            looked[nlooked++] = G;
            Py_ssize_t bhi = (G + 1) * GROUP < bl.n ? (G + 1) * GROUP : bl.n;
            for (Py_ssize_t b = G * GROUP; b < bhi; b++) {
                if (bl.tb[b] >= 0.0) {
                    double k = dt - bl.tb[b], q = delta * bl.inv_amin[b];
                    if (q <= 1.0 && bl.base[b] + k * bl.c[b] - k * (k + 1.0) * bl.h[b] -
                                            (dt - bl.taumin[b]) * q - margin > skip_above)
                        continue;
                }
                evaluated[nev++] = b;
                kernel(BLOCK, dt, c.tau + b * BLOCK, c.s1 + b * BLOCK, c.s2 + b * BLOCK, c.f + b * BLOCK, s1t,
                       s2t, c.g + b * BLOCK, c.a + b * BLOCK, bl.bounds + 3 * b);
            }
        }
        Py_ssize_t tail = bl.n * BLOCK;
        evaluated[nev] = bl.n;
        approx += nev * BLOCK + (c.n - tail);
        kernel(c.n - tail, dt, c.tau + tail, c.s1 + tail, c.s2 + tail, c.f + tail, s1t, s2t, c.g + tail,
               c.a + tail, bl.bounds + 3 * bl.n);

        /* The minimum: R's value of the candidate with the smallest g is at
         * most gmin + margin (+ pen), and any candidate whose R value could
         * be <= that has g <= gmin + 2 margin. Those must be in R's
         * checklist (caught up first; if one was pruned, its block's least g
         * is found again and so is the threshold), then get exact values;
         * the first exact minimum in list order wins, as in R's min_which. */
        double thr;
        int again;
        do {
            double gmin = INFINITY;
            for (Py_ssize_t e = 0; e <= nev; e++)
                gmin = bl.bounds[3 * evaluated[e]] < gmin ? bl.bounds[3 * evaluated[e]] : gmin;
            thr = gmin + 2.0 * margin;
            again = 0;
            for (Py_ssize_t e = 0; e <= nev; e++) {
                EVALUATED_RANGE(e);
                if (bl.bounds[3 * b] > thr)
                    continue;
                int died = 0;
                for (Py_ssize_t i = lo; i < hi; i++)
                    if (c.f[i] != INFINITY && c.g[i] <= thr && checked_to(&c, &bl, i) < t - 1) {
                        caught_up++;
                        if (!catch_up(&c, &bl, i, t, s1, s2, like, pen, &exact, bl.single + b)) {
                            died = 1;
                            found_pruned++;
                        }
                    }
                if (died) {
                    double least = INFINITY;
                    for (Py_ssize_t i = lo; i < hi; i++)
                        if (c.f[i] != INFINITY && c.g[i] < least)
                            least = c.g[i];
                    bl.bounds[3 * b] = least;
                    again = 1;
                }
            }
        } while (again);
        double best = INFINITY;
        Py_ssize_t which = -1;
        for (Py_ssize_t e = 0; e <= nev; e++) {
            EVALUATED_RANGE(e);
            if (bl.bounds[3 * b] > thr)
                continue;
            for (Py_ssize_t i = lo; i < hi; i++) {
                if (c.f[i] == INFINITY || c.g[i] > thr)
                    continue;
                double v = exact_at(&c, i, t, s1, s2, pen);
                exact++;
                if (which < 0 || v < best) {
                    best = v;
                    which = i;
                }
            }
        }
        like[t] = best;
        last[t] = (Py_ssize_t)c.tau[which];
        winner = which;
        if (fabs(best) > max_abs_like)
            max_abs_like = fabs(best);

        /* Pruning, R's rule, for the candidates evaluated at this step and
         * checked up to the step before: keep tau when its exact value <=
         * F[t] + pen, i.e. (up to rounding inside the margin) G <= F[t].
         * g < F[t] - margin: surely kept (a whole block at once when its
         * greatest g is); g > F[t] + margin: surely pruned; between: decided
         * on the exact value. */
        double bound = best + pen, keep_below = best - margin, drop_above = best + margin;
        for (Py_ssize_t e = 0; e <= nev; e++) {
            EVALUATED_RANGE(e);
            /* whole: every live candidate of the block checked up to t - 1;
             * else only those checked on their own up to t - 1 (caught up,
             * or added since the block was last whole) are checked now. */
            int whole = bl.checked[b] == t - 1;
            if (whole ? !(bl.bounds[3 * b + 1] < keep_below) : bl.single[b] == t - 1) {
                whole = 1;
                for (Py_ssize_t i = lo; i < hi; i++) {
                    if (c.f[i] == INFINITY)
                        continue;
                    if (checked_to(&c, &bl, i) != t - 1) {
                        whole = 0;
                        continue;
                    }
                    double g = c.g[i];
                    if (g < keep_below || (g <= drop_above && (exact++, exact_at(&c, i, t, s1, s2, pen) <= bound))) {
                        c.checked[i] = t;
                        bl.single[b] = t;
                    } else {
                        mark_pruned(&c, i);
                    }
                }
            }
            if (whole)
                bl.checked[b] = t;
            if (e < nev)
                summarise(&bl, b, &c, t, margin, delta);
        }
        for (Py_ssize_t e = 0; e < nlooked; e++)
            summarise_group(&gr, looked[e], &bl, t);
        push(&c, t - (m - 1), s1, s2, like, t);
        bl.single[bl.n] = t;
        if (c.n - bl.n * BLOCK == BLOCK) { /* the tail became a full block; a new, empty tail */
            bl.tb[bl.n++] = -1.0;
            bl.checked[bl.n] = bl.single[bl.n] = -1;
            gr.r0[(bl.n - 1) / GROUP] = -1.0;
        }
        if (c.dead > c.n / 2 && c.dead > 4 * BLOCK) {
            double wtau = c.tau[winner];
            compact(&c, &bl, &gr, t);
            winner = find_tau(&c, wtau);
        }
        /* Where it is, for a progress display that reads it from another
         * thread or process (a stale value is fine there); every 1024
         * steps, so no step pays for it. */
        if (progress && (t & 1023) == 0)
            __atomic_store_n(progress, (int64_t)t, __ATOMIC_RELAXED);
    }

    if (counts) {
        counts[0] = approx;
        counts[1] = exact;
        counts[2] = caught_up;
        counts[3] = found_pruned;
    }
    result = backtrack(last, n, cpts);
done:
    free(mem);
    free(last);
    free(checked);
    free(evaluated);
    free(looked);
    free(bchecked);
    return result;
}


PyObject *
pelt_py_cpt_meanvar(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"x", "pen", "minseglen", "reference", "progress", "counts", NULL};
    Py_buffer buf, prog = {0}, cnt = {0};
    double pen;
    Py_ssize_t m = 2;
    int reference = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*d|npw*w*", kwlist, &buf, &pen, &m, &reference, &prog, &cnt))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t *cpts = NULL;
    int64_t *progress = prog.buf && prog.len >= (Py_ssize_t)sizeof(int64_t) ? (int64_t *)prog.buf : NULL;
    int64_t *counts = cnt.buf && cnt.len >= 4 * (Py_ssize_t)sizeof(int64_t) ? (int64_t *)cnt.buf : NULL;
    if (buf.len % sizeof(double) != 0) {
        PyErr_SetString(PyExc_ValueError, "x must be a buffer of C doubles");
        goto done;
    }
    Py_ssize_t n = buf.len / (Py_ssize_t)sizeof(double);
    const double *x = (const double *)buf.buf;
    if (m < 1) {
        PyErr_SetString(PyExc_ValueError, "minseglen must be >= 1");
        goto done;
    }
    if (n < 2 * m) {
        PyErr_Format(PyExc_ValueError,
                     "%zd points are too few for a changepoint with minimum segment length %zd",
                     n, m);
        goto done;
    }
    /* The kernels' error bounds need sig normal whenever it is not floored,
     * which these limits guarantee (timings are nowhere near them). */
    for (Py_ssize_t i = 0; i < n; i++) {
        double mag = fabs(x[i]);
        if (!(mag < 1e100) || (mag != 0.0 && mag < 1e-100)) {
            PyErr_SetString(PyExc_ValueError,
                            "iteration times must be finite, and 0 or between 1e-100 and 1e100 in magnitude");
            goto done;
        }
    }
    cpts = malloc((n + 1) * sizeof(Py_ssize_t));
    if (!cpts) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t k;
    Py_BEGIN_ALLOW_THREADS
    k = reference ? pelt_meanvar_plain(x, n, pen, m, cpts) : pelt_meanvar(x, n, pen, m, cpts, progress, counts);
    Py_END_ALLOW_THREADS
    if (k < 0) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *pc = PyList_New(k), *pm = PyList_New(k), *pv = PyList_New(k);
    if (!pc || !pm || !pv) {
        Py_XDECREF(pc);
        Py_XDECREF(pm);
        Py_XDECREF(pv);
        goto done;
    }
    Py_ssize_t start = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        Py_ssize_t len = cpts[j] - start;
        double mean = r_mean(x + start, len);
        double var = len > 1 ? r_var(x + start, len) : NAN;
        /* param.est: var * (seglen - 1) / seglen, left to right in double. */
        double mle = (var * (double)(len - 1)) / (double)len;
        PyList_SET_ITEM(pc, j, PyLong_FromSsize_t(cpts[j]));
        PyList_SET_ITEM(pm, j, PyFloat_FromDouble(mean));
        PyList_SET_ITEM(pv, j, PyFloat_FromDouble(mle));
        start = cpts[j];
    }
    out = Py_BuildValue("(NNN)", pc, pm, pv);
done:
    free(cpts);
    PyBuffer_Release(&buf);
    if (prog.obj)
        PyBuffer_Release(&prog);
    if (cnt.obj)
        PyBuffer_Release(&cnt);
    return out;
}

PyObject *
pelt_py_r_mean(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    Py_ssize_t n = buf.len / (Py_ssize_t)sizeof(double);
    double r = n > 0 ? r_mean((const double *)buf.buf, n) : NAN;
    PyBuffer_Release(&buf);
    return PyFloat_FromDouble(r);
}

