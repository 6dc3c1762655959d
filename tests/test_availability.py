"""A missing optional resource makes only its metrics unavailable: listed as such, one clear error when asked for."""

import os

import pytest
from click.testing import CliRunner

from combo.catalogue import catalogue
from combo.cli import main
from combo.errors import ResourceMissing
from combo.analysis import layer_definitions, layers


@pytest.fixture
def no_textblob(monkeypatch):
    """Make the shallow layer's annotator look uninstalled."""

    def missing():
        raise ResourceMissing("TextBlob's Pattern parser (package textblob)", layer_definitions.ShallowLayer.requires)

    monkeypatch.setattr(layers.get_layer("shallow"), "check", missing)


def test_catalogue_marks_only_the_dependent_metrics(no_textblob):
    rows = {r["name"]: r for r in catalogue()}
    for name in ("sp-op", "sp-oc", "sp-nist", "cp-stm", "cp-tk"):
        assert not rows[name]["available"], name
        assert "combo-eval[syntax]" in rows[name]["unavailable_because"]
    for name in ("bleu", "chrf", "dp-hwcm", "emb-avg"):
        assert rows[name]["available"], name


def test_metrics_command_shows_availability(no_textblob):
    res = CliRunner().invoke(main, ["metrics"])
    assert res.exit_code == 0
    table = res.output.split("\n\n")[0]  # the metric table; the named sets follow after a blank line
    lines = {line.split()[0]: line.split() for line in table.splitlines()[1:]}
    # columns: metric, family, better, range (two tokens: "[0, 1]"), languages, available, resources
    assert lines["sp-op"][6] == "no" and lines["bleu"][6] == "yes"


def test_asking_for_an_unavailable_metric_is_one_error(no_textblob):
    res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu", "-m", "sp-op", "-q"])
    assert res.exit_code == 2
    assert "pip install 'combo-eval[syntax]'" in res.output
    assert "Traceback" not in res.output and "bleu\t" not in res.output


def test_the_rest_still_runs(no_textblob):
    res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu", "-m", "dp-or", "-q"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "system\tbleu\tdp-or"


