"""A tuned metric trained on WMT12 translation judgments, applied to image captions (Flickr8k-Expert).

Protocol (issue 5, "tried on test beds it never saw"), written and committed
before any tuned or ULC score on Flickr8k was computed (each single metric's
Flickr8k figure is already in docs/families.md):

* Training: the four WMT12 into-English pairs, exactly as in
  ``wmt12_tuned.py`` (pairwise logistic ranking, ranges per pair, C by
  grouped CV on WMT12 segments). One model per feature set fixed there:
  ``full`` (23 lexical metrics) and ``heterogeneous`` (36: lexical,
  shallow-syntactic, syntactic, word-embedding). The set with the MiniLM
  sentence cosine is left out: MiniLM's training data include Flickr30k
  captions, a superset of Flickr8k's images.
* Test: Flickr8k-Expert (``read_flickr8k``: 5,664 image-caption pairs, each
  candidate against the image's five captions, three expert scores 1-4 each),
  the protocol of docs/families.md: Kendall tau-c x 100 between a metric's
  segment score and every expert score (one row per expert score). Nothing
  on Flickr8k is used to train, normalise or choose anything: the model is
  applied with the ranges stored from WMT12.
* Baselines on Flickr8k: the ULC of the same metrics (min-max over Flickr8k's
  own scores, no labels); the best single metric chosen on the WMT12 training
  pairs; and, for reference, the oracle best single metric on Flickr8k.
* 95% percentile bootstrap intervals (1,000 resamples) over the 5,664
  candidates (their three expert rows move together); tuned minus each
  baseline with the same resamples.

Usage::

    python experiments/flickr8k_transfer.py --data ../shared/data --cache ~/.cache/combo/wmt12 --out transfer.json
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wmt12_tuned import (FEATURES, HETEROGENEOUS, PairEvaluation, best_single_on, parse_args,  # noqa: E402
                         select_metrics, write_json)

CONFIGS = {"full": FEATURES, "heterogeneous": HETEROGENEOUS}


def tau_c(x, y) -> float:
    """Kendall tau-c x 100 of paired rows."""
    return kendalltau(x, y, variant="c").statistic * 100


def expert_rows(testbed, table):
    """Index of each expert score's candidate row in ``table``, and the scores: shape (candidates, 3) each."""
    row = {(int(s), int(i)): k for k, (s, i) in enumerate(zip(table.row_system, table.row_segment))}
    system = {name: s for s, name in enumerate(table.systems)}
    by_candidate = {}
    for sc in testbed.scores:
        by_candidate.setdefault(row[(system[sc.system], sc.segment)], []).append(sc.value)
    idx = np.array(sorted(by_candidate))
    if {len(v) for v in by_candidate.values()} != {3}:
        raise ValueError("every Flickr8k-Expert candidate should have three expert scores")
    return idx, np.array([by_candidate[k] for k in idx], dtype=np.float64)


def interval(values_per_method, experts, n_resamples, seed):
    """Percentile bootstrap over candidates (their three expert rows together) of each method's tau-c and of
    the first method (tuned) minus each other, all from the same resamples."""
    names = list(values_per_method)
    x = np.stack([values_per_method[n] for n in names])  # (methods, candidates)

    def taus(idx):
        y = experts[idx].ravel()
        t = [tau_c(np.repeat(x[m, idx], experts.shape[1]), y) for m in range(len(names))]
        return t + [t[0] - v for v in t[1:]]

    rng = np.random.default_rng(seed)
    n = x.shape[1]
    value = taus(np.arange(n))
    samples = np.array([taus(rng.integers(0, n, n)) for _ in range(n_resamples)])
    labels = names + [f"tuned minus {name}" for name in names[1:]]
    return {label: {"value": float(value[j]),
                    "interval": np.percentile(samples[:, j], [2.5, 97.5]).tolist() if n_resamples else [np.nan] * 2}
            for j, label in enumerate(labels)}


