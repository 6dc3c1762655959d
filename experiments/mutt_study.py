"""Boag et al. 2016 (MUTT): the authors' released trials beside the paper's Tables 4-6, then the Flickr-derived
trials, with every combo metric.

Experiment 1, the released trials (``../shared/data/mutt/released-trials``):

* Trials: the authors' own trial files (their repository's ``src/tmp/``): ten types, originals
  ``TYPE_a.json``, corruptions ``TYPE_b.json``, 5, 10 or 20 MSR-Video references ``TYPE_rN.json``.
* Scoring as their script (``src/metrics.py``): each type's originals and corruptions in two calls against the
  type's references (``run_released_unit_tests``); pass rules by type (the Difference formula for det_sub,
  near_syms and passive, the original above its corruption otherwise, a tie failing).
* Metrics: CIDEr-D and BLEU-4 with coco-caption's settings (``COCO_CAPTION_SPECS``: its PTB tokens, BLEU's
  epsilons, CIDEr-D's document frequencies per scored row), ROUGE-L with coco-caption's multi-reference rule
  (``coco_rouge_l``), combo's METEOR and TER; then combo's other metrics, the WMT12-tuned combination and the
  ULC of all of them; combo's default CIDEr-D, BLEU and ROUGE-L beside the coco settings.
* Beside ours: the paper's Tables 4-6 and the authors' released results (``coco.txt``, ``terp.txt``); with
  ``pycocoevalcap`` and Java installed, coco-caption itself run here on the same files.

Experiment 2, the FLICKR trials (``../shared/data/mutt/corruptions`` with Flickr8k captions):

* Trials: the FLICKR trials of the seven released SICK corruption sets with their image's five Flickr8k
  captions as references (``read_mutt(..., flickr8k=...)``), plus the three SICK+ fluency corruptions generated
  from their sentences (``fluency_trials``, seed 0); 1 to 5 references (a seeded sample below 5).
* Pass rules of the paper; combo's metrics at their defaults, the tuned combination and the ULC.

Usage::

    python experiments/mutt_study.py --data ../shared/data --out docs/results/boag2016.md
    python experiments/mutt_study.py --render docs/results/boag2016.json   # the figures only, from saved results
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from combo import load_testbed, score_testbed
from combo.combine.training import TrainOptions, train_model
from combo.io.mutt import read_mutt, select_trials
from combo.io.mutt_released import COMBO_NAMES, RELEASED_KINDS, read_released, read_released_results
from combo.meta.mutt import RELEASED_RULES, TIE_TOLERANCE, released_passes
from combo.metric_unit_tests import (COCO_CAPTION_SPECS, fluency_trials, run_released_unit_tests, run_unit_tests,
                                     score_released_trials)
from combo.metrics.lexical.rouge import coco_rouge_l

BOAG = ["bleu", "meteor", "cider", "ter"]
BOAG_NAMES = {"bleu": "BLEU", "meteor": "METEOR", "cider": "CIDEr-D", "ter": "TER"}
OTHERS = ["chrf", "rouge-l", "emb-avg", "emb-greedy", "sent-emb", "cp-tk", "dp-tk", "sp-op"]
TUNED_FEATURES = ["bleu", "chrf", "ter", "rouge-l", "meteor"]
REFERENCES = [1, 2, 3, 4, 5]
KIND_LABEL = {"meaning-altering": "altering", "meaning-preserving": "preserving", "fluency-disrupting": "fluency"}
LETTER = {"meaning-altering": "A", "meaning-preserving": "P", "fluency-disrupting": "F"}
ORDER = ["neg_subj", "neg_verb", "sem_opps", "det_sub", "near_syms", "passive", "shuffled",
         "dup_pp", "rm_pp_head", "reorder_chunks"]

# -- experiment 1: the released trials --------------------------------------------------------------------------

COUNTS = (5, 10, 20)
#: The paper's order of types (Tables 4-6); shuffled is not in the paper's tables.
RELEASED_ORDER = ["neg_subj", "neg_verb", "sem_opps", "passive", "near_syms", "det_sub", "shuffled",
                  "double_PP", "remove_prep", "swap_chunks"]
#: Boag et al. 2016, Tables 4-6: accuracy % at 5 / 10 / 20 references, on trials with at least 20 MSR-Video
#: references (coco-caption's CIDEr-D, BLEU-4 and METEOR 1.5; TERp), as ../shared/data/README.md transcribes them.
PAPER = {
    "CIDEr": {"neg_subj": (99.4, 99.4, 99.4), "neg_verb": (98.5, 98.5, 98.5), "sem_opps": (86.2, 92.7, 93.5),
              "passive": (5.5, 0.8, 2.5), "near_syms": (32.1, 26.2, 30.0), "det_sub": (40.0, 38.5, 56.9),
              "double_PP": (100.0, 99.0, 100.0), "remove_prep": (69.5, 76.8, 80.8),
              "swap_chunks": (91.4, 95.6, 96.6)},
    "BLEU": {"neg_subj": (99.1, 99.7, 99.7), "neg_verb": (97.5, 97.5, 98.0), "sem_opps": (76.4, 85.4, 88.6),
             "passive": (7.6, 4.6, 3.8), "near_syms": (45.0, 36.7, 34.2), "det_sub": (21.5, 27.7, 53.8),
             "double_PP": (100.0, 100.0, 100.0), "remove_prep": (63.5, 81.3, 87.7),
             "swap_chunks": (83.0, 91.4, 94.2)},
    "METEOR": {"neg_subj": (97.0, 98.5, 98.2), "neg_verb": (96.0, 96.0, 97.0), "sem_opps": (80.9, 86.6, 91.5),
               "passive": (23.9, 16.0, 13.0), "near_syms": (62.1, 62.1, 62.1), "det_sub": (55.4, 55.4, 70.8),
               "double_PP": (95.1, 98.5, 99.5), "remove_prep": (60.6, 72.9, 84.2),
               "swap_chunks": (81.2, 89.6, 92.4)},
    "TERp": {"neg_subj": (99.7, 99.7, 99.4), "neg_verb": (95.5, 97.0, 95.0), "sem_opps": (75.2, 79.7, 80.1),
             "passive": (20.6, 16.4, 9.7), "near_syms": (53.3, 46.7, 41.2), "det_sub": (6.2, 10.8, 27.7),
             "double_PP": (96.6, 99.0, 99.0), "remove_prep": (52.7, 66.5, 70.4),
             "swap_chunks": (91.0, 93.4, 93.4)},
}
COCO_ROUGE = "coco-rouge-l"
#: The five columns of Boag's comparison: (label, combo metric, released file and key, paper table).
MAIN = [("CIDEr-D", COCO_CAPTION_SPECS["CIDEr"], ("coco", "CIDEr"), "CIDEr"),
        ("BLEU-4", COCO_CAPTION_SPECS["Bleu_4"], ("coco", "Bleu_4"), "BLEU"),
        ("ROUGE-L", COCO_ROUGE, ("coco", "ROUGE_L"), None),
        ("METEOR", "meteor", ("coco", "METEOR"), "METEOR"),
        ("TER", "ter", ("terp", "terp"), "TERp")]
#: combo's defaults of the metrics coco-caption has, beside their coco settings.
DEFAULTS = [("CIDEr-D", "cider"), ("BLEU-4", "bleu"), ("ROUGE-L", "rouge-l")]


def share(passed: int, n: int) -> float:
    """Accuracy in %, computed as the authors' script: passed / total, times 100."""
    return passed / float(n) * 100 if n else float("nan")


