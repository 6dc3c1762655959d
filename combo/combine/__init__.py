"""Metric combinations over score arrays (no text): ULC, search and learned ranking; QUEEN (QARLA), whose core
KING shares, lives in :mod:`combo.meta.queen` and is re-exported here as a combination scheme.

``combo.combine.ulc(scores, higher_is_better)`` and ``mean_rank`` are the functions (their module is
:mod:`combo.combine.ulc`); the learners are in :mod:`combo.combine.training` (imports scikit-learn).
"""

from ..meta.queen import (
    TRIPLES,
    QueenResult,
    min_references,
    queen,
    queen_leave_one_out,
    queen_naive,
    queen_segments,
    triple_count,
)

from .search import search
from .ulc import fit_minmax, mean_rank, minmax_normalise, ulc  # noqa: E402 - the functions shadow the module name

__all__ = [
    "fit_minmax", "mean_rank", "minmax_normalise", "search", "ulc",
    "TRIPLES", "QueenResult", "min_references", "queen", "queen_leave_one_out", "queen_naive",
    "queen_segments", "triple_count",
]
