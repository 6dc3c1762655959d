"""Bounded memory and parallel work: budgets, chunked scoring, held-out KING, worker processes."""

import gc
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from combo.budget import Budget, parse_memory
from combo.cli import main
from combo.meta.queen import _bitset_loo_counts, leave_one_out_counts, prepare_segment
from combo.errors import OptionError
from combo.meta_run import king
from combo.parallel import run_tasks
from combo.scoring import reference_scores, score_testbed, score_with_references
from combo.testbed import Segment, Testbed


def _segment(rng, n_ref, n_cand=3, m=2, levels=6):
    """Scores on a coarse grid, so ties (the hard case for exact counts) are frequent."""
    cand = rng.integers(0, levels, size=(m, n_cand, n_ref)).astype(float)
    refs = rng.integers(0, levels, size=(m, n_ref, n_ref)).astype(float)
    return cand, refs


def test_parse_memory_sizes_and_refusals():
    assert parse_memory("2G") == 2 * 1024 ** 3 == parse_memory(None)
    assert parse_memory("500M") == 500 * 1024 ** 2
    assert parse_memory("1.5GB") == int(1.5 * 1024 ** 3)
    for bad in ("lots", "-1G", "0", "2X"):
        with pytest.raises(OptionError):
            parse_memory(bad)


def test_held_out_counts_equal_the_exact_counts_of_those_references():
    rng = np.random.default_rng(1)
    for triples in ("distinct", "pair-distinct", "independent"):
        cand, refs = prepare_segment(*_segment(rng, 21), triples)
        exact_cand, exact_ref = _bitset_loo_counts(cand, refs, triples)
        sample = np.array([0, 7, 20])
        got_cand, got_ref = _bitset_loo_counts(cand, refs, triples, held_out=sample)
        assert np.array_equal(got_cand, exact_cand)
        assert np.array_equal(got_ref[sample], exact_ref[sample])
        assert (np.delete(got_ref, sample) == -1).all()


def test_held_out_king_is_unbiased_over_every_sample():
    # The mean of the held-out estimate over all C(n, 2) samples of one segment equals the exact KING.
    rng = np.random.default_rng(2)
    seg = _segment(rng, 18, n_cand=2, m=1, levels=4)
    exact = king([seg]).value
    cand, refs = prepare_segment(*seg)
    cand_counts, ref_counts = leave_one_out_counts(cand, refs)
    credits = (ref_counts >= cand_counts.max(axis=1)).astype(float)
    pairs = [(i, j) for i in range(18) for j in range(i + 1, 18)]
    assert np.mean([credits[[i, j]].mean() for i, j in pairs]) == pytest.approx(exact, abs=1e-12)
    assert 0 < exact < 1
    est = king([seg], held_out=8, seed=3)
    assert est.estimated == [0] and est.stderr > 0
    low, high = est.interval()
    assert low < est.value < high


def test_king_of_a_segment_sample_is_unbiased_over_every_sample_and_exact_with_every_segment():
    # The mean of the estimate over all C(6, 3) segment samples equals the KING of all six segments; with the
    # population equal to the segments counted, nothing is estimated and the standard error is 0.
    from itertools import combinations

    rng = np.random.default_rng(7)
    segs = [_segment(rng, n, levels=4) for n in (4, 5, 6, 7, 8, 9)]
    whole = king(segs)
    assert whole.exact and whole.stderr == 0.0
    estimates = [king([segs[i] for i in keep], segment_population=6) for keep in combinations(range(6), 3)]
    assert np.mean([e.value for e in estimates]) == pytest.approx(whole.value, abs=1e-12)
    assert all(not e.exact and e.segment_sample and e.stderr > 0 for e in estimates)
    assert king(segs, segment_population=6).exact
    with pytest.raises(OptionError, match="smaller than"):
        king(segs, segment_population=5)


def test_two_stage_standard_error_matches_the_spread_of_the_estimate():
    # Two-stage sampling simulated on a fixed population of 40 segments (credits 0/1 of 10-60 references):
    # the estimator's mean is the population mean and its variance estimator's mean is its true variance.
    from combo.meta.likeness import two_stage_stderr

    rng = np.random.default_rng(11)
    sizes = rng.integers(10, 60, 40)
    credits = np.zeros((40, 60))
    for i, (size, p) in enumerate(zip(sizes, rng.random(40))):
        credits[i, :size] = rng.random(size) < p
    truth = np.mean([credits[i, :size].mean() for i, size in enumerate(sizes)])
    n, s, draws = 12, 6, 6000
    chosen = np.argsort(rng.random((draws, 40)), axis=1)[:, :n]  # segments without replacement, per draw
    keys = rng.random((draws, n, 60))
    keys[np.arange(60) >= sizes[chosen][..., None]] = np.inf  # only a segment's own references can be drawn
    held = credits[chosen[..., None], np.argsort(keys, axis=2)[:, :, :s]]  # (draws, n, s) held-out credits
    means = held.mean(axis=2)
    within = (1 - s / sizes[chosen]) * held.var(axis=2, ddof=1) / s
    values = means.mean(axis=1)
    variances = np.array([two_stage_stderr(m, w, 40) ** 2 for m, w in zip(means, within)])
    assert values.mean() == pytest.approx(truth, abs=4 * values.std() / np.sqrt(draws))
    assert variances.mean() == pytest.approx(values.var(), rel=0.08)
    assert two_stage_stderr(np.array([0.5, 0.25]), np.array([0.01, 0.04]), 2) == pytest.approx(np.sqrt(0.05) / 2)


