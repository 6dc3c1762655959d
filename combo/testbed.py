"""Test beds: segments with references, candidates of named systems and human judgments.

A :class:`Testbed` is what every reader in :mod:`combo.io` returns and what
scoring, combination and meta-evaluation consume.

* Segments ``i = 0..N-1`` each have a source, a list of references (their
  number may differ per segment) and optionally one weight per reference in
  [-1, 1] (for ΔBLEU, Galley et al. 2015).
* Candidates are kept per system as ``{segment index: text}``, so a system may
  cover only some segments (Flickr8k: one judged caption per "system").
* Judgments come in three kinds: absolute scores per (system, segment),
  possibly per rater and per aspect; relative rankings kept as pairwise
  preferences with judge ids (ties kept, flagged); system-level scores.
* Trees from any parser supplied for its texts (:class:`SuppliedTrees`,
  ``Testbed.trees``) belong to the test bed: scoring it puts them in use for
  that run only, so another test bed in the same process never sees them.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .errors import InputError, OptionError


def primary_language(code) -> Optional[str]:
    """The primary language subtag of a language code, lowercased: "en-US" -> "en"; None for no code."""
    if not isinstance(code, str) or not code.strip():
        return None
    return code.strip().lower().replace("_", "-").split("-")[0]


@dataclass(slots=True)
class Segment:
    """One source segment and its references (slots: a million segments hold no per-object dict)."""

    id: str
    source: str = ""
    references: List[str] = field(default_factory=list)
    weights: Optional[List[float]] = None  # one per reference, in [-1, 1]
    ref_ids: Optional[List[str]] = None  # names of the references, if any
    group: str = ""  # e.g. a language pair or a document


@dataclass(frozen=True)
class Score:
    """An absolute human score of one candidate (system, segment)."""

    system: str
    segment: int
    value: float
    rater: Optional[str] = None
    aspect: str = "score"


@dataclass(frozen=True)
class Preference:
    """One pairwise preference from a relative ranking: ``better`` was ranked above ``worse``.

    With ``tie=True`` the judge ranked the two equal (the order of the names
    is then meaningless). ``block`` identifies the ranking the pair came from.
    """

    segment: int
    better: str
    worse: str
    judge: Optional[str] = None
    tie: bool = False
    block: Optional[int] = None


#: The tree families trees can be supplied for (``--trees KIND TEXTS TREES``).
TREE_KINDS = ("constituents", "dependencies", "discourse")


class SuppliedTrees:
    """Trees a user supplies from any parser, by kind and text: the analyses one test bed is scored with.

    ``kind`` names the tree family a metric asks for (:data:`TREE_KINDS`); a tree is a
    :class:`combo.analysis.trees.Tree` or a bracketed string. A text given twice must get the same tree.
    """

    def __init__(self) -> None:
        self.tables: Dict[str, Dict[str, object]] = {}

    def __bool__(self) -> bool:
        return any(self.tables.values())

    def __repr__(self) -> str:
        return f"SuppliedTrees({ {k: len(v) for k, v in self.tables.items()} })"

    def add(self, kind: str, texts: Sequence[str], trees: Sequence[object], path: Optional[str] = None) -> int:
        """Attach ``trees[i]`` as the ``kind`` tree of ``texts[i]``; returns how many."""
        if kind not in TREE_KINDS:
            raise OptionError(f"supplied trees: kind {kind!r} must be one of {', '.join(TREE_KINDS)}")
        if len(texts) != len(trees):
            raise InputError(f"{len(texts)} texts but {len(trees)} trees", path,
                             fix="give one tree per line of the text file, in the same order")
        table = self.tables.setdefault(kind, {})
        for i, (text, tree) in enumerate(zip(texts, trees)):
            old = table.get(text)
            if old is not None and old != tree:
                raise InputError(f"tree {i + 1} differs from the tree supplied earlier for the same text", path,
                                 fix="supply one tree per distinct text")
            table[text] = tree
        return len(texts)

    def update(self, other: "SuppliedTrees") -> "SuppliedTrees":
        """Add every tree of ``other`` (the same rules as :meth:`add`); returns self."""
        for kind, table in other.tables.items():
            self.add(kind, list(table), list(table.values()))
        return self

    def get(self, kind: str, texts: Sequence[str]) -> list:
        """The ``kind`` tree of each text; InputError naming the first text without one."""
        table = self.tables.get(kind, {})
        missing = [t for t in texts if t not in table]
        if missing:
            raise InputError(f"no supplied {kind} tree for {len(missing)} of {len(texts)} texts "
                             f"(first: {missing[0][:60]!r})",
                             fix=f"supply {kind} trees for every hypothesis and reference (combo score --trees; "
                                 "API: testbed.trees.add)")
        return [table[t] for t in texts]

    def digest(self, kind: str, texts: Optional[Sequence[str]] = None) -> str:
        """SHA-256 (16 hex digits) of the ``kind`` trees (of ``texts``, default all): what a score read from them
        depends on, for signatures and the score cache."""
        table = self.tables.get(kind, {})
        h = hashlib.sha256()
        for text in sorted(table if texts is None else set(texts) & set(table)):
            tree = table[text]
            h.update(text.encode("utf-8", "surrogatepass") + b"\x1f")
            h.update((tree.to_bracketed() if hasattr(tree, "to_bracketed") else repr(tree)).encode("utf-8")
                     + b"\x1e")
        return h.hexdigest()[:16]


@dataclass
class Testbed:
    """Segments, system candidates and human judgments of one evaluation setting."""

    __test__ = False  # not a pytest test class, despite its name

    name: str = "testbed"
    segments: List[Segment] = field(default_factory=list)
    candidates: Dict[str, Dict[int, str]] = field(default_factory=dict)
    scores: List[Score] = field(default_factory=list)
    preferences: List[Preference] = field(default_factory=list)
    system_scores: Dict[str, Dict[str, float]] = field(default_factory=dict)  # aspect -> system -> value
    metadata: Dict[str, object] = field(default_factory=dict)
    trees: SuppliedTrees = field(default_factory=SuppliedTrees, repr=False, compare=False)

    # -- shape ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.segments)

    @property
    def systems(self) -> List[str]:
        """System names in insertion order."""
        return list(self.candidates)

    @property
    def target_language(self) -> Optional[str]:
        """ISO 639-1 code of the candidates' and references' language (``metadata["target_language"]``), if known.

        Written any common way ("en", "EN", "en-US", "en_GB"), it reads as the primary code ("en").
        """
        return primary_language(self.metadata.get("target_language"))

    def segment_index(self) -> Dict[str, int]:
        """Map segment id to its position."""
        return {seg.id: i for i, seg in enumerate(self.segments)}

    def references(self) -> List[List[str]]:
        """``refs[i]`` is the list of references of segment ``i``."""
        return [seg.references for seg in self.segments]

    def reference_weights(self) -> Optional[List[List[float]]]:
        """Per-segment reference weights, or None when no segment has any."""
        if not any(seg.weights is not None for seg in self.segments):
            return None
        return [list(seg.weights) if seg.weights is not None else [1.0] * len(seg.references)
                for seg in self.segments]

    def rows(self, systems: Optional[Sequence[str]] = None) -> Iterator[Tuple[str, int, str]]:
        """Every candidate as ``(system, segment index, text)``, system by system."""
        for name in (self.systems if systems is None else systems):
            for i, text in sorted(self.candidates[name].items()):
                yield name, i, text

    # -- building ------------------------------------------------------------
    @property
    def aspects(self) -> List[str]:
        """The aspects of the absolute human scores, sorted."""
        return sorted({s.aspect for s in self.scores})

    def main_aspect(self) -> Optional[str]:
        """The aspect meta-evaluation and training use by default: the reader's standard one
        (``metadata["default_aspect"]``, e.g. MQM for WMT23), else the first of mean, expert, adequacy,
        score, relatedness present, else the first aspect; ``None`` without absolute scores."""
        aspects = self.aspects
        given = self.metadata.get("default_aspect")
        if isinstance(given, str) and given in aspects:
            return given
        for preferred in ("mean", "expert", "adequacy", "score", "relatedness"):
            if preferred in aspects:
                return preferred
        return aspects[0] if aspects else None

    def check_aspect(self, aspect: Optional[str]) -> Optional[str]:
        """``aspect`` if the test bed has absolute scores for it (``None``: the main aspect); else an OptionError."""
        if aspect is None:
            return self.main_aspect()
        if aspect not in self.aspects:
            have = ", ".join(self.aspects) or "none: relative rankings only"
            raise OptionError(f"--aspect {aspect!r}: test bed {self.name!r} has no human scores of that aspect "
                              f"(it has: {have})")
        return aspect

    # -- judgments as (systems, segments) matrices ------------------------------------------------
    def score_matrix(self, systems: Sequence[str], aspect: Optional[str] = None) -> np.ndarray:
        """Mean absolute human score of each (system, segment) for ``aspect`` (default: :meth:`main_aspect`).

        Shape (len(systems), segments), the mean over raters; NaN where
        unjudged. Scores of systems not in ``systems`` are ignored. The one
        definition behind training targets and meta-evaluation.
        """
        aspect = self.main_aspect() if aspect is None else aspect
        index = {s: k for k, s in enumerate(systems)}
        total = np.zeros((len(systems), len(self.segments)))
        count = np.zeros_like(total)
        for s in self.scores:
            if s.aspect == aspect and s.system in index:
                total[index[s.system], s.segment] += s.value
                count[index[s.system], s.segment] += 1
        with np.errstate(invalid="ignore"):
            return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)

    def win_share_matrix(self, systems: Sequence[str]) -> np.ndarray:
        """Share of wins of each (system, segment) over its non-tie relative-ranking comparisons.

        Wins over comparisons with the other systems of ``systems`` (each
        judge's preference counted); NaN where never compared. How a test bed
        with rankings only gets a per-candidate human score (WMT12; aspect
        ``rr-wins`` of meta-evaluation, regression target of training).
        """
        index = {s: k for k, s in enumerate(systems)}
        wins = np.zeros((len(systems), len(self.segments)))
        games = np.zeros_like(wins)
        for p in self.preferences:
            if p.tie or p.better not in index or p.worse not in index:
                continue
            wins[index[p.better], p.segment] += 1
            games[index[p.better], p.segment] += 1
            games[index[p.worse], p.segment] += 1
        with np.errstate(invalid="ignore"):
            return np.where(games > 0, wins / np.where(games > 0, games, 1), np.nan)

    def add_system(self, name: str, outputs: Dict[int, str] | Sequence[str],
                   path: Optional[str] = None) -> None:
        """Add a system's candidates (a list aligned with the segments, or a dict)."""
        if name in self.candidates:
            raise InputError(f"duplicate system name {name!r}", path,
                             fix="give each system a distinct name")
        if isinstance(outputs, dict):
            self.candidates[name] = dict(outputs)
        else:
            if len(outputs) != len(self.segments):
                raise InputError(
                    f"system {name!r} has {len(outputs)} lines but the test bed has "
                    f"{len(self.segments)} segments", path,
                    fix="give one output line per source segment")
            self.candidates[name] = {i: t for i, t in enumerate(outputs)}

    # -- validation ----------------------------------------------------------
    def validate(self, path: Optional[str] = None) -> "Testbed":
        """Check invariants; raise :class:`InputError` naming the problem. Returns self."""
        n = len(self.segments)
        seen = set()
        for i, seg in enumerate(self.segments):
            if seg.id in seen:
                raise InputError(f"duplicate segment id {seg.id!r}", path, fix="make segment ids unique")
            seen.add(seg.id)
            if seg.weights is not None:
                if len(seg.weights) != len(seg.references):
                    raise InputError(f"segment {seg.id!r} has {len(seg.references)} references "
                                     f"but {len(seg.weights)} weights", path)
                for w in seg.weights:
                    if not (isinstance(w, (int, float)) and math.isfinite(w) and -1.0 <= w <= 1.0):
                        raise InputError(f"segment {seg.id!r} has reference weight {w!r} outside [-1, 1]",
                                         path, fix="use weights between -1 and 1")
        for name, outs in self.candidates.items():
            for i in outs:
                if not 0 <= i < n:
                    raise InputError(f"system {name!r} has a candidate for segment {i}, "
                                     f"outside 0..{n - 1}", path)
        for s in self.scores:
            self._check_judged(s.system, s.segment, path)
            if not math.isfinite(s.value):
                raise InputError(f"judgment of {s.system!r} on segment {self.segments[s.segment].id!r} is {s.value}",
                                 path, fix="remove NaN or infinite judgments")
        for p in self.preferences:
            self._check_judged(p.better, p.segment, path)
            self._check_judged(p.worse, p.segment, path)
            if p.better == p.worse:
                raise InputError(f"preference of {p.better!r} over itself on segment "
                                 f"{self.segments[p.segment].id!r}", path, fix="compare two different systems")
        for aspect, table in self.system_scores.items():
            for name, v in table.items():
                if name not in self.candidates:
                    raise InputError(f"system-level {aspect} score names unknown system {name!r}", path)
                if not math.isfinite(v):
                    raise InputError(f"system-level {aspect} score of {name!r} is {v}", path,
                                     fix="remove NaN or infinite judgments")
        return self

    def _check_judged(self, system: str, segment: int, path: Optional[str]) -> None:
        if system not in self.candidates:
            raise InputError(f"judgment names unknown system {system!r}", path,
                             fix="judge only systems that have outputs")
        if segment not in self.candidates[system]:
            where = (f"segment {self.segments[segment].id!r}" if isinstance(segment, int)
                     and 0 <= segment < len(self.segments) else f"segment index {segment}")
            raise InputError(f"judgment of {system!r} names {where}, for which it has no candidate", path,
                             fix="judge only candidates the system has")

    # -- convenience -----------------------------------------------------------
    def summary(self) -> Dict[str, object]:
        """Counts a user wants to see first."""
        nrefs = [len(s.references) for s in self.segments]
        return {
            "name": self.name,
            "segments": len(self.segments),
            "systems": len(self.candidates),
            "candidates": sum(len(c) for c in self.candidates.values()),
            "references_min": min(nrefs) if nrefs else 0,
            "references_max": max(nrefs) if nrefs else 0,
            "scores": len(self.scores),
            "preferences": len(self.preferences),
            "system_scores": {k: len(v) for k, v in self.system_scores.items()},
        }

    def digest(self) -> str:
        """SHA-256 (first 16 hex digits) of the texts: each segment's references, each system's candidates.

        Two test beds with the same digest hold the same texts; a tuned metric
        records the digests of its training test beds to flag in-sample figures.
        """
        h = hashlib.sha256()
        for seg in self.segments:
            h.update(b"\x1dsegment")
            for ref in seg.references:
                h.update(b"\x1e" + ref.encode("utf-8"))
        for system, outs in self.candidates.items():
            h.update(b"\x1dsystem\x1e" + system.encode("utf-8"))
            for i in sorted(outs):
                h.update(f"\x1e{i}\x1f".encode() + outs[i].encode("utf-8"))
        return h.hexdigest()[:16]

    def subset(self, segments: Iterable[int], name: Optional[str] = None) -> "Testbed":
        """A test bed restricted to the given segment indices (renumbered in order)."""
        keep = sorted(set(segments))
        new_index = {old: new for new, old in enumerate(keep)}
        # a subset of a sample of segments is no simple random sample of the population that sample records
        metadata = {k: v for k, v in self.metadata.items() if k != "segment_sample"}
        tb = Testbed(name=name or self.name, segments=[self.segments[i] for i in keep], metadata=metadata)
        for sysname, outs in self.candidates.items():
            tb.candidates[sysname] = {new_index[i]: t for i, t in outs.items() if i in new_index}
        tb.scores = [Score(s.system, new_index[s.segment], s.value, s.rater, s.aspect)
                     for s in self.scores if s.segment in new_index]
        tb.preferences = [Preference(new_index[p.segment], p.better, p.worse, p.judge, p.tie, p.block)
                          for p in self.preferences if p.segment in new_index]
        tb.system_scores = {k: dict(v) for k, v in self.system_scores.items()}
        tb.trees.update(self.trees)
        return tb

    def sample_segments(self, size: int, seed: int = 0) -> "Testbed":
        """A simple random sample of ``size`` segments, drawn without replacement with ``seed`` (the test bed
        itself when it has at most ``size``).

        For estimates from a sample of segments, drawn before anything is scored
        (KING on DSTC7, whose reference pairs number millions:
        :func:`combo.meta.likeness.king` with ``segment_population``).
        ``metadata["segment_sample"]`` records the population, the size and the seed.
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise OptionError(f"size={size!r} must be a positive integer (segments to sample)")
        population = len(self.segments)
        if size >= population:
            return self
        rng = np.random.default_rng([int(seed), 0x5345474D])  # "SEGM": a stream of its own
        keep = np.sort(rng.choice(population, size=int(size), replace=False)).tolist()
        tb = self.subset(keep)
        tb.metadata["segment_sample"] = {"population": population, "size": int(size), "seed": int(seed),
                                         "segments": keep}
        return tb
