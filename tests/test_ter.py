"""TER: oracle agreement with sacreBLEU 2.6.0 on WMT12 de-en, hand-worked cases, edge cases."""

import itertools
import random
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import combo
from combo.errors import InputError, OptionError
from combo.metrics.lexical.ter import tercom_tokens
from combo.metrics.lexical import ter_alignment
from combo.metrics.lexical.ter_alignment import shift_edit_counts

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import TER as SacreTER  # noqa: E402
from sacrebleu.metrics import lib_ter  # noqa: E402
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer  # noqa: E402



def _sacre_stats(args):
    """sacreBLEU's per-segment [edits, avg ref length] (run in a worker process)."""
    hyps, ref_streams, options = args
    return np.array(SacreTER(**options)._extract_corpus_statistics(hyps, ref_streams), dtype=np.float64)


def _sacre_segment_scores(stats):
    """sacreBLEU's segment TER / 100 from its own statistics."""
    theirs = SacreTER()
    return np.array([theirs._compute_score_from_stats(list(s)).score / 100 for s in stats])


def _sacre_corpus_score(stats):
    """sacreBLEU's corpus TER / 100: its own aggregation of its segment statistics."""
    return SacreTER()._aggregate_and_compute([list(s) for s in stats]).score / 100


# -- hand-worked examples --------------------------------------------------------------------------------

def test_snover_example_one_shift_two_substitutions_one_insertion():
    # Snover et al. 2006, §2: REF (13 words) "saudi arabia denied this week information published in the
    # american new york times"; HYP (12 words) "this week the saudis denied information published in the
    # new york times". Shift "this week" to after "denied" (1), then "the saudis" -> "saudi arabia"
    # (2 substitutions), insert "american" (1): 4 edits, TER = 4 / 13.
    ref = "Saudi Arabia denied this week information published in the American New York Times"
    hyp = "this week the Saudis denied information published in the New York Times"
    ter = combo.get_metric("ter")
    np.testing.assert_array_equal(ter.segment_statistics([hyp], [[ref]]), [[4.0, 13.0]])
    assert ter.corpus_score([hyp], [[ref]]) == pytest.approx(4 / 13, abs=1e-12)


def test_rotation_costs_one_shift():
    # "b c a" -> "a b c": plain Levenshtein needs 2 edits (delete a, insert a); shifting the block "a" to
    # the front costs 1 and leaves an exact match: 1 / 3.
    ter = combo.get_metric("ter")
    assert ter.segment_scores(["b c a"], [["a b c"]])[0] == pytest.approx(1 / 3, abs=1e-12)
    # No shift helps when nothing matches: 3 substitutions.
    assert ter.segment_scores(["x y z"], [["a b c"]])[0] == pytest.approx(1.0, abs=1e-12)


def test_empty_hypothesis_and_empty_reference():
    ter = combo.get_metric("ter")
    stats = ter.segment_statistics(["", "a b", "", "  "], [["a b"], [""], [""], ["a"]])
    # empty hyp vs 2 words: 2 insertions / 2; 2 words vs empty ref: 2 edits, length 0 -> score 1;
    # both empty: 0 / 0 -> 0; white space only is empty: 1 insertion / 1.
    np.testing.assert_array_equal(stats, [[2, 2], [2, 0], [0, 0], [1, 1]])
    np.testing.assert_allclose(ter.score(stats, segment_level=True), [1.0, 1.0, 0.0, 1.0])
    assert ter.corpus_score([""], [[""]]) == 0.0
    theirs = SacreTER()
    for hyp, ref in [("", "a b"), ("a b", ""), ("", "")]:
        assert ter.segment_scores([hyp], [[ref]])[0] == pytest.approx(theirs.sentence_score(hyp, [ref]).score / 100)


def test_hypothesis_equal_to_a_reference_costs_nothing_beside_others_that_do():
    # the pair a hypothesis makes with its own text skips the shift search; the other pairs are searched
    ter = combo.get_metric("ter")
    hyps = ["the cat sat on the mat", "The Cat sat on the mat .", "on the mat the cat sat", "a b c"]
    refs = [["the cat sat on the mat"], ["a dog", "the cat sat on the mat ."], ["the cat sat on the mat"], ["c b a"]]
    stats = ter.segment_statistics(hyps, refs)
    theirs = SacreTER()
    for k, (hyp, ref) in enumerate(zip(hyps, refs)):
        assert stats[k, 0] == theirs._extract_corpus_statistics([hyp], [[r] for r in ref])[0][0]
    np.testing.assert_array_equal(stats[:2, 0], [0, 0])


