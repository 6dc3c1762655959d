"""The PairwiseMetric base: metrics defined on one (hypothesis, reference) pair, best over the references.

Most linguistic metrics (Asiya's SP-*, CP-*, DP-*, tree kernels, embedding
similarities) compare a hypothesis with one reference at a time and take the
best reference (Giménez & Màrquez 2010, §2: "the maximum over references").
:class:`PairwiseMetric` does the bookkeeping once: each distinct
(hypothesis text, reference text) pair is compared once, whatever the number
of rows that use it, then each row keeps its best reference. Subclasses give
``analyse(texts)`` and ``compare(analysis, hyp, ref)`` (vectorised over the
distinct pairs). Statistics per row are ``[score, 1]``: the corpus score is
the mean of the segment scores, as in Asiya.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .base import Metric, ReferencePairs


class PairwiseMetric(Metric):
    """Base of metrics scored per (hypothesis, reference) pair and maximised over references."""

    def n_texts(self, analysis: Any) -> int:
        """Number of analysed texts (``len(analysis)`` unless the analysis says otherwise)."""
        return len(analysis)

    def compare(self, analysis: Any, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Similarity of text ``hyp[k]`` to text ``ref[k]`` for each k (distinct pairs), shape (len(hyp),)."""
        raise NotImplementedError

    def statistics(self, analysis: Any, hyp_ids: np.ndarray, ref_ptr: np.ndarray, ref_ids: np.ndarray,
                   ref_weights: Optional[np.ndarray] = None) -> np.ndarray:
        pairs = ReferencePairs.build(self.name, self.n_texts(analysis), hyp_ids, ref_ptr, ref_ids)
        values = np.asarray(self.compare(analysis, pairs.hyp, pairs.ref), dtype=np.float64)
        per_pair = values[pairs.inverse]
        best = np.full(len(hyp_ids), -np.inf)
        np.maximum.at(best, pairs.pair_row, per_pair)
        return np.column_stack((best, np.ones(len(hyp_ids))))

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        count = stats[..., 1]
        out = np.zeros(count.shape)
        np.divide(stats[..., 0], count, out=out, where=count > 0)
        return out


def named_column_sums(values: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """Row sums of ``values`` (rows x columns named ``names``), adding the columns one at a time in the order of
    their names. A type absent from a batch of texts has no column, or a column of zeros, which adds nothing:
    the sums are the same to the last bit whatever other texts were analysed with a pair (chunked scoring)."""
    out = np.zeros(values.shape[0])
    for j in sorted(range(len(names)), key=names.__getitem__):
        out += values[:, j]
    return out
