/* Spectral norm power iterations on an n x n matrix, repeated REPEATS times per
   iteration so the time is visible next to the Python variant's. */
#include <stdlib.h>

#define REPEATS 25

volatile double sink;

static double a(int i, int j) { return 1.0 / ((i + j) * (i + j + 1) / 2 + i + 1); }

static void mul_av(const double *v, double *out, int n, int transpose) {
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += (transpose ? a(j, i) : a(i, j)) * v[j];
        out[i] = s;
    }
}

static double spectral(int n) {
    double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n), *t = malloc(sizeof(double) * n);
    if (!u || !v || !t) abort();
    for (int i = 0; i < n; i++) u[i] = 1.0;
    for (int k = 0; k < 5; k++) {
        mul_av(u, t, n, 0); mul_av(t, v, n, 1);
        mul_av(v, t, n, 0); mul_av(t, u, n, 1);
    }
    double result = u[0];
    free(u); free(v); free(t);
    return result;
}

void run_iter(int n) {
    for (int r = 0; r < REPEATS; r++) sink = spectral(n);
}
