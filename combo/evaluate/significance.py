"""Significance clusters of entries under one criterion, as WMT's metrics tasks rank metrics: the paired
bootstrap test (Koehn 2004) on the resampled units the entries' intervals drew.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from .evaluator import MetaEvaluator
from .records import Quality, criterion_sign, get_criterion


def significance_clusters(evaluator: MetaEvaluator, qualities: Sequence[Optional[Quality]], n_resamples: int = 1000,
                          alpha: float = 0.05, seed: int = 0) -> Tuple[List[Optional[int]], str]:
    """Rank clusters of entries under one criterion (1 = best), as WMT's metrics tasks rank metrics.

    Entries are sorted best first; an entry starts a new cluster when the paired
    bootstrap test (Koehn 2004; the same resampled units for both, p-value by
    the shift method as :func:`combo.meta.significance.paired_bootstrap_test`)
    finds the current cluster's best entry significantly better at level
    ``alpha``. When every entry carries the samples of its interval
    (:meth:`MetaEvaluator.with_interval` with one seed draws the same resamples
    for entries with the same units), the test reuses them: resample ``b`` of
    both entries is the same draw of units, so their difference is the paired
    difference. Otherwise each test draws its own resamples. Needs every entry
    to share its resampled units (the same segments, pairs or systems);
    otherwise no clusters, and the reason is returned.
    """
    defined = [k for k, q in enumerate(qualities) if q is not None and q.defined]
    usable = [k for k in defined if qualities[k].units is not None]
    clusters: List[Optional[int]] = [None] * len(qualities)
    if len(defined) < 2:
        return clusters, "fewer than 2 defined entries"
    if len(usable) < 2:
        return clusters, (f"the paired bootstrap needs resampled units, which {qualities[defined[0]].criterion} "
                          f"does not have (no interval either)")
    p_value, reason = paired_test(evaluator, qualities, usable, n_resamples, seed)
    if p_value is None:
        return clusters, reason
    sign = criterion_sign(qualities[usable[0]].criterion)
    order = sorted(usable, key=lambda k: -sign * qualities[k].value)
    rank, head = 1, order[0]
    clusters[head] = rank
    for k in order[1:]:
        if p_value(head, k) < alpha:
            rank += 1
            head = k
        clusters[k] = rank
    return clusters, ""


def paired_test(evaluator: MetaEvaluator, qualities: Sequence[Optional[Quality]], usable: Sequence[int],
                 n_resamples: int, seed: int):
    """``p_value(a, b)``: the one-sided p-value of the paired bootstrap test that entry ``a`` of ``qualities`` is
    better than entry ``b`` under their criterion (orange: lower), and "" ; or None and the reason when the entries
    ``usable`` do not share their resampled units. See :func:`significance_clusters`."""
    from ..meta.significance import paired_bootstrap_test

    first = qualities[usable[0]]
    criterion = first.criterion
    record = get_criterion(criterion)
    n_own = record.own_units  # the entry's own arrays among its units (the others are shared by every entry)
    shared = first.units[n_own:]
    for k in usable:
        units = qualities[k].units
        if len(units[0]) != len(first.units[0]) or any(not np.array_equal(a, b) for a, b in zip(units[n_own:], shared)):
            return None, "the entries were measured on different units (segments, pairs or systems)"
    sign = criterion_sign(criterion)
    base = record.bootstrap(evaluator)
    if n_own == 2:
        def stat(own, *rest):
            return sign * base(own[..., 0, :], own[..., 1, :], *rest)
    else:
        def stat(own, *rest):
            return sign * base(own, *rest)

    def own(k):
        units = qualities[k].units
        return np.stack(units[:2]) if n_own == 2 else units[0]

    reuse = all(qualities[k].samples is not None and len(qualities[k].samples) == len(qualities[usable[0]].samples)
                for k in usable)

    def p_value(a, b):
        if reuse:
            delta = sign * (qualities[a].value - qualities[b].value)
            diffs = sign * (qualities[a].samples - qualities[b].samples)
            return (np.count_nonzero(diffs - delta >= delta) + 1) / (len(diffs) + 1)
        return paired_bootstrap_test(stat, own(a), own(b), *shared, n_resamples=n_resamples, seed=seed,
                                     groups=first.groups).p_value

    return p_value, ""
