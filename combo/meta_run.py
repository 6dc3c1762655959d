"""QUEEN and KING run at scale: under a memory budget, on worker processes or Dask, with progress.

:mod:`combo.meta` holds the statistics as pure functions on arrays; this module
decides how they run. For KING it takes :func:`combo.meta.likeness.king_plan`
(what is skipped, every random draw, in segment order), cuts the counted
segments into chunks sized from the budget (``memory``: a
:class:`combo.budget.Budget` or a size such as ``"2G"``), counts each chunk
with :func:`combo.meta.likeness.king_chunk` in this process or on workers
(``jobs``, :func:`combo.parallel.run_tasks`, local processes or Dask), and
merges them with :func:`combo.meta.likeness.king_merge`. The draws are made
before any chunk is cut, so the result is the same, to the bit, for any
``jobs``, budget or backend, and equals :func:`combo.meta.likeness.king`.

It also predicts what KING on a test bed costs (:func:`king_cost`, the
command line's advice) from rates measured on the project machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from .budget import Budget, format_bytes, segment_need
from .meta.likeness import (KingResult, check_king_options, king_chunk, king_merge, king_operations, king_plan,
                            king_segment_operations, segment_score_bytes, segment_shape)
from .meta.queen import QueenResult, Seed, check_max_refs, check_triples, min_references
from .meta.queen import queen_segments as _queen_segments
from .parallel import on_cluster, resolve_execution, run_tasks
from .progress import progress as reporter

#: References per segment suggested to cap a test bed with hundreds (DSTC7): KING's 4 plus a margin, as
#: docs/search.md runs it.
SUGGESTED_MAX_REFS = 8
#: The unbiased alternative the advice names: KING from a sample of segments and of held-out references
#: (docs/scale.md, measured on DSTC7 with every reference)
SUGGESTED_KING_SEGMENTS = 100
SUGGESTED_KING_SAMPLE = 16
#: Measured on the project machine, one core (docs/queen-king.md, "Cost"): KING's counting in the units of
#: :func:`combo.meta.likeness.king_operations`, and reference pairs scored per second and metric for the default
#: lexical set of combo search (METEOR and GTM are the slowest; chrF and ROUGE alone run about twice as fast).
KING_OPERATIONS_PER_SECOND = 4.5e7
PAIR_SCORES_PER_SECOND = 5.8e4
#: KING work (estimated at KING_OPERATIONS_PER_SECOND) below which ``jobs > 1`` still counts in this process:
#: a greedy search makes dozens of small KING calls, and a process pool per call made the bundled DSTC7 search
#: slower with --jobs 2 (17.9 s) than with one job (15.8 s; benchmarks/bench_jobs.py)
PARALLEL_MIN_SECONDS = 1.0


def king(segments: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
         higher_is_better: Optional[Sequence[bool]] = None,
         metric_names: Optional[Sequence[str]] = None,
         max_refs: Optional[int] = None, seed: Seed = None, ties: str = "count",
         held_out: Optional[int] = None, memory=None, progress: bool = False, jobs: int = 1,
         segment_population: Optional[int] = None, largest_set: int = 0) -> KingResult:
    """:func:`combo.meta.likeness.king` (same options, same result) under a memory budget, in parallel.

    Segments are prepared and counted in chunks sized from ``memory`` (a
    :class:`combo.budget.Budget` or a size such as ``"2G"``); a budget too
    small for one segment is an :class:`OptionError`, raised before anything
    is counted; its fix names a budget for every segment, and for ``largest_set``
    metrics when a caller goes on to larger sets (a search). ``jobs`` runs the
    chunks in parallel (:func:`combo.parallel.run_tasks`, local processes or
    Dask; on a Dask cluster whatever ``jobs`` says); work
    estimated under :data:`PARALLEL_MIN_SECONDS` stays in this process.
    ``progress`` shows KING's operations as they are counted. ``jobs`` may be the run's
    :class:`~combo.parallel.Execution`, which brings its budget and progress with it.
    """
    check_king_options(triples, ties, max_refs, held_out)
    run = resolve_execution(jobs, memory, progress)  # or the Execution of the run, handed in as jobs
    budget, progress = run.budget, run.progress
    plan = king_plan(segments, triples, higher_is_better, metric_names, max_refs, seed, ties, held_out,
                     segment_population)
    kept = {i: plan.kept_references(segments, i) for i in plan.draws}
    for i in plan.draws:  # in segment order: the first segment too large for the budget is named
        budget.check_segment(kept[i], segment_shape(segments, i)[0], i, fewest_refs=min_references(triples) + 1,
                             run_refs=max(kept.values()), run_metrics=largest_set)
    # in parallel: several chunks per worker (balance), each worker holding its own chunk within the share;
    # work of under a second stays in this process, where starting workers would cost more than it saves
    remote = on_cluster()  # on a cluster whatever ``jobs`` says
    costs = {i: king_operations(segments, i, held_out) for i in plan.draws}
    small = sum(costs.values()) < PARALLEL_MIN_SECONDS * KING_OPERATIONS_PER_SECOND
    jobs = run.jobs
    serial = (jobs.asked == 1 or small) and not remote
    chunk_bytes = budget.segment_bytes()
    if not serial:
        workers = jobs.processes if jobs.asked == -1 else max(jobs.processes, 2)
        total = sum(segment_score_bytes(segments, i) for i in plan.draws)
        chunk_bytes = max(1, min(chunk_bytes // workers, total // (4 * workers) + 1))
    chunks = plan.chunks(segments, chunk_bytes)
    options = plan.options + (budget.bitset_words(),)
    # a fork pool shares ``segments`` copy-on-write; a Dask task carries only its own chunk's arrays
    tasks = [({i: segments[i] for i in chunk} if remote else segments, chunk, {i: plan.draws[i] for i in chunk},
              options) for chunk in chunks]
    weights = [sum(costs[i] for i in chunk) for chunk in chunks]
    if not serial:
        return king_merge(plan, run_tasks(king_chunk, tasks, jobs, progress, "KING", weights=weights))
    bar = _progress(sum(weights), progress)
    results = []
    for task, w in zip(tasks, weights):
        results.append(king_chunk(*task))
        if bar is not None:
            bar.update(w)
    if bar is not None:
        bar.close()
    return king_merge(plan, results)


def queen_segments(segments: Sequence[Tuple[np.ndarray, np.ndarray]], triples: str = "distinct",
                   higher_is_better: Optional[Sequence[bool]] = None,
                   metric_names: Optional[Sequence[str]] = None,
                   max_refs: Optional[int] = None, seed: Seed = None, memory=None) -> QueenResult:
    """:func:`combo.meta.queen.queen_segments` with its chunks sized from ``memory`` (a :class:`combo.budget.Budget`
    or a size such as ``"2G"``; default 2 GB)."""
    check_triples(triples)
    check_max_refs(max_refs, triples)
    budget = Budget.of(memory)
    return _queen_segments(segments, triples, higher_is_better, metric_names, max_refs, seed,
                           chunk_bytes=budget.segment_bytes(), max_words=budget.bitset_words())


def _progress(total: float, progress: bool):
    if not progress or total <= 0:
        return None
    return reporter(total, "KING", unit="op", unit_scale=True)


# -- what KING on a test bed costs --------------------------------------------------------------

@dataclass
class KingCost:
    """The predicted cost of KING on a test bed: reference pairs to score, KING's operations, memory."""

    segments: int  # segments KING counts
    pairs: int  # text pairs scored per metric: n^2 reference pairs and n x candidates per segment (combo.scoring)
    operations: float  # KING's operations for a greedy search (2m - 1 metric sets of one or two metrics)
    metrics: int
    score_bytes: int  # the reference-pair scores held at once (float64 per pair and metric)
    largest_segment_bytes: int  # what the largest segment needs under --memory (combo.budget.segment_need)

    def seconds(self) -> float:
        return self.pairs * self.metrics / PAIR_SCORES_PER_SECOND + self.operations / KING_OPERATIONS_PER_SECOND

    def describe(self) -> str:
        return (f"{self.pairs:,} text pairs per metric and {self.operations:.2g} KING operations for a search "
                f"over {self.metrics} metric{'s' if self.metrics != 1 else ''}, "
                f"about {_duration(self.seconds())} on one core, "
                f"{format_bytes(self.score_bytes)} of pair scores, {format_bytes(self.largest_segment_bytes)} for "
                "the largest segment")


def king_cost(ref_counts: Sequence[int], cand_counts: Sequence[int], n_metrics: int, triples: str = "distinct",
              max_refs: Optional[int] = None, held_out: Optional[int] = None) -> KingCost:
    """Predict the cost of a greedy KING search over ``n_metrics`` metrics from each segment's reference and
    candidate counts (segments KING would skip are left out; ``max_refs`` caps, ``held_out`` as in :func:`king`).

    A greedy search measures about ``2 m - 1`` metric sets, nearly all of one or two metrics; each costs
    :func:`combo.meta.likeness.king_segment_operations` per segment. Time uses the rates measured on the
    project machine.
    """
    need = min_references(triples) + 1
    kept = [(min(n, max_refs) if max_refs else n, c) for n, c in zip(ref_counts, cand_counts) if n >= need and c]
    pairs = sum(n * n + c * n for n, c in kept)
    one = sum(king_segment_operations(1, c, n, held_out) for n, c in kept)
    m = max(n_metrics, 1)
    operations = one * (m + 2 * (m - 1))  # m single metrics, then m - 1 sets of two
    largest = max((n for n, _ in kept), default=0)
    return KingCost(len(kept), pairs, operations, m, 8 * pairs * m, segment_need(largest, 2) if largest else 0)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
