"""The MUTT authors' released trial files (Boag, Campos, Saenko & Rumshisky 2016; text-machine-lab/MUTT,
``src/tmp/``, commit of 2016-06-04), as their scoring script read them.

A folder holds, for each corruption type ``TYPE``::

    TYPE_a.json     the originals: [{"image_id": 0, "caption": "Different teams are playing football on a field"}, ...]
    TYPE_b.json     the corruptions, the same image_ids: [{"image_id": 0, "caption": "... on the field"}, ...]
    TYPE_r5.json    coco-caption references: {"annotations": [{"image_id": 0, "caption": "..."}, ...], ...}
    TYPE_r10.json   with 5, 10 or 20 references per image_id
    TYPE_r20.json

Their script (``src/metrics.py``) scores ``TYPE_a.json`` and ``TYPE_b.json`` in
two coco-caption calls against the same ``TYPE_rN.json`` and pairs the per-image
scores (``evalImgs``) by ``image_id``. A trial passes by the rule of its type
(:data:`RELEASED_RULES`, defined in :mod:`combo.meta.mutt`): ``"difference"``,
``abs((a - b) / (a + 1e-9)) * 100 <= 15``, for ``det_sub``, ``near_syms`` and
``passive`` (their set ``m_p``); ``"above"``, the original scores above its
corruption, for every other type.

The ten released types are the SICK corruptions (the SEMEVAL trials, whose
video has at least 20 MSR-Video descriptions) and three generated from them:
``double_PP`` (combo's ``dup_pp``), ``swap_chunks`` (``reorder_chunks``) and
``remove_prep`` (the preposition of a PP removed; combo's ``rm_pp_head``
removes its head noun instead).

:func:`read_released` reads a folder into :class:`ReleasedTrial` lists,
:func:`released_testbed` makes one Testbed of them (``load_testbed`` does both),
:func:`read_released_results` reads the authors' ``coco.txt`` / ``terp.txt`` /
``badger.txt``. Running the trials is
:func:`combo.metric_unit_tests.run_released_unit_tests`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import InputError, OptionError
from ..testbed import Segment, Testbed
from .text import PathLike, read_bytes

#: The released types, in the order of the authors' results files, and their kind (Boag et al. 2016).
RELEASED_KINDS = {
    "neg_subj": "meaning-altering",
    "det_sub": "meaning-preserving",
    "near_syms": "meaning-preserving",
    "passive": "meaning-preserving",
    "sem_opps": "meaning-altering",
    "neg_verb": "meaning-altering",
    "shuffled": "fluency-disrupting",
    "swap_chunks": "fluency-disrupting",
    "double_PP": "fluency-disrupting",
    "remove_prep": "fluency-disrupting",
}
#: The types their script judges with the Difference formula (``m_p`` in ``src/metrics.py``).
DIFFERENCE_TYPES = ("det_sub", "near_syms", "passive")
#: The reference counts of the released files.
REFERENCE_COUNTS = (5, 10, 20)
#: Released type -> combo's name for the same corruption (None: combo has no such generated type).
COMBO_NAMES = {"double_PP": "dup_pp", "swap_chunks": "reorder_chunks", "remove_prep": None}
_SUFFIX = re.compile(r"^(?P<type>.+)_(?:a|b|r\d+)\.json$")


def released_rule(corruption: str) -> str:
    """The pass rule the authors' script applies to ``corruption``: ``"difference"`` or ``"above"``."""
    return "difference" if corruption in DIFFERENCE_TYPES else "above"


@dataclass(frozen=True)
class ReleasedTrial:
    """One released trial: an original and its corruption, scored against the same references.

    corruption: the type (the file name's ``TYPE``); kind: meaning-altering, -preserving or
    fluency-disrupting ("unknown" for a type the paper does not name); rule: ``"difference"`` or
    ``"above"`` (:func:`released_rule`); image_id: as in the files; sentence, corrupted: the captions of
    ``TYPE_a.json`` and ``TYPE_b.json``; references: those of ``TYPE_rN.json`` for this image_id, in file
    order; entry: the 1-based position of the original in ``TYPE_a.json``; path: that file.
    """

    corruption: str
    kind: str
    rule: str
    image_id: object
    sentence: str
    corrupted: str
    references: Tuple[str, ...]
    entry: int = 0
    path: str = field(default="", compare=False)


