"""Training data: human judgments joined with metric scores, as pairs, targets and normalised features.

* **Training pairs** (:func:`pairs_from_testbed`). Relative rankings give one
  pair per non-tie human preference, each judge's preference kept (human ties
  are left out and counted). Absolute scores give a pair for every two
  candidates of a segment whose mean scores differ by more than ``min_diff``
  (WMT DARR: 25 on a 0-100 scale; Bojar et al. 2017, Ma et al. 2018). Pairs
  carry their segment, so grouped splits keep a segment whole.
* **Targets** (:func:`targets_from_testbed`): each candidate's absolute human
  score, or its share of wins.
* **Features**: metric segment scores min-max normalised per test bed (a WMT12
  test bed is one language pair, as DiscoTK), per segment group, or over all
  rows; lower-is-better metrics flipped (:func:`~combo.combine.ulc.fit_minmax`).

This is the one module of training that reads test beds and score tables; the
estimators and the fitting work on the arrays it makes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import InputError, OptionError
from ...meta.objectives import JudgedBlock
from ...metrics.external import without_inputs
from ...metrics.tuned import JUDGMENTS, NORMALISE
from ...scoring import ScoreTable
from ...testbed import Testbed
from ..ulc import minmax_normalise

DARR_FRACTION = 0.25  # default min_diff of unnamed scales: 25 % of the observed range (25 on a fully used 0-100 scale)
DARR_POINTS = 25.0  # WMT DARR's threshold for 0-100 direct assessment (Bojar et al. 2017; Ma et al. 2018)
#: Aspects (human-score names) whose every score difference is a preference: MQM error points and ESA.
EXACT_ASPECTS = ("mqm", "esa")


def default_min_diff(aspect: Optional[str], human: np.ndarray) -> Tuple[float, str]:
    """The default pair threshold for absolute scores of ``aspect``, and why.

    MQM and ESA (an aspect named ``mqm...`` or ``esa...``): 0, every two
    different scores make a pair (human ties are ties). Direct assessment on
    0-100 (``da...``): WMT DARR's 25 points. Any other scale: 25% of the
    observed range of ``human``.
    """
    name = (aspect or "").lower()
    if name.startswith(EXACT_ASPECTS):
        return 0.0, f"{aspect}: every score difference"
    lo, hi = float(np.nanmin(human)), float(np.nanmax(human))
    if name.startswith("da") and 0.0 <= lo and hi <= 100.0:
        return DARR_POINTS, f"{aspect}: WMT DARR's 25 points"
    return DARR_FRACTION * (hi - lo), f"{aspect}: 25% of the observed range {lo:g} to {hi:g}"


# -- training pairs and targets -------------------------------------------------------------------

@dataclass
class TrainingPairs:
    """Human preferences "row ``better`` over row ``worse``" on one segment, with what was left out."""

    better: np.ndarray
    worse: np.ndarray
    segment: np.ndarray
    kind: str  # "rankings" or "scores"
    min_diff: Optional[float] = None
    min_diff_rule: str = ""  # why this threshold (default_min_diff), or "given"
    ties_dropped: int = 0  # human ties (rankings), left out
    below_threshold: int = 0  # candidate pairs whose scores differ by min_diff or less (scores)
    unscored: int = 0  # preferences naming a candidate missing from the score table or lacking a metric score
    few_candidates: int = 0  # judged segments with fewer than 2 judged candidates: no pairs

    def __len__(self) -> int:
        return len(self.better)

    def as_array(self) -> np.ndarray:
        """Shape (pairs, 2): better row, worse row."""
        return np.column_stack([self.better, self.worse]).astype(np.int64)

    def subset(self, keep: np.ndarray) -> "TrainingPairs":
        return TrainingPairs(self.better[keep], self.worse[keep], self.segment[keep], self.kind, self.min_diff,
                             self.min_diff_rule, self.ties_dropped, self.below_threshold, self.unscored,
                             self.few_candidates)

    def describe(self) -> Dict[str, Any]:
        return {"judgments": self.kind, "pairs": len(self), "segments": int(len(np.unique(self.segment))),
                "min_diff": self.min_diff, "min_diff_rule": self.min_diff_rule, "ties_dropped": self.ties_dropped,
                "below_threshold": self.below_threshold, "unscored": self.unscored,
                "few_candidates": self.few_candidates}


def _judgment_kind(testbed: Testbed, judgments: str) -> str:
    if judgments not in JUDGMENTS:
        raise OptionError(f"unknown judgments {judgments!r}; choose one of {list(JUDGMENTS)}")
    has_rr, has_da = bool(testbed.preferences), bool(testbed.scores)
    if not has_rr and not has_da:
        raise InputError(f"test bed {testbed.name!r} has no human judgments (relative rankings or absolute "
                         "scores) to train on", fix="train on a test bed with rankings or scores")
    if judgments == "auto":
        return "rankings" if has_rr else "scores"
    if judgments == "rankings" and not has_rr:
        raise InputError(f"test bed {testbed.name!r} has no relative rankings", fix="use judgments='scores'")
    if judgments == "scores" and not has_da:
        raise InputError(f"test bed {testbed.name!r} has no absolute scores", fix="use judgments='rankings'")
    return judgments


def _row_lookup(table: ScoreTable) -> np.ndarray:
    """``lookup[s, i]`` = row of system ``s`` on segment ``i`` in ``table``, -1 when absent."""
    lookup = np.full((len(table.systems), len(table.segment_ids)), -1, dtype=np.int64)
    lookup[table.row_system, table.row_segment] = np.arange(len(table.row_system))
    return lookup


def _human_matrix(testbed: Testbed, table: ScoreTable, aspect: Optional[str]) -> Tuple[np.ndarray, str]:
    """Mean absolute score of each (system, segment) for ``aspect`` (:meth:`~combo.testbed.Testbed.score_matrix`)."""
    aspect = aspect or testbed.main_aspect()
    human = testbed.score_matrix(table.systems, aspect)
    if not np.isfinite(human).any():
        raise InputError(f"test bed {testbed.name!r} has no absolute scores for aspect {aspect!r}",
                         fix=f"choose one of {testbed.aspects}")
    return human, aspect


def pairs_from_testbed(testbed: Testbed, table: ScoreTable, judgments: str = "auto", min_diff: Optional[float] = None,
                       aspect: Optional[str] = None) -> TrainingPairs:
    """Training pairs of ``testbed`` with row indices into ``table`` (rows of the same test bed).

    ``judgments="auto"`` uses relative rankings when there are any, else
    absolute scores. With scores, ``min_diff`` is the difference a pair must
    exceed; its default follows the judgment type (:func:`default_min_diff`:
    MQM and ESA 0, DA on 0-100 WMT DARR's 25, other scales 25% of the range).
    """
    kind = _judgment_kind(testbed, judgments)
    lookup = _row_lookup(table)
    n_seg = len(table.segment_ids)
    if kind == "rankings":
        sys_index = {s: i for i, s in enumerate(table.systems)}
        better, worse, seg = [], [], []
        ties = unscored = 0
        judged = np.zeros(n_seg, dtype=bool)
        for p in testbed.preferences:
            judged[p.segment] = True
            if p.tie:
                ties += 1
                continue
            b, w = sys_index.get(p.better), sys_index.get(p.worse)
            rb = lookup[b, p.segment] if b is not None else -1
            rw = lookup[w, p.segment] if w is not None else -1
            if rb < 0 or rw < 0:
                unscored += 1
                continue
            better.append(rb)
            worse.append(rw)
            seg.append(p.segment)
        n_cand = (lookup >= 0).sum(axis=0)
        return TrainingPairs(np.asarray(better, np.int64), np.asarray(worse, np.int64), np.asarray(seg, np.int64),
                             "rankings", None, "", ties, 0, unscored, int((judged & (n_cand < 2)).sum()))
    human, aspect = _human_matrix(testbed, table, aspect)
    human = np.where(lookup >= 0, human, np.nan)  # only candidates with metric scores
    judged = np.isfinite(human)
    if min_diff is None:
        min_diff, rule = default_min_diff(aspect, human[judged])
    elif not (isinstance(min_diff, (int, float)) and math.isfinite(min_diff) and min_diff >= 0):
        raise OptionError(f"min_diff must be a finite number >= 0, not {min_diff!r}")
    else:
        rule = "given"
    min_diff = float(min_diff)
    a, b = np.triu_indices(human.shape[0], 1)
    ha, hb = human[a], human[b]  # (system pairs, segments)
    both = np.isfinite(ha) & np.isfinite(hb)
    diff = np.where(both, ha - hb, 0.0)
    keep = both & (np.abs(diff) > min_diff)
    pair_k, seg = np.nonzero(keep)
    sa, sb, d = a[pair_k], b[pair_k], diff[pair_k, seg]
    bsys, wsys = np.where(d > 0, sa, sb), np.where(d > 0, sb, sa)
    order = np.lexsort((wsys, bsys, seg))
    seg, bsys, wsys = seg[order], bsys[order], wsys[order]
    n_judged = judged.sum(axis=0)
    return TrainingPairs(lookup[bsys, seg], lookup[wsys, seg], seg.astype(np.int64), "scores", min_diff, rule, 0,
                         int((both & ~keep).sum()), 0, int(((n_judged > 0) & (n_judged < 2)).sum()))


def targets_from_testbed(testbed: Testbed, table: ScoreTable, judgments: str = "auto",
                         aspect: Optional[str] = None) -> Tuple[np.ndarray, str]:
    """Regression targets per table row (NaN: none): the mean absolute score, or with rankings the share of wins.

    With relative rankings a candidate's target is its wins over its non-tie
    comparisons (MetaEvaluator's ``rr-wins``); candidates never compared get NaN.
    """
    if _judgment_kind(testbed, judgments) == "scores":
        human, aspect = _human_matrix(testbed, table, aspect)
        return human[table.row_system, table.row_segment], f"scores:{aspect}"
    return testbed.win_share_matrix(table.systems)[table.row_system, table.row_segment], "rankings:wins"



# -- features -------------------------------------------------------------------------------------

@dataclass
class TrainingData:
    """Metric scores of every candidate of one or more scored test beds, their pairs and targets.

    Rows are the candidates of the sources, one after the other; ``segment``
    numbers the segments of all sources together (the unit of grouped splits).
    """

    metrics: List[str]
    signatures: List[str]
    higher_is_better: np.ndarray
    scores: np.ndarray  # (metrics, rows)
    segment: np.ndarray  # (rows,) global segment id
    source: np.ndarray  # (rows,) test bed index
    norm_group: List[str]  # (rows,) normalisation group name
    per: str
    pairs: TrainingPairs  # global row indices
    pair_source: np.ndarray  # (pairs,) test bed index
    targets: np.ndarray  # (rows,) regression targets (absolute scores: the human score), NaN where none
    sources: List[Dict[str, Any]]
    system: Optional[np.ndarray] = None  # (rows,) system of each row, numbered over all test beds
    candidate: Optional[np.ndarray] = None  # (rows,) False for human translations listed as systems
    system_offset: Optional[np.ndarray] = None  # (sources,) the number of each test bed's first system in ``system``

    @property
    def n_rows(self) -> int:
        return self.scores.shape[1]


def training_data(sources: Sequence[Tuple[Testbed, ScoreTable]], normalise: str = "testbed",
                  judgments: str = "auto", min_diff: Optional[float] = None, aspect: Optional[str] = None,
                  targets: bool = False) -> TrainingData:
    """Join scored test beds ``[(testbed, table), ...]`` (the same metrics in each) into training data.

    ``normalise``: ``"testbed"`` (ranges per test bed; per language pair for
    WMT12 readers), ``"group"`` (per segment ``group``, e.g. a language pair
    inside one test bed) or ``"all"``. ``targets=True`` also computes
    regression targets from rankings and requires every score
    (:func:`targets_from_testbed`); absolute scores are always kept as targets.
    """
    if normalise not in NORMALISE:
        raise OptionError(f"unknown normalise={normalise!r}; choose one of {list(NORMALISE)}")
    if not sources:
        raise InputError("no test bed to train on")
    first = sources[0][1]
    scores, segment, source, groups, targets_all, system, candidate, offsets = [], [], [], [], [], [], [], []
    better, worse, pseg, psrc = [], [], [], []
    counts = {"ties_dropped": 0, "below_threshold": 0, "unscored": 0, "few_candidates": 0}
    kinds, diffs, described = set(), [], []
    row_offset = seg_offset = sys_offset = 0
    names_seen: Dict[str, int] = {}
    for k, (tb, table) in enumerate(sources):
        if table.metrics != first.metrics or \
                list(map(without_inputs, table.signatures)) != list(map(without_inputs, first.signatures)):
            raise InputError(f"test bed {tb.name!r} was scored with other metrics than {sources[0][0].name!r}",
                             fix="score every test bed with the same metric specs")
        if table.segment_ids != [s.id for s in tb.segments]:
            raise InputError(f"score table of {tb.name!r} does not match its test bed (segments differ)")
        if np.isinf(table.segment).any() or (targets and np.isnan(table.segment).any()):
            bad = int(np.flatnonzero(~np.isfinite(table.segment).all(axis=1))[0])
            raise InputError(f"metric {table.metrics[bad]!r} has "
                             f"{'infinite' if np.isinf(table.segment).any() else 'missing (NaN)'} scores on "
                             f"{tb.name!r}", fix="score every candidate (regression needs every score)")
        pairs = pairs_from_testbed(tb, table, judgments, min_diff, aspect)
        scored = ~np.isnan(table.segment).any(axis=0)  # a candidate without a score (mtme:, scores:) is left out
        if not scored.all():
            keep = scored[pairs.better] & scored[pairs.worse]
            left_out = int((~keep).sum())
            pairs = pairs.subset(keep)
            pairs.unscored += left_out
        if targets or pairs.kind == "scores":
            t, tkind = targets_from_testbed(tb, table, judgments, aspect)
        else:
            t, tkind = np.full(len(table.row_system), np.nan), None
        targets_all.append(t)
        listed = set(tb.metadata.get("human_systems") or [])
        candidate.append(np.array([table.systems[s] not in listed for s in table.row_system], dtype=bool))
        system.append(table.row_system + sys_offset)
        offsets.append(sys_offset)
        sys_offset += len(table.systems)
        kinds.add(pairs.kind)
        diffs.append(pairs.min_diff)
        for key in counts:
            counts[key] += getattr(pairs, key)
        n_rows = len(table.row_system)
        scores.append(table.segment)
        segment.append(table.row_segment + seg_offset)
        source.append(np.full(n_rows, k))
        tag = tb.name if tb.name not in names_seen else f"{tb.name}#{k}"
        names_seen[tb.name] = k
        if normalise == "testbed":
            groups.extend([tag] * n_rows)
        elif normalise == "group":
            seg_group = [s.group or "all" for s in tb.segments]
            groups.extend(seg_group[i] for i in table.row_segment)
        else:
            groups.extend(["all"] * n_rows)
        better.append(pairs.better + row_offset)
        worse.append(pairs.worse + row_offset)
        pseg.append(pairs.segment + seg_offset)
        psrc.append(np.full(len(pairs), k))
        described.append({"name": tag, "digest": tb.digest(), "segments": len(tb.segments),
                          "systems": len(table.systems),
                          "candidates": n_rows, **pairs.describe(),
                          **({"targets": tkind, "targeted_candidates": int(np.isfinite(t).sum())} if tkind else {})})
        row_offset += n_rows
        seg_offset += len(tb.segments)
    kind = kinds.pop() if len(kinds) == 1 else "mixed"
    rules = {d.get("min_diff_rule", "") for d in described}
    all_pairs = TrainingPairs(np.concatenate(better), np.concatenate(worse), np.concatenate(pseg), kind,
                              diffs[0] if len(set(diffs)) == 1 else None, rules.pop() if len(rules) == 1 else "",
                              **counts)
    return TrainingData(list(first.metrics), list(first.signatures), np.asarray(first.higher_is_better, bool),
                        np.hstack(scores), np.concatenate(segment), np.concatenate(source), groups, normalise,
                        all_pairs, np.concatenate(psrc), np.concatenate(targets_all), described,
                        np.concatenate(system), np.concatenate(candidate), np.asarray(offsets, dtype=np.int64))


def _features(scores: np.ndarray, groups: Sequence[str], ranges: Dict[str, Tuple], hib: np.ndarray) -> np.ndarray:
    """(rows, metrics) features, each row normalised with its group's ranges."""
    out = np.zeros(scores.shape)
    names = np.asarray(groups, dtype=object).astype(str)
    for name, (lo, hi) in ranges.items():
        cols = names == name
        out[:, cols] = minmax_normalise(scores[:, cols], lo, hi, hib)
    return out.T



def preference_rows(X: np.ndarray, pairs: TrainingPairs) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Human preferences as ranker input: ``(X, y, groups, query)`` with each pair a query of two rows.

    ``X[better]`` graded 1 and ``X[worse]`` graded 0, grouped by the pair's
    segment: :func:`preference_pairs` gives back exactly ``pairs``, in order,
    each judge's preference kept (several judges' preferences on one segment
    are no single grade per candidate).
    """
    rows = pairs.as_array().reshape(-1)
    return (X[rows], np.tile([1.0, 0.0], len(pairs)), np.repeat(pairs.segment, 2),
            np.repeat(np.arange(len(pairs)), 2))



def judged_blocks(data: TrainingData, rows: np.ndarray) -> Tuple[List[JudgedBlock], np.ndarray, List[int]]:
    """The candidates among ``rows`` (a mask) as one :class:`JudgedBlock` per test bed with a human score, the
    row indices the blocks' cells point into (in that order) and each block's test bed. Unjudged candidates
    stay in (a system's score is the mean over all its segments, as a tuned metric scores it); human
    translations listed as systems are left out."""
    keep = rows.copy()
    if data.candidate is not None:
        keep &= data.candidate
    blocks, index, sources = [], [], []
    offset = 0
    for k in range(len(data.sources)):
        r = np.flatnonzero(keep & (data.source == k))
        if not np.isfinite(data.targets[r]).any():
            continue
        block = JudgedBlock.of(data.targets[r], data.system[r], data.segment[r])
        block.rows[block.rows >= 0] += offset
        offset += len(r)
        blocks.append(block)
        index.append(r)
        sources.append(k)
    return blocks, (np.concatenate(index) if index else np.zeros(0, dtype=np.int64)), sources

