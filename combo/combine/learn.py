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
* **Estimators** (scikit-learn conventions): :class:`PairwiseLogisticRanker`
  (DiscoTK's pairwise learning to rank, Guzmán et al. 2014 §4: logistic
  regression on ``x(a) - x(b)`` labelled 1 and ``x(b) - x(a)`` labelled 0, no
  intercept since the two signs make the problem symmetric), C chosen by
  cross-validation grouped by segment; :class:`RegressionCombiner` (Albrecht &
  Hwa 2007: regression of the human score on the metric scores, ridge or
  linear SVR); :class:`UniformCombiner` (ULC, Giménez & Màrquez 2008, the
  untuned baseline).
* :func:`train_model` turns one or more scored test beds into a
  :class:`~combo.metrics.tuned.TunedModel`; :func:`cross_validate` gives
  out-of-fold scores with folds grouped by segment. Model selection only ever
  sees the training folds.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from ..errors import InputError, OptionError
from ..meta.pairwise import KendallLikeResult, wmt_kendall
from ..metrics.external import without_inputs
from ..scoring import ScoreTable
from ..testbed import Testbed
from ..metrics.tuned import CV_BY, JUDGMENTS, METHOD_NAMES, NORMALISE, REGRESSORS, MetricEntry, TunedModel
from .ulc import fit_minmax, minmax_normalise

DEFAULT_CS = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
DEFAULT_ALPHAS = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
DARR_FRACTION = 0.25  # default min_diff: 25 % of the observed score range (25 on a fully used 0-100 scale)


# -- training pairs and targets -------------------------------------------------------------------

@dataclass
class TrainingPairs:
    """Human preferences "row ``better`` over row ``worse``" on one segment, with what was left out."""

    better: np.ndarray
    worse: np.ndarray
    segment: np.ndarray
    kind: str  # "rankings" or "scores"
    min_diff: Optional[float] = None
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
                             self.ties_dropped, self.below_threshold, self.unscored, self.few_candidates)

    def describe(self) -> Dict[str, Any]:
        return {"judgments": self.kind, "pairs": len(self), "segments": int(len(np.unique(self.segment))),
                "min_diff": self.min_diff, "ties_dropped": self.ties_dropped,
                "below_threshold": self.below_threshold, "unscored": self.unscored,
                "few_candidates": self.few_candidates}


