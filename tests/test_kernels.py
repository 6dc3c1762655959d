"""Tree kernels (SST, ST, PTK) and the tree-edit-distance similarity."""

import itertools
import math
import random
import sys

import numpy as np
import pytest
import zss

from combo.errors import OptionError
from combo.analysis.kernels import (
    TreeKernel, normalise, ptk, sst, sst_naive, st, st_naive, ted_similarities, ted_similarity,
    tree_edit_distance,
)
from combo.analysis.trees import EMPTY_TREE, Tree, from_chunks, from_dependencies, \
    parse_bracketed, variant

A = parse_bracketed("(NP (D a) (N cat))")
B = parse_bracketed("(NP (D a) (N dog))")


# --- hand-computed cases ---------------------------------------------------------

def test_sst_hand_computed():
    # Internal nodes and productions. A: NP -> D N, D -> a, N -> cat.
    # B: NP -> D N, D -> a, N -> dog. Equal productions: (NP, NP) and (D, D).
    # Delta(D, D) = lambda (pre-terminal); (N, N): productions differ, 0.
    # Delta(NP, NP) = lambda (1 + Delta(D, D)) (1 + Delta(N, N)) = lambda (1 + lambda).
    # K(A, B) = lambda + lambda (1 + lambda) = 2 lambda + lambda^2.
    # lambda = 1: 3 common fragments, [D a], [NP D N], [NP (D a) N].
    assert sst(A, B, 1.0) == 3.0
    assert sst(A, B, 0.5) == pytest.approx(1.25)
    # K(A, A): Delta(D, D) = Delta(N, N) = lambda, Delta(NP, NP) = lambda (1 + lambda)^2;
    # lambda = 1: 6 fragments, [D a], [N cat], [NP D N], [NP (D a) N], [NP D (N cat)], A.
    assert sst(A, A, 1.0) == 6.0
    assert sst(A, A, 0.5) == pytest.approx(0.5 + 0.5 + 0.5 * 1.5 ** 2)
    kernel = TreeKernel("sst", lam=1.0)
    assert kernel(A, B) == pytest.approx(3 / 6)
    assert TreeKernel("sst", lam=0.5)(A, B) == pytest.approx(1.25 / 2.125)


def test_st_hand_computed():
    # Subtrees (a node with all its descendants). A: [D a], [N cat], A itself;
    # B: [D a], [N dog], B itself. Common: [D a] only.
    # sigma = 0: Delta(NP, NP) = lambda (0 + Delta(D, D)) (0 + 0) = 0, so K(A, B) = lambda,
    # K(A, A) = lambda + lambda + lambda^3 (the whole tree has 3 productions).
    assert st(A, B, 1.0) == 1.0 and st(A, A, 1.0) == 3.0
    assert st(A, B, 0.5) == 0.5 and st(A, A, 0.5) == pytest.approx(1.125)
    assert TreeKernel("st", lam=1.0)(A, B) == pytest.approx(1 / 3)


def test_ptk_hand_computed():
    # T1 = (A x y), T2 = (A x z y); node pairs with equal labels: (A, A), (x, x), (y, y).
    # Leaves: Delta = mu lambda^2 each. Delta(A, A) = mu (lambda^2 + sum over pairs of
    # equal-length child subsequences of lambda^(gaps1 + gaps2) prod Delta(children)):
    #   [x]~[x]: mu lambda^2;  [y]~[y]: mu lambda^2;
    #   [x y]~[x _ y]: gap 0 in T1, 1 in T2: lambda^1 (mu lambda^2)^2.
    # lambda = mu = 1/2: Delta(A, A) = 0.5 (0.25 + 0.125 + 0.125 + 0.5 * 0.015625)
    #   = 0.25390625, K = 0.25390625 + 2 * 0.125 = 0.50390625.
    t1, t2 = parse_bracketed("(A x y)"), parse_bracketed("(A x z y)")
    assert ptk(t1, t2, 0.5, 0.5) == pytest.approx(0.50390625, abs=1e-15)
    # Partial productions count: (S (NP x) (VP y)) against (S (NP x)):
    # Delta(x, x) = Delta(NP, NP)'s child: Delta(NP, NP) = mu (lambda^2 + mu lambda^2);
    # Delta(S, S) = mu (lambda^2 + Delta(NP, NP)); K = Delta(S,S) + Delta(NP,NP) + Delta(x,x).
    lam, mu = 0.5, 0.5
    d_np = mu * (lam ** 2 + mu * lam ** 2)
    expected = mu * (lam ** 2 + d_np) + d_np + mu * lam ** 2
    assert ptk(parse_bracketed("(S (NP x) (VP y))"), parse_bracketed("(S (NP x))"), lam, mu) == \
        pytest.approx(expected)
    # SST gives 0 there for the S nodes (S -> NP VP against S -> NP) but counts [NP x]
    assert sst(parse_bracketed("(S (NP x) (VP y))"), parse_bracketed("(S (NP x))"), 1.0) == 1.0


