"""Trees end to end in numpy: the forests the batched tree kernels (:mod:`combo.analysis.batch_kernels`) read.

A forest holds the nodes of many distinct trees in flat arrays, built from the trees' label ids and child
counts alone: :class:`_Forest` the phrasal nodes by production (SST, ST; Collins & Duffy 2001, Moschitti
2006a), :class:`_PtkForest` the internal nodes by label (PTK; Moschitti 2006b). Production ids are the
forest's own (the kernels only compare them).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence, Tuple

import numpy as np
from scipy import sparse

from combo.errors import InputError
from combo.analysis.tree_type import Tree


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
