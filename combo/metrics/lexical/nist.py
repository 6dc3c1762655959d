"""NIST (Doddington 2002): information-weighted n-gram precision with a soft brevity penalty.

Information weight of an n-gram (Doddington 2002, eq. 2), from the reference
n-gram counts of the whole call (every reference of every row)::

    Info(w1..wn) = log2( count(w1..wn-1) / count(w1..wn) ),  count() of the empty prefix = reference words

Score (eq. 3): ``sum_n [ sum_matched Info / #hyp n-grams ] * exp(-beta * log(min(L_hyp / L_ref, 1))^2)``,
beta chosen so the penalty is 0.5 at a length ratio of 2/3. As mteval-v13a.pl,
matches are clipped by the largest count in any reference and ``L_ref`` is
the *average* reference length of a segment, summed over segments.

Statistics per row: ``[hyp_len, ref_len, info_1..N, count_1..N]``; the corpus
score is the score of their sum. NIST is not bounded above (range [0, inf)):
the raw value is kept, as mteval and NLTK report it.
"""

from __future__ import annotations

import math
from typing import List, NamedTuple, Sequence, Tuple

import numpy as np
from scipy import sparse

from ...analysis.ngrams import (NgramCounts, NgramTable, ReferenceCounts, count_reference_groups, group_max,
                                reference_sets)
from ...analysis.tokenize import TOKENIZERS, tokenize_all
from ..base import Metric, Option
from ..registry import register

# Doddington 2002, eq. 3: penalty 0.5 at a length ratio of 2/3.
NIST_BETA = -math.log(0.5) / math.log(1.5) ** 2


def nist_brevity_penalty(hyp_len: np.ndarray, ref_len: np.ndarray) -> np.ndarray:
    """``exp(-beta log(min(hyp/ref, 1))^2)``; 1 when the reference is empty, 0 for an empty hypothesis."""
    hyp_len = np.asarray(hyp_len, dtype=np.float64)
    ref_len = np.asarray(ref_len, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ref_len > 0, hyp_len / np.where(ref_len > 0, ref_len, 1.0), np.inf)
        log_ratio = np.log(np.where((ratio > 0) & (ratio < 1), ratio, 1.0))
    return np.where(ratio >= 1, 1.0, np.where(ratio > 0, np.exp(-NIST_BETA * log_ratio ** 2), 0.0))


def nist_from_statistics(stats: np.ndarray, max_order: int) -> np.ndarray:
    """NIST of statistics rows ``[hyp_len, ref_len, info_1..N, count_1..N]`` (mteval's ``nist_score``)."""
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    info = stats[:, 2:2 + max_order]
    counts = stats[:, 2 + max_order:2 + 2 * max_order]
    precision = (info / np.maximum(counts, 1.0)).sum(axis=1)
    return precision * nist_brevity_penalty(stats[:, 0], stats[:, 1])


class ReferenceWeights(NamedTuple):
    """NIST's information weights (eq. 2) of the reference n-grams of a call, by content: ``weights[n-1][j]``
    is the weight of n-gram ``j`` of ``table``. What a chunk of rows needs from the whole call."""

    table: NgramTable
    weights: List[np.ndarray]

    def of(self, analysis: NgramCounts) -> List[np.ndarray]:
        """Per order, the weight of each n-gram id of ``analysis`` (0 for n-grams absent from the references)."""
        return self.table.values_of(analysis, self.weights, 0.0)


