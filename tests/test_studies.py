"""The seed studies' own computations (experiments/), on hand-worked cases: not the studies themselves."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
import galley_2015 as galley  # noqa: E402


def test_expert_weight_maps_one_to_four_onto_minus_one_to_one():
    assert [galley.expert_weight(v) for v in (1.0, 2.5, 4.0)] == [-1.0, 0.0, 1.0]
    assert galley.expert_weight(np.mean([3, 4, 4])) == pytest.approx(7 / 9)  # (11/3 - 5/2) / (3/2)


def test_units_of_two_average_the_sentence_scores_and_the_human_scores():
    scores = np.array([0.1, 0.9, 0.5, 0.3, 0.7])
    human = np.array([1.0, 0.0, 1 / 3, 2 / 3, 1.0])
    order = np.array([[0, 1, 2, 3, 4], [4, 2, 0, 3, 1]])  # two assignments; the fifth row is left over
    metric_units = galley.unit_scores(scores, order, 2)
    human_units = galley.unit_scores(human, order, 2)
    np.testing.assert_allclose(metric_units, [[0.5, 0.4], [0.6, 0.2]])
    np.testing.assert_allclose(human_units, [[0.5, 0.5], [2 / 3, 5 / 6]])


def test_a_unit_score_is_the_corpus_score_of_its_sentences():
    from combo import get_metric

    bleu = get_metric(galley.METRIC)
    hyps = ["a man rides a horse", "two dogs play in the snow", "a child is swimming", "the cat sat"]
    refs = [["a man is riding a horse", "a rider on a horse"], ["two dogs are playing in snow"],
            ["a kid swims in a pool"], ["the cat sat on the mat"]]
    stats = bleu.segment_statistics(hyps, refs)
    order = np.array([[2, 0, 3, 1]])
    units = galley.unit_scores(stats, order, 2, lambda s: bleu.score(s, segment_level=False))
    expected = [bleu.corpus_score([hyps[2], hyps[0]], [refs[2], refs[0]]),
                bleu.corpus_score([hyps[3], hyps[1]], [refs[3], refs[1]])]
    np.testing.assert_allclose(units[0], expected)


def test_correlations_per_assignment_match_scipy():
    rng = np.random.default_rng(3)
    x = rng.random((3, 12))
    y = np.round(rng.random((3, 12)) * 3) / 3  # ties, as crowd shares have
    rho, tau = galley.correlations(x, y)
    for k in range(3):
        assert rho[k] == pytest.approx(sps.spearmanr(x[k], y[k]).statistic)
        assert tau[k] == pytest.approx(sps.kendalltau(x[k], y[k]).statistic)


def test_units_of_one_are_the_same_units_in_every_assignment():
    rng = np.random.default_rng(0)
    scores, human = rng.random(30), rng.random(30)
    out = galley.observation_units({"x": (scores, None)}, human, 1, 5, seed=1)["x"]
    assert np.all(out["spearman"] == pytest.approx(sps.spearmanr(scores, human).statistic))
    out = galley.observation_units({"x": (scores, None), "y": (1 - scores, None)}, human, 3, 5, seed=1)
    assert len(out["x"]["spearman"]) == 5 and len(set(np.round(out["x"]["spearman"], 12))) > 1
    np.testing.assert_allclose(out["y"]["spearman"], -out["x"]["spearman"])  # the same assignments
