"""Trust, round three: behaviours the third round of bad inputs found wrong, each pinned."""

import json
import sqlite3

import numpy as np
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
        for t in rows_table:  # a well-framed row whose form is damaged: the layer's own check finds it
            con.execute(f"UPDATE {t} SET v = ?", (layers.frame(damage),))
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


def _degenerate(tmp_path, kind):
    """The bundled example with every human score 3 (``constant``), or with one system only (``one``)."""
    import copy

    import combo
    from combo.io import write_jsonl
    from combo.testbed import Score

    tb = combo.load_testbed(combo.example_path())
    out = copy.deepcopy(tb)
    if kind == "constant":
        out.scores = [Score(s.system, s.segment, 3.0, s.rater, s.aspect) for s in tb.scores]
    else:
        keep = tb.systems[0]
        out.candidates = {keep: tb.candidates[keep]}
        out.scores, out.preferences = [s for s in tb.scores if s.system == keep], []
        out.system_scores = {a: {keep: v[keep]} for a, v in tb.system_scores.items() if keep in v}
    path = tmp_path / f"{kind}.jsonl"
    write_jsonl(out, path)
    return path


def test_training_on_scores_that_never_differ_is_refused_and_writes_nothing(tmp_path):
    path = _degenerate(tmp_path, "constant")
    for method in ("direct", "pairwise-lr"):
        out = tmp_path / f"{method}.json"
        res = _run("train", "--testbed", path, "-m", "bleu", "-m", "chrf", "--judgments", "scores", "--method",
                   method, "--folds", "0", "--out", out, "-q")
        assert res.exit_code == 2 and res.output.count("\n") == 1 and not out.exists(), res.output
    assert "never differ" in _run("train", "--testbed", path, "-m", "bleu", "--judgments", "scores", "--folds", "0",
                                  "--out", tmp_path / "m.json", "-q").output


def test_one_system_trains_on_its_segments_and_min_diff_is_refused_where_unread(tmp_path):
    """One system still has segment scores that differ: direct learns from them (the objective is defined); a
    --min-diff, which direct never reads, is refused instead of being reported as if it had been used."""
    path = _degenerate(tmp_path, "one")
    res = _run("train", "--testbed", path, "-m", "bleu", "-m", "chrf", "--judgments", "scores", "--objective",
               "seg_pearson", "--folds", "0", "--out", tmp_path / "m.json", "-q")
    assert res.exit_code == 0 and (tmp_path / "m.json").exists(), res.output
    res = _run("train", "--testbed", path, "-m", "bleu", "--judgments", "scores", "--min-diff", "1000", "--folds",
               "0", "--out", tmp_path / "n.json", "-q")
    assert res.exit_code == 2 and "reads no pairs" in res.output and not (tmp_path / "n.json").exists()


def test_the_official_average_refuses_pairs_without_absolute_scores(data):
    """Called directly, WMT23's official average over WMT12's ranking pairs is refused (skipping the refusal
    printed an 'official average' of .7024 built from win shares)."""
    import combo
    from combo.evaluate import MetaEvaluator, wmt23_official_average

    evaluators = {}
    for lp in ("cs-en", "de-en"):
        tb = combo.load_testbed(data / "wmt12", lp=lp)
        evaluators[lp] = MetaEvaluator(tb, combo.score_testbed(tb, ["bleu"]))
    with pytest.raises(combo.InputError, match="has no absolute segment scores"):
        wmt23_official_average(evaluators, [])


def test_a_mistyped_shipped_model_name_is_offered_the_right_one(tmp_path):
    (tmp_path / "h.txt").write_text("the cat\n")
    res = _run("apply", "--model", "combo-wmt32", "--hyps", tmp_path / "h.txt", "--refs", tmp_path / "h.txt")
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "did you mean combo-wmt23" in res.output
    res = _run("score", "--testbed", "example", "-m", "combo-wmt32", "-q")
    assert res.exit_code == 2 and "did you mean combo-wmt23" in res.output


