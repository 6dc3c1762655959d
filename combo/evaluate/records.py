"""The records of meta-evaluation: criteria and combination schemes, one record each in two registries, and the
:class:`Quality` a criterion returns.

A criterion or a scheme is written once, as a record (:class:`Criterion`, :class:`Scheme`; the built-in ones are
registered in :mod:`combo.evaluate.criteria`). Everything else reads the records: ``quality()`` calls a criterion's
compute, ``supported_criteria()`` reads its needs, the bootstrap its statistic, evaluate its cost, the command
line's --help and choices its name, aliases and meaning, the report its title and level; ``combined_rows`` and
``combined_systems`` call a scheme's rows and systems. What the command line and the report list is read from the
registries when asked (:func:`criterion_names`, :func:`accepted_criterion_names`, :func:`criterion_aliases`,
:func:`scheme_names`, :func:`default_scheme`, :func:`criteria_of_family`), so a criterion or scheme registered
later is listed too.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import OptionError
from ..options import name_taken
from ..meta.correlation import ValueResult

#: What a criterion reads from a test bed's human judgments (:attr:`Needs.judgments`): ``none`` (KING, ORANGE,
#: MUTT read none), ``system`` (system-level scores suffice), ``segment`` (segment scores, or rankings read as
#: shares of wins), ``pairs`` (human preference pairs: rankings, or pairs made from segment scores) and
#: ``absolute`` (absolute segment scores such as MQM or DA; rankings do not do).
JUDGMENTS = ("none", "system", "segment", "pairs", "absolute")
#: The levels a criterion measures at ("both": the WMT23 average of segment and system tasks).
LEVELS = ("segment", "system", "both")
#: The families of criteria: human likeness (KING, ORANGE, with QUEEN), human acceptability (agreement with human
#: judgments), the WMT23 metrics task's statistics (the report shows them on mt-metrics-eval data only, unless
#: asked) and unit tests (MUTT).
FAMILIES = ("likeness", "acceptability", "wmt23", "unit-tests")
#: The scheme a criterion uses when none is given (a record's ``only_scheme`` overrides it).
DEFAULT_SCHEME_NAME = "ulc"


@dataclass(frozen=True)
class Needs:
    """What a criterion needs from a test bed, and the reasons :func:`supported_criteria` gives when it lacks it."""

    judgments: str = "segment"  # one of JUDGMENTS
    systems: int = 1  # at least this many systems
    references: bool = False  # single-reference scores and one reference more than QUEEN needs (KING, ORANGE)
    testbed_format: Optional[str] = None  # a test bed of this format only (metadata["format"], e.g. "mutt")
    #: the reason when the test bed has fewer than ``systems`` systems ({n}: how many it has, {need}: ``systems``)
    few_systems: str = "needs at least {need} systems; the test bed has {n}"
    #: the reason when ``judgments`` is ``absolute`` and the test bed has rankings only
    no_absolute: str = "needs absolute segment scores (e.g. MQM); the test bed has rankings only"
    #: the reason when the test bed is not of ``testbed_format``
    wrong_format: str = "needs another kind of test bed"


@dataclass(frozen=True, eq=False)
class Criterion:
    """A meta-evaluation criterion: what it is called and means, what it reads, how it is computed and resampled.

    ``compute(evaluator, subset, criterion, scheme)`` returns the :class:`Quality` of the metric set ``subset``
    (indices of ``evaluator.table.metrics``) combined with ``scheme``; :meth:`MetaEvaluator.quality` calls it once
    the scheme is checked (:func:`check_scheme`) and the test bed's judgments are (:attr:`needs`).
    ``bootstrap(evaluator)`` returns the statistic the bootstrap recomputes on resampled ``Quality.units`` (None:
    no interval); the first ``own_units`` of the units are the entry's own, the others (human scores, ties) are
    shared by every entry, so that paired tests resample them once. ``cost``: the relative cost of one entry's
    bootstrap (orders parallel tasks, never changes a value).
    """

    name: str
    title: str  # a short title, for tables and figures
    meaning: str  # what it measures and what a good value is, in one line (--help, under each result)
    level: str  # one of LEVELS
    compute: Callable[..., "Quality"]
    needs: Needs = Needs()
    higher_is_better: bool = True
    aliases: Tuple[str, ...] = ()  # other names a criterion option accepts (old names)
    family: str = "acceptability"  # one of FAMILIES
    bootstrap: Optional[Callable[..., Callable]] = None
    own_units: int = 1
    cost: float = 1.0
    only_scheme: Optional[str] = None  # the one scheme it measures (KING, ORANGE: queen); None: any
    #: schemes it refuses, each with why ("compares the combined scores of a sentence and its corruption")
    refused_schemes: Mapping[str, str] = field(default_factory=dict)

    @property
    def default_scheme(self) -> str:
        return self.only_scheme or DEFAULT_SCHEME_NAME

    @property
    def sign(self) -> float:
        return 1.0 if self.higher_is_better else -1.0


@dataclass(frozen=True, eq=False)
class Scheme:
    """A combination scheme: how it combines the metric set ``subset`` (indices of ``evaluator.table.metrics``).

    ``rows(evaluator, subset)`` returns one combined score per row of the score table (candidate) and the number
    of segments skipped; ``systems(evaluator, subset)`` one score per system (None: the mean of each system's
    combined segment scores). ``needs_references``: it reads reference-against-reference scores (QUEEN), which
    a command computes only when asked.
    """

    name: str
    meaning: str  # what it computes, in one line (--help)
    rows: Callable[..., Tuple[np.ndarray, int]]
    systems: Optional[Callable[..., np.ndarray]] = None
    needs_references: bool = False


_CRITERIA: Dict[str, Criterion] = {}
_SCHEMES: Dict[str, Scheme] = {}


def register_criterion(record: Criterion) -> Criterion:
    """Add a criterion (a name or alias already taken is refused); undone by :func:`unregister`."""
    clash = name_taken(_CRITERIA.values(), record.name, record.aliases)
    if clash:
        raise ValueError(f"criterion {record.name!r}: the name {clash!r} is taken")
    if record.level not in LEVELS or record.family not in FAMILIES or record.needs.judgments not in JUDGMENTS:
        raise ValueError(f"criterion {record.name!r}: level is one of {list(LEVELS)}, family one of "
                         f"{list(FAMILIES)}, needs.judgments one of {list(JUDGMENTS)}")
    _CRITERIA[record.name] = record
    return record


def register_scheme(record: Scheme) -> Scheme:
    """Add a combination scheme (a name already taken is refused); undone by :func:`unregister`."""
    if record.name in _SCHEMES:
        raise ValueError(f"scheme {record.name!r}: the name is taken")
    _SCHEMES[record.name] = record
    return record


def unregister(record) -> None:
    """Remove a criterion or scheme that :func:`register_criterion` or :func:`register_scheme` added."""
    registry = _CRITERIA if isinstance(record, Criterion) else _SCHEMES
    if registry.get(record.name) is record:
        del registry[record.name]


@contextmanager
def registered(*records):
    """Criteria and schemes registered for the ``with`` block only (tests, a notebook's experiment)."""
    done = []
    try:
        for record in records:
            (register_criterion if isinstance(record, Criterion) else register_scheme)(record)
            done.append(record)
        yield records
    finally:
        for record in reversed(done):
            unregister(record)


def criterion_records() -> Tuple[Criterion, ...]:
    """Every registered criterion, in registration order."""
    return tuple(_CRITERIA.values())


def scheme_records() -> Tuple[Scheme, ...]:
    """Every registered combination scheme, in registration order."""
    return tuple(_SCHEMES.values())


def reading_references(schemes: Sequence[str]) -> List[str]:
    """The schemes among ``schemes`` that read reference-against-reference scores (QUEEN)."""
    return [s.name for s in scheme_records() if s.needs_references and s.name in schemes]


def criterion_name(name: str) -> str:
    """The criterion ``name`` stands for (an alias: today's name; any other name unchanged)."""
    return criterion_aliases().get(name, name)


def get_criterion(name: str) -> Criterion:
    """The criterion called ``name`` or by one of its aliases."""
    record = _CRITERIA.get(criterion_name(name))
    if record is None:
        raise OptionError(f"unknown criterion {criterion_name(name)!r}; choose one of {list(_CRITERIA)}")
    return record


def get_scheme(name: str) -> Scheme:
    """The combination scheme called ``name``."""
    record = _SCHEMES.get(name)
    if record is None:
        raise OptionError(f"unknown scheme {name!r}; choose one of {list(_SCHEMES)}")
    return record


def default_scheme(criterion: str) -> str:
    """The scheme ``criterion`` uses when none is given (an unknown name: the default one, then refused)."""
    record = _CRITERIA.get(criterion_name(criterion))
    return record.default_scheme if record is not None else DEFAULT_SCHEME_NAME


def _judgments_read(criterion: str) -> Optional[str]:
    """What ``criterion`` reads of the human judgments (:attr:`Needs.judgments`); None for a name that is no
    criterion ("a pairwise criterion")."""
    record = _CRITERIA.get(criterion_name(criterion))
    return record.needs.judgments if record is not None else None


def criterion_sign(criterion: str) -> float:
    """+1 when higher values of ``criterion`` are better, -1 when lower ones are
    (:attr:`Criterion.higher_is_better`)."""
    record = _CRITERIA.get(criterion_name(criterion))
    return record.sign if record is not None else 1.0


# -- what the command line and the report list, read from the registries when asked --------------------------------

def criterion_names() -> Tuple[str, ...]:
    """The registered criteria, in registration order (without their old names)."""
    return tuple(_CRITERIA)


def criterion_aliases() -> Dict[str, str]:
    """``{old name: criterion}``, sorted by old name: other names a criterion option accepts, e.g. ``kendall``
    (WMT's Kendall-like tau, not tau-b, which is ``seg_kendall``) for ``wmt_kendall`` and ``seg_pearson``
    (WMT23's name of segment Pearson without grouping) for ``r_snt``."""
    return dict(sorted((a, c.name) for c in _CRITERIA.values() for a in c.aliases))


def accepted_criterion_names() -> Tuple[str, ...]:
    """Every name a criterion option accepts: the criteria, then their old names."""
    return criterion_names() + tuple(criterion_aliases())


def scheme_names() -> Tuple[str, ...]:
    """The registered combination schemes, in registration order."""
    return tuple(_SCHEMES)


def criteria_of_family(family: str) -> Tuple[str, ...]:
    """The registered criteria of ``family`` (one of :data:`FAMILIES`), e.g. the human-likeness ones (KING,
    ORANGE)."""
    return tuple(c.name for c in _CRITERIA.values() if c.family == family)


#: KING is reported as decided by ties when more than this share of its comparisons are ties.
KING_TIE_WARNING = 0.5
#: The options through which each command chooses the criteria and the combination schemes: a message's fix names
#: the options of the command that prints it (:attr:`MetaEvaluator.command`). The API's parameters, ``criterion``
#: and ``scheme``, are named as combo search's options; ``report --search`` is combo report's search.
COMMAND_OPTIONS = {None: ("--criterion", "--scheme"), "search": ("--criterion", "--scheme"),
                   "evaluate": ("--criteria", "--combine"), "report": ("--criteria", "--combine"),
                   "report --search": ("--search", "--combine")}


@dataclass
class Quality(ValueResult):
    """One criterion's value for a metric set, with what a reader needs to trust it."""

    value: float
    criterion: str
    scheme: str
    n: int = 0  # segments, pairs or systems used
    skipped: int = 0  # segments skipped (too few references, no candidates) or undefined groups
    note: str = ""
    low: float = float("nan")  # bootstrap confidence interval, when asked for
    high: float = float("nan")
    units: Optional[Tuple[np.ndarray, ...]] = field(default=None, repr=False)  # the items the statistic reads
    groups: Optional[np.ndarray] = field(default=None, repr=False)  # the segment of each item: resampled whole
    unit: str = "segments"  # what the bootstrap resamples: "segments" or "systems"
    # the bootstrap's resampled values, one per resample in order (kept only when none was undefined)
    samples: Optional[np.ndarray] = field(default=None, repr=False)
    tie_share: float = float("nan")  # KING: share of its reference-against-best-candidate comparisons that tie
    value_strict: float = float("nan")  # KING under --king-ties strict (ties count 0), from the same counts
    sampling: Optional[Dict[str, float]] = None  # KING estimated from samples: stderr and 95% interval (low, high)
    epsilon: float = float("nan")  # acc_eq: the tie threshold chosen, in the metric's (or combination's) own units
    # what the value leaves out, counted, one phrase each ("3 judged candidates without a metric score left out"):
    # also in ``note``; :func:`left_out_notes` gathers them for the notes that table and JSON print alike
    left_out: Tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.defined:
            return f"undefined ({self.note or 'no usable data'})"
        ties = f" ties {self.tie_share:.0%}" if np.isfinite(self.tie_share) else ""
        ties += f" eps {self.epsilon:.4g}" if np.isfinite(self.epsilon) else ""
        if np.isfinite(self.low):
            return f"{self.value:.4f} [{self.low:.4f}, {self.high:.4f}]{ties}"
        return f"{self.value:.4f}{ties}"

    @property
    def decided_by_ties(self) -> bool:
        """KING with more than :data:`KING_TIE_WARNING` of its comparisons tied (see docs/queen-king.md)."""
        return bool(np.isfinite(self.tie_share) and self.tie_share > KING_TIE_WARNING)


def check_scheme(criterion: str, scheme: str, command: Optional[str] = None) -> None:
    """Refuse a combination scheme the criterion cannot measure, naming the options of ``command``
    (:data:`COMMAND_OPTIONS`): a criterion's ``only_scheme`` (KING and ORANGE measure QUEEN combinations) and its
    ``refused_schemes`` (MUTT compares ULC or mean-rank scores, not QUEEN's)."""
    record = _CRITERIA.get(criterion_name(criterion))
    if record is None:
        return
    scheme_option = COMMAND_OPTIONS[command][1]
    if record.only_scheme is not None and scheme != record.only_scheme:
        raise OptionError(f"{criterion} measures {record.only_scheme.upper()} combinations: use {scheme_option} "
                          f"{record.only_scheme} (its default)")
    if scheme in record.refused_schemes:
        others = [s for s in _SCHEMES if s not in record.refused_schemes]
        fix = (f"use --scheme {_or_list(others)}" if scheme_option == "--scheme"
               else f"leave {scheme} out of --combine")
        raise OptionError(f"{criterion} {record.refused_schemes[scheme]}: {fix}")


def _or_list(names: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _joined(*parts: Optional[str]) -> str:
    """The non-empty parts of a note, joined with '; '."""
    return "; ".join(p for p in parts if p)


def left_out_notes(names: Sequence[str], qualities: Dict[str, Sequence[Optional[Quality]]]) -> List[str]:
    """What the values leave out, one line per distinct text and entries, naming the criteria it holds for:
    ``r_snt, pearson: 1 judged candidates without a metric score left out (scores:x.tsv, ULC(all))``. The same
    lines go to the table and to JSON."""
    lines: Dict[str, List[str]] = {}  # one line, however many criteria leave the same out of the same entries
    for criterion, qs in qualities.items():
        entries: Dict[str, List[str]] = {}
        for name, q in zip(names, qs):
            for text in (q.left_out if q is not None else ()):
                entries.setdefault(text, []).append(name)
        present = sum(q is not None for q in qs)
        for text, who in entries.items():
            line = f"{text} ({'every entry' if len(who) == present > 2 else ', '.join(who)})"
            lines.setdefault(line, []).append(criterion)
    return [f"{', '.join(criteria)}: {line}" for line, criteria in lines.items()]


