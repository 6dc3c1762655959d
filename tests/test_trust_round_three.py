"""Trust, round three: behaviours the third round of bad inputs found wrong, each pinned."""

import json
import sqlite3

import pytest
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


@pytest.mark.parametrize("damage", ["-7", "400005", "12.5", "", "x", " 3"])
def test_a_damaged_glove_row_is_analysed_again_and_scores_do_not_move(tmp_path, capsys, damage):
    """A cached GloVe row out of range, of another type or truncated was read as a row (emb-avg fell to 0, or an
    IndexError): it is a damaged entry now, analysed again after one warning, and the scores are the same."""
    pytest.importorskip("pyarrow", reason="the glove extra is not installed")
    import combo
    from combo.analysis import layers

    layers.clear_memory()
    layers.set_cache_dir(tmp_path / "cache")
    layers._warned.clear()
    try:
        hyps, refs = ["the cat sat on the mat"], [["a cat was on the mat"]]
        metric = combo.get_metric("emb-avg")
        first = metric.segment_scores(hyps, refs)
        con = sqlite3.connect(tmp_path / "cache" / "analysis.sqlite")
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows_table = [t for t in tables if "glove" in t.lower()] or tables
        for t in rows_table:
            con.execute(f"UPDATE {t} SET v = ?", (damage,))
        con.commit()
        con.close()
        layers.clear_memory()
        capsys.readouterr()
        again = metric.segment_scores(hyps, refs)
        err = capsys.readouterr().err
        assert again.tolist() == first.tolist() and "damaged glove-6b-50d-rows rows" in err
    finally:
        layers.clear_memory()
        layers._cache_dir_override = layers._UNSET


def test_a_dash_in_the_evaluate_table_says_why():
    """KING is QUEEN's: ULC(all) shows '-' under it, and a note says so (it said nothing)."""
    res = _run("evaluate", "--testbed", "example", "-m", "bleu", "-m", "chrf", "--criteria", "king,r_snt",
               "--bootstrap", "0", "-q")
    assert res.exit_code == 0, res.output
    ulc = [line for line in res.output.split("\n") if line.startswith("ULC(all)")]
    assert ulc and ulc[0].split()[1] == "-"
    assert "note: king is defined for single metrics and QUEEN combinations only: ULC(all) shows '-'" in res.output
