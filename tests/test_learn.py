"""Learned combinations: training pairs (hand-worked), estimators on synthetic data, grouped CV, combo train."""

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.exceptions import ConvergenceWarning

import combo
from combo import InputError, OptionError, Preference, Score, Segment, Testbed, load_testbed, score_testbed
from combo import example_path
from combo.cli import main
from combo.combine.training.estimators import _fit_logistic, _grouped_folds
from combo.combine.training import (PairwiseLogisticRanker, RegressionCombiner, TrainOptions, UniformCombiner,
                                 cross_validate, fit_model,
                                 pair_kendall, pairs_from_testbed, preference_pairs, targets_from_testbed,
                                 train_model, training_data)
from combo.combine.ulc import ulc
from combo.evaluate import MetaEvaluator
from combo.meta.pairwise import wmt_kendall

SPECS = ["bleu", "chrf", "ter", "rouge-l"]


def _tiny(preferences=(), scores=()):
    """3 segments; systems A, B, C on segments 0 and 1; only A on segment 2."""
    tb = Testbed(name="tiny", segments=[Segment(str(i), references=[r]) for i, r in
                                        enumerate(["the cat sat", "a dog ran", "it rains"])])
    tb.add_system("A", {0: "the cat sat", 1: "a dog", 2: "it rains"})
    tb.add_system("B", {0: "cat", 1: "a dog ran", })
    tb.add_system("C", {0: "the cat", 1: "dog ran"})
    tb.preferences = list(preferences)
    tb.scores = list(scores)
    return tb.validate()


@pytest.fixture(scope="module")
def example():
    tb = load_testbed(example_path())
    return tb, score_testbed(tb, SPECS)


# -- pairs ------------------------------------------------------------------------------------------

def test_pairs_from_rankings_keep_each_judge_and_drop_ties():
    # Rows of the score table: system by system, segments in order:
    # A: rows 0 (seg 0), 1 (seg 1), 2 (seg 2); B: 3 (seg 0), 4 (seg 1); C: 5 (seg 0), 6 (seg 1).
    prefs = [Preference(0, "A", "B", judge="j1"), Preference(0, "A", "B", judge="j2"),  # two judges: 2 pairs
             Preference(0, "B", "C", judge="j1", tie=True),                             # tie: left out
             Preference(1, "C", "A", judge="j3")]
    tb = _tiny(prefs)
    table = score_testbed(tb, ["chrf"])
    pairs = pairs_from_testbed(tb, table)
    assert pairs.kind == "rankings"
    assert pairs.as_array().tolist() == [[0, 3], [0, 3], [6, 1]]
    assert pairs.segment.tolist() == [0, 0, 1]
    assert pairs.ties_dropped == 1 and pairs.few_candidates == 0 and pairs.unscored == 0


def test_pairs_from_scores_threshold_and_few_candidates():
    # segment 0: A = mean(80, 100) = 90, B = 60, C = 70 -> |A-B| = 30 > 25: A over B; |A-C| = 20, |C-B| = 10: none
    # segment 1: A = 10, B = 35, C = 10 -> |B-A| = 25 is not MORE than 25: none; |B-C| = 25: none; A = C: none
    # segment 2: only A is judged: fewer than 2 candidates, no pairs, counted
    scores = [Score("A", 0, 80, "r1"), Score("A", 0, 100, "r2"), Score("B", 0, 60), Score("C", 0, 70),
              Score("A", 1, 10), Score("B", 1, 35), Score("C", 1, 10), Score("A", 2, 50)]
    tb = _tiny(scores=scores)
    table = score_testbed(tb, ["chrf"])
    pairs = pairs_from_testbed(tb, table, min_diff=25)
    assert pairs.kind == "scores" and pairs.min_diff == 25
    assert pairs.as_array().tolist() == [[0, 3]]
    assert pairs.below_threshold == 5 and pairs.few_candidates == 1
    # min_diff 24: segment 1 adds B over A (rows 4, 1) and B over C (rows 4, 6)
    pairs = pairs_from_testbed(tb, table, min_diff=24)
    assert sorted(map(tuple, pairs.as_array().tolist())) == [(0, 3), (4, 1), (4, 6)]
    # default: 25 % of the observed range of mean scores (90 - 10) = 20
    pairs = pairs_from_testbed(tb, table)
    assert pairs.min_diff == pytest.approx(20.0)
    assert sorted(map(tuple, pairs.as_array().tolist())) == [(0, 3), (4, 1), (4, 6)]
    # regression targets: the mean score of each candidate
    targets, kind = targets_from_testbed(tb, table)
    assert kind == "scores:score"
    assert targets.tolist() == [90, 10, 50, 60, 35, 70, 10]
    # the same matrix meta-evaluation correlates with
    assert np.array_equal(MetaEvaluator(tb, table).human[table.row_system, table.row_segment], targets)


