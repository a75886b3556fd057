/*
 * C unit tests for libkruntime, driven by an injected clock/counter source.
 *
 *     test_libkruntime            run every check, print "N passed, M failed"
 *     test_libkruntime <mode>     run one scenario that must end in exit(1)
 *                                 (the pytest driver checks status and message)
 */
#include "libkruntime.h"
#include "sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a scripted source that logs every read ---------------------------- */

#define MAX_CORES 4
#define LOG_LEN 256

struct fake {
    int ncores;
    const char *reason;
    int widths[3];
    int64_t clock[2];          /* returned by successive clock reads */
    uint64_t value[2][3][MAX_CORES]; /* [read pass][kind][core] */
    int clock_reads;
    int counter_reads[3][MAX_CORES];
    char log[LOG_LEN];
    int done_called;
};

static void log_event(struct fake *f, const char *ev)
{
    strncat(f->log, ev, LOG_LEN - strlen(f->log) - 1);
}

static int fake_init(void *ctx, const char **reason, int widths[3])
{
    struct fake *f = ctx;
    if (f->ncores == 0)
        *reason = f->reason;
    for (int k = 0; k < 3; k++)
        widths[k] = f->widths[k] ? f->widths[k] : 64;
    return f->ncores;
}

static int64_t fake_clock(void *ctx)
{
    struct fake *f = ctx;
    log_event(f, "W ");
    return f->clock[f->clock_reads++ % 2];
}

static uint64_t fake_read(void *ctx, enum krun_counter_kind kind, int core)
{
    struct fake *f = ctx;
    static const char names[3] = {'C', 'A', 'M'};
    char ev[8];
    snprintf(ev, sizeof(ev), "%c%d ", names[kind], core);
    log_event(f, ev);
    int pass = f->counter_reads[kind][core]++ % 2;
    return f->value[pass][kind][core];
}

static void fake_done(void *ctx)
{
    ((struct fake *)ctx)->done_called = 1;
}

static struct fake F;
static struct krun_source fake_source = {&F, fake_init, fake_clock, fake_read, fake_done, "fake"};

static void reset(int ncores)
{
    memset(&F, 0, sizeof(F));
    F.ncores = ncores;
    krun_set_source(&fake_source);
}

#include "check.h"

/* ---- checks ------------------------------------------------------------ */

static void test_measurement_order(void)
{
    reset(2);
    krun_init();
    krun_measure(0);
    /* Before: counters (A, M, C per core) outermost, then the clock last. */
    CHECK_STR(F.log, "A0 M0 C0 A1 M1 C1 W ");
    F.log[0] = '\0';
    krun_measure(1);
    /* After: the clock first, then counters in mirror order. */
    CHECK_STR(F.log, "W C1 M1 A1 C0 M0 A0 ");
    krun_done();
    CHECK(F.done_called);
}

static void test_no_counters_reads_only_clock(void)
{
    reset(0);
    F.reason = "no PMU here";
    krun_init();
    krun_measure(0);
    krun_measure(1);
    CHECK_STR(F.log, "W W ");
    CHECK(krun_get_num_cores() == 0);
    CHECK(krun_counters_unavailable_reason() != NULL);
    CHECK_STR(krun_counters_unavailable_reason(), "no PMU here");
    CHECK_STR(krun_counters_source(), "none");
    krun_done();
}

static void test_wallclock_delta(void)
{
    reset(0);
    F.reason = "none";
    F.clock[0] = INT64_C(123456789012345);       /* ~34 h of uptime, in ns */
    F.clock[1] = INT64_C(123456789012345) + 1001; /* 1.001 us later */
    krun_init();
    krun_measure(0);
    krun_measure(1);
    CHECK(krun_wallclock_delta_ns() == 1001);
    CHECK(krun_get_wallclock_ns(0) == INT64_C(123456789012345));
    double w0 = krun_get_wallclock(0);
    CHECK(w0 > 123456.789012 && w0 < 123456.789013);
    krun_done();
}

