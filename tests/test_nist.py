"""NIST (Doddington 2002): hand-worked example, NLTK's nist_score on WMT12 de-en, edge cases."""

import math

import numpy as np
import pytest

from combo import OptionError, get_metric
from combo.analysis.tokenize import tokenize_13a
from combo.metrics.lexical.nist import NIST_BETA, nist_brevity_penalty

nltk_nist = pytest.importorskip("nltk.translate.nist_score")


def _tok(lines):
    return [tokenize_13a(line).split() for line in lines]


def test_brevity_penalty_is_half_at_two_thirds():
    # Doddington 2002, eq. 3: beta is chosen so that the penalty is 0.5 at L_hyp / L_ref = 2/3.
    assert nist_brevity_penalty(2.0, 3.0) == pytest.approx(0.5, abs=1e-12)
    penalties = nist_brevity_penalty(np.array([3.0, 4.0, 0.0, 5.0]), np.array([3.0, 3.0, 3.0, 0.0]))
    assert penalties.tolist() == [1.0, 1.0, 0.0, 1.0]  # ratio >= 1, empty hypothesis, empty reference
    assert NIST_BETA == pytest.approx(4.2161736, abs=1e-6)


def test_hand_worked_example():
    # One segment, max_order 2, hypothesis "a b", reference "a b a c".
    # Reference counts: a:2, b:1, c:1 (4 words); bigrams "a b", "b a", "a c": 1 each.
    # Info(a) = log2(4/2) = 1, Info(b) = log2(4/1) = 2, Info(a b) = log2(count(a)/count(a b)) = log2(2/1) = 1.
    # Unigrams: (1 + 2) / 2 hypothesis unigrams = 1.5; bigrams: 1 / 1 = 1; sum 2.5.
    # Length ratio 2/4: penalty exp(-beta * log(0.5)^2), beta = log(2) / log(1.5)^2.
    nist = get_metric("nist", max_order=2, tokenize="none")
    expected = 2.5 * math.exp(-(math.log(2) / math.log(1.5) ** 2) * math.log(0.5) ** 2)
    assert nist.corpus_score(["a b"], [["a b a c"]]) == pytest.approx(expected, abs=1e-12)
    stats = nist.segment_statistics(["a b"], [["a b a c"]])
    # [hyp_len, ref_len, info_1, info_2, count_1, count_2]
    assert stats[0].tolist() == pytest.approx([2, 4, 3.0, 1.0, 2, 1])
    assert nltk_nist.sentence_nist([["a", "b", "a", "c"]], ["a", "b"], n=2) == pytest.approx(expected, abs=1e-12)


def test_two_segment_weights_count_every_reference_of_the_call():
    # Two segments, max_order 1. References "x y" and "x z": x:2, y:1, z:1 (4 words).
    # Info(x) = log2(4/2) = 1, Info(y) = Info(z) = 2.
    # Segment 1 "x y" vs "x y": (1 + 2) / 2 = 1.5; segment 2 "z" vs "x z": 2 / 1 = 2, ratio 1/2.
    nist = get_metric("nist", max_order=1, tokenize="none")
    seg = nist.segment_scores(["x y", "z"], [["x y"], ["x z"]])
    bp_half = math.exp(-NIST_BETA * math.log(0.5) ** 2)
    assert seg.tolist() == pytest.approx([1.5, 2.0 * bp_half], abs=1e-12)
    # Corpus: (1 + 2 + 2) / 3 hypothesis unigrams, ratio 3/4.
    corpus = 5 / 3 * math.exp(-NIST_BETA * math.log(0.75) ** 2)
    assert nist.corpus_score(["x y", "z"], [["x y"], ["x z"]]) == pytest.approx(corpus, abs=1e-12)


def test_corpus_nist_matches_nltk_on_wmt12(wmt12_de_en):
    ref, systems = wmt12_de_en
    refs_tok = [[r] for r in _tok(ref)]
    nist = get_metric("nist")
    names = ["onlineB", "jhu-hiero"]  # all 3,003 segments (NIST's information weights: the whole test set)
    for name in names:
        hyps = systems[name]
        expected = nltk_nist.corpus_nist(refs_tok, _tok(hyps), n=5)
        got = nist.corpus_score(hyps, [[r] for r in ref])
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), name
        assert got > 1.0  # raw NIST, not squeezed into [0, 1]


