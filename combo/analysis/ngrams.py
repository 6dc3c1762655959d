"""Sparse n-gram count algebra shared by the n-gram metrics.

Each distinct text is counted once: :class:`NgramCounts` turns a list of
token sequences into one sparse matrix per order, ``C_n[t, g]`` = count of
n-gram ``g`` in text ``t``. Exact integer n-gram ids are built order by order
(an n-gram is the pair (its (n-1)-gram prefix id, its last token id)), so no
hashing and no collisions. Clipped matches between any hypothesis and any
reference set are then elementwise minima of sparse rows: scoring a text
against one reference, against all references of its segment, or all pairs
within a set of texts never recounts an n-gram.
"""

from __future__ import annotations

from itertools import chain
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse


class Vocabulary:
    """Maps symbols (tokens or characters) to consecutive integer ids."""

    def __init__(self) -> None:
        self.index: Dict[str, int] = {}

    def encode(self, sequences: Sequence[Sequence[str]]) -> Tuple[np.ndarray, np.ndarray]:
        """Flat id array and CSR offsets (``ptr[t]:ptr[t+1]`` is text ``t``)."""
        index = self.index
        symbols = list(chain.from_iterable(sequences))
        for s in sorted(set(symbols).difference(index)):  # sorted: ids do not depend on hash seeds
            index[s] = len(index)
        ptr = np.zeros(len(sequences) + 1, dtype=np.int64)
        np.cumsum([len(seq) for seq in sequences], out=ptr[1:])
        return np.fromiter(map(index.__getitem__, symbols), dtype=np.int64, count=len(symbols)), ptr

    def __len__(self) -> int:
        return len(self.index)


class NgramCounts:
    """Counts of all n-grams of orders ``1..max_order`` of each text.

    ``matrices[n - 1]`` is a CSR matrix (texts x distinct n-grams of order n).
    ``lengths[t]`` is the number of symbols of text ``t``.
    """

    def __init__(self, sequences: Sequence[Sequence[str]], max_order: int,
                 vocabulary: Optional[Vocabulary] = None):
        self.max_order = max_order
        self.vocabulary = vocabulary or Vocabulary()
        ids, ptr = self.vocabulary.encode(sequences)
        n_texts = len(sequences)
        self.lengths = np.diff(ptr)
        text_of = np.repeat(np.arange(n_texts, dtype=np.int64), self.lengths)
        end_of = np.repeat(ptr[1:], self.lengths)  # end offset of each position's text
        positions = np.arange(len(ids), dtype=np.int64)
        self.matrices: List[sparse.csr_matrix] = []
        self.ngram_ids: List[np.ndarray] = []  # per order: id of the n-gram starting at each position (-1: none)
        gram = ids.copy()
        n_grams = max(len(self.vocabulary), 1)
        for n in range(1, max_order + 1):
            valid = positions + n <= end_of
            if n > 1:
                nxt = np.zeros_like(ids)
                nxt[:-(n - 1) or None] = ids[n - 1:]
                key = gram * np.int64(len(self.vocabulary) + 1) + nxt
                key = np.where(valid, key, -1)
                uniq, inverse = np.unique(key[valid], return_inverse=True)
                gram = np.full(len(ids), -1, dtype=np.int64)
                gram[valid] = inverse
                n_grams = max(len(uniq), 1)
            self.ngram_ids.append(np.where(valid, gram, -1))
            rows = text_of[valid]
            cols = gram[valid]
            mat = sparse.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)),
                                    shape=(n_texts, n_grams))
            mat.sum_duplicates()
            self.matrices.append(mat)

    @property
    def n_texts(self) -> int:
        return len(self.lengths)

    def totals(self, order: int) -> np.ndarray:
        """Number of n-grams of ``order`` in each text: max(len - n + 1, 0)."""
        return np.maximum(self.lengths - order + 1, 0)


