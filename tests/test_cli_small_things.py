"""What a user sees in passing: names, counts and fields as they read."""

import json

from click.testing import CliRunner

import combo
from combo.cli import main


def _model(tmp_path):
    path = tmp_path / "m.json"
    res = CliRunner().invoke(main, ["train", "--testbed", "example", "-m", "bleu", "-m", "chrf", "--method", "ulc",
                                    "--out", str(path), "-q", "--folds", "0"])
    assert res.exit_code == 0, res.output
    return path


def test_apply_names_systems_as_test_beds_do_and_refuses_a_file_given_twice(tmp_path):
    model = _model(tmp_path)
    (tmp_path / "hyps.txt").write_text("the cat sat\n")
    (tmp_path / "ref.txt").write_text("the cat sat down\n")
    res = CliRunner().invoke(main, ["apply", "--model", str(model), "--hyps", str(tmp_path / "hyps.txt"),
                                    "--refs", str(tmp_path / "ref.txt")])
    assert res.exit_code == 0 and res.stdout.splitlines()[1].startswith("hyps\t")  # not "hyps.txt"
    res = CliRunner().invoke(main, ["apply", "--model", str(model), "--hyps", str(tmp_path / "hyps.txt"),
                                    str(tmp_path / "hyps.txt"), "--refs", str(tmp_path / "ref.txt")])
    assert res.exit_code == 2 and "names" in res.output and "twice" in res.output and res.stdout == ""


def test_search_json_says_what_its_criterion_and_scheme_mean():
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "-m", "bleu", "-m", "chrf", "--criterion",
                                    "r_snt", "--format", "json", "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["meaning"].startswith("Pearson correlation") and doc["scheme_meaning"].startswith("ULC")


def test_one_human_translation_is_singular():
    from combo.evaluate import MetaEvaluator

    tb = combo.load_testbed("example")
    tb.metadata["human_systems"] = [tb.systems[0]]
    ev = MetaEvaluator(tb, combo.score_testbed(tb, ["bleu"]))
    assert ev.human_left_out() == ("1 human translation left out",)
