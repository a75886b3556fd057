/*
 * libkruntime: the measurement state machine over a clock and counter source.
 *
 * Where the values come from (clock_gettime, perf events, the msr device)
 * lives in sources.c; this file owns the ordering of reads, the two samples
 * (before / after one in-process iteration), bounds checks and delta
 * arithmetic, so tests can drive it with an injected source.
 */
#include "libkruntime.h"
#include "duet.h"
#include "sources.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct krun_source *source;   /* NULL until krun_init */
static const struct krun_source *injected; /* set by tests */
static const char *unavailable_reason;
static int num_cores;
static uint64_t counter_mask[3];

static int64_t wall_ns[2];
static uint64_t *counters[2][3]; /* [mdata_idx][kind] -> per-core values */
static int measured[2];

/* Iteration timeline (krun_timeline_reserve); cap 0 = not recording. */
static int64_t *timeline[3]; /* start, end, barrier wait */
static long timeline_cap, timeline_len;
static char *timeline_text;
static int64_t duet_timeout_ns, duet_spin_ns, last_wait_ns;

static void die_vstatus(int status, const char *fmt, va_list ap) __attribute__((noreturn));
static void die_vstatus(int status, const char *fmt, va_list ap)
{
    fputs("libkruntime: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    exit(status);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die_status(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_vstatus(EXIT_FAILURE, fmt, ap);
}

static void die_status(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_vstatus(status, fmt, ap);
}

void *krun_xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (p == NULL)
        die("calloc(%zu, %zu) failed", nmemb, size);
    return p;
}

void krun_set_source(const struct krun_source *s)
{
    if (source != NULL)
        die("krun_set_source called between krun_init and krun_done");
    injected = s;
}

/* COLDRUN_DUET_BARRIER names the pair's barrier; absent, krun_measure never touches it. */
static void attach_duet(void)
{
    const char *name = getenv("COLDRUN_DUET_BARRIER");
    const char *timeout = getenv("COLDRUN_DUET_TIMEOUT");
    char err[256], *end;
    if (name == NULL || name[0] == '\0')
        return;
    double seconds = 60.0;
    if (timeout != NULL) {
        seconds = strtod(timeout, &end);
        if (end == timeout || *end != '\0' || !(seconds > 0 && seconds < 1e6))
            die_status(KRUN_EXIT_SETUP, "COLDRUN_DUET_TIMEOUT=%s is not a number of seconds in (0, 1e6)", timeout);
    }
    duet_timeout_ns = (int64_t)(seconds * 1e9);
    const char *spin = getenv("COLDRUN_DUET_SPIN_US");
    duet_spin_ns = 0;
    if (spin != NULL) {
        long us = strtol(spin, &end, 10);
        if (end == spin || *end != '\0' || us < 0 || us > 1000000)
            die_status(KRUN_EXIT_SETUP, "COLDRUN_DUET_SPIN_US=%s is not a number of microseconds in 0..1000000", spin);
        duet_spin_ns = (int64_t)us * 1000;
    }
    if (krun_duet_attach(name, err, sizeof(err)))
        die_status(KRUN_EXIT_SETUP, "%s", err);
}

void krun_init(void)
{
    int widths[3] = {64, 64, 64};

    if (source != NULL)
        die("krun_init called twice without krun_done");
    source = injected ? injected : krun_real_source();
    unavailable_reason = NULL;
    num_cores = source->init(source->ctx, &unavailable_reason, widths);
    if (num_cores < 0)
        die("counter source returned %d cores", num_cores);
    if (num_cores == 0 && unavailable_reason == NULL)
        unavailable_reason = "counter source reported no cores and no reason";
    for (int k = 0; k < 3; k++) {
        if (widths[k] < 1 || widths[k] > 64)
            die("counter width %d out of range 1..64", widths[k]);
        counter_mask[k] = widths[k] == 64 ? UINT64_MAX : ((UINT64_C(1) << widths[k]) - 1);
        for (int i = 0; i < 2; i++)
            counters[i][k] = krun_xcalloc((size_t)num_cores, sizeof(uint64_t));
    }
    measured[0] = measured[1] = 0;
    krun_timeline_reserve(0);
    attach_duet();
}

void krun_done(void)
{
    if (source == NULL)
        return;
    source->done(source->ctx);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++) {
            free(counters[i][k]);
            counters[i][k] = NULL;
        }
    num_cores = 0;
    source = NULL;
}

