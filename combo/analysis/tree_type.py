"""One ordered, labelled tree type, its index, and the integer ids of labels and productions.

A :class:`Tree` is stored flat, in pre-order: ``labels[i]`` and ``arities[i]``
(number of children) of node ``i``. The pair of tuples fully determines the
tree, so equality and hashing are tuple operations (by content, no recursion)
and a subtree is a slice. Leaves are nodes without children; in a parse tree
they are the words. Everything a kernel needs (children lists, productions,
post-order, integer ids of labels and productions) is derived once per tree
and id scope and cached in :attr:`Tree.index`. Every traversal is iterative:
a 1,000-token sentence never meets Python's recursion limit.

The builders are in :mod:`combo.analysis.trees`, which gives these names too.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import ContextManager, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from combo.analysis.scope import run_scope
from combo.errors import InputError

__all__ = ["Tree", "TreeIndex", "EMPTY_TREE", "label_id", "TreeIds", "tree_ids", "current_tree_ids"]


# ---------------------------------------------------------------------------
# Integer ids of labels and productions, shared by the trees of one scope
# ---------------------------------------------------------------------------

class TreeIds:
    """Integer ids of labels and productions, numbered in order of first appearance.

    The trees compared in one computation must share one numbering. The numbering
    is scoped (:func:`tree_ids`): scoring opens a fresh one for each metric it
    runs and a metric's public methods open one when none is open, so the ids, and
    the order in which kernels sum over them, never depend on what else the
    process scored before (a kernel score is then the same to the last digit
    whatever ran first, and with any number of worker processes).
    """

    __slots__ = ("labels", "productions", "lock")

    def __init__(self) -> None:
        self.labels: Dict[str, int] = {}
        self.productions: Dict[Tuple[int, Tuple[int, ...]], int] = {}
        self.lock = threading.Lock()

    def intern(self, table: dict, key) -> int:
        found = table.get(key)
        if found is None:
            with self.lock:
                found = table.setdefault(key, len(table))
        return found

    def label_id(self, label: str) -> int:
        return self.intern(self.labels, label)


#: The numbering in use; set only inside :func:`tree_ids`. Outside any scope (a kernel called on two trees
#: directly) each tree is indexed with :data:`_UNSCOPED`, the one numbering such direct calls share.
_IDS: ContextVar[Optional[TreeIds]] = ContextVar("combo_tree_ids", default=None)
_UNSCOPED = TreeIds()


def current_tree_ids() -> TreeIds:
    return _IDS.get() or _UNSCOPED


def tree_ids(fresh: bool = False) -> ContextManager[TreeIds]:
    """A label and production numbering for the trees of the ``with`` body: the one already open (a new one if
    none is, or with ``fresh``); trees indexed under another numbering are indexed again."""
    return run_scope(_IDS, TreeIds, fresh)


def label_id(label: str) -> int:
    """The integer id of a label in the numbering in use (the same string gets the same id in every tree)."""
    return current_tree_ids().label_id(label)


_ONE_CHILD_MAX = 4096
_ONE_CHILD = tuple((c,) for c in range(_ONE_CHILD_MAX))  # the children of one-child nodes, shared (immutable)


class _Built:
    """An attribute of :class:`TreeIndex` made by its ``_build``, with the others, the first time one is read
    (kept in the slot of the same name with a leading underscore)."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, index, owner=None):
        if index is None:
            return self
        if index._children is None:
            index._build()
        return getattr(index, self.slot)


