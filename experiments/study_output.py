"""What every seed study does with its results: redraw them (``--render JSON``) or, after a run, write the
JSON (``--out``), draw the figures (``--figures``), print the page's tables and the time on stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional

#: Where the pages and figures of the studies live (``--render`` draws here unless ``--figures`` says otherwise).
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def write_json(results, path) -> None:
    """All figures as JSON (numpy values as lists); nothing without a path."""
    if path:
        text = json.dumps(results, indent=1, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
        Path(path).write_text(text + "\n", encoding="utf-8")


def render(res: dict, draw: Callable[[dict, Path], Iterable[Path]], markdown: Callable[[dict], str],
           figures: Optional[str] = None) -> None:
    """``--render``: the figures of saved results, redrawn, and the page's tables printed."""
    for path in draw(res, Path(figures) if figures else RESULTS):
        print(f"wrote {path}", file=sys.stderr)
    print(markdown(res))


def publish(res: dict, draw: Callable[[dict, Path], Iterable[Path]], markdown: Callable[[dict], str],
            out: Optional[str] = None, figures: Optional[str] = None, timing: str = "") -> None:
    """After a run: the JSON, the figures (only with a folder), the tables, and the total time."""
    write_json(res, out)
    if figures:
        draw(res, Path(figures))
    print(markdown(res))
    print(f"\ntotal {res['seconds']:.0f} s{timing}", file=sys.stderr)
