"""Sparse n-gram count algebra shared by the n-gram metrics.

Each distinct text is counted once: :class:`NgramCounts` turns a list of
token sequences into one sparse matrix per order, ``C_n[t, g]`` = count of
n-gram ``g`` in text ``t``. Exact integer n-gram ids are built order by order
(an n-gram is the pair (its (n-1)-gram prefix id, its last token id)), so no
hashing and no collisions. Clipped matches between any hypothesis and any
reference set are then elementwise minima of sparse rows: scoring a text
against one reference, against all references of its segment, or all pairs
within a set of texts never recounts an n-gram.

:class:`CharacterNgramCounts` is the character-level variant chrF counts with: n-gram ids are integer codes,
so each order costs one integer sort.
"""

from __future__ import annotations

from itertools import chain
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ..errors import InputError


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
        self._count(ids, ptr, len(self.vocabulary))

    @classmethod
    def of_ids(cls, ids: np.ndarray, ptr: np.ndarray, n_symbols: int, max_order: int) -> "NgramCounts":
        """The counts of texts given as symbol ids, ``ids[ptr[t]:ptr[t+1]]`` each below ``n_symbols`` (the
        ``vocabulary`` stays empty: the ids are the caller's)."""
        counts = cls.__new__(cls)
        counts.max_order = max_order
        counts.vocabulary = Vocabulary()
        counts._count(np.asarray(ids, dtype=np.int64), np.asarray(ptr, dtype=np.int64), n_symbols)
        return counts

    def _count(self, ids: np.ndarray, ptr: np.ndarray, n_symbols: int) -> None:
        max_order = self.max_order
        n_texts = len(ptr) - 1
        self.lengths = np.diff(ptr)
        text_of = np.repeat(np.arange(n_texts, dtype=np.int64), self.lengths)
        end_of = np.repeat(ptr[1:], self.lengths)  # end offset of each position's text
        positions = np.arange(len(ids), dtype=np.int64)
        self.matrices: List[sparse.csr_matrix] = []
        self.ngram_ids: List[np.ndarray] = []  # per order: id of the n-gram starting at each position (-1: none)
        gram = ids.copy()
        n_grams = max(n_symbols, 1)
        for n in range(1, max_order + 1):
            valid = positions + n <= end_of
            if n > 1:
                nxt = np.zeros_like(ids)
                nxt[:-(n - 1) or None] = ids[n - 1:]
                key = gram * np.int64(n_symbols + 1) + nxt
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


