"""What training prints: the cross-validated quality of a tuned model beside ULC and each metric alone."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import numpy as np

from ...meta.objectives import wmt23_statistics
from ...meta.pairwise import KendallLikeResult, wmt_kendall
from .data import TrainingData, TrainingPairs, judged_blocks
from .fit import CrossValidation

#: The statistics of :func:`training_report` on absolute judgments, in the order printed (WMT23's per pair).
WMT23_STATISTICS = ("seg_pearson", "seg_acc_eq", "sys_pearson", "sys_accuracy", "average")


def training_report(data: TrainingData, cv: Optional[CrossValidation], method: str,
                    system_scores: Optional[Sequence[np.ndarray]] = None) -> Dict[str, Any]:
    """The quality of the cross-validated tuned scores beside the ULC of the same metrics and each metric alone.

    Relative rankings: WMT12 Kendall over the training pairs (human ties left
    out), pooled for one test bed, the mean over test beds for several (as WMT
    averages language pairs). Absolute scores: WMT23's four statistics and
    their average on each test bed (:func:`combo.meta.objectives.wmt23_statistics`),
    and their mean over test beds; a single metric's system score is its own
    (``system_scores[k]``: the table's (metrics, systems) of test bed ``k``),
    a combination's the mean of its segment scores.
    """
    from ..ulc import ulc

    combined = ulc(data.scores, data.higher_is_better, data.norm_group)
    oriented = [data.scores[k] if data.higher_is_better[k] else -data.scores[k] for k in range(len(data.metrics))]
    report: Dict[str, Any] = {"folds": cv.folds if cv is not None else 0,
                              "grouped_by": cv.by if cv is not None else None, "pairs": len(data.pairs)}
    if data.pairs.kind == "scores":
        blocks, index, sources = judged_blocks(data, np.ones(data.n_rows, dtype=bool))
        names = [data.sources[k]["name"] for k in sources]

        def stats(values, metric=None):
            per = []
            for b, k in zip(blocks, sources):
                sys_ = None
                if metric is not None and system_scores is not None:
                    own = np.asarray(system_scores[k][metric], dtype=np.float64)
                    sys_ = own[b.system_codes - data.system_offset[k]]
                    sys_ = sys_ if data.higher_is_better[metric] else -sys_
                per.append(wmt23_statistics(b, values[index], sys_))
            mean = {s: float(np.mean([p[s] for p in per])) for s in WMT23_STATISTICS}
            return {"testbeds": dict(zip(names, per)), "mean": mean}

        singles = {m: stats(oriented[k], k) for k, m in enumerate(data.metrics)}
        best = max(singles, key=lambda m: (np.nan_to_num(singles[m]["mean"]["average"], nan=-np.inf), m))
        report.update({"criterion": "WMT23 statistics per test bed (seg Pearson, acc_eq by item, sys Pearson, "
                                    "sys accuracy, their average)" + (f", mean over {len(blocks)} test beds"
                                                                      if len(blocks) > 1 else ""),
                       "statistics": list(WMT23_STATISTICS),
                       "tuned": stats(cv.raw) if cv is not None else None, "ulc": stats(combined),
                       "best_single": {"metric": best, **singles[best]}, "single": singles})
        return report
    n = len(data.sources)
    subsets = [data.pairs.subset(data.pair_source == k) for k in range(n)] if n > 1 else [data.pairs]

    def both(values):
        return {ties: float(np.mean([pair_kendall(values, pairs, rule).value for pairs in subsets]))
                for ties, rule in (("ties_discordant", "discordant"), ("ties_excluded", "excluded"))}

    singles = {m: both(v) for m, v in zip(data.metrics, oriented)}
    best = max(singles, key=lambda m: (np.nan_to_num(singles[m]["ties_discordant"], nan=-np.inf), m))
    report.update({"criterion": "WMT12 Kendall over the training pairs (human ties left out)"
                                + (f", mean over {n} test beds" if n > 1 else ""),
                   "tuned": both(cv.raw) if cv is not None else None, "ulc": both(combined),
                   "best_single": {"metric": best, **singles[best]}, "single": singles})
    if cv is not None and method == "regression":
        ok = np.isfinite(data.targets)
        report["tuned"]["pearson_with_targets"] = float(np.corrcoef(cv.raw[ok], data.targets[ok])[0, 1]) \
            if ok.sum() > 1 and np.std(cv.raw[ok]) > 0 and np.std(data.targets[ok]) > 0 else None
    return report


def pair_kendall(row_scores: np.ndarray, pairs: TrainingPairs, ties: str = "discordant") -> KendallLikeResult:
    """WMT12 Kendall of per-row scores over training pairs (human ties already left out)."""
    s = np.asarray(row_scores, dtype=np.float64)
    return wmt_kendall(s[pairs.better], s[pairs.worse], None, variant="wmt12", ties=ties)
