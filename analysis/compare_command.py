"""``coldrun-analyze compare``: the one comparison of two result sets (issue 39), and Pilot's Welch forms.

    coldrun-analyze compare A B [--confidence 0.99] [--unsteady exclude|tail] [--json [FILE]]
                                [--format text|json|html] [-o FILE]
    coldrun-analyze compare --method welch A B [Pilot's options] [--format text|json|html]
    coldrun-analyze compare --welch M1 V1 N1 M2 V2 N2 [--confidence C] [--target-p P] --json

``compare A B`` prints a header line naming the statistic and the interval, then one sentence per key
(analysis.comparison, analysis.reports.compare_report). ``--json FILE`` also writes, per key, both sides'
means and per-execution values, the ratio B/A, its CI, verdict, reason (when not compared) and notes;
``--json`` without FILE prints that JSON instead of the text. A and B are results files (Krun, coldrun's
native export, warmup_stats CSV with --vm/--language) or annotated results; raw results are annotated here
with warmup_stats' settings (--window, --steady, --delta). The Welch forms are Pilot's (analysis/pilot/
command.py documents their JSON); Pilot-only options given without ``--method welch`` are refused with
a note. ``--format html``: the sentences in a table. Bad input: one line naming the file, exit 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis import classify
from analysis.errors import AnalysisError
from analysis.pilot import command as pilot_command

METHODS = ("ratio", "welch")
WELCH_ONLY = ("target_p", "preset", "ac_limit", "ci_percent", "ci_width", "min_samples")
RATIO_ONLY = ("unsteady", "window", "steady", "delta")


def add_compare_command(subparsers, *, count) -> None:
    """Register ``compare``; ``count`` parses whole numbers (analysis.cli's)."""
    p = subparsers.add_parser(
        "compare", help="A vs B per key: B/A with its CI, in one sentence (the comparison to use)",
        description="Per benchmark key: B's steady-state time as a multiple of A's, with a CI over process "
                    "executions, in one sentence (slower / faster / no significant difference, or why it cannot "
                    "tell and what would fix it). Pilot's Welch test per key, which compare gave before: "
                    "--method welch. warmup_stats' diff table stays `coldrun-analyze diff`.")
    p.add_argument("results", nargs="*", metavar="A B", help="two results files (or annotated results)")
    p.add_argument("--method", choices=METHODS, default="ratio",
                   help="ratio (default): B/A with a t interval of its log over executions; welch: Pilot's "
                        "Welch test per key on the executions' means (compare's output before issue 39)")
    p.add_argument("--unsteady", choices=("exclude", "tail"),
                   help="ratio: an execution without a steady state is left out (exclude, default) or contributes "
                        "the mean of its last --steady iterations (tail); the sentence says which")
    p.add_argument("--json", nargs="?", const="-", metavar="FILE",
                   help="also write the JSON to FILE; without FILE print the JSON instead of the text")
    p.add_argument("--format", choices=("text", "json", "html"),
                   help="text (default), json (as --json) or html")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    classifier = p.add_argument_group("ratio: analysis of raw results (warmup_stats' classifier)")
    classifier.add_argument("--window", type=count, help="outlier window (default: int(0.1 x iterations))")
    classifier.add_argument("--steady", type=count, help="steady-state iterations (default: int(0.25 x iterations))")
    classifier.add_argument("--delta", help='equivalence delta: seconds or "N%%" (default: '
                                            f'{classify.DEFAULT_DELTA.replace("%", "%%")})')
    classifier.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    pilot_command.add_welch_options(p)
    p.set_defaults(func=run_compare)
    pilot_command.one_line_errors(p)


def run_compare(args: argparse.Namespace) -> int:
    from analysis.output import emit, write_output

    fmt = "json" if args.json == "-" else (args.format or "text")
    if args.welch is not None or args.method == "welch":
        pilot_command.refuse_options(args, RATIO_ONLY, "--method welch")
        args.format = fmt
        doc, text = pilot_command.welch_compare(args)
    else:
        given = pilot_command.given_options(args, WELCH_ONLY)
        if given:
            raise AnalysisError(f"{', '.join(given)}: Pilot's Welch comparison only; add --method welch "
                                "(compare A B gives the ratio B/A and its CI per key)")
        doc, text = _ratio(args, fmt)
    if args.json not in (None, "-"):
        write_output(Path(args.json), pilot_command.json_document(doc))
    emit(text, args.output)
    return 0


def _ratio(args: argparse.Namespace, fmt: str) -> tuple[dict, str]:
    import sys

    from analysis import comparison
    from analysis.annotated_results import read_annotations
    from analysis.errors import warning_for
    from analysis.execution_states import STATES_KEY
    from analysis.inputs import load_input, summary_given
    from analysis.pipeline import default_jobs
    from analysis.prepare import AnalysisOptions, prepare
    from analysis.reports import compare_report

    if len(args.results) != 2:
        raise AnalysisError(f"compare takes two results files A B (got {len(args.results)}), "
                            "or --welch M1 V1 N1 M2 V2 N2")
    options = AnalysisOptions(jobs=args.jobs or default_jobs(), window=args.window, steady=args.steady,
                              delta=args.delta, vm=args.vm, language=args.language, uname=args.uname,
                              progress=not args.no_progress and sys.stderr.isatty())
    items = [load_input(path) for path in args.results]   # both read first: a bad B fails before A's analysis
    for item in items:
        if item.kind == "summary":
            raise summary_given(item.path)
    sides = []
    for item in items:
        annotated = prepare(item, options, warning_for(item.path),
                            with_summary=False).annotated
        assert annotated is not None
        sides.append(read_annotations(annotated, annotated[STATES_KEY]))
    confidence = comparison.DEFAULT_CONFIDENCE if args.confidence is None else args.confidence
    unsteady = args.unsteady or "exclude"
    found = comparison.compare_results(sides[0], sides[1], confidence=confidence, unsteady=unsteady)
    names = compare_report.labels([c.key for c in found])
    doc = {"a": args.results[0], "b": args.results[1], "confidence": confidence,
           "statistic": comparison.STATISTIC, "method": comparison.METHOD, "unsteady": unsteady,
           "keys": [dict(c.as_dict(), sentence=compare_report.sentence(c, confidence, names[c.key]))
                    for c in found]}
    if fmt == "json":
        return doc, pilot_command.json_document(doc)
    render = compare_report.render_html if fmt == "html" else compare_report.render_text
    return doc, render(found, args.results[0], args.results[1], confidence)
