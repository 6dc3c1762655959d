"""Does linguistic evidence still add to neural metrics? @heterogeneous beside WMT23's neural metrics on he-en.

The protocol is in docs/results/wmt23-heterogeneous.md (committed before the first @heterogeneous score on
he-en). Run:

    python experiments/wmt23_heterogeneous.py --data ../shared/data/wmt23 --out docs/results/wmt23-heterogeneous.json
    python experiments/wmt23_heterogeneous.py --render docs/results/wmt23-heterogeneous.json   # the page only

It measures the cost of ``combo score -m @heterogeneous`` on he-en cold and warm (``benchmarks/bench_stream``'s
fresh processes, each with a cache folder of its own), scores the study's inputs from the cold run's caches,
cross-validates each input set (10 folds grouped by segment) with ``combo train``'s default on absolute
judgments and as ULC, and measures the pooled out-of-fold scores with ``combo evaluate``'s WMT23 statistics
(combo.evaluate.MetaEvaluator) and mt-metrics-eval's permutation tests (combo.meta.wmt23).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

import combo
from combo.combine.training import TrainOptions, cross_validate, fit_model, training_data
from combo.evaluate import MetaEvaluator
from combo.metrics.sets import HETEROGENEOUS, LEXICAL

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "benchmarks"))
from bench_stream import cold_env, timed  # noqa: E402
from combo_wmt23 import select  # noqa: E402
from wmt23_transfer import (CRITERIA, ROOT, TASK_OF, TITLES, arguments, cell, entry_results,  # noqa: E402
                            entry_table, results_head, wmt_clusters, wmt_rankings)

PAGE = ROOT / "docs" / "results" / "wmt23-heterogeneous.md"
LP = "he-en"
COMMAND = ("python experiments/wmt23_heterogeneous.py --data ../shared/data/wmt23 "
           "--out docs/results/wmt23-heterogeneous.json")
MODEL_FILE = "docs/results/wmt23-heterogeneous-model.json"
NEURAL = ["mtme:XCOMET-XL", "mtme:XCOMET-XXL", "mtme:MetricX-23", "mtme:MetricX-23-QE", "mtme:COMET",
          "mtme:BLEURT-20", "mtme:CometKiwi"]
A = NEURAL + ["chrf", "bleu"]
BASELINE = "mtme:XCOMET-Ensemble"
#: The families of @heterogeneous, as the protocol splits it.
FAMILIES = {
    "lexical": list(LEXICAL),
    "shallow-syntactic": [m for m in HETEROGENEOUS if m.startswith("sp-")],
    "constituent": [m for m in HETEROGENEOUS if m.startswith("cp-")],
    "dependency": [m for m in HETEROGENEOUS if m.startswith("dp-")],
    "embeddings": [m for m in HETEROGENEOUS if m.startswith("emb-") or m == "sent-emb"],
}
assert sorted(sum(FAMILIES.values(), [])) == sorted(HETEROGENEOUS), "the families must cover @heterogeneous"


def with_a(extra: List[str]) -> List[str]:
    """(a)'s inputs followed by ``extra``, each metric once."""
    return A + [m for m in extra if m not in A]


INPUT_SETS: Dict[str, List[str]] = {
    "(a) neural + chrF, BLEU": A,
    "(b) (a) + @heterogeneous": with_a(list(HETEROGENEOUS)),
    "(c) @heterogeneous": list(HETEROGENEOUS),
    **{f"(d) (a) + {family}": with_a(members) for family, members in FAMILIES.items()},
}
#: The two combinations of every input set: combo train's default on absolute judgments, and ULC (ranges of
#: the training folds). The options are those of ``combo train --method ...``.
METHODS = {"direct": ("", TrainOptions(method="direct", objective="wmt23")),
           "ULC": (" --method ulc", TrainOptions(method="ulc"))}
REFERENCE_SET = "(a) neural + chrF, BLEU"
FOLDS = 10


def entry_name(input_set: str, method: str) -> str:
    return f"{input_set} · {method}"


