"""Meta-evaluation of metrics and metric combinations on a test bed, and optimal-set search.

This module joins the layers: a :class:`~combo.testbed.Testbed` gives human
judgments, a :class:`~combo.scoring.ScoreTable` (and, for QUEEN/KING, a
:class:`~combo.scoring.ReferenceScores`) gives metric scores, :mod:`combo.combine`
combines them and :mod:`combo.meta` measures them. Criteria (Giménez & Màrquez
2008, §4): human likeness (``king``, ``orange``, with QUEEN) and human
acceptability (``r_snt`` segment Pearson, WMT ``wmt_kendall``, system-level
``pearson``/``spearman``, ``acc_eq``); and on a MUTT test bed, ``mutt``: the
mean unit-test accuracy over corruption types (Boag et al. 2016).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .meta.queen import min_references
from .combine.search import SearchResult, search
from .combine.ulc import mean_rank, ulc
from .errors import InputError, OptionError
from .meta.correlation import ValueResult, correlate, correlation_values
from .meta.likeness import orange
from .meta.pairwise import (PreferencePairs, pair_scores, pairs_from_scores, pairwise_accuracy_with_ties,
                            pairwise_accuracy_with_ties_values, wmt_kendall, wmt_kendall_values)
from .meta.significance import bootstrap
from .meta.wmt23 import seg_acc_eq, seg_acc_eq_per_item, seg_correlation, sys_pairwise_accuracy, wmt23_average, wmt23_tasks
from .meta_run import king, queen_segments
from .progress import plural
from .scoring import ReferenceScores, ScoreTable
from .testbed import Testbed

# -- the criteria and the combination schemes: one record each, in two registries ------------------------------
#
# A criterion or a scheme is written once, as a record (Criterion, Scheme) registered below MetaEvaluator
# (register_criterion, register_scheme). Everything else reads the records: quality() calls a criterion's compute,
# supported_criteria() reads its needs, the bootstrap its statistic, evaluate its cost, the command line's --help
# and choices its name, aliases and meaning, the report its title and level; combined_rows and combined_systems
# call a scheme's rows and systems. The old tables (CRITERIA, CRITERION_TITLES, SCHEMES, ...) are computed from
# the registries each time they are read (module __getattr__), so a criterion or scheme registered later is in
# them too.

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
    taken = set(_CRITERIA) | {a for c in _CRITERIA.values() for a in c.aliases}
    clash = sorted(taken & {record.name, *record.aliases})
    if clash:
        raise ValueError(f"criterion {record.name!r}: the name {clash[0]!r} is taken")
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


def _aliases() -> Dict[str, str]:
    """``{old name: criterion}``, sorted by old name."""
    return dict(sorted((a, c.name) for c in _CRITERIA.values() for a in c.aliases))


def criterion_name(name: str) -> str:
    """The criterion ``name`` stands for (an alias: today's name; any other name unchanged)."""
    return _aliases().get(name, name)


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


def _default_scheme(criterion: str) -> str:
    """The scheme ``criterion`` uses when none is given (an unknown name: the default one, then refused)."""
    record = _CRITERIA.get(criterion_name(criterion))
    return record.default_scheme if record is not None else DEFAULT_SCHEME_NAME


def _judgments_read(criterion: str) -> Optional[str]:
    """What ``criterion`` reads of the human judgments (:attr:`Needs.judgments`); None for a name that is no
    criterion ("a pairwise criterion")."""
    record = _CRITERIA.get(criterion_name(criterion))
    return record.needs.judgments if record is not None else None


def criterion_sign(criterion: str) -> float:
    """+1 when higher values of ``criterion`` are better, -1 when lower ones are (:data:`LOWER_IS_BETTER`)."""
    record = _CRITERIA.get(criterion_name(criterion))
    return record.sign if record is not None else 1.0


#: The old tables, each computed from the registries when read (``from combo.evaluate import CRITERIA``).
_DERIVED: Dict[str, Callable[[], object]] = {
    "CRITERIA": lambda: tuple(_CRITERIA),
    #: other names a criterion option accepts, e.g. ``kendall`` (WMT's Kendall-like tau, not tau-b, which is
    #: ``seg_kendall``) for ``wmt_kendall`` and ``seg_pearson`` (WMT23's name of segment Pearson without grouping)
    #: for ``r_snt``
    "CRITERION_ALIASES": _aliases,
    "CRITERION_NAMES": lambda: tuple(_CRITERIA) + tuple(_aliases()),  # every name a criterion option accepts
    "CRITERION_TITLES": lambda: {c.name: c.title for c in _CRITERIA.values()},
    "CRITERION_MEANINGS": lambda: {c.name: c.meaning for c in _CRITERIA.values()},
    "CRITERION_LEVEL": lambda: {c.name: c.level for c in _CRITERIA.values()},
    "LOWER_IS_BETTER": lambda: frozenset(c.name for c in _CRITERIA.values() if not c.higher_is_better),
    "WMT23_CRITERIA": lambda: tuple(c.name for c in _CRITERIA.values() if c.family == "wmt23"),
    "LIKENESS": lambda: tuple(c.name for c in _CRITERIA.values() if c.family == "likeness"),
    "DEFAULT_SCHEME": lambda: {c.name: c.default_scheme for c in _CRITERIA.values()},
    "_BOOTSTRAP_STATISTICS": lambda: {c.name: c.bootstrap for c in _CRITERIA.values() if c.bootstrap is not None},
    "_SYSTEM_LEVEL": lambda: tuple(c.name for c in _CRITERIA.values() if c.level == "system"),
    "SCHEMES": lambda: tuple(_SCHEMES),
    "SCHEME_MEANINGS": lambda: {s.name: s.meaning for s in _SCHEMES.values()},  # what each scheme computes
}


def __getattr__(name: str):
    if name in _DERIVED:
        return _DERIVED[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_DERIVED))


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


