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
"""

from __future__ import annotations

import itertools
import math
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from combo.errors import InputError, OptionError
from combo.extras import use_compiled
from combo.analysis.trees import Tree, TreeIndex

try:
    from . import _kernels as _compiled  # built from _kernels.c at install where a C compiler is found (setup.py)
except ImportError:  # pragma: no cover - no compiler at install
    _compiled = None

__all__ = [
    "KERNELS", "sst", "st", "ptk", "sst_naive", "st_naive", "normalise", "TreeKernel",
    "tree_edit_distance", "ted_similarity", "ted_similarities",
]

KERNELS = ("sst", "st", "ptk")
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


# ---------------------------------------------------------------------------
# Trees end to end, in numpy (the batched kernels' forests)
# ---------------------------------------------------------------------------

def _ranges(starts: np.ndarray, lengths: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Concatenated ``range(s, s + l)`` for each (s, l), and the group of each element."""
    total = int(lengths.sum())
    group = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    if not total:
        return np.zeros(0, dtype=np.int64), group
    before = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - before, lengths), group


def _runs(keys: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct values of a sorted array, where each run starts, and its length."""
    if not len(keys):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    counts = np.diff(np.append(starts, len(keys)))
    return keys[starts], starts, counts


def _chained(lists, count: int) -> np.ndarray:
    """The ints of ``lists`` end to end (``count`` of them) as one int64 array."""
    return np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=count)


def _preorder_structure(arity: np.ndarray, tree: np.ndarray, root: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Parent (global position, -1 at a root) and height of every node of pre-order trees laid end to end
    (``tree``: each node's tree, ``root``: its tree's first position), from the child counts alone.

    Reading a tree in pre-order, each node takes the top slot of a stack and pushes one slot per child: a
    node's parent is the last node before it that pushed a slot at the level it takes. Depths by pointer
    jumping, then heights a depth at a time from the deepest.
    """
    total = len(arity)
    step = arity - 1
    before = np.cumsum(step) - step
    level = 1 + before - before[root]  # the slot a node takes: the number on the stack before it
    last = np.flatnonzero(np.append(tree[1:] != tree[:-1], True)) if total else np.zeros(0, dtype=np.int64)
    if np.any(level[last] + step[last] != 0):  # a tree's last node empties the stack
        raise InputError("the pre-order sequence ends before every node has its children")
    pushers = np.flatnonzero(arity)
    pushed, by = _ranges(level[pushers], arity[pushers])
    width = np.int64(int(pushed.max()) + 1 if len(pushed) else 2)
    keys = np.sort((tree[pushers][by] * width + pushed) * total + pushers[by])
    query = (tree * width + level) * total + np.arange(total)
    at = np.maximum(np.searchsorted(keys, query) - 1, 0)
    is_root = np.arange(total) == root
    if len(keys):
        found = keys[at]
        if not np.array_equal(found[~is_root] // total, query[~is_root] // total):
            raise InputError("the pre-order sequence ends before every node has its children")
        parent = np.where(is_root, -1, found % total)
    else:  # no node has children: each tree is its root alone (its last node emptied the stack above)
        parent = np.full(total, -1, dtype=np.int64)
    depth = (~is_root).astype(np.int64)
    up = parent.copy()
    live = np.flatnonzero(up >= 0)
    while len(live):
        depth[live] += depth[up[live]]
        up[live] = up[up[live]]
        live = live[up[live] >= 0]
    height = np.zeros(total, dtype=np.int64)
    by_depth = _stable_order(depth.max() - depth) if total else np.zeros(0, dtype=np.int64)
    for nodes in np.split(by_depth, np.flatnonzero(np.diff(depth[by_depth])) + 1):
        if not len(nodes) or depth[nodes[0]] == 0:
            break
        np.maximum.at(height, parent[nodes], height[nodes] + 1)
    return parent, height


class _Nodes(NamedTuple):
    """The nodes of distinct trees end to end, in pre-order (global positions): the first node of tree ``t``
    is ``offset[t]``; each node's ``label`` id, ``arity``, ``tree``, ``parent`` (-1 at a root) and ``height``
    (0 at a leaf); the children of node ``u``, in order, are ``by_parent[first_child[u]:][:arity[u]]``."""

    offset: np.ndarray
    label: np.ndarray
    arity: np.ndarray
    tree: np.ndarray
    parent: np.ndarray
    height: np.ndarray
    by_parent: np.ndarray
    first_child: np.ndarray


def _flat_trees(trees: Sequence[Tree]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Label ids and child counts of ``trees`` end to end (pre-order), and each tree's first node (+ the end)."""
    indexes = [t.index for t in trees]
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((ix.n for ix in indexes), dtype=np.int64, count=len(trees)), out=offsets[1:])
    total = int(offsets[-1])
    return (_chained((ix.label_ids for ix in indexes), total), _chained((t.arities for t in trees), total),
            offsets)


def _nodes_end_to_end(trees: Sequence[Tree]) -> _Nodes:
    """:class:`_Nodes` of ``trees``, from their label ids and child counts alone (the rest of their indexes
    is not built)."""
    label, arity, offset = _flat_trees(trees)
    tree = np.repeat(np.arange(len(trees), dtype=np.int64), np.diff(offset))
    parent, height = _preorder_structure(arity, tree, offset[tree])
    # the children of a node, in order, are the nodes whose parent it is, by pre-order id
    has_parent = np.flatnonzero(parent >= 0)
    by_parent = has_parent[np.argsort(parent[has_parent], kind="stable")]
    return _Nodes(offset, label, arity, tree, parent, height, by_parent, np.cumsum(arity) - arity)


# ---------------------------------------------------------------------------
# SST and ST, many pairs at once (numpy)
# ---------------------------------------------------------------------------

def _production_ids(label: np.ndarray, arity: np.ndarray, by_parent: np.ndarray,
                    first_child: np.ndarray) -> np.ndarray:
    """Production id of every node of a forest (-1 at a leaf), numbered within the forest: two nodes share
    an id exactly when their labels and the ordered codes of their children (label, leaf or not) are equal.

    Ranked one child position at a time: a node's key is the rank of (previous key, next child's code) among
    the nodes with that many children or more; the nodes whose children are all read get their ids.
    """
    code = 2 * label + (arity == 0)
    width = np.int64(int(code.max()) + 1 if len(code) else 1)
    production = np.full(len(label), -1, dtype=np.int64)
    nodes = np.flatnonzero(arity)
    _, key = np.unique(arity[nodes] * width + label[nodes], return_inverse=True)
    key, next_id, position = key.reshape(-1), 0, 0
    while len(nodes):
        distinct, key = np.unique(key * width + code[by_parent[first_child[nodes] + position]], return_inverse=True)
        key = key.reshape(-1)
        position += 1
        done = arity[nodes] == position
        production[nodes[done]] = next_id + key[done]
        next_id += len(distinct)
        nodes, key = nodes[~done], key[~done]
    internal = production >= 0
    _, dense = np.unique(production[internal], return_inverse=True)
    production[internal] = dense.reshape(-1)
    return production


class _Forest:
    """Phrasal nodes (internal nodes above pre-terminals) of distinct trees end to end, for
    :func:`_subset_tree_batch`.

    Phrasal node ``u`` (global position) has ``production[u]``, ``height[u]`` and
    children records ``child_ptr[u]:child_ptr[u+1]`` (``child_production``, -1 for a
    leaf; ``child_rank``: the child's position among the phrasal nodes of its
    production in its tree, -2 for a pre-terminal, -1 for a leaf); the phrasal
    nodes of tree ``t`` are ``tree_ptr[t]:tree_ptr[t+1]``, sorted by (production,
    pre-order id). ``preterminals`` (trees x productions, sparse) counts the
    pre-terminal productions of each tree. Only the trees' label ids and child
    counts are read, in numpy; production ids are the forest's own (the kernels
    only compare them).
    """

    def __init__(self, trees: Sequence[Tree]):
        n_trees = len(trees)
        _, label, arity, tree, _, height, by_parent, first_child = _nodes_end_to_end(trees)
        production = _production_ids(label, arity, by_parent, first_child)
        self.n_productions = n_prod = np.int64(production.max(initial=0) + 1)
        phrasal = np.flatnonzero(height > 1)
        phrasal = phrasal[np.lexsort((production[phrasal], tree[phrasal]))]  # stable: by pre-order id within
        rank = np.where(height == 1, -2, -1)
        _, starts, counts = _runs(tree[phrasal] * n_prod + production[phrasal])
        rank[phrasal] = np.arange(len(phrasal)) - np.repeat(starts, counts)
        self.tree_ptr = np.concatenate(([0], np.cumsum(np.bincount(tree[phrasal], minlength=n_trees))))
        self.production, self.height = production[phrasal], height[phrasal]
        self.child_ptr = np.concatenate(([0], np.cumsum(arity[phrasal])))
        slots, _ = _ranges(first_child[phrasal], arity[phrasal])
        kids = by_parent[slots]
        self.child_production, self.child_rank = production[kids], rank[kids]
        pre = height == 1
        self.preterminals = sparse.csr_matrix(  # duplicates add up: each row's productions distinct, sorted
            (np.ones(int(pre.sum())), (tree[pre], production[pre])), shape=(n_trees, int(n_prod)))


def _subset_tree_batch(f: _Forest, left: np.ndarray, right: np.ndarray,
                       lam: float, sigma: float) -> np.ndarray:
    """SST/ST of the tree pairs (left[p], right[p]) of a forest, all pairs together.

    Pre-terminal node pairs with equal productions each add lambda: per pair,
    lambda times the dot product of the two trees' pre-terminal production
    counts. For the phrasal nodes:
    1. node pairs with equal productions: per pair, the production-sorted node
       lists of both trees are merged on the key (pair, production); a key found
       on both sides with c_l and c_r nodes is a group of c_l * c_r node pairs;
    2. Delta level by level of node height (children are lower, so done
       before); the Delta of a phrasal child pair is read in its group, at
       ``rank(child_l) * c_r + rank(child_r)``; a pre-terminal child pair with
       equal productions has Delta = lambda, a leaf child a factor 1.
    """
    n_pairs = len(left)
    if not n_pairs:
        return np.zeros(0)
    pre = f.preterminals
    out = lam * np.asarray(pre[left].multiply(pre[right]).sum(axis=1), dtype=float).ravel()
    n_prod = f.n_productions
    sides = []
    for trees in (left, right):
        idx, pair = _ranges(f.tree_ptr[trees], f.tree_ptr[trees + 1] - f.tree_ptr[trees])
        keys = pair * n_prod + f.production[idx]  # sorted: by pair, then production
        sides.append((idx,) + _runs(keys))
    (idx_l, keys_l, start_l, count_l), (idx_r, keys_r, start_r, count_r) = sides
    if not len(keys_l) or not len(keys_r):
        return out
    pos = np.minimum(np.searchsorted(keys_r, keys_l), len(keys_r) - 1)
    hit = keys_r[pos] == keys_l
    m_l, m_r = np.flatnonzero(hit), pos[hit]
    if not len(m_l):
        return out
    group_keys = keys_l[m_l]
    c_r = count_r[m_r]
    sizes = count_l[m_l] * c_r
    group_start = np.cumsum(sizes) - sizes
    q, group = _ranges(np.zeros(len(sizes), dtype=np.int64), sizes)
    width = c_r[group]
    u = idx_l[start_l[m_l][group] + q // width]
    v = idx_r[start_r[m_r][group] + q % width]
    pair_of = group_keys[group] // n_prod
    delta = np.zeros(len(u))
    heights = f.height[u]
    if heights.max() < 2 ** 15:
        heights = heights.astype(np.int16)  # a stable sort of small ints is a radix sort
    by_height = np.argsort(heights, kind="stable")
    bounds = np.flatnonzero(np.diff(heights[by_height])) + 1
    ptr, child_prod, child_rank = f.child_ptr, f.child_production, f.child_rank
    for level in np.split(by_height, bounds):
        uu, vv = u[level], v[level]
        arity = ptr[uu + 1] - ptr[uu]
        slot_u, owner = _ranges(ptr[uu], arity)
        slot_v = slot_u - ptr[uu][owner] + ptr[vv][owner]
        pu = child_prod[slot_u]
        factor = np.where(pu >= 0, sigma, 1.0)
        same = (pu >= 0) & (pu == child_prod[slot_v])
        pre_child = same & (child_rank[slot_u] == -2)
        factor[pre_child] = sigma + lam
        inner = np.flatnonzero(same & ~pre_child)
        if len(inner):
            g = np.searchsorted(group_keys, pair_of[level][owner[inner]] * n_prod + pu[inner])
            found = group_start[g] + child_rank[slot_u[inner]] * c_r[g] + child_rank[slot_v[inner]]
            factor[inner] = sigma + delta[found]
        delta[level] = lam * np.multiply.reduceat(factor, np.cumsum(arity) - arity)
    order = np.lexsort((delta, pair_of))  # each pair's Deltas in increasing order, as ordered_sum adds them
    out += np.bincount(pair_of[order], weights=delta[order], minlength=n_pairs)
    return out


# ---------------------------------------------------------------------------
# PTK, many pairs at once (numpy)
# ---------------------------------------------------------------------------

def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``, as a radix sort when the keys fit in 16 bits (small non-negative ints)."""
    if len(keys) and 0 <= keys.min() and keys.max() < 2 ** 15:
        keys = keys.astype(np.int16)
    return np.argsort(keys, kind="stable")


def _equal_key_pairs(keys_l: np.ndarray, keys_r: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Every (a, b) with ``keys_l[a] == keys_r[b]`` (both arrays sorted), by key, then a, then b."""
    found_l, start_l, count_l = _runs(keys_l)
    found_r, start_r, count_r = _runs(keys_r)
    if not len(found_l) or not len(found_r):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pos = np.minimum(np.searchsorted(found_r, found_l), len(found_r) - 1)
    hit = found_r[pos] == found_l
    m_l, m_r = np.flatnonzero(hit), pos[hit]
    width = count_r[m_r]
    q, group = _ranges(np.zeros(len(m_l), dtype=np.int64), count_l[m_l] * width)
    width = width[group]
    return start_l[m_l][group] + q // width, start_r[m_r][group] + q % width


class _PtkForest:
    """Internal nodes of distinct trees end to end, for :func:`_partial_tree_batch`.

    Internal node ``u`` (global position) has ``label[u]``, ``unary[u]`` (one
    child, a leaf), ``height[u]``, ``node[u]`` (its pre-order id) and children
    records ``child_ptr[u]:child_ptr[u+1]`` (``child_label``, ``child_kind``:
    0 leaf, 1 unary, 2 other internal; ``child_word``: the leaf under a unary
    child, whose label tells its production from others of its label;
    ``child_rank``). The internal nodes of tree ``t`` are
    ``tree_ptr[t]:tree_ptr[t+1]``, sorted by (label, unary, pre-order id):
    ``child_rank`` is a node's position among the internal nodes of its label in
    its tree. ``leaves``, ``internal``, ``unaries`` (trees x labels) and
    ``unary_productions`` (trees x (label, word)) count nodes for the closed
    forms of :func:`_partial_tree_pair`. Only the trees' label ids and child
    counts are read (not the rest of their indexes, which is not built).
    """

    def __init__(self, trees: Sequence[Tree]):
        n_trees = len(trees)
        offset, label, arity, tree, _, height, by_parent, first_child = _nodes_end_to_end(trees)
        total = len(label)
        leaf = arity == 0
        unary = np.zeros(total, dtype=bool)
        one = np.flatnonzero(arity == 1)
        unary[one] = leaf[one + 1]  # the only child is the next node in pre-order
        kind = np.where(leaf, 0, np.where(unary, 1, 2))
        self.n_labels = n_labels = np.int64(int(label.max()) + 1 if total else 1)
        # internal nodes by (tree, label, unary, pre-order id): lexsort is stable and ids increase
        ids = np.flatnonzero(~leaf)
        ids = ids[np.lexsort((unary[ids], label[ids], tree[ids]))]
        tree_keys = tree[ids] * n_labels + label[ids]
        _, starts, counts = _runs(tree_keys)
        rank = np.full(total, -1, dtype=np.int64)
        rank[ids] = np.arange(len(ids)) - np.repeat(starts, counts)
        self.tree_ptr = np.concatenate(([0], np.cumsum(np.bincount(tree[ids], minlength=n_trees))))
        self.label, self.unary, self.height = label[ids], unary[ids], height[ids]
        self.node = ids - offset[tree[ids]]
        slots, _ = _ranges(first_child[ids], arity[ids])
        kids = by_parent[slots]
        self.child_ptr = np.concatenate(([0], np.cumsum(arity[ids])))
        # each node's children by label (stable: by position within a label)
        self.child_by_label = np.lexsort((label[kids], np.repeat(np.arange(len(ids)), arity[ids])))
        self.child_label, self.child_kind = label[kids], kind[kids]
        word = np.full(total, -1, dtype=np.int64)
        word[one] = label[one + 1]  # under a unary node (the leaf of others is not read)
        self.child_word, self.child_rank = word[kids], rank[kids]

        def counts_of(where: np.ndarray, column: np.ndarray, width: int) -> sparse.csr_matrix:
            return sparse.csr_matrix((np.ones(int(where.sum()), dtype=np.int64), (tree[where], column[where])),
                                     shape=(n_trees, width))  # duplicates add up

        self.leaves = counts_of(leaf, label, int(n_labels))
        self.internal = counts_of(~leaf, label, int(n_labels))
        self.unaries = counts_of(unary, label, int(n_labels))
        # a unary node's production: its label and its word's
        productions, column = np.unique(label[unary] * n_labels + word[unary], return_inverse=True)
        unary_production = np.zeros(total, dtype=np.int64)
        unary_production[unary] = column.reshape(-1)
        self.unary_productions = counts_of(unary, unary_production, max(len(productions), 1))


def _row_dots(a: sparse.csr_matrix, left: np.ndarray, b: sparse.csr_matrix, right: np.ndarray) -> np.ndarray:
    """``a[left[k]] . b[right[k]]`` for every k (integer counts: exact)."""
    return np.asarray(a[left].multiply(b[right]).sum(axis=1), dtype=np.int64).ravel()


_PTK_CELLS = 1 << 18  # cells of the dynamic programme's tables done together (memory, cache)
_STEP_COST = 100  # one anti-diagonal step of a part of node pairs, in table cells (numpy calls against elements)
_PART_COST = 1000  # setting a part up, in table cells


def _table_shapes(n_u: np.ndarray, n_v: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Padded tables for node pairs with n_u x n_v children: exact shapes merged, largest first, while the
    padding costs less than the steps and set-up it saves. The bucket of each node pair, and the rows and
    cols of each bucket's tables; bucket 0 (0 x 0) for a side with one child (no table)."""
    single = (n_u == 1) | (n_v == 1)
    bucket = np.zeros(len(n_u), dtype=np.int64)
    table = np.flatnonzero(~single)
    if not len(table):
        return bucket, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    width = np.int64(n_v.max()) + 1
    keys, inverse, counts = np.unique(n_u[table] * width + n_v[table], return_inverse=True, return_counts=True)
    shapes = np.stack((keys // width, keys % width), axis=1)

    def cost(r: int, c: int, k: int) -> int:
        return _PART_COST + _STEP_COST * (r + c - 1) + k * (r + 1) * (c + 1)

    buckets: List[List[int]] = [[0, 0, 0]]  # rows, cols, node pairs
    bucket_of = np.zeros(len(shapes), dtype=np.int64)
    for s in np.argsort(-shapes[:, 0] * shapes[:, 1], kind="stable").tolist():
        r, c, k = int(shapes[s, 0]), int(shapes[s, 1]), int(counts[s])
        best, gain, alone = -1, 0, cost(r, c, k)
        for b, (big_r, big_c, big_k) in enumerate(buckets[1:], 1):
            saved = cost(big_r, big_c, big_k) + alone - cost(max(big_r, r), max(big_c, c), big_k + k)
            if saved > gain:
                best, gain = b, saved
        if best < 0:
            best = len(buckets)
            buckets.append([r, c, k])
        else:
            merged = buckets[best]
            merged[:] = [max(merged[0], r), max(merged[1], c), merged[2] + k]
        bucket_of[s] = best
    bucket[table] = bucket_of[inverse.reshape(-1)]
    sizes = np.array(buckets, dtype=np.int64)
    return bucket, sizes[:, 0], sizes[:, 1]


def _partial_tree_batch(f: _PtkForest, left: np.ndarray, right: np.ndarray,
                        lam: float, mu: float) -> np.ndarray:
    """PTK of the tree pairs (left[p], right[p]) of a forest, equal to :func:`_partial_tree_pair` to the bit.

    1. the closed forms (pairs with a leaf, unary x unary pairs) from per-tree
       label and production counts;
    2. the other node pairs with equal labels: per pair, the label-sorted
       internal node lists are merged on (pair, label); a group with c_l, c_r
       nodes (n_l, n_r of them not unary, listed first) holds the n_l * c_r
       pairs of a non-unary left node, then the (c_l - n_l) * n_r pairs of a
       unary left node with a non-unary right one;
    3. Delta level by level of min(height) (child pairs are lower); within a
       level, the dynamic programme of all node pairs advances together along
       anti-diagonals of their (children x children) tables (Moschitti 2006b's
       Delta_p recursion, summed over p as in the reference);
    4. per pair, the closed form then each Delta by decreasing (i, j), added in
       that order (np.bincount adds in input order), as the reference does.
    """
    n_pairs = len(left)
    if not n_pairs:
        return np.zeros(0)
    lam2 = lam * lam
    leaf_value = mu * lam2
    unary_same = leaf_value * (1.0 + mu)
    leafy = (_row_dots(f.leaves, left, f.leaves + f.internal, right)
             + _row_dots(f.leaves, right, f.internal, left))
    unary_pairs = _row_dots(f.unaries, left, f.unaries, right)
    same_word = _row_dots(f.unary_productions, left, f.unary_productions, right)
    closed = (leaf_value * (leafy + unary_pairs).astype(float)
              + (unary_same - leaf_value) * same_word.astype(float))
    n_labels = f.n_labels
    sides = []
    for trees in (left, right):
        idx, pair = _ranges(f.tree_ptr[trees], f.tree_ptr[trees + 1] - f.tree_ptr[trees])
        keys, start, count = _runs(pair * n_labels + f.label[idx])
        unary_before = np.concatenate(([0], np.cumsum(f.unary[idx])))
        plain = count - (unary_before[start + count] - unary_before[start])
        sides.append((idx, keys, start, count, plain))
    (idx_l, keys_l, start_l, count_l, plain_l), (idx_r, keys_r, start_r, count_r, plain_r) = sides
    if not len(keys_l) or not len(keys_r):
        return closed
    pos = np.minimum(np.searchsorted(keys_r, keys_l), len(keys_r) - 1)
    hit = keys_r[pos] == keys_l
    m_l, m_r = np.flatnonzero(hit), pos[hit]
    group_keys = keys_l[m_l]
    c_r, n_l, n_r = count_r[m_r], plain_l[m_l], plain_r[m_r]
    first = n_l * c_r
    sizes = first + (count_l[m_l] - n_l) * n_r
    keep = sizes > 0
    group_keys, c_r, n_l, n_r, first, sizes = (x[keep] for x in (group_keys, c_r, n_l, n_r, first, sizes))
    m_l, m_r = m_l[keep], m_r[keep]
    if not len(sizes):
        return closed
    group_start = np.cumsum(sizes) - sizes
    q, group = _ranges(np.zeros(len(sizes), dtype=np.int64), sizes)
    head = q < first[group]
    width = np.maximum(n_r, 1)[group]
    rest = q - first[group]
    row = np.where(head, q // c_r[group], n_l[group] + rest // width)
    col = np.where(head, q % c_r[group], rest % width)
    u = idx_l[start_l[m_l][group] + row]
    v = idx_r[start_r[m_r][group] + col]
    pair_of = group_keys[group] // n_labels
    delta = np.zeros(len(u))
    levels = np.minimum(f.height[u], f.height[v])
    by_level = _stable_order(levels)
    bounds = np.flatnonzero(np.diff(levels[by_level])) + 1
    ptr = f.child_ptr
    c_label, c_kind, c_word, c_rank = f.child_label, f.child_kind, f.child_word, f.child_rank

    def child_deltas(su: np.ndarray, sv: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """Delta of child pairs with equal labels (child slots su, sv of tree pairs ``pairs``), as the
        reference's child_delta: closed forms, else the Delta found in its group."""
        ku, kv = c_kind[su], c_kind[sv]
        d = np.full(len(su), leaf_value)
        both_unary = (ku == 1) & (kv == 1)
        d[both_unary] = np.where(c_word[su[both_unary]] == c_word[sv[both_unary]], unary_same, leaf_value)
        inner = np.flatnonzero((ku > 0) & (kv > 0) & ~both_unary)
        if len(inner):
            su, sv = su[inner], sv[inner]
            g = np.searchsorted(group_keys, pairs[inner] * n_labels + c_label[su])
            r, s = c_rank[su], c_rank[sv]
            found = group_start[g] + np.where(r < n_l[g], r * c_r[g] + s, first[g] + (r - n_l[g]) * n_r[g] + s)
            d[inner] = delta[found]
        return d

    def children_sums(nodes: np.ndarray, rows: int, cols: int) -> np.ndarray:
        """sum_p Delta_p over the children of the node pairs ``nodes`` (at most rows x cols children; 0 x 0 if
        one side has a single child), by the reference's dynamic programme, the pairs side by side."""
        uu, vv = u[nodes], v[nodes]
        n_u, n_v = ptr[uu + 1] - ptr[uu], ptr[vv + 1] - ptr[vv]
        if not rows:
            # one child on a side: subsequences of length 1 only, T = Delta, added row by row
            cells, owner = _ranges(np.zeros(len(nodes), dtype=np.int64), n_u * n_v)
            width = n_v[owner]
            x = cells // width
            su, sv = ptr[uu][owner] + x, ptr[vv][owner] + (cells - x * width)
            same = np.flatnonzero(c_label[su] == c_label[sv])
            d = child_deltas(su[same], sv[same], pair_of[nodes][owner[same]])
            return np.bincount(owner[same], weights=d, minlength=len(nodes))
        # the child pairs with equal labels: children listed by (node pair, label) on each side, merged
        at_l, owner_l = _ranges(ptr[uu], n_u)
        at_r, owner_r = _ranges(ptr[vv], n_v)
        slots_l, slots_r = f.child_by_label[at_l], f.child_by_label[at_r]
        a, b = _equal_key_pairs(owner_l * n_labels + c_label[slots_l], owner_r * n_labels + c_label[slots_r])
        su, sv, owner = slots_l[a], slots_r[b], owner_l[a]
        d = child_deltas(su, sv, pair_of[nodes][owner])
        # D(x, y) and T(x, y) in (rows + 1) x (cols + 1) tables with a zero border, one row per node pair;
        # anti-diagonal x + y = k of a row-major table is the strided slice k + x * cols
        w = cols + 1
        size = (rows + 1) * w
        dd = np.zeros((len(nodes), size))
        dd.reshape(-1)[owner * size + (su - ptr[uu][owner] + 1) * w + (sv - ptr[vv][owner] + 1)] = d
        table = np.zeros_like(dd)
        t = np.zeros_like(dd)
        for k in range(2, rows + cols + 1):
            start = k + max(1, k - cols) * cols
            stop = k + min(rows, k - 1) * cols + 1
            here = slice(start, stop, cols)
            before = table[:, start - w - 1:stop - w - 1:cols]
            value = dd[:, here]
            value = np.where(value != 0, value * (1.0 + before), 0.0)
            t[:, here] = value
            table[:, here] = (value + lam * (table[:, start - w:stop - w:cols] + table[:, start - 1:stop - 1:cols])
                              - lam2 * before)
        # each node pair's T added row by row (the padding adds nothing: T = 0 where Delta = 0)
        flat = t.reshape(-1)
        hit = np.flatnonzero(flat)
        return np.bincount(hit // size, weights=flat[hit], minlength=len(nodes))

    for level in np.split(by_level, bounds):
        # node pairs with tables of similar shapes together, in parts of about _PTK_CELLS cells
        n_u = ptr[u[level] + 1] - ptr[u[level]]
        n_v = ptr[v[level] + 1] - ptr[v[level]]
        bucket, rows, cols = _table_shapes(n_u, n_v)
        order = _stable_order(bucket)
        level, bucket = level[order], bucket[order]
        cells = np.where(bucket > 0, ((rows + 1) * (cols + 1))[bucket], n_u[order] * n_v[order])
        _, starts, counts = _runs(bucket)
        for begin, count in zip(starts.tolist(), counts.tolist()):
            run = slice(begin, begin + count)
            b = int(bucket[begin])
            pieces = np.cumsum(cells[run]) // _PTK_CELLS
            for part in np.split(level[run], np.flatnonzero(np.diff(pieces)) + 1):
                delta[part] = mu * (lam2 + children_sums(part, int(rows[b]), int(cols[b])))
    i, j = f.node[u], f.node[v]
    span = np.int64(max(int(i.max()), int(j.max())) + 1)
    order = np.argsort((pair_of * span + (span - 1 - i)) * span + (span - 1 - j))  # by decreasing (i, j)
    return np.bincount(np.concatenate((np.arange(n_pairs), pair_of[order])),
                       weights=np.concatenate((closed, delta[order])), minlength=n_pairs)


# ---------------------------------------------------------------------------
# Normalised kernels over many pairs
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Tree edit distance
# ---------------------------------------------------------------------------

def _zs_tables(tree: Tree):
    """Post-order label ids, leftmost leaf descendants and keyroots (Zhang & Shasha 1989)."""
    index = tree.index
    tables = index.cache.get("zhang-shasha")
    if tables is None:
        post = index.postorder
        rank = [0] * index.n
        for k, node in enumerate(post):
            rank[node] = k
        labels = [index.label_ids[node] for node in post]
        lmd = [0] * len(post)
        for k, node in enumerate(post):
            kids = index.children[node]
            lmd[k] = lmd[rank[kids[0]]] if kids else k
        last: Dict[int, int] = {}
        for k, left in enumerate(lmd):
            last[left] = k
        tables = index.cache["zhang-shasha"] = (labels, lmd, sorted(last.values()))
    return tables


def _zhang_shasha(a: Tree, b: Tree) -> int:
    la, lmd_a, keyroots_a = _zs_tables(a)
    lb, lmd_b, keyroots_b = _zs_tables(b)
    n, m = len(la), len(lb)
    if not n or not m:
        return n + m
    treedist = [[0] * m for _ in range(n)]
    # per keyroot j of b: which columns lie on j's leftmost path, and where their subforests start
    columns_b = []
    for j in keyroots_b:
        lj = lmd_b[j]
        cols = j - lj + 2
        columns_b.append((lj, cols, [False] + [lmd_b[lj + y - 1] == lj for y in range(1, cols)],
                          [0] + [lmd_b[lj + y - 1] - lj for y in range(1, cols)]))
    for i in keyroots_a:
        li = lmd_a[i]
        rows = i - li + 2
        for lj, cols, on_path_b, offset_b in columns_b:
            fd = [list(range(cols))]
            for x in range(1, rows):
                node = li + x - 1
                prev = fd[x - 1]
                cur = [x] * cols
                label = la[node]
                td_row = treedist[node]
                if lmd_a[node] == li:
                    for y in range(1, cols):
                        if on_path_b[y]:
                            d = prev[y - 1] + (label != lb[lj + y - 1])
                            other = min(prev[y], cur[y - 1]) + 1
                            cur[y] = td_row[lj + y - 1] = d if d < other else other
                        else:
                            d = fd[0][offset_b[y]] + td_row[lj + y - 1]
                            other = min(prev[y], cur[y - 1]) + 1
                            cur[y] = d if d < other else other
                else:
                    base = fd[lmd_a[node] - li]
                    for y in range(1, cols):
                        d = base[offset_b[y]] + td_row[lj + y - 1]
                        other = min(prev[y], cur[y - 1]) + 1
                        cur[y] = d if d < other else other
                fd.append(cur)
    return treedist[n - 1][m - 1]


def _zss_distance(a: Tree, b: Tree) -> int:
    try:
        import zss
    except ImportError:
        from ..errors import ResourceMissing
        from ..extras import oracle_hint

        raise ResourceMissing("zss (the reference implementation backend='zss' checks against)",
                              oracle_hint("zss")) from None

    def convert(tree: Tree):
        if not tree.labels:
            return None
        nodes = [zss.Node(s) for s in tree.labels]
        for i, kids in enumerate(tree.index.children):
            nodes[i].children = [nodes[c] for c in kids]
        return nodes[0]

    ra, rb = convert(a), convert(b)
    if ra is None or rb is None:
        return len(a) + len(b)
    return int(zss.distance(ra, rb, zss.Node.get_children,
                            insert_cost=lambda node: 1, remove_cost=lambda node: 1,
                            update_cost=lambda x, y: int(x.label != y.label)))


def tree_edit_distance(a: Tree, b: Tree, backend: str = "combo") -> int:
    """Zhang & Shasha's (1989) tree edit distance, unit costs for insert, delete, relabel.

    ``backend="zss"`` delegates to ``zss.distance`` with those costs (same value,
    slower), a cross-check for tests and benchmarks: ``zss`` is in the ``test``
    extra, not a dependency. The default is our own iterative implementation of the algorithm.
    """
    if backend == "zss":
        return _zss_distance(a, b)
    if backend != "combo":
        raise OptionError(f"unknown edit-distance backend {backend!r}; choose 'combo' or 'zss'")
    return _zhang_shasha(a, b)


def ted_similarity(a: Tree, b: Tree, backend: str = "combo") -> float:
    """``1 - TED(a, b) / (|a| + |b|)`` in [0, 1]: 1 on identical trees (two empty trees
    included), 0 when nothing can be kept (e.g. one tree empty)."""
    size = len(a) + len(b)
    if not size:
        return 1.0
    if a == b:
        return 1.0
    return 1.0 - tree_edit_distance(a, b, backend) / size


def ted_similarities(left: Sequence[Tree], right: Sequence[Tree], backend: str = "combo") -> np.ndarray:
    """:func:`ted_similarity` of every pair (left[k], right[k]); each distinct
    unordered pair of trees is computed once (the distance is symmetric)."""
    if len(left) != len(right):
        raise OptionError("left and right must hold the same number of trees")
    done: Dict[Tuple[Tree, Tree], float] = {}
    out = np.empty(len(left))
    for k, (a, b) in enumerate(zip(left, right)):
        key = (a, b) if hash(a) <= hash(b) else (b, a)
        value = done.get(key)
        if value is None:
            value = done[key] = ted_similarity(a, b, backend)
        out[k] = value
    return out
