/*
 * analysis._pelt: changepoints exactly as R's
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
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* log(2*pi) from libm at run time (R evaluates it through the same libm). */
static double log_two_pi;

static inline double
meanvar_cost(double sx, double sx2, Py_ssize_t len)
{
    double n = (double)len;
    double sigsq = (sx2 - ((sx * sx) / n)) / n;
    if (sigsq <= 0)
        sigsq = 0.00000000001;
    return n * (log_two_pi + log(sigsq) + 1);
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
#define LN2 0.6931471805599453
#define SQRT2 1.4142135623730951
#define LOG_ERR 1e-6
#define REL_ERR 1e-12
#define FLOOR 0.00000000001
/* Candidates per block of the kernels' block minima/maxima (the scans for
 * the few candidates needing a decision skip whole blocks with them). */
#define BLOCK 64

/* Tables of the AVX-512 kernel (filled at import): 1/c_j and
 * -log(1/c_j) + log(2 pi) + 1 for c_j = 1 + (2j+1)/32. */
static double log_tab[16], inv_tab[16];

/* Portable kernel for one candidate: sig is R's own sigsq (its division
 * and floor), then log(sig) as in the AVX-512 kernel below (exponent, a
 * 16-entry table and a degree-3 polynomial; error < 2.3e-7), with scalar
 * table lookups and no data-dependent branch in the common case. */
static inline double
approx_one(Py_ssize_t i, double t, const double *ctau, const double *cs1, const double *cs2,
           const double *cf, double s1t, double s2t)
{
    double len = t - ctau[i];
    double sx = s1t - cs1[i];
    double sx2 = s2t - cs2[i];
    double a = sx2 - ((sx * sx) / len);
    double sig = a <= 0 ? FLOOR : a / len;
    union { double d; uint64_t u; } b, mx;
    b.d = sig;
    mx.u = (b.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double e = (double)((int)(b.u >> 52) - 1023);
    unsigned j = (unsigned)(b.u >> 48) & 15u;
    double r = mx.d * inv_tab[j] - 1.0;
    double p = r * (1.0 + r * (-0.5 + r * (1.0 / 3.0)));
    return cf[i] + len * ((e * LN2 + log_tab[j]) + p);
}

/* Every kernel writes g for candidates [0, nchk), the minimum and maximum
 * of each block of BLOCK candidates to bmin/bmax (in the same pass: a
 * separate pass over g cost the AVX2 kernel 30% of its time), and returns
 * the overall minimum. */
static double
approx_scalar(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
              const double *cf, double s1t, double s2t, double *g, double *bmin, double *bmax)
{
    double gmin = INFINITY;
    for (Py_ssize_t b0 = 0; b0 < nchk; b0 += BLOCK) {
        Py_ssize_t end = b0 + BLOCK < nchk ? b0 + BLOCK : nchk;
        double lo = INFINITY, hi = -INFINITY;
        for (Py_ssize_t i = b0; i < end; i++) {
            double v = approx_one(i, t, ctau, cs1, cs2, cf, s1t, s2t);
            g[i] = v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        bmin[b0 / BLOCK] = lo;
        bmax[b0 / BLOCK] = hi;
        gmin = lo < gmin ? lo : gmin;
    }
    return gmin;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
/* The portable kernel four candidates at a time (AVX2 + FMA), with two
 * changes that shorten its dependency chains (together 6-10% faster here):
 *  - 1/len: il = the single-precision reciprocal estimate of len (relative
 *    error <= 1.5 * 2^-12, plus 2^-24 if len rounds to float), d = len * il
 *    - 1 against the double len (one FMA rounding), and log(a / len) =
 *    log(a * il) - log(1 + d) with log(1 + d) replaced by d - d^2/2: error
 *    <= |d|^3 / (3 (1 - |d|)) < 2e-11; floored lanes take no correction;
 *  - the same degree-8 polynomial evaluated by Estrin's scheme (roundings
 *    ~1e-16, far inside the bound). */
__attribute__((target("avx2,fma"))) static double
approx_avx2(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
            const double *cf, double s1t, double s2t, double *g, double *bmin, double *bmax)
{
    const __m256d vt = _mm256_set1_pd(t), vs1 = _mm256_set1_pd(s1t), vs2 = _mm256_set1_pd(s2t);
    const __m256d vfloor = _mm256_set1_pd(FLOOR);
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0), mhalf = _mm256_set1_pd(-0.5);
    const __m256d half = _mm256_set1_pd(0.5), sqrt2 = _mm256_set1_pd(SQRT2);
    const __m256d ln2 = _mm256_set1_pd(LN2), l2p1 = _mm256_set1_pd(log_two_pi + 1.0);
    const __m256d magic = _mm256_set1_pd(4503599627370496.0 + 1023.0);
    const __m256i mant = _mm256_set1_epi64x(0x000fffffffffffffLL);
    const __m256i onebits = _mm256_set1_epi64x(0x3ff0000000000000LL);
    const __m256i expmask = _mm256_set1_epi64x(0x7ffLL);
    const __m256i magicbits = _mm256_set1_epi64x(0x4330000000000000LL);
    double gmin = INFINITY;
    for (Py_ssize_t b0 = 0; b0 < nchk; b0 += BLOCK) {
        Py_ssize_t end = b0 + BLOCK < nchk ? b0 + BLOCK : nchk, i = b0;
        __m256d bl = _mm256_set1_pd(INFINITY), bh = _mm256_set1_pd(-INFINITY);
        for (; i + 4 <= end; i += 4) {
            __m256d len = _mm256_sub_pd(vt, _mm256_loadu_pd(ctau + i));
            __m256d sx = _mm256_sub_pd(vs1, _mm256_loadu_pd(cs1 + i));
            __m256d sx2 = _mm256_sub_pd(vs2, _mm256_loadu_pd(cs2 + i));
            __m256d a = _mm256_sub_pd(sx2, _mm256_div_pd(_mm256_mul_pd(sx, sx), len));
            __m256d il = _mm256_cvtps_pd(_mm_rcp_ps(_mm256_cvtpd_ps(len)));
            __m256d d = _mm256_fmsub_pd(len, il, one);
            __m256d floored = _mm256_cmp_pd(a, zero, _CMP_LE_OQ);
            __m256d sig = _mm256_blendv_pd(_mm256_mul_pd(a, il), vfloor, floored);
            __m256d corr = _mm256_andnot_pd(floored, _mm256_fmadd_pd(_mm256_mul_pd(d, mhalf), d, d));
            __m256i bits = _mm256_castpd_si256(sig);
            __m256d m = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(bits, mant), onebits));
            __m256i eb = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(bits, 52), expmask), magicbits);
            __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(eb), magic);
            __m256d big = _mm256_cmp_pd(m, sqrt2, _CMP_GT_OQ);
            m = _mm256_blendv_pd(m, _mm256_mul_pd(m, half), big);
            e = _mm256_add_pd(e, _mm256_and_pd(big, one));
            __m256d z = _mm256_sub_pd(m, one);
            __m256d z2 = _mm256_mul_pd(z, z), z4 = _mm256_mul_pd(z2, z2);
            __m256d q0 = _mm256_fmadd_pd(_mm256_set1_pd(-0.5000036309272906), z, _mm256_set1_pd(0.9999999425426703));
            __m256d q1 = _mm256_fmadd_pd(_mm256_set1_pd(-0.2497007168513536), z, _mm256_set1_pd(0.3333511414037213));
            __m256d q2 = _mm256_fmadd_pd(_mm256_set1_pd(-0.1724701330165398), z, _mm256_set1_pd(0.19898565047375585));
            __m256d q3 = _mm256_fmadd_pd(_mm256_set1_pd(-0.10134056769143245), z, _mm256_set1_pd(0.16234189806463326));
            __m256d p = _mm256_fmadd_pd(_mm256_fmadd_pd(q3, z2, q2), z4, _mm256_fmadd_pd(q1, z2, q0));
            __m256d lg = _mm256_sub_pd(_mm256_fmadd_pd(e, ln2, _mm256_mul_pd(z, p)), corr);
            __m256d v = _mm256_fmadd_pd(len, _mm256_add_pd(l2p1, lg), _mm256_loadu_pd(cf + i));
            _mm256_storeu_pd(g + i, v);
            bl = _mm256_min_pd(bl, v);
            bh = _mm256_max_pd(bh, v);
        }
        double lo[4], hi[4];
        _mm256_storeu_pd(lo, bl);
        _mm256_storeu_pd(hi, bh);
        for (; i < end; i++) {  /* the last block's 1 to 3 leftover candidates */
            g[i] = approx_one(i, t, ctau, cs1, cs2, cf, s1t, s2t);
            lo[0] = g[i] < lo[0] ? g[i] : lo[0];
            hi[0] = g[i] > hi[0] ? g[i] : hi[0];
        }
        for (int k = 1; k < 4; k++) {
            lo[0] = lo[k] < lo[0] ? lo[k] : lo[0];
            hi[0] = hi[k] > hi[0] ? hi[k] : hi[0];
        }
        bmin[b0 / BLOCK] = lo[0];
        bmax[b0 / BLOCK] = hi[0];
        gmin = lo[0] < gmin ? lo[0] : gmin;
    }
    return gmin;
}

