"""KING and ORANGE: hand-worked cases, KING against its definition, ORANGE ranks against scipy, bad input."""

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import rankdata

from combo.meta.queen import TRIPLES, min_references, queen
from combo.errors import InputError, OptionError
from combo.meta.likeness import (
    exact_mean_of_means,
    king,
    king_segment,
    king_segment_naive,
    leave_one_out_scores,
    orange,
    reference_ranks,
)
from test_queen import dstc7_arrays

# One metric, four references, two candidates. x(r_i, r_j) (symmetric):
#   r0-r1 .9  r0-r2 .3  r0-r3 .4  r1-r2 .5  r1-r3 .6  r2-r3 .2
REF_REF_4 = np.array([[1.0, 0.9, 0.3, 0.4],
                      [0.9, 1.0, 0.5, 0.6],
                      [0.3, 0.5, 1.0, 0.2],
                      [0.4, 0.6, 0.2, 1.0]])
# x(a, r0..r3) = .7 .8 .1 .3 ;  x(b, r0..r3) = .2 .4 .6 .5
CAND_REF_4 = np.array([[0.7, 0.8, 0.1, 0.3],
                       [0.2, 0.4, 0.6, 0.5]])

# Hand derivation, triples="distinct": hold out r, QUEEN over the 6 triples of the other three.
# hold out r0, R' = {r1, r2, r3}: r1 faces pair (r2, r3) .2, r2 faces (r1, r3) .6, r3 faces (r1, r2) .5
#   r0: .9>=.2 yes, .3>=.6 no, .4>=.5 no -> 2/6;  a: .8 yes, .1 no, .3 no -> 2/6;  b: .4 yes, .6 yes, .5 yes -> 6/6
#   human-like?  2/6 >= max(2/6, 6/6)  no
# hold out r1, R' = {r0, r2, r3}: r0 faces .2, r2 faces (r0, r3) .4, r3 faces (r0, r2) .3
#   r1: .9 yes, .5 yes, .6 yes -> 6/6;   a: .7 yes, .1 no, .3 yes -> 4/6;   b: .2 yes, .6 yes, .5 yes -> 6/6
#   6/6 >= max(4/6, 6/6)  yes, by a tie with b
# hold out r2, R' = {r0, r1, r3}: r0 faces (r1, r3) .6, r1 faces (r0, r3) .4, r3 faces (r0, r1) .9
#   r2: .3 no, .5 yes, .2 no -> 2/6;   a: .7 yes, .8 yes, .3 no -> 4/6;   b: .2 no, .4 yes, .5 no -> 2/6   no
# hold out r3, R' = {r0, r1, r2}: r0 faces (r1, r2) .5, r1 faces (r0, r2) .3, r2 faces (r0, r1) .9
#   r3: .4 no, .6 yes, .2 no -> 2/6;   a: .7 yes, .8 yes, .1 no -> 4/6;   b: .2 no, .4 yes, .6 no -> 2/6   no
# KING = 1/4, one reference human-like through a tie.
REF_QUEEN_4 = [2 / 6, 6 / 6, 2 / 6, 2 / 6]
CAND_QUEEN_4 = [[2 / 6, 6 / 6], [4 / 6, 6 / 6], [4 / 6, 2 / 6], [4 / 6, 2 / 6]]


def test_hand_worked_king():
    seg = king_segment(CAND_REF_4, REF_REF_4)
    assert seg.ref_queen.tolist() == REF_QUEEN_4
    assert seg.cand_queen.tolist() == CAND_QUEEN_4
    assert seg.human_like.tolist() == [False, True, False, False]
    assert seg.king == 0.25 and seg.ties == 1
    assert king_segment_naive(CAND_REF_4, REF_REF_4) == 0.25


def test_hand_worked_orange_of_queen():
    # ranks among the 2 candidates (1 = best), ties counting 1/2 each:
    #   r0: 2/6 vs a 2/6 (tie), b 1 (above) -> 1 + 1 + .5 = 2.5     r1: 1 vs a 4/6, b 1 (tie) -> 1.5
    #   r2: 2/6 vs a 4/6 (above), b 2/6 (tie) -> 2.5               r3: same as r2 -> 2.5
    # ORANGE = mean rank / (N + 1) = 2.25 / 3 = .75; optimistic ranks 2 1 2 2 -> 7/12; pessimistic 3 2 3 3 -> 11/12
    seg = king_segment(CAND_REF_4, REF_REF_4)
    assert reference_ranks(seg.ref_queen, seg.cand_queen).tolist() == [2.5, 1.5, 2.5, 2.5]
    assert orange([seg.ref_queen], [seg.cand_queen]).value == 0.75
    assert orange([seg.ref_queen], [seg.cand_queen], ties="optimistic").value == 7 / 12
    assert orange([seg.ref_queen], [seg.cand_queen], ties="pessimistic").value == 11 / 12


