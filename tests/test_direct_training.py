"""Training for absolute judgments: the objectives of ``combo.meta.objectives`` against their definitions, the
weight search, the pair thresholds by judgment type, ``combo train``'s options and outputs, on hand-made grids
and on WMT23 MQM (en-de, he-en)."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.special import expit
from scipy.stats import kendalltau, pearsonr

import combo
from combo import OptionError
from combo import example_path
from combo.cli import main
from combo.combine.training import calibrate, default_min_diff, search_weights
from combo.meta.objectives import (JudgedBlock, Objective, get_objective, objective_value, registered_objective,
                                   wmt23_statistics)
from combo.meta.wmt23 import seg_acc_eq, wmt23_average, wmt23_tasks
from combo.metrics.tuned import load_model

from wmt23_files import columns as _columns, release_pearsons as _release_pearsons

NAN = np.nan
MODELS = Path(__file__).parent / "models"
STATISTICS = {"seg_pearson", "seg_acc_eq", "sys_pearson", "sys_accuracy", "average"}

# -- a hand-made grid: 3 systems x 4 segments, two cells unrated ------------------------------------------

#: MQM-like human scores (higher is better); segment 1 has a human tie (systems 0 and 1).
H = np.array([[-1.0, -5.0, NAN, 0.0],
              [-2.0, -5.0, -3.0, NAN],
              [0.0, -10.0, -1.0, -4.0]])
#: Metric scores of the rated cells (a metric tie on segment 1 where the humans tie too).
M = np.array([[0.9, 0.2, NAN, 0.8],
              [0.5, 0.2, 0.3, NAN],
              [0.95, 0.1, 0.7, 0.35]])
#: A second language pair, 2 systems x 3 segments, nothing unrated.
HB = np.array([[0.0, -1.0, -2.0],
               [-3.0, -1.0, 0.0]])
MB = np.array([[0.4, 0.5, 0.1],
               [0.3, 0.6, 0.9]])


def _block(human, metric, offset=0, order_seed=0):
    """The JudgedBlock of the rated cells of ``human``, its rows in a shuffled order, and their metric values."""
    s, g = np.nonzero(np.isfinite(human))
    order = np.random.default_rng(order_seed).permutation(len(s))  # rows need not come in grid order
    s, g = s[order], g[order]
    block = JudgedBlock.of(human[s, g], s, g)
    block.rows[block.rows >= 0] += offset
    return block, metric[s, g]


def _rated_mean(x):
    return np.nanmean(x, axis=1)


def test_hand_grid_statistics_follow_their_definitions():
    block, values = _block(H, M)
    assert np.array_equal(np.isfinite(block.human), np.isfinite(H)) and np.allclose(block.matrix(values), M,
                                                                                     equal_nan=True)
    # system scores: the mean of the rated cells, -2, -10/3, -15/4 for the humans, .633, .333, .525 for the metric
    assert np.allclose(block.human_sys, [-2.0, -10.0 / 3, -15.0 / 4])
    msys = _rated_mean(M)
    assert np.allclose(msys, [1.9 / 3, 1.0 / 3, 2.1 / 4])
    got = wmt23_statistics(block, values)
    rated = np.isfinite(H)
    assert got["seg_pearson"] == pytest.approx(pearsonr(M[rated], H[rated])[0], abs=1e-12)
    assert got["sys_pearson"] == pytest.approx(pearsonr(msys, block.human_sys)[0], abs=1e-12)
    # system pairs by hand: humans order 0 > 1 > 2; the metric 0 > 2 > 1: (0, 1) and (0, 2) agree, (1, 2) not
    assert got["sys_accuracy"] == pytest.approx(2 / 3)
    assert got["seg_acc_eq"] == pytest.approx(float(seg_acc_eq(M, H, "item")), abs=1e-12)
    by_hand = (got["sys_accuracy"] + (got["sys_pearson"] + 1) / 2 + (got["seg_pearson"] + 1) / 2
               + got["seg_acc_eq"]) / 4
    reference = wmt23_average(wmt23_tasks(M, H, msys, block.human_sys))
    assert got["average"] == pytest.approx(by_hand, abs=1e-12) and got["average"] == pytest.approx(reference,
                                                                                                    abs=1e-12)
    # one language pair: the wmt23 objective is that average; the others are the statistic itself
    assert objective_value([block], values, "wmt23") == pytest.approx(reference, abs=1e-12)
    assert objective_value([block], values, "acc_eq") == pytest.approx(got["seg_acc_eq"], abs=1e-12)
    assert objective_value([block], values, "seg_pearson") == pytest.approx(got["seg_pearson"], abs=1e-12)
    assert objective_value([block], values, "seg_kendall") == pytest.approx(
        kendalltau(M[rated], H[rated])[0], abs=1e-12)  # tau-b


def test_given_system_scores_replace_the_mean():
    block, values = _block(H, M)
    own = np.array([1.0, 3.0, 2.0])  # 1 > 2 > 0: only the pair (1, 2) agrees with the humans
    got = wmt23_statistics(block, values, sys_scores=own)
    plain = wmt23_statistics(block, values)
    assert got["sys_accuracy"] == pytest.approx(1 / 3)
    assert got["sys_pearson"] == pytest.approx(pearsonr(own, block.human_sys)[0], abs=1e-12)
    assert got["seg_pearson"] == plain["seg_pearson"] and got["seg_acc_eq"] == plain["seg_acc_eq"]
    assert got["average"] == pytest.approx(wmt23_average(wmt23_tasks(M, H, own, block.human_sys)), abs=1e-12)
    assert got["average"] != pytest.approx(plain["average"])


def test_two_language_pairs_pool_system_accuracy_and_average_the_rest():
    a, va = _block(H, M)
    b, vb = _block(HB, MB, offset=len(va), order_seed=1)
    values = np.concatenate([va, vb])
    # system pairs: 2 of 3 agree on the first pair, 0 of 1 on the second (-1 > -4/3 but 1/3 < 0.6): pooled 2/4
    tasks = wmt23_tasks({"a": M, "b": MB}, {"a": H, "b": HB}, {"a": _rated_mean(M), "b": _rated_mean(MB)},
                        {"a": a.human_sys, "b": b.human_sys})
    assert tasks[0] == ("sys_accuracy", pytest.approx(0.5))
    assert objective_value([a, b], values, "wmt23") == pytest.approx(wmt23_average(tasks), abs=1e-12)
    one, two = wmt23_statistics(a, values), wmt23_statistics(b, values)
    assert two["sys_accuracy"] == 0.0
    for objective, key in (("acc_eq", "seg_acc_eq"), ("seg_pearson", "seg_pearson")):
        assert objective_value([a, b], values, objective) == pytest.approx((one[key] + two[key]) / 2, abs=1e-12)
    rated = np.isfinite(H)
    tau = (kendalltau(M[rated], H[rated])[0] + kendalltau(MB.ravel(), HB.ravel())[0]) / 2
    assert objective_value([a, b], values, "seg_kendall") == pytest.approx(tau, abs=1e-12)
    with pytest.raises(OptionError, match="unknown objective 'nope'"):
        objective_value([a, b], values, "nope")


# -- the weight search ----------------------------------------------------------------------------------

def _noise_problem(seed, n_sys=6, n_seg=40, pairs=2):
    """Two language pairs; column 0 is the human score plus small noise, column 1 noise whose mean is 0 for
    every system (useless at system level as well), both min-max normalised as combo's features are."""
    rng = np.random.default_rng(seed)
    blocks, columns, offset = [], [], 0
    for _ in range(pairs):
        s, g = (a.ravel() for a in np.meshgrid(np.arange(n_sys), np.arange(n_seg), indexing="ij"))
        human = np.round(rng.normal(size=n_sys)[s] + rng.normal(size=len(s)), 1)
        block = JudgedBlock.of(human, s, g)
        block.rows[block.rows >= 0] += offset
        offset += len(human)
        blocks.append(block)
        noise = rng.normal(size=len(human))
        noise -= np.bincount(s, noise)[s] / n_seg
        columns.append(np.column_stack([human + 0.05 * rng.normal(size=len(human)), noise]))
    X = np.vstack(columns)
    return (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0)), blocks


