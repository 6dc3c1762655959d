"""Tercom's greedy shift search (Snover et al. 2006, §3), vectorised over many sentence pairs.

TER = (shifts + Levenshtein(shifted hypothesis, reference)) / |reference|
(Snover et al. 2006, §2, eq. 1), with the shifts chosen greedily: each round
tries the candidate block moves of the hypothesis and applies the one that
lowers the edit distance most, until none does (§3).

Which moves are tried, and how ties are broken, follows Tercom's heuristics as
sacreBLEU 2.6.0 writes them (``sacrebleu/metrics/lib_ter.py``), so that the
counts are identical:

* the edit distance is a beam search: row ``i`` (after hypothesis word ``i``)
  only fills columns ``[floor(i r) - b, floor(i r) + b)``, ``r = |ref| / |hyp|``,
  ``b = 25`` (``ceil(r / 2 + 25)`` when ``r / 2 > 25``); row 0 and the last row are full;
* the alignment is the back-trace of that matrix, preferring match or
  substitution, then dropping a hypothesis word, then inserting a reference word;
* a block of at most 10 words whose start lies at most 50 positions from the
  matching reference words is moved only if it holds a hypothesis error, the
  reference words hold an error, and the block is not aligned onto itself;
  it is tried in front of the hypothesis word after each one aligned to the
  reference words ``r - 1 .. r + len - 1`` (consecutive repeats skipped);
* the best move maximises (gain, length, -start, -target);
* a pair stops once 1,000 candidates were counted; the round that reaches the
  limit is discarded.

Two searches give these counts: ``_ter.c``, built at install where a C
compiler is found and the default then, follows sacreBLEU's algorithm one
pair at a time (the band stored alone; a move costs only the rows it
rewrites, ``min_j D'[hi, j] + B[hi, j]`` as below); the numpy search of this
module is the fallback and the reference it is tested against
(:func:`shift_edit_counts`'s ``engine``).

Speed of the numpy search: all pairs of a batch, and all their candidate
moves, advance in lock-step, one beam-matrix row per numpy call (batches of
similar sizes; small neighbouring ones merged, as numpy's per-call overhead
dominates them). Tricks:

* rows are kept as ``G[i, j] = D[i, j] - j``; then an insertion costs nothing
  and the insertion step of a row is a running minimum over ``j`` (done by
  ``np.minimum.accumulate``, one call per column, or log2(width) passes,
  whichever is fastest for the array's shape);
* matrices are stored column-major per row (``[row, column, pair]``), so that
  one row of many pairs is one array and a column of it is contiguous;
* a move changes only hypothesis rows ``[lo, hi)``: its distance is
  ``min_j D'[hi, j] + B[hi, j]`` with ``D'`` restarted from the forward row
  ``lo`` and ``B`` the backward matrix (the forward matrix of the reversed
  pair), so a candidate costs ``hi - lo`` rows instead of a whole matrix;
* the beam is mostly irrelevant and costs a masking per row, so distances are
  first computed without it. A path through cell ``(i, j)`` makes at least
  ``|i - j| + |(|hyp| - i) - (|ref| - j)|`` insertions and deletions (it
  must make up the length differences of the prefixes and of the suffixes it
  joins); the least of it over the cells outside the band bounds the cost of
  every path that leaves the band. An unbanded distance below that
  bound is the banded one (its best path stays inside; the banded search
  cannot do better), and then so are the alignment (every cell the back-trace
  compares on a best path has its banded value, others compare unequal in
  both) and the candidate distances below it; a candidate distance at least
  the current one is no gain banded or not. Only the pairs and candidates left
  undecided run again with the band;
* the back-trace decides the step out of every cell for whole matrices at
  once, then follows the path with one gather per step over all pairs;
* word ids are held in the smallest integer type that fits (word comparisons
  are the most frequent operation), and so are matrices without the band:
  their values are real distances, ``-width <= G <= rows``, so int8 below
  127 rows and columns (int16 otherwise, and for the band's 'unreachable').
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from ...extras import use_compiled

try:
    from . import _ter as _compiled  # built from _ter.c at install where a C compiler is found (setup.py)
except ImportError:  # pragma: no cover - exercised where the extension was not built
    _compiled = None

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000

_CELL_BUDGET = 1 << 22  # cells of one (rows x columns x pairs) batch matrix
_HYP_PAD, _REF_PAD = -1, -2  # padding ids that never match each other nor a word


def _dtype_and_inf(rows: int, cols: int):
    """Smallest integer type whose 'unreachable' value stays apart from every finite one."""
    if rows + cols <= 2000:
        return np.int16, 1 << 13
    return np.int32, 1 << 28


def beam_bands(n_hyp: np.ndarray, n_ref: np.ndarray, rows: int) -> Tuple[np.ndarray, np.ndarray]:
    """Columns ``[lo, hi)`` filled in rows ``0..rows`` of each pair's beam matrix, shape (P, rows + 1).

    Row 0 is full; row ``i`` is centred on ``floor(i * |ref| / |hyp|)``
    (computed in floating point, as sacreBLEU); the last row reaches the last
    column; rows past the hypothesis are empty.
    """
    n_hyp = n_hyp.astype(np.int64)
    n_ref = n_ref.astype(np.int64)
    ratio = np.where(n_hyp > 0, n_ref / np.maximum(n_hyp, 1), 1.0)
    width = np.where(BEAM_WIDTH < ratio / 2, np.ceil(ratio / 2 + BEAM_WIDTH), BEAM_WIDTH).astype(np.int64)
    i = np.arange(rows + 1)
    centre = np.floor(i[None, :] * ratio[:, None]).astype(np.int64)
    lo = np.maximum(0, centre - width[:, None])
    hi = np.minimum(n_ref[:, None] + 1, centre + width[:, None])
    hi = np.where(i[None, :] == n_hyp[:, None], n_ref[:, None] + 1, hi)
    lo[:, 0] = 0
    hi[:, 0] = n_ref + 1
    beyond = i[None, :] > n_hyp[:, None]
    return np.where(beyond, 0, lo), np.where(beyond, 0, hi)


def mirrored_bands(lo: np.ndarray, hi: np.ndarray, n_hyp: np.ndarray, n_ref: np.ndarray):
    """Bands of the reversed pair: cell (i, j) becomes (|hyp| - i, |ref| - j)."""
    rows = lo.shape[1] - 1
    ii = np.arange(rows + 1)[None, :]
    mirror = np.clip(n_hyp[:, None] - ii, 0, rows)
    rlo = n_ref[:, None] + 1 - np.take_along_axis(hi, mirror, axis=1)
    rhi = n_ref[:, None] + 1 - np.take_along_axis(lo, mirror, axis=1)
    beyond = ii > n_hyp[:, None]
    return np.where(beyond, 0, rlo), np.where(beyond, 0, rhi)


def band_exit_cost(lo: np.ndarray, hi: np.ndarray, n_hyp: np.ndarray, n_ref: np.ndarray) -> np.ndarray:
    """Fewest edits of any path through a cell outside the band, per pair (a lower bound; huge if none).

    A path through cell ``(i, j)`` makes at least ``|i - j|`` insertions or
    deletions before it and ``|(|hyp| - i) - (|ref| - j)|`` after; that sum is
    convex in ``j`` and least at ``j = i``, so in each row the cells nearest
    ``i`` on either side of the band give the row's bound.
    """
    rows = lo.shape[1] - 1
    i = np.arange(rows + 1)[None, :]
    real = (i >= 1) & (i <= n_hyp[:, None])
    n_hyp, n_ref = n_hyp[:, None], n_ref[:, None]

    def through(j):
        return np.abs(i - j) + np.abs((n_hyp - i) - (n_ref - j))

    never = np.int64(1 << 40)
    left = np.where(real & (lo > 0), through(np.minimum(i, lo - 1)), never)
    right = np.where(real & (hi <= n_ref), through(np.maximum(i, hi)), never)
    return np.minimum(left, right).min(axis=1)


def _band_is_full(lo: np.ndarray, hi: np.ndarray, n_hyp: np.ndarray, n_ref: np.ndarray) -> bool:
    """True when every real row of every pair covers all its columns (no masking needed)."""
    real = np.arange(lo.shape[1])[None, :] <= n_hyp[:, None]
    return bool(np.all(~real | ((lo == 0) & (hi >= n_ref[:, None] + 1))))


def running_minimum(out: np.ndarray) -> None:
    """``out[j] = min(out[:j + 1])`` along the first axis, in place, the fastest of three ways for the shape.

    ``np.minimum.accumulate`` walks the columns one pair at a time (cheap for few pairs), one call per
    column is cheap for many pairs, log2(width) whole-array passes lie between (costs in microseconds,
    measured on numpy 2.4 for widths 7-115 and 1-10,000 pairs).
    """
    width, pairs = out.shape
    cells = width * pairs
    accumulate = 0.5 + 0.0026 * cells
    per_column = width * (0.7 + 0.0001 * pairs)
    doubling = (width - 1).bit_length() * (1.5 + 0.0001 * cells)
    if accumulate <= min(per_column, doubling):
        np.minimum.accumulate(out, axis=0, out=out)
    elif per_column <= doubling:
        for j in range(1, width):
            np.minimum(out[j - 1], out[j], out=out[j])
    else:
        step = 1
        while step < width:
            np.minimum(out[step:], out[:-step], out=out[step:])  # numpy buffers the overlap
            step *= 2


class _RowKernel:
    """One beam-matrix row from the previous one, in ``G = D - j`` form, for many pairs at once.

    Arrays are (columns, pairs). ``G[i, j] = cummin_j min(G[i-1, j-1] - match,
    G[i-1, j] + 1)``: match/substitution, drop a hypothesis word, then any
    number of insertions (free in G); cells outside the band are ``inf``
    (masked by a maximum with a penalty row: boolean indexing is far slower).
    """

    def __init__(self, width: int, dtype, inf: int):
        self.jr = np.arange(width, dtype=dtype)[:, None]
        self.dtype = dtype
        self.inf = dtype(min(inf, np.iinfo(dtype).max // 2))  # int8 rows never mask (no band), any value
        self.two_inf = dtype(2 * self.inf)

    def penalty(self, lo, hi):
        """``inf`` outside columns ``[lo, hi)`` and ``-inf`` inside; ``lo``/``hi`` (..., pairs) give
        (..., columns, pairs)."""
        lo = np.ascontiguousarray(lo, dtype=self.dtype)[..., None, :]  # C order, so that the result is too
        hi = np.ascontiguousarray(hi, dtype=self.dtype)[..., None, :]
        outside = (self.jr < lo) | (self.jr >= hi)
        pen = outside * self.two_inf
        pen -= self.inf
        return pen

    def __call__(self, prev, word, refs, out, pen=None):
        """Write the row after ``prev`` into ``out`` (which may be ``prev`` itself)."""
        diag = prev[:-1] - (refs == word)
        np.add(prev, 1, out=out)  # drop a hypothesis word
        np.minimum(diag, out[1:], out=out[1:])
        if pen is not None:
            np.maximum(out, pen, out=out)
        running_minimum(out)
        if pen is not None:
            np.maximum(out, pen, out=out)
        return out


def beam_matrices(words: np.ndarray, refs: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  full_band: bool, dtype, inf: int) -> np.ndarray:
    """Forward beam matrices ``G[i, j, p] = D_p[i, j] - j`` of a batch.

    ``words`` (P, H) and ``refs`` (P, R) hold padded word ids; ``lo``/``hi``
    (P, H + 1) the bands. Row 0 is 0 inside its band. (Penalty rows are made
    row by row: made all at once they leave the cache, which is slower.)
    """
    n_pairs, rows = words.shape
    width = refs.shape[1] + 1
    kernel = _RowKernel(width, dtype, inf)
    g = np.empty((rows + 1, width, n_pairs), dtype=dtype)
    g[0] = np.maximum(kernel.penalty(lo[:, 0], hi[:, 0]), 0)
    refs_t = np.ascontiguousarray(refs.T)
    for i in range(1, rows + 1):
        pen = None if full_band else kernel.penalty(lo[:, i], hi[:, i])
        kernel(g[i - 1], words[:, i - 1], refs_t, g[i], pen)
    return g


_DIAG, _UP, _LEFT, _ORIGIN = 0, 1, 2, 3  # back-trace steps: match/substitution, drop a hypothesis word, insert


def trace_alignment(g: np.ndarray, equal: np.ndarray, n_hyp: np.ndarray, n_ref: np.ndarray):
    """Alignment and error flags from the back-trace of each pair's beam matrix.

    At each cell the step taken is the first of match/substitution, drop a
    hypothesis word, insert a reference word that gives the cell its value
    (sacreBLEU's preference). ``equal[i, j, p]`` (shape of ``g``): hypothesis
    word ``i - 1`` of pair ``p`` is its reference word ``j - 1``. Returns
    ``align`` (P, R): the hypothesis position each reference word is aligned to
    (for an inserted reference word, the hypothesis position before it, -1 at
    the start), and ``hyp_err`` (P, H), ``ref_err`` (P, R): 1 where a word is
    not matched exactly.

    The step out of every cell is decided for the whole matrix at once (a few
    passes over small integers); the back-trace itself is then two gathers per
    step over all pairs.
    """
    rows1, width, n_pairs = g.shape
    step = np.empty(g.shape, dtype=np.uint8)
    step[0] = _LEFT
    step[0, 0] = _ORIGIN
    step[1:, 0] = _UP
    inner = g[1:, 1:]
    diag_ok = (g[:-1, :-1] - equal[1:, 1:]) == inner
    up_ok = (g[:-1, 1:] + 1) == inner
    # diag -> 0, else up -> 1, else left -> 2, in uint8 arithmetic
    np.multiply(np.subtract(1, diag_ok.view(np.uint8), dtype=np.uint8),
                np.subtract(2, up_ok.view(np.uint8), dtype=np.uint8), out=step[1:, 1:])
    plane = width * n_pairs
    offset = np.array([plane + n_pairs, plane, n_pairs, 0], dtype=np.int64)  # flat-index change of each step
    flat_step = step.reshape(-1)
    n_steps = int((n_hyp + n_ref).max())
    path = np.empty((n_steps + 1, n_pairs), dtype=np.int64)
    taken = np.empty((n_steps, n_pairs), dtype=np.uint8)
    path[0] = (n_hyp * width + n_ref) * n_pairs + np.arange(n_pairs)
    for s in range(n_steps):
        flat_step.take(path[s], out=taken[s])
        np.subtract(path[s], offset.take(taken[s]), out=path[s + 1])
    cell = path[:-1]
    i, rest = np.divmod(cell, plane)
    j, pair = np.divmod(rest, n_pairs)
    error = ~(equal.reshape(-1).take(cell) & (taken == _DIAG))
    step_i = taken <= _UP
    step_j = (taken == _DIAG) | (taken == _LEFT)
    hyp_err = np.zeros((n_pairs, rows1 - 1), dtype=np.int32)
    ref_err = np.zeros((n_pairs, width - 1), dtype=np.int32)
    align = np.full((n_pairs, width - 1), -1, dtype=np.int64)
    hyp_err[pair[step_i], i[step_i] - 1] = error[step_i]
    pj, jj = pair[step_j], j[step_j] - 1
    ref_err[pj, jj] = error[step_j]
    align[pj, jj] = i[step_j] - 1
    return align, hyp_err, ref_err


def reversed_padded(seqs: np.ndarray, lengths: np.ndarray, pad: int) -> np.ndarray:
    """Each row's first ``lengths[p]`` entries reversed, padding kept at the end."""
    width = seqs.shape[1]
    src = lengths[:, None] - 1 - np.arange(width)[None, :]
    out = np.take_along_axis(seqs, np.clip(src, 0, width - 1), axis=1)
    return np.where(src >= 0, out, pad)


def enumerate_shifts(equal, align, hyp_err, ref_err):
    """Tercom's candidate moves of each pair in a batch.

    Returns the number of candidates sacreBLEU counts per pair, and the
    distinct moves ``(pair, start, length, target)`` to evaluate (moving a block
    in front of itself changes nothing and is left out). ``equal[i, j, p]``
    (as :func:`trace_alignment` takes it): hypothesis word ``i - 1`` of pair
    ``p`` is its reference word ``j - 1``.
    """
    rows, cols, n_pairs = equal.shape[0] - 1, equal.shape[1] - 1, equal.shape[2]
    flat = equal.reshape(-1)
    cell = np.flatnonzero(flat)  # flat indices: the cell one row and column further is `diagonal` on
    ij, p = np.divmod(cell, n_pairs)
    h, r = np.divmod(ij, cols + 1)
    h -= 1
    r -= 1
    near = np.abs(h - r) <= MAX_SHIFT_DIST
    p, h, r, cell = p[near], h[near], r[near], cell[near]
    diagonal = (cols + 2) * n_pairs
    # run[k]: words h..h+k equal r..r+k; a block of each length 1..run is a candidate
    run = np.ones(len(p), dtype=np.int64)
    alive = np.ones(len(p), dtype=bool)
    for k in range(1, MAX_SHIFT_SIZE):
        alive &= (h + k < rows) & (r + k < cols)
        if not alive.any():
            break
        alive &= flat.take(cell + k * diagonal, mode="clip")
        run += alive
    first = np.repeat(np.cumsum(run) - run, run)
    length = np.arange(len(first)) - first + 1
    p, h, r = np.repeat(p, run), np.repeat(h, run), np.repeat(r, run)

    hcum = np.zeros((n_pairs, rows + 1), dtype=np.int64)
    np.cumsum(hyp_err, axis=1, out=hcum[:, 1:])
    rcum = np.zeros((n_pairs, cols + 1), dtype=np.int64)
    np.cumsum(ref_err, axis=1, out=rcum[:, 1:])
    aligned_to = align[p, r]
    keep = ((hcum[p, h + length] > hcum[p, h]) & (rcum[p, r + length] > rcum[p, r])
            & ~((h <= aligned_to) & (aligned_to < h + length)))
    p, h, r, length = p[keep], h[keep], r[keep], length[keep]

    # target for reference position q = r - 1 .. r + len - 1: after the hypothesis word aligned to q
    align_ext = np.empty((n_pairs, cols + 1), dtype=np.int64)
    align_ext[:, 0] = -1
    align_ext[:, 1:] = align
    changed = np.zeros((n_pairs, cols + 1), dtype=np.int64)
    np.cumsum(align_ext[:, 1:] != align_ext[:, :-1], axis=1, out=changed[:, 1:])
    per_block = 1 + changed[p, r + length] - changed[p, r]
    counts = np.bincount(p, weights=per_block, minlength=n_pairs).astype(np.int64)

    reps = length + 1
    first = np.repeat(np.cumsum(reps) - reps, reps)
    q = np.arange(int(reps.sum())) - first - 1  # offset -1 .. len - 1
    p, h, r, length = np.repeat(p, reps), np.repeat(h, reps), np.repeat(r, reps), np.repeat(length, reps)
    q += r
    target = align_ext[p, q + 1] + 1
    new = ((q < r) | (align_ext[p, q + 1] != align_ext[p, np.maximum(q, 0)])) & (target != h)
    p, h, length, target = p[new], h[new], length[new], target[new]
    key = ((p * (rows + 1) + h) * (MAX_SHIFT_SIZE + 1) + length) * (rows + 2) + target
    _, idx = np.unique(key, return_index=True)
    return counts, p[idx], h[idx], length[idx], target[idx]


def shifted_span(start, length, target, n_hyp):
    """Rows ``[lo, lo + span)`` that a move rewrites, and the left rotation of them it makes.

    As sacreBLEU's ``_perform_shift``: a block moved left lands in front of
    ``target``; moved right past its end, in front of ``target``; moved within
    its own reach, ``target - start`` words to the right (clipped at the end).
    """
    left = target < start
    beyond = target > start + length
    lo = np.where(left, target, start)
    hi = np.where(left, start + length, np.where(beyond, target, np.minimum(n_hyp, target + length)))
    rot = np.where(left, start - target, length)
    return lo, hi - lo, rot


def candidate_distances(both, words, refs, n_hyp, n_ref, lo_band, hi_band, banded,
                        dtype, inf, pair, lo, span, rot):
    """Beam edit distance of every candidate move; candidates advance one row per step.

    ``both`` holds the forward matrices of the batch's pairs, then the
    backward ones (the forward matrices of the reversed pairs); every gather
    from it is a ``take`` on flat indices, laid out (columns, candidates).
    """
    order = np.argsort(-span, kind="stable")
    pair, lo, span, rot = pair[order], lo[order], span[order], rot[order]
    n_pairs, rows = words.shape
    width, both_pairs = both.shape[1:]
    flat = both.reshape(-1)
    kernel = _RowKernel(width, dtype, inf)
    column_stride = np.arange(width)[:, None] * both_pairs
    cur = flat.take(column_stride + (lo * (width * both_pairs) + pair)[None, :])  # forward row lo
    cand_refs = refs.reshape(-1).take(np.arange(width - 1)[:, None] + (pair * (width - 1))[None, :])
    max_span = int(span[0])
    # step s reads word lo + (s + rot) mod span: the block rotated left by rot (s + rot < 2 span)
    offset = np.arange(max_span)[:, None] + rot[None, :]
    np.subtract(offset, span[None, :], out=offset, where=offset >= span[None, :])
    cand_words = words.reshape(-1).take(offset + (pair * rows + lo)[None, :], mode="clip")
    active = np.searchsorted(-span, -np.arange(1, max_span + 1), side="right")
    if banded:  # each candidate's band in each of its rows lo + 1 .. lo + span
        band_row = np.minimum(lo[None, :] + np.arange(1, max_span + 1)[:, None], rows) + (pair * (rows + 1))[None, :]
        band_lo = lo_band.reshape(-1).take(band_row)
        band_hi = hi_band.reshape(-1).take(band_row)
    for step in range(max_span):
        a = int(active[step])
        view = cur[:, :a]
        pen = kernel.penalty(band_lo[step, :a], band_hi[step, :a]) if banded else None
        kernel(view, cand_words[step, :a], cand_refs[:, :a], view, pen)
    # D'[hi, j] + B[hi, j] = G'[hi, j] + j + G_rev[|hyp| - hi, |ref| - j] + |ref| - j, over j <= |ref|
    end_row = ((n_hyp[pair] - lo - span) * width + n_ref[pair]) * both_pairs + n_pairs + pair
    tail = flat.take(end_row[None, :] - column_stride, mode="clip")
    total = cur.astype(np.int32) + tail
    np.copyto(total, 4 * inf, where=kernel.jr > n_ref[pair][None, :])  # columns past the reference
    out = np.empty(len(pair), dtype=np.int64)
    out[order] = total.min(axis=0) + n_ref[pair]
    return out


def _apply_moves(words, lo, span, rot):
    """Rotate each row's words ``[lo, lo + span)`` left by ``rot``."""
    k = np.arange(words.shape[1])[None, :]
    inside = (k >= lo[:, None]) & (k < (lo + span)[:, None])
    src = np.where(inside, lo[:, None] + (k - lo[:, None] + rot[:, None]) % span[:, None], k)
    return np.take_along_axis(words, src, axis=1)


def _search_round(words, refs, n_hyp, n_ref, checked, was_near_band):
    """One greedy round for a batch.

    Returns the current distance, the candidates counted, the best move's
    (gain, lo, span, rot) per pair (gain 0 when there is none to evaluate), and
    which pairs are near the band (their distance reaches a path leaving it).
    ``was_near_band``: the pairs that were in the last round; when they are
    many, the matrices are banded from the start (one pass instead of two).
    """
    n_pairs, rows = words.shape
    dtype, inf = _dtype_and_inf(rows, refs.shape[1])
    lo_band, hi_band = beam_bands(n_hyp, n_ref, rows)
    full_band = _band_is_full(lo_band, hi_band, n_hyp, n_ref)
    # forward matrices, and backward ones as forward matrices of the reversed pairs, in one pass; unless
    # many pairs were near the band, first without it: a pair whose distance stays below every path
    # leaving the band has the banded distance, alignment and candidate distances (see the module's
    # notes), the others run again with it
    rlo, rhi = mirrored_bands(lo_band, hi_band, n_hyp, n_ref)
    both_words = np.concatenate([words, reversed_padded(words, n_hyp, _HYP_PAD)])
    both_refs = np.concatenate([refs, reversed_padded(refs, n_ref, _REF_PAD)])
    both_lo, both_hi = np.concatenate([lo_band, rlo]), np.concatenate([hi_band, rhi])
    banded_first = not full_band and 4 * int(was_near_band.sum()) > n_pairs
    # without the band every value is a real distance, G in [-width, rows]: int8 when that fits
    small = np.int8 if not banded_first and rows < 127 and refs.shape[1] < 126 else dtype
    both = beam_matrices(both_words, both_refs, both_lo, both_hi, not banded_first, small, inf)
    fwd = both[:, :, :n_pairs]
    pid = np.arange(n_pairs)
    now = fwd[n_hyp, n_ref, pid].astype(np.int64) + n_ref
    near = np.zeros(n_pairs, dtype=bool)
    if not full_band:
        exit_cost = band_exit_cost(lo_band, hi_band, n_hyp, n_ref)
        near = now >= exit_cost
        rerun = np.flatnonzero(near)
        if len(rerun) and not banded_first:
            both = both.astype(dtype, copy=False)  # room for the band's 'unreachable'
            fwd = both[:, :, :n_pairs]
            cols = np.concatenate([rerun, rerun + n_pairs])
            both[:, :, cols] = beam_matrices(both_words[cols], both_refs[cols], both_lo[cols], both_hi[cols],
                                             False, dtype, inf)
            now[rerun] = fwd[n_hyp[rerun], n_ref[rerun], rerun] + n_ref[rerun]
    equal = np.zeros(fwd.shape, dtype=bool)  # [i, j, p]: hypothesis word i - 1 is reference word j - 1
    np.equal(words.T[:, None, :], refs.T[None, :, :], out=equal[1:, 1:])
    align, hyp_err, ref_err = trace_alignment(fwd, equal, n_hyp, n_ref)
    counts, c_pair, c_start, c_len, c_target = enumerate_shifts(equal, align, hyp_err, ref_err)
    sel = (checked + counts < MAX_SHIFT_CANDIDATES)[c_pair]
    c_pair, c_start, c_len, c_target = c_pair[sel], c_start[sel], c_len[sel], c_target[sel]
    gain = np.zeros(n_pairs, dtype=np.int64)
    move = np.zeros((3, n_pairs), dtype=np.int64)
    if len(c_pair) == 0:
        return now, counts, gain, move, near
    lo, span, rot = shifted_span(c_start, c_len, c_target, n_hyp[c_pair])
    # Candidates run without the band in their rewritten rows, a relaxation: a distance of at least
    # `now` means no gain either way, and one below every path leaving the band is the banded distance
    # too; the others (only in pairs near the band) run again with it.
    after = candidate_distances(both, words, refs, n_hyp, n_ref, lo_band, hi_band, False,
                                both.dtype.type, inf, c_pair, lo, span, rot)
    if not full_band:
        unsure = np.flatnonzero((after >= exit_cost[c_pair]) & (after < now[c_pair]))
        if len(unsure):
            after[unsure] = candidate_distances(both, words, refs, n_hyp, n_ref, lo_band, hi_band, True, dtype,
                                                inf, c_pair[unsure], lo[unsure], span[unsure], rot[unsure])
    delta = now[c_pair] - after
    order = np.lexsort((-c_target, -c_start, c_len, delta, c_pair))
    last = np.ones(len(order), dtype=bool)
    last[:-1] = c_pair[order][1:] != c_pair[order][:-1]
    best = order[last]
    gain[c_pair[best]] = delta[best]
    move[:, c_pair[best]] = lo[best], span[best], rot[best]
    return now, counts, gain, move, near


def shift_edit_counts(hyps: Sequence[np.ndarray], refs: Sequence[np.ndarray], engine: str = "auto") -> np.ndarray:
    """TER edits (shifts + beam edit distance) of each (hypothesis, reference) pair of word-id arrays.

    Equals ``translation_edit_rate(hyp, ref)[0]`` of sacreBLEU 2.6.0; an empty
    reference costs one edit per hypothesis word. ``engine``: ``"c"`` the
    compiled search (``_ter.c``, one pair at a time), ``"numpy"`` the
    vectorised one of this module, ``"auto"`` the compiled one where it was
    built at install. Both give the same counts (tests/test_ter.py).
    """
    if use_compiled(engine, _compiled, "TER"):
        return _compiled_edit_counts(hyps, refs)
    n = len(hyps)
    n_hyp = np.array([len(x) for x in hyps], dtype=np.int64)
    n_ref = np.array([len(x) for x in refs], dtype=np.int64)
    edits = np.zeros(n, dtype=np.int64)
    if n == 0:
        return edits
    hyp_ids, ref_ids = _joined(hyps), _joined(refs)
    dtype = _id_type(hyp_ids, ref_ids)
    all_words = _padded(hyp_ids, n_hyp, _HYP_PAD, dtype)
    all_refs = _padded(ref_ids, n_ref, _REF_PAD, dtype)
    shifts = np.zeros(n, dtype=np.int64)
    checked = np.zeros(n, dtype=np.int64)
    near_band = np.zeros(n, dtype=bool)  # distance reaching a path that leaves the band, last round
    done = n_ref == 0
    edits[done] = n_hyp[done]
    size_order = np.lexsort((n_hyp, n_ref, np.maximum(n_hyp, n_ref)))
    while True:
        active = size_order[~done[size_order]]
        if len(active) == 0:
            break
        for batch in _batches(active, n_hyp, n_ref):
            h = max(int(n_hyp[batch].max()), 1)
            r = max(int(n_ref[batch].max()), 1)
            words = all_words[batch, :h]
            now, counts, gain, move, near_band[batch] = _search_round(words, all_refs[batch, :r], n_hyp[batch],
                                                                      n_ref[batch], checked[batch], near_band[batch])
            checked[batch] += counts
            stop = (checked[batch] >= MAX_SHIFT_CANDIDATES) | (gain <= 0)
            fin = batch[stop]
            edits[fin] = shifts[fin] + now[stop]
            done[fin] = True
            go = np.flatnonzero(~stop)
            if len(go):
                all_words[batch[go], :h] = _apply_moves(words[go], *move[:, go])
                shifts[batch[go]] += 1
    return edits


def _compiled_edit_counts(hyps: Sequence[np.ndarray], refs: Sequence[np.ndarray]) -> np.ndarray:
    """:func:`shift_edit_counts` by the compiled search: the pairs end to end as int64 arrays and offsets."""
    edits = np.zeros(len(hyps), dtype=np.int64)
    if len(hyps):
        hyp_offsets = np.zeros(len(hyps) + 1, dtype=np.int64)
        ref_offsets = np.zeros(len(refs) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in hyps], out=hyp_offsets[1:])
        np.cumsum([len(x) for x in refs], out=ref_offsets[1:])
        _compiled.edit_counts(_joined(hyps), hyp_offsets, _joined(refs), ref_offsets, edits)
    return edits


