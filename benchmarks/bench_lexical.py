"""Lexical metrics against their reference implementations, in one run, as time ratios.

WMT12 de-en: 16 systems x 3,003 segments, one reference. Each measurement runs
in a fresh process (no warm tokenizer caches on either side) and times only
the scoring, not reading the files. Scores must be identical (1e-9).

    python benchmarks/bench_lexical.py [--data ../shared/data] [--ter-systems 2] [--repeat 3]

Prints one line per metric: peer seconds, combo seconds (one call over all
systems, as ``combo score`` does, and one corpus_score call per system), the
ratio, and the largest score difference.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(data: Path):
    plain = data / "wmt12" / "plain"
    ref = (plain / "references" / "newstest2012-ref.en").read_text(encoding="utf-8").split("\n")[:3003]
    systems = {}
    for f in sorted((plain / "system-outputs" / "newstest2012" / "de-en").iterdir()):
        systems[f.name.split(".", 2)[2]] = f.read_text(encoding="utf-8").split("\n")[:3003]
    return ref, systems


def peer(metric: str, ref, systems):
    warnings.simplefilter("ignore")
    if metric in ("bleu", "chrf", "chrf++", "ter"):
        from sacrebleu.metrics import BLEU, CHRF, TER

        cls = {"bleu": BLEU, "chrf": CHRF, "chrf++": lambda: CHRF(word_order=2), "ter": TER}[metric]
        t = time.perf_counter()
        m = cls()
        scores = [m.corpus_score(h, [ref]).score / 100 for h in systems.values()]
        return time.perf_counter() - t, scores
    if metric == "rouge-l":
        from rouge_score import rouge_scorer

        t = time.perf_counter()
        sc = rouge_scorer.RougeScorer(["rougeL"])
        scores = []
        for h in systems.values():
            vals = [sc.score(r, x)["rougeL"].fmeasure for r, x in zip(ref, h)]
            scores.append(sum(vals) / len(vals))
        return time.perf_counter() - t, scores
    if metric == "wer":
        import jiwer

        t = time.perf_counter()
        scores = [jiwer.wer(ref, h) for h in systems.values()]
        return time.perf_counter() - t, scores
    raise ValueError(metric)


def ours_one_call(metric: str, ref, systems):
    sys.path.insert(0, str(ROOT))
    from combo.scoring import score_testbed
    from combo.testbed import Segment, Testbed

    tb = Testbed(name="de-en", segments=[Segment(id=str(i + 1), references=[r]) for i, r in enumerate(ref)])
    for name, h in systems.items():
        tb.add_system(name, h)
    t = time.perf_counter()
    table = score_testbed(tb, [metric])
    return time.perf_counter() - t, [float(v) for v in table.system[0]]


def ours_per_system(metric: str, ref, systems):
    sys.path.insert(0, str(ROOT))
    import combo

    refs = [[r] for r in ref]
    t = time.perf_counter()
    m = combo.get_metric(metric)
    scores = [m.corpus_score(h, refs) for h in systems.values()]
    return time.perf_counter() - t, scores


def _run(func_name, metric, data, n_systems, queue):
    ref, systems = load(Path(data))
    systems = dict(list(systems.items())[:n_systems])
    queue.put(globals()[func_name](metric, ref, systems))


def measure(func_name, metric, data, n_systems, repeat):
    ctx = mp.get_context("spawn")
    best, scores = float("inf"), None
    for _ in range(repeat):
        q = ctx.Queue()
        p = ctx.Process(target=_run, args=(func_name, metric, str(data), n_systems, q))
        p.start()
        secs, scores = q.get()
        p.join()
        best = min(best, secs)
    return best, scores


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--metrics", nargs="+", default=["bleu", "chrf", "chrf++", "ter", "rouge-l", "wer"])
    ap.add_argument("--ter-systems", type=int, default=2, help="systems for TER (sacreBLEU's TER is slow)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per measurement")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'metric':<9}{'systems':>8}{'peer s':>9}{'one-call s':>12}{'ratio':>7}"
          f"{'per-sys s':>11}{'ratio':>7}{'max |diff|':>12}")
    for metric in args.metrics:
        n = args.ter_systems if metric == "ter" else 16
        rep = 1 if metric == "ter" else args.repeat
        tp, sp = measure("peer", metric, args.data, n, rep)
        t1, s1 = measure("ours_one_call", metric, args.data, n, rep)
        t2, s2 = measure("ours_per_system", metric, args.data, n, rep)
        diff = max(max(abs(a - b) for a, b in zip(sp, s1)), max(abs(a - b) for a, b in zip(sp, s2)))
        rows.append({"metric": metric, "systems": n, "peer_s": tp, "one_call_s": t1, "per_system_s": t2,
                     "ratio_one_call": t1 / tp, "ratio_per_system": t2 / tp, "max_abs_diff": diff})
        print(f"{metric:<9}{n:>8}{tp:>9.2f}{t1:>12.2f}{t1 / tp:>7.2f}{t2:>11.2f}{t2 / tp:>7.2f}{diff:>12.1e}",
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
