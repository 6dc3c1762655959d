"""Writing a command's results: to stdout or atomically to ``--out``, the HTML report beside them, output files
checked before any work, tables as TSV, CSV or JSON, and errors on one line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Iterable, List, Optional

import click

from ..errors import OptionError
from ..io.text import check_writable, write_text_atomic


def write_output(text: str, out: Optional[str]) -> None:
    """Print ``text``, or write it to ``out`` atomically (a temporary file renamed into place)."""
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    write_text_atomic(text, out)


def check_outputs(**paths: Optional[str]) -> None:
    """Refuse, before any work, output files that cannot be written, and two outputs naming one file.

    ``paths``: option name (``out``, ``report``) -> the path given (None: not given). Each folder must exist and
    take a new file (probed with a temporary file, removed at once, as the final write makes one); the same
    messages as the write itself (:func:`combo.io.text.write_text_atomic`) gives, only before the scoring.
    """
    import os

    given = {f"--{name}": path for name, path in paths.items() if path is not None}
    seen = {}
    for option, path in given.items():
        where = os.path.realpath(path)
        if where in seen:
            target = Path(path)
            other = target.with_name(f"{target.stem}-{option[2:]}{target.suffix or '.html'}")
            raise OptionError(f"{seen[where]} and {option} both name {path}: one would overwrite the other "
                              f"(fix: give {option} another file, e.g. {option} {other})")
        seen[where] = option
        check_writable(path)


def write_outputs(text: Optional[str], out: Optional[str], page: Optional[str] = None,
                  report_path: Optional[str] = None) -> None:
    """Write the HTML report (when asked for) and then the result ``text`` (``--out``, else stdout; None: none).

    The report goes first: when it cannot be written, no ``--out`` file and no output are left behind; when the
    result cannot be written, a report this run created is removed again.
    """
    import os

    if page is None:
        if text is not None:
            write_output(text, out)
        return
    existed = os.path.lexists(report_path)
    write_text_atomic(page, report_path)
    try:
        if text is not None:
            write_output(text, out)
    except BaseException:
        if not existed and os.path.exists(report_path):
            os.unlink(report_path)
        raise
    click.echo(f"report written to {report_path} ({len(page.encode('utf-8')) / 1e6:.2f} MB)", err=True)


def table(records: List[dict], fmt: str) -> str:
    """``records`` (dicts with the same keys) as TSV or CSV (floats with six decimals)."""
    if not records:
        return ""
    header = list(records[0])
    return rows_table(header, (map(r.get, header) for r in records), fmt)


def rows_table(header: List[str], rows: Iterable[Iterable], fmt: str) -> str:
    """A header and rows of values as TSV or CSV (floats with six decimals, None empty)."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(header)
    writer.writerows([f"{v:.6f}" if isinstance(v, float) else v for v in row] for row in rows)
    return buf.getvalue()


def json_text(doc) -> str:
    """``doc`` as the JSON a command prints: indented by one, NaN and infinities as null, numpy values as numbers."""
    return json.dumps(clean(doc), indent=1, ensure_ascii=False, default=json_default) + "\n"


def format_value(value) -> str:
    """A criterion's value with four decimals, or ``undefined``."""
    import math

    return "undefined" if value is None or not math.isfinite(value) else f"{value:.4f}"


def clean(obj):
    """JSON-safe copy: NaN and infinities become null (json.dumps would write invalid NaN)."""
    import math

    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_default(obj):
    import numpy as np

    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        v = float(obj)
        return v if v == v and abs(v) != float("inf") else None
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def count(n: int, noun: str) -> str:
    """``1 line``, ``3 lines``."""
    from ..progress import plural

    return f"{n} {plural(noun, n)}"
