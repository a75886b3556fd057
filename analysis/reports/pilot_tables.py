"""Text and HTML tables of Pilot's results analysis and of a Pilot comparison.

Input: the plain dicts of ``analysis.pilot.results.reports_dict`` and
``analysis.pilot.compare.Comparison.as_dict`` (the JSON the commands print),
so every format shows the same numbers. Per key: executions, the median
stable segment and q over the executions, the mean of the execution means,
its CI width across executions and the target; per process execution: its
stable segment, q, mean, CI width and required samples, or why it has none.
"""

from __future__ import annotations

from html import escape

from analysis.execution_states import execution_number

from . import formats, html
from .text import aligned

TITLE = "Pilot analysis"
COMPARE_TITLE = "Pilot comparison"
DASH = "-"
KEY_HEADERS = ("Benchmark key", "Executions", "Usable", "Stable segment (median)", "q (median)",
               "Mean", "CI width", "Target", "Target met")
EXEC_HEADERS = ("Benchmark key", "Exec", "Iterations", "Stable segment", "q", "Mean", "CI width",
                "Required", "Note")
COMPARE_HEADERS = ("Benchmark key", "A execs", "A mean", "B execs", "B mean", "Change", "p", "dof",
                   "CI of A - B", "B execs for p", "Note")
STYLE = "details { margin-bottom: 2em; } p.settings { color: #444; }\n"


def _num(x: float | None, digits: int = 6) -> str:
    return DASH if x is None else f"{x:.{digits}g}"


def _int(x: int | None) -> str:
    return DASH if x is None else str(x)


def _segment(seg) -> str:
    return DASH if not seg else f"[{seg[0]}, {seg[1]})"


def settings_line(settings: dict) -> str:
    target = []
    if settings.get("ci_percent") is not None:
        target.append(f"{settings['ci_percent'] * 100:g}% of the mean")
    if settings.get("ci_width") is not None:
        target.append(formats.duration(settings['ci_width']))
    return (f"Stable segments by EDM (Pilot's dominant segment); CIs by subsession analysis at AC limit "
            f"{settings['ac_limit']:g}, {settings['confidence'] * 100:g}% confidence; target CI width "
            f"{' or '.join(target)} (the smaller); at least {settings['min_samples']} samples per execution "
            f"and {settings['min_executions']} executions per key. Executions are the independent samples: "
            "a key's CI is that of its executions' means.")


def not_converged(keys: list[dict]) -> str | None:
    """The sentence naming every key whose CI is still wider than the target, or None."""
    missed = [k["key"] for k in keys if not k["summary"]["target_met"]]
    if not missed:
        return None
    return (f"Not converged: {len(missed)} of {len(keys)} key(s) have a CI wider than the target "
            f"(more executions needed): {', '.join(missed)}.")


def _key_cells(k: dict) -> list[str]:
    s = k["summary"]
    met = "yes" if s["target_met"] else f"no: {s['more_executions']} more execution(s)"
    return [k["key"], str(s["executions"]), str(s["usable"]), _segment(s["median_stable_segment"]),
            _int(s["median_q"]), formats.duration(s["mean"]), formats.duration(s["ci_width"], formats.SPREAD_DIGITS),
            formats.duration(s["target_ci_width"], formats.SPREAD_DIGITS), met]


def _note(row: dict) -> str:
    """The row's reason, without the stable segment the table already shows."""
    note = row["note"]
    plain = f"stable segment {_segment(row['stable_segment'])}"
    if note.startswith(plain):
        note = note[len(plain):].lstrip("; ")
    return note


def _exec_cells(key: str, row: dict) -> list[str]:
    return [key, execution_number(row["pexec"]), str(row["iterations"]), _segment(row["stable_segment"]),
            _int(row["q"]),
            formats.duration(row["mean"]), formats.duration(row["ci_width"], formats.SPREAD_DIGITS),
            _int(row["required_samples"]), _note(row)]


def _exec_rows(keys: list[dict]) -> list[list[str]]:
    return [_exec_cells(k["key"], row) for k in keys for row in k["executions"]]


