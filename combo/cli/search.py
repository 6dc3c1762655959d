"""``combo search``: the metric set whose combination best meets a meta-evaluation criterion."""

from __future__ import annotations

from typing import List

import click

from ..combine.search import STRATEGIES
from ..errors import InputError
from .meta_evaluation import MeaningsCommand, check_report_possible, criterion_help, criterion_names, meaning, \
    prepare, report_page, scheme_help, schemes, today_name
from .options import Choice, MetaOptions, RegistryChoice, RegistryHelpOption, search_options
from .output import check_outputs, format_value, json_text, write_outputs


@click.command(cls=MeaningsCommand)
@search_options
@click.option("--criterion", type=RegistryChoice(criterion_names), default="king", show_default=True,
              callback=today_name, cls=RegistryHelpOption, help_from=criterion_help)
@click.option("--scheme", type=RegistryChoice(schemes), default=None, cls=RegistryHelpOption,
              help_from=scheme_help)
@click.option("--strategy", type=Choice(STRATEGIES),
              default="greedy", show_default=True)
@click.option("--beam-width", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--bootstrap", "n_resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples (seeded with --seed) of the paired test of the selected set against the best "
                   "single metric (0: no test).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the HTML report (see combo report) of this run here.")
def search(testbed_path, lp, testbed_options, metrics, min_refs, max_refs, cache, fmt, out, quiet, king_segments,
           criterion, scheme, strategy, beam_width, n_resamples, report_path, meta: MetaOptions):
    """Find the metric set whose combination best meets a meta-evaluation criterion (Giménez & Màrquez 2008)."""
    import numpy as np

    from ..evaluate import check_scheme, default_scheme, reading_references, search_metric_sets

    check_report_possible(report_path)
    check_outputs(out=out, report=report_path)
    scheme = scheme or default_scheme(criterion)
    check_scheme(criterion, scheme, "search")
    tb, table, refs, notes, likeness_note = prepare(
        testbed_path, lp, testbed_options, metrics, criterion, meta, min_refs, max_refs, cache,
        needs_refs=bool(reading_references([scheme])), asked=("search", [criterion], [scheme]),
        king_segments=king_segments)
    ev = meta.evaluator(tb, table, refs, command="search")
    ev.likeness_note = likeness_note or f"not measured by this search ({criterion} with {scheme})"
    options = {"width": beam_width} if strategy == "beam" else {}
    result = search_metric_sets(ev, criterion, scheme, strategy, n_resamples=n_resamples, **options)
    if tb.metadata.get("skipped"):
        notes.append(f"{tb.metadata['skipped']} trials left out: no references")
    notes += result.left_out()  # what the selected set's and the best single metric's values leave out
    if result.quality is None or not np.isfinite(result.quality):  # no metric set has a defined quality
        raise InputError(f"{criterion} is undefined for every metric on this test bed ({len(tb.segments)} "
                         "segments): nothing can be selected", testbed_path,
                         fix="choose a criterion the test bed's judgments and references support")
    result.details.update(_details(tb, ev, table, refs, notes, meta, max_refs, criterion, scheme))
    text = json_text(result.to_dict()) if fmt == "json" else _text(result, tb, notes, criterion, scheme, strategy)
    page = report_page(ev, metrics, table, notes, meta.seed, search=result) if report_path else None
    write_outputs(text, out, page, report_path)


def _details(tb, ev, table, refs, notes: List[str], meta: MetaOptions, max_refs, criterion: str, scheme: str
             ) -> dict:
    """What the JSON output records beside the search: the test bed, the meanings, the notes, the randomness and
    the metrics' signatures."""
    from ..evaluate import get_scheme

    return {"testbed": tb.name, "segments": len(tb.segments), "aspect": ev.aspect,
            "meaning": meaning(criterion), "scheme_meaning": get_scheme(scheme).meaning,
            "triples": meta.triples, "king_ties": meta.king_ties, "notes": notes,
            "randomness": {"seed": meta.seed, "max_refs": max_refs, "king_sample": meta.held_out,
                           "king_segments": (tb.metadata.get("segment_sample") or {}).get("size"),
                           "capped_segments": refs.capped_segments if refs is not None else 0},
            "signatures": dict(zip(table.metrics, table.signatures))}


def _text(result, tb, notes: List[str], criterion: str, scheme: str, strategy: str) -> str:
    """The search as printed: the selected set, its quality beside the best single metric's, and the trace."""
    ties = _ties_text(result.details.get("tie_share"))
    lines = [f"criterion: {criterion} (scheme {scheme}, strategy {strategy}) on {tb.name}, "
             f"{len(tb.segments)} segments",
             f"selected: {', '.join(result.selected)}",
             f"quality: {format_value(result.quality)}{ties}{_estimate_text(result.details.get('estimate'))}",
             f"  meaning: {criterion}: {meaning(criterion)}",
             f"best single metric: {result.best_single[0]} {format_value(result.best_single[1])}",
             f"beats best single: {_beats_text(result)}",
             "trace:"]
    for step in result.trace:
        lines.append(f"  {step['step']:<6} {str(step.get('metric') or ''):<18} {format_value(step['quality'])}"
                     f"{_ties_text(step.get('tie_share'))}  "
                     f"{'kept' if step.get('kept') else 'dropped'}  [{', '.join(step['set'])}]")
    lines += [f"warning: {w}" for w in result.details.get("warnings", [])]
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _beats_text(result) -> str:
    """``yes, in-sample ...; no significant difference (p = 0.214, ...)``: whether the selected set beats the best
    single metric, that the comparison is in-sample, and the paired bootstrap test of the difference."""
    if not result.beats_best_single:
        return "no"
    text = "yes, in-sample (the set was selected on these segments)"
    test = result.gain_test_text()
    if test.startswith("significant"):
        test += ", though optimistic: confirm it on held-out segments"
    return text + (f"; {test}" if test else "")


def _estimate_text(estimate) -> str:
    """``, an estimate: 95% sampling interval [a, b]`` beside a KING figure estimated from samples; else empty."""
    if not estimate:
        return ""
    return f", an estimate: 95% sampling interval [{estimate['low']:.4f}, {estimate['high']:.4f}]"


def _ties_text(share) -> str:
    """`` (ties 71%)`` beside a KING figure; empty for other criteria."""
    return f" (ties {share:.0%})" if share is not None and share == share else ""
