"""Fast against naive tree kernels on real sentences, in one run, as time ratios.

Trees: WMT12 de-en (newstest2012), the reference and the system outputs,
each sentence parsed by the ``shallow`` layer (Pattern's tagger and chunker)
and built with ``from_chunks`` (sentence -> chunk -> POS -> word), or with
``--trees dependencies`` by spaCy and built with ``from_dependencies``.
Parses come from the analysis cache (``$COMBO_CACHE_DIR``) when present.

Each system's tree of a segment is scored against the reference tree:

- naive: ``sst_naive`` / ``st_naive`` (all node pairs, Collins & Duffy),
- fast: ``sst`` / ``st`` (node pairs with equal productions, Moschitti), one
  pair at a time, pure Python like the naive one: the algorithmic gain,
- batch: ``TreeKernel(engine="numpy").pairs`` (the same algorithm, all pairs together in numpy),
- compiled: ``TreeKernel(engine="c").pairs`` (``_kernels.c``, one pair at a time in C), the call the
  metrics make where it was built (values identical to the batch's, to the bit);

all three giving normalised scores, each distinct tree's K(t, t) computed once.
Values must agree to 1e-9. Then PTK: ``TreeKernel.pairs`` batched in numpy and compiled
against the same call computing each pair with the one-pair reference
(``_partial_tree_pair``), all from cold caches, values identical to the bit;
and the tree edit distance (ours against ``zss``, same distances) on a few pairs.

    python benchmarks/bench_kernels.py [--data ../shared/data] [--systems 16] [--repeat 3] [--trees chunks]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from combo.analysis.kernels import (  # noqa: E402
    TreeKernel, _compiled, sst, sst_naive, st, st_naive, tree_edit_distance)
from combo.analysis.trees import Tree  # noqa: E402
from combo.analysis.layers import annotate  # noqa: E402
from combo.analysis.trees import from_chunks, from_dependencies  # noqa: E402

def load_trees(data: Path, segments: int, systems: int, kind: str = "chunks"):
    """Reference trees and, per system, output trees of WMT12 de-en, from real parses."""
    plain = data / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:segments]
    outputs = {}
    for f in sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir())[:systems]:
        outputs[f.name.split(".", 2)[2]] = f.read_text(encoding="utf-8").split("\n")[:segments]
    texts = list(dict.fromkeys(ref + [line for lines in outputs.values() for line in lines]))
    if kind == "chunks":
        trees = [from_chunks(p.words, p.pos, p.chunks) for p in annotate("shallow", texts)]
    else:
        trees = [from_dependencies(d.words, d.heads, d.relations, d.tags) for d in annotate("dependencies", texts)]
    tree_of = dict(zip(texts, trees))
    return [tree_of[s] for s in ref], {name: [tree_of[s] for s in lines] for name, lines in outputs.items()}


def timed(fn, repeat: int = 1):
    """Best wall time of ``repeat`` runs (timeit's convention) and the value."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def normalised_per_pair(kernel, hyps, refs):
    """Normalised scores one pair at a time, each distinct tree's K(t, t) computed once."""
    cache = {}

    def self_k(t):
        if t not in cache:
            cache[t] = kernel(t, t)
        return cache[t]

    out = np.empty(len(hyps))
    for k, (h, r) in enumerate(zip(hyps, refs)):
        denom = self_k(h) * self_k(r)
        out[k] = kernel(h, r) / np.sqrt(denom) if denom > 0 else 0.0
    return np.minimum(out, 1.0)


class PerPairPTK(TreeKernel):
    """``TreeKernel.pairs`` with each distinct pair's PTK computed by the one-pair reference (the path before
    the batch)."""

    def _raw_many(self, trees, left, right):
        return np.array([self.raw(trees[i], trees[j]) for i, j in zip(left, right)])


def cold(kernel: TreeKernel, trees, left, right):
    """``kernel.pairs(left, right)`` with nothing cached in the trees' indexes (K(t, t), the PTK tables)."""
    def run():
        for t in trees:
            t.index.cache.clear()
        return kernel.pairs(left, right)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--segments", type=int, default=3003)
    parser.add_argument("--systems", type=int, default=16)
    parser.add_argument("--lambda", dest="lam", type=float, default=0.4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ted-pairs", type=int, default=300)
    parser.add_argument("--trees", choices=["chunks", "dependencies"], default="chunks",
                        help="Pattern shallow-parse trees (default) or spaCy dependency trees")
    args = parser.parse_args()
    t_build, (refs, systems) = timed(lambda: load_trees(args.data, args.segments, args.systems, args.trees))
    hyps = [t for lines in systems.values() for t in lines]
    refs_all = refs * len(systems)
    t_index, _ = timed(lambda: [t.index.height for t in set(refs + hyps)])
    nodes = np.array([len(t) for t in refs + hyps])
    print(f"WMT12 de-en: {len(systems)} systems x {len(refs)} segments = {len(hyps)} (output, reference) "
          f"pairs; nodes per tree: mean {nodes.mean():.1f}, max {nodes.max()}")
    print(f"building the trees {t_build:.2f} s, their kernel indexes {t_index:.2f} s "
          "(not in the timings below)")
    lam = args.lam
    engines = ["numpy"] + (["c"] if _compiled is not None else [])
    if _compiled is None:
        print("the compiled kernels are not built: numpy batch only")
    print(f"{'kernel':6} {'naive s':>9} {'fast s':>9} {'speed-up':>9} {'batch s':>9} "
          f"{'speed-up':>9} {'compiled s':>10} {'speed-up':>9} {'max |fast - naive|':>19} {'max |batch - naive|':>20}")
    rep = args.repeat
    first_batch = {}
    for name, fast, naive, kind in (("SST", sst, sst_naive, "sst"), ("ST", st, st_naive, "st")):
        t_naive, v_naive = timed(
            lambda: normalised_per_pair(lambda a, b: naive(a, b, lam), hyps, refs_all), rep)
        t_fast, v_fast = timed(
            lambda: normalised_per_pair(lambda a, b: fast(a, b, lam), hyps, refs_all), rep)
        first_batch[name], _ = timed(lambda: TreeKernel(kind, lam=lam, engine="numpy").pairs(hyps, refs_all))
        runs = {e: timed(lambda: TreeKernel(kind, lam=lam, engine=e).pairs(hyps, refs_all), rep) for e in engines}
        t_batch, v_batch = runs["numpy"]
        t_c, v_c = runs.get("c", (float("nan"), v_batch))
        d_fast, d_batch = np.max(np.abs(v_fast - v_naive)), np.max(np.abs(v_batch - v_naive))
        print(f"{name:6} {t_naive:9.2f} {t_fast:9.2f} {t_naive / t_fast:8.1f}x {t_batch:9.2f} "
              f"{t_naive / t_batch:8.1f}x {t_c:10.2f} {t_naive / t_c:8.1f}x {d_fast:19.1e} {d_batch:20.1e}")
        if d_fast > 1e-9 or d_batch > 1e-9:
            raise SystemExit(f"{name}: fast and naive values differ")
        if not np.array_equal(v_c, v_batch):
            raise SystemExit(f"{name}: compiled and numpy batch values differ")
    print(f"(best of {rep} runs; normalised scores of every pair, each distinct tree's K(t, t) "
          f"computed once per method; the first batch call of the process, which also pays for "
          f"the allocator's first large arrays, took "
          + ", ".join(f"{k} {v:.2f} s" for k, v in first_batch.items()) + ")")
    print("SST one pair at a time on bigger trees (k sentences joined into one tree, "
          "first 800 segments of the first system):")
    plain = args.data / "wmt12" / "plain"
    ref_lines = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")
    first = sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir())[0]
    hyp_lines = first.read_text(encoding="utf-8").split("\n")
    for k in (1, 2, 4, 8):
        joined_r = [" ".join(ref_lines[i:i + k]) for i in range(0, 800, k)]
        joined_h = [" ".join(hyp_lines[i:i + k]) for i in range(0, 800, k)]
        big_r = [from_chunks(p.words, p.pos, p.chunks) for p in annotate("shallow", joined_r)]
        big_h = [from_chunks(p.words, p.pos, p.chunks) for p in annotate("shallow", joined_h)]
        for t in big_r + big_h:
            t.index.height  # the index the one-pair kernels read
        t_n, v_n = timed(lambda: [sst_naive(a, b, lam) for a, b in zip(big_h, big_r)], rep)
        t_f, v_f = timed(lambda: [sst(a, b, lam) for a, b in zip(big_h, big_r)], rep)
        assert np.allclose(v_n, v_f, rtol=1e-12, atol=0)
        size = np.mean([len(t) for t in big_r + big_h])
        print(f"  k={k}: {size:5.0f} nodes per tree, naive {t_n:6.2f} s, fast {t_f:6.2f} s, "
              f"speed-up {t_n / t_f:4.1f}x")
    distinct: list[Tree] = list(set(refs + hyps))
    t_one, v_one = timed(cold(PerPairPTK("ptk", lam=lam), distinct, hyps, refs_all), rep)
    t_ptk, v_ptk = timed(cold(TreeKernel("ptk", lam=lam, engine="numpy"), distinct, hyps, refs_all), rep)
    same = np.array_equal(v_ptk, v_one)
    compiled = ""
    if "c" in engines:
        t_pc, v_pc = timed(cold(TreeKernel("ptk", lam=lam, engine="c"), distinct, hyps, refs_all), rep)
        same = same and np.array_equal(v_pc, v_one)
        compiled = f", compiled {t_pc:.2f} s, speed-up {t_one / t_pc:.1f}x"
    print(f"PTK    {len(hyps)} pairs: one pair at a time {t_one:.2f} s, batch {t_ptk:.2f} s, "
          f"speed-up {t_one / t_ptk:.1f}x{compiled}, "
          + ("identical values" if same else "values differ"))
    if not same:
        raise SystemExit("PTK: batch, compiled and one-pair values differ")
    few = min(len(refs), args.ted_pairs)
    pairs = list(zip(hyps[:few], refs[:few]))
    t_ted, ours = timed(lambda: [tree_edit_distance(h, r) for h, r in pairs])
    t_zss, theirs = timed(lambda: [tree_edit_distance(h, r, backend="zss") for h, r in pairs])
    if ours != theirs:
        raise SystemExit("TED: combo and zss distances differ")
    print(f"TED    {few} pairs: combo {t_ted:.2f} s, zss {t_zss:.2f} s ({t_zss / t_ted:.1f}x), "
          f"identical distances")


if __name__ == "__main__":
    main()
