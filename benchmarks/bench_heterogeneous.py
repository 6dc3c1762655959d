"""The heterogeneous metric set on the four WMT12 into-English pairs: cold and warm, time and peak memory.

One ``combo train`` of ``@heterogeneous`` (37 metrics: lexical, shallow-syntactic, dependency and
constituency, tree kernels, GloVe and MiniLM) on cs-en, de-en, es-en and fr-en together, leaving one pair
out, as docs/learned.md reports it (.326). The first run starts from empty caches (the analysis cache
in a fresh ``COMBO_CACHE_DIR``, and the default score cache ``scores/`` in it) and scores everything; the second
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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stream import DATA, cold_env, emit, save, timed  # noqa: E402

PAIRS = ("cs-en", "de-en", "es-en", "fr-en")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--metrics", default="@heterogeneous")
    ap.add_argument("--pairs", default=",".join(PAIRS), help="comma-separated WMT12 into-English pairs")
    ap.add_argument("--score-only", action="store_true", help="combo score of each pair, cold, instead of train")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pairs = args.pairs.split(",")
    jobs = ["-q", "-j", str(args.jobs)]

    def score(lp, cache):  # each run's scores go to scores/ in its cache folder (the default score cache)
        return ["score", "--testbed", str(DATA / "wmt12"), "--lp", lp, "-m", args.metrics, "--level", "segment",
                "--out", str(cache / f"{lp}.tsv"), *jobs]

    rows = []
    if args.score_only:
        for lp in pairs:
            env, cache = cold_env("combo-heterogeneous-")
            figures, _ = timed(score(lp, cache), env)
            emit(rows, {"run": f"score {lp}, cold", "jobs": args.jobs, **figures})
    else:
        env, cache = cold_env("combo-heterogeneous-")
        train = ["train", "--testbed", str(DATA / "wmt12"), "--lp", args.pairs, "-m", args.metrics,
                 "--cv", "testbed", "--out", str(cache / "model.json"), "--format", "json", *jobs]
        for label in ("train, cold", "train, warm"):
            figures, out = timed(train, env)
            cv = json.loads(out)["cross_validation"]
            emit(rows, {"run": label, "jobs": args.jobs, **figures,
                        "held_out": {"tuned": cv["tuned"], "ulc": cv["ulc"], "best_single": cv["best_single"]}})
        for lp in pairs:
            figures, _ = timed(score(lp, cache), env)
            emit(rows, {"run": f"score {lp}, warm", "jobs": args.jobs, **figures})
    save(rows, args.json)


if __name__ == "__main__":
    main()
