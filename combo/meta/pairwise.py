"""WMT's Kendall-like tau over human pairwise preferences, and pairwise accuracy with tie calibration.

A pair list is four parallel arrays: the segment, the system judged better,
the system judged worse and a human-tie flag (for a tie the order of the two
is meaningless). :func:`pair_scores` turns it into the metric scores of the
better and the worse candidate, the input of every statistic here.

WMT Kendall-like tau, ``sum(coefficient) / #(pairs not excluded)`` with the
coefficient of each (human relation, metric relation) cell below (metric
ties are pairs with equal metric scores). The matrices are the variant table
(``wmt12``, ``wmt13``, ``wmt14``) of the WMT15 metrics-task segment-level
scoring script, which encodes the three years' formulations:

=========  ====================  ===============  ===============
variant    metric agrees / not   metric tie       human tie
=========  ====================  ===============  ===============
``wmt12``  +1 / -1               -1 (discordant)  excluded
``wmt13``  +1 / -1               excluded         excluded
``wmt14``  +1 / -1               0 (counted)      excluded
``darr``   +1 / -1               -1 (discordant)  excluded
=========  ====================  ===============  ===============

so ``wmt12`` and ``darr`` give ``(C - D - T) / (C + D + T)``, ``wmt13``
``(C - D) / (C + D)`` and ``wmt14`` ``(C - D) / (C + D + T)``
(Callison-Burch et al. 2012; Macháček & Bojar 2013, 2014). ``darr`` is the
DA relative-ranking form of Bojar et al. (2017) and Ma et al. (2018, 2019):
pairs of DA scores more than 25 points apart (:func:`pairs_from_scores` with
``min_diff=25``), metric ties discordant.
``ties="discordant" | "excluded" | "counted"`` overrides the metric-tie
column of any variant (the project reports both the first two).

Pairwise accuracy with ties, ``acc_eq = (C + T_hm) / (C + D + T_h + T_m + T_hm)``
(Deutsch, Foster & Freitag 2023, "Ties Matter"), where a metric tie is
``|m_better - m_worse| <= epsilon``; tie calibration picks the
epsilon that maximises acc_eq among 0 and every observed absolute metric
difference, by one sort and a cumulative sum (O(P log P)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from ..errors import InputError, OptionError
from .correlation import ValueResult

# metric-tie coefficient: -1 discordant, None excluded, 0 counted in the denominator only
VARIANTS = {"wmt12": "discordant", "wmt13": "excluded", "wmt14": "counted", "darr": "discordant"}
TIE_RULES = ("discordant", "excluded", "counted")
_TOLERANCE = 1e-12   # accuracies this close (float sums of group weights) count as equal in calibration


@dataclass(frozen=True)
class PreferencePairs:
    """Parallel arrays of human preferences: ``better`` beat ``worse`` on ``segment`` (or tied)."""

    segment: np.ndarray
    better: np.ndarray
    worse: np.ndarray
    tie: np.ndarray

    def __len__(self) -> int:
        """The number of pairs."""
        return len(self.segment)

    def without_ties(self) -> "PreferencePairs":
        """The pairs that are not human ties."""
        keep = ~self.tie
        return PreferencePairs(self.segment[keep], self.better[keep], self.worse[keep], self.tie[keep])


@dataclass(frozen=True)
class KendallLikeResult(ValueResult):
    """WMT Kendall-like tau and its pair counts."""

    value: float
    concordant: int
    discordant: int
    metric_ties: int       # human non-tie pairs the metric scored equal
    human_ties: int        # pairs excluded as human ties
    variant: str
    ties: str              # the metric-tie rule applied

    @property
    def n_used(self) -> int:
        """Pairs in the denominator: concordant, discordant and, unless excluded, metric ties."""
        return self.concordant + self.discordant + (0 if self.ties == "excluded" else self.metric_ties)

    def __str__(self) -> str:
        """The value to 3 decimals, or why it is undefined."""
        return f"{self.value:.3f}" if self.defined else "undefined (no usable pairs)"


@dataclass(frozen=True)
class TieAccuracyResult(ValueResult):
    """Pairwise accuracy with ties (acc_eq) and the epsilon it used."""

    value: float
    epsilon: float
    n_pairs: int
    n_groups: int
    calibrated: bool

    def __str__(self) -> str:
        """The value to 3 decimals with its epsilon (and whether it was calibrated), or why it is undefined."""
        if not self.defined:
            return "undefined (no pairs)"
        return f"{self.value:.3f} (epsilon {self.epsilon:.4g}{', calibrated' if self.calibrated else ''})"


# -- building pairs -------------------------------------------------------------

def pairs_from_rankings(segment, systems, ranks, blank: int = -1) -> PreferencePairs:
    """All pairs of ranked candidates in each relative-ranking row (WMT relative ranking, Callison-Burch et al. 2012).

    ``segment``: ``(rows,)``; ``systems``, ``ranks``: ``(rows, k)`` integer
    system ids and ranks (1 best; ``blank`` = not ranked, skipped). Lower rank
    is better; equal ranks give a tie. Row-major order, columns ``a < b``.
    """
    segment = np.asarray(segment)
    systems = np.asarray(systems)
    ranks = np.asarray(ranks)
    if systems.ndim != 2 or systems.shape != ranks.shape or len(segment) != len(systems):
        raise InputError(f"segment {segment.shape}, systems {systems.shape} and ranks {ranks.shape} "
                         "must be (rows,), (rows, k), (rows, k)")
    a, b = np.triu_indices(systems.shape[1], 1)
    sa, sb, ra, rb = systems[:, a], systems[:, b], ranks[:, a], ranks[:, b]
    keep = (ra != blank) & (rb != blank) & (sa != sb)
    seg = np.broadcast_to(segment[:, None], sa.shape)[keep]
    sa, sb, ra, rb = sa[keep], sb[keep], ra[keep], rb[keep]
    first_better = ra <= rb
    return PreferencePairs(seg, np.where(first_better, sa, sb), np.where(first_better, sb, sa), ra == rb)


def pairs_from_scores(human, min_diff: Optional[float] = None, inclusive: bool = False) -> PreferencePairs:
    """Pairs of judged candidates of each item from absolute scores ``(systems, items)`` (NaN = unjudged).

    ``min_diff=None``: every pair, equal scores a tie (Deutsch et al. 2023).
    ``min_diff=25``: daRR (Bojar et al. 2017; Ma et al. 2018): only pairs whose
    scores differ by more than 25 (``inclusive=True``: by 25 or more, as
    mt-metrics-eval's ``KendallLike``); no ties remain.
    """
    human = np.asarray(human, dtype=np.float64)
    if human.ndim != 2:
        raise InputError(f"human scores must be (systems, items), not shape {human.shape}")
    a, b = np.triu_indices(human.shape[0], 1)
    ha, hb = human[a], human[b]                                       # (pairs of systems, items)
    keep = ~np.isnan(ha) & ~np.isnan(hb)
    diff = np.where(keep, ha - hb, 0.0)
    if min_diff is not None:
        keep &= (np.abs(diff) >= min_diff) if inclusive else (np.abs(diff) > min_diff)
    item, pa = np.nonzero(keep.T)                                     # item-major order
    sa, sb, d = a[pa], b[pa], diff[pa, item]
    first_better = d >= 0
    return PreferencePairs(item, np.where(first_better, sa, sb), np.where(first_better, sb, sa), d == 0)


def pair_scores(metric, pairs: PreferencePairs) -> Tuple[np.ndarray, np.ndarray]:
    """Metric scores ``(better, worse)`` of each pair, from a ``(systems, segments)`` score matrix."""
    metric = np.asarray(metric, dtype=np.float64)
    if metric.ndim != 2:
        raise InputError(f"metric scores must be (systems, segments), not shape {metric.shape}")
    try:
        better = metric[pairs.better, pairs.segment]
        worse = metric[pairs.worse, pairs.segment]
    except IndexError:
        raise InputError(f"a pair names a system or segment outside the metric matrix {metric.shape}") from None
    missing = ~np.isfinite(better) | ~np.isfinite(worse)
    if missing.any():
        raise InputError(f"{int(missing.sum())} preference pairs involve a candidate without a metric score",
                         fix="score every judged candidate")
    return better, worse


# -- WMT Kendall-like tau -------------------------------------------------------

def wmt_kendall(metric_better, metric_worse, human_tie=None, variant: str = "wmt12",
                ties: Optional[str] = None) -> KendallLikeResult:
    """WMT Kendall-like tau of metric scores over human preference pairs (see the module table)."""
    rule = _tie_rule(variant, ties)
    mb, mw, tie = _check_pairs(metric_better, metric_worse, human_tie)
    c, d, t = _counts(mb, mw, tie)
    value = float(_tau(c, d, t, rule))
    return KendallLikeResult(value, int(c), int(d), int(t), int(tie.sum()), variant, rule)


def wmt_kendall_values(metric_better, metric_worse, human_tie=None, variant: str = "wmt12",
                       ties: Optional[str] = None) -> np.ndarray:
    """Vectorised :func:`wmt_kendall`: arrays ``(..., pairs)``, returns shape ``(...)`` (NaN if no pair counts)."""
    rule = _tie_rule(variant, ties)
    mb = np.asarray(metric_better, dtype=np.float64)
    mw = np.asarray(metric_worse, dtype=np.float64)
    tie = np.zeros(mb.shape[-1:], bool) if human_tie is None else np.asarray(human_tie, dtype=bool)
    return _tau(*_counts(mb, mw, tie), rule)


def _tie_rule(variant: str, ties: Optional[str]) -> str:
    """The metric-tie rule: ``ties`` if given, else the variant's (see the module table)."""
    if variant not in VARIANTS:
        raise OptionError(f"unknown WMT Kendall variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if ties is not None and ties not in TIE_RULES:
        raise OptionError(f"unknown ties={ties!r}; choose one of {', '.join(TIE_RULES)}")
    return ties or VARIANTS[variant]


def _check_pairs(metric_better, metric_worse, human_tie):
    """The pairs' metric scores and human-tie flags as arrays, checked for shape and finiteness."""
    mb = np.asarray(metric_better, dtype=np.float64)
    mw = np.asarray(metric_worse, dtype=np.float64)
    if mb.ndim != 1 or mb.shape != mw.shape:
        raise InputError(f"metric_better {mb.shape} and metric_worse {mw.shape} must be equal-length vectors")
    tie = np.zeros(mb.shape, bool) if human_tie is None else np.asarray(human_tie, dtype=bool)
    if tie.shape != mb.shape:
        raise InputError(f"human_tie {tie.shape} must match the {len(mb)} pairs")
    if not (np.isfinite(mb).all() and np.isfinite(mw).all()):
        raise InputError("metric scores of the pairs must be finite")
    return mb, mw, tie


def _counts(mb, mw, tie):
    """Concordant, discordant and metric-tie counts over human non-tie pairs (along the last axis)."""
    strict = ~tie
    c = ((mb > mw) & strict).sum(-1)
    d = ((mb < mw) & strict).sum(-1)
    t = ((mb == mw) & strict).sum(-1)
    return c, d, t


def _tau(c, d, t, rule):
    """Kendall-like tau of counts ``c``, ``d``, ``t`` under a metric-tie rule (NaN when no pair counts)."""
    if rule == "discordant":
        num, den = c - d - t, c + d + t
    elif rule == "excluded":
        num, den = c - d, c + d
    else:
        num, den = c - d, c + d + t
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1), np.nan)


