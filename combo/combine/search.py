"""Optimal metric-set search (Giménez & Màrquez 2008, §4): greedy, beam, forward-backward, exhaustive.

Strategies are pure: they see metric indices and a ``quality(subset) -> float``
function (higher is better) and never compute scores themselves. With
``many(subsets) -> [float, ...]`` they ask for the subsets they would
evaluate one after the other but independently (the single metrics, a beam
round, every set of one size) at once, which the caller may evaluate in
parallel; the result is the same as one at a time. Each returns a
:class:`SearchResult` with the selected set in the order it was built, its
quality, the best single metric and a trace of every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import OptionError

Quality = Callable[[Tuple[int, ...]], float]
Qualities = Callable[[List[Tuple[int, ...]]], List[float]]
STRATEGIES = ("greedy", "beam", "forward-backward", "exhaustive")
MAX_EXHAUSTIVE = 12


@dataclass
class SearchResult:
    """The outcome of a metric-set search."""

    selected: List[int]
    quality: float
    best_single: Tuple[int, float]
    trace: List[Dict[str, object]] = field(default_factory=list)
    strategy: str = "greedy"
    evaluations: int = 0


class _Memo:
    """Evaluates each subset once (as a sorted tuple); NaN qualities rank below every number.

    ``evaluations`` counts the subsets the strategy asked for, not those evaluated ahead of time for it
    (a greedy step's lookahead), so the count is the same with ``many`` or without.
    """

    def __init__(self, quality: Quality, many: Optional[Qualities] = None):
        self.quality = quality
        self.many = many
        self.cache: Dict[Tuple[int, ...], float] = {}
        self.asked: set = set()

    @property
    def evaluations(self) -> int:
        return len(self.asked)

    def _store(self, key: Tuple[int, ...], value: float) -> None:
        value = float(value)
        self.cache[key] = value if np.isfinite(value) else -np.inf

    def __call__(self, subset: Sequence[int]) -> float:
        key = tuple(sorted(subset))
        self.asked.add(key)
        if key not in self.cache:
            self._store(key, self.quality(key))
        return self.cache[key]

    def prefetch(self, subsets) -> None:
        """Evaluate the subsets not yet seen together through ``many`` (nothing without it)."""
        if self.many is None:
            return
        keys = list(dict.fromkeys(tuple(sorted(s)) for s in subsets))
        keys = [k for k in keys if k not in self.cache]
        if len(keys) > 1:
            for key, value in zip(keys, self.many(keys)):
                self._store(key, value)


def _singles(memo: _Memo, candidates: Sequence[int]) -> List[Tuple[int, float]]:
    memo.prefetch([(m,) for m in candidates])
    ranked = [(m, memo((m,))) for m in candidates]
    ranked.sort(key=lambda mq: -mq[1])  # stable: ties keep the caller's order
    return ranked


def greedy(candidates: Sequence[int], quality: Quality, many: Optional[Qualities] = None,
           lookahead: int = 2) -> SearchResult:
    """The paper's greedy search: rank single metrics, then add each in that order if the quality improves.

    Each step depends on the one before, so with ``many`` the sets of the next ``lookahead`` steps are
    evaluated together on the guess that the steps before them add nothing (most do not); a set made
    useless by an addition is evaluated for nothing, and the result is the same as one step at a time.
    """
    memo = _Memo(quality, many)
    ranked = _singles(memo, candidates)
    selected = [ranked[0][0]]
    best = ranked[0][1]
    trace = [{"step": "start", "metric": selected[0], "set": list(selected), "quality": best, "kept": True}]
    rest = [m for m, _ in ranked[1:]]
    for k, m in enumerate(rest):
        memo.prefetch([selected + [x] for x in rest[k:k + lookahead]])
        q = memo(selected + [m])
        kept = q > best
        trace.append({"step": "add", "metric": m, "set": selected + [m], "quality": q, "kept": kept})
        if kept:
            selected.append(m)
            best = q
    return SearchResult(selected, best, ranked[0], trace, "greedy", memo.evaluations)


def beam(candidates: Sequence[int], quality: Quality, width: int = 5, max_size: Optional[int] = None,
         many: Optional[Qualities] = None) -> SearchResult:
    """Beam search: extend each of the ``width`` best sets by one metric per round; keep the best set seen."""
    if width < 1:
        raise OptionError("beam width must be >= 1")
    memo = _Memo(quality, many)
    ranked = _singles(memo, candidates)
    frontier = [(q, (m,)) for m, q in ranked[:width]]
    best_q, best_set = frontier[0]
    trace = [{"step": "round", "size": 1, "set": list(best_set), "quality": best_q, "kept": True}]
    limit = len(candidates) if max_size is None else max_size
    size = 1
    while frontier and size < limit:
        size += 1
        memo.prefetch([s + (m,) for _, s in frontier for m in candidates if m not in s])
        grown = {}
        for _, s in frontier:
            for m in candidates:
                if m not in s:
                    key = tuple(sorted(s + (m,)))
                    if key not in grown:
                        grown[key] = (memo(key), s + (m,))
        if not grown:
            break
        frontier = sorted(((q, ordered) for q, ordered in grown.values()), key=lambda t: -t[0])[:width]
        improved = frontier[0][0] > best_q
        trace.append({"step": "round", "size": size, "set": list(frontier[0][1]), "quality": frontier[0][0],
                      "kept": improved})
        if improved:
            best_q, best_set = frontier[0]
    return SearchResult(list(best_set), best_q, ranked[0], trace, "beam", memo.evaluations)


def forward_backward(candidates: Sequence[int], quality: Quality, many: Optional[Qualities] = None) -> SearchResult:
    """Stepwise selection: add the metric that improves most; then drop any metric whose removal improves."""
    memo = _Memo(quality, many)
    ranked = _singles(memo, candidates)
    selected = [ranked[0][0]]
    best = ranked[0][1]
    trace = [{"step": "start", "metric": selected[0], "set": list(selected), "quality": best, "kept": True}]
    seen = {tuple(sorted(selected))}
    while True:
        changed = False
        memo.prefetch([selected + [m] for m in candidates if m not in selected])
        options = [(memo(selected + [m]), m) for m in candidates if m not in selected]
        if options:
            q, m = max(options, key=lambda t: t[0])
            if q > best:
                selected.append(m)
                best = q
                changed = True
                trace.append({"step": "add", "metric": m, "set": list(selected), "quality": q, "kept": True})
        while len(selected) > 1:
            memo.prefetch([[x for x in selected if x != m] for m in selected])
            drops = [(memo([x for x in selected if x != m]), m) for m in selected]
            q, m = max(drops, key=lambda t: t[0])
            key = tuple(sorted(x for x in selected if x != m))
            if q > best and key not in seen:
                selected.remove(m)
                best = q
                changed = True
                seen.add(key)
                trace.append({"step": "drop", "metric": m, "set": list(selected), "quality": q, "kept": True})
            else:
                break
        seen.add(tuple(sorted(selected)))
        if not changed:
            break
    return SearchResult(selected, best, ranked[0], trace, "forward-backward", memo.evaluations)


def exhaustive(candidates: Sequence[int], quality: Quality, many: Optional[Qualities] = None) -> SearchResult:
    """Every non-empty subset (at most 12 candidate metrics: 4,095 subsets); ties go to the smaller set."""
    if len(candidates) > MAX_EXHAUSTIVE:
        raise OptionError(f"exhaustive search takes at most {MAX_EXHAUSTIVE} candidate metrics, "
                          f"got {len(candidates)}; use --strategy greedy or beam")
    memo = _Memo(quality, many)
    ranked = _singles(memo, candidates)
    best_q, best_set = ranked[0][1], (ranked[0][0],)
    trace = []
    for size in range(2, len(candidates) + 1):
        memo.prefetch(combinations(candidates, size))
        size_best = max(((memo(s), s) for s in combinations(candidates, size)), key=lambda t: t[0])
        trace.append({"step": "size", "size": size, "set": list(size_best[1]), "quality": size_best[0],
                      "kept": size_best[0] > best_q})
        if size_best[0] > best_q:
            best_q, best_set = size_best
    return SearchResult(list(best_set), best_q, ranked[0], trace, "exhaustive", memo.evaluations)


def search(candidates: Sequence[int], quality: Quality, strategy: str = "greedy",
           many: Optional[Qualities] = None, **options) -> SearchResult:
    """Run the named strategy (``many``: see the module's docstring)."""
    if not candidates:
        raise OptionError("no candidate metrics to search over")
    funcs = {"greedy": greedy, "beam": beam, "forward-backward": forward_backward, "exhaustive": exhaustive}
    if strategy not in funcs:
        raise OptionError(f"unknown strategy {strategy!r}; choose one of {list(STRATEGIES)}")
    return funcs[strategy](list(candidates), quality, many=many, **options)
