"""Named metric sets (combo.metrics.sets): one source for the docs' figures, expansion, missing members, defaults."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from combo.cli import main
from combo.errors import OptionError, ResourceMissing
from combo.io import load_testbed
from combo.io.fetch import example_path
from combo.metrics import sets
from combo.metrics.registry import metric_class
from combo.scoring import score_testbed

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def no_minilm(monkeypatch):
    """sent-emb as if the sentence extra were not installed."""
    def missing(self):
        raise ResourceMissing("sentence-transformers", "pip install 'combo-eval[sentence]'")
    monkeypatch.setattr(metric_class("sent-emb"), "check_resources", missing)


def test_the_studies_use_the_sets():
    sys.path.insert(0, str(ROOT / "experiments"))
    try:
        import wmt12_tuned
    finally:
        sys.path.pop(0)
    assert wmt12_tuned.WITH_SENTENCE == list(sets.HETEROGENEOUS) and len(sets.HETEROGENEOUS) == 37
    assert wmt12_tuned.HETEROGENEOUS == list(sets.HETEROGENEOUS_NO_SENTENCE)
    assert len(sets.HETEROGENEOUS_NO_SENTENCE) == 36
    assert wmt12_tuned.FEATURES == list(sets.LEXICAL) and len(sets.LEXICAL) == 23
    assert wmt12_tuned.SEVEN == list(sets.SEVEN) and len(sets.SEVEN) == 7
    assert wmt12_tuned.CONFIGS["heterogeneous+sentence"] == list(sets.SETS["heterogeneous"].members)
    # every member is a registered metric whose options parse
    for metric_set in sets.SETS.values():
        assert len(set(metric_set.members)) == len(metric_set.members)
        for spec in metric_set.members:
            metric_class(spec.partition(":")[0])


def test_expansion_keeps_order_and_drops_duplicates():
    assert sets.expand_metric_sets(["chrf", "@seven", "bleu"]) == ["chrf", "bleu", "chrf++", "ter", "rouge-l",
                                                                    "rouge-1", "meteor"]
    assert sets.expand_metric_sets(["@lexical", "@search"]) == list(sets.LEXICAL)  # search is inside lexical
    with pytest.raises(OptionError, match="unknown metric set '@lexicon'.*@heterogeneous"):
        sets.expand_metric_sets(["@lexicon"])
    with pytest.raises(OptionError, match="only the option 'available'"):
        sets.expand_metric_sets(["@lexical:all"])


def test_a_missing_member_is_an_error_unless_available_is_asked_for(no_minilm):
    with pytest.raises(ResourceMissing) as err:
        sets.expand_metric_sets(["@heterogeneous"])
    message = str(err.value)
    assert "1 of its 37 metrics: sent-emb (sentence-transformers)" in message
    assert "pip install 'combo-eval[sentence]'" in message and "@heterogeneous:available" in message
    notes = []
    specs = sets.expand_metric_sets(["@heterogeneous:available"], notes)
    assert specs == list(sets.HETEROGENEOUS_NO_SENTENCE)
    assert notes == ["@heterogeneous:available: left out 1 of 37 metrics (resource missing here): sent-emb"]


def test_score_testbed_and_the_cli_expand_sets(tmp_path):
    tb = load_testbed(example_path())
    table = score_testbed(tb, ["@seven", "cider"])
    assert table.metrics == list(sets.SEVEN) + ["cider"]
    res = run("score", "--testbed", "example", "-m", "@seven", "--format", "json", "--out", str(tmp_path / "s.json"),
              "-q")
    assert res.exit_code == 0, res.output
    assert [m["name"] for m in json.loads((tmp_path / "s.json").read_text())["metrics"]] == list(sets.SEVEN)
    res = run("search", "--criterion", "kendall", "--testbed", "example", "-m", "@seven", "-q")
    assert res.exit_code == 0, res.output
    assert "selected:" in res.output and "meteor" in res.output
    res = run("score", "--testbed", "example", "-m", "@nope")
    assert res.exit_code == 2 and "unknown metric set '@nope'" in res.output


def test_cli_refuses_a_set_with_a_missing_member(no_minilm, tmp_path):
    out = tmp_path / "m.json"
    res = run("train", "--testbed", "example", "-m", "@heterogeneous", "--out", str(out), "--folds", "0")
    assert res.exit_code == 2 and "sent-emb" in res.output and "@heterogeneous:available" in res.output
    assert "Traceback" not in res.output and not out.exists()


def test_training_default_is_heterogeneous_where_installed(monkeypatch):
    monkeypatch.setattr(sets, "unavailable_members", lambda metric_set: {})
    name, specs, notes = sets.training_default(["en"])
    assert (name, specs, notes) == ("@heterogeneous", list(sets.HETEROGENEOUS), [])
    name, specs, notes = sets.training_default(["de"])  # parsers, GloVe and MiniLM read English only
    assert name == "@lexical" and "chrf" in specs and "meteor" not in specs and "rouge-l" not in specs
    assert "read only English" in notes[-1] and "sent-emb" in notes[-1]


def test_train_falls_back_to_lexical_with_a_note_and_records_the_set(no_minilm, tmp_path):
    out = tmp_path / "m.json"
    res = run("train", "--testbed", "example", "--out", str(out), "--folds", "0")
    assert res.exit_code == 0, res.output
    assert "features: @lexical, 23 metrics (the default)" in res.output
    note = [line for line in res.output.splitlines() if line.startswith("note: @heterogeneous")]
    assert note and "sent-emb" in note[0] and "pip install 'combo-eval[sentence]'" in note[0] and ".326" in note[0]
    doc = json.loads(out.read_text())
    assert [m["spec"] for m in doc["metrics"]] == list(sets.LEXICAL)
    assert doc["training"]["metric_set"]["sets"] == "@lexical" and doc["training"]["metric_set"]["default"] is True
    res = run("train", "--testbed", "example", "-m", "@seven", "-m", "cider", "--out", str(out), "--folds", "0",
              "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["training"]["metric_set"] == {"sets": "@seven", "default": False, "notes": []}
    assert [m["spec"] for m in doc["metrics"]] == list(sets.SEVEN) + ["cider"]


def test_combo_metrics_lists_the_sets(no_minilm):
    res = run("metrics")
    assert res.exit_code == 0, res.output
    assert "@heterogeneous               37 metrics  available: no: 1 missing (sent-emb)" in res.output
    assert "@lexical                     23 metrics  available: yes" in res.output
    doc = json.loads(run("metrics", "--format", "json").output)
    rows = {r["name"]: r for r in doc["sets"]}
    assert rows["@heterogeneous"]["members"] == list(sets.HETEROGENEOUS)
    assert list(rows["@heterogeneous"]["unavailable"]) == ["sent-emb"]
    assert rows["@heterogeneous"]["size"] == 37 and "all-minilm-l6-v2" in rows["@heterogeneous"]["resources"]