def test_win_shares_are_one_definition_for_targets_and_meta_evaluation():
    # segment 0: A beats B twice (two judges), B and C tie (left out); segment 1: C beats A
    prefs = [Preference(0, "A", "B", judge="j1"), Preference(0, "A", "B", judge="j2"),
             Preference(0, "B", "C", judge="j1", tie=True), Preference(1, "C", "A", judge="j3")]
    tb = _tiny(prefs)
    table = score_testbed(tb, ["chrf"])
    shares = tb.win_share_matrix(table.systems)  # systems A, B, C x segments 0, 1, 2
    assert np.array_equal(shares, [[1.0, 0.0, np.nan], [0.0, np.nan, np.nan], [np.nan, 1.0, np.nan]],
                          equal_nan=True)
    targets, kind = targets_from_testbed(tb, table)
    # rows: A 0, 1, 2; B 0, 1; C 0, 1
    assert kind == "rankings:wins" and np.array_equal(targets, [1.0, 0.0, np.nan, 0.0, np.nan, np.nan, 1.0],
                                                      equal_nan=True)
    ev = MetaEvaluator(tb, table)
    assert ev.aspect == "rr-wins" and np.array_equal(ev.human, shares, equal_nan=True)


def test_pairs_need_judgments_and_valid_options():
    tb = _tiny()
    table = score_testbed(tb, ["chrf"])
    with pytest.raises(InputError, match="no human judgments"):
        pairs_from_testbed(tb, table)
    tb = _tiny([Preference(0, "A", "B")])
    with pytest.raises(InputError, match="no absolute scores"):
        pairs_from_testbed(tb, table, judgments="scores")
    with pytest.raises(OptionError):
        pairs_from_testbed(tb, table, judgments="votes")
    tb = _tiny(scores=[Score("A", 0, 1.0), Score("B", 0, 2.0)])
    with pytest.raises(OptionError, match="min_diff"):
        pairs_from_testbed(tb, table, min_diff=-1)


def test_rankings_pairs_agree_with_the_meta_evaluator(example):
    tb, table = example
    pairs = pairs_from_testbed(tb, table)
    ev = MetaEvaluator(tb, table)
    for k, name in enumerate(table.metrics):
        sign = 1 if table.higher_is_better[k] else -1
        for ties in ("discordant", "excluded"):
            ev.kendall_ties = ties
            assert pair_kendall(sign * table.segment[k], pairs, ties).value == pytest.approx(
                ev.quality([k], "wmt_kendall", "ulc").value)


def test_training_data_joins_testbeds_with_separate_segments_and_ranges(example):
    tb, table = example
    half = tb.subset(range(12), name="first")
    other = tb.subset(range(12, 24), name="second")
    sources = [(half, score_testbed(half, SPECS)), (other, score_testbed(other, SPECS))]
    data = training_data(sources)
    assert data.n_rows == 96 and len(data.pairs) == len(pairs_from_testbed(tb, table))
    assert set(data.segment[data.source == 0]) == set(range(12))
    assert set(data.segment[data.source == 1]) == set(range(12, 24))
    assert set(data.norm_group) == {"first", "second"}
    model = fit_model(data, TrainOptions(method="ulc"))  # ranges per test bed; scoring uses them pooled
    first, second = model.group_ranges["first"], model.group_ranges["second"]
    assert np.array_equal(model.lo, np.minimum(first["lo"], second["lo"]))
    assert np.array_equal(model.hi, np.maximum(first["hi"], second["hi"]))
    with pytest.raises(InputError, match="other metrics"):
        training_data([sources[0], (other, score_testbed(other, ["chrf"]))])


# -- estimators -----------------------------------------------------------------------------------

