"""combo.meta.wmt23: the WMT23 metrics-task statistics by hand, against scipy and brute force, and on WMT23 en-de."""

import collections
import itertools

import numpy as np
import pytest
import scipy.stats

from combo.errors import InputError, OptionError
from combo.meta.wmt23 import (PermutationParams, assign_ranks, average_clusters, seg_acc_eq, seg_correlation,
                              significance_clusters, sys_pairwise_accuracy, sys_pearson, wmt23_average,
                              wmt23_systems, wmt23_tasks, wmt23_weights)

NAN = np.nan


# -- hand-worked examples -----------------------------------------------------------

def test_sys_pairwise_accuracy_by_hand():
    # pairs of 4 systems: (0,1) (0,2) (0,3) agree; (1,2) (1,3) disagree (metric up, human down);
    # (2,3) tied by both: sign 0 == sign 0 counts as agreement (stats.Agreement). 4 of 6.
    metric, human = np.array([3, 2, 1, 1.0]), np.array([30, 10, 20, 20.0])
    assert sys_pairwise_accuracy(metric, human) == pytest.approx(4 / 6)
    # a second language pair with one agreeing pair is pooled: 5 of 7, not the mean of 4/6 and 1/1
    assert sys_pairwise_accuracy([metric, np.array([1, 2.0])], [human, np.array([5, 6.0])]) == pytest.approx(5 / 7)
    # a system without a human score is left out (only pair (0, 1) remains, and it agrees)
    assert sys_pairwise_accuracy(np.array([3, 2, 9.0]), np.array([1, 0, NAN])) == 1.0


def test_seg_acc_eq_by_hand():
    # segment 0: MQM 0, -1, -1; metric .9, .5, .48. Pairs (0,1) d=.40 and (0,2) d=.42 ordered as MQM;
    #   (1,2) an MQM tie with |d| = .02: right once epsilon >= .02.
    # segment 1: MQM -5, 0, unrated; metric .3, .2, .7: one pair (0,1), MQM prefers 1, metric 0: always wrong.
    # epsilon 0: (2/3 + 0)/2 = 1/3; .02: (3/3 + 0)/2 = 1/2; .1: still 1/2; .40: (0,1) of segment 0 tied, 1/3.
    human = np.array([[0, -5], [-1, 0], [-1, NAN]])
    metric = np.array([[.9, .3], [.5, .2], [.48, .7]])
    result = seg_acc_eq(metric, human)
    assert result.value == pytest.approx(0.5)
    assert result.epsilon == pytest.approx(0.02)        # the smallest epsilon reaching the maximum
    assert result.n_groups == 2 and result.n_pairs == 4
    assert seg_acc_eq(metric, human, epsilon=0.0).value == pytest.approx(1 / 3)
    assert seg_acc_eq(metric, human, epsilon=0.41).value == pytest.approx(1 / 3)
    # the same pairs grouped per system: system 0 has one pair (segments 0, 1), MQM 0 > -5, metric .9 > .3: right;
    # system 1: MQM -1 < 0, metric .5 > .2: wrong; system 2 has one rated cell, no pair. Mean (1 + 0)/2.
    assert seg_acc_eq(metric, human, average_by="sys").value == pytest.approx(0.5)


def test_wmt23_average_and_weights_by_hand():
    tasks = [("sys_accuracy", 0.9), ("sys_pearson", 0.8), ("seg_pearson", 0.4), ("seg_acc_eq", 0.6)]
    # correlations mapped to [0, 1] by (r + 1)/2: .9, .9, .7, .6; one language pair: weights 1/4 each
    assert wmt23_average(tasks) == pytest.approx((0.9 + 0.9 + 0.7 + 0.6) / 4)
    assert wmt23_weights(1).tolist() == [0.25] * 4
    # three language pairs (tasks.WMT23): accuracy weighs 3, the nine others 1, normalised
    assert wmt23_weights(3) == pytest.approx([3 / 12] + [1 / 12] * 9)


