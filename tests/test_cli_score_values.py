"""``combo score`` prints each metric's own values in its own column: against the API and sacreBLEU."""

import csv
import io

import pytest
from click.testing import CliRunner

import combo
from combo.cli import main

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402

SPECS = ["bleu", "chrf", "ter"]


def _rows(args):
    res = CliRunner().invoke(main, ["score", "--testbed", "example", *[a for s in SPECS for a in ("-m", s)], "-q",
                                    *args])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stdout.splitlines() if not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t"))


def test_system_scores_are_the_apis_and_sacrebleus():
    tb = combo.load_testbed("example")
    rows = {r["system"]: r for r in _rows([])}
    assert sorted(rows) == sorted(tb.systems)
    refs = [seg.references for seg in tb.segments]
    streams = [list(r) for r in zip(*refs)]  # sacreBLEU's layout: one stream per reference
    peers = {"bleu": BLEU(), "chrf": CHRF(), "ter": TER()}
    for system in tb.systems:
        hyps = [tb.candidates[system][i] for i in range(len(tb.segments))]
        for spec in SPECS:
            printed = float(rows[system][spec])
            assert printed == pytest.approx(combo.get_metric(spec).corpus_score(hyps, refs), abs=5e-7), (system, spec)
            assert printed == pytest.approx(peers[spec].corpus_score(hyps, streams).score / 100, abs=5e-7), (system,
                                                                                                           spec)


def test_segment_scores_are_the_apis():
    tb = combo.load_testbed("example")
    rows = _rows(["--level", "segment"])
    ids = [seg.id for seg in tb.segments]
    for spec in SPECS:
        metric = combo.get_metric(spec)
        for system in tb.systems:
            hyps = [tb.candidates[system][i] for i in range(len(ids))]
            want = dict(zip(ids, metric.segment_scores(hyps, [seg.references for seg in tb.segments])))
            got = {r["segment"]: float(r[spec]) for r in rows if r["system"] == system}
            assert got == pytest.approx(want, abs=5e-7), (system, spec)