def _synthetic(n_segments=60, per_segment=5, noise=0.05, seed=0):
    """Candidates with 3 features; the human prefers higher feature 0 (plus a little noise).

    Returns X, the human grade of each row (its utility), the segment of each row, and the
    pairs (better, worse) a human would state within each segment."""
    rng = np.random.default_rng(seed)
    X = rng.random((n_segments * per_segment, 3))
    utility = X[:, 0] + noise * rng.standard_normal(len(X))
    segment = np.repeat(np.arange(n_segments), per_segment)
    pairs = [(i, j) for s in range(n_segments) for i in range(s * per_segment, (s + 1) * per_segment)
             for j in range(s * per_segment, (s + 1) * per_segment) if utility[i] > utility[j]]
    return X, utility, segment, np.array(pairs)


def test_pairwise_ranker_learns_the_preferred_feature():
    X, utility, segment, pairs = _synthetic()
    est = PairwiseLogisticRanker(cv=5).fit(X, utility, groups=segment)
    assert est.coef_[0] > 0
    assert np.all(np.abs(est.coef_[1:]) < 0.1 * est.coef_[0])
    assert est.intercept_ == 0.0 and est.C_ in est.Cs and len(est.cv_results_["kendall"]) == len(est.Cs)
    assert est.n_pairs_ == len(pairs) and est.n_features_in_ == 3 and est.n_not_converged_ == 0
    # score: WMT12 Kendall (ties discordant) of the predictions over the segment's pairs, as combo.meta computes it
    s = est.predict(X)
    assert np.allclose(s, X @ est.coef_)
    expected = wmt_kendall(s[pairs[:, 0]], s[pairs[:, 1]], None, variant="wmt12", ties="discordant").value
    assert est.score(X, utility, groups=segment) == pytest.approx(expected) and expected > 0.8


def test_preference_pairs_compare_rows_of_one_query_only():
    y = np.array([3.0, 1.0, 2.0, 5.0, 5.0, 0.0])
    seg = np.array([0, 0, 0, 1, 1, 1])
    better, worse, group = preference_pairs(y, seg)
    assert sorted(zip(better.tolist(), worse.tolist())) == [(0, 1), (0, 2), (2, 1), (3, 5), (4, 5)]  # 3 = 4: a tie
    assert group.tolist() == [0, 0, 0, 1, 1]
    assert len(preference_pairs(y, seg, min_diff=1.5)[0]) == 3  # 3-1, 5-0, 5-0
    assert len(preference_pairs(y)[0]) == 14  # no groups: every two rows with different grades
    # each preference a query of two rows (several judges on one segment), grouped by segment
    better, worse, group = preference_pairs(np.tile([1.0, 0.0], 3), np.repeat([7, 8, 8], 2), np.repeat([0, 1, 2], 2))
    assert better.tolist() == [0, 2, 4] and worse.tolist() == [1, 3, 5] and group.tolist() == [7, 8, 8]
    with pytest.raises(InputError, match="spans several groups"):
        preference_pairs(np.array([1.0, 0.0]), np.array([0, 1]), np.array([0, 0]))


def test_pairwise_ranker_follows_sklearn_conventions():
    est = PairwiseLogisticRanker(Cs=(0.1, 1.0), cv=3)
    assert est.get_params() == {"Cs": (0.1, 1.0), "cv": 3, "min_diff": 0.0, "max_iter": 100, "tol": 1e-10}
    assert not [k for k in vars(est) if k.endswith("_")]  # nothing learned before fit
    X, utility, segment, _ = _synthetic(10)
    assert est.fit(X, utility, groups=segment) is est
    with pytest.raises(InputError, match="no training pairs"):
        PairwiseLogisticRanker().fit(X, np.zeros(len(X)))
    with pytest.raises(OptionError):
        PairwiseLogisticRanker(Cs=(0.0,)).fit(X, utility)
    with pytest.raises(ValueError, match="3 features"):
        est.predict(X[:, :2])  # n_features_in_ is checked


