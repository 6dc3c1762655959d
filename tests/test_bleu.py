"""BLEU and ΔBLEU: oracle agreement with sacreBLEU on real data, and hand-worked ΔBLEU cases."""

import math
import warnings

import numpy as np
import pytest

import combo
from combo.errors import InputError, OptionError
from combo.analysis.tokenize import tokenize_13a, tokenize_13a_many, tokenize_intl

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU as SacreBLEU  # noqa: E402


def _sacre_sentence(hyps, refs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SacreBLEU(effective_order=True, **kw)
        return np.array([m.sentence_score(h, [r]).score / 100 for h, r in zip(hyps, refs)])


@pytest.mark.slow
def test_corpus_bleu_equals_sacrebleu_on_every_wmt12_into_english_system(wmt12_into_english):
    checked = 0
    for _pair, ref, systems in wmt12_into_english:
        refs = [[r] for r in ref]
        ours = combo.get_metric("bleu")
        theirs = SacreBLEU()
        for hyps in systems.values():
            assert ours.corpus_score(hyps, refs) == pytest.approx(
                theirs.corpus_score(hyps, [ref]).score / 100, abs=1e-9)
            checked += 1
    assert checked == 6 + 16 + 12 + 15


@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
def test_sentence_bleu_equals_sacrebleu_per_segment(wmt12_de_en_peer_rows, smooth):
    # onlineB: its first 300 segments by default, all 3,003 in the slow variant.
    ref, systems = wmt12_de_en_peer_rows
    hyps = systems["onlineB"]
    ours = combo.get_metric("bleu", smooth=smooth).segment_scores(hyps, [[r] for r in ref])
    theirs = _sacre_sentence(hyps, ref, smooth_method=smooth)
    assert len(ours) == len(ref) >= 300
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)


@pytest.mark.parametrize("options,theirs_kw", [
    ({"max_order": 2}, {"max_ngram_order": 2}),
    ({"tokenize": "intl"}, {"tokenize": "intl"}),
    ({"tokenize": "none"}, {"tokenize": "none"}),
    ({"lowercase": True}, {"lowercase": True}),
])
def test_bleu_options_match_sacrebleu(wmt12_de_en_peer_rows, options, theirs_kw):
    # Corpus BLEU of two systems: their first 300 segments (all 3,003 in the slow variant).
    ref, systems = wmt12_de_en_peer_rows
    for name in ("uedin-wmt12", "onlineB"):
        hyps = systems[name]
        ours = combo.get_metric("bleu", **options).corpus_score(hyps, [[r] for r in ref])
        assert ours == pytest.approx(SacreBLEU(**theirs_kw).corpus_score(hyps, [ref]).score / 100, abs=1e-9)


