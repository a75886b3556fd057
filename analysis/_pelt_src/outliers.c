/*
 * Outliers of analysis._pelt:
 * warmup_stats' sliding-window rule (analysis/outliers.py has the Python
 * statement of it): window [i-half, min(size, i+half)), skipped while it
 * starts at 0 with fewer than w points, outlier when strictly outside
 * median +- 3 * (p90 - p10) with warmup_stats' median and percentile
 * expressions, evaluated here in the same double operations. The window is
 * kept sorted incrementally (binary search + memmove) instead of sorting
 * every window; a window of more than RANK_TREE_FROM points (warmup_stats'
 * is 10% of the iterations: 100,000 at a million) is kept instead as counts
 * over the series' global order in a Fenwick tree, so each step costs
 * O(log n), not a memmove of the whole window.  Both read the window's k-th
 * smallest value and feed the same expressions, so both give the same bits.
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

#define RANK_TREE_FROM 2048

/* The window in order: its k-th smallest value (0-based), from either store. */
typedef struct {
    const double *sorted; /* the sorted window (small windows) ... */
    const double *by_rank; /* ... or the whole series in order, */
    const int64_t *tree;   /* with a Fenwick tree of who is in the window */
    Py_ssize_t n, log2n;
} window_order;

static double
kth(const window_order *w, Py_ssize_t k)
{
    if (w->sorted)
        return w->sorted[k];
    /* Fenwick descent: the smallest position whose prefix count exceeds k. */
    Py_ssize_t pos = 0;
    int64_t rest = k;
    for (Py_ssize_t step = (Py_ssize_t)1 << w->log2n; step; step >>= 1) {
        if (pos + step <= w->n && w->tree[pos + step] <= rest) {
            pos += step;
            rest -= w->tree[pos];
        }
    }
    return w->by_rank[pos];
}

static void
tree_add(int64_t *tree, Py_ssize_t n, Py_ssize_t rank, int64_t delta)
{
    for (Py_ssize_t i = rank + 1; i <= n; i += i & -i)
        tree[i] += delta;
}

static double
ws_percentile(const window_order *d, Py_ssize_t size, double pc)
{
    if (size == 1)
        return kth(d, 0);
    double index = (double)(size - 1) * (pc / 100.0);
    double f = floor(index), c = ceil(index);
    if (f == c)
        return kth(d, (Py_ssize_t)index);
    double d0 = kth(d, (Py_ssize_t)f) * (c - index);
    double d1 = kth(d, (Py_ssize_t)c) * (index - f);
    return d0 + d1;
}

static double
ws_median(const window_order *d, Py_ssize_t size)
{
    if (size == 1)
        return kth(d, 0);
    Py_ssize_t index = (size - 1) / 2;
    if (size % 2 == 1)
        return kth(d, index);
    return (kth(d, index) + kth(d, index + 1)) / 2.0;
}

/* The series' order: ties by position, so every point has its own rank. */
static const double *rank_values;

static int
cmp_position(const void *a, const void *b)
{
    Py_ssize_t i = *(const Py_ssize_t *)a, j = *(const Py_ssize_t *)b;
    double x = rank_values[i], y = rank_values[j];
    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j);
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
    double *win = NULL, *by_rank = NULL;
    int64_t *tree = NULL;
    Py_ssize_t *order = NULL, *rank = NULL;
    if (!out)
        goto done;
    if (half < 1 || size == 0)
        goto done;
    window_order wo = {0};
    int ranked = 2 * half + 1 > RANK_TREE_FROM;
    if (ranked) {
        order = malloc((size_t)size * sizeof(Py_ssize_t));
        rank = malloc((size_t)size * sizeof(Py_ssize_t));
        by_rank = malloc((size_t)size * sizeof(double));
        tree = calloc((size_t)size + 1, sizeof(int64_t));
    } else
        win = malloc((size_t)(2 * half + 1) * sizeof(double));
    if (ranked ? !(order && rank && by_rank && tree) : !win) {
        Py_CLEAR(out);
        PyErr_NoMemory();
        goto done;
    }
    if (ranked) {
        for (Py_ssize_t i = 0; i < size; i++)
            order[i] = i;
        rank_values = x; /* the GIL is held: no other call shares it */
        qsort(order, (size_t)size, sizeof(Py_ssize_t), cmp_position);
        for (Py_ssize_t r = 0; r < size; r++) {
            rank[order[r]] = r;
            by_rank[r] = x[order[r]];
        }
        wo.by_rank = by_rank;
        wo.tree = tree;
        wo.n = size;
        while (((Py_ssize_t)1 << (wo.log2n + 1)) <= size)
            wo.log2n++;
    } else
        wo.sorted = win;
    Py_ssize_t n = 0, cur_lo = 0, cur_hi = 0, started = 0;
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_ssize_t lo = i - half < 0 ? 0 : i - half;
        Py_ssize_t hi = i + half > size ? size : i + half;
        if (lo == 0 && hi < window)
            continue;
        if (ranked) {
            for (Py_ssize_t k = started ? cur_lo : lo; k < lo; k++)
                tree_add(tree, size, rank[k], -1);
            for (Py_ssize_t k = started ? cur_hi : lo; k < hi; k++)
                tree_add(tree, size, rank[k], +1);
            n = hi - lo;
            started = 1;
        } else if (!started) {
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
        double med = ws_median(&wo, n);
        double band = 3 * (ws_percentile(&wo, n, 90.0) - ws_percentile(&wo, n, 10.0));
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
    free(order);
    free(rank);
    free(by_rank);
    free(tree);
    PyBuffer_Release(&buf);
    return out;
}