# --- references ----------------------------------------------------------------------

def random_tree(rng, depth=0, labels="ABC", words="ABxy"):
    """Small random trees; words may equal labels to mix leaves and internal nodes."""
    if depth >= 3 or (depth and rng.random() < 0.3):
        return rng.choice(words)
    return Tree(rng.choice(labels), [random_tree(rng, depth + 1, labels, words)
                                     for _ in range(rng.randint(1, 3))])


@pytest.fixture(scope="module")
def random_trees():
    rng = random.Random(7)
    return [random_tree(rng) for _ in range(300)]


def ptk_brute_force(a, b, lam, mu):
    """PTK by enumerating every pair of equal-length child subsequences."""
    ia, ib = a.index, b.index

    def delta(i, j):
        if a.labels[i] != b.labels[j]:
            return 0.0
        ca, cb = ia.children[i], ib.children[j]
        total = lam * lam
        for k in range(1, min(len(ca), len(cb)) + 1):
            for pick_a in itertools.combinations(range(len(ca)), k):
                for pick_b in itertools.combinations(range(len(cb)), k):
                    gaps = (pick_a[-1] - pick_a[0] + 1 - k) + (pick_b[-1] - pick_b[0] + 1 - k)
                    product = 1.0
                    for x, y in zip(pick_a, pick_b):
                        product *= delta(ca[x], cb[y])
                    total += lam ** gaps * product
        return mu * total

    return sum(delta(i, j) for i in range(len(a)) for j in range(len(b)))


def test_fast_equals_naive_on_random_trees(random_trees):
    rng = random.Random(1)
    pairs = [(rng.choice(random_trees), rng.choice(random_trees)) for _ in range(400)]
    for a, b in pairs:
        for lam in (0.3, 1.0):
            assert sst(a, b, lam) == pytest.approx(sst_naive(a, b, lam), rel=1e-12, abs=1e-12)
            assert st(a, b, lam) == pytest.approx(st_naive(a, b, lam), rel=1e-12, abs=1e-12)


def test_batch_equals_one_pair_at_a_time(random_trees):
    rng = random.Random(2)
    left = [rng.choice(random_trees) for _ in range(500)]
    right = [rng.choice(random_trees) for _ in range(500)]
    for kind, naive in (("sst", sst_naive), ("st", st_naive)):
        kernel = TreeKernel(kind, lam=0.6)
        expected = [normalise(naive(a, b, 0.6), naive(a, a, 0.6), naive(b, b, 0.6))
                    for a, b in zip(left, right)]
        got = kernel.pairs(left, right)
        assert np.max(np.abs(got - expected)) < 1e-12
        assert all(kernel(a, b) == pytest.approx(g, abs=1e-12) for a, b, g in zip(left, right, got))


def test_ptk_equals_brute_force(random_trees):
    rng = random.Random(3)
    for _ in range(300):
        a, b = rng.choice(random_trees), rng.choice(random_trees)
        assert ptk(a, b, 0.6, 0.7) == pytest.approx(ptk_brute_force(a, b, 0.6, 0.7), rel=1e-12)


def test_symmetry_and_normalisation(random_trees):
    rng = random.Random(4)
    kernels = [TreeKernel(kind, lam=0.5) for kind in ("sst", "st", "ptk")]
    for _ in range(100):
        a, b = rng.choice(random_trees), rng.choice(random_trees)
        for kernel in kernels:
            assert kernel.raw(a, b) == pytest.approx(kernel.raw(b, a), rel=1e-12)
            value = kernel(a, b)
            assert 0.0 <= value <= 1.0 and value == pytest.approx(kernel(b, a), abs=1e-12)
            # identical content, different objects: exactly 1
            assert kernel(a, Tree.from_preorder(a.labels, a.arities)) == 1.0
    matrix = TreeKernel("sst").matrix(random_trees[:20])
    assert np.allclose(matrix, matrix.T) and np.all(np.diag(matrix) == 1.0)