def fmt(x) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{x:.1f}"


def coco_caption_reference(folder: Path, n: int):
    """Accuracies of coco-caption itself (pycocoevalcap, its Java PTB tokenizer and METEOR 1.5) on the released
    files, as the authors' script computes them (strict comparisons); None when it cannot run here."""
    if shutil.which("java") is None:
        return None
    try:
        from pycocoevalcap.bleu.bleu import Bleu
        from pycocoevalcap.cider.cider import Cider
        from pycocoevalcap.meteor.meteor import Meteor
        from pycocoevalcap.rouge.rouge import Rouge
        from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
    except ImportError:
        return None
    import contextlib
    import io

    out = {}
    meteor = Meteor()
    tokenizer = PTBTokenizer()
    for corruption, trials in read_released(folder, n).items():
        gts = {t.image_id: [{"caption": r} for r in t.references] for t in trials}
        with contextlib.redirect_stdout(io.StringIO()):
            gts = tokenizer.tokenize(gts)
            sides = []
            for attr in ("sentence", "corrupted"):
                res = tokenizer.tokenize({t.image_id: [{"caption": getattr(t, attr)}] for t in trials})
                scores = {}
                _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
                scores["Bleu_4"] = bleu[3]
                _, scores["ROUGE_L"] = Rouge().compute_score(gts, res)
                _, scores["CIDEr"] = Cider().compute_score(gts, res)
                _, scores["METEOR"] = meteor.compute_score(gts, res)
                sides.append({k: np.asarray(v, dtype=np.float64) for k, v in scores.items()})
        rule = trials[0].rule
        out[corruption] = {m: share(int(released_passes(sides[0][m], sides[1][m], rule, True, tie=0.0).sum()),
                                    len(trials)) for m in sides[0]}
    return out


def released_experiment(args, tuned, timings) -> dict:
    """Experiment 1: every figure of the released trials at 5, 10 and 20 references, as plain JSON."""
    folder = args.data / "mutt" / "released-trials"
    results_dir = args.data / "mutt" / "released-results"
    coco = read_released_results(results_dir / "coco.txt")
    terp = read_released_results(results_dir / "terp.txt")
    released = {"coco": coco, "terp": terp}
    specs = [spec for _, spec, _, _ in MAIN if spec != COCO_ROUGE] + OTHERS + ([tuned] if tuned else [])
    out = {"tests": {}, "kinds": {}, "rules": {}, "combo": {}, "others": {}, "defaults": {}, "ties": {},
           "released": {}, "paper": PAPER, "coco_reference": {}, "signatures": {}, "metrics": []}
    for j, n in enumerate(COUNTS):
        t0 = time.time()
        sets = read_released(folder, n)
        trials = [t for v in sets.values() for t in v]
        result = run_released_unit_tests(trials, specs, scheme="ulc", jobs=args.jobs, cache_dir=args.cache)
        acc = {m: {c: share(p, k) for c, (k, p) in cells.items()} for m, cells in result.counts.items()}
        out["metrics"] = result.metrics
        out["signatures"].update(result.signatures)
        out["tests"] = {c: len(v) for c, v in sets.items()}
        out["kinds"], out["rules"] = result.kinds, result.rules
        # coco-caption's ROUGE-L: combo's LCS, coco's multi-reference rule
        rouge = {}
        for c, group in sets.items():
            refs = [list(t.references) for t in group]
            a = coco_rouge_l([t.sentence for t in group], refs)
            b = coco_rouge_l([t.corrupted for t in group], refs)
            rouge[c] = share(int(released_passes(a, b, group[0].rule).sum()), len(group))
        combo_main = {}
        for label, spec, _, _ in MAIN:
            combo_main[label] = rouge if spec == COCO_ROUGE else acc[spec]
        out["combo"][n] = combo_main
        out["others"][n] = acc
        # ties of the coco settings (what the strict comparison of a floating-point sum would decide)
        names, hib, _, scores = score_released_trials(trials, [COCO_CAPTION_SPECS["CIDEr"],
                                                                COCO_CAPTION_SPECS["Bleu_4"]], jobs=args.jobs)
        ties = {}
        for k, label in enumerate(("CIDEr-D", "BLEU-4")):
            ties[label] = {}
            for c, (a, b) in scores.items():
                if sets[c][0].rule != "above":
                    continue
                x, y = a[k], b[k]
                tied = np.abs(x - y) <= TIE_TOLERANCE * np.maximum(np.abs(x), np.abs(y))
                ties[label][c] = int(tied.sum())
        out["ties"][n] = ties
        defaults = run_released_unit_tests(trials, [spec for _, spec in DEFAULTS], jobs=args.jobs,
                                           cache_dir=args.cache)
        out["defaults"][n] = {label: {c: share(p, k) for c, (k, p) in defaults.counts[spec].items()}
                              for label, spec in DEFAULTS}
        out["signatures"].update(defaults.signatures)
        out["released"][n] = {label: {c: released[src][c].get(key, (np.nan,) * 3)[j] for c in sets}
                              for label, _, (src, key), _ in MAIN}
        timings[f"released trials at {n} references (combo)"] = time.time() - t0
        print(f"released trials at {n} references: {time.time() - t0:.0f} s", file=sys.stderr)
        if args.coco_reference:
            t0 = time.time()
            reference = coco_caption_reference(folder, n)
            if reference is not None:
                out["coco_reference"][n] = reference
                timings[f"coco-caption itself at {n} references"] = time.time() - t0
    return out