def test_multiple_references_take_fewest_edits_over_average_length():
    # hyp "a b c": 0 edits to "a b c" (3 words), 2 to "a" (1 word): min 0 edits, average length 2.
    ter = combo.get_metric("ter")
    np.testing.assert_array_equal(ter.segment_statistics(["a b c"], [["a", "a b c"]]), [[0.0, 2.0]])
    # Corpus TER sums edits and average lengths: (0 + 1) / (2 + 1).
    assert ter.corpus_score(["a b c", "x"], [["a", "a b c"], ["y"]]) == pytest.approx(1 / 3)


def test_bad_input_and_options():
    with pytest.raises(OptionError):
        combo.get_metric("ter", shifts=3)
    with pytest.raises(OptionError):
        combo.get_metric("ter", normalized="maybe")
    assert combo.get_metric("ter:normalized=yes,case_sensitive=0").params["normalized"] is True
    ter = combo.get_metric("ter")
    with pytest.raises(InputError):
        ter.segment_statistics(["a"], [[]])
    assert ter.higher_is_better is False
    assert ter.pairwise_scores(["a b c", "b c a"], np.array([1]), np.array([0]))[0] == pytest.approx(1 / 3)


# -- tokeniser --------------------------------------------------------------------------------------------

def test_tercom_tokens_equal_sacrebleu_for_every_option(wmt12_de_en):
    ref, systems = wmt12_de_en
    texts = ref[:150] + systems["onlineA"][:150] + [
        "Tom's &quot;car&amp;&lt;x&gt; it's 3.5-4, a.b 12,000\n-next\nline 's", "日本語のテキスト、です。ひらがな",
        "ひらがな", "カタカナ", "全角！（テスト）", "  MiXeD Case  ", "", "   ", "end's\n"]
    for options in itertools.product([False, True], repeat=4):
        tok = TercomTokenizer(*options)
        for text in texts:
            assert tercom_tokens(text, *options) == tuple(tok(text.rstrip()).split()), (options, text)


# -- the shift search against sacreBLEU's own function ------------------------------------------------------

#: The two searches: the compiled one (skipped where it was not built) and the numpy one it speeds up.
ENGINES = [pytest.param("c", marks=pytest.mark.skipif(ter_alignment._compiled is None,
                                                      reason="the C search was not built")), "numpy"]


@pytest.mark.parametrize("engine", ENGINES)
def test_shift_search_equals_sacrebleu_on_hard_synthetic_pairs(engine):
    # Tiny vocabularies give many repeated words, hence many candidate shifts (the 1,000-candidate cap is
    # reached for some pairs), long sequences exercise the beam, and extreme length ratios its widening.
    rng = random.Random(7)
    shapes = [(30, 30, 2), (40, 35, 2), (25, 30, 3), (60, 20, 3), (20, 60, 3), (1, 60, 2), (8, 120, 4),
              (120, 6, 4), (0, 5, 2), (5, 0, 2), (30, 55, 5), (12, 12, 1)]
    hyps, refs = [], []
    for n_hyp, n_ref, vocab in shapes:
        refs.append([rng.randrange(vocab) for _ in range(n_ref)])
        hyps.append([rng.randrange(vocab) for _ in range(n_hyp)])
    for _ in range(10):  # references with a few block moves and substitutions
        ref = [rng.randrange(12) for _ in range(rng.randint(20, 60))]
        hyp = list(ref)
        for _ in range(3):
            a = rng.randrange(len(hyp))
            block = hyp[a:a + rng.randint(1, 12)]
            del hyp[a:a + len(block)]
            b = rng.randrange(len(hyp) + 1)
            hyp[b:b] = block
        for _ in range(3):
            hyp[rng.randrange(len(hyp))] = rng.randrange(15)
        hyps.append(hyp)
        refs.append(ref)
    checked = []
    original = lib_ter._shift

    def counting_shift(*args):
        out = original(*args)
        checked.append(out[2])
        return out

    lib_ter._shift = counting_shift
    try:
        theirs = [lib_ter.translation_edit_rate([str(w) for w in h], [str(w) for w in r])[0]
                  for h, r in zip(hyps, refs)]
    finally:
        lib_ter._shift = original
    assert max(checked) >= lib_ter._MAX_SHIFT_CANDIDATES  # the cap was exercised
    ours = shift_edit_counts([np.array(h, dtype=np.int64) for h in hyps],
                             [np.array(r, dtype=np.int64) for r in refs], engine=engine)
    np.testing.assert_array_equal(ours, theirs)


# -- real data: WMT12 de-en ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sacre_wmt12(wmt12_de_en_peer_rows):
    """sacreBLEU's per-segment statistics of each system of the peer rows (the full sweep: two worker
    processes)."""
    ref, systems = wmt12_de_en_peer_rows
    jobs = [(systems[name], [ref], {}) for name in sorted(systems)]
    if len(systems) > 3:
        with ProcessPoolExecutor(max_workers=2) as pool:
            return dict(zip(sorted(systems), pool.map(_sacre_stats, jobs)))
    return dict(zip(sorted(systems), map(_sacre_stats, jobs)))


