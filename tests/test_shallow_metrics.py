"""Asiya's shallow-syntactic metrics SP-Op, SP-Oc and SP-NIST: hand-worked examples, edge cases, WMT12 de-en."""

import math
from collections import Counter

import numpy as np
import pytest

from combo import get_metric
from combo.errors import InputError, OptionError, ResourceMissing
from combo.analysis import layers
from combo.analysis.layers import annotate
from combo.metrics.shallow import PENN_TAGS, chunk_type, typed_overlaps, typed_word_counts

pytest.importorskip("textblob")

HYP = "The black cat sat on the mat."
REF = "A black dog sat on a mat."


def test_pattern_parses_used_below():
    hyp, ref = annotate("shallow", [HYP, REF])
    assert hyp.pos == ref.pos == ("DT", "JJ", "NN", "VBD", "IN", "DT", "NN", ".")
    assert hyp.chunks == ref.chunks == ("B-NP", "I-NP", "I-NP", "B-VP", "B-PP", "B-NP", "I-NP", "O")


def test_sp_op_hand_worked():
    # Lowercased words per POS tag, hypothesis | reference:
    #   DT  {the: 2} | {a: 2}            min 0, max 2 + 2 = 4  -> 0
    #   JJ  {black}  | {black}           1 / 1                 -> 1
    #   NN  {cat, mat} | {dog, mat}      min 1 (mat), max 3     -> 1/3
    #   VBD {sat}, IN {on}, . {.}: identical                   -> 1, 1, 1
    # SP-Op(*) = (0 + 1 + 1/3 + 1 + 1 + 1) / 6 = 13/18.
    assert get_metric("sp-op").segment_scores([HYP], [[REF]])[0] == pytest.approx(13 / 18, abs=1e-12)
    assert get_metric("sp-op:tag=NN").segment_scores([HYP], [[REF]])[0] == pytest.approx(1 / 3, abs=1e-12)
    assert get_metric("sp-op", tag="DT").segment_scores([HYP], [[REF]])[0] == 0.0
    # A tag neither text has: 0 / 0, defined as 1 (nothing to translate, nothing translated).
    assert get_metric("sp-op", tag="VBZ").segment_scores([HYP], [[REF]])[0] == 1.0


def test_sp_oc_hand_worked():
    # Words per chunk type (B-/I- stripped), lowercased:
    #   NP {the: 2, black, cat, mat} | {a: 2, black, dog, mat}: min black + mat = 2,
    #      max the 2 + a 2 + black 1 + cat 1 + dog 1 + mat 1 = 8                  -> 1/4
    #   VP {sat} | {sat}, PP {on} | {on}, O {.} | {.}                             -> 1, 1, 1
    # SP-Oc(*) = (1/4 + 3) / 4 = 13/16.
    assert get_metric("sp-oc").segment_scores([HYP], [[REF]])[0] == pytest.approx(13 / 16, abs=1e-12)
    assert get_metric("sp-oc:chunk=NP").segment_scores([HYP], [[REF]])[0] == pytest.approx(0.25, abs=1e-12)
    assert chunk_type("B-NP") == chunk_type("I-NP") == "NP" and chunk_type("O") == "O"


def test_lowercase_option():
    hyp, ref = "The cat sat.", "the cat sat."
    assert [p.pos for p in annotate("shallow", [hyp, ref])] == [("DT", "NN", "VBD", ".")] * 2
    assert get_metric("sp-op").segment_scores([hyp], [[ref]])[0] == 1.0
    # Cased: DT {The} | {the}: 0 / 2; NN, VBD and "." agree: (0 + 1 + 1 + 1) / 4.
    assert get_metric("sp-op", lowercase=False).segment_scores([hyp], [[ref]])[0] == 0.75


def test_typed_overlaps_helper():
    # Text 0: (N a) (N a) (V b); text 1: (N a) (V c); text 2: nothing.
    counts = typed_word_counts([["N", "N", "V"], ["N", "V"], []], [["a", "a", "b"], ["a", "c"], []])
    hyp, ref = np.array([0, 1, 0, 2]), np.array([1, 0, 2, 2])
    # (0, 1): N min 1 / max 2; V {b} | {c}: 0 / 2; mean 1/4. Symmetric for (1, 0).
    # (0, 2): N 0/2, V 0/1 -> 0.  (2, 2): no type present -> 1.
    assert typed_overlaps(counts, hyp, ref).tolist() == [0.25, 0.25, 0.0, 1.0]
    assert typed_overlaps(counts, hyp, ref, "N").tolist() == [0.5, 0.5, 0.0, 1.0]
    assert typed_overlaps(counts, hyp, ref, "X").tolist() == [1.0] * 4  # a type no text has
    empty = typed_word_counts([[], []], [[], []])
    assert typed_overlaps(empty, np.array([0]), np.array([1])).tolist() == [1.0]


