"""The learners under scikit-learn's estimator contract: check_estimator, GroupKFold / cross_val_score /
GridSearchCV with groups on a real WMT12 slice, non-convergence, and model files written before the contract."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import combo
from combo import example_path
from combo.combine.training import (PairwiseLogisticRanker, RegressionCombiner, TrainOptions, UniformCombiner,
                                 preference_rows, train_model, training_data)
from combo.normalise import minmax_normalise
from combo.meta.pairwise import wmt_kendall

MODELS = Path(__file__).parent / "models"


@parametrize_with_checks([PairwiseLogisticRanker(), RegressionCombiner(), RegressionCombiner(kind="svr"),
                          UniformCombiner()])
def test_scikit_learn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # liblinear on the checks' tiny data sets
        check(estimator)


@pytest.fixture(scope="module")
def wmt12_slice(data):
    """WMT12 cs-en, first 150 segments (6 systems), chrF, BLEU and TER; preferences as ranker input."""
    tb = combo.load_testbed(data / "wmt12", lp="cs-en").subset(range(150))
    table = combo.score_testbed(tb, ["chrf", "bleu", "ter"])
    d = training_data([(tb, table)])
    s = d.scores
    X = minmax_normalise(s, s.min(axis=1), s.max(axis=1), d.higher_is_better).T  # label-free ranges
    return (X, d.pairs) + preference_rows(X, d.pairs)


def _routed(est):
    return est.set_fit_request(groups=True, query=True).set_score_request(groups=True, query=True)


def test_cross_val_score_with_group_kfold_on_real_judgments(wmt12_slice):
    X, pairs, Xp, yp, segment, query = wmt12_slice
    assert len(pairs) > 400
    cv = GroupKFold(n_splits=4)
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(_routed(PairwiseLogisticRanker(Cs=(1.0,))), Xp, yp, cv=cv,
                                 params={"groups": segment, "query": query})
    assert len(scores) == 4
    # each fold's score is the WMT12 Kendall (ties discordant) of a model trained on the other segments only
    for score, (train, test) in zip(scores, cv.split(Xp, yp, groups=segment)):
        assert not set(segment[train]) & set(segment[test])
        est = PairwiseLogisticRanker(Cs=(1.0,)).fit(Xp[train], yp[train], groups=segment[train], query=query[train])
        s = est.predict(Xp[test])
        assert score == pytest.approx(wmt_kendall(s[0::2], s[1::2], None, variant="wmt12", ties="discordant").value)
    # the ULC baseline is scored the same way: nothing learned, the Kendall of the mean feature on each fold
    with sklearn.config_context(enable_metadata_routing=True):
        ulc = cross_val_score(UniformCombiner().set_score_request(groups=True, query=True), Xp, yp, cv=cv,
                              params={"groups": segment, "query": query})
    for score, (_, test) in zip(ulc, cv.split(Xp, yp, groups=segment)):
        s = Xp[test].mean(axis=1)
        assert score == pytest.approx(wmt_kendall(s[0::2], s[1::2], None, variant="wmt12", ties="discordant").value)


def test_grid_search_over_c_with_groups(wmt12_slice):
    X, pairs, Xp, yp, segment, query = wmt12_slice
    grid = {"Cs": [(0.01,), (1.0,), (100.0,)]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(_routed(PairwiseLogisticRanker()), grid, cv=GroupKFold(n_splits=3)).fit(
            Xp, yp, groups=segment, query=query)
    means = search.cv_results_["mean_test_score"]
    assert search.best_params_["Cs"] == grid["Cs"][int(np.argmax(means))]
    refit = PairwiseLogisticRanker(Cs=search.best_params_["Cs"]).fit(Xp, yp, groups=segment, query=query)
    assert np.array_equal(search.best_estimator_.coef_, refit.coef_)
    # the ranker's own search over the same grid (pooled held-out pairs) sees the same folds of segments
    own = PairwiseLogisticRanker(Cs=(0.01, 1.0, 100.0), cv=3).fit(Xp, yp, groups=segment, query=query)
    assert own.cv_results_["folds"] == 3 and own.n_pairs_ == len(pairs)


def test_newton_non_convergence_warns_and_is_counted(wmt12_slice):
    X, pairs, Xp, yp, segment, query = wmt12_slice
    # one Newton step from w = 0 never meets the tolerance 1e-10: 2 C x 3 folds + the final fit stop at max_iter
    with pytest.warns(ConvergenceWarning, match=r"^7 newton-cholesky fit\(s\) stopped at max_iter"):
        est = PairwiseLogisticRanker(Cs=(0.1, 10.0), cv=3, max_iter=1).fit(Xp, yp, groups=segment, query=query)
    assert est.n_not_converged_ == 7 and est.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert PairwiseLogisticRanker(Cs=(0.1, 10.0), cv=3).fit(Xp, yp, groups=segment,
                                                                 query=query).n_not_converged_ == 0


@pytest.mark.parametrize("path, method, judgments", [("example_pairwise_lr_before_estimators.json", "pairwise-lr",
                                                      "auto"),
                                                     ("example_ridge_before_estimators.json", "regression",
                                                      "scores")])
def test_models_written_before_the_contract_load_and_training_is_unchanged(path, method, judgments):
    """The files were written by the previous learners (fit(X, pairs, groups), the hand-written Newton solver);
    they still load, and training on the same data gives the same chosen parameter, cross-validation curve,
    normalisation and, to the old solver's precision, weights and bias."""
    old = combo.load_model(MODELS / path)
    doc = json.loads((MODELS / path).read_text())
    assert "min_diff" not in doc["training"]["estimator"]["params"]  # the old parameters
    tb = combo.load_testbed(example_path())
    table = combo.score_testbed(tb, old.model.specs)
    new = train_model([(tb, table)], TrainOptions(method=method, name=old.model.name), judgments=judgments)
    assert np.allclose(new.weights, old.model.weights, rtol=0, atol=1e-5) and new.bias == pytest.approx(old.model.bias)
    assert np.array_equal(new.lo, old.model.lo) and np.array_equal(new.hi, old.model.hi)
    before, now = doc["training"]["estimator"], new.training["estimator"]
    for key in ("C", "alpha", "pairs", "targets"):
        assert now.get(key) == before.get(key), key
    # the cross-validation curve to the last bits only: ridge's solve sums in the BLAS build's order
    assert {k: v for k, v in now["cv"].items() if k != "mse"} == {k: v for k, v in before["cv"].items() if k != "mse"}
    assert now["cv"].get("mse", []) == pytest.approx(before["cv"].get("mse", []), rel=1e-13, abs=0)


def test_cli_train_counts_fits_that_did_not_converge(tmp_path):
    from click.testing import CliRunner

    from combo.cli import main

    out = tmp_path / "svr.json"
    args = ["train", "--testbed", "example", "-m", "bleu,chrf,ter,rouge-l", "--method", "regression", "--regressor",
            "svr", "--folds", "3", "-q", "--out", str(out)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    recorded = json.loads(out.read_text())["training"]["estimator"]["not_converged"]
    assert recorded > 0  # liblinear's SVR stops at max_iter on this small problem for weak regularisation
    assert (f"note: fits stopped at the iteration limit before converging (ConvergenceWarning): {recorded} training "
            "the model") in res.output and "Warning:" not in res.output  # counted, not a Python warning
    res = CliRunner().invoke(main, args + ["--format", "json"])
    assert json.loads(res.output)["not_converged"]["final"] == recorded
