"""What a metric's scores depend on beyond its options and texts: analyser versions, the supplied trees it
reads, the references per segment."""

from __future__ import annotations

from typing import Optional

from ..metrics.base import Metric, analyser_versions
from ..testbed import SuppliedTrees, Testbed


def analysis_provenance(metric: Metric, trees: Optional[SuppliedTrees] = None) -> str:
    """What a metric's scores depend on beyond its options: :func:`~combo.metrics.base.analyser_versions` and
    ``trees:``, the digest of the test bed's ``trees`` of the kind the metric reads. Empty for metrics of text
    alone."""
    out = analyser_versions(metric)
    kind = _supplied_kind(metric)
    if kind is not None:
        out += ("|" if out else "") + f"trees:{kind}:{(trees or SuppliedTrees()).digest(kind)}"
    return out


def _supplied_kind(metric: Metric) -> Optional[str]:
    """The kind of supplied trees a metric reads (``--trees KIND``), or None."""
    params = getattr(metric, "params", {}) or {}
    if getattr(metric, "supplied_kind", None) == "discourse":  # the discourse kernels, parsing or not
        return "discourse"
    if params.get("trees") == "supplied":
        return "constituents"
    if params.get("parser") == "supplied":
        return "dependencies"
    return None


def provenance(metric: Metric, testbed: Testbed) -> str:
    """``nrefs:K`` (``K`` or ``min-max`` references per segment) and :func:`analysis_provenance`."""
    counts = [len(s.references) for s in testbed.segments] or [0]
    lo, hi = min(counts), max(counts)
    nrefs = f"nrefs:{lo}" if lo == hi else f"nrefs:{lo}-{hi}"
    extra = analysis_provenance(metric, testbed.trees)
    return nrefs + (f"|{extra}" if extra else "")
