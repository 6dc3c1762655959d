"""chrF (Popović 2015) and chrF++ (Popović 2017), with sacreBLEU 2.6.0's options and semantics.

chrF is the F_beta score of character n-gram precision and recall (Popović
2015, eq. 1: ``chrF_beta = (1 + beta^2) chrP chrR / (beta^2 chrP + chrR)``),
with chrP and chrR averaged over the n-gram orders 1..``char_order``. chrF++
adds word n-grams of orders 1..``word_order`` (Popović 2017, §2) to the same
average.

Statistics per row, per order (characters first, then words):
``[hyp n-grams, ref n-grams, matches]`` (sacreBLEU's layout). As in sacreBLEU
the hypothesis count of an order is zero when the reference has no n-gram of
that order, the averages keep only the orders present in both texts
("effective order") unless ``eps_smoothing``, and with several references a
segment keeps the statistics of the reference with the best sentence-level
score (the first one on ties). Corpus chrF sums the statistics over segments.
Reference weights, if given, are ignored. Scores are on a 0-1 scale
(sacreBLEU's / 100).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ...errors import OptionError
from ...analysis.ngrams import CharacterNgramCounts, SymbolSequences
from ..base import Metric, Option, ReferencePairs, first_best_per_row
from ..registry import register

PUNCTUATION = frozenset('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')  # Python's string.punctuation
_EPS = 1e-16  # chrF++.py's epsilon, as in sacreBLEU


def split_punctuation(text: str) -> List[str]:
    """chrF++ words: white-space tokens, one leading or trailing punctuation mark split off.

    As in Popović's chrF++.py and sacreBLEU: a trailing mark is split first,
    otherwise a leading one; one-character tokens are kept as they are
    (so ``"(hi)"`` gives ``"(hi"`` and ``")"``).
    """
    words: List[str] = []
    for w in text.split():
        if len(w) > 1 and w[-1] in PUNCTUATION:
            words.append(w[:-1])
            words.append(w[-1])
        elif len(w) > 1 and w[0] in PUNCTUATION:
            words.append(w[0])
            words.append(w[1:])
        else:
            words.append(w)
    return words


def chrf_from_statistics(stats: np.ndarray, n_orders: int, beta: float, eps_smoothing: bool,
                         scale: float = 1.0) -> np.ndarray:
    """chrF of statistics rows ``[hyp, ref, match] * n_orders`` (Popović 2015, eq. 1), vectorised.

    Default: average precision and recall over the orders where both texts
    have n-grams, then F_beta (sacreBLEU's effective order). With
    ``eps_smoothing``: mean over all orders of the per-order F_beta, with
    precision / recall 1e-16 for an empty side (chrF++.py, Moses, NLTK).
    Orders are summed in sequence, as sacreBLEU does, so results agree to the
    last bits.
    """
    stats = np.asarray(stats, dtype=np.float64)
    shape = stats.shape[:-1]
    s = stats.reshape(-1, n_orders, 3)
    factor = float(beta) ** 2
    hyp, ref, match = s[:, :, 0], s[:, :, 1], s[:, :, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(hyp > 0, match / np.where(hyp > 0, hyp, 1.0), _EPS)
        rec = np.where(ref > 0, match / np.where(ref > 0, ref, 1.0), _EPS)
        if eps_smoothing:
            total = np.zeros(len(s))
            for i in range(n_orders):
                p, r = prec[:, i], rec[:, i]
                denom = factor * p + r
                total += np.where(denom > 0, (1 + factor) * p * r / np.where(denom > 0, denom, 1.0), _EPS)
            return (scale * total / n_orders).reshape(shape)
        both = (hyp > 0) & (ref > 0)
        avg_p = np.zeros(len(s))
        avg_r = np.zeros(len(s))
        for i in range(n_orders):
            avg_p += np.where(both[:, i], prec[:, i], 0.0)
            avg_r += np.where(both[:, i], rec[:, i], 0.0)
        effective = both.sum(axis=1)
        avg_p = np.where(effective > 0, avg_p / np.maximum(effective, 1), 0.0)
        avg_r = np.where(effective > 0, avg_r / np.maximum(effective, 1), 0.0)
        denom = factor * avg_p + avg_r
        score = (1 + factor) * avg_p * avg_r / np.where(denom > 0, denom, 1.0)
        score = np.where((avg_p + avg_r != 0) & (denom > 0), score, 0.0)
    return (scale * score).reshape(shape)


def _order_statistics(counts, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``[hyp n-grams, ref n-grams, matches]`` of each order for pairs of texts: shape (pairs, orders, 3).

    ``counts`` is a :class:`CharacterNgramCounts` or a :class:`~combo.analysis.ngrams.SymbolSequences`; each
    reference is a set of one text."""
    out = np.zeros((len(hyp), counts.max_order, 3))
    singletons = np.arange(counts.n_texts + 1, dtype=np.int64)
    out[:, :, 2] = counts.matches(hyp, ref, singletons, singletons[:-1])
    for k in range(counts.max_order):
        totals = counts.totals(k + 1)
        ref_total = totals[ref]
        out[:, k, 0] = np.where(ref_total > 0, totals[hyp], 0)  # sacreBLEU: no hits without reference n-grams
        out[:, k, 1] = ref_total
    return out


@register("chrf")
class CHRF(Metric):
    """chrF (Popović 2015, eq. 1) with sacreBLEU 2.6.0's options; chrF++ when ``word_order`` > 0.

    Corpus score: chrF of the per-order statistics summed over segments
    (sacreBLEU's ``corpus_score``); segment score: sacreBLEU's
    ``sentence_score``. With several references each segment keeps the
    statistics of its best-scoring reference (first on ties), as sacreBLEU.
    """

    locality = "row"  # chunked scoring gives the same statistics (tests/test_scale.py)

    family = "lexical"
    higher_is_better = True
    layers = ("characters", "tokens")
    citation = "Popović 2015 (chrF, eq. 1); Popović 2017 (chrF++); sacreBLEU 2.6.0 (Post 2018)"
    options = {
        "char_order": Option(6, "largest character n-gram order",
                             check=lambda v: isinstance(v, int) and 0 <= v <= 20, short="nc"),
        "word_order": Option(0, "largest word n-gram order (2 = chrF++)",
                             check=lambda v: isinstance(v, int) and 0 <= v <= 20, short="nw"),
        "beta": Option(2, "weight of recall relative to precision (an integer, as sacreBLEU's)",
                       check=lambda v: v >= 0),
        "lowercase": Option(False, "lowercase before extracting n-grams", short="lc"),
        "whitespace": Option(False, "keep white space inside character n-grams", short="space"),
        "eps_smoothing": Option(False, "chrF++.py epsilon smoothing instead of effective order", short="eps"),
    }

    def _post_init(self) -> None:
        """Check that some n-gram order is counted and set ``n_orders`` (character plus word orders)."""
        if self.params["char_order"] + self.params["word_order"] < 1:
            raise OptionError(f"{self.name}: char_order + word_order must be at least 1")
        self.n_orders = self.params["char_order"] + self.params["word_order"]

    def analyse(self, texts: Sequence[str]) -> Tuple[CharacterNgramCounts, Optional[SymbolSequences]]:
        """The texts' character n-grams (white space removed unless ``whitespace``, as sacreBLEU's CHRF) and, for
        chrF++ (Popović 2017), their word n-grams (:func:`split_punctuation` words); lowercased first with
        ``lowercase``."""
        p = self.params
        if p["lowercase"]:
            texts = [t.lower() for t in texts]
        chars = list(texts) if p["whitespace"] else ["".join(t.split()) for t in texts]
        char_counts = CharacterNgramCounts(chars, p["char_order"])
        word_counts = None
        if p["word_order"] > 0:
            word_counts = SymbolSequences.of_sequences([split_punctuation(t) for t in texts], p["word_order"])
        return char_counts, word_counts

    def _pair_statistics(self, analysis, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Statistics rows of (hypothesis, reference) text pairs, character orders first, then word orders."""
        char_counts, word_counts = analysis
        parts = [_order_statistics(char_counts, hyp, ref)]
        if word_counts is not None:
            parts.append(_order_statistics(word_counts, hyp, ref))
        return np.concatenate(parts, axis=1).reshape(len(hyp), 3 * self.n_orders)

    def statistics(self, analysis, hyp_ids, ref_ptr, ref_ids, ref_weights=None) -> np.ndarray:
        """Each row's statistics; with several references, those of the one with the best sentence chrF (the first on
        ties: sacreBLEU compares ``100 * chrF`` with ``>``)."""
        pairs = ReferencePairs.build(self.name, analysis[0].n_texts, hyp_ids, ref_ptr, ref_ids)
        n_rows = len(hyp_ids)
        stats = self._pair_statistics(analysis, pairs.hyp, pairs.ref)[pairs.inverse]
        if len(stats) == n_rows:  # one reference per row
            return stats
        p = self.params
        # sacreBLEU compares 100 * chrF with ">" and keeps the first best reference.
        f = chrf_from_statistics(stats, self.n_orders, p["beta"], p["eps_smoothing"], scale=100.0)
        pair_row = pairs.pair_row
        chosen = first_best_per_row(pair_row, -f)
        out = np.empty((n_rows, stats.shape[1]))
        out[pair_row[chosen]] = stats[chosen]
        return out

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        """chrF (Popović 2015, eq. 1) of statistics (:func:`chrf_from_statistics`): an array for rows, a float for
        one row (a corpus's summed statistics, as sacreBLEU's ``corpus_score``)."""
        p = self.params
        out = chrf_from_statistics(stats, self.n_orders, p["beta"], p["eps_smoothing"])
        return out if np.ndim(stats) > 1 else float(out)


@register("chrf++")
class CHRFPlusPlus(CHRF):
    """chrF++ (Popović 2017): chrF with word n-grams up to order 2 (sacreBLEU ``CHRF(word_order=2)``)."""

    citation = "Popović 2017 (chrF++); Popović 2015 (chrF, eq. 1); sacreBLEU 2.6.0"
    options = dict(CHRF.options, word_order=Option(
        2, "largest word n-gram order", check=lambda v: isinstance(v, int) and 0 <= v <= 20, short="nw"))