def test_checking_availability_loads_no_parser_or_encoder():
    # `combo metrics` and every run's check: installed or not, found without importing spaCy, TextBlob or torch
    import subprocess
    import sys

    code = ("import sys; from combo.analysis.layers import get_layer; "
            "from combo.analysis.embeddings import check_sentence_encoder; "
            "[get_layer(name).check() for name in ('shallow', 'dependencies', 'sentence-embeddings')]; "
            "check_sentence_encoder(); "
            "print(sorted(m for m in ('spacy', 'textblob', 'torch', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_checking_wordnet_finds_it_without_loading_it(data, monkeypatch):
    # loading takes seconds; a check in the main process made every scoring run wait for it
    import subprocess
    import sys

    monkeypatch.setenv("NLTK_DATA", str(data / "nltk_data"))
    code = ("from combo.metrics.registry import get_metric; from combo.analysis import wordnet; "
            "get_metric('meteor').check_resources(); import nltk.corpus; "
            "print(wordnet.wordnet_available(), wordnet._reader is None, "
            "type(nltk.corpus.wordnet).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "LazyCorpusLoader"]  # found, never loaded


def test_wordnet_is_found_on_nltks_search_path_without_importing_nltk(data, tmp_path):
    # the check reads NLTK's default search path without importing NLTK (0.9 s before every command that
    # names METEOR); the folders and their order must be NLTK's own
    import subprocess
    import sys

    code = ("import sys; from combo.analysis import wordnet; fast = wordnet.nltk_search_path(); "
            "wordnet.find_wordnet(); imported = 'nltk' in sys.modules; import nltk; "
            "wordnet._add_nltk_data_env(nltk); print(imported, fast == nltk.data.path)")
    for folders in (str(data / "nltk_data"), os.pathsep.join([str(tmp_path / "a"), "~/b", str(data / "nltk_data")])):
        env = dict(os.environ, NLTK_DATA=folders, COMBO_DATA_HOME=str(tmp_path / "home"))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        assert out.stdout.split() == ["False", "True"], out.stderr


def test_a_partial_wordnet_is_one_error_naming_its_file(tmp_path):
    # combo's own reader (NLTK never imported): a wordnet.zip with an index but no exception or data files
    import subprocess
    import sys
    import zipfile

    packed = tmp_path / "nltk" / "corpora" / "wordnet.zip"
    packed.parent.mkdir(parents=True)
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("wordnet/index.noun", "dog n 1 0 1 0 02084071\n")
    code = ("import sys; from combo.analysis import wordnet; from combo.errors import ResourceMissing\n"
            "try:\n    wordnet.load_wordnet()\nexcept ResourceMissing as e:\n    print(e)\n"
            "print('nltk' in sys.modules, wordnet._reader is None)\n")
    env = dict(os.environ, COMBO_DATA_HOME=str(tmp_path / "home"), NLTK_DATA=str(tmp_path / "nltk"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.splitlines()
    assert len(out) == 2, out
    assert f"found at {packed} but unreadable (KeyError" in out[0] and "wordnet/noun.exc" in out[0]
    assert "fetch it again: combo data fetch wordnet" in out[0]
    assert out[1] == "False True"


def test_a_truncated_wordnet_data_file_is_one_error_at_lookup(tmp_path):
    # data files are read a synset line at a time, so a truncated data.noun is found at a lookup, not at the load:
    # one ResourceMissing naming the zip and the offset, never a ValueError from inside the reader
    import subprocess
    import sys
    import zipfile

    packed = tmp_path / "nltk" / "corpora" / "wordnet.zip"
    packed.parent.mkdir(parents=True)
    with zipfile.ZipFile(packed, "w") as archive:
        for pos in ("noun", "verb", "adj", "adv"):
            archive.writestr(f"wordnet/{pos}.exc", "")
            archive.writestr(f"wordnet/index.{pos}", "dog n 1 0 1 0 00001000\n" if pos == "noun" else "")
            archive.writestr(f"wordnet/data.{pos}", "")  # the line at offset 1000 is missing
    code = ("from combo.analysis import wordnet; from combo.errors import ResourceMissing\n"
            "print(sorted(wordnet.synonym_lemmas('cat')))\n"
            "try:\n    wordnet.synonym_lemmas('dogs')\nexcept ResourceMissing as e:\n    print(e)\n")
    env = dict(os.environ, COMBO_DATA_HOME=str(tmp_path / "home"), NLTK_DATA=str(tmp_path / "nltk"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.splitlines()
    assert out[0] == "['cat']"  # not in the index: the word alone
    assert f"found at {packed} but unreadable (ValueError: data.noun has no synset at offset 1000)" in out[1]
    assert "fetch it again: combo data fetch wordnet" in out[1] and len(out) == 2


def test_a_missing_spacy_model_is_named_without_loading_spacy(monkeypatch):
    layer = layers.get_layer("dependencies")
    monkeypatch.setattr(layer, "model", "no_such_spacy_model_xyz")
    with pytest.raises(ResourceMissing, match="spaCy model no_such_spacy_model_xyz.*combo-eval\\[spacy\\]"):
        layer.check()


def test_a_damaged_wordnet_is_one_error_naming_its_file(tmp_path):
    # a truncated download: found by NLTK, unreadable; one ResourceMissing naming the file, never BadZipFile
    import subprocess
    import sys

    (tmp_path / "nltk" / "corpora").mkdir(parents=True)
    (tmp_path / "nltk" / "corpora" / "wordnet.zip").write_bytes(b"")
    code = ("import nltk, sys; nltk.data.path[:] = [sys.argv[1]]; from combo.analysis import wordnet; "
            "from combo.errors import ResourceMissing\n"
            "for check in (wordnet.find_wordnet, wordnet.load_wordnet):\n"
            "    try:\n        check()\n    except ResourceMissing as e:\n        print(e)\n")
    env = dict(os.environ, COMBO_DATA_HOME=str(tmp_path / "home"), NLTK_DATA="")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "nltk")], capture_output=True, text=True,
                         env=env, check=True).stdout.splitlines()
    assert len(out) == 2
    for line in out:
        assert f"found at {tmp_path / 'nltk' / 'corpora' / 'wordnet.zip'} but unreadable (BadZipFile" in line
        assert "fetch it again: combo data fetch wordnet" in line


def test_the_command_line_starts_without_the_network_or_the_statistics_it_does_not_run():
    # every command pays for what `import combo.cli` imports: downloading (http, email: 20-35 ms) and the
    # meta-evaluation statistics load when used
    import subprocess
    import sys

    unwanted = ("http.client", "urllib.request", "email.parser", "combo.meta.significance", "combo.meta.wmt23",
                "scipy.stats")
    code = f"import sys, combo.cli; print([m for m in {unwanted!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
