"""combo search's "beats best single": said to be in-sample, with the paired bootstrap test of the selected set against
the best single metric (JSON keeps beats_best_single and adds in_sample and p_value)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo import example_path
from combo.cli import main
from combo.evaluate import MetaEvaluator
from combo.meta.significance import paired_bootstrap_test

METRICS = ["bleu", "chrf", "ter", "rouge-l", "wer", "nist"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _pearson(x, y):
    """Pearson's r along the last axis (a batch of resamples in front), written out: the test's own oracle."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    return (xc * yc).sum(axis=-1) / np.sqrt((xc ** 2).sum(axis=-1) * (yc ** 2).sum(axis=-1))


def test_search_says_in_sample_and_the_p_value_of_the_paired_test():
    args = ["search", "--testbed", "example", "-m", *METRICS, "--criterion", "r_snt", "-q"]
    doc = json.loads(run(*args, "--format", "json").output)
    assert doc["selected"] == ["chrf", "nist"] and doc["best_single"]["metric"] == "chrf"
    assert doc["beats_best_single"] is True and doc["in_sample"] is True
    # the same test by hand: segments resampled whole (1000 draws, seed 0), the ULC of chrF and NIST against chrF
    tb = combo.load_testbed(example_path())
    table = combo.score_testbed(tb, ["chrf", "nist"])
    ev = MetaEvaluator(tb, table)
    human = ev.human[table.row_system, table.row_segment]
    ok = np.isfinite(human)
    both = ev.combined_rows([0, 1], "ulc")[0][ok]
    chrf = table.segment[0][ok]
    expected = paired_bootstrap_test(_pearson, both, chrf, human[ok], n_resamples=1000, seed=0,
                                     groups=table.row_segment[ok]).p_value
    assert doc["p_value"] == pytest.approx(expected, abs=1e-12)
    assert doc["significance"]["significant"] is False and doc["significance"]["unit"] == "segments"
    table_text = run(*args).output
    line = next(x for x in table_text.splitlines() if x.startswith("beats best single:"))
    assert line == ("beats best single: yes, in-sample (the set was selected on these segments); no significant "
                    f"difference (p = {expected:.3f}, one-sided paired bootstrap over 1000 resamples of segments, "
                    "seed 0)")


def test_no_test_without_resamples_and_none_when_the_best_single_metric_is_kept():
    res = run("search", "--testbed", "example", "-m", *METRICS, "--criterion", "r_snt", "-q", "--bootstrap", "0")
    assert "beats best single: yes, in-sample (the set was selected on these segments); not tested (no bootstrap " \
           "resamples)" in res.output
    doc = json.loads(run("search", "--testbed", "example", "-m", "bleu", "chrf", "--criterion", "king", "-q",
                         "--format", "json").output)
    assert doc["selected"] == [doc["best_single"]["metric"]] and doc["beats_best_single"] is False
    assert doc["in_sample"] is True and doc["p_value"] is None
    assert doc["significance"]["note"] == "the selected set is the best single metric"


def test_the_report_says_it_too(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "s.html"
    res = run("search", "--testbed", "example", "-m", *METRICS, "--criterion", "r_snt", "-q", "--report", out)
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    assert "the set beats it in-sample: it was selected on these segments, so the gain is optimistic; no " \
           "significant difference (p = " in page


def test_wmt23_gain_over_metricx_is_tested_in_sample(data):
    # WMT23 en-de, acc_eq as WMT23 computes it: the greedy set beats MetricX-23 (.6026) in-sample; the line says so
    # and gives the paired test's p-value over the 557 segments
    res = run("search", "--testbed", data / "wmt23", "--lp", "en-de", "--criterion", "acc_eq_item", "-q", "-m",
              "mtme:MetricX-23", "mtme:MetricX-23-QE", "mtme:COMET", "mtme:BLEURT-20", "mtme:chrF", "mtme:CometKiwi",
              "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["best_single"] == {"metric": "mtme:MetricX-23", "quality": pytest.approx(0.6026, abs=5e-5)}
    assert doc["beats_best_single"] and doc["in_sample"] and 0 < doc["p_value"] < 1
    assert doc["significance"]["resamples"] == 1000 and doc["significance"]["unit"] == "segments"
