/*
 * coldrun_kruntime: a compiled PHP binding over libkruntime for the PHP runner.
 *
 * PHP's FFI costs about 100 ns a call, and two calls reach into every measured
 * iteration (the return from krun_measure(0), the way into krun_measure(1)).
 * These are plain internal functions with libkruntime's names, as Krun's
 * patched PHP had: known when the runner is compiled, each call is PHP's
 * cheapest (INIT_FCALL + DO_ICALL); a method of an internal class measured
 * ~10% more.  Built by `coldrun build-runners php` against the running PHP's
 * own headers (php-config --includes; Debian: php-dev); loaded with
 * `php -d extension=<absolute path>` by the runner command.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <php.h>

#include "libkruntime.h"

/* Unsigned counter deltas as PHP's signed int: one past ZEND_LONG_MAX reads negative, and the runner
 * refuses a negative delta rather than wrap it (as with FFI's uint64_t). */
#define RETURN_U64(v) RETURN_LONG((zend_long)(v))

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_void, 0, 0, IS_VOID, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_int_void, 0, 1, IS_VOID, 0)
    ZEND_ARG_TYPE_INFO(0, n, IS_LONG, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_long, 0, 0, IS_LONG, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_long_int, 0, 1, IS_LONG, 0)
    ZEND_ARG_TYPE_INFO(0, core, IS_LONG, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_string, 0, 0, IS_STRING, 0)
ZEND_END_ARG_INFO()
ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_nullable_string, 0, 0, IS_STRING, 1)
ZEND_END_ARG_INFO()

static zend_long one_long(INTERNAL_FUNCTION_PARAMETERS)
{
    zend_long n;
    ZEND_PARSE_PARAMETERS_START(1, 1)
        Z_PARAM_LONG(n)
    ZEND_PARSE_PARAMETERS_END_EX(return -1);
    (void)return_value;
    return n;
}

PHP_FUNCTION(krun_init)
{
    ZEND_PARSE_PARAMETERS_NONE();
    krun_init();
}

PHP_FUNCTION(krun_done)
{
    ZEND_PARSE_PARAMETERS_NONE();
    krun_done();
}

/* The timed region's edges: the argument is read, nothing else is done on either side of the call. */
PHP_FUNCTION(krun_measure)
{
    zend_long idx;
    ZEND_PARSE_PARAMETERS_START(1, 1)
        Z_PARAM_LONG(idx)
    ZEND_PARSE_PARAMETERS_END();
    krun_measure((int)idx);
}

PHP_FUNCTION(krun_get_num_cores)
{
    ZEND_PARSE_PARAMETERS_NONE();
    RETURN_LONG(krun_get_num_cores());
}

PHP_FUNCTION(krun_counters_unavailable_reason)
{
    ZEND_PARSE_PARAMETERS_NONE();
    const char *reason = krun_counters_unavailable_reason();
    if (reason == NULL)
        RETURN_NULL();
    RETURN_STRING(reason);
}

PHP_FUNCTION(krun_wallclock_delta_ns)
{
    ZEND_PARSE_PARAMETERS_NONE();
    RETURN_LONG((zend_long)krun_wallclock_delta_ns());
}

/* Each per-core counter delta: the core's index in, the delta out. */
#define COUNTER_DELTA(fn)                                                \
    PHP_FUNCTION(fn)                                                     \
    {                                                                    \
        zend_long core = one_long(INTERNAL_FUNCTION_PARAM_PASSTHRU);     \
        if (EG(exception))                                               \
            return;                                                      \
        RETURN_U64(fn((int)core));                                       \
    }

COUNTER_DELTA(krun_core_cycles_delta)
COUNTER_DELTA(krun_aperf_delta)
COUNTER_DELTA(krun_mperf_delta)

PHP_FUNCTION(krun_timeline_reserve)
{
    zend_long n = one_long(INTERNAL_FUNCTION_PARAM_PASSTHRU);
    if (EG(exception))
        return;
    krun_timeline_reserve((long)n);
}

PHP_FUNCTION(krun_timeline_json)
{
    ZEND_PARSE_PARAMETERS_NONE();
    RETURN_STRING(krun_timeline_json());
}

static const zend_function_entry kruntime_functions[] = {
    PHP_FE(krun_init, arginfo_void)
    PHP_FE(krun_done, arginfo_void)
    PHP_FE(krun_measure, arginfo_int_void)
    PHP_FE(krun_get_num_cores, arginfo_long)
    PHP_FE(krun_counters_unavailable_reason, arginfo_nullable_string)
    PHP_FE(krun_wallclock_delta_ns, arginfo_long)
    PHP_FE(krun_core_cycles_delta, arginfo_long_int)
    PHP_FE(krun_aperf_delta, arginfo_long_int)
    PHP_FE(krun_mperf_delta, arginfo_long_int)
    PHP_FE(krun_timeline_reserve, arginfo_int_void)
    PHP_FE(krun_timeline_json, arginfo_string)
    PHP_FE_END
};

zend_module_entry coldrun_kruntime_module_entry = {
    STANDARD_MODULE_HEADER,
    "coldrun_kruntime",
    kruntime_functions,
    NULL, NULL, NULL, NULL, NULL,
    "1",
    STANDARD_MODULE_PROPERTIES
};

ZEND_GET_MODULE(coldrun_kruntime)