static void check_initialised(const char *fn)
{
    if (source == NULL)
        die("%s called before krun_init", fn);
}

static void check_mdata_idx(const char *fn, int mdata_idx)
{
    if (mdata_idx != 0 && mdata_idx != 1)
        die("%s: mdata index %d is not 0 (before) or 1 (after)", fn, mdata_idx);
}

static void check_core(const char *fn, int core)
{
    if (core < 0 || core >= num_cores) {
        if (num_cores == 0)
            die("%s: per-core counters are unavailable: %s", fn, unavailable_reason);
        die("%s: core %d out of range 0..%d", fn, core, num_cores - 1);
    }
}

void krun_timeline_reserve(long iterations)
{
    if (iterations < 0)
        die("krun_timeline_reserve: %ld iterations", iterations);
    for (int k = 0; k < 3; k++) {
        free(timeline[k]);
        timeline[k] = iterations ? krun_xcalloc((size_t)iterations, sizeof(int64_t)) : NULL;
    }
    timeline_cap = iterations;
    timeline_len = 0;
}

static void record_iteration(void)
{
    if (timeline_len == timeline_cap)
        die("krun_measure: more iterations than the %ld reserved with krun_timeline_reserve", timeline_cap);
    timeline[0][timeline_len] = wall_ns[0];
    timeline[1][timeline_len] = wall_ns[1];
    timeline[2][timeline_len] = last_wait_ns;
    timeline_len++;
}

static char *put_list(char *p, const char *key, const int64_t *v, long n)
{
    p += sprintf(p, "%s\"%s\": [", p == timeline_text ? "" : ", ", key);
    for (long i = 0; i < n; i++)
        p += sprintf(p, i ? ", %lld" : "%lld", (long long)v[i]);
    *p++ = ']';
    *p = '\0';
    return p;
}

const char *krun_timeline_json(void)
{
    free(timeline_text);
    /* Per value: ", " and at most 20 digits and a sign. */
    timeline_text = krun_xcalloc((size_t)timeline_len * 3 * 23 + 128, 1);
    if (timeline_cap > 0) {
        char *p = put_list(timeline_text, "iteration_start_ns", timeline[0], timeline_len);
        p = put_list(p, "iteration_end_ns", timeline[1], timeline_len);
        if (krun_duet_in_use())
            put_list(p, "barrier_wait_ns", timeline[2], timeline_len);
    }
    return timeline_text;
}

/*
 * Counters outermost, wall clock innermost (the paper's Listing 1): before an
 * iteration read APERF, MPERF, cycles then the clock; after it the clock then
 * cycles, MPERF, APERF -- mirror images, so each counter brackets the clock.
 */
void krun_measure(int mdata_idx)
{
    check_initialised("krun_measure");
    check_mdata_idx("krun_measure", mdata_idx);
    const struct krun_source *s = source;
    uint64_t *cyc = counters[mdata_idx][KRUN_CYCLES];
    uint64_t *ap = counters[mdata_idx][KRUN_APERF];
    uint64_t *mp = counters[mdata_idx][KRUN_MPERF];

    if (mdata_idx == 0) {
        if (krun_duet_in_use()) {
            char err[320];
            int64_t arrived = krun_real_clock_ns();
            if (krun_duet_wait(duet_timeout_ns, duet_spin_ns, err, sizeof(err)))
                die_status(KRUN_EXIT_DUET, "%s", err);
            last_wait_ns = krun_real_clock_ns() - arrived;
        }
        measured[1] = 0; /* a new iteration: the old "after" sample is stale */
        for (int c = 0; c < num_cores; c++) {
            ap[c] = s->read_counter(s->ctx, KRUN_APERF, c);
            mp[c] = s->read_counter(s->ctx, KRUN_MPERF, c);
            cyc[c] = s->read_counter(s->ctx, KRUN_CYCLES, c);
        }
        wall_ns[0] = s->clock_ns(s->ctx);
    } else {
        wall_ns[1] = s->clock_ns(s->ctx);
        for (int c = num_cores - 1; c >= 0; c--) {
            cyc[c] = s->read_counter(s->ctx, KRUN_CYCLES, c);
            mp[c] = s->read_counter(s->ctx, KRUN_MPERF, c);
            ap[c] = s->read_counter(s->ctx, KRUN_APERF, c);
        }
        if (timeline_cap > 0)
            record_iteration();
    }
    measured[mdata_idx] = 1;
}