def reference_sets(ref_ptr: np.ndarray, ref_ids: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deduplicate the reference sets of rows.

    Rows whose references are the same texts (every system on one segment)
    share one set. Returns ``(row_set, set_ptr, set_ids)``: the set of each
    row, and the sets in CSR form.
    """
    ref_ptr = np.asarray(ref_ptr, dtype=np.int64)
    ref_ids = np.asarray(ref_ids, dtype=np.int64)
    sizes = np.diff(ref_ptr)
    row_set = np.empty(len(sizes), dtype=np.int64)
    # vectorised per set size (one sort each, no Python loop over rows: DSTC7's 6.3 million reference
    # pairs are rows of one reference); sets are numbered in order of their first row, as a dict would
    firsts, members, inverses, groups = [], [], [], []
    for k in np.unique(sizes):
        rows = np.flatnonzero(sizes == k)
        if k == 0:
            uniq, first, inv = np.zeros((1, 0), np.int64), np.zeros(1, np.int64), np.zeros(len(rows), np.int64)
        elif k == 1:
            flat, first, inv = np.unique(ref_ids[ref_ptr[rows]], return_index=True, return_inverse=True)
            uniq = flat[:, None]
        else:
            mat = ref_ids[ref_ptr[rows][:, None] + np.arange(k)]
            uniq, first, inv = np.unique(mat, axis=0, return_index=True, return_inverse=True)
        firsts.append(rows[first])
        members.append(uniq)
        inverses.append(inv.ravel())
        groups.append(rows)
    if not firsts:
        return row_set, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first_row = np.concatenate(firsts)
    order = np.argsort(first_row, kind="stable")
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order))
    offset = 0
    for rows, inv, uniq in zip(groups, inverses, members):
        row_set[rows] = number[offset + inv]
        offset += len(uniq)
    set_sizes = np.concatenate([np.full(len(u), u.shape[1], dtype=np.int64) for u in members])[order]
    set_ptr = np.concatenate([[0], np.cumsum(set_sizes)]).astype(np.int64)
    flat_sets = [row for u in members for row in u]  # one array per set, in the order of first_row
    set_ids = (np.concatenate([flat_sets[j] for j in order]) if len(order) else np.zeros(0)).astype(np.int64)
    return row_set, set_ptr, set_ids


def group_max(matrix: sparse.csr_matrix, ptr: np.ndarray, ids: np.ndarray) -> sparse.csr_matrix:
    """Row-wise maximum of ``matrix[ids[ptr[k]:ptr[k+1]]]`` for each group ``k`` (empty group: zeros)."""
    n_groups = len(ptr) - 1
    sizes = np.diff(ptr)
    if len(ids) == 0:
        return sparse.csr_matrix((n_groups, matrix.shape[1]))
    if np.all(sizes == 1):
        return matrix[ids]
    stacked = matrix[ids].tocoo()
    group_of_row = np.repeat(np.arange(n_groups, dtype=np.int64), sizes)
    g = group_of_row[stacked.row]
    order = np.lexsort((stacked.col, g))
    g, col, val = g[order], stacked.col[order], stacked.data[order]
    if len(g) == 0:
        return sparse.csr_matrix((n_groups, matrix.shape[1]))
    start = np.ones(len(g), dtype=bool)
    start[1:] = (g[1:] != g[:-1]) | (col[1:] != col[:-1])
    idx = np.flatnonzero(start)
    vmax = np.maximum.reduceat(val, idx)
    return sparse.csr_matrix((vmax, (g[idx], col[idx])), shape=(n_groups, matrix.shape[1]))


def clipped_matches(matrix: sparse.csr_matrix, hyp_ids: np.ndarray, ref_ptr: np.ndarray,
                    ref_ids: np.ndarray) -> np.ndarray:
    """Clipped n-gram matches of each row: ``sum_g min(c_hyp(g), max_r c_r(g))`` (Papineni 2002, eq. 1).

    Row ``k`` pairs text ``hyp_ids[k]`` with the reference texts
    ``ref_ids[ref_ptr[k]:ref_ptr[k+1]]``.
    """
    row_set, set_ptr, set_ids = reference_sets(ref_ptr, ref_ids)
    ref_max = group_max(matrix, set_ptr, set_ids)
    hyp = matrix[hyp_ids]
    return np.asarray(hyp.minimum(ref_max[row_set]).sum(axis=1)).ravel()


def pair_matches(matrix: sparse.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``sum_g min(c_left(g), c_right(g))`` for each pair of texts ``(left[k], right[k])``."""
    return np.asarray(matrix[left].minimum(matrix[right]).sum(axis=1)).ravel()
