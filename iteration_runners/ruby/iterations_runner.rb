# coldrun iteration runner for Ruby (CRuby; any Ruby with Fiddle).
#
# usage: ruby iterations_runner.rb <benchmark.rb> <iterations> <param> <debug 0|1>
#
# Loads the benchmark as Krun did (require; it defines a top-level run_iter),
# measures each in-process iteration with libkruntime, keeps results in
# preallocated arrays and writes one protocol-1 JSON document to the results fd
# (PROTOCOL.md).  Ruby integers are arbitrary precision, so the exact 64-bit
# deltas are used.
#
# libkruntime is reached through the compiled KrunExt (kruntime_ext.c, built by
# `coldrun build-runners ruby`, path in $COLDRUN_KRUN_RUBY_EXT); the runner
# command always sets it.  Without that variable (a hand-run runner, the
# before/after overhead bench) it falls back to Fiddle, about 20x slower per
# call inside the timed region.
#
# With COLDRUN_LOAD_ONLY=1 it stops once the benchmark is required and its
# run_iter found, and writes the load-only document.  A benchmark exception
# ends with one "iterations_runner.rb: error:" line in Ruby's words.
#
# Exit status (PROTOCOL.md): 0 document written; 1 the benchmark failed;
# 2 bad usage or setup; 3 the results channel failed; 4 the duet barrier failed.

require "json"

EXIT_BENCHMARK_FAILED = 1
EXIT_USAGE = 2
EXIT_CHANNEL = 3

def fail(message, status)
  STDERR.write "iterations_runner.rb: error: #{message}\n"
  Kernel.exit!(status) # exit! skips at_exit handlers and our SystemExit rescue
end

def write_document(io, doc)
  io.write(doc)
  io.close
rescue SystemCallError, IOError => e
  fail("writing the results document failed: #{e.message}", EXIT_CHANNEL)
end

# The backtrace for the reader, then the exception's class and message on one line.
def benchmark_failed(e)
  STDERR.write((e.full_message(highlight: false) rescue e.inspect) + "\n")
  where = e.is_a?(ScriptError) ? nil : e.backtrace_locations&.first # a SyntaxError's message has its place
  at = where ? " (#{File.basename(where.path.to_s)}:#{where.lineno})" : ""
  fail("the benchmark raised #{e.class}: #{e.message.lines.first.to_s.strip}#{at}", EXIT_BENCHMARK_FAILED)
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

# The Fiddle fallback, with KrunExt's method names.
module KrunFiddle
  def self.load(path)
    u64 = -Fiddle::TYPE_INT64_T # negative type code = unsigned
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
    const_set(:CYCLES_DELTA, fn.call("krun_core_cycles_delta", [Fiddle::TYPE_INT], u64))
    const_set(:APERF_DELTA, fn.call("krun_aperf_delta", [Fiddle::TYPE_INT], u64))
    const_set(:MPERF_DELTA, fn.call("krun_mperf_delta", [Fiddle::TYPE_INT], u64))
    const_set(:TIMELINE_RESERVE, fn.call("krun_timeline_reserve", [Fiddle::TYPE_LONG], Fiddle::TYPE_VOID))
    const_set(:TIMELINE_JSON, fn.call("krun_timeline_json", [], Fiddle::TYPE_VOIDP))
  end

  def self.init; INIT.call; end
  def self.done; DONE.call; end
  def self.measure(idx); MEASURE.call(idx); end
  def self.num_cores; NUM_CORES.call; end
  def self.wallclock_delta_ns; WALLCLOCK_DELTA_NS.call; end
  def self.cycles_delta(core); CYCLES_DELTA.call(core); end
  def self.aperf_delta(core); APERF_DELTA.call(core); end
  def self.mperf_delta(core); MPERF_DELTA.call(core); end
  def self.timeline_reserve(n); TIMELINE_RESERVE.call(n); end
  def self.timeline_json; TIMELINE_JSON.call.to_s; end

  def self.unavailable_reason
    raw = REASON.call
    raw.null? ? "" : raw.to_s
  end
end

ext = ENV["COLDRUN_KRUN_RUBY_EXT"]
krun = begin
  if ext
    require ext
    KrunExt
  else
    require "fiddle"
    KrunFiddle.load(ENV["COLDRUN_LIBKRUNTIME"] || "libkruntime.so")
    STDERR.write "iterations_runner.rb: COLDRUN_KRUN_RUBY_EXT is not set: libkruntime through Fiddle " \
                 "(slow; `coldrun build-runners ruby` builds the extension)\n" if debug
    KrunFiddle
  end
rescue LoadError, StandardError => e
  fail("cannot load libkruntime (#{ext || 'Fiddle'}): #{e.message}", EXIT_USAGE)
end

begin
  require(File.expand_path(benchmark))
rescue SystemExit => e
  fail("the benchmark called exit(#{e.status}) while loading", EXIT_BENCHMARK_FAILED)
rescue Exception => e # SyntaxError and LoadError are ScriptErrors, not StandardErrors
  benchmark_failed(e)
end
unless Object.private_method_defined?(:run_iter) || Object.method_defined?(:run_iter)
  fail("benchmark #{benchmark} does not define run_iter", EXIT_USAGE)
end
if ENV["COLDRUN_LOAD_ONLY"] == "1"
  write_document(results, JSON.generate({ "protocol_version" => 1, "load_only" => true }))
  Kernel.exit!(0)
end

krun.init
num_cores = krun.num_cores
reason = nil
if num_cores == 0
  reason = krun.unavailable_reason
  reason = "unknown" if reason.empty?
end

# Preallocated storage, filled in place by the loop.
wallclock_ns = Array.new(iters, 0)
cycles = Array.new(num_cores) { Array.new(iters, 0) }
aperf = Array.new(num_cores) { Array.new(iters, 0) }
mperf = Array.new(num_cores) { Array.new(iters, 0) }

krun.timeline_reserve(iters)
i = 0
begin
  while i < iters
    if debug
      STDERR.write "[iterations_runner.rb] iteration #{i + 1}/#{iters}\n"
      STDERR.flush
    end
    krun.measure(0)
    run_iter(param)
    krun.measure(1)
    wallclock_ns[i] = krun.wallclock_delta_ns
    core = 0
    while core < num_cores
      cycles[core][i] = krun.cycles_delta(core)
      aperf[core][i] = krun.aperf_delta(core)
      mperf[core][i] = krun.mperf_delta(core)
      core += 1
    end
    i += 1
  end
rescue SystemExit => e
  fail("the benchmark called exit(#{e.status})", EXIT_BENCHMARK_FAILED)
rescue Exception => e
  benchmark_failed(e)
end

krun.done
# Iteration start/end (and barrier waits); Ruby's JSON keeps the integers exact.
timeline = JSON.parse("{#{krun.timeline_json}}")

doc = JSON.generate({
  "protocol_version" => 1,
  "wallclock_times" => wallclock_ns.map { |ns| ns / 1e9 },
  "core_cycle_counts" => cycles,
  "aperf_counts" => aperf,
  "mperf_counts" => mperf,
  "counters" => { "available" => num_cores > 0, "reason" => reason },
}.merge(timeline))
write_document(results, doc)
