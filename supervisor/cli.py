"""The `coldrun` command: its parser, and each command importing its machinery when it runs."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

# Only what the parser needs is imported here: a boot runs `coldrun resume`, and must not load the
# Krun importer, the check's load machinery or the export (issue 36); each command imports its own.
from supervisor import __version__
from supervisor.boot.check_defaults import LOAD_TIMEOUT, REHEARSAL_ITERATIONS
from supervisor.errors import ColdrunError

STATUS_EXIT_CODES = """exit status: 0 finished, every execution completed; 3 stopped on a fatal check; \
6 finished with errored, timed-out or crashed executions; 7 aborted; 8 still running; \
9 finished, every execution completed, but some [stop] keys stopped at max_executions short of their target; \
2 not a state dir (or bad input), 4 corrupt schedule or altered records (--json: the same codes; \
nothing on stdout when the command itself fails)"""
RUN_EXIT_CODES = """exit status when the experiment ends in this process: 0 every execution completed; \
6 some errored, timed out or crashed; 9 all completed, but some [stop] keys did not reach their target; \
3 stopped on a fatal check (the reason is printed); \
2 bad input; 5 another supervisor holds the state dir"""


def _positive(kind: type):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
        return value
    return parse


def _cmd_check(args: argparse.Namespace) -> int:
    """Every problem at once, one line each; exit 1 when any: nothing start refuses, and no benchmark that
    cannot load (or, with --rehearse, run a few iterations), passes."""
    from supervisor.boot.load_check import check_loads
    from supervisor.boot.prepare import prepare
    from supervisor.boot.rehearsal import rehearsal_lines, rehearse
    from supervisor.launch.runner_access import NOBODY_NAME, unprivileged_prefix

    prep = prepare(args.experiment, as_benchmark_user=True)
    exp = prep.exp
    # As a real start runs benchmarks: as the benchmark user (its stand-in nobody) where there is one.
    prefix = unprivileged_prefix() if exp.platform.benchmark_user else []
    loads = check_loads(exp, prep.exp_dir, args.experiment, prep.ready_keys, prefix=prefix,
                        timeout=args.load_timeout)
    refused = prep.problems + (prep.unreachable if exp.platform.benchmark_user else [])
    rehearsal = None
    if args.rehearse:
        loaded = [k for k in prep.ready_keys if k not in loads.failed]
        rehearsal = rehearse(dataclasses.replace(prep, ready_keys=loaded), iterations=args.rehearse_iterations,
                             prefix=prefix)
    problems = len(refused) + len(loads.problems) + (len(rehearsal.failed) if rehearsal else 0)
    print(f"{args.experiment}: {f'NOT READY, {problems} problem(s)' if problems else 'OK'}, experiment {exp.name!r}")
    for vm_name, vm in exp.vms.items():
        if vm.instrument:
            print(f"warning: vms.{vm_name}: instrument = true perturbs the measurement; use such runs to "
                  f"explain behaviour, not as results")
    for line in refused:
        print(f"problem: {line} (coldrun start refuses this)")
    for line in loads.problems:
        print(f"problem: {line}")
    as_whom = f" as {NOBODY_NAME}, the benchmark user's stand-in" if prefix else ""
    print(f"loaded {loads.loaded} of {len(prep.ready_keys) - len(loads.not_loaded)} benchmark(s) in their runners"
          f"{as_whom}" + (f"; {len(loads.not_loaded)} key(s) of VMs with no load step (external runners, "
                          f"startup-time mode) not loaded: "
                          f"{', '.join(dict.fromkeys(k.split(':')[1] for k in loads.not_loaded))}"
                          if loads.not_loaded else ""))
    if rehearsal is not None:
        print("\n".join(rehearsal_lines(prep, rehearsal)))
    print("\n".join(prep.kind.check_lines(prep, show_all=args.all)))
    return 1 if problems else 0


def _cmd_start(args: argparse.Namespace) -> int:
    from supervisor.boot.lifecycle import start

    state_dir = args.state_dir or f"{Path(args.experiment).stem}-state"
    return start(args.experiment, state_dir, simulate=args.simulate_reboots, debug=args.debug)


def _cmd_resume(args: argparse.Namespace) -> int:
    from supervisor.boot.lifecycle import continue_stopped
    from supervisor.boot.one_boot import boot

    if args.continue_stopped:
        continue_stopped(args.state_dir)
    return boot(args.state_dir, debug=args.debug)


def _cmd_status(args: argparse.Namespace) -> int:
    from supervisor.views.status import report_exit_code, status_report
    from supervisor.views.status_text import status_json, status_text

    report = status_report(args.state_dir)
    print(status_json(report) if args.json else status_text(report))
    return report_exit_code(report)


def _cmd_export(args: argparse.Namespace) -> int:
    from supervisor.views.export import write_export

    n, out = write_export(args.state_dir, args.format, args.output)
    print(f"wrote {out} ({args.format}, {n} process executions)")
    return 0


def _cmd_abort(args: argparse.Namespace) -> int:
    from supervisor.boot.lifecycle import abort

    return abort(args.state_dir)


def _cmd_schema(args: argparse.Namespace) -> int:
    from supervisor.experiment.model import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0


def _cmd_build_runners(args: argparse.Namespace) -> int:
    from iteration_runners.languages import report_build

    return report_build(args.runners)


def _cmd_build_java(args: argparse.Namespace) -> int:
    from iteration_runners.java_benchmarks import build_java_benchmarks, runner_classpath
    from iteration_runners.languages import RunnerError
    from supervisor.state.outputs import refuse_state_dir_output

    try:
        if args.classpath:
            print(runner_classpath())
            return 0
        if not args.directories:
            raise ColdrunError("build-java: give the directories of Java benchmark sources (or --classpath)")
        for d in args.directories:     # javac writes the classes beside their sources
            refuse_state_dir_output(d, "build the benchmarks in a directory outside it")
        builds = build_java_benchmarks([Path(d) for d in args.directories])
    except RunnerError as e:
        raise ColdrunError(str(e)) from None
    for build in builds:
        print(build.line())
        if not build.ok:
            print("\n".join(f"    {line}" for line in build.output.splitlines()))
    failed = [b for b in builds if not b.ok]
    if failed:
        raise ColdrunError(f"build-java: {len(failed)} of {len(builds)} director{'ies' if len(builds) > 1 else 'y'} "
                           f"failed to build: {', '.join(str(b.directory) for b in failed)}")
    return 0


def _cmd_import_krun(args: argparse.Namespace) -> int:
    from supervisor.durable import write_atomic
    from supervisor.experiment.krun_import import import_krun
    from supervisor.state.outputs import refuse_state_dir_output

    config = Path(args.config)
    out = Path(args.output) if args.output else config.with_suffix(".toml")
    refuse_state_dir_output(out, "write it outside the state dir, e.g. -o EXP.toml")
    if out.exists() and not args.force:
        raise ColdrunError(f"{out}: already exists; give another -o or --force to replace it")
    tr = import_krun(config, out, args.hostname)
    write_atomic(out, tr.text.encode(), mode=0o644)
    print(f"wrote {out}: {tr.vms} VM{'s' if tr.vms != 1 else ''}, {tr.keys} key{'s' if tr.keys != 1 else ''} "
          f"(bench:vm:variant)")
    for warning in tr.warnings:
        print(f"coldrun: warning: {warning}", file=sys.stderr)
    if tr.python2:
        print("read as Python 2 (also listed at the top of the file):")
        for line in tr.python2:
            print(f"  - {line}")
    if tr.set_here:
        print("set on the benchmark machine (placeholders; also listed at the top of the file):")
        for line in tr.set_here:
            print(f"  - {line}")
    if tr.notes:
        print("not carried over (no coldrun equivalent; also listed at the top of the file):")
        for note in tr.notes:
            print(f"  - {note}")
    print(f"next: coldrun check {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coldrun", description="Run benchmark experiments with a reboot "
                                "before every process execution, Krun-style.")
    p.add_argument("--version", action="version", version=f"coldrun {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="validate an experiment, load every benchmark, and print its schedule "
                       "and ETA (--rehearse: run each key a few iterations first)")
    c.add_argument("experiment")
    c.add_argument("--all", action="store_true", help="list every job of the schedule")
    c.add_argument("--load-timeout", type=_positive(float), default=LOAD_TIMEOUT, metavar="SECONDS",
                   help=f"seconds one benchmark's load may take (default {LOAD_TIMEOUT:g})")
    c.add_argument("--rehearse", action="store_true",
                   help="also run every key once for a few iterations (no reboot, no platform change) and "
                        "give the ETA from their times")
    c.add_argument("--rehearse-iterations", type=_positive(int), default=REHEARSAL_ITERATIONS, metavar="N",
                   help=f"in-process iterations of each key's rehearsal (default {REHEARSAL_ITERATIONS})")
    c.set_defaults(func=_cmd_check)

    s = sub.add_parser("start", help="start an experiment (root, reboots) or simulate it (--simulate-reboots)",
                       epilog=RUN_EXIT_CODES)
    s.add_argument("experiment")
    s.add_argument("--simulate-reboots", action="store_true",
                   help="no root, no system changes: re-execute instead of rebooting, stay in the foreground")
    s.add_argument("--state-dir", help="where state lives (default: ./<experiment name>-state)")
    s.add_argument("--debug", action="store_true",
                   help="runners write one line per in-process iteration to stderr (kept in the records' "
                        "stderr tails); recorded in the state dir, so every boot keeps it")
    s.set_defaults(func=_cmd_start)

    r = sub.add_parser("resume", help="continue an experiment (what the boot service runs)", epilog=RUN_EXIT_CODES)
    r.add_argument("state_dir")
    r.add_argument("--continue", dest="continue_stopped", action="store_true",
                   help="continue an experiment that stopped on a fatal check, once the cause is fixed")
    r.add_argument("--debug", action=argparse.BooleanOptionalAction, default=None,
                   help="turn the runners' per-iteration stderr lines on (--debug) or off (--no-debug) "
                        "from this boot on; default: keep the state dir's setting")
    r.set_defaults(func=_cmd_resume)

    st = sub.add_parser("status", help="progress, ETA and last error (read only)", epilog=STATUS_EXIT_CODES)
    st.add_argument("state_dir")
    st.add_argument("--json", action="store_true",
                    help="print one JSON object instead (format coldrun-status, version 1; see README.md)")
    st.set_defaults(func=_cmd_status)

    e = sub.add_parser("export", help="write results in Krun's format or as a native bundle")
    e.add_argument("state_dir")
    e.add_argument("--format", choices=("krun", "native"), default="krun")
    e.add_argument("-o", "--output", required=True)
    e.set_defaults(func=_cmd_export)

    a = sub.add_parser("abort", help="stop an experiment for good: restore settings, disable the boot service")
    a.add_argument("state_dir")
    a.set_defaults(func=_cmd_abort)

    sc = sub.add_parser("schema", help="print the JSON Schema of the experiment file")
    sc.set_defaults(func=_cmd_schema)

    br = sub.add_parser("build-runners", help="compile what the runners need on this machine (JNI glue, Node.js "
                        "addon, startup wrapper, probe benchmarks); idempotent")
    br.add_argument("runners", nargs="*", metavar="RUNNER",
                    help="c, python, pypy, lua, javascript, java, ruby, php or startup (default: all; a missing "
                         "tool then is reported, not an error)")
    br.set_defaults(func=_cmd_build_runners)

    bj = sub.add_parser("build-java", help="compile Krun-style Java benchmarks (classes implementing "
                        "BaseKrunEntry) against coldrun's Java runner, in place")
    bj.add_argument("directories", nargs="*", metavar="DIR",
                    help="directories of .java sources, e.g. benchmarks/nbody/java (compiled when a class is "
                         "missing or older than its source)")
    bj.add_argument("--classpath", action="store_true",
                    help="print the runner's class directory instead, for a Makefile: "
                         "javac -cp \"$(coldrun build-java --classpath):.\" *.java")
    bj.set_defaults(func=_cmd_build_java)

    ik = sub.add_parser(
        "import-krun", help="translate a Krun .krun config into a coldrun experiment file (runs the config: "
                            "it is Python)",
        description="Translate a Krun config into an equivalent coldrun experiment file, with comments naming "
                    "each Krun setting. The .krun file is Python: this RUNS IT, as Krun did, with your rights "
                    "(against stand-ins for Krun's modules, so Krun need not be installed), in the config's "
                    "directory. Only import configs you trust. Settings with no coldrun equivalent are "
                    "listed in the output and at the top of the file.")
    ik.add_argument("config", help="the Krun config (EXP.krun)")
    ik.add_argument("-o", "--output", help="the experiment file to write (default: EXP.toml beside the config)")
    ik.add_argument("--force", action="store_true", help="replace the output file if it exists")
    ik.add_argument("--hostname", metavar="NAME",
                    help="evaluate the config as host NAME (what platform.node() and socket.gethostname() "
                         "return to it): for configs keyed by the benchmark machines' names")
    ik.set_defaults(func=_cmd_import_krun)

    add_platform_commands(sub)     # coldrun platform show|check (read only)
    return p


def _platform_command(name: str):
    """``supervisor.platform_cli``'s command ``name``, imported when it runs."""
    def run(args: argparse.Namespace) -> int:
        from supervisor import platform_cli
        return getattr(platform_cli, name)(args)
    return run


