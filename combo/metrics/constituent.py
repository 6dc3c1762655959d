"""Constituent-tree metrics: Asiya's CP-STM (Liu & Gildea 2005) and CP-TK tree kernels.

Trees come from the ``trees`` option: ``chunks`` (default) builds a shallow
tree sentence -> chunk -> POS -> word from Pattern's parse (a stand-in for
the Charniak-Johnson constituent parses Asiya uses, since no constituent
parser installs offline here); ``supplied`` reads Penn trees from any parser
attached to the test bed (``testbed.trees.add("constituents", texts, trees)``,
``--trees constituents``; :mod:`combo.analysis.supplied`).
"""

from __future__ import annotations

from itertools import chain
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy import sparse

from ..errors import InputError
from ..analysis.kernels import KERNELS, TreeKernel
from ..analysis.layers import annotate, derive, get_layer
from ..analysis.supplied import supplied_trees
from ..analysis.ngrams import group_max, pair_matches, reference_sets
from ..analysis.trees import EMPTY_TREE, VARIANTS, Tree, from_chunks, parse_bracketed, variant
from .base import Metric, Option, ReferencePairs
from .pairwise_metric import PairwiseMetric
from .registry import register
from .shallow import chunk_type

TREE_SOURCES = ("chunks", "supplied")


def sentence_trees(texts: Sequence[str], source: str) -> List[Tree]:
    """The constituent tree of each text: from Pattern's chunks, or supplied by the user.

    A blank text has the empty tree unless a tree was supplied for it; a
    supplied tree may be a :class:`Tree` or a Penn bracketed string.
    """
    if source == "chunks":
        return derive("shallow", "chunk-tree", list(texts), lambda p: from_chunks(p.words, p.pos, p.chunks))
    wanted = [t for t in texts if t.strip()]
    found = dict(zip(wanted, supplied_trees("constituents", wanted)))
    out = []
    for text in texts:
        tree = found.get(text, EMPTY_TREE)
        if isinstance(tree, str):
            tree = parse_bracketed(tree)
        elif not isinstance(tree, Tree):
            raise InputError(f"the supplied constituent tree of {text[:60]!r} is a {type(tree).__name__}, "
                             "not a tree", fix="supply Tree objects or Penn bracketed strings")
        out.append(tree)
    return out


class ConstituentMetric(Metric):
    """Shared ``trees`` option and resource check of the CP-* metrics."""

    # The class attributes below declare this family's facts; the SP and DP bases declare theirs in the same shape.
    locality = "row"  # each text analysed alone: chunked scoring gives the same statistics (tests/test_scale.py)

    family = "syntactic"
    layers = ("shallow",)
    resources = ("textblob",)
    languages = ("en",)
    language_note = "its trees come from Pattern's English chunker (trees=supplied reads any language)"

    def _post_init(self) -> None:
        if self.params["trees"] == "supplied":
            self.layers = ()  # no analysis layer: the user's trees
            self.resources = ()

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        return ((), "") if self.params["trees"] == "supplied" else super().language_support()

    def check_resources(self) -> None:
        for layer in self.layers:
            get_layer(layer).check()

    def trees(self, texts: Sequence[str]) -> List[Tree]:
        return sentence_trees(texts, self.params["trees"])


_TREES = Option("chunks", "trees: chunks (Pattern's chunk trees) or supplied (Penn trees from any parser)",
                choices=TREE_SOURCES)


# ---------------------------------------------------------------------------
# Subtrees of each depth (Liu & Gildea 2005, §2.1)
# ---------------------------------------------------------------------------

