/* The same fib(n) as the Python variant, repeated REPEATS times per iteration:
   one fib(20) takes ~10 us in C, too little to show in the demo's tables. */
#define REPEATS 80

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

volatile int sink;
volatile int param;   /* re-read each repeat, so the compiler cannot hoist fib() out of the loop */

void run_iter(int n) {
    param = n;
    for (int r = 0; r < REPEATS; r++) sink = fib(param);
}
