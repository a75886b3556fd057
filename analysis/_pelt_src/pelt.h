/*
 * Shared declarations of the analysis._pelt extension, built from
 *   changepoints.c        R-exact PELT (cpt.meanvar) and R's mean()/var()
 *   changepoint_kernels.c the approximate candidate kernels PELT decides with
 *   bootstrap_kernels.c   the steady-state bootstrap's resampling
 *   outliers.c            warmup_stats' sliding-window outliers
 *   module.c              the Python module: method table, import-time setup
 * (setup.py lists them; all build with -ffp-contract=off, see changepoints.c).
 */
#ifndef COLDRUN_PELT_H
#define COLDRUN_PELT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/* Shared between the files only, not exported from the extension. */
#if defined(__GNUC__)
#define PELT_INTERNAL __attribute__((visibility("hidden")))
#else
#define PELT_INTERNAL
#endif

/* Which kernel runs: 0 portable, 1 AVX2, 2 AVX-512 (chosen at import;
 * COLDRUN_PELT_ISA=scalar|avx2 forces a lower one, for tests). */
PELT_INTERNAL extern int pelt_isa_level;
PELT_INTERNAL extern int pelt_use_avx2; /* the bootstrap's AVX2 path */

/* log(2*pi) from libm at run time (R evaluates it through the same libm). */
PELT_INTERNAL extern double pelt_log_two_pi;

/* The kernels' error bounds (see "Speed" in changepoints.c). */
#define LOG_ERR 1e-12
#define REL_ERR 1e-14
/* Candidates per block: the unit the search evaluates, bounds and leaves out
 * ("Skipping blocks" in changepoints.c). */
#define BLOCK 64
/* changepoint_kernels.c: g and R's variance numerator a of candidates [0,
 * nchk) at step t, to g[i] and a[i], and over the live ones (F finite) the
 * least g, the greatest g and the least a to bounds[0..2]; pelt_approx_one
 * is one candidate's g (same bound). pelt_kernels_init fills their tables
 * (after pelt_log_two_pi is set). */
typedef void pelt_kernel(Py_ssize_t nchk, double t, const double *ctau, const double *cs1, const double *cs2,
                         const double *cf, double s1t, double s2t, double *g, double *a, double *bounds);
PELT_INTERNAL void pelt_kernels_init(void);
PELT_INTERNAL double pelt_approx_one(double t, double tau, double s1tau, double s2tau, double ftau,
                                     double s1t, double s2t);
PELT_INTERNAL pelt_kernel pelt_approx_scalar;
#ifdef HAVE_AVX2_PATH
PELT_INTERNAL pelt_kernel pelt_approx_avx2;
PELT_INTERNAL pelt_kernel pelt_approx_avx512;
#endif

/* The Python-level functions (documented in module.c's method table). */
PELT_INTERNAL PyObject *pelt_py_cpt_meanvar(PyObject *self, PyObject *args, PyObject *kwargs);
PELT_INTERNAL PyObject *pelt_py_r_mean(PyObject *self, PyObject *args);
PELT_INTERNAL PyObject *pelt_py_bootstrap_means(PyObject *self, PyObject *args);
PELT_INTERNAL PyObject *pelt_py_outliers(PyObject *self, PyObject *args);

#endif
