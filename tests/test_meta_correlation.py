"""combo.meta.correlation: hand-worked cases, agreement with scipy.stats, undefined groups, bad input."""

import numpy as np
import pytest
import scipy.stats

from combo.errors import InputError, OptionError
from combo.meta import correlate, correlation_values, kendall_tau, pearson, spearman
from combo.meta import correlation as correlation_module

SCIPY = {
    "pearson": lambda a, b: scipy.stats.pearsonr(a, b).statistic,
    "spearman": lambda a, b: scipy.stats.spearmanr(a, b).statistic,
    "kendall_b": lambda a, b: scipy.stats.kendalltau(a, b, variant="b").statistic,
    "kendall_c": lambda a, b: scipy.stats.kendalltau(a, b, variant="c").statistic,
}


def _scipy_grouped(metric, human, method, average_by):
    """The reference: scipy on each group's judged entries, undefined groups skipped, plain mean."""
    if average_by == "none":
        judged = ~np.isnan(human)
        return SCIPY[method](metric[judged], human[judged])
    rows = zip(metric, human) if average_by == "sys" else zip(metric.T, human.T)
    values = []
    for m, h in rows:
        keep = ~np.isnan(h)
        if keep.sum() < 2 or np.ptp(m[keep]) == 0 or np.ptp(h[keep]) == 0:
            continue
        values.append(SCIPY[method](m[keep], h[keep]))
    return np.mean(values)


def _random_matrices(seed, systems=7, items=40, missing=0.3):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 5, (systems, items)).astype(float)          # many ties, as human ranks
    metric = np.round(human + rng.normal(0, 2, (systems, items)), 1)     # metric ties too
    human[rng.random((systems, items)) < missing] = np.nan
    return metric, human


def test_hand_worked_vectors():
    # x = 1 2 3 4, y = 1 3 2 4: means 2.5; dx = (-1.5, -.5, .5, 1.5), dy = (-1.5, .5, -.5, 1.5);
    # sum dx*dy = 2.25 - .25 - .25 + 2.25 = 4, sum dx^2 = sum dy^2 = 5 -> Pearson 4/5 = 0.8 (= Spearman: already ranks).
    # Pairs: only (2,3) is discordant -> C = 5, D = 1, no ties: tau-b = 4/6; tau-c = 2*4 / (16 * 3/4) = 2/3.
    x = np.array([1.0, 2, 3, 4])
    y = np.array([1.0, 3, 2, 4])
    assert pearson(x, y).value == pytest.approx(0.8, abs=1e-15)
    assert spearman(x, y).value == pytest.approx(0.8, abs=1e-15)
    assert kendall_tau(x, y).value == pytest.approx(2 / 3, abs=1e-15)
    assert kendall_tau(x, y, variant="c").value == pytest.approx(2 / 3, abs=1e-15)


def test_hand_worked_kendall_with_ties():
    # x = 1 1 2 3, y = 1 2 2 3. Pairs: (1,2) tied in x only, (2,3) tied in y only, the other 4 concordant.
    # n0 = 6, n1 = n2 = 1: tau-b = 4 / sqrt(5 * 5) = 0.8.
    # tau-c: n = 4, m = min(3 distinct x, 3 distinct y) = 3: 2*4 / (16 * 2/3) = 0.75.
    x = np.array([1.0, 1, 2, 3])
    y = np.array([1.0, 2, 2, 3])
    assert kendall_tau(x, y).value == pytest.approx(0.8, abs=1e-15)
    assert kendall_tau(x, y, variant="c").value == pytest.approx(0.75, abs=1e-15)


def test_hand_worked_groupings():
    # 3 systems x 3 items; NaN = not judged.
    human = np.array([[1, 2, np.nan], [2, 2, 5], [3, 2, np.nan]])
    metric = np.array([[.1, .5, .3], [.2, .4, .9], [.3, .6, .1]])
    # By item: item 0 h = (1,2,3), m = (.1,.2,.3) -> r = 1; item 1 h constant (2,2,2) -> skipped as constant;
    # item 2 one judged entry -> skipped as too few. Mean over 1 group = 1.
    by_item = pearson(metric, human, average_by="item")
    assert by_item.value == pytest.approx(1.0)
    assert (by_item.n_groups, by_item.n_constant, by_item.n_too_few, by_item.n_entries) == (1, 1, 1, 3)
    assert "2 of 3 item groups skipped" in str(by_item)
    # By system: sys 0 h = (1,2), m = (.1,.5) -> 1; sys 2 h = (3,2), m = (.3,.6) -> -1;
    # sys 1 h = (2,2,5) (mean 3, dh = -1,-1,2), m = (.2,.4,.9) (mean .5, dm = -.3,-.1,.4):
    # sum dh dm = .3 + .1 + .8 = 1.2, sum dh^2 = 6, sum dm^2 = .26 -> r = 1.2 / sqrt(1.56) = 0.960769...
    by_sys = pearson(metric, human, average_by="sys")
    assert by_sys.value == pytest.approx((1 + 1.2 / np.sqrt(1.56) - 1) / 3, abs=1e-12)
    assert by_sys.n_groups == 3 and by_sys.n_skipped == 0
    # No grouping: the 7 judged cells as two vectors.
    judged = ~np.isnan(human)
    flat = pearson(metric, human)
    assert flat.value == pytest.approx(np.corrcoef(metric[judged], human[judged])[0, 1], abs=1e-12)
    assert flat.n_entries == 7


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall_b", "kendall_c"])
@pytest.mark.parametrize("average_by", ["none", "item", "sys"])
def test_agrees_with_scipy_on_random_data(method, average_by):
    worst = 0.0
    for seed in range(5):
        metric, human = _random_matrices(seed)
        ours = correlate(metric, human, method, average_by).value
        worst = max(worst, abs(ours - _scipy_grouped(metric, human, method, average_by)))
    assert worst < 1e-12


