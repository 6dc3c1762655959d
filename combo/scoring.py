"""Run metrics over a test bed into a :class:`ScoreTable`.

Each metric sees every candidate of every system at once: the distinct texts
(candidates and references) are analysed once, the statistics of all rows
come from one call, segment scores are the metric's sentence-level scores and
system scores are the scores of each system's summed statistics (corpus
level). Metrics are independent, so ``jobs > 1`` runs them in parallel.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .analysis.layers import analysis_memo, cache_dir, task_memo
from .analysis.supplied import using_trees
from .analysis.trees import tree_ids
from .errors import InputError, OptionError
from .metrics.base import Candidates, Metric, Rows, TextIndex, analyser_versions, group_slice
from .metrics.registry import get_metric, is_model_file
from .metrics.sets import expand_metric_sets
from .testbed import SuppliedTrees, Testbed

MetricLike = Union[str, Metric]
#: The levels a score table reports: corpus scores per system, or one score per candidate.
LEVELS = ("system", "segment")


@dataclass
class ScoreTable:
    """Scores of metrics on the candidates of a test bed.

    Rows are candidates ``(row_system[k], row_segment[k])``; ``segment[m, k]``
    is metric ``m``'s score of row ``k``; ``system[m, s]`` its corpus-level
    score of system ``s``.
    """

    metrics: List[str]
    signatures: List[str]
    higher_is_better: List[bool]
    systems: List[str]
    segment_ids: List[str]
    row_system: np.ndarray
    row_segment: np.ndarray
    segment: np.ndarray
    system: np.ndarray
    testbed: str = ""
    metadata: Dict[str, object] = field(default_factory=dict)

    def metric_index(self, name: str) -> int:
        return self.metrics.index(name)

    def system_scores(self, metric: str) -> Dict[str, float]:
        """Corpus-level score of each system for ``metric``."""
        m = self.metric_index(metric)
        return {s: float(v) for s, v in zip(self.systems, self.system[m])}

    def to_records(self, level: str = "system") -> List[Dict[str, object]]:
        """Rows as dicts: per system, or per (system, segment) (``level`` one of :data:`LEVELS`)."""
        if level not in LEVELS:
            raise OptionError(f"unknown level {level!r}; choose one of {list(LEVELS)}")
        if level == "system":
            return [{"system": s, **{m: float(self.system[j, i]) for j, m in enumerate(self.metrics)}}
                    for i, s in enumerate(self.systems)]
        return [{"system": self.systems[self.row_system[k]], "segment": self.segment_ids[self.row_segment[k]],
                 **{m: float(self.segment[j, k]) for j, m in enumerate(self.metrics)}}
                for k in range(len(self.row_system))]

    def save(self, path) -> None:
        """Save as ``.npz``: plain arrays and JSON text, no pickle."""
        meta = {"metrics": self.metrics, "signatures": self.signatures, "higher_is_better": self.higher_is_better,
                "systems": self.systems, "segment_ids": self.segment_ids, "testbed": self.testbed,
                "metadata": self.metadata}
        np.savez_compressed(path, meta=np.array(json.dumps(meta, ensure_ascii=False)), row_system=self.row_system,
                            row_segment=self.row_segment, segment=self.segment, system=self.system)

    @classmethod
    def load(cls, path) -> "ScoreTable":
        """Read a table written by :meth:`save`."""
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            return cls(meta["metrics"], meta["signatures"], meta["higher_is_better"], meta["systems"],
                       meta["segment_ids"], z["row_system"], z["row_segment"], z["segment"], z["system"],
                       meta["testbed"], meta["metadata"])

    def to_dataframe(self, level: str = "segment"):
        """A pandas DataFrame (pandas is optional: ``pip install 'combo-eval[pandas]'``)."""
        try:
            import pandas as pd
        except ImportError:
            from .errors import ResourceMissing
            from .extras import install_hint

            raise ResourceMissing("pandas", install_hint("pandas")) from None
        return pd.DataFrame.from_records(self.to_records(level))

    def to_json(self) -> str:
        return json.dumps({
            "testbed": self.testbed,
            "metrics": [{"name": m, "signature": s, "higher_is_better": h,
                         "depends_on": self.metadata.get("provenance", {}).get(m, "")}
                        for m, s, h in zip(self.metrics, self.signatures, self.higher_is_better)],
            "system": self.to_records("system"),
            "segment": self.to_records("segment"),
        }, ensure_ascii=False, indent=1)


def _rows_of(testbed: Testbed, systems: Sequence[str]):
    refs = testbed.references()
    weights = testbed.reference_weights()
    hyps: List[str] = []
    row_refs: List[List[str]] = []
    row_weights: Optional[List[List[float]]] = [] if weights is not None else None
    row_system: List[int] = []
    row_segment: List[int] = []
    for s, name in enumerate(systems):
        for i, text in sorted(testbed.candidates[name].items()):
            hyps.append(text)
            row_refs.append(refs[i])
            if row_weights is not None:
                row_weights.append(weights[i])
            row_system.append(s)
            row_segment.append(i)
    return hyps, row_refs, row_weights, np.asarray(row_system, dtype=np.int64), np.asarray(row_segment, dtype=np.int64)


def _score_metric(metric: Metric, texts: Sequence[str], rows: Optional[Rows], row_system: np.ndarray,
                  n_systems: int, pairs: Optional[tuple] = None, chunk: Optional[int] = None) -> dict:
    """One analysis of ``texts``; from it the rows' segment and system scores and/or the pairs' scores.

    ``rows`` index a prefix of ``texts``; ``pairs`` is ``(left, right)`` text ids.
    A metric whose rows are independent (``rows_independent``) computes the
    statistics of at most ``chunk`` rows or pairs at a time, so their memory is
    bounded by the chunk rather than by the test bed (DSTC7's 6.3 million
    reference pairs); system scores sum the chunks' statistics. So does a
    ``corpus_wide`` metric's pairs, each chunk read through the counts over
    every pair's reference (NIST's information, CIDEr's idf), as one call reads
    them. (Test beds too large for one analysis are scored in :class:`RowChunk`
    tasks instead.)
    """
    metric.check_resources()
    step = chunk if (chunk and metric.rows_independent) else None
    out = {}
    analysis = metric.analyse(list(texts))
    if rows is not None:
        out["rows"] = metric.row_scores(analysis, rows, row_system, n_systems, step)
    if pairs is not None:
        left, right = (np.asarray(side, dtype=np.int64) for side in pairs)
        pair_step = chunk if (chunk and (metric.rows_independent or metric.corpus_wide)) else None
        if pair_step is None or len(left) <= pair_step:
            values = metric.pairwise_scores(texts, left, right, analysis=analysis)
        else:
            scorer = metric
            if metric.corpus_wide and metric.corpus is None:
                one_each = np.arange(len(right) + 1, dtype=np.int64)
                scorer = metric.with_corpus(metric.own_corpus(analysis, one_each, right))
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

    Exact for metrics whose rows are independent (``rows_independent``): the
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


#: What :func:`_run` runs.
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


def _chunkable(metric: Metric) -> bool:
    """Whether chunks of rows score as one call: a row's statistics read its own texts alone
    (``rows_independent``), or those and the counts :meth:`~Metric.for_corpus` takes from every row
    (``corpus_wide``)."""
    return metric.rows_independent or metric.corpus_wide


#: Fewer distinct reference texts than this for the corpus-wide counts of a run: counted in this process,
#: not worth starting worker processes for (100,000 references take 7.7 s for NIST, 6.5 s for CIDEr).
PARALLEL_COUNT_MIN_TEXTS = 20000


def _count_slice(metric: Metric, texts: List[str], group_ptr: np.ndarray, group_ids: np.ndarray,
                 weight: np.ndarray):
    """The counts of a slice of a ``corpus_wide`` metric's reference groups, from an analysis of their texts
    alone (dropped with the task)."""
    metric.check_resources()
    with task_memo():
        return metric.count_references(metric.analyse(texts), group_ptr, group_ids, weight)


@dataclass(frozen=True, eq=False)
class CountTask:
    """The counts of one slice of a ``corpus_wide`` metric's reference groups (:func:`_count_slice`)."""

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