def test_ter_equals_sacrebleu_segment_by_segment_and_per_system(wmt12_de_en_peer_rows, sacre_wmt12):
    # Default: 3 systems x 300 segments; slow: all 16 systems x 3,003. Every system in one call.
    ref, systems = wmt12_de_en_peer_rows
    names = sorted(systems)
    ter = combo.get_metric("ter")
    stats = ter.segment_statistics([h for name in names for h in systems[name]],
                                   [[r] for _ in names for r in ref]).reshape(len(names), len(ref), 2)
    for k, name in enumerate(names):
        theirs = sacre_wmt12[name]
        np.testing.assert_array_equal(stats[k], theirs)
        np.testing.assert_allclose(ter.score(stats[k], segment_level=True), _sacre_segment_scores(theirs),
                                   rtol=0, atol=1e-9)
        assert ter.score(stats[k].sum(0)) == pytest.approx(_sacre_corpus_score(theirs), abs=1e-9)


@pytest.mark.skipif(ter_alignment._compiled is None, reason="the C search was not built")
def test_compiled_search_equals_numpy_search_on_wmt12(wmt12_de_en_peer_rows):
    # The compiled search (the default where it was built) against the numpy search it replaces, pair by
    # pair on real data: default 3 systems x 300 segments (900 pairs), slow all 16 x 3,003.
    ref, systems = wmt12_de_en_peer_rows
    ter = combo.get_metric("ter")
    names = sorted(systems)
    analysis = ter.analyse([h for name in names for h in systems[name]] + ref)
    seqs = [analysis.sequences[k] for k in analysis.sequence_of_text]
    hyps, refs = seqs[:-len(ref)], seqs[-len(ref):] * len(names)
    compiled = shift_edit_counts(hyps, refs, engine="c")
    assert compiled.sum() > 0 and len(compiled) == len(names) * len(ref)
    np.testing.assert_array_equal(compiled, shift_edit_counts(hyps, refs, engine="numpy"))


def test_engine_is_checked():
    with pytest.raises(OptionError, match="unknown TER engine 'fortran'"):
        shift_edit_counts([np.array([1])], [np.array([1])], engine="fortran")


@pytest.mark.parametrize("options", [
    {"normalized": True},
    {"no_punct": True},
    {"case_sensitive": True},
    {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True},
])
def test_options_equal_sacrebleu(wmt12_de_en, options):
    ref, systems = wmt12_de_en
    hyps, refs = systems["uedin-wmt12"][:40], ref[:40]
    ours = combo.get_metric("ter", **options)
    theirs = _sacre_stats((hyps, [refs], options))
    np.testing.assert_array_equal(ours.segment_statistics(hyps, [[r] for r in refs]), theirs)
    assert ours.corpus_score(hyps, [[r] for r in refs]) == pytest.approx(
        SacreTER(**options).corpus_score(hyps, [refs]).score / 100, abs=1e-9)


def test_multi_reference_ter_equals_sacrebleu(wmt12_de_en):
    ref, systems = wmt12_de_en
    n = 40
    r2, r3, hyps = systems["onlineA"][:n], systems["onlineC"][:n], systems["uedin-wmt12"][:n]
    refs = [[a, b, c] for a, b, c in zip(ref, r2, r3)]
    ter = combo.get_metric("ter")
    theirs = _sacre_stats((hyps, [ref[:n], r2, r3], {}))
    np.testing.assert_allclose(ter.segment_statistics(hyps, refs), theirs, rtol=0, atol=1e-12)
    assert ter.corpus_score(hyps, refs) == pytest.approx(
        SacreTER().corpus_score(hyps, [ref[:n], r2, r3]).score / 100, abs=1e-9)
    # A varying number of references: sacreBLEU drops None entries of its streams.
    var_refs = [rs[:1 + k % 3] for k, rs in enumerate(refs)]
    streams = [[rs[j] if j < len(rs) else None for rs in var_refs] for j in range(3)]
    theirs = _sacre_stats((hyps, streams, {}))
    np.testing.assert_allclose(ter.segment_statistics(hyps, var_refs), theirs, rtol=0, atol=1e-12)


def test_engine_c_without_the_module(monkeypatch):
    monkeypatch.setattr(ter_alignment, "_compiled", None)
    hyps, refs = [np.array([1, 2, 3]), np.array([4, 5])], [np.array([3, 1, 2]), np.array([5, 4, 6])]
    with pytest.raises(ImportError, match="install gcc or clang and reinstall combo, or use engine='numpy'"):
        shift_edit_counts(hyps, refs, engine="c")
    np.testing.assert_array_equal(shift_edit_counts(hyps, refs), [1, 2])  # auto: numpy
