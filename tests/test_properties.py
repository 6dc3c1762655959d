"""Property tests (hypothesis): what must hold for every input, not just the examples we thought of.

Each property runs ``EXAMPLES`` random examples (fewer for the slow ones, see
each ``settings``) so the file stays within seconds; docs/trust.md lists them.
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from combo.cli import main
from combo.meta.queen import queen
from combo.combine.ulc import ulc
from combo.analysis.kernels import TreeKernel
from combo.analysis.tokenize import tokenize_13a, tokenize_13a_many
from combo.analysis.trees import Tree, parse_bracketed
from combo.meta.likeness import king_segment
from combo.metrics.registry import get_metric

EXAMPLES = 40
FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Metrics computed from text alone, with no model or resource to load (fast enough for many examples).
TEXT_METRICS = ["bleu", "bleu:max_order=2", "chrf", "chrf++", "ter", "wer", "per", "nist", "rouge-1", "rouge-2",
                "rouge-l", "rouge-w", "rouge-su", "meteor:modules=exact", "gtm", "gtm:e=2", "cider"]
#: Metrics whose maximum is defined and reached by a hypothesis equal to its reference (WER/PER/TER: minimum 0).
MAXIMAL = {"bleu": 1.0, "bleu:max_order=2": 1.0, "chrf": 1.0, "chrf++": 1.0, "rouge-1": 1.0, "rouge-2": 1.0,
           "rouge-l": 1.0, "rouge-su": 1.0, "gtm": 1.0, "gtm:e=2": 1.0, "ter": 0.0, "wer": 0.0, "per": 0.0}

# any Unicode except surrogates and the line breaks a segment cannot hold
unicode_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e"
                                     "\x85\u2028\u2029"), max_size=40)
words = st.lists(st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "Haus", "é", "猫", "!", ","]),
                 min_size=1, max_size=12).map(" ".join)
_metrics = {spec: get_metric(spec) for spec in TEXT_METRICS}


def draw_refs(data, hyps, text, max_size=3):
    """A reference list per hypothesis; never N lists of N references, the one shape that may read as
    sacreBLEU's stream layout and is then refused (see docs/trust.md)."""
    refs = [data.draw(st.lists(text, min_size=1, max_size=max_size)) for _ in hyps]
    if len(hyps) > 1 and sum(len(r) == len(hyps) for r in refs) >= len(hyps) - 1:
        refs[0].append("")
        refs[-1].append("")
    return refs


@FAST
@given(hyps=st.lists(unicode_text, min_size=1, max_size=4), data=st.data())
def test_every_metric_within_its_range_on_random_unicode(hyps, data):
    refs = draw_refs(data, hyps, unicode_text)
    for spec, metric in _metrics.items():
        lo, hi = metric.value_range
        seg = metric.segment_scores(hyps, refs)
        corpus = metric.corpus_score(hyps, refs)
        assert np.all(np.isfinite(seg)) and np.isfinite(corpus), spec
        assert np.all((seg >= lo - 1e-9) & (seg <= hi + 1e-9)), (spec, seg)
        assert lo - 1e-9 <= corpus <= hi + 1e-9, (spec, corpus)


@FAST
@given(text=st.lists(st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "7"]), min_size=2, max_size=10)
       .map(" ".join))  # two ASCII words at least: ROUGE-2 needs a bigram, and rouge-score keeps only [a-z0-9]
def test_identical_hypothesis_and_reference_give_the_maximum(text):
    for spec, best in MAXIMAL.items():
        assert _metrics[spec].segment_scores([text], [[text]])[0] == pytest.approx(best), spec


@FAST
@given(hyps=st.lists(words, min_size=1, max_size=5), data=st.data())
def test_delta_bleu_with_all_weights_one_is_bleu(hyps, data):
    refs = draw_refs(data, hyps, words)
    ones = [[1.0] * len(r) for r in refs]
    bleu = _metrics["bleu"]
    assert bleu.corpus_score(hyps, refs, ones) == pytest.approx(bleu.corpus_score(hyps, refs), abs=1e-12)
    np.testing.assert_allclose(bleu.segment_scores(hyps, refs, ones), bleu.segment_scores(hyps, refs), atol=1e-12)


@FAST
@given(a=st.lists(words, min_size=1, max_size=4), b=st.lists(words, min_size=1, max_size=4), data=st.data())
def test_corpus_statistics_are_additive_over_segments(a, b, data):
    ra, rb = draw_refs(data, a, words, 2), draw_refs(data, b, words, 2)
    if len(a + b) > 1 and all(len(r) == len(a + b) for r in ra + rb):
        ra[0].append("")
    for spec, metric in _metrics.items():
        if spec in ("cider", "nist"):  # weights from the whole corpus by definition: CIDEr's document
            continue  # frequencies (Vedantam et al. 2015, eq. 1), NIST's information weights (Doddington 2002)
        whole = metric.segment_statistics(a + b, ra + rb)
        parts = np.vstack([metric.segment_statistics(a, ra), metric.segment_statistics(b, rb)])
        np.testing.assert_allclose(whole, parts, err_msg=spec)
        assert metric.corpus_score(a + b, ra + rb) == pytest.approx(float(metric.score(parts.sum(axis=0))))


