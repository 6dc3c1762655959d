"""Every metric and combination under several criteria (``combo evaluate``, ``combo report``): which criteria a
test bed supports, each entry's quality with its bootstrap interval, and the results as JSON rows and table text;
over several language pairs, WMT23's official average.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError
from ..meta.queen import min_references
from ..meta.wmt23 import wmt23_average, wmt23_tasks
from ..scoring import ScoreTable
from ..testbed import Testbed
from .evaluator import MetaEvaluator
from .records import (DEFAULT_SCHEME_NAME, KING_TIE_WARNING, Quality, _CRITERIA, criterion_name, criterion_records,
                      get_criterion, left_out_notes)
from .search import _subset_quality


# -- every metric and combination under several criteria (combo evaluate, combo report) ----------------------

def supported_criteria(evaluator: MetaEvaluator) -> Tuple[List[str], Dict[str, str]]:
    """The criteria this test bed's judgments, systems and references support, and why each other one is not.

    Reads each criterion's :class:`Needs`: r_snt needs absolute segment scores (or rankings, read as shares of
    wins); wmt_kendall and acc_eq preference pairs (at least 2 systems); pearson and spearman any human judgment
    (system scores suffice) and at least 3 systems; king and orange no judgments, but single-reference scores and
    enough references; mutt a MUTT test bed.
    """
    ok, why = [], {}
    judged = bool(np.isfinite(evaluator.human).any() or evaluator.testbed.preferences)
    for record in criterion_records():
        c, needs = record.name, record.needs
        if needs.testbed_format is not None and evaluator.testbed.metadata.get("format") != needs.testbed_format:
            why[c] = needs.wrong_format
        elif needs.references and evaluator.refs is None:
            why[c] = evaluator.likeness_note or _likeness_reason(evaluator)
        elif needs.judgments != "none" and not (
                judged or (needs.judgments == "system" and evaluator.testbed.system_scores)):
            why[c] = ("needs human judgments; the test bed has none" if not evaluator.testbed.system_scores
                      else "needs segment-level human judgments; the test bed has system scores only")
        elif needs.judgments == "absolute" and not evaluator.has_absolute_scores:
            why[c] = needs.no_absolute
        elif evaluator.n_sys < needs.systems:
            why[c] = needs.few_systems.format(n=evaluator.n_sys, need=needs.systems)
        else:
            ok.append(c)
    return ok, why


def _likeness_reason(evaluator: MetaEvaluator) -> str:
    """Why KING and ORANGE were not measured, read from the test bed when no one said (``likeness_note``)."""
    need = min_references(evaluator.triples) + 1
    short = sum(len(seg.references) < need for seg in evaluator.testbed.segments)
    if short:
        return (f"needs at least {need} references per segment; {short} of {len(evaluator.testbed.segments)} "
                "segments have fewer")
    return "needs single-reference scores (combo.scoring.score_with_references), which were not computed"


def evaluate_entries(evaluator: MetaEvaluator, criteria: Sequence[str], schemes: Sequence[str] = ("ulc",),
                     n_resamples: int = 1000, seed: int = 0
                     ) -> Tuple[List[str], Dict[str, List[Optional[Quality]]]]:
    """Each metric alone and each scheme's combination of all of them under each criterion, with intervals.

    Returns the entry names (metrics, then ``ULC(all)`` ...) and, per criterion,
    one :class:`Quality` per entry (None where the criterion does not apply:
    KING and ORANGE measure QUEEN combinations only).
    """
    criteria = [criterion_name(c) for c in criteria]
    table = evaluator.table
    entries = [(name, [i], None) for i, name in enumerate(table.metrics)]
    entries += [(scheme.upper() + "(all)", list(range(len(table.metrics))), scheme) for scheme in schemes]
    out: Dict[str, List[Optional[Quality]]] = {c: [] for c in criteria}
    from ..progress import progress

    what = f"evaluate ({n_resamples} bootstrap resamples each)" if n_resamples else "evaluate"
    only = {c: _CRITERIA[c].only_scheme if c in _CRITERIA else None for c in criteria}  # KING, ORANGE: queen
    wanted = [(name, c, subset, scheme) for name, subset, scheme in entries for c in criteria
              if only[c] is None or scheme in (None, only[c])]
    tasks = [(evaluator, subset, c, only[c] or scheme or DEFAULT_SCHEME_NAME, n_resamples, seed)
             for _, c, subset, scheme in wanted]
    found: Dict[Tuple[str, str], Quality] = {}
    from ..parallel import run_tasks

    with progress(len(tasks), what, evaluator.progress, unit="entry") as bar:
        def done(i, q):
            found[wanted[i][:2]] = q
            bar.update(1)

        # one task per entry and criterion (its quality and its seeded bootstrap draws), in worker processes or
        # on a Dask cluster: the values equal one process's to the last digit
        run_tasks(_entry_quality, tasks, evaluator.jobs, on_result=done, keep=False,
                  weights=[_entry_cost(c, subset) for _, c, subset, _ in wanted])
    for name, _, _ in entries:
        for c in criteria:
            out[c].append(found.get((name, c)))
    return [name for name, _, _ in entries], out


def _entry_cost(criterion: str, subset: Sequence[int]) -> float:
    """The relative cost of one entry's bootstrap under ``criterion``, so the costliest tasks start first and the
    last to finish is a small one; it orders the tasks, never changes a value. A criterion's cost is its record's
    (:attr:`Criterion.cost`), measured on WMT12 de-en (16 systems x 3,003 segments, 1,000 resamples): r_snt
    0.37-0.44 s an entry (1.0), wmt_kendall 0.21-0.25 s (0.6), pearson 3 ms (0.01); the combination of 17 metrics
    1.7-1.8 times one metric's."""
    record = _CRITERIA.get(criterion)
    cost = record.cost if record is not None else 1.0
    return cost * (1.8 if len(subset) > 1 else 1.0)


