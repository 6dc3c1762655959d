"""The ``combo`` command line: thin commands that parse arguments, call the API and print.

Every error a user can cause is a :class:`combo.errors.ComboError`: it is printed as one line on stderr and the
command exits with code 2 (a traceback only with ``--debug``). Output files are written whole or not at all.

One module per command or group of commands (:mod:`.score`, :mod:`.search`, :mod:`.evaluate`, :mod:`.report`,
:mod:`.train`, :mod:`.apply`, :mod:`.mutt`, :mod:`.metrics`, :mod:`.models`, :mod:`.data`,
:mod:`.cache`); the options they share
are declared once in :mod:`.options`, what search, evaluate and report share is in :mod:`.meta_evaluation`, and
writing results in :mod:`.output`. Heavy imports stay inside the commands, so ``import combo.cli`` is quick.
"""

from __future__ import annotations

import sys

import click

from .._version import __version__
from ..errors import ComboError, one_line
from . import apply, cache, data, evaluate, metrics, models, mutt, report, score, search, train


class ComboGroup(click.Group):
    """Turns ComboError and click's usage errors into one line on stderr and exit code 2.

    Any other exception is a bug: one line naming it and ``--debug`` (exit 1), never a traceback
    unless ``--debug`` is given.
    """

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ComboError as err:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"combo: error: {one_line(err)}", err=True)
            ctx.exit(err.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback only with --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"combo: internal error: {type(err).__name__}: {one_line(err)[:300]} "
                       "(rerun with --debug for the traceback, and please report it)", err=True)
            ctx.exit(1)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as err:
            where = f" (see {err.ctx.command_path} --help)" if err.ctx is not None else ""
            click.echo(f"combo: error: {one_line(err.format_message())}{where}", err=True)
            sys.exit(err.exit_code)
        except click.ClickException as err:
            click.echo(f"combo: error: {one_line(err.format_message())}", err=True)
            sys.exit(err.exit_code)
        except click.Abort:
            click.echo("combo: aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=ComboGroup)
@click.version_option(__version__, prog_name="combo")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Heterogeneous MT/NLG evaluation: compute, combine and meta-evaluate metrics."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


for _command in (score.score, search.search, evaluate.evaluate, report.report, metrics.metrics_cmd, data.data,
                 cache.cache, train.train, apply.apply_cmd, mutt.mutt_cmd, models.models):
    main.add_command(_command)
del _command

__all__ = ["main"]
