"""Metric combinations over score arrays (no text): QUEEN (QARLA) here; ULC, search and learned ranking alongside."""

from .queen import (
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
