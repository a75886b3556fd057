<?php $BM_T1 = hrtime(true);
// coldrun startup-time dummy runner for PHP.
//
// The first line reads CLOCK_MONOTONIC (PHP's hrtime), which the startup
// wrapper also read before it exec'd php; the rest reports both.  The
// benchmark is not loaded.
ini_set("display_errors", "stderr");

if ($argc != 5) {
    fwrite(STDERR, "usage: startup_runner.php <benchmark> <iterations> <param> <debug 0|1>\n");
    exit(1);
}
$clock = "CLOCK_MONOTONIC";
$wrapper = getenv("COLDRUN_STARTUP_$clock");
if ($wrapper === false || $wrapper === "") {
    fwrite(STDERR, "startup_runner.php: COLDRUN_STARTUP_$clock is unset: run me under startup_wrapper\n");
    exit(1);
}
list($sec0, $nsec0) = explode(".", $wrapper);
$t0 = ((int) $sec0) * 1000000000 + (int) $nsec0;
$seconds = ($BM_T1 - $t0) / 1e9;
ini_set("serialize_precision", "-1");
$doc = json_encode(array(
    "protocol_version" => 1,
    "wallclock_times" => array($seconds),
    "core_cycle_counts" => array(),
    "aperf_counts" => array(),
    "mperf_counts" => array(),
    "counters" => array("available" => false, "reason" => "startup-time mode reads no per-core counters"),
    "startup" => array(
        "clock" => $clock,
        "wrapper_time" => $wrapper,
        "runner_time" => sprintf("%d.%09d", intdiv($BM_T1, 1000000000), $BM_T1 % 1000000000),
        "seconds" => $seconds,
    ),
), JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION);
$fd = (int) (getenv("COLDRUN_RESULTS_FD") ?: "3");
$out = fopen("php://fd/$fd", "w");
if ($out === false || fwrite($out, $doc) !== strlen($doc) || !fclose($out)) {
    fwrite(STDERR, "startup_runner.php: writing the results document to fd $fd failed\n");
    exit(1);
}
