"""The metrics a scoring call names, and the checks made before any is computed: specs and model files
resolved to metrics, named sets expanded, the test bed's language and references checked."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ..analysis.supplied import using_trees
from ..errors import InputError, OptionError
from ..metrics.base import Metric
from ..metrics.registry import get_metric, is_model_file, shipped_model
from ..metrics.sets import expand_metric_sets
from ..testbed import Testbed

MetricLike = Union[str, Metric]


def _display_name(metric: Metric, given: MetricLike) -> str:
    return given if isinstance(given, str) else metric.name


def _expand_sets(metrics: Sequence[MetricLike]) -> Tuple[List[MetricLike], List[str]]:
    """``metrics`` with each named set (``@lexical``, ``@heterogeneous``: combo.metrics.sets) replaced by its
    members, and the notes on members ``@set:available`` left out."""
    notes: List[str] = []
    return expand_metric_sets(metrics, notes), notes


def reads_language(metric: Metric, language: Optional[str]) -> bool:
    """Whether ``metric`` at its options reads text in ``language`` (``None``, unknown: assumed so)."""
    languages = metric.language_support()[0]
    return language is None or not languages or language in languages


def check_language(metric: Metric, language: Optional[str], texts: str, given: MetricLike = None) -> None:
    """Refuse a metric whose analyses cannot read ``language`` (``None``: unknown, nothing checked).

    ``texts`` names what is scored in the message (e.g. "the candidates of test bed X").
    """
    if reads_language(metric, language):
        return
    languages, why = metric.language_support()
    read = ', '.join(map(repr, languages))
    if metric.family == "learned":  # a model's user cannot choose its metrics: what they can do is different
        raise OptionError(
            f"{_display_name(metric, given)} reads only {read} text ({why}); {texts} are in {language!r}. Fix: "
            f"apply it to {read} text, train a model on metrics that read {language!r} (combo metrics lists each "
            f"metric's languages), or apply it anyway with --language any")
    raise OptionError(
        f"{_display_name(metric, given)} reads only {read} "
        f"text: {why}; {texts} are in {language!r}. Fix: choose a metric that reads {language!r} (combo metrics "
        f"lists each metric's languages), or score anyway with --language any (API: "
        f"testbed.metadata['target_language'] = None)")


def resolve_metric(spec: str) -> Metric:
    """The metric a spec names: a registered metric (``"bleu:max_order=2"``) or a tuned-metric model file
    (``"model.json"``, read by :func:`combo.metrics.tuned.load_model`; a missing file is an InputError naming it).

    Model files are resolved here, above the registry, so the registry never imports what is built on it.
    """
    if not is_model_file(spec):
        return get_metric(spec)
    from ..metrics.tuned import load_model

    path = spec.strip()
    if not Path(path).is_file() and shipped_model(path) is None:
        raise InputError("model file not found", path, fix="give the path of a model written by `combo train`")
    return load_model(path)


def metrics_for(testbed: Testbed, metrics: Sequence[MetricLike], pairs: bool = False) -> List[Metric]:
    """Metric instances for ``metrics`` (specs or instances), checked for the test bed's language and resources.

    ``pairs``: the metrics must also score text pairs (QUEEN and KING), which scores read
    per candidate from a file (``mtme:``, ``scores:``) cannot.
    """
    instances = [resolve_metric(m) if isinstance(m, str) else m for m in metrics]
    for given, m in zip(metrics, instances):
        if pairs and m.locality == "candidate":
            from ..metrics.external import PAIR_REFUSAL

            raise OptionError(f"{_display_name(m, given)}: {PAIR_REFUSAL}. Fix: leave it out of the metrics "
                              "whose single-reference scores QUEEN, KING and ORANGE need, or measure the metrics "
                              "with a criterion that needs none (r_snt or wmt_kendall, with ULC)")
        check_language(m, testbed.target_language, f"the candidates of test bed {testbed.name}", given)
    with using_trees(testbed.trees):  # a metric whose resource a supplied tree stands in for sees them
        for m in instances:
            m.check_resources()
    return instances


def check_references(testbed: Testbed) -> None:
    """Refuse a test bed with a segment that has no reference: a text metric would score it 0 silently."""
    empty = [seg.id for seg in testbed.segments if not seg.references]
    if empty:
        raise InputError(f"test bed {testbed.name!r}: segment {empty[0]!r} has no reference ({len(empty)} such "
                         f"segments of {len(testbed.segments)})",
                         fix="give every segment at least one reference (an empty string is allowed)")
