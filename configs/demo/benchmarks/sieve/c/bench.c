/* A sieve of Eratosthenes up to n, repeated REPEATS times per iteration so the
   time is visible next to the Python variant's (one sieve of 30000 takes ~40 us). */
#include <stdlib.h>

#define REPEATS 15

volatile int sink;

static int sieve(int n) {
    char *flags = calloc((size_t)n + 1, 1);
    int count = 0;
    if (!flags) abort();
    for (int i = 2; i <= n; i++) {
        if (!flags[i]) {
            count++;
            for (long j = (long)i * i; j <= n; j += i) flags[j] = 1;
        }
    }
    free(flags);
    return count;
}

void run_iter(int n) {
    for (int r = 0; r < REPEATS; r++) sink = sieve(n);
}
