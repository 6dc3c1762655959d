"""The HTML report of a scored test bed (``combo report``) and the plots it shares with the docs.

matplotlib is optional: without it :func:`build_report` and every plot raise
:class:`~combo.errors.ResourceMissing` naming ``pip install 'combo-eval[report]'``;
the rest of combo is unaffected.
"""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

from .build import ReportInputs, build_report, metric_correlations, worst_segments


def tuned_weights(specs: Sequence[str], names: Sequence[str]) -> Dict[str, Tuple[Dict[str, float], float]]:
    """Weights and bias of each tuned metric (model file) among ``specs``, keyed by its name in ``names``."""
    from ..scoring import resolve_metric

    out = {}
    for spec, name in zip(specs, names):
        if spec.lower().endswith(".json"):
            metric = resolve_metric(spec)
            out[name] = (metric.weights, float(metric.model.bias))
    return out


def write_report(path, evaluator, inputs: ReportInputs = None, title: str = "") -> int:
    """Build the report and write it to ``path`` atomically (whole or not at all); returns its size in bytes."""
    from ..io.text import write_text_atomic

    text = build_report(evaluator, inputs, title)
    write_text_atomic(text, path)
    return len(text.encode("utf-8"))


__all__ = ["ReportInputs", "build_report", "metric_correlations", "tuned_weights", "worst_segments", "write_report"]
