"""ROUGE (Lin 2004): ROUGE-N, ROUGE-L, ROUGE-W, ROUGE-S* and ROUGE-SU*.

Every variant scores a hypothesis (candidate) Y of ``n`` tokens against a
reference X of ``m`` tokens by a precision P, a recall R and
``F = (1 + beta^2) R P / (R + beta^2 P)`` (Lin 2004, eq. 2-4 and the same form
in §3-5). With several references a segment keeps the reference with the best
F (first one on ties) and reports its P, R or F, as rouge-score's
``score_multi``; ROUGE-1.5.5's averaging over models (``-f A``) and the
jackknifing of Lin 2004 §2.1 are not implemented. The corpus score is the mean
of the segment scores (statistics ``[score, 1]``), as ROUGE-1.5.5 by default.
An empty hypothesis or reference scores 0. Reference weights are ignored.

* ROUGE-N (eq. 1): clipped n-gram matches over the n-gram counts of X (R) or Y (P).
* ROUGE-L (§3.1, eq. 2-4): LCS(X, Y) / m and / n. The LCS length is computed
  bit-parallel (Allison & Dix 1986; Hyyrö 2004): one big-integer update per
  hypothesis token instead of an m x n table.
* ROUGE-W (§3.2, eq. 5-7): weighted LCS with ``f(k) = k^w``;
  ``R = f^-1(WLCS / f(m))``, ``P = f^-1(WLCS / f(n))``.
* ROUGE-S* / ROUGE-Sd (§5, eq. 8-10): skip-bigram matches over C(m, 2) and
  C(n, 2), or over the skip-bigrams with at most ``max_skip`` words in between.
* ROUGE-SU (§5.1): skip-bigrams plus unigrams.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ...errors import InputError
from ...analysis.ngrams import NgramCounts, Vocabulary, pair_matches
from ...analysis.porter import porter_stem
from ...analysis.tokenize import TOKENIZERS, get_tokenizer
from ..base import Metric, Option, safe_divide
from ..registry import register

_VALID_TOKEN = re.compile(r"[a-z0-9]+")
# byte table keeping a-z and 0-9 and turning every other byte into a space; applied to the lowercased
# text encoded as ASCII with "?" for any other character, it replaces whatever is not [a-z0-9] by spaces
_KEEP_ALPHANUMERIC = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))


@lru_cache(maxsize=2 ** 18)
def rouge_tokens(line: str) -> Tuple[str, ...]:
    """Tokens of rouge-score's default tokenizer: lowercase, every character other than [a-z0-9] a separator."""
    return tuple(line.lower().encode("ascii", "replace").translate(_KEEP_ALPHANUMERIC).decode("ascii").split())


def tokenize_rouge(line: str) -> str:
    """rouge-score's default tokenizer as a string of space-separated tokens."""
    return " ".join(rouge_tokens(line))


def rouge_stem(token: str) -> str:
    """The Porter stem (:mod:`combo.analysis.porter`, NLTK's default mode, memoised there) as rouge-score applies
    it: only to tokens longer than 3 characters."""
    return token if len(token) <= 3 else porter_stem(token)


@lru_cache(maxsize=2 ** 18)
def rouge_stemmed_tokens(line: str) -> Tuple[str, ...]:
    """rouge-score's tokens with ``use_stemmer=True``: stemmed, then anything not [a-z0-9]+ dropped."""
    stems = (rouge_stem(t) for t in rouge_tokens(line))
    return tuple(t for t in stems if _VALID_TOKEN.fullmatch(t))


def f_beta(precision: np.ndarray, recall: np.ndarray, beta: float) -> np.ndarray:
    """``(1 + beta^2) P R / (R + beta^2 P)``, 0 where P = R = 0 (Lin 2004, eq. 4)."""
    b2 = beta * beta
    return safe_divide((1.0 + b2) * precision * recall, recall + b2 * precision)


# -- ROUGE-L: bit-parallel LCS ------------------------------------------------------------------