@pytest.mark.parametrize("objective", ["wmt23", "acc_eq", "seg_pearson", "seg_kendall"])
def test_search_drops_a_noise_column(objective):
    X, blocks = _noise_problem(0)
    found = search_weights(X, blocks, objective)
    assert found.objective == {"acc_eq": "seg_acc_eq"}.get(objective, objective)  # the old spelling's name today
    assert found.evaluations > 1
    assert np.all(found.weights >= 0) and found.weights.sum() == pytest.approx(1.0)
    assert found.value == pytest.approx(objective_value(blocks, X @ found.weights, objective), abs=1e-12)
    assert found.uniform_value == pytest.approx(objective_value(blocks, X.mean(axis=1), objective), abs=1e-12)
    assert found.value > found.uniform_value
    if objective == "acc_eq":  # flat between tie thresholds: the search may stop short of 0
        assert found.weights[1] < 0.05
    else:
        assert found.weights[1] == 0.0 and found.weights[0] == 1.0


def test_search_is_never_worse_than_uniform_weights():
    """Small random problems (3-5 systems, 3-7 segments, integer MQM-like scores with ties, 2-4 random
    columns): the weights found score at least the uniform weights (ULC) for every objective."""
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n_sys, n_seg = rng.integers(3, 6), rng.integers(3, 8)
        s, g = (a.ravel() for a in np.meshgrid(np.arange(n_sys), np.arange(n_seg), indexing="ij"))
        block = JudgedBlock.of(rng.integers(-5, 1, size=len(s)).astype(float), s, g)
        X = rng.random((len(s), rng.integers(2, 5)))
        for objective in ("wmt23", "acc_eq", "seg_pearson", "seg_kendall"):
            found = search_weights(X, [block], objective)
            assert np.all(found.weights >= 0) and found.weights.sum() == pytest.approx(1.0)
            assert found.value >= found.uniform_value - 1e-12, (seed, objective, found)