def test_assign_ranks_by_hand():
    # Metrics best first. 1 is not significantly below 0 (p .3): cluster 1. 2 is below 0 (p .01): a new
    # cluster starts at 2. 3 is below 1 (p .01) but only the members of its own cluster (from 2 on) count,
    # and 2 vs 3 is not significant (p .5): cluster 2 (mt-metrics-eval's AssignRanks rule).
    p = np.zeros((4, 4))
    p[0, 1], p[0, 2], p[0, 3], p[1, 2], p[1, 3], p[2, 3] = 0.3, 0.01, 0.0, 0.2, 0.01, 0.5
    assert assign_ranks(p).tolist() == [1, 1, 2, 2]
    # at pval .005 only 0 vs 3 (p 0) is significant: 0, 1, 2 share cluster 1, 3 opens cluster 2
    assert assign_ranks(p, pval=0.005).tolist() == [1, 1, 1, 2]
    assert assign_ranks(np.zeros((3, 3))).tolist() == [1, 2, 3]     # k = 0: every p is 0, each its own cluster


def test_assign_ranks_threshold():
    p = np.zeros((3, 3))
    p[0, 1], p[0, 2], p[1, 2] = 0.03, 0.5, 0.5
    assert assign_ranks(p, 0.05).tolist() == [1, 2, 2]
    assert assign_ranks(p, 0.01).tolist() == [1, 1, 1]


# -- equal to scipy and to plain implementations of the definitions -------------------

def _random_case(rng, systems=6, segments=40, unrated=0.2):
    human = rng.normal(size=(systems, segments)).round(1)           # rounded: MQM-like ties
    metric = human + rng.normal(scale=1.0, size=human.shape)
    human[rng.random(human.shape) < unrated] = NAN
    return metric, human


def test_seg_correlation_equals_scipy():
    rng = np.random.default_rng(3)
    metric, human = _random_case(rng)
    human[:, 5] = 1.0                                               # a constant segment: left out of "item"
    human[1:, 7] = NAN                                              # a segment with one rated cell: left out
    rated = ~np.isnan(human)
    assert seg_correlation(metric, human, "pearson", "none") == pytest.approx(
        scipy.stats.pearsonr(metric[rated], human[rated])[0], abs=1e-12)
    assert seg_correlation(metric, human, "kendall", "none") == pytest.approx(
        scipy.stats.kendalltau(metric[rated], human[rated])[0], abs=1e-12)
    for method, fn in (("pearson", scipy.stats.pearsonr), ("kendall", scipy.stats.kendalltau)):
        per_item = []
        for j in range(human.shape[1]):
            keep = rated[:, j]
            if keep.sum() < 2 or np.ptp(human[keep, j]) == 0 or np.ptp(metric[keep, j]) == 0:
                continue
            per_item.append(fn(metric[keep, j], human[keep, j])[0])
        assert seg_correlation(metric, human, method, "item") == pytest.approx(np.mean(per_item), abs=1e-12)
    # no defined group at all: mt-metrics-eval's 0, not NaN
    assert seg_correlation(metric, np.ones_like(human), "pearson", "item") == 0.0
    assert seg_correlation(metric, np.ones_like(human), "pearson", "none") == 0.0


def _acc_t_brute_force(metric, human, average_by="item"):
    """acc23 with the best threshold, straight from the definition (Deutsch et al. 2023; tau_optimization)."""
    groups = {"item": [(metric[:, j], human[:, j]) for j in range(human.shape[1])],
              "none": [(metric.ravel(), human.ravel())]}[average_by]
    pairs = []                          # (group, |metric diff|, metric agrees in sign, human tie)
    for g, (m, h) in enumerate(groups):
        idx = np.flatnonzero(~np.isnan(h))
        for a, b in itertools.combinations(idx, 2):
            dm, dh = m[a] - m[b], h[a] - h[b]
            pairs.append((g, abs(dm), np.sign(dm) == np.sign(dh) and dh != 0, dh == 0))
    g, gap, agree, htie = (np.array(x) for x in zip(*pairs))
    best = -1.0
    for eps in sorted({0.0} | set(gap.tolist())):
        right = np.where(gap <= eps, htie, agree)
        acc = np.mean([right[g == k].mean() for k in np.unique(g)])
        best = max(best, acc)
    return best


