"""combo.meta.pairwise: WMT Kendall variants and acc_eq by hand, brute force, and on WMT12 de-en."""

import csv
import itertools

import numpy as np
import pytest

from combo.errors import InputError, OptionError
from combo.meta import (bootstrap, pair_scores, pairs_from_rankings, pairs_from_scores,
                        pairwise_accuracy_with_ties, pairwise_accuracy_with_ties_values, wmt_kendall,
                        wmt_kendall_values)

# Hand-worked pair list: (metric score of the human-better candidate, of the human-worse one, human tie).
# Integer scores, so that every difference is exact in floating point.
#   p1 90 10  no tie  d = +80  concordant
#   p2 80 30  no tie  d = +50  concordant
#   p3 20 60  no tie  d = -40  discordant
#   p4 50 50  no tie  d =   0  metric tie
#   p5 40 40  tie     d =   0  human tie (metric tie too)
#   p6 70 20  tie     d = +50  human tie
#   p7 65 60  tie     d =  +5  human tie
#   p8 30 28  tie     d =  +2  human tie
# Over human non-ties: C = 2, D = 1, T (metric ties) = 1; 4 human ties excluded by every WMT variant.
#   wmt12 (metric ties discordant): (C - D - T) / (C + D + T) = 0 / 4 = 0
#   wmt13 (metric ties excluded):   (C - D) / (C + D)         = 1 / 3
#   wmt14 (metric ties count 0):    (C - D) / (C + D + T)     = 1 / 4
#   darr  (as wmt12):                                           0
MB = np.array([90, 80, 20, 50, 40, 70, 65, 30.0])
MW = np.array([10, 30, 60, 50, 40, 20, 60, 28.0])
TIE = np.array([False, False, False, False, True, True, True, True])


def test_wmt_variants_by_hand():
    expected = {"wmt12": 0.0, "wmt13": 1 / 3, "wmt14": 0.25, "darr": 0.0}
    for variant, value in expected.items():
        result = wmt_kendall(MB, MW, TIE, variant=variant)
        assert result.value == pytest.approx(value, abs=1e-15), variant
        assert (result.concordant, result.discordant, result.metric_ties, result.human_ties) == (2, 1, 1, 4)
    assert wmt_kendall(MB, MW, TIE, variant="wmt12").n_used == 4
    assert wmt_kendall(MB, MW, TIE, variant="wmt13").n_used == 3
    # the ties option overrides the variant's metric-tie rule
    assert wmt_kendall(MB, MW, TIE, variant="wmt12", ties="excluded").value == pytest.approx(1 / 3)
    assert wmt_kendall(MB, MW, TIE, variant="wmt13", ties="discordant").value == pytest.approx(0.0)
    assert wmt_kendall(MB, MW, TIE, ties="counted").value == pytest.approx(0.25)


def test_acc_eq_and_tie_calibration_by_hand():
    # epsilon 0: correct are p1, p2 (d > 0, human prefers) and p5 (both tie): 3/8.
    assert pairwise_accuracy_with_ties(MB, MW, TIE, epsilon=0.0).value == pytest.approx(3 / 8)
    # Raising epsilon ties pairs by |d|: 2 -> p8 right (4/8); 5 -> p7 right (5/8);
    # 40 -> p3 tied, still wrong (5/8); 50 -> p2 lost, p6 gained (5/8); 80 -> p1 lost (4/8).
    # Best 5/8, first reached at epsilon = |65 - 60| = 5.
    calibrated = pairwise_accuracy_with_ties(MB, MW, TIE)
    assert calibrated.value == pytest.approx(5 / 8)
    assert calibrated.epsilon == 5.0 and calibrated.calibrated
    assert pairwise_accuracy_with_ties(MB, MW, TIE, epsilon=50.0).value == pytest.approx(5 / 8)
    assert pairwise_accuracy_with_ties(MB, MW, TIE, epsilon=4.9).value == pytest.approx(4 / 8)
    # Grouped: g0 = p1..p4 (no human tie), g1 = p5..p8 (all human ties), acc_eq = mean of the two:
    # eps 0: (2/4 + 1/4)/2 = .375; 2: (2/4 + 2/4)/2 = .5; 5: (2/4 + 3/4)/2 = .625;
    # 40: .625; 50: (1/4 + 4/4)/2 = .625; 80: (0 + 1)/2 = .5. Best .625 first at 5.
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    grouped = pairwise_accuracy_with_ties(MB, MW, TIE, group=group)
    assert grouped.value == pytest.approx(0.625) and grouped.epsilon == 5.0
    assert grouped.n_groups == 2


