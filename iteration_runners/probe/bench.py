def run_iter(n):
    return sum(range(n))
