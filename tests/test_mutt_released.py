"""The MUTT authors' released trials (combo.io.mutt_released), their pass rules, and coco-caption's settings
(tokenize=coco, smooth=coco, document_frequency=rows, coco_rouge_l) against the authors' coco.txt."""

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import combo
from combo.analysis.ptb import COCO_PUNCTUATIONS, tokenize_coco
from combo.errors import OptionError
from combo.io.mutt_released import (read_released, read_released_results, read_released_testbed,
                                    read_released_type, released_rule, released_types)
from combo.meta.mutt import released_passes
from combo.metric_unit_tests import COCO_CAPTION_SPECS, run_released_unit_tests, score_released_trials
from combo.metrics.lexical.rouge import coco_rouge_l
from testutil import input_error as _error


def _folder(tmp_path, corruption="neg_verb", originals=None, corruptions=None, refs=None, counts=(5,)):
    """A released folder of one type: TYPE_a/_b.json (lists) and TYPE_rN.json (coco annotations)."""
    originals = originals if originals is not None else [(0, "A jet is flying"), (1, "A dog is running")]
    corruptions = corruptions if corruptions is not None else [(0, "A jet is not flying"),
                                                                (1, "A dog is not running")]
    refs = refs if refs is not None else {0: ["a plane flies", "a jet is flying"], 1: ["a dog runs"]}
    folder = tmp_path / "released"
    folder.mkdir(exist_ok=True)
    # one entry per line, as the released files
    (folder / f"{corruption}_a.json").write_text(
        "[" + ",\n".join(json.dumps({"image_id": i, "caption": c}) for i, c in originals) + "]", encoding="utf-8")
    (folder / f"{corruption}_b.json").write_text(
        "[" + ",\n".join(json.dumps({"image_id": i, "caption": c}) for i, c in corruptions) + "]", encoding="utf-8")
    for n in counts:
        annotations = [{"image_id": i, "id": 0, "caption": c} for i, rs in refs.items() for c in rs]
        (folder / f"{corruption}_r{n}.json").write_text(json.dumps({"type": "captions", "annotations": annotations,
                                                                   "images": [{"id": i} for i in refs]}),
                                                       encoding="utf-8")
    return folder


# -- the reader --------------------------------------------------------------------------------------------------

def test_reader_pairs_by_image_id(tmp_path):
    folder = _folder(tmp_path, corruptions=[(1, "A dog is not running"), (0, "A jet is not flying")])
    trials = read_released(folder)["neg_verb"]
    assert [(t.image_id, t.sentence, t.corrupted) for t in trials] == [
        (0, "A jet is flying", "A jet is not flying"), (1, "A dog is running", "A dog is not running")]
    assert trials[0].references == ("a plane flies", "a jet is flying") and trials[1].entry == 2
    assert (trials[0].kind, trials[0].rule) == ("meaning-altering", "above")
    assert released_rule("det_sub") == released_rule("passive") == released_rule("near_syms") == "difference"
    assert released_rule("double_PP") == released_rule("anything_else") == "above"
    tb = read_released_testbed(folder)
    tb.validate()
    assert [s.id for s in tb.segments] == ["neg_verb:0", "neg_verb:1"] and tb.metadata["rules"] == {
        "neg_verb": "above"}


def test_missing_corruptions_file(tmp_path):
    folder = _folder(tmp_path)
    (folder / "neg_verb_b.json").unlink()
    err = _error(read_released, folder)
    assert err.path == str(folder / "neg_verb_b.json") and "no corruptions file" in str(err)
    assert "neg_verb_b.json" in err.fix


def test_counts_differ(tmp_path):
    folder = _folder(tmp_path, corruptions=[(0, "A jet is not flying")])
    err = _error(read_released, folder)
    assert err.path == str(folder / "neg_verb_b.json")
    assert "1 corruptions but neg_verb_a.json has 2 originals" in str(err) and err.fix


def test_image_id_without_corruption_or_references(tmp_path):
    folder = _folder(tmp_path, corruptions=[(0, "A jet is not flying"), (7, "A dog is not running")])
    err = _error(read_released, folder)
    assert (err.path, err.line) == (str(folder / "neg_verb_a.json"), 2)
    assert "entry 2: image_id 1 has no corruption in neg_verb_b.json" in str(err)
    folder = _folder(tmp_path, refs={0: ["a plane flies"]})
    err = _error(read_released, folder)
    assert err.path == str(folder / "neg_verb_r5.json")
    assert "image_id 1 (entry 2 of neg_verb_a.json) has no references" in str(err) and "add its references" in err.fix


