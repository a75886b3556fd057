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

from html import escape

from analysis.execution_states import execution_number

from .html import page

# The report's "pairing" values (analysis.duet.native), in words.
PAIRING_WORDS = {"position": "position (barrier)", "overlap": "overlap (no barrier)",
                 "position+overlap": "overlap where run without a barrier, else position (barrier)"}

_W, _H, _PAD = 420, 160, 34


def _scale(low: float, high: float, lo_px: float, hi_px: float):
    span = (high - low) or 1.0
    return lambda v: lo_px + (v - low) / span * (hi_px - lo_px)


def ratio_plot(pair: dict) -> str:
    """Per-execution gms (dots), ggms (line), its CI (band), 1.0 (dashed)."""
    gms, (lo, hi) = pair["gms"], pair["ci"]
    values = [*gms, lo, hi, 1.0]
    pad = (max(values) - min(values)) * 0.1 or 0.01
    y = _scale(min(values) - pad, max(values) + pad, _H - _PAD, 10)
    x = _scale(0, max(len(gms) - 1, 1), _PAD + 10, _W - 10)
    parts = [f'<rect x="{_PAD}" y="{y(hi):.1f}" width="{_W - _PAD}" height="{max(y(lo) - y(hi), 0.5):.1f}" '
             f'fill="#cde" />',
             f'<line x1="{_PAD}" x2="{_W}" y1="{y(pair["ggms"]):.1f}" y2="{y(pair["ggms"]):.1f}" stroke="#236" />',
             f'<line x1="{_PAD}" x2="{_W}" y1="{y(1.0):.1f}" y2="{y(1.0):.1f}" stroke="#999" '
             f'stroke-dasharray="4 3" />']
    parts += [f'<circle cx="{x(i):.1f}" cy="{y(g):.1f}" r="3" fill="#c30"><title>execution {i}: {g:.6g}'
              f'</title></circle>' for i, g in enumerate(gms)]
    for v in (lo, hi):
        parts.append(f'<text x="2" y="{y(v) + 4:.1f}" font-size="10">{v:.4g}</text>')
    parts.append(f'<text x="{_PAD + 10}" y="{_H - 8}" font-size="10">pair executions (kept iterations '
                 f'{pair["iterations"]}) &#8594;</text>')
    return (f'<svg width="{_W}" height="{_H}" role="img" aria-label="gms x/y per pair execution">'
            + "".join(parts) + "</svg>")


def ci_comparison(pair: dict) -> str:
    """Duet's CI of the ratio beside the sequential CI of the difference, both on the ratio scale."""
    seq = [1 + v / pair["y_mean"] for v in pair["sequential_ci"]]
    rows = [("duet (ratio)", pair["ci"], pair["relative_ci_width"]),
            ("sequential (1 + diff / mean y)", seq, pair["sequential_relative_ci_width"])]
    values = [v for _, ci, _ in rows for v in ci] + [1.0]
    pad = (max(values) - min(values)) * 0.1 or 0.01
    x = _scale(min(values) - pad, max(values) + pad, 190, _W - 10)
    parts = [f'<line x1="{x(1.0):.1f}" x2="{x(1.0):.1f}" y1="5" y2="75" stroke="#999" stroke-dasharray="4 3" />']
    for i, (label, (lo, hi), rel) in enumerate(rows):
        yy = 22 + 34 * i
        parts.append(f'<text x="2" y="{yy + 4}" font-size="11">{escape(label)}</text>')
        parts.append(f'<rect x="{x(lo):.1f}" y="{yy - 6}" width="{max(x(hi) - x(lo), 1):.1f}" height="12" '
                     f'fill="{"#236" if i == 0 else "#c30"}"><title>[{lo:.6g}, {hi:.6g}], relative width '
                     f'{rel:.3%}</title></rect>')
        parts.append(f'<text x="2" y="{yy + 17}" font-size="9">[{lo:.4g}, {hi:.4g}] width {rel:.2%}</text>')
    return f'<svg width="{_W}" height="80" role="img" aria-label="duet and sequential CIs">' + "".join(parts) + "</svg>"


def duet_section(doc: dict) -> str:
    """One block per pair: the figures and the numbers they show."""
    blocks = ["<h2>Duet benchmarking</h2>\n<p>x = side a, y = side b of each completed pair execution; "
              f"{doc['pairs'][0]['confidence'] * 100:g}% percentile-bootstrap CIs (Bulej et al. 2020).</p>"
              if doc["pairs"] else "<h2>Duet benchmarking</h2>"]
    for p in doc["pairs"]:
        reduction = "none (zero-width duet CI)" if p["reduction"] is None else f"{p['reduction']:.3g}&#215;"
        left = (" Left out: " + ", ".join(f"{execution_number(int(k))} {escape(v)}" for k, v in p["left_out"].items())
                + "." if p["left_out"] else "")
        blocks.append(
            f'<h3>{escape(p["a"])} / {escape(p["b"])}</h3>\n'
            f'<p>ggms {p["ggms"]:.6g}, CI [{p["ci"][0]:.6g}, {p["ci"][1]:.6g}]'
            f'{"" if p["ci_reliable"] else " (unreliable under 30 executions; t on log gms: [%.6g, %.6g])" % tuple(p["t_ci"])}'
            f'; reduction of the relative CI width '
            f'(sequential / duet) {reduction}; seed {p["seed"]}; iterations paired by '
            f'{PAIRING_WORDS.get(p.get("pairing"), PAIRING_WORDS["position"])}.{left} '
            f'Procedure: {escape(p["procedure"])}.</p>\n'
            f'<div class="plots"><figure>{ratio_plot(p)}<figcaption>x/y per pair execution</figcaption></figure>'
            f'<figure>{ci_comparison(p)}<figcaption>the two CIs side by side</figcaption></figure></div>')
    return "\n".join(blocks) + "\n"


def duet_page(doc: dict) -> str:
    return page(f"duet: {doc['results']}", duet_section(doc))
