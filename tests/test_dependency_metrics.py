"""dp-hwcm, dp-or, dp-tk and ted: hand-worked values, edge cases, supplied trees, real WMT12 de-en."""

import math
from collections import Counter

import numpy as np
import pytest

from combo.errors import InputError, OptionError, ResourceMissing
from combo.analysis import layers
from combo.analysis.kernels import TreeKernel, sst, tree_edit_distance
from combo.analysis.layers import DependencyParse, annotate
from combo.analysis.trees import from_dependencies, parse_bracketed, read_conllu, variant
from combo.metrics.dependency import (
    chain_counts, dependency_trees, hwcm_scores, parse_of_tree, relation_items, relation_overlaps, token_table,
)
from combo.metrics.registry import get_metric

ALL = ("dp-hwcm", "dp-hwcm:over=categories", "dp-hwcm:over=relations", "dp-hwcm:over=lemmas",
       "dp-or", "dp-or:relation=nsubj", "dp-tk", "dp-tk:kernel=sst,variant=nolex", "ted", "ted:variant=nolex")
SLOW = ("ted", "ted:variant=nolex")  # Zhang & Shasha in Python: about 30 ms per pair of real sentences


def parse(words, heads, relations, tags=None):
    words = tuple(words.split())
    return DependencyParse(words, tuple(tags.split()) if tags else ("X",) * len(words), tuple(heads),
                           tuple(relations.split()), tuple(w.lower() for w in words))


# ---------------------------------------------------------------------------
# Hand-worked values of the pure helpers
# ---------------------------------------------------------------------------

def hwcm_of(hyp, ref, column="words", length=4):
    table = token_table([hyp, ref], (column,), lowercase=True)
    return float(hwcm_scores(chain_counts(table, column, length), np.array([0]), np.array([1]))[0])


def test_hwcm_hand_worked():
    # ref "the cat sat down": det(cat, the), nsubj(sat, cat), root(sat), prt(sat, down).
    ref = parse("the cat sat down", (2, 3, 0, 3), "det nsubj root prt")
    # hyp "a cat sat": det(cat, a), nsubj(sat, cat), root(sat).
    # chains (top-down) of the hypothesis / reference:
    #   k=1: {a, cat, sat} / {the, cat, sat, down}: 2 of 3 hypothesis chains match
    #   k=2: {sat>cat, cat>a} / {sat>cat, cat>the, sat>down}: 1 of 2
    #   k=3: {sat>cat>a} / {sat>cat>the}: 0 of 1
    #   k=4: none on either side: skipped
    # HWCM = (2/3 + 1/2 + 0) / 3 = 7/18
    hyp = parse("a cat sat", (2, 3, 0), "det nsubj root")
    assert hwcm_of(hyp, ref) == pytest.approx(7 / 18, abs=1e-12)
    # hyp "Cat sat" (lowercased): k=1 2/2, k=2 {sat>cat} 1/1, k=3 none in the hypothesis but one in the
    # reference: 0; k=4 skipped: (1 + 1 + 0) / 3 = 2/3. With chains up to length 2 only: (1 + 1) / 2.
    short = parse("Cat sat", (2, 0), "nsubj root")
    assert hwcm_of(short, ref) == pytest.approx(2 / 3, abs=1e-12)
    assert hwcm_of(short, ref, length=2) == pytest.approx(1.0, abs=1e-12)
    # over relations: hyp chains k=1 {det, nsubj, root}: all 3 in the reference; k=2 {root>nsubj,
    # nsubj>det}: 2 of 2; k=3 {root>nsubj>det}: 1 of 1 -> 1.0 although the words differ
    assert hwcm_of(hyp, ref, "relations") == pytest.approx(1.0, abs=1e-12)
    # clipping: hyp "the the" (two roots) vs ref "the": k=1 min(2, 1) / 2 = 1/2, no longer chains
    two = parse("the the", (0, 0), "root root")
    one = parse("the", (0,), "root")
    assert hwcm_of(two, one) == pytest.approx(0.5, abs=1e-12)


def test_hwcm_identical_and_empty():
    ref = parse("the cat sat down", (2, 3, 0, 3), "det nsubj root prt")
    empty = DependencyParse((), (), (), (), ())
    assert hwcm_of(ref, ref) == 1.0
    assert hwcm_of(empty, empty) == 1.0  # nothing on either side: nothing to disagree on
    assert hwcm_of(empty, ref) == 0.0
    assert hwcm_of(ref, empty) == 0.0


