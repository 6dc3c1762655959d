"""``combo data list|fetch|verify``: public data sets fetched with pinned checksums, and what is here."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click


@click.group()
def data() -> None:
    """Public data sets: fetch them with pinned checksums, list what is here."""


@data.command(name="list")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="Data folder (default: $COMBO_DATA_HOME, else ~/.cache/combo/data).")
def data_list(home: Optional[str]) -> None:
    """Which data sets are present and verified."""
    from ..io import fetch

    for st in fetch.list_datasets(home):
        ok = sum(1 for f in st.files if f.ok)
        click.echo(f"{st.name}\t{st.state}\t{ok}/{len(st.files)} files\t{fetch.dataset_dir(st.name, home)}")
    where = fetch.data_home() if home is None else Path(home).expanduser()
    click.echo(f"# looked in {where} ({fetch.data_home_origin(home)}); data sets elsewhere: "
               "COMBO_DATA_HOME=DIR or --home DIR (a folder holding wmt12/, dstc7/, ... as docs/data.md shows); "
               "missing ones: combo data fetch NAME", err=True)


@data.command(name="fetch")
@click.argument("name")
@click.option("--home", type=click.Path(file_okay=False), default=None,
              help="Data folder (default: $COMBO_DATA_HOME or ~/.cache/combo/data).")
@click.option("--force", is_flag=True, help="Download again even when the files verify.")
def data_fetch(name: str, home: Optional[str], force: bool) -> None:
    """Download data set NAME, check every file's SHA-256 and unpack it."""
    from ..io import fetch

    fetch.fetch(name, home, force=force, log=lambda msg: click.echo(msg, err=True))
    click.echo(str(fetch.dataset_dir(name, home)))  # the folder, for scripts: --testbed "$(combo data fetch dstc7)"


@data.command(name="verify")
@click.argument("name")
@click.option("--home", type=click.Path(file_okay=False), default=None)
def data_verify(name: str, home: Optional[str]) -> None:
    """Check every file of data set NAME against its pinned SHA-256."""
    from ..io import fetch

    st = fetch.verify(name, home)
    click.echo(f"{st.name}\t{st.state}\t{len(st.files)} files")

