"""One ordered, labelled tree type and its builders.

A :class:`Tree` is stored flat, in pre-order: ``labels[i]`` and ``arities[i]``
(number of children) of node ``i``. The pair of tuples fully determines the
tree, so equality and hashing are tuple operations (by content, no recursion)
and a subtree is a slice. Leaves are nodes without children; in a parse tree
they are the words. Everything a kernel needs (children lists, productions,
post-order, integer ids of labels and productions) is derived once per tree
and id scope and cached in :attr:`Tree.index`.

Builders: Penn bracketed strings and files (:func:`parse_bracketed`,
:func:`read_bracketed`), CoNLL-U dependency blocks (:func:`from_dependencies`,
:func:`read_conllu`), shallow parses with BIO chunk tags (:func:`from_chunks`),
and the five representation variants in the spirit of DiscoTK
(:func:`variant`). Every traversal is iterative: a 1,000-token sentence never
meets Python's recursion limit.
"""

from __future__ import annotations

import re
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import ContextManager, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from combo.analysis.scope import run_scope
from combo.errors import InputError

try:
    from . import _trees as _compiled  # built from _trees.c at install where a C compiler is found (setup.py)
except ImportError:  # pragma: no cover - no compiler at install
    _compiled = None

__all__ = [
    "Tree", "TreeIndex", "EMPTY_TREE", "parse_bracketed", "read_bracketed",
    "from_dependencies", "read_conllu", "from_chunks", "variant", "VARIANTS",
    "label_id", "TreeIds", "tree_ids", "current_tree_ids", "SPLIT_LABEL", "PROPAGATION_SEPARATOR",
]


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


# ---------------------------------------------------------------------------
# Penn bracketed trees
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


class _BracketReader:
    """Pre-order builder fed token by token, so that errors know their line.

    Accepted: ``(LABEL child ...)`` nodes, bare words as leaves, ``(LABEL)`` as
    a leaf, a nameless outer bracket around exactly one tree (the Penn Treebank
    convention, removed), and ``()`` at top level for the empty tree.
    """

    def __init__(self, path: Optional[str]):
        self.path = path
        self.trees: List[Tuple[Tree, int]] = []  # (tree, line where it starts)
        self._reset()

    def _reset(self) -> None:
        self.labels: List[str] = []
        self.arities: List[int] = []
        self.stack: List[int] = []  # open node ids; -1: the nameless outer bracket
        self.wrapper_children = 0
        self.expect_label = False
        self.start_line = 0

    def error(self, message: str, line: int) -> InputError:
        return InputError(message, path=self.path or "<string>", line=line,
                          fix="write each tree as (LABEL child ...) with balanced parentheses")

    @property
    def open(self) -> bool:
        return bool(self.stack) or self.expect_label

    def feed(self, token: str, line: int) -> None:
        if self.expect_label:
            self.expect_label = False
            if token == "(" and not self.stack and not self.labels:
                self.stack.append(-1)  # nameless outer bracket: "( (S ...) )"
                self.expect_label = True
                return
            if token == ")":
                if not self.stack and not self.labels:
                    self._finish(EMPTY_TREE)  # "()" at top level
                    return
                raise self.error("empty label: '()' inside a tree", line)
            if token == "(":
                raise self.error("empty label: '(' follows '(' inside a tree", line)
            self._add(token, line)
            self.stack.append(len(self.labels) - 1)
            return
        if token == "(":
            if not self.stack:
                self.start_line = line
            self.expect_label = True
        elif token == ")":
            if not self.stack:
                raise self.error("unbalanced ')' outside any tree", line)
            node = self.stack.pop()
            if node == -1:
                if self.wrapper_children != 1:
                    raise self.error("a bracket without label must hold exactly one tree, "
                                     f"it holds {self.wrapper_children}", line)
            if not self.stack:
                self._finish(Tree.from_preorder(self.labels, self.arities, validate=False))
        else:
            if not self.stack:
                raise self.error(f"text outside brackets: {token!r}", line)
            if self.stack[-1] == -1:
                raise self.error(f"a word directly inside a bracket without label: {token!r}", line)
            self._add(token, line)

    def _add(self, label: str, line: int) -> None:
        parent = self.stack[-1] if self.stack else None
        if parent == -1:
            self.wrapper_children += 1
            if self.wrapper_children > 1:
                raise self.error("a bracket without label must hold exactly one tree", line)
        elif parent is not None:
            self.arities[parent] += 1
        self.labels.append(label)
        self.arities.append(0)

    def _finish(self, tree: Tree) -> None:
        self.trees.append((tree, self.start_line))
        self._reset()


