<?php
// coldrun iteration runner for PHP (php-cli; the compiled binding, else the FFI extension).
//
// usage: php [-d extension=kruntime_php.so] iterations_runner.php <benchmark.php> <iterations> <param> <debug 0|1>
//
// Loads the benchmark as Krun did (include; it defines a function run_iter),
// measures each in-process iteration with libkruntime, keeps results in
// preallocated arrays and writes one protocol-1 JSON document to the results
// fd (iteration_runners/PROTOCOL.md).  libkruntime is reached through the
// compiled binding's functions (kruntime_php.c, built by `coldrun build-runners
// php`, loaded by the runner command), which cost what Krun's patched PHP's
// functions did; without it, through PHP's FFI extension (on by default for the
// CLI: ffi.enable=preload), wrapped in PHP functions of the same names, so the
// measured loop is the same code either way (the fallback costs ~150 ns more).
//
// PHP integers are signed 64-bit: an unsigned counter delta that does not fit
// is an error, never silently wrapped.
//
// With COLDRUN_LOAD_ONLY=1 it stops once the benchmark is included and its
// run_iter found, and writes the load-only document.  A benchmark failure ends
// with one "iterations_runner.php: error:" line in PHP's words.
//
// Exit status (PROTOCOL.md): 0 document written; 1 the benchmark failed;
// 2 bad usage or setup; 3 the results channel failed.

// The CLI prints errors to stdout by default; they belong with the other diagnostics.
ini_set("display_errors", "stderr");
error_reporting(E_ALL);

const BM_EXIT_BENCHMARK_FAILED = 1;
const BM_EXIT_USAGE = 2;
const BM_EXIT_CHANNEL = 3;

function BM_fail($message, $status) {
    fwrite(STDERR, "iterations_runner.php: error: $message\n");
    exit($status);
}

if ($argc != 5) {
    BM_fail("expected 4 arguments, got " . ($argc - 1) .
            "\nusage: iterations_runner.php <benchmark> <iterations> <param> <debug 0|1>", BM_EXIT_USAGE);
}
$BM_benchmark = $argv[1];
if (!ctype_digit($argv[2]) || !preg_match('/^-?[0-9]+$/', $argv[3])) {
    BM_fail("iterations and param must be integers", BM_EXIT_USAGE);
}
$BM_iters = (int) $argv[2];
$BM_param = (int) $argv[3];
if ($BM_iters < 1) {
    BM_fail("iterations must be at least 1", BM_EXIT_USAGE);
}
if ($argv[4] !== "0" && $argv[4] !== "1") {
    BM_fail("debug flag must be 0 or 1", BM_EXIT_USAGE);
}
$BM_debug = $argv[4] === "1";
// Which binding reaches libkruntime: the compiled one when the runner command loaded it, else FFI.
$BM_binding = function_exists("krun_measure") ? "the compiled binding (kruntime_php.so)" : "FFI";

