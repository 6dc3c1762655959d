"""Clipped n-gram matches without count matrices (ngrams.clipped_counts), as BLEU and chrF count them, against
the count-matrix algebra they replaced; and token ids made a slice of lines at a time."""

import numpy as np
import pytest

import combo
from combo.analysis import ngrams, tokenize
from combo.analysis.ngrams import NgramCounts, SymbolSequences, clipped_counts, clipped_matches, pair_matches
from combo.analysis.ngrams import CharacterNgramCounts, reference_sets


def _random_case(rng):
    n_texts = int(rng.integers(1, 30))
    alphabet = int(rng.integers(1, 6))
    texts = [list(rng.integers(0, alphabet, rng.integers(0, 12)).astype(str)) for _ in range(n_texts)]
    order = int(rng.integers(1, 6))
    n_rows = int(rng.integers(0, 25))
    hyp = rng.integers(0, n_texts, n_rows)
    ref_ptr = np.concatenate([[0], np.cumsum(rng.integers(1, 4, n_rows))]).astype(np.int64)
    ref_ids = rng.integers(0, n_texts, ref_ptr[-1])
    return texts, order, hyp, ref_ptr, ref_ids


def _matrix_matches(texts, order, hyp, ref_ptr, ref_ids):
    counts = NgramCounts(texts, order)
    if not len(hyp):
        return np.zeros((0, order))
    return np.column_stack([clipped_matches(counts.matrices[k], hyp, ref_ptr, ref_ids) for k in range(order)])


@pytest.mark.parametrize("block", [1, 7, None])
def test_clipped_counts_equal_the_count_matrices(block):
    # several references per row (the largest count clips), rows sharing a reference set, empty texts,
    # blocks of one group each and of several
    rng = np.random.default_rng(0)
    for _ in range(200):
        texts, order, hyp, ref_ptr, ref_ids = _random_case(rng)
        seqs = SymbolSequences.of_sequences(texts, order)
        got = clipped_counts(seqs.symbols, seqs.ptr, seqs.alphabet, order, hyp, *reference_sets(ref_ptr, ref_ids),
                             block=block)
        np.testing.assert_array_equal(got, _matrix_matches(texts, order, hyp, ref_ptr, ref_ids))


def test_clipped_counts_with_dense_codes_and_a_huge_alphabet(monkeypatch):
    # the paths for keys that would not fit 63 bits (codes numbered densely) and for alphabets larger than a block
    # (its symbols numbered densely) count the same
    rng = np.random.default_rng(1)
    plain = ngrams._keys
    monkeypatch.setattr(ngrams, "_keys", lambda code, pos, bound, shift: plain(code, pos, 1 << 62, shift))
    for _ in range(100):
        texts, order, hyp, ref_ptr, ref_ids = _random_case(rng)
        seqs = SymbolSequences.of_sequences(texts, order)
        sets = reference_sets(ref_ptr, ref_ids)
        want = _matrix_matches(texts, order, hyp, ref_ptr, ref_ids)
        np.testing.assert_array_equal(clipped_counts(seqs.symbols, seqs.ptr, seqs.alphabet, order, hyp, *sets), want)
        spread = seqs.symbols.astype(np.int64) * (1 << 30) + 5  # ids of a 2**33-symbol alphabet
        np.testing.assert_array_equal(clipped_counts(spread, seqs.ptr, 1 << 33, order, hyp, *sets), want)


def test_character_matches_equal_the_character_count_matrices():
    texts = ["abcab", "", "bca", "ääbc", "a", "abcabcabc", "日本語日本", "aaaa", "aaa"]
    left = np.array([0, 0, 2, 3, 5, 6, 1, 4, 7, 8, 5])
    right = np.array([2, 5, 5, 0, 0, 6, 0, 4, 8, 7, 5])
    counts = CharacterNgramCounts(texts, 6)
    singletons = np.arange(len(texts) + 1)
    got = counts.matches(left, right, singletons, singletons[:-1])
    want = np.column_stack([pair_matches(m, left, right) for m in counts.matrices])
    np.testing.assert_array_equal(got, want)
    assert counts.symbols.dtype == np.uint8 and counts.alphabet == 7  # a b c ä 日 本 語: one byte each


def test_token_ids_number_tokens_by_their_first_occurrence_across_slices(monkeypatch):
    monkeypatch.setattr(tokenize, "TOKEN_ID_LINES", 2)
    texts = ["The cat, the dog.", "", "a cat", "The  end 3.5-4", "dog\xa0cat", "x\ty\u3000z"]
    for lowercase in (False, True):
        ids, ptr, n = tokenize.token_ids(texts, lowercase=lowercase)
        tokens = tokenize.tokenize_all(texts, lowercase=lowercase)
        flat = [t for line in tokens for t in line]
        assert [flat[i] for i in ids] == flat and ids.max() < n == len(flat)  # each id: a first occurrence
        assert [flat[ptr[k]:ptr[k + 1]] for k in range(len(texts))] == tokens
    assert tokenize.token_ids(["a b", "c"], "none")[0].tolist() == [0, 1, 2]
    assert len(tokenize.token_ids([])[0]) == 0


def test_the_white_space_split_splits_on_is_known():
    # _flat_tokens_13a counts a line's tokens from its bytes, sure of every white space character str.split knows
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    ascii_space = [c for c in spaces if ord(c) < 128]
    assert sorted(np.flatnonzero(tokenize._ASCII_SPACE)) == sorted(map(ord, ascii_space))
    assert all(tokenize._OTHER_SPACE.fullmatch(c) for c in spaces if ord(c) >= 128)
    assert not any(tokenize._OTHER_SPACE.fullmatch(chr(c)) for c in range(0x3001) if not chr(c).isspace())


def test_delta_bleu_reads_the_count_matrices_of_the_token_ids():
    # ΔBLEU's weighted matches still come from count matrices, built from the same token ids on demand
    m = combo.get_metric("bleu")
    hyps = ["the cat sat on the mat", "a dog"]
    refs = [["the cat sat on a mat", "the cat is on the mat"], ["a dog barks", "dogs"]]
    plain = m.segment_statistics(hyps, refs)
    weighted = m.segment_statistics(hyps, refs, [[1.0, 1.0], [1.0, 1.0]])
    np.testing.assert_array_equal(weighted[:, :plain.shape[1]], plain)