def test_logistic_solver_on_half_the_rows_is_the_doubled_problem():
    """Every other difference negated at 2C (the solver's shortcut) gives the weights of the documented
    objective, scikit-learn's LogisticRegression on each difference labelled 1 and its negation labelled 0."""
    from scipy.special import expit
    from sklearn.linear_model import LogisticRegression

    X, _, _, pairs = _synthetic(20, noise=0.3, seed=1)
    diff = X[pairs[:, 0]] - X[pairs[:, 1]]
    for C in (0.01, 1.0, 100.0):
        ours, _, converged = _fit_logistic(diff, C)
        assert converged
        ref = LogisticRegression(C=C, fit_intercept=False, solver="lbfgs", tol=1e-12, max_iter=100000).fit(
            np.vstack([diff, -diff]), np.r_[np.ones(len(diff)), np.zeros(len(diff))]).coef_[0]
        assert np.allclose(ours, ref, rtol=1e-6, atol=1e-8)
        assert np.abs(ours - 2 * C * diff.T @ expit(-(diff @ ours))).max() < 1e-6  # the gradient vanishes
    w, _, _ = _fit_logistic(diff[:1], 1.0)  # one pair: both labels still occur
    assert w @ diff[0] > 0


@pytest.mark.parametrize("kind", ["ridge", "svr"])
def test_regression_learns_known_weights(kind):
    rng = np.random.default_rng(3)
    X = rng.random((400, 3))
    y = 50 + 20 * X[:, 0] - 10 * X[:, 1] + 0.5 * rng.standard_normal(400)
    groups = np.repeat(np.arange(80), 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = RegressionCombiner(kind=kind).fit(X, y, groups)
    # fits stopped at max_iter (liblinear's SVR at weak regularisation) are counted and warned about once
    warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(warned) == (est.n_not_converged_ > 0) and (kind == "svr" or est.n_not_converged_ == 0)
    w = est.coef_ * est.target_scale_  # back on the human scale
    assert w[0] == pytest.approx(20, rel=0.1) and w[1] == pytest.approx(-10, rel=0.1) and abs(w[2]) < 1
    assert est.alpha_ in est.alphas
    assert np.mean(np.abs(est.predict(X) - y)) < 1.0 and est.score(X, y) > 0.99  # R^2
    with pytest.raises(OptionError, match="regressor"):
        RegressionCombiner(kind="forest").fit(X, y)
    y[::7] = np.nan  # unjudged rows: the caller leaves them out (fit_model does)
    with pytest.raises(ValueError, match="NaN"):
        RegressionCombiner(kind=kind).fit(X, y, groups)


def test_uniform_combiner_is_ulc(example):
    tb, table = example
    data = training_data([(tb, table)])
    model = fit_model(data, TrainOptions(method="ulc"))
    assert np.allclose(model.weights, 0.25) and model.bias == 0
    # on the training data ULC-the-model equals ULC-the-function (same ranges)
    assert np.allclose(model.raw_scores(table.segment), ulc(table.segment, table.higher_is_better))
    ulc_est = UniformCombiner().fit(np.ones((3, 2)))
    assert ulc_est.coef_.tolist() == [0.5, 0.5] and np.allclose(ulc_est.predict([[1.0, 0.0], [0.2, 0.4]]), [0.5, 0.3])
    assert ulc_est.score([[1.0, 0.0], [0.2, 0.4], [0.0, 0.0]], [2, 1, 0]) == 1.0


# -- grouped splits, no peeking ---------------------------------------------------------------------

def test_grouped_folds_never_split_a_group():
    groups = np.random.default_rng(0).integers(0, 37, size=500)
    folds = _grouped_folds(groups, 10)
    assert len(folds) == 10
    seen = np.zeros(500, int)
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])
        seen[test] += 1
    assert np.all(seen == 1)
    assert _grouped_folds(np.zeros(5), 5) is None  # a single group: no split


def test_cross_validation_keeps_segments_whole_and_never_sees_test_rows(example):
    tb, table = example
    data = training_data([(tb, table)])
    # an extreme score on segment 0: only the fold that tests segment 0 must not include it in its ranges
    data.scores[1, data.segment == 0] = 50.0
    cv = cross_validate(data, TrainOptions(Cs=(1.0,)), folds=6)
    assert cv.folds == 6 and np.all(cv.fold >= 0) and np.isfinite(cv.raw).all()
    for seg in np.unique(data.segment):
        assert len(set(cv.fold[data.segment == seg])) == 1
    k0 = cv.fold[data.segment == 0][0]
    for k, model in enumerate(cv.models):
        assert (model.hi[1] == 50.0) == (k != k0)
        test_rows = cv.fold == k
        assert model.training["rows"] == int((~test_rows).sum())


