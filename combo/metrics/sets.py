"""Named metric sets: ``-m @lexical``, ``-m @heterogeneous``, ... wherever metric names are accepted.

Each set is the one list behind a default of the command line and the
figures of the docs: ``experiments/wmt12_tuned.py`` and the studies built on
it import these lists, so a figure and the set a user asks for by name cannot
drift apart. :func:`expand_metric_sets` replaces each ``@name`` by its members;
``combo.score_testbed`` and the command line call it before resolving names.

A member whose resource (an optional extra, WordNet) is missing makes the set
an error naming the members, why and the install command: a set named by a
user stands for a figure in the docs, and quietly scoring part of it would
give another figure. ``@name:available`` asks for the members usable here and
leaves the others out, each counted in a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import OptionError, ResourceMissing

#: The seven lexical metrics of the WMT12 tuned-metric study (docs/learned.md, row "seven").
SEVEN = ("bleu", "chrf", "chrf++", "ter", "rouge-l", "rouge-1", "meteor")

#: ``combo search``'s default candidates: every registered lexical metric at its defaults,
#: BLEU-2 and GTM e=2 (docs/search.md, "Measured here").
SEARCH = ("bleu", "bleu:max_order=2", "nist", "chrf", "chrf++", "ter", "wer", "per", "rouge-1", "rouge-2",
          "rouge-l", "rouge-w", "rouge-su", "meteor", "gtm", "gtm:e=2", "cider")

#: The 23 lexical features of docs/learned.md (row "full (23)"): the seven, the rest of the search
#: set, and the precision and recall components of ROUGE-1, ROUGE-2 and ROUGE-L.
LEXICAL = SEVEN + ("bleu:max_order=2", "nist", "wer", "per", "rouge-2", "rouge-w", "rouge-su", "gtm", "gtm:e=2",
                   "cider", "rouge-1:measure=p", "rouge-1:measure=r", "rouge-2:measure=p", "rouge-2:measure=r",
                   "rouge-l:measure=p", "rouge-l:measure=r")

#: Every registered non-lexical metric at its defaults that runs from installable packages alone
#: (no supplied trees, so no DR-TK; no sentence encoder, so no sent-emb), except TED, left out for its
#: cost alone (about an hour of CPU for the ~147,000 rows of the four WMT12 into-English pairs).
LINGUISTIC = ("sp-op", "sp-oc", "sp-nist", "cp-stm", "cp-tk-sst", "cp-tk-st", "cp-tk-ptk", "dp-hwcm", "dp-or",
              "dp-tk", "emb-avg", "emb-greedy", "emb-extrema")

#: docs/learned.md's "heterogeneous (36)": lexical and linguistic, without the sentence encoder.
HETEROGENEOUS_NO_SENTENCE = LEXICAL + LINGUISTIC

#: docs/learned.md's "heterogeneous+sentence (37)": the above and the MiniLM sentence cosine.
HETEROGENEOUS = HETEROGENEOUS_NO_SENTENCE + ("sent-emb",)

#: DiscoTK's five discourse tree kernels (Joty et al. 2014, DR-NOLEX ... DR-LEX2.1), on Feng & Hirst's parses.
DISCOURSE = ("dr-tk-nolex", "dr-tk-lex1", "dr-tk-lex1.1", "dr-tk-lex2", "dr-tk-lex2.1")

#: DiscoTK-light: the five kernels and a unigram metric (ROUGE-1 F here; docs/results/joty-2014.md).
DISCOTK_LIGHT = DISCOURSE + ("rouge-1",)

#: DiscoTK-party as combo can compute it: the five kernels with the lexical and linguistic metrics of
#: @heterogeneous-no-sentence in place of Asiya's (its semantic-role and Asiya discourse metrics are not here).
DISCOTK = DISCOURSE + HETEROGENEOUS_NO_SENTENCE


@dataclass(frozen=True)
class MetricSet:
    """A named list of metric specs, what it is for and where its figures are."""

    name: str
    members: Tuple[str, ...]
    description: str


SETS: Dict[str, MetricSet] = {s.name: s for s in (
    MetricSet("heterogeneous", HETEROGENEOUS,
              "lexical, shallow-syntactic, syntactic and embedding metrics with the MiniLM sentence cosine; "
              "combo train's default where its extras are installed (docs/learned.md: .326 on WMT12, "
              "leave one pair out)"),
    MetricSet("heterogeneous-no-sentence", HETEROGENEOUS_NO_SENTENCE,
              "@heterogeneous without sent-emb (docs/learned.md: .278; the Flickr8k transfer study)"),
    MetricSet("lexical", LEXICAL,
              "the lexical features: combo train's default without the extras of @heterogeneous "
              "(docs/learned.md, row full (23): .262)"),
    MetricSet("linguistic", LINGUISTIC,
              "the shallow-syntactic, syntactic and GloVe embedding metrics of @heterogeneous"),
    MetricSet("search", SEARCH, "combo search's and combo report's default candidates (docs/search.md)"),
    MetricSet("seven", SEVEN, "seven common lexical metrics (docs/learned.md, row seven: .261)"),
    MetricSet("discotk-light", DISCOTK_LIGHT,
              "DiscoTK-light: the five discourse tree kernels on Feng & Hirst's parses and ROUGE-1 "
              "(docs/results/joty-2014.md)"),
    MetricSet("discotk", DISCOTK,
              "DiscoTK-party as combo computes it: the five discourse tree kernels and @heterogeneous-no-sentence "
              "(docs/results/joty-2014.md)"),
)}

AVAILABLE = "available"  # the one option of a set: @name:available


def is_set_spec(spec: object) -> bool:
    """Whether ``spec`` names a metric set (``@name`` or ``@name:available``)."""
    return isinstance(spec, str) and spec.startswith("@")


def parse_set_spec(spec: str) -> Tuple[MetricSet, bool]:
    """The set named by ``spec`` and whether unavailable members may be left out (``:available``)."""
    name, _, option = spec[1:].partition(":")
    metric_set = SETS.get(name.lower())
    if metric_set is None:
        from ..options import did_you_mean

        hint = did_you_mean("@" + name, ["@" + n for n in SETS])
        raise OptionError(f"unknown metric set {spec!r}; " + (f"{hint} " if hint else "") + "use one of "
                          f"{', '.join('@' + n for n in SETS)} (combo metrics lists them)")
    if option not in ("", AVAILABLE):
        raise OptionError(f"{spec}: a metric set takes only the option '{AVAILABLE}' "
                          f"(@{metric_set.name}:{AVAILABLE} leaves out the members not usable here)")
    return metric_set, option == AVAILABLE


def unavailable_members(metric_set: MetricSet) -> Dict[str, ResourceMissing]:
    """The members whose resources are missing here, each with the error that says how to install it."""
    from .registry import get_metric

    missing = {}
    for spec in metric_set.members:
        try:
            get_metric(spec).check_resources()
        except ResourceMissing as err:
            missing[spec] = err
    return missing


def install_fixes(missing: Dict[str, ResourceMissing]) -> List[str]:
    """The distinct install commands of ``missing``, in member order."""
    return list(dict.fromkeys(err.install for err in missing.values()))


def expand_metric_sets(specs: Sequence[object], notes: Optional[List[str]] = None) -> List[object]:
    """``specs`` with each ``@set`` replaced by its members (anything else kept as given, duplicates once).

    A set with a member whose resource is missing raises :class:`ResourceMissing`
    naming every such member and the install commands; ``@set:available`` leaves
    them out instead and appends a note saying which (to ``notes`` when given).
    """
    out: List[object] = []
    for spec in specs:
        if not is_set_spec(spec):
            out.append(spec)
            continue
        metric_set, only_available = parse_set_spec(spec)
        missing = unavailable_members(metric_set)
        if missing and not only_available:
            what = "; ".join(f"{m} ({err.resource})" for m, err in missing.items())
            raise ResourceMissing(
                f"part of @{metric_set.name} ({len(missing)} of its {len(metric_set.members)} metrics: {what})",
                f"{' and '.join(install_fixes(missing))}; or ask for @{metric_set.name}:{AVAILABLE} to score "
                "the others (the docs' figures are for the whole set)")
        if missing and notes is not None:
            notes.append(f"@{metric_set.name}:{AVAILABLE}: left out {len(missing)} of {len(metric_set.members)} "
                         f"metrics (resource missing here): {', '.join(missing)}")
        out.extend(m for m in metric_set.members if m not in missing)
    seen = set()
    unique = []
    for spec in out:
        key = spec if isinstance(spec, str) else id(spec)
        if key not in seen:
            seen.add(key)
            unique.append(spec)
    return unique


def reads_languages(spec: str, languages: Sequence[Optional[str]]) -> bool:
    """Whether the metric ``spec`` reads every language of ``languages`` (``None``: unknown, assumed so)."""
    from .registry import get_metric

    own = get_metric(spec).language_support()[0]
    return not own or all(lang is None or lang in own for lang in languages)


def training_default(languages: Sequence[Optional[str]]) -> Tuple[str, List[str], List[str]]:
    """``combo train``'s features when none are given: ``(set name, specs, notes)``.

    ``@heterogeneous`` when every member is installed and reads the test beds'
    languages (the better model: docs/learned.md); otherwise ``@lexical``
    without its members that are missing or cannot read the language, and a
    note saying what was used and how to get the better set.
    """
    better = SETS["heterogeneous"]
    missing = unavailable_members(better)
    foreign = [m for m in better.members if m not in missing and not reads_languages(m, languages)]
    if not missing and not foreign:
        return "@" + better.name, list(better.members), []
    lexical = SETS["lexical"]
    specs = [m for m in lexical.members if m not in missing and reads_languages(m, languages)]
    left = [m for m in lexical.members if m not in specs]
    notes = [f"left out of @lexical: {', '.join(left)} (resource missing here, or cannot read the language)"] \
        if left else []
    why = (f"needs what is missing here ({', '.join(missing)}): install with {' and '.join(install_fixes(missing))}"
           if missing else f"has metrics that read only English ({', '.join(foreign)})")
    notes.append(f"@heterogeneous ({len(better.members)} metrics) trains a better model (WMT12, leave one pair out: "
                 f".326 against .262 for @lexical; docs/learned.md), but it {why}")
    return "@" + lexical.name, specs, notes