/*
 * AVX-512 kernel (512-bit vectors, eight candidates at a time), fewer
 * operations per candidate:
 *  - 1/len: il = rcp14(len) (relative error <= 2^-14), d = len * il - 1
 *    (one FMA rounding), sig = a * il, and log(a / len) = log(sig) - log(1+d)
 *    with log(1 + d) replaced by d: error <= d^2 / (2 (1 - |d|)) < 2e-9
 *    (+ 2 ulp roundings); floored lanes use sig = 1e-11, d = 0 exactly;
 *  - sig = 2^e * mx with getexp/getmant, mx in [1, 2); the top four bits
 *    of mx pick c_j = 1 + (2j+1)/32 (the centre of [1 + j/16, 1 + (j+1)/16)),
 *    r = mx * ic_j - 1 with ic_j = fl(1/c_j), |r| <= (1/32)/c_j + 2^-52
 *    <= 0.0304 (one FMA rounding, ~1e-17);
 *  - log(mx) = -log(ic_j) + log(1 + r) exactly; -log(ic_j) + log(2 pi) + 1
 *    is a table computed once with libm (error ~3e-16);
 *  - log(1 + r) by its Taylor polynomial of degree 3; the remainder is at
 *    most |r|^4 / (4 (1 - |r|)) <= 2.2e-7, the Horner roundings ~1e-17;
 *  - e * ln2: e is exact, ln2 carries 2.3e-17 relative error, so |e| <= 1075
 *    gives < 2e-14.
 * Total |log error| < 2.3e-7 (< 0.3 * LOG_ERR).
 * (The division for a is kept: it makes a R's own value; see above.)
 */
