"""The boundaries the definitions fix, each on a hand-worked case that sits exactly on it (a mutation from
``<=`` to ``<`` passed every other test: trust, round three)."""

import numpy as np

from combo.meta.mutt import released_passes, unit_test_passes
from combo.meta.wmt23 import assign_ranks, seg_acc_eq, seg_acc_eq_per_item


def test_a_p_value_equal_to_the_threshold_opens_a_new_cluster():
    """mt-metrics-eval's AssignRanks: significantly better is ``p <= pval``."""
    assert assign_ranks(np.array([[0.0, 0.05], [0.0, 0.0]])).tolist() == [1, 2]
    assert assign_ranks(np.array([[0.0, 0.0500001], [0.0, 0.0]])).tolist() == [1, 1]


def test_a_metric_difference_equal_to_epsilon_is_a_tie():
    """acc_eq's tie calibration: a metric tie is ``|d| <= eps``. Two systems, one segment, humans 1 < 2; the
    metric's 0 and 0.5 are a tie at eps 0.5 (the pair is then wrong: accuracy 0) and in order below it (1)."""
    metric, human = np.array([[0.0], [0.5]]), np.array([[1.0], [2.0]])
    assert seg_acc_eq(metric, human, epsilon=0.5).value == 0.0
    assert seg_acc_eq(metric, human, epsilon=0.4999).value == 1.0
    tied = np.array([[1.0], [1.0]])  # humans tie: the metric's tie at eps is right, a gap above eps is wrong
    assert seg_acc_eq(metric, tied, epsilon=0.5).value == 1.0
    assert seg_acc_eq(metric, tied, epsilon=0.4999).value == 0.0
    assert seg_acc_eq_per_item(metric, tied, 0.5).tolist() == [1.0]  # the per-item form the permutations use
    assert seg_acc_eq_per_item(metric, tied, 0.4999).tolist() == [0.0]


def test_a_difference_of_exactly_15_percent_preserves_meaning():
    """MUTT's Difference rule, ``abs((a - b) / (a + 1e-9)) * 100 <= 15``: 9.999999999 against 8.499999999 is
    15% to the last bit (a + 1e-9 is 10 exactly), and passes; a hair more fails."""
    a, b = np.array([9.999999999]), np.array([8.499999999])
    assert np.abs((a - b) / (a + 1e-9))[0] * 100 == 15.0
    assert unit_test_passes(a, b, "meaning-preserving")[0] and released_passes(a, b, "difference")[0]
    c = np.nextafter(b, 0)
    assert not unit_test_passes(a, c, "meaning-preserving")[0] and not released_passes(a, c, "difference")[0]


def test_the_official_average_is_listed_best_first(data):
    """WMT23's official average over two pairs: rows sorted by the average, best first (a mutation sorting them
    worst first passed every other test)."""
    import json

    from click.testing import CliRunner

    from combo.cli import main

    if not (data / "wmt23" / "human-scores" / "he-en.mqm.seg.score").is_file():
        import pytest

        pytest.skip("WMT23 he-en not in the shared data")
    res = CliRunner().invoke(main, ["evaluate", "--testbed", str(data / "wmt23"), "--lp", "en-de,he-en", "-m",
                                    "chrf", "-m", "mtme:XCOMET-XL", "-m", "bleu", "--criteria", "wmt23",
                                    "--bootstrap", "0", "--format", "json", "-q"])
    assert res.exit_code == 0, res.output
    averages = [r["average"] for r in json.loads(res.output)["wmt23_official"]["rows"]]
    assert len(averages) == 4 and averages == sorted(averages, reverse=True) and averages[0] > averages[-1]
