"""Parallel speed-up: each command with ``--jobs 1`` and ``--jobs 2``, cold, in fresh processes.

Commands (real data from ``../shared/data``; WordNet from there too, so METEOR runs):

* scoring: ``combo score`` of the ``@search`` set (17 lexical metrics) on WMT12 de-en (16 systems x 3,003
  segments);
* parsers: ``combo score`` of ``@heterogeneous-no-sentence`` (36 metrics: lexical, Pattern's shallow parse,
  spaCy's dependencies, tree kernels, GloVe) on WMT12 cs-en (6 systems x 3,003 segments);
* KING: ``combo search --criterion king`` on the bundled DSTC7 sample (scoring its reference pairs, then the
  greedy search under KING), a job of seconds;
* KING on DSTC7: the same search on the whole DSTC7 test bed with every reference, estimated from 100 sampled
  contexts and 16 held-out references (``--king-segments 100 --king-sample 16``, docs/scale.md);
* search: ``combo search --criterion r_snt --scheme ulc`` on WMT12 de-en (scoring, then the greedy search);
* resampling: ``combo evaluate`` of the ``@search`` set on WMT12 de-en (18 entries x 3 criteria, 1,000
  bootstrap resamples each), its scores already cached: the meta-evaluation alone.

Each run gets an empty cache (``COMBO_CACHE_DIR``: analyses and scores), so both job counts do the same
work; a warm command (resampling) gets a copy of one cache filled by a run before both. The outputs of the
two runs are compared byte for byte. Reported: wall and CPU seconds (the
command and its workers), the speed-up ``wall(jobs 1) / wall(jobs 2)``, and the load average before each
run (a busy machine has no second core to give: read the speed-up beside it).

With ``--repeat N`` each command runs N times with each job count, alternating, and the medians are
reported (the speed-up is the ratio of the median walls; ``speedups`` lists each pair's): on this machine
one run's wall time moves by up to 10% from one run to the next.

Run: ``python benchmarks/bench_jobs.py [--only scoring,king,search] [--repeat 3] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

COMMANDS = {
    "scoring": ["score", "--testbed", str(DATA / "wmt12"), "--lp", "de-en", "-m", "@search"],
    "parsers": ["score", "--testbed", str(DATA / "wmt12"), "--lp", "cs-en", "-m", "@heterogeneous-no-sentence"],
    "king": ["search", "--criterion", "king", "--testbed", "dstc7-sample", "--format", "json"],
    "king-dstc7": ["search", "--criterion", "king", "--testbed", str(DATA / "dstc7"), "--min-refs", "4",
                   "--king-segments", "100", "--king-sample", "16", "--seed", "0", "--format", "json"],
    "search": ["search", "--criterion", "r_snt", "--scheme", "ulc", "--testbed", str(DATA / "wmt12"), "--lp",
               "de-en", "--format", "json"],
    "resampling": ["evaluate", "--testbed", str(DATA / "wmt12"), "--lp", "de-en", "-m", "@search", "--format",
                   "json"],
}
WARM = {"resampling"}  # timed with every score cached


def _env(cache_folder: str) -> dict:
    """The environment of one command: this checkout, the shared data, and ``cache_folder`` as its cache."""
    return dict(os.environ, PYTHONPATH=str(ROOT), COMBO_DATA_HOME=str(DATA), COMBO_CACHE_DIR=cache_folder)


def run(args, jobs: int, cache: Optional[str] = None):
    """Wall seconds, CPU seconds (the command and its workers) and standard output of one run, cold unless
    ``cache`` (a filled cache folder, copied) is given."""
    folder = tempfile.mkdtemp(prefix="combo-jobs-")
    if cache is not None:
        shutil.copytree(cache, folder, dirs_exist_ok=True)
    env = _env(folder)
    before = os.times()
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "combo.cli", *args, "-q", "--jobs", str(jobs)],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} --jobs {jobs}: {proc.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, proc.stdout


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(COMMANDS), help="comma-separated: " + ", ".join(COMMANDS))
    ap.add_argument("--repeat", type=positive_int, default=1, help="runs per job count (medians reported)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    names = args.only.split(",")
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        ap.error(f"--only: unknown command {unknown[0]!r}; choose from {', '.join(COMMANDS)}")
    rows = []
    for name in names:
        out = {}
        row = {"command": name}
        cache = None
        if name in WARM:
            cache = tempfile.mkdtemp(prefix="combo-jobs-warm-")
            subprocess.run([sys.executable, "-m", "combo.cli", *COMMANDS[name], "-q", "--jobs", "2"], check=True,
                           capture_output=True, env=_env(cache))
        walls, cpus, loads = {1: [], 2: []}, {1: [], 2: []}, {1: [], 2: []}
        for _ in range(args.repeat):
            for jobs in (1, 2):
                loads[jobs].append(float(open("/proc/loadavg").read().split()[0]))
                wall, cpu, output = run(COMMANDS[name], jobs, cache)
                walls[jobs].append(wall)
                cpus[jobs].append(cpu)
                if out.setdefault(jobs, output) != output:
                    raise SystemExit(f"{name} --jobs {jobs}: the output changed between runs")
        for jobs in (1, 2):
            row[f"load_before_jobs{jobs}"] = max(loads[jobs])
            row[f"wall_jobs{jobs}"] = round(statistics.median(walls[jobs]), 2)
            row[f"cpu_jobs{jobs}"] = round(statistics.median(cpus[jobs]), 2)
        row["speedup"] = round(row["wall_jobs1"] / row["wall_jobs2"], 2)
        row["speedups"] = [round(a / b, 2) for a, b in zip(walls[1], walls[2])]
        row["same_output"] = out[1] == out[2]
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
