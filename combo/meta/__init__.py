"""Meta-evaluation statistics: pure functions on numpy arrays (no text, no test beds, no I/O).

- :mod:`.correlation`: Pearson, Spearman, Kendall tau-b/tau-c (``kendall_tau``), grouped by item, system or none.
- :mod:`.pairwise`: WMT Kendall-like tau (WMT12/13/14, daRR), acc_eq with tie calibration, pair builders.
- :mod:`.queen`: QUEEN (QARLA), the probability that a candidate is closer to the references than they are to each
  other; the combination scheme and the core KING reads.
- :mod:`.likeness`: KING and ORANGE (human likeness of QUEEN combinations and single metrics).
- :mod:`.significance`: bootstrap intervals, paired bootstrap and permutation tests, Williams test.
- :mod:`.wmt23`: the WMT23 metrics-task statistics, task average and significance clusters (mt-metrics-eval).
- :mod:`.mutt`: MUTT unit-test pass rules and accuracies (Boag et al. 2016); running the tests over texts is
  :mod:`combo.metric_unit_tests` (it scores text, so it sits above this package).
"""

import importlib

#: Each public name and the module that defines it: imported on first use, so that a command reading one
#: constant (the command line's option choices) does not import every statistic and SciPy's with them.
_HOME = {
    "correlation": ("CorrelationResult", "correlate", "correlation_values", "kendall_tau", "pearson", "spearman"),
    "likeness": ("KING_TIES", "KingResult", "OrangeResult", "king", "orange"),
    "pairwise": ("KendallLikeResult", "PreferencePairs", "TieAccuracyResult", "pair_scores", "pairs_from_rankings",
                 "pairs_from_scores", "pairwise_accuracy_with_ties", "pairwise_accuracy_with_ties_values",
                 "wmt_kendall", "wmt_kendall_values"),
    "significance": ("BootstrapResult", "SignificanceResult", "WilliamsResult", "bootstrap", "paired_bootstrap_test",
                     "permutation_test", "williams_test", "williams_test_scores"),
    "wmt23": ("TaskRanking", "average_clusters", "seg_acc_eq", "seg_correlation", "significance_clusters",
              "sys_pairwise_accuracy", "sys_pearson", "wmt23_average", "wmt23_tasks"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    """A public name's value, imported from its module on first use (PEP 562 module ``__getattr__``)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    """The module's names with the lazily imported public ones (PEP 562 ``__dir__``)."""
    return sorted(set(globals()) | set(_MODULE_OF))