class TreeIndex:
    """Derived, cached data of one tree; node ``i`` is the ``i``-th in pre-order.

    ``children[i]`` (tuple of node ids), ``parent[i]`` (-1 at the root),
    ``end[i]`` (the subtree of ``i`` is nodes ``i..end[i]-1``), ``height[i]``
    (0 for a leaf), ``label_ids[i]``, ``production_ids[i]`` (-1 for a leaf: the
    production of a node is its label with the ordered labels of its children,
    each child marked leaf or not), ``postorder`` (node ids, children before
    parents, left to right), ``by_production`` / ``by_label`` (id -> node ids),
    split into ``preterminal_counts`` (production id -> number of pre-terminals,
    nodes whose children are all leaves) and ``phrasal_by_production`` (the
    other internal nodes),
    ``cache`` (a dict where other modules keep what they derive from the tree).
    Since children have larger pre-order ids than their parent, visiting nodes
    by decreasing id is a valid dynamic-programming order. ``label_ids``,
    ``arities`` and ``cache`` are made with the index, the rest on first use
    (the batched kernels derive what they need from the first two, in numpy).
    """

    __slots__ = ("ids", "n", "label_ids", "arities", "cache", "_children", "_parent", "_end", "_height",
                 "_production_ids", "_preterminal_counts", "_phrasal_by_production",
                 "_by_production", "_by_label", "_postorder")

    def __init__(self, labels: Tuple[str, ...], arities: Tuple[int, ...], numbering: Optional[TreeIds] = None):
        numbering = self.ids = numbering or current_tree_ids()
        self.n = len(labels)
        get = numbering.labels.get
        ids = list(map(get, labels))
        if None in ids:  # new labels: numbered in order, under one hold of the lock
            table = numbering.labels
            with numbering.lock:
                ids = [table.setdefault(s, len(table)) for s in labels]
        self.label_ids = ids
        self.arities = arities
        self.cache: dict = {}  # other modules' derived data (e.g. edit-distance tables)
        self._children: Optional[List[Tuple[int, ...]]] = None  # the structure, built on first use (_build)
        self._by_production: Optional[Dict[int, List[int]]] = None
        self._by_label: Optional[Dict[int, List[int]]] = None
        self._postorder: Optional[List[int]] = None

    def _build(self) -> None:
        """Children, parents, subtree ends, heights and productions, in one right-to-left pass (label ids
        and the cache are made at once: the batched PTK reads only them and the arities)."""
        n, ids, arities, numbering = self.n, self.label_ids, self.arities, self.ids
        children: List[Tuple[int, ...]] = [()] * n
        parent = [-1] * n
        end = list(range(1, n + 1))
        height = [0] * n
        prods = [-1] * n
        codes = [x + x + (not a) for x, a in zip(ids, arities)]  # a child in a production: label, leaf or not
        productions = numbering.productions
        get_prod = productions.get
        one = _ONE_CHILD
        # right to left, the roots of the subtrees already done on a stack (the nearest last): the children
        # of i are the top arity[i] of them
        stack: List[int] = []
        push, pop = stack.append, stack.pop
        for i in range(n - 1, -1, -1):
            arity = arities[i]
            if not arity:
                push(i)
                continue
            if arity == 1:
                c = pop()
                children[i] = one[c] if c < _ONE_CHILD_MAX else (c,)
                parent[c] = i
                end[i] = end[c]
                height[i] = height[c] + 1
                key = (ids[i], (codes[c],))
            else:
                kids = children[i] = tuple(stack[:-arity - 1:-1])
                if len(kids) < arity:
                    raise InputError("the pre-order sequence ends before every node has its children")
                del stack[-arity:]
                h = 0
                for c in kids:
                    parent[c] = i
                    if height[c] > h:
                        h = height[c]
                end[i] = end[c]
                height[i] = h + 1
                key = (ids[i], tuple([codes[c] for c in kids]))
            p = get_prod(key)
            prods[i] = p if p is not None else numbering.intern(productions, key)
            push(i)
        pre: Dict[int, int] = {}
        phrasal: Dict[int, List[int]] = {}
        for i, p in enumerate(prods):
            if p < 0:
                continue
            if height[i] == 1:
                pre[p] = pre.get(p, 0) + 1
            else:
                phrasal.setdefault(p, []).append(i)
        self._parent, self._end, self._height, self._production_ids = parent, end, height, prods
        self._preterminal_counts, self._phrasal_by_production = pre, phrasal
        self._children = children

    # the structure _build makes on first use, all at once
    children = _Built()
    parent = _Built()
    end = _Built()
    height = _Built()
    production_ids = _Built()
    preterminal_counts = _Built()
    phrasal_by_production = _Built()

    @property
    def by_production(self) -> Dict[int, List[int]]:
        """Production id -> internal nodes with that production, in pre-order."""
        if self._by_production is None:
            table: Dict[int, List[int]] = {}
            for i, p in enumerate(self.production_ids):
                if p >= 0:
                    table.setdefault(p, []).append(i)
            self._by_production = table
        return self._by_production

    @property
    def by_label(self) -> Dict[int, List[int]]:
        """Label id -> nodes with that label, in pre-order."""
        if self._by_label is None:
            table: Dict[int, List[int]] = {}
            for i, s in enumerate(self.label_ids):
                table.setdefault(s, []).append(i)
            self._by_label = table
        return self._by_label

    @property
    def postorder(self) -> List[int]:
        """Node ids in post-order (each node after its children, siblings left to right)."""
        if self._postorder is None:
            order: List[int] = []
            if self.n:
                stack = [(0, False)]
                children = self.children
                while stack:
                    node, expanded = stack.pop()
                    if expanded or not children[node]:
                        order.append(node)
                    else:
                        stack.append((node, True))
                        stack.extend((c, False) for c in reversed(children[node]))
            self._postorder = order
        return self._postorder


