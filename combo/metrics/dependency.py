"""Dependency-tree metrics: Asiya's DP-HWC and DP-Or, a dependency tree kernel, tree edit distance.

All four compare a hypothesis with one reference at a time and keep the best
reference (:class:`~combo.metrics.pairwise_metric.PairwiseMetric`, as Asiya);
the corpus score is the mean of the segment scores.

- ``dp-hwcm``: head-word chain matching (Liu & Gildea 2005; Asiya's
  DP-HWCw-n / DP-HWCc-n / DP-HWCr-n). A chain of length k is a downward path
  w1 -> ... -> wk in the dependency tree (each word the head of the next).
  ``HWCM = mean over k of sum_c min(#c(h), #c(r)) / sum_c #c(h)`` over the
  chains c of length k, Liu & Gildea's precision averaged over lengths 1..n.
- ``dp-or``: Asiya's DP-Or(t), the clipped-count Jaccard of the words whose
  incoming relation is t, ``sum_w min(#h, #r) / sum_w max(#h, #r)``; DP-Or(*)
  averages it over the relations present in either side.
- ``dp-tk``: a normalised tree kernel (PTK by default, Moschitti 2006b) over
  the dependency trees of :func:`combo.analysis.trees.from_dependencies`.
- ``ted``: ``1 - TED / (|a| + |b|)``, Zhang & Shasha's (1989) unit-cost tree
  edit distance over the same trees.

Parses come from spaCy (``parser=spacy``) or from trees the user supplied
(``parser=supplied``: CoNLL-U read by ``read_conllu``, attached with
``testbed.trees.add("dependencies", ...)`` or ``combo ... --trees dependencies``).
A comparison with nothing on either side (two empty texts; a chain length or a
relation neither side has) is skipped, and a pair with nothing left scores 1,
so identical texts always score 1.
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ..errors import InputError, OptionError
from ..analysis.kernels import KERNELS, TreeKernel, ted_similarities
from ..analysis.layers import DependencyParse, annotate, derive, get_layer
from ..analysis.supplied import supplied_trees
from ..analysis.ngrams import pair_matches
from ..analysis.trees import VARIANTS, Tree, from_dependencies, variant
from .base import Option
from .pairwise_metric import PairwiseMetric, named_column_sums
from .registry import register

PARSERS = ("spacy", "supplied")
LEMMATISED = "dependencies+lemmas"  # the layer of the metrics matching lemmas
CHUNK = 16384  # pairs per block of dense (pairs x relations) arrays

_EMPTY_PARSE = DependencyParse((), (), (), (), ())


# ---------------------------------------------------------------------------
# Parses: spaCy, or decoded back from supplied dependency trees
# ---------------------------------------------------------------------------

def parse_of_tree(tree: Tree) -> DependencyParse:
    """Words, tags, 1-based heads and relations of a tree shaped as ``from_dependencies`` builds it.

    Each token is a node labelled with its relation whose children are its
    dependents' nodes and its own ``(POS word)`` node (or, without POS, its
    word as a leaf); several roots hang under a ``ROOT`` node. With L words
    the tree has 3L nodes (2L without POS), plus one for the ``ROOT`` node.
    Tokens are numbered in the order of their words among the leaves; tags
    are empty strings without POS; lemmas are the words. Any other shape
    raises InputError.
    """
    if not tree.labels:
        return _EMPTY_PARSE
    index = tree.index
    arities, labels, children, height = tree.arities, tree.labels, index.children, index.height
    n_nodes = len(labels)
    n_words = sum(1 for a in arities if not a)
    with_pos = n_nodes in (3 * n_words, 3 * n_words + 1)
    if not with_pos and n_nodes not in (2 * n_words, 2 * n_words + 1):
        raise _not_dependency_tree(tree, f"{n_nodes} nodes for {n_words} words")
    wrapped = n_nodes == (3 if with_pos else 2) * n_words + 1
    if wrapped and (labels[0] != "ROOT" or len(children[0]) < 2):
        raise _not_dependency_tree(tree, "an extra node that is not a ROOT joining several roots")
    # token nodes, their own word leaf, and their head token node (-1 for a root)
    tops = list(children[0]) if wrapped else [0]
    token_nodes: List[int] = []
    head_node: Dict[int, int] = {}
    word_leaf: Dict[int, int] = {}
    tag_of: Dict[int, str] = {}
    stack = [(t, -1) for t in reversed(tops)]
    while stack:
        node, head = stack.pop()
        if with_pos:
            own = [c for c in children[node] if height[c] == 1 and len(children[c]) == 1]
        else:
            own = [c for c in children[node] if not arities[c]]
        if len(own) != 1 or not arities[node]:
            raise _not_dependency_tree(tree, f"node {labels[node]!r} does not hold exactly one word of its own")
        token_nodes.append(node)
        head_node[node] = head
        if with_pos:
            tag_of[node] = labels[own[0]]
            word_leaf[node] = children[own[0]][0]
        else:
            tag_of[node] = ""
            word_leaf[node] = own[0]
        stack.extend((c, node) for c in reversed(children[node]) if c != own[0])
    order = sorted(token_nodes, key=word_leaf.__getitem__)
    position = {node: k + 1 for k, node in enumerate(order)}
    words = tuple(labels[word_leaf[t]] for t in order)
    return DependencyParse(words, tuple(tag_of[t] for t in order),
                           tuple(position.get(head_node[t], 0) for t in order),
                           tuple(labels[t] for t in order), words)


def _not_dependency_tree(tree: Tree, why: str) -> InputError:
    return InputError(f"supplied dependency tree {tree!r} is not in the shape from_dependencies builds ({why})",
                      fix="supply dependency trees read from CoNLL-U (combo.analysis.trees.read_conllu)")


def dependency_parses(texts: Sequence[str], parser: str, layer: str = "dependencies") -> List[DependencyParse]:
    """The dependency parse of each text: spaCy's, by analysis layer ``layer`` (``dependencies+lemmas`` for
    lemmas), or decoded from the supplied trees."""
    if parser == "spacy":
        return annotate(layer, texts)
    return [parse_of_tree(t) for t in supplied_trees("dependencies", texts)]


def dependency_trees(texts: Sequence[str], parser: str, tree_variant: str, lowercase: bool) -> List[Tree]:
    """The dependency tree of each text (from_dependencies with POS), in representation ``tree_variant``."""
    if parser == "spacy":
        def build(p: DependencyParse) -> Tree:
            words = [w.lower() for w in p.words] if lowercase else p.words
            return variant(from_dependencies(words, p.heads, p.relations, p.tags), tree_variant)

        return derive("dependencies", f"tree|lc:{lowercase}|{tree_variant}", list(texts), build)
    trees = supplied_trees("dependencies", texts)
    if lowercase:
        trees = [lowercase_leaves(t) for t in trees]
    return [variant(t, tree_variant) for t in trees]


def lowercase_leaves(tree: Tree) -> Tree:
    """The tree with every leaf label (the words) lowercased."""
    labels = [s.lower() if not a else s for s, a in zip(tree.labels, tree.arities)]
    return Tree.from_preorder(labels, tree.arities, validate=False)


# ---------------------------------------------------------------------------
# Token tables: all tokens of all texts end to end
# ---------------------------------------------------------------------------

class TokenTable(NamedTuple):
    """Tokens of the distinct texts end to end: text ``t`` is ``ptr[t]:ptr[t+1]``.

    ``head[i]`` is the global index of token i's head (-1 for a root); the
    label columns are integer ids (``*_names`` give the strings).
    """

    ptr: np.ndarray
    head: np.ndarray
    columns: Dict[str, np.ndarray]
    names: Dict[str, List[str]]

    @property
    def n_texts(self) -> int:
        return len(self.ptr) - 1

    @property
    def text_of(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_texts, dtype=np.int64), np.diff(self.ptr))


def token_table(parses: Sequence[DependencyParse], columns: Sequence[str], lowercase: bool) -> TokenTable:
    """Flatten parses; ``columns`` among words, lemmas, categories (tags), relations."""
    sizes = np.fromiter((len(p.words) for p in parses), dtype=np.int64, count=len(parses))
    ptr = np.zeros(len(parses) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    start = np.repeat(ptr[:-1], sizes)
    local = np.fromiter((h for p in parses for h in p.heads), dtype=np.int64, count=int(ptr[-1]))
    head = np.where(local > 0, start + local - 1, -1)
    field = {"words": 0, "lemmas": 4, "categories": 1, "relations": 3}
    ids: Dict[str, np.ndarray] = {}
    names: Dict[str, List[str]] = {}
    for name in columns:
        k = field[name]
        values = [s for p in parses for s in p[k]]
        if lowercase and name in ("words", "lemmas"):
            values = [s.lower() for s in values]
        vocabulary: Dict[str, int] = {}
        ids[name] = np.fromiter((vocabulary.setdefault(s, len(vocabulary)) for s in values),
                                dtype=np.int64, count=len(values))
        names[name] = list(vocabulary)
    return TokenTable(ptr, head, ids, names)


def _counts(text_of: np.ndarray, item: np.ndarray, n_texts: int, n_items: int) -> sparse.csr_matrix:
    matrix = sparse.csr_matrix((np.ones(len(item)), (text_of, item)), shape=(n_texts, max(n_items, 1)))
    matrix.sum_duplicates()
    return matrix


# ---------------------------------------------------------------------------
# Head-word chains
# ---------------------------------------------------------------------------

def chain_counts(table: TokenTable, column: str, length: int) -> List[sparse.csr_matrix]:
    """Per chain length k = 1..length, the (texts x distinct chains) count matrix.

    The chain of length k ending at token t is the chain of length k-1 ending
    at t's head followed by t's label, so its integer id is built from the
    head's id and t's label (exact, no hashing), as n-gram ids are.
    """
    labels = table.columns[column]
    n_labels = max(len(table.names[column]), 1)
    text_of = table.text_of
    safe_head = np.where(table.head >= 0, table.head, 0)
    chain = labels.copy()
    valid = np.ones(len(labels), dtype=bool)
    n_chains = n_labels
    out = []
    for k in range(1, length + 1):
        if k > 1:
            valid = (table.head >= 0) & valid[safe_head]
            key = chain[safe_head] * np.int64(n_labels) + labels
            uniq, inverse = np.unique(key[valid], return_inverse=True)
            chain = np.full(len(labels), -1, dtype=np.int64)
            chain[valid] = inverse.ravel()
            n_chains = len(uniq)
        out.append(_counts(text_of[valid], chain[valid], table.n_texts, n_chains))
    return out


def hwcm_scores(matrices: Sequence[sparse.csr_matrix], hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """HWCM of each pair: mean over the lengths either side has of clipped chain matches / hypothesis chains.

    A length with chains in the reference only scores 0; a pair with no chain
    at all (two empty texts) scores 1.
    """
    total = np.zeros(len(hyp))
    counted = np.zeros(len(hyp))
    for matrix in matrices:
        sizes = np.asarray(matrix.sum(axis=1)).ravel()
        h, r = sizes[hyp], sizes[ref]
        matches = pair_matches(matrix, hyp, ref)
        total += np.divide(matches, h, out=np.zeros(len(hyp)), where=h > 0)
        counted += (h > 0) | (r > 0)
    return np.divide(total, counted, out=np.ones(len(hyp)), where=counted > 0)


# ---------------------------------------------------------------------------
# Overlap per relation
# ---------------------------------------------------------------------------

class RelationItems(NamedTuple):
    """(relation, word) items: ``matrix`` texts x items, ``relation_of[item]``, relation names."""

    matrix: sparse.csr_matrix
    relation_of: np.ndarray
    relations: List[str]


def relation_items(table: TokenTable, form: str) -> RelationItems:
    """Counts of each (relation, word) item of each text: the words "ruled by" each relation type."""
    rel = table.columns["relations"]
    word = table.columns[form]
    n_words = np.int64(max(len(table.names[form]), 1))
    uniq, inverse = np.unique(rel * n_words + word, return_inverse=True)
    matrix = _counts(table.text_of, inverse.ravel(), table.n_texts, len(uniq))
    return RelationItems(matrix, uniq // n_words, table.names["relations"])


def relation_overlaps(items: RelationItems, hyp: np.ndarray, ref: np.ndarray,
                      relation: str = "*") -> np.ndarray:
    """Asiya's DP-Or(relation) of each pair; ``"*"``: mean over the relations present in either side.

    Overlap(t) = sum_w min(#h, #r) / sum_w max(#h, #r) over the words w of type t;
    a pair where no relation counted (or t is on neither side) scores 1.
    """
    n_rel = len(items.relations)
    if relation == "*":
        columns = np.arange(len(items.relation_of))
        groups = items.relation_of
        n_groups = max(n_rel, 1)
    else:
        t = items.relations.index(relation) if relation in items.relations else -1
        columns = np.flatnonzero(items.relation_of == t)
        groups = np.zeros(len(columns), dtype=np.int64)
        n_groups = 1
    matrix = items.matrix[:, columns] if len(columns) < items.matrix.shape[1] else items.matrix
    indicator = sparse.csr_matrix((np.ones(len(columns)), (np.arange(len(columns)), groups)),
                                  shape=(matrix.shape[1], n_groups))
    out = np.ones(len(hyp))
    for start in range(0, len(hyp), CHUNK):
        h = matrix[hyp[start:start + CHUNK]]
        r = matrix[ref[start:start + CHUNK]]
        low = (h.minimum(r) @ indicator).toarray()
        high = (h.maximum(r) @ indicator).toarray()
        present = high > 0
        ratio = np.divide(low, high, out=np.zeros_like(low), where=present)
        n = present.sum(axis=1)
        sums = named_column_sums(ratio, items.relations) if relation == "*" else ratio[:, 0]
        out[start:start + CHUNK] = np.divide(sums, n, out=np.ones(len(n)), where=n > 0)
    return out


# ---------------------------------------------------------------------------
# The metrics
# ---------------------------------------------------------------------------

def _decay(value) -> bool:
    return isinstance(value, (int, float)) and 0.0 < float(value) <= 1.0


PARSER_OPTION = Option("spacy", "where parses come from: spacy, or supplied (CoNLL-U trees attached "
                       "with testbed.trees.add / --trees dependencies)", choices=PARSERS)
LOWERCASE_OPTION = Option(True, "lowercase the words before matching", short="lc")


class DependencyMetric(PairwiseMetric):
    """Common parts: the ``parser`` option and the spaCy resource check."""

    # Declared facts of the DP family, in the shape every metric base uses (shallow.py's TypedOverlap too).
    locality = "row"  # each text analysed alone: chunked scoring gives the same statistics (tests/test_scale.py)

    family = "syntactic"
    layers = ("dependencies",)
    resources = ("spacy",)
    languages = ("en",)
    language_note = "spaCy's parser model is English (parser=supplied reads any language)"

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        return ((), "") if self.params["parser"] == "supplied" else super().language_support()

    #: The option that can ask for lemmas (``over`` of DP-HWCM, ``form`` of DP-Or), if any.
    lemma_option: Optional[str] = None

    def _post_init(self) -> None:
        if self.lemma_option and self.params[self.lemma_option] == "lemmas":
            if self.params["parser"] == "supplied":
                raise OptionError(f"{self.name}: {self.lemma_option}=lemmas needs parser=spacy (supplied trees "
                                  "carry no lemmas)")
            self.layers = (LEMMATISED,)  # the parse with spaCy's lemmatiser run too

    def parses(self, texts: Sequence[str]) -> List[DependencyParse]:
        """The parse of each text from the metric's source: the supplied trees, or its analysis layer."""
        return dependency_parses(texts, self.params["parser"], self.layers[0])

    def check_resources(self) -> None:
        if self.params["parser"] == "spacy":
            get_layer(self.layers[0]).check()


@register("dp-hwcm")
class HeadWordChainMatching(DependencyMetric):
    """Head-word chain matching, Asiya's DP-HWCw-n / DP-HWCc-n / DP-HWCr-n (Liu & Gildea 2005).

    Chains of lengths 1..``length`` over words, lemmas, categories (POS tags)
    or relations; per length, clipped chain matches / hypothesis chains; the
    mean over the lengths either side has. Best reference, mean over segments.
    """

    citation = ("Liu & Gildea 2005, Syntactic Features for Evaluation of MT: HWCM (STM precision averaged "
                "over lengths, over head-word chains); Gimenez & Marquez 2010 (Asiya, PBML 94) DP-HWC")
    lemma_option = "over"
    options = {
        "over": Option("words", "chain elements: words (DP-HWCw), lemmas, categories (DP-HWCc) "
                       "or relations (DP-HWCr)", choices=("words", "lemmas", "categories", "relations")),
        "length": Option(4, "longest chain", check=lambda v: isinstance(v, int) and 1 <= v <= 9, short="n"),
        "parser": PARSER_OPTION,
        "lowercase": LOWERCASE_OPTION,
    }

    def analyse(self, texts: Sequence[str]) -> List[sparse.csr_matrix]:
        parses = self.parses(texts)
        over = self.params["over"]
        if over == "categories":
            _require_tags(parses, texts)
        table = token_table(parses, (over,), self.params["lowercase"])
        return chain_counts(table, over, self.params["length"])

    def n_texts(self, analysis) -> int:
        return analysis[0].shape[0]

    def compare(self, analysis, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return hwcm_scores(analysis, hyp, ref)


def _require_tags(parses: Sequence[DependencyParse], texts: Sequence[str]) -> None:
    for parse, text in zip(parses, texts):
        if parse.words and not all(parse.tags):
            raise InputError(f"the supplied dependency tree of {text[:60]!r} has no POS tags",
                             fix="read the CoNLL-U file with pos='upos' or 'xpos', or use another 'over'")


@register("dp-or")
class DependencyRelationOverlap(DependencyMetric):
    """Asiya's DP-Or(t): overlap of the words ruled by dependency relation t; DP-Or(*) averages the types.

    ``Overlap(t) = sum_w min(#h_t(w), #r_t(w)) / sum_w max(#h_t(w), #r_t(w))``
    (Gimenez & Marquez 2010), words lowercased (or lemmas); ``relation="*"``
    averages over the relations present in either side. Best reference, mean
    over segments.
    """

    citation = ("Gimenez & Marquez 2010, Asiya (PBML 94) DP-Or; Gimenez 2008 (PhD thesis) "
                "overlap over dependency relations")
    lemma_option = "form"
    options = {
        "relation": Option("*", "a relation label of the parser (e.g. nsubj), or * for the mean over the "
                           "relations present in either side", check=lambda v: isinstance(v, str) and bool(v),
                           short="rel"),
        "form": Option("words", "what is matched: words or lemmas", choices=("words", "lemmas")),
        "parser": PARSER_OPTION,
        "lowercase": LOWERCASE_OPTION,
    }

    def analyse(self, texts: Sequence[str]) -> RelationItems:
        parses = self.parses(texts)
        form = self.params["form"]
        table = token_table(parses, (form, "relations"), self.params["lowercase"])
        return relation_items(table, form)

    def n_texts(self, analysis: RelationItems) -> int:
        return analysis.matrix.shape[0]

    def compare(self, analysis: RelationItems, hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return relation_overlaps(analysis, hyp, ref, self.params["relation"])


class DependencyTreeMetric(DependencyMetric):
    """Metrics on whole dependency trees; the analysis is one Tree per distinct text."""

    def analyse(self, texts: Sequence[str]) -> List[Tree]:
        return dependency_trees(texts, self.params["parser"], self.params["variant"], self.params["lowercase"])


@register("dp-tk")
class DependencyTreeKernel(DependencyTreeMetric):
    """Normalised tree kernel over dependency trees; PTK by default (Moschitti 2006b).

    Trees are ``from_dependencies`` (Croce et al. 2011's grammatical-relation-
    centred shape: relation nodes, then ``(POS word)``), in one of the five
    representations of ``variant``. ``K(h, r) / sqrt(K(h, h) K(r, r))``; two
    identical trees (two empty texts included) score 1, an empty tree against
    another 0. Best reference, mean over segments.
    """

    citation = ("Moschitti 2006b, Efficient convolution kernels for dependency and constituent syntactic trees "
                "(PTK, eq. for Delta_P); Croce et al. 2011 (GRCT dependency trees); Collins & Duffy 2001 (SST)")
    options = {
        "kernel": Option("ptk", "tree kernel: ptk (partial trees), sst (subset trees) or st (subtrees)",
                         choices=KERNELS),
        "lam": Option(0.4, "decay lambda in (0, 1]", check=_decay),
        "mu": Option(0.4, "PTK's vertical decay mu in (0, 1]", check=_decay),
        "variant": Option("lex1", "tree representation: " + ", ".join(VARIANTS), choices=VARIANTS),
        "parser": PARSER_OPTION,
        "lowercase": LOWERCASE_OPTION,
    }

    def _post_init(self) -> None:
        super()._post_init()
        self._kernel = TreeKernel(self.params["kernel"], self.params["lam"], self.params["mu"])

    def compare(self, analysis: List[Tree], hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return kernel_similarities(self._kernel, analysis, hyp, ref)


def kernel_similarities(kernel: TreeKernel, trees: Sequence[Tree], hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Normalised ``kernel`` of each pair of trees; identical trees (two empty ones too) give 1."""
    left = [trees[i] for i in hyp]
    right = [trees[j] for j in ref]
    values = kernel.pairs(left, right)
    same = np.fromiter((a == b for a, b in zip(left, right)), dtype=bool, count=len(left))
    values[same] = 1.0
    return values


@register("ted")
class TreeEditDistance(DependencyTreeMetric):
    """Tree edit distance similarity ``1 - TED / (|h| + |r|)`` over dependency trees (Zhang & Shasha 1989).

    Unit costs (insert, delete, relabel); |t| = number of nodes, so the value
    is in [0, 1]: 1 for identical trees (two empty texts included), 0 against
    an empty tree. Trees as ``dp-tk``'s, default representation ``lex1``.
    Best reference, mean over segments.
    """

    citation = ("Zhang & Shasha 1989, Simple fast algorithms for the editing distance between trees "
                "(unit-cost TED), normalised by |a| + |b|")
    options = {
        "variant": Option("lex1", "tree representation: " + ", ".join(VARIANTS), choices=VARIANTS),
        "parser": PARSER_OPTION,
        "lowercase": LOWERCASE_OPTION,
    }

    def compare(self, analysis: List[Tree], hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return ted_similarities([analysis[i] for i in hyp], [analysis[j] for j in ref])
