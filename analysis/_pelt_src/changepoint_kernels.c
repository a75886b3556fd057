/*
 * The approximate candidate kernels of analysis._pelt's PELT: g = F[tau] +
 * cost(tau, t) with a proven error bound, so changepoints.c needs R's exact
 * value only where the bound cannot decide (the budget: "Speed" in
 * changepoints.c). Each kernel evaluates a run of candidates at one step and
 * writes each one's g and R's variance numerator a (the skipping of blocks in
 * changepoints.c bounds its error bound with a). Portable, AVX2+FMA and
 * AVX-512 versions; changepoints.c picks one per process.
 *
 * Every kernel computes, per candidate:
 *  - a = sx2 - (sx*sx)/len with R's own operations (mul, div, sub; no FMA),
 *    so cancellation in the variance and the 1e-11 floor are exactly R's;
 *  - sig = a * il with il ~ 1/len (relative error below 2^-20 after
 *    refinement) and d = len * il - 1 (one FMA rounding, |d| < 2^-20), so
 *    log(a/len) = log(sig) - log(1 + d); log(1 + d) is taken as
 *    d - d^2/2 + d^3/3 (remainder < d^4/4 < 1e-24); floored lanes use
 *    sig = 1e-11 and d = 0 as R does;
 *  - sig = 2^e * mx, mx in [1, 2); the top four bits of mx pick
 *    c_j = 1 + (2j+1)/32, r = mx * ic_j - 1 with ic_j = fl(1/c_j),
 *    |r| <= 0.0304 (one FMA rounding); log(mx) = -log(ic_j) + log(1 + r)
 *    exactly, with -log(ic_j) + log(2 pi) + 1 from a table made with libm;
 *  - log(1 + r) by its Taylor polynomial of degree 8, remainder at most
 *    |r|^9 / (9 (1 - |r|)) < 2.6e-15;
 *  - e * ln2 as e * LN2_HI (exact: LN2_HI has 32 significant bits and
 *    |e| <= 1075) plus e * LN2_LO;
 *  - g = F[tau] + len * w with w = K + log(sig) - log(1 + d), K = log(2 pi) + 1.
 * The error of w against R's own w (libm's log, within 1 ulp, and R's two
 * additions) is below 4e-13 for |w| < 803 (at most four roundings of 0.5 ulp
 * of 803, 5.7e-14 each, on each side, plus the remainder): LOG_ERR = 1e-12.
 */
#include "pelt.h"

#define LN2_HI 0.693147180369123816490   /* 0x3fe62e42fee00000 */
#define LN2_LO 1.90821492927058770002e-10 /* 0x3dea39ef35793c76 */
#define FLOOR 0.00000000001

/* 1/c_j and -log(1/c_j) + log(2 pi) + 1 for c_j = 1 + (2j+1)/32 (filled at import). */
static double log_tab[16], inv_tab[16];

/* log(1 + r) for |r| <= 0.0304: Taylor to degree 8, Horner. */
#define LOG1P_POLY(r, MUL_ADD)                                                                  \
    MUL_ADD(r, MUL_ADD(r, MUL_ADD(r, MUL_ADD(r, MUL_ADD(r, MUL_ADD(r, MUL_ADD(r, MUL_ADD(r,   \
        C(-1.0 / 8.0), C(1.0 / 7.0)), C(-1.0 / 6.0)), C(1.0 / 5.0)), C(-1.0 / 4.0)),           \
        C(1.0 / 3.0)), C(-0.5)), C(1.0)), C(0.0))

/* R's variance numerator of segment (tau, t]: its own operations. */
static inline double
numerator(double len, double s1tau, double s2tau, double s1t, double s2t)
{
    double sx = s1t - s1tau;
    return (s2t - s2tau) - ((sx * sx) / len);
}