def test_sample_segments_is_seeded_and_recorded():
    tb = Testbed(name="t", segments=[Segment(id=str(i), source="", references=["a"]) for i in range(30)])
    a, b, c = tb.sample_segments(10, seed=1), tb.sample_segments(10, seed=1), tb.sample_segments(10, seed=2)
    assert [s.id for s in a.segments] == [s.id for s in b.segments] != [s.id for s in c.segments]
    assert a.metadata["segment_sample"]["population"] == 30 and len(a.segments) == 10
    assert "segment_sample" not in a.subset([0, 1]).metadata  # a subset of a sample is no sample of the 30
    assert tb.sample_segments(30) is tb and "segment_sample" not in tb.metadata
    with pytest.raises(OptionError):
        tb.sample_segments(0)


def test_king_is_the_same_whatever_the_budget_jobs_and_sampling_seed_order(monkeypatch):
    import combo.meta_run as meta_run

    monkeypatch.setattr(meta_run, "PARALLEL_MIN_SECONDS", 0.0)  # these small segments go to the workers all the same
    rng = np.random.default_rng(4)
    segs = [_segment(rng, n) for n in (4, 5, 5, 9, 17, 20, 4, 30)]
    base = king(segs)
    small = king(segs, memory=256 * 1024)  # several chunks
    assert base.value == small.value and np.array_equal(base.per_segment, small.per_segment)
    forked = king(segs, jobs=2)
    assert np.array_equal(base.per_segment, forked.per_segment)
    a, b = king(segs, held_out=3, seed=5), king(segs, held_out=3, seed=5, jobs=2, memory=256 * 1024)
    assert a.estimated == b.estimated == [4, 5, 7]  # only segments above 16 references are sampled
    assert np.array_equal(a.per_segment, b.per_segment) and a.stderr == b.stderr
    assert king(segs, held_out=30).estimated == []  # a sample as large as the segment is the exact count
    assert king(segs, held_out=30).value == base.value


def test_king_work_of_under_a_second_is_counted_without_workers(monkeypatch):
    import combo.meta_run as meta_run
    import combo.parallel as parallel

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(parallel, "_run_pool", no_pool)
    rng = np.random.default_rng(4)
    segs = [_segment(rng, n) for n in (4, 5, 9)]
    assert np.array_equal(king(segs, jobs=2).per_segment, king(segs).per_segment)
    monkeypatch.setattr(meta_run, "PARALLEL_MIN_SECONDS", 0.0)
    with pytest.raises(AssertionError, match="pool was started"):
        king(segs, jobs=2)


def test_a_budget_too_small_for_one_segment_is_one_clear_error():
    rng = np.random.default_rng(6)
    with pytest.raises(OptionError, match=r"too small for one segment of KING.*raise --memory"):
        king([_segment(rng, 40)], memory="64K")


def _testbed(ref, systems, n=150, extra_refs=0):
    names = sorted(systems)[:4]
    segments = []
    for i in range(n):
        refs = [ref[i]] + [systems[names[(k + 1) % len(names)]][i] + " ." for k in range(extra_refs)]
        segments.append(Segment(id=str(i), source="", references=refs))
    candidates = {s: {i: systems[s][i] for i in range(n)} for s in names}
    return Testbed(name="wmt12-slice", segments=segments, candidates=candidates)


def test_chunked_scoring_equals_one_call(wmt12_de_en):
    ref, systems = wmt12_de_en
    tb = _testbed(ref, systems, n=520)  # 2,080 rows: three chunks (1,024, 1,024, 32) under a tiny budget
    metrics = ["bleu", "chrf", "ter", "wer", "rouge-l", "gtm", "meteor", "nist", "cider"]
    whole = score_testbed(tb, metrics)
    chunked = score_testbed(tb, metrics, memory="1K")
    assert np.array_equal(whole.segment, chunked.segment)
    assert np.array_equal(whole.system, chunked.system)
    parallel = score_testbed(tb, metrics, memory="1K", jobs=2)  # chunks finish out of order in two workers
    assert np.array_equal(whole.segment, parallel.segment)
    assert np.array_equal(whole.system, parallel.system)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("spec", ["sp-op", "sp-oc", "cp-stm", "cp-tk-sst", "cp-tk-st", "cp-tk-ptk", "dp-hwcm",
                                  "dp-or", "dp-tk", "ted", "emb-avg", "emb-greedy", "emb-extrema"])
