"""Scoring plain text files with one metric (``combo apply``): hypothesis files, one per system, against
reference files, one segment per line each (several files: several references per segment)."""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence

from .errors import InputError, OptionError
from .progress import plural


def _lines(n: int) -> str:
    return f"{n} {plural('line', n)}"


def system_name(path: str) -> str:
    """A system's name from its output file, as the test-bed readers name them: the file name without ``.txt``
    (:func:`combo.io.plain.names_from_paths` of the one file)."""
    from .io.plain import names_from_paths

    return names_from_paths([path])[0]


def read_references(refs: Sequence[str]) -> List[List[str]]:
    """The references of each segment, read from ``refs`` (one line per segment in each file)."""
    from .io.text import read_lines
    from .metrics.base import refs_from_streams

    streams = [read_lines(p, allow_empty=True) for p in refs]
    for p, stream in zip(refs[1:], streams[1:]):
        if len(stream) != len(streams[0]):
            raise InputError(f"has {_lines(len(stream))} but {refs[0]} has {len(streams[0])}", p,
                             fix="give one reference line per segment in every reference file")
    references = refs_from_streams(streams)
    if not references:
        raise InputError("no segments: the reference files are empty", refs[0],
                         fix="give one reference line per segment")
    return references


def system_names(hyps: Sequence[str]) -> List[str]:
    """Each hypothesis file's system name (:func:`system_name`; the paths when two files share one); a file
    given twice is refused."""
    seen: Dict[str, str] = {}
    for p in hyps:
        where = os.path.realpath(p)
        if where in seen:
            same = "" if seen[where] == p else f" (also as {seen[where]})"
            raise OptionError(f"--hyps names {p} twice{same}: give each system's file once")
        seen[where] = p
    names = [system_name(p) for p in hyps]  # as test beds name systems: the file name without .txt
    return names if len(set(names)) == len(names) else list(hyps)


def files_testbed(hyps: Sequence[str], refs: Sequence[str], src: Optional[str] = None):
    """A test bed of hypothesis files (one system each) against reference files and, optionally, the source file,
    one segment per line in each: what ``combo apply`` scores. Segment ids are line numbers from 1, the ids a
    ``scores:FILE`` binding gives."""
    from .io.plain import read_plain
    from .io.text import read_lines

    references = read_references(refs)
    if src is not None:
        sources = read_lines(src, allow_empty=True)
        if len(sources) != len(references):
            raise InputError(f"has {_lines(len(sources))} but the references have {len(references)}", src,
                             fix="give one source line per reference line")
    names = system_names(hyps)
    for path in hyps:
        lines = read_lines(path, allow_empty=True)
        if len(lines) != len(references):
            raise InputError(f"has {_lines(len(lines))} but the references have {len(references)}", path,
                             fix="give one hypothesis line per reference line")
    return read_plain(src, list(refs), dict(zip(names, hyps)), name="files")


def score_files(metric, hyps: Sequence[str], refs: Sequence[str], level: str = "system",
                src: Optional[str] = None, progress: bool = False):
    """``metric``'s scores of each hypothesis file against the reference files (and the source file): the score
    table of :func:`files_testbed`, and its ``{"system", "score"}`` records (``level="segment"``:
    ``{"system", "segment", "score"}``, segments numbered from 1)."""
    from .scoring import score_testbed

    table = score_testbed(files_testbed(hyps, refs, src), [metric], progress=progress)
    if level == "system":
        records = [{"system": s, "score": float(v)} for s, v in zip(table.systems, table.system[0])]
    else:
        records = [{"system": table.systems[s], "segment": int(i) + 1, "score": float(v)}
                   for s, i, v in zip(table.row_system, table.row_segment, table.segment[0])]
    return table, records
