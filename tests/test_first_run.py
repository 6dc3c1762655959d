"""A new user's first hour: the public example path, fixes named where a resource is missing, where the data
is looked for, and the mode of written files."""

import json
import os
import re
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
    from combo.errors import ResourceMissing
    from combo.analysis import wordnet
    from combo.metrics.lexical import meteor

    def absent():  # WordNet as a machine without it sees it (the real reader may be loaded in this process)
        raise ResourceMissing(wordnet.RESOURCE, wordnet.INSTALL)

    monkeypatch.setattr(meteor, "find_wordnet", absent)
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "--criterion", "r_snt", "-q",
                                    "-m", "bleu", "-m", "chrf"])
    assert res.exit_code == 0, res.output  # explicit metrics: nothing left out
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "--criterion", "r_snt", "-q"])
    assert res.exit_code == 0, res.output
    note = [line for line in res.output.splitlines() if "resource missing" in line]
    assert len(note) == 1 and "meteor" in note[0]
    assert "combo data fetch wordnet" in note[0] and "NLTK_DATA" in note[0]


def test_wordnet_is_looked_for_in_the_data_home(monkeypatch, tmp_path):
    """combo data fetch wordnet puts it in <data home>/nltk_data, and that is enough for METEOR."""
    from types import SimpleNamespace

    from combo.analysis.wordnet import _add_nltk_data_env

    monkeypatch.setenv("COMBO_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "mine"))
    nltk = SimpleNamespace(data=SimpleNamespace(path=["/usr/share/nltk_data"]))
    _add_nltk_data_env(nltk)
    assert nltk.data.path == ["/usr/share/nltk_data", str(tmp_path / "mine"), str(tmp_path / "nltk_data")]


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


def test_data_fetch_prints_the_folder_of_a_data_set_already_here(monkeypatch, data):
    monkeypatch.setenv("COMBO_DATA_HOME", str(data))
    from combo.io import fetch

    monkeypatch.setattr(fetch, "_default_urlopen", lambda url: pytest.fail(f"tried to download {url}"))
    res = CliRunner().invoke(main, ["data", "fetch", "wordnet"])
    assert res.exit_code == 0 and res.stdout == f"{data / 'nltk_data'}\n"


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


def test_cli_out_file_and_score_cache_are_not_private(tmp_path):
    old = os.umask(0o002)
    try:
        out = tmp_path / "scores.tsv"
        res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu", "-q", "--out", str(out),
                                        "--cache", str(tmp_path / "cache")])
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o664
    cached = list((tmp_path / "cache").glob("*.npz"))
    assert cached and all(stat.S_IMODE(f.stat().st_mode) == 0o664 for f in cached)


# -- KING's ties, what each criterion means, and the advice for too few references ---------------------------

def test_king_tie_share_and_other_tie_rules_from_the_same_counts():
    import numpy as np

    from combo.meta.likeness import king

    rng = np.random.default_rng(3)
    # one metric on a coarse scale (three values), so ties are frequent: 6 segments, 3 candidates, 5 references
    segments = []
    for _ in range(6):
        refs = rng.integers(0, 3, size=(1, 5, 5)).astype(float)
        segments.append((rng.integers(0, 3, size=(1, 3, 5)).astype(float), (refs + refs.transpose(0, 2, 1)) / 2))
    count = king(segments, ties="count")
    assert 0 < count.tie_share < 1
    assert count.tie_share == count.ties / count.comparisons and count.comparisons == 6 * 5
    for rule in ("half", "strict"):
        assert count.value_with_ties(rule) == pytest.approx(king(segments, ties=rule).value)
    constant = king([(np.zeros((1, 3, 5)), np.zeros((1, 5, 5)))] * 2)
    assert (constant.value, constant.tie_share, constant.value_with_ties("strict")) == (1.0, 1.0, 0.0)


