"""Defined behaviour on degenerate input: constant metrics, ties everywhere, one system, one candidate, NaN."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo.cli import main
from combo.combine.ulc import ulc
from combo.errors import InputError
from combo.evaluate import MetaEvaluator
from combo.scoring import reference_scores, score_testbed
from combo.testbed import Score, Segment, Testbed

REFS = ["a cat sat on the mat", "the cat is on a mat", "a cat was sitting on the mat", "on the mat sat a cat"]


def _testbed(outputs, scores=None):
    tb = Testbed(name="edge", segments=[Segment(f"s{i}", "", list(REFS)) for i in range(3)])
    for name, lines in outputs.items():
        tb.add_system(name, lines)
    tb.scores = [Score(s, i, v, "r1", "adequacy") for (s, i), v in (scores or {}).items()]
    return tb.validate()


def _evaluator(tb, metrics=("bleu", "chrf")):
    table = score_testbed(tb, list(metrics))
    return MetaEvaluator(tb, table, reference_scores(tb, table, list(metrics)))


def test_identical_candidates_make_every_metric_constant():
    same = ["the cat sat"] * 3
    tb = _testbed({"A": same, "B": same}, {("A", i): 1.0 + i for i in range(3)} | {("B", i): 2.0 for i in range(3)})
    ev = _evaluator(tb)
    q = ev.quality([0], "r_snt")
    assert not q.defined and str(q) == "undefined (constant)"
    assert np.all(ulc(ev.table.segment[[0]], [True]) == 0.0)  # a constant metric normalises to 0
    k = ev.quality([0, 1], "king")  # QUEEN of A and B tie: KING is still a number, ties are reported
    assert k.defined and "tied" in k.note


def test_one_system_gives_undefined_system_correlation_not_nan_text():
    tb = _testbed({"A": ["the cat sat", "a cat", "mat"]}, {("A", i): float(i) for i in range(3)})
    ev = _evaluator(tb)
    q = ev.quality([0], "pearson")
    assert not q.defined and "undefined" in str(q) and "nan" not in str(q).lower()


def test_segments_with_one_candidate_give_no_pairs_and_an_undefined_kendall():
    tb = _testbed({"A": {0: "the cat sat"}, "B": {1: "a cat"}}, {("A", 0): 3.0, ("B", 1): 2.0})
    ev = _evaluator(tb)
    q = ev.quality([0], "wmt_kendall")
    assert q.n == 0 and not q.defined


def test_nan_scores_are_an_error_naming_the_metric():
    with pytest.raises(InputError, match=r"row 0 of the scores \(metrics, rows\) has no score for any candidate"):
        ulc(np.array([[np.nan, np.nan]]), [True])
    with pytest.raises(InputError, match="metric 'bleu' has no score for any candidate"):
        ulc(np.array([[np.nan, np.nan]]), [True], names=["bleu"])


def test_evaluate_prints_undefined_never_nan(tmp_path):
    same = ["the cat sat"] * 3
    tb = _testbed({"A": same, "B": same}, {("A", i): 1.0 + i for i in range(3)} | {("B", i): 2.0 for i in range(3)})
    combo.write_jsonl(tb, tmp_path / "edge.jsonl")
    res = CliRunner().invoke(main, ["evaluate", "--testbed", str(tmp_path / "edge.jsonl"), "-m", "bleu",
                                    "--criteria", "r_snt,pearson", "--bootstrap", "50", "-q"])
    assert res.exit_code == 0, res.output
    assert "undefined (constant)" in res.output and "nan" not in res.output.lower()
    res = CliRunner().invoke(main, ["evaluate", "--testbed", str(tmp_path / "edge.jsonl"), "-m", "bleu",
                                    "--criteria", "r_snt", "--format", "json", "--bootstrap", "0", "-q"])
    doc = json.loads(res.output)
    assert doc["rows"][0]["r_snt"]["value"] is None
