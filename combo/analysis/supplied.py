"""Trees supplied from any parser (Penn bracketed, CoNLL-U), scoped to the test bed they parse.

A test bed's :attr:`~combo.testbed.Testbed.trees` (a :class:`~combo.testbed.SuppliedTrees`) holds
them; scoring puts them in use for the run (:func:`using_trees`) and metrics read the trees in use
with :func:`supplied_trees`. Nothing is kept in the process between runs: after one test bed is
scored, another with other trees (or none) never sees the first one's.

Scoring a metric directly, without a test bed::

    trees = SuppliedTrees()
    trees.add("constituents", texts, parsed)        # or supply_tree_files(trees, kind, texts_path, trees_path)
    with using_trees(trees):
        get_metric("cp-stm:trees=supplied").segment_scores(hyps, refs)
"""

from __future__ import annotations

import unicodedata
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from ..errors import InputError
from ..io.text import read_lines
from ..testbed import SuppliedTrees
from .trees import read_bracketed, read_conllu

__all__ = ["SuppliedTrees", "supplied_table", "supplied_trees", "supply_tree_files", "trees_in_use", "using_trees"]

#: The trees of the test bed being scored; set only inside :func:`using_trees`.
_IN_USE: ContextVar[Optional[SuppliedTrees]] = ContextVar("combo_supplied_trees", default=None)


@contextmanager
def using_trees(trees: Optional[SuppliedTrees]) -> Iterator[Optional[SuppliedTrees]]:
    """Put ``trees`` in use for the body of the ``with`` (None: no supplied trees); the previous set after it."""
    token = _IN_USE.set(trees)
    try:
        yield trees
    finally:
        _IN_USE.reset(token)


def trees_in_use() -> Optional[SuppliedTrees]:
    return _IN_USE.get()


def supplied_table(kind: str) -> dict:
    """The supplied ``kind`` trees in use, by text (empty when none are)."""
    trees = trees_in_use()
    return trees.tables.get(kind, {}) if trees is not None else {}


def supplied_trees(kind: str, texts: Sequence[str]) -> list:
    """The supplied ``kind`` tree of each text, from the trees in use; InputError naming the first text without one."""
    return (trees_in_use() or SuppliedTrees()).get(kind, texts)


def supply_tree_files(trees_of: SuppliedTrees, kind: str, texts_path, trees_path) -> int:
    """Add the trees of ``trees_path`` for the lines of ``texts_path``, line by line, to ``trees_of`` (a test bed's
    :attr:`~combo.testbed.Testbed.trees`).

    A ``.conllu`` file is read as CoNLL-U (one sentence block per text line),
    any other as Penn bracketed trees, one per line. Returns the number of texts.
    """
    texts = read_lines(texts_path)
    path = Path(trees_path)
    lines = read_lines(path, allow_empty=True)  # a missing, unreadable or non-UTF-8 file: one error naming it
    conllu = path.suffix.lower() == ".conllu"
    trees = read_conllu(path) if conllu else read_bracketed(path)
    if len(trees) != len(texts):
        raise InputError(f"{len(trees)} trees for the {len(texts)} lines of {texts_path}", str(trees_path),
                         fix="give exactly one tree per line of the text file, in the same order")
    spelled = _conllu_surfaces(lines) if conllu else [" ".join(tree.leaves()) for tree in trees]
    for i, (text, words) in enumerate(zip(texts, spelled)):
        if _spelling(words) != _spelling(text):
            raise InputError(f"the words of tree {i + 1} ({words[:40]!r}) do not spell line {i + 1} of {texts_path} "
                             f"({text[:40]!r})", str(trees_path), None if conllu else i + 1,
                             fix="give the trees of this text file, one per line, in the same order")
    return trees_of.add(kind, texts, trees, path=str(trees_path))


def _conllu_surfaces(lines: Sequence[str]) -> List[str]:
    """The surface words of each CoNLL-U sentence: a multiword token's form (``1-2 du``) stands for its parts."""
    out: List[str] = []
    words: List[str] = []
    covered = 0
    for line in list(lines) + [""]:
        if not line.strip():
            if words:
                out.append(" ".join(words))
            words, covered = [], 0
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        first = cols[0]
        if "." in first:
            continue
        if "-" in first:
            words.append(cols[1] if len(cols) > 1 else "")
            covered = int(first.split("-")[1]) if first.split("-")[1].isdigit() else covered
        elif not (first.isdigit() and int(first) <= covered):
            words.append(cols[1] if len(cols) > 1 else "")
    return out


_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def _spelling(text: str) -> str:
    """What a tree's words must spell: the text without white space and punctuation (parsers rewrite quotes as
    `` and '', discourse trees may leave punctuation out), with Penn Treebank bracket escapes undone."""
    for escape, char in _PTB_ESCAPES.items():
        text = text.replace(escape, char)
    return "".join(c for c in text if not (c.isspace() or unicodedata.category(c).startswith("P") or c == "`"))