@pytest.mark.parametrize("method", ["kendall_b", "kendall_c"])
def test_both_kendall_paths_agree(method, monkeypatch):
    # Small groups use explicit pairs, large ones scipy; force each path on the same data.
    metric, human = _random_matrices(11, systems=5, items=60)
    results = {}
    for limit in (0, 10_000):
        monkeypatch.setattr(correlation_module, "_PAIRWISE_MAX_MEMBERS", limit)
        results[limit] = [correlate(metric, human, method, by).value for by in ("none", "item", "sys")]
    assert np.allclose(results[0], results[10_000], atol=1e-12, rtol=0)


def test_system_level_vectors_match_scipy():
    rng = np.random.default_rng(3)
    human, metric = rng.normal(size=12), rng.normal(size=12)
    for method, reference in SCIPY.items():
        assert correlate(metric, human, method).value == pytest.approx(reference(metric, human), abs=1e-12)


def test_batched_values_equal_single_results():
    metric, human = _random_matrices(5)
    rng = np.random.default_rng(9)
    batch = np.stack([metric, metric + rng.normal(0, 1, metric.shape), -metric])
    for method in SCIPY:
        for by in ("none", "item", "sys"):
            values = correlation_values(batch, human, method, by)
            singles = [correlate(m, human, method, by).value for m in batch]
            assert np.allclose(values, singles, atol=1e-12, rtol=0)


def test_constant_input_is_undefined_with_a_reason():
    human = np.array([1.0, 2, 3, 4])
    flat = pearson(np.full(4, 0.3), human)
    assert np.isnan(flat.value) and not flat.defined
    assert flat.reason == "constant" and str(flat) == "undefined (constant)"
    assert kendall_tau(human, np.ones(4)).reason == "constant"
    one = spearman(np.array([0.5]), np.array([2.0]))
    assert str(one) == "undefined (fewer than 2 judged entries)"
    # all items constant in human scores: every group skipped, the reason says so
    allconst = pearson(np.array([[1.0, 2], [3, 4]]), np.array([[1.0, 1], [1, 1]]), average_by="sys")
    assert allconst.n_constant == 2 and allconst.reason == "constant"


def test_undefined_zero_counts_constant_groups_as_zero():
    human = np.array([[1, 2.0], [2, 2.0], [3, 2.0]])     # item 1 constant
    metric = np.array([[.1, .3], [.2, .2], [.3, .1]])
    assert pearson(metric, human, average_by="item").value == pytest.approx(1.0)
    zeroed = pearson(metric, human, average_by="item", undefined="zero")
    assert zeroed.value == pytest.approx(0.5) and zeroed.n_zeroed == 1 and zeroed.n_groups == 2
    # a single (none) correlation is never turned into 0
    assert np.isnan(pearson(metric[:, 1], human[:, 1], undefined="zero").value)


def test_unjudged_cells_may_lack_metric_scores_but_judged_ones_may_not():
    human = np.array([[1.0, np.nan], [2.0, 3.0], [3.0, 1.0]])
    metric = np.array([[0.1, np.nan], [0.2, np.inf], [0.4, 0.1]])
    with pytest.raises(InputError, match="1 judged candidate has"):
        pearson(metric, human)
    metric[1, 1] = 0.5
    assert pearson(metric, human).n_entries == 5


def test_bad_options_and_shapes():
    with pytest.raises(OptionError):
        correlate(np.ones(3), np.arange(3.0), "cosine")
    with pytest.raises(OptionError):
        correlate(np.ones((2, 3)), np.ones((2, 3)), average_by="segment")
    with pytest.raises(OptionError):
        correlate(np.arange(3.0), np.arange(3.0), average_by="item")
    with pytest.raises(OptionError):
        kendall_tau(np.arange(3.0), np.arange(3.0), variant="a")
    with pytest.raises(InputError):
        correlate(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(InputError):
        correlate(np.ones(3), np.array([1.0, np.inf, 2.0]))