def position_masks(tokens: Sequence[str]) -> Dict[str, int]:
    """Token -> bit mask of its positions in ``tokens`` (bit i set when ``tokens[i]`` is that token)."""
    masks: Dict[str, int] = {}
    for i, tok in enumerate(tokens):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    return masks


def lcs_length(masks: Dict[str, int], length: int, other: Sequence[str]) -> int:
    """Length of the LCS of a text (given by its ``position_masks`` and ``length``) and ``other``.

    Bit-parallel LCS (Allison & Dix 1986; Hyyrö 2004): after each token of
    ``other`` (positions ``mask`` in the text), ``u = v & mask;
    v = (v + u) | (v - u)``, the zero bits among the low ``length`` bits of
    ``v`` mark the rows where the current column of the LCS table steps up by
    one, so their number is the LCS length. Carries only travel upwards, so
    the bits above ``length`` are masked once at the end.
    """
    full = (1 << length) - 1
    v = full
    get = masks.get
    for tok in other:
        mask = get(tok)
        if mask is not None:
            u = v & mask
            v = (v + u) | (v - u)
    return length - (v & full).bit_count()


# -- ROUGE-W: weighted LCS ----------------------------------------------------------------------

def weighted_lcs(refs: Sequence[np.ndarray], hyps: Sequence[np.ndarray], weight: float,
                 chunk: int = 2048) -> np.ndarray:
    """WLCS(X, Y) of each pair (Lin 2004, §3.2 algorithm) with ``f(k) = k^weight``.

    The dynamic programme of the paper, vectorised over pairs: pairs of
    similar lengths are padded into blocks, the (i, j) loop runs once per block.
    ``c(i,j) = c(i-1,j-1) + f(k+1) - f(k)`` with ``k = w(i-1,j-1)`` on a match,
    else ``max(c(i-1,j), c(i,j-1))`` with ``w(i,j) = 0``.
    """
    n_pairs = len(refs)
    out = np.zeros(n_pairs)
    m = np.fromiter((len(x) for x in refs), dtype=np.int64, count=n_pairs)
    n = np.fromiter((len(y) for y in hyps), dtype=np.int64, count=n_pairs)
    live = np.flatnonzero((m > 0) & (n > 0))
    if len(live) == 0:
        return out
    live = live[np.lexsort((n[live], m[live]))]
    longest = int(min(m.max(), n.max()))
    k = np.arange(longest + 2, dtype=np.float64)
    gain = k[1:] ** weight - k[:-1] ** weight  # f(k+1) - f(k), k = 0..longest
    for start in range(0, len(live), chunk):
        block = live[start:start + chunk]
        bm, bn = m[block], n[block]
        rows, cols = int(bm.max()), int(bn.max())
        size = len(block)
        x = np.full((size, rows), -1, dtype=np.int64)
        y = np.full((size, cols), -2, dtype=np.int64)
        for b, p in enumerate(block.tolist()):
            x[b, :m[p]] = refs[p]
            y[b, :n[p]] = hyps[p]
        c_prev = np.zeros((size, cols + 1))
        w_prev = np.zeros((size, cols + 1), dtype=np.int64)
        ends_at = np.bincount(bm, minlength=rows + 1)
        for i in range(1, rows + 1):
            match = x[:, i - 1:i] == y
            run = w_prev[:, :-1]
            diag = c_prev[:, :-1] + gain[run]
            up = c_prev[:, 1:]
            c_cur = np.zeros((size, cols + 1))
            for j in range(1, cols + 1):
                c_cur[:, j] = np.where(match[:, j - 1], diag[:, j - 1], np.maximum(up[:, j - 1], c_cur[:, j - 1]))
            w_cur = np.zeros((size, cols + 1), dtype=np.int64)
            w_cur[:, 1:] = np.where(match, run + 1, 0)
            if ends_at[i]:
                done = np.flatnonzero(bm == i)
                out[block[done]] = c_cur[done, bn[done]]
            c_prev, w_prev = c_cur, w_cur
    return out


# -- ROUGE-S / ROUGE-SU: sparse skip-bigram counts ----------------------------------------------

