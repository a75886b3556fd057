"""Open an HTML page in headless Chromium (Debian's package) at a given width, run a check in the page and
keep a full-page screenshot. The network is closed and the page must need none: every background
service is off and each run gets a fresh profile."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from real_parts import missing_real_part

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--allow-file-access-from-files")

# Runs in the page once it has loaded; its answer replaces the document's title, which --dump-dom prints.
# Overflow: any table, figure, image or svg whose right edge passes the viewport, or a page wider than it.
CHECK = """
window.addEventListener('load', () => {
  const width = document.documentElement.clientWidth;
  const over = [];
  for (const el of document.querySelectorAll('table, figure, img, svg, pre, h1, h2, h3, p')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > width + 0.5) over.push(el.tagName + ' ' + (el.id || el.textContent.slice(0, 40)) + ' right ' + Math.round(r.right));
  }
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt || i.src.slice(0, 40));
  const doc = {width: width, scrollWidth: document.documentElement.scrollWidth, overflow: over,
               broken: broken, images: document.images.length};
  document.title = 'CHECK:' + JSON.stringify(doc);
});
"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        missing_real_part("chromium is not installed (apt-get install -y --no-install-recommends chromium; "
                          "scripts/setup --for-tests)")
    return found


def _run(page: Path, *args: str, width: int, height: int) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                               *args, page.as_uri()], capture_output=True, text=True, timeout=180)


def check_page(page: Path, screenshot: Path, width: int = 1400) -> dict:
    """The in-page check's findings for `page` at `width` CSS px; a full-page screenshot to `screenshot`."""
    checked = page.with_name(page.stem + ".checked.html")
    html = page.read_text()
    checked.write_text(html.replace("</body>", f"<script>{CHECK}</script></body>", 1))
    dom = _run(checked, "--dump-dom", "--virtual-time-budget=10000", width=width, height=900)
    found = re.search(r"<title>CHECK:(.*?)</title>", dom.stdout, re.S)
    assert found, f"chromium ran no check on {page}: {dom.stderr[-2000:]}"
    doc = json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                     .replace("&quot;", '"'))
    # A screenshot of the page's full height: a window as tall as the document.
    height = _page_height(checked, width)
    shot = _run(page, f"--screenshot={screenshot}", width=width, height=height)
    assert screenshot.is_file(), f"no screenshot of {page}: {shot.stderr[-2000:]}"
    return doc


HEIGHT = """window.addEventListener('load', () => { document.title = 'HEIGHT:' + document.documentElement.scrollHeight; });"""


def _page_height(page: Path, width: int) -> int:
    probe = page.with_name(page.stem + ".height.html")
    probe.write_text(page.read_text().replace("</body>", f"<script>{HEIGHT}</script></body>", 1))
    dom = _run(probe, "--dump-dom", "--virtual-time-budget=10000", width=width, height=900)
    found = re.search(r"<title>HEIGHT:(\d+)</title>", dom.stdout)
    return min(int(found.group(1)) if found else 900, 16000)
