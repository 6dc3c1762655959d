"""Galley et al. (2015), *ΔBLEU: A Discriminative Metric for Generation Tasks with Intrinsically Diverse
Targets* (ACL), their correlation table and Figure 2, on Flickr8k.

Flickr8k gives human-rated references as the paper's setting needs them: for an image, the captions of
*other* images that experts rated for it (Flickr8k-Expert, three scores 1-4, averaged and mapped
linearly to [-1, 1]: 1 -> -1, 2.5 -> 0, 4 -> +1) join its five own captions (weight 1). The candidates
are the captions crowd workers judged for the image (Flickr8k-CrowdFlower, human score: the share of
"yes" votes) except the image's own captions and except every caption that is a weighted reference
anywhere (so no candidate is ever scored against itself or re-used as a reference).

Metrics (BLEU-2, as the paper; sacreBLEU's 13a tokenisation and exp smoothing, combo's ``bleu``):
corpus BLEU over the unit (references unweighted), sentence BLEU (mean over the unit of the
sentence-level scores) and ΔBLEU (corpus level, weighted references), each with all references and
with the references of weight >= 0.6 only. Observation units of M candidates: each of 1,000 random
assignments shuffles the candidates and cuts them into floor(N / M) units of M (the remainder left out
of that assignment); a unit's metric score is computed from its M candidates (corpus statistics
summed), its human score is their mean; Spearman's rho and Kendall's tau (tau-b) over the units; the
table gives the mean over assignments and the 2.5-97.5 percentiles (95% interval).

Usage::

    python experiments/galley_2015.py --out galley.json --figures docs/results
    python experiments/galley_2015.py --render docs/results/galley-2015.json   # figures only, from saved results
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_output import publish, render  # noqa: E402

M_GRID = (1, 2, 5, 10, 20, 50, 100)
THRESHOLD = 0.6
METRIC = "bleu:max_order=2"


def _data() -> Path:
    env = os.environ.get("COMBO_DATA_DIR")
    return (Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data") / "flickr8k"


def expert_weight(mean_score: float) -> float:
    """An expert rating on 1-4 mapped linearly to [-1, 1] (1 -> -1, 4 -> +1)."""
    return (mean_score - 2.5) / 1.5


@functools.lru_cache(maxsize=2)
def _read(root: str):
    """Flickr8k-Expert and -CrowdFlower (own-caption pairs dropped) and each image's rated captions with weights."""
    from combo import load_testbed

    expert = load_testbed(root, judgments="expert")
    crowd = load_testbed(root, judgments="crowd")
    scores: Dict[str, Dict[str, List[float]]] = {}
    for s in expert.scores:
        scores.setdefault(expert.segments[s.segment].id, {}).setdefault(s.system, []).append(s.value)
    text_of = {cid: outs[next(iter(outs))] for cid, outs in expert.candidates.items()}
    rated = {image: ([text_of[c] for c in per], [expert_weight(sum(v) / len(v)) for v in per.values()], set(per))
             for image, per in scores.items()}
    return crowd, rated


def build(root, exclude: str = "anywhere") -> dict:
    """References (own captions weight 1, expert-rated captions weighted) and crowd-judged candidates.

    ``exclude="anywhere"`` leaves out every candidate caption that is a weighted reference of any image
    (the protocol); ``"same-image"`` only those that are weighted references of the image judged.
    """
    crowd, rated = _read(str(root))
    weighted_ids = set().union(*(ids for _, _, ids in rated.values()))
    none = ([], [], set())
    refs, weights, hyps, human, images = [], [], [], [], []
    excluded = 0
    crowd_value = {(s.system, s.segment): s.value for s in crowd.scores}
    for cid, outs in crowd.candidates.items():
        for seg, text in outs.items():
            segment = crowd.segments[seg]
            texts, ws, ids = rated.get(segment.id, none)
            if cid in (weighted_ids if exclude == "anywhere" else ids):
                excluded += 1
                continue
            refs.append(list(segment.references) + texts)
            weights.append([1.0] * len(segment.references) + ws)
            hyps.append(text)
            human.append(crowd_value[(cid, seg)])
            images.append(segment.id)
    return {"hyps": hyps, "refs": refs, "weights": weights, "human": np.array(human), "images": images,
            "excluded_weighted_reference_captions": excluded,
            "dropped_own_caption_pairs": crowd.metadata["dropped_own_caption_pairs"]}


def keep_at_least(refs, weights, threshold):
    """The references of weight >= threshold (with their weights)."""
    out_r, out_w = [], []
    for r, w in zip(refs, weights):
        keep = [k for k, x in enumerate(w) if x >= threshold]
        out_r.append([r[k] for k in keep])
        out_w.append([w[k] for k in keep])
    return out_r, out_w


