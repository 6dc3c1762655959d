"""``combo apply``: hypothesis files scored against reference files with a tuned metric."""

from __future__ import annotations

from typing import List

import click

from ..scoring import LEVELS
from .options import Choice, feature_option, set_language
from .output import json_text, table as table_text, write_output


class ManyValuesCommand(click.Command):
    """Lets ``--refs A B C`` (and ``--hyps``) take several values: rewritten to ``--refs A --refs B --refs C``."""

    many = ("--refs", "--hyps")

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        out: List[str] = []
        current = None
        for arg in args:
            if arg in self.many:
                current = arg
            elif current is not None and arg != "--" and not arg.startswith("-"):
                if out[-1] != current:
                    out.append(current)
            else:
                current = None
            out.append(arg)
        return super().parse_args(ctx, out)


@click.command(name="apply", cls=ManyValuesCommand)
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False),
              help="Model file written by combo train, or a shipped model by name (combo-wmt23).")
@click.option("--hyps", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Hypothesis file(s), one segment per line; one per system.")
@click.option("--refs", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Reference file(s), one segment per line each (several files: several references).")
@click.option("--src", type=click.Path(dir_okay=False), default=None,
              help="Source file, one segment per line: read by features that need sources (COMET, CometKiwi, "
                   "MetricX-QE).")
@click.option("--level", type=Choice(LEVELS), default="system", show_default=True)
@click.option("--format", "fmt", type=Choice(["tsv", "json"]), default="tsv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress and no significance lines on stderr.")
@click.option("--language", default=None, expose_value=False, callback=set_language, metavar="LANG",
              help="Language of the hypotheses and references (ISO 639-1); a model with metrics that cannot "
                   "read it is refused.")
@feature_option
@click.pass_context
def apply_cmd(ctx, model_path, hyps, refs, src, level, fmt, out, quiet):
    """Score hypothesis files against reference files with a tuned metric.

    With two or more hypothesis files, each pair of systems is compared on the same segments: the difference of
    their system scores with a paired t-test and a paired bootstrap (1,000 resamples of the segments, seed 0),
    as comet-compare does (in JSON under "significance"; with TSV, on stderr)."""
    from ..metrics.tuned import load_model
    from ..score_files import score_files
    from ..scoring import check_language

    metric = load_model(model_path)
    language = ctx.meta.get("combo.language")
    check_language(metric, None if language == "any" else language, "the --hyps files", model_path)
    table, records = score_files(metric, hyps, refs, level, src, progress=not quiet)
    compared = paired_comparisons(table)
    signature = table.signatures[0]
    if fmt == "json":
        text = json_text({"model": model_path, "signature": signature, "level": level,
                          "scores": records, "significance": compared, "output": metric.model.output,
                          "note": metric.model.output_meaning})
    else:
        text = table_text(records, "tsv")
    write_output(text, out)
    if fmt != "json" and not quiet:
        for c in compared:
            click.echo(f"# {c['system_a']} - {c['system_b']}: {c['delta']:+.4f} [{c['low']:+.4f}, {c['high']:+.4f}], "
                       f"p = {c['p_ttest']:.4f} (paired t-test), p = {c['p_bootstrap']:.4f} (paired bootstrap, "
                       f"{c['n_resamples']} resamples)", err=True)
        click.echo(f"# {signature}", err=True)


def paired_comparisons(table, n_resamples: int = 1000, seed: int = 0) -> List[dict]:
    """Each pair of systems compared on the segments both have a score for: the difference of their mean segment
    scores (the system score of a linear model), a two-sided paired t-test (scipy's ``ttest_rel``) and a
    two-sided paired bootstrap over the segments with its 95% interval (:func:`combo.meta.significance.
    paired_bootstrap_test`): what comet-compare reports for COMET."""
    import numpy as np
    from scipy.stats import ttest_rel

    from ..meta.significance import paired_bootstrap_test

    n_seg = len(table.segment_ids)
    by_system = np.full((len(table.systems), n_seg), np.nan)
    by_system[table.row_system, table.row_segment] = table.segment[0]
    out = []
    for a in range(len(table.systems)):
        for b in range(a + 1, len(table.systems)):
            both = np.isfinite(by_system[a]) & np.isfinite(by_system[b])
            x, y = by_system[a][both], by_system[b][both]
            if len(x) < 2:
                continue
            test = paired_bootstrap_test(lambda v: v.mean(axis=-1), x, y, n_resamples=n_resamples,
                                         alternative="two-sided", seed=seed)
            p_t = float(ttest_rel(x, y).pvalue) if np.any(x != y) else 1.0
            out.append({"system_a": table.systems[a], "system_b": table.systems[b], "segments": int(len(x)),
                        "delta": round(float(test.delta), 10), "low": round(float(test.low), 10),
                        "high": round(float(test.high), 10), "p_ttest": round(p_t, 10),
                        "p_bootstrap": round(float(test.p_value), 10), "n_resamples": n_resamples, "seed": seed})
    return out
