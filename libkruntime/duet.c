/*
 * The duet barrier: two runners of a pair execution (Duet benchmarking)
 * meet before every measured iteration.
 *
 * A pthread barrier cannot time out and never learns that its partner died,
 * so this is a generation barrier of its own in POSIX shared memory, built
 * on one of two sets of primitives (chosen at compile time, below):
 *
 * Linux (robust process-shared pthread mutexes):
 * - `lock` (process-shared, robust) guards the state; `turn` (process-shared,
 *   CLOCK_MONOTONIC) is broadcast when the second runner arrives.
 * - Each runner holds `alive[slot]` (process-shared, robust) from attach to
 *   process exit.  The kernel releases a dead owner's robust mutexes, so a
 *   trylock answering EOWNERDEAD means that partner is gone, even if it was
 *   SIGKILLed or is an unreaped zombie.
 * - A runner dying while holding `lock` leaves it EOWNERDEAD for the next
 *   locker, which marks the barrier abandoned.
 *
 * futex(2) (OpenBSD, whose pthread.h has neither robust nor process-shared
 * mutexes; on Linux with -DKRUN_DUET_FUTEX so this path is built and tested):
 * - no lock at all: the state is atomics, and a waiter sleeps with FUTEX_WAIT
 *   on `events`, which is bumped (then FUTEX_WAKE) on every generation change
 *   and on abandonment.  The sleeps are slices of POLL_NS, so even a lost
 *   wake-up only delays, never hangs.
 * - Each runner holds an fcntl(2) write lock on byte `slot` of the shared
 *   memory object from attach to process exit; the kernel drops a process's
 *   record locks when it exits (before it is a zombie), so F_GETLK answering
 *   F_UNLCK for an attached partner means it is gone.
 *
 * Neither (-DKRUN_DUET_NONE, or another system): the library still builds,
 * and creating or attaching a barrier fails with one line saying why.
 *
 * In every path a waiter checks its partner's liveness every POLL_NS; at its
 * deadline, or when the partner is gone, it marks the barrier abandoned with a
 * reason and wakes the other side, which fails at once with that reason
 * instead of waiting out its own timeout.
 *
 * These functions never exit: they return -1 and write one line to err;
 * libkruntime.c decides the exit status.
 */
#define _GNU_SOURCE
#include "duet.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Which primitives: the build may force one (tests build every path on Linux). */
#if defined(KRUN_DUET_NONE)
#elif defined(KRUN_DUET_FUTEX) || defined(__OpenBSD__)
#define DUET_FUTEX 1
#elif defined(__linux__)
#define DUET_ROBUST 1
#endif

#if defined(DUET_ROBUST)
#include <pthread.h>
#elif defined(DUET_FUTEX) && defined(__OpenBSD__)
#include <sys/futex.h> /* futex(2): FUTEX_WAIT with a relative timeout, FUTEX_WAKE */
#elif defined(DUET_FUTEX)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#define DUET_MAGIC 0x44554554u /* "DUET" */
#define POLL_NS 20000000LL     /* partner liveness check every 20 ms while waiting */

#if defined(DUET_ROBUST)
#define DUET_LAYOUT 1u
typedef uint64_t duet_gen;
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
#elif defined(DUET_FUTEX)
#define DUET_LAYOUT 2u
typedef uint32_t duet_gen;
struct duet_shm {
    uint32_t magic; /* written last by create: a half-made barrier is refused */
    uint32_t layout;
    uint32_t events;     /* the futex word: bumped on each new generation and on abandonment */
    uint32_t arrived;
    uint32_t generation;
    uint32_t claimed[2]; /* a slot taken (compare-and-swap) */
    uint32_t attached[2]; /* its owner holds its liveness lock */
    pid_t pid[2];
    uint32_t abandoned;  /* 0; 1 while `why` is written; 2 once it is */
    char why[200];
};
static int shm_fd = -1; /* kept open: closing any descriptor of the object drops our record lock */
#else
#define DUET_LAYOUT 0u
typedef uint32_t duet_gen;
struct duet_shm {
    uint32_t magic;
    uint32_t layout;
    uint32_t generation;
};
#endif

#define NO_DUET "duet barriers need robust process-shared mutexes (Linux) or futex(2) (OpenBSD); " \
                "this system has neither, so pair (duet) executions cannot run here"

static struct duet_shm *shm; /* this process's attachment, NULL when none */
static int slot __attribute__((unused));  /* unused where duet is refused */
static long waits __attribute__((unused));

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

