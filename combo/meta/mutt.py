"""Metric unit tests (MUTT; Boag, Campos, Saenko & Rumshisky 2016).

A unit test is a sentence and a corruption of it, both scored against the same
references. A metric passes (Boag et al. 2016):

- a *meaning-altering* or *fluency-disrupting* test when it scores the
  original above the corruption (below, for an error rate such as TER);
- a *meaning-preserving* test when the two scores differ by at most 15% of
  the original's: ``|s_orig - s_corr| / (s_orig + 1e-9) <= 0.15`` (their
  "Difference formula", on the metric's own scale).

Its accuracy on a corruption type is the share of that type's tests it passes.

This module is pure arithmetic on score arrays (:func:`unit_test_passes`,
:func:`unit_test_accuracy`), which the ``mutt`` criterion of
:class:`combo.evaluate.MetaEvaluator` uses, and the result type. The whole
procedure from trials to accuracies, which scores text, is
:func:`combo.metric_unit_tests.run_unit_tests`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..errors import OptionError

DIFFERENCE_TOLERANCE = 0.15
EPSILON = 1e-9
KINDS = ("meaning-altering", "meaning-preserving", "fluency-disrupting")


def unit_test_passes(original: np.ndarray, corrupted: np.ndarray, kind: str, higher_is_better: bool = True,
                     tolerance: float = DIFFERENCE_TOLERANCE) -> np.ndarray:
    """Whether each test passes (Boag et al. 2016); NaN scores fail."""
    original = np.asarray(original, dtype=np.float64)
    corrupted = np.asarray(corrupted, dtype=np.float64)
    if kind == "meaning-preserving":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.abs(original - corrupted) / (original + EPSILON) <= tolerance
    if kind in ("meaning-altering", "fluency-disrupting"):
        return original > corrupted if higher_is_better else original < corrupted
    raise OptionError(f"unknown corruption kind {kind!r}; choose one of {list(KINDS)}")


def unit_test_accuracy(original: np.ndarray, corrupted: np.ndarray, corruption: Sequence[str],
                       kinds: Dict[str, str], higher_is_better: bool = True) -> Dict[str, tuple]:
    """``{corruption type: (tests, passed)}`` for one metric's scores of the originals and their corruptions."""
    corruption = np.asarray(corruption)
    out = {}
    for c in dict.fromkeys(corruption.tolist()):
        mask = corruption == c
        ok = unit_test_passes(original[mask], corrupted[mask], kinds[c], higher_is_better)
        out[c] = (int(mask.sum()), int(ok.sum()))
    return out


@dataclass
class UnitTestResult:
    """Accuracy of each metric on each corruption type.

    ``counts[metric][corruption] = (tests, passed)``; :attr:`accuracy` gives
    ``passed / tests``. ``references`` is the per-trial cap (None: all the
    data gives); ``notes`` say what was left out and why.
    """

    metrics: List[str]
    corruptions: List[str]
    kinds: Dict[str, str]
    counts: Dict[str, Dict[str, tuple]]
    references: Optional[int] = None
    seed: int = 0
    signatures: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

    @property
    def accuracy(self) -> Dict[str, Dict[str, float]]:
        return {m: {c: (p / n if n else float("nan")) for c, (n, p) in cells.items()}
                for m, cells in self.counts.items()}

    def mean_accuracy(self, metric: str) -> float:
        """Mean accuracy over corruption types (each type weighs the same, as the mutt criterion)."""
        values = [v for v in self.accuracy[metric].values() if np.isfinite(v)]
        return float(np.mean(values)) if values else float("nan")

    def to_records(self) -> List[Dict[str, object]]:
        """Flat rows: metric, corruption, kind, n, passed, accuracy."""
        rows = []
        for m in self.metrics:
            for c in self.corruptions:
                n, p = self.counts[m][c]
                rows.append({"metric": m, "corruption": c, "kind": self.kinds[c], "n": n, "passed": p,
                             "accuracy": p / n if n else float("nan")})
        return rows

    def to_dict(self) -> Dict[str, object]:
        return {"references": self.references, "seed": self.seed, "kinds": self.kinds,
                "tests": {c: self.counts[self.metrics[0]][c][0] for c in self.corruptions} if self.metrics else {},
                "accuracy": self.accuracy, "mean_accuracy": {m: self.mean_accuracy(m) for m in self.metrics},
                "records": self.to_records(), "signatures": self.signatures, "notes": self.notes}

    def to_table(self) -> str:
        """Accuracy (%) per metric (rows) and corruption type (columns), with the mean over types."""
        width = max([len(m) for m in self.metrics] + [6])
        cols = [c for c in self.corruptions]
        head = f"{'metric':<{width}}  " + "  ".join(f"{c:>14}" for c in cols) + f"  {'mean':>6}"
        label = {"meaning-altering": "altering", "meaning-preserving": "preserving", "fluency-disrupting": "fluency"}
        kinds = f"{'':<{width}}  " + "  ".join(f"{label[self.kinds[c]]:>14}" for c in cols)
        tests = f"{'tests':<{width}}  " + "  ".join(f"{self.counts[self.metrics[0]][c][0]:>14}" for c in cols)
        lines = [head, kinds, tests]
        acc = self.accuracy
        for m in self.metrics:
            lines.append(f"{m:<{width}}  " + "  ".join(f"{100 * acc[m][c]:>14.1f}" for c in cols)
                         + f"  {100 * self.mean_accuracy(m):>6.1f}")
        refs = ("all references" if self.references is None
                else f"at most {self.references} references (seed {self.seed})")
        lines.append(f"accuracy in %, {refs}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


def segment_pairs(table, row_values: np.ndarray, groups: Sequence[str]):
    """Per segment of a MUTT score table: the original's score, the corruption's score and the segment's type."""
    sys_index = {s: k for k, s in enumerate(table.systems)}
    n_seg = len(table.segment_ids)
    matrix = np.full((len(table.systems), n_seg), np.nan)
    matrix[table.row_system, table.row_segment] = row_values
    return matrix[sys_index["original"]], matrix[sys_index["corrupted"]], np.asarray(groups)


def mean_unit_test_accuracy(counts: Dict[str, tuple]) -> float:
    """Mean over corruption types of each type's accuracy (the ``mutt`` search criterion)."""
    values = [p / n for n, p in counts.values() if n]
    return float(np.mean(values)) if values else float("nan")


__all__ = ["DIFFERENCE_TOLERANCE", "UnitTestResult", "mean_unit_test_accuracy", "segment_pairs",
           "unit_test_accuracy", "unit_test_passes"]
