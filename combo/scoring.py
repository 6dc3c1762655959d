"""Run metrics over a test bed into a :class:`ScoreTable`.

Each metric sees every candidate of every system at once: the distinct texts
(candidates and references) are analysed once, the statistics of all rows
come from one call, segment scores are the metric's sentence-level scores and
system scores are the scores of each system's summed statistics (corpus
level). Metrics are independent, so ``jobs > 1`` runs them in parallel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

from .metrics.base import Metric, Rows
from .metrics.registry import get_metric
from .testbed import Testbed

MetricLike = Union[str, Metric]


@dataclass
class ScoreTable:
    """Scores of metrics on the candidates of a test bed.

    Rows are candidates ``(row_system[k], row_segment[k])``; ``segment[m, k]``
    is metric ``m``'s score of row ``k``; ``system[m, s]`` its corpus-level
    score of system ``s``.
    """

    metrics: List[str]
    signatures: List[str]
    higher_is_better: List[bool]
    systems: List[str]
    segment_ids: List[str]
    row_system: np.ndarray
    row_segment: np.ndarray
    segment: np.ndarray
    system: np.ndarray
    testbed: str = ""
    metadata: Dict[str, object] = field(default_factory=dict)

    def metric_index(self, name: str) -> int:
        return self.metrics.index(name)

    def system_scores(self, metric: str) -> Dict[str, float]:
        """Corpus-level score of each system for ``metric``."""
        m = self.metric_index(metric)
        return {s: float(v) for s, v in zip(self.systems, self.system[m])}

    def to_records(self, level: str = "system") -> List[Dict[str, object]]:
        """Rows as dicts: per system, or per (system, segment)."""
        if level == "system":
            return [{"system": s, **{m: float(self.system[j, i]) for j, m in enumerate(self.metrics)}}
                    for i, s in enumerate(self.systems)]
        return [{"system": self.systems[self.row_system[k]], "segment": self.segment_ids[self.row_segment[k]],
                 **{m: float(self.segment[j, k]) for j, m in enumerate(self.metrics)}}
                for k in range(len(self.row_system))]

    def to_json(self) -> str:
        return json.dumps({
            "testbed": self.testbed,
            "metrics": [{"name": m, "signature": s, "higher_is_better": h}
                        for m, s, h in zip(self.metrics, self.signatures, self.higher_is_better)],
            "system": self.to_records("system"),
            "segment": self.to_records("segment"),
        }, ensure_ascii=False, indent=1)


def _rows_of(testbed: Testbed, systems: Sequence[str]):
    refs = testbed.references()
    weights = testbed.reference_weights()
    hyps: List[str] = []
    row_refs: List[List[str]] = []
    row_weights: Optional[List[List[float]]] = [] if weights is not None else None
    row_system: List[int] = []
    row_segment: List[int] = []
    for s, name in enumerate(systems):
        for i, text in sorted(testbed.candidates[name].items()):
            hyps.append(text)
            row_refs.append(refs[i])
            if row_weights is not None:
                row_weights.append(weights[i])
            row_system.append(s)
            row_segment.append(i)
    return hyps, row_refs, row_weights, np.asarray(row_system, dtype=np.int64), np.asarray(row_segment, dtype=np.int64)


def _score_one(metric: Metric, rows: Rows, row_system: np.ndarray, n_systems: int):
    stats = metric.rows_statistics(rows)
    seg = np.asarray(metric.score(stats, segment_level=True), dtype=np.float64).reshape(len(row_system))
    sums = np.zeros((n_systems, stats.shape[1]))
    np.add.at(sums, row_system, stats)
    sysv = np.asarray(metric.score(sums, segment_level=False), dtype=np.float64).reshape(n_systems)
    return seg, sysv


def score_testbed(testbed: Testbed, metrics: Sequence[MetricLike], systems: Optional[Sequence[str]] = None,
                  jobs: int = 1, progress: bool = False) -> ScoreTable:
    """Score every candidate of ``testbed`` with each metric (names like ``"bleu:max_order=2"`` or instances)."""
    instances = [get_metric(m) if isinstance(m, str) else m for m in metrics]
    for m in instances:
        m.check_resources()
    systems = list(testbed.systems if systems is None else systems)
    hyps, refs, weights, row_system, row_segment = _rows_of(testbed, systems)
    rows = Rows.build(hyps, refs, weights)
    n_sys = len(systems)
    if jobs != 1 and len(instances) > 1:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=jobs)(delayed(_score_one)(m, rows, row_system, n_sys) for m in instances)
    else:
        it = instances
        if progress:
            from tqdm import tqdm

            it = tqdm(instances, desc="metrics", unit="metric", leave=False)
        results = [_score_one(m, rows, row_system, n_sys) for m in it]
    names = [_display_name(m, metrics[i]) for i, m in enumerate(instances)]
    return ScoreTable(
        metrics=names,
        signatures=[m.signature for m in instances],
        higher_is_better=[m.higher_is_better for m in instances],
        systems=systems,
        segment_ids=[s.id for s in testbed.segments],
        row_system=row_system,
        row_segment=row_segment,
        segment=np.vstack([r[0] for r in results]) if results else np.zeros((0, len(hyps))),
        system=np.vstack([r[1] for r in results]) if results else np.zeros((0, n_sys)),
        testbed=testbed.name,
    )


def _display_name(metric: Metric, given: MetricLike) -> str:
    return given if isinstance(given, str) else metric.name