def unit_scores(per_row: np.ndarray, order: np.ndarray, m: int, score: Optional[Callable] = None) -> np.ndarray:
    """Scores of the units of ``m`` consecutive rows of each assignment ``order`` (shape (A, N)), shape (A, N // m):
    ``score`` of the unit's summed ``per_row`` values (corpus statistics), or with ``score=None`` their mean."""
    a, n = order.shape
    k = n // m
    summed = per_row[order[:, :k * m]].reshape((a, k, m) + per_row.shape[1:]).sum(axis=2)
    if score is None:
        return summed / m
    return np.asarray(score(summed.reshape((a * k,) + per_row.shape[1:]))).reshape(a, k)


def correlations(metric_units: np.ndarray, human_units: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Kendall's tau-b of each assignment (rows) over its units (columns)."""
    rx = sps.rankdata(metric_units, axis=1)
    ry = sps.rankdata(human_units, axis=1)
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(1) / np.sqrt((rx ** 2).sum(1) * (ry ** 2).sum(1))
    tau = np.array([sps.kendalltau(x, y).statistic for x, y in zip(metric_units, human_units)])
    return rho, tau


def observation_units(variants: Dict[str, Tuple[np.ndarray, Callable]], human: np.ndarray, m: int, n_assign: int,
                      seed: int, chunk: int = 50) -> Dict[str, Dict[str, np.ndarray]]:
    """Spearman and Kendall over units of ``m`` rows for ``n_assign`` random assignments (seeded), for every
    metric variant ``{name: (per-row values, score of summed values)}``; all variants share each assignment."""
    rng = np.random.default_rng(seed)
    n = len(human)
    once = m == 1  # units of one: every assignment gives the same units, so compute once
    todo = 1 if once else n_assign
    out = {key: {"spearman": [], "kendall": []} for key in variants}
    for start in range(0, todo, chunk):
        a = min(chunk, todo - start)
        order = rng.permuted(np.tile(np.arange(n), (a, 1)), axis=1)
        human_units = unit_scores(human, order, m)
        for key, (per_row, score) in variants.items():
            rho, tau = correlations(unit_scores(per_row, order, m, score), human_units)
            out[key]["spearman"].append(rho)
            out[key]["kendall"].append(tau)
    return {key: {c: np.repeat(np.concatenate(v), n_assign if once else 1) for c, v in corr.items()}
            for key, corr in out.items()}


def summary(values: np.ndarray) -> dict:
    return {"mean": float(np.mean(values)), "low": float(np.percentile(values, 2.5)),
            "high": float(np.percentile(values, 97.5))}


def study(data, n_assign: int, seed: int) -> dict:
    """Every metric variant's correlations over observation units, for each unit size of ``M_GRID``."""
    from combo import get_metric

    metric = get_metric(METRIC)
    human = data["human"]
    variants = {}
    for refset in ("all", f"w>={THRESHOLD}"):
        refs, weights = (data["refs"], data["weights"]) if refset == "all" else \
            keep_at_least(data["refs"], data["weights"], THRESHOLD)
        plain = metric.segment_statistics(data["hyps"], refs)
        corpus = lambda s: metric.score(s, segment_level=False)  # noqa: E731
        variants[f"BLEU | {refset}"] = (plain, corpus)
        variants[f"sentence BLEU | {refset}"] = (metric.score(plain, segment_level=True), None)  # unit mean
        variants[f"ΔBLEU | {refset}"] = (metric.segment_statistics(data["hyps"], refs, weights), corpus)
    res = {"candidates": len(human), "images": len(set(data["images"])),
           "references_per_candidate": float(np.mean([len(r) for r in data["refs"]])),
           "references_w_ge_threshold": float(np.mean([sum(x >= THRESHOLD for x in w) for w in data["weights"]])),
           "negative_weight_share": float(np.mean([x < 0 for w in data["weights"] for x in w[5:]])),
           "excluded_weighted_reference_captions": data["excluded_weighted_reference_captions"],
           "dropped_own_caption_pairs": data["dropped_own_caption_pairs"], "curves": {}}
    curves = {m: observation_units(variants, human, m, n_assign, seed + m) for m in M_GRID}
    for key in variants:
        res["curves"][key] = {m: {c: summary(v) for c, v in curves[m][key].items()} for m in M_GRID}
        top = res["curves"][key][M_GRID[-1]]
        print(f"[{key}] M={M_GRID[-1]} rho {top['spearman']['mean']:.3f} tau {top['kendall']['mean']:.3f}",
              file=sys.stderr)
    return res


def run(args) -> dict:
    t0 = time.perf_counter()
    res = {"metric": METRIC, "threshold": THRESHOLD, "assignments": args.assignments, "seed": args.seed,
           "protocols": {}}
    for exclude in ("anywhere", "same-image"):
        res["protocols"][exclude] = study(build(args.data, exclude), args.assignments, args.seed)
    res["seconds"] = time.perf_counter() - t0
    return res


def _f(v):
    return f"{v:.3f}".replace("0.", ".", 1) if v >= 0 else f"−{-v:.3f}".replace("0.", ".", 1)


def markdown(res, m=100) -> str:
    out = []
    for exclude, r in res["protocols"].items():
        out += [f"**Candidates excluded when a weighted reference {exclude}**: {r['candidates']:,} candidates "
                f"on {r['images']} images ({r['excluded_weighted_reference_captions']:,} crowd pairs left out), "
                f"{r['references_per_candidate']:.2f} references per candidate "
                f"({r['references_w_ge_threshold']:.2f} with w >= {THRESHOLD})\n",
                f"| metric | references | Spearman ρ, M={m} [95%] | Kendall τ, M={m} [95%] |", "|---|---|---:|---:|"]
        for key, curve in r["curves"].items():
            name, refset = key.split(" | ")
            sp, k = curve[m]["spearman"], curve[m]["kendall"]
            out.append(f"| {name} | {refset} | {_f(sp['mean'])} [{_f(sp['low'])}, {_f(sp['high'])}] | "
                       f"{_f(k['mean'])} [{_f(k['low'])}, {_f(k['high'])}] |")
        out += ["", "Spearman ρ by unit size M (mean over assignments):\n",
                "| metric | references | " + " | ".join(f"M={x}" for x in M_GRID) + " |",
                "|---|---|" + "---:|" * len(M_GRID)]
        for key, curve in r["curves"].items():
            name, refset = key.split(" | ")
            out.append(f"| {name} | {refset} | " + " | ".join(_f(curve[x]["spearman"]["mean"]) for x in M_GRID)
                       + " |")
        out.append("")
    return "\n".join(out)


def load_results(path: Path) -> dict:
    """The results written by ``--out``, with the unit sizes M as numbers again (JSON keys are strings)."""
    res = json.loads(path.read_text(encoding="utf-8"))
    for r in res["protocols"].values():
        r["curves"] = {key: {int(m): v for m, v in curve.items()} for key, curve in r["curves"].items()}
    return res


def figure(res, folder: Path) -> List[Path]:
    """Per protocol, three panels (BLEU, sentence BLEU, ΔBLEU): Spearman and Kendall against M, all
    references and w >= 0.6, with the 95% band over assignments (drawn by the report's plotting module)."""
    from combo.report import plots

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for exclude, r in res["protocols"].items():
        panels = {}
        for name in ("BLEU", "sentence BLEU", "ΔBLEU"):
            panels[f"{name}-2"] = [
                plots.Series(f"{corr}, {refset} refs", [int(m) for m in curve],
                             [curve[m][corr]["mean"] for m in curve], [curve[m][corr]["low"] for m in curve],
                             [curve[m][corr]["high"] for m in curve], colour_key=corr, dashed=refset != "all")
                for refset in ("all", f"w>={THRESHOLD}") for curve in [r["curves"][f"{name} | {refset}"]]
                for corr in ("spearman", "kendall")]
        png = plots.line_panels(panels, title=f"Flickr8k, candidates never a weighted reference {exclude}: "
                                              "correlation with crowd judgments (95% band over assignments)",
                                xlabel="observation unit size M (candidates)", ylabel="correlation",
                                log_x=True, share_y=True, panel_width=4.2, panel_height=3.4)
        path = folder / f"galley-2015-units-{exclude}.png"
        path.write_bytes(png)
        paths.append(path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(_data()), help="Flickr8k folder")
    parser.add_argument("--assignments", type=int, default=1000, help="random assignments to units")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write all figures here (JSON)")
    parser.add_argument("--figures", default=None, help="folder for the PNG figure")
    parser.add_argument("--render", default=None, metavar="JSON",
                        help="only draw the figures (to --figures, default docs/results) and print the tables "
                             "from a JSON written by --out")
    args = parser.parse_args(argv)
    if args.render:
        render(load_results(Path(args.render)), figure, markdown, args.figures)
        return
    publish(run(args), figure, markdown, args.out, args.figures)


if __name__ == "__main__":
    main()
