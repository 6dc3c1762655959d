"""Min-max normalisation, ULC and mean rank on hand-worked cases."""

import numpy as np
import pytest

from combo.combine.ulc import fit_minmax, mean_rank, ulc
from combo.errors import InputError


def test_ulc_hand_worked_with_an_error_rate():
    # metric 0 (higher better): 0.2, 0.4, 0.6 -> normalised 0, .5, 1
    # metric 1 (lower better, e.g. TER): 0.9, 0.5, 0.7 -> (x - .5) / .4 = 1, 0, .5 -> flipped 0, 1, .5
    # ULC = mean: 0, .75, .75
    scores = np.array([[0.2, 0.4, 0.6], [0.9, 0.5, 0.7]])
    np.testing.assert_allclose(ulc(scores, [True, False]), [0.0, 0.75, 0.75])


def test_minmax_per_group_and_constant_metric():
    # group a: rows 0, 1; group b: rows 2, 3. Metric 1 is constant in group b.
    scores = np.array([[1.0, 3.0, 10.0, 20.0], [5.0, 7.0, 2.0, 2.0]])
    norm, gi = fit_minmax(scores, [True, True], groups=["a", "a", "b", "b"])
    out = norm.apply(scores, gi)
    np.testing.assert_allclose(out, [[0, 1, 0, 1], [0, 1, 0, 0]])
    assert norm.constant == [(1, "b")]
    # Stored ranges apply to new data, extrapolated beyond them (40 in group b: (40 - 10) / 10 = 3).
    np.testing.assert_allclose(norm.apply(np.array([[2.0, 40.0], [6.0, 9.0]]), np.array([0, 1])),
                               [[0.5, 3.0], [0.5, 0.0]])


def test_mean_rank_ties_and_direction():
    # metric 0 ranks rows 2 > 1 > 0; metric 1 (lower better) ties rows 0 and 1, row 2 worst.
    scores = np.array([[1.0, 2.0, 3.0], [0.1, 0.1, 0.9]])
    # metric 0 ranks (1 = worst): 1, 2, 3 -> scaled 0, .5, 1; metric 1 on -x: 2.5, 2.5, 1 -> .75, .75, 0
    np.testing.assert_allclose(mean_rank(scores, [True, False]), [0.375, 0.625, 0.5])


def test_missing_scores_leave_their_row_out():
    # NaN marks a candidate without a score (scores read from a file): ranges come from the other rows,
    # the row's combination is NaN, and the other rows score as if it were absent.
    scores = np.array([[0.1, 0.2, 0.4, 0.3], [np.nan, 0.3, 0.5, 0.1]])
    out = ulc(scores, [True, True])
    assert np.isnan(out[0])
    np.testing.assert_allclose(out[1:], ulc(scores[:, 1:], [True, True]))
    ranks = mean_rank(scores, [True, False])
    assert np.isnan(ranks[0]) and np.allclose(ranks[1:], mean_rank(scores[:, 1:], [True, False]))


def test_a_metric_without_any_score_or_with_infinite_ones_is_an_error():
    with pytest.raises(InputError, match=r"row 1 of the scores \(metrics, rows\) has no score for any candidate"):
        ulc(np.array([[0.1, 0.2], [np.nan, np.nan]]), [True, True])
    with pytest.raises(InputError, match="metric 'comet' has infinite scores"):  # named when the names are given
        ulc(np.array([[np.inf, 0.2], [0.1, 0.3]]), [True, True], names=["comet", "bleu"])
