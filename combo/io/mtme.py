"""The mt-metrics-eval (MTME v2) folder layout (google-research/mt-metrics-eval, README
"File organization and naming convention").

Relative to ``<root>/<testset>`` and a language pair ``<lp>`` such as ``en-de``::

    sources/<lp>.txt                         one source segment per line
    documents/<lp>.docs                      optional: "DOMAIN DOCNAME" per line
    references/<lp>.<ref>.txt                one file per reference (<ref> has no '.' or '-')
    system-outputs/<lp>/<system>.txt         one file per system (references may be copied here)
    human-scores/<lp>.<name>.<level>.score   "SYSTEM SCORE" lines, SCORE may be None (unrated)
    metric-scores/<lp>/<metric>-<ref>.<level>.score   the same, for automatic metrics
                                             (<ref> is a reference name, or ``src`` when reference-free)

A ``seg`` score file holds one line per segment for each system, in segment
order (MTME appends each system's scores in file order); ``sys`` files hold
one line per system. ``<lp>.<level>.score`` (no name) is read as name
``score``. ``doc`` and ``domain`` files are not read into the test bed; their
names are listed in ``metadata["skipped_score_files"]``. Metric scores are
not read here: ``-m mtme:NAME`` (:mod:`combo.metrics.external`) reads them.

The references used default to the test set's standard reference for the
language pair, as mt-metrics-eval's ``meta_info`` defines it
(:data:`STANDARD_REFERENCES`; WMT23: en-de refA, zh-en refA, he-en refB). A
test set not in that table needs ``references=`` when it has several
reference files; ``references="refA,synthetic_ref"`` (or a list) gives
several, ``references="all"`` every one.

As in MTME, an output file named after a reference that is used as a
reference is not a system (it would match itself); it is dropped, together
with its human scores, and listed in ``metadata["dropped_reference_outputs"]``.
Outputs named after unused references are human translations: they are kept
as candidates, listed in ``metadata["human_systems"]``, and left out of
system-level meta-evaluation by default, as mt-metrics-eval does. Unlike
MTME, text lines are kept exactly (MTME strips trailing whitespace).

Upstream quirk accepted and counted: a system output that starts with a UTF-8
byte-order mark (WMT23 ``system-outputs/en-de/AIRC.txt``); the mark is
removed and the file listed in ``metadata["bom_stripped"]`` (MTME reads it as
part of the first line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Container, Dict, List, Optional, Sequence, Tuple, Union

from ..errors import InputError, OptionError
from ..options import Option, did_you_mean
from ..testbed import Score, Segment, Testbed
from .plain import check_line_count
from .registry import LP, call_reader, register_format
from .text import BOM, PathLike, parse_float, read_lines, split_fields

LEVELS = ("sys", "domain", "doc", "seg")

#: Standard reference of each (test set, language pair), from mt-metrics-eval's ``meta_info``.
STANDARD_REFERENCES: Dict[str, Dict[str, str]] = {
    "wmt23": {"en-de": "refA", "zh-en": "refA", "he-en": "refB"},
    "wmt22": {"en-de": "refA", "en-ru": "refA", "zh-en": "refA", "cs-en": "refB", "en-cs": "refB",
              **{lp: "refA" for lp in ("cs-uk", "de-en", "de-fr", "en-hr", "en-ja", "en-liv", "en-uk", "en-zh",
                                       "fr-de", "ja-en", "liv-en", "ru-en", "ru-sah", "sah-ru", "uk-cs", "uk-en")}},
    "wmt21.news": {"en-de": "refC", "en-ru": "refA", "zh-en": "refB",
                   **{lp: "refA" for lp in ("en-cs", "en-ha", "en-is", "en-ja", "en-zh", "cs-en", "de-en", "de-fr",
                                            "fr-de", "ha-en", "is-en", "ja-en", "ru-en")}},
    "wmt21.tedtalks": {"en-de": "refA", "en-ru": "refA", "zh-en": "refB"},
}
#: Standard human judgments (the ``<name>`` of ``human-scores`` files) of a test set, as in ``meta_info``.
STANDARD_GOLD: Dict[str, Dict[str, str]] = {
    "wmt23": {"en-de": "mqm", "zh-en": "mqm", "he-en": "mqm"},
    "wmt22": {"en-de": "mqm", "en-ru": "mqm", "zh-en": "mqm"},
    "wmt21.news": {"en-de": "mqm", "en-ru": "mqm", "zh-en": "mqm"},
    "wmt21.tedtalks": {"en-de": "mqm", "en-ru": "mqm", "zh-en": "mqm"},
}


def standard_reference(testset: str, lp: str) -> Optional[str]:
    """The standard reference of ``testset`` and ``lp`` (``None``: not known here)."""
    return STANDARD_REFERENCES.get(testset, {}).get(lp)


def _score_file_parts(path: Path, lp: str):
    """``(name, level)`` of ``<lp>.<name>.<level>.score`` or ``<lp>.<level>.score``."""
    toks = path.name.split(".")
    if len(toks) < 3 or toks[0] != lp or toks[-1] != "score" or toks[-2] not in LEVELS:
        raise InputError("human-score file name is not <lp>.<name>.<level>.score", path,
                         fix="name it like en-de.mqm.seg.score (level: sys, domain, doc or seg)")
    name = ".".join(toks[1:-2]) or "score"
    return name, toks[-2]


ScoreColumn = Union[List[Optional[float]], Optional[float]]


def read_score_file(path: PathLike, level: str, n_segments: int, what: str = "score",
                    known: Optional[Container[str]] = None, unknown_fix: str = "",
                    line_of: Optional[Dict[str, int]] = None) -> Dict[str, ScoreColumn]:
    """Parse an MTME ``SYSTEM SCORE`` file: ``{system: scores}``; ``None`` where a line says None.

    ``level="seg"``: each system's lines, in segment order, give a list of
    ``n_segments`` scores; ``"sys"``: one score per system. A non-number
    (:func:`~combo.io.text.parse_float`: also NaN, infinity, a number beyond the float range such as
    ``1e400``), a count other than ``n_segments``, a second system score or (with ``known``) a
    system not in ``known`` is an InputError naming the file and line. ``line_of``, when given, is
    filled with each system's first line.
    """
    lines = read_lines(path)
    out: Dict[str, ScoreColumn] = {}
    for lineno, line in enumerate(lines, 1):
        system, token = split_fields(line, lineno, path, count=2, sep=None,
                                     what="whitespace-separated fields (SYSTEM SCORE)")
        if known is not None and system not in known:
            raise InputError(f"score names unknown system {system!r}", path, lineno, fix=unknown_fix)
        value = None if token == "None" else parse_float(token, lineno, path, what, missing="None")
        if line_of is not None:
            line_of.setdefault(system, lineno)
        if level == "seg":
            column = out.setdefault(system, [])
            if len(column) >= n_segments:
                raise InputError(f"more than {n_segments} segment scores for system {system!r}", path, lineno,
                                 fix="give exactly one score per segment for each system")
            column.append(value)
        else:
            if system in out:
                raise InputError(f"second system-level score for {system!r}", path, lineno,
                                 fix="give one score per system")
            out[system] = value
    if level == "seg":
        for system, column in out.items():
            if len(column) != n_segments:
                raise InputError(f"system {system!r} has {len(column)} segment scores, expected {n_segments}",
                                 path, len(lines) + 1, fix="give exactly one score per segment for each system")
    return out


def _references_used(references, ref_files: Dict[str, Path], ref_dir: Path, testset: str, lp: str) -> List[str]:
    """The names of the references to use: those ``references`` names (a list, comma-separated, or "all"), else
    the standard one, else the only one."""
    if isinstance(references, str):
        references = [r.strip() for r in references.split(",") if r.strip()]
    if references is not None and list(references) == ["all"]:
        return sorted(ref_files)
    if references is None:
        std = standard_reference(testset, lp)
        if std is not None and std in ref_files:
            return [std]
        if len(ref_files) == 1:
            return list(ref_files)
        found = ", ".join(sorted(ref_files))
        raise InputError(f"{testset} {lp} has several references ({found}) and no standard one is known here",
                         ref_dir, fix="choose with --testbed-option references=NAME (or NAME,NAME or all)")
    used = list(references)
    if not used:
        raise InputError("references= names no reference", ref_dir, fix="give reference names, e.g. references=refA")
    for r in used:
        if r not in ref_files:
            raise InputError(f"no reference named {r!r} (found: {', '.join(sorted(ref_files))})",
                             ref_dir, fix="choose one of the reference names found")
    if len(set(used)) != len(used):
        raise InputError(f"references= names a reference twice ({', '.join(used)})", ref_dir,
                         fix="name each reference once")
    return used


def _read_output(path: Path, bom_stripped: List[str]) -> List[str]:
    """A system output, accepting the upstream byte-order mark (counted in ``bom_stripped``)."""
    with open(path, "rb") as fh:
        if fh.read(len(BOM)) == BOM:
            bom_stripped.append(path.name)
    return read_lines(path, strip_bom=True)


#: The reader's options (``--testbed-option KEY=VALUE``; ``lp`` also ``--lp``), typed.
OPTIONS = {"lp": LP, "references": Option(None, "references to use, comma- or +-separated (default: the "
                                                "standard one)", type="list")}


def read_mtme_folder(folder: Path, lp: Any = None, **options: Any) -> Testbed:
    """The test set in ``folder`` (``.../mt-metrics-eval-v2/wmt22``): its one language pair, or ``lp``."""
    pairs = sorted(p.name[:-4] for p in (folder / "sources").glob("*.txt"))
    if lp is None:
        if len(pairs) != 1:
            example = pairs[0] if pairs else "xx-yy"
            raise OptionError(f"{folder} holds {len(pairs)} language pairs ({', '.join(pairs)}); choose one "
                              f"with --lp {example} (in Python: lp={example!r})")
        lp = pairs[0]
    lp = LP.parse("mtme test bed", "lp", lp)
    if pairs and lp not in pairs:
        raise OptionError(f"{folder} holds no language pair {lp} (it holds {', '.join(pairs)})"
                          + (f"; {did_you_mean(lp, pairs)}" if did_you_mean(lp, pairs) else ""))
    return call_reader("mtme", read_mtme, folder.parent, folder.name, **options, lp=lp)


@register_format("mtme", looks="folder with sources/ and system-outputs/", what="mt-metrics-eval test set (option lp)",
                 matches=lambda p: (p / "sources").is_dir() and (p / "system-outputs").is_dir(), options=OPTIONS,
                 load=read_mtme_folder)
def read_mtme(root: PathLike, testset: str, lp: str,
              references: Union[None, str, Sequence[str]] = None) -> Testbed:
    """Read one MTME EvalSet (``testset`` + ``lp``) into a Testbed.

    ``references`` names the references to use (default: the standard
    reference, see the module doc); every segment gets them in that order,
    with ``ref_ids`` set.
    """
    base = Path(root) / testset
    src_path = base / "sources" / f"{lp}.txt"
    src = read_lines(src_path)
    n = len(src)
    anchor = f"the source {src_path}"
    groups, domains = _read_documents(base / "documents" / f"{lp}.docs", n, anchor)
    ref_dir = base / "references"
    ref_files = _reference_files(base, ref_dir, lp)
    used = _references_used(references, ref_files, ref_dir, testset, lp)
    ref_lines = []
    for r in used:
        lines = read_lines(ref_files[r])
        check_line_count(lines, n, ref_files[r], anchor)
        ref_lines.append(lines)

    segments = [Segment(id=str(i + 1), source=src[i], references=[lines[i] for lines in ref_lines],
                        ref_ids=list(used), group=groups[i]) for i in range(n)]
    tb = Testbed(name=f"{testset}.{lp}", segments=segments)
    dropped, bom_stripped = _read_outputs(tb, base / "system-outputs" / lp, lp, used, anchor)
    unrated, skipped_files, dropped_scores = _read_human_scores(tb, base / "human-scores", lp, dropped)
    tb.metadata = {
        "format": "mt-metrics-eval",
        "root": str(Path(root).resolve()),
        "testset": testset,
        "lp": lp,
        "lines": n,  # segments in the set's files; segment id k is line k (a subset keeps the ids)
        "source_language": lp.split("-")[0],
        "target_language": lp.split("-")[-1],
        "references": list(used),
        "standard_reference": standard_reference(testset, lp),
        "human_systems": sorted(s for s in tb.candidates if s in ref_files),
        "dropped_reference_outputs": dropped,
        "dropped_reference_output_scores": dropped_scores,
        "unrated": unrated,
        "skipped_score_files": skipped_files,
        "bom_stripped": bom_stripped,
    }
    gold = STANDARD_GOLD.get(testset, {}).get(lp)
    if gold is not None and any(s.aspect == gold for s in tb.scores):
        tb.metadata["default_aspect"] = gold
    if domains is not None:
        tb.metadata["domains"] = domains
    return tb


def _read_documents(path: Path, n: int, anchor: str) -> Tuple[List[str], Optional[List[str]]]:
    """Each line's document (the segment's ``group``) and domain from the ``.docs`` file (``DOMAIN DOCNAME``
    lines); without that file, no group and no domains (None)."""
    groups = [""] * n
    if not path.is_file():
        return groups, None
    lines = read_lines(path)
    check_line_count(lines, n, path, anchor)
    domains = []
    for i, line in enumerate(lines):
        f = split_fields(line, i + 1, path, count=2, sep=None, what="whitespace-separated fields (DOMAIN DOCNAME)")
        domains.append(f[0])
        groups[i] = f[1]
    return groups, domains


def _reference_files(base: Path, ref_dir: Path, lp: str) -> Dict[str, Path]:
    """``{reference name: file}`` of the files ``references/<lp>.<name>.txt`` (names checked; at least one)."""
    ref_files: Dict[str, Path] = {}
    for p in sorted(ref_dir.glob(f"{lp}.*.txt")) if ref_dir.is_dir() else []:
        refname = p.name[len(lp) + 1:-len(".txt")]
        if not refname or "." in refname or "-" in refname or refname in ("all", "src"):
            raise InputError(f"invalid reference name {refname!r}", p,
                             fix="reference names may not contain '.' or '-' nor be 'all' or 'src'")
        ref_files[refname] = p
    if not ref_files:
        raise InputError(f"no reference files references/{lp}.<name>.txt", base,
                         fix="add at least one reference file")
    return ref_files


def _read_outputs(tb: Testbed, sys_dir: Path, lp: str, used: Sequence[str], anchor: str
                  ) -> Tuple[List[str], List[str]]:
    """Add each system's output in ``sys_dir`` to ``tb`` as its candidates, leaving out the outputs named after a
    used reference; return those left out and the files whose byte-order mark was stripped."""
    if not sys_dir.is_dir():
        raise InputError("no system-outputs folder for this language pair", sys_dir,
                         fix=f"put one file per system in system-outputs/{lp}/<system>.txt")
    n = len(tb.segments)
    dropped: List[str] = []
    bom_stripped: List[str] = []
    for p in sorted(sys_dir.glob("*.txt")):
        name = p.name[:-len(".txt")]
        if name in used:
            dropped.append(name)
            continue
        lines = _read_output(p, bom_stripped)
        check_line_count(lines, n, p, anchor)
        tb.candidates[name] = dict(enumerate(lines))
    if not tb.candidates:
        raise InputError("no system output files", sys_dir, fix="add system-outputs/<lp>/<system>.txt files")
    return dropped, bom_stripped


def _read_human_scores(tb: Testbed, score_dir: Path, lp: str, dropped: Sequence[str]
                       ) -> Tuple[Dict[str, int], List[str], int]:
    """Add the segment and system human scores of ``score_dir`` to ``tb``, one aspect per score file (document
    and domain files skipped); return the unrated cells per aspect, the skipped files and the scores of the
    dropped reference outputs."""
    n = len(tb.segments)
    unrated: Dict[str, int] = {}
    skipped_files: List[str] = []
    dropped_scores = 0
    for p in sorted(score_dir.glob(f"{lp}.*.score")) if score_dir.is_dir() else []:
        name, level = _score_file_parts(p, lp)
        if level in ("doc", "domain"):
            skipped_files.append(p.name)
            continue
        table = read_score_file(p, level, n, f"{name} score", known=set(dropped) | set(tb.candidates),
                                unknown_fix=f"every system needs system-outputs/{lp}/<system>.txt")
        sys_table: Dict[str, float] = {}
        for system, column in table.items():
            values = column if level == "seg" else [column]
            if system in dropped:
                dropped_scores += len(values)
                continue
            unrated[name] = unrated.get(name, 0) + sum(v is None for v in values)
            if level == "seg":
                tb.scores.extend(Score(system, k, v, None, name) for k, v in enumerate(values) if v is not None)
            elif column is not None:
                sys_table[system] = column
        if level == "sys":
            tb.system_scores[name] = sys_table
    return {k: v for k, v in unrated.items() if v}, skipped_files, dropped_scores
