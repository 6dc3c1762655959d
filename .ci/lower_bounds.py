"""Requirements of the lower-bounds run (.ci/lower-bounds), read from pyproject.toml.

``constraints``: each runtime dependency pinned to its lower bound (``numpy>=1.23.2`` becomes
``numpy==1.23.2``; one without a ``>=`` bound stays free), a pip constraints file. ``tools NAME...``:
the requirements of the ``test`` extra with those names (pytest, the oracles), pins as pyproject gives them.
So the run tests exactly the bounds pyproject.toml declares and repeats no version.
"""

import re
import sys
import tomllib
from pathlib import Path

BOUND = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)")
NAME = re.compile(r"^\s*([A-Za-z0-9_.\-]+)")


def project(root: Path) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def constraints(root: Path) -> list:
    out = []
    for requirement in project(root)["dependencies"]:
        match = BOUND.match(requirement)
        if match:
            out.append(f"{match.group(1)}=={match.group(3)}")
    return out


def tools(root: Path, names) -> list:
    test = project(root)["optional-dependencies"]["test"]
    by_name = {NAME.match(r).group(1).lower(): r for r in test}
    missing = [n for n in names if n.lower() not in by_name]
    if missing:
        raise SystemExit(f"not in the test extra of pyproject.toml: {', '.join(missing)}")
    return [by_name[n.lower()] for n in names]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    if sys.argv[1:2] == ["constraints"]:
        print("\n".join(constraints(root)))
    elif sys.argv[1:2] == ["tools"]:
        print("\n".join(tools(root, sys.argv[2:])))
    else:
        raise SystemExit("usage: lower_bounds.py constraints | tools NAME...")
