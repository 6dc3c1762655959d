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
