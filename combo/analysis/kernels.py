"""Tree kernels (SST, ST, PTK) and a tree-edit-distance similarity.

A convolution tree kernel counts the fragments two trees share,
``K(a, b) = sum_{n1 in a} sum_{n2 in b} Delta(n1, n2)``, where ``Delta``
counts (with decay) the common fragments rooted at ``n1`` and ``n2``:

- **SST**, subset trees (Collins & Duffy 2001, their Delta recursion with the
  decay lambda of Collins & Duffy 2002; Moschitti 2006a's form with sigma = 1):
  0 if the productions of n1 and n2 differ, else
  ``lambda * prod_j (sigma + Delta(c_j(n1), c_j(n2)))`` over the children that
  are not leaves (a child whose production differs contributes ``sigma``).
  A pre-terminal gives ``lambda``; a fragment of k productions weighs lambda^k.
- **ST**, subtrees (Vishwanathan & Smola 2002, as Moschitti 2006a writes it):
  the same with sigma = 0, so only complete subtrees down to the leaves count.
- **PTK**, partial trees (Moschitti 2006b): 0 if the labels differ, else
  ``mu * (lambda^2 + sum_p Delta_p(children))`` where ``Delta_p`` sums over
  the pairs of child subsequences of equal length p, each gap of g skipped
  children costing lambda^g on each side, of the product of Delta over the
  aligned children (the paper's recursion for Delta_p, the one SVM-light-TK
  evaluates). Leaves match with ``mu * lambda^2``. Summing over all lengths
  at once gives one O(|c(n1)| |c(n2)|) pass per node pair.

Every kernel is normalised ``K(a, b) / sqrt(K(a, a) K(b, b))`` (1 on
identical trees; 0 when a tree has no fragment, e.g. the empty tree).

SST and ST use Moschitti's (2006a) fast algorithm: only node pairs with equal
productions are visited, and Delta is filled children first, so each value is
computed once. ``sst_naive`` / ``st_naive`` visit all node pairs (the
quadratic algorithm of Collins & Duffy) and are kept as references.
:class:`TreeKernel` scores many pairs at once: for SST and ST all pairs of a
batch advance together in numpy (production-sorted node lists merged by
sorting, Delta filled level by level of node height); for PTK likewise (label-
sorted lists), the child-subsequence programmes of many node pairs advancing
together along the anti-diagonals of their tables, each Delta and each sum
made of the same floating-point operations in the same order as the one-pair
``_partial_tree_pair`` (kept as the reference), so the values are identical to
the bit. K(t, t) is cached per distinct tree.

The compiled path (``_kernels.c``, ``TreeKernel(engine="c")``, the default where it was built) takes only the
trees' label ids and child counts end to end, derives each tree's children, productions or unary flags and
(production- or label-) sorted node groups in C, then runs each pair alone, its Deltas in a table of the
blocks of its equal-key node pairs: the same floating-point operations in the same order as the numpy batch,
so the same values to the bit (tests/test_kernels_compiled.py). A pair whose table would pass
``_C_MAX_CELLS`` cells is computed by the numpy batch instead.

The edit distance is Zhang & Shasha's (1989) with unit costs (insert, delete,
relabel), equal to ``zss.distance`` with those costs, turned into a
similarity ``1 - TED / (|a| + |b|)`` (|t| = number of nodes; TED <= |a| + |b|).

This module holds :class:`TreeKernel` and :func:`normalise`, and gives every public name; the code lives in
``pair_kernels`` (one pair, in Python: ``sst``, ``st``, ``ptk``, the naive references), ``kernel_forests``
(trees end to end in numpy), ``batch_kernels`` (many pairs at once in numpy) and ``tree_edit`` (the edit
distance).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from combo.errors import InputError, OptionError
from combo.extras import use_compiled
from combo.analysis.batch_kernels import _partial_tree_batch, _subset_tree_batch
from combo.analysis.kernel_forests import _flat_trees, _Forest, _PtkForest
from combo.analysis.pair_kernels import (DEFAULT_LAMBDA, DEFAULT_MU, _check_decay, _partial_tree_pair,
                                         _subset_tree_pair, ptk, sst, sst_naive, st, st_naive)
from combo.analysis.tree_type import Tree
from combo.analysis.tree_edit import ted_similarities, ted_similarity, tree_edit_distance

try:
    from . import _kernels as _compiled  # built from _kernels.c at install where a C compiler is found (setup.py)
except ImportError:  # pragma: no cover - no compiler at install
    _compiled = None

__all__ = [
    "KERNELS", "sst", "st", "ptk", "sst_naive", "st_naive", "normalise", "TreeKernel",
    "tree_edit_distance", "ted_similarity", "ted_similarities",
]

KERNELS = ("sst", "st", "ptk")


_C_MAX_CELLS = 1 << 24  # Delta table cells (8 bytes) of one pair in _kernels.c; larger pairs go to numpy


def normalise(k_ab, k_aa, k_bb):
    """``K(a,b) / sqrt(K(a,a) K(b,b))``, 0 where a self-kernel is 0; arrays or floats."""
    k_ab, k_aa, k_bb = (np.asarray(x, dtype=float) for x in (k_ab, k_aa, k_bb))
    denom = np.sqrt(k_aa) * np.sqrt(k_bb)  # not sqrt(k_aa k_bb): that overflows first
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(denom > 0, k_ab / np.where(denom > 0, denom, 1.0), 0.0)
    value = np.clip(value, 0.0, 1.0)
    return float(value) if value.ndim == 0 else value


class TreeKernel:
    """A normalised tree kernel with fixed options; K(t, t) is kept with each tree.

    ``kind``: ``"sst"``, ``"st"`` or ``"ptk"``; ``lam``: decay lambda in (0, 1]
    (default 0.4, SVM-light-TK's); ``mu``: PTK's vertical decay in (0, 1].
    ``kernel(a, b)`` is one normalised value; ``kernel.pairs(left, right)`` the
    values of many pairs (vectorised over all of them);
    ``kernel.matrix(rows, cols)`` all combinations. ``engine``: ``"c"`` the
    compiled kernels (``_kernels.c``), ``"numpy"`` the batched numpy ones,
    ``"auto"`` the compiled ones where they were built; the same values to the
    bit, so the engine is not part of :attr:`signature`.
    """

    #: Tree pairs per call of the batched kernels: their node-pair arrays are what a scoring task of a tree-kernel
    #: metric holds at its peak (WMT12 de-en, 9,600 candidates: PTK +268 MB traced with 16,384 pairs, +139 MB
    #: with 4,096; SST +154 and +102 MB), and below about 4,096 the per-call work makes it slower
    #: (PTK 2.5 s at 4,096 to 16,384 pairs, 3.0 s at 2,048). The compiled engine holds one pair's tables at
    #: a time and takes all pairs in one call.
    BATCH_SIZE = 4096

    def __init__(self, kind: str = "sst", lam: float = DEFAULT_LAMBDA, mu: float = DEFAULT_MU,
                 batch_size: int = BATCH_SIZE, engine: str = "auto"):
        self._use_c = use_compiled(engine, _compiled, "tree-kernel")
        self.engine = engine
        if kind not in KERNELS:
            raise OptionError(f"unknown tree kernel {kind!r}; choose one of {', '.join(KERNELS)}")
        self.kind = kind
        self.lam = _check_decay("lambda", lam)
        self.mu = _check_decay("mu", mu)
        if int(batch_size) < 1:
            raise OptionError(f"batch_size must be at least 1, got {batch_size}")
        self.batch_size = int(batch_size)

    @property
    def signature(self) -> str:
        text = f"kernel:{self.kind}|lambda:{self.lam:g}"
        return text + (f"|mu:{self.mu:g}" if self.kind == "ptk" else "")

    def raw(self, a: Tree, b: Tree) -> float:
        """The unnormalised kernel K(a, b) of one pair."""
        if self.kind == "ptk":
            return _partial_tree_pair(a.index, b.index, self.lam, self.mu)
        return _subset_tree_pair(a.index, b.index, self.lam, 1.0 if self.kind == "sst" else 0.0)

    def self_kernel(self, tree: Tree) -> float:
        """K(t, t), kept with the tree (in its index's cache, so it lives as long as the tree and never keeps a
        tree alive: a scoring run drops each chunk's trees with the chunk)."""
        cache = tree.index.cache
        value = cache.get(self.signature)
        if value is None:
            value = cache[self.signature] = self.raw(tree, tree)
        return value

    def __call__(self, a: Tree, b: Tree) -> float:
        if not a.labels or not b.labels:
            return 0.0
        k_aa, k_bb = self.self_kernel(a), self.self_kernel(b)
        if a == b:
            return 1.0 if k_aa > 0 else 0.0
        return normalise(self.raw(a, b), k_aa, k_bb)

    def _raw_many(self, trees: List[Tree], left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Unnormalised K(trees[left[k]], trees[right[k]]) of distinct index pairs."""
        if len(left) < 4:
            return np.array([self.raw(trees[i], trees[j]) for i, j in zip(left, right)])
        if self._use_c:
            return self._raw_many_compiled(trees, left, right)
        if self.kind == "ptk":
            forest, batch = _PtkForest(trees), _partial_tree_batch
            options: Tuple[float, float] = (self.lam, self.mu)
        else:
            forest, batch = _Forest(trees), _subset_tree_batch
            options = (self.lam, 1.0 if self.kind == "sst" else 0.0)
        out = np.zeros(len(left))
        step = self.batch_size
        for start in range(0, len(left), step):
            out[start:start + step] = batch(forest, left[start:start + step], right[start:start + step], *options)
        return out

    def _raw_many_compiled(self, trees: List[Tree], left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """:meth:`_raw_many` by ``_kernels.c``: label ids and child counts end to end, one pair at a time (its
        memory is one pair's, so all pairs go in one call); the pairs it leaves out (tables over
        ``_C_MAX_CELLS``) by the numpy batch, alone (a pair's value does not depend on the other trees)."""
        labels, arities, offsets = _flat_trees(trees)
        left = np.ascontiguousarray(left, dtype=np.int64)
        right = np.ascontiguousarray(right, dtype=np.int64)
        out = np.zeros(len(left))
        ptk = self.kind == "ptk"
        option = self.mu if ptk else (1.0 if self.kind == "sst" else 0.0)
        run = _compiled.partial_tree if ptk else _compiled.subset_tree
        try:
            left_out = run(labels, arities, offsets, left, right, self.lam, option, _C_MAX_CELLS, out)
        except ValueError as error:
            raise InputError(str(error)) from None
        for k in left_out:
            pair = [trees[left[k]]] if left[k] == right[k] else [trees[left[k]], trees[right[k]]]
            first, second = np.zeros(1, dtype=np.int64), np.full(1, len(pair) - 1, dtype=np.int64)
            if ptk:
                out[k] = _partial_tree_batch(_PtkForest(pair), first, second, self.lam, self.mu)[0]
            else:
                out[k] = _subset_tree_batch(_Forest(pair), first, second, self.lam, option)[0]
        return out

    def pairs(self, left: Sequence[Tree], right: Sequence[Tree]) -> np.ndarray:
        """Normalised K(left[k], right[k]) for every k."""
        if len(left) != len(right):
            raise OptionError("left and right must hold the same number of trees")
        # distinct trees numbered in the order of their content, so which tree of a pair is the kernel's left
        # one (pairs are computed once, as (lower id, higher id)) does not depend on the other trees given
        trees: List[Tree] = sorted(set(left) | set(right), key=lambda t: (t.labels, t.arities))
        ids = {t: k for k, t in enumerate(trees)}
        lid = np.fromiter(map(ids.__getitem__, left), dtype=np.int64, count=len(left))
        rid = np.fromiter(map(ids.__getitem__, right), dtype=np.int64, count=len(right))
        n = len(trees)
        lo, hi = np.minimum(lid, rid), np.maximum(lid, rid)  # kernels are symmetric
        distinct, back = np.unique(lo * n + hi, return_inverse=True)
        a, b = distinct // n, distinct % n
        other = a != b
        # one batch: the missing self-kernels and the pairs of different trees
        key = self.signature
        missing = np.fromiter((k for k, t in enumerate(trees) if key not in t.index.cache), dtype=np.int64)
        todo_l = np.concatenate((missing, a[other]))
        todo_r = np.concatenate((missing, b[other]))
        raw_all = self._raw_many(trees, todo_l, todo_r)
        for k, value in zip(missing.tolist(), raw_all[:len(missing)].tolist()):
            trees[k].index.cache[key] = value
        self_k = np.fromiter((t.index.cache[key] for t in trees), dtype=float, count=n)
        value = np.where(self_k[a] > 0, 1.0, 0.0)  # identical trees
        value[other] = normalise(raw_all[len(missing):], self_k[a[other]], self_k[b[other]])
        return value[back.reshape(-1)]

    def matrix(self, rows: Sequence[Tree], cols: Optional[Sequence[Tree]] = None) -> np.ndarray:
        """Normalised kernel matrix (rows x cols; rows x rows when cols is None)."""
        cols = rows if cols is None else cols
        left = [r for r in rows for _ in cols]
        right = [c for _ in rows for c in cols]
        return self.pairs(left, right).reshape(len(rows), len(cols))
