"""Joty, Guzmán, Màrquez & Nakov (2014), *DiscoTK* (WMT14), Table 1 as our data allows: untuned and tuned
combinations of lexical, syntactic and embedding metrics on WMT12 into English, segment and system level.

DiscoTK's Table 1 reports, on WMT12 and WMT13 into English, the segment-level WMT Kendall tau and the
system-level Spearman rho of single metrics and of two combinations, each untuned (uniform average of
min-max normalised scores per language pair) and tuned (pairwise logistic ranking trained on other
data): DiscoTK-light (five discourse tree kernels) and DiscoTK-party (those plus Asiya's metrics and
BLEU, NIST, TER, METEOR...). Here, on WMT12 into English only (the WMT13 judgments are not in our data):

* untuned = ULC of the metric group (min-max over each test pair's own scores: DiscoTK's untuned
  combination);
* tuned = the DiscoTK learner (pairwise logistic regression, C chosen by inner 5-fold CV on the training
  pairs), trained on the three other into-English pairs and applied to the fourth (DiscoTK trained on
  other years; we have one year, so the held-out unit is the language pair);
* groups: lexical (23 metrics), lexical + syntactic (+ SP, CP, DP: 33), lexical + syntactic + embedding
  (+ GloVe averages: 36), i.e. the ``full`` and ``heterogeneous`` features of ``wmt12_tuned.py`` and the
  step between them. DiscoTK-light's discourse kernels need RST parses, which no installable parser here
  gives, so there is no DiscoTK-light row.

Segment level: WMT12 Kendall with metric ties discordant (WMT12's convention), averaged over the four
pairs; system level: Spearman with each system's share of wins (WMT12's). 95% bootstrap intervals as in
``wmt12_tuned.py``, whose helpers this script imports.

Usage::

    python experiments/joty_2014.py --cache ~/.cache/combo/wmt12 --out joty.json --figures docs/results
    python experiments/joty_2014.py --render docs/results/joty-2014.json   # the figure only, from saved results
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wmt12_tuned import (FEATURES, HETEROGENEOUS, LINGUISTIC, PairEvaluation, evaluate_scores,  # noqa: E402
                         fit_on_other_pairs, parse_args, select_metrics, single_scores, system_means, tabulate)
from study_output import publish, render  # noqa: E402

SYNTACTIC = [m for m in LINGUISTIC if m.startswith(("sp-", "cp-", "dp-"))]
GROUPS = {"lexical": FEATURES, "lexical+syntactic": FEATURES + SYNTACTIC, "lexical+syntactic+embedding": HETEROGENEOUS}
SINGLES = ["bleu", "nist", "ter", "meteor", "chrf", "rouge-l", "sp-op", "cp-stm", "dp-hwcm", "dp-or", "emb-avg"]
# Published, WMT12 into English, segment level, WMT12 Kendall averaged over the four pairs (the data README).
PUBLISHED = {"best WMT12 participant (SPEDE07PP)": .254, "Asiya, uniform combination (ULC)": .273,
             "DiscoTK-party, untuned": .257, "DiscoTK-party, tuned on other years": "0.302-0.305"}


def run(args) -> dict:
    from combo import score_testbed
    from combo.io import WMT12_INTO_ENGLISH, read_wmt12_into_english

    os.environ.setdefault("NLTK_DATA", str(Path(args.data).parent / "nltk_data"))
    t0 = time.perf_counter()
    lps = list(WMT12_INTO_ENGLISH)
    testbeds = read_wmt12_into_english(args.data)
    tables = {lp: score_testbed(testbeds[lp], HETEROGENEOUS, jobs=args.jobs, cache_dir=args.cache) for lp in lps}
    scoring = time.perf_counter() - t0
    evals = {lp: PairEvaluation(lp, testbeds[lp], tables[lp]) for lp in lps}
    results = {"groups": GROUPS, "published": PUBLISHED, "scoring_seconds": scoring,
               "singles": single_rows(tables, evals, lps, SINGLES),
               "combinations": combination_rows(testbeds, tables, evals, lps, GROUPS, args)}
    results["seconds"] = time.perf_counter() - t0
    return results


def single_rows(tables, evals, lps, specs) -> dict:
    """Each metric of ``specs`` alone: its figures averaged over the pairs ``lps``."""
    out = {}
    for spec in specs:
        per = {lp: evaluate_scores(evals[lp], *single_scores(tables[lp], tables[lp].metrics.index(spec)))
               for lp in lps}
        out[spec] = {key: float(np.mean([per[lp][key] for lp in lps])) for key in per[lps[0]]}
    return out


def combination_rows(testbeds, tables, evals, lps, groups, args) -> dict:
    """Each group of ``groups`` untuned (ULC, min-max over each pair's own scores) and tuned (pairwise logistic
    regression trained on the other pairs), tabulated with intervals and the tuned-minus-untuned difference."""
    from combo.combine.ulc import ulc

    out = {}
    for group, specs in groups.items():
        sub = {lp: select_metrics(tables[lp], specs) for lp in lps}
        hib = np.asarray(sub[lps[0]].higher_is_better, bool)
        rows = {"tuned": {}, "untuned": {}}
        for lp in lps:
            raw = fit_on_other_pairs(testbeds, sub, lps, lp).raw_scores(sub[lp].segment)
            rows["tuned"][lp] = (expit(raw), system_means(sub[lp], raw))
            rows["untuned"][lp] = (ulc(sub[lp].segment, hib), ulc(sub[lp].system, hib))
        out[group] = tabulate(evals, lps, rows, args, against=("untuned",))
        print(f"[{group}] untuned {out[group]['untuned']['average']['kendall_discordant']:.4f} "
              f"tuned {out[group]['tuned']['average']['kendall_discordant']:.4f}", file=sys.stderr)
    return out


def _f(v):
    return f"{v:.3f}".replace("0.", ".", 1) if v >= 0 else f"−{-v:.3f}".replace("0.", ".", 1)


def markdown(res, first: str = "metric") -> str:
    """The combinations (per pair and averaged, with intervals), the single metrics, and each group's tuned minus
    untuned difference, as Markdown (``first``: the first column's heading)."""
    lps = list(next(iter(res["combinations"].values()))["tuned"]["per_pair"])
    out = [f"| {first} | " + " | ".join(lps) + " | segment Kendall, average [95% CI] "
           "| system Spearman, average [95% CI] |",
           "|---|" + "---:|" * (len(lps) + 2)]
    for group, table in res["combinations"].items():
        n = len(res["groups"][group])
        for kind in ("untuned", "tuned"):
            e = table[kind]
            avg, iv = e["average"], e["average"].get("interval", {})
            seg = _f(avg["kendall_discordant"]) + (" [{}, {}]".format(*map(_f, iv["kendall_discordant"])) if iv else "")
            sys_ = _f(avg["spearman"]) + (" [{}, {}]".format(*map(_f, iv["spearman"])) if iv else "")
            per = " | ".join(_f(e["per_pair"][lp]["kendall_discordant"]) for lp in lps)
            out.append(f"| {group} ({n}), {kind} | {per} | {seg} | {sys_} |")
    out += ["", "| single metric | segment Kendall, average | system Spearman, average |", "|---|---:|---:|"]
    for spec, v in res["singles"].items():
        out.append(f"| {spec} | {_f(v['kendall_discordant'])} | {_f(v['spearman'])} |")
    for group, table in res["combinations"].items():
        d = table["tuned"].get("minus_untuned")
        if d:
            out.append(f"\n{group}: tuned minus untuned {d['delta']:+.4f} [{d['interval'][0]:+.4f}, "
                       f"{d['interval'][1]:+.4f}], paired bootstrap p = {d['p_value']:.3f}")
    return "\n".join(out)


def figure(res, folder: Path) -> Path:
    """Bars (the report's plotting module): untuned and tuned segment-level Kendall per group, with
    intervals, beside the published anchors (a published range drawn as its interval)."""
    from combo.report import plots

    folder.mkdir(parents=True, exist_ok=True)
    labels, vals, lows, highs, groups = [], [], [], [], []
    for group, table in res["combinations"].items():
        for kind in ("untuned", "tuned"):
            avg = table[kind]["average"]
            low, high = avg.get("interval", {}).get("kendall_discordant", [np.nan, np.nan])
            labels.append(f"{group}, {kind}")
            vals.append(avg["kendall_discordant"])
            lows.append(low)
            highs.append(high)
            groups.append(f"ours, {kind}")
    for name, v in res["published"].items():
        low, high = (float(x) for x in v.split("-")) if isinstance(v, str) else (np.nan, np.nan)
        labels.append(name)
        vals.append(high if isinstance(v, str) else float(v))
        lows.append(low)
        highs.append(high)
        groups.append("published")
    png = plots.bar_intervals(labels, vals, lows, highs, groups=groups, sort=False, xlim=(0.2, max(vals) + 0.02),
                              title="WMT12 into English, segment level (DiscoTK's Table 1)",
                              xlabel="WMT12 Kendall tau, mean of the 4 pairs; 95% bootstrap interval "
                                     "(published range: its bounds)")
    path = folder / "joty-2014-kendall.png"
    path.write_bytes(png)
    return path


def main(argv=None):
    import argparse

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--figures", default=None, help="folder for the PNG figure")
    extra.add_argument("--render", default=None, metavar="JSON",
                       help="only draw the figure (to --figures, default docs/results) and print the tables "
                            "from a JSON written by --out")
    known, rest = extra.parse_known_args(argv)
    draw = lambda res, folder: [figure(res, folder)]  # noqa: E731  (one figure)
    if known.render:
        import json

        render(json.loads(Path(known.render).read_text(encoding="utf-8")), draw, markdown, known.figures)
        return
    args = parse_args(__doc__.split("\n")[0], rest)
    res = run(args)
    publish(res, draw, markdown, args.out, known.figures, timing=f" (scoring {res['scoring_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