def test_all_systems_in_one_call_give_each_system_its_own_corpus_nist(wmt12_de_en):
    # Rows of several systems share the references: counts scale alike, the weights do not change.
    ref, systems = wmt12_de_en
    names = ["onlineA", "QCRI--primary", "UG-WMT12"]
    nist = get_metric("nist")
    hyps = [h for n in names for h in systems[n]]
    refs = [[r] for _ in names for r in ref]
    stats = nist.segment_statistics(hyps, refs)
    for k, name in enumerate(names):
        per_system = stats[k * len(ref):(k + 1) * len(ref)].sum(axis=0)
        alone = nist.corpus_score(systems[name], [[r] for r in ref])
        assert nist.score(per_system) == pytest.approx(alone, rel=1e-12)


def test_single_segment_call_matches_sentence_nist(wmt12_de_en):
    # NLTK's sentence_nist takes the weights from that one segment's references:
    # the same as scoring a corpus of one segment.
    ref, systems = wmt12_de_en
    hyps = systems["onlineC"]
    nist = get_metric("nist")
    checked = 0
    for i in range(0, 3003, 10):
        h, r = _tok([hyps[i]])[0], _tok([ref[i]])[0]
        if len(h) < 5:  # NLTK divides by zero when the hypothesis has no 5-gram
            with pytest.raises(ZeroDivisionError):
                nltk_nist.sentence_nist([r], h)
            assert math.isfinite(nist.corpus_score([hyps[i]], [[ref[i]]]))
            continue
        expected = nltk_nist.sentence_nist([r], h)
        assert nist.corpus_score([hyps[i]], [[ref[i]]]) == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert nist.segment_scores([hyps[i]], [[ref[i]]])[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        checked += 1
    assert checked > 250


def test_segment_scores_use_corpus_weights(wmt12_de_en):
    # NLTK has no segment score with corpus-wide weights. Derive it: corpus_nist with every other
    # hypothesis empty sums only segment i's n-gram precisions (empty hypotheses add 0 / 0), with the
    # weights of all references and the penalty of L_hyp(i) vs all reference words; undo that penalty.
    ref, systems = wmt12_de_en
    n = 200
    hyps, refs = systems["onlineD"][:n], ref[:n]
    h_tok, r_tok = _tok(hyps), [[r] for r in _tok(refs)]
    total_ref = sum(len(r[0]) for r in r_tok)
    seg = get_metric("nist").segment_scores(hyps, [[r] for r in refs])
    checked = 0
    for i in range(0, n, 15):
        if len(h_tok[i]) < 5:
            continue
        only_i = [h if k == i else [] for k, h in enumerate(h_tok)]
        pooled = nltk_nist.corpus_nist(r_tok, only_i)
        precision = pooled / nltk_nist.nist_length_penalty(total_ref, len(h_tok[i]))
        expected = precision * nltk_nist.nist_length_penalty(len(r_tok[i][0]), len(h_tok[i]))
        assert seg[i] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        checked += 1
    assert checked >= 10


def test_two_references_nltk_and_mteval(wmt12_de_en):
    # Second reference: another system's output (WMT12 has one human reference).
    ref, systems = wmt12_de_en
    second = systems["onlineB"]
    refs = [[r, o] for r, o in zip(ref, second)]
    refs_tok = [[a, b] for a, b in zip(_tok(ref), _tok(second))]
    nltk_mode = get_metric("nist", multi_ref="nltk")
    mteval_mode = get_metric("nist")
    for name in ["KIT_Phrase-Based_SMT_System"]:
        expected = nltk_nist.corpus_nist(refs_tok, _tok(systems[name]))
        assert nltk_mode.corpus_score(systems[name], refs) == pytest.approx(expected, rel=1e-12)
        # mteval clips by the largest count over both references and uses the average length:
        # more matches than NLTK's single best reference per order.
        assert mteval_mode.corpus_score(systems[name], refs) > expected + 0.5
    # Sentence level, two references, segment weights.
    hyps = systems["uedin-wmt12"]
    for i in range(0, 3003, 60):
        h = _tok([hyps[i]])[0]
        if len(h) < 5:
            continue
        expected = nltk_nist.sentence_nist(refs_tok[i], h)
        assert nltk_mode.corpus_score([hyps[i]], [refs[i]]) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_one_reference_modes_agree(wmt12_de_en):
    ref, systems = wmt12_de_en
    hyps, refs = systems["onlineE"][:500], [[r] for r in ref[:500]]
    a = get_metric("nist").segment_scores(hyps, refs)
    b = get_metric("nist", multi_ref="nltk").segment_scores(hyps, refs)
    assert np.max(np.abs(a - b)) < 1e-12


def test_empty_texts_and_missing_references():
    nist = get_metric("nist", tokenize="none")
    # Empty hypothesis: no matches, penalty 0.
    assert nist.segment_scores([""], [["a b c"]]).tolist() == [0.0]
    # Empty reference: no n-gram has a weight, so no information is matched.
    assert nist.segment_scores(["a b"], [[""]]).tolist() == [0.0]
    assert nist.segment_scores([""], [[""]]).tolist() == [0.0]
    # A segment without references next to a scored one.
    seg = nist.segment_scores(["a b", "a b"], [["a b c"], []])
    assert seg[1] == 0.0 and seg[0] > 0
    for mode in ("mteval", "nltk"):
        m = get_metric("nist", multi_ref=mode, tokenize="none")
        assert m.corpus_score(["", "a"], [[""], []]) == 0.0
        assert m.corpus_score([], []) == 0.0


def test_options():
    with pytest.raises(OptionError):
        get_metric("nist", max_order=0)
    with pytest.raises(OptionError):
        get_metric("nist", multi_ref="best")
    with pytest.raises(OptionError):
        get_metric("nist", tokenize="moses")
    m = get_metric("nist:max_order=3,lowercase=yes,multi_ref=nltk")
    assert m.signature.startswith("nist|n:3|tok:13a|lc:yes|mr:nltk|")
    lc = get_metric("nist", lowercase=True, tokenize="none")
    assert lc.corpus_score(["The Cat"], [["the cat"]]) == pytest.approx(lc.corpus_score(["the cat"], [["the cat"]]))
    assert get_metric("nist").value_range == (0.0, math.inf)


def test_an_ngram_table_numbers_ngrams_by_content_across_analyses(wmt12_de_en):
    """The table of one analysis's n-grams finds, in an analysis of other texts, exactly the n-grams whose
    tokens it holds, each at its rank among the table's n-grams in lexicographic order (the definition,
    written with tuples of tokens, on real WMT12 lines)."""
    from combo.analysis.ngrams import NgramCounts, NgramTable

    ref, systems = wmt12_de_en
    table_lines, other_lines = _tok(ref[:300]), _tok(systems[sorted(systems)[0]][200:400]) + [[]]
    counts = NgramCounts(table_lines, 4)
    table, local_of = NgramTable.of(counts, [np.ones(m.shape[1], dtype=bool) for m in counts.matrices])
    other = NgramCounts(other_lines, 4)
    found = table.ids_of(other)
    for n in range(1, 5):
        grams = sorted({tuple(toks[i:i + n]) for toks in table_lines for i in range(len(toks) - n + 1)})
        rank = {g: j for j, g in enumerate(grams)}
        assert table.size(n) == len(grams)
        ids = other.ngram_ids[n - 1]
        flat = [t for toks in other_lines for t in toks]
        for p in np.flatnonzero(ids >= 0).tolist():
            assert found[n - 1][ids[p]] == rank.get(tuple(flat[p:p + n]), -1)
        # the analysis id of each table id is that n-gram in the analysis the table was made from
        own = counts.ngram_ids[n - 1]
        own_flat = [t for toks in table_lines for t in toks]
        first = {}
        for p in np.flatnonzero(own >= 0).tolist():
            first.setdefault(own[p], tuple(own_flat[p:p + n]))
        assert [first[i] for i in local_of[n - 1].tolist()] == grams
    assert (found[1] >= 0).sum() > 0 and (found[3] < 0).sum() > 0  # some shared, some not


def test_a_table_refuses_ngrams_without_their_prefix():
    from combo.analysis.ngrams import NgramCounts, NgramTable

    counts = NgramCounts([["a", "b"]], 2)
    with pytest.raises(ValueError, match="prefixes"):
        NgramTable.of(counts, [np.array([False, True]), np.array([True])])


def test_reference_counts_made_a_slice_at_a_time_and_merged_equal_one_count(wmt12_de_en):
    """Counts of groups of references made in slices (each its own analysis and table) and merged by content
    equal the counts of one analysis of them all, table and counts exactly, in any order of the slices."""
    from combo.analysis.ngrams import NgramCounts, count_reference_groups, merge_reference_counts

    ref, systems = wmt12_de_en
    texts = _tok(ref[:400]) + _tok(systems[sorted(systems)[1]][:400])
    ptr = np.arange(0, 801, 2)  # 400 groups of two texts: a reference and an output
    ids = np.arange(800)
    weight = np.arange(1, 401, dtype=np.float64) % 7
    for presence in (False, True):
        whole = count_reference_groups(NgramCounts(texts, 5), ptr, ids, weight, presence)
        parts = []
        for start, stop in ((0, 150), (150, 151), (151, 400)):
            lo, hi = ptr[start], ptr[stop]
            parts.append(count_reference_groups(NgramCounts(texts[lo:hi], 5), ptr[start:stop + 1] - lo,
                                                np.arange(hi - lo), weight[start:stop], presence))
        for order in ([0, 1, 2], [2, 0, 1]):
            merged = merge_reference_counts([parts[k] for k in order])
            assert merged.table.tokens == whole.table.tokens
            assert all(np.array_equal(a, b) for a, b in zip(merged.table.keys, whole.table.keys))
            assert all(np.array_equal(a, b) for a, b in zip(merged.counts, whole.counts))
            assert (merged.words, merged.weight) == (whole.words, whole.weight)
        assert whole.words == float(weight @ np.add.reduceat([len(t) for t in texts], ptr[:-1]))


def _sgm_segments(path):
    import re

    return [m.group(1) for line in path.read_text(encoding="utf-8").splitlines()
            if (m := re.search(r"<seg[^>]*>(.*)</seg>", line))]


def test_default_mode_equals_mteval_v13a_on_nltks_wmt15_eval(data):
    # The official mteval-v13a.pl run that NLTK ships (models/wmt15_eval/mteval-13a.output): 100 newstest2015
    # en-ru sentences, Google's output against one reference, read from the SGML files mteval scored.
    # Cumulative NIST and BLEU at each order, as mteval prints them to 4 decimals.
    folder = data / "nltk_data" / "models" / "wmt15_eval"
    hyps = _sgm_segments(folder / "newstest2015-100sents-enru-google.ru.sgm")
    refs = [[r] for r in _sgm_segments(folder / "newstest2015-100sents-enru-ref.ru.sgm")]
    assert len(hyps) == len(refs) == 100
    output = (folder / "mteval-13a.output").read_text(encoding="utf-8")
    assert "NIST score = 5.0564  BLEU score = 0.2318" in output
    nist = [4.4488, 5.0043, 5.0520, 5.0564, 5.0564]
    bleu = [0.5415, 0.4012, 0.3044, 0.2318]
    for n, expected in enumerate(nist, 1):
        assert round(get_metric(f"nist:max_order={n}").corpus_score(hyps, refs), 4) == expected, n
    for n, expected in enumerate(bleu, 1):
        assert round(get_metric(f"bleu:max_order={n}").corpus_score(hyps, refs), 4) == expected, n
    assert round(get_metric("nist").corpus_score(hyps, refs), 4) == 5.0564  # the default: mteval mode, 5-grams
