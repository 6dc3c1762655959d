"""Where independent tasks run: this process, worker processes, or a Dask cluster.

Scoring runs one task per metric or chunk of rows, KING one per chunk of
segments, search one per candidate metric set, and ``combo evaluate`` one per
entry and criterion (its quality and bootstrap draws). :func:`run_tasks` runs
a list of such tasks and returns their results in order, whatever the
backend, so results are identical to a serial run to the last digit (every
task is deterministic and nothing is reduced across workers in a different
order).

* ``jobs=1``: in this process, with a progress bar.
* ``jobs>1`` (local backend): a ``fork``-started process pool opened for the
  call and closed before it returns, so no worker outlives the command. The
  tasks are left in a module variable before the fork and each worker reads
  its task by index: nothing large is pickled on the way in (texts, analyses
  and supplied trees are shared copy-on-write; the parent's objects are
  frozen out of the workers' garbage collections so those pages stay shared),
  only results come back. Each
  worker's BLAS is limited to one thread so two workers do not fight over two
  cores.
* ``backend="dask"``: tasks go to the scheduler given by ``scheduler``
  (``combo.config(backend="dask", scheduler="tcp://host:8786")`` or
  ``--backend dask --scheduler ADDRESS``); see docs/scale.md.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

from .budget import Budget
from .errors import BackendError, OptionError

BACKENDS = ("local", "dask")
__all__ = ["BACKENDS", "BackendError", "Config", "Jobs", "config", "current", "on_cluster", "parallel_available",
           "reset", "resolve_jobs", "run_tasks", "workers_for", "Execution", "resolve_execution"]


@dataclass
class Config:
    """Process-wide execution settings (see :func:`config`)."""

    backend: str = "local"
    scheduler: Optional[str] = None  # Dask scheduler address, e.g. tcp://10.0.0.5:8786
    timeout: float = 10.0  # seconds to reach the scheduler


_config = Config()


def config(backend: Optional[str] = None, scheduler: Optional[str] = None, timeout: Optional[float] = None) -> Config:
    """Set (and return) where parallel work runs: ``config(backend="dask", scheduler="tcp://host:8786")``.

    ``backend="local"`` (default) runs ``jobs`` worker processes on this
    machine; ``"dask"`` sends every task to the Dask scheduler at ``scheduler``
    (``jobs`` is then ignored: the cluster's workers decide).
    """
    if backend is not None:
        if backend not in BACKENDS:
            raise OptionError(f"backend={backend!r} must be one of {list(BACKENDS)}")
        _config.backend = backend
    if scheduler is not None:
        _config.scheduler = scheduler
    if timeout is not None:
        _config.timeout = float(timeout)
    if _config.backend == "dask" and not _config.scheduler:
        raise OptionError("backend 'dask' needs a scheduler address (e.g. tcp://127.0.0.1:8786): "
                          "--scheduler ADDRESS or combo.config(backend='dask', scheduler=...)")
    return _config


def reset() -> Config:
    """Back to local processes and no scheduler (each command line starts here)."""
    _config.backend, _config.scheduler = "local", None
    return _config


def current() -> Config:
    return _config


_TASKS: Optional[Sequence[tuple]] = None
_FUNC: Optional[Callable[..., Any]] = None


#: True in a worker process of :func:`run_tasks`: a worker never starts a pool of its own (a search's metric
#: sets evaluated in workers run their KING counts in that worker).
_IN_WORKER = False


_TASK = threading.local()  # in a Dask worker's thread: the task it runs (a Dask worker may be this process)


def in_worker() -> bool:
    """Whether this runs inside a task of :func:`run_tasks`: in a worker process, or in a Dask task (which must not
    send tasks of its own to the cluster, nor start processes: the cluster is the parallelism)."""
    return _IN_WORKER or getattr(_TASK, "running", False)


def in_pool_worker() -> bool:
    """Whether this is a worker process of :func:`run_tasks`' local pool: one task at a time, and the process
    ends with the pool (unlike a Dask worker, which runs tasks of many runs on several threads)."""
    return _IN_WORKER


@contextmanager
def running_task():
    """Mark the current thread as running one task (a Dask worker's thread) for :func:`in_worker`."""
    before = getattr(_TASK, "running", False)
    _TASK.running = True
    try:
        yield
    finally:
        _TASK.running = before


def _init_worker() -> None:
    """A pool worker: one BLAS thread, one OpenMP thread for a runtime it loads later (the sentence encoder's
    PyTorch), no pools of its own, and a free heap kept between its tasks (:data:`POOL_FREE_HEAP`)."""
    global _IN_WORKER
    _IN_WORKER = True
    os.environ["OMP_NUM_THREADS"] = "1"
    _limit_threads()
    _keep_free_heap()
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):  # inherited from the parent: its pool is not here
        torch.set_num_threads(1)


def _limit_threads() -> None:
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass


def valid_jobs(jobs: Optional[int]) -> bool:
    """Whether ``jobs`` asks for processes: 1 or more, or -1 for one per core."""
    return jobs is not None and (jobs >= 1 or jobs == -1)


@dataclass(frozen=True)
class Jobs:
    """``jobs`` resolved once, at the edge of a run (:func:`resolve_jobs`): what was asked, and the processes it
    stands for on this machine (-1: one per core). Scoring, KING, search and evaluate hand it on where they took
    ``jobs``, so a run resolves it once. :attr:`workers` is read where a pool would start: 1 on Dask (whose workers
    are the cluster's) and inside a task (no pool inside a worker), else :attr:`processes`."""

    asked: int
    processes: int

    @property
    def workers(self) -> int:
        return 1 if _config.backend == "dask" or in_worker() else self.processes


def resolve_jobs(jobs) -> Jobs:
    """The one place ``jobs`` (an int, or a :class:`Jobs`, returned as it is) is resolved; an impossible ``jobs``
    is an OptionError."""
    if isinstance(jobs, Jobs):
        return jobs
    if not valid_jobs(jobs):
        raise OptionError(f"jobs={jobs!r} must be a positive number of processes (or -1: one per core)")
    return Jobs(jobs, (os.cpu_count() or 1) if jobs == -1 else jobs)


@dataclass(frozen=True)
class Execution:
    """What one run may use and show, resolved once at its edge (:func:`resolve_execution`): its worker
    processes (:class:`Jobs`), its memory budget (:class:`~combo.budget.Budget`) and whether it shows progress;
    where its parallel work runs is the process's :func:`current` backend (``--backend``, :func:`config`).
    Scoring, KING, search, evaluate and training take it where they took ``jobs``, ``memory`` and ``progress``,
    and hand it on whole."""

    jobs: Jobs
    budget: Budget
    progress: bool = False

    @property
    def workers(self) -> int:
        return self.jobs.workers

    @property
    def backend(self) -> Config:
        return _config


def resolve_execution(jobs=1, memory=None, progress: bool = False) -> Execution:
    """The one place a run's ``jobs`` (through :func:`resolve_jobs`), ``memory`` (a size such as ``"2G"``, or a
    :class:`~combo.budget.Budget`) and ``progress`` become its :class:`Execution`; an :class:`Execution` handed in
    as ``jobs`` (a run resolved at an outer edge) is returned as it is, and then ``memory`` and ``progress`` must
    be left at their defaults."""
    if isinstance(jobs, Execution):
        if memory is not None or progress:
            raise OptionError("give memory= and progress= to the Execution handed in as jobs=, not beside it")
        return jobs
    return Execution(resolve_jobs(jobs), Budget.of(memory), bool(progress))


def workers_for(jobs) -> int:
    """The worker processes ``jobs`` (an int, or a :class:`Jobs` resolved already) asks for on this backend
    (:attr:`Jobs.workers`)."""
    return resolve_jobs(jobs).workers


def on_cluster() -> bool:
    """Whether :func:`run_tasks` sends tasks to the Dask cluster from here (never from inside a task)."""
    return _config.backend == "dask" and not in_worker()


def parallel_available(jobs: int) -> bool:
    """Whether tasks given to :func:`run_tasks` with ``jobs`` run beside each other: on a Dask cluster, or in
    several local workers (never inside a worker)."""
    return on_cluster() or workers_for(jobs) > 1


def _as_task(func: Callable[..., Any], *args):
    """``func(*args)`` as one task on a Dask worker, which runs it alone: a task (a search's metric set) never
    sends tasks of its own to the cluster nor starts local processes."""
    with running_task():
        return func(*args)


def _spawn_is_safe() -> bool:
    """Whether spawned workers may be started here. A spawned worker imports this process's main module again,
    so a user's script without an ``if __name__ == "__main__":`` guard would run again in it (and a metric class
    defined there would need it); the command line (``combo``, ``python -m combo.cli``) and interactive
    sessions (a notebook, ``python -c``) have no such script. Elsewhere the workers are forked."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name.split(".")[0] == "combo":
        return True
    if getattr(main, "__file__", None) is None:
        return True
    return getattr(getattr(main, "main", None), "__module__", "") == "combo.cli"  # the console script


#: When every task is sent, a parent process smaller than this still forks its workers: a forked worker can copy
#: at most the parent's pages (WMT12 de-en's parent holds 100 MB), while a spawned one first spends about a
#: second importing combo. Above it (a million lines: over 1 GB) the workers are spawned (:func:`_run_pool`).
SPAWN_ABOVE_BYTES = 512 * 2 ** 20


def _resident_bytes() -> int:
    """This process's resident memory (its peak where /proc is not there)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _start_method(sent: Optional[Sequence[bool]]) -> str:
    """How the pool starts its workers: ``spawn`` (fresh interpreters sharing nothing) when every task is sent,
    spawning is safe here and this process is large enough for copied pages to matter; else ``fork``."""
    if sent is not None and all(sent) and _spawn_is_safe() and _resident_bytes() > SPAWN_ABOVE_BYTES:
        return "spawn"
    return "fork"


def _run_forked(index: int):
    return _released(_FUNC, *_TASKS[index])


def _released(func: Callable[..., Any], *args):
    """``func(*args)`` in a pool worker, then the memory the task freed handed back to the system: its cyclic
    garbage collected (trees with parent links are freed by the collector alone) and the C heap's free pages
    returned (glibc's ``malloc_trim``) once more than :data:`POOL_FREE_HEAP` is free. Otherwise a worker's
    resident memory only ratchets up from task to task: on 9,600 WMT12 candidates with ``@heterogeneous`` a
    metric worker held 770 MB before its largest task (the partial tree kernel, +243 MB), 270 MB of it left
    over from the tasks before."""
    try:
        return func(*args)
    finally:
        _release_memory()


#: Free heap a local pool worker keeps for its next task (glibc): allocations under half of it come from the heap
#: rather than from a mapping of their own, and the heap goes back to the system only when more than this is free.
#: Each task otherwise faulted its memory in afresh: on the warm 4,800-candidate slice the workers' page faults
#: went from 244,000 to 97,000, their system CPU from 0.5 s to 0.25 and the command's wall time by 0.1 s. A
#: worker holds at most this much beyond what its tasks use.
POOL_FREE_HEAP = 64 << 20


def _release_memory() -> None:
    gc.collect()
    libc = _glibc()
    if libc is not None and _free_heap() > POOL_FREE_HEAP:
        libc.malloc_trim(0)


def _keep_free_heap() -> None:
    """Set glibc's thresholds for :data:`POOL_FREE_HEAP` (``mallopt``: M_MMAP_THRESHOLD, M_TRIM_THRESHOLD)."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(-3, POOL_FREE_HEAP // 2)
        libc.mallopt(-1, POOL_FREE_HEAP)


def _free_heap() -> int:
    """Free bytes in glibc's main heap (``mallinfo2``); where it is missing (before glibc 2.33) more than
    :data:`POOL_FREE_HEAP`, so the heap is trimmed after every task."""
    mallinfo2 = _mallinfo2()
    return POOL_FREE_HEAP + 1 if mallinfo2 is None else int(mallinfo2().fordblks)


@functools.lru_cache(maxsize=1)
def _glibc():
    """glibc (``malloc_trim``, ``mallopt``), or None elsewhere (musl, macOS)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim, libc.mallopt  # noqa: B018 - both must exist
        return libc
    except (OSError, AttributeError):
        return None


@functools.lru_cache(maxsize=1)
def _mallinfo2():
    """glibc's ``mallinfo2`` returning its structure, or None where it is missing."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                         "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    mallinfo2 = getattr(_glibc(), "mallinfo2", None)
    if mallinfo2 is not None:
        mallinfo2.restype = MallInfo2
    return mallinfo2


def run_tasks(func: Callable[..., Any], tasks: Sequence[tuple], jobs: int = 1, progress: bool = False,
              desc: str = "tasks", weights: Optional[Sequence[float]] = None,
              on_result: Optional[Callable[[int, Any], None]] = None,
              sent: Optional[Sequence[bool]] = None, keep: bool = True,
              groups: Optional[Sequence[Any]] = None,
              while_running: Optional[Callable[[], None]] = None) -> List[Any]:
    """``[func(*t) for t in tasks]``, in order, on the configured backend.

    ``weights`` (e.g. each task's expected cost) order the submissions
    largest first, so the last task to finish is a small one. ``on_result(i, result)``
    is called in this process as soon as task ``i`` finishes (e.g. to store a
    metric's scores before the others are done, so a killed run keeps them).
    ``sent[i]``: task ``i`` is a small self-contained piece of a large whole
    (a chunk of rows and its texts), pickled to the worker that runs it
    instead of shared copy-on-write: a forked worker that touches shared
    objects (their reference counts, free blocks of the parent's allocator)
    copies every page they lie on. When every task is sent and this process
    holds more than :data:`SPAWN_ABOVE_BYTES`, the workers are fresh
    interpreters (``spawn``) that share nothing with it, so its memory is
    never copied; unless it runs a user's script (:func:`_spawn_is_safe`),
    which a spawned worker would import again. ``keep=False``: results go to ``on_result``
    alone and are not held until the end (the returned list is all None). ``groups[i]``: tasks of one group
    (the chunks of one metric) share a cost each worker pays once, on its first task of the group (loading
    WordNet and looking up its words for METEOR: 1.7 s, against 1.2 s for a later chunk of 16,000 rows), so local
    workers take them one after another (:func:`_next_task`). ``while_running()`` is work of this process done
    while the workers run (loading what the next tasks need): on a thread started once the local workers
    are forked and joined before this returns (no fork sees it half done), else before the tasks run.
    """
    if tasks and on_cluster():
        from .dask_backend import run_on_dask

        if while_running is not None:
            while_running()
        results = run_on_dask(functools.partial(_as_task, func), tasks, _config, progress, desc)
        if on_result is not None:
            for i, r in enumerate(results):
                on_result(i, r)
        return results
    workers = min(workers_for(jobs), len(tasks))
    bar = _bar(len(tasks), progress, desc)
    if workers <= 1 or len(tasks) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        if while_running is not None:
            while_running()
        out: List[Any] = []
        for i, t in enumerate(tasks):
            result = func(*t)
            out.append(result if keep else None)
            if on_result is not None:
                on_result(i, result)
            del result
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return out
    return _run_pool(func, tasks, workers, bar, weights, on_result, sent, keep, groups, while_running)


def _next_task(pending: List[int], groups: Sequence[Any], last: Any, running: set) -> int:
    """The task a free worker takes from ``pending`` (largest first): the next of the group it ran last
    (``last``), else the first of a group no other worker is running, else the first."""
    for wanted in (lambda g: g == last, lambda g: g not in running):
        for k, i in enumerate(pending):
            if wanted(groups[i]):
                return pending.pop(k)
    return pending.pop(0)


def _run_pool(func, tasks, workers: int, bar, weights, on_result=None, sent=None, keep=True,
              groups=None, while_running=None) -> List[Any]:
    """The local process pool. Without ``groups`` every task is queued at once; with them at most one task per
    worker is queued, so a task submitted when one finishes goes to the worker that just became free, and it
    is chosen for that worker by :func:`_next_task`."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    global _TASKS, _FUNC
    order = list(range(len(tasks)))
    if weights is not None:
        order.sort(key=lambda i: -weights[i])
    results: List[Any] = [None] * len(tasks)
    loading: Optional[_Background] = None
    _TASKS, _FUNC = tasks, func
    method = _start_method(sent)
    gc.freeze()  # forked workers' collections then never write to the parent's objects, which stay shared
    try:
        with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker,
                                 mp_context=multiprocessing.get_context(method)) as pool:
            def submit(i):
                return (pool.submit(_released, func, *tasks[i]) if sent is not None and sent[i]
                        else pool.submit(_run_forked, i))

            if groups is None:
                futures = {submit(i): i for i in order}
            else:
                futures = {}
                while order and len(futures) < workers:
                    i = _next_task(order, groups, None, {groups[j] for j in futures.values()})
                    futures[submit(i)] = i
            if while_running is not None:  # the workers are forked (at the first submission): no fork sees it
                loading = _Background(while_running)
            while futures:
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = futures.pop(fut)
                    result = fut.result()
                    del fut  # a finished future holds its result
                    if groups is not None and order:  # the worker that ran task i is the free one
                        nxt = _next_task(order, groups, groups[i], {groups[j] for j in futures.values()})
                        futures[submit(nxt)] = nxt
                    if keep:
                        results[i] = result
                    if on_result is not None:
                        on_result(i, result)
                    del result
                    if bar is not None:
                        bar.update(1)
    except BrokenProcessPool as err:
        raise BackendError(f"a worker process died ({err}); nothing was written. Fix: run again with fewer "
                           "--jobs or a larger machine (a worker killed for memory is the usual cause)") from None
    finally:
        if loading is not None:
            loading.join()
        gc.unfreeze()
        _TASKS, _FUNC = None, None
        if bar is not None:
            bar.close()
    if loading is not None and loading.error is not None:
        raise loading.error
    return results


class _Background:
    """``work()`` on a thread of this process, started at once; :meth:`join` waits for it, and ``error`` is what
    it raised (None when it returned)."""

    def __init__(self, work: Callable[[], None]) -> None:
        self.error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(work,), name="combo-while-running", daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as err:  # noqa: BLE001 - raised again in the calling thread
            self.error = err

    def join(self) -> None:
        self._thread.join()


def _bar(total: int, progress: bool, desc: str):
    if not progress or total == 0:
        return None
    from .progress import progress as reporter

    return reporter(total, desc, unit="task")
