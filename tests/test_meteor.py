"""METEOR (Banerjee & Lavie 2005): hand-worked examples, NLTK's meteor_score on WMT12 de-en, WordNet handling."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from combo import OptionError, get_metric
from combo.analysis.tokenize import tokenize_13a

nltk_meteor = pytest.importorskip("nltk.translate.meteor_score")


@pytest.fixture(scope="module")
def wordnet(data):
    """NLTK's WordNet from the shared data folder (skips without it)."""
    from combo.analysis.wordnet import load_wordnet

    return load_wordnet()


class NoSynonyms:
    """A WordNet stand-in without synsets: NLTK's meteor_score then runs exact and stem stages only."""

    def synsets(self, word):
        return []


class NoStems:
    """A stemmer that keeps words: NLTK's stem stage then matches nothing new."""

    def stem(self, word):
        return word


def _tok(lines):
    return [tokenize_13a(line).split() for line in lines]


def test_hand_worked_examples(wordnet):
    meteor = get_metric("meteor")
    # "the cat sat on the mat" vs "on the mat sat the cat": 6 exact matches, P = R = Fmean = 1.
    # Greedy from the last hypothesis word: mat->2, the(4)->4 (the last free "the"), on->0, sat->3,
    # cat->5, the(0)->1. Sorted by hypothesis position: (0,1) (1,5) (2,3) (3,0) (4,4) (5,2): no two
    # consecutive in both, so 6 chunks; Pen = 0.5 * (6/6)^3 = 0.5; METEOR = 0.5.
    assert meteor.segment_scores(["the cat sat on the mat"], [["on the mat sat the cat"]])[0] == pytest.approx(0.5)
    # "He runs quickly" vs "he run quick": exact "he" (after lowercasing); stem "runs"/"run" -> "run";
    # "quickly" -> "quickli" and "quick" -> "quick" differ, and WordNet has no synset for "quickli".
    # m = 2, P = R = 2/3, Fmean = 2/3; chunks (0,0)(1,1) = 1: Pen = 0.5 * (1/2)^3 = 1/16.
    # METEOR = (15/16) * (2/3) = 0.625.
    assert meteor.segment_scores(["He runs quickly"], [["he run quick"]])[0] == pytest.approx(0.625)
    # "a fast car" vs "a quick car": "fast" and "quick" share a WordNet synset, and both are their own
    # Porter stems: m = 3 in one chunk, Pen = 0.5 / 27, METEOR = 1 - 1/54.
    assert meteor.segment_scores(["a fast car"], [["a quick car"]])[0] == pytest.approx(1 - 1 / 54)
    # "the big dog" vs "the large dog": WordNet lists "large" for "big", but NLTK compares it with the
    # reference's *stem* "larg": no match. m = 2, P = R = 2/3, chunks 2, Pen = 0.5, METEOR = 1/3.
    assert meteor.segment_scores(["the big dog"], [["the large dog"]])[0] == pytest.approx(1 / 3)
    # synonyms_of="word" compares words (Banerjee & Lavie): m = 3, one chunk, METEOR = 1 - 1/54.
    by_word = get_metric("meteor", synonyms_of="word")
    assert by_word.segment_scores(["the big dog"], [["the large dog"]])[0] == pytest.approx(1 - 1 / 54)
    for hyp, ref in [("the cat sat on the mat", "on the mat sat the cat"), ("He runs quickly", "he run quick"),
                     ("a fast car", "a quick car"), ("the big dog", "the large dog")]:
        assert meteor.segment_scores([hyp], [[ref]])[0] == pytest.approx(
            nltk_meteor.meteor_score([ref.split()], hyp.split()), abs=1e-12)


def test_fmean_and_penalty_formula():
    # "a b c d" vs "a b x y z": exact only. m = 2, P = 2/4, R = 2/5, one chunk.
    # Fmean = P R / (0.9 P + 0.1 R) = 0.2 / 0.49; Pen = 0.5 * (1/2)^3 = 1/16.
    meteor = get_metric("meteor", modules="exact")
    expected = (1 - 1 / 16) * 0.2 / 0.49
    assert meteor.segment_scores(["a b c d"], [["a b x y z"]])[0] == pytest.approx(expected, abs=1e-12)
    # alpha 0.5, beta 1, gamma 1: Fmean = 2PR / (P + R) = 0.4 / 0.9, Pen = 1 * (1/2)^1.
    other = get_metric("meteor", modules="exact", alpha=0.5, beta=1.0, gamma=1.0)
    assert other.segment_scores(["a b c d"], [["a b x y z"]])[0] == pytest.approx(0.5 * 0.4 / 0.9, abs=1e-12)


