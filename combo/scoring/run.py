"""Scoring a test bed (:func:`score_testbed`) and the run that executes its tasks (:func:`_run`).

Each metric sees every candidate of every system at once: the distinct texts
(candidates and references) are analysed once, the statistics of all rows
come from one call, segment scores are the metric's sentence-level scores and
system scores are the scores of each system's summed statistics (corpus
level). Metrics are independent, so ``jobs > 1`` runs them in parallel.
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..analysis.layers import analysis_memo, cache_dir
from ..analysis.supplied import using_trees
from ..metrics.base import Candidates, Metric, Rows, group_slice
from ..parallel import Execution
from ..testbed import Testbed
from .cache import _Cache, _fingerprint
from .plan import PARALLEL_LAYERS, _chars_per_row, _chunkable, _costly_layers, _row_step, _trees_for
from .resolve import MetricLike, _expand_sets, check_references, metrics_for
from .table import ScoreTable, _table, _with_notes
from .tasks import (ChunkTask, CountTask, MetricTask, RowChunk, Task, _call, _call_with_trees, _CountMerge,
                    _RowAssembly, _task_affinity)


def score_testbed(testbed: Testbed, metrics: Sequence[MetricLike], systems: Optional[Sequence[str]] = None,
                  jobs: int = 1, progress: bool = False, cache_dir=None, memory=None) -> ScoreTable:
    """Score every candidate of ``testbed`` with each metric (names like ``"bleu:max_order=2"``, named sets like
    ``"@lexical"`` (combo.metrics.sets; notes on left-out members in ``table.metadata["notes"]``) or instances).

    With ``cache_dir``, each metric's scores are stored under a key made of the
    test bed's texts and the metric's signature, and reused on the next run.
    ``memory`` (a size such as ``"2G"``, default 2 GB) bounds the rows whose
    statistics are held at once. ``jobs`` may be a run's :class:`~combo.parallel.Execution`, resolved at its
    edge, which brings its budget and progress with it.
    """
    from ..parallel import resolve_execution

    run = resolve_execution(jobs, memory, progress)  # once: every step below hands it on
    chunk = run.budget.pair_chunk()
    metrics, set_notes = _expand_sets(metrics)
    instances = metrics_for(testbed, metrics)
    if not all(m.locality == "candidate" for m in instances):
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
    computed = _Cache(cache_dir, _fingerprint([s.source for s in testbed.segments], hyps, refs, row_system, row_segment,
                                              systems) if cache_dir is not None and any(
        m.locality == "candidate" and m.computed for m in instances) else "",
        "candidate", [(len(row_system),), (n_sys,)], testbed.trees)  # neural metrics: sources are inputs too
    del hyps, refs, weights
    with using_trees(testbed.trees):  # a tuned metric read per candidate scores its text components here
        results, signatures = _read_per_candidate(
            instances, Candidates(testbed, systems, row_system, row_segment, rows, run.progress), computed)
    for k, m in enumerate(instances):
        if k not in results:
            results[k] = cache.get(m)
    todo = [k for k in range(len(instances)) if results[k] is None]
    workers = run.workers
    chars_per_row = _chars_per_row(rows) if any(_chunkable(instances[k]) for k in todo) else 0.0
    tasks: List[Task] = []
    owners: List[int] = []
    assemblies: Dict[int, _RowAssembly] = {}
    for k in todo:
        step = _row_step(instances[k], len(row_system), chars_per_row, run.budget, workers, len(todo))
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

    layer_notes = _run(testbed, tasks, run, on_result=done, rows=rows)
    return _with_notes(_table(testbed, metrics, instances, systems, row_system, row_segment,
                              [results[k] for k in range(len(instances))], signatures), set_notes + layer_notes)


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


def _read_per_candidate(instances: Sequence[Metric], cands: Candidates, cache: _Cache):
    """Scores of the metrics of locality ``"candidate"``: those read from files (``mtme:``, ``scores:``, tuned
    models using them) are cheap and never cached; those computed from sources, texts and references by a
    checkpoint (``computed``: COMET, MetricX) are cached in ``cache``, keyed by the checkpoint's digest (their
    signature) and every source, candidate and reference.

    Returns ``({index: (segment scores, system scores)}, {index: signature with the files read})``.
    """
    results, signatures = {}, {}
    for k, m in enumerate(instances):
        if m.locality != "candidate":
            continue
        stored = cache.get(m) if m.computed else None
        if stored is not None:
            results[k], signatures[k] = tuple(stored), m.signature
            continue
        seg, sysv, signatures[k] = m.candidate_scores(cands)
        results[k] = (seg, sysv)
        if m.computed:
            cache.put(m, (seg, sysv))
    return results, signatures


def _run(testbed: Testbed, tasks: List[Task], run: Execution, desc: str = "metrics",
         on_result=None, rows: Optional[Rows] = None) -> List[str]:
    """Run ``tasks`` (:class:`MetricTask`, :class:`ChunkTask`) with ``testbed``'s supplied
    trees, in parallel processes when ``jobs != 1`` (see :mod:`combo.parallel`); ``on_result(i, result)`` runs as
    soon as task ``i`` is done (callers cache each metric then) and is the only place results go. The trees
    travel with each task: a worker process or a Dask worker sees this test bed's, nothing else. With several
    workers, the costly layers the tasks' metrics share are annotated first (:func:`_prepare_shared_layers`),
    the tasks that read none of them running meanwhile (while this process loads the first annotator);
    then the chunks of a metric of locality ``"references"`` get its n-gram weights from all of ``rows``
    (:func:`_bound_to_references`). Returns the notes of the costly layers on the analyses the run used
    (:func:`_layer_notes`)."""
    from ..analysis.layers import get_layer
    from ..parallel import run_tasks

    chunks = [isinstance(t, ChunkTask) for t in tasks]
    sent = [chunk and _sendable(t.metric) for t, chunk in zip(tasks, chunks)]
    trees = [_trees_for(testbed, t.metric) if chunk else testbed.trees for t, chunk in zip(tasks, chunks)]

    def run_some(indices: List[int], while_running=None) -> None:
        run_tasks(_call_with_trees, [_call(trees[i], tasks[i]) for i in indices], run.jobs, run.progress, desc,
                  on_result=None if on_result is None else lambda j, r: on_result(indices[j], r),
                  weights=[tasks[i].weight for i in indices], sent=[sent[i] for i in indices], keep=False,
                  groups=[_group(tasks[i]) for i in indices],
                  while_running=while_running)

    with analysis_memo():  # the run's analyses, shared by its metrics (worker processes get a copy) and then dropped
        read = _texts_by_layer(tasks, testbed.trees)  # what each costly layer reads: prepared, then noted
        layers = _layers_to_prepare(read, run)
        first = [i for i, (t, chunk) in enumerate(zip(tasks, chunks))
                 if layers and not _costly_layers(t.metric) and not (chunk and t.metric.locality == "references")]
        if first:
            run_some(first, while_running=get_layer(layers[0][0]).load)
        _prepare_shared_layers(layers, run)
        if any(chunk and t.metric.locality == "references" for t, chunk in zip(tasks, chunks)):
            tasks = _bound_to_references(testbed, tasks, rows, run)
        done = set(first)
        run_some([i for i in range(len(tasks)) if i not in done])
        return _layer_notes(read)


def _layer_notes(read: Sequence[Tuple[str, List[str]]]) -> List[str]:
    """The notes of each costly layer on the analyses of the texts it ``read`` (:func:`_texts_by_layer`: the
    discourse parser's fallbacks), from what is stored."""
    from ..analysis.layers import stored_notes

    return [note for name, texts in read for note in stored_notes(name, texts)]


def _group(task: Task):
    """The group of ``task`` for the local pool (``groups`` of :func:`~combo.parallel.run_tasks`), whose tasks
    one worker takes one after another: a metric's chunks, which share its per-process set-up (WordNet for
    METEOR); the tasks over all rows of metrics with one affinity (:func:`~combo.scoring.plan._affinity`),
    which share their analyses (:func:`~combo.scoring.tasks._kept_memo`)."""
    affinity = _task_affinity(task)
    return affinity if affinity is not None else id(task.metric)


def _sendable(metric: Metric) -> bool:
    """Whether a task of ``metric`` over a slice of texts (a chunk of rows, a slice of reference counts) is sent
    to its worker, which never touches the parent's texts: unless it must read the stored parses this process
    keeps when there is no disk cache."""
    return cache_dir() is not None or not _costly_layers(metric)


#: Fewer distinct reference texts than this for the n-gram counts of a run's references: counted in this process,
#: not worth starting worker processes for (100,000 references take 7.7 s for NIST, 6.5 s for CIDEr).
PARALLEL_COUNT_MIN_TEXTS = 20000


def _bound_to_references(testbed: Testbed, tasks: List[Task], rows: Rows, run: Execution) -> List[Task]:
    """``tasks`` with each chunk of a metric of locality ``"references"`` scored by one copy of the metric bound to its
    counts over every reference of ``rows`` (:meth:`~Metric.with_counts`), so its chunks score as one call.

    The counts are made a slice of reference groups at a time (as many groups as the metric's chunks have
    rows, so a slice's texts are no more than a chunk's), in worker processes when there are many
    references (:data:`PARALLEL_COUNT_MIN_TEXTS`), and merged by n-gram content as they come.
    """
    from ..parallel import run_tasks

    steps: Dict[int, int] = {}
    metrics: Dict[int, Metric] = {}
    for task in tasks:
        if isinstance(task, ChunkTask) and task.metric.locality == "references":
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
              run.jobs if texts >= PARALLEL_COUNT_MIN_TEXTS else 1, run.progress,
              "reference counts", on_result=lambda i, counts: merges[owners[i]].add(counts), keep=False,
              weights=[float(len(s.texts)) for s in slices],
              sent=[_sendable(s.metric) for s in slices])
    del slices
    bound = {key: metric.with_counts(merges[key].result()) for key, metric in metrics.items()}
    return [ChunkTask(bound[id(t.metric)], t.chunk) if isinstance(t, ChunkTask) and id(t.metric) in bound else t
            for t in tasks]


