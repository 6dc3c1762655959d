"""Every scaling benchmark in one command: time ratios against peers measured in the same run, peak memory,
and scaling exponents fitted over at least four sizes of segments, systems, references and metrics.

For each row the script times combo and its peer (same process, same data,
fresh metric objects, both cold: no disk cache, combo's in-process analysis
memo and every per-word cache of both sides (stems, WordNet synonyms and
synsets) cleared before each of ``--repeat`` runs, the best kept) at each size, fits the exponent
``b`` of ``time ~ size^b`` by least squares on log-log scale, reports the
peer/combo time ratio at the largest size, and combo's peak traced memory
(``tracemalloc``, numpy allocations included) at the largest size. Plots
(log-log time against size, combo and peer) go to ``--plots``.

Rows (WMT12 de-en, real lines; QUEEN on seeded scores):

* segments (one system): BLEU, chrF, TER vs sacreBLEU 2.6; ROUGE-L vs
  rouge-score; WER vs jiwer; METEOR vs NLTK (``--meteor``, needs WordNet);
* systems (segments fixed): BLEU vs sacreBLEU, one corpus call per system;
* references per segment: QUEEN (bitset count) vs the enumeration of triples;
* metrics (segments fixed): ``score_testbed`` with 1 to 8 lexical metrics (no peer);
* segments, on trees (Pattern's shallow parse of each line, built with ``from_chunks``; the parse is not
  timed): the SST tree kernel of each output tree against its reference tree (``TreeKernel.pairs``,
  normalised) vs the naive kernel over all node pairs (Collins & Duffy); the tree edit distance vs ``zss``.
  Skipped, and said so, without the ``shallow`` layer (``pip install 'combo-eval[shallow]'``).

``--goals`` adds the table of the heterogeneous metrics' goals (``bench_goals.py``: the 4,800-candidate
slice cold and warm, the exponent of peak memory against rows, the lexical metrics and the command line's
start-up against sacreBLEU as whole processes; ``--goals-train`` the cold ``combo train`` on WMT12 too),
each measured figure beside its goal.

Run: ``python benchmarks/run_all.py [--quick] [--goals [--goals-train]] [--plots docs/benchmarks] [--json out.json]``;
``--render out.json [--plots FOLDER]`` redraws the plots from a saved run.
bench_kernels.py has more kernels (ST, PTK, bigger trees) on all 48,048 WMT12 pairs. The full agreement
sweeps against the peers (every WMT12 system, every segment) are tests marked slow: ``python -m pytest -m slow``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

import bench_lexical  # the WMT12 de-en loader (this script runs from benchmarks/)
from bench_jobs import positive_int  # a whole number of at least 1, else one usage line

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
os.environ["COMBO_CACHE_DIR"] = ""  # no disk cache: every combo timing analyses its texts (cold)


def load():
    return bench_lexical.load(DATA)


def cold_words():
    """Forget every per-word cache: combo's stems and synonym sets, and the synsets both WordNet readers
    (combo's and ``nltk.corpus.wordnet``, NLTK METEOR's) keep by offset. The readers stay loaded."""
    from combo.analysis import wordnet
    from combo.analysis.porter import porter_stem

    wordnet.synonym_lemmas.cache_clear()
    porter_stem.cache_clear()
    readers = [wordnet._reader]
    if "nltk.corpus" in sys.modules:
        readers.append(sys.modules["nltk.corpus"].__dict__.get("wordnet"))
    for reader in readers:
        if reader is not None and "_synset_offset_cache" in vars(reader):
            reader._synset_offset_cache.clear()


def best(fn, repeat):
    """Best of ``repeat`` cold runs: combo's in-process analysis memo and every per-word cache
    (:func:`cold_words`) are cleared before each (no disk cache)."""
    from combo.analysis.layers import clear_memory

    times = []
    for _ in range(repeat):
        clear_memory()
        cold_words()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def peak_mb(fn):
    from combo.analysis.layers import clear_memory

    clear_memory()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024 ** 2


def exponent(sizes, times):
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def combo_rows(metric, hyps_by_system, ref):
    """combo over all systems' rows at once (as ``combo score``), from a fresh metric object."""
    from combo.scoring import score_testbed
    from combo.testbed import Segment, Testbed

    n = len(ref)
    tb = Testbed(name="bench", segments=[Segment(id=str(i), references=[ref[i]]) for i in range(n)],
                 candidates={s: dict(enumerate(h[:n])) for s, h in hyps_by_system.items()})
    metrics = metric if isinstance(metric, list) else [metric]
    return lambda: score_testbed(tb, metrics)


