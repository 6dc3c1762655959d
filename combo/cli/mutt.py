"""``combo mutt``: metric unit tests, each metric's accuracy on each corruption type."""

from __future__ import annotations

import click

from ..errors import OptionError
from ..io.mutt import TRIAL_SETS
from ..metric_unit_tests import SCHEMES as UNIT_TEST_SCHEMES
from .options import Choice, MetricsOption, jobs_option, metric_list, score_cache_option
from .output import check_outputs, json_text, table, write_output


@click.command(name="mutt")
@click.argument("corruptions", type=click.Path())
@click.option("--flickr8k", type=click.Path(file_okay=False), default=None,
              help="Flickr8k folder: the FLICKR trials get their image's five captions as references.")
@click.option("--metrics", "-m", cls=MetricsOption, multiple=True, default=(),
              help="Metric specs or model files: -m bleu ter, repeated -m, or comma-separated. Default: bleu meteor "
                   "cider ter; on released trial files coco-caption's CIDEr-D and BLEU-4 settings, meteor and ter.")
@click.option("--scheme", type=Choice(UNIT_TEST_SCHEMES), default=None, help="Also test the ULC of the metrics.")
@click.option("--references", type=click.IntRange(min=1), default=None,
              help="At most this many references per trial (seeded sample). On released trial files: the "
                   "reference file to use, TYPE_r5/_r10/_r20.json (5, 10 or 20; default 5).")
@click.option("--trials", type=Choice(TRIAL_SETS), default="flickr", show_default=True,
              help="flickr: the trials with references (others counted); all: every trial must have references.")
@click.option("--fluency/--no-fluency", default=True, show_default=True,
              help="Add the SICK+ fluency corruptions generated from the trials' sentences (shallow parser).")
@click.option("--seed", type=int, default=0, show_default=True)
@jobs_option()
@score_cache_option()
@click.option("--format", "fmt", type=Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None)
@click.option("--quiet", "-q", is_flag=True)
def mutt_cmd(corruptions, flickr8k, metrics, scheme, references, trials, fluency, seed, jobs, cache, fmt, out, quiet):
    """Metric unit tests (Boag et al. 2016): accuracy of each metric on each corruption type.

    CORRUPTIONS is the folder of the corruption files (neg_subj.txt, ...), or of the authors' released trial
    files (TYPE_a.json, TYPE_b.json, TYPE_r5/_r10/_r20.json: detected), judged by their script's rules
    (the Difference formula for det_sub, near_syms and passive, the original above its corruption otherwise).
    """
    from ..io.mutt_released import is_released_folder
    from ..metric_unit_tests import run_folder_unit_tests

    check_outputs(out=out)
    if is_released_folder(corruptions):
        _refuse_options_of_corruption_files(click.get_current_context())
    result = run_folder_unit_tests(corruptions, metric_list(metrics), references=references, trials=trials,
                                   fluency=fluency, seed=seed, scheme=scheme, flickr8k=flickr8k, jobs=jobs,
                                   cache_dir=cache, progress=not quiet)
    if fmt == "json":
        text = json_text(result.to_dict())
    elif fmt == "csv":
        text = table(result.to_records(), "csv")
    else:
        text = result.to_table()
    write_output(text, out)
    if fmt == "csv":  # the table and JSON hold the notes; CSV is data: its notes go to stderr
        for note in result.notes:
            click.echo(f"note: {note}", err=True)


def _refuse_options_of_corruption_files(ctx: click.Context) -> None:
    """The released trial files hold their references and generated types: the options choosing those of
    corruption files are refused when given."""
    from click.core import ParameterSource

    given = [flag for name, flag in (("flickr8k", "--flickr8k"), ("trials", "--trials"),
                                     ("fluency", "--fluency/--no-fluency"), ("seed", "--seed"))
             if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
    if given:
        raise OptionError(f"{', '.join(given)}: not for the released trial files, which hold their references "
                          "and generated types; choose their reference file with --references 5, 10 or 20")