def parse_bracketed(text: str) -> Tree:
    """One Penn bracketed tree, e.g. ``"(S (NP (DT the) (NN cat)) (VP (VBD sat)))"``.

    Empty or blank text and ``"()"`` give the empty tree. Raises InputError
    (naming the line within ``text``) on unbalanced parentheses, empty labels,
    words outside brackets or several trees.
    """
    reader = _BracketReader(None)
    for number, line in enumerate(text.split("\n"), 1):
        for token in _TOKEN.findall(line):
            if token == "(" and reader.trees and not reader.open:
                raise reader.error("more than one tree in the text", number)
            reader.feed(token, number)
    if reader.open:
        raise reader.error("the tree is not closed (missing ')')", reader.start_line or 1)
    return reader.trees[0][0] if reader.trees else EMPTY_TREE


def read_bracketed(path: Union[str, Path], multiline: bool = False,
                   encoding: str = "utf-8") -> List[Tree]:
    """Trees of a Penn bracketed file.

    ``multiline=False``: one tree per line, a blank line (or ``()``) is the
    empty tree, so line ``k`` is segment ``k``. ``multiline=True``: trees may
    span lines and follow each other freely; blank lines separate nothing.
    Errors name the file and the line (for an unclosed tree, the line where it
    starts).
    """
    path = Path(path)
    reader = _BracketReader(str(path))
    trees: List[Tree] = []
    with path.open(encoding=encoding) as handle:
        number = 0
        for number, line in enumerate(handle, 1):
            tokens = _TOKEN.findall(line)
            if not multiline:
                before = len(reader.trees)
                if not tokens:
                    trees.append(EMPTY_TREE)
                    continue
                reader.start_line = number
                for token in tokens:
                    if token == "(" and len(reader.trees) > before and not reader.open:
                        raise reader.error("more than one tree on the line", number)
                    reader.feed(token, number)
                if reader.open:
                    raise reader.error("the tree is not closed on its line (missing ')'; "
                                       "use multiline=True for trees spanning lines)", number)
                trees.append(reader.trees[-1][0])
            else:
                for token in tokens:
                    reader.feed(token, number)
        if multiline:
            if reader.open:
                raise reader.error("the tree starting here is not closed (missing ')')",
                                   reader.start_line)
            trees = [t for t, _ in reader.trees]
    return trees


# ---------------------------------------------------------------------------
# Dependency trees
# ---------------------------------------------------------------------------

def from_dependencies(words: Sequence[str], heads: Sequence[int], relations: Sequence[str],
                      pos: Optional[Sequence[str]] = None, path: Optional[str] = None,
                      lines: Optional[Sequence[int]] = None) -> Tree:
    """Dependency tree with one node per token, labelled by its relation.

    ``heads`` are 1-based as in CoNLL-U (0 = the root). The node of token t is
    labelled ``relations[t]``; its children are, left to right, the nodes of
    its dependents before it, then ``(POS word)`` for the token itself, then
    its dependents after it (Croce et al. 2011's grammatical-relation-centred
    shape). "the cat sat" with det(cat, the), nsubj(sat, cat), root(sat):
    ``(root (nsubj (det (DT the)) (NN cat)) (VBD sat))``. Without ``pos`` the
    word hangs directly under its relation node. Several roots are joined under
    a node ``ROOT``. No tokens: the empty tree. Heads out of range or cycles
    raise InputError (with ``path`` and the token's line from ``lines``).
    """
    n = len(words)
    if not (len(heads) == len(relations) == n) or (pos is not None and len(pos) != n):
        raise InputError("words, heads, relations (and pos) must have the same length", path)

    def fail(message: str, token: int) -> InputError:
        line = lines[token] if lines is not None else None
        return InputError(message, path=path, line=line,
                          fix="each head must be 0 (root) or the id of another token, without cycles")

    if n == 0:
        return EMPTY_TREE
    if _compiled is not None:  # the same labels and child counts, or None for input the code below refuses
        built = _compiled.dependency_preorder(words, heads, relations, pos)
        if built is not None:
            return Tree._of_tuples(*built)
    before: List[List[int]] = [[] for _ in range(n + 1)]  # the dependents left of each head (0: the root)
    after: List[List[int]] = [[] for _ in range(n + 1)]  # and right of it
    for t, h in enumerate(map(int, heads), 1):
        if h < 0 or h > n or h == t:
            raise fail(f"token {t} ({words[t - 1]!r}) has head {h}, outside 0..{n} or itself", t - 1)
        (before if t < h else after)[h].append(t)
    roots = after[0]
    if not roots:
        raise fail("no token has head 0: the heads form a cycle", 0)
    labels: List[str] = []
    arities: List[int] = []
    if len(roots) > 1:
        labels.append("ROOT")
        arities.append(len(roots))
    # a stack of the tokens to visit (t) and of the tokens whose (POS word) comes next (-t)
    stack = roots[::-1]
    push, pop = stack.extend, stack.pop
    emit, emit_arity = labels.append, arities.append
    visited = 0
    while stack:
        t = pop()
        if t < 0:
            if pos is not None:
                labels.extend((pos[-t - 1], words[-t - 1]))
                arities.extend((1, 0))
            else:
                emit(words[-t - 1])
                emit_arity(0)
            continue
        visited += 1
        left, right = before[t], after[t]
        emit(relations[t - 1])
        emit_arity(len(left) + len(right) + 1)
        push(right[::-1])
        stack.append(-t)
        push(left[::-1])
    _check_labels(labels)
    if visited != n:
        unreached = next(t for t in range(n) if not _reaches_root(heads, t))
        raise fail(f"token {unreached + 1} ({words[unreached]!r}) is on a head cycle", unreached)
    return Tree.from_preorder(labels, arities, validate=False)