def _similarities(draw_values, m, n_cand, n_ref):
    cand = np.asarray(draw_values(m * n_cand * n_ref), dtype=float).reshape(m, n_cand, n_ref)
    refs = np.asarray(draw_values(m * n_ref * n_ref), dtype=float).reshape(m, n_ref, n_ref)
    return cand, refs


values = st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 2))  # rounding makes ties common


@FAST
@given(m=st.integers(1, 3), n_cand=st.integers(1, 4), n_ref=st.integers(4, 6), data=st.data())
def test_queen_and_king_in_unit_interval_and_invariant_to_increasing_transforms(m, n_cand, n_ref, data):
    cand, refs = _similarities(lambda k: data.draw(st.lists(values, min_size=k, max_size=k)), m, n_cand, n_ref)
    q = queen(cand, refs)
    k = king_segment(cand, refs).king
    assert np.all((q >= 0) & (q <= 1)) and 0 <= k <= 1
    metric = data.draw(st.integers(0, m - 1))

    def transform(x):  # strictly increasing on [0, 1]
        return np.exp(3 * x) - 7.0

    cand2, refs2 = cand.copy(), refs.copy()
    cand2[metric], refs2[metric] = transform(cand[metric]), transform(refs[metric])
    np.testing.assert_array_equal(queen(cand2, refs2), q)
    assert king_segment(cand2, refs2).king == k


@FAST
@given(m=st.integers(2, 5), rows=st.integers(2, 8), data=st.data())
def test_ulc_is_unchanged_by_metric_order(m, rows, data):
    scores = np.asarray(data.draw(st.lists(values, min_size=m * rows, max_size=m * rows))).reshape(m, rows)
    hib = data.draw(st.lists(st.booleans(), min_size=m, max_size=m))
    order = np.asarray(data.draw(st.permutations(range(m))))
    np.testing.assert_allclose(ulc(scores[order], [hib[i] for i in order]), ulc(scores, hib), atol=1e-12)


labels = st.sampled_from(["S", "NP", "VP", "DT", "NN", "VB", "PP"])
leaves = st.sampled_from(["the", "cat", "sat", "mat", "on"])
trees = st.recursive(leaves.map(lambda w: Tree("NN", [w])),
                     lambda kids: st.builds(lambda label, ch: Tree(label, ch), labels,
                                            st.lists(kids, min_size=1, max_size=3)), max_leaves=8)


@settings(max_examples=EXAMPLES, deadline=None)
@given(a=trees, b=trees, kind=st.sampled_from(["sst", "st", "ptk"]))
def test_kernels_are_symmetric_and_one_on_identical_trees(a, b, kind):
    kernel = TreeKernel(kind)
    assert kernel(a, b) == pytest.approx(kernel(b, a), abs=1e-12)
    assert 0.0 <= kernel(a, b) <= 1.0 + 1e-12
    copy = parse_bracketed(a.to_bracketed())  # the same tree, built again
    assert kernel(a, copy) == pytest.approx(1.0)
    np.testing.assert_allclose(kernel.pairs([a, b], [b, a]), [kernel(a, b)] * 2, atol=1e-12)
    assert kernel.raw(a, b) == pytest.approx(kernel.raw(b, a))


@settings(max_examples=6, deadline=None)
@given(spec=st.sampled_from(["bleu", "chrf", "ter", "rouge-l", "wer", "gtm"]), level=st.sampled_from(["system",
                                                                                                       "segment"]))
def test_the_cli_and_the_api_give_the_same_numbers(spec, level):
    from combo import load_testbed
    from combo import example_path
    from combo.scoring import score_testbed

    res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", spec, "-q", "--level", level,
                                    "--format", "json"])
    assert res.exit_code == 0, res.stderr
    table = score_testbed(load_testbed(example_path()), [spec])
    assert json.loads(res.stdout) == json.loads(table.to_json())


#: Metrics that read analyses (tagger, chunker, parser, word vectors): fewer examples, each parses its texts.
ANALYSED_METRICS = ["sp-op", "sp-oc", "sp-nist", "cp-stm", "cp-tk", "dp-hwcm", "dp-or", "dp-tk", "ted", "emb-avg",
                    "emb-greedy", "emb-extrema"]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hyps=st.lists(unicode_text, min_size=1, max_size=3), data=st.data())
def test_analysed_metrics_within_their_range_on_random_unicode(hyps, data):
    refs = draw_refs(data, hyps, unicode_text, 2)
    for spec in ANALYSED_METRICS:
        metric = get_metric(spec)
        lo, hi = metric.value_range
        seg = metric.segment_scores(hyps, refs)
        corpus = metric.corpus_score(hyps, refs)
        assert np.all(np.isfinite(seg)) and np.isfinite(corpus), spec
        assert np.all((seg >= lo - 1e-9) & (seg <= hi + 1e-9)) and lo - 1e-9 <= corpus <= hi + 1e-9, (spec, seg)


#: Letters, digits, the symbols 13a pads, periods, commas, dashes, entities, non-ASCII letters and newlines.
_TOKENIZER_ALPHABET = "ab 09.,-&;<>{}()\"'/:@[]`~\u00e9\u010d\n"


@given(st.lists(st.text(alphabet=_TOKENIZER_ALPHABET, max_size=14), max_size=6))
@settings(max_examples=300, deadline=None)
def test_batch_13a_tokenizer_equals_the_line_tokenizer_on_random_lines(lines):
    assert tokenize_13a_many(lines) == [tokenize_13a(line) for line in lines]
