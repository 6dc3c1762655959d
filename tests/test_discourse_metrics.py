"""dr-tk and its five fixed-variant names: hand-worked kernels on supplied bracketed discourse trees."""

import numpy as np
import pytest

from combo.errors import InputError, OptionError
from combo.analysis.kernels import TreeKernel
from combo.analysis.supplied import supply_tree_files, using_trees
from combo.analysis.trees import VARIANTS, parse_bracketed, read_bracketed, variant
from combo.metrics.registry import get_metric, metric_class
from combo.testbed import SuppliedTrees

FIXED = {"dr-tk-nolex": "nolex", "dr-tk-lex1": "lex1", "dr-tk-lex1.1": "lex1.1", "dr-tk-lex2": "lex2",
         "dr-tk-lex2.1": "lex2.1"}

# Two-EDU RST trees in the bracketed form DiscoTK's trees are written in (relation/nuclearity nodes,
# EDU nodes, words as leaves). The hypothesis and reference share the first EDU and the relation.
HYP = "(NS-Elaboration (EDU the cat) (EDU sat))"
REF = "(NS-Elaboration (EDU the cat) (EDU slept))"
OTHER = "(NN-Joint (EDU it rained) (EDU we stayed in))"


@pytest.fixture
def supplied(tmp_path, supplied_trees):
    texts = tmp_path / "texts.txt"
    trees = tmp_path / "trees.txt"
    texts.write_text("the cat sat\nthe cat slept\nit rained , we stayed in\n\n", encoding="utf-8")
    trees.write_text(f"{HYP}\n{REF}\n{OTHER}\n\n", encoding="utf-8")
    parsed = read_bracketed(trees)
    assert len(parsed) == 4 and not parsed[3]  # the blank line is the empty tree of the empty text
    supplied_trees.add("discourse", ["the cat sat", "the cat slept", "it rained , we stayed in", ""], parsed)
    return texts, trees, supplied_trees


def test_hand_worked_sst(supplied):
    # Subset-tree kernel, lambda = 1, lex1 (the trees as given):
    #   hyp: N[EDU EDU], EDU[the cat], EDU[sat]; ref: N[EDU EDU], EDU[the cat], EDU[slept]
    #   Delta(EDU[the cat], EDU[the cat]) = 1; the other EDU pairs differ: 0
    #   Delta(N, N) = (1 + 1)(1 + 0) = 2                        -> K(hyp, ref) = 3
    #   K(hyp, hyp) = 1 + 1 + (1 + 1)(1 + 1) = 6, K(ref, ref) = 6 -> 3 / 6 = 0.5
    m = get_metric("dr-tk", lam=1)
    assert m.segment_scores(["the cat sat"], [["the cat slept"]])[0] == pytest.approx(0.5, abs=1e-12)
    # default lambda = 0.4: Delta(EDU, EDU) = 0.4, Delta(N, N) = 0.4 (1.4)(1) = 0.56 -> K = 0.96;
    # K(hyp, hyp) = 0.4 + 0.4 + 0.4 (1.4)(1.4) = 1.584 -> 0.96 / 1.584
    assert get_metric("dr-tk").segment_scores(["the cat sat"], [["the cat slept"]])[0] == \
        pytest.approx(0.96 / 1.584, abs=1e-12)
    # nolex: both become (NS-Elaboration EDU EDU): identical, 1
    assert get_metric("dr-tk-nolex").segment_scores(["the cat sat"], [["the cat slept"]])[0] == 1.0
    # a different relation and no shared EDU: nothing in common
    assert get_metric("dr-tk").segment_scores(["the cat sat"], [["it rained , we stayed in"]])[0] == 0.0


