"""WMT23 MQM: tuned metrics trained on one language pair and measured on the other (en-de <-> he-en).

The protocol is in docs/results/wmt23.md (committed before the first score of a new objective). Run:

    python experiments/wmt23_transfer.py --data ../shared/data/wmt23 --out docs/results/wmt23.json
    python experiments/wmt23_transfer.py --render docs/results/wmt23.json   # the page's tables only

Every statistic is combo evaluate's (combo.evaluate.MetaEvaluator, the WMT23 statistics of
combo.meta.wmt23); the clusters are mt-metrics-eval's permutation tests (combo.meta.wmt23).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, List

import numpy as np

import combo
from combo.combine.training import DARR_FRACTION, TrainOptions, fit_model, training_data
from combo.evaluate import MetaEvaluator, search_metric_sets
from combo.meta.wmt23 import TaskRanking, average_clusters, significance_clusters
from combo.normalise import minmax_normalise
from combo.scoring import ScoreTable

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results" / "wmt23.md"
LPS = ("en-de", "he-en")
METRICS = ["mtme:XCOMET-Ensemble", "mtme:XCOMET-XL", "mtme:XCOMET-XXL", "mtme:MetricX-23", "mtme:MetricX-23-QE",
           "mtme:GEMBA-MQM", "mtme:COMET", "mtme:BLEURT-20", "mtme:CometKiwi", "mtme:BERTscore", "mtme:MaTESe",
           "mtme:YiSi-1", "mtme:prismRef", "chrf", "bleu"]
#: The tuned models of the protocol: label -> options (min_diff None: the default of the judgment type).
MODELS = {
    "tuned: old default (pairwise-lr, 25% range, sigmoid)": (TrainOptions(method="pairwise-lr", output="sigmoid"),
                                                             "darr"),
    "tuned: pairwise-lr, every pair, human output": (TrainOptions(method="pairwise-lr"), None),
    "tuned: direct wmt23 (the default)": (TrainOptions(method="auto"), None),
    "tuned: direct acc_eq": (TrainOptions(method="direct", objective="acc_eq"), None),
    "tuned: direct seg_pearson": (TrainOptions(method="direct", objective="seg_pearson"), None),
    "tuned: MetaMetrics-style (seg_kendall, [0,1], no pruning)": (
        TrainOptions(method="direct", objective="seg_kendall", prune=0.0), None),
}
DEFAULT = "tuned: direct wmt23 (the default)"
CRITERIA = ("r_snt", "acc_eq_item", "pearson", "sys_accuracy", "wmt23")
TITLES = {"r_snt": "seg Pearson", "acc_eq_item": "acc_eq", "pearson": "sys Pearson", "sys_accuracy": "sys accuracy",
          "wmt23": "average"}
CLUSTERED = ["mtme:XCOMET-Ensemble", "mtme:XCOMET-XXL", "mtme:MetricX-23", "mtme:GEMBA-MQM", "ULC(all)",
             "greedy set (wmt23, ULC)"] + list(MODELS) + ["tuned: default, normalised on the test pair's scores"]


def entry_table(test_table: ScoreTable, entries: Dict[str, tuple]) -> ScoreTable:
    """A score table whose "metrics" are the entries: (segment scores per row, system scores, higher is better)."""
    names = list(entries)
    return ScoreTable(names, names, [entries[n][2] for n in names], test_table.systems, test_table.segment_ids,
                      test_table.row_system, test_table.row_segment,
                      np.vstack([entries[n][0] for n in names]), np.vstack([entries[n][1] for n in names]),
                      test_table.testbed)


def model_entry(model, table: ScoreTable, normalise_on_test: bool = False) -> tuple:
    """A tuned model's segment and system scores on ``table`` (system: the mean of the bounded w.x + b over the
    system's rows; output "human" clips it to the training judgments' range, as the model scores)."""
    if normalise_on_test:
        lo, hi = np.nanmin(table.segment, axis=1), np.nanmax(table.segment, axis=1)
        raw = model.weights @ minmax_normalise(table.segment, lo, hi, model.higher_is_better) + model.bias
    else:
        raw = model.raw_scores(table.segment)
    raw = model.bounded(raw)
    seg = 1.0 / (1.0 + np.exp(-raw)) if model.output == "sigmoid" else raw
    finite = np.isfinite(raw)
    sys_ = np.array([raw[(table.row_system == s) & finite].mean() for s in range(len(table.systems))])
    return seg, sys_, True


def run_direction(data: Dict[str, tuple], train_lp: str, test_lp: str, include_human: bool,
                  n_resamples: int, seed: int) -> Dict[str, object]:
    train_tb, train_table = data[train_lp]
    test_tb, test_table = data[test_lp]
    entries: Dict[str, tuple] = {}
    for k, m in enumerate(test_table.metrics):
        entries[m] = (test_table.segment[k], test_table.system[k], bool(test_table.higher_is_better[k]))
    ev = MetaEvaluator(test_tb, test_table, include_human=include_human)
    every = list(range(len(test_table.metrics)))
    for scheme, label in (("ulc", "ULC(all)"), ("mean-rank", "mean rank(all)")):
        rows, _ = ev.combined_rows(every, scheme)
        entries[label] = (rows, ev.combined_systems(every, scheme), True)
    found = search_metric_sets(MetaEvaluator(train_tb, train_table), "wmt23", "ulc")
    chosen = [test_table.metrics.index(m) for m in found.selected]
    rows, _ = ev.combined_rows(chosen, "ulc")
    entries["greedy set (wmt23, ULC)"] = (rows, ev.combined_systems(chosen, "ulc"), True)
    models = {}
    human = train_tb.score_matrix(train_table.systems)
    darr = DARR_FRACTION * float(np.nanmax(human) - np.nanmin(human))
    for label, (options, min_diff) in MODELS.items():
        started = time.time()
        train = training_data([(train_tb, train_table)], "testbed", min_diff=darr if min_diff == "darr" else None)
        model = fit_model(train, replace(options, name=label))
        models[label] = {"seconds": time.time() - started, "method": model.method, "output": model.output,
                         "pairs": len(train.pairs), "min_diff": train.pairs.min_diff,
                         "weights": dict(zip(model.specs, model.weights.tolist())), "bias": model.bias,
                         "estimator": {k: v for k, v in model.training["estimator"].items() if k != "cv"}}
        entries[label] = model_entry(model, test_table)
        if label == DEFAULT:
            entries["tuned: default, normalised on the test pair's scores"] = model_entry(model, test_table, True)
    table = entry_table(test_table, entries)
    ev = MetaEvaluator(test_tb, table, include_human=include_human)
    results = entry_results(ev, table, n_resamples, seed)
    clusters = wmt_clusters(ev, table, seed) if not include_human else None
    return {"train": train_lp, "test": test_lp, "include_human": include_human,
            "systems": int(ev.system_mask.sum()), "greedy_set": found.selected, "models": models,
            "results": results, "clusters": clusters}


def entry_results(ev: MetaEvaluator, table: ScoreTable, n_resamples: int, seed: int) -> Dict[str, dict]:
    """Each entry's value on each of :data:`CRITERIA`, with its bootstrap interval (``n_resamples`` resamples of
    whole segments or systems) where combo resamples the statistic (not the average or system accuracy)."""
    results = {}
    for k, name in enumerate(table.metrics):
        row = {}
        for c in CRITERIA:
            q = ev.quality([k], c)
            if c not in ("wmt23", "sys_accuracy") and n_resamples:
                q = ev.with_interval(q, n_resamples=n_resamples, seed=seed)
            row[c] = {"value": q.value, "low": q.low, "high": q.high}
        results[name] = row
    return results


def wmt_clusters(ev: MetaEvaluator, table: ScoreTable, seed: int, names=None) -> Dict[str, Dict[str, int]]:
    """mt-metrics-eval's significance clusters (permutation tests, early stopping) of the main entries (``names``,
    default :data:`CLUSTERED`) on each WMT23 statistic of the test pair, and of their average."""
    return {task: {m: int(r.rank_of(m)) for m in r.metrics}
            for task, r in wmt_rankings(ev, table, seed, names).items()}


def wmt_rankings(ev: MetaEvaluator, table: ScoreTable, seed: int, names=None) -> Dict[str, TaskRanking]:
    """The rankings behind :func:`wmt_clusters`, each task's and the average's, with their p-values."""
    names = CLUSTERED if names is None else names
    keep = ev.system_mask
    human = ev.human[keep]
    human_sys = ev.human_system_scores()[keep]
    seg = {n: ev.matrix(table.segment[table.metrics.index(n)])[keep] for n in names}
    sys_ = {n: table.system[table.metrics.index(n)][keep] for n in names}
    for n in names:  # every entry oriented higher-is-better, as mt-metrics-eval negates error metrics
        if not table.higher_is_better[table.metrics.index(n)]:
            seg[n], sys_[n] = -seg[n], -sys_[n]
    rankings = [significance_clusters("sys_accuracy", sys_, human_sys, seed=seed),
                significance_clusters("sys_pearson", sys_, human_sys, seed=seed),
                significance_clusters("seg_pearson", seg, human, seed=seed),
                significance_clusters("seg_acc_eq", seg, human, seed=seed)]
    out = {r.task: r for r in rankings}
    out["average"] = average_clusters(rankings)
    return out


def arguments(description: str) -> argparse.Namespace:
    """The options of a WMT23 study script: --data, --out, --render, --bootstrap, --seed."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wmt23")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--render", type=Path, default=None, metavar="JSON", help="only rewrite the page's results")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def scored_pairs(folder: Path, metrics: List[str]) -> Dict[str, tuple]:
    """``{lp: (test bed, score table of metrics)}`` for en-de and he-en."""
    data = {}
    for lp in LPS:
        tb = combo.load_testbed(folder, lp=lp)
        data[lp] = (tb, combo.score_testbed(tb, metrics))
    return data


