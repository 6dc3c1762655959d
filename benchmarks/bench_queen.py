"""QUEEN and KING: the exact bitset count against the enumeration of triples, and the max_refs estimator.

    python benchmarks/bench_queen.py [--data ../shared/data] [--quick]

1. QUEEN of 10 candidates with 3 metrics, n_ref in {4, 8, 16, 32, 64}: the
   enumeration of triples (``queen_naive``, the definition) against the two
   exact counts, ``broadcast`` (every triple compared at once with numpy) and
   ``bitset`` (AND-ed prefix bitsets), and ``queen`` (which picks broadcast up
   to 16 references), with the speed-up ratios. Values must agree exactly.
2. KING (leave-one-out QUEEN of references and candidates): fast against the
   definition where the definition finishes in seconds, then the fast one
   alone up to 256 references, with the growth exponent of the time in n_ref;
   and 3,000 segments of 4-5 references (WMT/NIST-like) in one ``king`` call.
3. The ``max_refs`` estimator on a mid-size case (segments of 150-300
   references, synthetic; and real DSTC7 segments with 100-300 references
   scored with chrF and ROUGE-L when the data is there): mean absolute error
   against the exact values over seeds, and the time.

Times are the best of a few runs in one process (the naive one runs once when
it takes more than a second).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from combo.meta.queen import prepare_segment, queen, queen_counts, queen_naive  # noqa: E402
from combo.meta.likeness import king, king_segment, king_segment_naive  # noqa: E402


def best_time(fn, repeat=5, budget=1.0):
    """Best wall time of ``fn()`` over up to ``repeat`` runs (one run when it exceeds ``budget`` seconds)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
        if best > budget:
            break
    return best, out


def growth(ns, times):
    """Least-squares exponent of time ~ n^p."""
    return float(np.polyfit(np.log(ns), np.log(times), 1)[0])