def test_empty_and_fragmentless_trees():
    leaf = Tree("cat")
    for kind in ("sst", "st", "ptk"):
        kernel = TreeKernel(kind)
        assert kernel(EMPTY_TREE, A) == 0.0 and kernel(EMPTY_TREE, EMPTY_TREE) == 0.0
        assert kernel.raw(EMPTY_TREE, A) == 0.0
        assert list(kernel.pairs([EMPTY_TREE, A, EMPTY_TREE], [A, EMPTY_TREE, EMPTY_TREE])) == [0, 0, 0]
    # a lone leaf has no production: no SST/ST fragment, so 0 even against itself
    assert TreeKernel("sst")(leaf, leaf) == 0.0 and TreeKernel("sst")(leaf, A) == 0.0
    # PTK counts a lone node as a fragment
    assert TreeKernel("ptk")(leaf, leaf) == 1.0


def test_pairs_caches_self_kernels_and_handles_repeats():
    kernel = TreeKernel("sst", lam=1.0)
    values = kernel.pairs([A, B, A, A], [B, A, A, B])
    assert list(values) == pytest.approx([0.5, 0.5, 1.0, 0.5])
    assert (A.index.cache[kernel.signature], B.index.cache[kernel.signature]) == (6.0, 6.0)  # kept with each tree
    assert not hasattr(kernel, "_self")  # the kernel holds no tree: a chunk's trees go with the chunk
    assert kernel.pairs([], []).shape == (0,)
    with pytest.raises(OptionError):
        kernel.pairs([A], [])


def test_options_are_checked():
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(OptionError):
            TreeKernel("sst", lam=bad)
        with pytest.raises(OptionError):
            TreeKernel("ptk", mu=bad)
        with pytest.raises(OptionError):
            sst(A, B, bad)
    with pytest.raises(OptionError, match="unknown tree kernel"):
        TreeKernel("tk")
    with pytest.raises(OptionError):
        tree_edit_distance(A, B, backend="apted")
    assert TreeKernel("ptk", lam=0.2, mu=0.3).signature == "kernel:ptk|lambda:0.2|mu:0.3"


# --- real sentences ---------------------------------------------------------------------

_DET = {"the", "a", "an", "this", "that", "its", "their", "his", "her"}
_PREP = {"of", "in", "to", "for", "on", "with", "at", "by", "from", "as"}


def shallow_tree(sentence):
    """A deterministic shallow parse: closed-class words, punctuation, capitals; BIO chunks."""
    words = sentence.split()
    pos = ["DT" if w.lower() in _DET else "IN" if w.lower() in _PREP
           else "P" if not any(ch.isalnum() for ch in w) else "NNP" if w[0].isupper() else "NN"
           for w in words]
    chunks, previous = [], None
    for tag in pos:
        kind = {"DT": "NP", "NN": "NP", "NNP": "NP", "IN": "PP"}.get(tag)
        chunks.append("O" if kind is None else ("I-" if kind == previous and tag != "DT" else "B-") + kind)
        previous = kind
    return from_chunks(words, pos, chunks)


@pytest.fixture(scope="module")
def real_trees(wmt12_de_en):
    ref, systems = wmt12_de_en
    names = sorted(systems)[:2]
    refs = [shallow_tree(s) for s in ref[:300]]
    hyps = [[shallow_tree(s) for s in systems[name][:300]] for name in names]
    return refs, hyps


def test_fast_equals_naive_on_real_trees(real_trees):
    refs, hyps = real_trees
    left = [h for system in hyps for h in system]
    right = refs * len(hyps)
    for name in ("lex1", "nolex", "lex2"):
        l_trees = [variant(t, name) for t in left]
        r_trees = [variant(t, name) for t in right]
        for kind, fast, naive in (("sst", sst, sst_naive), ("st", st, st_naive)):
            raw_naive = np.array([naive(a, b) for a, b in zip(l_trees, r_trees)])
            raw_fast = np.array([fast(a, b) for a, b in zip(l_trees, r_trees)])
            assert np.allclose(raw_fast, raw_naive, rtol=1e-12, atol=0)
            self_l = np.array([naive(a, a) for a in l_trees])
            self_r = np.array([naive(b, b) for b in r_trees])
            batch = TreeKernel(kind).pairs(l_trees, r_trees)
            assert np.max(np.abs(batch - normalise(raw_naive, self_l, self_r))) < 1e-12
            assert np.all((batch >= 0) & (batch <= 1))
    # the hypotheses differ from the references, but share structure
    scores = TreeKernel("sst").pairs(left, right)
    assert 0.05 < scores.mean() < 0.95