__attribute__((target("avx512f,avx512dq,avx2,fma"))) static double
approx_avx512(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
              const double *cf, double s1t, double s2t, double *g, double *bmin, double *bmax)
{
    const __m512d vt = _mm512_set1_pd(t), vs1 = _mm512_set1_pd(s1t), vs2 = _mm512_set1_pd(s2t);
    const __m512d vfloor = _mm512_set1_pd(FLOOR), zero = _mm512_setzero_pd();
    const __m512d one = _mm512_set1_pd(1.0), ln2 = _mm512_set1_pd(LN2);
    const __m512d c3 = _mm512_set1_pd(1.0 / 3.0), c2 = _mm512_set1_pd(-0.5);
    const __m512d il_lo = _mm512_loadu_pd(inv_tab), il_hi = _mm512_loadu_pd(inv_tab + 8);
    const __m512d lt_lo = _mm512_loadu_pd(log_tab), lt_hi = _mm512_loadu_pd(log_tab + 8);
    __m512d vmin = _mm512_set1_pd(INFINITY);
    /* Two passes over each block: R's variance numerators a first, then the
     * logs. Each loop's dependency chain is shorter than the fused one's, so
     * more iterations overlap (3-4% faster on this Zen 4). */
    double abuf[BLOCK];
#define STEP_A(LOAD)                                                                              \
    do {                                                                                          \
        __m512d len = _mm512_sub_pd(vt, LOAD(ctau + i));                                          \
        __m512d sx = _mm512_sub_pd(vs1, LOAD(cs1 + i));                                           \
        __m512d sx2 = _mm512_sub_pd(vs2, LOAD(cs2 + i));                                          \
        _mm512_storeu_pd(abuf + (i - b0), _mm512_sub_pd(sx2, _mm512_div_pd(_mm512_mul_pd(sx, sx), len))); \
    } while (0)
#define STEP_B(LOAD)                                                                              \
    do {                                                                                          \
        __m512d len = _mm512_sub_pd(vt, LOAD(ctau + i));                                          \
        __m512d a = _mm512_loadu_pd(abuf + (i - b0));                                             \
        /* sig = a * il with il = rcp14(len) = (1 + d) / len; log(1 + d) is      \
         * taken off below as d (|d| <= 2^-14, error d^2 / (2 (1 - |d|)) < 2e-9). */ \
        __m512d il = _mm512_rcp14_pd(len);                                                        \
        __m512d d = _mm512_fmsub_pd(len, il, one);                                                \
        __mmask8 pos = _mm512_cmp_pd_mask(a, zero, _CMP_GT_OQ);                                   \
        __m512d sig = _mm512_mask_mul_pd(vfloor, pos, a, il);                                     \
        d = _mm512_maskz_mov_pd(pos, d);                                                          \
        __m512d e = _mm512_getexp_pd(sig);                                                        \
        __m512d mx = _mm512_getmant_pd(sig, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);               \
        /* permutex2var reads only bits 3..0 of each index: mantissa bits 51..48. */             \
        __m512i idx = _mm512_srli_epi64(_mm512_castpd_si512(sig), 48);                            \
        __m512d ic = _mm512_permutex2var_pd(il_lo, idx, il_hi);                                   \
        __m512d lt = _mm512_permutex2var_pd(lt_lo, idx, lt_hi);                                   \
        __m512d r = _mm512_fmsub_pd(mx, ic, one);                                                 \
        __m512d p = _mm512_fmadd_pd(r, c3, c2);                                                   \
        p = _mm512_fmadd_pd(p, r, one);                                                           \
        __m512d w = _mm512_fmadd_pd(p, r, _mm512_sub_pd(_mm512_fmadd_pd(e, ln2, lt), d));         \
        v = _mm512_fmadd_pd(len, w, LOAD(cf + i));                                                \
    } while (0)
#define LOAD_FULL(p) _mm512_loadu_pd(p)
#define LOAD_TAIL(p) _mm512_maskz_loadu_pd(k, (p))
    __m512d v;
    for (Py_ssize_t b0 = 0; b0 < nchk; b0 += BLOCK) {
        Py_ssize_t end = b0 + BLOCK < nchk ? b0 + BLOCK : nchk, i = b0;
        __m512d bl = _mm512_set1_pd(INFINITY), bh = _mm512_set1_pd(-INFINITY);
        for (; i + 8 <= end; i += 8)
            STEP_A(LOAD_FULL);
        if (i < end) {  /* a whole vector of abuf is written; BLOCK is a multiple of 8 */
            __mmask8 k = (__mmask8)((1u << (end - i)) - 1);
            STEP_A(LOAD_TAIL);
        }
        for (i = b0; i + 8 <= end; i += 8) {
            STEP_B(LOAD_FULL);
            _mm512_storeu_pd(g + i, v);
            bl = _mm512_min_pd(bl, v);
            bh = _mm512_max_pd(bh, v);
        }
        if (i < end) {
            /* Masked-off lanes read zeros: len = t, finite values, discarded. */
            __mmask8 k = (__mmask8)((1u << (end - i)) - 1);
            STEP_B(LOAD_TAIL);
            _mm512_mask_storeu_pd(g + i, k, v);
            bl = _mm512_mask_min_pd(bl, k, bl, v);
            bh = _mm512_mask_max_pd(bh, k, bh, v);
        }
        bmin[b0 / BLOCK] = _mm512_reduce_min_pd(bl);
        bmax[b0 / BLOCK] = _mm512_reduce_max_pd(bh);
        vmin = _mm512_min_pd(vmin, bl);
    }
#undef STEP_A
#undef STEP_B
#undef LOAD_FULL
#undef LOAD_TAIL
    return _mm512_reduce_min_pd(vmin);
}

