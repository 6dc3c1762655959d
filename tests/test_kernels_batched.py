"""The batched PTK, SST and ST against their one-pair references, to the bit, and the tree builders against their
former code.

Real trees: WMT12 de-en sentences (the reference and two systems) parsed by the ``dependencies`` layer
(spaCy, built with ``from_dependencies``) and the ``shallow`` layer (built with ``from_chunks``).
"""

import random
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

from combo.analysis import batch_kernels
from combo.analysis.batch_kernels import _partial_tree_batch, _subset_tree_batch
from combo.analysis.kernel_forests import _Forest, _PtkForest
from combo.analysis.kernels import TreeKernel, normalise
from combo.analysis.pair_kernels import _partial_tree_pair, _subset_tree_pair
from combo.analysis.tree_type import _check_label
from combo.analysis.trees import (EMPTY_TREE, VARIANTS, Tree, TreeIds, TreeIndex, _reaches_root,
                                  from_chunks, from_dependencies, parse_bracketed, tree_ids, variant)
from combo.errors import InputError

SEGMENTS = 100


@pytest.fixture(scope="module")
def parses(wmt12_de_en_parses):
    return wmt12_de_en_parses(SEGMENTS, 2)


@pytest.fixture(scope="module")
def real_trees(parses):
    deps, shallow = parses
    trees = [from_dependencies(d.words, d.heads, d.relations, d.tags) for d in deps]
    trees += [from_chunks(p.words, p.pos, p.chunks) for p in shallow]
    return trees


# --- the batched PTK ---------------------------------------------------------------------------------------

def tricky_trees() -> List[Tree]:
    """Empty and one-node trees, words equal to labels, unary chains, wide nodes, repeated labels."""
    rng = random.Random(5)

    def grow(depth: int) -> Tree:
        if depth >= 3 or (depth and rng.random() < 0.3):
            return rng.choice("ABxy")
        return Tree(rng.choice("ABC"), [grow(depth + 1) for _ in range(rng.randint(1, 3))])

    trees = [EMPTY_TREE, Tree("A"), Tree("x"), parse_bracketed("(A x)"), parse_bracketed("(A (A x))"),
             parse_bracketed("(A A A)"), parse_bracketed("(A (A (A (A x))))"), parse_bracketed("(A (B x) (B x) (B y))")]
    trees += [grow(0) for _ in range(60)]
    trees += [Tree(rng.choice("AB"), [grow(2) for _ in range(rng.randint(2, 40))]) for _ in range(8)]
    return trees


def assert_batch_is_reference(trees: List[Tree], left: np.ndarray, right: np.ndarray, lam: float, mu: float,
                              step: int = 16384) -> None:
    forest = _PtkForest(trees)
    got = np.concatenate([_partial_tree_batch(forest, left[k:k + step], right[k:k + step], lam, mu)
                          for k in range(0, len(left), step)] or [np.zeros(0)])
    expected = np.array([_partial_tree_pair(trees[i].index, trees[j].index, lam, mu) for i, j in zip(left, right)])
    different = np.flatnonzero(got != expected)
    assert not len(different), (f"{len(different)} of {len(left)} pairs differ (lambda {lam}, mu {mu}), "
                                f"max |difference| {np.max(np.abs(got - expected)):.3g}")


def hyp_ref_pairs(n: int, rng: random.Random) -> Tuple[np.ndarray, np.ndarray]:
    """Self-pairs, both orders of random pairs, neighbours (similar sentences)."""
    left = list(range(n)) + [rng.randrange(n) for _ in range(3 * n)] + list(range(n - 1))
    right = list(range(n)) + [rng.randrange(n) for _ in range(3 * n)] + list(range(1, n))
    left, right = left + right[n:], right + left[n:]
    return np.array(left), np.array(right)


