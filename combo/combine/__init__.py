"""Metric combinations over score arrays (no text): ULC, search and learned ranking; QUEEN (QARLA), whose core
KING shares, lives in :mod:`combo.meta.queen` and is re-exported here as a combination scheme."""

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

__all__ = [
    "TRIPLES", "QueenResult", "min_references", "queen", "queen_leave_one_out", "queen_naive",
    "queen_segments", "triple_count",
]
