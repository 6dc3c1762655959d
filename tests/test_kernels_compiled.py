"""The compiled tree kernels (``_kernels.c``) against the numpy batch and the one-pair references, to the bit.

Real trees as tests/test_kernels_batched.py builds them: WMT12 de-en sentences (the reference and two systems)
parsed by the ``dependencies`` layer (spaCy, ``from_dependencies``) and the ``shallow`` layer
(``from_chunks``), in every representation.
"""

import random
from typing import List, Tuple

import numpy as np
import pytest

from combo.analysis import kernels
from combo.analysis.kernels import TreeKernel, _compiled
from combo.analysis.pair_kernels import _partial_tree_pair, _subset_tree_pair
from combo.analysis.trees import EMPTY_TREE, VARIANTS, Tree, from_chunks, from_dependencies, parse_bracketed, \
    tree_ids, variant
from combo.errors import InputError, OptionError

pytestmark = [pytest.mark.skipif(_compiled is None, reason="combo.analysis._kernels is not built"),
              # lambda = mu = 1 overflows (inf, then nan) on the widest edge tree, in both engines alike
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]

SEGMENTS = 100
SETTINGS = [(0.4, 0.4), (1.0, 1.0), (0.1, 0.4), (0.77, 0.013)]


@pytest.fixture(scope="module")
def real_trees(wmt12_de_en_parses):
    deps, shallow = wmt12_de_en_parses(SEGMENTS, 2)
    trees = [from_dependencies(d.words, d.heads, d.relations, d.tags) for d in deps]
    trees += [from_chunks(p.words, p.pos, p.chunks) for p in shallow]
    trees += [variant(t, name) for t in trees[::9] for name in VARIANTS]
    trees += [from_dependencies(d.words, d.heads, d.relations) for d in deps[::5]]  # no POS nodes
    return trees


def edge_trees() -> List[Tree]:
    """Empty and one-node trees, identical trees, leaf-only trees, a deep chain, repeated labels and
    productions, wide nodes, words equal to labels."""
    rng = random.Random(11)

    def grow(depth: int) -> Tree:
        if depth >= 4 or (depth and rng.random() < 0.3):
            return rng.choice("ABxy")
        return Tree(rng.choice("ABC"), [grow(depth + 1) for _ in range(rng.randint(1, 3))])

    chain = "x"
    for k in range(300):
        chain = Tree("A" if k % 3 else "B", [chain])
    trees = [EMPTY_TREE, Tree("A"), Tree("x"), Tree("A"), parse_bracketed("(A x)"), parse_bracketed("(A x)"),
             parse_bracketed("(A (A x))"), parse_bracketed("(A A A)"), parse_bracketed("(A x y z)"),
             parse_bracketed("(A (B x) (B x) (B y))"), parse_bracketed("(A (A (B x) (B x)) (A (B x) (B x)))"),
             parse_bracketed("(S (NP (D a) (N cat)) (VP (V sat) (NP (D a) (N cat))))"), chain,
             Tree("S", [chain, chain]), Tree("A", ["A"] * 50), Tree("A", [Tree("A", ["A", "x"])] * 40),
             Tree("S", [Tree("X", ["w"]) for _ in range(1500)] + [Tree("X", ["v", "w"])] * 30)]  # wide, large
    trees += [grow(0) for _ in range(60)]
    trees += [Tree(rng.choice("AB"), [grow(2) for _ in range(rng.randint(2, 40))]) for _ in range(8)]
    return trees


def all_pairs_and_some(n: int, rng: random.Random, extra: int) -> Tuple[np.ndarray, np.ndarray]:
    """Self-pairs, random pairs in both orders, neighbours (similar sentences)."""
    left = list(range(n)) + [rng.randrange(n) for _ in range(extra)] + list(range(n - 1))
    right = list(range(n)) + [rng.randrange(n) for _ in range(extra)] + list(range(1, n))
    return np.array(left + right[n:]), np.array(right + left[n:])


def raw_by_both_engines(kind: str, trees: List[Tree], left: np.ndarray, right: np.ndarray, lam: float,
                        mu: float) -> Tuple[np.ndarray, np.ndarray]:
    compiled = TreeKernel(kind, lam=lam, mu=mu, engine="c")._raw_many(trees, left, right)
    batch = TreeKernel(kind, lam=lam, mu=mu, engine="numpy")._raw_many(trees, left, right)
    return compiled, batch