def measure_cost(data: Path) -> tuple:
    """``combo score -m @heterogeneous`` on the pair in fresh processes: cold (empty caches), then warm (the
    analysis cache of the cold run, no score cache). Returns the figures and the cold run's cache folder (removed
    when the script exits), which the study then reads its scores from; the two tables are written there too."""
    args = ["score", "--testbed", str(data), "--lp", LP, "-m", "@heterogeneous", "--level", "segment", "-j", "2",
            "-q"]
    env, cache = cold_env("combo-wmt23-heterogeneous-")
    work = cache / "tables"
    work.mkdir()
    cold, _ = timed(args + ["--out", str(work / "cold.tsv")], env)
    print(f"cold: {json.dumps(cold)}", flush=True)
    warm_env = dict(env, COMBO_SCORE_CACHE="off")
    warm, _ = timed(args + ["--out", str(work / "warm.tsv")], warm_env)
    print(f"warm: {json.dumps(warm)}", flush=True)
    same = (work / "cold.tsv").read_bytes() == (work / "warm.tsv").read_bytes()
    return {"cold": cold, "warm": warm, "same_scores": same,
            "command": f"combo score --testbed ../shared/data/wmt23 --lp {LP} -m @heterogeneous --level segment "
                       "-j 2"}, cache


def out_of_fold(data, table, options: TrainOptions) -> tuple:
    """The out-of-fold scores of every row of ``data`` (10 folds by segment) and each system's mean of them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = cross_validate(data, options, FOLDS, by="segment")
    finite = np.isfinite(cv.raw)
    systems = np.array([cv.raw[(table.row_system == s) & finite].mean() for s in range(len(table.systems))])
    return cv.raw, systems


def full_model(data, options: TrainOptions) -> dict:
    """The model trained on all of ``data`` (the pair): its kept weights and bias."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fit_model(data, options)
    return {"weights": {m: w for m, w in zip(model.specs, model.weights.tolist()) if w}, "bias": model.bias}


def paired_test(ev: MetaEvaluator, table, a: str, b: str, seed: int) -> dict:
    """mt-metrics-eval's permutation test of entry ``b`` against ``a`` on each WMT23 statistic and on their
    average (1,000 permutations with early stopping): the p-value that ``b`` is better, where ``b`` is the
    higher; None where ``b`` is not higher (the test asks only whether the higher one is better)."""
    clusters = wmt_rankings(ev, table, seed, [a, b])
    out = {}
    for task, ranking in clusters.items():
        higher = ranking.metrics[0]
        out[task] = {"b_higher": higher == b, "p": float(ranking.p_values[0, 1]) if higher == b else None}
    return out


def run(data: Path, n_resamples: int, seed: int, cache: Optional[Path]) -> dict:
    tb = combo.load_testbed(data, lp=LP)
    metrics = with_a(list(HETEROGENEOUS)) + [BASELINE]
    started = time.time()
    table = combo.score_testbed(tb, metrics, jobs=2, cache_dir=None if cache is None else cache / "scores")
    scored = time.time() - started
    entries = {m: (table.segment[k], table.system[k], bool(table.higher_is_better[k]))
               for k, m in enumerate(table.metrics)}
    weights = {}
    for input_set, inputs in INPUT_SETS.items():
        data = training_data([(tb, select(table, inputs))], "testbed")  # one set's rows, for every fit
        for method, (_, options) in METHODS.items():
            raw, systems = out_of_fold(data, table, options)
            entries[entry_name(input_set, method)] = (raw, systems, True)
        if input_set in (REFERENCE_SET, "(b) (a) + @heterogeneous"):
            weights[input_set] = full_model(data, METHODS["direct"][1])
        print(f"{input_set}: {time.time() - started:.0f} s", flush=True)
    combined = entry_table(table, entries)
    ev = MetaEvaluator(tb, combined)
    results = entry_results(ev, combined, n_resamples, seed)
    print(f"statistics: {time.time() - started:.0f} s", flush=True)
    tests = {method: {input_set: paired_test(ev, combined, entry_name(REFERENCE_SET, method),
                                             entry_name(input_set, method), seed)
                      for input_set in INPUT_SETS if input_set.startswith(("(b)", "(d)"))}
             for method in METHODS}
    clustered = [entry_name(s, "direct") for s in INPUT_SETS] + [BASELINE, "mtme:XCOMET-XXL", "mtme:MetricX-23"]
    clusters = wmt_clusters(ev, combined, seed, clustered)
    print(f"significance: {time.time() - started:.0f} s", flush=True)
    return {"lp": LP, "systems": int(ev.system_mask.sum()), "candidates": int(len(table.row_system)),
            "score_seconds": scored, "inputs": INPUT_SETS, "results": results, "tests": tests,
            "clusters": clusters, "weights": weights}