def by_count(rel: dict) -> dict:
    """``rel`` with the per-reference-count fields keyed by int (a saved JSON keys them by string)."""
    out = dict(rel)
    for key in ("combo", "others", "defaults", "ties", "released", "coco_reference"):
        out[key] = {int(n): v for n, v in rel.get(key, {}).items()}
    return out


def released_markdown(rel: dict, display: dict) -> list:
    """The page's first experiment."""
    rel = by_count(rel)
    types = [c for c in RELEASED_ORDER if c in rel["tests"]]
    counts = [int(n) for n in rel["combo"]]
    combo, released, paper = rel["combo"], rel["released"], rel["paper"]
    doc = ["## Experiment 1: the authors' released trials, beside the paper's Tables 4-6", "",
           "### Data and rules", "",
           f"- {sum(rel['tests'].values())} trials in 10 types, the authors' own files "
           "(`../shared/data/mutt/released-trials/`, their repository's `src/tmp/` of 2016-06-04): "
           + ", ".join(f"{c} {rel['tests'][c]}" for c in types) + ". The SICK types are the SEMEVAL trials "
           "whose video has at least 20 MSR-Video descriptions; double_PP, remove_prep and swap_chunks are "
           "generated from them (combo's dup_pp, none, reorder_chunks).",
           "- References: 5, 10 or 20 descriptions of the trial's video (`TYPE_r5/_r10/_r20.json`); the original "
           "and its corruption are scored against the same ones.",
           "- Scoring as their script (`src/metrics.py`): the originals of a type in one call, its corruptions in "
           "another, against the type's references; per-trial scores paired by image_id.",
           "- Pass rules, by type, as their script: "
           + "; ".join(f"**{r}** ({', '.join(c for c in types if rel['rules'][c] == r)}): {RELEASED_RULES[r]}"
                       for r in ("difference", "above")) + f". A tie is a relative difference below "
           f"{TIE_TOLERANCE:g}: coco-caption's CIDEr-D gives an original and its corruption equal scores when "
           "the words in which they differ weigh the same and no reference of the trial holds them, and the order "
           "of a floating-point sum must not decide the trial (see below).",
           "- combo's CIDEr-D and BLEU-4 use coco-caption's settings: `" + COCO_CAPTION_SPECS["CIDEr"] + "` and `"
           + COCO_CAPTION_SPECS["Bleu_4"] + "` (its PTB tokens, in Python; its BLEU epsilons; its document "
           "frequencies, counted per scored row of the call). ROUGE-L is `coco_rouge_l` (combo's LCS, "
           "coco-caption's multi-reference rule and beta 1.2). METEOR and TER are combo's `meteor` and `ter` at "
           "their defaults (other implementations than METEOR 1.5 and TERp, see below).",
           "", "Each table: accuracy in % at 5, 10 and 20 references; *paper* is Boag et al. 2016 (Tables 4-6), "
           "*released* the authors' results files (`coco.txt`, `terp.txt`), *combo* this run.", ""]
    for label, spec, (src, key), table in MAIN:
        doc += [f"### {label}" + (" (theirs: TERp)" if label == "TER" else ""), ""]
        header = ["type", "tests"] + [f"{w} {n}" for n in counts for w in ("paper", "released", "combo")]
        rows = []
        equal = agree = within = 0
        far = []
        for c in types:
            row = [c, str(rel["tests"][c])]
            for j, n in enumerate(counts):
                p = paper[table][c][j] if table and c in paper.get(table, {}) else None
                r = released[n][label][c]
                m = combo[n][label][c]
                row += [fmt(p), fmt(r), fmt(m)]
                equal += abs(round(m, 1) - r) < 0.05
                if p is not None and abs(p - r) < 0.05:
                    agree += 1
                    within += abs(m - p) <= 5
                    if abs(m - p) > 5:
                        far.append(f"{c} at {n}")
            rows.append(row)
        doc += [markdown_table(header, rows), ""]
        cells = len(types) * len(counts)
        line = f"combo equals the released figure in {equal} of {cells} cells"
        if table:
            line += (f"; where the released figure equals the paper's ({agree} cells) combo is within 5 points of "
                     f"the paper in {within}" + (f" (not: {', '.join(far)})" if far else ""))
        doc += [line + ".", ""]
    doc += ["### Where combo differs from the released figures, and why", ""]
    cider_diff = [(c, n) for n in counts for c in types
                  if abs(round(combo[n]["CIDEr-D"][c], 1) - released[n]["CIDEr-D"][c]) >= 0.05]
    bleu_diff = [(c, n) for n in counts for c in types
                 if abs(round(combo[n]["BLEU-4"][c], 1) - released[n]["BLEU-4"][c]) >= 0.05]
    rouge_diff = [(c, n) for n in counts for c in types
                  if abs(round(combo[n]["ROUGE-L"][c], 1) - released[n]["ROUGE-L"][c]) >= 0.05]
    ties = rel["ties"]

    def tie_text(label):
        cells = [f"{c} at {n}: {ties[n][label][c]}" for n in counts for c in types if ties[n][label].get(c)]
        return ", ".join(cells) or "none"

    doc += [f"- **CIDEr-D**: {len(cider_diff)} cell(s) differ: "
            + (", ".join(f"{c} at {n} references ({fmt(combo[n]['CIDEr-D'][c])} against "
                         f"{fmt(released[n]['CIDEr-D'][c])}, {ties[n]['CIDEr-D'].get(c, 0)} tied trials)"
                         for c, n in cider_diff) or "none")
            + ". The cause is ties: trials whose original and corruption get the same CIDEr-D, because the "
            "n-grams in which they differ are in none of the trial's references and weigh the same (document "
            "frequencies with the same idf, log N - log max(1, df): *deboning*/*freeing a fish*, "
            "*folding*/*unfolding a tortilla*). "
            "Mathematically they tie; in floating point the two sums run over the n-grams in dictionary order, "
            "which in the authors' Python 2 was hash order, so some came out a last bit apart. Tied trials of "
            f"the \"above\" types at the coco settings: {tie_text('CIDEr-D')}. combo counts a tie as a "
            "failure; so does coco.txt everywhere except sem_opps at 5 references, where its figure is 2 passes "
            "above the strict count, within the 18 ties (`tests/test_mutt_released.py` checks the count, the "
            "interval and that each tie is exact). coco-caption run here under Python 3 (below) breaks other "
            "ties the other way (swap_chunks).",
            f"- **BLEU-4**: {len(bleu_diff)} cell(s) differ"
            + (": " + ", ".join(f"{c} at {n}" for c, n in bleu_diff) if bleu_diff else "")
            + ". Equal scores need coco-caption's epsilons (`smooth=coco`): it adds 1e-15 to each n-gram match "
            "count and 1e-9 to each total and to the reference length, so a precision of 2/4 is not exactly "
            "3/6, a hypothesis too short for 4-grams scores 1e-6 for that order, and an exact copy of a "
            "reference scores just under 1, less for a shorter one (*a woman is riding on an elephant* beats "
            "*a woman is riding an elephant*, both copies of references). Ties at the coco settings: "
            f"{tie_text('BLEU-4')}. combo's scores equal coco-caption's bit for bit on its PTB tokens.",
            f"- **ROUGE-L**: {len(rouge_diff)} cell(s) differ"
            + (": " + ", ".join(f"{c} at {n}" for c, n in rouge_diff) if rouge_diff else "")
            + ". coco-caption takes the largest LCS precision and the largest recall over the references, "
            "possibly of two references, and their F with beta 1.2; combo's registered `rouge-l` keeps the one "
            "reference with the best F (beta 1), which differs (its figures are in the defaults table below).",
            "- **METEOR**: combo's `meteor` is Banerjee & Lavie's METEOR as NLTK computes it (exact, Porter stem "
            "and WordNet synonym matches, alpha 0.9, beta 3, gamma 0.5, the best reference); coco-caption runs "
            "METEOR 1.5 (Denkowski & Lavie 2014): paraphrase-table matches, function words weighted apart from "
            "content words, parameters tuned to human judgments, punctuation normalised, the best reference. "
            "Different scores, so different trial outcomes; on the meaning-preserving types the Difference "
            "formula turns small differences of scale into other pass rates.",
            "- **TER**: combo's `ter` is Snover et al.'s TER (tercom's search, unit edit costs, exact matches); "
            "TERp (Snover et al. 2009) adds stem, WordNet-synonym and paraphrase matches and tuned edit costs "
            "(their .param files: deletion 1.43, insertion 0.26, substitution 1.56, shift 0.56, stems and "
            "synonyms free). `terp.txt` gives one figure for 5, 10 and 20 references: it is the 20-reference "
            "run's. The TERp output files stored with the trials in their repository (`src/tmp/TYPE_a.xml.seg.scr`, "
            "`TYPE_b.xml.seg.scr`, whose `.param` files name `TYPE_r20.xml`) give exactly terp.txt's figure "
            "for all ten types; compare it with the paper's 20-reference column.",
            ""]
    doc += ["### Where the released figures differ from the paper", "",
            "The paper's run predates the released files. Cells where the released figure is not the paper's "
            "(released minus paper, points): "
            + "; ".join(f"{label}: " + (", ".join(
                f"{c}@{n} {released[n][label][c] - paper[table][c][j]:+.1f}"
                for j, n in enumerate(counts) for c in types
                if c in paper[table] and label != "TER" and abs(released[n][label][c] - paper[table][c][j]) >= 0.05)
                or "none") for label, _, _, table in MAIN if table and label != "TER")
            + ". TER is left out: terp.txt repeats its 20-reference figure. In these cells combo, which equals "
            "the released figure, is as far from the paper as the released figure is.", ""]
    if rel["coco_reference"]:
        doc += ["### coco-caption itself, run here", "",
                "pycocoevalcap 1.2 (Python 3, its Java PTB tokenizer and METEOR 1.5 jar) on the same files, "
                "judged by the script's strict comparisons. Cells equal to coco.txt (of 30) and the others:", ""]
        rows = []
        for key, label in (("CIDEr", "CIDEr-D"), ("Bleu_4", "BLEU-4"), ("ROUGE_L", "ROUGE-L"), ("METEOR", "METEOR")):
            same, other = 0, []
            for n in counts:
                ref = rel["coco_reference"][n]
                for c in types:
                    mine, theirs = ref[c][key], released[n][label][c]
                    if abs(round(mine, 1) - theirs) < 0.05:
                        same += 1
                    else:
                        other.append(f"{c}@{n} {fmt(mine)} (coco.txt {fmt(theirs)})")
            rows.append([label, f"{same} of {len(types) * len(counts)}", "; ".join(other) or "-"])
        doc += [markdown_table(["metric", "equal to coco.txt", "differing cells"], rows), "",
                "So the released figures are coco-caption's, METEOR included: combo's METEOR differs from them "
                "because it is another METEOR. The CIDEr-D cells that differ are the ties above, decided here by "
                "Python 3's dictionary order.", ""]
    doc += ["### combo's defaults on the same trials", "",
            "The same three metrics at combo's default settings (`cider`: 13a tokens lower-cased, each distinct "
            "reference set counted once in the document frequencies; `bleu`: sentence BLEU with exp smoothing "
            "and effective order, 13a tokens, case kept; `rouge-l`: rouge-score's tokens, the best-F reference, "
            "beta 1), against the released figures:", ""]
    header = ["type"] + [f"{label} {n}" for label, _ in DEFAULTS for n in counts]
    rows = []
    for c in types:
        row = [c]
        for label, _ in DEFAULTS:
            for n in counts:
                row.append(f"{fmt(rel['defaults'][n][label][c])} ({fmt(released[n][label][c])})")
        rows.append(row)
    moved = []
    for label, _ in DEFAULTS:
        diffs = [abs(rel["defaults"][n][label][c] - released[n][label][c]) for n in counts for c in types]
        moved.append(f"{label}: {sum(d >= 0.05 for d in diffs)} of {len(diffs)} cells differ, by "
                     f"{np.mean(diffs):.1f} points on average and {max(diffs):.1f} at most")
    doc += [markdown_table(header, rows), "", "Default figure (released figure in brackets). " + "; ".join(moved)
            + ". Settings that change no ranking of systems on a corpus do change which of two close sentences "
            "scores higher.", ""]
    doc += ["### Every combo metric and the ULC on the released trials", "",
            "Accuracy in %, the authors' rules. CIDEr-D and BLEU-4 at the coco settings, the others at their "
            "defaults; the tuned metric is the WMT12 model of experiment 2; the ULC averages every metric above "
            "it, min-max normalised over all scored sentences. Kinds: A meaning-altering, P meaning-preserving "
            "(Difference formula), F fluency-disrupting.", ""]
    names = rel["metrics"]
    directed = [c for c in types if rel["rules"][c] == "above"]
    for n in counts:
        acc = rel["others"][n]
        header = ["metric"] + [f"{c} ({LETTER.get(rel['kinds'][c], '?')})" for c in types] + ["mean", "mean A+F"]
        rows = [["tests"] + [str(rel["tests"][c]) for c in types] + ["", ""]]
        for m in names:
            rows.append([display[m]] + [fmt(acc[m][c]) for c in types]
                        + [fmt(np.mean([acc[m][c] for c in types])), fmt(np.mean([acc[m][c] for c in directed]))])
        doc += [f"#### {n} references", "", markdown_table(header, rows), ""]
    doc += ["![released trials: combo and the paper by number of references](boag2016-released.png)", ""]
    last = rel["others"][counts[-1]]
    best = max(names, key=lambda m: np.mean([last[m][c] for c in directed]))
    preserving = [c for c in types if rel["rules"][c] == "difference"]
    flat = [display[m] for m in names if all(last[m][c] >= 99 for c in preserving)]
    flat_text = (f"at least 99% of det_sub, near_syms and passive pass at 20 references for {', '.join(flat)}, "
                 "as in experiment 2" if flat else "no metric passes 99% of all three at 20 references")
    doc += ["### Findings", "",
            f"- At 20 references the best mean over the seven \"above\" types is {display[best]} "
            f"({fmt(np.mean([last[best][c] for c in directed]))}); CIDEr-D "
            f"{fmt(np.mean([last[COCO_CAPTION_SPECS['CIDEr']][c] for c in directed]))}, BLEU-4 "
            f"{fmt(np.mean([last[COCO_CAPTION_SPECS['Bleu_4']][c] for c in directed]))}, METEOR "
            f"{fmt(np.mean([last['meteor'][c] for c in directed]))}, TER "
            f"{fmt(np.mean([last['ter'][c] for c in directed]))}.",
            f"- The meaning-preserving types reward a metric that varies little: {flat_text}.",
            "- passive is where the n-gram metrics fail most: CIDEr-D "
            + ", ".join(f"{fmt(combo[n]['CIDEr-D']['passive'])}" for n in counts) + " and BLEU-4 "
            + ", ".join(f"{fmt(combo[n]['BLEU-4']['passive'])}" for n in counts)
            + " at 5, 10, 20 references: a passive shares few 4-grams with active descriptions, so its score falls "
            "far more than 15%.",
            ""]
    return doc


