"""The canonical JSONL test-bed format (lossless; UTF-8, one JSON object per line).

Line 1 is the header, then segments in order, then candidates, scores,
preferences and system scores (the order :func:`write_jsonl` uses); the
reader only requires that a record names segments and candidates defined
on earlier lines::

    {"type": "testbed", "format": 1, "name": str, "metadata": {...}}
    {"type": "segment", "id": str, "source": str, "references": [str, ...],
     "weights": [float, ...] | null, "ref_ids": [str, ...] | null, "group": str}
    {"type": "candidate", "system": str, "segment": <segment id>, "text": str}
    {"type": "score", "system": str, "segment": <segment id>, "value": float,
     "rater": str | null, "aspect": str}
    {"type": "preference", "segment": <segment id>, "better": str, "worse": str,
     "judge": str | null, "tie": bool, "block": int | null}
    {"type": "system_score", "system": str, "aspect": str, "value": float}

Systems appear in the order of their first candidate. Every key is required
and no other key is allowed; NaN and infinities are rejected (they are not
JSON). Each problem raises one InputError naming the line.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

from ..errors import InputError
from ..testbed import Preference, Score, Segment, Testbed
from .registry import register_format
from .text import PathLike, read_lines

FORMAT_VERSION = 1

_STR, _OPT_STR, _BOOL, _NUM, _OPT_INT = "string", "string or null", "boolean", "number", "integer or null"
_STR_LIST, _OPT_STR_LIST, _OPT_NUM_LIST, _OBJ, _INT = (
    "list of strings", "list of strings or null", "list of numbers or null", "object", "integer")

SCHEMA: Dict[str, Dict[str, str]] = {
    "testbed": {"type": _STR, "format": _INT, "name": _STR, "metadata": _OBJ},
    "segment": {"type": _STR, "id": _STR, "source": _STR, "references": _STR_LIST,
                "weights": _OPT_NUM_LIST, "ref_ids": _OPT_STR_LIST, "group": _STR},
    "candidate": {"type": _STR, "system": _STR, "segment": _STR, "text": _STR},
    "score": {"type": _STR, "system": _STR, "segment": _STR, "value": _NUM, "rater": _OPT_STR,
              "aspect": _STR},
    "preference": {"type": _STR, "segment": _STR, "better": _STR, "worse": _STR, "judge": _OPT_STR,
                   "tie": _BOOL, "block": _OPT_INT},
    "system_score": {"type": _STR, "system": _STR, "aspect": _STR, "value": _NUM},
}


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_CHECKS = {
    _STR: lambda v: isinstance(v, str),
    _OPT_STR: lambda v: v is None or isinstance(v, str),
    _BOOL: lambda v: isinstance(v, bool),
    _NUM: _is_num,
    _INT: _is_int,
    _OPT_INT: lambda v: v is None or _is_int(v),
    _STR_LIST: lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    _OPT_STR_LIST: lambda v: v is None or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
    _OPT_NUM_LIST: lambda v: v is None or (isinstance(v, list) and all(_is_num(x) for x in v)),
    _OBJ: lambda v: isinstance(v, dict),
}
_COMPILED = {kind: (frozenset(schema), [(key, want, _CHECKS[want]) for key, want in schema.items()])
             for kind, schema in SCHEMA.items()}


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer too large for a float
        return False


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def unique_keys(pairs):
    """``object_pairs_hook`` refusing an object that gives one key twice (JSON would keep the last silently)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=unique_keys)


# -- writing -------------------------------------------------------------------
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
_dump = _ENCODER.encode


