"""Running metric unit tests (MUTT; Boag, Campos, Saenko & Rumshisky 2016) over texts: trials to accuracies.

:func:`run_unit_tests` adds the generated SICK+ fluency corruptions
(:func:`fluency_trials`), samples references, scores through
:func:`combo.scoring.score_testbed` and, with ``scheme="ulc"``, tests the
uniform combination of the metrics as well; the pass rules and accuracies are
the pure functions of :mod:`combo.meta.mutt`. It sits above scoring and
combination (it scores text and may combine), beside :mod:`combo.evaluate`.

:func:`run_released_unit_tests` runs the authors' released trials
(:mod:`combo.io.mutt_released`) as their script did: each type's originals and
its corruptions are scored in two calls against the type's references, and a
trial passes by the rule of its type (:func:`combo.meta.mutt.released_passes`).
:data:`COCO_CAPTION_SPECS` are the metric settings that give coco-caption's
per-image scores; :func:`combo.metrics.lexical.rouge.coco_rouge_l` is its
ROUGE-L.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .errors import InputError, OptionError
from .meta.mutt import TIE_TOLERANCE, UnitTestResult, released_passes, segment_pairs, unit_test_accuracy

#: Combinations the unit tests can add to the metrics (``run_unit_tests(scheme=...)``).
SCHEMES = ("ulc",)
#: combo metric specs that give coco-caption's per-image scores (its PTB tokens, BLEU's epsilons, CIDEr-D's
#: document frequencies counted per scored row), by coco-caption's names. Its ROUGE-L is
#: :func:`combo.metrics.lexical.rouge.coco_rouge_l`; its METEOR 1.5 has no combo counterpart.
COCO_CAPTION_SPECS = {
    "CIDEr": "cider:tokenize=coco,lowercase=false,document_frequency=rows",
    "Bleu_4": "bleu:tokenize=coco,smooth=coco",
    "Bleu_3": "bleu:max_order=3,tokenize=coco,smooth=coco",
    "Bleu_2": "bleu:max_order=2,tokenize=coco,smooth=coco",
    "Bleu_1": "bleu:max_order=1,tokenize=coco,smooth=coco",
}


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


def score_released_trials(trials: Sequence, metrics: Sequence, jobs: int = 1, cache_dir=None,
                          progress: bool = False):
    """Scores of released trials (:class:`combo.io.mutt_released.ReleasedTrial`) as the authors' script gets
    them: for each type, one call for its originals and one for its corruptions, each against the type's
    references (so CIDEr-D's document frequencies are those of the type's reference sets, one per trial with
    ``document_frequency=rows``, as coco-caption counts them).

    Returns ``(names, higher_is_better, signatures, {type: (original scores, corrupted scores)})``, the score
    arrays of shape (metrics, trials of the type) in the trials' order.
    """
    from .scoring import score_testbed
    from .testbed import Segment, Testbed

    if not metrics:
        raise OptionError("no metric to test")
    by_type: dict = {}
    for t in trials:
        if not t.references:
            raise InputError(f"{t.corruption} trial (image_id {t.image_id!r}) has no references", t.path or None,
                             fix="read the trials with combo.io.mutt_released.read_released")
        by_type.setdefault(t.corruption, []).append(t)
    if not by_type:
        raise InputError("no unit tests to run", fix="give at least one trial (read_released)")
    scores = {}
    names = hib = signatures = None
    for corruption, group in by_type.items():
        sides = []
        for side, attr in (("original", "sentence"), ("corrupted", "corrupted")):
            tb = Testbed(name=f"mutt-released:{corruption}:{side}")
            for t in group:
                tb.segments.append(Segment(id=f"{corruption}:{t.image_id}", references=list(t.references),
                                           ref_ids=[f"ref{j + 1}" for j in range(len(t.references))],
                                           group=corruption))
            tb.candidates = {side: {i: getattr(t, attr) for i, t in enumerate(group)}}
            tb.metadata = {"target_language": "en"}
            table = score_testbed(tb, list(metrics), jobs=jobs, progress=progress, cache_dir=cache_dir)
            values = np.full((len(table.metrics), len(group)), np.nan)
            values[:, table.row_segment] = table.segment
            sides.append(values)
            names, hib, signatures = list(table.metrics), list(table.higher_is_better), list(table.signatures)
        scores[corruption] = tuple(sides)
    return names, hib, dict(zip(names, signatures)), scores


def run_released_unit_tests(trials: Sequence, metrics: Sequence, scheme: Optional[str] = None, jobs: int = 1,
                            cache_dir=None, progress: bool = False, tie: float = TIE_TOLERANCE) -> UnitTestResult:
    """The authors' released trials (:func:`combo.io.mutt_released.read_released`), judged by their rules.

    Scores come from :func:`score_released_trials`; a trial passes by its type's rule
    (:func:`combo.meta.mutt.released_passes`: the Difference formula for det_sub, near_syms and passive,
    the original above its corruption otherwise, a tie within ``tie`` failing). ``scheme="ulc"`` adds the
    uniform linear combination of the metrics, min-max normalised over every scored sentence. The result
    names each type's rule (``rules``); ``references`` is the trials' reference count when they share one.
    """
    from .combine.ulc import ulc

    if scheme is not None and scheme not in SCHEMES:
        raise OptionError(f"unknown scheme {scheme!r} for unit tests; use one of {list(SCHEMES)} (or none)")
    trials = list(trials)
    names, hib, signatures, scores = score_released_trials(trials, metrics, jobs=jobs, cache_dir=cache_dir,
                                                           progress=progress)
    order = list(scores)
    if scheme == "ulc":
        blocks = [m for c in order for m in scores[c]]
        combined = ulc(np.hstack(blocks), hib)
        start = 0
        for c in order:
            parts = []
            for m in scores[c]:
                parts.append(np.vstack([m, combined[None, start:start + m.shape[1]]]))
                start += m.shape[1]
            scores[c] = tuple(parts)
        names = names + [f"ulc({'+'.join(names)})"]
        hib = hib + [True]
    first = {}
    for t in trials:
        first.setdefault(t.corruption, t)
    kinds = {c: first[c].kind for c in order}
    rules = {c: first[c].rule for c in order}
    counts = {}
    for k, name in enumerate(names):
        counts[name] = {}
        for c in order:
            a, b = scores[c][0][k], scores[c][1][k]
            ok = released_passes(a, b, rules[c], bool(hib[k]), tie)
            counts[name][c] = (int(len(a)), int(ok.sum()))
    sizes = {len(t.references) for t in trials}
    notes = ["scored as the authors' script: each type's originals and corruptions in two calls against the "
             "type's references"]
    return UnitTestResult(names, order, kinds, counts, sizes.pop() if len(sizes) == 1 else None, 0, signatures,
                          notes, rules)


#: The metrics ``combo mutt`` tests without ``-m``: on a folder of corruption files, and on the authors' released
#: trial files (coco-caption's CIDEr-D and BLEU-4 settings, METEOR and TER)
DEFAULT_METRICS = ("bleu", "meteor", "cider", "ter")
RELEASED_DEFAULT_METRICS = (COCO_CAPTION_SPECS["CIDEr"], COCO_CAPTION_SPECS["Bleu_4"], "meteor", "ter")


def _folder_trials(corruptions: str, flickr8k: Optional[str], which: str):
    """The trials of a folder of corruption files to test (:func:`combo.io.mutt.select_trials`' ``which``) and
    how many were left out."""
    from .io.mutt import read_mutt, select_trials

    sets = read_mutt(corruptions, flickr8k=flickr8k)
    return select_trials([t for v in sets.values() for t in v], which)


def run_folder_unit_tests(corruptions: str, metrics: Sequence = (), references: Optional[int] = None,
                          trials: str = "flickr", fluency: bool = True, seed: int = 0, scheme: Optional[str] = None,
                          flickr8k: Optional[str] = None, jobs: int = 1, cache_dir=None,
                          progress: bool = False) -> UnitTestResult:
    """The unit tests of a folder: the authors' released trial files (detected; ``references``: their reference
    file, 5, 10 or 20), judged by their script's rules, or corruption files (``trials`` chosen by
    :func:`combo.io.mutt.select_trials`; the FLICKR ones get their captions from ``flickr8k``), run by
    :func:`run_unit_tests`. ``metrics``: none, :data:`DEFAULT_METRICS` (released files:
    :data:`RELEASED_DEFAULT_METRICS`). Trials left out for want of references are counted in the first note."""
    from .io.mutt_released import is_released_folder, read_released

    if is_released_folder(corruptions):
        sets = read_released(corruptions, 5 if references is None else references)
        return run_released_unit_tests([t for v in sets.values() for t in v],
                                       list(metrics) or list(RELEASED_DEFAULT_METRICS), scheme=scheme, jobs=jobs,
                                       cache_dir=cache_dir, progress=progress)
    chosen, skipped = _folder_trials(corruptions, flickr8k, trials)
    if not chosen:
        raise InputError("no trial has references", corruptions,
                         fix="give --flickr8k so the FLICKR trials get their image's captions")
    result = run_unit_tests(chosen, list(metrics) or list(DEFAULT_METRICS), references=references, seed=seed,
                            scheme=scheme, fluency=fluency, jobs=jobs, cache_dir=cache_dir, progress=progress)
    if skipped:
        result.notes.insert(0, f"{skipped} trials left out: no references (SEMEVAL, or caption not in Flickr8k)")
    return result


def mutt_accuracy(specs: Sequence[str], corruptions: str, flickr8k: Optional[str], seed: int):
    """MUTT accuracy ``{metric: {corruption type: accuracy}}`` of ``specs`` on the trials in ``corruptions``
    that have references (the FLICKR trials, given ``flickr8k``), and a sentence saying what was run (the HTML
    report's unit-test heatmap)."""
    trials, left_out = _folder_trials(corruptions, flickr8k, "flickr")
    if not trials:
        raise InputError("no MUTT trial has references", corruptions,
                         fix="give the Flickr8k folder with --mutt-flickr8k so the FLICKR trials get their captions")
    result = run_unit_tests(trials, list(specs), seed=seed)
    return result.accuracy, (f"MUTT unit tests on {len(trials)} trials of {corruptions} with their Flickr8k "
                             f"references ({left_out} trials without references left out), seed {seed}.")


__all__ = ["COCO_CAPTION_SPECS", "DEFAULT_METRICS", "RELEASED_DEFAULT_METRICS", "SCHEMES", "fluency_trials",
           "mutt_accuracy", "run_folder_unit_tests", "run_released_unit_tests", "run_unit_tests",
           "score_released_trials"]
