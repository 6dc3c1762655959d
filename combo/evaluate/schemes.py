"""The built-in combination schemes: how each combines a metric set's scores, then its record registered.

A scheme's ``rows(ev, subset)`` returns one combined score per row of the score table (candidate) and the number
of segments skipped; ``systems(ev, subset)`` one score per system. ULC (Giménez & Màrquez 2008, §3.1): the mean
of the metric scores, each min-max normalised (:mod:`combo.combine.ulc`); QUEEN (Amigó et al., ACL 2005): the
probability over reference triples that the output is, for every metric, as close to a reference as two other
references are to each other (:mod:`combo.meta.queen`).
"""

from __future__ import annotations

from typing import List, Tuple

import numpy as np

from ..combine.ulc import mean_rank, ulc
from ..meta_run import queen_segments
from .records import Scheme, register_scheme


def queen_rows(ev, subset: List[int]) -> Tuple[np.ndarray, int]:
    """QUEEN of ``subset`` per row (a Scheme's rows); NaN and counted skipped where a segment has too few
    references."""
    segs = ev.reference_segments(subset)
    res = queen_segments(segs, ev.triples, higher_is_better=ev.hib[subset], memory=ev.budget)
    out = np.full(len(ev.table.row_system), np.nan)
    for i, vals in enumerate(res.values):
        if vals is not None:
            out[segs.refs.rows(i)] = vals
    return out, res.n_skipped


# -- the built-in schemes (to add one: write its rows, then register its record here) ------------------------------

for _scheme in (
    Scheme("queen", "QUEEN: probability over reference triples that, for every metric, the output is as close to a "
                    "reference as two other references are to each other; 0-1, robust to metric scale and "
                    "redundancy",
           queen_rows, needs_references=True),
    Scheme("ulc", "ULC: mean of the metric scores, each min-max normalised over the test bed",
           lambda ev, subset: (ulc(ev.table.segment[subset], ev.hib[subset]), 0),
           lambda ev, subset: ulc(ev.table.system[subset], ev.hib[subset])),
    Scheme("mean-rank", "mean of each candidate's rank under every metric",
           lambda ev, subset: (mean_rank(ev.table.segment[subset], ev.hib[subset]), 0),
           lambda ev, subset: mean_rank(ev.table.system[subset], ev.hib[subset])),
):
    register_scheme(_scheme)
del _scheme
