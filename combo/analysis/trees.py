"""One ordered, labelled tree type and its builders.

The tree type (:class:`Tree`, stored flat in pre-order, its :class:`TreeIndex` and the integer ids of
labels and productions) is in :mod:`combo.analysis.tree_type`; the representation variants
(:func:`variant`) in :mod:`combo.analysis.tree_variants`. This module gives all their names.

Builders here: Penn bracketed strings and files (:func:`parse_bracketed`,
:func:`read_bracketed`), CoNLL-U dependency blocks (:func:`from_dependencies`,
:func:`read_conllu`), shallow parses with BIO chunk tags (:func:`from_chunks`).
The five representation variants in the spirit of DiscoTK are :func:`variant`.
Every traversal is iterative: a 1,000-token sentence never meets Python's recursion limit.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from combo.errors import InputError
from combo.analysis.tree_type import (EMPTY_TREE, Tree, TreeIds, TreeIndex, _check_label, _check_labels,
                                      current_tree_ids, label_id, tree_ids)
from combo.analysis.tree_variants import PROPAGATION_SEPARATOR, SPLIT_LABEL, VARIANTS, variant

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
