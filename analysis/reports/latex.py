"""LaTeX summary table in the layout of the warmup paper (warmup_stats' table).

Columns: benchmark, VM, Class., Steady iter (#), Steady iter (time), Steady perf (time).
Classes are drawn by the macros ``\\flatc \\warmup \\slowdown \\nosteadystate
\\goodinconsistent \\badinconsistent``; the preamble defines them with plain
LaTeX picture commands so the document needs only packages from
texlive-latex-base/-recommended (longtable, booktabs, xcolor, geometry).
Steady iter (#) carries a 10-bin histogram sparkline with the median's bin red.
"""

from __future__ import annotations

from typing import AbstractSet, Sequence

from analysis.execution_states import execution_number
from analysis.summary_json import FailedRow, SummaryRow, bootstrap_settings

from . import formats
from .rows import FAILED_HEADERS, by_machine, failed_phrase, failed_summary, histogram, last_note, sorted_counts

CLASS_MACROS = {
    "flat": r"\flatc",
    "warmup": r"\warmup",
    "slowdown": r"\slowdown",
    "no steady state": r"\nosteadystate",
    "good inconsistent": r"\goodinconsistent",
    "bad inconsistent": r"\badinconsistent",
}

# Picture-mode drawings (kernel \qbezier only) 12pt wide, 6pt high.
SYMBOL_DEFINITIONS = r"""
\newcommand{\classpic}[1]{{\setlength{\unitlength}{1pt}\linethickness{0.6pt}\begin{picture}(12,7)#1\end{picture}}}
\newcommand{\flatc}{\classpic{\qbezier(0,3)(6,3)(12,3)}}
\newcommand{\warmup}{\classpic{\qbezier(0,7)(1.5,1)(5,1)\qbezier(5,1)(8.5,1)(12,1)}}
\newcommand{\slowdown}{\classpic{\qbezier(0,1)(1.5,6)(5,6)\qbezier(5,6)(8.5,6)(12,6)}}
\newcommand{\nosteadystate}{\classpic{\qbezier(0,1)(1.5,3.5)(3,6)\qbezier(3,6)(4.5,3.5)(6,1)\qbezier(6,1)(7.5,3.5)(9,6)\qbezier(9,6)(10.5,3.5)(12,1)}}
\newcommand{\goodinconsistent}{\classpic{{\color{darkgreen}\qbezier(0,7)(1.5,2)(5,2)\qbezier(5,2)(8.5,2)(12,2)\qbezier(0,5)(6,5)(12,5)}}}
\newcommand{\badinconsistent}{\classpic{{\color{darkred}\qbezier(0,1)(1.5,6)(5,6)\qbezier(5,6)(8.5,6)(12,6)\qbezier(0,1)(3,4)(6,1)\qbezier(6,1)(9,4)(12,1)}}}
"""

# A paper's page: A4 portrait, 2.5 cm margins, a text width of ~455 pt (US
# letter with 1-inch margins: 469 pt). Every table's columns are fractions of
# \linewidth, so the tables fit there and in any wider text; and because no
# column's width depends on its content, one pdflatex pass is enough.
PREAMBLE = r"""% One pdflatex pass suffices: every longtable column has a fixed width.
\documentclass[10pt]{article}
\usepackage[a4paper,margin=2.5cm]{geometry}
\usepackage{array}
\usepackage{longtable}
\usepackage{booktabs}
\usepackage[table]{xcolor}
\definecolor{darkgreen}{rgb}{0.0,0.5,0.0}
\definecolor{darkred}{rgb}{0.7,0.0,0.0}
\definecolor{lightgreen}{rgb}{0.75,0.95,0.75}
\definecolor{lightred}{rgb}{1.0,0.75,0.75}
\definecolor{lightyellow}{rgb}{1.0,1.0,0.6}
""" + SYMBOL_DEFINITIONS + r"""\newcommand{\ccell}[2]{\cellcolor{#1}#2}
\begin{document}
"""

