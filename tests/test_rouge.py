"""ROUGE-N/L/W/S/SU (Lin 2004): hand-worked examples, properties, and rouge-score 0.1.2 on WMT12 de-en."""

from collections import Counter

import numpy as np
import pytest

from combo import get_metric
from combo.errors import InputError, OptionError
from combo.metrics.lexical import rouge as R

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

VARIANTS = ["rouge-n", "rouge-1", "rouge-2", "rouge-l", "rouge-w", "rouge-s", "rouge-su"]
PEER_TYPES = {"rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-l": "rougeL"}
MEASURES = {"f": "fmeasure", "p": "precision", "r": "recall"}


def seg(name, hyps, refs, **opts):
    """Segment scores of ``hyps`` against one reference list per hypothesis."""
    return get_metric(name, **opts).segment_scores(hyps, refs)


# -- hand-worked examples -----------------------------------------------------------------------

# Lin 2004 §3.1 and §5: the reference S1 and the candidates S2..S5.
S1 = "police killed the gunman"
S2 = "police kill the gunman"
S3 = "the gunman kill police"
S4 = "the gunman police killed"
S5 = "gunman the killed police"


def test_rouge_n_hand_example():
    # hyp "the cat sat on the mat" vs ref "the cat is on the mat", 6 tokens each.
    # unigrams: the x2 (clipped min(2, 2) = 2), cat, on, mat -> 5 matches; P = R = F = 5/6.
    # bigrams: hyp {the cat, cat sat, sat on, on the, the mat}, ref {the cat, cat is, is on, on the, the mat}
    #   -> 3 matches of 5 on each side; P = R = F = 3/5.
    hyp, ref = ["the cat sat on the mat"], [["the cat is on the mat"]]
    assert seg("rouge-1", hyp, ref)[0] == pytest.approx(5 / 6, abs=1e-12)
    assert seg("rouge-2", hyp, ref)[0] == pytest.approx(3 / 5, abs=1e-12)
    assert seg("rouge-n", hyp, ref, n=2)[0] == pytest.approx(3 / 5, abs=1e-12)
    # trigrams: hyp {the cat sat, cat sat on, sat on the, on the mat} vs ref: only "on the mat" -> 1/4
    assert seg("rouge-n", hyp, ref, n=3)[0] == pytest.approx(1 / 4, abs=1e-12)
    # clipping: hyp "the the the the" vs ref "the cat": 1 match; P = 1/4, R = 1/2, F = 2PR/(P+R) = 1/3
    assert seg("rouge-1", ["the the the the"], [["the cat"]])[0] == pytest.approx(1 / 3, abs=1e-12)


def test_rouge_l_lin_example():
    # Lin 2004 §3.1: LCS(S1, S2) = "police the gunman" = 3 -> R = P = 3/4, F = 0.75;
    # LCS(S1, S3) = "the gunman" = 2 -> 2/4 = 0.5 (ROUGE-2 cannot tell S2 and S3 apart: both 1/3).
    got = seg("rouge-l", [S2, S3], [[S1], [S1]])
    assert got == pytest.approx([0.75, 0.5], abs=1e-12)
    assert seg("rouge-2", [S2, S3], [[S1], [S1]]) == pytest.approx([1 / 3, 1 / 3], abs=1e-12)


def test_measure_and_beta():
    # hyp "the gunman" vs S1: LCS 2, P = 2/2 = 1, R = 2/4 = 0.5.
    # F1 = 2 * 1 * 0.5 / 1.5 = 2/3; F(beta=2) = (1 + 4) P R / (R + 4 P) = 2.5 / 4.5 = 5/9.
    hyp, ref = ["the gunman"], [[S1]]
    assert seg("rouge-l", hyp, ref, measure="p")[0] == pytest.approx(1.0)
    assert seg("rouge-l", hyp, ref, measure="r")[0] == pytest.approx(0.5)
    assert seg("rouge-l", hyp, ref)[0] == pytest.approx(2 / 3)
    assert seg("rouge-l", hyp, ref, beta=2.0)[0] == pytest.approx(5 / 9)
    assert get_metric("rouge-l:beta=2,measure=f").segment_scores(hyp, ref)[0] == pytest.approx(5 / 9)


