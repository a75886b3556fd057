/*
 * Real clock and per-core counter sources, from a stock kernel.
 *
 * Clock: CLOCK_MONOTONIC_RAW on Linux (not slewed by NTP), CLOCK_MONOTONIC
 * elsewhere.
 *
 * Counters (Linux), per core, all-or-nothing:
 *   - unhalted core cycles: perf_event_open(PERF_TYPE_HARDWARE, CPU_CYCLES,
 *     pid=-1, cpu=N), pinned so it is never multiplexed;
 *   - APERF / MPERF: the `msr` perf PMU (type and event codes from
 *     /sys/bus/event_source/devices/msr), else /dev/cpu/N/msr (0xe8 / 0xe7).
 * Per-CPU perf events need root, CAP_PERFMON or kernel.perf_event_paranoid
 * <= 0; the msr device needs CAP_SYS_RAWIO.  When any counter cannot be had
 * on every core, no counters are reported and the reason names what failed,
 * so a runner never emits silent zeros.  COLDRUN_COUNTERS=off switches them
 * off deliberately; COLDRUN_COUNTERS=test-software-events is for tests only.
 */
#define _GNU_SOURCE
#include "sources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#define KRUN_CLOCK CLOCK_MONOTONIC_RAW
#else
#define KRUN_CLOCK CLOCK_MONOTONIC
#endif

int64_t krun_real_clock_ns(void)
{
    struct timespec ts;
    if (clock_gettime(KRUN_CLOCK, &ts) != 0) {
        fprintf(stderr, "libkruntime: clock_gettime failed: %s\n", strerror(errno));
        exit(EXIT_FAILURE);
    }
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t real_clock_ns(void *ctx)
{
    (void)ctx;
    return krun_real_clock_ns();
}

static char reason_buf[1024];
static const char *backend_name = "none";

static void add_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void add_reason(const char *fmt, ...)
{
    size_t used = strlen(reason_buf);
    if (used && used < sizeof(reason_buf) - 2) {
        strcat(reason_buf, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason_buf + used, sizeof(reason_buf) - used, fmt, ap);
    va_end(ap);
}

/*
 * Parse a kernel CPU list ("0-3,6,8-9") into ids; returns how many there are
 * (ids beyond max are counted, not stored), or -1 if the text is malformed.
 */
int krun_parse_cpu_list(const char *text, int *ids, int max)
{
    const char *p = text;
    int n = 0, lo, hi, used;
    while (sscanf(p, "%d%n", &lo, &used) == 1) {
        p += used;
        hi = lo;
        if (*p == '-') {
            if (sscanf(p + 1, "%d%n", &hi, &used) != 1)
                return -1;
            p += 1 + used;
        }
        if (lo < 0 || hi < lo)
            return -1;
        for (int c = lo; c <= hi; c++, n++)
            if (n < max)
                ids[n] = c;
        if (*p == ',')
            p++;
        else
            break;
    }
    while (*p == '\n' || *p == ' ')
        p++;
    return *p == '\0' ? n : -1;
}

#ifdef __linux__

enum fd_kind { FD_NONE = 0, FD_PERF, FD_MSR };

static int ncores;
static int *fds[3];          /* [kind][core] */
static enum fd_kind kinds[3];
static const uint32_t msr_addr[3] = {0x30a, 0xe8, 0xe7}; /* FIXED_CTR1, APERF, MPERF */
static const char *const kind_names[3] = {"core cycles", "aperf", "mperf"};

/*
 * Per-core index -> CPU number, in order of the online CPUs.  With SMT or
 * cores switched off the online CPU numbers can have gaps ("0-3,6,8-9").
 */
static int *cpu_ids;

static int online_cpus(void)
{
    char buf[4096] = {0};
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    int n = 0;
    free(cpu_ids);
    cpu_ids = NULL;
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL && (n = krun_parse_cpu_list(buf, NULL, 0)) > 0) {
            cpu_ids = krun_xcalloc((size_t)n, sizeof(int));
            krun_parse_cpu_list(buf, cpu_ids, n);
        }
        fclose(f);
    }
    if (n <= 0) { /* no sysfs: assume CPUs 0..N-1 */
        long count = sysconf(_SC_NPROCESSORS_ONLN);
        if (count < 1)
            return 0;
        n = (int)count;
        cpu_ids = krun_xcalloc((size_t)n, sizeof(int));
        for (int c = 0; c < n; c++)
            cpu_ids[c] = c;
    }
    return n;
}

