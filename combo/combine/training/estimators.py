"""The estimators of training, with scikit-learn's contract (``check_estimator`` passes).

:class:`PairwiseLogisticRanker` (DiscoTK's pairwise learning to rank,
Guzmán et al. 2014 §4: logistic regression on ``x(a) - x(b)`` labelled 1 and
``x(b) - x(a)`` labelled 0, no intercept since the two signs make the problem
symmetric; pairs formed inside ``fit`` from the human grades ``y`` and
``groups``, :func:`preference_pairs`), C chosen by cross-validation grouped by
segment; :class:`RegressionCombiner` (Albrecht & Hwa 2007: regression of the
human score on the metric scores, ridge or linear SVR); :class:`UniformCombiner`
(ULC, Giménez & Màrquez 2008, the untuned baseline). The direct weight search
is :mod:`.direct`.
"""

from __future__ import annotations

import math
import warnings
from typing import Sequence, Tuple

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ...errors import InputError, OptionError
from ...metrics.tuned import REGRESSORS

DEFAULT_CS = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
DEFAULT_ALPHAS = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)

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

