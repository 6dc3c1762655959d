"""GTM, the General Text Matcher (Turian, Shen & Melamed 2003).

The bitext grid of a hypothesis and a reference has a hit in cell (i, j)
when hypothesis word i equals reference word j. A matching is a set of hits
sharing no row and no column; a run is a maximal diagonal of matched cells
(words consecutive, in the same order, in both texts). Its size is

    size(M) = (sum over runs r of M of |r|^e)^(1/e)          (Turian et al. 2003, size of a matching)

and MMS is the size of the maximum matching. Precision = MMS / |hyp|,
recall = MMS / |ref|, GTM = F1 = 2PR / (P + R).

* e = 1: MMS is the maximum bipartite matching of equal words, which is the
  clipped unigram count ``sum_w min(c_hyp(w), c_ref(w))``, computed exactly.
* e > 1: finding MMS is NP-hard; we use the paper's greedy approximation:
  repeatedly take the longest run of hits whose rows and columns are all
  still free (ties: the earliest in the hypothesis, then in the reference)
  until no hit is left.

Statistics per row: ``[MMS, |hyp|, |ref|]``. The corpus score is the F1 of
P = sum MMS / sum |hyp| and R = sum MMS / sum |ref|. For e = 1 this is the
paper's document grid exactly (the maximum matching of a block-diagonal grid
is the sum of the blocks'). For e > 1 summing MMS keeps an identical
document at 1; pooling ``|r|^e`` of all segments under one e-th root would
not (the WMT12 reference against itself would score 0.021 at e = 2),
and runs that cross segment boundaries, as in one whole-document grid,
cannot be summed from segment statistics. With several references a
segment keeps the statistics of the reference that gives the best segment
F (as Asiya does for metrics without a multi-reference form); ties go to
the first reference.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

from ...analysis.ngrams import NgramCounts, pair_matches
from ...analysis.tokenize import TOKENIZERS, tokenize_all
from ..base import Metric, Option, safe_divide
from ..registry import register


def grid_hits(ids: np.ndarray, ptr: np.ndarray, left: np.ndarray,
              right: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hits of the bitext grids of all pairs ``(left[p], right[p])``: arrays ``(p, i, j)``.

    ``ids[ptr[t]:ptr[t+1]]`` are the word ids of text ``t``; a hit is a cell
    where hypothesis word ``i`` equals reference word ``j``.
    """
    lengths = np.diff(ptr)
    n_symbols = np.int64(ids.max() + 1 if len(ids) else 1)

    def positions(texts: np.ndarray):
        size = lengths[texts]
        pair = np.repeat(np.arange(len(texts), dtype=np.int64), size)
        offset = np.arange(int(size.sum()), dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
        return pair, offset, pair * n_symbols + ids[ptr[texts][pair] + offset]

    h_pair, h_pos, h_key = positions(left)
    _, r_pos, r_key = positions(right)
    order = np.argsort(r_key, kind="stable")
    r_key, r_pos = r_key[order], r_pos[order]
    lo = np.searchsorted(r_key, h_key, side="left")
    count = np.searchsorted(r_key, h_key, side="right") - lo
    within = np.arange(int(count.sum()), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    return np.repeat(h_pair, count), np.repeat(h_pos, count), r_pos[np.repeat(lo, count) + within]


def _compact(keys: np.ndarray, size: int) -> Tuple[np.ndarray, int]:
    """Keys as indices into an array of ``size`` when that is small, else renumbered 0..k-1."""
    if size <= 4 * len(keys) + 4096:
        return keys, size
    unique, inverse = np.unique(keys, return_inverse=True)
    return inverse.ravel(), len(unique)


def greedy_run_sums(ids: np.ndarray, ptr: np.ndarray, left: np.ndarray, right: np.ndarray,
                    exponent: float) -> np.ndarray:
    """``sum |r|^e`` over the runs of the greedy matching of each pair (Turian et al. 2003).

    The greedy picks, in each grid, the longest run of hits whose rows and
    columns are free (ties: smallest hypothesis position, then reference
    position), removes the hits sharing its rows and columns, and repeats.
    All grids advance together, one pick per grid per round; a run that
    shares no row or column with any other remaining hit is taken at once,
    as the greedy would take it whole sooner or later.
    """
    n_pairs = len(left)
    total = np.zeros(n_pairs)
    pair, i, j = grid_hits(ids, ptr, left, right)
    order = np.lexsort((i, i - j, pair))  # by grid, diagonal, then position along it
    pair, i, j = pair[order], i[order], j[order]
    while len(pair):
        n = len(pair)
        width = np.int64(max(int(i.max()), int(j.max())) + 1)
        diag = i - j
        start = np.ones(n, dtype=bool)
        start[1:] = (pair[1:] != pair[:-1]) | (diag[1:] != diag[:-1]) | (i[1:] != i[:-1] + 1)
        run = np.cumsum(start) - 1
        first = np.flatnonzero(start)
        length = np.diff(np.append(first, n))
        new_grid = np.ones(n, dtype=bool)
        new_grid[1:] = pair[1:] != pair[:-1]
        grid = np.cumsum(new_grid) - 1  # compact grid index of each hit
        n_grids = int(grid[-1]) + 1
        row_key, n_rows = _compact(grid * width + i, n_grids * width)
        col_key, n_cols = _compact(grid * width + j, n_grids * width)
        row_count = np.bincount(row_key, minlength=n_rows)
        col_count = np.bincount(col_key, minlength=n_cols)
        clash = (row_count[row_key] > 1) | (col_count[col_key] > 1)
        run_clashes = np.bincount(run, weights=clash, minlength=len(first)) > 0
        run_pair = pair[first]
        # runs that share nothing with other hits: the greedy takes each whole
        free = ~run_clashes
        np.add.at(total, run_pair[free], length[free].astype(np.float64) ** exponent)
        # one greedy pick per grid among the clashing runs
        cand = np.flatnonzero(run_clashes)
        keep = np.zeros(n, dtype=bool)
        if len(cand):
            by = np.lexsort((j[first[cand]], i[first[cand]], -length[cand], run_pair[cand]))
            cand = cand[by]
            best = np.ones(len(cand), dtype=bool)
            best[1:] = run_pair[cand][1:] != run_pair[cand][:-1]
            picked = cand[best]
            np.add.at(total, run_pair[picked], length[picked].astype(np.float64) ** exponent)
            chosen = np.zeros(len(first), dtype=bool)
            chosen[picked] = True
            chosen_hit = chosen[run]
            used_row = np.zeros(n_rows, dtype=bool)
            used_col = np.zeros(n_cols, dtype=bool)
            used_row[row_key[chosen_hit]] = True
            used_col[col_key[chosen_hit]] = True
            keep = run_clashes[run] & ~used_row[row_key] & ~used_col[col_key]
        pair, i, j = pair[keep], i[keep], j[keep]
    return total


def gtm_f(stats: np.ndarray) -> np.ndarray:
    """F1 of precision MMS/|hyp| and recall MMS/|ref| from ``[MMS, |hyp|, |ref|]`` rows."""
    stats = np.asarray(stats, dtype=np.float64)
    mms = stats[..., 0]
    precision = safe_divide(mms, stats[..., 1])
    recall = safe_divide(mms, stats[..., 2])
    return safe_divide(2.0 * precision * recall, precision + recall)


@register("gtm")
class GTM(Metric):
    """GTM-e (Turian, Shen & Melamed 2003): F1 of MMS-based precision and recall.

    e = 1 is exact (clipped unigram matches); e = 2, 3 use the paper's greedy
    approximation of the maximum matching. Empty hypothesis or reference: 0.
    """

    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = True
    citation = ("Turian, Shen & Melamed 2003 (MT Summit IX): size(M) = (sum_r |r|^e)^(1/e), "
                "P = MMS/|hyp|, R = MMS/|ref|, F1")
    options = {
        "e": Option(1, "run-length exponent: 1 rewards matched words, 2 and 3 reward longer runs",
                    choices=(1, 2, 3)),
        "tokenize": Option("13a", "tokenizer", choices=tuple(TOKENIZERS), short="tok"),
        "lowercase": Option(False, "lowercase before tokenizing", short="lc"),
    }

    def analyse(self, texts: Sequence[str]) -> NgramCounts:
        tokens = tokenize_all([t.rstrip() for t in texts], self.params["tokenize"], self.params["lowercase"])
        return NgramCounts(tokens, 1)

    def pair_statistics(self, analysis: NgramCounts, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """``[MMS, |hyp|, |ref|]`` of text ``left[k]`` against the single reference ``right[k]``."""
        e = self.params["e"]
        n_texts = analysis.n_texts
        _, first, inverse = np.unique(left * np.int64(n_texts) + right, return_index=True,
                                      return_inverse=True)
        hyp, ref = left[first], right[first]
        if e == 1:
            runs = pair_matches(analysis.matrices[0], hyp, ref)
        else:
            ptr = np.concatenate(([0], np.cumsum(analysis.lengths)))
            runs = greedy_run_sums(analysis.ngram_ids[0], ptr, hyp, ref, float(e)) ** (1.0 / e)
        lengths = analysis.lengths.astype(np.float64)
        out = np.stack([runs, lengths[hyp], lengths[ref]], axis=1)
        return out[inverse.ravel()]

    def statistics(self, analysis: NgramCounts, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        rows = len(hyp_ids)
        sizes = np.diff(ref_ptr)
        stats = np.zeros((rows, 3))
        stats[:, 1] = analysis.lengths[hyp_ids]
        if len(ref_ids) == 0:
            return stats
        pair_row = np.repeat(np.arange(rows), sizes)
        pairs = self.pair_statistics(analysis, hyp_ids[pair_row], ref_ids)
        f = gtm_f(pairs)
        order = np.lexsort((np.arange(len(f)), -f, pair_row))  # best F first, then the first reference
        first = np.ones(len(order), dtype=bool)
        first[1:] = pair_row[order][1:] != pair_row[order][:-1]
        best = order[first]
        stats[pair_row[best]] = pairs[best]
        return stats

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        return gtm_f(stats)
