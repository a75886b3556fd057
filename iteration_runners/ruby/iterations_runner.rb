# coldrun iteration runner for Ruby (CRuby; any Ruby with Fiddle).
#
# usage: ruby iterations_runner.rb <benchmark.rb> <iterations> <param> <debug 0|1>
#
# Loads the benchmark as Krun did (require; it defines a top-level run_iter),
# measures each in-process iteration with libkruntime through Fiddle (the
# standard library's libffi binding), keeps results in preallocated arrays and
# writes one protocol-1 JSON document to the results fd (PROTOCOL.md).
# Ruby integers are arbitrary precision, so the exact 64-bit deltas are used.
#
# Exit status (PROTOCOL.md): 0 document written; 1 the benchmark failed;
# 2 bad usage or setup; 3 the results channel failed.

require "fiddle"
require "json"

EXIT_BENCHMARK_FAILED = 1
EXIT_USAGE = 2
EXIT_CHANNEL = 3

def fail(message, status)
  STDERR.write "iterations_runner.rb: error: #{message}\n"
  Kernel.exit!(status) # exit! skips at_exit handlers and our SystemExit rescue
end

if ARGV.length != 4
  fail("expected 4 arguments, got #{ARGV.length}\n" \
       "usage: iterations_runner.rb <benchmark> <iterations> <param> <debug 0|1>", EXIT_USAGE)
end

benchmark = ARGV[0]
begin
  iters = Integer(ARGV[1], 10)
  param = Integer(ARGV[2], 10)
rescue ArgumentError
  fail("iterations and param must be integers", EXIT_USAGE)
end
fail("iterations must be at least 1", EXIT_USAGE) if iters < 1
fail("debug flag must be 0 or 1", EXIT_USAGE) unless %w[0 1].include?(ARGV[3])
debug = ARGV[3] == "1"
unless benchmark.end_with?(".rb") && File.file?(benchmark)
  fail("benchmark #{benchmark} is not an existing .rb file", EXIT_USAGE)
end

# Move the results channel to a private descriptor: Ruby's dup is
# close-on-exec, so the benchmark's children never inherit it.
results = begin
  inherited = IO.for_fd(Integer(ENV.fetch("COLDRUN_RESULTS_FD", "3")), "w", autoclose: true)
  private_io = inherited.dup
  inherited.close
  private_io
rescue SystemCallError, ArgumentError => e
  fail("results channel is not open: #{e.message} (see PROTOCOL.md)", EXIT_USAGE)
end

module Krun
  U64 = -Fiddle::TYPE_INT64_T # negative type code = unsigned

  def self.load(path)
    lib = Fiddle.dlopen(path)
    # need_gvl: true keeps the GVL across the call: releasing and retaking it
    # would land inside the measured interval (about 1 us per iteration).
    fn = ->(name, args, ret) { Fiddle::Function.new(lib[name], args, ret, need_gvl: true) }
    const_set(:LIB, lib)
    const_set(:INIT, fn.call("krun_init", [], Fiddle::TYPE_VOID))
    const_set(:DONE, fn.call("krun_done", [], Fiddle::TYPE_VOID))
    const_set(:MEASURE, fn.call("krun_measure", [Fiddle::TYPE_INT], Fiddle::TYPE_VOID))
    const_set(:NUM_CORES, fn.call("krun_get_num_cores", [], Fiddle::TYPE_INT))
    const_set(:REASON, fn.call("krun_counters_unavailable_reason", [], Fiddle::TYPE_VOIDP))
    const_set(:WALLCLOCK_DELTA_NS, fn.call("krun_wallclock_delta_ns", [], Fiddle::TYPE_INT64_T))
    const_set(:CYCLES_DELTA, fn.call("krun_core_cycles_delta", [Fiddle::TYPE_INT], U64))
    const_set(:APERF_DELTA, fn.call("krun_aperf_delta", [Fiddle::TYPE_INT], U64))
    const_set(:MPERF_DELTA, fn.call("krun_mperf_delta", [Fiddle::TYPE_INT], U64))
  end
end

begin
  Krun.load(ENV["COLDRUN_LIBKRUNTIME"] || "libkruntime.so")
rescue Fiddle::DLError => e
  fail("cannot load libkruntime: #{e.message}", EXIT_USAGE)
end

begin
  require(File.expand_path(benchmark)) # the benchmark's own errors propagate: exit 1
rescue SystemExit => e
  fail("the benchmark called exit(#{e.status}) while loading", EXIT_BENCHMARK_FAILED)
end
unless Object.private_method_defined?(:run_iter) || Object.method_defined?(:run_iter)
  fail("benchmark #{benchmark} does not define run_iter", EXIT_USAGE)
end

Krun::INIT.call
num_cores = Krun::NUM_CORES.call
reason = nil
if num_cores == 0
  raw = Krun::REASON.call
  reason = raw.null? ? "unknown" : raw.to_s
end

# Preallocated storage, filled in place by the loop.
wallclock_ns = Array.new(iters, 0)
cycles = Array.new(num_cores) { Array.new(iters, 0) }
aperf = Array.new(num_cores) { Array.new(iters, 0) }
mperf = Array.new(num_cores) { Array.new(iters, 0) }

measure = Krun::MEASURE
i = 0
begin
  while i < iters
    if debug
      STDERR.write "[iterations_runner.rb] iteration #{i + 1}/#{iters}\n"
      STDERR.flush
    end
    measure.call(0)
    run_iter(param)
    measure.call(1)
    wallclock_ns[i] = Krun::WALLCLOCK_DELTA_NS.call
    core = 0
    while core < num_cores
      cycles[core][i] = Krun::CYCLES_DELTA.call(core)
      aperf[core][i] = Krun::APERF_DELTA.call(core)
      mperf[core][i] = Krun::MPERF_DELTA.call(core)
      core += 1
    end
    i += 1
  end
rescue SystemExit => e
  fail("the benchmark called exit(#{e.status})", EXIT_BENCHMARK_FAILED)
end

Krun::DONE.call

doc = JSON.generate({
  "protocol_version" => 1,
  "wallclock_times" => wallclock_ns.map { |ns| ns / 1e9 },
  "core_cycle_counts" => cycles,
  "aperf_counts" => aperf,
  "mperf_counts" => mperf,
  "counters" => { "available" => num_cores > 0, "reason" => reason },
})
begin
  results.write(doc)
  results.close
rescue SystemCallError, IOError => e
  fail("writing the results document failed: #{e.message}", EXIT_CHANNEL)
end