def test_ptk_on_real_trees(real_trees):
    refs, hyps = real_trees
    kernel = TreeKernel("ptk")
    scores = kernel.pairs(hyps[0][:100], refs[:100])
    expected = [kernel.raw(a, b) / math.sqrt(kernel.raw(a, a) * kernel.raw(b, b))
                for a, b in zip(hyps[0][:100], refs[:100])]
    assert np.allclose(scores, expected, atol=1e-12)
    # a few short real trees against the brute force
    short = [(a, b) for a, b in zip(hyps[0], refs) if len(a) < 30 and len(b) < 30][:5]
    for a, b in short:
        for name in ("lex1", "lex2"):
            va, vb = variant(a, name), variant(b, name)
            assert ptk(va, vb) == pytest.approx(ptk_brute_force(va, vb, 0.4, 0.4), rel=1e-12)


# --- tree edit distance ------------------------------------------------------------------

def zss_tree(tree):
    """The same tree as zss.Node objects, built independently of combo's converter."""
    index = tree.index
    nodes = [zss.Node(label) for label in tree.labels]
    for i, kids in enumerate(index.children):
        for c in kids:
            nodes[i].addkid(nodes[c])
    return nodes[0]


def zss_unit(a, b):
    return zss.distance(zss_tree(a), zss_tree(b), zss.Node.get_children,
                        insert_cost=lambda n: 1, remove_cost=lambda n: 1,
                        update_cost=lambda x, y: 0 if x.label == y.label else 1)


def test_ted_equals_zss(random_trees, real_trees):
    rng = random.Random(5)
    for _ in range(200):
        a, b = rng.choice(random_trees), rng.choice(random_trees)
        assert tree_edit_distance(a, b) == zss_unit(a, b)
        assert tree_edit_distance(a, b, backend="zss") == zss_unit(a, b)
    refs, hyps = real_trees
    for a, b in list(zip(hyps[0], refs))[:15]:
        assert tree_edit_distance(a, b) == zss_unit(a, b)


def test_ted_hand_computed_and_similarity():
    # relabel cat -> dog: 1 edit; 1 - 1 / (5 + 5) = 0.9
    assert tree_edit_distance(A, B) == 1 and ted_similarity(A, B) == pytest.approx(0.9)
    # delete N and its leaf: 2 edits
    assert tree_edit_distance(A, parse_bracketed("(NP (D a))")) == 2
    assert ted_similarity(A, A) == 1.0 and ted_similarity(EMPTY_TREE, EMPTY_TREE) == 1.0
    assert tree_edit_distance(EMPTY_TREE, A) == 5 and ted_similarity(EMPTY_TREE, A) == 0.0
    assert ted_similarity(Tree("x"), Tree("y")) == 0.5
    values = ted_similarities([A, B, A, EMPTY_TREE], [B, A, A, A])
    assert list(values) == pytest.approx([0.9, 0.9, 1.0, 0.0])
    with pytest.raises(OptionError):
        ted_similarities([A], [])


# --- long sentences -------------------------------------------------------------------------

@pytest.fixture
def recursion_limit_near():
    """Lowers the interpreter's recursion limit to ``frames`` above the caller's depth (restored after)."""
    before = sys.getrecursionlimit()

    def lower(frames: int) -> None:
        depth, frame = 0, sys._getframe()
        while frame is not None:
            depth, frame = depth + 1, frame.f_back
        sys.setrecursionlimit(depth + frames)

    yield lower
    sys.setrecursionlimit(before)


def test_trees_deeper_than_the_recursion_limit_work(recursion_limit_near):
    # A 400-level dependency chain with the recursion limit 250 frames above this test: any recursion over
    # the depth of a tree would fail (as a 1,000-token sentence would under the default limit of 1,000).
    n = 400
    rng = random.Random(6)
    words = [f"w{rng.randrange(80)}" for _ in range(n)]
    pos = [rng.choice(["DT", "NN", "VB", "IN"]) for _ in range(n)]
    chunks = [rng.choice(["B-NP", "I-NP", "B-VP", "O"]) for _ in range(n)]
    shallow = from_chunks(words, pos, chunks)
    other = from_chunks(words[::-1], pos[::-1], chunks[::-1])
    chain = from_dependencies(words, list(range(2, n + 1)) + [0], ["dep"] * (n - 1) + ["root"], pos)
    recursion_limit_near(250)
    for kind in ("sst", "st", "ptk"):
        kernel = TreeKernel(kind)
        values = kernel.pairs([shallow, chain, chain], [other, chain, shallow])
        assert np.all((values >= 0) & (values <= 1)) and values[1] == 1.0
        assert kernel.raw(chain, chain) > 0
    assert sst(chain, chain) == pytest.approx(sst_naive(chain, chain))
    short = from_chunks(words[:15], pos[:15], chunks[:15])
    assert tree_edit_distance(chain, short) >= len(chain) - len(short)
    assert 0 < ted_similarity(shallow, short) < 1
