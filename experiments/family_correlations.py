"""Segment-level correlation of every metric family with human judgments: WMT12 de-en and Flickr8k-Expert.

* WMT12 de-en (newstest2012, 16 systems x 3,003 segments, one reference):
  WMT12 Kendall tau over the human relative-ranking pairs (human ties left
  out, metric ties counted as discordant), with a 95% bootstrap interval over
  the pairs (``MetaEvaluator``, as ``combo evaluate --criteria wmt_kendall``).
* Flickr8k-Expert (5,664 image-caption pairs after the 158 pairs whose
  candidate is one of the image's own captions; each candidate scored against
  the image's five captions): Kendall tau-c x 100 between the metric and the
  expert scores, each of the three experts' scores its own row (the protocol
  of the CIDEr and SPICE papers); error rates (TER, WER, PER) enter negated.

Nothing is tuned: every metric runs with its defaults. Metrics that need
supplied trees (``dr-tk*``) or a resource missing here are left out and
listed.

    python experiments/family_correlations.py [--data ../shared/data] [--cache DIR] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from combo.errors import ResourceMissing  # noqa: E402
from combo.evaluate import MetaEvaluator  # noqa: E402
from combo.io.flickr8k import read_flickr8k  # noqa: E402
from combo.io.wmt import read_wmt12  # noqa: E402
from combo.metrics.registry import get_metric, list_metrics, metric_class  # noqa: E402
from combo.scoring import score_testbed  # noqa: E402

FAMILY_ORDER = ("lexical", "shallow-syntactic", "syntactic", "embedding")
SKIP = ("rouge-n", "rouge-s")  # generic forms of rouge-1/2 and rouge-s* kept under their usual names


def default_metrics():
    """Every registered metric at its defaults that needs no supplied trees and is available here."""
    usable, left_out = [], []
    for name in list_metrics():
        cls = metric_class(name)
        if name in SKIP or cls.family not in FAMILY_ORDER or name.startswith("dr-tk"):
            continue
        try:
            get_metric(name).check_resources()
            usable.append(name)
        except ResourceMissing as err:
            left_out.append(f"{name} ({err})")
    slow = ("ted", "sent-emb")  # the costliest last
    usable.sort(key=lambda n: (n in slow, FAMILY_ORDER.index(metric_class(n).family), n))
    return usable, left_out


def flickr8k_tau_c(testbed, table) -> float:
    """Kendall tau-c x 100 between the table's (only) metric and every expert score of its candidate."""
    row = {(int(s), int(i)): k for k, (s, i) in enumerate(zip(table.row_system, table.row_segment))}
    system = {name: s for s, name in enumerate(table.systems)}
    sign = 1.0 if table.higher_is_better[0] else -1.0  # error rates: fewer errors, better caption
    x = np.array([sign * table.segment[0, row[(system[sc.system], sc.segment)]] for sc in testbed.scores])
    y = np.array([sc.value for sc in testbed.scores])
    return kendalltau(x, y, variant="c").statistic * 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_data = Path(os.environ.get("COMBO_DATA_DIR", ROOT.parent / "shared" / "data"))
    parser.add_argument("--data", type=Path, default=default_data)
    parser.add_argument("--cache", type=Path, default=None, help="folder caching metric scores")
    parser.add_argument("--metrics", nargs="*", default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    metrics, left_out = (args.metrics, []) if args.metrics else default_metrics()
    results = {"left_out": left_out, "wmt12_de_en": {}, "flickr8k_expert": {}, "seconds": {}}

    tb = read_wmt12(args.data / "wmt12", "de-en")
    flickr = read_flickr8k(args.data / "flickr8k", "expert")
    print(f"{'metric':<26}{'family':<19}{'WMT12 de-en tau':>22}{'Flickr8k tau-c':>16}{'seconds':>9}")
    for name in metrics:
        start = time.perf_counter()
        table = score_testbed(tb, [name], cache_dir=args.cache)
        evaluator = MetaEvaluator(tb, table)
        q = evaluator.with_interval(evaluator.quality([0], "wmt_kendall"))
        tau_c = flickr8k_tau_c(flickr, score_testbed(flickr, [name], cache_dir=args.cache))
        seconds = time.perf_counter() - start
        family = metric_class(name).family
        results["wmt12_de_en"][name] = {"tau": q.value, "low": q.low, "high": q.high, "family": family}
        results["flickr8k_expert"][name] = tau_c
        results["seconds"][name] = seconds
        print(f"{name:<26}{family:<19}{q.value:>8.3f} [{q.low:.3f}, {q.high:.3f}]{tau_c:>16.2f}{seconds:>9.1f}",
              flush=True)
    if left_out:
        print("left out:", "; ".join(left_out))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
