"""The metric catalogue, generated from the registry (never kept by hand).

``combo metrics`` prints it; ``docs/catalogue.md`` is its Markdown rendering.
"""

from __future__ import annotations

import json
import math
from typing import Dict, List

from .errors import OptionError, ResourceMissing
from .metrics.registry import list_metrics, metric_class

#: What :func:`render` writes (``combo metrics --format``).
FORMATS = ("table", "json", "markdown")


def catalogue() -> List[Dict[str, object]]:
    """One record per registered metric: name, family, direction, range, resources, languages, availability, options."""
    rows = []
    for name in list_metrics():
        cls = metric_class(name)
        metric = cls()
        available, reason = True, ""
        languages, language_note = metric.language_support()
        try:
            metric.check_resources()
        except ResourceMissing as err:
            available, reason = False, str(err)
        lo, hi = cls.value_range
        rows.append({
            "name": cls.name,
            "family": cls.family,
            "higher_is_better": cls.higher_is_better,
            "range": f"[{lo:g}, {'inf' if math.isinf(hi) else format(hi, 'g')}]",
            "resources": list(cls.resources),
            "languages": list(languages),  # at the default options; [] = any language
            "language_note": language_note,
            "available": available,
            "unavailable_because": reason,
            "citation": cls.citation,
            "options": {k: o.default for k, o in cls.options.items()},
            "option_types": {k: o.brief() for k, o in cls.options.items()},  # bool, int, float, a|b|c, list, text
            "doc": (cls.__doc__ or "").strip().split("\n")[0],
        })
    return rows


def _languages(row: Dict[str, object]) -> str:
    return ", ".join(row["languages"]) or "any"


def render(rows: List[Dict[str, object]], fmt: str = "table") -> str:
    """Render the catalogue as a text table, JSON or Markdown (``fmt`` one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise OptionError(f"unknown catalogue format {fmt!r}; choose one of {list(FORMATS)}")
    if fmt == "json":
        return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        out = ["# Metric catalogue", "",
               "Generated from the registry by `combo metrics --format markdown`; do not edit by hand.", "",
               "Languages are those of the metric at its default options (\"any\": no language-specific analysis); "
               "scoring a test bed in another language is refused (docs/scoring.md, Languages).", "",
               "| metric | family | better | range | languages | resources | options (defaults) | implements |",
               "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "-"
            out.append(f"| `{r['name']}` | {r['family']} | {'higher' if r['higher_is_better'] else 'lower'} "
                       f"| {r['range']} | {_languages(r)} | {', '.join(r['resources']) or '-'} | {opts} "
                       f"| {r['citation']} |")
        return "\n".join(out) + "\n"
    width = max((len(str(r["name"])) for r in rows), default=6) + 2
    fam = max((len(str(r["family"])) for r in rows), default=6) + 2
    out = [f"{'metric':<{width}}{'family':<{fam}}{'better':<8}{'range':<12}{'languages':<11}{'available':<11}"
           "resources"]
    for r in rows:
        out.append(f"{r['name']:<{width}}{r['family']:<{fam}}{'higher' if r['higher_is_better'] else 'lower':<8}"
                   f"{r['range']:<12}{_languages(r):<11}{'yes' if r['available'] else 'no':<11}"
                   f"{', '.join(r['resources']) or '-'}")
    return "\n".join(out) + "\n"
