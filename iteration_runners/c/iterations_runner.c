/*
 * coldrun's C iteration runner (wire protocol v1, see ../PROTOCOL.md).
 *
 *     iterations_runner <benchmark.so> <iterations> <param> <debug 0|1>
 *
 * dlopens the benchmark, calls its `void run_iter(int)` <iterations> times,
 * each bracketed by krun_measure(0) / krun_measure(1) (counters outermost,
 * wall clock innermost), keeps the deltas in buffers allocated before the
 * first iteration, and at the end writes one JSON document to the results
 * channel (fd 3, or $COLDRUN_RESULTS_FD).  libkruntime is linked in.
 * With COLDRUN_LOAD_ONLY=1 it stops once the benchmark is loaded (RTLD_NOW:
 * every symbol resolved) and run_iter found, and writes the load-only document.
 *
 * Exit status: 0 document written; 1 measurement failed (libkruntime);
 * 2 bad usage or setup (arguments, benchmark, results channel not open);
 * 3 the results channel failed while writing; 4 the duet barrier failed
 * (pair executions: the partner timed out, died or gave up).
 */
#define _GNU_SOURCE
#include "libkruntime.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_CHANNEL 3
#define USAGE "usage: iterations_runner <benchmark.so> <iterations> <param> <debug 0|1>"

static void fail(int status, const char *fmt, const char *arg)
{
    fputs("iterations_runner: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(status);
}

/*
 * A benchmark that does not load because of a symbol it lacks: the two ways Krun-era C suites
 * lack one on current toolchains, named (configs/krun-c-benchmarks.mk builds them right).
 */
static void fail_to_load(const char *dl_error)
{
    static const char marker[] = "undefined symbol: ";
    char err[512];
    snprintf(err, sizeof err, "%s", dl_error ? dl_error : "unknown dlopen error");  /* the next dlopen reuses it */
    const char *p = strstr(err, marker);
    char sym[128] = "";
    char msg[1024];
    if (p != NULL) {
        p += sizeof marker - 1;
        size_t n = strcspn(p, " ,;()");
        if (n >= sizeof sym)
            n = sizeof sym - 1;
        memcpy(sym, p, n);
        sym[n] = '\0';
    }
    if (sym[0] == '\0') {
        fail(EXIT_USAGE, "cannot load benchmark: %s", err);
    }
#ifdef __linux__
    void *libm = dlopen("libm.so.6", RTLD_LAZY | RTLD_LOCAL);
#else
    void *libm = dlopen("libm.so", RTLD_LAZY | RTLD_LOCAL);
#endif
    if (libm != NULL && dlsym(libm, sym) != NULL)
        snprintf(msg, sizeof msg, "cannot load benchmark: %s; %s is libm's: link the benchmark with -lm after "
                 "its sources (with --as-needed, gcc's default on Debian, -lm before them links nothing; "
                 "configs/krun-c-benchmarks.mk)", err, sym);
    else
        snprintf(msg, sizeof msg, "cannot load benchmark: %s; if %s is an inline function of the benchmark, "
                 "build it with -fgnu89-inline (C99 inline emits no symbol; configs/krun-c-benchmarks.mk)", err, sym);
    fail(EXIT_USAGE, "%s", msg);
}

static long parse_long(const char *s, const char *what, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "iterations_runner: error: %s %s is not an integer in %ld..%ld\n%s\n", what, s, min,
                max, USAGE);
        exit(EXIT_USAGE);
    }
    return v;
}

/* Move the results fd to a high, close-on-exec number so the benchmark cannot touch it. */
static FILE *take_results_channel(void)
{
    const char *name = getenv("COLDRUN_RESULTS_FD");
    int fd = (int)parse_long(name ? name : "3", "COLDRUN_RESULTS_FD", 0, INT_MAX);
    int private_fd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    if (private_fd < 0)
        fail(EXIT_USAGE, "results channel fd %s is not open; the supervisor passes it (see PROTOCOL.md)",
             name ? name : "3");
    close(fd);
    FILE *f = fdopen(private_fd, "w");
    if (f == NULL)
        fail(EXIT_USAGE, "cannot open the results channel: %s", strerror(errno));
    return f;
}

