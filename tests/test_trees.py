"""The tree type and its builders: Penn bracketed, CoNLL-U, BIO chunks, variants."""

import pickle
import sys

import pytest

from combo.errors import InputError
from combo.analysis.kernel_forests import _Forest
from combo.analysis.trees import (
    EMPTY_TREE, VARIANTS, Tree, from_chunks, from_dependencies, parse_bracketed,
    read_bracketed, read_conllu, variant,
)

CAT = "(S (NP (DT the) (NN cat)) (VP (VBD sat)))"


# --- the type ---------------------------------------------------------------

def test_nested_constructor_equals_parsed_tree_and_hashes_by_content():
    built = Tree("S", [Tree("NP", [Tree("DT", ["the"]), Tree("NN", ["cat"])]),
                       Tree("VP", [Tree("VBD", ["sat"])])])
    parsed = parse_bracketed(CAT)
    assert built == parsed and hash(built) == hash(parsed)
    assert built is not parsed and len({built, parsed}) == 1
    assert str(parsed) == CAT
    assert parsed.labels == ("S", "NP", "DT", "the", "NN", "cat", "VP", "VBD", "sat")
    assert parsed.arities == (2, 2, 1, 0, 1, 0, 1, 1, 0)
    assert parse_bracketed("(S (NP (DT the) (NN dog)) (VP (VBD sat)))") != parsed


def test_tree_is_immutable_and_pickles_without_its_index():
    t = parse_bracketed(CAT)
    with pytest.raises(AttributeError):
        t.labels = ()
    t.index  # build the cached index, then pickle
    back = pickle.loads(pickle.dumps(t))
    assert back == t and back._index is None


def test_navigation_productions_and_postorder():
    t = parse_bracketed(CAT)
    assert t.label == "S" and [c.label for c in t.children] == ["NP", "VP"]
    assert t.children[0] == parse_bracketed("(NP (DT the) (NN cat))")
    assert t.leaves() == ["the", "cat", "sat"]
    assert t.height() == 3 and len(t) == 9
    assert t.productions() == [("S", ("NP", "VP")), ("NP", ("DT", "NN")), ("DT", ("the",)),
                               ("NN", ("cat",)), ("VP", ("VBD",)), ("VBD", ("sat",))]
    index = t.index
    assert [t.labels[i] for i in index.postorder] == [
        "the", "DT", "cat", "NN", "NP", "sat", "VBD", "VP", "S"]
    assert index.children[0] == (1, 6) and index.parent[6] == 0 and index.end[1] == 6
    # production ids are shared: NP -> DT NN here and in another tree is one id
    other = parse_bracketed("(NP (DT a) (NN dog))")
    assert other.index.production_ids[0] == index.production_ids[1]
    assert index.production_ids[3] == -1  # a leaf has no production
    # a leaf child and an internal child with the same label make different productions
    assert parse_bracketed("(A B)").index.production_ids[0] != \
        parse_bracketed("(A (B x))").index.production_ids[0]


def test_empty_tree_and_single_leaf():
    assert parse_bracketed("") == EMPTY_TREE == parse_bracketed("()") == Tree.empty()
    assert len(EMPTY_TREE) == 0 and not EMPTY_TREE and EMPTY_TREE.label is None
    assert str(EMPTY_TREE) == "()" and EMPTY_TREE.height() == -1
    leaf = parse_bracketed("(cat)")
    assert leaf == Tree("cat") and str(leaf) == "(cat)" and leaf.is_leaf()
    with pytest.raises(InputError):
        Tree("")


def test_from_preorder_validates():
    assert Tree.from_preorder(["A", "x"], [1, 0]) == parse_bracketed("(A x)")
    for labels, arities in ((["A", "x"], [2, 0]), (["A", "x", "y"], [1, 0, 0]), (["A"], [-1])):
        with pytest.raises(InputError):
            Tree.from_preorder(labels, arities)


# --- Penn bracketed -----------------------------------------------------------

def test_nameless_outer_bracket_and_parentheses_in_words():
    assert parse_bracketed("( (S (NP x)) )") == parse_bracketed("(S (NP x))")
    t = Tree("NP", [Tree("-LRB-", ["("]), Tree("NN", ["x"])])
    assert str(t) == "(NP (-LRB- -LRB-) (NN x))"  # written the Penn Treebank way