static void check_measured(const char *fn, int mdata_idx)
{
    check_initialised(fn);
    check_mdata_idx(fn, mdata_idx);
    if (!measured[mdata_idx])
        die("%s: krun_measure(%d) has not been called", fn, mdata_idx);
}

int64_t krun_get_wallclock_ns(int mdata_idx)
{
    check_measured("krun_get_wallclock_ns", mdata_idx);
    return wall_ns[mdata_idx];
}

double krun_get_wallclock(int mdata_idx)
{
    check_measured("krun_get_wallclock", mdata_idx);
    return (double)(wall_ns[mdata_idx] / 1000000000) + (double)(wall_ns[mdata_idx] % 1000000000) * 1e-9;
}

int krun_get_num_cores(void)
{
    check_initialised("krun_get_num_cores");
    return num_cores;
}

const char *krun_counters_unavailable_reason(void)
{
    check_initialised("krun_counters_unavailable_reason");
    return num_cores > 0 ? NULL : unavailable_reason;
}

const char *krun_counters_source(void)
{
    check_initialised("krun_counters_source");
    if (num_cores == 0)
        return "none";
    return source == injected ? source->name : krun_real_source_name();
}

static uint64_t get_counter(const char *fn, enum krun_counter_kind kind, int mdata_idx, int core)
{
    check_measured(fn, mdata_idx);
    check_core(fn, core);
    return counters[mdata_idx][kind][core];
}

uint64_t krun_get_core_cycles(int mdata_idx, int core)
{
    return get_counter("krun_get_core_cycles", KRUN_CYCLES, mdata_idx, core);
}

uint64_t krun_get_aperf(int mdata_idx, int core)
{
    return get_counter("krun_get_aperf", KRUN_APERF, mdata_idx, core);
}

uint64_t krun_get_mperf(int mdata_idx, int core)
{
    return get_counter("krun_get_mperf", KRUN_MPERF, mdata_idx, core);
}

double krun_u64_to_double(uint64_t val)
{
    /* 2^64 is exactly representable; anything at or above it cannot round-trip. */
    double d = (double)val;
    if (d >= 18446744073709551616.0 || (uint64_t)d != val)
        die("loss of precision converting %llu to a double; use the 64-bit getters",
            (unsigned long long)val);
    return d;
}

double krun_get_core_cycles_double(int mdata_idx, int core)
{
    return krun_u64_to_double(krun_get_core_cycles(mdata_idx, core));
}

double krun_get_aperf_double(int mdata_idx, int core)
{
    return krun_u64_to_double(krun_get_aperf(mdata_idx, core));
}

double krun_get_mperf_double(int mdata_idx, int core)
{
    return krun_u64_to_double(krun_get_mperf(mdata_idx, core));
}

int64_t krun_wallclock_delta_ns(void)
{
    check_measured("krun_wallclock_delta_ns", 0);
    check_measured("krun_wallclock_delta_ns", 1);
    if (wall_ns[1] < wall_ns[0])
        die("wall clock went backwards (%lld ns -> %lld ns)", (long long)wall_ns[0], (long long)wall_ns[1]);
    return wall_ns[1] - wall_ns[0];
}

/*
 * Modulo the counter width: a narrow hardware counter that wrapped once still
 * gives the right delta.  A full 64-bit counter cannot wrap within a run, so
 * stop < start there means the source is broken: refuse to report it.
 */
static uint64_t counter_delta(const char *fn, enum krun_counter_kind kind, int core)
{
    uint64_t start = get_counter(fn, kind, 0, core);
    uint64_t stop = get_counter(fn, kind, 1, core);
    if (counter_mask[kind] == UINT64_MAX && stop < start)
        die("%s: counter went backwards on core %d (%llu -> %llu)", fn, core,
            (unsigned long long)start, (unsigned long long)stop);
    return (stop - start) & counter_mask[kind];
}

uint64_t krun_core_cycles_delta(int core)
{
    return counter_delta("krun_core_cycles_delta", KRUN_CYCLES, core);
}

uint64_t krun_aperf_delta(int core)
{
    return counter_delta("krun_aperf_delta", KRUN_APERF, core);
}

uint64_t krun_mperf_delta(int core)
{
    return counter_delta("krun_mperf_delta", KRUN_MPERF, core);
}

double krun_clock_gettime_monotonic(void)
{
    int64_t ns = krun_real_clock_ns();
    return (double)(ns / 1000000000) + (double)(ns % 1000000000) * 1e-9;
}
