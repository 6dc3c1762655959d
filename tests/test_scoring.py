"""Scoring a test bed: one analysis per metric, segment and system scores equal the metric's own API."""

import numpy as np
import pytest

import combo
from combo.scoring import score_testbed
from combo.testbed import Segment, Testbed


def _small_testbed():
    tb = Testbed(name="toy", segments=[
        Segment("s1", "der Hund", ["the dog barks", "a dog is barking"]),
        Segment("s2", "die Katze", ["the cat sleeps"]),
        Segment("s3", "", ["it rains today", "today it is raining", "rain today"]),
    ])
    tb.add_system("A", ["the dog barks loudly", "the cat sleeps", "it rains today"])
    tb.add_system("B", ["dog", "a cat is sleeping", ""])
    tb.add_system("C", {0: "a dog is barking", 2: "today rain"})  # covers two segments only
    return tb


def test_scores_equal_metric_api_per_system_and_segment():
    tb = _small_testbed()
    table = score_testbed(tb, ["bleu", "bleu:max_order=2"])
    refs = tb.references()
    for m, spec in enumerate(["bleu", "bleu:max_order=2"]):
        metric = combo.get_metric(spec)
        for s, name in enumerate(tb.systems):
            idx = sorted(tb.candidates[name])
            hyps = [tb.candidates[name][i] for i in idx]
            rr = [refs[i] for i in idx]
            assert table.system[m, s] == pytest.approx(metric.corpus_score(hyps, rr), abs=1e-12)
            rows = np.flatnonzero(table.row_system == s)
            np.testing.assert_allclose(table.segment[m, rows], metric.segment_scores(hyps, rr), atol=1e-12)
    assert table.signatures[1].startswith("bleu|n:2")
    assert len(table.to_records("segment")) == 8


def test_parallel_jobs_give_identical_tables():
    tb = _small_testbed()
    a = score_testbed(tb, ["bleu", "bleu:smooth=floor"], jobs=1)
    b = score_testbed(tb, ["bleu", "bleu:smooth=floor"], jobs=2)
    np.testing.assert_array_equal(a.segment, b.segment)
    np.testing.assert_array_equal(a.system, b.system)


def test_weighted_references_reach_delta_bleu():
    tb = _small_testbed()
    tb.segments[0].weights = [1.0, 0.5]
    tb.validate()
    table = score_testbed(tb, ["bleu"], systems=["A"])
    metric = combo.get_metric("bleu")
    want = metric.corpus_score(list(tb.candidates["A"].values()), tb.references(), tb.reference_weights())
    assert table.system[0, 0] == pytest.approx(want)


def test_score_table_save_load_and_dataframe(tmp_path):
    tb = _small_testbed()
    table = score_testbed(tb, ["bleu", "bleu:max_order=2"])
    table.save(tmp_path / "t.npz")
    back = type(table).load(tmp_path / "t.npz")
    np.testing.assert_array_equal(back.segment, table.segment)
    np.testing.assert_array_equal(back.system, table.system)
    assert back.metrics == table.metrics and back.signatures == table.signatures
    assert back.to_records("segment") == table.to_records("segment")


def test_score_table_to_dataframe():
    pd = pytest.importorskip("pandas")
    table = score_testbed(_small_testbed(), ["bleu", "bleu:max_order=2"])
    frame = table.to_dataframe("segment")
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["system", "segment", "bleu",
                                                                        "bleu:max_order=2"]
    assert len(frame) == 8


def test_one_scoring_run_resolves_jobs_once(monkeypatch):
    """--jobs is resolved at the edge of a run (combo.parallel.resolve_jobs) and handed on: the steps of a scoring
    run with two workers (its tasks, the shared layers, the pool) read the resolved Jobs and never resolve again."""
    from combo import parallel

    resolved = []
    real = parallel.resolve_jobs

    def counting(jobs):
        if not isinstance(jobs, parallel.Jobs):
            resolved.append(jobs)
        return real(jobs)

    monkeypatch.setattr(parallel, "resolve_jobs", counting)
    tb = _small_testbed()
    table = score_testbed(tb, ["bleu", "chrf", "ter", "sp-op"], jobs=2)
    assert resolved == [2]
    one = score_testbed(tb, ["bleu", "chrf", "ter", "sp-op"], jobs=1)
    np.testing.assert_array_equal(table.segment, one.segment)
    assert parallel.resolve_jobs(parallel.Jobs(-1, 8)).processes == 8  # a resolved Jobs is handed on as it is
    with pytest.raises(combo.OptionError, match="jobs=0 must be a positive number"):
        parallel.resolve_jobs(0)


def test_one_execution_per_run_reaches_scoring_and_the_evaluator(monkeypatch):
    """jobs, the memory budget and progress become one Execution at a run's edge (combo.parallel.resolve_execution);
    scoring, the evaluator and KING take it whole, and resolve nothing again."""
    from combo import parallel
    from combo.prepare import MetaOptions

    run = parallel.resolve_execution(2, "1G", progress=False)
    assert (run.jobs.processes, run.budget.bytes, run.progress) == (2, 1024 ** 3, False)
    assert parallel.resolve_execution(run) is run
    with pytest.raises(combo.OptionError, match="not beside it"):
        parallel.resolve_execution(run, memory="2G")
    made = []
    real = parallel.resolve_jobs
    monkeypatch.setattr(parallel, "resolve_jobs", lambda jobs: made.append(jobs) or real(jobs))  # Jobs: handed on
    meta = MetaOptions(jobs=2, memory="1G")
    tb = _small_testbed()
    table = score_testbed(tb, ["bleu", "chrf"], jobs=meta.execution())
    evaluator = meta.evaluator(tb, table, None)
    assert evaluator.execution is meta.execution() and evaluator.budget.bytes == 1024 ** 3
    # MetaOptions.execution() resolved 2 once; scoring, its pool and the evaluator took it whole (the pool reads the
    # resolved Jobs it is given)
    assert [j for j in made if not isinstance(j, parallel.Jobs)] == [2]