@pytest.mark.parametrize("text, line, reason", [
    ("(S (NP x)", 1, "not closed"),
    ("(S (NP x)))", 1, "unbalanced"),
    ("(S () x)", 1, "empty label"),
    ("(S ((NP x)))", 1, "empty label"),
    ("(S x) (S y)", 1, "more than one tree"),
    ("S x", 1, "outside brackets"),
    ("(S x)\n)", 2, "unbalanced"),
    ("( (S x) (S y) )", 1, "exactly one tree"),
])
def test_parse_bracketed_errors(text, line, reason):
    with pytest.raises(InputError) as err:
        parse_bracketed(text)
    assert err.value.line == line and reason in str(err.value)


def test_read_bracketed_one_tree_per_line(tmp_path):
    path = tmp_path / "trees.txt"
    path.write_text(f"{CAT}\n\n(NP (DT a) (NN dog))\n()\n", encoding="utf-8")
    trees = read_bracketed(path)
    assert trees == [parse_bracketed(CAT), EMPTY_TREE, parse_bracketed("(NP (DT a) (NN dog))"),
                     EMPTY_TREE]


@pytest.mark.parametrize("lines, bad_line, reason", [
    ([CAT, "(S (NP (DT the) (NN cat)) (VP (VBD sat))", CAT], 2, "not closed"),
    ([CAT, CAT, "(S (NP x)))"], 3, "unbalanced"),
    ([CAT, "(NP () x)"], 2, "empty label"),
    (["(S x) (S y)"], 1, "more than one tree"),
    ([CAT, "just words"], 2, "outside brackets"),
])
def test_read_bracketed_errors_name_file_and_line(tmp_path, lines, bad_line, reason):
    path = tmp_path / "bad.mrg"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_bracketed(path)
    assert err.value.path == str(path) and err.value.line == bad_line
    assert str(err.value).startswith(f"{path}:{bad_line}: ") and reason in str(err.value)


