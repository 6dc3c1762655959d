"""Discourse tree kernels: DiscoTK's DR-NOLEX, DR-LEX1, DR-LEX1.1, DR-LEX2, DR-LEX2.1.

Guzmán et al. (2014) and Joty et al. (2014) compare the RST discourse tree
of a hypothesis with the reference's by a normalised all-subtree kernel
(Collins & Duffy 2001, the subset-tree kernel ``sst`` here), under five tree
representations (:func:`combo.analysis.trees.variant`). The trees come from
Feng & Hirst's RST parser (the ``discourse`` layer: ``pip install
'combo-eval[discourse]'`` and Java), in the layout of
:func:`combo.analysis.discourse_parser.rst_tree`; trees a user supplies
(``testbed.trees.add("discourse", texts, trees)`` or ``--trees discourse TEXTS
TREES``, Penn bracketed, one tree per line) win where given, and ``trees=supplied``
reads those alone. Best reference, mean over segments.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..analysis.kernels import KERNELS, TreeKernel
from ..analysis.supplied import supplied_table, supplied_trees
from ..analysis.trees import VARIANTS, Tree, variant
from ..analysis.layer_definitions import get_layer
from .base import Option
from .pairwise_metric import PairwiseMetric
from .dependency import kernel_similarities
from .registry import register

SUPPLY_FIX = ("with trees=supplied every text needs a supplied tree: attach them with "
              "testbed.trees.add('discourse', texts, trees) or --trees discourse TEXTS TREES, "
              "or leave trees=parsed to parse the texts without one (Feng & Hirst's parser)")
#: Where a discourse kernel's trees come from.
TREE_SOURCES = ("parsed", "supplied")


def _decay(value) -> bool:
    return isinstance(value, (int, float)) and 0.0 < float(value) <= 1.0


def discourse_trees(texts: Sequence[str], tree_variant: str, source: str = "supplied") -> List[Tree]:
    """The discourse tree of each text in representation ``tree_variant``: the supplied one where the test bed has
    it, else (``source="parsed"``) the ``discourse`` layer's parse; with ``source="supplied"`` InputError if one
    is missing."""
    if source == "supplied":
        try:
            trees = supplied_trees("discourse", texts)
        except InputError as err:
            raise InputError(err.reason, fix=SUPPLY_FIX) from None
    else:
        given = supplied_table("discourse")
        trees = [given.get(t) for t in texts]
        unparsed = list(dict.fromkeys(t for t, tree in zip(texts, trees) if tree is None))
        if unparsed:
            from ..analysis.layers import annotate

            parsed = dict(zip(unparsed, (p.tree for p in annotate("discourse", unparsed))))
            trees = [parsed[t] if tree is None else tree for t, tree in zip(texts, trees)]
    return [variant(t, tree_variant) for t in trees]


@register("dr-tk")
class DiscourseTreeKernel(PairwiseMetric):
    """Normalised tree kernel between RST discourse trees, parsed or supplied (DiscoTK's DR-*; Guzmán et al. 2014).

    ``K(h, r) / sqrt(K(h, h) K(r, r))`` with the subset-tree ("all-subtree")
    kernel by default, the trees in representation ``variant`` (nolex, lex1,
    lex1.1, lex2, lex2.1 for DR-NOLEX ... DR-LEX2.1); identical trees (two
    empty ones too) score 1. Best reference, mean over segments.
    """

    family = "syntactic"
    layers = ("discourse",)
    resources = ("rst-parser",)  # Feng & Hirst's parser and Java (docs/tree-kernels.md#parsing-discourse)
    supplied_kind = "discourse"  # supplied trees win where given (trees=supplied: they alone)
    languages = ("en",)
    language_note = "its trees come from Feng & Hirst's English RST parser (trees=supplied reads any language)"
    citation = ("Guzman, Joty, Marquez & Nakov 2014, Using discourse structure improves MT evaluation (ACL), "
                "§3; Joty et al. 2014, DiscoTK (WMT); Collins & Duffy 2001 all-subtree kernel")
    fixed_variant: Optional[str] = None
    options = {
        "variant": Option("lex1", "tree representation: " + ", ".join(VARIANTS), choices=VARIANTS),
        "kernel": Option("sst", "tree kernel: sst (all subtrees, DiscoTK's), st or ptk", choices=KERNELS),
        "lam": Option(0.4, "decay lambda in (0, 1]", check=_decay),
        "mu": Option(0.4, "PTK's vertical decay mu in (0, 1]", check=_decay),
        "trees": Option("parsed", "trees: parsed (Feng & Hirst's RST parser; supplied trees win where given) or "
                                  "supplied (only trees supplied with --trees discourse)", choices=TREE_SOURCES),
    }

    def _post_init(self) -> None:
        self._kernel = TreeKernel(self.params["kernel"], self.params["lam"], self.params["mu"])
        if self.params["trees"] == "supplied":
            self.layers = ()  # no parser: the user's trees
            self.resources = ("supplied discourse trees",)  # an input of each run (--trees discourse)

    def language_support(self):
        return ((), "") if self.params["trees"] == "supplied" else super().language_support()

    def check_resources(self) -> None:
        """The parser must be here unless every tree is supplied: checked now when no supplied discourse trees
        are in use, else when a text without one is met."""
        if self.layers and not supplied_table("discourse"):
            get_layer("discourse").check()

    @property
    def tree_variant(self) -> str:
        return self.fixed_variant or self.params["variant"]

    def analyse(self, texts: Sequence[str]) -> List[Tree]:
        return discourse_trees(texts, self.tree_variant, self.params["trees"])

    def compare(self, analysis: List[Tree], hyp: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return kernel_similarities(self._kernel, analysis, hyp, ref)


_FIXED_OPTIONS = {k: v for k, v in DiscourseTreeKernel.options.items() if k != "variant"}


def _fixed(variant: str, doc: str) -> type:
    """``dr-tk`` with its representation fixed to ``variant``: a class this module holds under its name, so its
    instances pickle (to worker processes) by reference."""
    name = "DiscourseTreeKernel_" + variant.replace(".", "_")
    cls = globals()[name] = type(name, (DiscourseTreeKernel,), {
        "__doc__": doc, "__module__": __name__, "options": _FIXED_OPTIONS, "fixed_variant": variant})
    return cls


# DiscoTK's five representations, each registered as dr-tk-<variant> with the variant fixed.
register("dr-tk-nolex")(_fixed("nolex", "DiscoTK's DR-NOLEX: ``dr-tk`` on the discourse trees without their words."))
register("dr-tk-lex1")(_fixed("lex1", "DiscoTK's DR-LEX1: ``dr-tk`` on the discourse trees with their words."))
register("dr-tk-lex1.1")(_fixed("lex1.1", "DiscoTK's DR-LEX1.1: ``dr-tk`` with relation labels propagated to the "
                                           "words."))
register("dr-tk-lex2")(_fixed("lex2", "DiscoTK's DR-LEX2: ``dr-tk`` with structure and labels separated."))
register("dr-tk-lex2.1")(_fixed("lex2.1", "DiscoTK's DR-LEX2.1: ``dr-tk`` with labels propagated to the words, then "
                                           "separated from the structure."))