static int perf_open(uint32_t type, uint64_t config, int cpu)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    attr.pinned = 1; /* never multiplexed: a scaled estimate is not a count */
    return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *perf_hint(int err)
{
    switch (err) {
    case EACCES:
    case EPERM:
        return " (per-CPU events need root, CAP_PERFMON or kernel.perf_event_paranoid <= 0)";
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        return " (no such hardware event: no PMU, or a VM without PMU passthrough)";
    default:
        return "";
    }
}

static int read_sysfs_int(const char *path, long *out)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fscanf(f, "%ld", out) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

/* Parse "event=0x01" from /sys/bus/event_source/devices/msr/events/<name>. */
static int msr_pmu_event(const char *name, long *config)
{
    char path[256];
    snprintf(path, sizeof(path), "/sys/bus/event_source/devices/msr/events/%s", name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char buf[64] = {0};
    int ok = fgets(buf, sizeof(buf), f) != NULL;
    fclose(f);
    if (!ok || strncmp(buf, "event=", 6) != 0)
        return -1;
    *config = strtol(buf + 6, NULL, 0);
    return 0;
}

static void close_kind(int kind)
{
    for (int c = 0; c < ncores; c++)
        if (fds[kind][c] >= 0)
            close(fds[kind][c]);
    for (int c = 0; c < ncores; c++)
        fds[kind][c] = -1;
    kinds[kind] = FD_NONE;
}

/* Open one perf event per core; on any failure close them and explain. */
static int open_perf_kind(int kind, uint32_t type, uint64_t config, const char *what)
{
    for (int c = 0; c < ncores; c++) {
        int fd = perf_open(type, config, cpu_ids[c]);
        if (fd < 0) {
            int err = errno;
            add_reason("%s: perf_event_open(%s, cpu %d): %s%s", kind_names[kind], what, cpu_ids[c],
                       strerror(err), perf_hint(err));
            close_kind(kind);
            return -1;
        }
        fds[kind][c] = fd;
        uint64_t v;
        if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
            add_reason("%s: %s on cpu %d opened but cannot be read (not schedulable)",
                       kind_names[kind], what, cpu_ids[c]);
            close_kind(kind);
            return -1;
        }
    }
    kinds[kind] = FD_PERF;
    return 0;
}

static int open_msr_kind(int kind)
{
    for (int c = 0; c < ncores; c++) {
        char path[64];
        snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu_ids[c]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint64_t v;
        if (fd < 0 || pread(fd, &v, sizeof(v), msr_addr[kind]) != (ssize_t)sizeof(v)) {
            int err = errno;
            add_reason("%s: %s (MSR 0x%x): %s%s", kind_names[kind], path, msr_addr[kind], strerror(err),
                       err == ENOENT ? " (msr module not loaded?)"
                       : (err == EACCES || err == EPERM) ? " (needs CAP_SYS_RAWIO)" : "");
            if (fd >= 0)
                close(fd);
            close_kind(kind);
            return -1;
        }
        fds[kind][c] = fd;
    }
    kinds[kind] = FD_MSR;
    return 0;
}

/*
 * Core cycles from the msr device only when IA32_FIXED_CTR1 is already
 * counting (enabled in IA32_FIXED_CTR_CTRL and IA32_PERF_GLOBAL_CTRL):
 * reading a stopped counter would give silent zeros.  Width from CPUID 0xA.
 */
static int fixed_ctr1_width(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0));
    if (a < 0xa)
        return 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xa), "c"(0));
    if ((a & 0xff) < 2 || (d & 0x1f) < 2)
        return 0;
    return (int)((d >> 5) & 0xff);
#else
    return 0;
#endif
}

