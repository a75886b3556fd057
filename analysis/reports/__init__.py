"""Summary tables in three formats, from warmup_stats-shaped summary dicts.

`render_text`, `render_latex` and `render_html` take the summary JSON
(warmup_stats ``--output-json``, format "2") as a plain dict.
"""

from analysis.summary_json import SummaryFormatError, summary_rows

from .html import render_html
from .latex import render_latex
from .text import render_text

__all__ = ["render_html", "render_latex", "render_text", "summary_rows", "SummaryFormatError"]