def or_of(hyp, ref, relation="*", form="words"):
    table = token_table([hyp, ref], (form, "relations"), lowercase=True)
    return float(relation_overlaps(relation_items(table, form), np.array([0]), np.array([1]), relation)[0])


def test_dp_or_hand_worked():
    hyp = parse("The cat sat on the mat", (2, 3, 0, 3, 6, 4), "det nsubj ROOT prep det pobj")
    ref = parse("a cat sat on the mat", (2, 3, 0, 3, 6, 4), "det nsubj ROOT prep det pobj")
    # det: hyp {the: 2} (lowercased), ref {a: 1, the: 1}: sum min = 1, sum max = 2 + 1 = 3 -> 1/3
    # nsubj {cat}, ROOT {sat}, prep {on}, pobj {mat}: 1 each
    # DP-Or(*) = (1/3 + 4) / 5 = 13/15
    assert or_of(hyp, ref) == pytest.approx(13 / 15, abs=1e-12)
    assert or_of(hyp, ref, "det") == pytest.approx(1 / 3, abs=1e-12)
    assert or_of(hyp, ref, "nsubj") == 1.0
    assert or_of(hyp, ref, "dobj") == 1.0  # on neither side: nothing to disagree on
    # a relation on one side only counts 0 in the mean: hyp without "on the mat"
    cut = parse("the cat sat", (2, 3, 0), "det nsubj ROOT")
    # det: {the: 1} vs {a: 1, the: 1}: 1/2; nsubj 1; ROOT 1; prep 0; pobj 0 -> (1/2 + 2) / 5 = 1/2
    assert or_of(cut, ref) == pytest.approx(0.5, abs=1e-12)
    # lemmas: "sat" / "sit" both lemmatise to what the parse says
    sits = parse("cats sit", (2, 0), "nsubj ROOT")
    sat = DependencyParse(("cat", "sat"), ("NN", "VBD"), (2, 0), ("nsubj", "ROOT"), ("cat", "sit"))
    sits = sits._replace(lemmas=("cat", "sit"))
    assert or_of(sits, sat, form="words") == 0.0
    assert or_of(sits, sat, form="lemmas") == 1.0


def test_dp_or_empty():
    empty = DependencyParse((), (), (), (), ())
    one = parse("yes", (0,), "ROOT")
    assert or_of(empty, empty) == 1.0
    assert or_of(empty, one) == 0.0
    assert or_of(one, empty) == 0.0


def test_kernel_and_ted_hand_worked():
    # "cat sat" vs "dog sat", nsubj(sat, x), root(sat):
    #   (root (nsubj (NN cat)) (VBD sat))  and  (root (nsubj (NN dog)) (VBD sat))
    hyp = from_dependencies(["cat", "sat"], [2, 0], ["nsubj", "root"], ["NN", "VBD"])
    ref = from_dependencies(["dog", "sat"], [2, 0], ["nsubj", "root"], ["NN", "VBD"])
    assert str(hyp) == "(root (nsubj (NN cat)) (VBD sat))"
    # SST, lambda = 1: Delta(VBD sat, VBD sat) = 1; Delta(NN cat, NN dog) = 0;
    # Delta(nsubj, nsubj) = 1 + Delta(NN, NN) = 1; Delta(root, root) = (1 + 1)(1 + 1) = 4: K = 6.
    # K(hyp, hyp): 1 + 1 + (1 + 1) + (1 + 2)(1 + 1) = 10, and K(ref, ref) = 10: 6 / 10.
    assert sst(hyp, ref, lam=1.0) == pytest.approx(6.0)
    metric = get_metric("dp-tk", kernel="sst", lam=1)
    assert metric.compare([hyp, ref], np.array([0]), np.array([1]))[0] == pytest.approx(0.6, abs=1e-12)
    # TED: relabel cat -> dog, 1 edit; 6 + 6 nodes (root, nsubj, NN, cat, VBD, sat): 1 - 1/12
    ted = get_metric("ted")
    assert ted.compare([hyp, ref], np.array([0]), np.array([1]))[0] == pytest.approx(11 / 12, abs=1e-12)
    # nolex drops the words: the trees are equal
    assert variant(hyp, "nolex") == variant(ref, "nolex")