static int open_msr_cycles(int *width)
{
    int w = fixed_ctr1_width();
    if (w <= 0 || w > 64) {
        add_reason("core cycles: CPU has no architectural fixed counter 1 (CPUID 0xA)");
        return -1;
    }
    for (int c = 0; c < ncores; c++) {
        char path[64];
        snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu_ids[c]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint64_t fixed_ctrl = 0, global_ctrl = 0;
        if (fd < 0 || pread(fd, &fixed_ctrl, 8, 0x38d) != 8 || pread(fd, &global_ctrl, 8, 0x38f) != 8) {
            add_reason("core cycles: %s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            close_kind(KRUN_CYCLES);
            return -1;
        }
        if ((fixed_ctrl & 0x30) == 0 || !(global_ctrl & (UINT64_C(1) << 33))) {
            add_reason("core cycles: fixed counter 1 is not enabled on cpu %d", cpu_ids[c]);
            close(fd);
            close_kind(KRUN_CYCLES);
            return -1;
        }
        fds[KRUN_CYCLES][c] = fd;
    }
    kinds[KRUN_CYCLES] = FD_MSR;
    *width = w;
    return 0;
}

static void close_all(void)
{
    for (int k = 0; k < 3; k++) {
        if (fds[k] == NULL)
            continue;
        close_kind(k);
        free(fds[k]);
        fds[k] = NULL;
    }
    free(cpu_ids);
    cpu_ids = NULL;
}

static int real_init(void *ctx, const char **reason, int widths[3])
{
    (void)ctx;
    reason_buf[0] = '\0';
    backend_name = "none";
    const char *env = getenv("COLDRUN_COUNTERS");
    if (env != NULL && strcmp(env, "off") == 0) {
        *reason = "per-core counters switched off (COLDRUN_COUNTERS=off)";
        return 0;
    }
    ncores = online_cpus();
    if (ncores < 1) {
        *reason = "cannot list the online CPUs (/sys/devices/system/cpu/online)";
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        fds[k] = krun_xcalloc((size_t)ncores, sizeof(int));
        for (int c = 0; c < ncores; c++)
            fds[k][c] = -1;
    }

    if (env != NULL && strcmp(env, "test-software-events") == 0) {
        /*
         * Test mode only: the software cpu-clock event (ns) stands in for all
         * three counters, to exercise the per-CPU perf plumbing on machines
         * (VMs) without a PMU.  The source name says so; never for real runs.
         */
        for (int k = 0; k < 3; k++)
            if (open_perf_kind(k, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "PERF_COUNT_SW_CPU_CLOCK") != 0) {
                close_all();
                *reason = reason_buf;
                return 0;
            }
        backend_name = "perf_event(TEST: software cpu-clock, not hardware counters)";
        return ncores;
    }

    /* Try every counter even after one fails, so the reason names them all. */
    int ok = open_perf_kind(KRUN_CYCLES, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "PERF_COUNT_HW_CPU_CYCLES") == 0;
    if (!ok)
        ok = open_msr_cycles(&widths[KRUN_CYCLES]) == 0;

    long msr_type = -1;
    if (read_sysfs_int("/sys/bus/event_source/devices/msr/type", &msr_type) != 0)
        add_reason("aperf/mperf: no msr perf PMU (/sys/bus/event_source/devices/msr)");
    for (int k = KRUN_APERF; k <= KRUN_MPERF; k++) {
        long config;
        int got = 0;
        if (msr_type >= 0) {
            if (msr_pmu_event(kind_names[k], &config) == 0)
                got = open_perf_kind(k, (uint32_t)msr_type, (uint64_t)config, kind_names[k]) == 0;
            else
                add_reason("%s: the msr PMU has no %s event (CPU without APERF/MPERF, or a VM)",
                           kind_names[k], kind_names[k]);
        }
        if (!got)
            got = open_msr_kind(k) == 0;
        ok = ok && got;
    }
    if (!ok) {
        close_all();
        *reason = reason_buf;
        return 0;
    }
    backend_name = kinds[KRUN_CYCLES] == FD_PERF && kinds[KRUN_APERF] == FD_PERF ? "perf_event"
                   : kinds[KRUN_CYCLES] == FD_MSR && kinds[KRUN_APERF] == FD_MSR ? "msr_device"
                                                                                  : "perf_event+msr_device";
    return ncores;
}

static uint64_t real_read_counter(void *ctx, enum krun_counter_kind kind, int core)
{
    (void)ctx;
    uint64_t v;
    ssize_t got = kinds[kind] == FD_PERF ? read(fds[kind][core], &v, sizeof(v))
                                         : pread(fds[kind][core], &v, sizeof(v), msr_addr[kind]);
    if (got != (ssize_t)sizeof(v)) {
        fprintf(stderr, "libkruntime: reading %s on core %d failed: %s\n", kind_names[kind], core,
                got < 0 ? strerror(errno) : "counter no longer scheduled");
        exit(EXIT_FAILURE);
    }
    return v;
}

static void real_done(void *ctx)
{
    (void)ctx;
    close_all();
}

#else /* !__linux__ */

static int real_init(void *ctx, const char **reason, int widths[3])
{
    (void)ctx;
    (void)widths;
    *reason = "per-core counters are only implemented on Linux";
    return 0;
}

static uint64_t real_read_counter(void *ctx, enum krun_counter_kind kind, int core)
{
    (void)ctx;
    (void)kind;
    (void)core;
    fprintf(stderr, "libkruntime: no per-core counters on this OS\n");
    exit(EXIT_FAILURE);
}

static void real_done(void *ctx)
{
    (void)ctx;
}

#endif

static const struct krun_source real_source = {
    .ctx = NULL,
    .init = real_init,
    .clock_ns = real_clock_ns,
    .read_counter = real_read_counter,
    .done = real_done,
    .name = "real",
};

const struct krun_source *krun_real_source(void)
{
    return &real_source;
}

const char *krun_real_source_name(void)
{
    return backend_name;
}
