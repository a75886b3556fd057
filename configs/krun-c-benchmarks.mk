# Builds a Krun-style suite's C benchmarks (benchmarks/<name>/c/bench.c -> bench.so, exporting
# void run_iter(int), loaded by coldrun's c runner as Krun's was) on current toolchains:
#
#     make -f /path/to/coldrun/configs/krun-c-benchmarks.mk -C EXPERIMENT_DIR
#
# What Krun-era Makefiles (e.g. softdevteam/warmup_experiment's benchmarks/Makefile) need today:
#  - libraries after the sources: `cc -lm ... bench.c` links nothing from libm where gcc links with
#    --as-needed (Debian, Ubuntu), and the benchmark fails to load with "undefined symbol: pow";
#    --no-as-needed keeps libm even when only a later-loaded symbol needs it;
#  - -fgnu89-inline: these sources use gnu89 `inline` (a plain `inline` function with no extern
#    definition); under C99 rules (gcc's default since 5) no symbol is emitted ("undefined symbol: rnd").
# `coldrun check` names both when it loads such a benchmark.
CC ?= cc
CFLAGS ?= -O2 -Wall
KRUN_CFLAGS := -shared -fPIC -fgnu89-inline
LDLIBS ?= -Wl,--no-as-needed -lm

SOURCES := $(wildcard benchmarks/*/c/bench.c)
TARGETS := $(SOURCES:.c=.so)

all: $(TARGETS)

benchmarks/%/c/bench.so: benchmarks/%/c/bench.c
	$(CC) $(CFLAGS) $(KRUN_CFLAGS) -o $@ $< $(LDLIBS)

clean:
	rm -f $(TARGETS)

.PHONY: all clean
