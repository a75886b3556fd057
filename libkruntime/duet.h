/* The duet barrier, runner side (duet.c); the supervisor side is in libkruntime.h. */
#ifndef KRUN_DUET_H
#define KRUN_DUET_H

#include "libkruntime.h"

/* Each returns 0, or -1 with one line in err. */
int krun_duet_attach(const char *name, char *err, size_t n);
/* spin_ns > 0: spin that long before sleeping (runners on CPUs of their own). */
int krun_duet_wait(int64_t timeout_ns, int64_t spin_ns, char *err, size_t n);

#endif