def _round_seconds(n_pairs: int, rows: int, width: int) -> float:
    """Rough time of one search round of a batch: a per-round part, a numpy call overhead per row and a
    share per matrix cell (forward and backward), fitted on WMT12 de-en."""
    return 1.5e-3 + rows * (40e-6 + 1e-8 * n_pairs * width)


def _merge_small(batches: List[np.ndarray], n_hyp: np.ndarray, n_ref: np.ndarray) -> List[np.ndarray]:
    """Merge each batch into the next while one round of the merged batch is estimated to cost less than
    one of each (small batches: the per-row overhead outweighs the padding), within the cell budget."""

    def shape(batch):  # pairs, matrix rows, matrix columns
        return len(batch), int(n_hyp[batch].max()) + 1, int(n_ref[batch].max()) + 1

    out: List[np.ndarray] = []
    for batch in batches:
        if out:
            merged = np.concatenate([out[-1], batch])
            n, rows, width = shape(merged)
            separate = _round_seconds(*shape(out[-1])) + _round_seconds(*shape(batch))
            if n * rows * width <= _CELL_BUDGET and _round_seconds(n, rows, width) < separate:
                out[-1] = merged
                continue
        out.append(batch)
    return out


def _joined(seqs: Sequence[np.ndarray]) -> np.ndarray:
    """The word ids of ``seqs`` end to end."""
    return np.concatenate([np.asarray(x, dtype=np.int64) for x in seqs]) if len(seqs) else np.zeros(0, np.int64)