/* g from R's numerator a of a segment of len points. */
static inline double
approx_from(double len, double a, double ftau)
{
    /* The portable path divides: sig is R's own sigsq, d = 0. */
    double sig = a <= 0 ? FLOOR : a / len;
    union { double d; uint64_t u; } b, mx;
    b.d = sig;
    mx.u = (b.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double e = (double)((int)(b.u >> 52) - 1023);
    unsigned j = (unsigned)(b.u >> 48) & 15u;
    double r = mx.d * inv_tab[j] - 1.0; /* two roundings here: 1.2e-16 in log */
#define C(v) (v)
#define MA(x, p, c) ((p) * (x) + (c))
    double p = LOG1P_POLY(r, MA);
#undef MA
#undef C
    double w = (e * LN2_HI + log_tab[j]) + (e * LN2_LO + p);
    return ftau + len * w;
}

double
pelt_approx_one(double t, double tau, double s1tau, double s2tau, double ftau, double s1t, double s2t)
{
    double len = t - tau;
    return approx_from(len, numerator(len, s1tau, s2tau, s1t, s2t), ftau);
}

/* Every kernel: g and a of candidates [0, nchk) at step t, to g[i] and a[i],
 * and over the live candidates (F finite) the least g, the greatest g and the
 * least a to bounds[0..2]. */
void
pelt_approx_scalar(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
                   const double *cf, double s1t, double s2t, double *g, double *a, double *bounds)
{
    double gmin = INFINITY, gmax = -INFINITY, amin = INFINITY;
    for (Py_ssize_t i = 0; i < nchk; i++) {
        double len = t - ctau[i];
        a[i] = numerator(len, cs1[i], cs2[i], s1t, s2t);     /* once: g is made from it */
        g[i] = approx_from(len, a[i], cf[i]);
        if (cf[i] != INFINITY) {
            gmin = g[i] < gmin ? g[i] : gmin;
            gmax = g[i] > gmax ? g[i] : gmax;
            amin = a[i] < amin ? a[i] : amin;
        }
    }
    bounds[0] = gmin;
    bounds[1] = gmax;
    bounds[2] = amin;
}


#ifdef HAVE_AVX2_PATH
/* Four candidates at a time (AVX2 + FMA). 1/len from the single-precision
 * estimate (relative error <= 1.5 * 2^-12, plus 2^-24 if len rounds to
 * float) and one Newton step (error <= 2^-22 + rounding); exponent and
 * mantissa from the bits; the tables through gathers. */
__attribute__((target("avx2,fma"))) void
pelt_approx_avx2(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
                 const double *cf, double s1t, double s2t, double *g, double *aout, double *bounds)
{
    const __m256d inf = _mm256_set1_pd(INFINITY), minf = _mm256_set1_pd(-INFINITY);
    __m256d vgmin = inf, vgmax = minf, vamin = inf;
    const __m256d vfloor = _mm256_set1_pd(FLOOR), zero = _mm256_setzero_pd();
    const __m256d one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
    const __m256d ln2hi = _mm256_set1_pd(LN2_HI), ln2lo = _mm256_set1_pd(LN2_LO);
    const __m256d mhalf = _mm256_set1_pd(-0.5), third = _mm256_set1_pd(1.0 / 3.0);
    const __m256d magic = _mm256_set1_pd(4503599627370496.0 + 1023.0);
    const __m256i mant = _mm256_set1_epi64x(0x000fffffffffffffLL);
    const __m256i onebits = _mm256_set1_epi64x(0x3ff0000000000000LL);
    const __m256i expmask = _mm256_set1_epi64x(0x7ffLL);
    const __m256i magicbits = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256i idxmask = _mm256_set1_epi64x(15);
    const __m256d vt = _mm256_set1_pd(t), vs1 = _mm256_set1_pd(s1t), vs2 = _mm256_set1_pd(s2t);
    Py_ssize_t i = 0;
    for (; i + 4 <= nchk; i += 4) {
        __m256d len = _mm256_sub_pd(vt, _mm256_loadu_pd(ctau + i));
        __m256d sx = _mm256_sub_pd(vs1, _mm256_loadu_pd(cs1 + i));
        __m256d sx2 = _mm256_sub_pd(vs2, _mm256_loadu_pd(cs2 + i));
        __m256d a = _mm256_sub_pd(sx2, _mm256_div_pd(_mm256_mul_pd(sx, sx), len));
        __m256d il = _mm256_cvtps_pd(_mm_rcp_ps(_mm256_cvtpd_ps(len)));
        il = _mm256_mul_pd(il, _mm256_fnmadd_pd(len, il, two));
        __m256d d = _mm256_fmsub_pd(len, il, one);
        __m256d floored = _mm256_cmp_pd(a, zero, _CMP_LE_OQ);
        __m256d sig = _mm256_blendv_pd(_mm256_mul_pd(a, il), vfloor, floored);
        /* log(1 + d) = d - d^2/2 + d^3/3 */
        __m256d l1d = _mm256_mul_pd(d, _mm256_fmadd_pd(_mm256_fmadd_pd(d, third, mhalf), d, one));
        l1d = _mm256_andnot_pd(floored, l1d);
        __m256i bits = _mm256_castpd_si256(sig);
        __m256d mx = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(bits, mant), onebits));
        __m256i eb = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(bits, 52), expmask), magicbits);
        __m256d e = _mm256_sub_pd(_mm256_castsi256_pd(eb), magic);
        __m256i idx = _mm256_and_si256(_mm256_srli_epi64(bits, 48), idxmask);
        __m256d ic = _mm256_i64gather_pd(inv_tab, idx, 8);
        __m256d lt = _mm256_i64gather_pd(log_tab, idx, 8);
        __m256d r = _mm256_fmsub_pd(mx, ic, one);