# -- experiment 2: the Flickr-derived trials ---------------------------------------------------------------------

def train_tuned(data: Path, out: Path, jobs: int, cache) -> str:
    """A pairwise-ranking model on the four WMT12 into-English pairs (as ``combo train``); returns its path."""
    sources = []
    for lp in ("cs-en", "de-en", "es-en", "fr-en"):
        tb = load_testbed(data / "wmt12", lp=lp)
        sources.append((tb, score_testbed(tb, TUNED_FEATURES, jobs=jobs, cache_dir=cache)))
    model = train_model(sources, TrainOptions(name="wmt12-five"))
    model.save(out)
    return str(out)


def spread_note(trials, metrics, display) -> str:
    """How much each metric's scores of the meaning-preserving originals vary (why the 15% rule passes them)."""
    from combo import get_metric

    chosen = [t for t in trials if t.kind == "meaning-preserving"]
    refs = [list(t.references) for t in chosen]
    parts = []
    for spec in metrics:
        m = get_metric(spec)
        orig = m.segment_scores([t.sentence for t in chosen], refs)
        corr = m.segment_scores([t.corrupted for t in chosen], refs)
        rel = np.median(np.abs(orig - corr) / (orig + 1e-9))
        parts.append(f"{display[spec]}: originals {orig.mean():.3f} +- {orig.std():.3f}, median relative "
                     f"difference {rel:.3f}")
    return ("Scores of the originals of these tests (mean +- sd) and the median relative difference the rule "
            "compares with 0.15: " + "; ".join(parts) + ".") if parts else ""


