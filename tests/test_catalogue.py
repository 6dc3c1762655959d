"""The metric catalogue is generated from the registry, and docs/catalogue.md is its current rendering."""

from pathlib import Path

import combo
from combo.catalogue import catalogue, render
from combo.metrics.registry import metric_class

ROOT = Path(__file__).resolve().parents[1]


def test_docs_catalogue_is_generated_from_the_registry():
    on_disk = (ROOT / "docs" / "catalogue.md").read_text(encoding="utf-8")
    assert on_disk == render(catalogue(), "markdown"), (
        "docs/catalogue.md is stale: regenerate it with `combo metrics --format markdown > docs/catalogue.md`")


def test_every_metric_declares_what_the_catalogue_needs():
    names = combo.list_metrics()
    for required in ("bleu", "chrf", "chrf++", "ter", "wer", "per", "nist", "meteor", "gtm", "cider",
                     "rouge-n", "rouge-l", "rouge-w", "rouge-s", "rouge-su"):
        assert required in names
    for name in names:
        cls = metric_class(name)
        assert cls.citation, f"{name} cites no paper"
        assert cls.family in ("lexical", "shallow-syntactic", "syntactic", "embedding", "neural", "learned", "external")
        metric = cls()
        sig = metric.signature
        assert sig.startswith(cls.name + "|") and "version:" in sig
        for key in cls.options:
            assert key in metric.params


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "<!-- test-command -->" in readme and "<!-- test-command -->" in ci
    assert readme.count("<!-- main-command -->") == 1
