/*
 * KrunExt: a compiled Ruby binding over libkruntime for the Ruby runner.
 *
 * Fiddle costs about 0.5 us per call (argument boxing through libffi), which
 * lands inside every measured iteration; a C method called from Ruby costs
 * tens of ns.  Built by `coldrun build-runners ruby` with plain cc.
 *
 * Built against the running Ruby's own headers (ruby.h from Debian's
 * ruby-dev; the include directories come from RbConfig), so the value
 * encodings are the interpreter's, not assumed.
 */
#include <ruby.h>

#include "libkruntime.h"

#define ZERO INT2FIX(0)

/* Fixnum arguments only: indexes, cores and iteration counts are small. */
static long fixnum(VALUE v)
{
    if (!FIXNUM_P(v))
        rb_raise(rb_eArgError, "KrunExt: expected an Integer that fits a Fixnum");
    return FIX2LONG(v);
}

static VALUE ext_init(VALUE self)
{
    (void)self;
    krun_init();
    return ZERO;
}

static VALUE ext_done(VALUE self)
{
    (void)self;
    krun_done();
    return ZERO;
}

static VALUE ext_measure(VALUE self, VALUE idx)
{
    (void)self;
    krun_measure((int)fixnum(idx));
    return ZERO;
}

static VALUE ext_num_cores(VALUE self)
{
    (void)self;
    return INT2FIX(krun_get_num_cores());
}

/* "" when counters are available (the runner asks only when they are not). */
static VALUE ext_unavailable_reason(VALUE self)
{
    (void)self;
    const char *reason = krun_counters_unavailable_reason();
    return rb_str_new_cstr(reason ? reason : "");
}

static VALUE ext_wallclock_delta_ns(VALUE self)
{
    (void)self;
    return rb_ll2inum(krun_wallclock_delta_ns());
}

static VALUE ext_cycles_delta(VALUE self, VALUE core)
{
    (void)self;
    return rb_ull2inum(krun_core_cycles_delta((int)fixnum(core)));
}

static VALUE ext_aperf_delta(VALUE self, VALUE core)
{
    (void)self;
    return rb_ull2inum(krun_aperf_delta((int)fixnum(core)));
}

static VALUE ext_mperf_delta(VALUE self, VALUE core)
{
    (void)self;
    return rb_ull2inum(krun_mperf_delta((int)fixnum(core)));
}

static VALUE ext_timeline_reserve(VALUE self, VALUE n)
{
    (void)self;
    krun_timeline_reserve(fixnum(n));
    return ZERO;
}

static VALUE ext_timeline_json(VALUE self)
{
    (void)self;
    return rb_str_new_cstr(krun_timeline_json());
}

void Init_kruntime_ext(void)
{
    VALUE m = rb_define_module("KrunExt");
    rb_define_module_function(m, "init", (VALUE(*)(ANYARGS))ext_init, 0);
    rb_define_module_function(m, "done", (VALUE(*)(ANYARGS))ext_done, 0);
    rb_define_module_function(m, "measure", (VALUE(*)(ANYARGS))ext_measure, 1);
    rb_define_module_function(m, "num_cores", (VALUE(*)(ANYARGS))ext_num_cores, 0);
    rb_define_module_function(m, "unavailable_reason", (VALUE(*)(ANYARGS))ext_unavailable_reason, 0);
    rb_define_module_function(m, "wallclock_delta_ns", (VALUE(*)(ANYARGS))ext_wallclock_delta_ns, 0);
    rb_define_module_function(m, "cycles_delta", (VALUE(*)(ANYARGS))ext_cycles_delta, 1);
    rb_define_module_function(m, "aperf_delta", (VALUE(*)(ANYARGS))ext_aperf_delta, 1);
    rb_define_module_function(m, "mperf_delta", (VALUE(*)(ANYARGS))ext_mperf_delta, 1);
    rb_define_module_function(m, "timeline_reserve", (VALUE(*)(ANYARGS))ext_timeline_reserve, 1);
    rb_define_module_function(m, "timeline_json", (VALUE(*)(ANYARGS))ext_timeline_json, 0);
}
