"""BLEU, chrF, chrF++ and TER against sacreBLEU on one system of each WMT12 into-English pair beyond de-en.

The default suite's peer check outside de-en (whose every system test_bleu.py, test_chrf.py and test_ter.py
cover): the first system of cs-en, es-en and fr-en, whole corpus for BLEU and chrF, the first 150 segments for
TER (sacreBLEU's TER manages about 160 segments a second). Every system: test_oracle_into_english.py (slow).
"""

import warnings

import pytest

import combo

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402


@pytest.fixture(scope="module")
def first_systems(wmt12_into_english):
    return [(pair, ref, sorted(systems.items())[0]) for pair, ref, systems in wmt12_into_english if pair != "de-en"]


def test_the_first_system_of_each_pair_equals_sacrebleu(first_systems):
    assert [pair for pair, _, _ in first_systems] == ["cs-en", "es-en", "fr-en"]
    for pair, ref, (system, hyps) in first_systems:
        refs = [[r] for r in ref]
        for spec, theirs in (("bleu", BLEU()), ("chrf", CHRF()), ("chrf++", CHRF(word_order=2))):
            want = theirs.corpus_score(hyps, [ref]).score / 100
            assert combo.get_metric(spec).corpus_score(hyps, refs) == pytest.approx(want, abs=1e-9), (pair, spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = TER().corpus_score(hyps[:150], [ref[:150]]).score / 100
        assert combo.get_metric("ter").corpus_score(hyps[:150], refs[:150]) == pytest.approx(want, abs=1e-9), pair