#: Fewer texts to annotate than this: not worth starting worker processes for.
PARALLEL_ANNOTATION_MIN_TEXTS = 2000


def _layers_to_prepare(read: Sequence[Tuple[str, List[str]]], run: Execution) -> List[Tuple[str, List[str]]]:
    """Of the costly layers and the texts they ``read`` (:func:`_texts_by_layer`), each with the texts it has not
    analysed yet (in neither the run's memo nor the disk cache); none with one worker, except a layer annotated
    a piece at a time (:attr:`~combo.analysis.layers.Layer.piece`: the discourse parser), whose progress shows
    task by task."""
    from ..analysis.layers import get_layer, unprepared

    alone = run.workers < 2
    todo = [(name, unprepared(name, texts)) for name, texts in read
            if texts and not (alone and get_layer(name).piece is None)]  # every text supplied: no annotator asked
    return [(name, texts) for name, texts in todo if texts]


def _texts_by_layer(tasks: Sequence[Task], supplied) -> List[Tuple[str, List[str]]]:
    """Each costly layer (:data:`PARALLEL_LAYERS`, in that order) that ``tasks``' metrics read, with the distinct
    texts it reads: those with a ``supplied`` tree of the layer's kind left out."""
    texts_of: Dict[str, Dict[str, None]] = {}
    for task in tasks:
        for name in _costly_layers(task.metric):
            texts_of.setdefault(name, {}).update(dict.fromkeys(task.texts))
    given = supplied.tables if supplied is not None else {}
    return [(name, [t for t in texts_of[name] if t not in given.get(name, {})])
            for name in sorted(texts_of, key=PARALLEL_LAYERS.index)]


