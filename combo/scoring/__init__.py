"""Run metrics over a test bed into a :class:`ScoreTable`, and the reference scores QUEEN and KING need.

One module per part: :mod:`.table` (the score table), :mod:`.resolve` (metric specs, named sets, language and
reference checks), :mod:`.provenance`, :mod:`.cache` (the disk score cache), :mod:`.tasks` (the typed tasks
workers run), :mod:`.plan` (chunks of rows, costly layers), :mod:`.run` (:func:`score_testbed` and the run),
:mod:`.references` (:func:`reference_scores`, :func:`score_with_references`). This package re-exports the
public API; a test that replaces a name patches the module that looks it up.
"""

from .cache import (SCORE_CACHE_MARKER, SCORE_CACHE_VARIABLE, cache_clear, cache_info, cache_warning,
                    default_score_cache, write_npz_atomic)
from .provenance import analysis_provenance, provenance
from .references import ReferenceScores, reference_scores, score_with_references
from .resolve import MetricLike, check_language, check_references, metrics_for, reads_language, resolve_metric
from .run import score_testbed
from .table import LEVELS, ScoreTable

__all__ = [
    "LEVELS", "MetricLike", "ReferenceScores", "SCORE_CACHE_MARKER", "SCORE_CACHE_VARIABLE", "ScoreTable",
    "analysis_provenance", "cache_clear", "cache_info", "cache_warning", "check_language", "check_references",
    "default_score_cache", "metrics_for", "provenance", "reads_language", "reference_scores", "resolve_metric",
    "score_testbed", "score_with_references", "write_npz_atomic",
]