def test_pruning_never_falls_below_uniform_weights():
    # a case where pruning at 0.6 would fall below ULC: the search keeps every weight instead
    rng = np.random.default_rng(295)  # the problem generator of the test above, seed 295
    n_sys, n_seg = rng.integers(3, 6), rng.integers(3, 8)
    s, g = (a.ravel() for a in np.meshgrid(np.arange(n_sys), np.arange(n_seg), indexing="ij"))
    block = JudgedBlock.of(rng.integers(-5, 1, size=len(s)).astype(float), s, g)
    X = rng.random((len(s), rng.integers(2, 5)))
    found = search_weights(X, [block], "wmt23", prune=0.6)
    assert found.value >= found.uniform_value


def test_search_refuses_bad_options_and_keeps_one_metric():
    X, blocks = _noise_problem(1, pairs=1)
    with pytest.raises(OptionError, match="unknown objective"):
        search_weights(X, blocks, "kendall")
    with pytest.raises(OptionError, match="prune"):
        search_weights(X, blocks, prune=1.0)
    one = search_weights(X[:, :1], blocks)
    assert one.weights.tolist() == [1.0] and one.value == pytest.approx(one.uniform_value)


def test_calibration_is_least_squares_and_keeps_the_order():
    raw = np.array([0.1, 0.4, NAN, 0.9, 0.5])
    human = np.array([-8.0, -5.0, -1.0, 0.0, NAN])
    a, c = calibrate(raw, human)
    slope, intercept = np.polyfit([0.1, 0.4, 0.9], [-8.0, -5.0, 0.0], 1)
    assert (a, c) == (pytest.approx(slope), pytest.approx(intercept)) and a > 0
    assert calibrate(raw, -human) == (1.0, 0.0)  # a negative slope would reverse the combination's order
    assert calibrate(np.array([0.3, NAN]), np.array([1.0, 2.0])) == (1.0, 0.0)  # fewer than 2 rows
    assert calibrate(np.array([0.3, 0.3]), np.array([1.0, 2.0])) == (1.0, 0.0)  # constant raw score


# -- pair thresholds by judgment type -------------------------------------------------------------------

