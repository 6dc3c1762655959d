"""The typed scoring tasks a run hands to :func:`combo.parallel.run_tasks` (a metric over all rows or pairs,
a chunk of rows, a slice of reference counts), how one travels to a worker, and how chunk results merge."""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, fields
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..analysis.layers import task_memo
from ..analysis.supplied import using_trees
from ..analysis.trees import tree_ids
from ..metrics.base import Metric, Rows
from ..testbed import SuppliedTrees
from .plan import _affinity, _chunkable


def _score_metric(metric: Metric, texts: Sequence[str], rows: Optional[Rows], row_system: np.ndarray,
                  n_systems: int, pairs: Optional[tuple] = None, chunk: Optional[int] = None) -> dict:
    """One analysis of ``texts``; from it the rows' segment and system scores and/or the pairs' scores.

    ``rows`` index a prefix of ``texts``; ``pairs`` is ``(left, right)`` text ids.
    A metric whose rows are independent (locality ``"row"``) computes the
    statistics of at most ``chunk`` rows or pairs at a time, so their memory is
    bounded by the chunk rather than by the test bed (DSTC7's 6.3 million
    reference pairs); system scores sum the chunks' statistics. So does a
    ``"references"`` metric's pairs, each chunk read through the counts over
    every pair's reference (NIST's information, CIDEr's idf), as one call reads
    them. (Test beds too large for one analysis are scored in :class:`RowChunk`
    tasks instead.)
    """
    metric.check_resources()
    step = chunk if (chunk and metric.locality == "row") else None
    out = {}
    analysis = metric.analyse(list(texts))
    if rows is not None:
        out["rows"] = metric.row_scores(analysis, rows, row_system, n_systems, step)
    if pairs is not None:
        left, right = (np.asarray(side, dtype=np.int64) for side in pairs)
        pair_step = chunk if (chunk and _chunkable(metric)) else None
        if pair_step is None or len(left) <= pair_step:
            values = metric.pairwise_scores(texts, left, right, analysis=analysis)
        else:
            scorer = metric
            if metric.locality == "references" and metric.ngram_weights is None:
                one_each = np.arange(len(right) + 1, dtype=np.int64)
                scorer = metric.with_ngram_weights(metric.own_ngram_weights(analysis, one_each, right))
            values = np.empty(len(left), dtype=np.float64)
            for start in range(0, len(left), pair_step):
                stop = start + pair_step
                values[start:stop] = scorer.pairwise_scores(texts, left[start:stop], right[start:stop],
                                                            analysis=analysis)
        out["pairs"] = (values,)
    return out


@dataclass
class RowChunk:
    """Rows ``start:stop`` of a test bed as a task of their own: the distinct texts they use, and the rows
    (hypothesis id, CSR references, weights) indexing into those texts. A worker process or a Dask worker
    gets these texts alone, never the whole test bed's."""

    start: int
    stop: int
    texts: List[str]
    hyp_ids: np.ndarray
    ref_ptr: np.ndarray
    ref_ids: np.ndarray
    ref_weights: Optional[np.ndarray]

    @classmethod
    def cut(cls, rows: Rows, start: int, stop: int) -> "RowChunk":
        ptr = rows.ref_ptr[start:stop + 1]
        ref_ids = rows.ref_ids[ptr[0]:ptr[-1]]
        needed, local = np.unique(np.concatenate([rows.hyp_ids[start:stop], ref_ids]), return_inverse=True)
        local = local.ravel()
        n_hyp = stop - start
        weights = None if rows.ref_weights is None else rows.ref_weights[ptr[0]:ptr[-1]]
        return cls(start, stop, [rows.texts[i] for i in needed.tolist()], local[:n_hyp], ptr - ptr[0],
                   local[n_hyp:], weights)


