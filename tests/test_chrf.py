"""chrF and chrF++: hand-worked cases and oracle agreement with sacreBLEU 2.6.0 on WMT12 de-en."""

import numpy as np
import pytest

import combo
from combo.errors import InputError, OptionError
from combo.analysis import ngrams as ngrams_module
from combo.analysis.ngrams import CharacterNgramCounts, NgramCounts, pair_matches
from combo.metrics.lexical.chrf import split_punctuation

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import CHRF as SacreCHRF  # noqa: E402

VARIANTS = [("chrf", 0), ("chrf++", 2)]


# -- hand-worked examples ---------------------------------------------------------------

def test_chrf_hand_worked():
    # hyp "ab" vs ref "abc", char_order 6, beta 2:
    #   1-grams: hyp {a,b}=2, ref {a,b,c}=3, matches 2 -> P=1, R=2/3
    #   2-grams: hyp {ab}=1,  ref {ab,bc}=2, matches 1 -> P=1, R=1/2
    #   3-grams: hyp has none -> not an effective order; 4..6: none on either side
    #   avgP = 1, avgR = (2/3 + 1/2) / 2 = 7/12
    #   F2 = 5 * 1 * 7/12 / (4 * 1 + 7/12) = 35/55 = 7/11
    m = combo.get_metric("chrf")
    assert m.corpus_score(["ab"], [["abc"]]) == pytest.approx(7 / 11, abs=1e-15)
    # White space is removed before character n-grams are taken.
    assert m.segment_scores(["a b"], [[" abc "]])[0] == pytest.approx(7 / 11, abs=1e-15)
    # Several references: the best one (7/11 against "abc", 0 against "xyz") is kept.
    assert m.segment_scores(["ab"], [["xyz", "abc"]])[0] == pytest.approx(7 / 11, abs=1e-15)


def test_chrf_corpus_sums_statistics_hand_worked():
    # Segments ("ab", "abc") and ("", "xy"). Summed statistics:
    #   1-grams: hyp 2+0, ref 3+2, matches 2 -> P=1, R=2/5
    #   2-grams: hyp 1+0, ref 2+1, matches 1 -> P=1, R=1/3
    #   3-grams: hyp 0 -> not effective
    #   avgR = (2/5 + 1/3) / 2 = 11/30; F2 = 5 * 11/30 / (4 + 11/30) = 55/131
    m = combo.get_metric("chrf")
    assert m.corpus_score(["ab", ""], [["abc"], ["xy"]]) == pytest.approx(55 / 131, abs=1e-15)
    assert m.corpus_score(["ab", ""], [["abc"], ["xy"]]) == pytest.approx(
        SacreCHRF().corpus_score(["ab", ""], [["abc", "xy"]]).score / 100, abs=1e-12)


def test_chrf_plus_plus_hand_worked():
    # hyp "ab" vs ref "ab c." (characters "abc.", words ["ab", "c", "."]):
    #   char 1-grams: hyp 2, ref 4, matches 2 -> P=1, R=1/2
    #   char 2-grams: hyp 1 (ab), ref 3 (ab, bc, c.), matches 1 -> P=1, R=1/3
    #   char 3..6: hyp has none; word 1-grams: hyp 1, ref 3, matches 1 -> P=1, R=1/3
    #   word 2-grams: hyp has none
    #   avgR = (1/2 + 1/3 + 1/3) / 3 = 7/18; F2 = 5 * 7/18 / (4 + 7/18) = 35/79
    m = combo.get_metric("chrf++")
    assert m.corpus_score(["ab"], [["ab c."]]) == pytest.approx(35 / 79, abs=1e-15)
    assert m.word_order == 2 and combo.get_metric("chrf").word_order == 0