def assert_same_bits(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    different = np.flatnonzero(got.view(np.int64) != expected.view(np.int64))
    assert not len(different), (f"{what}: {len(different)} of {len(got)} pairs differ, "
                                f"max |difference| {np.max(np.abs(got - expected)):.3g}")


@pytest.mark.parametrize("lam, mu", SETTINGS)
@pytest.mark.parametrize("kind", ["sst", "st", "ptk"])
def test_compiled_equals_numpy_batch_on_real_trees(real_trees, kind, lam, mu):
    with tree_ids(fresh=True):
        trees = real_trees + edge_trees()
        left, right = all_pairs_and_some(len(trees), random.Random(3), 4 * len(trees))
        compiled, batch = raw_by_both_engines(kind, trees, left, right, lam, mu)
        assert np.array_equal(compiled, batch, equal_nan=True)  # lambda = mu = 1 overflows on the widest tree
        assert_same_bits(compiled, batch, f"{kind} lambda {lam} mu {mu}")


@pytest.mark.parametrize("kind", ["sst", "st", "ptk"])
def test_compiled_pairs_equal_numpy_pairs(real_trees, kind):
    """Normalised values of TreeKernel.pairs (self-kernels, identical trees, empty trees) by both engines."""
    with tree_ids(fresh=True):
        trees = real_trees[:300] + edge_trees()
        rng = random.Random(8)
        left = [rng.choice(trees) for _ in range(1500)] + trees
        right = [rng.choice(trees) for _ in range(1500)] + trees[::-1]
        for lam, mu in SETTINGS[:3]:
            with tree_ids(fresh=True):  # each engine computes its own self-kernels (they are cached per numbering)
                got = TreeKernel(kind, lam=lam, mu=mu, engine="c").pairs(left, right)
            with tree_ids(fresh=True):
                expected = TreeKernel(kind, lam=lam, mu=mu, engine="numpy").pairs(left, right)
            assert np.array_equal(got, expected)


@pytest.mark.parametrize("kind", ["sst", "st", "ptk"])
def test_compiled_on_edge_cases(kind):
    """Every pair of the edge trees, each setting."""
    with tree_ids(fresh=True):
        trees = edge_trees()
        n = len(trees)
        left, right = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
        for lam, mu in SETTINGS:
            compiled, batch = raw_by_both_engines(kind, trees, left, right, lam, mu)
            assert_same_bits(compiled, batch, f"{kind} lambda {lam} mu {mu}")
        empty = [k for k, t in enumerate(trees) if not t.labels]
        assert not compiled.reshape(n, n)[empty].any()


@pytest.mark.parametrize("lam, mu", SETTINGS)
def test_compiled_ptk_equals_one_pair_reference(real_trees, lam, mu):
    with tree_ids(fresh=True):
        trees = real_trees[::4] + edge_trees()
        left, right = all_pairs_and_some(len(trees), random.Random(5), len(trees))
        compiled = TreeKernel("ptk", lam=lam, mu=mu, engine="c")._raw_many(trees, left, right)
        expected = np.array([_partial_tree_pair(trees[i].index, trees[j].index, lam, mu)
                             for i, j in zip(left, right)])
        assert_same_bits(compiled, expected, f"ptk lambda {lam} mu {mu}")


@pytest.mark.parametrize("lam", [0.4, 1.0, 0.1])
def test_compiled_sst_and_st_equal_one_pair_reference(real_trees, lam):
    """The one-pair SST/ST multiplies lambda first and sums Deltas in another order: equal to 1e-12 (the
    batch's own tolerance against it, tests/test_kernels_batched.py); to the bit where no rounding occurs."""
    with tree_ids(fresh=True):
        trees = real_trees[::4] + edge_trees()
        left, right = all_pairs_and_some(len(trees), random.Random(7), len(trees))
        for kind, sigma in (("sst", 1.0), ("st", 0.0)):
            compiled = TreeKernel(kind, lam=lam, engine="c")._raw_many(trees, left, right)
            expected = np.array([_subset_tree_pair(trees[i].index, trees[j].index, lam, sigma)
                                 for i, j in zip(left, right)])
            np.testing.assert_allclose(compiled, expected, rtol=1e-12, atol=0)
            if lam == 1.0:  # integer counts: exact
                assert np.array_equal(compiled, expected)


@pytest.mark.parametrize("kind", ["sst", "st", "ptk"])
def test_pairs_over_the_cell_limit_go_to_numpy(real_trees, kind, monkeypatch):
    with tree_ids(fresh=True):
        trees = real_trees[::10] + edge_trees()
        left, right = all_pairs_and_some(len(trees), random.Random(9), len(trees))
        whole = TreeKernel(kind, engine="c")._raw_many(trees, left, right)
        monkeypatch.setattr(kernels, "_C_MAX_CELLS", 20)
        name = "_partial_tree_batch" if kind == "ptk" else "_subset_tree_batch"
        batch, sent = getattr(kernels, name), []
        monkeypatch.setattr(kernels, name, lambda f, l, r, *a: sent.append(len(l)) or batch(f, l, r, *a))
        cut = TreeKernel(kind, engine="c")._raw_many(trees, left, right)
        assert len(sent) > 10  # pairs over the limit were computed by the numpy batch
        assert_same_bits(cut, whole, f"{kind} with small tables")


def test_engine_option():
    assert TreeKernel("ptk", engine="c").signature == TreeKernel("ptk", engine="numpy").signature
    assert TreeKernel("sst").engine == "auto"
    with pytest.raises(OptionError, match="engine"):
        TreeKernel("sst", engine="fortran")


def test_engine_c_without_the_module(monkeypatch):
    monkeypatch.setattr(kernels, "_compiled", None)
    with pytest.raises(ImportError, match="install gcc or clang and reinstall combo, or use engine='numpy'"):
        TreeKernel("sst", engine="c")
    kernel = TreeKernel("sst")  # auto: numpy
    trees = [parse_bracketed("(A (B x) (C y))"), parse_bracketed("(A (B x) (C z))"), Tree("A")] * 2
    np.testing.assert_array_equal(kernel.pairs(trees, trees[::-1]),
                                  TreeKernel("sst", engine="numpy").pairs(trees, trees[::-1]))


def test_compiled_refuses_a_truncated_preorder():
    tree = Tree.from_preorder(["A", "x"], [3, 0], validate=False)
    good = parse_bracketed("(A x y)")
    for kind in ("sst", "ptk"):
        with pytest.raises(InputError, match="ends before every node has its children"):
            TreeKernel(kind, engine="c")._raw_many([good, tree], np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]))