def skip_bigram_totals(lengths: np.ndarray, max_skip: int, unigrams: bool) -> np.ndarray:
    """Skip-bigrams (plus unigrams) in texts of ``lengths`` tokens: C(L, 2) when unlimited (Lin 2004, eq. 8-9)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    reach = np.maximum(lengths - 1, 0)
    if max_skip >= 0:
        reach = np.minimum(reach, max_skip + 1)
    # distances 1..reach, each found L - d times
    totals = reach * lengths - reach * (reach + 1) // 2
    return totals + lengths if unigrams else totals


def skip_bigram_counts(ids: np.ndarray, ptr: np.ndarray, vocabulary_size: int, max_skip: int,
                       unigrams: bool, chunk_units: int = 1 << 22) -> Tuple[sparse.csr_matrix, np.ndarray]:
    """Skip-bigram counts of each text: token pairs (i < j) with ``j - i - 1 <= max_skip`` (all when negative).

    With ``unigrams`` every token is also counted on its own (ROUGE-SU). A
    skip-bigram (a, b) is column ``a * V + b``, a unigram a column ``V * V + a``.
    Texts are taken in chunks of about ``chunk_units`` units: one sort of the
    int64 codes (text, unit) of a chunk lists each text's units in order, and
    the counts are run lengths. Returns the sparse matrix and the units per text.
    """
    n_texts = len(ptr) - 1
    lengths = np.diff(ptr)
    totals = skip_bigram_totals(lengths, max_skip, unigrams)
    base = np.int64(vocabulary_size)
    width = max(int(vocabulary_size) ** 2 + int(vocabulary_size), 1)
    max_texts = max(1, (1 << 62) // width)  # codes of a chunk must fit in int64
    cumulative = np.cumsum(totals)
    data: List[np.ndarray] = []
    columns: List[np.ndarray] = []
    per_text = np.zeros(n_texts, dtype=np.int64)
    start = 0
    while start < n_texts:
        done_units = cumulative[start - 1] if start else 0
        end = int(np.searchsorted(cumulative, done_units + chunk_units, side="right"))
        end = min(max(end, start + 1), start + max_texts, n_texts)
        lo, hi = int(ptr[start]), int(ptr[end])
        chunk_ids = ids[lo:hi].astype(np.int64)
        chunk_lengths = lengths[start:end]
        local_text = np.repeat(np.arange(end - start, dtype=np.int64), chunk_lengths)
        text_code = local_text * np.int64(width)
        head = text_code + chunk_ids * base
        position = np.arange(hi - lo, dtype=np.int64)
        text_end = np.repeat(ptr[start + 1:end + 1] - lo, chunk_lengths)
        codes: List[np.ndarray] = []
        distance = 0
        while max_skip < 0 or distance <= max_skip:
            distance += 1
            alive = position + distance < text_end  # this set only shrinks as the distance grows
            position, text_end = position[alive], text_end[alive]
            if len(position) == 0:
                break
            codes.append(head[position] + chunk_ids[position + distance])
        if unigrams:
            codes.append(text_code + base * base + chunk_ids)
        if codes:
            code = np.sort(np.concatenate(codes))
            if len(code):
                first = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
                data.append(np.diff(np.r_[first, len(code)]).astype(np.float64))
                distinct = code[first]
                text_ptr = np.searchsorted(distinct, np.arange(end - start + 1, dtype=np.int64) * np.int64(width))
                sizes = np.diff(text_ptr)
                columns.append(distinct - np.repeat(np.arange(end - start, dtype=np.int64) * np.int64(width), sizes))
                per_text[start:end] = sizes
        start = end
    indptr = np.zeros(n_texts + 1, dtype=np.int64)
    np.cumsum(per_text, out=indptr[1:])
    if data:
        mat = sparse.csr_matrix((np.concatenate(data), np.concatenate(columns), indptr), shape=(n_texts, width))
    else:
        mat = sparse.csr_matrix((n_texts, width))
    return mat, totals.astype(np.float64)


# -- the metrics --------------------------------------------------------------------------------

class TokenAnalysis:
    """Token tuples of the distinct texts; integer ids (made on first use) and what a variant derives from them."""

    def __init__(self, tokens: List[Tuple[str, ...]]):
        self.tokens = tokens
        self.lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
        self.extra: Dict[str, object] = {}
        self._encoded: Optional[Tuple[Vocabulary, np.ndarray, np.ndarray]] = None

    def encoded(self) -> Tuple[Vocabulary, np.ndarray, np.ndarray]:
        """The vocabulary, the flat token-id array and its CSR offsets (text ``t`` is ``ids[ptr[t]:ptr[t+1]]``)."""
        if self._encoded is None:
            vocabulary = Vocabulary()
            ids, ptr = vocabulary.encode(self.tokens)
            self._encoded = (vocabulary, ids, ptr)
        return self._encoded


_COMMON_OPTIONS = {
    "tokenize": Option("rouge", "tokenizer: rouge (rouge-score's: lowercase, non [a-z0-9] as spaces) or a "
                       "combo tokenizer applied to the lowercased text", choices=("rouge",) + tuple(TOKENIZERS),
                       short="tok"),
    "use_stemmer": Option(False, "Porter-stem tokens longer than 3 characters (rouge-score's use_stemmer)",
                          short="stem"),
    "measure": Option("f", "reported measure: f (F-beta), p (precision) or r (recall)", choices=("f", "p", "r"),
                      short="m"),
    "beta": Option(1.0, "beta of the F measure (recall beta times as important as precision)",
                   check=lambda v: isinstance(v, (int, float)) and v > 0, short="b"),
}


class RougeBase(Metric):
    """Shared machinery of the ROUGE variants: tokens, best reference by F, ``[score, 1]`` statistics."""

    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = True
    options = dict(_COMMON_OPTIONS)

    def _post_init(self) -> None:
        tok = self.params["tokenize"]
        self._tokenizer = rouge_tokens if tok == "rouge" else get_tokenizer(tok)

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        if self.params["use_stemmer"]:
            return ("en",), "the Porter stemmer is English"
        if self.params["tokenize"] == "rouge":
            return ("en",), ("rouge-score's tokenizer keeps only the letters a-z and digits "
                             "(tokenize=13a reads any language)")
        return (), ""

    def tokens(self, texts: Sequence[str]) -> List[Tuple[str, ...]]:
        """Token tuples of ``texts`` (lowercased; stemmed when asked)."""
        for k, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"{self.name}: text {k} is a {type(text).__name__}, not a string")
        stem = self.params["use_stemmer"]
        if self.params["tokenize"] == "rouge":
            return [rouge_stemmed_tokens(t) for t in texts] if stem else [rouge_tokens(t) for t in texts]
        tok = self._tokenizer
        out = [tuple(tok(t.lower()).split()) for t in texts]
        if stem:
            out = [tuple(rouge_stem(w) for w in toks) for toks in out]
        return out

    def analyse(self, texts: Sequence[str]) -> TokenAnalysis:
        return TokenAnalysis(self.tokens(texts))

    def precision_recall(self, analysis: TokenAnalysis, hyp: np.ndarray, ref: np.ndarray
                         ) -> Tuple[np.ndarray, np.ndarray]:
        """Precision and recall of each pair (hypothesis text ``hyp[k]``, reference text ``ref[k]``)."""
        raise NotImplementedError

    def statistics(self, analysis: TokenAnalysis, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ptr = np.asarray(ref_ptr, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        rows = len(hyp_ids)
        stats = np.zeros((rows, 2))
        stats[:, 1] = 1.0
        sizes = np.diff(ref_ptr)
        if len(ref_ids) == 0:
            return stats
        pair_row = np.repeat(np.arange(rows, dtype=np.int64), sizes)
        n_texts = np.int64(len(analysis.tokens))
        key = hyp_ids[pair_row] * n_texts + ref_ids
        uniq, inverse = np.unique(key, return_inverse=True)
        precision, recall = self.precision_recall(analysis, uniq // n_texts, uniq % n_texts)
        precision, recall = precision[inverse.ravel()], recall[inverse.ravel()]
        f = f_beta(precision, recall, self.params["beta"])
        value = {"f": f, "p": precision, "r": recall}[self.params["measure"]]
        # the best reference of each row by F, the first one on ties (rouge-score's score_multi)
        nonempty = np.flatnonzero(sizes > 0)
        best_f = np.maximum.reduceat(f, ref_ptr[nonempty])
        best_of_pair = np.zeros(rows)
        best_of_pair[nonempty] = best_f
        hits = np.flatnonzero(f == best_of_pair[pair_row])
        first_rows, first = np.unique(pair_row[hits], return_index=True)
        stats[first_rows, 0] = value[hits[first]]
        return stats

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        return safe_divide(stats[..., 0], stats[..., 1])


@register("rouge-n")
class RougeN(RougeBase):
    """ROUGE-N (Lin 2004, eq. 1): clipped n-gram matches over the reference's (R) or hypothesis's (P) n-grams."""

    citation = "Lin 2004, ROUGE: A Package for Automatic Evaluation of Summaries, §2 eq. 1"
    options = {
        "n": Option(1, "n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9),
        **_COMMON_OPTIONS,
    }

    def analyse(self, texts: Sequence[str]) -> TokenAnalysis:
        analysis = super().analyse(texts)
        analysis.extra["counts"] = NgramCounts(analysis.tokens, self.params["n"])
        return analysis

    def precision_recall(self, analysis, hyp, ref):
        counts: NgramCounts = analysis.extra["counts"]
        n = self.params["n"]
        matches = pair_matches(counts.matrices[n - 1], hyp, ref)
        totals = counts.totals(n).astype(np.float64)
        return safe_divide(matches, totals[hyp]), safe_divide(matches, totals[ref])


@register("rouge-1")
class Rouge1(RougeN):
    """ROUGE-1: ROUGE-N with unigrams (Lin 2004, eq. 1)."""

    options = {**RougeN.options, "n": Option(1, "n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9)}


@register("rouge-2")
class Rouge2(RougeN):
    """ROUGE-2: ROUGE-N with bigrams (Lin 2004, eq. 1)."""

    options = {**RougeN.options, "n": Option(2, "n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9)}


@register("rouge-l")
class RougeL(RougeBase):
    """ROUGE-L (Lin 2004, §3.1 eq. 2-4): R = LCS/m, P = LCS/n, LCS length computed bit-parallel."""

    citation = "Lin 2004, §3.1 eq. 2-4; bit-parallel LCS: Allison & Dix 1986, Hyyrö 2004"

    def precision_recall(self, analysis, hyp, ref):
        tokens = analysis.tokens
        lengths = analysis.lengths
        order = np.argsort(ref, kind="stable")
        lcs = np.zeros(len(hyp), dtype=np.float64)
        masks: Dict[int, Dict[str, int]] = {}
        for k, h, r in zip(order.tolist(), hyp[order].tolist(), ref[order].tolist()):
            table = masks.get(r)
            if table is None:
                masks.clear()  # pairs are sorted by reference: its masks are never needed again
                table = masks[r] = position_masks(tokens[r])
            lcs[k] = lcs_length(table, len(tokens[r]), tokens[h])
        return safe_divide(lcs, lengths[hyp]), safe_divide(lcs, lengths[ref])


@register("rouge-w")
class RougeW(RougeBase):
    """ROUGE-W (Lin 2004, §3.2 eq. 5-7): weighted LCS with f(k) = k^w, R = f^-1(WLCS/f(m)), P = f^-1(WLCS/f(n))."""

    citation = "Lin 2004, §3.2 eq. 5-7 (WLCS algorithm of §3.2)"
    options = {
        "weight": Option(1.2, "w of the weighting function f(k) = k^w (w > 1 rewards consecutive matches)",
                         check=lambda v: isinstance(v, (int, float)) and v >= 1, short="w"),
        **_COMMON_OPTIONS,
    }

    def precision_recall(self, analysis, hyp, ref):
        w = self.params["weight"]
        _, ids, ptr = analysis.encoded()
        refs = [ids[ptr[r]:ptr[r + 1]] for r in ref.tolist()]
        hyps = [ids[ptr[h]:ptr[h + 1]] for h in hyp.tolist()]
        wlcs = weighted_lcs(refs, hyps, w)
        lengths = analysis.lengths.astype(np.float64)
        recall = safe_divide(wlcs, lengths[ref] ** w) ** (1.0 / w)
        precision = safe_divide(wlcs, lengths[hyp] ** w) ** (1.0 / w)
        return precision, recall


@register("rouge-s")
class RougeS(RougeBase):
    """ROUGE-S* (Lin 2004, §5 eq. 8-10): skip-bigram matches over C(m,2) and C(n,2); ROUGE-Sd with ``max_skip=d``."""

    citation = "Lin 2004, §5 eq. 8-10"
    with_unigrams = False
    options = {
        "max_skip": Option(-1, "most words allowed between the two words of a skip-bigram (-1: unlimited, ROUGE-S*)",
                           check=lambda v: isinstance(v, int) and v >= -1, short="skip"),
        **_COMMON_OPTIONS,
    }

    def analyse(self, texts: Sequence[str]) -> TokenAnalysis:
        analysis = super().analyse(texts)
        vocabulary, ids, ptr = analysis.encoded()
        mat, totals = skip_bigram_counts(ids, ptr, len(vocabulary),
                                         self.params["max_skip"], self.with_unigrams)
        analysis.extra["counts"], analysis.extra["totals"] = mat, totals
        return analysis

    def precision_recall(self, analysis, hyp, ref):
        mat, totals = analysis.extra["counts"], analysis.extra["totals"]
        matches = pair_matches(mat, hyp, ref)
        return safe_divide(matches, totals[hyp]), safe_divide(matches, totals[ref])


@register("rouge-su")
class RougeSU(RougeS):
    """ROUGE-SU* (Lin 2004, §5.1): ROUGE-S with unigrams counted as well (denominators C(m,2) + m and C(n,2) + n)."""

    citation = "Lin 2004, §5.1"
    with_unigrams = True


def coco_rouge_l(candidates: Sequence[str], references: Sequence[Sequence[str]], beta: float = 1.2,
                 tokenize: str = "coco") -> np.ndarray:
    """coco-caption's ROUGE-L of each candidate (``pycocoevalcap.rouge.Rouge.calc_score``): the LCS precision
    and recall against every reference, the largest precision and the largest recall (each may come from a
    different reference), and ``(1 + beta^2) P R / (R + beta^2 P)`` of the two, beta 1.2; 0 when either is 0.

    The registered ``rouge-l`` keeps instead the one reference with the best F and reports its F
    (rouge-score's ``score_multi``), so the two differ whenever the most precise reference is not the one
    with the best recall. Tokens are ``tokenize``'s (default ``coco``: coco-caption's PTB tokens); the same
    operations as coco-caption, in the same order, give the same floating-point scores.
    """
    if len(candidates) != len(references):
        raise InputError(f"coco ROUGE-L: {len(candidates)} candidates but {len(references)} reference lists",
                         fix="give one list of references per candidate")
    metric = RougeL(tokenize=tokenize)
    texts: List[str] = []
    index: Dict[str, int] = {}

    def text_id(text: str) -> int:
        if text not in index:
            index[text] = len(texts)
            texts.append(text)
        return index[text]

    hyp, ref, row = [], [], []
    for i, (candidate, refs) in enumerate(zip(candidates, references)):
        for r in refs:
            hyp.append(text_id(candidate))
            ref.append(text_id(r))
            row.append(i)
    best_p = np.zeros(len(candidates))
    best_r = np.zeros(len(candidates))
    if hyp:
        from ..base import analysis_scope

        with analysis_scope():
            analysis = metric.analyse(texts)
        precision, recall = metric.precision_recall(analysis, np.asarray(hyp, dtype=np.int64),
                                                    np.asarray(ref, dtype=np.int64))
        np.maximum.at(best_p, np.asarray(row), precision)
        np.maximum.at(best_r, np.asarray(row), recall)
    b2 = beta ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        score = ((1 + b2) * best_p * best_r) / (best_r + b2 * best_p)
    return np.where((best_p != 0) & (best_r != 0), score, 0.0)
