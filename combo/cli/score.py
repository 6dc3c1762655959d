"""``combo score``: every system of a test bed scored, at system or segment level."""

from __future__ import annotations

import json
from typing import List, Optional, Sequence

import click

from ..scoring import LEVELS
from .options import Choice, MetricsOption, feature_option, jobs_option, load_testbed, metric_list, scale_options, \
    score_cache_option, testbed_options
from .output import check_outputs, count, json_text, rows_table, write_output


@click.command()
@testbed_options
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True, default=("bleu", "chrf", "ter"), show_default=True,
              help="Metric names or sets such as @lexical: -m bleu chrf ter, or repeated -m; "
                   "options as name:key=value,key=value.")
@click.option("--level", type=Choice(LEVELS), default="system", show_default=True)
@click.option("--format", "fmt", type=Choice(["tsv", "csv", "json"]), default="tsv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
@jobs_option("Worker processes (-1: one per core): metrics, and chunks of rows of a large test bed, are scored "
             "in parallel.")
@score_cache_option()
@click.option("--quiet", "-q", is_flag=True, help="No progress (a bar on a terminal, a line every 10 s in a log).")
@scale_options
@feature_option
def score(testbed_path: str, lp: Optional[str], testbed_options: Sequence[str], metrics: Sequence[str],
          level: str, fmt: str, out: Optional[str], jobs: int, cache: Optional[str], quiet: bool,
          memory: str) -> None:
    """Score every system of a test bed: system-level (corpus) or segment-level scores."""
    from ..parallel import resolve_execution
    from ..scoring import score_testbed

    run = resolve_execution(jobs, memory, progress=not quiet)  # the run's jobs, budget and progress, once
    check_outputs(out=out)
    tb = load_testbed(testbed_path, lp, testbed_options)
    table = score_testbed(tb, metric_list(metrics), jobs=run, cache_dir=cache)
    notes = _notes(table)
    if fmt == "json":
        doc = json.loads(table.to_json())
        text = json_text({**doc, "notes": notes} if notes else doc)  # NaN (no score) is null, as json_text writes it
    else:
        text = rows_table(*table.to_rows(level), fmt)
    write_output(text, out)
    if fmt != "json":
        for note in notes:
            click.echo(f"note: {note}", err=True)
    if not quiet:
        where = table.metadata.get("provenance", {})
        for name, sig in zip(table.metrics, table.signatures):
            click.echo(f"# {name}: {sig}" + (f"|{where[name]}" if where.get(name) else ""), err=True)


def _notes(table) -> List[str]:
    """What the scores leave out (members of @set:available, candidates a scores file has no score for): a
    "notes" list in JSON (when there is one); beside TSV and CSV, which are data, "note:" lines on stderr."""
    return list(table.metadata.get("notes") or []) + [
        f"{name}: no score for {count(n, 'candidate')} (segment level: nan in TSV and CSV, null in JSON; system "
        "level: from the scores given)" for name, n in (table.metadata.get("missing_scores") or {}).items()]
