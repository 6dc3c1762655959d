"""BLEU (Papineni et al. 2002) and ΔBLEU (Galley et al. 2015), with sacreBLEU's options.

Statistics per segment: ``[hyp_len, ref_len, matches_1..N, totals_1..N]``.
With reference weights, matches and totals follow ΔBLEU (Galley et al. 2015,
eq. 2): each n-gram match counts with the largest weight among the references
that contain it, and the denominator is ``max_j w_j * #g(h)``; the statistics
then end with the unweighted totals ``#n-grams(h)_1..N``, which put the
smoothing pseudo-counts in weighted units. All weights 1 gives BLEU exactly.

As the authors' implementation (Galley's sacreBLEU fork, ``corpus_bleu(...,
ref_weights=...)``), a negative weighted match count of an n-gram order is
counted as zero before smoothing, so that order is smoothed like any order
without a match.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
from scipy import sparse

from ...errors import InputError
from ...analysis.ngrams import SymbolSequences, reference_sets
from ...analysis.tokenize import TOKENIZERS, token_ids, tokenize_all
from ..base import Metric, Option, safe_divide
from ..registry import register

SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None, "coco": None}
#: coco-caption's BleuScorer adds these to every match count and every n-gram total (and reference length).
COCO_TINY, COCO_SMALL = 1e-15, 1e-9
_LOG_ZERO = -9999999999.0  # log of a zero precision, as mteval and sacreBLEU


def closest_ref_lengths(hyp_len: np.ndarray, ref_lens: np.ndarray, ref_ptr: np.ndarray) -> np.ndarray:
    """Length of the reference closest in length to each hypothesis, the shorter on ties (Papineni 2002, §2.2.2)."""
    n_rows = len(ref_ptr) - 1
    sizes = np.diff(ref_ptr)
    out = np.zeros(n_rows, dtype=np.float64)
    if len(ref_lens) == 0:
        return out
    row = np.repeat(np.arange(n_rows), sizes)
    diff = np.abs(ref_lens - hyp_len[row])
    order = np.lexsort((ref_lens, diff, row))  # by row, then |diff|, then shorter
    first = np.ones(len(order), dtype=bool)
    first[1:] = row[order][1:] != row[order][:-1]
    chosen = order[first]
    out[row[chosen]] = ref_lens[chosen]
    return out


def weighted_matches(matrix: sparse.csr_matrix, hyp_ids: np.ndarray, ref_ptr: np.ndarray,
                     ref_ids: np.ndarray, ref_weights: np.ndarray) -> np.ndarray:
    """ΔBLEU numerator of each row: ``sum_g max_{j: g in r_j} w_j min(#g(h), #g(r_j))`` (Galley et al. 2015, eq. 2)."""
    sizes = np.diff(ref_ptr)
    pair_row = np.repeat(np.arange(len(hyp_ids)), sizes)
    mins = matrix[hyp_ids[pair_row]].minimum(matrix[ref_ids]).tocoo()
    vals = mins.data * ref_weights[mins.row]
    row = pair_row[mins.row]
    if len(vals) == 0:
        return np.zeros(len(hyp_ids))
    order = np.lexsort((mins.col, row))
    row, col, vals = row[order], mins.col[order], vals[order]
    start = np.ones(len(row), dtype=bool)
    start[1:] = (row[1:] != row[:-1]) | (col[1:] != col[:-1])
    idx = np.flatnonzero(start)
    best = np.maximum.reduceat(vals, idx)
    return np.bincount(row[idx], weights=best, minlength=len(hyp_ids))


def bleu_from_statistics(stats: np.ndarray, max_order: int, smooth: str, smooth_value: Optional[float],
                         effective_order: bool) -> np.ndarray:
    """BLEU of statistics rows, vectorised; the rules of mteval-v13a and sacreBLEU's ``compute_bleu``.

    Smoothing methods are those of Chen & Cherry (2014): ``floor`` (method 1),
    ``add-k`` (method 2, orders > 1), ``exp`` (method 3, NIST geometric).

    ΔBLEU statistics (``2 + 3N`` columns, Galley et al. 2015) have their
    negative weighted match counts set to zero, and each pseudo-count
    (the 1 of ``exp``, the floor, the k of ``add-k``) is multiplied by the
    order's weight scale ``totals_n / unweighted_totals_n``. That scale is 1
    whenever every segment's largest reference weight is 1, which keeps the
    authors' values, and it keeps every smoothed precision, hence the score,
    in [0, 1] for any weights in [-1, 1].
    """
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    if smooth == "coco":
        return coco_bleu_from_statistics(stats, max_order)
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct = stats[:, 2:2 + max_order].copy()
    total = stats[:, 2 + max_order:2 + 2 * max_order].copy()
    scale = np.ones_like(total)  # pseudo-count units per order
    if stats.shape[1] == 2 + 3 * max_order:  # ΔBLEU
        np.maximum(correct, 0.0, out=correct)
        unweighted = stats[:, 2 + 2 * max_order:2 + 3 * max_order]
        scale = safe_divide(total, unweighted, empty=1.0)  # no n-gram: add-k's order stays alive as in BLEU
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0), 1.0)
    any_correct = correct.sum(axis=1) > 0
    if smooth == "add-k":
        correct[:, 1:] += smooth_value * scale[:, 1:]
        total[:, 1:] += smooth_value * scale[:, 1:]
    alive = np.ones(len(stats), dtype=bool)  # no order with zero total seen yet
    eff = np.full(len(stats), max_order, dtype=np.float64)
    if effective_order:
        eff[:] = 0
    zero_run = np.zeros(len(stats))  # number of zero-match orders so far (exp smoothing)
    logsum = np.zeros(len(stats))
    for n in range(max_order):
        alive &= total[:, n] > 0
        if effective_order:
            eff = np.where(alive, n + 1, eff)
        t = np.where(total[:, n] > 0, total[:, n], 1.0)
        c = correct[:, n]
        zero = alive & (c == 0)
        with np.errstate(divide="ignore"):
            if smooth == "exp":
                zero_run = zero_run + zero
                p_zero = scale[:, n] / (2.0 ** zero_run * t)
            elif smooth == "floor":
                p_zero = smooth_value * scale[:, n] / t
            else:
                p_zero = np.zeros(len(stats))
            p = np.where(c > 0, c / t, p_zero)
            p = np.where(alive, p, 0.0)
            logp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), _LOG_ZERO)
        if effective_order:
            logp = np.where(alive, logp, 0.0)
        logsum += logp
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        score = bp * np.exp(logsum / np.where(eff > 0, eff, 1.0))
    score = np.where(any_correct & (eff > 0), score, 0.0)
    return score


