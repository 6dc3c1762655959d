"""Scores a user already holds, as metrics: ``mtme:NAME`` and ``scores:FILE``.

Neural metrics (COMET, XCOMET, MetricX, BLEURT, CometKiwi, GEMBA-MQM, ...)
are computed elsewhere; their segment scores enter combo as metrics, so that
score tables, ULC, search, ``combo train``, ``combo evaluate`` and tuned model
files combine them with the metrics combo computes.

``mtme:NAME`` reads a test bed in mt-metrics-eval's layout
(:mod:`combo.io.mtme`): segment scores from
``metric-scores/<lp>/NAME-<ref>.seg.score``, where ``<ref>`` is the test bed's
(first) reference, or ``NAME-src.seg.score`` for a reference-free metric (a
metric with files for other references only is refused: its ``-src`` file is
another metric); system scores from the matching ``.sys.score`` file, which
must then give every system that has segment scores (else every system score
is the mean of its segment scores: never both definitions in one column).
``scores:FILE`` reads any test bed's scores from a TSV file
(``SYSTEM<TAB>SEGMENT-ID<TAB>SCORE`` lines), a JSON file
(``{"SYSTEM": {"SEGMENT-ID": score, ...}, ...}``) or the JSON that ``comet-score --to_json`` writes
(``{hypothesis file: [{"src", "mt", "ref", "COMET"}, ...]}``, each ``mt`` checked against the test bed's
candidate); system scores are the
mean of the system's segment scores. ``scores:file=F,higher_is_better=no``
declares a lower-is-better score.

The metric's options name the scores (the metric name, or the file), so a
tuned model trained on one language pair applies to another pair's files,
whatever its reference is called. The signature in a score table adds the
file read and its SHA-256.

Missing scores: ``None`` (mt-metrics-eval, TSV) or ``null`` (JSON, TSV) marks
a candidate without a score (an empty field is refused, as is any number that
is not a finite float: NaN, infinity, ``1e400``). A missing score becomes NaN
in the score table, is counted in the table's metadata (``missing_scores``),
and every statistic, combination and training set leaves that candidate out
for any metric set that includes the metric; a file without any score for the
test bed is refused, naming the metric and the file. QUEEN and KING need reference-against-reference similarities
that such files do not hold, so they refuse these metrics.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError, OptionError
from ..options import did_you_mean
from .base import Candidates, Metric, Option
from .registry import register

PAIR_REFUSAL = ("scores read from a file rate candidates only; QUEEN and KING also need "
                "reference-against-reference similarities")


class ExternalScores(Metric):
    """Base of metrics whose scores are read per candidate (system, segment), never computed from text."""

    family = "external"
    layers = ()
    locality = "candidate"
    value_range = (-math.inf, math.inf)

    def analyse(self, texts: Sequence[str]):
        raise OptionError(f"{self.name}: {self.describe()} are read per candidate of a test bed; "
                          "score them with combo.score_testbed (or --testbed), not from bare texts")

    def statistics(self, *args, **kwargs):
        return self.analyse([])

    def pairwise_scores(self, texts, left, right, analysis=None):
        raise OptionError(f"{self.describe()}: {PAIR_REFUSAL}; leave it out of --criterion king/orange "
                          "and --scheme queen")

    def describe(self) -> str:
        raise NotImplementedError

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        stats = np.asarray(stats, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return stats[..., 0] / stats[..., 1]

    # -- reading -----------------------------------------------------------------------
    def read(self, testbed) -> Tuple[Dict[str, List[Optional[float]]], Optional[Dict[str, float]], Path]:
        """``({system: score per segment index}, {system: system score} or None, file read)``."""
        raise NotImplementedError

    def candidate_scores(self, cands: Candidates) -> Tuple[np.ndarray, np.ndarray, str]:
        seg_table, sys_table, path = self.read(cands.testbed)
        seg = np.empty(len(cands.row_system))
        for k, (s, i) in enumerate(zip(cands.row_system, cands.row_segment)):
            v = seg_table[cands.systems[s]][i]
            seg[k] = np.nan if v is None else v
        if len(seg) and np.isnan(seg).all():
            raise InputError(f"{self.describe()}: no candidate of test bed {cands.testbed.name!r} has a score "
                             f"in this file (all {len(seg)} are missing)", path,
                             fix="give the scores of the test bed's candidates, or leave this metric out")
        sysv = np.full(len(cands.systems), np.nan)
        for s, name in enumerate(cands.systems):
            given = None if sys_table is None else sys_table.get(name)
            if given is not None:
                sysv[s] = given
            else:
                vals = seg[cands.row_system == s]
                vals = vals[np.isfinite(vals)]
                sysv[s] = vals.mean() if len(vals) else np.nan
        return seg, sysv, self.bound_signature(path)

    def bound_signature(self, path: Path) -> str:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return f"{self.signature}|read:{path.name}|sha256:{digest}"


def without_inputs(signature: str) -> str:
    """A signature without what :meth:`ExternalScores.bound_signature` (or a tuned model using such
    scores) adds for the files read: what a model file records and compares."""
    for marker in ("|read:", "|inputs:"):
        if marker in signature:
            signature = signature[:signature.index(marker)]
    return signature


def _missing_systems(table: Dict[str, object], systems: Sequence[str], path: Path) -> None:
    for name in systems:
        if name not in table:
            raise InputError(f"system {name!r} of the test bed has no scores in this file", path,
                             fix="score every system of the test bed, or leave that system out")


@register("mtme")
class MtmeScores(ExternalScores):
    """Segment and system scores of a metric in an mt-metrics-eval test bed's ``metric-scores/`` folder."""

    citation = "scores shipped with an mt-metrics-eval test set (Freitag et al. 2023, WMT23 metrics task)"
    options = {
        "metric": Option(None, "metric name as in metric-scores/<lp>/<metric>-<ref>.seg.score, e.g. XCOMET-XL"),
    }

    def describe(self) -> str:
        return f"mtme:{self.params['metric']}"

    def files(self, testbed) -> Tuple[Path, Path]:
        """The ``.seg.score`` file for the test bed (its reference, else ``-src``) and its ``.sys.score``."""
        name = self.params["metric"]
        if not name:
            raise OptionError("mtme: name the metric, e.g. -m mtme:XCOMET-XL")
        md = testbed.metadata
        if md.get("format") != "mt-metrics-eval" or not md.get("root"):
            raise OptionError(f"mtme:{name} reads the metric-scores of an mt-metrics-eval test bed; test bed "
                              f"{testbed.name!r} is not one (read from {md.get('format', 'another format')}). "
                              "Fix: give its scores with -m scores:FILE")
        folder = Path(md["root"]) / md["testset"] / "metric-scores" / md["lp"]
        refs = md.get("references") or []
        if name.rsplit("-", 1)[-1] in set(refs) | {"src"} and (folder / f"{name}.seg.score").is_file():
            return folder / f"{name}.seg.score", folder / f"{name}.sys.score"  # the file's full base name was given
        if refs and (folder / f"{name}-{refs[0]}.seg.score").is_file():
            return folder / f"{name}-{refs[0]}.seg.score", folder / f"{name}-{refs[0]}.sys.score"
        listed = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
        scored_against = [f[len(name) + 1:-len(".seg.score")] for f in listed
                          if f.startswith(f"{name}-") and f.endswith(".seg.score")]
        scored_against = [r for r in scored_against if r and "-" not in r and "." not in r and r != "src"]
        has_src = (folder / f"{name}-src.seg.score").is_file()
        if refs and scored_against:
            # A reference-based metric, not scored against this test bed's reference: its -src file (if any)
            # is another, reference-free metric and is not read in its place.
            found = [f"{name}-{r}.seg.score" for r in scored_against] + ([f"{name}-src.seg.score"] if has_src else [])
            fix = f"choose a reference it was scored against: --testbed-option references={scored_against[0]}"
            if has_src:
                fix += f"; or read the reference-free scores on purpose: -m mtme:{name}-src"
            src_note = (f"; {name}-src is reference-free, another metric, and is not read in its place"
                        if has_src else "")
            raise InputError(f"mtme:{name}: no such file, so no scores against the test bed's reference {refs[0]!r} "
                             f"(found {', '.join(found)}{src_note})", folder / f"{name}-{refs[0]}.seg.score", fix=fix)
        if has_src:
            return folder / f"{name}-src.seg.score", folder / f"{name}-src.sys.score"
        tried = ([f"{name}-{refs[0]}"] if refs else []) + [f"{name}-src"]
        known = sorted({p.name[:-len(".seg.score")].rsplit("-", 1)[0] for p in folder.glob("*.seg.score")}
                       | {p.name[:-len(".seg.score")] for p in folder.glob("*-src.seg.score")})
        hint = did_you_mean(name, known)
        raise InputError(f"mtme:{name}: no {' or '.join(t + '.seg.score' for t in tried)}", folder,
                         fix=hint or f"name one of the {len(known)} metrics scored there: "
                                     f"{', '.join(known[:10])}{', ...' if len(known) > 10 else ''}")

    def read(self, testbed):
        from ..io.mtme import read_score_file

        seg_path, sys_path = self.files(testbed)
        lines = int(testbed.metadata.get("lines") or len(testbed.segments))
        seg = read_score_file(seg_path, "seg", lines, f"{self.params['metric']} score")
        _missing_systems(seg, testbed.systems, seg_path)
        try:  # segment id k is line k of the set's files; a subset of the test bed keeps the ids
            at = [int(s.id) - 1 for s in testbed.segments]
        except ValueError:
            raise InputError(f"test bed {testbed.name!r} has segment ids that are not line numbers of the "
                             "mt-metrics-eval files", seg_path, fix="read the test bed with combo.load_testbed") from None
        if at != list(range(lines)):
            seg = {system: [column[k] for k in at] for system, column in seg.items()}
        sys_table = None
        if sys_path.is_file() and len(at) == lines:  # system scores of the whole set only
            line_of: Dict[str, int] = {}
            sys_table = read_score_file(sys_path, "sys", lines, f"{self.params['metric']} score", line_of=line_of)
            self._complete_system_scores(sys_table, line_of, seg, testbed.systems, sys_path)
        return seg, sys_table, seg_path

    def _complete_system_scores(self, sys_table, line_of, seg, systems, sys_path: Path) -> None:
        """Every system with segment scores needs its score in ``sys_path``: else its system score would
        be the mean of its segment scores while the others' are the file's corpus-level scores, two
        definitions in one column (a system without any segment score may lack one: it has none)."""
        if all(sys_table.get(name) is None for name in systems):
            return  # no system score in the file: every one is the mean of its segment scores
        for name in systems:
            if sys_table.get(name) is not None or all(v is None for v in seg[name]):
                continue
            if name in sys_table:
                said, line = f"system score of {name!r} is None", line_of.get(name)
            else:  # the line to add would come after the last one
                said, line = f"no system score for {name!r}", max(line_of.values(), default=0) + 1
            raise InputError(f"mtme:{self.params['metric']}: {said} while the file gives the other systems' "
                             "(its score would be the mean of its segment scores, another definition)",
                             sys_path, line,
                             fix=f"give every system's score in {sys_path.name}, or remove the file so that every "
                                 "system score is the mean of its segment scores")