#define C(v) _mm256_set1_pd(v)
#define MA(x, p, c) _mm256_fmadd_pd(p, x, c)
        __m256d p = LOG1P_POLY(r, MA);
#undef MA
#undef C
        __m256d hi = _mm256_fmadd_pd(e, ln2hi, lt);
        __m256d lo = _mm256_sub_pd(_mm256_fmadd_pd(e, ln2lo, p), l1d);
        __m256d f = _mm256_loadu_pd(cf + i);
        __m256d v = _mm256_fmadd_pd(len, _mm256_add_pd(hi, lo), f);
        _mm256_storeu_pd(g + i, v);
        _mm256_storeu_pd(aout + i, a);
        __m256d dead = _mm256_cmp_pd(f, inf, _CMP_EQ_OQ);
        vgmin = _mm256_min_pd(vgmin, v);
        vgmax = _mm256_max_pd(vgmax, _mm256_blendv_pd(v, minf, dead));
        vamin = _mm256_min_pd(vamin, _mm256_blendv_pd(a, inf, dead));
    }
    double lo4[4], hi4[4], a4[4], rest[3] = {INFINITY, -INFINITY, INFINITY};
    _mm256_storeu_pd(lo4, vgmin);
    _mm256_storeu_pd(hi4, vgmax);
    _mm256_storeu_pd(a4, vamin);
    if (i < nchk) /* the 1 to 3 leftover candidates */
        pelt_approx_scalar(nchk - i, t, ctau + i, cs1 + i, cs2 + i, cf + i, s1t, s2t, g + i, aout + i, rest);
    for (int k = 0; k < 4; k++) {
        rest[0] = lo4[k] < rest[0] ? lo4[k] : rest[0];
        rest[1] = hi4[k] > rest[1] ? hi4[k] : rest[1];
        rest[2] = a4[k] < rest[2] ? a4[k] : rest[2];
    }
    bounds[0] = rest[0];
    bounds[1] = rest[1];
    bounds[2] = rest[2];
}

/* Eight candidates at a time (AVX-512F/DQ). 1/len = rcp14 (relative error
 * <= 2^-14) and one Newton step; exponent and mantissa by getexp/getmant;
 * the 16-entry tables through permutex2var. */
__attribute__((target("avx512f,avx512dq,avx2,fma"))) void
pelt_approx_avx512(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
                   const double *cf, double s1t, double s2t, double *g, double *aout, double *bounds)
{
    const __m512d inf = _mm512_set1_pd(INFINITY);
    __m512d vgmin = inf, vgmax = _mm512_set1_pd(-INFINITY), vamin = inf;
    const __m512d vfloor = _mm512_set1_pd(FLOOR), zero = _mm512_setzero_pd();
    const __m512d one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0);
    const __m512d ln2hi = _mm512_set1_pd(LN2_HI), ln2lo = _mm512_set1_pd(LN2_LO);
    const __m512d mhalf = _mm512_set1_pd(-0.5), third = _mm512_set1_pd(1.0 / 3.0);
    const __m512d il_lo = _mm512_loadu_pd(inv_tab), il_hi = _mm512_loadu_pd(inv_tab + 8);
    const __m512d lt_lo = _mm512_loadu_pd(log_tab), lt_hi = _mm512_loadu_pd(log_tab + 8);
    const __m512d vt = _mm512_set1_pd(t), vs1 = _mm512_set1_pd(s1t), vs2 = _mm512_set1_pd(s2t);
