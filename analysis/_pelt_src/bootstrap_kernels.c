/*
 * Steady-state bootstrap of analysis._pelt.
 * warmup_stats' resampling (warmup/bootstrapper.py): for each process
 * execution, n_resamples times, draw len(seg) values with replacement from
 * each of its steady segments, and record the mean of everything drawn.
 * Python loops made this the slowest part of warmup_stats (it shells out to
 * PyPy); here it is a tight C loop over a seeded xoshiro256** generator with
 * unbiased bounded integers (Lemire's multiply-and-reject).
 * Sums are plain sequential double sums (warmup_stats uses math.fsum; the
 * difference is ~1e-16 relative, far inside the bootstrap's own spread). */
#include "pelt.h"

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

PyObject *
pelt_py_bootstrap_means(PyObject *self, PyObject *args)
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
    if (pelt_use_avx2) {
        /* Lane generators seeded from the scalar one: distinct streams. */
        uint64_t lanes[16];
        for (int k = 0; k < 16; k++)
            lanes[k] = xoshiro_next(&rng);
        for (int k = 0; k < 4; k++)
            if ((lanes[k] | lanes[4 + k] | lanes[8 + k] | lanes[12 + k]) == 0)
                lanes[k] = 1;
        if (pelt_isa_level == 2)
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