def default_aspect(testbed: Testbed) -> Optional[str]:
    """The test bed's main absolute-score aspect (:meth:`~combo.testbed.Testbed.main_aspect`)."""
    return testbed.main_aspect()


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
    """Mean absolute score of each (system, segment) for ``aspect``; NaN where unjudged."""
    aspect = aspect or default_aspect(testbed)
    sys_index = {s: i for i, s in enumerate(table.systems)}
    total = np.zeros((len(table.systems), len(table.segment_ids)))
    count = np.zeros_like(total)
    for s in testbed.scores:
        if s.aspect == aspect and s.system in sys_index:
            total[sys_index[s.system], s.segment] += s.value
            count[sys_index[s.system], s.segment] += 1
    if not count.any():
        known = sorted({s.aspect for s in testbed.scores})
        raise InputError(f"test bed {testbed.name!r} has no absolute scores for aspect {aspect!r}",
                         fix=f"choose one of {known}")
    with np.errstate(invalid="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan), aspect


def pairs_from_testbed(testbed: Testbed, table: ScoreTable, judgments: str = "auto", min_diff: Optional[float] = None,
                       aspect: Optional[str] = None) -> TrainingPairs:
    """Training pairs of ``testbed`` with row indices into ``table`` (rows of the same test bed).

    ``judgments="auto"`` uses relative rankings when there are any, else
    absolute scores. With scores, ``min_diff`` (default: 25 % of the observed
    range of the candidates' mean scores, so 25 on a fully used 0-100 scale;
    pass 25 for WMT DARR exactly) is the difference a pair must exceed.
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
                             "rankings", None, ties, 0, unscored, int((judged & (n_cand < 2)).sum()))
    human, aspect = _human_matrix(testbed, table, aspect)
    human = np.where(lookup >= 0, human, np.nan)  # only candidates with metric scores
    judged = np.isfinite(human)
    if min_diff is None:
        lo, hi = np.nanmin(human), np.nanmax(human)
        min_diff = DARR_FRACTION * float(hi - lo)
    elif not (isinstance(min_diff, (int, float)) and math.isfinite(min_diff) and min_diff >= 0):
        raise OptionError(f"min_diff must be a finite number >= 0, not {min_diff!r}")
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
    return TrainingPairs(lookup[bsys, seg], lookup[wsys, seg], seg.astype(np.int64), "scores", min_diff, 0,
                         int((both & ~keep).sum()), 0, int(((n_judged > 0) & (n_judged < 2)).sum()))


def targets_from_testbed(testbed: Testbed, table: ScoreTable, judgments: str = "auto",
                         aspect: Optional[str] = None) -> Tuple[np.ndarray, str]:
    """Regression targets per table row (NaN: none): the mean absolute score, or with rankings the share of wins.

    With relative rankings a candidate's target is its wins over its non-tie
    comparisons (MetaEvaluator's ``rr-wins``); candidates never compared get NaN.
    """
    kind = _judgment_kind(testbed, judgments)
    lookup = _row_lookup(table)
    if kind == "scores":
        human, aspect = _human_matrix(testbed, table, aspect)
        rows = lookup[lookup >= 0]
        out = np.full(len(table.row_system), np.nan)
        out[rows] = human[lookup >= 0]
        return out, f"scores:{aspect}"
    pairs = pairs_from_testbed(testbed, table, "rankings")
    n = len(table.row_system)
    wins = np.bincount(pairs.better, minlength=n).astype(float)
    games = wins + np.bincount(pairs.worse, minlength=n)
    with np.errstate(invalid="ignore"):
        return np.where(games > 0, wins / np.where(games > 0, games, 1), np.nan), "rankings:wins"


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
    targets: np.ndarray  # (rows,) regression targets, NaN where none
    sources: List[Dict[str, Any]]

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
    regression targets (:func:`targets_from_testbed`).
    """
    if normalise not in NORMALISE:
        raise OptionError(f"unknown normalise={normalise!r}; choose one of {list(NORMALISE)}")
    if not sources:
        raise InputError("no test bed to train on")
    first = sources[0][1]
    scores, segment, source, groups, targets_all = [], [], [], [], []
    better, worse, pseg, psrc = [], [], [], []
    counts = {"ties_dropped": 0, "below_threshold": 0, "unscored": 0, "few_candidates": 0}
    kinds, diffs, described = set(), [], []
    row_offset = seg_offset = 0
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
        if targets:
            t, tkind = targets_from_testbed(tb, table, judgments, aspect)
            targets_all.append(t)
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
                          **({"targets": tkind, "targeted_candidates": int(np.isfinite(t).sum())} if targets else {})})
        row_offset += n_rows
        seg_offset += len(tb.segments)
    kind = kinds.pop() if len(kinds) == 1 else "mixed"
    all_pairs = TrainingPairs(np.concatenate(better), np.concatenate(worse), np.concatenate(pseg), kind,
                              diffs[0] if len(set(diffs)) == 1 else None, **counts)
    return TrainingData(list(first.metrics), list(first.signatures), np.asarray(first.higher_is_better, bool),
                        np.hstack(scores), np.concatenate(segment), np.concatenate(source), groups, normalise,
                        all_pairs, np.concatenate(psrc),
                        np.concatenate(targets_all) if targets else np.full(row_offset, np.nan), described)


def _features(scores: np.ndarray, groups: Sequence[str], ranges: Dict[str, Tuple], hib: np.ndarray) -> np.ndarray:
    """(rows, metrics) features, each row normalised with its group's ranges."""
    out = np.zeros(scores.shape)
    names = np.asarray(groups, dtype=object).astype(str)
    for name, (lo, hi) in ranges.items():
        cols = names == name
        out[:, cols] = minmax_normalise(scores[:, cols], lo, hi, hib)
    return out.T


# -- estimators -------------------------------------------------------------------------------------