def test_sp_nist_hand_worked():
    # POS tags: hypothesis "the cat sat" DT NN VBD; reference "the the cat" DT DT NN. max_order 2.
    # Reference counts: DT 2, NN 1 (3 tags); bigrams "DT DT" 1, "DT NN" 1.
    # Info(DT) = log2(3/2), Info(NN) = log2(3/1), Info(DT NN) = log2(count(DT) / count(DT NN)) = log2(2) = 1.
    # Unigrams: DT and NN match (VBD does not): (log2 1.5 + log2 3) / 3 hypothesis tags.
    # Bigrams "DT NN" (matches), "NN VBD": 1 / 2. Equal lengths: no penalty.
    hyp, ref = "the cat sat", "the the cat"
    assert [p.pos for p in annotate("shallow", [hyp, ref])] == [("DT", "NN", "VBD"), ("DT", "DT", "NN")]
    expected = (math.log2(1.5) + math.log2(3)) / 3 + 0.5
    metric = get_metric("sp-nist", max_order=2)
    assert metric.corpus_score([hyp], [[ref]]) == pytest.approx(expected, abs=1e-12)
    assert metric.segment_scores([hyp], [[ref]])[0] == pytest.approx(expected, abs=1e-12)
    # BIO chunk tags B-NP I-NP B-VP on both sides ("a dog sat"): unigram weights log2(3) each, the
    # bigrams follow their prefix every time (weight log2(1) = 0): NIST = 3 log2(3) / 3 = log2(3).
    chunked = get_metric("sp-nist", over="chunk", max_order=2)
    assert chunked.corpus_score(["the cat sat"], [["a dog sat"]]) == pytest.approx(math.log2(3), abs=1e-12)


@pytest.mark.parametrize("name", ["sp-op", "sp-oc"])
def test_identical_empty_and_symmetric(name):
    metric = get_metric(name)
    scores = metric.segment_scores([HYP, "", HYP, "", "   "], [[HYP], [""], [""], [REF], [""]])
    assert scores.tolist() == [1.0, 1.0, 0.0, 0.0, 1.0]  # identical, both empty, one empty (twice)
    forward = metric.segment_scores([HYP, REF], [[REF], [HYP]])
    assert forward[0] == pytest.approx(forward[1], abs=1e-15)  # a Jaccard: symmetric


def test_sp_nist_empty_texts():
    metric = get_metric("sp-nist")
    scores = metric.segment_scores(["", HYP, ""], [[REF], [""], [""]])
    assert scores.tolist() == [0.0, 0.0, 0.0]  # as lexical NIST: no hypothesis n-gram, no weight
    assert np.isfinite(metric.corpus_score(["", HYP], [[REF], [REF]]))


def test_long_and_non_latin_texts():
    long_text = " ".join(["the cat sat on the mat and"] * 143)  # 1,001 tokens
    other = " ".join(["a dog sat on a mat or"] * 143)
    for name in ("sp-op", "sp-oc"):
        metric = get_metric(name)
        scores = metric.segment_scores([long_text, long_text, "Собака громко лает.", "猫が座った。"],
                                       [[long_text], [other], ["Собака громко лает."], ["犬が座った。"]])
        assert scores[0] == 1.0 and 0.0 < scores[1] < 1.0 and scores[2] == 1.0
        assert 0.0 <= scores[3] < 1.0
    nist = get_metric("sp-nist").segment_scores([long_text], [[other]])
    assert np.isfinite(nist).all() and nist[0] > 0


@pytest.mark.parametrize("name", ["sp-op", "sp-oc", "sp-nist"])
def test_best_of_several_references(name):
    metric = get_metric(name)
    refs = [REF, "The black cat sat on a mat.", "Nothing here matches at all !"]
    alone = [metric.segment_scores([HYP], [[r]])[0] for r in refs]
    together = metric.segment_scores([HYP, HYP], [refs, refs[:1]])
    if name == "sp-nist":
        # NIST's own rule (mteval): clip by the largest count in any reference, average reference length;
        # the same as lexical NIST given the joined tag sequences.
        tags = {t: " ".join(p.pos) for t, p in zip([HYP] + refs, annotate("shallow", [HYP] + refs))}
        lexical = get_metric("nist", tokenize="none").segment_scores(
            [tags[HYP]] * 2, [[tags[r] for r in refs], [tags[refs[0]]]])
        assert np.abs(together - lexical).max() < 1e-12
    else:
        assert together == pytest.approx([max(alone), alone[0]], abs=1e-12)


