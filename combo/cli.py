"""The ``combo`` command line: thin wrappers that parse arguments, call the API and print.

Every error a user can cause is a :class:`combo.errors.ComboError`: it is
printed as one line on stderr and the command exits with code 2 (a traceback
only with ``--debug``). Output files are written whole or not at all.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

import click

from . import __version__
from .errors import ComboError, InputError, OptionError

EXAMPLE = "example"


def example_path() -> Path:
    """The small multi-reference example test bed bundled with the package."""
    return Path(__file__).resolve().parent / "data" / "example.jsonl"


def _load_testbed(spec: str, lp: Optional[str] = None, options: Sequence[str] = ()):
    from .io import load_testbed

    path = example_path() if spec == EXAMPLE else Path(spec)
    kwargs = {}
    for item in options:
        key, eq, value = item.partition("=")
        if not eq:
            raise OptionError(f"--testbed-option {item!r}: expected KEY=VALUE")
        kwargs[key.strip()] = value.strip()
    if lp is not None:
        kwargs["lp"] = lp
    return load_testbed(path, **kwargs)


def testbed_options(func):
    """The options every command that reads a test bed shares."""
    func = click.option("--testbed-option", "testbed_options", multiple=True, metavar="KEY=VALUE",
                        help="Option for the test-bed reader (e.g. judgments=crowd), repeatable.")(func)
    func = click.option("--lp", default=None, help="Language pair, for folders holding several (e.g. de-en).")(func)
    func = click.option("--testbed", "testbed_path", required=True,
                        help="A .jsonl file, a supported folder layout (see docs/testbeds.md), "
                             "or 'example' (bundled).")(func)
    return func


def write_output(text: str, out: Optional[str]) -> None:
    """Print ``text``, or write it to ``out`` atomically (a temporary file renamed into place)."""
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    target = Path(out)
    if target.parent and not target.parent.exists():
        raise InputError("output folder does not exist", str(target.parent), fix="create it first")
    fd, tmp = tempfile.mkstemp(prefix=".combo-", dir=str(target.parent or "."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _table(records: List[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(records, ensure_ascii=False, indent=1) + "\n"
    buf = io.StringIO()
    if not records:
        return ""
    writer = csv.DictWriter(buf, fieldnames=list(records[0]), delimiter="\t" if fmt == "tsv" else ",",
                            lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


class ComboGroup(click.Group):
    """Turns ComboError into one line on stderr and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ComboError as err:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"combo: error: {err}", err=True)
            ctx.exit(err.exit_code)


@click.group(cls=ComboGroup)
@click.version_option(__version__, prog_name="combo")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Heterogeneous MT/NLG evaluation: compute, combine and meta-evaluate metrics."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _metric_list(metrics: Sequence[str]) -> List[str]:
    out: List[str] = []
    for m in metrics:
        # allow "bleu chrf" and "bleu,chrf" alike, but keep "name:key=v,key=v" specs whole
        if ":" in m:
            out.append(m)
        else:
            out.extend(x for x in m.split(",") if x)
    return out


@main.command()
@testbed_options
@click.option("--metrics", "-m", multiple=True, default=("bleu", "chrf", "ter"), show_default=True,
              help="Metric names, repeatable; options as name:key=value,key=value.")
@click.option("--level", type=click.Choice(["system", "segment"]), default="system", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["tsv", "csv", "json"]), default="tsv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
@click.option("--jobs", "-j", type=int, default=1, show_default=True, help="Metrics scored in parallel.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def score(testbed_path: str, lp: Optional[str], testbed_options: Sequence[str], metrics: Sequence[str],
          level: str, fmt: str, out: Optional[str], jobs: int, quiet: bool) -> None:
    """Score every system of a test bed: system-level (corpus) or segment-level scores."""
    from .scoring import score_testbed

    tb = _load_testbed(testbed_path, lp, testbed_options)
    table = score_testbed(tb, _metric_list(metrics), jobs=jobs, progress=not quiet and sys.stderr.isatty())
    if fmt == "json":
        text = table.to_json() + "\n"
    else:
        text = _table(table.to_records(level), fmt)
    write_output(text, out)
    if not quiet:
        for name, sig in zip(table.metrics, table.signatures):
            click.echo(f"# {name}: {sig}", err=True)


@main.command(name="metrics")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
def metrics_cmd(fmt: str) -> None:
    """List every metric with its family, range, resources and availability here."""
    from .catalogue import catalogue, render

    click.echo(render(catalogue(), fmt), nl=False)


@main.group()
def data() -> None:
    """Public data sets: fetch them with pinned checksums, list what is here."""


@data.command(name="list")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="Data folder (default: $COMBO_DATA_HOME or ~/.cache/combo/data).")
def data_list(home: Optional[str]) -> None:
    """Which data sets are present and verified."""
    from .io import fetch

    for st in fetch.list_datasets(home):
        ok = sum(1 for f in st.files if f.ok)
        click.echo(f"{st.name}\t{st.state}\t{ok}/{len(st.files)} files\t{fetch.dataset_dir(st.name, home)}")


@data.command(name="fetch")
@click.argument("name")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="Data folder (default: $COMBO_DATA_HOME or ~/.cache/combo/data).")
@click.option("--force", is_flag=True, help="Download again even when the files verify.")
def data_fetch(name: str, home: Optional[str], force: bool) -> None:
    """Download data set NAME, check every file's SHA-256 and unpack it."""
    from .io import fetch

    path = fetch.fetch(name, home, force=force, log=lambda msg: click.echo(msg, err=True))
    click.echo(str(path))


@data.command(name="verify")
@click.argument("name")
@click.option("--home", type=click.Path(file_okay=False), default=None)
def data_verify(name: str, home: Optional[str]) -> None:
    """Check every file of data set NAME against its pinned SHA-256."""
    from .io import fetch

    st = fetch.verify(name, home)
    click.echo(f"{st.name}\t{st.state}\t{len(st.files)} files")


if __name__ == "__main__":  # pragma: no cover
    main()
