"""Text and HTML of a screening analysis (``coldrun-analyze screen``), rendered
from its JSON object (``analysis.screen.command`` documents the fields), so
every format shows the same numbers. The HTML section embeds the plots of
``screen_plots`` as base64 PNG (matplotlib is imported only for HTML).
"""

from __future__ import annotations

import base64
from html import escape

from . import formats, html
from .screen_names import effect_name, level_name, treatment_name
from .text import aligned

TITLE = "Screening experiment (NIST TN 1855)"
DASH = "-"
VERDICT = {True: "yes", False: "no", None: "cannot tell"}
BETWEEN_SHARE_KEY = ("Between share: the share of one execution's variance that lies between boots (an intraclass "
                     "correlation; 0 = boots do not matter); Of mean variance: the share of the variance of the "
                     "treatment's mean that the boots cause, given how many executions it has.")


def _num(x: float | None, digits: int = 4) -> str:
    return DASH if x is None else f"{x:.{digits}g}"


def _time(x: float | None, times: bool, digits: int = formats.TIME_DIGITS) -> str:
    """A response: a time (a RESULTS file's wall-clock seconds) in a scaled unit, else a plain number."""
    return formats.duration(x, digits) if times and x is not None else _num(x, digits)


def _error(analysis: dict, times: bool) -> str:
    error, resolution = analysis["monte_carlo_error"], analysis["resolution"]
    if error is None:
        return "one batch"
    if error < (resolution or 0):
        return f"Monte-Carlo error {_time(error, times, 3)} < resolution {_time(resolution, times, 3)}"
    return (f"Monte-Carlo error {_time(error, times, 3)} (resolution {_time(resolution, times, 3)} "
            "not reached: resample limit)")


def _ci(ci: list | None, times: bool = False) -> str:
    if ci is None or ci[0] is None:
        return DASH
    return formats.interval(*ci) if times else f"[{_num(ci[0])}, {_num(ci[1])}]"


def is_time(doc: dict) -> bool:
    """Responses of a RESULTS file's wall clock are seconds; counters and CSV tables have no known unit."""
    return doc.get("metric") == "wallclock" and "samples_are" in doc


def _effect_row(name: str, e: dict, material: dict, analysis: dict, times: bool) -> tuple[str, ...]:
    name = e.get("name", name)   # an alias set's name: all its members
    return (effect_name(analysis, name), _time(e["effect"], times), _ci(e["ci"], times), _num(e.get("p"), 3),
            e.get("stratum") or DASH, _num(material["effects"].get(name, {}).get("ratio"), 3))


def _tables(analysis: dict, times: bool = False) -> list[tuple[str, list[tuple[str, ...]]]]:
    """(heading, rows with a header row) of every table of one analysis."""
    level = f"{analysis['confidence'] * 100:g}% {analysis['intervals']['means']['method']} CI"
    treatments: list[tuple[str, ...]] = [("Treatment", "n", "Mean", level)]
    treatments += [
        (treatment_name(analysis, t["levels"]), str(t["n"]), _time(t["mean"], times), _ci(t["ci"], times))
        for t in analysis["treatments"]]
    material = analysis["material_significance"]
    effects: list[tuple[str, ...]] = [
        ("Effect (aliases)", "Estimate", f"{analysis['confidence'] * 100:g}% CI", "p", "Tested",
         f"|effect| / CI width at n={material['sample_size']}")]
    for factor, by_level in analysis["main_effects"].items():
        for lv, e in by_level.items():
            effects.append(_effect_row(f"{factor}={lv}", e, material, analysis, times))
    for name, e in analysis["interactions"].items():
        effects.append(_effect_row(name, e, material, analysis, times))
    blocks: list[tuple[str, ...]] = [("Primary factor", "Complete boxes", "Consistent ordering", "Ordering", "Chance")]
    blocks += [
        (f, str(p["complete_boxes"]), VERDICT[p["consistent"]],
         DASH if p["ordering"] is None else " < ".join(level_name(analysis, f, lv) for lv in p["ordering"]),
         _num(p["chance"], 4))
        for f, p in analysis["block_plots"].items()]
    out: list[tuple[str, list[tuple[str, ...]]]] = [("Treatments", treatments), ("Effects", effects),
                                                    ("Block plots", blocks)]
    terms = analysis["anova"]["terms"]
    if terms:
        out.append(("ANOVA (balanced design)", [("Term", "Stratum", "df", "Sum sq", "F", "p")] + [
            (name, t.get("stratum", DASH), _num(t["df"]), _num(t["sum_sq"]), _num(t["F"], 4), _num(t["p"], 3))
            for name, t in terms.items()]))
    return out


