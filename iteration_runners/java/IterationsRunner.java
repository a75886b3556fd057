// coldrun iteration runner for the JVM.
//
// usage: java IterationsRunner <benchmark class> <iterations> <param> <debug 0|1>
// (CLASSPATH holds this runner's class directory and the benchmark's.)
//
// As with Krun, a benchmark is a class implementing BaseKrunEntry; it is
// loaded, initialised and instantiated before timing starts.  Each iteration
// is measured with libkruntime through JNI (System.nanoTime is
// CLOCK_MONOTONIC, not CLOCK_MONOTONIC_RAW, and has no counters).  Results
// go to preallocated arrays and one protocol-1 JSON document is written to
// the results fd at the end (iteration_runners/PROTOCOL.md).
//
// COLDRUN_INSTRUMENT=1 also records, after each iteration (outside the timed
// region), the JIT's cumulative compilation time and every garbage
// collector's cumulative time and count, into "instrumentation".
//
// With COLDRUN_LOAD_ONLY=1 it stops once the benchmark class is loaded,
// initialised and instantiated, and writes the load-only document.  A
// benchmark that throws ends with one "IterationsRunner: error:" line naming
// the exception and its root cause (the stack trace above it).
//
// Exit status (PROTOCOL.md): 0 document written; 1 the benchmark threw;
// 2 bad usage or setup; 3 the results channel failed.

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.util.List;

// Krun's benchmark entry point interface: existing Krun suites implement it.
interface BaseKrunEntry {
    public abstract void run_iter(int param);
}

class IterationsRunner {
    static final int EXIT_BENCHMARK_FAILED = 1;
    static final int EXIT_USAGE = 2;
    static final int EXIT_CHANNEL = 3;

    static void fail(String message, int status) {
        System.err.println("IterationsRunner: error: " + message);
        System.exit(status);
    }

    // Loaded from main, not a static initialiser, so a failure is a one-line
    // setup error (exit 2) rather than an ExceptionInInitializerError.
    static void loadGlue() {
        String jni = System.getenv("COLDRUN_KRUN_JNI");
        try {
            if (jni != null && !jni.isEmpty()) {
                System.load(jni);
            } else {
                System.loadLibrary("coldrun_krun_jni");
            }
        } catch (UnsatisfiedLinkError e) {
            fail("cannot load the libkruntime JNI glue: " + e.getMessage(), EXIT_USAGE);
        }
    }

    static native void krunInit();
    static native void krunDone();
    static native void krunMeasure(int mdataIdx);
    static native int krunGetNumCores();
    static native String krunCountersUnavailableReason();
    static native long krunWallclockDeltaNs();
    static native void krunTimelineReserve(int iterations);
    static native String krunTimelineJson();
    static native long krunCoreCyclesDelta(int core);
    static native long krunAperfDelta(int core);
    static native long krunMperfDelta(int core);
    static native int takeResultsChannel(int fd) throws java.io.IOException;
    static native void writeAndClose(int fd, byte[] data) throws java.io.IOException;

