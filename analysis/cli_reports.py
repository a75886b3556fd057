"""The report subcommands of ``coldrun-analyze``: table, plot, diff.

``add_report_commands(subparsers)`` registers them on the main parser; each
sets ``func`` to a callable ``func(args) -> int`` (the exit status: 0, or 2
after printing one clear line on bad input instead of a traceback).

Inputs may be, and are recognised by content:
- a summary JSON (warmup_stats ``--output-json``: top-level ``machines``);
- annotated Krun results (``wallclock_times`` plus ``classifications``,
  ``changepoints`` ...), plain or .bz2;
- raw results (Krun results, a coldrun native bundle, warmup_stats CSV),
  which go through ``analysis.pipeline`` (outliers, changepoints,
  classification) first.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .diff import DiffError, diff_summaries, render_diff
from .plots import PlotError, PlotRequest, plot_filename, plot_many
from .reports import SummaryFormatError, render_html, render_latex, render_text, summary_rows

TABLE_FORMATS = ("text", "html", "latex")
PLOT_SUFFIXES = ("png", "pdf", "svg")
ANNOTATION_KEYS = ("classifications", "changepoints", "changepoint_means", "changepoint_vars")
USER_ERROR_EXIT = 2
# Resolution of the plots embedded in the HTML report (keeps the page small).
EMBEDDED_PLOT_DPI = 72
# warmup_stats' --quality low bootstrap size.
LOW_QUALITY_RESAMPLES = 10000


class ReportInputError(Exception):
    """Bad user input for a report command; the message names file and fix."""


@dataclass
class LoadedInput:
    path: Path
    kind: str  # "summary", "annotated" or "raw"
    document: Any  # the parsed JSON (None for CSV)


def read_json(path: Path) -> Any:
    """JSON from a plain or .bz2 file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ReportInputError(f"{path}: no such file") from None
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:3] == b"BZh":
        try:
            raw = bz2.decompress(raw)
        except (OSError, ValueError, EOFError):
            raise ReportInputError(f"{path}: corrupt bzip2 data") from None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportInputError(f"{path}: not valid JSON ({exc})") from None


def classify_document(doc: Any) -> str | None:
    """'summary', 'annotated', 'raw' or None (unrecognised)."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("machines"), dict):
        return "summary"
    if doc.get("format") == "coldrun-native":
        return "raw"
    if isinstance(doc.get("wallclock_times"), dict):
        if all(k in doc for k in ANNOTATION_KEYS):
            return "annotated"
        return "raw"
    return None


def load_input(path_text: str) -> LoadedInput:
    path = Path(path_text)
    if path.suffix.lower() == ".csv":
        if not path.is_file():
            raise ReportInputError(f"{path}: no such file")
        return LoadedInput(path, "raw", None)
    doc = read_json(path)
    kind = classify_document(doc)
    if kind is None:
        raise ReportInputError(f"{path}: not a results file, annotated results or summary JSON "
                               "(expected 'wallclock_times' or 'machines' at the top level)")
    return LoadedInput(path, kind, doc)


def machine_name(results: dict) -> str:
    """warmup_stats' machine: the uname host name without its domain."""
    uname = (results.get("audit") or {}).get("uname") or ""
    parts = uname.split(" ")
    if len(parts) < 2 or not parts[1]:
        return "unknown"
    return parts[1].split(".")[0]


def _analysis_core(path: Path):
    """analysis.pipeline and analysis.summary (the analysis-core modules)."""
    try:
        from . import pipeline, summary
    except ImportError:
        raise ReportInputError(f"{path}: analysing results needs analysis.pipeline and analysis.summary, "
                               "which are not installed; pass a summary JSON") from None
    return pipeline, summary


@dataclass
class AnalysisOptions:
    """How raw results are analysed on the way to a report."""

    resamples: int | None = None  # bootstrap size; None: warmup_stats' high quality
    seed: int | None = None
    jobs: int = 1
    # Classifier settings (None: warmup_stats' defaults from the iteration count).
    window: int | None = None
    steady: int | None = None
    delta: str | None = None
    # Only for warmup_stats CSV input.
    vm: str | None = None
    language: str | None = None
    uname: str | None = None


def _core_call(path: Path, func, *args, **kwargs):
    """Run an analysis-core call; its errors already name the file."""
    try:
        return func(*args, **kwargs)
    except ValueError as exc:  # AnalysisError is a ValueError
        text = str(exc)
        raise ReportInputError(text if str(path) in text else f"{path}: {text}") from None


def to_annotated(item: LoadedInput, options: AnalysisOptions | None = None) -> dict:
    """Annotated results for a raw or annotated input."""
    options = options or AnalysisOptions()
    if item.kind == "annotated":
        return item.document
    if item.kind == "summary":
        raise ReportInputError(f"{item.path}: is a summary JSON, which has no per-iteration times; "
                               "pass the results file instead")
    pipeline, _ = _analysis_core(item.path)
    by_machine = _core_call(item.path, pipeline.load_results, [str(item.path)], vm=options.vm,
                            language=options.language, uname=options.uname)
    (results,) = by_machine.values()
    classifier = {name: getattr(options, name) for name in ("window", "steady", "delta")
                  if getattr(options, name) is not None}
    annotated = _core_call(item.path, pipeline.annotate, results, jobs=options.jobs, **classifier)
    # Later steps (summary, plots) reuse this instead of analysing again.
    item.kind, item.document = "annotated", annotated
    return annotated