def test_acc_eq_calibration_matches_brute_force():
    rng = np.random.default_rng(2)
    for _ in range(100):
        n = int(rng.integers(1, 50))
        human_diff = rng.integers(-2, 3, n)
        gap = np.round(np.abs(human_diff) + rng.normal(0, 1, n), int(rng.integers(0, 2)))
        mw = rng.normal(size=n)
        mb = mw + gap
        tie = human_diff == 0
        group = rng.integers(0, 4, n)
        for g in (None, group):
            result = pairwise_accuracy_with_ties(mb, mw, tie, group=g)
            d = mb - mw
            best = -1.0
            for eps in sorted(set([0.0] + list(np.abs(d)))):     # every candidate epsilon, by loops
                right = [(abs(di) <= eps) if ti else (abs(di) > eps and di > 0) for di, ti in zip(d, tie)]
                right = np.array(right, dtype=float)
                acc = right.mean() if g is None else np.mean([right[g == k].mean() for k in np.unique(g)])
                best = max(best, acc)
            assert result.value == pytest.approx(best, abs=1e-12)
            fixed = pairwise_accuracy_with_ties(mb, mw, tie, epsilon=result.epsilon, group=g)
            assert fixed.value == pytest.approx(result.value, abs=1e-12)


def test_wmt_kendall_matches_pair_loop():
    # A plain loop with the coefficient matrices of the WMT segment-level script.
    coeff = {"wmt12": {">": 1, "=": -1, "<": -1}, "wmt13": {">": 1, "=": None, "<": -1},
             "wmt14": {">": 1, "=": 0, "<": -1}}
    rng = np.random.default_rng(4)
    mb, mw = np.round(rng.normal(size=(2, 500)), 1)
    tie = rng.random(500) < 0.2
    for variant, table in coeff.items():
        num = den = 0
        for b, w, t in zip(mb, mw, tie):
            if t:
                continue
            c = table[">" if b > w else "=" if b == w else "<"]
            if c is not None:
                num, den = num + c, den + 1
        assert wmt_kendall(mb, mw, tie, variant=variant).value == pytest.approx(num / den, abs=1e-15)


def test_vectorised_values_equal_single_results():
    rng = np.random.default_rng(6)
    mb, mw = np.round(rng.normal(size=(2, 3, 80)), 1)
    tie = rng.random(80) < 0.3
    for variant in ("wmt12", "wmt13", "wmt14", "darr"):
        batch = wmt_kendall_values(mb, mw, tie, variant)
        assert np.allclose(batch, [wmt_kendall(b, w, tie, variant).value for b, w in zip(mb, mw)])
    group = rng.integers(0, 7, 80)
    for eps in (None, 0.3):
        batch = pairwise_accuracy_with_ties_values(mb, mw, tie, epsilon=eps, group=group)
        assert np.allclose(batch, [pairwise_accuracy_with_ties(b, w, tie, eps, group).value for b, w in zip(mb, mw)])


def test_pairs_from_rankings_by_hand():
    # One row: systems 3 1 2 0 4 ranked 2 1 2 (blank) 3. Ranked columns 0, 1, 2, 4 give 6 pairs:
    # (3 vs 1) 1 better; (3 vs 2) tie; (3 vs 4) 3 better; (1 vs 2) 1 better; (1 vs 4) 1; (2 vs 4) 2.
    pairs = pairs_from_rankings([7], [[3, 1, 2, 0, 4]], [[2, 1, 2, -1, 3]])
    assert len(pairs) == 6
    assert pairs.better.tolist() == [1, 3, 3, 1, 1, 2]
    assert pairs.worse.tolist() == [3, 2, 4, 2, 4, 4]
    assert pairs.tie.tolist() == [False, True, False, False, False, False]
    assert pairs.segment.tolist() == [7] * 6
    assert len(pairs.without_ties()) == 5


def test_pairs_from_scores_darr_threshold():
    # item 0: scores 10, 40, 35 (system 0, 1, 2): gaps 30 (1 > 0), 25 (2 > 0), 5 (1 > 2).
    # item 1: scores 50, NaN, 50: one pair, a tie.
    human = np.array([[10, 50.0], [40, np.nan], [35, 50]])
    every = pairs_from_scores(human)
    assert len(every) == 4 and every.tie.tolist() == [False, False, False, True]
    darr = pairs_from_scores(human, min_diff=25)                 # "more than 25": only the 30-point gap
    assert list(zip(darr.segment, darr.better, darr.worse)) == [(0, 1, 0)]
    inclusive = pairs_from_scores(human, min_diff=25, inclusive=True)   # mt-metrics-eval's >= 25
    assert list(zip(inclusive.segment, inclusive.better, inclusive.worse)) == [(0, 1, 0), (0, 2, 0)]