def test_seg_acc_eq_equals_brute_force():
    rng = np.random.default_rng(5)
    metric, human = _random_case(rng, systems=5, segments=25)
    metric = metric.round(1)                                        # metric ties too
    for average_by in ("item", "none"):
        assert seg_acc_eq(metric, human, average_by).value == pytest.approx(
            _acc_t_brute_force(metric, human, average_by), abs=1e-12)


def test_sys_statistics_equal_scipy_and_brute_force():
    rng = np.random.default_rng(7)
    human = rng.normal(size=9).round(1)
    metric = human + rng.normal(scale=0.5, size=9)
    assert sys_pearson(metric, human) == pytest.approx(scipy.stats.pearsonr(metric, human)[0], abs=1e-12)
    agree = [np.sign(metric[a] - metric[b]) == np.sign(human[a] - human[b])
             for a, b in itertools.combinations(range(9), 2)]
    assert sys_pairwise_accuracy(metric, human) == pytest.approx(np.mean(agree))


def test_bad_input_is_one_clear_error():
    human = np.array([[1.0, 2.0], [3.0, NAN]])
    with pytest.raises(InputError, match="one shape"):
        seg_correlation(np.zeros((3, 2)), human)
    with pytest.raises(InputError, match="no finite metric score"):
        seg_acc_eq(np.array([[1.0, NAN], [2.0, 0.0]]), human)
    with pytest.raises(OptionError):
        seg_correlation(np.zeros((2, 2)), human, method="spearman")
    with pytest.raises(OptionError):
        significance_clusters("seg_kendall", {"a": np.zeros((2, 2))}, human)
    with pytest.raises(OptionError):
        wmt23_systems(["a"], "xx-yy", ["refA"])


# -- significance -------------------------------------------------------------------

def test_permutation_clusters_separate_good_from_noise():
    rng = np.random.default_rng(11)
    metric, human = _random_case(rng, systems=6, segments=60)
    noise = rng.normal(size=human.shape)
    metrics = {"good": metric, "good-copy": metric.copy(), "noise": noise}
    for task in ("seg_pearson", "seg_acc_eq"):
        ranking = significance_clusters(task, metrics, human, seed=0)
        # the two identical metrics: every permuted difference is 0 >= 0, p = 1, stopped after one block
        i, j = ranking.metrics.index("good"), ranking.metrics.index("good-copy")
        assert ranking.p_values[min(i, j), max(i, j)] == 1.0
        assert len(ranking.draws[(min(i, j), max(i, j))]) == 100
        assert ranking.rank_of("good") == ranking.rank_of("good-copy") == 1
        assert ranking.rank_of("noise") == 2
        assert ranking.p_values[0, 2] == 0.0                       # p = count / draws, as mt-metrics-eval
    # the same seed draws the same permutations
    a = significance_clusters("seg_pearson", metrics, human, seed=4)
    b = significance_clusters("seg_pearson", metrics, human, seed=4)
    assert np.array_equal(a.p_values, b.p_values)


def test_early_stopping_and_k():
    rng = np.random.default_rng(2)
    human = rng.normal(size=12)
    close_a = human + rng.normal(scale=0.3, size=12)
    close_b = human + rng.normal(scale=0.3, size=12)
    r = significance_clusters("sys_pearson", {"a": close_a, "b": close_b}, human,
                              params=PermutationParams(k=500, block_size=100, early_min=0.0, early_max=1.0))
    assert len(r.draws[(0, 1)]) == 500                             # no early stop possible: all k draws
    observed = r.values[0] - r.values[1]
    assert r.p_values[0, 1] == pytest.approx(np.mean(r.draws[(0, 1)] @ [1, -1] >= observed))
    none = significance_clusters("sys_pearson", {"a": close_a, "b": close_b}, human, k=0)
    assert none.draws == {} and none.ranks.tolist() == [1, 2]


