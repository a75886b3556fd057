local ffi = require("ffi"); ffi.cdef("typedef struct { long tv_sec; long tv_nsec; } coldrun_timespec; int clock_gettime(int, coldrun_timespec *);"); local T1 = ffi.new("coldrun_timespec"); local CLOCK_ID = ffi.os == "Linux" and 4 or 3; ffi.C.clock_gettime(CLOCK_ID, T1)
-- coldrun startup-time dummy runner for LuaJIT.
--
-- The first line reads the clock the startup wrapper read before it exec'd
-- the VM (CLOCK_MONOTONIC_RAW = 4 on Linux; CLOCK_MONOTONIC = 3 on OpenBSD);
-- the rest reports both.  The benchmark is not loaded.
ffi.cdef[[
    intptr_t write(int fd, const void *buf, size_t count);
    int close(int fd);
]]

if #arg ~= 4 then
    io.stderr:write("usage: startup_runner.lua <benchmark> <iterations> <param> <debug 0|1>\n")
    os.exit(1)
end

local clock = ffi.os == "Linux" and "CLOCK_MONOTONIC_RAW" or "CLOCK_MONOTONIC"
local wrapper = os.getenv("COLDRUN_STARTUP_" .. clock)
if not wrapper then
    io.stderr:write("startup_runner.lua: COLDRUN_STARTUP_" .. clock .. " is unset: run me under startup_wrapper\n")
    os.exit(1)
end
local sec0, nsec0 = wrapper:match("^(%d+)%.(%d+)$")
local sec1, nsec1 = tonumber(T1.tv_sec), tonumber(T1.tv_nsec)
-- Seconds and nanoseconds apart: their difference is exact in a double.
local seconds = (sec1 - tonumber(sec0)) + (nsec1 - tonumber(nsec0)) / 1e9
local runner_time = string.format("%d.%09d", sec1, nsec1)
local secs = string.format("%.17g", seconds)

local doc = '{"protocol_version": 1, "wallclock_times": [' .. secs .. '], ' ..
    '"core_cycle_counts": [], "aperf_counts": [], "mperf_counts": [], ' ..
    '"counters": {"available": false, "reason": "startup-time mode reads no per-core counters"}, ' ..
    '"startup": {"clock": "' .. clock .. '", "wrapper_time": "' .. wrapper .. '", ' ..
    '"runner_time": "' .. runner_time .. '", "seconds": ' .. secs .. '}}'

local fd = tonumber(os.getenv("COLDRUN_RESULTS_FD") or "3")
local off = 0
while off < #doc do
    local n = tonumber(ffi.C.write(fd, ffi.cast("const char *", doc) + off, #doc - off))
    if n < 0 then
        error("writing the results document to fd " .. fd .. " failed")
    end
    off = off + n
end
ffi.C.close(fd)
