"""The heterogeneous metric set on the four WMT12 into-English pairs: cold and warm, time and peak memory.

One ``combo train`` of ``@heterogeneous`` (37 metrics: lexical, shallow-syntactic, dependency and
constituency, tree kernels, GloVe and MiniLM) on cs-en, de-en, es-en and fr-en together, leaving one pair
out, as docs/learned.md reports it (.326). The first run starts from empty caches (the analysis cache
``COMBO_CACHE_DIR`` and the score cache ``--cache``, one folder for both) and scores everything; the second
run reads the scores back. Then ``combo score`` of each pair alone, warm. Reported for each run: wall and
CPU seconds (the command and its workers), the peak of the summed proportional set size of the process
tree (sampled every 0.5 s; shared pages count once), the load average before it, and the trained model's
held-out Kendall.

Run: ``NLTK_DATA=../shared/data/nltk_data python benchmarks/bench_heterogeneous.py --jobs 2 --json out.json``
(76 CPU minutes cold). ``--score-only --pairs de-en`` times ``combo score`` of the named pairs alone, each
cold from empty caches (the heaviest pair: 16 systems x 3,003 segments).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stream import measure as run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
PAIRS = ("cs-en", "de-en", "es-en", "fr-en")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--metrics", default="@heterogeneous")
    ap.add_argument("--pairs", default=",".join(PAIRS), help="comma-separated WMT12 into-English pairs")
    ap.add_argument("--score-only", action="store_true", help="combo score of each pair, cold, instead of train")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.score_only:
        return score_cold(args)
    cache = tempfile.mkdtemp(prefix="combo-heterogeneous-")
    env = dict(os.environ, PYTHONPATH=str(ROOT), COMBO_DATA_HOME=str(DATA), COMBO_CACHE_DIR=cache)
    env.setdefault("NLTK_DATA", str(DATA / "nltk_data"))
    model = Path(cache) / "model.json"
    train = ["train", "--testbed", str(DATA / "wmt12"), "--lp", args.pairs, "-m", args.metrics,
             "--cv", "testbed", "--out", str(model), "--format", "json", "-q", "-j", str(args.jobs),
             "--cache", cache]
    rows = []
    for label, cmd in [("train, cold", train), ("train, warm", train)] + [
            (f"score {lp}, warm", ["score", "--testbed", str(DATA / "wmt12"), "--lp", lp, "-m", args.metrics,
                                   "--level", "segment", "-q", "-j", str(args.jobs), "--cache", cache,
                                   "--out", str(Path(cache) / f"{lp}.tsv")]) for lp in args.pairs.split(",")]:
        load = open("/proc/loadavg").read().split()[0]
        wall, cpu, peak, out = run(cmd, env)
        row = {"run": label, "jobs": args.jobs, "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
               "peak_mb": round(peak), "load_before": load}
        if cmd is train:
            cv = json.loads(out)["cross_validation"]
            row["held_out"] = {"tuned": cv["tuned"], "ulc": cv["ulc"], "best_single": cv["best_single"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


def score_cold(args) -> None:
    """``combo score`` of each pair in a fresh process with empty caches: wall, CPU, peak tree PSS."""
    rows = []
    for lp in args.pairs.split(","):
        cache = tempfile.mkdtemp(prefix="combo-heterogeneous-")
        env = dict(os.environ, PYTHONPATH=str(ROOT), COMBO_DATA_HOME=str(DATA), COMBO_CACHE_DIR=cache)
        env.setdefault("NLTK_DATA", str(DATA / "nltk_data"))
        load = open("/proc/loadavg").read().split()[0]
        wall, cpu, peak, _ = run(["score", "--testbed", str(DATA / "wmt12"), "--lp", lp, "-m", args.metrics,
                                  "--level", "segment", "-q", "-j", str(args.jobs),
                                  "--out", str(Path(cache) / f"{lp}.tsv")], env)
        rows.append({"run": f"score {lp}, cold", "jobs": args.jobs, "seconds": round(wall, 1),
                     "cpu_seconds": round(cpu, 1), "peak_mb": round(peak), "load_before": load})
        print(json.dumps(rows[-1]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