# -- pairwise accuracy with ties (acc_eq) and tie calibration --------------------

def pairwise_accuracy_with_ties(metric_better, metric_worse, human_tie=None, epsilon: Optional[float] = None,
                                group=None) -> TieAccuracyResult:
    """acc_eq of Deutsch, Foster & Freitag (2023): share of pairs where metric and human agree, ties included.

    A pair is correct when the human prefers ``better`` and
    ``m_better - m_worse > epsilon``, or the human tied and
    ``|m_better - m_worse| <= epsilon``. ``epsilon=None`` calibrates it.
    ``group`` (optional ids, e.g. the segment): acc_eq per group, then the
    mean over groups (Deutsch et al.'s item grouping); else over all pairs.
    """
    mb, mw, tie = _check_pairs(metric_better, metric_worse, human_tie)
    if epsilon is not None and not (np.isfinite(epsilon) and epsilon >= 0):
        raise OptionError(f"epsilon must be a finite number >= 0, not {epsilon!r}")
    weights, n_groups = _group_weights(group, len(mb))
    if len(mb) == 0:
        return TieAccuracyResult(float("nan"), float(epsilon or 0.0), 0, 0, epsilon is None)
    value, eps = _acc_eq(mb, mw, tie, weights, epsilon)
    return TieAccuracyResult(float(value), float(eps), len(mb), n_groups, epsilon is None)