def test_other_bad_files(tmp_path):
    folder = _folder(tmp_path)
    err = _error(read_released, folder, 20)  # no 20-reference file
    assert err.path == str(folder / "neg_verb_r20.json") and err.fix == "choose --references among 5"
    (folder / "neg_verb_a.json").write_text('[{"image_id": 0, "caption": "x"},\n{"image_id": 1, "caption": }]')
    err = _error(read_released, folder)
    assert err.line == 2 and "not valid JSON" in str(err)
    (folder / "neg_verb_a.json").write_text('[{"image_id": 0, "caption": "x"},\n{"image_id": 0, "caption": "y"}]')
    err = _error(read_released, folder)
    assert err.line == 2 and "image_id 0 is already entry 1" in str(err)
    (folder / "neg_verb_a.json").write_text('[{"image_id": 0, "caption": "x"},\n{"image_id": 1}]')
    assert _error(read_released, folder).line == 2
    (folder / "neg_verb_a.json").write_text('[{"image_id": 0, "caption": "x"},\n{"image_id": 1, "caption": 5}]')
    assert "caption is a int" in str(_error(read_released, folder))
    _folder(tmp_path)
    (folder / "neg_verb_r5.json").write_text('{"images": []}')
    assert "no 'annotations' list" in str(_error(read_released, folder))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no released trial files" in str(_error(read_released, empty))
    assert "not a folder" in str(_error(read_released, tmp_path / "missing"))
    assert "no originals file for type 'passive'" in str(_error(read_released, folder, 5, ["passive"]))
    with pytest.raises(OptionError):
        read_released(folder, 0)


# -- the pass rules, by hand -------------------------------------------------------------------------------------

def test_difference_rule_as_written():
    # abs((a - b) / (a + 1e-9)) * 100 <= 15
    a = np.array([1.0, 1.0, 0.0, 0.0, 0.5, 0.2])
    b = np.array([0.85, 0.84, 0.0, 1e-12, 0.57, 0.0])
    # 14.999999985; 16.0; 0; 0.1 (1e-12 / 1e-9 * 100); 14.0; 100
    assert released_passes(a, b, "difference").tolist() == [True, False, True, True, True, False]
    assert released_passes([np.nan], [1.0], "difference").tolist() == [False]
    # the same for an error rate: the formula does not look at the direction
    assert released_passes(a, b, "difference", higher_is_better=False).tolist() == [True, False, True, True, True,
                                                                                    False]


def test_above_rule_and_ties():
    a = np.array([0.5, 0.5, 0.5, 1.0 + 1e-14, 1.0 + 1e-9])
    b = np.array([0.4, 0.5, 0.6, 1.0, 1.0])
    assert released_passes(a, b, "above").tolist() == [True, False, False, False, True]  # a tie fails
    assert released_passes(a, b, "above", tie=0.0).tolist() == [True, False, False, True, True]  # the script's >
    assert released_passes(a, b, "above", higher_is_better=False).tolist() == [False, False, True, False, False]
    with pytest.raises(OptionError):
        released_passes(a, b, "below")


def test_accuracies_by_hand(tmp_path):
    # neg_verb ("above"): BLEU-1 without smoothing: "a dog runs" = its reference -> 1; "a dog not runs" -> 3/4:
    # passes. "a cat sits" and its "corruption" "a cat sits" tie: fails. 1 of 2.
    folder = _folder(tmp_path, originals=[(0, "a dog runs"), (1, "a cat sits")],
                     corruptions=[(0, "a dog not runs"), (1, "a cat sits")],
                     refs={0: ["a dog runs"], 1: ["a cat sits"]})
    # det_sub ("difference"): 7/8 against 1: |0.875 - 1| / 0.875 = 14.3% passes; 2/3 against 1: 50% fails.
    _folder(tmp_path, "det_sub", originals=[(0, "the big brown dog runs fast right now"), (1, "the dog runs")],
            corruptions=[(0, "a big brown dog runs fast right now"), (1, "a dog runs")],
            refs={0: ["a big brown dog runs fast right now"], 1: ["a dog runs"]})
    trials = [t for v in read_released(folder).values() for t in v]
    result = run_released_unit_tests(trials, ["bleu:max_order=1,smooth=none,tokenize=none", "ter"])
    assert result.corruptions == ["det_sub", "neg_verb"]  # the released order
    assert result.counts["bleu:max_order=1,smooth=none,tokenize=none"] == {"det_sub": (2, 1), "neg_verb": (2, 1)}
    # TER (lower is better): 0 against 1/3 passes; the tie fails; det_sub: 1/8 against 0 -> 100% fails, 1/3 fails
    assert result.counts["ter"] == {"det_sub": (2, 0), "neg_verb": (2, 1)}
    assert result.rules == {"det_sub": "difference", "neg_verb": "above"}
    table = result.to_table()
    assert "rule" in table and "abs((a - b) / (a + 1e-9)) * 100 <= 15" in table
    assert result.to_dict()["records"][0]["rule"] == "difference"


# -- coco-caption's settings, by hand and against pycocoevalcap ----------------------------------------------

