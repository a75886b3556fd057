-- coldrun iteration runner for LuaJIT.
--
-- usage: luajit iterations_runner.lua <benchmark.lua> <iterations> <param> <debug 0|1>
--
-- Loads the benchmark as Krun did (dofile; it defines a global run_iter),
-- measures each in-process iteration with libkruntime through LuaJIT's ffi,
-- keeps results in preallocated ffi arrays and writes one protocol-1 JSON
-- document to the results fd (iteration_runners/PROTOCOL.md).
--
-- Lua numbers are doubles: 64-bit counter deltas go through
-- krun_u64_to_double, which exits with an error rather than round.
--
-- With COLDRUN_LOAD_ONLY=1 it stops once the benchmark is loaded and its
-- run_iter found, and writes the load-only document (PROTOCOL.md).  A
-- benchmark error ends with one "iterations_runner.lua: error:" line holding
-- Lua's own message (the traceback above it).
--
-- Exit status (PROTOCOL.md): 0 document written; 1 the benchmark failed;
-- 2 bad usage or setup; 3 the results channel failed.

local ffi = require("ffi")
ffi.cdef[[
    void krun_init(void);
    void krun_done(void);
    void krun_measure(int mdata_idx);
    int krun_get_num_cores(void);
    const char *krun_counters_unavailable_reason(void);
    int64_t krun_wallclock_delta_ns(void);
    uint64_t krun_core_cycles_delta(int core);
    uint64_t krun_aperf_delta(int core);
    uint64_t krun_mperf_delta(int core);
    double krun_u64_to_double(uint64_t val);
    void krun_timeline_reserve(long iterations);
    const char *krun_timeline_json(void);
    intptr_t write(int fd, const void *buf, size_t count);
    int close(int fd);
    int fcntl(int fd, int cmd, ...);
    char *strerror(int errnum);
]]

local EXIT_USAGE, EXIT_CHANNEL = 2, 3
-- F_DUPFD_CLOEXEC differs per OS: Linux 1030, OpenBSD 10.
local F_DUPFD_CLOEXEC = ffi.os == "Linux" and 1030 or 10

local function fail(message, status)
    io.stderr:write("iterations_runner.lua: error: " .. message .. "\n")
    os.exit(status)
end

if #arg ~= 4 then
    fail("expected 4 arguments, got " .. #arg ..
         "\nusage: iterations_runner.lua <benchmark> <iterations> <param> <debug 0|1>", EXIT_USAGE)
end

local BM_benchmark = arg[1]
local BM_iters = tonumber(arg[2])
local BM_param = tonumber(arg[3])
if not BM_iters or BM_iters < 1 or BM_iters % 1 ~= 0 or not BM_param or BM_param % 1 ~= 0 then
    fail("iterations must be an integer >= 1 and param an integer", EXIT_USAGE)
end
if arg[4] ~= "0" and arg[4] ~= "1" then
    fail("debug flag must be 0 or 1", EXIT_USAGE)
end
local BM_debug = arg[4] == "1"

-- Move the results channel to a private close-on-exec descriptor, so the
-- benchmark and its children cannot write to it.
local BM_results_fd
do
    local fd = tonumber(os.getenv("COLDRUN_RESULTS_FD") or "3")
    local private = ffi.C.fcntl(fd, F_DUPFD_CLOEXEC, ffi.new("int", 10))
    if private < 0 or ffi.C.close(fd) ~= 0 then
        fail("results channel fd " .. fd .. " is not open: " .. ffi.string(ffi.C.strerror(ffi.errno())) ..
             " (see PROTOCOL.md)", EXIT_USAGE)
    end
    BM_results_fd = private
end

-- Keep the clib object in a local that is used after the loop, so the
-- library cannot be collected (and unloaded) while the run is in progress.
local ok, kr = pcall(ffi.load, os.getenv("COLDRUN_LIBKRUNTIME") or "kruntime")
if not ok then
    fail("cannot load libkruntime: " .. tostring(kr), EXIT_USAGE)
end

