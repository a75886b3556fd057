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
 * bound cannot decide (see "Speed" below); the result is identical to R's.
 */
#include "pelt.h"

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
 * The kernels compute g per candidate:
 *  - a = sx2 - (sx*sx)/len with R's own operations (the one division kept),
 *    so cancellation in the variance and the 1e-11 floor decision are
 *    exactly R's (an approximate a would be off by many ulps relative to a
 *    when the noise is 1e-7 of the mean);
 *  - sig = a * (1/len) with an approximate reciprocal (relative error below
 *    1e-8), or 1e-11 when a <= 0 as in R;
 *  - log(sig) approximated with absolute error below 3e-7 (each kernel
 *    states its bound; every one is below LOG_ERR = 1e-6);
 *  - g = F[tau] + len * (log(2 pi) + log(sig) + 1).
 * So |g - G_R| <= len * LOG_ERR' + (rounding of a few additions of
 * magnitude <= |F| + len*803 + pen), where LOG_ERR' < 0.3 * LOG_ERR and the
 * roundings (~1e-15 relative) are 1000x below SLACK = REL_ERR * (max|F| +
 * t*803 + 2|pen|) with REL_ERR = 1e-12 (|log sig| < 800 for any double).
 * We use one margin per step, M = t * LOG_ERR + SLACK (len <= t); the unused
 * part of it (>= 0.7 t LOG_ERR + 0.999 SLACK) also absorbs the rounding of
 * the few threshold computations below (each ~1e-16 of the same
 * magnitudes).
 *
 * Inputs are restricted (py_cpt_meanvar refuses others) to finite x with
 * x == 0 or 1e-100 <= |x| < 1e100, so sig is a normal double whenever it is
 * not floored.
 *
 * Why no extra pruning: the classic PELT argument that a candidate beaten by
 * more than the penalty can never win again needs cost(tau, s) >= cost(tau,
 * t) + cost(t, s), which the 1e-11 floor breaks (a constant sub-segment is
 * floored at a higher cost than a barely-positive variance of the whole);
 * R's checklist is reproduced exactly instead, and only the arithmetic per
 * candidate is made cheaper.
 *
 * Per step: one kernel pass writes g for every candidate and the minimum and
 * maximum of each block of BLOCK candidates; the two decision passes below
 * visit only blocks that can hold a candidate needing an exact value.
 * Kernels: AVX-512F/DQ (eight candidates per vector), AVX2+FMA (four), and a
 * portable one, chosen at import; COLDRUN_PELT_ISA=avx2|scalar forces a
 * lower one (the tests check all three decide identically).
 */

/* Whether v is what a scan looks for: v <= thr (SCAN_LE, near the minimum)
 * or !(v < thr) (SCAN_NOT_LT, near the pruning threshold). */
enum scan_kind { SCAN_LE, SCAN_NOT_LT };

static inline int
scan_hit(double v, double thr, enum scan_kind kind)
{
    return kind == SCAN_LE ? v <= thr : !(v < thr);
}

/* Next index i >= from with scan_hit(g[i]) (nchk when none); blocks whose
 * bound (bmin for SCAN_LE, bmax for SCAN_NOT_LT) cannot hit are skipped. */
static inline Py_ssize_t
scan(const double *g, const double *bounds, Py_ssize_t from, Py_ssize_t nchk, double thr,
     enum scan_kind kind)
{
    while (from < nchk) {
        Py_ssize_t end = (from / BLOCK + 1) * BLOCK;
        if (end > nchk)
            end = nchk;
        if (scan_hit(bounds[from / BLOCK], thr, kind)) {
            for (Py_ssize_t i = from; i < end; i++)
                if (scan_hit(g[i], thr, kind))
                    return i;
        }
        from = end;
    }
    return nchk;
}


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
 * PELT over n points. On success writes the 1-based segment ends (ascending,
 * including n) to cpts and returns their count; returns -1 on allocation
 * failure.
 */
