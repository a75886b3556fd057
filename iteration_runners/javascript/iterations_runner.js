// coldrun iteration runner for Node.js.
//
// usage: node iterations_runner.js <benchmark.js> <iterations> <param> <debug 0|1>
//
// Krun's JS benchmarks are d8-style scripts that define a global run_iter;
// the runner evaluates the file in the global context (vm.runInThisContext,
// the equivalent of d8's load()), measures each in-process iteration with
// libkruntime through a small N-API addon (kruntime_addon.c, path in
// COLDRUN_KRUN_NODE_ADDON), keeps results in preallocated typed arrays and
// writes one protocol-1 JSON document to the results fd (PROTOCOL.md).
//
// With COLDRUN_LOAD_ONLY=1 it stops once the benchmark is evaluated and its
// run_iter found, and writes the load-only document.  A benchmark that throws
// ends with one "iterations_runner.js: error:" line naming the exception.
//
// Exit status: 0 document written; 1 the benchmark threw; 2 bad usage or
// setup; 3 the results channel failed.
"use strict";

const fs = require("fs");
const vm = require("vm");

const EXIT_BENCHMARK_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_CHANNEL = 3;
const USAGE = "usage: iterations_runner.js <benchmark> <iterations> <param> <debug 0|1>";

function fail(message, status) {
    process.stderr.write("iterations_runner.js: error: " + message + "\n");
    process.exit(status);
}

// The stack for the reader, then the exception's own first line (e.g. "TypeError: x is not a function").
function benchmarkFailed(e) {
    const said = e instanceof Error ? (e.stack || String(e)) : "uncaught " + String(e);
    process.stderr.write(said + "\n");
    const first = e instanceof Error ? e.name + ": " + e.message : "threw " + String(e);
    fail("the benchmark failed: " + first.split("\n")[0], EXIT_BENCHMARK_FAILED);
}

function writeDocument(doc) {
    try {
        const buf = Buffer.from(doc, "utf8");
        let off = 0;
        while (off < buf.length) {
            off += fs.writeSync(BM_results_fd, buf, off, buf.length - off);
        }
        fs.closeSync(BM_results_fd);
    } catch (e) {
        fail("writing the results document failed: " + e.message, EXIT_CHANNEL);
    }
}

const args = process.argv.slice(2);
if (args.length !== 4) {
    fail("expected 4 arguments, got " + args.length + "\n" + USAGE, EXIT_USAGE);
}
const BM_benchmark = args[0];
const BM_n_iters = parseInt(args[1], 10);
const BM_param = parseInt(args[2], 10);
if (!(BM_n_iters >= 1) || Number.isNaN(BM_param)) {
    fail("iterations must be an integer >= 1 and param an integer\n" + USAGE, EXIT_USAGE);
}
if (args[3] !== "0" && args[3] !== "1") {
    fail("debug flag must be 0 or 1", EXIT_USAGE);
}
const BM_debug = args[3] === "1";

let kr;
try {
    kr = require(process.env.COLDRUN_KRUN_NODE_ADDON);
} catch (e) {
    fail("cannot load the libkruntime addon $COLDRUN_KRUN_NODE_ADDON: " + e.message, EXIT_USAGE);
}
let BM_results_fd;
try {
    BM_results_fd = kr.take_results_channel(parseInt(process.env.COLDRUN_RESULTS_FD || "3", 10));
} catch (e) {
    fail(e.message + " (see PROTOCOL.md)", EXIT_USAGE);
}

// d8's output functions, which Krun-era benchmarks may call.
if (typeof globalThis.print !== "function") {
    globalThis.print = (...xs) => process.stdout.write(xs.join(" ") + "\n");
}
if (typeof globalThis.printErr !== "function") {
    globalThis.printErr = (...xs) => process.stderr.write(xs.join(" ") + "\n");
}

let BM_source;
try {
    BM_source = fs.readFileSync(BM_benchmark, "utf8");
} catch (e) {
    fail("cannot read benchmark " + BM_benchmark + ": " + e.message, EXIT_USAGE);
}
try {
    vm.runInThisContext(BM_source, { filename: BM_benchmark });
} catch (e) {
    benchmarkFailed(e);
}
// Also finds a top-level `let`/`const` run_iter, which is not a property of globalThis.
const run_iter = vm.runInThisContext("typeof run_iter === 'function' ? run_iter : undefined");
if (typeof run_iter !== "function") {
    fail("benchmark " + BM_benchmark + " does not define a global function run_iter", EXIT_USAGE);
}
if (process.env.COLDRUN_LOAD_ONLY === "1") {
    writeDocument('{"protocol_version": 1, "load_only": true}');
    process.exit(0);
}

kr.krun_init();
const BM_num_cores = kr.krun_get_num_cores();
const BM_reason = BM_num_cores === 0 ? (kr.krun_counters_unavailable_reason() || "unknown") : null;

// Preallocated typed arrays keep the loop allocation-free and type-stable.
const BM_wallclock_ns = new Float64Array(BM_n_iters);
const BM_cycles = [], BM_aperf = [], BM_mperf = [];
for (let core = 0; core < BM_num_cores; core++) {
    BM_cycles.push(new Float64Array(BM_n_iters));
    BM_aperf.push(new Float64Array(BM_n_iters));
    BM_mperf.push(new Float64Array(BM_n_iters));
}

kr.krun_timeline_reserve(BM_n_iters);
try {
for (let i = 0; i < BM_n_iters; i++) {
    if (BM_debug) {
        process.stderr.write("[iterations_runner.js] iteration " + (i + 1) + "/" + BM_n_iters + "\n");
    }
    kr.krun_measure(0);
    run_iter(BM_param);
    kr.krun_measure(1);
    BM_wallclock_ns[i] = kr.krun_wallclock_delta_ns();
    for (let core = 0; core < BM_num_cores; core++) {
        BM_cycles[core][i] = kr.krun_core_cycles_delta(core);
        BM_aperf[core][i] = kr.krun_aperf_delta(core);
        BM_mperf[core][i] = kr.krun_mperf_delta(core);
    }
}
} catch (e) {
    benchmarkFailed(e);
}

kr.krun_done();
// Iteration start/end (and barrier waits): exact integers, spliced in as text.
const BM_timeline = kr.krun_timeline_json();

const perCore = (arrays) => arrays.map((a) => Array.from(a));
const fields = JSON.stringify({
    protocol_version: 1,
    wallclock_times: Array.from(BM_wallclock_ns, (ns) => ns / 1e9),
    core_cycle_counts: perCore(BM_cycles),
    aperf_counts: perCore(BM_aperf),
    mperf_counts: perCore(BM_mperf),
    counters: { available: BM_num_cores > 0, reason: BM_reason },
});
const doc = BM_timeline ? fields.slice(0, -1) + ", " + BM_timeline + "}" : fields;

writeDocument(doc);
