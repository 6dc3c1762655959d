"""WMT12 into English: a tuned metric (DiscoTK-style pairwise logistic ranking) against ULC and single metrics.

Protocol (issue 5), fixed before any result was looked at:

* Data: WMT12 newstest2012, cs-en, de-en, es-en, fr-en (``read_wmt12``), all
  3,003 segments scored (one reference), human relative rankings as pairs.
* Features, chosen a priori (never by looking at a test pair):
  ``FEATURES`` = the seven lexical metrics of the issue (sentence BLEU, chrF,
  chrF++, TER, ROUGE-L, ROUGE-1, METEOR), the other registered lexical
  metrics in the configurations ``combo search`` uses by default, and the
  precision and recall components of ROUGE-1, ROUGE-2 and ROUGE-L (so that a
  learner can weigh omissions and additions separately). A second,
  secondary configuration ``SEVEN`` uses the seven metrics only. The
  configuration ``HETEROGENEOUS`` adds ``LINGUISTIC``: every shallow-syntactic,
  syntactic and embedding metric at its defaults that needs no supplied
  trees and no optional heavy extra (TED left out for its cost); ``WITH_SENTENCE`` adds the MiniLM
  sentence cosine (the ``sentence`` extra). Both were fixed by that rule when
  these metrics were added, before training on them.
* Tuned metric: :class:`PairwiseLogisticRanker` on min-max normalised
  features (ranges per training language pair), C chosen among
  0.001 ... 1000 by 5-fold GroupKFold over the segments of the training
  data only; applied to the test pair exactly as the saved model file
  (stored, pooled training ranges; segment score sigmoid(w.x), system score
  the mean of w.x).
* (a) leave one language pair out: train on three pairs, test on the fourth;
  (b) 10-fold cross-validation grouped by segment within each pair.
* Baselines on the test pair: ULC of the same metrics (min-max over the test
  pair's own metric scores, no labels) and the best single metric
  (oracle: the best on the test pair itself, the strictest comparison; the
  best on the training pairs is in the JSON output too). Secondary row:
  ridge regression on each candidate's share of wins (Albrecht & Hwa style).
* Segment level: WMT Kendall (WMT12 convention, metric ties discordant) and
  with metric ties excluded; system level: Spearman (WMT12's) and Pearson
  with each system's share of wins. 95% percentile bootstrap intervals over
  preference pairs (segment level) and over systems (system level), 1,000
  resamples; the average over the four pairs resamples the pooled items.

Usage::

    python experiments/wmt12_tuned.py --data ../shared/data/wmt12 --cache ~/.cache/combo/wmt12 --out wmt12_tuned.json

Scores are cached per metric in ``--cache``: the first run scores the four
pairs (about 2 minutes on one core), later runs only train and evaluate.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

from combo.metrics.sets import HETEROGENEOUS as _HETEROGENEOUS_37  # noqa: E402  (one source: -m @heterogeneous)
from combo.metrics.sets import HETEROGENEOUS_NO_SENTENCE, LEXICAL  # noqa: E402
from combo.metrics.sets import LINGUISTIC as _LINGUISTIC  # noqa: E402
from combo.metrics.sets import SEVEN as _SEVEN  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_output import write_json  # noqa: E402,F401  (the studies' one JSON writer)

# The feature sets are combo's named metric sets (combo/metrics/sets.py), so `combo train -m @heterogeneous`
# trains on exactly the features of these figures. Here under the study's own names:
SEVEN = list(_SEVEN)  # @seven
FEATURES = list(LEXICAL)  # @lexical: "full (23)"
# Every registered non-lexical metric at its defaults that runs from installable packages alone
# (no supplied trees, so no DR-TK; no sentence-transformers, so no sent-emb), except TED, left out
# for its cost alone (about an hour of CPU for the ~147,000 rows of the four pairs).
LINGUISTIC = list(_LINGUISTIC)  # @linguistic
HETEROGENEOUS = list(HETEROGENEOUS_NO_SENTENCE)  # @heterogeneous-no-sentence: "heterogeneous (36)"
# ... and the same with the MiniLM sentence cosine (the optional sentence extra).
WITH_SENTENCE = list(_HETEROGENEOUS_37)  # @heterogeneous: "heterogeneous+sentence (37)"
CONFIGS = {"heterogeneous+sentence": WITH_SENTENCE, "heterogeneous": HETEROGENEOUS, "full": FEATURES, "seven": SEVEN}
TIES = ("discordant", "excluded")


def _default_data() -> Path:
    env = os.environ.get("COMBO_DATA_DIR")
    return (Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data") / "wmt12"


def select_metrics(table, specs):
    """The score table restricted to ``specs`` (in that order)."""
    idx = [table.metrics.index(s) for s in specs]
    return dataclasses.replace(table, metrics=list(specs), signatures=[table.signatures[i] for i in idx],
                               higher_is_better=[table.higher_is_better[i] for i in idx],
                               segment=table.segment[idx], system=table.system[idx])


def system_means(table, row_values):
    """Mean of per-row values per system (the tuned metric's corpus score from raw segment scores)."""
    n = len(table.systems)
    return np.bincount(table.row_system, weights=row_values, minlength=n) / np.bincount(table.row_system, minlength=n)


class PairEvaluation:
    """Judgments of one test pair: preference pairs over table rows and human system scores."""

    def __init__(self, lp, testbed, table):
        from combo.combine.training import pairs_from_testbed
        from combo.evaluate import MetaEvaluator

        self.lp = lp
        self.pairs = pairs_from_testbed(testbed, table)  # non-tie preferences, each judge's kept
        self.human_system = MetaEvaluator(testbed, table).human_system_scores()

    def margins(self, row_scores):
        return row_scores[self.pairs.better], row_scores[self.pairs.worse]


def single_scores(table, k):
    """Segment and system scores of the table's metric ``k``, negated for error rates (higher is better)."""
    sign = 1.0 if table.higher_is_better[k] else -1.0
    return sign * table.segment[k], sign * table.system[k]


def best_single_on(evals, tables, lps, n_metrics):
    """Index of the metric with the best mean WMT12 Kendall (ties discordant) over the pairs ``lps``."""
    from combo.combine.training import pair_kendall

    taus = [np.mean([pair_kendall(single_scores(tables[lp], k)[0], evals[lp].pairs).value for lp in lps])
            for k in range(n_metrics)]
    return int(np.argmax(taus))


def kendall(b, w, ties):
    from combo.meta.pairwise import wmt_kendall

    return wmt_kendall(b, w, None, variant="wmt12", ties=ties).value


def system_corr(x, y, method):
    from combo.meta.correlation import correlate

    return correlate(np.asarray(x)[None], np.asarray(y)[None], method=method).value


def evaluate_scores(ev: PairEvaluation, row_scores, system_scores):
    """Segment-level Kendall (both tie rules) and system-level Spearman/Pearson of one metric on one pair."""
    b, w = ev.margins(row_scores)
    out = {f"kendall_{t}": kendall(b, w, t) for t in TIES}
    out.update({m: system_corr(system_scores, ev.human_system, m) for m in ("spearman", "pearson")})
    return out


def bootstrap_average(evals, row_scores_per_lp, system_scores_per_lp, n_resamples, seed):
    """Intervals of the average over pairs: segment level over pooled preference pairs, system level over systems."""
    from combo.meta.correlation import correlation_values
    from combo.meta.significance import bootstrap

    b = np.concatenate([ev.margins(s)[0] for ev, s in zip(evals, row_scores_per_lp)])
    w = np.concatenate([ev.margins(s)[1] for ev, s in zip(evals, row_scores_per_lp)])
    lab = np.concatenate([np.full(len(ev.pairs), k) for k, ev in enumerate(evals)])
    out = {}
    for t in TIES:
        def stat(bb, ww, ll, t=t):
            vals = []
            for k in range(len(evals)):
                m = ll == k
                c = ((bb > ww) & m).sum(-1)
                d = ((bb < ww) & m).sum(-1)
                ties = ((bb == ww) & m).sum(-1)
                num, den = (c - d - ties, c + d + ties) if t == "discordant" else (c - d, c + d)
                vals.append(np.where(den > 0, num / np.maximum(den, 1), np.nan))
            return np.mean(vals, axis=0)
        res = bootstrap(stat, b, w, lab, n_resamples=n_resamples, seed=seed)
        out[f"kendall_{t}"] = [res.low, res.high]
    xs = np.concatenate(system_scores_per_lp)
    ys = np.concatenate([ev.human_system for ev in evals])
    sl = np.concatenate([np.full(len(ev.human_system), k) for k, ev in enumerate(evals)])
    for method in ("spearman", "pearson"):
        def sstat(x, y, ll, method=method):
            vals = []
            for k in range(len(evals)):
                m = ll == k
                vals.append(correlation_values(np.where(m, x, np.nan)[..., None, :],
                                               np.where(m, y, np.nan)[..., None, :], method=method))
            return np.mean(vals, axis=0)
        res = bootstrap(sstat, xs, ys, sl, n_resamples=n_resamples, seed=seed)
        out[method] = [res.low, res.high]
    return out


def paired_difference(evals, scores_a, scores_b, n_resamples, seed):
    """Paired bootstrap over the pooled preference pairs of average Kendall (ties discordant): a minus b."""
    from combo.meta.significance import paired_bootstrap_test

    def stacked(per_lp):
        return np.stack([np.concatenate([ev.margins(s)[j] for ev, s in zip(evals, per_lp)]) for j in (0, 1)])

    lab = np.concatenate([np.full(len(ev.pairs), k) for k, ev in enumerate(evals)])

    def stat(bw, ll):
        bb, ww = bw[..., 0, :], bw[..., 1, :]
        vals = []
        for k in range(len(evals)):
            m = ll == k
            c, d, t = ((bb > ww) & m).sum(-1), ((bb < ww) & m).sum(-1), ((bb == ww) & m).sum(-1)
            vals.append((c - d - t) / np.maximum(c + d + t, 1))
        return np.mean(vals, axis=0)

    res = paired_bootstrap_test(stat, stacked(scores_a), stacked(scores_b), lab, n_resamples=n_resamples, seed=seed)
    return {"delta": res.delta, "p_value": res.p_value, "interval": [res.low, res.high]}


def bootstrap_pair(ev, row_scores, system_scores, n_resamples, seed):
    """Intervals on one pair: Kendall over its preference pairs, correlations over its systems."""
    from combo.meta.correlation import correlation_values
    from combo.meta.pairwise import wmt_kendall_values
    from combo.meta.significance import bootstrap

    b, w = ev.margins(row_scores)
    out = {}
    for t in TIES:
        res = bootstrap(lambda bb, ww, t=t: wmt_kendall_values(bb, ww, None, variant="wmt12", ties=t), b, w,
                        n_resamples=n_resamples, seed=seed)
        out[f"kendall_{t}"] = [res.low, res.high]
    for method in ("spearman", "pearson"):
        res = bootstrap(lambda x, y, method=method: correlation_values(x[..., None, :], y[..., None, :],
                                                                       method=method),
                        np.asarray(system_scores), ev.human_system, n_resamples=n_resamples, seed=seed)
        out[method] = [res.low, res.high]
    return out


def tabulate(evals, lps, rows, args, against):
    """Per-pair and average figures (with intervals) of every row ``{name: {lp: (segment, system scores)}}``,
    and the paired differences of the ``tuned`` row minus each row named in ``against``."""
    table = {}
    for name, per_lp in rows.items():
        entry = {"per_pair": {}, "average": {}}
        for lp in lps:
            vals = evaluate_scores(evals[lp], *per_lp[lp])
            if args.bootstrap:
                vals["interval"] = bootstrap_pair(evals[lp], *per_lp[lp], args.bootstrap, args.seed)
            entry["per_pair"][lp] = vals
        keys = ["kendall_discordant", "kendall_excluded", "spearman", "pearson"]
        entry["average"] = {k: float(np.mean([entry["per_pair"][lp][k] for lp in lps])) for k in keys}
        if args.bootstrap:
            entry["average"]["interval"] = bootstrap_average(
                [evals[lp] for lp in lps], [per_lp[lp][0] for lp in lps], [per_lp[lp][1] for lp in lps],
                args.bootstrap, args.seed)
        table[name] = entry
    if args.bootstrap:
        for other in against:
            table["tuned"][f"minus_{other}"] = paired_difference(
                [evals[lp] for lp in lps], [rows["tuned"][lp][0] for lp in lps], [rows[other][lp][0] for lp in lps],
                args.bootstrap, args.seed)
    return table


def parse_args(description, argv=None, data=None, data_help="WMT12 folder (wmt12.RNK_results.csv, plain/)"):
    """The options the experiments take (``data``: default of ``--data``, the WMT12 folder unless given)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", default=str(data or _default_data()), help=data_help)
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "combo" / "wmt12"),
                        help="Folder caching metric scores")
    parser.add_argument("--out", default=None, help="Write all figures here (JSON)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="Bootstrap resamples (0: no intervals)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    return parser.parse_args(argv)


def fit_on_other_pairs(testbeds, tables, lps, lp):
    """The tuned metric (pairwise LR, default options) trained on every pair of ``lps`` except ``lp``."""
    from combo.combine.training import TrainOptions, fit_model, training_data

    return fit_model(training_data([(testbeds[o], tables[o]) for o in lps if o != lp], "testbed"), TrainOptions())


def run(args) -> dict:
    from combo import score_testbed
    from combo.combine.training import TrainOptions, cross_validate, fit_model, training_data
    from combo.combine.ulc import ulc
    from combo.io import WMT12_INTO_ENGLISH, read_wmt12_into_english

    os.environ.setdefault("NLTK_DATA", str(Path(args.data).parent / "nltk_data"))
    t0 = time.perf_counter()
    testbeds = read_wmt12_into_english(args.data)
    tables = {lp: score_testbed(testbeds[lp], WITH_SENTENCE, jobs=args.jobs, cache_dir=args.cache)
              for lp in WMT12_INTO_ENGLISH}
    scoring_seconds = time.perf_counter() - t0
    lps = list(WMT12_INTO_ENGLISH)
    results = {"features": WITH_SENTENCE, "configs": CONFIGS, "scoring_seconds": scoring_seconds, "pairs": {}}
    evals = {lp: PairEvaluation(lp, testbeds[lp], tables[lp]) for lp in lps}
    for lp in lps:
        results["pairs"][lp] = {"non_tie_pairs": len(evals[lp].pairs), "ties_dropped": evals[lp].pairs.ties_dropped,
                                "systems": len(tables[lp].systems)}

    singles = {}
    for k, spec in enumerate(WITH_SENTENCE):
        per = {lp: evaluate_scores(evals[lp], *single_scores(tables[lp], k)) for lp in lps}
        singles[spec] = {"per_pair": per, "average": {key: float(np.mean([per[lp][key] for lp in lps]))
                                                      for key in per[lps[0]]}}
    results["single_metrics"] = singles

    for cname, specs in CONFIGS.items():
        sub = {lp: select_metrics(tables[lp], specs) for lp in lps}
        hib = np.asarray(sub[lps[0]].higher_is_better, bool)
        # single metrics and ULC need no training: one set of scores per pair
        single = {lp: [evaluate_scores(evals[lp], *single_scores(sub[lp], k)) for k in range(len(specs))]
                  for lp in lps}
        ulc_scores = {lp: (ulc(sub[lp].segment, hib), ulc(sub[lp].system, hib)) for lp in lps}
        protocols = {}
        for protocol in ("lopo", "cv10"):
            rows = {"tuned": {}, "ulc": {}, "best_single": {}}
            if protocol == "lopo":
                rows["regression"] = {}
            seconds = []
            chosen = {}
            for lp in lps:
                if protocol == "lopo":
                    train = [(testbeds[o], sub[o]) for o in lps if o != lp]
                    t = time.perf_counter()
                    model = fit_on_other_pairs(testbeds, sub, lps, lp)
                    seconds.append(time.perf_counter() - t)
                    raw = model.raw_scores(sub[lp].segment)
                    chosen[lp] = {"C": model.training["estimator"]["C"],
                                  "weights": dict(zip(specs, model.weights.round(4).tolist()))}
                    reg = fit_model(training_data(train, "testbed", targets=True),
                                    TrainOptions(method="regression"))
                    reg_raw = reg.raw_scores(sub[lp].segment)
                    rows["regression"][lp] = (expit(reg_raw), system_means(sub[lp], reg_raw))
                    # best single metric on the training pairs (for the JSON; the table uses the oracle)
                    chosen[lp]["best_single_on_training"] = specs[
                        best_single_on(evals, sub, [o for o in lps if o != lp], len(specs))]
                else:
                    data = training_data([(testbeds[lp], sub[lp])], "testbed")
                    t = time.perf_counter()
                    cv = cross_validate(data, TrainOptions(), folds=10)
                    seconds.append(time.perf_counter() - t)
                    raw = cv.raw
                    chosen[lp] = {"C": [m.training["estimator"]["C"] for m in cv.models]}
                rows["tuned"][lp] = (expit(raw), system_means(sub[lp], raw))
                rows["ulc"][lp] = ulc_scores[lp]
                best = int(np.argmax([s["kendall_discordant"] for s in single[lp]]))
                rows["best_single"][lp] = single_scores(sub[lp], best)
                chosen[lp]["best_single"] = specs[best]
            table = tabulate(evals, lps, rows, args, against=("ulc", "best_single"))
            order_ok = [lp for lp in lps
                        if table["tuned"]["per_pair"][lp]["kendall_discordant"]
                        > table["ulc"]["per_pair"][lp]["kendall_discordant"]
                        > table["best_single"]["per_pair"][lp]["kendall_discordant"]]
            protocols[protocol] = {"table": table, "chosen": chosen, "train_seconds": seconds,
                                   "tuned_gt_ulc_gt_single": order_ok}
            print(f"[{cname} {protocol}] tuned {table['tuned']['average']['kendall_discordant']:.4f} "
                  f"ulc {table['ulc']['average']['kendall_discordant']:.4f} "
                  f"order holds on {len(order_ok)}/4 pairs", file=sys.stderr)
        results[cname] = protocols
    # training time on all four pairs, scores cached (the benchmark of the issue)
    wall, cpu = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        fit_model(training_data([(testbeds[lp], tables[lp]) for lp in lps], "testbed"), TrainOptions())
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    results["train_all_four_seconds"] = float(np.median(wall))
    results["train_all_four"] = {"wall_seconds": wall, "cpu_seconds": cpu, "load_average": os.getloadavg(),
                                 "cpu_count": os.cpu_count()}
    return results


def markdown(results) -> str:
    """The tables of docs/learned.md."""
    lps = list(results["pairs"])
    out = []

    def cell(entry, key, interval=True):
        v = entry[key]
        iv = entry.get("interval", {}).get(key) if interval else None
        return f"{v:.3f}" + (f" [{iv[0]:.3f}, {iv[1]:.3f}]" if iv else "")

    out.append("**single metrics** (WMT12 Kendall, ties discordant; average with ties excluded; system Spearman)\n")
    out.append("| metric | " + " | ".join(lps) + " | average | ties excluded | system Spearman |")
    out.append("|---|" + "---|" * (len(lps) + 3))
    for spec, entry in results["single_metrics"].items():
        per = " | ".join(f"{entry['per_pair'][lp]['kendall_discordant']:.3f}" for lp in lps)
        avg = entry["average"]
        out.append(f"| {spec} | {per} | {avg['kendall_discordant']:.3f} | {avg['kendall_excluded']:.3f} "
                   f"| {avg['spearman']:.3f} |")
    out.append("")
    for cname in CONFIGS:
        for protocol, title in (("lopo", "leave one language pair out"), ("cv10", "10-fold CV by segment")):
            res = results[cname][protocol]
            out.append(f"**{cname} features ({len(CONFIGS[cname])}), {title}**\n")
            out.append("| metric | " + " | ".join(lps) + " | average [95% CI] | ties excluded, average [95% CI] "
                       "| system Spearman, average [95% CI] |")
            out.append("|---|" + "---|" * (len(lps) + 3))
            for name, entry in res["table"].items():
                label = {"tuned": "tuned (pairwise LR)", "ulc": "ULC", "regression": "ridge regression (win shares)",
                         "best_single": "best single (oracle: " + ", ".join(
                             f"{lp[:2]} {res['chosen'][lp]['best_single']}" for lp in lps) + ")"}[name]
                per = " | ".join(f"{entry['per_pair'][lp]['kendall_discordant']:.3f}" for lp in lps)
                avg = entry["average"]
                out.append(f"| {label} | {per} | {cell(avg, 'kendall_discordant')} | "
                           f"{cell(avg, 'kendall_excluded')} | {cell(avg, 'spearman')} |")
            for other in ("ulc", "best_single"):
                diff = res["table"]["tuned"].get(f"minus_{other}")
                if diff:
                    out.append(f"\ntuned minus {other}, average Kendall: {diff['delta']:+.4f} "
                               f"[{diff['interval'][0]:+.4f}, {diff['interval'][1]:+.4f}], "
                               f"paired bootstrap p = {diff['p_value']:.3f}")
            out.append(f"\ntuned > ULC > best single (ties discordant) on: "
                       f"{', '.join(res['tuned_gt_ulc_gt_single']) or 'none'}\n")
    return "\n".join(out)


def main(argv=None):
    args = parse_args(__doc__.split("\n")[0], argv)
    results = run(args)
    write_json(results, args.out)
    print(markdown(results))
    print(f"\ntraining on all four pairs (scores cached, median of 3): {results['train_all_four_seconds']:.2f} s; "
          f"scoring/cache load: {results['scoring_seconds']:.1f} s")


if __name__ == "__main__":
    main()