def pairwise_accuracy_with_ties_values(metric_better, metric_worse, human_tie=None,
                                       epsilon: Optional[float] = None, group=None) -> np.ndarray:
    """Vectorised acc_eq: arrays ``(..., pairs)``, returns the accuracies ``(...)`` (each calibrated if epsilon=None)."""
    mb = np.asarray(metric_better, dtype=np.float64)
    mw = np.asarray(metric_worse, dtype=np.float64)
    tie = np.zeros(mb.shape[-1:], bool) if human_tie is None else np.asarray(human_tie, dtype=bool)
    weights, _ = _group_weights(group, mb.shape[-1])
    if mb.shape[-1] == 0:
        return np.full(mb.shape[:-1], np.nan)
    return _acc_eq(mb, mw, tie, weights, epsilon)[0]


def acc_eq_weighted(metric_better, metric_worse, human_tie, weights, sort_kind: str = "stable") -> float:
    """Calibrated acc_eq of pairs whose weights (:func:`group_weights`) are made once by the caller: what a
    search that evaluates many score vectors on the same pairs calls (no checks; ``sort_kind`` see ``_acc_eq``)."""
    if len(weights) == 0:
        return float("nan")
    return float(_acc_eq(metric_better, metric_worse, human_tie, weights, None, sort_kind)[0])


