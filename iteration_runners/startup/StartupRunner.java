// coldrun startup-time dummy runner for the JVM.
//
// The first statement of main reads System.nanoTime (CLOCK_MONOTONIC on
// Linux), which the startup wrapper also read before it exec'd the JVM; the
// rest reports both.  The benchmark is not loaded.  Java cannot write to an
// inherited descriptor by number, and reopening it as /dev/fd/N fails for a
// benchmark user (the pipe belongs to the supervisor: EACCES), so the document
// goes through the iterations runner's JNI glue, loaded after the clock read.

import java.nio.charset.StandardCharsets;

class StartupRunner {
    public static void main(String[] args) throws Exception {
        long t1 = System.nanoTime();
        if (args.length != 4) {
            System.err.println("usage: StartupRunner <benchmark> <iterations> <param> <debug 0|1>");
            System.exit(1);
        }
        String clock = "CLOCK_MONOTONIC";
        String wrapper = System.getenv("COLDRUN_STARTUP_" + clock);
        if (wrapper == null || wrapper.isEmpty()) {
            System.err.println("StartupRunner: COLDRUN_STARTUP_" + clock + " is unset: run me under startup_wrapper");
            System.exit(1);
        }
        String[] parts = wrapper.split("\\.");
        long t0 = Long.parseLong(parts[0]) * 1000000000L + Long.parseLong(parts[1]);
        double seconds = (t1 - t0) / 1e9;
        String runnerTime = String.format("%d.%09d", t1 / 1000000000L, t1 % 1000000000L);
        String doc = "{\"protocol_version\": 1, \"wallclock_times\": [" + seconds + "], "
            + "\"core_cycle_counts\": [], \"aperf_counts\": [], \"mperf_counts\": [], "
            + "\"counters\": {\"available\": false, \"reason\": \"startup-time mode reads no per-core counters\"}, "
            + "\"startup\": {\"clock\": \"" + clock + "\", \"wrapper_time\": \"" + wrapper + "\", "
            + "\"runner_time\": \"" + runnerTime + "\", \"seconds\": " + seconds + "}}";
        String fdEnv = System.getenv("COLDRUN_RESULTS_FD");
        IterationsRunner.loadGlue();
        IterationsRunner.writeDocument(fdEnv == null ? 3 : Integer.parseInt(fdEnv), doc);
    }
}
