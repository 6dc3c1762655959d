"""Tree kernels of one pair of trees, in Python: SST, ST and PTK, and the references the batched engines equal.

- SST, subset trees (Collins & Duffy 2001; the decay lambda of Collins & Duffy 2002; Moschitti 2006a's form
  with sigma = 1), and ST, subtrees (Vishwanathan & Smola 2002, as Moschitti 2006a writes it, sigma = 0):
  Moschitti's (2006a) fast algorithm visits only node pairs with equal productions (:func:`sst`, :func:`st`);
  :func:`sst_naive` / :func:`st_naive` visit all node pairs (the quadratic algorithm of Collins & Duffy).
- PTK, partial trees (Moschitti 2006b): :func:`_partial_tree_pair`, the reference the numpy batch
  (:mod:`combo.analysis.batch_kernels`) and the compiled kernels (``_kernels.c``) equal to the bit.

The recursions are written out in :mod:`combo.analysis.kernels`; the values here are unnormalised.
"""

from __future__ import annotations

import math
from typing import Dict, List, Tuple

from combo.errors import OptionError
from combo.analysis.tree_type import Tree, TreeIndex

DEFAULT_LAMBDA = 0.4  # SVM-light-TK's default decay
DEFAULT_MU = 0.4


def _check_decay(name: str, value: float) -> float:
    value = float(value)
    if not 0.0 < value <= 1.0 or math.isnan(value):
        raise OptionError(f"{name} must be in (0, 1], got {value}")
    return value


# ---------------------------------------------------------------------------
# SST and ST, one pair
# ---------------------------------------------------------------------------

def _subset_tree_pair(a: TreeIndex, b: TreeIndex, lam: float, sigma: float) -> float:
    """Moschitti's fast SST/ST: Delta only on node pairs with equal productions."""
    if not a.n or not b.n:
        return 0.0
    # pre-terminal pairs with equal productions: Delta = lambda each
    count_a, count_b = a.preterminal_counts, b.preterminal_counts
    total = lam * sum(count_a[p] * count_b[p] for p in count_a.keys() & count_b.keys())
    phrasal_a, phrasal_b = a.phrasal_by_production, b.phrasal_by_production
    pairs: List[Tuple[int, int]] = []
    for p in phrasal_a.keys() & phrasal_b.keys():
        nodes_b = phrasal_b[p]
        pairs.extend((i, j) for i in phrasal_a[p] for j in nodes_b)
    # children have larger pre-order ids than their parents: decreasing order is DP order
    pairs.sort(reverse=True)
    a_children, b_children = a.children, b.children
    a_prod, b_prod, a_height = a.production_ids, b.production_ids, a.height
    delta: Dict[Tuple[int, int], float] = {}
    pre_value = sigma + lam
    for i, j in pairs:
        value = lam
        for ci, cj in zip(a_children[i], b_children[j]):
            p = a_prod[ci]
            if p < 0:
                continue  # a leaf child: part of the production, no choice
            if p != b_prod[cj]:
                value *= sigma
            elif a_height[ci] == 1:
                value *= pre_value
            else:
                value *= sigma + delta[ci, cj]
        delta[i, j] = value
    return total + ordered_sum(delta.values())


def ordered_sum(values) -> float:
    """``values`` added one at a time in increasing order, from 0: a sum whose last bits do not depend on the
    order the values were found in (the node pairs of a kernel come in an order set by label and production
    ids, which depend on the other trees analysed with these two), as :func:`_subset_tree_batch` adds them."""
    total = 0.0
    for value in sorted(values):
        total += value
    return total


def _subset_tree_naive(a: TreeIndex, b: TreeIndex, lam: float, sigma: float) -> float:
    """Collins & Duffy's quadratic algorithm: Delta on every pair of internal nodes."""
    if not a.n or not b.n:
        return 0.0
    a_prod, b_prod = a.production_ids, b.production_ids
    a_children, b_children = a.children, b.children
    delta = [[0.0] * b.n for _ in range(a.n)]
    total = 0.0
    for i in range(a.n - 1, -1, -1):
        if a_prod[i] < 0:
            continue
        row = delta[i]
        for j in range(b.n - 1, -1, -1):
            if b_prod[j] != a_prod[i]:
                continue  # Delta = 0 (the table already holds it)
            value = lam
            for ci, cj in zip(a_children[i], b_children[j]):
                if a_prod[ci] >= 0:
                    value *= sigma + delta[ci][cj]
            row[j] = value
            total += value
    return total


def sst(a: Tree, b: Tree, lam: float = DEFAULT_LAMBDA) -> float:
    """Unnormalised subset-tree kernel (Collins & Duffy 2001), fast algorithm."""
    return _subset_tree_pair(a.index, b.index, _check_decay("lambda", lam), 1.0)


def st(a: Tree, b: Tree, lam: float = DEFAULT_LAMBDA) -> float:
    """Unnormalised subtree kernel (Vishwanathan & Smola 2002, Moschitti 2006a), fast algorithm."""
    return _subset_tree_pair(a.index, b.index, _check_decay("lambda", lam), 0.0)


def sst_naive(a: Tree, b: Tree, lam: float = DEFAULT_LAMBDA) -> float:
    """Reference SST over all node pairs (quadratic); equals :func:`sst`."""
    return _subset_tree_naive(a.index, b.index, _check_decay("lambda", lam), 1.0)


def st_naive(a: Tree, b: Tree, lam: float = DEFAULT_LAMBDA) -> float:
    """Reference ST over all node pairs (quadratic); equals :func:`st`."""
    return _subset_tree_naive(a.index, b.index, _check_decay("lambda", lam), 0.0)


