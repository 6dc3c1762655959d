"""Plain-text test beds: one segment per line in aligned files.

``read_plain`` takes a source file, one or more reference files, system
output files and, optionally, one reference-weight file per reference (one
float in [-1, 1] per line, for ΔBLEU, Galley et al. 2015) and a segment-score
file. Every file must have exactly one line per source segment. Segment ids
are the 1-based line numbers ("1", "2", ...).

The segment-score file has no header; each line is
``system<TAB>line<TAB>score[<TAB>rater[<TAB>aspect]]`` where ``line`` is the
1-based segment line number (aspect defaults to ``"score"``).

``read_plain_dir`` reads the same data from one folder (see
:data:`PLAIN_LAYOUT`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Union

from ..errors import InputError
from ..options import Option
from ..progress import plural
from ..testbed import Score, Segment, Testbed
from .registry import register_format
from .text import PathLike, parse_float, parse_int, read_lines, split_fields

PLAIN_LAYOUT = """\
<folder>/source.txt              optional: one source segment per line
<folder>/references/<name>.txt   one or more references, <name> becomes the ref id
<folder>/weights/<name>.txt      optional: weights of reference <name>, one float in [-1, 1] per line
<folder>/systems/<name>.txt      one file per system, <name> becomes the system name
<folder>/scores.tsv              optional: system<TAB>line<TAB>score[<TAB>rater[<TAB>aspect]]
"""

Paths = Union[PathLike, Sequence[PathLike]]


def names_from_paths(paths: Sequence[PathLike]) -> List[str]:
    """Names for files: the file name without ``.txt`` and without the prefix all names share.

    The shared prefix is cut at its last dot, so WMT's
    ``newstest2012.de-en.onlineA`` and ``newstest2012.de-en.onlineB`` become
    ``onlineA`` and ``onlineB``; a single file keeps its whole name.
    """
    stems = [os.path.basename(os.fspath(p)) for p in paths]
    stems = [s[:-4] if s.endswith(".txt") and len(s) > 4 else s for s in stems]
    if len(stems) < 2:
        return stems
    prefix = os.path.commonprefix(stems)
    cut = prefix.rfind(".") + 1
    if cut and all(len(s) > cut for s in stems):
        stems = [s[cut:] for s in stems]
    return stems


def _as_list(paths: Optional[Paths]) -> List[PathLike]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    return list(paths)


def check_line_count(lines: Sequence[str], expected: int, path: PathLike, against: str) -> None:
    """A file must have ``expected`` lines; the error names the first line without a partner."""
    if len(lines) != expected:
        raise InputError(
            f"has {len(lines)} {plural('line', len(lines))} but {against} has {expected}", path, min(len(lines), expected) + 1,
            fix="give exactly one line per segment (check for missing or extra lines)")


def read_weights(path: PathLike, expected: int, against: str) -> List[float]:
    """One reference weight in [-1, 1] per line."""
    lines = read_lines(path)
    check_line_count(lines, expected, path, against)
    return [parse_float(tok, i, path, "reference weight", -1.0, 1.0) for i, tok in enumerate(lines, 1)]


def read_segment_scores(path: PathLike, tb: Testbed) -> List[Score]:
    """Read ``system<TAB>line<TAB>score[<TAB>rater[<TAB>aspect]]`` lines into Scores of ``tb``."""
    lines = read_lines(path)
    n = len(tb.segments)
    out = []
    for lineno, line in enumerate(lines, 1):
        f = split_fields(line, lineno, path, min_count=3)
        if len(f) > 5:
            raise InputError(f"expected 3 to 5 tab-separated fields, found {len(f)}", path, lineno,
                             fix="write system<TAB>line<TAB>score[<TAB>rater[<TAB>aspect]]")
        system = f[0]
        if system not in tb.candidates:
            raise InputError(f"judgment names unknown system {system!r}", path, lineno,
                             fix="use the name of a system file")
        seg = parse_int(f[1], lineno, path, "segment line number")
        if not 1 <= seg <= n:
            raise InputError(f"judgment names segment line {seg}, outside 1..{n}", path, lineno,
                             fix="give the 1-based line number of the judged segment")
        if seg - 1 not in tb.candidates[system]:
            raise InputError(f"system {system!r} has no candidate on line {seg}", path, lineno)
        value = parse_float(f[2], lineno, path)
        rater = f[3] if len(f) > 3 and f[3] != "" else None
        aspect = f[4] if len(f) > 4 and f[4] != "" else "score"
        out.append(Score(system, seg - 1, value, rater, aspect))
    return out


def read_plain(source: Optional[PathLike] = None, references: Optional[Paths] = None,
               systems: Optional[Union[Mapping[str, PathLike], Sequence[PathLike]]] = None,
               weights: Optional[Paths] = None, scores: Optional[PathLike] = None,
               name: Optional[str] = None, group: str = "") -> Testbed:
    """A test bed from aligned plain-text files (one segment per line).

    ``systems`` is ``{name: path}`` or a list of paths named by
    :func:`names_from_paths`. ``weights`` holds one file per reference file, in
    the same order. The number of segments is the number of source lines (or
    of the first reference's lines when no source is given).
    """
    ref_paths = _as_list(references)
    weight_paths = _as_list(weights)
    if isinstance(systems, Mapping):
        sys_items = list(systems.items())
    else:
        sys_paths = _as_list(systems)
        sys_items = list(zip(names_from_paths(sys_paths), sys_paths))
    if source is None and not ref_paths:
        raise InputError("no source and no reference file given", None,
                         fix="give a source file or at least one reference file")
    if weight_paths and len(weight_paths) != len(ref_paths):
        raise InputError(f"{len(weight_paths)} weight files for {len(ref_paths)} reference files",
                         weight_paths[0], fix="give one weight file per reference file, in the same order")

    if source is not None:
        src_lines = read_lines(source)
        n, anchor = len(src_lines), f"the source {os.fspath(source)}"
    else:
        src_lines = None
    ref_lines = []
    for p in ref_paths:
        lines = read_lines(p)
        if src_lines is None and not ref_lines:
            n, anchor = len(lines), f"the reference {os.fspath(p)}"
        check_line_count(lines, n, p, anchor)
        ref_lines.append(lines)
    ref_weights = [read_weights(p, n, anchor) for p in weight_paths]
    ref_ids = names_from_paths(ref_paths) if ref_paths else None
    if ref_ids is not None and len(set(ref_ids)) != len(ref_ids):
        ref_ids = [os.fspath(p) for p in ref_paths]

    segments = []
    for i in range(n):
        segments.append(Segment(
            id=str(i + 1),
            source=src_lines[i] if src_lines is not None else "",
            references=[lines[i] for lines in ref_lines],
            weights=[w[i] for w in ref_weights] if ref_weights else None,
            ref_ids=list(ref_ids) if ref_ids is not None else None,
            group=group))
    tb = Testbed(name=name or (Path(source).stem if source is not None else "plain"), segments=segments)
    for sysname, p in sys_items:
        if sysname in tb.candidates:
            raise InputError(f"duplicate system name {sysname!r}", p,
                             fix="give each system a distinct name (or pass systems as {name: path})")
        lines = read_lines(p)
        check_line_count(lines, n, p, anchor)
        tb.candidates[sysname] = dict(enumerate(lines))
    if scores is not None:
        tb.scores = read_segment_scores(scores, tb)
    return tb


#: The options of a folder in the :data:`PLAIN_LAYOUT` (``--testbed-option KEY=VALUE``), typed.
OPTIONS = {"name": Option(None, "test-bed name (default: the folder name)", type="str")}


@register_format("plain", looks="folder with systems/ and references/", what="plain layout", options=OPTIONS,
                 matches=lambda p: (p / "systems").is_dir() and (p / "references").is_dir())
def read_plain_dir(folder: PathLike, name: Optional[str] = None) -> Testbed:
    """A test bed from a folder in the :data:`PLAIN_LAYOUT`."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError("not a folder", root, fix="give a folder laid out as:\n" + PLAIN_LAYOUT)
    refs = sorted((root / "references").glob("*.txt")) if (root / "references").is_dir() else []
    syss = sorted((root / "systems").glob("*.txt")) if (root / "systems").is_dir() else []
    if not refs:
        raise InputError("no references/*.txt files", root, fix="lay the folder out as:\n" + PLAIN_LAYOUT)
    if not syss:
        raise InputError("no systems/*.txt files", root, fix="lay the folder out as:\n" + PLAIN_LAYOUT)
    wdir = root / "weights"
    weights = None
    if wdir.is_dir():
        weights = [wdir / r.name for r in refs]
        for w, r in zip(weights, refs):
            if not w.is_file():
                raise InputError(f"reference {r.name} has no weight file", w,
                                 fix="give a weight file for every reference, or none")
    source = root / "source.txt"
    scores = root / "scores.tsv"
    tb = read_plain(source if source.is_file() else None, refs, {p.stem: p for p in syss}, weights,
                    scores if scores.is_file() else None, name=name or root.name)
    names = [r.stem for r in refs]
    for seg in tb.segments:
        seg.ref_ids = list(names)
    return tb
