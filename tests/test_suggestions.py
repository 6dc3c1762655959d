"""A mistyped name gets the close names, in one wording, wherever a user types one."""

import pytest
from click.testing import CliRunner

from combo.cli import main
from combo.options import close_names, did_you_mean


def test_close_names_ignore_case_and_hyphens():
    assert close_names("rouge_l", ["rouge-l", "rouge-1"]) == ["rouge-l"]
    assert close_names("XCOMET-xl", ["XCOMET-XL", "XCOMET-XXL"]) == ["XCOMET-XL"]
    assert did_you_mean("chrff", ["chrf", "chrf++", "bleu"]) == "did you mean chrf or chrf++?"
    assert did_you_mean("zzz", ["chrf", "bleu"]) == ""


@pytest.mark.parametrize("args, hint", [
    (["-m", "chrff"], "did you mean chrf or chrf++?"),
    (["-m", "rouge_l"], "did you mean rouge-l?"),
    (["-m", "@lexcal"], "did you mean @lexical?"),
])
def test_metric_and_set_typos(args, hint):
    res = CliRunner().invoke(main, ["score", "--testbed", "example", *args])
    assert res.exit_code == 2 and hint in res.output and len(res.output.strip().split("\n")) == 1


def test_testbed_typo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["score", "--testbed", "exampel"])
    assert res.exit_code == 2 and "did you mean example?" in res.output
    assert CliRunner().invoke(main, ["score", "--testbed", "example"]).exit_code == 0  # the fix works


@pytest.mark.parametrize("args, hint", [
    (["search", "--testbed", "example", "--criterion", "kng"], "did you mean king?"),
    (["evaluate", "--testbed", "example", "--criteria", "r_snt,wmt_kendal"], "did you mean wmt_kendall"),
    (["evaluate", "--testbed", "example", "--combine", "ulx"], "did you mean ulc?"),
    (["train", "--testbed", "example", "--objective", "wmt32", "--out", "m.json"], "did you mean wmt23?"),
])
def test_option_value_typos(args, hint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and hint in res.output and len(res.output.strip().split("\n")) == 1


def test_mtme_names_ignore_case(data):
    res = CliRunner().invoke(main, ["score", "--testbed", str(data / "wmt23"), "--lp", "en-de",
                                    "-m", "mtme:xcomet-xl"])
    assert res.exit_code == 2 and "did you mean XCOMET-XL?" in res.output
    res = CliRunner().invoke(main, ["score", "--testbed", str(data / "wmt23"), "--lp", "en-de", "-m", "mtme:XCOMET"])
    assert res.exit_code == 2 and "did you mean COMET, XCOMET-XL or XCOMET-XXL?" in res.output