def _grouped_folds(groups: np.ndarray, cv: int):
    """GroupKFold splits (deterministic), or None when there are fewer than 2 groups or cv < 2."""
    n_groups = len(np.unique(groups))
    if cv < 2 or n_groups < 2:
        return None
    return list(GroupKFold(n_splits=min(cv, n_groups)).split(np.zeros(len(groups)), groups=groups))


def _kendall_counts(margin: np.ndarray) -> Tuple[int, int, int]:
    """Concordant, discordant and tied pairs of score margins (better minus worse)."""
    return int((margin > 0).sum()), int((margin < 0).sum()), int((margin == 0).sum())


def _fit_logistic(diff: np.ndarray, C: float, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Weights of L2 logistic regression on ``diff`` (label 1) and ``-diff`` (label 0), no intercept.

    Minimises ``C * sum over both signs of log-loss + ||w||^2 / 2``, the
    objective of scikit-learn's ``LogisticRegression(C=C, fit_intercept=False)``
    on the doubled data; by symmetry both signs of a pair have the same loss
    ``log(1 + exp(-w . d))``, so it is ``2 C sum_p log(1 + exp(-w . d_p)) + ||w||^2 / 2``,
    solved by Newton's method with backtracking (few features, so each step
    is one small linear solve; tests check it against scikit-learn).
    """
    n, m = diff.shape
    w = np.zeros(m)
    if n == 0 or not np.any(diff):
        return w

    def objective(v: np.ndarray) -> float:
        return float(2.0 * C * np.logaddexp(0.0, -(diff @ v)).sum() + 0.5 * v @ v)

    value = objective(w)
    for _ in range(max_iter):
        z = diff @ w
        p = expit(-z)  # -d/dz log(1 + exp(-z))
        grad = w - 2.0 * C * (diff.T @ p)
        scaled = diff * np.sqrt(2.0 * C * p * (1.0 - p))[:, None]
        hess = scaled.T @ scaled + np.eye(m)
        step = np.linalg.solve(hess, grad)
        decrement = float(grad @ step)
        if decrement / 2.0 <= tol * max(1.0, abs(value)):
            break
        t = 1.0
        while True:
            trial = objective(w - t * step)
            if trial <= value - 1e-4 * t * decrement or t < 1e-12:
                break
            t /= 2.0
        w = w - t * step
        value = trial
    return w


class PairwiseLogisticRanker(BaseEstimator):
    """Pairwise learning to rank with logistic regression (DiscoTK; Guzmán et al. 2014, §4).

    ``fit(X, pairs, groups)``: ``X`` (rows, features), ``pairs`` (P, 2) rows
    ``(better, worse)``, ``groups`` one id per pair (the segment). Each pair
    gives ``X[better] - X[worse]`` labelled 1 and its negation labelled 0;
    no intercept (the data are symmetric). ``C`` is chosen among ``Cs`` by
    GroupKFold cross-validation over ``groups`` (``cv`` folds), maximising
    the WMT Kendall of the held-out pairs with score ties discordant (pooled
    over folds; equal values: the smallest C). Without ``groups``, with fewer
    than 2 groups or a single C, no search: the median of ``Cs``.
    """

    def __init__(self, Cs: Sequence[float] = DEFAULT_CS, cv: int = 5, max_iter: int = 100, tol: float = 1e-10):
        self.Cs = Cs
        self.cv = cv
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, pairs, groups=None) -> "PairwiseLogisticRanker":
        X = np.asarray(X, dtype=np.float64)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if X.ndim != 2 or not np.isfinite(X).all():
            raise InputError(f"X must be a finite (rows, features) matrix, not shape {X.shape}")
        if len(pairs) == 0:
            raise InputError("no training pairs", fix="train on human judgments that prefer one candidate")
        Cs = sorted(float(c) for c in self.Cs)
        if not Cs or any(not (math.isfinite(c) and c > 0) for c in Cs):
            raise OptionError(f"Cs must be positive numbers, not {self.Cs!r}")
        diff = X[pairs[:, 0]] - X[pairs[:, 1]]
        folds = None if groups is None or len(Cs) == 1 else _grouped_folds(np.asarray(groups), self.cv)
        self.cv_results_ = {"C": Cs, "kendall": [], "folds": 0 if folds is None else len(folds)}
        # the matrices are thin (pairs x features): one BLAS thread is fastest, and immune to a busy machine
        with threadpool_limits(limits=1, user_api="blas"):
            if folds is None:
                self.C_ = Cs[len(Cs) // 2]
            else:
                for C in Cs:
                    c = d = t = 0
                    for train, test in folds:
                        w = _fit_logistic(diff[train], C, self.max_iter, self.tol)
                        cc, dd, tt = _kendall_counts(diff[test] @ w)
                        c, d, t = c + cc, d + dd, t + tt
                    self.cv_results_["kendall"].append((c - d - t) / max(c + d + t, 1))
                self.C_ = Cs[int(np.argmax(self.cv_results_["kendall"]))]
            self.coef_ = _fit_logistic(diff, self.C_, self.max_iter, self.tol)
        self.intercept_ = 0.0
        self.n_features_in_ = X.shape[1]
        self.n_pairs_ = len(pairs)
        return self

    def decision_function(self, X) -> np.ndarray:
        """The interpolated score ``w . x`` of each row."""
        return np.asarray(X, dtype=np.float64) @ self.coef_ + self.intercept_

    def predict(self, X) -> np.ndarray:
        """Segment score ``sigmoid(w . x)`` of each row."""
        return expit(self.decision_function(X))

    def score(self, X, pairs) -> float:
        """WMT Kendall (ties discordant) of the decision values on ``pairs`` (P, 2)."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        s = self.decision_function(X)
        c, d, t = _kendall_counts(s[pairs[:, 0]] - s[pairs[:, 1]])
        return (c - d - t) / max(c + d + t, 1)


