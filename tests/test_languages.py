"""Languages: each metric says which languages its analyses read; scoring texts in another one is refused."""

import json

import pytest
from click.testing import CliRunner

import combo
from combo.catalogue import catalogue
from combo.cli import main
from combo.errors import OptionError
from combo.io import load_testbed
from combo.io.fetch import example_path
from combo.scoring import score_testbed


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("spec, languages", [
    # no language-specific analysis
    ("bleu", ()), ("chrf++", ()), ("ter", ()), ("wer", ()), ("nist", ()), ("gtm", ()), ("cider", ()),
    ("dr-tk:trees=supplied", ()),
    # English analyses, and the options that replace them
    ("meteor", ("en",)), ("meteor:modules=exact+stem", ("en",)), ("meteor:modules=exact", ()),
    ("rouge-l", ("en",)), ("rouge-2:tokenize=13a", ()), ("rouge-l:tokenize=13a,use_stemmer=true", ("en",)),
    ("sp-op", ("en",)), ("sp-oc", ("en",)), ("sp-nist", ("en",)),
    ("cp-stm", ("en",)), ("cp-stm:trees=supplied", ()), ("cp-tk-sst", ("en",)), ("cp-tk-ptk:trees=supplied", ()),
    ("dr-tk", ("en",)), ("dr-tk-lex2", ("en",)),
    ("dp-hwcm", ("en",)), ("dp-or:parser=supplied", ()), ("dp-tk", ("en",)), ("ted:parser=supplied", ()),
    ("emb-avg", ("en",)), ("emb-greedy:vectors=/any/vectors.txt", ()), ("sent-emb", ("en",)),
])
def test_language_support_follows_the_analyses_a_configuration_uses(spec, languages):
    got, why = combo.get_metric(spec).language_support()
    assert got == languages
    assert bool(why) == bool(languages)  # a limit always says why


def test_readers_record_the_target_language(data):
    assert load_testbed(data / "wmt12", lp="en-de").target_language == "de"
    assert load_testbed(data / "wmt12", lp="fr-en").target_language == "en"
    assert load_testbed(example_path()).target_language == "en"


def _german_testbed():
    tb = load_testbed(example_path())
    tb.metadata["target_language"] = "de"
    return tb


def test_scoring_an_english_only_metric_on_other_text_is_one_clear_error():
    tb = _german_testbed()
    with pytest.raises(OptionError) as err:
        score_testbed(tb, ["chrf", "rouge-l"])
    msg = str(err.value)
    assert "rouge-l reads only 'en' text" in msg and "tokenize=13a reads any language" in msg
    assert "example-de-en" in msg and "'de'" in msg and "--language any" in msg
    # the replacement the message names scores, and so does the metric once the language is unknown
    assert score_testbed(tb, ["chrf", "rouge-l:tokenize=13a"]).segment.shape[0] == 2
    tb.metadata["target_language"] = None
    assert score_testbed(tb, ["rouge-l"]).segment.shape[0] == 1


def test_english_text_and_unknown_language_are_not_checked():
    tb = load_testbed(example_path())
    assert score_testbed(tb, ["rouge-l", "meteor:modules=exact"]).segment.shape[0] == 2
    tb.metadata.pop("target_language")
    assert tb.target_language is None


def test_a_tuned_metric_reads_what_all_its_components_read(tmp_path):
    from combo.combine.training import TrainOptions, train_model

    tb = load_testbed(example_path())
    for specs, expected in ((["bleu", "rouge-l"], ("en",)), (["bleu", "chrf"], ())):
        model = train_model([(tb, score_testbed(tb, specs))], TrainOptions(method="ulc"))
        path = tmp_path / f"{'-'.join(specs)}.json"
        model.save(path)
        langs, why = combo.load_model(path).language_support()
        assert langs == expected
        assert ("rouge-l:" in why) == bool(expected)  # names the component that limits it


def test_cli_language_option_refuses_and_any_lets_through(tmp_path):
    res = run("score", "--testbed", "example", "-m", "bleu", "-m", "rouge-l", "--language", "de", "-q")
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert res.output.startswith("combo: error: rouge-l reads only 'en' text")
    res = run("score", "--testbed", "example", "-m", "rouge-l", "--language", "any", "-q")
    assert res.exit_code == 0, res.output
    res = run("score", "--testbed", "example", "-m", "rouge-l", "--language", "d e", "-q")
    assert res.exit_code == 2 and "language code" in res.output