    static String jsonString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\' || c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static void appendPerCore(StringBuilder b, long[][] perCore) {
        b.append('[');
        for (int core = 0; core < perCore.length; core++) {
            if (core > 0) b.append(", ");
            b.append('[');
            for (int i = 0; i < perCore[core].length; i++) {
                if (i > 0) b.append(", ");
                b.append(Long.toUnsignedString(perCore[core][i]));
            }
            b.append(']');
        }
        b.append(']');
    }

    static void appendLongs(StringBuilder b, long[] values) {
        b.append('[');
        for (int i = 0; i < values.length; i++) {
            if (i > 0) b.append(", ");
            b.append(values[i]);
        }
        b.append(']');
    }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            fail("the benchmark threw " + e + (root != e ? " (caused by " + root + ")" : ""),
                 EXIT_BENCHMARK_FAILED);
        }
    }

    static void run(String[] args) throws Exception {
        if (args.length != 4) {
            fail("expected 4 arguments\nusage: IterationsRunner <benchmark class> <iterations> <param> <debug 0|1>",
                 EXIT_USAGE);
        }
        String benchmark = args[0];
        int iterations = 0, param = 0;
        try {
            iterations = Integer.parseInt(args[1]);
            param = Integer.parseInt(args[2]);
        } catch (NumberFormatException e) {
            fail("iterations and param must be integers", EXIT_USAGE);
        }
        if (iterations < 1) {
            fail("iterations must be at least 1", EXIT_USAGE);
        }
        if (!args[3].equals("0") && !args[3].equals("1")) {
            fail("debug flag must be 0 or 1", EXIT_USAGE);
        }
        boolean debug = args[3].equals("1");
        boolean instrument = "1".equals(System.getenv("COLDRUN_INSTRUMENT"));
        String fdEnv = System.getenv("COLDRUN_RESULTS_FD");
        int resultsFd = fdEnv == null ? 3 : Integer.parseInt(fdEnv);

        loadGlue();
        try {
            resultsFd = takeResultsChannel(resultsFd);
        } catch (java.io.IOException e) {
            fail(e.getMessage() + " (see PROTOCOL.md)", EXIT_USAGE);
        }

        // Load, initialise and instantiate the benchmark eagerly: class loading
        // and static initialisers must not land in the first timed iteration.
        // Errors thrown by the benchmark's own code propagate (exit 1).
        Class<?> cls = null;
        try {
            cls = Class.forName(benchmark, true, IterationsRunner.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            fail("benchmark class " + benchmark + " not found on CLASSPATH " + System.getenv("CLASSPATH"),
                 EXIT_USAGE);
        }
        if (!BaseKrunEntry.class.isAssignableFrom(cls)) {
            fail("benchmark class " + benchmark + " does not implement BaseKrunEntry", EXIT_USAGE);
        }
        Constructor<?> ctor = null;
        try {
            ctor = cls.getDeclaredConstructor();
        } catch (NoSuchMethodException e) {
            fail("benchmark class " + benchmark + " has no no-argument constructor", EXIT_USAGE);
        }
        ctor.setAccessible(true);
        BaseKrunEntry entry;
        try {
            entry = (BaseKrunEntry) ctor.newInstance();
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw new RuntimeException("benchmark constructor failed", e.getCause());
        }
        if ("1".equals(System.getenv("COLDRUN_LOAD_ONLY"))) {
            writeDocument(resultsFd, "{\"protocol_version\": 1, \"load_only\": true}");
            return;
        }

        krunInit();
        int numCores = krunGetNumCores();
        String reason = numCores == 0 ? krunCountersUnavailableReason() : null;

        long[] wallNs = new long[iterations];
        long[][] cycles = new long[numCores][iterations];
        long[][] aperf = new long[numCores][iterations];
        long[][] mperf = new long[numCores][iterations];

        CompilationMXBean comp = null;
        List<GarbageCollectorMXBean> gcs = null;
        long[] compMs = null;
        long[][] gcTimeMs = null, gcCount = null;
        if (instrument) {
            comp = ManagementFactory.getCompilationMXBean();
            gcs = ManagementFactory.getGarbageCollectorMXBeans();
            compMs = new long[iterations];
            gcTimeMs = new long[gcs.size()][iterations];
            gcCount = new long[gcs.size()][iterations];
        }

        krunTimelineReserve(iterations);
        for (int i = 0; i < iterations; i++) {
            if (debug) {
                System.err.println("[IterationsRunner] iteration " + (i + 1) + "/" + iterations);
            }
            krunMeasure(0);
            entry.run_iter(param);
            krunMeasure(1);
            wallNs[i] = krunWallclockDeltaNs();
            for (int core = 0; core < numCores; core++) {
                cycles[core][i] = krunCoreCyclesDelta(core);
                aperf[core][i] = krunAperfDelta(core);
                mperf[core][i] = krunMperfDelta(core);
            }
            if (instrument) {
                compMs[i] = comp != null && comp.isCompilationTimeMonitoringSupported()
                        ? comp.getTotalCompilationTime() : -1;
                for (int g = 0; g < gcs.size(); g++) {
                    gcTimeMs[g][i] = gcs.get(g).getCollectionTime();
                    gcCount[g][i] = gcs.get(g).getCollectionCount();
                }
            }
        }

        krunDone();
        String timeline = krunTimelineJson(); // iteration start/end (and barrier waits), exact ints

        StringBuilder b = new StringBuilder();
        b.append("{\"protocol_version\": 1, \"wallclock_times\": [");
        for (int i = 0; i < iterations; i++) {
            if (i > 0) b.append(", ");
            b.append(Double.toString(wallNs[i] / 1e9));
        }
        b.append("], \"core_cycle_counts\": ");
        appendPerCore(b, cycles);
        b.append(", \"aperf_counts\": ");
        appendPerCore(b, aperf);
        b.append(", \"mperf_counts\": ");
        appendPerCore(b, mperf);
        if (!timeline.isEmpty()) b.append(", ").append(timeline);
        b.append(", \"counters\": {\"available\": ").append(numCores > 0);
        b.append(", \"reason\": ").append(reason == null ? "null" : jsonString(reason)).append('}');
        if (instrument) {
            b.append(", \"instrumentation\": {\"vm\": \"jvm\", \"jit\": ")
             .append(jsonString(comp == null ? "none" : comp.getName()))
             .append(", \"cumulative_compilation_time_ms\": ");
            appendLongs(b, compMs);
            b.append(", \"collectors\": [");
            for (int g = 0; g < gcs.size(); g++) {
                GarbageCollectorMXBean gc = gcs.get(g);
                if (g > 0) b.append(", ");
                b.append("{\"name\": ").append(jsonString(gc.getName())).append(", \"pools\": [");
                String[] pools = gc.getMemoryPoolNames();
                for (int p = 0; p < pools.length; p++) {
                    if (p > 0) b.append(", ");
                    b.append(jsonString(pools[p]));
                }
                b.append("], \"cumulative_collection_time_ms\": ");
                appendLongs(b, gcTimeMs[g]);
                b.append(", \"cumulative_collection_count\": ");
                appendLongs(b, gcCount[g]);
                b.append('}');
            }
            b.append("]}");
        }
        b.append('}');
        writeDocument(resultsFd, b.toString());
    }

    static void writeDocument(int fd, String doc) {
        try {
            writeAndClose(fd, doc.getBytes(StandardCharsets.UTF_8));
        } catch (java.io.IOException e) {
            fail("writing the results document failed: " + e.getMessage(), EXIT_CHANNEL);
        }
    }
}