def peer_rows(metric, hyps_by_system, ref):
    warnings.simplefilter("ignore")
    if metric in ("bleu", "chrf", "ter"):
        from sacrebleu.metrics import BLEU, CHRF, TER

        cls = {"bleu": BLEU, "chrf": CHRF, "ter": TER}[metric]
        return lambda: [cls().corpus_score(h[:len(ref)], [ref]) for h in hyps_by_system.values()]
    if metric == "rouge-l":
        from rouge_score import rouge_scorer

        def run():
            sc = rouge_scorer.RougeScorer(["rougeL"])
            return [[sc.score(r, x) for r, x in zip(ref, h)] for h in hyps_by_system.values()]
        return run
    if metric == "wer":
        import jiwer

        return lambda: [jiwer.wer(ref, h[:len(ref)]) for h in hyps_by_system.values()]
    if metric == "meteor":
        from nltk.translate.meteor_score import meteor_score

        return lambda: [[meteor_score([r.split()], x.split()) for r, x in zip(ref, h)]
                        for h in hyps_by_system.values()]
    raise ValueError(metric)


PEERS = {"bleu": "sacreBLEU 2.6 BLEU", "chrf": "sacreBLEU 2.6 chrF", "ter": "sacreBLEU 2.6 TER",
         "rouge-l": "rouge-score ROUGE-L", "wer": "jiwer WER", "meteor": "NLTK METEOR"}


def row(name, dimension, peer, sizes, make_combo, make_peer, repeat):
    combo_t, peer_t = [], []
    for size in sizes:
        combo_t.append(best(make_combo(size), repeat))
        peer_t.append(best(make_peer(size), 1) if make_peer else float("nan"))
    mem = peak_mb(make_combo(sizes[-1]))
    out = {"benchmark": name, "dimension": dimension, "peer": peer, "sizes": sizes, "combo_s": combo_t,
           "peer_s": peer_t, "ratio_at_largest": combo_t[-1] / peer_t[-1] if make_peer else None,
           "exponent": exponent(sizes, combo_t),
           "peer_exponent": exponent(sizes, peer_t) if make_peer else None, "peak_mb": mem}
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()
                      if k not in ("combo_s", "peer_s")}), flush=True)
    return out


def tree_rows(ref, hyp, repeat, quick):
    """SST kernel vs the naive kernel, and the tree edit distance vs zss, over segments (pairs of trees)."""
    from combo.analysis.kernels import TreeKernel, sst_naive, tree_edit_distance
    from combo.analysis.layers import annotate, get_layer
    from combo.analysis.trees import from_chunks
    from combo.errors import ResourceMissing
    from bench_kernels import normalised_per_pair

    try:
        get_layer("shallow").check()
    except ResourceMissing as err:
        print(f"tree rows skipped: {err}")
        return []
    kernel_sizes = [250, 500, 1000, 2000] if quick else [375, 750, 1500, 3003]
    ted_sizes = [25, 50, 100, 200] if quick else [50, 100, 200, 400]
    n = kernel_sizes[-1]
    texts = list(dict.fromkeys(ref[:n] + hyp[:n]))
    tree_of = {t: from_chunks(p.words, p.pos, p.chunks) for t, p in zip(texts, annotate("shallow", texts))}
    for tree in tree_of.values():
        tree.index.height  # the node index the one-pair kernels read, built once (not timed)
    refs, hyps = [tree_of[t] for t in ref[:n]], [tree_of[t] for t in hyp[:n]]

    def cold(fn):  # each run recomputes every K(t, t): the trees' caches are emptied first
        def run():
            for tree in tree_of.values():
                tree.index.cache.clear()
            return fn()
        return run

    rows = [row("sst kernel", "segments", "naive SST (all node pairs)", kernel_sizes,
                lambda k: cold(lambda: TreeKernel("sst").pairs(hyps[:k], refs[:k])),
                lambda k: cold(lambda: normalised_per_pair(sst_naive, hyps[:k], refs[:k])), repeat)]
    rows.append(row("tree edit distance", "segments", "zss", ted_sizes,
                    lambda k: (lambda: [tree_edit_distance(h, r) for h, r in zip(hyps[:k], refs[:k])]),
                    lambda k: (lambda: [tree_edit_distance(h, r, backend="zss") for h, r in zip(hyps[:k], refs[:k])]),
                    repeat))
    return rows


