"""DiscoTK-light (Joty, Guzmán, Màrquez & Nakov 2014, Table 1) from combo's own RST parses, on a WMT12 subset.

The protocol is in docs/results/joty-2014.md ("DiscoTK-light from combo's own parses: protocol"), committed
before any discourse score: for each WMT12 into-English pair the first 100 segments in test-set order that
carry a pairwise preference, with every system's output; DiscoTK-light = the five discourse tree kernels
(trees from Feng & Hirst's parser, the ``discourse`` extra) plus ``rouge-1``; untuned (ULC) and tuned
(pairwise logistic regression trained on the other three pairs' subsets); beside them, on the same subset,
single metrics and the lexical (23) and heterogeneous (36) groups, and the heterogeneous group with
DiscoTK-light added (42). Segment level: WMT12 Kendall, metric ties discordant, mean of the four pairs.

The discourse scoring's wall time, CPU and peak memory, of this process with its workers and their parser and
Java processes (sampled from /proc, ``process_usage.TreeUsage``), are recorded in the results.

Usage::

    python experiments/discotk_light.py --cache ~/.cache/combo/wmt12 --jobs 2 --out docs/results/discotk-light.json
    python experiments/discotk_light.py --render docs/results/discotk-light.json   # the tables from saved results
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from joty_2014 import combination_rows, single_rows  # noqa: E402
from process_usage import TreeUsage  # noqa: E402
from joty_2014 import markdown as joty_markdown  # noqa: E402
from study_output import publish, render  # noqa: E402
from wmt12_tuned import FEATURES, HETEROGENEOUS, PairEvaluation, parse_args  # noqa: E402

SEGMENTS = 100  # judged segments per pair (the protocol's subset rule)
DISCOURSE = ["dr-tk-nolex", "dr-tk-lex1", "dr-tk-lex1.1", "dr-tk-lex2", "dr-tk-lex2.1"]
LIGHT = DISCOURSE + ["rouge-1"]
GROUPS = {"DiscoTK-light": LIGHT, "lexical": FEATURES, "heterogeneous": HETEROGENEOUS,
          "heterogeneous+DiscoTK-light": HETEROGENEOUS + [m for m in LIGHT if m not in HETEROGENEOUS]}
SINGLES = LIGHT + ["bleu", "chrf", "meteor"]
PUBLISHED = {"DiscoTK-light, untuned (all of WMT12, CODRA parses)": .171,
             "DiscoTK-light, tuned (all of WMT12, CODRA parses)": .207}


def judged_subset(testbed, n: int):
    """The first ``n`` segments in test-set order that carry a pairwise preference (the protocol's rule)."""
    judged = sorted({p.segment for p in testbed.preferences})[:n]
    return testbed.subset(judged)


def run(args) -> dict:
    from combo import score_testbed
    from combo.io import WMT12_INTO_ENGLISH, read_wmt12_into_english

    os.environ.setdefault("NLTK_DATA", str(Path(args.data).parent / "nltk_data"))
    t0 = time.perf_counter()
    lps = list(WMT12_INTO_ENGLISH)
    full = read_wmt12_into_english(args.data)
    testbeds = {lp: judged_subset(full[lp], SEGMENTS) for lp in lps}
    sizes = {lp: {"segments": len(tb.segments), "systems": len(tb.systems), "preferences": len(tb.preferences),
                  "texts": len({t for _, _, t in tb.rows()} | {r for refs in tb.references() for r in refs})}
             for lp, tb in testbeds.items()}
    with TreeUsage() as usage:  # the workers and their parser and Java processes too
        discourse = {lp: score_testbed(testbeds[lp], DISCOURSE, jobs=args.jobs, progress=True, cache_dir=args.cache)
                     for lp in lps}
    parsing = usage.result()
    print(f"discourse scored in {parsing['wall_seconds']:.0f} s", file=sys.stderr)
    rest = [m for m in dict.fromkeys(HETEROGENEOUS + SINGLES) if m not in DISCOURSE]
    others = {lp: score_testbed(testbeds[lp], rest, jobs=args.jobs, cache_dir=args.cache) for lp in lps}
    tables = {lp: _joined(discourse[lp], others[lp]) for lp in lps}
    evals = {lp: PairEvaluation(lp, testbeds[lp], tables[lp]) for lp in lps}
    notes = sorted({n for lp in lps for n in discourse[lp].metadata.get("notes", [])})
    results = {"subset": {"rule": f"first {SEGMENTS} judged segments per pair", "pairs": sizes},
               "groups": GROUPS, "published": PUBLISHED, "parsing": parsing, "notes": notes,
               "singles": single_rows(tables, evals, lps, SINGLES),
               "combinations": combination_rows(testbeds, tables, evals, lps, GROUPS, args)}
    results["seconds"] = time.perf_counter() - t0
    return results


def _joined(a, b):
    """One score table with the metrics of ``a`` then ``b`` (both over the same rows)."""
    import dataclasses

    assert a.systems == b.systems and np.array_equal(a.row_system, b.row_system)
    return dataclasses.replace(a, metrics=a.metrics + b.metrics, signatures=a.signatures + b.signatures,
                               higher_is_better=a.higher_is_better + b.higher_is_better,
                               segment=np.vstack([a.segment, b.segment]), system=np.vstack([a.system, b.system]))


def markdown(res) -> str:
    return joty_markdown(res, first="combination")


def main(argv=None):
    import argparse

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--render", default=None, metavar="JSON", help="print the tables from a JSON written by --out")
    known, rest = extra.parse_known_args(argv)
    if known.render:
        import json

        render(json.loads(Path(known.render).read_text(encoding="utf-8")), lambda res, folder: [], markdown, None)
        return
    args = parse_args(__doc__.split("\n")[0], rest)
    res = run(args)
    publish(res, lambda res, folder: [], markdown, args.out, None,
            timing=f" (discourse scoring {res['parsing']['wall_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
