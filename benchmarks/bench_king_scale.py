"""KING with every reference at DSTC7's shapes: time and peak memory, exact and from held-out samples.

The counting cost of KING depends on the shapes (references per segment,
candidates, metrics), not on the score values, so this benchmark takes the
real shapes of DSTC7 (951 segments with >= 4 references, 4 to 1,008 each,
9 automatic candidates) and fills them with seeded scores on a coarse grid
(ties are frequent, as with real metrics on one-line responses). It times:

* ``--held-out S``: KING from S held-out references per segment above 16;
* exact KING on the segments up to ``--exact-max`` references, and the fitted
  cost per bit operation, from which the exact count of the whole set is
  extrapolated (its work is ``sum_i m (n_cand + n_i) n_i^3 / 64`` words).

Run: ``python benchmarks/bench_king_scale.py --metrics 17 --held-out 16``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def dstc7_shapes():
    from combo.io import load_testbed

    tb = load_testbed(DATA / "dstc7")
    auto = [s for s in tb.systems if s != tb.metadata.get("human_system")]
    return [(sum(1 for s in auto if i in tb.candidates[s]), len(seg.references))
            for i, seg in enumerate(tb.segments) if len(seg.references) >= 4]


class SyntheticSegments:
    """Segments made on demand (memory stays at one chunk), seeded per segment."""

    def __init__(self, shapes, m, seed=0, levels=20):
        self.shapes, self.m, self.seed, self.levels = shapes, m, seed, levels

    def __len__(self):
        return len(self.shapes)

    def shape_of(self, i):
        n_cand, n = self.shapes[i]
        return self.m, n_cand, n

    def segment_bytes(self, i):
        n_cand, n = self.shapes[i]
        return 8 * self.m * (n_cand * n + n * n)

    def __getitem__(self, i):
        n_cand, n = self.shapes[i]
        rng = np.random.default_rng([self.seed, i])
        return (rng.integers(0, self.levels, (self.m, n_cand, n)).astype(float),
                rng.integers(0, self.levels, (self.m, n, n)).astype(float))


def work(shapes, m, held_out=None):
    """uint64 words the bitsets touch: m (n_cand + queried references) n * n^2/64 per segment."""
    return sum(m * (c + (n if held_out is None else min(n, held_out))) * n * n * n / 64 for c, n in shapes)


def main() -> None:
    from combo.meta_run import king

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metrics", type=int, default=17)
    ap.add_argument("--held-out", type=int, default=16)
    ap.add_argument("--exact-max", type=int, default=64, help="exact KING on segments up to this many references")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    shapes = dstc7_shapes()
    out = {"segments": len(shapes), "max_refs": max(n for _, n in shapes), "metrics": args.metrics,
           "reference_pairs": sum(n * n for _, n in shapes), "load": open("/proc/loadavg").read().split()[0]}
    small = [s for s in shapes if s[1] <= args.exact_max]
    t = time.perf_counter()
    king(SyntheticSegments(small, args.metrics), memory=args.memory, jobs=args.jobs)
    out["exact_small"] = {"segments": len(small), "seconds": time.perf_counter() - t,
                          "words": work(small, args.metrics)}
    print(json.dumps(out["exact_small"]), flush=True)
    rate = out["exact_small"]["words"] / out["exact_small"]["seconds"]
    out["exact_all_extrapolated_seconds"] = work(shapes, args.metrics) / rate
    t = time.perf_counter()
    res = king(SyntheticSegments(shapes, args.metrics), held_out=args.held_out, memory=args.memory,
               jobs=args.jobs)
    out["held_out"] = {"S": args.held_out, "seconds": time.perf_counter() - t, "estimated_segments":
                       len(res.estimated), "value": res.value, "stderr": res.stderr,
                       "words": work(shapes, args.metrics, args.held_out)}
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