@register("scores")
class FileScores(ExternalScores):
    """Segment scores of any metric from a TSV (system, segment id, score) or JSON file."""

    citation = "scores computed by any tool (e.g. COMET's command line), read from a file"
    options = {
        "file": Option(None, "TSV (SYSTEM<TAB>SEGMENT-ID<TAB>SCORE) or JSON ({system: {segment id: score}})"),
        "higher_is_better": Option(True, "whether a higher score means a better candidate"),
    }

    def _post_init(self) -> None:
        self.higher_is_better = self.params["higher_is_better"]

    def describe(self) -> str:
        return f"scores:{self.params['file']}"

    def read(self, testbed):
        from ..io.jsonl import unique_keys
        from ..io.text import parse_float, read_bytes, read_lines, split_fields

        if not self.params["file"]:
            raise OptionError("scores: name the file, e.g. -m scores:comet.tsv")
        path = Path(self.params["file"])
        ids = {s.id: i for i, s in enumerate(testbed.segments)}
        systems = set(testbed.systems)
        table: Dict[str, List[Optional[float]]] = {}
        seen: Dict[Tuple[str, int], int] = {}

        def put(system: str, seg_id: str, value: Optional[float], where: Optional[int]):
            if system not in systems:
                raise InputError(f"unknown system {system!r} (test bed {testbed.name!r} has "
                                 f"{', '.join(sorted(systems)[:5])}{', ...' if len(systems) > 5 else ''})",
                                 path, where, fix="name the systems as the test bed does")
            if seg_id not in ids:
                raise InputError(f"unknown segment id {seg_id!r} (test bed {testbed.name!r} has ids "
                                 f"{testbed.segments[0].id!r} ... {testbed.segments[-1].id!r})", path, where,
                                 fix="use the test bed's segment ids (`combo score --level segment` shows them)")
            key = (system, ids[seg_id])
            if key in seen:
                raise InputError(f"second score for system {system!r}, segment {seg_id!r} (first at line "
                                 f"{seen[key]})" if where else f"second score for {key}", path, where,
                                 fix="give one score per candidate")
            seen[key] = where or 0
            table.setdefault(system, [None] * len(ids))[ids[seg_id]] = value

        if path.suffix.lower() == ".json":
            text = None
            try:
                text = read_bytes(path).decode("utf-8-sig")  # a byte-order mark is dropped, as read_lines does
                doc = json.loads(text, parse_constant=_bad_number, parse_float=_json_number,
                                 parse_int=_json_number, object_pairs_hook=unique_keys)
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text (byte {exc.start})", path, fix="save it as UTF-8") from None
            except _BadNumber as exc:  # parse_float gives the message that a TSV file's line would get
                parse_float(exc.token, _json_line(text, exc.token), path, "score", missing="null")
                raise AssertionError(f"parse_float accepted {exc.token!r}") from None
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc.msg})", path, exc.lineno,
                                 fix='write {"SYSTEM": {"SEGMENT-ID": score, ...}, ...}') from None
            except ValueError as exc:
                fix = ("give each system and segment id once" if "twice" in str(exc)
                       else "write each score as a finite number or null")
                raise InputError(str(exc), path, fix=fix) from None
            if isinstance(doc, dict) and doc and all(isinstance(v, list) for v in doc.values()):
                _read_comet_json(doc, testbed, path, put)
                doc = {}
            if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
                raise InputError("expected an object of objects", path,
                                 fix='write {"SYSTEM": {"SEGMENT-ID": score, ...}, ...}')
            for system, scores in doc.items():
                for seg_id, value in scores.items():
                    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                        raise InputError(f"score of system {system!r}, segment {seg_id!r} is "
                                         f"{json.dumps(value)[:30]}, not a number", path,
                                         fix="write each score as a finite number or null")
                    put(system, str(seg_id), None if value is None else float(value), None)
        else:
            for lineno, line in enumerate(read_lines(path), 1):
                system, seg_id, token = split_fields(line, lineno, path, count=3, sep="\t",
                                                     what="tab-separated fields (SYSTEM, SEGMENT-ID, SCORE)")
                if lineno == 1 and (system, seg_id, token) == ("system", "segment", "score"):
                    continue  # a header
                value = None if token in ("None", "null") else parse_float(token, lineno, path, "score",
                                                                             missing="None")
                put(system, seg_id, value, lineno)
        _missing_systems(table, testbed.systems, path)
        for system, column in table.items():
            for i, seg in enumerate(testbed.segments):
                if column[i] is None and (system, i) not in seen and i in testbed.candidates[system]:
                    raise InputError(f"no score for system {system!r}, segment {seg.id!r}", path,
                                     fix="give a score (or None/null) for every candidate")
        return table, None, path


