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

from .correlation import CorrelationResult, correlate, correlation_values, kendall_tau, pearson, spearman
from .likeness import KING_TIES, KingResult, OrangeResult, king, orange
from .pairwise import (KendallLikeResult, PreferencePairs, TieAccuracyResult, pair_scores,
                       pairs_from_rankings, pairs_from_scores, pairwise_accuracy_with_ties,
                       pairwise_accuracy_with_ties_values, wmt_kendall, wmt_kendall_values)
from .significance import (BootstrapResult, SignificanceResult, WilliamsResult, bootstrap,
                           paired_bootstrap_test, permutation_test, williams_test, williams_test_scores)
from .wmt23 import (TaskRanking, average_clusters, seg_acc_eq, seg_correlation, significance_clusters,
                    sys_pairwise_accuracy, sys_pearson, wmt23_average, wmt23_tasks)

__all__ = [
    "KING_TIES", "KingResult", "OrangeResult", "king", "orange",
    "BootstrapResult", "CorrelationResult", "KendallLikeResult", "PreferencePairs", "SignificanceResult",
    "TieAccuracyResult", "WilliamsResult", "bootstrap", "correlate", "correlation_values", "kendall_tau", "pearson",
    "pair_scores", "paired_bootstrap_test", "pairs_from_rankings", "pairs_from_scores",
    "pairwise_accuracy_with_ties", "pairwise_accuracy_with_ties_values", "permutation_test", "spearman",
    "williams_test", "williams_test_scores", "wmt_kendall", "wmt_kendall_values",
    "TaskRanking", "average_clusters", "seg_acc_eq", "seg_correlation", "significance_clusters",
    "sys_pairwise_accuracy", "sys_pearson", "wmt23_average", "wmt23_tasks",
]