def _reaches_root(heads: Sequence[int], t: int) -> bool:
    seen = set()
    node = t + 1
    while node != 0:
        if node in seen:
            return False
        seen.add(node)
        node = int(heads[node - 1])
    return True


def read_conllu(path: Union[str, Path], pos: str = "upos",
                encoding: str = "utf-8") -> List[Tree]:
    """Dependency trees (:func:`from_dependencies`) of a CoNLL-U file, one per sentence.

    Comment lines (``#``), multiword-token ranges (``1-2``) and empty nodes
    (``1.1``) are skipped. ``pos`` is ``"upos"``, ``"xpos"`` or ``None`` (no
    POS node). Errors name the file and line.
    """
    if pos not in ("upos", "xpos", None):
        raise InputError(f"pos must be 'upos', 'xpos' or None, got {pos!r}")
    path = Path(path)
    trees: List[Tree] = []
    rows: List[Tuple[int, List[str]]] = []

    def flush() -> None:
        if not rows:
            return
        for k, (line, cols) in enumerate(rows):
            if cols[0] != str(k + 1):
                raise InputError(f"token id {cols[0]!r} where {k + 1} was expected",
                                 str(path), line, fix="number the tokens of a sentence 1, 2, 3...")
        heads = []
        for line, cols in rows:
            try:
                heads.append(int(cols[6]))
            except ValueError:
                raise InputError(f"head {cols[6]!r} is not an integer", str(path), line) from None
        tags = None if pos is None else [c[3 if pos == "upos" else 4] for _, c in rows]
        trees.append(from_dependencies([c[1] for _, c in rows], heads, [c[7] for _, c in rows],
                                       tags, path=str(path), lines=[ln for ln, _ in rows]))
        rows.clear()

    with path.open(encoding=encoding) as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                flush()
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise InputError(f"a CoNLL-U token line has 10 tab-separated columns, "
                                 f"this one has {len(cols)}", str(path), number)
            if "-" in cols[0] or "." in cols[0]:
                continue
            rows.append((number, cols))
        flush()
    return trees


# ---------------------------------------------------------------------------
# Shallow parses
# ---------------------------------------------------------------------------

