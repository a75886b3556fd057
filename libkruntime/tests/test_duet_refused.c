/*
 * Built with -DKRUN_DUET_NONE (a system with neither robust process-shared
 * mutexes nor futex(2)): the library still builds, and the supervisor's
 * create and a runner's attach each fail with the same one line.
 *
 *     test_duet_refused     print "N passed, M failed"
 */
#include "libkruntime.h"
#include "duet.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    char err[512];
    CHECK(krun_duet_create("/coldrun-test-refused", 0600, err, sizeof(err)) == -1);
    CHECK(strstr(err, "this system has neither, so pair (duet) executions cannot run here") != NULL);
    CHECK(strchr(err, '\n') == NULL);
    CHECK(krun_duet_attach("/coldrun-test-refused", err, sizeof(err)) == -1);
    CHECK(strstr(err, "duet barriers need robust process-shared mutexes (Linux) or futex(2) (OpenBSD)") == err);
    CHECK(krun_duet_in_use() == 0);
    CHECK(krun_duet_remove("/coldrun-test-refused", err, sizeof(err)) == 0); /* nothing to remove: fine */
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