def test_hand_worked_orange_of_one_metric():
    # best-matching reference among R - {r}:
    #   references: r0 max(.9 .3 .4) = .9, r1 max(.9 .5 .6) = .9, r2 max(.3 .5 .2) = .5, r3 max(.4 .6 .2) = .6
    #   a without r0..r3: .8 .7 .8 .8      b: .6 .6 .5 .6
    #   ranks: r0 1, r1 1, r2 (a above, b tied) 2.5, r3 (a above, b tied) 2.5 -> 7/4 / 3 = 7/12
    ref, cand = leave_one_out_scores(CAND_REF_4, REF_REF_4, reduce="max")
    assert ref.tolist() == [0.9, 0.9, 0.5, 0.6]
    assert cand.tolist() == [[0.8, 0.6], [0.7, 0.6], [0.8, 0.5], [0.8, 0.6]]
    assert orange([ref], [cand]).value == 7 / 12
    ref_mean, cand_mean = leave_one_out_scores(CAND_REF_4, REF_REF_4, reduce="mean")
    assert np.allclose(ref_mean, [(0.9 + 0.3 + 0.4) / 3, (0.9 + 0.5 + 0.6) / 3, (0.3 + 0.5 + 0.2) / 3,
                                  (0.4 + 0.6 + 0.2) / 3])
    assert np.allclose(cand_mean[0], [(0.8 + 0.1 + 0.3) / 3, (0.4 + 0.6 + 0.5) / 3])


@pytest.mark.parametrize("triples", TRIPLES)
def test_king_equals_its_definition_with_ties(triples):
    rng = np.random.default_rng(21)
    checked = 0
    for n in range(min_references(triples) + 1, 9):
        for m in (1, 2, 3):
            for n_cand in (1, 2, 4):
                cand = rng.integers(0, 3, (m, n_cand, n)) / 2
                refs = rng.integers(0, 3, (m, n, n)) / 2
                assert king_segment(cand, refs, triples).king == king_segment_naive(cand, refs, triples)
                checked += 1
    assert checked > 0


def test_king_on_a_larger_case_equals_its_definition():
    rng = np.random.default_rng(22)
    cand = np.round(rng.random((2, 3, 18)), 1)  # 18 references: the bitset path
    refs = np.round(rng.random((2, 18, 18)), 1)
    assert king_segment(cand, refs).king == king_segment_naive(cand, refs)


def test_triple_convention_changes_king_at_four_references():
    # with 4 references the held-out QUEEN counts 6 (distinct), 18 (pair-distinct) or 27 (independent)
    # triples of the other three; letting r be r' or r'' lets a candidate win triples on x(r, r'') alone
    rng = np.random.default_rng(31)
    segments = [(rng.random((2, 5, 4)), rng.random((2, 4, 4))) for _ in range(60)]
    values = {t: king(segments, t).value for t in TRIPLES}
    for t in TRIPLES:  # the mean of the segments' exact shares (wins of 4 references), rounded once
        wins = [round(king_segment_naive(c, r, t) * 4) for c, r in segments]
        assert values[t] == float(sum(Fraction(w, 4) for w in wins) / len(wins))
    assert len(set(values.values())) == 3


def test_king_means_carry_no_float_noise():
    """A segment's KING is a fraction of its references, so the mean over segments is a rational number:
    summed in float64 it printed 0.17500000000000002 for 7/40; it is now that number rounded once."""
    segments = [np.array([0.5, 0, 0, 0, 0, 0, 0]), np.array([0.5, 1, 0.5, 0.5, 1, 1, 0.5, 0.5]),
                np.array([1.0, 0, 1, 1, 0, 0.5]), np.array([0.5, 0, 1, 1, 1, 0, 0, 1]), np.array([0.5, 0, 0, 0.5]),
                np.array([0.5, 0, 0, 0, 0, 1]), np.array([0.5, 0, 0.5, 1, 0.5, 0.5])]
    exact = sum(Fraction(float(c.sum())) / len(c) for c in segments) / len(segments)
    assert exact == Fraction(61, 147)
    assert exact_mean_of_means(segments) == float(exact) == 0.41496598639455784
    assert float(np.mean([c.mean() for c in segments])) == 0.4149659863945578  # the float64 sum's last digit
    rng = np.random.default_rng(31)
    result = king([(rng.random((2, 5, 4)), rng.random((2, 4, 4))) for _ in range(40)])
    wins = [round(s.king * 4) for s in result.segments]
    assert result.value == float(Fraction(sum(wins), 4 * len(wins)))
    assert result.value_with_ties("count") == result.value