@pytest.mark.parametrize("lam, mu", [(0.4, 0.4), (1.0, 1.0), (0.1, 0.9), (0.77, 0.013)])
def test_batched_ptk_equals_reference_on_real_trees(real_trees, lam, mu):
    with tree_ids(fresh=True):
        trees = real_trees + tricky_trees()
        left, right = hyp_ref_pairs(len(trees), random.Random(3))
        assert_batch_is_reference(trees, left, right, lam, mu)


def test_batched_ptk_equals_reference_on_every_tree_shape(real_trees, parses):
    """The five representations, dependency trees without POS nodes, identical trees under two ids."""
    deps, _ = parses
    with tree_ids(fresh=True):
        some = real_trees[::14]
        trees = [variant(t, name) for t in some for name in VARIANTS]
        trees += [from_dependencies(d.words, d.heads, d.relations) for d in deps[::3]]
        trees += tricky_trees() + some
        left, right = hyp_ref_pairs(len(trees), random.Random(4))
        assert_batch_is_reference(trees, left, right, 0.4, 0.4)


def test_batched_ptk_does_not_depend_on_how_it_is_cut(real_trees, monkeypatch):
    """Small parts, other table paddings, small batches: the same values to the bit."""
    with tree_ids(fresh=True):
        trees = real_trees[::20] + tricky_trees()
        left, right = hyp_ref_pairs(len(trees), random.Random(6))
        monkeypatch.setattr(batch_kernels, "_PTK_CELLS", 2048)
        monkeypatch.setattr(batch_kernels, "_STEP_COST", 10 ** 6)  # pad every table to its level's largest
        assert_batch_is_reference(trees, left, right, 0.4, 0.4, step=333)
        monkeypatch.setattr(batch_kernels, "_STEP_COST", 0)  # every shape its own table
        assert_batch_is_reference(trees, left, right, 0.6, 0.3, step=211)


@pytest.mark.parametrize("lam", [0.4, 1.0, 0.013])
def test_batched_sst_and_st_equal_reference_on_every_tree_shape(real_trees, lam):
    """The forest numbers productions itself, from label ids and child counts in numpy: the values are the
    one-pair code's (which reads the trees' own production ids; it adds a pair's Deltas in another order, so
    to 1e-12), and the same to the bit however the pairs are cut in batches."""
    with tree_ids(fresh=True):
        trees = [variant(t, name) for t in real_trees[::7] for name in VARIANTS]
        trees += tricky_trees() + real_trees[::7]
        left, right = hyp_ref_pairs(len(trees), random.Random(9))
        forest = _Forest(trees)
        for sigma in (1.0, 0.0):  # SST, ST
            expected = np.array([_subset_tree_pair(trees[i].index, trees[j].index, lam, sigma)
                                 for i, j in zip(left, right)])
            whole = _subset_tree_batch(forest, left, right, lam, sigma)
            np.testing.assert_allclose(whole, expected, rtol=1e-12, atol=0)
            cut = np.concatenate([_subset_tree_batch(forest, left[k:k + 97], right[k:k + 97], lam, sigma)
                                  for k in range(0, len(left), 97)])
            assert np.array_equal(cut, whole)


def test_tree_kernel_pairs_use_the_batch(real_trees, parses):
    deps, _ = parses
    with tree_ids(fresh=True):
        trees = real_trees[:len(deps)] + [EMPTY_TREE, Tree("A")]
        rng = random.Random(8)
        left = [rng.choice(trees) for _ in range(600)] + trees
        right = [rng.choice(trees) for _ in range(600)] + trees
        for lam, mu in ((0.4, 0.4), (0.9, 0.2)):
            kernel = TreeKernel("ptk", lam=lam, mu=mu)
            got = kernel.pairs(left, right)
            expected = []
            for a, b in zip(left, right):
                k_aa = _partial_tree_pair(a.index, a.index, lam, mu)
                k_bb = _partial_tree_pair(b.index, b.index, lam, mu)
                if a == b:
                    expected.append(1.0 if k_aa > 0 else 0.0)
                    continue
                # pairs() computes K once per pair of distinct trees, the one of lower content first
                first, second = (a, b) if (a.labels, a.arities) < (b.labels, b.arities) else (b, a)
                expected.append(normalise(_partial_tree_pair(first.index, second.index, lam, mu), k_aa, k_bb))
            assert np.array_equal(got, np.array(expected))


