/*
 * coldrun startup-time dummy runner for C (Krun's startup_runner_c in the
 * paper's startup experiment): the "VM" is this program itself.
 *
 * usage: startup_wrapper startup_runner_c <benchmark> <iters> <param> <debug>
 *
 * main() reads the clock the startup wrapper read before it exec'd this
 * program, first thing; the difference is exec, the dynamic loader (this
 * program links libkruntime, as the C iterations runner does) and the C
 * start-up code.  Then it reports both readings (PROTOCOL.md, "startup").
 * The benchmark is not loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CLOCK_MONOTONIC_RAW
#define CLOCK_ID CLOCK_MONOTONIC_RAW
#define CLOCK_NAME "CLOCK_MONOTONIC_RAW"
#else
#define CLOCK_ID CLOCK_MONOTONIC
#define CLOCK_NAME "CLOCK_MONOTONIC"
#endif

int main(int argc, char **argv)
{
    struct timespec t1;
    if (clock_gettime(CLOCK_ID, &t1) != 0) {
        perror("startup_runner_c: error: clock_gettime");
        return 1;
    }
    (void)argv;
    if (argc != 5) {
        fprintf(stderr, "startup_runner_c: error: usage: startup_runner_c <benchmark> <iterations> <param> <debug 0|1>\n");
        return 1;
    }
    const char *wrapper = getenv("COLDRUN_STARTUP_" CLOCK_NAME);
    long long sec0;
    long nsec0;
    char tail;
    if (wrapper == NULL || sscanf(wrapper, "%lld.%ld%c", &sec0, &nsec0, &tail) != 2) {
        fprintf(stderr, "startup_runner_c: error: COLDRUN_STARTUP_" CLOCK_NAME " is unset or not <s>.<ns>: "
                "run me under startup_wrapper\n");
        return 1;
    }
    /* Seconds and nanoseconds apart: their difference is exact in a double. */
    double seconds = (double)((long long)t1.tv_sec - sec0) + (double)(t1.tv_nsec - nsec0) / 1e9;
    char doc[1024];
    int len = snprintf(doc, sizeof doc,
        "{\"protocol_version\": 1, \"wallclock_times\": [%.17g], \"core_cycle_counts\": [], "
        "\"aperf_counts\": [], \"mperf_counts\": [], \"counters\": {\"available\": false, "
        "\"reason\": \"startup-time mode reads no per-core counters\"}, \"startup\": {\"clock\": \"" CLOCK_NAME "\", "
        "\"wrapper_time\": \"%s\", \"runner_time\": \"%lld.%09ld\", \"seconds\": %.17g}}",
        seconds, wrapper, (long long)t1.tv_sec, (long)t1.tv_nsec, seconds);
    if (len < 0 || (size_t)len >= sizeof doc) {
        fprintf(stderr, "startup_runner_c: error: results document too long\n");
        return 1;
    }
    const char *fd_env = getenv("COLDRUN_RESULTS_FD");
    int fd = fd_env ? atoi(fd_env) : 3;
    for (int off = 0; off < len;) {
        ssize_t n = write(fd, doc + off, (size_t)(len - off));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "startup_runner_c: error: writing the results document to fd %d: %s\n", fd,
                    strerror(errno));
            return 3;
        }
        off += (int)n;
    }
    close(fd);
    return 0;
}
