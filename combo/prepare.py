"""A test bed made ready for meta-evaluation: the metrics chosen, reference counts checked, segments kept or
sampled, and the test bed scored (with reference-against-reference scores when QUEEN needs them).

``combo search``, ``combo evaluate`` and ``combo report`` share it (:func:`prepare`); a refusal's fix names the
options of the command that asked (:class:`Asked`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import List, NamedTuple, Optional, Sequence, Tuple

from .errors import ComboError, InputError, OptionError, one_line
from .metrics.registry import is_model_file
from .metrics.sets import SEARCH, expand_metric_sets
from .parallel import Execution, resolve_execution


@dataclass
class MetaOptions:
    """The meta-evaluation options of evaluate, search and report (the command line declares them once:
    ``combo.cli.options.meta_options``): handed whole to :func:`prepare` and to the
    :class:`combo.evaluate.MetaEvaluator` they build (:meth:`evaluator`)."""

    aspect: Optional[str] = None
    triples: str = "distinct"
    kendall_variant: str = "wmt12"
    kendall_ties: Optional[str] = None
    king_ties: str = "count"
    include_human: bool = False
    held_out: Optional[int] = None
    memory: Optional[str] = None
    seed: int = 0
    jobs: int = 1
    progress: bool = False
    _execution: Optional[Execution] = field(default=None, init=False, repr=False, compare=False)

    def execution(self) -> Execution:
        """``jobs``, ``memory`` and ``progress`` resolved once, on the first call (:func:`~combo.parallel.
        resolve_execution`): scoring and the evaluator of the run receive this one object."""
        if self._execution is None:
            self._execution = resolve_execution(self.jobs, self.memory, self.progress)
        return self._execution

    def evaluator(self, tb, table, refs, command: Optional[str] = None):
        """The MetaEvaluator of one scored test bed with these options (``command``: whose options its
        messages' fixes name)."""
        from . import evaluate  # looked up when called (a test may stand in for MetaEvaluator)

        params = {k: v for k, v in asdict(self).items() if k not in ("jobs", "memory", "progress", "_execution")}
        return evaluate.MetaEvaluator(tb, table, refs, command=command, jobs=self.execution(), **params)


class Asked:
    """What a command asked for: a refusal's fix names this command's options and an alternative that works.

    ``criteria``: search's ``--criterion``, or the ``--criteria`` of evaluate and report (empty: report's
    default, every criterion the test bed supports); ``schemes``: search's ``--scheme`` or the ``--combine`` of
    evaluate and report; ``search``: report's ``--search``; ``metrics``: the metric specs of ``-m`` as given.
    """

    def __init__(self, command: str, criteria: Sequence[str] = (), schemes: Sequence[str] = (),
                 search: Optional[str] = None, metrics: Sequence[str] = ()):
        self.command, self.criteria, self.schemes = command, list(criteria), list(schemes)
        self.search, self.metrics = search, list(metrics)

    def ask(self, criterion: str) -> str:
        """This command's way to ask for ``criterion``."""
        from .evaluate import COMMAND_OPTIONS

        return f"{COMMAND_OPTIONS[self.command][0]} {criterion}"

    def without_references(self, tb) -> Optional[str]:
        """The options that ask this run without reference-against-reference scores (KING, ORANGE, QUEEN), with a
        criterion the test bed's judgments support; None when there is none."""
        from .evaluate import DEFAULT_SCHEME_NAME as ulc, criteria_of_family, reading_references

        likeness = criteria_of_family("likeness")  # KING, ORANGE

        alt = reference_free_criterion(tb)
        if self.command == "search":
            if self.criteria[0] in likeness:
                return f"--criterion {alt} --scheme {ulc}" if alt else None
            return f"--scheme {ulc}"
        parts = []
        if any(c in likeness for c in self.criteria):
            keep = [c for c in self.criteria if c not in likeness] or ([alt] if alt else [])
            if not keep:
                return None
            parts.append(f"--criteria {','.join(keep)}")
        queen = reading_references(self.schemes)
        if queen:
            rest = [x for x in self.schemes if x not in queen]
            parts.append(f"--combine {','.join(rest or [ulc])}")
        if self.search in likeness:
            if not alt:
                return None
            parts.append(f"--search {alt}")
        return " ".join(parts) or None

    def leave_out(self, specs: Sequence[str]) -> str:
        """``leave scores:x.tsv out of -m (-m bleu chrf)``: the fix that drops ``specs`` from ``-m``."""
        rest = [m for m in self.metrics if m not in set(specs)]
        return f"leave {', '.join(specs)} out of -m" + (f" (-m {' '.join(rest)})" if rest else "")


def reference_free_criterion(tb) -> Optional[str]:
    """A criterion that reads this test bed's judgments and no references: r_snt on absolute scores, wmt_kendall on
    rankings only, pearson on system scores only (3 systems or more); None without judgments."""
    if tb.scores:
        return "r_snt"
    if tb.preferences:
        return "wmt_kendall"
    if tb.system_scores and len(tb.systems) >= 3:
        return "pearson"
    return None


def available(metrics: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Split metric specs into those usable here and those whose resources are missing (or not registered)."""
    from .errors import ResourceMissing
    from .metrics.registry import list_metrics
    from .scoring import resolve_metric

    known = set(list_metrics())
    ok, missing = [], []
    for spec in metrics:
        if not is_model_file(spec) and spec.partition(":")[0].lower() not in known:
            missing.append(spec)
            continue
        try:
            resolve_metric(spec).check_resources()
            ok.append(spec)
        except ResourceMissing:
            missing.append(spec)
    return ok, missing


def missing_notes(missing: Sequence[str]) -> List[str]:
    """One note per missing resource: the metrics left out and the command that installs it."""
    from .errors import ResourceMissing
    from .metrics.registry import get_metric

    fixes: dict = {}
    for spec in missing:
        try:
            get_metric(spec).check_resources()
            fix = "see combo metrics"
        except ResourceMissing as err:
            fix = f"{err.resource}: {err.install}"
        except ComboError as err:
            fix = one_line(err)
        fixes.setdefault(fix, []).append(spec)
    return [f"left out (resource missing here): {', '.join(specs)} (fix: {fix})" for fix, specs in fixes.items()]


def readable(specs: Sequence[str], testbeds) -> Tuple[List[str], List[str]]:
    """Split a default metric set into the metrics that read every test bed's language and the others."""
    from .scoring import reads_language, resolve_metric

    languages = {tb.target_language for tb in testbeds} - {None}
    foreign = [s for s in specs if not all(reads_language(resolve_metric(s), lang) for lang in languages)]
    return [s for s in specs if s not in foreign], foreign


def in_sample_notes(specs: Sequence[str], testbed) -> List[str]:
    """A note for each tuned metric (model file) trained on this test bed: its figures here are in-sample."""
    from .scoring import resolve_metric

    notes = []
    for spec in specs:
        if is_model_file(spec):
            how = resolve_metric(spec).trained_on(testbed)
            if how:
                notes.append(f"{spec} was trained on {how}: its figures here are in-sample, not held out")
    return notes


def read_per_candidate(specs: Sequence[str]) -> List[str]:
    """The metrics among ``specs`` read per candidate from a file (``scores:``, ``mtme:``, models using them):
    they have no reference-against-reference scores, so QUEEN, KING and ORANGE cannot use them."""
    from .scoring import resolve_metric

    return [s for s in specs if resolve_metric(s).locality == "candidate"]


def min_refs_advice(tb, need: int, n_metrics: int, triples: str, max_refs: Optional[int], sampling: bool = True
                    ) -> str:
    """The fix for segments with too few references: --min-refs, and --max-refs with the predicted cost of each
    (and ``sampling``: --king-segments and --king-sample, which combo report does not have)."""
    from .meta_run import SUGGESTED_KING_SAMPLE, SUGGESTED_KING_SEGMENTS, SUGGESTED_MAX_REFS, king_cost

    refs = [len(seg.references) for seg in tb.segments]
    cands = [0] * len(refs)
    for outputs in tb.candidates.values():
        for i in outputs:
            cands[i] += 1
    fix = f"pass --min-refs {need} to skip them (they are counted in the output)"
    as_is = king_cost(refs, cands, n_metrics, triples=triples, max_refs=max_refs)
    capped = king_cost(refs, cands, n_metrics, triples=triples, max_refs=max_refs or SUGGESTED_MAX_REFS)
    if max_refs is not None or capped.seconds() >= as_is.seconds() / 2:
        return fix + f"; predicted: {as_is.describe()}"
    return (fix + f", and --max-refs {SUGGESTED_MAX_REFS} to cap the others at a seeded sample of "
            f"{SUGGESTED_MAX_REFS} references (KING then estimates; docs/queen-king.md). Predicted with --min-refs "
            f"{need} alone: {as_is.describe()}; with --max-refs {SUGGESTED_MAX_REFS} too: {capped.describe()}. "
            + (f"Capping biases KING; an unbiased estimate with every reference and a sampling interval: "
               f"--king-segments {SUGGESTED_KING_SEGMENTS} --king-sample {SUGGESTED_KING_SAMPLE} (docs/scale.md)"
               if sampling else "Capping biases KING (docs/queen-king.md)"))


class Prepared(NamedTuple):
    """What :func:`prepare` returns: the test bed as meta-evaluated (segments kept or sampled), its scores, the
    reference-against-reference scores (None when not computed), the notes on what was left out, and why KING and
    ORANGE were left out (None when they were not)."""

    testbed: object
    table: object
    refs: object
    notes: List[str]
    likeness_note: Optional[str]


def _choose_metrics(metrics: Sequence[str], tb) -> Tuple[List[str], List[str]]:
    """The metric specs to score (``metrics`` as given, sets expanded; none: the @search set, less what this
    machine or the test bed's language cannot run) and the notes on what was left out."""
    explicit = bool(metrics)
    set_notes: List[str] = []
    specs = expand_metric_sets(list(metrics), set_notes) if explicit else list(SEARCH)
    specs, missing = available(specs)
    if missing and explicit:
        from .scoring import resolve_metric
        for spec in missing:
            resolve_metric(spec).check_resources()  # raises the precise error
    notes = set_notes + missing_notes(missing)
    if not explicit:
        specs, foreign = readable(specs, [tb])
        if foreign:
            notes.append(f"left out (cannot read {tb.target_language!r}; see combo metrics): {', '.join(foreign)}")
    return specs, notes + in_sample_notes(specs, tb)


def prepare(tb, source: str, metrics: Sequence[str], criterion: str, meta: MetaOptions, min_refs: Optional[int],
            max_refs: Optional[int], cache: Optional[str], needs_refs, king_segments: Optional[int] = None,
            asked: Optional[Asked] = None) -> Prepared:
    """Check reference counts, keep segments (``min_refs``), sample them (``king_segments``), score (cached) and
    score references against each other when QUEEN needs them.

    ``source``: the test bed as the user named it (errors name it); ``metrics``: the metric specs asked for
    (none: the @search set). ``needs_refs="auto"`` (combo report's default criteria): reference-against-reference
    scores when every segment has enough references and every metric has them; else KING and ORANGE are left out
    and ``likeness_note`` says why (None when nothing was left out)."""
    from .meta.queen import min_references
    from .evaluate import criteria_of_family

    likeness = criteria_of_family("likeness")  # KING, ORANGE

    asked = asked or Asked("search", [criterion], metrics=metrics)
    likeness_note = None
    auto = needs_refs == "auto"
    if auto:  # combo report: KING and ORANGE when every segment has enough references
        needs_refs = all(len(seg.references) > min_references(meta.triples) for seg in tb.segments)
    specs, notes = _choose_metrics(metrics, tb)
    need = min_references(meta.triples) + (1 if criterion in likeness else 0) if needs_refs else 0
    if max_refs is not None and max_refs < need:
        raise OptionError(f"--max-refs {max_refs} leaves fewer than the {need} references {criterion} with QUEEN "
                          f"(triples={meta.triples}) needs: every segment would be skipped. "
                          f"Fix: --max-refs {need} or more")
    instead = asked.without_references(tb)
    other = ((f"use {instead}, which needs no references, or " if instead else "use ")
             + "a test bed with more references")
    short = [i for i, seg in enumerate(tb.segments) if len(seg.references) < need]
    if short:
        if min_refs is None and len(short) == len(tb.segments):
            raise InputError(f"no segment has the {need} references {criterion} with QUEEN (triples={meta.triples}) "
                             "needs", source, fix=other)
        if min_refs is None:
            raise InputError(f"{len(short)} of {len(tb.segments)} segments have fewer than {need} references, "
                             f"which {criterion} with QUEEN (triples={meta.triples}) needs", source,
                             fix=min_refs_advice(tb, need, len(specs), meta.triples, max_refs,
                                                 sampling=asked.command != "report"))
    if needs_refs:
        from .metrics.external import PAIR_REFUSAL

        per_candidate = read_per_candidate(specs)
        if per_candidate:
            these = ", ".join(per_candidate)
            if auto:  # combo report's default criteria: KING and ORANGE are left out, and the report says why
                needs_refs = False
                likeness_note = (f"{these} {'is' if len(per_candidate) == 1 else 'are'} read per candidate from a "
                                 "file, without the reference-against-reference scores QUEEN needs; for KING and "
                                 f"ORANGE, {asked.leave_out(per_candidate)}")
            else:
                raise OptionError(f"{these}: {PAIR_REFUSAL} (fix: {asked.leave_out(per_candidate)}"
                                  + (f", or use {instead}, which needs no references" if instead else "") + ")")
    if min_refs is not None:
        keep = [i for i, seg in enumerate(tb.segments) if len(seg.references) >= max(min_refs, need)]
        skipped = len(tb.segments) - len(keep)
        if not keep:
            raise InputError(f"no segment has {max(min_refs, need)} references: --min-refs would skip all "
                             f"{skipped}", source, fix=other)
        tb = tb.subset(keep)
        notes.append(f"skipped {skipped} segments with fewer than {max(min_refs, need)} references")
    if king_segments is not None:
        if criterion not in likeness or not needs_refs:
            raise OptionError(f"--king-segments samples segments for KING and ORANGE, which this run does not "
                              f"compute ({criterion}): drop it, or ask for {asked.ask('king')}")
        population = len(tb.segments)
        tb = tb.sample_segments(king_segments, meta.seed)
        if len(tb.segments) < population:
            notes.append(f"KING estimated from a simple random sample of {len(tb.segments)} of {population} "
                         f"segments (seed {meta.seed}); every criterion here is computed on them")
    from .scoring import score_testbed, score_with_references

    if needs_refs:
        table, refs = score_with_references(tb, specs, max_refs=max_refs, seed=meta.seed, jobs=meta.execution(),
                                            cache_dir=cache)
    else:
        table = score_testbed(tb, specs, jobs=meta.execution(), cache_dir=cache)
        refs = None
    if refs is not None and refs.capped_segments:
        notes.append(f"{refs.capped_segments} segments capped at {max_refs} references (seeded sample, "
                     f"seed {meta.seed})")
    return Prepared(tb, table, refs, notes, likeness_note)