def test_every_task_kernel_follows_the_declared_protocol():
    from combo.meta import wmt23

    with pytest.raises(TypeError):
        wmt23.SignificanceKernel()  # abstract: the protocol alone computes nothing
    human = np.array([[1.0, 2.0, np.nan], [2.0, 1.0, 3.0], [0.0, 0.0, 1.0]])
    humans = {"seg_pearson": human, "seg_acc_eq": human, "sys_pearson": human[:, 0], "sys_accuracy": human[:, 0]}
    for task, kernel_of in wmt23._KERNELS.items():
        kernel = kernel_of(humans[task])
        assert isinstance(kernel, wmt23.SignificanceKernel), task
        units = kernel.prepare(humans[task] + 0.5 if task.startswith("seg") else human[:, 0] * 2)
        assert isinstance(units, wmt23.KernelUnits), task
        a, b = kernel.swappable(units, units)
        assert a.shape == b.shape == units.swappable.shape
        assert kernel.values(a[None], units).shape == (1,)
        assert (kernel.segment_of is None) == task.startswith("sys"), task


def test_average_clusters_combine_task_draws():
    rng = np.random.default_rng(8)
    metric, human = _random_case(rng, systems=6, segments=50)
    metrics = {"good": metric, "noise": rng.normal(size=human.shape)}
    rankings = [significance_clusters(t, metrics, human, seed=1) for t in ("seg_pearson", "seg_acc_eq")]
    avg = average_clusters(rankings, [0.5, 0.5])
    expected = {m: 0.5 * (r0 + 1) / 2 + 0.5 * r1 for m, r0, r1 in
                ((m, rankings[0].values[rankings[0].metrics.index(m)],
                  rankings[1].values[rankings[1].metrics.index(m)]) for m in metrics)}
    assert dict(zip(avg.metrics, avg.values)) == pytest.approx(expected)
    assert avg.metrics == ("good", "noise") and avg.ranks.tolist() == [1, 2]
    with pytest.raises(InputError, match="k=0"):
        average_clusters([significance_clusters("seg_pearson", metrics, human, k=0)])


# -- WMT23 en-de, the shipped metric scores ---------------------------------------------

def _read_scores(path):
    """mt-metrics-eval's ReadScoreFile: 'SYSTEM<TAB>SCORE' lines in segment order per system, None = NaN."""
    scores = collections.defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        system, value = line.split()
        scores[system].append(NAN if value == "None" else float(value))
    return scores


@pytest.fixture(scope="module")
def wmt23_en_de(data):
    base = data / "wmt23"
    if not base.is_dir():
        pytest.skip("WMT23 data not found")
    human_seg = _read_scores(base / "human-scores" / "en-de.mqm.seg.score")
    human_sys = _read_scores(base / "human-scores" / "en-de.mqm.sys.score")
    outputs = [p.stem for p in (base / "system-outputs" / "en-de").glob("*.txt")]
    refs = [p.name.split(".")[1] for p in (base / "references").glob("en-de.*.txt")]
    systems = [s for s in wmt23_systems(outputs, "en-de", refs) if s in human_seg]

    def metric(name):
        seg = _read_scores(base / "metric-scores" / "en-de" / f"{name}.seg.score")
        sys_ = _read_scores(base / "metric-scores" / "en-de" / f"{name}.sys.score")
        return np.array([seg[s] for s in systems]), np.array([sys_[s][0] for s in systems])

    human = np.array([human_seg[s] for s in systems])
    return systems, human, np.array([human_sys[s][0] for s in systems]), metric


def test_wmt23_en_de_systems(wmt23_en_de):
    systems, human, human_sys, _ = wmt23_en_de
    # 14 outputs less the standard reference refA and the outlier synthetic_ref (meta_info.py)
    assert len(systems) == 12 and "refA" not in systems and "synthetic_ref" not in systems
    assert human.shape == (12, 557) and int(np.isnan(human).sum()) == 12 * 97 and not np.isnan(human_sys).any()


# Published WMT23 en-de figures (Freitag et al. 2023, "Results of WMT23 Metrics Shared Task", main results,
# en-de columns, 3 decimals): system-level Pearson, segment-level Pearson, segment-level acc-t.
PUBLISHED_EN_DE = {
    "XCOMET-Ensemble-refA": (0.980, 0.695, 0.604),
    "MetricX-23-refA": (0.977, 0.585, 0.603),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_EN_DE))