# ---------------------------------------------------------------------------
# PTK, one pair
# ---------------------------------------------------------------------------

def _ptk_tables(index: TreeIndex):
    """Cached per tree: label counts of the leaves; "unary" nodes (one child, a leaf)
    by label and their production counts; the other internal nodes by label; unary flags."""
    tables = index.cache.get("ptk")
    if tables is None:
        leaves: Dict[int, int] = {}
        unary: Dict[int, List[int]] = {}
        unary_productions: Dict[int, int] = {}
        internal: Dict[int, List[int]] = {}
        children = index.children
        is_unary = [len(kids) == 1 and not children[kids[0]] for kids in children]
        for i, (lab, kids) in enumerate(zip(index.label_ids, children)):
            if not kids:
                leaves[lab] = leaves.get(lab, 0) + 1
            elif is_unary[i]:
                unary.setdefault(lab, []).append(i)
                p = index.production_ids[i]
                unary_productions[p] = unary_productions.get(p, 0) + 1
            else:
                internal.setdefault(lab, []).append(i)
        tables = index.cache["ptk"] = (leaves, unary, unary_productions, internal, is_unary)
    return tables


def _partial_tree_pair(a: TreeIndex, b: TreeIndex, lam: float, mu: float) -> float:
    """Moschitti's (2006b) partial tree kernel, node pairs with equal labels only.

    Closed forms first: a pair with a leaf has Delta = mu lambda^2; two "unary"
    nodes (one child, a leaf) have mu (lambda^2 + [same word] mu lambda^2).
    The other pairs run the dynamic programming over child subsequences.
    """
    if not a.n or not b.n:
        return 0.0
    lam2 = lam * lam
    leaf_value = mu * lam2
    unary_same = leaf_value * (1.0 + mu)
    leaves_a, unary_a, unary_prod_a, internal_a, is_unary_a = _ptk_tables(a)
    leaves_b, unary_b, unary_prod_b, internal_b, is_unary_b = _ptk_tables(b)

    def nodes_with(label: int, unary: Dict[int, List[int]], internal: Dict[int, List[int]]) -> int:
        return len(unary.get(label, ())) + len(internal.get(label, ()))

    # pairs with a leaf (leaf-leaf counted once)
    leafy = sum(n * (leaves_b.get(lab, 0) + nodes_with(lab, unary_b, internal_b))
                for lab, n in leaves_a.items())
    leafy += sum(n * nodes_with(lab, unary_a, internal_a) for lab, n in leaves_b.items())
    unary_pairs = sum(len(unary_a[lab]) * len(unary_b[lab]) for lab in unary_a.keys() & unary_b.keys())
    same_word = sum(unary_prod_a[p] * unary_prod_b[p] for p in unary_prod_a.keys() & unary_prod_b.keys())
    total = leaf_value * (leafy + unary_pairs) + (unary_same - leaf_value) * same_word
    # the other pairs of internal nodes: non-unary x any internal, unary x non-unary
    pairs: List[Tuple[int, int]] = []
    for lab, nodes_a in internal_a.items():
        nodes_b = internal_b.get(lab, []) + unary_b.get(lab, [])
        pairs.extend((i, j) for i in nodes_a for j in nodes_b)
    for lab in unary_a.keys() & internal_b.keys():
        nodes_b = internal_b[lab]
        pairs.extend((i, j) for i in unary_a[lab] for j in nodes_b)
    pairs.sort(reverse=True)  # children (larger pre-order ids) before parents
    a_children, b_children = a.children, b.children
    a_label, b_label = a.label_ids, b.label_ids
    delta: Dict[Tuple[int, int], float] = {}

    a_prod, b_prod = a.production_ids, b.production_ids

    def child_delta(ci: int, cj: int) -> float:
        if a_label[ci] != b_label[cj]:
            return 0.0
        if not a_children[ci] or not b_children[cj]:
            return leaf_value
        if is_unary_a[ci] and is_unary_b[cj]:
            return unary_same if a_prod[ci] == b_prod[cj] else leaf_value
        return delta[ci, cj]

    for i, j in pairs:
        ca, cb = a_children[i], b_children[j]
        if len(ca) == 1 or len(cb) == 1:
            # only subsequences of length 1, each weighing 1; added one by one (sum() compensates from
            # Python 3.12 on), as the batch adds them
            s = 0.0
            for ci in ca:
                for cj in cb:
                    s += child_delta(ci, cj)
        else:
            # T(x, y): weighted common subsequences ending exactly at (x, y);
            # D(x, y) = sum_{x'<=x, y'<=y} lambda^(x-x' + y-y') T(x', y').
            m = len(cb)
            prev = [0.0] * (m + 1)
            s = 0.0
            for ci in ca:
                cur = [0.0] * (m + 1)
                left = 0.0
                for y in range(1, m + 1):
                    d = child_delta(ci, cb[y - 1])
                    t = d * (1.0 + prev[y - 1]) if d else 0.0
                    s += t
                    left = t + lam * (prev[y] + left) - lam2 * prev[y - 1]
                    cur[y] = left
                prev = cur
        value = mu * (lam2 + s)
        delta[i, j] = value
        total += value
    return total


def ptk(a: Tree, b: Tree, lam: float = DEFAULT_LAMBDA, mu: float = DEFAULT_MU) -> float:
    """Unnormalised partial tree kernel (Moschitti 2006b)."""
    return _partial_tree_pair(a.index, b.index, _check_decay("lambda", lam),
                              _check_decay("mu", mu))
