/*
 * Startup-time wrapper: read the clock, then exec the language implementation.
 *
 * usage: startup_wrapper <vm> [vm args] <dummy runner> <benchmark> <iters> <param> <debug>
 *
 * The wrapper records the time just before execvp() in the environment
 * (COLDRUN_STARTUP_CLOCK_MONOTONIC_RAW and COLDRUN_STARTUP_CLOCK_MONOTONIC,
 * each "<seconds>.<nanoseconds>"); the language's dummy runner reads the
 * same clock at its first user-level line and reports both, so the startup
 * time is the difference.  Both clocks are given because not every language
 * can read CLOCK_MONOTONIC_RAW without loading an FFI first (Java's nanoTime,
 * Node's hrtime and PHP's hrtime are CLOCK_MONOTONIC).  Nothing is printed:
 * a write would land inside the measured interval.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RAW_NAME "COLDRUN_STARTUP_CLOCK_MONOTONIC_RAW="
#define MONO_NAME "COLDRUN_STARTUP_CLOCK_MONOTONIC="
#define STAMP_LEN 32

/* putenv keeps these buffers, so they can be filled after the clocks are read. */
static char raw_env[sizeof(RAW_NAME) + STAMP_LEN] = RAW_NAME;
static char mono_env[sizeof(MONO_NAME) + STAMP_LEN] = MONO_NAME;

static void stamp(char *buf, size_t prefix, const struct timespec *ts)
{
    snprintf(buf + prefix, STAMP_LEN, "%lld.%09ld", (long long)ts->tv_sec, (long)ts->tv_nsec);
}

int main(int argc, char **argv)
{
    struct timespec raw, mono;

    if (argc < 2) {
        fprintf(stderr, "usage: startup_wrapper <vm> [args...]\n");
        return 2;
    }
    if (putenv(raw_env) != 0 || putenv(mono_env) != 0) {
        perror("startup_wrapper: putenv");
        return 2;
    }
    if (clock_gettime(CLOCK_MONOTONIC, &mono) != 0) {
        perror("startup_wrapper: clock_gettime(CLOCK_MONOTONIC)");
        return 2;
    }
#ifdef CLOCK_MONOTONIC_RAW
    if (clock_gettime(CLOCK_MONOTONIC_RAW, &raw) != 0) {
        perror("startup_wrapper: clock_gettime(CLOCK_MONOTONIC_RAW)");
        return 2;
    }
#else
    raw = mono; /* OpenBSD: libkruntime's clock is CLOCK_MONOTONIC there too */
#endif
    stamp(raw_env, sizeof(RAW_NAME) - 1, &raw);
    stamp(mono_env, sizeof(MONO_NAME) - 1, &mono);
    execvp(argv[1], argv + 1);
    fprintf(stderr, "startup_wrapper: cannot execute %s: ", argv[1]);
    perror(NULL);
    return 127;
}