def to_summary(item: LoadedInput, options: AnalysisOptions | None = None) -> dict:
    options = options or AnalysisOptions()
    if item.kind == "summary":
        try:
            summary_rows(item.document)  # validate now, so errors name the file
        except SummaryFormatError as exc:
            raise ReportInputError(f"{item.path}: {exc}") from None
        return item.document
    annotated = to_annotated(item, options)
    _, summary_module = _analysis_core(item.path)
    kwargs: dict = {"seed": options.seed, "jobs": options.jobs}
    if options.resamples is not None:
        kwargs["resamples"] = options.resamples
    return _core_call(item.path, summary_module.summarise, {machine_name(annotated): annotated}, **kwargs)


def merge_summaries(items: list[tuple[Path, dict]]) -> dict:
    """One summary from several; a (machine, VM, benchmark) may appear once."""
    if len(items) == 1:
        return items[0][1]
    merged: dict = {"warmup_format_version": items[0][1].get("warmup_format_version", "2"), "machines": {}}
    seen: dict[tuple[str, str, str], Path] = {}
    for path, summary in items:
        for machine, vms in summary["machines"].items():
            for vm, benches in vms.items():
                for bench, data in benches.items():
                    where = (machine, vm, bench)
                    if where in seen:
                        raise ReportInputError(f"{path}: {bench} on {vm} ({machine}) is also in "
                                               f"{seen[where]}; give each benchmark once")
                    seen[where] = path
                    merged["machines"].setdefault(machine, {}).setdefault(vm, {})[bench] = data
    return merged


def all_plots(annotated: dict, machine: str, jobs: int = 1) -> dict[str, bytes]:
    """PNG of every non-empty process execution, labelled 'key execution N'."""
    requests = [PlotRequest(key, pexec, machine, dpi=EMBEDDED_PLOT_DPI)
                for key in sorted(annotated.get("wallclock_times", {}))
                for pexec, times in enumerate(annotated["wallclock_times"][key]) if times]
    images = plot_many(annotated, requests, jobs)
    return {f"{r.key} execution {r.pexec}": png for r, png in zip(requests, images)}


def _write(text: str, output: str | None) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    out = Path(output)
    _write_file(out, text)
    print(f"Wrote {out}", file=sys.stderr)


def _write_file(out: Path, text: str) -> None:
    """Write via a temporary file and rename, so a failure leaves no half file."""
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReportInputError(f"{out}: cannot write ({exc.strerror or exc})") from None


def _options(args: argparse.Namespace) -> AnalysisOptions:
    resamples = {"high": None, "low": LOW_QUALITY_RESAMPLES}[getattr(args, "quality", "high")]
    extra = {name: getattr(args, name, None) for name in ("window", "steady", "delta", "vm", "language", "uname")}
    return AnalysisOptions(resamples=resamples, seed=getattr(args, "seed", None),
                           jobs=max(1, getattr(args, "jobs", 1) or 1), **extra)


def run_table(args: argparse.Namespace) -> int:
    options = _options(args)
    items = [load_input(p) for p in args.results]
    summaries = [(item.path, to_summary(item, options)) for item in items]
    summary = merge_summaries(summaries)
    if args.format == "text":
        text = render_text(summary)
    elif args.format == "latex":
        text = render_latex(summary, with_preamble=not args.without_preamble)
    else:
        plots: dict[str, bytes] = {}
        if not args.no_plots:
            sources = [item for item in items if item.kind != "summary"]
            sources += [load_input(p) for p in args.plots_from or []]
            for item in sources:
                annotated = to_annotated(item, options)
                plots.update(all_plots(annotated, machine_name(annotated), options.jobs))
        text = render_html(summary, plots or None)
    _write(text, args.output)
    return 0


def run_plot(args: argparse.Namespace) -> int:
    item = load_input(args.results)
    annotated = to_annotated(item, _options(args))
    machine = args.machine or machine_name(annotated)
    keys = sorted(annotated.get("wallclock_times", {}))
    if args.key is not None:
        if args.key not in keys:
            raise ReportInputError(f"{item.path}: no benchmark {args.key!r} (known: {', '.join(keys) or 'none'})")
        keys = [args.key]
    out_dir = Path(args.output)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportInputError(f"{out_dir}: cannot create directory ({exc.strerror or exc})") from None
    requests = []
    for key in keys:
        executions = annotated["wallclock_times"][key]
        if args.execution is not None:
            if not 0 <= args.execution < len(executions):
                raise ReportInputError(f"{item.path}: {key} has {len(executions)} process executions "
                                       f"(numbered 0 to {len(executions) - 1}); --execution {args.execution} "
                                       "does not exist")
            wanted = [args.execution]
        else:
            wanted = [i for i, times in enumerate(executions) if times]
        requests += [PlotRequest(key, pexec, machine, out_dir / plot_filename(key, pexec, "." + args.image_format))
                     for pexec in wanted]
    plot_many(annotated, requests, max(1, args.jobs))
    print(f"Wrote {len(requests)} plot(s) to {out_dir}", file=sys.stderr)
    return 0


