"""The meta-evaluator of one scored test bed: the inputs every criterion reads (the human matrix, preference
pairs, system scores, combined rows and systems, the segments KING and ORANGE read) and the running of a
criterion's record (:meth:`MetaEvaluator.quality`, :meth:`MetaEvaluator.with_interval`). What each criterion
computes is in :mod:`combo.evaluate.criteria`, next to its record.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError, OptionError
from ..meta.pairwise import PreferencePairs, pairs_from_scores
from ..meta.queen import min_references
from ..meta.significance import bootstrap
from ..parallel import resolve_execution
from ..scoring import ReferenceScores, ScoreTable
from ..testbed import Testbed
from ..progress import plural
from . import criteria
from .records import COMMAND_OPTIONS, Quality, _CRITERIA, _judgments_read, check_scheme, get_criterion, get_scheme


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
        from ..meta.likeness import check_held_out

        check_held_out(held_out)
        self.testbed = testbed
        self.table = table
        self.refs = refs
        self.triples = triples
        self.held_out = held_out  # KING from this many held-out references per segment (None: exact)
        self.seed = seed  # the held-out draws: the same for every metric set (paired comparisons)
        #: jobs (KING's chunks, search's sets, evaluate's entries in parallel), memory budget and progress, resolved
        #: once (an Execution handed in as ``jobs`` is kept as it is: the run's, from its edge)
        self.execution = resolve_execution(jobs, memory, progress)
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
    def jobs(self):
        """The run's :class:`~combo.parallel.Jobs` (from :attr:`execution`)."""
        return self.execution.jobs

    @property
    def budget(self):
        """The run's memory :class:`~combo.budget.Budget` (from :attr:`execution`)."""
        return self.execution.budget

    @property
    def progress(self) -> bool:
        return self.execution.progress

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
                              f"{criterion} needs them",
                              fix=f"use {self.ask('wmt_kendall')} or {self.ask('acc_eq')}, which read rankings")
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
    def matrix(self, row_values: np.ndarray) -> np.ndarray:
        """One value per row of the score table as a (systems, segments) matrix; NaN where there is no row."""
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
            return np.nanmean(self.matrix(rows), axis=1)

    def wmt23_segments(self, rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The (systems, segments) metric and human matrices WMT23's segment tasks read: the systems scored
        (human translations left out unless included), a cell without a metric score not judged either."""
        metric = self.matrix(rows)[self.system_mask]
        return metric, np.where(np.isnan(metric), np.nan, self.human[self.system_mask])

    def wmt23_systems(self, subset: Sequence[int], scheme: str) -> Tuple[np.ndarray, np.ndarray]:
        """The metric's and the humans' system scores WMT23's system tasks read (the systems scored)."""
        keep = self.system_mask
        return self.combined_systems(subset, scheme)[keep], self.human_system_scores()[keep]

    def human_left_out(self) -> Tuple[str, ...]:
        """Human translations listed as systems, left out of system-level statistics (unless include_human)."""
        left = int((~self.system_mask).sum())
        return (f"{left} human {plural('translation', left)} left out",) if left else ()

    # -- reference scores: QUEEN's segments, and human likeness's ----------------------------------------------
    def _need_refs(self, what: str) -> ReferenceScores:
        if self.refs is None:
            raise OptionError(f"{what} needs single-reference scores: pass refs=reference_scores(...)")
        return self.refs

    def reference_segments(self, subset: Sequence[int]) -> "_SubsetSegments":
        """The segments QUEEN reads for the metric set ``subset``: every candidate against the references."""
        return _SubsetSegments(self._need_refs("QUEEN"), subset, None)

    def _automatic_rows(self):
        """Per segment, which of its candidate rows are automatic (KING and ORANGE leave human systems out)."""
        if self._likeness_segments is None:
            refs = self._need_refs("KING")
            human = {self.table.systems.index(h) for h in self.human_systems}
            self._likeness_segments = [np.array([self.table.row_system[k] not in human for k in refs.rows(i)],
                                                dtype=bool) for i in range(self.n_seg)]
        return self._likeness_segments

    def likeness_segments(self, subset: Sequence[int]) -> "_SubsetSegments":
        """The segments KING and ORANGE read for the metric set ``subset``: its reference scores, with the
        automatic candidates only."""
        return _SubsetSegments(self._need_refs("KING"), subset, self._automatic_rows())

    # -- any criterion ---------------------------------------------------------------------------
    def quality(self, subset: Sequence[int], criterion: str, scheme: Optional[str] = None) -> Quality:
        """The criterion's value for the metric set ``subset`` combined with ``scheme`` (its record's compute)."""
        record = get_criterion(criterion)
        scheme = scheme or record.default_scheme
        check_scheme(record.name, scheme, self.command)
        self._check_judgments(record.name)
        return record.compute(self, subset, record.name, scheme)

    def likeness(self, subset: Sequence[int], criterion: str = "king") -> Quality:
        """KING (higher better) or ORANGE (lower better) of the QUEEN combination of ``subset`` (the record's
        compute, :func:`combo.evaluate.criteria.king_quality` or ``orange_quality``)."""
        record = get_criterion(criterion)
        return record.compute(self, list(subset), record.name, "queen")

    def segment_correlation(self, subset: Sequence[int], criterion: str, scheme: str,
                            method: str = "pearson") -> Quality:
        """A correlation (``method``) of all segment scores with the human segment scores, pooled
        (:func:`combo.evaluate.criteria.segment_correlation`; r_snt: Pearson)."""
        return criteria.segment_correlation(self, subset, criterion, scheme, method)

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