# ---------------------------------------------------------------------------
# The tree type
# ---------------------------------------------------------------------------

class Tree:
    """Immutable ordered labelled tree, hashable by content.

    Build it nested, ``Tree("NP", [Tree("D", ["a"]), Tree("N", ["cat"])])``
    (a child given as a string is a leaf), or with a builder. ``Tree.empty()``
    is the tree with no node (an empty sentence).
    """

    __slots__ = ("labels", "arities", "_hash", "_index")

    def __init__(self, label: str, children: Iterable[Union["Tree", str]] = ()):
        labels: List[str] = [_check_label(label)]
        arities: List[int] = [0]
        for child in children:
            if isinstance(child, Tree):
                if not child.labels:
                    continue  # an empty tree adds no child
                labels.extend(child.labels)
                arities.extend(child.arities)
            else:
                labels.append(_check_label(child))
                arities.append(0)
            arities[0] += 1
        self._set(tuple(labels), tuple(arities))

    def _set(self, labels: Tuple[str, ...], arities: Tuple[int, ...]) -> None:
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "arities", arities)
        object.__setattr__(self, "_hash", hash((labels, arities)))
        object.__setattr__(self, "_index", None)

    @classmethod
    def from_preorder(cls, labels: Sequence[str], arities: Sequence[int],
                      validate: bool = True) -> "Tree":
        """The tree whose pre-order labels and child counts are given."""
        labels, arities = tuple(labels), tuple(map(int, arities))
        if validate:
            if len(labels) != len(arities):
                raise InputError("labels and arities differ in length")
            for s in labels:
                _check_label(s)
            open_count = 1 if labels else 0
            for a in arities:
                if a < 0:
                    raise InputError("a node cannot have a negative number of children")
                if open_count == 0:
                    raise InputError("the pre-order sequence holds more than one tree")
                open_count += a - 1
            if open_count:
                raise InputError("the pre-order sequence ends before every node has its children")
        return cls._of_tuples(labels, arities)

    @classmethod
    def _of_tuples(cls, labels: Tuple[str, ...], arities: Tuple[int, ...]) -> "Tree":
        """The tree of pre-order ``labels`` and child counts ``arities`` (tuples of str and int) that are
        known to be one tree (what ``_trees.c`` returns, or :meth:`from_preorder` has checked)."""
        tree = cls.__new__(cls)
        tree._set(labels, arities)
        return tree

    @classmethod
    def empty(cls) -> "Tree":
        """The tree with no node."""
        return EMPTY_TREE

    def __setattr__(self, name, value):
        raise AttributeError("Tree is immutable")

    def __reduce__(self):  # ids in the index are per process: never pickle them
        return (Tree.from_preorder, (self.labels, self.arities, False))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, Tree):
            return NotImplemented
        return (self._hash == other._hash and self.arities == other.arities
                and self.labels == other.labels)

    def __len__(self) -> int:
        """Number of nodes."""
        return len(self.labels)

    def __bool__(self) -> bool:
        return bool(self.labels)

    @property
    def index(self) -> TreeIndex:
        """Derived data (children, productions, post-order, ids), built once per numbering (:func:`tree_ids`)."""
        index, numbering = self._index, current_tree_ids()
        if index is None or index.ids is not numbering:
            index = TreeIndex(self.labels, self.arities, numbering)
            object.__setattr__(self, "_index", index)
        return index

    @property
    def label(self) -> Optional[str]:
        """Label of the root (None for the empty tree)."""
        return self.labels[0] if self.labels else None

    @property
    def children(self) -> Tuple["Tree", ...]:
        """Subtrees of the root's children (built on demand)."""
        if not self.labels:
            return ()
        index = self.index
        return tuple(self.subtree(c) for c in index.children[0])

    def subtree(self, node: int) -> "Tree":
        """The subtree rooted at pre-order node ``node``."""
        end = self.index.end[node]
        return Tree.from_preorder(self.labels[node:end], self.arities[node:end], validate=False)

    def is_leaf(self) -> bool:
        return len(self.labels) == 1

    def leaves(self) -> List[str]:
        """Labels of the leaves, left to right (the words of a parse tree)."""
        return [s for s, a in zip(self.labels, self.arities) if not a]

    def height(self) -> int:
        """Edges on the longest root-to-leaf path (0 for a leaf, -1 for the empty tree)."""
        return self.index.height[0] if self.labels else -1

    def productions(self) -> List[Tuple[str, Tuple[str, ...]]]:
        """``(label, child labels)`` of each internal node, in pre-order."""
        index = self.index
        labels = self.labels
        return [(labels[i], tuple(labels[c] for c in index.children[i]))
                for i in range(len(labels)) if index.children[i]]

    def to_bracketed(self) -> str:
        """Penn bracketed string; ``(`` and ``)`` inside labels are written -LRB- / -RRB-."""
        if not self.labels:
            return "()"
        if len(self.labels) == 1:
            return "(" + _escape(self.labels[0]) + ")"
        out: List[str] = []
        remaining: List[int] = []
        for k, (lab, arity) in enumerate(zip(self.labels, self.arities)):
            if k:
                out.append(" ")
            if arity:
                out.append("(" + _escape(lab))
                remaining.append(arity)
                continue
            out.append(_escape(lab))
            while remaining:
                remaining[-1] -= 1
                if remaining[-1]:
                    break
                remaining.pop()
                out.append(")")
        return "".join(out)

    __str__ = to_bracketed

    def __repr__(self) -> str:
        text = self.to_bracketed()
        if len(text) > 80:
            text = text[:77] + "..."
        return f"Tree({text!r})"


def _check_label(label) -> str:
    if not isinstance(label, str) or not label:
        raise InputError(f"a tree label must be a non-empty string, got {label!r}")
    return label


def _check_labels(labels: List) -> None:
    """:func:`_check_label` of each label (the first bad one raises), the common case at C speed."""
    if set(map(type, labels)) <= {str} and "" not in labels:
        return
    for s in labels:
        _check_label(s)


def _escape(label: str) -> str:
    return label.replace("(", "-LRB-").replace(")", "-RRB-")


EMPTY_TREE = Tree.from_preorder((), ())
