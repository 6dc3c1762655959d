"""CIDEr-D (Vedantam, Zitnick & Parikh 2015, §3.1-3.2; coco-caption's ``CiderD``).

For n = 1..N each text is a TF-IDF vector over its n-grams,
``g_k = tf_k * (log |I| - log max(1, df_k))`` (eq. 1), where ``df_k`` is the
number of segments whose reference set contains n-gram k and ``|I|`` the
number of segments, both over all segments of one call. Per reference ``s``:

    CIDEr-D_n(c, s) = exp(-(l_c - l_s)^2 / (2 sigma^2)) * <min(g(c), g(s)), g(s)> / (|g(c)| |g(s)|)

(eq. 5: the hypothesis vector clipped by the reference's in the numerator,
the Gaussian length penalty with sigma = 6). The segment score is the mean
over references and over n. coco-caption multiplies by 10; we report that
value / 10, on a 0-1 scale. The corpus score is the mean of segment scores.

Departures from coco-caption's code, all documented in docs/metrics/cider.md:
tokenisation is 13a or white space (coco's PTB tokenizer needs Java); the
length is the token count (coco counts bigrams, which gives the same
difference whenever both texts are non-empty, and no penalty at all for
``max_order=1``); with ``document_frequency="segments"`` rows sharing one
reference set count once (coco counts every row: ``"rows"``).
Reference weights are not used (CIDEr-D has no weighted form).
"""

from __future__ import annotations

from typing import List, NamedTuple, Sequence, Tuple

import numpy as np
from scipy import sparse

from ...analysis.ngrams import NgramCounts, NgramTable, ReferenceCounts, count_reference_groups, reference_sets
from ...analysis.tokenize import TOKENIZERS, tokenize_all
from ..base import Metric, Option, safe_divide
from ..registry import register


class ReferenceIdf(NamedTuple):
    """The idf (eq. 1) of the n-grams of a call's reference sets, by content: ``idfs[n-1][j]`` of n-gram ``j``
    of ``table``; ``unseen`` (``log |I|``) of an n-gram in no reference set. What a chunk of rows needs from
    the whole call."""

    table: NgramTable
    idfs: List[np.ndarray]
    unseen: float

    def of(self, analysis: NgramCounts) -> List[np.ndarray]:
        """Per order, the idf of each n-gram id of ``analysis``."""
        return self.table.values_of(analysis, self.idfs, self.unseen)


def reference_idf(counts: ReferenceCounts) -> ReferenceIdf:
    """The idf (eq. 1) of every n-gram of the reference sets, from their document frequencies (``counts``:
    each set weighing 1, or as coco-caption the number of rows that have it); ``|I|`` is the sets' weight.

    Computed in table order (by content), so one call and a chunk at a time get the same idf to the last bit.
    """
    log_n = np.log(max(counts.weight, 1.0))
    return ReferenceIdf(counts.table, [log_n - np.log(df) for df in counts.counts], float(log_n - np.log(1.0)))


def tfidf(matrix: sparse.csr_matrix, idf: np.ndarray) -> sparse.csr_matrix:
    """Rows of ``matrix`` (term frequencies) with each column scaled by its idf."""
    out = matrix.copy()
    out.data = out.data * idf[out.indices]
    return out


def row_norms(matrix: sparse.csr_matrix) -> np.ndarray:
    """Euclidean norm of every row of a sparse matrix."""
    return np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())