def test_wmt23_en_de_published_figures(wmt23_en_de, name):
    _, human, human_sys, metric = wmt23_en_de
    seg, sys_ = metric(name)
    values = dict(wmt23_tasks(seg, human, sys_, human_sys))
    got = (values["sys_pearson"], values["seg_pearson"], values["seg_acc_eq"])
    assert got == pytest.approx(PUBLISHED_EN_DE[name], abs=5e-4)


@pytest.mark.parametrize("name", ["XCOMET-XL-refA", "COMET-refA", "BLEU-refA", "chrF-refA", "CometKiwi-src"])
def test_wmt23_en_de_equals_the_definitions(wmt23_en_de, name):
    _, human, human_sys, metric = wmt23_en_de
    seg, sys_ = metric(name)
    values = dict(wmt23_tasks(seg, human, sys_, human_sys))
    rated = ~np.isnan(human)
    assert values["seg_pearson"] == pytest.approx(scipy.stats.pearsonr(seg[rated], human[rated])[0], abs=1e-12)
    assert values["sys_pearson"] == pytest.approx(scipy.stats.pearsonr(sys_, human_sys)[0], abs=1e-12)
    agree = [np.sign(sys_[a] - sys_[b]) == np.sign(human_sys[a] - human_sys[b])
             for a, b in itertools.combinations(range(len(sys_)), 2)]
    assert values["sys_accuracy"] == pytest.approx(np.mean(agree))
    # acc-t by brute force on a slice of 20 segments (the full set has 30,360 pairs)
    part = slice(0, 20)
    assert seg_acc_eq(seg[:, part], human[:, part]).value == pytest.approx(
        _acc_t_brute_force(seg[:, part], human[:, part]), abs=1e-12)
    assert 0.5 < values["seg_acc_eq"] < 0.65


def test_wmt23_en_de_clusters(wmt23_en_de):
    _, human, _, metric = wmt23_en_de
    names = ["XCOMET-Ensemble-refA", "MetricX-23-refA", "BLEU-refA"]
    seg = {n: metric(n)[0] for n in names}
    ranking = significance_clusters("seg_pearson", seg, human, k=200, seed=0)
    assert ranking.metrics == tuple(names)
    assert ranking.ranks.tolist() == [1, 2, 3]        # .695, .585 and .192 are all apart


def test_wmt23_tasks_over_several_language_pairs():
    rng = np.random.default_rng(9)
    cases = {lp: _random_case(rng, systems=5, segments=20) for lp in ("zh-en", "en-de")}
    human_sys = {lp: np.nanmean(h, 1) for lp, (_, h) in cases.items()}
    metric_sys = {lp: m.mean(1) for lp, (m, _) in cases.items()}
    tasks = wmt23_tasks({lp: m for lp, (m, _) in cases.items()}, {lp: h for lp, (_, h) in cases.items()},
                        metric_sys, human_sys)
    assert [name for name, _ in tasks] == ["sys_accuracy", "en-de sys_pearson", "en-de seg_pearson",
                                           "en-de seg_acc_eq", "zh-en sys_pearson", "zh-en seg_pearson",
                                           "zh-en seg_acc_eq"]
    pooled = sys_pairwise_accuracy([metric_sys["en-de"], metric_sys["zh-en"]],
                                   [human_sys["en-de"], human_sys["zh-en"]])
    assert tasks[0][1] == pooled
    weights = wmt23_weights(2)                                  # accuracy 2/8, the six others 1/8
    assert weights == pytest.approx([2 / 8] + [1 / 8] * 6)
    assert wmt23_average(tasks) == pytest.approx(
        2 / 8 * pooled + sum((v + 1) / 2 if "pearson" in n else v for n, v in tasks[1:]) / 8)
    # system accuracy over both pairs in the significance test: the swapped vectors span both
    ranking = significance_clusters("sys_accuracy", {"m": [metric_sys["en-de"], metric_sys["zh-en"]],
                                                     "flat": [np.zeros(5), np.zeros(5)]},
                                    [human_sys["en-de"], human_sys["zh-en"]], k=100)
    assert dict(zip(ranking.metrics, ranking.values))["m"] == pytest.approx(pooled)