#endif

/* Which kernel runs: 0 portable, 1 AVX2, 2 AVX-512 (chosen at import;
 * COLDRUN_PELT_ISA=scalar|avx2 forces a lower one, for tests). */
static int isa_level;
static int use_avx2; /* the bootstrap's AVX2 path */

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
pelt_meanvar(const double *x, Py_ssize_t n, double pen, Py_ssize_t m, Py_ssize_t *cpts)
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
        if (isa_level == 2)
            gmin = approx_avx512(nchk, (double)t, ctau, cs1, cs2, cf, s1t, s2t, g, bmin, bmax);
        else if (isa_level == 1)
            gmin = approx_avx2(nchk, (double)t, ctau, cs1, cs2, cf, s1t, s2t, g, bmin, bmax);
        else
#endif
            gmin = approx_scalar(nchk, (double)t, ctau, cs1, cs2, cf, s1t, s2t, g, bmin, bmax);
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
    }
#undef PUSH

    result = backtrack(last, n, cpts);
done:
    free(block);
    free(last);
    return result;
}

static PyObject *
py_cpt_meanvar(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"x", "pen", "minseglen", "reference", NULL};
    Py_buffer buf;
    double pen;
    Py_ssize_t m = 2;
    int reference = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*d|np", kwlist, &buf, &pen, &m, &reference))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t *cpts = NULL;
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
    k = reference ? pelt_meanvar_plain(x, n, pen, m, cpts) : pelt_meanvar(x, n, pen, m, cpts);
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
    return out;
}

