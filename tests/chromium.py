"""Open an HTML report in headless Chromium: console messages, figure boxes, table sorting and a screenshot.

Two runs of Debian's ``chromium``:

1. a probe copy of the page (two scripts added: one first in ``<head>`` that
   records script errors, one last in ``<body>`` that, on ``load``, records each
   figure's box and decoded size, clicks every header of every sortable table
   twice and records the row order after each click, the page height and the
   load time) is opened with ``--dump-dom``; the probe writes its findings as
   JSON into the DOM, read back here;
2. the unmodified page is opened with ``--screenshot`` at the page's full
   height and ``--enable-logging=stderr``: every console message (errors,
   warnings, logs: the report writes none) appears on stderr as ``CONSOLE``.

Scrollbars are hidden in both runs, so the layout (and the figure boxes) of
the two runs are the same.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

WIDTH = 1280  # the width the report is checked at
MAX_HEIGHT = 30000

PROBE_HEAD = """<script>window.__probeErrors=[];
window.addEventListener('error',function(e){window.__probeErrors.push(String(e.message||e))});
window.addEventListener('unhandledrejection',function(e){window.__probeErrors.push('rejection: '+e.reason)});
(function(){var o=console.error;console.error=function(){window.__probeErrors.push(
Array.prototype.join.call(arguments,' '));return o.apply(console,arguments)}})();</script>"""

PROBE_BODY = """<script>window.addEventListener('load',function(){
var out={errors:window.__probeErrors,figures:[],tables:[],height:document.documentElement.scrollHeight,
load_ms:performance.now()};
document.querySelectorAll('figure[data-figure] img').forEach(function(img){var r=img.getBoundingClientRect();
out.figures.push({name:img.parentNode.getAttribute('data-figure'),x:r.left+window.scrollX,y:r.top+window.scrollY,
w:r.width,h:r.height,natural_w:img.naturalWidth,natural_h:img.naturalHeight,complete:img.complete})});
function cellKey(td){var v=td.getAttribute('data-value');return v===null?{text:td.textContent.trim()}:{value:v}}
document.querySelectorAll('table.sortable').forEach(function(t){var rec={name:t.getAttribute('data-table'),columns:[]};
var heads=t.tHead.rows[0].cells;for(var c=0;c<heads.length;c++){var col={header:heads[c].textContent,orders:[]};
for(var k=0;k<2;k++){heads[c].click();col.orders.push({aria:heads[c].getAttribute('aria-sort'),
keys:Array.prototype.map.call(t.tBodies[0].rows,function(r){return cellKey(r.cells[c])})})}
rec.columns.push(col)}out.tables.push(rec)});
var pre=document.createElement('pre');pre.id='probe-result';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre)});</script>"""

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--force-device-scale-factor=1"]


def chromium() -> Optional[str]:
    """The Chromium executable, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class BrowserCheck:
    """What the browser saw."""

    screenshot: Path
    errors: List[str]
    console: List[str]
    figures: List[Dict]
    tables: List[Dict]
    height: int
    load_ms: float
    seconds: Dict[str, float] = field(default_factory=dict)
    blank_figures: List[str] = field(default_factory=list)
    unsorted: List[str] = field(default_factory=list)


def _run(args: List[str], timeout: float = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="combo-chromium-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=timeout)


def check_page(page: Path, screenshot: Path) -> BrowserCheck:
    """Open ``page`` twice (see the module doc); the screenshot is written to ``screenshot``."""
    text = page.read_text(encoding="utf-8")
    probe = page.with_name(page.stem + ".probe.html")
    probe.write_text(text.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_BODY + "</body>", 1),
                     encoding="utf-8")
    t0 = time.perf_counter()
    dom = _run([f"--window-size={WIDTH},900", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()])
    t1 = time.perf_counter()
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom.stdout, re.S)
    if not found:
        raise AssertionError(f"the probe did not report; chromium stderr:\n{dom.stderr[-3000:]}")
    import html as _html

    result = json.loads(_html.unescape(found.group(1)))
    height = min(int(result["height"]), MAX_HEIGHT)
    shot = _run([f"--window-size={WIDTH},{height}", "--enable-logging=stderr", "--v=0",
                 f"--screenshot={screenshot}", page.as_uri()])
    t2 = time.perf_counter()
    console = [line for line in shot.stderr.splitlines() if ":CONSOLE" in line]
    check = BrowserCheck(screenshot, result["errors"], console, result["figures"], result["tables"],
                         int(result["height"]), float(result["load_ms"]),
                         {"probe_run": t1 - t0, "screenshot_run": t2 - t1})
    check.blank_figures = _blank_figures(screenshot, check.figures)
    check.unsorted = _unsorted(check.tables)
    return check


def _blank_figures(screenshot: Path, figures: List[Dict]) -> List[str]:
    """Figures whose box in the screenshot is (nearly) all one colour, lies outside it, or did not decode."""
    import numpy as np
    from PIL import Image

    blank = []
    with Image.open(screenshot) as im:
        rgb = np.asarray(im.convert("RGB"))
    for f in figures:
        x0, y0, x1, y1 = int(f["x"]), int(f["y"]), int(f["x"] + f["w"]), int(f["y"] + f["h"])
        if not f["complete"] or f["natural_w"] == 0 or f["w"] < 10 or f["h"] < 10 or y1 > rgb.shape[0]:
            blank.append(f"{f['name']}: not drawn (box {(x0, y0, x1, y1)}, decoded {f['natural_w']}x{f['natural_h']})")
            continue
        box = rgb[y0:y1, x0:x1].reshape(-1, 3)
        inked = int((box.min(axis=1) < 200).sum())
        # distinct colours: each pixel packed into one integer (a 1-D unique is ~40x faster than rows)
        packed = (box[:, 0].astype(np.uint32) << 16) | (box[:, 1].astype(np.uint32) << 8) | box[:, 2]
        colours = len(np.unique(packed))
        if inked < 0.01 * len(box) or colours < 3:
            blank.append(f"{f['name']}: {inked} of {len(box)} pixels inked, {colours} colours")
    return blank


def _sort_key(key: Dict):
    if "text" in key:
        return (0, key["text"].casefold())
    return (0, float(key["value"])) if key["value"] != "" else (1, 0.0)


def _unsorted(tables: List[Dict]) -> List[str]:
    """Columns whose first click did not give ascending order, or second click descending (undefined last)."""
    bad = []
    for t in tables:
        for c in t["columns"]:
            for order, want in zip(c["orders"], ("ascending", "descending")):
                keys = order["keys"]
                defined = [k for k in keys if _sort_key(k)[0] == 0]
                undefined_last = all(_sort_key(k)[0] == 1 for k in keys[len(defined):])
                values = [_sort_key(k)[1] for k in defined]
                numeric = all("value" in k for k in defined)
                if not numeric:  # text: case-insensitive
                    values = [str(v).lower() for v in values]
                ok = order["aria"] == want and undefined_last and values == sorted(values, reverse=want == "descending")
                if not ok:
                    bad.append(f"{t['name']}: column {c['header']!r} not {want}")
    return bad
