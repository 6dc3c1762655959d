"""CIDEr-D: a hand-worked example, properties, and coco-caption's CiderD as the oracle on real data."""

import math

import numpy as np
import pytest

from combo import OptionError, get_metric
from combo.analysis.tokenize import tokenize_all


def test_hand_worked_unigrams():
    # Two segments, max_order = 1, so the score is the unigram CIDEr-D / 1.
    #   seg 1: hyp "the cat the cat sat", refs "the cat sat" | "a cat sat on the mat"
    #   seg 2: hyp "a dog",               refs "a dog ran"
    # df over the 2 reference sets: a -> 2 (both sets), every other word -> 1;
    # dog, ran only in set 2. idf = log 2 - log max(1, df): L = log 2 for df 1, 0 for "a".
    # seg 1: g(hyp) = (the 2L, cat 2L, sat L), |g| = 3L
    #   ref 1 g = (the L, cat L, sat L), |g| = L sqrt 3;
    #     <min(g_h, g_r), g_r> = 3 L^2 -> cos 1/sqrt 3; lengths 5 vs 3 -> exp(-2^2 / 72)
    #   ref 2 g = (a 0, cat L, sat L, on L, the L, mat L), |g| = L sqrt 5;
    #     numerator the, cat, sat: 3 L^2 -> 1/sqrt 5; lengths 5 vs 6 -> exp(-1 / 72)
    #   mean over the two references.
    # seg 2: g(hyp) = (a 0, dog L), |g| = L; ref g = (a 0, dog L, ran L), |g| = L sqrt 2;
    #   numerator L^2 -> 1/sqrt 2; lengths 2 vs 3 -> exp(-1/72).
    # The clipping shows in seg 1 / ref 2: "the" counts min(2L, L) = L, not 2L.
    hyps = ["the cat the cat sat", "a dog"]
    refs = [["the cat sat", "a cat sat on the mat"], ["a dog ran"]]
    seg1 = (math.exp(-4 / 72) / math.sqrt(3) + math.exp(-1 / 72) / math.sqrt(5)) / 2
    seg2 = math.exp(-1 / 72) / math.sqrt(2)
    metric = get_metric("cider", max_order=1)
    np.testing.assert_allclose(metric.segment_scores(hyps, refs), [seg1, seg2], rtol=1e-12)
    assert metric.corpus_score(hyps, refs) == pytest.approx((seg1 + seg2) / 2, rel=1e-12)


def test_hand_worked_bigrams_and_sigma():
    # max_order = 2, sigma = 2, three segments (N = 3).
    #   seg 1: hyp "a b c", ref "a b d"; seg 2: hyp "x y", ref "x y"; seg 3: hyp "q", ref "a b"
    # df: a, b, "a b" -> 2 (sets 1 and 3); d, "b d", x, y, "x y" -> 1.
    # idf: df 2 -> log(3/2) =: M; df 1 or 0 -> log 3 =: K (c and "b c" are in no reference).
    # seg 1 unigrams: hyp (a M, b M, c K), ref (a M, b M, d K): cos = 2M^2 / (2M^2 + K^2)
    #        bigrams: hyp ("a b" M, "b c" K), ref ("a b" M, "b d" K): cos = M^2 / (M^2 + K^2)
    #        equal lengths: no penalty; score = mean of the two cosines.
    # seg 2: identical text, every idf K > 0: both cosines 1 -> 1.
    # seg 3: no common n-gram -> 0.
    m2, k2 = math.log(1.5) ** 2, math.log(3) ** 2
    seg1 = (2 * m2 / (2 * m2 + k2) + m2 / (m2 + k2)) / 2
    metric = get_metric("cider", max_order=2, sigma=2)
    got = metric.segment_scores(["a b c", "x y", "q"], [["a b d"], ["x y"], ["a b"]])
    np.testing.assert_allclose(got, [seg1, 1.0, 0.0], rtol=1e-12)
    # the length penalty with sigma = 2: "x y" against "x y z w" (set 2 changes, df stays 1 for x, y)
    got = metric.segment_scores(["a b c", "x y", "q"], [["a b d"], ["x y z w"], ["a b"]])
    # unigrams: hyp (x K, y K), ref (x K, y K, z K, w K): cos 2/sqrt(2*4); bigrams: 1/sqrt(1*3)
    seg2 = (2 / math.sqrt(8) + 1 / math.sqrt(3)) / 2 * math.exp(-4 / 8)
    assert got[1] == pytest.approx(seg2, rel=1e-12)


