static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

volatile int sink;

void run_iter(int n) { sink = fib(n); }
