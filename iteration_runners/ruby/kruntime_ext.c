/*
 * KrunExt: a compiled Ruby binding over libkruntime for the Ruby runner.
 *
 * Fiddle costs about 0.5 us per call (argument boxing through libffi), which
 * lands inside every measured iteration; a C method called from Ruby costs
 * tens of ns.  Built by `coldrun build-runners ruby` with plain cc.
 *
 * No ruby.h: the extension declares the few symbols of CRuby's public C API it
 * uses, so building needs neither Debian's ruby-dev nor mkmf.  They are ABI
 * stable across CRuby 2.x-3.x: VALUE is a pointer-sized word, a Fixnum is
 * (n << 1) | 1, and the functions below are exported by libruby.  Every method
 * returns a Fixnum, a String or an Integer object -- never Qnil or Qtrue,
 * whose encodings have changed between Ruby versions.
 */
#include "libkruntime.h"

#include <stdint.h>

typedef uintptr_t VALUE;

extern VALUE rb_eArgError;
VALUE rb_define_module(const char *name);
void rb_define_module_function(VALUE module, const char *name, VALUE (*func)(), int argc);
void rb_raise(VALUE exc, const char *fmt, ...) __attribute__((noreturn));
VALUE rb_str_new_cstr(const char *s);
VALUE rb_ll2inum(long long n);
VALUE rb_ull2inum(unsigned long long n);

#define FIX(n) ((VALUE)(((intptr_t)(n) << 1) | 1))
#define ZERO FIX(0)

/* Fixnum arguments only: indexes, cores and iteration counts are small. */
static long fixnum(VALUE v)
{
    if (!(v & 1))
        rb_raise(rb_eArgError, "KrunExt: expected an Integer that fits a Fixnum");
    return (long)((intptr_t)v >> 1);
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
    return FIX(krun_get_num_cores());
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
    rb_define_module_function(m, "init", (VALUE(*)())ext_init, 0);
    rb_define_module_function(m, "done", (VALUE(*)())ext_done, 0);
    rb_define_module_function(m, "measure", (VALUE(*)())ext_measure, 1);
    rb_define_module_function(m, "num_cores", (VALUE(*)())ext_num_cores, 0);
    rb_define_module_function(m, "unavailable_reason", (VALUE(*)())ext_unavailable_reason, 0);
    rb_define_module_function(m, "wallclock_delta_ns", (VALUE(*)())ext_wallclock_delta_ns, 0);
    rb_define_module_function(m, "cycles_delta", (VALUE(*)())ext_cycles_delta, 1);
    rb_define_module_function(m, "aperf_delta", (VALUE(*)())ext_aperf_delta, 1);
    rb_define_module_function(m, "mperf_delta", (VALUE(*)())ext_mperf_delta, 1);
    rb_define_module_function(m, "timeline_reserve", (VALUE(*)())ext_timeline_reserve, 1);
    rb_define_module_function(m, "timeline_json", (VALUE(*)())ext_timeline_json, 0);
}