static PyObject *
py_r_mean(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    Py_ssize_t n = buf.len / (Py_ssize_t)sizeof(double);
    double r = n > 0 ? r_mean((const double *)buf.buf, n) : NAN;
    PyBuffer_Release(&buf);
    return PyFloat_FromDouble(r);
}

/* ---- Steady-state bootstrap ------------------------------------------------
 * warmup_stats' resampling (warmup/bootstrapper.py): for each process
 * execution, n_resamples times, draw len(seg) values with replacement from
 * each of its steady segments, and record the mean of everything drawn.
 * Python loops made this the slowest part of warmup_stats (it shells out to
 * PyPy); here it is a tight C loop over a seeded xoshiro256** generator with
 * unbiased bounded integers (Lemire's multiply-and-reject).
 * Sums are plain sequential double sums (warmup_stats uses math.fsum; the
 * difference is ~1e-16 relative, far inside the bootstrap's own spread). */
typedef struct {
    uint64_t s[4];
} xoshiro;

static inline uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t
xoshiro_next(xoshiro *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform integer in [0, range) from 32 random bits, range in [1, 2^32),
 * without modulo bias (Lemire's multiply-and-reject); draws more bits from
 * the generator only when rejecting. */
static inline uint32_t
bounded32(xoshiro *r, uint32_t bits, uint32_t range)
{
    uint64_t m = (uint64_t)bits * range;
    uint32_t low = (uint32_t)m;
    if (low < range) {
        uint32_t threshold = (0u - range) % range;
        while (low < threshold) {
            m = (uint64_t)(uint32_t)xoshiro_next(r) * range;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* Sum of len values drawn with replacement from seg; two draws per 64
 * random bits, two accumulators to shorten the dependency chain. */
static inline double
resample_sum(xoshiro *r, const double *seg, uint32_t len)
{
    double a = 0.0, b = 0.0;
    uint32_t j = 0;
    for (; j + 2 <= len; j += 2) {
        uint64_t bits = xoshiro_next(r);
        a += seg[bounded32(r, (uint32_t)bits, len)];
        b += seg[bounded32(r, (uint32_t)(bits >> 32), len)];
    }
    if (j < len)
        a += seg[bounded32(r, (uint32_t)xoshiro_next(r), len)];
    return a + b;
}

#ifdef HAVE_AVX2_PATH
/* Four xoshiro256** generators in the lanes of AVX2 registers. */
typedef struct {
    __m256i s0, s1, s2, s3;
} xoshiro4;

/* x rotated left by k, AVX2 (two shifts and an or) and AVX-512VL (one
 * instruction); the bootstrap kernels are instantiated with each, giving
 * bit-identical streams. */
__attribute__((target("avx2"))) static inline __m256i
rotl4_avx2(__m256i x, int k)
{
    return _mm256_or_si256(_mm256_slli_epi64(x, k), _mm256_srli_epi64(x, 64 - k));
}
#define rotl4_vl(x, k) _mm256_rol_epi64((x), (k))
#define NAME_AVX2(f) f##_avx2
#define NAME_VL(f) f##_vl

/* The generator, bounded draws and resampling loops, as a template. */
#define BOOTSTRAP_KERNELS(TARGET, NAME, ROTL) \
 \
__attribute__((target(TARGET))) static inline __m256i \
NAME(xoshiro4_next)(xoshiro4 *r) \
{ \
    __m256i s1x5 = _mm256_add_epi64(_mm256_slli_epi64(r->s1, 2), r->s1); \
    __m256i rot = ROTL(s1x5, 7); \
    __m256i result = _mm256_add_epi64(_mm256_slli_epi64(rot, 3), rot); \
    __m256i t = _mm256_slli_epi64(r->s1, 17); \
    r->s2 = _mm256_xor_si256(r->s2, r->s0); \
    r->s3 = _mm256_xor_si256(r->s3, r->s1); \
    r->s1 = _mm256_xor_si256(r->s1, r->s2); \
    r->s0 = _mm256_xor_si256(r->s0, r->s3); \
    r->s2 = _mm256_xor_si256(r->s2, t); \
    r->s3 = ROTL(r->s3, 45); \
    return result; \
} \
 \
/* Four unbiased indices in [0, len) from the 32-bit halves picked by \
 * `shift` (0 or 32) of fresh random words; rejected lanes redraw. */ \
__attribute__((target(TARGET))) static inline __m256i \
NAME(bounded4)(xoshiro4 *r, __m256i bits, __m256i vlen, __m256i vthr) \
{ \
    const __m256i mask32 = _mm256_set1_epi64x(0xffffffffLL); \
    __m256i prod = _mm256_mul_epu32(bits, vlen); \
    __m256i rej = _mm256_cmpgt_epi64(vthr, _mm256_and_si256(prod, mask32)); \
    while (!_mm256_testz_si256(rej, rej)) { \
        __m256i again = _mm256_mul_epu32(NAME(xoshiro4_next)(r), vlen); \
        prod = _mm256_blendv_epi8(prod, again, rej); \
        rej = _mm256_and_si256(rej, _mm256_cmpgt_epi64(vthr, _mm256_and_si256(prod, mask32))); \
    } \
    return _mm256_srli_epi64(prod, 32); \
} \
 \
/* Resample means of one execution, four resamples at a time (one per lane). */ \
__attribute__((target(TARGET))) static void \
NAME(resample_exec)(xoshiro4 *r, const double *v, const int64_t *so, int64_t g0, int64_t g1, \
                   Py_ssize_t n_resamples, double *means) \
{ \
    double total = (double)(so[g1] - so[g0]); \
    for (Py_ssize_t base = 0; base < n_resamples; base += 4) { \
        __m256d acc_a = _mm256_setzero_pd(), acc_b = _mm256_setzero_pd(); \
        for (int64_t g = g0; g < g1; g++) { \
            const double *seg = v + so[g]; \
            uint32_t len = (uint32_t)(so[g + 1] - so[g]); \
            if (len == 0) \
                continue; \
            __m256i vlen = _mm256_set1_epi64x(len); \
            __m256i vthr = _mm256_set1_epi64x((0u - len) % len); \
            uint32_t j = 0; \
            for (; j + 2 <= len; j += 2) { \
                __m256i bits = NAME(xoshiro4_next)(r); \
                __m256i ia = NAME(bounded4)(r, bits, vlen, vthr); \
                __m256i ib = NAME(bounded4)(r, _mm256_srli_epi64(bits, 32), vlen, vthr); \
                acc_a = _mm256_add_pd(acc_a, _mm256_i64gather_pd(seg, ia, 8)); \
                acc_b = _mm256_add_pd(acc_b, _mm256_i64gather_pd(seg, ib, 8)); \
            } \
            if (j < len) { \
                __m256i ia = NAME(bounded4)(r, NAME(xoshiro4_next)(r), vlen, vthr); \
                acc_a = _mm256_add_pd(acc_a, _mm256_i64gather_pd(seg, ia, 8)); \
            } \
        } \
        double lane[4]; \
        _mm256_storeu_pd(lane, _mm256_div_pd(_mm256_add_pd(acc_a, acc_b), _mm256_set1_pd(total))); \
        for (int k = 0; k < 4 && base + k < n_resamples; k++) \
            means[base + k] = total > 0 ? lane[k] : NAN; \
    } \
} \
 \
__attribute__((target(TARGET))) static void \
NAME(bootstrap)(const uint64_t lanes[16], const double *v, const int64_t *so, const int64_t *po, \
               Py_ssize_t npexec, Py_ssize_t n_resamples, double *means) \
{ \
    xoshiro4 r4; \
    r4.s0 = _mm256_loadu_si256((const __m256i *)lanes); \
    r4.s1 = _mm256_loadu_si256((const __m256i *)(lanes + 4)); \
    r4.s2 = _mm256_loadu_si256((const __m256i *)(lanes + 8)); \
    r4.s3 = _mm256_loadu_si256((const __m256i *)(lanes + 12)); \
    for (Py_ssize_t p = 0; p < npexec; p++) \
        NAME(resample_exec)(&r4, v, so, po[p], po[p + 1], n_resamples, means + p * n_resamples); \
}

BOOTSTRAP_KERNELS("avx2", NAME_AVX2, rotl4_avx2)
BOOTSTRAP_KERNELS("avx2,avx512f,avx512vl", NAME_VL, rotl4_vl)
#endif

static PyObject *
py_bootstrap_means(PyObject *self, PyObject *args)
{
    Py_buffer values, segs, pexecs, out;
    Py_ssize_t n_resamples;
    unsigned long long k0, k1, k2, k3;
    if (!PyArg_ParseTuple(args, "y*y*y*nKKKKw*", &values, &segs, &pexecs, &n_resamples, &k0, &k1,
                          &k2, &k3, &out))
        return NULL;
    PyObject *ret = NULL;
    const double *v = values.buf;
    const int64_t *so = segs.buf, *po = pexecs.buf;
    double *means = out.buf;
    Py_ssize_t nseg = segs.len / 8 - 1, npexec = pexecs.len / 8 - 1;
    if (nseg < 0 || npexec < 0 || out.len / 8 < npexec * n_resamples || n_resamples < 0 ||
        (k0 | k1 | k2 | k3) == 0) {
        PyErr_SetString(PyExc_ValueError, "bootstrap_means: inconsistent buffers or zero seed");
        goto done;
    }
    for (Py_ssize_t p = 0; p < npexec; p++)
        if (po[p] < 0 || po[p + 1] > nseg || po[p] > po[p + 1]) {
            PyErr_SetString(PyExc_ValueError, "bootstrap_means: bad execution offsets");
            goto done;
        }
    for (Py_ssize_t g = 0; g < nseg; g++)
        if (so[g] < 0 || so[g] > so[g + 1] || so[g + 1] > values.len / 8 ||
            so[g + 1] - so[g] >= 0xffffffffLL) {
            PyErr_SetString(PyExc_ValueError, "bootstrap_means: bad segment offsets");
            goto done;
        }
    Py_BEGIN_ALLOW_THREADS
    xoshiro rng = {{k0, k1, k2, k3}};
#ifdef HAVE_AVX2_PATH
    if (use_avx2) {
        /* Lane generators seeded from the scalar one: distinct streams. */
        uint64_t lanes[16];
        for (int k = 0; k < 16; k++)
            lanes[k] = xoshiro_next(&rng);
        for (int k = 0; k < 4; k++)
            if ((lanes[k] | lanes[4 + k] | lanes[8 + k] | lanes[12 + k]) == 0)
                lanes[k] = 1;
        if (isa_level == 2)
            bootstrap_vl(lanes, v, so, po, npexec, n_resamples, means);
        else
            bootstrap_avx2(lanes, v, so, po, npexec, n_resamples, means);
    } else
#endif
    {
        for (Py_ssize_t p = 0; p < npexec; p++) {
            int64_t total = so[po[p + 1]] - so[po[p]];
            for (Py_ssize_t r = 0; r < n_resamples; r++) {
                double sum = 0.0;
                for (int64_t g = po[p]; g < po[p + 1]; g++)
                    sum += resample_sum(&rng, v + so[g], (uint32_t)(so[g + 1] - so[g]));
                means[p * n_resamples + r] = total > 0 ? sum / (double)total : NAN;
            }
        }
    }
    Py_END_ALLOW_THREADS
    ret = Py_None;
    Py_INCREF(ret);
done:
    PyBuffer_Release(&values);
    PyBuffer_Release(&segs);
    PyBuffer_Release(&pexecs);
    PyBuffer_Release(&out);
    return ret;
}

/* ---- Outliers ---------------------------------------------------------------
 * warmup_stats' sliding-window rule (analysis/outliers.py has the Python
 * statement of it): window [i-half, min(size, i+half)), skipped while it
 * starts at 0 with fewer than w points, outlier when strictly outside
 * median +- 3 * (p90 - p10) with warmup_stats' median and percentile
 * expressions, evaluated here in the same double operations. The window is
 * kept sorted incrementally (binary search + memmove) instead of sorting
 * every window. */
static Py_ssize_t
lower_pos(const double *a, Py_ssize_t n, double v)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void
sorted_insert(double *a, Py_ssize_t *n, double v)
{
    Py_ssize_t pos = lower_pos(a, *n, v);
    memmove(a + pos + 1, a + pos, (size_t)(*n - pos) * sizeof(double));
    a[pos] = v;
    (*n)++;
}

static void
sorted_remove(double *a, Py_ssize_t *n, double v)
{
    Py_ssize_t pos = lower_pos(a, *n, v);
    memmove(a + pos, a + pos + 1, (size_t)(*n - pos - 1) * sizeof(double));
    (*n)--;
}

static double
ws_percentile(const double *d, Py_ssize_t size, double pc)
{
    if (size == 1)
        return d[0];
    double index = (double)(size - 1) * (pc / 100.0);
    double f = floor(index), c = ceil(index);
    if (f == c)
        return d[(Py_ssize_t)index];
    double d0 = d[(Py_ssize_t)f] * (c - index);
    double d1 = d[(Py_ssize_t)c] * (index - f);
    return d0 + d1;
}

static double
ws_median(const double *d, Py_ssize_t size)
{
    if (size == 1)
        return d[0];
    Py_ssize_t index = (size - 1) / 2;
    if (size % 2 == 1)
        return d[index];
    return (d[index] + d[index + 1]) / 2.0;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static PyObject *
py_outliers(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    Py_ssize_t window;
    if (!PyArg_ParseTuple(args, "y*n", &buf, &window))
        return NULL;
    const double *x = buf.buf;
    Py_ssize_t size = buf.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t half = window / 2;
    PyObject *out = PyList_New(0);
    double *win = NULL;
    if (!out)
        goto done;
    if (half < 1 || size == 0)
        goto done;
    win = malloc((size_t)(2 * half + 1) * sizeof(double));
    if (!win) {
        Py_CLEAR(out);
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = 0, cur_lo = 0, cur_hi = 0, started = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_ssize_t lo = i - half < 0 ? 0 : i - half;
        Py_ssize_t hi = i + half > size ? size : i + half;
        if (lo == 0 && hi < window)
            continue;
        if (!started) {
            n = hi - lo;
            memcpy(win, x + lo, (size_t)n * sizeof(double));
            qsort(win, (size_t)n, sizeof(double), cmp_double);
            started = 1;
        } else {
            for (Py_ssize_t k = cur_lo; k < lo; k++)
                sorted_remove(win, &n, x[k]);
            for (Py_ssize_t k = cur_hi; k < hi; k++)
                sorted_insert(win, &n, x[k]);
        }
        cur_lo = lo;
        cur_hi = hi;
        double med = ws_median(win, n);
        double band = 3 * (ws_percentile(win, n, 90.0) - ws_percentile(win, n, 10.0));
        if (x[i] > med + band || x[i] < med - band) {
            PyObject *idx = PyLong_FromSsize_t(i);
            if (!idx || PyList_Append(out, idx) < 0) {
                Py_XDECREF(idx);
                Py_CLEAR(out);
                goto done;
            }
            Py_DECREF(idx);
        }
    }
done:
    free(win);
    PyBuffer_Release(&buf);
    return out;
}

static PyMethodDef methods[] = {
    {"cpt_meanvar", (PyCFunction)(void (*)(void))py_cpt_meanvar, METH_VARARGS | METH_KEYWORDS,
     "cpt_meanvar(x, pen, minseglen=2, reference=False) -> (cpts, means, variances)\n\n"
     "R changepoint's PELT meanvar (Normal) on a C-contiguous float64 buffer.\n"
     "cpts are 1-based segment ends including len(x); variances divide by the\n"
     "segment length. Raises ValueError when len(x) < 2*minseglen (R errors too).\n"
     "reference=True runs R's loop literally (an exact log per candidate, R's\n"
     "speed): the same result, for tests and benchmarks."},
    {"bootstrap_means", py_bootstrap_means, METH_VARARGS,
     "bootstrap_means(values, seg_offsets, exec_offsets, n_resamples, k0, k1, k2, k3, out)\n\n"
     "values: float64 steady values of all executions; seg_offsets: int64 segment\n"
     "boundaries into values (nseg+1); exec_offsets: int64 segment index where each\n"
     "execution starts (nexec+1); k0..k3: xoshiro256** state (not all zero); out:\n"
     "writable float64 buffer of nexec*n_resamples resample means, execution-major."},
    {"outliers", py_outliers, METH_VARARGS,
     "outliers(x, window) -> list[int]: warmup_stats' sliding-window outliers of a float64 buffer."},
    {"r_mean", py_r_mean, METH_VARARGS,
     "r_mean(x) -> float: R's mean() of a float64 buffer (two-pass long double)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "analysis._pelt",
    "R-exact PELT changepoints (long-double running sums).", -1, methods,
};

PyMODINIT_FUNC
PyInit__pelt(void)
{
    volatile double two_pi = 2 * M_PI;
    log_two_pi = log(two_pi);
    for (int j = 0; j < 16; j++) {
        volatile double c = 1.0 + (2.0 * j + 1.0) / 32.0;
        inv_tab[j] = 1.0 / c;
        log_tab[j] = (-log(inv_tab[j]) + log_two_pi) + 1.0;
    }
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    const char *isa = getenv("COLDRUN_PELT_ISA");
    int cap = isa == NULL ? 2 : strcmp(isa, "avx2") == 0 ? 1 : strcmp(isa, "scalar") == 0 ? 0 : 2;
    if (getenv("COLDRUN_PELT_SCALAR") != NULL)
        cap = 0;
    isa_level = 0;
    if (cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        isa_level = 1;
    /* Level 2 also runs the bootstrap's AVX-512VL kernel. */
    if (cap >= 2 && isa_level == 1 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        isa_level = 2;
    use_avx2 = isa_level >= 1;
#endif
    PyObject *m = PyModule_Create(&module);
    /* Which kernel this process runs, so tests comparing kernels can tell
     * when a CPU lacks one and they would compare a kernel with itself. */
    const char *kernel = isa_level == 2 ? "avx512" : isa_level == 1 ? "avx2" : "scalar";
    if (m != NULL && PyModule_AddStringConstant(m, "kernel", kernel) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