def tuned_note(trials, path: str, accuracy: dict) -> str:
    """Why the tuned metric passes (or not) the meaning-preserving tests: where its score lies on these sentences,
    by its output (the raw w.x + b, or its sigmoid)."""
    from combo import load_model

    model = load_model(path)
    chosen = [t for t in trials if t.kind == "meaning-preserving"]
    raw = model.raw_segment_scores([t.sentence for t in chosen], [list(t.references) for t in chosen])
    w = model.model.weights
    head = (f" The tuned metric's features are min-max normalised on WMT12 (error rates flipped), weights summing "
            f"to {w.sum():.1f}, bias {model.model.bias:.1f}: on these sentences w.x + b is {raw.mean():.1f} +- "
            f"{raw.std():.1f}")
    if model.model.output == "sigmoid":
        return (head + ", where its output, the sigmoid, is flat, so its ranking of candidates (what pairwise "
                "training fits) survives but relative differences vanish.")
    passed = ", ".join(f"{c} {pct(accuracy[c])}" for c in ("det_sub", "near_syms", "passive") if c in accuracy)
    return (head + ", and that is its segment score (output linear): far from 0 beside its spread, so a "
            "corruption moves it by a small share of the original's score, and the Difference formula passes "
            f"{passed}%.")


def pct(x: float) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{100 * x:.1f}"


