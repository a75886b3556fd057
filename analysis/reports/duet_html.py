"""The duet report's HTML section: per pair, the per-execution ratio plot and the two CIs side by side.

Drawn as inline SVG (no plotting library, nothing fetched), from the
``coldrun-analyze duet RESULTS`` document (analysis/duet/command.py):

- ratio plot: each pair execution's geometric mean of x/y (a dot), the
  ggms (a line) and its CI (a band), and 1.0 (dashed) for "no difference";
- the two CIs side by side on one ratio scale: duet's CI of the ratio, and
  the sequential CI of the difference of means shown as 1 + CI / mean(y),
  so their widths compare as the relative widths do (the reduction).
"""

from __future__ import annotations

import math
from html import escape

from analysis.execution_states import execution_number

from . import formats as f
from .html import page

# The report's "pairing" values (analysis.duet.native), in words.
PAIRING_WORDS = {"position": "position (barrier)", "overlap": "overlap (no barrier)",
                 "position+overlap": "overlap where run without a barrier, else position (barrier)"}

_W, _H = 460, 220
# The plot frame inside the SVG: room on the left for tick labels and the axis title, below for the x axis.
_LEFT, _RIGHT, _TOP, _BOTTOM = 62, _W - 12, 12, _H - 40


def _scale(low: float, high: float, lo_px: float, hi_px: float):
    span = (high - low) or 1.0
    return lambda v: lo_px + (v - low) / span * (hi_px - lo_px)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round values (1, 2 or 5 times a power of ten) covering [low, high]."""
    span = (high - low) or abs(high) or 1.0
    raw = span / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks, v = [], first
    while v <= high + step * 1e-9:
        ticks.append(round(v, 12))
        v += step
    if ticks[-1] < high:
        ticks.append(round(v, 12))
    return ticks


def ratio_plot(pair: dict) -> str:
    """Per-execution gms (dots), ggms (line), its CI (band), 1.0 (dashed, labelled): every point inside
    the frame, whose y axis has round ticks over all of them."""
    gms, (lo, hi) = pair["gms"], pair["ci"]
    ticks = nice_ticks(min(*gms, lo, hi, 1.0), max(*gms, lo, hi, 1.0))
    y = _scale(ticks[0], ticks[-1], _BOTTOM, _TOP)
    x = _scale(0, max(len(gms) - 1, 1), _LEFT + 10, _RIGHT - 10)
    parts = [f'<rect x="{_LEFT}" y="{_TOP}" width="{_RIGHT - _LEFT}" height="{_BOTTOM - _TOP}" fill="none" '
             f'stroke="#888" />',
             f'<rect x="{_LEFT}" y="{y(hi):.1f}" width="{_RIGHT - _LEFT}" height="{max(y(lo) - y(hi), 0.5):.1f}" '
             f'fill="#cde"><title>{CI_WORDS}: [{f.ratio(lo)}, {f.ratio(hi)}]</title></rect>',
             f'<line x1="{_LEFT}" x2="{_RIGHT}" y1="{y(pair["ggms"]):.1f}" y2="{y(pair["ggms"]):.1f}" stroke="#236" />',
             f'<line x1="{_LEFT}" x2="{_RIGHT}" y1="{y(1.0):.1f}" y2="{y(1.0):.1f}" stroke="#777" '
             f'stroke-dasharray="4 3" />',
             f'<text x="{_RIGHT - 4}" y="{y(1.0) - 3:.1f}" font-size="10" text-anchor="end" fill="#555">'
             f'1 = no difference</text>']
    for t in ticks:
        parts.append(f'<line x1="{_LEFT - 4}" x2="{_LEFT}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#888" />'
                     f'<text x="{_LEFT - 6}" y="{y(t) + 3.5:.1f}" font-size="10" text-anchor="end">'
                     f'{t:g}</text>')
    parts.append(f'<text transform="translate(12 {(_TOP + _BOTTOM) / 2:.0f}) rotate(-90)" font-size="11" '
                 f'text-anchor="middle">ratio x/y (geometric mean)</text>')
    step = max(1, math.ceil(len(gms) / 10))   # at most ~10 execution labels
    for i in sorted(set(range(0, len(gms), step)) | {len(gms) - 1}):
        parts.append(f'<text x="{x(i):.1f}" y="{_BOTTOM + 14}" font-size="10" text-anchor="middle">'
                     f'{execution_number(i)}</text>')
    parts += [f'<circle cx="{x(i):.1f}" cy="{y(g):.1f}" r="3" fill="#c30"><title>pair execution '
              f'{execution_number(i)}: {f.ratio(g)}</title></circle>' for i, g in enumerate(gms)]
    parts.append(f'<text x="{(_LEFT + _RIGHT) / 2:.0f}" y="{_H - 8}" font-size="11" text-anchor="middle">'
                 f'pair execution (kept iterations {escape(str(pair["iterations"]))})</text>')
    return (f'<svg width="{_W}" height="{_H}" role="img" aria-label="gms x/y per pair execution">'
            + "".join(parts) + "</svg>")


CI_WORDS = "ggms and its CI"


def ci_comparison(pair: dict) -> str:
    """Duet's CI of the ratio beside the sequential CI of x - y drawn as 1 + (x - y) / mean(y), so their
    widths compare as the relative widths do (the reduction); each labelled in its own terms."""
    seq = [1 + v / pair["y_mean"] for v in pair["sequential_ci"]]
    rows = [("duet: ratio x/y", pair["ci"],
             f"[{f.ratio(pair['ci'][0])}, {f.ratio(pair['ci'][1])}], width {f.percent(pair['relative_ci_width'])}"),
            ("sequential: 1 + (x − y) / mean y", seq,
             f"x − y {f.interval(*pair['sequential_ci'])}, width {f.percent(pair['sequential_relative_ci_width'])} "
             f"of mean y ({f.duration(pair['y_mean'])})")]
    ticks = nice_ticks(min(v for _, ci, _ in rows for v in ci + [1.0]), max(v for _, ci, _ in rows for v in ci + [1.0]))
    x = _scale(ticks[0], ticks[-1], 24, _W - 24)   # room for the end ticks' labels
    height = 140
    parts = [f'<line x1="24" x2="{_W - 24}" y1="{height - 30}" y2="{height - 30}" stroke="#888" />']
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{height - 30}" y2="{height - 26}" stroke="#888" />'
                     f'<text x="{x(t):.1f}" y="{height - 16}" font-size="10" text-anchor="middle">{t:g}</text>')
    parts.append(f'<text x="{_W / 2:.0f}" y="{height - 3}" font-size="11" text-anchor="middle">'
                 f'ratio scale (1 = no difference)</text>')
    for i, (label, (lo, hi), numbers) in enumerate(rows):
        yy = 16 + 46 * i
        parts.append(f'<text x="12" y="{yy}" font-size="11">{escape(label)}</text>')
        # 1 (no difference) beside each bar only, so the line crosses no text
        parts.append(f'<line x1="{x(1.0):.1f}" x2="{x(1.0):.1f}" y1="{yy + 2}" y2="{yy + 18}" stroke="#777" '
                     f'stroke-dasharray="3 2" />')
        parts.append(f'<rect x="{x(lo):.1f}" y="{yy + 5}" width="{max(x(hi) - x(lo), 1):.1f}" height="10" '
                     f'fill="{"#236" if i == 0 else "#c30"}"><title>{escape(numbers)}</title></rect>')
        parts.append(f'<text x="12" y="{yy + 28}" font-size="10">{escape(numbers)}</text>')
    return (f'<svg width="{_W}" height="{height}" role="img" aria-label="duet and sequential CIs">'
            + "".join(parts) + "</svg>")


def duet_section(doc: dict) -> str:
    """One block per pair: the figures and the numbers they show."""
    blocks = ["<h2>Duet benchmarking</h2>\n<p>x = side a, y = side b of each completed pair execution; "
              f"{doc['pairs'][0]['confidence'] * 100:g}% percentile-bootstrap CIs (Bulej et al. 2020). "
              "Duet's interval is of the ratio x/y; the sequential baseline's is of the difference of the "
              "executions' mean times x − y, drawn on the ratio scale as 1 + (x − y) / mean y.</p>"
              if doc["pairs"] else "<h2>Duet benchmarking</h2>"]
    for p in doc["pairs"]:
        reduction = "none (zero-width duet CI)" if p["reduction"] is None else f"{f.ratio(p['reduction'])}&#215;"
        left = (" Left out: " + ", ".join(f"{execution_number(int(k))} {escape(v)}" for k, v in p["left_out"].items())
                + "." if p["left_out"] else "")
        unreliable = ("" if p["ci_reliable"] else " (unreliable under 30 executions; t on log gms: [%s, %s])"
                      % tuple(f.ratio(v) for v in p["t_ci"]))
        blocks.append(
            f'<h3>{escape(p["a"])} / {escape(p["b"])}</h3>\n'
            f'<p>ratio x/y (ggms) {f.ratio(p["ggms"])}, CI [{f.ratio(p["ci"][0])}, {f.ratio(p["ci"][1])}]'
            f'{unreliable}; '
            f'sequential x − y {escape(f.signed_duration(p["sequential_difference"]))}, CI '
            f'{escape(f.interval(*p["sequential_ci"]))}; reduction of the relative CI width '
            f'(sequential / duet) {reduction}; seed {p["seed"]}; iterations paired by '
            f'{PAIRING_WORDS.get(p.get("pairing"), PAIRING_WORDS["position"])}.{left} '
            f'Procedure: {escape(p["procedure"])}.</p>\n'
            f'<div class="plots"><figure>{ratio_plot(p)}<figcaption>x/y per pair execution: dots, each pair '
            f'execution\'s geometric mean; line and band, the ggms and its CI; dashed, 1 (no difference)'
            f'</figcaption></figure>'
            f'<figure>{ci_comparison(p)}<figcaption>the two CIs side by side</figcaption></figure></div>')
    return "\n".join(blocks) + "\n"


def duet_page(doc: dict) -> str:
    return page(f"duet: {doc['results']}", duet_section(doc))
