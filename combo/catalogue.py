"""The metric catalogue, generated from the registry and the named sets (never kept by hand).

``combo metrics`` prints it; ``docs/catalogue.md`` is its Markdown rendering.
"""

from __future__ import annotations

import json
import math
import textwrap
from typing import Dict, List, Optional

from .errors import OptionError, ResourceMissing
from .metrics.base import cost_table
from .metrics.registry import list_metrics, metric_class
from .metrics.sets import SETS, unavailable_members

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
            # CPU per row over BLEU's, its analyses cached (benchmarks/bench_costs.py); None: not measured
            "relative_cost": cls.relative_cost if cls.name in cost_table() else None,
            "citation": cls.citation,
            "options": {k: o.default for k, o in cls.options.items()},
            "option_types": {k: o.brief() for k, o in cls.options.items()},  # bool, int, float, a|b|c, list, text
            "doc": (cls.__doc__ or "").strip().split("\n")[0],
        })
    return rows


def set_catalogue() -> List[Dict[str, object]]:
    """One record per named metric set (combo.metrics.sets): name, size, members, resources, availability here."""
    rows = []
    for metric_set in SETS.values():
        missing = unavailable_members(metric_set)
        resources = []
        for spec in metric_set.members:
            resources += [r for r in metric_class(spec.partition(":")[0]).resources if r not in resources]
        rows.append({
            "name": "@" + metric_set.name,
            "size": len(metric_set.members),
            "members": list(metric_set.members),
            "resources": resources,
            "description": metric_set.description,
            "available": not missing,
            "unavailable": {m: str(err) for m, err in missing.items()},
        })
    return rows


def _languages(row: Dict[str, object]) -> str:
    return ", ".join(row["languages"]) or "any"


def _cost(row: Dict[str, object]) -> str:
    cost = row.get("relative_cost")
    return "-" if cost is None else f"{cost:.3g}x"


def render(rows: List[Dict[str, object]], fmt: str = "table", sets: Optional[List[Dict[str, object]]] = None) -> str:
    """Render the catalogue (and the named sets, default :func:`set_catalogue`) as a text table, JSON or Markdown
    (``fmt`` one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise OptionError(f"unknown catalogue format {fmt!r}; choose one of {list(FORMATS)}")
    sets = set_catalogue() if sets is None else sets
    if fmt == "json":
        return json.dumps({"metrics": rows, "sets": sets}, indent=1, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        out = ["# Metric catalogue", "",
               "Generated from the registry by `combo metrics --format markdown`; do not edit by hand.", "",
               "Languages are those of the metric at its default options (\"any\": no language-specific analysis); "
               "scoring a test bed in another language is refused (docs/scoring.md, Languages).", "",
               "Cost is the CPU per row over BLEU's with the analyses cached (`benchmarks/bench_costs.py`, "
               "`combo/metrics/costs.json`; - not measured); parsing and encoding a text the first time cost "
               "more (docs/benchmarks.md).", "",
               "| metric | family | better | range | languages | cost | resources | options (defaults) | implements |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "-"
            out.append(f"| `{r['name']}` | {r['family']} | {'higher' if r['higher_is_better'] else 'lower'} "
                       f"| {r['range']} | {_languages(r)} | {_cost(r)} | {', '.join(r['resources']) or '-'} | {opts} "
                       f"| {r['citation']} |")
        out += ["", "## Metric sets", "",
                "`-m @NAME` anywhere a metric goes gives every member (`combo.metrics.sets`); a member whose "
                "resource is missing is an error naming it, unless `-m @NAME:available` (the others are scored "
                "and the left-out ones counted in a note).", "",
                "| set | size | members | resources | what for |", "|---|---|---|---|---|"]
        for r in sets:
            out.append(f"| `{r['name']}` | {r['size']} | {', '.join(r['members'])} "
                       f"| {', '.join(r['resources']) or '-'} | {r['description']} |")
        return "\n".join(out) + "\n"
    width = max((len(str(r["name"])) for r in rows), default=6) + 2
    fam = max((len(str(r["family"])) for r in rows), default=6) + 2
    out = [f"{'metric':<{width}}{'family':<{fam}}{'better':<8}{'range':<12}{'languages':<11}{'available':<11}"
           f"{'cost':<8}resources"]
    for r in rows:
        out.append(f"{r['name']:<{width}}{r['family']:<{fam}}{'higher' if r['higher_is_better'] else 'lower':<8}"
                   f"{r['range']:<12}{_languages(r):<11}{'yes' if r['available'] else 'no':<11}"
                   f"{_cost(r):<8}{', '.join(r['resources']) or '-'}")
    out += ["", "cost: CPU per row over BLEU's with the analyses cached (benchmarks/bench_costs.py; - not measured); "
            "parsing and encoding first cost more (docs/benchmarks.md)"]
    out += ["", "metric sets (-m @NAME; -m @NAME:available leaves out what is missing here):"]
    name = max((len(str(r["name"])) for r in sets), default=4) + 2
    for r in sets:
        state = "yes" if r["available"] else f"no: {len(r['unavailable'])} missing ({', '.join(r['unavailable'])})"
        out.append(f"{r['name']:<{name}}{r['size']:>3} metrics  available: {state}")
        out += textwrap.wrap(", ".join(r["members"]), 100, initial_indent=" " * (name + 3),
                             subsequent_indent=" " * (name + 3), break_on_hyphens=False)
    return "\n".join(out) + "\n"
