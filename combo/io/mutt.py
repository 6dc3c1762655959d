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
when ``|s(sent) - s(corr)| / s(sent) <= 0.15`` for meaning-preserving ones
(:mod:`combo.metric_unit_tests` runs the tests). :func:`select_trials` keeps the
trials that have references, :func:`sample_references` caps them with a
seeded sample, and :func:`read_mutt_testbed` does all three for
``load_testbed`` (``combo search --criterion mutt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import InputError
from ..options import Option
from ..testbed import Segment, Testbed
from .registry import register_format
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
    # SICK+ (Boag et al. 2016): generated from sentences, see combo.analysis.corruptions
    "dup_pp": "fluency-disrupting",
    "rm_pp_head": "fluency-disrupting",
    "reorder_chunks": "fluency-disrupting",
}
TRIAL_SETS = ("flickr", "all")
#: The corpora a trial's ``orig:`` comes from (Boag et al. 2016); any other ``dataset:`` is refused.
DATASETS = ("FLICKR", "SEMEVAL")
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
    line: the 1-based line of the block's ``dataset:`` line in the file;
    path: the file (not compared: the same trial read from two copies is equal).
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
    path: str = field(default="", compare=False)


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
    if corruption not in CORRUPTION_KINDS:
        raise InputError(f"unknown corruption type {corruption!r}", p, 1,
                         fix=f"name the file and its first line after one of {', '.join(CORRUPTION_KINDS)}")
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
        if key == "dataset" and value not in DATASETS:
            # A misspelt dataset would quietly leave the trial without references (counted as a SEMEVAL trial
            # or a caption not in Flickr8k): refused here instead.
            raise InputError(f"unknown dataset {value!r} (known: {', '.join(DATASETS)})", p, lineno,
                             fix="write dataset: FLICKR (a Flickr8k caption) or dataset: SEMEVAL (a video description)")
        block[key] = value
        if key == "score":
            score = parse_float(value, lineno, p, "relatedness", 1.0, 5.0)
            refs = None
            if flickr_refs is not None and block["dataset"] == "FLICKR":
                refs = flickr_refs.get(_caption_key(block["orig"]))
            trials.append(MuttTrial(corruption, CORRUPTION_KINDS[corruption], block["dataset"],
                                    block["orig"], block["sent"], block["corr"], score, refs, start, str(p)))
            block = {}
    if block:
        raise InputError(f"the last trial stops after '{list(block)[-1]}:'", p, lineno,
                         fix="give each trial as dataset, orig, sent, corr, score lines")
    if not trials:
        raise InputError("no trials in the file", p, lineno,
                         fix="give at least one tab-indented dataset/orig/sent/corr/score block")
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


def select_trials(trials: Sequence[MuttTrial], which: str = "flickr") -> Tuple[List[MuttTrial], int]:
    """The trials to test and how many were left out.

    ``"flickr"``: the trials that have references (Flickr8k captions joined by
    :func:`read_mutt`); ``"all"``: every trial, each of which must have
    references (an :class:`InputError` names the first that has none).
    """
    if which not in TRIAL_SETS:
        from ..errors import OptionError
        raise OptionError(f"unknown trial set {which!r}; choose one of {list(TRIAL_SETS)}")
    if which == "flickr":
        kept = [t for t in trials if t.references]
        return kept, len(trials) - len(kept)
    for t in trials:
        if not t.references:
            raise InputError(f"{t.corruption} trial from {t.dataset} has no references", t.path or None, t.line,
                             fix="give the Flickr8k folder and test only the trials it covers "
                                 "(combo mutt --flickr8k DIR --trials flickr)")
    return list(trials), 0


def sample_references(trials: Sequence[MuttTrial], n: Optional[int], seed: int = 0) -> List[MuttTrial]:
    """Each trial with ``n`` of its references drawn without replacement (seeded); all of them when it has <= n."""
    if n is None:
        return list(trials)
    if n < 1:
        from ..errors import OptionError
        raise OptionError(f"references={n}: a unit test needs at least one reference")
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for t in trials:
        refs = t.references or ()
        if len(refs) > n:
            keep = sorted(rng.choice(len(refs), size=n, replace=False).tolist())
            refs = tuple(refs[k] for k in keep)
        out.append(replace(t, references=refs))
    return out


#: The options of :func:`read_mutt_testbed` (``--testbed-option KEY=VALUE``), typed.
OPTIONS = {
    "flickr8k": Option(None, "Flickr8k folder: the FLICKR trials get their image's captions as references", type="str"),
    "trials": Option("flickr", "flickr: the trials with references; all: every trial", choices=TRIAL_SETS),
    "references": Option(None, "references per trial, a seeded sample (default: all)", type="int"),
    "seed": Option(0, "seed of the reference sample"),
}


@register_format("mutt", looks="folder with MUTT <type>.txt corruption files",
                 what="MUTT (options flickr8k, trials, references, seed)", options=OPTIONS,
                 matches=lambda p: p.is_dir() and any((p / f"{kind}.txt").is_file() for kind in CORRUPTION_KINDS))
def read_mutt_testbed(root: PathLike, flickr8k: Optional[PathLike] = None, trials: str = "flickr",
                      references: Optional[int] = None, seed: int = 0) -> Testbed:
    """The released corruption sets as one Testbed (:func:`mutt_testbed`), trials chosen by :func:`select_trials`.

    ``references`` caps each trial's references with a seeded sample (Boag et al.
    2016 report 1 to 5); the number of trials left out is in ``metadata["skipped"]``.
    """
    sets = read_mutt(root, flickr8k=flickr8k)
    chosen, skipped = select_trials([t for v in sets.values() for t in v], str(trials))
    if not chosen:
        raise InputError("no trial has references", root,
                         fix="give the Flickr8k folder (flickr8k=...) so the FLICKR trials get their captions")
    tb = mutt_testbed(sample_references(chosen, None if references is None else int(references), int(seed)),
                      name=f"mutt:{Path(root).name}")
    tb.metadata["skipped"] = skipped
    return tb