SYMBOL_KEY = (r"\noindent\textbf{Classes:} \flatc\ flat, \warmup\ warmup, \slowdown\ slowdown, "
              r"\nosteadystate\ no steady state, \goodinconsistent\ good inconsistent, "
              r"\badinconsistent\ bad inconsistent." "\n\n")

def column_spec(widths: list[float], numeric: AbstractSet[int] = frozenset()) -> str:
    """Fixed-width columns, each a fraction of \\linewidth (summing to at most 1),
    ragged, numbers right-aligned, so long cells wrap instead of running off the page; the empty
    skip lets TeX hyphenate a cell's first word (it never hyphenates the first word of a paragraph)."""
    align = {True: r"\raggedleft", False: r"\raggedright"}
    return "".join(r">{%s\arraybackslash\hspace{0pt}}p{\dimexpr %.3f\linewidth-2\tabcolsep\relax}"
                   % (align[i in numeric], w)
                   for i, w in enumerate(widths))


TABLE_SPEC = column_spec([0.16, 0.12, 0.19, 0.17, 0.18, 0.18], numeric={3, 4, 5})
HEADER = r"Benchmark & VM & Class. & Steady iter (\#) & Steady iter (time) & Steady perf (time)\\"

_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: str) -> str:
    """LaTeX-safe text; µ, ±, Δ, ×, ≈ (the formats' signs) in math mode."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text).replace("µ", r"$\mu$").replace(
        "±", r"$\pm$").replace("Δ", r"$\Delta$").replace("×", r"$\times$").replace("≈", r"$\approx$")



def name(text: str) -> str:
    """A benchmark or VM name that may break after '_' or '/' in a narrow column."""
    return escape(text).replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")


def class_cell(row: SummaryRow) -> str:
    """The class macro; inconsistent pairs add their counts, most frequent first."""
    return _class_only(row) + (r" {\scriptsize[%s]}" % escape(failed_phrase(row.failed)) if row.failed else "")


def _class_only(row: SummaryRow) -> str:
    macro = CLASS_MACROS[row.classification]
    if row.is_inconsistent:
        parts = [f"${n}$\\,{CLASS_MACROS[c]}" for c, n in sorted_counts(row.counts)]
        return macro + r" \scriptsize(" + ", ".join(parts) + ")"
    total = row.n_pexecs
    own = row.counts.get(row.classification, 0)
    if own != total:  # should not happen for a consistent pair; show the count
        return macro + r" \scriptsize($%d$)" % own
    return macro


def sparkline(values: list[float], width_pt: float = 20.0, height_pt: float = 7.0) -> str:
    """10-bin histogram of `values` as a picture; the median's bin in red."""
    counts, median_bin = histogram(values)
    if not counts or max(counts) == 0:
        return ""
    bar = width_pt / len(counts)
    top = max(counts)
    parts = []
    for i, n in enumerate(counts):
        if n == 0:
            continue
        h = height_pt * n / top
        rule = r"\rule{%.2fpt}{%.2fpt}" % (bar * 0.8, h)
        if i == median_bin:
            rule = r"{\color{red}" + rule + "}"
        parts.append(r"\put(%.2f,0){%s}" % (i * bar, rule))
    return (r"{\setlength{\unitlength}{1pt}\begin{picture}(%.1f,%.1f)%s\end{picture}}"
            % (width_pt, height_pt, "".join(parts)))


def _steady_iter_cell(row: SummaryRow) -> str:
    iv = row.steady_iter
    if iv is None:
        return "--"
    text = r"%s {\scriptsize(%s, %s)}" % formats.steady_iter_parts(iv)
    spark = sparkline(row.steady_iter_list)
    return f"{spark} {text}" if spark else text


def _time_to_reach_cell(row: SummaryRow) -> str:
    iv = row.steady_time_to_reach
    if iv is None:
        return "--"
    median, low, high, unit = formats.steady_time_to_reach_parts(iv)
    return r"%s {\scriptsize(%s, %s)}~%s" % (median, low, high, escape(unit))


