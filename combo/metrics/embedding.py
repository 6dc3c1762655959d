"""Embedding metrics: cosines of word-vector compositions and of sentence embeddings.

The three word-vector metrics are those of Liu et al. (2016, §3.2), as
nlg-eval (Sharma et al. 2017, ``nlgeval/word2vec/evaluate.py``) computes
them, with e_w the vector of word w and cos the cosine:

* ``emb-avg``: cos(sum_{w in h} e_w, sum_{w in r} e_w) (the mean's direction;
  nlg-eval's EmbeddingAverageCosineSimilarity, MUTT's W2V-AVG);
* ``emb-greedy``: (G(h, r) + G(r, h)) / 2 with
  G(a, b) = mean_{w in a} max_{v in b} cos(e_w, e_v) (Rus & Lintean 2012;
  nlg-eval's GreedyMatchingScore);
* ``emb-extrema``: cos of the vector extrema (Forgues et al. 2014): per
  dimension the value of largest absolute value over the words, the minimum
  on a tie (nlg-eval's VectorExtremaCosineSimilarity);

and ``sent-emb`` is the cosine of two all-MiniLM-L6-v2 sentence embeddings
(Reimers & Gurevych 2019).

Several references: the best (max) score, as nlg-eval. Statistics per row
``[score, 1]``: the corpus score is the mean of the segment scores.
Differences from nlg-eval, on purpose: words the table lacks are skipped
(nlg-eval gives them the mean vector of the table), a side with no known word
(or an empty text) scores 0 (nlg-eval fails an assertion on an empty text),
texts are tokenised with 13a and lowercased (nlg-eval: NLTK's word_tokenize,
case kept, so capitalised words miss the lowercased GloVe 6B), and an
extremum whose dimension has minimum exactly 0 takes the maximum (nlg-eval
returns 0 there). Reference weights are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ..analysis.embeddings import (GLOVE_6B_50D, MINILM, SENTENCE_ENCODERS, check_sentence_encoder, check_vectors,
                                   load_vectors, vectors_digest, vectors_spec_ok)
from ..analysis.layers import annotate
from ..analysis.tokenize import TOKENIZERS, tokenize_all
from .base import Option, safe_divide
from .pairwise_metric import PairwiseMetric
from .registry import register

_CELLS_PER_BLOCK = 1 << 22  # similarity cells computed at once by the greedy matching


@dataclass
class WordVectorAnalysis:
    """The known words of each distinct text as rows of a small table of the word types in use.

    ``tok[ptr[t]:ptr[t+1]]`` are the words of text ``t`` that the vector
    table knows, in order, as rows of ``type_vectors``.
    """

    ptr: np.ndarray
    tok: np.ndarray
    type_vectors: np.ndarray  # (distinct known words, dim), float64
    text_vectors: Optional[np.ndarray] = None  # unit vector per text (zeros: no known word)
    extra: Dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_texts(self) -> int:
        return len(self.ptr) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.ptr)

    def counts(self) -> sparse.csr_matrix:
        """(texts x types) bag-of-words counts."""
        data = np.ones(len(self.tok))
        mat = sparse.csr_matrix((data, self.tok, self.ptr), shape=(self.n_texts, len(self.type_vectors)))
        mat.sum_duplicates()
        return mat


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Each row divided by its Euclidean norm; a zero row stays zero."""
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return safe_divide(x, norm)