#define C(v) _mm512_set1_pd(v)
#define MA(x, p, c) _mm512_fmadd_pd(p, x, c)
    for (Py_ssize_t i = 0; i < nchk; i += 8) {
        /* The last vector may be partial: masked-off lanes read zeros (len = t, finite) and store nothing. */
        __mmask8 m = nchk - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (nchk - i)) - 1);
        __m512d len = _mm512_sub_pd(vt, _mm512_maskz_loadu_pd(m, ctau + i));
        __m512d sx = _mm512_sub_pd(vs1, _mm512_maskz_loadu_pd(m, cs1 + i));
        __m512d sx2 = _mm512_sub_pd(vs2, _mm512_maskz_loadu_pd(m, cs2 + i));
        __m512d a = _mm512_sub_pd(sx2, _mm512_div_pd(_mm512_mul_pd(sx, sx), len));
        __m512d il = _mm512_rcp14_pd(len);
        il = _mm512_mul_pd(il, _mm512_fnmadd_pd(len, il, two));
        __m512d d = _mm512_fmsub_pd(len, il, one);
        __mmask8 pos = _mm512_cmp_pd_mask(a, zero, _CMP_GT_OQ);
        __m512d sig = _mm512_mask_mul_pd(vfloor, pos, a, il);
        __m512d l1d = _mm512_maskz_mul_pd(pos, d, _mm512_fmadd_pd(_mm512_fmadd_pd(d, third, mhalf), d, one));
        __m512d e = _mm512_getexp_pd(sig);
        __m512d mx = _mm512_getmant_pd(sig, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
        /* permutex2var reads only bits 3..0 of each index: mantissa bits 51..48. */
        __m512i idx = _mm512_srli_epi64(_mm512_castpd_si512(sig), 48);
        __m512d ic = _mm512_permutex2var_pd(il_lo, idx, il_hi);
        __m512d lt = _mm512_permutex2var_pd(lt_lo, idx, lt_hi);
        __m512d r = _mm512_fmsub_pd(mx, ic, one);
        __m512d p = LOG1P_POLY(r, MA);
        __m512d hi = _mm512_fmadd_pd(e, ln2hi, lt);
        __m512d lo = _mm512_sub_pd(_mm512_fmadd_pd(e, ln2lo, p), l1d);
        __m512d f = _mm512_maskz_loadu_pd(m, cf + i);
        __m512d v = _mm512_fmadd_pd(len, _mm512_add_pd(hi, lo), f);
        _mm512_mask_storeu_pd(g + i, m, v);
        _mm512_mask_storeu_pd(aout + i, m, a);
        __mmask8 live = _mm512_mask_cmp_pd_mask(m, f, inf, _CMP_NEQ_OQ);
        vgmin = _mm512_mask_min_pd(vgmin, m, vgmin, v);
        vgmax = _mm512_mask_max_pd(vgmax, live, vgmax, v);
        vamin = _mm512_mask_min_pd(vamin, live, vamin, a);
    }
    bounds[0] = _mm512_reduce_min_pd(vgmin);
    bounds[1] = _mm512_reduce_max_pd(vgmax);
    bounds[2] = _mm512_reduce_min_pd(vamin);
#undef C
#undef MA
}

#endif

void
pelt_kernels_init(void)
{
    for (int j = 0; j < 16; j++) {
        volatile double c = 1.0 + (2.0 * j + 1.0) / 32.0;
        inv_tab[j] = 1.0 / c;
        log_tab[j] = (-log(inv_tab[j]) + pelt_log_two_pi) + 1.0;
    }
}