def test_the_crlf_fix_works_as_printed_from_another_folder(tmp_path, monkeypatch):
    """The fix names the file as given (a folder, a space), quoted for the shell, and its output beside it."""
    import shutil
    import subprocess

    from combo.errors import InputError
    from combo.io.text import read_lines

    if not shutil.which("sed"):
        pytest.skip("no sed here")
    folder = tmp_path / "my data"
    folder.mkdir()
    (folder / "h.txt").write_bytes(b"a\r\nb\r\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        read_lines("my data/h.txt")
    subprocess.run(err.value.fix.split("e.g. ")[1], shell=True, check=True)
    assert read_lines(folder / "h.lf.txt") == ["a", "b"] and (folder / "h.txt").read_bytes() == b"a\r\nb\r\n"


def test_evaluate_says_which_criteria_have_intervals_and_what_the_average_maps(data):
    """The footer said "95% bootstrap intervals" under a wmt23 column that has none; the official average's task
    columns are raw while the average maps Pearson to [0, 1], and only its header said so."""
    res = _run("evaluate", "--testbed", data / "wmt23", "--lp", "en-de,he-en", "-m", "mtme:XCOMET-XL", "-m", "chrf",
               "--criteria", "wmt23,r_snt", "--bootstrap", "20", "-q")
    assert res.exit_code == 0, res.output
    footers = [line for line in res.output.splitlines() if line.startswith("# wmt23.")]
    assert len(footers) == 2 and all("95% bootstrap intervals (r_snt) over 20 resamples" in f for f in footers)
    assert all("wmt23: no interval" in f for f in footers)
    assert res.output.rstrip().endswith("the average maps each Pearson r to (r + 1) / 2 before weighting")
    # one note for what several criteria leave out alike
    res = _run("evaluate", "--testbed", data / "wmt23", "--lp", "en-de", "-m", "chrf", "--bootstrap", "0", "-q",
               "--criteria", "wmt23,sys_accuracy,pearson")
    notes = [line for line in res.output.splitlines() if "human translation left out" in line]
    assert notes == ["note: wmt23, sys_accuracy, pearson: 1 human translation left out (chrf, ULC(all))"]


def test_significance_clusters_say_why_entries_with_values_have_none(data):
    """sys_accuracy had values for every entry, and the report said "fewer than 2 defined entries"."""
    import combo
    from combo.evaluate import MetaEvaluator, significance_clusters

    tb = combo.load_testbed(data / "wmt23", lp="en-de")
    ev = MetaEvaluator(tb, combo.score_testbed(tb, ["chrf", "bleu", "mtme:XCOMET-XL"]))
    qualities = [ev.quality([k], "sys_accuracy") for k in range(3)]
    assert all(q.defined for q in qualities)
    clusters, reason = significance_clusters(ev, qualities)
    assert clusters == [None] * 3 and "sys_accuracy does not have" in reason and "fewer than 2" not in reason
    assert significance_clusters(ev, qualities[:1])[1] == "fewer than 2 defined entries"


# -- training on degenerate judgments, as a property ---------------------------------------------------------

from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: Judgment patterns: every score equal, all ties but holes, or a few levels with holes (None: unrated).
PATTERNS = {"constant": st.just(3.0), "tie-or-hole": st.sampled_from([None, 2.0]),
            "levels-and-holes": st.sampled_from([None, None, 1.0, 2.0, 3.0])}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.sampled_from(sorted(PATTERNS)), systems=st.integers(1, 4), segments=st.integers(1, 5),
       recipe=st.sampled_from([("direct", "wmt23"), ("direct", "seg_pearson"), ("direct", "acc_eq"),
                               ("direct", "seg_kendall"), ("pairwise-lr", "wmt23")]), data=st.data())
def test_training_on_degenerate_judgments_trains_on_what_informs_it_or_refuses(pattern, systems, segments, recipe,
                                                                              data):
    """Constant scores, one system, one segment, all ties, NaN holes: training either learns from judgments
    that differ (and whose objective is defined) or refuses in one line; it never returns a model from
    nothing."""
    import copy

    import combo
    from combo import InputError, OptionError
    from combo.combine.training import TrainOptions, train_model
    from combo.testbed import Score

    tb = combo.load_testbed("example")
    keep_systems = tb.systems[:systems]
    keep_segments = range(segments)  # a score names its segment by index
    degenerate = copy.deepcopy(tb.subset(list(range(segments))))
    degenerate.candidates = {s: degenerate.candidates[s] for s in keep_systems}
    degenerate.preferences, degenerate.system_scores = [], {}
    values = {(s, g): data.draw(PATTERNS[pattern]) for s in keep_systems for g in keep_segments}
    degenerate.scores = [Score(s, g, v, "r1", "adequacy") for (s, g), v in values.items() if v is not None]
    rated = [v for v in values.values() if v is not None]
    if not rated:
        return  # no judgment at all: the test bed itself is refused on reading, as tested elsewhere
    method, objective = recipe
    try:
        table = combo.score_testbed(degenerate, ["bleu", "chrf"], progress=False)
        model = train_model([(degenerate, table)], TrainOptions(method=method, objective=objective),
                            judgments="scores")
    except (InputError, OptionError) as refusal:
        assert "\n" not in str(refusal) and str(refusal)
        event("refused")
        return
    event("trained")
    assert len(set(rated)) >= 2, f"a model from {len(rated)} scores that never differ"
    assert np.all(np.isfinite(model.weights)) and np.isfinite(model.bias)
    if method == "pairwise-lr":
        assert model.training["pairs"] > 0
    else:
        assert np.isfinite(model.training["estimator"]["objective_value"])


