"""The sentences of ``coldrun-analyze compare A B`` (analysis.comparison), one per benchmark key, as
pyperf's ``compare_to`` words them (text; HTML: the same sentences in a table, slower red, faster green,
not compared yellow, as diff colours its verdicts)::

    fib:python: 847.0 µs → 1.160 ms: 1.37× slower (99% CI 1.30×–1.45×)
    fib:c: 655.1 µs → 640.2 µs: no significant difference (99% CI 0.95×–1.02×)
    sieve:c: not compared: one execution only in A; run ≥ 2 executions per side

A slowdown's factor and interval are B/A, a speed-up's A/B (so both read "N× slower/faster" with N > 1),
"no significant difference" shows the interval of B/A. Factors get 2 decimals, more (up to 4) where 2
would show distinct numbers alike or a significant change as 1.00. The method is named once, in the
header line.
"""

from __future__ import annotations

from html import escape

from contracts.keys import Key
from analysis.comparison import FASTER, METHOD, NOT_COMPARED, SLOWER, STATISTIC, KeyComparison

from . import formats, html

TITLE = "Comparison"
CSS = {SLOWER: "worse", FASTER: "better", NOT_COMPARED: "different"}

WELCH_HINT = "Welch's test per key (Pilot), as compare gave it before: compare --method welch A B"


def level(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def header(path_a: str, path_b: str, confidence: float) -> str:
    return f"A = {path_a}, B = {path_b}. Per key: {STATISTIC}; {level(confidence)} CI: {METHOD}; significant " \
           "when it excludes 1"


def factors(values: list[float], significant: bool) -> list[str]:
    """The same number of decimals for all (module doc); a factor under 0.1 or from 10 up (the ends of a
    very wide interval) with 3 significant digits."""
    texts: list[str] = []
    for decimals in (2, 3, 4):
        texts = [f"{v:.{decimals}f}" if 0.1 <= v < 10 else formats.significant(v, 3) for v in values]
        one = f"{1:.{decimals}f}"
        if len(set(texts)) == len(set(values)) and not (significant and one in texts):
            break
    return texts


def labels(keys: list[str]) -> dict[str, str]:
    """bench:vm where that names one key (the table shows no variant), else the whole key."""
    short = {k: f"{Key.parse(k).benchmark}:{Key.parse(k).vm}" for k in keys}
    return short if len(set(short.values())) == len(short) else {k: k for k in keys}


def sentence(c: KeyComparison, confidence: float, label: str | None = None) -> str:
    name = label or c.key
    if c.verdict == NOT_COMPARED or c.interval is None:
        return f"{name}: not compared: {c.reason}"
    assert c.a is not None and c.b is not None
    iv = c.interval
    change = f"{formats.duration(c.a.mean)} → {formats.duration(c.b.mean)}"
    if c.verdict == SLOWER:
        factor, low, high = factors([iv.ratio, iv.low, iv.high], True)
        text = f"{name}: {change}: {factor}× slower ({level(confidence)} CI {low}×–{high}×)"
    elif c.verdict == FASTER:
        factor, low, high = factors([1 / iv.ratio, 1 / iv.high, 1 / iv.low], True)
        text = f"{name}: {change}: {factor}× faster ({level(confidence)} CI {low}×–{high}×)"
    else:
        low, high = factors([iv.low, iv.high], False)
        text = f"{name}: {change}: no significant difference ({level(confidence)} CI {low}×–{high}×)"
    return text + "".join(f"; {n}" for n in c.notes)


def render_text(comparisons: list[KeyComparison], path_a: str, path_b: str, confidence: float) -> str:
    names = labels([c.key for c in comparisons])
    lines = [header(path_a, path_b, confidence)]
    lines += [sentence(c, confidence, names[c.key]) for c in comparisons] or ["No benchmark key in A or B."]
    return "\n".join(lines + ["", WELCH_HINT]) + "\n"


def render_html(comparisons: list[KeyComparison], path_a: str, path_b: str, confidence: float) -> str:
    names = labels([c.key for c in comparisons])
    rows = []
    for c in comparisons:
        verdict = sentence(c, confidence, names[c.key]).removeprefix(names[c.key] + ": ")
        css = f' class="{CSS[c.verdict]}"' if c.verdict in CSS else ""
        rows.append(f"<tr><td>{escape(c.key)}</td><td{css}>{escape(verdict)}</td></tr>")
    table = ("<table>\n<thead><tr><th>Benchmark key</th><th>B against A</th></tr></thead>\n<tbody>\n"
             + "\n".join(rows) + "\n</tbody>\n</table>\n") if rows else "<p>No benchmark key in A or B.</p>\n"
    body = f"<p>{escape(header(path_a, path_b, confidence))}</p>\n{table}<p>{escape(WELCH_HINT)}</p>\n"
    return html.page(TITLE, body)
