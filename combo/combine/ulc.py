"""Parametric-free linear combinations: min-max normalisation, ULC and mean rank.

All functions work on a score matrix ``scores`` of shape (metrics, rows) and
never touch text. Lower-is-better metrics (error rates) are flipped so that
every normalised metric is higher-is-better.

:func:`~combo.normalise.minmax_normalise` is the one min-max normalisation of combo: ULC here,
the features of learned combinations (:mod:`combo.combine.training`) and the
scoring of a model file (:mod:`combo.metrics.tuned`) all call it. Giménez &
Màrquez (2008, §3.1) normalise each metric by the minimum and maximum score it
takes in the test bed; fitted on the scores being combined (``combo evaluate
--combine ulc``, ``combo search``) every value lies in [0, 1]. Ranges stored
from training data and applied to new scores (a model file, or
:meth:`Normalisation.apply` on other rows) meet values outside them: these are
**extrapolated** linearly (a BLEU above the training maximum maps above 1), not
clipped, since clipping would turn distinct scores into ties and make the
combination's order depend on where the training range happened to end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..normalise import minmax_normalise  # the one min-max normalisation (also read by model files)


@dataclass
class Normalisation:
    """Per-metric (and per-group) ranges that map the scores they were fitted on to [0, 1].

    ``lo[m, g]`` and ``hi[m, g]`` are metric ``m``'s minimum and maximum in
    group ``g``; ``constant`` lists (metric, group) pairs with ``hi == lo``,
    which normalise to 0 (a constant adds nothing to a ranking).
    """

    lo: np.ndarray
    hi: np.ndarray
    groups: List[str]
    higher_is_better: np.ndarray
    constant: List[tuple] = field(default_factory=list)

    def apply(self, scores: np.ndarray, group_index: Optional[np.ndarray] = None) -> np.ndarray:
        """Normalise ``scores`` (metrics, rows) with each row's group ranges (:func:`minmax_normalise`:
        values outside the stored range are extrapolated, not clipped)."""
        scores = np.asarray(scores, dtype=np.float64)
        g = np.zeros(scores.shape[1], dtype=np.int64) if group_index is None else np.asarray(group_index)
        return minmax_normalise(scores, self.lo[:, g], self.hi[:, g], self.higher_is_better)


def fit_minmax(scores: np.ndarray, higher_is_better: Sequence[bool], groups: Optional[Sequence[str]] = None,
               names: Optional[Sequence[str]] = None) -> tuple:
    """Fit min-max ranges over the rows (per group, e.g. a language pair, as DiscoTK does).

    Returns ``(Normalisation, group_index)``. A NaN marks a candidate without a
    score (scores read from a file, :mod:`combo.metrics.external`): ranges are
    fitted over the rows that have every score, and such a row stays NaN after
    normalisation, so every combination leaves that candidate out. A metric with no finite score, or an
    infinite score, is an error naming the metric (``names``: one per row of ``scores``; else its row).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise InputError(f"scores must be (metrics, rows), got shape {scores.shape}")
    bad = np.flatnonzero(np.isinf(scores).any(axis=1) | (np.isnan(scores).all(axis=1) & (scores.shape[1] > 0)))
    if len(bad):
        k = int(bad[0])
        what = f"metric {names[k]!r}" if names is not None else f"row {k} of the scores (metrics, rows)"
        how = "infinite scores" if np.isinf(scores[k]).any() else "no score for any candidate"
        raise InputError(f"{what} has {how}: a combination cannot normalise it",
                         fix="score every candidate with finite values, or leave the metric out")
    if groups is None:
        names, gi = ["all"], np.zeros(scores.shape[1], dtype=np.int64)
    else:
        names, gi = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
        names = list(names)
    lo = np.full((scores.shape[0], len(names)), np.nan)
    hi = np.full_like(lo, np.nan)
    complete = ~np.isnan(scores).any(axis=0)
    for g in range(len(names)):
        cols = scores[:, (gi == g) & complete]
        if cols.shape[1]:
            lo[:, g], hi[:, g] = cols.min(axis=1), cols.max(axis=1)
    constant = [(int(m), names[g]) for m, g in zip(*np.nonzero(hi == lo))]
    norm = Normalisation(lo, hi, names, np.asarray(higher_is_better, dtype=bool), constant)
    return norm, gi


def ulc(scores: np.ndarray, higher_is_better: Sequence[bool], groups: Optional[Sequence[str]] = None,
        names: Optional[Sequence[str]] = None) -> np.ndarray:
    """Uniform linear combination (Giménez & Màrquez 2008, §3.1): mean of min-max normalised metric scores.

    ``scores``: shape (metrics, rows), NaN where a metric has no score; ``higher_is_better``: one bool per
    metric (lower-is-better metrics are flipped); ``groups``: one name per row, each group normalised on its own
    ranges (e.g. a language pair); ``names`` the metrics, for errors. Returns shape (rows,).
    """
    norm, gi = fit_minmax(scores, higher_is_better, groups, names)
    return norm.apply(scores, gi).mean(axis=0)


def mean_rank(scores: np.ndarray, higher_is_better: Sequence[bool], groups: Optional[Sequence[str]] = None
              ) -> np.ndarray:
    """Mean of per-metric ranks (average ranks for ties), scaled to [0, 1] within each group; higher is better.

    A row with a NaN score is left out of the ranking and gets NaN.
    """
    scores = np.asarray(scores, dtype=np.float64)
    hib = np.asarray(higher_is_better, dtype=bool)
    signed = np.where(hib[:, None], scores, -scores)
    gi = np.zeros(scores.shape[1], dtype=np.int64) if groups is None else \
        np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)[1]
    out = np.full(scores.shape[1], np.nan)
    complete = ~np.isnan(scores).any(axis=0)
    from scipy.stats import rankdata  # imported where used: 0.9 s that every command line would pay at start

    for g in np.unique(gi):
        cols = (gi == g) & complete
        n = int(cols.sum())
        ranks = rankdata(signed[:, cols], axis=1)  # 1 = worst
        out[cols] = ((ranks - 1) / max(n - 1, 1)).mean(axis=0)
    return out