def main() -> None:
    args = arguments(__doc__.split("\n")[0])
    if args.render:
        write_page(json.loads(args.render.read_text(encoding="utf-8")))
        return
    started = time.time()
    data = scored_pairs(args.data, METRICS)
    runs = []
    for train_lp, test_lp in (("en-de", "he-en"), ("he-en", "en-de")):
        runs.append(run_direction(data, train_lp, test_lp, False, args.bootstrap, args.seed))
        print(f"{train_lp} -> {test_lp}: {time.time() - started:.0f} s", flush=True)
    runs.append(run_direction(data, "en-de", "he-en", True, 0, args.seed))
    doc = {"runs": runs, "seconds": time.time() - started, "date": time.strftime("%Y-%m-%d"),
           "bootstrap": args.bootstrap, "seed": args.seed, "command": "python experiments/wmt23_transfer.py "
                                                                      "--data ../shared/data/wmt23 --out docs/results/wmt23.json"}
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    write_page(doc)


def cell(r: dict, interval: bool = True) -> str:
    """A statistic with its bracketed interval where it has one, or ``undefined``."""
    if r["value"] is None or not np.isfinite(r["value"]):
        return "undefined"
    if interval and r.get("low") is not None and np.isfinite(r["low"]):
        return f"{r['value']:.4f} [{r['low']:.3f}, {r['high']:.3f}]"
    return f"{r['value']:.4f}"


