"""What a result leaves out is said in every output format: the table's "note:" lines and JSON's "notes" hold the
same lines (evaluate, search, the HTML report), and a data format (TSV, CSV) gets them on stderr (score)."""

import json

import pytest
from click.testing import CliRunner

from combo.cli import main
from five_refs import write_scores, write_testbed

UNSCORED = "1 judged candidate without a metric score left out"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _separate():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


@pytest.fixture
def bed(tmp_path):
    return write_testbed(tmp_path), write_scores(tmp_path)


def _notes(text):
    return [line[len("note: "):] for line in text.splitlines() if line.startswith("note: ")]


def test_evaluate_says_what_is_left_out_in_the_table_as_in_json(bed):
    tb, scores = bed
    args = ["evaluate", "--testbed", tb, "-m", f"scores:{scores}", "bleu", "--criteria", "r_snt,wmt_kendall,acc_eq",
            "--bootstrap", "0", "-q"]
    table = run(*args)
    doc = run(*args, "--format", "json")
    assert table.exit_code == 0 and doc.exit_code == 0, (table.output, doc.output)
    in_json = json.loads(doc.output)["notes"]
    assert _notes(table.output) == in_json
    name = f"scores:{scores}"
    assert f"r_snt: {UNSCORED} ({name}, ULC(all))" in in_json
    # the preference pairs of the unscored candidate were left out silently before; one line for the criteria
    # that leave the same out of the same entries
    assert f"wmt_kendall, acc_eq: 2 preference pairs with a candidate without a metric score left out ({name}, " \
        "ULC(all))" in in_json
    row = {r["metric"]: r for r in json.loads(doc.output)["rows"]}[name]
    assert UNSCORED in row["r_snt"]["note"]  # the row's own note, as before


def test_search_says_what_the_sets_measured_leave_out(bed):
    tb, scores = bed
    args = ["search", "--testbed", tb, "-m", f"scores:{scores}", "bleu", "chrf", "--criterion", "r_snt", "-q"]
    table, doc = run(*args), run(*args, "--format", "json")
    assert table.exit_code == 0 and doc.exit_code == 0, (table.output, doc.output)
    notes = json.loads(doc.output)["notes"]
    assert _notes(table.output) == notes
    assert any(n.startswith(f"r_snt: {UNSCORED} (") and f"scores:{scores}" in n for n in notes), notes


def test_score_says_which_candidates_have_no_score_and_writes_valid_json(bed):
    tb, scores = bed
    doc = run("score", "--testbed", tb, "-m", f"scores:{scores}", "--format", "json", "-q")
    assert doc.exit_code == 0, doc.output
    assert "NaN" not in doc.output  # null: NaN is not JSON
    parsed = json.loads(doc.output)
    assert [r for r in parsed["segment"] if r[f"scores:{scores}"] is None] == [
        {"system": "poor", "segment": "s1", f"scores:{scores}": None}]
    expected = f"scores:{scores}: no score for 1 candidate"
    assert parsed["notes"][0].startswith(expected)
    tsv = _separate().invoke(main, ["score", "--testbed", str(tb), "-m", f"scores:{scores}", "-q"])
    assert tsv.exit_code == 0
    assert tsv.stdout.startswith("system\t") and "note:" not in tsv.stdout  # the data stays data
    assert f"note: {parsed['notes'][0]}" in tsv.stderr.splitlines()


def test_the_report_shows_the_same_notes(bed, tmp_path):
    pytest.importorskip("matplotlib")
    tb, scores = bed
    out = tmp_path / "r.html"
    res = run("report", "--testbed", tb, "-m", f"scores:{scores}", "bleu", "--criteria", "r_snt",
              "--bootstrap", "20", "-q", "--out", out)
    assert res.exit_code == 0, res.output
    assert f"note: r_snt: {UNSCORED} (scores:{scores}, ULC(all))" in out.read_text(encoding="utf-8")