def decision(doc: dict) -> Dict[str, List[str]]:
    """The protocol's rule, under each combination: the families whose (d) set has a higher average than (a)
    with p < 0.05."""
    return {method: [s.split(" + ", 1)[1] for s, t in tests.items()
                     if s.startswith("(d)") and t["average"]["b_higher"] and t["average"]["p"] < 0.05]
            for method, tests in doc["study"]["tests"].items()}


def best_configuration(doc: dict) -> tuple:
    """The input set and combination with the highest out-of-fold average, and the combo train command that
    trains it on all of the pair."""
    res = doc["study"]["results"]
    best = max(((s, m) for s in INPUT_SETS for m in METHODS),
               key=lambda sm: res[entry_name(*sm)]["wmt23"]["value"])
    input_set, method = best
    specs = INPUT_SETS[input_set]
    command = (f"combo train --testbed ../shared/data/wmt23 --lp {LP} -m {' '.join(specs)}{METHODS[method][0]} "
               f"--name wmt23-heterogeneous --out {MODEL_FILE}")
    return input_set, method, command


def main() -> None:
    args = arguments(__doc__.split("\n")[0])
    if args.render:
        write_page(json.loads(args.render.read_text(encoding="utf-8")))
        return
    os.environ.setdefault("NLTK_DATA", str(args.data.parent / "nltk_data"))
    started = time.time()
    cost, cache = measure_cost(args.data)
    doc = {"date": time.strftime("%Y-%m-%d"), "bootstrap": args.bootstrap, "seed": args.seed, "command": COMMAND,
           "cost": cost}
    os.environ["COMBO_CACHE_DIR"] = str(cache)  # the study's analyses and scores: the cold run's caches
    doc["study"] = run(args.data, args.bootstrap, args.seed, cache)
    doc["seconds"] = time.time() - started
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    write_page(doc)


# -- the page ---------------------------------------------------------------------------------------------

def p_cell(t: dict) -> str:
    return f"{t['p']:.3f}" if t["b_higher"] else "not higher"


