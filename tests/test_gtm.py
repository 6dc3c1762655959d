"""GTM: hand-worked grids, the e = 1 identity with clipped unigram F, and the greedy against a plain re-implementation."""

from collections import Counter

import numpy as np
import pytest

from combo import OptionError, get_metric
from combo.analysis.ngrams import NgramCounts, pair_matches
from combo.analysis.tokenize import tokenize_all
from combo.metrics.lexical.gtm import greedy_run_sums


def test_hand_worked_grid():
    # hyp "the cat sat on the mat" (rows h0..h5), ref "on the mat the cat sat" (columns r0..r5)
    #
    #         r0 on  r1 the  r2 mat  r3 the  r4 cat  r5 sat
    #  h0 the          x               X
    #  h1 cat                                  X
    #  h2 sat                                          X
    #  h3 on   Y
    #  h4 the          Y               x
    #  h5 mat                  Y
    #
    # Runs: X = (h0,r3)(h1,r4)(h2,r5) "the cat sat", length 3; Y = (h3,r0)(h4,r1)(h5,r2)
    # "on the mat", length 3; the lone hits x (h0,r1) and (h4,r3) clash with them.
    # Greedy: X and Y tie at 3, X first (earlier in the hypothesis); it frees Y, which is taken.
    # e = 1: MMS = 6, P = R = 1, F = 1.
    # e = 2: MMS = sqrt(3^2 + 3^2) = sqrt 18, P = R = sqrt(18) / 6 = F.
    # e = 3: MMS = (27 + 27)^(1/3), F = 54^(1/3) / 6.
    hyp, ref = ["the cat sat on the mat"], [["on the mat the cat sat"]]
    for e, run_sum, expected in ((1, 6, 1.0), (2, 18, 18 ** 0.5 / 6), (3, 54, 54 ** (1 / 3) / 6)):
        metric = get_metric("gtm", e=e)
        np.testing.assert_allclose(metric.segment_statistics(hyp, ref), [[run_sum ** (1 / e), 6, 6]])
        assert metric.segment_scores(hyp, ref)[0] == pytest.approx(expected, rel=1e-12)


def test_hand_worked_greedy_order_and_corpus():
    # hyp "a b c d" (h0..h3), ref "c d a b c" (r0..r4):
    #        r0 c  r1 d  r2 a  r3 b  r4 c
    #  h0 a              X
    #  h1 b                    X
    #  h2 c  Y                       X
    #  h3 d        Y
    # Runs: X = (h0,r2)(h1,r3)(h2,r4) length 3; Y = (h2,r0)(h3,r1) length 2; they share row h2.
    # Greedy takes X, which leaves Y's free part (h3,r1), length 1.
    # e = 2: sum = 9 + 1 = 10, MMS = sqrt 10, P = sqrt(10)/4, R = sqrt(10)/5.
    metric = get_metric("gtm", e=2)
    hyps = ["a b c d", "x y"]
    refs = [["c d a b c"], ["x z y"]]
    # segment 2: hits (h0,r0) and (h1,r2), two runs of 1: sum 2, P = sqrt(2)/2, R = sqrt(2)/3.
    np.testing.assert_allclose(metric.segment_statistics(hyps, refs), [[10 ** 0.5, 4, 5], [2 ** 0.5, 2, 3]])

    def f1(p, r):
        return 2 * p * r / (p + r)

    np.testing.assert_allclose(metric.segment_scores(hyps, refs),
                               [f1(10 ** 0.5 / 4, 10 ** 0.5 / 5), f1(2 ** 0.5 / 2, 2 ** 0.5 / 3)], rtol=1e-12)
    # Corpus: MMS summed over segments, sqrt 10 + sqrt 2; P = MMS / (4 + 2), R = MMS / (5 + 3).
    mms = 10 ** 0.5 + 2 ** 0.5
    assert metric.corpus_score(hyps, refs) == pytest.approx(f1(mms / 6, mms / 8), rel=1e-12)


def test_best_reference_and_empty_texts():
    # refs of segment 1: "a dog ran" (no hit, F 0) and "the cat sat down" (run of 3:
    # P = 1, R = 3/4, F = 6/7); the second is kept, with its length.
    metric = get_metric("gtm", e=3)
    hyps = ["the cat sat", "", "a", "a"]
    refs = [["a dog ran", "the cat sat down"], ["a"], [""], []]
    np.testing.assert_allclose(metric.segment_statistics(hyps, refs), [[3, 3, 4], [0, 0, 1], [0, 1, 0], [0, 1, 0]])
    np.testing.assert_allclose(metric.segment_scores(hyps, refs), [6 / 7, 0, 0, 0], rtol=1e-12)
    assert metric.corpus_score([], []) == 0.0
    assert metric.corpus_score([""], [[""]]) == 0.0
    with pytest.raises(OptionError):
        get_metric("gtm", e=4)
    assert get_metric("gtm:e=2").e == 2
    assert metric.signature.startswith("gtm|e:3|tok:13a|lc:no")


