"""Meta-evaluation of metrics and metric combinations on a test bed, and optimal-set search.

This package joins the layers: a :class:`~combo.testbed.Testbed` gives human judgments, a
:class:`~combo.scoring.ScoreTable` (and, for QUEEN/KING, a :class:`~combo.scoring.ReferenceScores`) gives metric
scores, :mod:`combo.combine` combines them and :mod:`combo.meta` measures them. Criteria (Giménez & Màrquez 2008,
§4): human likeness (``king``, ``orange``, with QUEEN) and human acceptability (``r_snt`` segment Pearson, WMT
``wmt_kendall``, system-level ``pearson``/``spearman``, ``acc_eq``); the WMT23 metrics task's statistics; and on a
MUTT test bed, ``mutt``: the mean unit-test accuracy over corruption types (Boag et al. 2016).

- :mod:`.records`: the records (:class:`Criterion`, :class:`Scheme`), their registries and lookups, and
  :class:`Quality`, a criterion's result;
- :mod:`.schemes` and :mod:`.criteria`: the built-in combination schemes and criteria, each one's computation
  next to its record;
- :mod:`.evaluator`: :class:`MetaEvaluator`, the inputs every criterion reads and the running of a record;
- :mod:`.search`: metric-set search (:func:`search_metric_sets`); :mod:`.significance`: significance clusters;
- :mod:`.entries`: every metric and combination under several criteria (``combo evaluate``, ``combo report``).
"""

from .records import (COMMAND_OPTIONS, DEFAULT_SCHEME_NAME, FAMILIES, JUDGMENTS, KING_TIE_WARNING, LEVELS,
                      Criterion, Needs, Quality, Scheme, accepted_criterion_names, check_scheme, criteria_of_family,
                      criterion_aliases, criterion_name, criterion_names, criterion_records, criterion_sign,
                      default_scheme, get_criterion, get_scheme, left_out_notes, reading_references,
                      register_criterion, register_scheme, registered, scheme_names, scheme_records, unregister)
from . import schemes as _schemes  # noqa: F401  - registers the built-in schemes
from .criteria import correlation_bootstrap
from .evaluator import MetaEvaluator
from .significance import significance_clusters
from .search import (SEARCH_ALPHA, SetSearch, compare_with_best_single, king_tie_warnings, search_metric_sets)
from .entries import (evaluate_entries, evaluation_output, evaluation_rows, supported_criteria,
                      wmt23_official_average, wmt23_over_pairs)

__all__ = [
    "COMMAND_OPTIONS", "DEFAULT_SCHEME_NAME", "FAMILIES", "JUDGMENTS", "KING_TIE_WARNING", "LEVELS", "SEARCH_ALPHA",
    "Criterion", "MetaEvaluator", "Needs", "Quality", "Scheme", "SetSearch", "accepted_criterion_names",
    "check_scheme", "compare_with_best_single", "correlation_bootstrap", "criteria_of_family", "criterion_aliases",
    "criterion_name", "criterion_names", "criterion_records", "criterion_sign", "default_scheme",
    "evaluate_entries", "evaluation_output", "evaluation_rows", "get_criterion", "get_scheme",
    "king_tie_warnings", "left_out_notes", "reading_references", "register_criterion", "register_scheme",
    "registered", "scheme_names", "scheme_records", "search_metric_sets", "significance_clusters",
    "supported_criteria", "unregister", "wmt23_official_average", "wmt23_over_pairs",
]
