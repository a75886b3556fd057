/*
 * C tests of the duet barrier with real processes (fork): runners meeting,
 * timeouts, a killed partner, a partner that gives up, bad names.
 *
 *     test_duet     run every scenario, print "N passed, M failed"
 *
 * Each runner is a forked child that attaches through COLDRUN_DUET_BARRIER
 * in krun_init, as a real runner does, and reports its iteration start times
 * and its stderr through pipes.
 */
#define _GNU_SOURCE
#include "libkruntime.h"
#include "check.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITERATIONS 5
#define MAX_ITERATIONS 16

static char barrier[64];
static const char *spin_us; /* COLDRUN_DUET_SPIN_US for the runners started next (NULL: unset) */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

struct runner {
    pid_t pid;
    int out;  /* iteration start times, int64 each */
    int err;  /* the child's stderr */
};

/*
 * A runner of `iterations` iterations whose iteration i sleeps sleep_ms[i]
 * (NULL: none).  hang_at >= 0: at that iteration it sleeps for good inside
 * run_iter instead (to be killed).
 */
static struct runner start_runner(const char *timeout, int iterations, const long *sleeps, int hang_at)
{
    int out[2], err[2];
    if (pipe(out) || pipe(err))
        abort();
    struct runner r = {fork(), out[0], err[0]};
    if (r.pid < 0)
        abort();
    if (r.pid == 0) {
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        setenv("COLDRUN_COUNTERS", "off", 1);
        setenv("COLDRUN_DUET_BARRIER", barrier, 1);
        if (timeout)
            setenv("COLDRUN_DUET_TIMEOUT", timeout, 1);
        if (spin_us)
            setenv("COLDRUN_DUET_SPIN_US", spin_us, 1);
        krun_init();
        krun_timeline_reserve(iterations);
        for (int i = 0; i < iterations; i++) {
            krun_measure(0);
            if (i == hang_at)
                for (;;)
                    pause();
            if (sleeps)
                sleep_ms(sleeps[i]);
            krun_measure(1);
            int64_t start = krun_get_wallclock_ns(0);
            if (write(out[1], &start, sizeof(start)) != sizeof(start))
                _exit(9);
        }
        _exit(0);
    }
    close(out[1]);
    close(err[1]);
    return r;
}