def group_weights(group, n: int):
    """Each pair's weight so that the weighted sum of right pairs is the (group-averaged) accuracy, and the
    number of groups."""
    return _group_weights(group, n)


def _group_weights(group, n: int):
    """Weight of each pair so that the weighted sum is the (group-averaged) accuracy."""
    if group is None:
        return np.full(n, 1.0 / max(n, 1)), (1 if n else 0)
    group = np.asarray(group)
    if group.shape != (n,):
        raise InputError(f"group {group.shape} must give one id per pair ({n})")
    _, inverse, size = np.unique(group, return_inverse=True, return_counts=True)
    return 1.0 / (len(size) * size[inverse]), len(size)


def _acc_eq(mb, mw, tie, weights, epsilon, sort_kind: str = "stable"):
    """acc_eq at ``epsilon``, or calibrated (``None``). ``sort_kind="quicksort"`` sorts faster; the pairs of one
    gap then sum in another order, so the value may differ in the last bits (a weight search uses it)."""
    diff = mb - mw
    gap = np.abs(diff)
    right_if_untied = (~tie & (diff > 0)) * weights       # correct while the metric does not tie
    right_if_tied = tie * weights                          # correct once the metric ties
    if epsilon is not None:
        tied = gap <= epsilon
        return np.where(tied, right_if_tied, right_if_untied).sum(-1), np.full(gap.shape[:-1], float(epsilon))
    # Tie calibration: raising epsilon past |d_p| flips pair p from untied to tied.
    order = np.argsort(gap, axis=-1, kind=sort_kind)
    gs = np.take_along_axis(gap, order, -1)
    gain = np.take_along_axis(np.broadcast_to(right_if_tied - right_if_untied, gap.shape), order, -1)
    base = np.broadcast_to(right_if_untied, gap.shape).sum(-1)
    acc = base[..., None] + np.cumsum(gain, -1)
    run_end = np.ones(gs.shape, dtype=bool)
    run_end[..., :-1] = gs[..., 1:] != gs[..., :-1]        # epsilon = gs[k] ties every pair up to k's run end
    acc = np.where(run_end, acc, -np.inf)
    start = np.where(gs[..., 0] == 0, -np.inf, base)      # epsilon 0 without exact ties: nothing flips
    cand = np.concatenate([start[..., None], acc], -1)
    eps = np.concatenate([np.zeros(gs.shape[:-1] + (1,)), gs], -1)
    top = cand.max(-1, keepdims=True)
    best = np.argmax(cand >= top - _TOLERANCE * np.maximum(np.abs(top), 1.0), -1)   # smallest epsilon at the top
    value = np.take_along_axis(cand, best[..., None], -1)[..., 0]
    return value, np.take_along_axis(eps, best[..., None], -1)[..., 0]