def test_darr_equals_mt_metrics_eval_kendall_like_loop():
    # mt-metrics-eval's KendallLike over one item's DA scores (pairs with |diff| >= 25, metric ties
    # discordant), written as a loop; our inclusive daRR pairs + the darr variant must agree.
    rng = np.random.default_rng(8)
    human = rng.uniform(0, 100, (9, 30))
    metric = np.round(human / 100 + rng.normal(0, 0.3, human.shape), 1)
    con = dis = 0
    for item in range(human.shape[1]):
        for a, b in itertools.combinations(range(human.shape[0]), 2):
            diff = human[a, item] - human[b, item]
            if abs(diff) >= 25:
                agree = (diff > 0 and metric[a, item] > metric[b, item]) or (diff < 0 and metric[a, item] < metric[b, item])
                con, dis = con + agree, dis + (not agree)
    pairs = pairs_from_scores(human, min_diff=25, inclusive=True)
    result = wmt_kendall(*pair_scores(metric, pairs), pairs.tie, variant="darr")
    assert result.value == pytest.approx((con - dis) / (con + dis), abs=1e-15)


def test_bad_input():
    with pytest.raises(OptionError):
        wmt_kendall(MB, MW, TIE, variant="wmt99")
    with pytest.raises(OptionError):
        wmt_kendall(MB, MW, TIE, ties="half")
    with pytest.raises(OptionError):
        pairwise_accuracy_with_ties(MB, MW, TIE, epsilon=-1)
    with pytest.raises(InputError):
        wmt_kendall(MB, MW[:3])
    with pytest.raises(InputError):
        wmt_kendall(MB, np.where(TIE, np.nan, MW))
    with pytest.raises(InputError):
        pairs_from_rankings([0], [[1, 2]], [[1]])
    pairs = pairs_from_scores(np.array([[1.0, 2], [3, 4]]))
    with pytest.raises(InputError, match="without a metric score"):
        pair_scores(np.array([[0.1, np.nan], [0.2, 0.3]]), pairs)


def test_empty_and_all_tied_pairs_are_undefined_not_silent():
    empty = wmt_kendall(np.array([]), np.array([]))
    assert np.isnan(empty.value) and str(empty) == "undefined (no usable pairs)"
    ties_only = wmt_kendall(np.array([30.0]), np.array([30.0]), variant="wmt13")
    assert not ties_only.defined
    assert str(pairwise_accuracy_with_ties(np.array([]), np.array([]))) == "undefined (no pairs)"


def _wmt12_pairs(data, ref, systems, source_language="German"):
    names = sorted(systems)
    index = {name: i for i, name in enumerate(names)}
    segment, ids, ranks = [], [], []
    with open(data / "wmt12" / "wmt12.RNK_results.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["srclang"] == source_language and row["trglang"] == "English":
                segment.append(int(row["srcIndex"]) - 1)                    # srcIndex is 1-based
                ids.append([index[row[f"system{k}Id"]] for k in range(1, 6)])
                ranks.append([int(row[f"system{k}rank"]) for k in range(1, 6)])   # -1 = blank
    return names, pairs_from_rankings(np.array(segment), np.array(ids), np.array(ranks))


def test_wmt12_de_en_sentence_chrf_kendall(data, wmt12_de_en):
    # The data README: sacreBLEU's default sentence chrF scores WMT Kendall .263 on WMT12 de-en with
    # metric ties discordant, over 11,934 preference pairs (all differently ranked pairs per row).
    from sacrebleu.metrics import CHRF

    ref, systems = wmt12_de_en
    names, pairs = _wmt12_pairs(data, ref, systems)
    assert int((~pairs.tie).sum()) == 11934
    chrf = CHRF()
    scores = np.full((len(names), len(ref)), np.nan)
    for s, i in set(zip(pairs.better.tolist(), pairs.segment.tolist())) | set(zip(pairs.worse.tolist(), pairs.segment.tolist())):
        scores[s, i] = chrf.sentence_score(systems[names[s]][i], [ref[i]]).score
    better, worse = pair_scores(scores, pairs)
    result = wmt_kendall(better, worse, pairs.tie, variant="wmt12")
    assert result.value == pytest.approx(0.263, abs=5e-4)
    assert result.concordant + result.discordant + result.metric_ties == 11934
    # metric ties excluded (WMT13) can only raise it; the interval over resampled pairs covers the value
    assert wmt_kendall(better, worse, pairs.tie, variant="wmt13").value > result.value
    ci = bootstrap(lambda b, w, t: wmt_kendall_values(b, w, t), better, worse, pairs.tie, n_resamples=300)
    assert ci.low < result.value < ci.high and ci.high - ci.low < 0.05
