/* The real clock and counter sources behind libkruntime (see sources.c). */
#ifndef LIBKRUNTIME_SOURCES_H
#define LIBKRUNTIME_SOURCES_H

#include "libkruntime.h"

const struct krun_source *krun_real_source(void);
const char *krun_real_source_name(void);
int64_t krun_real_clock_ns(void);
/* Exposed for tests: parse "0-3,6" into CPU ids; count, or -1 if malformed. */
int krun_parse_cpu_list(const char *text, int *ids, int max);

#endif
