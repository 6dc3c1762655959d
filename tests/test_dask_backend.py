"""The Dask backend: a LocalCluster on loopback with two workers gives the local run's results exactly."""

import numpy as np
import pytest
from click.testing import CliRunner

from combo import parallel
from combo.cli import main
from combo.meta_run import king
from combo.parallel import BackendError, config
from combo.scoring import score_with_references

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402 (installed with distributed)


@pytest.fixture(scope="module")
def cluster():
    # A task whose worker dies fails at once (KilledWorker), not after three more workers are started and die.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                                     processes=True) as c:
        yield c
    config(backend="local")


@pytest.fixture
def on_dask(cluster):
    import combo

    combo.config(backend="dask", scheduler=cluster.scheduler_address)
    yield cluster.scheduler_address
    config(backend="local")


def _example():
    from combo.cli.options import load_testbed

    return load_testbed("example")


def test_scoring_and_reference_scores_equal_the_local_run(on_dask):
    tb = _example()
    metrics = ["bleu", "chrf", "ter", "rouge-l"]
    remote = score_with_references(tb, metrics, jobs=2)
    config(backend="local")
    local = score_with_references(tb, metrics)
    assert np.array_equal(remote[0].segment, local[0].segment)
    assert np.array_equal(remote[0].system, local[0].system)
    assert np.array_equal(remote[1].ref_ref_values, local[1].ref_ref_values)


def test_king_chunks_equal_the_local_run(on_dask):
    rng = np.random.default_rng(0)
    segs = [(rng.integers(0, 5, (2, 3, n)).astype(float), rng.integers(0, 5, (2, n, n)).astype(float))
            for n in (4, 6, 20, 25, 5)]
    remote = king(segs, jobs=2, held_out=4, seed=1, memory="256K")
    config(backend="local")
    local = king(segs, held_out=4, seed=1)
    assert np.array_equal(remote.per_segment, local.per_segment) and remote.stderr == local.stderr


def test_cli_commands_on_dask_equal_local(cluster):
    runner = CliRunner()
    for args in (["score", "--testbed", "example", "-m", "bleu,chrf", "--level", "segment", "-q"],
                 ["search", "--testbed", "example", "-m", "chrf", "-m", "bleu", "-m", "rouge-l", "-q",
                  "--format", "json", "-j", "2"],
                 ["evaluate", "--testbed", "example", "-m", "chrf", "-m", "bleu", "--criteria", "king,r_snt",
                  "--combine", "queen", "--bootstrap", "50", "-q", "-j", "2"]):
        local = runner.invoke(main, args)
        remote = runner.invoke(main, args + ["--backend", "dask", "--scheduler", cluster.scheduler_address])
        assert local.exit_code == 0 and remote.exit_code == 0, (local.output, remote.output)
        assert remote.stdout == local.stdout


def test_unreachable_scheduler_is_one_line_exit_2(monkeypatch):
    monkeypatch.setattr(parallel._config, "timeout", 1.0)  # seconds of retrying before the error
    res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu,chrf", "-q", "--backend", "dask",
                                    "--scheduler", "tcp://127.0.0.1:9"])
    assert res.exit_code == 2
    assert "cannot reach the Dask scheduler" in res.output and len(res.output.strip().splitlines()) == 1


def test_dask_without_a_scheduler_is_refused():
    res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu", "-q", "--backend", "dask"])
    assert res.exit_code == 2 and "needs a scheduler address" in res.output


def test_a_worker_that_dies_is_one_clear_error(on_dask):
    from combo.parallel import run_tasks

    # One task: one worker dies (its nanny starts a new one, a process start the test does not need twice).
    with pytest.raises(BackendError, match="worker died"):
        run_tasks(_die, [(1,)], jobs=2)


def _die(x):
    import os

    os._exit(3)


class _Counted:
    """An argument that counts how often it is pickled in this process."""

    pickled = 0

    def __getstate__(self):
        type(self).pickled += 1
        return {}


def _with_shared(shared, i):
    return i * 2, parallel.in_worker(), parallel.workers_for(2), parallel.parallel_available(2)


def test_a_shared_argument_is_sent_once_and_tasks_run_alone(on_dask):
    shared = _Counted()
    out = parallel.run_tasks(_with_shared, [(shared, i) for i in range(6)], jobs=2)
    assert [r[0] for r in out] == [0, 2, 4, 6, 8, 10]
    assert _Counted.pickled == 1  # scattered once, not pickled into each of the six tasks
    # inside a Dask task: no pool of its own, nothing sent to the cluster
    assert all(r[1:] == (True, 1, False) for r in out)
    assert not parallel.in_worker() and parallel.parallel_available(1)  # this process: the cluster's client


def test_evaluate_bootstrap_on_dask_equals_local(on_dask):
    from combo.evaluate import MetaEvaluator, evaluate_entries
    from combo.scoring import score_testbed

    tb = _example()
    config(backend="local")
    table = score_testbed(tb, ["bleu", "chrf", "rouge-l"])
    local = evaluate_entries(MetaEvaluator(tb, table), ["r_snt", "pearson"], n_resamples=200, seed=3)
    config(backend="dask", scheduler=on_dask)
    remote = evaluate_entries(MetaEvaluator(tb, table, jobs=1), ["r_snt", "pearson"], n_resamples=200, seed=3)
    assert local[0] == remote[0]
    for c in ("r_snt", "pearson"):
        for a, b in zip(local[1][c], remote[1][c]):
            assert (a.value, a.low, a.high) == (b.value, b.low, b.high) and np.array_equal(a.samples, b.samples)


def test_an_address_that_answers_but_not_as_dask_is_one_line_exit_2(monkeypatch, tmp_path):
    # something else listening on the port: Dask read its bytes as a frame length and failed with a MemoryError
    # ("internal error", exit 1), then its half-made client waited 20 s to close; a malformed address likewise
    import socket
    import threading

    monkeypatch.setenv("COMBO_SCORE_CACHE", "off")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def answer():
        for _ in range(4):
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" * 64)
            conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        for address, said in ((f"tcp://127.0.0.1:{server.getsockname()[1]}", "answered, but not as a Dask scheduler"),
                              ("notanaddress", "is not a scheduler address")):
            res = CliRunner().invoke(main, ["score", "--testbed", "example", "-m", "bleu,chrf", "-q", "--backend",
                                            "dask", "--scheduler", address])
            assert res.exit_code == 2, res.output
            assert said in res.output and "Traceback" not in res.output
    finally:
        server.close()
        config(backend="local")