def information_weights(counts: ReferenceCounts, nltk_rounding: bool = False) -> ReferenceWeights:
    """``Info`` (eq. 2) of every n-gram of the references, from their counts (each reference counted once per
    row that uses it); ``count(w1..wn-1)`` of a unigram is the number of reference words.

    The weights are computed in table order (by content), so any texts
    analysed with the same references, in one call or a chunk at a time,
    get the same weights to the last bit. ``nltk_rounding`` computes each
    weight with ``math.log(x, 2)`` as NLTK does (``np.log2`` may differ in
    the last bit, which decides NLTK's ties between references).
    """
    weights, previous = [], None
    for n, count in enumerate(counts.counts, start=1):
        context = np.full(len(count), counts.words) if n == 1 else previous[counts.table.prefixes(n)]
        ratio = context / count
        weights.append(np.asarray([math.log(r, 2) for r in ratio.tolist()], dtype=np.float64) if nltk_rounding
                       else np.log2(ratio))
        previous = count
    return ReferenceWeights(counts.table, weights)


def first_positions(analysis: NgramCounts, order: int):
    """Sorted keys ``text * G + gram`` and the first position of that n-gram in that text."""
    ids = analysis.ngram_ids[order - 1]
    n_grams = analysis.matrices[order - 1].shape[1]
    text_of = np.repeat(np.arange(analysis.n_texts, dtype=np.int64), analysis.lengths)
    valid = np.flatnonzero(ids >= 0)
    keys = text_of[valid] * n_grams + ids[valid]
    keys, first = np.unique(keys, return_index=True)  # first flat position of each (text, gram)
    return keys, valid[first]


def sequential_group_sums(group: np.ndarray, order_key: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, ``values`` added one at a time in ``order_key`` order (the rounding of Python's ``sum``)."""
    out = np.zeros(n_groups)
    if len(group) == 0:
        return out
    idx = np.lexsort((order_key, group))
    g, v = group[idx], values[idx]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    rank = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)]))
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(rank.max() + 2))
    for j in range(rank.max() + 1):
        sel = by_rank[bounds[j]:bounds[j + 1]]  # the j-th term of every group that has one
        out[g[sel]] += v[sel]
    return out


def nltk_numerators(mat: sparse.csr_matrix, info: np.ndarray, hyp_texts: np.ndarray, ref_texts: np.ndarray,
                    first_keys: np.ndarray, first_pos: np.ndarray) -> np.ndarray:
    """``sum Info(g) * min(c_h(g), c_r(g))`` of each (hypothesis, reference) pair, summed in NLTK's order.

    NLTK iterates the matched n-grams in order of first occurrence in the hypothesis.
    """
    mins = sparse.csr_matrix(mat[hyp_texts].minimum(mat[ref_texts])).tocoo()
    keep = mins.data > 0
    pair, gram, count = mins.row[keep], mins.col[keep], mins.data[keep]
    where = np.searchsorted(first_keys, hyp_texts[pair] * mat.shape[1] + gram)
    return sequential_group_sums(pair, first_pos[where], info[gram] * count, len(hyp_texts))


def best_reference_per_order(numerators: np.ndarray, ref_lens: np.ndarray, pair_row: np.ndarray,
                             n_rows: int):
    """Per row, the pair with the largest numerator, then the longest reference (NLTK's ``max`` of tuples)."""
    num = np.zeros(n_rows)
    length = np.zeros(n_rows)
    if len(pair_row) == 0:
        return num, length
    order = np.lexsort((ref_lens, numerators, pair_row))
    last = np.ones(len(order), dtype=bool)
    last[:-1] = pair_row[order][1:] != pair_row[order][:-1]
    chosen = order[last]
    num[pair_row[chosen]] = numerators[chosen]
    length[pair_row[chosen]] = ref_lens[chosen]
    return num, length


