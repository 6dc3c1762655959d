"""The five representation variants of a tree, in the spirit of DiscoTK's (Joty et al. 2014, Guzmán et al.
2014); :mod:`combo.analysis.trees` gives these names too."""

from __future__ import annotations

from typing import List

from combo.errors import InputError
from combo.analysis.tree_type import Tree

__all__ = ["variant", "VARIANTS", "SPLIT_LABEL", "PROPAGATION_SEPARATOR"]


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