def queen_pair(n_ref, n_cand=10, m=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((m, n_cand, n_ref)), rng.random((m, n_ref, n_ref))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--repeat", type=positive_int, default=2, help="runs per size (the best is kept)")
    ap.add_argument("--meteor", action="store_true", help="METEOR vs NLTK (needs NLTK_DATA with WordNet)")
    ap.add_argument("--plots", default=None, help="folder for the log-log plots (PNG)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--goals", action="store_true",
                    help="also the goals of the heterogeneous metrics and the lexical whole-process rows "
                         "(bench_goals.py: about 5 minutes)")
    ap.add_argument("--goals-train", action="store_true",
                    help="the goals and the cold combo train on WMT12's four pairs (about 12 minutes more)")
    ap.add_argument("--render", default=None, metavar="JSON",
                    help="only draw the plots (to --plots, default docs/benchmarks) from a JSON written by --json")
    args = ap.parse_args()
    if args.render:
        try:
            rows = json.loads(Path(args.render).read_text(encoding="utf-8"))["rows"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            ap.error(f"--render {args.render}: not a JSON written by --json ({type(err).__name__}: {err}) "
                     "(fix: give the file a run's --json wrote)")
        print(f"wrote {plot(rows, Path(args.plots or ROOT / 'docs' / 'benchmarks'))}")
        return
    ref, systems = load()
    one = dict(list(systems.items())[:1])
    seg_sizes = [250, 500, 1000, 2000] if args.quick else [375, 750, 1500, 3003]
    load_avg = os.getloadavg()[0]
    rows = []
    metrics = ["bleu", "chrf", "ter", "rouge-l", "wer"] + (["meteor"] if args.meteor else [])
    if args.meteor:  # WordNet loaded on both sides before any timing (NLTK's load took 4.6 s of its first call)
        from nltk.corpus import wordnet

        from combo.analysis.wordnet import load_wordnet

        wordnet.ensure_loaded()
        load_wordnet()
    for metric in metrics:
        rows.append(row(metric, "segments", PEERS[metric], seg_sizes,
                        lambda n, m=metric: combo_rows(m, one, ref[:n]),
                        lambda n, m=metric: peer_rows(m, one, ref[:n]), args.repeat))
    sys_sizes = [2, 4, 8, 16]
    n_seg = 500 if args.quick else 1000
    rows.append(row("bleu", "systems", PEERS["bleu"], sys_sizes,
                    lambda k: combo_rows("bleu", dict(list(systems.items())[:k]), ref[:n_seg]),
                    lambda k: peer_rows("bleu", dict(list(systems.items())[:k]), ref[:n_seg]), args.repeat))
    from combo.meta.queen import queen, queen_naive

    ref_sizes = [8, 16, 24, 32] if args.quick else [8, 16, 32, 48]
    rows.append(row("queen", "references", "enumeration of triples", ref_sizes,
                    lambda n: (lambda c=queen_pair(n): queen(*c)),
                    lambda n: (lambda c=queen_pair(n): queen_naive(*c)), args.repeat))
    lexical = ["bleu", "chrf", "ter", "wer", "per", "rouge-1", "rouge-l", "gtm"]
    rows.append(row("score_testbed", "metrics", "-", [1, 2, 4, 8],
                    lambda k: combo_rows(lexical[:k], one, ref[:n_seg]), None, args.repeat))
    rows += tree_rows(ref, next(iter(one.values())), args.repeat, args.quick)
    print()
    print(f"load average at start {load_avg:.1f}, at end {os.getloadavg()[0]:.1f}")
    print("| benchmark | grows with | sizes | peer | combo s (largest) | peer s (largest) | combo / peer | "
          "exponent combo | exponent peer | peak MB |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = "-" if r["ratio_at_largest"] is None else f"{r['ratio_at_largest']:.3f}"
        pe = "-" if r["peer_exponent"] is None else f"{r['peer_exponent']:.2f}"
        ps = "-" if r["ratio_at_largest"] is None else f"{r['peer_s'][-1]:.3f}"
        print(f"| {r['benchmark']} | {r['dimension']} | {', '.join(map(str, r['sizes']))} | {r['peer']} | "
              f"{r['combo_s'][-1]:.3f} | {ps} | {ratio} | {r['exponent']:.2f} | {pe} | {r['peak_mb']:.0f} |")
    goals = None
    if args.goals or args.goals_train:  # --goals-train alone asks for the goals too
        import bench_goals

        goals = bench_goals.goal_rows(train=args.goals_train)
        print()
        bench_goals.print_table(goals)
    if args.plots:
        plot(rows, Path(args.plots))
    if args.json:
        Path(args.json).write_text(json.dumps({"load": load_avg, "rows": rows, "goals": goals}, indent=1))


def plot(rows, folder: Path) -> Path:
    """Log-log time against size, a panel per dimension, combo solid and its peer dashed (one colour per
    benchmark), drawn by the report's plotting module."""
    from combo.report import plots

    folder.mkdir(parents=True, exist_ok=True)
    dims = sorted({r["dimension"] for r in rows}, key=["segments", "systems", "references", "metrics"].index)
    panels = {}
    for dim in dims:
        panels[dim] = []
        for r in (r for r in rows if r["dimension"] == dim):
            panels[dim].append(plots.Series(f"combo {r['benchmark']} (b={r['exponent']:.2f})", r["sizes"],
                                            r["combo_s"], colour_key=r["benchmark"]))
            if r["peer_exponent"] is not None:
                panels[dim].append(plots.Series(f"{r['peer']} (b={r['peer_exponent']:.2f})", r["sizes"], r["peer_s"],
                                                colour_key=r["benchmark"], dashed=True))
    path = folder / "scaling.png"
    path.write_bytes(plots.line_panels({f"grows with {d}": panels[d] for d in dims}, xlabel="size",
                                       ylabel="seconds", log_x=True, log_y=True, panel_width=4.2, panel_height=3.6))
    return path


if __name__ == "__main__":
    main()
