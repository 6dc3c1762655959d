"""WMT23 en-de MQM: shipped neural metrics, combo's lexical metrics and their combinations.

The protocol is in docs/results/wmt23-en-de.md (committed before the first score);
this script implements it with the public API and rewrites that page's
Results section, a figure and a JSON file.

Usage::

    python experiments/wmt23_combination.py --data ../shared/data/wmt23 --out wmt23_combination.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np
from sklearn.model_selection import GroupKFold

import combo
from combo.metrics.sets import SEARCH as SEARCH_METRICS  # the @search set
from combo.combine.training import DARR_FRACTION, TrainOptions, train_model
from combo.combine.search import search
from combo.combine.ulc import ulc
from combo.meta.correlation import correlation_values
from combo.meta.significance import bootstrap, paired_bootstrap_test
from combo.meta.wmt23 import seg_acc_eq, seg_acc_eq_per_item, seg_correlation, sys_pairwise_accuracy, sys_pearson, wmt23_systems
from combo.scoring import reads_language

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "results" / "wmt23-en-de.md"
MODEL = ROOT / "docs" / "results" / "wmt23-en-de-pairwise-lr.json"
FIGURE = ROOT / "docs" / "results" / "wmt23-en-de.png"
NEURAL = ["COMET", "BLEURT-20", "CometKiwi", "MetricX-23", "MetricX-23-QE", "XCOMET-XL", "XCOMET-XXL",
          "XCOMET-Ensemble", "XCOMET-QE-Ensemble", "GEMBA-MQM"]
CRITERIA = ("kendall", "acc_eq")
TITLES = {"kendall": "grouped Kendall tau-b (item)", "acc_eq": "acc_eq (item, tie-calibrated)"}
FOLDS = 5
RESAMPLES = 1000
SEED = 0


def shipped_metrics(data: Path, reference: str) -> List[str]:
    """Base names of every metric scored with ``reference`` or reference-free."""
    folder = data / "metric-scores" / "en-de"
    names = set()
    for p in folder.glob("*.seg.score"):
        base = p.name[:-len(".seg.score")]
        for suffix in (f"-{reference}", "-src"):
            if base.endswith(suffix):
                names.add(base[:-len(suffix)])
    return sorted(names, key=str.lower)


class Study:
    """The human matrix, per-segment statistics and the folds of the protocol."""

    def __init__(self, tb: combo.Testbed, systems: Sequence[str]):
        self.tb, self.systems = tb, list(systems)
        s_index = {s: k for k, s in enumerate(self.systems)}
        self.human = np.full((len(self.systems), len(tb.segments)), np.nan)
        for s in tb.scores:
            if s.aspect == "mqm" and s.system in s_index:
                self.human[s_index[s.system], s.segment] = s.value
        docs = [seg.group for seg in tb.segments]
        self.folds = list(GroupKFold(n_splits=FOLDS).split(np.zeros(len(docs)), groups=docs))
        self.epsilon: Dict[str, float] = {}

    def matrix(self, table: combo.ScoreTable, rows: np.ndarray) -> np.ndarray:
        out = np.full((len(self.systems), len(table.segment_ids)), np.nan)
        out[table.row_system, table.row_segment] = rows
        return out

    def per_segment(self, name: str, m: np.ndarray, criterion: str) -> np.ndarray:
        """Per-segment values whose mean is the criterion (NaN: undefined segment, left out as mt-metrics-eval does)."""
        if criterion == "kendall":
            return correlation_values(m, self.human, "kendall_b", "item", per_group=True)
        if name not in self.epsilon:
            self.epsilon[name] = seg_acc_eq(m, self.human, "item").epsilon
        return seg_acc_eq_per_item(m, self.human, self.epsilon[name])

    def value(self, m: np.ndarray, criterion: str, human=None) -> float:
        human = self.human if human is None else human
        if criterion == "kendall":
            return seg_correlation(m, human, "kendall", "item")
        return seg_acc_eq(m, human, "item").value


def ulc_matrix(study: Study, table: combo.ScoreTable, subset: Sequence[int], rows: np.ndarray) -> np.ndarray:
    """ULC of ``subset`` fitted on the given rows only (NaN elsewhere)."""
    out = np.full(len(table.row_system), np.nan)
    out[rows] = ulc(table.segment[list(subset)][:, rows], np.asarray(table.higher_is_better)[list(subset)])
    return study.matrix(table, out)


def greedy_set(study: Study, table: combo.ScoreTable, candidates: Sequence[int], criterion: str,
               segments: np.ndarray) -> List[int]:
    rows = np.flatnonzero(np.isin(table.row_segment, segments))
    human = np.full(study.human.shape, np.nan)
    human[:, segments] = study.human[:, segments]

    def quality(subset):
        return study.value(ulc_matrix(study, table, subset, rows), criterion, human)

    return list(search(list(candidates), quality, "greedy").selected)


def held_out_search(study: Study, table: combo.ScoreTable, candidates: Sequence[int], criterion: str):
    rows_out = np.full(len(table.row_system), np.nan)
    chosen = []
    for train, test in study.folds:
        subset = greedy_set(study, table, candidates, criterion, train)
        chosen.append([table.metrics[k] for k in subset])
        rows = np.flatnonzero(np.isin(table.row_segment, test))
        rows_out[rows] = ulc(table.segment[subset][:, rows], np.asarray(table.higher_is_better)[subset])
    return study.matrix(table, rows_out), chosen


def PROTOCOL_OPTIONS(name: str) -> TrainOptions:
    """The protocol's tuned metric: combo train's pairwise-LR as it was then, with DiscoTK's sigmoid output."""
    return TrainOptions(method="pairwise-lr", output="sigmoid", name=name)