# -- every layer of the analysis cache, damaged each way ------------------------------------------------------

#: A text each layer analyses, and forms its stored row may be damaged into, by kind. "type": the row is no
#: text; "truncated": the row cut short; "range": a well-framed form out of the layer's range (None where the
#: layer's forms have none: any token list is one).
LAYER_DAMAGE = {
    "tokens": None, "lowercase": None, "stems": None,
    "shallow": "The cat\tDT\tB-NP I-NP\tO O",  # two words and one tag
    "dependencies": '[["The","cat"],["DT","NN"],[2,7],["det","ROOT"]]',  # a head outside the sentence
    "dependencies+lemmas": '[["The","cat"],["DT","NN"],[2,-1],["det","ROOT"],["the","cat"]]',
    "sentence-embeddings": "AADAfw==",  # one float, NaN
    "wordnet-synonyms": '{"car": 1}',  # not a list of names
    "glove-6b-50d-rows": "400005",  # past the table's last row
}
TEXTS = {"wordnet-synonyms": "car", "glove-6b-50d-rows": "cat"}


@pytest.mark.parametrize("kind", ["type", "truncated", "range"])
@pytest.mark.parametrize("name", sorted(LAYER_DAMAGE))
def test_a_damaged_cache_row_of_every_layer_is_analysed_again(name, kind, tmp_path, capsys):
    """Each layer's cached row damaged (no text, cut short, or out of its range): one warning, the text analysed
    again to the same analysis, the row replaced (read once more without a warning)."""
    import numpy as np

    from combo.analysis import layers
    from combo.errors import ResourceMissing

    if kind == "range" and LAYER_DAMAGE[name] is None:
        pytest.skip(f"{name}'s stored forms have no range: any token list is one")
    try:
        layers.get_layer(name).check()
    except ResourceMissing as missing:
        pytest.skip(str(missing))
    text = TEXTS.get(name, "The cat sat on the mat near the door.")
    layers.clear_memory()
    layers.set_cache_dir(tmp_path / "cache")
    layers._warned.clear()

    def same(a, b):
        return np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b

    try:
        clean = layers.annotate(name, [text])[0]
        con = sqlite3.connect(tmp_path / "cache" / "analysis.sqlite")
        (table,) = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        (row,) = [r[0] for r in con.execute(f"SELECT v FROM {table}")]
        damaged = {"type": 12345, "truncated": row[:-2], "range": layers.frame(LAYER_DAMAGE[name] or "")}[kind]
        con.execute(f"UPDATE {table} SET v = ?", (damaged,))
        con.commit()
        layers.clear_memory()
        capsys.readouterr()
        again = layers.annotate(name, [text])[0]
        assert same(again, clean) and f"1 damaged {name} rows" in capsys.readouterr().err
        assert con.execute(f"SELECT v FROM {table}").fetchone()[0] == row
        con.close()
        layers.clear_memory()
        assert same(layers.annotate(name, [text])[0], clean) and capsys.readouterr().err == ""
    finally:
        layers.clear_memory()
        layers._cache_dir_override = layers._UNSET


def test_a_row_frame_finds_any_change_of_length():
    from combo.analysis.layers import frame, unframe

    assert unframe(frame("the cat sat")) == "the cat sat" and unframe(frame("")) == ""
    assert unframe(frame("the cat sat")[:-4]) is None and unframe(frame("the cat") + " sat") is None
    assert unframe("the cat") is None and unframe(b"3:cat") is None and unframe(3) is None
    assert unframe("-3:cat") is None and unframe("３:cat") is None