def _score_row_chunk(metric: Metric, chunk: RowChunk) -> Tuple[np.ndarray, np.ndarray]:
    """The segment scores and the statistics of one chunk of rows, from an analysis of the chunk's texts alone.

    Exact for metrics whose rows are independent (locality ``"row"``): the
    analysis of a text does not depend on the other texts analysed with it.
    """
    metric.check_resources()
    with task_memo():  # the chunk's analyses are dropped with it: what a worker holds is bounded by one chunk
        analysis = metric.analyse(chunk.texts)
        stats = metric.statistics(analysis, chunk.hyp_ids, chunk.ref_ptr, chunk.ref_ids, chunk.ref_weights)
        del analysis
    seg = np.asarray(metric.score(stats, segment_level=True), dtype=np.float64).reshape(chunk.stop - chunk.start)
    return seg, stats


@dataclass(frozen=True, eq=False)
class MetricTask:
    """One metric scored in one task (:func:`_score_metric`): the rows' scores and/or the pairs' from one
    analysis of ``texts``."""

    metric: Metric
    texts: Sequence[str]
    rows: Optional[Rows]
    row_system: np.ndarray
    n_systems: int
    pairs: Optional[tuple] = None
    chunk: Optional[int] = None

    def run(self) -> dict:
        return _score_metric(self.metric, self.texts, self.rows, self.row_system, self.n_systems, self.pairs,
                             self.chunk)

    @property
    def weight(self) -> float:
        """Expected cost, to start the largest first: the rows and pairs it scores times the metric's
        ``relative_cost``."""
        count = (len(self.rows.hyp_ids) if self.rows is not None else 0) + (len(self.pairs[0]) if self.pairs else 0)
        return float(count) * self.metric.relative_cost


@dataclass(frozen=True, eq=False)
class ChunkTask:
    """The rows of one :class:`RowChunk` scored by ``metric`` (:func:`_score_row_chunk`)."""

    metric: Metric
    chunk: RowChunk

    def run(self) -> Tuple[np.ndarray, np.ndarray]:
        return _score_row_chunk(self.metric, self.chunk)

    @property
    def texts(self) -> List[str]:
        return self.chunk.texts

    @property
    def weight(self) -> float:
        """Expected cost: the chunk's rows times the metric's ``relative_cost``."""
        return float(self.chunk.stop - self.chunk.start) * self.metric.relative_cost


#: What :func:`combo.scoring.run._run` runs.
Task = Union[MetricTask, ChunkTask]


class _RowAssembly:
    """A chunked metric's segment scores and system sums, put together in row order whatever order its chunks
    finish in, so the system statistics add up in exactly the order of one call (identical scores for any
    ``jobs``, backend or chunk size)."""

    def __init__(self, metric: Metric, row_system: np.ndarray, n_systems: int):
        self.metric, self.row_system, self.n_systems = metric, row_system, n_systems
        self.seg = np.empty(len(row_system), dtype=np.float64)
        self.sums: Optional[np.ndarray] = None
        self.waiting: Dict[int, tuple] = {}
        self.next = 0

    def add(self, chunk: RowChunk, seg: np.ndarray, stats: np.ndarray) -> None:
        self.waiting[chunk.start] = (chunk.stop, seg, stats)
        while self.next in self.waiting:
            start = self.next
            stop, seg, stats = self.waiting.pop(start)
            self.seg[start:stop] = seg
            if self.sums is None:
                self.sums = np.zeros((self.n_systems, stats.shape[1]))
            np.add.at(self.sums, self.row_system[start:stop], stats)
            self.next = stop

    @property
    def complete(self) -> bool:
        return self.next == len(self.row_system)

    def result(self) -> Tuple[np.ndarray, np.ndarray]:
        sysv = np.asarray(self.metric.score(self.sums, segment_level=False), dtype=np.float64)
        return self.seg, sysv.reshape(self.n_systems)


def _count_slice(metric: Metric, texts: List[str], group_ptr: np.ndarray, group_ids: np.ndarray,
                 weight: np.ndarray):
    """The counts of a slice of a ``"references"`` metric's reference groups, from an analysis of their texts
    alone (dropped with the task)."""
    metric.check_resources()
    with task_memo():
        return metric.count_references(metric.analyse(texts), group_ptr, group_ids, weight)