static void test_counter_deltas_and_getters(void)
{
    reset(2);
    for (int c = 0; c < 2; c++) {
        F.value[0][KRUN_CYCLES][c] = 1000 + c;
        F.value[1][KRUN_CYCLES][c] = 5000 + 10 * c;
        F.value[0][KRUN_APERF][c] = 70;
        F.value[1][KRUN_APERF][c] = 170 + c;
        F.value[0][KRUN_MPERF][c] = UINT64_C(1) << 40;
        F.value[1][KRUN_MPERF][c] = (UINT64_C(1) << 40) + 300;
    }
    krun_init();
    CHECK(krun_get_num_cores() == 2);
    CHECK(krun_counters_unavailable_reason() == NULL);
    CHECK_STR(krun_counters_source(), "fake");
    krun_measure(0);
    krun_measure(1);
    CHECK(krun_get_core_cycles(0, 1) == 1001);
    CHECK(krun_get_core_cycles(1, 1) == 5010);
    CHECK(krun_core_cycles_delta(0) == 4000);
    CHECK(krun_core_cycles_delta(1) == 4009);
    CHECK(krun_aperf_delta(0) == 100);
    CHECK(krun_aperf_delta(1) == 101);
    CHECK(krun_mperf_delta(1) == 300);
    CHECK(krun_get_mperf(0, 0) == UINT64_C(1) << 40);
    CHECK(krun_get_aperf_double(1, 1) == 171.0);
    CHECK(krun_get_mperf_double(0, 0) == 1099511627776.0);
    CHECK(krun_get_core_cycles_double(1, 0) == 5000.0);
    krun_done();
}

static void test_narrow_counter_wraps_once(void)
{
    reset(1);
    F.widths[KRUN_CYCLES] = 48;
    F.value[0][KRUN_CYCLES][0] = (UINT64_C(1) << 48) - 10;
    F.value[1][KRUN_CYCLES][0] = 5;
    F.value[1][KRUN_APERF][0] = 1;
    F.value[1][KRUN_MPERF][0] = 1;
    krun_init();
    krun_measure(0);
    krun_measure(1);
    CHECK(krun_core_cycles_delta(0) == 15);
    krun_done();
}

static void test_full_width_max_delta(void)
{
    reset(1);
    F.value[0][KRUN_APERF][0] = 0;
    F.value[1][KRUN_APERF][0] = UINT64_MAX;
    krun_init();
    krun_measure(0);
    krun_measure(1);
    CHECK(krun_aperf_delta(0) == UINT64_MAX);
    CHECK(krun_mperf_delta(0) == 0);
    krun_done();
}

static void test_u64_to_double_exact(void)
{
    CHECK(krun_u64_to_double(0) == 0.0);
    CHECK(krun_u64_to_double(UINT64_C(1) << 53) == 9007199254740992.0);
    CHECK(krun_u64_to_double(UINT64_C(1) << 63) == 9223372036854775808.0);
    CHECK(krun_u64_to_double((UINT64_C(1) << 53) + 2) == 9007199254740994.0);
}

static void test_reinit_after_done(void)
{
    reset(1);
    krun_init();
    krun_done();
    reset(3);
    krun_init();
    CHECK(krun_get_num_cores() == 3);
    krun_done();
}

/* Start and end are the wall clock samples themselves; no barrier, no barrier_wait_ns. */
static void test_timeline_records_samples(void)
{
    reset(0);
    F.reason = "x";
    F.clock[0] = 100;
    F.clock[1] = 250;
    krun_init();
    CHECK_STR(krun_timeline_json(), "");
    krun_timeline_reserve(2);
    for (int i = 0; i < 2; i++) {
        krun_measure(0);
        krun_measure(1);
    }
    CHECK_STR(krun_timeline_json(), "\"iteration_start_ns\": [100, 100], \"iteration_end_ns\": [250, 250]");
    CHECK(F.clock_reads == 4); /* no extra clock reads without a barrier */
    krun_done();
}

