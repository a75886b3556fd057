/*
 * The duet barrier: two runners of a pair execution (Duet benchmarking)
 * meet before every measured iteration.
 *
 * A pthread barrier cannot time out and never learns that its partner died,
 * so this is a generation barrier of its own in POSIX shared memory:
 *
 * - `lock` (process-shared, robust) guards the state; `turn` (process-shared,
 *   CLOCK_MONOTONIC) is broadcast when the second runner arrives.
 * - Each runner holds `alive[slot]` (process-shared, robust) from attach to
 *   process exit.  The kernel releases a dead owner's robust mutexes, so a
 *   trylock answering EOWNERDEAD means that partner is gone, even if it was
 *   SIGKILLed or is an unreaped zombie.
 * - A waiter sleeps in slices of POLL_NS so it checks that liveness often;
 *   at its deadline, or when the partner is gone, it sets `abandoned` with a
 *   reason and broadcasts, so the other side fails at once with that reason
 *   instead of waiting out its own timeout.
 * - A runner dying while holding `lock` leaves it EOWNERDEAD for the next
 *   locker, which marks the barrier abandoned.
 *
 * These functions never exit: they return -1 and write one line to err;
 * libkruntime.c decides the exit status.
 */
#define _GNU_SOURCE
#include "duet.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DUET_MAGIC 0x44554554u /* "DUET" */
#define DUET_LAYOUT 1u
#define POLL_NS 20000000LL     /* partner liveness check every 20 ms while waiting */

struct duet_shm {
    uint32_t magic; /* written last by create: a half-made barrier is refused */
    uint32_t layout;
    pthread_mutex_t lock;
    pthread_cond_t turn;
    pthread_mutex_t alive[2];
    int attached[2];
    pid_t pid[2];
    int arrived;
    uint64_t generation;
    int abandoned;
    char why[200];
};

static struct duet_shm *shm; /* this process's attachment, NULL when none */
static int slot;
static long waits;

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