def test_default_min_diff_by_judgment_type():
    mqm = np.array([-25.0, -3.0, NAN, 0.0])
    assert default_min_diff("mqm", mqm)[0] == 0.0 and default_min_diff("MQM-merged", mqm)[0] == 0.0
    assert default_min_diff("esa", np.array([10.0, 80.0]))[0] == 0.0
    assert default_min_diff("da", np.array([3.0, NAN, 97.0]))[0] == 25.0  # WMT DARR's 25 points on 0-100
    assert default_min_diff("da-sqm", np.array([40.0, 60.0]))[0] == 25.0  # not 25% of the observed range
    assert default_min_diff("da", np.array([-2.0, 1.5]))[0] == pytest.approx(0.875)  # z-scores: 25% of 3.5
    assert default_min_diff("adequacy", np.array([1.0, 2.0, 5.0]))[0] == pytest.approx(1.0)  # 25% of 1..5
    assert default_min_diff(None, np.array([0.0, NAN, 0.4]))[0] == pytest.approx(0.1)
    value, rule = default_min_diff("mqm", mqm)
    assert "every score difference" in rule
    assert "DARR" in default_min_diff("da", np.array([0.0, 100.0]))[1]
    assert "25% of the observed range" in default_min_diff("adequacy", np.array([1.0, 5.0]))[1]


# -- combo train: options ---------------------------------------------------------------------------------

def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_line_error(res, *expected):
    stderr = res.stderr.strip("\n")
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert res.stdout == "" and "\n" not in stderr and stderr.startswith("combo: error: "), stderr
    for text in expected:
        assert text in stderr, stderr
    return stderr


@pytest.mark.parametrize("option, value, expected", [
    ("--objective", "nope", "Invalid value for '--objective': 'nope' is not one of 'wmt23', 'seg_acc_eq', "
                            "'seg_pearson', 'seg_kendall', 'acc_eq'"),
    ("--min-diff", "-1", "Invalid value for '--min-diff'"),
    ("--output", "nope", "Invalid value for '--output': 'nope' is not one of 'auto', 'human', 'linear', 'sigmoid'"),
])
def test_bad_train_options_are_one_line(option, value, expected, tmp_path):
    res = _run("train", "--testbed", "example", "-q", "-m", "bleu", option, value, "--out", tmp_path / "m.json")
    _one_line_error(res, expected)
    assert not (tmp_path / "m.json").exists()


@pytest.fixture(scope="module")
def rankings_only(tmp_path_factory):
    """The example test bed without its absolute scores: relative rankings only."""
    lines = [line for line in example_path().read_text(encoding="utf-8").splitlines()
             if json.loads(line)["type"] not in ("score", "system_score")]
    path = tmp_path_factory.mktemp("rankings") / "rankings.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_direct_on_rankings_names_the_fix_and_the_fix_works(rankings_only, tmp_path):
    out = tmp_path / "m.json"
    common = ("train", "--testbed", rankings_only, "-q", "-m", "bleu", "-m", "chrf", "--folds", "0", "--out", out)
    _one_line_error(_run(*common, "--method", "direct"), "relative rankings", "--method pairwise-lr")
    assert not out.exists()
    res = _run(*common, "--method", "pairwise-lr")
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["method"] == "pairwise-lr" and doc["output"] == "linear"
    # the default method on rankings is that one
    res = _run(*common)
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["method"] == "pairwise-lr"