def test_rouge_w_consecutive_beats_scattered():
    # Lin 2004 §3.2: X = A B C D E F G, Y1 = A B C D H I K, Y2 = A H B K C I D.
    # ROUGE-L: LCS = 4 for both -> 4/7 and 4/7.
    # ROUGE-W with f(k) = k^2: WLCS(X, Y1) = f(4) = 16 (one run of 4), WLCS(X, Y2) = 4 f(1) = 4.
    #   R = f^-1(WLCS / f(7)) = sqrt(16 / 49) = 4/7 for Y1, sqrt(4 / 49) = 2/7 for Y2; P the same (n = m = 7).
    # With the default w = 1.2: Y1 still (4^1.2 / 7^1.2)^(1/1.2) = 4/7, Y2 (4 / 7^1.2)^(1/1.2) = 4^(1/1.2) / 7.
    x, y1, y2 = "a b c d e f g", "a b c d h i k", "a h b k c i d"
    refs = [[x], [x]]
    assert seg("rouge-l", [y1, y2], refs) == pytest.approx([4 / 7, 4 / 7], abs=1e-12)
    assert seg("rouge-w", [y1, y2], refs, weight=2.0) == pytest.approx([4 / 7, 2 / 7], abs=1e-12)
    assert seg("rouge-w", [y1, y2], refs) == pytest.approx([4 / 7, 4 ** (1 / 1.2) / 7], abs=1e-12)
    # S2 vs S1: runs "police" (1) and "the gunman" (2): WLCS = f(1) + f(2) = 1 + 2^1.2;
    # R = P = ((1 + 2^1.2) / 4^1.2)^(1/1.2).
    expected = ((1 + 2 ** 1.2) / 4 ** 1.2) ** (1 / 1.2)
    assert seg("rouge-w", [S2], [[S1]])[0] == pytest.approx(expected, abs=1e-12)
    # weight 1 is plain LCS
    assert seg("rouge-w", [S2, S3], [[S1], [S1]], weight=1.0) == pytest.approx([0.75, 0.5], abs=1e-12)


def test_rouge_s_lin_examples():
    # Lin 2004 §5: S1 has C(4,2) = 6 skip-bigrams: police-killed, police-the, police-gunman,
    # killed-the, killed-gunman, the-gunman.
    # S2 shares police-the, police-gunman, the-gunman -> 3/6 = 0.5; S3 shares the-gunman -> 1/6;
    # S4 shares the-gunman, police-killed -> 2/6; S5 shares none -> 0. (The paper's figures.)
    hyps = [S2, S3, S4, S5]
    refs = [[S1]] * 4
    assert seg("rouge-s", hyps, refs) == pytest.approx([3 / 6, 1 / 6, 2 / 6, 0.0], abs=1e-12)
    # ROUGE-SU adds the unigrams: denominators 6 + 4 = 10; S2 shares 3 unigrams (police, the, gunman),
    # S3 3 (the, gunman, police), S4 4, S5 4 -> (3+3)/10, (1+3)/10, (2+4)/10, (0+4)/10: S5 is no longer 0.
    assert seg("rouge-su", hyps, refs) == pytest.approx([0.6, 0.4, 0.6, 0.4], abs=1e-12)


def test_rouge_s_max_skip():
    # max_skip=1: pairs at distance 1 or 2. S1: police-killed, killed-the, the-gunman (distance 1),
    # police-the, killed-gunman (distance 2) = 5. S2: police-kill, kill-the, the-gunman, police-the,
    # kill-gunman = 5. Shared: the-gunman, police-the -> 2/5.
    assert seg("rouge-s", [S2], [[S1]], max_skip=1)[0] == pytest.approx(2 / 5, abs=1e-12)
    # max_skip=0 counts bigrams only: S2 shares "the gunman" of 3 -> 1/3, as ROUGE-2
    assert seg("rouge-s", [S2], [[S1]], max_skip=0)[0] == pytest.approx(1 / 3, abs=1e-12)
    assert get_metric("rouge-s:max_skip=4").params["max_skip"] == 4