#: The WMT23 task of each criterion, as the significance clusters name them.
TASK_OF = {"r_snt": "seg_pearson", "acc_eq_item": "seg_acc_eq", "pearson": "sys_pearson",
           "sys_accuracy": "sys_accuracy", "wmt23": "average"}


def results_head(page: Path, doc: dict, clustered: str) -> List[str]:
    """The page's text up to "## Results", and the line saying how the tables were measured; ``clustered`` names
    the entries the rank clusters were computed among (and how to read a rank)."""
    head = page.read_text(encoding="utf-8").split("## Results", 1)[0]
    return [head + "## Results", "",
            f"Measured by `{doc['command']}` on {doc['date']} in {doc['seconds']:.0f} s on this machine (2 cores); "
            f"{doc['bootstrap']} bootstrap resamples of whole segments (seed {doc['seed']}) for the bracketed 95% "
            f"intervals; in parentheses the rank cluster of mt-metrics-eval's permutation tests among {clustered}. "
            "Sorted by the average.", ""]


def run_table(run: dict) -> List[str]:
    res, clusters = run["results"], run["clusters"] or {}
    lines = ["| entry | " + " | ".join(TITLES[c] for c in CRITERIA) + " |", "|---" * (len(CRITERIA) + 1) + "|"]
    order = sorted(res, key=lambda n: -res[n]["wmt23"]["value"])
    for name in order:
        cells = []
        for c in CRITERIA:
            rank = clusters.get(TASK_OF[c], {}).get(name)
            cells.append(cell(res[name][c]) + (f" ({rank})" if rank is not None else ""))
        label = f"**{name}**" if name == DEFAULT else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def write_page(doc: dict) -> None:
    out = results_head(PAGE, doc, "the clustered entries (1 = best; entries without one were not clustered)")
    for run in doc["runs"]:
        if run["include_human"]:
            continue
        out += [f"### Trained on {run['train']}, measured on {run['test']} ({run['systems']} systems)", ""]
        out += run_table(run)
        out += ["", f"Greedy set chosen on {run['train']}: {', '.join(run['greedy_set'])}.", ""]
        w = run["models"][DEFAULT]
        kept = {m: round(v, 3) for m, v in w["weights"].items() if v}
        out += [f"The default model's weights (trained on {run['train']}, in MQM points per normalised unit): "
                f"{kept}; bias {w['bias']:.2f}; {w['seconds']:.1f} s to train.", ""]
    for run in doc["runs"]:
        if not run["include_human"]:
            continue
        out += [f"### {run['test']} with its human translation refA scored as a system ({run['systems']} systems), "
                f"trained on {run['train']}", "", "| entry | average |", "|---|---|"]
        res = run["results"]
        for name in sorted(res, key=lambda n: -res[n]["wmt23"]["value"])[:12]:
            out.append(f"| {name} | {res[name]['wmt23']['value']:.4f} |")
        out.append("")
    PAGE.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
