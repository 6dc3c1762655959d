"""Tree kernels of many pairs at once, in numpy: SST and ST (:func:`_subset_tree_batch`) and PTK
(:func:`_partial_tree_batch`) over a forest (:mod:`combo.analysis.kernel_forests`).

For SST and ST (Collins & Duffy 2001, Moschitti 2006a) all pairs of a batch advance together: production-sorted
node lists merged by sorting, Delta filled level by level of node height. For PTK (Moschitti 2006b) likewise
(label-sorted lists), the child-subsequence programmes of many node pairs advancing together along the
anti-diagonals of their tables, each Delta and each sum made of the same floating-point operations in the same
order as the one-pair ``_partial_tree_pair`` (:mod:`combo.analysis.pair_kernels`), so the values are identical
to the bit.
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Tuple

import numpy as np
from scipy import sparse

from combo.analysis.kernel_forests import _equal_key_pairs, _Forest, _PtkForest, _ranges, _runs, _stable_order


# ---------------------------------------------------------------------------
# SST and ST, many pairs at once
# ---------------------------------------------------------------------------

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
# PTK, many pairs at once
# ---------------------------------------------------------------------------

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
    batch = _PtkBatch(f, lam, mu)
    closed = batch.closed_forms(left, right)
    groups = _ptk_groups(f, left, right)
    if groups is None:
        return closed
    delta = batch.deltas(groups)
    i, j = f.node[groups.u], f.node[groups.v]
    span = np.int64(max(int(i.max()), int(j.max())) + 1)
    order = np.argsort((groups.pair_of * span + (span - 1 - i)) * span + (span - 1 - j))  # by decreasing (i, j)
    return np.bincount(np.concatenate((np.arange(n_pairs), groups.pair_of[order])),
                       weights=np.concatenate((closed, delta[order])), minlength=n_pairs)


class _PtkGroups(NamedTuple):
    """The node pairs with equal labels of a batch (step 2 of :func:`_partial_tree_batch`), in groups sorted by
    ``keys`` (pair * labels + label): group ``g`` starts at ``start[g]``, its c_r = ``c_r[g]`` right nodes, of
    which ``n_r[g]`` not unary, meet the ``n_l[g]`` non-unary left nodes in its ``first[g]`` first node pairs.
    Node pair ``k`` is (``u[k]``, ``v[k]``) of tree pair ``pair_of[k]``."""

    keys: np.ndarray
    start: np.ndarray
    first: np.ndarray
    c_r: np.ndarray
    n_l: np.ndarray
    n_r: np.ndarray
    u: np.ndarray
    v: np.ndarray
    pair_of: np.ndarray


def _label_runs(f: _PtkForest, trees: np.ndarray):
    """The internal nodes of ``f``'s trees ``trees[p]`` end to end, in runs of equal (p, label): the nodes'
    positions, each run's key, start and count, and how many of its nodes are not unary (listed first)."""
    idx, pair = _ranges(f.tree_ptr[trees], f.tree_ptr[trees + 1] - f.tree_ptr[trees])
    keys, start, count = _runs(pair * f.n_labels + f.label[idx])
    unary_before = np.concatenate(([0], np.cumsum(f.unary[idx])))
    plain = count - (unary_before[start + count] - unary_before[start])
    return idx, keys, start, count, plain


