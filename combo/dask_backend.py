"""Running combo's tasks on a Dask cluster (``pip install 'combo-eval[dask]'``).

:func:`combo.parallel.run_tasks` hands its task list here when the backend is
``"dask"``: each task (a metric to score, a chunk of KING segments) is one
``client.submit`` with pure arguments, and the results come back in task
order, so a Dask run gives the same numbers as a local one to the last digit.
What a task carries: the metric instance and the distinct texts it analyses
(scoring), or a chunk's score arrays (KING). The analysis cache is per worker:
a worker that shares the disk cache folder (``COMBO_CACHE_DIR`` on a shared
file system) reuses analyses, otherwise it rebuilds them. The test bed's
supplied trees (``--trees``) are an argument of each scoring task, so they
travel with it like the texts.

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
    try:
        return Client(cfg.scheduler, timeout=cfg.timeout, set_as_default=False)
    except (OSError, TimeoutError) as err:
        raise BackendError(f"cannot reach the Dask scheduler at {cfg.scheduler} within {cfg.timeout:g} s "
                           f"({type(err).__name__}). Fix: start one (dask scheduler; dask worker ADDRESS) or "
                           "check --scheduler") from None


def _call(func: Callable[..., Any], task: tuple):
    """``func(*task)`` on a worker (the task travels as one tuple, as it was built)."""
    return func(*task)


def run_on_dask(func: Callable[..., Any], tasks: Sequence[tuple], cfg, progress: bool = False,
                desc: str = "tasks") -> List[Any]:
    """``[func(*t) for t in tasks]`` on the cluster at ``cfg.scheduler`` (a :class:`combo.parallel.Config`), in task
    order."""
    client = _client(cfg)
    try:
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
