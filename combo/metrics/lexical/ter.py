"""TER, translation edit rate with shifts (Snover et al. 2006), with sacreBLEU 2.6.0's options.

``TER = #edits / average #reference words`` (Snover et al. 2006, §2, eq. 1):
edits are insertions, deletions, substitutions and block shifts, counted
against the closest reference (fewest edits) and divided by the average
length of all references of the segment. Statistics per segment:
``[edits, average reference length]``; corpus TER = sum of edits / sum of
average lengths. An empty reference with a non-empty hypothesis scores 1,
both empty 0 (sacreBLEU's convention).

Tokenisation is Tercom's normaliser as sacreBLEU's ``TercomTokenizer``
(lowercase unless ``case_sensitive``; ``normalized``, ``no_punct`` and
``asian_support`` as there); the shift search is in :mod:`.ter_alignment`.
Reference weights have no meaning in TER and are ignored.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Dict, List, NamedTuple, Sequence, Tuple

import numpy as np

from ...errors import InputError
from ..base import Metric, Option
from ..registry import register
from .ter_alignment import shift_edit_counts

# Tercom's Normalizer.java, as sacreBLEU writes it. General part, then the Western rules on " text ".
_GENERAL = [("\n-", ""), ("\n", " "), ("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")]
_WESTERN = [
    (re.compile(r"([{-~[-` -&(-+:-@/])"), r" \1 "),  # punctuation and symbols become tokens
    (re.compile(r"'s "), r" 's "),  # possessives
    (re.compile(r"'s$"), r" 's"),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless after a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # ... unless before a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash after a digit
]
_CJK_PUNCT = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"
_ASIAN = [
    (re.compile(r"([\u4e00-\u9fff\u3400-\u4dbf])"), r" \1 "),  # CJK unified ideographs (+ ext. A)
    (re.compile(r"([\u31c0-\u31ef\u2e80-\u2eff])"), r" \1 "),  # strokes, radicals
    (re.compile(r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])"), r" \1 "),  # compatibility blocks
    (re.compile(r"([\u3200-\u3f22])"), r" \1 "),  # enclosed letters and months
    # kana runs, as Tercom writes the rule (it only fires on a text that is one kana run)
    (re.compile(r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])"), r"\1 \2 "),
    (re.compile(r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])"), r"\1 \2 "),
    (re.compile(r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])"), r"\1 \2 "),
    (re.compile(_CJK_PUNCT), r" \1 "),
    (re.compile(_FULL_WIDTH_PUNCT), r" \1 "),
]
_PUNCT = re.compile(r"[\.,\?:;!\"\(\)]")
_ASIAN_PUNCT = [re.compile(_CJK_PUNCT), re.compile(_FULL_WIDTH_PUNCT)]


@lru_cache(maxsize=2 ** 18)
def tercom_tokens(text: str, normalized: bool = False, no_punct: bool = False,
                  asian_support: bool = False, case_sensitive: bool = False) -> Tuple[str, ...]:
    """Tokens of ``text`` after Tercom's normaliser (sacreBLEU's ``TercomTokenizer`` on ``text.rstrip()``)."""
    text = text.rstrip()
    if not case_sensitive:
        text = text.lower()
    if normalized:
        for old, new in _GENERAL:
            text = text.replace(old, new)
        text = f" {text} "
        for pattern, repl in _WESTERN:
            text = pattern.sub(repl, text)
        if asian_support:
            for pattern, repl in _ASIAN:
                text = pattern.sub(repl, text)
    if no_punct:
        text = _PUNCT.sub("", text)
        if asian_support:
            for pattern in _ASIAN_PUNCT:
                text = pattern.sub("", text)
    return tuple(text.split())


class TerAnalysis(NamedTuple):
    """Distinct texts as word-id sequences; identical token sequences share one id."""

    sequences: List[np.ndarray]  # word ids of each distinct token sequence
    sequence_of_text: np.ndarray  # text index -> sequence index
    lengths: np.ndarray  # words per sequence


#: Longest hypothesis or reference TER aligns (words after tokenisation): the numpy shift search grows with
#: the square of the length (measured: 4,000 words 3.0 s and 0.2 GB, 8,000 words 10.7-14 s and 0.6 GB,
#: 16,000 words a minute), so a 10 MB line is refused at once. The compiled search keeps only the beam's
#: band (10,000 words in 0.01 s) but refuses the same texts, so that what scores does not depend on the build.
MAX_WORDS = 10_000


@register("ter")
class TER(Metric):
    """Translation edit rate with shifts (Snover et al. 2006), equal to sacreBLEU 2.6.0's TER / 100.

    Segment score ``edits / avg ref length`` (1 if the references are empty
    and the hypothesis is not, else 0); corpus score from summed statistics.
    Lower is better.
    """

    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = False
    value_range = (0.0, float("inf"))  # edits can outnumber reference words
    citation = ("Snover et al. 2006, A Study of Translation Edit Rate with Targeted Human Annotation, "
                "§2 eq. 1: TER = #edits / average #reference words")
    options = {
        "normalized": Option(False, "Tercom normalisation: XML entities, punctuation split (true/false)", short="norm"),
        "no_punct": Option(False, "remove punctuation (true/false)", short="nopunct"),
        "asian_support": Option(False, "CJK: split characters (with normalized), drop CJK punctuation "
                                       "(with no_punct) (true/false)", short="asian"),
        "case_sensitive": Option(False, "keep case; default lowercase (true/false)", short="case"),
    }

    def tokens(self, texts: Sequence[str]) -> List[Tuple[str, ...]]:
        p = self.params
        return [tercom_tokens(t, p["normalized"], p["no_punct"], p["asian_support"], p["case_sensitive"])
                for t in texts]

    def analyse(self, texts: Sequence[str]) -> TerAnalysis:
        vocab: Dict[str, int] = {}
        seq_index: Dict[Tuple[str, ...], int] = {}
        sequences: List[np.ndarray] = []
        of_text = np.empty(len(texts), dtype=np.int64)
        for k, toks in enumerate(self.tokens(texts)):
            s = seq_index.get(toks)
            if s is None:
                s = seq_index[toks] = len(sequences)
                sequences.append(np.fromiter((vocab.setdefault(w, len(vocab)) for w in toks),
                                             dtype=np.int64, count=len(toks)))
            of_text[k] = s
        lengths = np.array([len(s) for s in sequences], dtype=np.int64)
        return TerAnalysis(sequences, of_text, lengths)

    def statistics(self, analysis: TerAnalysis, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ptr = np.asarray(ref_ptr, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        rows = len(hyp_ids)
        stats = np.zeros((rows, 2), dtype=np.float64)
        if rows == 0:
            return stats
        sizes = np.diff(ref_ptr)
        empty = np.flatnonzero(sizes == 0)
        if len(empty):
            raise InputError(f"TER: hypothesis {int(empty[0]) + 1} has no reference ({len(empty)} such hypotheses)",
                             fix="give every segment at least one reference (an empty string is allowed)")
        pair_row = np.repeat(np.arange(rows), sizes)
        hyp_seq = analysis.sequence_of_text[hyp_ids][pair_row]
        ref_seq = analysis.sequence_of_text[ref_ids]
        longest = np.maximum(analysis.lengths[hyp_seq], analysis.lengths[ref_seq]) if len(pair_row) else pair_row
        too_long = np.flatnonzero(longest > MAX_WORDS)
        if len(too_long):
            k = int(too_long[0])
            raise InputError(f"TER: row {int(pair_row[k])} has a text of {int(longest[k]):,} words; TER's shift "
                             f"search grows with the square of the length, so texts are limited to {MAX_WORDS:,} words",
                             fix="split long lines into sentences, one segment per line, or score them with BLEU or chrF")
        n_seq = len(analysis.sequences)
        distinct, inverse = np.unique(hyp_seq * n_seq + ref_seq, return_inverse=True)
        seqs = analysis.sequences
        # a hypothesis that is its reference costs nothing (no edit, no shift): 44 of onlineB's 3,003 on WMT12
        # de-en, each otherwise a full round of the shift search
        hyp_of, ref_of = np.divmod(distinct, n_seq)
        work = np.flatnonzero(hyp_of != ref_of)
        distinct_edits = np.zeros(len(distinct), dtype=np.int64)
        distinct_edits[work] = shift_edit_counts([seqs[k] for k in hyp_of[work]], [seqs[k] for k in ref_of[work]])
        edits = distinct_edits[inverse.reshape(-1)]
        starts = ref_ptr[:-1]
        stats[:, 0] = np.minimum.reduceat(edits, starts)
        stats[:, 1] = np.add.reduceat(analysis.lengths[ref_seq], starts) / sizes
        return stats

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        edits, length = stats[..., 0], stats[..., 1]
        safe = np.where(length > 0, length, 1.0)
        return np.where(length > 0, edits / safe, np.where(edits > 0, 1.0, 0.0))
