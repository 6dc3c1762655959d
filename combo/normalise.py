"""The one min-max normalisation of combo (Giménez & Màrquez 2008, §3.1), pure arithmetic on score arrays.

ULC (:mod:`combo.combine.ulc`), the features of learned combinations and the scoring of a model file
(:mod:`combo.metrics.tuned`) all call :func:`minmax_normalise`; it sits below all of them so that a tuned
metric, a metric, need not import the combination package. Ranges fitted on other scores are extrapolated,
not clipped (see :mod:`combo.combine.ulc`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def minmax_normalise(scores: np.ndarray, lo: np.ndarray, hi: np.ndarray, higher_is_better: Sequence[bool]
                     ) -> np.ndarray:
    """``(x - lo) / (hi - lo)`` per metric, ``1 - .`` for lower-is-better metrics (Giménez & Màrquez 2008, §3.1).

    ``scores`` is (metrics, rows); ``lo`` and ``hi`` are per metric (metrics,)
    or per metric and row (metrics, rows). Values outside ``[lo, hi]`` are
    extrapolated (see the module doc). A metric with ``hi == lo`` maps to 0 (a
    constant adds nothing to a ranking); a NaN score, or a range that could not
    be fitted (NaN), gives NaN.
    """
    scores = np.asarray(scores, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    if lo.ndim == 1:
        lo, hi = lo[:, None], hi[:, None]
    span = np.broadcast_to(hi - lo, scores.shape)
    out = np.zeros_like(scores)
    np.divide(scores - lo, span, out=out, where=span > 0)
    flip = ~np.asarray(higher_is_better, dtype=bool)
    out[flip] = np.where(span[flip] > 0, 1.0 - out[flip], 0.0)
    out[np.isnan(span) | np.isnan(scores)] = np.nan
    return out