def coco_bleu_from_statistics(stats: np.ndarray, max_order: int) -> np.ndarray:
    """BLEU as coco-caption's ``BleuScorer.compute_score`` (``option="closest"``) computes it, operation for
    operation: ``prod_n (m_n + 1e-15) / (t_n + 1e-9)`` to the power ``1/N``, times ``exp(1 - 1/r)`` when
    ``r = (c + 1e-15) / (l + 1e-9) < 1``.

    Every order counts, also one the hypothesis is too short for (its precision is then 1e-6), and a hypothesis
    without any match scores a tiny positive number, not 0; the epsilons make a longer hypothesis win a tie of
    equal precisions by about 1e-10 (relative), which decides some of the MUTT authors' trials. At corpus level
    the same formula reads the summed statistics, as coco's corpus score. ΔBLEU statistics are read with their
    negative counts clamped, the epsilons unweighted.
    """
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct = np.maximum(stats[:, 2:2 + max_order], 0.0)
    total = stats[:, 2 + max_order:2 + 2 * max_order]
    product = np.ones(len(stats))
    for n in range(max_order):
        product = product * ((correct[:, n] + COCO_TINY) / (total[:, n] + COCO_SMALL))
    ratio = (sys_len + COCO_TINY) / (ref_len + COCO_SMALL)
    # Python's float power and math.exp, as coco-caption: numpy's vectorised ones differ in the last bit
    root = 1.0 / max_order
    return np.fromiter((p ** root * (math.exp(1.0 - 1.0 / r) if r < 1.0 else 1.0)
                        for p, r in zip(product.tolist(), ratio.tolist())), dtype=np.float64, count=len(stats))


