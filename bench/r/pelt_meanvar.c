/*
 * The PELT loop of R's changepoint::cpt.meanvar (Normal, method "PELT"),
 * written from its documented behaviour (shared/reference/warmup_stats.md
 * section 4) for bench_analysis.py, which loads it into R through .C to time
 * R's own call path on this machine: sumstat built in R, this loop in C with
 * the cost taken through a function pointer chosen by name (as changepoint
 * does), param.est in R. Arguments arrive as .C passes them: pointers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <R.h>

static double
mll_meanvar(double x, double x2, int n)
{
    double sigsq = (x2 - ((x * x) / n)) / n;
    if (sigsq <= 0)
        sigsq = 0.00000000001;
    return n * (log(2 * M_PI) + log(sigsq) + 1);
}

/* sumstat: column-major (n+1) x 3 (cumsum x, cumsum x^2, unused); cpts:
 * n ints, filled with the segment ends (1-based, including n) from the
 * back; *ncpts: how many. */
void
coldrun_pelt_meanvar(char **cost_name, double *sumstat, int *n, double *pen, int *minseglen,
                     double *lastchangelike, int *lastchangecpts, int *cpts, int *ncpts)
{
    double (*cost)(double, double, int) = NULL;
    if (strcmp(*cost_name, "meanvar.norm") == 0)
        cost = mll_meanvar;
    if (cost == NULL)
        error("unknown cost function %s", *cost_name);
    int m = *minseglen, N = *n;
    const double *s1 = sumstat, *s2 = sumstat + N + 1;
    int *checklist = (int *)R_alloc(N + 1, sizeof(int));
    double *tmplike = (double *)R_alloc(N + 1, sizeof(double));
    lastchangelike[0] = -*pen;
    for (int j = m; j < 2 * m; j++) {
        lastchangelike[j] = cost(s1[j], s2[j], j);
        lastchangecpts[j] = 0;
    }
    int nchk = 0;
    checklist[nchk++] = 0;
    checklist[nchk++] = m;
    for (int t = 2 * m; t <= N; t++) {
        R_CheckUserInterrupt();
        for (int i = 0; i < nchk; i++) {
            int tau = checklist[i];
            tmplike[i] = lastchangelike[tau] + cost(s1[t] - s1[tau], s2[t] - s2[tau], t - tau) + *pen;
        }
        int which = 0;
        for (int i = 1; i < nchk; i++)
            if (tmplike[i] < tmplike[which])
                which = i;
        lastchangelike[t] = tmplike[which];
        lastchangecpts[t] = checklist[which];
        int kept = 0;
        for (int i = 0; i < nchk; i++)
            if (tmplike[i] <= lastchangelike[t] + *pen)
                checklist[kept++] = checklist[i];
        nchk = kept;
        checklist[nchk++] = t - (m - 1);
    }
    int k = 0;
    for (int at = N; at != 0; at = lastchangecpts[at])
        cpts[k++] = at;
    *ncpts = k;
}
