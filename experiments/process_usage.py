"""CPU and memory of a process and every descendant, read from /proc: what a run that starts worker processes,
which start parser processes of their own, costs in all (``resource.getrusage`` counts only the children a
process has waited for, so it misses grandchildren such as a worker's Java process).

Used by ``experiments/discotk_light.py`` (sampled on a thread while the parsing runs) and
``benchmarks/bench_discourse.py`` (read before and after)."""

from __future__ import annotations

import os
import threading
import time
from typing import Dict, Tuple

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _processes() -> Dict[int, Tuple[int, float, int]]:
    """Every process: (parent id, CPU seconds of its own, resident bytes)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, int(fields[21]) * PAGE)
    return out


def tree(root: int = 0) -> Dict[int, Tuple[float, int]]:
    """The CPU seconds and resident bytes of ``root`` (default this process) and each live descendant."""
    root = root or os.getpid()
    procs = _processes()
    mine, grew = {root}, True
    while grew:
        grew = False
        for pid, (ppid, _, _) in procs.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return {pid: procs[pid][1:] for pid in mine if pid in procs}


def tree_cpu(root: int = 0) -> float:
    """CPU seconds of ``root`` and its live descendants."""
    return sum(cpu for cpu, _ in tree(root).values())


class TreeUsage:
    """CPU seconds and peak resident memory of this process and all its descendants while ``with`` runs, sampled
    every ``every`` seconds on a thread: each process's last sampled CPU counts (one that ends between two
    samples loses at most its last interval), and the peak is the largest sum of resident memory over a sample."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.cpu: Dict[int, float] = {}
        self.peak_bytes = 0
        self.largest_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        now = tree()
        for pid, (cpu, _) in now.items():
            self.cpu[pid] = cpu
        self.peak_bytes = max(self.peak_bytes, sum(rss for _, rss in now.values()))
        self.largest_bytes = max([self.largest_bytes] + [rss for _, rss in now.values()])

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def __enter__(self) -> "TreeUsage":
        self._sample()
        self._start_cpu = dict(self.cpu)
        self._t0 = time.perf_counter()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.wall_seconds = time.perf_counter() - self._t0

    def result(self) -> dict:
        return {"wall_seconds": self.wall_seconds,
                "cpu_seconds": sum(self.cpu.values()) - sum(self._start_cpu.values()),
                "peak_mb_all_processes": self.peak_bytes / 2 ** 20,
                "peak_mb_largest_process": self.largest_bytes / 2 ** 20,
                "sampled_every_seconds": self.every}
