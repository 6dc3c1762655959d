"""Word error rate (WER) and position-independent error rate (PER).

WER: word-level Levenshtein distance (substitutions + deletions + insertions)
divided by the reference length; corpus WER = summed edits / summed reference
lengths (jiwer's ``wer`` over a list). PER (Tillmann et al. 1997, §3):
``1 - (matches - max(0, hyp_len - ref_len)) / ref_len`` with ``matches`` the
size of the bag-of-words intersection, i.e. ``max(hyp_len, ref_len) -
matches`` errors per segment; corpus PER = summed errors / summed reference
lengths.

Statistics per row: ``[errors, ref_len]``. Conventions of our own:

* several references: the reference with the fewest errors is used (ties: the
  longer reference, then the first listed);
* empty reference: errors = hypothesis length, ref_len = 0; a rate with
  ``ref_len == 0`` is 0 when there are no errors and 1 otherwise (jiwer
  instead returns the raw insertion count when the whole corpus has no
  reference words);
* rates are not clipped: WER exceeds 1 when the hypothesis is much longer
  than the reference.

Levenshtein distances of all rows are computed together with the
bit-parallel algorithm of Myers (1999) in Hyyrö's (2003) formulation,
vectorised over rows with numpy (64 reference words per machine word, carries
between words), so there is no per-row Python loop.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Sequence

import numpy as np

from ...analysis.ngrams import NgramCounts, pair_matches
from ...analysis.tokenize import TOKENIZERS, get_tokenizer
from ..base import Metric, Option, ReferencePairs, first_best_per_row, safe_divide
from ..registry import register

_RUNS_OF_SPACE = re.compile(r"\s\s+")
_ONE = np.uint64(1)
_TOP = np.uint64(63)


def whitespace_words(text: str) -> List[str]:
    """jiwer's default words: runs of 2+ white-space characters become one space, strip, split on ``" "``.

    A single tab or no-break space therefore stays inside a word, as in jiwer.
    """
    text = _RUNS_OF_SPACE.sub(" ", text).strip()
    return text.split(" ") if text else []


WORD_SPLITTERS: Dict[str, Callable[[str], List[str]]] = {"none": whitespace_words}
for _name in TOKENIZERS:
    if _name != "none":
        WORD_SPLITTERS[_name] = (lambda tok: (lambda text: tok(text).split()))(get_tokenizer(_name))


def _pattern_masks(ids: np.ndarray, ptr: np.ndarray, refs: np.ndarray, n_blocks: int, n_symbols: int):
    """Match masks of each reference (Myers 1999, "Peq"): sorted keys ``(ref, symbol, block)`` and their bits."""
    lengths = ptr[refs + 1] - ptr[refs]
    owner = np.repeat(np.arange(len(refs), dtype=np.int64), lengths)
    offset = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    symbol = ids[np.repeat(ptr[refs], lengths) + offset]
    keys = (owner * n_symbols + symbol) * n_blocks + offset // 64
    bits = np.left_shift(_ONE, (offset % 64).astype(np.uint64))
    order = np.argsort(keys, kind="stable")
    keys, bits = keys[order], bits[order]
    if len(keys) == 0:
        return keys, bits
    start = np.ones(len(keys), dtype=bool)
    start[1:] = keys[1:] != keys[:-1]
    first = np.flatnonzero(start)
    return keys[first], np.bitwise_or.reduceat(bits, first)


def levenshtein_distances(ids: np.ndarray, ptr: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Levenshtein distance between sequences ``left[k]`` and ``right[k]`` for all k (unit costs).

    Sequences are ``ids[ptr[t]:ptr[t+1]]`` (integer symbols). ``right`` is
    the bit-encoded pattern (Myers 1999; Hyyrö 2003, fig. 3 with the global
    first row); pairs are grouped by the number of 64-bit words the pattern
    needs and sorted by ``left`` length so that finished pairs drop out.
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    len_l = ptr[left + 1] - ptr[left]
    len_r = ptr[right + 1] - ptr[right]
    out = np.where(len_r == 0, len_l, len_r).astype(np.int64)  # one side empty: the other's length
    todo = np.flatnonzero((len_l > 0) & (len_r > 0))
    if len(todo) == 0:
        return out
    n_symbols = int(ids.max()) + 1
    blocks = (len_r[todo] + 63) // 64
    for n_blocks in np.unique(blocks).tolist():
        group = todo[blocks == n_blocks]
        group = group[np.argsort(-len_l[group], kind="stable")]  # longest text first
        out[group] = _myers_block(ids, ptr, left[group], right[group], int(n_blocks), n_symbols)
    return out


def _myers_block(ids, ptr, left, right, n_blocks: int, n_symbols: int) -> np.ndarray:
    """Bit-parallel distances for pairs whose pattern fits ``n_blocks`` words; ``left`` sorted by length, descending."""
    n_pairs = len(left)
    len_l = ptr[left + 1] - ptr[left]
    len_r = ptr[right + 1] - ptr[right]
    uniq_refs, ref_slot = np.unique(right, return_inverse=True)
    table_keys, table_bits = _pattern_masks(ids, ptr, uniq_refs, n_blocks, n_symbols)
    # Text symbols laid out position-major: step j holds the pairs still active (len_l > j), in order.
    steps = int(len_l[0])
    active = np.searchsorted(-len_l, -np.arange(steps), side="left")  # pairs with len_l > j
    step_start = np.zeros(steps + 1, dtype=np.int64)
    np.cumsum(active, out=step_start[1:])
    pair_of = np.repeat(np.arange(n_pairs, dtype=np.int64), len_l)
    j_of = np.arange(int(len_l.sum()), dtype=np.int64) - np.repeat(np.cumsum(len_l) - len_l, len_l)
    dest = step_start[j_of] + pair_of
    symbol = np.empty(len(dest), dtype=np.int64)
    symbol[dest] = ids[ptr[left][pair_of] + j_of]
    slot = np.empty(len(dest), dtype=np.int64)
    slot[dest] = ref_slot.ravel()[pair_of]
    base = (slot * n_symbols + symbol) * n_blocks
    eq = np.zeros((len(dest), n_blocks), dtype=np.uint64)
    for b in range(n_blocks):
        want = base + b
        pos = np.minimum(np.searchsorted(table_keys, want), max(len(table_keys) - 1, 0))
        hit = table_keys[pos] == want
        eq[hit, b] = table_bits[pos[hit]]
    last = n_blocks - 1
    last_bit = np.left_shift(_ONE, ((len_r - 1) % 64).astype(np.uint64))
    vp = np.full((n_pairs, n_blocks), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    vn = np.zeros((n_pairs, n_blocks), dtype=np.uint64)
    dist = len_r.astype(np.int64).copy()
    for j in range(steps):
        n = int(active[j])
        e = eq[step_start[j]:step_start[j + 1]]
        p, m = vp[:n], vn[:n]
        x = e | m
        xp = x & p
        if n_blocks == 1:
            total = xp + p
        else:  # multi-word addition, carries from lower to higher words
            total = np.empty_like(p)
            carry = np.zeros(n, dtype=np.uint64)
            for b in range(n_blocks):
                t = xp[:, b] + p[:, b]
                c1 = t < xp[:, b]
                t2 = t + carry
                carry = (c1 | (t2 < t)).astype(np.uint64)
                total[:, b] = t2
        d0 = (total ^ p) | x
        hp = m | ~(d0 | p)
        hn = p & d0
        lb = last_bit[:n]
        dist[:n] += ((hp[:, last] & lb) != 0).astype(np.int64) - ((hn[:, last] & lb) != 0)
        hp_in = np.left_shift(hp, _ONE)
        hn_in = np.left_shift(hn, _ONE)
        hp_in[:, 0] |= _ONE  # first row of the DP grows by one per text symbol (global distance)
        if n_blocks > 1:
            hp_in[:, 1:] |= np.right_shift(hp[:, :-1], _TOP)
            hn_in[:, 1:] |= np.right_shift(hn[:, :-1], _TOP)
        vp[:n] = hn_in | ~(d0 | hp_in)
        vn[:n] = hp_in & d0
    return dist


class _ErrorRate(Metric):
    """Shared machinery of WER and PER: words, per-pair errors, best-reference choice."""

    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = False
    value_range = (0.0, float("inf"))  # a rate, not clipped: insertions can exceed the reference length
    options = {
        "tokenize": Option("none", "word splitting: none (jiwer's white-space split), 13a or intl",
                           choices=tuple(WORD_SPLITTERS), short="tok"),
        "lowercase": Option(False, "lowercase before splitting", short="lc"),
    }

    def words(self, texts: Sequence[str]) -> List[List[str]]:
        split = WORD_SPLITTERS[self.params["tokenize"]]
        if self.params["lowercase"]:
            return [split(t.lower()) for t in texts]
        return [split(t) for t in texts]

    def analyse(self, texts: Sequence[str]) -> NgramCounts:
        return NgramCounts(self.words(texts), 1)

    def pair_errors(self, analysis: NgramCounts, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def statistics(self, analysis: NgramCounts, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        pairs = ReferencePairs.build(self.name, analysis.n_texts, hyp_ids, ref_ptr, ref_ids)
        n_rows = len(hyp_ids)
        errors = self.pair_errors(analysis, pairs.hyp, pairs.ref)[pairs.inverse]
        ref_len = analysis.lengths[np.asarray(ref_ids, dtype=np.int64)].astype(np.float64)
        if len(errors) == n_rows:
            return np.column_stack([errors.astype(np.float64), ref_len])
        pair_row = pairs.pair_row
        chosen = first_best_per_row(pair_row, errors, -ref_len)  # fewest errors, then longest
        out = np.empty((n_rows, 2))
        out[pair_row[chosen], 0] = errors[chosen]
        out[pair_row[chosen], 1] = ref_len[chosen]
        return out

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        errors, ref_len = stats[..., 0], stats[..., 1]
        out = np.where(ref_len > 0, safe_divide(errors, ref_len), (errors > 0).astype(np.float64))
        return out if np.ndim(stats) > 1 else float(out)


@register("wer")
class WER(_ErrorRate):
    """Word error rate: word Levenshtein distance / reference length (corpus: summed edits / summed lengths).

    Matches jiwer's ``wer`` with its default transform (``tokenize="none"``).
    Not clipped: it exceeds 1 when the hypothesis has many extra words.
    """

    citation = "Levenshtein 1966; WER as in jiwer 4.0; bit-parallel distance: Myers 1999, Hyyrö 2003"

    def pair_errors(self, analysis: NgramCounts, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        ptr = np.zeros(analysis.n_texts + 1, dtype=np.int64)
        np.cumsum(analysis.lengths, out=ptr[1:])
        return levenshtein_distances(analysis.ngram_ids[0], ptr, hyp, ref)


@register("per")
class PER(_ErrorRate):
    """Position-independent error rate (Tillmann et al. 1997): ``max(hyp_len, ref_len) - matches`` over ref_len.

    ``matches`` is the bag-of-words intersection ``sum_w min(#w(hyp), #w(ref))``.
    """

    citation = "Tillmann et al. 1997, 'Accelerated DP based search for statistical translation', §3 (PER)"

    def pair_errors(self, analysis: NgramCounts, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        matches = pair_matches(analysis.matrices[0], hyp, ref)
        lengths = analysis.lengths
        return np.maximum(lengths[hyp], lengths[ref]) - matches