def subtree_ends(arity: np.ndarray) -> np.ndarray:
    """End (exclusive) of the subtree of each node of a forest given in pre-order by its arities.

    With the excess ``D_i = sum_{m < i} (arity_m - 1)``, a subtree sums to -1
    and every proper prefix of it to >= 0, and D falls by at most 1 a step;
    so the subtree of node i ends at the first k > i with ``D_k = D_i - 1``
    (the Łukasiewicz path of the pre-order), found for all nodes by one sort.
    """
    n = len(arity)
    excess = np.zeros(n, dtype=np.int64)
    np.cumsum(arity[:-1] - 1, out=excess[1:])
    lowest = int(excess.min()) if n else 0
    keys = (excess - lowest) * (n + 1) + np.arange(n)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    query = (excess - 1 - lowest) * (n + 1) + np.arange(n)
    pos = np.searchsorted(sorted_keys, query, side="right")
    found = pos < n
    found[found] = (sorted_keys[pos[found]] // (n + 1)) == (excess[found] - 1 - lowest)
    return np.where(found, order[np.minimum(pos, n - 1)], n)


def preorder_children(arity: np.ndarray):
    """Children of every node, left to right, in CSR form ``(child_ptr, child)``, from pre-order arities."""
    n = len(arity)
    ends = subtree_ends(arity)
    child_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(arity, out=child_ptr[1:])
    child = np.empty(int(child_ptr[-1]), dtype=np.int64)
    parents = np.flatnonzero(arity > 0)
    parents = parents[np.argsort(-arity[parents], kind="stable")]  # most children first
    counts = arity[parents]
    current = parents + 1  # first child
    for k in range(int(counts[0]) if len(counts) else 0):
        m = int(np.searchsorted(-counts, -k, side="left"))  # parents with more than k children
        current = current[:m]
        child[child_ptr[parents[:m]] + k] = current
        current = ends[current]  # the next sibling starts where this child's subtree ends
    return child_ptr, child


class SubtreeCounts:
    """Counts of the subtrees of depth 1..D of each tree, one sparse matrix per depth.

    The trees are given without their words (labels only), flat: ``labels``
    (integer ids) and ``arity`` of every node in pre-order, tree after tree,
    ``sizes`` nodes each. A subtree of depth d rooted at node n is n with all
    its descendants down to d levels (depth 1: the label alone; depth 2: the
    production); it exists when n has height >= d - 1.
    ``matrices[d - 1][t, s]`` is the number of nodes of tree ``t`` whose
    subtree of depth d is ``s``. Ids are exact (no hashing): a subtree of depth
    d is the key (root label, ids of its children's subtrees of depth d - 1),
    numbered by sorting with the children folded in left to right, all nodes
    of all trees at once.
    """

    def __init__(self, labels: np.ndarray, arity: np.ndarray, sizes: np.ndarray, max_depth: int):
        labels = np.asarray(labels, dtype=np.int64)
        arity = np.asarray(arity, dtype=np.int64)
        sizes = np.asarray(sizes, dtype=np.int64)
        n_trees, n = len(sizes), len(labels)
        tree_of = np.repeat(np.arange(n_trees, dtype=np.int64), sizes)
        child_ptr, child = preorder_children(arity)
        has_children = np.flatnonzero(arity > 0)
        self.matrices: List[sparse.csr_matrix] = []
        ident = labels.copy()  # id of each node's subtree of the current depth
        next_id = int(labels.max()) + 1 if n else 0
        active = np.ones(n, dtype=bool)  # nodes of height >= depth - 1
        for depth in range(1, max_depth + 1):
            if depth > 1:
                grown = np.zeros(n, dtype=bool)
                if len(has_children):
                    grown[has_children] = np.logical_or.reduceat(active[child], child_ptr[has_children])
                active = grown
                nodes = np.flatnonzero(active)
                if len(nodes):
                    new = self._fold(labels, ident, nodes, arity, child_ptr, child)
                    ident[nodes] = new + next_id
                    next_id += int(new.max()) + 1
            nodes = np.flatnonzero(active)
            cols, local = np.unique(ident[nodes], return_inverse=True)
            mat = sparse.csr_matrix((np.ones(len(nodes)), (tree_of[nodes], local.ravel())),
                                    shape=(n_trees, max(len(cols), 1)))
            mat.sum_duplicates()
            self.matrices.append(mat)

    @staticmethod
    def _fold(labels, ident, nodes, arity, child_ptr, child) -> np.ndarray:
        """Exact ids (0..) of the keys (label, ident of child 1, ..., ident of child k) of ``nodes``."""
        perm = np.argsort(-arity[nodes], kind="stable")  # most children first
        order = nodes[perm]
        k = arity[order]
        acc = labels[order].copy()
        for j in range(int(k[0])):
            m = int(np.searchsorted(-k, -j, side="left"))  # the nodes with more than j children
            kids = ident[child[child_ptr[order[:m]] + j]]
            _, inverse = np.unique(acc[:m] * (int(kids.max()) + 1) + kids, return_inverse=True)
            acc[:m] = inverse.ravel()
        _, final = np.unique(k * (int(acc.max()) + 1) + acc, return_inverse=True)
        out = np.empty(len(nodes), dtype=np.int64)
        out[perm] = final.ravel()
        return out

    def totals(self) -> np.ndarray:
        """(trees, depths): number of subtrees of each depth in each tree."""
        return np.column_stack([np.asarray(m.sum(axis=1)).ravel() for m in self.matrices])

    @classmethod
    def from_trees(cls, trees: Sequence[Tree], max_depth: int) -> "SubtreeCounts":
        """The counts of ``trees`` without their leaves (the words): Tree labels only."""
        labels = list(chain.from_iterable(t.labels for t in trees))
        arity = np.fromiter(chain.from_iterable(t.arities for t in trees), dtype=np.int64, count=len(labels))
        sizes = np.fromiter((len(t) for t in trees), dtype=np.int64, count=len(trees))
        internal = arity > 0
        child_ptr, child = preorder_children(arity)
        owner = np.repeat(np.arange(len(arity)), arity)
        inner_arity = np.bincount(owner[internal[child]], minlength=len(arity))
        tree_of = np.repeat(np.arange(len(trees)), sizes)
        ids: Dict[str, int] = {}
        label_ids = np.fromiter((ids.setdefault(lab, len(ids)) for lab, keep in zip(labels, internal.tolist())
                                 if keep), dtype=np.int64)
        return cls(label_ids, inner_arity[internal], np.bincount(tree_of[internal], minlength=len(trees)),
                   max_depth)

    @classmethod
    def from_shallow(cls, parses, max_depth: int) -> "SubtreeCounts":
        """The counts of :func:`~combo.analysis.trees.from_chunks` trees of shallow parses, without words.

        Built flat without Tree objects: per text a node ``S``, then per token
        its chunk node when the token opens a chunk (``B-X``, or ``I-X`` not
        continuing a chunk X), then its POS node.
        """
        lengths = np.fromiter((len(p.words) for p in parses), dtype=np.int64, count=len(parses))
        n_tokens = int(lengths.sum())
        pos_tags = list(chain.from_iterable(p.pos for p in parses))
        chunk_tags = list(chain.from_iterable(p.chunks for p in parses))
        ids: Dict[str, int] = {"S": 0, "O": 1}
        for label in sorted(set(pos_tags).union(chunk_type(t) for t in set(chunk_tags))):
            ids.setdefault(label, len(ids))
        pos = np.fromiter(map(ids.__getitem__, pos_tags), dtype=np.int64, count=n_tokens)
        codes = {t: k for k, t in enumerate(sorted(set(chunk_tags)))}  # the few distinct chunk tags
        code_kind = np.array([ids[chunk_type(t)] for t in codes], dtype=np.int64)
        code_begins = np.array([t.startswith("B-") for t in codes], dtype=bool)
        code = np.fromiter(map(codes.__getitem__, chunk_tags), dtype=np.int64, count=n_tokens)
        kinds, begins = code_kind[code], code_begins[code]
        outside = kinds == ids["O"]
        first = np.zeros(n_tokens, dtype=bool)
        starts = np.cumsum(lengths) - lengths
        first[starts[lengths > 0]] = True
        continues = np.zeros(n_tokens, dtype=bool)
        continues[1:] = (kinds[1:] == kinds[:-1]) & ~outside[1:]
        opens = ~outside & (begins | first | ~continues)
        text_of = np.repeat(np.arange(len(parses)), lengths)
        n_opens = np.bincount(text_of, weights=opens, minlength=len(parses)).astype(np.int64)
        n_top = np.bincount(text_of, weights=opens | outside, minlength=len(parses)).astype(np.int64)
        sizes = np.where(lengths > 0, 1 + lengths + n_opens, 0)  # S, POS nodes, chunk nodes
        base = np.cumsum(sizes) - sizes  # position of each text's S node
        cum = np.zeros(n_tokens + 1, dtype=np.int64)
        np.cumsum(1 + opens, out=cum[1:])  # nodes of the tokens so far: (chunk node) + POS node
        pos_at = base[text_of] + 1 + cum[:-1] - cum[starts[text_of]] + opens
        labels = np.empty(int(sizes.sum()), dtype=np.int64)
        arity = np.zeros(len(labels), dtype=np.int64)
        labels[base[lengths > 0]] = ids["S"]
        arity[base[lengths > 0]] = n_top[lengths > 0]
        labels[pos_at] = pos
        chunk_at = pos_at[opens] - 1
        labels[chunk_at] = kinds[opens]
        chunk_of = np.cumsum(opens) - 1  # the chunk of each token inside one (the last one opened)
        arity[chunk_at] = np.bincount(chunk_of[~outside], minlength=len(chunk_at))
        return cls(labels, arity, sizes, max_depth)


def stm_from_counts(matches: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """STM = mean over the depths d where the hypothesis has subtrees of matches_d / totals_d.

    ``matches`` and ``totals`` are (rows, D). A row whose hypothesis has no
    subtree at all (an empty tree) scores NaN here; the caller decides.
    """
    present = totals > 0
    ratios = np.divide(matches, totals, out=np.zeros(matches.shape), where=present)
    n_present = present.sum(axis=1)
    out = np.full(len(matches), np.nan)
    np.divide(ratios.sum(axis=1), n_present, out=out, where=n_present > 0)
    return out


@register("cp-stm")
class SyntacticTreeMatching(ConstituentMetric):
    """Asiya's CP-STM-n: Liu & Gildea's (2005, §2.1) syntactic tree matching over constituent trees.

    ``STM = 1/D' sum_d [sum_{t in subtrees_d(hyp)} count_clip(t)] / [sum_{t in subtrees_d(hyp)} count(t)]``
    for d = 1..depth, on the trees without their words (labels only, as in
    Liu & Gildea's example); ``count_clip`` clips by the largest count in any
    one reference (``multi_ref="clip"``, the paper's rule) or the best single
    reference is kept (``"best"``). D' counts the depths at which the
    hypothesis has a subtree (undefined precisions are left out). Empty
    hypothesis: 1 if a reference is empty too, else 0. Corpus score: mean of
    the segment scores.
    """

    citation = ("Liu & Gildea 2005, 'Syntactic Features for Evaluation of Machine Translation', §2.1 (STM); "
                "Asiya CP-STM-n (Giménez & Màrquez 2010)")
    options = {
        "depth": Option(9, "largest subtree depth (CP-STM-9)", check=lambda v: isinstance(v, int) and 1 <= v <= 30),
        "multi_ref": Option("clip", "several references: clip (counts clipped by the max over references, "
                            "Liu & Gildea) or best (the best single reference)",
                            choices=("clip", "best"), short="mr"),
        "trees": _TREES,
    }

    def analyse(self, texts: Sequence[str]) -> SubtreeCounts:
        if self.params["trees"] == "chunks":
            return SubtreeCounts.from_shallow(annotate("shallow", list(texts)), self.params["depth"])
        return SubtreeCounts.from_trees(self.trees(texts), self.params["depth"])

    def statistics(self, analysis: SubtreeCounts, hyp_ids, ref_ptr, ref_ids,
                   ref_weights: Optional[np.ndarray] = None) -> np.ndarray:
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        n_texts = analysis.matrices[0].shape[0]
        pairs = ReferencePairs.build(self.name, n_texts, hyp_ids, ref_ptr, ref_ids)
        totals = analysis.totals()
        empty = totals[:, 0] == 0
        if self.params["multi_ref"] == "clip":
            row_set, set_ptr, set_ids = reference_sets(ref_ptr, ref_ids)
            matches = np.column_stack([
                np.asarray(m[hyp_ids].minimum(group_max(m, set_ptr, set_ids)[row_set]).sum(axis=1)).ravel()
                for m in analysis.matrices])  # clipped counts (Liu & Gildea's count_clip)
            best = stm_from_counts(matches, totals[hyp_ids])
            any_empty_ref = np.zeros(len(hyp_ids), dtype=bool)
            np.logical_or.at(any_empty_ref, pairs.pair_row, empty[ref_ids])
            best = np.where(np.isnan(best), any_empty_ref.astype(float), best)
        else:
            matches = np.column_stack([pair_matches(m, pairs.hyp, pairs.ref) for m in analysis.matrices])
            values = stm_from_counts(matches, totals[pairs.hyp])
            values = np.where(np.isnan(values), empty[pairs.ref].astype(float), values)
            best = np.full(len(hyp_ids), -np.inf)
            np.maximum.at(best, pairs.pair_row, values[pairs.inverse])
        return np.column_stack((best, np.ones(len(hyp_ids))))

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        out = np.zeros(stats.shape[:-1])
        np.divide(stats[..., 0], stats[..., 1], out=out, where=stats[..., 1] > 0)
        return out


# ---------------------------------------------------------------------------
# Tree kernels (Collins & Duffy 2001; Moschitti 2006)
# ---------------------------------------------------------------------------

def _decay(value) -> bool:
    try:
        return 0.0 < float(value) <= 1.0
    except (TypeError, ValueError):
        return False


class _TreeKernelMetric(PairwiseMetric, ConstituentMetric):
    """Normalised tree kernel between hypothesis and reference constituent trees, best reference."""

    fixed_kernel: Optional[str] = None
    citation = ("Collins & Duffy 2001 (SST); Vishwanathan & Smola 2002 (ST); Moschitti 2006 (PTK); "
                "normalised K(a,b)/sqrt(K(a,a)K(b,b)); Asiya CP-TK / DiscoTK representations")

    def _post_init(self) -> None:
        ConstituentMetric._post_init(self)
        self._kernel = TreeKernel(self.kernel_kind, lam=self.params["lam"], mu=self.params.get("mu", 0.4))

    @property
    def kernel_kind(self) -> str:
        return self.fixed_kernel or self.params["kernel"]

    def analyse(self, texts: Sequence[str]) -> List[Tree]:
        return [variant(t, self.params["variant"]) for t in self.trees(texts)]

    def compare(self, analysis: List[Tree], hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        left = [analysis[i] for i in hyp]
        right = [analysis[j] for j in ref]
        values = self._kernel.pairs(left, right) if len(left) else np.zeros(0)
        both_empty = np.array([not a.labels and not b.labels for a, b in zip(left, right)], dtype=bool)
        return np.where(both_empty, 1.0, values)


_KERNEL_OPTIONS = {
    "lam": Option(0.4, "decay lambda in (0, 1]", check=_decay),
    "mu": Option(0.4, "PTK's vertical decay mu in (0, 1]", check=_decay),
    "variant": Option("lex1", "tree representation (nolex, lex1, lex1.1, lex2, lex2.1)", choices=VARIANTS),
    "trees": _TREES,
}


@register("cp-tk")
class ConstituentTreeKernel(_TreeKernelMetric):
    """Asiya-style CP-TK: normalised tree kernel (SST, ST or PTK) of constituent trees, best reference."""

    options = {"kernel": Option("sst", "sst, st or ptk", choices=KERNELS), **_KERNEL_OPTIONS}


@register("cp-tk-sst")
class ConstituentSubsetTreeKernel(_TreeKernelMetric):
    """CP-TK-SST: cp-tk with the subset-tree kernel (Collins & Duffy 2001)."""

    fixed_kernel = "sst"
    options = {k: v for k, v in _KERNEL_OPTIONS.items() if k != "mu"}


@register("cp-tk-st")
class ConstituentSubtreeKernel(_TreeKernelMetric):
    """CP-TK-ST: cp-tk with the subtree kernel (Vishwanathan & Smola 2002)."""

    fixed_kernel = "st"
    options = {k: v for k, v in _KERNEL_OPTIONS.items() if k != "mu"}


@register("cp-tk-ptk")
class ConstituentPartialTreeKernel(_TreeKernelMetric):
    """CP-TK-PTK: cp-tk with the partial-tree kernel (Moschitti 2006)."""

    fixed_kernel = "ptk"
    options = dict(_KERNEL_OPTIONS)
