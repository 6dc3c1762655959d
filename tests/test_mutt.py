"""MUTT metric unit tests (Boag et al. 2016): pass rules, SICK+ fluency corruptions, runs on real trials, CLI."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import combo
from combo.cli import main
from combo.evaluate import MetaEvaluator, search_metric_sets
from combo.analysis.corruptions import fluency_corruptions
from combo.io.mutt import MuttTrial, read_mutt, read_mutt_testbed, sample_references, select_trials
from combo.meta.mutt import unit_test_accuracy, unit_test_passes
from combo.metric_unit_tests import fluency_trials, run_unit_tests
from combo.scoring import score_testbed


def test_pass_rules_hand_worked():
    orig, corr = np.array([0.5, 0.5, 0.5, 0.0]), np.array([0.4, 0.5, 0.6, 0.0])
    # original above corruption: strictly
    assert unit_test_passes(orig, corr, "meaning-altering").tolist() == [True, False, False, False]
    assert unit_test_passes(orig, corr, "fluency-disrupting", higher_is_better=False).tolist() == \
        [False, False, True, False]
    # |.5 - .4| / .5 = .2 > .15 fails; equal scores pass; |0 - 0| / 1e-9 = 0 passes
    assert unit_test_passes(orig, corr, "meaning-preserving").tolist() == [False, True, False, True]
    # the boundary: |1 - .86| / 1 = .14 passes, |1 - .84| = .16 fails
    assert unit_test_passes([1.0, 1.0], [0.86, 0.84], "meaning-preserving").tolist() == [True, False]
    counts = unit_test_accuracy(orig, corr, ["a", "a", "b", "b"], {"a": "meaning-altering", "b": "meaning-preserving"})
    assert counts == {"a": (2, 1), "b": (2, 1)}


def test_fluency_corruptions_of_a_parsed_sentence():
    pytest.importorskip("textblob")
    made = fluency_corruptions(["A small girl is riding in a toy car", "hello"], seed=3)
    assert made.pairs["dup_pp"] == [(0, "A small girl is riding in a toy car",
                                     "A small girl is riding in a toy car in a toy car")]
    assert made.pairs["rm_pp_head"] == [(0, "A small girl is riding in a toy car", "A small girl is riding in a toy")]
    (i, original, shuffled), = made.pairs["reorder_chunks"]
    assert i == 0 and shuffled != original and sorted(shuffled.split()) == sorted(original.split())
    assert made.skipped == {"dup_pp": 1, "rm_pp_head": 1, "reorder_chunks": 1}  # "hello": one chunk, no PP
    again = fluency_corruptions(["hello", "A small girl is riding in a toy car"], seed=3)
    assert again.pairs["reorder_chunks"][0][2] == shuffled  # seeded per sentence, not per position


@pytest.fixture(scope="module")
def flickr_trials(data):
    sets = read_mutt(data / "mutt" / "corruptions", flickr8k=data / "flickr8k")
    chosen, skipped = select_trials([t for v in sets.values() for t in v])
    assert len(chosen) == 1127 and skipped == 2489 - 1127
    by_type = {}
    for t in chosen:
        by_type.setdefault(t.corruption, []).append(t)
    return [t for v in by_type.values() for t in v[:12]]  # a small slice of every type


def test_run_unit_tests_equals_segment_scores(flickr_trials):
    result = run_unit_tests(flickr_trials, ["bleu", "chrf", "ter"], scheme="ulc")
    assert result.metrics == ["bleu", "chrf", "ter", "ulc(bleu+chrf+ter)"]
    assert set(result.corruptions) == {t.corruption for t in flickr_trials}
    for name in ("bleu", "chrf", "ter"):
        metric = combo.get_metric(name)
        for c in result.corruptions:
            trials = [t for t in flickr_trials if t.corruption == c]
            refs = [list(t.references) for t in trials]
            orig = metric.segment_scores([t.sentence for t in trials], refs)
            corr = metric.segment_scores([t.corrupted for t in trials], refs)
            passed = unit_test_passes(orig, corr, trials[0].kind, metric.higher_is_better)
            assert result.counts[name][c] == (len(trials), int(passed.sum()))
    records = result.to_records()
    assert len(records) == 4 * len(result.corruptions)
    assert set(records[0]) == {"metric", "corruption", "kind", "n", "passed", "accuracy"}
    assert all(0 <= r["accuracy"] <= 1 for r in records)
    assert "ulc(bleu+chrf+ter)" in result.to_table()


def test_references_are_sampled_and_fluency_trials_added(flickr_trials):
    pytest.importorskip("textblob")
    one = sample_references(flickr_trials, 1, seed=5)
    assert all(len(t.references) == 1 and t.references[0] in s.references for t, s in zip(one, flickr_trials))
    assert sample_references(flickr_trials, 1, seed=5) == one
    extra, skipped = fluency_trials(flickr_trials, seed=0)
    assert {t.corruption for t in extra} <= {"dup_pp", "rm_pp_head", "reorder_chunks"}
    assert all(t.kind == "fluency-disrupting" and t.references for t in extra)
    sentences = {t.sentence for t in flickr_trials}
    assert len([t for t in extra if t.corruption == "reorder_chunks"]) + skipped["reorder_chunks"] == len(sentences)
    result = run_unit_tests(flickr_trials, ["bleu"], references=1, fluency=True)
    assert {"dup_pp", "rm_pp_head", "reorder_chunks"} <= set(result.corruptions)
    assert result.references == 1


def test_unknown_type_and_missing_references_are_errors():
    trial = MuttTrial("neg_subj", "meaning-altering", "SEMEVAL", "o", "a man", "no man", 3.0, None, 9, "x/neg_subj.txt")
    with pytest.raises(combo.InputError, match=r"x/neg_subj.txt:9: neg_subj trial from SEMEVAL has no references"):
        run_unit_tests([trial], ["bleu"])
    bogus = MuttTrial("typo", "meaning-altering", "FLICKR", "o", "a", "b", 3.0, ("a",), 4, "x/typo.txt")
    with pytest.raises(combo.InputError, match=r"x/typo.txt:4: unknown corruption type 'typo'"):
        run_unit_tests([bogus], ["bleu"])


def test_mutt_criterion_in_search(data):
    tb = read_mutt_testbed(data / "mutt" / "corruptions", flickr8k=data / "flickr8k")
    keep = [i for i, s in enumerate(tb.segments) if int(s.id.split(":")[1]) <= 10]
    tb = tb.subset(keep)
    table = score_testbed(tb, ["bleu", "chrf", "ter"])
    ev = MetaEvaluator(tb, table)
    single = ev.quality([2], "mutt", "ulc")  # TER alone: min-max normalised and flipped
    assert 0 < single.value <= 1 and single.n == len(tb.segments)
    # normalising keeps every "original above corruption" test as the raw (lower-is-better) TER decides it
    ter = table.segment[2]
    orig, corr = ter[table.row_system == 0], ter[table.row_system == 1]
    groups = np.array([s.group for s in tb.segments])
    assert table.systems == ["original", "corrupted"]
    for c in ("neg_subj", "sem_opps"):
        n = int((groups == c).sum())
        passed = int(unit_test_passes(orig[groups == c], corr[groups == c], "meaning-altering", False).sum())
        assert f"{c} {passed}/{n}" in single.note
    found = search_metric_sets(ev, "mutt", "ulc")
    assert found.quality >= found.best_single[1] and set(found.selected) <= {"bleu", "chrf", "ter"}
    with pytest.raises(combo.OptionError, match="use --scheme ulc"):
        ev.quality([0], "mutt", "queen")


def _run(*args):
    return CliRunner().invoke(main, list(args))


def test_cli_mutt_json_and_csv(data, tmp_path):
    out = tmp_path / "m.json"
    res = _run("mutt", str(data / "mutt" / "corruptions"), "--flickr8k", str(data / "flickr8k"), "-m", "bleu",
               "--no-fluency", "--references", "2", "--format", "json", "--out", str(out), "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["references"] == 2 and set(doc["accuracy"]["bleu"]) == {"det_sub", "near_syms", "neg_subj",
                                                                       "neg_verb", "passive", "sem_opps", "shuffled"}
    assert doc["tests"]["shuffled"] == 4 and doc["notes"][0].startswith("1362 trials left out")


BLOCK = "\tdataset: FLICKR\n\torig: a dog runs\n\tsent: A dog is running\n\tcorr: No dog is running\n\tscore: 3.1\n"


@pytest.mark.parametrize("name, text, message", [
    ("neg_subj", "", "neg_subj.txt:1: file is empty"),
    ("neg_subj", "neg_subj\nnegated subject\n\n", "neg_subj.txt:3: no trials in the file"),
    ("neg_subj", "neg_subj\nx\n\n\tdataset: FLICKR\n\torig: a\n\tcorr: b\n", "neg_subj.txt:6: expected 'sent:'"),
    ("negsubj", "negsubj\nx\n\n" + BLOCK, "negsubj.txt:1: unknown corruption type 'negsubj'"),
])
def test_cli_mutt_bad_input_is_one_line_and_exit_2(tmp_path, name, text, message):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    res = _run("mutt", str(folder), "--format", "csv", "--out", str(out), "--no-fluency")
    assert res.exit_code == 2 and message in res.output and len(res.output.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_mutt_trial_without_references_is_an_error(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "neg_subj.txt").write_text("neg_subj\nx\n\n" + BLOCK.replace("FLICKR", "SEMEVAL"), encoding="utf-8")
    res = _run("mutt", str(folder), "--trials", "all", "--no-fluency")
    assert res.exit_code == 2 and "neg_subj.txt:4: neg_subj trial from SEMEVAL has no references" in res.output
    res = _run("mutt", str(folder), "--no-fluency")
    assert res.exit_code == 2 and "no trial has references" in res.output


def test_cli_search_criterion_mutt(data):
    res = _run("search", "--testbed", str(data / "mutt" / "corruptions"), "--testbed-option",
               f"flickr8k={data / 'flickr8k'}", "--testbed-option", "references=2", "--criterion", "mutt",
               "-m", "bleu", "-m", "ter", "--format", "json", "-q")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["criterion"] == "mutt" and doc["scheme"] == "ulc" and doc["segments"] == 1127
    assert 0 < doc["quality"] <= 1 and "1362 trials left out: no references" in doc["notes"]