def test_search_and_evaluate_print_ties_meanings_and_warnings():
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "-q", "-m", "rouge-2", "chrf"])
    assert res.exit_code == 0, res.output
    quality = next(line for line in res.output.splitlines() if line.startswith("quality:"))
    assert re.fullmatch(r"quality: 0\.\d{4} \(ties \d+%\)", quality)
    assert "  meaning: king: share of references" in res.output
    res = CliRunner().invoke(main, ["evaluate", "--testbed", "example", "-q", "-m", "rouge-2", "--criteria",
                                    "king,kendall", "--bootstrap", "0", "--format", "json"])
    doc = json.loads(res.stdout)
    cell = doc["rows"][0]["king"]
    assert 0 <= cell["tie_share"] <= 1 and cell["value_strict"] <= cell["value"]
    assert "tie_share" not in doc["rows"][0]["wmt_kendall"] and set(doc["meanings"]) == {"king", "wmt_kendall"}
    helped = CliRunner().invoke(main, ["evaluate", "--help"]).output
    from combo.evaluate import criterion_names, criterion_records

    assert [c.name for c in criterion_records() if c.meaning] == list(criterion_names())
    assert all(f"  {c} " in helped for c in criterion_names()) and "QUEEN: probability" in helped


def test_a_king_result_decided_by_ties_is_flagged():
    from combo.evaluate import Quality, king_tie_warnings

    chosen = Quality(0.64, "king", "queen", tie_share=0.58, value_strict=0.05)
    single = Quality(0.30, "king", "queen", tie_share=0.03, value_strict=0.28)
    warnings = king_tie_warnings(chosen, single)
    assert len(warnings) == 2 and "58%" in warnings[0] and "0.0500" in warnings[0] and "reversed" in warnings[1]
    assert king_tie_warnings(chosen, single, ties="strict") == []
    assert king_tie_warnings(Quality(0.5, "king", "queen", tie_share=0.1, value_strict=0.45), single) == []


def test_king_cost_by_hand():
    from combo.meta_run import king_cost

    # segments (references, candidates): (4, 2) costs (2 + 4) * 4 * 1 = 24 (n^2/64 < 1), (10, 3) costs
    # (3 + 10) * 10 * 100/64 = 203.125; (3, 5) has too few references for KING and is left out.
    # Pairs: 4^2 + 2 * 4 = 24 and 10^2 + 3 * 10 = 130
    one = king_cost([4, 10, 3], [2, 3, 5], n_metrics=1)
    assert (one.segments, one.pairs, one.operations, one.score_bytes) == (2, 154, 227.125, 8 * 154)
    two = king_cost([4, 10, 3], [2, 3, 5], n_metrics=2)  # 2 singles and 1 pair of two metrics: 4 x one
    assert two.operations == 4 * 227.125 and two.score_bytes == 2 * 8 * 154
    capped = king_cost([4, 10, 3], [2, 3, 5], n_metrics=1, max_refs=8)  # (3 + 8) * 8 * 1 = 88
    assert (capped.pairs, capped.operations) == (24 + 64 + 24, 24 + 88)


def test_too_few_references_advice_names_both_options_and_the_cost(data):
    res = CliRunner().invoke(main, ["search", "--criterion", "king", "--testbed", str(data / "dstc7"), "-m", "bleu"])
    assert res.exit_code == 2
    assert "--min-refs 4" in res.output and "--max-refs 8" in res.output
    assert re.search(r"alone: [\d,]+ text pairs .* about [\d.]+ (min|h) on one core", res.output)
    assert re.search(r"--max-refs 8 too: [\d,]+ text pairs .* about \d+ s on one core", res.output)
    assert "--king-segments 100 --king-sample 16" in res.output
    assert "Traceback" not in res.output


def test_max_refs_below_what_king_needs_is_refused():
    res = CliRunner().invoke(main, ["search", "--testbed", "example", "-m", "bleu", "--max-refs", "3"])
    assert res.exit_code == 2 and "--max-refs 3 leaves fewer than the 4 references" in res.output
