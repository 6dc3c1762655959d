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
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

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
        self._parts: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}

    @property
    def n_texts(self) -> int:
        return len(self.lengths)

    def totals(self, order: int) -> np.ndarray:
        """Number of n-grams of ``order`` in each text: max(len - n + 1, 0)."""
        return np.maximum(self.lengths - order + 1, 0)

    def parts(self, order: int) -> Tuple[np.ndarray, np.ndarray]:
        """Per n-gram id of ``order`` (at least 2): the id of its (n-1)-gram prefix and of its last token
        (-1 for a column no n-gram uses); computed once and kept with the analysis."""
        if order not in self._parts:
            ids = self.ngram_ids[order - 1]
            positions = np.flatnonzero(ids >= 0)
            prefix = np.full(self.matrices[order - 1].shape[1], -1, dtype=np.int64)
            last = np.full(len(prefix), -1, dtype=np.int64)
            prefix[ids[positions]] = self.ngram_ids[order - 2][positions]
            last[ids[positions]] = self.ngram_ids[0][positions + order - 1]
            self._parts[order] = prefix, last
        return self._parts[order]


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


class NgramTable:
    """A set of n-grams of orders ``1..N`` numbered by their content, so that analyses of different texts
    (the chunks of one test bed) can look them up.

    Table ids follow the lexicographic order of the n-grams' tokens, as the ids of an :class:`NgramCounts`
    of any texts do, so values kept per table id (NIST's information weights, CIDEr's document
    frequencies) are computed, and summed over a text, in an order fixed by content.
    """

    def __init__(self, tokens: List[str], keys: List[np.ndarray]):
        self.tokens = tokens
        self.keys = keys  # per order >= 2: prefix table id * (len(tokens) + 1) + last token's, ascending
        self._index: Optional[Dict[str, int]] = None

    def __getstate__(self) -> dict:  # sent to workers without the token index, which is rebuilt there
        return {"tokens": self.tokens, "keys": self.keys, "_index": None}

    @property
    def index(self) -> Dict[str, int]:
        """The table id of each token."""
        if self._index is None:
            self._index = {token: i for i, token in enumerate(self.tokens)}
        return self._index

    @property
    def max_order(self) -> int:
        return len(self.keys) + 1

    def size(self, order: int) -> int:
        return len(self.tokens) if order == 1 else len(self.keys[order - 2])

    def prefixes(self, order: int) -> np.ndarray:
        """Table id of the (n-1)-gram prefix of each n-gram of ``order`` (at least 2)."""
        return self.keys[order - 2] // (len(self.tokens) + 1)

    def last_tokens(self, order: int) -> np.ndarray:
        """Table id of the last token of each n-gram of ``order`` (at least 2)."""
        return self.keys[order - 2] % (len(self.tokens) + 1)

    @classmethod
    def of(cls, analysis: NgramCounts, keep: Sequence[np.ndarray]) -> Tuple["NgramTable", List[np.ndarray]]:
        """The table of the n-grams ``keep[n-1]`` (a mask over the ids of order n) of ``analysis``, and per
        order the analysis id of each table id. The kept n-grams must hold their prefixes and tokens
        (as the n-grams of any set of texts do)."""
        words = list(analysis.vocabulary.index)  # the token of each id
        kept = np.flatnonzero(np.asarray(keep[0], dtype=bool)[:len(words)])
        kept = kept[np.argsort(np.asarray([words[i] for i in kept.tolist()], dtype=object), kind="stable")]
        tokens = [words[i] for i in kept.tolist()]
        width = np.int64(len(tokens) + 1)
        table_of = [np.full(analysis.matrices[0].shape[1], -1, dtype=np.int64)]
        table_of[0][kept] = np.arange(len(kept))
        local_of, keys = [kept], []
        for n in range(2, len(keep) + 1):
            prefix, last = analysis.parts(n)
            kept = np.flatnonzero(keep[n - 1])
            key = table_of[n - 2][prefix[kept]] * width + table_of[0][last[kept]]
            if len(key) and (table_of[n - 2][prefix[kept]].min() < 0 or table_of[0][last[kept]].min() < 0):
                raise ValueError("the kept n-grams must hold their prefixes and tokens")
            order = np.argsort(key, kind="stable")
            keys.append(key[order])
            local_of.append(kept[order])
            table_of.append(np.full(len(prefix), -1, dtype=np.int64))
            table_of[-1][kept[order]] = np.arange(len(kept))
        return cls(tokens, keys), local_of

    def values_of(self, analysis: NgramCounts, values: Sequence[np.ndarray], absent: float) -> List[np.ndarray]:
        """Per order, the value (``values[n-1][table id]``) of each n-gram id of ``analysis``; ``absent`` for
        n-grams not in the table."""
        return [np.where(ids >= 0, v[np.maximum(ids, 0)] if len(v) else absent, absent)
                for ids, v in zip(self.ids_of(analysis), values)]

    def ids_of(self, analysis: NgramCounts) -> List[np.ndarray]:
        """Per order, the table id of each n-gram id of ``analysis`` (-1: not in the table)."""
        index = self.index
        words = analysis.vocabulary.index
        tokens = np.fromiter((index.get(w, -1) for w in words), dtype=np.int64, count=len(words))
        out = [np.full(analysis.matrices[0].shape[1], -1, dtype=np.int64)]
        out[0][:len(tokens)] = tokens
        width = np.int64(len(self.tokens) + 1)
        for n in range(2, min(analysis.max_order, self.max_order) + 1):
            prefix, last = analysis.parts(n)
            head = np.where(prefix >= 0, out[n - 2][np.maximum(prefix, 0)], -1)
            tail = np.where(last >= 0, tokens[np.maximum(last, 0)] if len(tokens) else -1, -1)
            key = head * width + tail
            table = self.keys[n - 2]
            at = np.minimum(np.searchsorted(table, key), max(len(table) - 1, 0))
            found = (head >= 0) & (tail >= 0) & (len(table) > 0)
            if len(table):
                found &= table[at] == key
            out.append(np.where(found, at, -1))
        return out


