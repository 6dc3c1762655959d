"""chrF, chrF++ and TER against sacreBLEU on the WMT12 into-English systems beyond de-en (cs, es, fr).

de-en is covered in depth by test_chrf.py and test_ter.py; this file extends the corpus-level oracle to
every other into-English system (33 more). TER uses the first 150 segments of each system, since
sacreBLEU's TER manages about 160 segments per second.
"""

import warnings

import pytest

pytestmark = pytest.mark.slow  # every cs/es/fr-en system: run with pytest -m slow

import combo

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import CHRF, TER  # noqa: E402

TER_SLICE = 150


def _other_pairs(wmt12_into_english):
    return [(pair, ref, systems) for pair, ref, systems in wmt12_into_english if pair != "de-en"]


@pytest.mark.parametrize("word_order", [0, 2])
def test_corpus_chrf_equals_sacrebleu_on_every_other_into_english_system(wmt12_into_english, word_order):
    ours = combo.get_metric("chrf", word_order=word_order)
    theirs = CHRF(word_order=word_order)
    checked = 0
    for _pair, ref, systems in _other_pairs(wmt12_into_english):
        refs = [[r] for r in ref]
        for hyps in systems.values():
            assert ours.corpus_score(hyps, refs) == pytest.approx(theirs.corpus_score(hyps, [ref]).score / 100,
                                                                  abs=1e-9)
            checked += 1
    assert checked == 6 + 12 + 15


def test_corpus_ter_equals_sacrebleu_on_every_other_into_english_system(wmt12_into_english):
    ours = combo.get_metric("ter")
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _pair, ref, systems in _other_pairs(wmt12_into_english):
            ref = ref[:TER_SLICE]
            for hyps in systems.values():
                hyps = hyps[:TER_SLICE]
                want = TER().corpus_score(hyps, [ref]).score / 100
                assert ours.corpus_score(hyps, [[r] for r in ref]) == pytest.approx(want, abs=1e-9)
                checked += 1
    assert checked == 33