def _perf_cell(row: SummaryRow) -> str:
    if row.steady_perf is None and row.last_iterations is not None:
        mean, half, unit, n = formats.last_iterations_parts(row.last_iterations)
        spread = "" if half is None else r" {\scriptsize$\pm %s$}" % half
        return r"$\approx %s$%s~%s {\scriptsize(last %s)}" % (mean, spread, escape(unit), n)
    if row.steady_perf is None or row.steady_perf_ci is None:
        return "--"
    median, half, unit = formats.steady_perf_parts(row.steady_perf, row.steady_perf_ci)
    return r"$%s$ {\scriptsize$\pm %s$}~%s" % (median, half, escape(unit))


def row_cells(row: SummaryRow, vm_cell: str) -> list[str]:
    return [name(row.bench), vm_cell, class_cell(row), _steady_iter_cell(row),
            _time_to_reach_cell(row), _perf_cell(row)]


def longtable(rows: list[SummaryRow], cells=row_cells, spec: str = TABLE_SPEC,
              header: str = HEADER) -> str:
    """The longtable body; VM groups separated by rules, the VM named once."""
    out = [r"\begin{longtable}{%s}" % spec, r"\toprule", header, r"\midrule", r"\endhead",
           r"\bottomrule", r"\endfoot"]
    previous = None
    for row in rows:
        group = (row.machine, row.vm)
        if previous is not None and group != previous:
            out.append(r"\midrule")
        vm_cell = r"\textbf{%s}" % name(row.vm) if group != previous else ""
        out.append(" & ".join(cells(row, vm_cell)) + r" \\")
        previous = group
    out.append(r"\end{longtable}")
    return "\n".join(out) + "\n"


def failed_tabular(rows: list[FailedRow]) -> str:
    """The process executions without data: counted, then one row each."""
    spec = column_spec([0.3, 0.2, 0.2, 0.3], numeric={2})
    out = [escape(failed_summary(rows)) + ".", "", r"\begin{longtable}{%s}" % spec, r"\toprule",
           " & ".join(FAILED_HEADERS) + r"\\", r"\midrule"]
    out += [f"{name(r.bench)} & {name(r.vm)} & {escape(execution_number(r.index))} & {escape(r.label)} \\\\"
            for r in rows]
    out += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(out) + "\n"


def bootstrap_footer(summary: dict) -> str:
    """How steady perf was bootstrapped (the seed), under the tables."""
    notes = [formats.bootstrap_note(bootstrap_settings(summary))] + last_note(summary)
    return "\n\n".join(r"\noindent{\footnotesize %s}" % escape(n) for n in notes) + "\n"


def render_latex(summary: dict, with_preamble: bool = True, notes: Sequence[str] = (), rule: str | None = None) -> str:
    """A complete document (or, without the preamble, just the tables to \\input
    into a paper that defines the class macros itself: see SYMBOL_DEFINITIONS).
    ``notes``: lines printed under the tables (the flagged executions); ``rule``: the line naming the
    classes' equivalence rule (analysis.reports.provenance.equivalence_note), under the bootstrap's."""
    machines = by_machine(summary)
    body: list[str] = []
    for machine, mine, no_data in machines:
        body.append(r"\section*{%s}" % escape(machine))
        if mine:
            body.append(longtable(mine))
        if no_data:
            body.append(failed_tabular(no_data))
    if not machines:
        body.append("No benchmarks in this summary.\n")
    if notes:
        body.append("\\noindent %s\n\\begin{itemize}\n%s\\end{itemize}\n"
                    % (escape(notes[0]), "".join("\\item %s\n" % escape(n.strip()) for n in notes[1:])))
    body.append(bootstrap_footer(summary))
    if rule:
        body.append(r"\noindent{\footnotesize %s}" % escape(rule) + "\n")
    if not with_preamble:
        return "\n".join(body)
    return PREAMBLE + SYMBOL_KEY + "\n".join(body) + "\\end{document}\n"