def is_released_folder(path: PathLike) -> bool:
    """Whether ``path`` is a folder holding released trial files (some ``TYPE_a.json``)."""
    p = Path(path)
    return p.is_dir() and any(p.glob("*_a.json"))


def released_types(folder: PathLike) -> List[str]:
    """The types of a folder, from its ``TYPE_a.json`` files: the released order first, then the others sorted."""
    names = {p.name[:-len("_a.json")] for p in Path(folder).glob("*_a.json")}
    return [t for t in RELEASED_KINDS if t in names] + sorted(names - set(RELEASED_KINDS))


def _load_json(path: Path):
    """The JSON value of ``path`` and, when it is a list, the 1-based line where each element starts."""
    if not path.is_file():
        raise InputError("file not found", path)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 (byte {e.start})", path, fix="save the file as UTF-8") from None
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", path, e.lineno,
                         fix="repair the JSON (coco-caption reads the file with json.load)") from None
    lines = None
    if isinstance(data, list):
        decoder = json.JSONDecoder()
        lines, pos, line = [], text.index("[") + 1, 1 + text.count("\n", 0, text.index("["))
        for _ in data:
            start = pos
            while text[pos] in " \t\r\n,":
                pos += 1
            line += text.count("\n", start, pos)
            lines.append(line)
            _, end = decoder.raw_decode(text, pos)
            line += text.count("\n", pos, end)
            pos = end
    return data, lines


def _entries(path: Path, data, what: str, lines: Optional[List[int]] = None) -> List[Tuple[object, str, int]]:
    """``[(image_id, caption, line)]`` of a list of ``{"image_id", "caption"}`` objects (line None if unknown)."""
    if not isinstance(data, list):
        raise InputError(f"{what} file is a JSON {type(data).__name__}, not a list", path,
                         fix='give a list of {"image_id": ..., "caption": "..."} objects, as coco-caption results')
    out = []
    for k, item in enumerate(data, 1):
        line = lines[k - 1] if lines else None
        if not isinstance(item, dict) or "image_id" not in item or "caption" not in item:
            raise InputError(f"entry {k} is not an object with image_id and caption", path, line,
                             fix='write each entry as {"image_id": ..., "caption": "..."}')
        image_id, caption = item["image_id"], item["caption"]
        if not isinstance(caption, str):
            raise InputError(f"entry {k} (image_id {image_id!r}): caption is a {type(caption).__name__}, "
                             "not a string", path, line, fix="give every caption as a JSON string")
        if isinstance(image_id, (list, dict, bool)) or image_id is None:
            raise InputError(f"entry {k}: image_id {image_id!r} is not a number or a string", path, line,
                             fix="give each trial one image_id (a number, as the released files)")
        out.append((image_id, caption, line))
    return out


def _unique(path: Path, entries: Sequence[Tuple[object, str, Optional[int]]]) -> Dict[object, int]:
    """image_id -> 1-based entry; an image_id given twice is an error (coco-caption scores one caption each)."""
    seen: Dict[object, int] = {}
    for k, (image_id, _, line) in enumerate(entries, 1):
        if image_id in seen:
            raise InputError(f"entry {k}: image_id {image_id!r} is already entry {seen[image_id]}", path, line,
                             fix="give each trial its own image_id (coco-caption scores one caption per image)")
        seen[image_id] = k
    return seen


def _references(path: Path) -> Dict[object, List[str]]:
    data, _ = _load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list):
        raise InputError("no 'annotations' list: not a coco-caption reference file", path,
                         fix='give {"annotations": [{"image_id": ..., "caption": "..."}, ...]} as coco-caption '
                             "reads references")
    refs: Dict[object, List[str]] = {}
    for image_id, caption, _ in _entries(path, data["annotations"], "annotations"):
        refs.setdefault(image_id, []).append(caption)
    return refs