def test_by_segment_swaps_whole_segments():
    # b is a with segment 3's scores shuffled among its systems: same values overall, so both metrics
    # z-score alike and differ in segment 3 only. Swapping whole segments, each permuted metric is a or b:
    # two distinct values at most. Swapping cells mixes the systems of segment 3: many values.
    rng = np.random.default_rng(12)
    a, human = _random_case(rng, systems=6, segments=30, unrated=0.0)
    b = a.copy()
    b[:, 3] = a[[1, 2, 3, 4, 5, 0], 3]
    params = PermutationParams(k=200, early_min=0.0, early_max=1.0)
    seg_wise = significance_clusters("seg_pearson", {"a": a, "b": b}, human, params=params, by_segment=True)
    assert len(np.unique(seg_wise.draws[(0, 1)][:, 0].round(12))) == 2
    cell_wise = significance_clusters("seg_pearson", {"a": a, "b": b}, human, params=params)
    assert len(np.unique(cell_wise.draws[(0, 1)][:, 0].round(12))) > 2
    pairs = significance_clusters("seg_acc_eq", {"a": a, "b": b}, human, params=params, by_segment=True)
    assert len(pairs.draws[(0, 1)]) == 200


def test_evaluate_criteria_are_the_wmt23_statistics(data):
    # combo evaluate's WMT23 criteria on the real en-de release equal combo.meta.wmt23 on the same
    # matrices (12 MT systems: synthetic_ref, a human translation, is left out at both levels).
    import combo
    from combo.evaluate import MetaEvaluator
    from combo.meta.wmt23 import seg_acc_eq, seg_correlation, wmt23_average, wmt23_tasks
    from wmt23_files import release_average

    tb = combo.load_testbed(data / "wmt23", lp="en-de")
    table = combo.score_testbed(tb, ["mtme:XCOMET-Ensemble", "mtme:MetricX-23"])
    ev = MetaEvaluator(tb, table)
    assert ev.aspect == "mqm" and int(ev.system_mask.sum()) == 12
    keep = ev.system_mask
    metric = ev.matrix(table.segment[0])[keep]
    human = ev.human[keep]
    assert ev.quality([0], "acc_eq_item").value == pytest.approx(seg_acc_eq(metric, human, "item").value, abs=1e-12)
    assert ev.quality([0], "seg_kendall_item").value == pytest.approx(
        seg_correlation(metric, human, "kendall", "item"), abs=1e-12)
    q = ev.quality([0], "wmt23")
    m_sys = table.system[0][keep]
    assert q.value == pytest.approx(wmt23_average(wmt23_tasks(metric, human, m_sys, ev.human_system_scores()[keep])))
    # the release's files read and computed by the test's own oracle (tests/wmt23_files.py): .8453, the .845 of
    # mt-metrics-eval's table for XCOMET-Ensemble on en-de
    sys_acc, sys_, seg, acc_eq, average = release_average(data / "wmt23", "en-de", "XCOMET-Ensemble-refA")
    assert ev.quality([0], "r_snt").value == pytest.approx(seg, abs=1e-12)
    assert ev.quality([0], "pearson").value == pytest.approx(sys_, abs=1e-12)
    assert ev.quality([0], "acc_eq_item").value == pytest.approx(acc_eq, abs=1e-12)
    assert ev.quality([0], "sys_accuracy").value == pytest.approx(sys_acc, abs=1e-12)
    assert q.value == pytest.approx(average, abs=1e-12) and round(average, 3) == 0.845
    ci = ev.with_interval(ev.quality([0], "seg_kendall_item"), n_resamples=200)
    assert ci.low < ci.value < ci.high and ci.unit == "segments"


def test_wmt23_criteria_refuse_rankings_only_test_beds(data):
    # WMT12 has relative rankings only; its shares of wins are not MQM-like scores: refused, not computed.
    import combo
    from combo.errors import InputError
    from combo.evaluate import MetaEvaluator, supported_criteria

    tb = combo.load_testbed(data / "wmt12", lp="de-en").subset(range(200))
    ev = MetaEvaluator(tb, combo.score_testbed(tb, ["chrf"]))
    with pytest.raises(InputError, match="no absolute segment scores"):
        ev.quality([0], "wmt23")
    assert "acc_eq_item" not in supported_criteria(ev)[0]
