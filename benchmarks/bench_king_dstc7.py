"""KING on DSTC7 with every reference, estimated from a sample of segments: time, memory and the estimate.

``combo search --criterion king`` on the whole DSTC7 test bed (the 951 contexts with at least 4 references,
4 to 1,008 references each, none capped) with the default metric set, estimating KING from a seeded simple
random sample of ``--king-segments N`` contexts (only their reference pairs are scored) and ``--king-sample S``
held-out references in the contexts with more (docs/scale.md). Each run is cold (empty analysis and score
caches) in a fresh process; reported: wall and CPU seconds (the command and its workers), the peak of the
summed proportional set size of its process tree, the selected set, its KING estimate with the 95% sampling
interval, and the best single metric.

Run: ``NLTK_DATA=../shared/data/nltk_data python benchmarks/bench_king_dstc7.py --segments 100 --jobs 2``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stream import DATA, cold_env, emit, save, timed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segments", type=int, nargs="+", default=[100])
    ap.add_argument("--king-sample", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    for n in args.segments:
        env, _ = cold_env("combo-king-dstc7-")
        figures, out = timed(["search", "--criterion", "king", "--testbed", str(DATA / "dstc7"), "--min-refs", "4",
                              "--king-segments", str(n), "--king-sample", str(args.king_sample), "--seed",
                              str(args.seed), "-j", str(args.jobs), "-q", "--format", "json"], env)
        doc = json.loads(out)
        emit(rows, {"segments": n, "king_sample": args.king_sample, "jobs": args.jobs, **figures,
                    "selected": doc["selected"], "king": doc["quality"], "estimate": doc.get("estimate"),
                    "best_single": doc["best_single"], "tie_share": doc.get("tie_share"),
                    "evaluations": doc["evaluations"]})
    save(rows, args.json)


if __name__ == "__main__":
    main()