def _bound_to_corpus(testbed: Testbed, tasks: List[Task], rows: Rows, jobs: int, progress: bool) -> List[Task]:
    """``tasks`` with each chunk of a ``corpus_wide`` metric scored by one copy of the metric bound to its
    counts over every reference of ``rows`` (:meth:`~Metric.with_counts`), so its chunks score as one call.

    The counts are made a slice of reference groups at a time (as many groups as the metric's chunks have
    rows, so a slice's texts are no more than a chunk's), in worker processes when there are many
    references (:data:`PARALLEL_COUNT_MIN_TEXTS`), and merged by n-gram content as they come.
    """
    from .parallel import run_tasks

    steps: Dict[int, int] = {}
    metrics: Dict[int, Metric] = {}
    for task in tasks:
        if isinstance(task, ChunkTask) and task.metric.corpus_wide:
            key = id(task.metric)
            metrics[key] = task.metric
            steps[key] = max(steps.get(key, 0), task.chunk.stop - task.chunk.start)
    slices: List[CountTask] = []
    owners = []
    for key, metric in metrics.items():
        group_ptr, group_ids, weight = metric.reference_groups(rows.ref_ptr, rows.ref_ids)
        for start in range(0, max(len(weight), 1), steps[key]):
            slices.append(CountTask(metric, *group_slice(rows.texts, group_ptr, group_ids, weight, start,
                                                         min(start + steps[key], len(weight)))))
            owners.append(key)
    merges = {key: _CountMerge() for key in metrics}
    texts = sum(len(s.texts) for s in slices)
    run_tasks(_call_with_trees, [_call(_trees_for(testbed, s.metric), s) for s in slices],
              jobs if texts >= PARALLEL_COUNT_MIN_TEXTS else 1, progress,
              "reference counts", on_result=lambda i, counts: merges[owners[i]].add(counts), keep=False,
              weights=[float(len(s.texts)) for s in slices],
              sent=[cache_dir() is not None or not _costly_layers(s.metric) for s in slices])
    del slices
    bound = {key: metric.with_counts(merges[key].result()) for key, metric in metrics.items()}
    return [ChunkTask(bound[id(t.metric)], t.chunk) if isinstance(t, ChunkTask) and id(t.metric) in bound else t
            for t in tasks]


def _chars_per_row(rows: Rows) -> float:
    """Mean characters of a row's hypothesis and references (what a chunk's analysis grows with)."""
    if not len(rows.hyp_ids):
        return 0.0
    lengths = np.fromiter(map(len, rows.texts), dtype=np.int64, count=len(rows.texts))
    return float(lengths[rows.hyp_ids].sum() + lengths[rows.ref_ids].sum()) / len(rows.hyp_ids)