def test_empty_inputs_and_options():
    metric = get_metric("cider")
    got = metric.segment_scores(["", "a b c d e", "a b c d e"], [["a b c d e"], [""], []])
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0])  # empty hyp, empty ref, no reference
    assert metric.corpus_score([], []) == 0.0
    # one segment alone: every reference n-gram has idf log 1 - log 1 = 0
    assert metric.corpus_score(["a b c d e"], [["a b c d e"]]) == 0.0
    with pytest.raises(OptionError):
        get_metric("cider", max_order=0)
    with pytest.raises(OptionError):
        get_metric("cider", document_frequency="images")
    assert get_metric("cider:sigma=3,document_frequency=rows").sigma == 3.0
    assert "df:segments" in metric.signature and "lc:yes" in metric.signature


def test_systems_scored_together_equal_scored_alone(wmt12_de_en):
    # With df over distinct reference sets, adding systems to the call changes nothing.
    ref, systems = wmt12_de_en
    names = sorted(systems)[:3]
    metric = get_metric("cider")
    refs = [[r] for r in ref[:500]]
    alone = np.concatenate([metric.segment_scores(systems[n][:500], refs) for n in names])
    together = metric.segment_scores([line for n in names for line in systems[n][:500]], refs * len(names))
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-12)
    assert 0.0 < alone.mean() < 1.0
    # identical text scores 1 when each order has an informative n-gram
    same = metric.segment_scores(ref[:500], refs)
    long_enough = np.array([len(r.split()) >= 8 for r in ref[:500]])
    np.testing.assert_allclose(same[long_enough], 1.0, atol=1e-12)


def _flickr8k_expert(data):
    root = data / "flickr8k"
    captions = dict(line.split("\t") for line in (root / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines())
    by_image = {}
    for key, caption in captions.items():
        by_image.setdefault(key.split("#")[0], []).append(caption)
    hyps, refs, images = [], [], []
    for line in (root / "ExpertAnnotations.txt").read_text(encoding="utf-8").splitlines():
        image, candidate = line.split("\t")[:2]
        if candidate.split("#")[0] == image:
            continue  # the published protocol drops a candidate that is one of the image's own captions
        hyps.append(captions[candidate])
        refs.append(by_image[image])
        images.append(image)
    return hyps, refs, images


def _tokenized(texts):
    return [" ".join(t) for t in tokenize_all(texts, "13a", lowercase=True)]


def _coco(hyps, refs, sigma=6.0):
    cider = pytest.importorskip("pycocoevalcap.cider.cider")
    _, scores = cider.Cider(sigma=sigma).compute_score(
        {k: list(r) for k, r in enumerate(refs)}, {k: [h] for k, h in enumerate(hyps)})
    return np.asarray(scores)


def test_flickr8k_against_coco_caption(data):
    pytest.importorskip("pycocoevalcap.cider.cider")
    hyps, refs, images = _flickr8k_expert(data)
    assert len(hyps) == 5664
    hyps, refs, images = hyps[:2000], refs[:2000], images[:2000]  # the first 2,000 judged captions
    hyps = _tokenized(hyps)
    refs = [_tokenized(r) for r in refs]
    # coco counts every scored row in df and |I|: document_frequency="rows" is exactly its CiderD
    ours = get_metric("cider", tokenize="none", lowercase=False, document_frequency="rows")
    coco = _coco(hyps, refs)
    np.testing.assert_allclose(ours.segment_scores(hyps, refs) * 10, coco, rtol=0, atol=1e-9)
    assert ours.corpus_score(hyps, refs) * 10 == pytest.approx(coco.mean(), abs=1e-9)
    # one candidate per image: rows and segments are the same thing
    first = sorted({image: k for k, image in reversed(list(enumerate(images)))}.values())
    h1, r1 = [hyps[k] for k in first], [refs[k] for k in first]
    default_df = get_metric("cider", tokenize="none", lowercase=False)
    np.testing.assert_allclose(default_df.segment_scores(h1, r1) * 10, _coco(h1, r1), rtol=0, atol=1e-9)


def test_wmt12_multi_reference_against_coco_caption(wmt12_de_en):
    # Each system scored against the reference plus three other systems as references.
    pytest.importorskip("pycocoevalcap.cider.cider")
    ref, systems = wmt12_de_en
    names = sorted(systems)
    extra = names[:3]
    refs = [_tokenized([ref[k]] + [systems[n][k] for n in extra]) for k in range(300)]
    metric = get_metric("cider", tokenize="none", lowercase=False, document_frequency="rows")
    for name in names[3:5]:  # two systems, their first 300 segments
        hyps = _tokenized(systems[name][:300])
        np.testing.assert_allclose(metric.segment_scores(hyps, refs) * 10, _coco(hyps, refs), rtol=0, atol=1e-9)
    # sigma follows coco's parameter (coco's Cider(n=...) breaks for n != 4: its precook always counts 4-grams)
    metric = get_metric("cider", tokenize="none", lowercase=False, document_frequency="rows", sigma=3.0)
    np.testing.assert_allclose(metric.segment_scores(hyps, refs) * 10, _coco(hyps, refs, sigma=3.0),
                               rtol=0, atol=1e-9)
