"""Trust, round three: behaviours the third round of bad inputs found wrong, each pinned."""

import json

from click.testing import CliRunner

from combo.cli import main


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_several_ranking_pairs_evaluate_together_without_an_official_average(data):
    """WMT12's pairs (relative rankings) get each pair's table; WMT23's official average needs absolute scores and
    is refused only where its criterion is asked for."""
    args = ("evaluate", "--testbed", data / "wmt12", "--lp", "cs-en,de-en", "-m", "bleu", "--bootstrap", "0", "-q")
    res = _run(*args, "--criteria", "wmt_kendall")
    assert res.exit_code == 0, res.output
    assert "# wmt12.cs-en" in res.output and "# wmt12.de-en" in res.output and "official average" not in res.output
    doc = json.loads(_run(*args, "--criteria", "wmt_kendall", "--format", "json").output)
    assert len(doc["pairs"]) == 2 and "wmt23_official" not in doc
    res = _run(*args, "--criteria", "wmt23")
    assert res.exit_code == 2 and "no absolute segment scores" in res.output and res.output.count("\n") == 1