def _clipped_f(hyp_tokens, ref_tokens):
    matches = sum((Counter(hyp_tokens) & Counter(ref_tokens)).values())
    p = matches / len(hyp_tokens) if hyp_tokens else 0.0
    r = matches / len(ref_tokens) if ref_tokens else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def test_e1_is_clipped_unigram_f(wmt12_de_en_peer_rows):
    # Default: 3 systems x 300 segments; slow: all 16 systems x 3,003.
    ref, systems = wmt12_de_en_peer_rows
    names = sorted(systems)
    hyps = [line for n in names for line in systems[n]]
    refs = [[r] for _ in names for r in ref]
    got = get_metric("gtm", e=1).segment_scores(hyps, refs)
    hyp_tokens = tokenize_all(hyps, "13a")
    ref_tokens = tokenize_all([r[0] for r in refs], "13a")
    expected = [_clipped_f(h, r) for h, r in zip(hyp_tokens, ref_tokens)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # identical text scores 1, for every e, per segment and for the whole corpus
    for e in (1, 2, 3):
        metric = get_metric("gtm", e=e)
        same = metric.segment_scores(ref, [[r] for r in ref])
        nonempty = np.array([bool(r.strip()) for r in ref])
        np.testing.assert_allclose(same[nonempty], 1.0, rtol=0, atol=1e-12)
        assert metric.corpus_score(ref, [[r] for r in ref]) == pytest.approx(1.0, abs=1e-12)


def _plain_greedy(hyp, ref, e):
    """The greedy spelled out: scan the grid for the longest free run, earliest first; take it; repeat."""
    used_h, used_r, total = set(), set(), 0
    while True:
        best = None
        for a in range(len(hyp)):
            for b in range(len(ref)):
                length = 0
                while (a + length < len(hyp) and b + length < len(ref) and hyp[a + length] == ref[b + length]
                       and a + length not in used_h and b + length not in used_r):
                    length += 1
                if length and (best is None or length > best[0]):
                    best = (length, a, b)
        if best is None:
            return total
        length, a, b = best
        total += length ** e
        used_h.update(range(a, a + length))
        used_r.update(range(b, b + length))


def test_greedy_against_plain_implementation(wmt12_de_en):
    # 2 systems x 250 segments, each against the reference and two other systems (best F kept).
    ref, systems = wmt12_de_en
    names = sorted(systems)
    hyps = [line for n in names[:2] for line in systems[n][:250]]
    refs = [[ref[k], systems[names[2]][k], systems[names[3]][k]] for _ in names[:2] for k in range(250)]
    hyp_tokens = tokenize_all(hyps, "13a", lowercase=True)
    for e in (2, 3):
        metric = get_metric("gtm", e=e, lowercase=True)
        got = metric.segment_statistics(hyps, refs)
        for k, (h, rs) in enumerate(zip(hyp_tokens, refs)):
            best = None
            for r in tokenize_all(rs, "13a", lowercase=True):
                s = _plain_greedy(h, r, e)
                mms = s ** (1 / e)
                p, q = (mms / len(h) if h else 0.0), (mms / len(r) if r else 0.0)
                f = 2 * p * q / (p + q) if p + q else 0.0
                if best is None or f > best[0]:
                    best = (f, [mms, len(h), len(r)])
            np.testing.assert_allclose(got[k], best[1], err_msg=f"segment {k}, e={e}")


def test_greedy_with_e1_is_clipped_matching(wmt12_de_en):
    # With e = 1 the greedy reaches a maximum matching: per word, min(count in hyp, count in ref).
    ref, systems = wmt12_de_en
    texts = ref + systems[sorted(systems)[0]]
    counts = NgramCounts(tokenize_all(texts, "13a"), 1)
    ptr = np.concatenate(([0], np.cumsum(counts.lengths)))
    left = np.arange(len(ref), len(texts))
    right = np.arange(len(ref))
    np.testing.assert_array_equal(greedy_run_sums(counts.ngram_ids[0], ptr, left, right, 1.0),
                                  pair_matches(counts.matrices[0], left, right))
