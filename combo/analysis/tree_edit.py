"""A tree-edit-distance similarity of trees.

The edit distance is Zhang & Shasha's (1989) with unit costs (insert, delete,
relabel), equal to ``zss.distance`` with those costs, turned into a
similarity ``1 - TED / (|a| + |b|)`` (|t| = number of nodes; TED <= |a| + |b|).
"""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np

from combo.errors import OptionError
from combo.analysis.tree_type import Tree


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