@dataclass(frozen=True, eq=False)
class CountTask:
    """The counts of one slice of a ``"references"`` metric's reference groups (:func:`_count_slice`)."""

    metric: Metric
    texts: List[str]
    group_ptr: np.ndarray
    group_ids: np.ndarray
    weight: np.ndarray

    def run(self):
        return _count_slice(self.metric, self.texts, self.group_ptr, self.group_ids, self.weight)


def _call(trees: SuppliedTrees, task) -> tuple:
    """The arguments of :func:`_call_with_trees` that run ``task``: its class and its fields one by one, as
    :func:`combo.parallel.run_tasks` hands them on. A worker (local or Dask) receives exactly these objects; the
    Dask backend sends an argument that every task shares (the texts, the rows) once, by position."""
    return (trees, type(task)) + tuple(getattr(task, f.name) for f in fields(task))


def _task_of(call: tuple):
    """The task a :func:`_call` tuple runs."""
    return call[1](*call[2:])


def _call_with_trees(trees: SuppliedTrees, kind: type, *args):
    """``kind(*args).run()`` (a task, built back from :func:`_call`'s arguments) with the test bed's supplied
    trees in use and a fresh tree numbering (in whatever process runs the task), so a metric's scores never
    depend on the other metrics of the run nor on ``jobs``. In a
    worker process the task's analyses are dropped when it ends (:func:`task_memo`) unless the next task reads
    the same ones (:func:`_kept_memo`): a worker runs whichever tasks come to it, and keeping each one's decoded
    parses and trees made both workers hold nearly all of them."""
    from ..parallel import in_pool_worker, in_worker

    task = kind(*args)
    memo = _kept_memo(task) if in_pool_worker() else task_memo() if in_worker() else nullcontext()
    with using_trees(trees), tree_ids(fresh=True), memo:
        return task.run()


def _task_affinity(task) -> Optional[Tuple[str, ...]]:
    """The affinity (:func:`~combo.scoring.plan._affinity`) of a :class:`MetricTask`'s metric; None for a chunk of
    rows or of reference counts, whose analyses are never kept."""
    return _affinity(task.metric) if isinstance(task, MetricTask) else None


#: In a local pool worker: ``(texts, affinity, memo)`` of the task it ran last, when that was a
#: :class:`MetricTask` with an affinity (:func:`~combo.scoring.plan._affinity`); else None.
_KEPT: Optional[tuple] = None


@contextmanager
def _kept_memo(task) -> Iterator[None]:
    """:func:`task_memo` for ``task`` in a local pool worker, going on with the memo of the task before when both
    are :class:`MetricTask` s over the same texts with the same affinity (the pool gives such tasks to one worker
    one after another: ``groups`` of :func:`combo.parallel.run_tasks`): on WMT12 de-en's 4,800-candidate slice the
    three constituent kernels then build one chunk tree per text instead of three, and the parses are decoded
    once per worker. Otherwise the memo before is dropped (and its cyclic garbage collected) before the task
    starts, so a worker holds at most one affinity's analyses of the texts it works on. The analyses are
    values of the texts alone and each task still numbers its trees afresh (:func:`tree_ids`), so the scores
    are the same as with a memo per task."""
    from ..parallel import _release_memory

    global _KEPT
    affinity = _task_affinity(task)
    kept, _KEPT = _KEPT, None
    if kept is not None and not (affinity is not None and kept[0] is task.texts and kept[1] == affinity):
        kept = None
        _release_memory()
    with task_memo(kept[2] if kept is not None else None) as memo:
        yield
    if affinity is not None:
        _KEPT = (task.texts, affinity, memo)


class _CountMerge:
    """The slice counts of one metric merged as they come: pending slices are merged into the total once they
    hold as many n-grams as it (so each n-gram is re-sorted a logarithmic number of times), then dropped."""

    def __init__(self) -> None:
        self.total = None
        self.pending: list = []

    def add(self, counts) -> None:
        self.pending.append(counts)
        if self.total is None or sum(c.size for c in self.pending) >= self.total.size:
            self._flush()

    def result(self):
        if self.pending:
            self._flush()
        return self.total

    def _flush(self) -> None:
        parts = ([self.total] if self.total is not None else []) + self.pending
        self.total, self.pending = type(parts[0]).merge(parts), []
