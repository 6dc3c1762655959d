"""Constituent metrics CP-STM (Liu & Gildea 2005) and CP-TK: hand-worked examples, edge cases, WMT12 de-en."""

import random
from collections import Counter

import numpy as np
import pytest

from combo import get_metric
from combo.errors import InputError, OptionError, ResourceMissing
from combo.analysis import layers
from combo.analysis.kernels import TreeKernel
from combo.analysis.layers import annotate
from combo.analysis.ngrams import pair_matches
from combo.analysis.trees import Tree, from_chunks, parse_bracketed, variant
from combo.metrics.constituent import SubtreeCounts, preorder_children, stm_from_counts, subtree_ends

pytest.importorskip("textblob")

# Trees with the per-depth counts of Liu & Gildea's (2005, §2.1) worked example (6/7, 3/4, 1/2 -> 0.702),
# reconstructed from those counts.
LG_REF = "(S (NP (PRON I)) (VP (V had) (NP (ART a) (N lunch))))"
LG_HYP = "(S (NP (PRON I)) (VP (V had) (NP (PRON it))))"


def test_stm_hand_worked_liu_gildea():
    # Without the words, hypothesis nodes S NP PRON VP V NP PRON; reference S NP PRON VP V NP ART N.
    # Depth 1 (labels): clipped matches S 1, NP 2, PRON min(2, 1) = 1, VP 1, V 1 = 6 of 7.
    # Depth 2 (productions): S->NP VP, NP->PRON (twice, clipped to 1), VP->V NP match; 3 of 4.
    # Depth 3 (nodes of height >= 2: S, VP): S->(NP PRON)(VP V NP) matches,
    #   VP->V (NP PRON) does not (reference: VP->V (NP ART N)); 1 of 2.
    # STM = (6/7 + 3/4 + 1/2) / 3 = 0.70238...
    counts = SubtreeCounts.from_trees([parse_bracketed(LG_HYP), parse_bracketed(LG_REF)], 3)
    matches = np.array([[pair_matches(m, np.array([0]), np.array([1]))[0] for m in counts.matrices]])
    assert matches.tolist() == [[6, 3, 1]]
    assert counts.totals().tolist() == [[7, 4, 2], [8, 4, 2]]
    expected = (6 / 7 + 3 / 4 + 1 / 2) / 3
    assert stm_from_counts(matches, counts.totals()[:1])[0] == pytest.approx(expected, abs=1e-12)
    # Deeper depths have no hypothesis subtree (height 3: depth 4 is the last one) and are left out:
    # depth 4 is the whole tree S, which differs; STM-9 = (6/7 + 3/4 + 1/2 + 0/1) / 4.
    deep = SubtreeCounts.from_trees([parse_bracketed(LG_HYP), parse_bracketed(LG_REF)], 9)
    assert deep.totals()[0].tolist() == [7, 4, 2, 1, 0, 0, 0, 0, 0]
    assert deep.totals()[1].tolist() == [8, 4, 2, 1, 0, 0, 0, 0, 0]


def test_stm_metric_on_supplied_trees(supplied_trees):
    hyp, ref = "I had it", "I had a lunch"
    supplied_trees.add("constituents", [hyp, ref], [parse_bracketed(LG_HYP), LG_REF])  # a Tree, or a string
    metric = get_metric("cp-stm:trees=supplied,depth=3")
    assert metric.segment_scores([hyp], [[ref]])[0] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3, abs=1e-12)
    assert metric.corpus_score([hyp, ref], [[ref], [ref]]) == pytest.approx(((6 / 7 + 3 / 4 + 1 / 2) / 3 + 1) / 2)
    assert get_metric("cp-stm:trees=supplied").segment_scores([hyp], [[ref]])[0] == pytest.approx(
        (6 / 7 + 3 / 4 + 1 / 2 + 0) / 4, abs=1e-12)
    # no tree supplied for a text: an InputError naming it; a blank text is the empty tree
    with pytest.raises(InputError, match="no supplied constituents tree"):
        metric.segment_scores(["an unknown text"], [[ref]])
    assert metric.segment_scores(["", ""], [[ref], [""]]).tolist() == [0.0, 1.0]
    with pytest.raises(InputError, match="not a tree"):
        supplied_trees.add("constituents", ["odd"], [42])
        metric.segment_scores(["odd"], [[ref]])
    kernel = get_metric("cp-tk:trees=supplied")
    direct = TreeKernel("sst", lam=0.4)(parse_bracketed(LG_HYP), parse_bracketed(LG_REF))
    assert kernel.segment_scores([hyp], [[ref]])[0] == pytest.approx(direct, abs=1e-12)


