"""Combination weights searched directly for a meta-evaluation criterion (WMT23's statistics, acc_eq, Pearson, Kendall).

A tuned metric that is trained for the measure it is judged by: non-negative
weights ``w`` of normalised metric scores ``x`` such that the combined score
``w . x`` maximises, on the training judgments, one of

- ``wmt23``: the WMT23 metrics task's average (Freitag et al. 2023;
  ``tasks.WMT23`` and ``AverageCorrs`` of mt-metrics-eval): system pairwise
  accuracy pooled over the training language pairs, and per pair system
  Pearson, segment Pearson without grouping and acc_eq grouped by item
  (:mod:`combo.meta.wmt23`);
- ``acc_eq``: acc_eq grouped by item with tie calibration (Deutsch et al. 2023),
  the mean over language pairs;
- ``seg_pearson``: segment Pearson without grouping, the mean over pairs;
- ``seg_kendall``: segment Kendall tau-b without grouping, the mean over pairs:
  with weights in [0, 1] and no pruning this is MetaMetrics-MT's recipe
  (Anugraha et al. 2024), searched with Powell's method instead of their
  Gaussian-process Bayesian optimisation.

Every statistic is invariant to a positive scale of ``w`` (acc_eq's tie
threshold is calibrated in the combined score's own units), so the search runs
over the box [0, 1]^m with scipy's derivative-free Powell method from uniform
weights. Weights below ``prune`` times the largest are set to 0 (metric
selection inside training). A combination's system score is the mean of its
segment scores, as a tuned metric scores systems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import InputError, OptionError
from ..meta.correlation import correlate
from ..meta.pairwise import PreferencePairs, acc_eq_weighted, group_weights, pairs_from_scores
from ..meta.wmt23 import sys_pairwise_accuracy, wmt23_average
from ..metrics.tuned import OBJECTIVES


@dataclass
class JudgedBlock:
    """One language pair's candidates as a (systems, segments) grid: human scores (NaN where unrated) and the
    pairs acc_eq compares, made once for every evaluation of a search."""

    rows: np.ndarray  # row index of each (system, segment) cell, -1 where absent
    human: np.ndarray  # (systems, segments) human scores, NaN where unrated
    human_sys: np.ndarray  # (systems,) mean of each system's rated scores
    pairs: PreferencePairs  # candidate pairs of one segment with human scores (acc_eq's)
    system_codes: np.ndarray  # the system each grid row stands for (the codes given to of())
    _weights: Optional[np.ndarray] = None  # acc_eq's per-pair weights when every pair is scored (made once)

    @classmethod
    def of(cls, y: np.ndarray, systems: np.ndarray, segments: np.ndarray) -> "JudgedBlock":
        sys_codes, s = np.unique(systems, return_inverse=True)
        seg_codes, g = np.unique(segments, return_inverse=True)
        rows = np.full((len(sys_codes), len(seg_codes)), -1, dtype=np.int64)
        rows[s, g] = np.arange(len(y))
        human = np.full(rows.shape, np.nan)
        human[s, g] = y
        judged = np.isfinite(human)
        with np.errstate(invalid="ignore", divide="ignore"):
            human_sys = np.where(judged, human, 0.0).sum(axis=1) / judged.sum(axis=1)
        return cls(rows, human, human_sys, pairs_from_scores(human), sys_codes)

    def matrix(self, row_values: np.ndarray) -> np.ndarray:
        """The (systems, segments) grid of per-row values (NaN where a cell has no row)."""
        out = np.full(self.rows.shape, np.nan)
        present = self.rows >= 0
        out[present] = row_values[self.rows[present]]
        return out


def _seg_correlation(metric: np.ndarray, human: np.ndarray, method: str) -> float:
    ok = np.isfinite(metric) & np.isfinite(human)
    res = correlate(metric[ok], human[ok], method)
    return float(res.value) if res.defined else 0.0


def block_statistics(block: JudgedBlock, row_values: np.ndarray, needed: Sequence[str],
                     sys_scores: Optional[np.ndarray] = None) -> Dict[str, float]:
    """The statistics of ``needed`` for one block: ``sys`` (system scores: ``sys_scores`` when given, else the
    mean of each system's segment scores), ``sys_pearson``, ``seg_pearson``, ``seg_acc_eq``, ``seg_kendall``."""
    m = block.matrix(row_values)
    out: Dict[str, float] = {}
    if "sys_pearson" in needed or "sys" in needed:
        if sys_scores is None:
            finite = np.isfinite(m)
            with np.errstate(invalid="ignore", divide="ignore"):
                sys_scores = np.where(finite, m, 0.0).sum(axis=1) / finite.sum(axis=1)
        out["sys"] = sys_scores  # type: ignore[assignment]
        ok = np.isfinite(sys_scores) & np.isfinite(block.human_sys)
        res = correlate(sys_scores[ok], block.human_sys[ok], "pearson")
        out["sys_pearson"] = float(res.value) if res.defined else 0.0
    if "seg_pearson" in needed:
        out["seg_pearson"] = _seg_correlation(m, block.human, "pearson")
    if "seg_kendall" in needed:
        out["seg_kendall"] = _seg_correlation(m, block.human, "kendall_b")
    if "seg_acc_eq" in needed:
        p = block.pairs
        better, worse = m[p.better, p.segment], m[p.worse, p.segment]  # pair_scores, NaN allowed (unscored)
        ok = np.isfinite(better) & np.isfinite(worse)
        if ok.all():  # the weights of the item grouping depend on the pairs only: made once per block
            if block._weights is None:
                block._weights = group_weights(p.segment, len(p.segment))[0]
            weights, tie = block._weights, p.tie
        else:
            better, worse, tie = better[ok], worse[ok], p.tie[ok]
            weights = group_weights(p.segment[ok], len(tie))[0]
        # pairwise_accuracy_with_ties(..., group=segment) without its checks, which cost as much as the statistic
        value = acc_eq_weighted(better, worse, tie, weights, "quicksort")
        out["seg_acc_eq"] = float(value) if np.isfinite(value) else 0.0
    return out


_NEEDED = {"wmt23": ("sys", "sys_pearson", "seg_pearson", "seg_acc_eq"), "acc_eq": ("seg_acc_eq",),
           "seg_pearson": ("seg_pearson",), "seg_kendall": ("seg_kendall",)}


def objective_value(blocks: Sequence[JudgedBlock], row_values: np.ndarray, objective: str) -> float:
    """The criterion ``objective`` (:data:`OBJECTIVES`) of per-row scores over the blocks (language pairs)."""
    if objective not in OBJECTIVES:
        raise OptionError(f"unknown objective {objective!r}; choose one of {list(OBJECTIVES)}")
    stats = [block_statistics(b, row_values, _NEEDED[objective]) for b in blocks]
    if objective == "wmt23":
        keep = [np.isfinite(s["sys"]) & np.isfinite(b.human_sys) for b, s in zip(blocks, stats)]
        try:
            accuracy = sys_pairwise_accuracy([s["sys"][k] for s, k in zip(stats, keep)],
                                             [b.human_sys[k] for b, k in zip(blocks, keep)])
        except InputError:
            accuracy = 0.0
        tasks = [("sys_accuracy", accuracy)]
        for s in stats:
            tasks += [("sys_pearson", s["sys_pearson"]), ("seg_pearson", s["seg_pearson"]),
                      ("seg_acc_eq", s["seg_acc_eq"])]
        return wmt23_average(tasks)
    key = {"acc_eq": "seg_acc_eq"}.get(objective, objective)
    return float(np.mean([s[key] for s in stats]))


def wmt23_statistics(block: JudgedBlock, row_values: np.ndarray,
                     sys_scores: Optional[np.ndarray] = None) -> Dict[str, float]:
    """One language pair's four WMT23 statistics and their average (``tasks.WMT23`` for one pair: 1/4 each)."""
    s = block_statistics(block, row_values, _NEEDED["wmt23"], sys_scores)
    keep = np.isfinite(s["sys"]) & np.isfinite(block.human_sys)
    try:
        accuracy = sys_pairwise_accuracy(s["sys"][keep], block.human_sys[keep])
    except InputError:
        accuracy = float("nan")
    out = {"seg_pearson": s["seg_pearson"], "seg_acc_eq": s["seg_acc_eq"], "sys_pearson": s["sys_pearson"],
           "sys_accuracy": accuracy}
    out["average"] = wmt23_average([("sys_accuracy", accuracy), ("sys_pearson", s["sys_pearson"]),
                                    ("seg_pearson", s["seg_pearson"]), ("seg_acc_eq", s["seg_acc_eq"])])
    return out


def search_weights(X: np.ndarray, blocks: Sequence[JudgedBlock], objective: str = "wmt23", prune: float = 0.02,
                   maxfev: Optional[int] = None) -> "WeightSearch":
    """Non-negative weights of the columns of ``X`` (rows, metrics) that maximise ``objective`` over ``blocks``.

    scipy's Powell method over [0, 1]^m from 0.5 each (uniform: ULC), at most
    ``maxfev`` evaluations (default 60 per metric), kept only if better than
    uniform weights; then weights below ``prune`` times the largest are set
    to 0, unless that falls below uniform weights. The weights sum to 1.
    """
    from scipy.optimize import minimize

    if objective not in OBJECTIVES:
        raise OptionError(f"unknown objective {objective!r}; choose one of {list(OBJECTIVES)}")
    if not (0.0 <= prune < 1.0):
        raise OptionError(f"prune must be in [0, 1), not {prune!r}")
    n_metrics = X.shape[1]
    X = np.asarray(X, dtype=np.float64)
    evaluations: List[float] = []

    def loss(w: np.ndarray) -> float:
        w = np.clip(w, 0.0, 1.0)
        if not np.any(w > 0):
            return 1.0
        value = objective_value(blocks, X @ w, objective)
        evaluations.append(value)
        return -value

    x0 = np.full(n_metrics, 0.5)
    start = -loss(x0)
    if n_metrics == 1:
        w = np.ones(1)
    else:
        res = minimize(loss, x0, method="Powell", bounds=[(0.0, 1.0)] * n_metrics,
                       options={"maxfev": maxfev or 60 * n_metrics, "xtol": 1e-3, "ftol": 1e-7})
        w = np.clip(res.x, 0.0, 1.0)
        if -res.fun < start:  # never worse than where it started
            w = x0
    if w.max() <= 0:
        w = np.ones(n_metrics)
    w = w / w.sum()
    pruned = np.where(w >= prune * w.max(), w, 0.0)
    pruned = pruned / pruned.sum()
    value = objective_value(blocks, X @ pruned, objective)
    if value < start:  # pruning may lose more than the search gained: keep every weight then
        pruned, value = w, objective_value(blocks, X @ w, objective)
    return WeightSearch(pruned, value, start, len(evaluations) + 2, objective)


@dataclass
class WeightSearch:
    """The weights found, the objective there and at uniform weights (ULC), and the evaluations spent."""

    weights: np.ndarray
    value: float
    uniform_value: float
    evaluations: int
    objective: str


def calibrate(raw: np.ndarray, human: np.ndarray) -> tuple:
    """``(a, c)`` of the least-squares line ``human ~ a * raw + c`` over rows with both; ``(1, 0)`` when ``a``
    would not be positive (the map must keep the combination's order) or there are fewer than 2 such rows."""
    ok = np.isfinite(raw) & np.isfinite(human)
    if ok.sum() < 2 or np.std(raw[ok]) == 0:
        return 1.0, 0.0
    a, c = np.polyfit(raw[ok], human[ok], 1)
    return (float(a), float(c)) if a > 0 else (1.0, 0.0)


class DirectCombiner(BaseEstimator):
    """Non-negative weights searched for a criterion (:func:`search_weights`), as an estimator.

    ``fit(X, blocks=...)``: ``X`` (rows, features) normalised metric scores;
    ``blocks`` the judged candidates (:class:`JudgedBlock`, one per language
    pair) whose cells index rows of ``X``. ``coef_`` sums to 1, ``intercept_``
    is 0; ``search_`` keeps the :class:`WeightSearch`.
    """

    def __init__(self, objective: str = "wmt23", prune: float = 0.02, maxfev: Optional[int] = None):
        self.objective = objective
        self.prune = prune
        self.maxfev = maxfev

    def fit(self, X, y=None, blocks: Sequence[JudgedBlock] = ()) -> "DirectCombiner":
        X = np.asarray(X, dtype=np.float64)
        if not blocks:
            raise InputError("no judged candidates to search weights on")
        self.search_ = search_weights(X, blocks, self.objective, self.prune, self.maxfev)
        self.coef_ = self.search_.weights
        self.intercept_ = 0.0
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """The combined score ``w . x`` of each row."""
        return np.asarray(X, dtype=np.float64) @ self.coef_ + self.intercept_