def markdown_table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def display_names(names) -> dict:
    """Row labels: Boag's spelling of his four metrics (and of the coco settings), "tuned (WMT12)" for the
    model file, the ULC's size."""
    display = {m: BOAG_NAMES.get(m, m) for m in names}
    display[COCO_CAPTION_SPECS["CIDEr"]] = "CIDEr-D (coco settings)"
    display[COCO_CAPTION_SPECS["Bleu_4"]] = "BLEU-4 (coco settings)"
    tuned_name = next((m for m in names if m.endswith(".json")), None)
    if tuned_name:
        display[tuned_name] = "tuned (WMT12)"
    ulc_name = next((m for m in names if m.startswith("ulc(")), None)
    if ulc_name:
        display[ulc_name] = f"ULC (the {len(names) - 1} above)"
    return display


def results_from_json(path: Path) -> dict:
    """The FLICKR results saved next to the page (``{k: UnitTestResult}``), from their records."""
    from combo.meta.mutt import UnitTestResult

    doc = json.loads(path.read_text(encoding="utf-8"))
    records_by_k = doc["flickr"]["records"] if "flickr" in doc else doc["records"]
    results = {}
    for k, records in records_by_k.items():
        metrics = list(dict.fromkeys(r["metric"] for r in records))
        corruptions = list(dict.fromkeys(r["corruption"] for r in records))
        counts = {m: {} for m in metrics}
        for r in records:
            counts[r["metric"]][r["corruption"]] = (r["n"], r["passed"])
        results[int(k)] = UnitTestResult(metrics, corruptions, {r["corruption"]: r["kind"] for r in records},
                                         counts, references=int(k))
    return results


def figures(results, names, display, out_dir: Path, stem: str):
    """Two PNGs drawn by the report's plotting module: Boag's four metrics' accuracy against the number of
    references (a panel per corruption type), and every metric's accuracy at 5 references."""
    from combo.report import plots

    five = results[5]
    types = [c for c in ORDER if c in five.corruptions]
    panels = {f"{c} ({KIND_LABEL[five.kinds[c]]})":
              [plots.Series(BOAG_NAMES[m], REFERENCES, [100 * results[k].accuracy[m][c] for k in REFERENCES])
               for m in BOAG if m in names] for c in types}
    refs_png = out_dir / f"{stem}-references.png"
    refs_png.write_bytes(plots.line_panels(panels, title="MUTT accuracy by number of references "
                                                         "(Flickr-derived trials)",
                                           xlabel="references", ylabel="accuracy %", ylim=(0, 101), share_y=True,
                                           columns=5, panel_width=3.2, panel_height=2.6))
    matrix = np.array([[100 * five.accuracy[m][c] for c in types] for m in names])
    heat_png = out_dir / f"{stem}-metrics.png"
    heat_png.write_bytes(plots.heatmap(matrix, [display[m] for m in names], types,
                                       title="MUTT accuracy at 5 references", vmin=0, vmax=100, cmap="viridis",
                                       colorbar_label="accuracy %", fmt="{:.0f}"))
    return refs_png, heat_png


def released_figure(rel: dict, out_dir: Path, stem: str) -> Path:
    """combo's CIDEr-D, BLEU-4, METEOR and TER against the number of references, a panel per released type,
    the paper's figures dashed beside them."""
    from combo.report import plots

    rel = by_count(rel)
    counts = list(rel["combo"])
    types = [c for c in RELEASED_ORDER if c in rel["tests"]]
    panels = {}
    for c in types:
        series = []
        for label, _, _, table in MAIN:
            if label == "ROUGE-L":
                continue
            series.append(plots.Series(f"{label} (combo)", counts,
                                       [rel["combo"][n][label][c] for n in counts], colour_key=label))
            paper = rel["paper"].get(table, {}).get(c, [float("nan")] * len(counts))  # shuffled: not in the paper
            series.append(plots.Series(f"{label} (paper)", counts, list(paper), colour_key=label, dashed=True))
        panels[f"{c} ({KIND_LABEL.get(rel['kinds'][c], '?')})"] = series
    png = out_dir / f"{stem}-released.png"
    png.write_bytes(plots.line_panels(panels, title="MUTT released trials: combo (solid) and the paper (dashed)",
                                      xlabel="references", ylabel="accuracy %", ylim=(0, 101), share_y=True,
                                      columns=5, panel_width=3.2, panel_height=2.6))
    return png


