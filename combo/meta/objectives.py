"""What a tuned metric's weights can be trained for: objectives as records, over judged candidates (no text).

An objective is a statistic of per-candidate scores against absolute human
scores (MQM, DA), grouped by language pair in :class:`JudgedBlock` grids, that
:mod:`combo.combine.training` maximises when it searches weights
(``combo train --method direct --objective NAME``). Each is one
:class:`Objective` record in one registry (:func:`register_objective`); the
command line's choices and help, the model file and the docs read the
records. The statistics carry the names of WMT23's tasks
(:mod:`combo.meta.wmt23`; Freitag et al. 2023):

- ``wmt23``: the WMT23 metrics task's average (``tasks.WMT23`` and
  ``AverageCorrs`` of mt-metrics-eval): system pairwise accuracy pooled over
  the language pairs and, per pair, system Pearson, segment Pearson without
  grouping and acc_eq grouped by item;
- ``seg_acc_eq`` (old spelling ``acc_eq``): acc_eq grouped by item with tie
  calibration (Deutsch et al. 2023), the mean over pairs;
- ``seg_pearson``: segment Pearson without grouping, the mean over pairs;
- ``seg_kendall``: segment Kendall tau-b without grouping, the mean over pairs
  (MetaMetrics-MT's criterion, Anugraha et al. 2024).

A combination's system score is the mean of its segment scores, as a tuned
metric scores systems.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError, OptionError
from ..options import name_taken
from .correlation import correlate
from .pairwise import PreferencePairs, acc_eq_weighted, group_weights, pairs_from_scores

#: What :func:`block_statistics` can compute: each system's score, then the WMT23 tasks' statistics.
BLOCK_STATISTICS = ("sys", "sys_pearson", "seg_pearson", "seg_acc_eq", "seg_kendall")


@dataclass
class JudgedBlock:
    """One language pair's candidates as a (systems, segments) grid: human scores (NaN where unrated) and the
    pairs acc_eq compares, made once for every evaluation of a search."""

    rows: np.ndarray  # row index of each (system, segment) cell, -1 where absent
    human: np.ndarray  # (systems, segments) human scores, NaN where unrated
    human_sys: np.ndarray  # (systems,) mean of each system's rated scores
    pairs: PreferencePairs  # candidate pairs of one segment with human scores (acc_eq's)
    system_codes: np.ndarray  # the system each grid row stands for (the codes given to of())
    _weights: Optional[np.ndarray] = None  # acc_eq's per-pair weights when every pair is scored (made once)

    @classmethod
    def of(cls, y: np.ndarray, systems: np.ndarray, segments: np.ndarray) -> "JudgedBlock":
        sys_codes, s = np.unique(systems, return_inverse=True)
        seg_codes, g = np.unique(segments, return_inverse=True)
        rows = np.full((len(sys_codes), len(seg_codes)), -1, dtype=np.int64)
        rows[s, g] = np.arange(len(y))
        human = np.full(rows.shape, np.nan)
        human[s, g] = y
        judged = np.isfinite(human)
        with np.errstate(invalid="ignore", divide="ignore"):
            human_sys = np.where(judged, human, 0.0).sum(axis=1) / judged.sum(axis=1)
        return cls(rows, human, human_sys, pairs_from_scores(human), sys_codes)

    def matrix(self, row_values: np.ndarray) -> np.ndarray:
        """The (systems, segments) grid of per-row values (NaN where a cell has no row)."""
        out = np.full(self.rows.shape, np.nan)
        present = self.rows >= 0
        out[present] = row_values[self.rows[present]]
        return out


def _seg_correlation(metric: np.ndarray, human: np.ndarray, method: str) -> float:
    ok = np.isfinite(metric) & np.isfinite(human)
    res = correlate(metric[ok], human[ok], method)
    return float(res.value) if res.defined else 0.0


def block_statistics(block: JudgedBlock, row_values: np.ndarray, needed: Sequence[str],
                     sys_scores: Optional[np.ndarray] = None) -> Dict[str, float]:
    """The statistics of ``needed`` (:data:`BLOCK_STATISTICS`) for one block: ``sys`` (system scores:
    ``sys_scores`` when given, else the mean of each system's segment scores), ``sys_pearson``, ``seg_pearson``,
    ``seg_acc_eq``, ``seg_kendall``."""
    m = block.matrix(row_values)
    out: Dict[str, float] = {}
    if "sys_pearson" in needed or "sys" in needed:
        if sys_scores is None:
            finite = np.isfinite(m)
            with np.errstate(invalid="ignore", divide="ignore"):
                sys_scores = np.where(finite, m, 0.0).sum(axis=1) / finite.sum(axis=1)
        out["sys"] = sys_scores  # type: ignore[assignment]
        ok = np.isfinite(sys_scores) & np.isfinite(block.human_sys)
        res = correlate(sys_scores[ok], block.human_sys[ok], "pearson")
        out["sys_pearson"] = float(res.value) if res.defined else 0.0
    if "seg_pearson" in needed:
        out["seg_pearson"] = _seg_correlation(m, block.human, "pearson")
    if "seg_kendall" in needed:
        out["seg_kendall"] = _seg_correlation(m, block.human, "kendall_b")
    if "seg_acc_eq" in needed:
        p = block.pairs
        better, worse = m[p.better, p.segment], m[p.worse, p.segment]  # pair_scores, NaN allowed (unscored)
        ok = np.isfinite(better) & np.isfinite(worse)
        if ok.all():  # the weights of the item grouping depend on the pairs only: made once per block
            if block._weights is None:
                block._weights = group_weights(p.segment, len(p.segment))[0]
            weights, tie = block._weights, p.tie
        else:
            better, worse, tie = better[ok], worse[ok], p.tie[ok]
            weights = group_weights(p.segment[ok], len(tie))[0]
        # pairwise_accuracy_with_ties(..., group=segment) without its checks, which cost as much as the statistic
        value = acc_eq_weighted(better, worse, tie, weights, "quicksort")
        out["seg_acc_eq"] = float(value) if np.isfinite(value) else 0.0
    return out


# -- objectives as records -------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Objective:
    """A statistic training can maximise: its name, what it means, the block statistics it reads
    (:data:`BLOCK_STATISTICS`) and ``value(blocks, stats)``, which turns each block's statistics into one number
    (higher is better; every objective is invariant to a positive scale of the scores, so weights are searched in
    [0, 1]). ``aliases``: old names a model file or ``--objective`` may still give."""

    name: str
    meaning: str
    needs: Tuple[str, ...]
    value: Callable[[Sequence["JudgedBlock"], List[Dict[str, float]]], float]
    aliases: Tuple[str, ...] = ()


_OBJECTIVES: Dict[str, Objective] = {}


def register_objective(record: Objective) -> Objective:
    """Add an objective (a name or alias already taken is refused); undone by :func:`unregister_objective`."""
    clash = name_taken(_OBJECTIVES.values(), record.name, record.aliases)
    if clash:
        raise ValueError(f"objective {record.name!r}: the name {clash!r} is taken")
    unknown = sorted(set(record.needs) - set(BLOCK_STATISTICS))
    if unknown:
        raise ValueError(f"objective {record.name!r}: needs one of {list(BLOCK_STATISTICS)}, not {unknown}")
    _OBJECTIVES[record.name] = record
    return record


def unregister_objective(record: Objective) -> None:
    """Remove an objective that :func:`register_objective` added."""
    if _OBJECTIVES.get(record.name) is record:
        del _OBJECTIVES[record.name]


@contextmanager
def registered_objective(record: Objective):
    """An objective registered for the ``with`` block only (tests, a notebook's experiment)."""
    register_objective(record)
    try:
        yield record
    finally:
        unregister_objective(record)


def objective_records() -> Tuple[Objective, ...]:
    """Every registered objective, in registration order."""
    return tuple(_OBJECTIVES.values())


def objective_names() -> Tuple[str, ...]:
    """Every name ``--objective`` accepts: the objectives' names, then their old spellings."""
    return tuple(_OBJECTIVES) + tuple(a for o in _OBJECTIVES.values() for a in o.aliases)


def get_objective(name) -> Objective:
    """The objective called ``name`` or by one of its aliases (a record is returned as it is)."""
    if isinstance(name, Objective):
        return name
    for record in _OBJECTIVES.values():
        if name == record.name or name in record.aliases:
            return record
    raise OptionError(f"unknown objective {name!r}; choose one of {list(_OBJECTIVES)}")


def objective_value(blocks: Sequence[JudgedBlock], row_values: np.ndarray, objective) -> float:
    """The objective (a name or an :class:`Objective`) of per-row scores over the blocks (language pairs)."""
    record = get_objective(objective)
    return record.value(blocks, [block_statistics(b, row_values, record.needs) for b in blocks])


#: The block statistics WMT23's tasks read.
_WMT23_NEEDS = ("sys", "sys_pearson", "seg_pearson", "seg_acc_eq")


def _wmt23_tasks(blocks: Sequence[JudgedBlock], stats: List[Dict[str, float]],
                 no_pair: float) -> List[Tuple[str, float]]:
    """WMT23's task values over the blocks, in ``tasks.WMT23``'s order: system accuracy pooled over them
    (``no_pair`` where no pair of systems is rated), then each block's system Pearson, segment Pearson and acc_eq."""
    from .wmt23 import sys_pairwise_accuracy  # here: the command line reads the records alone

    keep = [np.isfinite(s["sys"]) & np.isfinite(b.human_sys) for b, s in zip(blocks, stats)]
    try:
        accuracy = sys_pairwise_accuracy([s["sys"][k] for s, k in zip(stats, keep)],
                                         [b.human_sys[k] for b, k in zip(blocks, keep)])
    except InputError:
        accuracy = no_pair
    tasks = [("sys_accuracy", accuracy)]
    for s in stats:
        tasks += [("sys_pearson", s["sys_pearson"]), ("seg_pearson", s["seg_pearson"]),
                  ("seg_acc_eq", s["seg_acc_eq"])]
    return tasks


def wmt23_statistics(block: JudgedBlock, row_values: np.ndarray,
                     sys_scores: Optional[np.ndarray] = None) -> Dict[str, float]:
    """One language pair's four WMT23 statistics (system accuracy NaN where no pair of systems is rated) and their
    average (``tasks.WMT23`` for one pair: 1/4 each)."""
    from .wmt23 import wmt23_average

    tasks = _wmt23_tasks([block], [block_statistics(block, row_values, _WMT23_NEEDS, sys_scores)], float("nan"))
    values = dict(tasks)
    out = {name: values[name] for name in ("seg_pearson", "seg_acc_eq", "sys_pearson", "sys_accuracy")}
    out["average"] = wmt23_average(tasks)
    return out


def _wmt23_value(blocks: Sequence[JudgedBlock], stats: List[Dict[str, float]]) -> float:
    """WMT23's average over the blocks, system accuracy pooled (0 where no pair of systems is rated)."""
    from .wmt23 import wmt23_average

    return wmt23_average(_wmt23_tasks(blocks, stats, 0.0))


def mean_of(statistic: str) -> Callable[[Sequence[JudgedBlock], List[Dict[str, float]]], float]:
    """An objective's ``value``: the mean of one block statistic over the blocks."""
    return lambda blocks, stats: float(np.mean([s[statistic] for s in stats]))


for _record in (
    Objective("wmt23", "the WMT23 average of the training pairs (system accuracy pooled; system Pearson, segment "
                       "Pearson and acc_eq per pair)", _WMT23_NEEDS, _wmt23_value),
    Objective("seg_acc_eq", "acc_eq grouped by item with tie calibration, the mean over training pairs",
              ("seg_acc_eq",), mean_of("seg_acc_eq"), aliases=("acc_eq",)),
    Objective("seg_pearson", "segment Pearson without grouping, the mean over training pairs",
              ("seg_pearson",), mean_of("seg_pearson")),
    Objective("seg_kendall", "segment Kendall tau-b without grouping, the mean over training pairs "
                             "(MetaMetrics-MT's)",
              ("seg_kendall",), mean_of("seg_kendall")),
):
    register_objective(_record)
del _record