def _comet_system(key: str, systems: Sequence[str], keys: Sequence[str]) -> Optional[str]:
    """The test bed's system that a ``comet-score`` file names by its hypothesis file: the path itself, its file name
    without ``.txt``, or that name without the prefix all the file's names share (as test-bed readers name files)."""
    from ..io.plain import names_from_paths

    if key in systems:
        return key
    alone = names_from_paths([key])[0]
    if alone in systems:
        return alone
    cut = dict(zip(keys, names_from_paths(list(keys))))[key]
    return cut if cut in systems else None


def _read_comet_json(doc: Dict[str, list], testbed, path: Path, put) -> None:
    """``comet-score --to_json``'s layout, ``{hypothesis file: [{"src", "mt", "ref", "COMET"}, ...]}``: entry ``i`` is
    segment ``i`` of the test bed, and its ``mt`` must be that segment's candidate (else the file scores other
    texts, and is refused)."""
    keys = list(doc)
    for key, entries in doc.items():
        system = _comet_system(key, testbed.systems, keys)
        if system is None:
            raise InputError(f"comet-score file names {key!r}, which is no system of test bed {testbed.name!r} "
                             f"({', '.join(testbed.systems[:5])}{', ...' if len(testbed.systems) > 5 else ''})", path,
                             fix="name the hypothesis files as the test bed names its systems (the file name "
                                 "without .txt), or score the test bed's own files")
        if len(entries) != len(testbed.segments):
            raise InputError(f"comet-score file has {len(entries)} entries for {key!r}; test bed "
                             f"{testbed.name!r} has {len(testbed.segments)} segments", path,
                             fix="score the test bed's files whole")
        candidates = testbed.candidates[system]
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or "COMET" not in entry:
                raise InputError(f"entry {i} of {key!r} is not comet-score's {{src, mt, ref, COMET}}", path,
                                 fix="give the file comet-score --to_json wrote")
            if i in candidates and entry.get("mt") != candidates[i]:
                raise InputError(f"entry {i} of {key!r}: its mt is not the candidate of system {system!r} on "
                                 f"segment {testbed.segments[i].id!r} (the file scores other texts)", path,
                                 fix="score the test bed's own hypothesis files with comet-score")
            value = entry["COMET"]
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value)):
                raise InputError(f"entry {i} of {key!r}: COMET is {json.dumps(value)[:30]}, not a finite number",
                                 path, fix="give the file comet-score --to_json wrote")
            put(system, testbed.segments[i].id, None if value is None else float(value), None)


class _BadNumber(Exception):
    """A JSON number that is no finite float (NaN, Infinity, 1e400, 400 digits), raised by the parse hooks."""

    def __init__(self, token: str):
        super().__init__(token)
        self.token = token


def _json_number(token: str) -> float:
    """A JSON number (integer or not) as the float it writes; beyond the float range is refused: json's
    default reads ``1e400`` as infinity and a 400-digit integer as an int that float() cannot convert."""
    value = float(token)
    if not math.isfinite(value):
        raise _BadNumber(token)
    return value


def _bad_number(name: str):
    raise _BadNumber(name)


#: JSON tokens that matter for finding a number: whole strings (so that digits inside them are skipped),
#: numbers and the non-standard constants Python's json reads.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|NaN|-?Infinity')


def _json_line(text: str, token: str) -> Optional[int]:
    """The 1-based line of the first number or constant ``token`` in JSON ``text`` (outside strings)."""
    for match in _JSON_TOKENS.finditer(text):
        if match.group() == token:
            return text.count("\n", 0, match.start()) + 1
    return None