def test_parse_of_tree_round_trip():
    words, heads, rels, tags = ["the", "cat", "sat", "down", "."], [2, 3, 0, 3, 3], \
        ["det", "nsubj", "ROOT", "prt", "punct"], ["DT", "NN", "VBD", "RP", "."]
    for pos in (tags, None):
        back = parse_of_tree(from_dependencies(words, heads, rels, pos))
        assert back.words == tuple(words) and back.heads == tuple(heads) and back.relations == tuple(rels)
        assert back.tags == (tuple(tags) if pos else ("",) * 5)
    # two sentences: two roots under ROOT, spaCy's own "ROOT" relation label included
    words2, heads2, rels2 = ["It", "rained", ".", "Yes", "."], [2, 0, 2, 0, 4], ["nsubj", "ROOT", "punct",
                                                                                 "ROOT", "punct"]
    for pos in (["PRP", "VBD", ".", "UH", "."], None):
        tree = from_dependencies(words2, heads2, rels2, pos)
        assert tree.label == "ROOT" and len(tree.index.children[0]) == 2
        back = parse_of_tree(tree)
        assert back.words == tuple(words2) and back.heads == tuple(heads2) and back.relations == tuple(rels2)
    # one word
    assert parse_of_tree(from_dependencies(["Hi"], [0], ["root"], ["UH"])).heads == (0,)
    assert parse_of_tree(from_dependencies(["Hi"], [0], ["root"])).words == ("Hi",)
    assert parse_of_tree(parse_bracketed("()")).words == ()


def test_parse_of_tree_rejects_other_shapes():
    for text in ("(S (NP (DT the) (NN cat)) (VP (VBD sat)))", "(x)", "(root a b)"):
        with pytest.raises(InputError, match="from_dependencies"):
            parse_of_tree(parse_bracketed(text))


# ---------------------------------------------------------------------------
# Options, resources
# ---------------------------------------------------------------------------

def test_bad_options():
    for spec in ("dp-hwcm:length=0", "dp-hwcm:length=10", "dp-hwcm:over=chunks", "dp-tk:lam=0",
                 "dp-tk:mu=1.5", "dp-tk:kernel=rbf", "ted:variant=lex3", "dp-or:form=stems",
                 "dp-or:relation=", "dp-or:parser=stanza", "dp-or:form=lemmas,parser=supplied",
                 "dp-hwcm:over=lemmas,parser=supplied"):
        with pytest.raises(OptionError):
            get_metric(spec)


def test_signatures_and_catalogue_fields():
    for name in ("dp-hwcm", "dp-or", "dp-tk", "ted"):
        m = get_metric(name)
        assert m.family == "syntactic" and m.resources == ("spacy",) and m.layers == ("dependencies",)
    for spec in ("dp-hwcm:over=lemmas", "dp-or:form=lemmas"):  # only they run spaCy's lemmatiser
        assert get_metric(spec).layers == ("dependencies+lemmas",)
        assert m.citation and m.signature.startswith(name + "|")
    assert get_metric("dp-hwcm", over="relations", length=2).signature.startswith(
        "dp-hwcm|over:relations|n:2|parser:spacy|lc:yes|")


def test_resource_missing_when_spacy_absent(monkeypatch):
    def absent():
        raise ResourceMissing("spaCy (package spacy)", "pip install 'combo-eval[spacy]'")

    monkeypatch.setattr(layers.get_layer("dependencies"), "check", absent)
    for name in ("dp-hwcm", "dp-or", "dp-tk", "ted"):
        with pytest.raises(ResourceMissing, match="pip install"):
            get_metric(name).check_resources()
        with pytest.raises(ResourceMissing):
            get_metric(name).segment_scores(["a"], [["a"]])
        get_metric(name, parser="supplied").check_resources()  # supplied trees need no spaCy


# ---------------------------------------------------------------------------
# Through spaCy: edge cases
# ---------------------------------------------------------------------------

def test_identical_empty_and_one_sided():
    texts = ["The cat sat on the mat.", "It rained. Then it stopped!", "Das ist gut.", "x"]
    for spec in ALL:
        m = get_metric(spec)
        np.testing.assert_array_equal(m.segment_scores(texts, [[t] for t in texts]), 1.0)
        assert m.segment_scores([""], [[""]])[0] == 1.0
        assert m.segment_scores(["  "], [[""]])[0] == 1.0  # blank text: no token
        if spec != "dp-or:relation=nsubj":  # "x" has no nsubj either: nothing to disagree on
            assert m.segment_scores([""], [["x y"]])[0] == 0.0, spec
            assert m.segment_scores(["x y"], [[""]])[0] == 0.0, spec
        assert m.corpus_score([""], [[""]]) == 1.0


