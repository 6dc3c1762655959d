"""Metric unit tests (MUTT; Boag, Campos, Saenko & Rumshisky 2016).

A unit test is a sentence and a corruption of it, both scored against the same
references. A metric passes (Boag et al. 2016):

- a *meaning-altering* or *fluency-disrupting* test when it scores the
  original above the corruption (below, for an error rate such as TER);
- a *meaning-preserving* test when the two scores differ by at most 15% of
  the original's: ``|s_orig - s_corr| / (s_orig + 1e-9) <= 0.15`` (their
  "Difference formula", on the metric's own scale).

Its accuracy on a corruption type is the share of that type's tests it passes.

The authors' released scoring script (``src/metrics.py`` of
text-machine-lab/MUTT) applies the same two rules by type name
(:func:`released_passes`, :data:`RELEASED_RULES`): ``"difference"``,
``abs((a - b) / (a + 1e-9)) * 100 <= 15``, for det_sub, near_syms and passive;
``"above"``, ``a > b`` (``a < b`` for an error rate), for every other type.
Scores equal to :data:`TIE_TOLERANCE` (relative) are a tie, which fails
``"above"``: coco-caption's CIDEr-D gives mathematically equal scores to an
original and its corruption whose differing n-grams no reference holds, and
the order of a floating-point sum must not decide such a trial.

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
#: The released script's two pass rules, by name (:func:`released_passes`).
RELEASED_RULES = {
    "above": "the original scores above its corruption (below, for an error rate); a tie fails",
    "difference": "the Difference formula, abs((a - b) / (a + 1e-9)) * 100 <= 15",
}
#: Relative difference under which two scores are a tie for the "above" rule: above floating-point noise
#: (a few 1e-16 in CIDEr-D's sums), below the 1e-10 by which coco-caption's BLEU epsilons separate scores.
TIE_TOLERANCE = 1e-12


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


def released_passes(original: np.ndarray, corrupted: np.ndarray, rule: str, higher_is_better: bool = True,
                    tie: float = TIE_TOLERANCE) -> np.ndarray:
    """Whether each trial passes under the MUTT authors' released rule ``rule`` (:data:`RELEASED_RULES`).

    ``"difference"`` is their formula as written, ``abs((a - b) / (a + 1e-9)) * 100 <= 15``;
    ``"above"`` is ``a > b`` (``a < b`` when lower is better) by more than ``tie`` times the larger
    magnitude (``tie=0``: the script's strict comparison). NaN scores fail.
    """
    a = np.asarray(original, dtype=np.float64)
    b = np.asarray(corrupted, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if rule == "difference":
            return np.abs((a - b) / (a + EPSILON)) * 100 <= DIFFERENCE_TOLERANCE * 100
        if rule == "above":
            margin = tie * np.maximum(np.abs(a), np.abs(b))
            return (a - b > margin) if higher_is_better else (b - a > margin)
    raise OptionError(f"unknown pass rule {rule!r}; choose one of {list(RELEASED_RULES)}")


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
    data gives); ``notes`` say what was left out and why. ``rules`` names the
    pass rule of each corruption type when the trials were judged by the
    authors' released rules (:func:`released_passes`), else it is empty.
    """

    metrics: List[str]
    corruptions: List[str]
    kinds: Dict[str, str]
    counts: Dict[str, Dict[str, tuple]]
    references: Optional[int] = None
    seed: int = 0
    signatures: Dict[str, str] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    rules: Dict[str, str] = field(default_factory=dict)

    @property
    def accuracy(self) -> Dict[str, Dict[str, float]]:
        """``accuracy[metric][corruption] = passed / tests`` (NaN without tests)."""
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
                row = {"metric": m, "corruption": c, "kind": self.kinds[c], "n": n, "passed": p,
                       "accuracy": p / n if n else float("nan")}
                if self.rules:
                    row["rule"] = self.rules[c]
                rows.append(row)
        return rows

    def to_dict(self) -> Dict[str, object]:
        """The result as a JSON-ready dict: settings, test counts, accuracies, records, signatures and notes."""
        return {"references": self.references, "seed": self.seed, "kinds": self.kinds,
                "tests": {c: self.counts[self.metrics[0]][c][0] for c in self.corruptions} if self.metrics else {},
                "accuracy": self.accuracy, "mean_accuracy": {m: self.mean_accuracy(m) for m in self.metrics},
                "records": self.to_records(), "signatures": self.signatures, "notes": self.notes,
                **({"rules": self.rules, "rule_definitions": {r: RELEASED_RULES[r] for r in
                                                              dict.fromkeys(self.rules.values())}}
                   if self.rules else {})}

    def to_table(self) -> str:
        """Accuracy (%) per metric (rows) and corruption type (columns), with the mean over types."""
        width = max([len(m) for m in self.metrics] + [6])
        cols = [c for c in self.corruptions]
        head = f"{'metric':<{width}}  " + "  ".join(f"{c:>14}" for c in cols) + f"  {'mean':>6}"
        label = {"meaning-altering": "altering", "meaning-preserving": "preserving", "fluency-disrupting": "fluency"}
        kinds = f"{'':<{width}}  " + "  ".join(f"{label.get(self.kinds[c], self.kinds[c]):>14}" for c in cols)
        tests = f"{'tests':<{width}}  " + "  ".join(f"{self.counts[self.metrics[0]][c][0]:>14}" for c in cols)
        lines = [head, kinds]
        if self.rules:
            lines.append(f"{'rule':<{width}}  " + "  ".join(f"{self.rules[c]:>14}" for c in cols))
        lines.append(tests)
        acc = self.accuracy
        for m in self.metrics:
            lines.append(f"{m:<{width}}  " + "  ".join(f"{100 * acc[m][c]:>14.1f}" for c in cols)
                         + f"  {100 * self.mean_accuracy(m):>6.1f}")
        if self.rules:  # the released trials: a reference file per count, no sampling
            refs = ("each trial's references" if self.references is None
                    else f"{self.references} references per trial")
        else:
            refs = ("all references" if self.references is None
                    else f"at most {self.references} references (seed {self.seed})")
        lines.append(f"accuracy in %, {refs}")
        for rule in dict.fromkeys(self.rules.values()):
            lines.append(f"rule {rule}: {RELEASED_RULES[rule]}")
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


__all__ = ["DIFFERENCE_TOLERANCE", "RELEASED_RULES", "TIE_TOLERANCE", "UnitTestResult", "mean_unit_test_accuracy",
           "released_passes", "segment_pairs", "unit_test_accuracy", "unit_test_passes"]
