"""combo.meta.significance: Williams by hand, bootstrap and permutation against plain loops."""

import numpy as np
import pytest
import scipy.stats

import combo

from combo.errors import InputError, OptionError
from combo.meta import (bootstrap, correlation_values, paired_bootstrap_test, permutation_test,
                        williams_test, williams_test_scores)


def _pearson_by_item(m, h):
    return correlation_values(m, h, "pearson", "item")


def _three_metrics(seed=0, systems=8, items=60):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=(systems, items))
    good = human + rng.normal(0, 0.5, human.shape)
    poor = human + rng.normal(0, 2.0, human.shape)
    human[rng.random(human.shape) < 0.2] = np.nan
    return human, good, poor


def test_williams_by_hand():
    # r12 = .6 (h, a), r13 = .4 (h, b), r23 = .5 (a, b), n = 50:
    # K = 1 - .36 - .16 - .25 + 2(.6)(.4)(.5) = 0.47; rbar = .5
    # numerator = (.6 - .4) sqrt(49 * 1.5) = .2 * 8.573214... = 1.7146428
    # denominator = sqrt(2 * .47 * 49/47 + .25 * .5^3) = sqrt(0.98 + 0.03125) = 1.0056093
    # t = 1.7050787..., df = 47
    result = williams_test(0.6, 0.4, 0.5, 50)
    t = 0.2 * np.sqrt(49 * 1.5) / np.sqrt(0.98 + 0.03125)
    assert t == pytest.approx(1.70508, abs=1e-5)
    assert result.t == pytest.approx(t, abs=1e-12) and result.df == 47
    assert result.p_value == pytest.approx(scipy.stats.t.sf(t, 47), abs=1e-15)
    assert 0.04 < result.p_value < 0.05
    # the test is antisymmetric in the two metrics
    swapped = williams_test(0.4, 0.6, 0.5, 50)
    assert swapped.t == pytest.approx(-t) and swapped.p_value == pytest.approx(1 - result.p_value)
    assert williams_test(0.6, 0.4, 0.5, 50, "two-sided").p_value == pytest.approx(2 * result.p_value)
    assert williams_test(0.4, 0.6, 0.5, 50, "less").p_value == pytest.approx(result.p_value)


def test_williams_from_scores_uses_pearson_on_judged_cells():
    human, good, poor = _three_metrics(1)
    judged = ~np.isnan(human)
    h, a, b = human[judged], good[judged], poor[judged]
    r = np.corrcoef([h, a, b])
    result = williams_test_scores(human, good, poor)
    expected = williams_test(r[0, 1], r[0, 2], r[1, 2], judged.sum())
    assert result.t == pytest.approx(expected.t, abs=1e-9)
    assert result.p_value < 1e-6


def test_bootstrap_equals_a_plain_loop():
    human, good, _ = _three_metrics(2)
    result = bootstrap(_pearson_by_item, good, human, n_resamples=200, seed=7)
    rng = np.random.default_rng(7)           # the same stream, one resample at a time
    loop = []
    for _ in range(200):
        idx = rng.integers(0, human.shape[1], human.shape[1])
        loop.append(float(_pearson_by_item(good[:, idx], human[:, idx])))
    assert np.allclose(result.samples, loop, atol=1e-12, rtol=0)
    low, high = np.quantile(loop, [0.025, 0.975])
    assert (result.low, result.high) == pytest.approx((low, high), abs=1e-12)
    assert result.value == pytest.approx(float(_pearson_by_item(good, human)))
    assert result.low < result.value < result.high and result.n_undefined == 0


def test_bootstrap_interval_of_a_mean_has_the_textbook_width():
    # The mean of 400 standard normal values: standard error 1/20, so the 95% interval is about
    # 2 * 1.96 / 20 = 0.196 wide.
    x = np.random.default_rng(3).normal(size=400)
    result = bootstrap(lambda v: v.mean(-1), x, n_resamples=2000, seed=1)
    assert result.high - result.low == pytest.approx(0.196, rel=0.15)


def test_bootstrap_per_item_shortcut_equals_recomputation():
    # For average_by="item", resampling items only re-weights the per-item correlations.
    human, good, _ = _three_metrics(4)
    human[:, :5] = 1.0                              # 5 constant (undefined) items
    full = bootstrap(lambda m, h: correlation_values(m, h, "kendall_b", "item"), good, human, seed=5)
    per_item = correlation_values(good, human, "kendall_b", "item", per_group=True)
    fast = bootstrap(lambda v: np.nanmean(v, -1), per_item, seed=5)
    assert np.allclose(full.samples, fast.samples, atol=1e-12, rtol=0)


def test_paired_bootstrap():
    human, good, poor = _three_metrics(5)
    better = paired_bootstrap_test(_pearson_by_item, good, poor, human, seed=0)
    assert better.delta > 0.2 and better.p_value == pytest.approx(1 / 1001)
    assert better.low < better.delta < better.high
    worse = paired_bootstrap_test(_pearson_by_item, poor, good, human, seed=0)
    assert worse.p_value == pytest.approx(1.0)
    same = paired_bootstrap_test(_pearson_by_item, good, good, human, n_resamples=100)
    assert same.delta == 0 and same.p_value == 1.0