def test_multi_reference_takes_the_best():
    hyps = ["The cat sat on the mat.", "A dog barked at the postman."]
    refs = [["Stocks fell sharply today.", "The cat sat on a mat.", "A cat is on the mat."],
            ["The dog barked at the mailman."]]
    for spec in ALL:
        m = get_metric(spec)
        multi = m.segment_scores(hyps, refs)
        single = [max(m.segment_scores([h], [[r]])[0] for r in rs) for h, rs in zip(hyps, refs)]
        np.testing.assert_allclose(multi, single, atol=1e-12)
        assert m.corpus_score(hyps, refs) == pytest.approx(np.mean(multi), abs=1e-12)


def test_non_latin_scripts():
    hyps = ["Ни один человек не пришёл.", "東京は大きい都市です。", "مرحبا بالعالم"]
    refs = [["Никто не пришёл."], ["東京は大きい都市です。"], ["مرحبا بالعالم"]]
    for spec in ALL:
        scores = get_metric(spec).segment_scores(hyps, refs)
        assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1)), spec
        assert scores[1] == 1.0 and scores[2] == 1.0


def test_thousand_token_sentence():
    words = ("the quick brown fox jumps over the lazy dog and " * 100).split()
    long_text = " ".join(words)
    parsed = annotate("dependencies", [long_text])[0]
    assert len(parsed.words) == 1000
    short = "The quick brown fox jumps over the lazy dog."
    for spec in ("dp-hwcm", "dp-hwcm:over=relations", "dp-or", "dp-tk:kernel=sst", "ted"):
        m = get_metric(spec)
        scores = m.segment_scores([long_text, short, long_text], [[short], [long_text], [long_text]])
        assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1)), spec
        assert scores[2] == 1.0
        assert 0 < scores[0] < 1, spec


# ---------------------------------------------------------------------------
# Supplied CoNLL-U trees
# ---------------------------------------------------------------------------

def write_conllu(path, parses):
    blocks = []
    for p in parses:
        lines = [f"{k + 1}\t{w}\t{lem}\t_\t{tag}\t_\t{h}\t{rel}\t_\t_"
                 for k, (w, tag, h, rel, lem) in enumerate(zip(p.words, p.tags, p.heads, p.relations, p.lemmas))]
        blocks.append("\n".join(lines) + "\n")
    path.write_text("\n".join(blocks), encoding="utf-8")


def test_supplied_conllu_gives_the_spacy_scores(tmp_path, supplied_trees):
    hyps = ["The cat sat on the mat.", "A dog barked loudly.", "He did it. She did not."]
    refs = [["The cat was sitting on the mat."], ["The dog barked."], ["She did it. He did not."]]
    texts = hyps + [r for rs in refs for r in rs]
    path = tmp_path / "parses.conllu"
    write_conllu(path, annotate("dependencies+lemmas", texts))
    trees = read_conllu(path, pos="xpos")
    assert len(trees) == len(texts)
    supplied_trees.add("dependencies", texts, trees, path=str(path))
    for spec in ALL:
        if "lemmas" in spec:
            continue
        spacy_scores = get_metric(spec).segment_scores(hyps, refs)
        supplied = get_metric(spec + (",parser=supplied" if ":" in spec else ":parser=supplied"))
        np.testing.assert_allclose(supplied.segment_scores(hyps, refs), spacy_scores, atol=1e-12, err_msg=spec)
    # without POS the categories are missing
    write_conllu(tmp_path / "b.conllu", annotate("dependencies+lemmas", ["Fine."]))
    supplied_trees.add("dependencies", ["Fine."], read_conllu(tmp_path / "b.conllu", pos=None))
    with pytest.raises(InputError, match="no POS tags"):
        get_metric("dp-hwcm", over="categories", parser="supplied").segment_scores(["Fine."], [["Fine."]])
    assert get_metric("dp-hwcm", parser="supplied").segment_scores(["Fine."], [["Fine."]])[0] == 1.0


def test_supplied_tree_missing(supplied_trees):
    supplied_trees.add("dependencies", ["a"], [from_dependencies(["a"], [0], ["root"], ["DT"])])
    for name in ("dp-hwcm", "dp-or", "dp-tk", "ted"):
        with pytest.raises(InputError, match="no supplied dependencies tree"):
            get_metric(name, parser="supplied").segment_scores(["a"], [["b"]])


# ---------------------------------------------------------------------------
# Real data: WMT12 de-en, 200 segments of 2 systems
# ---------------------------------------------------------------------------

