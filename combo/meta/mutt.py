"""Metric unit tests (MUTT; Boag, Campos, Saenko & Rumshisky 2016).

A unit test is a sentence and a corruption of it, both scored against the same
references. A metric passes (Boag et al. 2016):

- a *meaning-altering* or *fluency-disrupting* test when it scores the
  original above the corruption (below, for an error rate such as TER);
- a *meaning-preserving* test when the two scores differ by at most 15% of
  the original's: ``|s_orig - s_corr| / (s_orig + 1e-9) <= 0.15`` (their
  "Difference formula", on the metric's own scale).

Its accuracy on a corruption type is the share of that type's tests it passes.

The first part of this module is pure arithmetic on score arrays
(:func:`unit_test_passes`, :func:`unit_test_accuracy`), which the
``mutt`` criterion of :class:`combo.evaluate.MetaEvaluator` uses. The second,
:func:`run_unit_tests`, is the whole procedure from trials to accuracies: it
adds the generated SICK+ fluency corruptions (:func:`fluency_trials`),
samples references, scores through :func:`combo.scoring.score_testbed` and,
with ``scheme="ulc"``, tests the uniform combination of the metrics as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..errors import InputError, OptionError

DIFFERENCE_TOLERANCE = 0.15
EPSILON = 1e-9
KINDS = ("meaning-altering", "meaning-preserving", "fluency-disrupting")
#: Combinations the unit tests can add to the metrics (``run_unit_tests(scheme=...)``).
SCHEMES = ("ulc",)


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


def fluency_trials(trials: Sequence, seed: int = 0, corruptions: Optional[Sequence[str]] = None):
    """SICK+ fluency trials (Boag et al. 2016) from the distinct original sentences of ``trials``.

    Each distinct ``sentence`` (with the references of its first trial) gives
    one trial per applicable corruption of :mod:`combo.features.corruptions`;
    returns ``(trials, {type: sentences it did not apply to})``.
    """
    from ..features.corruptions import FLUENCY_CORRUPTIONS, fluency_corruptions
    from ..io.mutt import CORRUPTION_KINDS, MuttTrial

    first = {}
    for t in trials:
        first.setdefault(t.sentence, t)
    sources = list(first.values())
    made = fluency_corruptions([t.sentence for t in sources], corruptions or FLUENCY_CORRUPTIONS, seed)
    out = []
    for c, pairs in made.pairs.items():
        for i, original, corrupted in pairs:
            src = sources[i]
            out.append(MuttTrial(c, CORRUPTION_KINDS[c], src.dataset, src.original, original, corrupted,
                                 float("nan"), src.references, src.line, src.path))
    return out, made.skipped


def _check_trials(trials: Sequence) -> None:
    from ..io.mutt import CORRUPTION_KINDS

    if not trials:
        raise InputError("no unit tests to run", fix="give at least one trial (read_mutt, fluency_trials)")
    for t in trials:
        if t.corruption not in CORRUPTION_KINDS:
            raise InputError(f"unknown corruption type {t.corruption!r}", t.path or None, t.line or None,
                             fix=f"use one of {', '.join(CORRUPTION_KINDS)}")
        if not t.references:
            raise InputError(f"{t.corruption} trial from {t.dataset} has no references", t.path or None,
                             t.line or None,
                             fix="join the Flickr8k captions (read_mutt(..., flickr8k=...)) and keep the trials "
                                 "that have them (select_trials)")


def run_unit_tests(trials: Sequence, metrics: Sequence, references: Optional[int] = None, seed: int = 0,
                   scheme: Optional[str] = None, fluency: bool = False, jobs: int = 1, cache_dir=None,
                   progress: bool = False) -> UnitTestResult:
    """Run MUTT's unit tests of ``trials`` (:class:`combo.io.MuttTrial`, each with references) for ``metrics``.

    metrics: registered metric specs (``"bleu:max_order=2"``), model files
    (``"model.json"``) or :class:`~combo.metrics.Metric` instances;
    references: cap each trial's references at this many, a seeded sample
    (None: all it has; Boag et al. report 1 to 5);
    scheme: ``"ulc"`` adds the uniform linear combination of ``metrics``
    (min-max normalised over all scored sentences, Giménez & Màrquez 2008) as
    one more metric, named ``ulc(m1+m2+...)``;
    fluency: add the SICK+ fluency corruptions generated from the trials'
    sentences (:func:`fluency_trials`, seeded with ``seed``).
    """
    from ..combine.ulc import ulc
    from ..io.mutt import mutt_testbed, sample_references
    from ..scoring import score_testbed

    if scheme is not None and scheme not in SCHEMES:
        raise OptionError(f"unknown scheme {scheme!r} for unit tests; use one of {list(SCHEMES)} (or none)")
    if not metrics:
        raise OptionError("no metric to test")
    trials = list(trials)
    _check_trials(trials)
    notes = []
    if fluency:
        extra, skipped = fluency_trials(trials, seed)
        trials += extra
        for c, k in skipped.items():
            if k:
                notes.append(f"{c}: {k} sentences left out (no prepositional phrase with a noun / too few chunks)")
    trials = sample_references(trials, references, seed)
    tb = mutt_testbed(trials)
    table = score_testbed(tb, list(metrics), jobs=jobs, progress=progress, cache_dir=cache_dir)
    names = list(table.metrics)
    hib = list(table.higher_is_better)
    scores = table.segment
    if scheme == "ulc":
        names.append(f"ulc({'+'.join(table.metrics)})")
        hib.append(True)
        scores = np.vstack([scores, ulc(table.segment, table.higher_is_better)[None, :]])
    kinds = tb.metadata["kinds"]
    counts = {}
    for m, name in enumerate(names):
        original, corrupted, corruption = segment_pairs(table, scores[m], [s.group for s in tb.segments])
        counts[name] = unit_test_accuracy(original, corrupted, corruption, kinds, bool(hib[m]))
    order = list(dict.fromkeys(s.group for s in tb.segments))
    signatures = dict(zip(table.metrics, table.signatures))
    return UnitTestResult(names, order, {c: kinds[c] for c in order}, counts, references, seed, signatures, notes)


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


__all__ = ["DIFFERENCE_TOLERANCE", "UnitTestResult", "fluency_trials", "mean_unit_test_accuracy",
           "run_unit_tests", "segment_pairs", "unit_test_accuracy", "unit_test_passes"]
