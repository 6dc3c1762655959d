"""``--trees KIND TEXTS TREES``: parses from any parser attached on the command line; bad files fail cleanly."""

from click.testing import CliRunner

from combo.cli import main
from combo.features import layers


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_trees_are_attached_to_their_lines(tmp_path):
    texts = tmp_path / "hyp.txt"
    texts.write_text("the cat sat\ndogs\n", encoding="utf-8")
    trees = tmp_path / "hyp.trees"
    trees.write_text("(S (NP (DT the) (NN cat)) (VP (VBD sat)))\n(S (NNS dogs))\n", encoding="utf-8")
    layers.clear_supplied()
    try:
        res = run("score", "--testbed", "example", "-m", "bleu", "-q",
                  "--trees", "constituents", str(texts), str(trees))
        assert res.exit_code == 0, res.output
        (tree,) = layers.supplied_trees("constituents", ["dogs"])
        assert tree.to_bracketed() == "(S (NNS dogs))"
    finally:
        layers.clear_supplied()


def test_unparsable_tree_file_names_file_and_line(tmp_path):
    texts = tmp_path / "hyp.txt"
    texts.write_text("a\nb\n", encoding="utf-8")
    trees = tmp_path / "bad.trees"
    trees.write_text("(S (NN a))\n(S (NN b)\n", encoding="utf-8")
    res = run("score", "--testbed", "example", "-m", "bleu", "-q", "--trees", "constituents", str(texts), str(trees))
    assert res.exit_code == 2
    assert "bad.trees" in res.output and ":2" in res.output
    assert "Traceback" not in res.output


def test_tree_count_must_match_the_lines(tmp_path):
    texts = tmp_path / "hyp.txt"
    texts.write_text("a\nb\nc\n", encoding="utf-8")
    trees = tmp_path / "few.trees"
    trees.write_text("(S (NN a))\n(S (NN b))\n", encoding="utf-8")
    layers.clear_supplied()
    res = run("score", "--testbed", "example", "-m", "bleu", "-q", "--trees", "discourse", str(texts), str(trees))
    assert res.exit_code == 2
    assert "2 trees for the 3 lines" in res.output and "few.trees" in res.output
    assert not layers._supplied.get("discourse")  # nothing attached from a failed file


def test_supplied_trees_reach_worker_processes(tmp_path):
    import numpy as np

    from combo.cli import _load_testbed
    from combo.features.trees import Tree
    from combo.scoring import score_testbed

    tb = _load_testbed("example")
    texts = sorted({r for seg in tb.segments for r in seg.references}
                   | {t for cands in tb.candidates.values() for t in cands.values()})

    # a stand-in "discourse tree" per text: one EDU node per word, so identical texts give identical trees
    trees = [Tree("ROOT", [Tree("EDU", [w]) for w in t.split()] or ["-"]) for t in texts]
    layers.clear_supplied()
    try:
        layers.supply_trees("discourse", texts, trees)
        one = score_testbed(tb, ["dr-tk", "dr-tk-nolex"], jobs=1)
        two = score_testbed(tb, ["dr-tk", "dr-tk-nolex"], jobs=2)
        np.testing.assert_array_equal(one.segment, two.segment)
    finally:
        layers.clear_supplied()
