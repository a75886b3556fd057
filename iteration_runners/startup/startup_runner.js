const T1 = process.hrtime.bigint();
// coldrun startup-time dummy runner for Node.js.
//
// The first line reads CLOCK_MONOTONIC (libuv's hrtime), which the startup
// wrapper also read before it exec'd node; the rest reports both.  The
// benchmark is not loaded.
"use strict";
const fs = require("fs");

if (process.argv.length !== 6) {
    process.stderr.write("usage: startup_runner.js <benchmark> <iterations> <param> <debug 0|1>\n");
    process.exit(1);
}
const clock = "CLOCK_MONOTONIC";
const wrapper = process.env["COLDRUN_STARTUP_" + clock];
if (!wrapper) {
    process.stderr.write("startup_runner.js: COLDRUN_STARTUP_" + clock + " is unset: run me under startup_wrapper\n");
    process.exit(1);
}
const [sec0, nsec0] = wrapper.split(".");
const t0 = BigInt(sec0) * 1000000000n + BigInt(nsec0);
const seconds = Number(T1 - t0) / 1e9;
const runnerTime = (T1 / 1000000000n).toString() + "." + (T1 % 1000000000n).toString().padStart(9, "0");
const doc = JSON.stringify({
    protocol_version: 1,
    wallclock_times: [seconds],
    core_cycle_counts: [],
    aperf_counts: [],
    mperf_counts: [],
    counters: { available: false, reason: "startup-time mode reads no per-core counters" },
    startup: { clock: clock, wrapper_time: wrapper, runner_time: runnerTime, seconds: seconds },
});
const fd = parseInt(process.env.COLDRUN_RESULTS_FD || "3", 10);
const buf = Buffer.from(doc, "utf8");
let off = 0;
while (off < buf.length) {
    off += fs.writeSync(fd, buf, off, buf.length - off);
}
fs.closeSync(fd);
