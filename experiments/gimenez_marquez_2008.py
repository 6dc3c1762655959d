"""Giménez & Màrquez (2008), *Heterogeneous Automatic MT Evaluation Through Non-Parametric Metric
Combinations* (IJCNLP), Tables 2-4, on DSTC7, Flickr8k and WMT12.

What is computed (public API only: ``combo.load_testbed``, ``combo.scoring``, ``combo.evaluate``):

* Table 2, individual metric quality: KING (human likeness, QUEEN of the one metric) and R_snt
  (segment-level Pearson with the human scores) of every candidate metric on every test bed.
* Table 3, optimal metric sets: greedy search (rank single metrics, add each in that order when the
  criterion improves) under QUEEN/KING and under ULC/R_snt.
* Table 4, portability: each test bed's optimal set measured on the other test beds (same criterion),
  and each criterion's optimal set measured under the other criterion (same test bed).

Test beds: Flickr8k-Expert (1,000 images, each judged caption scored against the image's 5 captions,
the three expert scores averaged per caption); DSTC7 (contexts with at least 4 references, references
capped at ``--max-refs`` by a seeded uniform sample, the ``Human`` system's verbatim copy of a reference
removed, ``Human`` left out of the automatic candidates for KING; human score: the test bed's default aspect); WMT12
into English (cs, de, es, fr: one reference, so KING is undefined there; human score per candidate: its
share of wins in the relative rankings, as ``combo search`` uses). Candidate metrics: the 17 lexical
metrics of ``combo search``'s default set and the three shallow-syntactic ones (SP-Op, SP-Oc, SP-NIST,
Pattern tagger and chunker), the heterogeneous mix of the paper at the levels that run without a parser.

Usage (one command; scores cached in ``--cache``)::

    python experiments/gimenez_marquez_2008.py --out docs/results/gimenez-marquez-2008.json --figures docs/results
    python experiments/gimenez_marquez_2008.py --render docs/results/gimenez-marquez-2008.json  # figures only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_output import publish, render  # noqa: E402

LEXICAL = ["bleu", "bleu:max_order=2", "nist", "chrf", "chrf++", "ter", "wer", "per", "rouge-1", "rouge-2",
           "rouge-l", "rouge-w", "rouge-su", "meteor", "gtm", "gtm:e=2", "cider"]
SHALLOW = ["sp-op", "sp-oc", "sp-nist"]
METRICS = LEXICAL + SHALLOW
WMT12_PAIRS = ("cs-en", "de-en", "es-en", "fr-en")
CRITERIA = (("king", "queen"), ("r_snt", "ulc"))


def _data() -> Path:
    env = os.environ.get("COMBO_DATA_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def load(data: Path, max_refs: int, seed: int, cache: str, jobs: int):
    """``{name: MetaEvaluator}`` for every test bed, scored (and reference-scored where KING is defined)."""
    from combo import load_testbed
    from combo.meta.queen import min_references
    from combo.evaluate import MetaEvaluator
    from combo.scoring import score_testbed, score_with_references

    need = min_references("distinct") + 1  # KING: 4 references
    beds = {"Flickr8k": load_testbed(data / "flickr8k"), "DSTC7": load_testbed(data / "dstc7")}
    beds.update({f"WMT12 {lp}": load_testbed(data / "wmt12", lp=lp) for lp in WMT12_PAIRS})
    evaluators, info = {}, {}
    for name, tb in beds.items():
        t = time.perf_counter()
        n_all = len(tb.segments)
        if name == "DSTC7":
            tb = tb.subset([i for i, s in enumerate(tb.segments) if len(s.references) >= need])
        if min(len(s.references) for s in tb.segments) >= need:
            table, refs = score_with_references(tb, METRICS, max_refs=max_refs, seed=seed, jobs=jobs,
                                                cache_dir=cache)
        else:
            table, refs = score_testbed(tb, METRICS, jobs=jobs, cache_dir=cache), None
        ev = MetaEvaluator(tb, table, refs)
        evaluators[name] = ev
        info[name] = {"segments": len(tb.segments), "segments_in_file": n_all, "rows": len(table.row_system),
                      "systems": len(table.systems), "aspect": ev.aspect,
                      "capped_segments": getattr(refs, "capped_segments", 0) if refs is not None else 0,
                      "king": refs is not None, "seconds": time.perf_counter() - t}
        print(f"[{name}] scored in {info[name]['seconds']:.0f} s", file=sys.stderr)
    return evaluators, info


def _value(ev, subset, criterion, scheme):
    if criterion == "king" and ev.refs is None:
        return None
    return float(ev.quality(subset, criterion, scheme).value)


def run(args) -> dict:
    from combo.evaluate import search_metric_sets

    t0 = time.perf_counter()
    evs, info = load(Path(args.data), args.max_refs, args.seed, args.cache, args.jobs)
    names = list(evs)
    out = {"metrics": METRICS, "testbeds": info, "max_refs": args.max_refs, "seed": args.seed,
           "individual": {}, "optimal": {}, "portability_testbeds": {}, "portability_criteria": {}}
    # Table 2: every metric alone under both criteria
    for name, ev in evs.items():
        out["individual"][name] = {c: {m: _value(ev, [k], c, s) for k, m in enumerate(METRICS)} for c, s in CRITERIA}
    # Table 3: greedy optimal sets
    for name, ev in evs.items():
        out["optimal"][name] = {}
        for c, s in CRITERIA:
            if c == "king" and ev.refs is None:
                continue
            t = time.perf_counter()
            res = search_metric_sets(ev, criterion=c, scheme=s, strategy="greedy")
            ulc_all = _value(ev, list(range(len(METRICS))), c, s)
            out["optimal"][name][c] = {"selected": res.selected, "quality": res.quality,
                                       "best_single": list(res.best_single), "all_metrics": ulc_all,
                                       "evaluations": res.evaluations, "seconds": time.perf_counter() - t}
            print(f"[{name} {c}] {res.selected} {res.quality:.4f} (best single {res.best_single[0]} "
                  f"{res.best_single[1]:.4f})", file=sys.stderr)
    # Table 4a: an optimal set carried to the other test beds (same criterion)
    for c, s in CRITERIA:
        rows = {}
        for src in names:
            if c not in out["optimal"][src]:
                continue
            subset = [METRICS.index(m) for m in out["optimal"][src][c]["selected"]]
            rows[src] = {dst: _value(evs[dst], subset, c, s) for dst in names}
        out["portability_testbeds"][c] = rows
    # Table 4b: an optimal set carried to the other criterion (same test bed)
    for name, ev in evs.items():
        if "king" not in out["optimal"][name]:
            continue
        row = {}
        for src_c in ("king", "r_snt"):
            subset = [METRICS.index(m) for m in out["optimal"][name][src_c]["selected"]]
            row[src_c] = {c: _value(ev, subset, c, s) for c, s in CRITERIA}
        out["portability_criteria"][name] = row
    out["seconds"] = time.perf_counter() - t0
    return out


def _f(v, digits=3):
    return "-" if v is None or not np.isfinite(v) else f"{v:.{digits}f}".replace("0.", ".", 1) if v >= 0 else \
        f"−{-v:.{digits}f}".replace("0.", ".", 1)


def _slug(name: str) -> str:
    return name.lower().replace(" ", "-")


def figures(res, folder: Path) -> list:
    """PNGs drawn by the report's plotting module: each metric's KING against its R_snt (one per test bed
    with KING), and the portability of optimal sets across test beds (one per criterion)."""
    from combo.report import plots

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in (n for n in res["individual"] if res["testbeds"][n]["king"]):
        ind = res["individual"][name]
        png = plots.scatter([ind["r_snt"][m] for m in res["metrics"]], [ind["king"][m] for m in res["metrics"]],
                            title=f"{name}: each metric alone", xlabel="R_snt (segment Pearson)",
                            ylabel="KING (QUEEN of the metric alone)", point_labels=res["metrics"],
                            groups=["lexical" if m in LEXICAL else "shallow-syntactic" for m in res["metrics"]],
                            width=5.5, height=4.5)
        paths.append(folder / f"gimenez-marquez-2008-individual-{_slug(name)}.png")
        paths[-1].write_bytes(png)
    for c, _ in CRITERIA:
        rows = res["portability_testbeds"][c]
        src = list(rows)
        dst = [d for d in res["individual"] if any(rows[s][d] is not None for s in src)]
        mat = np.array([[np.nan if rows[s][d] is None else rows[s][d] for d in dst] for s in src])
        # colour relative to the test bed's own optimum: 1 = as good as the set found there
        own = np.array([res["optimal"][d][c]["quality"] for d in dst])
        label = "KING" if c == "king" else "R_snt"
        png = plots.heatmap(mat / own, src, dst, title=f"{label}: portability of optimal sets",
                            vmin=min(0.5, float(np.nanmin(mat / own))), vmax=1.0, cmap="viridis",
                            colorbar_label="share of the target's own optimum",
                            cell_text=[[_f(v) for v in r] for r in mat], xlabel="measured on",
                            ylabel="optimal set found on")
        paths.append(folder / f"gimenez-marquez-2008-portability-{_slug(label)}.png")
        paths[-1].write_bytes(png)
    return paths


def markdown(res) -> str:
    """The tables of docs/results/gimenez-marquez-2008.md."""
    names = list(res["individual"])
    out = ["**Table 2 (ours): individual metric quality**\n",
           "| metric | " + " | ".join(f"KING {n}" for n in names if res["testbeds"][n]["king"]) + " | "
           + " | ".join(f"R_snt {n}" for n in names) + " |",
           "|---|" + "---:|" * (sum(res["testbeds"][n]["king"] for n in names) + len(names))]
    for m in res["metrics"]:
        king = [_f(res["individual"][n]["king"][m]) for n in names if res["testbeds"][n]["king"]]
        rsnt = [_f(res["individual"][n]["r_snt"][m]) for n in names]
        out.append(f"| {m} | " + " | ".join(king + rsnt) + " |")
    out += ["", "**Table 3 (ours): optimal metric sets (greedy)**\n",
            "| test bed | criterion | optimal set | quality | best single metric | all metrics combined |",
            "|---|---|---|---:|---|---:|"]
    for n in names:
        for c, s in CRITERIA:
            o = res["optimal"][n].get(c)
            if o:
                label = "QUEEN / KING" if c == "king" else "ULC / R_snt"
                out.append(f"| {n} | {label} | {{{', '.join(o['selected'])}}} | {_f(o['quality'])} | "
                           f"{o['best_single'][0]} {_f(o['best_single'][1])} | {_f(o['all_metrics'])} |")
    for c, _ in CRITERIA:
        rows = res["portability_testbeds"][c]
        dst = [d for d in names if any(rows[s][d] is not None for s in rows)]
        label = "QUEEN / KING" if c == "king" else "ULC / R_snt"
        out += ["", f"**Table 4a (ours): portability across test beds, {label}**"
                " (row: where the set was found; column: where it is measured; diagonal = the optimum)\n",
                "| set found on | " + " | ".join(dst) + " |", "|---|" + "---:|" * len(dst)]
        for s in rows:
            out.append(f"| {s} | " + " | ".join(_f(rows[s][d]) for d in dst) + " |")
    out += ["", "**Table 4b (ours): portability across criteria** (same test bed)\n",
            "| test bed | set optimal under | its KING | its R_snt |", "|---|---|---:|---:|"]
    for n, row in res["portability_criteria"].items():
        for src, vals in row.items():
            label = "QUEEN / KING" if src == "king" else "ULC / R_snt"
            out.append(f"| {n} | {label} | {_f(vals['king'])} | {_f(vals['r_snt'])} |")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(_data()), help="folder holding flickr8k/, dstc7/ and wmt12/")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "combo" / "scores"),
                        help="folder caching metric scores")
    parser.add_argument("--max-refs", type=int, default=8, help="DSTC7: references kept per context (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default=None, help="write all figures here (JSON)")
    parser.add_argument("--figures", default=None, help="folder for the PNG figures")
    parser.add_argument("--render", default=None, metavar="JSON",
                        help="only draw the figures (to --figures, default docs/results) and print the tables "
                             "from a JSON written by --out")
    args = parser.parse_args(argv)
    if args.render:
        render(json.loads(Path(args.render).read_text(encoding="utf-8")), figures, markdown, args.figures)
        return
    os.environ.setdefault("NLTK_DATA", str(Path(args.data) / "nltk_data"))
    publish(run(args), figures, markdown, args.out, args.figures)


if __name__ == "__main__":
    main()
