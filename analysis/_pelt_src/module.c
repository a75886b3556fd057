/*
 * analysis._pelt: the Python module. R-exact changepoints (changepoints.c,
 * with the kernels of changepoint_kernels.c), the steady-state bootstrap
 * (bootstrap_kernels.c) and warmup_stats' outliers (outliers.c); here the
 * method table and the import-time setup: log(2 pi), the kernels' tables
 * and which instruction set this CPU runs.
 */
#include "pelt.h"

int pelt_isa_level;
int pelt_use_avx2;

static PyMethodDef methods[] = {
    {"cpt_meanvar", (PyCFunction)(void (*)(void))pelt_py_cpt_meanvar, METH_VARARGS | METH_KEYWORDS,
     "cpt_meanvar(x, pen, minseglen=2, reference=False, progress=None, counts=None) -> (cpts, means, variances)\n\n"
     "R changepoint's PELT meanvar (Normal) on a C-contiguous float64 buffer.\n"
     "cpts are 1-based segment ends including len(x); variances divide by the\n"
     "segment length. Raises ValueError when len(x) < 2*minseglen (R errors too).\n"
     "reference=True runs R's loop literally (an exact log per candidate, R's\n"
     "speed): the same result, for tests and benchmarks. progress: a writable\n"
     "int64 buffer the search stores its step into now and then (a progress display).\n"
     "counts: a writable int64 buffer of four, set to how many candidates the search\n"
     "evaluated approximately and exactly, and how many skipped ones it caught up with\n"
     "R's pruning and found pruned (the benchmark's and the tests' work counts)."},
    {"bootstrap_means", pelt_py_bootstrap_means, METH_VARARGS,
     "bootstrap_means(values, seg_offsets, exec_offsets, n_resamples, k0, k1, k2, k3, out)\n\n"
     "values: float64 steady values of all executions; seg_offsets: int64 segment\n"
     "boundaries into values (nseg+1); exec_offsets: int64 segment index where each\n"
     "execution starts (nexec+1); k0..k3: xoshiro256** state (not all zero); out:\n"
     "writable float64 buffer of nexec*n_resamples resample means, execution-major."},
    {"outliers", pelt_py_outliers, METH_VARARGS,
     "outliers(x, window) -> list[int]: warmup_stats' sliding-window outliers of a float64 buffer."},
    {"r_mean", pelt_py_r_mean, METH_VARARGS,
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
    pelt_log_two_pi = log(two_pi);
    pelt_kernels_init();
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    const char *isa = getenv("COLDRUN_PELT_ISA");
    int cap = isa == NULL ? 2 : strcmp(isa, "avx2") == 0 ? 1 : strcmp(isa, "scalar") == 0 ? 0 : 2;
    if (getenv("COLDRUN_PELT_SCALAR") != NULL)
        cap = 0;
    pelt_isa_level = 0;
    if (cap >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        pelt_isa_level = 1;
    /* Level 2 also runs the bootstrap's AVX-512VL kernel. */
    if (cap >= 2 && pelt_isa_level == 1 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        pelt_isa_level = 2;
    pelt_use_avx2 = pelt_isa_level >= 1;
#endif
    PyObject *m = PyModule_Create(&module);
    /* Which kernel this process runs, so tests comparing kernels can tell
     * when a CPU lacks one and they would compare a kernel with itself. */
    const char *kernel = pelt_isa_level == 2 ? "avx512" : pelt_isa_level == 1 ? "avx2" : "scalar";
    if (m != NULL && PyModule_AddStringConstant(m, "kernel", kernel) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

