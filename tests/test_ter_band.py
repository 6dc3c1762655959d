"""TER's shift search skips sacreBLEU's beam where it provably changes nothing: long pairs, near the beam's
edge, against sacreBLEU 2.6.0's own function."""

import random

import numpy as np
import pytest

from combo.metrics.lexical import ter_alignment

lib_ter = pytest.importorskip("sacrebleu.metrics.lib_ter")


def _long_pairs(seed: int, n: int):
    """References of 60-130 words; hypotheses with far block moves, substitutions, insertions and deletions,
    so that edit distances come close to the cost of leaving the beam."""
    rng = random.Random(seed)
    hyps, refs = [], []
    for _ in range(n):
        vocab = rng.choice([6, 20, 200])
        ref = [rng.randrange(vocab) for _ in range(rng.randint(60, 130))]
        hyp = list(ref)
        for _ in range(rng.randint(1, 4)):
            a = rng.randrange(len(hyp))
            block = hyp[a:a + rng.randint(1, 12)]
            del hyp[a:a + len(block)]
            b = rng.randrange(len(hyp) + 1)
            hyp[b:b] = block
        for _ in range(rng.randint(5, 40)):
            k = rng.random()
            if k < 0.4:
                hyp[rng.randrange(len(hyp))] = rng.randrange(vocab + 5)
            elif k < 0.7 and len(hyp) > 1:
                del hyp[rng.randrange(len(hyp))]
            else:
                hyp.insert(rng.randrange(len(hyp) + 1), rng.randrange(vocab))
        hyps.append(hyp)
        refs.append(ref)
    return hyps, refs


@pytest.fixture(scope="module")
def long_pairs():
    """(hypotheses, references, sacreBLEU's edit counts) of twelve long pairs, for both engines: sacreBLEU takes
    about 4 s over them."""
    hyps, refs = _long_pairs(0, 12)
    theirs = [lib_ter.translation_edit_rate([str(w) for w in h], [str(w) for w in r])[0]
              for h, r in zip(hyps, refs)]
    return hyps, refs, theirs


def test_band_relaxation_equals_sacrebleu_on_long_pairs(monkeypatch, long_pairs):
    hyps, refs, theirs = long_pairs
    seen = {"near band": 0, "candidates rerun": 0}
    search_round, candidate_distances = ter_alignment._search_round, ter_alignment.candidate_distances

    def counting_round(*args):
        out = search_round(*args)
        seen["near band"] += int(out[-1].sum())
        return out

    def counting_candidates(*args):
        if args[7]:  # banded
            seen["candidates rerun"] += len(args[-4])
        return candidate_distances(*args)

    monkeypatch.setattr(ter_alignment, "_search_round", counting_round)
    monkeypatch.setattr(ter_alignment, "candidate_distances", counting_candidates)
    ours = ter_alignment.shift_edit_counts([np.array(h, dtype=np.int64) for h in hyps],
                                           [np.array(r, dtype=np.int64) for r in refs], engine="numpy")
    np.testing.assert_array_equal(ours, theirs)
    assert seen["near band"] > 0 and seen["candidates rerun"] > 0  # both banded reruns were exercised


@pytest.mark.skipif(ter_alignment._compiled is None, reason="the C search was not built")
def test_compiled_search_equals_sacrebleu_on_long_pairs(long_pairs):
    # The compiled search always keeps the band; these pairs of 60-130 words come close to its edge (the numpy
    # search's banded reruns above show it).
    hyps, refs, theirs = long_pairs
    ours = ter_alignment.shift_edit_counts([np.array(h, dtype=np.int64) for h in hyps],
                                           [np.array(r, dtype=np.int64) for r in refs], engine="c")
    np.testing.assert_array_equal(ours, theirs)