def _row_step(metric: Metric, n_rows: int, chars_per_row: float, budget, workers: int,
              n_tasks: int) -> Optional[int]:
    """Rows per :class:`RowChunk` task of ``metric``, or None to score it in one task.

    A ``rows_independent`` or ``corpus_wide`` metric is cut into chunks when one analysis of all
    its texts would not fit its share of the budget (a quarter, divided among
    the ``workers`` that hold a chunk each), sized by the characters of the
    rows' texts and the metric's ``analysis_bytes_per_char``; and, with
    several workers and fewer than two tasks per worker, a ``rows_independent``
    one into enough chunks to keep every worker busy (not a ``corpus_wide`` one:
    its chunks would first need a pass over the references and analyse them
    again each, which on WMT12 de-en cost more than the split saved).
    """
    if not _chunkable(metric) or n_rows == 0:
        return None
    row_bytes = max(chars_per_row, 1.0) * metric.analysis_bytes_per_char
    step = max(1024, int(budget.bytes // 4 // max(workers, 1) // row_bytes))
    if workers > 1 and n_tasks < 2 * workers and metric.rows_independent:
        step = min(step, max(1024, -(-n_rows * n_tasks // (2 * workers))))
    return step if step < n_rows else None


def _call_with_trees(trees: SuppliedTrees, kind: type, *args):
    """``kind(*args).run()`` (a task, built back from :func:`_call`'s arguments) with the test bed's supplied
    trees in use and a fresh tree numbering (in whatever process runs the task), so a metric's scores never
    depend on the other metrics of the run nor on ``jobs``. In a
    worker process the task's analyses are dropped when it ends (:func:`task_memo`): a worker runs whichever
    tasks come to it, and keeping each one's decoded parses and trees made both workers hold nearly all of them."""
    from .parallel import in_worker

    with using_trees(trees), tree_ids(fresh=True), (task_memo() if in_worker() else nullcontext()):
        return kind(*args).run()


def _run(testbed: Testbed, tasks: List[Task], jobs: int, progress: bool, desc: str = "metrics",
         on_result=None, rows: Optional[Rows] = None) -> None:
    """Run ``tasks`` (:class:`MetricTask`, :class:`ChunkTask`) with ``testbed``'s supplied
    trees, in parallel processes when ``jobs != 1`` (see :mod:`combo.parallel`); ``on_result(i, result)`` runs as
    soon as task ``i`` is done (callers cache each metric then) and is the only place results go. The trees
    travel with each task: a worker process or a Dask worker sees this test bed's, nothing else. With several
    workers, the costly layers the tasks' metrics share are annotated first (:func:`_prepare_shared_layers`);
    then the chunks of a ``corpus_wide`` metric get its counts over all of ``rows`` (:func:`_bound_to_corpus`)."""
    from .parallel import run_tasks

    chunks = [isinstance(t, ChunkTask) for t in tasks]
    # a chunk is sent to its worker (it never touches the parent's texts), unless it must read the stored parses
    # this process keeps when there is no disk cache
    sent = [chunk and (cache_dir() is not None or not _costly_layers(t.metric)) for t, chunk in zip(tasks, chunks)]
    trees = [_trees_for(testbed, t.metric) if chunk else testbed.trees for t, chunk in zip(tasks, chunks)]
    with analysis_memo():  # the run's analyses, shared by its metrics (worker processes get a copy) and then dropped
        _prepare_shared_layers(tasks, jobs, progress)
        if any(chunk and t.metric.corpus_wide for t, chunk in zip(tasks, chunks)):
            tasks = _bound_to_corpus(testbed, tasks, rows, jobs, progress)
        run_tasks(_call_with_trees, [_call(tr, t) for tr, t in zip(trees, tasks)], jobs, progress, desc,
                  on_result=on_result, weights=[t.weight for t in tasks], sent=sent, keep=False,
                  groups=[id(t.metric) for t in tasks])  # a metric's chunks share its per-process set-up


def _trees_for(testbed: Testbed, metric: Metric) -> SuppliedTrees:
    """The supplied trees a task of ``metric`` needs: the test bed's when the metric reads them, else none."""
    return testbed.trees if _supplied_kind(metric) is not None else SuppliedTrees()


def _table(testbed: Testbed, metrics, instances, systems, row_system, row_segment, results,
           signatures: Optional[Dict[int, str]] = None) -> "ScoreTable":
    signatures = signatures or {}
    names = [_display_name(m, metrics[i]) for i, m in enumerate(instances)]
    missing = {names[k]: int(np.isnan(r[0]).sum()) for k, r in enumerate(results) if np.isnan(r[0]).any()}
    metadata: Dict[str, object] = {"provenance": {names[k]: provenance(m, testbed) for k, m in enumerate(instances)}}
    if missing:
        metadata["missing_scores"] = missing
    return ScoreTable(
        metrics=names,
        signatures=[signatures.get(k, m.signature) for k, m in enumerate(instances)],
        higher_is_better=[m.higher_is_better for m in instances],
        systems=systems,
        segment_ids=[s.id for s in testbed.segments],
        row_system=row_system,
        row_segment=row_segment,
        segment=np.vstack([r[0] for r in results]) if results else np.zeros((0, len(row_system))),
        system=np.vstack([r[1] for r in results]) if results else np.zeros((0, len(systems))),
        testbed=testbed.name,
        metadata=metadata,
    )


def reads_language(metric: Metric, language: Optional[str]) -> bool:
    """Whether ``metric`` at its options reads text in ``language`` (``None``, unknown: assumed so)."""
    languages = metric.language_support()[0]
    return language is None or not languages or language in languages


def check_language(metric: Metric, language: Optional[str], texts: str, given: MetricLike = None) -> None:
    """Refuse a metric whose analyses cannot read ``language`` (``None``: unknown, nothing checked).

    ``texts`` names what is scored in the message (e.g. "the candidates of test bed X").
    """
    if reads_language(metric, language):
        return
    languages, why = metric.language_support()
    read = ', '.join(map(repr, languages))
    if metric.family == "learned":  # a model's user cannot choose its metrics: what they can do is different
        raise OptionError(
            f"{_display_name(metric, given)} reads only {read} text ({why}); {texts} are in {language!r}. Fix: "
            f"apply it to {read} text, train a model on metrics that read {language!r} (combo metrics lists each "
            f"metric's languages), or apply it anyway with --language any")
    raise OptionError(
        f"{_display_name(metric, given)} reads only {read} "
        f"text: {why}; {texts} are in {language!r}. Fix: choose a metric that reads {language!r} (combo metrics "
        f"lists each metric's languages), or score anyway with --language any (API: "
        f"testbed.metadata['target_language'] = None)")


def resolve_metric(spec: str) -> Metric:
    """The metric a spec names: a registered metric (``"bleu:max_order=2"``) or a tuned-metric model file
    (``"model.json"``, read by :func:`combo.metrics.tuned.load_model`; a missing file is an InputError naming it).

    Model files are resolved here, above the registry, so the registry never imports what is built on it.
    """
    if not is_model_file(spec):
        return get_metric(spec)
    from .metrics.tuned import load_model

    path = spec.strip()
    if not Path(path).is_file():
        raise InputError("model file not found", path, fix="give the path of a model written by `combo train`")
    return load_model(path)


def metrics_for(testbed: Testbed, metrics: Sequence[MetricLike], pairs: bool = False) -> List[Metric]:
    """Metric instances for ``metrics`` (specs or instances), checked for the test bed's language and resources.

    ``pairs``: the metrics must also score text pairs (QUEEN and KING), which scores read
    per candidate from a file (``mtme:``, ``scores:``) cannot.
    """
    instances = [resolve_metric(m) if isinstance(m, str) else m for m in metrics]
    for given, m in zip(metrics, instances):
        if pairs and m.row_keyed:
            from .metrics.external import PAIR_REFUSAL

            raise OptionError(f"{_display_name(m, given)}: {PAIR_REFUSAL}. Fix: leave it out of the metrics "
                              "whose single-reference scores QUEEN, KING and ORANGE need, or measure the metrics "
                              "with a criterion that needs none (r_snt or wmt_kendall, with ULC)")
        check_language(m, testbed.target_language, f"the candidates of test bed {testbed.name}", given)
    for m in instances:
        m.check_resources()
    return instances


def score_testbed(testbed: Testbed, metrics: Sequence[MetricLike], systems: Optional[Sequence[str]] = None,
                  jobs: int = 1, progress: bool = False, cache_dir=None, memory=None) -> ScoreTable:
    """Score every candidate of ``testbed`` with each metric (names like ``"bleu:max_order=2"``, named sets like
    ``"@lexical"`` (combo.metrics.sets; notes on left-out members in ``table.metadata["notes"]``) or instances).

    With ``cache_dir``, each metric's scores are stored under a key made of the
    test bed's texts and the metric's signature, and reused on the next run.
    ``memory`` (a size such as ``"2G"``, default 2 GB) bounds the rows whose
    statistics are held at once.
    """
    from .budget import Budget
    from .parallel import workers_for

    budget = Budget.of(memory)
    chunk = budget.pair_chunk()
    metrics, set_notes = _expand_sets(metrics)
    instances = metrics_for(testbed, metrics)
    if not all(m.row_keyed for m in instances):
        check_references(testbed)
    systems = list(testbed.systems if systems is None else systems)
    hyps, refs, weights, row_system, row_segment = _rows_of(testbed, systems)
    if weights is not None:
        for m in instances:
            m.check_reference_weights(testbed)
    rows = Rows.build(hyps, refs, weights)
    n_sys = len(systems)
    cache = _Cache(cache_dir, _fingerprint(hyps, refs, weights, row_system, systems) if cache_dir is not None else "",
                   "segment", [(len(row_system),), (n_sys,)], testbed.trees)  # no cache: no texts to hash
    del hyps, refs, weights
    with using_trees(testbed.trees):  # a tuned metric read per candidate scores its text components here
        results, signatures = _row_keyed(instances, Candidates(testbed, systems, row_system, row_segment, rows))
    for k, m in enumerate(instances):
        if k not in results:
            results[k] = cache.get(m)
    todo = [k for k in range(len(instances)) if results[k] is None]
    workers = workers_for(jobs)
    chars_per_row = _chars_per_row(rows) if any(_chunkable(instances[k]) for k in todo) else 0.0
    tasks: List[Task] = []
    owners: List[int] = []
    assemblies: Dict[int, _RowAssembly] = {}
    for k in todo:
        step = _row_step(instances[k], len(row_system), chars_per_row, budget, workers, len(todo))
        if step is None:
            tasks.append(MetricTask(instances[k], rows.texts, rows, row_system, n_sys, None, chunk))
            owners.append(k)
            continue
        assemblies[k] = _RowAssembly(instances[k], row_system, n_sys)
        for start in range(0, len(row_system), step):
            tasks.append(ChunkTask(instances[k], RowChunk.cut(rows, start, min(start + step, len(row_system)))))
            owners.append(k)

    def done(i: int, r) -> None:  # cached at once: a killed run keeps the metrics it finished
        k = owners[i]
        if k in assemblies:
            assemblies[k].add(tasks[i].chunk, *r)
            if not assemblies[k].complete:
                return
            r = {"rows": assemblies.pop(k).result()}
        results[k] = r["rows"]
        cache.put(instances[k], r["rows"])

    _run(testbed, tasks, jobs, progress, on_result=done, rows=rows)
    return _with_notes(_table(testbed, metrics, instances, systems, row_system, row_segment,
                              [results[k] for k in range(len(instances))], signatures), set_notes)


#: Analysis layers costly enough to annotate once, in parallel, before the metrics that read them are scored
#: with ``jobs > 1``: otherwise each worker process annotates the same texts (41% more CPU for the same scores
#: on WMT12 cs-en with the heterogeneous set), while the parse itself ran in one process at a time per metric.
#: The sentence encoder comes first: it costs more than the rest of the heterogeneous set together, and on its
#: own at the end of a run it kept one core busy for minutes after the other metrics had finished.
PARALLEL_LAYERS = ("sentence-embeddings", "dependencies", "dependencies+lemmas", "shallow")
#: Fewer texts to annotate than this: not worth starting worker processes for.
PARALLEL_ANNOTATION_MIN_TEXTS = 2000


def _costly_layers(metric: Metric) -> List[str]:
    """The :data:`PARALLEL_LAYERS` ``metric`` reads from the annotator (none when it reads supplied trees)."""
    return [] if _supplied_kind(metric) is not None else [name for name in metric.layers if name in PARALLEL_LAYERS]


def _prepare_shared_layers(tasks: Sequence[Task], jobs: int, progress: bool) -> None:
    """Before the tasks (:class:`MetricTask`, :class:`ChunkTask`) start, annotate their texts with the
    costly layers (:data:`PARALLEL_LAYERS`) their metrics read, split among worker processes, and store the
    results (the disk cache, or without one this run's memo, which forked workers inherit) without decoding
    them here: each task decodes only its own texts. Only with ``jobs > 1``; the analyses are the annotator's,
    so the scores are the same."""
    from .analysis.layers import prepare
    from .parallel import workers_for

    if workers_for(jobs) < 2:
        return
    texts_of: Dict[str, Dict[str, None]] = {}
    for task in tasks:
        for name in _costly_layers(task.metric):
            texts_of.setdefault(name, {}).update(dict.fromkeys(task.texts))
    for name in sorted(texts_of, key=PARALLEL_LAYERS.index):
        prepare(name, list(texts_of[name]),
                annotator=lambda layer, todo, store: _annotate_in_parallel(layer, todo, jobs, progress, store))


def _annotate_in_parallel(layer_name: str, texts: List[str], jobs: int, progress: bool,
                          store: Callable[[int, List[str]], None]) -> None:
    """Annotate ``texts`` (in the order :func:`~combo.analysis.layers.ordered` gives) by one layer, in chunks
    spread over forked worker processes, handing each chunk's stored forms to ``store(start, values)`` as it
    is done (nothing is held here). A parser (spaCy's model, TextBlob) is loaded here first, so the workers
    inherit it instead of each loading its own; the sentence encoder is loaded by each worker, which runs it on
    one thread (:func:`combo.parallel._init_worker`), so that no process here holds the threads of a
    deep-learning runtime when the workers are forked. Where the encoder has already run in this process (an
    earlier call in a notebook: :meth:`~combo.analysis.layers.Layer.threads_started`), this process encodes the
    texts itself with its threads: a worker forked from it could wait forever on its OpenMP thread pool."""
    from .analysis.layers import annotate_texts, get_layer
    from .parallel import run_tasks, workers_for

    workers = workers_for(jobs)
    layer = get_layer(layer_name)
    if len(texts) < PARALLEL_ANNOTATION_MIN_TEXTS or layer.threads_started():
        store(0, annotate_texts(layer_name, texts))  # few texts, or the encoder's threads already started here
        return
    first = 0
    if layer.order(texts[:1]) is None:  # each text alone: one analysis here loads the parser
        store(0, annotate_texts(layer_name, texts[:1]))
        first = 1
    step = -(-(len(texts) - first) // (4 * workers))
    step = -(-step // layer.group) * layer.group  # pieces start at multiples of the layer's group
    starts = list(range(first, len(texts), step))
    chunks = [(layer_name, texts[start:start + step]) for start in starts]
    run_tasks(annotate_texts, chunks, jobs, progress, f"{layer_name} analysis", keep=False,
              weights=[sum(map(len, chunk)) for _, chunk in chunks],  # longest texts first
              on_result=lambda i, values: store(starts[i], values))


def _expand_sets(metrics: Sequence[MetricLike]) -> Tuple[List[MetricLike], List[str]]:
    """``metrics`` with each named set (``@lexical``, ``@heterogeneous``: combo.metrics.sets) replaced by its
    members, and the notes on members ``@set:available`` left out."""
    notes: List[str] = []
    return expand_metric_sets(metrics, notes), notes


def _with_notes(table: ScoreTable, notes: List[str]) -> ScoreTable:
    if notes:
        table.metadata["notes"] = notes
    return table


def analysis_provenance(metric: Metric, trees: Optional[SuppliedTrees] = None) -> str:
    """What a metric's scores depend on beyond its options: :func:`~combo.metrics.base.analyser_versions` and
    ``trees:``, the digest of the test bed's ``trees`` of the kind the metric reads. Empty for metrics of text
    alone."""
    out = analyser_versions(metric)
    kind = _supplied_kind(metric)
    if kind is not None:
        out += ("|" if out else "") + f"trees:{kind}:{(trees or SuppliedTrees()).digest(kind)}"
    return out


def _supplied_kind(metric: Metric) -> Optional[str]:
    """The kind of supplied trees a metric reads (``--trees KIND``), or None."""
    params = getattr(metric, "params", {}) or {}
    if metric.family == "discourse" or any("supplied discourse" in r for r in metric.resources):
        return "discourse"
    if params.get("trees") == "supplied":
        return "constituents"
    if params.get("parser") == "supplied":
        return "dependencies"
    return None


def provenance(metric: Metric, testbed: Testbed) -> str:
    """``nrefs:K`` (``K`` or ``min-max`` references per segment) and :func:`analysis_provenance`."""
    counts = [len(s.references) for s in testbed.segments] or [0]
    lo, hi = min(counts), max(counts)
    nrefs = f"nrefs:{lo}" if lo == hi else f"nrefs:{lo}-{hi}"
    extra = analysis_provenance(metric, testbed.trees)
    return nrefs + (f"|{extra}" if extra else "")


def check_references(testbed: Testbed) -> None:
    """Refuse a test bed with a segment that has no reference: a text metric would score it 0 silently."""
    empty = [seg.id for seg in testbed.segments if not seg.references]
    if empty:
        raise InputError(f"test bed {testbed.name!r}: segment {empty[0]!r} has no reference ({len(empty)} such "
                         f"segments of {len(testbed.segments)})",
                         fix="give every segment at least one reference (an empty string is allowed)")


def _row_keyed(instances: Sequence[Metric], cands: Candidates):
    """Scores of the metrics read per candidate (``mtme:``, ``scores:``, tuned models using them): cheap, never cached.

    Returns ``({index: (segment scores, system scores)}, {index: signature with the files read})``.
    """
    results, signatures = {}, {}
    for k, m in enumerate(instances):
        if m.row_keyed:
            seg, sysv, signatures[k] = m.candidate_scores(cands)
            results[k] = (seg, sysv)
    return results, signatures


def _display_name(metric: Metric, given: MetricLike) -> str:
    return given if isinstance(given, str) else metric.name


def _fingerprint(*parts) -> str:
    """SHA-256 of the texts and layout a score depends on."""
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part if not isinstance(part, np.ndarray) else part.tolist(),
                            ensure_ascii=False).encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def cache_warning(message: str) -> None:
    """One line on stderr: a cache problem costs time, never a result."""
    sys.stderr.write(f"combo: warning: {message}\n")
    sys.stderr.flush()


#: The file that makes a folder a combo score cache: ``combo cache clear`` refuses a folder without it.
SCORE_CACHE_MARKER = ".combo-score-cache"
_MARKER_CONTENT = {"format": "combo-score-cache", "version": 1}
#: What combo writes in a score-cache folder, and all that ``combo cache clear`` removes: entries
#: ``<metric>-<32 hex key>.npz``, their temporary files ``.<entry stem>-<mkstemp's letters>.tmp`` and
#: the marker's ``.combo-score-cache-<letters>.tmp``.
_ENTRY = re.compile(r".+-[0-9a-f]{32}\.npz")
_ENTRY_TMP = re.compile(r"\..+-[0-9a-f]{32}-[a-z0-9_]+\.tmp")
_MARKER_TMP = re.compile(re.escape(SCORE_CACHE_MARKER) + r"-[a-z0-9_]+\.tmp")
#: The name of the array in which an entry records its key (the arrays themselves are ``a0, a1, ...``).
_KEY_ARRAY = "key"


class _Cache:
    """Per-metric score arrays in ``.npz`` files keyed by data fingerprint and metric signature.

    ``shapes`` are the shapes the entry must hold (one per array). An entry is
    written under a unique temporary name, fsynced and renamed into place, so
    concurrent runs on one folder and a run killed mid-write never leave a
    partial entry; it records its own key (the SHA-256 of what it depends on),
    so a file copied over another entry's name is not read as that entry. A
    damaged one (truncated, empty, other arrays or shapes, another key or none)
    is recomputed after one warning line. The folder gets a marker file
    (:data:`SCORE_CACHE_MARKER`) with its first entry.
    """

    def __init__(self, folder, fingerprint: str, kind: str, shapes: Sequence[Tuple[int, ...]] = (),
                 trees: Optional[SuppliedTrees] = None):
        self.folder = None if folder is None else Path(folder)
        self.trees = trees
        self.fingerprint = fingerprint
        self.kind = kind
        self.shapes = [tuple(s) for s in shapes]

    def _key(self, metric: Metric) -> str:
        depends = f"{self.kind}|{self.fingerprint}|{metric.signature}|{analysis_provenance(metric, self.trees)}"
        return hashlib.sha256(depends.encode()).hexdigest()

    def _path(self, metric: Metric, key: Optional[str] = None) -> Path:
        key = self._key(metric) if key is None else key
        return self.folder / f"{metric.name.replace('/', '_')}-{key[:32]}.npz"

    def get(self, metric: Metric):
        if self.folder is None:
            return None
        key = self._key(metric)
        path = self._path(metric, key)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                if _KEY_ARRAY not in z.files:
                    raise ValueError("it records no key")
                stored = str(z[_KEY_ARRAY])
                if stored != key:
                    raise ValueError(f"it records the key of another entry, {stored[:32]}")
                count = len(z.files) - 1
                arrays = tuple(np.asarray(z[f"a{i}"], dtype=np.float64) for i in range(count))
            if self.shapes and [a.shape for a in arrays] != self.shapes:
                raise ValueError(f"arrays of shapes {[a.shape for a in arrays]}, expected {self.shapes}")
            return arrays
        except Exception as exc:  # noqa: BLE001 - any damage (BadZipFile, EOFError, ...) means recompute
            cache_warning(f"damaged score-cache entry {path} ({type(exc).__name__}: {str(exc)[:80]}); "
                          "recomputing it")
            return None

    def put(self, metric: Metric, arrays) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _mark_score_cache(self.folder)
            key = self._key(metric)
            write_npz_atomic(self._path(metric, key), arrays, key=key)
        except OSError as exc:
            cache_warning(f"cannot write the score cache in {self.folder} ({exc.strerror}); "
                          "scores are not cached")


def _mark_score_cache(folder: Path) -> None:
    """Write ``folder``'s marker once (a temporary file renamed into place, as the entries)."""
    marker = folder / SCORE_CACHE_MARKER
    if not marker.is_file():
        _write_atomic(marker, f"{SCORE_CACHE_MARKER}-", (json.dumps(_MARKER_CONTENT) + "\n").encode("utf-8"))


def _is_score_cache(folder: Path) -> bool:
    """Whether ``folder`` holds the marker combo writes with a score cache's first entry."""
    try:
        content = json.loads((folder / SCORE_CACHE_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(content, dict) and content.get("format") == _MARKER_CONTENT["format"]


def write_npz_atomic(path: Path, arrays, key: Optional[str] = None) -> None:
    """``arrays`` as ``a0, a1, ...`` in ``path`` (and ``key``, when given, as the string array ``key``): a
    uniquely named temporary file, fsynced, renamed into place, with the mode a plain ``open`` gives (the
    umask's, so a cache folder shared by a group stays shared)."""
    named = {f"a{i}": a for i, a in enumerate(arrays)}
    if key is not None:
        named[_KEY_ARRAY] = np.array(key)
    _write_atomic(path, f".{path.stem}-", lambda fh: np.savez(fh, **named))


def _write_atomic(path: Path, prefix: str, content) -> None:
    """``content`` (bytes, or a function writing to a binary file) in ``path`` through a temporary file
    ``<prefix>XXXXXXXX.tmp`` beside it, fsynced and renamed into place, with the umask's mode."""
    from .io.text import current_umask

    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(content):
                content(fh)
            else:
                fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


#: ``COMBO_SCORE_CACHE=off`` (or 0, no, false): the command line keeps no score cache unless given ``--cache``.
SCORE_CACHE_VARIABLE = "COMBO_SCORE_CACHE"


def default_score_cache() -> Optional[Path]:
    """The command line's score-cache folder when ``--cache`` is not given: ``scores/`` inside the analysis
    cache's folder (``$COMBO_CACHE_DIR``, else ``~/.cache/combo``), so both caches live in one place that
    ``combo cache info|clear`` shows and empties, and a killed run keeps every metric it finished. None when
    the disk cache is off (``COMBO_CACHE_DIR=""``) or ``COMBO_SCORE_CACHE=off``. The Python API caches scores
    only when asked (``cache_dir=``)."""
    if os.environ.get(SCORE_CACHE_VARIABLE, "").strip().lower() in ("off", "0", "no", "false"):
        return None
    folder = cache_dir()
    return None if folder is None else folder / "scores"


def _combo_files(folder: Path) -> Tuple[List[Path], List[Path]]:
    """The entries and the temporary files combo wrote in ``folder``, by exact name; other files are not
    combo's."""
    entries, temporary = [], []
    for p in sorted(folder.iterdir()):
        if _ENTRY.fullmatch(p.name) and p.is_file():
            entries.append(p)
        elif (_ENTRY_TMP.fullmatch(p.name) or _MARKER_TMP.fullmatch(p.name)) and p.is_file():
            temporary.append(p)
    return entries, temporary


def cache_info(folder, require_marker: bool = True) -> Dict[str, Any]:
    """Entries (``<metric>-<key>.npz``) and bytes of a score-cache folder, and whether it has combo's marker.
    A folder without the marker counts no entries unless ``require_marker`` is false (the default folder,
    whose entries an older combo may have written without a marker)."""
    folder = Path(folder)
    marked = folder.is_dir() and _is_score_cache(folder)
    entries = _combo_files(folder)[0] if folder.is_dir() and (marked or not require_marker) else []
    return {"folder": str(folder), "score_entries": len(entries),
            "score_bytes": sum(p.stat().st_size for p in entries), "marked": marked}


def cache_clear(folder, require_marker: bool = True) -> int:
    """Remove the score-cache entries of ``folder`` and leftover temporary files of combo's; returns how many.

    Only files named as combo names them go; the marker stays (the folder is still a cache). A folder
    without combo's marker is refused (:class:`InputError`, nothing removed) unless ``require_marker`` is
    false: the default folder, a path combo owns, where an older combo wrote entries without a marker.
    A missing folder has nothing to remove."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    if require_marker and not _is_score_cache(folder):
        marker = SCORE_CACHE_MARKER
        why = f"its {marker} is not combo's marker" if (folder / marker).exists() else f"no {marker} marker"
        raise InputError(f"is not a combo score cache ({why}): nothing was removed", folder,
                         fix="name the folder a command's --cache wrote, or delete the files yourself")
    entries, temporary = _combo_files(folder)
    for p in entries + temporary:
        p.unlink(missing_ok=True)
    return len(entries) + len(temporary)


@dataclass
class ReferenceScores:
    """Single-reference similarities for QUEEN and KING (Giménez & Màrquez 2008, §3.2).

    For segment ``i``: ``cand_ref(i)`` has shape (metrics, candidates, references)
    with ``x(a, r)``; ``ref_ref(i)`` has shape (metrics, references, references)
    with ``x(r', r'')``. Candidates of segment ``i`` are the ScoreTable rows
    ``rows(i)``; references are ``ref_index[i]`` (indices into the segment's
    references, a seeded sample when capped at ``max_refs``).
    """

    metrics: List[str]
    signatures: List[str]
    row_ptr: np.ndarray  # segment i's candidate rows: row_order[row_ptr[i]:row_ptr[i+1]]
    row_order: np.ndarray
    ref_index: List[np.ndarray]
    cand_ref_ptr: np.ndarray
    cand_ref_values: np.ndarray  # (metrics, sum_i n_cand_i * n_ref_i)
    ref_ref_ptr: np.ndarray
    ref_ref_values: np.ndarray  # (metrics, sum_i n_ref_i ** 2)
    max_refs: Optional[int] = None
    seed: int = 0
    capped_segments: int = 0

    def rows(self, i: int) -> np.ndarray:
        return self.row_order[self.row_ptr[i]:self.row_ptr[i + 1]]

    def cand_ref(self, i: int) -> np.ndarray:
        nc, nr = len(self.rows(i)), len(self.ref_index[i])
        return self.cand_ref_values[:, self.cand_ref_ptr[i]:self.cand_ref_ptr[i + 1]].reshape(-1, nc, nr)

    def ref_ref(self, i: int) -> np.ndarray:
        nr = len(self.ref_index[i])
        return self.ref_ref_values[:, self.ref_ref_ptr[i]:self.ref_ref_ptr[i + 1]].reshape(-1, nr, nr)

    def save(self, path) -> None:
        """Save as a compressed ``.npz`` (plain arrays and JSON; no pickle)."""
        ref_lengths = np.array([len(r) for r in self.ref_index], dtype=np.int64)
        np.savez_compressed(
            path, metrics=np.array(self.metrics), signatures=np.array(self.signatures), row_ptr=self.row_ptr,
            row_order=self.row_order, ref_lengths=ref_lengths,
            ref_flat=np.concatenate(self.ref_index) if self.ref_index else np.zeros(0, np.int64),
            cand_ref_ptr=self.cand_ref_ptr, cand_ref_values=self.cand_ref_values, ref_ref_ptr=self.ref_ref_ptr,
            ref_ref_values=self.ref_ref_values,
            info=np.array(json.dumps({"max_refs": self.max_refs, "seed": self.seed,
                                      "capped_segments": self.capped_segments})))

    @classmethod
    def load(cls, path) -> "ReferenceScores":
        with np.load(path, allow_pickle=False) as z:
            info = json.loads(str(z["info"]))
            bounds = np.concatenate([[0], np.cumsum(z["ref_lengths"])])
            flat = z["ref_flat"]
            return cls(list(map(str, z["metrics"])), list(map(str, z["signatures"])), z["row_ptr"],
                       z["row_order"], [flat[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)],
                       z["cand_ref_ptr"], z["cand_ref_values"], z["ref_ref_ptr"], z["ref_ref_values"],
                       info["max_refs"], info["seed"], info["capped_segments"])


@dataclass
class _PairPlan:
    """Which text pairs QUEEN and KING need, as ids into a TextIndex, and how to cut them per segment."""

    left: np.ndarray
    right: np.ndarray
    order: np.ndarray
    row_ptr: np.ndarray
    ref_index: List[np.ndarray]
    cr_ptr: np.ndarray
    rr_ptr: np.ndarray
    capped: int


def _pair_plan(testbed: Testbed, systems: Sequence[str], row_system: np.ndarray, row_segment: np.ndarray,
               tid: TextIndex, max_refs: Optional[int], seed: int) -> _PairPlan:
    rng = np.random.default_rng(seed)
    n_seg = len(testbed.segments)
    order = np.lexsort((row_system, row_segment))
    row_ptr = np.searchsorted(row_segment[order], np.arange(n_seg + 1), side="left")
    cand_text = np.array([tid(testbed.candidates[systems[s]][row_segment[k]]) for k, s in enumerate(row_system)],
                         dtype=np.int64)
    ref_index: List[np.ndarray] = []
    left_cr, right_cr, left_rr, right_rr = [], [], [], []
    cr_ptr, rr_ptr = [0], [0]
    capped = 0
    for i, seg in enumerate(testbed.segments):
        n = len(seg.references)
        keep = np.arange(n)
        if max_refs is not None and n > max_refs:
            keep = np.sort(rng.choice(n, size=max_refs, replace=False))
            capped += 1
        ref_index.append(keep)
        ref_ids = np.array([tid(seg.references[j]) for j in keep], dtype=np.int64)
        rows = order[row_ptr[i]:row_ptr[i + 1]]
        left_cr.append(np.repeat(cand_text[rows], len(ref_ids)))
        right_cr.append(np.tile(ref_ids, len(rows)))
        left_rr.append(np.repeat(ref_ids, len(ref_ids)))
        right_rr.append(np.tile(ref_ids, len(ref_ids)))
        cr_ptr.append(cr_ptr[-1] + len(rows) * len(ref_ids))
        rr_ptr.append(rr_ptr[-1] + len(ref_ids) ** 2)
    empty = np.zeros(0, np.int64)
    left = np.concatenate(left_cr + left_rr) if n_seg else empty
    right = np.concatenate(right_cr + right_rr) if n_seg else empty
    return _PairPlan(left, right, order, np.asarray(row_ptr, dtype=np.int64), ref_index,
                     np.asarray(cr_ptr, dtype=np.int64), np.asarray(rr_ptr, dtype=np.int64), capped)


def _reference_table(plan: _PairPlan, metrics, instances, values, max_refs, seed) -> ReferenceScores:
    """The per-metric pair scores laid out as :class:`ReferenceScores` (``values``: an array or a list of rows)."""
    if not isinstance(values, np.ndarray):
        values = np.vstack(values) if len(values) else np.zeros((0, len(plan.left)))
    n_cr = plan.cr_ptr[-1]
    return ReferenceScores(
        metrics=[_display_name(m, metrics[i]) for i, m in enumerate(instances)],
        signatures=[m.signature for m in instances], row_ptr=plan.row_ptr, row_order=plan.order,
        ref_index=plan.ref_index, cand_ref_ptr=plan.cr_ptr, cand_ref_values=values[:, :n_cr],
        ref_ref_ptr=plan.rr_ptr, ref_ref_values=values[:, n_cr:], max_refs=max_refs, seed=seed,
        capped_segments=plan.capped)


def reference_scores(testbed: Testbed, table: ScoreTable, metrics: Sequence[MetricLike],
                     max_refs: Optional[int] = None, seed: int = 0, jobs: int = 1,
                     cache_dir=None, memory=None, progress: bool = False) -> ReferenceScores:
    """Score every candidate against each single reference, and every reference against the others.

    Each metric analyses the distinct texts once and scores all pairs from
    that analysis. With ``max_refs``, a segment with more references keeps a
    uniform random sample of ``max_refs`` of them (``numpy.random.default_rng(seed)``,
    drawn segment by segment in order): an unbiased estimator of QUEEN's
    probabilities over reference triples, exact when no segment is capped.
    (:func:`score_with_references` gives the table and these scores from one
    analysis per metric.)
    """
    from .budget import Budget

    chunk = Budget.of(memory).pair_chunk()
    metrics = _expand_sets(metrics)[0]
    instances = metrics_for(testbed, metrics, pairs=True)
    tid = TextIndex()
    plan = _pair_plan(testbed, table.systems, table.row_system, table.row_segment, tid, max_refs, seed)
    cache = _Cache(cache_dir, _fingerprint(tid.texts, plan.left, plan.right), "pairs", [(len(plan.left),)],
                   testbed.trees)
    values = np.empty((len(instances), len(plan.left)), dtype=np.float64)  # filled in place: no stacked copy
    todo = []
    for k, m in enumerate(instances):
        hit = cache.get(m)
        if hit is None:
            todo.append(k)
        else:
            values[k] = hit[0]
    no_rows = np.zeros(0, np.int64)
    def done(i: int, r: dict) -> None:
        values[todo[i]] = r["pairs"][0]
        cache.put(instances[todo[i]], r["pairs"])

    _run(testbed, [MetricTask(instances[k], tid.texts, None, no_rows, 0, (plan.left, plan.right), chunk)
                   for k in todo], jobs, progress, "reference pairs", on_result=done)
    return _reference_table(plan, metrics, instances, values, max_refs, seed)


def score_with_references(testbed: Testbed, metrics: Sequence[MetricLike], max_refs: Optional[int] = None,
                          seed: int = 0, jobs: int = 1, progress: bool = False, cache_dir=None, memory=None):
    """:func:`score_testbed` and :func:`reference_scores` together, from ONE analysis of the texts per metric.

    ``memory`` bounds the pairs (and rows) a metric scores at once; the pair
    scores of all metrics are one preallocated array, 8 bytes per metric and pair.
    """
    from .budget import Budget

    chunk = Budget.of(memory).pair_chunk()
    metrics, set_notes = _expand_sets(metrics)
    instances = metrics_for(testbed, metrics, pairs=True)
    check_references(testbed)
    systems = list(testbed.systems)
    hyps, refs, weights, row_system, row_segment = _rows_of(testbed, systems)
    rows = Rows.build(hyps, refs, weights)
    tid = TextIndex()
    for text in rows.texts:  # the rows' ids stay valid: their texts come first
        tid(text)
    plan = _pair_plan(testbed, systems, row_system, row_segment, tid, max_refs, seed)
    n_sys = len(systems)
    row_cache = _Cache(cache_dir, _fingerprint(hyps, refs, weights, row_system, systems), "segment",
                       [(len(row_system),), (n_sys,)], testbed.trees)
    pair_cache = _Cache(cache_dir, _fingerprint(tid.texts, plan.left, plan.right), "pairs", [(len(plan.left),)],
                        testbed.trees)
    row_results = [row_cache.get(m) for m in instances]
    values = np.empty((len(instances), len(plan.left)), dtype=np.float64)  # filled in place: no stacked copy
    pair_done = []
    for k, m in enumerate(instances):
        hit = pair_cache.get(m)
        if hit is not None:
            values[k] = hit[0]
        pair_done.append(hit is not None)
    todo = [k for k in range(len(instances)) if row_results[k] is None or not pair_done[k]]
    tasks = [MetricTask(instances[k], tid.texts, rows if row_results[k] is None else None, row_system, n_sys,
                        (plan.left, plan.right) if not pair_done[k] else None, chunk) for k in todo]
    def done(i: int, r: dict) -> None:
        k = todo[i]
        if "rows" in r:
            row_results[k] = r["rows"]
            row_cache.put(instances[k], r["rows"])
        if "pairs" in r:
            values[k] = r["pairs"][0]
            pair_cache.put(instances[k], r["pairs"])

    _run(testbed, tasks, jobs, progress, on_result=done)
    table = _with_notes(_table(testbed, metrics, instances, systems, row_system, row_segment, row_results), set_notes)
    return table, _reference_table(plan, metrics, instances, values, max_refs, seed)
