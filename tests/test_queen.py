"""QUEEN (QARLA): hand-worked cases, the fast bitset count against the enumeration of triples, properties, bad input."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from combo.meta.queen import (
    TRIPLES,
    leave_one_out_counts,
    min_references,
    popcount,
    popcount_table,
    prepare_segment,
    queen,
    queen_counts,
    queen_leave_one_out,
    queen_naive,
    queen_segments,
    triple_count,
)
from combo.errors import InputError, OptionError

# One metric, three references, two candidates (hand-worked below).
# x(r0, r1) = .5, x(r0, r2) = .2, x(r1, r2) = .8 (symmetric); the diagonal x(r, r) = 1.
REF_REF_3 = np.array([[1.0, 0.5, 0.2],
                      [0.5, 1.0, 0.8],
                      [0.2, 0.8, 1.0]])
# a: x(a, r0) = .6, x(a, r1) = .3, x(a, r2) = .9;  b: .1, .5, .2
CAND_REF_3 = np.array([[0.6, 0.3, 0.9],
                       [0.1, 0.5, 0.2]])


def test_hand_worked_distinct_triples():
    # triples="distinct": r, r', r'' pairwise distinct, 3 * 2 * 1 = 6 ordered triples.
    #   r = r0 vs (r1, r2), (r2, r1): x = .8, .8   a: .6 >= .8 no, no   b: .1 no, no
    #   r = r1 vs (r0, r2), (r2, r0): x = .2, .2   a: .3 yes, yes       b: .5 yes, yes
    #   r = r2 vs (r0, r1), (r1, r0): x = .5, .5   a: .9 yes, yes       b: .2 no, no
    # QUEEN(a) = 4/6, QUEEN(b) = 2/6
    got = queen(CAND_REF_3, REF_REF_3, triples="distinct")
    assert got.tolist() == [4 / 6, 2 / 6]
    assert queen_naive(CAND_REF_3, REF_REF_3, "distinct").tolist() == [4 / 6, 2 / 6]


def test_hand_worked_pair_distinct_and_independent_triples():
    # triples="pair-distinct": r free, r' != r'': 3 * 6 = 18 triples; the 6 pairs are .5 .5 .2 .2 .8 .8
    #   a: r0 (.6) beats .5 .5 .2 .2 -> 4; r1 (.3) beats .2 .2 -> 2; r2 (.9) beats all 6 -> 12/18
    #   b: r0 (.1) -> 0; r1 (.5) beats .5 .5 .2 .2 -> 4; r2 (.2) beats .2 .2 -> 2      ->  6/18
    assert queen(CAND_REF_3, REF_REF_3, "pair-distinct").tolist() == [12 / 18, 6 / 18]
    # triples="independent": 27 triples, the 9 pairs now include x(r, r) = 1, which nothing beats
    #   a: 12/27, b: 6/27
    assert queen(CAND_REF_3, REF_REF_3, "independent").tolist() == [12 / 27, 6 / 27]


def test_orientation_of_asymmetric_reference_scores():
    # ref_ref[i, j] = x(r_i, r_j); make x(r1, r2) = .8 but x(r2, r1) = .1
    refs = REF_REF_3.copy()
    refs[2, 1] = 0.1
    # distinct: r0 now faces .8 (r1, r2) and .1 (r2, r1): a (.6) wins 1, b (.1) wins 1
    #           r1 faces .2, .2 -> a 2, b 2;   r2 faces .5, .5 -> a 2, b 0
    assert queen(CAND_REF_3, refs).tolist() == [5 / 6, 3 / 6]


def test_triple_counts_and_minimum_references():
    assert [triple_count(4, t) for t in TRIPLES] == [24, 48, 64]
    assert [min_references(t) for t in TRIPLES] == [3, 2, 1]
    with pytest.raises(OptionError):
        triple_count(4, "qarla")


@pytest.mark.parametrize("triples", TRIPLES)
def test_fast_count_equals_enumeration_with_ties(triples):
    rng = np.random.default_rng(7)
    checked = 0
    for n in range(min_references(triples), 10):
        for m in (1, 2, 3):
            for n_cand in (1, 2, 5):
                # three levels only: ties everywhere, between candidates, references and metrics
                cand = rng.integers(0, 3, (m, n_cand, n)) / 2
                refs = rng.integers(0, 3, (m, n, n)) / 2
                assert np.array_equal(queen(cand, refs, triples), queen_naive(cand, refs, triples))
                checked += 1
    assert checked == 3 * 3 * (10 - min_references(triples))


@pytest.mark.parametrize("triples", TRIPLES)
def test_bitset_and_broadcast_counts_agree_with_the_enumeration(triples):
    # queen() picks the broadcast path up to 16 references and the bitsets above; force each one here
    rng = np.random.default_rng(17)
    for n in range(min_references(triples), 11):
        for m in (1, 3):
            cand, refs = prepare_segment(rng.integers(0, 3, (m, 3, n)) / 2, rng.integers(0, 3, (m, n, n)) / 2,
                                         triples)
            naive = queen_naive(cand, refs, triples)
            for method in ("bitset", "broadcast"):
                assert np.array_equal(queen_counts(cand, refs, triples, method) / triple_count(n, triples), naive)
            if n > min_references(triples):
                bits = leave_one_out_counts(cand, refs, triples, "bitset")
                bcast = leave_one_out_counts(cand, refs, triples, "broadcast")
                assert np.array_equal(bits[0], bcast[0]) and np.array_equal(bits[1], bcast[1])
    with pytest.raises(OptionError, match="method"):
        queen_counts(cand, refs, triples, "fast")


def test_fast_count_equals_enumeration_on_larger_cases():
    rng = np.random.default_rng(11)
    cand, refs = np.round(rng.random((2, 4, 24)), 2), np.round(rng.random((2, 24, 24)), 2)
    assert np.array_equal(queen(cand, refs), queen_naive(cand, refs))
    # larger: against the broadcast of every triple (itself checked against the enumeration above), which
    # counts the 343,000 triples of 70 references in numpy rather than in a Python loop
    for n, m, n_cand in ((70, 1, 3), (40, 3, 2)):  # 70 references: two words per bitset row
        cand, refs = prepare_segment(np.round(rng.random((m, n_cand, n)), 2), np.round(rng.random((m, n, n)), 2))
        assert np.array_equal(queen_counts(cand, refs, "distinct", "bitset"),
                              queen_counts(cand, refs, "distinct", "broadcast"))
    # leave-one-out with two words per bitset row: bitsets against the broadcast of every triple
    cand, refs = prepare_segment(np.round(rng.random((1, 2, 67)), 2), np.round(rng.random((1, 67, 67)), 2))
    bits = leave_one_out_counts(cand, refs, "distinct", "bitset")
    bcast = leave_one_out_counts(cand, refs, "distinct", "broadcast")
    assert np.array_equal(bits[0], bcast[0]) and np.array_equal(bits[1], bcast[1])


@pytest.mark.parametrize("triples", TRIPLES)
def test_leave_one_out_equals_queen_on_the_other_references(triples):
    rng = np.random.default_rng(3)
    for n in (min_references(triples) + 1, 6, 9):
        cand = rng.integers(0, 4, (2, 3, n)) / 3
        refs = rng.integers(0, 4, (2, n, n)) / 3
        loo_cand, loo_ref = queen_leave_one_out(cand, refs, triples)
        assert loo_cand.shape == (n, 3) and loo_ref.shape == (n,)
        for r in range(n):
            rest = [i for i in range(n) if i != r]
            others = refs[:, rest][:, :, rest]
            assert np.array_equal(loo_cand[r], queen_naive(cand[:, :, rest], others, triples))
            assert loo_ref[r] == queen_naive(refs[:, r:r + 1, rest], others, triples)[0]


def test_invariant_to_strictly_increasing_transforms():
    rng = np.random.default_rng(5)
    cand = rng.integers(0, 5, (3, 4, 7)) / 4
    refs = rng.integers(0, 5, (3, 7, 7)) / 4
    transforms = [np.exp, lambda x: x ** 3 + 2 * x - 7, lambda x: 1 / (1 + np.exp(-10 * x))]
    cand2 = np.stack([f(c) for f, c in zip(transforms, cand)])
    refs2 = np.stack([f(r) for f, r in zip(transforms, refs)])
    for triples in TRIPLES:
        assert np.array_equal(queen(cand, refs, triples), queen(cand2, refs2, triples))


def test_duplicated_metric_changes_nothing():
    rng = np.random.default_rng(6)
    cand = rng.integers(0, 4, (2, 5, 6)) / 3
    refs = rng.integers(0, 4, (2, 6, 6)) / 3
    # the duplicate of metric 0 is even on another scale (x * 100 + 3)
    cand3 = np.concatenate([cand, cand[:1] * 100 + 3])
    refs3 = np.concatenate([refs, refs[:1] * 100 + 3])
    assert np.array_equal(queen(cand, refs), queen(cand3, refs3))


def test_candidate_equal_to_a_reference_scores_high():
    rng = np.random.default_rng(8)
    n = 6
    refs = rng.uniform(0.4, 0.9, (2, n, n))
    np.einsum("kii->ki", refs)[:] = 1.0  # x(r, r) = 1, the largest similarity
    cand = rng.uniform(0.0, 0.9, (2, 4, n))
    cand[:, 0, :] = refs[:, 2, :]  # candidate 0 is a copy of reference 2: x(a, r) = x(r2, r), x(a, r2) = 1
    q = queen(cand, refs)
    # it wins every triple whose r is r2 (x = 1 beats every pair of distinct references) ...
    assert q[0] >= 1 / n
    # ... and when the references are less alike than the copy is to each of them, all triples
    cand[:, 0, :] = 0.95
    cand[:, 0, 2] = 1.0
    assert queen(cand, refs)[0] == 1.0


def test_constant_metric_is_neutral_and_ties_everywhere_give_one():
    rng = np.random.default_rng(9)
    cand = rng.integers(0, 4, (1, 3, 5)) / 3
    refs = rng.integers(0, 4, (1, 5, 5)) / 3
    constant_cand = np.full((1, 3, 5), 0.25)
    constant_refs = np.full((1, 5, 5), 0.25)
    # x(a, r) = c >= c = x(r', r'') for every triple: a constant metric never vetoes a triple
    assert queen(constant_cand, constant_refs).tolist() == [1.0, 1.0, 1.0]
    both = queen(np.concatenate([cand, constant_cand]), np.concatenate([refs, constant_refs]))
    assert np.array_equal(both, queen(cand, refs))


def test_higher_is_better_flips_error_metrics():
    rng = np.random.default_rng(10)
    sim_c, sim_r = rng.random((2, 3, 6)), rng.random((2, 6, 6))
    err_c, err_r = sim_c.copy(), sim_r.copy()
    err_c[1], err_r[1] = 1 - sim_c[1], 1 - sim_r[1]  # metric 1 is an error rate
    assert np.array_equal(queen(err_c, err_r, higher_is_better=[True, False]), queen(sim_c, sim_r))
    with pytest.raises(OptionError):
        queen(sim_c, sim_r, higher_is_better=[True])


def test_two_dimensional_input_is_one_metric():
    assert np.array_equal(queen(CAND_REF_3, REF_REF_3), queen(CAND_REF_3[None], REF_REF_3[None]))


def test_fewer_than_two_candidates():
    one = queen(CAND_REF_3[:1], REF_REF_3)
    assert one.tolist() == [4 / 6]
    none = queen(np.zeros((1, 0, 3)), REF_REF_3[None])
    assert none.shape == (0,)


def test_nan_scores_name_the_metric_and_segment():
    cand = np.stack([CAND_REF_3, CAND_REF_3])
    refs = np.stack([REF_REF_3, REF_REF_3])
    cand[1, 0, 2] = np.nan
    with pytest.raises(InputError, match=r"segment 4: metric 'chrf' has NaN candidate-reference"):
        queen(cand, refs, metric_names=["bleu", "chrf"], segment=4)
    # a NaN on the diagonal x(r, r) is never read unless the triples are independent draws
    refs = np.stack([REF_REF_3, REF_REF_3])
    refs[0, 1, 1] = np.nan
    ok = queen(np.stack([CAND_REF_3, CAND_REF_3]), refs)
    assert ok.tolist() == [4 / 6, 2 / 6]
    with pytest.raises(InputError, match="metric 0 has NaN reference-reference"):
        queen(np.stack([CAND_REF_3, CAND_REF_3]), refs, triples="independent")


def test_bad_shapes_options_and_too_few_references():
    with pytest.raises(InputError, match="must be"):
        queen(np.zeros((1, 2, 3)), np.zeros((1, 4, 4)))
    with pytest.raises(InputError, match="shape"):
        queen(np.zeros(3), np.zeros((3, 3)))
    with pytest.raises(InputError, match="at least one metric"):
        queen(np.zeros((0, 2, 3)), np.zeros((0, 3, 3)))
    with pytest.raises(InputError, match="at least 3 references, got 2"):
        queen(np.zeros((2, 2)), np.zeros((2, 2)))
    assert queen(np.zeros((2, 2)), np.zeros((2, 2)), triples="pair-distinct").tolist() == [1.0, 1.0]
    with pytest.raises(OptionError):
        queen(CAND_REF_3, REF_REF_3, triples="with-replacement")


def test_segments_ragged_skipped_counted_and_sampled():
    rng = np.random.default_rng(12)
    segments = [(rng.random((2, a, n)), rng.random((2, n, n))) for a, n in ((3, 5), (2, 2), (4, 3), (1, 9))]
    res = queen_segments(segments)
    assert res.skipped == {1: "2 references; QUEEN with triples='distinct' needs >= 3"}
    assert res.n_used == 3 and res.n_skipped == 1 and res.values[1] is None
    for i in (0, 2, 3):
        assert np.array_equal(res.values[i], queen(*segments[i]))
    capped = queen_segments(segments, max_refs=4, seed=1)
    assert capped.sampled == [0, 3]
    assert np.array_equal(capped.values[2], res.values[2])  # 3 references: nothing to sample
    again = queen_segments(segments, max_refs=4, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(capped.values, again.values) if x is not None)
    with pytest.raises(OptionError, match="max_refs"):
        queen_segments(segments, max_refs=2)


def test_segments_of_one_shape_are_stacked_without_changing_values():
    rng = np.random.default_rng(15)
    shapes = [(3, 4), (3, 5), (2, 20)] * 15  # stacked groups of small segments, and bitset ones
    segments = [(rng.integers(0, 4, (2, a, n)) / 3, rng.integers(0, 4, (2, n, n)) / 3) for a, n in shapes]
    res = queen_segments(segments, triples="pair-distinct")
    assert res.n_used == len(segments)
    for (cand, refs), values in zip(segments, res.values):
        assert np.array_equal(values, queen_naive(cand, refs, "pair-distinct"))


def test_reference_sampling_is_unbiased_for_distinct_triples():
    # Every ordered distinct triple of R lies in the same number of K-subsets, and each subset
    # counts K(K-1)(K-2) triples, so the mean of QUEEN over all K-subsets is exactly QUEEN over R.
    rng = np.random.default_rng(13)
    n, k = 7, 4
    cand = rng.integers(0, 4, (2, 3, n)) / 3
    refs = rng.integers(0, 4, (2, n, n)) / 3
    full = queen(cand, refs)
    total = [Fraction(0)] * 3
    subsets = list(itertools.combinations(range(n), k))
    for keep in subsets:
        keep = np.array(keep)
        q = queen(cand[..., keep], refs[:, keep[:, None], keep])
        total = [t + Fraction(round(v * triple_count(k)), triple_count(k)) for t, v in zip(total, q)]
    mean = [t / len(subsets) for t in total]
    assert mean == [Fraction(round(v * triple_count(n)), triple_count(n)) for v in full]


def test_popcount_table_matches_numpy():
    words = np.random.default_rng(14).integers(0, 2 ** 63, 1000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    expect = np.array([bin(int(w)).count("1") for w in words])
    assert np.array_equal(popcount_table(words), expect)
    assert np.array_equal(popcount(words), expect)


def test_bitset_path_with_the_table_popcount(monkeypatch):
    import sys

    module = sys.modules["combo.meta.queen"]
    monkeypatch.setattr(module, "popcount", popcount_table)  # as on numpy < 2
    rng = np.random.default_rng(16)
    cand, refs = prepare_segment(rng.integers(0, 3, (2, 3, 70)) / 2, rng.integers(0, 3, (2, 70, 70)) / 2)
    bitset = queen_counts(cand, refs, "distinct", "bitset")
    assert np.array_equal(bitset, queen_counts(cand, refs, "distinct", "broadcast"))
    small = prepare_segment(cand[..., :6], refs[:, :6, :6])
    bits = leave_one_out_counts(*small, "distinct", "bitset")
    bcast = leave_one_out_counts(*small, "distinct", "broadcast")
    assert np.array_equal(bits[0], bcast[0]) and np.array_equal(bits[1], bcast[1])


def dstc7_arrays(testbed, segment_ids, metric_names, systems):
    """x(a, r) and x(r_i, r_j) per segment (ids in increasing order), from one analysis per metric."""
    from combo.scoring import score_with_references

    sub = testbed.subset(segment_ids)
    sub.candidates = {s: sub.candidates[s] for s in systems}
    _, refs = score_with_references(sub, list(metric_names))
    return [(refs.cand_ref(i), refs.ref_ref(i)) for i in range(len(sub.segments))]


def test_fast_equals_enumeration_on_real_dstc7_scores(data):
    from combo.io.dstc7 import read_dstc7

    tb = read_dstc7(data / "dstc7")
    systems = [s for s in tb.systems if s != "Human"]
    ids = [i for i, seg in enumerate(tb.segments)
           if 4 <= len(seg.references) <= 9 and all(i in tb.candidates[s] for s in systems)][:40]
    segments = dstc7_arrays(tb, ids, ["chrf", "rouge-l", "bleu"], systems)
    tied = 0
    for cand, refs in segments:
        tied += int(len(np.unique(cand)) < cand.size)
        for triples in TRIPLES:
            assert np.array_equal(queen(cand, refs, triples), queen_naive(cand, refs, triples))
    assert len(segments) == 40 and tied > 0  # real sentence-level scores tie (e.g. BLEU 0)
    # segments with 17-25 references go through the bitsets
    ids = [i for i, seg in enumerate(tb.segments)
           if 17 <= len(seg.references) <= 25 and all(i in tb.candidates[s] for s in systems)][:3]
    assert len(ids) == 3
    for cand, refs in dstc7_arrays(tb, ids, ["chrf", "bleu"], systems):
        assert np.array_equal(queen(cand, refs), queen_naive(cand, refs))
        prepared = prepare_segment(cand, refs)
        bits = leave_one_out_counts(*prepared, "distinct", "bitset")
        bcast = leave_one_out_counts(*prepared, "distinct", "broadcast")
        assert np.array_equal(bits[0], bcast[0]) and np.array_equal(bits[1], bcast[1])