def add_platform_commands(subparsers) -> None:
    p = subparsers.add_parser("platform", help="show or check the machine's benchmark settings (read only)")
    sub = p.add_subparsers(dest="platform_command", required=True)
    s = sub.add_parser("show", help="every control: current value, what the policy wants, what would change")
    s.add_argument("--root", default="/", help="a copy of a machine's /sys, /proc, /boot, /etc (default /)")
    s.add_argument("--os", choices=("linux", "openbsd"), default=None, help="default: this machine's OS")
    s.add_argument("--json", action="store_true",
                   help="print the machine facts and every control report as one JSON object")
    s.set_defaults(func=_platform_command("cmd_show"))
    c = sub.add_parser("check", help="exit 0 when the machine is ready for EXPERIMENT, else list each problem")
    c.add_argument("experiment")
    c.add_argument("--root", default="/", help="a copy of a machine's /sys, /proc, /boot, /etc (default /)")
    c.add_argument("--os", choices=("linux", "openbsd"), default=None, help="default: this machine's OS")
    c.set_defaults(func=_platform_command("cmd_check"))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ColdrunError as e:
        for line in str(e).splitlines() or [""]:    # one line per problem, each found by grep "coldrun:"
            sys.stderr.write(f"coldrun: {line}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("coldrun: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
