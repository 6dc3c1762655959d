"""MUTT corruption sets (Boag, Campos, Saenko & Rumshisky 2016, "MUTT: Metric Unit TesTing
for Language Generation Tasks", ACL).

``<root>/<type>.txt`` for each corruption type. A file starts with the type
name, a description, a blank line and ``num:``/``mean:``/``stddev:`` lines
(trial count and the mean and standard deviation of the scores), then one
tab-indented block per trial::

    dataset:     FLICKR                                  (or SEMEVAL)
    orig:        small girl riding in play car           caption in the source corpus
    sent:        A small girl is riding in a toy car     the SICK sentence built from it
    corr:        A small toy girl is in a riding car     the other sentence of the SICK pair
    score:       2.7                                     SICK relatedness of (sent, corr), 1-5

The trials come from SICK pairs (Marelli et al. 2014), whose sentences were
built from Flickr8k captions and SemEval-2012 MSR-video descriptions; MUTT
scores ``sent`` and ``corr`` against the reference descriptions of the same
image or video. With ``flickr8k=<folder>`` the five Flickr8k captions of the
image whose caption equals ``orig`` (compared lower-cased, on letters and
digits only) become the trial's references; trials from SemEval, and the few
whose caption is not found or belongs to several images, keep
``references=None`` (:func:`mutt_testbed` then falls back to ``orig``).

A trial passes (Boag et al. 2016) when the metric scores ``sent``
above ``corr`` for meaning-altering and fluency-disrupting corruptions, and
when ``|s(sent) - s(corr)| / s(sent) <= 0.15`` for meaning-preserving ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import InputError
from ..testbed import Segment, Testbed
from .text import PathLike, parse_float, parse_int, read_lines

#: Corruption type -> kind of corruption (Boag et al. 2016).
CORRUPTION_KINDS = {
    "neg_subj": "meaning-altering",
    "neg_verb": "meaning-altering",
    "sem_opps": "meaning-altering",
    "passive": "meaning-preserving",
    "near_syms": "meaning-preserving",
    "det_sub": "meaning-preserving",
    "shuffled": "fluency-disrupting",
}
BLOCK_KEYS = ("dataset", "orig", "sent", "corr", "score")


@dataclass(frozen=True)
class MuttTrial:
    """One MUTT unit test: does a metric tell ``sentence`` from its corruption?

    corruption: the corruption type, e.g. ``"neg_subj"`` (the file name);
    kind: ``"meaning-altering"``, ``"meaning-preserving"`` or ``"fluency-disrupting"``;
    dataset: ``"FLICKR"`` or ``"SEMEVAL"``, the corpus ``original`` comes from;
    original: ``orig:``, the description in that corpus the SICK sentence was built from;
    sentence: ``sent:``, the uncorrupted candidate (a SICK sentence);
    corrupted: ``corr:``, its corruption (the other sentence of the SICK pair);
    relatedness: ``score:``, the SICK relatedness of (sentence, corrupted), 1-5;
    references: the reference descriptions (Flickr8k captions of the image), or None if unknown;
    line: the 1-based line of the block's ``dataset:`` line in the file.
    """

    corruption: str
    kind: str
    dataset: str
    original: str
    sentence: str
    corrupted: str
    relatedness: float
    references: Optional[Tuple[str, ...]] = None
    line: int = 0


def _caption_key(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def _flickr_references(folder: PathLike) -> Dict[str, Optional[Tuple[str, ...]]]:
    """Caption key -> the five captions of its image (None when the key names several images)."""
    from .flickr8k import read_captions

    captions, by_image = read_captions(Path(folder) / "Flickr8k.token.txt")
    out: Dict[str, Optional[Tuple[str, ...]]] = {}
    for image, ids in by_image.items():
        refs = tuple(captions[c] for c in ids)
        for c in ids:
            key = _caption_key(captions[c])
            if key in out and out[key] != refs:
                out[key] = None
            else:
                out[key] = refs
    return out


def read_mutt_file(path: PathLike, flickr_refs: Optional[Dict[str, Optional[Tuple[str, ...]]]] = None
                   ) -> List[MuttTrial]:
    """The trials of one corruption file (see module doc)."""
    p = Path(path)
    lines = read_lines(p)
    corruption = lines[0].strip()
    if corruption != p.stem:
        raise InputError(f"first line {corruption!r} is not the corruption type {p.stem!r}", p, 1,
                         fix="start the file with its corruption type, as the file name")
    header: Dict[str, Tuple[int, str]] = {}
    trials: List[MuttTrial] = []
    block: Dict[str, str] = {}
    start = 0
    lineno = 2
    for lineno, line in enumerate(lines[2:], 3):
        if not line.strip():
            continue
        key, colon, value = line.lstrip(" \t").partition(":")
        key = key.rstrip(" ")
        if not colon:
            raise InputError("line is not 'key: value'", p, lineno, fix="write key: value lines")
        value = value.lstrip(" ")
        if not line.startswith("\t"):
            if trials or block or key not in ("num", "mean", "stddev"):
                raise InputError(f"unexpected line {key!r} outside a trial block", p, lineno,
                                 fix="indent trial lines with a tab")
            header[key] = (lineno, value)
            continue
        expected = BLOCK_KEYS[len(block)]
        if key != expected:
            raise InputError(f"expected '{expected}:', found '{key}:'", p, lineno,
                             fix="give each trial as dataset, orig, sent, corr, score lines")
        if not block:
            start = lineno
        block[key] = value
        if key == "score":
            score = parse_float(value, lineno, p, "relatedness", 1.0, 5.0)
            refs = None
            if flickr_refs is not None and block["dataset"] == "FLICKR":
                refs = flickr_refs.get(_caption_key(block["orig"]))
            trials.append(MuttTrial(corruption, CORRUPTION_KINDS.get(corruption, "unknown"), block["dataset"],
                                    block["orig"], block["sent"], block["corr"], score, refs, start))
            block = {}
    if block:
        raise InputError(f"the last trial stops after '{list(block)[-1]}:'", p, lineno,
                         fix="give each trial as dataset, orig, sent, corr, score lines")
    if "num" in header:
        ln, value = header["num"]
        num = parse_int(value, ln, p, "num")
        if num != len(trials):
            raise InputError(f"num: says {num} trials but the file has {len(trials)}", p, ln,
                             fix="the file is incomplete or damaged; fetch it again")
    if "mean" in header and trials:
        ln, value = header["mean"]
        mean = parse_float(value, ln, p, "mean")
        actual = sum(t.relatedness for t in trials) / len(trials)
        if abs(mean - actual) > 1e-6 * max(1.0, abs(mean)):
            raise InputError(f"mean: says {mean} but the scores average {actual:.9f}", p, ln,
                             fix="the file is incomplete or damaged; fetch it again")
    return trials


def read_mutt(root: PathLike, flickr8k: Optional[PathLike] = None,
              corruptions: Optional[Sequence[str]] = None) -> Dict[str, List[MuttTrial]]:
    """``{corruption type: [trials in file order]}`` for every ``<type>.txt`` in ``root``."""
    base = Path(root)
    if not base.is_dir():
        raise InputError("not a folder", base, fix="give the MUTT corruptions folder")
    names = list(corruptions) if corruptions is not None else sorted(p.stem for p in base.glob("*.txt"))
    if not names:
        raise InputError("no corruption files (<type>.txt)", base, fix="give the MUTT corruptions folder")
    refs = _flickr_references(flickr8k) if flickr8k is not None else None
    return {name: read_mutt_file(base / f"{name}.txt", refs) for name in names}


def mutt_testbed(trials: Sequence[MuttTrial], name: str = "mutt") -> Testbed:
    """A Testbed with one segment per trial and systems ``original`` and ``corrupted``.

    References are the trial's references, or ``[original]`` when unknown
    (then ``ref_ids`` = ``["orig"]``); segment id ``<type>:<k>`` for the k-th
    trial of that type in ``trials``; group = corruption type.
    """
    tb = Testbed(name=name)
    counters: Dict[str, int] = {}
    original: Dict[int, str] = {}
    corrupted: Dict[int, str] = {}
    for t in trials:
        k = counters[t.corruption] = counters.get(t.corruption, 0) + 1
        if t.references is not None:
            refs, ids = list(t.references), [f"ref{j + 1}" for j in range(len(t.references))]
        else:
            refs, ids = [t.original], ["orig"]
        i = len(tb.segments)
        tb.segments.append(Segment(id=f"{t.corruption}:{k}", references=refs, ref_ids=ids, group=t.corruption))
        original[i] = t.sentence
        corrupted[i] = t.corrupted
    tb.candidates = {"original": original, "corrupted": corrupted}
    tb.metadata = {"format": "mutt", "target_language": "en",
                   "kinds": {c: CORRUPTION_KINDS.get(c, "unknown") for c in counters}}
    return tb
