def a(i, j):
    return 1.0 / ((i + j) * (i + j + 1) / 2 + i + 1)


def mul_av(v, n):
    return [sum(a(i, j) * v[j] for j in range(n)) for i in range(n)]


def mul_atv(v, n):
    return [sum(a(j, i) * v[j] for j in range(n)) for i in range(n)]


def run_iter(n):
    u = [1.0] * n
    for _ in range(5):
        v = mul_atv(mul_av(u, n), n)
        u = mul_atv(mul_av(v, n), n)
    if not u[0] > 0:
        raise AssertionError("bad norm")
