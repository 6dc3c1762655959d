"""WMT12 out of English: the tuned metric on language pairs no experiment here has looked at.

Protocol (issue 5, "tried on test beds it never saw"), written and committed
before any metric was scored on these pairs:

* Held-out data: WMT12 newstest2012 en-cs, en-de, en-es, en-fr (``read_wmt12``),
  all 3,003 segments, one reference, every system, the human relative
  rankings as non-tie preference pairs with each judge's kept. No earlier
  experiment, test or model of this project scored them.
* Features, chosen by a rule and not by results: the lexical ``FEATURES`` of
  ``wmt12_tuned.py`` that are defined for any target language, i.e. without
  METEOR (its stem and synonym stages are English: Porter, WordNet) and with
  every ROUGE variant on the 13a tokenizer (ROUGE's default tokenizer, as
  rouge-score's, treats every character outside [a-z0-9] as a separator and
  would cut Czech, German, Spanish and French words apart). 22 metrics. The
  English-only analyses (parsers, GloVe, MiniLM) are left out for the same
  reason.
* Tuned metric: exactly as in ``wmt12_tuned.py`` (pairwise logistic
  ranking, features min-max normalised per training pair, C by 5-fold
  GroupKFold over training segments, applied as the saved model with its
  stored ranges).
* (a) transfer: one model trained on the four into-English pairs, applied
  to each out-of-English pair; (b) leave one out-of-English pair out (train
  on three, test on the fourth); (c) 10-fold cross-validation by segment
  within each out-of-English pair.
* Baselines on each test pair: the ULC of the same 22 metrics (min-max over
  the test pair's own scores, no labels); the best single metric chosen on
  the training data (the into-English pairs for (a), the three training
  pairs for (b), the training folds' pair for (c) = the oracle there); and,
  for reference, the oracle best single metric on the test pair itself.
* Measures as in ``wmt12_tuned.py``: WMT12 Kendall with metric ties
  discordant (headline) and excluded, system Spearman and Pearson with the
  share of wins, 95% percentile bootstrap intervals (1,000 resamples),
  tuned minus baselines by paired bootstrap; the ordering tuned > ULC > best
  single counted per pair, with the oracle single metric as in the into-English
  study and with the one chosen on training data.
* For comparison only (not held out): leave one into-English pair out with
  the same 22 features.

Usage::

    python experiments/wmt12_out_of_english.py --data ../shared/data/wmt12 --cache ~/.cache/combo/wmt12 --out out.json
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wmt12_tuned import (FEATURES, PairEvaluation, best_single_on, evaluate_scores, parse_args,  # noqa: E402
                         select_metrics, single_scores, system_means, write_json)
from wmt12_tuned import tabulate as tabulate_rows  # noqa: E402

OUT_OF_ENGLISH = ("en-cs", "en-de", "en-es", "en-fr")
INTO_ENGLISH = ("cs-en", "de-en", "es-en", "fr-en")


def unicode_safe(spec: str) -> str:
    """A ROUGE spec on the 13a tokenizer (ROUGE's default drops every non-ASCII letter); others unchanged."""
    if not spec.startswith("rouge"):
        return spec
    return spec + (",tokenize=13a" if ":" in spec else ":tokenize=13a")


MULTILINGUAL = [unicode_safe(s) for s in FEATURES if s != "meteor"]


def tabulate(evals, lps, rows, args):
    """:func:`wmt12_tuned.tabulate` with both single-metric baselines, and the pairs where the ordering holds."""
    table = tabulate_rows(evals, lps, rows, args, against=("ulc", "single_trained", "single_oracle"))
    k = "kendall_discordant"
    per = {name: {lp: table[name]["per_pair"][lp][k] for lp in lps} for name in table}
    table["order"] = {single: [lp for lp in lps if per["tuned"][lp] > per["ulc"][lp] > per[single][lp]]
                      for single in ("single_oracle", "single_trained")}
    return table


def run(args) -> dict:
    from combo import score_testbed
    from combo.combine.training import TrainOptions, cross_validate, fit_model, training_data
    from combo.combine.ulc import ulc
    from combo.io import read_wmt12

    specs = MULTILINGUAL
    t0 = time.perf_counter()
    testbeds = {lp: read_wmt12(args.data, lp) for lp in INTO_ENGLISH + OUT_OF_ENGLISH}
    tables = {lp: select_metrics(score_testbed(tb, specs, jobs=args.jobs, cache_dir=args.cache), specs)
              for lp, tb in testbeds.items()}
    results = {"features": specs, "scoring_seconds": time.perf_counter() - t0, "pairs": {}}
    evals = {lp: PairEvaluation(lp, testbeds[lp], tables[lp]) for lp in testbeds}
    for lp in testbeds:
        results["pairs"][lp] = {"non_tie_pairs": len(evals[lp].pairs), "ties_dropped": evals[lp].pairs.ties_dropped,
                                "systems": len(tables[lp].systems)}
    hib = np.asarray(tables[INTO_ENGLISH[0]].higher_is_better, bool)
    results["single_metrics"] = {
        spec: {lp: evaluate_scores(evals[lp], *single_scores(tables[lp], k)) for lp in testbeds}
        for k, spec in enumerate(specs)}

    def trained(train_lps):
        """A model trained on ``train_lps`` and what it chose (C, weights)."""
        model = fit_model(training_data([(testbeds[o], tables[o]) for o in train_lps], "testbed"), TrainOptions())
        return model, {"C": model.training["estimator"]["C"],
                       "weights": dict(zip(specs, model.weights.round(4).tolist()))}

    studies = {"transfer": OUT_OF_ENGLISH, "lopo": OUT_OF_ENGLISH, "cv10": OUT_OF_ENGLISH,
               "lopo_into_english": INTO_ENGLISH}
    for study, lps in studies.items():
        rows = {name: {} for name in ("tuned", "ulc", "single_trained", "single_oracle")}
        chosen = {}
        if study == "transfer":  # one model and one single metric, from the into-English pairs
            into_english = trained(INTO_ENGLISH)
            trained_single = best_single_on(evals, tables, INTO_ENGLISH, len(specs))
        for lp in lps:
            if study == "cv10":
                cv = cross_validate(training_data([(testbeds[lp], tables[lp])], "testbed"), TrainOptions(), folds=10)
                raw, info = cv.raw, {"C": [m.training["estimator"]["C"] for m in cv.models]}
                single = best_single_on(evals, tables, [lp], len(specs))
            else:
                train = INTO_ENGLISH if study == "transfer" else [o for o in lps if o != lp]
                model, info = into_english if study == "transfer" else trained(train)
                raw = model.raw_scores(tables[lp].segment)
                single = trained_single if study == "transfer" else best_single_on(evals, tables, train, len(specs))
            oracle = best_single_on(evals, tables, [lp], len(specs))
            rows["tuned"][lp] = (expit(raw), system_means(tables[lp], raw))
            rows["ulc"][lp] = (ulc(tables[lp].segment, hib), ulc(tables[lp].system, hib))
            rows["single_trained"][lp] = single_scores(tables[lp], single)
            rows["single_oracle"][lp] = single_scores(tables[lp], oracle)
            chosen[lp] = dict(info, single_trained=specs[single], single_oracle=specs[oracle])
        table = tabulate(evals, lps, rows, args)
        results[study] = {"table": table, "chosen": chosen}
        avg = {name: table[name]["average"]["kendall_discordant"] for name in rows}
        print(f"[{study}] " + " ".join(f"{n} {v:.4f}" for n, v in avg.items())
              + f" | order (oracle single) on {table['order']['single_oracle']}", file=sys.stderr)
    return results


LABELS = {"tuned": "tuned (pairwise LR, 22 features)", "ulc": "ULC (same 22 metrics)",
          "single_trained": "best single chosen on training data",
          "single_oracle": "best single (oracle on the test pair)"}
TITLES = {"transfer": "(a) trained on the four into-English pairs, tested out of English",
          "lopo": "(b) leave one out-of-English pair out", "cv10": "(c) 10-fold CV by segment within each pair",
          "lopo_into_english": "for comparison, not held out: leave one into-English pair out"}


def markdown(results) -> str:
    out = []
    for study, title in TITLES.items():
        res = results[study]
        table = res["table"]
        lps = list(res["chosen"])
        out.append(f"**{title}**\n")
        out.append("| metric | " + " | ".join(lps) + " | average [95% CI] | ties excluded, average | "
                   "system Spearman, average [95% CI] |")
        out.append("|---|" + "---|" * (len(lps) + 3))
        for name, label in LABELS.items():
            entry = table[name]
            if name.startswith("single"):
                label += " (" + ", ".join(f"{lp}: {res['chosen'][lp][name]}" for lp in lps) + ")"
            per = " | ".join(f"{entry['per_pair'][lp]['kendall_discordant']:.3f}" for lp in lps)
            avg = entry["average"]
            iv = avg.get("interval", {})

            def cell(key):
                return f"{avg[key]:.3f}" + (f" [{iv[key][0]:.3f}, {iv[key][1]:.3f}]" if key in iv else "")
            out.append(f"| {label} | {per} | {cell('kendall_discordant')} | {avg['kendall_excluded']:.3f} | "
                       f"{cell('spearman')} |")
        for other in ("ulc", "single_trained", "single_oracle"):
            diff = table["tuned"].get(f"minus_{other}")
            if diff:
                out.append(f"\ntuned minus {other}: {diff['delta']:+.4f} [{diff['interval'][0]:+.4f}, "
                           f"{diff['interval'][1]:+.4f}], paired bootstrap p = {diff['p_value']:.3f}")
        order = {k: ", ".join(v) or "none" for k, v in table["order"].items()}
        out.append(f"\ntuned > ULC > best single on: oracle single {order['single_oracle']}; "
                   f"single chosen on training data {order['single_trained']}; "
                   f"C {[res['chosen'][lp]['C'] for lp in lps]}\n")
    lps = list(results["pairs"])
    out.append("**single metrics** (WMT12 Kendall, ties discordant)\n")
    out.append("| metric | " + " | ".join(lps) + " |")
    out.append("|---|" + "---|" * len(lps))
    for spec, per in results["single_metrics"].items():
        out.append(f"| {spec} | " + " | ".join(f"{per[lp]['kendall_discordant']:.3f}" for lp in lps) + " |")
    return "\n".join(out)


def main(argv=None):
    args = parse_args(__doc__.split("\n")[0], argv)
    results = run(args)
    write_json(results, args.out)
    print(markdown(results))


if __name__ == "__main__":
    main()