def test_multi_ref_clip_and_best(supplied_trees):
    # Without words: hypothesis (S A B), references (S A C) and (S D B).
    # Depth 1, labels S A B: clipped by the largest count in either reference all three match, 3/3;
    #   against one reference only two do, 2/3.
    # Depth 2, the production S->A B: in neither reference, 0/1. No deeper hypothesis subtree.
    # Clip (Liu & Gildea): (1 + 0) / 2 = 1/2; best single reference: (2/3 + 0) / 2 = 1/3.
    trees = [parse_bracketed(t) for t in ("(S (A x) (B y))", "(S (A x) (C z))", "(S (D w) (B y))")]
    texts = ["h", "r1", "r2"]
    supplied_trees.add("constituents", texts, trees)
    clip = get_metric("cp-stm:trees=supplied").segment_scores(["h"], [["r1", "r2"]])[0]
    best = get_metric("cp-stm:trees=supplied,multi_ref=best").segment_scores(["h"], [["r1", "r2"]])[0]
    assert clip == pytest.approx(0.5, abs=1e-12) and best == pytest.approx(1 / 3, abs=1e-12)


def _random_tree(rng, depth=0):
    if depth > 4 or rng.random() < 0.3:
        return rng.choice("abc")
    return Tree(rng.choice("XYZ"), [_random_tree(rng, depth + 1) for _ in range(rng.randint(1, 4))])


def test_children_and_ends_from_preorder_arities():
    rng = random.Random(7)
    trees = [t for t in (_random_tree(rng) for _ in range(60)) if isinstance(t, Tree)]
    arity = np.array([a for t in trees for a in t.arities])
    offsets = np.cumsum([0] + [len(t) for t in trees])
    ends = subtree_ends(arity)
    child_ptr, child = preorder_children(arity)
    for k, t in enumerate(trees):
        base = offsets[k]
        assert (ends[base:base + len(t)] - base).tolist() == t.index.end
        for i in range(len(t)):
            kids = child[child_ptr[base + i]:child_ptr[base + i + 1]] - base
            assert tuple(kids.tolist()) == t.index.children[i]


def _plain_subtrees(tree, depth):
    """Counter of the subtrees of exactly ``depth`` levels of ``tree`` without its words, written out."""
    t = variant(tree, "nolex")
    if not t.labels:
        return Counter()
    index = t.index

    def cut(node, d):
        if d == 1 or not index.children[node]:
            return t.labels[node]
        return (t.labels[node], tuple(cut(c, d - 1) for c in index.children[node]))

    return Counter(cut(n, depth) for n in range(len(t)) if index.height[n] >= depth - 1)


def _plain_stm(hyp, refs, depth, multi_ref):
    def one(ref_list):
        ratios = []
        for d in range(1, depth + 1):
            h = _plain_subtrees(hyp, d)
            total = sum(h.values())
            if not total:
                continue
            rs = [_plain_subtrees(r, d) for r in ref_list]
            ratios.append(sum(min(c, max(r[k] for r in rs)) for k, c in h.items()) / total)
        if not ratios:
            return 1.0 if any(not r.labels for r in ref_list) else 0.0
        return sum(ratios) / len(ratios)

    if multi_ref == "clip":
        return one(refs)
    return max(one([r]) for r in refs)


def test_identical_empty_long_and_non_latin():
    long_text = " ".join(["the cat sat on the mat and"] * 143)  # 1,001 tokens
    other = " ".join(["a dog slept under a big table"] * 143)
    for name in ("cp-stm", "cp-tk", "cp-tk-st", "cp-tk-ptk", "cp-tk:variant=lex2.1"):
        metric = get_metric(name)
        scores = metric.segment_scores(
            ["The cat sat.", "", "", "The cat sat.", long_text, long_text, "Собака громко лает.", "猫が座った。"],
            [["The cat sat."], [""], ["The cat sat."], [""], [long_text], [other], ["Собака лает."],
             ["犬が座った。"]])
        assert scores[:4].tolist() == [1.0, 1.0, 0.0, 0.0], name  # identical, both empty, one empty
        assert scores[4] == pytest.approx(1.0, abs=1e-12) and 0.0 <= scores[5] < 1.0, name
        assert np.isfinite(scores).all() and (scores >= 0).all() and (scores <= 1).all(), name


def test_options_signatures_and_registered_names():
    assert get_metric("cp-stm").signature.startswith("cp-stm|depth:9|mr:clip|trees:chunks|impl:")
    assert get_metric("cp-tk:kernel=ptk,lam=0.5,variant=nolex").signature.startswith(
        "cp-tk|kernel:ptk|lam:0.5|mu:0.4|variant:nolex|trees:chunks|")
    assert get_metric("CP-TK-SST").signature.startswith("cp-tk-sst|lam:0.4|variant:lex1|trees:chunks|")
    assert get_metric("cp-tk-ptk", mu=0.2).signature.startswith("cp-tk-ptk|lam:0.4|mu:0.2|")
    for bad in ({"kernel": "rbf"}, {"lam": 0}, {"lam": "1.5"}, {"variant": "lex3"}, {"trees": "charniak"}):
        with pytest.raises(OptionError):
            get_metric("cp-tk", **bad)
    with pytest.raises(OptionError):
        get_metric("cp-tk-sst", kernel="st")  # the kernel is fixed
    with pytest.raises(OptionError):
        get_metric("cp-stm", depth=0)
    for name in ("cp-stm", "cp-tk", "cp-tk-sst", "cp-tk-st", "cp-tk-ptk"):
        assert get_metric(name).family == "syntactic"


