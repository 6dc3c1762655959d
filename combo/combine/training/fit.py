"""Fitting a tuned metric: the options, one model, cross-validation.

:func:`fit_model` turns :class:`~.data.TrainingData` into a
:class:`~combo.metrics.tuned.TunedModel` with the method the options name
(pairwise-lr, direct, regression or ULC); :func:`cross_validate` gives
out-of-fold scores with scikit-learn's splitters (``GroupKFold`` over segments,
``LeaveOneGroupOut`` over test beds). Model selection only ever sees the
training folds.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import LeaveOneGroupOut

from ...errors import InputError, OptionError
from ...meta.objectives import get_objective
from ...metrics.external import without_inputs
from ...metrics.tuned import CV_BY, METHOD_NAMES, OUTPUT_CHOICES, REGRESSORS, MetricEntry, TunedModel
from ...scoring import ScoreTable
from ...testbed import Testbed
from ..ulc import fit_minmax
from .data import TrainingData, _features, judged_blocks, preference_rows, training_data
from .direct import DirectCombiner, calibrate
from .estimators import (DEFAULT_ALPHAS, DEFAULT_CS, PairwiseLogisticRanker, RegressionCombiner, UniformCombiner,
                         _grouped_folds)


@dataclass
class TrainOptions:
    """How to train: method, regressor, objective, output, parameter grids and inner folds.

    ``method="auto"`` is ``direct`` (weights searched for ``objective``,
    :mod:`combo.meta.objectives`) on absolute judgments and ``pairwise-lr``
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
        if self.method not in METHOD_NAMES:
            raise OptionError(f"unknown method {self.method!r}; choose one of {list(METHOD_NAMES)}")
        if self.regressor not in REGRESSORS:
            raise OptionError(f"unknown regressor {self.regressor!r}; choose one of {list(REGRESSORS)}")
        get_objective(self.objective)
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
    from ...metrics.registry import get_metric

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



def _fit_direct(data: TrainingData, X: np.ndarray, train: np.ndarray, options: TrainOptions):
    """Weights searched for ``options.objective`` on the training rows (:func:`.direct.search_weights`)."""
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
    chosen = {"objective": found.objective, "objective_value": found.value,
              "uniform_value": found.uniform_value, "evaluations": found.evaluations,
              "selected": int((found.weights > 0).sum())}
    return est, chosen


def _analysers(entry: MetricEntry) -> str:
    from ...metrics.registry import get_metric
    from ...metrics.base import analyser_versions

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