# --- the builders against their former code ----------------------------------------------------------------

def reference_from_dependencies(words, heads, relations, pos=None, path=None, lines=None) -> Tree:
    """``from_dependencies`` as it was written before it was made faster."""
    n = len(words)
    if not (len(heads) == len(relations) == n) or (pos is not None and len(pos) != n):
        raise InputError("words, heads, relations (and pos) must have the same length", path)

    def fail(message: str, token: int) -> InputError:
        line = lines[token] if lines is not None else None
        return InputError(message, path=path, line=line,
                          fix="each head must be 0 (root) or the id of another token, without cycles")

    if n == 0:
        return EMPTY_TREE
    dependents: List[List[int]] = [[] for _ in range(n + 1)]
    for t in range(n):
        h = int(heads[t])
        if h < 0 or h > n or h == t + 1:
            raise fail(f"token {t + 1} ({words[t]!r}) has head {h}, outside 0..{n} or itself", t)
        dependents[h].append(t + 1)
    roots = dependents[0]
    if not roots:
        raise fail("no token has head 0: the heads form a cycle", 0)
    labels: List[str] = []
    arities: List[int] = []
    stack: List[Tuple[str, int]] = []
    if len(roots) > 1:
        labels.append("ROOT")
        arities.append(len(roots))
    stack.extend(("tok", r) for r in reversed(roots))
    visited = 0
    while stack:
        kind, t = stack.pop()
        if kind == "word":
            labels.append(_check_label(words[t - 1]))
            arities.append(0)
            continue
        if kind == "pos":
            labels.append(_check_label(pos[t - 1]))
            arities.append(1)
            stack.append(("word", t))
            continue
        visited += 1
        deps = dependents[t]
        labels.append(_check_label(relations[t - 1]))
        arities.append(len(deps) + 1)
        items: List[Tuple[str, int]] = [("tok", d) for d in deps if d < t]
        items.append(("pos", t) if pos is not None else ("word", t))
        items.extend(("tok", d) for d in deps if d > t)
        stack.extend(reversed(items))
    if visited != n:
        unreached = next(t for t in range(n) if not _reaches_root(heads, t))
        raise fail(f"token {unreached + 1} ({words[unreached]!r}) is on a head cycle", unreached)
    return Tree.from_preorder(labels, arities, validate=False)


def reference_index(labels, arities, numbering: TreeIds) -> Dict[str, object]:
    """What ``TreeIndex.__init__`` derived before it was made faster."""
    n = len(labels)
    ids = [numbering.label_id(s) for s in labels]
    children: List[Tuple[int, ...]] = [()] * n
    parent = [-1] * n
    end = list(range(1, n + 1))
    height = [0] * n
    prods = [-1] * n
    for i in range(n - 1, -1, -1):
        arity = arities[i]
        if not arity:
            continue
        kids = []
        c = i + 1
        h = 0
        for _ in range(arity):
            kids.append(c)
            parent[c] = i
            if height[c] > h:
                h = height[c]
            c = end[c]
        end[i] = c
        height[i] = h + 1
        children[i] = kids = tuple(kids)
        key = (ids[i], tuple([2 * ids[k] + (not arities[k]) for k in kids]))
        prods[i] = numbering.intern(numbering.productions, key)
    pre: Dict[int, int] = {}
    phrasal: Dict[int, List[int]] = {}
    for i in range(n):
        p = prods[i]
        if p < 0:
            continue
        if height[i] == 1:
            pre[p] = pre.get(p, 0) + 1
        else:
            phrasal.setdefault(p, []).append(i)
    return {"n": n, "label_ids": ids, "children": children, "parent": parent, "end": end, "height": height,
            "production_ids": prods, "preterminal_counts": list(pre.items()),
            "phrasal_by_production": list(phrasal.items())}


