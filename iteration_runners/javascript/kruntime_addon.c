/*
 * Node.js addon (N-API, plain C) exposing libkruntime to iterations_runner.js.
 *
 * Built by iteration_runners/languages.py with the system C compiler against
 * the Debian nodejs headers (/usr/include/node/node_api.h): no node-gyp, no
 * npm package, nothing downloaded.  N-API symbols resolve against the node
 * binary at load time; libkruntime is linked with an rpath.
 *
 * JavaScript numbers are doubles: 64-bit counter deltas are converted with
 * krun_u64_to_double, which exits with an error rather than round silently.
 */
#define NAPI_VERSION 6
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libkruntime.h"

/* A failing N-API call means a broken runner, not bad data: stop loudly. */
#define CHECK(call)                                                              \
    do {                                                                         \
        if ((call) != napi_ok) {                                                 \
            fprintf(stderr, "kruntime_addon: N-API call failed: %s\n", #call);   \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

static int32_t int_arg(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    int32_t v = -1;
    CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1 || napi_get_value_int32(env, argv[0], &v) != napi_ok) {
        napi_throw_type_error(env, NULL, "expected an integer argument");
        return -1;
    }
    return v;
}

static napi_value number(napi_env env, double d)
{
    napi_value out;
    CHECK(napi_create_double(env, d, &out));
    return out;
}

static napi_value js_init(napi_env env, napi_callback_info info)
{
    (void)env; (void)info;
    krun_init();
    return NULL;
}

static napi_value js_done(napi_env env, napi_callback_info info)
{
    (void)env; (void)info;
    krun_done();
    return NULL;
}

static napi_value js_measure(napi_env env, napi_callback_info info)
{
    int32_t idx = int_arg(env, info);
    krun_measure(idx);
    return NULL;
}

static napi_value js_timeline_reserve(napi_env env, napi_callback_info info)
{
    int32_t n = int_arg(env, info);
    krun_timeline_reserve(n);
    return NULL;
}

/* A string: JSON integers beyond 2^53 would not survive a JS number. */
static napi_value js_timeline_json(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value out;
    CHECK(napi_create_string_utf8(env, krun_timeline_json(), NAPI_AUTO_LENGTH, &out));
    return out;
}

static napi_value js_num_cores(napi_env env, napi_callback_info info)
{
    (void)info;
    return number(env, krun_get_num_cores());
}

static napi_value js_unavailable_reason(napi_env env, napi_callback_info info)
{
    (void)info;
    const char *reason = krun_counters_unavailable_reason();
    napi_value out;
    if (reason == NULL)
        CHECK(napi_get_null(env, &out));
    else
        CHECK(napi_create_string_utf8(env, reason, NAPI_AUTO_LENGTH, &out));
    return out;
}

static napi_value js_wallclock_delta_ns(napi_env env, napi_callback_info info)
{
    (void)info;
    int64_t ns = krun_wallclock_delta_ns();
    return number(env, krun_u64_to_double((uint64_t)ns));
}

static napi_value js_cycles_delta(napi_env env, napi_callback_info info)
{
    return number(env, krun_u64_to_double(krun_core_cycles_delta(int_arg(env, info))));
}

static napi_value js_aperf_delta(napi_env env, napi_callback_info info)
{
    return number(env, krun_u64_to_double(krun_aperf_delta(int_arg(env, info))));
}

static napi_value js_mperf_delta(napi_env env, napi_callback_info info)
{
    return number(env, krun_u64_to_double(krun_mperf_delta(int_arg(env, info))));
}

/*
 * The results channel must be a writable file, pipe, socket or device.  When
 * the supervisor did not pass fd 3 the VM may be using that number itself
 * (Node's event loop does), and taking it would break the VM.
 */
static int channel_error(int fd)
{
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fstat(fd, &st) != 0)
        return errno;
    if ((flags & O_ACCMODE) == O_RDONLY)
        return EBADF;
    if (!(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)))
        return EBADF;
    return 0;
}

/*
 * Move the results channel to a private close-on-exec descriptor (>= 10) so
 * the benchmark and its children cannot write to it; returns the new number.
 * Node's fs API cannot dup a descriptor, hence this function.
 */
static napi_value js_take_results_channel(napi_env env, napi_callback_info info)
{
    int32_t fd = int_arg(env, info);
    int err = channel_error(fd);
    int private_fd = err ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (private_fd < 0 || close(fd) != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "results channel fd %d is not open for writing: %s", (int)fd,
                 strerror(err ? err : errno));
        napi_throw_error(env, "ECOLDRUNCHANNEL", msg);
        return NULL;
    }
    return number(env, private_fd);
}

static napi_value init_module(napi_env env, napi_value exports)
{
    napi_property_descriptor props[] = {
        {"krun_init", NULL, js_init, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_done", NULL, js_done, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_measure", NULL, js_measure, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_get_num_cores", NULL, js_num_cores, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_timeline_reserve", NULL, js_timeline_reserve, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_timeline_json", NULL, js_timeline_json, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_counters_unavailable_reason", NULL, js_unavailable_reason, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_wallclock_delta_ns", NULL, js_wallclock_delta_ns, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_core_cycles_delta", NULL, js_cycles_delta, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_aperf_delta", NULL, js_aperf_delta, NULL, NULL, NULL, napi_enumerable, NULL},
        {"krun_mperf_delta", NULL, js_mperf_delta, NULL, NULL, NULL, napi_enumerable, NULL},
        {"take_results_channel", NULL, js_take_results_channel, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    CHECK(napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props));
    return exports;
}

NAPI_MODULE(kruntime_addon, init_module)