def test_tokenizer_options_and_stemmer():
    # rouge: punctuation is a separator -> "the gunman" both sides -> 1.
    # none: "gunman." is its own token -> 1 of 2 matches -> P = R = 1/2.
    # 13a: "the gunman ." vs "the gunman": 2 matches, P = 2/3, R = 1 -> F = 0.8.
    hyp, ref = ["The gunman."], [["the gunman"]]
    assert seg("rouge-1", hyp, ref)[0] == pytest.approx(1.0)
    assert seg("rouge-1", hyp, ref, tokenize="none")[0] == pytest.approx(0.5)
    assert seg("rouge-1", hyp, ref, tokenize="13a")[0] == pytest.approx(0.8)
    # stemming: killed -> kill, so S2 matches S1 on every unigram; "the" (3 characters) is left alone
    assert R.rouge_stem("killed") == "kill" and R.rouge_stem("the") == "the"
    assert seg("rouge-1", [S2], [[S1]])[0] == pytest.approx(0.75)
    assert seg("rouge-1", [S2], [[S1]], use_stemmer=True)[0] == pytest.approx(1.0)
    assert seg("rouge-l", [S2], [[S1]], use_stemmer="yes")[0] == pytest.approx(1.0)
    assert seg("rouge-1", [S2], [[S1]], use_stemmer=True, tokenize="13a")[0] == pytest.approx(1.0)


def test_tokenizer_matches_rouge_score_on_odd_text():
    from rouge_score import tokenize as peer
    texts = ["Straße İstanbul KELVIN \u212a café 3.14 x\u00a0y", "  ", "", "---", "a\tb\nc",
             "ÀÉÎ naïve co-op U.S.A."]
    for text in texts:
        assert list(R.rouge_tokens(text)) == peer.tokenize(text, None)


# -- properties and edge cases --------------------------------------------------------------------

@pytest.mark.parametrize("name", VARIANTS)
def test_empty_texts_score_zero(name):
    # rouge-score: an empty hypothesis or reference gives P = R = F = 0; so does a text of punctuation only
    hyps = ["", "police", "", "!!!", "police"]
    refs = [["police"], [""], [""], ["police"], []]
    for measure in "fpr":
        assert seg(name, hyps, refs, measure=measure).tolist() == [0.0] * 5


@pytest.mark.parametrize("name", VARIANTS)
def test_rows_without_references_keep_alignment(name):
    # row 1 has no reference (score 0); row 2 keeps its better reference ("police gunman" itself -> 1)
    got = seg(name, ["police gunman", "police", "police gunman"], [["police gunman"], [], ["gunman", "police gunman"]])
    assert got.tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("name", VARIANTS)
def test_identical_texts_score_one(name, wmt12_de_en):
    ref, _ = wmt12_de_en
    texts = [t for t in ref[:200] if len(R.rouge_tokens(t)) >= 2]
    got = seg(name, texts, [[t] for t in texts])
    np.testing.assert_allclose(got, 1.0, atol=1e-12)


@pytest.mark.parametrize("name", VARIANTS)
def test_corpus_score_is_mean_and_pairwise(name, wmt12_de_en):
    ref, systems = wmt12_de_en
    hyp = systems["onlineB"][:300]
    refs = [[r] for r in ref[:300]]
    metric = get_metric(name)
    scores = metric.segment_scores(hyp, refs)
    assert metric.corpus_score(hyp, refs) == pytest.approx(scores.mean(), abs=1e-12)
    texts = hyp + ref[:300]
    pair = metric.pairwise_scores(texts, np.arange(300), np.arange(300, 600))
    np.testing.assert_allclose(pair, scores, atol=1e-12)
    # reference weights are accepted and ignored
    weighted = metric.segment_scores(hyp, refs, [[0.5]] * 300)
    np.testing.assert_array_equal(weighted, scores)