def plain_chains(p, column, k):
    """Chains of length k of one parse, top-down tuples, by walking the heads."""
    values = {"words": [w.lower() for w in p.words], "categories": p.tags, "relations": p.relations}[column]
    out = Counter()
    for t in range(len(p.words)):
        chain, node = [], t
        while len(chain) < k and node >= 0:
            chain.append(values[node])
            node = p.heads[node] - 1
        if len(chain) == k:
            out[tuple(reversed(chain))] += 1
    return out


def plain_hwcm(h, r, column, n=4):
    total, counted = 0.0, 0
    for k in range(1, n + 1):
        ch, cr = plain_chains(h, column, k), plain_chains(r, column, k)
        if ch or cr:
            counted += 1
            total += sum((ch & cr).values()) / sum(ch.values()) if ch else 0.0
    return total / counted if counted else 1.0


def plain_or(h, r):
    def items(p):
        out = {}
        for w, rel in zip(p.words, p.relations):
            out.setdefault(rel, Counter())[w.lower()] += 1
        return out

    ih, ir = items(h), items(r)
    values = []
    for rel in set(ih) | set(ir):
        a, b = ih.get(rel, Counter()), ir.get(rel, Counter())
        values.append(sum((a & b).values()) / sum((a | b).values()))
    return sum(values) / len(values) if values else 1.0


@pytest.fixture(scope="module")
def wmt_sample(wmt12_de_en):
    ref, systems = wmt12_de_en
    names = sorted(systems)[:2]
    hyps = [systems[s][i] for s in names for i in range(200)]
    refs = [[ref[i]] for _ in names for i in range(200)]
    return hyps, refs


def test_real_data_matches_plain_reimplementation(wmt_sample):
    hyps, refs = wmt_sample
    hp = annotate("dependencies", hyps)
    rp = annotate("dependencies", [r[0] for r in refs])
    for column in ("words", "categories", "relations"):
        scores = get_metric("dp-hwcm", over=column).segment_scores(hyps, refs)
        plain = [plain_hwcm(h, r, column) for h, r in zip(hp, rp)]
        np.testing.assert_allclose(scores, plain, atol=1e-12, err_msg=column)
        assert 0.05 < scores.mean() < 0.95
    scores = get_metric("dp-or").segment_scores(hyps, refs)
    np.testing.assert_allclose(scores, [plain_or(h, r) for h, r in zip(hp, rp)], atol=1e-12)
    # each relation on its own, averaged over the relations present, gives DP-Or(*)
    relations = sorted({rel for p in hp + rp for rel in p.relations})
    per_relation = np.array([get_metric("dp-or", relation=rel).segment_scores(hyps, refs) for rel in relations])
    present = np.array([[rel in h.relations or rel in r.relations for h, r in zip(hp, rp)] for rel in relations])
    np.testing.assert_allclose((per_relation * present).sum(0) / present.sum(0), scores, atol=1e-12)


def test_real_data_tree_metrics(wmt_sample):
    hyps, refs = wmt_sample
    trees_h = dependency_trees(hyps, "spacy", "lex1", True)
    trees_r = dependency_trees([r[0] for r in refs], "spacy", "lex1", True)
    for kind in ("ptk", "sst"):
        scores = get_metric("dp-tk", kernel=kind).segment_scores(hyps, refs)
        kernel = TreeKernel(kind)
        expected = [1.0 if a == b else kernel(a, b) for a, b in zip(trees_h, trees_r)]
        np.testing.assert_allclose(scores, expected, atol=1e-12, err_msg=kind)
        assert np.all((scores >= 0) & (scores <= 1)) and 0.05 < scores.mean() < 0.95
    # TED: 100 rows (50 segments of each system); zss (much slower) on 5 of them
    rows = [k for k in range(len(hyps)) if k % 200 < 50]
    scores = get_metric("ted").segment_scores([hyps[k] for k in rows], [refs[k] for k in rows])
    assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1)) and 0.05 < scores.mean() < 0.95
    for j in range(0, len(rows), 20):
        a, b = trees_h[rows[j]], trees_r[rows[j]]
        expected = 1.0 if a == b else 1 - tree_edit_distance(a, b, backend="zss") / (len(a) + len(b))
        assert scores[j] == pytest.approx(expected, abs=1e-12)
    for spec in ALL:
        if spec in SLOW:
            continue
        values = get_metric(spec).segment_scores(hyps, refs)
        assert np.all(np.isfinite(values)) and np.all((values >= 0) & (values <= 1)), spec
        assert not math.isclose(values.std(), 0.0), spec