def test_eps_smoothing_hand_worked():
    # hyp "ab" vs ref "abc", char_order 3, eps smoothing: mean of per-order F2 over all 3 orders.
    #   n=1: P=1, R=2/3 -> F = 5 * 2/3 / (4 + 2/3) = 5/7
    #   n=2: P=1, R=1/2 -> F = 5 * 1/2 / (4 + 1/2) = 5/9
    #   n=3: hyp empty -> P=1e-16, R=0 -> F = 0
    #   chrF = (5/7 + 5/9 + 0) / 3 = 80/189
    m = combo.get_metric("chrf", char_order=3, eps_smoothing=True)
    assert m.corpus_score(["ab"], [["abc"]]) == pytest.approx(80 / 189, abs=1e-15)


def test_empty_hypotheses_and_references_have_defined_scores():
    hyps = ["", "abc", "", "a b"]
    refs = [["abc"], [""], [""], ["a b"]]
    for name, word_order in VARIANTS:
        ours = combo.get_metric(name).segment_scores(hyps, refs)
        theirs = [SacreCHRF(word_order=word_order).sentence_score(h, r).score / 100 for h, r in zip(hyps, refs)]
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
        assert ours[0] == 0 and ours[1] == 0 and ours[2] == 0 and ours[3] == pytest.approx(1.0)
        assert combo.get_metric(name).corpus_score([""], [[""]]) == 0.0


def test_bad_options_and_inputs():
    with pytest.raises(OptionError):
        combo.get_metric("chrf", char_order=-1)
    with pytest.raises(OptionError):
        combo.get_metric("chrf", char_order=0, word_order=0)
    with pytest.raises(OptionError):
        combo.get_metric("chrf", beta=-1)
    with pytest.raises(OptionError):
        combo.get_metric("chrf", colour="red")
    with pytest.raises(InputError):
        combo.get_metric("chrf").segment_scores(["a", "b"], [["a"], []])
    m = combo.get_metric("chrf++:beta=1,lowercase=yes")
    assert m.beta == 1 and m.lowercase is True
    assert "nw:2" in m.signature and "lc:yes" in m.signature


# -- building blocks --------------------------------------------------------------------

def test_character_counts_equal_generic_ngram_counts(monkeypatch):
    texts = ["abcab", "", "bca", "ääbc", "a", "abcabcabc", "日本語日本"]
    left = np.array([0, 0, 2, 3, 5, 6, 1, 4])
    right = np.array([2, 5, 5, 0, 0, 6, 0, 4])
    generic = NgramCounts([list(t) for t in texts], 4)
    for limit in (ngrams_module._KEY_LIMIT, 1000):  # 1000 forces dense renumbering of orders 3 and 4
        monkeypatch.setattr(ngrams_module, "_KEY_LIMIT", limit)
        fast = CharacterNgramCounts(texts, 4)
        np.testing.assert_array_equal(fast.lengths, generic.lengths)
        for n in range(4):
            np.testing.assert_array_equal(pair_matches(fast.matrices[n], left, right),
                                          pair_matches(generic.matrices[n], left, right))
            np.testing.assert_array_equal(np.asarray(fast.matrices[n].sum(axis=1)).ravel(), generic.totals(n + 1))
            # Same n-gram at the same positions: the two numberings are a bijection.
            a, b = fast.ngram_ids[n], generic.ngram_ids[n]
            np.testing.assert_array_equal(a == -1, b == -1)
            pairs = set(zip(a[a >= 0].tolist(), b[b >= 0].tolist()))
            assert len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})


def test_word_splitting_equals_sacrebleu(wmt12_de_en):
    ref, systems = wmt12_de_en
    theirs = SacreCHRF(word_order=2)
    lines = ref + systems["onlineC"] + ["(hi)", "'quoted'", "a . b", "--", "x"]
    assert all(split_punctuation(t) == theirs._remove_punctuation(t) for t in lines)


# -- oracle: sacreBLEU on WMT12 de-en ------------------------------------------------------

