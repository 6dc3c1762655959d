"""Learned metric combinations: training pairs from human judgments, normalised features, estimators, training.

* **Training pairs** (:func:`pairs_from_testbed`). Relative rankings give one
  pair per non-tie human preference, each judge's preference kept (human ties
  are left out and counted). Absolute scores give a pair for every two
  candidates of a segment whose mean scores differ by more than ``min_diff``
  (WMT DARR: 25 on a 0-100 scale; Bojar et al. 2017, Ma et al. 2018). Pairs
  carry their segment, so grouped splits keep a segment whole.
* **Features**: metric segment scores min-max normalised per test bed (a WMT12
  test bed is one language pair, as DiscoTK), per segment group, or over all
  rows; lower-is-better metrics flipped (:func:`~combo.combine.ulc.fit_minmax`).
* **Estimators** (scikit-learn's contract, ``check_estimator`` passes):
  :class:`PairwiseLogisticRanker` (DiscoTK's pairwise learning to rank,
  Guzmán et al. 2014 §4: logistic regression on ``x(a) - x(b)`` labelled 1
  and ``x(b) - x(a)`` labelled 0, no intercept since the two signs make the
  problem symmetric; pairs formed inside ``fit`` from the human grades ``y``
  and ``groups``, :func:`preference_pairs`), C chosen by cross-validation
  grouped by segment; :class:`RegressionCombiner` (Albrecht & Hwa 2007:
  regression of the human score on the metric scores, ridge or linear SVR);
  :class:`UniformCombiner` (ULC, Giménez & Màrquez 2008, the untuned
  baseline).
* :func:`train_model` turns one or more scored test beds into a
  :class:`~combo.metrics.tuned.TunedModel`; :func:`cross_validate` gives
  out-of-fold scores with scikit-learn's splitters (``GroupKFold`` over
  segments, ``LeaveOneGroupOut`` over test beds). Model selection only ever
  sees the training folds.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold, LeaveOneGroupOut
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..errors import InputError, OptionError
from ..meta.pairwise import KendallLikeResult, wmt_kendall
from ..metrics.external import without_inputs
from ..scoring import ScoreTable
from ..testbed import Testbed
from ..metrics.tuned import CV_BY, JUDGMENTS, METHOD_NAMES, NORMALISE, OUTPUT_CHOICES, REGRESSORS, MetricEntry, TunedModel
from .objective import DirectCombiner, JudgedBlock, calibrate, wmt23_statistics
from .ulc import fit_minmax, minmax_normalise

DEFAULT_CS = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
DEFAULT_ALPHAS = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
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


# -- estimators -------------------------------------------------------------------------------------
#
# scikit-learn's estimator contract: ``fit(X, y, groups=None)`` returns self, ``predict(X)`` gives one
# real score per row (higher is better), ``score(X, y, groups=None)`` the criterion GridSearchCV
# maximises, ``n_features_in_`` set by fit and checked by predict and score (``validate_data``).
# The rankers learn from pairs formed inside fit from ``(y, groups)`` (the pairwise transform of
# RankSVM), so GroupKFold, cross_val_score and GridSearchCV work on them with ``groups=``.

MAX_CANDIDATE_PAIRS = 50_000_000  # rows compared within queries; beyond it, give finer groups


def _grouped_folds(groups: np.ndarray, cv: int):
    """GroupKFold splits (deterministic), or None when there are fewer than 2 groups or cv < 2."""
    n_groups = len(np.unique(groups))
    if cv < 2 or n_groups < 2:
        return None
    return list(GroupKFold(n_splits=min(cv, n_groups)).split(np.zeros(len(groups)), groups=groups))


def _kendall_counts(margin: np.ndarray) -> Tuple[int, int, int]:
    """Concordant, discordant and tied pairs of score margins (better minus worse)."""
    return int((margin > 0).sum()), int((margin < 0).sum()), int((margin == 0).sum())


def preference_pairs(y, groups=None, query=None, min_diff: float = 0.0) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairwise transform (Herbrich et al. 2000; Joachims 2002): rows ``(better, worse)`` of one query
    whose human grades ``y`` differ by more than ``min_diff``.

    ``y`` is each row's human grade (a score, a share of wins, minus a rank:
    higher is better). Rows are compared only within their query: ``query``
    when given (one judge's ranking, or one preference as two rows), else
    ``groups`` (the segment), else all rows together. Returns the better rows,
    the worse rows and each pair's group (``groups`` of its rows, the unit a
    grouped split keeps whole; the query when ``groups`` is None), ordered by
    query, then by row.
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    n = len(y)
    q = np.zeros(n, dtype=np.int64) if query is None and groups is None else np.asarray(
        query if query is not None else groups).reshape(-1)
    if len(q) != n:
        raise InputError(f"{'query' if query is not None else 'groups'} has {len(q)} values for {n} rows")
    _, qi = np.unique(q, return_inverse=True)
    qi = qi.reshape(-1)
    order = np.argsort(qi, kind="stable")
    counts = np.bincount(qi)
    sizes = counts[qi[order]]  # per row in query order: the size of its query
    total = int(sizes.sum())
    if total > MAX_CANDIDATE_PAIRS:
        raise InputError(f"{total:,} candidate pairs within queries (largest query {int(counts.max()):,} rows)",
                         fix="pass groups= (the segment of each row) so that only rows of one segment are compared")
    starts = np.repeat(np.cumsum(counts) - counts, counts)  # per row in query order: where its query starts
    left = np.repeat(np.arange(n), sizes)
    right = np.repeat(starts, sizes) + (np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes))
    a, b = order[left], order[right]
    keep = y[a] - y[b] > min_diff
    better, worse = a[keep], b[keep]
    if groups is None:
        return better, worse, qi[better]
    g = np.asarray(groups).reshape(-1)
    if len(g) != n:
        raise InputError(f"groups has {len(g)} values for {n} rows")
    if query is not None and np.any(g[better] != g[worse]):
        raise InputError("a query spans several groups", fix="give each query (ranking) rows of one group (segment)")
    return better, worse, g[better]


class _PairwiseRanking:
    """``score``: agreement of ``predict`` with the human preferences formed from ``(y, groups, query)``."""

    def score(self, X, y, groups=None, query=None) -> float:
        """WMT12 Kendall-like tau (Callison-Burch et al. 2012) of ``predict(X)`` over the pairs of
        :func:`preference_pairs` (with this estimator's ``min_diff``):
        ``(concordant - discordant - tied) / pairs``, a tie in the predictions counted discordant.
        ``GridSearchCV`` and ``cross_val_score`` maximise it; pass ``groups`` (route it with metadata
        routing), or every two rows of ``X`` are compared."""
        s = self.predict(X)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if len(y) != len(s):
            raise InputError(f"y has {len(y)} values for {len(s)} rows")
        better, worse, _ = preference_pairs(y, groups, query, getattr(self, "min_diff", 0.0))
        c, d, t = _kendall_counts(s[better] - s[worse])
        return (c - d - t) / max(c + d + t, 1)

    def _linear_score(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


def _fit_logistic(diff: np.ndarray, C: float, max_iter: int = 100, tol: float = 1e-10
                  ) -> Tuple[np.ndarray, int, bool]:
    """Weights of L2 logistic regression on ``diff`` (label 1) and ``-diff`` (label 0), no intercept;
    the solver's iterations and whether it converged.

    The objective is ``C * sum over both signs of log-loss + ||w||^2 / 2``,
    scikit-learn's ``LogisticRegression(C=C, fit_intercept=False)`` on the
    doubled data. Both signs of a pair have the same loss
    ``log(1 + exp(-w . d))``, so it equals ``2 C sum_p log(1 + exp(-w . d_p)) + ||w||^2 / 2``:
    scikit-learn's Newton solver (``newton-cholesky``) on the pairs once,
    every other difference negated and labelled 0, at ``2C``, gives the same
    weights from half the rows. It replaced a hand-written Newton method that
    was faster on this problem but stopped on a criterion relative to the
    objective, farther from the optimum at large C
    (``benchmarks/bench_pairwise_solver.py``; docs/results/learned-training.md).
    """
    from sklearn.linear_model import LogisticRegression

    n, m = diff.shape
    if n == 0 or not np.any(diff):
        return np.zeros(m), 0, True
    if n == 1:  # one pair: both signs, so that both labels occur
        X, y, c = np.vstack([diff, -diff]), np.array([1.0, 0.0]), C
    else:
        sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        X, y, c = diff * sign[:, None], (sign > 0).astype(np.float64), 2.0 * C
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        lr = LogisticRegression(C=c, fit_intercept=False, solver="newton-cholesky", tol=tol,
                                max_iter=max_iter).fit(X, y)
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return lr.coef_.reshape(-1).astype(np.float64), int(np.max(lr.n_iter_)), converged


def _count_convergence_warnings(caught, what: str) -> int:
    """The ConvergenceWarnings among ``caught``, re-issued as one summary warning (as scikit-learn warns)."""
    n = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if n:
        warnings.warn(f"{n} {what} fit(s) stopped at max_iter before converging; raise max_iter",
                      ConvergenceWarning, stacklevel=3)
    return n


class PairwiseLogisticRanker(_PairwiseRanking, BaseEstimator):
    """Pairwise learning to rank with logistic regression (DiscoTK; Guzmán et al. 2014, §4).

    ``fit(X, y, groups=None, query=None)``: ``X`` (rows, features); ``y`` the
    human grade of each row; pairs are formed inside fit by
    :func:`preference_pairs` (rows of one query, ``y`` differing by more than
    ``min_diff``); ``groups`` the segment of each row. Each pair gives
    ``X[better] - X[worse]`` labelled 1 and its negation labelled 0; no
    intercept (the data are symmetric). ``C`` is chosen among ``Cs`` by
    GroupKFold over the pairs' groups (``cv`` folds), maximising the WMT
    Kendall of the held-out pairs with score ties discordant (pooled over
    folds; equal values: the smallest C). Without ``groups``, with fewer than
    2 groups or a single C, no search: the median of ``Cs``.

    ``predict(X)`` is the interpolated score ``w . x`` (higher is better; its
    sigmoid is DiscoTK's segment score); ``score`` the WMT Kendall of the
    predictions over the pairs of ``(y, groups, query)``. Fits that stop at
    ``max_iter`` raise one ``ConvergenceWarning`` and are counted in
    ``n_not_converged_``; ``n_iter_`` is the solver's iterations of the final fit.

    Several judges' preferences on one segment (WMT relative rankings) are not
    one grade per row: give each ranking (or each preference, as two rows
    graded 1 and 0) its own ``query``, with ``groups`` the segment.
    """

    def __init__(self, Cs: Sequence[float] = DEFAULT_CS, cv: int = 5, min_diff: float = 0.0, max_iter: int = 100,
                 tol: float = 1e-10):
        self.Cs = Cs
        self.cv = cv
        self.min_diff = min_diff
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # the human grades form the pairs
        return tags

    def fit(self, X, y, groups=None, query=None) -> "PairwiseLogisticRanker":
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        Cs = sorted(float(c) for c in self.Cs)
        if not Cs or any(not (math.isfinite(c) and c > 0) for c in Cs):
            raise OptionError(f"Cs must be positive numbers, not {self.Cs!r}")
        if len(X) < 2:
            raise InputError("no training pairs in 1 sample", fix="give at least two rows with different grades")
        better, worse, pair_groups = preference_pairs(y, groups, query, self.min_diff)
        if len(better) == 0:
            raise InputError("no training pairs: no two rows of one query differ in y by more than min_diff "
                             "(one class)", fix="train on human judgments that prefer one candidate")
        diff = X[better] - X[worse]
        folds = None if groups is None or len(Cs) == 1 else _grouped_folds(pair_groups, self.cv)
        self.cv_results_ = {"C": Cs, "kendall": [], "folds": 0 if folds is None else len(folds)}
        # the matrices are thin (pairs x features): one BLAS thread is fastest, and immune to a busy machine
        with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            def solve(d, C):
                w, self.n_iter_, converged = _fit_logistic(d, C, self.max_iter, self.tol)
                if not converged:
                    warnings.warn(f"newton-cholesky stopped at max_iter={self.max_iter} (C={C:g})",
                                  ConvergenceWarning)
                return w

            if folds is None:
                self.C_ = Cs[len(Cs) // 2]
            else:
                for C in Cs:
                    c = d = t = 0
                    for train, test in folds:
                        cc, dd, tt = _kendall_counts(diff[test] @ solve(diff[train], C))
                        c, d, t = c + cc, d + dd, t + tt
                    self.cv_results_["kendall"].append((c - d - t) / max(c + d + t, 1))
                self.C_ = Cs[int(np.argmax(self.cv_results_["kendall"]))]
            self.coef_ = solve(diff, self.C_)
        self.n_not_converged_ = _count_convergence_warnings(caught, "newton-cholesky")
        self.intercept_ = 0.0
        self.n_pairs_ = len(better)
        return self

    def predict(self, X) -> np.ndarray:
        """The interpolated score ``w . x`` of each row (higher is better; DiscoTK's segment score is its sigmoid)."""
        return self._linear_score(X)


class RegressionCombiner(RegressorMixin, BaseEstimator):
    """Regression of human scores on metric scores (Albrecht & Hwa 2007), ridge or linear SVR.

    ``fit(X, y, groups=None)``: ``y`` the human score of every row (finite;
    leave unjudged rows out). The target is standardised (z-scores over the
    training rows), so the interpolated score ``w . x + b`` is in standard
    deviations and its sigmoid stays informative. The regularisation strength
    ``alpha`` (ridge: ``alpha``; SVR: ``C = 1 / alpha``) is chosen among
    ``alphas`` by GroupKFold over ``groups`` minimising the held-out mean
    squared error. ``predict`` gives the human score on its own scale,
    ``score`` the coefficient of determination R^2 (scikit-learn's regressor
    score; the selection criterion, mean squared error, ranks alphas alike on
    one data set). Fits that stop at ``max_iter`` (liblinear's SVR with weak
    regularisation) raise one ``ConvergenceWarning`` and are counted in
    ``n_not_converged_``.
    """

    def __init__(self, kind: str = "ridge", alphas: Sequence[float] = DEFAULT_ALPHAS, cv: int = 5,
                 epsilon: float = 0.0, max_iter: int = 10000):
        self.kind = kind
        self.alphas = alphas
        self.cv = cv
        self.epsilon = epsilon
        self.max_iter = max_iter

    def _regressor(self, alpha: float):
        if self.kind == "ridge":
            from sklearn.linear_model import Ridge

            return Ridge(alpha=alpha)
        if self.kind == "svr":
            from sklearn.svm import LinearSVR

            return LinearSVR(C=1.0 / alpha, epsilon=self.epsilon, max_iter=self.max_iter, dual="auto",
                             random_state=0)
        raise OptionError(f"unknown regressor {self.kind!r}; choose one of {list(REGRESSORS)}")

    def fit(self, X, y, groups=None) -> "RegressionCombiner":
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if len(y) < 2:
            raise InputError("fewer than 2 candidates with a human score to regress on (1 sample)")
        alphas = sorted(float(a) for a in self.alphas)
        if not alphas or any(not (math.isfinite(a) and a > 0) for a in alphas):
            raise OptionError(f"alphas must be positive numbers, not {self.alphas!r}")
        self._regressor(alphas[0])  # validates kind
        self.target_mean_ = float(y.mean())
        self.target_scale_ = float(y.std()) or 1.0
        z = (y - self.target_mean_) / self.target_scale_
        folds = None if groups is None or len(alphas) == 1 else _grouped_folds(np.asarray(groups), self.cv)
        self.cv_results_ = {"alpha": alphas, "mse": [], "folds": 0 if folds is None else len(folds)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if folds is None:
                self.alpha_ = alphas[len(alphas) // 2]
            else:
                for alpha in alphas:
                    err = 0.0
                    for train, test in folds:
                        reg = self._regressor(alpha).fit(X[train], z[train])
                        err += float(((reg.predict(X[test]) - z[test]) ** 2).sum())
                    self.cv_results_["mse"].append(err / len(z))
                self.alpha_ = alphas[int(np.argmin(self.cv_results_["mse"]))]
            reg = self._regressor(self.alpha_).fit(X, z)
        # liblinear (SVR) may stop at max_iter for weak regularisation; counted, not hidden
        self.n_not_converged_ = _count_convergence_warnings(caught, self.kind)
        self.coef_ = np.asarray(reg.coef_, dtype=np.float64).reshape(-1).copy()
        self.intercept_ = float(np.asarray(reg.intercept_).reshape(-1)[0])
        self.n_iter_ = int(getattr(reg, "n_iter_", None) or 1)  # of the final fit; ridge's closed form: 1
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted human score on its original scale (``(w . x + b)`` in standard deviations, rescaled)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return (X @ self.coef_ + self.intercept_) * self.target_scale_ + self.target_mean_


class UniformCombiner(_PairwiseRanking, BaseEstimator):
    """ULC (Giménez & Màrquez 2008, §3.1): every normalised metric weighs 1/m; nothing is learned from judgments.

    ``fit(X, y=None)`` only reads the number of features;
    ``predict`` is the mean of the features; ``score`` the WMT Kendall over
    the pairs of ``(y, groups)``, as :class:`PairwiseLogisticRanker`, so the
    untuned baseline is cross-validated the same way.
    """

    def fit(self, X, y=None) -> "UniformCombiner":
        X = validate_data(self, X, dtype=np.float64)
        self.coef_ = np.full(X.shape[1], 1.0 / X.shape[1])
        self.intercept_ = 0.0
        return self

    def predict(self, X) -> np.ndarray:
        """The ULC of each row: the mean of its (normalised) features."""
        return self._linear_score(X)


# -- training ---------------------------------------------------------------------------------------

@dataclass
class TrainOptions:
    """How to train: method, regressor, objective, output, parameter grids and inner folds.

    ``method="auto"`` is ``direct`` (weights searched for ``objective``,
    :mod:`combo.combine.objective`) on absolute judgments and ``pairwise-lr``
    on relative rankings. ``output``: ``"auto"`` is ``"human"`` for ``direct``
    and ``pairwise-lr`` on absolute judgments (fitted to the training
    judgments' scale and clipped to their range) and ``"linear"`` (``w . x``)
    otherwise; ``"sigmoid"`` is DiscoTK's.
    """

    method: str = "pairwise-lr"
    regressor: str = "ridge"
    Cs: Sequence[float] = DEFAULT_CS
    alphas: Sequence[float] = DEFAULT_ALPHAS
    inner_folds: int = 5
    name: str = "tuned"
    objective: str = "wmt23"
    output: str = "auto"
    prune: float = 0.02

    def check(self) -> None:
        from .objective import OBJECTIVES

        if self.method not in METHOD_NAMES:
            raise OptionError(f"unknown method {self.method!r}; choose one of {list(METHOD_NAMES)}")
        if self.regressor not in REGRESSORS:
            raise OptionError(f"unknown regressor {self.regressor!r}; choose one of {list(REGRESSORS)}")
        if self.objective not in OBJECTIVES:
            raise OptionError(f"unknown objective {self.objective!r}; choose one of {list(OBJECTIVES)}")
        if self.output not in OUTPUT_CHOICES:
            raise OptionError(f"unknown output {self.output!r}; choose one of {list(OUTPUT_CHOICES)}")
        if not (isinstance(self.prune, (int, float)) and 0.0 <= self.prune < 1.0):
            raise OptionError(f"prune must be a number in [0, 1), not {self.prune!r}")

    def resolved(self, kind: str) -> "TrainOptions":
        """These options with ``auto`` method and output decided for judgments of ``kind`` (scores, rankings)."""
        from dataclasses import replace

        method = self.method if self.method != "auto" else "direct" if kind == "scores" else "pairwise-lr"
        fitted = kind == "scores" and method in ("direct", "pairwise-lr")  # regression predicts the scale itself
        output = self.output if self.output != "auto" else "human" if fitted else "linear"
        return replace(self, method=method, output=output)

    @property
    def model_method(self) -> str:
        return f"regression-{self.regressor}" if self.method == "regression" else self.method


def _metric_entries(data: TrainingData) -> List[MetricEntry]:
    from ..metrics.registry import get_metric

    entries = []
    for spec, sig in zip(data.metrics, data.signatures):
        metric = get_metric(spec)
        if metric.signature != without_inputs(sig):
            raise InputError(f"metric {spec!r}: the score table's signature {sig!r} is not the one the spec gives "
                             f"({metric.signature!r})",
                             fix="score the test beds with metric specs (strings) such as 'bleu:max_order=2'")
        entries.append(MetricEntry.of(spec, metric))
    return entries


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


def fit_model(data: TrainingData, options: Optional[TrainOptions] = None, rows: Optional[np.ndarray] = None,
              entries: Optional[List[MetricEntry]] = None) -> TunedModel:
    """Fit a model on ``data`` (on the rows where ``rows`` is True, whole segments; default all)."""
    options = options or TrainOptions()
    options.check()
    options = options.resolved(data.pairs.kind)
    train = np.ones(data.n_rows, dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    entries = entries if entries is not None else _metric_entries(data)
    groups = [g for g, keep in zip(data.norm_group, train) if keep]
    norm, _ = fit_minmax(data.scores[:, train], data.higher_is_better, groups)  # per group, as ULC
    per_group = {str(g): (norm.lo[:, k], norm.hi[:, k]) for k, g in enumerate(norm.groups)}
    lo, hi = norm.lo.min(axis=1), norm.hi.max(axis=1)  # pooled over groups: the ranges scoring uses
    X = np.zeros((data.n_rows, len(data.metrics)))
    X[train] = _features(data.scores[:, train], groups, per_group, data.higher_is_better)
    chosen: Dict[str, Any] = {}
    if options.method == "pairwise-lr":
        in_train = train[data.pairs.better] & train[data.pairs.worse]
        pairs = data.pairs.subset(in_train)
        if len(pairs) == 0:
            raise InputError("no training pairs: every human preference is a tie or below the threshold",
                             fix="lower --min-diff, or train on other judgments")
        Xp, yp, segment, query = preference_rows(X, pairs)
        est = PairwiseLogisticRanker(Cs=options.Cs, cv=options.inner_folds).fit(Xp, yp, groups=segment, query=query)
        chosen = {"C": est.C_, "cv": est.cv_results_, "pairs": len(pairs), "not_converged": est.n_not_converged_}
    elif options.method == "regression":
        judged = train & np.isfinite(data.targets)
        if not judged.any():
            raise InputError("no regression targets (call training_data(..., targets=True))")
        est = RegressionCombiner(kind=options.regressor, alphas=options.alphas,
                                 cv=options.inner_folds).fit(X[judged], data.targets[judged], data.segment[judged])
        chosen = {"alpha": est.alpha_, "cv": est.cv_results_, "not_converged": est.n_not_converged_,
                  "target_mean": est.target_mean_,
                  "target_scale": est.target_scale_, "targets": int(judged.sum())}
    elif options.method == "direct":
        est, chosen = _fit_direct(data, X, train, options)
    else:
        est = UniformCombiner().fit(X[train])
    coef, intercept = np.asarray(est.coef_, dtype=np.float64), float(est.intercept_)
    scale = None
    if options.output == "human":
        judged = train & np.isfinite(data.targets)
        if judged.sum() < 2:
            raise OptionError(f"--output human fits the output to absolute human scores; these judgments are "
                              f"{data.pairs.kind if data.pairs.kind != 'scores' else 'scores of fewer than 2 candidates'}"
                              " (fix: use --output linear, or --judgments scores where the test bed has absolute "
                              "scores)")
        a, c = calibrate(X[judged] @ coef + intercept, data.targets[judged])
        coef, intercept = a * coef, a * intercept + c
        scale = (float(data.targets[judged].min()), float(data.targets[judged].max()))
        chosen["calibration"] = {"scale": a, "offset": c, "rows": int(judged.sum()),
                                 "to": "the training judgments (least squares), clipped to their range"}
    training = {
        "testbeds": data.sources,
        "rows": int(train.sum()),
        "judgments": data.pairs.kind,
        "pairs": len(data.pairs) if rows is None else int((train[data.pairs.better]).sum()),
        "min_diff": data.pairs.min_diff,
        "min_diff_rule": data.pairs.min_diff_rule,
        "estimator": {"class": type(est).__name__, "params": _json_params(est.get_params()), **chosen},
        "analysers": {e.spec: _analysers(e) for e in entries},  # load_model refuses the model when they change
    }
    return TunedModel(entries, lo, hi, coef, intercept, options.model_method, options.name,
                      data.per, {g: {"lo": r[0].tolist(), "hi": r[1].tolist()} for g, r in per_group.items()},
                      training, output=options.output, scale=scale)


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


def _fit_direct(data: TrainingData, X: np.ndarray, train: np.ndarray, options: TrainOptions):
    """Weights searched for ``options.objective`` on the training rows (:func:`combo.combine.objective.search_weights`)."""
    if data.pairs.kind != "scores" or data.system is None:
        raise InputError("--method direct searches weights for a criterion over absolute human scores (MQM, DA); "
                         "these judgments are relative rankings",
                         fix="use --method pairwise-lr (the default for rankings)")
    blocks, index, _ = judged_blocks(data, train)
    if not blocks:
        raise InputError("no candidate with a human score to train on", fix="train on a test bed with scores")
    rated = np.concatenate([b.human[np.isfinite(b.human)] for b in blocks])
    if len(np.unique(rated)) < 2:
        raise InputError(f"every one of the {len(rated)} human scores of the training candidates is {rated[0]:g}: "
                         "scores that never differ cannot inform any weights",
                         fix="train on judgments that tell candidates apart")
    est = DirectCombiner(options.objective, options.prune).fit(X[index], blocks=blocks)
    found = est.search_
    if not (np.isfinite(found.value) and np.isfinite(found.uniform_value)):
        systems = max(b.human.shape[0] for b in blocks)
        raise InputError(f"--objective {options.objective} is undefined on the training judgments ({systems} "
                         f"{'system' if systems == 1 else 'systems'} per pair at most, {len(rated)} human scores): "
                         "there is nothing for the weights to follow",
                         fix="train on more systems or segments, or choose an --objective these judgments define "
                             "(seg_pearson needs only segments whose scores differ)")
    chosen = {"objective": options.objective, "objective_value": found.value,
              "uniform_value": found.uniform_value, "evaluations": found.evaluations,
              "selected": int((found.weights > 0).sum())}
    return est, chosen


def _analysers(entry: MetricEntry) -> str:
    from ..metrics.registry import get_metric
    from ..metrics.base import analyser_versions

    return analyser_versions(get_metric(entry.name, **entry.options))


def _json_params(params: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (list(v) if isinstance(v, (tuple, list)) else v) for k, v in params.items()}


def train_model(sources: Sequence[Tuple[Testbed, ScoreTable]], options: Optional[TrainOptions] = None,
                normalise: str = "testbed", judgments: str = "auto", min_diff: Optional[float] = None,
                aspect: Optional[str] = None) -> TunedModel:
    """Train a tuned metric on scored test beds ``[(testbed, table), ...]`` (tables scored with metric specs)."""
    options = options or TrainOptions()
    options.check()
    data = training_data(sources, normalise, judgments, min_diff, aspect, targets=options.method == "regression")
    return fit_model(data, options)


@dataclass
class CrossValidation:
    """Out-of-fold interpolated scores of every row (folds grouped by segment or test bed; clipped to the human
    scale for output "human", :meth:`TunedModel.bounded`) and each fold's model."""

    raw: np.ndarray
    fold: np.ndarray
    models: List[TunedModel] = field(repr=False)
    by: str = "segment"  # what the folds keep whole: "segment" or "testbed"

    @property
    def folds(self) -> int:
        return len(self.models)

    @property
    def not_converged(self) -> int:
        """Fits of all folds (parameter search included) that stopped at their iteration limit."""
        return sum(int(m.training["estimator"].get("not_converged", 0)) for m in self.models)


def cross_validate(data: TrainingData, options: Optional[TrainOptions] = None, folds: int = 10,
                   by: str = "segment") -> CrossValidation:
    """Cross-validation: each fold's rows are scored by a model trained on the other folds only.

    ``by="segment"``: ``folds`` folds grouped by segment. ``by="testbed"``:
    leave one test bed out (one fold per training source, e.g. per WMT
    language pair; ``folds`` is ignored). Every model (ranges, C or alpha)
    sees only its training folds.
    """
    options = options or TrainOptions()
    options.check()
    if by == "segment":
        splits = _grouped_folds(data.segment, folds)
        if splits is None:
            raise InputError(f"cross-validation needs at least 2 segments and 2 folds (folds={folds})")
    elif by == "testbed":
        if len(data.sources) < 2:
            raise InputError(f"leaving one test bed out needs at least 2 test beds, not {len(data.sources)}",
                             fix="train on several test beds (e.g. --lp cs-en,de-en,es-en), or cross-validate "
                                 "by segment")
        splits = list(LeaveOneGroupOut().split(data.scores.T, groups=data.source))
    else:
        raise OptionError(f"cross-validation by {by!r}: give {' or '.join(map(repr, CV_BY))}")
    entries = _metric_entries(data)
    raw = np.full(data.n_rows, np.nan)
    fold = np.full(data.n_rows, -1, dtype=np.int64)
    models = []
    for k, (train_rows, test_rows) in enumerate(splits):
        mask = np.zeros(data.n_rows, dtype=bool)
        mask[train_rows] = True
        model = fit_model(data, options, mask, entries)
        raw[test_rows] = model.bounded(model.raw_scores(data.scores[:, test_rows]))
        fold[test_rows] = k
        models.append(model)
    return CrossValidation(raw, fold, models, by)


def fit_and_cross_validate(data: TrainingData, options: TrainOptions, folds: int = 10, by: str = "segment"
                           ) -> Tuple[TunedModel, Optional[CrossValidation]]:
    """The model fitted on all of ``data`` and its cross-validation (``folds`` 0: none, None), as ``combo train``
    runs them. ConvergenceWarning is silenced: fits stopped at their iteration limit are counted instead
    (``model.training["estimator"]["not_converged"]``, :attr:`CrossValidation.not_converged`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cv = cross_validate(data, options, folds, by=by) if folds else None
        model = fit_model(data, options)
    return model, cv


#: The statistics of :func:`training_report` on absolute judgments, in the order printed (WMT23's per pair).
WMT23_STATISTICS = ("seg_pearson", "seg_acc_eq", "sys_pearson", "sys_accuracy", "average")


def training_report(data: TrainingData, cv: Optional[CrossValidation], method: str,
                    system_scores: Optional[Sequence[np.ndarray]] = None) -> Dict[str, Any]:
    """The quality of the cross-validated tuned scores beside the ULC of the same metrics and each metric alone.

    Relative rankings: WMT12 Kendall over the training pairs (human ties left
    out), pooled for one test bed, the mean over test beds for several (as WMT
    averages language pairs). Absolute scores: WMT23's four statistics and
    their average on each test bed (:func:`combo.combine.objective.wmt23_statistics`),
    and their mean over test beds; a single metric's system score is its own
    (``system_scores[k]``: the table's (metrics, systems) of test bed ``k``),
    a combination's the mean of its segment scores.
    """
    from .ulc import ulc

    combined = ulc(data.scores, data.higher_is_better, data.norm_group)
    oriented = [data.scores[k] if data.higher_is_better[k] else -data.scores[k] for k in range(len(data.metrics))]
    report: Dict[str, Any] = {"folds": cv.folds if cv is not None else 0,
                              "grouped_by": cv.by if cv is not None else None, "pairs": len(data.pairs)}
    if data.pairs.kind == "scores":
        blocks, index, sources = judged_blocks(data, np.ones(data.n_rows, dtype=bool))
        names = [data.sources[k]["name"] for k in sources]

        def stats(values, metric=None):
            per = []
            for b, k in zip(blocks, sources):
                sys_ = None
                if metric is not None and system_scores is not None:
                    own = np.asarray(system_scores[k][metric], dtype=np.float64)
                    sys_ = own[b.system_codes - data.system_offset[k]]
                    sys_ = sys_ if data.higher_is_better[metric] else -sys_
                per.append(wmt23_statistics(b, values[index], sys_))
            mean = {s: float(np.mean([p[s] for p in per])) for s in WMT23_STATISTICS}
            return {"testbeds": dict(zip(names, per)), "mean": mean}

        singles = {m: stats(oriented[k], k) for k, m in enumerate(data.metrics)}
        best = max(singles, key=lambda m: (np.nan_to_num(singles[m]["mean"]["average"], nan=-np.inf), m))
        report.update({"criterion": "WMT23 statistics per test bed (seg Pearson, acc_eq by item, sys Pearson, "
                                    "sys accuracy, their average)" + (f", mean over {len(blocks)} test beds"
                                                                      if len(blocks) > 1 else ""),
                       "statistics": list(WMT23_STATISTICS),
                       "tuned": stats(cv.raw) if cv is not None else None, "ulc": stats(combined),
                       "best_single": {"metric": best, **singles[best]}, "single": singles})
        return report
    n = len(data.sources)
    subsets = [data.pairs.subset(data.pair_source == k) for k in range(n)] if n > 1 else [data.pairs]

    def both(values):
        return {ties: float(np.mean([pair_kendall(values, pairs, rule).value for pairs in subsets]))
                for ties, rule in (("ties_discordant", "discordant"), ("ties_excluded", "excluded"))}

    singles = {m: both(v) for m, v in zip(data.metrics, oriented)}
    best = max(singles, key=lambda m: (np.nan_to_num(singles[m]["ties_discordant"], nan=-np.inf), m))
    report.update({"criterion": "WMT12 Kendall over the training pairs (human ties left out)"
                                + (f", mean over {n} test beds" if n > 1 else ""),
                   "tuned": both(cv.raw) if cv is not None else None, "ulc": both(combined),
                   "best_single": {"metric": best, **singles[best]}, "single": singles})
    if cv is not None and method == "regression":
        ok = np.isfinite(data.targets)
        report["tuned"]["pearson_with_targets"] = float(np.corrcoef(cv.raw[ok], data.targets[ok])[0, 1]) \
            if ok.sum() > 1 and np.std(cv.raw[ok]) > 0 and np.std(data.targets[ok]) > 0 else None
    return report


def pair_kendall(row_scores: np.ndarray, pairs: TrainingPairs, ties: str = "discordant") -> KendallLikeResult:
    """WMT12 Kendall of per-row scores over training pairs (human ties already left out)."""
    s = np.asarray(row_scores, dtype=np.float64)
    return wmt_kendall(s[pairs.better], s[pairs.worse], None, variant="wmt12", ties=ties)