@register("bleu")
class BLEU(Metric):
    """BLEU with sacreBLEU's options; ΔBLEU when reference weights are given.

    Corpus BLEU sums statistics over segments before dividing (Papineni et al.
    2002, eq. in §2.3); segment scores use ``effective_order`` (as sacreBLEU's
    ``sentence_bleu``). Scores are on a 0-1 scale (sacreBLEU's / 100).
    """

    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = True
    citation = "Papineni et al. 2002; ΔBLEU: Galley et al. 2015, eq. 2"
    implementation_version = "2"  # 2: ΔBLEU clamps negative counts and smooths in weighted units
    options = {
        "max_order": Option(4, "largest n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9, short="n"),
        "smooth": Option("exp", "smoothing method (coco: coco-caption's epsilons; every order counts, "
                                "effective_order does not apply)", choices=tuple(SMOOTH_DEFAULTS)),
        "smooth_value": Option(None, "value for floor / add-k (default 0.1 / 1)", type="float",
                               check=lambda v: v is None or v >= 0, short="sv"),
        "tokenize": Option("13a", "tokenizer", choices=tuple(TOKENIZERS), short="tok"),
        "lowercase": Option(False, "lowercase before tokenizing", short="lc"),
        "effective_order": Option(True, "segment level: average only orders the hypothesis has", short="eff"),
    }

    def tokens(self, texts: Sequence[str]):
        return tokenize_all([t.rstrip() for t in texts], self.params["tokenize"], self.params["lowercase"])

    def analyse(self, texts: Sequence[str]) -> SymbolSequences:
        ids, ptr, n_tokens = token_ids([t.rstrip() for t in texts], self.params["tokenize"], self.params["lowercase"])
        return SymbolSequences(ids, ptr, n_tokens, self.params["max_order"])

    def check_reference_weights(self, testbed) -> None:
        """ΔBLEU (Galley et al. 2015) divides by each segment's best reference weight: a segment whose references
        all weigh 0 or less is refused, named by its id, before any scoring."""
        bad = [seg.id for seg in testbed.segments if seg.weights is not None and not any(w > 0 for w in seg.weights)]
        if bad:
            raise InputError(f"ΔBLEU: segment {bad[0]!r} of test bed {testbed.name!r} has no reference with a "
                             f"positive weight ({len(bad)} of {len(testbed.segments)} segments): its denominator "
                             "would be zero", fix="give every segment at least one reference with weight > 0, or "
                                                  "score BLEU on a copy of the test bed without weights")

    def statistics(self, analysis: SymbolSequences, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        n = self.params["max_order"]
        rows = len(hyp_ids)
        stats = np.zeros((rows, 2 + (2 if ref_weights is None else 3) * n))
        lengths = analysis.lengths.astype(np.float64)
        stats[:, 0] = lengths[hyp_ids]
        stats[:, 1] = closest_ref_lengths(stats[:, 0], lengths[ref_ids], ref_ptr)
        if ref_weights is not None:
            ref_weights = np.asarray(ref_weights, dtype=np.float64)
            outside = np.flatnonzero(~((ref_weights >= -1.0) & (ref_weights <= 1.0)))
            if len(outside):
                row = int(np.searchsorted(ref_ptr, outside[0], side="right") - 1)
                raise InputError(f"ΔBLEU: segment {row} has reference weight {float(ref_weights[outside[0]])!r} "
                                 f"outside [-1, 1] ({len(outside)} such weights)",
                                 fix="use weights between -1 and 1 (Galley et al. 2015 rate references on [-1, +1])")
            sizes = np.diff(ref_ptr)
            best_w = np.full(rows, -np.inf)
            np.maximum.at(best_w, np.repeat(np.arange(rows), sizes), ref_weights)
            bad = np.flatnonzero(~(best_w > 0))
            if len(bad):
                raise InputError(f"ΔBLEU: hypothesis {int(bad[0])} (0-based, in the order given) has no reference "
                                 f"with a positive weight ({len(bad)} such hypotheses): its denominator would be zero",
                                 fix="give every segment at least one reference with weight > 0")
        if ref_weights is None:  # clipped matches (Papineni et al. 2002, eq. 1), every order at once
            stats[:, 2:2 + n] = analysis.matches(np.asarray(hyp_ids, dtype=np.int64), *reference_sets(ref_ptr, ref_ids))
        for k in range(n):
            total = analysis.totals(k + 1)[hyp_ids].astype(np.float64)
            if ref_weights is None:
                stats[:, 2 + n + k] = total
            else:
                stats[:, 2 + k] = weighted_matches(analysis.counts().matrices[k], hyp_ids, ref_ptr, ref_ids,
                                                   ref_weights)
                stats[:, 2 + n + k] = best_w * total
                stats[:, 2 + 2 * n + k] = total
        return stats

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        p = self.params
        out = bleu_from_statistics(stats, p["max_order"], p["smooth"], p["smooth_value"],
                                   effective_order=segment_level and p["effective_order"])
        return out if np.ndim(stats) > 1 else out[0]