def test_leaving_one_testbed_out_never_sees_the_held_out_testbed(example):
    import copy

    tb, table = example
    tb2 = copy.deepcopy(tb)
    tb2.name = "example-copy"
    table2 = copy.deepcopy(table)
    table2.segment[1] *= 10.0  # ranges only the fold that trains on the copy may see
    data = training_data([(tb, table), (tb2, table2)])
    cv = cross_validate(data, TrainOptions(Cs=(1.0,)), by="testbed")
    assert cv.by == "testbed" and cv.folds == 2
    assert np.array_equal(cv.fold, data.source) and np.isfinite(cv.raw).all()
    for k, model in enumerate(cv.models):
        groups = set(model.to_dict()["normalisation"]["groups"])
        assert groups == {[tb.name, tb2.name][1 - k]}, (k, groups)
        assert (model.hi[1] > table.segment[1].max()) == (k == 0)  # only the model trained on the copy
    with pytest.raises(InputError, match="at least 2 test beds"):
        cross_validate(training_data([(tb, table)]), TrainOptions(Cs=(1.0,)), by="testbed")
    with pytest.raises(OptionError, match="'segment' or 'testbed'"):
        cross_validate(data, TrainOptions(Cs=(1.0,)), by="system")


def test_train_model_on_example(example):
    tb, table = example
    model = train_model([(tb, table)])
    assert model.method == "pairwise-lr" and model.specs == SPECS
    assert model.training["estimator"]["C"] in model.training["estimator"]["params"]["Cs"]
    desc = model.training["testbeds"][0]
    assert desc["pairs"] == 135 and desc["ties_dropped"] == 9 and desc["segments"] == 24
    # trained on these pairs, the tuned metric ranks them better than chance and than the worst metric
    tau = pair_kendall(model.raw_scores(table.segment), pairs_from_testbed(tb, table)).value
    assert tau > 0.6
    reg = train_model([(tb, table)], TrainOptions(method="regression"), judgments="scores")
    assert reg.method == "regression-ridge" and reg.training["estimator"]["targets"] == 96


# -- combo train ------------------------------------------------------------------------------------

def _run(*args):
    return CliRunner().invoke(main, list(args))


def test_cli_train_prints_cross_validated_quality(tmp_path):
    out = tmp_path / "model.json"
    res = _run("train", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter", "--out", str(out),
               "--folds", "4", "-q")
    assert res.exit_code == 0, res.output
    assert "cross-validated quality (4 folds grouped by segment" in res.output
    assert "ULC (all metrics)" in res.output and "best single: chrf" in res.output
    doc = json.loads(out.read_text())
    assert doc["format"] == "combo-tuned-metric" and [m["spec"] for m in doc["metrics"]] == ["bleu", "chrf", "ter"]
    assert doc["name"] == "model"


def test_cli_train_json_and_methods(tmp_path):
    for method in ("pairwise-lr", "regression", "ulc"):
        out = tmp_path / f"{method}.json"
        res = _run("train", "--testbed", "example", "-m", "chrf,ter", "--method", method, "--out", str(out),
                   "--folds", "3", "--format", "json", "-q", "--judgments", "scores",
                   *(["--min-diff", "1"] if method == "pairwise-lr" else []))
        assert res.exit_code == 0, res.output
        doc = json.loads(res.output)
        assert doc["cross_validation"]["folds"] == 3
        # absolute judgments: the WMT23 statistics per test bed and their mean
        assert set(doc["cross_validation"]["tuned"]["mean"]) == {"seg_pearson", "seg_acc_eq", "sys_pearson",
                                                                "sys_accuracy", "average"}
        assert doc["training"]["judgments"] == "scores" and doc["training"]["min_diff"] == 1
        assert out.exists()
        # the ULC row against scipy: chrF and TER min-max normalised over the test bed (TER flipped), their mean,
        # against each candidate's mean adequacy
        ulc_pearson = doc["cross_validation"]["ulc"]["mean"]["seg_pearson"]
        assert ulc_pearson == pytest.approx(_example_ulc_pearson(), abs=1e-12)


def _example_ulc_pearson():
    from scipy.stats import pearsonr

    tb = combo.load_testbed("example")
    table = combo.score_testbed(tb, ["chrf", "ter"])
    chrf, ter = table.segment
    ulc = ((chrf - chrf.min()) / np.ptp(chrf) + (ter.max() - ter) / np.ptp(ter)) / 2
    ratings = {}
    for s in tb.scores:
        ratings.setdefault((s.system, s.segment), []).append(s.value)
    human = [np.mean(ratings[(table.systems[r], g)]) for r, g in zip(table.row_system, table.row_segment)]
    return pearsonr(ulc, human)[0]


