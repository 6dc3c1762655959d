"""How a run cuts its work: which metrics are scored in chunks of rows and how many rows a chunk holds, the
costly analysis layers annotated once before the tasks, the supplied trees each task carries."""

from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from ..metrics.base import Metric, Rows
from ..testbed import SuppliedTrees, Testbed
from .provenance import _supplied_kind


def _chunkable(metric: Metric) -> bool:
    """Whether chunks of rows score as one call: a row's statistics read its own texts alone
    (locality ``"row"``), or those and the n-gram weights :meth:`~Metric.bound_to` takes from every
    row's references (locality ``"references"``)."""
    return metric.locality in ("row", "references")


def _chars_per_row(rows: Rows) -> float:
    """Mean characters of a row's hypothesis and references (what a chunk's analysis grows with)."""
    if not len(rows.hyp_ids):
        return 0.0
    lengths = np.fromiter(map(len, rows.texts), dtype=np.int64, count=len(rows.texts))
    return float(lengths[rows.hyp_ids].sum() + lengths[rows.ref_ids].sum()) / len(rows.hyp_ids)


def _row_step(metric: Metric, n_rows: int, chars_per_row: float, budget, workers: int,
              n_tasks: int) -> Optional[int]:
    """Rows per :class:`RowChunk` task of ``metric``, or None to score it in one task.

    A metric of locality ``"row"`` or ``"references"`` is cut into chunks when one analysis of all
    its texts would not fit its share of the budget (a quarter, divided among
    the ``workers`` that hold a chunk each), sized by the characters of the
    rows' texts and the metric's ``analysis_bytes_per_char``; and, with
    several workers and fewer than two tasks per worker, a ``"row"``
    one into enough chunks to keep every worker busy (not a ``"references"`` one:
    its chunks would first need a pass over the references and analyse them
    again each, which on WMT12 de-en cost more than the split saved).
    """
    if not _chunkable(metric) or n_rows == 0:
        return None
    row_bytes = max(chars_per_row, 1.0) * metric.analysis_bytes_per_char
    step = max(1024, int(budget.bytes // 4 // max(workers, 1) // row_bytes))
    if workers > 1 and n_tasks < 2 * workers and metric.locality == "row":
        step = min(step, max(1024, -(-n_rows * n_tasks // (2 * workers))))
    return step if step < n_rows else None


#: Analysis layers costly enough to annotate once, in parallel, before the metrics that read them are scored
#: with ``jobs > 1``: otherwise each worker process annotates the same texts (41% more CPU for the same scores
#: on WMT12 cs-en with the heterogeneous set), while the parse itself ran in one process at a time per metric;
#: and the sentence encoder, which costs more than the rest of the heterogeneous set together, kept one core
#: busy for minutes after the other metrics had finished. In this order: while the workers of one layer run,
#: the next layer's annotator loads in the parent process (spaCy's import brings PyTorch, which the encoder's
#: workers then inherit instead of each importing it).
PARALLEL_LAYERS = ("dependencies", "dependencies+lemmas", "shallow", "sentence-embeddings", "discourse")


def _costly_layers(metric: Metric) -> List[str]:
    """The :data:`PARALLEL_LAYERS` ``metric`` reads from the annotator (none when it reads supplied trees alone;
    the discourse kernels parse the texts without a supplied tree, unless ``trees=supplied``)."""
    if _supplied_kind(metric) not in (None, "discourse"):
        return []
    return [name for name in metric.layers if name in PARALLEL_LAYERS]


def _trees_for(testbed: Testbed, metric: Metric) -> SuppliedTrees:
    """The supplied trees a task of ``metric`` needs: the test bed's when the metric reads them, else none."""
    return testbed.trees if _supplied_kind(metric) is not None else SuppliedTrees()


def _affinity(metric: Metric) -> Optional[Tuple[str, ...]]:
    """What a task of ``metric`` over all the rows shares with other metrics' tasks in one worker process: the
    costly layers it reads (their decoded analyses and the trees derived from them: the three constituent tree
    kernels read one chunk tree per text) or else the resources it loads (GloVe's table, read by three
    metrics); None when neither. A parallel run gives tasks of one affinity to one worker one after another,
    which keeps their analyses between them (:func:`combo.scoring.tasks._call_with_trees`)."""
    layers = tuple(_costly_layers(metric))
    if layers:
        return ("layers",) + layers
    return ("resources",) + tuple(metric.resources) if metric.resources else None