def _reference_path(folder: Path, corruption: str, references: int) -> Path:
    path = folder / f"{corruption}_r{references}.json"
    if not path.is_file():
        present = sorted(int(m.group(1)) for p in folder.glob(f"{corruption}_r*.json")
                         if (m := re.fullmatch(rf"{re.escape(corruption)}_r(\d+)\.json", p.name)))
        fix = (f"choose --references among {', '.join(map(str, present))}" if present
               else f"put the references ({corruption}_r{references}.json, coco-caption format) beside "
                    f"{corruption}_a.json")
        raise InputError(f"no {references}-reference file for {corruption}", path, fix=fix)
    return path


def read_released_type(folder: PathLike, corruption: str, references: int = 5) -> List[ReleasedTrial]:
    """The trials of one type: ``TYPE_a.json`` paired with ``TYPE_b.json`` by image_id, with the references of
    ``TYPE_r<references>.json``, in the order of ``TYPE_a.json``.

    Errors (one :class:`InputError` naming the file and entry): a missing ``_b`` or ``_rN`` file, invalid JSON
    (with its line), an entry without image_id or caption, an image_id given twice, counts that differ between
    ``_a`` and ``_b``, an image_id of ``_a`` missing from ``_b``, and an image_id without references.
    """
    base = Path(folder)
    a_path, b_path = base / f"{corruption}_a.json", base / f"{corruption}_b.json"
    if not b_path.is_file():
        raise InputError(f"{a_path.name} has no corruptions file beside it", b_path,
                         fix=f"put {b_path.name} (the corrupted captions, one per image_id of {a_path.name}) in "
                             f"{base}, or remove {a_path.name}")
    data, lines = _load_json(a_path)
    originals = _entries(a_path, data, "originals", lines)
    data, lines = _load_json(b_path)
    corruptions = _entries(b_path, data, "corruptions", lines)
    _unique(a_path, originals)
    b_ids = _unique(b_path, corruptions)
    if len(originals) != len(corruptions):
        raise InputError(f"{len(corruptions)} corruptions but {a_path.name} has {len(originals)} originals", b_path,
                         fix=f"give one corruption per original, with the same image_ids as {a_path.name}")
    for k, (image_id, _, line) in enumerate(originals, 1):
        if image_id not in b_ids:
            raise InputError(f"entry {k}: image_id {image_id!r} has no corruption in {b_path.name}", a_path, line,
                             fix=f"give {b_path.name} the same image_ids as {a_path.name}")
    ref_path = _reference_path(base, corruption, int(references))
    refs = _references(ref_path)
    corrupted = {image_id: caption for image_id, caption, _ in corruptions}
    kind = RELEASED_KINDS.get(corruption, "unknown")
    rule = released_rule(corruption)
    trials = []
    for k, (image_id, caption, _) in enumerate(originals, 1):
        if not refs.get(image_id):
            raise InputError(f"image_id {image_id!r} (entry {k} of {a_path.name}) has no references", ref_path,
                             fix=f"add its references to {ref_path.name}, or remove the trial from {a_path.name} "
                                 f"and {b_path.name}")
        trials.append(ReleasedTrial(corruption, kind, rule, image_id, caption, corrupted[image_id],
                                    tuple(refs[image_id]), k, str(a_path)))
    return trials