def test_king_invariant_to_monotone_transforms_and_duplicates():
    rng = np.random.default_rng(23)
    cand = rng.integers(0, 4, (2, 3, 6)) / 3
    refs = rng.integers(0, 4, (2, 6, 6)) / 3
    base = king_segment(cand, refs).king
    assert king_segment(np.exp(cand) * 5, np.exp(refs) * 5).king == base
    assert king_segment(np.concatenate([cand, cand[1:] ** 3]), np.concatenate([refs, refs[1:] ** 3])).king == base


def test_copy_of_a_reference_ties_with_it_when_it_is_held_out():
    rng = np.random.default_rng(24)
    n = 6
    refs = rng.random((2, n, n))
    cand = rng.random((2, 3, n))
    cand[:, 1, :] = refs[:, 4, :]  # candidate 1 is reference 4: x(a, r) = x(r4, r) for every r != r4
    seg = king_segment(cand, refs)
    assert seg.cand_queen[4, 1] == seg.ref_queen[4]
    assert seg.ref_queen[4] <= seg.cand_queen[4].max()  # so r4 is human-like only through ties
    assert seg.human_like[4] == (seg.ref_queen[4] == seg.cand_queen[4].max())


def test_constant_metric_gives_king_one_through_ties():
    cand = np.full((1, 3, 5), 0.5)
    refs = np.full((1, 5, 5), 0.5)
    seg = king_segment(cand, refs)
    assert seg.king == 1.0 and seg.ties == 5
    assert (seg.ref_queen == 1.0).all() and (seg.cand_queen == 1.0).all()


def test_king_over_segments_skips_and_counts():
    rng = np.random.default_rng(25)
    segments = [
        (rng.random((2, 3, 5)), rng.random((2, 5, 5))),
        (rng.random((2, 3, 3)), rng.random((2, 3, 3))),  # 3 references: too few for KING
        (np.zeros((2, 0, 6)), np.zeros((2, 6, 6))),  # no candidate
        (rng.random((2, 1, 4)), rng.random((2, 4, 4))),  # one candidate is enough
        (CAND_REF_4[None].repeat(2, 0), REF_REF_4[None].repeat(2, 0)),
    ]
    res = king(segments)
    assert res.skipped == {1: "3 references; KING with triples='distinct' needs >= 4", 2: "no candidates"}
    assert res.n_used == 3 and res.n_skipped == 2
    assert np.isnan(res.per_segment[[1, 2]]).all()
    expect = [king_segment_naive(*segments[i]) for i in (0, 3, 4)]
    assert res.per_segment[[0, 3, 4]].tolist() == expect
    assert res.value == pytest.approx(np.mean(expect))
    assert res.per_segment[4] == 0.25 and res.ties >= 1
    empty = king(segments[1:3])
    assert np.isnan(empty.value) and empty.n_used == 0
    assert king(segments, triples="pair-distinct").skipped == {2: "no candidates"}


def test_king_over_many_stacked_segments_equals_its_definition():
    rng = np.random.default_rng(28)
    shapes = [(3, 4), (2, 5), (3, 18)] * 8  # 4 and 5 references are stacked; 18 go through the bitsets
    segments = [(rng.integers(0, 3, (2, a, n)) / 2, rng.integers(0, 3, (2, n, n)) / 2) for a, n in shapes]
    res = king(segments)
    for i, (cand, refs) in enumerate(segments):
        if refs.shape[-1] <= 5:
            assert res.per_segment[i] == king_segment_naive(cand, refs)
        else:  # the definition is slow at 18 references: check against the single-segment path
            assert res.per_segment[i] == king_segment(cand, refs).king
            assert np.array_equal(res.segments[i].ref_queen, king_segment(cand, refs).ref_queen)


def test_king_estimator_with_capped_references():
    rng = np.random.default_rng(26)
    segments = [(rng.random((2, 4, n)), rng.random((2, n, n))) for n in (30, 5, 40)]
    exact = king(segments)
    est = king(segments, max_refs=12, seed=7)
    assert est.sampled == [0, 2]
    assert est.per_segment[1] == exact.per_segment[1]  # 5 references: nothing to sample
    assert len(est.segments[0].references) == 12 and est.segments[1].references is None
    again = king(segments, max_refs=12, seed=7)
    assert np.array_equal(est.per_segment, again.per_segment)
    # the estimate is KING on the sampled references, exactly
    keep = est.segments[2].references
    cand, refs = segments[2]
    assert est.per_segment[2] == king_segment(cand[..., keep], refs[:, keep[:, None], keep]).king
    with pytest.raises(OptionError, match="max_refs"):
        king(segments, max_refs=3)


