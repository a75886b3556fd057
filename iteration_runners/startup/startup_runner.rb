T1 = Process.clock_gettime(Process.const_defined?(:CLOCK_MONOTONIC_RAW) ? Process::CLOCK_MONOTONIC_RAW : Process::CLOCK_MONOTONIC, :nanosecond)
# coldrun startup-time dummy runner for Ruby.
#
# The first line reads the clock the startup wrapper read before it exec'd
# the VM; the rest reports both.  The benchmark is not loaded.
require "json"

if ARGV.length != 4
  STDERR.write "usage: startup_runner.rb <benchmark> <iterations> <param> <debug 0|1>\n"
  Kernel.exit(1)
end
clock = Process.const_defined?(:CLOCK_MONOTONIC_RAW) ? "CLOCK_MONOTONIC_RAW" : "CLOCK_MONOTONIC"
wrapper = ENV["COLDRUN_STARTUP_#{clock}"]
if wrapper.nil? || wrapper.empty?
  STDERR.write "startup_runner.rb: COLDRUN_STARTUP_#{clock} is unset: run me under startup_wrapper\n"
  Kernel.exit(1)
end
sec0, nsec0 = wrapper.split(".")
t0 = Integer(sec0, 10) * 1_000_000_000 + Integer(nsec0, 10)
seconds = (T1 - t0) / 1e9
doc = JSON.generate({
  "protocol_version" => 1,
  "wallclock_times" => [seconds],
  "core_cycle_counts" => [],
  "aperf_counts" => [],
  "mperf_counts" => [],
  "counters" => { "available" => false, "reason" => "startup-time mode reads no per-core counters" },
  "startup" => {
    "clock" => clock,
    "wrapper_time" => wrapper,
    "runner_time" => format("%d.%09d", T1 / 1_000_000_000, T1 % 1_000_000_000),
    "seconds" => seconds,
  },
})
out = IO.new(Integer(ENV.fetch("COLDRUN_RESULTS_FD", "3")), "w")
out.write(doc)
out.close
