"""The one-key experiment the screening unit tests add their [screening] tables to."""

ONE_KEY = '''
name = "x"
executions = 3
[benchmarks]
fib = 10
[variants.v]
target = "bench.so"
[vms.c]
runner = "c"
iterations = 5
variants = ["v"]
[screening]
'''
