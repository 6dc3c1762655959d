"""``combo apply``: hypothesis files scored against reference files with a tuned metric."""

from __future__ import annotations

from typing import List

import click

from ..scoring import LEVELS
from .options import Choice, set_language
from .output import json_text, table, write_output


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
              help="Model file written by combo train.")
@click.option("--hyps", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Hypothesis file(s), one segment per line; one per system.")
@click.option("--refs", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="Reference file(s), one segment per line each (several files: several references).")
@click.option("--level", type=Choice(LEVELS), default="system", show_default=True)
@click.option("--format", "fmt", type=Choice(["tsv", "json"]), default="tsv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
@click.option("--language", default=None, expose_value=False, callback=set_language, metavar="LANG",
              help="Language of the hypotheses and references (ISO 639-1); a model with metrics that cannot "
                   "read it is refused.")
@click.pass_context
def apply_cmd(ctx, model_path, hyps, refs, level, fmt, out):
    """Score hypothesis files against reference files with a tuned metric."""
    from ..metrics.tuned import load_model
    from ..score_files import score_files
    from ..scoring import check_language

    metric = load_model(model_path)
    language = ctx.meta.get("combo.language")
    check_language(metric, None if language == "any" else language, "the --hyps files", model_path)
    records = score_files(metric, hyps, refs, level)
    if fmt == "json":
        text = json_text({"model": model_path, "signature": metric.signature, "level": level,
                          "scores": records, "output": metric.model.output,
                          "note": ("segment: sigmoid(w.x + b) (DiscoTK's output); system: mean of w.x + b over "
                                   "segments" if metric.model.output == "sigmoid" else
                                   "segment: w.x + b; system: the mean of the segment scores (one scale)")})
    else:
        text = table(records, "tsv")
    write_output(text, out)