class ReferenceCounts(NamedTuple):
    """Weighted counts of the n-grams of groups of reference texts, keyed by content (``table``); counts of
    disjoint groups add up (:func:`merge_reference_counts`), so they can be made a slice of groups at a time.

    ``counts[n-1][j]`` is ``sum_g w_g v_g(j)`` for n-gram ``j`` of ``table``, where ``v_g`` is the count of
    the n-gram in group ``g`` (its largest count in one text of the group) or, with ``presence``, 1 if it
    occurs there; ``words`` is ``sum_g w_g`` times the words of the group's texts, ``weight`` is ``sum_g w_g``.
    """

    table: NgramTable
    counts: List[np.ndarray]
    words: float
    weight: float

    @property
    def size(self) -> int:
        """The number of n-grams counted, all orders."""
        return sum(len(c) for c in self.counts)

    @staticmethod
    def merge(parts: Sequence["ReferenceCounts"]) -> "ReferenceCounts":
        return merge_reference_counts(parts)


def count_reference_groups(analysis: NgramCounts, group_ptr: np.ndarray, group_ids: np.ndarray,
                           group_weight: np.ndarray, presence: bool = False) -> ReferenceCounts:
    """The :class:`ReferenceCounts` of groups ``group_ids[group_ptr[g]:group_ptr[g+1]]`` of the texts of
    ``analysis``, group ``g`` weighing ``group_weight[g]``."""
    weight = np.asarray(group_weight, dtype=np.float64)
    counts = []
    for matrix in analysis.matrices:
        per_group = group_max(matrix, group_ptr, group_ids).tocsr()
        if presence:
            per_group.data[:] = 1.0
        counts.append(np.asarray(per_group.T @ weight).ravel())
    table, local_of = NgramTable.of(analysis, [c > 0 for c in counts])
    lengths = np.bincount(np.repeat(np.arange(len(weight)), np.diff(group_ptr)),
                          weights=analysis.lengths[group_ids], minlength=len(weight))
    return ReferenceCounts(table, [c[local] for c, local in zip(counts, local_of)], float(weight @ lengths),
                           float(weight.sum()))


def merge_reference_counts(parts: Sequence[ReferenceCounts]) -> ReferenceCounts:
    """The counts of the union of the parts' groups: n-grams matched by content, counts added (integers,
    so exactly, in any order of the parts)."""
    if len(parts) == 1:
        return parts[0]
    tokens = sorted(set().union(*(p.table.tokens for p in parts)))
    index = {token: i for i, token in enumerate(tokens)}
    width = np.int64(len(tokens) + 1)
    token_maps = [np.fromiter((index[t] for t in p.table.tokens), dtype=np.int64, count=len(p.table.tokens))
                  for p in parts]
    counts = [np.zeros(len(tokens))]
    for p, tmap in zip(parts, token_maps):
        counts[0][tmap] += p.counts[0]  # a part's tokens are distinct
    keys, maps = [], token_maps
    for n in range(2, parts[0].table.max_order + 1):
        merged = np.concatenate([prev[p.table.prefixes(n)] * width + tmap[p.table.last_tokens(n)]
                                 for p, prev, tmap in zip(parts, maps, token_maps)])
        unique, inverse = np.unique(merged, return_inverse=True)
        inverse = inverse.ravel()
        counts.append(np.bincount(inverse, weights=np.concatenate([p.counts[n - 1] for p in parts]),
                                  minlength=len(unique)))
        keys.append(unique)
        maps = np.split(inverse, np.cumsum([p.table.size(n) for p in parts])[:-1])  # each part's n-grams, merged
    return ReferenceCounts(NgramTable(tokens, keys), counts, float(sum(p.words for p in parts)),
                           float(sum(p.weight for p in parts)))
