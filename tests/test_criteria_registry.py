"""Criteria and combination schemes are records in one registry each (combo.evaluate): what is written about them
elsewhere is read from there, and README.md, which is static text, names them all.

A toy criterion (segment Spearman) and a toy scheme (the maximum of the min-max normalised scores), each registered
in one place inside the test, reach every place a user meets criteria and schemes: search's and evaluate's --help,
evaluate's table and JSON on the bundled example test bed, search, and the HTML report. Registration is undone when
the test ends, so no other test sees them.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import spearmanr

from combo import evaluate
from combo.cli import main
from combo.combine.ulc import ulc
from combo.evaluate import (Criterion, MetaEvaluator, Needs, Scheme, correlation_bootstrap, criterion_names,
                            registered, scheme_names)

CRITERIA, SCHEMES = criterion_names(), scheme_names()  # the built-in ones

ROOT = Path(__file__).resolve().parents[1]
METRICS = ["-m", "bleu", "-m", "chrf"]


def test_readme_names_every_criterion_and_scheme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # the command list's line (the quick start's command names one criterion)
    criteria = re.search(r"^- `combo search --criterion (\S+)", readme, re.M).group(1).split("|")
    schemes = re.search(r"\[--scheme (\S+)\]", readme).group(1).split("|")
    assert tuple(criteria) == CRITERIA
    assert tuple(schemes) == SCHEMES


# -- a toy criterion and a toy scheme -------------------------------------------------------------------------------

SEG_SPEARMAN = Criterion(
    "seg_spearman", "segment Spearman (toy)",
    "Spearman correlation of segment scores with human segment scores; -1 to 1, higher is better (a test's toy)",
    "segment", lambda ev, subset, criterion, scheme: ev.segment_correlation(subset, criterion, scheme, "spearman"),
    Needs("segment"), bootstrap=correlation_bootstrap("spearman"))


def _normalised(scores, higher_is_better):
    """Each metric min-max normalised over the test bed (the ULC of one metric), one row per metric."""
    return np.stack([ulc(scores[[k]], higher_is_better[[k]]) for k in range(len(scores))])


MAX = Scheme("max", "the largest of the min-max normalised metric scores (a test's toy)",
             lambda ev, subset: (_normalised(ev.table.segment[subset], ev.hib[subset]).max(axis=0), 0),
             lambda ev, subset: _normalised(ev.table.system[subset], ev.hib[subset]).max(axis=0))


@pytest.fixture
def toys():
    with registered(SEG_SPEARMAN, MAX):
        yield
    assert "seg_spearman" not in evaluate.criterion_names() and "max" not in evaluate.scheme_names()


def run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def test_a_registered_criterion_and_scheme_are_in_every_help(toys):
    for command in ("search", "evaluate"):
        helped = run(command, "--help")
        assert re.search(r"^\s+seg_spearman\s+Spearman correlation of segment scores.*toy", helped, re.M), command
        assert re.search(r"^\s+max\s+the largest of the min-max normalised", helped, re.M), command
    search = run("search", "--help")
    assert "|mutt|seg_spearman|" in search and "[queen|ulc|mean-rank|max]" in search
    evaluate_help = re.sub(r"-\s+", "-", " ".join(run("evaluate", "--help").split()))  # help wraps at a hyphen
    assert "sys_accuracy, wmt23, mutt, seg_spearman." in evaluate_help
    assert "queen, ulc, mean-rank, max." in evaluate_help
    assert "mean-rank, max." in re.sub(r"-\s+", "-", " ".join(run("report", "--help").split()))


def test_a_registered_criterion_and_scheme_in_evaluate_search_and_the_api(toys):
    args = ("evaluate", "--testbed", "example", "-q", *METRICS, "--criteria", "r_snt,seg_spearman",
            "--combine", "ulc,max", "--bootstrap", 200)
    table = run(*args)
    header, *lines = table.splitlines()
    assert header.split() == ["metric", "r_snt", "seg_spearman"]
    assert [line.split()[0] for line in lines[:4]] == ["bleu", "chrf", "ULC(all)", "MAX(all)"]
    assert f"# seg_spearman: {SEG_SPEARMAN.meaning}" in lines
    doc = json.loads(run(*args, "--format", "json"))
    assert doc["criteria"] == ["r_snt", "seg_spearman"] and doc["meanings"]["seg_spearman"] == SEG_SPEARMAN.meaning
    rows = {r["metric"]: r for r in doc["rows"]}
    assert set(rows) == {"bleu", "chrf", "ULC(all)", "MAX(all)"}
    cell = rows["bleu"]["seg_spearman"]
    assert cell["low"] < cell["value"] < cell["high"] and cell["resampled"] == "segments"  # its bootstrap
    assert cell["text"] in table and rows["MAX(all)"]["r_snt"]["text"] in table

    # the values are what the records compute: Spearman over every judged candidate, and the maximum of the
    # normalised scores, by hand
    from combo.io import load_testbed
    from combo.io.fetch import example_path
    from combo.scoring import score_testbed

    tb = load_testbed(example_path())
    ev = MetaEvaluator(tb, score_testbed(tb, ["bleu", "chrf"]))
    metric, human = ev.table.segment[0], ev.human[ev.table.row_system, ev.table.row_segment]
    judged = np.isfinite(human)
    assert cell["value"] == pytest.approx(spearmanr(metric[judged], human[judged])[0], abs=1e-12)
    both = np.maximum(*[(x - x.min()) / (x.max() - x.min()) for x in ev.table.segment])
    rows_max, skipped = ev.combined_rows([0, 1], "max")
    assert skipped == 0 and np.allclose(rows_max, both)
    assert rows["MAX(all)"]["r_snt"]["value"] == pytest.approx(ev.quality([0, 1], "r_snt", "max").value, abs=1e-12)
    assert ev.quality([0, 1], "seg_spearman").scheme == "ulc"  # the default scheme

    found = run("search", "--testbed", "example", "-q", *METRICS, "--criterion", "seg_spearman", "--scheme", "max",
                "--bootstrap", 0)
    assert found.startswith("criterion: seg_spearman (scheme max, strategy greedy)")
    assert f"  meaning: seg_spearman: {SEG_SPEARMAN.meaning}" in found
    mutt = CliRunner().invoke(main, ["evaluate", "--testbed", "example", "-q", "-m", "bleu", "--criteria", "mutt",
                                     "--combine", "queen", "--bootstrap", 0])
    assert "use --scheme" not in mutt.output and "leave queen out of --combine" in mutt.output
    with pytest.raises(Exception, match="use --scheme ulc, mean-rank or max"):  # MUTT's refusal names the new one
        evaluate.check_scheme("mutt", "queen", "search")


def test_a_registered_criterion_and_scheme_in_the_report(toys, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    run("report", "--testbed", "example", "-q", *METRICS, "--combine", "ulc,max", "--bootstrap", 50, "--out", out)
    html = out.read_text(encoding="utf-8")
    doc = json.loads(re.search(r'<script type="application/json" id="combo-evaluation">(.*?)</script>', html,
                               re.S).group(1))
    assert "seg_spearman" in doc["criteria"]  # the default: every criterion the test bed supports
    assert {r["metric"] for r in doc["rows"]} == {"bleu", "chrf", "ULC(all)", "MAX(all)"}
    assert "seg_spearman (segment)" in html  # the meta-evaluation table's column, with the record's level
    assert 'data-figure="bars-seg_spearman"' in html and "segment Spearman (toy): blue metrics" in html  # its title


def test_registration_is_undone_and_names_are_not_taken_twice():
    with registered(SEG_SPEARMAN, MAX):
        assert evaluate.criterion_names()[-1] == "seg_spearman" and evaluate.scheme_names()[-1] == "max"
        assert evaluate.get_criterion("seg_spearman").title == "segment Spearman (toy)"
        with pytest.raises(ValueError, match="'seg_spearman' is taken"):
            evaluate.register_criterion(SEG_SPEARMAN)
    assert evaluate.criterion_names() == CRITERIA and evaluate.scheme_names() == SCHEMES
    with pytest.raises(ValueError, match="'kendall' is taken"):  # an old name is taken too
        evaluate.register_criterion(Criterion("tau", "t", "m", "segment", SEG_SPEARMAN.compute, aliases=("kendall",)))
    with pytest.raises(ValueError, match="scheme 'max': the name is taken"):  # a failed registration undoes the ones before it
        with registered(MAX, MAX):
            pass
    assert evaluate.scheme_names() == SCHEMES
    res = CliRunner().invoke(main, ["evaluate", "--testbed", "example", "-q", "-m", "bleu", "--criteria",
                                    "seg_spearman", "--bootstrap", 0])
    assert res.exit_code == 2 and "unknown criterion 'seg_spearman'" in res.output
    assert "seg_spearman" not in CliRunner().invoke(main, ["search", "--help"]).output
