"""Running metric unit tests (MUTT; Boag, Campos, Saenko & Rumshisky 2016) over texts: trials to accuracies.

:func:`run_unit_tests` adds the generated SICK+ fluency corruptions
(:func:`fluency_trials`), samples references, scores through
:func:`combo.scoring.score_testbed` and, with ``scheme="ulc"``, tests the
uniform combination of the metrics as well; the pass rules and accuracies are
the pure functions of :mod:`combo.meta.mutt`. It sits above scoring and
combination (it scores text and may combine), beside :mod:`combo.evaluate`.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .errors import InputError, OptionError
from .meta.mutt import UnitTestResult, segment_pairs, unit_test_accuracy

#: Combinations the unit tests can add to the metrics (``run_unit_tests(scheme=...)``).
SCHEMES = ("ulc",)


def fluency_trials(trials: Sequence, seed: int = 0, corruptions: Optional[Sequence[str]] = None):
    """SICK+ fluency trials (Boag et al. 2016) from the distinct original sentences of ``trials``.

    Each distinct ``sentence`` (with the references of its first trial) gives
    one trial per applicable corruption of :mod:`combo.analysis.corruptions`;
    returns ``(trials, {type: sentences it did not apply to})``.
    """
    from .analysis.corruptions import FLUENCY_CORRUPTIONS, fluency_corruptions
    from .io.mutt import CORRUPTION_KINDS, MuttTrial

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
    from .io.mutt import CORRUPTION_KINDS

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
    from .combine.ulc import ulc
    from .io.mutt import mutt_testbed, sample_references
    from .scoring import score_testbed

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


__all__ = ["SCHEMES", "fluency_trials", "run_unit_tests"]