def test_read_bracketed_multiline(tmp_path):
    path = tmp_path / "multi.mrg"
    path.write_text("( (S\n    (NP (DT the) (NN cat))\n    (VP (VBD sat))))\n\n"
                    "(NP (DT a)\n (NN dog))\n", encoding="utf-8")
    assert read_bracketed(path, multiline=True) == [parse_bracketed(CAT),
                                                    parse_bracketed("(NP (DT a) (NN dog))")]
    path.write_text(f"{CAT}\n(S\n  (NP (DT a)\n  (NN dog))\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_bracketed(path, multiline=True)
    assert err.value.line == 2 and "not closed" in str(err.value)  # where the tree starts
    path.write_text(f"{CAT}\n\n(S x))\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_bracketed(path, multiline=True)
    assert err.value.line == 3


# --- dependencies ---------------------------------------------------------------

def test_from_dependencies_shape():
    # det(cat, the), nsubj(sat, cat), root(sat)
    t = from_dependencies(["the", "cat", "sat"], [2, 3, 0], ["det", "nsubj", "root"],
                          ["DT", "NN", "VBD"])
    assert str(t) == "(root (nsubj (det (DT the)) (NN cat)) (VBD sat))"
    no_pos = from_dependencies(["the", "cat", "sat"], [2, 3, 0], ["det", "nsubj", "root"])
    assert str(no_pos) == "(root (nsubj (det the) cat) sat)"
    # dependents on both sides, in token order: "big cat sat down"
    t = from_dependencies(["big", "cat", "sat", "down"], [2, 3, 0, 3],
                          ["amod", "nsubj", "root", "advmod"], ["JJ", "NN", "VBD", "RB"])
    assert str(t) == "(root (nsubj (amod (JJ big)) (NN cat)) (VBD sat) (advmod (RB down)))"
    two_roots = from_dependencies(["a", "b"], [0, 0], ["root", "root"])
    assert str(two_roots) == "(ROOT (root a) (root b))"
    assert from_dependencies([], [], []) == EMPTY_TREE


def test_from_dependencies_errors():
    with pytest.raises(InputError, match="cycle"):
        from_dependencies(["a", "b", "c"], [0, 3, 2], ["root", "x", "y"])
    with pytest.raises(InputError, match="cycle"):
        from_dependencies(["a", "b"], [2, 1], ["x", "y"])
    with pytest.raises(InputError, match="head 5"):
        from_dependencies(["a", "b"], [0, 5], ["root", "x"])
    with pytest.raises(InputError, match="same length"):
        from_dependencies(["a"], [0, 1], ["root"])


CONLLU = """# sent_id = 1
# text = The cat sat.
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = 2
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t3:conj\t_
"""


def test_read_conllu(tmp_path):
    path = tmp_path / "parsed.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    first, second = read_conllu(path)
    assert str(first) == "(root (nsubj (det (DET The)) (NOUN cat)) (VERB sat) (punct (PUNCT .)))"
    assert str(second) == "(root (aux (AUX do)) (advmod (PART n't)) (VERB go))"
    first_xpos = read_conllu(path, pos="xpos")[0]
    assert first_xpos.labels[3] == "DT"
    assert read_conllu(path, pos=None)[0].leaves() == ["The", "cat", "sat", "."]


@pytest.mark.parametrize("old, new, line, reason", [
    ("2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_", "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj", 4, "10 tab"),
    ("2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_", "2\tcat\tcat\tNOUN\tNN\t_\tx\tnsubj\t_\t_", 4, "integer"),
    ("2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_", "2\tcat\tcat\tNOUN\tNN\t_\t9\tnsubj\t_\t_", 4, "head 9"),
    ("3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_", "3\tgo\tgo\tVERB\tVB\t_\t2\troot\t_\t_", 11, "cycle"),
    ("2\tn't\tnot", "4\tn't\tnot", 11, "token id"),
])
def test_read_conllu_errors_name_file_and_line(tmp_path, old, new, line, reason):
    path = tmp_path / "bad.conllu"
    path.write_text(CONLLU.replace(old, new), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_conllu(path)
    assert err.value.path == str(path) and reason in str(err.value)
    if reason != "cycle":
        assert err.value.line == line
    else:  # the line of a token on the cycle
        assert err.value.line in (9, 10, 11)


# --- shallow parses ----------------------------------------------------------------

def test_from_chunks():
    t = from_chunks(["the", "cat", "sat", "on", "the", "mat", "."],
                    ["DT", "NN", "VBD", "IN", "DT", "NN", "."],
                    ["B-NP", "I-NP", "B-VP", "B-PP", "B-NP", "I-NP", "O"])
    assert str(t) == "(S (NP (DT the) (NN cat)) (VP (VBD sat)) (PP (IN on)) (NP (DT the) (NN mat)) (. .))"
    # B-NP B-NP: two chunks; I-VP after an NP opens a VP (as conlleval)
    t = from_chunks(["a", "b", "c"], ["X", "Y", "Z"], ["B-NP", "B-NP", "I-VP"], root="SENT")
    assert str(t) == "(SENT (NP (X a)) (NP (Y b)) (VP (Z c)))"
    assert from_chunks([], [], []) == EMPTY_TREE
    with pytest.raises(InputError, match="not B-X"):
        from_chunks(["a"], ["X"], ["E-NP"])
    with pytest.raises(InputError, match="same length"):
        from_chunks(["a"], ["X"], [])
    with pytest.raises(InputError, match="non-empty"):
        from_chunks([""], ["X"], ["O"])


# --- variants ------------------------------------------------------------------------

def test_variants():
    t = parse_bracketed(CAT)
    expected = {
        "nolex": "(S (NP DT NN) (VP VBD))",
        "lex1": CAT,
        "lex1.1": "(S (NP (DT NP/the) (NN NP/cat)) (VP (VBD VP/sat)))",
        "lex2": "(* S (* NP (* DT the) (* NN cat)) (* VP (* VBD sat)))",
        "lex2.1": "(* S (* NP (* DT NP/the) (* NN NP/cat)) (* VP (* VBD VP/sat)))",
    }
    assert set(expected) == set(VARIANTS)
    for name, text in expected.items():
        assert str(variant(t, name)) == text
        assert str(variant(t, name.upper())) == text
        assert variant(EMPTY_TREE, name) == EMPTY_TREE
    # a leaf directly under the root takes the root's label
    assert str(variant(parse_bracketed("(S a (B b))"), "lex1.1")) == "(S S/a (B S/b))"
    assert variant(Tree("cat"), "nolex") == EMPTY_TREE
    with pytest.raises(InputError, match="unknown tree variant"):
        variant(t, "lex3")


# --- long sentences --------------------------------------------------------------------

def test_thousand_token_trees_need_no_recursion():
    limit = sys.getrecursionlimit()
    n = 1000
    words = [f"w{k % 50}" for k in range(n)]
    shallow = from_chunks(words, ["NN"] * n, ["B-NP" if k % 3 == 0 else "I-NP" for k in range(n)])
    # a chain: every token headed by the next one, 1,000 levels deep
    chain = from_dependencies(words, list(range(2, n + 1)) + [0], ["dep"] * (n - 1) + ["root"],
                              ["NN"] * n)
    assert chain.height() > limit // 2
    for t in (shallow, chain):
        text = str(t)
        assert parse_bracketed(text) == t
        assert len(t.index.postorder) == len(t)
        for name in VARIANTS:
            tree = variant(t, name)
            assert tree.index.height[0] >= 0 and _Forest([tree]).height.max() == tree.index.height[0]
        assert t.subtree(1) == t.children[0]
