"""The `coldrun` command."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from supervisor import __version__
from supervisor.errors import ColdrunError
from supervisor.platform_cli import add_platform_commands


def _cmd_check(args: argparse.Namespace) -> int:
    from supervisor.experiment.model import load_experiment
    from supervisor.experiment.plan import expand
    from supervisor.launch.runner_command import validate_files
    from supervisor.state.status import per_job_overhead
    from supervisor.experiment.quantities import format_duration
    exp, _ = load_experiment(args.experiment)
    seed = exp.seed if exp.seed is not None else 0
    jobs = expand(exp, seed)
    run_keys = sorted({j.key for j in jobs if not j.skipped})
    validate_files(exp, Path(args.experiment).absolute().parent, args.experiment, run_keys)
    n_run = sum(1 for j in jobs if not j.skipped)
    print(f"{args.experiment}: OK, experiment {exp.name!r}")
    for vm_name, vm in exp.vms.items():
        if vm.instrument:
            print(f"warning: vms.{vm_name}: instrument = true perturbs the measurement; use such runs to "
                  f"explain behaviour, not as results")
    if exp.platform.benchmark_user:
        # Enforced by a real `coldrun start`; simulated runs use the invoking user.
        from supervisor.launch.runner_access import unreachable_files
        for line in unreachable_files(exp, Path(args.experiment).absolute().parent, args.experiment, run_keys):
            print(f"warning: {line} (a real start refuses this; --simulate-reboots runs as you)")
    seed_text = "" if exp.order == "round-robin" else (
        f", seed {exp.seed}" if exp.seed is not None else ", seed chosen at start and recorded (shown with seed 0)")
    print(f"order: {exp.order}{seed_text}; {exp.executions} process executions per key")
    print(f"keys ({len({j.key for j in jobs})}, {len(run_keys)} run):")
    for key in dict.fromkeys(j.key for j in jobs):
        vm = exp.vms[key.split(":")[1]]
        skipped = key not in run_keys
        print(f"  {key:40s} {'skipped' if skipped else f'{exp.executions} x {vm.iterations} iterations'}")
    print(f"schedule ({len(jobs)} jobs, {n_run} to run):")
    shown = jobs if args.all or len(jobs) <= 24 else jobs[:20]
    for i, j in enumerate(shown):
        print(f"  {i:5d} {'S' if j.skipped else 'O'} {j.key} #{j.pexec}")
    if len(shown) < len(jobs):
        print(f"  ... {len(jobs) - len(shown)} more (--all shows every job)")
    waits = n_run * per_job_overhead(exp)
    print(f"ETA: at least {format_duration(waits)} of waits ({n_run} x boot settle + sync), plus reboots and "
          f"benchmark run time (unknown until each key has run once)")
    return 0


def _cmd_start(args: argparse.Namespace) -> int:
    from supervisor.boot.lifecycle import start
    state_dir = args.state_dir or f"{Path(args.experiment).stem}-state"
    return start(args.experiment, state_dir, simulate=args.simulate_reboots, debug=args.debug)


def _cmd_resume(args: argparse.Namespace) -> int:
    from supervisor.boot.one_boot import boot
    if args.continue_stopped:
        from supervisor.boot.lifecycle import continue_stopped
        continue_stopped(args.state_dir)
    return boot(args.state_dir, debug=args.debug)


def _cmd_status(args: argparse.Namespace) -> int:
    from supervisor.state.status import status_text
    print(status_text(args.state_dir))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from supervisor.state.export import write_export
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coldrun", description="Run benchmark experiments with a reboot "
                                "before every process execution, Krun-style.")
    p.add_argument("--version", action="version", version=f"coldrun {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="validate an experiment and print its schedule and ETA")
    c.add_argument("experiment")
    c.add_argument("--all", action="store_true", help="list every job of the schedule")
    c.set_defaults(func=_cmd_check)

    s = sub.add_parser("start", help="start an experiment (root, reboots) or simulate it (--simulate-reboots)")
    s.add_argument("experiment")
    s.add_argument("--simulate-reboots", action="store_true",
                   help="no root, no system changes: re-execute instead of rebooting, stay in the foreground")
    s.add_argument("--state-dir", help="where state lives (default: ./<experiment name>-state)")
    s.add_argument("--debug", action="store_true",
                   help="runners write one line per in-process iteration to stderr (kept in the records' "
                        "stderr tails); recorded in the state dir, so every boot keeps it")
    s.set_defaults(func=_cmd_start)

    r = sub.add_parser("resume", help="continue an experiment (what the boot service runs)")
    r.add_argument("state_dir")
    r.add_argument("--continue", dest="continue_stopped", action="store_true",
                   help="continue an experiment that stopped on a fatal check, once the cause is fixed")
    r.add_argument("--debug", action=argparse.BooleanOptionalAction, default=None,
                   help="turn the runners' per-iteration stderr lines on (--debug) or off (--no-debug) "
                        "from this boot on; default: keep the state dir's setting")
    r.set_defaults(func=_cmd_resume)

    st = sub.add_parser("status", help="progress, ETA and last error (read only)")
    st.add_argument("state_dir")
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

    add_platform_commands(sub)     # coldrun platform show|check (read only)
    return p


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