def test_coco_tokens_by_hand():
    assert tokenize_coco("A man isn't playing the guitar.") == "a man is n't playing the guitar"
    assert tokenize_coco("Some antelope (or similar animals), crossing a road.") == \
        "some antelope -lrb- or similar animals -rrb- crossing a road"  # coco's list spells -LRB- in upper case
    assert tokenize_coco('A boy made a skull ""talk"" by moving...') == "a boy made a skull talk by moving"
    assert tokenize_coco("slices of about 1 1/2 inch, in Washington D.C.") == \
        "slices of about 1\u00a01/2 inch in washington d.c."
    assert tokenize_coco("see fig. The end of a. Hello, we're gonna see x.") == \
        "see fig the end of a. hello we 're gon na see x"
    assert tokenize_coco("A kid's pull-ups and/or make-up: 3.5 cm!") == "a kid 's pull-ups and/or make-up 3.5 cm"


def test_coco_bleu_by_hand():
    # "a cat" against "a cat sat": 2/2 unigrams, 1/1 bigram, no 3- or 4-gram: coco's precisions
    # (2 + 1e-15)/(2 + 1e-9), (1 + 1e-15)/(1 + 1e-9), 1e-15/1e-9 twice; length ratio 2/3: exp(1 - 3/2)
    bleu = combo.get_metric("bleu:smooth=coco,tokenize=coco")
    product = (2 + 1e-15) / (2 + 1e-9) * (1 + 1e-15) / (1 + 1e-9) * (1e-15 / 1e-9) * (1e-15 / 1e-9)
    expected = product ** 0.25 * math.exp(1 - 1 / ((2 + 1e-15) / (3 + 1e-9)))
    assert bleu.segment_scores(["a cat"], [["a cat sat"]])[0] == expected
    # an exact copy of a reference scores just under 1, a longer copy closer to 1
    s = bleu.segment_scores(["a woman is riding an elephant", "a woman is riding on an elephant"],
                            [["a woman is riding an elephant"], ["a woman is riding on an elephant"]])
    assert s[0] < s[1] < 1.0 and 1 - s[0] < 1e-9


def _captions(folder: Path):
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in (data["annotations"] if isinstance(data, dict) else data):
            yield item["caption"]


def test_coco_tokens_equal_the_java_tokenizer(data, tmp_path):
    """Token for token equal to coco-caption's PTBTokenizer (Stanford CoreNLP 3.4.1) on every released caption."""
    pytest.importorskip("pycocoevalcap")
    if shutil.which("java") is None:
        pytest.skip("java not installed: coco-caption's tokenizer cannot run")
    import subprocess

    import pycocoevalcap.tokenizer.ptbtokenizer as ptb

    captions = sorted(set(_captions(data / "mutt" / "released-trials")))
    assert len(captions) == 11127
    text = tmp_path / "captions.txt"
    text.write_text("\n".join(captions) + "\n", encoding="utf-8")
    jar = Path(ptb.__file__).parent / ptb.STANFORD_CORENLP_3_4_1_JAR
    out = subprocess.run(["java", "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines",
                          "-lowerCase", str(text)], capture_output=True, check=True).stdout.decode("utf-8")
    java = [" ".join(w for w in line.rstrip().split(" ") if w not in COCO_PUNCTUATIONS)
            for line in out.split("\n")[:len(captions)]]
    assert [tokenize_coco(c) for c in captions] == java


def test_coco_settings_equal_pycocoevalcap(data):
    """On coco tokens, BLEU-4 and ROUGE-L equal pycocoevalcap's bit for bit, CIDEr-D to 1e-14 (no Java needed)."""
    pytest.importorskip("pycocoevalcap")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    trials = read_released(data / "mutt" / "released-trials", 10, ["swap_chunks"])["swap_chunks"]
    refs = [list(t.references) for t in trials]
    gts = {t.image_id: [tokenize_coco(r) for r in t.references] for t in trials}
    for attr in ("sentence", "corrupted"):
        cands = [getattr(t, attr) for t in trials]
        res = {t.image_id: [tokenize_coco(getattr(t, attr))] for t in trials}
        _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
        assert np.array_equal(combo.get_metric(COCO_CAPTION_SPECS["Bleu_4"]).segment_scores(cands, refs),
                              np.asarray(bleu[3]))
        _, rouge = Rouge().compute_score(gts, res)
        assert np.array_equal(coco_rouge_l(cands, refs), np.asarray(rouge))
        _, cider = Cider().compute_score(gts, res)
        ours = combo.get_metric(COCO_CAPTION_SPECS["CIDEr"]).segment_scores(cands, refs) * 10  # coco's scale
        np.testing.assert_allclose(ours, cider, rtol=0, atol=1e-14)


# -- the released trials against coco.txt ------------------------------------------------------------------------

