"""The Python API as the README and docs use it: ``import combo`` and the names reached from it."""

import subprocess
import sys

import numpy as np
import pytest

import combo
from combo.io.fetch import example_path

MODELS = __import__("pathlib").Path(__file__).parent / "models"


def test_subpackages_are_reached_after_import_combo():
    # a fresh interpreter: nothing imported them before
    code = ("import combo, numpy as np; "
            "print(combo.combine.ulc(np.array([[1., 2, 3], [3, 2, 1]]), [True, False]).tolist()); "
            "print(combo.evaluate.MetaEvaluator.__name__, combo.meta.wmt23.wmt23_average.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[0.0, 0.5, 1.0]"  # both metrics agree once TER-like lower-is-better is flipped
    assert out[1] == "MetaEvaluator wmt23_average"
    with pytest.raises(AttributeError, match="no attribute 'combin'"):
        combo.combin  # noqa: B018 - a typo is still an AttributeError


def test_ulc_is_the_mean_of_min_max_normalised_scores():
    scores = np.array([[0.2, 0.4, 0.8], [10.0, 5.0, 0.0]])          # (metrics, rows); the second lower-is-better
    expected = ((scores[0] - 0.2) / 0.6 + (10.0 - scores[1]) / 10.0) / 2
    assert np.allclose(combo.combine.ulc(scores, [True, False]), expected)


def test_get_metric_takes_a_model_file_as_the_command_line_does():
    path = MODELS / "example_pairwise_lr_before_estimators.json"
    metric = combo.get_metric(str(path))
    assert metric.signature == combo.load_model(path).signature
    tb = combo.load_testbed(example_path())
    assert np.array_equal(combo.score_testbed(tb, [metric]).segment, combo.score_testbed(tb, [str(path)]).segment)
    assert combo.get_metric("chrf:word_order=2").signature == combo.get_metric("chrf", word_order=2).signature
