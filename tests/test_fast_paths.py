"""The fast paths of the heterogeneous metrics give what the paths they replace gave, on real WMT12 lines.

- spaCy with only its tagger and parser (the ``dependencies`` layer) against the full pipeline, attribute
  ruler and lemmatiser included (``dependencies+lemmas``, what that layer ran before): the same words, tags,
  heads and relations.
- MiniLM encoded in fixed batches of the length order: the same embeddings however the texts are split into
  pieces (calls, worker processes), and the same ``sent-emb`` scores with ``jobs=2`` (encoded in the workers
  before the metrics start) as in one process.
"""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

from combo import score_testbed
from combo.analysis import layers
from combo.analysis.layers import annotate
from combo.testbed import Segment, Testbed

SEGMENTS = 60


def make_slice(refs, systems) -> Testbed:
    """The first 60 segments of WMT12 de-en with four of its systems (240 candidates, 300 texts)."""
    names = sorted(systems)[:4]
    return Testbed(name="wmt12-de-en-60", segments=[Segment(id=str(i), source="", references=[refs[i]])
                                                   for i in range(SEGMENTS)],
                   candidates={name: dict(enumerate(systems[name][:SEGMENTS])) for name in names},
                   metadata={"target_language": "en"})


@pytest.fixture(scope="module")
def wmt12_slice(wmt12_de_en):
    return make_slice(*wmt12_de_en)


def _texts(tb: Testbed):
    return list(dict.fromkeys([t for _, _, t in tb.rows()] + [r for s in tb.segments for r in s.references]))


def test_the_parser_alone_gives_the_full_pipelines_columns(wmt12_slice):
    pytest.importorskip("spacy")
    texts = _texts(wmt12_slice)
    layers.set_cache_dir(None)
    try:
        lite = annotate("dependencies", texts)
        full = annotate("dependencies+lemmas", texts)
    finally:
        layers._cache_dir_override = layers._UNSET
    assert [p[:4] for p in lite] == [p[:4] for p in full]
    assert all(p.lemmas == () for p in lite) and all(len(p.lemmas) == len(p.words) for p in full)
    assert sum(p.lemmas != p.words for p in full) > 100  # the lemmatiser did run there


def test_sentence_embeddings_do_not_depend_on_how_the_texts_are_split(wmt12_slice):
    pytest.importorskip("sentence_transformers")
    from combo.analysis.embeddings import ENCODER_BATCH, encode_sentences, length_order, texts_per_pass, word_pieces

    texts = _texts(wmt12_slice)[:200] + ["", "  "]
    whole = encode_sentences(texts)
    ordered = [texts[k] for k in length_order(texts)]
    assert sorted(ordered[-2:]) == ["", "  "]  # blank texts last: pieces of the order stay aligned on the batches
    cut = 3 * ENCODER_BATCH
    pieces = np.vstack([encode_sentences(ordered[:cut]), encode_sentences(ordered[cut:])])
    assert np.array_equal(pieces, whole[length_order(texts)])
    assert not whole[-2:].any()
    assert texts_per_pass(max(word_pieces(texts))) < ENCODER_BATCH  # the longest group ran in several passes


def test_passes_of_long_texts_give_the_same_vectors_on_one_thread_and_on_two(wmt12_slice):
    """A one-job run encodes with PyTorch's threads, a worker with one: passes of 8 texts of 66 to 179 word
    pieces give the same vectors to the bit."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    from combo.analysis.embeddings import ENCODER_BATCH, encode_sentences, texts_per_pass, word_pieces

    refs = [s.references[0] for s in wmt12_slice.segments]
    texts = [" ".join(refs[(i + k) % len(refs)] for k in range(6)) for i in range(ENCODER_BATCH)]
    assert texts_per_pass(max(word_pieces(texts))) == 8
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        two = encode_sentences(texts)
        torch.set_num_threads(1)
        one = encode_sentences(texts)
    finally:
        torch.set_num_threads(threads)
    assert np.array_equal(one, two)


def test_a_group_of_long_texts_is_encoded_in_passes_of_at_most_the_token_budget():
    from combo.analysis.embeddings import ENCODER_BATCH, ENCODER_TOKENS, texts_per_pass

    assert ENCODER_BATCH == 64 and ENCODER_TOKENS == 2048
    assert [texts_per_pass(n) for n in (1, 32, 33, 64, 65, 164, 256, 2048, 2049)] == [64, 64, 32, 32, 16, 8, 8, 1, 1]
    for longest in range(1, 600):
        size = texts_per_pass(longest)
        assert size == 1 or size * longest <= ENCODER_TOKENS  # within the budget
        assert size == ENCODER_BATCH or 2 * size * longest > ENCODER_TOKENS  # and as large as it allows


FRESH_PROCESS = """
import sys
import numpy as np
import combo.scoring.run as run
from combo import score_testbed
from combo.analysis import layers
sys.path.insert(0, sys.argv[1])
from test_fast_paths import make_slice
from conftest import DATA
plain = DATA / "wmt12" / "plain"
refs = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\\n")
systems = {f.name.split(".", 2)[2]: f.read_text(encoding="utf-8").split("\\n")
           for f in (plain / "system-outputs" / "newstest2012" / "de-en").iterdir()}
run.PARALLEL_ANNOTATION_MIN_TEXTS = 10
calls = []
real = run._annotate_in_parallel
run._annotate_in_parallel = lambda *a: calls.append(a[0]) or real(*a)
layers.set_cache_dir(None)
table = score_testbed(make_slice(refs, systems), ["sent-emb", "dp-hwcm", "bleu"], jobs=2)
assert calls == ["dependencies", "sentence-embeddings"], calls  # the layers first, before any metric
from combo.analysis.embeddings import encoder_ran_here
assert not encoder_ran_here()  # the workers encoded every text
np.save(sys.argv[2], table.segment)
"""


def test_two_workers_encode_first_and_give_one_process_scores(tmp_path, wmt12_slice):
    pytest.importorskip("sentence_transformers")
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "two.npy"
    subprocess.run([sys.executable, "-c", FRESH_PROCESS, str(Path(__file__).parent), str(out)], check=True,
                   timeout=300)
    layers.set_cache_dir(None)
    try:
        one = score_testbed(wmt12_slice, ["sent-emb", "dp-hwcm", "bleu"])
    finally:
        layers._cache_dir_override = layers._UNSET
    assert np.array_equal(one.segment, np.load(out))


def test_a_process_that_ran_the_encoder_encodes_again_itself_with_workers(monkeypatch, wmt12_slice):
    """Workers forked from a process whose PyTorch threads have started would wait forever on its OpenMP pool:
    that process encodes the texts itself, and the metrics still run in the workers."""
    pytest.importorskip("sentence_transformers")
    import combo.scoring.run as run

    monkeypatch.setattr(run, "PARALLEL_ANNOTATION_MIN_TEXTS", 10)
    layers.set_cache_dir(None)
    try:
        one = score_testbed(wmt12_slice, ["sent-emb", "bleu"])
        assert layers.get_layer("sentence-embeddings").threads_started()
        two = score_testbed(wmt12_slice, ["sent-emb", "bleu"], jobs=2)
    finally:
        layers._cache_dir_override = layers._UNSET
    assert np.array_equal(one.segment, two.segment) and np.array_equal(one.system, two.system)
    assert multiprocessing.active_children() == []