def bench_queen(sizes, n_cand=10, m=3):
    rng = np.random.default_rng(0)
    print("## QUEEN: 10 candidates, 3 metrics, one segment\n")
    print("| n_ref | triples | naive s | broadcast s | bitset s | queen() s | naive / queen() |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    times = {"broadcast": [], "bitset": []}
    for n in sizes:
        cand, refs = rng.random((m, n_cand, n)), rng.random((m, n, n))
        t_auto, q_auto = best_time(lambda: queen(cand, refs))
        t_naive, q_naive = best_time(lambda: queen_naive(cand, refs), repeat=3)
        c, r = prepare_segment(cand, refs)
        row = {}
        for method in ("broadcast", "bitset"):
            t, counts = best_time(lambda: queen_counts(c, r, "distinct", method))
            assert np.array_equal(counts / (n * (n - 1) * (n - 2)), q_naive)
            times[method].append(t)
            row[method] = t
        assert np.array_equal(q_auto, q_naive)
        print(f"| {n} | {n * (n - 1) * (n - 2):,} | {t_naive:.4f} | {row['broadcast']:.5f} | "
              f"{row['bitset']:.5f} | {t_auto:.5f} | {t_naive / t_auto:,.0f} |")
    big = [n for n in sizes if n >= 16]
    for method, ts in times.items():
        print(f"\n{method} time grows as n_ref^{growth(big, ts[-len(big):]):.2f} over n_ref {big}", end="")
    print("\n")


def bench_king(naive_sizes, fast_sizes, n_cand=10, m=3):
    rng = np.random.default_rng(1)
    print("## KING: 10 candidates, 3 metrics, one segment\n")
    print("| n_ref | naive s | fast s | naive / fast |")
    print("|---:|---:|---:|---:|")
    times = []
    for n in fast_sizes:
        cand, refs = rng.random((m, n_cand, n)), rng.random((m, n, n))
        t_fast, seg = best_time(lambda: king_segment(cand, refs), repeat=3)
        times.append(t_fast)
        if n in naive_sizes:
            t_naive, k_naive = best_time(lambda: king_segment_naive(cand, refs), repeat=2)
            assert k_naive == seg.king
            print(f"| {n} | {t_naive:.3f} | {t_fast:.5f} | {t_naive / t_fast:,.0f} |")
        else:
            print(f"| {n} | - | {t_fast:.4f} | - |")
    big = [n for n in fast_sizes if n >= 32]
    print(f"\nfast KING time grows as n_ref^{growth(big, times[-len(big):]):.2f} over n_ref {big}\n")
    segments = [(rng.random((m, n_cand, n)), rng.random((m, n, n))) for n in rng.integers(4, 6, size=3000)]
    t_all, res = best_time(lambda: king(segments), repeat=3)
    t_one, per = best_time(lambda: [king_segment(c, r).king for c, r in segments], repeat=3)
    assert per == res.per_segment.tolist()
    t_naive, _ = best_time(lambda: [king_segment_naive(c, r) for c, r in segments[:100]], repeat=1)
    print(f"3,000 segments of 4-5 references: king() {t_all:.3f} s, king_segment() in a loop {t_one:.3f} s, "
          f"definition {t_naive * 30:.1f} s (100 segments timed x 30): {t_naive * 30 / t_all:,.0f}x\n")


def estimator_report(label, segments, caps, seeds):
    """Mean |estimate - exact| of QUEEN (per candidate) and KING (per segment, and the mean over segments)."""
    t0 = time.perf_counter()
    exact_k = king(segments)
    t_exact = time.perf_counter() - t0
    exact_q = [queen(c, r) for c, r in segments]
    n_refs = [s[1].shape[-1] for s in segments]
    print(f"### {label}: {len(segments)} segments, {min(n_refs)}-{max(n_refs)} references, "
          f"{segments[0][0].shape[1]} candidates, {segments[0][0].shape[0]} metrics; exact KING "
          f"{exact_k.value:.4f} in {t_exact:.2f} s\n")
    print("| max_refs | QUEEN mean abs err | KING per-segment mean abs err | KING (mean over segments) "
          "mean abs err | KING time s |")
    print("|---:|---:|---:|---:|---:|")
    for cap in caps:
        q_err, k_seg_err, k_err, secs = [], [], [], []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            for (c, r), q in zip(segments, exact_q):
                keep = np.sort(rng.choice(r.shape[-1], size=cap, replace=False))
                q_err.append(np.abs(queen(c[..., keep], r[:, keep[:, None], keep]) - q).mean())
            t0 = time.perf_counter()
            est = king(segments, max_refs=cap, seed=seed)
            secs.append(time.perf_counter() - t0)
            k_seg_err.append(np.abs(est.per_segment - exact_k.per_segment).mean())
            k_err.append(abs(est.value - exact_k.value))
        print(f"| {cap} | {np.mean(q_err):.4f} | {np.mean(k_seg_err):.4f} | {np.mean(k_err):.4f} | "
              f"{np.mean(secs):.3f} |")
    print()


def dstc7_segments(data: Path, lo: int, hi: int, limit: int):
    """DSTC7 segments with lo..hi references, the 9 automatic systems as candidates, chrF and ROUGE-L."""
    from combo.io.dstc7 import read_dstc7
    from combo.scoring import score_with_references

    tb = read_dstc7(data / "dstc7")
    systems = [s for s in tb.systems if s != "Human"]
    ids = [i for i, seg in enumerate(tb.segments)
           if lo <= len(seg.references) <= hi and all(i in tb.candidates[s] for s in systems)][:limit]
    sub = tb.subset(ids)
    sub.candidates = {s: sub.candidates[s] for s in systems}
    t0 = time.perf_counter()
    _, refs = score_with_references(sub, ["chrf", "rouge-l"])
    print(f"(DSTC7: scored {len(refs.cand_ref_values[0]) + len(refs.ref_ref_values[0]):,} text pairs "
          f"with chrF and ROUGE-L in {time.perf_counter() - t0:.1f} s)\n")
    return [(refs.cand_ref(i), refs.ref_ref(i)) for i in range(len(sub.segments))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer seeds")
    args = ap.parse_args()
    print(f"numpy {np.__version__}, popcount: {'np.bitwise_count' if hasattr(np, 'bitwise_count') else 'table'}\n")
    if args.quick:
        bench_queen([4, 8, 16, 32])
        bench_king([4, 8], [4, 8, 16, 32, 64])
    else:
        bench_queen([4, 8, 16, 32, 64])
        bench_king([4, 8, 16], [4, 8, 16, 32, 64, 128, 256])
    caps = [16, 32, 64]
    seeds = range(3 if args.quick else 10)
    rng = np.random.default_rng(2)
    print("## max_refs estimator\n")
    synthetic = []
    for n in rng.integers(150, 301, size=4 if args.quick else 8):
        synthetic.append((rng.random((2, 9, n)), rng.random((2, n, n))))
    estimator_report("synthetic (uniform scores)", synthetic, caps, seeds)
    if (args.data / "dstc7").is_dir():
        estimator_report("DSTC7, chrF + ROUGE-L", dstc7_segments(args.data, 100, 300, 4 if args.quick else 8),
                         caps, seeds)
    else:
        print(f"(no DSTC7 data at {args.data}: real-data estimator check skipped)")


if __name__ == "__main__":
    main()
