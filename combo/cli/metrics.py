"""``combo metrics``: every metric with its family, range, resources and availability here."""

from __future__ import annotations

import click

from ..catalogue import FORMATS as CATALOGUE_FORMATS
from .options import Choice


@click.command(name="metrics")
@click.option("--format", "fmt", type=Choice(CATALOGUE_FORMATS), default="table",
              show_default=True)
def metrics_cmd(fmt: str) -> None:
    """List every metric with its family, range, resources and availability here."""
    from ..catalogue import catalogue, render

    click.echo(render(catalogue(), fmt), nl=False)