def run(args) -> dict:
    from combo import score_testbed
    from combo.combine.training import TrainOptions, fit_model, training_data
    from combo.combine.ulc import ulc
    from combo.io import WMT12_INTO_ENGLISH, read_wmt12_into_english
    from combo.io.flickr8k import read_flickr8k

    os.environ.setdefault("NLTK_DATA", str(Path(args.data) / "nltk_data"))
    wmt = read_wmt12_into_english(Path(args.data) / "wmt12")
    flickr = read_flickr8k(Path(args.data) / "flickr8k", judgments="expert")
    specs_all = CONFIGS["heterogeneous"]
    wmt_tables = {lp: score_testbed(wmt[lp], specs_all, jobs=args.jobs, cache_dir=args.cache)
                  for lp in WMT12_INTO_ENGLISH}
    flickr_table = score_testbed(flickr, specs_all, jobs=args.jobs, cache_dir=args.cache)
    idx, experts = expert_rows(flickr, flickr_table)
    results = {"candidates": int(len(idx)), "expert_rows": int(experts.size)}
    for cname, specs in CONFIGS.items():
        train = {lp: select_metrics(wmt_tables[lp], specs) for lp in WMT12_INTO_ENGLISH}
        test = select_metrics(flickr_table, specs)
        sign = np.where(np.asarray(test.higher_is_better, bool), 1.0, -1.0)
        model = fit_model(training_data([(wmt[lp], train[lp]) for lp in WMT12_INTO_ENGLISH], "testbed"),
                          TrainOptions())
        evals = {lp: PairEvaluation(lp, wmt[lp], train[lp]) for lp in WMT12_INTO_ENGLISH}
        chosen = best_single_on(evals, train, WMT12_INTO_ENGLISH, len(specs))
        flickr_tau = [tau_c(np.repeat(sign[k] * test.segment[k][idx], 3), experts.ravel()) for k in range(len(specs))]
        oracle = int(np.argmax(flickr_tau))
        methods = {
            "tuned": model.raw_scores(test.segment)[idx],
            "ulc": ulc(test.segment, np.asarray(test.higher_is_better, bool))[idx],
            "single_chosen_on_wmt12": sign[chosen] * test.segment[chosen][idx],
            "single_oracle_on_flickr8k": sign[oracle] * test.segment[oracle][idx],
        }
        results[cname] = {"C": model.training["estimator"]["C"], "single_chosen_on_wmt12": specs[chosen],
                          "single_oracle_on_flickr8k": specs[oracle],
                          "weights": dict(zip(specs, model.weights.round(4).tolist())),
                          "tau_c": interval(methods, experts, args.bootstrap, args.seed)}
        print(f"[{cname}] " + ", ".join(f"{k} {v['value']:.2f}" for k, v in results[cname]["tau_c"].items()),
              file=sys.stderr)
    return results


def markdown(results) -> str:
    out = ["| features | tuned (trained on WMT12) | ULC (same metrics) | best single chosen on WMT12 | "
           "best single, oracle on Flickr8k | tuned − ULC | tuned − chosen single |",
           "|---|---|---|---|---|---|---|"]
    for cname, specs in CONFIGS.items():
        r = results[cname]
        t = r["tau_c"]

        def cell(key, label=""):
            v = t[key]
            return f"{label}{v['value']:.1f} [{v['interval'][0]:.1f}, {v['interval'][1]:.1f}]"
        out.append(f"| {cname} ({len(specs)}) | {cell('tuned')} | {cell('ulc')} | "
                   f"{cell('single_chosen_on_wmt12', r['single_chosen_on_wmt12'] + ' ')} | "
                   f"{cell('single_oracle_on_flickr8k', r['single_oracle_on_flickr8k'] + ' ')} | "
                   f"{cell('tuned minus ulc')} | {cell('tuned minus single_chosen_on_wmt12')} |")
    return "\n".join(out)


def main(argv=None):
    args = parse_args(__doc__.split("\n")[0], argv, data=Path(__file__).resolve().parents[2] / "shared" / "data",
                      data_help="the shared data folder (wmt12/, flickr8k/, nltk_data/)")
    results = run(args)
    write_json(results, args.out)
    print(markdown(results))


if __name__ == "__main__":
    main()
