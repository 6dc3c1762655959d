"""The built-in criteria and combination schemes: each one's computation, then its record registered.

Every computation is a function of the evaluator (:class:`~combo.evaluate.evaluator.MetaEvaluator`, ``ev``):
a criterion's ``compute(ev, subset, criterion, scheme)`` returns the :class:`Quality` of the metric set
``subset`` combined with ``scheme`` (``criterion``: the name it is registered under, which labels the result);
a scheme's ``rows(ev, subset)`` the combined score of each row. Criteria (Giménez & Màrquez 2008, §4): human
likeness (``king``, ``orange``, with QUEEN) and human acceptability (``r_snt`` segment Pearson, WMT
``wmt_kendall``, system-level ``pearson``/``spearman``, ``acc_eq``); the WMT23 metrics task's statistics as
mt-metrics-eval computes them (:mod:`combo.meta.wmt23`); and on a MUTT test bed, ``mutt``: the mean unit-test
accuracy over corruption types (Boag et al. 2016). To add one: write its compute (or rows), then register its
record at the end of this module (or anywhere, with :func:`~combo.evaluate.records.register_criterion`).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence, Tuple

import numpy as np

from ..errors import InputError
from ..meta.correlation import correlate, correlation_values
from ..meta.likeness import orange
from ..meta.pairwise import (PreferencePairs, pair_scores, pairwise_accuracy_with_ties,
                             pairwise_accuracy_with_ties_values, wmt_kendall, wmt_kendall_values)
from ..meta.queen import min_references
from ..meta.wmt23 import (seg_acc_eq, seg_acc_eq_per_item, seg_correlation, sys_pairwise_accuracy, wmt23_average,
                          wmt23_tasks)
from ..meta_run import king
from ..progress import plural
from .records import Criterion, Needs, Quality, _joined, register_criterion

# -- what several computations say they leave out --------------------------------------------------------------


def unscored(judged: np.ndarray, metric: np.ndarray) -> Tuple[str, ...]:
    """The judged candidates left out for want of a metric score (none read for them: mtme:, scores:)."""
    n = int((judged & np.isnan(metric)).sum())
    return (f"{n} judged {plural('candidate', n)} without a metric score left out",) if n else ()


def queen_skipped(ev, skipped: int) -> Tuple[str, ...]:
    """The segments a QUEEN combination skipped (too few references, or no candidate)."""
    if not skipped:
        return ()
    return (f"{skipped} segments skipped by QUEEN (need >= {min_references(ev.triples)} references "
            "and a candidate)",)


# -- human likeness: KING and ORANGE of a QUEEN combination ------------------------------------------------------

def likeness_run(ev, subset: Sequence[int]):
    """KING's run over the segments of ``subset`` (:func:`combo.meta_run.king`), which ORANGE reads too, and the
    segments it skipped as a left-out phrase.

    Segments are made from the reference scores one chunk at a time (memory bounded by ``memory``); with
    ``held_out`` KING is an unbiased estimate from that many held-out references per large segment.
    """
    subset = list(subset)
    segs = ev.likeness_segments(subset)
    sample = ev.testbed.metadata.get("segment_sample") or {}
    res = king(segs, ev.triples, higher_is_better=ev.hib[subset], ties=ev.king_ties,
               held_out=ev.held_out, seed=ev.seed, jobs=ev.execution,
               segment_population=sample.get("population"), largest_set=len(ev.hib))
    left_out = ((f"{res.n_skipped} segments skipped (need >= {min_references(ev.triples) + 1} references "
                 "and a candidate)",) if res.n_skipped else ())
    return res, left_out


def king_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """KING (higher is better) of the QUEEN combination of ``subset``; estimated from samples, with its standard
    error and 95% interval in the note."""
    res, left_out = likeness_run(ev, subset)
    ties = f"{res.ties} references tied with the best candidate"
    if not res.exact:
        low, high = res.interval()
        parts = []
        if res.segment_sample:
            sample = ev.testbed.metadata.get("segment_sample") or {}
            parts.append(f"a sample of {res.n_used} of {res.segment_population} segments "
                         f"(seed {sample.get('seed')})")
        if res.estimated:
            parts.append(f"{res.held_out} held-out references in {len(res.estimated)} segments")
        ties = (f"estimate from {' and '.join(parts)} (standard error {res.stderr:.4f}, 95% sampling "
                f"interval [{low:.4f}, {high:.4f}]); " + ties)
    return Quality(res.value, criterion, "queen", res.n_used, res.n_skipped, _joined(ties, *left_out),
                   left_out=left_out,
                   units=(res.per_segment[np.isfinite(res.per_segment)],), tie_share=res.tie_share,
                   value_strict=res.value_with_ties("strict"),
                   sampling=None if res.exact else dict(zip(("stderr", "low", "high"),
                                                            (res.stderr, *res.interval()))))


def orange_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """ORANGE (lower is better) of the QUEEN combination of ``subset``, from KING's segments."""
    res, left_out = likeness_run(ev, subset)
    used = [s for s in res.segments if s is not None]
    o = orange([s.ref_queen for s in used], [s.cand_queen for s in used])
    return Quality(o.value, criterion, "queen", o.n_used, res.n_skipped, _joined("lower is better", *left_out),
                   units=(o.per_segment[np.isfinite(o.per_segment)],), left_out=left_out)


