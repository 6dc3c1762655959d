"""Draw the documentation's figures with the report's plotting module (``combo.report.plots``).

A figure in the docs and in a report are drawn by the same functions, so they
look alike. Each figure is drawn from the measured table of the page it
illustrates (read from the page itself, so figure and table cannot disagree)
and written to ``docs/figures/``.

    python docs/make_figures.py          # needs matplotlib: pip install 'combo-eval[report]'
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))

from combo.report import plots  # noqa: E402


def markdown_table(page: Path, first_header: str):
    """The rows (lists of cell strings) of the table in ``page`` whose first header cell is ``first_header``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header:
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return cells, rows
    raise SystemExit(f"{page}: no table whose first header is {first_header!r}")


def number(cell: str) -> float:
    found = re.search(r"-?\d+(\.\d+)?(e-?\d+)?", cell.replace("*", ""))
    return float(found.group(0)) if found else math.nan


def lexical_speed() -> bytes:
    """Benchmark results page: combo's time as a share of the peer's, one call for all systems (lower is faster)."""
    header, rows = markdown_table(DOCS / "results" / "benchmarks.md", "metric")
    ratio = header.index("ratio")
    labels = [f"{r[0]} ({r[1]})" for r in rows]
    return plots.bar_intervals(labels, [number(r[ratio]) for r in rows], sort=False,
                               title="combo time / peer time (one call, WMT12 de-en)",
                               xlabel="ratio of wall times (lower: combo faster)")


FIGURES = {"figures/bench-lexical.png": lexical_speed}


def main() -> None:
    (DOCS / "figures").mkdir(exist_ok=True)
    for name, draw in FIGURES.items():
        (DOCS / name).write_bytes(draw())
        print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()
