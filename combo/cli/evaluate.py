"""``combo evaluate``: each metric and their combinations meta-evaluated against the human judgments."""

from __future__ import annotations

from typing import List

import click

from ..errors import OptionError
from .meta_evaluation import MeaningsCommand, check_report_possible, combine_help, criteria_help, criterion_names, \
    language_pairs, named_list, prepare, refused_pairs, report_page, schemes
from .options import MetaOptions, RegistryHelpOption, load_testbed, search_options
from .output import check_outputs, json_text, write_outputs


@click.command(cls=MeaningsCommand)
@search_options
@click.option("--criteria", default="r_snt,wmt_kendall,pearson", show_default=True, cls=RegistryHelpOption,
              help_from=criteria_help)
@click.option("--combine", "combos", default="ulc", show_default=True, cls=RegistryHelpOption,
              help_from=lambda: combine_help("evaluate too"))
@click.option("--bootstrap", "n_resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples for the 95% intervals (0: none).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the HTML report (see combo report) of this run here.")
def evaluate(testbed_path, lp, testbed_options, metrics, min_refs, max_refs, cache, fmt, out, quiet, king_segments,
             criteria, combos, n_resamples, report_path, meta: MetaOptions):
    """Meta-evaluate each metric and their combinations against the human judgments, with bootstrap intervals.

    Several language pairs of one folder (--lp en-de,he-en): each pair's table, then WMT23's official average over
    the pairs (system accuracy pooled; the other tasks per pair)."""
    from ..evaluate import criteria_of_family, evaluate_entries, evaluation_output, reading_references

    check_report_possible(report_path)
    check_outputs(out=out, report=report_path)
    crits = named_list(criteria, "--criteria", "criterion", criterion_names())
    combined = named_list(combos, "--combine", "combination", schemes(), none_allowed=True)
    refused_pairs(crits, combined, "evaluate")
    lps = language_pairs(lp)
    if len(lps) > 1 and report_path:
        raise OptionError(f"--report draws one test bed's report: give one --lp (e.g. --lp {lps[0]}) with --report")
    likeness_criteria = criteria_of_family("likeness")  # KING, ORANGE
    needs_refs = any(c in likeness_criteria for c in crits) or bool(reading_references(combined))
    likeness = next((c for c in crits if c in likeness_criteria), crits[0] if crits else "r_snt")
    docs, texts, evaluators = [], [], {}
    loaded = [load_testbed(testbed_path, one_lp, testbed_options) for one_lp in lps]  # every pair, before scoring
    for one_lp, one_tb in zip(lps, loaded):
        tb, table, refs, notes, _ = prepare(testbed_path, one_lp, testbed_options, metrics, likeness, meta, min_refs,
                                            max_refs, cache, needs_refs, ("evaluate", crits, combined),
                                            king_segments, tb=one_tb)
        ev = meta.evaluator(tb, table, refs, command="evaluate")
        ev.likeness_note = f"not asked for (--criteria {','.join(crits)})"
        evaluators[one_lp or tb.name] = ev
        names, qualities = evaluate_entries(ev, crits, combined, n_resamples, meta.seed)
        doc, text = evaluation_output(ev, tb, table, crits, names, qualities, notes, n_resamples, meta.seed,
                                      meta.king_ties)
        docs.append(doc)
        texts.append(text)
    text = _output(docs, texts, evaluators, combined, fmt, "wmt23" in crits)
    page = report_page(ev, metrics, table, notes, meta.seed, schemes=combined, n_resamples=n_resamples,
                       evaluation=(names, qualities)) if report_path else None
    write_outputs(text, out, page, report_path)


def _output(docs: List[dict], texts: List[str], evaluators: dict, combined: List[str], fmt: str,
            asked: bool = False) -> str:
    """One pair's table or JSON document; several pairs' each, then WMT23's official average over them where
    every pair has absolute scores (MQM, DA). Pairs of relative rankings (WMT12) get their tables alone, unless
    the ``wmt23`` criterion was ``asked`` for: then the average's refusal names the pair."""
    from ..evaluate import reading_references, wmt23_official_average

    if len(docs) == 1:
        return json_text(docs[0]) if fmt == "json" else texts[0]
    if not asked and not all(ev.has_absolute_scores for ev in evaluators.values()):
        return json_text({"pairs": docs}) if fmt == "json" else "\n".join(texts)
    queen = reading_references(combined)
    official = wmt23_official_average(evaluators, [s for s in combined if s not in queen])
    if fmt == "json":
        return json_text({"pairs": docs, "wmt23_official": official})
    return "\n".join(texts) + "\n" + official["text"]
