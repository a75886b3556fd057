/*
 * The approximate candidate kernels of analysis._pelt's PELT: g = F[tau] +
 * cost(tau, t) with a proven error bound, so changepoints.c needs R's exact
 * value only where the bound cannot decide (the bounds and why they hold:
 * "Speed" in changepoints.c and each kernel's comment below). Portable,
 * AVX2+FMA and AVX-512 versions; changepoints.c picks one per process.
 */
#include "pelt.h"

#define LN2 0.6931471805599453
#define SQRT2 1.4142135623730951
#define FLOOR 0.00000000001

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
double
pelt_approx_scalar(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
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


#ifdef HAVE_AVX2_PATH
/* The portable kernel four candidates at a time (AVX2 + FMA), with two
 * changes that shorten its dependency chains (together 6-10% faster here):
 *  - 1/len: il = the single-precision reciprocal estimate of len (relative
 *    error <= 1.5 * 2^-12, plus 2^-24 if len rounds to float), d = len * il
 *    - 1 against the double len (one FMA rounding), and log(a / len) =
 *    log(a * il) - log(1 + d) with log(1 + d) replaced by d - d^2/2: error
 *    <= |d|^3 / (3 (1 - |d|)) < 2e-11; floored lanes take no correction;
 *  - the same degree-8 polynomial evaluated by Estrin's scheme (roundings
 *    ~1e-16, far inside the bound). */
__attribute__((target("avx2,fma"))) double
pelt_approx_avx2(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
            const double *cf, double s1t, double s2t, double *g, double *bmin, double *bmax)
{
    const __m256d vt = _mm256_set1_pd(t), vs1 = _mm256_set1_pd(s1t), vs2 = _mm256_set1_pd(s2t);
    const __m256d vfloor = _mm256_set1_pd(FLOOR);
    const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0), mhalf = _mm256_set1_pd(-0.5);
    const __m256d half = _mm256_set1_pd(0.5), sqrt2 = _mm256_set1_pd(SQRT2);
    const __m256d ln2 = _mm256_set1_pd(LN2), l2p1 = _mm256_set1_pd(pelt_log_two_pi + 1.0);
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
__attribute__((target("avx512f,avx512dq,avx2,fma"))) double
pelt_approx_avx512(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
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

void
pelt_kernels_init(void)
{
    for (int j = 0; j < 16; j++) {
        volatile double c = 1.0 + (2.0 * j + 1.0) / 32.0;
        inv_tab[j] = 1.0 / c;
        log_tab[j] = (-log(inv_tab[j]) + pelt_log_two_pi) + 1.0;
    }
}