def write_jsonl(testbed: Testbed, path: PathLike) -> None:
    """Write ``testbed`` to ``path`` in the canonical JSONL format (validates it first)."""
    tb = testbed.validate()
    for name, outs in tb.candidates.items():
        if not outs:
            raise InputError(f"system {name!r} has no candidates; JSONL keeps systems through their "
                             "candidates", path, fix="remove the empty system")
    try:
        header = _dump({"type": "testbed", "format": FORMAT_VERSION, "name": tb.name,
                        "metadata": tb.metadata})
    except (TypeError, ValueError) as exc:
        raise InputError(f"metadata cannot be written as JSON ({exc})", path,
                         fix="keep metadata to JSON values: str keys, lists, numbers, strings") from None
    ids = [seg.id for seg in tb.segments]
    out: List[str] = [header]
    for seg in tb.segments:
        out.append(_dump({"type": "segment", "id": seg.id, "source": seg.source,
                          "references": list(seg.references),
                          "weights": None if seg.weights is None else [float(w) for w in seg.weights],
                          "ref_ids": None if seg.ref_ids is None else list(seg.ref_ids),
                          "group": seg.group}))
    for name, outs in tb.candidates.items():
        for i in sorted(outs):
            out.append(_dump({"type": "candidate", "system": name, "segment": ids[i], "text": outs[i]}))
    for s in tb.scores:
        out.append(_dump({"type": "score", "system": s.system, "segment": ids[s.segment],
                          "value": float(s.value), "rater": s.rater, "aspect": s.aspect}))
    for p in tb.preferences:
        out.append(_dump({"type": "preference", "segment": ids[p.segment], "better": p.better,
                          "worse": p.worse, "judge": p.judge, "tie": bool(p.tie), "block": p.block}))
    for aspect, table in tb.system_scores.items():
        for name, v in table.items():
            out.append(_dump({"type": "system_score", "system": name, "aspect": aspect, "value": float(v)}))
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(out))
        fh.write("\n")


# -- reading -------------------------------------------------------------------
def _check_record(rec: Any, lineno: int, path: PathLike) -> str:
    if not isinstance(rec, dict):
        raise InputError("line is not a JSON object", path, lineno, fix="write one {...} object per line")
    kind = rec.get("type")
    if kind not in SCHEMA:
        raise InputError(f"unknown record type {kind!r}", path, lineno,
                         fix="type is one of " + ", ".join(SCHEMA))
    keys, checks = _COMPILED[kind]
    if rec.keys() != keys:
        missing = [(key, want) for key, want, _ in checks if key not in rec]
        if missing:  # every missing key at once: a record written by hand often lacks several
            raise InputError(f"{kind} record has no " + ", ".join(repr(key) for key, _ in missing), path, lineno,
                             fix="add " + ", ".join(f"\"{key}\" ({want})" for key, want in missing))
        extra = [k for k in rec if k not in keys]
        raise InputError(f"{kind} record has unknown key {extra[0]!r}", path, lineno,
                         fix="allowed keys: " + ", ".join(SCHEMA[kind]))
    for key, want, check in checks:
        if not check(rec[key]):
            raise InputError(f"{kind} {key!r} must be a {want}, not {rec[key]!r}", path, lineno)
    return kind


#: The reader's options (``--testbed-option KEY=VALUE``): none.
OPTIONS: Dict[str, Any] = {}


@register_format("jsonl", looks="*.jsonl file", what="canonical JSONL test bed", options=OPTIONS,
                 matches=lambda p: p.is_file() and p.suffix == ".jsonl")