@register("nist")
class NIST(Metric):
    """NIST score (Doddington 2002, eqs. 2-3), as mteval-v13a.pl computes it; range [0, inf).

    Information weights come from all references of the call (a reference
    used by several rows, e.g. by several systems, counts once per row: with
    every system on every segment this scales all counts alike and leaves the
    weights unchanged). Segment scores use these weights of the whole call; a
    test bed scored in chunks of rows gets them from :meth:`bound_to`, with the
    same scores to the last digit.
    ``multi_ref="nltk"`` reproduces ``nltk.translate.nist_score`` with several
    references (per order the single best reference, and its length).
    Reference weights are ignored.
    """

    family = "lexical"
    higher_is_better = True
    value_range = (0.0, math.inf)  # not bounded above: raw NIST, as mteval and NLTK
    citation = "Doddington 2002, eq. 2 (information weights) and eq. 3 (score); mteval-v13a.pl"
    options = {
        "max_order": Option(5, "largest n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9, short="n"),
        "tokenize": Option("13a", "tokenizer", choices=tuple(TOKENIZERS), short="tok"),
        "lowercase": Option(False, "lowercase before tokenizing (mteval lowercases unless -c)", short="lc"),
        "multi_ref": Option("mteval", "several references: mteval (clip by the max count, average length) "
                            "or nltk (per order the best reference and its length)",
                            choices=("mteval", "nltk"), short="mr"),
    }

    locality = "references"

    def reference_groups(self, ref_ptr, ref_ids) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each distinct reference alone, weighing the number of rows that use it."""
        ids, occurrences = np.unique(ref_ids, return_counts=True)
        return np.arange(len(ids) + 1, dtype=np.int64), ids, occurrences.astype(np.float64)

    def count_references(self, analysis: NgramCounts, group_ptr, group_ids, group_weight) -> ReferenceCounts:
        return count_reference_groups(analysis, group_ptr, group_ids, group_weight)

    def ngram_weights_from(self, counts: ReferenceCounts) -> ReferenceWeights:
        return information_weights(counts, nltk_rounding=self.params["multi_ref"] == "nltk")

    def tokens(self, texts: Sequence[str]):
        return tokenize_all(texts, self.params["tokenize"], self.params["lowercase"])

    def analyse(self, texts: Sequence[str]) -> NgramCounts:
        return NgramCounts(self.tokens(texts), self.params["max_order"])

    def statistics(self, analysis: NgramCounts, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        n_order = self.params["max_order"]
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        n_rows = len(hyp_ids)
        sizes = np.diff(ref_ptr)
        pair_row = np.repeat(np.arange(n_rows), sizes)
        lengths = analysis.lengths.astype(np.float64)
        ngram_weights = self.ngram_weights
        if ngram_weights is None:  # one call: the weights of its own references
            ngram_weights = self.own_ngram_weights(analysis, ref_ptr, ref_ids)
        weights = ngram_weights.of(analysis)
        stats = np.zeros((n_rows, 2 + 2 * n_order))
        stats[:, 0] = lengths[hyp_ids]
        for k in range(n_order):
            stats[:, 2 + n_order + k] = analysis.totals(k + 1)[hyp_ids]
        if self.params["multi_ref"] == "mteval":
            ref_sum = np.bincount(pair_row, weights=lengths[ref_ids], minlength=n_rows)
            stats[:, 1] = np.divide(ref_sum, sizes, out=np.zeros(n_rows), where=sizes > 0)
            row_set, set_ptr, set_ids = reference_sets(ref_ptr, ref_ids)
            for k, mat in enumerate(analysis.matrices):
                ref_max = group_max(mat, set_ptr, set_ids)
                clipped = mat[hyp_ids].minimum(ref_max[row_set])
                stats[:, 2 + k] = sparse.csr_matrix(clipped) @ weights[k]
        else:
            pair_len = lengths[ref_ids]
            ref_len = np.zeros(n_rows)
            for k, mat in enumerate(analysis.matrices):
                keys, first = first_positions(analysis, k + 1)
                numerators = nltk_numerators(mat, weights[k], hyp_ids[pair_row], ref_ids, keys, first)
                num, length = best_reference_per_order(numerators, pair_len, pair_row, n_rows)
                stats[:, 2 + k] = num
                ref_len += length
            stats[:, 1] = ref_len / n_order  # NLTK adds the chosen length once per order
        return stats

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        out = nist_from_statistics(stats, self.params["max_order"])
        return out if np.ndim(stats) > 1 else out[0]