static int init_shared(struct duet_shm *d, char *err, size_t n);
static int claim_slot(struct duet_shm *d, int fd, const char *name, char *err, size_t n);

/* A fresh barrier: an old one of the same name is removed first, so create is idempotent. */
int krun_duet_create(const char *name, unsigned int mode, char *err, size_t n)
{
#if !defined(DUET_ROBUST) && !defined(DUET_FUTEX)
    (void)mode;
    if (check_name(name, err, n) == 0)
        fail(err, n, "%s", NO_DUET);
    return -1;
#endif
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
    if (rc == 0) {
        d->layout = DUET_LAYOUT;
        __atomic_store_n(&d->magic, DUET_MAGIC, __ATOMIC_RELEASE);
    }
    munmap(d, sizeof(*d));
    if (rc)
        shm_unlink(name);
    return rc;
}

int krun_duet_attach(const char *name, char *err, size_t n)
{
    if (shm != NULL) /* krun_init after krun_done in the same process: keep the slot */
        return 0;
    if (check_name(name, err, n))
        return -1;
#if !defined(DUET_ROBUST) && !defined(DUET_FUTEX)
    return fail(err, n, "%s", NO_DUET);
#endif
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
    if (d == MAP_FAILED) {
        close(fd);
        return fail(err, n, "duet barrier %s: mmap: %s", name, strerror(errno));
    }
    if (__atomic_load_n(&d->magic, __ATOMIC_ACQUIRE) != DUET_MAGIC || d->layout != DUET_LAYOUT) {
        close(fd);
        munmap(d, sizeof(*d));
        return fail(err, n, "duet barrier %s is not an initialised coldrun duet barrier (layout %u)", name,
                    DUET_LAYOUT);
    }
    if (claim_slot(d, fd, name, err, n)) {
        munmap(d, sizeof(*d));
        return -1;
    }
    shm = d;
    return 0;
}

/*
 * Optional (spin_ns > 0): a partner close behind arrives within microseconds;
 * spinning first spares both sides a futex sleep and wake-up, and the waiter
 * stays on its CPU with warm caches for the timed region that follows.  Only
 * for runners pinned to CPUs of their own: on a shared CPU it steals the
 * partner's time.
 */
__attribute__((unused)) static int spin_for_partner(duet_gen generation, int64_t spin_ns)
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

int krun_duet_in_use(void)
{
    return shm != NULL;
}

#if defined(DUET_ROBUST)
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
    return 0;
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