static int check_name(const char *name, char *err, size_t n)
{
    if (name == NULL || name[0] != '/' || name[1] == '\0' || strchr(name + 1, '/') != NULL ||
        strlen(name) >= NAME_MAX)
        return fail(err, n, "duet barrier name %s must be one '/' then a name without '/' (e.g. /coldrun-duet-1)",
                    name ? name : "(null)");
    return 0;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int krun_duet_remove(const char *name, char *err, size_t n)
{
    if (check_name(name, err, n))
        return -1;
    if (shm_unlink(name) != 0 && errno != ENOENT)
        return fail(err, n, "duet barrier %s: shm_unlink: %s", name, strerror(errno));
    return 0;
}

static int init_shared(struct duet_shm *d, char *err, size_t n)
{
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    int rc = pthread_mutexattr_init(&ma);
    rc = rc ? rc : pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    rc = rc ? rc : pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    rc = rc ? rc : pthread_mutex_init(&d->lock, &ma);
    rc = rc ? rc : pthread_mutex_init(&d->alive[0], &ma);
    rc = rc ? rc : pthread_mutex_init(&d->alive[1], &ma);
    rc = rc ? rc : pthread_condattr_init(&ca);
    rc = rc ? rc : pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    rc = rc ? rc : pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    rc = rc ? rc : pthread_cond_init(&d->turn, &ca);
    if (rc)
        return fail(err, n, "duet barrier: initialising the shared mutexes: %s", strerror(rc));
    d->layout = DUET_LAYOUT;
    __atomic_store_n(&d->magic, DUET_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

/* A fresh barrier: an old one of the same name is removed first, so create is idempotent. */
int krun_duet_create(const char *name, unsigned int mode, char *err, size_t n)
{
    if (krun_duet_remove(name, err, n))
        return -1;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return fail(err, n, "duet barrier %s: shm_open: %s", name, strerror(errno));
    /* fchmod: the mode must not depend on the supervisor's umask. */
    if (fchmod(fd, (mode_t)mode) != 0 || ftruncate(fd, sizeof(struct duet_shm)) != 0) {
        fail(err, n, "duet barrier %s: %s", name, strerror(errno));
        close(fd);
        shm_unlink(name);
        return -1;
    }
    struct duet_shm *d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (d == MAP_FAILED) {
        shm_unlink(name);
        return fail(err, n, "duet barrier %s: mmap: %s", name, strerror(errno));
    }
    int rc = init_shared(d, err, n);
    munmap(d, sizeof(*d));
    if (rc)
        shm_unlink(name);
    return rc;
}

/* Caller holds lock. Records why and wakes the partner so it fails now, not at its deadline. */
static void abandon(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void abandon(const char *fmt, ...)
{
    if (!shm->abandoned) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(shm->why, sizeof(shm->why), fmt, ap);
        va_end(ap);
        shm->abandoned = 1;
    }
    pthread_cond_broadcast(&shm->turn);
}

static void lock_state(void)
{
    if (pthread_mutex_lock(&shm->lock) == EOWNERDEAD) {
        pthread_mutex_consistent(&shm->lock);
        abandon("a runner died while holding the barrier's lock");
    }
}

int krun_duet_attach(const char *name, char *err, size_t n)
{
    if (shm != NULL) /* krun_init after krun_done in the same process: keep the slot */
        return 0;
    if (check_name(name, err, n))
        return -1;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return fail(err, n, "duet barrier %s: shm_open: %s (the supervisor creates it before starting the pair)",
                    name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size != (off_t)sizeof(struct duet_shm)) {
        close(fd);
        return fail(err, n, "duet barrier %s is not a coldrun duet barrier (size %lld, expected %zu)", name,
                    (long long)st.st_size, sizeof(struct duet_shm));
    }
    struct duet_shm *d = mmap(NULL, sizeof(*d), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (d == MAP_FAILED)
        return fail(err, n, "duet barrier %s: mmap: %s", name, strerror(errno));
    if (__atomic_load_n(&d->magic, __ATOMIC_ACQUIRE) != DUET_MAGIC || d->layout != DUET_LAYOUT) {
        munmap(d, sizeof(*d));
        return fail(err, n, "duet barrier %s is not an initialised coldrun duet barrier (layout %u)", name,
                    DUET_LAYOUT);
    }
    shm = d;
    lock_state();
    slot = !d->attached[0] ? 0 : !d->attached[1] ? 1 : -1;
    if (slot >= 0) {
        d->attached[slot] = 1;
        d->pid[slot] = getpid();
        if (pthread_mutex_lock(&d->alive[slot]) == EOWNERDEAD)
            pthread_mutex_consistent(&d->alive[slot]);
    }
    pthread_mutex_unlock(&d->lock);
    if (slot < 0) {
        shm = NULL;
        munmap(d, sizeof(*d));
        return fail(err, n, "duet barrier %s already has its two runners", name);
    }
    return 0;
}

int krun_duet_in_use(void)
{
    return shm != NULL;
}

/* Caller holds lock.  Gone: died (EOWNERDEAD) or released its slot. */
static int partner_gone(int partner)
{
    if (!shm->attached[partner])
        return 0;
    int rc = pthread_mutex_trylock(&shm->alive[partner]);
    if (rc == EBUSY)
        return 0;
    if (rc == EOWNERDEAD)
        pthread_mutex_consistent(&shm->alive[partner]);
    return 1;
}

/*
 * Optional (spin_ns > 0): a partner close behind arrives within microseconds;
 * spinning first spares both sides a futex sleep and wake-up, and the waiter
 * stays on its CPU with warm caches for the timed region that follows.  Only
 * for runners pinned to CPUs of their own: on a shared CPU it steals the
 * partner's time.
 */
static int spin_for_partner(uint64_t generation, int64_t spin_ns)
{
    int64_t until = now_ns() + spin_ns;
    for (unsigned i = 1;; i++) {
        if (__atomic_load_n(&shm->generation, __ATOMIC_ACQUIRE) != generation)
            return 1;
        if (i % 64 == 0 && now_ns() >= until)
            return 0;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

int krun_duet_wait(int64_t timeout_ns, int64_t spin_ns, char *err, size_t n)
{
    int partner = !slot;
    long iteration = ++waits;
    lock_state();
    uint64_t generation = shm->generation;
    if (!shm->abandoned && ++shm->arrived == 2) {
        shm->arrived = 0;
        __atomic_store_n(&shm->generation, generation + 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&shm->turn);
        pthread_mutex_unlock(&shm->lock);
        return 0;
    }
    int64_t deadline = now_ns() + timeout_ns;
    if (spin_ns > 0 && !shm->abandoned) {
        pthread_mutex_unlock(&shm->lock);
        if (spin_for_partner(generation, spin_ns))
            return 0;
        lock_state();
    }
    while (shm->generation == generation && !shm->abandoned) {
        int64_t now = now_ns();
        if (partner_gone(partner)) {
            abandon("the partner runner (pid %d) exited before iteration %ld", (int)shm->pid[partner], iteration);
            break;
        }
        if (now >= deadline) {
            if (shm->attached[partner])
                abandon("the partner runner (pid %d) did not reach iteration %ld within %.3g s",
                        (int)shm->pid[partner], iteration, timeout_ns / 1e9);
            else
                abandon("no partner runner arrived within %.3g s", timeout_ns / 1e9);
            break;
        }
        int64_t wake = now + POLL_NS < deadline ? now + POLL_NS : deadline;
        struct timespec ts = {wake / 1000000000, wake % 1000000000};
        if (pthread_cond_timedwait(&shm->turn, &shm->lock, &ts) == EOWNERDEAD) {
            pthread_mutex_consistent(&shm->lock);
            abandon("a runner died while holding the barrier's lock");
        }
    }
    int ok = shm->generation != generation;
    if (!ok)
        fail(err, n, "duet barrier abandoned at iteration %ld: %s", iteration, shm->why);
    pthread_mutex_unlock(&shm->lock);
    return ok ? 0 : -1;
}