def read_released(folder: PathLike, references: int = 5,
                  corruptions: Optional[Sequence[str]] = None) -> Dict[str, List[ReleasedTrial]]:
    """``{type: trials}`` of a released folder (:func:`read_released_type` for each ``TYPE_a.json``)."""
    base = Path(folder)
    if not base.is_dir():
        raise InputError("not a folder", base, fix="give the folder of the released trial files (TYPE_a.json, ...)")
    if isinstance(references, bool) or int(references) < 1:
        raise OptionError(f"references={references!r}: give the reference count of the files (5, 10 or 20)")
    names = list(corruptions) if corruptions is not None else released_types(base)
    if not names:
        stray = sorted(p.name for p in base.glob("*.json") if _SUFFIX.match(p.name))
        raise InputError("no released trial files (TYPE_a.json)" + (f"; found {', '.join(stray[:3])}" if stray
                                                                     else ""), base,
                         fix="give the folder holding TYPE_a.json, TYPE_b.json and TYPE_r5/_r10/_r20.json files "
                             "(../shared/data/mutt/released-trials)")
    for name in names:
        if not (base / f"{name}_a.json").is_file():
            raise InputError(f"no originals file for type {name!r}", base / f"{name}_a.json",
                             fix=f"choose among {', '.join(released_types(base)) or 'none'}")
    return {name: read_released_type(base, name, references) for name in names}


def released_testbed(trials: Sequence[ReleasedTrial], name: str = "mutt-released") -> Testbed:
    """A Testbed with one segment per trial (id ``TYPE:image_id``, group ``TYPE``) and the systems
    ``original`` and ``corrupted``; ``metadata`` holds each type's kind and pass rule."""
    tb = Testbed(name=name)
    original: Dict[int, str] = {}
    corrupted: Dict[int, str] = {}
    kinds: Dict[str, str] = {}
    rules: Dict[str, str] = {}
    for t in trials:
        i = len(tb.segments)
        tb.segments.append(Segment(id=f"{t.corruption}:{t.image_id}", references=list(t.references),
                                   ref_ids=[f"ref{j + 1}" for j in range(len(t.references))], group=t.corruption))
        original[i] = t.sentence
        corrupted[i] = t.corrupted
        kinds[t.corruption] = t.kind
        rules[t.corruption] = t.rule
    tb.candidates = {"original": original, "corrupted": corrupted}
    tb.metadata = {"format": "mutt-released", "target_language": "en", "kinds": kinds, "rules": rules}
    return tb


def read_released_testbed(root: PathLike, references: int = 5) -> Testbed:
    """All the trials of a released folder as one Testbed (:func:`released_testbed`) at ``references``."""
    sets = read_released(root, int(references))
    tb = released_testbed([t for v in sets.values() for t in v], name=f"mutt-released:{Path(root).name}")
    tb.metadata["references"] = int(references)
    return tb


def read_released_results(path: PathLike) -> Dict[str, Dict[str, Tuple[float, ...]]]:
    """``{type: {metric: (accuracy % at 5, 10, 20 references)}}`` of the authors' ``coco.txt``, ``terp.txt`` or
    ``badger.txt`` (blocks ``Corruption: TYPE`` with lines ``metric: a | b | c``)."""
    p = Path(path)
    out: Dict[str, Dict[str, Tuple[float, ...]]] = {}
    current = None
    for lineno, line in enumerate(read_bytes(p).decode("utf-8").splitlines(), 1):
        if line.startswith("Corruption:"):
            current = line.split(":", 1)[1].strip()
            out[current] = {}
        elif "|" in line and ":" in line and not line.startswith("#"):
            if current is None:
                raise InputError("a result line before any 'Corruption:' line", p, lineno,
                                 fix="start each block with 'Corruption: TYPE'")
            key, values = line.split(":", 1)
            try:
                out[current][key.strip()] = tuple(float(v) for v in values.split("|"))
            except ValueError:
                raise InputError(f"not 'metric: a | b | c' accuracies: {line.strip()!r}", p, lineno,
                                 fix="give the authors' results file unchanged") from None
    if not out:
        raise InputError("no 'Corruption:' block", p, fix="give the authors' coco.txt, terp.txt or badger.txt")
    return out


__all__ = ["COMBO_NAMES", "DIFFERENCE_TYPES", "REFERENCE_COUNTS", "RELEASED_KINDS", "ReleasedTrial",
           "is_released_folder", "read_released", "read_released_results", "read_released_testbed",
           "read_released_type", "released_rule", "released_testbed", "released_types"]
