#include <stdlib.h>

volatile int sink;

void run_iter(int n) {
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
    sink = count;
}