def _id_type(*ids: np.ndarray):
    """The smallest signed integer type holding the word ids ``ids`` and the padding ids (comparing words is the
    search's most frequent operation: int16 halves int32's time)."""
    low = min([_REF_PAD, _HYP_PAD] + [int(x.min()) for x in ids if len(x)])
    high = max([0] + [int(x.max()) for x in ids if len(x)])
    return next(t for t in (np.int16, np.int32, np.int64) if np.iinfo(t).min <= low and high <= np.iinfo(t).max)


def _padded(words: np.ndarray, lengths: np.ndarray, pad: int, dtype) -> np.ndarray:
    """Word ids end to end (``lengths`` of each sequence) as rows of a ``dtype`` matrix, padded with ``pad``."""
    out = np.full((len(lengths), max(int(lengths.max()), 1)), pad, dtype=dtype)
    out[np.arange(out.shape[1])[None, :] < lengths[:, None]] = words
    return out


def _batches(active: np.ndarray, n_hyp: np.ndarray, n_ref: np.ndarray) -> List[np.ndarray]:
    """Group pair ids into batches of similar padded size, each under the cell budget.

    Reference lengths (matrix widths) are grouped by octave and hypothesis
    lengths (rows) within a factor 4: coarse groups, because numpy's per-call
    overhead costs more than the padding (measured on WMT12); then small
    neighbouring groups are merged (:func:`_merge_small`).
    """
    width = n_ref[active] + 1
    rows = n_hyp[active] + 1
    width_class = np.floor(np.log2(width)).astype(np.int64)
    order = np.lexsort((rows, width_class))
    active, width, rows, width_class = active[order], width[order], rows[order], width_class[order]
    out = []
    start, total = 0, len(active)
    while start < total:
        same = (width_class[start:] == width_class[start]) & (rows[start:] <= rows[start] * 4 + 2)
        limit = int(np.argmin(same)) if not same.all() else total - start
        cells = np.arange(1, limit + 1) * rows[start:start + limit] * np.maximum.accumulate(width[start:start + limit])
        stop = start + max(1, int(np.searchsorted(cells, _CELL_BUDGET, side="right")))
        out.append(active[start:stop])
        start = stop
    return _merge_small(out, n_hyp, n_ref)
