# fib, made about 5% slower for the duet demo's A/B pair (configs/duet.toml): the extra
# fib(n - 6) costs fib(n - 6) / fib(n) ~ 1 / phi^6 ~ 5.6% of the calls fib(n) makes.
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def run_iter(n):
    if fib(n) + fib(n - 6) < 0:
        raise AssertionError("unreachable")