def pair_cosines(unit: np.ndarray, left: np.ndarray, right: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """Dot products ``unit[left[k]] . unit[right[k]]`` (cosines of unit rows; 0 with a zero row), in [-1, 1]."""
    out = np.empty(len(left))
    for s in range(0, len(left), block):
        out[s:s + block] = np.einsum("ij,ij->i", unit[left[s:s + block]], unit[right[s:s + block]])
    return np.clip(out, -1.0, 1.0)


def length_bins(lengths: np.ndarray) -> np.ndarray:
    """Lengths rounded up to a coarse grid (steps of a quarter of the power of two below), for padding."""
    lengths = np.asarray(lengths, dtype=np.int64)
    step = np.maximum(1, (2 ** np.floor(np.log2(np.maximum(lengths, 1))).astype(np.int64)) // 4)
    return -(-lengths // step) * step


def padded_tokens(ptr: np.ndarray, tok: np.ndarray, texts: np.ndarray, width: int) -> np.ndarray:
    """(len(texts), width) type ids of each text's words, -1 beyond its length."""
    lens = ptr[texts + 1] - ptr[texts]
    pos = np.arange(width)
    valid = pos[None, :] < lens[:, None]
    idx = np.where(valid, ptr[texts][:, None] + pos[None, :], 0)
    return np.where(valid, tok[idx] if len(tok) else -1, -1)


def greedy_matching(analysis: WordVectorAnalysis, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Greedy matching score of each (hyp, ref) text pair (Rus & Lintean 2012; Liu et al. 2016, §3.2).

    Pairs are grouped by padded lengths; each group is one batched matrix
    product of unit word vectors, padding masked out with -inf.
    """
    unit = analysis.extra["unit_types"]
    lens = analysis.lengths
    out = np.zeros(len(hyp))
    live = np.flatnonzero((lens[hyp] > 0) & (lens[ref] > 0))
    if len(live) == 0:
        return out
    bh, br = length_bins(lens[hyp[live]]), length_bins(lens[ref[live]])
    key = bh * (int(br.max()) + 1) + br
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
    ends = np.r_[starts[1:], len(order)]
    padded = np.vstack([unit, np.zeros((1, unit.shape[1]))])  # row -1: padding
    for s, e in zip(starts, ends):
        members = live[order[s:e]]
        wh, wr = int(bh[order[s]]), int(br[order[s]])
        chunk = max(1, _CELLS_PER_BLOCK // (wh * wr))
        for c in range(0, len(members), chunk):
            m = members[c:c + chunk]
            th = padded_tokens(analysis.ptr, analysis.tok, hyp[m], wh)
            tr = padded_tokens(analysis.ptr, analysis.tok, ref[m], wr)
            sim = np.matmul(padded[th], padded[tr].transpose(0, 2, 1))
            vh, vr = th >= 0, tr >= 0
            sim[~vh] = -np.inf
            sim.transpose(0, 2, 1)[~vr] = -np.inf
            to_ref = np.where(vh, sim.max(axis=2), 0.0).sum(axis=1) / lens[hyp[m]]
            to_hyp = np.where(vr, sim.max(axis=1), 0.0).sum(axis=1) / lens[ref[m]]
            out[m] = (to_ref + to_hyp) / 2
    return np.clip(out, -1.0, 1.0)


def vector_extrema(analysis: WordVectorAnalysis, block: int = 1 << 18) -> np.ndarray:
    """Per text and dimension the value of largest absolute value over its words, the minimum on a tie.

    (Forgues et al. 2014; Liu et al. 2016, §3.2.) Texts without a known word get zeros.
    """
    dim = analysis.type_vectors.shape[1]
    out = np.zeros((analysis.n_texts, dim))
    lens = analysis.lengths
    texts = np.flatnonzero(lens > 0)
    t = 0
    while t < len(texts):  # blocks of whole texts, about ``block`` words each
        stop = int(np.searchsorted(analysis.ptr[texts + 1], analysis.ptr[texts[t]] + block, side="right"))
        group = texts[t:max(stop, t + 1)]
        lo, hi = analysis.ptr[group[0]], analysis.ptr[group[-1] + 1]
        # words as columns: each reduction then runs along a contiguous row (0.06 s instead of 0.11 on the
        # 4,800-candidate WMT12 slice's 108,000 known words); a maximum and a minimum are exact in any layout
        vecs = analysis.type_vectors[analysis.tok[lo:hi]].T.copy()
        starts = analysis.ptr[group] - lo  # empty texts are not in ``group``: segments are exact
        mx = np.maximum.reduceat(vecs, starts, axis=1)
        mn = np.minimum.reduceat(vecs, starts, axis=1)
        out[group] = np.where(mx > -mn, mx, mn).T
        t += len(group)
    return out


class WordVectorMetric(PairwiseMetric):
    """Shared machinery of the word-vector metrics: tokenise, look up, compose, compare (best reference)."""

    locality = "row"  # each text analysed alone: chunked scoring gives the same statistics (tests/test_scale.py)

    family = "embedding"
    higher_is_better = True
    value_range = (-1.0, 1.0)
    resources = ("glove-6b-50d",)
    languages = ("en",)
    language_note = "GloVe 6B is an English vocabulary (vectors=<file> takes any language's vectors)"
    options = {
        "vectors": Option(GLOVE_6B_50D, "word vectors: glove-6b-50d or the path of a word2vec/GloVe text file",
                          check=vectors_spec_ok, short="vec"),
        "tokenize": Option("13a", "tokenizer", choices=tuple(TOKENIZERS), short="tok"),
        "lowercase": Option(True, "lowercase before tokenizing (GloVe 6B is lowercased)", short="lc"),
    }

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        return super().language_support() if self.params["vectors"] == GLOVE_6B_50D else ((), "")

    def check_resources(self) -> None:
        check_vectors(self.params["vectors"])

    def file_digests(self) -> List[str]:
        digest = vectors_digest(self.params["vectors"])  # "" for the packaged table: its version is recorded
        return [f"vectors:sha256:{digest}"] if digest else []

    def analyse(self, texts: Sequence[str]) -> WordVectorAnalysis:
        table = load_vectors(self.params["vectors"])
        tokens = tokenize_all(texts, self.params["tokenize"], self.params["lowercase"])
        flat = [w for ws in tokens for w in ws]
        rows = table.lookup(flat, None if table.rows_layer is None else partial(annotate, table.rows_layer))
        known = rows >= 0
        owner = np.repeat(np.arange(len(texts)), [len(ws) for ws in tokens])[known]
        types, tok = np.unique(rows[known], return_inverse=True)
        ptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner, minlength=len(texts)), out=ptr[1:])
        analysis = WordVectorAnalysis(ptr, tok.ravel().astype(np.int64), table.rows(types))
        self.compose(analysis)
        return analysis

    def compose(self, analysis: WordVectorAnalysis) -> None:
        """Add what :meth:`compare` needs to ``analysis``."""

    def n_texts(self, analysis: WordVectorAnalysis) -> int:
        return analysis.n_texts

    def compare(self, analysis: WordVectorAnalysis, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Cosine of the composed text vectors of each (hyp, ref) text pair."""
        return pair_cosines(analysis.text_vectors, hyp, ref)


@register("emb-avg")
class EmbeddingAverage(WordVectorMetric):
    """Embedding average: cosine of the mean word vectors (Liu et al. 2016, §3.2; nlg-eval, MUTT's W2V-AVG)."""

    citation = ("Liu et al. 2016, §3.2 (embedding average); nlg-eval's EmbeddingAverageCosineSimilarity "
                "(Sharma et al. 2017); MUTT's W2V-AVG (Boag et al. 2016)")

    def compose(self, analysis: WordVectorAnalysis) -> None:
        analysis.text_vectors = unit_rows(analysis.counts() @ analysis.type_vectors)


@register("emb-extrema")
class VectorExtrema(WordVectorMetric):
    """Vector extrema: cosine of the per-dimension extreme values (Forgues et al. 2014; nlg-eval)."""

    citation = ("Forgues et al. 2014 (vector extrema); Liu et al. 2016, §3.2; nlg-eval's "
                "VectorExtremaCosineSimilarity (Sharma et al. 2017)")

    def compose(self, analysis: WordVectorAnalysis) -> None:
        analysis.text_vectors = unit_rows(vector_extrema(analysis))


@register("emb-greedy")
class GreedyMatching(WordVectorMetric):
    """Greedy matching: mean best word cosine, both directions averaged (Rus & Lintean 2012; nlg-eval)."""

    citation = ("Rus & Lintean 2012 (greedy matching); Liu et al. 2016, §3.2 (symmetrised); nlg-eval's "
                "GreedyMatchingScore (Sharma et al. 2017)")

    def compose(self, analysis: WordVectorAnalysis) -> None:
        analysis.extra["unit_types"] = unit_rows(analysis.type_vectors)

    def compare(self, analysis: WordVectorAnalysis, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return greedy_matching(analysis, hyp, ref)


@register("sent-emb")
class SentenceEmbeddingCosine(PairwiseMetric):
    """Cosine of all-MiniLM-L6-v2 sentence embeddings (Reimers & Gurevych 2019); an empty text scores 0."""

    family = "embedding"
    higher_is_better = True
    value_range = (-1.0, 1.0)
    resources = (MINILM,)
    layers = ("sentence-embeddings",)
    languages = ("en",)
    language_note = "all-MiniLM-L6-v2 was trained on English sentence pairs"
    citation = "Reimers & Gurevych 2019 (Sentence-BERT), cosine of mean-pooled all-MiniLM-L6-v2 embeddings"
    options = {
        "model": Option(MINILM, "sentence encoder", choices=SENTENCE_ENCODERS),
    }
    # With local workers the texts are encoded before any metric starts, spread over them
    # (combo.scoring.plan.PARALLEL_LAYERS), and this task only reads the embeddings. On a Dask cluster the task
    # encodes every text itself (minutes per WMT12 pair against seconds for BLEU).

    def check_resources(self) -> None:
        check_sentence_encoder(self.params["model"])

    def analyse(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings from the ``sentence-embeddings`` analysis layer (each text encoded once, cached on disk)."""
        if not texts:
            return np.zeros((0, 1))
        return np.vstack(annotate("sentence-embeddings", texts)).astype(np.float64)

    def compare(self, analysis: np.ndarray, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return pair_cosines(analysis, hyp, ref)