def darr_threshold(tb: combo.Testbed, systems: Sequence[str]) -> float:
    """The protocol's pair threshold: 25% of the observed range of the MQM scores (combo train's default then)."""
    human = tb.score_matrix(systems, "mqm")
    return DARR_FRACTION * float(np.nanmax(human) - np.nanmin(human))


def held_out_tuned(study: Study, specs: Sequence[str]):
    tb, systems = study.tb, study.systems
    rows_out = np.full((len(systems), len(tb.segments)), np.nan)
    weights = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (train, test) in enumerate(study.folds):
            tb_train, tb_test = tb.subset(train), tb.subset(test)
            model = train_model([(tb_train, combo.score_testbed(tb_train, specs, systems=systems))],
                                PROTOCOL_OPTIONS(f"fold{k}"), min_diff=darr_threshold(tb_train, systems))
            path = Path(tmp) / f"fold{k}.json"
            model.save(path)
            weights.append(dict(zip(model.specs, model.weights.round(4).tolist())))
            scored = combo.score_testbed(tb_test, [str(path)], systems=systems)
            rows_out[scored.row_system, test[scored.row_segment]] = scored.segment[0]
    return rows_out, weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wmt23")
    ap.add_argument("--out", type=Path, default=None, help="JSON with every figure")
    ap.add_argument("--render", type=Path, default=None, metavar="JSON",
                    help="only draw the figures and rewrite the page from a JSON written by --out")
    args = ap.parse_args()
    if args.render:
        doc = json.loads(args.render.read_text(encoding="utf-8"))
        combos = [n for n, r in doc["results"].items() if "delta" in r["kendall"]]
        figure(doc["results"], combos, doc["best_single"])
        write_page(doc, combos)
        return
    start = time.time()
    tb = combo.load_testbed(args.data, lp="en-de")
    systems = wmt23_systems(tb.systems, "en-de", tb.metadata["human_systems"] + tb.metadata["references"])
    reference = tb.metadata["references"][0]
    lexical = [s for s in SEARCH_METRICS if reads_language(combo.get_metric(s), "de")]
    shipped = [f"mtme:{n}" for n in shipped_metrics(args.data, reference)]
    neural = [f"mtme:{n}" for n in NEURAL]
    specs = shipped + lexical
    table = combo.score_testbed(tb, specs, systems=systems)
    study = Study(tb, systems)
    idx = {m: k for k, m in enumerate(table.metrics)}
    # each metric alone, oriented so that higher is better (error rates negated, as mt-metrics-eval does)
    sign = {m: 1.0 if table.higher_is_better[k] else -1.0 for m, k in idx.items()}
    matrices = {m: sign[m] * study.matrix(table, table.segment[k]) for m, k in idx.items()}
    singles = {m: {c: study.value(x, c) for c in CRITERIA} for m, x in matrices.items()}

    both = neural + lexical
    combos: Dict[str, np.ndarray] = {}
    all_rows = np.arange(len(table.row_system))
    for name, members in (("ULC(neural)", neural), ("ULC(lexical)", lexical), ("ULC(neural+lexical)", both)):
        combos[name] = ulc_matrix(study, table, [idx[m] for m in members], all_rows)
    searched, in_sample = {}, {}
    for c in CRITERIA:
        combos[f"greedy set [{c}], held out"], searched[c] = held_out_search(study, table, [idx[m] for m in both], c)
        chosen = greedy_set(study, table, [idx[m] for m in both], c, np.arange(len(tb.segments)))
        in_sample[c] = [table.metrics[k] for k in chosen]
        combos[f"greedy set [{c}], in-sample"] = ulc_matrix(study, table, chosen, all_rows)
    combos["pairwise-LR, held out"], fold_weights = held_out_tuned(study, both)

    final = train_model([(tb, combo.score_testbed(tb, both, systems=systems))],
                        PROTOCOL_OPTIONS("wmt23-en-de-pairwise-lr"), min_diff=darr_threshold(tb, systems))
    final.save(MODEL)

    best = {c: max((m for m in singles if m.startswith("mtme:")), key=lambda m: singles[m][c]) for c in CRITERIA}
    # Post hoc (added after the first run, not in the protocol): the baselines the issue names,
    # the primary XCOMET and MetricX submissions.
    named = [f"mtme:{n}" for n in ("XCOMET-XL", "XCOMET-XXL", "XCOMET-Ensemble", "MetricX-23", "MetricX-23-QE")]
    best_named = {c: max(named, key=lambda m: singles[m][c]) for c in CRITERIA}
    results = {}
    for name, m in list(matrices.items()) + list(combos.items()):
        row = {}
        for c in CRITERIA:
            vals = study.per_segment(name, m, c)
            ci = bootstrap(lambda v: np.nanmean(v, axis=-1), vals, n_resamples=RESAMPLES, seed=SEED)
            row[c] = {"value": float(np.nanmean(vals)), "low": ci.low, "high": ci.high}
            assert abs(row[c]["value"] - study.value(m, c)) < 1e-9, (name, c)
            if name in combos:
                base = study.per_segment(best[c], matrices[best[c]], c)
                test = paired_bootstrap_test(lambda v: np.nanmean(v, axis=-1), vals, base,
                                             n_resamples=RESAMPLES, seed=SEED)
                row[c].update({"delta": test.delta, "p": test.p_value})
                base = study.per_segment(best_named[c], matrices[best_named[c]], c)
                test = paired_bootstrap_test(lambda v: np.nanmean(v, axis=-1), vals, base,
                                             n_resamples=RESAMPLES, seed=SEED)
                row[c].update({"delta_named": test.delta, "p_named": test.p_value})
        seg_p = seg_correlation(m, study.human, "pearson", "none")
        if name in idx:  # a metric's own system scores (.sys.score, or combo's corpus score), never a mean
            own = dict(zip(table.systems, table.system[idx[name]]))
            sys_m = sign[name] * np.array([own[s] for s in systems])
        else:  # a combination: the mean of its segment scores, as a tuned metric scores systems
            sys_m = np.nanmean(m, axis=1)
        sys_h = np.nanmean(study.human, axis=1)
        row["seg_pearson"] = seg_p
        row["sys_accuracy"] = sys_pairwise_accuracy(sys_m, sys_h)
        row["sys_pearson"] = sys_pearson(sys_m, sys_h)
        results[name] = row
    seconds = time.time() - start
    doc = {"testbed": tb.name, "systems": systems, "segments": len(tb.segments), "reference": reference,
           "lexical": lexical, "neural": neural, "best_single": best, "best_named": best_named,
           "in_sample_sets": in_sample,
           "held_out_sets": searched, "fold_weights": fold_weights,
           "model": {"file": str(MODEL.relative_to(ROOT)), "weights": dict(zip(final.specs, final.weights.tolist()))},
           "results": results, "bootstrap": {"resamples": RESAMPLES, "seed": SEED, "unit": "segments"},
           "seconds": seconds}
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    figure(results, list(combos), best)
    write_page(doc, list(combos))
    print(f"done in {seconds:.0f} s")


