/*
 * Outliers of analysis._pelt:
 * warmup_stats' sliding-window rule (analysis/outliers.py has the Python
 * statement of it): window [i-half, min(size, i+half)), skipped while it
 * starts at 0 with fewer than w points, outlier when strictly outside
 * median +- 3 * (p90 - p10) with warmup_stats' median and percentile
 * expressions, evaluated here in the same double operations. The window is
 * kept sorted incrementally (binary search + memmove) instead of sorting
 * every window.
 */
#include "pelt.h"

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

PyObject *
pelt_py_outliers(PyObject *self, PyObject *args)
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