static Py_ssize_t
pelt_meanvar(const double *x, Py_ssize_t n, double pen, Py_ssize_t m, Py_ssize_t *cpts, int64_t *progress)
{
    Py_ssize_t result = -1;
    /* One allocation for the double arrays: running sums, F, the
     * checklist's tau/sums/F, and the kernels' g. */
    size_t stride = (size_t)n + 8;
    double *block = malloc(8 * stride * sizeof(double) + 2 * (stride / BLOCK + 1) * sizeof(double));
    Py_ssize_t *last = calloc(n + 1, sizeof(Py_ssize_t));
    if (!block || !last)
        goto done;
    double *s1 = block, *s2 = s1 + stride, *like = s2 + stride, *ctau = like + stride;
    double *cs1 = ctau + stride, *cs2 = cs1 + stride, *cf = cs2 + stride, *g = cf + stride;
    double *bmin = g + stride, *bmax = bmin + (stride / BLOCK + 1);

    running_sums(x, n, s1, s2);

    first_segments(s1, s2, n, pen, m, like);
    double max_abs_like = fabs(pen);
    for (Py_ssize_t j = m; j < 2 * m && j <= n; j++)
        if (fabs(like[j]) > max_abs_like)
            max_abs_like = fabs(like[j]);
    /* The checklist in list order, each candidate's tau, sums and F kept
     * side by side so the kernels read contiguous memory. */
    Py_ssize_t nchk = 0;
#define PUSH(tau)                          \
    do {                                   \
        ctau[nchk] = (double)(tau);        \
        cs1[nchk] = s1[(tau)];             \
        cs2[nchk] = s2[(tau)];             \
        cf[nchk] = like[(tau)];            \
        nchk++;                            \
    } while (0)
    PUSH(0);
    PUSH(m);
    for (Py_ssize_t t = 2 * m; t <= n; t++) {
        const double s1t = s1[t], s2t = s2[t];
        double slack = REL_ERR * (max_abs_like + (double)t * (800.0 + 3.0) + 2.0 * fabs(pen));
        double margin = (double)t * LOG_ERR + slack;
        double gmin;
#ifdef HAVE_AVX2_PATH
        if (pelt_isa_level == 2)
            gmin = pelt_approx_avx512(nchk, (double)t, ctau, cs1, cs2, cf, s1t, s2t, g, bmin, bmax);
        else if (pelt_isa_level == 1)
            gmin = pelt_approx_avx2(nchk, (double)t, ctau, cs1, cs2, cf, s1t, s2t, g, bmin, bmax);
        else
#endif
            gmin = pelt_approx_scalar(nchk, (double)t, ctau, cs1, cs2, cf, s1t, s2t, g, bmin, bmax);
        /* The minimum: R's value of the candidate with the smallest g is at
         * most gmin + margin (+ pen), and any candidate whose R value could
         * be <= that has g <= gmin + 2 margin. Those get exact values; the
         * first exact minimum in list order wins, as in R's min_which. */
        double best = INFINITY;
        Py_ssize_t which = -1;
        double thr = gmin + 2.0 * margin;
        for (Py_ssize_t i = scan(g, bmin, 0, nchk, thr, SCAN_LE); i < nchk;
             i = scan(g, bmin, i + 1, nchk, thr, SCAN_LE)) {
            double v = exact_value(cf[i], s1t - cs1[i], s2t - cs2[i], t - (Py_ssize_t)ctau[i], pen);
            if (which < 0 || v < best) {
                best = v;
                which = i;
            }
        }
        like[t] = best;
        last[t] = (Py_ssize_t)ctau[which];
        if (fabs(best) > max_abs_like)
            max_abs_like = fabs(best);
        /* Pruning, R's rule: keep tau when its exact value <= F[t] + pen,
         * i.e. (up to rounding inside the margin) G <= F[t]. g < F[t] -
         * margin: surely kept; g > F[t] + margin: surely pruned; between:
         * decided on the exact value. */
        double bound = best + pen;
        double keep_below = best - margin, drop_above = best + margin;
        Py_ssize_t kept = 0, i = 0;
        while (i < nchk) {
            Py_ssize_t j = scan(g, bmax, i, nchk, keep_below, SCAN_NOT_LT);
            if (kept != i && j > i) {
                size_t cnt = (size_t)(j - i);
                memmove(ctau + kept, ctau + i, cnt * sizeof(double));
                memmove(cs1 + kept, cs1 + i, cnt * sizeof(double));
                memmove(cs2 + kept, cs2 + i, cnt * sizeof(double));
                memmove(cf + kept, cf + i, cnt * sizeof(double));
            }
            kept += j - i;
            i = j;
            if (i >= nchk)
                break;
            int keep;
            if (g[i] > drop_above)
                keep = 0;
            else
                keep = exact_value(cf[i], s1t - cs1[i], s2t - cs2[i], t - (Py_ssize_t)ctau[i], pen) <=
                       bound;
            if (keep) {
                ctau[kept] = ctau[i];
                cs1[kept] = cs1[i];
                cs2[kept] = cs2[i];
                cf[kept] = cf[i];
                kept++;
            }
            i++;
        }
        nchk = kept;
        PUSH(t - (m - 1));
        /* Where it is, for a progress display that reads it from another thread or process (a
         * stale value is fine there); every 1024 steps, so no step pays for it. */
        if (progress && (t & 1023) == 0)
            __atomic_store_n(progress, (int64_t)t, __ATOMIC_RELAXED);
    }
#undef PUSH

    result = backtrack(last, n, cpts);
done:
    free(block);
    free(last);
    return result;
}


PyObject *
pelt_py_cpt_meanvar(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"x", "pen", "minseglen", "reference", "progress", NULL};
    Py_buffer buf, prog = {0};
    double pen;
    Py_ssize_t m = 2;
    int reference = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*d|npw*", kwlist, &buf, &pen, &m, &reference, &prog))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t *cpts = NULL;
    int64_t *progress = prog.buf && prog.len >= (Py_ssize_t)sizeof(int64_t) ? (int64_t *)prog.buf : NULL;
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
    k = reference ? pelt_meanvar_plain(x, n, pen, m, cpts) : pelt_meanvar(x, n, pen, m, cpts, progress);
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

