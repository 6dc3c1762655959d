"""`combo score` of BLEU and chrF over large test beds of distinct lines: wall time and peak memory.

The test bed is made from real WMT12 lines (every system output and the
reference of the four into-English pairs), each made distinct by appending
its line number (repeated lines would flatter the deduplication of texts):
one system, one reference per segment, in the plain folder layout. Each size
runs ``combo score`` in a fresh process; peak memory is the largest sum of the
proportional set sizes of that process and its workers, sampled every 0.5 s.

Run: ``python benchmarks/bench_stream.py --sizes 10000 100000 1000000``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Optional, Tuple

from bench_jobs import positive_int  # a whole number of at least 1, else one usage line

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]


def real_lines():
    plain = DATA / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:3003]
    hyps = []
    for pair in ("cs-en", "de-en", "es-en", "fr-en"):
        for f in sorted((plain / "system-outputs" / "newstest2012" / pair).iterdir()):
            hyps.extend(f.read_text(encoding="utf-8").split("\n")[:3003])
    return ref, hyps


def build(folder: Path, size: int) -> None:
    ref, hyps = real_lines()
    (folder / "references").mkdir(parents=True)
    (folder / "systems").mkdir()
    with open(folder / "references" / "ref.txt", "w", encoding="utf-8") as r, \
            open(folder / "systems" / "sys.txt", "w", encoding="utf-8") as h:
        for i in range(size):
            k = i % len(hyps)
            r.write(f"{ref[k % len(ref)]} {i}\n")
            h.write(f"{hyps[k]} {i}\n")


def tree_pss_mb(pid: int) -> float:
    """Proportional set size (MB) of ``pid`` and all its descendants: memory shared copy-on-write between the
    main process and forked workers counts once, divided among them."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
            for tid in os.listdir(f"/proc/{p}/task"):
                todo.extend(int(c) for c in open(f"/proc/{p}/task/{tid}/children").read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total / 1024


def run(folder: Path, metrics: str, jobs: int, memory: str):
    """Wall seconds, CPU seconds of the command and its workers, and peak memory of one ``combo score``."""
    args = ["score", "--testbed", str(folder), "-m", metrics, "-q", "-j", str(jobs), "--memory", memory,
            "--out", str(folder / "scores.tsv")]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COMBO_CACHE_DIR=tempfile.mkdtemp(prefix="combo-bench-"))
    wall, cpu, peak, _ = measure(args, env)
    return wall, cpu, peak


def check_output_path(ap: argparse.ArgumentParser, option: str, path) -> None:
    """One usage line and exit 2, before anything is measured, unless combo could write ``path`` (the check
    combo's own outputs pass: :func:`combo.io.text.check_writable`)."""
    sys.path.insert(0, str(ROOT))
    from combo.errors import ComboError
    from combo.io.text import check_writable

    try:
        check_writable(path)
    except ComboError as err:
        ap.error(f"{option} {err}")


def cold_env(prefix: str) -> Tuple[dict, Path]:
    """The environment of a cold run and its own empty cache folder (analyses, and scores/ beside them): this
    checkout's combo, the shared data and its WordNet. The folder is removed when the benchmark exits (a cold
    training run leaves some 760 MB there)."""
    cache = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, cache, True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), COMBO_DATA_HOME=str(DATA), COMBO_CACHE_DIR=str(cache))
    env.setdefault("NLTK_DATA", str(DATA / "nltk_data"))
    return env, cache


def timed(args, env) -> Tuple[dict, str]:
    """:func:`measure` as a row's figures (seconds, CPU seconds, peak MB, the load average before), and the
    command's standard output."""
    load = open("/proc/loadavg").read().split()[0]
    wall, cpu, peak, out = measure(args, env)
    return {"seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "peak_mb": round(peak),
            "load_before": load}, out


def emit(rows: List[dict], row: dict) -> None:
    """Keep a row and print it at once (a long benchmark shows each figure as it comes)."""
    rows.append(row)
    print(json.dumps(row), flush=True)


def save(rows: List[dict], path: Optional[str]) -> None:
    if path:
        Path(path).write_text(json.dumps(rows, indent=1))


def measure(args, env):
    """``python -m combo.cli ARGS`` in a fresh process: wall seconds (to its exit), CPU seconds of the command
    and its workers, peak memory (the largest sum of PSS over the process tree, sampled every 0.5 s on a
    thread: workers included, shared pages counted once) in MB, and its standard output."""
    before = os.times()
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "combo.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_mb(proc.pid))
            done.wait(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t
    done.set()
    sampler.join()
    peak = peak[0]
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: {err[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, peak, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=positive_int, nargs="+", default=[10000, 30000, 100000, 300000])
    ap.add_argument("--metrics", default="bleu,chrf")
    ap.add_argument("--jobs", type=positive_int, default=1)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="combo-stream-") as tmp:
            folder = Path(tmp) / "testbed"
            build(folder, size)
            load = open("/proc/loadavg").read().split()[0]
            wall, cpu, peak = run(folder, args.metrics, args.jobs, args.memory)
        emit(rows, {"segments": size, "jobs": args.jobs, "memory": args.memory, "seconds": round(wall, 2),
                    "cpu_seconds": round(cpu, 2), "peak_mb": round(peak), "load_before": load})
    save(rows, args.json)


if __name__ == "__main__":
    main()