/* Takes a free slot and holds its `alive` mutex until exit; fd is not needed. */
static int claim_slot(struct duet_shm *d, int fd, const char *name, char *err, size_t n)
{
    close(fd);
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
    shm = NULL;
    if (slot < 0)
        return fail(err, n, "duet barrier %s already has its two runners", name);
    return 0;
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
#elif defined(DUET_FUTEX)
static int init_shared(struct duet_shm *d, char *err, size_t n)
{
    (void)err, (void)n;
    memset(d, 0, sizeof(*d)); /* ftruncate zero-filled it already; this says so */
    return 0;
}

static void wake_all(uint32_t *word)
{
#if defined(__OpenBSD__)
    futex(word, FUTEX_WAKE, INT_MAX, NULL, NULL);
#else
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
#endif
}

/* Sleeps while *word == seen, at most ns; a wake-up, a change or the timeout all just return. */
static void sleep_on(uint32_t *word, uint32_t seen, int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
#if defined(__OpenBSD__)
    futex(word, FUTEX_WAIT, (int)seen, &ts, NULL);
#else
    syscall(SYS_futex, word, FUTEX_WAIT, seen, &ts, NULL, 0);
#endif
}

/* A write lock on byte `which` of the object: held by a runner for its whole life. */
static int liveness_lock(int fd, int which, int cmd, struct flock *fl)
{
    memset(fl, 0, sizeof(*fl));
    fl->l_type = F_WRLCK;
    fl->l_whence = SEEK_SET;
    fl->l_start = which;
    fl->l_len = 1;
    return fcntl(fd, cmd, fl);
}

static int claim_slot(struct duet_shm *d, int fd, const char *name, char *err, size_t n)
{
    slot = -1;
    for (int s = 0; s < 2 && slot < 0; s++) {
        uint32_t free_slot = 0;
        if (__atomic_compare_exchange_n(&d->claimed[s], &free_slot, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            slot = s;
    }
    if (slot < 0) {
        close(fd);
        return fail(err, n, "duet barrier %s already has its two runners", name);
    }
    struct flock fl;
    if (liveness_lock(fd, slot, F_SETLK, &fl) != 0) {
        close(fd);
        return fail(err, n, "duet barrier %s: fcntl(F_SETLK): %s", name, strerror(errno));
    }
    shm_fd = fd;
    d->pid[slot] = getpid();
    /* Attached only once the lock is held: until then the partner must not look dead. */
    __atomic_store_n(&d->attached[slot], 1, __ATOMIC_RELEASE);
    return 0;
}

/* Gone: attached, and its liveness lock is free (the kernel dropped it at exit). */
static int partner_gone(int partner)
{
    if (!__atomic_load_n(&shm->attached[partner], __ATOMIC_ACQUIRE))
        return 0;
    struct flock fl;
    if (liveness_lock(shm_fd, partner, F_GETLK, &fl) != 0)
        return 0; /* cannot tell: the deadline still ends the wait */
    return fl.l_type == F_UNLCK;
}

/* Records why (the first reason wins) and wakes the partner so it fails now. */
static void abandon(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void abandon(const char *fmt, ...)
{
    uint32_t none = 0;
    if (__atomic_compare_exchange_n(&shm->abandoned, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(shm->why, sizeof(shm->why), fmt, ap);
        va_end(ap);
        __atomic_store_n(&shm->abandoned, 2, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&shm->events, 1, __ATOMIC_RELEASE);
    wake_all(&shm->events);
}

static int abandoned_fail(long iteration, char *err, size_t n)
{
    /* The abandoner writes `why` between 1 and 2; a reader waits for it a little. */
    for (int i = 0; i < 1000 && __atomic_load_n(&shm->abandoned, __ATOMIC_ACQUIRE) != 2; i++) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    const char *why = __atomic_load_n(&shm->abandoned, __ATOMIC_ACQUIRE) == 2 ? shm->why : "(no reason recorded)";
    return fail(err, n, "duet barrier abandoned at iteration %ld: %s", iteration, why);
}

int krun_duet_wait(int64_t timeout_ns, int64_t spin_ns, char *err, size_t n)
{
    int partner = !slot;
    long iteration = ++waits;
    uint32_t generation = __atomic_load_n(&shm->generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&shm->abandoned, __ATOMIC_ACQUIRE))
        return abandoned_fail(iteration, err, n);
    if (__atomic_add_fetch(&shm->arrived, 1, __ATOMIC_ACQ_REL) == 2) {
        /* The partner waits for generation to change, so it cannot arrive again before this reset. */
        __atomic_store_n(&shm->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&shm->generation, generation + 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&shm->events, 1, __ATOMIC_RELEASE);
        wake_all(&shm->events);
        return 0;
    }
    int64_t deadline = now_ns() + timeout_ns;
    if (spin_ns > 0 && spin_for_partner(generation, spin_ns))
        return 0;
    for (;;) {
        /* events first: any change after this read makes the sleep below return at once. */
        uint32_t seen = __atomic_load_n(&shm->events, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&shm->generation, __ATOMIC_ACQUIRE) != generation)
            return 0;
        if (__atomic_load_n(&shm->abandoned, __ATOMIC_ACQUIRE))
            break;
        int64_t now = now_ns();
        if (partner_gone(partner)) {
            abandon("the partner runner (pid %d) exited before iteration %ld", (int)shm->pid[partner], iteration);
            break;
        }
        if (now >= deadline) {
            if (__atomic_load_n(&shm->attached[partner], __ATOMIC_ACQUIRE))
                abandon("the partner runner (pid %d) did not reach iteration %ld within %.3g s",
                        (int)shm->pid[partner], iteration, timeout_ns / 1e9);
            else
                abandon("no partner runner arrived within %.3g s", timeout_ns / 1e9);
            break;
        }
        sleep_on(&shm->events, seen, deadline - now < POLL_NS ? deadline - now : POLL_NS);
    }
    if (__atomic_load_n(&shm->generation, __ATOMIC_ACQUIRE) != generation)
        return 0;
    return abandoned_fail(iteration, err, n);
}

#else
static int init_shared(struct duet_shm *d, char *err, size_t n)
{
    (void)d;
    return fail(err, n, "%s", NO_DUET);
}

static int claim_slot(struct duet_shm *d, int fd, const char *name, char *err, size_t n)
{
    (void)d, (void)fd, (void)name;
    return fail(err, n, "%s", NO_DUET);
}

int krun_duet_wait(int64_t timeout_ns, int64_t spin_ns, char *err, size_t n)
{
    (void)timeout_ns, (void)spin_ns;
    return fail(err, n, "%s", NO_DUET);
}
#endif