class RegressionCombiner(BaseEstimator):
    """Regression of human scores on metric scores (Albrecht & Hwa 2007), ridge or linear SVR.

    ``fit(X, y, groups)``; rows with NaN ``y`` are left out. The target is
    standardised (z-scores over the training rows), so the interpolated score
    ``w . x + b`` is in standard deviations and its sigmoid stays informative.
    The regularisation strength ``alpha`` (ridge: ``alpha``; SVR:
    ``C = 1 / alpha``) is chosen among ``alphas`` by GroupKFold over
    ``groups`` minimising the held-out mean squared error. Fits that stop at
    ``max_iter`` (liblinear's SVR with weak regularisation) are counted in
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
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or len(y) != len(X) or not np.isfinite(X).all():
            raise InputError(f"X {X.shape} must be a finite (rows, features) matrix with one target per row")
        keep = np.isfinite(y)
        if keep.sum() < 2:
            raise InputError("fewer than 2 candidates with a human score to regress on")
        X, y = X[keep], y[keep]
        groups = None if groups is None else np.asarray(groups)[keep]
        alphas = sorted(float(a) for a in self.alphas)
        if not alphas or any(not (math.isfinite(a) and a > 0) for a in alphas):
            raise OptionError(f"alphas must be positive numbers, not {self.alphas!r}")
        self._regressor(alphas[0])  # validates kind
        self.target_mean_ = float(y.mean())
        self.target_scale_ = float(y.std()) or 1.0
        z = (y - self.target_mean_) / self.target_scale_
        folds = None if groups is None or len(alphas) == 1 else _grouped_folds(groups, self.cv)
        self.cv_results_ = {"alpha": alphas, "mse": [], "folds": 0 if folds is None else len(folds)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
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
        self.n_not_converged_ = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        self.coef_ = np.asarray(reg.coef_, dtype=np.float64).reshape(-1).copy()
        self.intercept_ = float(np.asarray(reg.intercept_).reshape(-1)[0])
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X) -> np.ndarray:
        """Predicted standardised human score ``w . x + b``."""
        return np.asarray(X, dtype=np.float64) @ self.coef_ + self.intercept_

    def predict(self, X) -> np.ndarray:
        """Predicted human score on its original scale."""
        return self.decision_function(X) * self.target_scale_ + self.target_mean_


class UniformCombiner(BaseEstimator):
    """ULC (Giménez & Màrquez 2008, §3.1): every normalised metric weighs 1/m; nothing is learned from judgments."""

    def fit(self, X, y=None, groups=None) -> "UniformCombiner":
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] == 0:
            raise InputError(f"X must be a (rows, features) matrix with at least one feature, not {X.shape}")
        self.coef_ = np.full(X.shape[1], 1.0 / X.shape[1])
        self.intercept_ = 0.0
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X) -> np.ndarray:
        return np.asarray(X, dtype=np.float64) @ self.coef_ + self.intercept_


# -- training ---------------------------------------------------------------------------------------

@dataclass
class TrainOptions:
    """How to train: method, regressor, parameter grids and inner folds."""

    method: str = "pairwise-lr"
    regressor: str = "ridge"
    Cs: Sequence[float] = DEFAULT_CS
    alphas: Sequence[float] = DEFAULT_ALPHAS
    inner_folds: int = 5
    name: str = "tuned"

    def check(self) -> None:
        if self.method not in METHOD_NAMES:
            raise OptionError(f"unknown method {self.method!r}; choose one of {list(METHOD_NAMES)}")
        if self.regressor not in REGRESSORS:
            raise OptionError(f"unknown regressor {self.regressor!r}; choose one of {list(REGRESSORS)}")

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


def fit_model(data: TrainingData, options: Optional[TrainOptions] = None, rows: Optional[np.ndarray] = None,
              entries: Optional[List[MetricEntry]] = None) -> TunedModel:
    """Fit a model on ``data`` (on the rows where ``rows`` is True, whole segments; default all)."""
    options = options or TrainOptions()
    options.check()
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
        est = PairwiseLogisticRanker(Cs=options.Cs, cv=options.inner_folds).fit(X, pairs.as_array(), pairs.segment)
        chosen = {"C": est.C_, "cv": est.cv_results_, "pairs": len(pairs)}
    elif options.method == "regression":
        y = np.where(train, data.targets, np.nan)
        if not np.isfinite(y).any():
            raise InputError("no regression targets (call training_data(..., targets=True))")
        est = RegressionCombiner(kind=options.regressor, alphas=options.alphas,
                                 cv=options.inner_folds).fit(X, y, data.segment)
        chosen = {"alpha": est.alpha_, "cv": est.cv_results_, "not_converged": est.n_not_converged_,
                  "target_mean": est.target_mean_,
                  "target_scale": est.target_scale_, "targets": int(np.isfinite(y).sum())}
    else:
        est = UniformCombiner().fit(X[train])
    training = {
        "testbeds": data.sources,
        "rows": int(train.sum()),
        "judgments": data.pairs.kind,
        "pairs": len(data.pairs) if rows is None else int((train[data.pairs.better]).sum()),
        "min_diff": data.pairs.min_diff,
        "estimator": {"class": type(est).__name__, "params": _json_params(est.get_params()), **chosen},
        "analysers": {e.spec: _analysers(e) for e in entries},  # load_model refuses the model when they change
    }
    return TunedModel(entries, lo, hi, est.coef_, float(est.intercept_), options.model_method, options.name,
                      data.per, {g: {"lo": r[0].tolist(), "hi": r[1].tolist()} for g, r in per_group.items()},
                      training)


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
    """Out-of-fold interpolated scores of every row (folds grouped by segment or test bed) and each fold's model."""

    raw: np.ndarray
    fold: np.ndarray
    models: List[TunedModel] = field(repr=False)
    by: str = "segment"  # what the folds keep whole: "segment" or "testbed"

    @property
    def folds(self) -> int:
        return len(self.models)


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
        splits = [(np.flatnonzero(data.source != k), np.flatnonzero(data.source == k))
                  for k in range(len(data.sources))]
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
        raw[test_rows] = model.raw_scores(data.scores[:, test_rows])
        fold[test_rows] = k
        models.append(model)
    return CrossValidation(raw, fold, models, by)


def pair_kendall(row_scores: np.ndarray, pairs: TrainingPairs, ties: str = "discordant") -> KendallLikeResult:
    """WMT12 Kendall of per-row scores over training pairs (human ties already left out)."""
    s = np.asarray(row_scores, dtype=np.float64)
    return wmt_kendall(s[pairs.better], s[pairs.worse], None, variant="wmt12", ties=ties)
