/*
 * analysis._edm: Pilot's EDM changepoints (BreakoutDetection's EDM_percent
 * as libpilot calls it), fast (edm_fast.c) or as written (edm_reference.c).
 * Here the argument checks and the Python glue.
 */
#include <math.h>
#include "edm.h"

static PyObject *
py_changepoints(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"x", "min_size", "percent", "degree", "reference", NULL};
    Py_buffer buf;
    Py_ssize_t min_size = 30;
    double percent = 0.25;
    int degree = 1, reference = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|ndip", kwlist, &buf, &min_size, &percent, &degree,
                                     &reference))
        return NULL;
    PyObject *out = NULL;
    struct edm_tables tb = {NULL, NULL, NULL};
    int *cps = NULL;
    if (buf.len % sizeof(double) != 0) {
        PyErr_SetString(PyExc_ValueError, "x must be a buffer of C doubles");
        goto done;
    }
    Py_ssize_t len = buf.len / (Py_ssize_t)sizeof(double);
    const double *z = buf.buf;
    if (min_size < 1 || min_size > INT_MAX / 2) {
        PyErr_Format(PyExc_ValueError, "min_size must be a positive int, not %zd", min_size);
        goto done;
    }
    if (degree < 0 || degree > 2) {
        PyErr_Format(PyExc_ValueError, "degree must be 0 (constant), 1 (linear) or 2 (quadratic), not %d", degree);
        goto done;
    }
    if (!isfinite(percent)) {
        PyErr_SetString(PyExc_ValueError, "percent must be a finite number");
        goto done;
    }
    if (len >= INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%zd readings are more than EDM's int indices hold", len);
        goto done;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        if (!isfinite(z[i])) {
            PyErr_Format(PyExc_ValueError, "reading %zd is %s: EDM needs finite readings", i,
                         isnan(z[i]) ? "NaN" : z[i] > 0 ? "inf" : "-inf");
            goto done;
        }
    }
    int n = (int)len, m = (int)min_size;
    if (n < 2 * m) { /* no candidate: EDM finds nothing */
        out = PyList_New(0);
        goto done;
    }
    tb.prev = calloc((size_t)n + 1, sizeof(int));
    tb.number = calloc((size_t)n + 1, sizeof(int));
    tb.F = calloc((size_t)n + 1, sizeof(double));
    cps = malloc((size_t)n * sizeof(int));
    if (!tb.prev || !tb.number || !tb.F || !cps) {
        PyErr_NoMemory();
        goto done;
    }
    int rc, k = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = reference ? edm_reference(z, n, m, percent, degree, &tb) : edm_fast(z, n, m, percent, degree, &tb);
    if (rc == 0)
        k = edm_backtrack(&tb, n, cps);
    Py_END_ALLOW_THREADS
    if (rc != 0) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyList_New(k);
    for (int j = 0; out && j < k; j++) {
        PyObject *v = PyLong_FromLong(cps[j]);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, j, v);
    }
done:
    free(tb.prev);
    free(tb.number);
    free(tb.F);
    free(cps);
    PyBuffer_Release(&buf);
    return out;
}

static PyMethodDef methods[] = {
    {"changepoints", (PyCFunction)(void (*)(void))py_changepoints, METH_VARARGS | METH_KEYWORDS,
     "changepoints(x, min_size=30, percent=0.25, degree=1, reference=False) -> list[int]\n\n"
     "BreakoutDetection's EDM_percent on a C-contiguous float64 buffer, as Pilot\n"
     "calls it: ascending changepoints (segment starts), without 0. degree 0, 1,\n"
     "2 = constant, linear, quadratic penalty. Raises ValueError for a non-finite\n"
     "reading. reference=True runs the algorithm as written (O(n^2 log n)): the\n"
     "same result, for tests and benchmarks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "analysis._edm", "Pilot's EDM changepoints (BreakoutDetection's EDM_percent).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__edm(void)
{
    return PyModule_Create(&module);
}