def test_king_bad_input():
    cand = np.stack([CAND_REF_4, CAND_REF_4])
    refs = np.stack([REF_REF_4, REF_REF_4])
    cand[0, 1, 0] = np.nan
    with pytest.raises(InputError, match="segment 0: metric 'ter' has NaN"):
        king([(cand, refs)], metric_names=["ter", "bleu"])
    with pytest.raises(InputError, match="at least 4 references, got 3"):
        king_segment(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(InputError, match="at least one automatic candidate"):
        king_segment(np.zeros((0, 4)), REF_REF_4)
    with pytest.raises(OptionError):
        king([], triples="all")


def test_orange_ranks_equal_scipy_rankdata():
    rng = np.random.default_rng(27)
    ref = rng.integers(0, 4, 6) / 3
    cand = rng.integers(0, 4, (6, 5)) / 3
    for ties, method in (("average", "average"), ("optimistic", "min"), ("pessimistic", "max")):
        expect = [rankdata(-np.concatenate(([ref[r]], cand[r])), method=method)[0] for r in range(6)]
        assert reference_ranks(ref, cand, ties).tolist() == expect


def test_orange_over_segments_skips_and_rejects_bad_input():
    res = orange([np.array([0.5, 0.2]), np.array([]), np.array([0.3])],
                 [np.array([[0.4, 0.6], [0.1, 0.1]]), np.zeros((0, 2)), np.zeros((1, 0))])
    # segment 0: r0 (.5) has .6 above it -> rank 2; r1 (.2) is above both .1 -> rank 1; (2 + 1) / 2 / 3 = .5
    assert res.ranks[0].tolist() == [2.0, 1.0]
    assert res.per_segment[0] == 1.5 / 3
    assert res.skipped == {1: "no references", 2: "no candidates"}
    assert res.value == 0.5 and res.n_used == 1
    with pytest.raises(InputError, match="segment 0: cand_scores must have shape"):
        orange([np.array([0.5, 0.2])], [np.zeros((3, 2))])
    with pytest.raises(InputError, match="segment 0: ORANGE scores contain NaN"):
        orange([np.array([np.nan])], [np.zeros((1, 2))])
    with pytest.raises(OptionError):
        orange([np.array([0.5])], [np.zeros((1, 2))], ties="random")
    with pytest.raises(InputError, match="2 segments"):
        orange([np.array([0.5]), np.array([0.5])], [np.zeros((1, 2))])
    with pytest.raises(OptionError):
        leave_one_out_scores(CAND_REF_4, REF_REF_4, reduce="min")
    with pytest.raises(InputError):
        leave_one_out_scores(CAND_REF_4[:, :1], REF_REF_4[:1, :1])


def test_king_and_orange_on_real_dstc7_scores(data):
    from combo.io.dstc7 import read_dstc7

    tb = read_dstc7(data / "dstc7")
    systems = [s for s in tb.systems if s != "Human"]
    ids = [i for i, seg in enumerate(tb.segments)
           if 4 <= len(seg.references) <= 8 and all(i in tb.candidates[s] for s in systems)][:30]
    segments = dstc7_arrays(tb, ids, ["chrf", "rouge-l"], systems)
    res = king(segments)
    assert res.n_used == 30
    for (cand, refs), value in zip(segments, res.per_segment):
        assert value == king_segment_naive(cand, refs)
    # ORANGE of QUEEN from the same leave-one-out scores, against scipy's ranks
    o = orange([s.ref_queen for s in res.segments], [s.cand_queen for s in res.segments])
    for seg, ranks in zip(res.segments, o.ranks):
        expect = [rankdata(-np.concatenate(([seg.ref_queen[r]], seg.cand_queen[r])))[0]
                  for r in range(len(seg.ref_queen))]
        assert ranks.tolist() == expect
    # the held-out reference and QUEEN over the rest: QUEEN of the candidates is QUEEN on R - {r}
    cand, refs = segments[0]
    rest = np.arange(1, refs.shape[1])
    assert np.array_equal(res.segments[0].cand_queen[0], queen(cand[..., rest], refs[:, rest[:, None], rest]))


def test_king_tie_rules_on_a_metric_that_ties_everything():
    # One constant metric: every QUEEN is equal, so every held-out reference ties with the best candidate.
    # KING counts a tie as human-like (>=, the paper): 1; half credit: 1/2; strict (>): 0.
    from combo.errors import OptionError
    from combo.meta.likeness import king

    cand, refs = np.zeros((1, 3, 5)), np.zeros((1, 5, 5))
    assert king([(cand, refs)]).value == 1.0
    assert king([(cand, refs)], ties="half").value == 0.5
    assert king([(cand, refs)], ties="strict").value == 0.0
    assert king([(cand, refs)]).ties == 5
    with pytest.raises(OptionError):
        king([(cand, refs)], ties="maybe")
