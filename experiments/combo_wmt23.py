"""combo-wmt23, the shipped tuned metric: recipes chosen by cross-validation on the training pair, measured on the
WMT23 pair they never saw, against XCOMET-Ensemble.

The protocol is in docs/results/combo-wmt23.md (committed before the first held-out score). Run:

    python experiments/combo_wmt23.py --data ../shared/data/wmt23 --out docs/results/combo-wmt23.json
    python experiments/combo_wmt23.py --render docs/results/combo-wmt23.json   # the page's tables only
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Dict, List


from combo.combine.training import TrainOptions, cross_validate, fit_model, training_data, training_report
from combo.evaluate import MetaEvaluator
from combo.scoring import ScoreTable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wmt23_transfer import (CRITERIA, LPS, TASK_OF, TITLES, arguments, cell, entry_results,  # noqa: E402
                            entry_table, model_entry, results_head, scored_pairs, wmt_clusters)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results" / "combo-wmt23.md"
INPUTS = ["mtme:XCOMET-XL", "mtme:XCOMET-XXL", "mtme:COMET", "mtme:CometKiwi", "chrf", "bleu"]
INPUT_SETS = {"combo-wmt23": INPUTS, "combo-wmt23-llm": INPUTS + ["mtme:GEMBA-MQM"]}
BASELINE = "mtme:XCOMET-Ensemble"
#: The recipes of the protocol: label -> (combo train's options, the same as TrainOptions).
RECIPES = {
    "direct, wmt23": ("--method direct --objective wmt23", TrainOptions(method="direct", objective="wmt23")),
    "direct, seg_pearson": ("--method direct --objective seg_pearson",
                            TrainOptions(method="direct", objective="seg_pearson")),
    "direct, acc_eq": ("--method direct --objective acc_eq", TrainOptions(method="direct", objective="acc_eq")),
    "direct, seg_kendall": ("--method direct --objective seg_kendall",
                            TrainOptions(method="direct", objective="seg_kendall")),
    "pairwise-lr, human": ("--method pairwise-lr", TrainOptions(method="pairwise-lr")),
}
INNER_FOLDS = 5


def select(table: ScoreTable, names: List[str]) -> ScoreTable:
    """The score table of ``names`` alone, in that order, with their signatures."""
    k = [table.metrics.index(n) for n in names]
    return ScoreTable(list(names), [table.signatures[i] for i in k], [table.higher_is_better[i] for i in k],
                      table.systems, table.segment_ids, table.row_system, table.row_segment, table.segment[k],
                      table.system[k], table.testbed, dict(table.metadata))


def inner_average(sources, options: TrainOptions) -> float:
    """The mean over the training pairs of the WMT23 average of out-of-fold scores (5 folds by segment)."""
    data = training_data(sources, "testbed")
    options = options.resolved(data.pairs.kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = cross_validate(data, options, INNER_FOLDS, by="segment")
    report = training_report(data, cv, options.method, [table.system for _, table in sources])
    return float(report["tuned"]["mean"]["average"])


def choose(sources) -> Dict[str, float]:
    return {label: inner_average(sources, options) for label, (_, options) in RECIPES.items()}


def run_direction(data, inputs: List[str], train_lp: str, test_lp: str, n_resamples: int, seed: int) -> dict:
    train_tb, train_table = data[train_lp]
    test_tb, test_table = data[test_lp]
    keep = [test_table.metrics.index(m) for m in inputs + [BASELINE]]
    source = [(train_tb, select(train_table, inputs))]
    inner = choose(source)
    chosen = max(inner, key=inner.get)
    entries = {test_table.metrics[k]: (test_table.segment[k], test_table.system[k],
                                       bool(test_table.higher_is_better[k])) for k in keep}
    models = {}
    for label, (_, options) in RECIPES.items():
        train = training_data(source, "testbed")
        model = fit_model(train, replace(options.resolved(train.pairs.kind), name=label))
        models[label] = {"weights": dict(zip(model.specs, model.weights.tolist())), "bias": model.bias,
                         "inner_average": inner[label], "chosen": label == chosen}
        entries[f"tuned: {label}"] = model_entry(model, select(test_table, inputs))
    table = entry_table(test_table, entries)
    ev = MetaEvaluator(test_tb, table)
    results = entry_results(ev, table, n_resamples, seed)
    return {"train": train_lp, "test": test_lp, "systems": int(ev.system_mask.sum()), "chosen": chosen,
            "models": models, "results": results,
            "clusters": wmt_clusters(ev, table, seed, [BASELINE, f"tuned: {chosen}", "mtme:XCOMET-XXL",
                                                      "mtme:XCOMET-XL"])}


def shipped(data, name: str, inputs: List[str]) -> dict:
    """The recipe chosen by 5-fold CV on both pairs together, and the combo train command that makes the model."""
    sources = [(data[lp][0], select(data[lp][1], inputs)) for lp in LPS]
    inner = choose(sources)
    chosen = max(inner, key=inner.get)
    command = (f"combo train --testbed ../shared/data/wmt23 --lp {','.join(LPS)} -m {' '.join(inputs)} "
               f"{RECIPES[chosen][0]} --name {name} --out combo/data/models/{name}.json")
    return {"inner_average": inner, "chosen": chosen, "command": command}


def main() -> None:
    args = arguments(__doc__.split("\n")[0])
    if args.render:
        write_page(json.loads(args.render.read_text(encoding="utf-8")))
        return
    started = time.time()
    data = scored_pairs(args.data, INPUT_SETS["combo-wmt23-llm"] + [BASELINE])
    doc = {"sets": {}, "date": time.strftime("%Y-%m-%d"), "bootstrap": args.bootstrap, "seed": args.seed,
           "command": "python experiments/combo_wmt23.py --data ../shared/data/wmt23 "
                      "--out docs/results/combo-wmt23.json"}
    for name, inputs in INPUT_SETS.items():
        runs = [run_direction(data, inputs, a, b, args.bootstrap, args.seed) for a, b in (LPS, LPS[::-1])]
        doc["sets"][name] = {"inputs": inputs, "runs": runs, "shipped": shipped(data, name, inputs)}
        print(f"{name}: {time.time() - started:.0f} s", flush=True)
    doc["seconds"] = time.time() - started
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    write_page(doc)


def run_table(run: dict) -> List[str]:
    res, cl = run["results"], run["clusters"]
    lines = ["| entry | " + " | ".join(TITLES[c] for c in CRITERIA) + " |", "|---" * (len(CRITERIA) + 1) + "|"]
    for name in sorted(res, key=lambda n: -res[n]["wmt23"]["value"]):
        cells = [cell(res[name][c]) + (f" ({cl[TASK_OF[c]][name]})" if name in cl.get(TASK_OF[c], {}) else "")
                 for c in CRITERIA]
        label = name
        if name == f"tuned: {run['chosen']}":
            label = f"**{name} (chosen)**"
        elif name.startswith("tuned: "):
            label = f"{name} (not chosen)"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def write_page(doc: dict) -> None:
    out = results_head(PAGE, doc, "XCOMET-Ensemble, XCOMET-XXL, XCOMET-XL and the chosen model (1 = best)")
    for name, s in doc["sets"].items():
        out += [f"### {name}: {', '.join(s['inputs'])}", ""]
        for run in s["runs"]:
            res = run["results"]
            gap = res[f"tuned: {run['chosen']}"]["wmt23"]["value"] - res[BASELINE]["wmt23"]["value"]
            inner = ", ".join(f"{k} {v['inner_average']:.4f}" for k, v in run["models"].items())
            out += [f"#### Trained on {run['train']}, measured on {run['test']} ({run['systems']} systems)", "",
                    f"Inner 5-fold averages on {run['train']}: {inner}; chosen: {run['chosen']}. "
                    f"The chosen model's average minus XCOMET-Ensemble's: {gap:+.4f}.", ""]
            out += run_table(run) + [""]
        sh = s["shipped"]
        inner = ", ".join(f"{k} {v:.4f}" for k, v in sh["inner_average"].items())
        out += [f"The shipped `{name}`: inner 5-fold averages over both pairs {inner}; chosen {sh['chosen']}; made by",
                "", "```", sh["command"], "```", ""]
    PAGE.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