/* Exit status (or 128+signal) and the child's stderr; reads its start times into starts. */
static int finish(struct runner r, char *err, size_t errlen, int64_t *starts, int *n)
{
    int64_t v;
    int count = 0;
    while (read(r.out, &v, sizeof(v)) == sizeof(v))
        if (count < MAX_ITERATIONS)
            starts[count++] = v;
    if (n)
        *n = count;
    ssize_t got = read(r.err, err, errlen - 1);
    err[got > 0 ? got : 0] = '\0';
    close(r.out);
    close(r.err);
    int status;
    waitpid(r.pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void fresh_barrier(void)
{
    char err[256];
    snprintf(barrier, sizeof(barrier), "/coldrun-test-duet-%d", (int)getpid());
    CHECK(krun_duet_create(barrier, 0600, err, sizeof(err)) == 0);
}

static void remove_barrier(void)
{
    char err[256];
    CHECK(krun_duet_remove(barrier, err, sizeof(err)) == 0);
}

/* B sleeps 300 ms per iteration, A none: without the barrier A's i-th start would come i x 300 ms before
   B's.  The bound, under one B iteration, leaves room for a loaded machine's scheduling (172 ms seen at
   load 15). */
static void test_pair_meets_every_iteration(void)
{
    static const long sleeps[ITERATIONS] = {300, 300, 300, 300, 300};
    char err[512];
    int64_t a[MAX_ITERATIONS], b[MAX_ITERATIONS];
    int na, nb;
    fresh_barrier();
    struct runner ra = start_runner(NULL, ITERATIONS, NULL, -1);
    struct runner rb = start_runner(NULL, ITERATIONS, sleeps, -1);
    CHECK(finish(ra, err, sizeof(err), a, &na) == 0);
    CHECK(finish(rb, err, sizeof(err), b, &nb) == 0);
    CHECK(na == ITERATIONS && nb == ITERATIONS);
    for (int i = 0; i < ITERATIONS && i < na && i < nb; i++) {
        int64_t gap = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
        if (gap > 250000000)
            fprintf(stderr, "iteration %d starts %lld ns apart\n", i, (long long)gap);
        CHECK(gap <= 250000000);
    }
    remove_barrier();
}

static void test_timeout_without_partner(void)
{
    char err[512];
    int64_t starts[MAX_ITERATIONS];
    fresh_barrier();
    int64_t t0 = now_ns();
    struct runner r = start_runner("0.2", ITERATIONS, NULL, -1);
    CHECK(finish(r, err, sizeof(err), starts, NULL) == KRUN_EXIT_DUET);
    int64_t took = now_ns() - t0;
    CHECK(took >= 200000000 && took < 2000000000);
    CHECK(strstr(err, "libkruntime: duet barrier abandoned at iteration 1: no partner runner arrived within 0.2 s") == err);
    remove_barrier();
}

/* A waits at iteration 2 while B is SIGKILLed (and left unreaped) inside its iteration 1. */
static void test_killed_partner_releases_survivor(void)
{
    char err[512];
    int64_t starts[MAX_ITERATIONS];
    fresh_barrier();
    struct runner a = start_runner("30", ITERATIONS, NULL, -1);
    struct runner b = start_runner("30", ITERATIONS, NULL, 0);
    sleep_ms(200);
    int64_t t0 = now_ns();
    kill(b.pid, SIGKILL);
    int status = finish(a, err, sizeof(err), starts, NULL);
    int64_t took = now_ns() - t0;
    CHECK(status == KRUN_EXIT_DUET);
    CHECK(took < 1000000000); /* the 20 ms liveness poll, not the 30 s timeout */
    CHECK(strstr(err, "exited before iteration 2") != NULL);
    CHECK(finish(b, err, sizeof(err), starts, NULL) == 128 + SIGKILL);
    remove_barrier();
}

/* A gives up after 0.2 s while B is busy; B's next wait fails at once with A's reason. */
static void test_partner_giving_up_is_reported(void)
{
    static const long sleeps[ITERATIONS] = {0, 600, 0, 0, 0};
    char err[512];
    int64_t starts[MAX_ITERATIONS];
    fresh_barrier();
    struct runner a = start_runner("0.2", ITERATIONS, NULL, -1);
    struct runner b = start_runner("30", ITERATIONS, sleeps, -1);
    CHECK(finish(a, err, sizeof(err), starts, NULL) == KRUN_EXIT_DUET);
    CHECK(strstr(err, "did not reach iteration 3 within 0.2 s") != NULL);
    int64_t t0 = now_ns();
    CHECK(finish(b, err, sizeof(err), starts, NULL) == KRUN_EXIT_DUET);
    CHECK(now_ns() - t0 < 2000000000);
    CHECK(strstr(err, "duet barrier abandoned at iteration 3: the partner runner") != NULL);
    remove_barrier();
}

static void test_third_runner_and_missing_barrier(void)
{
    char err[512];
    int64_t starts[MAX_ITERATIONS];
    fresh_barrier();
    struct runner a = start_runner("5", 1, NULL, -1);
    struct runner b = start_runner("5", 1, NULL, 0);
    /* Both slots are taken once A has timed its iteration: the barrier met B first (a fixed sleep
       was not enough on a loaded machine, where C then took B's place). */
    int64_t first;
    CHECK(read(a.out, &first, sizeof(first)) == sizeof(first));
    struct runner c = start_runner("5", 1, NULL, -1);
    CHECK(finish(c, err, sizeof(err), starts, NULL) == KRUN_EXIT_SETUP);
    CHECK(strstr(err, "already has its two runners") != NULL);
    kill(b.pid, SIGKILL);
    finish(a, err, sizeof(err), starts, NULL);
    finish(b, err, sizeof(err), starts, NULL);
    remove_barrier();

    struct runner m = start_runner("5", 1, NULL, -1);
    CHECK(finish(m, err, sizeof(err), starts, NULL) == KRUN_EXIT_SETUP);
    CHECK(strstr(err, "shm_open: No such file or directory (the supervisor creates it") != NULL);
}

static void test_bad_spin_is_a_setup_error(void)
{
    char err[512];
    int64_t starts[MAX_ITERATIONS];
    const char *saved = spin_us;
    fresh_barrier();
    spin_us = "-5";
    struct runner r = start_runner("5", 1, NULL, -1);
    CHECK(finish(r, err, sizeof(err), starts, NULL) == KRUN_EXIT_SETUP);
    CHECK(strstr(err, "COLDRUN_DUET_SPIN_US=-5 is not a number of microseconds") != NULL);
    spin_us = saved;
    remove_barrier();
}

static void test_create_remove_idempotent_and_names(void)
{
    char err[256];
    fresh_barrier();
    CHECK(krun_duet_create(barrier, 0600, err, sizeof(err)) == 0); /* replaces */
    CHECK(krun_duet_remove(barrier, err, sizeof(err)) == 0);
    CHECK(krun_duet_remove(barrier, err, sizeof(err)) == 0); /* already gone */
    CHECK(krun_duet_create("no-slash", 0600, err, sizeof(err)) == -1);
    CHECK(strstr(err, "duet barrier name no-slash must be one '/'") != NULL);
    CHECK(krun_duet_remove("/a/b", err, sizeof(err)) == -1);
}

int main(void)
{
    test_create_remove_idempotent_and_names();
    test_pair_meets_every_iteration();
    test_timeout_without_partner();
    test_killed_partner_releases_survivor();
    test_partner_giving_up_is_reported();
    test_third_runner_and_missing_barrier();
    /* Again with spinning before sleeping: the spin ends in the same waits. */
    spin_us = "2000";
    test_pair_meets_every_iteration();
    test_timeout_without_partner();
    test_killed_partner_releases_survivor();
    test_partner_giving_up_is_reported();
    test_bad_spin_is_a_setup_error();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