def test_parser_and_embedding_metrics_score_chunks_of_rows_as_one_call(spec, wmt12_de_en):
    """Each chunk analysed alone (its own texts, label and production ids, word types; its analyses dropped
    with it) gives the statistics of one call to the last bit, in whatever order the chunks finish (real
    WMT12 de-en rows)."""
    from combo.analysis.layers import analysis_memo
    from combo.metrics.base import Rows
    from combo.scoring import metrics_for
    from combo.scoring.run import _rows_of
    from combo.scoring.tasks import RowChunk, _RowAssembly, _score_metric, _score_row_chunk

    ref, systems = wmt12_de_en
    n = 15 if spec == "ted" else 60  # four systems: 4n rows (the tree edit distance is the costly one)
    tb = _testbed(ref, systems, n=n)
    metric = metrics_for(tb, [spec])[0]
    hyps, refs, _, row_system, _ = _rows_of(tb, sorted(tb.candidates))
    rows = Rows.build(hyps, refs, None)
    cuts = [0, n + n // 3, 3 * n, 4 * n]  # unequal chunks
    with analysis_memo() as memo:
        assembly = _RowAssembly(metric, row_system, 4)
        for k in (2, 0, 1):  # finished out of order
            chunk = RowChunk.cut(rows, cuts[k], cuts[k + 1])
            assembly.add(chunk, *_score_row_chunk(metric, chunk))
        assert not any(memo.analyses.values()) and not any(memo.derived.values())  # dropped with each chunk
        whole = _score_metric(metric, rows.texts, rows, row_system, 4)["rows"]
    seg, sysv = assembly.result()
    assert metric.locality == "row"
    assert np.array_equal(seg, whole[0]) and np.array_equal(sysv, whole[1])


@pytest.mark.parametrize("spec", ["nist", "nist:multi_ref=nltk", "cider", "cider:document_frequency=rows",
                                  "sp-nist", "sp-nist:over=chunk"])
def test_reference_weighted_metrics_score_chunks_of_rows_as_one_call(spec, wmt12_de_en):
    """NIST's information weights and CIDEr's document frequencies count over every reference of the call: a
    chunk scored by the metric bound to the whole call's counts (``bound_to``) gives one call's statistics
    to the last bit, with three references a segment, in whatever order the chunks finish; scored alone, a
    chunk would weigh its n-grams by its own references."""
    from combo.metrics.base import Rows
    from combo.scoring import metrics_for
    from combo.scoring.run import _rows_of
    from combo.scoring.tasks import RowChunk, _RowAssembly, _score_metric, _score_row_chunk

    ref, systems = wmt12_de_en
    n = 150
    tb = _testbed(ref, systems, n=n, extra_refs=2)
    metric = metrics_for(tb, [spec])[0]
    hyps, refs, _, row_system, _ = _rows_of(tb, sorted(tb.candidates))
    rows = Rows.build(hyps, refs, None)
    whole = _score_metric(metric, rows.texts, rows, row_system, 4)["rows"]
    bound = metric.bound_to(rows)
    cuts = [0, n // 3, n + 7, 3 * n, 4 * n]  # unequal chunks; the first holds part of one system's segments
    assembly = _RowAssembly(bound, row_system, 4)
    for k in (3, 1, 0, 2):
        chunk = RowChunk.cut(rows, cuts[k], cuts[k + 1])
        assembly.add(chunk, *_score_row_chunk(bound, chunk))
    seg, sysv = assembly.result()
    assert metric.locality == "references"
    assert np.array_equal(seg, whole[0]) and np.array_equal(sysv, whole[1])
    alone = RowChunk.cut(rows, 0, n // 3)
    assert not np.array_equal(_score_row_chunk(metric, alone)[0], whole[0][:n // 3])


def test_corpus_counts_made_in_slices_by_workers_give_one_calls_scores(monkeypatch, wmt12_de_en):
    """Under a small budget the corpus-wide counts are made a slice of references at a time, here in two
    worker processes, and merged as they come: the scores still equal one call's to the last bit."""
    import combo.parallel as parallel
    import combo.scoring.run as run

    ref, systems = wmt12_de_en
    tb = _testbed(ref, systems, n=2600, extra_refs=1)  # 2,600 reference sets of two, 10,400 rows
    metrics = ["nist", "cider:document_frequency=rows"]
    whole = score_testbed(tb, metrics)
    monkeypatch.setattr(run, "PARALLEL_COUNT_MIN_TEXTS", 1)  # read by run._bound_to_references
    counted = []
    real = parallel.run_tasks

    def run_tasks(func, calls, jobs=1, progress=False, desc="tasks", **kwargs):
        if desc == "reference counts":
            counted.append((len(calls), jobs))
        return real(func, calls, jobs, progress, desc, **kwargs)

    monkeypatch.setattr(parallel, "run_tasks", run_tasks)
    sliced = score_testbed(tb, metrics, memory="1K", jobs=2)
    assert counted == [(9, parallel.Jobs(2, 2))]  # --jobs resolved once; 1,024 groups a slice: NIST 5,198 distinct references (6), CIDEr 2,600 sets (3)
    assert np.array_equal(whole.segment, sliced.segment) and np.array_equal(whole.system, sliced.system)
    assert multiprocessing.active_children() == []


def test_costly_layers_are_annotated_once_in_parallel_with_the_same_scores(monkeypatch, tmp_path):
    import combo
    import combo.scoring.run as run
    import combo.scoring.tasks as tasks
    from combo.analysis import layers

    monkeypatch.setattr(run, "PARALLEL_ANNOTATION_MIN_TEXTS", 10)  # the example's 100 texts: split too
    calls = []
    real = run._annotate_in_parallel
    monkeypatch.setattr(run, "_annotate_in_parallel", lambda *a: calls.append(a[0]) or real(*a))
    tb = combo.load_testbed("example")
    metrics = ["sp-op", "cp-stm", "dp-hwcm", "bleu"]
    layers.set_cache_dir(None)  # no disk cache: the parallel annotation goes to this run's memo alone
    try:
        one = score_testbed(tb, metrics)
        assert calls == []
        two = score_testbed(tb, metrics, jobs=2)
    finally:
        layers._cache_dir_override = layers._UNSET
    assert sorted(calls) == ["dependencies", "shallow"]  # each layer once, whatever reads it
    assert np.array_equal(one.segment, two.segment) and np.array_equal(one.system, two.system)
    assert multiprocessing.active_children() == []
    # in chunks of 7 rows, still without a disk cache: the chunks are forked (not spawned) so they read the
    # parses this process stored, and each layer is annotated once again (a new run), the scores unchanged
    import combo.parallel as parallel

    # score_testbed (combo.scoring.run) looks _row_step up in its own module
    monkeypatch.setattr(run, "_row_step", lambda metric, *args: 7 if metric.locality == "row" else None)
    sent_by_metric, chunked_metrics, annotated = {}, set(), []
    real_run = parallel.run_tasks

    def run_tasks(func, calls_, *args, sent=None, **kwargs):
        for call, is_sent in zip(calls_, sent or ()):  # the metrics' tasks (not the parallel annotation's)
            task = tasks._task_of(call)
            assert isinstance(task, (tasks.MetricTask, tasks.ChunkTask)) and func is tasks._call_with_trees
            sent_by_metric.setdefault(task.metric.name, set()).add(is_sent)
            if isinstance(task, tasks.ChunkTask):
                chunked_metrics.add(task.metric.name)
        if func.__name__ == "annotate_texts":  # the layers' texts split among workers (desc, positional)
            annotated.append(args[2])
        return real_run(func, calls_, *args, sent=sent, **kwargs)

    monkeypatch.setattr(parallel, "run_tasks", run_tasks)
    calls.clear()
    layers.set_cache_dir(None)
    try:
        chunked = score_testbed(tb, metrics, jobs=2)
    finally:
        layers._cache_dir_override = layers._UNSET
    assert sent_by_metric == {"sp-op": {False}, "cp-stm": {False}, "dp-hwcm": {False}, "bleu": {True}}
    assert chunked_metrics == set(metrics)  # the patched _row_step cut every metric
    assert sorted(annotated) == ["dependencies analysis", "shallow analysis"]  # 100 texts, over the patched 10
    assert sorted(calls) == ["dependencies", "shallow"]
    assert np.array_equal(one.segment, chunked.segment) and np.array_equal(one.system, chunked.system)
    assert multiprocessing.active_children() == []


def test_metrics_without_costly_layers_run_while_the_parent_loads_the_first_annotator(monkeypatch):
    # jobs=2: BLEU's task runs first, while this process loads spaCy; then the layers, each loaded before its
    # workers fork (TextBlob while spaCy's workers parse); then the metrics that read them; the same scores
    import combo
    import combo.parallel as parallel
    import combo.scoring.run as run
    from combo.analysis import layers
    from combo.scoring import tasks

    monkeypatch.setattr(run, "PARALLEL_ANNOTATION_MIN_TEXTS", 10)
    stages = []
    real_run = parallel.run_tasks

    def run_tasks(func, calls, jobs=1, progress=False, desc="", *args, while_running=None, **kwargs):
        names = [tasks._task_of(c).metric.name for c in calls] if func is tasks._call_with_trees else desc
        stages.append((names, while_running is not None))
        return real_run(func, calls, jobs, progress, desc, *args, while_running=while_running, **kwargs)

    monkeypatch.setattr(parallel, "run_tasks", run_tasks)
    tb = combo.load_testbed("example")
    metrics = ["sp-op", "dp-hwcm", "bleu"]
    layers.set_cache_dir(None)
    try:
        one = score_testbed(tb, metrics)
        stages.clear()
        two = score_testbed(tb, metrics, jobs=2)
    finally:
        layers._cache_dir_override = layers._UNSET
    assert stages == [(["bleu"], True), ("dependencies analysis", True), ("shallow analysis", False),
                      (["sp-op", "dp-hwcm"], False)]
    assert np.array_equal(one.segment, two.segment) and np.array_equal(one.system, two.system)
    assert multiprocessing.active_children() == []


def test_the_command_line_scores_chunks_in_spawned_workers_with_the_same_result(tmp_path, wmt12_de_en):
    import subprocess
    import sys

    ref, systems = wmt12_de_en
    (tmp_path / "references").mkdir()
    (tmp_path / "systems").mkdir()
    (tmp_path / "references" / "ref.txt").write_text("\n".join(ref[:1500]) + "\n", encoding="utf-8")
    (tmp_path / "systems" / "onlineB.txt").write_text("\n".join(systems["onlineB"][:1500]) + "\n", encoding="utf-8")
    args = ["score", "--testbed", str(tmp_path), "-m", "bleu,chrf", "--level", "segment", "-q"]
    # two chunks of rows per metric: spawned workers (the command line may spawn; here spawning is asked for
    # whatever the process's size), against one job in here
    run = ("import sys, combo.parallel; combo.parallel.SPAWN_ABOVE_BYTES = 0; from combo.cli import main; "
           "main(sys.argv[1:])")
    proc = subprocess.run([sys.executable, "-c", run, *args, "-j", "2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    one = CliRunner().invoke(main, [*args, "-j", "1"])
    assert proc.stdout == one.stdout and len(one.stdout.splitlines()) == 1501


def test_workers_are_spawned_only_where_no_users_script_would_run_again(monkeypatch):
    """A spawned worker imports the main module again: safe for combo's own command line and for ``python -c``
    or a notebook (no file), never for a user's script, which may lack an ``if __name__ == "__main__":`` guard."""
    import sys
    import types

    from combo.parallel import _spawn_is_safe

    def main_module(file=None, spec=None, main=None):
        module = types.ModuleType("__main__")
        if file is not None:
            module.__file__ = file
        module.__spec__ = spec
        if main is not None:
            module.main = main
        return module

    def console_script():
        pass

    console_script.__module__ = "combo.cli"
    cases = [(main_module(file="/home/me/score_all.py"), False),  # a user's script
             (main_module(), True),  # python -c, a notebook, an interactive session
             (main_module(file="/x/combo/cli/__main__.py", spec=types.SimpleNamespace(name="combo.cli.__main__")),
              True),  # python -m combo.cli
             (main_module(file="/venv/bin/combo", main=console_script), True)]  # the console script
    for module, safe in cases:
        monkeypatch.setitem(sys.modules, "__main__", module)
        assert _spawn_is_safe() is safe, (getattr(module, "__file__", None), safe)


def test_workers_are_spawned_only_for_a_large_process_whose_tasks_are_all_sent(monkeypatch):
    import combo.parallel as parallel

    monkeypatch.setattr(parallel, "_spawn_is_safe", lambda: True)
    monkeypatch.setattr(parallel, "_resident_bytes", lambda: parallel.SPAWN_ABOVE_BYTES + 1)
    assert parallel._start_method([True, True]) == "spawn"
    assert parallel._start_method([True, False]) == "fork" and parallel._start_method(None) == "fork"
    monkeypatch.setattr(parallel, "_resident_bytes", lambda: parallel.SPAWN_ABOVE_BYTES // 2)
    assert parallel._start_method([True, True]) == "fork"  # a small process: forking copies little, starts at once
    monkeypatch.undo()
    assert 10 * 2 ** 20 < parallel._resident_bytes() < 2 ** 40  # this process, measured


def test_chunked_reference_pairs_equal_one_call(wmt12_de_en):
    ref, systems = wmt12_de_en
    tb = _testbed(ref, systems, n=120, extra_refs=3)
    metrics = ["bleu", "chrf", "rouge-l", "gtm", "meteor", "cider", "nist"]
    table, whole = score_with_references(tb, metrics)
    _, chunked = score_with_references(tb, metrics, memory="1K")
    assert np.array_equal(whole.ref_ref_values, chunked.ref_ref_values)
    assert np.array_equal(whole.cand_ref_values, chunked.cand_ref_values)
    separate = reference_scores(tb, table, metrics, memory="1K", jobs=2)
    assert np.array_equal(separate.ref_ref_values, whole.ref_ref_values)


@pytest.mark.parametrize("spec", ["nist", "nist:multi_ref=nltk", "cider", "cider:document_frequency=rows",
                                  "sp-nist"])
def test_reference_weighted_pairs_score_in_chunks_as_one_call(spec, wmt12_de_en):
    """QUEEN's and KING's reference pairs of NIST, SP-NIST and CIDEr-D are cut into chunks like the other
    metrics' (DSTC7's millions of pairs): each chunk reads the counts over every pair's reference, so the
    chunks give one call's scores to the last bit; a chunk scored alone would weigh by its own references."""
    from combo.scoring import metrics_for
    from combo.scoring.tasks import _score_metric

    ref, systems = wmt12_de_en
    n = 80
    texts = ref[:n] + systems["onlineA"][:n] + systems["onlineB"][:n] + systems["uedin-wmt12"][:n]
    group = [[i + k * n for k in range(4)] for i in range(n)]  # a segment's four "references"
    left = np.array([a for g in group for a in g for b in g if a != b], dtype=np.int64)
    right = np.array([b for g in group for a in g for b in g if a != b], dtype=np.int64)
    metric = metrics_for(_testbed(ref, systems, n=n), [spec], pairs=True)[0]
    assert metric.locality == "references"
    none = np.zeros(0, dtype=np.int64)
    whole = _score_metric(metric, texts, None, none, 0, pairs=(left, right))["pairs"][0]
    chunked = _score_metric(metric, texts, None, none, 0, pairs=(left, right), chunk=100)["pairs"][0]
    assert len(left) == 960 and np.array_equal(chunked, whole)
    alone = metric.pairwise_scores(texts, left[:100], right[:100])
    assert not np.array_equal(alone, whole[:100])


def _square(x):
    return x * x


def test_parallel_tasks_keep_order_and_leave_no_worker():
    seen = {}
    out = run_tasks(_square, [(i,) for i in range(7)], jobs=2, weights=list(range(7)), on_result=seen.__setitem__)
    assert out == [i * i for i in range(7)] and seen == dict(enumerate(out))
    assert multiprocessing.active_children() == []


def test_evaluate_bootstraps_its_entries_in_workers_with_the_same_draws():
    # each entry's quality and bootstrap interval is one task; two workers give one process's output exactly
    args = ["evaluate", "-q", "--testbed", "example", "-m", "chrf", "-m", "bleu", "-m", "rouge-l", "--criteria",
            "r_snt,pearson,king", "--combine", "ulc,queen", "--bootstrap", "300", "--format", "json"]
    one, two = (CliRunner().invoke(main, args + ["-j", str(j)]) for j in (1, 2))
    assert one.exit_code == 0 and two.exit_code == 0, (one.output, two.output)
    assert two.stdout == one.stdout and '"low"' in one.stdout
    assert multiprocessing.active_children() == []


def _pid_after(seconds):
    import time

    time.sleep(seconds)
    return os.getpid()


def test_next_task_keeps_a_worker_on_its_group():
    from combo.parallel import _next_task

    groups = ["m", "m", "t", "t", "b"]
    pending = [0, 2, 1, 3, 4]  # largest first
    assert _next_task(pending, groups, "t", {"m"}) == 2  # the worker's own group first
    assert _next_task(pending, groups, "x", {"m"}) == 3  # else a group no other worker runs
    assert _next_task(pending, groups, None, {"m", "t"}) == 4
    assert _next_task(pending, groups, None, {"m", "b"}) == 0  # else the largest
    assert pending == [1]


def test_the_chunks_of_one_metric_run_in_one_worker_with_groups():
    # a metric's chunks share a per-process set-up (METEOR loads WordNet and looks up its words); with groups
    # the worker that took a group's first task takes its next ones while the other worker is busy (the first
    # task lasts long enough for both workers to have started and taken one task each)
    tasks = [(0.5,), (0.05,), (0.05,), (1.5,), (1.5,)]
    groups = ["a", "a", "a", "b", "b"]
    pids = run_tasks(_pid_after, tasks, jobs=2, weights=[3, 3, 3, 1, 1], groups=groups)
    assert len(set(pids[:3])) == 1 and pids[3] != pids[0]
    assert multiprocessing.active_children() == []


def test_work_while_the_workers_run_does_not_hold_their_tasks_back():
    # the parent loads the next annotator while its workers run: on a thread, so tasks are still handed out
    # (with groups a task is submitted only when one finishes), and run_tasks returns once it is done
    import threading

    three_done = threading.Event()
    seen, finished = {}, []

    def load():
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        seen["tasks_went_on"] = three_done.wait(timeout=120)

    def on_result(i, r):
        finished.append(i)
        if len(finished) == 3:
            three_done.set()

    out = run_tasks(_square, [(i,) for i in range(5)], jobs=2, groups=list("aabbc"), on_result=on_result,
                    while_running=load)
    assert out == [0, 1, 4, 9, 16] and seen == {"thread": True, "tasks_went_on": True}
    assert multiprocessing.active_children() == []


def _no_model():
    raise OSError("no model here")


def test_an_error_of_the_work_while_the_workers_run_is_raised_after_them():
    with pytest.raises(OSError, match="no model here"):
        run_tasks(_square, [(1,), (2,)], jobs=2, while_running=_no_model)
    assert multiprocessing.active_children() == []


def _die(x):
    os._exit(3)


def test_a_worker_that_dies_is_one_clear_error():
    from combo.parallel import BackendError

    with pytest.raises(BackendError, match="worker process died"):
        run_tasks(_die, [(1,), (2,)], jobs=2)
    assert multiprocessing.active_children() == []


def test_the_fix_a_king_memory_refusal_offers_works():
    # the --memory it asks for holds the segment (rounded up, not to the nearest), and a --max-refs cap is
    # offered only when one of at least the fewest references fits the budget given
    import re

    from combo.budget import Budget, segment_need

    for n_ref, n_metrics in [(5, 1), (5, 4), (12, 37), (3, 2), (40, 9)]:
        budget = Budget(segment_need(n_ref, n_metrics) - 1)
        with pytest.raises(OptionError) as refused:
            budget.check_segment(n_ref, n_metrics, fewest_refs=3)
        asked = re.search(r"at least ([0-9.]+) ([KMG]B)", str(refused.value))
        Budget.of(asked.group(1) + asked.group(2)).check_segment(n_ref, n_metrics)
        cap = re.search(r"--max-refs (\d+)", str(refused.value))
        if cap:
            assert 3 <= int(cap.group(1)) < n_ref
            budget.check_segment(int(cap.group(1)), n_metrics)
        else:
            assert segment_need(3, n_metrics) > budget.bytes


def test_the_memory_a_search_refusal_asks_for_holds_the_whole_search():
    # the single metrics fit in less than the pairs: the fix the first refusal offers covers the search's
    # largest set (both metrics), so following it once is enough; so is the --max-refs cap a later one offers
    import re

    args = ["search", "-q", "--testbed", "example", "-m", "chrf", "bleu", "--criterion", "king", "--bootstrap", "0"]
    refused = CliRunner().invoke(main, args + ["--memory", "1K"])
    assert refused.exit_code == 2 and "1 metrics" in refused.output, refused.output
    asked = re.search(r"at least ([0-9.]+) ([KMG]B)", refused.output)
    assert CliRunner().invoke(main, args + ["--memory", asked.group(1) + asked.group(2)]).exit_code == 0
    refused = CliRunner().invoke(main, args + ["--memory", "5.5K"])
    cap = re.search(r"--max-refs (\d+)", refused.output)
    assert refused.exit_code == 2 and "2 metrics" in refused.output and cap, refused.output
    assert CliRunner().invoke(main, args + ["--memory", "5.5K", "--max-refs", cap.group(1)]).exit_code == 0


def test_cli_memory_budget_too_small_exits_2_with_one_line(tmp_path):
    out = tmp_path / "out.json"
    res = CliRunner().invoke(main, ["search", "-q", "--testbed", "example", "-m", "chrf", "--memory", "1K",
                                    "--format", "json", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "too small for one segment" in res.output and len(res.output.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_king_sample_reports_an_estimate(tmp_path):
    res = CliRunner().invoke(main, ["evaluate", "-q", "--testbed", "example", "-m", "chrf", "-m", "bleu",
                                    "--criteria", "king", "--combine", "queen", "--king-sample", "2",
                                    "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert "king" in res.output


def test_cli_king_segments_scores_a_sample_and_reports_the_estimate():
    res = CliRunner().invoke(main, ["search", "-q", "--testbed", "example", "-m", "chrf", "-m", "bleu",
                                    "--king-segments", "10", "--format", "json"])
    assert res.exit_code == 0, res.output
    import json
    doc = json.loads(res.output)
    assert doc["segments"] == 10 and doc["randomness"]["king_segments"] == 10
    est = doc["estimate"]
    assert est["low"] < doc["quality"] < est["high"] and "a sample of 10 of 24 segments" in est["note"]
    table = CliRunner().invoke(main, ["search", "-q", "--testbed", "example", "-m", "chrf", "--king-segments", "10"])
    assert "an estimate: 95% sampling interval" in table.output
    bad = CliRunner().invoke(main, ["search", "-q", "--testbed", "example", "-m", "chrf", "--king-segments", "10",
                                    "--criterion", "wmt_kendall"])
    assert bad.exit_code == 2 and "--king-segments samples segments for KING" in bad.output


def test_budget_shares():
    b = Budget.of("2G")
    assert b.pair_chunk() >= 1024 and b.segment_bytes() == 2 * 1024 ** 3 // 4
    assert Budget.of(b) is b


def _reference_sets_by_dict(ref_ptr, ref_ids):
    """The definition: number each distinct tuple of reference ids in order of its first row."""
    keys, row_set, set_ptr, set_ids = {}, [], [0], []
    for r in range(len(ref_ptr) - 1):
        key = tuple(ref_ids[ref_ptr[r]:ref_ptr[r + 1]].tolist())
        if key not in keys:
            keys[key] = len(keys)
            set_ids.extend(key)
            set_ptr.append(len(set_ids))
        row_set.append(keys[key])
    return row_set, set_ptr, set_ids


def test_vectorised_reference_sets_equal_the_definition():
    from combo.analysis.ngrams import reference_sets

    rng = np.random.default_rng(7)
    for _ in range(200):
        sizes = rng.integers(0, 4, size=rng.integers(0, 30))
        ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        ids = rng.integers(0, 4, size=ptr[-1])
        got = reference_sets(ptr, ids)
        for a, b in zip(got, _reference_sets_by_dict(ptr, ids)):
            assert np.array_equal(a, np.asarray(b, dtype=np.int64))


def test_ter_refuses_a_10_mb_line_at_once():
    import time

    from combo.errors import InputError
    from combo.metrics.registry import get_metric

    line = "word " * (2 * 1024 * 1024)  # 10 MB, 2 million words
    ter = get_metric("ter")
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"row 0 has a text of 2,097,152 words.*split long lines"):
        ter.statistics(ter.analyse([line, "a short reference"]), [0], [0, 1], [1])
    assert time.perf_counter() - start < 30


def test_metrics_sharing_an_analysis_are_one_group_and_others_their_own():
    from combo.metrics.registry import get_metric
    from combo.scoring.plan import _affinity

    kernels = [get_metric(name) for name in ("cp-tk-sst", "cp-tk-st", "cp-tk-ptk", "sp-op")]
    assert {_affinity(m) for m in kernels} == {("layers", "shallow")}
    assert _affinity(get_metric("dp-tk")) == ("layers", "dependencies")
    assert _affinity(get_metric("emb-avg")) == _affinity(get_metric("emb-extrema")) == ("resources", "glove-6b-50d")
    assert _affinity(get_metric("bleu")) is None


@pytest.fixture
def frozen_heap():
    """What the test process holds before the test is left out of its garbage collections (gc.freeze), and back in
    them after: the test calls combo.parallel._release_memory, whose full collection walks the whole process, about
    a second each here once the suite has loaded its models and data. Nothing of the test's own is frozen; it runs
    no pool (combo.parallel unfreezes after each)."""
    gc.freeze()
    yield
    gc.unfreeze()


def test_a_worker_goes_on_with_the_memo_of_its_groups_task_before_and_drops_it_otherwise(monkeypatch, frozen_heap):
    from combo.analysis import layers
    from combo.metrics.base import Rows
    from combo.metrics.registry import get_metric
    from combo.scoring import tasks as scoring_tasks
    from combo.scoring.tasks import ChunkTask, MetricTask, RowChunk, _kept_memo

    monkeypatch.setattr(scoring_tasks, "_KEPT", None)
    rows = np.zeros(0, dtype=np.int64)
    texts, other_texts = ["a b"], ["a b"]

    def memo_of(task):
        with _kept_memo(task):
            return layers._MEMO.get()

    def metric_task(name, over=texts):
        return MetricTask(get_metric(name), over, None, rows, 1)

    with layers.analysis_memo() as run:
        first = memo_of(metric_task("cp-tk-sst"))
        assert first.parent is run
        assert memo_of(metric_task("cp-tk-ptk")) is first  # same texts, same affinity: the memo goes on
        assert memo_of(metric_task("cp-tk-ptk", other_texts)) is not first  # equal texts, another list: new
        dependent = memo_of(metric_task("dp-tk", other_texts))
        assert memo_of(metric_task("bleu", other_texts)) is not dependent  # no affinity: a memo of its own
        assert scoring_tasks._KEPT is None
        chunk = RowChunk.cut(Rows.build(["a b"], [["a b"]]), 0, 1)
        memo_of(metric_task("cp-tk-sst"))
        memo_of(ChunkTask(get_metric("cp-tk-sst"), chunk))
        assert scoring_tasks._KEPT is None  # a chunk of rows is never kept, and drops the memo before it
    with pytest.raises(ValueError, match="within the run"):
        with layers.analysis_memo():
            with layers.task_memo(first):
                pass


def test_two_workers_sharing_analyses_between_tasks_give_one_process_scores(monkeypatch, tmp_path, wmt12_de_en):
    # the three constituent kernels read one chunk tree per text: a worker builds it once for the tasks of the
    # group it runs one after another (at most once per worker, so fewer than three times per text)
    from combo.analysis import layers
    from combo.metrics import constituent

    built = tmp_path / "built"
    chunk_tree = constituent.from_chunks

    def counted(*args):
        with open(built, "a") as out:
            out.write("x")
        return chunk_tree(*args)

    ref, systems = wmt12_de_en
    tb = _testbed(ref, systems, n=60)
    names = ["cp-tk-sst", "cp-tk-st", "cp-tk-ptk", "sp-op", "dp-tk", "dp-or", "emb-avg", "emb-extrema", "bleu"]
    layers.set_cache_dir(tmp_path / "cache")
    try:
        one = score_testbed(tb, names)
        monkeypatch.setattr(constituent, "from_chunks", counted)
        two = score_testbed(tb, names, jobs=2)
    finally:
        layers._cache_dir_override = layers._UNSET
    assert np.array_equal(one.segment, two.segment) and np.array_equal(one.system, two.system)
    distinct = len({t for _, _, t in tb.rows()} | {r for s in tb.segments for r in s.references})
    assert distinct <= len(built.read_text()) <= 2 * distinct


def test_a_pool_worker_trims_its_heap_only_when_much_of_it_is_free(monkeypatch, frozen_heap):
    import combo.parallel as parallel

    calls = []

    class FakeGlibc:
        def malloc_trim(self, pad):
            calls.append(("trim", pad))

        def mallopt(self, option, value):
            calls.append(("mallopt", option, value))

    monkeypatch.setattr(parallel, "_glibc", lambda: FakeGlibc())
    free = [parallel.POOL_FREE_HEAP]
    monkeypatch.setattr(parallel, "_free_heap", lambda: free[0])
    parallel._release_memory()
    assert calls == []  # no more free than it keeps
    free[0] += 1
    parallel._release_memory()
    assert calls == [("trim", 0)]
    calls.clear()
    parallel._keep_free_heap()  # M_MMAP_THRESHOLD (-3) at half of it, M_TRIM_THRESHOLD (-1) at it
    assert calls == [("mallopt", -3, parallel.POOL_FREE_HEAP // 2), ("mallopt", -1, parallel.POOL_FREE_HEAP)]
    monkeypatch.setattr(parallel, "_glibc", lambda: None)  # musl, macOS: nothing to call
    parallel._release_memory()
    parallel._keep_free_heap()
    assert calls[2:] == []


def test_the_free_heap_is_read_from_glibc():
    import combo.parallel as parallel

    if parallel._glibc() is None or parallel._mallinfo2() is None:
        pytest.skip("not glibc 2.33 or newer")
    # 20,000 blocks of 1,001 bytes (malloc's, not Python's small-object allocator) freed below blocks still
    # held, so glibc cannot give them back at the heap's top: the free heap grows by about their 20 MB (in a
    # fresh interpreter, whose heap no earlier test has fragmented)
    code = ("import combo.parallel as p\n"
            "blocks = [bytes(1000) + bytes([k % 256]) for k in range(20000)]\n"
            "held = [bytes(1000) + b'x' for _ in range(10)]\n"
            "before = p._free_heap()\n"
            "del blocks\n"
            "print(p._free_heap() - before)\n")
    grown = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 19_000_000 < grown < 24_000_000, grown