def figure(results, combos, best) -> None:
    """One bar chart per criterion with its interval, drawn by the report's plotting module."""
    from combo.report import plots

    names = list(results)
    for c in CRITERIA:
        png = plots.bar_intervals(
            names, [results[n][c]["value"] for n in names], [results[n][c]["low"] for n in names],
            [results[n][c]["high"] for n in names], highlight=[n in combos for n in names],
            title=f"WMT23 en-de MQM: {TITLES[c]}", xlabel=f"{c}; 95% interval over resampled segments")
        (FIGURE.parent / FIGURE.name.replace(".png", f"-{c}.png")).write_bytes(png)


def write_page(doc, combos) -> None:
    res, best = doc["results"], doc["best_single"]
    lines = ["## Results", "",
             f"Measured by `experiments/wmt23_combination.py` in {doc['seconds']:.0f} s on this machine "
             f"(2 cores); {len(doc['systems'])} systems, {doc['segments']} segments, reference "
             f"`{doc['reference']}`, {RESAMPLES} segment resamples, seed {SEED}.", "",
             f"Best single metric: {best['kendall']} (grouped Kendall), {best['acc_eq']} (acc_eq).", "",
             "### Combinations against the best single metric", "",
             "| combination | grouped Kendall [95% CI] | Δ vs best, p | acc_eq [95% CI] | Δ vs best, p |",
             "|---|---|---|---|---|"]

    def cell(r, c):
        return f"{r[c]['value']:.4f} [{r[c]['low']:.4f}, {r[c]['high']:.4f}]"

    for name in [best["kendall"], best["acc_eq"]] if best["kendall"] != best["acc_eq"] else [best["kendall"]]:
        lines.append(f"| {name} (best single) | {cell(res[name], 'kendall')} | | {cell(res[name], 'acc_eq')} | |")
    for name in combos:
        r = res[name]
        lines.append(f"| {name} | {cell(r, 'kendall')} | {r['kendall']['delta']:+.4f}, {r['kendall']['p']:.3f} "
                     f"| {cell(r, 'acc_eq')} | {r['acc_eq']['delta']:+.4f}, {r['acc_eq']['p']:.3f} |")
    lines += ["", "Post hoc (added after the first run, not in the protocol): against the baselines the issue "
              f"names, the best primary XCOMET or MetricX submission ({doc['best_named']['kendall']} in grouped "
              f"Kendall, {doc['best_named']['acc_eq']} in acc_eq), same resamples:", "",
              "| combination | grouped Kendall Δ, p | acc_eq Δ, p |", "|---|---|---|"]
    for name in combos:
        r = res[name]
        lines.append(f"| {name} | {r['kendall']['delta_named']:+.4f}, {r['kendall']['p_named']:.3f} "
                     f"| {r['acc_eq']['delta_named']:+.4f}, {r['acc_eq']['p_named']:.3f} |")
    lines += ["", "Greedy sets chosen on all of en-de (in-sample): " +
              "; ".join(f"{c}: {', '.join(s)}" for c, s in doc["in_sample_sets"].items()) + ".",
              "Held-out sets per fold: " + "; ".join(
                  f"{c}: " + " | ".join(", ".join(s) for s in sets) for c, sets in doc["held_out_sets"].items()) + ".",
              "", f"Model trained on all of en-de: `{doc['model']['file']}`; weights: " +
              ", ".join(f"{k} {v:+.3f}" for k, v in doc["model"]["weights"].items()) + ".", "",
              "### Every metric alone", "",
              *(f"![{TITLES[c]} of every metric and combination]({FIGURE.name.replace('.png', f'-{c}.png')})"
                for c in CRITERIA), "",
              "| metric | grouped Kendall | acc_eq | seg Pearson | sys accuracy | sys Pearson |", "|---|---|---|---|---|---|"]
    for name in sorted((n for n in res if n not in combos), key=lambda n: -res[n]["kendall"]["value"]):
        r = res[name]
        lines.append(f"| {name} | {cell(r, 'kendall')} | {cell(r, 'acc_eq')} | {r['seg_pearson']:.4f} "
                     f"| {r['sys_accuracy']:.4f} | {r['sys_pearson']:.4f} |")
    lines += ["", "Error rates (TER, WER, PER) are negated here, as mt-metrics-eval does. `instructscore` and "
              "`sescoreX` have byte-identical score files in the release, hence identical rows."]
    text = PAGE.read_text(encoding="utf-8")
    head = text[:text.index("## Results")]
    PAGE.write_text(head + "\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