TYPES = ["neg_subj", "det_sub", "passive", "swap_chunks", "remove_prep"]


@pytest.fixture(scope="module")
def coco_txt(data):
    return read_released_results(data / "mutt" / "released-results" / "coco.txt")


@pytest.mark.parametrize("references", [5, 10, 20])
def test_cider_and_bleu_equal_coco_txt(data, coco_txt, references):
    folder = data / "mutt" / "released-trials"
    assert released_types(folder) == ["neg_subj", "det_sub", "near_syms", "passive", "sem_opps", "neg_verb",
                                      "shuffled", "swap_chunks", "double_PP", "remove_prep"]
    trials = [t for v in read_released(folder, references, TYPES).values() for t in v]
    specs = [COCO_CAPTION_SPECS["CIDEr"], COCO_CAPTION_SPECS["Bleu_4"]]
    result = run_released_unit_tests(trials, specs)
    column = [5, 10, 20].index(references)
    for spec, key in zip(specs, ("CIDEr", "Bleu_4")):
        for c in TYPES:
            n, passed = result.counts[spec][c]
            # the authors' arithmetic and printing: "%0.1f" % (passed / total * 100)
            assert f"{passed / float(n) * 100:.1f}" == f"{coco_txt[c][key][column]:.1f}", (spec, c, references)


def test_cider_sem_opps_at_5_is_ties(data, coco_txt):
    """The one cell where combo's CIDEr-D is not coco.txt's (85.4 against 86.2): 18 trials tie exactly, combo counts
    them as failures, coco.txt's Python 2 run counted 2 of them as passes."""
    folder = data / "mutt" / "released-trials"
    trials = read_released(folder, 5, ["sem_opps"])["sem_opps"]
    names, _, _, scores = score_released_trials(trials, [COCO_CAPTION_SPECS["CIDEr"]])
    a, b = scores["sem_opps"][0][0], scores["sem_opps"][1][0]
    strict = int(released_passes(a, b, "above").sum())
    tied = np.flatnonzero(np.abs(a - b) <= 1e-12 * np.maximum(np.abs(a), np.abs(b)))
    released = round(coco_txt["sem_opps"]["CIDEr"][0] / 100 * len(trials))
    assert (strict, len(tied), released, len(trials)) == (210, 18, 212, 246)
    assert f"{strict / 246 * 100:.1f}" == "85.4" and strict <= released <= strict + len(tied)

    # each tie is exact (or both score 0): the two sentences hold every n-gram of the trial's references the same
    # number of times, their other n-grams have, order by order, the same (count, max(1, document frequency))
    # pairs (coco's idf is log N - log max(1, df): equal tf-idf norms), and their lengths are equal (the same
    # length penalty)
    def grams(text):
        w = tokenize_coco(text).split()
        return Counter(tuple(w[i:i + k]) for k in range(1, 5) for i in range(len(w) - k + 1))

    def ref_grams(refs):
        return set().union(*(set(grams(r)) for r in refs))

    df = Counter(g for t in trials for g in ref_grams(t.references))  # one count per trial, as coco's rows
    for i in tied:
        t = trials[i]
        if a[i] == 0 and b[i] == 0:
            continue
        ga, gb, in_refs = grams(t.sentence), grams(t.corrupted), ref_grams(t.references)
        assert all(ga[g] == gb[g] for g in in_refs), t.sentence
        for k in range(1, 5):
            assert sorted((ga[g], max(1, df[g])) for g in ga if len(g) == k) == \
                sorted((gb[g], max(1, df[g])) for g in gb if len(g) == k), (t.sentence, k)
        assert len(tokenize_coco(t.sentence).split()) == len(tokenize_coco(t.corrupted).split())


def test_command_line_on_a_released_folder(tmp_path):
    from click.testing import CliRunner

    from combo.cli import main

    folder = _folder(tmp_path, originals=[(0, "a dog runs"), (1, "a cat sits")],
                     corruptions=[(0, "a dog not runs"), (1, "a cat sits")],
                     refs={0: ["a dog runs"], 1: ["a cat sits"]}, counts=(5, 10))
    runner = CliRunner()
    res = runner.invoke(main, ["mutt", str(folder), "-m", "bleu:max_order=1,smooth=none,tokenize=none", "-q",
                               "--references", "10", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert '"bleu:max_order=1,smooth=none,tokenize=none",neg_verb,meaning-altering,2,1,0.500000,above' in res.output
    res = runner.invoke(main, ["mutt", str(folder), "-m", "ter", "-q", "--references", "20"])
    assert res.exit_code == 2 and "choose --references among 5, 10" in res.output
    res = runner.invoke(main, ["mutt", str(folder), "-m", "ter", "-q", "--seed", "3"])
    assert res.exit_code == 2 and "--seed: not for the released trial files" in res.output