def _settings(analysis: dict, times: bool = False) -> str:
    error = _error(analysis, times)
    material = analysis["material_significance"]
    chosen = analysis["intervals"]
    resampled = (f"{analysis['resamples']} resamples in {analysis['batches']} batch(es), {error}; seed "
                 f"{analysis['seed']}" if analysis["resamples"] else "no resampling")
    return (f"{analysis['samples']} samples; means: {chosen['means']['method']} intervals "
            f"({chosen['means']['reason']}); "
            f"effects: {chosen['effects']['method']} intervals ({chosen['effects']['reason']}); {resampled}. "
            f"{_whole_plot(analysis)}Material significance: CI width of one treatment mean at "
            f"n={material['sample_size']} is {_time(material['ci_width'], times, 3)}; median |effect| "
            f"{_time(material['median_effect'], times, 3)}, max {_time(material['max_effect'], times, 3)}. "
            f"{_coverage(material)}")


def _whole_plot(analysis: dict) -> str:
    plot = analysis.get("whole_plot")
    if not plot:
        return ""
    return (f"Whole plots: {', '.join(plot['factors'])} tested between {plot['batches']} batches of "
            f"{plot['combinations']} level combination(s), {plot['dof']} degree(s) of freedom. ")


def _coverage(material: dict) -> str:
    cov = material["coverage"]
    if cov["reason"]:
        return f"No coverage study: {cov['reason']}."
    return (f"Coverage of nominal {cov['nominal'] * 100:g}% intervals at n={cov['sample_size']} "
            f"({cov['subsamples']} subsamples of treatment {cov['treatment']}): t {cov['t_coverage']:.1%}, "
            f"BCa {cov['bca_coverage']:.1%}.")


def _notes(doc_or_analysis: dict) -> list[str]:
    notes = list(doc_or_analysis.get("notes", []))
    if doc_or_analysis.get("aliases"):
        named = ((lambda a: effect_name(doc_or_analysis, a)) if "factors" in doc_or_analysis else str)
        notes.append("aliased effects, each estimated once and named by all its members: "
                     + "; ".join(named(a) for a in doc_or_analysis["aliases"]))
    anova = doc_or_analysis.get("anova")
    if anova and not anova["balanced"]:
        notes.append(f"no ANOVA: {anova['reason']}")
    elif anova and anova["reason"]:
        notes.append(f"ANOVA: {anova['reason']}")
    plot = doc_or_analysis.get("whole_plot")
    if plot and plot["why"]:
        notes.append(f"no CI or p-value for whole-plot effects: {plot['why']}")
    return notes


def _boots_rows(doc: dict) -> list[tuple[str, ...]]:
    return [("Group", "Executions", "Between share", "CI", "Of mean variance")] + [
        (g, str(b["executions"]), _num(b["between_share"], 3), _ci(b["ci"]),
         DASH if b["mean_variance_between_share"] is None else f"{b['mean_variance_between_share']:.0%}")
        for g, b in doc["boots"]["groups"].items()]


def _boot_check_rows(doc: dict) -> list[tuple[str, ...]]:
    return [("Benchmark and level", "Boots", "Between share", "CI", "p", "Boot dependency")] + [
        (g, str(b["executions"]), _num(b["between_share"], 3), _ci(b["ci"]), _num(b["p"], 3),
         VERDICT[b["boot_dependent"]])
        for g, b in doc["boot_check"]["groups"].items()]


BOOT_CHECK = ("Boot-dependency check (TN 1855: boots of one treatment per level, never pooled into the "
              "treatments; dependency = the F-test of boot means rejects at 1 - confidence)")