class MetaEvaluator:
    """Measures metrics and metric combinations of one scored test bed against its human judgments.

    ``human_systems``: systems whose outputs are human-written (DSTC7's
    ``Human``); they are left out of the automatic candidates for KING and
    ORANGE. Defaults to ``testbed.metadata["human_system"]`` when present.

    Human translations that a reader lists as systems (mt-metrics-eval's outputs
    named after references, ``metadata["human_systems"]``) are left out of
    system-level statistics, as mt-metrics-eval does, unless ``include_human``.
    """

    def __init__(self, testbed: Testbed, table: ScoreTable, refs: Optional[ReferenceScores] = None,
                 aspect: Optional[str] = None, human_systems: Optional[Sequence[str]] = None,
                 triples: str = "distinct", kendall_variant: str = "wmt12", kendall_ties: Optional[str] = None,
                 king_ties: str = "count", include_human: bool = False, held_out: Optional[int] = None,
                 memory=None, seed: int = 0, progress: bool = False, jobs: int = 1, command: Optional[str] = None):
        from .budget import Budget
        from .meta.likeness import check_held_out

        check_held_out(held_out)
        self.testbed = testbed
        self.table = table
        self.refs = refs
        self.triples = triples
        self.held_out = held_out  # KING from this many held-out references per segment (None: exact)
        self.budget = Budget.of(memory)
        self.seed = seed  # the held-out draws: the same for every metric set (paired comparisons)
        self.progress = progress
        self.jobs = jobs  # KING's chunks of segments in parallel (combo.parallel)
        self.king_ties = king_ties
        self.kendall_variant = kendall_variant
        self.kendall_ties = kendall_ties
        #: the command whose options the fixes of messages name (:data:`COMMAND_OPTIONS`; None: the API)
        self.command = command
        #: why KING and ORANGE are not measured when ``refs`` is None (set by whoever chose not to compute them;
        #: :func:`supported_criteria` says it)
        self.likeness_note: Optional[str] = None
        if human_systems is None:
            h = testbed.metadata.get("human_system")
            human_systems = [h] if isinstance(h, str) and h in table.systems else []
        self.human_systems = list(human_systems)
        listed = [] if include_human else list(testbed.metadata.get("human_systems") or [])
        #: systems used by system-level statistics
        self.system_mask = np.array([s not in listed for s in table.systems], dtype=bool)
        self.hib = np.asarray(table.higher_is_better, dtype=bool)
        self.n_sys, self.n_seg = len(table.systems), len(table.segment_ids)
        self.aspect = testbed.check_aspect(aspect) if aspect != "rr-wins" else None
        self.human = self._human_matrix()
        self.human[~self.system_mask] = np.nan  # listed human translations are not candidates either
        self._pairs: Optional[PreferencePairs] = None
        self._likeness_segments = None

    # -- human judgments ------------------------------------------------------------------
    def _human_matrix(self) -> np.ndarray:
        """Mean human score of each (system, segment) for the chosen aspect; NaN where unjudged.

        A test bed with relative rankings only (WMT12) gets, per candidate, its
        share of wins over the non-tied pairs it appears in (aspect ``rr-wins``),
        so that segment-level correlations (R_snt) are defined there too.
        """
        if self.aspect is None and self.testbed.preferences:
            self.aspect = "rr-wins"
            return self.testbed.win_share_matrix(self.table.systems)
        return self.testbed.score_matrix(self.table.systems, self.aspect)

    @property
    def has_absolute_scores(self) -> bool:
        """Whether the human matrix holds absolute scores (not WMT12-style shares of wins from rankings)."""
        return self.aspect != "rr-wins" and bool(np.isfinite(self.human).any())

    def preference_pairs(self) -> PreferencePairs:
        """Human preference pairs: the test bed's relative rankings, else pairs from absolute scores."""
        if self._pairs is None:
            sys_index = {s: i for i, s in enumerate(self.table.systems)}
            prefs = [p for p in self.testbed.preferences if p.better in sys_index and p.worse in sys_index]
            if prefs:
                self._pairs = PreferencePairs(
                    np.array([p.segment for p in prefs]), np.array([sys_index[p.better] for p in prefs]),
                    np.array([sys_index[p.worse] for p in prefs]), np.array([p.tie for p in prefs]))
            elif np.isfinite(self.human).any():
                self._pairs = pairs_from_scores(self.human)
            else:
                raise self.missing_judgments("a pairwise criterion")
        return self._pairs

    def _given_system_scores(self) -> Dict[str, float]:
        """The test bed's own system-level human scores for the aspect (or its only ones); {} when none."""
        return self.testbed.system_scores.get(self.aspect or "", {}) or (
            next(iter(self.testbed.system_scores.values())) if len(self.testbed.system_scores) == 1 else {})

    # -- what a message names --------------------------------------------------------------------------
    def ask(self, criterion: str) -> str:
        """How the command at hand asks for ``criterion``: ``--criteria wmt_kendall``, ``--criterion ...``."""
        return f"{COMMAND_OPTIONS[self.command][0]} {criterion}"

    def missing_judgments(self, criterion: str) -> InputError:
        """The error for ``criterion`` on a test bed without the judgments it reads: what the test bed has (no
        judgments, rankings only, system scores only) and a criterion that reads what it has, in the options of
        the command at hand (:attr:`command`)."""
        tb, name = self.testbed, repr(self.testbed.name)
        if tb.preferences and _judgments_read(criterion) == "absolute":
            return InputError(f"test bed {name} has relative rankings only, no absolute segment scores (MQM, DA): "
                              f"{criterion} needs them", fix=f"use {self.ask('wmt_kendall')} or {self.ask('acc_eq')}, which read "
                                               "rankings")
        if self._given_system_scores() and not np.isfinite(self.human).any() and not tb.preferences:
            return InputError(f"test bed {name} has system-level human scores only: {criterion} needs segment-level "
                              "judgments", fix=(f"use {self.ask('pearson')} or {self.ask('spearman')}, which read "
                                                "system scores" if self.n_sys >= 3 else
                                                "add segment-level judgments (docs/testbeds.md)"))
        fix = ("add human judgments to the test bed (docs/testbeds.md; a plain folder reads them from scores.tsv: "
               "system, line, score)")
        need = min_references(self.triples) + 1
        if tb.segments and all(len(seg.references) >= need for seg in tb.segments):
            fix += f", or measure human likeness, which needs references only: {self.ask('king')}"
        return InputError(f"test bed {name} has no human judgments (no scores, rankings or system scores): "
                          f"{criterion} compares metric scores with them", fix=fix)

    def _check_judgments(self, criterion: str) -> None:
        """Refuse, with what is missing and what works, a criterion the test bed's judgments cannot measure."""
        judgments = _judgments_read(criterion)
        if judgments == "none":
            return
        segment_level = bool(np.isfinite(self.human).any() or self.testbed.preferences)
        if judgments == "absolute":
            ok = self.has_absolute_scores
        elif judgments == "system":
            ok = segment_level or bool(self._given_system_scores())
        else:
            ok = segment_level
        if not ok:
            raise self.missing_judgments(criterion)

    def human_system_scores(self) -> np.ndarray:
        """System-level human scores: given ones, else the mean segment score, else the share of wins."""
        given = self._given_system_scores()
        if given and all(s in given for s in self.table.systems):
            return np.array([given[s] for s in self.table.systems], dtype=np.float64)
        if np.isfinite(self.human).any():
            judged = np.isfinite(self.human)
            with np.errstate(invalid="ignore", divide="ignore"):  # a system never judged: NaN
                return np.where(judged, self.human, 0.0).sum(axis=1) / judged.sum(axis=1)
        pairs = self.preference_pairs().without_ties()
        wins = np.bincount(pairs.better, minlength=self.n_sys).astype(float)
        losses = np.bincount(pairs.worse, minlength=self.n_sys).astype(float)
        with np.errstate(invalid="ignore"):
            return wins / (wins + losses)

    # -- combined scores -----------------------------------------------------------------
    def _matrix(self, row_values: np.ndarray) -> np.ndarray:
        out = np.full((self.n_sys, self.n_seg), np.nan)
        out[self.table.row_system, self.table.row_segment] = row_values
        return out

    def combined_rows(self, subset: Sequence[int], scheme: str) -> Tuple[np.ndarray, int]:
        """Segment-level scores of the combination of ``subset`` per row; and the segments skipped (the scheme's
        ``rows``)."""
        return get_scheme(scheme).rows(self, list(subset))

    def combined_systems(self, subset: Sequence[int], scheme: str) -> np.ndarray:
        """System-level scores (the scheme's ``systems``: ULC / mean rank of corpus scores); a scheme without
        them (QUEEN): the mean of each system's combined segment scores."""
        record = get_scheme(scheme)
        if record.systems is not None:
            return record.systems(self, list(subset))
        rows, _ = self.combined_rows(subset, scheme)
        with np.errstate(invalid="ignore"):
            return np.nanmean(self._matrix(rows), axis=1)

    def _queen_rows(self, subset: List[int]) -> Tuple[np.ndarray, int]:
        """QUEEN of ``subset`` per row (a Scheme's rows); NaN and counted skipped where a segment has too few
        references."""
        refs = self._need_refs("QUEEN")
        segs = _SubsetSegments(refs, subset, None)
        res = queen_segments(segs, self.triples, higher_is_better=self.hib[subset], memory=self.budget)
        out = np.full(len(self.table.row_system), np.nan)
        for i, vals in enumerate(res.values):
            if vals is not None:
                out[refs.rows(i)] = vals
        return out, res.n_skipped

    def _need_refs(self, what: str) -> ReferenceScores:
        if self.refs is None:
            raise OptionError(f"{what} needs single-reference scores: pass refs=reference_scores(...)")
        return self.refs

    # -- human likeness --------------------------------------------------------------------
    def _automatic_rows(self):
        """Per segment, which of its candidate rows are automatic (KING and ORANGE leave human systems out)."""
        if self._likeness_segments is None:
            refs = self._need_refs("KING")
            human = {self.table.systems.index(h) for h in self.human_systems}
            self._likeness_segments = [np.array([self.table.row_system[k] not in human for k in refs.rows(i)],
                                                dtype=bool) for i in range(self.n_seg)]
        return self._likeness_segments

    def likeness(self, subset: Sequence[int], criterion: str = "king"):
        """KING (higher better) or ORANGE (lower better) of the QUEEN combination of ``subset``.

        Segments are made from the reference scores one chunk at a time (memory
        bounded by ``memory``); with ``held_out`` KING is an unbiased estimate
        from that many held-out references per large segment, reported with its
        standard error and 95% interval in the note.
        """
        subset = list(subset)
        segs = _SubsetSegments(self._need_refs("KING"), subset, self._automatic_rows())
        sample = self.testbed.metadata.get("segment_sample") or {}
        res = king(segs, self.triples, higher_is_better=self.hib[subset], ties=self.king_ties,
                   held_out=self.held_out, seed=self.seed, memory=self.budget, progress=self.progress,
                   jobs=self.jobs, segment_population=sample.get("population"), largest_set=len(self.hib))
        left_out = ((f"{res.n_skipped} segments skipped (need >= {min_references(self.triples) + 1} references "
                     "and a candidate)",) if res.n_skipped else ())
        if criterion == "king":
            ties = f"{res.ties} references tied with the best candidate"
            if not res.exact:
                low, high = res.interval()
                parts = []
                if res.segment_sample:
                    parts.append(f"a sample of {res.n_used} of {res.segment_population} segments "
                                 f"(seed {sample.get('seed')})")
                if res.estimated:
                    parts.append(f"{res.held_out} held-out references in {len(res.estimated)} segments")
                ties = (f"estimate from {' and '.join(parts)} (standard error {res.stderr:.4f}, 95% sampling "
                        f"interval [{low:.4f}, {high:.4f}]); " + ties)
            return Quality(res.value, "king", "queen", res.n_used, res.n_skipped, _joined(ties, *left_out),
                           left_out=left_out,
                           units=(res.per_segment[np.isfinite(res.per_segment)],), tie_share=res.tie_share,
                           value_strict=res.value_with_ties("strict"),
                           sampling=None if res.exact else dict(zip(("stderr", "low", "high"),
                                                                    (res.stderr, *res.interval()))))
        used = [s for s in res.segments if s is not None]
        o = orange([s.ref_queen for s in used], [s.cand_queen for s in used])
        return Quality(o.value, "orange", "queen", o.n_used, res.n_skipped, _joined("lower is better", *left_out),
                       units=(o.per_segment[np.isfinite(o.per_segment)],), left_out=left_out)

    # -- any criterion ---------------------------------------------------------------------------
    def quality(self, subset: Sequence[int], criterion: str, scheme: Optional[str] = None) -> Quality:
        """The criterion's value for the metric set ``subset`` combined with ``scheme`` (its record's compute)."""
        record = get_criterion(criterion)
        scheme = scheme or record.default_scheme
        check_scheme(record.name, scheme, self.command)
        self._check_judgments(record.name)
        return record.compute(self, subset, record.name, scheme)

    # -- the criteria's computations (each a Criterion's compute: subset, criterion, scheme) ---------------------
    def _likeness(self, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
        """KING or ORANGE (:meth:`likeness`); the scheme is QUEEN's."""
        return self.likeness(subset, criterion)

    def _system_correlation(self, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
        """Pearson or Spearman (the criterion's name) of system scores with human system scores."""
        keep = self.system_mask
        human = self.human_system_scores()[keep]
        combined = self.combined_systems(subset, scheme)[keep]
        res = correlate(combined, human, method=criterion)
        ok = np.isfinite(combined) & np.isfinite(human)
        left_out = self._human_left_out()
        unscored = int((np.isfinite(human) & ~np.isfinite(combined)).sum())
        if unscored:
            left_out += (f"{unscored} judged {plural('system', unscored)} without a metric score left out",)
        return Quality(res.value, criterion, scheme, int(ok.sum()), 0, _joined(res.reason, *left_out),
                       units=(combined[ok], human[ok]), unit="systems", left_out=left_out)

    def segment_correlation(self, subset: Sequence[int], criterion: str, scheme: str,
                            method: str = "pearson") -> Quality:
        """A correlation (``method``: pearson, spearman, kendall_b) of all segment scores with the human segment
        scores, pooled (r_snt: Pearson); its units are the (metric, human) pairs, resampled by segment."""
        rows, skipped = self.combined_rows(subset, scheme)
        metric = self._matrix(rows)
        judged = np.isfinite(self.human)
        left_out = self._unscored(judged, metric) + self._queen_skipped(skipped, scheme)
        human = np.where(np.isnan(metric), np.nan, self.human)
        res = correlate(metric, human, method=method)
        ok = np.isfinite(metric) & np.isfinite(human)
        return Quality(res.value, criterion, scheme, int(ok.sum()), skipped, _joined(res.reason, *left_out),
                       units=(metric[ok], human[ok]), groups=np.nonzero(ok)[1], left_out=left_out)

    def _pairwise(self, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
        """WMT's Kendall-like tau (wmt_kendall) or acc_eq over the human preference pairs."""
        rows, skipped = self.combined_rows(subset, scheme)
        metric = self._matrix(rows)
        pairs = self.preference_pairs()
        usable = np.isfinite(metric[pairs.better, pairs.segment]) & np.isfinite(metric[pairs.worse, pairs.segment])
        pairs = PreferencePairs(pairs.segment[usable], pairs.better[usable], pairs.worse[usable], pairs.tie[usable])
        dropped = int((~usable).sum())
        left_out = ((f"{dropped} preference {plural('pair', dropped)} with a candidate without a metric score left out",)
                    if not usable.all() else ()) + self._queen_skipped(skipped, scheme)
        better, worse = pair_scores(metric, pairs)
        if criterion == "wmt_kendall":
            res = wmt_kendall(better, worse, pairs.tie, variant=self.kendall_variant, ties=self.kendall_ties)
            return Quality(res.value, criterion, scheme, len(pairs), skipped,
                           _joined(str(res) if not res.defined else "", *left_out),
                           units=(better, worse, pairs.tie), groups=pairs.segment, left_out=left_out)
        res = pairwise_accuracy_with_ties(better, worse, pairs.tie)
        return Quality(res.value, criterion, scheme, len(pairs), skipped,
                       _joined(f"epsilon {res.epsilon:.4g}", *left_out),
                       units=(better, worse, pairs.tie), groups=pairs.segment, epsilon=res.epsilon, left_out=left_out)

    def _mutt(self, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
        """MUTT's mean unit-test accuracy of the combined scores (:meth:`_unit_tests`)."""
        rows, _ = self.combined_rows(subset, scheme)
        return self._unit_tests(rows, scheme)

    def _unscored(self, judged: np.ndarray, metric: np.ndarray) -> Tuple[str, ...]:
        """The judged candidates left out for want of a metric score (none read for them: mtme:, scores:)."""
        unscored = int((judged & np.isnan(metric)).sum())
        return ((f"{unscored} judged {plural('candidate', unscored)} without a metric score left out",) if unscored
                else ())

    def _queen_skipped(self, skipped: int, scheme: str) -> Tuple[str, ...]:
        """The segments a QUEEN combination skipped (too few references, or no candidate)."""
        if not skipped:
            return ()
        return (f"{skipped} segments skipped by QUEEN (need >= {min_references(self.triples)} references "
                "and a candidate)",)

    def _human_left_out(self) -> Tuple[str, ...]:
        """Human translations listed as systems, left out of system-level statistics (unless include_human)."""
        left = int((~self.system_mask).sum())
        return (f"{left} human {plural('translation', left)} left out",) if left else ()

    def _wmt23(self, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
        """The WMT23 statistics as mt-metrics-eval computes them (:mod:`combo.meta.wmt23`) on absolute scores."""
        if not self.has_absolute_scores:
            raise self.missing_judgments(criterion)
        rows, skipped = self.combined_rows(subset, scheme)
        keep = self.system_mask
        metric, human = self._wmt23_segments(rows)
        left_out = (self._unscored(np.isfinite(self.human[keep]), metric) + self._queen_skipped(skipped, scheme)
                    + self._human_left_out())
        note = _joined(*left_out)
        n_cells = int(np.isfinite(human).sum())
        if criterion in ("sys_accuracy", "wmt23"):
            m_sys, h_sys = self._wmt23_systems(subset, scheme)
            if criterion == "sys_accuracy":
                return Quality(sys_pairwise_accuracy(m_sys, h_sys), criterion, scheme, int(keep.sum()), 0,
                               note, unit="systems", left_out=left_out)
            tasks = wmt23_tasks(metric, human, m_sys, h_sys)
            detail = ", ".join(f"{name} {value:.4f}" for name, value in tasks)
            return Quality(wmt23_average(tasks), criterion, scheme, n_cells, skipped, _joined(detail, note),
                           left_out=left_out)
        if criterion == "seg_kendall":
            ok = np.isfinite(metric) & np.isfinite(human)
            return Quality(seg_correlation(metric, human, "kendall", "none"), criterion, scheme, n_cells, skipped,
                           note, units=(metric[ok], human[ok]), groups=np.nonzero(ok)[1], left_out=left_out)
        if criterion == "acc_eq_item":
            res = seg_acc_eq(metric, human, "item")
            per = seg_acc_eq_per_item(metric, human, res.epsilon)
            return Quality(res.value, criterion, scheme, n_cells, skipped, _joined(f"epsilon {res.epsilon:.4g}", note),
                           units=(per[np.isfinite(per)],), epsilon=res.epsilon, left_out=left_out)
        method = "kendall_b" if criterion == "seg_kendall_item" else "pearson"
        per = correlation_values(metric, human, method, "item", per_group=True)
        value = seg_correlation(metric, human, "kendall" if criterion == "seg_kendall_item" else "pearson", "item")
        return Quality(value, criterion, scheme, n_cells, skipped, note, units=(per[np.isfinite(per)],),
                       left_out=left_out)

    def _wmt23_segments(self, rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The (systems, segments) metric and human matrices WMT23's segment tasks read: the systems scored
        (human translations left out unless included), a cell without a metric score not judged either."""
        metric = self._matrix(rows)[self.system_mask]
        return metric, np.where(np.isnan(metric), np.nan, self.human[self.system_mask])

    def _wmt23_systems(self, subset: Sequence[int], scheme: str) -> Tuple[np.ndarray, np.ndarray]:
        """The metric's and the humans' system scores WMT23's system tasks read (the systems scored)."""
        keep = self.system_mask
        return self.combined_systems(subset, scheme)[keep], self.human_system_scores()[keep]

    def _unit_tests(self, rows: np.ndarray, scheme: str) -> Quality:
        """Mean MUTT accuracy over corruption types of combined scores (higher is better after combining)."""
        from .meta.mutt import mean_unit_test_accuracy, segment_pairs, unit_test_accuracy

        kinds = self.testbed.metadata.get("kinds")
        if self.testbed.metadata.get("format") != "mutt" or not kinds:
            raise InputError(f"test bed {self.testbed.name!r} is not a MUTT test bed: mutt needs original/corrupted "
                             "pairs", fix="give a folder of MUTT corruption files")
        original, corrupted, groups = segment_pairs(self.table, rows, [s.group for s in self.testbed.segments])
        counts = unit_test_accuracy(original, corrupted, groups, kinds, higher_is_better=True)
        note = ", ".join(f"{c} {p}/{n}" for c, (n, p) in counts.items())
        return Quality(mean_unit_test_accuracy(counts), "mutt", scheme, len(groups), 0, note)

    def with_interval(self, q: Quality, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
                      ) -> Quality:
        """Add a percentile bootstrap interval to ``q``, resampling ``q.unit``: whole segments (all the
        candidates or preference pairs of a drawn segment together), or systems at system level."""
        record = _CRITERIA.get(q.criterion)
        if q.units is None or not q.defined or len(q.units[0]) < 2 or record is None or record.bootstrap is None:
            return q
        stat = record.bootstrap(self)
        res = bootstrap(stat, *q.units, n_resamples=n_resamples, confidence=confidence, seed=seed, groups=q.groups)
        q.low, q.high = res.low, res.high
        q.samples = res.samples if res.n_undefined == 0 else None
        return q


class _SubsetSegments:
    """The segments ``(cand_ref, ref_ref)`` of a metric subset, made on demand from :class:`ReferenceScores`.

    QUEEN and KING index it one chunk at a time, so only a chunk of segments is
    ever copied (``auto``: per segment, the candidate rows kept; None: all).
    """

    def __init__(self, refs: ReferenceScores, subset: Sequence[int], auto: Optional[List[np.ndarray]]):
        self.refs, self.subset, self.auto = refs, list(subset), auto

    def __len__(self) -> int:
        return len(self.refs.ref_index)

    def shape_of(self, i: int) -> Tuple[int, int, int]:
        n_cand = len(self.refs.rows(i)) if self.auto is None else int(self.auto[i].sum())
        return len(self.subset), n_cand, len(self.refs.ref_index[i])

    def segment_bytes(self, i: int) -> int:
        m, n_cand, n = self.shape_of(i)
        return 8 * m * (n_cand * n + n * n)

    def __getitem__(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        cand = self.refs.cand_ref(i)
        if self.auto is not None:
            cand = cand[:, self.auto[i]]
        return cand[self.subset], self.refs.ref_ref(i)[self.subset]


def _correlation_statistic(method: str):
    def stat(x, y):
        return correlation_values(x[..., None, :], y[..., None, :], method=method)
    return stat


def correlation_bootstrap(method: str):
    """A criterion's ``bootstrap`` for a correlation (``method``) of its two units, the metric's and the human's."""
    return lambda ev: _correlation_statistic(method)


def _mean_bootstrap(ev: MetaEvaluator):
    return lambda v: v.mean(axis=-1)


def _item_mean_bootstrap(ev: MetaEvaluator):
    """Item-grouped statistics: the mean of per-segment values (acc_eq at its full-data epsilon, as mt-metrics-eval's
    permutation test fixes it), so resampling segments resamples those values."""
    return lambda v: np.nanmean(v, axis=-1)


def _wmt_kendall_bootstrap(ev: MetaEvaluator):
    return lambda b, w, t: wmt_kendall_values(b, w, t, variant=ev.kendall_variant, ties=ev.kendall_ties)


def _acc_eq_bootstrap(ev: MetaEvaluator):
    return lambda b, w, t: pairwise_accuracy_with_ties_values(b, w, t)


# -- the built-in schemes and criteria (to add one: write its rows or compute, then register its record here) -----

for _scheme in (
    Scheme("queen", "QUEEN: probability over reference triples that, for every metric, the output is as close to a "
                    "reference as two other references are to each other; 0-1, robust to metric scale and "
                    "redundancy",
           MetaEvaluator._queen_rows, needs_references=True),
    Scheme("ulc", "ULC: mean of the metric scores, each min-max normalised over the test bed",
           lambda ev, subset: (ulc(ev.table.segment[subset], ev.hib[subset]), 0),
           lambda ev, subset: ulc(ev.table.system[subset], ev.hib[subset])),
    Scheme("mean-rank", "mean of each candidate's rank under every metric",
           lambda ev, subset: (mean_rank(ev.table.segment[subset], ev.hib[subset]), 0),
           lambda ev, subset: mean_rank(ev.table.system[subset], ev.hib[subset])),
):
    register_scheme(_scheme)
del _scheme

#: The reasons of supported_criteria that several criteria share.
_PAIRWISE_SYSTEMS = "pairwise criteria compare candidates of one segment; the test bed has 1 system"
_SYSTEM_CORRELATION_SYSTEMS = "a system-level correlation needs at least 3 systems; the test bed has {n}"
_WMT23_ABSOLUTE = "a WMT23 statistic needs absolute segment scores (e.g. MQM); the test bed has rankings only"
#: Criteria over systems: their bootstrap is cheap (3 ms an entry on WMT12 de-en's 16 systems; see _entry_cost).
_SYSTEM_COST = 0.01
_SYSTEM_CORRELATION = Needs("system", 3, few_systems=_SYSTEM_CORRELATION_SYSTEMS)
_PAIRS = Needs("pairs", 2, few_systems=_PAIRWISE_SYSTEMS)
_WMT23 = Needs("absolute", 2, few_systems=_PAIRWISE_SYSTEMS, no_absolute=_WMT23_ABSOLUTE)

for _record in (
    Criterion("king", "KING (human likeness, QUEEN)",
              "share of references that QUEEN rates at least as human-like as every system output, judged against "
              "the other references (human likeness); 0-1, higher is better; check the tie share",
              "segment", MetaEvaluator._likeness, Needs("none", references=True), family="likeness",
              bootstrap=_mean_bootstrap, only_scheme="queen"),
    Criterion("orange", "ORANGE (lower is better)",
              "mean rank of each reference among the system outputs, divided by the list length (human likeness); "
              "lower is better, about 0.5 is chance",
              "segment", MetaEvaluator._likeness, Needs("none", references=True), higher_is_better=False,
              family="likeness", bootstrap=_mean_bootstrap, only_scheme="queen"),
    Criterion("r_snt", "segment Pearson (R_snt)",
              "Pearson correlation of segment scores with human segment scores; -1 to 1, higher is better, 0 is "
              "chance",
              "segment", MetaEvaluator.segment_correlation, Needs("segment"), aliases=("seg_pearson",),
              bootstrap=correlation_bootstrap("pearson")),
    Criterion("wmt_kendall", "WMT Kendall-like tau",
              "WMT's Kendall-like tau over human pairwise preferences, (concordant - discordant) / pairs; "
              "-1 to 1, higher is better, 0 is chance",
              "segment", MetaEvaluator._pairwise, _PAIRS, aliases=("kendall",), bootstrap=_wmt_kendall_bootstrap,
              own_units=2, cost=0.6),
    Criterion("pearson", "system Pearson",
              "Pearson correlation of system scores with human system scores; -1 to 1, higher is better "
              "(few systems: wide intervals)",
              "system", MetaEvaluator._system_correlation, _SYSTEM_CORRELATION,
              bootstrap=correlation_bootstrap("pearson"), cost=_SYSTEM_COST),
    Criterion("spearman", "system Spearman",
              "Spearman rank correlation of system scores with human system scores; -1 to 1, higher is better",
              "system", MetaEvaluator._system_correlation, _SYSTEM_CORRELATION,
              bootstrap=correlation_bootstrap("spearman"), cost=_SYSTEM_COST),
    Criterion("acc_eq", "pairwise accuracy with ties (acc_eq)",
              "share of candidate pairs of one segment ordered as the humans order them, ties included; 0-1, "
              "higher is better",
              "segment", MetaEvaluator._pairwise, _PAIRS, bootstrap=_acc_eq_bootstrap, own_units=2),
    Criterion("seg_kendall", "segment Kendall tau-b (no grouping)",
              "Kendall tau-b of all segment scores against the human scores, pooled; -1 to 1, higher is better",
              "segment", MetaEvaluator._wmt23, _WMT23, family="wmt23",
              bootstrap=correlation_bootstrap("kendall_b")),
    Criterion("seg_pearson_item", "segment Pearson, grouped by item",
              "Pearson correlation over the systems of each segment, averaged over segments; -1 to 1, "
              "higher is better",
              "segment", MetaEvaluator._wmt23, _WMT23, family="wmt23", bootstrap=_item_mean_bootstrap),
    Criterion("seg_kendall_item", "segment Kendall tau-b, grouped by item",
              "Kendall tau-b over the systems of each segment, averaged over segments; -1 to 1, "
              "higher is better",
              "segment", MetaEvaluator._wmt23, _WMT23, family="wmt23", bootstrap=_item_mean_bootstrap),
    Criterion("acc_eq_item", "acc_eq grouped by item (WMT23)",
              "acc_eq within each segment with WMT23's tie calibration, averaged; 0-1, higher is better",
              "segment", MetaEvaluator._wmt23, _WMT23, family="wmt23", bootstrap=_item_mean_bootstrap),
    Criterion("sys_accuracy", "system pairwise accuracy",
              "share of system pairs ordered as the humans order them; 0-1, higher is better, 0.5 is chance",
              "system", MetaEvaluator._wmt23, _WMT23, family="wmt23", cost=_SYSTEM_COST),
    Criterion("wmt23", "WMT23 average over tasks",
              "mean of the WMT23 metrics task's segment and system statistics; higher is better",
              "both", MetaEvaluator._wmt23, _WMT23, family="wmt23"),
    Criterion("mutt", "MUTT mean unit-test accuracy",
              "mean share of unit tests passed per corruption type (original scored above its corruption); 0-1, "
              "higher is better",
              "segment", MetaEvaluator._mutt,
              Needs("none", testbed_format="mutt",
                    wrong_format="needs a MUTT test bed (a folder of corruption trials)"),
              family="unit-tests",
              refused_schemes={"queen": "compares the combined scores of a sentence and its corruption"}),
):
    register_criterion(_record)
del _record


@dataclass
class SetSearch:
    """A metric-set search on a test bed, with names instead of indices."""

    selected: List[str]
    quality: float
    best_single: Tuple[str, float]
    trace: List[Dict[str, object]]
    criterion: str
    scheme: str
    strategy: str
    evaluations: int
    details: Dict[str, object] = field(default_factory=dict)
    #: the qualities of the selected set and of the best single metric (units, notes, what they leave out)
    chosen_quality: Optional[Quality] = field(default=None, repr=False)
    single_quality: Optional[Quality] = field(default=None, repr=False)
    step_qualities: List[Optional[Quality]] = field(default_factory=list, repr=False)  # one per trace step

    def left_out(self) -> List[str]:
        """What the values of the sets measured leave out, one line per distinct count naming the sets (at most
        three, else how many of them): the selected set's, the best single metric's and each trace step's."""
        named: Dict[str, Quality] = {}
        for step, q in zip(self.trace, self.step_qualities):
            if q is not None:
                named.setdefault("[" + ", ".join(step["set"]) + "]", q)
        if not named and self.chosen_quality is not None:
            named["[" + ", ".join(self.selected) + "]"] = self.chosen_quality
        sets: Dict[str, List[str]] = {}
        for name, q in named.items():
            for text in q.left_out:
                sets.setdefault(text, []).append(name)
        def which(who: List[str]) -> str:
            if len(who) == len(named) > 1:
                return "every set in the trace"
            return ", ".join(who) if len(who) <= 3 else f"{len(who)} of the {len(named)} sets in the trace"

        return [f"{self.criterion}: {text} ({which(who)})" for text, who in sets.items()]

    @property
    def beats_best_single(self) -> bool:
        sign = criterion_sign(self.criterion)
        return sign * self.quality > sign * self.best_single[1]

    def gain_test_text(self) -> str:
        """The paired bootstrap test of the selected set's gain over the best single metric, as words:
        ``no significant difference (p = 0.367, one-sided paired bootstrap over 1000 resamples of segments,
        seed 0)``, ``significant (...)``, the test's note when it could not run, or "" without a test."""
        sig = self.details.get("significance") or {}
        if sig.get("p_value") is None:
            return sig.get("note") or ""
        how = (f"p = {sig['p_value']:.3f}, one-sided paired bootstrap over {sig['resamples']} resamples of "
               f"{sig['unit'] or 'segments'}, seed {sig['seed']}")
        return f"significant ({how})" if sig["significant"] else f"no significant difference ({how})"

    def to_dict(self) -> Dict[str, object]:
        # in_sample: the set was selected on the data it is measured on; p_value: of the paired test of its gain
        # over the best single metric (compare_with_best_single), None when not tested
        return {"selected": self.selected, "quality": self.quality,
                "best_single": {"metric": self.best_single[0], "quality": self.best_single[1]},
                "beats_best_single": self.beats_best_single, "in_sample": True,
                "p_value": (self.details.get("significance") or {}).get("p_value"),
                "criterion": self.criterion, "scheme": self.scheme,
                "strategy": self.strategy, "evaluations": self.evaluations, "trace": self.trace, **self.details}


#: A metric set whose quality takes less than this is evaluated in this process during a search: a batch of sets
#: sent to forked workers costs about 0.15 s more than its sets (WMT12 de-en's r_snt: 15 ms a set, KING on the
#: bundled DSTC7 sample 30 ms; KING on 100 DSTC7 segments with every reference: seconds).
PARALLEL_SET_MIN_SECONDS = 0.2


def search_metric_sets(evaluator: MetaEvaluator, criterion: str = "king", scheme: Optional[str] = None,
                       strategy: str = "greedy", n_resamples: int = 1000, **options) -> SetSearch:
    """Search the metric set of ``evaluator.table`` that maximises ``criterion`` (ORANGE: minimises).

    ``n_resamples``: bootstrap resamples (seeded with ``evaluator.seed``) of the paired test of the selected set
    against the best single metric, in ``details["significance"]`` (:func:`compare_with_best_single`; 0: none).
    """
    criterion = criterion_name(criterion)
    scheme = scheme or _default_scheme(criterion)
    sign = criterion_sign(criterion)
    names = evaluator.table.metrics
    seen: Dict[Tuple[int, ...], Quality] = {}
    from .progress import progress

    m = len(names)
    expected = 2 * m - 1 if strategy == "greedy" else 2 ** m - 1 if strategy == "exhaustive" else None
    bar = progress(expected, f"search ({criterion})", evaluator.progress, unit="set")

    def key(subset) -> Tuple[int, ...]:
        return tuple(sorted(subset))

    def quality(subset):
        if key(subset) not in seen:
            seen[key(subset)] = evaluator.quality(subset, criterion, scheme)
            bar.update(1)
        return sign * seen[key(subset)].value

    def many(subsets):  # independent sets of one step, evaluated in forked workers sharing the evaluator
        from .parallel import run_tasks

        todo = [s for s in subsets if key(s) not in seen]
        found = run_tasks(_subset_quality, [(evaluator, s, criterion, scheme) for s in todo], evaluator.jobs)
        for s, q in zip(todo, found):
            seen[key(s)] = q
            bar.update(1)
        return [sign * seen[key(s)].value for s in subsets]

    from .parallel import on_cluster, parallel_available, workers_for

    parallel = parallel_available(evaluator.jobs)
    if parallel and m > 1 and not on_cluster():  # one set timed here says whether sets are worth sending to workers
        started = time.perf_counter()
        quality([0])
        parallel = time.perf_counter() - started >= PARALLEL_SET_MIN_SECONDS
    if parallel and strategy == "greedy":  # as many next steps at once as there are workers (on Dask: two)
        options = {"lookahead": max(2, workers_for(evaluator.jobs)), **options}
    try:
        res: SearchResult = search(list(range(len(names))), quality, strategy,
                                   many=many if parallel else None, **options)
    finally:
        bar.close()
    trace = [{**step, "metric": names[step["metric"]] if "metric" in step else None,
              "set": [names[m] for m in step["set"]], "quality": sign * step["quality"]} for step in res.trace]
    out = SetSearch([names[m] for m in res.selected], sign * res.quality,
                    (names[res.best_single[0]], sign * res.best_single[1]), trace, criterion, scheme, strategy,
                    res.evaluations)
    out.chosen_quality, out.single_quality = seen.get(key(res.selected)), seen.get((res.best_single[0],))
    out.step_qualities = [seen.get(key(step["set"])) for step in res.trace]
    out.details["significance"] = compare_with_best_single(evaluator, out, n_resamples, evaluator.seed)
    if criterion == "king":
        for step, raw in zip(trace, res.trace):
            q = seen.get(key(raw["set"]))
            step["tie_share"] = q.tie_share if q is not None else None
        chosen, single = seen[key(res.selected)], seen[(res.best_single[0],)]
        out.details["tie_share"] = chosen.tie_share
        if chosen.sampling is not None:
            out.details["estimate"] = {**chosen.sampling, "note": chosen.note}
        out.details["king_strict"] = {"selected": chosen.value_strict, "best_single": single.value_strict}
        out.details["warnings"] = king_tie_warnings(chosen, single, evaluator.king_ties)
    return out


def _subset_quality(evaluator: MetaEvaluator, subset, criterion: str, scheme: str) -> Quality:
    """One metric set's quality, as a worker's task (its own progress bars off: the search's bar counts sets;
    restored, as the task may run in this process)."""
    shown, evaluator.progress = evaluator.progress, False
    try:
        return evaluator.quality(list(subset), criterion, scheme)
    finally:
        evaluator.progress = shown


def king_tie_warnings(chosen: Quality, best_single: Quality, ties: str = "count") -> List[str]:
    """Warnings when ties decide a KING result (docs/queen-king.md, "Ties").

    Ties decide it when more than :data:`KING_TIE_WARNING` of the chosen set's comparisons
    (reference against best candidate) are ties, or when ``--king-ties strict`` (ties count 0) would
    reverse the order of the chosen set and the best single metric. Under ``strict`` ties add nothing.
    """
    if ties == "strict" or not np.isfinite(chosen.tie_share):
        return []
    out = []
    if chosen.decided_by_ties:
        out.append(f"KING is decided by ties: {chosen.tie_share:.0%} of the chosen set's reference-candidate "
                   f"comparisons are ties (counted {'1' if ties == 'count' else '1/2'} each); with --king-ties "
                   f"strict its KING is {chosen.value_strict:.4f}")
    if chosen is not best_single and np.isfinite(chosen.value_strict) and np.isfinite(best_single.value_strict):
        if (chosen.value > best_single.value) != (chosen.value_strict > best_single.value_strict):
            out.append(f"with --king-ties strict the order of the chosen set ({chosen.value_strict:.4f}) and the "
                       f"best single metric ({best_single.value_strict:.4f}) is reversed")
    return out


# -- every metric and combination under several criteria (combo evaluate, combo report) ----------------------

def supported_criteria(evaluator: MetaEvaluator) -> Tuple[List[str], Dict[str, str]]:
    """The criteria this test bed's judgments, systems and references support, and why each other one is not.

    Reads each criterion's :class:`Needs`: r_snt needs absolute segment scores (or rankings, read as shares of
    wins); wmt_kendall and acc_eq preference pairs (at least 2 systems); pearson and spearman any human judgment
    (system scores suffice) and at least 3 systems; king and orange no judgments, but single-reference scores and
    enough references; mutt a MUTT test bed.
    """
    ok, why = [], {}
    judged = bool(np.isfinite(evaluator.human).any() or evaluator.testbed.preferences)
    for record in criterion_records():
        c, needs = record.name, record.needs
        if needs.testbed_format is not None and evaluator.testbed.metadata.get("format") != needs.testbed_format:
            why[c] = needs.wrong_format
        elif needs.references and evaluator.refs is None:
            why[c] = evaluator.likeness_note or _likeness_reason(evaluator)
        elif needs.judgments != "none" and not (
                judged or (needs.judgments == "system" and evaluator.testbed.system_scores)):
            why[c] = ("needs human judgments; the test bed has none" if not evaluator.testbed.system_scores
                      else "needs segment-level human judgments; the test bed has system scores only")
        elif needs.judgments == "absolute" and not evaluator.has_absolute_scores:
            why[c] = needs.no_absolute
        elif evaluator.n_sys < needs.systems:
            why[c] = needs.few_systems.format(n=evaluator.n_sys, need=needs.systems)
        else:
            ok.append(c)
    return ok, why


def _likeness_reason(evaluator: MetaEvaluator) -> str:
    """Why KING and ORANGE were not measured, read from the test bed when no one said (``likeness_note``)."""
    need = min_references(evaluator.triples) + 1
    short = sum(len(seg.references) < need for seg in evaluator.testbed.segments)
    if short:
        return (f"needs at least {need} references per segment; {short} of {len(evaluator.testbed.segments)} "
                "segments have fewer")
    return "needs single-reference scores (combo.scoring.score_with_references), which were not computed"


def evaluate_entries(evaluator: MetaEvaluator, criteria: Sequence[str], schemes: Sequence[str] = ("ulc",),
                     n_resamples: int = 1000, seed: int = 0
                     ) -> Tuple[List[str], Dict[str, List[Optional[Quality]]]]:
    """Each metric alone and each scheme's combination of all of them under each criterion, with intervals.

    Returns the entry names (metrics, then ``ULC(all)`` ...) and, per criterion,
    one :class:`Quality` per entry (None where the criterion does not apply:
    KING and ORANGE measure QUEEN combinations only).
    """
    criteria = [criterion_name(c) for c in criteria]
    table = evaluator.table
    entries = [(name, [i], None) for i, name in enumerate(table.metrics)]
    entries += [(scheme.upper() + "(all)", list(range(len(table.metrics))), scheme) for scheme in schemes]
    out: Dict[str, List[Optional[Quality]]] = {c: [] for c in criteria}
    from .progress import progress

    what = f"evaluate ({n_resamples} bootstrap resamples each)" if n_resamples else "evaluate"
    only = {c: _CRITERIA[c].only_scheme if c in _CRITERIA else None for c in criteria}  # KING, ORANGE: queen
    wanted = [(name, c, subset, scheme) for name, subset, scheme in entries for c in criteria
              if only[c] is None or scheme in (None, only[c])]
    tasks = [(evaluator, subset, c, only[c] or scheme or DEFAULT_SCHEME_NAME, n_resamples, seed)
             for _, c, subset, scheme in wanted]
    found: Dict[Tuple[str, str], Quality] = {}
    from .parallel import run_tasks

    with progress(len(tasks), what, evaluator.progress, unit="entry") as bar:
        def done(i, q):
            found[wanted[i][:2]] = q
            bar.update(1)

        # one task per entry and criterion (its quality and its seeded bootstrap draws), in worker processes or
        # on a Dask cluster: the values equal one process's to the last digit
        run_tasks(_entry_quality, tasks, evaluator.jobs, on_result=done, keep=False,
                  weights=[_entry_cost(c, subset) for _, c, subset, _ in wanted])
    for name, _, _ in entries:
        for c in criteria:
            out[c].append(found.get((name, c)))
    return [name for name, _, _ in entries], out


def _entry_cost(criterion: str, subset: Sequence[int]) -> float:
    """The relative cost of one entry's bootstrap under ``criterion``, so the costliest tasks start first and the
    last to finish is a small one; it orders the tasks, never changes a value. A criterion's cost is its record's
    (:attr:`Criterion.cost`), measured on WMT12 de-en (16 systems x 3,003 segments, 1,000 resamples): r_snt
    0.37-0.44 s an entry (1.0), wmt_kendall 0.21-0.25 s (0.6), pearson 3 ms (0.01); the combination of 17 metrics
    1.7-1.8 times one metric's."""
    record = _CRITERIA.get(criterion)
    cost = record.cost if record is not None else 1.0
    return cost * (1.8 if len(subset) > 1 else 1.0)


def _entry_quality(evaluator: MetaEvaluator, subset, criterion: str, scheme: str, n_resamples: int,
                   seed: int) -> Quality:
    """One entry of :func:`evaluate_entries` under one criterion, with its bootstrap interval (a task)."""
    q = _subset_quality(evaluator, subset, criterion, scheme)
    return evaluator.with_interval(q, n_resamples=n_resamples, seed=seed) if n_resamples else q


def evaluation_rows(names: Sequence[str], qualities: Dict[str, List[Optional[Quality]]]) -> List[Dict[str, object]]:
    """The rows of ``combo evaluate --format json``: per entry, per criterion value, interval, n, note, text."""
    rows = []
    for k, name in enumerate(names):
        row: Dict[str, object] = {"metric": name}
        for c, qs in qualities.items():
            q = qs[k]
            row[c] = None if q is None else {"value": q.value, "low": q.low, "high": q.high, "n": q.n,
                                             "note": q.note, "text": str(q),
                                             "resampled": q.unit if np.isfinite(q.low) else None}
            if q is not None and c == "king":
                row[c].update(tie_share=q.tie_share, value_strict=q.value_strict)
        rows.append(row)
    return rows


def significance_clusters(evaluator: MetaEvaluator, qualities: Sequence[Optional[Quality]], n_resamples: int = 1000,
                          alpha: float = 0.05, seed: int = 0) -> Tuple[List[Optional[int]], str]:
    """Rank clusters of entries under one criterion (1 = best), as WMT's metrics tasks rank metrics.

    Entries are sorted best first; an entry starts a new cluster when the paired
    bootstrap test (Koehn 2004; the same resampled units for both, p-value by
    the shift method as :func:`combo.meta.significance.paired_bootstrap_test`)
    finds the current cluster's best entry significantly better at level
    ``alpha``. When every entry carries the samples of its interval
    (:meth:`MetaEvaluator.with_interval` with one seed draws the same resamples
    for entries with the same units), the test reuses them: resample ``b`` of
    both entries is the same draw of units, so their difference is the paired
    difference. Otherwise each test draws its own resamples. Needs every entry
    to share its resampled units (the same segments, pairs or systems);
    otherwise no clusters, and the reason is returned.
    """
    defined = [k for k, q in enumerate(qualities) if q is not None and q.defined]
    usable = [k for k in defined if qualities[k].units is not None]
    clusters: List[Optional[int]] = [None] * len(qualities)
    if len(defined) < 2:
        return clusters, "fewer than 2 defined entries"
    if len(usable) < 2:
        return clusters, (f"the paired bootstrap needs resampled units, which {qualities[defined[0]].criterion} "
                          f"does not have (no interval either)")
    p_value, reason = _paired_test(evaluator, qualities, usable, n_resamples, seed)
    if p_value is None:
        return clusters, reason
    sign = criterion_sign(qualities[usable[0]].criterion)
    order = sorted(usable, key=lambda k: -sign * qualities[k].value)
    rank, head = 1, order[0]
    clusters[head] = rank
    for k in order[1:]:
        if p_value(head, k) < alpha:
            rank += 1
            head = k
        clusters[k] = rank
    return clusters, ""


def _paired_test(evaluator: MetaEvaluator, qualities: Sequence[Optional[Quality]], usable: Sequence[int],
                 n_resamples: int, seed: int):
    """``p_value(a, b)``: the one-sided p-value of the paired bootstrap test that entry ``a`` of ``qualities`` is
    better than entry ``b`` under their criterion (orange: lower), and "" ; or None and the reason when the entries
    ``usable`` do not share their resampled units. See :func:`significance_clusters`."""
    from .meta.significance import paired_bootstrap_test

    first = qualities[usable[0]]
    criterion = first.criterion
    record = get_criterion(criterion)
    n_own = record.own_units  # the entry's own arrays among its units (the others are shared by every entry)
    shared = first.units[n_own:]
    for k in usable:
        units = qualities[k].units
        if len(units[0]) != len(first.units[0]) or any(not np.array_equal(a, b) for a, b in zip(units[n_own:], shared)):
            return None, "the entries were measured on different units (segments, pairs or systems)"
    sign = criterion_sign(criterion)
    base = record.bootstrap(evaluator)
    if n_own == 2:
        def stat(own, *rest):
            return sign * base(own[..., 0, :], own[..., 1, :], *rest)
    else:
        def stat(own, *rest):
            return sign * base(own, *rest)

    def own(k):
        units = qualities[k].units
        return np.stack(units[:2]) if n_own == 2 else units[0]

    reuse = all(qualities[k].samples is not None and len(qualities[k].samples) == len(qualities[usable[0]].samples)
                for k in usable)

    def p_value(a, b):
        if reuse:
            delta = sign * (qualities[a].value - qualities[b].value)
            diffs = sign * (qualities[a].samples - qualities[b].samples)
            return (np.count_nonzero(diffs - delta >= delta) + 1) / (len(diffs) + 1)
        return paired_bootstrap_test(stat, own(a), own(b), *shared, n_resamples=n_resamples, seed=seed,
                                     groups=first.groups).p_value

    return p_value, ""


#: The level at which search calls the selected set's gain over the best single metric significant.
SEARCH_ALPHA = 0.05


def compare_with_best_single(evaluator: MetaEvaluator, result: "SetSearch", n_resamples: int = 1000,
                             seed: int = 0, alpha: float = SEARCH_ALPHA) -> Dict[str, object]:
    """Is the selected set's gain over the best single metric more than resampling noise?

    The paired bootstrap test of :func:`significance_clusters` (the same resampled segments, pairs or systems for
    both; one-sided, shift method) of the selected set against the best single metric. Both were measured on the
    data the set was selected on, so the comparison is in-sample and a significant gain is still optimistic.
    Returns ``p_value`` (None when not tested), ``significant``, ``resamples``, ``seed``, ``unit``, ``alpha`` and a
    ``note`` saying why no test was run.
    """
    out: Dict[str, object] = {"test": "paired bootstrap, one-sided (the selected set better)", "p_value": None,
                              "significant": None, "resamples": n_resamples, "seed": seed, "alpha": alpha,
                              "unit": None, "note": ""}
    chosen, single = result.chosen_quality, result.single_quality
    if chosen is None or single is None or chosen is single or result.selected == [result.best_single[0]]:
        out["note"] = "the selected set is the best single metric"
    elif not result.beats_best_single:
        out["note"] = "the selected set does not beat the best single metric"
    elif not n_resamples:
        out["note"] = "not tested (no bootstrap resamples)"
    elif chosen.units is None or single.units is None or not (chosen.defined and single.defined):
        out["note"] = f"not tested: {result.criterion} keeps no units to resample here"
    else:
        p_value, reason = _paired_test(evaluator, [chosen, single], [0, 1], n_resamples, seed)
        if p_value is None:
            out["note"] = f"not tested: {reason}"
        else:
            p = float(p_value(0, 1))
            out.update(p_value=p, significant=p < alpha, unit=chosen.unit)
    return out


# -- several language pairs: WMT23's official average (combo evaluate --lp en-de,he-en) -------------------------

def wmt23_over_pairs(evaluators: Dict[str, MetaEvaluator], schemes: Sequence[str] = ("ulc",)
                     ) -> Tuple[List[str], List[Dict[str, object]]]:
    """Each metric and each scheme's combination of all of them on WMT23's task set over several language pairs.

    ``evaluators``: one per language pair, scored with the same metrics. The
    tasks are mt-metrics-eval's ``tasks.WMT23`` (:func:`combo.meta.wmt23.wmt23_tasks`):
    system pairwise accuracy pooled over the pairs, then per pair system
    Pearson, segment Pearson without grouping and acc_eq grouped by item; the
    average is ``AverageCorrs`` (:func:`combo.meta.wmt23.wmt23_average`: the
    pooled accuracy weighs as many tasks as there are pairs). Scores are
    combined per pair as ``quality`` combines them; human translations listed
    as systems are left out unless the evaluators include them.
    """
    lps = sorted(evaluators)
    first = evaluators[lps[0]]
    for lp in lps:
        if evaluators[lp].table.metrics != first.table.metrics:
            raise InputError(f"language pair {lp} was scored with other metrics than {lps[0]}")
        if not evaluators[lp].has_absolute_scores:
            raise InputError(f"language pair {lp} has no absolute segment scores (MQM, DA) for WMT23's tasks",
                             fix="give language pairs with MQM or DA scores")
    m = len(first.table.metrics)
    entries = [(name, [i], DEFAULT_SCHEME_NAME) for i, name in enumerate(first.table.metrics)]
    entries += [(scheme.upper() + "(all)", list(range(m)), scheme) for scheme in schemes]
    names, rows = [], []
    for name, subset, scheme in entries:
        seg, human, m_sys, h_sys = {}, {}, {}, {}
        for lp in lps:
            ev = evaluators[lp]
            seg[lp], human[lp] = ev._wmt23_segments(ev.combined_rows(subset, scheme)[0])
            m_sys[lp], h_sys[lp] = ev._wmt23_systems(subset, scheme)
        tasks = wmt23_tasks(seg, human, m_sys, h_sys)
        names.append(name)
        rows.append({"metric": name, "average": wmt23_average(tasks), "tasks": dict(tasks)})
    return names, rows


# -- combo evaluate's printed results -------------------------------------------------------------------------

def evaluation_output(ev: MetaEvaluator, tb: Testbed, table: ScoreTable, crits: Sequence[str], names: Sequence[str],
                      qualities: Dict[str, List[Optional[Quality]]], notes: Sequence[str], n_resamples: int,
                      seed: int, king_ties: str) -> Tuple[Dict[str, object], str]:
    """One test bed's ``combo evaluate`` result (:func:`evaluate_entries`' ``names`` and ``qualities``): the JSON
    document and the table text, with what the values leave out and KING figures decided by ties."""
    rows = evaluation_rows(names, qualities)
    notes = list(notes) + left_out_notes(names, qualities)  # what the values leave out: in the table and JSON
    for c in crits:  # a "-" in the table says why it is there
        blank = [r["metric"] for r in rows if r[c] is None]
        only = getattr(get_criterion(c), "only_scheme", None)
        if blank and only:
            notes.append(f"{c} is defined for single metrics and {only.upper()} combinations only: "
                         f"{', '.join(blank)} {'shows' if len(blank) == 1 else 'show'} '-' (--combine {only} "
                         f"measures {only.upper()}(all))")
    warnings = [f"KING of {r['metric']} is decided by ties: {r['king']['tie_share']:.0%} of its comparisons "
                f"(with --king-ties strict: {r['king']['value_strict']:.4f}; see docs/queen-king.md)" for r in rows
                if r.get("king") and (r["king"]["tie_share"] or 0) > KING_TIE_WARNING and king_ties != "strict"]
    meaning = {c: get_criterion(c).meaning for c in crits}
    doc = {"testbed": tb.name, "segments": len(tb.segments), "aspect": ev.aspect, "criteria": crits,
           "meanings": meaning, "rows": rows, "notes": notes,
           "warnings": warnings, "signatures": dict(zip(table.metrics, table.signatures)),
           "bootstrap": {"resamples": n_resamples, "seed": seed, "confidence": 0.95,
                         "unit": "whole segments (system-level criteria: systems)"}}
    width = max(len("metric"), *(len(r["metric"]) for r in rows)) + 2
    cols = [max(len(c), 26, *(len(r[c]["text"]) for r in rows if r[c] is not None)) for c in crits]
    lines = [f"{'metric':<{width}}" + "".join(f"{c:<{w + 2}}" for c, w in zip(crits, cols))]
    for r in rows:
        cells = [("-" if r[c] is None else r[c]["text"]) for c in crits]
        lines.append(f"{r['metric']:<{width}}" + "".join(f"{x:<{w + 2}}" for x, w in zip(cells, cols)))
    lines += [f"# {c}: {meaning[c]}" for c in crits]
    lines += [f"warning: {w}" for w in warnings]
    lines.append(f"# {tb.name}: {len(tb.segments)} segments, aspect {ev.aspect}" + _interval_footer(crits, n_resamples,
                                                                                                    seed))
    lines += [f"note: {n}" for n in notes]
    return doc, "\n".join(lines) + "\n"


def _interval_footer(crits: Sequence[str], n_resamples: int, seed: int) -> str:
    """What the brackets of ``combo evaluate``'s table are, naming the criteria that have none."""
    if not n_resamples:
        return ""
    with_interval = [c for c in crits if get_criterion(c).bootstrap is not None]
    without = [c for c in crits if c not in with_interval]
    named = f" ({', '.join(with_interval)})" if without else ""
    text = (f"; 95% bootstrap intervals{named} over {n_resamples} "
            f"resamples of whole segments (system-level criteria: of systems), seed {seed}" if with_interval else "")
    if without:
        text += (f"; {', '.join(without)}: no interval (no bootstrap is defined for "
                 f"{'it' if len(without) == 1 else 'them'}; WMT23 ranks such statistics by its permutation test, "
                 "combo.meta.wmt23.significance_clusters)")
    return text


def wmt23_official_average(evaluators: Dict[str, MetaEvaluator], schemes: Sequence[str]) -> Dict[str, object]:
    """WMT23's official average over the language pairs of ``evaluators`` (:func:`wmt23_over_pairs`), best first:
    ``{"pairs", "rows", "text"}``, ``text`` the table ``combo evaluate`` prints."""
    names, rows = wmt23_over_pairs(evaluators, schemes)
    rows = sorted(rows, key=lambda r: -r["average"])
    tasks = list(rows[0]["tasks"])
    width = max(len("metric"), *(len(r["metric"]) for r in rows)) + 2
    lines = [f"WMT23's official average over {', '.join(sorted(evaluators))} (mt-metrics-eval tasks.WMT23: system "
             f"accuracy pooled over the pairs weighs {len(evaluators)}/{4 * len(evaluators)}, each other task "
             f"1/{4 * len(evaluators)}):",
             f"{'metric':<{width}}{'average':>9}" + "".join(f"{t:>{max(len(t), 6) + 2}}" for t in tasks)]
    for r in rows:
        lines.append(f"{r['metric']:<{width}}{r['average']:>9.4f}"
                     + "".join(f"{r['tasks'][t]:>{max(len(t), 6) + 2}.4f}" for t in tasks))
    lines.append("# the task columns are the statistics as measured (Pearson -1 to 1, accuracies 0 to 1); the average "
                 "maps each Pearson r to (r + 1) / 2 before weighting")
    return {"pairs": sorted(evaluators), "rows": rows, "text": "\n".join(lines) + "\n"}