def test_multi_reference_bleu_equals_sacrebleu(wmt12_de_en):
    ref, systems = wmt12_de_en
    # Two other systems' outputs serve as extra references: closest-length and max-count clipping matter.
    # The first 1,000 segments.
    ref, r2, r3 = ref[:1000], systems["onlineA"][:1000], systems["onlineC"][:1000]
    hyps = systems["uedin-wmt12"][:1000]
    refs = [[a, b, c] for a, b, c in zip(ref, r2, r3)]
    ours = combo.get_metric("bleu")
    assert ours.corpus_score(hyps, refs) == pytest.approx(
        SacreBLEU().corpus_score(hyps, [ref, r2, r3]).score / 100, abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SacreBLEU(effective_order=True)
        theirs = np.array([m.sentence_score(h, list(rs)).score / 100 for h, rs in zip(hyps[:500], refs[:500])])
    np.testing.assert_allclose(ours.segment_scores(hyps[:500], refs[:500]), theirs, atol=1e-9)


def test_tokenizers_equal_sacrebleu(wmt12_de_en):
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International
    ref, systems = wmt12_de_en
    t13a, tintl = Tokenizer13a(), TokenizerV14International()
    lines = ref + systems["onlineB"] + ["a&amp;b &lt;c&gt; &quot;d&quot; 1,000.5 -3 x-\ny", "<skipped> 5-6"]
    for line in lines:
        assert tokenize_13a(line) == t13a(line)
        assert tokenize_intl(line) == tintl(line)


@pytest.mark.parametrize("every", [10, pytest.param(1, marks=pytest.mark.slow)])
def test_batch_13a_tokenizer_equals_sacrebleu_line_by_line_on_wmt12_lines(wmt12_into_english, every):
    # every 10th WMT12 into-English line (15,000+); every line (150,000+) with pytest -m slow
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    t13a = Tokenizer13a()
    lines = list(wmt12_into_english[0][1])
    for _pair, _ref, systems in wmt12_into_english:
        for out in systems.values():
            lines.extend(out)
    lines = lines[::every]
    lines += [f"{line} {k}" for k, line in enumerate(lines[:20000 // every])]  # with a digit: the number rules
    lines += ["a&amp;b &lt;c&gt; &quot;d&quot; 1,000.5 -3 x-\ny", "<skipped> 5-6", "", " ", "x\n", "1..,.2",
              "a...b 3.,.,4", ".,", "9-", "-9", "1--2", "\u010d. 1", "\U0001f600,2."]
    assert tokenize_13a_many(lines) == [t13a(line) for line in lines]
    assert tokenize_13a_many([]) == []


def test_delta_bleu_all_weights_one_is_bleu(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps = systems["onlineB"]
    refs = [[a, b] for a, b in zip(ref, systems["onlineA"])]
    weights = [[1.0, 1.0] for _ in refs]
    m = combo.get_metric("bleu")
    assert m.corpus_score(hyps, refs, weights) == pytest.approx(m.corpus_score(hyps, refs), abs=1e-12)
    np.testing.assert_allclose(m.segment_scores(hyps, refs, weights), m.segment_scores(hyps, refs), atol=1e-12)


def test_delta_bleu_hand_worked():
    # Galley et al. 2015, eq. 2, BLEU-2 on one segment, tokens split on spaces.
    # h = "a b c"; r1 = "a b d" (w = +0.5); r2 = "a x c" (w = -1.0)
    # unigrams of h: a, b, c.  a in r1 (min 1, w .5) and r2 (min 1, w -1): max = .5
    #                          b in r1 only: .5;  c in r2 only: -1.  numerator_1 = .5 + .5 - 1 = 0
    # Denominator_1 = max_j w_j * #unigrams(h) = .5 * 3 = 1.5  -> p1 = 0: BLEU = 0.
    m = combo.get_metric("bleu", max_order=2, tokenize="none", smooth="none")
    stats = m.segment_statistics(["a b c"], [["a b d", "a x c"]], [[0.5, -1.0]])
    assert stats[0, 2] == pytest.approx(0.0)
    assert stats[0, 4] == pytest.approx(1.5)
    # With w2 = +0.25: unigrams a: max(.5, .25) = .5, b: .5, c: .25 -> 1.25; denominator 1.5.
    # bigrams of h: "a b" in r1 only (.5); "b c" nowhere -> numerator_2 = .5; denominator_2 = .5 * 2 = 1.
    # Brevity: hyp 3 tokens, closest ref length 3 -> BP = 1.
    # BLEU-2 = exp((log(1.25 / 1.5) + log(.5 / 1)) / 2)
    stats = m.segment_statistics(["a b c"], [["a b d", "a x c"]], [[0.5, 0.25]])
    np.testing.assert_allclose(stats[0], [3, 3, 1.25, 0.5, 1.5, 1.0, 3, 2])  # then unweighted totals
    expected = math.exp((math.log(1.25 / 1.5) + math.log(0.5)) / 2)
    assert m.corpus_score(["a b c"], [["a b d", "a x c"]], [[0.5, 0.25]]) == pytest.approx(expected)


def test_delta_bleu_segment_without_positive_weight_is_an_error():
    m = combo.get_metric("bleu")
    with pytest.raises(InputError, match=r"hypothesis 1 \(0-based, in the order given\) has no reference with a "
                                         r"positive weight \(1 such hypotheses\)"):
        m.corpus_score(["a", "b"], [["a"], ["b", "c"]], [[1.0], [0.0, -0.5]])


def test_delta_bleu_on_a_test_bed_names_the_segment_and_counts_segments():
    # two systems on three segments: segment "s2" has no positive weight; the message names its id and counts
    # segments (1 of 3), not candidates (2) or a 0-based row
    from combo.testbed import Segment, Testbed

    segments = [Segment("s1", "x", ["a b"], weights=[1.0]), Segment("s2", "y", ["c d", "e"], weights=[0.0, -0.5]),
                Segment("s3", "z", ["f g"], weights=[0.5])]
    tb = Testbed("weighted", segments, {"A": dict(enumerate(["a b", "c d", "f g"])), "B": dict(enumerate("acf"))})
    with pytest.raises(InputError, match=r"segment 's2' of test bed 'weighted' has no reference with a positive "
                                         r"weight \(1 of 3 segments\)"):
        combo.score_testbed(tb, ["bleu"])


# Galley's sacreBLEU fork (the ΔBLEU authors' implementation), test_deltableu.py: two
# segments, six references each in sacreBLEU's stream layout, with the printed results
# BLEU 36.28 / 42.04, the same with all weights 1, ΔBLEU 33.11 (77.3/54.4/28.6/10.0)
# and 7.14 (32.0/6.2/4.2/3.1).
_AUTHORS_REFS = [["the food was delicious .", "it was great ."], ["it was tasty .", "i enjoyed the music ."],
                 ["it was good .", "i liked the music ."], ["it was ok .", "it sounded ok ."],
                 ["it didn't taste that bad", "it wasn't that bad ."], ["it tasted terrible .", "it was awful ."]]
_AUTHORS_WEIGHTS = [[1, 1], [0.7, 0.6], [0.3, 0.3], [0.0, 0.0], [-0.1, -0.1], [-1, -1]]
_AUTHORS_SYSTEMS = {1: ["the food was quite good .", "the music was great ."],
                    2: ["the food tasted terrible .", "the music was awful ."]}


def _percent_precisions(m, stats):
    n = m.params["max_order"]
    c, t = stats[2:2 + n].clip(min=0), stats[2 + n:2 + 2 * n]
    zero_run = np.cumsum(c == 0)
    return np.where(c > 0, 100 * c / t, 100 / (2.0 ** zero_run * t))


@pytest.mark.parametrize("system, bleu, delta, precisions", [
    (1, 36.28, 33.11, [77.3, 54.4, 28.6, 10.0]),
    (2, 42.04, 7.14, [32.0, 6.2, 4.2, 3.1]),
])
def test_delta_bleu_equals_the_authors_example(system, bleu, delta, precisions):
    m = combo.get_metric("bleu")
    refs = combo.refs_from_streams(_AUTHORS_REFS)
    weights = combo.refs_from_streams(_AUTHORS_WEIGHTS)
    hyps = _AUTHORS_SYSTEMS[system]
    assert round(100 * m.corpus_score(hyps, refs), 2) == bleu
    assert round(100 * m.corpus_score(hyps, refs, [[1.0] * 6] * 2), 2) == bleu
    assert round(100 * m.corpus_score(hyps, refs, weights), 2) == delta
    stats = m.segment_statistics(hyps, refs, weights).sum(axis=0)
    np.testing.assert_allclose(np.round(_percent_precisions(m, stats), 1), precisions)


def test_delta_bleu_negative_corpus_count_is_zero_then_smoothed():
    # System 2 above: bigram weighted matches are -1 ("the food" 1, "tasted terrible" -1,
    # "terrible ." -1) and -1.4 ("the music" .6, "was awful" -1, "awful ." -1): -2.4 in all,
    # counted as 0 and smoothed: p2 = 1 / (2 * 8 bigrams).
    m = combo.get_metric("bleu")
    stats = m.segment_statistics(_AUTHORS_SYSTEMS[2], combo.refs_from_streams(_AUTHORS_REFS),
                                 combo.refs_from_streams(_AUTHORS_WEIGHTS))
    np.testing.assert_allclose(stats[:, 3], [-1.0, -1.4])
    unigram = 3.2 / 10
    expected = math.exp((math.log(unigram) + math.log(1 / 16) + math.log(1 / 24) + math.log(1 / 32)) / 4)
    assert m.score(stats.sum(axis=0)) == pytest.approx(expected)


def test_delta_bleu_smoothing_is_in_weighted_units():
    # "the cat sat" against "the cat ran": p1 = 2/3, p2 = 1/2, p3 has no match and is smoothed
    # (exp: 1 / (2 * 1 trigram)), so sentence BLEU = (2/3 * 1/2 * 1/2)^(1/3) = 0.5503 with
    # weight 1. A weight w multiplies matches and totals by w, and the pseudo-count too, so
    # the score is the same for every w > 0 (the pseudo-count in count units gave 2.554 at w = .01).
    m = combo.get_metric("bleu")
    expected = (2 / 3 * 1 / 2 * 1 / 2) ** (1 / 3)
    for w in (1.0, 0.5, 0.01):
        for smooth in ("exp", "floor", "add-k"):
            mw = combo.get_metric("bleu", smooth=smooth)
            assert mw.segment_scores(["the cat sat"], [["the cat ran"]], [[w]])[0] == pytest.approx(
                mw.segment_scores(["the cat sat"], [["the cat ran"]])[0])
        assert m.segment_scores(["the cat sat"], [["the cat ran"]], [[w]])[0] == pytest.approx(expected)


def test_delta_bleu_stays_in_unit_interval_for_random_weights():
    # Property: for random texts, reference sets and weights in [-1, 1] (at least one positive
    # per segment), every segment and corpus score of every smoothing method lies in [0, 1].
    # 200 random corpora of 1-3 segments, scored in one call per metric: the corpus score is the score of the
    # summed segment statistics (Metric.corpus_score), and BLEU's rows are independent
    rng = np.random.default_rng(7)
    vocab = ["a", "b", "c", "d", "e"]
    metrics = [combo.get_metric("bleu", smooth=s, tokenize="none") for s in ("exp", "floor", "add-k", "none")]
    hyps, refs, weights, corpus_of = [], [], [], []
    for c in range(200):
        for _ in range(int(rng.integers(1, 4))):
            hyps.append(" ".join(rng.choice(vocab, int(rng.integers(1, 7)))))
            k = int(rng.integers(1, 4))
            refs.append([" ".join(rng.choice(vocab, int(rng.integers(1, 7)))) for _ in range(k)])
            w = rng.uniform(-1, 1, k)
            w[int(rng.integers(k))] = rng.uniform(1e-3, 1)
            weights.append(w.tolist())
            corpus_of.append(c)
    corpus_of = np.asarray(corpus_of)
    for m in metrics:
        stats = m.segment_statistics(hyps, refs, weights)
        seg = np.asarray(m.score(stats, segment_level=True))
        sums = np.zeros((200, stats.shape[1]))
        np.add.at(sums, corpus_of, stats)
        corpus = np.asarray(m.score(sums, segment_level=False))
        assert np.all((seg >= 0) & (seg <= 1 + 1e-12)), m.signature
        assert np.all((corpus >= 0) & (corpus <= 1 + 1e-12)), m.signature
        first = corpus_of == 0  # the batched statistics are those of a call on one corpus alone
        assert corpus[0] == m.corpus_score([h for h, f in zip(hyps, first) if f], [r for r, f in zip(refs, first) if f],
                                           [w for w, f in zip(weights, first) if f])


@pytest.mark.parametrize("bad", [2.0, -1.5, float("nan")])
def test_delta_bleu_weight_outside_unit_range_is_an_error(bad):
    m = combo.get_metric("bleu")
    with pytest.raises(InputError, match=r"segment 1 has reference weight .* outside \[-1, 1\]"):
        m.corpus_score(["a", "b"], [["a"], ["b", "c"]], [[1.0], [0.5, bad]])


def test_empty_hypotheses_and_references_have_defined_scores():
    m = combo.get_metric("bleu")
    scores = m.segment_scores(["", "the cat", ""], [["the cat"], [""], [""]])
    assert np.all(np.isfinite(scores)) and np.all(scores == 0.0)
    assert m.corpus_score([""], [[""]]) == 0.0


def test_identical_text_scores_one():
    m = combo.get_metric("bleu")
    text = "the quick brown fox jumps over the lazy dog"
    assert m.corpus_score([text], [[text]]) == pytest.approx(1.0)


def test_pairwise_scores_reuse_one_analysis():
    m = combo.get_metric("bleu")
    texts = ["the cat sat on the mat", "a cat sat on a mat", "the cat is on the mat"]
    left, right = np.array([0, 1, 2, 0]), np.array([1, 2, 0, 0])
    got = m.pairwise_scores(texts, left, right)
    want = [m.segment_scores([texts[a]], [[texts[b]]])[0] for a, b in zip(left, right)]
    np.testing.assert_allclose(got, want)


def test_bad_options_and_layouts():
    with pytest.raises(OptionError):
        combo.get_metric("bleu", smooth="magic")
    with pytest.raises(OptionError):
        combo.get_metric("bleu", max_order=0)
    with pytest.raises(OptionError):
        combo.get_metric("bleu", colour="red")
    with pytest.raises(OptionError, match="refs\\[0\\] is a string"):
        combo.get_metric("bleu").corpus_score(["a"], ["a"])
    with pytest.raises(OptionError, match="reference lists"):
        combo.get_metric("bleu").corpus_score(["a", "b"], [["a"]])


def test_signature_names_every_option():
    sig = combo.get_metric("bleu:max_order=2,smooth=floor").signature
    assert sig.startswith("bleu|n:2|smooth:floor|")
    assert "tok:13a" in sig and f"version:{combo.__version__}" in sig