def test_matches_nltk_on_wmt12(wordnet, wmt12_de_en):
    ref, systems = wmt12_de_en
    n = 300  # the first 300 segments of two systems
    meteor = get_metric("meteor", tokenize="13a")
    refs_tok = _tok(ref[:n])
    checked = 0
    for name in ["onlineA", "uedin-wmt12"]:
        hyps = systems[name][:n]
        hyps_tok = _tok(hyps)
        expected = np.array([nltk_meteor.meteor_score([r], h) for r, h in zip(refs_tok, hyps_tok)])
        got = meteor.segment_scores(hyps, [[r] for r in ref[:n]])
        assert np.max(np.abs(got - expected)) <= 1e-9, name
        assert meteor.corpus_score(hyps, [[r] for r in ref[:n]]) == pytest.approx(expected.mean(), abs=1e-12)
        checked += n
    assert checked == 2 * n


def test_the_reader_gives_nltks_synonyms(wordnet):
    # combo reads WordNet's files itself: the lemma names of a word's synsets must be those nltk.corpus.wordnet
    # gives, over a seeded sample of lemma names and of inflected forms that morphy lemmatises. NLTK 3.8's
    # morphy applied its rules again while no form was found (3,024 of 311,757 such words differ); combo's,
    # as NLTK 3.9+'s, applies them once.
    import random

    nltk = pytest.importorskip("nltk")
    if tuple(int(part) for part in nltk.__version__.split(".")[:2]) < (3, 9):
        pytest.skip(f"NLTK {nltk.__version__}'s morphy is not NLTK 3.9+'s, which combo's reader follows")
    from nltk.corpus import wordnet as nltk_wordnet

    from combo.analysis.wordnet import synonym_lemmas

    names = sorted({w for pos, _ in wordnet.FILES for w in wordnet.index_lemmas(pos)})
    sample = random.Random(7).sample(names, 1500)
    words = sample + [w + suffix for w in sample[:200] for suffix in ("s", "es", "ed", "ing", "er", "est")] + [
        "dogs", "running", "went", "geese", "better", "is", "axes", "Dogs", "feelings", "leaves", "ready_to_hand"]
    for word in words:
        expected = {lemma.name() for s in nltk_wordnet.synsets(word) for lemma in s.lemmas()}
        assert wordnet.synset_lemma_names(word) == expected, word
        assert synonym_lemmas(word) == frozenset({n for n in expected if "_" not in n} | {word}), word


def test_the_readers_steps_by_hand(wordnet):
    # index.noun's line "dog n 7 5 @ ~ #m #p %p 7 1 02084071 ..." (seven synsets after five pointer symbols)
    assert wordnet.offsets("dog", "n") == [2084071, 10114209, 10023039, 9886220, 7676602, 3901548, 2710044]
    # data.noun at 02084071: "02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 ..." (w_cnt in hex)
    assert wordnet.lemma_names("n", 2084071) == ["dog", "domestic_dog", "Canis_familiaris"]
    # data.adj at 00019731: "... s 02 handy 0 ready_to_hand(p) 0 ...": the syntactic marker (p) is dropped
    assert wordnet.lemma_names("a", 19731) == ["handy", "ready_to_hand"]
    # morphy: the exception list first (verb.exc "went go", noun.exc "geese goose"), else one rule
    assert wordnet.morphy("went", "v") == ["go"] and wordnet.morphy("geese", "n") == ["goose"]
    assert wordnet.morphy("leaves", "n") == ["leaf", "leave"]  # noun.exc "leaves leaf leave", in its order
    assert wordnet.morphy("boxes", "n") == ["box"]  # no exception: s -> "" gives "boxe" (absent), xes -> x "box"
    # one step only: "feelings" is the noun "feelings"/"feeling", not the verb "feel" (s, then ing: two steps)
    assert wordnet.morphy("feelings", "n") == ["feelings", "feeling"] and wordnet.morphy("feelings", "v") == []
    assert wordnet.morphy("feeling", "v") == ["feel"]


def test_two_references_take_the_best(wordnet, wmt12_de_en):
    # Second reference: another system's output (WMT12 has one human reference).
    ref, systems = wmt12_de_en
    idx = range(0, 3003, 10)
    hyps = [systems["jhu-hiero"][i] for i in idx]
    refs = [[ref[i], systems["onlineB"][i]] for i in idx]
    got = get_metric("meteor", tokenize="13a").segment_scores(hyps, refs)
    expected = [nltk_meteor.meteor_score([_tok([a])[0] for a in rs], _tok([h])[0]) for h, rs in zip(hyps, refs)]
    assert np.max(np.abs(got - np.array(expected))) <= 1e-9


