"""WMT relative rankings (RR), as released for WMT12 (Callison-Burch et al. 2012, sec. 3).

``read_wmt12(root, lp)`` reads ``<root>/wmt12.RNK_results.csv`` and the plain
text under ``<root>/plain``: all 3,003 source segments of newstest2012, the
one reference and every system's full output for the language pair, plus
the judges' five-way rankings turned into pairwise :class:`Preference` s.

CSV columns (the release's README): ``srclang,trglang`` (language names),
``srcIndex`` (1-based line in the plain files), ``documentId,segmentId``
(redundant), ``judgeId``, ``systemKNumber,systemKId`` and ``systemKrank``
for K = 1..5; rank 1 is best, ties allowed, ``-1`` = left blank.

Each row becomes a Preference for every pair of its non-blank candidates:
differently ranked pairs give ``better``/``worse``, equally ranked pairs a
``tie=True`` Preference (names in the order shown). A blank candidate is
dropped from its row (counted in ``metadata["blank_ranks"]``).
``judge`` = judgeId and ``block`` = the 1-based line number of the row in the
CSV file. Two WMT12 outputs (``en-es``/``en-fr`` PROMT_DeepHybrid) begin with
a UTF-8 byte-order mark; for these known upstream files the BOM is stripped
and the file is listed in ``metadata["bom_stripped"]``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import InputError, OptionError
from ..options import Option
from ..testbed import Preference, Segment, Testbed
from .plain import check_line_count
from .registry import LP, call_reader, register_format
from .text import BOM, PathLike, parse_int, read_lines

LANGUAGE_CODES = {"Czech": "cs", "English": "en", "French": "fr", "German": "de", "Spanish": "es",
                  "Russian": "ru", "Hindi": "hi", "Finnish": "fi"}
WMT12_INTO_ENGLISH = ("cs-en", "de-en", "es-en", "fr-en")
#: Non-tie preference pairs per into-English pair (data README, all pairs of differently ranked candidates).
WMT12_NON_TIE_PAIRS = {"cs-en": 11021, "de-en": 11934, "es-en": 9796, "fr-en": 11594}

Row = Tuple[int, List[str]]


def _parse_csv(path: PathLike) -> Tuple[Dict[str, int], int, List[Row]]:
    """Header column index, number of candidates per row, and ``(line, fields)`` rows."""
    lines = read_lines(path)
    parsed = list(csv.reader(lines))
    if len(parsed) != len(lines):
        raise InputError("a quoted field spans lines", path, fix="one ranking per line")
    header = parsed[0]
    col = {name: i for i, name in enumerate(header)}
    for need in ("srclang", "trglang", "srcIndex", "judgeId", "system1Id", "system1rank"):
        if need not in col:
            raise InputError(f"header has no column {need!r}", path, 1,
                             fix="use the WMT RNK_results.csv header")
    k = 0
    while f"system{k + 1}Id" in col and f"system{k + 1}rank" in col:
        k += 1
    rows = []
    for lineno, fields in enumerate(parsed[1:], 2):
        if len(fields) != len(header):
            raise InputError(f"expected {len(header)} comma-separated fields, found {len(fields)}",
                             path, lineno, fix="give every column of the header on each row")
        rows.append((lineno, fields))
    return col, k, rows


def rankings_to_preferences(path: PathLike, lp: str, n_segments: int, systems: Sequence[str],
                            parsed: Optional[Tuple[Dict[str, int], int, List[Row]]] = None
                            ) -> Tuple[List[Preference], Dict[str, int]]:
    """The Preferences of language pair ``lp`` in a WMT RR csv, and counts for metadata."""
    col, k, rows = parsed if parsed is not None else _parse_csv(path)
    known = set(systems)
    src_code, _, tgt_code = lp.partition("-")
    prefs: List[Preference] = []
    counts = {"rows": 0, "blank_ranks": 0, "pairs": 0, "ties": 0}
    judged = set()
    c_src, c_tgt, c_idx, c_judge = col["srclang"], col["trglang"], col["srcIndex"], col["judgeId"]
    id_cols = [col[f"system{j + 1}Id"] for j in range(k)]
    rank_cols = [col[f"system{j + 1}rank"] for j in range(k)]
    for lineno, f in rows:
        s, t = LANGUAGE_CODES.get(f[c_src]), LANGUAGE_CODES.get(f[c_tgt])
        if s is None or t is None:
            bad = f[c_src] if s is None else f[c_tgt]
            raise InputError(f"unknown language name {bad!r}", path, lineno,
                             fix="use one of " + ", ".join(LANGUAGE_CODES))
        if s != src_code or t != tgt_code:
            continue
        counts["rows"] += 1
        idx = parse_int(f[c_idx], lineno, path, "srcIndex")
        if not 1 <= idx <= n_segments:
            raise InputError(f"srcIndex {idx} is outside 1..{n_segments}", path, lineno,
                             fix="srcIndex is the 1-based line number in the plain test set")
        seg = idx - 1
        judged.add(seg)
        judge = f[c_judge] or None
        shown = []
        for ic, rc in zip(id_cols, rank_cols):
            name = f[ic]
            rank = parse_int(f[rc], lineno, path, "rank")
            if rank == -1:
                counts["blank_ranks"] += 1
                continue
            if rank < 1:
                raise InputError(f"rank {rank} of {name!r} is neither -1 (blank) nor >= 1", path, lineno,
                                 fix="ranks are 1 (best) .. 5, or -1 for blank")
            if name not in known:
                raise InputError(f"ranking names unknown system {name!r}", path, lineno,
                                 fix=f"every ranked system needs an output file for {lp}")
            if any(name == other for other, _ in shown):
                raise InputError(f"system {name!r} appears twice in one ranking", path, lineno)
            shown.append((name, rank))
        for a in range(len(shown)):
            na, ra = shown[a]
            for b in range(a + 1, len(shown)):
                nb, rb = shown[b]
                if ra < rb:
                    prefs.append(Preference(seg, na, nb, judge, False, lineno))
                elif rb < ra:
                    prefs.append(Preference(seg, nb, na, judge, False, lineno))
                else:
                    prefs.append(Preference(seg, na, nb, judge, True, lineno))
                    counts["ties"] += 1
                    continue
                counts["pairs"] += 1
    counts["judged_segments"] = len(judged)
    return prefs, counts


def _read_upstream(path: Path, bom_stripped: List[str]) -> List[str]:
    with open(path, "rb") as fh:
        if fh.read(len(BOM)) == BOM:
            bom_stripped.append(path.name)
    return read_lines(path, strip_bom=True)


#: The reader's options (``--testbed-option KEY=VALUE``; ``lp`` also ``--lp``), typed.
OPTIONS = {"lp": LP, "testset": Option("newstest2012", "test set name")}


def read_wmt12_folder(folder: Path, **options: Any) -> Testbed:
    """The WMT12 release in ``folder``; option ``lp`` is required."""
    if "lp" not in options:
        raise OptionError("WMT12 needs a language pair: lp='de-en' (or cs-en, es-en, fr-en, en-cs, ...)")
    return call_reader("wmt12", read_wmt12, folder, **options)


@register_format("wmt12", looks="folder with wmt12.RNK_results.csv", what="WMT12 (option lp)", options=OPTIONS,
                 matches=lambda p: (p / "wmt12.RNK_results.csv").is_file(), load=read_wmt12_folder)
def read_wmt12(root: PathLike, lp: str, testset: str = "newstest2012",
               _parsed: Optional[Tuple[Dict[str, int], int, List[Row]]] = None) -> Testbed:
    """One WMT12 language pair (e.g. ``"de-en"``) with its relative rankings as Preferences."""
    base = Path(root)
    src_code, dash, tgt_code = lp.partition("-")
    if not dash or src_code not in LANGUAGE_CODES.values() or tgt_code not in LANGUAGE_CODES.values():
        raise InputError(f"language pair {lp!r} is not like 'de-en'", base,
                         fix="give a pair of two-letter codes such as de-en")
    plain = base / "plain"
    bom_stripped: List[str] = []
    src_path = plain / "sources" / f"{testset}-src.{src_code}"
    src = _read_upstream(src_path, bom_stripped)
    n = len(src)
    anchor = f"the source {src_path}"
    ref_path = plain / "references" / f"{testset}-ref.{tgt_code}"
    ref = _read_upstream(ref_path, bom_stripped)
    check_line_count(ref, n, ref_path, anchor)
    segments = [Segment(id=str(i + 1), source=src[i], references=[ref[i]], ref_ids=["ref"], group=lp)
                for i in range(n)]
    tb = Testbed(name=f"wmt12.{lp}", segments=segments)
    sys_dir = plain / "system-outputs" / testset / lp
    if not sys_dir.is_dir():
        raise InputError("no system outputs for this language pair", sys_dir,
                         fix="check the language pair and the folder layout")
    prefix = f"{testset}.{lp}."
    for p in sorted(sys_dir.iterdir()):
        if not p.name.startswith(prefix) or len(p.name) == len(prefix):
            raise InputError(f"system output name does not start with {prefix!r}", p,
                             fix=f"name outputs {prefix}<system>")
        lines = _read_upstream(p, bom_stripped)
        check_line_count(lines, n, p, anchor)
        tb.candidates[p.name[len(prefix):]] = dict(enumerate(lines))
    csv_path = base / "wmt12.RNK_results.csv"
    prefs, counts = rankings_to_preferences(csv_path, lp, n, tb.systems, _parsed)
    tb.preferences = prefs
    tb.metadata = {"format": "wmt-rr", "testset": testset, "lp": lp, "source_language": lp.split("-")[0],
                   "target_language": lp.split("-")[1], **counts,
                   "bom_stripped": bom_stripped}
    return tb


def read_wmt12_into_english(root: PathLike) -> Dict[str, Testbed]:
    """The four into-English pairs of WMT12 (cs, de, es, fr), reading the csv once."""
    parsed = _parse_csv(Path(root) / "wmt12.RNK_results.csv")
    return {lp: read_wmt12(root, lp, _parsed=parsed) for lp in WMT12_INTO_ENGLISH}