-- The benchmark's errors are caught here, so the last stderr line is Lua's own
-- message, not the interpreter's "[C]: at 0x..." frame.
local BM_num_cores, BM_reason, BM_wallclock_ns, BM_cycles, BM_aperf, BM_mperf
local function BM_load_and_measure()
    local f = io.open(BM_benchmark, "r")
    if not f then
        fail("benchmark " .. BM_benchmark .. " does not exist", EXIT_USAGE)
    end
    f:close()
    dofile(BM_benchmark)
    if type(run_iter) ~= "function" then
        fail("benchmark " .. BM_benchmark .. " does not define a global function run_iter", EXIT_USAGE)
    end
    local BM_run_iter = run_iter
    if os.getenv("COLDRUN_LOAD_ONLY") == "1" then
        return false
    end

    kr.krun_init()
    BM_num_cores = kr.krun_get_num_cores()
    if BM_num_cores == 0 then
        local raw = kr.krun_counters_unavailable_reason()
        BM_reason = raw ~= nil and ffi.string(raw) or "unknown"
    end

    -- Preallocated storage: ffi arrays do not grow or box inside the loop.
    BM_wallclock_ns = ffi.new("double[?]", BM_iters)
    BM_cycles, BM_aperf, BM_mperf = {}, {}, {}
    for core = 0, BM_num_cores - 1 do
        BM_cycles[core] = ffi.new("double[?]", BM_iters)
        BM_aperf[core] = ffi.new("double[?]", BM_iters)
        BM_mperf[core] = ffi.new("double[?]", BM_iters)
    end

    kr.krun_timeline_reserve(BM_iters)
    local measure = kr.krun_measure
    for i = 0, BM_iters - 1 do
        if BM_debug then
            io.stderr:write(string.format("[iterations_runner.lua] iteration %d/%d\n", i + 1, BM_iters))
        end
        measure(0)
        BM_run_iter(BM_param)
        measure(1)
        BM_wallclock_ns[i] = tonumber(kr.krun_wallclock_delta_ns())
        for core = 0, BM_num_cores - 1 do
            BM_cycles[core][i] = kr.krun_u64_to_double(kr.krun_core_cycles_delta(core))
            BM_aperf[core][i] = kr.krun_u64_to_double(kr.krun_aperf_delta(core))
            BM_mperf[core][i] = kr.krun_u64_to_double(kr.krun_mperf_delta(core))
        end
    end
    return true
end

local function write_document(doc)
    local off = 0
    while off < #doc do
        local n = tonumber(ffi.C.write(BM_results_fd, ffi.cast("const char *", doc) + off, #doc - off))
        if n < 0 then
            fail("writing the results document failed: " .. ffi.string(ffi.C.strerror(ffi.errno())), EXIT_CHANNEL)
        end
        off = off + n
    end
    if ffi.C.close(BM_results_fd) ~= 0 then
        fail("closing the results channel failed: " .. ffi.string(ffi.C.strerror(ffi.errno())), EXIT_CHANNEL)
    end
end

local BM_ok, BM_measured = xpcall(BM_load_and_measure, function(err)
    return {message = tostring(err), trace = debug.traceback(tostring(err), 2)}
end)
if not BM_ok then
    io.stderr:write(BM_measured.trace, "\n")
    local message = BM_measured.message
    -- Lua 5.2's table.pack/unpack exist in LuaJIT only when built with LUAJIT_ENABLE_LUA52COMPAT (the
    -- paper's was); a stock LuaJIT's benchmark fails at the first call, so say why.
    local missing = message:match("attempt to call %a+ '(%a+)' %(a nil value%)")
    if (missing == "unpack" or missing == "pack") and table[missing] == nil then
        message = message .. "; table." .. missing .. " is Lua 5.2's: this LuaJIT was built without " ..
            "LUAJIT_ENABLE_LUA52COMPAT (build it with XCFLAGS=-DLUAJIT_ENABLE_LUA52COMPAT, as the paper's " ..
            "was, or use " .. (missing == "unpack" and "unpack" or "{...}") .. " in the benchmark)"
    end
    fail("the benchmark failed: " .. message, 1)
end
if not BM_measured then   -- load-only mode
    write_document('{"protocol_version": 1, "load_only": true}')
    os.exit(0)
end
kr.krun_done()
-- Iteration start/end (and barrier waits) as exact JSON integers from libkruntime.
local BM_timeline = ffi.string(kr.krun_timeline_json())

-- JSON by hand (LuaJIT has no JSON library): %.17g round-trips a double,
-- %.0f prints an integral double without exponent or fraction.
local function json_string(s)
    return '"' .. s:gsub('[%c"\\]', function(c)
        return string.format("\\u%04x", c:byte())
    end) .. '"'
end

local function per_core_json(arrays)
    local cores = {}
    for core = 0, BM_num_cores - 1 do
        local vals = {}
        for i = 0, BM_iters - 1 do
            vals[i + 1] = string.format("%.0f", arrays[core][i])
        end
        cores[core + 1] = "[" .. table.concat(vals, ", ") .. "]"
    end
    return "[" .. table.concat(cores, ", ") .. "]"
end

local walls = {}
for i = 0, BM_iters - 1 do
    walls[i + 1] = string.format("%.17g", BM_wallclock_ns[i] / 1e9)
end

local doc = table.concat({
    '{"protocol_version": 1, "wallclock_times": [', table.concat(walls, ", "), "], ",
    '"core_cycle_counts": ', per_core_json(BM_cycles), ", ",
    '"aperf_counts": ', per_core_json(BM_aperf), ", ",
    '"mperf_counts": ', per_core_json(BM_mperf), ", ",
    BM_timeline, ", ",
    '"counters": {"available": ', tostring(BM_num_cores > 0), ', "reason": ',
    BM_reason and json_string(BM_reason) or "null", "}}",
})

write_document(doc)