def test_rouge_s0_is_rouge_2(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyp, refs = systems["uedin-wmt12"], [[r] for r in ref]
    np.testing.assert_allclose(seg("rouge-s", hyp, refs, max_skip=0), seg("rouge-2", hyp, refs), atol=1e-12)


def test_registered_defaults():
    assert get_metric("rouge-n").params["n"] == 1
    assert get_metric("rouge-1").params["n"] == 1
    assert get_metric("rouge-2").params["n"] == 2
    assert get_metric("rouge-n:n=3").params["n"] == 3
    assert get_metric("rouge-w").params["weight"] == 1.2
    assert get_metric("rouge-s").params["max_skip"] == -1
    assert isinstance(get_metric("rouge-2"), R.RougeN)
    sig = get_metric("rouge-l").signature
    assert sig.startswith("rouge-l|tok:rouge|stem:no|m:f|b:1.0")


@pytest.mark.parametrize("name,opts", [
    ("rouge-l", {"measure": "x"}), ("rouge-l", {"beta": 0}), ("rouge-l", {"tokenize": "spacy"}),
    ("rouge-n", {"n": 0}), ("rouge-s", {"max_skip": -2}), ("rouge-w", {"weight": 0.5}),
    ("rouge-l", {"n": 2}), ("rouge-l", {"beta": "abc"}),
])
def test_bad_options(name, opts):
    with pytest.raises(OptionError):
        get_metric(name, **opts)


def test_bad_input():
    with pytest.raises(InputError):
        seg("rouge-l", [None], [["x"]])


# -- the algorithms against plain reference implementations ---------------------------------------

def lcs_table_length(x, y):
    """Textbook O(mn) LCS length."""
    prev = [0] * (len(y) + 1)
    for a in x:
        cur = [0]
        for j, b in enumerate(y):
            cur.append(prev[j] + 1 if a == b else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def wlcs_paper(x, y, w):
    """Lin 2004 §3.2 WLCS, literally."""
    f = lambda k: k ** w  # noqa: E731
    c = [[0.0] * (len(y) + 1) for _ in range(len(x) + 1)]
    run = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            if x[i - 1] == y[j - 1]:
                k = run[i - 1][j - 1]
                c[i][j] = c[i - 1][j - 1] + f(k + 1) - f(k)
                run[i][j] = k + 1
            elif c[i - 1][j] > c[i][j - 1]:
                c[i][j] = c[i - 1][j]
            else:
                c[i][j] = c[i][j - 1]
    return c[-1][-1]


def random_texts(rng, count, alphabet, longest):
    return [[str(t) for t in rng.integers(0, alphabet, size=rng.integers(0, longest + 1))] for _ in range(count)]


def test_bit_parallel_lcs_equals_table():
    rng = np.random.default_rng(7)
    xs, ys = random_texts(rng, 300, 4, 90), random_texts(rng, 300, 5, 90)  # beyond 64 bits, many repeats
    for x, y in zip(xs, ys):
        assert R.lcs_length(R.position_masks(x), len(x), y) == lcs_table_length(x, y)


def test_weighted_lcs_equals_paper_algorithm():
    rng = np.random.default_rng(11)
    xs, ys = random_texts(rng, 150, 4, 25), random_texts(rng, 150, 4, 25)
    ids = lambda t: np.asarray([int(s) for s in t], dtype=np.int64)  # noqa: E731
    for w in (1.2, 2.0):
        got = R.weighted_lcs([ids(x) for x in xs], [ids(y) for y in ys], w, chunk=32)
        expected = [wlcs_paper(x, y, w) for x, y in zip(xs, ys)]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_skip_bigram_counts_equal_brute_force():
    rng = np.random.default_rng(3)
    texts = [list(rng.integers(0, 4, size=rng.integers(0, 10))) for _ in range(120)]
    ptr = np.r_[0, np.cumsum([len(t) for t in texts])]
    ids = np.asarray([t for text in texts for t in text], dtype=np.int64)
    for max_skip in (-1, 0, 1, 3):
        for unigrams in (False, True):
            mat, totals = R.skip_bigram_counts(ids, ptr, 4, max_skip, unigrams, chunk_units=40)
            for k, toks in enumerate(texts):
                units = Counter()
                for i in range(len(toks)):
                    if unigrams:
                        units[16 + toks[i]] += 1
                    for j in range(i + 1, len(toks)):
                        if max_skip < 0 or j - i - 1 <= max_skip:
                            units[toks[i] * 4 + toks[j]] += 1
                row = mat[k]
                assert dict(zip(row.indices.tolist(), row.data.tolist())) == dict(units)
                assert totals[k] == sum(units.values())


# -- rouge-score 0.1.2 on real data -----------------------------------------------------------------

@pytest.fixture(scope="module")
def peer_scores(wmt12_de_en_peer_rows):
    """rouge-score's rouge1/rouge2/rougeL Score tuples for each de-en system of the peer rows, without stemming."""
    ref, systems = wmt12_de_en_peer_rows
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    return {name: [scorer.score(r, h) for r, h in zip(ref, hyp)] for name, hyp in systems.items()}


@pytest.mark.parametrize("name", sorted(PEER_TYPES))
def test_rouge_score_all_systems(name, wmt12_de_en_peer_rows, peer_scores):
    """F of every segment and the corpus means of the peer rows (3 systems x 300 segments; slow: all 16 de-en
    systems, 48,048 segments); P and R of two systems."""
    ref, systems = wmt12_de_en_peer_rows
    hyps = [h for hyp in systems.values() for h in hyp]
    refs = [[r] for _ in systems for r in ref]
    typ = PEER_TYPES[name]
    ours = seg(name, hyps, refs).reshape(len(systems), len(ref))
    theirs = np.array([[s[typ].fmeasure for s in peer_scores[sys]] for sys in systems])
    assert np.abs(ours - theirs).max() <= 1e-9
    np.testing.assert_allclose(ours.mean(axis=1), theirs.mean(axis=1), rtol=0, atol=1e-9)
    for system in ("onlineB", "jhu-hiero"):
        for measure in "pr":
            ours = seg(name, systems[system], [[r] for r in ref], measure=measure)
            theirs = np.array([getattr(s[typ], MEASURES[measure]) for s in peer_scores[system]])
            assert np.abs(ours - theirs).max() <= 1e-9


@pytest.mark.parametrize("system", ["onlineB", "jhu-hiero"])
def test_rouge_score_with_stemmer(system, wmt12_de_en_peer_rows):
    # The first 300 segments (all 3,003 in the slow variant).
    ref, systems = wmt12_de_en_peer_rows
    hyp = systems[system]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    peer = [scorer.score(r, h) for r, h in zip(ref, hyp)]
    for name, typ in PEER_TYPES.items():
        for measure, attr in MEASURES.items():
            ours = seg(name, hyp, [[r] for r in ref], use_stemmer=True, measure=measure)
            theirs = np.array([getattr(s[typ], attr) for s in peer])
            assert np.abs(ours - theirs).max() <= 1e-9


def test_rouge_score_multi_reference(wmt12_de_en):
    """Several references (1 to 3 per segment: the reference and other systems' outputs) vs score_multi."""
    ref, systems = wmt12_de_en
    n = 1000
    hyp = systems["uedin-wmt12"][:n]
    others = [systems["onlineB"], systems["RWTH_primary"]]
    refs = [[ref[i]] + [o[i] for o in others[:i % 3]] for i in range(n)]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    peer = [scorer.score_multi(rs, h) for rs, h in zip(refs, hyp)]
    for name, typ in PEER_TYPES.items():
        for measure, attr in MEASURES.items():
            ours = seg(name, hyp, refs, measure=measure)
            theirs = np.array([getattr(s[typ], attr) for s in peer])
            assert np.abs(ours - theirs).max() <= 1e-9
    # the best reference is chosen per segment: never below the single official reference
    single = seg("rouge-l", hyp, [[r] for r in ref[:n]])
    assert np.all(seg("rouge-l", hyp, refs) >= single - 1e-12)