def _prepare_shared_layers(layers: Sequence[Tuple[str, List[str]]], run: Execution) -> None:
    """Annotate the texts of each of ``layers`` (:func:`_layers_to_prepare`) before the tasks that read them
    start, split among worker processes, and store the results (the disk cache, or without one this run's
    memo, which forked workers inherit) without decoding them here: each task decodes only its own texts.
    The analyses are the annotator's, so the scores are the same as annotating in each task.

    This process loads each annotator before the workers that run it are forked, so they share it: each
    later one's while the workers of the layer before it run (``while_running`` of
    :func:`~combo.parallel.run_tasks`), so that loading a model costs little wall time of its own."""
    from ..analysis.layers import prepare

    for k, (name, texts) in enumerate(layers):
        following = [later for later, _ in layers[k + 1:]]
        then = functools.partial(_load_layers, following) if following else None
        prepare(name, texts, annotator=lambda layer, missing, store, then=then:
                _annotate_in_parallel(layer, missing, run, store, then))


def _load_layers(names: Sequence[str]) -> None:
    """Load the annotators of layers ``names`` here (:meth:`~combo.analysis.layers.Layer.load`)."""
    from ..analysis.layers import get_layer

    for name in names:
        get_layer(name).load()


def _annotate_in_parallel(layer_name: str, texts: List[str], run: Execution,
                          store: Callable[[int, List[str]], None],
                          while_running: Optional[Callable[[], None]] = None) -> None:
    """Annotate ``texts`` (in the order :func:`~combo.analysis.layers.ordered` gives) by one layer, in chunks
    spread over forked worker processes, handing each chunk's stored forms to ``store(start, values)`` as it
    is done (nothing is held here); ``while_running()`` is done here meanwhile. The annotator (spaCy's model,
    TextBlob, the sentence encoder) is loaded here first (:meth:`~combo.analysis.layers.Layer.load`), so the
    workers inherit it instead of each loading its own; each worker runs the encoder on one thread
    (:func:`combo.parallel._init_worker`). Where the encoder has already run in this process (an
    earlier call in a notebook: :meth:`~combo.analysis.layers.Layer.threads_started`), this process encodes the
    texts itself with its threads: a worker forked from it could wait forever on its OpenMP thread pool."""
    from ..analysis.layers import annotate_texts, get_layer
    from ..parallel import run_tasks

    workers = run.workers
    layer = get_layer(layer_name)
    if layer.piece is None and len(texts) < PARALLEL_ANNOTATION_MIN_TEXTS or layer.threads_started():
        if while_running is not None:
            while_running()
        store(0, annotate_texts(layer_name, texts))  # few texts, or the encoder's threads already started here
        return
    layer.load()
    step = layer.piece or -(-len(texts) // (4 * workers))
    step = -(-step // layer.group) * layer.group  # pieces start at multiples of the layer's group
    starts = list(range(0, len(texts), step))
    chunks = [(layer_name, texts[start:start + step]) for start in starts]
    run_tasks(annotate_texts, chunks, run.jobs, run.progress, f"{layer_name} analysis", keep=False,
              weights=[sum(map(len, chunk)) for _, chunk in chunks],  # longest texts first
              on_result=lambda i, values: store(starts[i], values), while_running=while_running)