def from_chunks(words: Sequence[str], pos: Sequence[str], chunks: Sequence[str],
                root: str = "S") -> Tree:
    """Tree sentence -> chunk -> POS -> word from BIO chunk tags.

    ``B-X`` opens a chunk X, ``I-X`` continues an open chunk X (and opens one
    when none of type X is open, as conlleval does), ``O`` is outside any
    chunk: its ``(POS word)`` hangs directly under the sentence node.
    ``["the", "cat", "sat", "."]``, ``["DT", "NN", "VBD", "."]``,
    ``["B-NP", "I-NP", "B-VP", "O"]`` gives
    ``(S (NP (DT the) (NN cat)) (VP (VBD sat)) (. .))``. No tokens: the empty tree.
    """
    if not (len(words) == len(pos) == len(chunks)):
        raise InputError("words, POS tags and chunk tags must have the same length")
    if not words:
        return EMPTY_TREE
    if _compiled is not None:  # the same labels and child counts, or None for input the code below refuses
        built = _compiled.chunk_preorder(words, pos, chunks, root)
        if built is not None:
            return Tree._of_tuples(*built)
    labels: List[str] = [_check_label(root)]
    arities: List[int] = [0]
    current: Optional[str] = None
    chunk_node = -1
    for word, tag, chunk in zip(words, pos, chunks):
        if chunk == "O":
            current = None
            arities[0] += 1
        else:
            prefix, _, kind = chunk.partition("-")
            if prefix not in ("B", "I") or not kind:
                raise InputError(f"chunk tag {chunk!r} is not B-X, I-X or O")
            if prefix == "B" or kind != current:
                current = kind
                arities[0] += 1
                chunk_node = len(labels)
                labels.append(kind)
                arities.append(0)
            arities[chunk_node] += 1
        labels.append(_check_label(tag))
        arities.append(1)
        labels.append(_check_label(word))
        arities.append(0)
    return Tree.from_preorder(labels, arities, validate=False)


# ---------------------------------------------------------------------------
# Representation variants (in the spirit of DiscoTK's five)
# ---------------------------------------------------------------------------

SPLIT_LABEL = "*"
PROPAGATION_SEPARATOR = "/"
VARIANTS = ("nolex", "lex1", "lex1.1", "lex2", "lex2.1")


def variant(tree: Tree, name: str) -> Tree:
    """The tree in one of five representations, named after DiscoTK's.

    Joty et al. (2014) and Guzmán et al. (2014) score discourse trees under
    five representations (DR-NOLEX, DR-LEX1, DR-LEX1.1, DR-LEX2, DR-LEX2.1);
    these are our generic counterparts for any labelled tree whose leaves are
    words:

    - ``nolex``: without lexical leaves: every leaf is removed, so POS (or
      EDU) nodes become the leaves.
    - ``lex1``: with the lexical leaves (the tree itself).
    - ``lex1.1``: labels propagated to the leaves: each word becomes
      ``G/word`` with G the label of its grandparent (the phrase, chunk,
      dependency relation or discourse relation above its POS node; the parent
      when there is no grandparent).
    - ``lex2``: structure separated from labels: every internal node is
      relabelled ``*`` and gets its former label as a new first leaf child, so
      a production matches on shape and on its own label, not on the
      children's labels.
    - ``lex2.1``: ``lex1.1`` then ``lex2``.
    """
    key = name.lower()
    if key not in VARIANTS:
        raise InputError(f"unknown tree variant {name!r}; choose one of {', '.join(VARIANTS)}")
    if not tree.labels or key == "lex1":
        return tree
    if key == "nolex":
        return _without_leaves(tree)
    if key == "lex1.1":
        return _propagated(tree)
    if key == "lex2":
        return _split(tree)
    return _split(_propagated(tree))


def _without_leaves(tree: Tree) -> Tree:
    index = tree.index
    arities = tree.arities
    kept = [i for i in range(len(arities)) if arities[i]]
    return Tree.from_preorder([tree.labels[i] for i in kept],
                              [sum(1 for c in index.children[i] if arities[c]) for i in kept],
                              validate=False)


def _propagated(tree: Tree) -> Tree:
    index = tree.index
    labels = list(tree.labels)
    for i, arity in enumerate(tree.arities):
        if arity:
            continue
        parent = index.parent[i]
        if parent < 0:
            continue
        above = index.parent[parent]
        source = tree.labels[above if above >= 0 else parent]
        labels[i] = source + PROPAGATION_SEPARATOR + labels[i]
    return Tree.from_preorder(labels, tree.arities, validate=False)


def _split(tree: Tree) -> Tree:
    labels: List[str] = []
    arities: List[int] = []
    for lab, arity in zip(tree.labels, tree.arities):
        if arity:
            labels.extend((SPLIT_LABEL, lab))
            arities.extend((arity + 1, 0))
        else:
            labels.append(lab)
            arities.append(0)
    return Tree.from_preorder(labels, arities, validate=False)