def read_jsonl(path: PathLike) -> Testbed:
    """Read a test bed written by :func:`write_jsonl` (or by hand, following the format)."""
    lines = read_lines(path)
    tb: Optional[Testbed] = None
    seg_index: Dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            raise InputError("blank line", path, lineno, fix="remove blank lines")
        try:
            rec = _DECODER.decode(line)
        except ValueError as exc:
            raise InputError(f"invalid JSON ({exc})", path, lineno, fix="write one JSON object per line") from None
        except RecursionError:
            raise InputError("invalid JSON (nested too deeply)", path, lineno,
                             fix="write one flat JSON object per line") from None
        kind = _check_record(rec, lineno, path)
        if kind in ("score", "system_score") and not _finite(rec["value"]):
            raise InputError(f"{kind} value {rec['value']!r} is not finite", path, lineno,
                             fix="remove NaN or infinite judgments")
        if lineno == 1:
            if kind != "testbed":
                raise InputError("first line is not the testbed header", path, 1,
                                 fix='start with {"type": "testbed", "format": 1, "name": ..., "metadata": {}}')
            if rec["format"] != FORMAT_VERSION:
                raise InputError(f"format {rec['format']} is not supported (this version reads {FORMAT_VERSION})",
                                 path, 1, fix="upgrade combo or rewrite the file")
            tb = Testbed(name=rec["name"], metadata=rec["metadata"])
            continue
        if kind == "testbed":
            raise InputError("second testbed header", path, lineno, fix="give one test bed per file")
        if kind == "segment":
            if rec["id"] in seg_index:
                raise InputError(f"duplicate segment id {rec['id']!r}", path, lineno, fix="make segment ids unique")
            refs, weights, ref_ids = rec["references"], rec["weights"], rec["ref_ids"]
            if weights is not None:
                if len(weights) != len(refs):
                    raise InputError(f"{len(weights)} weights for {len(refs)} references", path, lineno,
                                     fix="give one weight per reference, or null")
                if not all(_finite(w) and -1.0 <= w <= 1.0 for w in weights):
                    raise InputError("reference weight outside [-1, 1]", path, lineno,
                                     fix="use weights between -1 and 1")
                weights = [float(w) for w in weights]
            if ref_ids is not None and len(ref_ids) != len(refs):
                raise InputError(f"{len(ref_ids)} ref_ids for {len(refs)} references", path, lineno,
                                 fix="give one id per reference, or null")
            seg_index[rec["id"]] = len(tb.segments)
            tb.segments.append(Segment(rec["id"], rec["source"], refs, weights, ref_ids, rec["group"]))
            continue
        if kind == "system_score":
            value = float(rec["value"])
            if rec["system"] not in tb.candidates:
                raise InputError(f"system score names unknown system {rec['system']!r}", path, lineno,
                                 fix="give the system's candidates before its judgments")
            table = tb.system_scores.setdefault(rec["aspect"], {})
            if rec["system"] in table:
                raise InputError(f"second {rec['aspect']!r} system score of {rec['system']!r}", path, lineno,
                                 fix="give one system score per system and aspect")
            table[rec["system"]] = value
            continue
        seg = seg_index.get(rec["segment"])
        if seg is None:
            raise InputError(f"unknown segment id {rec['segment']!r}", path, lineno,
                             fix="name a segment defined on an earlier line")
        if kind == "candidate":
            outs = tb.candidates.setdefault(rec["system"], {})
            if seg in outs:
                raise InputError(f"second candidate of {rec['system']!r} for segment {rec['segment']!r}",
                                 path, lineno, fix="give one candidate per system and segment")
            outs[seg] = rec["text"]
        elif kind == "score":
            system = rec["system"]
            if seg not in tb.candidates.get(system, ()):
                raise InputError(f"score of {system!r} on segment {rec['segment']!r}, which has no such candidate",
                                 path, lineno, fix="judge only candidates given above")
            tb.scores.append(Score(system, seg, float(rec["value"]), rec["rater"], rec["aspect"]))
        else:  # preference
            if rec["better"] == rec["worse"]:
                raise InputError(f"preference of {rec['better']!r} over itself on segment {rec['segment']!r}",
                                 path, lineno, fix="compare two different systems")
            for role in ("better", "worse"):
                if seg not in tb.candidates.get(rec[role], ()):
                    raise InputError(f"preference names {rec[role]!r} on segment {rec['segment']!r}, "
                                     "which has no such candidate", path, lineno,
                                     fix="compare only candidates given above")
            tb.preferences.append(Preference(seg, rec["better"], rec["worse"], rec["judge"], rec["tie"],
                                             rec["block"]))
    assert tb is not None  # read_lines rejects empty files
    return tb.validate(path)