def flickr_experiment(args, metrics, tuned, timings, out_dir: Path, stem: str):
    """Experiment 2: the FLICKR trials; returns the page's lines and the JSON to save."""
    sets = read_mutt(args.data / "mutt" / "corruptions", flickr8k=args.data / "flickr8k")
    released = [t for v in sets.values() for t in v]
    trials, skipped = select_trials(released)
    extra, not_applicable = fluency_trials(trials, seed=0)
    results = {}
    for k in REFERENCES:
        t0 = time.time()
        results[k] = run_unit_tests(trials + extra, metrics, references=k, seed=0, scheme="ulc", jobs=args.jobs,
                                    cache_dir=args.cache)
        label = f"FLICKR unit tests at {k} reference{'s' if k > 1 else ''}"
        timings[label] = time.time() - t0
        print(f"{label}: {timings[label]:.0f} s", file=sys.stderr)
    five = results[5]
    names = five.metrics
    display = display_names(names)
    tuned_name = next((m for m in names if m.endswith(".json")), None)
    refs_png, heat_png = figures(results, names, display, out_dir, stem)
    types = [c for c in ORDER if c in five.corruptions]
    semeval = sum(t.dataset == "SEMEVAL" for t in released)

    doc = ["## Experiment 2: the FLICKR trials with their Flickr8k captions",
           "",
           "### Data",
           "",
           f"- {len(released)} trials in the 7 released SICK corruption sets (`../shared/data/mutt/corruptions`); "
           f"{len(trials)} FLICKR trials have their image's five Flickr8k captions as references; {skipped} are "
           f"left out ({semeval} SEMEVAL trials, tested in experiment 1 with their MSR-Video descriptions, and "
           f"{skipped - semeval} FLICKR trials whose caption is not found in Flickr8k).",
           f"- {len(extra)} generated SICK+ fluency trials from the {len({t.sentence for t in trials})} distinct "
           "sentences (shallow parser, seed 0); not applicable: "
           + ", ".join(f"{c} {n}" for c, n in not_applicable.items()) + " sentences.",
           "- References per trial: 1 to 5 (a seeded sample of the five captions below 5). The five captions "
           "include the caption the SICK sentence was built from (`orig:`), as the reader joins them.",
           "- Pass rules of the paper (the same as the released script's); metrics at combo's defaults.",
           "",
           "### Accuracy at 5 references, every metric",
           "",
           "Accuracy in % (tests passed / tests of the type). Kinds: A = meaning-altering, P = meaning-preserving "
           "(Difference formula, 15%), F = fluency-disrupting.",
           ""]
    header = ["metric"] + [f"{c} ({LETTER[five.kinds[c]]})" for c in types] + ["mean", "mean A+F"]
    rows = [["tests"] + [str(five.counts[names[0]][c][0]) for c in types] + ["", ""]]
    directed = [c for c in types if five.kinds[c] != "meaning-preserving"]

    def mean_directed(m):
        return float(np.mean([five.accuracy[m][c] for c in directed]))

    for m in names:
        rows.append([display[m]] + [pct(five.accuracy[m][c]) for c in types]
                    + [pct(five.mean_accuracy(m)), pct(mean_directed(m))])
    doc += [markdown_table(header, rows), "",
            "\"mean\" weighs the 10 types equally (the `mutt` search criterion); \"mean A+F\" leaves out the "
            "three meaning-preserving types, whose Difference formula rewards a metric for varying little "
            "(see Findings). The ULC row combines every metric above it, the tuned one included.", "",
            f"![every metric at 5 references]({heat_png.name})", ""]

    doc += ["### Boag et al.'s columns by number of references",
            "",
            "Each table is one metric: rows are corruption types, columns the number of references.",
            ""]
    for m in BOAG:
        if m not in names:
            continue
        doc += [f"#### {BOAG_NAMES[m]}", ""]
        rows = [[c, five.counts[m][c][0]] + [pct(results[k].accuracy[m][c]) for k in REFERENCES] for c in types]
        doc += [markdown_table(["corruption", "tests"] + [f"{k} ref{'s' if k > 1 else ''}" for k in REFERENCES],
                               rows), ""]
    doc += [f"![accuracy by number of references]({refs_png.name})", ""]

    released_results = {src: read_released_results(args.data / "mutt" / "released-results" / f"{src}.txt")
                        for src in ("coco", "terp")}
    keys = {"bleu": ("coco", "Bleu_4"), "meteor": ("coco", "METEOR"), "cider": ("coco", "CIDEr"),
            "ter": ("terp", "terp")}
    combo_to_released = {v: k for k, v in COMBO_NAMES.items() if v}
    doc += ["### Beside the released trials",
            "",
            "The authors' released figures at 5 references (experiment 1) beside these at 5. They differ in "
            "three ways that each move the figures:",
            "",
            "1. **Other trials.** The released trials are the SEMEVAL ones (MSR-Video descriptions, 5 of at "
            "least 20); these are the FLICKR ones with their image's 5 captions. The sets do not overlap.",
            "2. **Other settings.** These use combo's defaults (sentence BLEU with exp smoothing and 13a tokens, "
            "CIDEr-D counting each reference set once), the released figures coco-caption's (experiment 1 shows "
            "how much that alone moves a figure), METEOR 1.5 and TERp (20-reference run) where combo has its "
            "METEOR and TER.",
            "3. **Other generated sets.** The generated types are made here from these sentences; their "
            "`remove_prep` removes prepositions, our `rm_pp_head` a PP's head noun (no counterpart).",
            "",
            "The pass rules are the same: the released script (`src/metrics.py`, since its commit 661c0f6 of "
            "2016-03-17) judges det_sub, near_syms and passive with the Difference formula, as here.",
            ""]
    rows = []
    for c in types + ["remove_prep"]:
        row = [c]
        src_type = combo_to_released.get(c, c)
        for m in BOAG:
            src, key = keys[m]
            theirs = released_results[src].get(src_type, {}).get(key, (None,))[0]
            ours = five.accuracy[m].get(c) if m in names else None
            row += [f"{theirs:.1f}" if theirs is not None else "-", pct(ours) if ours is not None else "-"]
        rows.append(row)
    header = ["corruption"] + [f"{BOAG_NAMES[m]} {w}" for m in BOAG for w in ("released", "FLICKR")]
    doc += [markdown_table(header, rows), "",
            "(TER: theirs is TERp, lower-is-better as ours. dup_pp is their double_PP, reorder_chunks their "
            "swap_chunks.)", ""]

    doc += ["### Findings", ""]
    preserving = [c for c in types if five.kinds[c] == "meaning-preserving"]
    flat = [display[m] for m in names if all(five.accuracy[m][c] >= 0.99 for c in preserving)]
    order_blind = [display[m] for m in names
                   if five.accuracy[m].get("reorder_chunks", 1) < 0.1 and five.accuracy[m].get("shuffled", 1) < 0.3]
    doc += [f"- The Difference formula passes a meaning-preserving test when the two scores are within 15% of "
            f"the original's, so a metric whose scores vary little from sentence to sentence passes them all. "
            f"At least 99% of det_sub, near_syms and passive pass for: {', '.join(flat) or 'none'}. "
            + spread_note(trials, [m for m in names if m in ("emb-avg", tuned_name, "meteor")], display)
            + " GloVe averages of two descriptions of one image are all close to 1."
            + (tuned_note(trials, tuned_name, five.accuracy[tuned_name]) if tuned_name else "")
            + " Their high means are this artefact, not sensitivity; the \"mean A+F\" column, where only the "
            "direction counts, ranks them by what they tell apart.",
            "- Order-blind metrics fail the reorderings (reorder_chunks below 10%): "
            f"{', '.join(order_blind) or 'none'}. "
            "They score a reordered sentence (nearly) the same as the original: an average of word vectors "
            "ignores order, and `sp-op` counts part-of-speech overlaps.",
            f"- Best on the directed (A+F) types: {display[max(names, key=mean_directed)]} "
            f"{pct(mean_directed(max(names, key=mean_directed)))}; of Boag's columns, "
            + ", ".join(f"{BOAG_NAMES[m]} {pct(mean_directed(m))}" for m in BOAG if m in names) + ".",
            "- More references help the directed types (BLEU sem_opps from "
            f"{pct(results[1].accuracy['bleu']['sem_opps'])} at 1 reference to "
            f"{pct(five.accuracy['bleu']['sem_opps'])} at 5) and hurt the meaning-preserving ones under the "
            "Difference formula (TER passive from "
            f"{pct(results[1].accuracy['ter']['passive'])} to {pct(five.accuracy['ter']['passive'])}): "
            "with more references the original finds more exact matches than its paraphrase, so the "
            "relative gap grows." if "bleu" in names and "ter" in names else ""]
    best = max(names, key=five.mean_accuracy)
    doc += [f"- Mean over the {len(types)} corruption types at 5 references: best "
            f"{display[best]} {pct(five.mean_accuracy(best))}; "
            + ", ".join(f"{display[m]} {pct(five.mean_accuracy(m))}" for m in names if m != best) + "."]
    for c in types:
        accs = {m: five.accuracy[m][c] for m in names}
        top = max(accs, key=accs.get)
        low = min(accs, key=accs.get)
        doc.append(f"- {c}: best {display[top]} {pct(accs[top])}, worst {display[low]} {pct(accs[low])}.")
    doc.append("")
    records = {k: r.to_records() for k, r in results.items()}
    saved = {"records": records, "skipped": skipped, "not_applicable": not_applicable,
             "signatures": five.signatures}
    return doc, saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--out", type=Path, default=Path("docs/results/boag2016.md"))
    ap.add_argument("--cache", default=None, help="Metric score cache folder (default: none, caches cold).")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-tuned", action="store_true", help="Skip training the WMT12 tuned combination.")
    ap.add_argument("--metrics", default=None,
                    help="Comma-separated metrics of experiment 2 (default: Boag's four + combo's).")
    ap.add_argument("--no-coco-reference", dest="coco_reference", action="store_false",
                    help="Do not run coco-caption itself (pycocoevalcap with Java) on the released trials.")
    ap.add_argument("--render", type=Path, default=None, metavar="JSON",
                    help="only draw the figures, next to JSON, from the results a run saved there "
                         "(docs/results/boag2016.json)")
    args = ap.parse_args(argv)
    if args.render:
        results = results_from_json(args.render)
        names = results[5].metrics
        pngs = list(figures(results, names, display_names(names), args.render.parent, args.render.stem))
        saved = json.loads(args.render.read_text(encoding="utf-8"))
        if "released" in saved:
            pngs.append(released_figure(saved["released"], args.render.parent, args.render.stem))
        for png in pngs:
            print(f"wrote {png}", file=sys.stderr)
        return 0
    os.environ.setdefault("NLTK_DATA", str(args.data / "nltk_data"))
    start = time.time()
    date = datetime.date.today().isoformat()
    command = "python experiments/mutt_study.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = out.stem
    timings = {}
    tuned = None
    if not args.no_tuned:
        t0 = time.time()
        tuned = train_tuned(args.data, out.parent / f"{stem}-wmt12-tuned.json", args.jobs, args.cache)
        timings["training the WMT12 model"] = time.time() - t0

    rel = released_experiment(args, tuned, timings)
    rel_json = json.loads(json.dumps(rel, default=float))  # keys as the saved file has them
    rel_names = rel["metrics"]
    rel_display = display_names(rel_names)
    released_lines = released_markdown(rel_json, rel_display)
    released_png = released_figure(rel_json, out.parent, stem)

    metrics = args.metrics.split(",") if args.metrics else BOAG + OTHERS
    flickr_lines, flickr_saved = flickr_experiment(args, metrics + ([tuned] if tuned else []), tuned, timings,
                                                   out.parent, stem)
    elapsed = time.time() - start

    doc = ["# MUTT (Boag et al. 2016): the authors' released trials and the Flickr-derived trials",
           "",
           f"Measured on {date} with `COMBO_CACHE_DIR=$(mktemp -d) {command}` (analysis and score caches cold, "
           f"`--jobs {args.jobs}`): {elapsed / 60:.1f} minutes on this machine (2 cores shared with other work). "
           "What `combo mutt` does is described in [docs/mutt.md](../mutt.md). The figures are redrawn from the "
           f"results saved beside this page with `python experiments/mutt_study.py --render "
           f"{out.with_suffix('.json')}`.",
           "",
           "Experiment 1 runs the authors' own trial files (the SEMEVAL trials with MSR-Video references) and "
           "sets combo's figures beside the paper's Tables 4-6 and the authors' released results; experiment 2 "
           "runs the FLICKR trials, which the released files leave out, with Flickr8k captions as references.",
           ""]
    doc += released_lines
    doc += flickr_lines
    doc += ["## Timing", ""]
    doc += [f"- {what}: {sec:.0f} s" for what, sec in timings.items()]
    doc += [f"- total: {elapsed:.0f} s", "",
            "Signatures: " + "; ".join(f"`{s}`" for s in
                                       dict.fromkeys(list(rel["signatures"].values())
                                                     + list(flickr_saved["signatures"].values()))), ""]
    out.write_text("\n".join(doc), encoding="utf-8")
    saved = {"date": date, "command": command, "seconds": elapsed, "timings": timings,
             "released": rel_json, "flickr": flickr_saved}
    (out.parent / f"{stem}.json").write_text(json.dumps(saved, indent=1, default=float), encoding="utf-8")
    print(f"wrote {out} in {elapsed:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
