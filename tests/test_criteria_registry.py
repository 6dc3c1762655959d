"""Criteria and combination schemes are records in one registry each (combo.evaluate): what is written about them
elsewhere is read from there, and README.md, which is static text, names them all."""

import re
from pathlib import Path

from combo.evaluate import CRITERIA, SCHEMES

ROOT = Path(__file__).resolve().parents[1]


def test_readme_names_every_criterion_and_scheme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # the command list's line (the quick start's command names one criterion)
    criteria = re.search(r"^- `combo search --criterion (\S+)", readme, re.M).group(1).split("|")
    schemes = re.search(r"\[--scheme (\S+)\]", readme).group(1).split("|")
    assert tuple(criteria) == CRITERIA
    assert tuple(schemes) == SCHEMES