def smallest_uint(top: int):
    """The smallest unsigned integer type holding ``0..top``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.uint64


class SymbolSequences:
    """Texts as sequences of integer symbols (characters or tokens), for clipped n-gram matches without
    per-text count matrices (:meth:`matches`).

    ``symbols[ptr[t]:ptr[t+1]]`` are the symbols of text ``t``, each in ``[0, alphabet)``, stored in the
    smallest unsigned type that holds them (2 bytes per symbol for most alphabets).
    """

    def __init__(self, symbols: np.ndarray, ptr: np.ndarray, alphabet: int, max_order: int):
        self.alphabet = max(int(alphabet), 1)
        self.symbols = np.asarray(symbols).astype(smallest_uint(self.alphabet - 1), copy=False)
        self.ptr = np.asarray(ptr, dtype=np.int64)
        self.lengths = np.diff(self.ptr)
        self.max_order = max_order
        self._counts: Optional[NgramCounts] = None

    def counts(self) -> NgramCounts:
        """The :class:`NgramCounts` of these texts (count matrices), built on first use and kept."""
        if self._counts is None:
            self._counts = NgramCounts.of_ids(self.symbols.astype(np.int64), self.ptr, self.alphabet, self.max_order)
        return self._counts

    @classmethod
    def of_sequences(cls, sequences: Sequence[Sequence[str]], max_order: int) -> "SymbolSequences":
        """Sequences of strings (tokens), numbered by a :class:`Vocabulary`."""
        vocabulary = Vocabulary()
        ids, ptr = vocabulary.encode(sequences)
        return cls(ids, ptr, len(vocabulary), max_order)

    @property
    def n_texts(self) -> int:
        return len(self.lengths)

    def totals(self, order: int) -> np.ndarray:
        """Number of n-grams of ``order`` in each text: max(len - n + 1, 0)."""
        return np.maximum(self.lengths - order + 1, 0)

    def matches(self, hyp: np.ndarray, row_set: np.ndarray, set_ptr: np.ndarray, set_ids: np.ndarray,
                orders: Optional[int] = None) -> np.ndarray:
        """Clipped matches of each row against its reference set, shape (rows, orders): see :func:`clipped_counts`."""
        return clipped_counts(self.symbols, self.ptr, self.alphabet, orders or self.max_order, hyp, row_set,
                              set_ptr, set_ids)


#: Symbols per block of :func:`clipped_counts` (its arrays hold a few int64 per symbol of a block).
MATCH_BLOCK = 1 << 15


def clipped_counts(symbols: np.ndarray, ptr: np.ndarray, alphabet: int, max_order: int, hyp: np.ndarray,
                   row_set: np.ndarray, set_ptr: np.ndarray, set_ids: np.ndarray,
                   block: Optional[int] = None) -> np.ndarray:
    """Clipped n-gram matches of orders ``1..max_order``: ``out[k, n-1] = sum_g min(c_h(g), max_r c_r(g))`` over the
    n-grams ``g`` of order n, ``h = hyp[k]`` and ``r`` the texts of set ``row_set[k]``
    (``set_ids[set_ptr[s]:set_ptr[s+1]]``); texts are ``symbols[ptr[t]:ptr[t+1]]`` (Papineni et al. 2002, eq. 1,
    with one reference: ``sum_g min(c_h(g), c_r(g))``).

    No count matrix is built. The rows are grouped by reference set; a group's *members* are its references,
    then the hypotheses of its rows, and each symbol of a member is one entry ``code << b | position`` (the
    position in a block of groups). One sort per order then lines up equal n-grams of one group, each member's
    occurrences adjacent: a run is one member's count of an n-gram, the reference runs of a block give the
    clipping count. The next order extends only the n-grams that both a reference and a hypothesis of the group
    hold (no longer n-gram can match otherwise), each by the symbol after it; an n-gram's code is then the
    number of its run of equal codes, (n-gram, group), so codes stay small. Counts are integers: the result is
    exact, whatever the block size (:data:`MATCH_BLOCK`: small blocks stay in the processor's cache).
    """
    block = block or MATCH_BLOCK
    hyp = np.asarray(hyp, dtype=np.int64)
    row_set = np.asarray(row_set, dtype=np.int64)
    set_ptr = np.asarray(set_ptr, dtype=np.int64)
    set_ids = np.asarray(set_ids, dtype=np.int64)
    ptr = np.asarray(ptr, dtype=np.int64)
    n_rows = len(hyp)
    out = np.zeros((n_rows, max_order), dtype=np.float64)
    if n_rows == 0 or max_order < 1:
        return out
    lengths = np.diff(ptr)
    # groups: the reference sets rows use, in set order; the rows of a group in their order
    by_set = np.argsort(row_set, kind="stable")
    sets, first_row = np.unique(row_set[by_set], return_index=True)
    group_rows = np.diff(np.append(first_row, n_rows))
    group_refs = set_ptr[sets + 1] - set_ptr[sets]
    members = group_refs + group_rows
    member_start = np.concatenate([[0], np.cumsum(members)])
    n_members = int(member_start[-1])
    member_text = np.empty(n_members, dtype=np.int64)
    member_row = np.full(n_members, -1, dtype=np.int64)  # a hypothesis's row (in by_set order); -1: reference
    ref_group = np.repeat(np.arange(len(sets)), group_refs)
    ref_rank = np.arange(len(ref_group)) - np.repeat(np.cumsum(group_refs) - group_refs, group_refs)
    member_text[member_start[ref_group] + ref_rank] = set_ids[set_ptr[sets][ref_group] + ref_rank]
    hyp_group = np.repeat(np.arange(len(sets)), group_rows)
    hyp_at = member_start[hyp_group] + group_refs[hyp_group] + (np.arange(n_rows) - first_row[hyp_group])
    member_text[hyp_at] = hyp[by_set]
    member_row[hyp_at] = np.arange(n_rows)
    member_group = np.repeat(np.arange(len(sets)), members)
    member_len = lengths[member_text]
    # blocks of whole groups, about ``block`` symbols each
    group_len = np.add.reduceat(member_len, member_start[:-1]) if n_members else np.zeros(0, np.int64)
    group_len = np.where(members > 0, group_len, 0)
    ends = np.cumsum(group_len)
    sorted_out = np.zeros((n_rows, max_order), dtype=np.float64)
    single = bool(np.all(group_refs == 1))
    g0 = 0
    while g0 < len(sets):
        g1 = max(int(np.searchsorted(ends, (ends[g0 - 1] if g0 else 0) + block, side="right")), g0 + 1)
        m0, m1 = int(member_start[g0]), int(member_start[g1])
        r0, r1 = int(first_row[g0]), int(first_row[g1]) if g1 < len(sets) else n_rows
        _block_counts(symbols, ptr, alphabet, max_order, member_text[m0:m1], member_len[m0:m1],
                      member_group[m0:m1] - g0, member_row[m0:m1] - r0, sorted_out[r0:r1], single)
        g0 = g1
    out[by_set] = sorted_out
    return out


def _block_counts(symbols, ptr, alphabet, max_order, member_text, member_len, member_group, member_row, out,
                  single_reference):
    """:func:`clipped_counts` of one block of groups: adds each row's matches to ``out`` (the rows of the block).

    The members' symbols are laid out one member after another, each followed by an end mark (symbol
    ``width``, never a key's), so that extending an n-gram past its member's end is seen from the symbol read.
    """
    n_members = len(member_text)
    if int(member_len.sum()) == 0:
        return
    width = int(alphabet)
    span = member_len + 1  # each member's symbols and its end mark
    offsets = np.cumsum(span) - span
    n_pos = int(offsets[-1] + span[-1])
    member_of = np.repeat(np.arange(n_members, dtype=np.int32), span)
    member_group = np.asarray(member_group, dtype=np.int32)
    position = np.arange(n_pos, dtype=np.int64)
    real = position != np.repeat(offsets + member_len, span)  # not an end mark
    source = position + np.repeat(ptr[member_text] - offsets, span)
    sym = np.full(n_pos, -1, dtype=np.int64)
    sym[real] = symbols[source[real]]
    del source
    if width > max(n_pos, 1 << 24):  # so large an alphabet: the block's own symbols, numbered densely
        values, dense = np.unique(sym[real], return_inverse=True)
        sym[real], width = dense.ravel(), len(values)
    sym[~real] = width
    shift = max(int(n_pos - 1).bit_length(), 1)
    mask = (1 << shift) - 1
    is_ref = member_row < 0
    counted = np.zeros((n_members, max_order))  # each member's matches (a reference's are not read)
    # order 1: the code of a symbol is (group, symbol), so that a run of equal codes is one n-gram of one group
    keys = _keys(member_group[member_of[real]].astype(np.int64) * (width + 1) + sym[real], position[real],
                 (int(member_group[-1]) + 1) * (width + 1), shift)
    del position, real
    for n in range(1, max_order + 1):
        keys.sort()
        pos = keys & mask
        code = keys >> shift
        mem = member_of[pos]
        new_code = np.empty(len(keys), dtype=bool)  # another (n-gram, group): a block
        new_code[0] = True
        np.not_equal(code[1:], code[:-1], out=new_code[1:])
        new_run = new_code.copy()  # another (n-gram, member)
        new_run[1:] |= mem[1:] != mem[:-1]
        run = np.flatnonzero(new_run)
        count = np.diff(run, append=len(keys))
        run_mem = mem[run]
        first = np.flatnonzero(new_code[run])
        ref_run = is_ref[run_mem]
        if single_reference:  # a reference run is the first of its block
            ref_runs = ref_run[first]
            clip = np.where(ref_runs, count[first], 0)
        else:
            ref_runs = np.add.reduceat(ref_run, first)
            clip = np.maximum.reduceat(np.where(ref_run, count, 0), first)  # the largest reference count
        runs_in_block = np.diff(first, append=len(run))
        matched = np.minimum(count, np.repeat(clip, runs_in_block))
        counted[:, n - 1] = np.bincount(run_mem, weights=matched, minlength=n_members)
        if n == max_order:
            break
        # n-grams a reference and a hypothesis of the group share: extended by the symbol after them, each
        # numbered by its block (its n-gram within its group), unless that symbol is an end mark
        shared = (clip > 0) & (runs_in_block > ref_runs)
        size = np.diff(run[first], append=len(keys))
        pos = pos[np.repeat(shared, size)]
        nxt = sym[pos + n]
        code = np.repeat(np.flatnonzero(shared), size[shared]) * (width + 1) + nxt
        keys = _keys(code, pos, len(first) * (width + 1), shift)[nxt != width]
        if not len(keys):
            break
    hyps = np.flatnonzero(~is_ref)
    out[member_row[hyps]] += counted[hyps]


def _keys(code: np.ndarray, pos: np.ndarray, bound: int, shift: int) -> np.ndarray:
    """Sort keys ``code << shift | pos`` for codes below ``bound``; codes numbered densely first when the key
    would not fit in 63 bits (blocks of many millions of symbols)."""
    if (bound - 1).bit_length() + shift > 63:
        code = np.unique(code, return_inverse=True)[1].ravel().astype(np.int64)
    return (code << shift) | pos


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


#: Largest (text, n-gram) integer key :class:`CharacterNgramCounts` allows.
_KEY_LIMIT = 2 ** 62
#: Texts whose characters :class:`CharacterNgramCounts` reads at a time.
_CHAR_SLICE = 8192


class CharacterNgramCounts(NgramCounts):
    """The character n-grams of strings: each text as a sequence of character ids (:meth:`matches` counts clipped
    matches from them directly), and on demand the :class:`NgramCounts` view (``matrices``, ``ngram_ids``).

    Character ids number the characters present in code point order (``vocabulary``), stored in the smallest
    unsigned type (``symbols``, ``ptr`` as :class:`~combo.analysis.ngrams.SymbolSequences`). In ``matrices`` the
    n-gram of order n starting at a position is the integer ``code_{n-1} * A + char`` (A = alphabet size), so
    each order costs one sort of integer keys instead of a ``unique`` with inverse. Column ids are these codes
    (a wide, sparse column space); codes are renumbered densely only when a key would overflow.
    """

    def __init__(self, texts: Sequence[str], max_order: int):  # no super().__init__ call, on purpose
        """Number the characters of ``texts`` (``_CHAR_SLICE`` texts at a time) for n-grams of orders ``1..max_order``;
        count matrices are built only on demand."""
        self.max_order = max_order
        self.vocabulary = Vocabulary()
        n_texts = len(texts)
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n_texts)
        self.ptr = np.zeros(n_texts + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=self.ptr[1:])
        # code points a slice of texts at a time (their UTF-32 copy is 4 bytes a character), each numbered as it
        # first appears, then renumbered in code point order
        number = np.full(256, -1, dtype=np.int32)  # by code point, grown to the largest one seen
        seen: List[int] = []
        parts = []
        for start in range(0, n_texts, _CHAR_SLICE):
            chars = np.frombuffer("".join(texts[start:start + _CHAR_SLICE]).encode("utf-32-le", "surrogatepass"),
                                  dtype=np.uint32)
            top = int(chars.max()) if len(chars) else 0
            if top >= len(number):
                number = np.concatenate([number, np.full(top + 1 - len(number), -1, dtype=np.int32)])
            ids = number[chars]
            if len(ids) and ids.min() < 0:
                new = np.unique(chars[ids < 0]).tolist()
                number[new] = np.arange(len(seen), len(seen) + len(new))
                seen += new
                ids = number[chars]
            parts.append(ids.astype(smallest_uint(max(len(seen) - 1, 0))))
        present = np.array(sorted(seen), dtype=np.int64)
        self.vocabulary.index = {chr(c): i for i, c in enumerate(present.tolist())}
        self.alphabet = max(len(present), 1)
        rank = np.empty(len(present), dtype=smallest_uint(self.alphabet - 1))  # first-seen number -> code point rank
        rank[number[present]] = np.arange(len(present))
        self.symbols = rank[np.concatenate(parts)] if parts else np.zeros(0, dtype=np.uint8)
        self._matrices: Optional[List[sparse.csr_matrix]] = None
        self._ngram_ids: Optional[List[np.ndarray]] = None

    def matches(self, hyp: np.ndarray, row_set: np.ndarray, set_ptr: np.ndarray, set_ids: np.ndarray) -> np.ndarray:
        """Clipped matches of each order, rows against reference sets (``combo.analysis.ngrams.clipped_counts``)."""
        return clipped_counts(self.symbols, self.ptr, self.alphabet, self.max_order, hyp, row_set, set_ptr, set_ids)

    @property
    def matrices(self) -> List[sparse.csr_matrix]:  # type: ignore[override]
        """Per order, the CSR matrix of n-gram counts (texts x codes), built on first use."""
        if self._matrices is None:
            self._matrices = [self._count_matrix(*c) for c in self._codes()]
        return self._matrices

    def _count_matrix(self, text, _position, code, width) -> sparse.csr_matrix:
        """The CSR count matrix (texts x ``width`` codes) of one order's n-grams, by one sort of the integer keys
        ``text * width + code``."""
        n_texts = len(self.lengths)
        keys = text * width + code
        keys.sort()
        if len(keys):
            start = np.ones(len(keys), dtype=bool)
            np.not_equal(keys[1:], keys[:-1], out=start[1:])
            first = np.flatnonzero(start)
            counts = np.diff(first, append=len(keys)).astype(np.float64)
            uniq = keys[first]
            rows = uniq // width
            cols = uniq - rows * width
        else:
            counts = np.zeros(0)
            rows = cols = np.zeros(0, dtype=np.int64)
        indptr = np.zeros(n_texts + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_texts), out=indptr[1:])
        mat = sparse.csr_matrix((counts, cols, indptr), shape=(n_texts, width))
        mat.has_canonical_format = True  # one sorted entry per (text, n-gram) by construction
        return mat

    def _codes(self):
        """Yield ``(text, position, code, width)`` of every n-gram, order by order (positions ascending)."""
        ids, n_texts = self.symbols.astype(np.int64), len(self.lengths)
        alphabet = max(int(ids.max()) + 1 if len(ids) else 1, 1)
        text = np.repeat(np.arange(n_texts, dtype=np.int64), self.lengths)
        position = np.arange(len(ids), dtype=np.int64)
        room = np.repeat(np.cumsum(self.lengths), self.lengths) - position  # symbols from here to the text's end
        code = ids
        width = alphabet  # codes of the current order lie in [0, width)
        for n in range(1, self.max_order + 1):
            if n > 1:
                if max(n_texts, 1) * width * alphabet >= _KEY_LIMIT:
                    _, dense = np.unique(code, return_inverse=True)
                    code = dense.ravel()
                    width = int(code.max()) + 1 if len(code) else 1
                    if max(n_texts, 1) * width * alphabet >= _KEY_LIMIT:
                        raise InputError(f"chrF: too many distinct character {n}-grams to index "
                                         f"({width} x {alphabet} x {n_texts} texts)",
                                         fix="score the texts in smaller parts")
                keep = room >= n
                text, position, room = text[keep], position[keep], room[keep]
                code = code[keep] * alphabet + ids[position + (n - 1)]
                width *= alphabet
            yield text, position, code, width

    @property
    def ngram_ids(self) -> List[np.ndarray]:  # type: ignore[override]
        """Per order: the id of the n-gram starting at each position (-1: none), as in :class:`NgramCounts`."""
        if self._ngram_ids is None:
            out = []
            for _, position, code, _ in self._codes():
                full = np.full(len(self.symbols), -1, dtype=np.int64)
                full[position] = code
                out.append(full)
            self._ngram_ids = out
        return self._ngram_ids
