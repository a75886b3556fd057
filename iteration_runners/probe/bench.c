volatile long sink;

void run_iter(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    sink = s;
}