def _entry_quality(evaluator: MetaEvaluator, subset, criterion: str, scheme: str, n_resamples: int,
                   seed: int) -> Quality:
    """One entry of :func:`evaluate_entries` under one criterion, with its bootstrap interval (a task)."""
    q = _subset_quality(evaluator, subset, criterion, scheme)
    return evaluator.with_interval(q, n_resamples=n_resamples, seed=seed) if n_resamples else q


def evaluation_rows(names: Sequence[str], qualities: Dict[str, List[Optional[Quality]]]) -> List[Dict[str, object]]:
    """The rows of ``combo evaluate --format json``: per entry, per criterion value, interval, n, note, text."""
    rows = []
    for k, name in enumerate(names):
        row: Dict[str, object] = {"metric": name}
        for c, qs in qualities.items():
            q = qs[k]
            row[c] = None if q is None else {"value": q.value, "low": q.low, "high": q.high, "n": q.n,
                                             "note": q.note, "text": str(q),
                                             "resampled": q.unit if np.isfinite(q.low) else None}
            if q is not None and c == "king":
                row[c].update(tie_share=q.tie_share, value_strict=q.value_strict)
        rows.append(row)
    return rows


# -- several language pairs: WMT23's official average (combo evaluate --lp en-de,he-en) -------------------------

def wmt23_over_pairs(evaluators: Dict[str, MetaEvaluator], schemes: Sequence[str] = ("ulc",)
                     ) -> Tuple[List[str], List[Dict[str, object]]]:
    """Each metric and each scheme's combination of all of them on WMT23's task set over several language pairs.

    ``evaluators``: one per language pair, scored with the same metrics. The
    tasks are mt-metrics-eval's ``tasks.WMT23`` (:func:`combo.meta.wmt23.wmt23_tasks`):
    system pairwise accuracy pooled over the pairs, then per pair system
    Pearson, segment Pearson without grouping and acc_eq grouped by item; the
    average is ``AverageCorrs`` (:func:`combo.meta.wmt23.wmt23_average`: the
    pooled accuracy weighs as many tasks as there are pairs). Scores are
    combined per pair as ``quality`` combines them; human translations listed
    as systems are left out unless the evaluators include them.
    """
    lps = sorted(evaluators)
    first = evaluators[lps[0]]
    for lp in lps:
        if evaluators[lp].table.metrics != first.table.metrics:
            raise InputError(f"language pair {lp} was scored with other metrics than {lps[0]}")
        if not evaluators[lp].has_absolute_scores:
            raise InputError(f"language pair {lp} has no absolute segment scores (MQM, DA) for WMT23's tasks",
                             fix="give language pairs with MQM or DA scores")
    m = len(first.table.metrics)
    entries = [(name, [i], DEFAULT_SCHEME_NAME) for i, name in enumerate(first.table.metrics)]
    entries += [(scheme.upper() + "(all)", list(range(m)), scheme) for scheme in schemes]
    names, rows = [], []
    for name, subset, scheme in entries:
        seg, human, m_sys, h_sys = {}, {}, {}, {}
        for lp in lps:
            ev = evaluators[lp]
            seg[lp], human[lp] = ev.wmt23_segments(ev.combined_rows(subset, scheme)[0])
            m_sys[lp], h_sys[lp] = ev.wmt23_systems(subset, scheme)
        tasks = wmt23_tasks(seg, human, m_sys, h_sys)
        names.append(name)
        rows.append({"metric": name, "average": wmt23_average(tasks), "tasks": dict(tasks)})
    return names, rows


# -- combo evaluate's printed results -------------------------------------------------------------------------