def test_apply_refuses_a_model_that_cannot_read_the_language(tmp_path):
    model = tmp_path / "m.json"
    res = run("train", "--testbed", "example", "-m", "bleu", "-m", "rouge-l", "--method", "ulc",
              "--out", str(model), "-q")
    assert res.exit_code == 0, res.output
    hyp, ref = tmp_path / "h.txt", tmp_path / "r.txt"
    hyp.write_text("Die Brücke wird im Mai eröffnet.\n", encoding="utf-8")
    ref.write_text("Die neue Brücke öffnet im Mai.\n", encoding="utf-8")
    out = tmp_path / "scores.tsv"
    res = run("apply", "--model", str(model), "--hyps", str(hyp), "--refs", str(ref), "--language", "de",
              "--out", str(out))
    assert res.exit_code == 2 and "rouge-l: rouge-score's tokenizer" in res.output
    assert "train a model on metrics that read 'de'" in res.output and "choose a metric" not in res.output
    assert not out.exists()  # nothing written
    res = run("apply", "--model", str(model), "--hyps", str(hyp), "--refs", str(ref))
    assert res.exit_code == 0, res.output


def test_catalogue_lists_languages():
    rows = {r["name"]: r for r in catalogue()}
    assert rows["sp-op"]["languages"] == ["en"] and rows["bleu"]["languages"] == []
    assert "Pattern" in rows["sp-op"]["language_note"]
    res = run("metrics", "--format", "json")
    assert json.loads(res.output)["metrics"][0]["languages"] == []


def test_search_default_set_leaves_out_what_cannot_read_the_language():
    res = run("search", "--criterion", "wmt_kendall", "--testbed", "example", "--language", "de")
    assert res.exit_code == 0, res.output
    note = [line for line in res.output.splitlines() if "cannot read 'de'" in line]
    assert note and "rouge-l" in note[0] and "chrf" not in note[0]
    assert "rouge-l" not in res.output.replace(note[0], "")
    # explicit metrics are never silently dropped
    res = run("search", "--criterion", "wmt_kendall", "--testbed", "example", "--language", "de", "-m", "chrf,rouge-l")
    assert res.exit_code == 2 and "rouge-l reads only 'en'" in res.output


def test_train_default_set_keeps_what_reads_the_language(tmp_path):
    out = tmp_path / "m.json"
    res = run("train", "--testbed", "example", "--language", "de", "--out", str(out), "--folds", "0", "-q")
    assert res.exit_code == 0, res.output
    specs = [m["spec"] for m in json.loads(out.read_text())["metrics"]]
    assert "chrf" in specs and not any(s.startswith(("rouge", "meteor")) for s in specs)


def test_language_codes_read_as_their_primary_subtag():
    tb = load_testbed(example_path())
    for written in ("EN", "en-US", "en_GB", " en "):
        tb.metadata["target_language"] = written
        assert tb.target_language == "en"
    tb.metadata["target_language"] = "de-AT"
    with pytest.raises(OptionError, match="'de'"):
        score_testbed(tb, ["rouge-l"])
    res = run("score", "--testbed", "example", "-m", "rouge-l", "--language", "DE-de", "-q")
    assert res.exit_code == 2 and "are in 'de'" in res.output


def test_the_held_out_study_uses_only_metrics_that_read_any_language():
    import sys
    from pathlib import Path

    from combo.scoring import reads_language

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))
    from wmt12_out_of_english import MULTILINGUAL

    assert len(MULTILINGUAL) == 22 and "meteor" not in MULTILINGUAL
    for spec in MULTILINGUAL:
        for lang in ("cs", "de", "es", "fr"):
            assert reads_language(combo.get_metric(spec), lang), (spec, lang)


def test_a_model_names_each_reason_once(tmp_path):
    # several components that cannot read German for one reason: the reason once, with the components it covers
    model = tmp_path / "m.json"
    specs = ["rouge-l:use_stemmer=true", "rouge-1:use_stemmer=true", "rouge-2:use_stemmer=true", "chrf"]
    res = run("train", "--testbed", "example", *[a for s in specs for a in ("-m", s)], "--method", "ulc",
              "--out", str(model), "-q")
    assert res.exit_code == 0, res.output
    langs, why = combo.load_model(model).language_support()
    assert langs == ("en",)
    assert why.count("Porter stemmer") == 1 and "rouge-1:use_stemmer=true, rouge-2:use_stemmer=true" in why