def test_default_method_follows_the_judgments(tmp_path):
    """The example test bed has both: rankings by default (pairwise-lr), direct with --judgments scores, whose
    1-5 adequacy scale gets 25% of its observed range as the pair threshold."""
    out = tmp_path / "m.json"
    res = _run("train", "--testbed", "example", "-q", "-m", "bleu", "-m", "chrf", "--folds", "0", "--out", out,
               "--judgments", "scores", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["method"] == "direct" and doc["training"]["judgments"] == "scores"
    assert doc["training"]["min_diff_rule"].startswith("adequacy: 25% of the observed range")
    model = json.loads(out.read_text())
    assert model["output"] == "human" and model["training"]["estimator"]["objective"] == "wmt23"
    assert model["training"]["estimator"]["calibration"]["to"].startswith("the training judgments (least squares)")
    # the scale clipped to: the range of the candidates' adequacy (the mean of the raters), read from the file
    ratings = {}
    for line in Path(example_path()).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "score" and record["aspect"] == "adequacy":
            ratings.setdefault((record["system"], record["segment"]), []).append(record["value"])
    means = [np.mean(v) for v in ratings.values()]
    assert model["scale"] == [min(means), max(means)]
    scores = combo.score_testbed(combo.load_testbed("example"), [str(out)]).segment[0]
    assert np.nanmin(scores) >= min(means) and np.nanmax(scores) <= max(means)


# -- WMT23 MQM, en-de and he-en ---------------------------------------------------------------------------

WMT23_METRICS = ("-m", "mtme:XCOMET-Ensemble", "-m", "mtme:MetricX-23", "-m", "chrf")


@pytest.fixture(scope="module")
def wmt23(data, tmp_path_factory):
    """Two models trained by the CLI on both pairs (one score cache): the default (cross-validated, JSON
    output) and --output sigmoid (no cross-validation)."""
    if not (data / "wmt23" / "human-scores" / "he-en.mqm.seg.score").is_file():
        pytest.skip("WMT23 en-de and he-en not in the shared data")
    work = tmp_path_factory.mktemp("wmt23")
    common = ("train", "--testbed", data / "wmt23", "--lp", "en-de,he-en", *WMT23_METRICS, "-q",
              "--cache", work / "cache")
    res = _run(*common, "--cv", "testbed", "--format", "json", "--out", work / "default.json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    done = _run(*common, "--folds", "0", "--output", "sigmoid", "--out", work / "sigmoid.json")
    assert done.exit_code == 0, done.output
    return report, {name: work / f"{name}.json" for name in ("default", "sigmoid")}, work / "cache"


def test_wmt23_train_reports_the_wmt23_statistics_per_pair(data, wmt23):
    report, models, _ = wmt23
    assert report["method"] == "direct"
    cv = report["cross_validation"]
    assert cv["grouped_by"] == "testbed" and cv["folds"] == 2
    for row in ("tuned", "ulc", "best_single"):
        assert set(cv[row]["testbeds"]) == {"wmt23.en-de", "wmt23.he-en"}
        for stats in cv[row]["testbeds"].values():
            assert set(stats) == STATISTICS and all(np.isfinite(v) for v in stats.values())
    # a single metric's statistics against scipy on the release's files, read here
    assert cv["best_single"]["metric"] == "mtme:XCOMET-Ensemble"
    for lp, ref in (("en-de", "refA"), ("he-en", "refB")):
        got = cv["single"]["mtme:MetricX-23"]["testbeds"][f"wmt23.{lp}"]
        seg, sys_ = _release_pearsons(data / "wmt23", lp, f"MetricX-23-{ref}")
        assert (got["seg_pearson"], got["sys_pearson"]) == pytest.approx((seg, sys_), abs=1e-12)  # the
        # release stores MetricX's scores negated: higher is better there
        got = cv["best_single"]["testbeds"][f"wmt23.{lp}"]
        assert (got["seg_pearson"], got["sys_pearson"]) == pytest.approx(
            _release_pearsons(data / "wmt23", lp, f"XCOMET-Ensemble-{ref}"), abs=1e-12)
    for described in report["training"]:  # MQM: every score difference is a pair
        assert described["min_diff"] == 0.0 and described["min_diff_rule"].startswith("mqm")
    doc = json.loads(models["default"].read_text())
    assert doc["output"] == "human" and doc["method"] == "direct"
    mqm = [float(v) for lp in ("en-de", "he-en")
           for name, v in _columns(data / "wmt23" / "human-scores" / f"{lp}.mqm.seg.score") if v != "None"
           and name != "refA"]
    assert doc["scale"] == [min(mqm), max(mqm)] == [-138.0, 0.0]
    est = doc["training"]["estimator"]
    assert est["objective"] == "wmt23" and est["objective_value"] >= est["uniform_value"]
    assert est["calibration"]["scale"] > 0


def test_wmt23_system_scores_are_the_mean_of_segment_scores(data, wmt23):
    _, models, cache = wmt23
    tb = combo.load_testbed(data / "wmt23", lp="en-de")
    table = combo.score_testbed(tb, [str(models["default"]), str(models["sigmoid"])], cache_dir=cache)
    default, sigmoid = table.segment
    for s in range(len(table.systems)):  # one scale: a system's score is the mean of its segment scores
        assert table.system[0, s] == pytest.approx(np.nanmean(default[table.row_system == s]), rel=1e-12)
    # --output sigmoid searches the same weights and fits no scale: w . x, sigmoid per segment (DiscoTK's)
    human, sig = (json.loads(models[k].read_text()) for k in ("default", "sigmoid"))
    assert sig["output"] == "sigmoid" and sig["bias"] == 0.0
    calibration = human["training"]["estimator"]["calibration"]
    scale, offset = calibration["scale"], calibration["offset"]
    assert scale > 0 and np.allclose(human["weights"], scale * np.asarray(sig["weights"]), rtol=1e-9)
    assert human["bias"] == pytest.approx(offset)
    # the raw score w . x of each candidate by the sigmoid model's formula, from its file's numbers
    specs = [m["spec"] for m in sig["metrics"]]
    parts = combo.score_testbed(tb, specs, cache_dir=cache).segment
    lo, hi = (np.asarray(sig["normalisation"][k])[:, None] for k in ("lo", "hi"))
    x = (parts - lo) / (hi - lo)
    x = np.where(np.array([m["higher_is_better"] for m in sig["metrics"]])[:, None], x, 1 - x)
    raw = np.asarray(sig["weights"]) @ x
    both = np.isfinite(raw)
    assert np.array_equal(both, np.isfinite(sigmoid)) and both.mean() > 0.9
    assert np.allclose(sigmoid[both], expit(raw[both]), rtol=0, atol=1e-12)
    # the default (human) output: the calibrated line clipped to the training judgments' range, MQM's [-138, 0]
    low, high = human["scale"]
    assert np.allclose(default[both], np.clip(offset + scale * raw[both], low, high), rtol=0, atol=1e-9)
    assert (offset + scale * raw[both] > high).sum() > 100 and np.nanmax(default) == high == 0.0
    for s in range(len(table.systems)):  # the system score is the mean raw score, not the mean sigmoid
        rows = (table.row_system == s) & both
        assert table.system[1, s] == pytest.approx(raw[rows].mean(), rel=1e-9, abs=1e-12)


# -- model files written before the output field ----------------------------------------------------------

@pytest.mark.parametrize("path", sorted(MODELS.glob("*.json")), ids=lambda p: p.stem)
def test_model_file_without_output_loads_as_sigmoid(path):
    assert "output" not in json.loads(path.read_text(encoding="utf-8"))
    metric = load_model(path)
    assert metric.model.output == "sigmoid" and metric.value_range == (0.0, 1.0)
    hyps = ["The new bridge will open in May.", "Nothing at all."]
    refs = [["The new bridge opens in May."], ["Nothing."]]
    raw = metric.raw_segment_scores(hyps, refs)
    assert np.allclose(metric.segment_scores(hyps, refs), expit(raw), rtol=0, atol=1e-15)
    assert metric.corpus_score(hyps, refs) == pytest.approx(raw.mean())
    assert json.loads(metric.model.to_json())["output"] == "sigmoid"  # written out, it says so


# -- what three mutations of training got past the suite ------------------------------------------------------

@pytest.fixture(scope="module")
def example_scores():
    from combo.combine.training import training_data

    tb = combo.load_testbed("example")
    table = combo.score_testbed(tb, ["bleu", "chrf", "ter"])
    return tb, table, training_data([(tb, table)], "testbed", judgments="scores")


def test_direct_searches_the_objective_it_is_given(example_scores):
    """A direct search that always maximised wmt23 passed every test. With --objective seg_pearson the recorded
    value is scipy's Pearson of the model's own scores with the adequacy scores, and it beats the Pearson of the
    weights searched for wmt23."""
    from combo.combine.training import TrainOptions, fit_model

    _, _, data = example_scores
    judged = np.isfinite(data.targets)
    pearson = {}
    for objective in ("seg_pearson", "wmt23"):
        model = fit_model(data, TrainOptions(method="direct", objective=objective, output="linear"))
        scores = model.weights @ model.features(data.scores) + model.bias
        pearson[objective] = pearsonr(scores[judged], data.targets[judged])[0]
        assert model.training["estimator"]["objective"] == objective
        if objective == "seg_pearson":
            assert model.training["estimator"]["objective_value"] == pytest.approx(pearson[objective], abs=1e-12)
    assert pearson["seg_pearson"] > pearson["wmt23"]


def test_pairwise_lr_on_absolute_scores_outputs_the_human_scale(example_scores, tmp_path):
    """--output auto gave pairwise-lr on absolute judgments the linear output and every test passed."""
    out = tmp_path / "m.json"
    res = _run("train", "--testbed", "example", "-q", "-m", "bleu", "-m", "chrf", "--folds", "0", "--judgments",
               "scores", "--method", "pairwise-lr", "--out", out)
    assert res.exit_code == 0, res.output
    model = json.loads(out.read_text())
    assert model["output"] == "human" and model["training"]["estimator"]["calibration"]["scale"] > 0
    _, _, data = example_scores
    assert model["scale"] == [np.nanmin(data.targets), np.nanmax(data.targets)]


def test_the_cross_validated_table_orients_a_lower_is_better_metric(example_scores):
    """The table's single-metric rows read TER's own system scores negated (lower is better); left as they are,
    every test passed. Against scipy on TER's corpus scores and each system's mean adequacy."""
    from combo.combine.training import TrainOptions, fit_and_cross_validate, training_report

    tb, table, data = example_scores
    options = TrainOptions(method="direct")
    _, cv = fit_and_cross_validate(data, options, folds=3)
    report = training_report(data, cv, "direct", [table.system])
    got = report["single"]["ter"]["testbeds"][tb.name]["sys_pearson"]
    human = [np.nanmean(data.targets[data.system == data.system_offset[0] + s]) for s in range(len(table.systems))]
    ter = table.system[table.metrics.index("ter")]
    assert got == pytest.approx(pearsonr(np.negative(ter), human)[0], abs=1e-12)
    assert got > 0  # TER agrees with adequacy once lower is read as better


def test_a_toy_objective_registered_in_one_place_is_offered_trained_for_and_recorded(tmp_path):
    """An objective is one record: registered once, it is in train --help and --objective's choices, training
    maximises it, and the model file records it; the old spelling acc_eq trains for seg_acc_eq."""
    def worst_system_pearson(blocks, stats):  # any function of the block statistics
        return float(min(s["sys_pearson"] for s in stats))

    toy = Objective("toy_min_sys_pearson", "the lowest system Pearson over the training pairs", ("sys_pearson",),
                    worst_system_pearson)
    with registered_objective(toy):
        shown = " ".join(CliRunner().invoke(main, ["train", "--help"]).output.split())
        assert "toy_min_sys_pearson: the lowest system Pearson" in shown
        out = tmp_path / "toy.json"
        res = CliRunner().invoke(main, ["train", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter",
                                        "--judgments", "scores", "--objective", "toy_min_sys_pearson", "--folds", "0",
                                        "-q", "--out", str(out)])
        assert res.exit_code == 0, res.output
        est = json.loads(out.read_text())["training"]["estimator"]
        assert est["objective"] == "toy_min_sys_pearson" and est["objective_value"] >= est["uniform_value"]
        assert "weights searched for toy_min_sys_pearson" in CliRunner().invoke(main, [
            "train", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-m", "ter", "--judgments", "scores",
            "--objective", "toy_min_sys_pearson", "--folds", "0", "--out", str(tmp_path / "toy2.json")]).output
    assert "toy_min_sys_pearson" not in CliRunner().invoke(main, ["train", "--help"]).output
    with pytest.raises(OptionError, match="unknown objective 'toy_min_sys_pearson'"):
        get_objective("toy_min_sys_pearson")
    with pytest.raises(ValueError, match="the name 'acc_eq' is taken"):
        with registered_objective(Objective("acc_eq", "a clash", ("seg_acc_eq",), worst_system_pearson)):
            pass
    assert get_objective("acc_eq") is get_objective("seg_acc_eq")