def _design_aliases(doc: dict) -> list[str]:
    aliases = doc.get("design_aliases")
    return [f"design aliases (from the generators): {'; '.join(' = '.join(g) for g in aliases)}"] if aliases else []


def _analyses(doc: dict) -> list[tuple[str, dict]]:
    out = []
    for name, analysis in doc["responses"].items():
        out.append((name, analysis))
        if "abridged" in analysis:
            out.append((f"{name}, abridged (without {'; '.join(analysis['abridged']['excluded'])})",
                        analysis["abridged"]))
    return out


def text(doc: dict) -> str:
    lines = [f"screening: {doc['source']}"]
    if "samples_are" in doc:
        lines.append(f"  design {doc.get('design') or DASH}; one sample per {doc['samples_are'][:-1]}; "
                     f"{'steady state' if doc['steady_state'] else 'all iterations'}")
    for name, analysis in _analyses(doc):
        lines += ["", f"== {name} ==", _settings(analysis, is_time(doc))]
        for heading, rows in _tables(analysis, is_time(doc)):
            lines += ["", heading] + aligned(rows)
        lines += [f"note: {n}" for n in _notes(analysis)]
    lines += _design_aliases(doc)
    if doc.get("boot_check"):
        lines += ["", BOOT_CHECK] + aligned(_boot_check_rows(doc))
    if "boots" in doc:
        lines += ["", "Boot dependency (between-boot share per benchmark and treatment)"]
        lines += aligned(_boots_rows(doc)) + [BETWEEN_SHARE_KEY]
        lines += [f"warning: {w}" for w in doc["boots"]["warnings"]]
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    return "\n".join(lines) + "\n"


def _table_html(rows: list[tuple[str, ...]]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in rows[0])
    body = "\n".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"


def _img(png: bytes | None, alt: str) -> str:
    """At its own size (class natural): a plot stretched to the page's width is blurred."""
    if png is None:
        return ""
    return (f'<figure class="natural"><img alt="{escape(alt)}" '
            f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">') + \
           f"<figcaption>{escape(alt)}</figcaption></figure>\n"


def section(doc: dict, dpi: int = 90, heading: bool = True) -> str:
    """The report section: per response, its tables and plots; then boot dependency. Without
    `heading` (a page of its own, whose title is the same) no h2 repeats it."""
    from . import screen_plots as plots

    times = is_time(doc)
    title = f"<h2>{escape(TITLE)}</h2>\n" if heading else ""
    parts = [f"<section>\n{title}<p>{escape(doc['source'])}</p>\n"]
    for name, analysis in _analyses(doc):
        parts.append(f"<h3>{escape(name)}</h3>\n<p class=\"settings\">{escape(_settings(analysis, times))}</p>\n")
        for heading_text, rows in _tables(analysis, times):
            parts.append(f"<h4>{escape(heading_text)}</h4>\n" + _table_html(rows))
        parts.append(_img(plots.block_plots_png(analysis, dpi, times), f"{name}: block plots"))
        parts.append(_img(plots.main_effects_png(analysis, dpi, times), f"{name}: main effects"))
        parts.append(_img(plots.interactions_png(analysis, dpi, times), f"{name}: 2-factor interactions"))
        parts.append(_img(plots.half_normal_png(analysis, dpi, times), f"{name}: half-normal plot of effects"))
        parts += [f"<p>note: {escape(n)}</p>\n" for n in _notes(analysis)]
    parts += [f"<p>{escape(line)}</p>\n" for line in _design_aliases(doc)]
    if doc.get("boot_check"):
        parts.append(f"<h3>{escape(BOOT_CHECK)}</h3>\n" + _table_html(_boot_check_rows(doc)))
    if "boots" in doc:
        parts.append("<h3>Boot dependency</h3>\n" + _table_html(_boots_rows(doc))
                     + f"<p>{escape(BETWEEN_SHARE_KEY)}</p>\n")
        parts += [f"<p>warning: {escape(w)}</p>\n" for w in doc["boots"]["warnings"]]
    parts.append("</section>\n")
    return "".join(parts)


def page(doc: dict) -> str:
    return html.page(TITLE, section(doc, heading=False))
