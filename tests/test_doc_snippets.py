"""Every Python snippet written in README.md and docs/**/*.md runs as documented.

The snippets are read from the pages (fenced ``python`` blocks). Each runs in a fresh interpreter, in a folder of
its own holding the example files a page names, with ``../shared/data`` read as the real data folder; it must exit
0. What a page writes as a placeholder (``../shared/data``) is made concrete by :data:`PLACEHOLDERS`.
Snippets that take minutes are listed in :data:`SLOW` with the reason and run with ``pytest -m slow``. A failure
names the page and line of the snippet.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from combo.io.fetch import example_path
from conftest import DATA

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: Placeholders as the pages write them, and what they stand for ({data}: the real data folder).
PLACEHOLDERS = [
    ("../shared/data", "{data}"),
]
#: Snippets (page:line of the opening fence) that take minutes, with the reason.
SLOW = {
    "docs/scale.md:78": "KING on 100 DSTC7 segments with every reference: about 4 minutes",
}


def snippets() -> List[Tuple[str, str]]:
    """``(page:line, code)`` of every fenced python block."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").split("\n")
        name = page.relative_to(ROOT).as_posix()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "```python":
                start, body = i + 1, []
                i += 1
                while i < len(lines) and not lines[i].strip().startswith("```"):
                    body.append(lines[i])
                    i += 1
                found.append((f"{name}:{start}", "\n".join(body) + "\n"))
            i += 1
    return found


def concrete(code: str) -> str:
    for placeholder, value in PLACEHOLDERS:
        code = code.replace(placeholder, value)
    return code.replace("{data}", str(DATA)).replace("{example}", str(example_path()))


SNIPPETS = snippets()


@pytest.mark.parametrize("where, code", [pytest.param(w, c, id=w, marks=[pytest.mark.slow] if w in SLOW else [])
                                         for w, c in SNIPPETS])
def test_doc_snippet_runs(where, code, tmp_path):
    if "{data}" in concrete(code).replace(str(DATA), "{data}") and not DATA.is_dir():
        pytest.skip("needs the shared data folder")
    env = {**os.environ, "COMBO_CACHE_DIR": str(tmp_path / "cache"), "NLTK_DATA": str(DATA / "nltk_data"),
           "COMBO_DATA_HOME": str(DATA)}
    res = subprocess.run([sys.executable, "-c", concrete(code)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, f"{where}: the snippet fails:\n{res.stderr[-2000:]}"
    printed = FIGURE.findall(res.stdout) + re.findall(r"-?\d+\.\d+", res.stdout)
    missing = [figure for figure in promised_figures(code) if not any(shows(p, figure) for p in printed)]
    assert not missing, (f"{where}: the page's comments promise figures the snippet no longer prints: {missing}\n"
                         f"it printed:\n{res.stdout[-2000:]}")


#: A figure as the pages write printed values: three decimals or more (0.7407, 3.7042, 0.3030).
FIGURE = re.compile(r"-?\d+\.\d{3,}")


def shows(printed: str, figure: str) -> bool:
    """Whether a printed number is written as ``figure`` on a page: the same digits as far as the figure goes
    (0.74076 as 0.7407...), or rounded to its decimals (3.60566 as 3.6057)."""
    decimals = len(figure.split(".")[1])
    return printed.startswith(figure) or round(float(printed), decimals) == float(figure)


def promised_figures(code: str) -> List[str]:
    """The figures of three decimals or more in the comments of ``print(...)`` lines: what the page says the
    snippet prints (``print(x)  # 0.7407...``). A parenthesis explains (``# 0.1705 (coco would print 1.705)``):
    its figures are not promised."""
    figures = []
    for line in code.split("\n"):
        if re.match(r"\s*print\(", line) and "  # " in line:
            comment = line.split("  # ", 1)[1]
            while re.search(r"\([^()]*\)", comment):
                comment = re.sub(r"\([^()]*\)", "", comment)
            figures += FIGURE.findall(comment)
    return figures


def test_promised_figures_are_read_from_print_comments():
    code = ("x = 0.12345  # not printed\nprint(a)   # 0.7407... (the mean of (0.5 and 0.98148))\n"
            "print(b)  # 24 = 0.2500 * 96\n")
    assert promised_figures(code) == ["0.7407", "0.2500"]
    assert shows("0.7407664", "0.7407") and shows("3.60566417", "3.6057") and not shows("0.7417", "0.7407")


def test_the_snippets_are_found():
    assert len(SNIPPETS) >= 30 and any(w.startswith("README.md") for w, _ in SNIPPETS)
