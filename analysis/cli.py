"""``coldrun-analyze``: warmup_stats' analysis without R.

    coldrun-analyze annotate RESULTS -o ANNOTATED.json.bz2
    coldrun-analyze summary RESULTS... -o summary.json
    coldrun-analyze table|plot|diff ...      (report commands, analysis.cli_reports)

Options keep warmup_stats' defaults: --window int(0.1 x iterations),
--steady int(0.25 x iterations), --delta 0.001 (seconds, or "N%"),
--resamples 100000 (--quality low: 10000), --confidence 0.99. --seed makes
the bootstrap reproducible. Bad input ends in one line naming the file and
the problem, exit status 2; problems that leave the rest analysable are
warnings on stderr.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Sequence

from analysis import bootstrap, classify
from analysis.errors import AnalysisError

PROG = "coldrun-analyze"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return value


def _delta(text: str) -> str:
    try:
        classify.parse_delta(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))
    return text


def _confidence(text: str) -> str:
    try:
        level = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.99, got {text!r}")
    if not (0 < level < 1):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (exclusive), got {text!r}")
    return text


def _add_input_options(p: argparse.ArgumentParser) -> None:
    csv = p.add_argument_group("warmup_stats CSV input")
    csv.add_argument("--vm", help="VM / implementation name for CSV input (key bench:VM:default-LANGUAGE)")
    csv.add_argument("--language", help="language for CSV input")
    csv.add_argument("--uname", help="uname -a of the machine, for CSV input (machine = its second word)")


def _add_classifier_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=_positive_int, help="outlier window (default: int(0.1 x iterations))")
    p.add_argument("--steady", type=_positive_int, help="steady state expected before the last N iterations "
                   "(default: int(0.25 x iterations))")
    p.add_argument("--delta", type=_delta, default=classify.DEFAULT_DELTA,
                   help='equivalence delta: seconds (default "0.001") or a percentage such as "1%%"')
    p.add_argument("--jobs", "-j", type=_positive_int, default=None,
                   help="worker processes (default: one per CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="warmup_stats-exact analysis of benchmark results.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ann = sub.add_parser("annotate", help="add outliers, changepoints and classifications to results",
                         description="Write the results with warmup_stats' annotation keys added (Krun format).")
    ann.add_argument("results", metavar="RESULTS", help="Krun results (.json/.json.bz2), coldrun native export or CSV")
    ann.add_argument("-o", "--output", required=True, metavar="ANNOTATED",
                     help="output file (bzip2-compressed when the name ends .bz2)")
    _add_input_options(ann)
    _add_classifier_options(ann)
    ann.set_defaults(func=run_annotate)

    summ = sub.add_parser("summary", help="warmup_stats' summary JSON (--output-json)",
                          description="Summarise results (one file per machine) as warmup_stats' JSON.")
    summ.add_argument("results", nargs="+", metavar="RESULTS")
    summ.add_argument("-o", "--output", required=True, metavar="SUMMARY_JSON")
    _add_input_options(summ)
    _add_classifier_options(summ)
    summ.add_argument("--resamples", type=_positive_int, default=None,
                      help=f"bootstrap resamples (default {bootstrap.RESAMPLES_HIGH})")
    summ.add_argument("--quality", choices=("high", "low"), default="high",
                      help=f"high: {bootstrap.RESAMPLES_HIGH} resamples, low: {bootstrap.RESAMPLES_LOW}")
    summ.add_argument("--confidence", type=_confidence, default=bootstrap.CONFIDENCE_LEVEL,
                      help="bootstrap confidence level (default 0.99, as warmup_stats)")
    summ.add_argument("--seed", type=int, default=None, help="seed the bootstrap for reproducible results")
    summ.set_defaults(func=run_summary)

    try:
        from analysis.cli_reports import add_report_commands
    except ImportError:  # reports not installed: the core commands still work
        pass
    else:
        add_report_commands(sub)
    return parser


def _jobs(args: argparse.Namespace) -> int:
    from analysis.pipeline import default_jobs

    return args.jobs if args.jobs else default_jobs()


def _progress(args: argparse.Namespace) -> bool:
    """A progress bar only on a terminal, unless --no-progress."""
    return not args.no_progress and sys.stderr.isatty()


def _write(path: Path, text: str) -> None:
    """Write atomically (temp file + rename) so a failure never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        if path.name.endswith(".bz2"):
            with bz2.open(tmp, "wt", encoding="utf-8") as fh:
                fh.write(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise AnalysisError(f"{path}: cannot write ({exc.strerror or exc})")


def run_annotate(args: argparse.Namespace) -> int:
    from analysis.pipeline import annotate, load_results

    by_machine = load_results([args.results], vm=args.vm, language=args.language, uname=args.uname)
    (results,) = by_machine.values()
    annotated = annotate(results, window=args.window, steady=args.steady, delta=args.delta,
                         jobs=_jobs(args), progress=_progress(args))
    _write(Path(args.output), json.dumps(annotated, indent=4))
    return 0


def run_summary(args: argparse.Namespace) -> int:
    from analysis.pipeline import annotate, load_results
    from analysis.summary import dumps, summarise

    by_machine = load_results(args.results, vm=args.vm, language=args.language, uname=args.uname)
    jobs = _jobs(args)
    annotated = {
        machine: annotate(results, window=args.window, steady=args.steady, delta=args.delta,
                          jobs=jobs, progress=_progress(args))
        for machine, results in by_machine.items()
    }
    resamples = args.resamples if args.resamples else (
        bootstrap.RESAMPLES_LOW if args.quality == "low" else bootstrap.RESAMPLES_HIGH)
    if resamples < 1:
        raise AnalysisError("--resamples must be at least 1")
    summary = summarise(annotated, resamples=resamples, seed=args.seed, confidence=args.confidence,
                        jobs=jobs, progress=_progress(args))
    _write(Path(args.output), dumps(summary))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AnalysisError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