def evaluation_output(ev: MetaEvaluator, tb: Testbed, table: ScoreTable, crits: Sequence[str], names: Sequence[str],
                      qualities: Dict[str, List[Optional[Quality]]], notes: Sequence[str], n_resamples: int,
                      seed: int, king_ties: str) -> Tuple[Dict[str, object], str]:
    """One test bed's ``combo evaluate`` result (:func:`evaluate_entries`' ``names`` and ``qualities``): the JSON
    document and the table text, with what the values leave out and KING figures decided by ties."""
    rows = evaluation_rows(names, qualities)
    notes = list(notes) + left_out_notes(names, qualities)  # what the values leave out: in the table and JSON
    for c in crits:  # a "-" in the table says why it is there
        blank = [r["metric"] for r in rows if r[c] is None]
        only = getattr(get_criterion(c), "only_scheme", None)
        if blank and only:
            notes.append(f"{c} is defined for single metrics and {only.upper()} combinations only: "
                         f"{', '.join(blank)} {'shows' if len(blank) == 1 else 'show'} '-' (--combine {only} "
                         f"measures {only.upper()}(all))")
    warnings = [f"KING of {r['metric']} is decided by ties: {r['king']['tie_share']:.0%} of its comparisons "
                f"(with --king-ties strict: {r['king']['value_strict']:.4f}; see docs/queen-king.md)" for r in rows
                if r.get("king") and (r["king"]["tie_share"] or 0) > KING_TIE_WARNING and king_ties != "strict"]
    meaning = {c: get_criterion(c).meaning for c in crits}
    doc = {"testbed": tb.name, "segments": len(tb.segments), "aspect": ev.aspect, "criteria": crits,
           "meanings": meaning, "rows": rows, "notes": notes,
           "warnings": warnings, "signatures": dict(zip(table.metrics, table.signatures)),
           "bootstrap": {"resamples": n_resamples, "seed": seed, "confidence": 0.95,
                         "unit": "whole segments (system-level criteria: systems)"}}
    width = max(len("metric"), *(len(r["metric"]) for r in rows)) + 2
    cols = [max(len(c), 26, *(len(r[c]["text"]) for r in rows if r[c] is not None)) for c in crits]
    lines = [f"{'metric':<{width}}" + "".join(f"{c:<{w + 2}}" for c, w in zip(crits, cols))]
    for r in rows:
        cells = [("-" if r[c] is None else r[c]["text"]) for c in crits]
        lines.append(f"{r['metric']:<{width}}" + "".join(f"{x:<{w + 2}}" for x, w in zip(cells, cols)))
    lines += [f"# {c}: {meaning[c]}" for c in crits]
    lines += [f"warning: {w}" for w in warnings]
    lines.append(f"# {tb.name}: {len(tb.segments)} segments, aspect {ev.aspect}" + _interval_footer(crits, n_resamples,
                                                                                                    seed))
    lines += [f"note: {n}" for n in notes]
    return doc, "\n".join(lines) + "\n"


def _interval_footer(crits: Sequence[str], n_resamples: int, seed: int) -> str:
    """What the brackets of ``combo evaluate``'s table are, naming the criteria that have none."""
    if not n_resamples:
        return ""
    with_interval = [c for c in crits if get_criterion(c).bootstrap is not None]
    without = [c for c in crits if c not in with_interval]
    named = f" ({', '.join(with_interval)})" if without else ""
    text = (f"; 95% bootstrap intervals{named} over {n_resamples} "
            f"resamples of whole segments (system-level criteria: of systems), seed {seed}" if with_interval else "")
    if without:
        text += (f"; {', '.join(without)}: no interval (no bootstrap is defined for "
                 f"{'it' if len(without) == 1 else 'them'}; WMT23 ranks such statistics by its permutation test, "
                 "combo.meta.wmt23.significance_clusters)")
    return text


def wmt23_official_average(evaluators: Dict[str, MetaEvaluator], schemes: Sequence[str]) -> Dict[str, object]:
    """WMT23's official average over the language pairs of ``evaluators`` (:func:`wmt23_over_pairs`), best first:
    ``{"pairs", "rows", "text"}``, ``text`` the table ``combo evaluate`` prints."""
    names, rows = wmt23_over_pairs(evaluators, schemes)
    rows = sorted(rows, key=lambda r: -r["average"])
    tasks = list(rows[0]["tasks"])
    width = max(len("metric"), *(len(r["metric"]) for r in rows)) + 2
    lines = [f"WMT23's official average over {', '.join(sorted(evaluators))} (mt-metrics-eval tasks.WMT23: system "
             f"accuracy pooled over the pairs weighs {len(evaluators)}/{4 * len(evaluators)}, each other task "
             f"1/{4 * len(evaluators)}):",
             f"{'metric':<{width}}{'average':>9}" + "".join(f"{t:>{max(len(t), 6) + 2}}" for t in tasks)]
    for r in rows:
        lines.append(f"{r['metric']:<{width}}{r['average']:>9.4f}"
                     + "".join(f"{r['tasks'][t]:>{max(len(t), 6) + 2}.4f}" for t in tasks))
    lines.append("# the task columns are the statistics as measured (Pearson -1 to 1, accuracies 0 to 1); the average "
                 "maps each Pearson r to (r + 1) / 2 before weighting")
    return {"pairs": sorted(evaluators), "rows": rows, "text": "\n".join(lines) + "\n"}
