"""Running combo's tasks on a Dask cluster (``pip install 'combo-eval[dask]'``).

:func:`combo.parallel.run_tasks` hands its task list here when the backend is
``"dask"``: each task is one ``client.submit``, and the results come back in
task order, so a Dask run gives the same numbers as a local one to the last
digit. What a task carries: a metric and the distinct texts it analyses
(scoring), a chunk's score arrays (KING), or a metric set or an entry and the
evaluator that measures it (search, and ``combo evaluate``'s bootstrap
draws). An argument that every task shares (the evaluator, the test bed's
trees supplied with ``--trees``) is scattered to the workers once instead of
being pickled into each task. A task runs alone on its worker: it sends
nothing of its own to the cluster. The analysis cache is per worker: a worker
that shares the disk cache folder (``COMBO_CACHE_DIR`` on a shared file
system) reuses analyses, otherwise it rebuilds them.

Errors are one line (:class:`combo.errors.BackendError`): a scheduler that
cannot be reached within the timeout, a worker that dies mid-run, or dask
missing.
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence

from .errors import BackendError, ComboError, ResourceMissing


def _client(cfg):
    try:
        from distributed import Client
    except ImportError:
        from .extras import install_hint

        raise ResourceMissing("dask.distributed", install_hint("dask")) from None
    error = _probe(cfg)
    if error is None:
        try:
            return Client(cfg.scheduler, timeout=cfg.timeout, set_as_default=False)
        except (OSError, TimeoutError) as err:
            error = err
    if isinstance(error, (OSError, TimeoutError)):
        raise BackendError(f"cannot reach the Dask scheduler at {cfg.scheduler} within {cfg.timeout:g} s "
                           f"({type(error).__name__}). Fix: start one (dask scheduler; dask worker ADDRESS) or "
                           "check --scheduler")
    what = ("is not a scheduler address" if isinstance(error, ValueError)
            else "answered, but not as a Dask scheduler")
    raise BackendError(f"{cfg.scheduler} {what} ({type(error).__name__}). Fix: check --scheduler (the scheduler's "
                       "address and port, e.g. tcp://host:8786)")


def _probe(cfg):
    """The error of one handshake with the scheduler's address (None if it answers as a Dask scheduler), in a
    thread of its own so that a running event loop (a notebook) is no obstacle. A ``Client`` that fails inside
    its constructor tries to close itself when collected and waits twice its timeout (20 s) doing so; and an
    address where something else answers made Dask read a garbage frame length and fail with a MemoryError."""
    import asyncio
    import threading

    from distributed.comm import connect

    found: list = [None]

    async def handshake():
        comm = await connect(cfg.scheduler, timeout=cfg.timeout)
        await comm.close()

    def run():
        try:
            asyncio.run(handshake())
        except Exception as err:  # noqa: BLE001 - any failure is reported as one line by the caller
            found[0] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join()
    return found[0]


def _call(func: Callable[..., Any], task: tuple):
    """``func(*task)`` on a worker (the task travels as one tuple, as it was built)."""
    return func(*task)


def _shared(tasks: Sequence[tuple]) -> dict:
    """The arguments that are one object in every task (a search's evaluator, a test bed's trees), by position:
    sent to the workers once instead of pickled into each task."""
    if len(tasks) < 2:
        return {}
    return {k: obj for k, obj in enumerate(tasks[0])
            if not isinstance(obj, (str, bytes, int, float, complex, bool, type(None)))
            and not callable(obj) and all(len(t) > k and t[k] is obj for t in tasks[1:])}


def run_on_dask(func: Callable[..., Any], tasks: Sequence[tuple], cfg, progress: bool = False,
                desc: str = "tasks") -> List[Any]:
    """``[func(*t) for t in tasks]`` on the cluster at ``cfg.scheduler`` (a :class:`combo.parallel.Config`), in task
    order."""
    client = _client(cfg)
    try:
        shared = {k: client.scatter([obj], broadcast=True, hash=False)[0] for k, obj in _shared(tasks).items()}
        tasks = [tuple(shared.get(k, x) for k, x in enumerate(t)) for t in tasks] if shared else tasks
        futures = [client.submit(_call, func, t, pure=False, retries=0) for t in tasks]
        bar = None
        if progress:
            from .progress import progress as reporter

            bar = reporter(len(futures), f"{desc} (dask)", unit="task")
        results: List[Any] = [None] * len(futures)
        for i, fut in enumerate(futures):  # in task order (all are already running on the cluster)
            try:
                results[i] = fut.result()
            except Exception as err:  # noqa: BLE001 - a ComboError raised by the task stays itself
                if isinstance(err, ComboError):
                    raise
                if type(err).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError",
                                          "CancelledError"):
                    raise BackendError(f"a Dask worker died while running {desc} ({type(err).__name__}); "
                                       "nothing was written. Fix: give the workers more memory (--memory "
                                       "lower, or dask worker --memory-limit higher) and run again") from None
                raise
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return results
    finally:
        client.close()
