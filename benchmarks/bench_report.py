"""The report of a full-size run: WMT12 de-en, 20 metrics, a search and a tuned model; its size and render time.

Steps, each timed, all through the command line as a user runs them:

1. ``combo train`` a tuned metric (pairwise logistic ranking over BLEU, chrF,
   TER and METEOR) on WMT12 **cs-en**, so that on de-en it is held out;
2. ``combo report`` on WMT12 de-en (3,003 segments, 16 systems, 11,934 non-tie
   preference pairs) with the 17 lexical metrics of ``combo search``, two
   GloVe embedding metrics and the tuned model (20 metrics), ``--search wmt_kendall``
   and 1,000 bootstrap resamples;
3. the page opened in headless Chromium (``tests/chromium.py``): load time
   (navigation start to the ``load`` event, as the page measures it), console
   messages, blank figures and unsorted table columns;
4. with ``--compare``: ``combo evaluate --format json`` of the same run, and
   whether every number of the report equals it.

    NLTK_DATA=../shared/data/nltk_data python benchmarks/bench_report.py --data ../shared/data/wmt12 \\
        --out bench-results/report --cache ~/.cache/combo/wmt12 [--compare] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

LEXICAL = ("bleu", "bleu:max_order=2", "nist", "chrf", "chrf++", "ter", "wer", "per", "rouge-1", "rouge-2",
           "rouge-l", "rouge-w", "rouge-su", "meteor", "gtm", "gtm:e=2", "cider")
EMBEDDING = ("emb-avg", "emb-greedy")
TUNED_FEATURES = ("bleu", "chrf", "ter", "meteor")


def combo(*args: str) -> float:
    """Run ``combo ARGS`` (this checkout) and return its wall time; stop on failure."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "combo.cli", *args], env=env, capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"combo {' '.join(args)} failed:\n{res.stderr}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="The WMT12 folder (wmt12.RNK_results.csv, plain/).")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-results" / "report")
    ap.add_argument("--cache", default=None, help="Score cache folder shared between runs.")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--compare", action="store_true", help="Also run combo evaluate and compare every number.")
    ap.add_argument("--json", type=Path, default=None, help="Write the figures here.")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cache = ["--cache", args.cache] if args.cache else []
    model = args.out / "tuned-cs-en.json"
    figures = {}
    figures["train_s"] = combo("train", "--testbed", str(args.data), "--lp", "cs-en", "--folds", "0", "-q",
                               *[x for m in TUNED_FEATURES for x in ("-m", m)], "--out", str(model), *cache)
    metrics = [x for m in (*LEXICAL, *EMBEDDING, str(model)) for x in ("-m", m)]
    page = args.out / "wmt12-de-en.html"
    figures["report_s"] = combo("report", "--testbed", str(args.data), "--lp", "de-en", *metrics, "--search",
                                "wmt_kendall", "--bootstrap", str(args.bootstrap), "-q", "--out", str(page), *cache)
    figures["metrics"] = len(metrics) // 2
    figures["size_mb"] = page.stat().st_size / 1e6
    text = page.read_text(encoding="utf-8")
    figures["figures"] = text.count("<figure ")

    from chromium import check_page

    check = check_page(page, args.out / "wmt12-de-en.png")
    figures.update({"load_ms": check.load_ms, "page_height_px": check.height,
                    "console_messages": len(check.console) + len(check.errors),
                    "blank_figures": len(check.blank_figures), "unsorted_columns": len(check.unsorted),
                    "chromium_probe_run_s": check.seconds["probe_run"]})
    if args.compare:
        doc = json.loads(re.search(r'id="combo-evaluation">(.*?)</script>', text, re.S).group(1)
                         .replace("<\\/", "</"))
        evaluated = args.out / "evaluate.json"
        figures["evaluate_s"] = combo("evaluate", "--testbed", str(args.data), "--lp", "de-en", *metrics,
                                      "--criteria", ",".join(doc["criteria"]), "--bootstrap", str(args.bootstrap),
                                      "--format", "json", "-q", "--out", str(evaluated), *cache)
        figures["numbers_equal_evaluate"] = json.loads(evaluated.read_text(encoding="utf-8"))["rows"] == doc["rows"]
    for k, v in figures.items():
        print(f"{k:24} {v:.3f}" if isinstance(v, float) else f"{k:24} {v}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