@pytest.mark.parametrize("name,word_order", VARIANTS)
def test_corpus_chrf_equals_sacrebleu_per_de_en_system(wmt12_de_en_peer_rows, name, word_order):
    # Default: 3 systems x 300 segments; slow: all 16 systems x 3,003.
    ref, systems = wmt12_de_en_peer_rows
    refs = [[r] for r in ref]
    ours = combo.get_metric(name)
    theirs = SacreCHRF(word_order=word_order, references=[ref])  # reference n-grams cached once
    diffs = [abs(ours.corpus_score(hyps, refs) - theirs.corpus_score(hyps, None).score / 100)
             for hyps in systems.values()]
    assert len(diffs) == len(systems) >= 3
    assert max(diffs) <= 1e-9


@pytest.mark.parametrize("name,word_order", VARIANTS)
def test_sentence_chrf_equals_sacrebleu_segment_by_segment(wmt12_de_en_peer_rows, name, word_order):
    # uedin-wmt12: its first 300 segments by default, all 3,003 in the slow variant.
    ref, systems = wmt12_de_en_peer_rows
    hyps = systems["uedin-wmt12"]
    ours = combo.get_metric(name).segment_scores(hyps, [[r] for r in ref])
    theirs = SacreCHRF(word_order=word_order)
    expected = np.array([theirs.sentence_score(h, [r]).score / 100 for h, r in zip(hyps, ref)])
    assert len(ours) == len(ref) >= 300
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name,word_order", VARIANTS)
def test_multi_reference_chrf_equals_sacrebleu(wmt12_de_en, name, word_order):
    ref, systems = wmt12_de_en
    # Two systems' outputs as the references: sacreBLEU keeps, per segment, the best-scoring one.
    # The first 1,000 segments (all 3,003: the slow sweeps).
    first, second = systems["onlineA"][:1000], systems["uedin-wmt12"][:1000]
    hyps = systems["onlineB"][:1000]
    refs = [[a, b] for a, b in zip(first, second)]
    ours = combo.get_metric(name)
    theirs = SacreCHRF(word_order=word_order)
    assert ours.corpus_score(hyps, refs) == pytest.approx(
        theirs.corpus_score(hyps, [first, second]).score / 100, abs=1e-9)
    expected = np.array([theirs.sentence_score(h, rs).score / 100 for h, rs in zip(hyps[:600], refs[:600])])
    np.testing.assert_allclose(ours.segment_scores(hyps[:600], refs[:600]), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("options", [
    {"lowercase": True},
    {"whitespace": True},
    {"eps_smoothing": True},
    {"beta": 1, "char_order": 4},
    {"word_order": 1, "eps_smoothing": True, "lowercase": True},
    {"char_order": 0, "word_order": 3},
])
def test_chrf_options_equal_sacrebleu(wmt12_de_en, options):
    ref, systems = wmt12_de_en
    hyps, refs = systems["onlineC"][:1000], ref[:1000]
    ours = combo.get_metric("chrf", **options)
    theirs = SacreCHRF(**options)
    assert ours.corpus_score(hyps, [[r] for r in refs]) == pytest.approx(
        theirs.corpus_score(hyps, [refs]).score / 100, abs=1e-9)
    expected = np.array([theirs.sentence_score(h, [r]).score / 100 for h, r in zip(hyps[:300], refs[:300])])
    np.testing.assert_allclose(ours.segment_scores(hyps[:300], [[r] for r in refs[:300]]), expected, atol=1e-9)


def test_all_systems_in_one_call_equal_per_system_calls(wmt12_de_en):
    ref, systems = wmt12_de_en
    m = combo.get_metric("chrf++")
    names = list(systems)[:3]
    hyps = [h for s in names for h in systems[s]]
    refs = [[r] for _ in names for r in ref]
    stats = m.segment_statistics(hyps, refs).reshape(len(names), 3003, -1)
    for k, s in enumerate(names):
        assert m.score(stats[k].sum(axis=0)) == m.corpus_score(systems[s], [[r] for r in ref])
