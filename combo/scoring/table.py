"""The score table: metrics' segment and system scores on a test bed's candidates (:class:`ScoreTable`),
and how a run's results become one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Tuple

import numpy as np

from ..errors import OptionError
from ..testbed import Testbed
from .provenance import provenance
from .resolve import _display_name

#: The levels a score table reports: corpus scores per system, or one score per candidate.
LEVELS = ("system", "segment")


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
        """Rows as dicts: per system, or per (system, segment) (``level`` one of :data:`LEVELS`)."""
        header, rows = self.to_rows(level)
        return [dict(zip(header, row)) for row in rows]

    def to_rows(self, level: str = "system") -> Tuple[List[str], Iterator[list]]:
        """The column names and the rows (lists of values, scores as floats): per system, or per (system,
        segment) (``level`` one of :data:`LEVELS`)."""
        if level not in LEVELS:
            raise OptionError(f"unknown level {level!r}; choose one of {list(LEVELS)}")
        if level == "system":
            return ["system", *self.metrics], ([s, *v] for s, v in zip(self.systems, self.system.T.tolist()))
        systems, segments = self.systems, self.segment_ids
        return ["system", "segment", *self.metrics], (
            [systems[s], segments[g], *v]
            for s, g, v in zip(self.row_system.tolist(), self.row_segment.tolist(), self.segment.T.tolist()))

    def save(self, path) -> None:
        """Save as ``.npz``: plain arrays and JSON text, no pickle."""
        meta = {"metrics": self.metrics, "signatures": self.signatures, "higher_is_better": self.higher_is_better,
                "systems": self.systems, "segment_ids": self.segment_ids, "testbed": self.testbed,
                "metadata": self.metadata}
        np.savez_compressed(path, meta=np.array(json.dumps(meta, ensure_ascii=False)), row_system=self.row_system,
                            row_segment=self.row_segment, segment=self.segment, system=self.system)

    @classmethod
    def load(cls, path) -> "ScoreTable":
        """Read a table written by :meth:`save`."""
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            return cls(meta["metrics"], meta["signatures"], meta["higher_is_better"], meta["systems"],
                       meta["segment_ids"], z["row_system"], z["row_segment"], z["segment"], z["system"],
                       meta["testbed"], meta["metadata"])

    def to_dataframe(self, level: str = "segment"):
        """A pandas DataFrame (pandas is optional: ``pip install 'combo-eval[pandas]'``)."""
        try:
            import pandas as pd
        except ImportError:
            from ..errors import ResourceMissing
            from ..extras import install_hint

            raise ResourceMissing("pandas", install_hint("pandas")) from None
        return pd.DataFrame.from_records(self.to_records(level))

    def to_json(self) -> str:
        return json.dumps({
            "testbed": self.testbed,
            "metrics": [{"name": m, "signature": s, "higher_is_better": h,
                         "depends_on": self.metadata.get("provenance", {}).get(m, "")}
                        for m, s, h in zip(self.metrics, self.signatures, self.higher_is_better)],
            "system": self.to_records("system"),
            "segment": self.to_records("segment"),
        }, ensure_ascii=False, indent=1)


def _table(testbed: Testbed, metrics, instances, systems, row_system, row_segment, results,
           signatures: Optional[Dict[int, str]] = None) -> "ScoreTable":
    signatures = signatures or {}
    names = [_display_name(m, metrics[i]) for i, m in enumerate(instances)]
    missing = {names[k]: int(np.isnan(r[0]).sum()) for k, r in enumerate(results) if np.isnan(r[0]).any()}
    metadata: Dict[str, object] = {"provenance": {names[k]: provenance(m, testbed) for k, m in enumerate(instances)}}
    if missing:
        metadata["missing_scores"] = missing
    return ScoreTable(
        metrics=names,
        signatures=[signatures.get(k, m.signature) for k, m in enumerate(instances)],
        higher_is_better=[m.higher_is_better for m in instances],
        systems=systems,
        segment_ids=[s.id for s in testbed.segments],
        row_system=row_system,
        row_segment=row_segment,
        segment=np.vstack([r[0] for r in results]) if results else np.zeros((0, len(row_system))),
        system=np.vstack([r[1] for r in results]) if results else np.zeros((0, len(systems))),
        testbed=testbed.name,
        metadata=metadata,
    )


def _with_notes(table: ScoreTable, notes: List[str]) -> ScoreTable:
    if notes:
        table.metadata["notes"] = notes
    return table
