"""The WMT23 metrics-task meta-evaluation (Freitag et al. 2023), as mt-metrics-eval computes it.

Pure functions over numpy arrays. Segment-level inputs are ``(systems,
segments)`` matrices with NaN where the human score is missing (MQM ``None``);
system-level inputs are ``(systems,)`` vectors. Each statistic is the one of
mt-metrics-eval (``stats.py``, ``data.py``, ``tasks.py``):

- :func:`seg_correlation`: ``Correlation.Pearson`` / ``Kendall`` (scipy's
  ``pearsonr``, ``kendalltau`` tau-b) through ``AverageCorrelation``:
  cells without a human score dropped, ``average_by`` "none" (one
  correlation of the flattened cells), "item" (per segment, across systems,
  plain mean) or "sys"; groups with fewer than 2 cells and undefined
  (constant) groups left out of the mean, and 0 when no group is defined.
- :func:`seg_acc_eq`: ``KendallWithTiesOpt(variant="acc23")``, pairwise
  accuracy with tie calibration (Deutsch, Foster & Freitag 2023, "Ties
  Matter", acc_eq with the epsilon that maximises it), WMT23 with
  ``average_by="item"`` and ``sample_rate=1.0`` (every pair, no sampling).
  Built on :func:`combo.meta.pairwise.pairwise_accuracy_with_ties`.
- :func:`sys_pairwise_accuracy`: ``CompareMetricsWithGlobalAccuracy``, the
  share of system pairs ordered alike by metric and human (``np.sign`` equal,
  so a pair tied by both counts as agreement; Kocmi et al. 2021), pooled over
  language pairs.
- :func:`sys_pearson`: Pearson r over systems.
- :func:`wmt23_tasks`, :func:`wmt23_average`: the task set of
  ``tasks.WMT23`` and ``TaskSetResults.AverageCorrs`` (correlations mapped to
  [0, 1] by ``(r + 1) / 2``, weighted mean).
- :func:`significance_clusters`, :func:`average_clusters`, :func:`assign_ranks`:
  the permutation tests of ``ComputeSigMatrix`` (``PermutationSigDiff``,
  PERM-BOTH of Deutsch, Dror & Roth 2021, for correlations and system
  accuracy; ``PairwisePermutationSigDiff`` for acc_eq), its early stopping,
  ``AssignRanks`` and ``AverageCorrMatrix``. Each task's test is a
  :class:`SignificanceKernel` (the protocol :func:`_permutation` drives).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import InputError, OptionError
from .correlation import correlate, correlation_values
from .pairwise import TieAccuracyResult, pair_scores, pairs_from_scores, pairwise_accuracy_with_ties

#: Task kinds and the range of their values (for the [0, 1] mapping of the average); the first four are WMT23's.
TASK_RANGES = {"sys_accuracy": (0.0, 1.0), "sys_pearson": (-1.0, 1.0), "seg_pearson": (-1.0, 1.0),
               "seg_acc_eq": (0.0, 1.0), "seg_kendall": (-1.0, 1.0)}
#: Systems mt-metrics-eval treats as outliers, left out with ``use_outliers=False`` (``meta_info.py``).
WMT23_OUTLIERS = {"en-de": frozenset({"synthetic_ref"}), "he-en": frozenset(), "zh-en": frozenset({"synthetic_ref"})}

SeqOrArray = Union[np.ndarray, Sequence[np.ndarray]]


# -- system selection ------------------------------------------------------------

def wmt23_systems(systems: Sequence[str], lp: str, references: Sequence[str]) -> List[str]:
    """Systems mt-metrics-eval's ``GetCorrelations`` scores for a WMT23 task (sorted).

    Drops outputs named after a reference (human translations; WMT23 runs
    en-de with ``human=False``) and the ``meta_info`` outliers of ``lp``.
    Systems without any human score must also be left out by the caller.
    """
    if lp not in WMT23_OUTLIERS:
        raise OptionError(f"no WMT23 meta-information for {lp!r}; choose one of {', '.join(WMT23_OUTLIERS)}")
    drop = set(references) | WMT23_OUTLIERS[lp]
    return sorted(s for s in systems if s not in drop)


# -- statistics -----------------------------------------------------------------

def seg_correlation(metric, human, method: str = "pearson", average_by: str = "none") -> float:
    """Segment-level Pearson or Kendall tau-b as mt-metrics-eval's ``Correlation.Pearson`` / ``Kendall``.

    ``metric``, ``human``: ``(systems, segments)``, NaN in ``human`` where
    unrated. ``average_by``: "none", "item" or "sys". Returns 0 when no
    group's correlation is defined (mt-metrics-eval's ``(0, 0, 0)``).
    """
    _check_matrices(metric, human)
    if method not in ("pearson", "kendall"):
        raise OptionError(f"WMT23 segment correlations are 'pearson' or 'kendall', not {method!r}")
    result = correlate(metric, human, "kendall_b" if method == "kendall" else "pearson", average_by)
    return float(result.value) if result.defined else 0.0


def seg_acc_eq(metric, human, average_by: str = "item", epsilon: Optional[float] = None) -> TieAccuracyResult:
    """acc_eq with tie calibration (``KendallWithTiesOpt``, variant "acc23", ``sample_rate=1.0``).

    Every pair of rated cells of a group (a segment for "item", a system for
    "sys", all cells for "none") is one pair; a pair is right when the metric
    orders it as MQM does, or when MQM ties it and ``|metric difference| <=
    epsilon``. The value is the mean over groups of each group's accuracy;
    ``epsilon=None`` picks the epsilon that maximises it (Deutsch et al.
    2023, Sec. 5; the smallest one on a tie, as ``np.nanargmax``).
    "none" builds every pair of all rated cells (15 million on WMT23 en-de,
    about a gigabyte): use it on slices.
    """
    metric, human = _check_matrices(metric, human)
    if average_by == "item":
        m, h = metric, human
    elif average_by == "sys":
        m, h = metric.T, human.T
    elif average_by == "none":
        m, h = metric.reshape(-1, 1), human.reshape(-1, 1)
    else:
        raise OptionError(f"unknown average_by {average_by!r}; choose 'none', 'item' or 'sys'")
    pairs = pairs_from_scores(h)
    better, worse = pair_scores(m, pairs)
    return pairwise_accuracy_with_ties(better, worse, pairs.tie, epsilon=epsilon, group=pairs.segment)


def seg_acc_eq_per_item(metric, human, epsilon: float) -> np.ndarray:
    """Each segment's acc_eq at a fixed ``epsilon`` (NaN: no pair): their mean is :func:`seg_acc_eq` by item at
    that epsilon, so bootstrapping segments resamples these values (epsilon fixed at its full-data
    calibration, as mt-metrics-eval's permutation test fixes it)."""
    metric, human = _check_matrices(metric, human)
    pairs = pairs_from_scores(human)
    better, worse = pair_scores(metric, pairs)
    d = better - worse
    right = np.where(pairs.tie, np.abs(d) <= epsilon, d > epsilon).astype(np.float64)
    n = np.bincount(pairs.segment, minlength=human.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(pairs.segment, weights=right, minlength=human.shape[1]) / np.where(n, n, np.nan)


def sys_pairwise_accuracy(metric_sys: SeqOrArray, human_sys: SeqOrArray) -> float:
    """System-level pairwise accuracy (Kocmi et al. 2021) as ``CompareMetricsWithGlobalAccuracy``.

    ``metric_sys``, ``human_sys``: one ``(systems,)`` vector, or one per
    language pair (a list); pairs are formed within a language pair and
    pooled. A pair counts as right when ``sign(metric difference) ==
    sign(human difference)``; systems without a human score are skipped.
    """
    right, total = _accuracy_counts(*_check_sys(metric_sys, human_sys))
    if total == 0:
        raise InputError("no pair of systems with human scores")
    return float(right / total)


def sys_pearson(metric_sys, human_sys) -> float:
    """System-level Pearson r (``scipy.stats.pearsonr``), systems without a human score left out; 0 if undefined."""
    metrics, humans = _check_sys(metric_sys, human_sys)
    if len(metrics) != 1:
        raise InputError("system-level Pearson takes one language pair's (systems,) vector")
    metric, human = metrics[0], humans[0]
    result = correlate(metric, human, "pearson")
    return float(result.value) if result.defined else 0.0


# -- the WMT23 task set ---------------------------------------------------------

def wmt23_tasks(metric_seg, human_seg, metric_sys, human_sys) -> List[Tuple[str, float]]:
    """The values of one metric on the WMT23 tasks (``tasks.WMT23``), in its order.

    One language pair: arrays; several: dicts ``{lp: array}`` with the same
    keys (tasks named ``"<lp> seg_pearson"`` etc.). The tasks are system
    pairwise accuracy over all language pairs, then for each language pair
    (sorted) system Pearson, segment Pearson (no grouping) and segment
    acc_eq (grouped by item). Weights: :func:`wmt23_weights`.
    """
    if isinstance(metric_seg, Mapping):
        lps = sorted(metric_seg)
        for d in (human_seg, metric_sys, human_sys):
            if not isinstance(d, Mapping) or sorted(d) != lps:
                raise InputError("give every input as a dict over the same language pairs")
        prefix = {lp: f"{lp} " for lp in lps}
        ms, hs, msy, hsy = metric_seg, human_seg, metric_sys, human_sys
    else:
        lps, prefix = [""], {"": ""}
        ms, hs, msy, hsy = {"": metric_seg}, {"": human_seg}, {"": metric_sys}, {"": human_sys}
    out = [("sys_accuracy", sys_pairwise_accuracy([msy[lp] for lp in lps], [hsy[lp] for lp in lps]))]
    for lp in lps:
        out.append((prefix[lp] + "sys_pearson", sys_pearson(msy[lp], hsy[lp])))
        out.append((prefix[lp] + "seg_pearson", seg_correlation(ms[lp], hs[lp], "pearson", "none")))
        out.append((prefix[lp] + "seg_acc_eq", float(seg_acc_eq(ms[lp], hs[lp], "item"))))
    return out


def wmt23_weights(n_lps: int) -> np.ndarray:
    """Task weights of ``tasks.WMT23``: system accuracy ``n_lps``, every other task 1, normalised.

    With the three MQM language pairs: 0.25 for accuracy, 1/12 for each of the
    nine others; with one language pair (en-de alone) all four weigh 1/4.
    """
    if n_lps < 1:
        raise OptionError(f"need at least one language pair, not {n_lps}")
    w = np.array([n_lps] + [1] * (3 * n_lps), dtype=np.float64)
    return w / w.sum()


def wmt23_average(task_values: Sequence[Tuple[str, float]], weights=None) -> float:
    """``AverageCorrs``: the weighted mean of task values mapped to [0, 1] (``(r + 1) / 2`` for correlations).

    ``task_values``: the list :func:`wmt23_tasks` returns; ``weights``
    default to :func:`wmt23_weights` for its number of language pairs.
    """
    names = [name for name, _ in task_values]
    if weights is None:
        weights = wmt23_weights((len(task_values) - 1) // 3)
    weights = np.asarray(weights, dtype=np.float64)
    if len(weights) != len(task_values):
        raise InputError(f"{len(weights)} weights for {len(task_values)} tasks")
    scaled = [(value - lo) / (hi - lo) for (lo, hi), (_, value) in zip(map(_range_of, names), task_values)]
    return float(np.dot(weights, scaled))


def _range_of(task: str) -> Tuple[float, float]:
    """The value range of a task (named ``"<lp> <kind>"`` or ``"<kind>"``) from :data:`TASK_RANGES`."""
    kind = task.split(" ")[-1]
    if kind not in TASK_RANGES:
        raise OptionError(f"unknown WMT23 task {task!r}; known: {', '.join(TASK_RANGES)}")
    return TASK_RANGES[kind]


# -- significance clusters --------------------------------------------------------

@dataclass(frozen=True)
class PermutationParams:
    """``PermutationSigDiffParams`` with the defaults of ``tasks.Task`` (WMT23): blocks of 100 draws,
    stop early at a block's end when p < 0.02 or p > 0.5."""

    k: int = 1000
    block_size: int = 100
    early_min: float = 0.02
    early_max: float = 0.5


@dataclass(frozen=True)
class TaskRanking:
    """Metrics of one task by decreasing value, their significance clusters and the permutation draws.

    ``p_values[i, j]`` (``j > i``): p-value of "metric j is as good as metric
    i" (the share of permuted differences at least the observed one). ``draws[(i, j)]``:
    the ``(draws, 2)`` permuted values of metrics i and j, for :func:`average_clusters`.
    """

    task: str
    metrics: Tuple[str, ...]
    values: np.ndarray
    ranks: np.ndarray
    p_values: np.ndarray
    draws: Dict[Tuple[int, int], np.ndarray] = field(repr=False)
    value_range: Tuple[float, float] = (-1.0, 1.0)

    def rank_of(self, metric: str) -> int:
        """The cluster rank of ``metric``."""
        return int(self.ranks[self.metrics.index(metric)])

    def __str__(self) -> str:
        """One line per metric: rank, name and value, best first."""
        width = max(len(m) for m in self.metrics)
        return "\n".join(f"{r:>2} {m:<{width}} {v:.4f}" for m, v, r in zip(self.metrics, self.values, self.ranks))


def assign_ranks(p_values: np.ndarray, pval: float = 0.05) -> np.ndarray:
    """``data.AssignRanks``: metrics sorted best first get cluster ranks from the upper-triangular p-values.

    A metric opens a new cluster when some metric from the start of the
    current cluster up to it is significantly better (``p <= pval``).
    """
    p_values = np.asarray(p_values, dtype=np.float64)
    if p_values.ndim != 2 or p_values.shape[0] != p_values.shape[1]:
        raise InputError(f"p-values must be a square matrix, not shape {p_values.shape}")
    ranks = np.zeros(len(p_values), dtype=np.int64)
    rank, start = 1, 0
    for i in range(len(p_values)):
        if np.any(p_values[start:i, i] <= pval):
            rank += 1
            start = i
        ranks[i] = rank
    return ranks


def significance_clusters(task: str, metrics: Mapping[str, object], human, *, k: Optional[int] = None, seed=0,
                          pval: float = 0.05, params: Optional[PermutationParams] = None,
                          by_segment: bool = False) -> TaskRanking:
    """Rank metrics on one WMT23 task and cluster them by pairwise permutation tests (``CompareMetrics``).

    ``task``: "sys_accuracy" (``metrics[name]`` and ``human``: a ``(systems,)``
    vector or a list of them, one per language pair), "sys_pearson" (a
    vector), "seg_pearson" (``(systems, segments)`` matrices, no grouping) or
    "seg_acc_eq" (matrices, grouped by item). Correlations and accuracy use
    PERM-BOTH (``PermutationSigDiff``): both metrics z-scored over the cells
    with a human score, each cell's two scores swapped with probability 1/2;
    acc_eq uses ``PairwisePermutationSigDiff``: each metric keeps its own
    calibrated epsilon and each pair's outcome is swapped. ``seed``: int or
    ``numpy.random.Generator`` (draws differ from mt-metrics-eval's; the rule
    does not). ``k`` (default 1000) overrides ``params.k``; ``k=0`` ranks
    without testing: every p-value is 0, so each metric is its own cluster,
    as in mt-metrics-eval. ``by_segment=True`` (segment-level tasks) swaps
    whole segments instead, all of a segment's cells or pairs together
    (PERM-INPUTS of Deutsch et al. 2021): the resampling unit is then the
    segment the statistic is grouped by, not a cell or pair sharing one.
    """
    params = params or PermutationParams()
    if k is not None:
        params = PermutationParams(k, params.block_size, params.early_min, params.early_max)
    if params.k < 0 or params.block_size < 1:
        raise OptionError(f"need k >= 0 and block_size >= 1, not k={params.k}, block_size={params.block_size}")
    if task not in ("sys_accuracy", "sys_pearson", "seg_pearson", "seg_acc_eq"):
        raise OptionError(f"unknown WMT23 task {task!r}; choose sys_accuracy, sys_pearson, seg_pearson or seg_acc_eq")
    if len(metrics) < 1:
        raise InputError("give at least one metric")
    kernel = _KERNELS[task](human)
    names = list(metrics)
    units = {name: kernel.prepare(metrics[name]) for name in names}
    value = {name: kernel.value(units[name]) for name in names}
    order = sorted(names, key=lambda n: (-value[n], n))
    n = len(order)
    p = np.zeros((n, n))
    draws: Dict[Tuple[int, int], np.ndarray] = {}
    rng = np.random.default_rng(seed)
    if params.k > 0:
        for i in range(n):
            for j in range(i + 1, n):
                p[i, j], draws[(i, j)] = _permutation(kernel, units[order[i]], units[order[j]], params, rng,
                                                      kernel.segment_of if by_segment else None)
    ranks = assign_ranks(p, pval)
    return TaskRanking(task, tuple(order), np.array([value[m] for m in order]), ranks, p, draws,
                       TASK_RANGES[task])


def average_clusters(rankings: Sequence[TaskRanking], weights=None, pval: float = 0.05) -> TaskRanking:
    """``AverageCorrMatrix``: the weighted average over tasks ([0, 1]-mapped) and its significance clusters.

    Reuses each task's permutation draws: for metrics a and b, each task's
    permuted differences (mapped and weighted; a task with fewer draws,
    stopped early, is tiled to the longest) are summed draw by draw, and
    p is the share of sums at least the observed difference of averages.
    Only metrics present in every task are ranked.
    """
    if not rankings:
        raise InputError("give at least one task ranking")
    if weights is None:
        weights = np.full(len(rankings), 1.0 / len(rankings))
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(rankings),):
        raise InputError(f"{weights.size} weights for {len(rankings)} task rankings")
    common = set(rankings[0].metrics).intersection(*(r.metrics for r in rankings[1:]))
    avg = {}
    for m in common:
        avg[m] = sum(w * (r.values[r.metrics.index(m)] - r.value_range[0]) / (r.value_range[1] - r.value_range[0])
                     for r, w in zip(rankings, weights))
    order = sorted(common, key=lambda m: (-avg[m], m))
    n = len(order)
    p = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            per_task = []
            for r, w in zip(rankings, weights):
                d = _task_draws(r, order[i], order[j])
                if len(d) == 0:
                    raise InputError(f"task {r.task!r} was ranked without permutation draws (k=0)")
                lo, hi = r.value_range
                per_task.append(w * (d[:, 0] - d[:, 1]) / (hi - lo))
            longest = max(len(d) for d in per_task)
            null = sum(np.resize(d, longest) for d in per_task)   # np.resize tiles a shorter run
            p[i, j] = np.mean(null >= avg[order[i]] - avg[order[j]])
    ranks = assign_ranks(p, pval)
    return TaskRanking("average", tuple(order), np.array([avg[m] for m in order]), ranks, p, {}, (0.0, 1.0))


def _task_draws(r: TaskRanking, a: str, b: str) -> np.ndarray:
    """The permutation draws of metrics a and b on one task as ``(draws, 2)`` columns (a, b); empty if none."""
    i, j = r.metrics.index(a), r.metrics.index(b)
    if i < j:
        return r.draws.get((i, j), np.zeros((0, 2)))
    d = r.draws.get((j, i), np.zeros((0, 2)))
    return d[:, ::-1]


def _permutation(kernel: "SignificanceKernel", units_a: "KernelUnits", units_b: "KernelUnits",
                 params: PermutationParams, rng,
                 segment_of: Optional[np.ndarray] = None) -> Tuple[float, np.ndarray]:
    """p-value that b is as good as a (a ranked higher), with mt-metrics-eval's block-wise early stopping.

    ``segment_of``: the segment of each swappable score or pair, to swap whole segments.
    """
    delta = kernel.value(units_a) - kernel.value(units_b)
    swap_a, swap_b = kernel.swappable(units_a, units_b)
    draws = []
    count = done = 0
    while done < params.k:
        size = min(params.block_size, params.k - done)
        if segment_of is None:
            flip = rng.random((size,) + swap_a.shape) < 0.5
        else:
            flip = (rng.random((size, int(segment_of.max()) + 1)) < 0.5)[:, segment_of]
        va = kernel.values(np.where(flip, swap_b, swap_a), units_a)
        vb = kernel.values(np.where(flip, swap_a, swap_b), units_b)
        draws.append(np.stack([va, vb], axis=1))
        count += int(np.count_nonzero(va - vb >= delta))
        done += size
        if done % params.block_size == 0:
            p = count / done
            if p < params.early_min or p > params.early_max:
                break
    return count / done, np.concatenate(draws)


class SignificanceKernel(ABC):
    """The protocol of a WMT23 task's permutation test, as :func:`significance_clusters` and :func:`_permutation`
    use it: one kernel per task, built from the human scores.

    A metric's scores are turned once into its ``units`` (:meth:`prepare`), a :class:`KernelUnits` whose
    ``observed`` part gives the metric's value on the task (:meth:`value`) and whose ``swappable`` part is
    what a permutation exchanges between two metrics, one entry per cell or pair (:meth:`swappable`). A batch
    of permuted arrays gives the task values of the draws (:meth:`values`). :attr:`segment_of` maps each
    swappable entry to its segment, for swapping whole segments (PERM-INPUTS), or is None at system level.
    """

    @abstractmethod
    def prepare(self, metric) -> "KernelUnits":
        """The units of one metric's scores (checked against the human scores' shape)."""

    @abstractmethod
    def value(self, units: "KernelUnits") -> float:
        """The metric's value on the task, from its units."""

    @abstractmethod
    def swappable(self, a: "KernelUnits", b: "KernelUnits") -> Tuple[np.ndarray, np.ndarray]:
        """The two arrays of one shape whose entries a permutation swaps between metrics a and b."""

    @abstractmethod
    def values(self, swapped: np.ndarray, units: "KernelUnits") -> np.ndarray:
        """Task values of a batch of permuted arrays ``(draws,) + swappable shape``, one per draw."""

    @property
    @abstractmethod
    def segment_of(self) -> Optional[np.ndarray]:
        """The segment of each swappable entry (to swap whole segments), or None when there are none."""


class KernelUnits(NamedTuple):
    """A metric as a :class:`SignificanceKernel` sees it: ``observed`` gives its task value, ``swappable`` is
    what permutations exchange (the same array when the statistic is computed on what is swapped)."""

    observed: np.ndarray
    swappable: np.ndarray


class _ScoresKernel(SignificanceKernel):
    """PERM-BOTH on z-scored scores for a correlation-like statistic over the rated cells
    (mt-metrics-eval's ``PermutationSigDiff``)."""

    def __init__(self, human, statistic):
        """A kernel over ``human`` whose ``statistic`` maps ``(batch, cells)`` metric scores to ``(batch,)`` values."""
        self.human = human
        self.statistic = statistic        # (batch, cells) metric values -> (batch,)

    @abstractmethod
    def cells(self, metric) -> np.ndarray:
        """The metric's scores of the rated cells (or systems), flattened in a fixed order."""

    def prepare(self, metric) -> KernelUnits:
        """The rated cells' raw scores (observed) and their z-scores over those cells (swappable)."""
        cells = self.cells(metric)
        sd = cells.std()
        z = (cells - cells.mean()) / sd if sd > 0 else cells - cells.mean()
        return KernelUnits(cells, z)

    def value(self, units: KernelUnits) -> float:
        """The statistic of the raw scores."""
        return float(self.statistic(units.observed[None])[0])

    def swappable(self, a: KernelUnits, b: KernelUnits) -> Tuple[np.ndarray, np.ndarray]:
        """The two metrics' z-scores: PERM-BOTH swaps standardised scores."""
        return a.swappable, b.swappable

    def values(self, swapped: np.ndarray, units: KernelUnits) -> np.ndarray:
        """The statistic of each draw's scores, 0 where it is undefined."""
        out = self.statistic(swapped)
        return np.where(np.isfinite(out), out, 0.0)


class _PearsonKernel(_ScoresKernel):
    """Pearson r over the rated entries of the human scores (NaN: unrated), ``Correlation.Pearson`` unaveraged."""

    task = ""               # the task's name, for errors
    shape = ""              # the human scores' shape, as errors name it
    ndim = 0                # and its number of axes

    def __init__(self, human):
        """The kernel of the rated entries of ``human``, an array of :attr:`shape`."""
        human = np.asarray(human, dtype=np.float64)
        if human.ndim != self.ndim:
            raise InputError(f"{self.task} needs {self.shape} human scores, not shape {human.shape}")
        self.rated = ~np.isnan(human)
        h = human[self.rated]
        super().__init__(human, lambda m: correlation_values(m[:, None, :], h[None, None, :]))


class _SegPearson(_PearsonKernel):
    """Segment-level Pearson over all rated cells (``Correlation.Pearson``, no grouping)."""

    task, shape, ndim = "seg_pearson", "(systems, segments)", 2

    def __init__(self, human):
        """The kernel of the rated cells of ``human``, a ``(systems, segments)`` matrix (NaN: unrated)."""
        super().__init__(human)
        self._segment_of = np.nonzero(self.rated)[1]          # the segment of each rated cell, in cell order

    @property
    def segment_of(self) -> np.ndarray:
        """The segment of each rated cell, in cell order."""
        return self._segment_of

    def cells(self, metric) -> np.ndarray:
        """The metric's scores of the rated cells, row by row."""
        metric = np.asarray(metric, dtype=np.float64)
        _check_matrices(metric, self.human)
        return metric[self.rated]


class _SysPearson(_PearsonKernel):
    """System-level Pearson over the systems with a human score."""

    task, shape, ndim = "sys_pearson", "(systems,)", 1

    @property
    def segment_of(self) -> None:
        """None: at system level the unit is a system."""
        return None

    def cells(self, metric) -> np.ndarray:
        """The metric's scores of the systems with a human score."""
        (metric,), _ = _check_sys(metric, self.human)
        return metric[self.rated]


class _SysAccuracy(_ScoresKernel):
    """System-level pairwise accuracy pooled over language pairs (``CompareMetricsWithGlobalAccuracy``)."""

    def __init__(self, human):
        """The kernel of ``human``: a ``(systems,)`` vector or a list of them, one per language pair."""
        humans = [np.asarray(h, dtype=np.float64) for h in _as_list(human)]
        self.humans = humans

        def statistic(m):
            """Pooled accuracy of each row of ``m``, the language pairs' systems laid end to end."""
            right = total = 0
            start = 0
            for h in humans:
                part = m[:, start:start + len(h)]
                start += len(h)
                r, t = _accuracy_counts([part], [h])
                right, total = right + r, total + t
            return right / total
        super().__init__(human, statistic)

    @property
    def segment_of(self) -> None:
        """None: at system level the unit is a system."""
        return None

    def cells(self, metric) -> np.ndarray:
        """The metric's system scores, language pairs laid end to end."""
        metrics, _ = _check_sys(metric, self.humans)
        return np.concatenate(metrics)


class _SegAccEq(SignificanceKernel):
    """``PairwisePermutationSigDiff``: each pair's outcome (right or not at the metric's own epsilon) swapped."""

    def __init__(self, human):
        """The kernel of every pair of rated cells within a segment of ``human`` (``(systems, segments)``)."""
        human = np.asarray(human, dtype=np.float64)
        if human.ndim != 2:
            raise InputError(f"seg_acc_eq needs (systems, segments) human scores, not shape {human.shape}")
        self.human = human
        self.pairs = pairs_from_scores(human)
        _, inverse, size = np.unique(self.pairs.segment, return_inverse=True, return_counts=True)
        self.weight = 1.0 / (len(size) * size[inverse])       # group-mean accuracy = sum(weight * right)

    @property
    def segment_of(self) -> np.ndarray:
        """The segment of each pair."""
        return self.pairs.segment

    def prepare(self, metric) -> KernelUnits:
        """Each pair's outcome (1.0 right, 0.0 wrong) at the metric's own calibrated epsilon, observed and
        swapped alike."""
        metric, _ = _check_matrices(metric, self.human)
        better, worse = pair_scores(metric, self.pairs)
        eps = seg_acc_eq(metric, self.human, "item").epsilon
        diff = better - worse
        tied = np.abs(diff) <= eps
        right = np.where(tied, self.pairs.tie, ~self.pairs.tie & (diff > 0)).astype(np.float64)
        return KernelUnits(right, right)

    def value(self, units: KernelUnits) -> float:
        """acc_eq by item: the segment-weighted share of right pairs."""
        return float(np.dot(self.weight, units.observed))

    def swappable(self, a: KernelUnits, b: KernelUnits) -> Tuple[np.ndarray, np.ndarray]:
        """The two metrics' pair outcomes."""
        return a.swappable, b.swappable

    def values(self, swapped: np.ndarray, units: KernelUnits) -> np.ndarray:
        """acc_eq by item of each draw's outcomes."""
        return swapped @ self.weight


#: The significance kernel of each WMT23 task.
_KERNELS: Dict[str, Callable[[object], SignificanceKernel]] = {
    "seg_pearson": _SegPearson, "sys_pearson": _SysPearson, "sys_accuracy": _SysAccuracy, "seg_acc_eq": _SegAccEq}


# -- internals ----------------------------------------------------------------

def _check_matrices(metric, human):
    """Both segment-level inputs as float ``(systems, segments)`` matrices of one shape, every rated cell scored."""
    metric = np.asarray(metric, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    if human.ndim != 2 or metric.shape != human.shape:
        raise InputError(f"segment-level scores must be two (systems, segments) matrices of one shape, "
                         f"got metric {metric.shape} and human {human.shape}")
    missing = int(np.count_nonzero(~np.isnan(human) & ~np.isfinite(metric)))
    if missing:
        raise InputError(f"{missing} rated cells have no finite metric score",
                         fix="score every candidate that has a human score")
    return metric, human


def _as_list(x) -> List[np.ndarray]:
    """A ``(systems,)`` vector or a list of them (one per language pair) as a list of float arrays."""
    if isinstance(x, (list, tuple)) and len(x) and np.ndim(x[0]) == 1:
        return [np.asarray(v, dtype=np.float64) for v in x]
    return [np.asarray(x, dtype=np.float64)]


def _check_sys(metric_sys, human_sys):
    """The system-level inputs as lists of matching ``(systems,)`` vectors, every rated system scored."""
    metrics, humans = _as_list(metric_sys), _as_list(human_sys)
    if len(metrics) != len(humans):
        raise InputError(f"{len(metrics)} metric vectors for {len(humans)} human vectors (one per language pair)")
    for m, h in zip(metrics, humans):
        if m.ndim != 1 or m.shape != h.shape:
            raise InputError(f"system-level scores must be (systems,) vectors of one length, "
                             f"got metric {m.shape} and human {h.shape}")
        if np.count_nonzero(~np.isnan(h) & ~np.isfinite(m)):
            raise InputError("a system with a human score has no finite metric score")
    return metrics, humans


def _accuracy_counts(metrics, humans) -> Tuple[np.ndarray, int]:
    """Agreeing and total system pairs (``stats.Agreement``), pooled; metrics may carry a batch axis."""
    right, total = 0, 0
    for m, h in zip(metrics, humans):
        keep = ~np.isnan(h)
        m, h = m[..., keep], h[keep]
        a, b = np.triu_indices(len(h), 1)
        agree = np.sign(m[..., a] - m[..., b]) == np.sign(h[a] - h[b])
        right = right + agree.sum(-1)
        total += len(a)
    return right, total
