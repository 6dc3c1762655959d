"""What search, evaluate and report share: their criterion and combination names and help, read from
combo.evaluate's registries when needed; the test bed prepared and scored (:func:`prepare`, over
:func:`combo.prepare.prepare`); and the HTML report (``combo report``, ``--report FILE``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import click

from ..errors import OptionError
from ..metrics.sets import expand_metric_sets
from .options import MetaOptions, comma_separated, load_testbed, metric_list


class MeaningsCommand(click.Command):
    """search and evaluate: their --help ends with what each registered criterion and scheme measures, read when
    printed (:func:`meanings_help`)."""

    @property
    def epilog(self):
        return meanings_help()

    @epilog.setter
    def epilog(self, value):  # click.Command.__init__ sets it; the text comes from the registries
        pass


def criterion_names() -> Tuple[str, ...]:
    """Every name a criterion option accepts (the criteria, then their old names), read from the registry."""
    from ..evaluate import accepted_criterion_names

    return accepted_criterion_names()


def criteria() -> Tuple[str, ...]:
    """The registered criteria (without their old names)."""
    from ..evaluate import criterion_names

    return criterion_names()


def schemes() -> Tuple[str, ...]:
    """The registered combination schemes."""
    from ..evaluate import scheme_names

    return scheme_names()


def today_name(ctx, param, value):
    """A criterion option's callback: an old name (kendall) becomes today's (wmt_kendall)."""
    from ..evaluate import criterion_name

    return None if value is None else criterion_name(value)


def meaning(criterion: str) -> str:
    """What ``criterion`` measures and what a good value is, in one line."""
    from ..evaluate import get_criterion

    return get_criterion(criterion).meaning


def meanings_help() -> str:
    """The epilog of search and evaluate: one line per registered criterion and scheme saying what it measures."""
    from ..evaluate import criterion_records, scheme_records

    criteria, schemes = criterion_records(), scheme_records()
    width = max(len(r.name) for r in (*criteria, *schemes)) + 2
    lines = ["\b", "Criteria (what they measure, what is good):"]
    lines += [f"  {c.name:<{width}}{c.meaning}" for c in criteria]
    lines += ["Combinations:"] + [f"  {s.name:<{width}}{s.meaning}" for s in schemes]
    return "\n".join(lines)


def criterion_help() -> str:
    """search's --criterion: the old names that still work."""
    from ..evaluate import criterion_aliases

    old = ", ".join(f"{a} ({c})" for a, c in criterion_aliases().items())
    return ("What each criterion measures is listed below" + (f"; old names still work: {old}." if old else "."))


def scheme_help() -> str:
    """search's --scheme: each criterion's default combination."""
    from ..evaluate import DEFAULT_SCHEME_NAME, criterion_records

    other = {}
    for c in criterion_records():
        if c.default_scheme != DEFAULT_SCHEME_NAME:
            other.setdefault(c.default_scheme, []).append(c.name)
    return ("Combination (default: " + "".join(f"{s} for {'/'.join(cs)}, " for s, cs in other.items())
            + f"{DEFAULT_SCHEME_NAME} otherwise).")


def criteria_help() -> str:
    """evaluate's --criteria: every registered criterion."""
    return "Comma-separated: " + ", ".join(criteria()) + "."


def combine_help(what: str) -> str:
    """--combine: every registered scheme."""
    return f"Comma-separated combinations of all the metrics to {what}: " + ", ".join(schemes()) + "."


def named_list(text: str, option: str, what: str, known: Sequence[str], none_allowed: bool = False) -> List[str]:
    """``--criteria``/``--combine`` (``option``): comma-separated names (:func:`~.options.comma_separated`), each
    known (old names mapped to today's); a typo gets the close names. ``none_allowed``: an empty ``text`` asks
    for none (``--combine ""``)."""
    from ..evaluate import criterion_aliases
    from ..options import did_you_mean

    aliases = criterion_aliases()
    choices = f"(choose from {', '.join(n for n in known if n not in aliases)})"
    if none_allowed and not text.strip():
        return []
    names = comma_separated(text, option, what, choices)
    for name in names:
        if name not in known:
            hint = did_you_mean(name, known)
            raise OptionError(f"unknown {what} {name!r}" + (f"; {hint}" if hint else "") + f" {choices}")
    return [aliases.get(n, n) for n in names]


def language_pairs(lp: Optional[str], example: str = "en-de,he-en") -> List[Optional[str]]:
    """``--lp``: one pair, or several separated by commas (distinct); ``example`` is the fix's."""
    lps = [x.strip() for x in lp.split(",")] if lp else [None]
    if len(set(lps)) != len(lps) or "" in lps:
        raise OptionError(f"--lp {lp}: give distinct language pairs separated by commas (e.g. {example})")
    return lps


def refused_pairs(criteria: Sequence[str], schemes: Sequence[str], command: str) -> None:
    """Refuse, before any work, a criterion asked with a combination it refuses (mutt with queen)."""
    from ..evaluate import check_scheme, get_criterion

    for c in criteria:
        for s in schemes:
            if s in get_criterion(c).refused_schemes:
                check_scheme(c, s, command)


def prepare(testbed_path: str, lp: Optional[str], testbed_options: Sequence[str], metrics: Sequence[str],
            criterion: str, meta: MetaOptions, min_refs: Optional[int], max_refs: Optional[int],
            cache: Optional[str], needs_refs, asked, king_segments: Optional[int] = None, tb=None):
    """The test bed ``--testbed`` names (``tb``: loaded already) prepared and scored for meta-evaluation
    (:func:`combo.prepare.prepare`) with the command's options; ``asked``: ``(command, criteria, schemes[,
    search])``, whose options a refusal's fix names."""
    from ..prepare import Asked, prepare as prepare_testbed

    specs = metric_list(metrics)
    tb = load_testbed(testbed_path, lp, testbed_options) if tb is None else tb
    return prepare_testbed(tb, testbed_path, specs, criterion, meta, min_refs, max_refs, cache, needs_refs,
                           king_segments=king_segments, asked=Asked(*asked, metrics=specs))


# -- the HTML report: combo report, and --report FILE on evaluate and search ------------------------------------

def check_report_possible(report_path: Optional[str]) -> None:
    """Fail before any scoring when the report cannot be drawn (matplotlib missing)."""
    if report_path is not None:
        from ..report.plots import require_matplotlib

        require_matplotlib()


def report_page(ev, metrics: Sequence[str], table, notes: Sequence[str], seed: int, **inputs) -> str:
    """The HTML report of one meta-evaluation (``inputs``: :class:`combo.report.ReportInputs`' fields), naming the
    command line that made it."""
    from ..report import ReportInputs, build_report, tuned_weights

    tuned = tuned_weights(expand_metric_sets(metric_list(metrics)), table.metrics) if metrics else {}
    program = Path(sys.argv[0]).name if sys.argv else ""
    command = "combo " + " ".join(sys.argv[1:]) if program in ("combo", "__main__.py") else ""
    return build_report(ev, ReportInputs(seed=seed, notes=notes, tuned=tuned, command=command, **inputs))