def test_permutation_equals_a_plain_loop():
    human, good, poor = _three_metrics(6)
    for swap in ("cell", "item", "sys"):
        result = permutation_test(_pearson_by_item, good, poor, human, swap=swap, n_permutations=100,
                                  seed=3, alternative="two-sided")
        # the loop: z-score each metric, then swap units with probability 1/2, mt-metrics-eval style
        a = (good - good.mean()) / good.std()
        b = (poor - poor.mean()) / poor.std()
        shape = {"cell": a.shape, "item": (1, a.shape[1]), "sys": (a.shape[0], 1)}[swap]
        rng = np.random.default_rng(3)
        observed = float(_pearson_by_item(a, human) - _pearson_by_item(b, human))
        count = 0
        for _ in range(100):
            flip = rng.random(shape) < 0.5
            d = float(_pearson_by_item(np.where(flip, b, a), human) - _pearson_by_item(np.where(flip, a, b), human))
            count += abs(d) >= abs(observed)
        assert result.delta == pytest.approx(observed, abs=1e-12)
        assert result.p_value == pytest.approx((count + 1) / 101)


def test_permutation_detects_the_better_metric_and_not_a_copy():
    human, good, poor = _three_metrics(7)
    assert permutation_test(_pearson_by_item, good, poor, human).p_value == pytest.approx(1 / 1001)
    assert permutation_test(_pearson_by_item, poor, good, human).p_value > 0.99
    copy = permutation_test(_pearson_by_item, good, good.copy(), human, n_permutations=50)
    assert copy.delta == 0 and copy.p_value == 1.0


def test_permutation_p_values_are_roughly_uniform_under_the_null():
    # Two equally noisy metrics: about 5% of tests reject at 0.05 (binomial, 200 tests: 0..22 allowed).
    rng = np.random.default_rng(8)
    rejected = 0
    for _ in range(200):
        human = rng.normal(size=(4, 30))
        a, b = human + rng.normal(size=human.shape), human + rng.normal(size=human.shape)
        p = permutation_test(_pearson_by_item, a, b, human, n_permutations=99, seed=rng).p_value
        rejected += p <= 0.05
    assert rejected <= 22


def test_bad_arguments():
    human, good, poor = _three_metrics(9)
    with pytest.raises(OptionError):
        permutation_test(_pearson_by_item, good, poor, human, swap="segment")
    with pytest.raises(OptionError):
        paired_bootstrap_test(_pearson_by_item, good, poor, human, alternative="bigger")
    with pytest.raises(OptionError):
        bootstrap(_pearson_by_item, good, human, confidence=95)
    with pytest.raises(InputError):
        permutation_test(_pearson_by_item, good, poor[:, :10], human)
    with pytest.raises(InputError):
        bootstrap(_pearson_by_item, good, human[:, :10])
    with pytest.raises(InputError):
        williams_test(0.5, 0.4, 0.3, 3)
    with pytest.raises(InputError):
        williams_test(1.2, 0.4, 0.3, 30)
    with pytest.raises(InputError):
        williams_test(0.9, -0.9, 0.9, 30)       # impossible together


def test_cluster_bootstrap_draws_whole_groups():
    from combo.meta.significance import bootstrap

    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    mean = lambda v: v.mean(axis=-1)  # noqa: E731
    # Groups of one item each: the same draws as the item bootstrap.
    a = bootstrap(mean, x, n_resamples=200, seed=5)
    b = bootstrap(mean, x, n_resamples=200, seed=5, groups=np.arange(40))
    np.testing.assert_allclose(a.samples, b.samples)
    # Each value repeated three times as one group: the mean of whole drawn groups equals the item
    # bootstrap of the group values, draw for draw; an item bootstrap of the 120 copies is narrower.
    copies = np.repeat(x, 3)
    c = bootstrap(mean, copies, n_resamples=200, seed=5, groups=np.repeat(np.arange(40), 3))
    np.testing.assert_allclose(a.samples, c.samples)
    d = bootstrap(mean, copies, n_resamples=200, seed=5)
    assert d.high - d.low < 0.75 * (c.high - c.low)


def test_evaluate_resamples_segments_wmt12(data):
    # chrF's WMT12 Kendall on de-en: resampling preference pairs independently gave [0.246, 0.280];
    # all pairs of a segment move together here.
    from combo.evaluate import MetaEvaluator

    tb = combo.load_testbed(data / "wmt12", lp="de-en")
    ev = MetaEvaluator(tb, combo.score_testbed(tb, ["chrf"]))
    q = ev.with_interval(ev.quality([0], "wmt_kendall"), n_resamples=300, seed=0)
    assert abs(q.value - 0.2631) < 1e-4 and q.unit == "segments"
    assert q.low < 0.240 and q.high > 0.288
