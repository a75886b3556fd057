/*
 * JNI glue between IterationsRunner.java and libkruntime.
 *
 * Kept out of libkruntime itself (Krun compiled its JNI wrappers into the
 * library with -DWITH_JAVA) so the library needs no JDK to build; this file
 * is compiled on demand by iteration_runners/languages.py and linked to
 * libkruntime.so with an rpath.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <jni.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libkruntime.h"

JNIEXPORT void JNICALL Java_IterationsRunner_krunInit(JNIEnv *env, jclass cls)
{
    (void)env; (void)cls;
    krun_init();
}

JNIEXPORT void JNICALL Java_IterationsRunner_krunDone(JNIEnv *env, jclass cls)
{
    (void)env; (void)cls;
    krun_done();
}

JNIEXPORT void JNICALL Java_IterationsRunner_krunMeasure(JNIEnv *env, jclass cls, jint idx)
{
    (void)env; (void)cls;
    krun_measure(idx);
}

JNIEXPORT jint JNICALL Java_IterationsRunner_krunGetNumCores(JNIEnv *env, jclass cls)
{
    (void)env; (void)cls;
    return krun_get_num_cores();
}

JNIEXPORT jstring JNICALL Java_IterationsRunner_krunCountersUnavailableReason(JNIEnv *env, jclass cls)
{
    (void)cls;
    const char *reason = krun_counters_unavailable_reason();
    return reason == NULL ? NULL : (*env)->NewStringUTF(env, reason);
}

JNIEXPORT void JNICALL Java_IterationsRunner_krunTimelineReserve(JNIEnv *env, jclass cls, jint iterations)
{
    (void)env; (void)cls;
    krun_timeline_reserve(iterations);
}

JNIEXPORT jstring JNICALL Java_IterationsRunner_krunTimelineJson(JNIEnv *env, jclass cls)
{
    (void)cls;
    return (*env)->NewStringUTF(env, krun_timeline_json());
}

JNIEXPORT jlong JNICALL Java_IterationsRunner_krunWallclockDeltaNs(JNIEnv *env, jclass cls)
{
    (void)env; (void)cls;
    return (jlong)krun_wallclock_delta_ns();
}

/* Deltas are unsigned 64-bit; Java keeps the bits and prints them unsigned. */
JNIEXPORT jlong JNICALL Java_IterationsRunner_krunCoreCyclesDelta(JNIEnv *env, jclass cls, jint core)
{
    (void)env; (void)cls;
    return (jlong)krun_core_cycles_delta(core);
}

JNIEXPORT jlong JNICALL Java_IterationsRunner_krunAperfDelta(JNIEnv *env, jclass cls, jint core)
{
    (void)env; (void)cls;
    return (jlong)krun_aperf_delta(core);
}

JNIEXPORT jlong JNICALL Java_IterationsRunner_krunMperfDelta(JNIEnv *env, jclass cls, jint core)
{
    (void)env; (void)cls;
    return (jlong)krun_mperf_delta(core);
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

static void throw_io(JNIEnv *env, int err, int fd)
{
    char msg[128];
    jclass ioe = (*env)->FindClass(env, "java/io/IOException");
    snprintf(msg, sizeof msg, "results channel fd %d is not open for writing: %s", fd, strerror(err));
    if (ioe != NULL)
        (*env)->ThrowNew(env, ioe, msg);
}

/*
 * Move the results channel to a private close-on-exec descriptor (>= 10) so
 * the benchmark and its children cannot write to it; returns the new number.
 */
JNIEXPORT jint JNICALL Java_IterationsRunner_takeResultsChannel(JNIEnv *env, jclass cls, jint fd)
{
    (void)cls;
    int err = channel_error(fd);
    int private_fd = err ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (private_fd < 0 || close(fd) != 0) {
        throw_io(env, err ? err : errno, fd);
        return -1;
    }
    return private_fd;
}

/* Java cannot write to an inherited descriptor by number; do it here. */
JNIEXPORT void JNICALL Java_IterationsRunner_writeAndClose(JNIEnv *env, jclass cls, jint fd, jbyteArray data)
{
    (void)cls;
    jsize len = (*env)->GetArrayLength(env, data);
    jbyte *buf = (*env)->GetByteArrayElements(env, data, NULL);
    if (buf == NULL)
        return; /* OutOfMemoryError already pending */
    jsize off = 0;
    int err = 0;
    while (off < len) {
        ssize_t n = write(fd, buf + off, (size_t)(len - off));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        off += (jsize)n;
    }
    (*env)->ReleaseByteArrayElements(env, data, buf, JNI_ABORT);
    if (err == 0 && close(fd) != 0)
        err = errno;
    if (err != 0)
        throw_io(env, err, fd);
}
