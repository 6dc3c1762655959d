"""A self-contained HTML page: inline style, PNG figures as base64 data URIs, one small script.

Nothing is fetched when the page opens (no fonts, scripts or images from
elsewhere), so a report opens offline from any folder. The script makes every
``table.sortable`` sortable by clicking a column header: numbers by their
``data-value``, text otherwise (case-insensitive), undefined cells last.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:1180px;
padding:0 18px 40px;color:#222;line-height:1.4}
h1{font-size:1.6em;margin:18px 0 4px}
h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:30px}
h3{font-size:1.05em;margin:16px 0 6px}
nav a{margin-right:12px;font-size:.92em}
table{border-collapse:collapse;margin:8px 0;font-size:.86em}
.wide{overflow-x:auto}
th,td{border:1px solid #ddd;padding:3px 7px;vertical-align:top;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f3f3f3}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}
table.sortable th[aria-sort=descending]::after{content:" \\25BC"}
tr.combination td:first-child{font-weight:600}
.muted{color:#666}.na{color:#888;font-style:italic}
.figures{display:flex;flex-wrap:wrap;gap:10px}
figure{margin:6px 0;display:table}figure img{display:block;max-width:100%;height:auto}
figcaption{font-size:.8em;color:#555;display:table-caption;caption-side:bottom}
table.facts td{max-width:820px;word-break:break-word}table.facts th{white-space:nowrap}
.interval{display:block;font-size:.85em}
.text{max-width:520px;white-space:pre-wrap;word-break:break-word}
code{font-size:.92em}details{margin:6px 0}summary{cursor:pointer;font-weight:600}
.cluster{display:inline-block;min-width:1.6em;text-align:center;border-radius:3px;background:#e8eef7;
font-size:.85em;margin-left:4px}
"""

SCRIPT = """
(function(){
function key(td){var v=td.getAttribute('data-value');if(v===null){return {n:false,s:td.textContent.trim()}}
if(v===''){return null}var x=parseFloat(v);return isNaN(x)?{n:false,s:v}:{n:true,x:x}}
function sortBy(table,col,th){var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
var asc=th.getAttribute('aria-sort')!=='ascending';
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.removeAttribute('aria-sort')});
th.setAttribute('aria-sort',asc?'ascending':'descending');
rows.sort(function(a,b){var ka=key(a.cells[col]),kb=key(b.cells[col]);
if(ka===null||kb===null){return (ka===null)-(kb===null)}
var d;if(ka.n&&kb.n){d=ka.x-kb.x}else{var sa=String(ka.n?ka.x:ka.s).toLowerCase(),sb=String(kb.n?kb.x:kb.s)
.toLowerCase();d=sa<sb?-1:sa>sb?1:0}return asc?d:-d});
rows.forEach(function(r){body.appendChild(r)})}
document.querySelectorAll('table.sortable').forEach(function(table){
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,col){
th.addEventListener('click',function(){sortBy(table,col,th)})})})})();
"""


def esc(text: object) -> str:
    """HTML-escape any value as text."""
    return html.escape(str(text), quote=True)


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure(png: bytes, alt: str, caption: str = "", name: str = "") -> str:
    """A PNG figure; ``name`` identifies it (``data-figure``) for tests and links."""
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return (f'<figure data-figure="{esc(name or alt)}"><img src="{data_uri(png)}" alt="{esc(alt)}">{cap}'
            "</figure>")


def sentence(text: str) -> str:
    """A part that does not apply, said in one sentence."""
    return f'<p class="na">{esc(text)}</p>'


@dataclass
class Cell:
    """A table cell: its HTML, and the value it sorts by (None: sorts by its text; NaN: undefined, last)."""

    html: str
    value: Optional[float] = None
    numeric: bool = False
    title: str = ""

    def render(self) -> str:
        attrs = ' class="num"' if self.numeric else ""
        if self.value is not None:
            attrs += f' data-value="{"" if self.value != self.value else repr(float(self.value))}"'
        if self.title:
            attrs += f' title="{esc(self.title)}"'
        return f"<td{attrs}>{self.html}</td>"


def text_cell(text: object, cls: str = "") -> Cell:
    return Cell(f'<span class="{cls}">{esc(text)}</span>' if cls else esc(text))


def number_cell(value: Optional[float], digits: int = 4, extra_html: str = "", title: str = "") -> Cell:
    if value is None or value != value:
        return Cell('<span class="na">undefined</span>' + extra_html, float("nan"), True, title)
    return Cell(f"{value:.{digits}f}{extra_html}", float(value), True, title)


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], sortable: bool = True, name: str = "",
          row_classes: Optional[Sequence[str]] = None) -> str:
    """A table; sortable ones sort on a header click (see the module doc)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for k, row in enumerate(rows):
        cls = f' class="{row_classes[k]}"' if row_classes and row_classes[k] else ""
        body.append(f"<tr{cls}>" + "".join(c.render() for c in row) + "</tr>")
    attrs = ' class="sortable"' if sortable else ""
    if name:
        attrs += f' data-table="{esc(name)}"'
    return (f'<div class="wide"><table{attrs}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            "</table></div>")


def json_block(name: str, doc: object) -> str:
    """Machine-readable data in the page (``<script type="application/json">``), safe against ``</script>``."""
    text = json.dumps(doc, ensure_ascii=False, allow_nan=False).replace("</", "<\\/")
    return f'<script type="application/json" id="{esc(name)}">{text}</script>'


@dataclass
class Section:
    """One part of the report: an anchor, a heading and its HTML body."""

    anchor: str
    title: str
    body: str


def page(title: str, intro: str, sections: List[Section]) -> str:
    """The whole document."""
    nav = "".join(f'<a href="#{esc(s.anchor)}">{esc(s.title)}</a>' for s in sections)
    parts = [f'<section id="{esc(s.anchor)}"><h2>{esc(s.title)}</h2>{s.body}</section>' for s in sections]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1>{intro}<nav>{nav}</nav>{''.join(parts)}"
            f"<script>{SCRIPT}</script></body></html>\n")
