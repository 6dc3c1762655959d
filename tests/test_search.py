"""Metric-set search strategies on a known quality function, and the evaluator on the example test bed."""

import itertools

import pytest

import combo
from combo import example_path
from combo.combine.search import beam, exhaustive, forward_backward, greedy, search
from combo.errors import OptionError
from combo.evaluate import MetaEvaluator, search_metric_sets
from combo.scoring import reference_scores, score_testbed

# A quality with interactions: metrics 0..4; single qualities .5 .6 .4 .3 .2;
# the pair {2, 3} together is worth .9 (neither is first alone), {1} + anything else lowers it.
SINGLE = {0: .5, 1: .6, 2: .4, 3: .3, 4: .2}


def q(subset):
    s = set(subset)
    if s == {2, 3}:
        return .9
    if s == {2, 3, 4}:
        return .95
    if len(s) == 1:
        return SINGLE[next(iter(s))]
    return max(SINGLE[m] for m in s) - .05 * len(s)


def test_greedy_follows_the_paper():
    # rank singles: 1 (.6), 0 (.5), 2 (.4), 3 (.3), 4 (.2); start {1}; every addition lowers it.
    res = greedy(range(5), q)
    assert res.selected == [1] and res.quality == pytest.approx(.6)
    assert res.best_single == (1, .6)
    assert [step["kept"] for step in res.trace] == [True, False, False, False, False]


def test_exhaustive_finds_the_optimum_and_beam_can():
    res = exhaustive(list(range(5)), q)
    assert sorted(res.selected) == [2, 3, 4] and res.quality == pytest.approx(.95)
    assert res.evaluations == 2 ** 5 - 1
    assert max(q(s) for k in range(1, 6) for s in itertools.combinations(range(5), k)) == pytest.approx(.95)
    wide = beam(list(range(5)), q, width=10)
    assert sorted(wide.selected) == [2, 3, 4]


def test_forward_backward_stops_at_a_local_optimum():
    res = forward_backward(list(range(5)), q)
    assert res.selected == [1] and res.quality == pytest.approx(.6)


def test_exhaustive_refuses_more_than_twelve_and_unknown_strategy():
    with pytest.raises(OptionError, match="at most 12"):
        exhaustive(list(range(13)), lambda s: 0.0)
    with pytest.raises(OptionError, match="unknown strategy"):
        search([0], lambda s: 0.0, "annealing")


@pytest.mark.parametrize("strategy", ["greedy", "beam", "forward-backward", "exhaustive"])
def test_sets_asked_for_together_give_the_same_search(strategy):
    # many(subsets) is how a caller evaluates a step's independent sets in parallel: same result, same trace,
    # and no set asked for twice
    asked = []

    def many(subsets):
        asked.extend(subsets)
        return [q(s) for s in subsets]

    one, together = search(range(5), q, strategy), search(range(5), q, strategy, many=many)
    assert (together.selected, together.quality, together.trace, together.evaluations) == \
        (one.selected, one.quality, one.trace, one.evaluations)
    assert len(asked) == len(set(asked)) and len(asked) >= 5


@pytest.mark.parametrize("gain", [0.0, 1.0])
def test_greedy_evaluates_the_next_steps_together_and_counts_only_what_it_used(gain):
    # gain 0: no addition helps, so each pair of next steps is one parallel batch and nothing is wasted;
    # gain 1: every addition helps, so each guessed set is wasted, yet the trace and the count are unchanged
    def quality(s):
        return 1.0 + gain * len(s) - 0.01 * sum(s)

    batches = []

    def many(subsets):
        batches.append(len(subsets))
        return [quality(s) for s in subsets]

    one, together = search(range(7), quality, "greedy"), search(range(7), quality, "greedy", many=many)
    assert (together.selected, together.trace, together.evaluations) == (one.selected, one.trace, one.evaluations)
    assert one.evaluations == 7 + 6
    assert batches[0] == 7 and set(batches[1:]) == {2}
    assert len(batches) - 1 == (3 if gain == 0 else 5)


def test_a_search_with_two_jobs_equals_one_job():
    from combo.io import load_testbed

    tb = load_testbed(example_path())
    metrics = ["bleu", "chrf", "ter", "rouge-l"]
    table, refs = score_testbed(tb, metrics), None
    refs = reference_scores(tb, table, metrics)
    for criterion in ("king", "wmt_kendall"):
        a = search_metric_sets(MetaEvaluator(tb, table, refs), criterion).to_dict()
        b = search_metric_sets(MetaEvaluator(tb, table, refs, jobs=2), criterion).to_dict()
        assert a == b


def test_a_search_sends_sets_to_workers_only_when_one_takes_long_enough(monkeypatch):
    """One set is timed first: the example's sets take milliseconds, so two jobs evaluate them here (a batch sent to
    forked workers costs more than it saves); sets slower than PARALLEL_SET_MIN_SECONDS go to the workers, with
    the same search and the set timed first not evaluated again."""
    import combo.evaluate.search as evaluate
    import combo.parallel as parallel
    from combo.io import load_testbed

    tb = load_testbed(example_path())
    metrics = ["bleu", "chrf", "ter", "rouge-l"]
    table = score_testbed(tb, metrics)
    refs = reference_scores(tb, table, metrics)
    sent = []
    real = parallel.run_tasks

    def run_tasks(func, tasks, *args, **kwargs):
        if func is evaluate._subset_quality:
            sent.extend(tuple(t[1]) for t in tasks)
        return real(func, tasks, *args, **kwargs)

    monkeypatch.setattr(parallel, "run_tasks", run_tasks)
    one = search_metric_sets(MetaEvaluator(tb, table, refs), "king").to_dict()
    fast = search_metric_sets(MetaEvaluator(tb, table, refs, jobs=2), "king").to_dict()
    assert fast == one and sent == []
    monkeypatch.setattr(evaluate, "PARALLEL_SET_MIN_SECONDS", 0.0)
    slow = search_metric_sets(MetaEvaluator(tb, table, refs, jobs=2), "king").to_dict()
    assert slow == one and len(sent) >= 3 + 2 and (0,) not in sent and len(sent) == len(set(sent))


def test_nan_quality_ranks_last():
    res = greedy([0, 1], lambda s: float("nan") if s == (0,) else 0.1)
    assert res.selected == [1]


def test_evaluator_on_example_every_criterion_is_defined():
    tb = combo.load_testbed(example_path())
    metrics = ["bleu", "chrf", "rouge-l"]
    table = score_testbed(tb, metrics)
    ev = MetaEvaluator(tb, table, reference_scores(tb, table, metrics))
    for criterion in ("king", "orange", "r_snt", "wmt_kendall", "pearson", "spearman", "acc_eq"):
        qual = ev.quality([0, 1], criterion)
        assert qual.defined, criterion
        with_ci = ev.with_interval(qual, n_resamples=200)
        assert with_ci.low <= with_ci.value <= with_ci.high or criterion in ("pearson", "spearman")
    res = search_metric_sets(ev, "r_snt", strategy="exhaustive")
    best = max(ev.quality(list(s), "r_snt").value for k in (1, 2, 3) for s in itertools.combinations(range(3), k))
    assert res.quality == pytest.approx(best)
    with pytest.raises(OptionError, match="--scheme queen"):
        ev.quality([0], "king", "ulc")