@pytest.mark.parametrize("name", ["cp-stm", "cp-tk", "cp-tk-ptk"])
def test_missing_textblob_is_resource_missing(name, monkeypatch, supplied_trees):
    def absent():
        raise ResourceMissing("TextBlob's Pattern parser (package textblob)", "pip install textblob")

    monkeypatch.setattr(layers.get_layer("shallow"), "check", absent)
    with pytest.raises(ResourceMissing, match="pip install textblob"):
        get_metric(name).check_resources()
    with pytest.raises(ResourceMissing):
        get_metric(name).segment_scores(["a cat"], [["a dog"]])
    # supplied trees need no parser
    supplied = get_metric(name, trees="supplied")
    supplied.check_resources()
    assert supplied.resources == () and supplied.layers == ()
    supplied_trees.add("constituents", ["a cat", "a big dog"], ["(NP (DT a) (NN cat))", "(NP (DT a) (JJ big) (NN dog))"])
    assert 0 < supplied.segment_scores(["a cat"], [["a big dog"]])[0] < 1


# --- WMT12 de-en ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample(wmt12_two_references):
    hyps, refs = wmt12_two_references
    texts = list(dict.fromkeys(hyps + [r for rs in refs for r in rs]))
    trees = dict(zip(texts, (from_chunks(p.words, p.pos, p.chunks) for p in annotate("shallow", texts))))
    return hyps, refs, trees


def test_chunk_counts_built_flat_equal_those_of_chunk_trees(sample):
    hyps, refs, trees = sample
    texts = list(trees)[:150]
    parses = annotate("shallow", texts)
    flat = SubtreeCounts.from_shallow(parses, 4)
    built = SubtreeCounts.from_trees([trees[t] for t in texts], 4)
    left, right = np.divmod(np.arange(len(texts) ** 2), len(texts))
    assert np.array_equal(flat.totals(), built.totals())
    for a, b in zip(flat.matrices, built.matrices):  # ids differ; every pair's matches agree
        assert np.array_equal(pair_matches(a, left, right), pair_matches(b, left, right))


@pytest.mark.parametrize("multi_ref", ["clip", "best"])
def test_stm_vectorised_equals_plain_per_pair_on_wmt12(sample, multi_ref):
    hyps, refs, trees = sample
    metric = get_metric("cp-stm", multi_ref=multi_ref)
    scores = metric.segment_scores(hyps, refs)
    expected = np.array([_plain_stm(trees[h], [trees[r] for r in rs], 9, multi_ref) for h, rs in zip(hyps, refs)])
    assert np.abs(scores - expected).max() < 1e-12
    assert (scores >= 0).all() and (scores <= 1).all()
    assert metric.corpus_score(hyps, refs) == pytest.approx(expected.mean(), abs=1e-12)


@pytest.mark.parametrize("spec,kind,lam,mu,shape", [
    ("cp-tk", "sst", 0.4, 0.4, "lex1"), ("cp-tk-st:lam=0.6", "st", 0.6, 0.4, "lex1.1"),
    ("cp-tk-sst:variant=nolex", "sst", 0.4, 0.4, "nolex"), ("cp-tk-ptk:mu=0.3", "ptk", 0.4, 0.3, "lex2"),
])
def test_tree_kernel_equals_direct_tree_kernel_on_wmt12(sample, spec, kind, lam, mu, shape):
    hyps, refs, trees = sample
    n = 60 if kind == "ptk" else 400  # PTK is pair by pair
    metric = get_metric(spec, variant=shape)
    scores = metric.segment_scores(hyps[:n], refs[:n])
    kernel = TreeKernel(kind, lam=lam, mu=mu)
    expected = [max(kernel(variant(trees[h], shape), variant(trees[r], shape)) for r in rs)
                for h, rs in zip(hyps[:n], refs[:n])]
    assert np.abs(scores - np.array(expected)).max() < 1e-9
    assert (scores >= 0).all() and (scores <= 1).all()
    if kind == "sst":
        same = get_metric("cp-tk", kernel="sst", lam=lam, variant=shape).segment_scores(hyps[:n], refs[:n])
        assert np.array_equal(same, scores)
        # a normalised kernel is symmetric (CP-STM, a precision, is not)
        forth = metric.segment_scores(hyps[:n], [rs[:1] for rs in refs[:n]])
        back = metric.segment_scores([rs[0] for rs in refs[:n]], [[h] for h in hyps[:n]])
        assert np.abs(forth - back).max() < 1e-12