def run_diff(args: argparse.Namespace) -> int:
    options = _options(args)
    before_item, after_item = load_input(args.before), load_input(args.after)
    before, after = to_summary(before_item, options), to_summary(after_item, options)
    classifier = None
    for item in (before_item, after_item):
        if item.kind == "annotated":
            classifier = item.document.get("classifier")
    try:
        result = diff_summaries(before, after, vms=tuple(args.vms) if args.vms else None,
                                classifier=classifier)
    except DiffError as exc:
        raise ReportInputError(f"{before_item.path} vs {after_item.path}: {exc}") from None
    if args.json:
        _write_file(Path(args.json), json.dumps(result, indent=4, sort_keys=True))
    _write(render_diff(result, args.format), args.output)
    return 0


def _guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """User errors become one line on stderr and exit status 2 (like
    analysis.errors.AnalysisError and argparse)."""

    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (ReportInputError, SummaryFormatError, PlotError, DiffError) as exc:
            print(f"coldrun-analyze {args.command}: error: {exc}", file=sys.stderr)
            return USER_ERROR_EXIT

    run.__name__ = func.__name__
    return run


def _analysis_arguments(parser: argparse.ArgumentParser, *, summary: bool = True) -> None:
    """Options that only matter when RESULTS still need analysing."""
    group = parser.add_argument_group("analysis of raw results")
    if summary:
        group.add_argument("--quality", choices=("high", "low"), default="high",
                           help="steady perf bootstrap size: 100000 (high) or 10000 (low) resamples")
        group.add_argument("--seed", type=int, help="bootstrap seed, for reproducible steady perf")
    group.add_argument("--jobs", type=int, default=1, help="worker processes (also for plotting)")
    group.add_argument("--window", type=int, help="outlier window (default: int(0.1 x iterations))")
    group.add_argument("--steady", type=int, help="steady-state iterations (default: int(0.25 x iterations))")
    group.add_argument("--delta", help='equivalence delta: seconds (default "0.001") or e.g. "1%%"')
    csv = parser.add_argument_group("warmup_stats CSV input")
    csv.add_argument("--vm", help="VM name for CSV input")
    csv.add_argument("--language", help="language for CSV input")
    csv.add_argument("--uname", help="uname -a of the machine, for CSV input")


def add_report_commands(subparsers) -> None:
    """Register table, plot and diff on an argparse subparsers object."""
    table = subparsers.add_parser("table", help="summary table (text, HTML or LaTeX)",
                                  description="Summary table from results, annotated results or summary JSON.")
    table.add_argument("results", nargs="+", metavar="RESULTS",
                       help="results file(s), annotated results or summary JSON (.json or .json.bz2)")
    table.add_argument("--format", choices=TABLE_FORMATS, default="text")
    table.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    table.add_argument("--no-plots", action="store_true",
                       help="HTML: do not embed run-sequence plots")
    table.add_argument("--plots-from", action="append", metavar="RESULTS",
                       help="HTML: embed the plots of these results (e.g. next to a summary JSON)")
    table.add_argument("--without-preamble", action="store_true",
                       help="LaTeX: only the tables, for \\input into a document")
    _analysis_arguments(table)
    table.set_defaults(func=_guarded(run_table), command="table")

    plot = subparsers.add_parser("plot", help="run-sequence plots, one file per process execution")
    plot.add_argument("results", metavar="RESULTS", help="results file or annotated results")
    plot.add_argument("-o", "--output", metavar="DIR", required=True, help="directory for the plots")
    plot.add_argument("--key", metavar="BENCH:VM:VARIANT", help="only this benchmark")
    plot.add_argument("--execution", type=int, metavar="N",
                      help="only process execution N (numbered from 0)")
    plot.add_argument("--machine", help="machine name for titles (default: from the audit's uname)")
    plot.add_argument("--image-format", choices=PLOT_SUFFIXES, default="png")
    _analysis_arguments(plot, summary=False)
    plot.set_defaults(func=_guarded(run_plot), command="plot")

    diff = subparsers.add_parser("diff", help="compare two result sets (warmup_stats' diff)")
    diff.add_argument("before", metavar="BEFORE")
    diff.add_argument("after", metavar="AFTER")
    diff.add_argument("--format", choices=TABLE_FORMATS, default="text")
    diff.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    diff.add_argument("--json", metavar="FILE", help="also write warmup_stats' diff_summary JSON")
    diff.add_argument("--vms", nargs=2, metavar=("VM_BEFORE", "VM_AFTER"),
                      help="compare VM_BEFORE in BEFORE with VM_AFTER in AFTER")
    _analysis_arguments(diff)
    diff.set_defaults(func=_guarded(run_diff), command="diff")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coldrun-analyze")
    sub = parser.add_subparsers(dest="command", required=True)
    add_report_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry for the report commands (analysis.cli adds them to
    the full coldrun-analyze parser)."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
