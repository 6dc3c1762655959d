"""Metric-set search: the metric set of a scored test bed that a criterion rates best (Giménez & Màrquez 2008,
§4: a greedy search over metric sets; :mod:`combo.combine.search`), compared with the best single metric by a
paired bootstrap test, with KING's warnings when ties decide its result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..combine.search import SearchResult, search
from .evaluator import MetaEvaluator
from .records import Quality, criterion_name, criterion_sign, default_scheme
from .significance import paired_test


@dataclass
class SetSearch:
    """A metric-set search on a test bed, with names instead of indices."""

    selected: List[str]
    quality: float
    best_single: Tuple[str, float]
    trace: List[Dict[str, object]]
    criterion: str
    scheme: str
    strategy: str
    evaluations: int
    details: Dict[str, object] = field(default_factory=dict)
    #: the qualities of the selected set and of the best single metric (units, notes, what they leave out)
    chosen_quality: Optional[Quality] = field(default=None, repr=False)
    single_quality: Optional[Quality] = field(default=None, repr=False)
    step_qualities: List[Optional[Quality]] = field(default_factory=list, repr=False)  # one per trace step

    def left_out(self) -> List[str]:
        """What the values of the sets measured leave out, one line per distinct count naming the sets (at most
        three, else how many of them): the selected set's, the best single metric's and each trace step's."""
        named: Dict[str, Quality] = {}
        for step, q in zip(self.trace, self.step_qualities):
            if q is not None:
                named.setdefault("[" + ", ".join(step["set"]) + "]", q)
        if not named and self.chosen_quality is not None:
            named["[" + ", ".join(self.selected) + "]"] = self.chosen_quality
        sets: Dict[str, List[str]] = {}
        for name, q in named.items():
            for text in q.left_out:
                sets.setdefault(text, []).append(name)
        def which(who: List[str]) -> str:
            if len(who) == len(named) > 1:
                return "every set in the trace"
            return ", ".join(who) if len(who) <= 3 else f"{len(who)} of the {len(named)} sets in the trace"

        return [f"{self.criterion}: {text} ({which(who)})" for text, who in sets.items()]

    @property
    def beats_best_single(self) -> bool:
        sign = criterion_sign(self.criterion)
        return sign * self.quality > sign * self.best_single[1]

    def gain_test_text(self) -> str:
        """The paired bootstrap test of the selected set's gain over the best single metric, as words:
        ``no significant difference (p = 0.367, one-sided paired bootstrap over 1000 resamples of segments,
        seed 0)``, ``significant (...)``, the test's note when it could not run, or "" without a test."""
        sig = self.details.get("significance") or {}
        if sig.get("p_value") is None:
            return sig.get("note") or ""
        how = (f"p = {sig['p_value']:.3f}, one-sided paired bootstrap over {sig['resamples']} resamples of "
               f"{sig['unit'] or 'segments'}, seed {sig['seed']}")
        return f"significant ({how})" if sig["significant"] else f"no significant difference ({how})"

    def to_dict(self) -> Dict[str, object]:
        # in_sample: the set was selected on the data it is measured on; p_value: of the paired test of its gain
        # over the best single metric (compare_with_best_single), None when not tested
        return {"selected": self.selected, "quality": self.quality,
                "best_single": {"metric": self.best_single[0], "quality": self.best_single[1]},
                "beats_best_single": self.beats_best_single, "in_sample": True,
                "p_value": (self.details.get("significance") or {}).get("p_value"),
                "criterion": self.criterion, "scheme": self.scheme,
                "strategy": self.strategy, "evaluations": self.evaluations, "trace": self.trace, **self.details}


#: A metric set whose quality takes less than this is evaluated in this process during a search: a batch of sets
#: sent to forked workers costs about 0.15 s more than its sets (WMT12 de-en's r_snt: 15 ms a set, KING on the
#: bundled DSTC7 sample 30 ms; KING on 100 DSTC7 segments with every reference: seconds).
PARALLEL_SET_MIN_SECONDS = 0.2