def test_options_signature_and_bad_options():
    assert get_metric("sp-op:tag=NN").signature.startswith("sp-op|tag:NN|lc:yes|impl:")
    assert get_metric("sp-oc", chunk="VP", lowercase=False).signature.startswith("sp-oc|chunk:VP|lc:no|")
    assert get_metric("sp-nist:over=chunk,max_order=4").signature.startswith("sp-nist|over:chunk|n:4|mr:mteval|")
    with pytest.raises(OptionError, match="tag"):
        get_metric("sp-op", tag="XYZ")  # not a Penn Treebank tag
    with pytest.raises(OptionError, match="chunk"):
        get_metric("sp-oc", chunk="NN")
    with pytest.raises(OptionError):
        get_metric("sp-nist", over="words")
    assert {"NN", "PRP$", ".", "``"} <= set(PENN_TAGS)
    with pytest.raises(InputError, match="no reference"):
        get_metric("sp-op").segment_scores([HYP], [[]])


@pytest.mark.parametrize("name", ["sp-op", "sp-oc", "sp-nist"])
def test_missing_textblob_is_resource_missing(name, monkeypatch):
    def absent():
        raise ResourceMissing("TextBlob's Pattern parser (package textblob)", "pip install textblob")

    monkeypatch.setattr(layers.get_layer("shallow"), "check", absent)
    metric = get_metric(name)
    with pytest.raises(ResourceMissing, match="pip install textblob"):
        metric.check_resources()
    with pytest.raises(ResourceMissing):
        metric.segment_scores(["a cat"], [["a dog"]])
    assert metric.resources == ("textblob",) and metric.layers == ("shallow",)
    assert metric.family == "shallow-syntactic"


# --- WMT12 de-en ------------------------------------------------------------------------

def _plain_overlap(hyp_items, ref_items, only="*"):
    """Asiya's Overlap from Counters of (type, word): the per-pair definition, written out."""
    hyp_c, ref_c = Counter(hyp_items), Counter(ref_items)
    types = {t for t, _ in hyp_c} | {t for t, _ in ref_c}
    if only != "*":
        types = [only]
    ratios = []
    for t in types:
        keys = {k for k in hyp_c | ref_c if k[0] == t}
        low = sum(min(hyp_c[k], ref_c[k]) for k in keys)
        high = sum(max(hyp_c[k], ref_c[k]) for k in keys)
        if high:
            ratios.append(low / high)
        elif only != "*":
            ratios.append(1.0)
    return sum(ratios) / len(ratios) if ratios else 1.0


@pytest.fixture(scope="module")
def sample(wmt12_two_references):
    return wmt12_two_references


@pytest.mark.parametrize("name,option,value", [("sp-op", "tag", "*"), ("sp-op", "tag", "NN"),
                                               ("sp-oc", "chunk", "*"), ("sp-oc", "chunk", "VP")])
def test_vectorised_equals_plain_per_pair_on_wmt12(sample, name, option, value):
    hyps, refs = sample
    metric = get_metric(name, **{option: value})
    scores = metric.segment_scores(hyps, refs)
    assert np.isfinite(scores).all() and (scores >= 0).all() and (scores <= 1).all()
    parse = dict(zip(set(hyps) | {r for rs in refs for r in rs},
                     annotate("shallow", list(set(hyps) | {r for rs in refs for r in rs}))))

    def items(text):
        p = parse[text]
        kinds = p.pos if name == "sp-op" else [chunk_type(c) for c in p.chunks]
        return list(zip(kinds, (w.lower() for w in p.words)))

    expected = [max(_plain_overlap(items(h), items(r), value) for r in rs) for h, rs in zip(hyps, refs)]
    assert np.abs(scores - np.array(expected)).max() < 1e-12
    assert metric.corpus_score(hyps, refs) == pytest.approx(np.mean(expected), abs=1e-12)
    # symmetric per pair
    back = metric.segment_scores([rs[0] for rs in refs], [[h] for h in hyps])
    forth = metric.segment_scores(hyps, [[rs[0]] for rs in refs])
    assert np.abs(back - forth).max() < 1e-12


def test_sp_nist_equals_nltk_and_lexical_nist_on_tag_sequences(wmt12_de_en):
    nltk_nist = pytest.importorskip("nltk.translate.nist_score")
    ref, systems = wmt12_de_en
    refs = [[r] for r in ref[:200]]
    for over in ("pos", "chunk"):
        metric = get_metric("sp-nist", over=over)
        lexical = get_metric("nist", tokenize="none")
        for name in sorted(systems)[:2]:
            hyps = systems[name][:200]
            tags = {t: p.pos if over == "pos" else p.chunks
                    for t, p in zip(hyps + ref[:200], annotate("shallow", hyps + ref[:200]))}
            expected = nltk_nist.corpus_nist([[list(tags[r[0]])] for r in refs],
                                             [list(tags[h]) for h in hyps], n=5)
            got = metric.corpus_score(hyps, refs)
            assert got == pytest.approx(expected, rel=1e-12)
            joined = lexical.segment_scores([" ".join(tags[h]) for h in hyps], [[" ".join(tags[r[0]])] for r in refs])
            assert np.abs(metric.segment_scores(hyps, refs) - joined).max() < 1e-12
