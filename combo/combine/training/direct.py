"""Combination weights searched directly for an objective (:mod:`combo.meta.objectives`).

A tuned metric trained for the measure it is judged by: non-negative weights
``w`` of normalised metric scores ``x`` such that the combined score ``w . x``
maximises, on the training judgments, one of the registered objectives (WMT23's
average, acc_eq, segment Pearson or Kendall). Every objective is invariant to a
positive scale of ``w`` (acc_eq's tie threshold is calibrated in the combined
score's own units), so the search runs over the box [0, 1]^m with scipy's
derivative-free Powell method from uniform weights. Weights below ``prune``
times the largest are set to 0 (metric selection inside training). With
``seg_kendall``, weights in [0, 1] and no pruning, this is MetaMetrics-MT's
recipe (Anugraha et al. 2024), searched with Powell's method instead of their
Gaussian-process Bayesian optimisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ...errors import InputError, OptionError
from ...meta.objectives import JudgedBlock, get_objective, objective_value

def search_weights(X: np.ndarray, blocks: Sequence[JudgedBlock], objective="wmt23", prune: float = 0.02,
                   maxfev: Optional[int] = None) -> "WeightSearch":
    """Non-negative weights of the columns of ``X`` (rows, metrics) that maximise ``objective`` (a name or an
    :class:`~combo.meta.objectives.Objective`) over ``blocks``.

    scipy's Powell method over [0, 1]^m from 0.5 each (uniform: ULC), at most
    ``maxfev`` evaluations (default 60 per metric), kept only if better than
    uniform weights; then weights below ``prune`` times the largest are set
    to 0, unless that falls below uniform weights. The weights sum to 1.
    """
    from scipy.optimize import minimize

    objective = get_objective(objective)
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
    return WeightSearch(pruned, value, start, len(evaluations) + 2, objective.name)


@dataclass
class WeightSearch:
    """The weights found, the objective there and at uniform weights (ULC), and the evaluations spent;
    ``objective`` is the objective's name (an old spelling given is written as today's)."""

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