def _ptk_groups(f: _PtkForest, left: np.ndarray, right: np.ndarray) -> Optional[_PtkGroups]:
    """The node pairs of the tree pairs (left[p], right[p]) with equal labels, not both unary; None if none."""
    idx_l, keys_l, start_l, count_l, plain_l = _label_runs(f, left)
    idx_r, keys_r, start_r, count_r, plain_r = _label_runs(f, right)
    if not len(keys_l) or not len(keys_r):
        return None
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
        return None
    group_start = np.cumsum(sizes) - sizes
    q, group = _ranges(np.zeros(len(sizes), dtype=np.int64), sizes)
    head = q < first[group]
    width = np.maximum(n_r, 1)[group]
    rest = q - first[group]
    row = np.where(head, q // c_r[group], n_l[group] + rest // width)
    col = np.where(head, q % c_r[group], rest % width)
    u = idx_l[start_l[m_l][group] + row]
    v = idx_r[start_r[m_r][group] + col]
    pair_of = group_keys[group] // f.n_labels
    return _PtkGroups(group_keys, group_start, first, c_r, n_l, n_r, u, v, pair_of)


def _anti_diagonal_sums(dd: np.ndarray, rows: int, cols: int, lam: float, lam2: float) -> np.ndarray:
    """sum_p Delta_p of each node pair, one per row of ``dd``: its children's Deltas D(x, y) in a
    (rows + 1) x (cols + 1) table with a zero border, row-major. The reference's dynamic programme (Moschitti
    2006b), all rows side by side: T(x, y) and the table of sums filled along anti-diagonals (x + y = k is the
    strided slice k + x * cols), then each row's T added row by row (the padding adds nothing: T = 0 where
    Delta = 0)."""
    w = cols + 1
    size = (rows + 1) * w
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
    flat = t.reshape(-1)
    hit = np.flatnonzero(flat)
    return np.bincount(hit // size, weights=flat[hit], minlength=len(dd))


class _PtkBatch:
    """The decays of one :func:`_partial_tree_batch` call over forest ``f`` and, once :meth:`deltas` runs, its
    node-pair groups and their Deltas."""

    def __init__(self, f: _PtkForest, lam: float, mu: float):
        self.f, self.lam, self.mu = f, lam, mu
        self.lam2 = lam * lam
        self.leaf_value = mu * self.lam2
        self.unary_same = self.leaf_value * (1.0 + mu)

    def closed_forms(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Step 1: per tree pair, the Deltas of node pairs with a leaf and of unary x unary pairs."""
        f, leaf_value = self.f, self.leaf_value
        leafy = (_row_dots(f.leaves, left, f.leaves + f.internal, right)
                 + _row_dots(f.leaves, right, f.internal, left))
        unary_pairs = _row_dots(f.unaries, left, f.unaries, right)
        same_word = _row_dots(f.unary_productions, left, f.unary_productions, right)
        return (leaf_value * (leafy + unary_pairs).astype(float)
                + (self.unary_same - leaf_value) * same_word.astype(float))

    def deltas(self, groups: _PtkGroups) -> np.ndarray:
        """Step 3: Delta of every node pair of ``groups``, level by level of min(height), node pairs with tables
        of similar shapes together, in parts of about _PTK_CELLS cells."""
        self.g, self.delta = groups, np.zeros(len(groups.u))
        f, u, v, ptr = self.f, groups.u, groups.v, self.f.child_ptr
        levels = np.minimum(f.height[u], f.height[v])
        by_level = _stable_order(levels)
        bounds = np.flatnonzero(np.diff(levels[by_level])) + 1
        for level in np.split(by_level, bounds):
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
                    self.delta[part] = self.mu * (self.lam2 + self.children_sums(part, int(rows[b]), int(cols[b])))
        return self.delta

    def child_deltas(self, su: np.ndarray, sv: np.ndarray, pairs: np.ndarray) -> np.ndarray:
        """Delta of child pairs with equal labels (child slots su, sv of tree pairs ``pairs``), as the
        reference's child_delta: closed forms, else the Delta found in its group."""
        f, g = self.f, self.g
        ku, kv = f.child_kind[su], f.child_kind[sv]
        d = np.full(len(su), self.leaf_value)
        both_unary = (ku == 1) & (kv == 1)
        d[both_unary] = np.where(f.child_word[su[both_unary]] == f.child_word[sv[both_unary]],
                                 self.unary_same, self.leaf_value)
        inner = np.flatnonzero((ku > 0) & (kv > 0) & ~both_unary)
        if len(inner):
            su, sv = su[inner], sv[inner]
            k = np.searchsorted(g.keys, pairs[inner] * f.n_labels + f.child_label[su])
            r, s = f.child_rank[su], f.child_rank[sv]
            found = g.start[k] + np.where(r < g.n_l[k], r * g.c_r[k] + s, g.first[k] + (r - g.n_l[k]) * g.n_r[k] + s)
            d[inner] = self.delta[found]
        return d

    def children_sums(self, nodes: np.ndarray, rows: int, cols: int) -> np.ndarray:
        """sum_p Delta_p over the children of the node pairs ``nodes`` (at most rows x cols children; 0 x 0 if
        one side has a single child), by the reference's dynamic programme, the pairs side by side."""
        f, ptr = self.f, self.f.child_ptr
        uu, vv = self.g.u[nodes], self.g.v[nodes]
        n_u, n_v = ptr[uu + 1] - ptr[uu], ptr[vv + 1] - ptr[vv]
        pairs = self.g.pair_of[nodes]
        if not rows:
            # one child on a side: subsequences of length 1 only, T = Delta, added row by row
            cells, owner = _ranges(np.zeros(len(nodes), dtype=np.int64), n_u * n_v)
            width = n_v[owner]
            x = cells // width
            su, sv = ptr[uu][owner] + x, ptr[vv][owner] + (cells - x * width)
            same = np.flatnonzero(f.child_label[su] == f.child_label[sv])
            d = self.child_deltas(su[same], sv[same], pairs[owner[same]])
            return np.bincount(owner[same], weights=d, minlength=len(nodes))
        # the child pairs with equal labels: children listed by (node pair, label) on each side, merged
        at_l, owner_l = _ranges(ptr[uu], n_u)
        at_r, owner_r = _ranges(ptr[vv], n_v)
        slots_l, slots_r = f.child_by_label[at_l], f.child_by_label[at_r]
        a, b = _equal_key_pairs(owner_l * f.n_labels + f.child_label[slots_l],
                                owner_r * f.n_labels + f.child_label[slots_r])
        su, sv, owner = slots_l[a], slots_r[b], owner_l[a]
        d = self.child_deltas(su, sv, pairs[owner])
        # the children's Deltas in (rows + 1) x (cols + 1) tables with a zero border, one row per node pair
        w = cols + 1
        size = (rows + 1) * w
        dd = np.zeros((len(nodes), size))
        dd.reshape(-1)[owner * size + (su - ptr[uu][owner] + 1) * w + (sv - ptr[vv][owner] + 1)] = d
        return _anti_diagonal_sums(dd, rows, cols, self.lam, self.lam2)
