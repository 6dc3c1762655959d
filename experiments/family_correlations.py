"""Segment-level correlation of every metric family with human judgments: WMT12 de-en and Flickr8k-Expert.

* WMT12 de-en (newstest2012, 16 systems x 3,003 segments, one reference):
  WMT12 Kendall tau over the human relative-ranking pairs (human ties left
  out, metric ties counted as discordant), with a 95% bootstrap interval over
  the pairs (``MetaEvaluator``, as ``combo evaluate --criteria kendall``).
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


def flickr8k_expert(root: Path):
    captions = dict(line.split("\t") for line in (root / "Flickr8k.token.txt").read_text(encoding="utf-8").splitlines())
    by_image = {}
    for key, caption in captions.items():
        by_image.setdefault(key.split("#")[0], []).append(caption)
    hyps, refs, expert = [], [], []
    for line in (root / "ExpertAnnotations.txt").read_text(encoding="utf-8").splitlines():
        image, candidate, *scores = line.split("\t")
        if candidate.split("#")[0] == image:
            continue
        hyps.append(captions[candidate])
        refs.append(by_image[image])
        expert.append([float(s) for s in scores])
    return hyps, refs, np.asarray(expert)


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
    hyps, refs, expert = flickr8k_expert(args.data / "flickr8k")
    print(f"{'metric':<26}{'family':<19}{'WMT12 de-en tau':>22}{'Flickr8k tau-c':>16}{'seconds':>9}")
    for name in metrics:
        start = time.perf_counter()
        table = score_testbed(tb, [name], cache_dir=args.cache)
        evaluator = MetaEvaluator(tb, table)
        q = evaluator.with_interval(evaluator.quality([0], "kendall"))
        metric = get_metric(name)
        seg = metric.segment_scores(hyps, refs)
        sign = 1.0 if metric.higher_is_better else -1.0  # error rates: fewer errors, better caption
        x = np.repeat(sign * seg, expert.shape[1])
        tau_c = kendalltau(x, expert.ravel(), variant="c").statistic * 100
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
