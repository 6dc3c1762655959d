"""The WMT23 metrics-task statistics on en-de (MQM), from the metric scores shipped in mt-metrics-eval's release.

For each metric: system pairwise accuracy (en-de alone), system Pearson,
segment Pearson (no grouping), segment acc_eq with tie calibration (grouped
by item), the WMT23 average of those four tasks (each weighing 1/4 with one
language pair; correlations mapped to [0, 1]), and segment Kendall tau-b
with and without item grouping (reported, not in the average). Then the
significance clusters of each task and of the average (mt-metrics-eval's
permutation tests, 1,000 draws, early stopping in blocks of 100, seeded).

Systems: the 12 MT systems (refA, the standard reference, and synthetic_ref,
an outlier in ``meta_info.py``, are left out); segments: the 460 of 557 with
an MQM score. Reference-based metrics use refA (``NAME-refA``), reference-free
ones the source (``NAME-src``).

    python experiments/wmt23_en_de.py [--data ../shared/data] [--k 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from combo.meta.wmt23 import (PermutationParams, average_clusters, seg_correlation,  # noqa: E402
                              significance_clusters, wmt23_average, wmt23_systems, wmt23_tasks, wmt23_weights)

METRICS = ["XCOMET-Ensemble-refA", "XCOMET-XL-refA", "MetricX-23-refA", "MetricX-23-QE-src", "GEMBA-MQM-src",
           "COMET-refA", "BLEURT-20-refA", "CometKiwi-src", "chrF-refA", "BLEU-refA"]


def read_scores(path: Path):
    """``SYSTEM SCORE`` lines, each system's in segment order; ``None`` becomes NaN."""
    scores = collections.defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        system, value = line.split()
        scores[system].append(np.nan if value == "None" else float(value))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    base = args.data / "wmt23"
    human_seg = read_scores(base / "human-scores" / "en-de.mqm.seg.score")
    human_sys = read_scores(base / "human-scores" / "en-de.mqm.sys.score")
    outputs = [p.stem for p in (base / "system-outputs" / "en-de").glob("*.txt")]
    refs = [p.name.split(".")[1] for p in (base / "references").glob("en-de.*.txt")]
    systems = [s for s in wmt23_systems(outputs, "en-de", refs) if s in human_seg]
    human = np.array([human_seg[s] for s in systems])
    hsys = np.array([human_sys[s][0] for s in systems])
    print(f"{len(systems)} systems, {int((~np.isnan(human)).any(0).sum())} rated segments")

    seg, sys_ = {}, {}
    print(f"{'metric':<22} {'sys-acc':>7} {'sys-r':>6} {'seg-r':>6} {'acc-t':>6} {'avg':>6} "
          f"{'tau':>6} {'tau-it':>6}")
    for name in METRICS:
        s = read_scores(base / "metric-scores" / "en-de" / f"{name}.seg.score")
        y = read_scores(base / "metric-scores" / "en-de" / f"{name}.sys.score")
        seg[name] = np.array([s[x] for x in systems])
        sys_[name] = np.array([y[x][0] for x in systems])
        tasks = wmt23_tasks(seg[name], human, sys_[name], hsys)
        print(f"{name:<22} " + " ".join(f"{v:>6.3f}" for _, v in tasks)
              + f" {wmt23_average(tasks):>6.3f} {seg_correlation(seg[name], human, 'kendall', 'none'):>6.3f}"
              f" {seg_correlation(seg[name], human, 'kendall', 'item'):>6.3f}")

    params = PermutationParams(k=args.k)
    rankings = []
    for task in ("sys_accuracy", "sys_pearson", "seg_pearson", "seg_acc_eq"):
        start = time.time()
        level = task.split("_")[0]
        rankings.append(significance_clusters(task, sys_ if level == "sys" else seg,
                                              hsys if level == "sys" else human, params=params, seed=args.seed))
        print(f"\n{task} (clusters, {time.time() - start:.1f} s)\n{rankings[-1]}")
    print(f"\naverage (clusters)\n{average_clusters(rankings, wmt23_weights(1))}")


if __name__ == "__main__":
    main()