def test_fixed_variant_names_equal_the_option(supplied):
    hyps = ["the cat sat", "the cat slept", ""]
    refs = [["the cat slept", "it rained , we stayed in"], ["the cat sat"], ["the cat sat"]]
    trees = {t: parse_bracketed(s) for t, s in
             (("the cat sat", HYP), ("the cat slept", REF), ("it rained , we stayed in", OTHER))}
    for name, v in FIXED.items():
        fixed = get_metric(name)
        assert "variant" not in fixed.options and fixed.signature.startswith(name + "|kernel:sst|")
        scores = fixed.segment_scores(hyps, refs)
        np.testing.assert_allclose(scores, get_metric("dr-tk", variant=v).segment_scores(hyps, refs), atol=1e-15)
        # the same as TreeKernel on the variant trees, best reference per row
        kernel = TreeKernel("sst")
        expected = [max(kernel(variant(trees[h], v), variant(trees[r], v)) for r in rs)
                    for h, rs in zip(hyps[:2], refs[:2])]
        np.testing.assert_allclose(scores[:2], expected, atol=1e-12)
        assert scores[2] == 0.0  # empty tree against a tree
        assert metric_class(name).__doc__.startswith("DiscoTK's DR-")
    assert set(FIXED.values()) == set(VARIANTS)


def test_identical_and_empty(supplied):
    texts = ["the cat sat", "the cat slept", "it rained , we stayed in", ""]
    for name in ["dr-tk", "dr-tk:kernel=ptk", "dr-tk:kernel=st"] + list(FIXED):
        m = get_metric(name)
        np.testing.assert_array_equal(m.segment_scores(texts, [[t] for t in texts]), 1.0)
        assert m.segment_scores([""], [["the cat sat"]])[0] == 0.0
        assert m.segment_scores(["the cat sat"], [[""]])[0] == 0.0


def test_missing_trees_say_how_to_supply_them(supplied):
    # trees=supplied reads the supplied trees alone (the default parses the texts without one)
    with pytest.raises(InputError, match="no supplied discourse tree") as err:
        get_metric("dr-tk:trees=supplied").segment_scores(["the cat sat"], [["an unparsed reference"]])
    assert "trees.add('discourse'" in str(err.value) and "trees=parsed" in str(err.value)
    with using_trees(None):
        for name in FIXED:
            with pytest.raises(InputError, match="--trees discourse"):
                get_metric(name + ":trees=supplied").segment_scores(["a"], [["b"]])


def test_tree_files_as_the_command_line_attaches_them(supplied):
    texts, trees, _ = supplied
    before = get_metric("dr-tk").segment_scores(["the cat sat"], [["the cat slept"]])
    from_files = SuppliedTrees()
    assert supply_tree_files(from_files, "discourse", texts, trees) == 4
    with using_trees(from_files):
        np.testing.assert_array_equal(get_metric("dr-tk").segment_scores(["the cat sat"], [["the cat slept"]]),
                                      before)


def test_non_latin_words(supplied):
    supplied[2].add("discourse", ["東京 は 大きい", "東京 は 小さい"],
                 [parse_bracketed("(NS-Elaboration (EDU 東京 は) (EDU 大きい))"),
                  parse_bracketed("(NS-Elaboration (EDU 東京 は) (EDU 小さい))")])
    # the same shape as HYP / REF, so the same value as the hand-worked 0.96 / 1.584
    assert get_metric("dr-tk").segment_scores(["東京 は 大きい"], [["東京 は 小さい"]])[0] == \
        pytest.approx(0.96 / 1.584, abs=1e-12)


def test_options_and_resources():
    for spec in ("dr-tk:variant=lex3", "dr-tk:kernel=rbf", "dr-tk:lam=0", "dr-tk-lex1:variant=nolex"):
        with pytest.raises(OptionError):
            get_metric(spec)
    for name in ["dr-tk"] + list(FIXED):
        m = get_metric(name + ":trees=supplied")
        m.check_resources()  # nothing to check: the trees are supplied
        assert m.family == "syntactic" and m.resources == ("supplied discourse trees",) and m.citation
        assert m.layers == () and m.language_support() == ((), "")
        parsed = get_metric(name)  # the default: Feng & Hirst's parser, supplied trees winning where given
        assert parsed.layers == ("discourse",) and parsed.resources == ("rst-parser",) and parsed.language_support()[0] == ("en",)