def write_page(doc: dict) -> None:
    study, cost = doc["study"], doc["cost"]
    res, clusters = study["results"], study["clusters"]
    out = results_head(PAGE, doc, "the direct entries, XCOMET-Ensemble, XCOMET-XXL and MetricX-23 (1 = best)")
    out += [f"he-en: {study['systems']} MT systems measured (refA left out), {study['candidates']:,} candidates "
            f"scored.", "", "### The input sets, cross-validated", "",
            "| entry | " + " | ".join(TITLES[c] for c in CRITERIA) + " |", "|---" * (len(CRITERIA) + 1) + "|"]
    combos = [entry_name(s, m) for s in INPUT_SETS for m in METHODS]
    for name in sorted(combos + [BASELINE], key=lambda n: -res[n]["wmt23"]["value"]):
        cells = []
        for c in CRITERIA:
            rank = clusters.get(TASK_OF[c], {}).get(name)
            cells.append(cell(res[name][c]) + (f" ({rank})" if rank is not None else ""))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "Inputs: " + "; ".join(f"{s}: {len(m)} metrics" for s, m in study["inputs"].items()) + ".", "",
            "### Each set against (a): the p-value that it is better", "",
            "mt-metrics-eval's paired permutation test (1,000 permutations with its early stopping, seed "
            f"{doc['seed']}) of each set's out-of-fold scores against (a)'s, under the same combination; "
            "\"not higher\" where the set's value is not above (a)'s.", "",
            "| set | combination | " + " | ".join(TITLES[c] for c in CRITERIA) + " |",
            "|---|---" + "|---" * len(CRITERIA) + "|"]
    for method, tests in study["tests"].items():
        for input_set, t in tests.items():
            diff = res[entry_name(input_set, method)]["wmt23"]["value"] - \
                res[entry_name(REFERENCE_SET, method)]["wmt23"]["value"]
            cells = [p_cell(t[TASK_OF[c]]) for c in CRITERIA]
            cells[-1] += f" ({diff:+.4f})"
            out.append(f"| {input_set} | {method} | " + " | ".join(cells) + " |")
    adds = decision(doc)
    out += ["", "Families that add under the protocol's rule (a higher average than (a) with p < 0.05): "
            + "; ".join(f"{m}: {', '.join(f) if f else 'none'}" for m, f in adds.items()) + ".", "",
            "### What the models trained on all of he-en keep", "",
            "Weights in MQM points per normalised unit (the human output's calibration); the inputs a model "
            "does not list it set to 0.", ""]
    for input_set, w in study["weights"].items():
        kept = ", ".join(f"{m} {v:.3f}" for m, v in sorted(w["weights"].items(), key=lambda kv: -kv[1]))
        out += [f"- {input_set}, direct: {len(w['weights'])} of {len(study['inputs'][input_set])} inputs kept: "
                f"{kept}; bias {w['bias']:.2f}."]
    singles = [m for m in study["inputs"]["(b) (a) + @heterogeneous"]]
    out += ["", "### Each metric alone", "", "| metric | " + " | ".join(TITLES[c] for c in CRITERIA) + " |",
            "|---" * (len(CRITERIA) + 1) + "|"]
    for name in sorted(singles, key=lambda n: -res[n]["wmt23"]["value"]):
        out.append(f"| {name} | " + " | ".join(cell(res[name][c]) for c in CRITERIA) + " |")
    cold, warm = cost["cold"], cost["warm"]
    input_set, method, command = best_configuration(doc)
    out += ["", "### Cost of @heterogeneous on he-en", "",
            f"`{cost['command']}`, in fresh processes on this 2-core machine ({doc['date']}); CPU seconds of the "
            "command and its workers; peak memory the largest sum of their proportional set sizes.", "",
            "| run | wall | CPU | peak memory | load before |", "|---|---:|---:|---:|---:|",
            f"| cold (empty analysis and score caches) | {cold['seconds'] / 60:.1f} min | "
            f"{cold['cpu_seconds'] / 60:.1f} min | {cold['peak_mb']:,} MB | {cold['load_before']} |",
            f"| warm (analysis cache, no score cache) | {warm['seconds']:.0f} s | {warm['cpu_seconds']:.0f} s | "
            f"{warm['peak_mb']:,} MB | {warm['load_before']} |", "",
            f"The warm run's scores {'equal' if cost['same_scores'] else 'DIFFER FROM'} the cold run's.", "",
            "### The model file", "",
            f"The highest out-of-fold average is {input_set} · {method} "
            f"({res[entry_name(input_set, method)]['wmt23']['value']:.4f}). Trained on all of he-en by", "",
            "```", command, "```", "",
            f"It is `{MODEL_FILE}`. On a WMT23 folder it reads the release's scores; on your own files "
            "`combo apply` computes the inputs whose public checkpoints are on record (XCOMET-XL, "
            "XCOMET-XXL, COMET, CometKiwi: the `comet` extra and their weights) and asks you to bind the others "
            "to scores you hold (`--feature mtme:MetricX-23=scores:FILE.tsv`, likewise MetricX-23-QE and "
            "BLEURT-20), in one error line that names them. Its normalisation ranges are he-en's, so it applies "
            "to another English-target pair unchanged.", ""]
    PAGE.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