def test_cli_train_on_several_language_pairs_leaving_one_out(data, tmp_path):
    out = tmp_path / "two.json"
    res = _run("train", "--testbed", str(data / "wmt12"), "--lp", "cs-en,es-en", "-m", "chrf", "-m", "bleu",
               "--cv", "testbed", "--out", str(out), "--format", "json", "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["testbeds"] == ["wmt12.cs-en", "wmt12.es-en"]
    assert [d["pairs"] for d in doc["training"]] == [11021, 9796]  # README-checked counts of the two pairs
    cv = doc["cross_validation"]
    assert cv["grouped_by"] == "testbed" and cv["folds"] == 2 and "mean over 2 test beds" in cv["criterion"]
    # the single metrics' row is the mean of the per-pair WMT12 Kendall (chrF: .237 and .240, README)
    assert cv["single"]["chrf"]["ties_discordant"] == pytest.approx((0.237 + 0.240) / 2, abs=1e-3)
    model = json.loads(out.read_text())
    assert set(model["normalisation"]["groups"]) == {"wmt12.cs-en", "wmt12.es-en"}


def test_cli_train_bad_input_exits_2_without_output(tmp_path):
    root = tmp_path / "tb"
    (root / "systems").mkdir(parents=True)
    (root / "references").mkdir()
    (root / "references" / "r1.txt").write_text("the cat sat\nthe dog ran\n")
    (root / "systems" / "A.txt").write_text("the cat sat\na dog ran\n")
    (root / "systems" / "B.txt").write_text("cat\ndog\n")
    out = tmp_path / "model.json"
    res = _run("train", "--testbed", str(root), "-m", "chrf", "--out", str(out))
    assert res.exit_code == 2 and "no human judgments" in res.output and not out.exists()
    res = _run("train", "--testbed", "example", "-m", "nosuchmetric", "--out", str(out))
    assert res.exit_code == 2 and "unknown metric" in res.output and not out.exists()
    res = _run("train", "--testbed", "example", "-m", "chrf", "--out", str(out), "--folds", "1")
    assert res.exit_code == 2 and not out.exists()
    for inner in ("1", "-3"):  # 1 fold cannot choose C; it silently meant no inner cross-validation
        res = _run("train", "--testbed", "example", "-m", "chrf", "--out", str(out), "--inner-folds", inner)
        assert res.exit_code == 2 and "--inner-folds" in res.output and not out.exists()
    res = _run("train", "--testbed", "example", "-m", "chrf", "--out", str(tmp_path / "no" / "m.json"), "-q")
    assert res.exit_code == 2 and "output folder does not exist" in res.output
    res = _run("train", "--testbed", "example", "-m", "chrf", "--out", str(out), "--cv", "testbed", "-q")
    assert res.exit_code == 2 and "at least two" in res.output and not out.exists()
    res = _run("train", "--testbed", "example", "--lp", "de-en,de-en", "-m", "chrf", "--out", str(out), "-q")
    assert res.exit_code == 2 and "distinct language pairs" in res.output and not out.exists()


def test_a_tuned_metric_knows_its_training_testbeds(example, tmp_path):
    from combo.io.jsonl import write_jsonl

    tb, table = example
    path = tmp_path / "m.json"
    train_model([(tb, table)], TrainOptions(method="ulc")).save(path)
    metric = combo.load_model(path)
    assert metric.trained_on(tb) == "this test bed ('example-de-en', the same texts)"
    assert "same name" in metric.trained_on(tb.subset(range(10)))
    assert metric.trained_on(tb.subset(range(10), name="part")) is None
    # the command line says so wherever it meta-evaluates, and only then
    res = _run("evaluate", "--testbed", "example", "-m", str(path), "-m", "chrf", "--criteria", "wmt_kendall")
    assert res.exit_code == 0, res.output
    assert f"note: {path} was trained on this test bed" in res.output and "in-sample, not held out" in res.output
    other = tmp_path / "part.jsonl"
    write_jsonl(tb.subset(range(12, 24), name="part"), other)
    res = _run("evaluate", "--testbed", str(other), "-m", str(path), "-m", "chrf", "--criteria", "wmt_kendall")
    assert res.exit_code == 0, res.output
    assert "in-sample" not in res.output