def index_fields(index: TreeIndex) -> Dict[str, object]:
    return {"n": index.n, "label_ids": index.label_ids, "children": index.children, "parent": index.parent,
            "end": index.end, "height": index.height, "production_ids": index.production_ids,
            "preterminal_counts": list(index.preterminal_counts.items()),
            "phrasal_by_production": list(index.phrasal_by_production.items())}


def test_dependency_trees_equal_the_former_builder(parses):
    deps, _ = parses
    for d in deps:
        for tags in (d.tags, None):
            tree = from_dependencies(d.words, d.heads, d.relations, tags)
            former = reference_from_dependencies(d.words, d.heads, d.relations, tags)
            assert (tree.labels, tree.arities) == (former.labels, former.arities)


@pytest.mark.parametrize("words, heads, relations, pos", [
    (["a", "b"], [2, 1], ["x", "y"], None),  # a cycle, no root
    (["a", "b", "c"], [0, 3, 2], ["x", "y", "z"], ["P", "Q", "R"]),  # a cycle beside the root
    (["a", "b", "c"], [0, 3, 2], ["x", "", "z"], None),  # an empty label on the cycle only
    (["a", "b"], [3, 0], ["x", "y"], None),  # a head out of range
    (["a", "b"], [1, 0], ["x", "y"], None),  # its own head
    (["a", ""], [2, 0], ["x", "y"], None),  # an empty word
    (["a", 5], [0, 1], ["x", "y"], ["P", "Q"]),  # a word that is not a string
    (["a", "b"], [0, 1], ["x", "y"], ["P", ""]),  # an empty tag
    (["a", "b", "c"], [0, 0, 2], ["x", "y", "z"], ["P", "Q", "R"]),  # two roots
    (["a", "b"], [0, 1], ["x"], None),  # lengths differ
])
def test_dependency_builder_errors_equal_the_former_builder(words, heads, relations, pos):
    outcomes = []
    for build in (from_dependencies, reference_from_dependencies):
        try:
            tree = build(words, heads, relations, pos, path="t.conllu", lines=[4, 5, 6])
            outcomes.append(("tree", tree.labels, tree.arities))
        except InputError as error:
            outcomes.append(("error", str(error)))
    assert outcomes[0] == outcomes[1]


def test_indexes_equal_the_former_construction(real_trees):
    trees = real_trees + [variant(t, name) for t in real_trees[::7] for name in VARIANTS] + tricky_trees()
    trees += [Tree("S", [Tree("X", ["w"]) for _ in range(5000)])]  # more one-child nodes than are shared
    ours, former = TreeIds(), TreeIds()
    for tree in trees:
        assert index_fields(TreeIndex(tree.labels, tree.arities, ours)) == \
            reference_index(tree.labels, tree.arities, former)
    # the same ids, numbered in the same order
    assert list(ours.labels.items()) == list(former.labels.items())
    assert list(ours.productions.items()) == list(former.productions.items())


def test_index_of_a_truncated_preorder_is_refused():
    tree = Tree.from_preorder(["A", "x"], [3, 0], validate=False)
    with pytest.raises(InputError, match="ends before every node has its children"):
        TreeIndex(tree.labels, tree.arities, TreeIds()).children
    with pytest.raises(InputError, match="ends before every node has its children"):
        _PtkForest([tree])


def test_from_preorder_keeps_int_arities():
    tree = Tree.from_preorder(["A", "x", "y"], [np.int64(2), "0", 0.0])
    assert tree.arities == (2, 0, 0) and all(type(a) is int for a in tree.arities)