// libc through FFI: PHP cannot dup or write an inherited descriptor by number.
// F_DUPFD_CLOEXEC differs per OS: Linux 1030, OpenBSD 10.
$BM_libc = FFI::cdef("
    int fcntl(int fd, int cmd, ...);
    int close(int fd);
    long write(int fd, const char *buf, size_t count);
");
$BM_F_DUPFD_CLOEXEC = PHP_OS_FAMILY === "Linux" ? 1030 : 10;

// Move the results channel to a private close-on-exec descriptor, so the
// benchmark and its children cannot write to it.
$BM_fd = (int) (getenv("COLDRUN_RESULTS_FD") ?: "3");
$BM_results_fd = $BM_libc->fcntl($BM_fd, $BM_F_DUPFD_CLOEXEC, 10);
if ($BM_results_fd < 0 || $BM_libc->close($BM_fd) != 0) {
    BM_fail("results channel fd $BM_fd is not open (see PROTOCOL.md)", BM_EXIT_USAGE);
}

if (!function_exists("krun_measure")) {
    try {
        $BM_kr = FFI::cdef("
        void krun_init(void);
        void krun_done(void);
        void krun_measure(int mdata_idx);
        int krun_get_num_cores(void);
        const char *krun_counters_unavailable_reason(void);
        int64_t krun_wallclock_delta_ns(void);
        uint64_t krun_core_cycles_delta(int core);
        uint64_t krun_aperf_delta(int core);
        uint64_t krun_mperf_delta(int core);
        void krun_timeline_reserve(long iterations);
        const char *krun_timeline_json(void);
        ", getenv("COLDRUN_LIBKRUNTIME") ?: "libkruntime.so");
    } catch (FFI\Exception $e) {
        BM_fail("cannot load libkruntime: " . $e->getMessage(), BM_EXIT_USAGE);
    }
    // The compiled binding's functions, through FFI (FFI returns const char * as a string, NULL as null).
    function krun_init() { global $BM_kr; $BM_kr->krun_init(); }
    function krun_done() { global $BM_kr; $BM_kr->krun_done(); }
    function krun_measure($i) { global $BM_kr; $BM_kr->krun_measure($i); }
    function krun_get_num_cores() { global $BM_kr; return $BM_kr->krun_get_num_cores(); }
    function krun_counters_unavailable_reason() { global $BM_kr; return $BM_kr->krun_counters_unavailable_reason(); }
    function krun_wallclock_delta_ns() { global $BM_kr; return $BM_kr->krun_wallclock_delta_ns(); }
    function krun_core_cycles_delta($c) { global $BM_kr; return $BM_kr->krun_core_cycles_delta($c); }
    function krun_aperf_delta($c) { global $BM_kr; return $BM_kr->krun_aperf_delta($c); }
    function krun_mperf_delta($c) { global $BM_kr; return $BM_kr->krun_mperf_delta($c); }
    function krun_timeline_reserve($n) { global $BM_kr; $BM_kr->krun_timeline_reserve($n); }
    function krun_timeline_json() { global $BM_kr; return $BM_kr->krun_timeline_json(); }
}

if (!is_file($BM_benchmark)) {
    BM_fail("benchmark $BM_benchmark does not exist", BM_EXIT_USAGE);
}

// PHP exits 255 on an uncaught exception; the protocol says 1, with the trace on stderr
// and the error itself on the last line.
function BM_benchmark_failed(Throwable $e) {
    fwrite(STDERR, $e . "\n");
    BM_fail("the benchmark failed: " . get_class($e) . ": " . strtok($e->getMessage(), "\n") . " in " .
            basename($e->getFile()) . ":" . $e->getLine(), BM_EXIT_BENCHMARK_FAILED);
}

// A fatal error (out of memory, time limit) is no Throwable: say it in PHP's words as the last line.
register_shutdown_function(function () {
    $e = error_get_last();
    if ($e !== null && ($e["type"] & (E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR))) {
        fwrite(STDERR, "iterations_runner.php: error: the benchmark failed: PHP Fatal error: " .
               strtok($e["message"], "\n") . " in " . basename($e["file"]) . ":" . $e["line"] . "\n");
    }
});

function BM_write_document($doc) {
    global $BM_libc, $BM_results_fd;
    $off = 0;
    $len = strlen($doc);
    while ($off < $len) {
        $n = $BM_libc->write($BM_results_fd, substr($doc, $off), $len - $off);
        if ($n <= 0) {
            BM_fail("writing the results document to fd $BM_results_fd failed", BM_EXIT_CHANNEL);
        }
        $off += $n;
    }
    if ($BM_libc->close($BM_results_fd) != 0) {
        BM_fail("closing the results channel failed", BM_EXIT_CHANNEL);
    }
}

try {
    include($BM_benchmark);
} catch (Throwable $e) {
    BM_benchmark_failed($e);
}
if (!function_exists("run_iter")) {
    // php-cli's short_open_tag is off (Debian): a file opening with "<?" is plain text, not code.
    $BM_head = (string) file_get_contents($BM_benchmark, false, null, 0, 16);
    $BM_short = preg_match('/^\s*<\?(?!php|=)/i', $BM_head) && !ini_get("short_open_tag");
    BM_fail("benchmark $BM_benchmark does not define a run_iter function" . ($BM_short
            ? "; it opens with the short tag \"<?\" and short_open_tag is off in this php: write \"<?php\" " .
              "or add \"-d\", \"short_open_tag=1\" to the VM's args" : ""), BM_EXIT_USAGE);
}
if (getenv("COLDRUN_LOAD_ONLY") === "1") {
    BM_write_document('{"protocol_version": 1, "load_only": true}');
    exit(0);
}

function BM_check_u64($value, $what) {
    if ($value < 0) {
        fwrite(STDERR, "iterations_runner.php: error: $what delta exceeds PHP_INT_MAX; refusing to wrap it\n");
        exit(BM_EXIT_BENCHMARK_FAILED);
    }
    return $value;
}

if ($BM_debug) {
    fwrite(STDERR, "[iterations_runner.php] libkruntime via $BM_binding\n");
}
krun_init();
$BM_num_cores = krun_get_num_cores();
$BM_reason = null;
if ($BM_num_cores == 0) {
    $BM_reason = krun_counters_unavailable_reason() ?? "unknown";
}

// Preallocated storage, filled in place by the loop.
$BM_wallclock_ns = array_fill(0, $BM_iters, 0);
$BM_cycles = array();
$BM_aperf = array();
$BM_mperf = array();
for ($BM_core = 0; $BM_core < $BM_num_cores; $BM_core++) {
    $BM_cycles[$BM_core] = array_fill(0, $BM_iters, 0);
    $BM_aperf[$BM_core] = array_fill(0, $BM_iters, 0);
    $BM_mperf[$BM_core] = array_fill(0, $BM_iters, 0);
}

krun_timeline_reserve($BM_iters);
try {
for ($BM_i = 0; $BM_i < $BM_iters; $BM_i++) {
    if ($BM_debug) {
        fprintf(STDERR, "[iterations_runner.php] iteration %d/%d\n", $BM_i + 1, $BM_iters);
    }
    krun_measure(0);
    run_iter($BM_param);
    krun_measure(1);
    $BM_wallclock_ns[$BM_i] = krun_wallclock_delta_ns();
    for ($BM_core = 0; $BM_core < $BM_num_cores; $BM_core++) {
        $BM_cycles[$BM_core][$BM_i] = BM_check_u64(krun_core_cycles_delta($BM_core), "core cycles");
        $BM_aperf[$BM_core][$BM_i] = BM_check_u64(krun_aperf_delta($BM_core), "APERF");
        $BM_mperf[$BM_core][$BM_i] = BM_check_u64(krun_mperf_delta($BM_core), "MPERF");
    }
}
} catch (Throwable $e) {
    BM_benchmark_failed($e);
}

krun_done();
// Iteration start/end (and barrier waits): exact integers, spliced in as text.
$BM_timeline = krun_timeline_json();

$BM_walls = array();
foreach ($BM_wallclock_ns as $BM_ns) {
    $BM_walls[] = $BM_ns / 1e9;
}
ini_set("serialize_precision", "-1"); // shortest repr that round-trips
$BM_doc = json_encode(array(
    "protocol_version" => 1,
    "wallclock_times" => $BM_walls,
    "core_cycle_counts" => $BM_cycles,
    "aperf_counts" => $BM_aperf,
    "mperf_counts" => $BM_mperf,
    "counters" => array("available" => $BM_num_cores > 0, "reason" => $BM_reason),
), JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION);
if ($BM_timeline !== "") {
    $BM_doc = substr($BM_doc, 0, -1) . ", " . $BM_timeline . "}";
}

BM_write_document($BM_doc);