static void test_real_clock_advances(void)
{
    krun_set_source(NULL);
    setenv("COLDRUN_COUNTERS", "off", 1);
    krun_init();
    CHECK(krun_get_num_cores() == 0);
    CHECK(strstr(krun_counters_unavailable_reason(), "COLDRUN_COUNTERS=off") != NULL);
    krun_measure(0);
    for (volatile int i = 0; i < 100000; i++)
        ;
    krun_measure(1);
    CHECK(krun_wallclock_delta_ns() > 0);
    CHECK(krun_clock_gettime_monotonic() >= krun_get_wallclock(1));
    krun_done();
    unsetenv("COLDRUN_COUNTERS");
}

static void test_cpu_list_parsing(void)
{
    int ids[16];
    CHECK(krun_parse_cpu_list("0-3,6,8-9\n", ids, 16) == 7);
    CHECK(ids[0] == 0 && ids[3] == 3 && ids[4] == 6 && ids[5] == 8 && ids[6] == 9);
    CHECK(krun_parse_cpu_list("0\n", ids, 16) == 1 && ids[0] == 0);
    CHECK(krun_parse_cpu_list("2-5", NULL, 0) == 4); /* count only */
    CHECK(krun_parse_cpu_list("3-1", ids, 16) == -1);
    CHECK(krun_parse_cpu_list("0-", ids, 16) == -1);
    CHECK(krun_parse_cpu_list("0;1", ids, 16) == -1);
}

/* ---- scenarios that must exit(1) with a message ----------------------- */

static int run_death(const char *mode)
{
    if (strcmp(mode, "counter_backwards") == 0) {
        reset(1);
        F.value[0][KRUN_MPERF][0] = 500;
        F.value[1][KRUN_MPERF][0] = 499;
        krun_init();
        krun_measure(0);
        krun_measure(1);
        krun_mperf_delta(0);
    } else if (strcmp(mode, "wallclock_backwards") == 0) {
        reset(0);
        F.reason = "x";
        F.clock[0] = 1000;
        F.clock[1] = 999;
        krun_init();
        krun_measure(0);
        krun_measure(1);
        krun_wallclock_delta_ns();
    } else if (strcmp(mode, "precision_loss") == 0) {
        krun_u64_to_double((UINT64_C(1) << 53) + 1);
    } else if (strcmp(mode, "precision_loss_getter") == 0) {
        reset(1);
        F.value[1][KRUN_CYCLES][0] = UINT64_MAX;
        krun_init();
        krun_measure(0);
        krun_measure(1);
        krun_get_core_cycles_double(1, 0);
    } else if (strcmp(mode, "bad_mdata_idx") == 0) {
        reset(0);
        F.reason = "x";
        krun_init();
        krun_measure(2);
    } else if (strcmp(mode, "core_out_of_range") == 0) {
        reset(2);
        krun_init();
        krun_measure(0);
        krun_get_aperf(0, 2);
    } else if (strcmp(mode, "core_unavailable") == 0) {
        reset(0);
        F.reason = "no PMU here";
        krun_init();
        krun_measure(0);
        krun_get_core_cycles(0, 0);
    } else if (strcmp(mode, "get_before_measure") == 0) {
        reset(0);
        F.reason = "x";
        krun_init();
        krun_measure(0);
        krun_get_wallclock(1);
    } else if (strcmp(mode, "timeline_overflow") == 0) {
        reset(0);
        F.reason = "x";
        krun_init();
        krun_timeline_reserve(1);
        for (int i = 0; i < 2; i++) {
            krun_measure(0);
            krun_measure(1);
        }
    } else if (strcmp(mode, "measure_before_init") == 0) {
        krun_measure(0);
    } else if (strcmp(mode, "init_twice") == 0) {
        reset(0);
        F.reason = "x";
        krun_init();
        krun_init();
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    fprintf(stderr, "mode %s did not exit\n", mode);
    return 0; /* reaching here is the failure the driver detects */
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return run_death(argv[1]);
    test_measurement_order();
    test_no_counters_reads_only_clock();
    test_wallclock_delta();
    test_counter_deltas_and_getters();
    test_narrow_counter_wraps_once();
    test_full_width_max_delta();
    test_u64_to_double_exact();
    test_reinit_after_done();
    test_real_clock_advances();
    test_cpu_list_parsing();
    test_timeline_records_samples();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