def search_metric_sets(evaluator: MetaEvaluator, criterion: str = "king", scheme: Optional[str] = None,
                       strategy: str = "greedy", n_resamples: int = 1000, **options) -> SetSearch:
    """Search the metric set of ``evaluator.table`` that maximises ``criterion`` (ORANGE: minimises).

    ``n_resamples``: bootstrap resamples (seeded with ``evaluator.seed``) of the paired test of the selected set
    against the best single metric, in ``details["significance"]`` (:func:`compare_with_best_single`; 0: none).
    """
    criterion = criterion_name(criterion)
    scheme = scheme or default_scheme(criterion)
    sign = criterion_sign(criterion)
    names = evaluator.table.metrics
    seen: Dict[Tuple[int, ...], Quality] = {}
    from ..progress import progress

    m = len(names)
    expected = 2 * m - 1 if strategy == "greedy" else 2 ** m - 1 if strategy == "exhaustive" else None
    bar = progress(expected, f"search ({criterion})", evaluator.progress, unit="set")

    def key(subset) -> Tuple[int, ...]:
        return tuple(sorted(subset))

    def quality(subset):
        if key(subset) not in seen:
            seen[key(subset)] = evaluator.quality(subset, criterion, scheme)
            bar.update(1)
        return sign * seen[key(subset)].value

    def many(subsets):  # independent sets of one step, evaluated in forked workers sharing the evaluator
        from ..parallel import run_tasks

        todo = [s for s in subsets if key(s) not in seen]
        found = run_tasks(_subset_quality, [(evaluator, s, criterion, scheme) for s in todo], evaluator.jobs)
        for s, q in zip(todo, found):
            seen[key(s)] = q
            bar.update(1)
        return [sign * seen[key(s)].value for s in subsets]

    from ..parallel import on_cluster, parallel_available, workers_for

    parallel = parallel_available(evaluator.jobs)
    if parallel and m > 1 and not on_cluster():  # one set timed here says whether sets are worth sending to workers
        started = time.perf_counter()
        quality([0])
        parallel = time.perf_counter() - started >= PARALLEL_SET_MIN_SECONDS
    if parallel and strategy == "greedy":  # as many next steps at once as there are workers (on Dask: two)
        options = {"lookahead": max(2, workers_for(evaluator.jobs)), **options}
    try:
        res: SearchResult = search(list(range(len(names))), quality, strategy,
                                   many=many if parallel else None, **options)
    finally:
        bar.close()
    trace = [{**step, "metric": names[step["metric"]] if "metric" in step else None,
              "set": [names[m] for m in step["set"]], "quality": sign * step["quality"]} for step in res.trace]
    out = SetSearch([names[m] for m in res.selected], sign * res.quality,
                    (names[res.best_single[0]], sign * res.best_single[1]), trace, criterion, scheme, strategy,
                    res.evaluations)
    out.chosen_quality, out.single_quality = seen.get(key(res.selected)), seen.get((res.best_single[0],))
    out.step_qualities = [seen.get(key(step["set"])) for step in res.trace]
    out.details["significance"] = compare_with_best_single(evaluator, out, n_resamples, evaluator.seed)
    if criterion == "king":
        for step, raw in zip(trace, res.trace):
            q = seen.get(key(raw["set"]))
            step["tie_share"] = q.tie_share if q is not None else None
        chosen, single = seen[key(res.selected)], seen[(res.best_single[0],)]
        out.details["tie_share"] = chosen.tie_share
        if chosen.sampling is not None:
            out.details["estimate"] = {**chosen.sampling, "note": chosen.note}
        out.details["king_strict"] = {"selected": chosen.value_strict, "best_single": single.value_strict}
        out.details["warnings"] = king_tie_warnings(chosen, single, evaluator.king_ties)
    return out


def _subset_quality(evaluator: MetaEvaluator, subset, criterion: str, scheme: str) -> Quality:
    """One metric set's quality, as a worker's task (its own progress bars off: the search's bar counts sets;
    restored, as the task may run in this process)."""
    from dataclasses import replace

    shown = evaluator.execution
    evaluator.execution = replace(shown, progress=False)
    try:
        return evaluator.quality(list(subset), criterion, scheme)
    finally:
        evaluator.execution = shown


def king_tie_warnings(chosen: Quality, best_single: Quality, ties: str = "count") -> List[str]:
    """Warnings when ties decide a KING result (docs/queen-king.md, "Ties").

    Ties decide it when more than :data:`KING_TIE_WARNING` of the chosen set's comparisons
    (reference against best candidate) are ties, or when ``--king-ties strict`` (ties count 0) would
    reverse the order of the chosen set and the best single metric. Under ``strict`` ties add nothing.
    """
    if ties == "strict" or not np.isfinite(chosen.tie_share):
        return []
    out = []
    if chosen.decided_by_ties:
        out.append(f"KING is decided by ties: {chosen.tie_share:.0%} of the chosen set's reference-candidate "
                   f"comparisons are ties (counted {'1' if ties == 'count' else '1/2'} each); with --king-ties "
                   f"strict its KING is {chosen.value_strict:.4f}")
    if chosen is not best_single and np.isfinite(chosen.value_strict) and np.isfinite(best_single.value_strict):
        if (chosen.value > best_single.value) != (chosen.value_strict > best_single.value_strict):
            out.append(f"with --king-ties strict the order of the chosen set ({chosen.value_strict:.4f}) and the "
                       f"best single metric ({best_single.value_strict:.4f}) is reversed")
    return out


#: The level at which search calls the selected set's gain over the best single metric significant.
SEARCH_ALPHA = 0.05


def compare_with_best_single(evaluator: MetaEvaluator, result: "SetSearch", n_resamples: int = 1000,
                             seed: int = 0, alpha: float = SEARCH_ALPHA) -> Dict[str, object]:
    """Is the selected set's gain over the best single metric more than resampling noise?

    The paired bootstrap test of :func:`significance_clusters` (the same resampled segments, pairs or systems for
    both; one-sided, shift method) of the selected set against the best single metric. Both were measured on the
    data the set was selected on, so the comparison is in-sample and a significant gain is still optimistic.
    Returns ``p_value`` (None when not tested), ``significant``, ``resamples``, ``seed``, ``unit``, ``alpha`` and a
    ``note`` saying why no test was run.
    """
    out: Dict[str, object] = {"test": "paired bootstrap, one-sided (the selected set better)", "p_value": None,
                              "significant": None, "resamples": n_resamples, "seed": seed, "alpha": alpha,
                              "unit": None, "note": ""}
    chosen, single = result.chosen_quality, result.single_quality
    if chosen is None or single is None or chosen is single or result.selected == [result.best_single[0]]:
        out["note"] = "the selected set is the best single metric"
    elif not result.beats_best_single:
        out["note"] = "the selected set does not beat the best single metric"
    elif not n_resamples:
        out["note"] = "not tested (no bootstrap resamples)"
    elif chosen.units is None or single.units is None or not (chosen.defined and single.defined):
        out["note"] = f"not tested: {result.criterion} keeps no units to resample here"
    else:
        p_value, reason = paired_test(evaluator, [chosen, single], [0, 1], n_resamples, seed)
        if p_value is None:
            out["note"] = f"not tested: {reason}"
        else:
            p = float(p_value(0, 1))
            out.update(p_value=p, significant=p < alpha, unit=chosen.unit)
    return out