# -- human acceptability: correlations and pairwise agreement with the human judgments ---------------------------

def system_correlation(ev, subset: Sequence[int], criterion: str, scheme: str, method: str) -> Quality:
    """A correlation (``method``: pearson, spearman) of system scores with human system scores."""
    keep = ev.system_mask
    human = ev.human_system_scores()[keep]
    combined = ev.combined_systems(subset, scheme)[keep]
    res = correlate(combined, human, method=method)
    ok = np.isfinite(combined) & np.isfinite(human)
    left_out = ev.human_left_out()
    n = int((np.isfinite(human) & ~np.isfinite(combined)).sum())
    if n:
        left_out += (f"{n} judged {plural('system', n)} without a metric score left out",)
    return Quality(res.value, criterion, scheme, int(ok.sum()), 0, _joined(res.reason, *left_out),
                   units=(combined[ok], human[ok]), unit="systems", left_out=left_out)


def system_pearson(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Pearson correlation of system scores with human system scores."""
    return system_correlation(ev, subset, criterion, scheme, "pearson")


def system_spearman(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Spearman rank correlation of system scores with human system scores."""
    return system_correlation(ev, subset, criterion, scheme, "spearman")


def segment_correlation(ev, subset: Sequence[int], criterion: str, scheme: str, method: str = "pearson") -> Quality:
    """A correlation (``method``: pearson, spearman, kendall_b) of all segment scores with the human segment
    scores, pooled (r_snt: Pearson); its units are the (metric, human) pairs, resampled by segment."""
    rows, skipped = ev.combined_rows(subset, scheme)
    metric = ev.matrix(rows)
    judged = np.isfinite(ev.human)
    left_out = unscored(judged, metric) + queen_skipped(ev, skipped)
    human = np.where(np.isnan(metric), np.nan, ev.human)
    res = correlate(metric, human, method=method)
    ok = np.isfinite(metric) & np.isfinite(human)
    return Quality(res.value, criterion, scheme, int(ok.sum()), skipped, _joined(res.reason, *left_out),
                   units=(metric[ok], human[ok]), groups=np.nonzero(ok)[1], left_out=left_out)


class PairScores(NamedTuple):
    """The combined scores of the better and the worse candidate of each human preference pair that has both."""

    better: np.ndarray
    worse: np.ndarray
    pairs: PreferencePairs
    skipped: int  # segments QUEEN skipped
    left_out: Tuple[str, ...]


def pair_scores_of(ev, subset: Sequence[int], scheme: str) -> PairScores:
    """The human preference pairs (:meth:`MetaEvaluator.preference_pairs`) whose candidates both have a combined
    score, with those scores (what wmt_kendall and acc_eq read)."""
    rows, skipped = ev.combined_rows(subset, scheme)
    metric = ev.matrix(rows)
    pairs = ev.preference_pairs()
    usable = np.isfinite(metric[pairs.better, pairs.segment]) & np.isfinite(metric[pairs.worse, pairs.segment])
    pairs = PreferencePairs(pairs.segment[usable], pairs.better[usable], pairs.worse[usable], pairs.tie[usable])
    dropped = int((~usable).sum())
    left_out = ((f"{dropped} preference {plural('pair', dropped)} with a candidate without a metric score left out",)
                if not usable.all() else ()) + queen_skipped(ev, skipped)
    better, worse = pair_scores(metric, pairs)
    return PairScores(better, worse, pairs, skipped, left_out)


def wmt_kendall_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """WMT's Kendall-like tau over the human preference pairs (:func:`combo.meta.pairwise.wmt_kendall`; the
    variant and tie rule are the evaluator's)."""
    p = pair_scores_of(ev, subset, scheme)
    res = wmt_kendall(p.better, p.worse, p.pairs.tie, variant=ev.kendall_variant, ties=ev.kendall_ties)
    return Quality(res.value, criterion, scheme, len(p.pairs), p.skipped,
                   _joined(str(res) if not res.defined else "", *p.left_out),
                   units=(p.better, p.worse, p.pairs.tie), groups=p.pairs.segment, left_out=p.left_out)


def acc_eq_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Pairwise accuracy with ties over the human preference pairs (acc_eq, Deutsch et al. 2023), with its
    tie threshold chosen over the pairs."""
    p = pair_scores_of(ev, subset, scheme)
    res = pairwise_accuracy_with_ties(p.better, p.worse, p.pairs.tie)
    return Quality(res.value, criterion, scheme, len(p.pairs), p.skipped,
                   _joined(f"epsilon {res.epsilon:.4g}", *p.left_out),
                   units=(p.better, p.worse, p.pairs.tie), groups=p.pairs.segment, epsilon=res.epsilon,
                   left_out=p.left_out)


# -- the WMT23 metrics task's statistics, as mt-metrics-eval computes them -------------------------------------------

class Wmt23Inputs(NamedTuple):
    """What every WMT23 statistic reads: the segment matrices (:meth:`MetaEvaluator.wmt23_segments`) and what they
    leave out."""

    metric: np.ndarray
    human: np.ndarray
    skipped: int  # segments QUEEN skipped
    n_cells: int  # judged cells with a metric score
    left_out: Tuple[str, ...]
    note: str


def wmt23_inputs(ev, subset: Sequence[int], criterion: str, scheme: str) -> Wmt23Inputs:
    """The combination's WMT23 segment matrices; refused without absolute segment scores (MQM, DA)."""
    if not ev.has_absolute_scores:
        raise ev.missing_judgments(criterion)
    rows, skipped = ev.combined_rows(subset, scheme)
    metric, human = ev.wmt23_segments(rows)
    left_out = (unscored(np.isfinite(ev.human[ev.system_mask]), metric) + queen_skipped(ev, skipped)
                + ev.human_left_out())
    return Wmt23Inputs(metric, human, skipped, int(np.isfinite(human).sum()), left_out, _joined(*left_out))


def sys_accuracy_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """System-level pairwise accuracy (:func:`combo.meta.wmt23.sys_pairwise_accuracy`)."""
    w = wmt23_inputs(ev, subset, criterion, scheme)
    m_sys, h_sys = ev.wmt23_systems(subset, scheme)
    return Quality(sys_pairwise_accuracy(m_sys, h_sys), criterion, scheme, int(ev.system_mask.sum()), 0,
                   w.note, unit="systems", left_out=w.left_out)


def wmt23_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """WMT23's average over its segment and system tasks (:func:`combo.meta.wmt23.wmt23_average`), each task's
    value in the note."""
    w = wmt23_inputs(ev, subset, criterion, scheme)
    m_sys, h_sys = ev.wmt23_systems(subset, scheme)
    tasks = wmt23_tasks(w.metric, w.human, m_sys, h_sys)
    detail = ", ".join(f"{name} {value:.4f}" for name, value in tasks)
    return Quality(wmt23_average(tasks), criterion, scheme, w.n_cells, w.skipped, _joined(detail, w.note),
                   left_out=w.left_out)


def seg_kendall_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Kendall tau-b of all segment scores, no grouping (:func:`combo.meta.wmt23.seg_correlation`)."""
    w = wmt23_inputs(ev, subset, criterion, scheme)
    ok = np.isfinite(w.metric) & np.isfinite(w.human)
    return Quality(seg_correlation(w.metric, w.human, "kendall", "none"), criterion, scheme, w.n_cells, w.skipped,
                   w.note, units=(w.metric[ok], w.human[ok]), groups=np.nonzero(ok)[1], left_out=w.left_out)


def acc_eq_item_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """acc_eq grouped by item with WMT23's tie calibration (:func:`combo.meta.wmt23.seg_acc_eq`); its units are
    the per-segment accuracies at the epsilon chosen on all the data."""
    w = wmt23_inputs(ev, subset, criterion, scheme)
    res = seg_acc_eq(w.metric, w.human, "item")
    per = seg_acc_eq_per_item(w.metric, w.human, res.epsilon)
    return Quality(res.value, criterion, scheme, w.n_cells, w.skipped, _joined(f"epsilon {res.epsilon:.4g}", w.note),
                   units=(per[np.isfinite(per)],), epsilon=res.epsilon, left_out=w.left_out)


def item_correlation_quality(ev, subset: Sequence[int], criterion: str, scheme: str, wmt23_method: str,
                             method: str) -> Quality:
    """A correlation over the systems of each segment, averaged over segments (:func:`combo.meta.wmt23.
    seg_correlation` with ``wmt23_method``, grouped by item); its units are the per-segment values (``method``)."""
    w = wmt23_inputs(ev, subset, criterion, scheme)
    per = correlation_values(w.metric, w.human, method, "item", per_group=True)
    value = seg_correlation(w.metric, w.human, wmt23_method, "item")
    return Quality(value, criterion, scheme, w.n_cells, w.skipped, w.note, units=(per[np.isfinite(per)],),
                   left_out=w.left_out)


def seg_pearson_item_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Pearson correlation over the systems of each segment, averaged over segments."""
    return item_correlation_quality(ev, subset, criterion, scheme, "pearson", "pearson")


def seg_kendall_item_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Kendall tau-b over the systems of each segment, averaged over segments."""
    return item_correlation_quality(ev, subset, criterion, scheme, "kendall", "kendall_b")


# -- unit tests ------------------------------------------------------------------------------------------------

def mutt_quality(ev, subset: Sequence[int], criterion: str, scheme: str) -> Quality:
    """Mean MUTT accuracy over corruption types of the combined scores (higher is better after combining)."""
    from ..meta.mutt import mean_unit_test_accuracy, segment_pairs, unit_test_accuracy

    rows, _ = ev.combined_rows(subset, scheme)
    kinds = ev.testbed.metadata.get("kinds")
    if ev.testbed.metadata.get("format") != "mutt" or not kinds:
        raise InputError(f"test bed {ev.testbed.name!r} is not a MUTT test bed: mutt needs original/corrupted "
                         "pairs", fix="give a folder of MUTT corruption files")
    original, corrupted, groups = segment_pairs(ev.table, rows, [s.group for s in ev.testbed.segments])
    counts = unit_test_accuracy(original, corrupted, groups, kinds, higher_is_better=True)
    note = ", ".join(f"{c} {p}/{n}" for c, (n, p) in counts.items())
    return Quality(mean_unit_test_accuracy(counts), criterion, scheme, len(groups), 0, note)


# -- the statistics the bootstrap recomputes on resampled units (a Criterion's ``bootstrap``) ------------------------

def _correlation_statistic(method: str):
    def stat(x, y):
        return correlation_values(x[..., None, :], y[..., None, :], method=method)
    return stat


def correlation_bootstrap(method: str):
    """A criterion's ``bootstrap`` for a correlation (``method``) of its two units, the metric's and the human's."""
    return lambda ev: _correlation_statistic(method)


def _mean_bootstrap(ev):
    return lambda v: v.mean(axis=-1)


def _item_mean_bootstrap(ev):
    """Item-grouped statistics: the mean of per-segment values (acc_eq at its full-data epsilon, as mt-metrics-eval's
    permutation test fixes it), so resampling segments resamples those values."""
    return lambda v: np.nanmean(v, axis=-1)


def _wmt_kendall_bootstrap(ev):
    return lambda b, w, t: wmt_kendall_values(b, w, t, variant=ev.kendall_variant, ties=ev.kendall_ties)


def _acc_eq_bootstrap(ev):
    return lambda b, w, t: pairwise_accuracy_with_ties_values(b, w, t)


# -- the built-in criteria (to add one: write its compute, then register its record here) ----------------------

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
              "segment", king_quality, Needs("none", references=True), family="likeness",
              bootstrap=_mean_bootstrap, only_scheme="queen"),
    Criterion("orange", "ORANGE (lower is better)",
              "mean rank of each reference among the system outputs, divided by the list length (human likeness); "
              "lower is better, about 0.5 is chance",
              "segment", orange_quality, Needs("none", references=True), higher_is_better=False,
              family="likeness", bootstrap=_mean_bootstrap, only_scheme="queen"),
    Criterion("r_snt", "segment Pearson (R_snt)",
              "Pearson correlation of segment scores with human segment scores; -1 to 1, higher is better, 0 is "
              "chance",
              "segment", segment_correlation, Needs("segment"), aliases=("seg_pearson",),
              bootstrap=correlation_bootstrap("pearson")),
    Criterion("wmt_kendall", "WMT Kendall-like tau",
              "WMT's Kendall-like tau over human pairwise preferences, (concordant - discordant) / pairs; "
              "-1 to 1, higher is better, 0 is chance",
              "segment", wmt_kendall_quality, _PAIRS, aliases=("kendall",), bootstrap=_wmt_kendall_bootstrap,
              own_units=2, cost=0.6),
    Criterion("pearson", "system Pearson",
              "Pearson correlation of system scores with human system scores; -1 to 1, higher is better "
              "(few systems: wide intervals)",
              "system", system_pearson, _SYSTEM_CORRELATION,
              bootstrap=correlation_bootstrap("pearson"), cost=_SYSTEM_COST),
    Criterion("spearman", "system Spearman",
              "Spearman rank correlation of system scores with human system scores; -1 to 1, higher is better",
              "system", system_spearman, _SYSTEM_CORRELATION,
              bootstrap=correlation_bootstrap("spearman"), cost=_SYSTEM_COST),
    Criterion("acc_eq", "pairwise accuracy with ties (acc_eq)",
              "share of candidate pairs of one segment ordered as the humans order them, ties included; 0-1, "
              "higher is better",
              "segment", acc_eq_quality, _PAIRS, bootstrap=_acc_eq_bootstrap, own_units=2),
    Criterion("seg_kendall", "segment Kendall tau-b (no grouping)",
              "Kendall tau-b of all segment scores against the human scores, pooled; -1 to 1, higher is better",
              "segment", seg_kendall_quality, _WMT23, family="wmt23",
              bootstrap=correlation_bootstrap("kendall_b")),
    Criterion("seg_pearson_item", "segment Pearson, grouped by item",
              "Pearson correlation over the systems of each segment, averaged over segments; -1 to 1, "
              "higher is better",
              "segment", seg_pearson_item_quality, _WMT23, family="wmt23",
              bootstrap=_item_mean_bootstrap),
    Criterion("seg_kendall_item", "segment Kendall tau-b, grouped by item",
              "Kendall tau-b over the systems of each segment, averaged over segments; -1 to 1, "
              "higher is better",
              "segment", seg_kendall_item_quality, _WMT23, family="wmt23",
              bootstrap=_item_mean_bootstrap),
    Criterion("acc_eq_item", "acc_eq grouped by item (WMT23)",
              "acc_eq within each segment with WMT23's tie calibration, averaged; 0-1, higher is better",
              "segment", acc_eq_item_quality, _WMT23, aliases=("seg_acc_eq",), family="wmt23",
              bootstrap=_item_mean_bootstrap),
    Criterion("sys_accuracy", "system pairwise accuracy",
              "share of system pairs ordered as the humans order them; 0-1, higher is better, 0.5 is chance",
              "system", sys_accuracy_quality, _WMT23, family="wmt23", cost=_SYSTEM_COST),
    Criterion("wmt23", "WMT23 average over tasks",
              "mean of the WMT23 metrics task's segment and system statistics; higher is better",
              "both", wmt23_quality, _WMT23, family="wmt23"),
    Criterion("mutt", "MUTT mean unit-test accuracy",
              "mean share of unit tests passed per corruption type (original scored above its corruption); 0-1, "
              "higher is better",
              "segment", mutt_quality,
              Needs("none", testbed_format="mutt",
                    wrong_format="needs a MUTT test bed (a folder of corruption trials)"),
              family="unit-tests",
              refused_schemes={"queen": "compares the combined scores of a sentence and its corruption"}),
):
    register_criterion(_record)
del _record
