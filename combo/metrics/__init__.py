"""Metrics: the template (:mod:`.base`), the registry (:mod:`.registry`) and the metric families."""

from .base import Metric, Option, Rows, refs_from_streams
from .registry import get_metric, list_metrics, metric_class, register

__all__ = ["Metric", "Option", "Rows", "get_metric", "list_metrics", "metric_class", "refs_from_streams", "register"]
