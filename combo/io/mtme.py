"""The mt-metrics-eval (MTME v2) folder layout (google-research/mt-metrics-eval, README
"File organization and naming convention").

Relative to ``<root>/<testset>`` and a language pair ``<lp>`` such as ``en-de``::

    sources/<lp>.txt                         one source segment per line
    documents/<lp>.docs                      optional: "DOMAIN DOCNAME" per line
    references/<lp>.<ref>.txt                one file per reference (<ref> has no '.' or '-')
    system-outputs/<lp>/<system>.txt         one file per system (references may be copied here)
    human-scores/<lp>.<name>.<level>.score   "SYSTEM SCORE" lines, SCORE may be None (unrated)

A ``seg`` score file holds one line per segment for each system, in segment
order (MTME appends each system's scores in file order); ``sys`` files hold
one line per system. ``<lp>.<level>.score`` (no name) is read as name
``score``. ``doc`` and ``domain`` files are not read into the test bed; their
names are listed in ``metadata["skipped_score_files"]``.

As in MTME, an output file named after a reference that is used as a
reference is not a system (it would match itself); it is dropped, together
with its human scores, and listed in ``metadata["dropped_reference_outputs"]``.
Outputs named after unused references are kept and listed in
``metadata["human_systems"]``. Unlike MTME, text lines are kept exactly
(MTME strips trailing whitespace).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..errors import InputError
from ..testbed import Score, Segment, Testbed
from .plain import check_line_count
from .text import PathLike, parse_float, read_lines, split_fields

LEVELS = ("sys", "domain", "doc", "seg")


def _score_file_parts(path: Path, lp: str):
    """``(name, level)`` of ``<lp>.<name>.<level>.score`` or ``<lp>.<level>.score``."""
    toks = path.name.split(".")
    if len(toks) < 3 or toks[0] != lp or toks[-1] != "score" or toks[-2] not in LEVELS:
        raise InputError("human-score file name is not <lp>.<name>.<level>.score", path,
                         fix="name it like en-de.mqm.seg.score (level: sys, domain, doc or seg)")
    name = ".".join(toks[1:-2]) or "score"
    return name, toks[-2]


def read_mtme(root: PathLike, testset: str, lp: str,
              references: Optional[Sequence[str]] = None) -> Testbed:
    """Read one MTME EvalSet (``testset`` + ``lp``) into a Testbed.

    ``references`` names the references to use (default: all, sorted by
    name); every segment gets them in that order, with ``ref_ids`` set.
    """
    base = Path(root) / testset
    src_path = base / "sources" / f"{lp}.txt"
    src = read_lines(src_path)
    n = len(src)
    anchor = f"the source {src_path}"

    groups = [""] * n
    domains = None
    docs_path = base / "documents" / f"{lp}.docs"
    if docs_path.is_file():
        lines = read_lines(docs_path)
        check_line_count(lines, n, docs_path, anchor)
        domains = []
        for i, line in enumerate(lines):
            f = split_fields(line, i + 1, docs_path, count=2, sep=None,
                             what="whitespace-separated fields (DOMAIN DOCNAME)")
            domains.append(f[0])
            groups[i] = f[1]

    ref_files: Dict[str, Path] = {}
    ref_dir = base / "references"
    for p in sorted(ref_dir.glob(f"{lp}.*.txt")) if ref_dir.is_dir() else []:
        refname = p.name[len(lp) + 1:-len(".txt")]
        if not refname or "." in refname or "-" in refname or refname in ("all", "src"):
            raise InputError(f"invalid reference name {refname!r}", p,
                             fix="reference names may not contain '.' or '-' nor be 'all' or 'src'")
        ref_files[refname] = p
    if not ref_files:
        raise InputError(f"no reference files references/{lp}.<name>.txt", base,
                         fix="add at least one reference file")
    if references is None:
        used = sorted(ref_files)
    else:
        used = list(references)
        for r in used:
            if r not in ref_files:
                raise InputError(f"no reference named {r!r} (found: {', '.join(sorted(ref_files))})",
                                 ref_dir, fix="choose one of the reference names found")
    ref_lines = []
    for r in used:
        lines = read_lines(ref_files[r])
        check_line_count(lines, n, ref_files[r], anchor)
        ref_lines.append(lines)

    segments = [Segment(id=str(i + 1), source=src[i], references=[lines[i] for lines in ref_lines],
                        ref_ids=list(used), group=groups[i]) for i in range(n)]
    tb = Testbed(name=f"{testset}.{lp}", segments=segments)

    sys_dir = base / "system-outputs" / lp
    if not sys_dir.is_dir():
        raise InputError("no system-outputs folder for this language pair", sys_dir,
                         fix=f"put one file per system in system-outputs/{lp}/<system>.txt")
    dropped: List[str] = []
    for p in sorted(sys_dir.glob("*.txt")):
        name = p.name[:-len(".txt")]
        if name in used:
            dropped.append(name)
            continue
        lines = read_lines(p)
        check_line_count(lines, n, p, anchor)
        tb.candidates[name] = dict(enumerate(lines))
    if not tb.candidates:
        raise InputError("no system output files", sys_dir, fix="add system-outputs/<lp>/<system>.txt files")

    unrated: Dict[str, int] = {}
    skipped_files: List[str] = []
    dropped_scores = 0
    score_dir = base / "human-scores"
    for p in sorted(score_dir.glob(f"{lp}.*.score")) if score_dir.is_dir() else []:
        name, level = _score_file_parts(p, lp)
        if level in ("doc", "domain"):
            skipped_files.append(p.name)
            continue
        lines = read_lines(p)
        counts: Dict[str, int] = {}
        table: Dict[str, float] = {}
        for lineno, line in enumerate(lines, 1):
            system, token = split_fields(line, lineno, p, count=2, sep=None,
                                         what="whitespace-separated fields (SYSTEM SCORE)")
            k = counts.get(system, 0)
            counts[system] = k + 1
            if system in dropped:
                dropped_scores += 1
                continue
            if system not in tb.candidates:
                raise InputError(f"score names unknown system {system!r}", p, lineno,
                                 fix=f"every system needs system-outputs/{lp}/{system}.txt")
            if level == "seg" and k >= n:
                raise InputError(f"more than {n} segment scores for system {system!r}", p, lineno,
                                 fix="give exactly one score per segment for each system")
            if level == "sys" and k >= 1:
                raise InputError(f"second system-level score for {system!r}", p, lineno,
                                 fix="give one score per system")
            if token == "None":
                unrated[name] = unrated.get(name, 0) + 1
                continue
            value = parse_float(token, lineno, p, f"{name} score")
            if level == "seg":
                tb.scores.append(Score(system, k, value, None, name))
            else:
                table[system] = value
        if level == "seg":
            for system, k in counts.items():
                if system not in dropped and k != n:
                    raise InputError(f"system {system!r} has {k} segment scores, expected {n}", p,
                                     len(lines) + 1, fix="give exactly one score per segment for each system")
        else:
            tb.system_scores[name] = table
    tb.metadata = {
        "format": "mt-metrics-eval",
        "testset": testset,
        "lp": lp,
        "source_language": lp.split("-")[0],
        "target_language": lp.split("-")[-1],
        "references": list(used),
        "human_systems": sorted(s for s in tb.candidates if s in ref_files),
        "dropped_reference_outputs": dropped,
        "dropped_reference_output_scores": dropped_scores,
        "unrated": unrated,
        "skipped_score_files": skipped_files,
    }
    if domains is not None:
        tb.metadata["domains"] = domains
    return tb
