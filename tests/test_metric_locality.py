"""A metric's locality (what a row's statistics depend on) and its cost hints (read from the benchmark's table)."""

import json

import pytest

from combo.metrics import base
from combo.metrics.base import DEFAULT_COSTS, LOCALITIES, Metric
from combo.metrics.lexical.ter import TER
from combo.metrics.registry import get_metric, list_metrics, metric_class
from combo.metrics.tuned import MetricEntry, TunedMetric, TunedModel

#: The locality of every registered metric, worked out from what its statistics read.
EXPECTED = {
    "row": {"bleu", "chrf", "chrf++", "gtm", "meteor", "per", "ter", "wer", "rouge-1", "rouge-2", "rouge-l", "rouge-n",
            "rouge-s", "rouge-su", "rouge-w", "sp-op", "sp-oc", "cp-stm", "cp-tk", "cp-tk-ptk", "cp-tk-sst",
            "cp-tk-st", "dp-hwcm", "dp-or", "dp-tk", "ted", "emb-avg", "emb-extrema", "emb-greedy"},
    "references": {"nist", "cider", "sp-nist"},
    "candidate": {"mtme", "scores", "comet", "metricx"},
    "whole": {"sent-emb", "dr-tk", "dr-tk-lex1", "dr-tk-lex1.1", "dr-tk-lex2", "dr-tk-lex2.1", "dr-tk-nolex"},
}


def test_every_registered_metric_has_the_locality_its_statistics_need():
    found = {}
    for name in list_metrics():
        found.setdefault(metric_class(name).locality, set()).add(name)
    assert found == EXPECTED


@pytest.mark.parametrize("name", sorted(list_metrics()))
def test_locality_is_the_one_attribute_that_says_how_rows_may_be_split(name):
    for k in metric_class(name).__mro__:
        for gone in ("row_keyed", "rows_independent", "corpus_wide", "corpus", "for_corpus"):
            assert gone not in k.__dict__, (name, k, gone)


def test_a_mistyped_locality_is_an_error_when_the_class_is_defined():
    with pytest.raises(TypeError, match="'rows'.*'row', 'references', 'candidate', 'whole'"):
        type("Typo", (Metric,), {"locality": "rows"})
    assert set(LOCALITIES) == set(EXPECTED)


def test_a_tuned_metric_takes_its_locality_from_its_components(tmp_path):
    entries = [MetricEntry.of(s, get_metric(s)) for s in ("chrf", "ter")]
    model = TunedModel(entries, lo=[0.0, 0.0], hi=[1.0, 2.0], weights=[2.0, 1.0], bias=-1.0, method="pairwise-lr",
                       name="hand")
    tuned = TunedMetric(model, [get_metric("chrf"), get_metric("ter")])
    assert tuned.locality == "whole"
    read = TunedMetric(model, [get_metric("chrf"), get_metric("scores", file=str(tmp_path / "s.tsv"))])
    assert read.locality == "candidate"


def test_cost_hints_are_read_from_the_benchmarks_table(monkeypatch):
    doc = json.loads(base.COSTS_FILE.read_text(encoding="utf-8"))
    assert doc["date"] and doc["command"].startswith("python benchmarks/bench_costs.py") and doc["machine"]["cpu"]
    assert set(doc["metrics"]) <= set(list_metrics())
    for name, hints in doc["metrics"].items():
        cls = metric_class(name)
        assert hints["analysis_bytes_per_char"] > 0 and hints["relative_cost"] > 0
        assert cls.analysis_bytes_per_char == hints["analysis_bytes_per_char"]
        assert get_metric(name).relative_cost == hints["relative_cost"]
    assert doc["metrics"]["bleu"]["relative_cost"] == pytest.approx(1.0, abs=0.15)
    # a metric absent from the table, and every metric when the file is absent, has the documented defaults
    monkeypatch.setattr(base, "cost_table", lambda: {})
    assert get_metric("bleu").relative_cost == DEFAULT_COSTS["relative_cost"]
    assert metric_class("nist").analysis_bytes_per_char == DEFAULT_COSTS["analysis_bytes_per_char"]
    assert TER.relative_cost == DEFAULT_COSTS["relative_cost"]


def test_no_metric_module_declares_cost_constants():
    for name in list_metrics():
        for k in metric_class(name).__mro__:
            if k is not Metric:
                assert "relative_cost" not in k.__dict__ and "analysis_bytes_per_char" not in k.__dict__, (name, k)
