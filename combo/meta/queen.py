"""QUEEN, the non-parametric combination of similarity metrics (Amigó, Gonzalo, Peñas & Verdejo, ACL 2005).

QARLA defines, for a candidate ``a``, references ``R`` and a set of similarity
metrics ``X``::

    QUEEN_{X,R}(a) = P_{(r, r', r'') in R^3} [ for all x in X: x(a, r) >= x(r', r'') ]

the probability that, for every metric, ``a`` is closer to a reference than
two *other* references are to each other; Amigó et al. (2006) and Giménez &
Màrquez (IJCNLP 2008) use it for MT. Which triples count is a convention
(``triples``), see docs/queen-king.md:

* ``"distinct"`` (default: "two other references"): r, r', r'' pairwise
  distinct, ``n(n-1)(n-2)`` ordered triples; needs 3 references (4 for KING).
* ``"pair-distinct"``: r' != r'' but r may be r' or r'', ``n^2 (n-1)`` triples.
* ``"independent"``: three independent draws with replacement, ``n^3`` triples;
  the only one that reads the diagonal x(r, r) of ``ref_ref``.

Inputs of one segment (pure arrays, no text): ``cand_ref[k, a, r] = x_k(a, r)``,
shape (m metrics, n_cand, n_ref), and ``ref_ref[k, i, j] = x_k(r_i, r_j)``,
shape (m, n_ref, n_ref). Metrics are similarities (higher = closer); pass
``higher_is_better`` to flip error metrics. QUEEN is invariant to any strictly
increasing transform of a metric and to duplicated metrics.

Exact and fast, two ways that give the same integers:

* ``bitset`` (many references): for a query ``(a, r)`` the reference pairs
  dominated by ``x(a, r)`` in metric k are a prefix of the pairs sorted by
  ``x_k``; prefixes are packed uint64 bitsets built by one cumulative OR over
  the queries sorted by threshold, ANDed over metrics and counted with
  ``np.bitwise_count`` (a byte table on older numpy): ``O(m · queries · n^2/64)``
  words.
* ``broadcast`` (up to 16 references): every triple compared at once, the
  segments of one shape stacked, so thousands of small segments cost one call.

:func:`queen_naive` enumerates the triples (the definition; the tests check
both ways against it). ``max_refs`` caps the references per segment by a
seeded uniform sample (unbiased for QUEEN with ``"distinct"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import InputError, OptionError

TRIPLES = ("distinct", "pair-distinct", "independent")
_MIN_REFS = {"distinct": 3, "pair-distinct": 2, "independent": 1}
_MAX_WORDS = 1 << 18  # words per bitset array in one chunk of queries (2 MB)
#: Chunk sizes when the caller gives none: the shares of the default 2 GB memory budget that
#: :class:`combo.budget.Budget` gives segments prepared together (a quarter) and one chunk of dominance bitsets.
#: The budget itself (``--memory``) is the runner's (:mod:`combo.meta_run`); tests/test_meta_run.py checks that
#: these equal ``Budget().segment_bytes()`` and ``Budget().bitset_words()``.
SEGMENT_CHUNK_BYTES = 2 * 1024 ** 3 // 4
BITSET_CHUNK_WORDS = max(1 << 16, 2 * 1024 ** 3 // 8 // 8 // 6)

Seed = Union[None, int, np.random.Generator]


# -- conventions ------------------------------------------------------------------------

def check_triples(triples: str) -> str:
    """Validate the triple convention name."""
    if triples not in TRIPLES:
        raise OptionError(f"triples={triples!r} must be one of {list(TRIPLES)}")
    return triples


def min_references(triples: str = "distinct") -> int:
    """Fewest references for which QUEEN is defined under ``triples`` (KING needs one more)."""
    return _MIN_REFS[check_triples(triples)]


def triple_count(n_ref: int, triples: str = "distinct") -> int:
    """Number of ordered triples (r, r', r'') counted by ``triples`` for ``n_ref`` references."""
    n = int(n_ref)
    if check_triples(triples) == "distinct":
        return n * (n - 1) * (n - 2)
    if triples == "pair-distinct":
        return n * n * (n - 1)
    return n ** 3


def triple_allowed(r: int, r1: int, r2: int, triples: str) -> bool:
    """Whether the ordered triple (r, r', r'') is counted under ``triples``."""
    if triples == "distinct":
        return r != r1 and r != r2 and r1 != r2
    if triples == "pair-distinct":
        return r1 != r2
    return True


# -- input checks -----------------------------------------------------------------------

def _metric_label(k: int, metric_names: Optional[Sequence[str]]) -> str:
    """How an error message names metric ``k``: by name when given, else by index."""
    if metric_names is not None and k < len(metric_names):
        return f"metric {metric_names[k]!r}"
    return f"metric {k}"


def prepare_segment(cand_ref, ref_ref, triples: str = "distinct",
                    higher_is_better: Optional[Sequence[bool]] = None,
                    metric_names: Optional[Sequence[str]] = None,
                    segment: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Check shapes and NaNs, add the metric axis to 2-D input, flip lower-is-better metrics.

    Returns float64 arrays (m, n_cand, n_ref) and (m, n_ref, n_ref). A NaN
    that would be read raises :class:`InputError` naming the metric and the
    segment (the diagonal of ``ref_ref`` is read only by ``"independent"``).
    """
    check_triples(triples)
    where = "" if segment is None else f"segment {segment}: "
    c = np.asarray(cand_ref, dtype=np.float64)
    r = np.asarray(ref_ref, dtype=np.float64)
    if c.ndim == 2 and r.ndim == 2:
        c, r = c[None], r[None]
    if c.ndim != 3 or r.ndim != 3:
        raise InputError(f"{where}cand_ref must have shape (metrics, candidates, references) and ref_ref "
                         f"(metrics, references, references); got {c.shape} and {r.shape}")
    m, _, n = c.shape
    if r.shape != (m, n, n):
        raise InputError(f"{where}ref_ref has shape {r.shape}; with cand_ref {c.shape} it must be {(m, n, n)}")
    if m == 0:
        raise InputError(f"{where}QUEEN needs at least one metric")
    if higher_is_better is not None:
        flags = np.asarray(higher_is_better, dtype=bool).reshape(-1)
        if flags.shape != (m,):
            raise OptionError(f"higher_is_better has {flags.size} flags for {m} metrics")
        if not flags.all():
            sign = np.where(flags, 1.0, -1.0)
            c = c * sign[:, None, None]
            r = r * sign[:, None, None]
    read = np.ones((n, n), dtype=bool)
    if triples != "independent":
        np.fill_diagonal(read, False)
    bad_c = np.isnan(c).any(axis=(1, 2))
    bad_r = (np.isnan(r) & read).any(axis=(1, 2))
    for k in np.flatnonzero(bad_c | bad_r):
        what = "candidate-reference" if bad_c[k] else "reference-reference"
        raise InputError(f"{where}{_metric_label(int(k), metric_names)} has NaN {what} scores; "
                         "QUEEN needs a score for every pair (fix or drop the metric)")
    return c, r


# -- popcount -------------------------------------------------------------------------------

_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def popcount_table(words: np.ndarray) -> np.ndarray:
    """Set bits of each uint64 word through a 256-entry byte table (fallback for numpy < 2)."""
    w = np.ascontiguousarray(words, dtype=np.uint64)
    b = w.view(np.uint8).reshape(w.shape + (8,))
    return _BYTE_POPCOUNT[b].sum(axis=-1, dtype=np.uint8)


popcount = getattr(np, "bitwise_count", popcount_table)


# -- the dominance bitsets --------------------------------------------------------------

class _Grid:
    """Bit layout of the reference pairs: row i holds pairs (i, j) in ceil(n/64) words; ``t`` = transposed."""

    def __init__(self, n: int, include_diagonal: bool):
        """The layout of the pairs of ``n`` references (the pairs (i, i) included only with ``include_diagonal``)."""
        self.n = n
        self.row_words = (n + 63) // 64
        self.words = n * self.row_words
        ii, jj = np.indices((n, n)).reshape(2, -1)
        if not include_diagonal:
            off = ii != jj
            ii, jj = ii[off], jj[off]
        self.i, self.j = ii, jj
        self.word = ii * self.row_words + jj // 64
        self.bit_index = (jj % 64).astype(np.uint8)
        self.word_t = jj * self.row_words + ii // 64
        self.bit_index_t = (ii % 64).astype(np.uint8)


def _dominance_chunks(thresholds: np.ndarray, ref_ref: np.ndarray, grid: _Grid, transposed: bool,
                      max_words: int = _MAX_WORDS) -> Iterator[Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]:
    """Per query (column of ``thresholds``), the bitset of pairs (i, j) with ``ref_ref[k, i, j] <= t[k, q]`` for all k.

    Yields ``(queries, D, DT)`` per chunk: the query indices, ``D`` of shape
    (n, row_words, chunk) in the row layout (query axis last) and ``DT`` the
    same sets in the transposed layout (``None`` unless ``transposed``).
    Queries are visited in the order of the first metric's thresholds, so its
    prefixes need no reordering.
    """
    m, n_queries = thresholds.shape
    layouts = [(grid.word, grid.bit_index)] + ([(grid.word_t, grid.bit_index_t)] if transposed else [])
    # per metric and layout: pairs sorted by (word, value), so that (word, first query) is sorted too;
    # kept compact (uint16 words, uint8 bit positions): 11 bytes a pair, the bits made per chunk
    word_dtype = np.uint16 if grid.words <= 1 << 16 else np.int64  # uint16: stable sort is a radix sort
    sorted_pairs = []
    for k in range(m):
        values = ref_ref[k, grid.i, grid.j]
        by_value = np.argsort(values)
        per_layout = []
        for word, bit_index in layouts:
            order = by_value[np.argsort(word[by_value].astype(word_dtype), kind="stable")]
            per_layout.append((values[order], word[order].astype(word_dtype), bit_index[order]))
        sorted_pairs.append(per_layout)
    visit = np.argsort(thresholds[0], kind="stable")
    # at most max_words words per bitset array (several live at once), but at least ~4 pair-arrays'
    # worth of words per chunk so the O(pairs) set-up per chunk stays amortised when memory allows
    chunk = max(1, max_words // max(grid.words, 1))
    chunk = max(chunk, min(4 * (len(grid.i) // max(grid.words, 1) + 1), 4 * chunk))
    for start in range(0, n_queries, chunk):
        queries = visit[start:start + chunk]
        size = len(queries)
        acc: List[Optional[np.ndarray]] = [None] * len(layouts)
        for k in range(m):
            t = thresholds[k, queries]
            if k == 0:
                rank = None  # already in threshold order
                ts = t
            else:
                order = np.argsort(t, kind="stable")
                rank = np.empty(size, dtype=np.intp)
                rank[order] = np.arange(size)
                ts = t[order]
            for li, (values, word, bit_index) in enumerate(sorted_pairs[k]):
                # pair p joins every query from the first (in threshold order) whose threshold >= its value
                first = np.searchsorted(ts, values, side="left")
                keep = first < size
                flat = word[keep].astype(np.int64) * size + first[keep]  # non-decreasing
                inc = np.zeros(grid.words * size, dtype=np.uint64)
                if flat.size:
                    starts = np.flatnonzero(np.concatenate(([True], flat[1:] != flat[:-1])))
                    bits = np.left_shift(np.uint64(1), bit_index[keep].astype(np.uint64))
                    inc[flat[starts]] = np.bitwise_or.reduceat(bits, starts)
                    del bits
                prefix = np.bitwise_or.accumulate(inc.reshape(grid.words, size), axis=1)
                if rank is not None:
                    prefix = np.take(prefix, rank, axis=1)
                if acc[li] is None:
                    acc[li] = prefix
                else:
                    np.bitwise_and(acc[li], prefix, out=acc[li])
        shape = (grid.n, grid.row_words, size)
        d = acc[0].reshape(shape)
        dt = acc[1].reshape(shape) if transposed else None
        yield queries, d, dt


def _row_counts(bits: np.ndarray) -> np.ndarray:
    """Set bits per row of (n, row_words, chunk) bitsets: (chunk, n) int64."""
    return popcount(bits).sum(axis=1, dtype=np.int64).T


def _bits_of_row(bits: np.ndarray, rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``bits[rows[i], s, queries[i]]`` for every bit s: (len(queries), n) int64 of 0/1."""
    n = bits.shape[0]
    words = bits[rows, :, queries]  # (len(queries), row_words)
    s = np.arange(n)
    return ((words[:, s // 64] >> (s % 64).astype(np.uint64)) & np.uint64(1)).astype(np.int64)


def _bit(bits: np.ndarray, rows: np.ndarray, cols: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``bits[rows[i], cols[i], queries[i]]`` (bit ``cols`` of row ``rows``): int64 of 0/1."""
    words = bits[rows, cols // 64, queries]
    return ((words >> (cols % 64).astype(np.uint64)) & np.uint64(1)).astype(np.int64)


def _diagonal_bits(bits: np.ndarray) -> np.ndarray:
    """``bits[s, s, q]`` for every s: (chunk, n) int64 of 0/1."""
    s = np.arange(bits.shape[0])
    words = bits[s, s // 64, :]  # (n, chunk)
    return ((words >> (s % 64).astype(np.uint64)[:, None]) & np.uint64(1)).astype(np.int64).T


# -- QUEEN ------------------------------------------------------------------------------------

def _bitset_queen_counts(cand: np.ndarray, refs: np.ndarray, triples: str, max_words: int = _MAX_WORDS) -> np.ndarray:
    """Triples won by each candidate of one prepared segment, by AND-ed prefix bitsets (large n_ref)."""
    m, n_cand, n = cand.shape
    counts = np.zeros(n_cand, dtype=np.int64)
    if n_cand == 0 or triple_count(n, triples) <= 0:
        return counts
    grid = _Grid(n, include_diagonal=triples == "independent")
    thresholds = cand.reshape(m, n_cand * n)  # query q = a * n + r
    for q, d, _ in _dominance_chunks(thresholds, refs, grid, transposed=False, max_words=max_words):
        np.add.at(counts, q // n, popcount(d).sum(axis=(0, 1), dtype=np.int64))
    if triples == "distinct":  # leave out the dominated pairs that contain r itself: (r, j) and (i, r)
        off = ~np.eye(n, dtype=bool)
        for a in range(n_cand):
            t = cand[:, a, :]  # (m, n): threshold of query (a, r)
            row = (refs <= t[:, :, None]).all(axis=0) & off  # [r, j]: pair (r, j) dominated by x(a, r)
            col = (refs <= t[:, None, :]).all(axis=0) & off  # [i, r]: pair (i, r) dominated by x(a, r)
            counts[a] -= int(row.sum()) + int(col.sum())
    return counts


def queen(cand_ref, ref_ref, triples: str = "distinct", higher_is_better: Optional[Sequence[bool]] = None,
          metric_names: Optional[Sequence[str]] = None, segment: Optional[int] = None) -> np.ndarray:
    """QUEEN_{X,R}(a) of every candidate of one segment (Amigó et al. 2005): shape (n_cand,).

    ``cand_ref`` (m, n_cand, n_ref), ``ref_ref`` (m, n_ref, n_ref); 2-D arrays
    mean one metric. Fewer references than :func:`min_references` is an
    :class:`InputError`; no candidates gives an empty array.
    """
    cand, refs = prepare_segment(cand_ref, ref_ref, triples, higher_is_better, metric_names, segment)
    n = cand.shape[2]
    need = min_references(triples)
    if n < need:
        where = "" if segment is None else f"segment {segment}: "
        raise InputError(f"{where}QUEEN with triples={triples!r} needs at least {need} references, got {n}")
    return queen_counts(cand, refs, triples) / triple_count(n, triples)


def queen_naive(cand_ref, ref_ref, triples: str = "distinct",
                higher_is_better: Optional[Sequence[bool]] = None) -> np.ndarray:
    """QUEEN by enumerating every triple: the definition, slow, kept for the tests and the benchmark."""
    cand, refs = prepare_segment(cand_ref, ref_ref, triples, higher_is_better)
    m, n_cand, n = cand.shape
    c, r = cand.tolist(), refs.tolist()
    counted = [(i, j, k) for i in range(n) for j in range(n) for k in range(n) if triple_allowed(i, j, k, triples)]
    if not counted:
        raise InputError(f"QUEEN with triples={triples!r} needs at least {min_references(triples)} references, got {n}")
    out = np.empty(n_cand)
    for a in range(n_cand):
        won = 0
        for i, j, k in counted:
            if all(c[x][a][i] >= r[x][j][k] for x in range(m)):
                won += 1
        out[a] = won / len(counted)
    return out


# -- leave one reference out (what KING and ORANGE need) ------------------------------------

def _bitset_loo_counts(cand: np.ndarray, refs: np.ndarray, triples: str, held_out: Optional[np.ndarray] = None,
                       max_words: int = _MAX_WORDS) -> Tuple[np.ndarray, np.ndarray]:
    """Leave-one-out counts of one prepared segment by prefix bitsets (see :func:`leave_one_out_counts`).

    ``held_out``: the references r0 whose own count is wanted (default all);
    the others get ``ref_counts[r0] = -1``. The candidates' counts are always
    computed for every r0 (they come from the same n_cand * n queries).
    """
    m, n_cand, n = cand.shape
    cand_counts = np.zeros((n, n_cand), dtype=np.int64)
    ref_counts = np.zeros(n, dtype=np.int64)
    if n < 2 or triple_count(n - 1, triples) <= 0:
        return cand_counts, ref_counts
    grid = _Grid(n, include_diagonal=triples == "independent")
    # queries: candidates (a, r) for every r, then references (r0, r) for r != r0 (r0 held out)
    off = ~np.eye(n, dtype=bool)
    if held_out is not None:
        ref_counts[:] = -1
        ref_counts[held_out] = 0
        off[np.setdiff1d(np.arange(n), held_out)] = False
    r0_idx, rr_idx = np.nonzero(off)
    thresholds = np.concatenate([cand.reshape(m, n_cand * n), refs[:, r0_idx, rr_idx]], axis=1)
    n_cand_queries = n_cand * n
    distinct = triples == "distinct"
    for q, d, dt in _dominance_chunks(thresholds, refs, grid, transposed=True, max_words=max_words):
        rows, cols = _row_counts(d), _row_counts(dt)
        total = rows.sum(axis=1)
        touch = rows + cols  # dominated pairs that contain s (the diagonal pair once)
        if triples == "independent":
            touch -= _diagonal_bits(d)
        is_cand = q < n_cand_queries
        ci = np.flatnonzero(is_cand)
        if len(ci):  # candidate queries (a, r): a row of counts over every held-out r0
            a, r = q[ci] // n, q[ci] % n
            won = total[ci, None] - touch[ci]  # pairs without r0
            if distinct:  # ... and without r
                won = (won - touch[ci, r][:, None]
                       + _bits_of_row(d, r, ci) + _bits_of_row(dt, r, ci))
            won[np.arange(len(ci)), r] = 0  # r0 = r is not a held-out reference for this query
            np.add.at(cand_counts.T, a, won)
        ri = np.flatnonzero(~is_cand)
        if len(ri):  # reference queries (r0, r): held-out r0 scored against r
            p = q[ri] - n_cand_queries
            r0, r = r0_idx[p], rr_idx[p]
            won = total[ri] - touch[ri, r0]
            if distinct:
                won = won - touch[ri, r] + _bit(d, r, r0, ri) + _bit(d, r0, r, ri)
            np.add.at(ref_counts, r0, won)
    return cand_counts, ref_counts


def queen_leave_one_out(cand_ref, ref_ref, triples: str = "distinct",
                        higher_is_better: Optional[Sequence[bool]] = None,
                        metric_names: Optional[Sequence[str]] = None,
                        segment: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """QUEEN against ``R - {r}`` for every reference r (Amigó et al. 2006, KING): ``(cand, ref)``.

    ``cand[r, a] = QUEEN_{X,R-{r}}(a)`` (uses x(a, r') for r' != r) and
    ``ref[r] = QUEEN_{X,R-{r}}(r)`` (uses x(r, r') = ``ref_ref[:, r, r']``).
    Needs ``min_references(triples) + 1`` references.
    """
    cand, refs = prepare_segment(cand_ref, ref_ref, triples, higher_is_better, metric_names, segment)
    n = cand.shape[2]
    need = min_references(triples) + 1
    if n < need:
        where = "" if segment is None else f"segment {segment}: "
        raise InputError(f"{where}leave-one-out QUEEN with triples={triples!r} needs at least {need} "
                         f"references, got {n}")
    cand_counts, ref_counts = leave_one_out_counts(cand, refs, triples)
    total = triple_count(n - 1, triples)
    return cand_counts / total, ref_counts / total


# -- small segments: every triple at once, many segments per call ---------------------------

def _masks(n: int, triples: str) -> Tuple[np.ndarray, np.ndarray]:
    """Counted triples (r, r', r'') as a (n, n, n) mask, and per held-out z the (n, n, n, n) masks without z."""
    eye = np.eye(n, dtype=bool)
    if triples == "distinct":
        counted = ~(eye[:, :, None] | eye[:, None, :] | eye[None, :, :])
    elif triples == "pair-distinct":
        counted = np.broadcast_to(~eye[None, :, :], (n, n, n)).copy()
    else:
        counted = np.ones((n, n, n), dtype=bool)
    touches = eye[:, :, None, None] | eye[:, None, :, None] | eye[:, None, None, :]  # [z, r, r', r'']
    return counted, counted[None] & ~touches


def _broadcast_dominance(thresholds: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """``dom[s, q, r, i, j] = all_k thresholds[s, k, q, r] >= refs[s, k, i, j]``."""
    dom = thresholds[:, 0, :, :, None, None] >= refs[:, 0, None, None, :, :]
    for k in range(1, thresholds.shape[1]):
        dom &= thresholds[:, k, :, :, None, None] >= refs[:, k, None, None, :, :]
    return dom


def _broadcast_queen_counts(cand: np.ndarray, refs: np.ndarray, triples: str) -> np.ndarray:
    """Triples won, for stacked segments of one shape: cand (S, m, A, n), refs (S, m, n, n) -> (S, A)."""
    counted, _ = _masks(cand.shape[-1], triples)
    return np.count_nonzero(_broadcast_dominance(cand, refs) & counted, axis=(2, 3, 4)).astype(np.int64)


def _broadcast_loo_counts(cand: np.ndarray, refs: np.ndarray, triples: str) -> Tuple[np.ndarray, np.ndarray]:
    """Leave-one-out counts for stacked segments of one shape: ((S, n, A), (S, n))."""
    n_seg, _, n_cand, n = cand.shape
    _, without = _masks(n, triples)
    dom = _broadcast_dominance(cand, refs).reshape(n_seg * n_cand, n ** 3).astype(np.float32)
    # counts are at most n^3 <= 2^24: exact in float32
    cand_counts = np.rint(dom @ without.reshape(n, n ** 3).T.astype(np.float32)).astype(np.int64)
    cand_counts = cand_counts.reshape(n_seg, n_cand, n).transpose(0, 2, 1)
    ref_dom = _broadcast_dominance(refs, refs)  # [s, z, r, i, j]: held-out z scored by x(z, r)
    ref_counts = np.count_nonzero(ref_dom & without[None], axis=(2, 3, 4)).astype(np.int64)
    return cand_counts, ref_counts


_BROADCAST_MAX_REFS = 16  # up to this many references the broadcast path is faster (measured)
_BROADCAST_MAX_CELLS = 1 << 22  # dominance cells per batch of stacked segments


def _use_broadcast(n_ref: int, method: str) -> bool:
    """Whether to count with the broadcast path: asked for, or ``auto`` with at most ``_BROADCAST_MAX_REFS``
    references."""
    if method not in ("auto", "bitset", "broadcast"):
        raise OptionError(f"method={method!r} must be 'auto', 'bitset' or 'broadcast'")
    return method == "broadcast" or (method == "auto" and n_ref <= _BROADCAST_MAX_REFS)


def _batches(prepared: Sequence[Tuple[np.ndarray, np.ndarray]], method: str, loo: bool):
    """Group prepared segments: yields (indices, stacked cand, stacked refs) or (index, cand, refs) one by one."""
    groups: Dict[Tuple[int, ...], List[int]] = {}
    for i, (cand, _) in enumerate(prepared):
        if _use_broadcast(cand.shape[2], method):
            groups.setdefault(cand.shape, []).append(i)
        else:
            yield [i], None, None
    for (m, n_cand, n), idx in groups.items():
        cells = (5 * n_cand * n ** 3 + 2 * n ** 4) if loo else n_cand * n ** 3  # bytes-ish per segment
        size = max(1, _BROADCAST_MAX_CELLS // max(cells, 1))
        for start in range(0, len(idx), size):
            part = idx[start:start + size]
            yield part, np.stack([prepared[i][0] for i in part]), np.stack([prepared[i][1] for i in part])


def queen_counts_many(prepared: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
                      method: str = "auto", max_words: int = _MAX_WORDS) -> List[np.ndarray]:
    """Triples won by each candidate, for prepared segments (see :func:`prepare_segment`), exactly.

    ``method``: ``"bitset"`` (prefix bitsets, for many references),
    ``"broadcast"`` (every triple at once, segments of one shape stacked) or
    ``"auto"`` (broadcast up to 16 references). All give the same integers.
    """
    out: List[Optional[np.ndarray]] = [None] * len(prepared)
    for idx, cand, refs in _batches(prepared, method, loo=False):
        if cand is None:
            c, r = prepared[idx[0]]
            out[idx[0]] = _bitset_queen_counts(c, r, triples, max_words)
        else:
            for i, counts in zip(idx, _broadcast_queen_counts(cand, refs, triples)):
                out[i] = counts
    return out


def leave_one_out_counts_many(prepared: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
                              method: str = "auto", held_out: Optional[Sequence[Optional[np.ndarray]]] = None,
                              max_words: int = _MAX_WORDS) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Triples won against ``R - {r0}`` for every held-out reference r0, for prepared segments.

    Per segment ``(cand_counts, ref_counts)``: ``cand_counts[r0, a]`` for
    candidate a and ``ref_counts[r0]`` for r0 itself (scored by
    ``x(r0, r) = ref_ref[:, r0, r]``); divide by ``triple_count(n_ref - 1)``.
    ``held_out[i]`` (segments on the bitset path only) limits the references
    whose own count is computed; the others get -1. ``max_words`` bounds one
    chunk of bitsets (uint64 words per array).
    """
    out: List[Optional[Tuple[np.ndarray, np.ndarray]]] = [None] * len(prepared)
    for idx, cand, refs in _batches(prepared, method, loo=True):
        if cand is None:
            c, r = prepared[idx[0]]
            keep = None if held_out is None else held_out[idx[0]]
            out[idx[0]] = _bitset_loo_counts(c, r, triples, keep, max_words)
        else:
            cand_counts, ref_counts = _broadcast_loo_counts(cand, refs, triples)
            for j, i in enumerate(idx):
                out[i] = (cand_counts[j], ref_counts[j])
    return out


def queen_counts(cand: np.ndarray, refs: np.ndarray, triples: str = "distinct", method: str = "auto") -> np.ndarray:
    """Triples won by each candidate of one prepared segment (see :func:`queen_counts_many`)."""
    return queen_counts_many([(cand, refs)], triples, method)[0]


def leave_one_out_counts(cand: np.ndarray, refs: np.ndarray, triples: str = "distinct",
                         method: str = "auto") -> Tuple[np.ndarray, np.ndarray]:
    """Leave-one-out counts of one prepared segment (see :func:`leave_one_out_counts_many`)."""
    return leave_one_out_counts_many([(cand, refs)], triples, method)[0]


# -- many segments ----------------------------------------------------------------------------

def sample_references(n_ref: int, max_refs: Optional[int], rng: np.random.Generator) -> Optional[np.ndarray]:
    """Sorted indices of ``max_refs`` references drawn uniformly without replacement, or None to keep all."""
    if max_refs is None or n_ref <= max_refs:
        return None
    return np.sort(rng.choice(n_ref, size=max_refs, replace=False))


def restrict_references(cand_ref, ref_ref, keep: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
    """The arrays of one segment restricted to the references ``keep`` (all when None)."""
    c = np.asarray(cand_ref, dtype=np.float64)
    r = np.asarray(ref_ref, dtype=np.float64)
    if keep is None:
        return c, r
    return c[..., keep], r[..., keep[:, None], keep]


def check_max_refs(max_refs: Optional[int], triples: str, extra: int = 0) -> None:
    """``max_refs`` must leave enough references for QUEEN (``extra=1`` for KING)."""
    if max_refs is None:
        return
    need = min_references(triples) + extra
    if isinstance(max_refs, bool) or not isinstance(max_refs, (int, np.integer)) or max_refs < need:
        raise OptionError(f"max_refs={max_refs!r} must be an integer >= {need} with triples={triples!r}")


class SkippedSegments:
    """``n_used`` and ``n_skipped`` of a per-segment result.

    ``skipped`` maps a segment index to the reason; the list attribute named by
    ``per_segment_field`` has one entry per segment, used or not.
    """

    per_segment_field = "values"

    @property
    def n_skipped(self) -> int:
        """The number of skipped segments."""
        return len(self.skipped)

    @property
    def n_used(self) -> int:
        """The number of segments not skipped."""
        return len(getattr(self, self.per_segment_field)) - len(self.skipped)


@dataclass
class QueenResult(SkippedSegments):
    """QUEEN of every candidate of every segment; skipped segments are listed, never dropped silently."""

    values: List[Optional[np.ndarray]]  # per segment, (n_cand,) or None when skipped
    skipped: Dict[int, str] = field(default_factory=dict)  # segment index -> reason
    sampled: List[int] = field(default_factory=list)  # segments whose references were sub-sampled (max_refs)
    triples: str = "distinct"


def segment_bytes(cand_ref, ref_ref) -> int:
    """Bytes of one segment's scores as float64 (what :func:`prepare_segment` holds for it)."""
    return 8 * (int(np.prod(np.shape(cand_ref))) + int(np.prod(np.shape(ref_ref))))


def segment_chunks(segments: Sequence[Tuple[np.ndarray, np.ndarray]], max_bytes: int) -> Iterator[List[int]]:
    """Consecutive segment indices in chunks whose scores take at most ``max_bytes`` (at least one segment each).

    QUEEN and KING prepare and count one chunk at a time, so memory is bounded
    by the chunk, not by the test bed; segments of a chunk with the same shape
    are still stacked into one call.
    """
    chunk: List[int] = []
    size = 0
    sized = getattr(segments, "segment_bytes", None)  # a lazy sequence can tell sizes without making arrays
    for i in range(len(segments)):
        b = sized(i) if sized is not None else segment_bytes(*segments[i])
        if chunk and size + b > max_bytes:
            yield chunk
            chunk, size = [], 0
        chunk.append(i)
        size += b
    if chunk:
        yield chunk


def prepare_segments(segments: Sequence[Tuple[np.ndarray, np.ndarray]], need: int, what: str,
                     result: SkippedSegments, triples: str, higher_is_better, metric_names,
                     max_refs: Optional[int], rng: np.random.Generator, require_candidates: bool = False,
                     indices: Optional[Sequence[int]] = None):
    """Check, sub-sample (``max_refs``) and prepare every segment that can be scored (or those in ``indices``).

    A segment with fewer than ``need`` references (or, with ``require_candidates``,
    no candidate) is recorded in ``result.skipped``; a sub-sampled one in
    ``result.sampled``. Returns the prepared segments, their indices and the
    kept reference indices (None: all).
    """
    prepared, where, kept = [], [], []
    for i in (range(len(segments)) if indices is None else indices):
        cand_ref, ref_ref = segments[i]
        shape = np.shape(cand_ref)
        n = shape[-1]
        if n < need:
            result.skipped[i] = f"{n} references; {what} with triples={triples!r} needs >= {need}"
            continue
        if require_candidates and shape[-2] == 0:
            result.skipped[i] = "no candidates"
            continue
        keep = sample_references(n, max_refs, rng)
        if keep is not None:
            result.sampled.append(i)
        c, r = restrict_references(cand_ref, ref_ref, keep)
        prepared.append(prepare_segment(c, r, triples, higher_is_better, metric_names, segment=i))
        where.append(i)
        kept.append(keep)
    return prepared, where, kept


def queen_segments(segments: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
                   higher_is_better: Optional[Sequence[bool]] = None,
                   metric_names: Optional[Sequence[str]] = None,
                   max_refs: Optional[int] = None, seed: Seed = None, *,
                   chunk_bytes: int = SEGMENT_CHUNK_BYTES, max_words: int = BITSET_CHUNK_WORDS) -> QueenResult:
    """QUEEN over a sequence of segments ``(cand_ref, ref_ref)`` with ragged n_cand and n_ref.

    Segments with fewer than :func:`min_references` references are skipped and
    listed in ``skipped`` with the reason. With ``max_refs=K`` a segment with
    more than K references uses K of them drawn uniformly without replacement
    from ``np.random.default_rng(seed)`` (listed in ``sampled``). Segments are
    prepared and counted in chunks of at most ``chunk_bytes`` of scores, with
    at most ``max_words`` uint64 words per array of dominance bitsets; the
    sizes change memory, never the result. ``segments`` may be any indexable
    sequence that makes each segment's arrays when asked. Sized from a memory
    budget (``memory="2G"``): :func:`combo.meta_run.queen_segments`.
    """
    check_triples(triples)
    check_max_refs(max_refs, triples)
    rng = np.random.default_rng(seed)
    need = min_references(triples)
    result = QueenResult(values=[None] * len(segments), triples=triples)
    for chunk in segment_chunks(segments, chunk_bytes):
        prepared, where, _ = prepare_segments(segments, need, "QUEEN", result, triples, higher_is_better,
                                              metric_names, max_refs, rng, indices=chunk)
        for i, (cand, _), counts in zip(where, prepared, queen_counts_many(prepared, triples, max_words=max_words)):
            result.values[i] = counts / triple_count(cand.shape[2], triples)
    return result
