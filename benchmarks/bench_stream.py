"""`combo score` of BLEU and chrF over large test beds of distinct lines: wall time and peak memory.

The test bed is made from real WMT12 lines (every system output and the
reference of the four into-English pairs), each made distinct by appending
its line number (repeated lines would flatter the deduplication of texts):
one system, one reference per segment, in the plain folder layout. Each size
runs ``combo score`` in a fresh process under ``/usr/bin/time -v`` (peak RSS).

Run: ``python benchmarks/bench_stream.py --sizes 10000 100000 1000000``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def run(folder: Path, metrics: str, jobs: int, memory: str):
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "combo.cli", "score", "--testbed", str(folder),
           "-m", metrics, "-q", "-j", str(jobs), "--memory", memory, "--out", str(folder / "scores.tsv")]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COMBO_CACHE_DIR=tempfile.mkdtemp(prefix="combo-bench-"))
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1)) / 1024
    return wall, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000, 100000, 300000])
    ap.add_argument("--metrics", default="bleu,chrf")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="combo-stream-") as tmp:
            folder = Path(tmp) / "testbed"
            build(folder, size)
            wall, rss = run(folder, args.metrics, args.jobs, args.memory)
        rows.append({"segments": size, "seconds": round(wall, 2), "peak_mb": round(rss),
                     "load": open("/proc/loadavg").read().split()[0]})
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
