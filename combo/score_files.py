"""Scoring plain text files with one metric (``combo apply``): hypothesis files, one per system, against
reference files, one segment per line each (several files: several references per segment)."""

from __future__ import annotations

import os
from typing import Dict, List, Sequence

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


def score_files(metric, hyps: Sequence[str], refs: Sequence[str], level: str = "system") -> List[dict]:
    """``metric``'s scores of each hypothesis file against the reference files: ``{"system", "score"}`` records
    (``level="segment"``: ``{"system", "segment", "score"}``, segments numbered from 1)."""
    from .io.text import read_lines

    references = read_references(refs)
    records = []
    for name, path in zip(system_names(hyps), hyps):
        lines = read_lines(path, allow_empty=True)
        if len(lines) != len(references):
            raise InputError(f"has {_lines(len(lines))} but the references have {len(references)}", path,
                             fix="give one hypothesis line per reference line")
        stats = metric.segment_statistics(lines, references)
        if level == "system":
            records.append({"system": name, "score": float(metric.score(stats.sum(axis=0), segment_level=False))})
        else:
            seg = metric.score(stats, segment_level=True)
            records += [{"system": name, "segment": i + 1, "score": float(v)} for i, v in enumerate(seg)]
    return records