/* Shortest of %.15g..%.17g that reads back as the same double. */
static void put_double(FILE *f, double v)
{
    char buf[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

static void put_per_core(FILE *f, const char *key, uint64_t *const *per_core, int ncores, long iterations)
{
    fprintf(f, ", \"%s\": [", key);
    for (int c = 0; c < ncores; c++) {
        fputs(c ? ", [" : "[", f);
        for (long i = 0; i < iterations; i++)
            fprintf(f, i ? ", %llu" : "%llu", (unsigned long long)per_core[c][i]);
        fputc(']', f);
    }
    fputc(']', f);
}

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static int close_channel(FILE *channel)
{
    if (ferror(channel) | (fclose(channel) != 0)) {
        fprintf(stderr, "iterations_runner: error: writing the results document failed: %s\n", strerror(errno));
        return EXIT_CHANNEL;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "iterations_runner: error: expected 4 arguments, got %d\n%s\n", argc - 1, USAGE);
        return EXIT_USAGE;
    }
    const char *benchmark = argv[1];
    long iterations = parse_long(argv[2], "iterations", 1, LONG_MAX / 8);
    int param = (int)parse_long(argv[3], "param", INT_MIN, INT_MAX);
    if (strcmp(argv[4], "0") != 0 && strcmp(argv[4], "1") != 0)
        fail(EXIT_USAGE, "debug flag must be 0 or 1, got %s\n" USAGE, argv[4]);
    int debug = argv[4][0] == '1';

    FILE *channel = take_results_channel();

    /* A bare name would be searched on the library path: always load the file given. */
    char *path = realpath(benchmark, NULL);
    if (path == NULL)
        fail(EXIT_USAGE, "benchmark file %s does not exist", benchmark);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL)
        fail_to_load(dlerror());
    void (*run_iter)(int);
    *(void **)(&run_iter) = dlsym(handle, "run_iter");
    if (run_iter == NULL)
        fail(EXIT_USAGE, "benchmark %s has no run_iter(int) symbol", path);
    const char *load_only = getenv("COLDRUN_LOAD_ONLY");
    if (load_only != NULL && strcmp(load_only, "1") == 0) {
        fprintf(channel, "{\"protocol_version\": %d, \"load_only\": true}", KRUN_PROTOCOL_VERSION);
        return close_channel(channel);
    }

    krun_init();
    int ncores = krun_get_num_cores();
    double *wallclock = krun_xcalloc((size_t)iterations, sizeof(double));
    uint64_t *cycles[ncores ? ncores : 1], *aperf[ncores ? ncores : 1], *mperf[ncores ? ncores : 1];
    for (int c = 0; c < ncores; c++) {
        cycles[c] = krun_xcalloc((size_t)iterations, sizeof(uint64_t));
        aperf[c] = krun_xcalloc((size_t)iterations, sizeof(uint64_t));
        mperf[c] = krun_xcalloc((size_t)iterations, sizeof(uint64_t));
    }
    krun_timeline_reserve(iterations);

    for (long i = 0; i < iterations; i++) {
        if (debug)
            fprintf(stderr, "[iterations_runner] iteration %ld/%ld\n", i + 1, iterations);
        /* Listing 1: nothing but the benchmark between the two measurements. */
        krun_measure(0);
        run_iter(param);
        krun_measure(1);
        wallclock[i] = (double)krun_wallclock_delta_ns() / 1e9;
        for (int c = 0; c < ncores; c++) {
            cycles[c][i] = krun_core_cycles_delta(c);
            aperf[c][i] = krun_aperf_delta(c);
            mperf[c][i] = krun_mperf_delta(c);
        }
        if (debug)
            fprintf(stderr, "[iterations_runner] iteration %ld/%ld took %.6f s\n", i + 1, iterations,
                    wallclock[i]);
    }

    fprintf(channel, "{\"protocol_version\": %d, \"wallclock_times\": [", KRUN_PROTOCOL_VERSION);
    for (long i = 0; i < iterations; i++) {
        if (i)
            fputs(", ", channel);
        put_double(channel, wallclock[i]);
    }
    fputc(']', channel);
    put_per_core(channel, "core_cycle_counts", cycles, ncores, iterations);
    put_per_core(channel, "aperf_counts", aperf, ncores, iterations);
    put_per_core(channel, "mperf_counts", mperf, ncores, iterations);
    fprintf(channel, ", %s", krun_timeline_json());
    fputs(", \"counters\": {\"available\": ", channel);
    if (ncores > 0) {
        fputs("true, \"reason\": null}}", channel);
    } else {
        fputs("false, \"reason\": ", channel);
        put_json_string(channel, krun_counters_unavailable_reason());
        fputs("}}", channel);
    }
    krun_done();
    return close_channel(channel);
}
