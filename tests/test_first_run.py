"""A new user's first hour: the public example path, fixes named where a resource is missing, where the data
is looked for, and the mode of written files."""

import os
import stat

import pytest
from click.testing import CliRunner

import combo
from combo.cli import main
from combo.io.text import current_umask, write_text_atomic


def test_example_path_is_public_and_load_testbed_reads_example():
    path = combo.example_path()
    assert path.is_file() and path.name == "example.jsonl"
    by_name = combo.load_testbed("example")
    assert len(by_name.segments) == len(combo.load_testbed(path).segments) == 24


def test_metric_left_out_for_a_missing_resource_names_the_fix(monkeypatch, tmp_path):
    from combo.features import wordnet

    monkeypatch.setattr(wordnet, "_reader", None)
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "no-nltk-data"))
    monkeypatch.setenv("COMBO_DATA_HOME", str(tmp_path / "no-data-home"))
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nowhere")])
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "--criterion", "r_snt", "-q",
                                    "-m", "bleu", "-m", "chrf"])
    assert res.exit_code == 0, res.output  # explicit metrics: nothing left out
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "--criterion", "r_snt", "-q"])
    assert res.exit_code == 0, res.output
    note = [line for line in res.output.splitlines() if "resource missing" in line]
    assert len(note) == 1 and "meteor" in note[0]
    assert "combo data fetch wordnet" in note[0] and "NLTK_DATA" in note[0]


def test_data_list_says_where_it_looked_and_reads_the_older_variable(monkeypatch, tmp_path, data):
    monkeypatch.delenv("COMBO_DATA_HOME", raising=False)
    monkeypatch.setenv("COMBO_DATA_DIR", str(data))
    res = CliRunner().invoke(main, ["data", "list"])
    assert res.exit_code == 0, res.output
    assert "wmt12\tverified" in res.stdout
    assert f"looked in {data}" in res.stderr and "older name" in res.stderr
    monkeypatch.setenv("COMBO_DATA_HOME", str(tmp_path))  # the one variable wins over the older name
    res = CliRunner().invoke(main, ["data", "list"])
    assert "wmt12\tabsent" in res.stdout
    assert f"looked in {tmp_path} ($COMBO_DATA_HOME)" in res.stderr and "combo data fetch NAME" in res.stderr


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_follow_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        assert current_umask() == mask
        write_text_atomic("x\n", tmp_path / "out.tsv")
        plain = tmp_path / "plain.tsv"
        plain.write_text("x\n")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "out.tsv").stat().st_mode)
    assert mode == 0o666 & ~mask == stat.S_IMODE(plain.stat().st_mode)


def test_cli_out_file_is_not_private(tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "scores.tsv"
        res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu", "-q", "--out", str(out)])
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
