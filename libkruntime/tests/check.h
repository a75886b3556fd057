/* Tiny assertion helpers shared by libkruntime's C tests (one test program per file). */
#ifndef KRUN_TEST_CHECK_H
#define KRUN_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond)                                                                    \
            passed++;                                                                \
        else {                                                                       \
            failed++;                                                                \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                              \
    do {                                                                             \
        if (strcmp((a), (b)) == 0)                                                   \
            passed++;                                                                \
        else {                                                                       \
            failed++;                                                                \
            fprintf(stderr, "FAIL %s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, (a), (b)); \
        }                                                                            \
    } while (0)

#endif
