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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

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


def figures(res, folder: Path) -> list:
    """Two PNGs: metrics' KING against R_snt (per test bed with KING), and the test-bed portability matrices."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    beds = [n for n in res["individual"] if res["testbeds"][n]["king"]]
    fig, axes = plt.subplots(1, len(beds), figsize=(5.5 * len(beds), 4.5))
    for ax, name in zip(np.atleast_1d(axes), beds):
        ind = res["individual"][name]
        for m in res["metrics"]:
            x, y = ind["r_snt"][m], ind["king"][m]
            ax.scatter(x, y, s=18, color="tab:blue" if m in LEXICAL else "tab:orange")
            ax.annotate(m, (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_xlabel("R_snt (segment Pearson)")
        ax.set_ylabel("KING (QUEEN of the metric alone)")
        ax.set_title(f"{name}: individual metrics (blue lexical, orange shallow-syntactic)", fontsize=8)
    fig.tight_layout()
    p = folder / "gimenez-marquez-2008-individual.png"
    fig.savefig(p, dpi=120)
    plt.close(fig)
    paths.append(p)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, (c, _) in zip(axes, CRITERIA):
        rows = res["portability_testbeds"][c]
        src = list(rows)
        dst = [d for d in res["individual"] if any(rows[s][d] is not None for s in src)]
        mat = np.array([[np.nan if rows[s][d] is None else rows[s][d] for d in dst] for s in src])
        # relative to the test bed's own optimum: 1 = as good as the set found there
        own = np.array([res["optimal"][d][c]["quality"] for d in dst])
        rel = mat / own
        im = ax.imshow(rel, cmap="viridis", vmin=min(0.5, np.nanmin(rel)), vmax=1.0)
        ax.set_xticks(range(len(dst)), dst, rotation=30, ha="right", fontsize=7)
        ax.set_yticks(range(len(src)), src, fontsize=7)
        for i in range(len(src)):
            for j in range(len(dst)):
                ax.text(j, i, _f(mat[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if rel[i, j] < 0.85 else "black")
        ax.set_xlabel("measured on")
        ax.set_ylabel("optimal set found on")
        label = "KING" if c == "king" else "R_snt"
        ax.set_title(f"{label}: portability (colour = share of the target's own optimum)", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    p = folder / "gimenez-marquez-2008-portability.png"
    fig.savefig(p, dpi=120)
    plt.close(fig)
    paths.append(p)
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
    args = parser.parse_args(argv)
    os.environ.setdefault("NLTK_DATA", str(Path(args.data) / "nltk_data"))
    res = run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    if args.figures:
        figures(res, Path(args.figures))
    print(markdown(res))
    print(f"\ntotal {res['seconds']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
