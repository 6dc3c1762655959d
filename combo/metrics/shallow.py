"""Asiya's shallow-syntactic metrics (Giménez & Màrquez 2010, PBML 94, §3.2): SP-Op, SP-Oc, SP-NIST.

Every text is parsed once by the ``shallow`` layer (Pattern's tagger and
chunker). The overlap metrics count (type, word) pairs, where the type of a
word is its part of speech (SP-Op) or the type of the chunk holding it
(SP-Oc), and compare them per type with Asiya's clipped-count Jaccard::

    Overlap_t(h, r) = sum_w min(c_h,t(w), c_r,t(w)) / sum_w max(c_h,t(w), c_r,t(w))

``(*)`` averages Overlap_t over the types present in the hypothesis or the
reference. SP-NIST is NIST (Doddington 2002) over the sequence of POS tags or
of BIO chunk tags, computed by combo's NIST metric.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ..errors import InputError
from ..analysis.layers import annotate, get_layer
from ..analysis.ngrams import NgramCounts
from .base import Metric, Option
from .pairwise_metric import PairwiseMetric, named_column_sums
from .lexical.nist import NIST
from .registry import register

ALL_TYPES = "*"
# Penn Treebank POS tags (Marcus et al. 1993) and the punctuation tags Pattern emits.
PENN_TAGS = (
    "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNS", "NNP", "NNPS",
    "PDT", "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG",
    "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB",
    ".", ",", ":", '"', "``", "''", "(", ")", "-LRB-", "-RRB-", "#", "$",
)
# Chunk types of the CoNLL-2000 chunking task (Tjong Kim Sang & Buchholz 2000); "O": outside any chunk.
CHUNK_TYPES = ("NP", "VP", "PP", "ADJP", "ADVP", "SBAR", "PRT", "INTJ", "CONJP", "LST", "UCP", "O")


def chunk_type(tag: str) -> str:
    """The chunk type of a BIO chunk tag: ``B-NP`` and ``I-NP`` give ``NP``, ``O`` stays ``O``."""
    return tag.partition("-")[2] or tag


class TypedWordCounts(NamedTuple):
    """Sparse counts of (type, word) pairs per text.

    ``counts[t, k]``: occurrences in text ``t`` of key ``k``; ``key_type[k]``:
    the index in ``types`` of key ``k``'s type; ``type_totals[t, j]``: words of
    type ``types[j]`` in text ``t``.
    """

    counts: sparse.csr_matrix
    key_type: np.ndarray
    types: Tuple[str, ...]
    type_totals: np.ndarray

    def __len__(self) -> int:
        return self.counts.shape[0]


def _encode(symbols: List[str]) -> Tuple[np.ndarray, List[str]]:
    """Integer ids of ``symbols`` (in sorted order of the distinct symbols) and the distinct symbols."""
    distinct = sorted(set(symbols))
    index = {s: k for k, s in enumerate(distinct)}
    return np.fromiter(map(index.__getitem__, symbols), dtype=np.int64, count=len(symbols)), distinct


def typed_word_counts(types: Sequence[Sequence[str]], words: Sequence[Sequence[str]],
                      lowercase: bool = False) -> TypedWordCounts:
    """Count the (type, word) pairs of each text: ``types[t][i]`` is the type of word ``words[t][i]``.

    ``lowercase`` compares the words lowercased (``str.lower``).
    """
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if not np.array_equal(lengths, np.fromiter(map(len, types), dtype=np.int64, count=len(types))):
        raise InputError("typed word counts: each text needs one type per word")
    word_ids, vocabulary = _encode(list(chain.from_iterable(words)))
    if lowercase:  # lowercase each distinct word once
        lowered, vocabulary = _encode([w.lower() for w in vocabulary])
        word_ids = lowered[word_ids]
    type_ids, type_names = _encode(list(chain.from_iterable(types)))
    keys, columns = np.unique(type_ids * max(len(vocabulary), 1) + word_ids, return_inverse=True)
    key_type = keys // max(len(vocabulary), 1)
    n_keys, n_types = max(len(keys), 1), max(len(type_names), 1)
    rows = np.repeat(np.arange(len(words), dtype=np.int64), lengths)
    counts = sparse.csr_matrix((np.ones(len(rows)), (rows, columns.ravel())), shape=(len(words), n_keys))
    counts.sum_duplicates()
    totals = np.bincount(rows * n_types + type_ids, minlength=len(words) * n_types).astype(np.float64)
    totals = totals.reshape(len(words), n_types)
    if not len(keys):
        key_type = np.zeros(1, dtype=np.int64)
    return TypedWordCounts(counts, key_type, tuple(type_names), totals)


def typed_overlaps(analysis: TypedWordCounts, hyp: np.ndarray, ref: np.ndarray,
                   only: str = ALL_TYPES, batch: int = 65536) -> np.ndarray:
    """Asiya's Overlap of each pair (text ``hyp[k]``, text ``ref[k]``), vectorised over the pairs.

    ``only="*"``: the mean of Overlap_t over the types t present in either text;
    else Overlap_t of that one type. A pair with nothing to compare (no type
    present; or type ``only`` in neither text) is 1, as two empty texts are
    identical.
    """
    hyp = np.asarray(hyp, dtype=np.int64)
    ref = np.asarray(ref, dtype=np.int64)
    out = np.ones(len(hyp))
    if only != ALL_TYPES:
        if only not in analysis.types:
            return out  # the type occurs in no text: 0 / 0 for every pair
        column = analysis.types.index(only)
        keys = np.flatnonzero(analysis.key_type == column)
        counts = analysis.counts[:, keys]
        mins = np.asarray(counts[hyp].minimum(counts[ref]).sum(axis=1)).ravel()
        maxs = analysis.type_totals[hyp, column] + analysis.type_totals[ref, column] - mins
        np.divide(mins, maxs, out=out, where=maxs > 0)
        return out
    n_keys, n_types = analysis.counts.shape[1], analysis.type_totals.shape[1]
    membership = sparse.csr_matrix((np.ones(n_keys), (np.arange(n_keys), analysis.key_type)),
                                   shape=(n_keys, n_types))
    for start in range(0, len(hyp), batch):
        h, r = hyp[start:start + batch], ref[start:start + batch]
        mins = np.asarray((analysis.counts[h].minimum(analysis.counts[r]) @ membership).todense())
        maxs = analysis.type_totals[h] + analysis.type_totals[r] - mins
        present = maxs > 0
        ratios = np.divide(mins, maxs, out=np.zeros_like(mins), where=present)
        n_present = present.sum(axis=1)
        np.divide(named_column_sums(ratios, analysis.types), n_present, out=out[start:start + batch],
                  where=n_present > 0)
    return out


class TypedOverlap(PairwiseMetric):
    """Base of SP-Op and SP-Oc: Asiya's overlap per word type, best reference per segment."""

    locality = "row"  # each text analysed alone: chunked scoring gives the same statistics (tests/test_scale.py)

    family = "shallow-syntactic"
    layers = ("shallow",)
    resources = ("textblob",)
    languages = ("en",)
    language_note = "Pattern's tagger and chunker are English"
    type_option = ""  # name of the option holding the type ("*" or one type)

    def check_resources(self) -> None:
        for layer in self.layers:
            get_layer(layer).check()

    def word_types(self, parses) -> List[Sequence[str]]:
        """The type of each word of each shallow parse."""
        raise NotImplementedError

    def analyse(self, texts: Sequence[str]) -> TypedWordCounts:
        parses = annotate("shallow", list(texts))
        return typed_word_counts(self.word_types(parses), [p.words for p in parses], self.params["lowercase"])

    def compare(self, analysis: TypedWordCounts, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return typed_overlaps(analysis, hyp, ref, self.params[self.type_option])


_LOWERCASE = Option(True, "compare lowercased words", short="lc")


@register("sp-op")
class PartOfSpeechOverlap(TypedOverlap):
    """Asiya's SP-Op(t) / SP-Op(*): overlap of the words of each part of speech (Giménez & Màrquez 2010).

    ``tag="*"`` (SP-Op(*)) averages the overlap over the POS tags present in
    the hypothesis or the reference; ``tag="NN"`` gives SP-Op(NN). Words are
    Pattern's tokens, lowercased by default (Asiya compares word forms or
    lemmas, depending on the variant). Best reference per segment; corpus
    score: mean of the segment scores.
    """

    citation = ("Giménez & Màrquez 2010, Asiya (PBML 94), SP-Op; Giménez 2008 (thesis), §3.1: "
                "Overlap = sum min counts / sum max counts per POS")
    type_option = "tag"
    options = {
        "tag": Option(ALL_TYPES, "POS tag, or * for the average over all tags", choices=(ALL_TYPES,) + PENN_TAGS),
        "lowercase": _LOWERCASE,
    }

    def word_types(self, parses) -> List[Sequence[str]]:
        return [p.pos for p in parses]


@register("sp-oc")
class ChunkOverlap(TypedOverlap):
    """Asiya's SP-Oc(t) / SP-Oc(*): overlap of the words inside chunks of each type (Giménez & Màrquez 2010).

    A word's type is the type of the base phrase holding it (``NP``, ``VP``,
    ...; ``O`` for words outside any chunk, mostly punctuation, which count as
    one more type). ``chunk="*"`` (SP-Oc(*)) averages over the types present
    in the hypothesis or the reference. Best reference per segment.
    """

    citation = ("Giménez & Màrquez 2010, Asiya (PBML 94), SP-Oc; Giménez 2008 (thesis), §3.1: "
                "Overlap = sum min counts / sum max counts per chunk type")
    type_option = "chunk"
    options = {
        "chunk": Option(ALL_TYPES, "chunk type, or * for the average over all types",
                        choices=(ALL_TYPES,) + CHUNK_TYPES),
        "lowercase": _LOWERCASE,
    }

    def word_types(self, parses) -> List[Sequence[str]]:
        kinds = {tag: chunk_type(tag) for tag in set(chain.from_iterable(p.chunks for p in parses))}
        return [tuple(map(kinds.__getitem__, p.chunks)) for p in parses]


def tag_sequences(parses, over: str) -> List[Tuple[str, ...]]:
    """The POS tags (``over="pos"``) or BIO chunk tags (``over="chunk"``) of each parse."""
    if over == "pos":
        return [p.pos for p in parses]
    return [p.chunks for p in parses]


@register("sp-nist")
class ShallowNIST(Metric):
    """Asiya's SP-NIST(p)-5 / SP-NIST(c)-5: NIST (Doddington 2002) over tag sequences; range [0, inf).

    ``over="pos"``: the sequence of POS tags, ``over="chunk"``: the sequence
    of BIO chunk tags (``B-NP I-NP B-VP O``), one per word, each scored by
    combo's NIST metric (:class:`~combo.metrics.lexical.nist.NIST`, mteval's
    rules) as if the tags were words. Raw NIST, not bounded above, as lexical
    NIST; the segment score is the NIST of the segment with the information
    weights of every reference of the call.
    """

    family = "shallow-syntactic"
    layers = ("shallow",)
    resources = ("textblob",)
    languages = ("en",)
    language_note = "Pattern's tagger and chunker are English"
    value_range = (0.0, math.inf)
    citation = ("Giménez & Màrquez 2010, Asiya (PBML 94), SP-NIST; NIST: Doddington 2002, "
                "eq. 2 (information weights) and eq. 3 (score)")
    options = {
        "over": Option("pos", "tag sequence: pos (SP-NIST(p)) or chunk (BIO chunk tags, SP-NIST(c))",
                       choices=("pos", "chunk")),
        "max_order": Option(5, "largest n-gram order", check=lambda v: isinstance(v, int) and 1 <= v <= 9, short="n"),
        "multi_ref": NIST.options["multi_ref"],
    }

    def _post_init(self) -> None:
        self._nist = NIST(max_order=self.params["max_order"], tokenize="none",
                          multi_ref=self.params["multi_ref"])

    locality = "references"

    def check_resources(self) -> None:
        get_layer("shallow").check()

    def reference_groups(self, ref_ptr, ref_ids):
        return self._nist.reference_groups(ref_ptr, ref_ids)

    def count_references(self, analysis: NgramCounts, group_ptr, group_ids, group_weight):
        return self._nist.count_references(analysis, group_ptr, group_ids, group_weight)

    def ngram_weights_from(self, counts):
        return self._nist.ngram_weights_from(counts)

    def with_ngram_weights(self, weights) -> "ShallowNIST":  # the statistics are lexical NIST's, over the tags
        bound = super().with_ngram_weights(weights)  # its own ``ngram_weights`` set too: bound, as any such metric
        bound._nist = self._nist.with_ngram_weights(weights)
        return bound

    def analyse(self, texts: Sequence[str]) -> NgramCounts:
        return NgramCounts(tag_sequences(annotate("shallow", list(texts)), self.params["over"]),
                           self.params["max_order"])

    def statistics(self, analysis: NgramCounts, hyp_ids, ref_ptr, ref_ids,
                   ref_weights: Optional[np.ndarray] = None) -> np.ndarray:
        return self._nist.statistics(analysis, hyp_ids, ref_ptr, ref_ids)

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        return self._nist.score(stats, segment_level)
