"""``combo report``: one self-contained HTML report of a test bed's meta-evaluation."""

from __future__ import annotations

import click

from ..combine.search import STRATEGIES
from .meta_evaluation import check_report_possible, combine_help, criterion_names, named_list, prepare, \
    refused_pairs, report_page, schemes, today_name
from .options import Choice, MetaOptions, MetricsOption, RegistryChoice, RegistryHelpOption, meta_options, \
    score_cache_option, testbed_options
from .output import check_outputs, write_outputs


@click.command()
@testbed_options
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True,
              help="Metrics or sets such as @lexical: -m bleu chrf, or repeated -m (default: @search).")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--criteria", default=None,
              help="Comma-separated criteria (default: every one the test bed supports).")
@click.option("--combine", "combos", default="ulc", show_default=True, cls=RegistryHelpOption,
              help_from=lambda: combine_help("show too"))
@click.option("--search", "search_criterion", default=None, type=RegistryChoice(criterion_names),
              callback=today_name, help="Also search the optimal metric set under this criterion and show its trace.")
@click.option("--strategy", type=Choice(STRATEGIES),
              default="greedy", show_default=True, help="Search strategy (with --search).")
@click.option("--mutt", "mutt", default=None, type=click.Path(exists=True, file_okay=False), metavar="CORRUPTIONS",
              help="Also run the MUTT unit tests of this corruptions folder and show their accuracy heatmap.")
@click.option("--mutt-flickr8k", default=None, type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Flickr8k folder: the FLICKR trials of --mutt get their image's captions as references.")
@click.option("--bootstrap", "n_resamples", type=click.IntRange(min=0), default=1000, show_default=True,
              help="Bootstrap resamples for the 95% intervals and the significance clusters.")
@click.option("--worst", type=click.IntRange(min=0), default=5, show_default=True,
              help="Worst-scored segments shown per metric.")
@click.option("--min-refs", type=click.IntRange(min=1), default=None,
              help="Skip (and count) segments with fewer references.")
@click.option("--max-refs", type=click.IntRange(min=1), default=None,
              help="Cap references per segment with a seeded sample.")
@meta_options
@score_cache_option()
@click.option("--quiet", "-q", is_flag=True)
def report(testbed_path, lp, testbed_options, metrics, out, criteria, combos, search_criterion, strategy, mutt,
           mutt_flickr8k, n_resamples, worst, min_refs, max_refs, cache, quiet, meta: MetaOptions):
    """Write one self-contained HTML report: meta-evaluation, intervals, correlations, plots, worst segments."""
    from ..evaluate import criteria_of_family, default_scheme, reading_references, search_metric_sets
    from ..metric_unit_tests import mutt_accuracy

    check_report_possible(out)
    check_outputs(out=out)
    crits = None if criteria is None else named_list(criteria, "--criteria", "criterion", criterion_names())
    combined = named_list(combos, "--combine", "combination", schemes(), none_allowed=True)
    asked = (crits or []) + ([search_criterion] if search_criterion else [])
    refused_pairs(asked, combined, "report")
    likeness = next((c for c in asked if c in criteria_of_family("likeness")), None)
    needs_refs = True if likeness or reading_references(combined) else "auto" if crits is None else False
    checked = likeness or ("king" if needs_refs == "auto" else "r_snt")  # the reference count prepare checks
    tb, table, refs, notes, likeness_note = prepare(
        testbed_path, lp, testbed_options, metrics, checked, meta, min_refs, max_refs, cache, needs_refs,
        ("report", crits or [], combined, search_criterion))
    ev = meta.evaluator(tb, table, refs, command="report --search")
    ev.likeness_note = likeness_note or (f"not asked for (--criteria {criteria})" if crits is not None else None)
    result = (search_metric_sets(ev, search_criterion, default_scheme(search_criterion), strategy,
                                 n_resamples=n_resamples) if search_criterion else None)
    ev.command = "report"  # the table's criteria: --criteria
    accuracy, mutt_note = (None, "MUTT unit tests were not run (combo report --mutt CORRUPTIONS).")
    if mutt:
        accuracy, mutt_note = mutt_accuracy(table.metrics, mutt, mutt_flickr8k, meta.seed)
    page = report_page(ev, metrics, table, notes, meta.seed, criteria=crits, schemes=combined,
                       n_resamples=n_resamples, search=result, mutt=accuracy, mutt_note=mutt_note or "", worst=worst)
    write_outputs(None, None, page, out)