def render_text(report: dict) -> str:
    out = [TITLE, "", settings_line(report["settings"])]
    for item in report["results"]:
        out += ["", f"Machine: {item['machine']} ({item['file']})", ""]
        if not item["keys"]:
            out.append("No benchmarks.")
            continue
        out += aligned([list(KEY_HEADERS)] + [_key_cells(k) for k in item["keys"]])
        missed = not_converged(item["keys"])
        out += ["", missed] if missed else []
        out += ["", "Process executions:", ""]
        out += aligned([list(EXEC_HEADERS)] + _exec_rows(item["keys"]))
    return "\n".join(out) + "\n"


def _html_table(headers, rows: list[list[str]], numeric: set[int]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(
        f'<td class="num">{escape(c)}</td>' if i in numeric else f"<td>{escape(c)}</td>"
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"


def section(report: dict, heading: str = "Pilot: stable segments and confidence intervals") -> str:
    """The Pilot part of an HTML page: per machine the key table, the executions folded below."""
    parts = [f"<h2>{escape(heading)}</h2>\n",
             f'<p class="settings">{escape(settings_line(report["settings"]))}</p>\n']
    for item in report["results"]:
        parts.append(f"<h3>Machine: {escape(item['machine'])} ({escape(item['file'])})</h3>\n")
        if not item["keys"]:
            parts.append("<p>No benchmarks.</p>\n")
            continue
        parts.append(_html_table(KEY_HEADERS, [_key_cells(k) for k in item["keys"]], {1, 2, 4, 5, 6, 7}))
        missed = not_converged(item["keys"])
        if missed:
            parts.append(f'<p class="warning"><strong>{escape(missed)}</strong></p>\n')
        rows = _exec_rows(item["keys"])
        parts.append(f"<details><summary>Process executions ({len(rows)})</summary>\n"
                     + _html_table(EXEC_HEADERS, rows, {1, 2, 4, 5, 6, 7}) + "</details>\n")
    return f"<style>{STYLE}</style>\n" + "".join(parts)


def render_html(report: dict) -> str:
    return html.page(TITLE, section(report, heading="Stable segments and confidence intervals"))


def p_cell(k: dict) -> str:
    """p, or why there is none: Pilot's p = 0.5 for a side below 2 executions means 'cannot tell'."""
    if k["p"] is not None and k["dof"] is None:
        return f"cannot tell (n = {min(k['a']['executions'], k['b']['executions'])})"
    return _num(k["p"], 4)


def _compare_cells(k: dict) -> list[str]:
    change = DASH if k["relative_change"] is None else formats.percent(k["relative_change"])
    if k["relative_change"] is not None and k["relative_change"] >= 0:
        change = "+" + change
    ci = DASH if not k["diff_ci"] else formats.interval(*k["diff_ci"])
    return [k["key"], str(k["a"]["executions"]), formats.duration(k["a"]["mean"]), str(k["b"]["executions"]),
            formats.duration(k["b"]["mean"]), change, p_cell(k), _num(k["dof"], 4), ci,
            _int(k["executions_for_target_p"]), k["note"]]


def compare_intro(comparison: dict) -> list[str]:
    c = comparison
    lines = [f"A = {c['file_a']}, B = {c['file_b']}. Welch's t-test per key on the usable process executions' means "
             f"(Pilot's stable-segment means; executions are the independent samples). Change: (B - A) / A; "
             f"CI: {c['confidence'] * 100:g}% CI of mean(A) - mean(B); B execs for p: B's executions for "
             f"p <= {c['target_p']:g}."]
    if c["only_in_a"]:
        lines.append("Only in A (not compared): " + ", ".join(c["only_in_a"]))
    if c["only_in_b"]:
        lines.append("Only in B (not compared): " + ", ".join(c["only_in_b"]))
    return lines


def render_compare_text(comparison: dict) -> str:
    out = [COMPARE_TITLE, ""] + compare_intro(comparison) + [""]
    if comparison["keys"]:
        out += aligned([list(COMPARE_HEADERS)] + [_compare_cells(k) for k in comparison["keys"]])
    else:
        out.append("No benchmark key is in both.")
    return "\n".join(out) + "\n"


def render_compare_html(comparison: dict) -> str:
    body = "".join(f"<p>{escape(line)}</p>\n" for line in compare_intro(comparison))
    if comparison["keys"]:
        body += _html_table(COMPARE_HEADERS, [_compare_cells(k) for k in comparison["keys"]], {1, 2, 3, 4, 5, 6, 7, 9})
    else:
        body += "<p>No benchmark key is in both.</p>\n"
    return html.page(COMPARE_TITLE, body)