def test_modules_and_options_match_nltk(wordnet, wmt12_de_en):
    ref, systems = wmt12_de_en
    idx = range(1, 3003, 15)
    hyps = [systems["onlineC"][i] for i in idx]
    refs = [ref[i] for i in idx]
    h_tok, r_tok = _tok(hyps), _tok(refs)
    rows = [[r] for r in refs]

    def nltk(**kw):
        return np.array([nltk_meteor.meteor_score([r], h, **kw) for r, h in zip(r_tok, h_tok)])

    cases = [
        (dict(modules="exact,stem"), dict(wordnet=NoSynonyms())),
        (dict(modules="exact"), dict(wordnet=NoSynonyms(), stemmer=NoStems())),
        (dict(alpha=0.8, beta=2.0, gamma=0.4), dict(alpha=0.8, beta=2.0, gamma=0.4)),
        (dict(lowercase=False), dict(preprocess=lambda w: w)),
    ]
    for ours, theirs in cases:
        got = get_metric("meteor", tokenize="13a", **ours).segment_scores(hyps, rows)
        assert np.max(np.abs(got - nltk(**theirs))) <= 1e-9, ours
    # Pre-tokenised input with the default white-space split gives the same scores.
    joined = get_metric("meteor").segment_scores([" ".join(h) for h in h_tok], [[" ".join(r)] for r in r_tok])
    assert np.max(np.abs(joined - nltk())) <= 1e-9


def test_fewer_modules_match_fewer_words(wordnet, wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps, refs = systems["onlineF"][:300], [[r] for r in ref[:300]]
    full = get_metric("meteor", tokenize="13a").corpus_score(hyps, refs)
    stem = get_metric("meteor", tokenize="13a", modules="exact+stem").corpus_score(hyps, refs)
    exact = get_metric("meteor", tokenize="13a", modules="exact").corpus_score(hyps, refs)
    assert exact < stem < full


def test_missing_wordnet_raises_with_the_fix(tmp_path):
    # A fresh interpreter whose NLTK data path is an empty folder: exact+stem works, synonym fails cleanly.
    code = textwrap.dedent("""
        import nltk
        nltk.data.path[:] = [{empty!r}]
        from combo import ResourceMissing, get_metric
        print(get_metric("meteor", modules="exact,stem").corpus_score(["the cats sat"], [["the cat sat"]]))
        try:
            get_metric("meteor").corpus_score(["the cats sat"], [["the cat sat"]])
        except ResourceMissing as err:
            print("MISSING", err)
    """).format(empty=str(tmp_path))
    env = dict(os.environ, NLTK_DATA=str(tmp_path), COMBO_DATA_HOME=str(tmp_path))  # no WordNet anywhere
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert float(first) == pytest.approx(1 - 0.5 / 27)  # 3 matches (cats/cat by stem) in one chunk
    assert second.startswith("MISSING") and "nltk.downloader wordnet" in second and "NLTK_DATA" in second


def test_empty_texts_and_rows():
    meteor = get_metric("meteor", modules="exact,stem")
    assert meteor.segment_scores([""], [["a b"]]).tolist() == [0.0]
    assert meteor.segment_scores(["a b"], [[""]]).tolist() == [0.0]
    assert meteor.segment_scores([""], [[""]]).tolist() == [0.0]
    assert meteor.segment_scores(["a b"], [["c d"]]).tolist() == [0.0]
    seg = meteor.segment_scores(["a b", "a b", "a b"], [["a b"], [], ["", "a b"]])
    assert seg.tolist() == pytest.approx([1 - 0.5 / 8, 0.0, 1 - 0.5 / 8])  # m = 2, one chunk
    assert meteor.corpus_score(["a b", "x"], [["a b"], ["y"]]) == pytest.approx((1 - 0.5 / 8) / 2)
    assert meteor.corpus_score([], []) == 0.0


def test_shared_texts_and_pairwise(wordnet):
    meteor = get_metric("meteor")
    texts = ["the cat sat", "a cat sat down", "the dog ran"]
    pair = meteor.pairwise_scores(texts, np.array([0, 1, 0]), np.array([1, 0, 2]))
    single = [meteor.segment_scores([texts[a]], [[texts[b]]])[0] for a, b in [(0, 1), (1, 0), (0, 2)]]
    assert pair.tolist() == pytest.approx(single)
    # The same hypothesis in several rows gets the same score.
    seg = meteor.segment_scores(["the cat sat"] * 3, [["a cat sat down"]] * 3)
    assert np.ptp(seg) == 0.0


def test_options():
    with pytest.raises(OptionError):
        get_metric("meteor", modules="exact,paraphrase")
    with pytest.raises(OptionError):
        get_metric("meteor", modules="")
    with pytest.raises(OptionError):
        get_metric("meteor", alpha=1.5)
    with pytest.raises(OptionError):
        get_metric("meteor", synonyms_of="lemma")
    m = get_metric("meteor:modules=stem+exact,alpha=0.85,tokenize=13a")
    assert m.params["modules"] == "exact,stem"
    assert m.signature.startswith("meteor|alpha:0.85|beta:3.0|gamma:0.5|mod:exact,stem|syn:stem|tok:13a|lc:yes|")
