"""``combo cache info|clear``: the caches of metric scores and of text analyses, shown or emptied."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from ..errors import InputError
from .options import score_cache_option


@click.group()
def cache() -> None:
    """Show or empty the caches: metric scores (scores/ in $COMBO_CACHE_DIR, or a --cache folder) and text
    analyses ($COMBO_CACHE_DIR/analysis.sqlite)."""


_CACHE_FOLDER = score_cache_option("folder")


@cache.command(name="info")
@_CACHE_FOLDER
def cache_info_cmd(folder: Optional[str]) -> None:
    """Entries and sizes of both caches."""
    from ..analysis.layers import analysis_cache_info
    from ..scoring import cache_info

    if folder is None:
        click.echo("scores\t(off)")
    else:
        named = _cache_named(click.get_current_context())
        _named_cache_exists(folder, named)
        s = cache_info(folder, require_marker=named)
        foreign = "\tnot a combo score cache" if named and Path(folder).is_dir() and not s["marked"] else ""
        n = s["score_entries"]
        click.echo(f"scores\t{s['folder']}\t{n} {'entry' if n == 1 else 'entries'}\t{s['score_bytes']} bytes{foreign}")
    a = analysis_cache_info()
    state = f"\tdamaged: {a['damaged']}" if "damaged" in a else ""
    click.echo(f"analyses\t{a['file'] or '(off)'}\t{a['rows']} rows in {a['tables']} layer tables\t"
               f"{a['bytes']} bytes{state}")


def _named_cache_exists(folder: str, named: bool) -> None:
    """A folder that ``--cache`` names must exist: a mistyped one would read as an empty cache ("0 entries")."""
    if named and not Path(folder).is_dir():
        raise InputError("no such folder", folder, fix="name the folder a command's --cache wrote")


def _cache_named(ctx: click.Context) -> bool:
    """Whether ``--cache`` was given (its callback fills in the default folder when it was not)."""
    return ctx.get_parameter_source("folder") is click.core.ParameterSource.COMMANDLINE


@cache.command(name="clear")
@_CACHE_FOLDER
def cache_clear_cmd(folder: Optional[str]) -> None:
    """Empty the score cache --cache names (only it, and only combo's entries: a folder without combo's marker
    is refused), or without --cache both default caches."""
    from ..analysis.layers import analysis_cache_clear, cache_dir
    from ..scoring import cache_clear

    named = _cache_named(click.get_current_context())
    if folder is None:
        click.echo("scores\t(off)")
    else:
        # the default folder is combo's own path: entries an older combo wrote there without a marker go too
        _named_cache_exists(folder, named)
        removed = cache_clear(folder, require_marker=named)
        click.echo(f"scores\t{folder}\t{removed} {'entry' if removed == 1 else 'entries'} removed")
    if named:
        return
    removed = analysis_cache_clear()
    click.echo(f"analyses\t{cache_dir() or '(off)'}\t{'removed' if removed else 'nothing to remove'}")

