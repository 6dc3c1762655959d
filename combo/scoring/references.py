"""Reference scores for QUEEN and KING: every candidate against each single reference and every reference
against the others (:class:`ReferenceScores`), alone or with the score table from one analysis per metric."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from ..metrics.base import Rows, TextIndex
from ..testbed import Testbed
from .cache import _Cache, _fingerprint
from .resolve import MetricLike, _display_name, _expand_sets, check_references, metrics_for
from .run import _rows_of, _run
from .table import ScoreTable, _table, _with_notes
from .tasks import MetricTask


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
    from ..parallel import resolve_execution

    run = resolve_execution(jobs, memory, progress)
    chunk = run.budget.pair_chunk()
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
                   for k in todo], run, "reference pairs", on_result=done)
    return _reference_table(plan, metrics, instances, values, max_refs, seed)


def score_with_references(testbed: Testbed, metrics: Sequence[MetricLike], max_refs: Optional[int] = None,
                          seed: int = 0, jobs: int = 1, progress: bool = False, cache_dir=None, memory=None):
    """:func:`score_testbed` and :func:`reference_scores` together, from ONE analysis of the texts per metric.

    ``memory`` bounds the pairs (and rows) a metric scores at once; the pair
    scores of all metrics are one preallocated array, 8 bytes per metric and pair.
    """
    from ..parallel import resolve_execution

    run = resolve_execution(jobs, memory, progress)
    chunk = run.budget.pair_chunk()
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

    layer_notes = _run(testbed, tasks, run, on_result=done)
    table = _with_notes(_table(testbed, metrics, instances, systems, row_system, row_segment, row_results),
                        set_notes + layer_notes)
    return table, _reference_table(plan, metrics, instances, values, max_refs, seed)
