"""meta/'s pure KING and QUEEN against the runner (combo.meta_run): the same result to the bit, whatever the chunks."""

import numpy as np
import pytest

from combo.budget import Budget
from combo.errors import OptionError
from combo.meta import likeness, queen
from combo import meta_run


def _segments(seed=3, sizes=(4, 5, 3, 9, 17, 20, 4, 30, 6)):
    rng = np.random.default_rng(seed)
    segs = [(rng.integers(0, 6, (2, 3, n)).astype(float), rng.integers(0, 6, (2, n, n)).astype(float)) for n in sizes]
    return segs + [(np.zeros((2, 0, 5)), np.zeros((2, 5, 5)))]  # no candidates: skipped


def _same(a, b):
    assert repr(a.per_segment.tolist()) == repr(b.per_segment.tolist())
    assert repr((a.value, a.stderr)) == repr((b.value, b.stderr))
    assert (a.skipped, a.sampled, a.estimated) == (b.skipped, b.sampled, b.estimated)
    for x, y in zip(a.segments, b.segments):
        assert (x is None) == (y is None)
        if x is not None:
            assert np.array_equal(x.cand_queen, y.cand_queen) and np.array_equal(x.ref_queen, y.ref_queen)
            assert repr(x.references) == repr(y.references) and repr(x.held_out) == repr(y.held_out)


def test_meta_chunk_sizes_are_those_of_the_default_budget():
    assert queen.SEGMENT_CHUNK_BYTES == Budget().segment_bytes()
    assert queen.BITSET_CHUNK_WORDS == Budget().bitset_words()


@pytest.mark.parametrize("options", [{}, {"held_out": 3, "seed": 5}, {"max_refs": 6, "seed": 2}, {"ties": "half"},
                                     {"triples": "pair-distinct"},
                                     {"segment_population": 40, "held_out": 4, "seed": 1}])
def test_pure_king_equals_the_runner_however_it_is_cut(monkeypatch, options):
    segs = _segments()
    pure = likeness.king(segs, **options)
    _same(pure, meta_run.king(segs, **options))
    _same(pure, likeness.king(segs, chunk_bytes=1, max_words=1 << 16, **options))  # one segment a chunk
    monkeypatch.setattr(meta_run, "PARALLEL_MIN_SECONDS", 0.0)  # to the workers, in small chunks
    _same(pure, meta_run.king(segs, jobs=2, memory=256 * 1024, **options))


def test_the_plan_chunks_and_merge_are_the_whole_of_king():
    segs = _segments()
    plan = likeness.king_plan(segs, held_out=3, seed=5)
    assert 2 not in plan.draws and 9 not in plan.draws and plan.result.skipped[9] == "no candidates"
    chunks = plan.chunks(segs, 1)
    assert [i for c in chunks for i in c] == sorted(plan.draws)
    options = plan.options + (queen.BITSET_CHUNK_WORDS,)
    results = [likeness.king_chunk(segs, c, plan.draws, options) for c in reversed(chunks)]  # any order
    _same(likeness.king_merge(plan, results), likeness.king(segs, held_out=3, seed=5))


def test_the_runner_refuses_a_budget_too_small_before_counting(monkeypatch):
    counted = []
    monkeypatch.setattr(meta_run, "king_chunk", lambda *task: counted.append(task) or [])
    with pytest.raises(OptionError, match=r"too small for one segment of KING.*\(segment 7\)"):
        meta_run.king(_segments(), memory="96K")
    assert counted == []
    with pytest.raises(OptionError, match="not a size"):
        meta_run.king(_segments(), memory="lots")
    with pytest.raises(OptionError, match="ties="):  # the options first, as before the budget
        meta_run.king(_segments(), ties="maybe", memory="lots")


def test_queen_segments_runner_equals_the_pure_function():
    segs = _segments()
    pure = queen.queen_segments(segs, max_refs=5, seed=3)
    for run in (meta_run.queen_segments(segs, max_refs=5, seed=3, memory="1M"),
                queen.queen_segments(segs, max_refs=5, seed=3, chunk_bytes=1, max_words=1 << 16)):
        assert repr([None if v is None else v.tolist() for v in run.values]) == \
            repr([None if v is None else v.tolist() for v in pure.values])
        assert (run.skipped, run.sampled) == (pure.skipped, pure.sampled)
