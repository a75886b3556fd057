def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def run_iter(n):
    if fib(n) < 0:
        raise AssertionError("unreachable")