@register("cider")
class CIDErD(Metric):
    """CIDEr-D, coco-caption's consensus metric for captions; 0-1 scale (coco's value / 10).

    Vedantam et al. 2015, eq. 1 (TF-IDF), eq. 5 (CIDEr-D: clipping and
    Gaussian length penalty), eq. 4 (mean over n). The idf is learnt from the
    references of all segments scored in one call, so scores depend on the
    call: score a whole test set at once, never one segment at a time.
    """

    family = "lexical"
    higher_is_better = True
    citation = "Vedantam, Zitnick & Parikh 2015 (CVPR), §3.1-3.2, eqs. 1, 4, 5; coco-caption CiderD"
    # declared per metric, like NIST's: the defaults and meanings follow each metric's reference implementation
    options = {
        "max_order": Option(4, "largest n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9,
                            short="n"),
        "sigma": Option(6.0, "standard deviation of the Gaussian length penalty",
                        check=lambda v: isinstance(v, (int, float)) and v > 0),
        "tokenize": Option("13a", "tokenizer (coco-caption uses the Java PTB tokenizer)",
                           choices=tuple(TOKENIZERS), short="tok"),
        "lowercase": Option(True, "lowercase before tokenizing", short="lc"),
        "document_frequency": Option("segments", "what df counts: distinct reference sets of the call "
                                     "(segments) or every scored row, as coco-caption (rows)",
                                     choices=("segments", "rows"), short="df"),
    }

    locality = "references"

    def reference_groups(self, ref_ptr, ref_ids) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct non-empty reference sets, each weighing 1 (``segments``) or its number of rows (``rows``)."""
        sizes = np.diff(ref_ptr)
        row_set, set_ptr, set_ids = reference_sets(ref_ptr, ref_ids)
        if self.params["document_frequency"] == "rows":
            weight = np.bincount(row_set[sizes > 0], minlength=len(set_ptr) - 1).astype(np.float64)
        else:
            weight = (np.diff(set_ptr) > 0).astype(np.float64)
        return set_ptr, set_ids, weight

    def count_references(self, analysis: NgramCounts, group_ptr, group_ids, group_weight) -> ReferenceCounts:
        """Document frequencies: ``df_k = sum_s w_s [n-gram k occurs in a reference of set s]``."""
        return count_reference_groups(analysis, group_ptr, group_ids, group_weight, presence=True)

    def ngram_weights_from(self, counts: ReferenceCounts) -> ReferenceIdf:
        return reference_idf(counts)

    def analyse(self, texts: Sequence[str]) -> NgramCounts:
        tokens = tokenize_all(texts, self.params["tokenize"], self.params["lowercase"])
        return NgramCounts(tokens, self.params["max_order"])

    def pair_scores(self, analysis: NgramCounts, left: np.ndarray, right: np.ndarray,
                    idfs: Sequence[np.ndarray]) -> np.ndarray:
        """CIDEr-D of text ``left[k]`` against the single reference ``right[k]``, mean over n (eqs. 4-5)."""
        n_texts = analysis.n_texts
        key, first, inverse = np.unique(left * np.int64(n_texts) + right, return_index=True,
                                        return_inverse=True)
        hyp, ref = left[first], right[first]
        lengths = analysis.lengths.astype(np.float64)
        delta = lengths[hyp] - lengths[ref]
        penalty = np.exp(-delta * delta / (2.0 * self.params["sigma"] ** 2))
        total = np.zeros(len(key))
        for matrix, idf in zip(analysis.matrices, idfs):
            vectors = tfidf(matrix, idf)
            norms = row_norms(vectors)
            h, r = vectors[hyp], vectors[ref]
            dot = np.asarray(h.minimum(r).multiply(r).sum(axis=1)).ravel()
            total += safe_divide(dot, norms[hyp] * norms[ref])
        return (total / self.params["max_order"] * penalty)[inverse.ravel()]

    def statistics(self, analysis: NgramCounts, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        rows = len(hyp_ids)
        sizes = np.diff(ref_ptr)
        ngram_weights = self.ngram_weights
        if ngram_weights is None:  # one call: the idf of its own reference sets
            ngram_weights = self.own_ngram_weights(analysis, ref_ptr, ref_ids)
        idfs = ngram_weights.of(analysis)
        stats = np.zeros((rows, 2))
        stats[:, 1] = 1.0
        if len(ref_ids):
            pair_row = np.repeat(np.arange(rows), sizes)
            per_pair = self.pair_scores(analysis, hyp_ids[pair_row], ref_ids, idfs)
            summed = np.bincount(pair_row, weights=per_pair, minlength=rows)
            stats[:, 0] = safe_divide(summed, sizes)
        return stats

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        return safe_divide(stats[..., 0], stats[..., 1])
