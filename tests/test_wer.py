"""WER and PER: hand-worked cases, the bit-parallel Levenshtein, and oracle agreement with jiwer."""

from collections import Counter

import numpy as np
import pytest

import combo
from combo.errors import InputError, OptionError
from combo.analysis.tokenize import tokenize_13a
from combo.metrics.lexical.wer import levenshtein_distances, whitespace_words

jiwer = pytest.importorskip("jiwer")


def naive_levenshtein(a, b):
    """Textbook O(len(a) len(b)) dynamic programme (Levenshtein 1966)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def naive_per_errors(hyp, ref):
    """Tillmann et al. 1997: ref_len - (matches - max(0, hyp_len - ref_len)), bag-of-words matches."""
    matches = sum((Counter(hyp) & Counter(ref)).values())
    return len(ref) - (matches - max(0, len(hyp) - len(ref)))


# -- hand-worked examples ---------------------------------------------------------------

def test_wer_and_per_hand_worked():
    wer, per = combo.get_metric("wer"), combo.get_metric("per")
    ref = "the cat sat on the mat"  # 6 words
    # WER: the=the, cat=cat, sit->sat (substitution), on=on, "the" deleted, mat=mat -> 2 / 6.
    # PER: bag intersection {the, cat, on, mat} = 4, hyp_len 5 <= ref_len 6 -> 1 - 4/6 = 1/3.
    assert wer.segment_scores(["the cat sit on mat"], [[ref]])[0] == pytest.approx(1 / 3, abs=1e-15)
    assert per.segment_scores(["the cat sit on mat"], [[ref]])[0] == pytest.approx(1 / 3, abs=1e-15)
    # Word order: "b a" vs "a b" needs 2 edits (WER 1) but the bags are equal (PER 0).
    assert wer.segment_scores(["b a"], [["a b"]])[0] == 1.0
    assert per.segment_scores(["b a"], [["a b"]])[0] == 0.0
    # Not clipped: "a b c d" vs "x" is 1 substitution + 3 insertions = 4 edits over 1 word;
    # PER: 0 matches, hyp 3 words longer -> 1 - (0 - 3) / 1 = 4.
    assert wer.segment_scores(["a b c d"], [["x"]])[0] == 4.0
    assert per.segment_scores(["a b c d"], [["x"]])[0] == 4.0
    # Corpus: summed edits over summed reference lengths, (2 + 2) / (6 + 2).
    assert wer.corpus_score(["the cat sit on mat", "b a"], [[ref], ["a b"]]) == 0.5
    assert wer.higher_is_better is False and per.higher_is_better is False


def test_several_references_use_fewest_errors_then_longer_reference():
    wer = combo.get_metric("wer")
    # "a b c" vs "x y z": 3 edits; vs "a b c": 0 edits -> 0.
    assert wer.segment_scores(["a b c"], [["x y z", "a b c"]])[0] == 0.0
    # "a b c" vs "a b" (1 edit, 2 words) and "a b c d" (1 edit, 4 words): tie -> the longer, 1/4.
    assert wer.segment_scores(["a b c"], [["a b", "a b c d"]])[0] == 0.25
    stats = wer.segment_statistics(["a b c", "a b c"], [["a b", "a b c d"], ["a b c d", "a b"]])
    np.testing.assert_array_equal(stats, [[1, 4], [1, 4]])
    per = combo.get_metric("per")
    # PER "c b a" vs "a b c" (0 errors) and "c b a x" (1 error): the first.
    assert per.segment_scores(["c b a"], [["c b a x", "a b c"]])[0] == 0.0


def test_empty_hypotheses_and_references_have_defined_scores():
    for name in ("wer", "per"):
        m = combo.get_metric(name)
        scores = m.segment_scores(["", "a", "", "a b"], [["a b"], [""], [""], ["a b"]])
        # 2 deletions / 2; 1 error over an empty reference -> 1; nothing vs nothing -> 0; exact -> 0.
        np.testing.assert_array_equal(scores, [1.0, 1.0, 0.0, 0.0])
        assert m.corpus_score([""], [[""]]) == 0.0
        assert m.corpus_score(["a"], [[""]]) == 1.0
        assert m.corpus_score(["a", "a b"], [[""], ["a b"]]) == 0.5  # 1 error over 2 reference words
    # With non-empty references an empty hypothesis is all deletions, as in jiwer.
    theirs = jiwer.wer(["a b", "a b"], ["", "a c"])  # (2 deletions + 1 substitution) / 4
    assert combo.get_metric("wer").corpus_score(["", "a c"], [["a b"], ["a b"]]) == theirs == 0.75


def test_bad_options_and_inputs():
    with pytest.raises(OptionError):
        combo.get_metric("wer", tokenize="moses")
    with pytest.raises(OptionError):
        combo.get_metric("per", stemming=True)
    with pytest.raises(InputError):
        combo.get_metric("wer").segment_scores(["a"], [[]])
    m = combo.get_metric("per:tokenize=13a,lowercase=true")
    assert m.tokenize == "13a" and m.lowercase is True and "tok:13a" in m.signature


# -- building blocks --------------------------------------------------------------------

def test_bit_parallel_levenshtein_equals_textbook_dp():
    rng = np.random.default_rng(7)
    seqs = []
    for _ in range(300):  # lengths around the 64-word block boundaries, small and large alphabets
        n = int(rng.choice([0, 1, 2, 7, 30, 63, 64, 65, 127, 128, 129, 200]))
        seqs.append(rng.integers(0, int(rng.choice([2, 4, 50])), n))
    ptr = np.zeros(len(seqs) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(s) for s in seqs])
    ids = np.concatenate(seqs).astype(np.int64)
    left = rng.integers(0, len(seqs), 800)
    right = rng.integers(0, len(seqs), 800)
    got = levenshtein_distances(ids, ptr, left, right)
    expected = [naive_levenshtein(seqs[a].tolist(), seqs[b].tolist()) for a, b in zip(left, right)]
    np.testing.assert_array_equal(got, expected)


def test_whitespace_words_equal_jiwer_default_transform():
    lines = ["", " ", "a", "  a  b\tc ", "a\tb", "a\xa0b", "a \xa0b", "\t\ta\n", "x  y   z"]
    for line in lines:
        assert whitespace_words(line) == jiwer.transformations.wer_default(line)[0]


# -- oracle: jiwer on WMT12 de-en ------------------------------------------------------------

def test_corpus_wer_equals_jiwer_per_de_en_system(wmt12_de_en_peer_rows):
    # Default: 3 systems x 300 segments; slow: all 16 systems x 3,003.
    ref, systems = wmt12_de_en_peer_rows
    refs = [[r] for r in ref]
    m = combo.get_metric("wer")
    theirs = [jiwer.wer(ref, hyps) for hyps in systems.values()]
    ours = [m.corpus_score(hyps, refs) for hyps in systems.values()]
    assert len(ours) == len(systems) >= 3
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    # All systems in one call give the same per-system statistics.
    stats = m.segment_statistics([h for s in systems.values() for h in s],
                                 [[r] for _ in systems for r in ref]).reshape(len(systems), len(ref), 2)
    np.testing.assert_allclose(m.score(stats.sum(axis=1)), theirs, rtol=0, atol=1e-12)


def test_segment_wer_equals_jiwer_on_a_full_system(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps = systems["onlineB"]
    ours = combo.get_metric("wer").segment_scores(hyps, [[r] for r in ref])
    expected = np.array([jiwer.wer(r, h) for r, h in zip(ref, hyps)])
    assert len(ours) == 3003
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)


def test_wer_options_equal_jiwer(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps = systems["dfki-berlin"]
    lower = jiwer.Compose([jiwer.ToLowerCase(), jiwer.RemoveMultipleSpaces(), jiwer.Strip(),
                           jiwer.ReduceToListOfListOfWords()])
    ours = combo.get_metric("wer", lowercase=True).corpus_score(hyps, [[r] for r in ref])
    assert ours == pytest.approx(jiwer.wer(ref, hyps, reference_transform=lower, hypothesis_transform=lower),
                                 abs=1e-12)
    # tokenize=13a is jiwer on mteval-13a-tokenized text.
    ours = combo.get_metric("wer", tokenize="13a").corpus_score(hyps, [[r] for r in ref])
    theirs = jiwer.wer([tokenize_13a(r) for r in ref], [tokenize_13a(h) for h in hyps])
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_per_equals_textbook_definition_on_a_full_system(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps = systems["onlineC"]
    m = combo.get_metric("per")
    errors = np.array([naive_per_errors(whitespace_words(h), whitespace_words(r)) for h, r in zip(hyps, ref)],
                      dtype=float)
    lengths = np.array([len(whitespace_words(r)) for r in ref], dtype=float)
    np.testing.assert_allclose(m.segment_scores(hyps, [[r] for r in ref]), errors / lengths, rtol=0, atol=1e-12)
    assert m.corpus_score(hyps, [[r] for r in ref]) == pytest.approx(errors.sum() / lengths.sum(), abs=1e-12)
    # PER never exceeds WER: a bag-of-words match is possible wherever an aligned match is.
    wer = combo.get_metric("wer").segment_scores(hyps, [[r] for r in ref])
    assert np.all(m.segment_scores(hyps, [[r] for r in ref]) <= wer + 1e-12)


def test_multi_reference_wer_equals_best_jiwer_reference(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps, second = systems["onlineB"][:1000], systems["onlineA"][:1000]
    ours = combo.get_metric("wer").segment_statistics(hyps, [[a, b] for a, b in zip(ref, second)])
    for k, (h, a, b) in enumerate(zip(hyps, ref, second)):
        options = [(naive_levenshtein(whitespace_words(h), whitespace_words(r)), -len(whitespace_words(r)))
                   for r in (a, b)]
        edits, neg_len = min(options)
        assert tuple(ours[k]) == (edits, -neg_len)
