"""``--trees KIND TEXTS TREES``: parses from any parser attached on the command line; bad files fail cleanly."""

from click.testing import CliRunner
from testutil import write_text

from combo.cli import main
from combo.analysis import supplied
from combo.testbed import SuppliedTrees


def run(*args):
    return CliRunner().invoke(main, list(args))


def text_and_trees(tmp_path, lines, trees, name="hyp"):
    """A text file and its tree file (``name``.txt, ``name``.trees); returns both paths as strings."""
    texts = write_text(tmp_path / f"{name}.txt", "".join(line + "\n" for line in lines))
    tree_file = write_text(tmp_path / f"{name}.trees", "".join(tree + "\n" for tree in trees))
    return str(texts), str(tree_file)


def test_trees_are_attached_to_their_lines(tmp_path):
    texts, trees = text_and_trees(tmp_path, ["the cat sat", "dogs"],
                                  ["(S (NP (DT the) (NN cat)) (VP (VBD sat)))", "(S (NNS dogs))"])
    res = run("score", "--testbed", "example", "-m", "bleu", "-q", "--trees", "constituents", texts, trees)
    assert res.exit_code == 0, res.output
    assert supplied.trees_in_use() is None  # the command's trees were its test bed's, not left in the process
    attached = SuppliedTrees()
    assert supplied.supply_tree_files(attached, "constituents", texts, trees) == 2
    (tree,) = attached.get("constituents", ["dogs"])
    assert tree.to_bracketed() == "(S (NNS dogs))"


def test_unparsable_tree_file_names_file_and_line(tmp_path):
    texts, trees = text_and_trees(tmp_path, ["a", "b"], ["(S (NN a))", "(S (NN b)"], name="bad")
    res = run("score", "--testbed", "example", "-m", "bleu", "-q", "--trees", "constituents", texts, trees)
    assert res.exit_code == 2
    assert "bad.trees" in res.output and ":2" in res.output
    assert "Traceback" not in res.output


def test_tree_count_must_match_the_lines(tmp_path):
    texts, trees = text_and_trees(tmp_path, ["a", "b", "c"], ["(S (NN a))", "(S (NN b))"], name="few")
    res = run("score", "--testbed", "example", "-m", "bleu", "-q", "--trees", "discourse", texts, trees)
    assert res.exit_code == 2
    assert "2 trees for the 3 lines" in res.output and "few.trees" in res.output
    assert supplied.trees_in_use() is None  # nothing left in the process by a failed file


def test_supplied_trees_reach_worker_processes(tmp_path):
    import numpy as np

    from combo.cli.options import load_testbed
    from combo.analysis.trees import Tree
    from combo.scoring import score_testbed

    tb = load_testbed("example")
    texts = sorted({r for seg in tb.segments for r in seg.references}
                   | {t for cands in tb.candidates.values() for t in cands.values()})

    # a stand-in "discourse tree" per text: one EDU node per word, so identical texts give identical trees
    trees = [Tree("ROOT", [Tree("EDU", [w]) for w in t.split()] or ["-"]) for t in texts]
    tb.trees.add("discourse", texts, trees)
    one = score_testbed(tb, ["dr-tk", "dr-tk-nolex"], jobs=1)
    two = score_testbed(tb, ["dr-tk", "dr-tk-nolex"], jobs=2)
    np.testing.assert_array_equal(one.segment, two.segment)


def test_score_with_supplied_constituent_trees(tmp_path):
    # A plain test bed: one reference file and two systems, with a Penn tree per line of each.
    root = tmp_path / "tb"
    files = {
        "references/r1": ["the cat sat", "dogs bark"],
        "systems/A": ["the cat sat", "dogs barked"],
        "systems/B": ["a cat", "dogs bark"],
    }
    trees = {
        "the cat sat": "(S (NP (DT the) (NN cat)) (VP (VBD sat)))",
        "dogs bark": "(S (NP (NNS dogs)) (VP (VBP bark)))",
        "dogs barked": "(S (NP (NNS dogs)) (VP (VBD barked)))",
        "a cat": "(S (NP (DT a) (NN cat)))",
    }
    args = []
    for name, lines in files.items():
        args += ["--trees", "constituents", *text_and_trees(root, lines, [trees[line] for line in lines], name)]
    res = run("score", "--testbed", str(root), "-m", "cp-tk:trees=supplied", "--level", "segment", "-q", *args)
    assert res.exit_code == 0, res.output
    rows = [line.split("\t") for line in res.output.strip().splitlines()[1:]]
    score = {(system, segment): float(value) for system, segment, value in rows}
    # segments are numbered from 1 in the output
    assert score[("A", "1")] == 1.0 and score[("B", "2")] == 1.0  # identical trees
    assert 0.0 < score[("A", "2")] < 1.0 and 0.0 < score[("B", "1")] < 1.0
    # without the trees, one clear error
    res = run("score", "--testbed", str(root), "-m", "cp-tk:trees=supplied", "-q")
    assert res.exit_code == 2 and "no supplied constituents tree" in res.output
