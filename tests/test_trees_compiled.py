"""The compiled tree builders (``_trees.c``) against the Python code of ``from_dependencies`` and ``from_chunks``:
the same trees on WMT12 de-en's parses (1,000 texts), and on irregular input the same errors (the C code
declines, the Python code raises)."""

import numpy as np
import pytest

from combo.analysis import trees
from combo.analysis.trees import from_chunks, from_dependencies
from combo.errors import InputError

pytestmark = pytest.mark.skipif(trees._compiled is None, reason="combo.analysis._trees is not built")

SEGMENTS = 200


@pytest.fixture(scope="module")
def parses(wmt12_de_en_parses):
    return wmt12_de_en_parses(SEGMENTS, 4)


def _both(monkeypatch, build):
    """``build()`` with the compiled builders, then with the Python code alone: (result or error) each."""
    def outcome():
        try:
            tree = build()
            return tree.labels, tree.arities, [type(a) for a in tree.arities]
        except Exception as err:  # noqa: BLE001 - the error itself is what is compared
            return type(err), str(err)

    compiled = outcome()
    with monkeypatch.context() as m:
        m.setattr(trees, "_compiled", None)
        python = outcome()
    return compiled, python


def test_the_compiled_builders_give_the_python_trees_on_wmt12(monkeypatch, parses):
    deps, shallow = parses
    assert len(deps) > 900
    built = {"C": [], "Python": []}
    for engine in ("C", "Python"):
        with monkeypatch.context() as m:
            if engine == "Python":
                m.setattr(trees, "_compiled", None)
            for d in deps:
                built[engine].append(from_dependencies([w.lower() for w in d.words], d.heads, d.relations, d.tags))
                built[engine].append(from_dependencies(d.words, d.heads, d.relations))  # no POS nodes
            built[engine] += [from_chunks(p.words, p.pos, p.chunks) for p in shallow]
            built[engine] += [from_chunks(p.words, p.pos, p.chunks, root="ROOT") for p in shallow[::7]]
    for tree, expected in zip(built["C"], built["Python"]):
        assert tree.labels == expected.labels and tree.arities == expected.arities
        assert all(type(a) is int for a in tree.arities) and hash(tree) == hash(expected)
    assert len(built["C"]) == len(built["Python"]) > 3000
    assert sum(len(t) for t in built["C"]) > 100_000
    multi_root = [d for d in deps if sum(h == 0 for h in d.heads) > 1]
    assert multi_root and from_dependencies(multi_root[0].words, multi_root[0].heads,
                                            multi_root[0].relations).label == "ROOT"


DEPENDENCIES = {
    "a tree": (["the", "cat", "sat"], [2, 3, 0], ["det", "nsubj", "root"], ["DT", "NN", "VBD"]),
    "two roots": (["a", "b", "c"], [0, 1, 0], ["root", "dep", "root"], None),
    "numpy heads": (["a", "b"], list(np.array([0, 1])), ["root", "dep"], ["X", "Y"]),
    "a bool head": (["a", "b"], [0, True], ["root", "dep"], None),
    "a head out of range": (["a", "b"], [0, 3], ["root", "dep"], None),
    "a negative head": (["a", "b"], [0, -1], ["root", "dep"], None),
    "a token its own head": (["a", "b"], [0, 2], ["root", "dep"], None),
    "a cycle": (["a", "b", "c"], [0, 3, 2], ["root", "dep", "dep"], None),
    "no root": (["a", "b"], [2, 1], ["dep", "dep"], None),
    "a head that is no number": (["a", "b"], [0, "x"], ["root", "dep"], None),
    "an empty relation": (["a", "b"], [0, 1], ["root", ""], None),
    "a word that is no string": (["a", 7], [0, 1], ["root", "dep"], None),
    "an empty POS": (["a", "b"], [0, 1], ["root", "dep"], ["X", ""]),
    "fewer heads": (["a", "b"], [0], ["root", "dep"], None),
    "fewer tags": (["a", "b"], [0, 1], ["root", "dep"], ["X"]),
    "a huge head": (["a"], [2 ** 70], ["root"], None),
}


@pytest.mark.parametrize("case", sorted(DEPENDENCIES))
def test_dependency_trees_of_irregular_input_are_the_python_codes(monkeypatch, case):
    words, heads, relations, pos = DEPENDENCIES[case]
    compiled, python = _both(monkeypatch, lambda: from_dependencies(words, heads, relations, pos))
    assert compiled == python
    refused = isinstance(compiled[0], type)  # an error's class, else the tree's labels
    assert refused == (case not in ("a tree", "two roots", "numpy heads", "a bool head"))


CHUNKS = {
    "chunks": (["the", "cat", "sat", "."], ["DT", "NN", "VBD", "."], ["B-NP", "I-NP", "B-VP", "O"]),
    "I opens a chunk": (["a", "b", "c"], ["X", "Y", "Z"], ["I-NP", "I-VP", "I-VP"]),
    "B after B": (["a", "b"], ["X", "Y"], ["B-NP", "B-NP"]),
    "a type with a dash": (["a", "b"], ["X", "Y"], ["B-NP-X", "I-NP-X"]),
    "a tag without a type": (["a"], ["X"], ["B-"]),
    "a tag without a prefix": (["a"], ["X"], ["-NP"]),
    "a long prefix": (["a"], ["X"], ["BB-NP"]),
    "another prefix": (["a"], ["X"], ["E-NP"]),
    "one letter": (["a"], ["X"], ["B"]),
    "a tag that is no string": (["a"], ["X"], [None]),
    "an empty word": ([""], ["X"], ["O"]),
    "an empty POS": (["a"], [""], ["O"]),
    "fewer tags": (["a", "b"], ["X", "Y"], ["O"]),
    "non-ASCII": (["über", "ß"], ["NN", "NN"], ["B-NPé", "I-NPé"]),
}


@pytest.mark.parametrize("case", sorted(CHUNKS))
def test_chunk_trees_of_irregular_input_are_the_python_codes(monkeypatch, case):
    words, pos, chunks = CHUNKS[case]
    compiled, python = _both(monkeypatch, lambda: from_chunks(words, pos, chunks))
    assert compiled == python
    assert _both(monkeypatch, lambda: from_chunks(words, pos, chunks, root=""))[0][0] is InputError


def test_the_compiled_builders_decline_what_they_do_not_build():
    c = trees._compiled
    assert c.dependency_preorder([], [], [], None) is None
    assert c.dependency_preorder(["a"], [1], ["root"], None) is None  # its own head
    assert c.dependency_preorder(iter(["a"]), [0], ["root"], None) is None  # not a sequence
    assert c.chunk_preorder(["a"], ["X"], ["O"], "") is None
    assert c.chunk_preorder(["a"], ["X"], ["O"], "S") == (("S", "X", "a"), (1, 1, 0))
