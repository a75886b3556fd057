/*
 * libkruntime: in-process iteration timing for coldrun's runners.
 *
 * Krun-compatible API.  A runner measures one in-process iteration as
 *
 *     krun_measure(0);  run_iter(param);  krun_measure(1);
 *
 * and then reads the two samples back with the getters.  Per-core counters
 * (unhalted core cycles, APERF, MPERF) are read outermost and the wall clock
 * innermost, so the clock brackets only the benchmark (the paper's Listing 1).
 *
 * Errors a runner cannot recover from (bad index, counter going backwards,
 * precision loss in a *_double getter) print one line to stderr and exit(1),
 * as Krun's library does: a measurement that cannot be trusted must not be
 * reported.
 */
#ifndef LIBKRUNTIME_H
#define LIBKRUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KRUN_PROTOCOL_VERSION 1

void krun_init(void);
void krun_done(void);

/* 0 = before the iteration, 1 = after it. */
void krun_measure(int mdata_idx);

/* Wall clock sample in seconds (CLOCK_MONOTONIC_RAW on Linux, else CLOCK_MONOTONIC). */
double krun_get_wallclock(int mdata_idx);
/* The same sample in integer nanoseconds: exact deltas without double rounding. */
int64_t krun_get_wallclock_ns(int mdata_idx);

/* Number of cores with per-core counters: 0 when counters are unavailable. */
int krun_get_num_cores(void);
/* Why counters are unavailable (NULL when they are available). Valid after krun_init. */
const char *krun_counters_unavailable_reason(void);
/* Which source feeds the counters, e.g. "perf_event", "msr_device", "none". */
const char *krun_counters_source(void);

uint64_t krun_get_core_cycles(int mdata_idx, int core);
uint64_t krun_get_aperf(int mdata_idx, int core);
uint64_t krun_get_mperf(int mdata_idx, int core);

/* For languages without 64-bit integers: exit(1) rather than round silently. */
double krun_get_core_cycles_double(int mdata_idx, int core);
double krun_get_aperf_double(int mdata_idx, int core);
double krun_get_mperf_double(int mdata_idx, int core);

/* Deltas (stop - start) of one iteration; exit(1) if a value went backwards. */
int64_t krun_wallclock_delta_ns(void);
uint64_t krun_core_cycles_delta(int core);
uint64_t krun_aperf_delta(int core);
uint64_t krun_mperf_delta(int core);

/*
 * Iteration timeline.  After krun_timeline_reserve(n) (before the first
 * iteration) every krun_measure(1) also records the iteration's start and end
 * (the two wall clock samples, absolute ns) and, in a pair execution, how long
 * krun_measure(0) waited at the duet barrier.  krun_timeline_json() returns
 * them as JSON members to splice into the results document:
 * "iteration_start_ns": [...], "iteration_end_ns": [...][, "barrier_wait_ns": [...]]
 * ("" when nothing was reserved).  The string stays valid until the next call
 * or krun_init.
 */
void krun_timeline_reserve(long iterations);
const char *krun_timeline_json(void);

/*
 * Duet barrier (pair executions).  The supervisor creates it before starting
 * the two runners and removes it afterwards; a runner whose environment names
 * it (COLDRUN_DUET_BARRIER=/name) attaches in krun_init and waits for its
 * partner in every krun_measure(0), before any read, so the wait is outside
 * the timed region.  COLDRUN_DUET_TIMEOUT (seconds, default 60) bounds each
 * wait; COLDRUN_DUET_SPIN_US (default 0) spins that long before sleeping.  Attach failures exit(2), a failed wait (timeout, partner gone or
 * failed) exit(4), each with one "libkruntime:" line.
 *
 * create replaces any barrier of that name (idempotent); remove succeeds when
 * there is none.  Both return 0, or -1 with one line in err.
 */
#define KRUN_EXIT_SETUP 2
#define KRUN_EXIT_DUET 4
int krun_duet_create(const char *name, unsigned int mode, char *err, size_t errlen);
int krun_duet_remove(const char *name, char *err, size_t errlen);
/* 1 when this process is attached to a duet barrier (valid after krun_init). */
int krun_duet_in_use(void);

/* Exposed for runners and tests. */
void *krun_xcalloc(size_t nmemb, size_t size);
double krun_u64_to_double(uint64_t val);
double krun_clock_gettime_monotonic(void);

/*
 * Testing seam: replace where clock and counter values come from.  Install
 * before krun_init(); pass NULL to return to the real sources.
 */
enum krun_counter_kind { KRUN_CYCLES = 0, KRUN_APERF = 1, KRUN_MPERF = 2 };

struct krun_source {
    void *ctx;
    /*
     * Returns the number of cores with counters (0 = none) and, when 0, sets
     * *reason.  Sets widths[kind] to each counter's width in bits (deltas are
     * taken modulo 2^width, so narrow hardware counters may wrap once).
     */
    int (*init)(void *ctx, const char **reason, int widths[3]);
    int64_t (*clock_ns)(void *ctx);
    uint64_t (*read_counter)(void *ctx, enum krun_counter_kind kind, int core);
    void (*done)(void *ctx);
    const char *name;
};
void krun_set_source(const struct krun_source *source);

#ifdef __cplusplus
}
#endif

#endif
